%% Chores every connection process does the same way, whatever its protocol
%% (mustang_http1, mustang_http2, mustang_websocket): the idle timeout as a
%% tick, re-arming {active, N}, lingering before a close, log lines, the
%% supervisor calls of a process with children, the peer as text. The
%% dynamic socket buffer has its own module (mustang_dynbuf).
-module(mustang_conn_chores).

-export([start_idle_tick/4]).
-export([idle_tick/5]).
-export([active/3]).
-export([rearm/3]).
-export([rearm_idle/3]).
-export([linger/3]).
-export([recv_rate_start/0]).
-export([recv_rate/3]).

%% min_recv_rate's current period: its start (ms) and the bytes it brought.
-type recv_rate() :: {integer(), non_neg_integer()}.
-export_type([recv_rate/0]).

%% How a connection re-arms its socket: {active, N} always, or adaptive
%% (see rearm/3).
-type active() :: pos_integer() | {adaptive, pos_integer()}.
-export_type([active/0]).
-export([log/4]).
-export([peer/1]).
-export([supervisor_call/4]).

%% The idle timeout costs no timer per packet: a tick comes now and then and
%% the process adds up the quiet time of the ticks that saw no data. Tag is
%% the module's own, so that a tick armed before a protocol switch is not
%% taken for the new module's. While the connection is active (Quiet is 0)
%% the tick comes every hibernate_after ms (at most idle_timeout/10), so
%% that a connection that fell quiet hibernates within 2 x hibernate_after;
%% once it is quiet, every idle_timeout/10.
-spec start_idle_tick(atom(), timeout(), timeout(), non_neg_integer()) -> ok.
start_idle_tick(_, infinity, _, _) ->
	ok;
start_idle_tick(Tag, IdleTimeout, HibernateAfter, Quiet) ->
	_ = erlang:send_after(tick_period(IdleTimeout, HibernateAfter, Quiet), self(), {Tag, idle_tick}),
	ok.

tick_period(IdleTimeout, HibernateAfter, 0) ->
	max(1, min(IdleTimeout div 10, HibernateAfter));
tick_period(IdleTimeout, _, _) ->
	max(1, IdleTimeout div 10).

%% What a tick means, given whether data came since the last one, the quiet
%% time counted so far (ms), whether work is in progress (a request, a
%% buffer), idle_timeout and hibernate_after: start counting again, time out
%% (quiet for idle_timeout), count on, or count on and hibernate (give back
%% the heap grown while serving). A quiet connection hibernates again at
%% every tick: the tick itself woke it, and its heap would otherwise grow
%% back and stay.
-spec idle_tick(boolean(), non_neg_integer(), boolean(), timeout(), timeout())
	-> {continue, non_neg_integer()} | {hibernate, non_neg_integer()} | timeout.
idle_tick(true, _, _, _, _) ->
	{continue, 0};
idle_tick(false, Quiet0, Busy, IdleTimeout, HibernateAfter) ->
	Quiet = Quiet0 + tick_period(IdleTimeout, HibernateAfter, Quiet0),
	if
		Quiet >= IdleTimeout -> timeout;
		Busy; HibernateAfter =:= infinity -> {continue, Quiet};
		true -> {hibernate, Quiet}
	end.

%% The active_n and adaptive_active options, for this transport. Only
%% gen_tcp sockets adapt: a TLS socket's messages come from its own process,
%% whose setopts is a call.
-spec active(module(), pos_integer(), boolean()) -> active().
active(mustang_tcp, ActiveN, true) when ActiveN > 1 -> {adaptive, ActiveN};
active(_, ActiveN, _) -> ActiveN.

-spec rearm(module(), mustang_transport:socket(), active()) -> ok.
rearm(Transport, Socket, {adaptive, ActiveN}) ->
	rearm(Transport, Socket, ActiveN);
rearm(Transport, Socket, ActiveN) ->
	_ = Transport:setopts(Socket, [{active, ActiveN}]),
	ok.

