%% The HTTP/3 connection process (RFC 9114). One per QUIC connection,
%% started by the listener's endpoint process (mustang_quic_endpoint) under
%% a connection supervisor shard. It owns the connection's QUIC state
%% (mustang_quic_conn: the NIF, its timer, its datagrams), while HTTP/3
%% itself (frames, QPACK, streams, settings, GOAWAY, limits) is the pure
%% mustang_http3_machine: QUIC stream events go in, request events and
%% actions (stream writes, resets, our unidirectional streams) come out.
%% Requests run through the same stream handler chain as HTTP/2: each
%% stream's middlewares and handler run in a process of their own, and
%% mustang_req calls arrive here as stream commands (mustang_stream_conn
%% holds what both connection processes share; doc/internals/http3.md).
%%
%% The NIF is stepped once per empty mailbox with the operations gathered
%% meanwhile (as mustang_http2 writes once per empty mailbox).
-module(mustang_http3).

-export([start_link/2]).
-export([init/3]).
-export([defaults/0]).
-export([loop/1]).

%% Callbacks of mustang_stream_conn.
-export([streams/1]).
-export([chain/1]).
-export([set_streams/3]).
-export([stream_state/2]).
-export([send/3]).
-export([flow/3]).
-export([over_limits/2]).
-export([reset/3]).
-export([close_stream/2]).
-export([maybe_close/1]).
-export([log/4]).

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

%% Between the two GOAWAYs of a graceful shutdown (RFC 9114 5.2): time for
%% requests already sent to arrive.
-define(GOAWAY_DELAY, 1000).

