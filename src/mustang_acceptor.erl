%% An acceptor: takes a place under max_connections (mustang_conn_limit),
%% accepts a socket, asks its connection supervisor shard for a connection
%% process and hands the socket over. When the listener is at
%% max_connections it accepts nothing until its shard wakes it up.
%%
%% Out of file descriptors (accept fails with emfile or enfile, or
%% system_limit when the VM's port table is full): the acceptor pauses,
%% 100 ms and twice as long after each new failure up to 1 s, then tries
%% again, so that accepting resumes within a second of descriptors being
%% freed, without spinning and without crashing (a crash would only restart
%% it into the same error, and soon take the listener down). The first
%% failure of a run is logged, at most log_rate_limit lines a second over the
%% node (mustang_log_limit); the first accept that works after a run says how
%% many failed.
-module(mustang_acceptor).

-export([start_link/4]).
-export([loop/5]).

-type shard() :: {pos_integer(), pid(), mustang_conn_limit:limit()}.
-export_type([shard/0]).

%% Accepts that failed for want of descriptors in a row (0: none).
-type failures() :: non_neg_integer().

-define(MIN_PAUSE, 100).
-define(MAX_PAUSE, 1000).

-spec start_link(mustang_transport:socket(), module(), shard(), module()) -> {ok, pid()}.
start_link(LSocket, Transport, Shard, Logger) ->
	Pid = proc_lib:spawn_link(?MODULE, loop, [LSocket, Transport, Shard, Logger, 0]),
	{ok, Pid}.

-spec loop(mustang_transport:socket(), module(), shard(), module(), failures()) -> no_return().
loop(LSocket, Transport, Shard = {Id, ConnsSup, Limit}, Logger, Failures) ->
	Failures2 = case mustang_conn_limit:reserve(Limit, Id) of
		true ->
			%% The place is given back unless a connection process took it.
			try accept(LSocket, Transport, ConnsSup) of
				connection ->
					resumed(Logger, Failures);
				{out_of_descriptors, Reason} ->
					mustang_conn_limit:release(Limit, Id),
					pause(Logger, Reason, Failures);
				_ ->
					mustang_conn_limit:release(Limit, Id),
					resumed(Logger, Failures)
			catch Class:Reason:Stacktrace ->
				mustang_conn_limit:release(Limit, Id),
				erlang:raise(Class, Reason, Stacktrace)
			end;
		false ->
			mustang_conns_sup:wait_for_capacity(ConnsSup),
			Failures
	end,
	loop(LSocket, Transport, Shard, Logger, Failures2).

accept(LSocket, Transport, ConnsSup) ->
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
			%% The listen socket was closed (mustang:drain/2, suspend): this
			%% acceptor is done (a transient child, not restarted).
			exit(shutdown);
		{error, Reason} when Reason =:= emfile; Reason =:= enfile; Reason =:= system_limit ->
			{out_of_descriptors, Reason};
		{error, _} ->
			%% Transient errors (econnaborted, TLS transport errors): try again.
			ok
	end.

pause(Logger, Reason, Failures) ->
	_ = case Failures =:= 0 andalso mustang_log_limit:allow() of
		true ->
			Logger:error("mustang acceptor: accept failed: ~p (out of file descriptors or "
				"ports); accepting pauses and is retried every ~b to ~b ms",
				[Reason, ?MIN_PAUSE, ?MAX_PAUSE]);
		false ->
			ok
	end,
	Pause = min(?MAX_PAUSE, ?MIN_PAUSE bsl min(Failures, 10)),
	receive after Pause -> ok end,
	Failures + 1.

resumed(_, 0) ->
	0;
resumed(Logger, Failures) ->
	_ = case mustang_log_limit:allow() of
		true ->
			Logger:notice("mustang acceptor: accepting again after ~b failed accepts (out of file "
				"descriptors)", [Failures]);
		false ->
			ok
	end,
	0.
