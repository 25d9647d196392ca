%% Sends nothing: the connection answers 204.
-module(no_reply_h).
-export([init/2]).

init(Req, Opts) ->
	{ok, Req, Opts}.
