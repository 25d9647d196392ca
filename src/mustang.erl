%% Public entry point: start and stop listeners, change their environment.
%%
%% Transport options (second argument of start_clear/3 and start_tls/3):
%%
%%   port               TCP port, 0 for any (default 0; get_port/1 tells which)
%%   ip                 address to bind (default all)
%%   num_acceptors      acceptor processes (default 10)
%%   num_conns_sups     connection supervisor shards (default num_acceptors)
%%   max_connections    open connections before accepting stops (default 16384,
%%                      or infinity); exact, over all shards
%%   socket_opts        gen_tcp or ssl listen options, passed through
%%                      (certfile, keyfile, backlog, buffer, ...)
%%   shutdown           ms that stop_listener/1 lets in-flight requests run
%%                      before killing their connections (default 5000): the
%%                      timeout of its drain/2
%%   handshake_timeout  ms for the TLS handshake (default 5000, or infinity)
%%   logger             module the acceptors log through (default logger)
%%
%% TLS listeners get safe ssl defaults (mustang_tls, doc/guide/tls.md);
%% set_tls_certificate/2 changes the certificate of new connections.
%%
%% Protocol options: mustang_opts (types, defaults and validation).
-module(mustang).

-export([start_clear/3]).
-export([start_tls/3]).
-export([start_quic/3]).
-export([stop_listener/1]).
-export([drain/2]).
-export([suspend_listener/1]).
-export([resume_listener/1]).
-export([get_status/1]).
-export([get_transport_options/1]).
-export([set_transport_options/2]).
-export([get_max_connections/1]).
-export([set_max_connections/2]).
-export([info/1]).
-export([get_port/1]).
-export([set_env/3]).
-export([get_env/2]).
-export([get_env/3]).
-export([get_protocol_options/1]).
-export([set_protocol_options/2]).
-export([active_connections/1]).
-export([set_tls_certificate/2]).

%% A listener's name: any term, unique among the node's listeners (an atom
%% usually).
-type ref() :: any().
-type opts() :: #{atom() => any()}.
%% The transport options of `start_clear/3` and `start_tls/3` (README's
%% transport table): unknown keys are refused.
-type transport_opts() :: #{
	port => inet:port_number(),
	ip => inet:socket_address(),
	num_acceptors => pos_integer(),
	num_conns_sups => pos_integer(),
	max_connections => pos_integer() | infinity,
	socket_opts => [gen_tcp:listen_option() | ssl:tls_server_option()],
	shutdown => timeout(),
	handshake_timeout => timeout(),
	logger => module()
}.
-type status() :: mustang_conn_limit:status().
%% What `info/1` returns.
-type info() :: #{
	port := inet:port_number(),
	status := status(),
	transport := module(),
	max_connections := pos_integer() | infinity,
	active_connections := non_neg_integer(),
	connections := #{mustang_conns_sup:protocol() => non_neg_integer()}
}.
-export_type([ref/0, opts/0, transport_opts/0, status/0, info/0]).

%% How long stop_acceptors/2 waits for an acceptor to hand over a
%% connection it has just accepted.
-define(ACCEPTORS_STOP_TIMEOUT, 1000).

-define(TRANSPORT_DEFAULTS, #{
	port => 0,
	num_acceptors => 10,
	max_connections => 16384,
	socket_opts => [],
	shutdown => 5000,
	handshake_timeout => 5000
}).

