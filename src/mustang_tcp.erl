%% Plain TCP transport (gen_tcp).
-module(mustang_tcp).
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

%% Writes larger than this go in pieces (mustang_transport:send_in_pieces/3).
-define(PIECE, 262144).

-spec name() -> tcp.
name() -> tcp.

-spec secure() -> false.
secure() -> false.

-spec messages() -> mustang_transport:messages().
messages() -> {tcp, tcp_closed, tcp_error, tcp_passive}.

%% Our defaults come first so that the user's socket options override them.
-spec listen([any()]) -> {ok, gen_tcp:socket()} | {error, atom()}.
listen(Opts) ->
	gen_tcp:listen(0, [binary, {active, false}, {packet, raw}, {reuseaddr, true},
		{nodelay, true}, {backlog, 1024}, {send_timeout, 30000},
		{send_timeout_close, true} | Opts]).

-spec accept(gen_tcp:socket(), timeout()) -> {ok, gen_tcp:socket()} | {error, atom()}.
accept(LSocket, Timeout) -> gen_tcp:accept(LSocket, Timeout).

-spec handshake(gen_tcp:socket(), [any()], timeout()) -> {ok, gen_tcp:socket()}.
handshake(Socket, _, _) -> {ok, Socket}.

-spec recv(gen_tcp:socket(), non_neg_integer(), timeout()) -> {ok, binary()} | {error, atom()}.
recv(Socket, Length, Timeout) ->
	case gen_tcp:recv(Socket, Length, Timeout) of
		{ok, Data} when is_binary(Data) -> {ok, Data};
		{ok, Data} -> {ok, iolist_to_binary(Data)};
		{error, Reason} -> {error, Reason}
	end.

-spec send(gen_tcp:socket(), iodata()) -> ok | {error, atom()}.
send(Socket, Data) ->
	mustang_transport:send_in_pieces(fun(Piece) -> send_piece(Socket, Piece) end, Data, ?PIECE).

send_piece(Socket, Data) ->
	case gen_tcp:send(Socket, Data) of
		ok -> ok;
		{error, {timeout, _}} -> {error, timeout};
		{error, Reason} -> {error, Reason}
	end.

-spec sendfile(gen_tcp:socket(), file:name_all(), non_neg_integer(), non_neg_integer())
	-> {ok, non_neg_integer()} | {error, atom()}.
sendfile(Socket, Path, Offset, Length) ->
	case file:open(Path, [read, raw, binary]) of
		{ok, Fd} ->
			try file:sendfile(Fd, Socket, Offset, Length, []) of
				{ok, Sent} -> {ok, Sent};
				{error, Reason} -> {error, Reason}
			after
				_ = file:close(Fd)
			end;
		{error, Reason} ->
			{error, Reason}
	end.

-spec setopts(gen_tcp:socket(), [any()]) -> ok | {error, atom()}.
setopts(Socket, Opts) -> inet:setopts(Socket, Opts).

-spec getopts(gen_tcp:socket(), [atom()]) -> {ok, [any()]} | {error, atom()}.
getopts(Socket, Opts) -> inet:getopts(Socket, Opts).

-spec controlling_process(gen_tcp:socket(), pid()) -> ok | {error, atom()}.
controlling_process(Socket, Pid) ->
	gen_tcp:controlling_process(Socket, Pid).

-spec peername(gen_tcp:socket()) -> {ok, {inet:ip_address(), inet:port_number()}} | {error, atom()}.
peername(Socket) -> normalize_address(inet:peername(Socket)).

-spec sockname(gen_tcp:socket()) -> {ok, {inet:ip_address(), inet:port_number()}} | {error, atom()}.
sockname(Socket) -> normalize_address(inet:sockname(Socket)).

normalize_address({ok, {IP, Port}}) when is_tuple(IP) -> {ok, {IP, Port}};
normalize_address({ok, _}) -> {error, einval};
normalize_address({error, Reason}) -> {error, Reason}.

-spec peercert(gen_tcp:socket()) -> {error, no_peercert}.
peercert(_) -> {error, no_peercert}.

-spec negotiated_protocol(gen_tcp:socket()) -> {error, protocol_not_negotiated}.
negotiated_protocol(_) -> {error, protocol_not_negotiated}.

-spec shutdown(gen_tcp:socket(), read | write | read_write) -> ok | {error, atom()}.
shutdown(Socket, How) -> gen_tcp:shutdown(Socket, How).

%% A socket closed with data still queued stays behind (outside any process
%% and max_connections) until the peer reads it, which a client that never
%% reads never does (a 50 MB response stayed queued for good). The data
%% gets send_timeout to go out, as a blocked write does, then it is dropped
%% and the connection reset. (The linger option alone does not do it: after
%% its timeout the port still holds the data.)
-spec close(gen_tcp:socket()) -> ok.
close(Socket) ->
	_ = case pending(Socket) of
		0 -> ok;
		_ -> flush_or_abort(Socket, erlang:monotonic_time(millisecond) + send_timeout(Socket))
	end,
	gen_tcp:close(Socket).

pending(Socket) ->
	case inet:getstat(Socket, [send_pend]) of
		{ok, [{send_pend, Pending}]} -> Pending;
		_ -> 0
	end.

flush_or_abort(Socket, Deadline) ->
	case pending(Socket) of
		0 ->
			ok;
		_ ->
			case erlang:monotonic_time(millisecond) >= Deadline of
				true ->
					inet:setopts(Socket, [{linger, {true, 0}}]);
				false ->
					receive after 50 -> ok end,
					flush_or_abort(Socket, Deadline)
			end
	end.

send_timeout(Socket) ->
	case inet:getopts(Socket, [send_timeout]) of
		{ok, [{send_timeout, Timeout}]} when is_integer(Timeout) -> Timeout;
		_ -> 30000
	end.
