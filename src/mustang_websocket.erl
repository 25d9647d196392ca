%% Websocket (RFC 6455) over HTTP/1.1 and over HTTP/2 (RFC 8441), with
%% permessage-deflate (RFC 7692). A handler opts in by returning
%% {mustang_websocket, Req, State} or {mustang_websocket, Req, State, Opts}
%% from init/2; mustang_handler then calls upgrade/4,5.
%%
%% Over HTTP/1.1 the connection process becomes the Websocket process: it
%% answers 101, then takeover/8 runs this module's loop on the socket, with
%% the dynamic buffer state carried over. Over HTTP/2 the stream's process
%% runs the loop: the connection relays the stream's DATA to it as messages
%% and the frames it writes go out as DATA of the stream (see
%% doc/internals/websocket.md).
%%
%% Handler callbacks (the shape of cowboy_websocket):
%%   websocket_init(State)           optional, runs in the Websocket process
%%   websocket_handle(InFrame, State)
%%   websocket_info(Msg, State)
%%   terminate(Reason, PartialReq, State)  optional
%% InFrame is {text, Bin}, {binary, Bin}, {ping, Bin} or {pong, Bin} (pings
%% are answered by the server itself). Callbacks return {Commands, State} or
%% {Commands, State, hibernate}. Commands: {text, Data}, {binary, Data},
%% ping, {ping, Data}, pong, {pong, Data}, close, {close, Code, Reason},
%% {active, boolean()}, {deflate, boolean()}, {set_options, #{idle_timeout,
%% max_frame_size}}, {shutdown_reason, Term}. Frames of one batch of
%% commands are written with one send.
%%
%% Terminate reasons: stop (the handler closed), timeout, remote,
%% {remote, Code, Reason}, {error, badencoding | badframe | badsize | too_slow
%% | closed | Reason}, {crash, Class, Reason}.
%%
%% Options (defaults): idle_timeout (60000), hibernate_after (1000: ms
%% without a frame after which the process hibernates, within twice that;
%% or infinity), max_frame_size (1048576: the
%% largest message, reassembled and inflated), compress (false),
%% deflate_opts (#{}), validate_utf8 (true), active_n (100), req_filter (a
%% fun applied to the Req kept for terminate/3; by default the Req without
%% its headers and body-related keys), close_timeout (3000 ms to wait for
%% the client's close frame after ours), min_recv_rate ({1024, 30000}: a
%% frame that was started must bring at least Bytes in every Ms, else the
%% connection is closed with 1008; or off).
-module(mustang_websocket).

-export([is_upgrade_request/1]).
-export([upgrade/4]).
-export([upgrade/5]).
-export([takeover/8]).
-export([loop/1]).

-export([system_continue/3]).
-export([system_terminate/4]).
-export([system_code_change/4]).

%% What a Websocket callback returns to do: frames to send and the commands
%% listed under `websocket_handle/2`.
-type commands() :: [mustang_ws_frame:frame() | {active, boolean()} | {deflate, boolean()}
	| {set_options, map()} | {shutdown_reason, any()}].
%% What each Websocket callback returns.
-type call_result(State) :: {commands(), State} | {commands(), State, hibernate}.
%% The options of `upgrade/5`, as `mustang_opts:websocket_opts()`, which
%% `mustang_opts:validate_websocket/1` checks.
-type opts() :: #{
	idle_timeout => timeout(),
	hibernate_after => timeout(),
	max_frame_size => non_neg_integer() | infinity,
	compress => boolean(),
	deflate_opts => mustang_ws_deflate:deflate_opts(),
	validate_utf8 => boolean(),
	active_n => pos_integer(),
	req_filter => fun((mustang_req:req()) -> map()),
	close_timeout => timeout(),
	min_recv_rate => off | {pos_integer(), pos_integer()}
}.
-export_type([commands/0, call_result/1, opts/0]).

