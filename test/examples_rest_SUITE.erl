%% The REST examples (examples/rest_hello_world, examples/rest_pastebin),
%% each started as `make example NAME=...' would start it
%% (mustang_example) and checked with curl, over HTTP/1.1 and HTTP/2
%% (prior knowledge).
-module(examples_rest_SUITE).
-compile([export_all, nowarn_export_all]).

-include_lib("common_test/include/ct.hrl").

-import(mustang_test, [doc/1]).

all() ->
	[rest_hello_world, rest_pastebin].

%% curl's output (-sS), the test fails when curl does.
curl(Args) ->
	{0, Out} = mustang_test:run(os:find_executable("curl"), ["-sS" | Args], 30000),
	Out.

url(Port, Path) ->
	"http://127.0.0.1:" ++ integer_to_list(Port) ++ Path.

rest_hello_world(Config) ->
	doc("rest_hello_world: accept chooses HTML (also without accept), JSON or text; "
		"406 for a type it does not provide; vary: accept; the same over HTTP/2."),
	Port = mustang_example:start(rest_hello_world, Config),
	try
		Url = url(Port, "/"),
		Fmt = ["-w", "\n%{http_code} %{content_type}"],
		<<"<html>", _/binary>> = Html = curl(Fmt ++ [Url]),
		{match, _} = re:run(Html, "REST Hello World as HTML!.*\n200 text/html$", [dotall]),
		<<"{\"rest\": \"Hello World!\"}\n200 application/json">>
			= curl(Fmt ++ ["-H", "accept: application/json", Url]),
		<<"REST Hello World as text!\n200 text/plain">>
			= curl(Fmt ++ ["-H", "accept: text/html;q=0.1, text/plain", Url]),
		<<"\n406 ">> = curl(Fmt ++ ["-H", "accept: image/png", Url]),
		Head = curl(["-D", "-", "-o", "/dev/null", "-H", "accept: text/plain", Url]),
		{match, _} = re:run(Head, "^vary: accept\r$", [multiline, caseless]),
		<<"REST Hello World as text!\n2 200">> = curl(["--http2-prior-knowledge",
			"-w", "\n%{http_version} %{http_code}", "-H", "accept: text/plain", Url])
	after
		mustang_example:stop(rest_hello_world)
	end.

rest_pastebin(Config) ->
	doc("rest_pastebin: a text/plain POST is 201 with a location; GET of it gives the "
		"paste as text/plain, or escaped in HTML; its etag revalidates (304); a form POST "
		"is 303 to the paste; an unknown paste is 404; the same over HTTP/2."),
	Port = mustang_example:start(rest_pastebin, Config),
	try
		Created = curl(["-D", "-", "-o", "/dev/null", "--data-binary", "Hello <pastebin> & co",
			"-H", "content-type: text/plain", url(Port, "/")]),
		{match, [<<"201">>]} = re:run(Created, "^HTTP/1.1 (\\d+)", [{capture, all_but_first, binary}]),
		{match, [Location]} = re:run(Created, "^location: (/[0-9a-f]+)\r$",
			[multiline, caseless, {capture, all_but_first, list}]),
		PasteUrl = url(Port, Location),
		<<"Hello <pastebin> & co\n200 text/plain">>
			= curl(["-w", "\n%{http_code} %{content_type}", PasteUrl]),
		Html = curl(["-H", "accept: text/html", PasteUrl]),
		{match, _} = re:run(Html, "<pre>Hello &lt;pastebin&gt; &amp; co</pre>"),
		Get = curl(["-D", "-", "-o", "/dev/null", PasteUrl]),
		{match, [ETag]} = re:run(Get, "^etag: (\"[0-9A-F]+\")\r$",
			[multiline, caseless, {capture, all_but_first, list}]),
		<<"304">> = curl(["-o", "/dev/null", "-w", "%{http_code}",
			"-H", "if-none-match: " ++ ETag, PasteUrl]),
		Form = curl(["-D", "-", "-o", "/dev/null", "-d", "paste=from a form", url(Port, "/")]),
		{match, [FormLocation]} = re:run(Form, "^HTTP/1.1 303 .*^location: (/[0-9a-f]+)\r$",
			[multiline, dotall, caseless, {capture, all_but_first, list}]),
		<<"from a form">> = curl([url(Port, FormLocation)]),
		<<"404">> = curl(["-o", "/dev/null", "-w", "%{http_code}", url(Port, "/nope")]),
		<<"Hello <pastebin> & co\n2 200">> = curl(["--http2-prior-knowledge",
			"-w", "\n%{http_version} %{http_code}", PasteUrl]),
		Index = curl(["-H", "accept: text/html", url(Port, "/")]),
		{match, _} = re:run(Index, "<form method=\"post\" action=\"/\">")
	after
		mustang_example:stop(rest_pastebin)
	end.
