%% Graceful drain (mustang:drain/2, stop_listener/1): under a steady mixed
%% load of real clients (wrk over HTTP/1.1 keep-alive, h2load over h2c,
%% Python websockets clients), no request fails; and the steps one by one:
%% HTTP/1.1 responses in flight say connection: close, idle connections
%% close, HTTP/2 sends the two-step GOAWAY of RFC 9113 6.8, Websocket
%% sessions close with 1001, new connections are refused, and the timeout
%% stops what is left.
%%
%% Groups: inline and process (the HTTP/1.1 request_process option).
-module(drain_SUITE).
-compile([export_all, nowarn_export_all]).

-include_lib("common_test/include/ct.hrl").
-include_lib("stdlib/include/assert.hrl").

-import(mustang_test, [python/0, require_python/2, tool/3, start_program/5, kill_os_pid/1]).

all() ->
	[{group, inline}, {group, process}, {group, steps}, {group, control}].

%% The two-step GOAWAY is checked with python-h2 by
%% http2_SUITE:goaway_on_stop (stop_listener/1 drains).
groups() ->
	Modes = [drain_under_load, stop_listener_under_load, inflight_gets_connection_close,
		keepalive_request_in_grace, idle_keepalive_closes],
	[{inline, [], Modes}, {process, [], Modes},
		{steps, [], [new_connections_refused, websocket_closed_1001,
			websocket_h2_closed_1001, timeout_stops_the_rest,
			drained_listener_resumes, drain_unknown_listener]},
		{control, [], [suspend_resume, set_transport_options_when_suspended,
			set_transport_options_refused, set_max_connections_at_run_time, info_counts]}].

init_per_suite(Config) ->
	{ok, _} = application:ensure_all_started(mustang),
	Config.

end_per_suite(_) ->
	ok.

init_per_group(inline, Config) ->
	[{request_process, false} | Config];
init_per_group(process, Config) ->
	[{request_process, true} | Config];
init_per_group(_, Config) ->
	[{request_process, false} | Config].

end_per_group(_, _) ->
	ok.

init_per_testcase(Case, Config) ->
	[{ref, {?MODULE, Case, ?config(request_process, Config)}} | Config].

end_per_testcase(_, Config) ->
	_ = mustang:stop_listener(?config(ref, Config)),
	ok.

