%% HTTP header value parsers (RFC 9110, RFC 9112, RFC 6265, RFC 6455, RFC 7239 practice).
%% This is the API: callers use it for every field. The content negotiation
%% and credentials fields (Accept*, Authorization) are parsed by
%% mustang_http_hd_accept, which the functions here delegate to, and the grammar
%% shared by the parsers (lists, tokens, parameters, qvalues...) is in
%% mustang_http_hd_grammar; neither calls this module. No options.
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
-export([parse_access_control_request_headers/1]).
-export([parse_access_control_request_method/1]).
-export([parse_origin/1]).

-import(mustang_http_hd_grammar, [list/2, nonempty_list/2, token/1, token_lc/1,
	token_ci/1, number/1, media_type/1, params/2, param_sep/1, param_value/1, qvalue/1,
	auth_param/1, at_end/2, ows/1, trim/1, lower/1]).

-type qvalue() :: mustang_http_hd_grammar:qvalue().
-type media_type() :: mustang_http_hd_grammar:media_type().
-type accept_ext() :: mustang_http_hd_accept:accept_ext().
-type etag() :: {strong | weak, binary()}.
-type byte_range() :: {non_neg_integer(), non_neg_integer() | infinity} | neg_integer() | 0.
-type range() :: {bytes, [byte_range(), ...]} | {binary(), binary()}.
-type credentials() :: mustang_http_hd_accept:credentials().
-export_type([qvalue/0]).
-export_type([media_type/0]).
-export_type([etag/0]).
-export_type([range/0]).
-export_type([credentials/0]).

-include("mustang_http_hd.hrl").

%% Dispatch.

