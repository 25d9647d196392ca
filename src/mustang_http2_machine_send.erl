%% The stream side of mustang_http2_machine (a part of it, split off for
%% size; pure like it, and below it: it never calls the machine): streams
%% opened, reset and forgotten, response heads, the per-stream send queues
%% served as the flow-control windows allow, and the limits that hold
%% handlers back. Only mustang_http2_machine calls it. No options of its own (the machine's
%% connection_send_buffer_size, stream_send_buffer_size and read_file).
-module(mustang_http2_machine_send).

-export([send/4]).
-export([early_response/7]).
-export([over_limits/2]).
-export([hold/2]).
-export([flush_streams/1]).
-export([can_push/1]).
-export([push/3]).
-export([open_stream/4]).
-export([rst/3]).
-export([stream_error/4]).
-export([forget_stream/2]).

-include("mustang_http2_machine.hrl").

-type stream_id() :: mustang_http2_frame:stream_id().
-type code() :: mustang_http2_frame:error_code().

out(Data, Size, M = #m{out = Out, out_size = OutSize}) ->
	M#m{out = [Out, Data], out_size = OutSize + Size}.

event(Event, M = #m{events = Events}) ->
	M#m{events = [Event | Events]}.

%% A response for a request that is not processed (the early_error event).
-spec early_response(stream_id(), mustang_http2_frame:fin(), mustang_req:status(),
	mustang_req:headers(), iodata(), binary(), #m{}) -> #m{}.
early_response(StreamID, IsFin, Status, Headers, Body, Date, M) ->
	BodyBin = iolist_to_binary(Body),
	Fields = mustang_http2_headers:response(Status,
		Headers#{<<"content-length">> => integer_to_binary(byte_size(BodyBin))}, Date),
	{Block, Encoder} = mustang_hpack:encode([{N, iolist_to_binary(V)} || {N, V} <- Fields],
		M#m.encoder),
	MaxFrame = M#m.max_frame_size_sent,
	M2 = case BodyBin of
		<<>> ->
			out(mustang_http2_frame:headers(StreamID, fin, Block, MaxFrame), 64,
				M#m{encoder = Encoder});
		_ ->
			%% Small bodies only (an early error page): sent at once, within
			%% the initial windows.
			out([mustang_http2_frame:headers(StreamID, nofin, Block, MaxFrame),
				data_frames(StreamID, fin, BodyBin, MaxFrame)], 64 + byte_size(BodyBin),
				M#m{encoder = Encoder})
	end,
	case IsFin of
		fin -> M2;
		nofin -> out(mustang_http2_frame:rst_stream(StreamID, no_error), 13, M2)
	end.

%% A response part for a stream (see mustang_http2_machine:send/5).
-spec send(stream_id(), mustang_http2_machine:part(), binary(), #m{}) -> #m{}.
send(StreamID, Part, Date, M = #m{streams = Streams}) ->
	case Streams of
		#{StreamID := Stream} -> send_part(M, Stream, Part, Date);
		_ -> M
	end.

send_part(M, Stream = #stream{local = idle}, {inform, Status, Headers}, _) ->
	send_headers(M, Stream, mustang_http2_headers:informational(Status, Headers), nofin);
send_part(M, Stream = #stream{local = idle, head = Head}, {response, Status, Headers0, Body}, Date) ->
	Length = case Body of
		{sendfile, _, L, _} -> L;
		_ -> iolist_size(Body)
	end,
	NoBody = Head orelse mustang_http1_resp:no_body_status(Status),
	Headers = case mustang_http1_resp:no_body_status(Status) of
		true -> maps:remove(<<"content-length">>, Headers0);
		false -> Headers0#{<<"content-length">> => integer_to_binary(Length)}
	end,
	Fields = mustang_http2_headers:response(Status, Headers, Date),
	case NoBody orelse Length =:= 0 of
		true ->
			send_headers(M, Stream#stream{local = fin}, Fields, fin);
		false ->
			{M2, Stream2} = send_headers_keep(M, Stream#stream{local = fin}, Fields, nofin),
			send_body(M2, Stream2, Body)
	end;
send_part(M, Stream = #stream{local = idle, head = Head}, {headers, Status, Headers}, Date) ->
	Fields = mustang_http2_headers:response(Status, Headers, Date),
	case Head orelse mustang_http1_resp:no_body_status(Status) of
		true -> send_headers(M, Stream#stream{local = fin}, Fields, fin);
		false -> send_headers(M, Stream#stream{local = headers}, Fields, nofin)
	end;
send_part(M, Stream = #stream{local = headers}, {data, IsFin, Data}, _) ->
	Stream2 = case IsFin of
		fin -> Stream#stream{local = fin};
		nofin -> Stream
	end,
	queue_data(M, Stream2, IsFin, Data);
send_part(M, Stream = #stream{local = headers}, {trailers, Trailers}, _) ->
	queue(M, Stream#stream{local = fin}, {trailers, Trailers}, 0);
send_part(M, #stream{head = true}, _, _) ->
	M;
send_part(M, #stream{id = StreamID, local = Local}, Part, _) ->
	event({ignored, StreamID, element(1, Part), Local}, M).

%% A whole response body that the windows allow, with nothing queued on the
%% connection (the common case), goes out at once: the queue would only add
%% copies of the state (about ten per response).
send_body(M = #m{queued = 0, send_window = ConnWindow, max_frame_size_sent = Max, out = Out,
		out_size = OutSize, events = Events},
		Stream = #stream{id = StreamID, send_window = StreamWindow}, Body) when not is_tuple(Body) ->
	Bin = iolist_to_binary(Body),
	Size = byte_size(Bin),
	case Size =< ConnWindow andalso Size =< StreamWindow of
		true ->
			Stream2 = Stream#stream{send_window = StreamWindow - Size},
			%% What out/3 and event/2 do, in one copy of the record.
			M#m{send_window = ConnWindow - Size, streams = (M#m.streams)#{StreamID => Stream2},
				out = [Out, data_frames(StreamID, fin, Bin, Max)], out_size = OutSize + Size,
				events = [{drained, StreamID} | Events]};
		false ->
			queue(M, Stream, {data, fin, Bin}, Size)
	end;
send_body(M, Stream, Body) ->
	queue_data(M, Stream, fin, Body).

send_headers(M, Stream, Fields, IsFin) ->
	{M2, Stream2} = send_headers_keep(M, Stream, Fields, IsFin),
	M3 = M2#m{streams = (M2#m.streams)#{Stream2#stream.id => Stream2}},
	case Stream2 of
		#stream{local = fin, queued = 0} -> event({drained, Stream2#stream.id}, M3);
		_ -> M3
	end.

send_headers_keep(M = #m{encoder = Encoder, max_frame_size_sent = MaxFrame, out = Out,
		out_size = OutSize}, Stream, Fields, IsFin) ->
	{Block, Encoder2} = mustang_hpack:encode([{N, iolist_to_binary(V)} || {N, V} <- Fields], Encoder),
	Frames = mustang_http2_frame:headers(Stream#stream.id, IsFin, Block, MaxFrame),
	%% As out/3 does, in the same copy of the record.
	{M#m{encoder = Encoder2, out = [Out, Frames], out_size = OutSize + 128}, Stream}.

%% Response body data goes out as far as the windows allow; the rest waits
%% in the stream's queue.

-spec over_limits(stream_id(), #m{}) -> boolean().
over_limits(StreamID, M = #m{streams = Streams}) ->
	case Streams of
		#{StreamID := Stream} -> over_limits1(M, Stream);
		_ -> false
	end.

over_limits1(#m{queued = ConnQueued, opts = #{connection_send_buffer_size := ConnMax,
		stream_send_buffer_size := StreamMax}}, #stream{queued = Queued}) ->
	Queued > StreamMax orelse ConnQueued > ConnMax.

-spec hold(stream_id(), #m{}) -> #m{}.
hold(StreamID, M = #m{streams = Streams}) ->
	case Streams of
		#{StreamID := Stream} -> M#m{streams = Streams#{StreamID => Stream#stream{held = true}}};
		_ -> M
	end.

queue_data(M, Stream, IsFin, {sendfile, Offset, Length, Path}) ->
	queue(M, Stream, {sendfile, IsFin, Offset, Length, Path}, Length);
queue_data(M, Stream, IsFin, Data) ->
	Bin = iolist_to_binary(Data),
	queue(M, Stream, {data, IsFin, Bin}, byte_size(Bin)).

queue(M = #m{queued = ConnQueued, sending = Sending}, Stream = #stream{queue = Q, queued = Queued},
		Item, Size) ->
	StreamID = Stream#stream.id,
	Stream2 = Stream#stream{queue = queue:in(Item, Q), queued = Queued + Size},
	Sending2 = case lists:member(StreamID, Sending) of
		true -> Sending;
		false -> Sending ++ [StreamID]
	end,
	M2 = M#m{streams = (M#m.streams)#{StreamID => Stream2}, queued = ConnQueued + Size,
		sending = Sending2},
	flush_streams(M2).

%% Sends queued data of every stream that has some, in turn, as far as the
%% windows allow.
-spec flush_streams(#m{}) -> #m{}.
flush_streams(M = #m{sending = []}) ->
	M#m{blocked_since = undefined};
flush_streams(M = #m{sending = Sending}) ->
	M2 = lists:foldl(fun flush_stream/2, M, Sending),
	%% Held callers are released once their stream's queue and the
	%% connection's are below the limits; streams stay listed while they
	%% have queued data or held callers.
	M3 = lists:foldl(fun release/2, M2#m{sending = []}, M2#m.sending),
	case M3#m.queued of
		0 -> M3#m{blocked_since = undefined};
		_ when M3#m.blocked_since =:= undefined -> M3#m{blocked_since = M3#m.now};
		_ -> M3
	end.

flush_stream(StreamID, M = #m{streams = Streams}) ->
	case Streams of
		#{StreamID := Stream} ->
			case send_queue(M, Stream) of
				{M2, Stream2} ->
					M2#m{streams = (M2#m.streams)#{StreamID => Stream2}};
				{error, M2, Path, Reason} ->
					stream_error(event({sendfile_error, StreamID, Path, Reason}, M2), StreamID,
						internal_error, 'The response body could not be read.')
			end;
		_ ->
			M
	end.

release(StreamID, M = #m{streams = Streams, sending = Sending}) ->
	case Streams of
		#{StreamID := Stream = #stream{held = Held, queue = Q}} ->
			{M2, Stream2} = case Held andalso not over_limits1(M, Stream) of
				true -> {event({release, StreamID}, M), Stream#stream{held = false}};
				false -> {M, Stream}
			end,
			M3 = M2#m{streams = Streams#{StreamID => Stream2}},
			case queue:is_empty(Q) andalso not Stream2#stream.held of
				true -> event({drained, StreamID}, M3);
				false -> M3#m{sending = Sending ++ [StreamID]}
			end;
		_ ->
			M
	end.

send_queue(M, Stream = #stream{queue = Q}) ->
	case queue:out(Q) of
		{empty, _} ->
			{M, Stream};
		{{value, {trailers, Trailers}}, Q2} ->
			{M2, Stream2} = send_headers_keep(M, Stream#stream{queue = Q2},
				mustang_http2_headers:trailer_fields(Trailers), fin),
			send_queue(M2, Stream2);
		{{value, Item}, Q2} ->
			case send_item(M, Stream, Item) of
				{done, M2, Stream2} -> send_queue(M2, Stream2#stream{queue = Q2});
				{partial, M2, Stream2, Item2} -> {M2, Stream2#stream{queue = queue:in_r(Item2, Q2)}};
				{error, Path, Reason} -> {error, M, Path, Reason}
			end
	end.

%% One queued item: sent whole when the windows allow (an empty item only
%% carries END_STREAM), else as much as they allow.
send_item(M, Stream, {data, IsFin, <<>>}) ->
	{done, out(mustang_http2_frame:data(Stream#stream.id, IsFin, <<>>), 9, M), Stream};
send_item(M = #m{send_window = ConnWindow}, Stream = #stream{send_window = StreamWindow}, Item)
		when ConnWindow =< 0; StreamWindow =< 0 ->
	{partial, M, Stream, Item};
send_item(M = #m{send_window = ConnWindow}, Stream = #stream{send_window = StreamWindow},
		{data, IsFin, Bin}) ->
	Size = byte_size(Bin),
	case min(ConnWindow, StreamWindow) of
		Allowed when Allowed >= Size ->
			{done, send_data(M, Stream, IsFin, Bin), sent(Stream, Size)};
		Allowed ->
			<<Now:Allowed/binary, Later/bits>> = Bin,
			{partial, send_data(M, Stream, nofin, Now), sent(Stream, Allowed), {data, IsFin, Later}}
	end;
send_item(M = #m{send_window = ConnWindow, opts = Opts},
		Stream = #stream{send_window = StreamWindow}, {sendfile, IsFin, Offset, Length, Path}) ->
	Allowed = min(min(ConnWindow, StreamWindow), min(Length, 1048576)),
	ReadFile = maps:get(read_file, Opts, fun(_, _, _) -> {error, no_read_file} end),
	case ReadFile(Path, Offset, Allowed) of
		{ok, Bin} when byte_size(Bin) =:= Length ->
			{done, send_data(M, Stream, IsFin, Bin), sent(Stream, Length)};
		{ok, Bin} ->
			N = byte_size(Bin),
			{partial, send_data(M, Stream, nofin, Bin), sent(Stream, N),
				{sendfile, IsFin, Offset + N, Length - N, Path}};
		{error, Reason} ->
			{error, Path, Reason}
	end.

sent(Stream = #stream{send_window = Window, queued = Queued}, Size) ->
	Stream#stream{send_window = Window - Size, queued = Queued - Size}.

send_data(M = #m{send_window = Window, queued = Queued, max_frame_size_sent = Max}, Stream,
		IsFin, Bin) ->
	Size = byte_size(Bin),
	out(data_frames(Stream#stream.id, IsFin, Bin, Max), Size,
		M#m{send_window = Window - Size, queued = Queued - Size, blocked_since = undefined}).

data_frames(StreamID, IsFin, Bin, Max) when byte_size(Bin) =< Max ->
	mustang_http2_frame:data(StreamID, IsFin, Bin);
data_frames(StreamID, IsFin, Bin, Max) ->
	<<Chunk:Max/binary, Rest/bits>> = Bin,
	[mustang_http2_frame:data(StreamID, nofin, Chunk) | data_frames(StreamID, IsFin, Rest, Max)].


%% Server push: see mustang_http2_machine:push/3.
-spec can_push(#m{}) -> boolean().
can_push(#m{peer_enable_push = Enabled, shutdown = Shutdown, peer_goaway = PeerGoaway,
		pushed = Pushed, peer_max_streams = Max, next_push_id = Next}) ->
	Enabled andalso Shutdown =:= none andalso not PeerGoaway
		andalso (Max =:= infinity orelse Pushed < Max) andalso Next =< ?MAX_WINDOW.

-spec push(#m{}, stream_id(), tuple()) -> #m{}.
push(M = #m{encoder = Encoder, max_frame_size_sent = MaxFrame, next_push_id = PromisedID},
		StreamID, {push, Method, Scheme, Host, Port, Path, Qs, Headers}) ->
	Authority = case {Scheme, Port} of
		{<<"http">>, 80} -> Host;
		{<<"https">>, 443} -> Host;
		_ -> [Host, $:, integer_to_binary(Port)]
	end,
	FullPath = case Qs of
		<<>> -> Path;
		_ -> [Path, $?, Qs]
	end,
	Fields = [{<<":method">>, Method}, {<<":scheme">>, Scheme},
		{<<":authority">>, iolist_to_binary(Authority)}, {<<":path">>, iolist_to_binary(FullPath)}
		| [{N, iolist_to_binary(V)} || {N, V} <- maps:to_list(Headers)]],
	case mustang_http2_headers:request(Fields, #{enable_connect_protocol => false}) of
		{ok, Request} ->
			{Block, Encoder2} = mustang_hpack:encode(Fields, Encoder),
			M2 = out(mustang_http2_frame:push_promise_frames(StreamID, PromisedID, Block, MaxFrame),
				iolist_size(Block) + 13, M#m{encoder = Encoder2, next_push_id = PromisedID + 2}),
			M3 = open_stream(M2, PromisedID, Request, fin),
			case is_map_key(PromisedID, M3#m.streams) of
				true -> M3#m{pushed = M3#m.pushed + 1};
				false -> M3
			end;
		{error, Reason} ->
			event({push_invalid, FullPath, Reason}, M)
	end.

%% Streams.

%% A request becomes a stream: {headers, ...} for the caller. A request that
%% announces a body but ends now is malformed (RFC 9113 8.1.1).
-spec open_stream(#m{}, stream_id(), mustang_http2_headers:request(), mustang_http2_frame:fin())
	-> #m{}.
open_stream(M = #m{streams = Streams, local_initial_window = RecvWindow,
		peer_initial_window = SendWindow, win_target = WinTarget}, StreamID, Request, IsFin) ->
	#{method := Method, content_length := Expected} = Request,
	case {IsFin, Expected} of
		{fin, N} when N =/= undefined, N =/= 0 ->
			rst(StreamID, protocol_error, M);
		_ ->
			Stream = #stream{id = StreamID,
				remote = case IsFin of fin -> fin; nofin -> open end,
				head = Method =:= <<"HEAD">>,
				recv_window = RecvWindow, win_target = WinTarget, recv_expected = Expected,
				send_window = SendWindow},
			M#m{streams = Streams#{StreamID => Stream},
				events = [{headers, StreamID, IsFin, Request} | M#m.events]}
	end.

-spec rst(stream_id(), code(), #m{}) -> #m{}.
rst(StreamID, Code, M) ->
	out(mustang_http2_frame:rst_stream(StreamID, Code), 13, M).

%% Stream errors (RFC 9113 5.4.2): RST_STREAM, the stream is forgotten.
-spec stream_error(#m{}, stream_id(), code(), atom()) -> #m{}.
stream_error(M, StreamID, Code, Reason) ->
	event({stream_error, StreamID, Code, Reason}, forget_stream(StreamID, rst(StreamID, Code, M))).

-spec forget_stream(stream_id(), #m{}) -> #m{}.
forget_stream(StreamID, M = #m{streams = Streams, pushed = Pushed, queued = ConnQueued}) ->
	case Streams of
		#{StreamID := #stream{queued = Queued}} ->
			M#m{streams = maps:remove(StreamID, Streams),
				pushed = case StreamID rem 2 of 0 -> Pushed - 1; 1 -> Pushed end,
				queued = ConnQueued - Queued, sending = lists:delete(StreamID, M#m.sending)};
		_ ->
			M
	end.
