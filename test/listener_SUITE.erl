%% Listener behaviour: start/stop, options, back-pressure, graceful stop,
%% TLS with ALPN, and OTP special-process compliance of connections.
-module(listener_SUITE).
-compile([export_all, nowarn_export_all]).

-include_lib("common_test/include/ct.hrl").
-include_lib("stdlib/include/assert.hrl").

all() ->
	[start_stop_get_port, unknown_options_refused, invalid_values_refused,
		set_protocol_options_validated, port_in_use,
		set_env_new_connections, max_connections_backpressure, max_connections_exact_one,
		max_connections_exact_many, graceful_stop_inflight,
		graceful_stop_idle_closes, tls_alpn_http11, tls_without_certificate_refused,
		conn_is_special_process, conns_sup_supervisor_calls, dynamic_buffer_grows,
		dynamic_buffer_off_when_buffer_set, hibernate_after_idle_tick,
		hibernate_h2_after_idle_tick, hibernate_h2_option, hibernate_ws_after_idle_tick,
		idle_connections_hibernate, idle_connections_stay_small,
		streaming_backpressure_inline, streaming_backpressure_process,
		env_errors_as_cowboy].

init_per_suite(Config) ->
	{ok, _} = application:ensure_all_started(mustang),
	Config.

end_per_suite(_) ->
	ok.

