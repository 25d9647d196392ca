%% POST /echo: the body back with the request's content-type.
-module(mustang_demo_echo_h).
-export([init/2]).

-spec init(mustang_req:req(), any()) -> {ok, mustang_req:req(), any()}.
init(Req0 = #{method := <<"POST">>}, State) ->
	{Body, Req} = read_all(Req0, []),
	ContentType = mustang_req:header(<<"content-type">>, Req, <<"application/octet-stream">>),
	{ok, mustang_req:reply(200, #{<<"content-type">> => ContentType}, Body, Req), State};
init(Req, State) ->
	{ok, mustang_req:reply(405, #{<<"allow">> => <<"POST">>}, Req), State}.

read_all(Req0, Acc) ->
	case mustang_req:read_body(Req0) of
		{ok, Data, Req} -> {lists:reverse(Acc, [Data]), Req};
		{more, Data, Req} -> read_all(Req, [Data | Acc])
	end.
