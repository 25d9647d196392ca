%% The QUIC side of a connection process (mustang_http3): the NIF's
%% connection, the one timer QUIC needs, and the datagrams. A data
%% structure, not a process: the connection process calls it.
%%
%% The process gathers operations (op/2: stream writes, resets, window
%% grants, ...) while messages keep coming and hands them to the NIF in one
%% step/1 when its mailbox is empty, as mustang_http2 writes once per empty
%% mailbox. A step also takes in what arrived: datagrams routed here by the
%% endpoint process ({mustang_quic, Event}, event/2) and the timer
%% (timeout/2). It writes the datagrams the NIF built to the endpoint's UDP
%% socket itself (a gen_udp socket may be written by any process: the
%% endpoint process would only be a bottleneck), forwards the NIF's events
%% for the endpoint, and re-arms the timer.
-module(mustang_quic_conn).

-export([new/5]).
-export([op/2]).
-export([event/2]).
-export([timeout/2]).
-export([pending/1]).
-export([step/1]).
-export([key/1]).
-export([conn/1]).
-export([peer/1]).
-export([info/1]).

-record(qc, {
	conn :: mustang_quic:conn(),
	key :: mustang_quic:key(),
	socket :: gen_udp:socket(),
	endpoint :: pid(),
	peer :: mustang_quic:addr(),
	%% Operations for the next step, last first.
	ops = [] :: [mustang_quic:op()],
	%% The QUIC deadline (monotonic µs) and the timer set for it (ms).
	deadline = infinity :: integer() | infinity,
	timer = undefined :: undefined | reference(),
	%% The NIF had more datagrams to build than one step builds.
	more = false :: boolean()
}).

-opaque qc() :: #qc{}.
-export_type([qc/0]).

-spec new(mustang_quic:conn(), mustang_quic:key(), gen_udp:socket(), pid(), mustang_quic:addr())
	-> qc().
new(Conn, Key, Socket, Endpoint, Peer) ->
	#qc{conn = Conn, key = Key, socket = Socket, endpoint = Endpoint, peer = Peer}.

-spec op(qc(), mustang_quic:op()) -> qc().
op(QC = #qc{ops = Ops}, Op) ->
	QC#qc{ops = [Op | Ops]}.

%% A datagram (or an answer of the endpoint) for this connection.
-spec event(qc(), mustang_quic:conn_event()) -> qc().
event(QC, Event) ->
	op(QC, {event, Event}).

%% The timer message {timeout, TRef, mustang_quic}: stale ones are ignored.
-spec timeout(qc(), reference()) -> qc().
timeout(QC = #qc{timer = TRef}, TRef) ->
	op(QC#qc{timer = undefined, deadline = infinity}, timeout);
timeout(QC, _) ->
	QC.

%% Whether a step is due: operations wait, or datagrams are left to build.
-spec pending(qc()) -> boolean().
pending(#qc{ops = [], more = false}) -> false;
pending(_) -> true.

%% One NIF call: the operations in, the datagrams out (written here), the
%% timer re-armed. Returns the results and events for the process.
-spec step(qc()) -> {[mustang_quic:result()], [mustang_quic:event()], qc()}.
step(QC = #qc{conn = Conn, ops = Ops}) ->
	{Results, Datagrams, Events, Deadline, More} =
		mustang_quic:conn_step(Conn, mustang_quic:now(), lists:reverse(Ops)),
	ok = send(QC#qc.socket, Datagrams),
	QC2 = arm(QC#qc{ops = [], more = More}, Deadline),
	{Results, endpoint_events(QC2, Events, []), QC2}.

send(_, []) ->
	ok;
send(Socket, [{{IP, Port}, Datagram} | Rest]) ->
	%% A full send buffer or an unreachable peer loses the datagram; QUIC
	%% recovers it like any other loss.
	_ = gen_udp:send(Socket, IP, Port, Datagram),
	send(Socket, Rest).

endpoint_events(_, [], Acc) ->
	lists:reverse(Acc);
endpoint_events(QC = #qc{endpoint = Endpoint, key = Key}, [{endpoint_event, E} | Rest], Acc) ->
	Endpoint ! {mustang_quic_endpoint, Key, E},
	endpoint_events(QC, Rest, Acc);
endpoint_events(QC, [Event | Rest], Acc) ->
	endpoint_events(QC, Rest, [Event | Acc]).

%% Erlang timers count in ms: the timer fires at the first ms at or after
%% the deadline, and is only replaced when the deadline moved.
arm(QC = #qc{deadline = Deadline}, Deadline) ->
	QC;
arm(QC = #qc{timer = TRef}, infinity) ->
	cancel(TRef),
	QC#qc{timer = undefined, deadline = infinity};
arm(QC = #qc{timer = TRef}, Deadline) ->
	cancel(TRef),
	Ms = (Deadline + 999) div 1000,
	QC#qc{deadline = Deadline,
		timer = erlang:start_timer(Ms, self(), mustang_quic, [{abs, true}])}.

cancel(undefined) -> ok;
cancel(TRef) -> _ = erlang:cancel_timer(TRef, [{async, true}, {info, false}]), ok.

-spec key(qc()) -> mustang_quic:key().
key(#qc{key = Key}) -> Key.

-spec conn(qc()) -> mustang_quic:conn().
conn(#qc{conn = Conn}) -> Conn.

-spec peer(qc()) -> mustang_quic:addr().
peer(#qc{peer = Peer}) -> Peer.

-spec info(qc()) -> map().
info(#qc{conn = Conn}) ->
	mustang_quic:conn_info(Conn).
