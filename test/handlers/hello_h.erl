%% Replies 200 "Hello world!" (text/plain) to any request.
-module(hello_h).
-export([init/2]).

init(Req, Opts) ->
	{ok, mustang_req:reply(200, #{<<"content-type">> => <<"text/plain">>}, <<"Hello world!">>, Req),
		Opts}.
