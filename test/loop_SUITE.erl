%% Loop handlers (mustang_loop) over HTTP/1.1 inline and process and HTTP/2
%% (h2c, h2), through the transport-neutral client of mustang_test, and
%% server-sent events from a loop handler read by httpx. The handler is
%% test/handlers/loop_h.erl; it reports its pid and its terminate reason to
%% the test case, registered as loop_SUITE_notify.
-module(loop_SUITE).
-compile([export_all, nowarn_export_all]).

-include_lib("common_test/include/ct.hrl").
-include_lib("stdlib/include/assert.hrl").

-import(mustang_test, [open/1, send_request/5, send_body/4, await/2, close/1,
	doc/1]).

suite() ->
	[{timetrap, {seconds, 60}}].

all() ->
	mustang_test:common_all(all) ++ [httpx_events, h2_stream_reset].

groups() ->
	mustang_test:common_groups(all, tests(), http1_tests()).

tests() ->
	[
		message_reply,
		timeout_info,
		timeout_reset_by_messages,
		stream_events,
		hibernate,
		crash,
		client_close,
		read_body_after_wait,
		lookalike_messages
	].

http1_tests() ->
	[
		pipelined_after_loop,
		keepalive_after_loop
	].

init_per_suite(Config) ->
	{ok, _} = application:ensure_all_started(mustang),
	[{suite, ?MODULE} | Config].

end_per_suite(_) ->
	ok.

