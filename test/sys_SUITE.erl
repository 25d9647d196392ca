%% Operations: every kind of process Mustang runs answers OTP's sys
%% (get_state, get_status, suspend and resume, change_code while suspended,
%% terminate): HTTP/1.1 and HTTP/2 connections, Websocket processes (over
%% HTTP/1.1, the connection's) and loop handler processes (over HTTP/2,
%% request processes). A suspended process holds its request until resumed.
%% And application:stop(mustang) closes every connection without a crash
%% report.
-module(sys_SUITE).
-compile([export_all, nowarn_export_all]).

-include_lib("common_test/include/ct.hrl").
-include_lib("stdlib/include/assert.hrl").

all() ->
	[http1_connection, http2_connection, websocket_http1, websocket_http2, loop_process,
		loop_inline, application_stop].

init_per_suite(Config) ->
	{ok, _} = application:ensure_all_started(mustang),
	Config.

end_per_suite(_) ->
	ok.

init_per_testcase(Case, Config) ->
	Ref = {?MODULE, Case},
	Dispatch = mustang_router:compile([{'_', [
		{"/", hello_h, []},
		{"/ws", ws_echo_h, #{}},
		{"/loop/:what", loop_h, []}
	]}]),
	{ok, _} = mustang:start_clear(Ref, #{port => 0, shutdown => 1000},
		#{env => #{dispatch => Dispatch}, enable_connect_protocol => true}),
	[{ref, Ref}, {port, mustang:get_port(Ref)} | Config].

end_per_testcase(_, Config) ->
	_ = mustang:stop_listener(?config(ref, Config)),
	ok.

%% The connection processes of a listener.
conns(Ref) ->
	[Pid || {_, Sup} <- mustang_registry:get_conns_sups(Ref),
		{_, Pid, _, _} <- supervisor:which_children(Sup)].

one_conn(Ref) ->
	wait_until(fun() -> length(conns(Ref)) =:= 1 end),
	[Conn] = conns(Ref),
	Conn.

%% get_state, get_status, then: suspended, the request sent by Send waits
%% (Check(300) times out); resumed, it completes (Check(5000)); the code
%% changes while suspended and the process goes on.
sys_checks(Pid, Send, Check) ->
	_ = sys:get_state(Pid),
	{status, Pid, {module, _}, _} = sys:get_status(Pid),
	ok = sys:suspend(Pid),
	Send(),
	timeout = Check(300),
	ok = sys:resume(Pid),
	ok = Check(5000),
	ok = sys:suspend(Pid),
	ok = sys:change_code(Pid, mustang, undefined, []),
	ok = sys:resume(Pid),
	Send(),
	ok = Check(5000).

raw_connect(Port) ->
	{ok, S} = gen_tcp:connect("127.0.0.1", Port, [binary, {active, false}]),
	S.

http1_get(S) ->
	ok = gen_tcp:send(S, "GET / HTTP/1.1\r\nhost: localhost\r\n\r\n").

http1_check(S) ->
	fun(Timeout) ->
		case gen_tcp:recv(S, 0, Timeout) of
			{ok, <<"HTTP/1.1 200", _/binary>> = Data} ->
				case binary:match(Data, <<"Hello world!">>) of
					nomatch -> {ok, <<"Hello world!">>} = gen_tcp:recv(S, 12, Timeout), ok;
					_ -> ok
				end;
			{error, timeout} -> timeout
		end
	end.

http1_connection(Config) ->
	S = raw_connect(?config(port, Config)),
	Conn = one_conn(?config(ref, Config)),
	sys_checks(Conn, fun() -> http1_get(S) end, http1_check(S)),
	ok = sys:terminate(Conn, shutdown),
	{error, closed} = gen_tcp:recv(S, 0, 5000).

http2_connection(Config) ->
	{ok, H2} = mustang_h2_client:connect(tcp, "127.0.0.1", ?config(port, Config), #{}),
	Conn = one_conn(?config(ref, Config)),
	Self = self(),
	Send = fun() ->
		{ok, StreamID} = mustang_h2_client:request(H2, <<"GET">>, "/", [], none),
		Self ! {stream, StreamID}
	end,
	Check = fun(Timeout) ->
		StreamID = receive {stream, Id} -> Id after 0 -> get_last_stream() end,
		put_last_stream(StreamID),
		case mustang_h2_client:await(H2, StreamID, Timeout) of
			{ok, #{status := 200, body := <<"Hello world!">>}} -> ok;
			{error, timeout} -> timeout
		end
	end,
	sys_checks(Conn, Send, Check),
	ok = sys:terminate(Conn, shutdown),
	wait_until(fun() -> conns(?config(ref, Config)) =:= [] end).

%% The test process remembers the stream it awaits between calls of Check.
get_last_stream() ->
	receive {last_stream, Id} -> Id end.

put_last_stream(Id) ->
	self() ! {last_stream, Id}.

ws_handshake(S) ->
	ok = gen_tcp:send(S, ["GET /ws HTTP/1.1\r\nhost: localhost\r\nconnection: upgrade\r\n"
		"upgrade: websocket\r\nsec-websocket-version: 13\r\n"
		"sec-websocket-key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n"]),
	{ok, <<"HTTP/1.1 101", _/binary>>} = gen_tcp:recv(S, 0, 5000),
	ok.

%% A masked text frame "hi", and its echo.
ws_send(S) ->
	ok = gen_tcp:send(S, <<1:1, 0:3, 1:4, 1:1, 2:7, 0:32, "hi">>).

ws_check(S) ->
	fun(Timeout) ->
		case gen_tcp:recv(S, 4, Timeout) of
			{ok, <<1:1, 0:3, 1:4, 0:1, 2:7, "hi">>} -> ok;
			{error, timeout} -> timeout
		end
	end.

websocket_http1(Config) ->
	S = raw_connect(?config(port, Config)),
	ok = ws_handshake(S),
	Conn = one_conn(?config(ref, Config)),
	sys_checks(Conn, fun() -> ws_send(S) end, ws_check(S)),
	ok = sys:terminate(Conn, shutdown),
	{error, closed} = gen_tcp:recv(S, 0, 5000).

%% Websocket over HTTP/2 (RFC 8441): the session is a request process, among
%% the connection's children. (The client here reads the stream's data only
%% once it ends: the checks stop at sys's own answers.)
websocket_http2(Config) ->
	{ok, H2} = mustang_h2_client:connect(tcp, "127.0.0.1", ?config(port, Config), #{}),
	{ok, StreamID} = mustang_h2_client:request(H2, <<"CONNECT">>, "/ws",
		[{<<":protocol">>, <<"websocket">>}, {<<"sec-websocket-version">>, <<"13">>}], nofin),
	Conn = one_conn(?config(ref, Config)),
	wait_until(fun() -> length(supervisor:which_children(Conn)) =:= 1 end),
	[{_, Ws, _, _}] = supervisor:which_children(Conn),
	_ = sys:get_state(Ws),
	{status, Ws, {module, _}, _} = sys:get_status(Ws),
	ok = sys:suspend(Ws),
	ok = sys:change_code(Ws, ws_echo_h, undefined, []),
	ok = sys:resume(Ws),
	_ = sys:get_state(Ws),
	ok = sys:terminate(Ws, shutdown),
	%% The stream ends with the session.
	{ok, #{status := 200}} = mustang_h2_client:await(H2, StreamID, 5000).

%% A loop handler over HTTP/2 runs in a request process.
loop_process(Config) ->
	register(loop_SUITE_notify, self()),
	{ok, H2} = mustang_h2_client:connect(tcp, "127.0.0.1", ?config(port, Config), #{}),
	Send = fun() ->
		{ok, StreamID} = mustang_h2_client:request(H2, <<"GET">>, "/loop/wait", [], none),
		put_last_stream(StreamID)
	end,
	Send(),
	Loop = receive {loop_pid, P} -> P after 5000 -> ct:fail("no loop handler") end,
	_ = sys:get_state(Loop),
	{status, Loop, {module, _}, _} = sys:get_status(Loop),
	StreamID = get_last_stream(),
	ok = sys:suspend(Loop),
	Loop ! {reply, <<"one">>},
	{error, timeout} = mustang_h2_client:await(H2, StreamID, 300),
	ok = sys:resume(Loop),
	{ok, #{status := 200, body := <<"one">>}} = mustang_h2_client:await(H2, StreamID, 5000),
	receive {terminate, wait, stop} -> ok after 5000 -> ct:fail("terminate/3 not called") end,
	%% Code change while suspended, then terminate: terminate/3 runs.
	Send(),
	Loop2 = receive {loop_pid, P2} -> P2 after 5000 -> ct:fail("no loop handler") end,
	StreamID2 = get_last_stream(),
	ok = sys:suspend(Loop2),
	ok = sys:change_code(Loop2, loop_h, undefined, []),
	ok = sys:resume(Loop2),
	_ = sys:get_state(Loop2),
	MRef = monitor(process, Loop2),
	ok = sys:terminate(Loop2, shutdown),
	receive {terminate, wait, shutdown} -> ok;
		{terminate, _, Reason} -> ct:fail("terminate/3 got ~p", [Reason])
	after 5000 -> ct:fail("terminate/3 not called")
	end,
	receive {'DOWN', MRef, process, Loop2, {shutdown, _}} -> ok
	after 5000 -> ct:fail("the loop process did not end")
	end,
	_ = mustang_h2_client:await(H2, StreamID2, 2000),
	unregister(loop_SUITE_notify).

%% A loop handler over HTTP/1.1 in the default inline mode runs in the
%% connection process, which answers sys while the handler waits.
loop_inline(Config) ->
	register(loop_SUITE_notify, self()),
	S = raw_connect(?config(port, Config)),
	ok = gen_tcp:send(S, "GET /loop/wait HTTP/1.1\r\nhost: localhost\r\n\r\n"),
	Conn = receive {loop_pid, P} -> P after 5000 -> ct:fail("no loop handler") end,
	Conn = one_conn(?config(ref, Config)),
	_ = sys:get_state(Conn),
	{status, Conn, {module, _}, _} = sys:get_status(Conn),
	ok = sys:suspend(Conn),
	Conn ! {reply, <<"one">>},
	{error, timeout} = gen_tcp:recv(S, 0, 300),
	ok = sys:change_code(Conn, loop_h, undefined, []),
	ok = sys:resume(Conn),
	#{status := 200, body := <<"one">>} = mustang_test:recv_response(S),
	receive {terminate, wait, stop} -> ok after 5000 -> ct:fail("terminate/3 not called") end,
	%% The connection goes on with the next request; terminate ends it.
	ok = gen_tcp:send(S, "GET /loop/wait HTTP/1.1\r\nhost: localhost\r\n\r\n"),
	Conn = receive {loop_pid, P2} -> P2 after 5000 -> ct:fail("no loop handler") end,
	MRef = monitor(process, Conn),
	ok = sys:terminate(Conn, shutdown),
	%% As in a request process: the handler's terminate/3 gets the reason.
	receive {terminate, wait, shutdown} -> ok;
		{terminate, _, Reason} -> ct:fail("terminate/3 got ~p", [Reason])
	after 5000 -> ct:fail("terminate/3 not called")
	end,
	{error, closed} = gen_tcp:recv(S, 0, 5000),
	receive {'DOWN', MRef, process, Conn, _} -> ok
	after 5000 -> ct:fail("the connection process did not end")
	end,
	unregister(loop_SUITE_notify).

%% application:stop(mustang) with connections of every kind open: all
%% closed, no error logged (crash reports are errors).
application_stop(Config) ->
	Port = ?config(port, Config),
	ok = logger:add_handler(?MODULE, ?MODULE, #{level => error, config => #{pid => self()}}),
	try
		S1 = raw_connect(Port),
		http1_get(S1),
		ok = (http1_check(S1))(5000),
		S2 = raw_connect(Port),
		ok = ws_handshake(S2),
		{ok, H2} = mustang_h2_client:connect(tcp, "127.0.0.1", Port, #{}),
		{ok, Stream} = mustang_h2_client:request(H2, <<"GET">>, "/", [], none),
		{ok, _} = mustang_h2_client:await(H2, Stream, 5000),
		%% A loop handler in flight, in a request process.
		{ok, _} = mustang_h2_client:request(H2, <<"GET">>, "/loop/wait", [], none),
		wait_until(fun() -> length(conns(?config(ref, Config))) =:= 3 end),
		ok = application:stop(mustang),
		{error, closed} = gen_tcp:recv(S1, 0, 5000),
		%% The Websocket got a close frame (1001) first.
		{ok, <<1:1, 0:3, 8:4, 0:1, 2:7, 1001:16>>} = gen_tcp:recv(S2, 4, 5000),
		{error, closed} = gen_tcp:recv(S2, 0, 10000),
		{error, econnrefused} = gen_tcp:connect("127.0.0.1", Port, [], 5000),
		receive {log, Event} -> ct:fail("logged: ~p", [Event])
		after 500 -> ok
		end
	after
		_ = logger:remove_handler(?MODULE),
		{ok, _} = application:ensure_all_started(mustang)
	end.

%% logger handler: forwards events to the test process.
log(Event, #{config := #{pid := Pid}}) ->
	Pid ! {log, Event}.

wait_until(Fun) ->
	ok = mustang_test:wait_until(Fun, 5000).
