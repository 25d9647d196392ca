%% The HTTP/2 connection state machine (RFC 9113), server side. Pure: it
%% never touches a socket, sends no messages, writes no logs and starts no
%% timers. The current monotonic time (milliseconds) is passed in where rate
%% limits or the flow-control clock need it, and the Date header value where
%% a response head is built. mustang_http2 keeps the process (socket, timers,
%% stream handlers) and calls this module; see doc/internals/http2.md.
%%
%% It holds the connection phase (preface, first SETTINGS, CONTINUATION
%% sequences), the parsing of incoming bytes in any split, stream states,
%% both sides' settings, both HPACK contexts, the flow-control windows (with
%% the adaptive receive window), the per-stream send queues, the rate limits,
%% GOAWAY state and push ids.
%%
%% Bytes to write are gathered in the machine: out_size/1 tells how many are
%% pending, take_output/1 hands them over. The sending side (response parts,
%% send queues, push) lives in mustang_http2_machine_send, the records in
%% mustang_http2_machine.hrl.
%%
%% Every function that can fail returns
%%   {ok, [event()], Machine}
%%   {error, {connection_error, Code, Reason}, Machine}
%% A stream error is an event, {stream_error, StreamID, Code, Reason}: the
%% RST_STREAM is already queued and the stream forgotten. Code is an RFC 9113
%% error code (mustang_http2_frame:error_code()), Reason an atom: a sentence
%% naming the RFC section, such as 'DATA frame received on an idle stream.
%% (RFC9113 5.1)', or a limit of ours, or an mustang_hpack error reason.
%% After a connection error the caller sends GOAWAY (goaway/3) and closes.
%%
%% parse/3 stops after each step that produced events (a frame, a piece of
%% DATA payload), so that the caller reacts before the next frame is looked
%% at; it is called again with <<>> to go on, until it returns {more, _}.
%%
%% Options (from the protocol options; see mustang_http2 for their meaning
%% and defaults): max_concurrent_streams, initial_connection_window_size,
%% connection_window_update_threshold, initial_stream_window_size,
%% stream_window_margin_size, stream_window_update_threshold,
%% max_stream_window_size, max_frame_size_received, max_frame_size_sent,
%% max_decode_table_size, max_encode_table_size, max_header_list_size,
%% max_header_block_size, enable_connect_protocol, max_cancel_stream_rate,
%% max_overhead_frame_rate, stream_send_buffer_size,
%% connection_send_buffer_size, and read_file (fun(Path, Offset, Length) ->
%% {ok, binary()} | {error, term()}, reads sendfile bodies; default: none,
%% sendfile bodies then fail with {error, no_read_file}).
-module(mustang_http2_machine).

-export([init/2]).
-export([upgrade/4]).
-export([parse/3]).
-export([send/5]).
-export([push/3]).
-export([early_response/7]).
-export([flow/3]).
-export([hold/2]).
-export([over_limits/2]).
-export([stream/2]).
-export([reset_stream/3]).
-export([close_stream/2]).
-export([start_shutdown/1]).
-export([final_goaway/1]).
-export([goaway/3]).
-export([shutdown/1]).
-export([closing/1]).
-export([phase/1]).
-export([last_stream_id/1]).
-export([settings_pending/1]).
-export([blocked_since/1]).
-export([resumable/1]).
-export([resume/2]).
-export([out_size/1]).
-export([take_output/1]).
%% For mustang_http2_machine_send.

-include("mustang_http2_machine.hrl").
%% Opaque data of the PING that ends the first step of a graceful GOAWAY.
-define(GOAWAY_PING, 16#6d757374616e6721).

-type stream_id() :: mustang_http2_frame:stream_id().
-type code() :: mustang_http2_frame:error_code().
-type error() :: {connection_error, code(), atom()}.
-type event() ::
	{headers, stream_id(), mustang_http2_frame:fin(), mustang_http2_headers:request()}
	| {data, stream_id(), mustang_http2_frame:fin(), binary()}
	| {trailers, stream_id(), [{binary(), binary()}]}
	| {rst_stream, stream_id(), code()}
	| {stream_error, stream_id(), code(), atom()}
	| {malformed, stream_id(), atom()}
	| {early_error, stream_id(), mustang_http2_frame:fin(), 431 | 501, atom()}
	| {settings, mustang_http2_frame:settings()}
	| settings_ack
	| goaway_ping_ack
	| {goaway, stream_id(), code(), binary()}
	| {release, stream_id()}
	| {drained, stream_id()}
	| {sendfile_error, stream_id(), file:name_all(), term()}
	| {ignored, stream_id(), atom(), local()}
	| {push_invalid, iodata(), atom()}.
-type result() :: {ok, [event()], machine()} | {error, error(), machine()}.
-type phase() :: preface | settings | normal | continuation.
-type part() :: {inform, mustang_req:status(), mustang_req:headers()}
	| {response, mustang_req:status(), mustang_req:headers(), body()}
	| {headers, mustang_req:status(), mustang_req:headers()}
	| {data, mustang_http2_frame:fin(), body()}
	| {trailers, mustang_req:headers()}.
-type body() :: iodata() | {sendfile, non_neg_integer(), non_neg_integer(), file:name_all()}.
-export_type([machine/0, event/0, error/0, result/0, part/0, phase/0, local/0]).

-opaque machine() :: #m{}.

%% Start: our SETTINGS (only what differs from the defaults of RFC 9113
%% 6.5.2), then the connection window raised to its configured size.
-spec init(map(), integer()) -> machine().
init(Opts, Now) ->
	#{max_frame_size_received := MaxRecv, initial_stream_window_size := StreamWindow,
		initial_connection_window_size := ConnWindow} = Opts,
	M = #m{opts = Opts,
		decoder = mustang_hpack:init(maps:get(max_decode_table_size, Opts)),
		encoder = mustang_hpack:init(),
		max_frame_size_received = MaxRecv,
		local_initial_window = StreamWindow, win_target = StreamWindow,
		conn_threshold = min(maps:get(connection_window_update_threshold, Opts), ConnWindow div 2),
		stream_margin = maps:get(stream_window_margin_size, Opts),
		stream_threshold = maps:get(stream_window_update_threshold, Opts),
		max_stream_window = maps:get(max_stream_window_size, Opts),
		recv_window = ConnWindow, settings_sent = Now, now = Now},
	Settings0 = #{max_concurrent_streams => maps:get(max_concurrent_streams, Opts),
		max_header_list_size => maps:get(max_header_list_size, Opts)},
	Settings1 = case StreamWindow of 65535 -> Settings0; _ -> Settings0#{initial_window_size => StreamWindow} end,
	Settings2 = case MaxRecv of 16384 -> Settings1; _ -> Settings1#{max_frame_size => MaxRecv} end,
	Settings3 = case maps:get(max_decode_table_size, Opts) of
		4096 -> Settings2;
		TableSize -> Settings2#{header_table_size => TableSize}
	end,
	Settings = case maps:get(enable_connect_protocol, Opts) of
		true -> Settings3#{enable_connect_protocol => true};
		false -> Settings3
	end,
	WindowUpdate = case ConnWindow - 65535 of
		0 -> [];
		Increment -> mustang_http2_frame:window_update(Increment)
	end,
	out([mustang_http2_frame:settings(Settings), WindowUpdate], 64, M).

