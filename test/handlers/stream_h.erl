%% Streamed responses. Options:
%%   body      three chunks with stream_body/3, the last with fin
%%   trailers  two chunks then stream_trailers/2
%%   events    server-sent events with stream_events/3
%%   {sendfile, Offset, Length, Path}  a chunk, a sendfile chunk, fin
%%   no_fin    two chunks, never fin: the connection ends the body
-module(stream_h).
-export([init/2]).

init(Req0, body) ->
	Req = mustang_req:stream_reply(200, #{<<"content-type">> => <<"text/plain">>}, Req0),
	ok = mustang_req:stream_body(<<"one ">>, nofin, Req),
	ok = mustang_req:stream_body([<<"two">>, " "], nofin, Req),
	ok = mustang_req:stream_body(<<"three">>, fin, Req),
	{ok, Req, body};
init(Req0, trailers) ->
	Req = mustang_req:stream_reply(200, #{<<"trailer">> => <<"x-checksum">>}, Req0),
	ok = mustang_req:stream_body(<<"hello ">>, nofin, Req),
	ok = mustang_req:stream_body(<<"world">>, nofin, Req),
	ok = mustang_req:stream_trailers(#{<<"x-checksum">> => <<"abc">>}, Req),
	{ok, Req, trailers};
init(Req0, events) ->
	Req = mustang_req:stream_reply(200, #{<<"content-type">> => <<"text/event-stream">>}, Req0),
	ok = mustang_req:stream_events(#{comment => <<"hello">>}, nofin, Req),
	ok = mustang_req:stream_events([
		#{event => update, id => <<"1">>, data => <<"line1\nline2">>},
		#{event => <<"other">>, retry => 5000, data => <<"x">>}
	], nofin, Req),
	ok = mustang_req:stream_events(#{data => <<"last">>}, fin, Req),
	{ok, Req, events};
init(Req0, Opts = {sendfile, _, _, _}) ->
	Req = mustang_req:stream_reply(200, Req0),
	ok = mustang_req:stream_body(<<"[">>, nofin, Req),
	ok = mustang_req:stream_body(Opts, nofin, Req),
	ok = mustang_req:stream_body(<<"]">>, fin, Req),
	{ok, Req, Opts};
init(Req0, no_fin) ->
	Req = mustang_req:stream_reply(200, Req0),
	ok = mustang_req:stream_body(<<"a">>, nofin, Req),
	ok = mustang_req:stream_body(<<"b">>, nofin, Req),
	{ok, Req, no_fin}.
