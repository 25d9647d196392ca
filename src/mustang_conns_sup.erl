%% A connection supervisor shard. It is a hand-written special process rather
%% than an OTP supervisor because it starts thousands of short-lived children
%% per second: it spawns connection processes without waiting for an init
%% acknowledgement, counts them in the listener's mustang_conn_limit, and
%% wakes its acceptors held back at max_connections. It still answers sys
%% messages and the supervisor calls that observer and release handling use
%% (which_children, count_children).
%%
%% Shutdown: on the parent's exit signal it asks every connection to stop
%% (exit signal `shutdown`; connections trap exits and finish the request in
%% flight), waits until the listener's shutdown deadline, then kills what is
%% left. A drain (mustang:drain/2) does the same while the shard keeps
%% running, and tells the caller when its last connection ended.
%%
%% It knows each connection's protocol for mustang:info/1: a connection is
%% `http' until it tells its shard it became `http2' or `websocket'
%% (protocol/2, one message per HTTP/2 or Websocket connection).
-module(mustang_conns_sup).

-export([start_link/4]).
-export([start_connection/1]).
-export([start_connection/2]).
-export([wait_for_capacity/1]).
-export([drain/2]).
-export([notify_empty/1]).
-export([recount/1]).
-export([protocol/2]).
-export([counts/1]).
-export([active_connections/1]).

-export([init/5]).
-export([system_continue/3]).
-export([system_terminate/4]).
-export([system_code_change/4]).

-record(state, {
	parent :: pid(),
	ref :: mustang:ref(),
	id :: pos_integer(),
	transport :: module(),
	limit :: mustang_conn_limit:limit(),
	shutdown :: timeout(),
	%% Connection pids and protocols; the map size is the connection count.
	conns = #{} :: #{pid() => protocol()},
	%% Processes told when the last connection ends (notify_empty/1).
	waiters = [] :: [{pid(), reference()}],
	%% Acceptors told to wait for capacity.
	sleepers = [] :: [pid()],
	%% Set once a graceful stop has started: the absolute deadline.
	deadline = undefined :: undefined | integer() | infinity
}).

-type protocol() :: http | http2 | websocket | http3.
-export_type([protocol/0]).

-spec start_link(mustang:ref(), pos_integer(), module(), map()) -> {ok, pid()}.
start_link(Ref, Id, Transport, TransOpts) ->
	proc_lib:start_link(?MODULE, init, [self(), Ref, Id, Transport, TransOpts]).

%% Called by an acceptor that reserved a place in this shard's count
%% (mustang_conn_limit:reserve/2): the connection process takes it.
-spec start_connection(pid()) -> {ok, pid()} | {error, any()}.
start_connection(ConnsSup) ->
	MRef = monitor(process, ConnsSup),
	ConnsSup ! {?MODULE, start, self(), MRef},
	receive
		{MRef, Pid} ->
			demonitor(MRef, [flush]),
			{ok, Pid};
		{'DOWN', MRef, process, _, Reason} ->
			{error, Reason}
	end.

%% The same for a connection process that is not mustang_conn (QUIC: the
%% endpoint process starts mustang_http3 processes): {M, F, A} is applied in
%% the shard and must return the pid of a process it linked.
-spec start_connection(pid(), {module(), atom(), [any()]}) -> {ok, pid()} | {error, any()}.
start_connection(ConnsSup, MFA) ->
	MRef = monitor(process, ConnsSup),
	ConnsSup ! {?MODULE, start, self(), MRef, MFA},
	receive
		{MRef, Pid} ->
			demonitor(MRef, [flush]),
			{ok, Pid};
		{'DOWN', MRef, process, _, Reason} ->
			{error, Reason}
	end.

%% Called by an acceptor that could not reserve a place: returns when a
%% connection of the listener ended (the acceptor then tries again).
-spec wait_for_capacity(pid()) -> ok.
wait_for_capacity(ConnsSup) ->
	MRef = monitor(process, ConnsSup),
	ConnsSup ! {?MODULE, sleep, self()},
	receive
		{?MODULE, resume, ConnsSup} ->
			demonitor(MRef, [flush]),
			ok;
		{?MODULE, stop_waiting} ->
			%% The listen socket is closed (mustang:stop_acceptors/2).
			exit(shutdown);
		{'DOWN', MRef, process, _, Reason} ->
			exit(Reason)
	end.

