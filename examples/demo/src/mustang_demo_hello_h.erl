-module(mustang_demo_hello_h).
-export([init/2]).

-spec init(mustang_req:req(), any()) -> {ok, mustang_req:req(), any()}.
init(Req, State) ->
	{ok, mustang_req:reply(200, #{<<"content-type">> => <<"text/plain">>}, <<"Hello world!">>, Req),
		State}.
