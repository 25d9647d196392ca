%% Loop handlers (Cowboy's cowboy_loop): a handler whose init/2 returns
%% {mustang_loop, Req, State} (or with hibernate or a timeout) waits for
%% Erlang messages and gets each one in info/3, for long polling and
%% server-sent events. The loop ends when info/3 returns {stop, Req, State};
%% terminate/3 is called then, or when the handler crashes or the client
%% goes away. If nothing was sent when the loop ends, the client gets 204.
%%
%% Timeout (Cowboy 2.11 and later): when no message arrives within Timeout
%% ms, info/3 gets the atom `timeout`; returning {stop, Req, State} from it
%% ends the request (204 if nothing was sent), and nothing is logged. The
%% timeout given with {ok, Req, State, Timeout} stays in force for the
%% following messages until another one is given; the default is infinity.
%%
%% Terminate reasons: stop (info/3 returned stop), {crash, Class, Reason}
%% (the handler crashed; the request is logged once and answered 500 if
%% nothing was sent), and {shutdown, connection_closed} when the client
%% closed the connection ({shutdown, stream_reset} or {shutdown,
%% {stream_error, Code}} when an HTTP/2 client reset the stream, and
%% {shutdown, {socket_error, Reason}} when the socket failed). After such a
%% shutdown the handler is not called again.
%%
%% Where it runs: in the request process (HTTP/2, and HTTP/1.1 with
%% request_process => true), which traps exits while in the loop so that
%% the connection's stop reaches terminate/3 (an exit from another linked
%% process still ends the handler as if exits were not trapped, unless the
%% handler trapped exits itself), and hibernates on `hibernate`. Or inline,
%% in the HTTP/1.1 connection process (the default): the messages are the
%% handler's except the connection's own (socket data, kept for later
%% reads and the next request; timers; supervisor and parent messages,
%% handled once the loop ends; sys requests, answered while the loop waits,
%% by mustang_http1_stream); a closed socket ends the loop; `hibernate`
%% only garbage collects the process, whose stack cannot be dropped while
%% the handler runs.
%%
%% Both kinds of process answer sys (get_state, get_status, suspend and
%% resume, change_code, terminate) while the handler waits for a message.
-module(mustang_loop).

-export([upgrade/4]).
-export([upgrade/5]).
-export([resume/6]).

-export([system_continue/3]).
-export([system_terminate/4]).
-export([system_code_change/4]).

