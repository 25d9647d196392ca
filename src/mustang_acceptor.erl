%% An acceptor: accepts a socket, asks its connection supervisor shard for a
%% connection process, hands the socket over, and accepts again. When the
%% shard is at max_connections it tells the acceptor to wait, and the
%% acceptor accepts nothing until the shard wakes it up.
-module(mustang_acceptor).

-export([start_link/4]).
-export([loop/4]).

-spec start_link(mustang_transport:socket(), module(), pid(), module())
	-> {ok, pid()}.
start_link(LSocket, Transport, ConnsSup, Logger) ->
	Pid = proc_lib:spawn_link(?MODULE, loop, [LSocket, Transport, ConnsSup, Logger]),
	{ok, Pid}.

-spec loop(mustang_transport:socket(), module(), pid(), module()) -> no_return().
loop(LSocket, Transport, ConnsSup, Logger) ->
	case Transport:accept(LSocket, infinity) of
		{ok, Socket} ->
			case mustang_conns_sup:start_connection(ConnsSup) of
				{ok, Pid, Continue} ->
					case Transport:controlling_process(Socket, Pid) of
						ok -> Pid ! {mustang_socket, Socket}, ok;
						{error, _} -> Transport:close(Socket), Pid ! {mustang_socket, closed}, ok
					end,
					case Continue of
						true -> ok;
						false -> mustang_conns_sup:wait_for_capacity(ConnsSup)
					end;
				{error, _} ->
					Transport:close(Socket)
			end,
			loop(LSocket, Transport, ConnsSup, Logger);
		{error, closed} ->
			exit(normal);
		{error, Reason} when Reason =:= emfile; Reason =:= enfile ->
			%% Out of file descriptors: say so once per occurrence, and give
			%% connections time to close rather than spinning.
			Logger:error("mustang acceptor: accept failed: ~p (out of file descriptors)",
				[Reason]),
			receive after 100 -> ok end,
			loop(LSocket, Transport, ConnsSup, Logger);
		{error, _} ->
			%% Transient errors (econnaborted, TLS transport errors): try again.
			loop(LSocket, Transport, ConnsSup, Logger)
	end.
