%% The request API functions added for issue 10, through real requests over
%% HTTP/1.1 inline and process and HTTP/2 (h2c, h2), with the
%% transport-neutral client of mustang_test; the handler is
%% test/handlers/req_api_h.erl. curl checks the CORS preflight fields.
-module(req_api_SUITE).
-compile([export_all, nowarn_export_all]).

-include_lib("common_test/include/ct.hrl").
-include_lib("stdlib/include/assert.hrl").

-import(mustang_test, [doc/1]).

suite() ->
	[{timetrap, {seconds, 60}}].

all() ->
	mustang_test:common_all(all).

groups() ->
	mustang_test:common_groups(all, tests()).

tests() ->
	[
		filter_cookies,
		filter_cookies_none_left,
		parse_cookies_max_keys,
		match_cookies_repeated,
		parse_qs_max_keys,
		match_qs_repeated,
		match_qs_repeated_constraint,
		set_resp_headers_list,
		read_body_auto,
		body_length_after_unknown_length,
		body_length_given,
		parse_header_origin,
		parse_header_origin_null,
		parse_header_origin_invalid,
		parse_header_cors_preflight,
		curl_cors_preflight
	].

init_per_suite(Config) ->
	{ok, _} = application:ensure_all_started(mustang),
	[{suite, ?MODULE} | Config].

end_per_suite(_) ->
	ok.

init_per_group(Group, Config) ->
	mustang_test:init_group(Group, Config, [{'_', [{"/:what", req_api_h, []}]}], #{}).

end_per_group(_, Config) ->
	mustang_test:end_group(Config).

get(Config, Path, Headers) ->
	mustang_test:request(Config, <<"GET">>, Path, Headers, none).

answer(Config, Path, Headers) ->
	case get(Config, Path, Headers) of
		#{status := 200, body := Body} -> mustang_test:parse_term(Body);
		Resp -> ct:fail({unexpected_response, Resp})
	end.

%% Tests.

filter_cookies(Config) ->
	doc("filter_cookies/2 keeps the named cookies only, so that a cookie of another "
		"application that does not parse (a TAB in its value, RFC 6265 4.1.1) no longer fails "
		"parse_cookies."),
	Cookie = {<<"cookie">>, <<"a=1; other=has\ttab; b=2; c=3">>},
	#{status := 400} = get(Config, <<"/parse_cookies">>, [Cookie]),
	{<<"a=1; c=3">>, [{<<"a">>, <<"1">>}, {<<"c">>, <<"3">>}]}
		= answer(Config, <<"/filter_cookies">>, [Cookie]).

filter_cookies_none_left(Config) ->
	doc("filter_cookies/2 removes the cookie header when no cookie is left."),
	{undefined, []} = answer(Config, <<"/filter_cookies">>, [{<<"cookie">>, <<"x=1; y=2">>}]).

parse_cookies_max_keys(Config) ->
	doc("parse_cookies/2 with max_keys 2: 2 cookies pass, 3 get 400."),
	[{<<"a">>, <<"1">>}, {<<"b">>, <<"2">>}]
		= answer(Config, <<"/parse_cookies_max">>, [{<<"cookie">>, <<"a=1; b=2">>}]),
	#{status := 400} = get(Config, <<"/parse_cookies_max">>, [{<<"cookie">>, <<"a=1; b=2; c=3">>}]).

match_cookies_repeated(Config) ->
	doc("match_cookies/3: a cookie sent twice has the list of its values; a missing "
		"one takes its default."),
	#{a := [<<"1">>, <<"2">>], b := none}
		= answer(Config, <<"/match_cookies">>, [{<<"cookie">>, <<"a=1; a=2">>}]).

parse_qs_max_keys(Config) ->
	doc("parse_qs/2 with max_keys 2: 2 pairs pass, 3 get 400."),
	[{<<"a">>, <<"1">>}, {<<"b">>, true}] = answer(Config, <<"/parse_qs_max?a=1&b">>, []),
	#{status := 400} = get(Config, <<"/parse_qs_max?a=1&b=2&c=3">>, []).

match_qs_repeated(Config) ->
	doc("match_qs/3: a key given more than once has the list of its values, in order "
		"(Cowboy's guide: key=1&key=2 gives a list)."),
	#{k := [<<"1">>, <<"2">>, true], x := 3, y := none}
		= answer(Config, <<"/match_qs?k=1&x=3&k=2&k">>, []).

match_qs_repeated_constraint(Config) ->
	doc("A constraint gets the whole list: int refuses a repeated key with 400, as "
		"Cowboy's guide says constraints can ensure one value was sent."),
	#{k := 5} = answer(Config, <<"/match_qs_int?k=5">>, []),
	#{status := 400} = get(Config, <<"/match_qs_int?k=5&k=6">>, []).

set_resp_headers_list(Config) ->
	doc("set_resp_headers/2 takes a list; a later value of a name wins."),
	#{status := 200, headers := Headers} = get(Config, <<"/set_resp_headers">>, []),
	{_, <<"3">>} = lists:keyfind(<<"x-a">>, 1, Headers),
	{_, <<"2">>} = lists:keyfind(<<"x-b">>, 1, Headers).

read_body_auto(Config) ->
	doc("read_body with length auto returns as soon as some data arrived: the first "
		"5 bytes of a 10-byte body come back while the rest is never sent (a default "
		"read would wait for its 15 s period, longer than the client's 5 s)."),
	Conn = mustang_test:open(Config),
	try
		Ref = mustang_test:send_request(Conn, <<"POST">>, <<"/read_body_auto">>,
			[{<<"content-length">>, <<"10">>}], nofin),
		ok = mustang_test:send_body(Conn, Ref, nofin, <<"hello">>),
		#{status := 200, body := <<"<<\"hello\">>">>} = mustang_test:await(Conn, Ref, 5000)
	after
		mustang_test:close(Conn)
	end.

body_length_after_unknown_length(Config) ->
	doc("A body of unknown length (HTTP/1.1 chunked, HTTP/2 without content-length) "
		"read to its end sets body_length and content-length and drops "
		"transfer-encoding in the Req read_body returns."),
	Parts = [binary:copy(<<"x">>, 700), binary:copy(<<"y">>, 900), <<"z">>],
	{{undefined, undefined}, 1601, 1601, <<"1601">>, undefined}
		= mustang_test:parse_term(maps:get(body, mustang_test:request(Config, <<"POST">>,
			<<"/body_length">>, [], {parts, Parts}))).

body_length_given(Config) ->
	doc("With content-length, body_length is known from the start and unchanged."),
	{{1601, <<"1601">>}, 1601, 1601, <<"1601">>, undefined}
		= mustang_test:parse_term(maps:get(body, mustang_test:request(Config, <<"POST">>,
			<<"/body_length">>, [], binary:copy(<<"x">>, 1601)))).

parse_header_origin(Config) ->
	doc("parse_header(<<\"origin\">>) gives {Scheme, Host, Port} per origin (RFC 6454 7.1)."),
	[{<<"https">>, <<"example.com">>, 443}, {<<"http">>, <<"a.b">>, 8080}]
		= answer(Config, <<"/parse_header?name=origin">>,
			[{<<"origin">>, <<"https://Example.com http://a.b:8080">>}]).

parse_header_origin_null(Config) ->
	doc("An opaque origin (\"null\") gives a reference, as in Cowboy."),
	null_origin = answer(Config, <<"/parse_header?name=origin">>, [{<<"origin">>, <<"null">>}]).

parse_header_origin_invalid(Config) ->
	doc("An invalid origin gets 400."),
	#{status := 400} = get(Config, <<"/parse_header?name=origin">>,
		[{<<"origin">>, <<"example.com">>}]).

