%% Streams 1600 chunks of 64 KiB (100 MiB), as fast as stream_body/3 returns.
-module(big_stream_h).
-export([init/2]).

init(Req0, State) ->
	Req = mustang_req:stream_reply(200, #{<<"content-type">> => <<"application/octet-stream">>}, Req0),
	Chunk = binary:copy(<<"x">>, 65536),
	lists:foreach(fun(_) -> mustang_req:stream_body(Chunk, nofin, Req) end, lists:seq(1, 1599)),
	mustang_req:stream_body(Chunk, fin, Req),
	{ok, Req, State}.
