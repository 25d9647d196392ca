%% Crashes. Options: before_reply (nothing sent yet) or after_stream_reply
%% (after the response head and one chunk were sent).
-module(crash_h).
-export([init/2]).

init(_, before_reply) ->
	error(crash_h_before_reply);
init(Req0, after_stream_reply) ->
	Req = mustang_req:stream_reply(200, #{<<"content-type">> => <<"text/plain">>}, Req0),
	ok = mustang_req:stream_body(<<"partial">>, nofin, Req),
	error(crash_h_after_stream_reply).