%% Optional. Called once in the Websocket process, after the handshake and
%% before the first frame: the place to subscribe to messages or register the
%% process (with `request_process => true`, `init/2` ran in the HTTP/1.1
%% request's process, not in the Websocket one), or to send a first
%% message. Returns `{Commands, State}` or `{Commands, State,
%% hibernate}` (the commands of `websocket_handle/2`).
%%
%%     websocket_init(State) ->
%%         ok = pg:join(chat, self()),
%%         {[{text, <<"welcome">>}], State}.
-callback websocket_init(State) -> call_result(State) when State :: any().

%% Called for every message and control frame from the client:
%% `{text, Bin}` and `{binary, Bin}` (whole messages, reassembled and
%% inflated; text is valid UTF-8 unless `validate_utf8` is off), `{ping, Bin}`
%% and `{pong, Bin}` (pings are already answered by Mustang). Returns
%% `{Commands, State}` or `{Commands, State, hibernate}`. Commands, carried
%% out in order and written with one send: `{text, iodata()}`,
%% `{binary, iodata()}`, `ping`, `{ping, Data}`, `pong`, `{pong, Data}`,
%% `close`, `{close, Code, Reason}`, `{active, boolean()}` (stop or resume
%% reading), `{deflate, boolean()}` (compress the next messages or not),
%% `{set_options, #{idle_timeout => _, max_frame_size => _}}`,
%% `{shutdown_reason, Term}` (the process' exit reason at the end).
%%
%%     websocket_handle({text, Text}, State) -> {[{text, Text}], State};
%%     websocket_handle(_Frame, State) -> {[], State}.
%%
%% An unknown command or a crash closes the session with 1011 and calls
%% `terminate/3` with `{crash, Class, Reason}`; one line is logged.
-callback websocket_handle({text | binary | ping | pong, binary()}, State)
	-> call_result(State) when State :: any().

%% Called for every Erlang message the Websocket process receives (Mustang's
%% own are kept out): a message from another process to push to the client.
%% Returns as `websocket_handle/2` does.
%%
%%     websocket_info({publish, Text}, State) -> {[{text, Text}], State};
%%     websocket_info(_, State) -> {[], State}.
-callback websocket_info(any(), State) -> call_result(State) when State :: any().

%% Optional. Called once at the end of the session with the reason, the Req
%% (without its headers unless the `req_filter` option says otherwise) and the
%% state: `stop` (the handler closed), `timeout` (`idle_timeout`), `remote` or
%% `{remote, Code, Reason}` (the client closed), `{error, badframe |
%% badencoding | badsize | too_slow | closed | Reason}`, `{crash, Class,
%% Reason}`, `{shutdown, Reason}` (the listener stopped or drained: the client
%% got 1001), or `{error, bad_handshake}` when the upgrade was refused. Its
%% result is ignored.
-callback terminate(any(), map(), any()) -> any().
-optional_callbacks([websocket_init/1, terminate/3]).

-define(GUID, "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").

-record(ws, {
	%% HTTP/1.1: the socket is ours.
	parent :: pid() | undefined,
	ref :: mustang:ref(),
	transport :: module() | undefined,
	socket :: mustang_transport:socket() | undefined,
	messages :: mustang_transport:messages() | undefined,
	dynbuf :: mustang_dynbuf:dynbuf() | undefined,
	%% HTTP/2: the stream, as {ConnPid, StreamID}; bytes handed to us and
	%% not acknowledged yet (acknowledging opens the stream window again).
	stream :: {pid(), pos_integer()} | undefined,
	unacked = 0 :: non_neg_integer(),
	%% The handler.
	handler :: module(),
	hstate :: any(),
	req :: map(),
	%% Parsing and the message in progress.
	frame :: mustang_ws_frame:state(),
	msg = none :: none | mustang_ws_frame:data_type(),
	%% min_recv_rate, and the current period (start, bytes) while a frame
	%% is in progress.
	min_rate = {1024, 30000} :: off | {pos_integer(), pos_integer()},
	rate = undefined :: undefined | mustang_conn_chores:recv_rate(),
	%% The message so far as one binary: a fragment kept as its own list
	%% entry cost 43-70 bytes per payload byte with 1-byte fragments (each a
	%% sub-binary holding on to the socket data it came in).
	msg_acc = <<>> :: binary(),
	utf8 = undefined :: undefined | mustang_utf8:state(),
	deflate = undefined :: undefined | mustang_ws_deflate:state(),
	deflate_on = true :: boolean(),
	%% Options.
	max_frame_size :: non_neg_integer() | infinity,
	validate_utf8 :: boolean(),
	idle_timeout :: timeout(),
	hibernate_after :: timeout(),
	close_timeout :: timeout(),
	%% HTTP/1.1: the listener's linger_timeout, for the socket's close.
	linger_timeout = 1000 :: timeout(),
	active_n :: pos_integer(),
	active = true :: boolean(),
	hibernate = false :: boolean(),
	%% Idle timeout: the quiet time (ms) the ticks added up.
	quiet = 0 :: non_neg_integer(),
	received = false :: boolean(),
	%% Frames to send at the end of the current batch, newest first.
	out = [] :: [iodata()],
	shutdown_reason = normal :: any(),
	logger :: module()
}).

%% Upgrade.

%% Whether the request asks for Websocket: GET with `connection: upgrade` and
%% `upgrade: websocket` over HTTP/1.1 (RFC 6455 4.1), or an extended CONNECT
%% with `:protocol` websocket over HTTP/2 (RFC 8441 4) or HTTP/3 (RFC 9220,
%% the same exchange). It does not check the
%% rest of the handshake (version, key): `upgrade/4,5` does.
%%
%%     init(Req, State) ->
%%         case mustang_websocket:is_upgrade_request(Req) of
%%             true -> {mustang_websocket, Req, State};
%%             false -> {ok, mustang_req:reply(426, #{<<"upgrade">> => <<"websocket">>}, Req), State}
%%         end.
-spec is_upgrade_request(mustang_req:req()) -> boolean().
is_upgrade_request(#{version := V, method := <<"CONNECT">>, protocol := Protocol})
		when V =:= 'HTTP/2'; V =:= 'HTTP/3' ->
	string:lowercase(Protocol) =:= <<"websocket">>;
is_upgrade_request(#{version := 'HTTP/1.1', method := <<"GET">>, headers := Headers}) ->
	mustang_http_hd:has_token(<<"connection">>, <<"upgrade">>, Headers)
		andalso mustang_http_hd:has_token(<<"upgrade">>, <<"websocket">>, Headers);
is_upgrade_request(_) ->
	false.

%% The Websocket upgrade with no options: `mustang_handler` calls it when
%% `init/2` returns `{mustang_websocket, Req, State}`. Not called by
%% applications. See `upgrade/5`.
-spec upgrade(Req, Env, module(), any()) -> {ok, Req, Env}
	when Req :: mustang_req:req(), Env :: mustang_middleware:env().
upgrade(Req, Env, Handler, HState) ->
	upgrade(Req, Env, Handler, HState, #{}).

%% The Websocket upgrade: `mustang_handler` calls it when `init/2` returns
%% `{mustang_websocket, Req, State, Opts}` (options: README's Websocket table,
%% `mustang_opts:websocket_opts()`). Over HTTP/1.1 the connection answers 101
%% and its process becomes the Websocket process; over HTTP/2 the stream's
%% process runs the session (RFC 8441). Response headers set in `init/2`
%% (`sec-websocket-protocol`, to choose a subprotocol) go with the 101 (or
%% 200 over HTTP/2).
%%
%% Invalid options raise `error({badarg, Reason})` (a programming error: the
%% client gets 500, the crash is logged). A handshake that is not valid gets
%% 400 (426 with `sec-websocket-version: 13` when the version is not 13;
%% 501 for an HTTP/2 CONNECT that is not Websocket), and the handler's
%% `terminate/3` is called with `{error, bad_handshake}`.
-spec upgrade(Req, Env, module(), any(), opts()) -> {ok, Req, Env}
	when Req :: mustang_req:req(), Env :: mustang_middleware:env().
upgrade(Req, Env, Handler, HState, Opts) ->
	%% A bad option is a programming error: the handler crashes (500, logged).
	case mustang_opts:validate_websocket(Opts) of
		ok -> ok;
		{error, Reason} -> error({badarg, Reason})
	end,
	case handshake(Req) of
		{ok, Key} ->
			{Extensions, Deflate} = negotiate(Req, Opts),
			Headers0 = maps:merge(maps:get(resp_headers, Req, #{}), Extensions),
			Args = {Handler, HState, filter_req(Req, Opts), Opts, Deflate},
			case Req of
				#{version := V} when V =:= 'HTTP/2'; V =:= 'HTTP/3' ->
					h2_upgrade(Req, Env, Headers0, Args);
				_ ->
					Headers = Headers0#{<<"connection">> => <<"Upgrade">>,
						<<"upgrade">> => <<"websocket">>,
						<<"sec-websocket-accept">> => accept(Key)},
					ok = switch_protocol(Req, Headers, Args),
					{ok, Req#{has_sent_resp => true}, Env}
			end;
		{error, Status, Headers} ->
			_ = mustang_handler:terminate({error, bad_handshake}, Req, HState, Handler),
			{ok, mustang_req:reply(Status, Headers, Req), Env}
	end.

handshake(#{version := V, method := <<"CONNECT">>, protocol := _, headers := Headers} = Req)
		when V =:= 'HTTP/2'; V =:= 'HTTP/3' ->
	case {is_upgrade_request(Req), Headers} of
		{true, #{<<"sec-websocket-version">> := <<"13">>}} -> {ok, none};
		{true, _} -> {error, 400, #{<<"sec-websocket-version">> => <<"13">>}};
		{false, _} -> {error, 501, #{}}
	end;
handshake(#{headers := Headers} = Req) ->
	case {is_upgrade_request(Req), Headers} of
		{true, #{<<"sec-websocket-version">> := <<"13">>, <<"sec-websocket-key">> := Key}} ->
			case valid_key(Key) of
				true -> {ok, Key};
				false -> {error, 400, #{}}
			end;
		{true, #{<<"sec-websocket-version">> := _}} ->
			%% RFC 6455 4.4: tell the client which version we speak.
			{error, 426, #{<<"sec-websocket-version">> => <<"13">>, <<"upgrade">> => <<"websocket">>}};
		_ ->
			{error, 400, #{}}
	end.

%% RFC 6455 4.2.1: a base64-encoded 16-byte value.
valid_key(Key) when byte_size(Key) =:= 24 ->
	try byte_size(base64:decode(Key)) =:= 16
	catch _:_ -> false
	end;
valid_key(_) ->
	false.

accept(Key) ->
	base64:encode(crypto:hash(sha, [Key, <<?GUID>>])).

negotiate(#{headers := #{<<"sec-websocket-extensions">> := Offers}}, Opts = #{compress := true}) ->
	case mustang_ws_deflate:negotiate(Offers, Opts) of
		{ok, Value, Deflate} -> {#{<<"sec-websocket-extensions">> => Value}, Deflate};
		none -> {#{}, undefined}
	end;
negotiate(_, _) ->
	{#{}, undefined}.

filter_req(Req, #{req_filter := Filter}) ->
	Filter(Req);
filter_req(Req, _) ->
	maps:with([method, version, scheme, host, port, path, qs, peer, sock, cert, ref,
		bindings, host_info, path_info], Req).

%% HTTP/1.1: the connection answers 101 and calls takeover/8 once the
%% request is done.
switch_protocol(Req, Headers, Args) ->
	mustang_req:cast({switch_protocol, Headers, ?MODULE, Args}, Req).

%% HTTP/2: this stream process runs the Websocket loop; the connection
%% relays the stream's DATA to it.
h2_upgrade(Req = #{pid := ConnPid, streamid := StreamID}, _Env, Headers,
		{Handler, HState, FilteredReq, Opts, Deflate}) ->
	ConnPid ! {{ConnPid, StreamID}, {headers, 200, Headers}},
	ok = stream_call(ConnPid, StreamID, relay),
	_ = Req,
	St = init_state(Handler, HState, FilteredReq, Opts, Deflate),
	start(St#ws{stream = {ConnPid, StreamID}, ref = maps:get(ref, Req)}, <<>>).

%% A call to the stream handlers that waits for their answer: relay (the
%% stream's DATA comes here as it arrives), or data (answered once written
%% or queued within the connection's limits).
stream_call(ConnPid, StreamID, Info) ->
	Ref = make_ref(),
	MRef = monitor(process, ConnPid),
	_ = case Info of
		relay ->
			ConnPid ! {{ConnPid, StreamID}, {relay, self(), Ref}};
		_ ->
			ConnPid ! {{ConnPid, StreamID}, Info},
			ConnPid ! {{ConnPid, StreamID}, {ack, self(), Ref}}
	end,
	receive
		{Ref, Result} ->
			demonitor(MRef, [flush]),
			Result;
		{'DOWN', MRef, process, _, _} ->
			exit({shutdown, connection_closed})
	end.

%% @private HTTP/1.1 takeover, called by the connection process after the 101.
-spec takeover(pid(), mustang:ref(), module(), mustang_transport:socket(), map(), binary(),
	mustang_dynbuf:dynbuf() | undefined, tuple()) -> no_return().
takeover(Parent, Ref, Transport, Socket, ProtoOpts, Buffer, DynBuf,
		{Handler, HState, Req, Opts, Deflate}) ->
	ok = mustang_conns_sup:protocol(Parent, websocket),
	St0 = init_state(Handler, HState, Req, Opts, Deflate),
	St = St0#ws{parent = Parent, ref = Ref, transport = Transport, socket = Socket,
		messages = Transport:messages(), dynbuf = DynBuf,
		active_n = maps:get(active_n, Opts, maps:get(active_n, ProtoOpts, 100)),
		linger_timeout = maps:get(linger_timeout, ProtoOpts, 1000),
		logger = maps:get(logger, ProtoOpts, logger)},
	start(St, Buffer).

init_state(Handler, HState, Req, Opts, Deflate) ->
	MaxFrameSize = maps:get(max_frame_size, Opts, 1048576),
	#ws{handler = Handler, hstate = HState, req = Req,
		frame = mustang_ws_frame:init(#{deflate => Deflate =/= undefined,
			max_frame_size => MaxFrameSize}),
		deflate = Deflate,
		max_frame_size = MaxFrameSize,
		validate_utf8 = maps:get(validate_utf8, Opts, true),
		idle_timeout = maps:get(idle_timeout, Opts, 60000),
		hibernate_after = maps:get(hibernate_after, Opts, 1000),
		close_timeout = maps:get(close_timeout, Opts, 3000),
		min_rate = maps:get(min_recv_rate, Opts, {1024, 30000}),
		active_n = maps:get(active_n, Opts, 100),
		logger = logger}.

start(St0, Buffer) ->
	St = start_idle_tick(St0),
	_ = set_active(St),
	St2 = case erlang:function_exported(St#ws.handler, websocket_init, 1) of
		true -> handler_call(St, websocket_init, undefined);
		false -> St
	end,
	%% Frames the client sent right behind its handshake request.
	case Buffer of
		<<>> -> after_call(St2);
		_ -> after_call(frames(St2#ws{received = true}, Buffer))
	end.

start_idle_tick(St = #ws{idle_timeout = Timeout, hibernate_after = HibernateAfter, quiet = Quiet}) ->
	ok = mustang_conn_chores:start_idle_tick(?MODULE, Timeout, HibernateAfter, Quiet),
	St.

%% Always {active, N}, between messages too (adaptive_active does not
%% apply): the {active, 1} of an idle HTTP/1.1 connection
%% (mustang_conn_chores:rearm_idle/3) pays only when the next message is
%% already there, and a Websocket client mostly sends after a pause;
%% {active, 1} then costs a failed recv, an epoll_ctl and a wake-up through
%% the poll thread per message (W6a echo, client and server on one core:
%% 31.0k frames/s adaptive, 33.7k with N).
set_active(#ws{socket = undefined}) -> ok;
set_active(#ws{active = false}) -> ok;
set_active(#ws{transport = Transport, socket = Socket, active_n = N}) ->
	mustang_conn_chores:rearm(Transport, Socket, N).

%% The loop.

%% @private The Websocket process' loop (exported for hibernation and sys).
-spec loop(#ws{}) -> no_return().
loop(St = #ws{socket = Socket, messages = Messages, stream = Stream, parent = Parent}) ->
	{OK, Closed, Error, Passive} = case Messages of
		undefined -> {none, none, none, none};
		_ -> Messages
	end,
	receive
		{OK, Socket, Data} ->
			St2 = St#ws{received = true, dynbuf = update_dynbuf(byte_size(Data), St)},
			data(St2, Data);
		{Passive, Socket} ->
			_ = set_active(St),
			loop(St);
		{Closed, Socket} ->
			terminate(St, {error, closed});
		{Error, Socket, Reason} ->
			terminate(St, {error, Reason});
		{Stream, {data, Data}} ->
			relayed(ack(St#ws{received = true}, byte_size(Data)), Data, 64);
		{Stream, fin} ->
			terminate(St, {error, closed});
		{?MODULE, idle_tick} ->
			idle_tick(St);
		{'EXIT', Parent, Reason} when Parent =/= undefined ->
			%% The listener stops: say so to the client (1001, going away).
			going_away(St, {shutdown, Reason});
		{Stream, going_away} ->
			%% Over HTTP/2: the connection stops.
			going_away(St, {shutdown, going_away});
		{system, From, Request} ->
			%% Over HTTP/2 the process is a request process: its parent is
			%% the connection.
			SysParent = case Stream of
				{ConnPid, _} -> ConnPid;
				_ -> Parent
			end,
			sys:handle_system_msg(Request, From, SysParent, ?MODULE, [], St);
		Msg ->
			after_call(handler_call(St, websocket_info, Msg))
	end.

going_away(St, Reason) ->
	close(send_frames(St#ws{out = [mustang_ws_frame:frame({close, 1001, <<>>})]}), Reason).

update_dynbuf(Size, #ws{transport = Transport, socket = Socket, dynbuf = DynBuf}) ->
	mustang_dynbuf:update_socket(Size, DynBuf, Transport, Socket).

%% HTTP/2: bytes handled are acknowledged in steps, which lets the
%% connection open the stream window again; an inactive handler stops
%% acknowledging, so the client stops sending.
ack(St = #ws{unacked = Unacked}, Size) when Unacked + Size < 65536 ->
	St#ws{unacked = Unacked + Size};
ack(St = #ws{active = false, unacked = Unacked}, Size) ->
	St#ws{unacked = Unacked + Size};
ack(St = #ws{stream = {ConnPid, StreamID}, unacked = Unacked}, Size) ->
	ConnPid ! {{ConnPid, StreamID}, {flow, Unacked + Size}},
	St#ws{unacked = 0}.

idle_tick(St = #ws{received = Received, quiet = Quiet, idle_timeout = Timeout,
		hibernate_after = HibernateAfter}) ->
	case mustang_conn_chores:idle_tick(Received, Quiet, false, Timeout, HibernateAfter) of
		timeout ->
			close(send_frames(St#ws{out = [mustang_ws_frame:frame({close, 1000, <<>>}) | St#ws.out]}),
				timeout);
		{hibernate, Quiet2} ->
			proc_lib:hibernate(?MODULE, loop,
				[start_idle_tick(St#ws{received = false, quiet = Quiet2})]);
		{continue, Quiet2} ->
			loop(start_idle_tick(St#ws{received = false, quiet = Quiet2}))
	end.

%% Incoming bytes: every frame they hold is handled, and the frames the
%% handler answers with are written with one send at the end.
data(St, Data) ->
	after_call(incoming(St, Data)).

%% HTTP/2: the connection relays each DATA frame as a message. Those
%% already in the mailbox are handled before the answers are written, so
%% that a burst of small messages costs one call to the connection, not
%% one per message.
relayed(St0 = #ws{stream = Stream}, Data, Left) ->
	St = incoming(St0, Data),
	receive
		{Stream, {data, More}} when Left > 0 ->
			relayed(ack(St, byte_size(More)), More, Left - 1)
	after 0 ->
		after_call(St)
	end.

%% min_recv_rate (mustang_conn_chores:recv_rate/3) while a frame is in
%% progress: a frame slower than the minimum closes the connection with 1008.
incoming(St = #ws{min_rate = off}, Data) ->
	frames(St, Data);
incoming(St0 = #ws{min_rate = MinRate, rate = Rate}, Data) ->
	St = case Rate of
		undefined ->
			St0;
		_ ->
			case mustang_conn_chores:recv_rate(MinRate, Rate, byte_size(Data)) of
				{ok, Rate2} -> St0#ws{rate = Rate2};
				too_slow -> protocol_error(St0, 1008, 'The frame arrived slower than min_recv_rate allows.')
			end
	end,
	St2 = frames(St, Data),
	case {mustang_ws_frame:in_frame(St2#ws.frame), St2#ws.rate} of
		{false, _} -> St2#ws{rate = undefined};
		{true, undefined} -> St2#ws{rate = mustang_conn_chores:recv_rate_start()};
		{true, _} -> St2
	end.

frames(St = #ws{frame = FrameSt}, Data) ->
	case mustang_ws_frame:parse(Data, FrameSt) of
		{more, FrameSt2} ->
			St#ws{frame = FrameSt2};
		{data, Type, Compressed, Fin, Payload, Rest, FrameSt2} ->
			frames(message_piece(St#ws{frame = FrameSt2}, Type, Compressed, Fin, Payload), Rest);
		{frame, {ping, Payload}, Rest, FrameSt2} ->
			St2 = St#ws{frame = FrameSt2, out = [mustang_ws_frame:frame({pong, Payload}) | St#ws.out]},
			frames(handler_call(St2, websocket_handle, {ping, Payload}), Rest);
		{frame, {pong, Payload}, Rest, FrameSt2} ->
			frames(handler_call(St#ws{frame = FrameSt2}, websocket_handle, {pong, Payload}), Rest);
		{frame, close, _, _} ->
			remote_close(St, 1000, remote);
		{frame, {close, Code, Reason}, _, _} ->
			remote_close(St, Code, {remote, Code, Reason});
		{error, {ws_error, Code, Reason}} ->
			protocol_error(St, Code, Reason)
	end.

%% A piece of the current message: inflated, validated (text), kept until
%% the message ends.
message_piece(St, Type, true, Fin, Payload) ->
	case mustang_ws_deflate:inflate(Payload, Fin, St#ws.deflate, St#ws.max_frame_size) of
		{ok, Inflated, Deflate} ->
			message_pieces(St#ws{deflate = Deflate}, Type, Fin, Inflated);
		{error, {ws_error, Code, Reason}} ->
			protocol_error(St, Code, Reason)
	end;
message_piece(St, Type, false, Fin, Payload) ->
	message_pieces(St, Type, Fin, [Payload]).

message_pieces(St = #ws{msg_acc = Acc}, Type, Fin, Pieces) ->
	St2 = validate(St#ws{msg = Type, msg_acc = append(Acc, Pieces)}, Type, Fin, Pieces),
	case Fin of
		nofin ->
			St2;
		fin ->
			handler_call(St2#ws{msg = none, msg_acc = <<>>, utf8 = undefined}, websocket_handle,
				{Type, St2#ws.msg_acc})
	end.

%% A message in one frame (the usual case) is not copied; later fragments
%% are appended in place (the runtime grows the binary geometrically).
append(<<>>, [Piece]) ->
	Piece;
append(Acc, Pieces) ->
	lists:foldl(fun(Piece, Bin) -> <<Bin/binary, Piece/binary>> end, Acc, Pieces).

validate(St = #ws{validate_utf8 = true, utf8 = Utf8State0}, text, Fin, Pieces) ->
	Utf8State = case Utf8State0 of
		undefined -> mustang_utf8:init();
		_ -> Utf8State0
	end,
	case validate_pieces(Pieces, Utf8State) of
		{ok, Utf8State2} when Fin =:= nofin ->
			St#ws{utf8 = Utf8State2};
		{ok, Utf8State2} ->
			case mustang_utf8:finish(Utf8State2) of
				ok -> St;
				{error, {ws_error, Code, Reason}} -> protocol_error(St, Code, Reason)
			end;
		{error, {ws_error, Code, Reason}} ->
			protocol_error(St, Code, Reason)
	end;
validate(St, _, _, _) ->
	St.

validate_pieces([], Utf8State) ->
	{ok, Utf8State};
validate_pieces([Piece | Rest], Utf8State) ->
	case mustang_utf8:validate(Piece, Utf8State) of
		{ok, Utf8State2} -> validate_pieces(Rest, Utf8State2);
		Error -> Error
	end.

%% The handler.

handler_call(St = #ws{handler = Handler, hstate = HState}, Callback, Arg) ->
	try case Callback of
		websocket_init -> Handler:websocket_init(HState);
		_ -> Handler:Callback(Arg, HState)
	end of
		{Commands, HState2} ->
			commands(Commands, St#ws{hstate = HState2});
		{Commands, HState2, hibernate} ->
			commands(Commands, St#ws{hstate = HState2, hibernate = true});
		Other ->
			handler_crash(St, error, {bad_return_value, Other}, [])
	catch Class:Reason:Stacktrace ->
		handler_crash(St, Class, Reason, Stacktrace)
	end.

-spec handler_crash(#ws{}, atom(), any(), list()) -> no_return().
handler_crash(St = #ws{handler = Handler}, Class, Reason, Stacktrace) ->
	log(St, error, "mustang ~p: Websocket handler ~p crashed: ~0p:~0p~n~p",
		[St#ws.ref, Handler, Class, Reason, Stacktrace]),
	St2 = St#ws{out = [mustang_ws_frame:frame({close, 1011, <<>>}) | St#ws.out]},
	close(send_frames(St2), {crash, Class, Reason}).

commands([], St) ->
	St;
commands([{text, Data} | Rest], St) ->
	commands(Rest, out_message(St, text, Data));
commands([{binary, Data} | Rest], St) ->
	commands(Rest, out_message(St, binary, Data));
commands([Frame | Rest], St) when Frame =:= ping; Frame =:= pong;
		element(1, Frame) =:= ping; element(1, Frame) =:= pong ->
	commands(Rest, St#ws{out = [mustang_ws_frame:frame(Frame) | St#ws.out]});
commands([close | _], St) ->
	local_close(St, mustang_ws_frame:frame(close), stop);
commands([{close, Code, Reason} | _], St) ->
	local_close(St, mustang_ws_frame:frame({close, Code, Reason}), stop);
commands([{active, Active} | Rest], St) when is_boolean(Active) ->
	commands(Rest, set_active_mode(St, Active));
commands([{deflate, On} | Rest], St) when is_boolean(On) ->
	commands(Rest, St#ws{deflate_on = On});
commands([{set_options, Opts} | Rest], St) ->
	St2 = case Opts of
		#{idle_timeout := Timeout} -> St#ws{idle_timeout = Timeout};
		_ -> St
	end,
	St3 = case Opts of
		#{max_frame_size := Max} ->
			St2#ws{max_frame_size = Max,
				frame = mustang_ws_frame:init(#{deflate => St2#ws.deflate =/= undefined,
					max_frame_size => Max})};
		_ -> St2
	end,
	commands(Rest, St3);
commands([{shutdown_reason, Reason} | Rest], St) ->
	commands(Rest, St#ws{shutdown_reason = Reason});
commands([Command | _], St) ->
	handler_crash(St, error, {invalid_command, Command}, []).

out_message(St = #ws{deflate = undefined}, Type, Data) ->
	St#ws{out = [mustang_ws_frame:frame({Type, Data}) | St#ws.out]};
out_message(St = #ws{deflate_on = false}, Type, Data) ->
	St#ws{out = [mustang_ws_frame:frame({Type, Data}) | St#ws.out]};
out_message(St = #ws{deflate = Deflate}, Type, Data) ->
	{Compressed, Deflate2} = mustang_ws_deflate:deflate(Data, Deflate),
	St#ws{deflate = Deflate2, out = [mustang_ws_frame:compressed_frame(Type, Compressed) | St#ws.out]}.

set_active_mode(St = #ws{socket = undefined}, Active) ->
	St2 = St#ws{active = Active},
	case Active of
		true -> ack(St2, 0);
		false -> St2
	end;
set_active_mode(St = #ws{active = Active}, Active) ->
	St;
set_active_mode(St = #ws{transport = Transport, socket = Socket}, false) ->
	_ = Transport:setopts(Socket, [{active, false}]),
	St#ws{active = false};
set_active_mode(St, true) ->
	St2 = St#ws{active = true},
	_ = set_active(St2),
	St2.

%% After a batch: send what the handler wrote, then wait for more.
after_call(St0) ->
	St = send_frames(St0),
	case St#ws.hibernate of
		true -> proc_lib:hibernate(?MODULE, loop, [St#ws{hibernate = false}]);
		false -> loop(St)
	end.

send_frames(St = #ws{out = []}) ->
	St;
send_frames(St = #ws{out = Out}) ->
	case write(St, lists:reverse(Out)) of
		ok -> St#ws{out = []};
		{error, Reason} -> terminate(St#ws{out = []}, {error, Reason})
	end.

write(#ws{transport = Transport, socket = Socket}, Data) when Socket =/= undefined ->
	Transport:send(Socket, Data);
write(#ws{stream = {ConnPid, StreamID}}, Data) ->
	case stream_call(ConnPid, StreamID, {data, nofin, Data}) of
		ok -> ok;
		{error, Reason} -> {error, Reason}
	end.

%% Closing.

%% The client closed: answer with the same code (1000 when it gave none),
%% then close the connection (RFC 6455 5.5.1, 7.1.2).
-spec remote_close(#ws{}, non_neg_integer(), any()) -> no_return().
remote_close(St, Code, Reason) ->
	St2 = send_frames(St#ws{out = [mustang_ws_frame:frame({close, Code, <<>>}) | St#ws.out]}),
	terminate(St2, Reason).

-spec protocol_error(#ws{}, 1002 | 1007 | 1008 | 1009, atom()) -> no_return().
protocol_error(St, Code, Reason) ->
	log(St, debug, "mustang ~p: Websocket client ~s closed with ~b: ~s",
		[St#ws.ref, peer(St), Code, Reason]),
	St2 = St#ws{out = [mustang_ws_frame:frame({close, Code, <<>>}) | St#ws.out]},
	Error = case Code of
		1002 -> badframe;
		1007 -> badencoding;
		1008 -> too_slow;
		1009 -> badsize
	end,
	close(send_frames(St2), {error, Error}).

-spec local_close(#ws{}, iodata(), any()) -> no_return().
local_close(St, CloseFrame, Reason) ->
	close(send_frames(St#ws{out = [CloseFrame | St#ws.out]}), Reason).

%% Our close frame was sent: wait for the client's (discarding data) for up
%% to close_timeout, then close the connection.
-spec close(#ws{}, any()) -> no_return().
close(St = #ws{close_timeout = Timeout}, Reason) ->
	Deadline = case Timeout of
		infinity -> infinity;
		_ -> erlang:monotonic_time(millisecond) + Timeout
	end,
	_ = set_active(St#ws{active = true}),
	close_wait(St, Reason, Deadline).

close_wait(St = #ws{socket = Socket, messages = Messages, stream = Stream}, Reason, Deadline) ->
	{OK, Closed, Error, Passive} = case Messages of
		undefined -> {none, none, none, none};
		_ -> Messages
	end,
	Wait = case Deadline of
		infinity -> infinity;
		_ -> max(0, Deadline - erlang:monotonic_time(millisecond))
	end,
	receive
		{OK, Socket, Data} -> close_data(St, Reason, Deadline, Data);
		{Stream, {data, Data}} -> close_data(St, Reason, Deadline, Data);
		{Passive, Socket} ->
			_ = set_active(St),
			close_wait(St, Reason, Deadline);
		{Closed, Socket} -> terminate(St, Reason);
		{Error, Socket, _} -> terminate(St, Reason);
		{Stream, fin} -> terminate(St, Reason)
	after Wait ->
		terminate(St, Reason)
	end.

close_data(St = #ws{frame = FrameSt}, Reason, Deadline, Data) ->
	case mustang_ws_frame:parse(Data, FrameSt) of
		{more, FrameSt2} -> close_wait(St#ws{frame = FrameSt2}, Reason, Deadline);
		{data, _, _, _, _, Rest, FrameSt2} -> close_data(St#ws{frame = FrameSt2}, Reason, Deadline, Rest);
		{frame, {close, _, _}, _, _} -> terminate(St, Reason);
		{frame, close, _, _} -> terminate(St, Reason);
		{frame, _, Rest, FrameSt2} -> close_data(St#ws{frame = FrameSt2}, Reason, Deadline, Rest);
		{error, _} -> terminate(St, Reason)
	end.

-spec terminate(#ws{}, any()) -> no_return().
terminate(St = #ws{handler = Handler, hstate = HState, req = Req}, Reason) ->
	_ = case erlang:function_exported(Handler, terminate, 3) of
		true ->
			try Handler:terminate(Reason, Req, HState)
			catch Class:Reason2:Stacktrace ->
				log(St, error, "mustang ~p: Websocket handler ~p crashed in terminate/3: ~0p:~0p~n~p",
					[St#ws.ref, Handler, Class, Reason2, Stacktrace])
			end;
		false -> ok
	end,
	_ = case St#ws.deflate of
		undefined -> ok;
		Deflate -> mustang_ws_deflate:close(Deflate)
	end,
	case St of
		#ws{socket = undefined, stream = {ConnPid, StreamID}} ->
			%% End our side of the stream; the connection ends the rest.
			ConnPid ! {{ConnPid, StreamID}, {data, fin, <<>>}};
		#ws{transport = Transport, socket = Socket, linger_timeout = Linger} ->
			%% A close with unread data sends a reset, which can destroy our
			%% close frame before the client reads it: half-close, then read
			%% what the client still sends (mustang_conn_chores:linger/3).
			_ = Transport:shutdown(Socket, write),
			mustang_conn_chores:linger(Transport, Socket, Linger),
			_ = Transport:close(Socket)
	end,
	exit(exit_reason(St#ws.shutdown_reason, Reason)).

exit_reason(normal, {shutdown, _} = Shutdown) -> Shutdown;
exit_reason(normal, _) -> normal;
exit_reason(ShutdownReason, _) -> ShutdownReason.

peer(#ws{req = Req}) -> mustang_conn_chores:peer(maps:get(peer, Req, undefined)).

log(#ws{logger = Logger}, Level, Format, Args) ->
	mustang_conn_chores:log(Logger, Level, Format, Args).

%% sys callbacks (HTTP/1.1: the process is the connection's).

%% @private sys callback.
-spec system_continue(pid(), [sys:debug_option()], #ws{}) -> no_return().
system_continue(_, _, St) ->
	loop(St).

%% @private sys callback.
-spec system_terminate(any(), pid(), [sys:debug_option()], #ws{}) -> no_return().
system_terminate(Reason, _, _, St) ->
	terminate(St, {shutdown, Reason}).

%% @private sys callback.
-spec system_code_change(Misc, module(), any(), any()) -> {ok, Misc} when Misc :: #ws{}.
system_code_change(Misc, _, _, _) ->
	{ok, Misc}.
