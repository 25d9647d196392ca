%% Content negotiation and credentials header parsers: Accept, Accept-Charset,
%% Accept-Encoding, Accept-Language (RFC 9110 12.5), Authorization and
%% Proxy-Authorization (RFC 9110 11.6.2, 11.7.2). mustang_http_hd exports the
%% same functions and delegates to these; call them through mustang_http_hd.
%% Built on mustang_http_hd_grammar; never calls mustang_http_hd (no import
%% cycle). No options.
%%
%% Contract: the one of mustang_http_hd. Strict when parsing: each parser takes
%% the raw field value and returns {ok, Value} or {error, {value_error, 400,
%% Reason}} (mustang_error, doc/internals/errors.md), Reason a sentence naming
%% the field and the RFC section of its grammar; never crashes on any binary.
%%
%% Common rules (RFC 9110 5.6, see mustang_http_hd_grammar): lists may hold
%% empty elements, which are ignored; media types, parameter names, charsets,
%% codings, language ranges and auth schemes are returned lowercased; weights
%% are qvalues in thousandths (0..1000), 1000 when the weight is absent.
-module(mustang_http_hd_accept).

-export([parse_accept/1]).
-export([parse_accept_charset/1]).
-export([parse_accept_encoding/1]).
-export([parse_accept_language/1]).
-export([parse_authorization/1]).

-import(mustang_http_hd_grammar, [list/2, nonempty_list/2, token_lc/1, media_type/1,
	param_sep/1, param/1, param_value/1, qvalue/1, language_tag/1, ows/1, skip_sp/1]).

-type qvalue() :: mustang_http_hd_grammar:qvalue().
-type params() :: mustang_http_hd_grammar:params().
-type media_type() :: mustang_http_hd_grammar:media_type().
-type elem_fun() :: mustang_http_hd_grammar:elem_fun().
-type accept_ext() :: [{binary(), binary()} | binary()].
-type credentials() :: {basic, binary(), binary()} | {bearer, binary()}
	| {digest, [{binary(), binary()}, ...]}.
-export_type([accept_ext/0]).
-export_type([credentials/0]).

-include("mustang_http_hd.hrl").

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
	result(list(Bin, fun(B) -> weighted(B, fun mustang_http_hd_grammar:token_ci/1) end),
		invalid_accept_charset).

-spec parse_accept_encoding(binary())
	-> {ok, [{binary(), qvalue()}]} | {error, mustang_error:value_error()}.
parse_accept_encoding(Bin) ->
	result(list(Bin, fun(B) -> weighted(B, fun mustang_http_hd_grammar:token_ci/1) end),
		invalid_accept_encoding).

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

%% language-range = ( 1*8ALPHA *( "-" 1*8alphanum ) ) / "*" (RFC 4647 2.1)
-spec language_range(binary()) -> {ok, binary(), binary()} | error.
language_range(<<$*, Rest/binary>>) ->
	{ok, <<"*">>, Rest};
language_range(Bin) ->
	language_tag(Bin).

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
	case nonempty_list(Bin, fun mustang_http_hd_grammar:auth_param/1) of
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

%% Errors.

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
	'Only the basic, bearer and digest authentication schemes are understood. (RFC9110 11.1)'.
