%% HTTP header value parsers (RFC 9110, RFC 9112, RFC 6265, RFC 6455, RFC 7239 practice).
%%
%% Contract: strict when parsing. Every parser takes the raw field value and
%% returns {ok, Value} or {error, {value_error, 400, Reason}} (mustang_error,
%% doc/internals/errors.md), Reason a sentence naming the field and the RFC
%% section of its grammar; parse/2 of a header it has no parser for gives the
%% same shape. Parsers never crash on any binary: off-spec input is an error,
%% not an exception.
%%
%% Common rules (RFC 9110 5.6):
%% - Lists: elements are separated by commas with optional whitespace (SP, HTAB)
%%   around them; empty elements ("a, , b") are ignored. Lists written 1#element
%%   in the RFCs must have at least one element; #element lists may be empty.
%% - Whitespace around the whole value is ignored.
%% - Tokens that the RFCs define as case-insensitive (media types, parameter names,
%%   codings, charsets, language ranges, connection options, range units, auth
%%   schemes) are returned lowercased. Parameter values are returned as sent, minus
%%   quoting, except the charset parameter which is lowercased.
%% - Quoted strings are returned unquoted with their backslash escapes resolved.
%% - Numbers larger than 2^64 - 1 are rejected.
-module(mustang_http_hd).

%% Dispatch.
-export([parse/2]).
-export([has_token/3]).

%% Parsing, in alphabetical order of field name.
-export([parse_accept/1]).
-export([parse_accept_charset/1]).
-export([parse_accept_encoding/1]).
-export([parse_accept_language/1]).
-export([parse_authorization/1]).
-export([parse_connection/1]).
-export([parse_content_encoding/1]).
-export([parse_content_language/1]).
-export([parse_content_length/1]).
-export([parse_content_type/1]).
-export([parse_cookie/1]).
-export([parse_date/1]).
-export([parse_expect/1]).
-export([parse_host/1]).
-export([parse_if_match/1]).
-export([parse_if_none_match/1]).
-export([parse_if_range/1]).
-export([parse_max_forwards/1]).
-export([parse_range/1]).
-export([parse_sec_websocket_extensions/1]).
-export([parse_sec_websocket_protocol/1]).
-export([parse_sec_websocket_version/1]).
-export([parse_te/1]).
-export([parse_trailer/1]).
-export([parse_transfer_encoding/1]).
-export([parse_upgrade/1]).
-export([parse_vary/1]).
-export([parse_x_forwarded_for/1]).

-type qvalue() :: 0..1000.
-type params() :: [{binary(), binary()}].
-type media_type() :: {binary(), binary(), params()}.
-type accept_ext() :: [{binary(), binary()} | binary()].
-type etag() :: {strong | weak, binary()}.
-type byte_range() :: {non_neg_integer(), non_neg_integer() | infinity} | neg_integer() | 0.
-type range() :: {bytes, [byte_range(), ...]} | {binary(), binary()}.
-type credentials() :: {basic, binary(), binary()} | {bearer, binary()}
	| {digest, [{binary(), binary()}, ...]}.
-export_type([qvalue/0]).
-export_type([media_type/0]).
-export_type([etag/0]).
-export_type([range/0]).
-export_type([credentials/0]).

%% Parses one element at the start of a binary and returns the rest.
-type elem_fun() :: fun((binary()) -> {ok, term(), binary()} | error).

