%% The transport behaviour: what a connection process needs from a socket
%% module. mustang_tcp wraps gen_tcp and mustang_tls wraps ssl, so protocol
%% code is written once for both.
-module(mustang_transport).

-type socket() :: gen_tcp:socket() | ssl:sslsocket().
-type messages() :: {OK :: atom(), Closed :: atom(), Error :: atom(), Passive :: atom()}.
-export_type([socket/0, messages/0]).

-export([socket_info/2]).

-callback name() -> tcp | tls.
-callback secure() -> boolean().
-callback messages() -> messages().
-callback listen(Opts :: [any()]) -> {ok, socket()} | {error, atom()}.
-callback accept(socket(), timeout()) -> {ok, socket()} | {error, closed | timeout | atom()}.
-callback handshake(socket(), [any()], timeout()) -> {ok, socket()} | {error, any()}.
-callback recv(socket(), non_neg_integer(), timeout()) -> {ok, binary()} | {error, closed | timeout | atom()}.
-callback send(socket(), iodata()) -> ok | {error, atom()}.
-callback sendfile(socket(), file:name_all(), non_neg_integer(), non_neg_integer())
	-> {ok, non_neg_integer()} | {error, atom()}.
-callback setopts(socket(), [any()]) -> ok | {error, atom()}.
-callback getopts(socket(), [atom()]) -> {ok, [any()]} | {error, atom()}.
-callback controlling_process(socket(), pid()) -> ok | {error, atom()}.
-callback peername(socket()) -> {ok, {inet:ip_address(), inet:port_number()}} | {error, atom()}.
-callback sockname(socket()) -> {ok, {inet:ip_address(), inet:port_number()}} | {error, atom()}.
-callback peercert(socket()) -> {ok, binary()} | {error, any()}.
-callback negotiated_protocol(socket()) -> {ok, binary()} | {error, any()}.
-callback shutdown(socket(), read | write | read_write) -> ok | {error, atom()}.
-callback close(socket()) -> ok.

%% What the Req tells of the connection: the peer and local addresses, and
%% the client certificate (TLS).
-spec socket_info(module(), socket())
	-> {ok, {inet:ip_address(), inet:port_number()}, {inet:ip_address(), inet:port_number()},
		binary() | undefined} | error.
socket_info(Transport, Socket) ->
	case {Transport:peername(Socket), Transport:sockname(Socket)} of
		{{ok, Peer}, {ok, Sock}} ->
			Cert = case Transport:peercert(Socket) of
				{ok, Der} -> Der;
				_ -> undefined
			end,
			{ok, Peer, Sock, Cert};
		_ ->
			error
	end.
