%% Replies, then returns the Req it was given (the one without the reply
%% recorded in it): the connection must not send a second response.
-module(stale_req_h).
-export([init/2]).

init(Req0, Opts) ->
	_ = mustang_req:reply(200, #{}, <<"stale">>, Req0),
	{ok, Req0, Opts}.
