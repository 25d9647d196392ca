%% The shared grammar of the header value parsers (RFC 9110 5.6): lists,
%% tokens, numbers, parameters, quoted strings, qvalues, media types, language
%% tags, auth-params, whitespace. Used by mustang_http_hd and
%% mustang_http_hd_accept; it calls neither (no import cycle). No options.
%%
%% Contract: pure, never crashes on any binary. The element functions take the
%% binary at the start of an element and return {ok, Value, Rest} (or
%% {Value, Rest} for the scans that may match nothing, such as token/1) or the
%% atom error; they never build the {error, {value_error, 400, Reason}} shape,
%% which the parser of each field adds with the sentence naming that field.
%%
%% Common rules (RFC 9110 5.6), applied here:
%% - Lists: elements are separated by commas with optional whitespace (SP, HTAB)
%%   around them; empty elements ("a, , b") are ignored (list/2); 1#element lists
%%   need at least one element (nonempty_list/2).
%% - token_lc/1, token_ci/1, media_type/1, language_tag/1 and parameter names
%%   return lowercase; parameter values are returned as sent, minus quoting,
%%   except the charset parameter which is lowercased.
%% - Quoted strings are returned unquoted with their backslash escapes resolved.
%% - Numbers larger than 2^64 - 1 are rejected.
-module(mustang_http_hd_grammar).

%% Lists (RFC 9110 5.6.1).
-export([list/2]).
-export([nonempty_list/2]).
%% Tokens and numbers (RFC 9110 5.6.2).
-export([token/1]).
-export([token_lc/1]).
-export([token_ci/1]).
-export([token_cs/1]).
-export([number/1]).
%% Parameters, media types, qvalues, language tags, auth-params.
-export([media_type/1]).
-export([params/2]).
-export([param_sep/1]).
-export([param/1]).
-export([param_value/1]).
-export([qvalue/1]).
-export([language_tag/1]).
-export([auth_param/1]).
%% Whitespace and case.
-export([at_end/2]).
-export([ows/1]).
-export([skip_sp/1]).
-export([trim/1]).
-export([lower/1]).

-type qvalue() :: 0..1000.
-type params() :: [{binary(), binary()}].
-type media_type() :: {binary(), binary(), params()}.
-export_type([qvalue/0]).
-export_type([params/0]).
-export_type([media_type/0]).

%% Parses one element at the start of a binary and returns the rest.
-type elem_fun() :: fun((binary()) -> {ok, term(), binary()} | error).
-export_type([elem_fun/0]).

