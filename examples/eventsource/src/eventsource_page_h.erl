%% GET / : a page whose script shows the events of /eventsource.
-module(eventsource_page_h).
-export([init/2]).

-spec init(mustang_req:req(), any()) -> {ok, mustang_req:req(), any()}.
init(Req, State) ->
	{ok, mustang_req:reply(200, #{<<"content-type">> => <<"text/html; charset=utf-8">>}, <<
		"<!DOCTYPE html>\n<html><head><title>Server-sent events</title></head><body>\n"
		"<ul id=\"events\"></ul>\n<script>\n"
		"const source = new EventSource('/eventsource');\n"
		"source.onmessage = (e) => {\n"
		"  const li = document.createElement('li');\n"
		"  li.textContent = e.lastEventId + ': ' + e.data;\n"
		"  document.getElementById('events').appendChild(li);\n"
		"};\n</script>\n</body></html>\n">>, Req), State}.
