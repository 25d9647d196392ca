%% Websocket frame codec (RFC 6455 5), server side: parse/2 reads the frames
%% a client sends, the builders write the frames a server sends. Pure
%% functions on binaries: no sockets, no processes. Compression
%% (mustang_ws_deflate) and UTF-8 validation of text messages (mustang_utf8)
%% are the caller's job; this module only knows whether permessage-deflate
%% was negotiated, because that decides whether RSV1 may be set.
%%
%% Contract: strict when parsing, lax when building.
%% - parse/2 fails the connection (RFC 6455 7.1.7) on every frame that
%%   breaks a rule it can check: unmasked frames (5.1), RSV bits that no
%%   negotiated extension defines (5.2; RSV1 is permessage-deflate's, and
%%   only on the first frame of a data message, RFC 7692 6.1), reserved
%%   opcodes (5.2), control frames that are fragmented or longer than 125
%%   bytes (5.5), continuation frames outside a message and data frames
%%   inside one (5.4), 64-bit lengths with the top bit set (5.2), lengths not
%%   encoded on the minimal number of bytes (5.2), close payloads of 1 byte
%%   or with a code that must not be sent (7.4), and close reasons that are
%%   not UTF-8 (5.5.1, 1007). Messages longer than the max_frame_size option
%%   get 1009 (7.4.1) as soon as the frame header that crosses the limit is
%%   parsed, before its payload is read.
%%   Non-minimal length encodings: RFC 6455 5.2 says "the minimal number of
%%   bytes MUST be used to encode the length"; it is a sender requirement
%%   with no receiver rule, and we treat its violation as any other protocol
%%   violation (1002): no known client sends them, and accepting them would
%%   let a peer give the same frame several encodings.
%% - The builders trust their input: the caller keeps close codes valid,
%%   close reasons UTF-8 and within 123 bytes, and control payloads within
%%   125 bytes.
%%
%% Parsing. The caller feeds each socket read in turn, and keeps nothing:
%% the few bytes of a frame header or control frame split between two reads
%% are kept in the state (at most 139 bytes).
%%   St0 = init(#{deflate => Negotiated, max_frame_size => Max}),
%%   parse(Read, St0) returns one of:
%%   {data, Type, Compressed, Fin, Payload, Rest, St}
%%       Payload is the next piece of the current data message, unmasked:
%%       all of the current frame's payload that Read holds. A large frame
%%       therefore comes out in as many pieces as there were reads, each
%%       unmasked once, and is never held whole by this module. Type (text or
%%       binary) and Compressed (RSV1 of the first frame) describe the
%%       message; Fin is fin when Payload ends the message, nofin otherwise.
%%       Pieces are never empty except a fin piece (a final frame with an
%%       empty payload).
%%   {frame, ControlFrame, Rest, St}
%%       A whole control frame: {ping, Payload}, {pong, Payload}, close (no
%%       payload) or {close, Code, Reason}. Control frames may come between
%%       the frames of a fragmented message (5.4); the message goes on after.
%%   {more, St}
%%       All of Read was used; call parse/2 again with the next read.
%%   {error, {ws_error, CloseCode, Reason}}
%%       Close the connection with CloseCode (1002, 1007 or 1009). Reason is
%%       an atom holding an English sentence that ends with the RFC section
%%       (mustang_error, doc/internals/errors.md).
%%   In the first two cases, call parse(Rest, St) next: Rest is the part of
%%   Read after what was returned (a sub-binary, never a copy), and
%%   parse(<<>>, St) returns {more, St}.
%%
%% Unmasking. Payloads are unmasked with crypto:exor/2 against the masking
%% key repeated to the payload's length. bench/ws_codecs_micro.escript
%% measures it against Erlang code that XORs 4 or 16 bytes per step: exor was
%% the fastest at every size from 2 bytes to 64 KiB (figures in
%% doc/internals/websocket_codecs.md). The key is rotated after each piece,
%% so the mask phase carries on across reads.
-module(mustang_ws_frame).

%% Parsing.
-export([init/1]).
-export([parse/2]).
-export([unmask/2]).
-export([rotate_key/2]).
-export([is_valid_close_code/1]).

%% Building.
-export([frame/1]).
-export([frames/1]).
-export([compressed_frame/2]).
-export([fragment/4]).
-export([in_frame/1]).

-export_type([state/0, opts/0, parse_result/0, control_frame/0, frame/0]).
-export_type([close_code/0, error_code/0, data_type/0, fin/0]).

-type data_type() :: text | binary.
-type fin() :: fin | nofin.
-type close_code() :: 1000..1003 | 1007..1014 | 3000..4999.
-type error_code() :: 1002 | 1007 | 1009.

-type opts() :: #{
	%% permessage-deflate was negotiated: RSV1 may start a data message.
	deflate => boolean(),
	%% Limit on the size of a message, all its frames together (bytes on
	%% the wire, so before inflating).
	max_frame_size => non_neg_integer() | infinity
}.