init_per_group(Group, Config) ->
	mustang_test:init_group(Group, Config, routes(), #{}).

end_per_group(_, Config) ->
	mustang_test:end_group(Config).

init_per_testcase(_, Config) ->
	true = register(loop_SUITE_notify, self()),
	Config.

end_per_testcase(_, _) ->
	catch unregister(loop_SUITE_notify),
	ok.

routes() ->
	[{'_', [{"/loop/:what", loop_h, []}]}].

get(Config, What) ->
	mustang_test:request(Config, <<"GET">>, <<"/loop/", What/binary>>, [], none, #{timeout => 10000}).

terminate_reason(State) ->
	receive
		{terminate, State, Reason} -> Reason
	after 5000 ->
		error(no_terminate)
	end.

loop_pid() ->
	receive
		{loop_pid, Pid} -> Pid
	after 5000 ->
		error(no_loop_pid)
	end.

%% Tests.

message_reply(Config) ->
	doc("A message received by info/3 answers the request; terminate/3 gets stop."),
	#{status := 200, body := <<"Hello loop">>} = get(Config, <<"reply">>),
	stop = terminate_reason(reply).

timeout_info(Config) ->
	doc("Without messages, info/3 gets `timeout' after the timeout (Cowboy 2.11+); "
		"the handler keeps looping after the first one and stops after the second: "
		"the request ends with 204, as Cowboy answers a loop that ends without a response."),
	T0 = erlang:monotonic_time(millisecond),
	#{status := 204, body := <<>>} = get(Config, <<"timeout">>),
	Elapsed = erlang:monotonic_time(millisecond) - T0,
	?assert(Elapsed >= 400, Elapsed),
	stop = terminate_reason(2).

timeout_reset_by_messages(Config) ->
	doc("Each message restarts the timeout: 5 messages 100 ms apart never reach a 300 ms "
		"timeout (the handler answers 500 if it gets one)."),
	#{status := 200, body := <<"5">>} = get(Config, <<"timeout_reset">>).

stream_events(Config) ->
	doc("A loop handler streams server-sent events from info/3."),
	#{status := 200, headers := Headers, body := Body} = get(Config, <<"events">>),
	{_, <<"text/event-stream">>} = lists:keyfind(<<"content-type">>, 1, Headers),
	<<"id: 1\ndata: event 1\n\nid: 2\ndata: event 2\n\nid: 3\ndata: last\n\n">> = Body,
	stop = terminate_reason(events).

hibernate(Config) ->
	doc("hibernate: a request process hibernates until a message arrives (inline, the "
		"connection process cannot, and the loop goes on the same); the message then "
		"answers the request."),
	Conn = open(Config),
	try
		Ref = send_request(Conn, <<"GET">>, <<"/loop/hibernate">>, [], none),
		Pid = loop_pid(),
		_ = case mustang_test:mode(Config) of
			process ->
				ok = mustang_test:wait_until(fun() ->
					erlang:process_info(Pid, current_function) =:= {current_function, {erlang, hibernate, 3}}
				end, 5000);
			inline ->
				ok
		end,
		Pid ! {reply, <<"woken">>},
		#{status := 200, body := <<"woken">>} = await(Conn, Ref),
		stop = terminate_reason(hibernate)
	after
		close(Conn)
	end.

crash(Config) ->
	doc("A crash in info/3 gives 500; terminate/3 gets {crash, Class, Reason}."),
	#{status := 500} = get(Config, <<"crash">>),
	{crash, error, loop_crash} = terminate_reason(crash).

client_close(Config) ->
	doc("A client that closes the connection while the handler waits ends the loop: "
		"terminate/3 gets {shutdown, connection_closed}, inline (in the connection process) "
		"as in a request process, over HTTP/1.1 and HTTP/2."),
	Conn = open(Config),
	_ = send_request(Conn, <<"GET">>, <<"/loop/wait">>, [], none),
	Pid = loop_pid(),
	MRef = monitor(process, Pid),
	close(Conn),
	{shutdown, connection_closed} = terminate_reason(wait),
	%% The loop's process (or the connection) is gone too.
	receive
		{'DOWN', MRef, process, Pid, _} -> ok
	after 5000 ->
		error({still_alive, Pid})
	end.

read_body_after_wait(Config) ->
	doc("Body bytes that arrive while the loop waits are kept: info/3 reads the whole body."),
	Conn = open(Config),
	try
		Ref = send_request(Conn, <<"POST">>, <<"/loop/read_body">>,
			[{<<"content-length">>, <<"10">>}], nofin),
		ok = send_body(Conn, Ref, nofin, <<"01234">>),
		ok = send_body(Conn, Ref, fin, <<"56789">>),
		#{status := 200, body := <<"0123456789">>} = await(Conn, Ref)
	after
		close(Conn)
	end.

lookalike_messages(Config) ->
	doc("A timer message of the handler's own ({timeout, Ref, Msg}) reaches info/3."),
	#{status := 200, body := <<"mine">>} = get(Config, <<"lookalike">>).

pipelined_after_loop(Config) ->
	doc("A request pipelined behind a loop request arrives while the loop waits (inline: "
		"in the connection's mailbox) and is answered after it, on the same connection."),
	S = mustang_test:connect(mustang_test:port(Config)),
	try
		ok = gen_tcp:send(S, [mustang_test:get_req(<<"/loop/reply">>),
			mustang_test:get_req(<<"/loop/timeout">>)]),
		#{status := 200, body := <<"Hello loop">>} = mustang_test:recv_response(S),
		#{status := 204} = mustang_test:recv_response(S, #{timeout => 5000})
	after
		gen_tcp:close(S)
	end.

keepalive_after_loop(Config) ->
	doc("The connection stays usable after a loop request that timed out."),
	S = mustang_test:connect(mustang_test:port(Config)),
	try
		ok = gen_tcp:send(S, mustang_test:get_req(<<"/loop/timeout">>)),
		#{status := 204} = mustang_test:recv_response(S, #{timeout => 5000}),
		ok = gen_tcp:send(S, mustang_test:get_req(<<"/loop/reply">>)),
		#{status := 200, body := <<"Hello loop">>} = mustang_test:recv_response(S)
	after
		gen_tcp:close(S)
	end.

httpx_events(_) ->
	doc("httpx streams the server-sent events of a loop handler (inline HTTP/1.1) and "
		"sees each event."),
	Python = mustang_test:require_python(mustang_test:python(), ["httpx"]),
	Ref = {?MODULE, httpx},
	Port = mustang_test:start_listener(Ref, routes(), inline, #{}),
	try
		Script = "import httpx, sys\n"
			"with httpx.stream('GET', sys.argv[1], timeout=10) as r:\n"
			"    print(r.status_code, r.headers['content-type'])\n"
			"    for line in r.iter_lines():\n"
			"        if line.startswith('data: '): print(line)\n",
		Url = "http://127.0.0.1:" ++ integer_to_list(Port) ++ "/loop/events",
		{0, Out} = mustang_test:run(Python, ["-c", Script, Url], 30000),
		<<"200 text/event-stream\ndata: event 1\ndata: event 2\ndata: last\n">> = Out
	after
		mustang_test:stop_listener(Ref)
	end.

h2_stream_reset(_) ->
	doc("An HTTP/2 client (python-h2) that resets the stream of a waiting loop handler "
		"ends it with {shutdown, stream_reset}; the connection goes on and serves its "
		"next request."),
	Python = mustang_test:require_python(mustang_test:python(), ["h2"]),
	Ref = {?MODULE, h2_reset},
	Port = mustang_test:start_listener(Ref, routes(), inline, #{}),
	try
		Script = "import socket, sys, time\n"
			"import h2.connection, h2.config, h2.events, h2.errors\n"
			"port = int(sys.argv[1])\n"
			"s = socket.create_connection(('127.0.0.1', port), timeout=10)\n"
			"c = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))\n"
			"c.initiate_connection()\n"
			"def get(path):\n"
			"    sid = c.get_next_available_stream_id()\n"
			"    c.send_headers(sid, [(':method', 'GET'), (':scheme', 'http'),\n"
			"        (':authority', 'localhost'), (':path', path)], end_stream=True)\n"
			"    s.sendall(c.data_to_send())\n"
			"    return sid\n"
			"sid = get('/loop/wait')\n"
			"time.sleep(0.5)\n"
			"c.reset_stream(sid, h2.errors.ErrorCodes.CANCEL)\n"
			"s.sendall(c.data_to_send())\n"
			"sid2 = get('/loop/reply')\n"
			"while True:\n"
			"    data = s.recv(65535)\n"
			"    if not data: break\n"
			"    for e in c.receive_data(data):\n"
			"        if isinstance(e, h2.events.ResponseReceived) and e.stream_id == sid2:\n"
			"            print(dict(e.headers)[b':status'].decode())\n"
			"            sys.exit(0)\n"
			"    s.sendall(c.data_to_send())\n",
		{0, <<"200\n">>} = mustang_test:run(Python, ["-c", Script, integer_to_list(Port)], 30000),
		{shutdown, stream_reset} = terminate_reason(wait)
	after
		mustang_test:stop_listener(Ref)
	end.
