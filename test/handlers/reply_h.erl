%% Replies with reply/2, reply/3 or reply/4 (option reply2, reply3, reply4),
%% or with a binary status line (option binary_status).
-module(reply_h).
-export([init/2]).

init(Req, reply2) ->
	{ok, mustang_req:reply(202, Req), reply2};
init(Req, reply3) ->
	{ok, mustang_req:reply(403, #{<<"x-reply">> => <<"3">>}, Req), reply3};
init(Req, reply4) ->
	{ok, mustang_req:reply(201, #{<<"x-reply">> => <<"4">>, <<"content-type">> => <<"text/plain">>},
		<<"created">>, Req), reply4};
init(Req, binary_status) ->
	{ok, mustang_req:reply(<<"299 Custom Reason">>, #{}, <<"custom">>, Req), binary_status}.
