%% Websocket end to end (RFC 6455, RFC 7692, RFC 8441), black box:
%% - conformance: the 451 cases of test/ws_conformance (framing, pings,
%%   reserved bits and opcodes, fragmentation, UTF-8, close codes, limits,
%%   permessage-deflate), raw bytes written by test/ws_conformance/run.py,
%%   over an HTTP/1.1 upgrade and over RFC 8441 extended CONNECT, each on a
%%   clear and a TLS listener. The cases were validated against Node's ws
%%   and hypercorn first (test/ws_conformance/README.md);
%% - interop: the Python websockets client and Node's ws client, with and
%%   without permessage-deflate; headless Chromium loading the chat page and
%%   talking to /ws/chat over ws:// (HTTP/1.1) and wss:// on h2 (RFC 8441),
%%   two tabs and a Python client seeing each other's messages.
%%
%% Every external tool is required: a missing one fails its test (run
%% scripts/setup.sh). Python is $MUSTANG_PYTHON, then _tools/venv/bin/python;
%% Node's ws package is in _tools/node/node_modules.
-module(websocket_SUITE).
-compile([export_all, nowarn_export_all]).

-include_lib("common_test/include/ct.hrl").

-import(mustang_test, [doc/1, root/0, python/0, require_python/2, tool/3, run/3, run/4,
	node_path/0]).

-define(CHAT_SCOPE, websocket_SUITE_chat).

suite() ->
	[{timetrap, {seconds, 300}}].

all() ->
	[{group, conformance}, {group, closing}, {group, clients}, {group, browser}, {group, demo}].

groups() ->
	[
		{conformance, [parallel], [
			conformance_http1,
			conformance_http1_tls,
			conformance_http2,
			conformance_http2_tls
		]},
		{closing, [parallel], [
			close_frame_reaches_busy_client,
			close_frame_reaches_busy_client_tls
		]},
		{clients, [parallel], [
			python_websockets,
			python_websockets_deflate,
			python_websockets_tls,
			node_ws,
			node_ws_deflate,
			node_ws_tls_deflate
		]},
		%% One browser at a time: Chromium is heavy on a 2-core machine.
		{browser, [], [
			chromium_chat_http1,
			chromium_chat_http2
		]},
		%% The demo's own routes (make run): /ws, /chat and /ws/chat.
		{demo, [], [
			demo_echo,
			demo_chat_chromium_http2
		]}
	].

