%% POST / with a urlencoded body echo=Text answers Text; without it, 400.
-module(echo_post_h).
-export([init/2]).

-spec init(mustang_req:req(), any()) -> {ok, mustang_req:req(), any()}.
init(Req0 = #{method := <<"POST">>}, State) ->
	Req = case mustang_req:has_body(Req0) of
		true ->
			{ok, PostVals, Req1} = mustang_req:read_urlencoded_body(Req0),
			echo(proplists:get_value(<<"echo">>, PostVals), Req1);
		false ->
			mustang_req:reply(400, #{}, <<"Missing body.">>, Req0)
	end,
	{ok, Req, State};
init(Req0, State) ->
	{ok, mustang_req:reply(405, #{<<"allow">> => <<"POST">>}, Req0), State}.

echo(Echo, Req) when is_binary(Echo) ->
	mustang_req:reply(200, #{<<"content-type">> => <<"text/plain; charset=utf-8">>}, Echo, Req);
echo(_, Req) ->
	mustang_req:reply(400, #{}, <<"Missing echo parameter.">>, Req).
