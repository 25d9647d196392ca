%% Stream handler that gzips responses for clients that accept it (RFC 9110
%% 8.4 content codings, 12.5.3 Accept-Encoding). Put it before the handlers
%% whose responses it should compress, for example
%%   stream_handlers => [mustang_compress_h, mustang_stream_h]
%%
%% Options (protocol options; both can be changed for one stream with the
%% set_options command, e.g. mustang_req:cast({set_options, #{...}}, Req)):
%%   compress_threshold (300)    whole responses ({response, ...}) whose body
%%                               is smaller than this many bytes are sent as
%%                               they are; streamed responses are always
%%                               compressed when they can be
%%   compress_buffering (false)  false: each {data, nofin, _} of a streamed
%%                               response is compressed and sync-flushed at
%%                               once, so the client can decode every part as
%%                               soon as it arrives (costs a few bytes per part
%%                               and some ratio); true: parts are gathered up
%%                               to 32 KiB before being compressed (better
%%                               ratio, fewer writes, the client waits)
%%
%% What is compressed, with gzip only (deflate and br are not offered):
%% - the client must accept gzip: its q-value (that of "gzip" or "x-gzip",
%%   else that of "*", else 0) must be above 0 and not below the q-value the
%%   client gives identity explicitly ("identity", else "*"). Without an
%%   Accept-Encoding header nothing is compressed (RFC 9110 allows any coding
%%   then, but clients that send none, like plain curl, expect none); an empty
%%   or invalid header also means identity. When neither gzip nor identity is
%%   acceptable the response is sent uncompressed rather than refused.
%% - responses left alone, without vary either: 1xx, 204 and 304; those that
%%   already have content-encoding (the handler chose), an etag (a strong
%%   validator must change with the coding, RFC 9110 8.8.3; as in Cowboy, a
%%   handler that wants both does it itself) or content-range (a range of the
%%   uncompressed representation); sendfile bodies ({response, _, _,
%%   {sendfile, ...}}); whole responses below the threshold.
%% - any other response gets `vary: accept-encoding` merged into its vary
%%   header, compressed or not, since the coding depends on the request.
%% - HEAD is treated as GET so that its headers (content-encoding, vary,
%%   content-length) are those GET would get; the connection drops the body.
%% - a whole response is compressed in one go and sent compressed only when
%%   that makes it smaller; its content-length is dropped (the connection
%%   computes it from the body it sends).
%% - a streamed response ({headers, ...}) loses any content-length the
%%   handler set; the gzip stream ends with {data, fin, _}, or just before
%%   {trailers, _}. A {sendfile, ...} part of a compressed streamed response
%%   cannot be sent as is once the head says gzip: the file is read (64 KiB
%%   at a time) and compressed, so its compressed size is held in memory.
%%   An empty {data, nofin, _} (or one kept by compress_buffering) sends
%%   nothing.
%%
%% Cost when nothing is compressed: init/3 keeps three small values (the raw
%% Accept-Encoding and the two options; the state is copied at each
%% mustang_req call in inline mode); Accept-Encoding is parsed only when a
%% response that could be compressed comes; once the response is decided,
%% commands pass without a look. A streamed compressed response holds a zlib stream
%% (about 256 KiB) until it ends or the stream terminates.
%%
%% Processes: a zlib stream can only be used by the process that opened it,
%% and in HTTP/1.1 inline mode the parts of a response may come from any
%% process the handler gave its Req to (the chain runs in the caller). So a
%% streamed response is raw deflate framed as gzip here (header, CRC-32 and
%% size computed with erlang:crc32/2), every command leaves the deflate
%% stream flushed to a byte boundary with nothing pending (buffering is done
%% on our side, not in zlib), and a part that comes from another process than
%% the one that opened the zlib stream continues the same deflate stream with
%% a new zlib stream of that process (it only loses the 32 KiB window).
-module(mustang_compress_h).
-behaviour(mustang_stream).

-export([init/3]).
-export([data/4]).
-export([info/3]).
-export([terminate/3]).
-export([early_error/5]).

%% Exported for tests.
-export([accepts_gzip/1]).

-define(FILE_CHUNK, 65536).

%% The gzip header: no name, no time, unknown OS... as zlib writes it (RFC 1952).
-define(GZIP_HEADER, <<31, 139, 8, 0, 0, 0, 0, 0, 0, 3>>).
-define(BUFFER_SIZE, 32768).

%% A streamed response being compressed.
-record(gz, {
	%% The zlib stream (raw deflate) and the process that opened it.
	z = undefined :: zlib:zstream() | undefined,
	owner = undefined :: pid() | undefined,
	header = true :: boolean(),
	crc = 0 :: non_neg_integer(),
	size = 0 :: non_neg_integer(),
	%% compress_buffering: parts not compressed yet.
	buffer = [] :: iodata(),
	buffered = 0 :: non_neg_integer()
}).

-record(state, {
	next :: mustang_stream:state(),
	%% The request's Accept-Encoding, parsed when a response may be compressed.
	accept :: iodata() | undefined,
	threshold :: non_neg_integer(),
	buffering :: boolean(),
	%% none: no response yet; done: decided, commands pass untouched;
	%% a #gz{}: a streamed response being compressed.
	resp = none :: none | done | #gz{}
}).

%% Remembers the request's accept-encoding and the options
%% (`compress_threshold`, `compress_buffering`), then runs the rest of the
%% chain. Nothing is parsed or compressed until a response comes up.
-spec init(mustang_stream:streamid(), mustang_req:req(), map())
	-> {mustang_stream:commands(), #state{}}.
init(StreamID, Req = #{headers := Headers}, Opts) ->
	{Commands, Next} = mustang_stream:init(StreamID, Req, Opts),
	%% Only small terms in the state: in inline mode it is copied at every
	%% mustang_req call (published by mustang_inline).
	commands(Commands, #state{next = Next,
		accept = maps:get(<<"accept-encoding">>, Headers, undefined),
		threshold = maps:get(compress_threshold, Opts, 300),
		buffering = maps:get(compress_buffering, Opts, false)}).

%% Passes the request body on unchanged; compresses the response commands
%% that come back.
-spec data(mustang_stream:streamid(), mustang_stream:fin(), binary(), #state{})
	-> {mustang_stream:commands(), #state{}}.
data(StreamID, IsFin, Data, State = #state{next = Next0}) ->
	{Commands, Next} = mustang_stream:data(StreamID, IsFin, Data, Next0),
	commands(Commands, State#state{next = Next}).

%% Passes the info on (a `{set_options, #{compress_threshold => _,
%% compress_buffering => _}}` changes them for this stream), then compresses
%% the response commands that come back, as the module's head comment says:
%% a whole response in one go when that makes it smaller, a streamed one as a
%% gzip stream (each part flushed unless `compress_buffering`), with `vary:
%% accept-encoding`.
-spec info(mustang_stream:streamid(), any(), #state{})
	-> {mustang_stream:commands(), #state{}}.
info(StreamID, Info, State = #state{next = Next0}) ->
	{Commands, Next} = mustang_stream:info(StreamID, Info, Next0),
	commands(Commands, State#state{next = Next}).

%% Closes the zlib stream of a streamed response that did not end, then runs
%% the rest of the chain.
-spec terminate(mustang_stream:streamid(), mustang_stream:reason(), #state{}) -> ok.
terminate(StreamID, Reason, #state{next = Next, resp = Resp}) ->
	_ = case Resp of
		#gz{z = Z} -> close(Z);
		_ -> ok
	end,
	mustang_stream:terminate(StreamID, Reason, Next).

%% Passes the early error on: error responses are not compressed.
-spec early_error(mustang_stream:streamid(), mustang_stream:reason(),
	mustang_stream:partial_req(), Resp, map()) -> Resp
	when Resp :: mustang_stream:resp_command().
early_error(StreamID, Reason, PartialReq, Resp, Opts) ->
	mustang_stream:early_error(StreamID, Reason, PartialReq, Resp, Opts).

%% Commands going up.

commands(Commands, State = #state{resp = done}) ->
	{Commands, State};
commands([], State) ->
	{[], State};
commands([Command], State) ->
	%% The usual case, one command: no list to rebuild.
	command(Command, State);
commands(Commands, State) ->
	commands(Commands, State, []).

commands([], State, Acc) ->
	{lists:reverse(Acc), State};
commands([Command | Tail], State0, Acc) ->
	{Out, State} = command(Command, State0),
	commands(Tail, State, lists:reverse(Out, Acc)).

command(Command = {response, _, _, _}, State = #state{resp = none}) ->
	{[response(Command, State)], State#state{resp = done}};
command(Command = {headers, _, _}, State = #state{resp = none}) ->
	headers(Command, State);
command({data, IsFin, Data}, State = #state{resp = Gz = #gz{}}) ->
	stream_data(IsFin, Data, Gz, State);
command(Command = {trailers, _}, State = #state{resp = Gz = #gz{buffer = Buffer}}) ->
	{Last, done} = deflate(Buffer, finish, Gz),
	{[{data, nofin, Last}, Command], State#state{resp = done}};
command(Command = {set_options, SetOpts}, State = #state{threshold = Threshold,
		buffering = Buffering}) when is_map(SetOpts) ->
	{[Command], State#state{threshold = maps:get(compress_threshold, SetOpts, Threshold),
		buffering = maps:get(compress_buffering, SetOpts, Buffering)}};
command(Command = {switch_protocol, _, _, _}, State) ->
	{[Command], State#state{resp = done}};
command(Command, State) ->
	{[Command], State}.

%% A whole response. The cheap tests (sendfile, size) come first: they
%% decide for most small responses.
response(Command = {response, _, _, {sendfile, _, _, _}}, _) ->
	Command;
response(Command = {response, Status, Headers, Body}, State = #state{threshold = Threshold}) ->
	Size = iolist_size(Body),
	case Size >= Threshold andalso compressible(Status, Headers) of
		false ->
			Command;
		true ->
			Vary = vary(Headers),
			case accepts_gzip(State#state.accept) of
				false ->
					{response, Status, Headers#{<<"vary">> => Vary}, Body};
				true ->
					Gzipped = zlib:gzip(Body),
					case byte_size(Gzipped) < Size of
						true ->
							{response, Status, gzip_headers(Headers, Vary), Gzipped};
						false ->
							{response, Status, Headers#{<<"vary">> => Vary}, Body}
					end
			end
	end.

%% A streamed response: decided on its head.
headers(Command = {headers, Status, Headers}, State) ->
	case compressible(Status, Headers) of
		false ->
			{[Command], State#state{resp = done}};
		true ->
			Vary = vary(Headers),
			case accepts_gzip(State#state.accept) of
				false ->
					{[{headers, Status, Headers#{<<"vary">> => Vary}}], State#state{resp = done}};
				true ->
					%% The zlib stream is opened by the first part.
					{[{headers, Status, gzip_headers(Headers, Vary)}], State#state{resp = #gz{}}}
			end
	end.

stream_data(IsFin, {sendfile, Offset, Length, Path}, Gz0 = #gz{buffer = Buffer}, State) ->
	%% The buffered parts, the file, and the flush or the end, in one go.
	{Out0, Gz} = deflate(Buffer, none, Gz0#gz{buffer = [], buffered = 0}),
	case deflate_file(Path, Offset, Length, Gz) of
		{ok, Out1, Gz2} ->
			{Out2, Resp} = deflate([], flush(IsFin), Gz2),
			{[{data, IsFin, [Out0, Out1, Out2]}], State#state{resp = Resp}};
		{error, Reason} ->
			close(Gz#gz.z),
			{[{internal_error, {sendfile, Path, Reason},
				'The file to send could not be read to compress it.'}], State#state{resp = done}}
	end;
stream_data(nofin, Data, Gz = #gz{buffer = Buffer, buffered = Buffered},
		State = #state{buffering = Buffering}) ->
	Size = Buffered + iolist_size(Data),
	case Buffering of
		true when Size < ?BUFFER_SIZE ->
			{[], State#state{resp = Gz#gz{buffer = [Buffer, Data], buffered = Size}}};
		_ when Size =:= 0 ->
			%% Nothing to send.
			{[], State};
		_ ->
			{Out, Gz2} = deflate([Buffer, Data], sync, Gz#gz{buffer = [], buffered = 0}),
			{[{data, nofin, Out}], State#state{resp = Gz2}}
	end;
stream_data(fin, Data, Gz = #gz{buffer = Buffer}, State) ->
	{Out, done} = deflate([Buffer, Data], finish, Gz),
	{[{data, fin, Out}], State#state{resp = done}}.

flush(nofin) -> sync;
flush(fin) -> finish.

%% Compresses Data; with sync, all of it can be decoded from what was
%% returned so far, with finish the gzip stream is complete (and closed).
deflate(Data, Flush, Gz0 = #gz{header = Header, crc = Crc0, size = Size0}) ->
	Gz = #gz{z = Z} = owned(Gz0),
	Out0 = zlib:deflate(Z, Data, Flush),
	Out = case Header of
		true -> [?GZIP_HEADER | Out0];
		false -> Out0
	end,
	Crc = erlang:crc32(Crc0, Data),
	Size = Size0 + iolist_size(Data),
	case Flush of
		finish ->
			close(Z),
			{[Out, <<Crc:32/little, (Size band 16#ffffffff):32/little>>], done};
		_ ->
			{Out, Gz#gz{header = false, crc = Crc, size = Size}}
	end.

%% The zlib stream of this process: a part from another process goes on with
%% a new zlib stream, as the last one left nothing pending.
owned(Gz = #gz{owner = Owner}) when Owner =:= self() ->
	Gz;
owned(Gz = #gz{z = Old}) ->
	close(Old),
	Z = zlib:open(),
	ok = zlib:deflateInit(Z, default, deflated, -15, 8, default),
	Gz#gz{z = Z, owner = self()}.

deflate_file(Path, Offset, Length, Gz) ->
	case file:open(Path, [read, raw, binary]) of
		{ok, Fd} ->
			try
				deflate_file_loop(Fd, Offset, Length, Gz, [])
			after
				_ = file:close(Fd)
			end;
		Error ->
			Error
	end.

deflate_file_loop(_, _, 0, Gz, Acc) ->
	{ok, lists:reverse(Acc), Gz};
deflate_file_loop(Fd, Offset, Length, Gz0, Acc) ->
	case file:pread(Fd, Offset, min(Length, ?FILE_CHUNK)) of
		{ok, Bin} ->
			Size = byte_size(Bin),
			{Out, Gz} = deflate(Bin, none, Gz0),
			deflate_file_loop(Fd, Offset + Size, Length - Size, Gz, [Out | Acc]);
		eof ->
			{error, eof};
		Error ->
			Error
	end.

close(undefined) ->
	ok;
close(Z) ->
	%% A zlib stream of another process cannot be closed from here; it is
	%% freed with its last reference.
	try zlib:close(Z) catch error:_ -> ok end.

%% Decisions.

compressible(Status, Headers) ->
	case status_code(Status) of
		Code when Code < 200; Code =:= 204; Code =:= 304 ->
			false;
		_ ->
			not (maps:is_key(<<"content-encoding">>, Headers)
				orelse maps:is_key(<<"etag">>, Headers)
				orelse maps:is_key(<<"content-range">>, Headers))
	end.

status_code(Status) when is_integer(Status) ->
	Status;
status_code(<<A, B, C, _/binary>>) when A >= $0, A =< $9, B >= $0, B =< $9, C >= $0, C =< $9 ->
	(A - $0) * 100 + (B - $0) * 10 + (C - $0);
status_code(_) ->
	%% Not a status the connection could send; leave it alone.
	0.

gzip_headers(Headers, Vary) ->
	maps:remove(<<"content-length">>,
		Headers#{<<"content-encoding">> => <<"gzip">>, <<"vary">> => Vary}).

%% The vary value with accept-encoding in it.
vary(#{<<"vary">> := Value}) ->
	Bin = iolist_to_binary(Value),
	case mustang_http_hd:parse_vary(Bin) of
		{ok, []} ->
			<<"accept-encoding">>;
		{ok, Names} ->
			case lists:member(<<"*">>, Names) orelse lists:member(<<"accept-encoding">>, Names) of
				true -> Value;
				false -> <<Bin/binary, ", accept-encoding">>
			end;
		{error, _} ->
			%% Not ours to fix; add ours all the same.
			<<Bin/binary, ", accept-encoding">>
	end;
vary(_) ->
	<<"accept-encoding">>.

%% Whether the request's Accept-Encoding value lets us send gzip.
-spec accepts_gzip(iodata() | undefined) -> boolean().
accepts_gzip(undefined) ->
	false;
accepts_gzip(Value) ->
	case mustang_http_hd:parse_accept_encoding(iolist_to_binary(Value)) of
		{ok, Codings} ->
			GzipQ = qvalue(<<"gzip">>, Codings,
				qvalue(<<"x-gzip">>, Codings, qvalue(<<"*">>, Codings, 0))),
			%% Identity without an explicit weight (its own or that of "*") is
			%% acceptable but preferred to nothing: "gzip;q=0.5" alone means gzip.
			IdentityQ = qvalue(<<"identity">>, Codings, qvalue(<<"*">>, Codings, 0)),
			GzipQ > 0 andalso GzipQ >= IdentityQ;
		{error, _} ->
			false
	end.

qvalue(Coding, Codings, Default) ->
	case lists:keyfind(Coding, 1, Codings) of
		{_, Q} -> Q;
		false -> Default
	end.
