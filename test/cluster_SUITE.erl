%% The demo's chat (/ws/chat) on two BEAM nodes behind HAProxy.
%%
%% Two peer nodes (OTP's peer, control over stdio, distribution between
%% them with -sname and a cookie of the test's own) each run the demo
%% (mustang_demo:start/1, listeners on free ports, proxy_header => true).
%% They are connected, so the chat's pg scope (mustang_demo) spans both:
%% a message is sent to the members of the group on every node. HAProxy
%% from apt runs in front in HTTP mode (Websocket upgrades pass through),
%% round robin, send-proxy-v2, health checks on GET /health.
%%
%% The test connects Websocket clients through HAProxy (a client written
%% here: masked text frames out, unmasked frames in) and reads in each
%% upgrade response which node serves it (the demo's x-mustang-node
%% header). Every message must reach every client, whichever node it
%% landed on; then one node dies, HAProxy's checks mark it down, its
%% clients reconnect through HAProxy to the other one and the chat goes on.
%% Skipped when there is no haproxy executable.
-module(cluster_SUITE).
-compile([export_all, nowarn_export_all]).

-include_lib("common_test/include/ct.hrl").
-include_lib("stdlib/include/assert.hrl").

%% Websocket clients.
-define(CLIENTS, 6).

suite() ->
	[{timetrap, {seconds, 90}}].

all() ->
	[chat_two_nodes].

init_per_suite(Config) ->
	case proxy_header_SUITE:haproxy() of
		false -> {skip, "haproxy is not installed (scripts/setup.sh installs the apt package)"};
		HAProxy -> [{haproxy_exe, HAProxy} | Config]
	end.

end_per_suite(_) ->
	ok.

%% The nodes and HAProxy, started here and stopped in end_per_testcase
%% (the same process as the test), also when the test fails.
init_per_testcase(_, Config) ->
	Cookie = "mustang_cluster_" ++ os:getpid(),
	{PeerA, NodeA, PortA} = start_node("a", Cookie),
	{PeerB, NodeB, PortB} = start_node("b", Cookie),
	true = peer:call(PeerA, net_kernel, connect_node, [NodeB]),
	Frontend = proxy_header_SUITE:free_port(),
	Cfg = filename:join(?config(priv_dir, Config), "haproxy_cluster.cfg"),
	ok = file:write_file(Cfg, haproxy_config(Frontend, [{"a", PortA}, {"b", PortB}])),
	HAProxy = proxy_header_SUITE:start_haproxy(?config(haproxy_exe, Config), Cfg, [Frontend]),
	[{a, {PeerA, NodeA}}, {b, {PeerB, NodeB}}, {frontend, Frontend}, {haproxy, HAProxy} | Config].

end_per_testcase(_, Config) ->
	{Port, OsPid} = ?config(haproxy, Config),
	ct:log("haproxy output:~n~s", [mustang_test:program_output(Port)]),
	mustang_test:kill_os_pid(OsPid),
	[catch peer:stop(Peer) || {Peer, _} <- [?config(a, Config), ?config(b, Config)]],
	ok.

%% Nodes.

%% A peer node that runs the demo with listeners on free ports; returns the
%% peer, its node name and its clear port.
start_node(Suffix, Cookie) ->
	Name = list_to_atom(lists:flatten(io_lib:format("mustang_cluster_~s_~s_~b",
		[Suffix, os:getpid(), erlang:unique_integer([positive])]))),
	Root = mustang_test:root(),
	Paths = [D || D <- code:get_path(), lists:prefix(Root, D)],
	{ok, Peer, Node} = peer:start_link(#{name => Name, connection => standard_io,
		args => ["-setcookie", Cookie, "-pa" | Paths]}),
	{ok, _} = peer:call(Peer, mustang_demo, start, [#{port => 0, tls_port => 0,
		tuning => #{proxy_header => true}}], 30000),
	Port = peer:call(Peer, mustang, get_port, [demo_http]),
	{Peer, Node, Port}.

chat_members(Peer) ->
	length(peer:call(Peer, pg, get_members, [mustang_demo, chat])).

%% Waits until Fun() returns true (every 50 ms, within Timeout ms).
wait_until(Fun, Timeout, What) ->
	Deadline = erlang:monotonic_time(millisecond) + Timeout,
	wait_until_loop(Fun, Deadline, What).

wait_until_loop(Fun, Deadline, What) ->
	case Fun() of
		true -> ok;
		false ->
			case erlang:monotonic_time(millisecond) > Deadline of
				true -> ct:fail({timeout_waiting_for, What});
				false -> timer:sleep(50), wait_until_loop(Fun, Deadline, What)
			end
	end.

%% HAProxy.

%% Waits for a line of HAProxy's output (its server state changes are
%% warnings on stderr) that contains Text.
wait_output(Port, Text, Timeout) ->
	receive
		{Port, {data, {_, Line}}} ->
			ct:log("haproxy: ~s", [Line]),
			case binary:match(Line, Text) of
				nomatch -> wait_output(Port, Text, Timeout);
				_ -> ok
			end
	after Timeout ->
		ct:fail({no_haproxy_output, Text})
	end.

haproxy_config(Frontend, Servers) ->
	["global\n"
	"\tmaxconn 200\n"
	"defaults\n"
	"\tmode http\n"
	"\ttimeout connect 2s\n"
	"\ttimeout client 60s\n"
	"\ttimeout server 60s\n"
	"\ttimeout tunnel 60s\n"
	"\tretries 3\n"
	"\toption redispatch\n"
	"frontend chat\n"
	"\tbind 127.0.0.1:", integer_to_list(Frontend), "\n"
	"\tdefault_backend chat\n"
	"backend chat\n"
	"\tbalance roundrobin\n"
	"\toption httpchk GET /health\n",
	[["\tserver ", Name, " 127.0.0.1:", integer_to_list(Port),
		" send-proxy-v2 check inter 200 fall 2 rise 2\n"] || {Name, Port} <- Servers]].

%% Websocket client (RFC 6455): one upgrade request, then text frames.

-record(ws, {socket, node, buffer = <<>>}).

ws_connect(Port) ->
	{ok, S} = gen_tcp:connect({127, 0, 0, 1}, Port, [binary, {active, false}, {nodelay, true}]),
	Key = base64:encode(rand:bytes(16)),
	ok = gen_tcp:send(S, ["GET /ws/chat HTTP/1.1\r\nhost: localhost\r\nupgrade: websocket\r\n"
		"connection: upgrade\r\nsec-websocket-version: 13\r\nsec-websocket-key: ", Key, "\r\n\r\n"]),
	{Head, Rest} = ws_head(S, <<>>),
	[StatusLine | Lines] = binary:split(Head, <<"\r\n">>, [global]),
	?assertMatch(<<"HTTP/1.1 101 ", _/binary>>, StatusLine),
	Headers = [{string:lowercase(N), string:trim(V)}
		|| L <- Lines, [N, V] <- [binary:split(L, <<":">>)]],
	Accept = base64:encode(crypto:hash(sha, [Key, "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"])),
	?assertEqual(Accept, proplists:get_value(<<"sec-websocket-accept">>, Headers)),
	Node = binary_to_atom(proplists:get_value(<<"x-mustang-node">>, Headers)),
	#ws{socket = S, node = Node, buffer = Rest}.

ws_head(S, Buffer) ->
	case binary:split(Buffer, <<"\r\n\r\n">>) of
		[Head, Rest] -> {Head, Rest};
		[_] ->
			{ok, Data} = gen_tcp:recv(S, 0, 10000),
			ws_head(S, <<Buffer/binary, Data/binary>>)
	end.

ws_send(#ws{socket = S}, Text) when byte_size(Text) < 126 ->
	Mask = rand:bytes(4),
	ok = gen_tcp:send(S, [<<1:1, 0:3, 1:4, 1:1, (byte_size(Text)):7>>, Mask,
		crypto:exor(Text, binary:part(binary:copy(Mask, byte_size(Text) div 4 + 1), 0,
			byte_size(Text)))]).

%% N text messages, in the order received; fails on a close or a timeout.
ws_recv(WS, N) ->
	ws_recv(WS, N, [], erlang:monotonic_time(millisecond) + 15000).

ws_recv(WS, 0, Acc, _) ->
	{lists:reverse(Acc), WS};
ws_recv(WS = #ws{socket = S, buffer = Buffer}, N, Acc, Deadline) ->
	case Buffer of
		<<1:1, 0:3, 1:4, 0:1, Len:7, Text:Len/binary, Rest/binary>> when Len < 126 ->
			ws_recv(WS#ws{buffer = Rest}, N - 1, [Text | Acc], Deadline);
		<<1:1, 0:3, Op:4, _/binary>> when Op =/= 1 ->
			ct:fail({unexpected_frame, Op, Buffer, lists:reverse(Acc)});
		_ ->
			Wait = max(0, Deadline - erlang:monotonic_time(millisecond)),
			case gen_tcp:recv(S, 0, Wait) of
				{ok, Data} -> ws_recv(WS#ws{buffer = <<Buffer/binary, Data/binary>>}, N, Acc, Deadline);
				{error, Reason} -> ct:fail({ws_recv, Reason, lists:reverse(Acc)})
			end
	end.

%% The server closed the connection (a close frame, then the end, or the
%% end at once when the node died).
ws_closed(#ws{socket = S}) ->
	case gen_tcp:recv(S, 0, 15000) of
		{error, closed} -> ok;
		{error, econnreset} -> ok;
		{ok, _} -> ws_closed(#ws{socket = S});
		{error, Reason} -> ct:fail({not_closed, Reason})
	end.

%% Each client sends one message (its index and Round); each must receive
%% all of them, in any order between senders.
chat_round(Clients, Round) ->
	Texts = [iolist_to_binary(io_lib:format("~s-~b", [Round, I])) || I <- lists:seq(1, length(Clients))],
	[ws_send(C, T) || {C, T} <- lists:zip(Clients, Texts)],
	[begin
		{Got, C2} = ws_recv(C, length(Texts)),
		?assertEqual(lists:sort(Texts), lists:sort(Got)),
		C2
	end || C <- Clients].

%% The test.

chat_two_nodes(Config) ->
	mustang_test:doc("The demo's chat on two nodes behind HAProxy (round robin, HTTP mode, "
		"send-proxy-v2, health checks): clients land on both nodes and every message "
		"reaches every client through pg; one node dies, its clients reconnect through "
		"HAProxy to the other and keep chatting."),
	T0 = erlang:monotonic_time(millisecond),
	{PeerA, NodeA} = ?config(a, Config),
	{PeerB, NodeB} = ?config(b, Config),
	Frontend = ?config(frontend, Config),
	%% Both nodes' pg scopes know each other once the first join is seen
	%% on the other node: connect, then wait for the members.
	Clients = [ws_connect(Frontend) || _ <- lists:seq(1, ?CLIENTS)],
	Nodes = [C#ws.node || C <- Clients],
	ct:log("clients on ~p", [Nodes]),
	OnA = length([N || N <- Nodes, N =:= NodeA]),
	OnB = length([N || N <- Nodes, N =:= NodeB]),
	?assertEqual(?CLIENTS, OnA + OnB),
	?assert(OnA >= 1 andalso OnB >= 1),
	wait_until(fun() -> chat_members(PeerA) =:= ?CLIENTS andalso chat_members(PeerB) =:= ?CLIENTS end,
		10000, pg_members),
	Clients2 = chat_round(Clients, "one"),
	Clients3 = chat_round(Clients2, "two"),
	%% Node B dies.
	peer:cast(PeerB, erlang, halt, []),
	{Gone, Staying} = lists:partition(fun(C) -> C#ws.node =:= NodeB end, Clients3),
	[ws_closed(C) || C <- Gone],
	wait_until(fun() -> chat_members(PeerA) =:= OnA end, 10000, pg_members_after_node_down),
	%% HAProxy's health checks mark B down (inter 200, fall 2); its clients
	%% reconnect through HAProxy, all to node A.
	{HAProxyPort, _} = ?config(haproxy, Config),
	wait_output(HAProxyPort, <<"Server chat/b is DOWN">>, 15000),
	Reconnected = [ws_connect(Frontend) || _ <- Gone],
	?assertEqual([NodeA || _ <- Gone], [C#ws.node || C <- Reconnected]),
	wait_until(fun() -> chat_members(PeerA) =:= ?CLIENTS end, 10000, pg_members_reconnected),
	_ = chat_round(Staying ++ Reconnected, "three"),
	ct:log("~b clients, ~b on ~s and ~b on ~s, in ~b ms", [?CLIENTS, OnA, NodeA, OnB, NodeB,
		erlang:monotonic_time(millisecond) - T0]).
