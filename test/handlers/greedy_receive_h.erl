%% Replies, then takes any message in its mailbox (a mistake in a handler
%% that runs inline: Mustang's own message is among them).
-module(greedy_receive_h).
-export([init/2]).

init(Req0, Opts) ->
	Req = mustang_req:reply(200, #{}, <<"greedy">>, Req0),
	receive _ -> ok after 0 -> ok end,
	{ok, Req, Opts}.
