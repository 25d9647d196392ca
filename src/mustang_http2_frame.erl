%% HTTP/2 frame codec (RFC 9113 sections 3.4, 4 and 6). Pure functions on
%% binaries: no sockets, no processes, and no option but the maximum frame
%% size. The rules that need connection or stream state (which frame may come
%% in which state, CONTINUATION sequences, flow-control windows, HPACK) are
%% the machine's job, not this module's.
%%
%% Contract: strict when parsing, lax when building.
%% - parse/2 rejects every frame that breaks a rule this module can check on
%%   the frame alone: frame size, stream id 0 where it is required or
%%   forbidden, fixed lengths, padding, zero window increments, self
%%   dependencies and SETTINGS values. Unknown frame types, unknown flags,
%%   unknown settings and the reserved bit are ignored, as RFC 9113 4.1, 5.5
%%   and 6.5.2 require. Padding octets are not checked to be zero (RFC 9113
%%   6.1 allows that).
%% - The builders trust their input: the caller keeps stream ids within 31
%%   bits, frames within the peer's SETTINGS_MAX_FRAME_SIZE (except
%%   headers/4, which splits) and values within their ranges.
%%
%% Results of parse/2 have one of these shapes:
%%   {ok, Frame, Rest}          a whole frame; Rest is what follows it.
%%   more                       fewer than the 9 bytes of a frame header.
%%   {more, N}                  the header is there; N more bytes complete
%%                              the frame.
%%   {ignore, Rest}             a frame of unknown type, skipped whole.
%%   {stream_error, StreamID, Code, Reason, Rest}
%%                              reset that stream (RST_STREAM with Code) and
%%                              carry on parsing Rest.
%%   {connection_error, Code, Reason}
%%                              end the connection (GOAWAY with Code).
%% Reason is an atom holding an English sentence that ends with the RFC
%% section it comes from, such as 'PING frames must be 8 bytes long.
%% (RFC9113 6.7)'. A frame longer than the maximum frame size is refused as
%% soon as its 3-byte length field is there, without waiting for the payload.
%%
%% Error codes are atoms (no_error...http_1_1_required). A code this module
%% does not know is kept as its integer: RFC 9113 7 says unknown codes MUST
%% NOT trigger special behaviour and MAY be treated as internal_error; keeping
%% the integer lets the caller log it and treat it as internal_error.
%%
%% A stream error on a HEADERS frame (a stream that depends on itself) does
%% not return the field block fragment. The caller must still keep its HPACK
%% decoder in step with the peer (RFC 9113 4.3), so it must not let such a
%% frame desynchronise the decoder: treating it as a connection error is the
%% safe fallback when the block cannot be decoded otherwise.
%%
%% Streaming DATA. parse/2 returns a DATA frame once it is whole. To hand body
%% bytes to a stream as they arrive instead:
%%   1. parse_header(Buffer) gives {ok, data, _Flags, StreamID, Length, _}.
%%      Length is the frame payload; flow control (RFC 9113 6.9.1) counts all
%%      of it, padding included.
%%   2. data_header(Buffer, MaxFrameSize) validates the header and, when the
%%      PADDED flag is set, the Pad Length byte. It returns
%%      {ok, StreamID, IsFin, PadLength, PayloadLength, Rest}: the first
%%      PayloadLength bytes of Rest, followed by what the socket brings next,
%%      are the stream's data; skip PadLength more bytes of padding; then the
%%      next frame starts. IsFin takes effect after the last payload byte.
%%      It returns more while the header (9 bytes, 10 when PADDED) is not all
%%      there, and the same error tuples as parse/2 would for that frame.
%% data_header/2 must only be given a buffer that starts with a DATA frame
%% header; it raises badarg otherwise.
-module(mustang_http2_frame).

%% Connection preface.
-export([preface/0]).
-export([parse_preface/1]).

%% Parsing.
-export([parse/2]).
-export([parse_header/1]).
-export([data_header/2]).

%% Building.
-export([data/3]).
-export([data_header/3]).
-export([headers/3]).
-export([headers/4]).
-export([priority/4]).
-export([rst_stream/2]).
-export([settings/1]).
-export([settings_ack/0]).
-export([push_promise/4]).
-export([push_promise_frames/4]).
-export([ping/1]).
-export([ping_ack/1]).
-export([goaway/3]).
-export([window_update/1]).
-export([window_update/2]).
-export([continuation/3]).

-export_type([stream_id/0, fin/0, head_fin/0, exclusive/0, weight/0, priority_spec/0]).
-export_type([error_code/0, settings/0, build_settings/0, frame/0, frame_type/0]).
-export_type([parse_result/0, error_result/0]).

