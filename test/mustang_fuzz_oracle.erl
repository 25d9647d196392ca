%% What fuzz_SUITE checks on the bytes the server sends back: pure functions,
%% no sockets. Each protocol has its own strict reader of the server's side,
%% written here without the server's codecs, except for HTTP/2 where the
%% frames and HPACK blocks are read with mustang_http2_frame and
%% mustang_hpack (themselves checked against h2spec, curl, nghttp and
%% python-h2 in http2_SUITE).
%%
%% HTTP/1.1: http1_parse(Bytes, Closed) reads responses (status line,
%% header lines, body by content-length, chunked or the close), and stops at
%% a 101 (the rest is in the new protocol).
%%
%% HTTP/2: h2_init/0 and h2_feed/2 read the server's frames as they arrive:
%% SETTINGS first, header blocks decoded with one HPACK context, response
%% fields valid (:status first and alone, lowercase names, no
%% connection-specific field), DATA only after a final response and before
%% the stream ended, no INTERNAL_ERROR. h2_completion/2 gives the bytes that
%% complete the last frame of what a client sends, so that the server never
%% waits for the rest of a frame.
%%
%% Websocket: ws_init/1 and ws_feed/2 read the server's frames (unmasked,
%% no reserved bits or opcodes, control frames whole and short, minimal
%% lengths, continuation in order, text and close reasons in UTF-8, valid
%% close codes). ws_model/2 is an independent model of a Websocket echo
%% server (ws_echo_h) reading the client's bytes: the messages it must send
%% back and how the connection must end. ws_completion/2 completes the last
%% frame of the client's bytes.
-module(mustang_fuzz_oracle).

%% HTTP/1.1.
-export([http1_parse/2]).
-export([http1_parse/3]).

%% HTTP/2.
-export([h2_init/0]).
-export([h2_feed/2]).
-export([h2_completion/2]).

%% Websocket.
-export([ws_init/1]).
-export([ws_feed/2]).
-export([ws_model/2]).
-export([ws_completion/2]).
-export([ws_accept/1]).
-export([utf8/2]).

%% HTTP/1.1.

%% Bytes a server sent on an HTTP/1.1 connection; Closed: the server closed
%% the connection after them. Returns {ok, Responses, Tail} or {error, Why}.
%% Responses are #{status, headers, body} in order, interim (1xx) ones
%% included. Tail:
%%   <<>>                       all bytes are whole responses
%%   {more, Bytes}              the last response is not whole yet (only
%%                              when not Closed)
%%   {switch, Protocol, Rest}   the server switched to Protocol: after a 101
%%                              (websocket or h2c), or from the first byte
%%                              (h2, HTTP/2 by prior knowledge)
http1_parse(Bytes, Closed) ->
	http1_parse(Bytes, Closed, false).

%% Head: the client may have sent HEAD requests. A response to HEAD has the
%% headers of a body but no body: where a body does not fit, the response
%% is then read again without one.
http1_parse(<<>>, _, _) ->
	{ok, [], <<>>};
