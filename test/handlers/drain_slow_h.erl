%% Replies 200 after Opts' delay (ms), counting the requests in flight in
%% Opts' counters (index 1: in flight, 2: done), for drain_SUITE.
-module(drain_slow_h).
-export([init/2]).

init(Req, Opts = #{delay := Delay, counters := Counters}) ->
	counters:add(Counters, 1, 1),
	receive after Delay -> ok end,
	Req2 = mustang_req:reply(200, #{<<"content-type">> => <<"text/plain">>}, <<"slow">>, Req),
	counters:sub(Counters, 1, 1),
	counters:add(Counters, 2, 1),
	{ok, Req2, Opts}.
