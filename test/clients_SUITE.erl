%% Real clients against the demo routes (mustang_demo:routes/0): curl, and
%% Python's httpx and http.client. Their output is compared exactly. Every
%% test runs in the groups inline and process (request_process => true).
%%
%% Python: $MUSTANG_PYTHON, else _tools/venv/bin/python in the repository
%% (scripts/setup.sh installs httpx there), else python3. The scripts are in
%% clients_SUITE_data.
-module(clients_SUITE).
-compile([export_all, nowarn_export_all]).

-include_lib("common_test/include/ct.hrl").
-include_lib("stdlib/include/assert.hrl").

-import(mustang_test, [doc/1, root/0, run/3, require_python/2]).

suite() ->
	[{timetrap, {seconds, 120}}].

all() ->
	mustang_test:common_all().

groups() ->
	mustang_test:common_groups(tests()).

tests() ->
	[
		curl_get,
		curl_get_head,
		curl_keepalive,
		curl_post_echo,
		curl_read_body_5mb_no_expect,
		curl_read_body_5mb_expect,
		curl_chunked_upload,
		curl_upload_not_read,
		curl_stream,
		curl_http10,
		curl_tls,
		httpx_keepalive_100,
		httpx_stream,
		httpx_post,
		httpx_tls,
		httpclient_get,
		httpclient_keepalive,
		httpclient_post,
		httpclient_chunked_upload,
		httpclient_stream
	].

init_per_suite(Config) ->
	{ok, _} = application:ensure_all_started(mustang),
	Curl = case os:find_executable("curl") of
		false -> ct:fail("curl not found: run scripts/setup.sh");
		C -> C
	end,
	Python = require_python(python(), ["httpx"]),
	File = filename:join(?config(priv_dir, Config), "5mb.bin"),
	ok = file:write_file(File, binary:copy(<<"0123456789abcdef">>, 5 * 1024 * 1024 div 16)),
	%% Larger than what the kernel buffers of a loopback connection absorb.
	BigFile = filename:join(?config(priv_dir, Config), "20mb.bin"),
	ok = file:write_file(BigFile, binary:copy(<<"0123456789abcdef">>, 20 * 1024 * 1024 div 16)),
	[{suite, ?MODULE}, {curl, Curl}, {python, Python}, {file_5mb, File}, {file_20mb, BigFile}
		| Config].

end_per_suite(_) ->
	ok.

