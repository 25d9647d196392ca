%% GET /health: 200 "ok" while the node serves. The health check a load
%% balancer in front of several nodes runs (HAProxy: option httpchk GET
%% /health; doc/guide/deployment.md).
-module(mustang_demo_health_h).
-export([init/2]).

-spec init(mustang_req:req(), any()) -> {ok, mustang_req:req(), any()}.
init(Req, State) ->
	{ok, mustang_req:reply(200, #{<<"content-type">> => <<"text/plain">>,
		<<"cache-control">> => <<"no-store">>}, <<"ok\n">>, Req), State}.
