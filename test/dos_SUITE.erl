%% Memory denial of service (Hardening): what one client can make the server
%% hold, and for how long. Each test states the bound it checks.
-module(dos_SUITE).
-compile([export_all, nowarn_export_all]).

-include_lib("common_test/include/ct.hrl").
-include_lib("stdlib/include/assert.hrl").

suite() ->
	[{timetrap, {seconds, 90}}].

all() ->
	[never_reading_client_inline, never_reading_client_process].

init_per_suite(Config) ->
	{ok, _} = application:ensure_all_started(mustang),
	Config.

end_per_suite(_) ->
	ok.

dispatch() ->
	mustang_router:compile([{'_', [
		{"/echo", mustang_demo_echo_h, []},
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
