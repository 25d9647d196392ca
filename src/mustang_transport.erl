%% The transport behaviour: what a connection process needs from a socket
%% module. mustang_tcp wraps gen_tcp and mustang_tls wraps ssl, so protocol
%% code is written once for both.
-module(mustang_transport).

-type socket() :: gen_tcp:socket() | ssl:sslsocket().
-type messages() :: {OK :: atom(), Closed :: atom(), Error :: atom(), Passive :: atom()}.
-export_type([socket/0, messages/0]).

-export([socket_info/2]).
-export([send_in_pieces/3]).

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

%% Writes Data with Send (one call per piece of at most PieceSize bytes, in
%% order; stops at the first error). A socket write returns as soon as the
%% data is queued in the port when the queue was short: one write of a 50 MB
%% body to a client that never reads returned at once and left 49 MB queued,
%% beyond send_timeout's reach. In pieces, each write waits for the queue to
%% drain (or for send_timeout), so a connection holds at most about one
%% piece more than the kernel buffers. Binaries are split without copying;
%% no data, no write.
-spec send_in_pieces(fun((iodata()) -> ok | {error, any()}), iodata(), pos_integer())
	-> ok | {error, any()}.
send_in_pieces(Send, Data, PieceSize) ->
	case iolist_size(Data) of
		0 -> ok;
		Size when Size =< PieceSize -> Send(Data);
		_ -> pieces(Send, PieceSize, [Data], [], 0)
	end.

pieces(Send, _, [], Acc, _) ->
	flush(Send, Acc);
pieces(Send, Max, [Empty | Rest], Acc, Size) when Empty =:= []; Empty =:= <<>> ->
	pieces(Send, Max, Rest, Acc, Size);
pieces(Send, Max, [[Head | Tail] | Rest], Acc, Size) ->
	pieces(Send, Max, [Head, Tail | Rest], Acc, Size);
pieces(Send, Max, [Byte | Rest], Acc, Size) when is_integer(Byte) ->
	next(Send, Max, Rest, [Byte | Acc], Size + 1);
pieces(Send, Max, [Bin | Rest], Acc, Size) when Size + byte_size(Bin) =< Max ->
	next(Send, Max, Rest, [Bin | Acc], Size + byte_size(Bin));
pieces(Send, Max, [Bin | Rest], Acc, Size) ->
	Take = Max - Size,
	<<Piece:Take/binary, Left/binary>> = Bin,
	case flush(Send, [Piece | Acc]) of
		ok -> pieces(Send, Max, [Left | Rest], [], 0);
		Error -> Error
	end.

next(Send, Max, Rest, Acc, Max) ->
	case flush(Send, Acc) of
		ok -> pieces(Send, Max, Rest, [], 0);
		Error -> Error
	end;
next(Send, Max, Rest, Acc, Size) ->
	pieces(Send, Max, Rest, Acc, Size).

flush(_, []) -> ok;
flush(Send, Acc) -> Send(lists:reverse(Acc)).
