%% Server push: promises the pushes listed in its options, then replies
%% "pushed N". Each push is {Path, Headers, Opts} for mustang_req:push/4.
%% `after_reply' instead tries a push once the response is sent, which must
%% fail with function_clause, and replies with what happened.
-module(h2_push_h).
-export([init/2]).

init(Req, after_reply) ->
	Req2 = mustang_req:stream_reply(200, #{}, Req),
	Result = try mustang_req:push("/", #{}, Req2) of
		ok -> <<"ok">>
	catch error:function_clause -> <<"function_clause">>
	end,
	ok = mustang_req:stream_body(Result, fin, Req2),
	{ok, Req2, after_reply};
init(Req, Pushes) ->
	_ = [ok = mustang_req:push(Path, Headers, Req, Opts) || {Path, Headers, Opts} <- Pushes],
	Body = ["pushed ", integer_to_binary(length(Pushes))],
	{ok, mustang_req:reply(200, #{<<"content-type">> => <<"text/plain">>}, Body, Req), Pushes}.
