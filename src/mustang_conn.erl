%% The first code a connection runs: wait for the socket from the acceptor,
%% finish the TLS handshake, pick the protocol (ALPN for TLS), and become
%% that protocol's process by tail call.
-module(mustang_conn).

-export([start_link/2]).
-export([init/3]).

-spec start_link(mustang:ref(), module()) -> pid().
start_link(Ref, Transport) ->
	proc_lib:spawn_link(?MODULE, init, [self(), Ref, Transport]).

-spec init(pid(), mustang:ref(), module()) -> ok | no_return().
init(Parent, Ref, Transport) ->
	receive
		{mustang_socket, closed} ->
			exit(normal);
		{mustang_socket, Socket} ->
			%% The HTTP/1.1 options: `protocols' and `alpn_default_protocol'
			%% are the same in both.
			Opts = mustang_registry:get_conn_opts(Ref, http),
			handshake(Parent, Ref, Transport, Socket, Opts)
	after 10000 ->
		%% The acceptor died before handing the socket over.
		exit(normal)
	end.

handshake(Parent, Ref, mustang_tls, Socket, Opts) ->
	Timeout = maps:get(handshake_timeout, mustang_registry:get_transport_opts(Ref), 5000),
	case mustang_tls:handshake(Socket, [], Timeout) of
		{ok, TLSSocket} ->
			Protocols = maps:get(protocols, Opts, [http2, http]),
			Protocol = case mustang_tls:negotiated_protocol(TLSSocket) of
				{ok, <<"h2">>} -> http2;
				{ok, <<"http/1.1">>} -> http;
				{ok, Other} -> {unsupported, Other};
				{error, _} -> maps:get(alpn_default_protocol, Opts, http)
			end,
			case lists:member(Protocol, Protocols) of
				true -> start_protocol(Protocol, Parent, Ref, mustang_tls, TLSSocket, Opts);
				false -> close(mustang_tls, TLSSocket, {unsupported_alpn, Protocol})
			end;
		{error, Reason} ->
			%% Failed handshakes are common on the internet (scanners, old
			%% clients): debug level, not an error storm.
			_ = mustang_tls:close(Socket),
			logger:debug("mustang ~p: TLS handshake failed: ~0p", [Ref, Reason]),
			exit(normal)
	end;
handshake(Parent, Ref, Transport, Socket, Opts) ->
	%% Clear text: HTTP/1.1, which also detects the HTTP/2 preface and the
	%% h2c upgrade; or HTTP/2 only, by prior knowledge.
	case lists:member(http, maps:get(protocols, Opts, [http2, http])) of
		true -> start_protocol(http, Parent, Ref, Transport, Socket, Opts);
		false -> start_protocol(http2, Parent, Ref, Transport, Socket, Opts)
	end.

start_protocol(http, Parent, Ref, Transport, Socket, Opts) ->
	mustang_http1:init(Parent, Ref, Transport, Socket, Opts);
start_protocol(http2, Parent, Ref, Transport, Socket, _) ->
	mustang_http2:init(Parent, Ref, Transport, Socket, mustang_registry:get_conn_opts(Ref, http2),
		#{}).

-spec close(module(), mustang_transport:socket(), any()) -> no_return().
close(Transport, Socket, Reason) ->
	logger:debug("mustang: closing connection: ~0p", [Reason]),
	Transport:close(Socket),
	exit(normal).

%% The addresses and the client certificate of a connection, for the Req;
%% error when the peer already left.