%% Starts a graceful stop of every connection of this shard; the shard itself
%% keeps running until its parent stops it. Connections still open at the
%% deadline (monotonic ms, or infinity) are killed.
-spec drain(pid(), integer() | infinity) -> ok.
drain(ConnsSup, Deadline) ->
	ConnsSup ! {?MODULE, drain, Deadline},
	ok.

%% Asks to be told, with {Tag, empty}, when the shard has no connection (at
%% once if it has none now). The caller monitors the shard with Tag.
-spec notify_empty(pid()) -> reference().
notify_empty(ConnsSup) ->
	Tag = monitor(process, ConnsSup),
	ConnsSup ! {?MODULE, notify_empty, self(), Tag},
	Tag.

%% Once the acceptors are stopped (mustang:suspend_listener/1): places that
%% killed acceptors had reserved, and their waits for capacity, are given
%% back, so that the count is the shard's connections again.
-spec recount(pid()) -> ok.
recount(ConnsSup) ->
	{ok, ok} = gen:call(ConnsSup, '$gen_call', {?MODULE, recount}, infinity),
	ok.

%% Called by a connection process when it becomes HTTP/2 or Websocket.
-spec protocol(pid(), protocol()) -> ok.
protocol(ConnsSup, Protocol) ->
	ConnsSup ! {?MODULE, protocol, self(), Protocol},
	ok.

%% The shard's connections per protocol.
-spec counts(pid()) -> #{protocol() => non_neg_integer()}.
counts(ConnsSup) ->
	{ok, Counts} = gen:call(ConnsSup, '$gen_call', {?MODULE, counts}, infinity),
	Counts.

-spec active_connections(pid()) -> non_neg_integer().
active_connections(ConnsSup) ->
	{ok, Count} = gen:call(ConnsSup, '$gen_call', {?MODULE, active_connections}, infinity),
	Count.

-spec init(pid(), mustang:ref(), pos_integer(), module(), map()) -> no_return().
init(Parent, Ref, Id, Transport, TransOpts) ->
	process_flag(trap_exit, true),
	ok = mustang_registry:set_conns_sup(Ref, Id, self()),
	Limit = mustang_registry:get_conn_limit(Ref),
	ok = mustang_conn_limit:reset(Limit, Id, 0),
	proc_lib:init_ack(Parent, {ok, self()}),
	loop(#state{parent = Parent, ref = Ref, id = Id, transport = Transport,
		limit = Limit, shutdown = maps:get(shutdown, TransOpts)}).