init_per_group(Mode, Config) ->
	mustang_test:init_group(Mode, Config, routes(), #{}).

%% The demo routes, and a handler that replies without reading the body.
routes() ->
	[{'_', Paths}] = mustang_demo:routes(),
	[{'_', Paths ++ [{"/no_read", no_read_body_h, []}]}].

end_per_group(_, Config) ->
	mustang_test:end_group(Config).

%% Helpers.

python() ->
	case os:getenv("MUSTANG_PYTHON") of
		Python when is_list(Python), Python =/= "" ->
			filename:absname(Python, root());
		_ ->
			Venv = filename:join(root(), "_tools/venv/bin/python"),
			case filelib:is_regular(Venv) of
				true -> Venv;
				false -> os:find_executable("python3")
			end
	end.

curl(Config, Args) ->
	run(?config(curl, Config), ["-sS" | Args], 60000).

python(Config, Script, Args) ->
	run(?config(python, Config), [filename:join(?config(data_dir, Config), Script) | Args], 60000).

url(Config, Path) ->
	"http://127.0.0.1:" ++ integer_to_list(mustang_test:port(Config)) ++ Path.

priv_file(Config, Name) ->
	filename:join(?config(priv_dir, Config),
		atom_to_list(mustang_test:mode(Config)) ++ "_" ++ Name).

with_tls_listener(Name, Config, Fun) ->
	Ref = mustang_test:ref(Name, Config),
	{ok, _} = mustang:start_tls(Ref, #{port => 0, socket_opts => mustang_demo:tls_opts()},
		mustang_test:proto_opts(routes(), mustang_test:mode(Config), #{})),
	try
		Fun(mustang:get_port(Ref))
	after
		mustang_test:stop_listener(Ref)
	end.

%% curl.

curl_get(Config) ->
	doc("curl GET / prints exactly the body \"Hello world!\"."),
	?assertEqual({0, <<"Hello world!">>}, curl(Config, [url(Config, "/")])).

curl_get_head(Config) ->
	doc("curl -i GET / shows the status line, content-type and content-length. "
		"(RFC 9112 4, 6.3)"),
	{0, Out} = curl(Config, ["-i", url(Config, "/")]),
	[Head, Body] = binary:split(Out, <<"\r\n\r\n">>),
	[StatusLine | Lines] = binary:split(Head, <<"\r\n">>, [global]),
	?assertEqual(<<"HTTP/1.1 200 OK">>, StatusLine),
	?assert(lists:member(<<"content-type: text/plain">>, Lines), Lines),
	?assert(lists:member(<<"content-length: 12">>, Lines), Lines),
	?assertEqual(<<"Hello world!">>, Body).

curl_keepalive(Config) ->
	doc("curl reuses the connection for three URLs in one run: one connect. (RFC 9112 9.3)"),
	?assertEqual({0, <<"Hello world! 1\nHello world! 0\nHello world! 0\n">>},
		curl(Config, ["-w", " %{num_connects}\n", url(Config, "/"), url(Config, "/"),
			url(Config, "/")])).

curl_post_echo(Config) ->
	doc("curl POST /echo with a content-type gets the same body and content-type back."),
	Data = rand:bytes(65536),
	In = priv_file(Config, "echo.in"),
	Out = priv_file(Config, "echo.out"),
	Headers = priv_file(Config, "echo.headers"),
	ok = file:write_file(In, Data),
	?assertEqual({0, <<"200">>}, curl(Config, ["--data-binary", "@" ++ In,
		"-H", "content-type: application/x-test", "-D", Headers, "-o", Out,
		"-w", "%{http_code}", url(Config, "/echo")])),
	?assertEqual({ok, Data}, file:read_file(Out)),
	{ok, HeaderBin} = file:read_file(Headers),
	?assertNotEqual(nomatch, binary:match(HeaderBin, <<"\r\ncontent-type: application/x-test\r\n">>)).

curl_read_body_5mb_no_expect(Config) ->
	doc("curl POST /read_body of 5 MB without Expect gets the length back, and no "
		"100 Continue."),
	Headers = priv_file(Config, "no_expect.headers"),
	?assertEqual({0, <<"5242880">>}, curl(Config, ["-H", "Expect:",
		"--data-binary", "@" ++ ?config(file_5mb, Config), "-D", Headers,
		url(Config, "/read_body")])),
	{ok, HeaderBin} = file:read_file(Headers),
	?assertMatch(<<"HTTP/1.1 200 OK\r\n", _/bits>>, HeaderBin).

curl_read_body_5mb_expect(Config) ->
	doc("curl POST /read_body of 5 MB sends Expect: 100-continue; the server answers "
		"100 Continue, then the length. (RFC 9110 10.1.1)"),
	Headers = priv_file(Config, "expect.headers"),
	?assertEqual({0, <<"5242880">>}, curl(Config, [
		"--data-binary", "@" ++ ?config(file_5mb, Config), "-D", Headers,
		url(Config, "/read_body")])),
	{ok, HeaderBin} = file:read_file(Headers),
	?assertMatch(<<"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\n", _/bits>>, HeaderBin).

curl_chunked_upload(Config) ->
	doc("curl POST /read_body of 5 MB with Transfer-Encoding: chunked gets the length "
		"back. (RFC 9112 7.1)"),
	?assertEqual({0, <<"5242880">>}, curl(Config, ["-H", "Transfer-Encoding: chunked",
		"--data-binary", "@" ++ ?config(file_5mb, Config), url(Config, "/read_body")])).

curl_upload_not_read(Config) ->
	doc("curl POST of 20 MB to a handler that replies without reading it: curl gets the "
		"response and ends without a send error, because the server closes in stages "
		"(lingering close). (RFC 9112 9.6)"),
	?assertEqual({0, <<"not read 200">>}, curl(Config, ["-H", "Expect:",
		"--data-binary", "@" ++ ?config(file_20mb, Config), "-w", " %{http_code}",
		url(Config, "/no_read")])).

curl_stream(Config) ->
	doc("curl GET /stream gets the five chunks joined. (RFC 9112 7.1)"),
	?assertEqual({0, <<"part 1\npart 2\npart 3\npart 4\npart 5\n">>},
		curl(Config, [url(Config, "/stream")])).

curl_http10(Config) ->
	doc("curl --http1.0 GET / gets a 200 and the body; the connection is not kept. "
		"(RFC 9112 9.3)"),
	?assertEqual({0, <<"Hello world!200 1">>}, curl(Config, ["--http1.0",
		"-w", "%{http_code} %{num_connects}", url(Config, "/")])).

curl_tls(Config) ->
	doc("curl -k over TLS: GET / and a 1 MB POST /echo round trip."),
	with_tls_listener(?FUNCTION_NAME, Config, fun(Port) ->
		Base = "https://127.0.0.1:" ++ integer_to_list(Port),
		?assertEqual({0, <<"Hello world!">>}, curl(Config, ["-k", Base ++ "/"])),
		Data = rand:bytes(1024 * 1024),
		In = priv_file(Config, "tls.in"),
		Out = priv_file(Config, "tls.out"),
		ok = file:write_file(In, Data),
		?assertEqual({0, <<"200">>}, curl(Config, ["-k", "--data-binary", "@" ++ In,
			"-o", Out, "-w", "%{http_code}", Base ++ "/echo"])),
		?assertEqual({ok, Data}, file:read_file(Out))
	end).

%% httpx.

httpx_keepalive_100(Config) ->
	doc("httpx: 100 GETs on one keep-alive client all succeed on one connection. "
		"(RFC 9112 9.3)"),
	?assertEqual({0, <<"status 200 x100\nbody Hello world!\nconnections 1\n">>},
		python(Config, "httpx_client.py", ["keepalive", url(Config, ""), "100"])).

httpx_stream(Config) ->
	doc("httpx: GET /stream read as a stream is chunked and has the five parts. "
		"(RFC 9112 7.1)"),
	?assertEqual({0, <<"200\nchunked\npart 1\npart 2\npart 3\npart 4\npart 5\n">>},
		python(Config, "httpx_client.py", ["stream", url(Config, "")])).

httpx_post(Config) ->
	doc("httpx: a 1 MiB POST /echo comes back identical with its content-type; "
		"POST /read_body gives its length."),
	?assertEqual({0, <<"200 application/x-test True 1048576\n200 1048576\n">>},
		python(Config, "httpx_client.py", ["post", url(Config, "")])).

httpx_tls(Config) ->
	doc("httpx over TLS (no certificate check): GET / over HTTP/1.1."),
	with_tls_listener(?FUNCTION_NAME, Config, fun(Port) ->
		?assertEqual({0, <<"200 HTTP/1.1 Hello world!\n">>}, python(Config, "httpx_client.py",
			["tls", "https://127.0.0.1:" ++ integer_to_list(Port)]))
	end).

%% http.client.

httpclient_get(Config) ->
	doc("http.client GET / gets 200 OK over HTTP/1.1 with its headers and body."),
	?assertEqual({0, <<"200 OK 11\ntext/plain 12\nHello world!\n">>},
		python(Config, "httpclient_client.py", ["get", port_arg(Config)])).

httpclient_keepalive(Config) ->
	doc("http.client: 20 GETs on one HTTPConnection use one connection. (RFC 9112 9.3)"),
	?assertEqual({0, <<"200 Hello world!\nconnections 1\n">>},
		python(Config, "httpclient_client.py", ["keepalive", port_arg(Config), "20"])).

httpclient_post(Config) ->
	doc("http.client POST /echo comes back identical with its content-type."),
	?assertEqual({0, <<"200 text/x-test True 8000\n">>},
		python(Config, "httpclient_client.py", ["post", port_arg(Config)])).

httpclient_chunked_upload(Config) ->
	doc("http.client POST /read_body with a chunked body gets its length. (RFC 9112 7.1)"),
	?assertEqual({0, <<"200 5000\n">>},
		python(Config, "httpclient_client.py", ["chunked", port_arg(Config)])).

httpclient_stream(Config) ->
	doc("http.client GET /stream is chunked and has the five parts. (RFC 9112 7.1)"),
	?assertEqual({0, <<"200 chunked\npart 1\npart 2\npart 3\npart 4\npart 5\n">>},
		python(Config, "httpclient_client.py", ["stream", port_arg(Config)])).

port_arg(Config) ->
	integer_to_list(mustang_test:port(Config)).