-compile({inline, [fin/1, head_fin/1, exclusive/1, fin_flag/1, head_fin_flag/1, unpad/2]}).
-compile({inline, [decode_code/1, encode_code/1, type/1]}).

-type stream_id() :: 0..16#7fffffff.
-type fin() :: fin | nofin.
-type head_fin() :: head_fin | head_nofin.
-type exclusive() :: exclusive | shared.
%% The real weight: the byte on the wire plus one.
-type weight() :: 1..256.
-type priority_spec() :: {exclusive(), stream_id(), weight()}.

%% Unknown codes are kept as integers, see the head comment.
-type error_code() :: no_error | protocol_error | internal_error | flow_control_error
	| settings_timeout | stream_closed | frame_size_error | refused_stream | cancel
	| compression_error | connect_error | enhance_your_calm | inadequate_security
	| http_1_1_required | 0..16#ffffffff.

%% Settings as parsed. Only the settings present in the frame are in the map.
-type settings() :: #{
	header_table_size => 0..16#ffffffff,
	enable_push => boolean(),
	max_concurrent_streams => 0..16#ffffffff,
	initial_window_size => 0..16#7fffffff,
	max_frame_size => 16384..16777215,
	max_header_list_size => 0..16#ffffffff,
	enable_connect_protocol => boolean()
}.

%% Settings as built: the same keys, plus raw identifiers for other settings.
-type build_settings() :: #{
	header_table_size => 0..16#ffffffff,
	enable_push => boolean(),
	max_concurrent_streams => 0..16#ffffffff,
	initial_window_size => 0..16#7fffffff,
	max_frame_size => 16384..16777215,
	max_header_list_size => 0..16#ffffffff,
	enable_connect_protocol => boolean(),
	0..16#ffff => 0..16#ffffffff
}.

