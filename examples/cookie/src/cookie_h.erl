%% GET / : sets a new `server' cookie at each request and shows the cookies
%% the client sent (a browser sends the previous `server' cookie back).
-module(cookie_h).
-export([init/2]).

-spec init(mustang_req:req(), any()) -> {ok, mustang_req:req(), any()}.
init(Req0, State) ->
	NewValue = integer_to_binary(rand:uniform(1000000)),
	Req1 = mustang_req:set_resp_cookie(<<"server">>, NewValue, Req0, #{path => <<"/">>}),
	%% Only our cookies: others on the same host may not even parse.
	Req2 = mustang_req:filter_cookies([server, client], Req1),
	#{server := Server, client := Client}
		= mustang_req:match_cookies([{server, [], <<"(none)">>}, {client, [], <<"(none)">>}], Req2),
	Body = [<<"cookie server sent by the client: ">>, Server, $\n,
		<<"cookie client sent by the client: ">>, Client, $\n,
		<<"new cookie server: ">>, NewValue, $\n],
	{ok, mustang_req:reply(200, #{<<"content-type">> => <<"text/plain">>}, Body, Req2), State}.
