%% The first code a connection runs: wait for the socket from the acceptor,
%% read the PROXY protocol header when the proxy_header option is on, finish
%% the TLS handshake, pick the protocol (ALPN for TLS), and become that
%% protocol's process by tail call.
-module(mustang_conn).

-export([start_link/2]).
-export([init/3]).

-spec start_link(mustang:ref(), module()) -> pid().
start_link(Ref, Transport) ->
	proc_lib:spawn_link(?MODULE, init, [self(), Ref, Transport]).

-spec init(pid(), mustang:ref(), module()) -> ok | no_return().
init(Parent, Ref, Transport) ->
	%% From the start: a stop (exit signal from the shard, mustang:drain/2)
	%% that comes before the protocol loop waits for it, rather than killing
	%% a connection whose client may have sent its request already.
	process_flag(trap_exit, true),
	receive
		{mustang_socket, closed} ->
			exit(normal);
		{mustang_socket, Socket} ->
			%% The HTTP/1.1 options, with their defaults: `protocols' and
			%% `alpn_default_protocol' are the same in both.
			Opts = mustang_registry:get_conn_opts(Ref, http),
			case Opts of
				#{proxy_header := false} ->
					handshake(Parent, Ref, Transport, Socket, Opts, #{});
				#{proxy_header := true, proxy_header_timeout := Timeout} ->
					Info = proxy_header(Ref, Transport, Socket, Timeout),
					handshake(Parent, Ref, Transport, Socket, Opts, #{proxy_header => Info})
			end
	after 10000 ->
		%% The acceptor died before handing the socket over.
		exit(normal)
	end.

%% PROXY protocol (HAProxy's proxy-protocol.txt): the header comes first,
%% before the TLS ClientHello on a TLS listener, so it is read from the TCP
%% socket (under the TLS one), within Timeout ms in all. The bytes read
%% after it are put back in the socket for the TLS handshake or the first
%% request. A header that is malformed, too long, late or cut short closes
%% the connection: logged at debug level, like failed TLS handshakes, as
%% anyone can send those bytes.
-spec proxy_header(mustang:ref(), module(), mustang_transport:socket(), non_neg_integer())
	-> mustang_proxy_header:info().
proxy_header(Ref, Transport, Socket, Timeout) ->
	TCPSocket = case Transport of
		mustang_tls -> mustang_tls:tcp_socket(Socket);
		_ -> Socket
	end,
	Deadline = erlang:monotonic_time(millisecond) + Timeout,
	case read_proxy_header(TCPSocket, <<>>, Deadline) of
		{ok, Info} ->
			Info;
		{error, Reason} ->
			logger:debug("mustang ~p: PROXY protocol header refused: ~0p", [Ref, Reason]),
			Transport:close(Socket),
			exit(normal)
	end.

read_proxy_header(Socket, Buffer, Deadline) ->
	case gen_tcp:recv(Socket, 0, max(0, Deadline - erlang:monotonic_time(millisecond))) of
		{ok, Data} ->
			Buffer2 = <<Buffer/binary, Data/binary>>,
			case mustang_proxy_header:parse(Buffer2) of
				{ok, Info, <<>>} -> {ok, Info};
				{ok, Info, Rest} ->
					case gen_tcp:unrecv(Socket, Rest) of
						ok -> {ok, Info};
						Error -> Error
					end;
				more -> read_proxy_header(Socket, Buffer2, Deadline);
				Error -> Error
			end;
		{error, timeout} ->
			{error, {timeout, Buffer}};
		{error, Reason} ->
			{error, {Reason, Buffer}}
	end.

handshake(Parent, Ref, mustang_tls, Socket, Opts, Conn) ->
	Timeout = maps:get(handshake_timeout, mustang_registry:get_transport_opts(Ref), 5000),
	%% The certificate of the latest mustang:set_tls_certificate/2, read for
	%% each handshake: new connections take it, established ones keep theirs.
	case mustang_tls:handshake(Socket, mustang_registry:get_tls_opts(Ref), Timeout) of
		{ok, TLSSocket} ->
			Protocols = maps:get(protocols, Opts, [http2, http]),
			Protocol = case mustang_tls:negotiated_protocol(TLSSocket) of
				{ok, <<"h2">>} -> http2;
				{ok, <<"http/1.1">>} -> http;
				{ok, Other} -> {unsupported, Other};
				{error, _} -> maps:get(alpn_default_protocol, Opts, http)
			end,
			case lists:member(Protocol, Protocols) of
				true -> start_protocol(Protocol, Parent, Ref, mustang_tls, TLSSocket, Opts, Conn);
				false -> close(mustang_tls, TLSSocket, {unsupported_alpn, Protocol})
			end;
		{error, Reason} ->
			%% Failed handshakes are common on the internet (scanners, old
			%% clients): debug level, not an error storm.
			_ = mustang_tls:close(Socket),
			logger:debug("mustang ~p: TLS handshake failed: ~0p", [Ref, Reason]),
			exit(normal)
	end;
handshake(Parent, Ref, Transport, Socket, Opts, Conn) ->
	%% Clear text: HTTP/1.1, which also detects the HTTP/2 preface and the
	%% h2c upgrade; or HTTP/2 only, by prior knowledge.
	case lists:member(http, maps:get(protocols, Opts, [http2, http])) of
		true -> start_protocol(http, Parent, Ref, Transport, Socket, Opts, Conn);
		false -> start_protocol(http2, Parent, Ref, Transport, Socket, Opts, Conn)
	end.

%% Conn: what the connection knew before the protocol started (the PROXY
%% protocol header).
start_protocol(http, Parent, Ref, Transport, Socket, Opts, Conn) ->
	mustang_http1:init(Parent, Ref, Transport, Socket, Opts, Conn);
start_protocol(http2, Parent, Ref, Transport, Socket, _, Conn) ->
	mustang_http2:init(Parent, Ref, Transport, Socket, mustang_registry:get_conn_opts(Ref, http2),
		Conn).

-spec close(module(), mustang_transport:socket(), any()) -> no_return().
close(Transport, Socket, Reason) ->
	logger:debug("mustang: closing connection: ~0p", [Reason]),
	Transport:close(Socket),
	exit(normal).

%% The addresses and the client certificate of a connection, for the Req;
%% error when the peer already left.