-define(MAX_INT, 16#ffffffffffffffff).

-include("mustang_http_hd.hrl").

%% Lists (RFC 9110 5.6.1).
%% A recipient accepts empty elements and ignores them.

-spec list(binary(), elem_fun()) -> {ok, list()} | error.
list(Bin, Fun) ->
	list_elem(Bin, Fun, []).

-spec nonempty_list(binary(), elem_fun()) -> {ok, nonempty_list()} | error.
nonempty_list(Bin, Fun) ->
	case list(Bin, Fun) of
		{ok, [_ | _]} = Result -> Result;
		_ -> error
	end.

-spec list_elem(binary(), elem_fun(), list()) -> {ok, list()} | error.
list_elem(<<C, Rest/binary>>, Fun, Acc) when ?IS_WS(C); C =:= $, ->
	list_elem(Rest, Fun, Acc);
list_elem(<<>>, _, Acc) ->
	{ok, lists:reverse(Acc)};
list_elem(Bin, Fun, Acc) ->
	case Fun(Bin) of
		{ok, Elem, Rest} -> list_sep(ows(Rest), Fun, [Elem | Acc]);
		error -> error
	end.

-spec list_sep(binary(), elem_fun(), list()) -> {ok, list()} | error.
list_sep(<<>>, _, Acc) ->
	{ok, lists:reverse(Acc)};
list_sep(<<$,, Rest/binary>>, Fun, Acc) ->
	list_elem(Rest, Fun, Acc);
list_sep(_, _, _) ->
	error.

%% Tokens (RFC 9110 5.6.2).

%% Returns the longest token at the start of the binary, possibly empty.
-spec token(binary()) -> {binary(), binary()}.
token(Bin) ->
	token(Bin, Bin, 0).

-spec token(binary(), binary(), non_neg_integer()) -> {binary(), binary()}.
token(<<C, Rest/binary>>, Bin, N) when ?IS_TCHAR(C) ->
	token(Rest, Bin, N + 1);
token(Rest, Bin, N) ->
	{binary:part(Bin, 0, N), Rest}.

%% Same as token/1, lowercased. The scan notes uppercase letters so that tokens
%% already in lowercase, the usual case, are returned without copying.
-spec token_lc(binary()) -> {binary(), binary()}.
token_lc(Bin) ->
	token_lc(Bin, Bin, 0).

-spec token_lc(binary(), binary(), non_neg_integer()) -> {binary(), binary()}.
token_lc(<<C, Rest/binary>>, Bin, N) when C >= $a, C =< $z; C =:= $-; ?IS_DIGIT(C) ->
	token_lc(Rest, Bin, N + 1);
token_lc(<<C, Rest/binary>>, Bin, N) when C >= $A, C =< $Z ->
	token_upper(Rest, Bin, N + 1);
token_lc(<<C, Rest/binary>>, Bin, N) when ?IS_TCHAR(C) ->
	token_lc(Rest, Bin, N + 1);
token_lc(Rest, Bin, N) ->
	{binary:part(Bin, 0, N), Rest}.

-spec token_upper(binary(), binary(), non_neg_integer()) -> {binary(), binary()}.
token_upper(<<C, Rest/binary>>, Bin, N) when ?IS_TCHAR(C) ->
	token_upper(Rest, Bin, N + 1);
token_upper(Rest, Bin, N) ->
	{<< <<(lower_char(C))>> || <<C>> <= binary:part(Bin, 0, N) >>, Rest}.

%% A non-empty case-insensitive token, lowercased.
-spec token_ci(binary()) -> {ok, binary(), binary()} | error.
token_ci(Bin) ->
	case token_lc(Bin) of
		{<<>>, _} -> error;
		{Token, Rest} -> {ok, Token, Rest}
	end.

%% A non-empty case-sensitive token.
-spec token_cs(binary()) -> {ok, binary(), binary()} | error.
token_cs(Bin) ->
	case token(Bin) of
		{<<>>, _} -> error;
		{Token, Rest} -> {ok, Token, Rest}
	end.

%% 1*DIGIT, at most ?MAX_INT.
-spec number(binary()) -> {ok, non_neg_integer(), binary()} | error.
number(<<C, Rest/binary>>) when ?IS_DIGIT(C) ->
	number(Rest, C - $0);
number(_) ->
	error.

-spec number(binary(), non_neg_integer()) -> {ok, non_neg_integer(), binary()} | error.
number(<<C, Rest/binary>>, Acc) when ?IS_DIGIT(C) ->
	case Acc * 10 + C - $0 of
		N when N > ?MAX_INT -> error;
		N -> number(Rest, N)
	end;
number(Rest, Acc) ->
	{ok, Acc, Rest}.

%% Parameters (RFC 9110 5.6.6) and media types (RFC 9110 8.3.1).

%% type "/" subtype, both lowercased.
-spec media_type(binary()) -> {ok, {binary(), binary()}, binary()} | error.
media_type(Bin) ->
	case token_lc(Bin) of
		{<<>>, _} ->
			error;
		{Type, <<$/, Rest0/binary>>} ->
			case token_lc(Rest0) of
				{<<>>, _} -> error;
				{SubType, Rest} -> {ok, {Type, SubType}, Rest}
			end;
		_ ->
			error
	end.

%% parameters = *( OWS ";" OWS [ parameter ] )
-spec params(binary(), params()) -> {ok, params(), binary()} | error.
params(Bin, Acc) ->
	case param_sep(Bin) of
		{ok, Rest0} ->
			case param(Rest0) of
				empty -> params(Rest0, Acc);
				{ok, Name, Value, Rest} -> params(Rest, [{Name, Value} | Acc]);
				error -> error
			end;
		{done, Rest} ->
			{ok, lists:reverse(Acc), Rest}
	end.

%% Consumes OWS ";" OWS when it is there.
-spec param_sep(binary()) -> {ok, binary()} | {done, binary()}.
param_sep(Bin) ->
	case ows(Bin) of
		<<$;, Rest/binary>> -> {ok, ows(Rest)};
		Rest -> {done, Rest}
	end.

%% parameter = parameter-name "=" parameter-value; the name is lowercased, and so
%% is the value of charset (RFC 9110 8.3.2).
-spec param(binary()) -> {ok, binary(), binary(), binary()} | empty | error.
param(Bin) ->
	case token_lc(Bin) of
		{<<>>, _} ->
			empty;
		{Name, <<$=, Rest0/binary>>} ->
			case param_value(Rest0) of
				{ok, Value, Rest} when Name =:= <<"charset">> -> {ok, Name, lower(Value), Rest};
				{ok, Value, Rest} -> {ok, Name, Value, Rest};
				error -> error
			end;
		_ ->
			error
	end.

%% parameter-value = ( token / quoted-string )
-spec param_value(binary()) -> {ok, binary(), binary()} | error.
param_value(<<$", Rest/binary>>) ->
	quoted_string(Rest, <<>>);
param_value(Bin) ->
	case token(Bin) of
		{<<>>, _} -> error;
		{Value, Rest} -> {ok, Value, Rest}
	end.

%% quoted-string = DQUOTE *( qdtext / quoted-pair ) DQUOTE (RFC 9110 5.6.4)
-spec quoted_string(binary(), binary()) -> {ok, binary(), binary()} | error.
quoted_string(<<$", Rest/binary>>, Acc) ->
	{ok, Acc, Rest};
quoted_string(<<$\\, C, Rest/binary>>, Acc) when C =:= $\t; C >= 16#20, C =/= 16#7f ->
	quoted_string(Rest, <<Acc/binary, C>>);
quoted_string(<<C, Rest/binary>>, Acc) when C =:= $\t; C >= 16#20, C =/= 16#7f, C =/= $\\ ->
	quoted_string(Rest, <<Acc/binary, C>>);
quoted_string(_, _) ->
	error.

%% qvalue = ( "0" [ "." 0*3DIGIT ] ) / ( "1" [ "." 0*3("0") ] ), in thousandths.
-spec qvalue(binary()) -> {ok, qvalue(), binary()} | error.
qvalue(<<$0, $., Rest/binary>>) -> qfraction(Rest, 100, 0);
qvalue(<<$0, Rest/binary>>) -> {ok, 0, Rest};
qvalue(<<$1, $., Rest/binary>>) -> qone(Rest, 3);
qvalue(<<$1, Rest/binary>>) -> {ok, 1000, Rest};
qvalue(_) -> error.

-spec qfraction(binary(), 0..100, qvalue()) -> {ok, qvalue(), binary()}.
qfraction(<<C, Rest/binary>>, Weight, Acc) when ?IS_DIGIT(C), Weight > 0 ->
	qfraction(Rest, Weight div 10, Acc + (C - $0) * Weight);
qfraction(Rest, _, Acc) ->
	{ok, Acc, Rest}.

-spec qone(binary(), 0..3) -> {ok, 1000, binary()}.
qone(<<$0, Rest/binary>>, N) when N > 0 -> qone(Rest, N - 1);
qone(Rest, _) -> {ok, 1000, Rest}.

%% language-tag, checked with the language-range grammar of RFC 4647 2.1 without
%% "*": 1*8ALPHA *( "-" 1*8alphanum ), lowercased (Content-Language,
%% Accept-Language).
-spec language_tag(binary()) -> {ok, binary(), binary()} | error.
language_tag(Bin) ->
	language_primary(Bin, Bin, 0).

-spec language_primary(binary(), binary(), non_neg_integer()) -> {ok, binary(), binary()} | error.
language_primary(<<C, Rest/binary>>, Bin, N) when ?IS_ALPHA(C), N < 8 ->
	language_primary(Rest, Bin, N + 1);
language_primary(<<$-, Rest/binary>>, Bin, N) when N > 0 ->
	language_sub(Rest, Bin, N + 1, 0);
language_primary(Rest, Bin, N) when N > 0 ->
	{ok, lower(binary:part(Bin, 0, N)), Rest};
language_primary(_, _, _) ->
	error.

-spec language_sub(binary(), binary(), non_neg_integer(), non_neg_integer())
	-> {ok, binary(), binary()} | error.
language_sub(<<C, Rest/binary>>, Bin, N, M) when ?IS_ALNUM(C), M < 8 ->
	language_sub(Rest, Bin, N + 1, M + 1);
language_sub(<<$-, Rest/binary>>, Bin, N, M) when M > 0 ->
	language_sub(Rest, Bin, N + 1, 0);
language_sub(Rest, Bin, N, M) when M > 0 ->
	{ok, lower(binary:part(Bin, 0, N)), Rest};
language_sub(_, _, _, _) ->
	error.

%% auth-param = token BWS "=" BWS ( token / quoted-string )
-spec auth_param(binary()) -> {ok, {binary(), binary()}, binary()} | error.
auth_param(Bin) ->
	case token_lc(Bin) of
		{<<>>, _} ->
			error;
		{Name, Rest0} ->
			case ows(Rest0) of
				<<$=, Rest1/binary>> ->
					case param_value(ows(Rest1)) of
						{ok, Value, Rest} -> {ok, {Name, Value}, Rest};
						error -> error
					end;
				_ ->
					error
			end
	end.

%% Whitespace and case.

-spec at_end(Value, binary()) -> {ok, Value} | error.
at_end(Value, Rest) ->
	case ows(Rest) of
		<<>> -> {ok, Value};
		_ -> error
	end.

-spec ows(binary()) -> binary().
ows(<<C, Rest/binary>>) when ?IS_WS(C) ->
	ows(Rest);
ows(Bin) ->
	Bin.

-spec skip_sp(binary()) -> binary().
skip_sp(<<$\s, Rest/binary>>) ->
	skip_sp(Rest);
skip_sp(Bin) ->
	Bin.

-spec trim(binary()) -> binary().
trim(Bin) ->
	trim_end(ows(Bin)).

-spec trim_end(binary()) -> binary().
trim_end(<<>>) ->
	<<>>;
trim_end(Bin) ->
	case binary:last(Bin) of
		C when ?IS_WS(C) -> trim_end(binary:part(Bin, 0, byte_size(Bin) - 1));
		_ -> Bin
	end.

%% Lowercases ASCII letters, without copying when there are none.
-spec lower(binary()) -> binary().
lower(Bin) ->
	case has_upper(Bin) of
		true -> << <<(lower_char(C))>> || <<C>> <= Bin >>;
		false -> Bin
	end.

-spec has_upper(binary()) -> boolean().
has_upper(<<C, _/binary>>) when C >= $A, C =< $Z -> true;
has_upper(<<_, Rest/binary>>) -> has_upper(Rest);
has_upper(<<>>) -> false.

-spec lower_char(byte()) -> byte().
lower_char(C) when C >= $A, C =< $Z -> C + 32;
lower_char(C) -> C.