%% Starts a listener named Ref on TCP: it accepts connections on the port of
%% TransOpts and serves HTTP/1.1 and h2c (HTTP/2 by prior knowledge or
%% `Upgrade: h2c`) with the protocol options ProtoOpts (`mustang_opts`); the
%% routes go in `env`'s `dispatch`. Returns `{ok, Pid}`, the listener's
%% supervisor, once the port is bound. The listener is supervised by the
%% `mustang` application, not by the caller: stop it with `stop_listener/1`.
%%
%%     Dispatch = mustang_router:compile([{'_', [{"/", hello_h, []}]}]),
%%     {ok, _} = mustang:start_clear(http, #{port => 8080}, #{env => #{dispatch => Dispatch}})
%%
%% Errors (nothing is started, and a listener already running under that name
%% is left as it was):
%%
%% - `{error, {already_started, Ref}}`: a listener of that name runs;
%% - `{error, {listen_error, Reason}}`: the port could not be bound
%%   (`eaddrinuse`, `eacces`...);
%% - `{error, {unknown_transport_options, Keys}}`,
%%   `{error, {invalid_transport_options, Keys}}`,
%%   `{error, {unknown_protocol_options, Keys}}`,
%%   `{error, {invalid_protocol_option, Key, Value}}`,
%%   `{error, {badarg, options_must_be_maps}}`: the options (README's tables);
%% - `{error, {not_started, mustang}}`: the `mustang` application is not
%%   started (put it in your application's `applications`).
-spec start_clear(ref(), transport_opts(), mustang_opts:protocol_opts())
	-> {ok, pid()} | {error, any()}.
start_clear(Ref, TransOpts, ProtoOpts) ->
	start_listener(Ref, mustang_tcp, TransOpts, ProtoOpts).

%% Starts a listener named Ref on TLS (OTP `ssl`): as `start_clear/3`, with
%% the certificate and any other `ssl` option in TransOpts' `socket_opts`.
%% ALPN offers `h2` and `http/1.1` (after `protocols`), and Mustang's safe TLS
%% defaults apply unless `socket_opts` sets them (the guide's TLS page).
%%
%%     {ok, _} = mustang:start_tls(https, #{port => 8443, socket_opts => [
%%         {certfile, "cert.pem"}, {keyfile, "key.pem"}]},
%%         #{env => #{dispatch => Dispatch}})
%%
%% Errors: those of `start_clear/3`, and `{error, {invalid_transport_options,
%% [tls_certificate]}}` when `socket_opts` has no certificate (`certfile`,
%% `cert`, `certs_keys`, `sni_fun` or `sni_hosts`).
-spec start_tls(ref(), transport_opts(), mustang_opts:protocol_opts())
	-> {ok, pid()} | {error, any()}.
start_tls(Ref, TransOpts, ProtoOpts) ->
	start_listener(Ref, mustang_tls, TransOpts, ProtoOpts).

%% An HTTP/3 listener (RFC 9114) on a UDP port, Cowboy's start_quic/3:
%% QUIC through Mustang's optional NIF (native/mustang_quic). TransOpts as
%% start_tls/3's (socket_opts gives the certificate: certfile and keyfile,
%% or cert and key; socket options that apply to UDP, such as recbuf, are
%% passed to the socket), plus retry (boolean, default false: validate
%% client addresses with a QUIC Retry before any handshake work, RFC 9000
%% 8.1.2) and max_connections_per_ip (default infinity). Without the NIF:
%% {error, {http3_not_built, HowToBuild}}.
-spec start_quic(ref(), transport_opts(), mustang_opts:protocol_opts())
	-> {ok, pid()} | {error, any()}.
start_quic(Ref, TransOpts, ProtoOpts) ->
	case mustang_quic:available() of
		true -> start_listener(Ref, mustang_quic, TransOpts, ProtoOpts);
		{false, _} -> {error, mustang_quic:not_built_error()}
	end.

start_listener(Ref, Transport, TransOpts0, ProtoOpts) ->
	case validate(Transport, TransOpts0, ProtoOpts) of
		{ok, TransOpts} ->
			ok = mustang_registry:set_listener(Ref, Transport, TransOpts, ProtoOpts),
			ok = mustang_registry:set_given_transport_opts(Ref, TransOpts0),
			ok = clear_tls_certificate(Ref, Transport),
			Spec = #{
				id => {mustang_listener_sup, Ref},
				start => {mustang_listener_sup, start_link, [Ref, Transport, TransOpts]},
				type => supervisor,
				shutdown => infinity
			},
			case supervisor:start_child(mustang_listeners_sup, Spec) of
				{ok, Pid} ->
					{ok, Pid};
				{error, {already_started, _}} ->
					{error, {already_started, Ref}};
				{error, Reason} ->
					_ = supervisor:delete_child(mustang_listeners_sup, {mustang_listener_sup, Ref}),
					ok = mustang_registry:delete_listener(Ref),
					{error, unwrap_start_error(Reason)}
			end;
		Error ->
			Error
	end.

%% Supervisors nest start errors three deep; users want the listen error.
unwrap_start_error({shutdown, {failed_to_start_child, _, Reason}}) ->
	unwrap_start_error(Reason);
unwrap_start_error({Reason, Child}) when is_tuple(Child), element(1, Child) =:= child ->
	unwrap_start_error(Reason);
unwrap_start_error(Reason) ->
	Reason.

validate(Transport, TransOpts, ProtoOpts) when is_map(TransOpts), is_map(ProtoOpts) ->
	case maps:keys(maps:without(transport_keys(Transport), TransOpts)) of
		[] ->
			case mustang_opts:validate(ProtoOpts) of
				ok -> normalize_transport(Transport, alpn(Transport, TransOpts, ProtoOpts));
				Error -> Error
			end;
		Unknown ->
			{error, {unknown_transport_options, Unknown}}
	end;
validate(_, _, _) ->
	{error, {badarg, options_must_be_maps}}.

transport_keys(mustang_quic) ->
	[retry, max_connections_per_ip | transport_keys(mustang_tls)];
transport_keys(_) ->
	[port, ip, num_acceptors, num_conns_sups, max_connections, socket_opts, shutdown,
		handshake_timeout, logger].

normalize_transport(Transport, TransOpts0) ->
	TransOpts = maps:merge(?TRANSPORT_DEFAULTS, TransOpts0),
	#{port := Port, num_acceptors := NumAcceptors, max_connections := MaxConns,
		socket_opts := SocketOpts, shutdown := Shutdown,
		handshake_timeout := HandshakeTimeout} = TransOpts,
	NumConnsSups = maps:get(num_conns_sups, TransOpts, NumAcceptors),
	Checks = [
		{port, is_integer(Port) andalso Port >= 0 andalso Port =< 65535},
		{ip, valid_ip(maps:get(ip, TransOpts, any))},
		{num_acceptors, is_integer(NumAcceptors) andalso NumAcceptors > 0},
		{num_conns_sups, is_integer(NumConnsSups) andalso NumConnsSups > 0},
		{max_connections, MaxConns =:= infinity orelse (is_integer(MaxConns) andalso MaxConns > 0)},
		{socket_opts, is_list(SocketOpts)},
		{shutdown, Shutdown =:= infinity orelse (is_integer(Shutdown) andalso Shutdown >= 0)},
		{handshake_timeout, valid_timeout(HandshakeTimeout)},
		{logger, is_atom(maps:get(logger, TransOpts, logger))},
		{tls_certificate, Transport =:= mustang_tcp orelse has_certificate(SocketOpts)},
		{retry, is_boolean(maps:get(retry, TransOpts, false))},
		{max_connections_per_ip, valid_per_ip(maps:get(max_connections_per_ip, TransOpts, infinity))}
	],
	case [Name || {Name, false} <- Checks] of
		[] ->
			IpOpt = case TransOpts of
				#{ip := Ip} -> [{ip, Ip}];
				_ -> []
			end,
			{ok, TransOpts#{num_conns_sups => NumConnsSups,
				socket_opts => [{port, Port} | IpOpt] ++ SocketOpts}};
		Bad ->
			{error, {invalid_transport_options, Bad}}
	end.

