%% The HTTP/3 connection process (RFC 9114). One per QUIC connection,
%% started by the listener's endpoint process (mustang_quic_endpoint) under
%% a connection supervisor shard. It owns the connection's QUIC state
%% (mustang_quic_conn, the NIF), its timer and its datagrams; HTTP/3 itself
%% (frames, QPACK, streams, settings, GOAWAY, limits) is the pure
%% mustang_http3_machine; requests run through the same stream handler
%% chain as HTTP/2 (doc/internals/http3.md).
-module(mustang_http3).

-export([start_link/2]).
-export([init/3]).
-export([defaults/0]).
-export([loop/1]).

-export([system_continue/3]).
-export([system_terminate/4]).
-export([system_code_change/4]).

%% HTTP/3 protocol options of their own, with their defaults (the shared
%% ones, env, middlewares, stream_handlers, idle_timeout, logger..., are
%% mustang_http1's; max_concurrent_streams and enable_connect_protocol are
%% HTTP/2's, with the same meaning). mustang_opts validates them.
-define(DEFAULTS, #{
	max_uni_streams => 16,
	max_field_section_size => 65536,
	qpack_max_table_capacity => 4096,
	qpack_encoder_max_table_capacity => 4096,
	qpack_blocked_streams => 100,
	quic_stream_receive_window => 1250000,
	quic_receive_window => 15000000,
	quic_send_window => 15000000
}).

-record(st, {
	parent :: pid(),
	ref :: mustang:ref(),
	opts :: map(),
	qc :: mustang_quic_conn:qc(),
	peer :: mustang_quic:addr(),
	connected = false :: boolean()
}).

-spec defaults() -> map().
defaults() ->
	?DEFAULTS.

%% Called by the connection supervisor shard (mustang_conns_sup); Args from
%% the endpoint process.
-spec start_link(mustang:ref(), map()) -> pid().
start_link(Ref, Args) ->
	proc_lib:spawn_link(?MODULE, init, [self(), Ref, Args]).

-spec init(pid(), mustang:ref(), map()) -> no_return().
init(Parent, Ref, #{key := Key, conn := Conn, peer := Peer, socket := Socket,
		endpoint := Endpoint}) ->
	process_flag(trap_exit, true),
	Opts = maps:merge(maps:merge(mustang_http2:defaults(), ?DEFAULTS),
		mustang_registry:get_protocol_opts(Ref)),
	QC = mustang_quic_conn:new(Conn, Key, Socket, Endpoint, Peer),
	%% The first step sends the rest of the server's handshake flight.
	loop(#st{parent = Parent, ref = Ref, opts = Opts, qc = QC, peer = Peer}, true).

%% Messages are handled as they come; the NIF is stepped when the mailbox
%% is empty (or when a step left datagrams to build).
-spec loop(#st{}) -> no_return().
loop(St) ->
	loop(St, mustang_quic_conn:pending(St#st.qc)).

loop(St = #st{parent = Parent, qc = QC}, Pending) ->
	Timeout = case Pending of
		true -> 0;
		false -> infinity
	end,
	receive
		{mustang_quic, Event} ->
			loop(St#st{qc = mustang_quic_conn:event(QC, Event)}, true);
		{timeout, TRef, mustang_quic} ->
			loop(St#st{qc = mustang_quic_conn:timeout(QC, TRef)}, true);
		{'EXIT', Parent, _} ->
			%% Drain (or listener stop): graceful close.
			loop(close(St, 16#100, <<>>), true);
		{system, From, Request} ->
			sys:handle_system_msg(Request, From, Parent, ?MODULE, [], St);
		{'$gen_call', From, Call} ->
			mustang_conn_chores:supervisor_call(Call, From, [], ?MODULE),
			loop(St, Pending);
		{'EXIT', _, _} ->
			loop(St, Pending);
		Msg ->
			log(St, warning, "mustang_http3 ~p: unexpected message ~0p", [St#st.ref, Msg]),
			loop(St, Pending)
	after Timeout ->
		step(St)
	end.

step(St = #st{qc = QC}) ->
	{Results, Events, QC2} = mustang_quic_conn:step(QC),
	St2 = results(St#st{qc = QC2}, Results),
	events(St2, Events).

results(St, []) ->
	St;
results(St, [_ | Rest]) ->
	results(St, Rest).

events(St, []) ->
	loop(St);
events(St, [connected | Rest]) ->
	events(St#st{connected = true}, Rest);
events(St, [{lost, Reason} | Rest]) ->
	log(St, debug, "mustang ~p: QUIC connection from ~s lost: ~0p",
		[St#st.ref, mustang_conn_chores:peer(St#st.peer), Reason]),
	events(St, Rest);
events(_, [drained | _]) ->
	exit(normal);
events(St, [_ | Rest]) ->
	events(St, Rest).

close(St = #st{qc = QC}, Code, Reason) ->
	St#st{qc = mustang_quic_conn:op(QC, {close, Code, Reason})}.

log(#st{opts = #{logger := Logger}}, Level, Format, Args) ->
	mustang_conn_chores:log(Logger, Level, Format, Args);
log(_, Level, Format, Args) ->
	mustang_conn_chores:log(logger, Level, Format, Args).

%% sys callbacks.

-spec system_continue(pid(), [sys:debug_option()], #st{}) -> no_return().
system_continue(_, _, St) ->
	loop(St).

-spec system_terminate(any(), pid(), [sys:debug_option()], #st{}) -> no_return().
system_terminate(Reason, _, _, _) ->
	exit(Reason).

-spec system_code_change(Misc, module(), any(), any()) -> {ok, Misc} when Misc :: #st{}.
system_code_change(Misc, _, _, _) ->
	{ok, Misc}.
