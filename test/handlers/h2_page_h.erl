%% An HTML page that states the protocol version the request came over,
%% for a browser test: <p id="version">HTTP/2</p>.
-module(h2_page_h).
-export([init/2]).

init(Req, Opts) ->
	Version = atom_to_binary(mustang_req:version(Req)),
	Body = [<<"<!DOCTYPE html><html><head><title>h2</title></head><body><p id=\"version\">">>,
		Version, <<"</p></body></html>">>],
	{ok, mustang_req:reply(200, #{<<"content-type">> => <<"text/html; charset=utf-8">>}, Body, Req),
		Opts}.
