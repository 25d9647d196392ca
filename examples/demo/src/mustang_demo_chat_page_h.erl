%% GET /chat: the chat page. Its script connects to /ws/chat over ws:// or
%% wss:// (over HTTP/2 when the page came over HTTP/2 and the browser
%% supports RFC 8441). ?auto=Text sends Text once connected (for tests).
-module(mustang_demo_chat_page_h).
-export([init/2]).

-spec init(mustang_req:req(), any()) -> {ok, mustang_req:req(), any()}.
init(Req, State) ->
	{ok, mustang_req:reply(200, #{<<"content-type">> => <<"text/html; charset=utf-8">>},
		page(), Req), State}.

page() ->
	<<"<!DOCTYPE html>
<html><head><meta charset=\"utf-8\"><title>Mustang chat</title></head>
<body>
<h1>Mustang chat</h1>
<p id=\"status\">connecting</p>
<input id=\"msg\" autofocus placeholder=\"message\"><button id=\"send\">Send</button>
<ul id=\"log\"></ul>
<script>
const log = document.getElementById('log');
const status = document.getElementById('status');
const ws = new WebSocket((location.protocol === 'https:' ? 'wss://' : 'ws://') + location.host + '/ws/chat');
function send() {
  const input = document.getElementById('msg');
  if (input.value) { ws.send(input.value); input.value = ''; }
}
ws.onopen = () => {
  status.textContent = 'connected';
  const auto = new URLSearchParams(location.search).get('auto');
  if (auto) ws.send(auto);
};
ws.onmessage = (e) => {
  const li = document.createElement('li');
  li.textContent = e.data;
  log.appendChild(li);
};
ws.onclose = (e) => { status.textContent = 'closed ' + e.code; };
document.getElementById('send').onclick = send;
document.getElementById('msg').onkeydown = (e) => { if (e.key === 'Enter') send(); };
</script>
</body></html>
">>.
