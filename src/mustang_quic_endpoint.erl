%% A QUIC listener's endpoint process: it owns the UDP socket ({active, N})
%% and the NIF's endpoint, and routes each datagram to the process of its
%% connection (one per QUIC connection, mustang_http3), which does the rest:
%% decryption, streams, HTTP/3, and the writing of its own datagrams.
%%
%% New connections: the NIF reports an Initial that opens one; the endpoint
%% takes a place under max_connections (mustang_conn_limit, as acceptors
%% do), checks the per-address limit and the listener's status, accepts it
%% (the NIF runs the server's first TLS flight on a dirty scheduler) and asks
%% a connection supervisor shard for its process. A connection it does not
%% take is refused with CONNECTION_REFUSED. With the retry transport option,
%% addresses are validated with a Retry first (RFC 9000 8.1.2); the NIF
%% does it.
%%
%% Connections send back the NIF's endpoint events (new connection IDs, the
%% end of the connection) as {mustang_quic_endpoint, Key, Event}; a
%% connection process that ends without draining is forgotten (its DOWN).
%%
%% A special process (proc_lib, sys), under mustang_listener_sup in the
%% place of the TCP listeners' acceptors.
-module(mustang_quic_endpoint).

-export([start_link/3]).
-export([set_accepting/2]).
-export([set_config/2]).
-export([endpoint_opts/2]).
-export([init/4]).
-export([system_continue/3]).
-export([system_terminate/4]).
-export([system_code_change/4]).

-record(st, {
	parent :: pid(),
	ref :: mustang:ref(),
	socket :: gen_udp:socket(),
	endpoint :: mustang_quic:endpoint(),
	active_n :: pos_integer(),
	limit :: mustang_conn_limit:limit(),
	next_shard = 1 :: pos_integer(),
	%% Whether new connections are taken (not when suspended or draining).
	accepting = true :: boolean(),
	%% Connections: key to pid, and the key and address of each pid.
	keys = #{} :: #{mustang_quic:key() => pid()},
	pids = #{} :: #{pid() => {mustang_quic:key(), inet:ip_address()}},
	%% Open connections per client address, and the limit.
	per_ip = #{} :: #{inet:ip_address() => pos_integer()},
	max_per_ip :: pos_integer() | infinity,
	logger :: module()
}).

-spec start_link(mustang:ref(), map(), map()) -> {ok, pid()} | {error, any()}.
start_link(Ref, TransOpts, ProtoOpts) ->
	proc_lib:start_link(?MODULE, init, [self(), Ref, TransOpts, ProtoOpts]).

%% Suspend and resume (mustang:suspend_listener/1, drain/2): new
%% connections are refused, those open go on.
-spec set_accepting(pid(), boolean()) -> ok.
set_accepting(Pid, Accepting) ->
	{ok, ok} = gen:call(Pid, '$gen_call', {?MODULE, accepting, Accepting}, infinity),
	ok.

%% A new certificate or new settings for connections accepted from now on
%% (mustang:set_tls_certificate/2).
-spec set_config(pid(), map()) -> ok | {error, any()}.
set_config(Pid, NifOpts) ->
	{ok, Reply} = gen:call(Pid, '$gen_call', {?MODULE, config, NifOpts}, infinity),
	Reply.

-spec init(pid(), mustang:ref(), map(), map()) -> no_return().
init(Parent, Ref, TransOpts, ProtoOpts) ->
	process_flag(trap_exit, true),
	ActiveN = maps:get(active_n, ProtoOpts, 100),
	UdpOpts = [binary, {active, ActiveN}, {reuseaddr, true}, {read_packets, 64},
		{recbuf, 2097152}, {sndbuf, 2097152}]
		++ [{ip, Ip} || #{ip := Ip} <- [TransOpts]]
		++ udp_socket_opts(maps:get(socket_opts, TransOpts, [])),
	Result = case gen_udp:open(maps:get(port, TransOpts), UdpOpts) of
		{ok, Socket} ->
			case endpoint_opts(TransOpts, ProtoOpts) of
				{ok, NifOpts} ->
					case mustang_quic:endpoint_new(NifOpts, mustang_quic:now()) of
						{ok, E} -> {ok, Socket, E};
						{error, Reason} -> gen_udp:close(Socket), {error, {quic, Reason}}
					end;
				Error ->
					gen_udp:close(Socket),
					Error
			end;
		Error ->
			Error
	end,
	case Result of
		{ok, Sock, Endpoint} ->
			{ok, {_, Port}} = inet:sockname(Sock),
			ok = mustang_registry:set_port(Ref, Port),
			ok = mustang_registry:set_listen_socket(Ref, Sock),
			Accepting = mustang_conn_limit:status(mustang_registry:get_conn_limit(Ref)) =:= running,
			proc_lib:init_ack(Parent, {ok, self()}),
			loop(#st{parent = Parent, ref = Ref, socket = Sock, endpoint = Endpoint,
				active_n = ActiveN, limit = mustang_registry:get_conn_limit(Ref),
				accepting = Accepting,
				max_per_ip = maps:get(max_connections_per_ip, TransOpts, infinity),
				logger = maps:get(logger, TransOpts, logger)});
		{error, Why} ->
			proc_lib:init_ack(Parent, {error, Why}),
			exit(normal)
	end.

