%% mustang_mimetypes, the table generated from /etc/mime.types.
-module(mustang_mimetypes_tests).

-include_lib("eunit/include/eunit.hrl").

web_test_() ->
	Tests = [
		{<<"index.html">>, {<<"text">>, <<"html">>, []}},
		{<<"/a/b/INDEX.HTM">>, {<<"text">>, <<"html">>, []}},
		{"style.css", {<<"text">>, <<"css">>, []}},
		{<<"app.js">>, {<<"text">>, <<"javascript">>, []}},
		{<<"data.json">>, {<<"application">>, <<"json">>, []}},
		{<<"logo.svg">>, {<<"image">>, <<"svg+xml">>, []}},
		{<<"a.png">>, {<<"image">>, <<"png">>, []}},
		{<<"a.woff2">>, {<<"font">>, <<"woff2">>, []}},
		{<<"a.wasm">>, {<<"application">>, <<"wasm">>, []}},
		%% Known to all/1 but not a web type.
		{<<"a.tar">>, {<<"application">>, <<"octet-stream">>, []}},
		{<<"noext">>, {<<"application">>, <<"octet-stream">>, []}},
		{<<".css">>, {<<"application">>, <<"octet-stream">>, []}},
		{<<"dir.css/file">>, {<<"application">>, <<"octet-stream">>, []}},
		{<<"a.", 255, 200>>, {<<"application">>, <<"octet-stream">>, []}},
		{[$a, $., 16#3b1], {<<"application">>, <<"octet-stream">>, []}}
	],
	[{iolist_to_binary(io_lib:format("~w", [P])), ?_assertEqual(T, mustang_mimetypes:web(P))}
		|| {P, T} <- Tests].

all_test_() ->
	Tests = [
		{<<"index.html">>, {<<"text">>, <<"html">>, []}},
		{<<"a.tar">>, {<<"application">>, <<"x-tar">>, []}},
		{<<"A.PDF">>, {<<"application">>, <<"pdf">>, []}},
		{<<"a.docx">>, {<<"application">>,
			<<"vnd.openxmlformats-officedocument.wordprocessingml.document">>, []}},
		{"a.mkv", {<<"video">>, <<"x-matroska">>, []}},
		{<<"noext">>, {<<"application">>, <<"octet-stream">>, []}}
	],
	[{iolist_to_binary(io_lib:format("~w", [P])), ?_assertEqual(T, mustang_mimetypes:all(P))}
		|| {P, T} <- Tests].

%% Every web type is the type all/1 gives the same extension.
web_agrees_with_all_test() ->
	Exts = ["avif", "css", "html", "js", "json", "mp4", "svg", "txt", "webp", "woff2", "xml"],
	[?assertEqual(mustang_mimetypes:all("x." ++ E), mustang_mimetypes:web("x." ++ E)) || E <- Exts].
