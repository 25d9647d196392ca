%% Request limits (protocol options of mustang_http1): each one is tested at
%% the limit (accepted) and one past it (rejected with its exact status), and
%% then the server must still serve a new connection. The group listeners use
%% small limits so the tests are fast; default_* tests use a listener of
%% their own with the defaults. Every test runs in the groups inline and
%% process (request_process => true).
-module(limits_SUITE).
-compile([export_all, nowarn_export_all]).

-include_lib("common_test/include/ct.hrl").
-include_lib("stdlib/include/assert.hrl").

-import(mustang_test, [connect/1, send/2, recv_response/1, recv_response/2, wait_closed/2,
	close/1, get_req/1, get_req/2, header/2, doc/1]).

-define(MAX_REQUEST_LINE, 100).
-define(MAX_METHOD, 10).
-define(MAX_NAME, 20).
-define(MAX_VALUE, 50).
-define(MAX_HEADERS, 5).
-define(MAX_EMPTY_LINES, 3).
-define(MAX_TRAILER, 100).
-define(MAX_CHUNK_EXT, 100).
-define(MAX_SKIP_BODY, 1000).

suite() ->
	[{timetrap, {seconds, 60}}].

all() ->
	mustang_test:common_all().

groups() ->
	mustang_test:common_groups(tests()).

tests() ->
	[
		max_request_line_length_at_limit,
		max_request_line_length_past_limit,
		max_request_line_length_no_end,
		max_method_length_at_limit,
		max_method_length_past_limit,
		max_method_length_no_end,
		max_header_name_length_at_limit,
		max_header_name_length_past_limit,
		max_header_value_length_at_limit,
		max_header_value_length_past_limit,
		max_headers_at_limit,
		max_headers_past_limit,
		max_head_at_limit_byte_by_byte,
		max_empty_lines_at_limit,
		max_empty_lines_past_limit,
		max_trailer_length_at_limit,
		max_trailer_length_past_limit,
		max_chunk_ext_length_at_limit,
		max_chunk_ext_length_past_limit,
		max_skip_body_length_at_limit,
		max_skip_body_length_past_limit,
		max_skip_body_length_chunked_at_limit,
		max_skip_body_length_chunked_past_limit,
		never_ending_header_value,
		never_ending_header_lines,
		default_max_request_line_length_at_limit,
		default_max_request_line_length_past_limit,
		default_never_ending_request_line,
		default_never_ending_headers
	].

routes() ->
	[{'_', [
		{"/", hello_h, []},
		{"/echo/:key", echo_h, []},
		{"/no_read", no_read_body_h, []}
	]}].

small_limits() ->
	#{
		max_request_line_length => ?MAX_REQUEST_LINE,
		max_method_length => ?MAX_METHOD,
		max_header_name_length => ?MAX_NAME,
		max_header_value_length => ?MAX_VALUE,
		max_headers => ?MAX_HEADERS,
		max_empty_lines => ?MAX_EMPTY_LINES,
		max_trailer_length => ?MAX_TRAILER,
		max_chunk_ext_length => ?MAX_CHUNK_EXT,
		max_skip_body_length => ?MAX_SKIP_BODY
	}.

init_per_suite(Config) ->
	{ok, _} = application:ensure_all_started(mustang),
	[{suite, ?MODULE} | Config].

end_per_suite(_) ->
	ok.

init_per_group(Mode, Config) ->
	mustang_test:init_group(Mode, Config, routes(), small_limits()).

end_per_group(_, Config) ->
	mustang_test:end_group(Config).

%% Helpers.

port(Config) -> mustang_test:port(Config).

pad(N) -> binary:copy(<<"a">>, N).

%% A request line of exactly Length bytes (CRLF not counted).
request_line(Length) ->
	Pad = Length - byte_size(<<"GET /? HTTP/1.1">>),
	[<<"GET /?">>, pad(Pad), <<" HTTP/1.1\r\n">>].