valid_per_ip(infinity) -> true;
valid_per_ip(N) -> is_integer(N) andalso N > 0.

%% What gen_tcp and ssl take as {ip, Address}.
valid_ip(any) -> true;
valid_ip(loopback) -> true;
valid_ip({local, Path}) -> is_binary(Path) orelse is_list(Path);
valid_ip(Ip) -> inet:is_ip_address(Ip).

%% Like every timeout that ends in a receive ... after: at most 2^32-1 ms.
valid_timeout(infinity) -> true;
valid_timeout(T) -> is_integer(T) andalso T >= 0 andalso T =< 4294967295.

%% TLS listeners offer h2 by ALPN when HTTP/2 is served, unless the user
%% chose the ALPN protocols.
alpn(mustang_tls, TransOpts, ProtoOpts) ->
	SocketOpts = maps:get(socket_opts, TransOpts, []),
	case is_list(SocketOpts) andalso not lists:keymember(alpn_preferred_protocols, 1, SocketOpts) of
		true ->
			Protocols = maps:get(protocols, ProtoOpts, [http2, http]),
			Alpn = [case P of http2 -> <<"h2">>; http -> <<"http/1.1">> end || P <- Protocols],
			TransOpts#{socket_opts => SocketOpts ++ [{alpn_preferred_protocols, Alpn}]};
		false ->
			TransOpts
	end;
alpn(_, TransOpts, _) ->
	TransOpts.

has_certificate(SocketOpts) ->
	lists:any(fun(Key) -> lists:keymember(Key, 1, SocketOpts) end,
		[certfile, cert, certs_keys, sni_fun, sni_hosts]).