%% The socket options of the listener that apply to UDP.
udp_socket_opts(SocketOpts) ->
	[O || O = {K, _} <- SocketOpts, lists:member(K, [recbuf, sndbuf, buffer, ipv6_v6only,
		reuseaddr, reuseport, reuseport_lb, netns, bind_to_device, tos, tclass, priority])].

%% The NIF's endpoint options from the listener's: certificate and key from
%% socket_opts (certfile/keyfile or cert/key, as ssl takes them), QUIC
%% settings from the protocol options.
-spec endpoint_opts(map(), map()) -> {ok, map()} | {error, any()}.
endpoint_opts(TransOpts, ProtoOpts) ->
	SocketOpts = maps:get(socket_opts, TransOpts, []),
	case certificate(SocketOpts) of
		{ok, Chain, Key} ->
			Http3 = maps:merge(maps:merge(mustang_http2:defaults(), mustang_http3:defaults()), ProtoOpts),
			Idle = case maps:get(idle_timeout, ProtoOpts, 60000) of
				infinity -> 0;
				Ms -> Ms
			end,
			{ok, #{cert_chain => Chain, key => Key, alpn => [<<"h3">>],
				idle_timeout => Idle,
				max_bidi_streams => maps:get(max_concurrent_streams, Http3),
				max_uni_streams => maps:get(max_uni_streams, Http3),
				stream_receive_window => maps:get(quic_stream_receive_window, Http3),
				receive_window => maps:get(quic_receive_window, Http3),
				send_window => maps:get(quic_send_window, Http3),
				initial_read => maps:get(quic_stream_receive_window, Http3),
				retry => maps:get(retry, TransOpts, false),
				migration => true,
				datagram_receive_buffer => 0}};
		Error ->
			Error
	end.

certificate(SocketOpts) ->
	try
		Chain = case lists:keyfind(cert, 1, SocketOpts) of
			{cert, Der} when is_binary(Der) -> [Der];
			{cert, Ders} when is_list(Ders) -> Ders;
			false ->
				{certfile, CertFile} = lists:keyfind(certfile, 1, SocketOpts),
				{ok, CertPem} = file:read_file(CertFile),
				[Der || {'Certificate', Der, not_encrypted} <- public_key:pem_decode(CertPem)]
		end,
		Key = case lists:keyfind(key, 1, SocketOpts) of
			{key, {Type, KeyDer}} -> key_type(Type, KeyDer);
			false ->
				{keyfile, KeyFile} = lists:keyfind(keyfile, 1, SocketOpts),
				{ok, KeyPem} = file:read_file(KeyFile),
				[KeyEntry | _] = [E || E = {T, _, not_encrypted} <- public_key:pem_decode(KeyPem),
					T =:= 'PrivateKeyInfo' orelse T =:= 'RSAPrivateKey' orelse T =:= 'ECPrivateKey'],
				{Type, KeyDer, not_encrypted} = KeyEntry,
				key_type(Type, KeyDer)
		end,
		[_ | _] = Chain,
		{ok, Chain, Key}
	catch _:_ ->
		{error, {invalid_transport_options, [{socket_opts, quic_certificate}]}}
	end.

key_type('PrivateKeyInfo', Der) -> {pkcs8, Der};
key_type('RSAPrivateKey', Der) -> {pkcs1, Der};
key_type('ECPrivateKey', Der) -> {sec1, Der}.

