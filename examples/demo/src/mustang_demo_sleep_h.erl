%% GET /sleep: a slow backend call (100 ms), then 1 KiB.
-module(mustang_demo_sleep_h).
-export([init/2]).

-spec init(mustang_req:req(), any()) -> {ok, mustang_req:req(), any()}.
init(Req, State) ->
	timer:sleep(100),
	{ok, mustang_req:reply(200, #{<<"content-type">> => <<"application/octet-stream">>},
		binary:copy(<<"x">>, 1024), Req), State}.
