%% Stream handler that decodes gzip request bodies as they are read, so that
%% the handlers after it (mustang_req:read_body...) see the decoded content.
%% Put it before mustang_stream_h, for example
%%   stream_handlers => [mustang_decompress_h, mustang_stream_h]
%%
%% Options (protocol options; both can be changed for one stream with the
%% set_options command, e.g. mustang_req:cast({set_options, #{...}}, Req)):
%%   decompress_enabled (true)     whether gzip bodies are decoded; a change
%%                                 made once the body started coming in is
%%                                 ignored (the body stays one or the other)
%%   decompress_ratio_limit (20)   decoding stops when the decoded size goes
%%                                 over this many times the encoded size
%%                                 received so far (a zip bomb, or data that
%%                                 compresses unusually well): the client gets
%%                                 413 (if no response started) and the stream
%%                                 ends. `infinity` removes the limit.
%%
%% Only a body whose content-encoding is exactly gzip (or x-gzip) is decoded;
%% any other coding, or several codings, pass through untouched. As Cowboy
%% documents for cowboy_decompress_h, the Req the next handlers get says what
%% was done: its `content_decoded` key lists the codings decoded ([<<"gzip">>]
%% or []); when decoding, content-encoding is removed from its headers, and
%% so is content-length, with body_length set to undefined (both described
%% the encoded body). The decision is the one made at init/3: a handler that
%% disables decoding with set_options before reading gets the encoded body
%% with a Req that still says it is decoded.
%%
%% Memory: the body is inflated in bounded pieces (zlib:safeInflate/2, some
%% 16 KiB each) passed down one by one, and the ratio is checked after each
%% piece, so a bomb is stopped within one piece of the limit. A gzip stream
%% that is cut short, or is not gzip, gets 400. Only the first gzip member is
%% decoded: zlib ignores what follows its end (concatenated members are rare
%% in requests). The inflate stream is opened at the first body data and
%% closed at the end of the body, on an error, or in terminate/3.
%%
%% Processes: a zlib stream can only be used by the process that opened it,
%% and an inflate stream cannot be handed over midway. With HTTP/2 and in
%% process mode, data/4 always runs in the connection process, which owns
%% the stream. In HTTP/1.1 inline mode the body is read (and data/4 runs) in
%% whatever process calls mustang_req:read_body, possibly several in turn:
%% there the inflate stream lives in a small process of its own, started at
%% the first body data, asked for each piece, and gone at the end of the body,
%% at terminate/3, or with the connection (it monitors it).
-module(mustang_decompress_h).
-behaviour(mustang_stream).

-export([init/3]).
-export([data/4]).
-export([info/3]).
-export([terminate/3]).
-export([early_error/5]).

-type inflater() :: {direct, zlib:zstream()} | {proc, pid()}.

-record(state, {
	next :: mustang_stream:state(),
	%% off: not a gzip body, pass everything; disabled: gzip, not decoded;
	%% pending: to decode, no data yet; {direct, Z} or {proc, Pid}: decoding
	%% (see inflater/1); ended: the gzip stream ended; failed: the error
	%% response was sent.
	decode = off :: off | disabled | pending | inflater() | ended | failed,
	%% HTTP/1.1 inline mode, and the connection.
	inline = false :: boolean(),
	conn = undefined :: pid() | undefined,
	ratio = 20 :: non_neg_integer() | infinity,
	%% Whether body data came (set_options may no longer switch decoding).
	started = false :: boolean(),
	encoded = 0 :: non_neg_integer(),
	decoded = 0 :: non_neg_integer()
}).

%% For a request whose content-encoding is gzip (and `decompress_enabled`):
%% the Req the next handlers get has no content-encoding nor content-length,
%% `body_length` undefined and `content_decoded => [<<"gzip">>]`; any other
%% request gets `content_decoded => []` and passes untouched.
-spec init(mustang_stream:streamid(), mustang_req:req(), map())
	-> {mustang_stream:commands(), #state{}}.
init(StreamID, Req = #{headers := Headers}, Opts) ->
	case Headers of
		#{<<"content-encoding">> := Coding} ->
			case is_gzip(Coding) of
				true ->
					init_gzip(StreamID, Req, Opts);
				false ->
					init_next(StreamID, Req#{content_decoded => []}, Opts, #state{})
			end;
		_ ->
			init_next(StreamID, Req#{content_decoded => []}, Opts, #state{})
	end.

init_gzip(StreamID, Req = #{headers := Headers}, Opts) ->
	State = #state{ratio = maps:get(decompress_ratio_limit, Opts, 20),
		inline = maps:get(mode, Req, process) =:= inline, conn = maps:get(pid, Req, undefined)},
	case maps:get(decompress_enabled, Opts, true) of
		true ->
			Req2 = Req#{
				headers => maps:without([<<"content-encoding">>, <<"content-length">>], Headers),
				body_length => undefined,
				content_decoded => [<<"gzip">>]
			},
			init_next(StreamID, Req2, Opts, State#state{decode = pending});
		false ->
			init_next(StreamID, Req#{content_decoded => []}, Opts, State#state{decode = disabled})
	end.

init_next(StreamID, Req, Opts, State) ->
	{Commands, Next} = mustang_stream:init(StreamID, Req, Opts),
	commands(Commands, State#state{next = Next}).

is_gzip(<<"gzip">>) ->
	true;
is_gzip(Coding) ->
	case mustang_http_hd:parse_content_encoding(iolist_to_binary(Coding)) of
		{ok, [<<"gzip">>]} -> true;
		{ok, [<<"x-gzip">>]} -> true;
		_ -> false
	end.

%% Inflates a gzip body in bounded pieces as it arrives and passes each piece
%% on. A decoded size over `decompress_ratio_limit` times the received size
%% ends the request with 413; data that is not gzip, or a gzip stream cut
%% short, with 400 (if no response started; the stream ends either way).
-spec data(mustang_stream:streamid(), mustang_stream:fin(), binary(), #state{})
	-> {mustang_stream:commands(), #state{}}.
data(StreamID, IsFin, Data, State = #state{decode = Decode})
		when Decode =:= off; Decode =:= disabled ->
	next_data(StreamID, IsFin, Data, State#state{started = true}, []);
data(_, _, _, State = #state{decode = failed}) ->
	{[], State};
data(_, nofin, _, State = #state{decode = ended}) ->
	%% After the end of the gzip stream: ignored, as zlib does.
	{[], State#state{started = true}};
data(StreamID, fin, _, State = #state{decode = ended}) ->
	next_data(StreamID, fin, <<>>, State, []);
data(StreamID, fin, <<>>, State = #state{decode = pending}) ->
	%% No body at all: nothing to decode.
	next_data(StreamID, fin, <<>>, State#state{decode = ended, started = true}, []);
data(StreamID, IsFin, Data, State = #state{decode = pending}) ->
	data(StreamID, IsFin, Data, State#state{decode = inflater(State), started = true});
data(StreamID, IsFin, Data, State = #state{encoded = Encoded}) ->
	inflate(StreamID, IsFin, Data, State#state{encoded = Encoded + byte_size(Data)}, []).

%% Inflates one piece at a time, passing each down before the next one is
%% made; Acc holds the commands that came back, newest first.
inflate(StreamID, IsFin, Input, State = #state{decode = Inflater}, Acc) ->
	case inflate_step(Inflater, Input) of
		{More, Out} -> inflated(StreamID, IsFin, More, Out, State, Acc);
		error -> fail(400, Acc, State)
	end.

inflated(StreamID, IsFin, More, Out, State = #state{decoded = Decoded0, encoded = Encoded,
		ratio = Ratio}, Acc0) ->
	Decoded = Decoded0 + iolist_size(Out),
	case Ratio =/= infinity andalso Decoded > Ratio * Encoded of
		true ->
			fail(413, Acc0, State);
		false ->
			State2 = State#state{decoded = Decoded},
			case More of
				continue ->
					{Acc, State3} = pass(StreamID, nofin, Out, State2, Acc0),
					inflate(StreamID, IsFin, [], State3, Acc);
				finished when IsFin =:= nofin ->
					{Acc, State3} = pass(StreamID, nofin, Out, State2, Acc0),
					{lists:reverse(Acc), State3};
				finished ->
					body_end(StreamID, Out, State2, Acc0)
			end
	end.

%% The request body ended: so must the gzip stream.
body_end(StreamID, Out, State = #state{decode = Inflater}, Acc) ->
	case inflate_end(Inflater) of
		ok -> next_data(StreamID, fin, iolist_to_binary(Out), State#state{decode = ended}, Acc);
		error -> fail(400, Acc, State#state{decode = ended})
	end.

pass(_, nofin, [], State, Acc) ->
	{Acc, State};
pass(StreamID, IsFin, Out, State = #state{next = Next0}, Acc) ->
	{Commands0, Next} = mustang_stream:data(StreamID, IsFin, iolist_to_binary(Out), Next0),
	{Commands, State2} = commands(Commands0, State#state{next = Next}),
	{lists:reverse(Commands, Acc), State2}.

next_data(StreamID, IsFin, Data, State, Acc0) ->
	{Acc, State2} = pass(StreamID, IsFin, Data, State, Acc0),
	{lists:reverse(Acc), State2}.

%% Stop decoding: the next handlers get no more body, the client an error
%% (when no response started) and the stream ends.
fail(Status, Acc, State = #state{decode = Decode}) ->
	close(Decode),
	{lists:reverse(Acc, [{error_response, Status, #{}, <<>>}, stop]), State#state{decode = failed}}.

%% Passes the info on (a `{set_options, #{decompress_enabled => _,
%% decompress_ratio_limit => _}}` changes them for this stream until the body
%% starts), and the commands that come back.
-spec info(mustang_stream:streamid(), any(), #state{})
	-> {mustang_stream:commands(), #state{}}.
info(StreamID, Info, State = #state{next = Next0}) ->
	{Commands, Next} = mustang_stream:info(StreamID, Info, Next0),
	commands(Commands, State#state{next = Next}).

%% Closes the inflate stream, then runs the rest of the chain.
-spec terminate(mustang_stream:streamid(), mustang_stream:reason(), #state{}) -> ok.
terminate(StreamID, Reason, #state{next = Next, decode = Decode}) ->
	close(Decode),
	mustang_stream:terminate(StreamID, Reason, Next).

%% Passes the early error on.
-spec early_error(mustang_stream:streamid(), mustang_stream:reason(),
	mustang_stream:partial_req(), Resp, map()) -> Resp
	when Resp :: mustang_stream:resp_command().
early_error(StreamID, Reason, PartialReq, Resp, Opts) ->
	mustang_stream:early_error(StreamID, Reason, PartialReq, Resp, Opts).

%% Commands going up: only set_options matters, and only for gzip bodies.
commands(Commands, State = #state{decode = off}) ->
	{Commands, State};
commands(Commands, State) ->
	{Commands, lists:foldl(fun set_options/2, State, Commands)}.

set_options({set_options, Opts}, State) when is_map(Opts) ->
	State2 = case Opts of
		#{decompress_ratio_limit := Ratio} -> State#state{ratio = Ratio};
		_ -> State
	end,
	case {Opts, State2} of
		{#{decompress_enabled := false}, #state{decode = pending, started = false}} ->
			State2#state{decode = disabled};
		{#{decompress_enabled := true}, #state{decode = disabled, started = false}} ->
			State2#state{decode = pending};
		_ ->
			State2
	end;
set_options(_, State) ->
	State.

%% The inflate stream: in this process, or (inline mode) in one of its own.

-spec inflater(#state{}) -> inflater().
inflater(#state{inline = false}) ->
	{direct, open()};
inflater(#state{conn = Conn}) ->
	{proc, spawn(fun() ->
		MRef = monitor(process, Conn),
		inflater_loop(open(), MRef)
	end)}.

open() ->
	Z = zlib:open(),
	ok = zlib:inflateInit(Z, 31),
	Z.

inflater_loop(Z, MRef) ->
	receive
		{From, Ref, {inflate, Input}} ->
			From ! {Ref, safe_inflate(Z, Input)},
			inflater_loop(Z, MRef);
		{From, Ref, finish} ->
			From ! {Ref, finish(Z)};
		stop ->
			zlib:close(Z);
		{'DOWN', MRef, process, _, _} ->
			zlib:close(Z)
	end.

inflater_call(Pid, Request) ->
	MRef = monitor(process, Pid),
	Pid ! {self(), MRef, Request},
	receive
		{MRef, Result} ->
			demonitor(MRef, [flush]),
			Result;
		{'DOWN', MRef, process, Pid, _} ->
			error
	end.

inflate_step({direct, Z}, Input) -> safe_inflate(Z, Input);
inflate_step({proc, Pid}, Input) -> inflater_call(Pid, {inflate, Input}).

%% The body ended: so must the gzip stream. Closes the inflater.
inflate_end({direct, Z}) -> finish(Z);
inflate_end({proc, Pid}) -> inflater_call(Pid, finish).

safe_inflate(Z, Input) ->
	try zlib:safeInflate(Z, Input) of
		{continue, Out} -> {continue, Out};
		{finished, Out} -> {finished, Out};
		{need_dictionary, _, _} -> error
	catch error:_ ->
		error
	end.

finish(Z) ->
	Result = try zlib:inflateEnd(Z) of
		ok -> ok
	catch error:_ ->
		error
	end,
	zlib:close(Z),
	Result.

close({direct, Z}) ->
	%% Only the connection process calls this with a direct stream.
	try zlib:close(Z) catch error:_ -> ok end;
close({proc, Pid}) ->
	Pid ! stop,
	ok;
close(_) ->
	ok.
