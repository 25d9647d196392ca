-module(mustang_conn_chores_tests).
-include_lib("eunit/include/eunit.hrl").

%% active/3: only gen_tcp sockets with active_n > 1 adapt.
active_test_() ->
	[?_assertEqual({adaptive, 100}, mustang_conn_chores:active(mustang_tcp, 100, true)),
	 ?_assertEqual(100, mustang_conn_chores:active(mustang_tcp, 100, false)),
	 ?_assertEqual(1, mustang_conn_chores:active(mustang_tcp, 1, true)),
	 ?_assertEqual(100, mustang_conn_chores:active(mustang_tls, 100, true))].

%% rearm_idle/3 re-arms with {active, 1} when nothing is queued to run, and
%% with {active, N} when processes wait for a scheduler; rearm/3 always
%% with N.
rearm_test_() ->
	{setup, fun socket_pair/0, fun close_pair/1, fun({_, _, Server}) ->
		[?_assertEqual(1, rearm_when_idle(Server, {adaptive, 100}, 50)),
		 ?_assertEqual(100, rearm_idle(Server, {adaptive, 100}, 4 * erlang:system_info(schedulers_online))),
		 ?_assertEqual(100, rearm_when_idle(Server, 100, 50)),
		 ?_assertEqual(100, rearm(Server, {adaptive, 100}))]
	end}.

rearm_idle(Socket, Active, Spinners) ->
	ok = inet:setopts(Socket, [{active, false}]),
	Pids = [spawn(fun spin/0) || _ <- lists:seq(1, Spinners)],
	%% Runnable processes show in the run queues once they were scheduled.
	_ = [wait_queued() || Spinners > 0],
	ok = mustang_conn_chores:rearm_idle(mustang_tcp, Socket, Active),
	_ = [exit(Pid, kill) || Pid <- Pids],
	{ok, [{active, N}]} = inet:getopts(Socket, [active]),
	N.

%% The test VM has processes of its own (eunit's): try when its run queues
%% are empty, a few times.
rearm_when_idle(Socket, Active, Tries) ->
	timer:sleep(5),
	case rearm_idle(Socket, Active, 0) of
		1 -> 1;
		N when Tries =:= 0 -> N;
		_ -> rearm_when_idle(Socket, Active, Tries - 1)
	end.

rearm(Socket, Active) ->
	ok = inet:setopts(Socket, [{active, false}]),
	ok = mustang_conn_chores:rearm(mustang_tcp, Socket, Active),
	{ok, [{active, N}]} = inet:getopts(Socket, [active]),
	N.

spin() -> spin().

wait_queued() ->
	case erlang:statistics(total_run_queue_lengths) of
		0 -> erlang:yield(), wait_queued();
		_ -> ok
	end.

socket_pair() ->
	{ok, Listen} = gen_tcp:listen(0, [binary, {active, false}, {ip, {127, 0, 0, 1}}]),
	{ok, Port} = inet:port(Listen),
	{ok, Client} = gen_tcp:connect({127, 0, 0, 1}, Port, [binary, {active, false}]),
	{ok, Server} = gen_tcp:accept(Listen),
	{Listen, Client, Server}.

close_pair({Listen, Client, Server}) ->
	_ = [gen_tcp:close(S) || S <- [Server, Client, Listen]],
	ok.
