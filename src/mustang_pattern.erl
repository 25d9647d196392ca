%% Searching request bytes for delimiters, cheaply.
%%
%% binary:match/2 with a plain binary pattern compiles it on every call, which
%% costs about 8 times the search itself on the short strings of a request
%% head, so patterns are compiled once per VM and kept in persistent_term.
%%
%% On OTP 25, binary:match/2,3 with a single-pattern (Boyer-Moore) search
%% over a subject only a few bytes longer than the pattern charges about 4000
%% reductions, a whole time slice, for almost no work: the process is then
%% scheduled out after every such call. Request heads are full of short
%% strings ("/", "a", "/sleep"), so find/2,4 scan short subjects in Erlang and
%% leave long ones to the BIF.
-module(mustang_pattern).


-export([compiled/1]).
-export([find/2]).
-export([find/4]).

-type name() :: crlf | crlfcrlf | sp | colon | comma | qmark | percent | lf | unsafe_value.
-export_type([name/0]).

%% Below this many bytes the Erlang scan is as fast as the BIF.
-define(SHORT, 32).

-spec compiled(name()) -> binary:cp().
compiled(Name) ->
	case persistent_term:get({?MODULE, Name}, undefined) of
		undefined ->
			Pattern = binary:compile_pattern(source(Name)),
			persistent_term:put({?MODULE, Name}, Pattern),
			Pattern;
		Pattern ->
			Pattern
	end.

%% Same result as binary:match(Subject, source(Name)).
-spec find(binary(), name()) -> nomatch | {non_neg_integer(), pos_integer()}.
find(Subject, Name) when byte_size(Subject) < ?SHORT ->
	scan(Subject, source(Name), 0);
find(Subject, Name) ->
	binary:match(Subject, compiled(Name)).

%% Same result as binary:match(Subject, source(Name), [{scope, {From, Len}}]).
-spec find(binary(), name(), non_neg_integer(), non_neg_integer())
	-> nomatch | {non_neg_integer(), pos_integer()}.
find(Subject, Name, From, Len) when Len < ?SHORT ->
	<<_:From/binary, Part:Len/binary, _/bits>> = Subject,
	case scan(Part, source(Name), 0) of
		{Pos, PLen} -> {From + Pos, PLen};
		nomatch -> nomatch
	end;
find(Subject, Name, From, Len) ->
	binary:match(Subject, compiled(Name), [{scope, {From, Len}}]).

scan(Subject, <<C>>, Pos) ->
	scan1(Subject, C, Pos);
scan(Subject, Pattern, Pos) when is_binary(Pattern) ->
	scan_n(Subject, Pattern, byte_size(Pattern), Pos);
scan(Subject, Patterns, _) ->
	binary:match(Subject, Patterns).

scan1(<<C, _/bits>>, C, Pos) -> {Pos, 1};
scan1(<<_, Rest/bits>>, C, Pos) -> scan1(Rest, C, Pos + 1);
scan1(<<>>, _, _) -> nomatch.

scan_n(Subject, Pattern, Len, Pos) ->
	case Subject of
		<<Pattern:Len/binary, _/bits>> -> {Pos, Len};
		<<_, Rest/bits>> when byte_size(Rest) >= Len -> scan_n(Rest, Pattern, Len, Pos + 1);
		_ -> nomatch
	end.

source(crlf) -> <<"\r\n">>;
source(crlfcrlf) -> <<"\r\n\r\n">>;
source(sp) -> <<" ">>;
source(colon) -> <<":">>;
source(comma) -> <<",">>;
source(qmark) -> <<"?">>;
source(percent) -> <<"%">>;
source(lf) -> <<"\n">>;
source(unsafe_value) -> [<<"\r">>, <<"\n">>, <<0>>].
