%% The static files example (examples/file_server), started as
%% `make example NAME=file_server' would start it (mustang_example) on its
%% own priv/ directory, and checked with curl over HTTP/1.1 and HTTP/2
%% (prior knowledge).
-module(examples_static_SUITE).
-compile([export_all, nowarn_export_all]).

-include_lib("common_test/include/ct.hrl").
-include_lib("stdlib/include/assert.hrl").

-import(mustang_test, [doc/1]).

all() ->
	[file_server].

%% curl's exit status and output.
curl(Args) ->
	mustang_test:run(os:find_executable("curl"), ["-sS", "--max-time", "20" | Args], 30000).

url(Port, Path) ->
	"http://127.0.0.1:" ++ integer_to_list(Port) ++ Path.

file_server(Config) ->
	doc("file_server: the root and a subdirectory are listed as HTML with escaped links; "
		"files come whole, by range and multipart ranges, 304 on their etag; a directory "
		"path out of the root is never served; the same over HTTP/2."),
	Priv = filename:join(mustang_example:dir(file_server), "priv"),
	ok = application:set_env(file_server, dir, Priv, [{persistent, true}]),
	Port = mustang_example:start(file_server, Config),
	try
		{0, Root} = curl(["-w", "\n%{http_code} %{content_type}", url(Port, "/")]),
		{match, _} = re:run(Root, "<title>Index of /</title>"),
		[{match, _} = re:run(Root, "<li><a href=\"" ++ Href ++ "\">" ++ Text ++ "</a></li>")
			|| {Href, Text} <- [{"/hello.txt", "hello.txt"}, {"/sub/", "sub/"}]],
		{match, _} = re:run(Root, "\n200 text/html; charset=utf-8$"),
		{0, Sub} = curl([url(Port, "/sub/")]),
		{match, _} = re:run(Sub, "<a href=\"/\">..</a>"),
		{match, _} = re:run(Sub, "<a href=\"/sub/a%20%26%20b.txt\">a &amp; b.txt</a>"),
		{ok, Hello} = file:read_file(filename:join(Priv, "hello.txt")),
		?assertEqual({0, <<Hello/binary, "200 text/plain">>},
			curl(["-w", "%{http_code} %{content_type}", url(Port, "/hello.txt")])),
		?assertEqual({0, <<"Spaces & an ampersand in the name.\n">>},
			curl([url(Port, "/sub/a%20%26%20b.txt")])),
		?assertEqual({0, <<"Hello 206">>},
			curl(["-r", "0-4", "-w", " %{http_code}", url(Port, "/hello.txt")])),
		{0, Multi} = curl(["-r", "0-4,6-9", "-w", "\n%{content_type}", url(Port, "/hello.txt")]),
		{match, _} = re:run(Multi, "content-range: bytes 0-4/24\r\n\r\nHello\r\n.*"
			"content-range: bytes 6-9/24\r\n\r\nfrom\r\n.*\nmultipart/byteranges; boundary=",
			[dotall]),
		{0, Head} = curl(["-D", "-", "-o", "/dev/null", url(Port, "/hello.txt")]),
		{match, [ETag]} = re:run(Head, "^etag: (\"[^\"]+\")\r$",
			[multiline, {capture, all_but_first, list}]),
		?assertEqual({0, <<"304">>}, curl(["-o", "/dev/null", "-w", "%{http_code}",
			"-H", "if-none-match: " ++ ETag, url(Port, "/hello.txt")])),
		[begin
			{0, Out} = curl(["--path-as-is", "-w", "\n%{http_code}", url(Port, P)]),
			?assertMatch({match, _}, re:run(Out, "\n40[34]$"), {P, Out}),
			?assertEqual(nomatch, binary:match(Out, <<"file_server_app">>), P)
		end || P <- ["/../src/file_server_app.erl", "/%2e%2e/src/file_server_app.erl",
			"/..%2fsrc%2ffile_server_app.erl", "/../src/", "/sub/%2e%2e%2f"]],
		%% Dot segments are removed first (RFC 3986 5.2.4): /%2e%2e/ is the root.
		{0, Up} = curl(["--path-as-is", url(Port, "/%2e%2e/")]),
		{match, _} = re:run(Up, "<title>Index of /</title>"),
		nomatch = re:run(Up, "src"),
		?assertEqual({0, <<Hello/binary, "2 200">>}, curl(["--http2-prior-knowledge",
			"-w", "%{http_version} %{http_code}", url(Port, "/hello.txt")])),
		{0, Sub2} = curl(["--http2-prior-knowledge", url(Port, "/sub/")]),
		{match, _} = re:run(Sub2, "<title>Index of /sub</title>")
	after
		mustang_example:stop(file_server),
		application:unset_env(file_server, dir, [{persistent, true}])
	end.