%% Graceful stop: stop accepting and let the requests in flight finish
%% (`drain/2`, with the `shutdown` transport option as its timeout, 5000 ms by
%% default), then the listener's processes go and its name is free again.
%% Returns `ok` once it is gone; `{error, not_found}` when there is no
%% listener Ref.
-spec stop_listener(ref()) -> ok | {error, not_found}.
stop_listener(Ref) ->
	Id = {mustang_listener_sup, Ref},
	case listener_sup(Ref) of
		{ok, _} ->
			ok = drain(Ref, maps:get(shutdown, mustang_registry:get_transport_opts(Ref))),
			_ = supervisor:terminate_child(mustang_listeners_sup, Id),
			_ = supervisor:delete_child(mustang_listeners_sup, Id),
			mustang_registry:delete_listener(Ref);
		error ->
			{error, not_found}
	end.

%% Graceful drain (the guide's listeners page): the listen socket closes (new
%% connections are refused), HTTP/2 connections send the two-step GOAWAY,
%% HTTP/1.1 connections answer the request in flight with `connection:
%% close` and close, idle ones close, Websocket sessions close with 1001.
%% Returns `ok` when the last connection ended, or after Timeout ms
%% (`infinity`: no limit), when those left are killed. The listener stays,
%% with no connection, in the `draining` status until `stop_listener/1` (or
%% `resume_listener/1`). `{error, not_found}` when there is no listener Ref.
%%
%%     %% Before a deploy: finish what is in flight, at most 30 s.
%%     ok = mustang:drain(http, 30000),
%%     ok = mustang:stop_listener(http)
-spec drain(ref(), timeout()) -> ok | {error, not_found}.
drain(Ref, Timeout) ->
	case listener_sup(Ref) of
		{ok, ListenerSup} ->
			ok = mustang_conn_limit:set_status(mustang_registry:get_conn_limit(Ref), draining),
			ok = stop_acceptors(Ref, ListenerSup),
			Deadline = case Timeout of
				infinity -> infinity;
				_ -> erlang:monotonic_time(millisecond) + Timeout
			end,
			ConnsSups = [Pid || {_, Pid} <- mustang_registry:get_conns_sups(Ref)],
			Tags = [mustang_conns_sup:notify_empty(Pid) || Pid <- ConnsSups],
			_ = [mustang_conns_sup:drain(Pid, Deadline) || Pid <- ConnsSups],
			wait_empty(Tags, Deadline);
		error ->
			{error, not_found}
	end.

%% The shards kill what is left at the deadline; their answer follows.
wait_empty([], _) ->
	ok;
wait_empty([Tag | Tags], Deadline) ->
	Wait = case Deadline of
		infinity -> infinity;
		_ -> max(0, Deadline - erlang:monotonic_time(millisecond)) + 5000
	end,
	receive
		{Tag, empty} -> demonitor(Tag, [flush]);
		{'DOWN', Tag, process, _, _} -> ok
	after Wait ->
		demonitor(Tag, [flush])
	end,
	wait_empty(Tags, Deadline).

%% As `ranch:suspend_listener/1`: the listen socket closes (new connections
%% are refused); the connections open go on, and the status becomes
%% `suspended`. `ok` also when it was suspended already; `{error, not_found}`
%% when there is no listener Ref.
-spec suspend_listener(ref()) -> ok | {error, not_found}.
suspend_listener(Ref) ->
	case listener_sup(Ref) of
		{ok, ListenerSup} ->
			Limit = mustang_registry:get_conn_limit(Ref),
			ok = stop_acceptors(Ref, ListenerSup),
			_ = mustang_conn_limit:status(Limit) =:= running
				andalso mustang_conn_limit:set_status(Limit, suspended),
			ok;
		error ->
			{error, not_found}
	end.

