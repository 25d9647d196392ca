%% HTTP/1.1 wire behaviour (RFC 9112, with the RFC 9110 rules it relies on),
%% tested with raw sockets: bytes in, bytes out. Ordered like RFC 9112, then
%% the server's own rules for handler failures. Every test runs in the
%% groups inline and process (request_process => true).
-module(rfc9112_SUITE).
-compile([export_all, nowarn_export_all]).

-include_lib("common_test/include/ct.hrl").
-include_lib("stdlib/include/assert.hrl").

-import(mustang_test, [connect/1, send/2, recv_response/1, recv_response/2, recv_all/2,
	wait_closed/2, close/1, request/2, get_req/1, get_req/2, header/2, count/2, doc/1]).

suite() ->
	[{timetrap, {seconds, 60}}].

all() ->
	mustang_test:common_all().

groups() ->
	mustang_test:common_groups(tests()).

tests() ->
	[
		%% 2.2 Message parsing.
		bare_lf_in_request_line,
		bare_lf_in_header_line,
		bare_lf_line_endings,
		%% 2.3 HTTP version.
		http10_response_version,
		%% 3 Request line.
		method_not_token_tls_client_hello,
		asterisk_form_options,
		asterisk_form_other_method,
		absolute_form,
		absolute_form_scheme_of_connection,
		host_required_http11,
		host_multiple,
		host_invalid,
		host_port_zero,
		host_optional_http10,
		%% 5 Field syntax.
		space_before_colon,
		obs_fold,
		cr_in_field_value,
		lf_in_field_value,
		nul_in_field_value,
		%% 6 Message body.
		content_length_with_transfer_encoding,
		content_length_differing_values,
		content_length_differing_headers,
		content_length_same_values_list,
		content_length_same_values_headers,
		content_length_invalid,
		transfer_encoding_http10,
		transfer_encoding_unknown,
		transfer_encoding_chunked_not_last,
		body_then_pipelined_request,
		unread_body_then_pipelined_request,
		unread_large_body_response_then_close,
		head_no_body,
		head_stream_keepalive,
		%% 7 Chunked transfer coding.
		chunked_request_body,
		chunked_request_extensions,
		chunked_request_extensions_total,
		chunked_request_trailers_skipped,
		chunked_request_trailers_too_large,
		chunked_response,
		trailers_with_te_trailers,
		trailers_dropped_without_te,
		%% 9 Connection management.
		keepalive_10000_requests,
		pipelining_1000_requests,
		connection_close,
		connection_close_ignores_pipelined,
		connection_invalid,
		h2c_upgrade_http10_ignored,
		http10_closes,
		http10_keepalive,
		max_keepalive,
		request_timeout_slowloris,
		request_timeout_idle,
		idle_timeout_body_read,
		%% RFC 9110 10.1.1 Expect.
		expect_continue_sent_on_read,
		expect_continue_not_sent_without_read,
		%% Handler failures.
		handler_crash,
		handler_crash_after_stream_reply,
		handler_stale_req,
		handler_takes_mustang_message,
		handler_no_reply,
		invalid_response_header_crlf,
		invalid_response_header_nul,
		invalid_response_header_name
	].

routes() ->
	[{'_', [
		{"/", hello_h, []},
		{"/echo/:key", echo_h, []},
		{"*", echo_h, target},
		{"/stream", mustang_demo_stream_h, []},
		{"/stream/trailers", stream_h, trailers},
		{"/no_read", no_read_body_h, []},
		{"/crash", crash_h, before_reply},
		{"/crash_stream", crash_h, after_stream_reply},
		{"/stale", stale_req_h, []},
		{"/greedy", greedy_receive_h, []},
		{"/no_reply", no_reply_h, []},
		{"/invalid_header/crlf", invalid_header_h, crlf_value},
		{"/invalid_header/nul", invalid_header_h, nul_value},
		{"/invalid_header/name", invalid_header_h, bad_name}
	]}].

init_per_suite(Config) ->
	{ok, _} = application:ensure_all_started(mustang),
	[{suite, ?MODULE} | Config].

end_per_suite(_) ->
	ok.