loop(State = #state{parent = Parent, ref = Ref, conns = Conns, limit = Limit}) ->
	receive
		{?MODULE, start, Acceptor, Tag} ->
			Pid = mustang_conn:start_link(Ref, State#state.transport),
			Acceptor ! {Tag, Pid},
			loop(State#state{conns = Conns#{Pid => http}});
		{?MODULE, start, Starter, Tag, {M, F, A}} ->
			Pid = apply(M, F, A),
			Starter ! {Tag, Pid},
			loop(State#state{conns = Conns#{Pid => http3}});
		{'EXIT', Parent, Reason} ->
			terminate(State, Reason);
		{'EXIT', Pid, _} when is_map_key(Pid, Conns) ->
			%% Connection processes log their own errors; nothing to add here.
			ok = mustang_conn_limit:release(Limit, State#state.id),
			loop(notify_waiters(capacity_freed(State#state{conns = maps:remove(Pid, Conns)})));
		{?MODULE, protocol, Pid, Protocol} when is_map_key(Pid, Conns) ->
			loop(State#state{conns = Conns#{Pid => Protocol}});
		{?MODULE, sleep, Acceptor} ->
			%% Counted as waiting before looking at the count: a connection
			%% that ends meanwhile then sees it and wakes an acceptor.
			ok = mustang_conn_limit:sleeping(Limit, 1),
			loop(wake_sleeper(State#state{sleepers = State#state.sleepers ++ [Acceptor]}));
		{?MODULE, capacity} ->
			loop(wake_sleeper(State));
		{'EXIT', _, _} ->
			loop(State);
		{?MODULE, drain, Deadline} ->
			_ = [exit(Pid, shutdown) || Pid <- maps:keys(Conns)],
			_ = Deadline =/= infinity andalso erlang:start_timer(
				max(0, Deadline - erlang:monotonic_time(millisecond)), self(), drain_deadline),
			loop(State#state{deadline = Deadline});
		{timeout, _, drain_deadline} ->
			_ = [exit(Pid, kill) || Pid <- maps:keys(Conns)],
			loop(State);
		{?MODULE, notify_empty, Pid, Tag} ->
			loop(notify_waiters(State#state{waiters = [{Pid, Tag} | State#state.waiters]}));
		{system, From, Request} ->
			sys:handle_system_msg(Request, From, Parent, ?MODULE, [], State);
		{'$gen_call', From, {?MODULE, recount}} ->
			loop(recount(From, State));
		{'$gen_call', From, Call} ->
			handle_call(Call, From, State),
			loop(State);
		Msg ->
			logger:warning("mustang_conns_sup ~p: unexpected message ~0p", [Ref, Msg]),
			loop(State)
	end.

%% A connection ended: wake one of this shard's acceptors, or, when other
%% shards have acceptors waiting, tell them.
capacity_freed(State = #state{sleepers = [_ | _]}) ->
	wake_sleeper(State);
capacity_freed(State = #state{limit = Limit, ref = Ref}) ->
	_ = mustang_conn_limit:sleepers(Limit) > 0 andalso
		[Pid ! {?MODULE, capacity} || {_, Pid} <- mustang_registry:get_conns_sups(Ref), Pid =/= self()],
	State.

wake_sleeper(State = #state{sleepers = [Acceptor | Rest], limit = Limit}) ->
	case mustang_conn_limit:has_capacity(Limit) of
		true ->
			ok = mustang_conn_limit:sleeping(Limit, -1),
			Acceptor ! {?MODULE, resume, self()},
			State#state{sleepers = Rest};
		false ->
			State
	end;
wake_sleeper(State) ->
	State.

handle_call({?MODULE, active_connections}, From, #state{conns = Conns}) ->
	gen:reply(From, map_size(Conns));
handle_call({?MODULE, counts}, From, #state{conns = Conns}) ->
	gen:reply(From, maps:fold(fun(_, Protocol, Acc) -> Acc#{Protocol => maps:get(Protocol, Acc, 0) + 1} end,
		#{http => 0, http2 => 0, websocket => 0}, Conns));
handle_call(which_children, From, #state{conns = Conns}) ->
	gen:reply(From, [{mustang_conn, Pid, worker, [mustang_conn]} || Pid <- maps:keys(Conns)]);
handle_call(count_children, From, #state{conns = Conns}) ->
	N = map_size(Conns),
	gen:reply(From, [{specs, 1}, {active, N}, {supervisors, 0}, {workers, N}]);
handle_call(_, From, _) ->
	gen:reply(From, {error, not_supported}).

recount(From, State = #state{limit = Limit, id = Id, conns = Conns, sleepers = Sleepers}) ->
	ok = mustang_conn_limit:sleeping(Limit, -length(Sleepers)),
	ok = mustang_conn_limit:reset(Limit, Id, map_size(Conns)),
	_ = gen:reply(From, ok),
	State#state{sleepers = []}.

notify_waiters(State = #state{conns = Conns, waiters = Waiters}) when map_size(Conns) =:= 0 ->
	_ = [Pid ! {Tag, empty} || {Pid, Tag} <- Waiters],
	State#state{waiters = []};
notify_waiters(State) ->
	State.

terminate(State = #state{conns = Conns, deadline = undefined, shutdown = Shutdown}, Reason) ->
	_ = [exit(Pid, shutdown) || Pid <- maps:keys(Conns)],
	Deadline = case Shutdown of
		infinity -> infinity;
		_ -> erlang:monotonic_time(millisecond) + Shutdown
	end,
	wait_children(State#state{deadline = Deadline}, Reason);
terminate(State, Reason) ->
	wait_children(State, Reason).

wait_children(#state{conns = Conns}, Reason) when map_size(Conns) =:= 0 ->
	exit(Reason);
wait_children(State = #state{conns = Conns, deadline = Deadline}, Reason) ->
	Timeout = case Deadline of
		infinity -> infinity;
		_ -> max(0, Deadline - erlang:monotonic_time(millisecond))
	end,
	receive
		{'EXIT', Pid, _} ->
			wait_children(State#state{conns = maps:remove(Pid, Conns)}, Reason)
	after Timeout ->
		_ = [exit(Pid, kill) || Pid <- maps:keys(Conns)],
		exit(Reason)
	end.

-spec system_continue(pid(), [sys:debug_option()], #state{}) -> no_return().
system_continue(_, _, State) ->
	loop(State).

-spec system_terminate(any(), pid(), [sys:debug_option()], #state{}) -> no_return().
system_terminate(Reason, _, _, State) ->
	terminate(State, Reason).

-spec system_code_change(State, module(), any(), any()) -> {ok, State} when State :: #state{}.
system_code_change(State, _, _, _) ->
	{ok, State}.