%% As `ranch:resume_listener/1`: listens again, on the same port when the
%% listener was started with port 0, with the transport options set meanwhile
%% (`set_transport_options/2`). A drained listener resumes too. `ok` also
%% when it was running; `{error, not_found}` when there is no listener Ref,
%% `{error, {listen_error, Reason}}` when the port cannot be bound again
%% (taken by another program meanwhile).
-spec resume_listener(ref()) -> ok | {error, any()}.
resume_listener(Ref) ->
	case listener_sup(Ref) of
		{ok, Sup} ->
			ListenerSup = case mustang_registry:get_transport(Ref) of
				mustang_quic -> {quic, Sup};
				_ -> Sup
			end,
			Limit = mustang_registry:get_conn_limit(Ref),
			case mustang_conn_limit:status(Limit) of
				running ->
					ok;
				_ when element(1, ListenerSup) =:= quic ->
					ok = quic_accepting(element(2, ListenerSup), true),
					mustang_conn_limit:set_status(Limit, running);
				_ ->
					TransOpts = #{port := Port, socket_opts := SocketOpts}
						= mustang_registry:get_transport_opts(Ref),
					SocketOpts2 = case Port of
						0 -> lists:keystore(port, 1, SocketOpts, {port, get_port(Ref)});
						_ -> SocketOpts
					end,
					case supervisor:start_child(ListenerSup,
							acceptors_spec(Ref, TransOpts#{socket_opts => SocketOpts2})) of
						{ok, _} -> mustang_conn_limit:set_status(Limit, running);
						{error, Reason} -> {error, unwrap_start_error(Reason)}
					end
			end;
		error ->
			{error, not_found}
	end.

%% The listener's status: `running`, `suspended` (`suspend_listener/1`) or
%% `draining` (`drain/2`). Raises `error:badarg` when there is no listener Ref.
-spec get_status(ref()) -> status().
get_status(Ref) ->
	mustang_conn_limit:status(mustang_registry:get_conn_limit(Ref)).

%% The transport options the listener was started with, or last given to
%% `set_transport_options/2` (as given, without the defaults; a
%% `max_connections` set with `set_max_connections/2` included). Raises
%% `error:badarg` when there is no listener Ref.
-spec get_transport_options(ref()) -> transport_opts().
get_transport_options(Ref) ->
	mustang_registry:get_given_transport_opts(Ref).

%% As `ranch:set_transport_options/2`: only while the listener is suspended
%% (`{error, running}` otherwise); the options replace the old ones (not a
%% merge) and take effect when it resumes, but for `max_connections`, which
%% is applied at once. They are validated as at start (the errors of
%% `start_clear/3`); `num_conns_sups` cannot change (`{error, {cannot_change,
%% [num_conns_sups]}}`; left out, it stays). `{error, not_found}` when there
%% is no listener Ref.
%%
%%     ok = mustang:suspend_listener(http),
%%     ok = mustang:set_transport_options(http, #{port => 8081}),
%%     ok = mustang:resume_listener(http)
-spec set_transport_options(ref(), transport_opts())
	-> ok | {error, running | not_found | {cannot_change, [num_conns_sups]} | any()}.
set_transport_options(Ref, TransOpts0) ->
	case listener_sup(Ref) of
		{ok, _} ->
			case get_status(Ref) of
				running ->
					{error, running};
				_ ->
					Transport = mustang_registry:get_transport(Ref),
					Old = mustang_registry:get_transport_opts(Ref),
					%% Left out, it stays (rather than following num_acceptors).
					TransOpts1 = maps:merge(maps:with([num_conns_sups], Old), TransOpts0),
					case validate(Transport, TransOpts1, get_protocol_options(Ref)) of
						{ok, #{num_conns_sups := N}} when N =/= map_get(num_conns_sups, Old) ->
							{error, {cannot_change, [num_conns_sups]}};
						{ok, TransOpts = #{max_connections := Max}} ->
							ok = mustang_registry:set_transport_opts(Ref, TransOpts),
							ok = mustang_registry:set_given_transport_opts(Ref, TransOpts0),
							%% The new socket_opts carry the certificate now: a
							%% rotated one (set_tls_certificate/2) would override them.
							ok = clear_tls_certificate(Ref, Transport),
							set_max_connections(Ref, Max);
						Error ->
							Error
					end
			end;
		error ->
			{error, not_found}
	end.

%% The listener's `max_connections`: a positive integer or `infinity`. Exits
%% with `error:badarg` when there is no listener Ref.
-spec get_max_connections(ref()) -> pos_integer() | infinity.
get_max_connections(Ref) ->
	mustang_conn_limit:max(mustang_registry:get_conn_limit(Ref)).

%% As `ranch:set_max_connections/2`, at run time: a lower limit keeps the
%% connections open (no new one is accepted until they are fewer); a higher
%% one wakes the acceptors waiting for capacity. Max is a positive integer or
%% `infinity` (anything else: `function_clause`); raises `error:badarg` when
%% there is no listener Ref.
-spec set_max_connections(ref(), pos_integer() | infinity) -> ok.
set_max_connections(Ref, Max) when Max =:= infinity; is_integer(Max), Max > 0 ->
	TransOpts = mustang_registry:get_transport_opts(Ref),
	ok = mustang_registry:set_transport_opts(Ref, TransOpts#{max_connections => Max}),
	Given = mustang_registry:get_given_transport_opts(Ref),
	ok = mustang_registry:set_given_transport_opts(Ref, Given#{max_connections => Max}),
	ok = mustang_conn_limit:set_max(mustang_registry:get_conn_limit(Ref), Max),
	_ = [Pid ! {mustang_conns_sup, capacity} || {_, Pid} <- mustang_registry:get_conns_sups(Ref)],
	ok.

%% The listener at a glance: `port`, `status`, `transport` (`mustang_tcp` or
%% `mustang_tls`), `max_connections`, `active_connections`, and
%% `connections`, the open connections per protocol (`http`, `http2`,
%% `websocket`: an HTTP/1.1 connection upgraded to Websocket counts as
%% `websocket`; Websocket over HTTP/2 is a stream of an `http2` connection).
%% Raises `error:badarg` when there is no listener Ref.
-spec info(ref()) -> info().
info(Ref) ->
	Counts0 = lists:foldl(fun({_, Pid}, Acc) ->
		maps:fold(fun(K, V, Acc2) -> Acc2#{K => V + maps:get(K, Acc2, 0)} end,
			Acc, mustang_conns_sup:counts(Pid))
	end, case mustang_registry:get_transport(Ref) of
		mustang_quic -> #{http3 => 0};
		_ -> #{http => 0, http2 => 0, websocket => 0}
	end, mustang_registry:get_conns_sups(Ref)),
	Counts = case mustang_registry:get_transport(Ref) of
		mustang_quic -> maps:with([http3], Counts0);
		_ -> Counts0
	end,
	#{port => get_port(Ref), status => get_status(Ref),
		transport => mustang_registry:get_transport(Ref),
		max_connections => get_max_connections(Ref),
		active_connections => lists:sum(maps:values(Counts)),
		connections => Counts}.

%% Handshakes take the listen socket's certificate, not a rotated one
%% (set_tls_certificate/2).
clear_tls_certificate(Ref, mustang_tls) -> mustang_registry:set_tls_opts(Ref, []);
clear_tls_certificate(_, _) -> ok.

listener_sup(Ref) ->
	Id = {mustang_listener_sup, Ref},
	case lists:keyfind(Id, 1, supervisor:which_children(mustang_listeners_sup)) of
		{_, ListenerSup, _, _} when is_pid(ListenerSup) -> {ok, ListenerSup};
		_ -> error
	end.

%% The listen socket is closed first, and the acceptors end on their own:
%% one that has just accepted a connection hands it to its connection
%% process before it sees the closed socket, where killing it would reset
%% a client that got in (and maybe sent its request) just before. Those
%% waiting for capacity hold no socket and are killed with their
%% supervisor. Acceptors killed while they held a place under
%% max_connections give it back (recount).
stop_acceptors(Ref, ListenerSup) ->
	case mustang_registry:get_transport(Ref) of
		mustang_quic -> quic_accepting(ListenerSup, false);
		_ -> stop_tcp_acceptors(Ref, ListenerSup)
	end.

%% QUIC: the UDP socket carries the connections that are open, so it stays;
%% the endpoint refuses new ones instead.
quic_accepting(ListenerSup, Accepting) ->
	case lists:keyfind(mustang_quic_endpoint, 1, supervisor:which_children(ListenerSup)) of
		{_, Pid, _, _} when is_pid(Pid) -> mustang_quic_endpoint:set_accepting(Pid, Accepting);
		_ -> ok
	end.

stop_tcp_acceptors(Ref, ListenerSup) ->
	AcceptorPids = case lists:keyfind(mustang_acceptors_sup, 1, supervisor:which_children(ListenerSup)) of
		{_, AcceptorsSup, _, _} when is_pid(AcceptorsSup) ->
			[Child || Child = {_, Pid, _, _} <- supervisor:which_children(AcceptorsSup), is_pid(Pid)];
		_ ->
			[]
	end,
	Acceptors = [monitor(process, Pid) || {_, Pid, _, _} <- AcceptorPids],
	_ = (mustang_registry:get_transport(Ref)):close(mustang_registry:get_listen_socket(Ref)),
	_ = [Pid ! {mustang_conns_sup, stop_waiting} || {_, Pid, _, _} <- AcceptorPids],
	Deadline = erlang:monotonic_time(millisecond) + ?ACCEPTORS_STOP_TIMEOUT,
	_ = [receive {'DOWN', MRef, process, _, _} -> ok
		after max(0, Deadline - erlang:monotonic_time(millisecond)) -> demonitor(MRef, [flush])
		end || MRef <- Acceptors],
	_ = supervisor:terminate_child(ListenerSup, mustang_acceptors_sup),
	_ = supervisor:delete_child(ListenerSup, mustang_acceptors_sup),
	_ = [mustang_conns_sup:recount(Pid) || {_, Pid} <- mustang_registry:get_conns_sups(Ref)],
	ok.

acceptors_spec(Ref, TransOpts) ->
	mustang_listener_sup:acceptors_spec(Ref, mustang_registry:get_transport(Ref), TransOpts).

%% The port the listener is bound to: the one chosen by the system when it
%% was started with `port => 0` (as tests do).
%%
%%     {ok, _} = mustang:start_clear(test, #{port => 0}, ProtoOpts),
%%     Port = mustang:get_port(test)
%%
%% Raises `error:badarg` when there is no listener Ref.
-spec get_port(ref()) -> inet:port_number().
get_port(Ref) ->
	mustang_registry:get_port(Ref).

%% Changes one key of the `env` protocol option (often `dispatch`, to change
%% the routes); connections accepted afterwards use it. As in Cowboy:
%% `exit(badarg)` when there is no listener Ref.
%%
%%     ok = mustang:set_env(http, dispatch, mustang_router:compile(NewRoutes))
-spec set_env(ref(), atom(), any()) -> ok.
set_env(Ref, Name, Value) ->
	Opts = protocol_opts(Ref),
	Env = maps:get(env, Opts, #{}),
	mustang_registry:set_protocol_opts(Ref, Opts#{env => Env#{Name => Value}}).

%% One key of the listener's `env`. As in Cowboy: `exit(badarg)` when there is
%% no listener Ref, `exit({badkey, Name})` when the key is missing.
-spec get_env(ref(), atom()) -> any().
get_env(Ref, Name) ->
	case maps:find(Name, maps:get(env, protocol_opts(Ref), #{})) of
		{ok, Value} -> Value;
		error -> exit({badkey, Name})
	end.

%% One key of the listener's `env`, or Default when the key is missing. As in
%% Cowboy: `exit(badarg)` when there is no listener Ref.
-spec get_env(ref(), atom(), any()) -> any().
get_env(Ref, Name, Default) ->
	maps:get(Name, maps:get(env, protocol_opts(Ref), #{}), Default).

%% The listener's protocol options, as given at start or to
%% `set_protocol_options/2` (without the defaults). Raises `error:badarg`
%% when there is no listener Ref.
-spec get_protocol_options(ref()) -> mustang_opts:protocol_opts().
get_protocol_options(Ref) ->
	mustang_registry:get_protocol_opts(Ref).

%% Replaces all of the listener's protocol options (not a merge: get them with
%% `get_protocol_options/1` and change what you want); connections accepted
%% afterwards use them, those open keep theirs. The options are validated as
%% at start: `{error, {unknown_protocol_options, Keys}}` or
%% `{error, {invalid_protocol_option, Key, Value}}` change nothing.
%%
%%     Opts = mustang:get_protocol_options(http),
%%     ok = mustang:set_protocol_options(http, Opts#{idle_timeout => 30000})
-spec set_protocol_options(ref(), mustang_opts:protocol_opts())
	-> ok | {error, mustang_opts:error()}.
set_protocol_options(Ref, Opts) ->
	case mustang_opts:validate(Opts) of
		ok -> mustang_registry:set_protocol_opts(Ref, Opts);
		Error -> Error
	end.

protocol_opts(Ref) ->
	try
		mustang_registry:get_protocol_opts(Ref)
	catch error:badarg ->
		exit(badarg)
	end.

%% Certificate rotation without restarting the listener: the handshakes of
%% connections accepted from now on use CertOpts (`ssl` server options among
%% `cert`, `key`, `certfile`, `keyfile`, `password`, `certs_keys`, `cacerts`,
%% `cacertfile`, `sni_hosts`, `sni_fun`) over the listener's socket options;
%% established connections keep the certificate they have. Each call replaces
%% the previous one. The options are tried first (an `ssl` listen socket on
%% the loopback, closed at once), so that a bad file or key is an error here
%% and not a failed handshake for every client. `ssl` caches files by name:
%% the cache is cleared when CertOpts names files, so a file rewritten in
%% place (as certbot does) is read again.
%%
%%     ok = mustang:set_tls_certificate(https, [{certfile, "/etc/mustang/cert.pem"},
%%         {keyfile, "/etc/mustang/key.pem"}])
%%
%% Errors: `{error, not_found}` (no listener Ref), `{error, not_tls}` (a clear
%% listener), `{error, {invalid_certificate_options, Why}}`, where Why is
%% `{Key, File, Reason}` for a file that cannot be read or holds no PEM
%% entry, the options that are not certificate options, or `ssl`'s reason for
%% refusing them.
-spec set_tls_certificate(ref(), [ssl:tls_server_option()])
	-> ok | {error, not_found | not_tls | {invalid_certificate_options, any()}}.
set_tls_certificate(Ref, CertOpts) ->
	case tls_listener(Ref) of
		not_tls ->
			case mustang_registry:get_transport(Ref) of
				mustang_quic -> set_quic_certificate(Ref, CertOpts);
				_ -> {error, not_tls}
			end;
		true ->
			case check_certificate(CertOpts) of
				ok -> mustang_registry:set_tls_opts(Ref, CertOpts);
				Error -> Error
			end;
		Other ->
			{error, Other}
	end.

%% QUIC: the NIF's endpoint gets a new server configuration (rustls checks
%% that the key matches the certificate); connections open keep theirs.
set_quic_certificate(Ref, CertOpts) when is_list(CertOpts) ->
	TransOpts = #{socket_opts := SocketOpts} = mustang_registry:get_transport_opts(Ref),
	Keys = [cert, key, certfile, keyfile],
	SocketOpts2 = [O || O <- SocketOpts, not lists:member(element(1, O), Keys)] ++ CertOpts,
	{ok, ListenerSup} = listener_sup(Ref),
	case mustang_quic_endpoint:endpoint_opts(TransOpts#{socket_opts => SocketOpts2},
			get_protocol_options(Ref)) of
		{ok, NifOpts} ->
			{_, Pid, _, _} = lists:keyfind(mustang_quic_endpoint, 1,
				supervisor:which_children(ListenerSup)),
			case mustang_quic_endpoint:set_config(Pid, NifOpts) of
				ok -> ok;
				{error, Reason} -> {error, {invalid_certificate_options, Reason}}
			end;
		{error, _} ->
			{error, {invalid_certificate_options, CertOpts}}
	end;
set_quic_certificate(_, CertOpts) ->
	{error, {invalid_certificate_options, CertOpts}}.

tls_listener(Ref) ->
	try
		_ = mustang_registry:get_tls_opts(Ref),
		true
	catch error:badarg ->
		try mustang_registry:get_transport_opts(Ref) of
			_ -> not_tls
		catch error:badarg ->
			not_found
		end
	end.

check_certificate(CertOpts) when is_list(CertOpts), CertOpts =/= [] ->
	Keys = [cert, key, certfile, keyfile, password, certs_keys, cacerts, cacertfile, sni_hosts,
		sni_fun],
	case [O || O <- CertOpts, not (is_tuple(O) andalso tuple_size(O) =:= 2
			andalso lists:member(element(1, O), Keys))] of
		[] ->
			Files = [{K, F} || {K, F} <- CertOpts,
				lists:member(K, [certfile, keyfile, cacertfile])],
			case [{K, F, Why} || {K, F} <- Files, (Why = pem_file(F)) =/= ok] of
				[] when Files =:= [] ->
					check_ssl_options(CertOpts);
				[] ->
					ok = ssl:clear_pem_cache(),
					check_ssl_options(CertOpts);
				[Error | _] ->
					{error, {invalid_certificate_options, Error}}
			end;
		Bad ->
			{error, {invalid_certificate_options, Bad}}
	end;
check_certificate(CertOpts) ->
	{error, {invalid_certificate_options, CertOpts}}.

%% ssl reads the files at the handshake only.
pem_file(File) ->
	case file:read_file(File) of
		{ok, Pem} ->
			try public_key:pem_decode(Pem) of
				[] -> no_pem_entries;
				[_ | _] -> ok
			catch _:_ ->
				not_pem
			end;
		{error, Reason} ->
			Reason
	end.

check_ssl_options(CertOpts) ->
	case ssl:listen(0, [{ip, loopback} | CertOpts]) of
		{ok, LSocket} -> ssl:close(LSocket);
		{error, Reason} -> {error, {invalid_certificate_options, Reason}}
	end.

%% The number of connections open on the listener (all protocols). Raises
%% `error:badarg` when there is no listener Ref.
-spec active_connections(ref()) -> non_neg_integer().
active_connections(Ref) ->
	%% An unknown listener fails with badarg like the other queries, not 0.
	_ = mustang_registry:get_conn_limit(Ref),
	lists:sum([mustang_conns_sup:active_connections(Pid)
		|| {_, Pid} <- mustang_registry:get_conns_sups(Ref)]).
