%% TLS transport (OTP ssl). The handshake runs in the connection process, not
%% in the acceptor, so a slow client cannot stall accepting.
%%
%% Safe defaults, each replaced by the user's socket option of the same key
%% (doc/guide/tls.md): TLS 1.3 and 1.2 only; the TLS 1.3 suites and, for
%% TLS 1.2, only the ECDHE suites with an AEAD cipher (AES-GCM,
%% ChaCha20-Poly1305: forward secrecy, no CBC, no SHA-1 MAC, no RSA key
%% exchange, no DHE); the server's cipher order; secure renegotiation
%% (RFC 5746) and no renegotiation started by the client (a cheap way for a
%% client to make the server compute); session reuse on.
-module(mustang_tls).
-behaviour(mustang_transport).

-export([name/0]).
-export([secure/0]).
-export([messages/0]).
-export([listen/1]).
-export([accept/2]).
-export([handshake/3]).
-export([recv/3]).
-export([send/2]).
-export([sendfile/4]).
-export([setopts/2]).
-export([getopts/2]).
-export([controlling_process/2]).
-export([peername/1]).
-export([sockname/1]).
-export([peercert/1]).
-export([negotiated_protocol/1]).
-export([shutdown/2]).
-export([close/1]).
-export([safe_ciphers/0]).
-export([tcp_socket/1]).

%% Writes larger than this go in pieces (mustang_transport:send_in_pieces/3).
-define(PIECE, 262144).

-spec name() -> tls.
name() -> tls.

-spec secure() -> true.
secure() -> true.

-spec messages() -> mustang_transport:messages().
messages() -> {ssl, ssl_closed, ssl_error, ssl_passive}.

-spec listen([any()]) -> {ok, ssl:sslsocket()} | {error, atom()}.
listen(Opts) ->
	Versions = proplists:get_value(versions, Opts, ['tlsv1.3', 'tlsv1.2']),
	Defaults = [binary, {active, false}, {packet, raw}, {reuseaddr, true}, {nodelay, true},
		{backlog, 1024}, {send_timeout, 30000}, {send_timeout_close, true},
		{alpn_preferred_protocols, [<<"http/1.1">>]}, {versions, Versions},
		{ciphers, safe_ciphers()}, {honor_cipher_order, true}
		%% ssl refuses these three when TLS 1.3 is the only version.
		| [Opt || Versions =/= ['tlsv1.3'], Opt <- [{secure_renegotiate, true},
			{client_renegotiation, false}, {reuse_sessions, true}]]],
	case ssl:listen(0, merge(Opts, Defaults)) of
		{ok, LSocket} -> {ok, LSocket};
		{error, Reason} when is_atom(Reason) -> {error, Reason};
		{error, Reason} -> {error, {tls_listen, Reason}}
	end.

%% The cipher suites a listener offers unless the user sets `ciphers': of
%% OTP's default suites, the TLS 1.3 ones (key exchange `any') and the
%% TLS 1.2 ones with an ECDHE key exchange, each with AES-GCM or
%% ChaCha20-Poly1305 (no CCM_8 and its short tag), in OTP's order.
-spec safe_ciphers() -> [ssl:erl_cipher_suite()].
safe_ciphers() ->
	ssl:filter_cipher_suites(
		ssl:cipher_suites(exclusive, 'tlsv1.3') ++ ssl:cipher_suites(default, 'tlsv1.2'), [
			{key_exchange, fun(K) -> lists:member(K, [any, ecdhe_ecdsa, ecdhe_rsa]) end},
			{cipher, fun(C) ->
				lists:member(C, [aes_128_gcm, aes_256_gcm, chacha20_poly1305])
			end}]).

%% ssl refuses duplicate keys in some options, so user options replace ours.
merge(Opts, Defaults) ->
	Keys = [element(1, O) || O <- Opts, is_tuple(O)],
	Opts ++ [D || D <- Defaults, not (is_tuple(D) andalso lists:member(element(1, D), Keys)),
		not lists:member(D, Opts)].

-spec accept(ssl:sslsocket(), timeout()) -> {ok, ssl:sslsocket()} | {error, atom()}.
accept(LSocket, Timeout) ->
	case ssl:transport_accept(LSocket, Timeout) of
		{ok, Socket} -> {ok, Socket};
		{error, Reason} when is_atom(Reason) -> {error, Reason};
		{error, _} -> {error, einval}
	end.

-spec handshake(ssl:sslsocket(), [any()], timeout()) -> {ok, ssl:sslsocket()} | {error, any()}.
handshake(Socket, Opts, Timeout) ->
	case ssl:handshake(Socket, Opts, Timeout) of
		{ok, TLSSocket} -> {ok, TLSSocket};
		{ok, TLSSocket, _Ext} -> {ok, TLSSocket};
		{error, Reason} -> {error, Reason}
	end.

