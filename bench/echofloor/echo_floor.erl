%% The least an Erlang server can do per round trip: a gen_tcp echo with the
%% socket options Mustang uses ({active, 100}, nodelay, binary), one process
%% per connection, no parsing. bench/echo_floor.sh measures it.
-module(echo_floor).
-export([start/1]).

-spec start([string()]) -> no_return().
start([Port]) ->
	{ok, L} = gen_tcp:listen(list_to_integer(Port), [binary, {reuseaddr, true},
		{active, false}, {nodelay, true}, {backlog, 128}]),
	io:format("echo_floor listening on ~s~n", [Port]),
	accept(L).

accept(L) ->
	{ok, S} = gen_tcp:accept(L),
	Pid = spawn(fun() -> receive go -> ok end, loop(S) end),
	ok = gen_tcp:controlling_process(S, Pid),
	ok = inet:setopts(S, [{active, 100}]),
	Pid ! go,
	accept(L).

loop(S) ->
	receive
		{tcp, S, Data} -> _ = gen_tcp:send(S, Data), loop(S);
		{tcp_passive, S} -> ok = inet:setopts(S, [{active, 100}]), loop(S);
		{tcp_closed, S} -> ok;
		{tcp_error, S, _} -> ok
	end.