-record(st, {
	parent :: pid(),
	ref :: mustang:ref(),
	opts :: map(),
	qc :: mustang_quic_conn:qc(),
	m :: mustang_http3_machine:machine() | undefined,
	chain :: mustang_stream:prepared(),
	peer :: mustang_quic:addr(),
	sock :: mustang_quic:addr() | undefined,
	%% Our unidirectional streams: their ids once open, and the bytes
	%% written before that.
	uni = #{} :: #{atom() => non_neg_integer()},
	uni_pending = #{} :: #{atom() => [iodata()]},
	%% Streams to open once the handshake is done (before it, the client's
	%% stream limits may not be known: Chromium's are not).
	uni_wanted = [] :: [atom()],
	connected = false :: boolean(),
	%% The stream handlers' side of each request stream (mustang_stream_conn).
	streams = #{} :: #{non_neg_integer() => mustang_stream_conn:stream()},
	pids = #{} :: #{pid() => non_neg_integer() | undefined},
	%% Response bytes waiting in the NIF per stream, for the send limits.
	queued = #{} :: #{non_neg_integer() => pos_integer()},
	%% Closing: the QUIC connection was lost or closed by us.
	lost = false :: boolean(),
	closing = false :: boolean()
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
	Opts = maps:merge(maps:merge(mustang_http2:conn_opts(#{}), ?DEFAULTS),
		mustang_registry:get_protocol_opts(Ref)),
	QC = mustang_quic_conn:new(Conn, Key, Socket, Endpoint, Peer),
	Sock = case inet:sockname(Socket) of
		{ok, S} -> S;
		_ -> undefined
	end,
	St = #st{parent = Parent, ref = Ref, opts = Opts, qc = QC, peer = Peer, sock = Sock,
		chain = mustang_registry:get_conn_chain(Ref, http2)},
	%% Our control and QPACK streams open once the handshake is done (RFC
	%% 9114 6.2.1); the first step sends the rest of the handshake flight.
	loop(actions(St#st{m = mustang_http3_machine:init(Opts, ms())}), true).

ms() ->
	erlang:monotonic_time(millisecond).

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
		{{Pid, StreamID}, Info} when Pid =:= self() ->
			loop(mustang_stream_conn:info(?MODULE, St, StreamID, Info));
		{'EXIT', Pid, Reason} when is_map_key(Pid, St#st.pids) ->
			loop(stream_exit(St, Pid, Reason));
		{'EXIT', Parent, _} ->
			loop(start_shutdown(St));
		{?MODULE, final_goaway} ->
			loop(final_goaway(St));
		{system, From, Request} ->
			sys:handle_system_msg(Request, From, Parent, ?MODULE, [], St);
		{'$gen_call', From, Call} ->
			mustang_conn_chores:supervisor_call(Call, From, maps:keys(St#st.pids), ?MODULE),
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
	St2 = lists:foldl(fun result/2, St#st{qc = QC2}, Results),
	loop(quic_events(St2, Events)).

op(St = #st{qc = QC}, Op) ->
	St#st{qc = mustang_quic_conn:op(QC, Op)}.

result({opened, Role, undefined}, St) ->
	%% The client allows no unidirectional stream: HTTP/3 cannot work.
	close_connection(St, h3_stream_creation_error, iolist_to_binary(io_lib:format(
		"The client does not let the server open its ~p stream. (RFC9114 6.2)", [Role])));
result({opened, Role, StreamID}, St = #st{uni = Uni, uni_pending = Pending}) ->
	St2 = St#st{uni = Uni#{Role => StreamID}, uni_pending = maps:remove(Role, Pending)},
	op(St2, {write, StreamID, lists:reverse(maps:get(Role, Pending, [])), false});
result({queued, StreamID, Bytes}, St = #st{queued = Queued}) ->
	St#st{queued = Queued#{StreamID => Bytes}}.

%% QUIC events.

quic_events(St, []) ->
	St;
quic_events(St, [Event | Rest]) ->
	quic_events(quic_event(St, Event), Rest).

quic_event(St = #st{uni_wanted = Wanted}, connected) ->
	lists:foldl(fun(Role, Acc) -> op(Acc, {open_uni, Role}) end,
		St#st{connected = true, uni_wanted = []}, lists:reverse(Wanted));
quic_event(St, {stream, StreamID, _}) ->
	machine(St, mustang_http3_machine:new_stream(StreamID, ms(), St#st.m));
quic_event(St, {data, StreamID, Data, IsFin}) ->
	machine(St, mustang_http3_machine:stream_data(StreamID, Data, IsFin, ms(), St#st.m));
quic_event(St, {reset, StreamID, Code}) ->
	machine(St, mustang_http3_machine:stream_reset(StreamID, Code, ms(), St#st.m));
quic_event(St, {stopped, StreamID, Code}) ->
	machine(St, mustang_http3_machine:stop_sending(StreamID, Code, ms(), St#st.m));
quic_event(St = #st{queued = Queued}, {flushed, StreamID}) ->
	St2 = St#st{queued = maps:remove(StreamID, Queued)},
	mustang_stream_conn:release(?MODULE, St2, StreamID);
quic_event(St, {datagram, _}) ->
	St;
quic_event(St, {lost, Reason}) ->
	case Reason of
		locally_closed -> ok;
		_ -> log(St, debug, "mustang ~p: QUIC connection from ~s ended: ~0p",
			[St#st.ref, peer(St), Reason])
	end,
	terminate_streams(St#st{lost = true}, {stop, {quic, Reason}, 'The connection ended.'});
quic_event(St, drained) ->
	terminate(St);
quic_event(St, _) ->
	St.

%% The machine.

machine(St, {ok, Events, M}) ->
	actions(machine_events(St#st{m = M}, Events));
machine(St, {error, {connection_error, Code, Reason}, M}) ->
	log(St, debug, "mustang ~p: HTTP/3 connection from ~s closed with ~p: ~s",
		[St#st.ref, peer(St), Code, Reason]),
	%% The machine queued the close with the final GOAWAY.
	actions(St#st{m = M, closing = true}).

%% The machine's actions become NIF operations.
actions(St = #st{m = M}) ->
	{Actions, M2} = mustang_http3_machine:take_actions(M),
	lists:foldl(fun action/2, St#st{m = M2}, Actions).

action({send, StreamID, Data, IsFin}, St) ->
	op(St, {write, StreamID, Data, IsFin =:= fin});
action({sendfile, StreamID, Offset, Length, Path, IsFin}, St) ->
	case mustang_http2:read_file(Path, Offset, Length) of
		{ok, Bin} ->
			op(St, {write, StreamID, Bin, IsFin =:= fin});
		{error, Reason} ->
			log(St, error, "mustang ~p: sendfile ~ts failed: ~0p", [St#st.ref, Path, Reason]),
			op(St, {reset, StreamID, mustang_http3_frame:code(h3_internal_error)})
	end;
action({open_uni, Role, Data}, St = #st{uni_pending = Pending, connected = true}) ->
	op(St#st{uni_pending = Pending#{Role => [Data]}}, {open_uni, Role});
action({open_uni, Role, Data}, St = #st{uni_pending = Pending, uni_wanted = Wanted}) ->
	St#st{uni_pending = Pending#{Role => [Data]}, uni_wanted = [Role | Wanted]};
action({send_uni, Role, Data}, St = #st{uni = Uni, uni_pending = Pending}) ->
	case Uni of
		#{Role := StreamID} -> op(St, {write, StreamID, Data, false});
		_ -> St#st{uni_pending = Pending#{Role => [Data | maps:get(Role, Pending, [])]}}
	end;
action({reset_stream, StreamID, Code}, St) ->
	op(St, {reset, StreamID, mustang_http3_frame:code(Code)});
action({stop_sending, StreamID, Code}, St) ->
	op(St, {stop, StreamID, mustang_http3_frame:code(Code)});
action({close, Code, Reason}, St) ->
	close_connection(St, Code, atom_to_binary(Reason, utf8)).

close_connection(St, Code, Reason) ->
	Debug = case Code of
		h3_no_error -> <<>>;
		_ -> Reason
	end,
	op(St#st{closing = true}, {close, mustang_http3_frame:code(Code), Debug}).

machine_events(St, []) ->
	St;
machine_events(St, [Event | Rest]) ->
	machine_events(machine_event(St, Event), Rest).

machine_event(St, {headers, StreamID, IsFin, Request}) ->
	mustang_stream_conn:start(?MODULE, St, StreamID, build_req(St, StreamID, Request, IsFin),
		IsFin);
machine_event(St, {data, StreamID, IsFin, Data}) ->
	mustang_stream_conn:data(?MODULE, St, StreamID, IsFin, Data);
machine_event(St, {trailers, _, _}) ->
	St;
machine_event(St, {cancel, StreamID, _}) ->
	mustang_stream_conn:remove(?MODULE, St, StreamID, {shutdown, stream_reset});
machine_event(St, {stream_error, StreamID, Code, Reason}) ->
	log(St, debug, "mustang ~p: HTTP/3 stream ~b from ~s reset with ~p: ~s",
		[St#st.ref, StreamID, peer(St), Code, Reason]),
	mustang_stream_conn:remove(?MODULE, St, StreamID, {shutdown, {stream_error, Code}});
machine_event(St, {early_error, StreamID, IsFin, Status, Reason}) ->
	log(St, debug, "mustang ~p: ~b response to ~s on HTTP/3 stream ~b: ~0p",
		[St#st.ref, Status, peer(St), StreamID, Reason]),
	PartialReq = #{ref => St#st.ref, pid => self(), streamid => StreamID, peer => St#st.peer,
		sock => St#st.sock, cert => undefined, version => 'HTTP/3'},
	{response, Status2, Headers, Body} = mustang_stream:early_error_response(StreamID,
		{stream_error, Reason, 'The request was refused before any handler ran.'}, PartialReq,
		{response, Status, #{}, <<>>}, St#st.opts, maps:get(logger, St#st.opts)),
	St#st{m = mustang_http3_machine:early_response(StreamID, IsFin, Status2, Headers, Body,
		mustang_clock:rfc7231(), St#st.m)};
machine_event(St, {settings, _}) ->
	St;
machine_event(St, {goaway, _}) ->
	%% The client opens no more requests; those in flight finish.
	maybe_close(St);
machine_event(St, {ignored, StreamID, What, Local}) ->
	log(St, debug, "mustang ~p: HTTP/3 stream ~b: ~p ignored after ~p",
		[St#st.ref, StreamID, What, Local]),
	St.

build_req(#st{ref = Ref, peer = Peer, sock = Sock}, StreamID, Request, IsFin) ->
	Length = maps:get(content_length, Request, undefined),
	{HasBody, BodyLength} = case {IsFin, Length} of
		{fin, _} -> {false, 0};
		{nofin, 0} -> {false, 0};
		{nofin, _} -> {true, Length}
	end,
	mustang_req:new(#{ref => Ref, pid => self(), streamid => StreamID, peer => Peer, sock => Sock,
		cert => undefined, proxy_header => undefined, scheme => <<"https">>, mode => process},
		Request#{version => 'HTTP/3'}, HasBody, BodyLength).

%% The stream handler side (callbacks of mustang_stream_conn).

%% Callbacks of mustang_stream_conn.
-spec streams(#st{}) -> {map(), map(), map()}.
streams(#st{streams = Streams, pids = Pids, opts = Opts}) ->
	{Streams, Pids, Opts}.

-spec chain(#st{}) -> mustang_stream:prepared().
chain(#st{chain = Chain}) ->
	Chain.

-spec set_streams(#st{}, map(), map()) -> #st{}.
set_streams(St, Streams, Pids) ->
	St#st{streams = Streams, pids = Pids}.

%% idle (nothing sent), headers (the response is going), done (sent whole;
%% queued data is the NIF's to deliver), or gone.
-spec stream_state(#st{}, non_neg_integer()) -> idle | headers | done | gone.
stream_state(#st{m = M}, StreamID) ->
	case mustang_http3_machine:stream(StreamID, M) of
		{idle, _} -> idle;
		{headers, _} -> headers;
		{fin, _} -> done;
		undefined -> gone
	end.

-spec send(#st{}, non_neg_integer(), mustang_http3_machine:part()) -> #st{}.
send(St, StreamID, Part) ->
	Date = case element(1, Part) of
		response -> mustang_clock:rfc7231();
		headers -> mustang_clock:rfc7231();
		_ -> <<>>
	end,
	machine(St, mustang_http3_machine:send(StreamID, Part, Date, St#st.m)).

%% A body read wants Size more bytes: the NIF reads that much more of the
%% stream (its QUIC window moves as it does).
-spec flow(#st{}, non_neg_integer(), non_neg_integer()) -> #st{}.
flow(St, StreamID, Size) ->
	op(St, {allow, StreamID, Size}).

-spec over_limits(#st{}, non_neg_integer()) -> boolean().
over_limits(#st{queued = Queued, opts = Opts}, StreamID) ->
	maps:get(StreamID, Queued, 0) > maps:get(stream_send_buffer_size, Opts)
		orelse lists:sum(maps:values(Queued)) > maps:get(connection_send_buffer_size, Opts).

-spec reset(#st{}, non_neg_integer(), internal_error | cancel) -> #st{}.
reset(St, StreamID, Why) ->
	Code = case Why of
		internal_error -> h3_internal_error;
		cancel -> h3_request_cancelled
	end,
	actions(St#st{m = mustang_http3_machine:reset_stream(StreamID, Code, St#st.m)}).

-spec close_stream(#st{}, non_neg_integer()) -> #st{}.
close_stream(St = #st{queued = Queued}, StreamID) ->
	actions(St#st{m = mustang_http3_machine:close_stream(StreamID, St#st.m),
		queued = maps:remove(StreamID, Queued)}).

%% After a GOAWAY (ours or the client's), the connection ends with its last
%% request.
-spec maybe_close(#st{}) -> #st{}.
maybe_close(St = #st{streams = Streams, m = M, closing = false}) when map_size(Streams) =:= 0 ->
	case mustang_http3_machine:closing(M) of
		true -> actions(St#st{m = mustang_http3_machine:close(h3_no_error,
			'The connection is closing.', M)});
		false -> St
	end;
maybe_close(St) ->
	St.

stream_exit(St = #st{pids = Pids}, Pid, Reason) ->
	mustang_stream_conn:exit(?MODULE, St#st{pids = maps:remove(Pid, Pids)},
		map_get(Pid, Pids), Pid, Reason).

%% Shutdown (drain, listener stop): the two GOAWAYs of RFC 9114 5.2; the
%% stream handlers get going_away (a Websocket closes with 1001).
start_shutdown(St = #st{m = M}) ->
	case mustang_http3_machine:shutdown(M) of
		none ->
			_ = erlang:send_after(?GOAWAY_DELAY, self(), {?MODULE, final_goaway}),
			St2 = actions(St#st{m = mustang_http3_machine:start_shutdown(M)}),
			lists:foldl(fun(StreamID, Acc) ->
				mustang_stream_conn:info(?MODULE, Acc, StreamID, going_away)
			end, St2, maps:keys(St#st.streams));
		_ ->
			St
	end.

final_goaway(St = #st{m = M}) ->
	maybe_close(actions(St#st{m = mustang_http3_machine:final_goaway(M)})).

terminate_streams(St = #st{streams = Streams, pids = Pids}, Reason) ->
	_ = [exit(Pid, {shutdown, connection_closed}) || Pid <- maps:keys(Pids)],
	_ = [mustang_stream_conn:terminate(?MODULE, St, Stream, Reason)
		|| Stream <- maps:values(Streams)],
	St#st{streams = #{}, pids = #{}}.

-spec terminate(#st{}) -> no_return().
terminate(St) ->
	_ = terminate_streams(St, {stop, normal, 'The connection ended.'}),
	exit(normal).

peer(#st{peer = Peer}) -> mustang_conn_chores:peer(Peer).

-spec log(#st{}, logger:level(), io:format(), list()) -> ok.
log(#st{opts = #{logger := Logger}}, Level, Format, Args) ->
	mustang_conn_chores:log(Logger, Level, Format, Args).

%% sys callbacks.

-spec system_continue(pid(), [sys:debug_option()], #st{}) -> no_return().
system_continue(_, _, St) ->
	loop(St).

-spec system_terminate(any(), pid(), [sys:debug_option()], #st{}) -> no_return().
system_terminate(Reason, _, _, St) ->
	_ = terminate_streams(St, {stop, Reason, 'The connection ended.'}),
	exit(Reason).

-spec system_code_change(Misc, module(), any(), any()) -> {ok, Misc} when Misc :: #st{}.
system_code_change(Misc, _, _, _) ->
	{ok, Misc}.