-type control_frame() :: {ping, binary()} | {pong, binary()} | close
	| {close, close_code(), binary()}.

%% Frames as built.
-type frame() :: {text, iodata()} | {binary, iodata()}
	| ping | {ping, iodata()} | pong | {pong, iodata()}
	| close | {close, iodata()} | {close, close_code(), iodata()}.

-type parse_result() ::
	{data, data_type(), boolean(), fin(), binary(), binary(), state()}
	| {frame, control_frame(), binary(), state()}
	| {more, state()}
	| {error, {ws_error, error_code(), atom()}}.

-record(ws_frame, {
	%% Options.
	deflate = false :: boolean(),
	max_size = infinity :: non_neg_integer() | infinity,
	%% An incomplete frame header or control frame from the last read.
	buffer = <<>> :: binary(),
	%% The data message in progress, if any.
	msg = none :: none | data_type(),
	compressed = false :: boolean(),
	msg_size = 0 :: non_neg_integer(),
	%% The data frame whose payload is being read: bytes left, whether it
	%% ends the message, and the masking key rotated to the next byte.
	left = 0 :: non_neg_integer(),
	fin = false :: boolean(),
	key = 0 :: 0..16#ffffffff
}).

-opaque state() :: #ws_frame{}.

%% Opcodes (RFC 6455 5.2).
-define(CONTINUATION, 0).
-define(TEXT, 1).
-define(BINARY, 2).
-define(CLOSE, 8).
-define(PING, 9).
-define(PONG, 10).

%% Up to this size, the mask is built with one binary:copy/2; above, by
%% doubling.
-define(COPY_MAX, 256).

%% Longest frame header: 2 bytes, 8 of extended length, 4 of masking key.
-define(MAX_HEADER, 14).

-spec init(opts()) -> state().
init(Opts) ->
	#ws_frame{
		deflate = maps:get(deflate, Opts, false),
		max_size = maps:get(max_frame_size, Opts, infinity)
	}.

%% Parsing.

