%% GET /stream: a chunked response in 5 parts.
-module(mustang_demo_stream_h).
-export([init/2]).

-spec init(mustang_req:req(), any()) -> {ok, mustang_req:req(), any()}.
init(Req0, State) ->
	Req = mustang_req:stream_reply(200, #{<<"content-type">> => <<"text/plain">>}, Req0),
	lists:foreach(fun(N) ->
		IsFin = case N of 5 -> fin; _ -> nofin end,
		mustang_req:stream_body([<<"part ">>, integer_to_binary(N), <<"\n">>], IsFin, Req)
	end, lists:seq(1, 5)),
	{ok, Req, State}.