http1_parse(Bytes = <<"HTTP/", _/bits>>, Closed, Head) ->
	responses(Bytes, #{closed => Closed, head => Head}, []);
http1_parse(Bytes, false, _) when byte_size(Bytes) < 5 ->
	case binary:longest_common_prefix([Bytes, <<"HTTP/">>]) =:= byte_size(Bytes) of
		true -> {ok, [], {more, Bytes}};
		false -> {ok, [], {switch, h2, Bytes}}
	end;
http1_parse(Bytes, _, _) ->
	{ok, [], {switch, h2, Bytes}}.

%% Read: #{closed, head}, the arguments of http1_parse/3.
responses(<<>>, _, Acc) ->
	{ok, lists:reverse(Acc), <<>>};
responses(Bytes, Read = #{closed := Closed}, Acc) ->
	case binary:match(Bytes, <<"\r\n\r\n">>) of
		nomatch when Closed ->
			{error, {incomplete_head, Bytes}};
		nomatch ->
			case binary:match(Bytes, [<<"\n">>]) of
				{Pos, _} when Pos > 0 -> check_status_line_prefix(Bytes, Acc);
				_ -> {ok, lists:reverse(Acc), {more, Bytes}}
			end;
		{Pos, 4} ->
			<<Head:Pos/binary, _:4/binary, Rest/bits>> = Bytes,
			case head(Head) of
				{ok, Resp} -> body(Resp, Rest, Read, Acc);
				Error -> Error
			end
	end.

%% The status line is there although the head is not whole: check it now,
%% so that garbage is not waited for.
check_status_line_prefix(Bytes, Acc) ->
	[Line | _] = binary:split(Bytes, <<"\r\n">>),
	case binary:match(Line, <<"\n">>) =:= nomatch andalso status_line(Line) of
		{ok, _} -> {ok, lists:reverse(Acc), {more, Bytes}};
		_ -> {error, {bad_status_line, Line}}
	end.

head(Head) ->
	[StatusLine | Lines] = binary:split(Head, <<"\r\n">>, [global]),
	case status_line(StatusLine) of
		{ok, Status} ->
			case header_lines(Lines, []) of
				{ok, Headers} -> check_framing(#{status => Status, headers => Headers});
				Error -> Error
			end;
		Error ->
			Error
	end.

status_line(<<"HTTP/1.1 ", D1, D2, D3, " ", Reason/bits>>)
		when D1 >= $1, D1 =< $5, D2 >= $0, D2 =< $9, D3 >= $0, D3 =< $9 ->
	case is_text(Reason) of
		true -> {ok, (D1 - $0) * 100 + (D2 - $0) * 10 + D3 - $0};
		false -> {error, {bad_reason_phrase, Reason}}
	end;
status_line(Line) ->
	{error, {bad_status_line, Line}}.

header_lines([], Acc) ->
	{ok, lists:reverse(Acc)};
header_lines([Line | Rest], Acc) ->
	case binary:split(Line, <<":">>) of
		[Name, Value0] ->
			Value = string:trim(Value0, both, " \t"),
			case is_token(Name) andalso is_text(Value) of
				true -> header_lines(Rest, [{string:lowercase(Name), Value} | Acc]);
				false -> {error, {bad_header_line, Line}}
			end;
		_ ->
			{error, {bad_header_line, Line}}
	end.

is_token(<<>>) -> false;
is_token(Bin) -> lists:all(fun is_tchar/1, binary_to_list(Bin)).

is_tchar(C) when C >= $a, C =< $z; C >= $A, C =< $Z; C >= $0, C =< $9 -> true;
is_tchar(C) -> lists:member(C, "!#$%&'*+-.^_`|~").

%% Field values and reason phrases: tab, space, visible and obs-text bytes.
is_text(Bin) ->
	lists:all(fun(C) -> C =:= $\t orelse (C >= $\s andalso C =/= 127) end, binary_to_list(Bin)).

%% RFC 9110 8.6, RFC 9112 6.1, 6.2: one content-length of digits, no
%% content-length with transfer-encoding, neither on 1xx and 204.
check_framing(Resp = #{status := Status, headers := Headers}) ->
	CLs = proplists:get_all_values(<<"content-length">>, Headers),
	TEs = proplists:get_all_values(<<"transfer-encoding">>, Headers),
	NoBody = Status < 200 orelse Status =:= 204,
	if
		NoBody, CLs =/= [] orelse TEs =/= [] -> {error, {framing_on_bodyless_status, Resp}};
		CLs =/= [], TEs =/= [] -> {error, {content_length_and_transfer_encoding, Resp}};
		length(CLs) > 1 -> {error, {content_length_repeated, Resp}};
		TEs =/= [], TEs =/= [<<"chunked">>] -> {error, {bad_transfer_encoding, Resp}};
		true ->
			case CLs of
				[CL] ->
					case CL =/= <<>> andalso lists:all(fun(C) -> C >= $0 andalso C =< $9 end,
							binary_to_list(CL)) of
						true -> {ok, Resp};
						false -> {error, {bad_content_length, Resp}}
					end;
				[] ->
					{ok, Resp}
			end
	end.

body(Resp = #{status := 101, headers := Headers}, Rest, _, Acc) ->
	Protocol = case string:lowercase(proplists:get_value(<<"upgrade">>, Headers, <<>>)) of
		<<"websocket">> -> websocket;
		<<"h2c">> -> h2c;
		Other -> Other
	end,
	{ok, lists:reverse([Resp#{body => <<>>} | Acc]), {switch, Protocol, Rest}};
body(Resp = #{status := Status}, Rest, Read, Acc)
		when Status < 200; Status =:= 204; Status =:= 304 ->
	next(Resp#{body => <<>>}, Rest, Read, Acc);
body(Resp = #{headers := Headers}, Rest, Read = #{closed := Closed, head := Head}, Acc) ->
	Normal = case {proplists:get_value(<<"transfer-encoding">>, Headers),
			proplists:get_value(<<"content-length">>, Headers)} of
		{<<"chunked">>, _} -> chunked(Rest, Closed, []);
		{_, undefined} when Closed -> {ok, Rest, <<>>};
		{_, undefined} -> more;
		{_, CL} -> exact(Rest, binary_to_integer(CL), Closed)
	end,
	Results = [case Normal of
		{ok, Body, Rest2} -> next(Resp#{body => Body}, Rest2, Read, Acc);
		more -> {ok, lists:reverse(Acc), {more, Rest}};
		Error -> Error
	end | [next(Resp#{body => <<>>, head => true}, Rest, Read, Acc) || Head]],
	best(Results).

%% The reading that uses every byte, else one that waits for more, else
%% the first error.
best(Results) ->
	Done = [R || R = {ok, _, Tail} <- Results, not is_tuple(Tail) orelse element(1, Tail) =:= switch],
	More = [R || R = {ok, _, {more, _}} <- Results],
	case {Done, More} of
		{[R | _], _} -> R;
		{[], [R | _]} -> R;
		{[], []} -> hd(Results)
	end.

%% After a response with "connection: close" nothing may follow.
next(Resp = #{headers := Headers}, Rest, Read, Acc) ->
	Close = lists:member(<<"close">>, [string:lowercase(string:trim(T))
		|| V <- proplists:get_all_values(<<"connection">>, Headers),
			T <- binary:split(V, <<",">>, [global])]),
	case Close andalso Rest =/= <<>> of
		true -> {error, {bytes_after_connection_close, Resp, Rest}};
		false -> responses(Rest, Read, [Resp | Acc])
	end.

exact(Bytes, Length, _) when byte_size(Bytes) >= Length ->
	<<Body:Length/binary, Rest/bits>> = Bytes,
	{ok, Body, Rest};
exact(Bytes, Length, true) ->
	{error, {body_cut_short, Length, byte_size(Bytes)}};
exact(_, _, false) ->
	more.

chunked(Bytes, Closed, Acc) ->
	case binary:split(Bytes, <<"\r\n">>) of
		[_] when Closed -> {error, {chunk_cut_short, Bytes}};
		[_] -> more;
		[Line, Rest] ->
			[Hex | _] = binary:split(Line, <<";">>),
			case Hex =/= <<>> andalso lists:all(fun is_hex/1, binary_to_list(Hex)) of
				false ->
					{error, {bad_chunk_size, Line}};
				true ->
					case binary_to_integer(Hex, 16) of
						0 -> trailers(Rest, Closed, iolist_to_binary(lists:reverse(Acc)));
						Size when byte_size(Rest) >= Size + 2 ->
							case Rest of
								<<Chunk:Size/binary, "\r\n", Rest2/bits>> ->
									chunked(Rest2, Closed, [Chunk | Acc]);
								_ ->
									{error, {chunk_without_crlf, Size}}
							end;
						_ when Closed -> {error, {chunk_cut_short, Bytes}};
						_ -> more
					end
			end
	end.

is_hex(C) -> (C >= $0 andalso C =< $9) orelse (C >= $a andalso C =< $f)
	orelse (C >= $A andalso C =< $F).

trailers(<<"\r\n", Rest/bits>>, _, Body) ->
	{ok, Body, Rest};
trailers(Bytes, Closed, Body) ->
	case binary:match(Bytes, <<"\r\n\r\n">>) of
		{Pos, 4} ->
			<<Lines:Pos/binary, _:4/binary, Rest/bits>> = Bytes,
			case header_lines(binary:split(Lines, <<"\r\n">>, [global]), []) of
				{ok, _} -> {ok, Body, Rest};
				Error -> Error
			end;
		nomatch when Closed -> {error, {trailers_cut_short, Bytes}};
		nomatch -> more
	end.

%% HTTP/2.

-record(h2, {
	buf = <<>> :: binary(),
	hpack :: mustang_hpack:state(),
	first = true :: boolean(),
	%% The header block being read: {headers | push_promise, StreamID,
	%% EndStream, Fragments reversed}.
	block = none :: none | {headers | push_promise, non_neg_integer(), boolean(), [binary()]},
	%% Per stream: whether a final response came, whether the stream ended,
	%% whether it was promised.
	streams = #{} :: #{non_neg_integer() => map()}
}).

h2_init() ->
	%% A limit above any table size the server may choose: its encoder
	%% follows our SETTINGS, which the fuzzed frames may change.
	#h2{hpack = mustang_hpack:set_max_size(16#ffffffff, mustang_hpack:init())}.

%% More bytes from the server: {ok, Events, St} or {error, Why}. Events, in
%% order: {settings, Map}, settings_ack, {ping, N}, {ping_ack, N},
%% {goaway, LastStreamID, Code}, {window_update, StreamID, N},
%% {inform, StreamID, Status}, {response, StreamID, Status, Fields, Fin},
%% {trailers, StreamID}, {data, StreamID, Fin, Data},
%% {rst_stream, StreamID, Code}, {push_promise, StreamID, Promised}.
h2_feed(Bytes, St = #h2{buf = Buf}) ->
	h2_frames(St#h2{buf = <<Buf/binary, Bytes/binary>>}, []).

h2_frames(St = #h2{buf = Buf}, Acc) ->
	case mustang_http2_frame:parse(Buf, 16777215) of
		{ok, Frame, Rest} ->
			case h2_frame(Frame, St#h2{buf = Rest}) of
				{ok, Events, St2} -> h2_frames(St2, lists:reverse(Events, Acc));
				{error, Why} -> {error, {Why, Frame}}
			end;
		more ->
			{ok, lists:reverse(Acc), St};
		{more, _} ->
			{ok, lists:reverse(Acc), St};
		{ignore, _} ->
			{error, {unknown_frame_type, Buf}};
		Error ->
			{error, {invalid_frame, Error, Buf}}
	end.

%% RFC 9113 3.4: the server's preface is a SETTINGS frame.
h2_frame({settings, Settings}, St = #h2{first = true}) ->
	{ok, [{settings, Settings}], St#h2{first = false}};
h2_frame(_, #h2{first = true}) ->
	{error, server_preface_not_settings};
%% RFC 9113 6.10: nothing but CONTINUATION inside a header block.
h2_frame({continuation, Sid, HeadFin, Fragment}, St = #h2{block = {Kind, Sid, Fin, Frags}}) ->
	Block = {Kind, Sid, Fin, [Fragment | Frags]},
	case HeadFin of
		head_fin -> end_block(St#h2{block = Block});
		head_nofin -> {ok, [], St#h2{block = Block}}
	end;
h2_frame(_, #h2{block = {_, _, _, _}}) ->
	{error, expected_continuation};
h2_frame({continuation, _, _, _}, _) ->
	{error, continuation_outside_header_block};
h2_frame({headers, Sid, Fin, HeadFin, _, Fragment}, St) ->
	h2_frame({headers, Sid, Fin, HeadFin, Fragment}, St);
h2_frame({headers, Sid, Fin, HeadFin, Fragment}, St) ->
	Stream = stream(Sid, St),
	if
		Sid rem 2 =:= 0, not is_map_key(promised, Stream) -> {error, headers_on_unpromised_even_stream};
		map_get(ended, Stream) -> {error, headers_after_end_stream};
		true ->
			Block = {headers, Sid, Fin =:= fin, [Fragment]},
			case HeadFin of
				head_fin -> end_block(St#h2{block = Block});
				head_nofin -> {ok, [], St#h2{block = Block}}
			end
	end;
h2_frame({push_promise, Sid, HeadFin, Promised, Fragment}, St = #h2{streams = Streams}) ->
	case Promised rem 2 =:= 0 andalso not is_map_key(Promised, Streams) of
		false ->
			{error, bad_promised_stream};
		true ->
			St2 = St#h2{streams = Streams#{Promised => #{final => false, ended => false,
				promised => true}}},
			Block = {push_promise, Sid, false, [Fragment]},
			case HeadFin of
				head_fin -> end_block(St2#h2{block = Block});
				head_nofin -> {ok, [], St2#h2{block = Block}}
			end
	end;
h2_frame({data, Sid, Fin, Data}, St) ->
	case stream(Sid, St) of
		#{ended := true} -> {error, data_after_end_stream};
		#{final := false} -> {error, data_before_response};
		Stream ->
			{ok, [{data, Sid, Fin, Data}], put_stream(Sid, Stream#{ended => Fin =:= fin}, St)}
	end;
h2_frame({rst_stream, _, internal_error}, _) ->
	{error, internal_error};
h2_frame({rst_stream, Sid, Code}, St) ->
	{ok, [{rst_stream, Sid, Code}], put_stream(Sid, (stream(Sid, St))#{ended => true}, St)};
h2_frame({goaway, _, internal_error, _}, _) ->
	{error, internal_error};
h2_frame({goaway, Last, Code, _}, St) ->
	{ok, [{goaway, Last, Code}], St};
h2_frame({settings, Settings}, St) ->
	{ok, [{settings, Settings}], St};
h2_frame(settings_ack, St) ->
	{ok, [settings_ack], St};
h2_frame({ping, N}, St) ->
	{ok, [{ping, N}], St};
h2_frame({ping_ack, N}, St) ->
	{ok, [{ping_ack, N}], St};
h2_frame({window_update, N}, St) ->
	{ok, [{window_update, 0, N}], St};
h2_frame({window_update, Sid, N}, St) ->
	{ok, [{window_update, Sid, N}], St};
h2_frame({priority, _, _, _, _}, St) ->
	{ok, [], St}.

stream(Sid, #h2{streams = Streams}) ->
	maps:get(Sid, Streams, #{final => false, ended => false}).

put_stream(Sid, Stream, St = #h2{streams = Streams}) ->
	St#h2{streams = Streams#{Sid => Stream}}.

end_block(St = #h2{block = {Kind, Sid, Fin, Frags}, hpack = HPack}) ->
	case mustang_hpack:decode(iolist_to_binary(lists:reverse(Frags)), HPack) of
		{ok, Fields, HPack2} ->
			St2 = St#h2{block = none, hpack = HPack2},
			case Kind of
				push_promise -> promise_fields(Sid, Fields, St2);
				headers -> response_fields(Sid, Fin, Fields, St2)
			end;
		Error ->
			{error, {hpack, Error}}
	end.

promise_fields(Sid, Fields, St) ->
	Pseudo = lists:sort([N || {N = <<$:, _/bits>>, _} <- Fields]),
	case Pseudo =:= [<<":authority">>, <<":method">>, <<":path">>, <<":scheme">>]
			andalso regular_fields_ok(Fields) of
		true -> {ok, [{push_promise, Sid}], St};
		false -> {error, {bad_promise_fields, Fields}}
	end.

response_fields(Sid, Fin, Fields, St) ->
	Stream = stream(Sid, St),
	case {Stream, Fields} of
		{#{final := true}, _} ->
			%% Trailers (RFC 9113 8.1): end the stream, no pseudo-header.
			case Fin andalso regular_fields_ok(Fields) of
				true -> {ok, [{trailers, Sid}], put_stream(Sid, Stream#{ended => true}, St)};
				false -> {error, {bad_trailers, Fields}}
			end;
		{_, [{<<":status">>, S = <<D1, _, _>>} | Rest]} when D1 >= $1, D1 =< $5 ->
			Status = binary_to_integer(S),
			case regular_fields_ok(Rest) of
				false ->
					{error, {bad_response_fields, Fields}};
				true when Status =:= 101 ->
					{error, {status_101_over_http2, Fields}};
				true when Status < 200, Fin ->
					{error, {informational_response_ends_stream, Fields}};
				true when Status < 200 ->
					{ok, [{inform, Sid, Status}], St};
				true ->
					{ok, [{response, Sid, Status, Rest, Fin}],
						put_stream(Sid, Stream#{final => true, ended => Fin}, St)}
			end;
		_ ->
			{error, {bad_response_fields, Fields}}
	end.

%% RFC 9113 8.2: lowercase names, no pseudo-header among them, no
%% connection-specific field.
regular_fields_ok(Fields) ->
	lists:all(fun
		({<<$:, _/bits>>, _}) -> false;
		({N, V}) ->
			N =:= string:lowercase(N) andalso is_token(N) andalso is_text(V)
				andalso not lists:member(N, [<<"connection">>, <<"keep-alive">>,
					<<"proxy-connection">>, <<"transfer-encoding">>, <<"upgrade">>])
				andalso (N =/= <<"te">> orelse V =:= <<"trailers">>)
	end, Fields).

%% The zero bytes that complete the last frame of Bytes (a client's frames,
%% starting at a frame boundary), unless the server refuses that frame on
%% its length alone (above MaxFrameSize).
h2_completion(<<Len:24, _:48, _/bits>>, Max) when Len > Max ->
	<<>>;
h2_completion(<<Len:24, _:48, Rest/bits>>, Max) when byte_size(Rest) >= Len ->
	<<_:Len/binary, Next/bits>> = Rest,
	h2_completion(Next, Max);
h2_completion(<<Len:24, _:48, Rest/bits>>, _) ->
	zeros(Len - byte_size(Rest));
h2_completion(<<>>, _) ->
	<<>>;
h2_completion(Partial, Max) ->
	Pad = zeros(9 - byte_size(Partial)),
	<<Pad/binary, (h2_completion(<<Partial/binary, Pad/binary>>, Max))/binary>>.

zeros(N) -> binary:copy(<<0>>, N).

%% Websocket: the server's frames.

-record(ws, {
	buf = <<>> :: binary(),
	deflate :: boolean(),
	%% The data message being read: {Type, Compressed, Pieces reversed}.
	msg = none :: none | {text | binary, boolean(), [binary()]},
	closed = false :: boolean()
}).

%% Deflate: permessage-deflate was negotiated (RSV1 may start a message).
ws_init(Deflate) ->
	#ws{deflate = Deflate}.

%% More bytes from the server: {ok, Messages, St} or {error, Why}. Messages:
%% {text, Bin}, {binary, Bin}, {compressed, Type, Bin} (not inflated),
%% {ping, Bin}, {pong, Bin}, {close, Code | none, Reason}.
ws_feed(Bytes, St = #ws{buf = Buf}) ->
	ws_frames(St#ws{buf = <<Buf/binary, Bytes/binary>>}, []).

ws_frames(St = #ws{buf = <<>>}, Acc) ->
	{ok, lists:reverse(Acc), St};
ws_frames(#ws{closed = true, buf = Buf}, _) ->
	{error, {bytes_after_close_frame, Buf}};
ws_frames(St = #ws{buf = Buf}, Acc) ->
	case ws_header(Buf) of
		more ->
			{ok, lists:reverse(Acc), St};
		{ok, _, _, _, 1, _, _} ->
			{error, {masked_server_frame, Buf}};
		{ok, Fin, Rsv, Op, 0, Len, HeaderLen} ->
			case Buf of
				<<_:HeaderLen/binary, Payload:Len/binary, Rest/bits>> ->
					case ws_server_frame(Fin, Rsv, Op, Payload, St#ws{buf = Rest}) of
						{ok, Msgs, St2} -> ws_frames(St2, lists:reverse(Msgs, Acc));
						{error, Why} -> {error, {Why, Buf}}
					end;
				_ ->
					{ok, lists:reverse(Acc), St}
			end;
		{error, Why} ->
			{error, {Why, Buf}}
	end.

%% {ok, Fin, Rsv, Opcode, Mask, PayloadLength, HeaderLength}, more, or
%% {error, Why} for a length not on the minimal number of bytes (RFC 6455
%% 5.2) or with the top bit set.
ws_header(<<Fin:1, Rsv:3, Op:4, Mask:1, Len7:7, Rest/bits>>) ->
	KeyLen = 4 * Mask,
	case {Len7, Rest} of
		{126, <<Len:16, _:KeyLen/binary, _/bits>>} when Len < 126 -> {error, non_minimal_length};
		{126, <<Len:16, _:KeyLen/binary, _/bits>>} -> {ok, Fin, Rsv, Op, Mask, Len, 4 + KeyLen};
		{127, <<1:1, _/bits>>} -> {error, length_top_bit_set};
		{127, <<Len:64, _:KeyLen/binary, _/bits>>} when Len < 16#10000 -> {error, non_minimal_length};
		{127, <<Len:64, _:KeyLen/binary, _/bits>>} -> {ok, Fin, Rsv, Op, Mask, Len, 10 + KeyLen};
		{_, <<_:KeyLen/binary, _/bits>>} when Len7 < 126 -> {ok, Fin, Rsv, Op, Mask, Len7, 2 + KeyLen};
		_ -> more
	end;
ws_header(_) ->
	more.

ws_server_frame(_, Rsv, _, _, _) when Rsv band 3 =/= 0 ->
	{error, rsv2_rsv3_set};
ws_server_frame(_, _, Op, _, _) when Op >= 3, Op =< 7; Op >= 11 ->
	{error, reserved_opcode};
ws_server_frame(Fin, Rsv, Op, Payload, _) when Op >= 8, Fin =:= 0; Op >= 8, Rsv =/= 0;
		Op >= 8, byte_size(Payload) > 125 ->
	{error, bad_control_frame};
ws_server_frame(_, _, 9, Payload, St) ->
	{ok, [{ping, Payload}], St};
ws_server_frame(_, _, 10, Payload, St) ->
	{ok, [{pong, Payload}], St};
ws_server_frame(_, _, 8, Payload, St) ->
	case Payload of
		<<>> ->
			{ok, [{close, none, <<>>}], St#ws{closed = true}};
		<<Code:16, Reason/bits>> ->
			case is_close_code(Code) andalso utf8(Reason, accept) =:= {ok, accept} of
				true -> {ok, [{close, Code, Reason}], St#ws{closed = true}};
				false -> {error, bad_close_payload}
			end;
		_ ->
			{error, bad_close_payload}
	end;
ws_server_frame(_, _, 0, _, #ws{msg = none}) ->
	{error, continuation_outside_message};
ws_server_frame(_, Rsv, 0, _, _) when Rsv =/= 0 ->
	{error, rsv1_on_continuation};
ws_server_frame(Fin, _, 0, Payload, St = #ws{msg = {Type, Compressed, Pieces}}) ->
	ws_data(Fin, St#ws{msg = {Type, Compressed, [Payload | Pieces]}});
ws_server_frame(_, _, _, _, #ws{msg = {_, _, _}}) ->
	{error, message_inside_message};
ws_server_frame(_, 4, _, _, #ws{deflate = false}) ->
	{error, rsv1_without_deflate};
ws_server_frame(Fin, Rsv, Op, Payload, St) ->
	Type = case Op of 1 -> text; 2 -> binary end,
	ws_data(Fin, St#ws{msg = {Type, Rsv =:= 4, [Payload]}}).

ws_data(0, St) ->
	{ok, [], St};
ws_data(1, St = #ws{msg = {Type, Compressed, Pieces}}) ->
	Message = iolist_to_binary(lists:reverse(Pieces)),
	St2 = St#ws{msg = none},
	case {Type, Compressed} of
		{_, true} ->
			{ok, [{compressed, Type, Message}], St2};
		{text, false} ->
			case utf8(Message, accept) of
				{ok, accept} -> {ok, [{text, Message}], St2};
				_ -> {error, text_not_utf8}
			end;
		{binary, false} ->
			{ok, [{binary, Message}], St2}
	end.

%% Close codes an endpoint may send (RFC 6455 7.4.1 and the IANA registry:
%% 1004-1006 and 1015 are reserved, 1016-2999 unassigned).
is_close_code(Code) ->
	(Code >= 1000 andalso Code =< 1003) orelse (Code >= 1007 andalso Code =< 1014)
		orelse (Code >= 3000 andalso Code =< 4999).

%% RFC 6455 4.2.2: the Sec-WebSocket-Accept for a key.
ws_accept(Key) ->
	base64:encode(crypto:hash(sha, [Key, <<"258EAFA5-E914-47DA-95CA-C5AB0DC85B11">>])).

%% Websocket: the model of the echo server.

-record(m, {
	max :: non_neg_integer(),
	%% The data message being read: {Type, Size, Pieces reversed, UTF-8 state}.
	msg = none :: none | {text | binary, non_neg_integer(), [binary()], utf8_state()}
}).

%% What a Websocket echo server with max_frame_size Max and no extension
%% sends back for a client's bytes: {Messages, End}. Messages as ws_feed/2
%% gives them (the echoes and pongs). End:
%%   open           every byte was read, nothing closed the connection
%%   {close, Codes} the server closes with one of Codes: the close code of
%%                  the client's close frame (1000 for an empty one), 1002
%%                  for a protocol error, 1007 for bad UTF-8, 1009 for a
%%                  message longer than Max (RFC 6455 7.4.1). A frame that
%%                  breaks several rules gives all their codes: which one
%%                  the server checks first is its choice.
%%   {more, N}      the last frame needs N more bytes; the server waits
ws_model(Bytes, Max) ->
	model(Bytes, #m{max = Max}, []).

model(<<>>, _, Out) ->
	{lists:reverse(Out), open};
model(Bytes, St, Out) ->
	case model_header(Bytes) of
		{more, N} ->
			{lists:reverse(Out), {more, N}};
		{ok, Fin, Rsv, Op, Mask, Len, HeaderLen, LengthOk} ->
			case frame_errors(Fin, Rsv, Op, Mask, Len, LengthOk, St) of
				[] when byte_size(Bytes) < HeaderLen + Len ->
					{lists:reverse(Out), {more, HeaderLen + Len - byte_size(Bytes)}};
				[] ->
					<<Key:HeaderLen/binary, Masked:Len/binary, Rest/bits>> = Bytes,
					Payload = mustang_fuzz_gen:ws_mask(Masked, binary:part(Key, HeaderLen - 4, 4)),
					model_frame(Fin, Op, Payload, Rest, St, Out);
				Codes ->
					{lists:reverse(Out), {close, Codes}}
			end
	end.

%% The whole header, however the server reads it: {more, N} until then.
%% LengthOk: the length is on the minimal number of bytes, top bit clear.
model_header(<<Fin:1, Rsv:3, Op:4, Mask:1, Len7:7, Rest/bits>>) ->
	ExtLen = case Len7 of 126 -> 2; 127 -> 8; _ -> 0 end,
	HeaderLen = 2 + ExtLen + 4 * Mask,
	{Len, LengthOk} = case Rest of
		_ when byte_size(Rest) < ExtLen + 4 * Mask -> {more, false};
		<<L:16, _/bits>> when Len7 =:= 126 -> {L, L >= 126};
		<<Top:1, L:63, _/bits>> when Len7 =:= 127 -> {L, Top =:= 0 andalso L >= 16#10000};
		_ -> {Len7, true}
	end,
	case Len of
		more -> {more, HeaderLen - 2 - byte_size(Rest)};
		_ -> {ok, Fin, Rsv, Op, Mask, Len, HeaderLen, LengthOk}
	end;
model_header(Bytes) ->
	{more, 2 - byte_size(Bytes)}.

%% The codes of the rules a frame header breaks (RFC 6455 5.1-5.5, 7.4.1).
frame_errors(Fin, Rsv, Op, Mask, Len, LengthOk, #m{max = Max, msg = Msg}) ->
	Control = Op >= 8,
	Size = case Msg of
		{_, S, _, _} -> S;
		none -> 0
	end,
	ProtocolErrors = [Why || {Why, true} <- [
		{rsv, Rsv =/= 0},
		{reserved_opcode, (Op >= 3 andalso Op =< 7) orelse Op >= 11},
		{fragmented_control, Control andalso Fin =:= 0},
		{long_control, Control andalso Len > 125},
		{unmasked, Mask =:= 0},
		{length_encoding, not LengthOk},
		{continuation_outside_message, Op =:= 0 andalso Msg =:= none},
		{message_inside_message, (Op =:= 1 orelse Op =:= 2) andalso Msg =/= none}
	]],
	TooBig = not Control andalso Size + Len > Max,
	[1002 || ProtocolErrors =/= []] ++ [1009 || TooBig].

model_frame(_, 9, Payload, Rest, St, Out) ->
	model(Rest, St, [{pong, Payload} | Out]);
model_frame(_, 10, _, Rest, St, Out) ->
	model(Rest, St, Out);
model_frame(_, 8, Payload, _, _, Out) ->
	End = case Payload of
		<<>> -> [1000];
		<<_>> -> [1002];
		<<Code:16, Reason/bits>> ->
			[1002 || not is_close_code(Code)] ++ [1007 || utf8(Reason, accept) =/= {ok, accept}]
				++ [Code || is_close_code(Code), utf8(Reason, accept) =:= {ok, accept}]
	end,
	{lists:reverse(Out), {close, End}};
model_frame(Fin, Op, Payload, Rest, St = #m{msg = Msg}, Out) ->
	{Type, Size, Pieces, Utf8} = case {Op, Msg} of
		{0, _} -> Msg;
		{1, none} -> {text, 0, [], accept};
		{2, none} -> {binary, 0, [], accept}
	end,
	Utf8b = case Type of
		text -> utf8(Payload, Utf8);
		binary -> {ok, Utf8}
	end,
	case {Utf8b, Fin} of
		{error, _} ->
			{lists:reverse(Out), {close, [1007]}};
		{{ok, accept}, 1} ->
			Message = iolist_to_binary(lists:reverse([Payload | Pieces])),
			model(Rest, St#m{msg = none}, [{Type, Message} | Out]);
		{{ok, _}, 1} ->
			{lists:reverse(Out), {close, [1007]}};
		{{ok, Utf8c}, 0} ->
			model(Rest, St#m{msg = {Type, Size + byte_size(Payload), [Payload | Pieces], Utf8c}}, Out)
	end.

%% The zero bytes that complete the last frame of a client's bytes, so that
%% the server does not wait for them (none when the server refuses that
%% frame on its header).
ws_completion(Bytes, Max) ->
	case ws_model(Bytes, Max) of
		{_, {more, N}} -> <<(zeros(N))/binary, (ws_completion(<<Bytes/binary, (zeros(N))/binary>>, Max))/binary>>;
		_ -> <<>>
	end.

%% UTF-8 (RFC 3629 4), a byte at a time: accept between characters, or
%% {Left, Low, High}: Left more bytes, the next one within Low..High. Fails
%% at the first byte that no valid text can have there.
-type utf8_state() :: accept | {1..3, byte(), byte()}.

-spec utf8(binary(), utf8_state()) -> {ok, utf8_state()} | error.
utf8(<<>>, State) ->
	{ok, State};
utf8(<<C, Rest/bits>>, accept) when C < 16#80 ->
	utf8(Rest, accept);
utf8(<<C, Rest/bits>>, accept) ->
	if
		C >= 16#C2, C =< 16#DF -> utf8(Rest, {1, 16#80, 16#BF});
		C =:= 16#E0 -> utf8(Rest, {2, 16#A0, 16#BF});
		C >= 16#E1, C =< 16#EC; C =:= 16#EE; C =:= 16#EF -> utf8(Rest, {2, 16#80, 16#BF});
		C =:= 16#ED -> utf8(Rest, {2, 16#80, 16#9F});
		C =:= 16#F0 -> utf8(Rest, {3, 16#90, 16#BF});
		C >= 16#F1, C =< 16#F3 -> utf8(Rest, {3, 16#80, 16#BF});
		C =:= 16#F4 -> utf8(Rest, {3, 16#80, 16#8F});
		true -> error
	end;
utf8(<<C, Rest/bits>>, {Left, Low, High}) when C >= Low, C =< High ->
	case Left of
		1 -> utf8(Rest, accept);
		_ -> utf8(Rest, {Left - 1, 16#80, 16#BF})
	end;
utf8(_, _) ->
	error.
