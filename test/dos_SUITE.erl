%% Memory denial of service (Hardening): what one client can make the server
%% hold, and for how long. Each test states the bound it checks.
-module(dos_SUITE).
-compile([export_all, nowarn_export_all]).

-include_lib("common_test/include/ct.hrl").
-include_lib("stdlib/include/assert.hrl").

suite() ->
	[{timetrap, {seconds, 90}}].

all() ->
	[never_reading_client_inline, never_reading_client_process, ws_fragment_amplification,
		client_errors_not_logged, crash_log_rate_limited, trickling_body_inline,
		trickling_body_process, trickling_body_h2c, slow_body_within_rate, trickling_ws_frame].

init_per_suite(Config) ->
	{ok, _} = application:ensure_all_started(mustang),
	Config.

end_per_suite(_) ->
	ok.

dispatch() ->
	mustang_router:compile([{'_', [
		{"/echo", mustang_demo_echo_h, []},
		{"/ws", ws_echo_h, #{}},
		{"/ws/rate", ws_echo_h, #{ws_opts => #{min_recv_rate => {100, 1000}}}},
		{"/crash", crash_h, before_reply},
		{"/read_body", mustang_demo_read_body_h, []},
		{"/", mustang_demo_hello_h, []}
	]}]).

%% A client that posts 20 MB to /echo and never reads the answer (small
%% receive buffer). Before: the answer went to the socket in one write, which
%% returned at once; the connection ended at idle_timeout and its closed
%% socket kept about 17 MB queued for good (outside any process and
%% max_connections). Now the answer goes in pieces, the write blocks,
%% send_timeout (1 s here) ends the connection, and no socket is left with
%% data queued.
never_reading_client_inline(_) ->
	never_reading_client(?FUNCTION_NAME, false).

never_reading_client_process(_) ->
	never_reading_client(?FUNCTION_NAME, true).

never_reading_client(Ref, RequestProcess) ->
	{ok, _} = mustang:start_clear(Ref, #{port => 0, socket_opts => [{send_timeout, 1000}]},
		#{env => #{dispatch => dispatch()}, idle_timeout => 2000,
			request_process => RequestProcess}),
	try
		Port = mustang:get_port(Ref),
		Before = queued_bytes(),
		{ok, S} = gen_tcp:connect("127.0.0.1", Port, [binary, {active, false}, {recbuf, 4096}]),
		Size = 20000000,
		ok = gen_tcp:send(S, [<<"POST /echo HTTP/1.1\r\nhost: x\r\ncontent-length: ">>,
			integer_to_binary(Size), <<"\r\n\r\n">>, binary:copy(<<"z">>, Size)]),
		T0 = erlang:monotonic_time(millisecond),
		%% The connection ends within send_timeout (plus the time to read the
		%% body and a margin for a loaded machine).
		ok = mustang_test:wait_until(fun() -> mustang:active_connections(Ref) =:= 0 end, 15000),
		%% And nothing stays queued in a socket behind it.
		ok = mustang_test:wait_until(fun() -> queued_bytes() - Before < 1000000 end, 5000),
		ct:log("connection gone after ~b ms; bytes queued in sockets: ~b",
			[erlang:monotonic_time(millisecond) - T0, queued_bytes() - Before]),
		%% Others are still served.
		{ok, C} = gen_tcp:connect("127.0.0.1", Port, [binary, {active, false}]),
		ok = gen_tcp:send(C, <<"GET / HTTP/1.1\r\nhost: x\r\n\r\n">>),
		{ok, <<"HTTP/1.1 200 OK", _/bits>>} = gen_tcp:recv(C, 0, 5000),
		gen_tcp:close(C),
		gen_tcp:close(S)
	after
		mustang:stop_listener(Ref)
	end.

%% Bytes queued in every TCP socket of this VM.
queued_bytes() ->
	lists:sum([Pending || P <- erlang:ports(), erlang:port_info(P, name) =:= {name, "tcp_inet"},
		{ok, [{send_pend, Pending}]} <- [inet:getstat(P, [send_pend])]]).

%% A text message sent as 1-byte fragments: before, each fragment was kept
%% as its own list entry, a sub-binary holding on to the socket data it came
%% in: 400 KB of payload took the connection process to tens of MB. Now the
%% message in progress is one binary: the process holds at most a few times
%% the payload. Past max_frame_size (1 MB by default) the connection is
%% closed with 1009.
ws_fragment_amplification(_) ->
	Ref = ?FUNCTION_NAME,
	{ok, _} = mustang:start_clear(Ref, #{port => 0}, #{env => #{dispatch => dispatch()}}),
	try
		Port = mustang:get_port(Ref),
		S = ws_connect(Port, <<"/ws">>),
		[Conn] = connections(Ref),
		{memory, Mem0} = process_info(Conn, memory),
		Payload = 400000,
		ok = gen_tcp:send(S, client_frame(nofin, 1, <<"a">>)),
		ok = send_fragments(S, Payload - 1, 10000),
		timer:sleep(300),
		Held = held_bytes(Conn) - Mem0,
		ct:log("~b bytes of payload in 1-byte fragments: the connection holds ~b bytes more",
			[Payload, Held]),
		?assert(Held < 4 * Payload),
		%% Past the limit: 1009.
		ok = send_fragments(S, 1048576 - Payload + 10, 10000),
		?assertEqual(1009, close_code(S)),
		gen_tcp:close(S)
	after
		mustang:stop_listener(Ref)
	end.

connections(Ref) ->
	[Pid || {_, Sup} <- mustang_registry:get_conns_sups(Ref),
		{_, Pid, _, _} <- supervisor:which_children(Sup)].

%% Process memory and the binaries it references.
held_bytes(Pid) ->
	erlang:garbage_collect(Pid),
	{memory, Mem} = process_info(Pid, memory),
	{binary, Bins} = process_info(Pid, binary),
	Mem + lists:sum([Size || {_, Size, _} <- Bins]).

%% N one-byte continuation frames, sent Batch at a time.
send_fragments(_, 0, _) ->
	ok;
send_fragments(S, N, Batch) ->
	Count = min(N, Batch),
	case gen_tcp:send(S, binary:copy(client_frame(nofin, 0, <<"a">>), Count)) of
		ok -> send_fragments(S, N - Count, Batch);
		{error, _} -> ok
	end.

%% A masked client frame (the zero mask leaves the payload as is).
client_frame(Fin, Opcode, Payload) when byte_size(Payload) < 126 ->
	FinBit = case Fin of fin -> 1; nofin -> 0 end,
	<<FinBit:1, 0:3, Opcode:4, 1:1, (byte_size(Payload)):7, 0:32, Payload/binary>>.

%% The close code of the close frame the server sent.
close_code(S) ->
	close_code(S, <<>>).

close_code(_, <<_:4, 8:4, 0:1, Len:7, Code:16, _/bits>>) when Len >= 2 ->
	Code;
close_code(S, <<_:4, _:4, 0:1, Len:7, _:Len/binary, Rest/bits>>) when Len < 126 ->
	close_code(S, Rest);
close_code(S, Buffer) ->
	case gen_tcp:recv(S, 0, 10000) of
		{ok, Data} -> close_code(S, <<Buffer/binary, Data/binary>>);
		{error, Reason} -> {no_close_frame, Reason}
	end.

%% Client mistakes are the client's problem: 200 malformed requests, over
%% HTTP/1.1 (400) and HTTP/2 (GOAWAY PROTOCOL_ERROR), write no log line at
%% notice or above (before: one notice line each, so an attacker chose the
%% log volume).
client_errors_not_logged(_) ->
	Ref = ?FUNCTION_NAME,
	{ok, _} = mustang:start_clear(Ref, #{port => 0}, #{env => #{dispatch => dispatch()}}),
	ok = logger:add_handler(Ref, log_forward_h, #{config => #{pid => self()}, level => notice}),
	try
		Port = mustang:get_port(Ref),
		[begin
			{ok, S} = gen_tcp:connect("127.0.0.1", Port, [binary, {active, false}]),
			ok = gen_tcp:send(S, Bad),
			{ok, _} = gen_tcp:recv(S, 0, 5000),
			gen_tcp:close(S)
		end || _ <- lists:seq(1, 100), Bad <- [
			<<"GET / HTTP/1.1\r\nhost: x\r\nbad header\r\n\r\n">>,
			<<"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 0, 0, 4, 9, 0, 0, 0, 0, 0, 0, 0, 0, 0>>]],
		timer:sleep(200),
		?assertEqual([], mustang_events())
	after
		_ = logger:remove_handler(Ref),
		mustang:stop_listener(Ref)
	end.

%% A handler that crashes on every request: each crash is an error line, but
%% at most log_rate_limit (10) per second; one more line per second says how
%% many were suppressed. Before: 300 crashes, 300 lines.
crash_log_rate_limited(_) ->
	Ref = ?FUNCTION_NAME,
	{ok, _} = mustang:start_clear(Ref, #{port => 0}, #{env => #{dispatch => dispatch()}}),
	ok = logger:add_handler(Ref, log_forward_h, #{config => #{pid => self()}, level => error}),
	try
		Port = mustang:get_port(Ref),
		T0 = erlang:monotonic_time(millisecond),
		Crashes = 300,
		ok = crash_requests(Port, Crashes),
		Seconds = (erlang:monotonic_time(millisecond) - T0) div 1000 + 1,
		%% The last second's count is written at the next tick.
		timer:sleep(1500),
		Events = mustang_events(),
		Summaries = [E || E <- Events, binary:match(E, <<"suppressed">>) =/= nomatch],
		Crashed = Events -- Summaries,
		ct:log("~b crashes in ~b s: ~b crash lines, ~b summary lines:~n~p",
			[Crashes, Seconds, length(Crashed), length(Summaries), Summaries]),
		?assert(length(Crashed) =< 10 * (Seconds + 1)),
		?assert(length(Crashed) >= 1),
		Suppressed = lists:sum([binary_to_integer(N) || E <- Summaries,
			{match, [N]} <- [re:run(E, "([0-9]+) more", [{capture, all_but_first, binary}])]]),
		?assertEqual(Crashes, length(Crashed) + Suppressed)
	after
		_ = logger:remove_handler(Ref),
		mustang:stop_listener(Ref)
	end.

crash_requests(_, 0) ->
	ok;
crash_requests(Port, N) ->
	{ok, S} = gen_tcp:connect("127.0.0.1", Port, [binary, {active, false}]),
	ok = gen_tcp:send(S, <<"GET /crash HTTP/1.1\r\nhost: x\r\n\r\n">>),
	{ok, <<"HTTP/1.1 500 ", _/bits>>} = gen_tcp:recv(S, 0, 5000),
	gen_tcp:close(S),
	crash_requests(Port, N - 1).

%% The text of the log events received from log_forward_h that came from
%% Mustang (its connections or its modules).
mustang_events() ->
	receive
		{log_event, #{msg := Msg}} ->
			Text = iolist_to_binary(case Msg of
				{report, R} -> io_lib:format("~p", [R]);
				{string, Str} -> Str;
				{Format, Args} -> io_lib:format(Format, Args)
			end),
			case binary:match(Text, <<"mustang">>) of
				nomatch -> mustang_events();
				_ -> [Text | mustang_events()]
			end
	after 0 ->
		[]
	end.

%% A body trickling in at 1 byte every 200 ms (each byte resets idle_timeout)
%% held its connection for as long as the client liked. With min_recv_rate
%% {100, 1000} the request gets 408 and the connection closes once a second
%% brought fewer than 100 bytes.
trickling_body_inline(_) ->
	trickling_body(?FUNCTION_NAME, false).

trickling_body_process(_) ->
	trickling_body(?FUNCTION_NAME, true).

trickling_body(Ref, RequestProcess) ->
	{ok, _} = mustang:start_clear(Ref, #{port => 0}, #{env => #{dispatch => dispatch()},
		request_process => RequestProcess, min_recv_rate => {100, 1000}}),
	try
		Port = mustang:get_port(Ref),
		{ok, S} = gen_tcp:connect("127.0.0.1", Port, [binary, {active, false}]),
		ok = gen_tcp:send(S, <<"POST /read_body HTTP/1.1\r\nhost: x\r\ncontent-length: 1000\r\n\r\n">>),
		T0 = erlang:monotonic_time(millisecond),
		Trickler = spawn_link(fun() -> trickle(S, 1000) end),
		{ok, Resp} = gen_tcp:recv(S, 0, 10000),
		Elapsed = erlang:monotonic_time(millisecond) - T0,
		unlink(Trickler),
		exit(Trickler, kill),
		ct:log("answer after ~b ms: ~p", [Elapsed, Resp]),
		?assertMatch(<<"HTTP/1.1 408 ", _/bits>>, Resp),
		?assert(Elapsed < 5000),
		?assertMatch({error, closed}, recv_until_closed(S))
	after
		mustang:stop_listener(Ref)
	end.

trickle(_, 0) ->
	ok;
trickle(S, N) ->
	case gen_tcp:send(S, <<"x">>) of
		ok -> timer:sleep(200), trickle(S, N - 1);
		_ -> ok
	end.

recv_until_closed(S) ->
	case gen_tcp:recv(S, 0, 5000) of
		{ok, _} -> recv_until_closed(S);
		Error -> Error
	end.

%% A slow body that keeps the minimum rate (200 bytes every 300 ms against
%% 100 per second) is read whole.
slow_body_within_rate(_) ->
	Ref = ?FUNCTION_NAME,
	{ok, _} = mustang:start_clear(Ref, #{port => 0}, #{env => #{dispatch => dispatch()},
		min_recv_rate => {100, 1000}}),
	try
		Port = mustang:get_port(Ref),
		{ok, S} = gen_tcp:connect("127.0.0.1", Port, [binary, {active, false}]),
		ok = gen_tcp:send(S, <<"POST /read_body HTTP/1.1\r\nhost: x\r\ncontent-length: 2000\r\n\r\n">>),
		[begin ok = gen_tcp:send(S, binary:copy(<<"y">>, 200)), timer:sleep(300) end
			|| _ <- lists:seq(1, 10)],
		{ok, Resp} = gen_tcp:recv(S, 0, 10000),
		?assertMatch(<<"HTTP/1.1 200 ", _/bits>>, Resp),
		?assertNotEqual(nomatch, binary:match(Resp, <<"\r\n\r\n2000">>))
	after
		mustang:stop_listener(Ref)
	end.

%% A Websocket frame trickling in at 1 byte every 200 ms: with min_recv_rate
%% {100, 1000} the connection is closed with 1008 once a second brought
%% fewer than 100 bytes of the frame (before: open for as long as the client
%% liked, each byte resetting idle_timeout).
trickling_ws_frame(_) ->
	Ref = ?FUNCTION_NAME,
	{ok, _} = mustang:start_clear(Ref, #{port => 0}, #{env => #{dispatch => dispatch()}}),
	try
		Port = mustang:get_port(Ref),
		S = ws_connect(Port, <<"/ws/rate">>),
		%% A 100-byte text frame, its header first, then its bytes one by one.
		ok = gen_tcp:send(S, <<1:1, 0:3, 1:4, 1:1, 100:7, 0:32>>),
		T0 = erlang:monotonic_time(millisecond),
		Trickler = spawn_link(fun() -> trickle(S, 100) end),
		Code = close_code(S),
		unlink(Trickler),
		exit(Trickler, kill),
		Elapsed = erlang:monotonic_time(millisecond) - T0,
		ct:log("closed with ~p after ~b ms", [Code, Elapsed]),
		?assertEqual(1008, Code),
		?assert(Elapsed < 5000)
	after
		mustang:stop_listener(Ref)
	end.

%% A Websocket connection over HTTP/1.1 (raw socket, handshake done).
ws_connect(Port, Path) ->
	{ok, S} = gen_tcp:connect("127.0.0.1", Port, [binary, {active, false}]),
	ok = gen_tcp:send(S, [<<"GET ">>, Path, <<" HTTP/1.1\r\nhost: x\r\nupgrade: websocket\r\n"
		"connection: upgrade\r\nsec-websocket-key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
		"sec-websocket-version: 13\r\n\r\n">>]),
	{ok, <<"HTTP/1.1 101 ", _/bits>>} = gen_tcp:recv(S, 0, 5000),
	S.

%% The same over HTTP/2 (h2c): one byte per DATA frame every 200 ms; the
%% stream gets 408 once a second brought fewer than 100 bytes, and the
%% connection keeps serving.
trickling_body_h2c(_) ->
	Ref = ?FUNCTION_NAME,
	{ok, _} = mustang:start_clear(Ref, #{port => 0}, #{env => #{dispatch => dispatch()},
		min_recv_rate => {100, 1000}}),
	try
		Port = mustang:get_port(Ref),
		Conn = mustang_test:open([{transport, h2c}], Port),
		StreamID = mustang_test:send_request(Conn, "POST", "/read_body",
			[{"content-length", "1000"}], nofin),
		T0 = erlang:monotonic_time(millisecond),
		Trickler = spawn_link(fun() -> trickle_h2(Conn, StreamID, 1000) end),
		Resp = mustang_test:await(Conn, StreamID, 10000),
		Elapsed = erlang:monotonic_time(millisecond) - T0,
		unlink(Trickler),
		exit(Trickler, kill),
		ct:log("answer after ~b ms: ~p", [Elapsed, Resp]),
		?assertMatch(#{status := 408}, Resp),
		?assert(Elapsed < 5000),
		?assertMatch(#{status := 200}, mustang_test:await(Conn,
			mustang_test:send_request(Conn, "GET", "/", [], none), 5000)),
		mustang_test:close(Conn)
	after
		mustang:stop_listener(Ref)
	end.

trickle_h2(_, _, 0) ->
	ok;
trickle_h2(Conn, StreamID, N) ->
	_ = mustang_test:send_body(Conn, StreamID, nofin, <<"x">>),
	timer:sleep(200),
	trickle_h2(Conn, StreamID, N - 1).