dispatch() ->
	mustang_router:compile([{'_', [
		{"/", mustang_demo_hello_h, []},
		{"/sleep", mustang_demo_sleep_h, []},
		{"/read_body", mustang_demo_read_body_h, []},
		{"/ws", ws_echo_h, #{ws_opts => #{idle_timeout => 1000}}},
		{"/ws_default", ws_echo_h, #{}},
		{"/ws_10s", ws_echo_h, #{ws_opts => #{idle_timeout => 10000}}}
	]}]).

opts() ->
	#{env => #{dispatch => dispatch()}}.

get(Port, Path) ->
	{ok, S} = gen_tcp:connect("127.0.0.1", Port, [binary, {active, false}]),
	ok = gen_tcp:send(S, ["GET ", Path, " HTTP/1.1\r\nhost: localhost\r\n\r\n"]),
	R = recv_response(S, <<>>),
	gen_tcp:close(S),
	R.

%% One response, through the shared reader of mustang_test, as
%% {StatusLine, Head, Body}.
recv_response(S, <<>>) ->
	#{raw := Raw, body := Body} = mustang_test:recv_response(S),
	[Head | _] = binary:split(Raw, <<"\r\n\r\n">>),
	[StatusLine | _] = binary:split(Head, <<"\r\n">>),
	{StatusLine, Head, Body}.

%% Tests.

start_stop_get_port(_) ->
	{ok, Pid} = mustang:start_clear(?FUNCTION_NAME, #{port => 0}, opts()),
	true = is_pid(Pid),
	Port = mustang:get_port(?FUNCTION_NAME),
	?assert(Port > 0),
	{<<"HTTP/1.1 200 OK">>, _, <<"Hello world!">>} = get(Port, "/"),
	ok = mustang:stop_listener(?FUNCTION_NAME),
	{error, econnrefused} = gen_tcp:connect("127.0.0.1", Port, []),
	{error, not_found} = mustang:stop_listener(?FUNCTION_NAME),
	%% The name can be reused once stopped.
	{ok, _} = mustang:start_clear(?FUNCTION_NAME, #{port => 0}, opts()),
	ok = mustang:stop_listener(?FUNCTION_NAME).

%% A misspelt option must fail the start, not be ignored.
unknown_options_refused(_) ->
	{error, {unknown_transport_options, [prot]}} =
		mustang:start_clear(?FUNCTION_NAME, #{prot => 8080}, opts()),
	{error, {unknown_protocol_options, [max_header]}} =
		mustang:start_clear(?FUNCTION_NAME, #{port => 0}, (opts())#{max_header => 1}),
	{error, {badarg, options_must_be_maps}} = mustang:start_clear(?FUNCTION_NAME, [], #{}).

invalid_values_refused(_) ->
	%% num_conns_sups defaults to num_acceptors, so both are reported.
	{error, {invalid_transport_options, [num_acceptors, num_conns_sups]}} =
		mustang:start_clear(?FUNCTION_NAME, #{port => 0, num_acceptors => 0}, opts()),
	{error, {invalid_protocol_option, active_n, 0}} =
		mustang:start_clear(?FUNCTION_NAME, #{port => 0}, (opts())#{active_n => 0}),
	{error, {invalid_protocol_option, request_process, yes}} =
		mustang:start_clear(?FUNCTION_NAME, #{port => 0}, (opts())#{request_process => yes}),
	%% RFC 9113 6.5.2: the bound is accepted, one past it refused.
	{error, {invalid_protocol_option, max_frame_size_received, 16777216}} =
		mustang:start_clear(?FUNCTION_NAME, #{port => 0},
			(opts())#{max_frame_size_received => 16777216}),
	{error, {invalid_transport_options, [ip]}} =
		mustang:start_clear(?FUNCTION_NAME, #{port => 0, ip => "127.0.0.1"}, opts()),
	{error, {invalid_transport_options, [handshake_timeout, logger]}} =
		mustang:start_clear(?FUNCTION_NAME, #{port => 0, handshake_timeout => -1,
			logger => "logger"}, opts()),
	{error, {invalid_transport_options, [handshake_timeout]}} =
		mustang:start_clear(?FUNCTION_NAME, #{port => 0, handshake_timeout => 4294967296},
			opts()),
	%% Nothing was left behind by the refused starts; valid values start.
	{ok, _} = mustang:start_clear(?FUNCTION_NAME, #{port => 0, ip => {127, 0, 0, 1},
		handshake_timeout => infinity, logger => logger},
		(opts())#{max_frame_size_received => 16777215}),
	Port = mustang:get_port(?FUNCTION_NAME),
	{<<"HTTP/1.1 200 OK">>, _, <<"Hello world!">>} = get(Port, "/"),
	ok = mustang:stop_listener(?FUNCTION_NAME).

%% set_protocol_options/2 applies the same rules as the start.
set_protocol_options_validated(_) ->
	{ok, _} = mustang:start_clear(?FUNCTION_NAME, #{port => 0}, opts()),
	Opts = mustang:get_protocol_options(?FUNCTION_NAME),
	{error, {unknown_protocol_options, [max_header]}} =
		mustang:set_protocol_options(?FUNCTION_NAME, Opts#{max_header => 1}),
	{error, {invalid_protocol_option, active_n, 32768}} =
		mustang:set_protocol_options(?FUNCTION_NAME, Opts#{active_n => 32768}),
	{error, {badarg, options_must_be_maps}} =
		mustang:set_protocol_options(?FUNCTION_NAME, [{active_n, 1}]),
	Opts = mustang:get_protocol_options(?FUNCTION_NAME),
	ok = mustang:set_protocol_options(?FUNCTION_NAME, Opts#{active_n => 32767}),
	#{active_n := 32767} = mustang:get_protocol_options(?FUNCTION_NAME),
	ok = mustang:stop_listener(?FUNCTION_NAME).

port_in_use(_) ->
	{ok, _} = mustang:start_clear(first, #{port => 0}, opts()),
	Port = mustang:get_port(first),
	{error, {listen_error, eaddrinuse}} = mustang:start_clear(second, #{port => Port}, opts()),
	%% The failed start left nothing behind: the name is free.
	{ok, _} = mustang:start_clear(second, #{port => 0}, opts()),
	ok = mustang:stop_listener(first),
	ok = mustang:stop_listener(second).

%% set_env/3 changes the dispatch for connections accepted afterwards.
set_env_new_connections(_) ->
	{ok, _} = mustang:start_clear(?FUNCTION_NAME, #{port => 0}, opts()),
	Port = mustang:get_port(?FUNCTION_NAME),
	{<<"HTTP/1.1 404 Not Found">>, _, _} = get(Port, "/new"),
	ok = mustang:set_env(?FUNCTION_NAME, dispatch,
		mustang_router:compile([{'_', [{"/new", mustang_demo_hello_h, []}]}])),
	{<<"HTTP/1.1 200 OK">>, _, <<"Hello world!">>} = get(Port, "/new"),
	undefined = mustang:get_env(?FUNCTION_NAME, nope, undefined),
	ok = mustang:stop_listener(?FUNCTION_NAME).

%% get_env/2,3 and set_env/3 fail as Cowboy's manual says: exit:badarg for
%% a listener that does not exist, exit:{badkey, Key} for a missing key.
env_errors_as_cowboy(_) ->
	{'EXIT', badarg} = catch mustang:get_env(?FUNCTION_NAME, dispatch),
	{'EXIT', badarg} = catch mustang:get_env(?FUNCTION_NAME, dispatch, undefined),
	{'EXIT', badarg} = catch mustang:set_env(?FUNCTION_NAME, dispatch, []),
	{ok, _} = mustang:start_clear(?FUNCTION_NAME, #{port => 0}, opts()),
	try
		{'EXIT', {badkey, nope}} = catch mustang:get_env(?FUNCTION_NAME, nope),
		default = mustang:get_env(?FUNCTION_NAME, nope, default),
		ok = mustang:set_env(?FUNCTION_NAME, nope, 1),
		1 = mustang:get_env(?FUNCTION_NAME, nope)
	after
		ok = mustang:stop_listener(?FUNCTION_NAME)
	end.

%% With max_connections reached, new connections wait in the backlog and are
%% served once a connection closes.
max_connections_backpressure(_) ->
	{ok, _} = mustang:start_clear(?FUNCTION_NAME, #{port => 0, max_connections => 2,
		num_acceptors => 1}, opts()),
	Port = mustang:get_port(?FUNCTION_NAME),
	Open = [begin
		{ok, S} = gen_tcp:connect("127.0.0.1", Port, [binary, {active, false}]),
		ok = gen_tcp:send(S, "GET / HTTP/1.1\r\nhost: x\r\n\r\n"),
		{<<"HTTP/1.1 200 OK">>, _, _} = recv_response(S, <<>>),
		S
	end || _ <- [1, 2]],
	2 = mustang:active_connections(?FUNCTION_NAME),
	%% The third connects (kernel backlog) but is not served yet.
	{ok, S3} = gen_tcp:connect("127.0.0.1", Port, [binary, {active, false}]),
	ok = gen_tcp:send(S3, "GET / HTTP/1.1\r\nhost: x\r\n\r\n"),
	{error, timeout} = gen_tcp:recv(S3, 0, 500),
	2 = mustang:active_connections(?FUNCTION_NAME),
	%% Closing one lets it in.
	ok = gen_tcp:close(hd(Open)),
	{<<"HTTP/1.1 200 OK">>, _, <<"Hello world!">>} = recv_response(S3, <<>>),
	ok = mustang:stop_listener(?FUNCTION_NAME).

%% The limit holds over all shards: with max_connections 1 and 10 acceptors
%% and shards, one client is served and the others wait in the backlog
%% (each shard allowed one before, so 10 were served).
max_connections_exact_one(_) ->
	{ok, _} = mustang:start_clear(?FUNCTION_NAME, #{port => 0, max_connections => 1,
		num_acceptors => 10, num_conns_sups => 10}, opts()),
	Port = mustang:get_port(?FUNCTION_NAME),
	Socks = [begin
		{ok, S} = gen_tcp:connect("127.0.0.1", Port, [binary, {active, false}]),
		ok = gen_tcp:send(S, "GET / HTTP/1.1\r\nhost: x\r\n\r\n"),
		S
	end || _ <- lists:seq(1, 10)],
	timer:sleep(300),
	[First] = answered(Socks),
	1 = mustang:active_connections(?FUNCTION_NAME),
	%% Each close lets exactly one more in, whatever shard it lands on.
	ok = serve_in_turn(?FUNCTION_NAME, First, Socks -- [First]),
	ok = mustang:stop_listener(?FUNCTION_NAME).

serve_in_turn(_, Open, []) ->
	gen_tcp:close(Open);
serve_in_turn(Ref, Open, Waiting) ->
	ok = gen_tcp:close(Open),
	timer:sleep(300),
	[Next] = answered(Waiting),
	1 = mustang:active_connections(Ref),
	serve_in_turn(Ref, Next, Waiting -- [Next]).

answered(Socks) ->
	[S || S <- Socks, element(1, gen_tcp:recv(S, 0, 30)) =:= ok].

%% 200 clients at a limit of 50 with 10 shards: all are served in turn, and
%% never more than 50 at once. Each client notes when it got its response
%% and when it closed: the server held the connection over that interval
%% (and longer), so at no instant may more than 50 intervals overlap.
max_connections_exact_many(_) ->
	{ok, _} = mustang:start_clear(?FUNCTION_NAME, #{port => 0, max_connections => 50,
		num_acceptors => 10, num_conns_sups => 10}, opts()),
	Port = mustang:get_port(?FUNCTION_NAME),
	Self = self(),
	Pids = [spawn_link(fun() ->
		{ok, S} = gen_tcp:connect("127.0.0.1", Port, [binary, {active, false}]),
		ok = gen_tcp:send(S, "GET / HTTP/1.1\r\nhost: x\r\n\r\n"),
		{<<"HTTP/1.1 200 OK">>, _, _} = recv_response(S, <<>>),
		Served = erlang:monotonic_time(),
		timer:sleep(100),
		%% Taken before the close, so the server held the connection after.
		Closing = erlang:monotonic_time(),
		ok = gen_tcp:close(S),
		Self ! {self(), Served, Closing}
	end) || _ <- lists:seq(1, 200)],
	Intervals = [receive {Pid, From, To} -> {From, To} after 20000 -> error(timeout) end
		|| Pid <- Pids],
	Events = lists:sort([{T, 1} || {T, _} <- Intervals] ++ [{T, -1} || {_, T} <- Intervals]),
	{_, Max} = lists:foldl(fun({_, D}, {N, M}) -> {N + D, max(M, N + D)} end, {0, 0}, Events),
	ct:log("most connections served at once: ~p (limit 50)", [Max]),
	true = Max =< 50,
	true = Max >= 40,
	ok = mustang:stop_listener(?FUNCTION_NAME).

%% stop_listener/1 lets a request in flight finish, then closes its
%% connection, and refuses new connections meanwhile.
graceful_stop_inflight(_) ->
	{ok, _} = mustang:start_clear(?FUNCTION_NAME, #{port => 0, shutdown => 5000}, opts()),
	Port = mustang:get_port(?FUNCTION_NAME),
	Self = self(),
	Pids = [spawn_link(fun() ->
		{ok, S} = gen_tcp:connect("127.0.0.1", Port, [binary, {active, false}]),
		ok = gen_tcp:send(S, "GET /sleep HTTP/1.1\r\nhost: localhost\r\n\r\n"),
		R = recv_response(S, <<>>),
		Self ! {self(), R, gen_tcp:recv(S, 0, 5000)}
	end) || _ <- [1, 2, 3]],
	%% Wait until all three requests are being handled.
	wait_until(fun() -> mustang:active_connections(?FUNCTION_NAME) =:= 3 end, 2000),
	ok = mustang:stop_listener(?FUNCTION_NAME),
	[receive
		{Pid, Result, AfterResponse} ->
			{<<"HTTP/1.1 200 OK">>, _, Body} = Result,
			1024 = byte_size(Body),
			{error, closed} = AfterResponse
	after 5000 -> error(timeout)
	end || Pid <- Pids],
	{error, econnrefused} = gen_tcp:connect("127.0.0.1", Port, []).

%% Idle keep-alive connections are closed on stop after the drain's short
%% grace (1 s, for a request the client may already be sending), long
%% before the shutdown timeout (5 s).
graceful_stop_idle_closes(_) ->
	{ok, _} = mustang:start_clear(?FUNCTION_NAME, #{port => 0, shutdown => 5000}, opts()),
	Port = mustang:get_port(?FUNCTION_NAME),
	{ok, S} = gen_tcp:connect("127.0.0.1", Port, [binary, {active, false}]),
	ok = gen_tcp:send(S, "GET / HTTP/1.1\r\nhost: x\r\n\r\n"),
	{<<"HTTP/1.1 200 OK">>, _, _} = recv_response(S, <<>>),
	T0 = erlang:monotonic_time(millisecond),
	ok = mustang:stop_listener(?FUNCTION_NAME),
	{error, closed} = gen_tcp:recv(S, 0, 5000),
	?assert(erlang:monotonic_time(millisecond) - T0 < 3000).

%% TLS with ALPN: http/1.1 is offered and chosen (RFC 7301).
tls_alpn_http11(_) ->
	{ok, _} = application:ensure_all_started(ssl),
	{ok, _} = mustang:start_tls(?FUNCTION_NAME, #{port => 0, socket_opts => mustang_demo:tls_opts()},
		opts()),
	Port = mustang:get_port(?FUNCTION_NAME),
	{ok, S} = ssl:connect("localhost", Port, [binary, {active, false}, {verify, verify_none},
		{alpn_advertised_protocols, [<<"http/1.1">>]}], 5000),
	{ok, <<"http/1.1">>} = ssl:negotiated_protocol(S),
	ok = ssl:send(S, "GET / HTTP/1.1\r\nhost: localhost\r\n\r\n"),
	Data = recv_tls(S, <<>>),
	{match, _} = re:run(Data, "^HTTP/1.1 200 OK\r\n"),
	{match, _} = re:run(Data, "Hello world!$"),
	ssl:close(S),
	ok = mustang:stop_listener(?FUNCTION_NAME).

recv_tls(S, Acc) ->
	case binary:match(Acc, <<"Hello world!">>) of
		nomatch ->
			{ok, Data} = ssl:recv(S, 0, 5000),
			recv_tls(S, <<Acc/binary, Data/binary>>);
		_ ->
			Acc
	end.

tls_without_certificate_refused(_) ->
	{error, {invalid_transport_options, [tls_certificate]}} =
		mustang:start_tls(?FUNCTION_NAME, #{port => 0}, opts()).

%% Connection processes are OTP special processes: proc_lib initial call,
%% sys:get_state/suspend/resume/get_status work, and the connection keeps
%% serving afterwards.
conn_is_special_process(_) ->
	{ok, _} = mustang:start_clear(?FUNCTION_NAME, #{port => 0, num_acceptors => 1,
		num_conns_sups => 1}, opts()),
	Port = mustang:get_port(?FUNCTION_NAME),
	{ok, S} = gen_tcp:connect("127.0.0.1", Port, [binary, {active, false}]),
	ok = gen_tcp:send(S, "GET / HTTP/1.1\r\nhost: x\r\n\r\n"),
	{<<"HTTP/1.1 200 OK">>, _, _} = recv_response(S, <<>>),
	[{_, ConnsSup}] = mustang_registry:get_conns_sups(?FUNCTION_NAME),
	[{mustang_conn, Conn, worker, _}] = supervisor:which_children(ConnsSup),
	{mustang_conn, init, [_, _, _]} = proc_lib:initial_call(Conn),
	{_, _} = sys:get_state(Conn),
	ok = sys:suspend(Conn),
	ok = gen_tcp:send(S, "GET / HTTP/1.1\r\nhost: x\r\n\r\n"),
	{error, timeout} = gen_tcp:recv(S, 0, 300),
	ok = sys:resume(Conn),
	{<<"HTTP/1.1 200 OK">>, _, <<"Hello world!">>} = recv_response(S, <<>>),
	{status, Conn, {module, _}, _} = sys:get_status(Conn),
	%% Supervisor calls get an answer, not a crash.
	[] = supervisor:which_children(Conn),
	ok = gen_tcp:close(S),
	ok = mustang:stop_listener(?FUNCTION_NAME).

conns_sup_supervisor_calls(_) ->
	{ok, _} = mustang:start_clear(?FUNCTION_NAME, #{port => 0, num_acceptors => 2}, opts()),
	[{1, Sup1}, {2, Sup2}] = mustang_registry:get_conns_sups(?FUNCTION_NAME),
	[{specs, 1}, {active, 0}, {supervisors, 0}, {workers, 0}] = supervisor:count_children(Sup1),
	{_, _} = {sys:get_state(Sup2), ok},
	ok = sys:suspend(Sup1),
	ok = sys:resume(Sup1),
	ok = mustang:stop_listener(?FUNCTION_NAME).

wait_until(Fun, Timeout) ->
	mustang_test:wait_until(Fun, Timeout).

%% The socket `buffer` option grows with the size of the data received
%% (dynamic buffer, doubling while the moving average is above 90%).
dynamic_buffer_grows(_) ->
	{1024, Grown} = buffer_before_after_upload(?FUNCTION_NAME, #{}),
	?assert(Grown > 1024).

%% Setting `buffer` in socket_opts turns the dynamic buffer off.
dynamic_buffer_off_when_buffer_set(_) ->
	{4096, 4096} = buffer_before_after_upload(?FUNCTION_NAME, #{socket_opts => [{buffer, 4096}]}).

buffer_before_after_upload(Name, TransOpts) ->
	{ok, _} = mustang:start_clear(Name, TransOpts#{port => 0, num_acceptors => 1,
		num_conns_sups => 1}, opts()),
	Port = mustang:get_port(Name),
	{ok, S} = gen_tcp:connect("127.0.0.1", Port, [binary, {active, false}]),
	ok = gen_tcp:send(S, "GET / HTTP/1.1\r\nhost: x\r\n\r\n"),
	{<<"HTTP/1.1 200 OK">>, _, _} = recv_response(S, <<>>),
	Before = conn_buffer(Name),
	Size = 4000000,
	ok = gen_tcp:send(S, ["POST /read_body HTTP/1.1\r\nhost: x\r\ncontent-length: ",
		integer_to_list(Size), "\r\n\r\n"]),
	ok = gen_tcp:send(S, binary:copy(<<"x">>, Size)),
	{<<"HTTP/1.1 200 OK">>, _, <<"4000000">>} = recv_response(S, <<>>),
	After = conn_buffer(Name),
	ok = gen_tcp:close(S),
	ok = mustang:stop_listener(Name),
	{Before, After}.

conn_buffer(Name) ->
	[{_, ConnsSup}] = mustang_registry:get_conns_sups(Name),
	[{_, Conn, _, _}] = supervisor:which_children(ConnsSup),
	{links, Links} = process_info(Conn, links),
	[SockPort] = [P || P <- Links, is_port(P)],
	{ok, [{buffer, Buffer}]} = inet:getopts(SockPort, [buffer]),
	Buffer.

%% A connection that received nothing for a whole idle tick (idle_timeout/10)
%% hibernates, giving back the heap grown while serving its last request.
hibernate_after_idle_tick(_) ->
	{ok, _} = mustang:start_clear(?FUNCTION_NAME, #{port => 0, num_acceptors => 1,
		num_conns_sups => 1}, (opts())#{idle_timeout => 1000, request_timeout => 10000}),
	Port = mustang:get_port(?FUNCTION_NAME),
	{ok, S} = gen_tcp:connect("127.0.0.1", Port, [binary, {active, false}]),
	ok = gen_tcp:send(S, "GET / HTTP/1.1\r\nhost: x\r\n\r\n"),
	{<<"HTTP/1.1 200 OK">>, _, _} = recv_response(S, <<>>),
	[{_, ConnsSup}] = mustang_registry:get_conns_sups(?FUNCTION_NAME),
	[{_, Conn, _, _}] = supervisor:which_children(ConnsSup),
	wait_until(fun() ->
		process_info(Conn, current_function) =:= {current_function, {erlang, hibernate, 3}}
	end, 3000),
	%% And it still serves requests afterwards.
	ok = gen_tcp:send(S, "GET / HTTP/1.1\r\nhost: x\r\n\r\n"),
	{<<"HTTP/1.1 200 OK">>, _, <<"Hello world!">>} = recv_response(S, <<>>),
	ok = gen_tcp:close(S),
	ok = mustang:stop_listener(?FUNCTION_NAME).

%% HTTP/2 likewise: a connection with no stream that received nothing for a
%% whole idle tick hibernates, and serves the next request.
hibernate_h2_after_idle_tick(_) ->
	hibernate_h2(?FUNCTION_NAME, #{idle_timeout => 1000}).

%% With hibernate => true an HTTP/2 connection hibernates as soon as it has
%% no stream left (the idle tick is 6 s away with the default idle_timeout).
hibernate_h2_option(_) ->
	hibernate_h2(?FUNCTION_NAME, #{hibernate => true}).

hibernate_h2(Name, Extra) ->
	{ok, _} = mustang:start_clear(Name, #{port => 0, num_acceptors => 1, num_conns_sups => 1},
		maps:merge(opts(), Extra)),
	{ok, S} = gen_tcp:connect("127.0.0.1", mustang:get_port(Name),
		[binary, {active, false}, {nodelay, true}]),
	ok = gen_tcp:send(S, [mustang_http2_frame:preface(), mustang_http2_frame:settings(#{}),
		mustang_http2_frame:settings_ack()]),
	{<<"Hello world!">>, Encoder} = h2_get(S, 1, mustang_hpack:init()),
	Conn = the_connection(Name),
	wait_until(fun() -> is_hibernating(Conn) end, 3000),
	{<<"Hello world!">>, _} = h2_get(S, 3, Encoder),
	ok = gen_tcp:close(S),
	ok = mustang:stop_listener(Name).

%% GET / on StreamID; returns the body (DATA up to END_STREAM) and the
%% encoder for the next request.
h2_get(S, StreamID, Encoder) ->
	{Block, Encoder2} = mustang_hpack:encode([{<<":method">>, <<"GET">>},
		{<<":scheme">>, <<"http">>}, {<<":path">>, <<"/">>}, {<<":authority">>, <<"localhost">>}],
		Encoder),
	ok = gen_tcp:send(S, mustang_http2_frame:headers(StreamID, fin, Block)),
	{h2_body(S, StreamID, <<>>, []), Encoder2}.

h2_body(S, StreamID, Buf, Acc) ->
	case mustang_http2_frame:parse(Buf, 16384) of
		{ok, {data, StreamID, fin, Data}, _} -> iolist_to_binary(lists:reverse(Acc, [Data]));
		{ok, {data, StreamID, nofin, Data}, Rest} -> h2_body(S, StreamID, Rest, [Data | Acc]);
		{ok, {goaway, _, Code, Debug}, _} -> error({goaway, Code, Debug});
		{ok, _, Rest} -> h2_body(S, StreamID, Rest, Acc);
		{ignore, Rest} -> h2_body(S, StreamID, Rest, Acc);
		more ->
			{ok, More} = gen_tcp:recv(S, 0, 5000),
			h2_body(S, StreamID, <<Buf/binary, More/binary>>, Acc)
	end.

%% A Websocket connection (HTTP/1.1: the connection process runs it) that
%% received nothing for a tick of its idle_timeout (1 s here) hibernates,
%% and still echoes afterwards.
hibernate_ws_after_idle_tick(_) ->
	{ok, _} = mustang:start_clear(?FUNCTION_NAME, #{port => 0, num_acceptors => 1,
		num_conns_sups => 1}, opts()),
	{ok, S} = gen_tcp:connect("127.0.0.1", mustang:get_port(?FUNCTION_NAME),
		[binary, {active, false}, {nodelay, true}]),
	ok = gen_tcp:send(S, "GET /ws HTTP/1.1\r\nhost: x\r\nupgrade: websocket\r\n"
		"connection: upgrade\r\nsec-websocket-version: 13\r\n"
		"sec-websocket-key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n"),
	{ok, <<"HTTP/1.1 101 ", _/bits>> = Head} = gen_tcp:recv(S, 0, 5000),
	%% The 101 head ends the first read: nothing was sent after it yet.
	{_, 4} = binary:match(Head, <<"\r\n\r\n">>, [{scope, {byte_size(Head) - 4, 4}}]),
	<<"hello">> = ws_echo(S, <<"hello">>),
	Conn = the_connection(?FUNCTION_NAME),
	wait_until(fun() -> is_hibernating(Conn) end, 3000),
	<<"again">> = ws_echo(S, <<"again">>),
	ok = gen_tcp:close(S),
	ok = mustang:stop_listener(?FUNCTION_NAME).

ws_echo(S, Text) ->
	Size = byte_size(Text),
	Mask = binary:part(binary:copy(<<1, 2, 3, 4>>, Size), 0, Size),
	ok = gen_tcp:send(S, [<<16#81, 1:1, Size:7, 1, 2, 3, 4>>, crypto:exor(Text, Mask)]),
	{ok, <<16#81, Size, Echo:Size/binary>>} = gen_tcp:recv(S, 2 + Size, 5000),
	Echo.

%% 200 connections of each protocol (HTTP/1.1, h2c, Websocket over
%% HTTP/1.1), one exchange each, with the default options but for
%% request_timeout (5 s: it would close the HTTP/1.1 ones): all connection
%% processes hibernate within a few seconds of falling quiet
%% (hibernate_after, 1 s: within 2 s), under a heap bound. Before
%% hibernate_after they waited for their second idle tick, 12 s with the
%% default idle_timeout, and kept the heap grown while serving.
idle_connections_hibernate(_) ->
	{Holder, Conns} = idle_connections(?FUNCTION_NAME, #{request_timeout => 60000},
		"/ws_default"),
	wait_until(fun() -> lists:all(fun is_hibernating/1, Conns) end, 5000),
	{Mem, Heap} = idle_memory(Conns),
	ct:pal("~b connections hibernated: ~b bytes, largest heap ~b words",
		[length(Conns), Mem, Heap]),
	?assert(Heap < 1000),
	Holder ! stop,
	ok = mustang:stop_listener(?FUNCTION_NAME).

%% Idle connections stay small: each idle tick (idle_timeout/10, 1 s here,
%% for the Websocket ones too)
%% wakes them, and they hibernate again rather than grow their heap back.
%% Two samples three ticks apart: all hibernated, the memory not grown.
idle_connections_stay_small(_) ->
	{Holder, Conns} = idle_connections(?FUNCTION_NAME,
		#{request_timeout => 60000, idle_timeout => 10000}, "/ws_10s"),
	wait_until(fun() -> lists:all(fun is_hibernating/1, Conns) end, 5000),
	{Mem1, _} = idle_memory(Conns),
	receive after 3500 -> ok end,
	Awake = [P || P <- Conns, not is_hibernating(P)],
	{Mem2, Heap2} = idle_memory(Conns),
	ct:pal("~b connections: ~b bytes, ~b bytes three ticks later (largest heap ~b words, "
		"~b awake)", [length(Conns), Mem1, Mem2, Heap2, length(Awake)]),
	[] = Awake,
	?assert(Mem2 =< Mem1 + Mem1 div 20),
	Holder ! stop,
	ok = mustang:stop_listener(?FUNCTION_NAME).

%% The connection processes of a listener whose 600 clients made one
%% exchange each, and the process that holds the clients' sockets open
%% until it gets `stop'.
idle_connections(Name, Extra, WsPath) ->
	{ok, _} = mustang:start_clear(Name, #{port => 0}, maps:merge(opts(), Extra)),
	Port = mustang:get_port(Name),
	Self = self(),
	Holder = spawn_link(fun() ->
		Socks = [idle_client(Port, Proto, WsPath) || Proto <- [h1, h2c, ws], _ <- lists:seq(1, 200)],
		Self ! {opened, self()},
		receive stop -> [gen_tcp:close(S) || S <- Socks] end
	end),
	receive {opened, Holder} -> ok after 60000 -> error(open_timeout) end,
	Conns = [Conn || {_, ConnsSup} <- mustang_registry:get_conns_sups(Name),
		{_, Conn, _, _} <- supervisor:which_children(ConnsSup)],
	600 = length(Conns),
	{Holder, Conns}.

idle_client(Port, Proto, WsPath) ->
	{ok, S} = gen_tcp:connect("127.0.0.1", Port, [binary, {active, false}, {nodelay, true}]),
	case Proto of
		h1 ->
			ok = gen_tcp:send(S, "GET / HTTP/1.1\r\nhost: x\r\n\r\n"),
			{<<"HTTP/1.1 200 OK">>, _, <<"Hello world!">>} = recv_response(S, <<>>);
		h2c ->
			ok = gen_tcp:send(S, [mustang_http2_frame:preface(), mustang_http2_frame:settings(#{}),
				mustang_http2_frame:settings_ack()]),
			{<<"Hello world!">>, _} = h2_get(S, 1, mustang_hpack:init());
		ws ->
			ok = gen_tcp:send(S, ["GET ", WsPath, " HTTP/1.1\r\nhost: x\r\nupgrade: websocket\r\n"
				"connection: upgrade\r\nsec-websocket-version: 13\r\n"
				"sec-websocket-key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n"]),
			{ok, <<"HTTP/1.1 101 ", _/bits>>} = gen_tcp:recv(S, 0, 5000),
			<<"hello">> = ws_echo(S, <<"hello">>)
	end,
	S.

%% The memory of the processes (bytes) and the largest heap (words).
idle_memory(Conns) ->
	Infos = [process_info(P, [memory, total_heap_size]) || P <- Conns],
	{lists:sum([M || [{memory, M}, _] <- Infos]),
		lists:max([H || [_, {total_heap_size, H}] <- Infos])}.

the_connection(Name) ->
	[{_, ConnsSup}] = mustang_registry:get_conns_sups(Name),
	[{_, Conn, _, _}] = supervisor:which_children(ConnsSup),
	Conn.

is_hibernating(Pid) ->
	process_info(Pid, current_function) =:= {current_function, {erlang, hibernate, 3}}.

%% A handler that streams faster than the client reads is held back: while
%% the client reads nothing, the connection's memory and mailbox stay small;
%% once it reads, every byte arrives.
streaming_backpressure_inline(_) ->
	streaming_backpressure(?FUNCTION_NAME, false).

streaming_backpressure_process(_) ->
	streaming_backpressure(?FUNCTION_NAME, true).

streaming_backpressure(Name, RequestProcess) ->
	Dispatch = mustang_router:compile([{'_', [{"/big", big_stream_h, []}]}]),
	{ok, _} = mustang:start_clear(Name, #{port => 0, num_acceptors => 1, num_conns_sups => 1},
		#{env => #{dispatch => Dispatch}, request_process => RequestProcess}),
	Port = mustang:get_port(Name),
	{ok, S} = gen_tcp:connect("127.0.0.1", Port, [binary, {active, false}, {recbuf, 65536}]),
	ok = gen_tcp:send(S, "GET /big HTTP/1.1\r\nhost: x\r\n\r\n"),
	[{_, ConnsSup}] = mustang_registry:get_conns_sups(Name),
	wait_until(fun() -> supervisor:which_children(ConnsSup) =/= [] end, 2000),
	[{_, Conn, _, _}] = supervisor:which_children(ConnsSup),
	%% Let the handler run into the full socket buffers.
	receive after 500 -> ok end,
	{memory, Mem} = process_info(Conn, memory),
	{message_queue_len, Queue} = process_info(Conn, message_queue_len),
	ct:pal("connection memory ~b bytes, mailbox ~b while the client does not read", [Mem, Queue]),
	?assert(Mem < 10000000),
	?assert(Queue < 10),
	Total = read_all(S, 0),
	%% 100 MiB of body plus the head and the chunk framing.
	?assert(Total > 100 * 1048576),
	ok = gen_tcp:close(S),
	ok = mustang:stop_listener(Name).

read_all(S, N) ->
	case gen_tcp:recv(S, 0, 5000) of
		{ok, Data} ->
			case binary:longest_common_suffix([Data, <<"0\r\n\r\n">>]) of
				5 -> N + byte_size(Data);
				_ -> read_all(S, N + byte_size(Data))
			end;
		{error, Reason} ->
			error({read_all, N, Reason})
	end.