%% RFC 9113 3.2 (RFC 7540 3.2): the Upgrade request becomes stream 1,
%% half-closed (remote), with the client's HTTP2-Settings in effect.
-spec upgrade(mustang_http2_headers:request(), mustang_http2_frame:settings(), integer(), machine())
	-> result().
upgrade(Request, PeerSettings, Now, M0) ->
	run(M0, Now, fun(M) ->
		M2 = apply_settings(M, PeerSettings),
		mustang_http2_machine_send:open_stream(M2#m{last_stream_id = 1}, 1, Request, fin)
	end).

%% Runs Fun, collecting its events; connection errors are thrown inside.
%% Without events the result is {ok, [], M}, or {more, M} when asked.
run(M0, Now, Fun) ->
	run(M0, Now, Fun, ok).

run(M0, Now, Fun, NoEvents) ->
	%% The state is a large record: it is only copied when something changed
	%% (the time is usually the same millisecond).
	M1 = case M0 of
		#m{now = Now} -> M0;
		_ -> M0#m{now = Now}
	end,
	try Fun(M1) of
		M = #m{events = []} when NoEvents =:= more -> {more, M};
		M = #m{events = []} -> {ok, [], M};
		M -> {ok, lists:reverse(M#m.events), M#m{events = []}}
	catch
		throw:{connection_error, M, Code, Reason} ->
			{error, {connection_error, Code, Reason}, M#m{events = []}};
		throw:{connection_error, Code, Reason} ->
			{error, {connection_error, Code, Reason}, M0#m{now = Now}}
	end.

event(Event, M = #m{events = Events}) ->
	M#m{events = [Event | Events]}.

-spec connection_error(code(), atom()) -> no_return().
connection_error(Code, Reason) ->
	throw({connection_error, Code, Reason}).

%% Output.

out(Data, Size, M = #m{out = Out, out_size = OutSize}) ->
	M#m{out = [Out, Data], out_size = OutSize + Size}.

-spec out_size(machine()) -> non_neg_integer().
out_size(#m{out_size = Size}) -> Size.

-spec take_output(machine()) -> {iodata(), machine()}.
take_output(M = #m{out = Out}) -> {Out, M#m{out = [], out_size = 0}}.

%% State queries.

-spec phase(machine()) -> phase().
phase(#m{partial = preface}) -> preface;
phase(#m{got_settings = false}) -> settings;
phase(#m{continuation = undefined}) -> normal;
phase(_) -> continuation.

-spec last_stream_id(machine()) -> non_neg_integer().
last_stream_id(#m{last_stream_id = Last}) -> Last.

%% When our SETTINGS were sent, while the peer has not acknowledged them.
-spec settings_pending(machine()) -> integer() | undefined.
settings_pending(#m{settings_sent = Sent}) -> Sent.

%% Since when response data has waited for a window the peer does not open.
-spec blocked_since(machine()) -> integer() | undefined.
blocked_since(#m{blocked_since = Since}) -> Since.

-spec shutdown(machine()) -> none | goaway_ping | goaway.
shutdown(#m{shutdown = Shutdown}) -> Shutdown.

%% Whether the connection ends with its last stream (a GOAWAY either way).
-spec closing(machine()) -> boolean().
closing(#m{shutdown = Shutdown, peer_goaway = PeerGoaway}) ->
	Shutdown =:= goaway orelse PeerGoaway.

%% {Local, Remote, Queued} of a stream, undefined once it is closed.
-spec stream(stream_id(), machine())
	-> {local(), open | fin, non_neg_integer()} | undefined.
stream(StreamID, #m{streams = Streams}) ->
	case Streams of
		#{StreamID := #stream{local = Local, remote = Remote, queued = Queued}} ->
			{Local, Remote, Queued};
		_ ->
			undefined
	end.

%% Incoming bytes, in any split.

-spec parse(binary(), integer(), machine()) -> {more, machine()} | result().
parse(<<>>, _, M = #m{partial = none, buffer = <<>>}) ->
	%% Called again after events, with nothing left: the usual case.
	{more, M};
parse(Data, Now, M0) ->
	run(M0, Now, fun(M) -> socket_data(M, Data) end, more).

socket_data(M = #m{partial = none, buffer = <<>>}, Data) ->
	frames(M, Data);
socket_data(M = #m{partial = none, buffer = Buffer}, <<>>) ->
	frames(M#m{buffer = <<>>}, Buffer);
socket_data(M = #m{partial = none, buffer = Buffer}, Data) ->
	frames(M#m{buffer = <<>>}, <<Buffer/binary, Data/binary>>);
socket_data(M = #m{partial = {frame, Need, Acc, Size}}, Data) ->
	case Size + byte_size(Data) of
		Total when Total >= Need ->
			frames(M#m{partial = none}, iolist_to_binary(lists:reverse(Acc, [Data])));
		Total ->
			M#m{partial = {frame, Need, [Data | Acc], Total}}
	end;
socket_data(M = #m{partial = {data, StreamID, Left, Pad, IsFin}, buffer = Buffer}, Data) ->
	Bin = case Buffer of
		<<>> -> Data;
		_ when Data =:= <<>> -> Buffer;
		_ -> <<Buffer/binary, Data/binary>>
	end,
	data_payload(M#m{partial = none, buffer = <<>>}, StreamID, Left, Pad, IsFin, Bin);
socket_data(M = #m{partial = preface, buffer = Buffer}, Data) ->
	Bin = <<Buffer/binary, Data/binary>>,
	case mustang_http2_frame:parse_preface(Bin) of
		ok ->
			<<_:24/binary, Rest/bits>> = Bin,
			frames(M#m{partial = none, buffer = <<>>}, Rest);
		more ->
			M#m{buffer = Bin};
		{connection_error, Code, Reason} ->
			throw({connection_error, M#m{buffer = <<>>}, Code, Reason})
	end.

%% After a step that produced events the rest waits in the buffer.
frames(M = #m{events = []}, Bin) ->
	frames1(M, Bin);
frames(M, Bin) ->
	M#m{buffer = Bin}.

frames1(M, <<>>) ->
	M;
frames1(M = #m{max_frame_size_received = Max, continuation = undefined, got_settings = true,
		streams = Streams}, Bin = <<Len:24, 0:8, 0:8, _:1, StreamID:31, Payload:Len/binary, Rest/bits>>)
		when Len =< Max, Len > 0, is_map_key(StreamID, Streams) ->
	%% The common case, a whole DATA frame without flags on an open stream:
	%% one lookup and one update.
	case map_get(StreamID, Streams) of
		Stream = #stream{remote = open, recv_window = Window, recv_total = Total,
				recv_expected = Expected, want = Want}
				when Len =< Window, (Expected =:= undefined orelse Total + Len =< Expected) ->
			M2 = conn_recv(M, Len),
			Stream2 = Stream#stream{recv_window = Window - Len, recv_total = Total + Len,
				want = Want - Len},
			frames(stream_data(M2, Stream2, nofin, Payload), Rest);
		_ ->
			frames_data(M, Bin)
	end;
frames1(M, Bin = <<_:24, 0:8, _:40, _/bits>>) ->
	frames_data(M, Bin);
frames1(M = #m{max_frame_size_received = Max}, Bin) ->
	frames_other(M, Bin, Max).

frames_data(M = #m{max_frame_size_received = Max}, Bin = <<Len:24, 0:8, _:40, _/bits>>) ->
	%% DATA: handed to the stream as it arrives, without waiting for the
	%% whole frame.
	expect_no_continuation(M),
	case mustang_http2_frame:data_header(Bin, Max) of
		{ok, StreamID, IsFin, PadLen, PayloadLen, Rest} ->
			M2 = data_start(M, StreamID, Len, PayloadLen, IsFin),
			case M2#m.events of
				[] -> data_payload(M2, StreamID, PayloadLen, PadLen, IsFin, Rest);
				_ -> M2#m{partial = {data, StreamID, PayloadLen, PadLen, IsFin}, buffer = Rest}
			end;
		more ->
			M#m{buffer = Bin};
		{connection_error, Code, Reason} ->
			connection_error(Code, Reason)
	end.

frames_other(M, Bin, Max) ->
	case mustang_http2_frame:parse(Bin, Max) of
		{ok, Frame, Rest} ->
			frames(frame(M, Frame), Rest);
		more ->
			M#m{buffer = Bin};
		{more, N} ->
			M#m{partial = {frame, byte_size(Bin) + N, [Bin], byte_size(Bin)}};
		{ignore, Rest} ->
			%% Unknown frame types are ignored (RFC 9113 5.5), but not inside
			%% a header block (RFC 9113 6.10).
			expect_no_continuation(M),
			frames1(M, Rest);
		{stream_error, StreamID, _, _, Rest} when binary_part(Bin, 3, 1) =:= <<1>> ->
			%% A HEADERS frame whose stream depends on itself: its header
			%% block is still decoded, so that HPACK stays in step with the
			%% client (RFC 9113 4.3), then the stream is reset.
			expect_no_continuation(M),
			frames(self_dependent_headers(M, Bin, StreamID), Rest);
		{stream_error, StreamID, Code, Reason, Rest} ->
			expect_no_continuation(M),
			M2 = case StreamID > M#m.last_stream_id andalso not is_map_key(StreamID, M#m.streams) of
				true -> M#m{reset_idle = lists:sublist([StreamID | M#m.reset_idle], 32)};
				false -> M
			end,
			frames(mustang_http2_machine_send:stream_error(M2, StreamID, Code, Reason), Rest);
		{connection_error, Code, Reason} ->
			connection_error(Code, Reason)
	end.

%% The parser checked the frame's lengths and padding; only the block is
%% taken out here. The block goes through header_block/4 with `reset`.
self_dependent_headers(M = #m{opts = Opts}, Bin, StreamID) ->
	<<Len:24, _:8, Flags:8, _:32, Payload:Len/binary, _/bits>> = Bin,
	Fragment = case Flags band 16#8 of
		0 ->
			<<_:40, F/binary>> = Payload,
			F;
		_ ->
			<<PadLen:8, Padded/binary>> = Payload,
			FragmentLen = byte_size(Padded) - PadLen - 5,
			<<_:40, F:FragmentLen/binary, _/binary>> = Padded,
			F
	end,
	check_headers_stream(StreamID),
	case Flags band 16#4 of
		0 ->
			check_block_size(byte_size(Fragment), Opts),
			M#m{continuation = {StreamID, reset, [Fragment], byte_size(Fragment)}};
		_ ->
			header_block(M, StreamID, reset, Fragment)
	end.

expect_no_continuation(#m{continuation = undefined}) -> ok;
expect_no_continuation(_) ->
	connection_error(protocol_error,
		'A header block must be continued by CONTINUATION frames only. (RFC9113 6.10)').

%% DATA frames (RFC 9113 6.1). Flow control counts the whole frame, padding
%% included, as soon as its header is known.

data_start(M0 = #m{got_settings = true}, StreamID, FrameLen, PayloadLen, IsFin) ->
	M = case PayloadLen =:= 0 andalso IsFin =:= nofin of
		true -> overhead_frame(M0);
		false -> M0
	end,
	M2 = conn_recv(M, FrameLen),
	case M2#m.streams of
		#{StreamID := #stream{remote = open, recv_window = Window}} when FrameLen > Window ->
			mustang_http2_machine_send:stream_error(M2, StreamID, flow_control_error,
				'DATA exceeded the stream flow-control window. (RFC9113 6.9.1)');
		#{StreamID := Stream = #stream{remote = open, recv_window = Window}} ->
			M2#m{streams = (M2#m.streams)#{StreamID => Stream#stream{recv_window = Window - FrameLen}}};
		#{StreamID := _} ->
			%% Half-closed (remote) (RFC 9113 5.1).
			mustang_http2_machine_send:stream_error(M2, StreamID, stream_closed,
				'DATA frame received on a half-closed stream. (RFC9113 5.1)');
		_ when StreamID > M2#m.last_stream_id ->
			connection_error(protocol_error, 'DATA frame received on an idle stream. (RFC9113 5.1)');
		_ ->
			mustang_http2_machine_send:stream_error(M2, StreamID, stream_closed,
				'DATA frame received on a closed stream. (RFC9113 5.1)')
	end;
data_start(_, _, _, _, _) ->
	connection_error(protocol_error, 'The first frame must be SETTINGS. (RFC9113 3.4)').

%% The connection window is topped up once enough was received: the stream
%% windows bound what is buffered, so the connection's only has to keep up.
conn_recv(#m{recv_window = Window}, Len) when Len > Window ->
	connection_error(flow_control_error,
		'DATA exceeded the connection flow-control window. (RFC9113 6.9.1)');
conn_recv(M = #m{recv_window = Window, recv_unacked = Unacked, conn_threshold = Threshold}, Len) ->
	case Unacked + Len of
		Total when Total >= Threshold, Total > 0 ->
			out(mustang_http2_frame:window_update(Total), 13,
				M#m{recv_window = Window - Len + Total, recv_unacked = 0});
		Total ->
			M#m{recv_window = Window - Len, recv_unacked = Total}
	end.

data_payload(M, StreamID, 0, 0, IsFin, Rest) ->
	frames(data_end(M, StreamID, IsFin), Rest);
data_payload(M, StreamID, 0, Pad, IsFin, Rest) ->
	case Rest of
		<<_:Pad/binary, Rest2/bits>> -> frames(data_end(M, StreamID, IsFin), Rest2);
		_ -> M#m{partial = {data, StreamID, 0, Pad - byte_size(Rest), IsFin}}
	end;
data_payload(M, StreamID, Left, Pad, IsFin, Rest) ->
	case Rest of
		<<Payload:Left/binary, Rest2/bits>> ->
			M2 = data_deliver(M, StreamID, Payload),
			case M2#m.events of
				[] -> data_payload(M2, StreamID, 0, Pad, IsFin, Rest2);
				_ -> M2#m{partial = {data, StreamID, 0, Pad, IsFin}, buffer = Rest2}
			end;
		<<>> ->
			M#m{partial = {data, StreamID, Left, Pad, IsFin}};
		_ ->
			M2 = data_deliver(M, StreamID, Rest),
			M2#m{partial = {data, StreamID, Left - byte_size(Rest), Pad, IsFin}}
	end.

data_deliver(M = #m{streams = Streams}, StreamID, Payload) ->
	case Streams of
		#{StreamID := Stream = #stream{remote = open, recv_total = Total, recv_expected = Expected,
				want = Want}} ->
			Total2 = Total + byte_size(Payload),
			case Expected of
				_ when Expected =/= undefined, Total2 > Expected ->
					mustang_http2_machine_send:stream_error(M, StreamID, protocol_error,
						'More DATA than the content-length header announced. (RFC9113 8.1.1)');
				_ ->
					stream_data(M, Stream#stream{recv_total = Total2,
						want = Want - byte_size(Payload)}, nofin, Payload)
			end;
		_ ->
			M
	end.

%% Body data for the stream; the window is topped up while the stream
%% handlers want more and the client has less than half of it left.
stream_data(M, Stream = #stream{id = StreamID}, IsFin, Data) ->
	{M2, Stream2} = case Stream of
		#stream{want = Want, recv_window = Window, target = Target}
				when Want > 0, Window * 2 < Target, IsFin =:= nofin ->
			grant_window(M, Stream, Want);
		_ ->
			{M, Stream}
	end,
	event({data, StreamID, IsFin, Data}, M2#m{streams = (M2#m.streams)#{StreamID => Stream2}}).

data_end(M, _, nofin) ->
	M;
data_end(M = #m{streams = Streams}, StreamID, fin) ->
	case Streams of
		#{StreamID := #stream{remote = open, recv_total = Total, recv_expected = Expected}}
				when Expected =/= undefined, Expected =/= Total ->
			mustang_http2_machine_send:stream_error(M, StreamID, protocol_error,
				'The DATA length differs from the content-length header. (RFC9113 8.1.1)');
		#{StreamID := Stream = #stream{remote = open}} ->
			stream_data(M, Stream#stream{remote = fin}, fin, <<>>);
		_ ->
			M
	end.

%% Other frames.

frame(M = #m{got_settings = false}, {settings, Settings}) ->
	frame(M#m{got_settings = true}, {settings, Settings});
frame(#m{got_settings = false}, _) ->
	connection_error(protocol_error, 'The first frame must be SETTINGS. (RFC9113 3.4)');
frame(M = #m{continuation = undefined}, {headers, StreamID, IsFin, HeadFin, _Priority, Fragment}) ->
	frame(M, {headers, StreamID, IsFin, HeadFin, Fragment});
frame(M = #m{continuation = undefined, opts = Opts}, {headers, StreamID, IsFin, head_nofin, Fragment}) ->
	check_block_size(byte_size(Fragment), Opts),
	check_headers_stream(StreamID),
	M#m{continuation = {StreamID, IsFin, [Fragment], byte_size(Fragment)}};
frame(M = #m{continuation = undefined}, {headers, StreamID, IsFin, head_fin, Fragment}) ->
	check_headers_stream(StreamID),
	header_block(M, StreamID, IsFin, Fragment);
frame(M = #m{continuation = {StreamID, IsFin, Acc, Size}, opts = Opts},
		{continuation, StreamID, HeadFin, Fragment}) ->
	Size2 = Size + byte_size(Fragment),
	check_block_size(Size2, Opts),
	case HeadFin of
		head_nofin when Fragment =:= <<>> ->
			connection_error(enhance_your_calm, 'Empty CONTINUATION frames are refused.');
		head_nofin ->
			M#m{continuation = {StreamID, IsFin, [Fragment | Acc], Size2}};
		head_fin ->
			Block = iolist_to_binary(lists:reverse(Acc, [Fragment])),
			header_block(M#m{continuation = undefined}, StreamID, IsFin, Block)
	end;
frame(#m{continuation = {_, _, _, _}}, _) ->
	connection_error(protocol_error,
		'A header block must be continued by CONTINUATION frames on its stream. (RFC9113 6.10)');
frame(_, {continuation, _, _, _}) ->
	connection_error(protocol_error, 'CONTINUATION frame without a header block. (RFC9113 6.10)');
frame(M, {priority, _, _, _, _}) ->
	%% Accepted and ignored (RFC 9113 5.3.2).
	overhead_frame(M);
frame(M, {rst_stream, StreamID, Code}) ->
	rst_stream_frame(M, StreamID, Code);
frame(M, {settings, Settings}) ->
	M2 = overhead_frame(M),
	M3 = apply_settings(M2, Settings),
	mustang_http2_machine_send:flush_streams(out(mustang_http2_frame:settings_ack(), 9, event({settings, Settings}, M3)));
frame(M = #m{settings_sent = Sent}, settings_ack) ->
	case Sent of
		undefined -> M;
		_ -> event(settings_ack, M#m{settings_sent = undefined})
	end;
frame(_, {push_promise, _, _, _, _}) ->
	connection_error(protocol_error, 'Clients must not send PUSH_PROMISE frames. (RFC9113 8.4)');
frame(M, {ping, Opaque}) ->
	out(mustang_http2_frame:ping_ack(Opaque), 17, overhead_frame(M));
frame(M = #m{shutdown = goaway_ping}, {ping_ack, ?GOAWAY_PING}) ->
	event(goaway_ping_ack, M);
frame(M, {ping_ack, _}) ->
	M;
frame(M, {goaway, LastStreamID, Code, Debug}) ->
	%% The client opens no more streams; those in flight finish.
	event({goaway, LastStreamID, Code, Debug}, M#m{peer_goaway = true});
frame(M = #m{send_window = Window}, {window_update, Increment}) ->
	case Window + Increment of
		New when New > ?MAX_WINDOW ->
			connection_error(flow_control_error,
				'The connection flow-control window exceeded 2^31-1. (RFC9113 6.9.1)');
		New ->
			M2 = case M#m.queued of
				0 -> overhead_frame(M);
				_ -> M
			end,
			mustang_http2_machine_send:flush_streams(M2#m{send_window = New})
	end;
frame(M, {window_update, StreamID, Increment}) ->
	case M#m.streams of
		#{StreamID := Stream = #stream{send_window = Window, queued = Queued}} ->
			case Window + Increment of
				New when New > ?MAX_WINDOW ->
					mustang_http2_machine_send:stream_error(M, StreamID, flow_control_error,
						'The stream flow-control window exceeded 2^31-1. (RFC9113 6.9.1)');
				New ->
					M2 = case Queued of
						0 -> overhead_frame(M);
						_ -> M
					end,
					Streams = M2#m.streams,
					mustang_http2_machine_send:flush_streams(M2#m{streams = Streams#{StreamID => Stream#stream{send_window = New}}})
			end;
		_ when StreamID rem 2 =:= 1, StreamID > M#m.last_stream_id;
				StreamID rem 2 =:= 0, StreamID >= M#m.next_push_id ->
			connection_error(protocol_error, 'WINDOW_UPDATE frame on an idle stream. (RFC9113 5.1)');
		_ ->
			overhead_frame(M)
	end.

check_block_size(Size, #{max_header_block_size := Max}) when Size > Max ->
	connection_error(enhance_your_calm, 'The header block is larger than max_header_block_size.');
check_block_size(_, _) ->
	ok.

check_headers_stream(StreamID) when StreamID rem 2 =:= 0 ->
	connection_error(protocol_error, 'Clients must use odd-numbered streams. (RFC9113 5.1.1)');
check_headers_stream(_) ->
	ok.

%% Header blocks: a new request, trailers, or an error. The block is always
%% decoded, so the HPACK context stays in step with the client's (RFC 9113 4.3).
header_block(M = #m{decoder = Decoder, opts = Opts, last_stream_id = Last}, StreamID, reset,
		Block) ->
	case mustang_hpack:decode(Block, Decoder,
			#{max_decoded_size => maps:get(max_header_list_size, Opts)}) of
		{error, compression_error, Reason} ->
			connection_error(compression_error, Reason);
		{_, _, Decoder2} ->
			M2 = case StreamID > Last of
				true -> M#m{last_stream_id = StreamID, skipped = skip(Last, StreamID, M#m.skipped)};
				false -> M
			end,
			mustang_http2_machine_send:stream_error(M2#m{decoder = Decoder2}, StreamID, protocol_error,
				'A stream cannot depend on itself. (RFC9113 5.3.1)')
	end;
header_block(M = #m{decoder = Decoder, opts = Opts}, StreamID, IsFin, Block) ->
	MaxList = maps:get(max_header_list_size, Opts),
	case mustang_hpack:decode(Block, Decoder, #{max_decoded_size => MaxList}) of
		{ok, Fields, Decoder2} ->
			headers_decoded(M#m{decoder = Decoder2}, StreamID, IsFin, {ok, Fields});
		{error, header_list_too_large, Decoder2} ->
			headers_decoded(M#m{decoder = Decoder2}, StreamID, IsFin, too_large);
		{error, compression_error, Reason} ->
			connection_error(compression_error, Reason)
	end.

headers_decoded(M = #m{streams = Streams, last_stream_id = Last}, StreamID, IsFin, Result) ->
	case Streams of
		#{StreamID := Stream = #stream{remote = open}} ->
			trailers(M, Stream, IsFin, Result);
		#{StreamID := _} ->
			mustang_http2_machine_send:stream_error(M, StreamID, stream_closed,
				'HEADERS frame received on a half-closed stream. (RFC9113 5.1)');
		_ when StreamID =< Last ->
			case skipped(StreamID, M#m.skipped) of
				true ->
					connection_error(protocol_error,
						'Stream identifiers must increase. (RFC9113 5.1.1)');
				false ->
					connection_error(stream_closed,
						'HEADERS frame received on a closed stream. (RFC9113 5.1)')
			end;
		_ ->
			M2 = M#m{last_stream_id = StreamID, skipped = skip(Last, StreamID, M#m.skipped)},
			case lists:member(StreamID, M#m.reset_idle) of
				%% We reset it: frames on a stream closed by our RST_STREAM
				%% are ignored (RFC 9113 5.1); the block was decoded.
				true -> M2#m{reset_idle = lists:delete(StreamID, M#m.reset_idle)};
				false -> new_stream(M2, StreamID, IsFin, Result)
			end
	end.

skip(Last, StreamID, Skipped) when StreamID =:= Last + 2; StreamID =:= 1, Last =:= 0 ->
	Skipped;
skip(Last, StreamID, Skipped) ->
	From = case Last of 0 -> 1; _ -> Last + 2 end,
	lists:sublist([{From, StreamID - 2} | Skipped], 32).

skipped(StreamID, Skipped) ->
	lists:any(fun({From, To}) -> StreamID >= From andalso StreamID =< To end, Skipped).

trailers(M, #stream{id = StreamID}, nofin, _) ->
	mustang_http2_machine_send:stream_error(M, StreamID, protocol_error, 'Trailers must end the stream. (RFC9113 8.1)');
trailers(M, #stream{id = StreamID}, fin, too_large) ->
	mustang_http2_machine_send:stream_error(M, StreamID, protocol_error, 'The trailers are larger than max_header_list_size.');
trailers(M, #stream{id = StreamID}, fin, {ok, Fields}) ->
	case mustang_http2_headers:trailers(Fields) of
		ok -> data_end(event({trailers, StreamID, Fields}, M), StreamID, fin);
		{error, Reason} -> mustang_http2_machine_send:stream_error(M, StreamID, protocol_error, Reason)
	end.

new_stream(M = #m{shutdown = goaway}, StreamID, _, _) ->
	%% After the final GOAWAY, new streams are refused (RFC 9113 6.8).
	mustang_http2_machine_send:rst(StreamID, refused_stream, M);
new_stream(M = #m{streams = Streams, pushed = Pushed, opts = #{max_concurrent_streams := Max}},
		StreamID, _, _) when map_size(Streams) - Pushed >= Max ->
	M2 = cancel_rate(M),
	mustang_http2_machine_send:rst(StreamID, refused_stream, M2);
new_stream(M, StreamID, IsFin, too_large) ->
	%% RFC 9113 10.5.1: answer 431 rather than process the request.
	event({early_error, StreamID, IsFin, 431, header_list_too_large}, M);
new_stream(M = #m{opts = Opts}, StreamID, IsFin, {ok, Fields}) ->
	case mustang_http2_headers:request(Fields,
			#{enable_connect_protocol => maps:get(enable_connect_protocol, Opts)}) of
		{ok, Request} ->
			mustang_http2_machine_send:open_stream(M, StreamID, Request, IsFin);
		{error, connect_not_supported} ->
			event({early_error, StreamID, IsFin, 501, connect_not_supported}, M);
		{error, Reason} ->
			mustang_http2_machine_send:rst(StreamID, protocol_error, event({malformed, StreamID, Reason}, M))
	end.

rst_stream_frame(M = #m{streams = Streams, last_stream_id = Last}, StreamID, Code) ->
	case Streams of
		#{StreamID := #stream{local = Local, queued = Queued}} ->
			%% A reset of a stream whose response is not complete is a
			%% cancellation: the rapid reset attack (CVE-2023-44487) is many
			%% of them.
			M2 = case Local =:= fin andalso Queued =:= 0 of
				true -> M;
				false -> cancel_rate(M)
			end,
			event({rst_stream, StreamID, Code}, mustang_http2_machine_send:forget_stream(StreamID, M2));
		_ when StreamID rem 2 =:= 1, StreamID > Last; StreamID rem 2 =:= 0, StreamID >= M#m.next_push_id ->
			connection_error(protocol_error, 'RST_STREAM frame on an idle stream. (RFC9113 6.4)');
		_ ->
			M
	end.

%% The caller resets a stream (RST_STREAM with Code).
-spec reset_stream(stream_id(), code(), machine()) -> machine().
reset_stream(StreamID, Code, M) ->
	mustang_http2_machine_send:forget_stream(StreamID, mustang_http2_machine_send:rst(StreamID, Code, M)).

%% The caller is done with a stream whose response is sent. A request body
%% still coming is not needed: RST_STREAM NO_ERROR tells the client to stop
%% sending it (RFC 9113 8.1).
-spec close_stream(stream_id(), machine()) -> machine().
close_stream(StreamID, M = #m{streams = Streams}) ->
	case Streams of
		#{StreamID := #stream{remote = open}} ->
			mustang_http2_machine_send:forget_stream(StreamID, mustang_http2_machine_send:rst(StreamID, no_error, M));
		_ ->
			mustang_http2_machine_send:forget_stream(StreamID, M)
	end.

%% Settings (RFC 9113 6.5.2).
apply_settings(M, Settings) ->
	maps:fold(fun apply_setting/3, M, Settings).

apply_setting(header_table_size, Size, M = #m{encoder = Encoder, opts = Opts}) ->
	M#m{encoder = mustang_hpack:set_max_size(min(Size, maps:get(max_encode_table_size, Opts)),
		Encoder)};
apply_setting(initial_window_size, Size, M = #m{peer_initial_window = Old, streams = Streams}) ->
	%% RFC 9113 6.9.2: every stream window moves by the difference.
	Delta = Size - Old,
	Streams2 = maps:map(fun(_, S = #stream{send_window = W}) ->
		case W + Delta of
			New when New > ?MAX_WINDOW ->
				connection_error(flow_control_error,
					'SETTINGS_INITIAL_WINDOW_SIZE made a window exceed 2^31-1. (RFC9113 6.9.2)');
			New -> S#stream{send_window = New}
		end
	end, Streams),
	M#m{peer_initial_window = Size, streams = Streams2};
apply_setting(max_frame_size, Size, M = #m{opts = Opts}) ->
	Max = case maps:get(max_frame_size_sent, Opts) of
		infinity -> Size;
		Cap -> min(Size, Cap)
	end,
	M#m{max_frame_size_sent = Max};
apply_setting(enable_push, Enabled, M) ->
	M#m{peer_enable_push = Enabled};
apply_setting(max_concurrent_streams, Max, M) ->
	M#m{peer_max_streams = Max};
apply_setting(_, _, M) ->
	M.

%% Rate limits: each counter covers a window of Ms milliseconds.
overhead_frame(M = #m{overhead_rate = Rate0, opts = #{max_overhead_frame_rate := Limit}}) ->
	case bump(Rate0, Limit, M#m.now) of
		exceeded -> connection_error(enhance_your_calm, 'Too many frames that do no work.');
		Rate -> M#m{overhead_rate = Rate}
	end.

cancel_rate(M = #m{cancel_rate = Rate0, opts = #{max_cancel_stream_rate := Limit}}) ->
	case bump(Rate0, Limit, M#m.now) of
		exceeded -> throw({connection_error, M, enhance_your_calm, 'Too many streams cancelled.'});
		Rate -> M#m{cancel_rate = Rate}
	end.

bump({Count, Start}, {Max, Ms}, Now) ->
	if
		Now - Start > Ms -> {1, Now};
		Count + 1 > Max -> exceeded;
		true -> {Count + 1, Start}
	end.

%% Sending: mustang_http2_machine_send does the work. Response parts in
%% the wrong order (or the body of a HEAD response, which is not sent) are
%% ignored, with an {ignored, ...} event.

-spec send(stream_id(), part(), integer(), binary(), machine()) -> result().
send(StreamID, Part, Now, Date, M0) ->
	run(M0, Now, fun(M) -> mustang_http2_machine_send:send(StreamID, Part, Date, M) end).

%% Whether queued data could go out now: the windows allow it, but a
%% sendfile body is read 1 MiB at a time (send_item/3 of
%% mustang_http2_machine_send), and when the client's windows are large no
%% WINDOW_UPDATE comes to send the rest. The process calls resume/2 once it
%% has written what was read.
-spec resumable(machine()) -> boolean().
resumable(#m{send_window = Window}) when Window =< 0 ->
	false;
resumable(#m{sending = Sending, streams = Streams}) ->
	lists:any(fun(StreamID) ->
		case Streams of
			#{StreamID := #stream{send_window = Window, queue = Q}} ->
				Window > 0 andalso not queue:is_empty(Q);
			_ ->
				false
		end
	end, Sending).

-spec resume(integer(), machine()) -> result().
resume(Now, M0) ->
	run(M0, Now, fun mustang_http2_machine_send:flush_streams/1).

%% A response for a request that is not processed (the early_error event).
-spec early_response(stream_id(), mustang_http2_frame:fin(), mustang_req:status(),
	mustang_req:headers(), iodata(), binary(), machine()) -> machine().
early_response(StreamID, IsFin, Status, Headers, Body, Date, M) ->
	mustang_http2_machine_send:early_response(StreamID, IsFin, Status, Headers, Body, Date, M).

%% Whether the stream's queue or the connection's is above its limit.
-spec over_limits(stream_id(), machine()) -> boolean().
over_limits(StreamID, M) ->
	mustang_http2_machine_send:over_limits(StreamID, M).

%% The caller holds callers back until the stream is below the limits: a
%% later flush gives {release, StreamID}.
-spec hold(stream_id(), machine()) -> machine().
hold(StreamID, M) ->
	mustang_http2_machine_send:hold(StreamID, M).

%% Server push (RFC 9113 8.4): only when the client accepts it, while the
%% connection is not shutting down, within the number of streams the client
%% allows, and while stream ids remain. The promised request is checked like
%% a client's, announced with PUSH_PROMISE on the stream it belongs to, then
%% opened as a request whose receiving side is already closed.
-spec push(stream_id(), {push, binary(), binary(), binary(), inet:port_number(), binary(),
	binary(), mustang_req:headers()}, machine()) -> result().
push(StreamID, Push, M0) ->
	run(M0, M0#m.now, fun(M = #m{streams = Streams}) ->
		case Streams of
			#{StreamID := #stream{local = Local}} when Local =/= fin ->
				case mustang_http2_machine_send:can_push(M) of
					true -> mustang_http2_machine_send:push(M, StreamID, Push);
					false -> M
				end;
			_ ->
				M
		end
	end).

%% Request bodies: the stream handlers ask for Size more bytes; the client
%% gets what they ask for plus a margin, or the adapted window when larger.
-spec flow(stream_id(), non_neg_integer(), machine()) -> machine().
flow(StreamID, Size, M = #m{streams = Streams}) ->
	case Streams of
		#{StreamID := Stream} -> flow1(M, Stream, Size);
		_ -> M
	end.

flow1(M, Stream0, Size) ->
	%% They wait for data while the client is out of window: the window is
	%% too small for this connection's pace. (Doubling sooner, when half the
	%% window is used, was measured slower: a curl upload took 1.1-1.4 s
	%% instead of 0.41-0.44 s for 400 MB, data piling up unread.)
	{M1, Stream1} = case Stream0 of
		#stream{recv_window = Window, win_target = Target, remote = open} when Window < 16384 ->
			NewTarget = min(Target * 2, M#m.max_stream_window),
			{M#m{win_target = max(NewTarget, M#m.win_target)},
				Stream0#stream{win_target = NewTarget}};
		_ ->
			{M, Stream0}
	end,
	{M2, Stream2} = case Stream1 of
		#stream{remote = open} -> grant_window(M1, Stream1#stream{want = Size}, Size);
		_ -> {M1, Stream1}
	end,
	M2#m{streams = (M2#m.streams)#{Stream2#stream.id => Stream2}}.

grant_window(M = #m{stream_margin = Margin, max_stream_window = MaxWindow},
		Stream = #stream{id = StreamID, recv_window = Window, win_target = WinTarget,
			recv_total = Total, recv_expected = Expected}, Size) ->
	Target = min(max(Size + Margin, WinTarget), MaxWindow),
	%% Never more than the content-length leaves.
	Need = case Expected of
		undefined -> Target;
		_ -> min(Target, Expected - Total)
	end,
	Increment = Need - Window,
	%% Large windows are topped up in large steps: fewer frames and sends;
	%% but always once the client has less than half of what it may send.
	Threshold = min(Target div 2, max(M#m.stream_threshold, Target div 4)),
	case Increment > 0 andalso (Increment >= Threshold orelse Window * 2 < Need) of
		true ->
			{out(mustang_http2_frame:window_update(StreamID, Increment), 13, M),
				Stream#stream{recv_window = Window + Increment, target = Target}};
		false ->
			{M, Stream#stream{target = Target}}
	end.

%% Shutdown. A graceful GOAWAY takes two steps (RFC 9113 6.8): a GOAWAY with
%% the largest stream id and a PING; then, once the PING is answered (the
%% goaway_ping_ack event) or after a delay of the caller's choosing, the
%% final GOAWAY with the last stream id processed.

-spec start_shutdown(machine()) -> {boolean(), machine()}.
start_shutdown(M = #m{shutdown = none}) ->
	M2 = out([mustang_http2_frame:goaway(?MAX_WINDOW, no_error, <<>>),
		mustang_http2_frame:ping(?GOAWAY_PING)], 34, M),
	{true, M2#m{shutdown = goaway_ping}};
start_shutdown(M) ->
	{false, M}.

-spec final_goaway(machine()) -> machine().
final_goaway(M = #m{last_stream_id = Last}) ->
	out(mustang_http2_frame:goaway(Last, no_error, <<>>), 17, M#m{shutdown = goaway}).

%% The GOAWAY that ends the connection now.
-spec goaway(code(), iodata(), machine()) -> machine().
goaway(Code, Debug, M = #m{last_stream_id = Last}) ->
	out(mustang_http2_frame:goaway(Last, Code, Debug), 17, M).