assert_accepted(Port, Request) ->
	S = connect(Port),
	ok = send(S, Request),
	Resp = recv_response(S),
	?assertMatch(#{status := 200, body := <<"Hello world!">>}, Resp),
	?assertEqual(undefined, header(<<"connection">>, Resp)),
	close(S).

assert_rejected(Port, Request, Status) ->
	S = connect(Port),
	ok = send(S, Request),
	Resp = recv_response(S),
	?assertMatch(#{version := <<"HTTP/1.1">>, status := Status, body := <<>>}, Resp),
	?assertEqual(<<"close">>, header(<<"connection">>, Resp)),
	?assertEqual(ok, wait_closed(S, 2000)),
	close(S),
	mustang_test:assert_new_connection_ok(Port).

%% Sends Piece until a response arrives or Max bytes were sent, giving the
%% server 10 ms after each piece to answer; returns the response and the
%% number of bytes sent before it arrived. The tests allow the response to
%% come up to 10 pieces after the limit was passed.
send_until_response(Port, First, Piece, Max) ->
	S = connect(Port),
	ok = send(S, First),
	send_loop(S, Piece, iolist_size(First), Max).

send_loop(S, _, Sent, Max) when Sent >= Max ->
	{recv_response(S, #{timeout => 2000}), Sent, S};
send_loop(S, Piece, Sent, Max) ->
	case send(S, Piece) of
		ok ->
			case recv_response(S, #{timeout => 10}) of
				{error, timeout} -> send_loop(S, Piece, Sent + byte_size(Piece), Max);
				Resp -> {Resp, Sent + byte_size(Piece), S}
			end;
		{error, _} ->
			%% The server closed: its response is waiting to be read.
			{recv_response(S, #{timeout => 2000}), Sent, S}
	end.

assert_rejected_early(Port, First, Piece, Max, Status, MaxSent) ->
	{Resp, Sent, S} = send_until_response(Port, First, Piece, Max),
	?assertMatch(#{status := Status, body := <<>>}, Resp),
	?assertEqual(<<"close">>, header(<<"connection">>, Resp)),
	ct:log("~b bytes sent before the response", [Sent]),
	?assert(Sent =< MaxSent, {sent, Sent}),
	close(S),
	mustang_test:assert_new_connection_ok(Port).

with_default_listener(Name, Config, Fun) ->
	Ref = mustang_test:ref(Name, Config),
	Port = mustang_test:start_listener(Ref, routes(), mustang_test:mode(Config), #{}),
	try
		Fun(Port)
	after
		mustang_test:stop_listener(Ref)
	end.

%% max_request_line_length.

max_request_line_length_at_limit(Config) ->
	doc("A request line of exactly max_request_line_length bytes is accepted. (RFC 9112 3)"),
	assert_accepted(port(Config), [request_line(?MAX_REQUEST_LINE), <<"host: localhost\r\n\r\n">>]).

max_request_line_length_past_limit(Config) ->
	doc("A request line one byte longer than max_request_line_length gets 414. (RFC 9112 3)"),
	assert_rejected(port(Config),
		[request_line(?MAX_REQUEST_LINE + 1), <<"host: localhost\r\n\r\n">>], 414).

max_request_line_length_no_end(Config) ->
	doc("A request line with no end yet longer than max_request_line_length gets 414 "
		"without waiting for the rest. (RFC 9112 3)"),
	assert_rejected(port(Config), [<<"GET /?">>, pad(?MAX_REQUEST_LINE)], 414).

%% max_method_length.

max_method_length_at_limit(Config) ->
	doc("A method of exactly max_method_length characters is accepted. (RFC 9112 3)"),
	Method = binary:copy(<<"M">>, ?MAX_METHOD),
	assert_accepted(port(Config), [Method, <<" / HTTP/1.1\r\nhost: localhost\r\n\r\n">>]).

max_method_length_past_limit(Config) ->
	doc("A method longer than max_method_length gets 501. (RFC 9112 3)"),
	Method = binary:copy(<<"M">>, ?MAX_METHOD + 1),
	assert_rejected(port(Config), [Method, <<" / HTTP/1.1\r\nhost: localhost\r\n\r\n">>], 501).

max_method_length_no_end(Config) ->
	doc("A method still growing past max_method_length gets 501 without waiting for "
		"the rest. (RFC 9112 3)"),
	assert_rejected(port(Config), binary:copy(<<"M">>, ?MAX_METHOD + 1), 501).

%% max_header_name_length.

max_header_name_length_at_limit(Config) ->
	doc("A header name of exactly max_header_name_length characters is accepted. "
		"(RFC 9112 5, RFC 6585 5)"),
	Name = [<<"x-">>, binary:copy(<<"n">>, ?MAX_NAME - 2)],
	assert_accepted(port(Config), [get_req("/", [{Name, "v"}])]).

max_header_name_length_past_limit(Config) ->
	doc("A header name longer than max_header_name_length gets 431. (RFC 9112 5, RFC 6585 5)"),
	Name = [<<"x-">>, binary:copy(<<"n">>, ?MAX_NAME - 1)],
	assert_rejected(port(Config), [get_req("/", [{Name, "v"}])], 431).

%% max_header_value_length.

max_header_value_length_at_limit(Config) ->
	doc("A header value of exactly max_header_value_length bytes is accepted. "
		"(RFC 9112 5, RFC 6585 5)"),
	assert_accepted(port(Config), [get_req("/", [{"x-v", pad(?MAX_VALUE)}])]).

max_header_value_length_past_limit(Config) ->
	doc("A header value longer than max_header_value_length gets 431. (RFC 9112 5, RFC 6585 5)"),
	assert_rejected(port(Config), [get_req("/", [{"x-v", pad(?MAX_VALUE + 1)}])], 431).

%% max_headers.

max_headers_at_limit(Config) ->
	doc("A request with exactly max_headers header lines (host included) is accepted. "
		"(RFC 9112 5, RFC 6585 5)"),
	Headers = [{["x-", integer_to_list(N)], "v"} || N <- lists:seq(2, ?MAX_HEADERS)],
	assert_accepted(port(Config), [get_req("/", Headers)]).

max_headers_past_limit(Config) ->
	doc("A request with one header line more than max_headers gets 431. (RFC 9112 5, RFC 6585 5)"),
	Headers = [{["x-", integer_to_list(N)], "v"} || N <- lists:seq(2, ?MAX_HEADERS + 1)],
	assert_rejected(port(Config), [get_req("/", Headers)], 431).

max_head_at_limit_byte_by_byte(Config) ->
	doc("A head with every limit reached (longest request line, max_headers lines with "
		"the longest names and values) is accepted when it arrives one byte at a time. "
		"(RFC 9112 2.2)"),
	Line = iolist_to_binary(request_line(?MAX_REQUEST_LINE)),
	Host = [<<"host: ">>, pad(?MAX_VALUE), <<"\r\n">>],
	Others = [[<<"x-">>, integer_to_binary(N), binary:copy(<<"n">>, ?MAX_NAME - 3), <<": ">>,
		pad(?MAX_VALUE), <<"\r\n">>] || N <- lists:seq(2, ?MAX_HEADERS)],
	Head = iolist_to_binary([Line, Host, Others, <<"\r\n">>]),
	S = connect(port(Config)),
	[ok = send(S, <<C>>) || <<C>> <= Head],
	Resp = recv_response(S),
	?assertMatch(#{status := 200, body := <<"Hello world!">>}, Resp),
	close(S).

%% max_empty_lines.

max_empty_lines_at_limit(Config) ->
	doc("max_empty_lines empty lines before the request line are ignored. (RFC 9112 2.2)"),
	assert_accepted(port(Config), [binary:copy(<<"\r\n">>, ?MAX_EMPTY_LINES), get_req("/")]).

max_empty_lines_past_limit(Config) ->
	doc("One empty line more than max_empty_lines before the request line gets 400. "
		"(RFC 9112 2.2)"),
	assert_rejected(port(Config), [binary:copy(<<"\r\n">>, ?MAX_EMPTY_LINES + 1), get_req("/")],
		400).

%% max_trailer_length.

chunked_with_trailer(TrailerLength) ->
	%% "x-t: " Value CRLF is TrailerLength bytes.
	Value = pad(TrailerLength - 7),
	[<<"POST /echo/read_body HTTP/1.1\r\nhost: localhost\r\ntransfer-encoding: chunked\r\n\r\n"
		"5\r\nhello\r\n0\r\nx-t: ">>, Value, <<"\r\n\r\n">>].

max_trailer_length_at_limit(Config) ->
	doc("A trailer section of exactly max_trailer_length bytes is skipped and the body "
		"read. (RFC 9112 7.1.2)"),
	assert_body_read(port(Config), chunked_with_trailer(?MAX_TRAILER), <<"hello">>).

%% A request to /echo/read_body, whose body the handler reads and echoes as
%% Body, then a pipelined GET / on the same connection.
assert_body_read(Port, Request, Body) ->
	S = connect(Port),
	ok = send(S, [Request, get_req("/")]),
	Echoed = iolist_to_binary(io_lib:format("~0p", [Body])),
	?assertMatch(#{status := 200, body := Echoed}, recv_response(S)),
	?assertMatch(#{status := 200, body := <<"Hello world!">>}, recv_response(S)),
	close(S).

max_trailer_length_past_limit(Config) ->
	doc("A trailer section one byte longer than max_trailer_length gets 431. "
		"(RFC 9112 7.1.2, RFC 6585 5)"),
	assert_rejected(port(Config), chunked_with_trailer(?MAX_TRAILER + 1), 431).

%% max_chunk_ext_length.

%% A chunked body of 1-byte chunks whose extensions add up to ExtLength
%% bytes: ";e" (2 bytes) on each of ext_chunks(ExtLength) chunks "x", the
%% rest (";e=" and at least one byte) on a last data chunk "y".
ext_chunks(ExtLength) ->
	(ExtLength - 4) div 2.

chunked_with_extensions(ExtLength) ->
	Chunks = ext_chunks(ExtLength),
	Last = [<<";e=">>, pad(ExtLength - 2 * Chunks - 3)],
	[<<"POST /echo/read_body HTTP/1.1\r\nhost: localhost\r\ntransfer-encoding: chunked\r\n\r\n">>,
		binary:copy(<<"1;e\r\nx\r\n">>, Chunks), <<"1">>, Last, <<"\r\ny\r\n0\r\n\r\n">>].

max_chunk_ext_length_at_limit(Config) ->
	doc("Chunk extensions adding up to exactly max_chunk_ext_length over the body are "
		"ignored and the body read. (RFC 9112 7.1.1)"),
	assert_body_read(port(Config), chunked_with_extensions(?MAX_CHUNK_EXT),
		<<(binary:copy(<<"x">>, ext_chunks(?MAX_CHUNK_EXT)))/binary, "y">>).

max_chunk_ext_length_past_limit(Config) ->
	doc("Chunk extensions adding up to one byte more than max_chunk_ext_length get 400. "
		"(RFC 9112 7.1.1)"),
	assert_rejected(port(Config), chunked_with_extensions(?MAX_CHUNK_EXT + 1), 400).

%% max_skip_body_length.

max_skip_body_length_at_limit(Config) ->
	doc("An unread body of exactly max_skip_body_length bytes is discarded and the "
		"connection reused. (RFC 9112 9.3)"),
	S = connect(port(Config)),
	ok = send(S, [<<"POST /no_read HTTP/1.1\r\nhost: localhost\r\ncontent-length: ">>,
		integer_to_binary(?MAX_SKIP_BODY), <<"\r\n\r\n">>, pad(?MAX_SKIP_BODY), get_req("/")]),
	Resp = recv_response(S),
	?assertMatch(#{status := 200, body := <<"not read">>}, Resp),
	?assertEqual(undefined, header(<<"connection">>, Resp)),
	?assertMatch(#{status := 200, body := <<"Hello world!">>}, recv_response(S)),
	close(S).

max_skip_body_length_past_limit(Config) ->
	doc("An unread body (content-length) larger than max_skip_body_length: the response "
		"says connection: close and the connection closes. (RFC 9112 9.6, RFC 9110 10.1.1)"),
	Port = port(Config),
	S = connect(Port),
	ok = send(S, [<<"POST /no_read HTTP/1.1\r\nhost: localhost\r\ncontent-length: ">>,
		integer_to_binary(?MAX_SKIP_BODY + 1), <<"\r\n\r\n">>, pad(?MAX_SKIP_BODY + 1)]),
	Resp = recv_response(S),
	?assertMatch(#{status := 200, body := <<"not read">>}, Resp),
	?assertEqual(ok, wait_closed(S, 2000)),
	?assertEqual(<<"close">>, header(<<"connection">>, Resp)),
	close(S),
	mustang_test:assert_new_connection_ok(Port).

chunked_body(Size) ->
	[<<"POST /no_read HTTP/1.1\r\nhost: localhost\r\ntransfer-encoding: chunked\r\n\r\n">>,
		integer_to_binary(Size, 16), <<"\r\n">>, pad(Size), <<"\r\n0\r\n\r\n">>].

max_skip_body_length_chunked_at_limit(Config) ->
	doc("An unread chunked body of exactly max_skip_body_length bytes is discarded and "
		"the connection reused. (RFC 9112 9.3)"),
	S = connect(port(Config)),
	ok = send(S, [chunked_body(?MAX_SKIP_BODY), get_req("/")]),
	?assertMatch(#{status := 200, body := <<"not read">>}, recv_response(S)),
	?assertMatch(#{status := 200, body := <<"Hello world!">>}, recv_response(S)),
	close(S).

max_skip_body_length_chunked_past_limit(Config) ->
	doc("An unread chunked body larger than max_skip_body_length: the connection closes "
		"after the response. (RFC 9112 9.6)"),
	Port = port(Config),
	S = connect(Port),
	ok = send(S, chunked_body(?MAX_SKIP_BODY + 1)),
	?assertMatch(#{status := 200, body := <<"not read">>}, recv_response(S)),
	?assertEqual(ok, wait_closed(S, 2000)),
	close(S),
	mustang_test:assert_new_connection_ok(Port).

%% Input that never ends.

never_ending_header_value(Config) ->
	doc("100 KB of one header value with no end of head: 431 arrives as soon as the "
		"largest head the limits allow is passed, long before it is all sent. (RFC 6585 5)"),
	MaxHead = ?MAX_REQUEST_LINE + ?MAX_HEADERS * (?MAX_NAME + ?MAX_VALUE + 4) + 4,
	assert_rejected_early(port(Config), [get_req_line(), <<"x-v: ">>], pad(1000), 100000, 431,
		MaxHead + 10 * 1000).

never_ending_header_lines(Config) ->
	doc("100 KB of header lines with no end of head: 431 arrives long before it is all "
		"sent. (RFC 6585 5)"),
	MaxHead = ?MAX_REQUEST_LINE + ?MAX_HEADERS * (?MAX_NAME + ?MAX_VALUE + 4) + 4,
	assert_rejected_early(port(Config), get_req_line(),
		binary:copy(<<"x-h: v\r\n">>, 125), 100000, 431,
		MaxHead + 10 * 1000).

get_req_line() ->
	<<"GET / HTTP/1.1\r\nhost: localhost\r\n">>.

%% Default limits.

default_max_request_line_length_at_limit(Config) ->
	doc("With the defaults, a request line of 8000 bytes is accepted. (RFC 9112 3)"),
	with_default_listener(?FUNCTION_NAME, Config, fun(Port) ->
		assert_accepted(Port, [request_line(8000), <<"host: localhost\r\n\r\n">>])
	end).

default_max_request_line_length_past_limit(Config) ->
	doc("With the defaults, a request line of 8001 bytes gets 414. (RFC 9112 3)"),
	with_default_listener(?FUNCTION_NAME, Config, fun(Port) ->
		assert_rejected(Port, [request_line(8001), <<"host: localhost\r\n\r\n">>], 414)
	end).

default_never_ending_request_line(Config) ->
	doc("With the defaults, a request line that never ends (100 KB sent 1 KB at a time) "
		"gets 414 before it is all sent. (RFC 9112 3)"),
	with_default_listener(?FUNCTION_NAME, Config, fun(Port) ->
		assert_rejected_early(Port, <<"GET /?">>, pad(1000), 100000, 414, 8000 + 10 * 1000)
	end).

default_never_ending_headers(Config) ->
	doc("With the defaults, a head that never ends gets 431 once it passes the largest "
		"head the limits allow (416 KB), long before 1 MB is sent. (RFC 6585 5)"),
	with_default_listener(?FUNCTION_NAME, Config, fun(Port) ->
		%% The largest head: request line, 100 lines of 64 + 4096 + 4 bytes, CRLF.
		MaxHead = 14 + 2 + 100 * (64 + 4096 + 4) + 2,
		assert_rejected_early(Port, get_req_line(), <<"x-h: ", (pad(4089))/binary, "\r\n">>,
			1000000, 431, MaxHead + 10 * 4096)
	end).