init_per_suite(Config) ->
	{ok, _} = application:ensure_all_started(mustang),
	Python = require_python(python(), ["h2", "websockets"]),
	{ok, ScopePid} = pg:start(?CHAT_SCOPE),
	TLSOpts = mustang_demo:tls_opts(),
	ProtoOpts = #{env => #{dispatch => mustang_router:compile(routes())},
		enable_connect_protocol => true},
	{ok, _} = mustang:start_clear({?MODULE, clear}, #{port => 0}, ProtoOpts),
	{ok, _} = mustang:start_tls({?MODULE, tls}, #{port => 0, socket_opts => TLSOpts}, ProtoOpts),
	[{python, Python}, {chat_scope, ScopePid},
		{port, mustang:get_port({?MODULE, clear})},
		{tls_port, mustang:get_port({?MODULE, tls})} | Config].

end_per_suite(Config) ->
	_ = mustang:stop_listener({?MODULE, clear}),
	_ = mustang:stop_listener({?MODULE, tls}),
	exit(?config(chat_scope, Config), shutdown),
	ok.

init_per_group(demo, Config) ->
	{ok, _} = mustang_demo:start(#{port => 0, tls_port => 0}),
	[{demo_port, mustang:get_port(demo_http)}, {demo_tls_port, mustang:get_port(demo_https)}
		| Config];
init_per_group(_, Config) ->
	Config.

end_per_group(demo, _) ->
	_ = mustang:stop_listener(demo_http),
	_ = mustang:stop_listener(demo_https),
	ok;
end_per_group(_, _) ->
	ok.

%% The routes of test/ws_conformance/cases.py, and the chat.
routes() ->
	[{'_', [
		{"/ws", ws_echo_h, #{}},
		{"/ws/small", ws_echo_h, #{ws_opts => #{max_frame_size => 65536}}},
		{"/ws/big", ws_echo_h, #{ws_opts => #{max_frame_size => 32 bsl 20}}},
		{"/ws/deflate", ws_echo_h, #{ws_opts => #{compress => true}}},
		{"/chat", mustang_demo_chat_page_h, []},
		{"/ws/chat", ws_chat_h, #{scope => ?CHAT_SCOPE}}
	]}].

%% Conformance.

conformance_http1(Config) ->
	doc("The conformance cases over an HTTP/1.1 upgrade (RFC 6455 4) on a clear listener "
		"all pass."),
	conformance(Config, ?config(port, Config), ["--proto", "h1"]).

conformance_http1_tls(Config) ->
	doc("The conformance cases over an HTTP/1.1 upgrade on a TLS listener all pass."),
	conformance(Config, ?config(tls_port, Config), ["--proto", "h1", "--tls"]).

conformance_http2(Config) ->
	doc("The conformance cases over HTTP/2 extended CONNECT (RFC 8441) on h2c (prior "
		"knowledge) all pass."),
	conformance(Config, ?config(port, Config), ["--proto", "h2"]).

conformance_http2_tls(Config) ->
	doc("The conformance cases over HTTP/2 extended CONNECT (RFC 8441) on TLS (ALPN h2) "
		"all pass."),
	conformance(Config, ?config(tls_port, Config), ["--proto", "h2", "--tls"]).

%% Runs run.py; the CT comment says how many cases passed, a failure lists
%% the failed cases with what was sent, expected and received.
conformance(Config, Port, Args) ->
	Script = filename:join([root(), "test", "ws_conformance", "run.py"]),
	Report = filename:join(?config(priv_dir, Config), "report.json"),
	{Status, Out} = run(?config(python, Config), [Script, "--port", integer_to_list(Port),
		"--quiet", "-j", "6", "--json", Report | Args], 240000),
	ct:log("~ts", [Out]),
	Lines = binary:split(Out, <<"\n">>, [global, trim_all]),
	Fails = [L || L = <<"FAIL ", _/bits>> <- Lines],
	case [L || <<"SUMMARY ", L/bits>> <- Lines] of
		[Summary] ->
			Passed = summary_int(<<"passed">>, Summary),
			Total = summary_int(<<"total">>, Summary),
			Comment = io_lib:format("~b/~b cases passed", [Passed, Total]),
			case {Status, Fails} of
				{0, []} ->
					ct:comment("~s", [Comment]);
				_ ->
					Ids = [hd(binary:split(Id, <<":">>)) || <<"FAIL ", Id/bits>> <- Fails],
					ct:comment("~s; failed: ~s", [Comment, lists:join(" ", Ids)]),
					ct:fail("~s; failed cases:~n~s", [Comment, lists:join("\n", Fails)])
			end;
		[] ->
			ct:fail("run.py exited with ~p without a summary:~n~s", [Status, Out])
	end.

summary_int(Key, Summary) ->
	{match, [N]} = re:run(Summary, <<"\"", Key/binary, "\": ([0-9]+)">>,
		[{capture, all_but_first, binary}]),
	binary_to_integer(N).

%% Closing.

close_frame_reaches_busy_client(Config) ->
	doc("A client that breaks the protocol and keeps sending gets the close frame (1002) "
		"and then the end of the connection, not a TCP reset that destroys the close "
		"frame: the server half-closes and reads what still comes before it closes "
		"(RFC 6455 7.1.1, 7.1.7). Found by fuzz_SUITE."),
	close_frame_reaches_busy_client(gen_tcp, ?config(port, Config)).

close_frame_reaches_busy_client_tls(Config) ->
	doc("The same over TLS."),
	close_frame_reaches_busy_client(ssl, ?config(tls_port, Config)).

close_frame_reaches_busy_client(Mod, Port) ->
	Opts = [binary, {active, false}] ++ case Mod of
		ssl -> [{verify, verify_none}];
		gen_tcp -> [{nodelay, true}]
	end,
	Results = [begin
		{ok, S} = Mod:connect("127.0.0.1", Port, Opts, 5000),
		ok = Mod:send(S, <<"GET /ws HTTP/1.1\r\nhost: localhost\r\nconnection: Upgrade\r\n"
			"upgrade: websocket\r\nsec-websocket-version: 13\r\n"
			"sec-websocket-key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n">>),
		{ok, <<"HTTP/1.1 101 ", _/bits>>} = Mod:recv(S, 0, 5000),
		%% A reserved opcode (1002), then bytes the server can only drop,
		%% still arriving after the server decided to close.
		ok = Mod:send(S, <<16#83, 16#80, 0:32>>),
		_ = [begin timer:sleep(2), Mod:send(S, binary:copy(<<16#ff>>, 2000)) end
			|| _ <- lists:seq(1, 20)],
		Received = recv_until_closed(Mod, S, <<>>),
		ok = Mod:close(S),
		Received
	end || _ <- lists:seq(1, 10)],
	case lists:usort(Results) of
		[<<16#88, 2, 1002:16>>] -> ok;
		Other -> ct:fail("expected each connection to receive the close frame 1002 then "
			"the close; received ~p", [Other])
	end.

recv_until_closed(Mod, S, Acc) ->
	case Mod:recv(S, 0, 5000) of
		{ok, Data} -> recv_until_closed(Mod, S, <<Acc/binary, Data/binary>>);
		{error, _} -> Acc
	end.

%% Clients.

python_websockets(Config) ->
	doc("The Python websockets client exchanges text, binary, 1 MB messages and a ping "
		"over ws://, without permessage-deflate. (RFC 6455)"),
	py_client(Config, url(ws, Config, "/ws"), ["--no-deflate"]).

python_websockets_deflate(Config) ->
	doc("The Python websockets client with permessage-deflate negotiated: text, binary, "
		"1 MB messages and a ping. (RFC 7692)"),
	py_client(Config, url(ws, Config, "/ws/deflate"), ["--deflate"]).

python_websockets_tls(Config) ->
	doc("The Python websockets client over wss:// with permessage-deflate. (RFC 6455, 7692)"),
	py_client(Config, url(wss, Config, "/ws/deflate"), ["--deflate"]).

py_client(Config, Url, Args) ->
	Script = filename:join(?config(data_dir, Config), "py_client.py"),
	check_client_output(run(?config(python, Config), [Script, Url | Args], 60000)).

node_ws(Config) ->
	doc("Node's ws client exchanges text, binary, 1 MB messages and a ping over ws://, "
		"without perMessageDeflate. (RFC 6455)"),
	node_client(Config, url(ws, Config, "/ws"), ["--no-deflate"]).

node_ws_deflate(Config) ->
	doc("Node's ws client with perMessageDeflate negotiated. (RFC 7692)"),
	node_client(Config, url(ws, Config, "/ws/deflate"), ["--deflate"]).

node_ws_tls_deflate(Config) ->
	doc("Node's ws client over wss:// with perMessageDeflate. (RFC 6455, 7692)"),
	node_client(Config, url(wss, Config, "/ws/deflate"), ["--deflate"]).

node_client(Config, Url, Args) ->
	Node = tool("node", undefined, []),
	NodePath = node_path(),
	Script = filename:join(?config(data_dir, Config), "node_client.js"),
	check_client_output(run(Node, [Script, Url | Args], 60000, [{"NODE_PATH", NodePath}])).

%% The client scripts print one line per check ("ok ..." or "FAIL ...")
%% and exit with 0 only when all passed.
check_client_output({Status, Out}) ->
	ct:log("~ts", [Out]),
	Fails = [L || L = <<"FAIL", _/bits>> <- binary:split(Out, <<"\n">>, [global, trim_all])],
	case {Status, Fails} of
		{0, []} -> ok;
		{_, []} -> ct:fail("client exited with ~p:~n~s", [Status, Out]);
		_ -> ct:fail("client exited with ~p:~n~s", [Status, lists:join("\n", Fails)])
	end.

%% Browser.

chromium_chat_http1(Config) ->
	doc("Two headless Chromium tabs load /chat over HTTP/1.1 and chat over ws:// with a "
		"Python client: each sees every message, and /ws/chat ran over HTTP/1.1."),
	chromium_chat(Config, url(http, Config, "/chat"), url(ws, Config, "/ws/chat"),
		"HTTP/1.1").

chromium_chat_http2(Config) ->
	doc("Two headless Chromium tabs load /chat over h2 (TLS) and chat over wss://, which "
		"Chromium runs as RFC 8441 extended CONNECT on the page's HTTP/2 connection: each "
		"sees every message, and /ws/chat ran over HTTP/2."),
	chromium_chat(Config, url(https, Config, "/chat"), url(wss, Config, "/ws/chat"),
		"HTTP/2").

chromium_chat(Config, PageUrl, WsUrl, Version) ->
	Chromium = tool("chromium", undefined, ["/usr/bin/chromium", "/usr/bin/chromium-browser"]),
	Script = filename:join(?config(data_dir, Config), "chromium_chat.py"),
	Profile = filename:join(?config(priv_dir, Config), "chromium-" ++ Version),
	check_client_output(run(?config(python, Config), [Script, "--chromium", Chromium,
		"--profile", Profile, "--page", PageUrl, "--ws", WsUrl, "--version", Version],
		120000)).

%% Demo.

demo_echo(Config) ->
	doc("The demo's /ws echo works with the Python websockets client, over ws:// and wss://, "
		"with permessage-deflate."),
	Port = ?config(demo_port, Config),
	TLSPort = ?config(demo_tls_port, Config),
	py_client(Config, lists:flatten(io_lib:format("ws://127.0.0.1:~b/ws", [Port])), ["--deflate"]),
	py_client(Config, lists:flatten(io_lib:format("wss://127.0.0.1:~b/ws", [TLSPort])),
		["--deflate"]).

demo_chat_chromium_http2(Config) ->
	doc("The demo's chat: two headless Chromium tabs on https://.../chat (h2, so the "
		"Websocket is RFC 8441) and a Python client on /ws/chat see each other's messages."),
	TLSPort = ?config(demo_tls_port, Config),
	Chromium = tool("chromium", undefined, ["/usr/bin/chromium", "/usr/bin/chromium-browser"]),
	Script = filename:join(?config(data_dir, Config), "chromium_chat.py"),
	Profile = filename:join(?config(priv_dir, Config), "chromium-demo"),
	check_client_output(run(?config(python, Config), [Script, "--chromium", Chromium,
		"--profile", Profile,
		"--page", lists:flatten(io_lib:format("https://127.0.0.1:~b/chat", [TLSPort])),
		"--ws", lists:flatten(io_lib:format("wss://127.0.0.1:~b/ws/chat", [TLSPort]))],
		120000)).

%% Tools.

url(Scheme, Config, Path) ->
	Port = case Scheme of
		_ when Scheme =:= ws; Scheme =:= http -> ?config(port, Config);
		_ -> ?config(tls_port, Config)
	end,
	lists:flatten(io_lib:format("~s://127.0.0.1:~b~s", [Scheme, Port, Path])).

