%% The handler middleware: calls the handler chosen by the router
%% (Env keys handler and handler_opts). A plain handler returns
%% {ok, Req, State} from init/2; other return values name a sub-protocol
%% module (mustang_websocket, mustang_rest, mustang_loop, or your own) that
%% takes over through its upgrade/4,5 callback.
-module(mustang_handler).
-behaviour(mustang_middleware).

-export([execute/2]).
-export([terminate/4]).

%% The handler's entry point, `init(Req, Opts)`, with Opts the route's third
%% element. Returns `{ok, Req, State}` when the request is done (reply with
%% `mustang_req:reply/2,3,4` first; without a reply the client gets 204), or
%% hands over to a sub-protocol: `{mustang_websocket, Req, State}`,
%% `{mustang_rest, Req, State}`, `{mustang_loop, Req, State}`, or
%% `{Module, Req, State, Opts}` for options.
%%
%%     init(Req, Opts) ->
%%         {ok, mustang_req:reply(200, #{<<"content-type">> => <<"text/plain">>},
%%             <<"Hello world!">>, Req), Opts}.
-callback init(Req, any()) -> {ok | module(), Req, any()} | {module(), Req, any(), any()}
	when Req :: mustang_req:req().

%% Optional. Called once after `init/2` returned `{ok, Req, State}` (Reason
%% `normal`) or crashed (`{crash, Class, Reason}`, with the handler options as
%% State). Sub-protocols call it at their end with their own reasons. Its
%% result is put in the middleware Env as `result`; Mustang does not read
%% it.
-callback terminate(any(), mustang_req:req(), any()) -> ok.
-optional_callbacks([terminate/3]).

%% The handler middleware (last in the default `middlewares`): calls
%% `Handler:init(Req, Opts)` for the Env's `handler` and `handler_opts` (which
%% the router put there). `{ok, Req, State}` ends the request: `terminate/3`
%% runs and its result goes to the Env's `result`; `{Module, Req, State}` or
%% `{Module, Req, State, Opts}` hands the request to `Module:upgrade/4,5`
%% (`mustang_websocket`, `mustang_rest`, `mustang_loop`, or a module of your
%% own). When `init/2` crashes, `terminate/3` gets `{crash, Class, Reason}`
%% and the crash goes on (the client gets 500 and it is logged once).
-spec execute(Req, Env) -> {ok, Req, Env} | {suspend, module(), atom(), [any()]} | {stop, Req}
	when Req :: mustang_req:req(), Env :: mustang_middleware:env().
execute(Req, Env = #{handler := Handler, handler_opts := HandlerOpts}) ->
	try Handler:init(Req, HandlerOpts) of
		{ok, Req2, State} ->
			Result = terminate(normal, Req2, State, Handler),
			{ok, Req2, Env#{result => Result}};
		{Mod, Req2, State} ->
			Mod:upgrade(Req2, Env, Handler, State);
		{Mod, Req2, State, Opts} ->
			Mod:upgrade(Req2, Env, Handler, State, Opts)
	catch Class:Reason:Stacktrace ->
		_ = terminate({crash, Class, Reason}, Req, HandlerOpts, Handler),
		erlang:raise(Class, Reason, Stacktrace)
	end.

%% Calls `Handler:terminate(Reason, Req, State)` when the handler exports it
%% and returns its result; `ok` otherwise. For sub-protocol modules (such as
%% `mustang_websocket`, `mustang_loop` or your own) that end a handler.
-spec terminate(any(), mustang_req:req() | undefined, any(), module()) -> ok.
terminate(Reason, Req, State, Handler) ->
	case erlang:function_exported(Handler, terminate, 3) of
		true -> Handler:terminate(Reason, Req, State);
		false -> ok
	end.