loop(St = #st{socket = Socket, parent = Parent}) ->
	receive
		{udp, Socket, IP, Port, Data} ->
			loop(datagram(St, IP, Port, Data));
		{mustang_quic_endpoint, Key, Event} ->
			loop(endpoint_event(St, Key, Event));
		{udp_passive, Socket} ->
			ok = inet:setopts(Socket, [{active, St#st.active_n}]),
			loop(St);
		{'DOWN', _, process, Pid, _} when is_map_key(Pid, St#st.pids) ->
			loop(conn_down(St, Pid));
		{'EXIT', Parent, Reason} ->
			terminate(St, Reason);
		{system, From, Request} ->
			sys:handle_system_msg(Request, From, Parent, ?MODULE, [], St);
		{'$gen_call', From, Call} ->
			loop(call(St, From, Call));
		{'EXIT', _, _} ->
			loop(St);
		Msg ->
			log(St, warning, "mustang_quic_endpoint ~p: unexpected message ~0p", [St#st.ref, Msg]),
			loop(St)
	end.

datagram(St = #st{endpoint = E, keys = Keys}, IP, Port, Data) ->
	case mustang_quic:endpoint_handle(E, mustang_quic:now(), {IP, Port}, Data) of
		ok ->
			St;
		{conn, Key, Event} ->
			_ = case Keys of
				#{Key := Pid} -> Pid ! {mustang_quic, Event};
				_ -> ok
			end,
			St;
		{send, Datagram} ->
			_ = gen_udp:send(St#st.socket, IP, Port, Datagram),
			St;
		{incoming, Incoming} ->
			incoming(St, IP, Port, Incoming)
	end.

incoming(St = #st{accepting = false}, IP, Port, Incoming) ->
	refuse(St, IP, Port, Incoming);
incoming(St = #st{per_ip = PerIp, max_per_ip = Max}, IP, Port, Incoming)
		when is_integer(Max), map_get(IP, PerIp) >= Max ->
	log(St, debug, "mustang ~p: QUIC connection from ~s refused: max_connections_per_ip ~b",
		[St#st.ref, inet:ntoa(IP), Max]),
	refuse(St, IP, Port, Incoming);
incoming(St = #st{limit = Limit, next_shard = N}, IP, Port, Incoming) ->
	%% The shards start after the endpoint (mustang_listener_sup) and may
	%% restart: looked up each time (an ETS read).
	Shards = lists:sort(mustang_registry:get_conns_sups(St#st.ref)),
	{ShardId, ConnsSup} = lists:nth(min(N, length(Shards)), Shards),
	St2 = St#st{next_shard = N rem length(Shards) + 1},
	case mustang_conn_limit:reserve(Limit, ShardId) of
		false ->
			refuse(St2, IP, Port, Incoming);
		true ->
			case mustang_quic:endpoint_accept(St#st.endpoint, Incoming, mustang_quic:now()) of
				{ok, Key, Conn, Peer} ->
					Args = #{key => Key, conn => Conn, peer => Peer, socket => St#st.socket,
						endpoint => self(), endpoint_ref => St#st.endpoint},
					case mustang_conns_sup:start_connection(ConnsSup, {mustang_http3, start_link,
							[St#st.ref, Args]}) of
						{ok, Pid} ->
							_ = monitor(process, Pid),
							PerIp = St2#st.per_ip,
							St2#st{keys = (St2#st.keys)#{Key => Pid},
								pids = (St2#st.pids)#{Pid => {Key, IP}},
								per_ip = PerIp#{IP => maps:get(IP, PerIp, 0) + 1}};
						{error, _} ->
							mustang_conn_limit:release(Limit, ShardId),
							ok = mustang_quic:endpoint_forget(St#st.endpoint, Key),
							St2
					end;
				{error, Reason, Datagram} ->
					mustang_conn_limit:release(Limit, ShardId),
					log(St, debug, "mustang ~p: QUIC connection from ~s not accepted: ~s",
						[St#st.ref, inet:ntoa(IP), Reason]),
					_ = is_binary(Datagram) andalso gen_udp:send(St#st.socket, IP, Port, Datagram),
					St2
			end
	end.

refuse(St, IP, Port, Incoming) ->
	_ = gen_udp:send(St#st.socket, IP, Port, mustang_quic:endpoint_refuse(St#st.endpoint, Incoming)),
	St.

endpoint_event(St = #st{endpoint = E, keys = Keys}, _Key, Event) ->
	case mustang_quic:endpoint_event(E, Event) of
		ok ->
			St;
		{conn, Key2, ConnEvent} ->
			_ = case Keys of
				#{Key2 := Pid} -> Pid ! {mustang_quic, ConnEvent};
				_ -> ok
			end,
			St
	end.

conn_down(St = #st{pids = Pids, keys = Keys, per_ip = PerIp}, Pid) ->
	{Key, IP} = map_get(Pid, Pids),
	%% A no-op when the connection drained (the endpoint forgot it then).
	ok = mustang_quic:endpoint_forget(St#st.endpoint, Key),
	PerIp2 = case map_get(IP, PerIp) of
		1 -> maps:remove(IP, PerIp);
		N -> PerIp#{IP => N - 1}
	end,
	St#st{pids = maps:remove(Pid, Pids), keys = maps:remove(Key, Keys), per_ip = PerIp2}.

call(St, From, {?MODULE, accepting, Accepting}) ->
	_ = gen:reply(From, ok),
	St#st{accepting = Accepting};
call(St, From, {?MODULE, config, NifOpts}) ->
	_ = gen:reply(From, mustang_quic:endpoint_set_config(St#st.endpoint, NifOpts)),
	St;
call(St, From, which_children) ->
	_ = gen:reply(From, []),
	St;
call(St, From, _) ->
	_ = gen:reply(From, {error, not_supported}),
	St.

-spec terminate(#st{}, any()) -> no_return().
terminate(#st{socket = Socket}, Reason) ->
	_ = gen_udp:close(Socket),
	exit(Reason).

log(#st{logger = Logger}, Level, Format, Args) ->
	mustang_conn_chores:log(Logger, Level, Format, Args).

-spec system_continue(pid(), [sys:debug_option()], #st{}) -> no_return().
system_continue(_, _, St) ->
	loop(St).

-spec system_terminate(any(), pid(), [sys:debug_option()], #st{}) -> no_return().
system_terminate(Reason, _, _, St) ->
	terminate(St, Reason).

-spec system_code_change(Misc, module(), any(), any()) -> {ok, Misc} when Misc :: #st{}.
system_code_change(Misc, _, _, _) ->
	{ok, Misc}.