-spec recv(ssl:sslsocket(), non_neg_integer(), timeout()) -> {ok, binary()} | {error, atom()}.
recv(Socket, Length, Timeout) ->
	case ssl:recv(Socket, Length, Timeout) of
		{ok, Data} when is_binary(Data) -> {ok, Data};
		{error, Reason} when is_atom(Reason) -> {error, Reason};
		{error, _} -> {error, einval}
	end.

-spec send(ssl:sslsocket(), iodata()) -> ok | {error, atom()}.
send(Socket, Data) ->
	mustang_transport:send_in_pieces(fun(Piece) -> send_piece(Socket, Piece) end, Data, ?PIECE).

send_piece(Socket, Data) ->
	case ssl:send(Socket, Data) of
		ok -> ok;
		{error, Reason} when is_atom(Reason) -> {error, Reason};
		{error, _} -> {error, closed}
	end.

%% ssl has no zero-copy sendfile: read and send in chunks.
-spec sendfile(ssl:sslsocket(), file:name_all(), non_neg_integer(), non_neg_integer())
	-> {ok, non_neg_integer()} | {error, atom()}.
sendfile(Socket, Path, Offset, Length) ->
	case file:open(Path, [read, raw, binary]) of
		{ok, Fd} ->
			try
				sendfile_loop(Socket, Fd, Offset, Length, 0)
			after
				_ = file:close(Fd)
			end;
		{error, Reason} ->
			{error, Reason}
	end.

sendfile_loop(_, _, _, Left, Sent) when Left =< 0 ->
	{ok, Sent};
sendfile_loop(Socket, Fd, Offset, Left, Sent) ->
	case file:pread(Fd, Offset, min(Left, 65536)) of
		{ok, Data} ->
			case send(Socket, Data) of
				ok ->
					Size = byte_size(Data),
					sendfile_loop(Socket, Fd, Offset + Size, Left - Size, Sent + Size);
				Error ->
					Error
			end;
		eof ->
			{ok, Sent};
		{error, Reason} ->
			{error, Reason}
	end.

-spec setopts(ssl:sslsocket(), [any()]) -> ok | {error, atom()}.
setopts(Socket, Opts) ->
	case ssl:setopts(Socket, Opts) of
		ok -> ok;
		{error, Reason} when is_atom(Reason) -> {error, Reason};
		{error, _} -> {error, einval}
	end.

-spec getopts(ssl:sslsocket(), [atom()]) -> {ok, [any()]} | {error, atom()}.
getopts(Socket, Opts) ->
	case ssl:getopts(Socket, Opts) of
		{ok, Values} -> {ok, Values};
		{error, Reason} when is_atom(Reason) -> {error, Reason};
		{error, _} -> {error, einval}
	end.

-spec controlling_process(ssl:sslsocket(), pid()) -> ok | {error, atom()}.
controlling_process(Socket, Pid) ->
	case ssl:controlling_process(Socket, Pid) of
		ok -> ok;
		{error, Reason} when is_atom(Reason) -> {error, Reason};
		{error, _} -> {error, einval}
	end.

-spec peername(ssl:sslsocket()) -> {ok, {inet:ip_address(), inet:port_number()}} | {error, atom()}.
peername(Socket) -> normalize_address(ssl:peername(Socket)).

-spec sockname(ssl:sslsocket()) -> {ok, {inet:ip_address(), inet:port_number()}} | {error, atom()}.
sockname(Socket) -> normalize_address(ssl:sockname(Socket)).

normalize_address({ok, {IP, Port}}) -> {ok, {IP, Port}};
normalize_address({error, Reason}) when is_atom(Reason) -> {error, Reason};
normalize_address({error, _}) -> {error, einval}.

-spec peercert(ssl:sslsocket()) -> {ok, binary()} | {error, any()}.
peercert(Socket) ->
	case ssl:peercert(Socket) of
		{ok, Der} when is_binary(Der) -> {ok, Der};
		{error, Reason} -> {error, Reason}
	end.

-spec negotiated_protocol(ssl:sslsocket()) -> {ok, binary()} | {error, any()}.
negotiated_protocol(Socket) -> ssl:negotiated_protocol(Socket).

-spec shutdown(ssl:sslsocket(), read | write | read_write) -> ok | {error, atom()}.
shutdown(Socket, How) ->
	case ssl:shutdown(Socket, How) of
		ok -> ok;
		{error, Reason} when is_atom(Reason) -> {error, Reason};
		{error, _} -> {error, einval}
	end.

-spec close(ssl:sslsocket()) -> ok.
close(Socket) ->
	_ = ssl:close(Socket),
	ok.

%% The TCP socket under a TLS socket that has not done its handshake yet:
%% the PROXY protocol header comes before the ClientHello and is read from
%% it (mustang_conn). ssl has no documented call for it: this is the shape
%% of the socket ssl:transport_accept/2 returns in OTP 25 and 26, which
%% Ranch's recv_proxy_header relies on as well.
-spec tcp_socket(ssl:sslsocket()) -> gen_tcp:socket().
tcp_socket({sslsocket, {gen_tcp, Socket, _, _}, _}) -> Socket.
