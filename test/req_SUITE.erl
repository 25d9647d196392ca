%% The mustang_req API, through real requests: tiny handlers (test/handlers)
%% call one function and send back what it returned, printed with ~0p, or
%% build the response with it.
%%
%% Every test of tests() means the same over any transport and runs in the
%% four groups of mustang_test: inline and process (HTTP/1.1, handler in the
%% connection process or in a process of its own), h2c (HTTP/2 by prior
%% knowledge) and h2 (HTTP/2 over TLS), through the transport-neutral client
%% of mustang_test. Where the right answer differs by transport (version,
%% scheme, default port, reason phrases, chunked framing, what follows a
%% refused request), the test asserts each transport's answer. The tests
%% of http1_tests() are about HTTP/1.1 itself and run in inline and process
%% only; each says why there.
-module(req_SUITE).
-compile([export_all, nowarn_export_all]).

-include_lib("common_test/include/ct.hrl").
-include_lib("stdlib/include/assert.hrl").

-import(mustang_test, [open/1, open/2, send_request/5, send_body/4, await/2, await/3, close/1,
	header/2, headers/2, transport/1, doc/1]).

suite() ->
	[{timetrap, {seconds, 60}}].

all() ->
	mustang_test:common_all(all).

groups() ->
	mustang_test:common_groups(all, tests(), http1_tests()).

tests() ->
	[
		%% Request.
		method,
		version,
		scheme,
		host,
		port_from_host,
		port_default,
		path,
		qs,
		uri,
		uri_variants,
		uri_asterisk_form,
		header,
		headers,
		parse_qs,
		parse_qs_malformed,
		match_qs,
		match_qs_default,
		match_qs_constraint_failed,
		match_qs_missing,
		parse_header,
		parse_header_absent,
		parse_header_malformed,
		parse_cookies,
		parse_cookies_tab_in_value,
		match_cookies,
		match_cookies_constraint_failed,
		binding,
		bindings_constraint,
		bindings_constraint_failed,
		bindings_host,
		host_info,
		path_info,
		peer,
		sock,
		cert,
		%% Request body.
		has_body_none,
		has_body_content_length,
		has_body_unknown_length,
		read_body,
		read_body_length_10mb,
		read_body_period,
		expect_continue_on_first_read,
		expect_continue_once_read_twice,
		expect_continue_once_after_inform,
		read_urlencoded_body,
		read_urlencoded_body_max_keys,
		read_urlencoded_body_too_large,
		read_urlencoded_body_too_large_partial,
		%% Response.
		reply_2,
		reply_3,
		reply_4,
		reply_binary_status,
		resp_headers,
		set_resp_body_iodata,
		set_resp_body_sendfile,
		set_resp_body_none,
		set_resp_cookie_all_attributes,
		set_resp_cookie_two,
		set_resp_cookie_max_age,
		inform,
		stream_reply,
		stream_trailers,
		stream_trailers_without_te,
		stream_events,
		stream_body_sendfile,
		%% Routing and misuse.
		not_found,
		bad_host,
		req_from_other_process,
		req_from_other_process_body,
		req_from_other_process_body_split,
		req_from_other_process_interleaved,
		set_env
	].

%% HTTP/1.1 only: all three are about HTTP/1.0 clients (the request line's
%% version and what a 1.0 client can receive), which do not exist over
%% HTTP/2.
http1_tests() ->
	[
		version_http10,
		inform_http10,
		stream_reply_http10
	].

