%% GET /?echo=Text answers Text; without it, 400.
-module(echo_get_h).
-export([init/2]).

-spec init(mustang_req:req(), any()) -> {ok, mustang_req:req(), any()}.
init(Req0 = #{method := <<"GET">>}, State) ->
	#{echo := Echo} = mustang_req:match_qs([{echo, [], undefined}], Req0),
	{ok, echo(Echo, Req0), State};
init(Req0, State) ->
	%% Method not allowed.
	{ok, mustang_req:reply(405, #{<<"allow">> => <<"GET">>}, Req0), State}.

echo(undefined, Req) ->
	mustang_req:reply(400, #{}, <<"Missing echo parameter.">>, Req);
echo(Echo, Req) when is_binary(Echo) ->
	mustang_req:reply(200, #{<<"content-type">> => <<"text/plain; charset=utf-8">>}, Echo, Req);
echo(_, Req) ->
	mustang_req:reply(400, #{}, <<"One echo parameter with a value, please.">>, Req).
