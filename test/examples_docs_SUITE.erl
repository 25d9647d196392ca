%% The examples of the documentation part of the Handlers issue, each
%% started as `make example NAME=...' would start it (mustang_example) and
%% checked with real clients: curl, httpx and the Python websockets client.
-module(examples_docs_SUITE).
-compile([export_all, nowarn_export_all]).

-include_lib("common_test/include/ct.hrl").

all() ->
	[compress_response, websocket_chat, websocket_chat_page, websocket_chat_browser,
		markdown_middleware].

init_per_testcase(Name, Config) ->
	App = case atom_to_list(Name) of
		"websocket_chat" ++ _ -> websocket_chat;
		_ -> Name
	end,
	[{app, App}, {port, mustang_example:start(App, Config)} | Config].

end_per_testcase(_, Config) ->
	mustang_example:stop(?config(app, Config)).

%% The handler's body, gzipped on the wire for clients that accept gzip,
%% identity for the others; over HTTP/1.1 and h2c, with curl and httpx.
compress_response(Config) ->
	Url = url(Config, "/"),
	Dir = ?config(priv_dir, Config),
	%% No accept-encoding: the body as the handler wrote it.
	{200, Headers, Identity} = curl(Dir, [Url]),
	nomatch = string:find(Headers, "content-encoding"),
	{match, _} = re:run(Identity, "^Line 001: .*\nLine 100: [^\n]*\n$", [dotall]),
	lists:foreach(fun(Version) ->
		%% The raw body is gzip and decodes to the same bytes.
		{200, GzHeaders, Gzip} = curl(Dir, Version ++ ["-H", "accept-encoding: gzip", Url]),
		{match, _} = re:run(GzHeaders, "^content-encoding: gzip\r?$", [multiline, caseless]),
		{match, _} = re:run(GzHeaders, "^vary: accept-encoding\r?$", [multiline, caseless]),
		Identity = zlib:gunzip(Gzip),
		true = byte_size(Gzip) * 4 < byte_size(Identity),
		%% curl --compressed decodes it.
		{200, _, Identity} = curl(Dir, Version ++ ["--compressed", Url])
	end, [[], ["--http2-prior-knowledge"]]),
	%% httpx asks for gzip and decodes.
	lists:foreach(fun({Version, HttpVersion}) ->
		#{<<"status">> := 200, <<"http_version">> := HttpVersion,
			<<"content_encoding">> := <<"gzip">>, <<"text">> := Identity,
			<<"wire">> := Wire} = httpx(Config, Version, Url),
		true = Wire * 4 < byte_size(Identity)
	end, [{"1.1", <<"HTTP/1.1">>}, {"h2c", <<"HTTP/2">>}]).

%% Two clients (Python websockets) see each other's messages, joins and
%% leaves, in order.
websocket_chat(Config) ->
	Python = mustang_test:require_python(mustang_test:python(), ["websockets"]),
	Script = filename:join(?config(data_dir, Config), "ws_chat.py"),
	Url = "ws://127.0.0.1:" ++ integer_to_list(?config(port, Config)) ++ "/ws",
	{0, Out} = mustang_test:run(Python, [Script, Url], 60000),
	ct:log("~s", [Out]),
	#{<<"alice">> := [<<"* alice joined">>, <<"* bob joined">>, <<"alice: hello from alice">>,
			<<"bob: hello from bob">>, <<"* bob left">>],
		<<"bob">> := [<<"* bob joined">>, <<"alice: hello from alice">>,
			<<"bob: hello from bob">>]} = mustang_test:json(Out).

%% The page: HTML with the script that opens the Websocket, over HTTP/1.1
%% and h2c.
websocket_chat_page(Config) ->
	Dir = ?config(priv_dir, Config),
	lists:foreach(fun(Version) ->
		{200, Headers, Page} = curl(Dir, Version ++ [url(Config, "/")]),
		{match, _} = re:run(Headers, "^content-type: text/html", [multiline, caseless]),
		{match, _} = re:run(Page, "new WebSocket\\(scheme \\+ location.host \\+ '/ws\\?name="),
		{match, _} = re:run(Page, "textContent = text")
	end, [[], ["--http2-prior-knowledge"]]).

%% The page in a browser: two headless Chromium tabs load it and chat with a
%% Python websockets client (websocket_SUITE's Chromium driver, told that
%% lines arrive as "name: text"); each sees every message.
websocket_chat_browser(Config) ->
	Python = mustang_test:require_python(mustang_test:python(), ["websockets"]),
	Chromium = mustang_test:tool("chromium", undefined, ["/usr/bin/chromium", "/usr/bin/chromium-browser"]),
	Script = filename:join([?config(data_dir, Config), "..", "websocket_SUITE_data", "chromium_chat.py"]),
	Port = integer_to_list(?config(port, Config)),
	{Status, Out} = mustang_test:run(Python, [Script, "--chromium", Chromium,
		"--profile", filename:join(?config(priv_dir, Config), "chromium-websocket_chat"),
		"--page", "http://127.0.0.1:" ++ Port ++ "/", "--ws", "ws://127.0.0.1:" ++ Port ++ "/ws",
		"--prefixed"], 120000),
	ct:log("~s", [Out]),
	0 = Status,
	nomatch = string:find(Out, "FAIL"),
	{match, _} = re:run(Out, "^ok tab A got the Python client's message$", [multiline]).

%% The middleware renders priv/<name>.md for /<name>.html and stops the
%% chain; other requests reach the router (/ lists the pages, an unknown
%% path is 404); names that could leave the directory are never looked up.
markdown_middleware(Config) ->
	ok = application:set_env(markdown_middleware, dir,
		filename:join(mustang_example:dir(markdown_middleware), "priv")),
	Dir = ?config(priv_dir, Config),
	lists:foreach(fun(Version) ->
		{200, Headers, Page} = curl(Dir, Version ++ [url(Config, "/index.html")]),
		{match, _} = re:run(Headers, "^content-type: text/html; charset=utf-8", [multiline, caseless]),
		{match, _} = re:run(Page, "<title>index</title>"),
		{match, _} = re:run(Page, "<h1>Mustang</h1>\n<p>A small, fast HTTP server for <strong>Erlang/OTP</strong>."),
		{match, _} = re:run(Page, "<h2>What it shows</h2>\n<ul>\n<li>a custom middleware before <code>mustang_router</code></li>"),
		{match, _} = re:run(Page, "<li><em>escaping</em>: &lt;script&gt; in a page is text, not markup</li>"),
		nomatch = re:run(Page, "<script>"),
		{match, _} = re:run(Page, "<a href=\"about.html\">other page</a>"),
		{match, _} = re:run(Page, "<pre><code>middlewares =&gt; \\[markdown_middleware_converter, "),
		{200, _, About} = curl(Dir, Version ++ [url(Config, "/about.html")]),
		{match, _} = re:run(About, "<h1>About</h1>"),
		{200, _, Index} = curl(Dir, Version ++ [url(Config, "/")]),
		{match, _} = re:run(Index, "<li><a href=\"about.html\">about</a></li>\n<li><a href=\"index.html\">index</a></li>"),
		{404, _, _} = curl(Dir, Version ++ [url(Config, "/missing.html")]),
		{404, _, _} = curl(Dir, Version ++ [url(Config, "/index.md")]),
		%% index.md exists one level up from a name with a dot-dot: no.
		{404, _, _} = curl(Dir, Version ++ ["--path-as-is", url(Config, "/x/../index.html")]),
		{404, _, _} = curl(Dir, Version ++ [url(Config, "/..%2fpriv%2findex.html")]),
		{404, _, _} = curl(Dir, Version ++ [url(Config, "/%2e%2e/index.html")])
	end, [[], ["--http2-prior-knowledge"]]),
	%% Only GET and HEAD are answered by the middleware.
	{404, _, _} = curl(Dir, ["-X", "POST", "-d", "x", url(Config, "/index.html")]),
	%% curl -I writes the head as the output too: nothing follows it.
	{200, Head, Head} = curl(Dir, ["-I", url(Config, "/index.html")]),
	{match, _} = re:run(Head, "^content-type: text/html", [multiline, caseless]).

url(Config, Path) ->
	"http://127.0.0.1:" ++ integer_to_list(?config(port, Config)) ++ Path.

%% curl Args: {Status, Headers, Body} of the last response (headers as text,
%% body as bytes, both through files so that binary bodies stay intact).
curl(Dir, Args) ->
	Id = integer_to_list(erlang:unique_integer([positive])),
	HeadersFile = filename:join(Dir, "headers" ++ Id),
	BodyFile = filename:join(Dir, "body" ++ Id),
	{0, Status} = mustang_test:run(os:find_executable("curl"), ["-s", "-D", HeadersFile,
		"-o", BodyFile, "-w", "%{http_code}" | Args], 30000),
	{ok, Headers} = file:read_file(HeadersFile),
	Body = case file:read_file(BodyFile) of
		{ok, B} -> B;
		{error, enoent} -> <<>>
	end,
	{binary_to_integer(Status), Headers, Body}.

httpx(Config, Version, Url) ->
	Python = mustang_test:require_python(mustang_test:python(), ["httpx", "h2"]),
	Script = filename:join(?config(data_dir, Config), "httpx_get.py"),
	{0, Out} = mustang_test:run(Python, [Script, Version, Url], 60000),
	mustang_test:json(Out).
