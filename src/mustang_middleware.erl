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

-export([run/3]).
-export([request_process/3]).
-export([request_error_status/1]).

-type env() :: #{atom() => any()}.
-type result() :: ok | {request_error, any(), atom()} | {crash, atom(), any(), list()}.
-export_type([env/0, result/0]).

-callback execute(Req, Env)
	-> {ok, Req, Env}
	| {suspend, module(), atom(), [any()]}
	| {stop, Req}
	when Req :: mustang_req:req(), Env :: env().

%% Runs the middlewares on a request; the same code in every execution mode.
%% Bad client input found by mustang_req (exit {request_error, ...}) and
%% crashes become results, for the connection to answer and log once.
-spec run(mustang_req:req(), env(), [module()]) -> result().
run(Req, Env, Middlewares) ->
	try execute(Req, Env, Middlewares) of
		_ -> ok
	catch
		exit:{request_error, Reason, Text} ->
			{request_error, Reason, Text};
		exit:normal ->
			%% A handler that took the process over (Websocket over HTTP/2)
			%% and ended normally.
			ok;
		Class:Reason:Stacktrace ->
			{crash, Class, Reason, Stacktrace}
	end.

execute(_, _, []) ->
	ok;
execute(Req, Env, [Middleware | Rest]) ->
	case Middleware:execute(Req, Env) of
		{ok, Req2, Env2} -> execute(Req2, Env2, Rest);
		{suspend, Module, Function, Args} -> resume(erlang:apply(Module, Function, Args), Rest);
		{stop, _} -> ok
	end.

resume({ok, Req, Env}, Rest) -> execute(Req, Env, Rest);
resume({suspend, Module, Function, Args}, Rest) -> resume(erlang:apply(Module, Function, Args), Rest);
resume({stop, _}, _) -> ok.

%% The body of a request process (HTTP/1.1 with request_process => true,
%% and every HTTP/2 stream). A failure is reported to the connection as the
%% exit reason, so there is exactly one log line, written there.
-spec request_process(mustang_req:req(), env(), [module()]) -> ok.
request_process(Req, Env, Middlewares) ->
	case run(Req, Env, Middlewares) of
		ok -> ok;
		Error -> exit({shutdown, {mustang_request, Error}})
	end.

%% The status answered for a request_error result when nothing was sent yet.
-spec request_error_status(any()) -> 400..599.
request_error_status({read_body, timeout}) -> 408;
%% Slower than min_recv_rate (mustang_http1_stream).
request_error_status({read_body, too_slow}) -> 408;
%% A request body that does not decode (mustang_http1_codec:decode_chunked/2).
request_error_status({read_body, {http_error, Status, _}}) -> Status;
request_error_status({read_urlencoded_body, too_large}) -> 413;
%% Values that do not parse (mustang_error): the status they carry.
request_error_status({_, {value_error, Status, _}}) -> Status;
request_error_status({header, _, {value_error, Status, _}}) -> Status;
request_error_status(_) -> 400.