%% Re-arming a connection that has nothing in flight: the answer is
%% written and nothing of the next request or frame has come. A client that
%% waits for each answer before it sends again (one request at a time on a
%% connection) leaves the server idle until then. With {active, N} (N > 1)
%% the socket is never deselected, so ERTS moves it to the schedulers' own
%% pollset: the idle scheduler goes to sleep in epoll_wait on it and is
%% woken up for the next request (W1a: 1 epoll_wait and 1.9 timerfd_settime
%% per request). Re-armed with {active, 1}, the next request is mostly read
%% at once, without a poll (0.23 epoll_wait per request). That only pays
%% when the scheduler would sleep: with other work queued it costs a failed
%% recv and an epoll_ctl per packet (W1c with active_n 1: 1.9 recvfrom and
%% 1.75 epoll_ctl per request). So adaptive sockets get {active, 1} when the
%% run queues are empty, {active, N} otherwise. Bodies and frames in
%% progress always get {active, N} (rearm/3): a packet per re-arm costs
%% throughput there (W3a MB/s: 1147 with active_n 1, 1341 with 100).
%% {active, 1} also misses when the client has not sent yet: a failed recv,
%% an epoll_ctl and a wake-up through the poll thread. So it is only used
%% where a request usually follows its answer at once (HTTP/1.1, and an
%% HTTP/2 connection whose socket goes passive with no stream open), not
%% for Websocket (mustang_websocket:set_active/1), nor when an HTTP/2
%% connection's last stream ends: re-arming there with {active, 1} took
%% W2b (h2load -c1 -m1, client and server on one core) from 20.5k to 16.3k
%% requests/s (3 recvfrom and 4 epoll_ctl per request instead of 1 and 0.1).
-spec rearm_idle(module(), mustang_transport:socket(), active()) -> ok.
rearm_idle(Transport, Socket, {adaptive, ActiveN}) ->
	_ = case idle_node() of
		true -> Transport:setopts(Socket, [{active, 1}]);
		false -> Transport:setopts(Socket, [{active, ActiveN}])
	end,
	ok;
rearm_idle(Transport, Socket, ActiveN) ->
	rearm(Transport, Socket, ActiveN).

%% Nothing is waiting for a scheduler.
idle_node() ->
	erlang:statistics(total_run_queue_lengths) =:= 0.

%% min_recv_rate, for a request body or a Websocket frame in progress (the
%% same rule for HTTP/1.1, HTTP/2 and Websocket): a client that trickles
%% bytes in (one every few seconds, each resetting idle_timeout) would hold
%% its connection for ever. Rate is the current period's start and the
%% bytes it brought; when a period ends with fewer than Min bytes, the
%% client is too slow. Checked as bytes arrive: silence meets idle_timeout.
-spec recv_rate_start() -> recv_rate().
recv_rate_start() ->
	{erlang:monotonic_time(millisecond), 0}.

-spec recv_rate({pos_integer(), pos_integer()}, recv_rate(), non_neg_integer())
	-> {ok, recv_rate()} | too_slow.
recv_rate({Min, Period}, {Start, Got}, Size) ->
	Now = erlang:monotonic_time(millisecond),
	if
		Now - Start < Period -> {ok, {Start, Got + Size}};
		Got + Size >= Min -> {ok, {Now, 0}};
		true -> too_slow
	end.

%% Closing a socket with unread data makes the kernel send a reset, which can
%% destroy the last response before the client reads it. After our
%% half-close, read and discard what the client still sends until it closes
%% or linger_timeout passes (RFC 9112 9.6, RFC 9113 6.8).
-spec linger(module(), mustang_transport:socket(), timeout()) -> ok.
linger(_, _, 0) ->
	ok;
linger(Transport, Socket, Timeout) ->
	_ = Transport:setopts(Socket, [{active, false}]),
	Deadline = case Timeout of
		infinity -> infinity;
		_ -> erlang:monotonic_time(millisecond) + Timeout
	end,
	linger_loop(Transport, Socket, Deadline).

linger_loop(Transport, Socket, Deadline) ->
	Wait = case Deadline of
		infinity -> infinity;
		_ -> Deadline - erlang:monotonic_time(millisecond)
	end,
	case Wait of
		W when is_integer(W), W =< 0 ->
			ok;
		_ ->
			case Transport:recv(Socket, 0, Wait) of
				{ok, _} -> linger_loop(Transport, Socket, Deadline);
				_ -> ok
			end
	end.

%% Log lines go through the `logger' protocol option (a module with
%% logger's level functions).
%% Error lines (crashes) are rate-limited (mustang_log_limit).
-spec log(module(), logger:level(), io:format(), list()) -> ok.
log(Logger, error, Format, Args) ->
	_ = mustang_log_limit:allow() andalso Logger:error(Format, Args),
	ok;
log(Logger, Level, Format, Args) ->
	_ = Logger:Level(Format, Args),
	ok.

-spec peer({inet:ip_address(), inet:port_number()} | undefined) -> iodata().
peer({IP, Port}) -> [inet:ntoa(IP), $:, integer_to_list(Port)];
peer(_) -> "unknown".

%% Connections are supervisors of their request processes for OTP's tools.
-spec supervisor_call(any(), {pid(), any()}, [pid()], module()) -> ok.
supervisor_call(which_children, From, Children, Module) ->
	_ = gen:reply(From, [{mustang_stream, Pid, worker, [Module]} || Pid <- Children]),
	ok;
supervisor_call(count_children, From, Children, _) ->
	N = length(Children),
	_ = gen:reply(From, [{specs, 1}, {active, N}, {supervisors, 0}, {workers, N}]),
	ok;
supervisor_call(_, From, _, _) ->
	_ = gen:reply(From, {error, not_supported}),
	ok.
