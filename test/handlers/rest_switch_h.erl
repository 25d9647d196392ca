%% A handler type for the switch_handler tests of mustang_rest: upgrade/4,5
%% reply 200 with the handler state and options, printed with ~0p.
-module(rest_switch_h).
-export([upgrade/4]).
-export([upgrade/5]).

upgrade(Req, Env, Handler, HState) ->
	reply(Req, Env, {Handler, no_opts}, HState).

upgrade(Req, Env, Handler, HState, Opts) ->
	reply(Req, Env, {Handler, Opts}, HState).

reply(Req, Env, What, _HState) ->
	Body = iolist_to_binary(io_lib:format("~0p", [What])),
	{ok, mustang_req:reply(200, #{<<"content-type">> => <<"text/plain">>}, Body, Req), Env}.
