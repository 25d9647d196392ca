%% Idle-connection memory, Mustang beside Cowboy 2.13 (issue 11 point 2).
%%
%% run/1 is the client and the coordinator, in its own VM (its sockets are
%% not counted). The servers run in their own VMs, distributed nodes, whose
%% erlang:memory() it reads over distribution: Mustang (server/1 below: the
%% demo's protocol options, defaults otherwise) and Cowboy (the compiled peer
%% of ../shared/peers, a black box started with -sname). For each server and
%% protocol (h1: GET / over HTTP/1.1; h2c: GET / over HTTP/2 with prior
%% knowledge; ws: a Websocket on /ws that echoes one text message), N
%% connections make one exchange each and stay open; the server's memory
%% growth over the baseline taken just before, divided by N, is sampled 3 s
%% and 30 s after the last connection opened, as the server leaves it (no
%% forced GC). Then the connections close and the next round starts.
%%
%% Beside the erlang:memory() split, each sample has a per-connection
%% breakdown of the server's TCP sockets and the processes that own them
%% (process_info memory and heap, port memory, the socket's buffer options),
%% read with BIFs over distribution.
-module(idle_memory).
-export([server/1]).
-export([run/1]).

%% server([ProtoOptsTerm]): the demo handlers on a free port with the given
%% extra protocol options; the coordinator asks for the port over
%% distribution.
server([OptsStr]) ->
	logger:set_primary_config(level, error),
	{ok, _} = application:ensure_all_started(mustang),
	{ok, Tokens, _} = erl_scan:string(OptsStr ++ "."),
	{ok, Extra} = erl_parse:parse_term(Tokens),
	%% Idle keep-alive connections close after request_timeout (5 s by
	%% default, as Cowboy's); keep them for the 30 s sample.
	Opts = maps:merge((mustang_demo:protocol_opts(#{max_keepalive => infinity}))#{
		request_timeout => 120000}, Extra),
	{ok, _} = mustang:start_clear(idle, #{port => 0,
		max_connections => infinity, num_acceptors => 4}, Opts),
	receive after infinity -> ok end.

%% run([N, Late, Out, Server:Node:Port ...]): each server is
%% Name:Node:Port, Port 0 meaning "ask mustang:get_port(idle) on Node".
run([NStr, LateStr, Out | Servers0]) ->
	N = list_to_integer(NStr),
	Late = list_to_integer(LateStr),
	Protocols = [list_to_atom(P) || P <- string:lexemes(os:getenv("IDLE_PROTOCOLS", "h1 h2c ws"), " ")],
	Servers = [server_spec(S) || S <- Servers0],
	Results = [{Name, Proto, round(Node, Port, Proto, N, Late)}
		|| {Name, Node, Port} <- Servers, Proto <- Protocols],
	Table = table(N, Late, Servers, Protocols, Results),
	io:put_chars(Table),
	ok = file:write_file(Out, Table),
	halt(0).

server_spec(Spec) ->
	[Name, NodeStr, PortStr] = string:split(Spec, ":", all),
	Node = list_to_atom(NodeStr),
	ok = wait_node(Node, 100),
	Port = case list_to_integer(PortStr) of
		0 -> wait_port(Node, 100);
		P -> P
	end,
	{Name, Node, Port}.

wait_node(Node, 0) -> error({no_node, Node});
wait_node(Node, Tries) ->
	case net_adm:ping(Node) of
		pong -> ok;
		pang -> timer:sleep(200), wait_node(Node, Tries - 1)
	end.

wait_port(Node, 0) -> error({no_port, Node});
wait_port(Node, Tries) ->
	case catch rpc:call(Node, mustang, get_port, [idle]) of
		P when is_integer(P) -> P;
		_ -> timer:sleep(200), wait_port(Node, Tries - 1)
	end.

%% One round: baseline, N connections, samples at 3 s and Late s, close.
round(Node, Port, Proto, N, Late) ->
	timer:sleep(2000),
	Base = memory(Node),
	Workers = 8,
	Self = self(),
	Pids = [spawn_link(fun() -> worker(Self, Port, Proto, N div Workers + extra(I, N, Workers)) end)
		|| I <- lists:seq(1, Workers)],
	[receive {opened, Pid} -> ok after 120000 -> error(open_timeout) end || Pid <- Pids],
	T0 = erlang:monotonic_time(millisecond),
	Samples = [begin
		sleep_until(T0 + S * 1000),
		Mem = memory(Node),
		Open = lists:sum([ask(Pid, open) || Pid <- Pids]),
		{S, Open, delta(Mem, Base, N), breakdown(Node)}
	end || S <- [3, Late]],
	[Pid ! close || Pid <- Pids],
	[receive {closed, Pid} -> ok after 30000 -> ok end || Pid <- Pids],
	io:format(standard_error, "~s ~p: ~p~n", [Node, Proto, Samples]),
	Samples.

extra(I, N, Workers) when I =< N rem Workers -> 1;
extra(_, _, _) -> 0.

sleep_until(T) ->
	timer:sleep(max(0, T - erlang:monotonic_time(millisecond))).

ask(Pid, What) ->
	Pid ! {What, self()},
	receive {What, Pid, Value} -> Value after 10000 -> error({no_answer, What}) end.

memory(Node) ->
	maps:from_list(rpc:call(Node, erlang, memory, [])).

%% KiB per connection of each erlang:memory() type that matters here.
delta(Mem, Base, N) ->
	maps:from_list([{K, (maps:get(K, Mem) - maps:get(K, Base)) / N / 1024}
		|| K <- [total, processes, binary, ets, system]]).

%% The server's TCP sockets other than listeners and distribution, their
%% owners: averages.
breakdown(Node) ->
	Dist = [P || {_, P} <- rpc:call(Node, erlang, system_info, [dist_ctrl])],
	Ports = [P || P <- rpc:call(Node, erlang, ports, []) -- Dist,
		rpc:call(Node, erlang, port_info, [P, name]) =:= {name, "tcp_inet"}],
	Sample = lists:sublist(Ports, 200),
	Rows = lists:filtermap(fun(P) -> port_row(Node, P) end, Sample),
	case Rows of
		[] -> #{};
		_ ->
			Keys = maps:keys(hd(Rows)),
			maps:from_list([{K, lists:sum([maps:get(K, R) || R <- Rows]) / length(Rows)}
				|| K <- Keys])
	end.

port_row(Node, P) ->
	case {rpc:call(Node, erlang, port_info, [P, connected]),
			rpc:call(Node, erlang, port_info, [P, memory]),
			rpc:call(Node, inet, getopts, [P, [buffer, recbuf, sndbuf]]),
			rpc:call(Node, inet, peername, [P])} of
		{{connected, Owner}, {memory, PortMem}, {ok, Opts}, {ok, _}} ->
			case rpc:call(Node, erlang, process_info, [Owner,
					[memory, total_heap_size, heap_size, stack_size, binary,
						message_queue_len, current_function]]) of
				Info when is_list(Info) ->
					Bins = proplists:get_value(binary, Info),
					{true, #{
						proc_bytes => proplists:get_value(memory, Info),
						heap_words => proplists:get_value(total_heap_size, Info),
						stack_words => proplists:get_value(stack_size, Info),
						msgq => proplists:get_value(message_queue_len, Info),
						refc_bins => length(Bins),
						refc_bytes => lists:sum([S || {_, S, _} <- Bins]),
						hibernated => case proplists:get_value(current_function, Info) of
							{erlang, hibernate, 3} -> 1;
							_ -> 0
						end,
						port_bytes => PortMem,
						buffer => proplists:get_value(buffer, Opts),
						recbuf => proplists:get_value(recbuf, Opts),
						sndbuf => proplists:get_value(sndbuf, Opts)}};
				_ ->
					false
			end;
		_ ->
			false
	end.

%% Connections: a worker opens its share, one exchange each, then counts
%% the ones the server closes.
worker(Parent, Port, Proto, Count) ->
	Socks = [open(Port, Proto) || _ <- lists:seq(1, Count)],
	Parent ! {opened, self()},
	worker_loop(Parent, Socks, length(Socks)).

worker_loop(Parent, Socks, Open) ->
	receive
		{tcp_closed, _} ->
			worker_loop(Parent, Socks, Open - 1);
		{tcp, _, _} ->
			worker_loop(Parent, Socks, Open);
		{open, From} ->
			From ! {open, self(), Open},
			worker_loop(Parent, Socks, Open);
		close ->
			[gen_tcp:close(S) || S <- Socks],
			Parent ! {closed, self()}
	end.

open(Port, Proto) ->
	{ok, S} = gen_tcp:connect("127.0.0.1", Port, [binary, {active, false}], 10000),
	ok = request(S, Proto),
	ok = inet:setopts(S, [{active, true}]),
	S.

request(S, h1) ->
	ok = gen_tcp:send(S, <<"GET / HTTP/1.1\r\nhost: localhost\r\n\r\n">>),
	wait_for(S, <<"Hello world!">>, <<>>);
request(S, h2c) ->
	%% Preface, empty SETTINGS, SETTINGS ACK, then HEADERS (END_STREAM) for
	%% GET / with literal fields (no HPACK state needed).
	Block = << <<0, (byte_size(K)), K/binary, (byte_size(V)), V/binary>>
		|| {K, V} <- [{<<":method">>, <<"GET">>}, {<<":scheme">>, <<"http">>},
			{<<":path">>, <<"/">>}, {<<":authority">>, <<"localhost">>}] >>,
	ok = gen_tcp:send(S, [<<"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n">>,
		<<0:24, 4, 0, 0:32>>, <<0:24, 4, 1, 0:32>>,
		<<(byte_size(Block)):24, 1, 5, 1:32>>, Block]),
	wait_for(S, <<"Hello world!">>, <<>>);
request(S, ws) ->
	ok = gen_tcp:send(S, <<"GET /ws HTTP/1.1\r\nhost: localhost\r\nupgrade: websocket\r\n"
		"connection: upgrade\r\nsec-websocket-version: 13\r\n"
		"sec-websocket-key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n">>),
	ok = wait_for(S, <<"\r\n\r\n">>, <<>>),
	%% "hello", masked with the key 0.
	ok = gen_tcp:send(S, <<16#81, 16#85, 0:32, "hello">>),
	wait_for(S, <<"hello">>, <<>>).

wait_for(S, What, Buf) ->
	case binary:match(Buf, What) of
		nomatch ->
			{ok, More} = gen_tcp:recv(S, 0, 10000),
			wait_for(S, What, <<Buf/binary, More/binary>>);
		_ ->
			ok
	end.

%% The Markdown report.
table(N, Late, Servers, Protocols, Results) ->
	Names = [Name || {Name, _, _} <- Servers],
	Get = fun(Name, Proto, S) ->
		{_, _, Samples} = lists:keyfind({Name, Proto}, 1,
			[{{Nm, P}, x, Sm} || {Nm, P, Sm} <- Results]),
		lists:keyfind(S, 1, Samples)
	end,
	Head = io_lib:format("Idle memory, ~b connections, one exchange each; server VM memory growth "
		"per connection in KiB (erlang:memory total; processes / binary in parentheses), "
		"3 s and ~b s after the last connection opened.~n~n", [N, Late]),
	Cols = [io_lib:format("~s ~b s", [Name, S]) || Name <- Names, S <- [3, Late]],
	Ratio = case Names of
		[A, B] -> [io_lib:format("~s/~s ~b s", [A, B, S]) || S <- [3, Late]];
		_ -> []
	end,
	Header = ["| protocol | ", lists:join(" | ", Cols ++ Ratio), " |\n",
		"|---", [ "|---" || _ <- Cols ++ Ratio], "|\n"],
	Rows = [begin
		Cells = [cell(Get(Name, Proto, S), N) || Name <- Names, S <- [3, Late]],
		Ratios = case Names of
			[A2, B2] -> [ratio(Get(A2, Proto, S), Get(B2, Proto, S), N) || S <- [3, Late]];
			_ -> []
		end,
		["| ", atom_to_list(Proto), " | ", lists:join(" | ", Cells ++ Ratios), " |\n"]
	end || Proto <- Protocols],
	Detail = ["\nPer connection, averaged over up to 200 of the server's TCP sockets "
		"(proc: process_info memory of the socket's owner, heap in words, hib: share "
		"hibernated, refc: off-heap binaries it references, port: port_info memory, "
		"buffer/recbuf/sndbuf: the socket's options):\n\n"
		"| server | protocol | s | open | proc B | heap W | hib | refc bins / B | port B | buffer | recbuf | sndbuf |\n"
		"|---|---|---|---|---|---|---|---|---|---|---|---|\n",
		[[io_lib:format("| ~s | ~s | ~b | ~b | ~s | ~s | ~s | ~s / ~s | ~s | ~s | ~s | ~s |~n",
			[Name, Proto, S, Open | [num(maps:get(K, B, undefined)) || K <- [proc_bytes,
				heap_words, hibernated, refc_bins, refc_bytes, port_bytes, buffer, recbuf, sndbuf]]])
			|| {S, Open, _, B} <- Samples]
		|| {Name, Proto, Samples} <- Results]],
	[Head, Header, Rows, Detail].

%% When the server closed some connections (Cowboy closes idle HTTP/1.1
%% connections after its request_timeout, 5 s, which opening 10,000 of them
%% can outlast), the growth is divided by the connections still open, and
%% the cell says so.
cell({_, 0, _, _}, _) ->
	"all closed";
cell({_, Open, D, _}, N) ->
	Note = case Open of
		N -> "";
		_ -> io_lib:format(" [~b open; per open connection]", [Open])
	end,
	io_lib:format("~.1f (~.1f / ~.1f)~s", [per_open(total, D, Open, N),
		per_open(processes, D, Open, N), per_open(binary, D, Open, N), Note]).

per_open(Key, D, Open, N) ->
	maps:get(Key, D) * N / Open.

ratio({_, OpenA, DA, _}, {_, OpenB, DB, _}, N) when OpenA > 0, OpenB > 0 ->
	Note = case {OpenA, OpenB} of
		{N, N} -> "";
		_ -> " (per open connection)"
	end,
	io_lib:format("~.2fx~s", [per_open(total, DA, OpenA, N) / per_open(total, DB, OpenB, N), Note]);
ratio(_, _, _) ->
	"n/a (closed)".

num(undefined) -> "-";
num(X) when is_float(X), X >= 100 -> integer_to_list(round(X));
num(X) when is_float(X) -> io_lib:format("~.2f", [X]);
num(X) -> io_lib:format("~p", [X]).