-type frame() ::
	{data, stream_id(), fin(), binary()}
	| {headers, stream_id(), fin(), head_fin(), binary()}
	| {headers, stream_id(), fin(), head_fin(), priority_spec(), binary()}
	| {priority, stream_id(), exclusive(), stream_id(), weight()}
	| {rst_stream, stream_id(), error_code()}
	| {settings, settings()}
	| settings_ack
	| {push_promise, stream_id(), head_fin(), stream_id(), binary()}
	| {ping, 0..16#ffffffffffffffff}
	| {ping_ack, 0..16#ffffffffffffffff}
	| {goaway, stream_id(), error_code(), binary()}
	| {window_update, 1..16#7fffffff}
	| {window_update, stream_id(), 1..16#7fffffff}
	| {continuation, stream_id(), head_fin(), binary()}.

-type frame_type() :: data | headers | priority | rst_stream | settings | push_promise
	| ping | goaway | window_update | continuation | 10..255.

-type error_result() ::
	{stream_error, stream_id(), error_code(), atom(), binary()}
	| {connection_error, error_code(), atom()}.

-type parse_result() ::
	{ok, frame(), binary()}
	| more
	| {more, pos_integer()}
	| {ignore, binary()}
	| error_result().

-define(PREFACE, "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n").

%% Frame types (RFC 9113 6).
-define(DATA, 0).
-define(HEADERS, 1).
-define(PRIORITY, 2).
-define(RST_STREAM, 3).
-define(SETTINGS, 4).
-define(PUSH_PROMISE, 5).
-define(PING, 6).
-define(GOAWAY, 7).
-define(WINDOW_UPDATE, 8).
-define(CONTINUATION, 9).

%% Flags. END_STREAM and ACK share a bit, on different frame types.
-define(END_STREAM, 16#1).
-define(ACK, 16#1).
-define(END_HEADERS, 16#4).
-define(PADDED, 16#8).
-define(PRIO, 16#20).

-define(IS_SET(Flags, Flag), ((Flags) band (Flag) =/= 0)).

%% Reasons shared by parse/2 and data_header/2, which must agree.
-define(TOO_LARGE, 'Frames must not be larger than SETTINGS_MAX_FRAME_SIZE. (RFC9113 4.2)').
-define(DATA_STREAM_0, 'DATA frames must be associated with a stream. (RFC9113 6.1)').
-define(DATA_NO_PAD_LENGTH, 'Padded DATA frames must contain a Pad Length field. (RFC9113 6.1)').
-define(DATA_PADDING,
	'The padding of a DATA frame must be shorter than its payload. (RFC9113 6.1)').

%% Reasons too long to sit where they are used.
-define(HEADERS_TOO_SHORT,
	'Padded HEADERS frames must contain the Pad Length and priority fields. (RFC9113 6.2)').
-define(HEADERS_PADDING,
	'The padding of a HEADERS frame must leave room for the other fields. (RFC9113 6.2)').
-define(PUSH_PROMISE_TOO_SHORT,
	'Padded PUSH_PROMISE frames must contain the Promised Stream ID field. (RFC9113 6.6)').
-define(PUSH_PROMISE_PADDING,
	'The padding of a PUSH_PROMISE frame must leave room for the other fields. (RFC9113 6.6)').

%% Connection preface.

-spec preface() -> binary().
preface() ->
	<<?PREFACE>>.

%% The client connection preface (RFC 9113 3.4). On ok the caller drops the
%% first byte_size(preface()) bytes, a SETTINGS frame comes next.
-spec parse_preface(binary()) -> ok | more | {connection_error, protocol_error, atom()}.
parse_preface(<<?PREFACE, _/bits>>) ->
	ok;
parse_preface(Bin) when byte_size(Bin) < byte_size(<<?PREFACE>>) ->
	case binary:longest_common_prefix([Bin, <<?PREFACE>>]) =:= byte_size(Bin) of
		true -> more;
		false -> bad_preface()
	end;
parse_preface(_) ->
	bad_preface().

bad_preface() ->
	{connection_error, protocol_error,
		'The connection must start with the connection preface. (RFC9113 3.4)'}.

%% Parsing.

-spec parse(binary(), non_neg_integer()) -> parse_result().
parse(<<Len:24, _/bits>>, MaxFrameSize) when Len > MaxFrameSize ->
	{connection_error, frame_size_error, ?TOO_LARGE};
parse(<<Len:24, Type:8, Flags:8, _:1, StreamID:31, Payload:Len/binary, Rest/bits>>, _) ->
	frame(Type, Flags, StreamID, Payload, Rest);
parse(<<Len:24, _:48, Partial/bits>>, _) ->
	{more, Len - byte_size(Partial)};
parse(_, _) ->
	more.

%% One clause per frame type, so that the dispatch is a single jump.
frame(?DATA, Flags, StreamID, Payload, Rest) ->
	data_frame(Flags, StreamID, Payload, Rest);
frame(?HEADERS, Flags, StreamID, Payload, Rest) ->
	headers_frame(Flags, StreamID, Payload, Rest);
frame(?PRIORITY, Flags, StreamID, Payload, Rest) ->
	priority_frame(Flags, StreamID, Payload, Rest);
frame(?RST_STREAM, Flags, StreamID, Payload, Rest) ->
	rst_stream_frame(Flags, StreamID, Payload, Rest);
frame(?SETTINGS, Flags, StreamID, Payload, Rest) ->
	settings_frame(Flags, StreamID, Payload, Rest);
frame(?PUSH_PROMISE, Flags, StreamID, Payload, Rest) ->
	push_promise_frame(Flags, StreamID, Payload, Rest);
frame(?PING, Flags, StreamID, Payload, Rest) ->
	ping_frame(Flags, StreamID, Payload, Rest);
frame(?GOAWAY, Flags, StreamID, Payload, Rest) ->
	goaway_frame(Flags, StreamID, Payload, Rest);
frame(?WINDOW_UPDATE, Flags, StreamID, Payload, Rest) ->
	window_update_frame(Flags, StreamID, Payload, Rest);
frame(?CONTINUATION, Flags, StreamID, Payload, Rest) ->
	continuation_frame(Flags, StreamID, Payload, Rest);
%% Frames of unknown types must be ignored (RFC 9113 4.1, 5.5).
frame(_, _, _, _, Rest) ->
	{ignore, Rest}.

%% DATA (RFC 9113 6.1).
data_frame(_, 0, _, _) ->
	{connection_error, protocol_error, ?DATA_STREAM_0};
data_frame(Flags, StreamID, Payload, Rest) when not ?IS_SET(Flags, ?PADDED) ->
	{ok, {data, StreamID, fin(Flags), Payload}, Rest};
data_frame(Flags, StreamID, Payload, Rest) ->
	case unpad(Payload, 0) of
		{ok, Data} -> {ok, {data, StreamID, fin(Flags), Data}, Rest};
		too_short -> {connection_error, frame_size_error, ?DATA_NO_PAD_LENGTH};
		too_much_padding -> {connection_error, protocol_error, ?DATA_PADDING}
	end.

%% HEADERS (RFC 9113 6.2). Any error in a frame that carries a field block is
%% a connection error, except a self dependency.
headers_frame(_, 0, _, _) ->
	{connection_error, protocol_error,
		'HEADERS frames must be associated with a stream. (RFC9113 6.2)'};
headers_frame(Flags, StreamID, Payload, Rest) when ?IS_SET(Flags, ?PADDED) ->
	PrioritySize = case ?IS_SET(Flags, ?PRIO) of
		true -> 5;
		false -> 0
	end,
	case unpad(Payload, PrioritySize) of
		{ok, Unpadded} ->
			headers_priority(Flags, StreamID, Unpadded, Rest);
		too_short ->
			{connection_error, frame_size_error, ?HEADERS_TOO_SHORT};
		too_much_padding ->
			{connection_error, protocol_error, ?HEADERS_PADDING}
	end;
headers_frame(Flags, StreamID, Payload, Rest) ->
	headers_priority(Flags, StreamID, Payload, Rest).

%% PRIORITY (RFC 9113 6.3).
priority_frame(_, 0, _, _) ->
	{connection_error, protocol_error,
		'PRIORITY frames must be associated with a stream. (RFC9113 6.3)'};
priority_frame(_, StreamID, <<_:1, StreamID:31, _:8>>, Rest) ->
	self_dependency(StreamID, Rest);
priority_frame(_, StreamID, <<E:1, DepStreamID:31, Weight:8>>, Rest) ->
	{ok, {priority, StreamID, exclusive(E), DepStreamID, Weight + 1}, Rest};
priority_frame(_, StreamID, _, Rest) ->
	{stream_error, StreamID, frame_size_error,
		'PRIORITY frames must be 5 bytes long. (RFC9113 6.3)', Rest}.

%% RST_STREAM (RFC 9113 6.4).
rst_stream_frame(_, 0, _, _) ->
	{connection_error, protocol_error,
		'RST_STREAM frames must be associated with a stream. (RFC9113 6.4)'};
rst_stream_frame(_, StreamID, <<Code:32>>, Rest) ->
	{ok, {rst_stream, StreamID, decode_code(Code)}, Rest};
rst_stream_frame(_, _, _, _) ->
	{connection_error, frame_size_error,
		'RST_STREAM frames must be 4 bytes long. (RFC9113 6.4)'}.

%% SETTINGS (RFC 9113 6.5).
settings_frame(_, StreamID, _, _) when StreamID =/= 0 ->
	{connection_error, protocol_error,
		'SETTINGS frames must be sent on stream 0. (RFC9113 6.5)'};
settings_frame(Flags, _, <<>>, Rest) when ?IS_SET(Flags, ?ACK) ->
	{ok, settings_ack, Rest};
settings_frame(Flags, _, _, _) when ?IS_SET(Flags, ?ACK) ->
	{connection_error, frame_size_error,
		'SETTINGS frames with the ACK flag must have an empty payload. (RFC9113 6.5)'};
settings_frame(_, _, Payload, Rest) when byte_size(Payload) rem 6 =:= 0 ->
	settings_payload(Payload, #{}, Rest);
settings_frame(_, _, _, _) ->
	{connection_error, frame_size_error,
		'SETTINGS frames must be a multiple of 6 bytes long. (RFC9113 6.5)'}.

%% PUSH_PROMISE (RFC 9113 6.6).
push_promise_frame(_, 0, _, _) ->
	{connection_error, protocol_error,
		'PUSH_PROMISE frames must be associated with a stream. (RFC9113 6.6)'};
push_promise_frame(Flags, StreamID, Payload, Rest) when ?IS_SET(Flags, ?PADDED) ->
	case unpad(Payload, 4) of
		{ok, Unpadded} ->
			push_promise_fields(Flags, StreamID, Unpadded, Rest);
		too_short ->
			{connection_error, frame_size_error, ?PUSH_PROMISE_TOO_SHORT};
		too_much_padding ->
			{connection_error, protocol_error, ?PUSH_PROMISE_PADDING}
	end;
push_promise_frame(Flags, StreamID, Payload, Rest) ->
	push_promise_fields(Flags, StreamID, Payload, Rest).

%% PING (RFC 9113 6.7).
ping_frame(_, StreamID, _, _) when StreamID =/= 0 ->
	{connection_error, protocol_error,
		'PING frames must be sent on stream 0. (RFC9113 6.7)'};
ping_frame(Flags, _, <<Opaque:64>>, Rest) when ?IS_SET(Flags, ?ACK) ->
	{ok, {ping_ack, Opaque}, Rest};
ping_frame(_, _, <<Opaque:64>>, Rest) ->
	{ok, {ping, Opaque}, Rest};
ping_frame(_, _, _, _) ->
	{connection_error, frame_size_error,
		'PING frames must be 8 bytes long. (RFC9113 6.7)'}.

%% GOAWAY (RFC 9113 6.8).
goaway_frame(_, StreamID, _, _) when StreamID =/= 0 ->
	{connection_error, protocol_error,
		'GOAWAY frames must be sent on stream 0. (RFC9113 6.8)'};
goaway_frame(_, _, <<_:1, LastStreamID:31, Code:32, DebugData/bits>>, Rest) ->
	{ok, {goaway, LastStreamID, decode_code(Code), DebugData}, Rest};
goaway_frame(_, _, _, _) ->
	{connection_error, frame_size_error,
		'GOAWAY frames must be at least 8 bytes long. (RFC9113 6.8)'}.

%% WINDOW_UPDATE (RFC 9113 6.9).
window_update_frame(_, 0, <<_:1, 0:31>>, _) ->
	{connection_error, protocol_error,
		'WINDOW_UPDATE frames must have a non-zero increment. (RFC9113 6.9)'};
window_update_frame(_, 0, <<_:1, Increment:31>>, Rest) ->
	{ok, {window_update, Increment}, Rest};
window_update_frame(_, StreamID, <<_:1, 0:31>>, Rest) ->
	{stream_error, StreamID, protocol_error,
		'WINDOW_UPDATE frames must have a non-zero increment. (RFC9113 6.9)', Rest};
window_update_frame(_, StreamID, <<_:1, Increment:31>>, Rest) ->
	{ok, {window_update, StreamID, Increment}, Rest};
window_update_frame(_, _, _, _) ->
	{connection_error, frame_size_error,
		'WINDOW_UPDATE frames must be 4 bytes long. (RFC9113 6.9)'}.

%% CONTINUATION (RFC 9113 6.10).
continuation_frame(_, 0, _, _) ->
	{connection_error, protocol_error,
		'CONTINUATION frames must be associated with a stream. (RFC9113 6.10)'};
continuation_frame(Flags, StreamID, Fragment, Rest) ->
	{ok, {continuation, StreamID, head_fin(Flags), Fragment}, Rest}.

headers_priority(Flags, StreamID, <<_:1, StreamID:31, _:8, _/bits>>, Rest)
		when ?IS_SET(Flags, ?PRIO) ->
	self_dependency(StreamID, Rest);
headers_priority(Flags, StreamID, <<E:1, DepStreamID:31, Weight:8, Fragment/bits>>, Rest)
		when ?IS_SET(Flags, ?PRIO) ->
	{ok, {headers, StreamID, fin(Flags), head_fin(Flags),
		{exclusive(E), DepStreamID, Weight + 1}, Fragment}, Rest};
headers_priority(Flags, _, _, _) when ?IS_SET(Flags, ?PRIO) ->
	{connection_error, frame_size_error,
		'HEADERS frames with the PRIORITY flag must contain the priority fields. (RFC9113 6.2)'};
headers_priority(Flags, StreamID, Fragment, Rest) ->
	{ok, {headers, StreamID, fin(Flags), head_fin(Flags), Fragment}, Rest}.

%% RFC 9113 keeps the frame layout of RFC 7540 priorities but drops the text
%% of this rule, so the reason cites RFC 7540.
self_dependency(StreamID, Rest) ->
	{stream_error, StreamID, protocol_error,
		'A stream cannot depend on itself. (RFC7540 5.3.1)', Rest}.

%% The promised stream identifier must be a valid new stream identifier
%% (RFC 9113 6.6, 5.1.1): whether it is the right one is the machine's
%% business, but 0 never is.
push_promise_fields(_, _, <<_:1, 0:31, _/bits>>, _) ->
	{connection_error, protocol_error,
		'PUSH_PROMISE frames must not promise stream 0. (RFC9113 6.6)'};
push_promise_fields(Flags, StreamID, <<_:1, PromisedStreamID:31, Fragment/bits>>, Rest) ->
	{ok, {push_promise, StreamID, head_fin(Flags), PromisedStreamID, Fragment}, Rest};
push_promise_fields(_, _, _, _) ->
	{connection_error, frame_size_error,
		'PUSH_PROMISE frames must contain the Promised Stream ID field. (RFC9113 6.6)'}.

%% Removes the Pad Length field and the padding. Fixed is the size of the
%% fields between the Pad Length field and the fragment; the padding may use
%% all the room left after them (RFC 9113 6.1, 6.2, 6.6).
unpad(<<PadLen:8, Padded/bits>>, Fixed) when byte_size(Padded) >= Fixed + PadLen ->
	{ok, binary:part(Padded, 0, byte_size(Padded) - PadLen)};
unpad(<<_:8, Padded/bits>>, Fixed) when byte_size(Padded) >= Fixed ->
	too_much_padding;
unpad(_, _) ->
	too_short.

%% SETTINGS parameters (RFC 9113 6.5.1, 6.5.2; RFC 8441 3). Later values of a
%% parameter replace earlier ones (RFC 9113 6.5.3 processes them in order).
settings_payload(<<>>, Settings, Rest) ->
	{ok, {settings, Settings}, Rest};
settings_payload(<<1:16, Value:32, Payload/bits>>, Settings, Rest) ->
	settings_payload(Payload, Settings#{header_table_size => Value}, Rest);
settings_payload(<<2:16, Value:32, Payload/bits>>, Settings, Rest) when Value =< 1 ->
	settings_payload(Payload, Settings#{enable_push => Value =:= 1}, Rest);
settings_payload(<<2:16, _:32, _/bits>>, _, _) ->
	{connection_error, protocol_error,
		'SETTINGS_ENABLE_PUSH must be 0 or 1. (RFC9113 6.5.2)'};
settings_payload(<<3:16, Value:32, Payload/bits>>, Settings, Rest) ->
	settings_payload(Payload, Settings#{max_concurrent_streams => Value}, Rest);
settings_payload(<<4:16, Value:32, Payload/bits>>, Settings, Rest) when Value =< 16#7fffffff ->
	settings_payload(Payload, Settings#{initial_window_size => Value}, Rest);
settings_payload(<<4:16, _:32, _/bits>>, _, _) ->
	{connection_error, flow_control_error,
		'SETTINGS_INITIAL_WINDOW_SIZE must not be larger than 2^31-1. (RFC9113 6.5.2)'};
settings_payload(<<5:16, Value:32, Payload/bits>>, Settings, Rest)
		when Value >= 16384, Value =< 16777215 ->
	settings_payload(Payload, Settings#{max_frame_size => Value}, Rest);
settings_payload(<<5:16, _:32, _/bits>>, _, _) ->
	{connection_error, protocol_error,
		'SETTINGS_MAX_FRAME_SIZE must be between 16384 and 16777215. (RFC9113 6.5.2)'};
settings_payload(<<6:16, Value:32, Payload/bits>>, Settings, Rest) ->
	settings_payload(Payload, Settings#{max_header_list_size => Value}, Rest);
settings_payload(<<8:16, Value:32, Payload/bits>>, Settings, Rest) when Value =< 1 ->
	settings_payload(Payload, Settings#{enable_connect_protocol => Value =:= 1}, Rest);
settings_payload(<<8:16, _:32, _/bits>>, _, _) ->
	{connection_error, protocol_error,
		'SETTINGS_ENABLE_CONNECT_PROTOCOL must be 0 or 1. (RFC8441 3)'};
settings_payload(<<_:48, Payload/bits>>, Settings, Rest) ->
	settings_payload(Payload, Settings, Rest).

%% The 9-byte frame header alone (RFC 9113 4.1), the reserved bit dropped.
%% It checks nothing: use parse/2 or data_header/2 for that.
-spec parse_header(binary())
	-> {ok, frame_type(), byte(), stream_id(), 0..16#ffffff, binary()} | more.
parse_header(<<Len:24, Type:8, Flags:8, _:1, StreamID:31, Rest/bits>>) ->
	{ok, type(Type), Flags, StreamID, Len, Rest};
parse_header(_) ->
	more.

%% The header of a DATA frame, for streaming its payload; see the head
%% comment. Rest starts at the first data byte.
-spec data_header(binary(), non_neg_integer())
	-> {ok, stream_id(), fin(), byte(), non_neg_integer(), binary()}
	| more | {connection_error, frame_size_error | protocol_error, atom()}.
data_header(<<Len:24, _/bits>>, MaxFrameSize) when Len > MaxFrameSize ->
	{connection_error, frame_size_error, ?TOO_LARGE};
data_header(<<_:24, ?DATA:8, _:8, _:1, 0:31, _/bits>>, _) ->
	{connection_error, protocol_error, ?DATA_STREAM_0};
data_header(<<Len:24, ?DATA:8, Flags:8, _:1, StreamID:31, Rest/bits>>, _)
		when not ?IS_SET(Flags, ?PADDED) ->
	{ok, StreamID, fin(Flags), 0, Len, Rest};
data_header(<<0:24, ?DATA:8, _:8, _:32, _/bits>>, _) ->
	{connection_error, frame_size_error, ?DATA_NO_PAD_LENGTH};
data_header(<<Len:24, ?DATA:8, Flags:8, _:1, StreamID:31, PadLen:8, Rest/bits>>, _)
		when PadLen < Len ->
	{ok, StreamID, fin(Flags), PadLen, Len - 1 - PadLen, Rest};
data_header(<<_:24, ?DATA:8, _:40, _:8, _/bits>>, _) ->
	{connection_error, protocol_error, ?DATA_PADDING};
data_header(Bin = <<_:24, Type:8, _/bits>>, MaxFrameSize) when Type =/= ?DATA ->
	erlang:error(badarg, [Bin, MaxFrameSize]);
data_header(_, _) ->
	more.

fin(Flags) when ?IS_SET(Flags, ?END_STREAM) -> fin;
fin(_) -> nofin.

head_fin(Flags) when ?IS_SET(Flags, ?END_HEADERS) -> head_fin;
head_fin(_) -> head_nofin.

exclusive(1) -> exclusive;
exclusive(0) -> shared.

type(?DATA) -> data;
type(?HEADERS) -> headers;
type(?PRIORITY) -> priority;
type(?RST_STREAM) -> rst_stream;
type(?SETTINGS) -> settings;
type(?PUSH_PROMISE) -> push_promise;
type(?PING) -> ping;
type(?GOAWAY) -> goaway;
type(?WINDOW_UPDATE) -> window_update;
type(?CONTINUATION) -> continuation;
type(Type) -> Type.

%% Error codes (RFC 9113 7).
decode_code(0) -> no_error;
decode_code(1) -> protocol_error;
decode_code(2) -> internal_error;
decode_code(3) -> flow_control_error;
decode_code(4) -> settings_timeout;
decode_code(5) -> stream_closed;
decode_code(6) -> frame_size_error;
decode_code(7) -> refused_stream;
decode_code(8) -> cancel;
decode_code(9) -> compression_error;
decode_code(10) -> connect_error;
decode_code(11) -> enhance_your_calm;
decode_code(12) -> inadequate_security;
decode_code(13) -> http_1_1_required;
decode_code(Code) -> Code.

encode_code(no_error) -> 0;
encode_code(protocol_error) -> 1;
encode_code(internal_error) -> 2;
encode_code(flow_control_error) -> 3;
encode_code(settings_timeout) -> 4;
encode_code(stream_closed) -> 5;
encode_code(frame_size_error) -> 6;
encode_code(refused_stream) -> 7;
encode_code(cancel) -> 8;
encode_code(compression_error) -> 9;
encode_code(connect_error) -> 10;
encode_code(enhance_your_calm) -> 11;
encode_code(inadequate_security) -> 12;
encode_code(http_1_1_required) -> 13;
encode_code(Code) when is_integer(Code) -> Code.

%% Building.

-spec data(stream_id(), fin(), iodata()) -> iodata().
data(StreamID, IsFin, Data) ->
	[data_header(StreamID, IsFin, iolist_size(Data)), Data].

%% The header of a DATA frame whose Length bytes of payload the caller sends
%% itself (sendfile).
-spec data_header(stream_id(), fin(), 0..16#ffffff) -> binary().
data_header(StreamID, IsFin, Length) ->
	<<Length:24, ?DATA:8, (fin_flag(IsFin)):8, 0:1, StreamID:31>>.

%% One HEADERS frame with END_HEADERS: the block must fit the peer's maximum
%% frame size.
-spec headers(stream_id(), fin(), iodata()) -> iodata().
headers(StreamID, IsFin, HeaderBlock) ->
	Flags = fin_flag(IsFin) bor ?END_HEADERS,
	[<<(iolist_size(HeaderBlock)):24, ?HEADERS:8, Flags:8, 0:1, StreamID:31>>, HeaderBlock].

%% A HEADERS frame followed by as many CONTINUATION frames as needed to keep
%% every frame within MaxFrameSize (RFC 9113 6.2, 6.10).
-spec headers(stream_id(), fin(), iodata(), pos_integer()) -> iodata().
headers(StreamID, IsFin, HeaderBlock, MaxFrameSize) ->
	case iolist_size(HeaderBlock) of
		Size when Size =< MaxFrameSize ->
			headers(StreamID, IsFin, HeaderBlock);
		_ ->
			<<First:MaxFrameSize/binary, More/bits>> = iolist_to_binary(HeaderBlock),
			[<<MaxFrameSize:24, ?HEADERS:8, (fin_flag(IsFin)):8, 0:1, StreamID:31>>, First
				| continuations(StreamID, More, MaxFrameSize)]
	end.

continuations(StreamID, Fragment, MaxFrameSize) when byte_size(Fragment) =< MaxFrameSize ->
	[continuation(StreamID, head_fin, Fragment)];
continuations(StreamID, Fragment, MaxFrameSize) ->
	<<Chunk:MaxFrameSize/binary, More/bits>> = Fragment,
	[continuation(StreamID, head_nofin, Chunk) | continuations(StreamID, More, MaxFrameSize)].

-spec priority(stream_id(), exclusive(), stream_id(), weight()) -> binary().
priority(StreamID, Exclusive, DepStreamID, Weight) ->
	E = case Exclusive of
		exclusive -> 1;
		shared -> 0
	end,
	<<5:24, ?PRIORITY:8, 0:8, 0:1, StreamID:31, E:1, DepStreamID:31, (Weight - 1):8>>.

-spec rst_stream(stream_id(), error_code()) -> binary().
rst_stream(StreamID, Code) ->
	<<4:24, ?RST_STREAM:8, 0:8, 0:1, StreamID:31, (encode_code(Code)):32>>.

%% Known keys are written in a fixed order, then integer keys in ascending
%% order.
-spec settings(build_settings()) -> iodata().
settings(Settings) ->
	Payload = [setting(Key, Id, Settings) || {Key, Id} <- [{header_table_size, 1},
		{enable_push, 2}, {max_concurrent_streams, 3}, {initial_window_size, 4},
		{max_frame_size, 5}, {max_header_list_size, 6}, {enable_connect_protocol, 8}]]
		++ [<<Id:16, Value:32>> || {Id, Value} <- lists:sort(maps:to_list(Settings)),
			is_integer(Id)],
	[<<(iolist_size(Payload)):24, ?SETTINGS:8, 0:8, 0:32>>, Payload].

setting(Key, Id, Settings) ->
	case Settings of
		#{Key := true} -> <<Id:16, 1:32>>;
		#{Key := false} -> <<Id:16, 0:32>>;
		#{Key := Value} -> <<Id:16, Value:32>>;
		_ -> <<>>
	end.

-spec settings_ack() -> binary().
settings_ack() ->
	<<0:24, ?SETTINGS:8, ?ACK:8, 0:32>>.

-spec push_promise(stream_id(), head_fin(), stream_id(), iodata()) -> iodata().
push_promise(StreamID, IsHeadFin, PromisedStreamID, Fragment) ->
	Len = iolist_size(Fragment) + 4,
	[<<Len:24, ?PUSH_PROMISE:8, (head_fin_flag(IsHeadFin)):8, 0:1, StreamID:31,
		0:1, PromisedStreamID:31>>, Fragment].

%% A PUSH_PROMISE frame followed by as many CONTINUATION frames as needed
%% to keep every frame within MaxFrameSize (RFC 9113 6.6, 6.10).
-spec push_promise_frames(stream_id(), stream_id(), iodata(), pos_integer()) -> iodata().
push_promise_frames(StreamID, PromisedStreamID, HeaderBlock, MaxFrameSize) ->
	First = MaxFrameSize - 4,
	case iolist_size(HeaderBlock) of
		Size when Size =< First ->
			push_promise(StreamID, head_fin, PromisedStreamID, HeaderBlock);
		_ ->
			<<Chunk:First/binary, More/bits>> = iolist_to_binary(HeaderBlock),
			[push_promise(StreamID, head_nofin, PromisedStreamID, Chunk)
				| continuations(StreamID, More, MaxFrameSize)]
	end.

-spec ping(0..16#ffffffffffffffff) -> binary().
ping(Opaque) ->
	<<8:24, ?PING:8, 0:8, 0:32, Opaque:64>>.

-spec ping_ack(0..16#ffffffffffffffff) -> binary().
ping_ack(Opaque) ->
	<<8:24, ?PING:8, ?ACK:8, 0:32, Opaque:64>>.

-spec goaway(stream_id(), error_code(), iodata()) -> iodata().
goaway(LastStreamID, Code, DebugData) ->
	Len = iolist_size(DebugData) + 8,
	[<<Len:24, ?GOAWAY:8, 0:8, 0:32, 0:1, LastStreamID:31, (encode_code(Code)):32>>,
		DebugData].

-spec window_update(1..16#7fffffff) -> binary().
window_update(Increment) ->
	window_update(0, Increment).

-spec window_update(stream_id(), 1..16#7fffffff) -> binary().
window_update(StreamID, Increment) ->
	<<4:24, ?WINDOW_UPDATE:8, 0:8, 0:1, StreamID:31, 0:1, Increment:31>>.

-spec continuation(stream_id(), head_fin(), iodata()) -> iodata().
continuation(StreamID, IsHeadFin, Fragment) ->
	[<<(iolist_size(Fragment)):24, ?CONTINUATION:8, (head_fin_flag(IsHeadFin)):8,
		0:1, StreamID:31>>, Fragment].

fin_flag(fin) -> ?END_STREAM;
fin_flag(nofin) -> 0.

head_fin_flag(head_fin) -> ?END_HEADERS;
head_fin_flag(head_nofin) -> 0.