start(Config, Delay) ->
	start(Config, Delay, #{}).

start(Config, Delay, TransOpts) ->
	%% 1: slow requests in flight, 2: slow requests done, 3: HTTP/2 requests
	%% the server saw, 4: HTTP/2 requests it answered with 200.
	Counters = counters:new(4, []),
	Dispatch = mustang_router:compile([{'_', [
		{"/", hello_h, []},
		{"/slow", drain_slow_h, #{delay => Delay, counters => Counters}},
		{"/ws", ws_echo_h, #{}},
		{"/ws_short", ws_echo_h, #{ws_opts => #{close_timeout => 200}}}
	]}]),
	{ok, _} = mustang:start_clear(?config(ref, Config),
		maps:merge(#{port => 0, num_acceptors => 4}, TransOpts),
		#{env => #{dispatch => Dispatch}, request_process => ?config(request_process, Config),
			enable_connect_protocol => true,
			stream_handlers => [mustang_metrics_h, mustang_stream_h],
			metrics_callback => fun(Metrics) -> count_http2(Counters, Metrics) end}),
	{mustang:get_port(?config(ref, Config)), Counters}.

count_http2(Counters, #{req := #{version := 'HTTP/2'}} = Metrics) ->
	counters:add(Counters, 3, 1),
	_ = maps:get(resp_status, Metrics, undefined) =:= 200 andalso counters:add(Counters, 4, 1),
	ok;
count_http2(_, _) ->
	ok.

%% Under load.

drain_under_load(Config) ->
	Ref = ?config(ref, Config),
	under_load(Config, fun() -> mustang:drain(Ref, 15000) end).

stop_listener_under_load(Config) ->
	Ref = ?config(ref, Config),
	under_load(Config, fun() -> mustang:stop_listener(Ref) end).

under_load(Config, Stop) ->
	Python = require_python(python(), ["websockets"]),
	Wrk = tool("wrk", "MUSTANG_WRK", []),
	H2load = tool("h2load", "MUSTANG_H2LOAD", []),
	{Port, Counters} = start(Config, 50),
	Url = "http://127.0.0.1:" ++ integer_to_list(Port),
	NumWs = 10,
	{WsPort, WsPid, _} = start_program(Python, [data(Config, "ws_clients.py"),
		"ws://127.0.0.1:" ++ integer_to_list(Port) ++ "/ws", integer_to_list(NumWs)],
		[], "^ready", 30000),
	WrkPort = open_program(Wrk, ["-t1", "-c8", "-d60s", "-s", data(Config, "mixed.lua"), Url ++ "/"]),
	H2Port = open_program(H2load, ["-n", "2000000", "-c", "4", "-m", "4",
		Url ++ "/", Url ++ "/slow"]),
	%% h2load --h1 counts the requests it started and those that succeeded:
	%% the exact account over HTTP/1.1 that wrk's summary does not give.
	H1Port = open_program(H2load, ["--h1", "-n", "2000000", "-c", "4",
		Url ++ "/", Url ++ "/slow"]),
	%% Steady load for a while.
	timer:sleep(2000),
	InFlight = counters:get(Counters, 1),
	DoneBefore = counters:get(Counters, 2),
	T0 = erlang:monotonic_time(millisecond),
	ok = Stop(),
	Took = erlang:monotonic_time(millisecond) - T0,
	InFlightAfter = counters:get(Counters, 1),
	Refused = gen_tcp:connect("127.0.0.1", Port, [binary, {active, false}], 5000),
	timer:sleep(200),
	{os_pid, WrkPid} = erlang:port_info(WrkPort, os_pid),
	_ = os:cmd("kill -INT " ++ integer_to_list(WrkPid)),
	WrkOut = collect(WrkPort, 30000),
	H2Out = collect(H2Port, 60000),
	H1Out = collect(H1Port, 60000),
	WsOut = collect(WsPort, 30000),
	kill_os_pid(WsPid),
	Wrk1 = parse_wrk(WrkOut),
	H21 = parse_h2load(H2Out),
	H11 = parse_h2load(H1Out),
	WsCodes = [Code || <<"close ", Rest/binary>> <- binary:split(WsOut, <<"\n">>, [global]),
		[Code, _] <- [binary:split(Rest, <<" ">>)]],
	ct:pal("drain: ~b ms; slow requests in flight at the start: ~b (~b done before); "
		"in flight at the return: ~b~n"
		"wrk (HTTP/1.1): ~b completed, ~b non-2xx, ~b read errors, ~b timeouts, ~b responses "
		"with connection: close; ~b write errors + ~b connect errors (wrk counts a "
		"reconnection refused after the drain as a write error)~n"
		"h2load --h1 (HTTP/1.1): ~b completed, ~b failed among those started (~b started), "
		"~b non-2xx, ~b never started (refused after the drain)~n"
		"h2load (h2c): ~b completed, ~b failed among those started (~b started), "
		"~b non-2xx, ~b never started (refused after the drain)~n"
		"websocket: close codes ~p~n"
		"new connection after the drain: ~p",
		[Took, InFlight, DoneBefore, InFlightAfter,
			maps:get(requests, Wrk1), maps:get(non2xx, Wrk1), maps:get(read, Wrk1),
			maps:get(timeout, Wrk1), maps:get(closes, Wrk1), maps:get(write, Wrk1),
			maps:get(connect, Wrk1),
			maps:get(succeeded, H11), maps:get(started, H11) - maps:get(succeeded, H11),
			maps:get(started, H11), maps:get(non2xx, H11),
			maps:get(total, H11) - maps:get(started, H11),
			maps:get(succeeded, H21), maps:get(started, H21) - maps:get(succeeded, H21),
			maps:get(started, H21), maps:get(non2xx, H21),
			maps:get(total, H21) - maps:get(started, H21), WsCodes, Refused]),
	%% The load was there, and reached the slow route.
	?assert(maps:get(requests, Wrk1) > 0),
	?assert(maps:get(succeeded, H21) > 0),
	?assert(InFlight > 0),
	%% Zero failed requests.
	?assertEqual({0, 0, 0}, {maps:get(non2xx, Wrk1), maps:get(read, Wrk1),
		maps:get(timeout, Wrk1)}),
	%% Each of wrk's 8 connections was told to close: none was closed under
	%% a request (which wrk would count as a read error).
	?assert(maps:get(closes, Wrk1) >= 8),
	?assert(maps:get(succeeded, H11) > 0),
	?assertEqual(maps:get(started, H11), maps:get(succeeded, H11)),
	?assertEqual(0, maps:get(non2xx, H11)),
	%% h2c: nghttp2 refuses to send a request it was given after the first
	%% GOAWAY came (NGHTTP2_ERR_START_STREAM_NOT_ALLOWED), and h2load counts
	%% it started and not succeeded. Such a request never reached the server:
	%% what counts is that every request the server saw was answered, and
	%% that every answer reached the client.
	H2Seen = counters:get(Counters, 3),
	H2Answered = counters:get(Counters, 4),
	ct:pal("h2c: the server saw ~b requests and answered ~b; h2load: ~b succeeded, "
		"~b started and never sent (refused by the client after the GOAWAY)",
		[H2Seen, H2Answered, maps:get(succeeded, H21),
			maps:get(started, H21) - maps:get(succeeded, H21)]),
	?assert(maps:get(succeeded, H21) > 0),
	?assertEqual(H2Seen, H2Answered),
	?assertEqual(H2Answered, maps:get(succeeded, H21)),
	?assertEqual(0, maps:get(non2xx, H21)),
	?assertEqual(lists:duplicate(NumWs, <<"1001">>), WsCodes),
	%% The drain returned once the last request ended, before its timeout.
	?assertEqual(0, InFlightAfter),
	?assert(Took < 15000),
	{error, econnrefused} = Refused,
	ok.

data(Config, File) ->
	filename:join(?config(data_dir, Config), File).

open_program(Exe, Args) ->
	open_port({spawn_executable, Exe}, [{args, Args}, binary, exit_status, stderr_to_stdout,
		use_stdio, hide]).

%% A program's output until it exits ({line, _} ports included).
collect(Port, Timeout) ->
	Deadline = erlang:monotonic_time(millisecond) + Timeout,
	collect(Port, Deadline, []).

collect(Port, Deadline, Acc) ->
	receive
		{Port, {data, {eol, Line}}} -> collect(Port, Deadline, [[Line, $\n] | Acc]);
		{Port, {data, {noeol, Line}}} -> collect(Port, Deadline, [Line | Acc]);
		{Port, {data, Data}} -> collect(Port, Deadline, [Data | Acc]);
		{Port, {exit_status, _}} -> iolist_to_binary(lists:reverse(Acc))
	after max(0, Deadline - erlang:monotonic_time(millisecond)) ->
		Out = iolist_to_binary(lists:reverse(Acc)),
		mustang_test:kill_port(Port),
		ct:fail("program still running; output so far:~n~ts", [Out])
	end.

parse_wrk(Out) ->
	ct:log("wrk:~n~ts", [Out]),
	{match, [Requests]} = re:run(Out, "(\\d+) requests in", [{capture, all_but_first, binary}]),
	Errors = case re:run(Out, "Socket errors: connect (\\d+), read (\\d+), write (\\d+), timeout (\\d+)",
			[{capture, all_but_first, binary}]) of
		{match, E} -> [binary_to_integer(X) || X <- E];
		nomatch -> [0, 0, 0, 0]
	end,
	Non2xx = case re:run(Out, "Non-2xx or 3xx responses: (\\d+)", [{capture, all_but_first, binary}]) of
		{match, [N]} -> binary_to_integer(N);
		nomatch -> 0
	end,
	Counts = maps:from_list(lists:zip([connect, read, write, timeout], Errors)),
	{match, [Closes]} = re:run(Out, "closes (\\d+)", [{capture, all_but_first, binary}]),
	Counts#{requests => binary_to_integer(Requests), non2xx => Non2xx,
		closes => binary_to_integer(Closes)}.

parse_h2load(Out) ->
	ct:log("h2load:~n~ts", [Out]),
	{match, R} = re:run(Out, "requests: (\\d+) total, (\\d+) started, (\\d+) done, (\\d+) succeeded, "
		"(\\d+) failed, (\\d+) errored", [{capture, all_but_first, binary}]),
	{match, S} = re:run(Out, "status codes: (\\d+) 2xx, (\\d+) 3xx, (\\d+) 4xx, (\\d+) 5xx",
		[{capture, all_but_first, binary}]),
	[Total, Started, Done, Succeeded, Failed, Errored] = [binary_to_integer(X) || X <- R],
	[_, S3, S4, S5] = [binary_to_integer(X) || X <- S],
	#{total => Total, started => Started, done => Done, succeeded => Succeeded,
		failed => Failed, errored => Errored, non2xx => S3 + S4 + S5}.

%% One step at a time.

raw_get(Port, Path) ->
	{ok, S} = gen_tcp:connect("127.0.0.1", Port, [binary, {active, false}]),
	ok = gen_tcp:send(S, ["GET ", Path, " HTTP/1.1\r\nhost: localhost\r\n\r\n"]),
	S.

%% Status line and head of one response, as one binary, and its body.
response(S) ->
	#{raw := Raw, body := Body} = mustang_test:recv_response(S),
	[Head | _] = binary:split(Raw, <<"\r\n\r\n">>),
	{Head, Body}.

has_close(Head) ->
	binary:match(string:lowercase(Head), <<"\r\nconnection: close">>) =/= nomatch.

async_drain(Ref, Timeout) ->
	Self = self(),
	spawn_link(fun() ->
		T0 = erlang:monotonic_time(millisecond),
		Res = mustang:drain(Ref, Timeout),
		Self ! {drained, Res, erlang:monotonic_time(millisecond) - T0}
	end).

drained() ->
	receive {drained, Res, Took} -> {Res, Took}
	after 20000 -> ct:fail("drain/2 did not return")
	end.

inflight_gets_connection_close(Config) ->
	{Port, Counters} = start(Config, 500),
	S = raw_get(Port, "/slow"),
	wait_inflight(Counters, 1),
	async_drain(?config(ref, Config), 10000),
	{Head, Body} = response(S),
	?assertMatch(<<"HTTP/1.1 200", _/binary>>, Head),
	?assertEqual(<<"slow">>, Body),
	?assert(has_close(Head)),
	{error, closed} = gen_tcp:recv(S, 0, 5000),
	{ok, Took} = drained(),
	?assert(Took < 10000),
	?assertEqual(0, mustang:active_connections(?config(ref, Config))).

%% A keep-alive client may send its next request just as the drain starts:
%% it is answered, with connection: close.
keepalive_request_in_grace(Config) ->
	{Port, _} = start(Config, 0),
	S = raw_get(Port, "/"),
	{Head1, _} = response(S),
	?assertNot(has_close(Head1)),
	async_drain(?config(ref, Config), 10000),
	timer:sleep(50),
	ok = gen_tcp:send(S, "GET / HTTP/1.1\r\nhost: localhost\r\n\r\n"),
	{Head2, <<"Hello world!">>} = response(S),
	?assert(has_close(Head2)),
	{error, closed} = gen_tcp:recv(S, 0, 5000),
	{ok, _} = drained().

%% A keep-alive connection that sends nothing closes after the short grace
%% (1 s), not at the timeout.
idle_keepalive_closes(Config) ->
	{Port, _} = start(Config, 0),
	S = raw_get(Port, "/"),
	{_, <<"Hello world!">>} = response(S),
	async_drain(?config(ref, Config), 10000),
	{error, closed} = gen_tcp:recv(S, 0, 5000),
	{ok, Took} = drained(),
	ct:pal("idle keep-alive connection: drain took ~b ms", [Took]),
	?assert(Took >= 200),
	?assert(Took < 5000).

new_connections_refused(Config) ->
	Ref = ?config(ref, Config),
	{Port, Counters} = start(Config, 1000),
	S = raw_get(Port, "/slow"),
	wait_inflight(Counters, 1),
	running = mustang:get_status(Ref),
	async_drain(Ref, 10000),
	wait_status(Ref, draining),
	%% While a request is still in flight, the port refuses connections.
	1 = counters:get(Counters, 1),
	{error, econnrefused} = gen_tcp:connect("127.0.0.1", Port, [binary], 5000),
	#{status := draining, active_connections := 1} = mustang:info(Ref),
	{_, <<"slow">>} = response(S),
	{ok, _} = drained(),
	#{status := draining, active_connections := 0} = mustang:info(Ref).

websocket_closed_1001(Config) ->
	Ref = ?config(ref, Config),
	{Port, _} = start(Config, 0),
	{ok, S} = gen_tcp:connect("127.0.0.1", Port, [binary, {active, false}]),
	ok = gen_tcp:send(S, ["GET /ws HTTP/1.1\r\nhost: localhost\r\nconnection: upgrade\r\n"
		"upgrade: websocket\r\nsec-websocket-version: 13\r\n"
		"sec-websocket-key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n"]),
	{ok, <<"HTTP/1.1 101", _/binary>> = Handshake} = gen_tcp:recv(S, 0, 5000),
	?assertNotEqual(nomatch, binary:match(Handshake, <<"\r\n\r\n">>)),
	#{connections := #{websocket := 1}} = mustang:info(Ref),
	async_drain(Ref, 10000),
	%% A close frame, unmasked, with code 1001.
	{ok, <<1:1, 0:3, 8:4, 0:1, 2:7, 1001:16>>} = gen_tcp:recv(S, 4, 5000),
	%% The client answers; the server closes.
	ok = gen_tcp:send(S, <<1:1, 0:3, 8:4, 1:1, 2:7, 0:32, 1001:16>>),
	{error, closed} = gen_tcp:recv(S, 0, 5000),
	{ok, _} = drained().

%% Websocket over HTTP/2 (RFC 8441): the session gets 1001 too, inside the
%% stream; the client here does not answer the close, so the session ends
%% after its close_timeout (200 ms), and the drain with it.
websocket_h2_closed_1001(Config) ->
	Ref = ?config(ref, Config),
	{Port, _} = start(Config, 0),
	{ok, H2} = mustang_h2_client:connect(tcp, "127.0.0.1", Port, #{}),
	{ok, StreamID} = mustang_h2_client:request(H2, <<"CONNECT">>, "/ws_short",
		[{<<":protocol">>, <<"websocket">>}, {<<"sec-websocket-version">>, <<"13">>}], nofin),
	[Conn] = [Pid || {_, Sup} <- mustang_registry:get_conns_sups(Ref),
		{_, Pid, _, _} <- supervisor:which_children(Sup)],
	wait_until(fun() -> length(supervisor:which_children(Conn)) =:= 1 end),
	%% The session asks the connection for its data before its loop starts.
	timer:sleep(200),
	async_drain(Ref, 10000),
	{ok, #{status := 200, body := Body}} = mustang_h2_client:await(H2, StreamID, 10000),
	<<1:1, 0:3, 8:4, 0:1, 2:7, 1001:16>> = Body,
	{ok, Took} = drained(),
	?assert(Took < 5000).

%% Requests still running at the timeout are stopped: drain/2 returns then.
timeout_stops_the_rest(Config) ->
	Ref = ?config(ref, Config),
	{Port, Counters} = start(Config, 20000),
	S = raw_get(Port, "/slow"),
	wait_inflight(Counters, 1),
	async_drain(Ref, 300),
	{ok, Took} = drained(),
	ct:pal("drain with a request longer than its 300 ms timeout took ~b ms", [Took]),
	?assert(Took >= 250),
	?assert(Took < 5000),
	{error, closed} = gen_tcp:recv(S, 0, 5000),
	0 = mustang:active_connections(Ref).

drained_listener_resumes(Config) ->
	Ref = ?config(ref, Config),
	{Port, _} = start(Config, 0),
	ok = mustang:drain(Ref, 1000),
	{error, econnrefused} = gen_tcp:connect("127.0.0.1", Port, [binary], 5000),
	ok = mustang:resume_listener(Ref),
	running = mustang:get_status(Ref),
	%% Same port (it was chosen by the system: port 0).
	Port = mustang:get_port(Ref),
	S = raw_get(Port, "/"),
	{Head, <<"Hello world!">>} = response(S),
	?assertNot(has_close(Head)).

drain_unknown_listener(_) ->
	{error, not_found} = mustang:drain({?MODULE, no_such_listener}, 1000),
	{error, not_found} = mustang:stop_listener({?MODULE, no_such_listener}),
	%% The queries fail with badarg (as Ranch's), none answers as if it existed.
	Ref = {?MODULE, no_such_listener},
	[{'EXIT', {badarg, _}} = catch F() || F <- [
		fun() -> mustang:get_status(Ref) end,
		fun() -> mustang:info(Ref) end,
		fun() -> mustang:get_port(Ref) end,
		fun() -> mustang:get_max_connections(Ref) end,
		fun() -> mustang:set_max_connections(Ref, 10) end,
		fun() -> mustang:active_connections(Ref) end]],
	ok.

wait_inflight(Counters, N) ->
	wait_until(fun() -> counters:get(Counters, 1) >= N end).

wait_status(Ref, Status) ->
	wait_until(fun() -> mustang:get_status(Ref) =:= Status end).

wait_until(Fun) ->
	ok = mustang_test:wait_until(Fun, 5000).

%% Run-time control, as Ranch's functions of the same names.

suspend_resume(Config) ->
	Ref = ?config(ref, Config),
	{Port, _} = start(Config, 0),
	S = raw_get(Port, "/"),
	{_, <<"Hello world!">>} = response(S),
	ok = mustang:suspend_listener(Ref),
	ok = mustang:suspend_listener(Ref),
	suspended = mustang:get_status(Ref),
	{error, econnrefused} = gen_tcp:connect("127.0.0.1", Port, [binary], 5000),
	%% The connection open goes on, with keep-alive.
	ok = gen_tcp:send(S, "GET / HTTP/1.1\r\nhost: localhost\r\n\r\n"),
	{Head, <<"Hello world!">>} = response(S),
	?assertNot(has_close(Head)),
	1 = mustang:active_connections(Ref),
	ok = mustang:resume_listener(Ref),
	ok = mustang:resume_listener(Ref),
	running = mustang:get_status(Ref),
	Port = mustang:get_port(Ref),
	S2 = raw_get(Port, "/"),
	{_, <<"Hello world!">>} = response(S2),
	2 = mustang:active_connections(Ref),
	{error, not_found} = mustang:suspend_listener({?MODULE, none}),
	{error, not_found} = mustang:resume_listener({?MODULE, none}).

set_transport_options_refused(Config) ->
	Ref = ?config(ref, Config),
	_ = start(Config, 0),
	{error, running} = mustang:set_transport_options(Ref, #{port => 0}),
	ok = mustang:suspend_listener(Ref),
	{error, {cannot_change, [num_conns_sups]}} =
		mustang:set_transport_options(Ref, #{num_conns_sups => 7}),
	{error, {invalid_transport_options, [max_connections]}} =
		mustang:set_transport_options(Ref, #{max_connections => -1}),
	{error, {unknown_transport_options, [bogus]}} =
		mustang:set_transport_options(Ref, #{bogus => 1}),
	{error, not_found} = mustang:set_transport_options({?MODULE, none}, #{}),
	%% Nothing changed.
	#{port := 0, num_acceptors := 4} = mustang:get_transport_options(Ref).

%% New options apply when the listener resumes: here another port and
%% max_connections 1.
set_transport_options_when_suspended(Config) ->
	Ref = ?config(ref, Config),
	{Port, _} = start(Config, 0),
	ok = mustang:suspend_listener(Ref),
	%% A free port: bind one, close it, ask for it.
	{ok, L} = gen_tcp:listen(0, []),
	{ok, NewPort} = inet:port(L),
	ok = gen_tcp:close(L),
	ok = mustang:set_transport_options(Ref, #{port => NewPort, num_acceptors => 2,
		max_connections => 1}),
	#{port := NewPort, num_acceptors := 2, max_connections := 1} = mustang:get_transport_options(Ref),
	1 = mustang:get_max_connections(Ref),
	{error, econnrefused} = gen_tcp:connect("127.0.0.1", Port, [binary], 5000),
	ok = mustang:resume_listener(Ref),
	NewPort = mustang:get_port(Ref),
	{error, econnrefused} = gen_tcp:connect("127.0.0.1", Port, [binary], 5000),
	S1 = raw_get(NewPort, "/"),
	{_, <<"Hello world!">>} = response(S1),
	%% max_connections 1: a second client waits until the first leaves.
	S2 = raw_get(NewPort, "/"),
	{error, timeout} = gen_tcp:recv(S2, 0, 300),
	ok = gen_tcp:close(S1),
	{_, <<"Hello world!">>} = response(S2).

%% One acceptor: each acceptor holds a place under the limit while it waits
%% in accept, so a limit lowered at run time can be passed by up to
%% num_acceptors connections.
set_max_connections_at_run_time(Config) ->
	Ref = ?config(ref, Config),
	{Port, _} = start(Config, 0, #{num_acceptors => 1}),
	16384 = mustang:get_max_connections(Ref),
	ok = mustang:set_max_connections(Ref, 1),
	1 = mustang:get_max_connections(Ref),
	S1 = raw_get(Port, "/"),
	{_, <<"Hello world!">>} = response(S1),
	S2 = raw_get(Port, "/"),
	{error, timeout} = gen_tcp:recv(S2, 0, 300),
	1 = mustang:active_connections(Ref),
	%% Raised: the waiting client is served at once.
	ok = mustang:set_max_connections(Ref, 2),
	{_, <<"Hello world!">>} = response(S2),
	2 = mustang:active_connections(Ref),
	%% Lowered below the connections open: they stay, new ones wait.
	ok = mustang:set_max_connections(Ref, 1),
	ok = gen_tcp:send(S1, "GET / HTTP/1.1\r\nhost: localhost\r\n\r\n"),
	{_, <<"Hello world!">>} = response(S1),
	S3 = raw_get(Port, "/"),
	{error, timeout} = gen_tcp:recv(S3, 0, 300),
	ok = mustang:set_max_connections(Ref, infinity),
	infinity = mustang:get_max_connections(Ref),
	{_, <<"Hello world!">>} = response(S3),
	#{max_connections := infinity} = mustang:info(Ref).

info_counts(Config) ->
	Ref = ?config(ref, Config),
	{Port, _} = start(Config, 0),
	#{port := Port, status := running, transport := mustang_tcp, max_connections := 16384,
		active_connections := 0, connections := #{http := 0, http2 := 0, websocket := 0}}
		= mustang:info(Ref),
	S = raw_get(Port, "/"),
	{_, <<"Hello world!">>} = response(S),
	{ok, H2} = mustang_h2_client:connect(tcp, "127.0.0.1", Port, #{}),
	{ok, StreamID} = mustang_h2_client:request(H2, <<"GET">>, "/", [], none),
	{ok, _} = mustang_h2_client:await(H2, StreamID, 5000),
	{ok, Ws} = gen_tcp:connect("127.0.0.1", Port, [binary, {active, false}]),
	ok = gen_tcp:send(Ws, ["GET /ws HTTP/1.1\r\nhost: localhost\r\nconnection: upgrade\r\n"
		"upgrade: websocket\r\nsec-websocket-version: 13\r\n"
		"sec-websocket-key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n"]),
	{ok, <<"HTTP/1.1 101", _/binary>>} = gen_tcp:recv(Ws, 0, 5000),
	wait_until(fun() ->
		maps:get(connections, mustang:info(Ref)) =:= #{http => 1, http2 => 1, websocket => 1}
	end),
	#{active_connections := 3} = mustang:info(Ref),
	ok = gen_tcp:close(Ws),
	ok = mustang_h2_client:close(H2),
	wait_until(fun() ->
		maps:get(connections, mustang:info(Ref)) =:= #{http => 1, http2 => 0, websocket => 0}
	end).
