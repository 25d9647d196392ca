%% Sets response cookies. Options: all_attributes (one cookie with every
%% attribute), two (two cookies), max_age (Max-Age with an Expires date).
-module(cookies_h).
-export([init/2]).

init(Req0, all_attributes) ->
	Req = mustang_req:set_resp_cookie(<<"session">>, <<"abc123">>, Req0, #{
		max_age => 0, domain => <<"example.org">>, path => <<"/app">>,
		secure => true, http_only => true, same_site => strict}),
	{ok, mustang_req:reply(200, #{}, <<"ok">>, Req), all_attributes};
init(Req0, two) ->
	Req1 = mustang_req:set_resp_cookie(<<"a">>, <<"1">>, Req0),
	Req = mustang_req:set_resp_cookie(<<"b">>, <<"2">>, Req1, #{path => <<"/">>, same_site => lax}),
	{ok, mustang_req:reply(200, #{}, <<"ok">>, Req), two};
init(Req0, max_age) ->
	Req = mustang_req:set_resp_cookie(<<"c">>, <<"3">>, Req0, #{max_age => 3600, same_site => none}),
	{ok, mustang_req:reply(200, #{}, <<"ok">>, Req), max_age}.
