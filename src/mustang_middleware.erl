%% The middleware behaviour (same shape as cowboy_middleware).
%%
%% A request runs through the middlewares listed in the protocol option
%% `middlewares`, in order. Each one gets the Req and the environment Env, and
%% returns one of:
%%
%% - {ok, Req, Env}: go on with the next middleware;
%% - {suspend, Module, Function, Args}: hibernate the request until a message
%%   arrives, then resume with apply(Module, Function, Args) (a request that
%%   runs inline in the HTTP/1.1 connection process resumes at once);
%% - {stop, Req}: stop processing this request (a response may have been sent).
%%
%% Env starts as the protocol option `env` (for example #{dispatch => Rules}
%% for mustang_router) and carries what one middleware hands to the next
%% (mustang_router adds `handler` and `handler_opts`).
-module(mustang_middleware).

-export([run/3]).
-export([request_process/3]).
-export([request_error_status/1]).
-export([resume_process/4]).

-type env() :: #{atom() => any()}.
-type result() :: ok | {request_error, any(), atom()} | {crash, atom(), any(), list()}.
-export_type([env/0, result/0]).

%% A middleware's only callback: gets the Req and the environment Env and
%% returns `{ok, Req, Env}` to go on with the next middleware, `{stop, Req}`
%% to end the request (reply first; without a reply the client gets 204), or
%% `{suspend, Module, Function, Args}` to hibernate the request's process
%% until a message arrives, then go on with `apply(Module, Function, Args)`,
%% which returns one of these in turn (an inline HTTP/1.1 request calls it at
%% once). A crash ends the request as a crashing handler does (500, one log
%% line).
%%
%%     execute(Req, Env) ->
%%         case mustang_req:header(<<"x-api-key">>, Req) of
%%             undefined -> {stop, mustang_req:reply(401, Req)};
%%             _ -> {ok, Req, Env}
%%         end.
-callback execute(Req, Env)
	-> {ok, Req, Env}
	| {suspend, module(), atom(), [any()]}
	| {stop, Req}
	when Req :: mustang_req:req(), Env :: env().

%% @private Runs the middlewares on a request; the same code in every execution mode.
%% Bad client input found by mustang_req (exit {request_error, ...}) and
%% crashes become results, for the connection to answer and log once.
-spec run(mustang_req:req(), env(), [module()]) -> result().
run(Req, Env, Middlewares) ->
	guard(fun() -> execute(Req, Env, Middlewares) end).

guard(Fun) ->
	try Fun() of
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
		{suspend, Module, Function, Args} ->
			suspend(maps:get(mode, Req, inline), Module, Function, Args, Rest);
		{stop, _} -> ok
	end.

%% A request process hibernates until a message arrives; a request running
%% inline cannot (the connection's stack is below it): it goes on at once.
suspend(process, Module, Function, Args, Rest) ->
	proc_lib:hibernate(?MODULE, resume_process, [Module, Function, Args, Rest]);
suspend(inline, Module, Function, Args, Rest) ->
	resume(inline, erlang:apply(Module, Function, Args), Rest).

resume(_, {ok, Req, Env}, Rest) -> execute(Req, Env, Rest);
resume(Mode, {suspend, Module, Function, Args}, Rest) -> suspend(Mode, Module, Function, Args, Rest);
resume(_, {stop, _}, _) -> ok.

%% @private After hibernation the stack is gone: the request process' end is
%% reported here, as request_process/3 does.
-spec resume_process(module(), atom(), [any()], [module()]) -> ok.
resume_process(Module, Function, Args, Rest) ->
	end_process(guard(fun() -> resume(process, erlang:apply(Module, Function, Args), Rest) end)).

%% @private The body of a request process (HTTP/1.1 with request_process => true,
%% and every HTTP/2 stream). A failure is reported to the connection as the
%% exit reason, so there is exactly one log line, written there.
-spec request_process(mustang_req:req(), env(), [module()]) -> ok.
request_process(Req, Env, Middlewares) ->
	end_process(run(Req, Env, Middlewares)).

end_process(ok) -> ok;
end_process(Error) -> exit({shutdown, {mustang_request, Error}}).

%% @private The status answered for a request_error result when nothing was sent yet.
-spec request_error_status(any()) -> 400..599.
request_error_status({read_body, timeout}) -> 408;
%% Slower than min_recv_rate (mustang_http1_stream).
request_error_status({read_body, too_slow}) -> 408;
%% A request body that does not decode (mustang_http1_codec:decode_chunked/2).
request_error_status({read_body, {http_error, Status, _}}) -> Status;
request_error_status({read_urlencoded_body, too_large}) -> 413;
%% Multipart limits (mustang_req:read_part/2, read_part_body/2).
request_error_status({read_part, too_large}) -> 413;
request_error_status({read_part, too_many_parts}) -> 413;
request_error_status({read_part_body, too_large}) -> 413;
%% Values that do not parse (mustang_error): the status they carry.
request_error_status({_, {value_error, Status, _}}) -> Status;
request_error_status({header, _, {value_error, Status, _}}) -> Status;
request_error_status(_) -> 400.
