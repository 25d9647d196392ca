%% Streams #{chunks := N, size := S} chunks; chunk I (1-based) is S bytes of
%% I rem 256, so a client can check the body arrived intact and in order.
%% After each stream_body/3 call returns it notifies {h2_progress, self(), I}
%% (see h2_notify): a test sees where a handler is blocked by flow control.
-module(h2_stream_chunks_h).
-export([init/2]).

init(Req0, Opts = #{chunks := N, size := Size}) ->
	Req = mustang_req:stream_reply(200, #{<<"content-type">> => <<"application/octet-stream">>},
		Req0),
	lists:foreach(fun(I) ->
		IsFin = case I of N -> fin; _ -> nofin end,
		ok = mustang_req:stream_body(binary:copy(<<(I rem 256)>>, Size), IsFin, Req),
		h2_notify:send(Opts, {h2_progress, self(), I})
	end, lists:seq(1, N)),
	{ok, Req, Opts}.
