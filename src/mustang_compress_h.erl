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
%%                               response is sync-flushed, so the client can
%%                               decode every part as soon as it arrives (costs
%%                               a few bytes per part and some ratio); true:
%%                               zlib may keep data until it has enough
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
%% - any other response gets `vary: accept-encoding' merged into its vary
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
%%
%% Cost when nothing is compressed: init/3 only keeps references to the
%% request headers and the options; Accept-Encoding is parsed when a response
%% that could be compressed comes; once the response is decided, commands
%% pass without a look. A streamed compressed response holds a zlib stream
%% (about 256 KiB) until it ends or the stream terminates.
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

-record(state, {
	next :: mustang_stream:state(),
	%% References only, read when a response comes.
	headers :: mustang_req:headers(),
	opts :: map(),
	%% none: no response yet; done: decided, commands pass untouched;
	%% a zstream: a streamed response being compressed.
	resp = none :: none | done | zlib:zstream()
}).

-spec init(mustang_stream:streamid(), mustang_req:req(), map())
	-> {mustang_stream:commands(), #state{}}.
init(StreamID, Req = #{headers := Headers}, Opts) ->
	{Commands, Next} = mustang_stream:init(StreamID, Req, Opts),
	commands(Commands, #state{next = Next, headers = Headers, opts = Opts}).

-spec data(mustang_stream:streamid(), mustang_stream:fin(), binary(), #state{})
	-> {mustang_stream:commands(), #state{}}.
data(StreamID, IsFin, Data, State = #state{next = Next0}) ->
	{Commands, Next} = mustang_stream:data(StreamID, IsFin, Data, Next0),
	commands(Commands, State#state{next = Next}).

-spec info(mustang_stream:streamid(), any(), #state{})
	-> {mustang_stream:commands(), #state{}}.
info(StreamID, Info, State = #state{next = Next0}) ->
	{Commands, Next} = mustang_stream:info(StreamID, Info, Next0),
	commands(Commands, State#state{next = Next}).

-spec terminate(mustang_stream:streamid(), mustang_stream:reason(), #state{}) -> ok.
terminate(StreamID, Reason, #state{next = Next, resp = Resp}) ->
	close(Resp),
	mustang_stream:terminate(StreamID, Reason, Next).

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
command({data, IsFin, Data}, State = #state{resp = Z}) when is_reference(Z) ->
	stream_data(IsFin, Data, State);
command(Command = {trailers, _}, State = #state{resp = Z}) when is_reference(Z) ->
	Last = zlib:deflate(Z, [], finish),
	close(Z),
	{[{data, nofin, Last}, Command], State#state{resp = done}};
command(Command = {set_options, SetOpts}, State = #state{opts = Opts}) when is_map(SetOpts) ->
	{[Command], State#state{opts = maps:merge(Opts,
		maps:with([compress_threshold, compress_buffering], SetOpts))}};
command(Command = {switch_protocol, _, _, _}, State) ->
	{[Command], State#state{resp = done}};
command(Command, State) ->
	{[Command], State}.

%% A whole response. The cheap tests (sendfile, size) come first: they
%% decide for most small responses.
response(Command = {response, _, _, {sendfile, _, _, _}}, _) ->
	Command;
response(Command = {response, Status, Headers, Body}, State = #state{opts = Opts}) ->
	Size = iolist_size(Body),
	case Size >= maps:get(compress_threshold, Opts, 300) andalso compressible(Status, Headers) of
		false ->
			Command;
		true ->
			Vary = vary(Headers),
			case accepts_gzip(State) of
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
			case accepts_gzip(State) of
				false ->
					{[{headers, Status, Headers#{<<"vary">> => Vary}}], State#state{resp = done}};
				true ->
					Z = zlib:open(),
					ok = zlib:deflateInit(Z, default, deflated, 31, 8, default),
					{[{headers, Status, gzip_headers(Headers, Vary)}], State#state{resp = Z}}
			end
	end.

stream_data(IsFin, {sendfile, Offset, Length, Path}, State = #state{resp = Z}) ->
	case deflate_file(Z, Path, Offset, Length) of
		{ok, Out} ->
			{Last, State2} = stream_end(IsFin, State),
			{[{data, IsFin, [Out, Last]}], State2};
		{error, Reason} ->
			close(Z),
			{[{internal_error, {sendfile, Path, Reason},
				'The file to send could not be read to compress it.'}], State#state{resp = done}}
	end;
stream_data(nofin, Data, State) when Data =:= <<>>; Data =:= [] ->
	%% Nothing to flush; the connection gets the empty part as before.
	{[{data, nofin, Data}], State};
stream_data(nofin, Data, State = #state{resp = Z, opts = Opts}) ->
	Flush = case maps:get(compress_buffering, Opts, false) of
		true -> none;
		false -> sync
	end,
	{[{data, nofin, zlib:deflate(Z, Data, Flush)}], State};
stream_data(fin, Data, State = #state{resp = Z}) ->
	Out = zlib:deflate(Z, Data, finish),
	close(Z),
	{[{data, fin, Out}], State#state{resp = done}}.

%% What ends the part: a flush (as for any nofin part) or the gzip trailer.
stream_end(fin, State = #state{resp = Z}) ->
	Last = zlib:deflate(Z, [], finish),
	close(Z),
	{Last, State#state{resp = done}};
stream_end(nofin, State = #state{resp = Z, opts = Opts}) ->
	case maps:get(compress_buffering, Opts, false) of
		true -> {[], State};
		false -> {zlib:deflate(Z, [], sync), State}
	end.

deflate_file(Z, Path, Offset, Length) ->
	case file:open(Path, [read, raw, binary]) of
		{ok, Fd} ->
			try
				deflate_file_loop(Z, Fd, Offset, Length, [])
			after
				_ = file:close(Fd)
			end;
		Error ->
			Error
	end.

deflate_file_loop(_, _, _, 0, Acc) ->
	{ok, lists:reverse(Acc)};
deflate_file_loop(Z, Fd, Offset, Length, Acc) ->
	case file:pread(Fd, Offset, min(Length, ?FILE_CHUNK)) of
		{ok, Bin} ->
			Size = byte_size(Bin),
			deflate_file_loop(Z, Fd, Offset + Size, Length - Size,
				[zlib:deflate(Z, Bin, none) | Acc]);
		eof ->
			{error, eof};
		Error ->
			Error
	end.

close(Z) when is_reference(Z) ->
	%% The zstream belongs to the process that opened it (the connection);
	%% were it called from another one, the stream is freed with its last
	%% reference anyway.
	try zlib:close(Z) catch error:_ -> ok end;
close(_) ->
	ok.

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

%% Whether the request's Accept-Encoding (the header value, or the state
%% holding the request headers) lets us send gzip.
-spec accepts_gzip(#state{} | iodata() | undefined) -> boolean().
accepts_gzip(#state{headers = Headers}) ->
	accepts_gzip(maps:get(<<"accept-encoding">>, Headers, undefined));
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