%% Parses the value of the header Name (lower case) with the parser of that
%% header: `accept`, `accept-charset`, `accept-encoding`, `accept-language`,
%% `authorization` and `proxy-authorization`, `connection`,
%% `content-encoding`, `content-language`, `content-length`, `content-type`,
%% `cookie`, `date`, `expires`, `if-modified-since`, `if-unmodified-since`
%% and `last-modified` (dates), `expect`, `host`, `if-match`,
%% `if-none-match`, `if-range`, `max-forwards`, `range`,
%% `sec-websocket-extensions`, `sec-websocket-protocol`,
%% `sec-websocket-version`, `te`, `trailer`, `transfer-encoding`, `upgrade`,
%% `vary`, `x-forwarded-for`, `access-control-request-headers`,
%% `access-control-request-method`, `origin`. Returns `{ok, Value}`, or
%% `{error, {value_error, 400, Reason}}` for a value that does not parse and
%% for a header with no parser (Reason: "There is no parser for this
%% header."). Never raises on a binary.
%%
%%     {ok, {<<"text">>, <<"html">>, [{<<"charset">>, <<"utf-8">>}]}} =
%%         mustang_http_hd:parse(<<"content-type">>, <<"text/HTML; charset=UTF-8">>)
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
parse(<<"access-control-request-headers">>, Value) -> parse_access_control_request_headers(Value);
parse(<<"access-control-request-method">>, Value) -> parse_access_control_request_method(Value);
parse(<<"origin">>, Value) -> parse_origin(Value);
parse(_, _) -> bad(unknown_header).

%% Whether the list-valued request header Name of Headers (`connection`,
%% `upgrade`...) is there, parses, and names Token (lower case). `false` for a
%% header that does not parse.
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

%% Accept (RFC 9110 12.5.1), Accept-Charset (12.5.2), Accept-Encoding (12.5.3),
%% Accept-Language (12.5.4), Authorization and Proxy-Authorization (11.6.2,
%% 11.7.2): in mustang_http_hd_accept.

%% Accept (RFC 9110 12.5.1): `[{{Type, SubType, Params}, Quality,
%% AcceptExt}]` in the order sent, types and parameter names lower case,
%% Quality an integer 0..1000 (q=0.5 is 500; 1000 without q), AcceptExt the
%% parameters after the weight.
%%
%%     {ok, [{{<<"text">>, <<"html">>, [{<<"level">>, <<"1">>}]}, 500, []},
%%         {{<<"*">>, <<"*">>, []}, 1000, []}]} =
%%         mustang_http_hd:parse_accept(<<"text/html;level=1;q=0.5, */*">>)
-spec parse_accept(binary())
	-> {ok, [{media_type(), qvalue(), accept_ext()}]} | {error, mustang_error:value_error()}.
parse_accept(Bin) -> mustang_http_hd_accept:parse_accept(Bin).

%% Accept-Charset (RFC 9110 12.5.2): `[{Charset, Quality}]`, charsets lower
%% case, Quality 0..1000.
-spec parse_accept_charset(binary())
	-> {ok, [{binary(), qvalue()}]} | {error, mustang_error:value_error()}.
parse_accept_charset(Bin) -> mustang_http_hd_accept:parse_accept_charset(Bin).

%% Accept-Encoding (RFC 9110 12.5.3): `[{Coding, Quality}]`, codings lower
%% case, Quality 0..1000; an empty value is `[]`.
-spec parse_accept_encoding(binary())
	-> {ok, [{binary(), qvalue()}]} | {error, mustang_error:value_error()}.
parse_accept_encoding(Bin) -> mustang_http_hd_accept:parse_accept_encoding(Bin).

%% Accept-Language (RFC 9110 12.5.4): `[{LanguageRange, Quality}]`, ranges
%% lower case, Quality 0..1000:
%% `{ok, [{<<"en-gb">>, 1000}, {<<"fr">>, 500}]}` for `en-GB, fr;q=0.5`.
-spec parse_accept_language(binary())
	-> {ok, [{binary(), qvalue()}]} | {error, mustang_error:value_error()}.
parse_accept_language(Bin) -> mustang_http_hd_accept:parse_accept_language(Bin).

%% Authorization and Proxy-Authorization (RFC 9110 11.6.2): `{basic, User,
%% Password}` (RFC 7617), `{bearer, Token}` (RFC 6750) or `{digest, Params}`
%% (RFC 7616). Other schemes are an error too.
%%
%%     {ok, {basic, <<"user">>, <<"pass">>}} = mustang_http_hd:parse_authorization(<<"Basic dXNlcjpwYXNz">>)
-spec parse_authorization(binary())
	-> {ok, credentials()} | {error, mustang_error:value_error()}.
parse_authorization(Bin) -> mustang_http_hd_accept:parse_authorization(Bin).

%% Connection (RFC 9110 7.6.1): #connection-option, each a token; the list
%% may be empty, the options are case-insensitive.

%% Connection (RFC 9110 7.6.1): the connection options, lower case (`[]` for
%% an empty list).
-spec parse_connection(binary()) -> {ok, [binary()]} | {error, mustang_error:value_error()}.
parse_connection(Bin) ->
	result(list(Bin, fun mustang_http_hd_grammar:token_ci/1), invalid_connection).

%% Content-Encoding (RFC 9110 8.4) and Content-Language (8.5).

%% Content-Encoding (RFC 9110 8.4): the codings in the order applied, lower
%% case, at least one.
-spec parse_content_encoding(binary())
	-> {ok, [binary(), ...]} | {error, mustang_error:value_error()}.
parse_content_encoding(Bin) ->
	result(nonempty_list(Bin, fun mustang_http_hd_grammar:token_ci/1), invalid_content_encoding).

%% Content-Language (RFC 9110 8.5): the language tags, at least one.
-spec parse_content_language(binary())
	-> {ok, [binary(), ...]} | {error, mustang_error:value_error()}.
parse_content_language(Bin) ->
	result(nonempty_list(Bin, fun mustang_http_hd_grammar:language_tag/1), invalid_content_language).

%% Content-Length (RFC 9110 8.6, RFC 9112 6.3). A list of identical values, as
%% left behind by a proxy that merged duplicate fields, stands for that value.
%% Empty list elements are not accepted here.

%% Content-Length (RFC 9110 8.6, RFC 9112 6.3): a non-negative integer. A
%% list of identical values (left by a proxy that merged duplicate fields)
%% stands for that value; different values are an error.
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

%% Content-Type (RFC 9110 8.3): `{Type, SubType, Params}`, type, subtype and
%% parameter names lower case, parameter values as sent (unquoted) but the
%% `charset` value, lower case.
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

%% Cookie (RFC 6265 5.4).

%% Cookie (RFC 6265 5.4): the cookies in order, `[{Name, Value}]`, duplicates
%% kept (`mustang_cookie:parse_cookie/1`).
-spec parse_cookie(binary()) -> {ok, [{binary(), binary()}]} | {error, mustang_error:value_error()}.
parse_cookie(Bin) ->
	case mustang_cookie:parse_cookie(Bin) of
		{ok, Cookies} -> {ok, Cookies};
		{error, _} = Error -> Error
	end.

%% Date, Expires, If-Modified-Since, If-Unmodified-Since, Last-Modified
%% (RFC 9110 5.6.7).

%% An HTTP date (Date, Expires, If-Modified-Since, If-Unmodified-Since,
%% Last-Modified; RFC 9110 5.6.7, all three formats): a
%% `calendar:datetime()`, in UTC.
-spec parse_date(binary()) -> {ok, calendar:datetime()} | {error, mustang_error:value_error()}.
parse_date(Bin) ->
	case mustang_date:parse(trim(Bin)) of
		{ok, Date} -> {ok, Date};
		{error, _} = Error -> Error
	end.

%% Expect (RFC 9110 10.1.1): only 100-continue is defined, case-insensitively.

%% Expect (RFC 9110 10.1.1): `continue` for `100-continue` (any case), the
%% only expectation defined; anything else is an error.
-spec parse_expect(binary()) -> {ok, continue} | {error, mustang_error:value_error()}.
parse_expect(Bin) ->
	case lower(trim(Bin)) of
		<<"100-continue">> -> {ok, continue};
		_ -> bad(invalid_expect)
	end.

%% Host (RFC 9110 7.2, RFC 3986 3.2.2): uri-host [ ":" port ]. The host may be
%% empty (RFC 9112 3.2). It is lowercased; an IP literal keeps its brackets.
%% The port, when there is one, is 1..65535.

%% Host (RFC 9110 7.2): `{Host, Port}`, the host lower case (an IP literal
%% keeps its brackets), Port 1..65535 or `undefined` when none is given; the
%% host may be empty (RFC 9112 3.2).
%%
%%     {ok, {<<"example.org">>, 8080}} = mustang_http_hd:parse_host(<<"Example.org:8080">>)
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
		%% Port 0 names no port a client can reach.
		{ok, Port, <<>>} when Port > 0, Port =< 65535 -> {ok, {Host, Port}};
		_ -> error
	end;
port(_, _) ->
	error.

%% If-Match (RFC 9110 13.1.1), If-None-Match (13.1.2).
%% "*" / #entity-tag

%% If-Match (RFC 9110 13.1.1): `'*'` or a list of entity tags
%% `{strong | weak, Opaque}` (the opaque tag without its quotes).
-spec parse_if_match(binary()) -> {ok, '*' | [etag()]} | {error, mustang_error:value_error()}.
parse_if_match(Bin) ->
	result(etag_list(Bin), invalid_if_match).

%% If-None-Match (RFC 9110 13.1.2): `'*'` or a list of entity tags:
%% `{ok, [{weak, <<"a">>}, {strong, <<"b">>}]}` for `W/"a", "b"`.
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

%% If-Range (RFC 9110 13.1.5): an entity tag `{strong | weak, Opaque}` or a
%% date (`calendar:datetime()`).
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

%% Max-Forwards (RFC 9110 7.6.2): a non-negative integer.
-spec parse_max_forwards(binary()) -> {ok, non_neg_integer()} | {error, mustang_error:value_error()}.
parse_max_forwards(Bin) ->
	case number(trim(Bin)) of
		{ok, N, <<>>} -> {ok, N};
		_ -> bad(invalid_max_forwards)
	end.

%% Range (RFC 9110 14.2): ranges-specifier = range-unit "=" range-set.
%% Byte ranges are {First, Last}, {First, infinity} or -SuffixLength; other units
%% are returned with their range-set unparsed.

%% Range (RFC 9110 14.2): `{bytes, [Range]}` with each range `{First, Last}`,
%% `{First, infinity}` or `-SuffixLength` (a range whose last position is
%% below its first is an error), or `{Unit, RangeSet}` for another unit, the
%% set unparsed.
%%
%%     {ok, {bytes, [{0, 99}, -5]}} = mustang_http_hd:parse_range(<<"bytes=0-99,-5">>)
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

%% Sec-WebSocket-Extensions (RFC 6455 9.1): `[{Extension, Params}]`, each
%% parameter `{Name, Value}` or a `Name` alone, names and values as sent.
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

%% Sec-WebSocket-Protocol (RFC 6455 11.3.4): the subprotocol names, as sent
%% (browsers compare them case-sensitively), at least one.
-spec parse_sec_websocket_protocol(binary())
	-> {ok, [binary(), ...]} | {error, mustang_error:value_error()}.
parse_sec_websocket_protocol(Bin) ->
	result(nonempty_list(Bin, fun mustang_http_hd_grammar:token_cs/1), invalid_sec_websocket_protocol).

%% Sec-WebSocket-Version (RFC 6455 11.3.5): one version number, 0..255, without
%% leading zeros.

%% Sec-WebSocket-Version (RFC 6455 11.3.5): one version number, 0..255,
%% without leading zeros.
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

%% TE (RFC 9110 10.1.4): `[{Coding, Quality}]`, codings lower case (with
%% `trailers`), Quality 0..1000; transfer parameters are checked and dropped.
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

%% Trailer (RFC 9110 6.6.2): the field names announced, lower case, at least
%% one.
-spec parse_trailer(binary()) -> {ok, [binary(), ...]} | {error, mustang_error:value_error()}.
parse_trailer(Bin) ->
	result(nonempty_list(Bin, fun mustang_http_hd_grammar:token_ci/1), invalid_trailer).

%% Transfer-Encoding (RFC 9112 6.1). Transfer parameters are rejected: no coding in
%% use has any, and this field is where request smuggling starts.

%% Transfer-Encoding (RFC 9112 6.1): the codings, lower case, at least one;
%% transfer parameters are refused (this field is where request smuggling
%% starts).
-spec parse_transfer_encoding(binary())
	-> {ok, [binary(), ...]} | {error, mustang_error:value_error()}.
parse_transfer_encoding(Bin) ->
	result(nonempty_list(Bin, fun mustang_http_hd_grammar:token_ci/1), invalid_transfer_encoding).

%% Upgrade (RFC 9110 7.8): protocol = protocol-name ["/" protocol-version],
%% lowercased as recipients compare them case-insensitively.

%% Upgrade (RFC 9110 7.8): the protocols (`name` or `name/version`), lower
%% case, at least one.
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

%% Vary (RFC 9110 12.5.5): field names, lower case, or `<<"*">>`.
-spec parse_vary(binary()) -> {ok, [binary()]} | {error, mustang_error:value_error()}.
parse_vary(Bin) ->
	result(list(Bin, fun mustang_http_hd_grammar:token_ci/1), invalid_vary).

%% X-Forwarded-For (de facto): a list of nodes, each returned as sent. A node is
%% any run of visible characters other than a comma.

%% X-Forwarded-For (de facto): the nodes in order, each as sent (any visible
%% characters but a comma), at least one. Only a proxy you trust sets it:
%% check where it came from before you believe it.
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

%% Errors.

-spec result({ok, Value} | error, atom()) -> {ok, Value} | {error, mustang_error:value_error()}.
result({ok, Value}, _) -> {ok, Value};
result(error, Field) -> bad(Field).

%% CORS preflight fields (Fetch Standard, CORS protocol; their grammars are
%% RFC 9110's list of field names and method token):
%% Access-Control-Request-Headers = #field-name (names lowercased), and
%% Access-Control-Request-Method = method (a token, case-sensitive).

%% Access-Control-Request-Headers (CORS preflight): field names, lower case.
-spec parse_access_control_request_headers(binary())
	-> {ok, [binary()]} | {error, mustang_error:value_error()}.
parse_access_control_request_headers(Bin) ->
	result(list(Bin, fun mustang_http_hd_grammar:token_ci/1), invalid_access_control_request_headers).

%% Access-Control-Request-Method (CORS preflight): one method, a token, as
%% sent (case-sensitive).
-spec parse_access_control_request_method(binary())
	-> {ok, binary()} | {error, mustang_error:value_error()}.
parse_access_control_request_method(Bin) ->
	case token(trim(Bin)) of
		{Method, <<>>} when Method =/= <<>> -> {ok, Method};
		_ -> bad(invalid_access_control_request_method)
	end.

%% Origin (RFC 6454 7.1): "null", or serialized-origin *( SP serialized-origin )
%% with serialized-origin = scheme "://" host [ ":" port ]. Each origin is
%% {Scheme, Host, Port}, scheme and host lowercased, the port defaulting to
%% 80 (http, ws) or 443 (https, wss), else undefined. As in Cowboy, "null"
%% gives [Ref], a new reference, so that no two null origins are equal.

%% Origin (RFC 6454 7.1): `[{Scheme, Host, Port}]`, scheme and host lower
%% case, Port the one given or 80 (http, ws) or 443 (https, wss), else
%% `undefined`; `null` gives `[Ref]`, a new reference (so that no two null
%% origins are equal), as in Cowboy.
%%
%%     {ok, [{<<"https">>, <<"example.org">>, 443}]} = mustang_http_hd:parse_origin(<<"https://example.org">>)
-spec parse_origin(binary()) -> {ok, [{binary(), binary(), inet:port_number() | undefined}
	| reference()]} | {error, mustang_error:value_error()}.
parse_origin(Bin) ->
	case trim(Bin) of
		<<"null">> -> {ok, [make_ref()]};
		Trimmed -> result(origin_list(binary:split(Trimmed, <<" ">>, [global]), []), invalid_origin)
	end.

origin_list([], Acc) ->
	{ok, lists:reverse(Acc)};
origin_list([Bin | Rest], Acc) ->
	case origin(Bin) of
		{ok, Origin} -> origin_list(Rest, [Origin | Acc]);
		error -> error
	end.

origin(<<C, _/binary>> = Bin) when ?IS_ALPHA(C) ->
	case binary:split(Bin, <<"://">>) of
		[Scheme, Authority] ->
			case is_scheme(Scheme) andalso host(Authority) of
				{ok, Host, Rest} when Host =/= <<>> ->
					origin_port(lower(Scheme), port(Rest, Host));
				_ ->
					error
			end;
		_ ->
			error
	end;
origin(_) ->
	error.

origin_port(Scheme, {ok, {Host, undefined}}) -> {ok, {Scheme, Host, default_port(Scheme)}};
origin_port(Scheme, {ok, {Host, Port}}) -> {ok, {Scheme, Host, Port}};
origin_port(_, error) -> error.

%% scheme = ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ) (RFC 3986 3.1)
is_scheme(<<>>) -> true;
is_scheme(<<C, Rest/binary>>) when ?IS_ALNUM(C); C =:= $+; C =:= $-; C =:= $. -> is_scheme(Rest);
is_scheme(_) -> false.

default_port(<<"http">>) -> 80;
default_port(<<"ws">>) -> 80;
default_port(<<"https">>) -> 443;
default_port(<<"wss">>) -> 443;
default_port(_) -> undefined.

%% The error for a value that does not parse: one sentence per field, naming
%% the RFC section of its grammar (doc/internals/errors.md).
-spec bad(atom()) -> {error, mustang_error:value_error()}.
bad(Field) ->
	{error, {value_error, 400, reason(Field)}}.


-spec reason(atom()) -> atom().
reason(invalid_access_control_request_headers) ->
	'The access-control-request-headers header must be a list of field names. (RFC9110 5.6.1)';
reason(invalid_access_control_request_method) ->
	'The access-control-request-method header must be a method token. (RFC9110 9.1)';
reason(invalid_origin) ->
	'The origin header must be "null" or serialized origins separated by spaces. (RFC6454 7.1)';
reason(invalid_connection) ->
	'The connection header must be a list of tokens. (RFC9110 7.6.1)';
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