-define(MAX_INT, 16#ffffffffffffffff).

-define(IS_WS(C), (C =:= $\s orelse C =:= $\t)).
-define(IS_DIGIT(C), (C >= $0 andalso C =< $9)).
-define(IS_ALPHA(C), ((C >= $a andalso C =< $z) orelse (C >= $A andalso C =< $Z))).
-define(IS_ALNUM(C), (?IS_ALPHA(C) orelse ?IS_DIGIT(C))).
-define(IS_HEX(C), (?IS_DIGIT(C) orelse (C >= $a andalso C =< $f)
	orelse (C >= $A andalso C =< $F))).
-define(IS_TCHAR(C), (?IS_ALNUM(C) orelse C =:= $! orelse C =:= $# orelse C =:= $$
	orelse C =:= $% orelse C =:= $& orelse C =:= $' orelse C =:= $* orelse C =:= $+
	orelse C =:= $- orelse C =:= $. orelse C =:= $^ orelse C =:= $_ orelse C =:= $`
	orelse C =:= $| orelse C =:= $~)).
%% VCHAR and obs-text.
-define(IS_VISIBLE(C), (C >= 16#21 andalso C =/= 16#7f)).
%% unreserved and sub-delims of RFC 3986.
-define(IS_URI_CHAR(C), (?IS_ALNUM(C) orelse C =:= $- orelse C =:= $. orelse C =:= $_
	orelse C =:= $~ orelse C =:= $! orelse C =:= $$ orelse C =:= $& orelse C =:= $'
	orelse C =:= $( orelse C =:= $) orelse C =:= $* orelse C =:= $+ orelse C =:= $,
	orelse C =:= $; orelse C =:= $=)).

%% Dispatch.

-spec parse(binary(), binary()) -> {ok, term()} | {error, mustang_error:value_error()}.
parse(<<"accept">>, Value) -> parse_accept(Value);
parse(<<"accept-charset">>, Value) -> parse_accept_charset(Value);
parse(<<"accept-encoding">>, Value) -> parse_accept_encoding(Value);
parse(<<"accept-language">>, Value) -> parse_accept_language(Value);
parse(<<"authorization">>, Value) -> parse_authorization(Value);
parse(<<"connection">>, Value) -> parse_connection(Value);
parse(<<"content-encoding">>, Value) -> parse_content_encoding(Value);
parse(<<"content-language">>, Value) -> parse_content_language(Value);
parse(<<"content-length">>, Value) -> parse_content_length(Value);
parse(<<"content-type">>, Value) -> parse_content_type(Value);
parse(<<"cookie">>, Value) -> parse_cookie(Value);
parse(<<"date">>, Value) -> parse_date(Value);
parse(<<"expect">>, Value) -> parse_expect(Value);
parse(<<"expires">>, Value) -> parse_date(Value);
parse(<<"host">>, Value) -> parse_host(Value);
parse(<<"if-match">>, Value) -> parse_if_match(Value);
parse(<<"if-modified-since">>, Value) -> parse_date(Value);
parse(<<"if-none-match">>, Value) -> parse_if_none_match(Value);
parse(<<"if-range">>, Value) -> parse_if_range(Value);
parse(<<"if-unmodified-since">>, Value) -> parse_date(Value);
parse(<<"last-modified">>, Value) -> parse_date(Value);
parse(<<"max-forwards">>, Value) -> parse_max_forwards(Value);
parse(<<"proxy-authorization">>, Value) -> parse_authorization(Value);
parse(<<"range">>, Value) -> parse_range(Value);
parse(<<"sec-websocket-extensions">>, Value) -> parse_sec_websocket_extensions(Value);
parse(<<"sec-websocket-protocol">>, Value) -> parse_sec_websocket_protocol(Value);
parse(<<"sec-websocket-version">>, Value) -> parse_sec_websocket_version(Value);
parse(<<"te">>, Value) -> parse_te(Value);
parse(<<"trailer">>, Value) -> parse_trailer(Value);
parse(<<"transfer-encoding">>, Value) -> parse_transfer_encoding(Value);
parse(<<"upgrade">>, Value) -> parse_upgrade(Value);
parse(<<"vary">>, Value) -> parse_vary(Value);
parse(<<"x-forwarded-for">>, Value) -> parse_x_forwarded_for(Value);
parse(_, _) -> bad(unknown_header).

%% Whether the list-valued header Name of a request (connection, upgrade...)
%% is there, valid, and names Token (lowercase).
-spec has_token(binary(), binary(), #{binary() => binary()}) -> boolean().
has_token(Name, Token, Headers) ->
	case Headers of
		#{Name := Value} ->
			case parse(Name, Value) of
				{ok, Tokens} -> lists:member(Token, Tokens);
				{error, _} -> false
			end;
		_ ->
			false
	end.

%% Accept (RFC 9110 12.5.1), with the accept-ext parameters after the weight that
%% RFC 7231 allowed and Cowboy returns.

-spec parse_accept(binary())
	-> {ok, [{media_type(), qvalue(), accept_ext()}]} | {error, mustang_error:value_error()}.
parse_accept(Bin) ->
	result(list(Bin, fun media_range/1), invalid_accept).

-spec media_range(binary()) -> {ok, {media_type(), qvalue(), accept_ext()}, binary()} | error.
media_range(Bin) ->
	case media_type(Bin) of
		{ok, {<<"*">>, SubType}, _} when SubType =/= <<"*">> -> error;
		{ok, {Type, SubType}, Rest} -> accept_params(Rest, Type, SubType, []);
		error -> error
	end.

-spec accept_params(binary(), binary(), binary(), params())
	-> {ok, {media_type(), qvalue(), accept_ext()}, binary()} | error.
accept_params(Bin, Type, SubType, Acc) ->
	case param_sep(Bin) of
		{ok, Rest} -> accept_param(Rest, Type, SubType, Acc);
		{done, Rest} -> {ok, {{Type, SubType, lists:reverse(Acc)}, 1000, []}, Rest}
	end.

-spec accept_param(binary(), binary(), binary(), params())
	-> {ok, {media_type(), qvalue(), accept_ext()}, binary()} | error.
accept_param(Bin, Type, SubType, Acc) ->
	case param(Bin) of
		empty ->
			accept_params(Bin, Type, SubType, Acc);
		{ok, <<"q">>, _, _} ->
			accept_weight(Bin, Type, SubType, Acc);
		{ok, Name, Value, Rest} ->
			accept_params(Rest, Type, SubType, [{Name, Value} | Acc]);
		error ->
			error
	end.

%% The weight is not a generic parameter: its value is a bare qvalue.
-spec accept_weight(binary(), binary(), binary(), params())
	-> {ok, {media_type(), qvalue(), accept_ext()}, binary()} | error.
accept_weight(<<_, $=, Bin/binary>>, Type, SubType, Acc) ->
	case qvalue(Bin) of
		{ok, Q, Rest} -> accept_exts(Rest, {Type, SubType, lists:reverse(Acc)}, Q, []);
		error -> error
	end.

-spec accept_exts(binary(), media_type(), qvalue(), accept_ext())
	-> {ok, {media_type(), qvalue(), accept_ext()}, binary()} | error.
accept_exts(Bin, MediaType, Q, Acc) ->
	case param_sep(Bin) of
		{ok, Rest} -> accept_ext(Rest, MediaType, Q, Acc);
		{done, Rest} -> {ok, {MediaType, Q, lists:reverse(Acc)}, Rest}
	end.

-spec accept_ext(binary(), media_type(), qvalue(), accept_ext())
	-> {ok, {media_type(), qvalue(), accept_ext()}, binary()} | error.
accept_ext(Bin, MediaType, Q, Acc) ->
	case token_lc(Bin) of
		{<<>>, _} ->
			accept_exts(Bin, MediaType, Q, Acc);
		{Name, <<$=, Rest0/binary>>} ->
			case param_value(Rest0) of
				{ok, Value, Rest} -> accept_exts(Rest, MediaType, Q, [{Name, Value} | Acc]);
				error -> error
			end;
		{Name, Rest} ->
			accept_exts(Rest, MediaType, Q, [Name | Acc])
	end.

%% Accept-Charset (RFC 9110 12.5.2), Accept-Encoding (12.5.3), Accept-Language (12.5.4).

-spec parse_accept_charset(binary())
	-> {ok, [{binary(), qvalue()}]} | {error, mustang_error:value_error()}.
parse_accept_charset(Bin) ->
	result(list(Bin, fun(B) -> weighted(B, fun token_ci/1) end), invalid_accept_charset).

-spec parse_accept_encoding(binary())
	-> {ok, [{binary(), qvalue()}]} | {error, mustang_error:value_error()}.
parse_accept_encoding(Bin) ->
	result(list(Bin, fun(B) -> weighted(B, fun token_ci/1) end), invalid_accept_encoding).

-spec parse_accept_language(binary())
	-> {ok, [{binary(), qvalue()}]} | {error, mustang_error:value_error()}.
parse_accept_language(Bin) ->
	result(list(Bin, fun(B) -> weighted(B, fun language_range/1) end),
		invalid_accept_language).

-spec weighted(binary(), elem_fun()) -> {ok, {binary(), qvalue()}, binary()} | error.
weighted(Bin, Fun) ->
	case Fun(Bin) of
		{ok, Value, Rest0} ->
			case weight(Rest0) of
				{ok, Q, Rest} -> {ok, {Value, Q}, Rest};
				error -> error
			end;
		error ->
			error
	end.

%% weight = OWS ";" OWS "q=" qvalue
-spec weight(binary()) -> {ok, qvalue(), binary()} | error.
weight(Bin) ->
	case ows(Bin) of
		<<$;, Rest0/binary>> ->
			case ows(Rest0) of
				<<Q, $=, Rest/binary>> when Q =:= $q; Q =:= $Q -> qvalue(Rest);
				_ -> error
			end;
		Rest ->
			{ok, 1000, Rest}
	end.

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

%% language-range = ( 1*8ALPHA *( "-" 1*8alphanum ) ) / "*" (RFC 4647 2.1)
-spec language_range(binary()) -> {ok, binary(), binary()} | error.
language_range(<<$*, Rest/binary>>) ->
	{ok, <<"*">>, Rest};
language_range(Bin) ->
	language_tag(Bin).

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

%% Authorization and Proxy-Authorization (RFC 9110 11.6.2, 11.7.2).
%% credentials = auth-scheme [ 1*SP ( token68 / #auth-param ) ]
%% Only the Basic (RFC 7617), Bearer (RFC 6750) and Digest (RFC 7616) schemes are
%% understood; other schemes give an error too.

-spec parse_authorization(binary())
	-> {ok, credentials()} | {error, mustang_error:value_error()}.
parse_authorization(Bin) ->
	case token_lc(ows(Bin)) of
		{<<>>, _} -> bad(invalid_authorization);
		{Scheme, <<$\s, Rest/binary>>} -> credentials(Scheme, skip_sp(Rest));
		{Scheme, Rest} -> credentials_end(Scheme, ows(Rest))
	end.

%% A scheme alone is valid syntax, but none of the understood schemes allows it.
-spec credentials_end(binary(), binary())
	-> {error, mustang_error:value_error()}.
credentials_end(Scheme, <<>>) when Scheme =/= <<"basic">>, Scheme =/= <<"bearer">>,
		Scheme =/= <<"digest">> ->
	bad(unsupported_auth_scheme);
credentials_end(_, _) ->
	bad(invalid_authorization).

-spec credentials(binary(), binary())
	-> {ok, credentials()} | {error, mustang_error:value_error()}.
credentials(<<"basic">>, Bin) ->
	result(basic(token68(Bin)), invalid_authorization);
credentials(<<"bearer">>, Bin) ->
	case token68(Bin) of
		{ok, Token} -> {ok, {bearer, Token}};
		error -> bad(invalid_authorization)
	end;
credentials(<<"digest">>, Bin) ->
	case nonempty_list(Bin, fun auth_param/1) of
		{ok, Params} -> {ok, {digest, Params}};
		error -> bad(invalid_authorization)
	end;
credentials(_, _) ->
	bad(unsupported_auth_scheme).

%% The user-id may not contain a colon, the password may (RFC 7617 2).
-spec basic({ok, binary()} | error) -> {ok, {basic, binary(), binary()}} | error.
basic({ok, Token}) ->
	try base64:decode(Token) of
		Decoded ->
			case binary:split(Decoded, <<":">>) of
				[User, Password] -> {ok, {basic, User, Password}};
				[_] -> error
			end
	catch error:_ ->
		error
	end;
basic(error) ->
	error.

%% token68 = 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="
-spec token68(binary()) -> {ok, binary()} | error.
token68(Bin) ->
	token68(Bin, Bin, 0).

-spec token68(binary(), binary(), non_neg_integer()) -> {ok, binary()} | error.
token68(<<C, Rest/binary>>, Bin, N) when ?IS_ALNUM(C); C =:= $-; C =:= $.; C =:= $_;
		C =:= $~; C =:= $+; C =:= $/ ->
	token68(Rest, Bin, N + 1);
token68(Rest, Bin, N) when N > 0 ->
	token68_padding(Rest, Bin, N);
token68(_, _, _) ->
	error.

-spec token68_padding(binary(), binary(), non_neg_integer()) -> {ok, binary()} | error.
token68_padding(<<$=, Rest/binary>>, Bin, N) ->
	token68_padding(Rest, Bin, N + 1);
token68_padding(Rest, Bin, N) ->
	case ows(Rest) of
		<<>> -> {ok, binary:part(Bin, 0, N)};
		_ -> error
	end.

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

%% Connection (RFC 9110 7.6.1): the options are case-insensitive.

-spec parse_connection(binary()) -> {ok, [binary(), ...]} | {error, mustang_error:value_error()}.
parse_connection(Bin) ->
	result(nonempty_list(Bin, fun token_ci/1), invalid_connection).

%% Content-Encoding (RFC 9110 8.4) and Content-Language (8.5).

-spec parse_content_encoding(binary())
	-> {ok, [binary(), ...]} | {error, mustang_error:value_error()}.
parse_content_encoding(Bin) ->
	result(nonempty_list(Bin, fun token_ci/1), invalid_content_encoding).

-spec parse_content_language(binary())
	-> {ok, [binary(), ...]} | {error, mustang_error:value_error()}.
parse_content_language(Bin) ->
	result(nonempty_list(Bin, fun language_tag/1), invalid_content_language).

%% Content-Length (RFC 9110 8.6, RFC 9112 6.3). A list of identical values, as
%% left behind by a proxy that merged duplicate fields, stands for that value.
%% Empty list elements are not accepted here.

-spec parse_content_length(binary())
	-> {ok, non_neg_integer()} | {error, mustang_error:value_error()}.
parse_content_length(Bin) ->
	case number(ows(Bin)) of
		{ok, N, Rest} -> content_length_tail(ows(Rest), N);
		error -> bad(invalid_content_length)
	end.

-spec content_length_tail(binary(), non_neg_integer())
	-> {ok, non_neg_integer()} | {error, mustang_error:value_error()}.
content_length_tail(<<>>, N) ->
	{ok, N};
content_length_tail(<<$,, Rest0/binary>>, N) ->
	case number(ows(Rest0)) of
		{ok, N, Rest} -> content_length_tail(ows(Rest), N);
		_ -> bad(invalid_content_length)
	end;
content_length_tail(_, _) ->
	bad(invalid_content_length).

%% Content-Type (RFC 9110 8.3).

-spec parse_content_type(binary()) -> {ok, media_type()} | {error, mustang_error:value_error()}.
parse_content_type(Bin) ->
	case media_type(ows(Bin)) of
		{ok, {Type, SubType}, Rest0} ->
			case params(Rest0, []) of
				{ok, Params, Rest} -> result(at_end({Type, SubType, Params}, Rest),
					invalid_content_type);
				error -> bad(invalid_content_type)
			end;
		error ->
			bad(invalid_content_type)
	end.

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

%% Cookie (RFC 6265 5.4).

-spec parse_cookie(binary()) -> {ok, [{binary(), binary()}]} | {error, mustang_error:value_error()}.
parse_cookie(Bin) ->
	case mustang_cookie:parse_cookie(Bin) of
		{ok, Cookies} -> {ok, Cookies};
		{error, _} = Error -> Error
	end.

%% Date, Expires, If-Modified-Since, If-Unmodified-Since, Last-Modified
%% (RFC 9110 5.6.7).

-spec parse_date(binary()) -> {ok, calendar:datetime()} | {error, mustang_error:value_error()}.
parse_date(Bin) ->
	case mustang_date:parse(trim(Bin)) of
		{ok, Date} -> {ok, Date};
		{error, _} = Error -> Error
	end.

%% Expect (RFC 9110 10.1.1): only 100-continue is defined, case-insensitively.

-spec parse_expect(binary()) -> {ok, continue} | {error, mustang_error:value_error()}.
parse_expect(Bin) ->
	case lower(trim(Bin)) of
		<<"100-continue">> -> {ok, continue};
		_ -> bad(invalid_expect)
	end.

%% Host (RFC 9110 7.2, RFC 3986 3.2.2): uri-host [ ":" port ]. The host may be
%% empty (RFC 9112 3.2). It is lowercased; an IP literal keeps its brackets.

-spec parse_host(binary())
	-> {ok, {binary(), inet:port_number() | undefined}} | {error, mustang_error:value_error()}.
parse_host(Bin) ->
	case host(trim(Bin)) of
		{ok, Host, Rest} -> result(port(Rest, Host), invalid_host);
		error -> bad(invalid_host)
	end.

-spec host(binary()) -> {ok, binary(), binary()} | error.
host(<<$[, Rest0/binary>>) ->
	case binary:split(Rest0, <<"]">>) of
		[Literal, Rest] ->
			case is_ip_literal(Literal) of
				true -> {ok, lower(<<$[, Literal/binary, $]>>), Rest};
				false -> error
			end;
		[_] ->
			error
	end;
host(Bin) ->
	reg_name(Bin, Bin, 0).

%% reg-name = *( unreserved / pct-encoded / sub-delims )
-spec reg_name(binary(), binary(), non_neg_integer()) -> {ok, binary(), binary()} | error.
reg_name(<<C, Rest/binary>>, Bin, N) when ?IS_URI_CHAR(C) ->
	reg_name(Rest, Bin, N + 1);
reg_name(<<$%, H, L, Rest/binary>>, Bin, N) when ?IS_HEX(H), ?IS_HEX(L) ->
	reg_name(Rest, Bin, N + 3);
reg_name(<<$%, _/binary>>, _, _) ->
	error;
reg_name(Rest, Bin, N) ->
	{ok, lower(binary:part(Bin, 0, N)), Rest}.

%% IP-literal = "[" ( IPv6address / IPvFuture ) "]"
%% inet does the IPv6 grammar; only hex digits, ":" and "." reach it, which keeps
%% out the zone identifiers it would accept. 45 characters is the longest IPv6
%% address (with an embedded IPv4 address).
-spec is_ip_literal(binary()) -> boolean().
is_ip_literal(<<V, Rest/binary>>) when V =:= $v; V =:= $V ->
	is_ipvfuture(Rest, 0);
is_ip_literal(Literal) when byte_size(Literal) =< 45 ->
	is_ipv6_chars(Literal) andalso
		element(1, inet:parse_ipv6strict_address(binary_to_list(Literal))) =:= ok;
is_ip_literal(_) ->
	false.

-spec is_ipv6_chars(binary()) -> boolean().
is_ipv6_chars(<<C, Rest/binary>>) when ?IS_HEX(C); C =:= $:; C =:= $. ->
	is_ipv6_chars(Rest);
is_ipv6_chars(<<>>) ->
	true;
is_ipv6_chars(_) ->
	false.

%% IPvFuture = "v" 1*HEXDIG "." 1*( unreserved / sub-delims / ":" )
-spec is_ipvfuture(binary(), non_neg_integer()) -> boolean().
is_ipvfuture(<<C, Rest/binary>>, N) when ?IS_HEX(C) ->
	is_ipvfuture(Rest, N + 1);
is_ipvfuture(<<$., Rest/binary>>, N) when N > 0, Rest =/= <<>> ->
	is_ipvfuture_tail(Rest);
is_ipvfuture(_, _) ->
	false.

-spec is_ipvfuture_tail(binary()) -> boolean().
is_ipvfuture_tail(<<C, Rest/binary>>) when ?IS_URI_CHAR(C); C =:= $: ->
	is_ipvfuture_tail(Rest);
is_ipvfuture_tail(<<>>) ->
	true;
is_ipvfuture_tail(_) ->
	false.

%% port = *DIGIT; an empty port means no port (RFC 3986 3.2.3).
-spec port(binary(), binary()) -> {ok, {binary(), inet:port_number() | undefined}} | error.
port(<<>>, Host) ->
	{ok, {Host, undefined}};
port(<<$:>>, Host) ->
	{ok, {Host, undefined}};
port(<<$:, Rest/binary>>, Host) ->
	case number(Rest) of
		{ok, Port, <<>>} when Port =< 65535 -> {ok, {Host, Port}};
		_ -> error
	end;
port(_, _) ->
	error.

%% If-Match (RFC 9110 13.1.1), If-None-Match (13.1.2).
%% "*" / #entity-tag

-spec parse_if_match(binary()) -> {ok, '*' | [etag()]} | {error, mustang_error:value_error()}.
parse_if_match(Bin) ->
	result(etag_list(Bin), invalid_if_match).

-spec parse_if_none_match(binary()) -> {ok, '*' | [etag()]} | {error, mustang_error:value_error()}.
parse_if_none_match(Bin) ->
	result(etag_list(Bin), invalid_if_none_match).

-spec etag_list(binary()) -> {ok, '*' | [etag()]} | error.
etag_list(Bin) ->
	case trim(Bin) of
		<<"*">> -> {ok, '*'};
		Trimmed -> list(Trimmed, fun entity_tag/1)
	end.

%% entity-tag = [ weak ] opaque-tag; weak = %s"W/"; opaque-tag = DQUOTE *etagc DQUOTE
-spec entity_tag(binary()) -> {ok, etag(), binary()} | error.
entity_tag(<<"W/\"", Rest/binary>>) ->
	opaque_tag(Rest, Rest, 0, weak);
entity_tag(<<$", Rest/binary>>) ->
	opaque_tag(Rest, Rest, 0, strong);
entity_tag(_) ->
	error.

%% etagc = %x21 / %x23-7E / obs-text
-spec opaque_tag(binary(), binary(), non_neg_integer(), strong | weak)
	-> {ok, etag(), binary()} | error.
opaque_tag(<<$", Rest/binary>>, Bin, N, Strength) ->
	{ok, {Strength, binary:part(Bin, 0, N)}, Rest};
opaque_tag(<<C, Rest/binary>>, Bin, N, Strength) when ?IS_VISIBLE(C) ->
	opaque_tag(Rest, Bin, N + 1, Strength);
opaque_tag(_, _, _, _) ->
	error.

%% If-Range (RFC 9110 13.1.5): entity-tag / HTTP-date.

-spec parse_if_range(binary()) -> {ok, etag() | calendar:datetime()} | {error, mustang_error:value_error()}.
parse_if_range(Bin) ->
	Trimmed = trim(Bin),
	case entity_tag(Trimmed) of
		{ok, ETag, <<>>} ->
			{ok, ETag};
		_ ->
			case mustang_date:parse(Trimmed) of
				{ok, Date} -> {ok, Date};
				{error, _} -> bad(invalid_if_range)
			end
	end.

%% Max-Forwards (RFC 9110 7.6.2).

-spec parse_max_forwards(binary()) -> {ok, non_neg_integer()} | {error, mustang_error:value_error()}.
parse_max_forwards(Bin) ->
	case number(trim(Bin)) of
		{ok, N, <<>>} -> {ok, N};
		_ -> bad(invalid_max_forwards)
	end.

%% Range (RFC 9110 14.2): ranges-specifier = range-unit "=" range-set.
%% Byte ranges are {First, Last}, {First, infinity} or -SuffixLength; other units
%% are returned with their range-set unparsed.

-spec parse_range(binary()) -> {ok, range()} | {error, mustang_error:value_error()}.
parse_range(Bin) ->
	case token_lc(trim(Bin)) of
		{<<>>, _} ->
			bad(invalid_range);
		{Unit, <<$=, Rest/binary>>} ->
			result(range_set(Unit, Rest), invalid_range);
		_ ->
			bad(invalid_range)
	end.

-spec range_set(binary(), binary()) -> {ok, range()} | error.
range_set(<<"bytes">>, Bin) ->
	case nonempty_list(Bin, fun byte_range_spec/1) of
		{ok, Ranges} -> {ok, {bytes, Ranges}};
		error -> error
	end;
range_set(Unit, Bin) ->
	case nonempty_list(Bin, fun other_range/1) of
		{ok, _} -> {ok, {Unit, Bin}};
		error -> error
	end.

%% int-range = first-pos "-" [ last-pos ]; suffix-range = "-" suffix-length.
%% A last-pos below first-pos makes the range invalid.
-spec byte_range_spec(binary()) -> {ok, byte_range(), binary()} | error.
byte_range_spec(<<$-, Rest0/binary>>) ->
	case number(Rest0) of
		{ok, Suffix, Rest} -> {ok, -Suffix, Rest};
		error -> error
	end;
byte_range_spec(Bin) ->
	case number(Bin) of
		{ok, First, <<$-, Rest/binary>>} -> last_pos(Rest, First);
		_ -> error
	end.

-spec last_pos(binary(), non_neg_integer()) -> {ok, byte_range(), binary()} | error.
last_pos(<<C, _/binary>> = Bin, First) when ?IS_DIGIT(C) ->
	case number(Bin) of
		{ok, Last, Rest} when Last >= First -> {ok, {First, Last}, Rest};
		_ -> error
	end;
last_pos(Rest, First) ->
	{ok, {First, infinity}, Rest}.

%% other-range = 1*( %x21-2B / %x2D-7E )
-spec other_range(binary()) -> {ok, binary(), binary()} | error.
other_range(Bin) ->
	other_range(Bin, Bin, 0).

-spec other_range(binary(), binary(), non_neg_integer()) -> {ok, binary(), binary()} | error.
other_range(<<C, Rest/binary>>, Bin, N) when C >= 16#21, C =< 16#7e, C =/= $, ->
	other_range(Rest, Bin, N + 1);
other_range(Rest, Bin, N) when N > 0 ->
	{ok, binary:part(Bin, 0, N), Rest};
other_range(_, _, _) ->
	error.

%% Sec-WebSocket-Extensions (RFC 6455 9.1):
%% extension = extension-token *( ";" extension-param )
%% extension-param = token [ "=" ( token / quoted-string ) ]
%% Names and values keep their case.

-spec parse_sec_websocket_extensions(binary())
	-> {ok, [{binary(), [{binary(), binary()} | binary()]}, ...]}
	| {error, mustang_error:value_error()}.
parse_sec_websocket_extensions(Bin) ->
	result(nonempty_list(Bin, fun ws_extension/1), invalid_sec_websocket_extensions).

-spec ws_extension(binary()) -> {ok, {binary(), [{binary(), binary()} | binary()]}, binary()}
	| error.
ws_extension(Bin) ->
	case token(Bin) of
		{<<>>, _} -> error;
		{Name, Rest} -> ws_extension_params(Rest, Name, [])
	end.

-spec ws_extension_params(binary(), binary(), [{binary(), binary()} | binary()])
	-> {ok, {binary(), [{binary(), binary()} | binary()]}, binary()} | error.
ws_extension_params(Bin, Name, Acc) ->
	case param_sep(Bin) of
		{ok, Rest} -> ws_extension_param(Rest, Name, Acc);
		{done, Rest} -> {ok, {Name, lists:reverse(Acc)}, Rest}
	end.

-spec ws_extension_param(binary(), binary(), [{binary(), binary()} | binary()])
	-> {ok, {binary(), [{binary(), binary()} | binary()]}, binary()} | error.
ws_extension_param(Bin, Name, Acc) ->
	case token(Bin) of
		{<<>>, _} ->
			error;
		{Key, <<$=, Rest0/binary>>} ->
			case param_value(Rest0) of
				{ok, Value, Rest} -> ws_extension_params(Rest, Name, [{Key, Value} | Acc]);
				error -> error
			end;
		{Key, Rest} ->
			ws_extension_params(Rest, Name, [Key | Acc])
	end.

%% Sec-WebSocket-Protocol (RFC 6455 11.3.4): 1#token. Subprotocol names are
%% compared case-sensitively by browsers, so their case is kept.

-spec parse_sec_websocket_protocol(binary())
	-> {ok, [binary(), ...]} | {error, mustang_error:value_error()}.
parse_sec_websocket_protocol(Bin) ->
	result(nonempty_list(Bin, fun token_cs/1), invalid_sec_websocket_protocol).

%% Sec-WebSocket-Version (RFC 6455 11.3.5): one version number, 0..255, without
%% leading zeros.

-spec parse_sec_websocket_version(binary())
	-> {ok, 0..255} | {error, mustang_error:value_error()}.
parse_sec_websocket_version(Bin) ->
	case trim(Bin) of
		<<$0>> -> {ok, 0};
		<<C, _/binary>> = Trimmed when C >= $1, C =< $9, byte_size(Trimmed) =< 3 ->
			case number(Trimmed) of
				{ok, N, <<>>} when N =< 255 -> {ok, N};
				_ -> bad(invalid_sec_websocket_version)
			end;
		_ ->
			bad(invalid_sec_websocket_version)
	end.

%% TE (RFC 9110 10.1.4):
%% t-codings = "trailers" / ( transfer-coding [ weight ] )
%% transfer-coding = token *( OWS ";" OWS transfer-parameter )
%% transfer-parameter = token BWS "=" BWS token
%% Transfer parameters are checked and dropped.

-spec parse_te(binary()) -> {ok, [{binary(), qvalue()}]} | {error, mustang_error:value_error()}.
parse_te(Bin) ->
	result(list(Bin, fun t_coding/1), invalid_te).

-spec t_coding(binary()) -> {ok, {binary(), qvalue()}, binary()} | error.
t_coding(Bin) ->
	case token_ci(Bin) of
		{ok, <<"trailers">>, Rest} -> {ok, {<<"trailers">>, 1000}, Rest};
		{ok, Coding, Rest} -> t_coding_params(Rest, Coding);
		error -> error
	end.

-spec t_coding_params(binary(), binary()) -> {ok, {binary(), qvalue()}, binary()} | error.
t_coding_params(Bin, Coding) ->
	case param_sep(Bin) of
		{ok, Rest} -> t_coding_param(Rest, Coding);
		{done, Rest} -> {ok, {Coding, 1000}, Rest}
	end.

-spec t_coding_param(binary(), binary()) -> {ok, {binary(), qvalue()}, binary()} | error.
t_coding_param(<<Q, $=, Rest0/binary>>, Coding) when Q =:= $q; Q =:= $Q ->
	case qvalue(Rest0) of
		{ok, Weight, Rest} -> {ok, {Coding, Weight}, Rest};
		error -> error
	end;
t_coding_param(Bin, Coding) ->
	case auth_param(Bin) of
		{ok, _, Rest} -> t_coding_params(Rest, Coding);
		error -> error
	end.

%% Trailer (RFC 9110 6.6.2): 1#field-name, lowercased.

-spec parse_trailer(binary()) -> {ok, [binary(), ...]} | {error, mustang_error:value_error()}.
parse_trailer(Bin) ->
	result(nonempty_list(Bin, fun token_ci/1), invalid_trailer).

%% Transfer-Encoding (RFC 9112 6.1). Transfer parameters are rejected: no coding in
%% use has any, and this field is where request smuggling starts.

-spec parse_transfer_encoding(binary())
	-> {ok, [binary(), ...]} | {error, mustang_error:value_error()}.
parse_transfer_encoding(Bin) ->
	result(nonempty_list(Bin, fun token_ci/1), invalid_transfer_encoding).

%% Upgrade (RFC 9110 7.8): protocol = protocol-name ["/" protocol-version],
%% lowercased as recipients compare them case-insensitively.

-spec parse_upgrade(binary()) -> {ok, [binary(), ...]} | {error, mustang_error:value_error()}.
parse_upgrade(Bin) ->
	result(nonempty_list(Bin, fun protocol/1), invalid_upgrade).

-spec protocol(binary()) -> {ok, binary(), binary()} | error.
protocol(Bin) ->
	case token_lc(Bin) of
		{<<>>, _} ->
			error;
		{Name, <<$/, Rest0/binary>>} ->
			case token_lc(Rest0) of
				{<<>>, _} -> error;
				{Version, Rest} -> {ok, <<Name/binary, $/, Version/binary>>, Rest}
			end;
		{Name, Rest} ->
			{ok, Name, Rest}
	end.

%% Vary (RFC 9110 12.5.5): #( "*" / field-name ), lowercased.

-spec parse_vary(binary()) -> {ok, [binary()]} | {error, mustang_error:value_error()}.
parse_vary(Bin) ->
	result(list(Bin, fun token_ci/1), invalid_vary).

%% X-Forwarded-For (de facto): a list of nodes, each returned as sent. A node is
%% any run of visible characters other than a comma.

-spec parse_x_forwarded_for(binary())
	-> {ok, [binary(), ...]} | {error, mustang_error:value_error()}.
parse_x_forwarded_for(Bin) ->
	result(nonempty_list(Bin, fun forwarded_node/1), invalid_x_forwarded_for).

-spec forwarded_node(binary()) -> {ok, binary(), binary()} | error.
forwarded_node(Bin) ->
	forwarded_node(Bin, Bin, 0).

-spec forwarded_node(binary(), binary(), non_neg_integer()) -> {ok, binary(), binary()} | error.
forwarded_node(<<C, Rest/binary>>, Bin, N) when ?IS_VISIBLE(C), C =/= $, ->
	forwarded_node(Rest, Bin, N + 1);
forwarded_node(Rest, Bin, N) when N > 0 ->
	{ok, binary:part(Bin, 0, N), Rest};
forwarded_node(_, _, _) ->
	error.

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

%% Helpers.

-spec result({ok, Value} | error, atom()) -> {ok, Value} | {error, mustang_error:value_error()}.
result({ok, Value}, _) -> {ok, Value};
result(error, Field) -> bad(Field).

%% The error for a value that does not parse: one sentence per field, naming
%% the RFC section of its grammar (doc/internals/errors.md).
-spec bad(atom()) -> {error, mustang_error:value_error()}.
bad(Field) ->
	{error, {value_error, 400, reason(Field)}}.

-spec reason(atom()) -> atom().
reason(invalid_accept) ->
	'The accept header must be a list of media ranges. (RFC9110 12.5.1)';
reason(invalid_accept_charset) ->
	'The accept-charset header must be a list of charsets with optional weights. (RFC9110 12.5.2)';
reason(invalid_accept_encoding) ->
	'The accept-encoding header must be a list of codings with optional weights. (RFC9110 12.5.3)';
reason(invalid_accept_language) ->
	'The accept-language header must be a list of language ranges with optional weights. (RFC9110 12.5.4)';
reason(invalid_authorization) ->
	'The authorization header must be a scheme and valid credentials. (RFC9110 11.6.2)';
reason(unsupported_auth_scheme) ->
	'Only the basic, bearer and digest authentication schemes are understood. (RFC9110 11.1)';
reason(invalid_connection) ->
	'The connection header must be a non-empty list of tokens. (RFC9110 7.6.1)';
reason(invalid_content_encoding) ->
	'The content-encoding header must be a non-empty list of codings. (RFC9110 8.4)';
reason(invalid_content_language) ->
	'The content-language header must be a non-empty list of language tags. (RFC9110 8.5)';
reason(invalid_content_length) ->
	'The content-length header must be one non-negative decimal number. (RFC9110 8.6)';
reason(invalid_content_type) ->
	'The content-type header must be a media type with optional parameters. (RFC9110 8.3)';
reason(invalid_expect) ->
	'The expect header must be 100-continue. (RFC9110 10.1.1)';
reason(invalid_host) ->
	'The host header must be a uri-host with an optional port. (RFC9110 7.2)';
reason(invalid_if_match) ->
	'The if-match header must be * or a list of entity tags. (RFC9110 13.1.1)';
reason(invalid_if_none_match) ->
	'The if-none-match header must be * or a list of entity tags. (RFC9110 13.1.2)';
reason(invalid_if_range) ->
	'The if-range header must be an entity tag or a date. (RFC9110 13.1.5)';
reason(invalid_max_forwards) ->
	'The max-forwards header must be a non-negative decimal number. (RFC9110 7.6.2)';
reason(invalid_range) ->
	'The range header must be a range unit and a list of ranges. (RFC9110 14.2)';
reason(invalid_sec_websocket_extensions) ->
	'The sec-websocket-extensions header must be a non-empty list of extensions. (RFC6455 9.1)';
reason(invalid_sec_websocket_protocol) ->
	'The sec-websocket-protocol header must be a non-empty list of tokens. (RFC6455 11.3.4)';
reason(invalid_sec_websocket_version) ->
	'The sec-websocket-version header must be a number from 0 to 255. (RFC6455 11.3.5)';
reason(invalid_te) ->
	'The te header must be a list of transfer codings with optional weights. (RFC9110 10.1.4)';
reason(invalid_trailer) ->
	'The trailer header must be a non-empty list of field names. (RFC9110 6.6.2)';
reason(invalid_transfer_encoding) ->
	'The transfer-encoding header must be a non-empty list of codings. (RFC9112 6.1)';
reason(invalid_upgrade) ->
	'The upgrade header must be a non-empty list of protocols. (RFC9110 7.8)';
reason(invalid_vary) ->
	'The vary header must be * or a list of field names. (RFC9110 12.5.5)';
reason(invalid_x_forwarded_for) ->
	'The x-forwarded-for header must be a non-empty list of nodes. (RFC7239 6)';
reason(unknown_header) ->
	'There is no parser for this header. (Mustang unknown_header)'.

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
