%% The chat page: a name field, the messages and a line to type in. The
%% script opens ws(s)://<host>/ws?name=<name> and shows what arrives; text
%% is inserted with textContent, never as HTML.
-module(websocket_chat_page_h).

-export([init/2]).

-spec init(mustang_req:req(), any()) -> {ok, mustang_req:req(), any()}.
init(Req, State) ->
	{ok, mustang_req:reply(200, #{<<"content-type">> => <<"text/html; charset=utf-8">>},
		page(), Req), State}.

page() -> <<"<!DOCTYPE html>
<html lang=\"en\">
<head>
<meta charset=\"utf-8\">
<title>Mustang Websocket chat</title>
<style>
body { font-family: sans-serif; max-width: 40em; margin: 2em auto; }
#log { border: 1px solid #ccc; height: 20em; overflow-y: auto; padding: .5em; }
#log div { margin: .2em 0; }
</style>
</head>
<body>
<h1>Websocket chat</h1>
<form id=\"join\"><input id=\"name\" placeholder=\"your name\" pattern=\"[A-Za-z0-9_-]{1,32}\" required>
<button>Join</button></form>
<div id=\"log\"></div>
<form id=\"say\" hidden><input id=\"text\" autocomplete=\"off\" size=\"50\"> <button>Send</button></form>
<script>
let ws;
const log = document.getElementById('log');
function show(text) {
	const line = document.createElement('div');
	line.textContent = text;
	log.appendChild(line);
	log.scrollTop = log.scrollHeight;
}
document.getElementById('join').onsubmit = (e) => {
	e.preventDefault();
	const name = document.getElementById('name').value;
	const scheme = location.protocol === 'https:' ? 'wss://' : 'ws://';
	ws = new WebSocket(scheme + location.host + '/ws?name=' + encodeURIComponent(name));
	ws.onopen = () => { document.getElementById('join').hidden = true;
		document.getElementById('say').hidden = false; show('(connected)'); };
	ws.onmessage = (msg) => show(msg.data);
	ws.onclose = () => show('(disconnected)');
};
document.getElementById('say').onsubmit = (e) => {
	e.preventDefault();
	const text = document.getElementById('text');
	if (text.value !== '') { ws.send(text.value); text.value = ''; }
};
</script>
</body>
</html>
">>.
