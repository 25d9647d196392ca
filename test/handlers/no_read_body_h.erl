%% Replies 200 "not read" without reading the request body.
-module(no_read_body_h).
-export([init/2]).

init(Req, Opts) ->
	{ok, mustang_req:reply(200, #{}, <<"not read">>, Req), Opts}.
