%% Replies 200 "slow" after sleeping the number of milliseconds in the route
%% binding `ms'. With the option #{notify => Name}, it first sends
%% {h2_slow_started, self()} to the process registered as Name (when there
%% is one), so a test knows the request is in flight.
-module(h2_slow_h).
-export([init/2]).

init(Req, Opts) ->
	h2_notify:send(Opts, {h2_slow_started, self()}),
	timer:sleep(binary_to_integer(mustang_req:binding(ms, Req))),
	{ok, mustang_req:reply(200, #{<<"content-type">> => <<"text/plain">>}, <<"slow">>, Req), Opts}.
