%% The default stream handler, last in the `stream_handlers` chain: it runs
%% the request (the middlewares, by default the router and the handler) and
%% owns the policy that does not depend on the protocol:
%%
%% - where the request runs: inline in the HTTP/1.1 connection process (the
%%   default: HTTP/1.1 cannot multiplex, so a process per request only adds
%%   message passing), or in a process of its own ({spawn, ...}) with
%%   request_process => true and for every HTTP/2 stream;
%% - what its end means: a normal end without a response gets 204, bad client
%%   input found by mustang_req ({request_error, ...}) gets its 4xx status, a
%%   crash gets 500 (or a reset once the response started) and the one log
%%   line of the crashed request;
%% - request body reads: the body is buffered here as the connection hands it
%%   over (data/4) and given to read_body calls by `length` or `period`,
%%   whichever comes first; 100 Continue is sent at the first read, and at
%%   most once per request, also when the handler sends it with inform/2.
%%
%% Messages from mustang_req come to info/3: response parts become the
%% commands of the same name; {read_body, Pid, Ref, Length | auto, Period} is
%% answered with {request_body, Ref, IsFin, Data} (or {request_body, Ref,
%% {error, Reason}}). Websocket over HTTP/2 asks with {relay, Pid, Ref} to
%% get the stream's DATA as it arrives instead.
-module(mustang_stream_h).
-behaviour(mustang_stream).

-export([init/3]).
-export([data/4]).
-export([info/3]).
-export([terminate/3]).
-export([early_error/5]).

%% The flow a length => auto read allows: as much as a default read's.
-define(AUTO_FLOW, 8000000).

-record(state, {
	conn :: pid(),
	mode :: inline | process,
	pid = undefined :: pid() | undefined,
	method :: binary(),
	path :: binary(),
	peer :: {inet:ip_address(), inet:port_number()} | undefined,
	ref :: any(),
	%% 100 Continue: to send at the first body read (the client sent
	%% Expect: 100-continue), sent already (by a read or by the handler), or
	%% none of that.
	continue = none :: none | pending | sent,
	%% Received body not read yet, newest first, and whether it ended.
	body = [] :: [binary()],
	body_size = 0 :: non_neg_integer(),
	body_fin = nofin :: mustang_stream:fin(),
	body_error = undefined :: any(),
	%% A read_body waiting for data: {Pid, Ref, Length, Timer}.
	read = undefined :: undefined | {pid(), reference(), non_neg_integer(), reference() | undefined},
	%% Websocket over HTTP/2: the process that takes DATA as it comes.
	relay = undefined :: pid() | undefined,
	%% What was sent of the response: nothing, its head, all of it.
	resp = none :: none | headers | done
}).