-spec parse(binary(), state()) -> parse_result().
parse(Data, St = #ws_frame{left = Left}) when Left > 0 ->
	payload(Data, St);
parse(Data, St = #ws_frame{buffer = <<>>}) ->
	header(Data, St);
parse(<<>>, St) ->
	{more, St};
parse(Data, St = #ws_frame{buffer = Buffer}) ->
	%% A header or a control frame was split between reads. Join the bytes
	%% kept with only as many bytes as can complete them, not with the whole
	%% read.
	Take = min(byte_size(Data), ?MAX_HEADER + 125),
	<<Head:Take/binary, _/bits>> = Data,
	Joined = <<Buffer/binary, Head/binary>>,
	Result = header(Joined, St#ws_frame{buffer = <<>>}),
	case Take =:= byte_size(Data) of
		true -> Result;
		false -> rebase(Result, byte_size(Joined), byte_size(Buffer), Data)
	end.

%% Point Rest into Data rather than into the joined binary. When the payload
%% of a data frame went past the joined bytes, the piece returned is cut
%% there, the state still expects the rest of the frame, and Rest is the rest
%% of Data. When the joined bytes ran out (after empty frames, which are
%% skipped), the state holds what is left of them and parsing goes on with
%% the rest of Data.
rebase({data, Type, Compressed, Fin, Payload, Rest, St}, JoinedSize, BufferSize, Data) ->
	{data, Type, Compressed, Fin, Payload,
		after_joined(Data, JoinedSize - byte_size(Rest) - BufferSize), St};
rebase({frame, Frame, Rest, St}, JoinedSize, BufferSize, Data) ->
	{frame, Frame, after_joined(Data, JoinedSize - byte_size(Rest) - BufferSize), St};
rebase({more, St}, JoinedSize, BufferSize, Data) ->
	parse(after_joined(Data, JoinedSize - BufferSize), St);
rebase(Error, _, _, _) ->
	Error.

after_joined(Data, Used) ->
	binary:part(Data, Used, byte_size(Data) - Used).

%% Checks that need only the first two bytes come first, so a bad frame is
%% refused before the rest of its header arrives. RSV2 and RSV3 have no
%% meaning without an extension that defines them, and we negotiate none.
header(<<_:2, Rsv:2, _/bits>>, _) when Rsv =/= 0 ->
	{error, {ws_error, 1002, 'RSV2 and RSV3 must be 0 without an extension that defines them. (RFC6455 5.2)'}};
header(<<_:4, Op:4, _/bits>>, _) when Op >= 3, Op =< 7; Op >= 11 ->
	{error, {ws_error, 1002, 'Reserved opcodes must not be used. (RFC6455 5.2)'}};
header(<<_:1, 1:1, _:2, Op:4, _/bits>>, _) when Op >= 8 ->
	{error, {ws_error, 1002, 'Control frames must not be compressed. (RFC7692 6.1)'}};
header(<<0:1, _:3, Op:4, _/bits>>, _) when Op >= 8 ->
	{error, {ws_error, 1002, 'Control frames must not be fragmented. (RFC6455 5.5)'}};
header(<<_:8, 0:1, _/bits>>, _) ->
	{error, {ws_error, 1002, 'Frames sent by a client must be masked. (RFC6455 5.1)'}};
header(<<_:4, Op:4, _:1, Len:7, _/bits>>, _) when Op >= 8, Len > 125 ->
	{error, {ws_error, 1002, 'Control frames must not be longer than 125 bytes. (RFC6455 5.5)'}};
header(Frame = <<_:4, Op:4, _:1, Len:7, _:32, Payload/bits>>, St)
		when Op >= 8, byte_size(Payload) < Len ->
	{more, St#ws_frame{buffer = Frame}};
header(<<_:4, Op:4, _:1, Len:7, Key:32, Payload:Len/binary, Rest/bits>>, St) when Op >= 8 ->
	control(Op, unmask(Payload, Key), Rest, St);
header(<<Fin:1, Rsv1:1, _:2, Op:4, _:1, Len:7, Key:32, Rest/bits>>, St) when Len < 126 ->
	data_frame(Op, Fin, Rsv1, Len, Key, Rest, St);
header(<<_:9, 126:7, Len:16, _/bits>>, _) when Len < 126 ->
	{error, {ws_error, 1002, 'Lengths must be encoded on the minimal number of bytes. (RFC6455 5.2)'}};
header(<<Fin:1, Rsv1:1, _:2, Op:4, _:1, 126:7, Len:16, Key:32, Rest/bits>>, St) ->
	data_frame(Op, Fin, Rsv1, Len, Key, Rest, St);
header(<<_:9, 127:7, 1:1, _/bits>>, _) ->
	{error, {ws_error, 1002, 'The most significant bit of a 64-bit length must be 0. (RFC6455 5.2)'}};
header(<<_:9, 127:7, Len:64, _/bits>>, _) when Len < 16#10000 ->
	{error, {ws_error, 1002, 'Lengths must be encoded on the minimal number of bytes. (RFC6455 5.2)'}};
header(<<Fin:1, Rsv1:1, _:2, Op:4, _:1, 127:7, Len:64, Key:32, Rest/bits>>, St) ->
	data_frame(Op, Fin, Rsv1, Len, Key, Rest, St);
%% An incomplete header (under 14 bytes).
header(<<>>, St) ->
	{more, St};
header(Data, St) ->
	{more, St#ws_frame{buffer = Data}}.

%% Data frames (RFC 6455 5.4, 5.6; RFC 7692 6.1).
data_frame(?CONTINUATION, _, _, _, _, _, #ws_frame{msg = none}) ->
	{error, {ws_error, 1002, 'Continuation frames must follow the start of a fragmented message. (RFC6455 5.4)'}};
data_frame(?CONTINUATION, _, 1, _, _, _, _) ->
	{error, {ws_error, 1002, 'Only the first frame of a message may have RSV1 set. (RFC7692 6.1)'}};
data_frame(?CONTINUATION, Fin, _, Len, Key, Data, St) ->
	start_payload(Fin, Len, Key, Data, St);
data_frame(_, _, _, _, _, _, #ws_frame{msg = Msg}) when Msg =/= none ->
	{error, {ws_error, 1002, 'A new message must not start before the fragmented one ends. (RFC6455 5.4)'}};
data_frame(_, _, 1, _, _, _, #ws_frame{deflate = false}) ->
	{error, {ws_error, 1002, 'RSV1 must be 0 unless permessage-deflate was negotiated. (RFC6455 5.2)'}};
data_frame(Op, Fin, Rsv1, Len, Key, Data, St) ->
	Type = case Op of
		?TEXT -> text;
		?BINARY -> binary
	end,
	start_payload(Fin, Len, Key, Data,
		St#ws_frame{msg = Type, compressed = Rsv1 =:= 1, msg_size = 0}).

start_payload(_, Len, _, _, #ws_frame{msg_size = Size, max_size = Max})
		when is_integer(Max), Size + Len > Max ->
	{error, {ws_error, 1009, 'The message is larger than the max_frame_size option allows. (RFC6455 7.4.1)'}};
start_payload(1, 0, _, Rest, St = #ws_frame{msg = Type, compressed = Compressed}) ->
	{data, Type, Compressed, fin, <<>>, Rest, end_message(St)};
%% An empty frame that does not end the message gives nothing to return.
start_payload(0, 0, _, Rest, St) ->
	parse(Rest, St);
start_payload(Fin, Len, Key, Rest, St = #ws_frame{msg_size = Size}) ->
	payload(Rest, St#ws_frame{msg_size = Size + Len, left = Len, fin = Fin =:= 1, key = Key}).

%% Hand over what the read holds of the frame's payload.
payload(<<>>, St) ->
	{more, St};
payload(Data, St = #ws_frame{left = Left, key = Key, msg = Type, compressed = Compressed})
		when byte_size(Data) < Left ->
	Size = byte_size(Data),
	{data, Type, Compressed, nofin, unmask(Data, Key), <<>>,
		St#ws_frame{left = Left - Size, key = rotate_key(Key, Size)}};
payload(Data, St = #ws_frame{left = Left, key = Key, fin = Fin, msg = Type,
		compressed = Compressed}) ->
	<<Payload:Left/binary, Rest/bits>> = Data,
	case Fin of
		true ->
			{data, Type, Compressed, fin, unmask(Payload, Key), Rest, end_message(St)};
		false ->
			{data, Type, Compressed, nofin, unmask(Payload, Key), Rest, St#ws_frame{left = 0}}
	end.

end_message(St) ->
	St#ws_frame{msg = none, compressed = false, msg_size = 0, left = 0, fin = false}.

%% Control frames (RFC 6455 5.5).
control(?PING, Payload, Rest, St) ->
	{frame, {ping, Payload}, Rest, St};
control(?PONG, Payload, Rest, St) ->
	{frame, {pong, Payload}, Rest, St};
control(?CLOSE, <<>>, Rest, St) ->
	{frame, close, Rest, St};
control(?CLOSE, <<_>>, _, _) ->
	{error, {ws_error, 1002, 'A close payload must start with a 2-byte status code. (RFC6455 5.5.1)'}};
control(?CLOSE, <<Code:16, Reason/bits>>, Rest, St) ->
	case is_valid_close_code(Code) of
		false ->
			{error, {ws_error, 1002, 'This close code must not be sent in a close frame. (RFC6455 7.4)'}};
		true ->
			case mustang_utf8:validate(Reason) of
				ok -> {frame, {close, Code, Reason}, Rest, St};
				{error, {ws_error, 1007, _}} ->
					{error, {ws_error, 1007, 'The close reason must be UTF-8. (RFC6455 5.5.1)'}}
			end
	end.

%% Codes that may appear in a close frame: those defined by RFC 6455 7.4.1
%% except 1004 (reserved), 1005, 1006 and 1015 (never sent), the ones IANA
%% registered since (1012-1014), and the ranges for libraries, frameworks
%% and applications (7.4.2). 1016-2999 are unassigned and refused.
-spec is_valid_close_code(non_neg_integer()) -> boolean().
is_valid_close_code(Code) when Code >= 1000, Code =< 1003 -> true;
is_valid_close_code(Code) when Code >= 1007, Code =< 1014 -> true;
is_valid_close_code(Code) when Code >= 3000, Code =< 4999 -> true;
is_valid_close_code(_) -> false.

%% Unmasking (RFC 6455 5.3). Masking is the same operation.
-spec unmask(binary(), 0..16#ffffffff) -> binary().
unmask(Data, Key) ->
	crypto:exor(Data, mask(Key, byte_size(Data))).

%% The key repeated to Size bytes: one binary:copy/2 for small payloads,
%% doubling (a few large copies) for large ones.
mask(Key, Size) when Size =< ?COPY_MAX ->
	binary:part(binary:copy(<<Key:32>>, (Size + 3) bsr 2), 0, Size);
mask(Key, Size) ->
	double(binary:copy(<<Key:32>>, ?COPY_MAX bsr 2), Size).

double(Mask, Size) when byte_size(Mask) >= Size ->
	binary:part(Mask, 0, Size);
double(Mask, Size) ->
	double(<<Mask/binary, Mask/binary>>, Size).

%% The key to unmask what follows the first N bytes of a payload.
-spec rotate_key(0..16#ffffffff, non_neg_integer()) -> 0..16#ffffffff.
rotate_key(Key, N) ->
	case N band 3 of
		0 -> Key;
		R -> ((Key bsl (8 * R)) bor (Key bsr (32 - 8 * R))) band 16#ffffffff
	end.

%% Building. Server frames are not masked (RFC 6455 5.1).

-spec frame(frame()) -> iodata().
frame({text, Data}) -> build(?TEXT, 1, 0, Data);
frame({binary, Data}) -> build(?BINARY, 1, 0, Data);
frame(ping) -> <<1:1, 0:3, ?PING:4, 0:8>>;
frame({ping, Data}) -> build(?PING, 1, 0, Data);
frame(pong) -> <<1:1, 0:3, ?PONG:4, 0:8>>;
frame({pong, Data}) -> build(?PONG, 1, 0, Data);
frame(close) -> <<1:1, 0:3, ?CLOSE:4, 0:8>>;
frame({close, Payload}) -> build(?CLOSE, 1, 0, Payload);
frame({close, Code, Reason}) -> build(?CLOSE, 1, 0, [<<Code:16>>, Reason]).

%% Several frames as one iolist, for a single send.
-spec frames([frame()]) -> iodata().
frames(Frames) ->
	[frame(F) || F <- Frames].

%% A whole message compressed by mustang_ws_deflate: RSV1 set (RFC 7692 6).
-spec compressed_frame(data_type(), iodata()) -> iodata().
compressed_frame(text, Data) -> build(?TEXT, 1, 1, Data);
compressed_frame(binary, Data) -> build(?BINARY, 1, 1, Data).

%% One frame of a fragmented message (RFC 6455 5.4): the first names the
%% type, the others are continuation frames; Compressed may be true on the
%% first only (RFC 7692 6.1).
-spec fragment(data_type() | continuation, fin(), boolean(), iodata()) -> iodata().
fragment(Type, Fin, Compressed, Data) ->
	Op = case Type of
		text -> ?TEXT;
		binary -> ?BINARY;
		continuation -> ?CONTINUATION
	end,
	build(Op, case Fin of fin -> 1; nofin -> 0 end, case Compressed of true -> 1; false -> 0 end,
		Data).

build(Op, Fin, Rsv1, Data) ->
	case iolist_size(Data) of
		Len when Len < 126 -> [<<Fin:1, Rsv1:1, 0:2, Op:4, 0:1, Len:7>>, Data];
		Len when Len < 16#10000 -> [<<Fin:1, Rsv1:1, 0:2, Op:4, 0:1, 126:7, Len:16>>, Data];
		Len -> [<<Fin:1, Rsv1:1, 0:2, Op:4, 0:1, 127:7, Len:64>>, Data]
	end.

%% Whether a frame was started and not finished (its header or its payload).
-spec in_frame(state()) -> boolean().
in_frame(#ws_frame{buffer = Buffer, left = Left}) ->
	Buffer =/= <<>> orelse Left > 0.
