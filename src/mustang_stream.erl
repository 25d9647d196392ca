%% The stream handler behaviour, and the chain that runs the handlers of the
%% `stream_handlers` protocol option (default [mustang_stream_h]).
%%
%% A stream is one request and its response: an HTTP/1.1 request (in either
%% execution mode) or an HTTP/2 stream. The connection calls the first handler
%% of the chain for every event of the stream; each handler does its work and
%% calls the next one through this module (init/3, data/4, info/3,
%% terminate/3, early_error/5), so it sees, and may change, both what goes
%% down the chain (request body, messages) and the commands that come back up.
%% The connection carries out the commands; handlers never touch the socket.
%% The shape is the one Cowboy documents for cowboy_stream.
%%
%% Callbacks (all take the stream id first):
%%   init(StreamID, Req, Opts) -> {Commands, State}
%%       a request arrived; Opts are the protocol options
%%   data(StreamID, IsFin, Data, State) -> {Commands, State}
%%       request body data, as it is received (fin with the last piece)
%%   info(StreamID, Info, State) -> {Commands, State}
%%       any other event: mustang_req calls made by the handler
%%       ({response, ...}, {headers, ...}, {data, ...}, {read_body, ...}...),
%%       mustang_req:cast/2 messages, exits of processes started with spawn,
%%       timers the handler started with {{self(), StreamID}, Msg} messages
%%   terminate(StreamID, Reason, State) -> any()
%%       the stream ended; Reason is normal, switch_protocol,
%%       {internal_error, _, _}, {socket_error, _, _}, {stream_error, _, _},
%%       {connection_error, _, _} or {stop, _, _}
%%   early_error(StreamID, Reason, PartialReq, Resp, Opts) -> Resp
%%       the request failed before any handler ran (400, 408, 413, 414, 431,
%%       501...): Resp is the {response, Status, Headers, Body} the connection
%%       will send, which each handler may change; PartialReq holds what is
%%       known of the request (at least ref, pid, streamid, peer, sock, cert;
%%       method, path, version and headers when they were parsed)
%%
%% Commands, carried out in order:
%%   {inform, Status, Headers}          1xx response
%%   {headers, Status, Headers}         response head, the body follows
%%   {data, fin | nofin, Data}          response body (iodata or
%%                                      {sendfile, Offset, Length, Path})
%%   {trailers, Headers}                response trailers, ending the body
%%   {response, Status, Headers, Body}  a whole response
%%   {error_response, Status, Headers, Body}
%%                                      a response sent only if none started
%%   {push, Method, Scheme, Host, Port, Path, Qs, Headers}
%%                                      HTTP/2 server push (ignored over HTTP/1.1)
%%   {flow, Size}                       the handlers want Size more bytes of
%%                                      request body
%%   {spawn, Pid, Shutdown}             Pid (linked to the connection) belongs
%%                                      to the stream: its exit comes to info/3
%%                                      as {'EXIT', Pid, Reason}; it is stopped
%%                                      with the stream (Shutdown ms)
%%   {switch_protocol, Headers, Module, State}
%%                                      101 and Module:takeover/8 (HTTP/1.1)
%%   {set_options, Opts}                change options of this stream (idle_timeout)
%%   {log, Level, Format, Args}         one line through the `logger` option
%%   {internal_error, Reason, Text}     end the stream: 500 when nothing was
%%                                      sent yet, else a reset or a close
%%   stop                               end the stream
%% Mustang adds two commands of its own, produced by mustang_stream_h:
%%   {run, Module, Function, Args}      HTTP/1.1 inline mode: call apply/3 in
%%                                      the connection process, mustang_req
%%                                      reaching the stream meanwhile; its
%%                                      result comes to info/3 as {run_done, Result}
%%   {ack, Pid, Ref}                    send {Ref, ok} to Pid once what came
%%                                      before was written or queued within
%%                                      the send buffer limits (back-pressure
%%                                      for mustang_req:stream_body/3)
%% Commands a handler does not know it passes on unchanged.
-module(mustang_stream).

-export([init/3]).
-export([prepare/1]).
-export([init_prepared/3]).
-export([data/4]).
-export([info/3]).
-export([terminate/3]).
-export([early_error/5]).
-export([early_error_response/6]).
-export([make_error_log/5]).

-type streamid() :: pos_integer().
-type fin() :: fin | nofin.
-type headers() :: mustang_req:headers().
-type status() :: mustang_req:status().
-type resp_body() :: mustang_req:resp_body().
-type resp_command() :: {response, status(), headers(), resp_body()}.
-type command() ::
	{inform, status(), headers()}
	| {headers, status(), headers()}
	| {data, fin(), resp_body()}
	| {trailers, headers()}
	| resp_command()
	| {error_response, status(), headers(), resp_body()}
	| {push, binary(), binary(), binary(), inet:port_number(), binary(), binary(), headers()}
	| {flow, non_neg_integer()}
	| {spawn, pid(), timeout()}
	| {switch_protocol, headers(), module(), any()}
	| {set_options, map()}
	| {log, logger:level(), io:format(), list()}
	| {internal_error, any(), human_reason()}
	| stop
	| {run, module(), atom(), list()}
	| {ack, pid(), reference()}.
