%% Replies with a header the connection must refuse. Options: crlf_value
%% (a value injecting a header), nul_value, bad_name (a name with a space).
-module(invalid_header_h).
-export([init/2]).

init(Req, crlf_value) ->
	{ok, mustang_req:reply(200, #{<<"x-bad">> => <<"a\r\nx-injected: yes">>}, <<"no">>, Req), crlf_value};
init(Req, nul_value) ->
	{ok, mustang_req:reply(200, #{<<"x-bad">> => <<"a", 0, "x-injected">>}, <<"no">>, Req), nul_value};
init(Req, bad_name) ->
	{ok, mustang_req:reply(200, #{<<"x-injected bad">> => <<"a">>}, <<"no">>, Req), bad_name}.
