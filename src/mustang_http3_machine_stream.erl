%% The request streams of mustang_http3_machine (a part of it, split off for
%% size; pure like it, and below it: it never calls the machine): reading
%% frames from a stream, the request's HEADERS, DATA and trailers in their
%% order (RFC 9114 4.1), field sections through QPACK (held while blocked,
%% RFC 9204 2.1.2), message checks (RFC 9114 4.1.2, 4.2, 4.3), and the
%% response parts turned into frames. Only mustang_http3_machine calls it.
%% No options of its own (the machine's max_field_section_size and
%% enable_connect_protocol).
-module(mustang_http3_machine_stream).

%% Reading frames (also used for the control stream).
-export([feed/2]).
-export([read/2]).

%% Request streams.
-export([data/4]).
-export([unblocked/3]).
-export([stream_error/4]).
-export([close/4]).
-export([forget/2]).
-export([decoder_bytes/2]).

%% Responses.
-export([send/4]).
-export([early_response/7]).

-include("mustang_http3_machine.hrl").

-type stream_id() :: non_neg_integer().
-type fin() :: fin | nofin.

action(Action, M = #h3{actions = Actions}) ->
	M#h3{actions = [Action | Actions]}.

event(Event, M = #h3{events = Events}) ->
	M#h3{events = [Event | Events]}.

-spec connection_error(mustang_http3_frame:error_code(), atom()) -> no_return().
connection_error(Code, Reason) ->
	throw({connection_error, Code, Reason}).

%% Reading frames.

%% New bytes for a reader: {more, Rd} while fewer than it needs are there
%% (kept as parts, joined once), else {go, Bin, Rd} with the bytes to read.
-spec feed(#rd{}, binary()) -> {more, #rd{}} | {go, binary(), #rd{}}.
feed(Rd, <<>>) ->
	{more, Rd};
feed(Rd = #rd{parts = [], state = State}, Data) when element(1, State) =:= data;
		element(1, State) =:= skip ->
	{go, Data, Rd};
feed(Rd = #rd{parts = Parts, size = Size, need = Need}, Data) ->
	case Size + byte_size(Data) of
		Total when Total < Need ->
			{more, Rd#rd{parts = [Data | Parts], size = Total}};
		_ when Parts =:= [] ->
			{go, Data, Rd};
		_ ->
			{go, iolist_to_binary(lists:reverse(Parts, [Data])), Rd#rd{parts = [], size = 0}}
	end.

%% One step of reading: a frame header (the caller then chooses what to do
%% with the payload: set_payload/3), a whole frame, a piece of DATA payload,
%% a piece of unknown frame skipped, or {more, Rd} with the rest kept.
-spec read(#rd{}, binary())
	-> {header, mustang_http3_frame:frame_type(), non_neg_integer(), binary()}
	| {frame, mustang_http3_frame:frame_type(), binary(), #rd{}, binary()}
	| {data | skip, binary(), #rd{}, binary()}
	| {more, #rd{}}.
read(Rd = #rd{state = header}, Bin) ->
	case mustang_http3_frame:parse_header(Bin) of
		{ok, Type, Len, Rest} -> {header, Type, Len, Rest};
		{more, N} -> {more, keep(Rd, Bin, byte_size(Bin) + N)};
		{error, {connection_error, Code, Reason}} -> connection_error(Code, Reason)
	end;
read(Rd = #rd{state = {frame, Type, Len}}, Bin) ->
	case Bin of
		<<Payload:Len/binary, Rest/bits>> -> {frame, Type, Payload, Rd#rd{state = header}, Rest};
		_ -> {more, keep(Rd, Bin, Len)}
	end;
read(Rd = #rd{state = {Kind, 0}}, Bin) ->
	%% An empty DATA or unknown frame.
	{Kind, <<>>, Rd#rd{state = header}, Bin};
read(Rd, <<>>) ->
	{more, Rd#rd{need = 1}};
read(Rd = #rd{state = {Kind, Left}}, Bin) ->
	case Bin of
		<<Piece:Left/binary, Rest/bits>> ->
			{Kind, Piece, Rd#rd{state = header}, Rest};
		_ ->
			{Kind, Bin, Rd#rd{state = {Kind, Left - byte_size(Bin)}}, <<>>}
	end.

keep(Rd, <<>>, _) -> Rd#rd{parts = [], size = 0, need = 1};
keep(Rd, Bin, Need) -> Rd#rd{parts = [Bin], size = byte_size(Bin), need = Need}.

%% Whether a reader stopped between two frames (RFC 9114 7.1: a stream that
%% ends inside a frame is an error).
at_boundary(#rd{state = header, parts = []}) -> true;
at_boundary(_) -> false.

%% Request streams (RFC 9114 4.1).

-spec data(#h3{}, #req{}, binary(), fin()) -> #h3{}.
data(M, S = #req{phase = discard}, _, IsFin) ->
	store(M, S#req{remote = remote(IsFin, S#req.remote)});
data(M, S = #req{phase = blocked, held = Held, held_size = Size}, Data, IsFin) ->
	case Size + byte_size(Data) of
		Total when Total > ?MAX_HELD ->
			stream_error(M, S#req.id, h3_excessive_load,
				'A request stream sent too much while its field section was blocked. (RFC9114 10.5)');
		Total ->
			store(M, S#req{held = [Data | Held], held_size = Total, held_fin = IsFin})
	end;
data(M, S, Data, IsFin) ->
	case feed(S#req.rd, Data) of
		{more, Rd} -> finish(M, S#req{rd = Rd}, IsFin);
		{go, Bin, Rd} -> loop(M, S#req{rd = Rd}, Bin, IsFin)
	end.

remote(fin, _) -> fin;
remote(nofin, Remote) -> Remote.

store(M = #h3{streams = Streams}, S = #req{id = StreamID}) ->
	M#h3{streams = Streams#{StreamID => S}}.

loop(M, S, Bin, IsFin) ->
	case read(S#req.rd, Bin) of
		{more, Rd} ->
			finish(M, S#req{rd = Rd}, IsFin);
		{header, Type, Len, Rest} ->
			frame_header(M, S, Type, Len, Rest, IsFin);
		{frame, headers, Block, Rd, Rest} ->
			field_section(M, S#req{rd = Rd}, Block, Rest, IsFin);
		{data, Piece, Rd, Rest} ->
			loop(body(M, S, Piece), S#req{rd = Rd, recv_total = S#req.recv_total + byte_size(Piece)},
				Rest, IsFin);
		{skip, _, Rd, Rest} ->
			loop(M, S#req{rd = Rd}, Rest, IsFin)
	end.

body(M, _, <<>>) -> M;
body(M, #req{id = StreamID}, Piece) -> event({data, StreamID, nofin, Piece}, M).

%% Which frame may come next (RFC 9114 4.1, 7.2).
frame_header(M, S = #req{phase = body, recv_total = Total, recv_expected = Expected}, data, Len,
		Rest, IsFin) ->
	case Expected of
		_ when Expected =/= undefined, Total + Len > Expected ->
			stream_error(M, S#req.id, h3_message_error,
				'More DATA than the content-length header announced. (RFC9114 4.1.2)');
		_ ->
			loop(M, S#req{rd = (S#req.rd)#rd{state = {data, Len}}}, Rest, IsFin)
	end;
frame_header(_, #req{phase = headers}, data, _, _, _) ->
	connection_error(h3_frame_unexpected,
		'A request stream must start with a HEADERS frame. (RFC9114 4.1)');
frame_header(M, S = #req{phase = Phase}, headers, Len, Rest, IsFin) when Phase =/= trailers ->
	case Len > max_block(M) of
		true when Phase =:= headers ->
			%% RFC 9114 4.2.2, 10.5.1: answered 431 unread.
			M2 = event({early_error, S#req.id, nofin, 431,
				'The request field section is larger than max_field_section_size. (RFC9114 4.2.2)'}, M),
			store(M2, S#req{phase = discard, remote = remote(IsFin, S#req.remote)});
		true ->
			stream_error(M, S#req.id, h3_excessive_load,
				'The trailer section is larger than max_field_section_size. (RFC9114 4.2.2)');
		false ->
			loop(M, S#req{rd = (S#req.rd)#rd{state = {frame, headers, Len}}}, Rest, IsFin)
	end;
frame_header(_, _, Type, _, _, _) when Type =:= data; Type =:= headers ->
	connection_error(h3_frame_unexpected,
		'Only unknown frames may follow the trailers of a request. (RFC9114 4.1)');
frame_header(M, S, {unknown, _}, Len, Rest, IsFin) ->
	loop(M, S#req{rd = (S#req.rd)#rd{state = {skip, Len}}}, Rest, IsFin);
frame_header(_, _, push_promise, _, _, _) ->
	connection_error(h3_frame_unexpected, 'A client must not send PUSH_PROMISE frames. (RFC9114 7.2.5)');
frame_header(_, _, _, _, _, _) ->
	connection_error(h3_frame_unexpected,
		'CANCEL_PUSH, SETTINGS, GOAWAY and MAX_PUSH_ID frames belong on the control stream. (RFC9114 7.2)').

%% The longest HEADERS frame read: Huffman codes can take up to 30 bits per
%% octet, so an encoded section may be a few times its decoded size.
max_block(#h3{opts = #{max_field_section_size := infinity}}) -> infinity;
max_block(#h3{opts = #{max_field_section_size := Max}}) -> 4 * Max + 1024.

%% A field section: decoded, or held until the encoder stream brings the
%% entries it needs (RFC 9204 2.1.2).
field_section(M, S = #req{id = StreamID, phase = Phase}, Block, Rest, IsFin) ->
	case mustang_qpack:decode_field_section(StreamID, Block, M#h3.decoder) of
		{ok, Fields, Ack, Decoder} ->
			after_fields(fields(decoder_bytes(Ack, M#h3{decoder = Decoder}), S, {ok, Fields},
				ends(Rest, IsFin)), StreamID, Rest, IsFin);
		{too_large, Ack, Decoder} ->
			after_fields(fields(decoder_bytes(Ack, M#h3{decoder = Decoder}), S, too_large,
				ends(Rest, IsFin)), StreamID, Rest, IsFin);
		{blocked, Decoder} ->
			Blocked = case Phase of headers -> headers; body -> trailers end,
			data(M#h3{decoder = Decoder}, S#req{phase = blocked, blocked = Blocked, held = [],
				held_size = 0, held_fin = nofin}, Rest, IsFin);
		{error, {connection_error, Code, Reason}} ->
			connection_error(Code, Reason)
	end.

ends(<<>>, fin) -> fin;
ends(_, _) -> nofin.

%% Reading goes on while the stream is still read.
after_fields(M, StreamID, Rest, IsFin) ->
	case M#h3.streams of
		#{StreamID := S = #req{phase = Phase}} when Phase =:= body; Phase =:= trailers ->
			loop(M, S, Rest, IsFin);
		#{StreamID := S} ->
			data(M, S, Rest, IsFin);
		_ ->
			M
	end.

-spec decoder_bytes(iodata(), #h3{}) -> #h3{}.
decoder_bytes(Bytes, M) ->
	case iolist_to_binary(Bytes) of
		<<>> -> M;
		Bin -> action({send_uni, decoder, Bin}, M)
	end.

%% A held field section is decoded: the data held behind it is read now.
-spec unblocked(#h3{}, stream_id(), {ok, [mustang_qpack:field()]} | too_large) -> #h3{}.
unblocked(M, StreamID, Result) ->
	case M#h3.streams of
		#{StreamID := S = #req{phase = blocked, blocked = Blocked, held = Held, held_fin = IsFin}} ->
			Rest = iolist_to_binary(lists:reverse(Held)),
			Phase = case Blocked of headers -> headers; trailers -> body end,
			S2 = S#req{phase = Phase, held = [], held_size = 0, held_fin = nofin},
			after_fields(fields(M, S2, Result, ends(Rest, IsFin)), StreamID, Rest, IsFin);
		_ ->
			M
	end.

%% The request head (RFC 9114 4.3), or the trailers.
fields(M, S = #req{id = StreamID, phase = headers}, too_large, IsFin) ->
	M2 = event({early_error, StreamID, IsFin, 431,
		'The request field section is larger than max_field_section_size. (RFC9114 4.2.2)'}, M),
	store(M2, S#req{phase = discard});
fields(M = #h3{opts = Opts}, S = #req{id = StreamID, phase = headers}, {ok, Fields}, IsFin) ->
	case mustang_http2_headers:request(Fields,
			#{enable_connect_protocol => maps:get(enable_connect_protocol, Opts)}) of
		{ok, Request = #{method := Method, content_length := Length}} ->
			S2 = S#req{phase = body, head = Method =:= <<"HEAD">>, recv_expected = Length},
			store(event({headers, StreamID, nofin, Request}, M), S2);
		{error, connect_not_supported} ->
			M2 = event({early_error, StreamID, IsFin, 501,
				'The CONNECT method is not supported. (RFC9110 9.3.6)'}, M),
			store(M2, S#req{phase = discard});
		{error, Reason} ->
			stream_error(M, StreamID, h3_message_error, message_error(Reason))
	end;
fields(M, #req{id = StreamID}, too_large, _) ->
	stream_error(M, StreamID, h3_excessive_load,
		'The trailer section is larger than max_field_section_size. (RFC9114 4.2.2)');
fields(M, S = #req{id = StreamID}, {ok, Fields}, _) ->
	case mustang_http2_headers:trailers(Fields) of
		ok -> store(event({trailers, StreamID, Fields}, M), S#req{phase = trailers});
		{error, Reason} -> stream_error(M, StreamID, h3_message_error, message_error(Reason))
	end.

%% The sentence for each rule of mustang_http2_headers, which HTTP/3 shares
%% (RFC 9114 4.2, 4.3 say what RFC 9113 8.2, 8.3 say).
message_error(unknown_pseudo_header) ->
	'A request must not have unknown or response pseudo-header fields. (RFC9114 4.3)';
message_error(duplicate_pseudo_header) ->
	'A pseudo-header field must not appear twice. (RFC9114 4.3)';
message_error(pseudo_header_after_regular) ->
	'Pseudo-header fields must come before the other fields. (RFC9114 4.3)';
message_error(pseudo_header_in_trailers) ->
	'Trailers must not have pseudo-header fields. (RFC9114 4.3)';
message_error(invalid_header_name) ->
	'Field names must be lowercase tokens. (RFC9114 4.2)';
message_error(invalid_header_value) ->
	'A field value must not hold NUL, CR or LF, nor start or end with whitespace. (RFC9114 10.3)';
message_error(connection_specific_header) ->
	'Connection-specific fields must not be sent. (RFC9114 4.2)';
message_error(unexpected_protocol_pseudo_header) ->
	'The :protocol pseudo-header field needs SETTINGS_ENABLE_CONNECT_PROTOCOL. (RFC9220 3)';
message_error(invalid_connect_request) ->
	'A CONNECT request has only :method and :authority. (RFC9114 4.4)';
message_error(missing_pseudo_header) ->
	'A request must have :method, :scheme and :path. (RFC9114 4.3.1)';
message_error(invalid_method) ->
	'The :method must be a token. (RFC9114 4.3.1)';
message_error(invalid_path) ->
	'The :path must be an absolute path, or * for OPTIONS. (RFC9114 4.3.1)';
message_error(missing_authority) ->
	'A request must have :authority or a host header. (RFC9114 4.3.1)';
message_error(invalid_authority) ->
	'The :authority must be a host and port without userinfo. (RFC9114 4.3.1)';
message_error(invalid_host) ->
	'The host header must be a host and port. (RFC9114 4.3.1)';
message_error(host_authority_mismatch) ->
	'The host header must name the same authority as :authority. (RFC9114 4.3.1)';
message_error(invalid_content_length) ->
	'The content-length header must be a number. (RFC9114 4.1.2)';
message_error(_) ->
	'The request is malformed. (RFC9114 4.1.2)'.

%% The end of what came: a stream that ends must end between frames (RFC
%% 9114 7.1), after a whole request (RFC 9114 4.1), with as much DATA as
%% content-length announced (RFC 9114 4.1.2).
finish(M, S, nofin) ->
	store(M, S);
finish(M, S, fin) ->
	case at_boundary(S#req.rd) of
		false ->
			connection_error(h3_frame_error, 'A frame is cut by the end of its stream. (RFC9114 7.1)');
		true ->
			finish_request(M, S)
	end.

finish_request(M, S = #req{id = StreamID, phase = headers}) ->
	stream_error(store(M, S#req{remote = fin}), StreamID, h3_request_incomplete,
		'The request stream ended before the request head. (RFC9114 4.1)');
finish_request(M, S = #req{id = StreamID, recv_total = Total, recv_expected = Expected})
		when Expected =/= undefined, Total =/= Expected ->
	%% A head not yet handed over is taken back: the request never started.
	Events = case M#h3.events of
		[{headers, StreamID, nofin, _} | Rest] -> Rest;
		Rest -> Rest
	end,
	stream_error(store(M#h3{events = Events}, S#req{remote = fin}), StreamID, h3_message_error,
		'The DATA length differs from the content-length header. (RFC9114 4.1.2)');
finish_request(M, S = #req{id = StreamID}) ->
	%% The end is merged into the event just before it when that event is
	%% this stream's head or last piece of body.
	Events = case M#h3.events of
		[{headers, StreamID, nofin, Request} | Rest] -> [{headers, StreamID, fin, Request} | Rest];
		[{data, StreamID, nofin, Piece} | Rest] -> [{data, StreamID, fin, Piece} | Rest];
		Rest -> [{data, StreamID, fin, <<>>} | Rest]
	end,
	store(M#h3{events = Events}, S#req{remote = fin}).

%% A stream error (RFC 9114 8): both directions of the stream are closed
%% with Code (RESET_STREAM for ours, STOP_SENDING for the peer's while it
%% still sends), a QPACK Stream Cancellation tells the peer's encoder the
%% stream's sections will not be read (RFC 9204 4.4.2), and the stream is
%% forgotten.
-spec stream_error(#h3{}, stream_id(), mustang_http3_frame:error_code(), atom()) -> #h3{}.
stream_error(M, StreamID, Code, Reason) ->
	event({stream_error, StreamID, Code, Reason}, close(M, StreamID, Code, Code)).

%% Closes what is still open of a stream (RESET_STREAM with SendCode,
%% STOP_SENDING with RecvCode, none when the peer reset its side, and a QPACK
%% Stream Cancellation), then forgets it.
-spec close(#h3{}, stream_id() | #req{}, mustang_http3_frame:error_code(),
	mustang_http3_frame:error_code() | none) -> #h3{}.
close(M, #req{id = StreamID, local = Local, remote = Remote}, SendCode, RecvCode) ->
	M2 = case Local of
		fin -> M;
		_ -> action({reset_stream, StreamID, SendCode}, M)
	end,
	M3 = case Remote of
		fin ->
			M2;
		open ->
			{Bytes, Decoder} = mustang_qpack:cancel_stream(StreamID, M2#h3.decoder),
			M2b = case RecvCode of
				none -> M2;
				_ -> action({stop_sending, StreamID, RecvCode}, M2)
			end,
			decoder_bytes(Bytes, M2b#h3{decoder = Decoder})
	end,
	forget(M3, StreamID);
close(M, StreamID, SendCode, RecvCode) ->
	case M#h3.streams of
		#{StreamID := S = #req{}} -> close(M, S, SendCode, RecvCode);
		_ -> M
	end.

-spec forget(#h3{}, stream_id()) -> #h3{}.
forget(M = #h3{streams = Streams}, StreamID) ->
	M#h3{streams = maps:remove(StreamID, Streams)}.

%% Responses.

%% A response part for a stream (see mustang_http3_machine:send/4).
-spec send(#h3{}, stream_id(), mustang_http3_machine:part(), binary()) -> #h3{}.
send(M, StreamID, Part, Date) ->
	case M#h3.streams of
		#{StreamID := S = #req{}} -> send_part(M, S, Part, Date);
		_ -> M
	end.

send_part(M, #req{id = StreamID, local = idle}, {inform, 101, _}, _) ->
	%% HTTP/3 has no Upgrade and no 101 (RFC 9114 4.5).
	event({ignored, StreamID, inform, idle}, M);
send_part(M, S = #req{local = idle}, {inform, Status, Headers}, _) ->
	{M2, Frame} = headers_frame(M, S, mustang_http2_headers:informational(Status, Headers)),
	action({send, S#req.id, Frame, nofin}, M2);
send_part(M, S = #req{local = idle, head = Head}, {response, Status, Headers0, Body}, Date) ->
	Length = case Body of
		{sendfile, _, L, _} -> L;
		_ -> iolist_size(Body)
	end,
	NoBodyStatus = mustang_http1_resp:no_body_status(Status),
	Headers = case NoBodyStatus of
		true -> maps:remove(<<"content-length">>, Headers0);
		false -> Headers0#{<<"content-length">> => integer_to_binary(Length)}
	end,
	S2 = S#req{local = fin},
	{M2, Frame} = headers_frame(M, S2, mustang_http2_headers:response(Status, Headers, Date)),
	case Head orelse NoBodyStatus orelse Length =:= 0 of
		true -> action({send, S#req.id, Frame, fin}, M2);
		false -> body_actions(M2, S#req.id, Frame, fin, Body)
	end;
send_part(M, S = #req{local = idle, head = Head}, {headers, Status, Headers}, Date) ->
	Fin = case Head orelse mustang_http1_resp:no_body_status(Status) of
		true -> fin;
		false -> nofin
	end,
	S2 = S#req{local = case Fin of fin -> fin; nofin -> headers end},
	{M2, Frame} = headers_frame(M, S2, mustang_http2_headers:response(Status, Headers, Date)),
	action({send, S#req.id, Frame, Fin}, M2);
send_part(M, S = #req{local = headers}, {data, IsFin, Body}, _) ->
	S2 = case IsFin of
		fin -> S#req{local = fin};
		nofin -> S
	end,
	body_actions(store(M, S2), S#req.id, [], IsFin, Body);
send_part(M, S = #req{local = headers}, {trailers, Trailers}, _) ->
	{M2, Frame} = headers_frame(M, S#req{local = fin}, mustang_http2_headers:trailer_fields(Trailers)),
	action({send, S#req.id, Frame, fin}, M2);
send_part(M, #req{head = true}, _, _) ->
	M;
send_part(M, #req{id = StreamID, local = Local}, Part, _) ->
	event({ignored, StreamID, element(1, Part), Local}, M).

%% DATA frames after Prefix (a HEADERS frame or nothing). A file is sent by
%% the caller after the DATA frame header.
body_actions(M, StreamID, Prefix, IsFin, {sendfile, _, 0, _}) ->
	send_or_skip(M, StreamID, Prefix, IsFin);
body_actions(M, StreamID, Prefix, IsFin, {sendfile, Offset, Length, Path}) ->
	M2 = action({send, StreamID, [Prefix, mustang_http3_frame:data_header(Length)], nofin}, M),
	action({sendfile, StreamID, Offset, Length, Path, IsFin}, M2);
body_actions(M, StreamID, Prefix, IsFin, Body) ->
	case iolist_size(Body) of
		0 -> send_or_skip(M, StreamID, Prefix, IsFin);
		_ -> action({send, StreamID, [Prefix, mustang_http3_frame:data(Body)], IsFin}, M)
	end.

send_or_skip(M, _, [], nofin) -> M;
send_or_skip(M, StreamID, Prefix, IsFin) -> action({send, StreamID, Prefix, IsFin}, M).

%% A HEADERS frame from a field list; the QPACK encoder's instructions, if
%% any, go on our encoder stream. The stream is stored as given.
headers_frame(M = #h3{encoder = Encoder}, S = #req{id = StreamID}, Fields0) ->
	Fields = [{Name, iolist_to_binary(Value)} || {Name, Value} <- Fields0],
	{Block, Instructions, Encoder2} = mustang_qpack:encode_field_section(StreamID, Fields, Encoder),
	M2 = case iolist_size(Instructions) of
		0 -> M#h3{encoder = Encoder2};
		_ -> action({send_uni, encoder, Instructions}, M#h3{encoder = Encoder2})
	end,
	{store(M2, S), mustang_http3_frame:headers(Block)}.

%% A response for a request that is not processed (the early_error event).
%% A request still coming is not read (STOP_SENDING H3_NO_ERROR, RFC 9114
%% 4.1), and the stream is forgotten.
-spec early_response(#h3{}, stream_id(), fin(), mustang_req:status(), mustang_req:headers(),
	iodata(), binary()) -> #h3{}.
early_response(M, StreamID, _IsFin, Status, Headers, Body, Date) ->
	case M#h3.streams of
		#{StreamID := S = #req{local = idle}} ->
			M2 = send_part(M, S, {response, Status, Headers, Body}, Date),
			close(M2, StreamID, h3_no_error, h3_no_error);
		_ ->
			M
	end.
