%% The chat page: the messages, a line to type in and a Send button. Its
%% script opens ws(s)://<host>/ws?name=<name>, the name being the page's own
%% ?name= (/?name=alice); ?auto=Text sends Text once connected (the browser
%% test uses it). Text is inserted with textContent, never as HTML.
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
#log { border: 1px solid #ccc; height: 20em; overflow-y: auto; padding: .5em; list-style: none; }
</style>
</head>
<body>
<h1>Websocket chat</h1>
<p>Status: <span id=\"status\">connecting</span>. Your name is the page's <code>?name=</code>.</p>
<ul id=\"log\"></ul>
<input id=\"msg\" autocomplete=\"off\" size=\"50\" autofocus> <button id=\"send\">Send</button>
<script>
const params = new URLSearchParams(location.search);
const scheme = location.protocol === 'https:' ? 'wss://' : 'ws://';
const ws = new WebSocket(scheme + location.host + '/ws?name=' + encodeURIComponent(params.get('name') || ''));
const log = document.getElementById('log');
const msg = document.getElementById('msg');
function show(text) {
	const line = document.createElement('li');
	line.textContent = text;
	log.appendChild(line);
}
function say() {
	if (msg.value !== '') { ws.send(msg.value); msg.value = ''; }
}
ws.onopen = () => {
	document.getElementById('status').textContent = 'connected';
	if (params.get('auto')) ws.send(params.get('auto'));
};
ws.onmessage = (event) => show(event.data);
ws.onclose = (event) => { document.getElementById('status').textContent = 'disconnected (' + event.code + ')'; };
document.getElementById('send').onclick = say;
msg.onkeydown = (event) => { if (event.key === 'Enter') say(); };
</script>
</body>
</html>
">>.
