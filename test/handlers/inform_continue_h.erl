%% Sends 100 Continue itself with inform/2, then reads the whole body and
%% replies 200 with it.
-module(inform_continue_h).
-export([init/2]).

init(Req0, Opts) ->
	ok = mustang_req:inform(100, Req0),
	{Body, Req} = read_all(Req0, []),
	{ok, mustang_req:reply(200, #{}, Body, Req), Opts}.

read_all(Req0, Acc) ->
	case mustang_req:read_body(Req0) of
		{ok, Data, Req} -> {lists:reverse(Acc, [Data]), Req};
		{more, Data, Req} -> read_all(Req, [Data | Acc])
	end.