-type commands() :: [command()].
%% A sentence saying what happened, as an atom (Cowboy's convention) or text.
-type human_reason() :: atom() | iodata().
-type reason() :: normal | switch_protocol
	| {internal_error, any(), human_reason()}
	| {socket_error, any(), human_reason()}
	| {stream_error, any(), human_reason()}
	| {connection_error, any(), human_reason()}
	| {stop, any(), human_reason()}.
-type partial_req() :: map().
-type state() :: {module(), any()} | undefined.
-opaque prepared() :: {module(), map()} | none.
-export_type([prepared/0]).
-export_type([streamid/0, fin/0, command/0, commands/0, reason/0, human_reason/0, resp_command/0,
	partial_req/0, state/0]).

%% A request arrived (its head is parsed): `Req` is the request, `Opts` the
%% protocol options with `stream_handlers` the rest of the chain. Returns
%% `{Commands, State}`; call `mustang_stream:init/3` to run the rest of the
%% chain (`mustang_stream_h`, last, runs the request) and keep its state in
%% yours. Runs in the connection process.
-callback init(streamid(), mustang_req:req(), map()) -> {commands(), any()}.

%% A piece of the request body was received (`fin` with the last one).
%% Returns `{Commands, State}`; pass the data on with
%% `mustang_stream:data/4` (changed or not: `mustang_decompress_h` passes it
%% decoded).
-callback data(streamid(), fin(), binary(), State) -> {commands(), State} when State :: any().

%% Anything else that happened to the stream: the request handler's
%% `mustang_req` calls (`{response, ...}`, `{headers, ...}`, `{data, ...}`,
%% `{trailers, ...}`, `{inform, ...}`, `{read_body, ...}`, `{push, ...}`,
%% `{switch_protocol, ...}`), messages sent with `mustang_req:cast/2`,
%% `{'EXIT', Pid, Reason}` of processes started with a `spawn` command,
%% `{run_done, Result}` (HTTP/1.1 inline), and messages sent to the
%% connection as `{{ConnPid, StreamID}, Msg}` (timers). Returns
%% `{Commands, State}`; pass on with `mustang_stream:info/3` what you do not
%% handle yourself. The commands are in the module's head comment.
-callback info(streamid(), any(), State) -> {commands(), State} when State :: any().

%% The stream ended: Reason is `normal`, `switch_protocol`, `{internal_error,
%% _, _}`, `{socket_error, _, _}`, `{stream_error, _, _}`,
%% `{connection_error, _, _}` or `{stop, _, _}`. Call
%% `mustang_stream:terminate/3` for the rest of the chain. The result is
%% ignored; a crash is logged.
-callback terminate(streamid(), reason(), any()) -> any().

%% The request failed before any handler ran (400, 408, 413, 414, 431,
%% 501...): Resp is the `{response, Status, Headers, Body}` the connection
%% will send; return it, changed or not, after calling
%% `mustang_stream:early_error/5` for the rest of the chain (before or after
%% your change). PartialReq holds what is known of the request (at least
%% `ref`, `pid`, `streamid`, `peer`, `sock`, `cert`; `method`, `path`,
%% `version` and `headers` when they were parsed). There is no `init/3` and
%% no `terminate/3` for such a stream. A crash is logged and the response
%% stays what it was.
-callback early_error(streamid(), reason(), partial_req(), Resp, map()) -> Resp
	when Resp :: resp_command().

%% The chain: the state of a handler is {Module, ItsState}; each handler keeps
%% the state of the rest of the chain inside its own (as mustang_stream_h,
%% the last one, has no rest).

%% Calls `init/3` of the next stream handler of the chain (the head of Opts'
%% `stream_handlers`) and returns its commands, with the state of the rest of
%% the chain to keep in your own state. A stream handler calls it from its own
%% `init/3`, with the Opts it got:
%%
%%     init(StreamID, Req, Opts) ->
%%         {Commands, Next} = mustang_stream:init(StreamID, Req, Opts),
%%         {Commands, #state{next = Next}}.
%%
%% With no handler left it returns `{[], undefined}`. What the next handler
%% raises goes through: a crash ends the stream (500, one log line).
-spec init(streamid(), mustang_req:req(), map()) -> {commands(), state()}.
init(StreamID, Req, Opts) ->
	case maps:get(stream_handlers, Opts, [mustang_stream_h]) of
		[] ->
			{[], undefined};
		[Handler | Tail] ->
			{Commands, State} = Handler:init(StreamID, Req, Opts#{stream_handlers => Tail}),
			{Commands, {Handler, State}}
	end.

%% @private Connections look the first handler and its options up once
%% (prepare/1), not for every request (init_prepared/3 is then init/3).
-spec prepare(map()) -> prepared().
prepare(Opts) ->
	case maps:get(stream_handlers, Opts, [mustang_stream_h]) of
		[] -> none;
		[Handler | Tail] -> {Handler, Opts#{stream_handlers => Tail}}
	end.

%% @private For connections: init/3 with the first handler looked up once by
%% prepare/1.
-spec init_prepared(streamid(), mustang_req:req(), prepared()) -> {commands(), state()}.
init_prepared(_, _, none) ->
	{[], undefined};
init_prepared(StreamID, Req, {mustang_stream_h, HandlerOpts}) ->
	%% The default chain is called by name: a call through a variable module
	%% looks its export up in a hash table each time (erts_find_export_entry
	%% was +0.6% of the CPU of h2load -c10 -m10 with four such calls per
	%% request).
	{Commands, State} = mustang_stream_h:init(StreamID, Req, HandlerOpts),
	{Commands, {mustang_stream_h, State}};
init_prepared(StreamID, Req, {Handler, HandlerOpts}) ->
	{Commands, State} = Handler:init(StreamID, Req, HandlerOpts),
	{Commands, {Handler, State}}.

%% Calls `data/4` of the next stream handler with the rest of the chain's
%% state (what `init/3` returned); returns its commands and its new state.
-spec data(streamid(), fin(), binary(), state()) -> {commands(), state()}.
data(_, _, _, undefined) ->
	{[], undefined};
data(StreamID, IsFin, Data, {mustang_stream_h, State0}) ->
	{Commands, State} = mustang_stream_h:data(StreamID, IsFin, Data, State0),
	{Commands, {mustang_stream_h, State}};
data(StreamID, IsFin, Data, {Handler, State0}) ->
	{Commands, State} = Handler:data(StreamID, IsFin, Data, State0),
	{Commands, {Handler, State}}.

%% Calls `info/3` of the next stream handler with the rest of the chain's
%% state; returns its commands and its new state. A stream handler passes on
%% the infos it does not handle itself:
%%
%%     info(StreamID, Info, State = #state{next = Next0}) ->
%%         {Commands, Next} = mustang_stream:info(StreamID, Info, Next0),
%%         {Commands, State#state{next = Next}}.
-spec info(streamid(), any(), state()) -> {commands(), state()}.
info(_, _, undefined) ->
	{[], undefined};
info(StreamID, Info, {mustang_stream_h, State0}) ->
	{Commands, State} = mustang_stream_h:info(StreamID, Info, State0),
	{Commands, {mustang_stream_h, State}};
info(StreamID, Info, {Handler, State0}) ->
	{Commands, State} = Handler:info(StreamID, Info, State0),
	{Commands, {Handler, State}}.

%% Calls `terminate/3` of the next stream handler with the rest of the chain's
%% state; returns `ok`.
-spec terminate(streamid(), reason(), state()) -> ok.
terminate(_, _, undefined) ->
	ok;
terminate(StreamID, Reason, {mustang_stream_h, State}) ->
	mustang_stream_h:terminate(StreamID, Reason, State);
terminate(StreamID, Reason, {Handler, State}) ->
	_ = Handler:terminate(StreamID, Reason, State),
	ok.

%% Calls `early_error/5` of the next stream handler of Opts' chain (a request
%% that failed before any handler ran has no state) and returns the response
%% it makes of Resp; Resp itself when no handler is left.
-spec early_error(streamid(), reason(), partial_req(), Resp, map()) -> Resp
	when Resp :: resp_command().
early_error(StreamID, Reason, PartialReq, Resp, Opts) ->
	case maps:get(stream_handlers, Opts, [mustang_stream_h]) of
		[] ->
			Resp;
		[Handler | Tail] ->
			Handler:early_error(StreamID, Reason, PartialReq, Resp,
				Opts#{stream_handlers => Tail})
	end.

%% @private For connections: the response to send for a request refused
%% before any handler ran. A stream handler that crashes in early_error/5 is
%% logged (through Logger) and the response stays what it was.
-spec early_error_response(streamid(), reason(), partial_req(), Resp, map(), module()) -> Resp
	when Resp :: resp_command().
early_error_response(StreamID, Error, PartialReq, Resp, Opts, Logger) ->
	try
		early_error(StreamID, Error, PartialReq, Resp, Opts)
	catch Class:Reason2:Stacktrace ->
		{log, Level, Format, Args} = make_error_log(early_error,
			[StreamID, Error, PartialReq, Resp], Class, Reason2, Stacktrace),
		ok = mustang_conn_chores:log(Logger, Level, Format, Args),
		Resp
	end.

%% @private The log command for a stream handler callback that crashed, for
%% the connection to write once.
-spec make_error_log(init | data | info | terminate | early_error, list(), atom(), any(), list())
	-> {log, error, string(), list()}.
make_error_log(Callback, Args, Class, Reason, Stacktrace) ->
	{log, error, "mustang: stream handler callback ~p crashed with ~0p:~0p~n"
		"arguments: ~0p~nstacktrace: ~p", [Callback, Class, Reason, Args, Stacktrace]}.