init_per_group(Mode, Config) ->
	%% 10,000 requests go through one connection: no max_keepalive here.
	mustang_test:init_group(Mode, Config, routes(), #{max_keepalive => infinity}).

end_per_group(_, Config) ->
	mustang_test:end_group(Config).

%% Helpers.

port(Config) -> mustang_test:port(Config).

now_ms() -> erlang:monotonic_time(millisecond).

%% A listener of its own, for tests that need other protocol options.
with_listener(Name, Config, Opts, Fun) ->
	Ref = {Name, mustang_test:mode(Config)},
	Port = mustang_test:start_listener(Ref, routes(), mustang_test:mode(Config), Opts),
	try
		Fun(Port)
	after
		mustang_test:stop_listener(Ref)
	end.

%% A request the server must refuse with Status and then close.
assert_rejected(Config, Request, Status) ->
	S = connect(port(Config)),
	ok = send(S, Request),
	%% The server answers at once: no waiting for a request_timeout.
	Resp = recv_response(S, #{timeout => 2000}),
	?assertMatch(#{version := <<"HTTP/1.1">>, status := Status, body := <<>>}, Resp),
	?assertEqual(<<"close">>, header(<<"connection">>, Resp)),
	?assertEqual(ok, wait_closed(S, 2000)),
	close(S),
	mustang_test:assert_new_connection_ok(port(Config)).

hello(Resp) ->
	?assertMatch(#{version := <<"HTTP/1.1">>, status := 200, reason := <<"OK">>,
		body := <<"Hello world!">>}, Resp),
	?assertEqual(<<"12">>, header(<<"content-length">>, Resp)).

echoed(Resp) ->
	#{status := 200, body := Body} = Resp,
	mustang_test:parse_term(Body).

%% 2.2 Message parsing.

bare_lf_in_request_line(Config) ->
	doc("A request line ended by a bare LF is rejected with 400. (RFC 9112 2.2)"),
	assert_rejected(Config, <<"GET / HTTP/1.1\nhost: localhost\r\n\r\n">>, 400).

bare_lf_in_header_line(Config) ->
	doc("A header line containing a bare LF is rejected with 400. (RFC 9112 2.2)"),
	assert_rejected(Config, <<"GET / HTTP/1.1\r\nhost: localhost\r\nx-a: b\nx-c: d\r\n\r\n">>, 400).

bare_lf_line_endings(Config) ->
	doc("A request head whose lines all end with a bare LF is rejected with 400, "
		"not left waiting for a CRLF CRLF that never comes. (RFC 9112 2.2)"),
	assert_rejected(Config, <<"GET / HTTP/1.1\nhost: localhost\n\n">>, 400).

%% 2.3 HTTP version.

http10_response_version(Config) ->
	doc("The response to an HTTP/1.0 request is sent with the server's own version, "
		"HTTP/1.1. (RFC 9110 2.5, 6.2)"),
	Resp = request(port(Config), <<"GET / HTTP/1.0\r\nhost: localhost\r\n\r\n">>),
	?assertMatch(#{version := <<"HTTP/1.1">>, status := 200, body := <<"Hello world!">>}, Resp).

%% 3 Request line.

method_not_token_tls_client_hello(Config) ->
	doc("Bytes that do not start with a token, such as a TLS ClientHello sent to the "
		"clear port, are a malformed request line: 400 and close, as soon as they "
		"arrive, not 501 for a method too long. (RFC 9112 3, 3.1)"),
	%% A TLS 1.2 ClientHello as it starts on the wire: record header, handshake
	%% header, version, 32 random bytes, and more; no SP in the first 33 bytes
	%% and no CRLF CRLF anywhere.
	Random = list_to_binary(lists:seq(100, 131)),
	ClientHello = <<22, 3, 1, 0, 200, 1, 0, 0, 196, 3, 3, Random/binary, 0, 0, 32, 16#c0, 16#2f,
		16#c0, 16#30, 0, 16#9e, 0, 16#9f, 1, 0, 0, 123, 0, 0, 0, 14, 0, 12, 0, 0, 9,
		"localhost">>,
	assert_rejected(Config, ClientHello, 400),
	%% Sent one byte at a time, the first byte is already refused.
	S = connect(port(Config)),
	ok = send(S, binary:part(ClientHello, 0, 1)),
	?assertMatch(#{status := 400}, recv_response(S, #{timeout => 2000})),
	?assertEqual(ok, wait_closed(S, 2000)),
	close(S).

asterisk_form_options(Config) ->
	doc("OPTIONS * (asterisk-form) is accepted; the path is \"*\". (RFC 9112 3.2.4)"),
	Resp = request(port(Config), <<"OPTIONS * HTTP/1.1\r\nhost: localhost\r\n\r\n">>),
	?assertEqual({<<"http">>, <<"localhost">>, 80, <<"*">>, <<>>}, echoed(Resp)).

asterisk_form_other_method(Config) ->
	doc("The asterisk-form is only for OPTIONS: GET * is rejected with 400. (RFC 9112 3.2.4)"),
	assert_rejected(Config, <<"GET * HTTP/1.1\r\nhost: localhost\r\n\r\n">>, 400).

absolute_form(Config) ->
	doc("An absolute-form target gives scheme, host, port, path and query, and its "
		"authority replaces the Host header. (RFC 9112 3.2.2)"),
	Resp = request(port(Config),
		<<"GET http://Example.org:8080/echo/target?a=b HTTP/1.1\r\nhost: localhost\r\n\r\n">>),
	?assertEqual({<<"http">>, <<"example.org">>, 8080, <<"/echo/target">>, <<"a=b">>},
		echoed(Resp)).

absolute_form_scheme_of_connection(Config) ->
	doc("The scheme of the request is the connection's (http on a clear connection), "
		"whatever scheme an absolute-form target names: an https:// target over a clear "
		"connection is http, with http's default port. (RFC 9112 3.3)"),
	Resp = request(port(Config),
		<<"GET https://example.org/echo/target?a=b HTTP/1.1\r\nhost: localhost\r\n\r\n">>),
	?assertEqual({<<"http">>, <<"example.org">>, 80, <<"/echo/target">>, <<"a=b">>},
		echoed(Resp)),
	Uri = request(port(Config),
		<<"GET HTTPS://example.org:8443/echo/uri HTTP/1.1\r\nhost: localhost\r\n\r\n">>),
	?assertEqual(<<"http://example.org:8443/echo/uri">>, echoed(Uri)).

host_required_http11(Config) ->
	doc("An HTTP/1.1 request without a Host header is rejected with 400. (RFC 9112 3.2)"),
	assert_rejected(Config, <<"GET / HTTP/1.1\r\n\r\n">>, 400).

host_multiple(Config) ->
	doc("A request with two Host header lines is rejected with 400. (RFC 9112 3.2)"),
	assert_rejected(Config, <<"GET / HTTP/1.1\r\nhost: localhost\r\nhost: example.org\r\n\r\n">>,
		400).

host_invalid(Config) ->
	doc("A request with an invalid Host value is rejected with 400. (RFC 9112 3.2)"),
	assert_rejected(Config, <<"GET / HTTP/1.1\r\nhost: local/host\r\n\r\n">>, 400),
	assert_rejected(Config, <<"GET / HTTP/1.1\r\nhost: localhost:99999\r\n\r\n">>, 400).

host_port_zero(Config) ->
	doc("Port 0 is not a port a client can reach: a Host, or an absolute-form "
		"authority, with port 0 gets 400. (RFC 9112 3.2, RFC 9110 4.2.1)"),
	assert_rejected(Config, <<"GET / HTTP/1.1\r\nhost: localhost:0\r\n\r\n">>, 400),
	assert_rejected(Config, <<"GET / HTTP/1.1\r\nhost: localhost:00000\r\n\r\n">>, 400),
	assert_rejected(Config, <<"GET http://localhost:0/ HTTP/1.1\r\nhost: localhost\r\n\r\n">>,
		400),
	%% Port 1 is a port.
	?assertEqual(1, echoed(request(port(Config),
		<<"GET /echo/port HTTP/1.1\r\nhost: localhost:1\r\n\r\n">>))).

host_optional_http10(Config) ->
	doc("An HTTP/1.0 request without a Host header is accepted. (RFC 9112 3.2)"),
	S = connect(port(Config)),
	ok = send(S, <<"GET / HTTP/1.0\r\n\r\n">>),
	Resp = recv_response(S),
	?assertMatch(#{status := 200, body := <<"Hello world!">>}, Resp),
	?assertEqual(ok, wait_closed(S, 2000)).

%% 5 Field syntax.

space_before_colon(Config) ->
	doc("Whitespace between a field name and the colon is rejected with 400. (RFC 9112 5.1)"),
	assert_rejected(Config, <<"GET / HTTP/1.1\r\nhost : localhost\r\n\r\n">>, 400).

obs_fold(Config) ->
	doc("Obsolete line folding in a request is rejected with 400. (RFC 9112 5.2)"),
	assert_rejected(Config, <<"GET / HTTP/1.1\r\nhost: localhost\r\nx-a: b\r\n c\r\n\r\n">>, 400).

cr_in_field_value(Config) ->
	doc("A bare CR in a field value is rejected with 400. (RFC 9112 2.2, RFC 9110 5.5)"),
	assert_rejected(Config, <<"GET / HTTP/1.1\r\nhost: localhost\r\nx-a: b\rc\r\n\r\n">>, 400).

lf_in_field_value(Config) ->
	doc("A bare LF in a field value is rejected with 400. (RFC 9110 5.5)"),
	assert_rejected(Config, <<"GET / HTTP/1.1\r\nhost: localhost\r\nx-a: b\nc: d\r\n\r\n">>, 400).

nul_in_field_value(Config) ->
	doc("A NUL in a field value is rejected with 400. (RFC 9110 5.5)"),
	assert_rejected(Config, <<"GET / HTTP/1.1\r\nhost: localhost\r\nx-a: b", 0, "c\r\n\r\n">>, 400).

%% 6 Message body.

content_length_with_transfer_encoding(Config) ->
	doc("A request with both Content-Length and Transfer-Encoding is rejected with 400. "
		"(RFC 9112 6.1)"),
	assert_rejected(Config, <<"POST /echo/read_body HTTP/1.1\r\nhost: localhost\r\n"
		"content-length: 5\r\ntransfer-encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n">>, 400).

content_length_differing_values(Config) ->
	doc("A Content-Length list with differing values is rejected with 400. (RFC 9112 6.3)"),
	assert_rejected(Config, <<"POST /echo/read_body HTTP/1.1\r\nhost: localhost\r\n"
		"content-length: 5, 6\r\n\r\nhello!">>, 400).

content_length_differing_headers(Config) ->
	doc("Two Content-Length headers with differing values are rejected with 400. (RFC 9112 6.3)"),
	assert_rejected(Config, <<"POST /echo/read_body HTTP/1.1\r\nhost: localhost\r\n"
		"content-length: 5\r\ncontent-length: 6\r\n\r\nhello!">>, 400).

content_length_same_values_list(Config) ->
	doc("A Content-Length list of identical values (\"5, 5\") is accepted as that length. "
		"(RFC 9112 6.3, RFC 9110 8.6)"),
	S = connect(port(Config)),
	ok = send(S, [<<"POST /echo/read_body HTTP/1.1\r\nhost: localhost\r\n"
		"content-length: 5, 5\r\n\r\nhello">>, get_req("/")]),
	?assertEqual(<<"hello">>, echoed(recv_response(S))),
	hello(recv_response(S)),
	close(S).

content_length_same_values_headers(Config) ->
	doc("Two Content-Length headers with the same value are accepted as that length. "
		"(RFC 9112 6.3, RFC 9110 8.6)"),
	S = connect(port(Config)),
	ok = send(S, [<<"POST /echo/read_body HTTP/1.1\r\nhost: localhost\r\n"
		"content-length: 5\r\ncontent-length: 5\r\n\r\nhello">>, get_req("/")]),
	?assertEqual(<<"hello">>, echoed(recv_response(S))),
	hello(recv_response(S)),
	close(S).

content_length_invalid(Config) ->
	doc("A Content-Length that is not a decimal number is rejected with 400. (RFC 9112 6.3)"),
	assert_rejected(Config, <<"POST /echo/read_body HTTP/1.1\r\nhost: localhost\r\n"
		"content-length: -5\r\n\r\nhello">>, 400),
	assert_rejected(Config, <<"POST /echo/read_body HTTP/1.1\r\nhost: localhost\r\n"
		"content-length: 0x5\r\n\r\nhello">>, 400).

transfer_encoding_http10(Config) ->
	doc("An HTTP/1.0 request with Transfer-Encoding has faulty framing: 400 and "
		"close. (RFC 9112 6.1)"),
	assert_rejected(Config, <<"POST /echo/read_body HTTP/1.0\r\nhost: localhost\r\n"
		"transfer-encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n">>, 400).

transfer_encoding_unknown(Config) ->
	doc("A transfer coding the server does not implement (gzip before chunked) gets "
		"501. (RFC 9112 6.1)"),
	assert_rejected(Config, <<"POST /echo/read_body HTTP/1.1\r\nhost: localhost\r\n"
		"transfer-encoding: gzip, chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n">>, 501).

transfer_encoding_chunked_not_last(Config) ->
	doc("A Transfer-Encoding whose last coding is not chunked gets 400 and close. "
		"(RFC 9112 6.3)"),
	assert_rejected(Config, <<"POST /echo/read_body HTTP/1.1\r\nhost: localhost\r\n"
		"transfer-encoding: chunked, gzip\r\n\r\nhello">>, 400).

body_then_pipelined_request(Config) ->
	doc("Bytes received past the end of a request body are the next request: a POST "
		"with its body and a GET sent in one write get two responses. (RFC 9112 6.3, 9.3.2)"),
	S = connect(port(Config)),
	ok = send(S, [<<"POST /echo/read_body HTTP/1.1\r\nhost: localhost\r\n"
		"content-length: 11\r\n\r\nhello world">>, get_req("/")]),
	?assertEqual(<<"hello world">>, echoed(recv_response(S))),
	hello(recv_response(S)),
	close(S).

unread_body_then_pipelined_request(Config) ->
	doc("A body the handler did not read is discarded and the pipelined request after "
		"it is answered. (RFC 9112 6.3, 9.3.2)"),
	S = connect(port(Config)),
	ok = send(S, [<<"POST /no_read HTTP/1.1\r\nhost: localhost\r\n"
		"content-length: 11\r\n\r\nhello world">>, get_req("/")]),
	?assertMatch(#{status := 200, body := <<"not read">>}, recv_response(S)),
	hello(recv_response(S)),
	close(S).

unread_large_body_response_then_close(Config) ->
	doc("After answering a request whose 10 MB body it will not read (more than "
		"max_skip_body_length), the server half-closes and keeps reading, so the client "
		"can finish sending without a reset, then sees the close. (RFC 9112 9.6)"),
	S = connect(port(Config)),
	ok = send(S, <<"POST /no_read HTTP/1.1\r\nhost: localhost\r\n"
		"content-length: 10485760\r\n\r\n">>),
	Resp = recv_response(S),
	?assertMatch(#{status := 200, body := <<"not read">>}, Resp),
	%% The client now sends the body it announced, 64 KB at a time.
	Piece = binary:copy(<<"x">>, 65536),
	Sent = lists:foldl(fun
		(_, {error, _} = Error) -> Error;
		(N, ok) -> case send(S, Piece) of ok -> ok; {error, R} -> {error, {R, N * 65536}} end
	end, ok, lists:seq(0, 159)),
	?assertEqual(ok, Sent),
	?assertEqual(ok, wait_closed(S, 5000)),
	close(S),
	mustang_test:assert_new_connection_ok(port(Config)).

head_no_body(Config) ->
	doc("A response to HEAD has the headers of the GET response, content-length "
		"included, and no body. (RFC 9110 9.3.2, RFC 9112 6.3)"),
	S = connect(port(Config)),
	ok = send(S, [<<"HEAD / HTTP/1.1\r\nhost: localhost\r\n\r\n">>, get_req("/")]),
	Head = recv_response(S, #{head => true}),
	?assertMatch(#{status := 200, body := <<>>}, Head),
	?assertEqual(<<"12">>, header(<<"content-length">>, Head)),
	?assertEqual(<<"text/plain">>, header(<<"content-type">>, Head)),
	%% The next bytes are the GET's response, not a HEAD body.
	hello(recv_response(S)),
	close(S).

head_stream_keepalive(Config) ->
	doc("A HEAD request to a streamed (chunked) resource gets headers and no body, and "
		"the connection stays open for the next request. (RFC 9110 9.3.2, RFC 9112 9.3)"),
	S = connect(port(Config)),
	ok = send(S, [<<"HEAD /stream HTTP/1.1\r\nhost: localhost\r\n\r\n">>, get_req("/")]),
	Head = recv_response(S, #{head => true}),
	?assertMatch(#{status := 200, body := <<>>}, Head),
	?assertEqual(<<"chunked">>, header(<<"transfer-encoding">>, Head)),
	?assertEqual(undefined, header(<<"connection">>, Head)),
	hello(recv_response(S)),
	close(S).

%% 7 Chunked transfer coding.

chunked_request_body(Config) ->
	doc("A chunked request body is decoded; the request pipelined after it is "
		"answered. (RFC 9112 7.1)"),
	S = connect(port(Config)),
	ok = send(S, [<<"POST /echo/read_body HTTP/1.1\r\nhost: localhost\r\n"
		"transfer-encoding: chunked\r\n\r\n"
		"5\r\nhello\r\n1\r\n \r\nA\r\n0123456789\r\n0\r\n\r\n">>, get_req("/")]),
	?assertEqual(<<"hello 0123456789">>, echoed(recv_response(S))),
	hello(recv_response(S)),
	close(S).

chunked_request_extensions(Config) ->
	doc("Chunk extensions are ignored. (RFC 9112 7.1.1)"),
	S = connect(port(Config)),
	ok = send(S, [<<"POST /echo/read_body HTTP/1.1\r\nhost: localhost\r\n"
		"transfer-encoding: chunked\r\n\r\n"
		"5;name=value\r\nhello\r\n6 ; a=\"quoted\";b\r\n world\r\n0;last\r\n\r\n">>,
		get_req("/")]),
	?assertEqual(<<"hello world">>, echoed(recv_response(S))),
	hello(recv_response(S)),
	close(S).

chunked_request_extensions_total(Config) ->
	doc("Chunk extensions count against max_chunk_ext_length (1048576 by default) over "
		"the whole body: 1-byte chunks each with 100 bytes of extensions are refused "
		"with 400 and close once the total passes it. (RFC 9112 7.1.1)"),
	Ext = [<<";n=">>, binary:copy(<<"v">>, 97)],
	Chunk = iolist_to_binary([<<"1">>, Ext, <<"\r\nx\r\n">>]),
	%% 10485 chunks carry 1048500 bytes of extensions: read whole.
	S = connect(port(Config)),
	ok = send(S, [<<"POST /echo/read_body HTTP/1.1\r\nhost: localhost\r\n"
		"transfer-encoding: chunked\r\n\r\n">>, binary:copy(Chunk, 10485), <<"0\r\n\r\n">>,
		get_req("/")]),
	?assertEqual(binary:copy(<<"x">>, 10485), echoed(recv_response(S))),
	hello(recv_response(S)),
	close(S),
	%% 10486 carry 1048600.
	assert_rejected(Config, [<<"POST /echo/read_body HTTP/1.1\r\nhost: localhost\r\n"
		"transfer-encoding: chunked\r\n\r\n">>, binary:copy(Chunk, 10486), <<"0\r\n\r\n">>], 400).

chunked_request_trailers_skipped(Config) ->
	doc("Trailer fields after the last chunk are skipped, and the request pipelined "
		"after them is answered. (RFC 9112 7.1.2)"),
	S = connect(port(Config)),
	ok = send(S, [<<"POST /echo/read_body HTTP/1.1\r\nhost: localhost\r\n"
		"transfer-encoding: chunked\r\ntrailer: x-checksum, x-other\r\n\r\n"
		"5\r\nhello\r\n0\r\nx-checksum: abc\r\nx-other: 1\r\n\r\n">>, get_req("/")]),
	?assertEqual(<<"hello">>, echoed(recv_response(S))),
	hello(recv_response(S)),
	close(S).

chunked_request_trailers_too_large(Config) ->
	doc("Trailer fields longer than max_trailer_length (4096) are rejected with 431. "
		"(RFC 9112 7.1.2, RFC 6585 5)"),
	Trailer = [<<"x-big: ">>, binary:copy(<<"a">>, 5000), <<"\r\n">>],
	assert_rejected(Config, [<<"POST /echo/read_body HTTP/1.1\r\nhost: localhost\r\n"
		"transfer-encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n">>, Trailer, <<"\r\n">>], 431).

chunked_response(Config) ->
	doc("A streamed response to an HTTP/1.1 request without content-length is sent "
		"with the chunked transfer coding. (RFC 9112 7.1)"),
	S = connect(port(Config)),
	ok = send(S, get_req("/stream")),
	Resp = recv_response(S),
	?assertMatch(#{status := 200, body := <<"part 1\npart 2\npart 3\npart 4\npart 5\n">>}, Resp),
	?assertEqual(<<"chunked">>, header(<<"transfer-encoding">>, Resp)),
	?assertEqual(undefined, header(<<"content-length">>, Resp)),
	#{raw := Raw} = Resp,
	?assertEqual(<<"7\r\npart 5\n\r\n0\r\n\r\n">>, binary:part(Raw, byte_size(Raw), -17)),
	%% The connection stays open.
	ok = send(S, get_req("/")),
	hello(recv_response(S)),
	close(S).

trailers_with_te_trailers(Config) ->
	doc("A client that sends TE: trailers gets the trailer fields the handler sends "
		"after the last chunk. (RFC 9110 6.5.1, 10.1.4; RFC 9112 7.1.2)"),
	S = connect(port(Config)),
	ok = send(S, get_req("/stream/trailers", [{"te", "trailers"}])),
	Resp = recv_response(S),
	?assertMatch(#{status := 200, body := <<"hello world">>,
		trailers := [{<<"x-checksum">>, <<"abc">>}]}, Resp),
	?assertEqual(<<"x-checksum">>, header(<<"trailer">>, Resp)),
	#{raw := Raw} = Resp,
	?assertEqual(<<"0\r\nx-checksum: abc\r\n\r\n">>, binary:part(Raw, byte_size(Raw), -22)),
	%% Other t-codings beside trailers, and its case, do not matter.
	ok = send(S, get_req("/stream/trailers", [{"te", "deflate;q=0.5, Trailers"}])),
	?assertMatch(#{trailers := [{<<"x-checksum">>, <<"abc">>}]}, recv_response(S)),
	close(S).

trailers_dropped_without_te(Config) ->
	doc("Without TE: trailers the trailer fields the handler sends are dropped, the "
		"trailer header announcing them too, and the body still ends with the last "
		"chunk; the connection stays open. (RFC 9110 6.5.1, 6.6.2)"),
	S = connect(port(Config)),
	lists:foreach(fun(Headers) ->
		ok = send(S, get_req("/stream/trailers", Headers)),
		Resp = recv_response(S),
		?assertMatch(#{status := 200, body := <<"hello world">>, trailers := []}, Resp),
		?assertEqual(undefined, header(<<"trailer">>, Resp)),
		#{raw := Raw} = Resp,
		?assertEqual(<<"5\r\nworld\r\n0\r\n\r\n">>, binary:part(Raw, byte_size(Raw), -15)),
		?assertEqual(nomatch, binary:match(Raw, <<"abc">>))
	end, [[], [{"te", "gzip"}], [{"te", "trailers;q=1"}]]),
	ok = send(S, get_req("/")),
	hello(recv_response(S)),
	close(S).

%% 9 Connection management.

keepalive_10000_requests(Config) ->
	doc("A persistent connection serves 10,000 requests in a row. (RFC 9112 9.3)"),
	S = connect(port(Config)),
	Req = iolist_to_binary(get_req("/")),
	lists:foreach(fun(_) ->
		ok = send(S, Req),
		#{status := 200, body := <<"Hello world!">>, headers := Headers} = recv_response(S),
		false = lists:keymember(<<"connection">>, 1, Headers)
	end, lists:seq(1, 10000)),
	close(S).

pipelining_1000_requests(Config) ->
	doc("1,000 requests pipelined in one write are all answered, in order. (RFC 9112 9.3.2)"),
	S = connect(port(Config)),
	ok = send(S, [get_req(["/echo/qs?n=", integer_to_list(N)]) || N <- lists:seq(1, 1000)]),
	lists:foreach(fun(N) ->
		Expected = iolist_to_binary(["n=", integer_to_list(N)]),
		?assertEqual(Expected, echoed(recv_response(S)))
	end, lists:seq(1, 1000)),
	close(S).

connection_close(Config) ->
	doc("After a request with Connection: close the server answers with "
		"connection: close and closes; empty list elements around close do not "
		"matter. (RFC 9112 9.6, RFC 9110 5.6.1.2)"),
	lists:foreach(fun(Value) ->
		S = connect(port(Config)),
		ok = send(S, get_req("/", [{"connection", Value}])),
		Resp = recv_response(S),
		hello(Resp),
		?assertEqual(<<"close">>, header(<<"connection">>, Resp)),
		?assertEqual(ok, wait_closed(S, 2000))
	end, ["close", ", close ,"]).

connection_close_ignores_pipelined(Config) ->
	doc("Requests pipelined after one with Connection: close are not processed: one "
		"response, then the close. (RFC 9112 9.6)"),
	S = connect(port(Config)),
	ok = send(S, [get_req("/", [{"connection", "close"}]), get_req("/echo/path")]),
	{Result, Data} = recv_all(S, 3000),
	?assertEqual(closed, Result),
	?assertEqual(1, count(<<"HTTP/1.1 ">>, Data)),
	?assertEqual(nomatch, binary:match(Data, <<"/echo/path">>)),
	?assertMatch(<<"HTTP/1.1 200 OK\r\n", _/bits>>, Data).

connection_invalid(Config) ->
	doc("A Connection header that is not a list of tokens is refused with 400 and "
		"close. (RFC 9110 7.6.1)"),
	lists:foreach(fun(Value) ->
		assert_rejected(Config, get_req("/", [{"connection", Value}]), 400)
	end, ["\"close\"", "keep-alive;x", "close/x", "keep alive", "close, @"]).

h2c_upgrade_http10_ignored(Config) ->
	doc("An HTTP/1.0 request cannot switch protocols: its Upgrade: h2c is ignored and "
		"the request answered over HTTP/1.x. (RFC 9110 7.8)"),
	Resp = request(port(Config), <<"GET / HTTP/1.0\r\nhost: localhost\r\n"
		"connection: Upgrade, HTTP2-Settings\r\nupgrade: h2c\r\n"
		"http2-settings: AAMAAABkAAQAAP__\r\n\r\n">>),
	hello(Resp),
	?assertEqual(undefined, header(<<"upgrade">>, Resp)).

http10_closes(Config) ->
	doc("An HTTP/1.0 connection without Connection: keep-alive closes after the "
		"response. (RFC 9112 9.3)"),
	S = connect(port(Config)),
	ok = send(S, <<"GET / HTTP/1.0\r\nhost: localhost\r\n\r\n">>),
	Resp = recv_response(S),
	?assertMatch(#{status := 200, reason := <<"OK">>, body := <<"Hello world!">>}, Resp),
	?assertNotEqual(<<"keep-alive">>, header(<<"connection">>, Resp)),
	?assertEqual(ok, wait_closed(S, 2000)).

http10_keepalive(Config) ->
	doc("An HTTP/1.0 request with Connection: keep-alive gets connection: keep-alive "
		"and the connection stays open. (RFC 9112 9.3, Appendix C.2.2)"),
	S = connect(port(Config)),
	Req = <<"GET / HTTP/1.0\r\nhost: localhost\r\nconnection: keep-alive\r\n\r\n">>,
	ok = send(S, Req),
	Resp1 = recv_response(S),
	?assertMatch(#{status := 200, body := <<"Hello world!">>}, Resp1),
	?assertEqual(<<"keep-alive">>, header(<<"connection">>, Resp1)),
	ok = send(S, Req),
	Resp2 = recv_response(S),
	?assertMatch(#{status := 200, body := <<"Hello world!">>}, Resp2),
	?assertEqual(<<"keep-alive">>, header(<<"connection">>, Resp2)),
	%% Without the keep-alive option the connection then closes.
	ok = send(S, <<"GET / HTTP/1.0\r\nhost: localhost\r\n\r\n">>),
	?assertMatch(#{status := 200, body := <<"Hello world!">>}, recv_response(S)),
	?assertEqual(ok, wait_closed(S, 2000)).

max_keepalive(Config) ->
	doc("With max_keepalive 3 the 3rd response says connection: close and the "
		"connection closes. (RFC 9112 9.6)"),
	with_listener(max_keepalive, Config, #{max_keepalive => 3}, fun(Port) ->
		S = connect(Port),
		[begin
			ok = send(S, get_req("/")),
			Resp = recv_response(S),
			hello(Resp),
			?assertEqual(undefined, header(<<"connection">>, Resp))
		end || _ <- [1, 2]],
		ok = send(S, get_req("/")),
		Resp3 = recv_response(S),
		hello(Resp3),
		?assertEqual(<<"close">>, header(<<"connection">>, Resp3)),
		?assertEqual(ok, wait_closed(S, 2000))
	end).

request_timeout_slowloris(Config) ->
	doc("A request head still incomplete after request_timeout gets 408 and the "
		"connection closes, however slowly bytes keep arriving. (RFC 9112 9.5)"),
	with_listener(slowloris, Config, #{request_timeout => 1000}, fun(Port) ->
		S = connect(Port),
		T0 = now_ms(),
		Resp = slowloris(S, ["GET / HTTP/1.1\r\n", "host: localhost\r\n"], 1, T0),
		Elapsed = now_ms() - T0,
		?assertMatch(#{status := 408, reason := <<"Request Timeout">>, body := <<>>}, Resp),
		?assertEqual(<<"close">>, header(<<"connection">>, Resp)),
		?assertEqual(ok, wait_closed(S, 1000)),
		?assert(Elapsed >= 900 andalso Elapsed < 2000, {elapsed, Elapsed})
	end).

%% Sends a piece of head every 200 ms, until a response arrives (5 s at most).
slowloris(S, Pieces, N, T0) ->
	case now_ms() - T0 > 5000 of
		true ->
			error(no_response_to_slowloris);
		false ->
			{Piece, Rest} = case Pieces of
				[P | R] -> {P, R};
				[] -> {["x-slow-", integer_to_list(N), ": a\r\n"], []}
			end,
			_ = send(S, Piece),
			case recv_response(S, #{timeout => 200}) of
				{error, timeout} -> slowloris(S, Rest, N + 1, T0);
				Resp -> Resp
			end
	end.

request_timeout_idle(Config) ->
	doc("A connection on which nothing arrives is closed after request_timeout, "
		"without a response. (RFC 9112 9.5)"),
	with_listener(idle, Config, #{request_timeout => 1000}, fun(Port) ->
		S = connect(Port),
		T0 = now_ms(),
		?assertEqual(ok, wait_closed(S, 3000)),
		Elapsed = now_ms() - T0,
		?assert(Elapsed >= 900 andalso Elapsed < 2000, {elapsed, Elapsed})
	end).

idle_timeout_body_read(Config) ->
	doc("When the client stops sending a body the handler is reading, the connection "
		"closes after idle_timeout. (RFC 9112 9.5)"),
	with_listener(idle_body, Config, #{idle_timeout => 1000}, fun(Port) ->
		S = connect(Port),
		ok = send(S, <<"POST /echo/read_body HTTP/1.1\r\nhost: localhost\r\n"
			"content-length: 100\r\n\r\n0123456789">>),
		T0 = now_ms(),
		{Result, Data} = recv_all(S, 4000),
		Elapsed = now_ms() - T0,
		?assertEqual(closed, Result),
		%% Either nothing or a 408 before the close; never a 200.
		?assert(Data =:= <<>> orelse binary:longest_common_prefix([Data,
			<<"HTTP/1.1 408 Request Timeout\r\n">>]) =:= 30, {data, Data}),
		?assert(Elapsed >= 900 andalso Elapsed < 2500, {elapsed, Elapsed})
	end).

%% RFC 9110 10.1.1 Expect.

expect_continue_sent_on_read(Config) ->
	doc("With Expect: 100-continue, HTTP/1.1 100 Continue is sent when the handler "
		"reads the body, then the final response. (RFC 9110 10.1.1)"),
	S = connect(port(Config)),
	ok = send(S, <<"POST /echo/read_body HTTP/1.1\r\nhost: localhost\r\n"
		"content-length: 5\r\nexpect: 100-continue\r\n\r\n">>),
	?assertMatch(#{raw := <<"HTTP/1.1 100 Continue\r\n\r\n">>}, recv_response(S)),
	ok = send(S, <<"hello">>),
	?assertEqual(<<"hello">>, echoed(recv_response(S))),
	%% The connection is reused.
	ok = send(S, get_req("/")),
	hello(recv_response(S)),
	close(S).

expect_continue_not_sent_without_read(Config) ->
	doc("With Expect: 100-continue and a handler that replies without reading the "
		"body, no 100 Continue is sent and the connection closes after the response. "
		"(RFC 9110 10.1.1)"),
	S = connect(port(Config)),
	ok = send(S, <<"POST /no_read HTTP/1.1\r\nhost: localhost\r\n"
		"content-length: 5\r\nexpect: 100-continue\r\n\r\n">>),
	%% The first response is the final one.
	Resp = recv_response(S),
	?assertMatch(#{status := 200, body := <<"not read">>}, Resp),
	?assertEqual(ok, wait_closed(S, 2000)).

%% Handler failures.

handler_crash(Config) ->
	doc("A handler crash before any response gives 500 and closes the connection; "
		"the server still serves new connections."),
	S = connect(port(Config)),
	ok = send(S, get_req("/crash")),
	Resp = recv_response(S),
	?assertMatch(#{status := 500, reason := <<"Internal Server Error">>, body := <<>>}, Resp),
	?assertEqual(<<"0">>, header(<<"content-length">>, Resp)),
	?assertEqual(<<"close">>, header(<<"connection">>, Resp)),
	?assertEqual(ok, wait_closed(S, 2000)),
	mustang_test:assert_new_connection_ok(port(Config)).

handler_crash_after_stream_reply(Config) ->
	doc("A handler crash after stream_reply closes the connection without a second "
		"response and without the last chunk."),
	S = connect(port(Config)),
	ok = send(S, get_req("/crash_stream")),
	{Result, Data} = recv_all(S, 3000),
	?assertEqual(closed, Result),
	?assertEqual(1, count(<<"HTTP/1.1 ">>, Data)),
	?assertMatch(<<"HTTP/1.1 200 OK\r\n", _/bits>>, Data),
	[_, Body] = binary:split(Data, <<"\r\n\r\n">>),
	?assertEqual(<<"7\r\npartial\r\n">>, Body),
	mustang_test:assert_new_connection_ok(port(Config)).

handler_stale_req(Config) ->
	doc("A handler that replies and returns the Req it was given (without the reply) "
		"produces exactly one response."),
	S = connect(port(Config)),
	ok = send(S, [get_req("/stale"), get_req("/", [{"connection", "close"}])]),
	?assertMatch(#{status := 200, body := <<"stale">>}, recv_response(S)),
	hello(recv_response(S)),
	?assertEqual(ok, wait_closed(S, 2000)).

handler_takes_mustang_message(Config) ->
	doc("A handler running inline that takes every message in its mailbox takes "
		"Mustang's too: its response is sent, then the connection closes (the stream "
		"state is lost, which is logged as an error) and others are served. A request "
		"process has no such message: the connection goes on."),
	S = connect(port(Config)),
	ok = send(S, get_req("/greedy")),
	?assertMatch(#{status := 200, body := <<"greedy">>}, recv_response(S)),
	case mustang_test:mode(Config) of
		inline ->
			?assertEqual(ok, wait_closed(S, 2000));
		process ->
			ok = send(S, get_req("/", [{"connection", "close"}])),
			hello(recv_response(S))
	end,
	mustang_test:assert_new_connection_ok(port(Config)).

handler_no_reply(Config) ->
	doc("A handler that sends nothing gets a 204 with no content-length; the "
		"connection stays open. (RFC 9110 15.3.5)"),
	S = connect(port(Config)),
	ok = send(S, get_req("/no_reply")),
	Resp = recv_response(S),
	?assertMatch(#{status := 204, reason := <<"No Content">>, body := <<>>}, Resp),
	?assertEqual(undefined, header(<<"content-length">>, Resp)),
	ok = send(S, get_req("/")),
	hello(recv_response(S)),
	close(S).

invalid_response_header_crlf(Config) ->
	doc("A response header value with CR LF set by the handler gives a 500, and the "
		"header never reaches the wire (no response splitting)."),
	invalid_response_header(Config, "/invalid_header/crlf").

invalid_response_header_nul(Config) ->
	doc("A response header value with NUL set by the handler gives a 500, and the "
		"header never reaches the wire."),
	invalid_response_header(Config, "/invalid_header/nul").

invalid_response_header_name(Config) ->
	doc("A response header name that is not a token set by the handler gives a 500, "
		"and the header never reaches the wire. (RFC 9110 5.1)"),
	invalid_response_header(Config, "/invalid_header/name").

invalid_response_header(Config, Path) ->
	S = connect(port(Config)),
	ok = send(S, get_req(Path)),
	{Result, Data} = recv_all(S, 3000),
	?assertEqual(closed, Result),
	?assertMatch(<<"HTTP/1.1 500 Internal Server Error\r\n", _/bits>>, Data),
	?assertEqual(1, count(<<"HTTP/1.1 ">>, Data)),
	?assertEqual(nomatch, binary:match(Data, <<"x-injected">>)),
	?assertEqual(nomatch, binary:match(Data, <<"x-bad">>)),
	?assertMatch([_, <<>>], binary:split(Data, <<"\r\n\r\n">>)),
	mustang_test:assert_new_connection_ok(port(Config)).
