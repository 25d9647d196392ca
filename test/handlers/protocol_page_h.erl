%% An HTML page whose script writes the protocol the browser used to load
%% it (performance.getEntries()[0].nextHopProtocol: "h3", "h2", "http/1.1").
-module(protocol_page_h).
-export([init/2]).

init(Req, Opts) ->
	Body = <<"<!DOCTYPE html><html><head><title>protocol</title></head><body>"
		"<h1>Mustang</h1><p id=\"proto\">?</p><script>"
		"document.getElementById('proto').textContent = "
		"'protocol: ' + performance.getEntries()[0].nextHopProtocol;"
		"</script></body></html>">>,
	{ok, mustang_req:reply(200, #{<<"content-type">> => <<"text/html">>}, Body, Req), Opts}.