routes(Config) ->
	File = filename:join(?config(data_dir, Config), "sendfile.txt"),
	Paths = [
		{"/", hello_h, []},
		{"/echo/:key", echo_h, []},
		{"/echo_body", mustang_demo_echo_h, []},
		{"/binding/:a/[:b]", echo_h, binding},
		{"/int/:n", [{n, int}], echo_h, bindings},
		{"/path_info/[...]", echo_h, path_info},
		{"/read_body/length", read_body_h, #{length => 1000000}},
		{"/read_body/period", read_body_h, period},
		{"/read_body/one", read_body_h, #{length => 1}},
		{"/continue/inform", inform_continue_h, []},
		{"*", echo_h, asterisk},
		{"/urlencoded", urlencoded_h, #{}},
		{"/urlencoded/max_keys", urlencoded_h, #{max_keys => 2}},
		{"/urlencoded/length", urlencoded_h, #{length => 100}},
		{"/reply2", reply_h, reply2},
		{"/reply3", reply_h, reply3},
		{"/reply4", reply_h, reply4},
		{"/reply_binary_status", reply_h, binary_status},
		{"/resp_headers", resp_headers_h, []},
		{"/resp_body/iodata", resp_body_h, iodata},
		{"/resp_body/sendfile", resp_body_h, {sendfile, 3, 7, File}},
		{"/resp_body/empty", resp_body_h, empty},
		{"/cookies/all", cookies_h, all_attributes},
		{"/cookies/two", cookies_h, two},
		{"/cookies/max_age", cookies_h, max_age},
		{"/inform", inform_h, []},
		{"/stream/body", stream_h, body},
		{"/stream/trailers", stream_h, trailers},
		{"/stream/events", stream_h, events},
		{"/stream/sendfile", stream_h, {sendfile, 3, 7, File}},
		{"/other_process", other_process_h, []},
		{"/other_process_body", other_process_body_h, []},
		{"/other_process_body_split", other_process_body_split_h, []},
		{"/other_process_interleaved", other_process_interleaved_h, []}
	],
	[
		{"[...].hostinfo.test", [{"/host_info", echo_h, host_info}]},
		{":sub.bind.test", [{"/bindings", echo_h, bindings}]},
		{"localhost", Paths},
		{"127.0.0.1", Paths}
	].

init_per_suite(Config) ->
	{ok, _} = application:ensure_all_started(mustang),
	[{suite, ?MODULE} | Config].

end_per_suite(_) ->
	ok.

init_per_group(Group, Config) ->
	mustang_test:init_group(Group, Config, routes(Config), #{}).

end_per_group(_, Config) ->
	mustang_test:end_group(Config).

%% Helpers.

port(Config) -> mustang_test:port(Config).

http1(Config) -> transport(Config) =:= http1.

req(Config, Method, Path) ->
	req(Config, Method, Path, [], none).

req(Config, Method, Path, Headers) ->
	req(Config, Method, Path, Headers, none).

req(Config, Method, Path, Headers, Body) ->
	mustang_test:request(Config, Method, Path, Headers, Body).

get(Config, Path) ->
	req(Config, "GET", Path).

%% The term a handler printed; the response must be a 200.
echo(Config, Method, Path, Headers, Body) ->
	echoed(req(Config, Method, Path, Headers, Body)).

echoed(Resp) ->
	?assertMatch(#{status := 200}, Resp),
	#{body := Body} = Resp,
	mustang_test:parse_term(Body).

get_echo(Config, Path) ->
	get_echo(Config, Path, []).

get_echo(Config, Path, Headers) ->
	echo(Config, "GET", Path, Headers, none).

%% The status, and over HTTP/1.1 the reason phrase (HTTP/2 has none,
%% RFC 9113 8.3.2).
assert_status(Config, Status, Reason, Resp) ->
	?assertMatch(#{status := Status}, Resp),
	case http1(Config) of
		true -> ?assertMatch(#{reason := Reason}, Resp);
		false -> ?assertEqual(false, maps:is_key(reason, Resp))
	end.

%% A request the handler refuses through mustang_req gets Status with an
%% empty body. Over HTTP/1.1 the connection then closes (the rest of the
%% request cannot be trusted); over HTTP/2 only the stream ends, and the
%% connection goes on serving requests (RFC 9113 5.4.2).
assert_request_error(Config, Method, Path, Headers, Body, Status) ->
	Conn = open(Config),
	assert_request_error(Config, Conn, send_request(Conn, Method, Path, Headers, Body), Status).

assert_request_error(Config, Conn, Ref, Status) ->
	Resp = await(Conn, Ref),
	assert_status(Config, Status, reason(Status), Resp),
	?assertMatch(#{body := <<>>}, Resp),
	case http1(Config) of
		true ->
			?assertEqual(<<"close">>, header(<<"connection">>, Resp)),
			?assertEqual(ok, mustang_test:wait_closed(maps:get(socket, Conn), 2000));
		false ->
			?assertMatch(#{status := 200, body := <<"Hello world!">>},
				await(Conn, send_request(Conn, "GET", "/", [], none)))
	end,
	close(Conn).

reason(400) -> <<"Bad Request">>;
reason(413) -> <<"Content Too Large">>.

%% The bytes after the response head (HTTP/1.1).
raw_body(#{raw := Raw}) ->
	[_, Body] = binary:split(Raw, <<"\r\n\r\n">>),
	Body.

%% Request.

method(Config) ->
	doc("method/1 returns the request method, case preserved. (RFC 9110 9.1)"),
	?assertEqual(<<"GET">>, get_echo(Config, "/echo/method")),
	?assertEqual(<<"PATCH">>, echo(Config, "PATCH", "/echo/method", [], none)),
	?assertEqual(<<"custom">>, echo(Config, "custom", "/echo/method", [], none)).

version(Config) ->
	doc("version/1 returns 'HTTP/1.1' over HTTP/1.1 and 'HTTP/2' over HTTP/2. "
		"(RFC 9112 2.3, RFC 9113 8.3)"),
	Expected = case http1(Config) of
		true -> 'HTTP/1.1';
		false -> 'HTTP/2'
	end,
	?assertEqual(Expected, get_echo(Config, "/echo/version")).

version_http10(Config) ->
	doc("version/1 returns 'HTTP/1.0' for an HTTP/1.0 request line. (RFC 9112 2.3)"),
	?assertEqual('HTTP/1.0', echoed(mustang_test:request(port(Config),
		<<"GET /echo/version HTTP/1.0\r\nhost: localhost\r\n\r\n">>))).

scheme(Config) ->
	doc("scheme/1 is <<\"http\">> on a clear listener, <<\"https\">> over TLS. "
		"(RFC 9110 4.2)"),
	?assertEqual(mustang_test:scheme(Config), get_echo(Config, "/echo/scheme")).

host(Config) ->
	doc("host/1 is the host of the Host header (HTTP/2: :authority), lowercased, "
		"without the port. (RFC 9110 7.2, RFC 9113 8.3.1)"),
	?assertEqual(<<"localhost">>, get_echo(Config, "/echo/host", [{"host", "LocalHost:8080"}])).

port_from_host(Config) ->
	doc("port/1 is the port of the Host header (HTTP/2: :authority). (RFC 9110 7.2)"),
	?assertEqual(8080, get_echo(Config, "/echo/port", [{"host", "localhost:8080"}])).

port_default(Config) ->
	doc("port/1 is the scheme's default port (80 for http, 443 for https) when the "
		"Host header has no port. (RFC 9110 4.2.1, 4.2.2)"),
	?assertEqual(mustang_test:default_port(Config), get_echo(Config, "/echo/port")).

path(Config) ->
	doc("path/1 is the path of the target, without the query. (RFC 9112 3.2.1)"),
	?assertEqual(<<"/echo/path">>, get_echo(Config, "/echo/path?a=b")).

qs(Config) ->
	doc("qs/1 is the raw query string, without the \"?\". (RFC 9112 3.2.1)"),
	?assertEqual(<<"a=b&c&d=%20">>, get_echo(Config, "/echo/qs?a=b&c&d=%20")).

uri(Config) ->
	doc("uri/1 rebuilds the request URI from scheme, host, port, path and query. "
		"(RFC 9112 3.3)"),
	?assertEqual(<<(mustang_test:scheme(Config))/binary, "://localhost:8080/echo/uri?x=1">>,
		get_echo(Config, "/echo/uri?x=1", [{"host", "localhost:8080"}])).

uri_variants(Config) ->
	doc("uri/2 replaces parts of the URI or, with undefined, leaves them out, as "
		"cowboy_req:uri/2 does; a port is left out when it is the scheme's default. "
		"(RFC 3986 5.3)"),
	Scheme = mustang_test:scheme(Config),
	%% Port 80 is only the default of http.
	Port80 = case Scheme of
		<<"http">> -> <<"http://localhost/echo/uri_variants?a=b">>;
		<<"https">> -> <<"https://localhost:80/echo/uri_variants?a=b">>
	end,
	?assertEqual([
		<<Scheme/binary, "://localhost:8080/echo/uri_variants?a=b">>,
		<<"/echo/uri_variants?a=b">>,
		<<"//localhost:8080/echo/uri_variants?a=b">>,
		<<Scheme/binary, "://localhost:8080/echo/uri_variants">>,
		<<Scheme/binary, "://localhost:8080">>,
		Port80,
		<<"https://localhost/echo/uri_variants?a=b">>,
		<<Scheme/binary, "://localhost:8080/echo/uri_variants?a=b#frag">>,
		<<Scheme/binary, "://example.org:8080/other?x=y">>
	], get_echo(Config, "/echo/uri_variants?a=b", [{"host", "localhost:8080"}])).

uri_asterisk_form(Config) ->
	doc("An asterisk-form request (OPTIONS *) has path <<\"*\">>, the connection's "
		"scheme, and a URI without path: uri/1 gives scheme://host; uri/2 with a path "
		"uses it. (RFC 9112 3.2.4, 3.3; RFC 9113 8.3.1)"),
	Scheme = mustang_test:scheme(Config),
	?assertEqual({Scheme, <<"*">>, <<Scheme/binary, "://localhost">>,
		<<Scheme/binary, "://localhost/x">>}, echo(Config, "OPTIONS", "*", [], none)).

header(Config) ->
	doc("header/2 returns a header value or undefined; header/3 returns the default "
		"when the header is absent. (RFC 9110 5)"),
	%% HTTP/1.1 strips the whitespace around a field value (RFC 9112 5.1);
	%% HTTP/2 forbids it there (RFC 9113 8.2.1), so it sends the bare value.
	Value = case http1(Config) of
		true -> "  value  ";
		false -> "value"
	end,
	?assertEqual({<<"value">>, undefined, <<"default">>},
		get_echo(Config, "/echo/header", [{"X-Test", Value}])).

headers(Config) ->
	doc("headers/1 has lowercase names; repeated fields are joined with \", \", "
		"cookies with \"; \"; over HTTP/2 the host header comes from :authority, as "
		"mustang_http2_headers documents. (RFC 9110 5.3, RFC 6265 5.4, RFC 9113 8.2.3, "
		"8.3.1)"),
	?assertEqual(#{
		<<"host">> => <<"localhost">>,
		<<"x-a">> => <<"1, 2">>,
		<<"cookie">> => <<"a=1; b=2">>
	}, get_echo(Config, "/echo/headers", [{"Host", "localhost"}, {"X-A", "1"}, {"x-a", "2"},
		{"Cookie", "a=1"}, {"cookie", "b=2"}])).

parse_qs(Config) ->
	doc("parse_qs/1 decodes the query string into pairs, in order, duplicates kept, "
		"true for keys without a value. (URL Standard 5.1)"),
	?assertEqual([{<<"a">>, <<"1">>}, {<<"b">>, true}, {<<"c">>, <<" x+">>}, {<<"a">>, <<"2">>},
			{<<"d">>, <<"e f">>}],
		get_echo(Config, "/echo/parse_qs?a=1&b&c=%20x%2B&a=2&d=e+f")).

parse_qs_malformed(Config) ->
	doc("parse_qs/1 on a malformed query string ends the request with 400."),
	assert_request_error(Config, "GET", "/echo/parse_qs?a=%zz", [], none, 400).

match_qs(Config) ->
	doc("match_qs/2 returns the fields as a map, with constraints applied (int)."),
	?assertEqual(#{n => 42, opt => <<"given">>}, get_echo(Config, "/echo/match_qs?n=42&opt=given&x=y")).

match_qs_default(Config) ->
	doc("match_qs/2 uses a field's default when it is absent."),
	?assertEqual(#{n => 7, opt => <<"default">>}, get_echo(Config, "/echo/match_qs?n=7")).

match_qs_constraint_failed(Config) ->
	doc("match_qs/2 with a value failing its constraint (int) ends the request with 400."),
	assert_request_error(Config, "GET", "/echo/match_qs?n=abc", [], none, 400).

match_qs_missing(Config) ->
	doc("match_qs/2 with a required field missing ends the request with 400."),
	assert_request_error(Config, "GET", "/echo/match_qs?opt=x", [], none, 400).

parse_header(Config) ->
	doc("parse_header/2,3 parse content-type, content-length, accept, accept-encoding, "
		"connection (HTTP/1.1), cookie and expect. (RFC 9110 8.3, 8.6, 12.5.1, 12.5.3, "
		"7.6.1, 10.1.1, RFC 6265 5.4)"),
	Cases = [
		{"content-type", "text/html; charset=UTF-8",
			{<<"text">>, <<"html">>, [{<<"charset">>, <<"utf-8">>}]}},
		{"content-length", "5", 5},
		{"accept", "text/html, application/json;q=0.5",
			[{{<<"text">>, <<"html">>, []}, 1000, []}, {{<<"application">>, <<"json">>, []}, 500, []}]},
		{"accept-encoding", "gzip, deflate;q=0.3", [{<<"gzip">>, 1000}, {<<"deflate">>, 300}]},
		{"cookie", "a=1; b=\"2\"", [{<<"a">>, <<"1">>}, {<<"b">>, <<"2">>}]},
		{"expect", "100-continue", continue}
	] ++ case http1(Config) of
		%% A connection-specific field makes an HTTP/2 request malformed
		%% (RFC 9113 8.2.2).
		true -> [{"connection", "Keep-Alive, Upgrade", [<<"keep-alive">>, <<"upgrade">>]}];
		false -> []
	end,
	lists:foreach(fun({Name, Value, Expected}) ->
		%% A body goes with content-length and expect; the handler does not
		%% read it, and with expect it is never sent.
		{Headers, Body} = case Name of
			"content-length" -> {[{Name, Value}], <<"hello">>};
			"expect" -> {[{"content-length", "5"}, {Name, Value}], nofin};
			_ -> {[{Name, Value}], <<"hello">>}
		end,
		?assertEqual({Name, {Expected, Expected}}, {Name, echo(Config, "POST",
			["/echo/parse_header?", Name], Headers, Body)})
	end, Cases).

parse_header_absent(Config) ->
	doc("parse_header/2 on an absent header gives 0 for content-length, [] for cookie, "
		"undefined otherwise; parse_header/3 gives its default."),
	?assertEqual({0, no_such_header_default}, get_echo(Config, "/echo/parse_header?content-length")),
	?assertEqual({[], no_such_header_default}, get_echo(Config, "/echo/parse_header?cookie")),
	?assertEqual({undefined, no_such_header_default}, get_echo(Config, "/echo/parse_header?accept")).

parse_header_malformed(Config) ->
	doc("parse_header/2 on a malformed header value ends the request with 400."),
	assert_request_error(Config, "GET", "/echo/parse_header?content-type",
		[{"content-type", "not a media type"}], none, 400).

parse_cookies(Config) ->
	doc("parse_cookies/1 returns the cookie pairs of every Cookie header, in order. "
		"(RFC 6265 5.4, RFC 9113 8.2.3)"),
	?assertEqual([{<<"a">>, <<"1">>}, {<<"b">>, <<"2">>}, {<<"c">>, <<"3">>}],
		get_echo(Config, "/echo/parse_cookies", [{"cookie", "a=1; b=\"2\""}, {"cookie", "c=3"}])).

parse_cookies_tab_in_value(Config) ->
	doc("A TAB inside a cookie value is not a cookie-octet: parse_cookies/1 ends the "
		"request with 400. (RFC 6265 4.1.1, 4.2.1)"),
	assert_request_error(Config, "GET", "/echo/parse_cookies", [{"cookie", "a=b\tc"}], none, 400).

match_cookies(Config) ->
	doc("match_cookies/2 returns the fields as a map, constraints and defaults applied."),
	?assertEqual(#{id => 42, name => <<"anon">>},
		get_echo(Config, "/echo/match_cookies", [{"cookie", "id=42; other=x"}])).

match_cookies_constraint_failed(Config) ->
	doc("match_cookies/2 with a value failing its constraint ends the request with 400."),
	assert_request_error(Config, "GET", "/echo/match_cookies", [{"cookie", "id=x"}], none, 400).

binding(Config) ->
	doc("binding/2 returns a route binding or undefined; binding/3 the default."),
	?assertEqual({<<"one">>, <<"two">>, undefined, default}, get_echo(Config, "/binding/one/two")),
	%% An optional segment left out is not bound.
	?assertEqual({<<"one">>, undefined, undefined, default}, get_echo(Config, "/binding/one")).

bindings_constraint(Config) ->
	doc("bindings/1 returns the bindings, with route constraints applied (int)."),
	?assertEqual(#{n => 42}, get_echo(Config, "/int/42")).

bindings_constraint_failed(Config) ->
	doc("A binding failing its route constraint makes the route not match: 404. "
		"(RFC 9110 15.5.5)"),
	Resp = get(Config, "/int/abc"),
	assert_status(Config, 404, <<"Not Found">>, Resp),
	?assertMatch(#{body := <<>>}, Resp).

bindings_host(Config) ->
	doc("bindings/1 includes the bindings of the host pattern."),
	?assertEqual(#{sub => <<"x">>}, get_echo(Config, "/bindings", [{"host", "x.bind.test"}])).

host_info(Config) ->
	doc("host_info/1 returns the host segments matched by [...], undefined without it."),
	?assertEqual([<<"a">>, <<"b">>], get_echo(Config, "/host_info", [{"host", "a.b.hostinfo.test"}])),
	?assertEqual(undefined, get_echo(Config, "/echo/host_info")).

path_info(Config) ->
	doc("path_info/1 returns the path segments matched by [...], undefined without it."),
	?assertEqual([<<"a">>, <<"b c">>], get_echo(Config, "/path_info/a/b%20c")),
	?assertEqual([], get_echo(Config, "/path_info")),
	?assertEqual(undefined, get_echo(Config, "/echo/path_info")).

peer(Config) ->
	doc("peer/1 is the client's address and port."),
	Conn = open(Config),
	{ok, {_, ClientPort}} = mustang_test:sockname(Conn),
	Resp = await(Conn, send_request(Conn, "GET", "/echo/peer", [], none)),
	?assertEqual({{127, 0, 0, 1}, ClientPort}, echoed(Resp)),
	close(Conn).

sock(Config) ->
	doc("sock/1 is the server's address and port of the connection."),
	?assertEqual({{127, 0, 0, 1}, port(Config)}, get_echo(Config, "/echo/sock")).

cert(Config) ->
	doc("cert/1 is undefined when the client sent no certificate (clear connection, or "
		"TLS without a client certificate)."),
	?assertEqual(undefined, get_echo(Config, "/echo/cert")).

%% Request body.

has_body_none(Config) ->
	doc("has_body/1 is false and body_length/1 0 without a body (also for "
		"content-length: 0). (RFC 9112 6.3, RFC 9113 8.1)"),
	?assertEqual({false, 0}, get_echo(Config, "/echo/has_body")),
	?assertEqual({false, 0}, echo(Config, "POST", "/echo/has_body", [], <<>>)).

has_body_content_length(Config) ->
	doc("has_body/1 is true and body_length/1 the content-length. (RFC 9112 6.3)"),
	?assertEqual({true, 5}, echo(Config, "POST", "/echo/has_body", [], <<"hello">>)).

has_body_unknown_length(Config) ->
	doc("has_body/1 is true and body_length/1 undefined for a body without "
		"content-length: chunked over HTTP/1.1, DATA frames over HTTP/2. "
		"(RFC 9112 6.3, RFC 9113 8.1)"),
	?assertEqual({true, undefined}, echo(Config, "POST", "/echo/has_body", [],
		{parts, [<<"hello">>]})).

read_body(Config) ->
	doc("read_body/1 returns the body bytes exactly (100 kB: over HTTP/2 more than the "
		"initial flow-control window)."),
	Body = rand:bytes(100000),
	Resp = req(Config, "POST", "/echo_body", [{"content-type", "application/x-test"}], Body),
	?assertMatch(#{status := 200}, Resp),
	?assertEqual(Body, maps:get(body, Resp)),
	?assertEqual(<<"application/x-test">>, header(<<"content-type">>, Resp)).

read_body_length_10mb(Config) ->
	doc("read_body/2 with length 1000000 reads a 10 MB body in several calls (at least 4); "
		"the total is exact."),
	Size = 10 * 1024 * 1024,
	Resp = mustang_test:request(Config, "POST", "/read_body/length", [],
		binary:copy(<<"0123456789abcdef">>, Size div 16), #{timeout => 20000}),
	?assertMatch(#{status := 200}, Resp),
	[Total, Calls] = binary:split(maps:get(body, Resp), <<" ">>),
	?assertEqual(Size, binary_to_integer(Total)),
	%% Each call returns at least `length` bytes and at most what was
	%% buffered with them: in process mode up to about 1 MB waits in the
	%% connection between calls (it stops reading above that), so a call
	%% returns at most about 2.3 MB.
	?assert(binary_to_integer(Calls) >= 4, {calls, Calls}).

read_body_period(Config) ->
	doc("read_body/2 returns what arrived when its period (200 ms) ends: {more, Data}; "
		"the next call returns the rest."),
	Conn = open(Config),
	Ref = send_request(Conn, "POST", "/read_body/period", [{"content-length", "11"}], nofin),
	ok = send_body(Conn, Ref, nofin, <<"hello">>),
	%% Nothing comes back before the rest of the body is sent.
	?assertEqual({error, timeout}, await(Conn, Ref, 500)),
	ok = send_body(Conn, Ref, fin, <<" world">>),
	?assertMatch(#{status := 200, body := <<"more:hello|ok: world">>}, await(Conn, Ref)),
	close(Conn).

expect_continue_on_first_read(Config) ->
	doc("A request with Expect: 100-continue gets one 100 Continue when the handler "
		"first reads the body, then the final response. (RFC 9110 10.1.1)"),
	Resp = req(Config, "POST", "/echo/read_body", [{"expect", "100-continue"}], <<"hello">>),
	?assertEqual(<<"hello">>, echoed(Resp)),
	?assertMatch([#{status := 100}], maps:get(informs, Resp)).

expect_continue_once_read_twice(Config) ->
	doc("A handler that reads the body in several calls makes one 100 Continue, not one "
		"per read. (RFC 9110 10.1.1, 15.2.1)"),
	Resp = req(Config, "POST", "/read_body/one", [{"expect", "100-continue"}], <<"hello">>),
	?assertMatch(#{status := 200, body := <<"5 ", _/bits>>}, Resp),
	?assertMatch([#{status := 100}], maps:get(informs, Resp)).

expect_continue_once_after_inform(Config) ->
	doc("A handler that sends 100 Continue itself with inform/2 and then reads the body "
		"makes one 100 Continue, not two. (RFC 9110 10.1.1, 15.2.1)"),
	Resp = req(Config, "POST", "/continue/inform", [{"expect", "100-continue"}], <<"hello">>),
	?assertMatch(#{status := 200, body := <<"hello">>}, Resp),
	?assertMatch([#{status := 100}], maps:get(informs, Resp)).

read_urlencoded_body(Config) ->
	doc("read_urlencoded_body/1 decodes an application/x-www-form-urlencoded body. "
		"(URL Standard 5.1)"),
	?assertEqual([{<<"a">>, <<"1">>}, {<<"b">>, <<"  ">>}, {<<"c">>, true}, {<<"a">>, <<"2">>}],
		echo(Config, "POST", "/urlencoded", [{"content-type", "application/x-www-form-urlencoded"}],
			<<"a=1&b=%20+&c&a=2">>)).

read_urlencoded_body_max_keys(Config) ->
	doc("read_urlencoded_body/2 with more keys than max_keys ends the request with 400."),
	assert_request_error(Config, "POST", "/urlencoded/max_keys", [], <<"a=1&b=2&c=3">>, 400),
	?assertEqual([{<<"a">>, <<"1">>}, {<<"b">>, <<"2">>}],
		echo(Config, "POST", "/urlencoded/max_keys", [], <<"a=1&b=2">>)).

read_urlencoded_body_too_large(Config) ->
	doc("read_urlencoded_body/2 with a body larger than its length option (here 202 "
		"bytes for 100, all sent with the head) ends the request with 413, as "
		"mustang_req documents. (RFC 9110 15.5.14)"),
	assert_request_error(Config, "POST", "/urlencoded/length", [],
		["a=", binary:copy(<<"b">>, 200)], 413).

read_urlencoded_body_too_large_partial(Config) ->
	doc("read_urlencoded_body/2 ends the request with 413 as soon as more than its "
		"length option arrived, without waiting for the rest. (RFC 9110 15.5.14)"),
	Conn = open(Config),
	Ref = send_request(Conn, "POST", "/urlencoded/length", [{"content-length", "1000"}], nofin),
	ok = send_body(Conn, Ref, nofin, ["a=", binary:copy(<<"b">>, 200)]),
	assert_request_error(Config, Conn, Ref, 413).

%% Response.

reply_2(Config) ->
	doc("reply/2 sends the status with an empty body and content-length: 0."),
	Resp = get(Config, "/reply2"),
	assert_status(Config, 202, <<"Accepted">>, Resp),
	?assertMatch(#{body := <<>>}, Resp),
	?assertEqual(<<"0">>, header(<<"content-length">>, Resp)).

reply_3(Config) ->
	doc("reply/3 sends the status and headers with an empty body."),
	Resp = get(Config, "/reply3"),
	assert_status(Config, 403, <<"Forbidden">>, Resp),
	?assertMatch(#{body := <<>>}, Resp),
	?assertEqual(<<"3">>, header(<<"x-reply">>, Resp)),
	?assertEqual(<<"0">>, header(<<"content-length">>, Resp)).

reply_4(Config) ->
	doc("reply/4 sends status, headers and body, with the content-length of the body."),
	Resp = get(Config, "/reply4"),
	assert_status(Config, 201, <<"Created">>, Resp),
	?assertMatch(#{body := <<"created">>}, Resp),
	?assertEqual(<<"4">>, header(<<"x-reply">>, Resp)),
	?assertEqual(<<"text/plain">>, header(<<"content-type">>, Resp)),
	?assertEqual(<<"7">>, header(<<"content-length">>, Resp)),
	?assertNotEqual(undefined, header(<<"date">>, Resp)).

reply_binary_status(Config) ->
	doc("reply/4 with a binary status sends it as the status line over HTTP/1.1; over "
		"HTTP/2, which has no reason phrase, :status is its code. (RFC 9112 4, "
		"RFC 9113 8.3.2)"),
	Resp = get(Config, "/reply_binary_status"),
	?assertMatch(#{status := 299, body := <<"custom">>}, Resp),
	case http1(Config) of
		true -> ?assertMatch(#{raw := <<"HTTP/1.1 299 Custom Reason\r\n", _/bits>>}, Resp);
		false -> ok
	end.

resp_headers(Config) ->
	doc("set_resp_header/3, set_resp_headers/2, has_resp_header/2, resp_header/2,3, "
		"resp_headers/1 and delete_resp_header/2; reply headers override them."),
	Resp = get(Config, "/resp_headers"),
	?assertEqual({{true, false}, {<<"2">>, undefined, default},
		#{<<"x-one">> => <<"one">>, <<"x-two">> => <<"2">>}}, echoed(Resp)),
	?assertEqual([<<"one">>], headers(<<"x-one">>, Resp)),
	?assertEqual([<<"two">>], headers(<<"x-two">>, Resp)),
	?assertEqual([], headers(<<"x-three">>, Resp)).

set_resp_body_iodata(Config) ->
	doc("set_resp_body/2 with iodata is sent by reply/2; has_resp_body/1 is true."),
	Resp = get(Config, "/resp_body/iodata"),
	?assertMatch(#{status := 200, body := <<"iodata">>}, Resp),
	?assertEqual(<<"6">>, header(<<"content-length">>, Resp)),
	?assertEqual(<<"true">>, header(<<"x-has-resp-body">>, Resp)).

set_resp_body_sendfile(Config) ->
	doc("set_resp_body/2 with {sendfile, 3, 7, Path} sends exactly bytes 3 to 9 of the "
		"file; has_resp_body/1 is true."),
	Conn = open(Config),
	%% A second request on the same connection: its response comes intact,
	%% so nothing more than the 7 bytes was sent.
	Ref1 = send_request(Conn, "GET", "/resp_body/sendfile", [], none),
	Ref2 = send_request(Conn, "GET", "/", [], none),
	Resp = await(Conn, Ref1),
	?assertMatch(#{status := 200, body := <<"3456789">>}, Resp),
	?assertEqual(<<"7">>, header(<<"content-length">>, Resp)),
	?assertEqual(<<"true">>, header(<<"x-has-resp-body">>, Resp)),
	?assertMatch(#{status := 200, body := <<"Hello world!">>}, await(Conn, Ref2)),
	close(Conn).

set_resp_body_none(Config) ->
	doc("Without set_resp_body/2, has_resp_body/1 is false and reply/2 sends no body."),
	Resp = get(Config, "/resp_body/empty"),
	?assertMatch(#{status := 200, body := <<>>}, Resp),
	?assertEqual(<<"0">>, header(<<"content-length">>, Resp)),
	?assertEqual(<<"false">>, header(<<"x-has-resp-body">>, Resp)).

set_resp_cookie_all_attributes(Config) ->
	doc("set_resp_cookie/4 with every attribute gives one exact Set-Cookie line. "
		"(RFC 6265 4.1)"),
	Resp = get(Config, "/cookies/all"),
	?assertEqual([<<"session=abc123; Expires=Thu, 01 Jan 1970 00:00:00 GMT; Max-Age=0; "
		"Domain=example.org; Path=/app; Secure; HttpOnly; SameSite=Strict">>],
		headers(<<"set-cookie">>, Resp)).

set_resp_cookie_two(Config) ->
	doc("Two cookies give two Set-Cookie fields. (RFC 6265 3, RFC 9110 5.3)"),
	Resp = get(Config, "/cookies/two"),
	?assertEqual([<<"a=1">>, <<"b=2; Path=/; SameSite=Lax">>],
		lists:sort(headers(<<"set-cookie">>, Resp))).

set_resp_cookie_max_age(Config) ->
	doc("set_resp_cookie/4 with max_age sends Expires (now + max_age, IMF-fixdate) and "
		"Max-Age. (RFC 6265 4.1.1, RFC 9110 5.6.7)"),
	Before = erlang:system_time(second),
	Resp = get(Config, "/cookies/max_age"),
	After = erlang:system_time(second),
	[Cookie] = headers(<<"set-cookie">>, Resp),
	Candidates = [iolist_to_binary(["c=3; Expires=", imf_fixdate(T + 3600),
		"; Max-Age=3600; SameSite=None"]) || T <- lists:seq(Before - 1, After + 1)],
	?assert(lists:member(Cookie, Candidates), {Cookie, Candidates}).

imf_fixdate(Seconds) ->
	{{Y, Mo, D}, {H, Mi, S}} = calendar:system_time_to_universal_time(Seconds, second),
	Day = element(calendar:day_of_the_week(Y, Mo, D),
		{"Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"}),
	Month = element(Mo, {"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep",
		"Oct", "Nov", "Dec"}),
	io_lib:format("~s, ~2..0b ~s ~4..0b ~2..0b:~2..0b:~2..0b GMT", [Day, D, Month, Y, H, Mi, S]).

inform(Config) ->
	doc("inform/3 sends a 103 Early Hints response with its headers before the final "
		"response. (RFC 9110 15.2, RFC 8297)"),
	Resp = get(Config, "/inform"),
	?assertMatch(#{status := 200, body := <<"after hints">>}, Resp),
	?assertMatch([#{status := 103, headers := [{<<"link">>, <<"</style.css>; rel=preload; as=style">>}]}],
		maps:get(informs, Resp)),
	case http1(Config) of
		true ->
			[#{raw := Raw}] = maps:get(informs, Resp),
			?assertEqual(<<"HTTP/1.1 103 Early Hints\r\n"
				"link: </style.css>; rel=preload; as=style\r\n\r\n">>, Raw);
		false ->
			ok
	end.

inform_http10(Config) ->
	doc("inform/3 sends nothing to an HTTP/1.0 client, which does not understand 1xx. "
		"(RFC 9110 15.2)"),
	Resp = mustang_test:request(port(Config), <<"GET /inform HTTP/1.0\r\nhost: localhost\r\n\r\n">>),
	?assertMatch(#{status := 200, body := <<"after hints">>}, Resp).

stream_reply(Config) ->
	doc("stream_reply/3 and stream_body/3 send the body as it comes, with no "
		"content-length: over HTTP/1.1 chunked, one chunk per stream_body call, then the "
		"last chunk on fin; over HTTP/2 DATA frames, END_STREAM on fin. (RFC 9112 7.1, "
		"RFC 9113 8.1)"),
	Resp = get(Config, "/stream/body"),
	?assertMatch(#{status := 200, body := <<"one two three">>}, Resp),
	?assertEqual(<<"text/plain">>, header(<<"content-type">>, Resp)),
	?assertEqual(undefined, header(<<"content-length">>, Resp)),
	case http1(Config) of
		true ->
			?assertEqual(<<"chunked">>, header(<<"transfer-encoding">>, Resp)),
			?assertEqual(<<"4\r\none \r\n4\r\ntwo \r\n5\r\nthree\r\n0\r\n\r\n">>, raw_body(Resp));
		false ->
			%% Transfer codings do not exist in HTTP/2 (RFC 9113 8.2.2).
			?assertEqual(undefined, header(<<"transfer-encoding">>, Resp))
	end.

stream_reply_http10(Config) ->
	doc("A streamed response to HTTP/1.0 has no transfer coding: the body ends when the "
		"connection closes. (RFC 9112 6.3)"),
	S = mustang_test:connect(port(Config)),
	ok = mustang_test:send(S, <<"GET /stream/body HTTP/1.0\r\nhost: localhost\r\n\r\n">>),
	{closed, Data} = mustang_test:recv_all(S, 3000),
	[Head, Body] = binary:split(Data, <<"\r\n\r\n">>),
	?assertEqual(<<"one two three">>, Body),
	?assertEqual(nomatch, binary:match(Head, <<"transfer-encoding">>)),
	?assertEqual(nomatch, binary:match(Head, <<"content-length">>)).

stream_trailers(Config) ->
	doc("stream_trailers/2 ends a streamed response with the trailer fields: over "
		"HTTP/1.1 after the last chunk 0 (the client sent TE: trailers), over HTTP/2 in "
		"a HEADERS frame with END_STREAM. (RFC 9112 7.1.2, RFC 9113 8.1)"),
	Resp = req(Config, "GET", "/stream/trailers", [{"te", "trailers"}]),
	?assertMatch(#{status := 200, body := <<"hello world">>,
		trailers := [{<<"x-checksum">>, <<"abc">>}]}, Resp),
	?assertEqual(<<"x-checksum">>, header(<<"trailer">>, Resp)),
	case http1(Config) of
		true ->
			?assertEqual(<<"6\r\nhello \r\n5\r\nworld\r\n0\r\nx-checksum: abc\r\n\r\n">>,
				raw_body(Resp));
		false ->
			ok
	end.

stream_trailers_without_te(Config) ->
	doc("Without TE: trailers, HTTP/1.1 drops the trailer fields and the trailer header "
		"(the body still ends with the last chunk); HTTP/2 may always send them. "
		"(RFC 9110 6.5.1, RFC 9113 8.1)"),
	Resp = get(Config, "/stream/trailers"),
	{Trailers, Announced} = case http1(Config) of
		true -> {[], undefined};
		false -> {[{<<"x-checksum">>, <<"abc">>}], <<"x-checksum">>}
	end,
	?assertMatch(#{status := 200, body := <<"hello world">>, trailers := Trailers}, Resp),
	?assertEqual(Announced, header(<<"trailer">>, Resp)),
	%% HTTP/1.1: the last chunk, nothing after it.
	?assert(not http1(Config) orelse
		raw_body(Resp) =:= <<"6\r\nhello \r\n5\r\nworld\r\n0\r\n\r\n">>).

stream_events(Config) ->
	doc("stream_events/3 sends server-sent events in the text/event-stream format. "
		"(HTML Living Standard 9.2.6)"),
	Resp = get(Config, "/stream/events"),
	?assertMatch(#{status := 200}, Resp),
	?assertEqual(<<"text/event-stream">>, header(<<"content-type">>, Resp)),
	?assertEqual(<<
		":hello\n\n"
		"event: update\nid: 1\ndata: line1\ndata: line2\n\n"
		"event: other\nretry: 5000\ndata: x\n\n"
		"data: last\n\n">>, maps:get(body, Resp)).

stream_body_sendfile(Config) ->
	doc("stream_body/3 with {sendfile, 3, 7, Path} sends exactly those bytes (over "
		"HTTP/1.1 as one chunk)."),
	Resp = get(Config, "/stream/sendfile"),
	?assertMatch(#{status := 200, body := <<"[3456789]">>}, Resp),
	case http1(Config) of
		true ->
			?assertEqual(<<"1\r\n[\r\n7\r\n3456789\r\n1\r\n]\r\n0\r\n\r\n">>, raw_body(Resp));
		false ->
			ok
	end.

%% Routing and misuse.

not_found(Config) ->
	doc("A path no route matches gets 404. (RFC 9110 15.5.5)"),
	Resp = get(Config, "/no/such/path"),
	assert_status(Config, 404, <<"Not Found">>, Resp),
	?assertMatch(#{body := <<>>}, Resp),
	?assertEqual(<<"0">>, header(<<"content-length">>, Resp)).

bad_host(Config) ->
	doc("A host no route matches gets 400. (RFC 9110 15.5.1)"),
	Resp = get_with_host(Config, "unknown.test"),
	assert_status(Config, 400, <<"Bad Request">>, Resp),
	?assertMatch(#{body := <<>>}, Resp).

get_with_host(Config, Host) ->
	req(Config, "GET", "/", [{"host", Host}]).

req_from_other_process(Config) ->
	doc("A process the handler gave its Req to may reply, in every mode (inline "
		"included, as Cowboy allows) and over every transport."),
	Resp = get(Config, "/other_process"),
	?assertMatch(#{status := 200, body := <<"replied from another process">>}, Resp).

req_from_other_process_body(Config) ->
	doc("A process the handler gave its Req to may read the body, then stream the "
		"response (stream_reply, stream_body), in every mode and over every transport."),
	Body = binary:copy(<<"abcdefgh">>, 100000),
	Resp = req(Config, "POST", "/other_process_body", [], Body),
	?assertMatch(#{status := 200}, Resp),
	#{body := RespBody} = Resp,
	?assertEqual(<<"read 800000 bytes in another process">>, RespBody).

req_from_other_process_body_split(Config) ->
	doc("The handler reads the start of the body, then a process it spawned reads the "
		"rest (inline: bytes already sent to the connection's mailbox included): the "
		"whole body arrives, in order, and the connection serves the next request."),
	Body = crypto:strong_rand_bytes(800000),
	Digest = binary:encode_hex(crypto:hash(sha256, Body)),
	Conn = open(Config),
	try
		Resp = await(Conn, send_request(Conn, "POST", "/other_process_body_split", [], Body)),
		?assertMatch(#{status := 200}, Resp),
		?assertEqual(<<"800000 ", Digest/binary>>, maps:get(body, Resp)),
		?assertMatch(#{status := 200, body := <<"Hello world!">>},
			await(Conn, send_request(Conn, "GET", "/", [], none)))
	after
		close(Conn)
	end.

req_from_other_process_interleaved(Config) ->
	doc("The handler and a process it spawned take turns streaming the response "
		"with the same Req (stale after the first part), in every mode."),
	Resp = get(Config, "/other_process_interleaved"),
	?assertMatch(#{status := 200, body := <<"one two three">>}, Resp).

set_env(Config) ->
	doc("mustang:set_env/3 changes the dispatch rules for connections accepted after "
		"the call; open connections keep theirs."),
	Ref = mustang_test:ref(?FUNCTION_NAME, Config),
	Port = mustang_test:start_group_listener(Ref, [{'_', [{"/", hello_h, []}]}], Config, #{}),
	try
		Old = open(Config, Port),
		?assertMatch(#{status := 200, body := <<"Hello world!">>},
			await(Old, send_request(Old, "GET", "/", [], none))),
		ok = mustang:set_env(Ref, dispatch,
			mustang_router:compile([{'_', [{"/", echo_h, path}]}])),
		?assertEqual(<<"/">>, echoed(mustang_test:request(Config, "GET", "/", [], none,
			#{port => Port}))),
		?assertMatch(#{status := 200, body := <<"Hello world!">>},
			await(Old, send_request(Old, "GET", "/", [], none))),
		close(Old)
	after
		mustang_test:stop_listener(Ref)
	end.