%% Starts the request: in HTTP/1.1 inline mode it returns the `run` command
%% that calls the middlewares (`middlewares` and `env` protocol options, by
%% default the router and the handler) in the connection process; otherwise it
%% starts a request process (linked, with a 1597-word heap) that runs them
%% and returns `{spawn, Pid, 5000}`. Remembers whether the client sent
%% `expect: 100-continue`.
-spec init(mustang_stream:streamid(), mustang_req:req(), map()) ->
	{mustang_stream:commands(), #state{}}.
init(_StreamID, Req = #{pid := Conn, mode := Mode, method := Method, path := Path,
		headers := Headers, peer := Peer, ref := Ref}, Opts) ->
	{Env, Middlewares} = case Opts of
		#{env := E, middlewares := M} -> {E, M};
		_ -> {maps:get(env, Opts, #{}), maps:get(middlewares, Opts, [mustang_router, mustang_handler])}
	end,
	State = #state{conn = Conn, mode = Mode, method = Method, path = Path, peer = Peer, ref = Ref,
		continue = case expects_continue(Headers) of true -> pending; false -> none end},
	case Mode of
		inline ->
			{[{run, mustang_middleware, run, [Req, Env, Middlewares]}], State};
		process ->
			%% A heap of 1597 words (12.5 KiB) from the start: the Req and
			%% the handler's work fit without the collections a default
			%% 233-word heap makes (W2b, client and server on one core:
			%% 20.3k-21.2k -> 21.6k-21.8k req/s). Hibernation still shrinks it
			%% (a hibernating loop handler keeps only its live data).
			Pid = proc_lib:spawn_opt(mustang_middleware, request_process, [Req, Env, Middlewares],
				[link, {min_heap_size, 1597}]),
			{[{spawn, Pid, 5000}], State#state{pid = Pid}}
	end.

expects_continue(#{<<"expect">> := Expect}) ->
	mustang_http_hd:parse(<<"expect">>, Expect) =:= {ok, continue};
expects_continue(_) ->
	false.

%% Buffers the request body as the connection hands it over, for the
%% handler's `read_body` calls (answered as soon as `length` bytes or the end
%% are there); over HTTP/2, once a Websocket session took the stream, relays
%% it to the session instead.
-spec data(mustang_stream:streamid(), mustang_stream:fin(), binary(), #state{}) ->
	{mustang_stream:commands(), #state{}}.
data(StreamID, IsFin, Data, State = #state{relay = Pid, conn = Conn}) when is_pid(Pid) ->
	_ = Data =/= <<>> andalso (Pid ! {{Conn, StreamID}, {data, Data}}),
	_ = IsFin =:= fin andalso (Pid ! {{Conn, StreamID}, fin}),
	{[], State#state{body_fin = IsFin}};
data(_StreamID, IsFin, Data, State = #state{body = Body, body_size = Size}) ->
	State2 = State#state{body = case Data of <<>> -> Body; _ -> [Data | Body] end,
		body_size = Size + byte_size(Data), body_fin = IsFin},
	{[], maybe_reply_read(State2)}.

%% Answers the handler's `mustang_req` calls: `{read_body, Pid, Ref, Length |
%% auto, Period}` with `{request_body, Ref, IsFin, Data}` (or `{request_body,
%% Ref, {error, Reason}}`), after a `{flow, Size}` command for the client;
%% the response parts (`response`, `headers`, `data`, `trailers`, `inform`,
%% `push`, `switch_protocol`) become the commands of the same name (a second
%% `100 Continue` is dropped). The end of the request (`{'EXIT', Pid, _}` of
%% the request process, `{run_done, Result}` inline) becomes its response: 204
%% when nothing was sent, the 4xx of a `{request_error, ...}` exit, 500 and one
%% `error` log line for a crash (a reset or a close once the response
%% started), then `stop`. Other infos are dropped.
-spec info(mustang_stream:streamid(), any(), #state{}) -> {mustang_stream:commands(), #state{}}.
info(StreamID, {read_body, Pid, Ref, auto, Period}, State) ->
	%% length => auto: any data is enough; the client may send as much as a
	%% default read would let it.
	read_body(StreamID, Pid, Ref, {1, ?AUTO_FLOW}, Period, State);
info(StreamID, {read_body, Pid, Ref, Length, Period}, State) ->
	read_body(StreamID, Pid, Ref, {Length, Length}, Period, State);
info(_, {read_body_timeout, Ref}, State = #state{read = {Pid, Ref, _, _}}) ->
	{[], reply_read(Pid, Ref, State#state{read = undefined})};
info(_, {read_body_timeout, _}, State) ->
	{[], State};
info(_, {body_error, Reason}, State = #state{read = Read}) ->
	_ = case Read of
		{Pid, Ref, _, Timer} ->
			cancel(Timer),
			Pid ! {request_body, Ref, {error, Reason}};
		undefined ->
			ok
	end,
	{[], State#state{body_error = Reason, read = undefined}};
info(StreamID, {relay, Pid, Ref}, State = #state{conn = Conn, body = Body, body_fin = IsFin}) ->
	_ = case Body of
		[] -> ok;
		_ -> Pid ! {{Conn, StreamID}, {data, join(Body)}}
	end,
	_ = IsFin =:= fin andalso (Pid ! {{Conn, StreamID}, fin}),
	Pid ! {Ref, ok},
	%% The relaying process acknowledges what it handled with {flow, Size};
	%% this first window lets the client send while it starts.
	{[{flow, 262144}], State#state{relay = Pid, body = [], body_size = 0}};
info(StreamID, going_away, State = #state{relay = Pid, conn = Conn}) when is_pid(Pid) ->
	%% The connection stops (mustang:drain/2): the Websocket session closes.
	Pid ! {{Conn, StreamID}, going_away},
	{[], State};
info(_, {'EXIT', Pid, Reason}, State = #state{pid = Pid}) ->
	done(exit_result(Reason), State#state{pid = undefined});
info(_, {run_done, Result}, State) ->
	done(Result, State);
info(_, Command = {response, _, _, _}, State) ->
	{[Command], State#state{resp = done}};
info(_, Command = {headers, _, _}, State) ->
	{[Command], State#state{resp = headers}};
info(_, Command = {data, fin, _}, State) ->
	{[Command], State#state{resp = done}};
info(_, Command = {trailers, _}, State) ->
	{[Command], State#state{resp = done}};
info(_, Command = {switch_protocol, _, _, _}, State) ->
	{[Command], State#state{resp = done}};
info(_, Command = {inform, Status, _}, State = #state{continue = Continue})
		when Status =:= 100; is_binary(Status), binary_part(Status, 0, 3) =:= <<"100">> ->
	case Continue of
		sent -> {[], State};
		_ -> {[Command], State#state{continue = sent}}
	end;
info(_, Command, State) when element(1, Command) =:= data; element(1, Command) =:= inform;
		element(1, Command) =:= push; element(1, Command) =:= flow;
		element(1, Command) =:= ack; element(1, Command) =:= set_options ->
	{[Command], State};
info(_, _, State) ->
	{[], State}.

%% Tells a `read_body` call still waiting that the stream is gone
%% (`{error, closed}`).
-spec terminate(mustang_stream:streamid(), mustang_stream:reason(), #state{}) -> ok.
terminate(_, _, #state{read = Read}) ->
	_ = case Read of
		{Pid, Ref, _, Timer} ->
			cancel(Timer),
			Pid ! {request_body, Ref, {error, closed}};
		undefined ->
			ok
	end,
	ok.

%% Returns Resp as it is: the last handler of the chain has nothing to add.
-spec early_error(mustang_stream:streamid(), mustang_stream:reason(), mustang_stream:partial_req(),
	Resp, map()) -> Resp when Resp :: mustang_stream:resp_command().
early_error(_, _, _, Resp, _) ->
	Resp.

%% Request body reads.

read_body(_, Pid, Ref, _, _, State = #state{body_error = Reason}) when Reason =/= undefined ->
	Pid ! {request_body, Ref, {error, Reason}},
	{[], State};
read_body(_, Pid, Ref, {Length, _}, _, State0 = #state{body_size = Size, body_fin = IsFin})
		when IsFin =:= fin; Size >= Length ->
	{Continue, State} = continue(State0),
	{Continue, reply_read(Pid, Ref, State)};
read_body(StreamID, Pid, Ref, {Length, Flow}, Period, State0 = #state{conn = Conn, body_size = Size}) ->
	{Continue, State} = continue(State0),
	%% In inline mode the reader itself waits for the period (it reads the
	%% socket); otherwise a timer brings the read back here.
	Timer = case State#state.mode of
		inline -> undefined;
		process -> erlang:send_after(Period, Conn, {{Conn, StreamID}, {read_body_timeout, Ref}})
	end,
	{Continue ++ [{flow, Flow - Size}], State#state{read = {Pid, Ref, Length, Timer}}}.

continue(State = #state{continue = pending}) ->
	{[{inform, 100, #{}}], State#state{continue = sent}};
continue(State) ->
	{[], State}.

maybe_reply_read(State = #state{read = {Pid, Ref, Length, Timer}, body_size = Size, body_fin = IsFin})
		when IsFin =:= fin; Size >= Length ->
	cancel(Timer),
	reply_read(Pid, Ref, State#state{read = undefined});
maybe_reply_read(State) ->
	State.

reply_read(Pid, Ref, State = #state{body = Body, body_fin = IsFin}) ->
	Pid ! {request_body, Ref, IsFin, join(Body)},
	State#state{body = [], body_size = 0}.

cancel(undefined) -> ok;
cancel(Timer) -> _ = erlang:cancel_timer(Timer), ok.

%% Newest first; most reads are a single piece, returned as is.
join([]) -> <<>>;
join([Bin]) -> Bin;
join(Body) -> iolist_to_binary(lists:reverse(Body)).

%% The end of the request.

exit_result(normal) -> ok;
exit_result({shutdown, {mustang_request, Result}}) -> Result;
exit_result({shutdown, _}) -> closed;
exit_result(Other) -> {crash, exit, Other, []}.

done(ok, State = #state{resp = done}) ->
	{[stop], State};
done(Result, State = #state{resp = Resp}) ->
	{log(Result, State) ++ ending(Result, Resp) ++ [stop], State#state{resp = done}}.

ending(ok, none) -> [{response, 204, #{}, <<>>}];
ending(ok, headers) -> [{data, fin, <<>>}];
ending(ok, done) -> [];
ending(closed, _) -> [];
ending({request_error, Reason, Text}, _) ->
	[{error_response, mustang_middleware:request_error_status(Reason), #{}, <<>>},
		{internal_error, {request_error, Reason}, Text}];
ending({crash, exit, {shutdown, _}, _}, _) ->
	%% The client went away while the handler answered.
	[];
ending({crash, Class, Reason, _}, _) ->
	[{internal_error, {Class, Reason}, 'The request handler crashed.'}].

log(ok, _) -> [];
log(closed, _) -> [];
log({crash, exit, {shutdown, _}, _}, _) -> [];
log({request_error, Reason, Text}, #state{ref = Ref, method = Method, path = Path, peer = Peer}) ->
	[{log, debug, "mustang ~p: bad request ~s ~s from ~s: ~0p (~s)",
		[Ref, Method, Path, peer(Peer), Reason, Text]}];
log({crash, Class, Reason, Stacktrace}, #state{ref = Ref, method = Method, path = Path, peer = Peer}) ->
	[{log, error, "mustang ~p: handler crashed on ~s ~s from ~s: ~0p:~0p~n~p",
		[Ref, Method, Path, peer(Peer), Class, Reason, Stacktrace]}].

peer(Peer) -> mustang_conn_chores:peer(Peer).
