%% The request-handling examples (echo_get, echo_post, upload, cookie,
%% eventsource, long_poll), each started as `make example NAME=...' starts
%% it (mustang_example) and checked with a real client: curl, and httpx for
%% server-sent events.
-module(examples_req_SUITE).
-compile([export_all, nowarn_export_all]).

-include_lib("common_test/include/ct.hrl").
-include_lib("stdlib/include/assert.hrl").

-import(mustang_test, [doc/1]).

suite() ->
	[{timetrap, {seconds, 60}}].

all() ->
	[echo_get, echo_post, upload, cookie, eventsource, long_poll, long_poll_timeout].

init_per_testcase(Name, Config) ->
	Example = case Name of
		long_poll_timeout -> long_poll;
		_ -> Name
	end,
	Port = mustang_example:start(Example, Config),
	[{example, Example}, {url, "http://127.0.0.1:" ++ integer_to_list(Port)} | Config].

end_per_testcase(_, Config) ->
	mustang_example:stop(?config(example, Config)).

%% curl's output (the body, then " CODE" from -w).
curl(Args) ->
	{0, Out} = mustang_test:run(os:find_executable("curl"), ["-sS", "-w", " %{http_code}" | Args],
		30000),
	Out.

url(Config, Path) ->
	?config(url, Config) ++ Path.

%% Tests.

echo_get(Config) ->
	doc("echo_get answers the echo parameter of the query string, 400 without it, "
		"over HTTP/1.1 and h2c."),
	<<"hello world 200">> = curl([url(Config, "/?echo=hello%20world")]),
	<<"hello 200">> = curl(["--http2-prior-knowledge", url(Config, "/?echo=hello")]),
	<<"Missing echo parameter. 400">> = curl([url(Config, "/")]),
	<<" 405">> = curl(["-X", "DELETE", url(Config, "/?echo=x")]).

echo_post(Config) ->
	doc("echo_post answers the echo field of a urlencoded body (curl -d), 400 without it, "
		"405 for GET."),
	<<"hello world 200">> = curl(["-d", "echo=hello+world", url(Config, "/")]),
	<<"hello 200">> = curl(["--http2-prior-knowledge", "-d", "echo=hello", url(Config, "/")]),
	<<"Missing echo parameter. 400">> = curl(["-d", "other=1", url(Config, "/")]),
	<<" 405">> = curl([url(Config, "/")]).

upload(Config) ->
	doc("upload: the form page, and a multipart upload with curl -F (a field and a "
		"1 MB file) over HTTP/1.1 and h2c."),
	Page = curl([url(Config, "/")]),
	{match, _} = re:run(Page, "enctype=\"multipart/form-data\""),
	File = filename:join(?config(priv_dir, Config), "photo.jpg"),
	ok = file:write_file(File, crypto:strong_rand_bytes(1000000)),
	Expected = <<"field comment: holiday\nfile file: photo.jpg (image/jpeg, 1000000 bytes)\n 200">>,
	Expected = curl(["-F", "comment=holiday", "-F", "file=@" ++ File, url(Config, "/upload")]),
	Expected = curl(["--http2-prior-knowledge", "-F", "comment=holiday", "-F", "file=@" ++ File,
		url(Config, "/upload")]).

cookie(Config) ->
	doc("cookie: curl keeps the server cookie in a jar and sends it back; the second "
		"response shows the first one's value; a foreign cookie that does not parse "
		"is filtered out."),
	Jar = filename:join(?config(priv_dir, Config), "jar.txt"),
	First = curl(["-c", Jar, url(Config, "/")]),
	{match, [NewValue]} = re:run(First, "new cookie server: ([0-9]+)", [{capture, all_but_first, binary}]),
	{match, _} = re:run(First, "cookie server sent by the client: \\(none\\)"),
	Second = curl(["-b", Jar, "-c", Jar, "-H", "cookie: client=me; junk=a\tb", url(Config, "/")]),
	{match, _} = re:run(Second, <<"cookie server sent by the client: ", NewValue/binary>>),
	{match, _} = re:run(Second, "cookie client sent by the client: me"),
	{match, _} = re:run(Second, " 200$").

eventsource(Config) ->
	doc("eventsource: httpx streams the events of the loop handler and sees ids 1, 2, 3; "
		"a client that comes back with Last-Event-ID 41 goes on at 42."),
	ok = application:set_env(eventsource, interval, 100),
	Python = mustang_test:require_python(mustang_test:python(), ["httpx"]),
	Script = "import httpx, sys\n"
		"headers = {'last-event-id': sys.argv[2]} if len(sys.argv) > 2 else {}\n"
		"with httpx.stream('GET', sys.argv[1], headers=headers, timeout=10) as r:\n"
		"    print(r.status_code, r.headers['content-type'])\n"
		"    n = 0\n"
		"    for line in r.iter_lines():\n"
		"        if line.startswith('id: '):\n"
		"            print(line)\n"
		"            n += 1\n"
		"            if n == 3: break\n",
	{0, <<"200 text/event-stream\nid: 1\nid: 2\nid: 3\n">>}
		= mustang_test:run(Python, ["-c", Script, url(Config, "/eventsource")], 30000),
	{0, <<"200 text/event-stream\nid: 42\nid: 43\nid: 44\n">>}
		= mustang_test:run(Python, ["-c", Script, url(Config, "/eventsource"), "41"], 30000),
	Page = curl([url(Config, "/")]),
	{match, _} = re:run(Page, "new EventSource\\('/eventsource'\\)").

long_poll(Config) ->
	doc("long_poll: two curl clients wait on a topic; a message published with curl "
		"reaches both, and the publisher learns there were 2 waiters."),
	Self = self(),
	Wait = fun() -> spawn_link(fun() -> Self ! {waited, curl([url(Config, "/wait/news")])} end) end,
	_ = [Wait() || _ <- [1, 2]],
	ok = mustang_test:wait_until(fun() -> length(pg:get_members(long_poll, <<"news">>)) =:= 2 end,
		10000),
	<<"2 200">> = curl(["-d", "extra! extra!", url(Config, "/publish/news")]),
	[<<"extra! extra! 200">>, <<"extra! extra! 200">>] = [receive {waited, Out} -> Out
		after 10000 -> error(no_answer) end || _ <- [1, 2]],
	<<"0 200">> = curl(["-d", "nobody", url(Config, "/publish/news")]).

long_poll_timeout(Config) ->
	doc("long_poll: with nothing published within poll_timeout, the waiter gets 204."),
	ok = application:set_env(long_poll, poll_timeout, 300),
	<<" 204">> = curl([url(Config, "/wait/quiet")]),
	[] = pg:get_members(long_poll, <<"quiet">>).
