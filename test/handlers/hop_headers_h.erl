%% Sets connection-specific fields (RFC 9113 8.2.2) in every part of its
%% response: a 103 informational response, the response head, the trailers.
%% Names come in mixed case, and connection names x-hop and x-other, both
%% set, so that the fields it names are dropped too; x-end-to-end must stay.
%% hop/1 adds them to a map (mustang_http2_headers_tests uses it too). Options:
%%   push    first pushes /hop_headers/pushed, then responds as above
%%   pushed  the same response without the 103 (python-h2 refuses a 1xx
%%           response on a pushed stream)
-module(hop_headers_h).
-export([init/2]).
-export([hop/1]).

init(Req0, push) ->
	ok = mustang_req:push("/hop_headers/pushed", #{}, Req0),
	ok = mustang_req:inform(103, hop(#{<<"link">> => <<"</a.css>; rel=preload">>}), Req0),
	respond(Req0, push);
init(Req0, pushed) ->
	respond(Req0, pushed).

respond(Req0, Opts) ->
	Req = mustang_req:stream_reply(200, hop(#{<<"content-type">> => <<"text/plain">>}), Req0),
	ok = mustang_req:stream_body(<<"body">>, nofin, Req),
	ok = mustang_req:stream_trailers(hop(#{<<"x-checksum">> => <<"abc">>}), Req),
	{ok, Req, Opts}.

-spec hop(map()) -> map().
hop(Headers) ->
	Headers#{
		<<"Connection">> => <<"keep-alive, X-Hop, x-other">>,
		<<"x-hop">> => <<"1">>,
		<<"X-Other">> => <<"2">>,
		<<"Keep-Alive">> => <<"timeout=5">>,
		<<"proxy-connection">> => <<"keep-alive">>,
		<<"Transfer-Encoding">> => <<"chunked">>,
		<<"upgrade">> => <<"h2c">>,
		<<"TE">> => <<"gzip">>,
		<<"x-end-to-end">> => <<"kept">>
	}.
