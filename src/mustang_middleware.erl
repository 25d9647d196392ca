%% The middleware behaviour (same shape as cowboy_middleware).
%%
%% A request runs through the middlewares listed in the protocol option
%% `middlewares', in order. Each one gets the Req and the environment Env, and
%% returns one of:
%%
%% - {ok, Req, Env}: go on with the next middleware;
%% - {suspend, Module, Function, Args}: hibernate the request until a message
%%   arrives, then resume with apply(Module, Function, Args);
%% - {stop, Req}: stop processing this request (a response may have been sent).
%%
%% Env starts as the protocol option `env' (for example #{dispatch => Rules}
%% for mustang_router) and carries what one middleware hands to the next
%% (mustang_router adds `handler' and `handler_opts').
-module(mustang_middleware).

-type env() :: #{atom() => any()}.
-export_type([env/0]).

-callback execute(Req, Env)
	-> {ok, Req, Env}
	| {suspend, module(), atom(), [any()]}
	| {stop, Req}
	when Req :: mustang_req:req(), Env :: env().
