%% An acceptor: takes a place under max_connections (mustang_conn_limit),
%% accepts a socket, asks its connection supervisor shard for a connection
%% process and hands the socket over. When the listener is at
%% max_connections it accepts nothing until its shard wakes it up.
-module(mustang_acceptor).

-export([start_link/4]).
-export([loop/4]).

-type shard() :: {pos_integer(), pid(), mustang_conn_limit:limit()}.
-export_type([shard/0]).

-spec start_link(mustang_transport:socket(), module(), shard(), module()) -> {ok, pid()}.
start_link(LSocket, Transport, Shard, Logger) ->
	Pid = proc_lib:spawn_link(?MODULE, loop, [LSocket, Transport, Shard, Logger]),
	{ok, Pid}.

-spec loop(mustang_transport:socket(), module(), shard(), module()) -> no_return().
loop(LSocket, Transport, Shard = {Id, ConnsSup, Limit}, Logger) ->
	case mustang_conn_limit:reserve(Limit, Id) of
		true ->
			%% The place is given back unless a connection process took it.
			try accept(LSocket, Transport, ConnsSup, Logger) of
				connection -> ok;
				Other -> mustang_conn_limit:release(Limit, Id), Other
			catch Class:Reason:Stacktrace ->
				mustang_conn_limit:release(Limit, Id),
				erlang:raise(Class, Reason, Stacktrace)
			end;
		false ->
			mustang_conns_sup:wait_for_capacity(ConnsSup)
	end,
	loop(LSocket, Transport, Shard, Logger).

accept(LSocket, Transport, ConnsSup, Logger) ->
	case Transport:accept(LSocket, infinity) of
		{ok, Socket} ->
			case mustang_conns_sup:start_connection(ConnsSup) of
				{ok, Pid} ->
					case Transport:controlling_process(Socket, Pid) of
						ok -> Pid ! {mustang_socket, Socket}, ok;
						{error, _} -> Transport:close(Socket), Pid ! {mustang_socket, closed}, ok
					end,
					connection;
				{error, _} ->
					Transport:close(Socket)
			end;
		{error, closed} ->
			exit(normal);
		{error, Reason} when Reason =:= emfile; Reason =:= enfile ->
			%% Out of file descriptors: say so once per occurrence, and give
			%% connections time to close rather than spinning.
			Logger:error("mustang acceptor: accept failed: ~p (out of file descriptors)",
				[Reason]),
			receive after 100 -> ok end;
		{error, _} ->
			%% Transient errors (econnaborted, TLS transport errors): try again.
			ok
	end.
