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

%% client([Port, N, Mode]): opens N connections, each makes one request (Mode
%% h1: GET / over HTTP/1.1; h2c: GET / over HTTP/2 with prior knowledge; ws:
%% a Websocket on /ws that echoes one text message), then holds them.
client([PortStr, NStr]) ->
	client([PortStr, NStr, "h1"]);
client([PortStr, NStr, Mode]) ->
	Port = list_to_integer(PortStr),
	N = list_to_integer(NStr),
	Socks = [open(Port, list_to_atom(Mode)) || _ <- lists:seq(1, N)],
	io:format("client: ~b connections open~n", [length(Socks)]),
	receive after infinity -> ok end.

open(Port, Mode) ->
	{ok, S} = gen_tcp:connect("127.0.0.1", Port, [binary, {active, false}], 5000),
	ok = request(S, Mode),
	S.

request(S, h1) ->
	ok = gen_tcp:send(S, <<"GET / HTTP/1.1\r\nhost: localhost\r\n\r\n">>),
	{ok, <<"HTTP/1.1 200 OK", _/bits>>} = gen_tcp:recv(S, 0, 5000),
	ok;
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
			{ok, More} = gen_tcp:recv(S, 0, 5000),
			wait_for(S, What, <<Buf/binary, More/binary>>);
		_ ->
			ok
	end.
