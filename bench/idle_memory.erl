%% Idle-connection memory, as BENCH.md defines it: N connections each make one
%% request and stay open; the server VM's erlang:memory(total) growth divided
%% by N, as the server leaves it (no forced GC). The client runs in its own VM
%% so that its sockets are not counted.
-module(idle_memory).
-export([server/1]).
-export([client/1]).

%% server([Port, ProtoOptsTerm]): starts the demo handlers on Port with the
%% given extra protocol options and prints memory once a second.
server([PortStr, OptsStr]) ->
	logger:set_primary_config(level, error),
	{ok, _} = application:ensure_all_started(mustang),
	{ok, Tokens, _} = erl_scan:string(OptsStr ++ "."),
	{ok, Extra} = erl_parse:parse_term(Tokens),
	%% Idle keep-alive connections close after request_timeout (5 s by
	%% default); keep them for the measurement.
	Opts = maps:merge((mustang_demo:protocol_opts(#{max_keepalive => infinity}))#{
		request_timeout => 120000}, Extra),
	{ok, _} = mustang:start_clear(idle, #{port => list_to_integer(PortStr),
		max_connections => infinity, num_acceptors => 4}, Opts),
	report().

report() ->
	io:format("memory ~b conns ~b~n", [erlang:memory(total), mustang:active_connections(idle)]),
	receive after 1000 -> report() end.

%% client([Port, N]): opens N connections, one GET / each, then holds them.
client([PortStr, NStr]) ->
	Port = list_to_integer(PortStr),
	N = list_to_integer(NStr),
	Socks = [open(Port) || _ <- lists:seq(1, N)],
	io:format("client: ~b connections open~n", [length(Socks)]),
	receive after infinity -> ok end.

open(Port) ->
	{ok, S} = gen_tcp:connect("127.0.0.1", Port, [binary, {active, false}], 5000),
	ok = gen_tcp:send(S, <<"GET / HTTP/1.1\r\nhost: localhost\r\n\r\n">>),
	{ok, <<"HTTP/1.1 200 OK", _/bits>>} = gen_tcp:recv(S, 0, 5000),
	S.