%% The handler's `init(Req, Opts)`: returns `{mustang_loop, Req, State}` to
%% enter the loop, `{mustang_loop, Req, State, hibernate}` to hibernate until
%% the first message, or `{mustang_loop, Req, State, Timeout}` to get
%% `timeout` in `info/3` when no message came for Timeout ms (or `{ok, Req,
%% State}` for a plain reply). Start a streamed response here for server-sent
%% events.
%%
%%     init(Req0, State) ->
%%         Req = mustang_req:stream_reply(200, #{<<"content-type">> => <<"text/event-stream">>}, Req0),
%%         ok = pg:join(events, self()),
%%         {mustang_loop, Req, State}.
-callback init(Req, any()) -> {ok | module(), Req, any()} | {module(), Req, any(), any()}
	when Req :: mustang_req:req().

%% Called for every Erlang message the handler's process receives (Mustang's
%% own messages are kept out), and with `timeout` when a timeout was given and
%% no message came in time. Returns `{ok, Req, State}` to wait for the next
%% message, `{ok, Req, State, hibernate}` to hibernate first (inline:
%% only a garbage collection), `{ok, Req, State, Timeout}` to set a new
%% timeout (`infinity` removes it), or `{stop, Req, State}` to end the
%% request (204 if nothing was sent; a streamed response is finished).
%%
%%     info({event, Data}, Req, State) ->
%%         ok = mustang_req:stream_events(#{data => Data}, nofin, Req),
%%         {ok, Req, State};
%%     info(timeout, Req, State) ->
%%         {stop, Req, State}.
%%
%% A crash answers 500 if nothing was sent (or cuts the response short) and
%% calls `terminate/3` with `{crash, Class, Reason}`.
-callback info(any(), Req, State)
	-> {ok, Req, State}
	| {ok, Req, State, hibernate | timeout()}
	| {stop, Req, State}
	when Req :: mustang_req:req(), State :: any().

%% Optional. Called once when the loop ends, with the reason: `stop` (`info/3`
%% returned stop), `{crash, Class, Reason}`, or, when the client went away,
%% `{shutdown, connection_closed}`, `{shutdown, stream_reset}`, `{shutdown,
%% {stream_error, Code}}` or `{shutdown, {socket_error, Reason}}` (the
%% handler is not called again after those). Its result is ignored.
-callback terminate(any(), mustang_req:req(), any()) -> ok.
-optional_callbacks([terminate/3]).

-type result() :: {ok, mustang_req:req(), mustang_middleware:env()}
	| {suspend, module(), atom(), [any()]}.

%% Enters the loop with no timeout: `mustang_handler` calls it when `init/2`
%% returns `{mustang_loop, Req, State}`. Not called by applications.
-spec upgrade(Req, Env, module(), any()) -> result()
	when Req :: mustang_req:req(), Env :: mustang_middleware:env().
upgrade(Req, Env, Handler, State) ->
	upgrade(Req, Env, Handler, State, infinity).

%% Enters the loop with a timeout in ms, or hibernating first:
%% `mustang_handler` calls it when `init/2` returns `{mustang_loop, Req,
%% State, Timeout | hibernate}`. Not called by applications.
-spec upgrade(Req, Env, module(), any(), hibernate | timeout()) -> result()
	when Req :: mustang_req:req(), Env :: mustang_middleware:env().
upgrade(Req, Env, Handler, State, Opt) ->
	Trap = case Req of
		#{mode := inline} -> inline;
		_ -> process_flag(trap_exit, true)
	end,
	next(Req, Env, {Handler, Trap, infinity}, State, Opt).

%% @private The loop after hibernation (mustang_middleware resumes it).
-spec resume(mustang_req:req(), mustang_middleware:env(), module(), inline | boolean(),
	timeout(), any()) -> result().
resume(Req, Env, Handler, Trap, Timeout, State) ->
	wait(Req, Env, {Handler, Trap, Timeout}, State, start_timer(Timeout)).

%% Loop = {Handler, Trap, Timeout}: Trap is inline, or whether the request
%% process trapped exits before the loop.
next(Req, Env, Loop = {Handler, Trap, Timeout}, State, hibernate) ->
	case Trap of
		inline ->
			_ = erlang:garbage_collect(),
			wait(Req, Env, Loop, State, start_timer(Timeout));
		_ ->
			{suspend, ?MODULE, resume, [Req, Env, Handler, Trap, Timeout, State]}
	end;
next(Req, Env, {Handler, Trap, _}, State, Timeout) ->
	wait(Req, Env, {Handler, Trap, Timeout}, State, start_timer(Timeout)).

start_timer(infinity) -> undefined;
start_timer(Timeout) -> erlang:start_timer(Timeout, self(), ?MODULE).

cancel_timer(undefined) ->
	ok;
cancel_timer(Timer) ->
	_ = erlang:cancel_timer(Timer),
	receive
		{timeout, Timer, ?MODULE} -> ok
	after 0 ->
		ok
	end.

wait(Req, Env, Loop, State, Timer) ->
	case receive_message(Req, Loop) of
		{message, {timeout, Timer, ?MODULE}, Req2} ->
			call(Req2, Env, Loop, State, timeout);
		{message, Message, Req2} ->
			cancel_timer(Timer),
			call(Req2, Env, Loop, State, Message);
		{shutdown, Reason, Req2} ->
			cancel_timer(Timer),
			shutdown(Req2, Env, Loop, State, Reason);
		{system, From, Request, Req2 = #{pid := Conn}} ->
			%% A request process answers sys (get_state, suspend, code
			%% change...); its parent is the connection.
			sys:handle_system_msg(Request, From, Conn, ?MODULE, [], {Req2, Env, Loop, State, Timer})
	end.

%% Inline: the stream sorts the connection's messages out (socket data,
%% its timers...) and tells when the socket closed.
receive_message(Req = #{mode := inline}, _) ->
	case mustang_inline:info(Req, mustang_loop_receive, infinity) of
		{{message, Message}, Req2} -> {message, Message, Req2};
		{{error, closed}, Req2} -> {shutdown, {shutdown, connection_closed}, Req2};
		{{terminate, Reason}, Req2} -> {shutdown, Reason, Req2};
		{{error, Reason}, Req2} -> {shutdown, {shutdown, {socket_error, Reason}}, Req2}
	end;
receive_message(Req = #{pid := Conn}, Loop = {_, Trap, _}) ->
	receive
		{'EXIT', Conn, Reason} ->
			{shutdown, Reason, Req};
		{'EXIT', _, normal} when not Trap ->
			%% Exits are trapped for the connection's sake only: another
			%% linked process ends the handler as it would have.
			receive_message(Req, Loop);
		{'EXIT', _, Reason} when not Trap ->
			exit(Reason);
		{system, From, Request} ->
			{system, From, Request, Req};
		Message ->
			{message, Message, Req}
	end.

call(Req, Env, Loop = {Handler, _, _}, State, Message) ->
	try Handler:info(Message, Req, State) of
		{ok, Req2, State2} ->
			next(Req2, Env, Loop, State2, element(3, Loop));
		{ok, Req2, State2, Opt} ->
			next(Req2, Env, Loop, State2, Opt);
		{stop, Req2, State2} ->
			done(Req2, Env, Loop, State2, stop)
	catch Class:Reason:Stacktrace ->
		_ = mustang_handler:terminate({crash, Class, Reason}, Req, State, Handler),
		erlang:raise(Class, Reason, Stacktrace)
	end.

done(Req, Env, {Handler, Trap, _}, State, Reason) ->
	Result = mustang_handler:terminate(Reason, Req, State, Handler),
	_ = Trap =:= false andalso process_flag(trap_exit, false),
	{ok, Req, Env#{result => Result}}.

%% The client went away (or the connection stops): the handler is told, and
%% the request ends without a response (there is no one to send it to).
-spec shutdown(mustang_req:req(), mustang_middleware:env(), {module(), inline | boolean(), timeout()},
	any(), any()) -> no_return().
shutdown(Req, _, {Handler, _, _}, State, Reason) ->
	_ = mustang_handler:terminate(Reason, Req, State, Handler),
	exit(shutdown_reason(Reason)).

%% sys callbacks (request processes). The state is {Req, Env, Loop,
%% HandlerState, Timer}; sys:terminate/2 ends the loop as a connection stop
%% does: terminate/3 gets the reason, the process exits with {shutdown, Reason}.

%% @private sys callback of request processes (the state is {Req, Env, Loop,
%% HandlerState, Timer}).
-spec system_continue(pid(), [sys:debug_option()], tuple()) -> result().
system_continue(_, _, {Req, Env, Loop, State, Timer}) ->
	wait(Req, Env, Loop, State, Timer).

%% @private sys callback: sys:terminate/2 ends the loop as a connection stop
%% does (terminate/3 gets {shutdown, Reason}).
-spec system_terminate(any(), pid(), [sys:debug_option()], tuple()) -> no_return().
system_terminate(Reason, _, _, {Req, Env, Loop, State, Timer}) ->
	cancel_timer(Timer),
	shutdown(Req, Env, Loop, State, Reason).

%% @private sys callback.
-spec system_code_change(Misc, module(), any(), any()) -> {ok, Misc} when Misc :: tuple().
system_code_change(Misc, _, _, _) ->
	{ok, Misc}.

shutdown_reason(Reason = {shutdown, _}) -> Reason;
shutdown_reason(Reason) -> {shutdown, Reason}.