parse_header_cors_preflight(Config) ->
	doc("access-control-request-method (a token) and access-control-request-headers "
		"(lowercased field names) parse; invalid values get 400."),
	<<"PUT">> = answer(Config, <<"/parse_header?name=access-control-request-method">>,
		[{<<"access-control-request-method">>, <<"PUT">>}]),
	[<<"content-type">>, <<"x-token">>]
		= answer(Config, <<"/parse_header?name=access-control-request-headers">>,
			[{<<"access-control-request-headers">>, <<"Content-Type, X-Token">>}]),
	#{status := 400} = get(Config, <<"/parse_header?name=access-control-request-method">>,
		[{<<"access-control-request-method">>, <<"PUT GET">>}]),
	#{status := 400} = get(Config, <<"/parse_header?name=access-control-request-headers">>,
		[{<<"access-control-request-headers">>, <<"a b">>}]).

curl_cors_preflight(Config) ->
	doc("curl sends a CORS preflight's fields as a browser does; they parse."),
	{0, Out} = mustang_test:run(os:find_executable("curl"), ["-sS", "-X", "OPTIONS",
		"-H", "Origin: https://app.example", "-H", "Access-Control-Request-Method: DELETE",
		"-H", "Access-Control-Request-Headers: X-Requested-With"
		| mustang_test:curl_args(Config, "/parse_header?name=access-control-request-headers")],
		30000),
	[<<"x-requested-with">>] = mustang_test:parse_term(Out).
