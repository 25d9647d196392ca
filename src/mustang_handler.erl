%% The handler middleware: calls the handler chosen by the router
%% (Env keys handler and handler_opts). A plain handler returns
%% {ok, Req, State} from init/2; other return values name a sub-protocol
%% module (mustang_websocket, mustang_rest, mustang_loop, or your own) that
%% takes over through its upgrade/4,5 callback.
-module(mustang_handler).
-behaviour(mustang_middleware).

-export([execute/2]).
-export([terminate/4]).

-callback init(Req, any()) -> {ok | module(), Req, any()} | {module(), Req, any(), any()}
	when Req :: mustang_req:req().
-callback terminate(any(), mustang_req:req(), any()) -> ok.
-optional_callbacks([terminate/3]).

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

-spec terminate(any(), mustang_req:req() | undefined, any(), module()) -> ok.
terminate(Reason, Req, State, Handler) ->
	case erlang:function_exported(Handler, terminate, 3) of
		true -> Handler:terminate(Reason, Req, State);
		false -> ok
	end.
