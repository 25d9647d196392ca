%% Reads an application/x-www-form-urlencoded body with
%% mustang_req:read_urlencoded_body/2 (handler options are its options) and
%% replies with the pairs printed with ~0p.
-module(urlencoded_h).
-export([init/2]).

init(Req0, Opts) ->
	{ok, KVs, Req} = mustang_req:read_urlencoded_body(Req0, Opts),
	{ok, mustang_req:reply(200, #{}, io_lib:format("~0p", [KVs]), Req), Opts}.
