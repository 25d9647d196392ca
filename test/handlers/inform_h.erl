%% Sends a 103 Early Hints informational response, then 200.
-module(inform_h).
-export([init/2]).

init(Req, Opts) ->
	ok = mustang_req:inform(103, #{<<"link">> => <<"</style.css>; rel=preload; as=style">>}, Req),
	{ok, mustang_req:reply(200, #{}, <<"after hints">>, Req), Opts}.
