%% Compiled binary:match/split patterns, compiled once per VM and kept in
%% persistent_term. binary:match/2 with a plain binary pattern compiles it on
%% every call, which costs about 8 times the search itself on the short
%% strings of a request head.
-module(mustang_pattern).

-export([get/1]).

-type name() :: crlf | crlfcrlf | sp | colon | comma | qmark | unsafe_value.
-export_type([name/0]).

-spec get(name()) -> binary:cp().
get(Name) ->
	case persistent_term:get({?MODULE, Name}, undefined) of
		undefined ->
			Pattern = binary:compile_pattern(source(Name)),
			persistent_term:put({?MODULE, Name}, Pattern),
			Pattern;
		Pattern ->
			Pattern
	end.

source(crlf) -> <<"\r\n">>;
source(crlfcrlf) -> <<"\r\n\r\n">>;
source(sp) -> <<" ">>;
source(colon) -> <<":">>;
source(comma) -> <<",">>;
source(qmark) -> <<"?">>;
source(unsafe_value) -> [<<"\r">>, <<"\n">>, <<0>>].
