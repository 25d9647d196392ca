%% HTTP/2 end to end (RFC 9113, RFC 8441), black box:
%% - h2spec --strict over h2c and h2 (TLS);
%% - real clients: curl (h2c Upgrade, prior knowledge, ALPN h2), nghttp,
%%   h2load, httpx, headless Chromium;
%% - frame-level cases h2spec does not cover, written in Python
%%   (http2_SUITE_data/h2_frames.py: one case per call, one JSON line out);
%% - the protections against floods and abusive peers, each at its default
%%   limit, plus honest bulk traffic that must not be cut;
%% - a PropEr property sending random and mutated frame sequences.
%%
%% Every external tool is required: a missing one fails its test (run
%% scripts/setup.sh). h2spec is looked up as $H2SPEC, then
%% _tools/go/bin/h2spec, then on PATH. Python is $MUSTANG_PYTHON, then
%% _tools/venv/bin/python.
-module(http2_SUITE).
-compile([export_all, nowarn_export_all]).

-include_lib("common_test/include/ct.hrl").
-include_lib("proper/include/proper.hrl").

-import(mustang_test, [doc/1, root/0, python/0, require_python/2, tool/3, run/3, kill_port/1,
	json/1]).

-define(MAX_STREAM_ID, 2147483647).

suite() ->
	[{timetrap, {seconds, 180}}].

all() ->
	[{group, h2spec}, {group, clients}, {group, frames}, {group, floods}, {group, robustness}].

groups() ->
	[
		{h2spec, [parallel], [h2spec_h2c, h2spec_tls]},
		{clients, [parallel], [
			curl_h2c_upgrade,
			curl_h2c_upgrade_post,
			curl_prior_knowledge,
			curl_prior_knowledge_post,
			curl_tls_alpn,
			curl_tls_post,
			curl_tls_no_alpn,
			alpn_default_http2,
			protocols_http_only,
			h2c_upgrade_frames,
			h2c_upgrade_with_body_frames,
			nghttp_get,
			nghttp_upload,
			nghttp_push,
			push_ignored_over_http1,
			httpx_tls,
			chromium_tls
		]},
		{frames, [parallel], [
			request_trailers,
			response_trailers,
			connect_protocol_enabled,
			connect_protocol_disabled,
			flow_control_backpressure,
			goaway_on_stop,
			client_goaway,
			content_length_mismatch,
			self_dependent_headers,
			server_push,
			server_push_disabled,
			server_push_no_streams,
			server_push_after_reply,
			connection_specific_response_fields,
			authority_port_zero,
			handler_crash,
			header_list_size,
			settings_timeout,
			idle_timeout,
			preface_timeout
		]},
		{floods, [parallel], [
			rapid_reset,
			continuation_flood,
			header_block_size,
			empty_continuation,
			settings_flood,
			ping_flood,
			priority_flood,
			window_update_flood,
			empty_data_flood,
			hpack_bomb,
			max_concurrent_streams,
			refused_stream_flood,
			flow_control_timeout,
			bulk_requests_python,
			bulk_requests_h2load,
			upload_200mb
		]},
		{robustness, [], [mutated_frames_property]}
	].

init_per_suite(Config) ->
	{ok, _} = application:ensure_all_started(mustang),
	Python = require_python(python(), ["hpack", "h2", "httpx"]),
	[{python, Python}, {tls_opts, mustang_demo:tls_opts()} | Config].

end_per_suite(_) ->
	ok.

%% Each group gets a clear and a TLS listener with the default options.
init_per_group(Group, Config) ->
	Clear = {?MODULE, Group, clear},
	TLS = {?MODULE, Group, tls},
	{ok, _} = mustang:start_clear(Clear, #{port => 0}, proto_opts(#{})),
	{ok, _} = mustang:start_tls(TLS, #{port => 0, socket_opts => ?config(tls_opts, Config)},
		proto_opts(#{})),
	[{clear_ref, Clear}, {tls_ref, TLS}, {port, mustang:get_port(Clear)},
		{tls_port, mustang:get_port(TLS)} | Config].

end_per_group(_, Config) ->
	_ = mustang:stop_listener(?config(clear_ref, Config)),
	_ = mustang:stop_listener(?config(tls_ref, Config)),
	ok.

%% Handlers given #{notify => Name} send what they do to the process
%% registered as Name: the group listeners use no name, a test that watches
%% its handlers starts a listener of its own whose routes name it.
routes(Observer) ->
	Notify = #{notify => Observer},
	[{'_', [
		{"/", hello_h, []},
		{"/echo", mustang_demo_echo_h, []},
		{"/read_body", read_body_h, #{length => 65536}},
		%% h2spec's target: reads the body, then a response long enough for
		%% the flow-control cases (6.9.2/2 is skipped below 5 bytes or so).
		{"/h2spec", read_body_h, #{length => 65536, pad => 1000}},
		{"/version", echo_h, version},
		{"/echo/:key", echo_h, undefined},
		{"/push", h2_push_h, [
			{"/echo/target", #{<<"accept">> => <<"text/plain">>}, #{}},
			{"/echo/method", #{}, #{method => <<"HEAD">>}},
			{"/echo/qs", #{}, #{qs => <<"a=1&b=2">>}}
		]},
		{"/push/after_reply", h2_push_h, after_reply},
		{"/hop_headers/push", hop_headers_h, push},
		{"/hop_headers/pushed", hop_headers_h, pushed},
		{"/stream/trailers", stream_h, trailers},
		{"/slow/:ms", h2_slow_h, Notify},
		{"/crash/before", crash_h, before_reply},
		{"/crash/after", crash_h, after_stream_reply},
		{"/ws", h2_connect_h, Notify},
		{"/page", h2_page_h, []},
		%% 16 MiB in 256 chunks of 64 KiB.
		{"/big", h2_stream_chunks_h, Notify#{chunks => 256, size => 65536}}
	]}].

proto_opts(Extra) ->
	proto_opts(none, Extra).

proto_opts(Observer, Extra) ->
	maps:merge(#{env => #{dispatch => mustang_router:compile(routes(Observer))}}, Extra).

%% A listener of its own for a test that needs other options; its handlers
%% notify the process registered as Name (see routes/1).
with_listener(Name, Transport, ProtoExtra, Config, Fun) ->
	Ref = {?MODULE, Name},
	{ok, _} = case Transport of
		clear -> mustang:start_clear(Ref, #{port => 0}, proto_opts(Name, ProtoExtra));
		tls -> mustang:start_tls(Ref, #{port => 0, socket_opts => ?config(tls_opts, Config)},
			proto_opts(Name, ProtoExtra))
	end,
	try
		Fun(mustang:get_port(Ref), Ref)
	after
		_ = mustang:stop_listener(Ref)
	end.

%% Tools.

%% Runs one case of h2_frames.py; returns its JSON line decoded.
py(Config, Case, Port, Args) ->
	py(Config, Case, Port, Args, 60000).

py(Config, Case, Port, Args, Timeout) ->
	Script = filename:join(?config(data_dir, Config), "h2_frames.py"),
	CaseArgs = [atom_to_list(Case), integer_to_list(Port) | [kv(A) || A <- Args]],
	case run(?config(python, Config), [Script | CaseArgs], Timeout) of
		{0, Out} -> last_json(Case, Out);
		{Status, Out} -> ct:fail("h2_frames.py ~p exited with ~p:~n~s", [Case, Status, Out])
	end.

kv({K, V}) when is_integer(V) -> atom_to_list(K) ++ "=" ++ integer_to_list(V);
kv({K, V}) -> atom_to_list(K) ++ "=" ++ V.

last_json(Case, Out) ->
	Lines = [L || L = <<"{", _/bits>> <- binary:split(Out, <<"\n">>, [global, trim_all])],
	case Lines of
		[] -> ct:fail("h2_frames.py ~p printed no JSON:~n~s", [Case, Out]);
		_ ->
			R = json(lists:last(Lines)),
			case R of
				#{<<"error">> := E} -> ct:fail("h2_frames.py ~p failed: ~s~n~s",
					[Case, E, maps:get(<<"trace">>, R, <<>>)]);
				_ -> ct:log("~p: ~s", [Case, lists:last(Lines)]), R
			end
	end.

%% Interactive cases: the script prints one JSON line per phase and waits
%% for a line on stdin between phases.
py_open(Config, Case, Port, Args) ->
	Script = filename:join(?config(data_dir, Config), "h2_frames.py"),
	open_port({spawn_executable, ?config(python, Config)},
		[{args, [Script, atom_to_list(Case), integer_to_list(Port) | [kv(A) || A <- Args]]},
			{line, 1000000}, binary, exit_status, use_stdio, hide]).

py_line(Port, Timeout) ->
	receive
		{Port, {data, {eol, Line = <<"{", _/bits>>}}} ->
			ct:log("line: ~s", [Line]),
			R = json(Line),
			case R of
				#{<<"error">> := E} -> ct:fail("h2_frames.py failed: ~s~n~s",
					[E, maps:get(<<"trace">>, R, <<>>)]);
				_ -> R
			end;
		{Port, {data, {_, Other}}} ->
			ct:log("script: ~s", [Other]),
			py_line(Port, Timeout);
		{Port, {exit_status, S}} ->
			ct:fail("h2_frames.py exited with ~p before printing its next line", [S])
	after Timeout ->
		kill_port(Port),
		ct:fail("h2_frames.py printed nothing in ~b ms", [Timeout])
	end.

%% Assertions that explain themselves.

get_in(Path, R) ->
	lists:foldl(fun
		(K, M) when is_map(M) -> maps:get(K, M, null);
		(_, _) -> null
	end, R, [to_bin(K) || K <- Path]).

to_bin(K) when is_atom(K) -> atom_to_binary(K);
to_bin(K) when is_list(K) -> list_to_binary(K);
to_bin(K) -> K.

eq(What, Expected, Actual, R) ->
	case Actual of
		Expected -> ok;
		_ -> ct:fail("~s: expected ~0p, got ~0p~nwhole result: ~0p", [What, Expected, Actual, R])
	end.

is(_What, true, _) -> ok;
is(What, false, R) -> ct:fail("~s does not hold~nwhole result: ~0p", [What, R]).

%% The code of the last GOAWAY received, or none.
goaway_code(R) ->
	case get_in([goaways], R) of
		[] -> none;
		null -> none;
		Gs -> maps:get(<<"code">>, lists:last(Gs))
	end.

%% The flood was cut with GOAWAY Code, and a new connection is still served.
assert_cut(Code, R) ->
	eq("GOAWAY code", Code, goaway_code(R), R),
	eq("connection closed after GOAWAY", true, get_in([closed], R), R),
	eq("status on a new connection", 200, get_in([fresh_status], R), R).

%% No GOAWAY, the same connection still answers, and so does a new one.
assert_not_cut(R) ->
	eq("GOAWAY code", none, goaway_code(R), R),
	eq("status of a request on the same connection", 200, get_in([still_usable], R), R),
	eq("status on a new connection", 200, get_in([fresh_status], R), R).

%% A HEADERS frame whose stream depends on itself.

self_dependent_headers(Config) ->
	doc("A HEADERS frame whose stream depends on itself is reset with PROTOCOL_ERROR, and "
		"its header block still updates the HPACK table: the next request refers to the "
		"entry it added and is answered 200. (RFC 9113 4.3, 5.3.1)"),
	{ok, S} = gen_tcp:connect("127.0.0.1", ?config(port, Config),
		[binary, {active, false}, {packet, raw}]),
	Request = [{<<":method">>, <<"GET">>}, {<<":scheme">>, <<"http">>},
		{<<":authority">>, <<"localhost">>}, {<<":path">>, <<"/">>},
		{<<"x-added">>, <<"to the dynamic table">>}],
	{Block1, Enc1} = mustang_hpack:encode(Request, mustang_hpack:init()),
	%% Same fields again: the encoder refers to the entries the first
	%% block inserted.
	{Block2, _} = mustang_hpack:encode(Request, Enc1),
	B1 = iolist_to_binary(Block1),
	Len1 = byte_size(B1) + 5,
	%% END_STREAM | END_HEADERS | PRIORITY, stream 1 depending on stream 1.
	SelfDependent = <<Len1:24, 1:8, 16#25:8, 0:1, 1:31, 0:1, 1:31, 15:8, B1/binary>>,
	ok = gen_tcp:send(S, [mustang_http2_frame:preface(), mustang_http2_frame:settings(#{}),
		SelfDependent, mustang_http2_frame:headers(3, fin, Block2)]),
	Frames = h2_read_frames(S, <<>>, [], 3000),
	ok = gen_tcp:close(S),
	ct:log("~p", [Frames]),
	case {lists:member({rst_stream, 1, protocol_error}, Frames),
			[F || F = {headers, 3, _, _, _} <- Frames], [F || F = {goaway, _, _, _} <- Frames]} of
		{true, [_ | _], []} -> ok;
		_ -> ct:fail("expected RST_STREAM(1, PROTOCOL_ERROR), a response on stream 3 and no "
			"GOAWAY; got ~p", [Frames])
	end.

%% Frames until stream 3 ends (or Timeout ms).
h2_read_frames(S, Buffer, Acc, Timeout) ->
	case mustang_http2_frame:parse(Buffer, 16384) of
		{ok, Frame = {data, 3, fin, _}, _} ->
			lists:reverse([Frame | Acc]);
		{ok, Frame = {headers, 3, fin, _, _}, _} ->
			lists:reverse([Frame | Acc]);
		{ok, Frame, Rest} ->
			h2_read_frames(S, Rest, [Frame | Acc], Timeout);
		_ ->
			case gen_tcp:recv(S, 0, Timeout) of
				{ok, Data} -> h2_read_frames(S, <<Buffer/binary, Data/binary>>, Acc, Timeout);
				{error, Reason} -> lists:reverse([{recv_error, Reason} | Acc])
			end
	end.

%% h2spec.

h2spec_h2c(Config) ->
	doc("h2spec --strict over h2c (prior knowledge): every case passes."),
	h2spec(Config, ?config(port, Config), []).

h2spec_tls(Config) ->
	doc("h2spec --strict over TLS with ALPN h2: every case passes."),
	h2spec(Config, ?config(tls_port, Config), ["-t", "-k"]).

%% h2spec targets /h2spec (read_body_h), whose handler reads the whole request body
%% before it replies. With a handler that replies at once (GET / here), the
%% response can complete, and the server close the stream with RST_STREAM
%% NO_ERROR (RFC 9113 8.1), before h2spec's next frames arrive; cases 6.9.1/3
%% (window overflow on a stream) and 8.1.2.6/2 (content-length over several
%% DATA frames) then meet a closed stream and fail now and then over TLS.
h2spec(Config, Port, Extra) ->
	H2spec = tool("h2spec", "H2SPEC", [filename:join(root(), "_tools/go/bin/h2spec")]),
	Report = filename:join(?config(priv_dir, Config),
		"h2spec_" ++ integer_to_list(Port) ++ ".xml"),
	{Status, Out} = run(H2spec, ["--strict", "-h", "127.0.0.1", "-p", integer_to_list(Port),
		"-P", "/h2spec", "-o", "5", "-j", Report | Extra], 170000),
	ct:log("~s", [Out]),
	case re:run(Out, "(\\d+) tests, (\\d+) passed, (\\d+) skipped, (\\d+) failed",
			[{capture, all, binary}]) of
		{match, [Summary, _, _, _, <<"0">>]} when Status =:= 0 ->
			ct:pal("h2spec: ~s", [Summary]),
			ct:comment("~s", [Summary]);
		{match, [Summary | _]} ->
			ct:pal("h2spec: ~s", [Summary]),
			ct:comment("~s", [Summary]),
			ct:fail("h2spec: ~s; failed cases:~n~s", [Summary, failed_cases(Report, Out)]);
		nomatch ->
			ct:fail("h2spec exited with ~p and printed no summary:~n~s", [Status, Out])
	end.

%% "http2/6.5.3: Sends multiple values of SETTINGS_INITIAL_WINDOW_SIZE" lines
%% from the JUnit report (h2spec marks failed cases <error>), else the
%% failure lines of the output.
failed_cases(Report, Out) ->
	case file:read_file(Report) of
		{ok, Xml} ->
			Cases = re:run(Xml, "<testcase package=\"([^\"]*)\" classname=\"([^\"]*)\""
				"[^>]*>\\s*<(?:failure|error)", [global, {capture, all_but_first, binary}]),
			case Cases of
				{match, L} -> [[P, ": ", unescape(C), "\n"] || [P, C] <- L];
				nomatch -> failed_lines(Out)
			end;
		{error, _} ->
			failed_lines(Out)
	end.

failed_lines(Out) ->
	[[L, "\n"] || L <- binary:split(Out, <<"\n">>, [global]),
		binary:match(L, <<"×"/utf8>>) =/= nomatch].

unescape(S) ->
	lists:foldl(fun({F, T}, Acc) -> binary:replace(Acc, F, T, [global]) end, S,
		[{<<"&quot;">>, <<"\"">>}, {<<"&lt;">>, <<"<">>}, {<<"&gt;">>, <<">">>},
			{<<"&#39;">>, <<"'">>}, {<<"&#34;">>, <<"\"">>}, {<<"&amp;">>, <<"&">>}]).

%% Real clients.

curl(Args) ->
	Curl = tool("curl", undefined, []),
	{Status, Out} = run(Curl, ["-sS" | Args], 60000),
	case Status of
		0 -> Out;
		_ -> ct:fail("curl ~p exited with ~p:~n~s", [Args, Status, Out])
	end.

url(Config, Path) ->
	"http://127.0.0.1:" ++ integer_to_list(?config(port, Config)) ++ Path.

tls_url(Config, Path) ->
	"https://127.0.0.1:" ++ integer_to_list(?config(tls_port, Config)) ++ Path.

%% The file holds N bytes; returns its path.
data_file(Config, Name, N) ->
	File = filename:join(?config(priv_dir, Config), Name),
	case filelib:file_size(File) of
		N -> ok;
		_ -> ok = file:write_file(File, binary:copy(<<"0123456789abcdef">>, N div 16))
	end,
	File.

curl_h2c_upgrade(Config) ->
	doc("curl --http2 on the clear port upgrades with Upgrade: h2c and gets the response "
		"over HTTP/2 on stream 1; the handler sees version 'HTTP/2'. (RFC 7540 3.2)"),
	eq("curl body and http_version", <<"'HTTP/2' 2">>,
		curl(["--http2", "-w", " %{http_version}", url(Config, "/version")]), #{}).

curl_h2c_upgrade_post(Config) ->
	doc("curl --http2 POST with a body on the clear port: the upgrade is ignored and the "
		"request is answered over HTTP/1.1, body read whole."),
	File = data_file(Config, "100k.bin", 102400),
	Out = curl(["--http2", "-H", "Expect:", "--data-binary", "@" ++ File,
		"-w", " %{http_version}", url(Config, "/read_body")]),
	%% "<bytes> <read_body calls> <version>". The handler reads 64 KiB at a
	%% time, but read_body may return more when it is already buffered (as
	%% Cowboy's does), so one call or two are both correct.
	[Bytes, Calls, Version] = binary:split(Out, <<" ">>, [global]),
	eq("bytes read", <<"102400">>, Bytes, Out),
	is("1 or 2 read_body calls", lists:member(Calls, [<<"1">>, <<"2">>]), Out),
	eq("http_version", <<"1.1">>, Version, Out).

curl_prior_knowledge(Config) ->
	doc("curl --http2-prior-knowledge (h2c without upgrade) gets 'HTTP/2'. (RFC 9113 3.3)"),
	eq("curl body and http_version", <<"'HTTP/2' 2">>,
		curl(["--http2-prior-knowledge", "-w", " %{http_version}", url(Config, "/version")]),
		#{}).

curl_prior_knowledge_post(Config) ->
	doc("curl --http2-prior-knowledge POST /echo of 1 MiB comes back identical."),
	post_echo(Config, ["--http2-prior-knowledge"], url(Config, "/echo"), "pk").

curl_tls_alpn(Config) ->
	doc("curl --http2 over TLS negotiates h2 by ALPN and gets 'HTTP/2'. (RFC 9113 3.2)"),
	eq("curl body and http_version", <<"'HTTP/2' 2">>,
		curl(["-k", "--http2", "-w", " %{http_version}", tls_url(Config, "/version")]), #{}).

curl_tls_post(Config) ->
	doc("curl over TLS (ALPN h2) POST /echo of 1 MiB comes back identical."),
	post_echo(Config, ["-k", "--http2"], tls_url(Config, "/echo"), "tls").

curl_tls_no_alpn(Config) ->
	doc("A TLS client that sends no ALPN is served HTTP/1.1 (alpn_default_protocol "
		"defaults to http)."),
	eq("curl body and http_version", <<"'HTTP/1.1' 1.1">>,
		curl(["-k", "--no-alpn", "-w", " %{http_version}", tls_url(Config, "/version")]), #{}).

alpn_default_http2(Config) ->
	doc("alpn_default_protocol => http2: a TLS client that sends no ALPN and speaks "
		"HTTP/2 is served over HTTP/2."),
	with_listener(?FUNCTION_NAME, tls, #{alpn_default_protocol => http2}, Config,
		fun(Port, _) ->
			R = py(Config, get, Port, [{tls, "1"}, {alpn, "none"}, {path, "/version"}]),
			eq("ALPN negotiated", null, get_in([alpn], R), R),
			eq("status", 200, get_in([status], R), R),
			eq("body", <<"'HTTP/2'">>, get_in([body], R), R)
		end).

post_echo(Config, Args, Url, Tag) ->
	Data = rand:bytes(1024 * 1024),
	In = filename:join(?config(priv_dir, Config), Tag ++ "_echo.in"),
	Out = filename:join(?config(priv_dir, Config), Tag ++ "_echo.out"),
	ok = file:write_file(In, Data),
	eq("curl status and http_version", <<"200 2">>,
		curl(Args ++ ["--data-binary", "@" ++ In, "-H", "content-type: application/x-test",
			"-o", Out, "-w", "%{http_code} %{http_version}", Url]), #{}),
	{ok, Got} = file:read_file(Out),
	eq("echoed body size", byte_size(Data), byte_size(Got), #{}),
	is("echoed body identical", Got =:= Data, #{}).

protocols_http_only(Config) ->
	doc("protocols => [http] disables HTTP/2: ALPN offers of h2 get http/1.1 and "
		"Upgrade: h2c is ignored."),
	with_listener(?FUNCTION_NAME, tls, #{protocols => [http]}, Config, fun(Port, _) ->
		eq("TLS curl --http2", <<"'HTTP/1.1' 1.1">>, curl(["-k", "--http2", "-w",
			" %{http_version}", "https://127.0.0.1:" ++ integer_to_list(Port) ++ "/version"]),
			#{})
	end),
	with_listener(http_only_clear, clear, #{protocols => [http]}, Config, fun(Port, _) ->
		eq("clear curl --http2", <<"'HTTP/1.1' 1.1">>, curl(["--http2", "-w",
			" %{http_version}", "http://127.0.0.1:" ++ integer_to_list(Port) ++ "/version"]),
			#{})
	end).

h2c_upgrade_frames(Config) ->
	doc("GET with Upgrade: h2c and HTTP2-Settings gets 101, then the server preface "
		"(SETTINGS first) and the response on stream 1; stream 3 works after. "
		"(RFC 7540 3.2)"),
	R = py(Config, h2c_upgrade, ?config(port, Config), [{path, "/version"}]),
	eq("status line", <<"HTTP/1.1 101 Switching Protocols">>, get_in([status_line], R), R),
	eq("first frame", <<"SETTINGS">>, get_in([first_frame], R), R),
	eq("stream 1 status", 200, get_in([stream1, status], R), R),
	eq("stream 1 body", <<"'HTTP/2'">>, get_in([stream1, body], R), R),
	eq("stream 3 status", 200, get_in([stream3, status], R), R).

%% Runs h2_push.py (python-h2's client) on Path; returns its JSON line.
push_client(Config, Path, EnablePush, Extra) ->
	Script = filename:join(?config(data_dir, Config), "h2_push.py"),
	Args = [Script, integer_to_list(?config(port, Config)), Path, integer_to_list(EnablePush)
		| Extra],
	case run(?config(python, Config), Args, 30000) of
		{0, Out} -> last_json(h2_push, Out);
		{Status, Out} -> ct:fail("h2_push.py exited with ~p:~n~s", [Status, Out])
	end.

server_push(Config) ->
	doc("mustang_req:push/3,4 sends PUSH_PROMISE on the request's stream with the promised "
		"request (method, scheme, authority, path with qs, headers), then serves it through "
		"the router on even stream ids 2, 4, 6; python-h2 accepts every frame. (RFC 9113 8.4)"),
	R = push_client(Config, "/push", 1, []),
	Port = integer_to_binary(?config(port, Config)),
	Authority = <<"127.0.0.1:", Port/binary>>,
	eq("all streams complete", true, get_in([complete], R), R),
	eq("promises (parent, promised, request)", [
		{1, 2, #{<<":method">> => <<"GET">>, <<":scheme">> => <<"http">>,
			<<":authority">> => Authority, <<":path">> => <<"/echo/target">>,
			<<"accept">> => <<"text/plain">>}},
		{1, 4, #{<<":method">> => <<"HEAD">>, <<":scheme">> => <<"http">>,
			<<":authority">> => Authority, <<":path">> => <<"/echo/method">>}},
		{1, 6, #{<<":method">> => <<"GET">>, <<":scheme">> => <<"http">>,
			<<":authority">> => Authority, <<":path">> => <<"/echo/qs?a=1&b=2">>}}],
		[{P, Id, H} || #{<<"parent">> := P, <<"promised">> := Id, <<"headers">> := H}
			<- get_in([promises], R)], R),
	Body = fun(Id) -> {get_in([responses, Id, status], R), get_in([responses, Id, body], R)} end,
	eq("response on stream 1", {200, <<"pushed 3">>}, Body(<<"1">>), R),
	eq("pushed GET /echo/target: the handler saw the promised target",
		{200, iolist_to_binary(io_lib:format("~0p",
			[{<<"http">>, <<"127.0.0.1">>, ?config(port, Config), <<"/echo/target">>, <<>>}]))},
		Body(<<"2">>), R),
	eq("pushed HEAD: no body", {200, <<>>}, Body(<<"4">>), R),
	eq("pushed GET with qs", {200, <<"<<\"a=1&b=2\">>">>}, Body(<<"6">>), R),
	eq("no stream reset", #{}, get_in([resets], R), R).

server_push_disabled(Config) ->
	doc("A client that sends SETTINGS_ENABLE_PUSH 0 gets no PUSH_PROMISE; the response "
		"itself is unchanged. (RFC 9113 6.5.2)"),
	no_promise(push_client(Config, "/push", 0, []), <<"pushed 3">>).

server_push_no_streams(Config) ->
	doc("A client whose SETTINGS_MAX_CONCURRENT_STREAMS is 0 gets no PUSH_PROMISE: pushed "
		"streams count against the client's limit. (RFC 9113 5.1.2)"),
	no_promise(push_client(Config, "/push", 1, ["0"]), <<"pushed 3">>).

server_push_after_reply(Config) ->
	doc("push/3 after the response started fails in the handler with function_clause, "
		"as cowboy_req:push/3 does; nothing is promised."),
	no_promise(push_client(Config, "/push/after_reply", 1, []), <<"function_clause">>).

connection_specific_response_fields(Config) ->
	doc("Connection-specific fields a handler sets (connection and the fields it names, "
		"keep-alive, proxy-connection, transfer-encoding, upgrade, te; in any case) are "
		"left out of responses, informational responses, trailers and pushed responses; "
		"python-h2, which refuses them, reads every part, and other fields are kept. "
		"(RFC 9113 8.2.2)"),
	R = push_client(Config, "/hop_headers/push", 1, []),
	eq("all streams complete", true, get_in([complete], R), R),
	eq("promised streams", [2], [Id || #{<<"promised">> := Id} <- get_in([promises], R)], R),
	Forbidden = [<<"connection">>, <<"x-hop">>, <<"x-other">>, <<"keep-alive">>,
		<<"proxy-connection">>, <<"transfer-encoding">>, <<"upgrade">>, <<"te">>],
	%% Stream 1 has a 103 before its response; the pushed stream 2 has none.
	lists:foreach(fun({Id, InformCount}) ->
		Resp = get_in([responses, Id], R),
		eq(["stream ", Id, ": status and body"], {200, <<"body">>},
			{get_in([status], Resp), get_in([body], Resp)}, R),
		Informs = get_in([informs], Resp),
		eq(["stream ", Id, ": informational responses"], lists:duplicate(InformCount, <<"103">>),
			[get_in([<<":status">>], I) || I <- Informs], R),
		Trailers = get_in([trailers], Resp),
		eq(["stream ", Id, ": trailer"], <<"abc">>, get_in([<<"x-checksum">>], Trailers), R),
		lists:foreach(fun({Part, Fields}) ->
			eq(["stream ", Id, ": x-end-to-end in the ", Part], <<"kept">>,
				get_in([<<"x-end-to-end">>], Fields), R),
			eq(["stream ", Id, ": connection-specific fields in the ", Part], [],
				[N || N <- maps:keys(Fields), lists:member(N, Forbidden)], R)
		end, [{"response", get_in([headers], Resp)}, {"trailers", Trailers}
			| [{"informational response", I} || I <- Informs]])
	end, [{<<"1">>, 1}, {<<"2">>, 0}]),
	eq("no stream reset", #{}, get_in([resets], R), R).

authority_port_zero(Config) ->
	doc("A request whose :authority has port 0 is malformed: RST_STREAM PROTOCOL_ERROR, "
		"and the connection goes on. (RFC 9113 8.1.1, 8.3.1; RFC 9110 4.2.1)"),
	{ok, Pid} = mustang_h2_client:connect(tcp, "127.0.0.1", ?config(port, Config), #{}),
	try
		{ok, Zero} = mustang_h2_client:request(Pid, "GET", "/", [{"host", "localhost:0"}], none),
		eq(":authority localhost:0", {error, {stream_error, protocol_error}},
			mustang_h2_client:await(Pid, Zero, 5000), Zero),
		{ok, One} = mustang_h2_client:request(Pid, "GET", "/", [{"host", "localhost:1"}], none),
		{ok, #{status := Status}} = mustang_h2_client:await(Pid, One, 5000),
		eq(":authority localhost:1, same connection", 200, Status, One)
	after
		mustang_h2_client:close(Pid)
	end.

%% No PUSH_PROMISE was received, and stream 1 got 200 with Body.
no_promise(R, Body) ->
	eq("promises", [], get_in([promises], R), R),
	eq("response", {200, Body},
		{get_in([responses, <<"1">>, status], R), get_in([responses, <<"1">>, body], R)}, R).

nghttp_push(Config) ->
	doc("nghttp -v GET /push: three PUSH_PROMISE frames on stream 1 promising streams 2, "
		"4 and 6, whose responses nghttp receives."),
	Nghttp = tool("nghttp", undefined, []),
	{Status, Out} = run(Nghttp, ["-v", url(Config, "/push")], 30000),
	eq("nghttp exit status", 0, Status, Out),
	Count = fun(S) -> length(binary:matches(Out, S)) end,
	eq("PUSH_PROMISE frames received", 3, Count(<<"recv PUSH_PROMISE frame">>), Out),
	eq("promised ids", [1, 1, 1],
		[Count(<<"promised_stream_id=", I>>) || I <- [$2, $4, $6]], Out),
	is("a pushed response's END_STREAM was received",
		binary:match(Out, <<"stream_id=6">>) =/= nomatch, Out),
	is("the response to the request", binary:match(Out, <<"pushed 3">>) =/= nomatch, Out).

push_ignored_over_http1(Config) ->
	doc("Over HTTP/1.1 push/3,4 does nothing and the response goes out as usual."),
	eq("body and version", <<"pushed 3 1.1">>,
		curl(["--http1.1", "-w", " %{http_version}", url(Config, "/push")]), #{}).

h2c_upgrade_with_body_frames(Config) ->
	doc("POST with a body and Upgrade: h2c: no 101, the request is answered over "
		"HTTP/1.1 with the body read."),
	R = py(Config, h2c_upgrade_post, ?config(port, Config), [{path, "/read_body"}]),
	eq("status line", <<"HTTP/1.1 200 OK">>, get_in([status_line], R), R),
	eq("body", <<"100 1">>, get_in([body], R), R).

nghttp_get(Config) ->
	doc("nghttp -v GET /version over h2c: SETTINGS exchanged, 'HTTP/2' in the body."),
	Nghttp = tool("nghttp", undefined, []),
	{Status, Out} = run(Nghttp, ["-v", url(Config, "/version")], 30000),
	eq("nghttp exit status", 0, Status, Out),
	Has = fun(S) -> binary:match(Out, S) =/= nomatch end,
	is("nghttp saw the server SETTINGS", Has(<<"recv SETTINGS frame">>), Out),
	is("nghttp got :status: 200", Has(<<":status: 200">>), Out),
	is("body says 'HTTP/2'", Has(<<"'HTTP/2'">>), Out).

nghttp_upload(Config) ->
	doc("nghttp -d uploads 5 MiB over h2c to /read_body: the handler read it whole."),
	Nghttp = tool("nghttp", undefined, []),
	File = data_file(Config, "5mb.bin", 5 * 1024 * 1024),
	{Status, Out} = run(Nghttp, ["-d", File, url(Config, "/read_body")], 60000),
	eq("nghttp exit status", 0, Status, Out),
	is("body starts with 5242880", binary:match(Out, <<"5242880 ">>) =/= nomatch, Out).

httpx_tls(Config) ->
	doc("httpx with http2=True over TLS: GET and a POST /echo go over HTTP/2."),
	Script = filename:join(?config(data_dir, Config), "httpx_h2.py"),
	{Status, Out} = run(?config(python, Config), [Script, tls_url(Config, "")], 60000),
	eq("httpx output", {0, <<"HTTP/2 200 'HTTP/2'\nHTTP/2 200 True\n">>}, {Status, Out}, #{}).

chromium_tls(Config) ->
	doc("Headless Chromium loads a page over h2 (TLS, ALPN); the handler saw 'HTTP/2'."),
	Chromium = tool("chromium", undefined, ["/usr/bin/chromium", "/usr/bin/chromium-browser"]),
	Profile = filename:join(?config(priv_dir, Config), "chromium-profile"),
	{Status, Out} = run(Chromium, ["--headless", "--no-sandbox", "--disable-gpu",
		"--ignore-certificate-errors", "--user-data-dir=" ++ Profile,
		"--virtual-time-budget=5000", "--dump-dom", tls_url(Config, "/page")], 90000),
	eq("chromium exit status", 0, Status, Out),
	is("page shows <p id=\"version\">HTTP/2</p>",
		binary:match(Out, <<"<p id=\"version\">HTTP/2</p>">>) =/= nomatch, Out).

%% Frame-level cases.

request_trailers(Config) ->
	doc("A request with HEADERS, DATA, DATA, HEADERS (trailers, END_STREAM) is accepted "
		"and its body read whole. (RFC 9113 8.1)"),
	R = py(Config, request_trailers, ?config(port, Config), []),
	eq("status", 200, get_in([status], R), R),
	eq("body (bytes read, calls)", <<"1500 1">>, get_in([body], R), R),
	eq("GOAWAY", none, goaway_code(R), R).

response_trailers(Config) ->
	doc("stream_trailers/2 sends a last HEADERS frame with END_STREAM after the DATA. "
		"(RFC 9113 8.1)"),
	R = py(Config, response_trailers, ?config(port, Config), []),
	eq("status", 200, get_in([status], R), R),
	eq("body", <<"hello world">>, get_in([body], R), R),
	eq("trailers", [[<<"x-checksum">>, <<"abc">>]], get_in([trailers], R), R),
	eq("ended", true, get_in([ended], R), R).

connect_protocol_enabled(Config) ->
	doc("enable_connect_protocol => true advertises SETTINGS_ENABLE_CONNECT_PROTOCOL=1; "
		"CONNECT with :protocol websocket reaches the handler, which sees method CONNECT "
		"and protocol websocket. (RFC 8441 3, 4)"),
	register(?FUNCTION_NAME, self()),
	with_listener(?FUNCTION_NAME, clear, #{enable_connect_protocol => true}, Config,
		fun(Port, _) ->
			R = py(Config, connect_protocol, Port, []),
			eq("SETTINGS_ENABLE_CONNECT_PROTOCOL", 1, get_in([advertised], R), R),
			eq("status", 200, get_in([status], R), R),
			eq("handler saw", <<"{<<\"CONNECT\">>,<<\"websocket\">>}">>, get_in([body], R), R),
			receive {h2_connect, _, What} ->
				eq("handler message", {<<"CONNECT">>, <<"websocket">>}, What, R)
			after 1000 -> ct:fail("the CONNECT handler did not run")
			end
		end).

connect_protocol_disabled(Config) ->
	doc("By default SETTINGS_ENABLE_CONNECT_PROTOCOL is not advertised (or 0) and an "
		"extended CONNECT is refused with RST_STREAM or 400, without running the handler; "
		"the connection goes on. (RFC 8441 3, 4)"),
	register(?FUNCTION_NAME, self()),
	with_listener(?FUNCTION_NAME, clear, #{}, Config, fun(Port, _) ->
		R = py(Config, connect_protocol, Port, []),
		is("setting absent or 0", lists:member(get_in([advertised], R), [null, 0]), R),
		is("RST_STREAM PROTOCOL_ERROR or 400",
			get_in([rst], R) =:= <<"PROTOCOL_ERROR">> orelse get_in([status], R) =:= 400, R),
		eq("GOAWAY", none, goaway_code(R), R),
		eq("next request on the connection", 200, get_in([after_status], R), R),
		receive {h2_connect, _, What} -> ct:fail("the handler ran: ~p", [What])
		after 0 -> ok
		end
	end).

flow_control_backpressure(Config) ->
	doc("A client with a 1 KiB stream window that sends no WINDOW_UPDATE: the handler "
		"streaming 16 MiB blocks in stream_body/3, and the connection process stays small. "
		"Once the window opens, all 16 MiB arrive intact. (RFC 9113 5.2, 6.9)"),
	register(?FUNCTION_NAME, self()),
	Chunks = 256,
	Size = 65536,
	Total = Chunks * Size,
	with_listener(?FUNCTION_NAME, clear, #{}, Config, fun(Port, Ref) ->
		P = py_open(Config, backpressure, Port, [{total, Total}, {chunk, Size},
			{window, 1024}, {path, "/big"}]),
		B = py_line(P, 10000),
		eq("status", 200, get_in([status], B), B),
		eq("bytes received within the 1 KiB window", 1024, get_in([received], B), B),
		Progress1 = last_progress(0, 1000),
		Progress2 = last_progress(Progress1, 1000),
		ct:log("chunks sent by the handler: ~b then ~b of ~b", [Progress1, Progress2, Chunks]),
		eq("handler progress during the second wait (it must be blocked)",
			Progress1, Progress2, B),
		is(io_lib:format("handler blocked well before the end (~b chunks of ~b sent)",
			[Progress2, Chunks]), Progress2 < Chunks div 4, B),
		Mems = [{Pid, process_bytes(Pid)} || Pid <- connection_pids(Ref)],
		ct:log("connection processes (memory + referenced binaries): ~p", [Mems]),
		is("one connection process", length(Mems) =:= 1, Mems),
		[{_, Mem}] = Mems,
		is(io_lib:format("connection process holds less than 4 MiB (~b bytes)", [Mem]),
			Mem < 4 * 1024 * 1024, Mems),
		true = port_command(P, <<"go\n">>),
		D = py_line(P, 60000),
		eq("body length", Total, get_in([body_len], D), D),
		eq("body intact", true, get_in([intact], D), D),
		eq("ended", true, get_in([ended], D), D),
		eq("handler finished", Chunks, last_progress(Progress2, 1000), D)
	end).

last_progress(Last, Wait) ->
	receive {h2_progress, _, I} -> last_progress(max(I, Last), Wait)
	after Wait -> Last
	end.

connection_pids(Ref) ->
	[Pid || {_, Sup} <- mustang_registry:get_conns_sups(Ref),
		{_, Pid, _, _} <- supervisor:which_children(Sup), is_pid(Pid)].

%% Heap and stacks plus the off-heap binaries the process references.
process_bytes(Pid) ->
	case erlang:process_info(Pid, [memory, binary]) of
		[{memory, M}, {binary, Bins}] ->
			M + lists:sum([S || {_, S, _} <- lists:ukeysort(1, Bins)]);
		undefined ->
			0
	end.

goaway_on_stop(Config) ->
	doc("mustang:stop_listener/1 with a stream in flight: GOAWAY with last-stream-id "
		"2^31-1 and a PING, then GOAWAY with the real last id; the stream in flight "
		"completes; a stream opened after is not served; the connection closes. "
		"(RFC 9113 6.8)"),
	register(?FUNCTION_NAME, self()),
	Ref = {?MODULE, ?FUNCTION_NAME},
	{ok, _} = mustang:start_clear(Ref, #{port => 0}, proto_opts(?FUNCTION_NAME, #{})),
	P = py_open(Config, goaway_on_stop, mustang:get_port(Ref), [{path, "/slow/1500"}]),
	#{<<"phase">> := <<"sent">>} = py_line(P, 10000),
	receive {h2_slow_started, _} -> ok
	after 5000 -> ct:fail("the slow handler did not start")
	end,
	Self = self(),
	Stopper = spawn_link(fun() -> Self ! {stopped, mustang:stop_listener(Ref)} end),
	true = port_command(P, <<"go\n">>),
	R = py_line(P, 20000),
	receive {stopped, Res} -> eq("stop_listener result", ok, Res, R)
	after 10000 -> ct:fail("stop_listener did not return (~p)", [Stopper])
	end,
	Goaways = [{maps:get(<<"last">>, G), maps:get(<<"code">>, G)} || G <- get_in([goaways], R)],
	eq("GOAWAY frames (last-stream-id, code)",
		[{?MAX_STREAM_ID, <<"NO_ERROR">>}, {1, <<"NO_ERROR">>}], Goaways, R),
	is("a PING came with the first GOAWAY", get_in([pings], R) >= 1, R),
	eq("stream 1 status", 200, get_in([stream1, status], R), R),
	eq("stream 1 body", <<"slow">>, get_in([stream1, body], R), R),
	eq("stream 3 status (not served)", null, get_in([stream3, status], R), R),
	is("stream 3 ignored or refused", lists:member(get_in([stream3, rst], R),
		[null, <<"REFUSED_STREAM">>]), R),
	eq("connection closed", true, get_in([closed], R), R).

client_goaway(Config) ->
	doc("After the client's GOAWAY the server ends the connection with a GOAWAY of its own "
		"(NO_ERROR, the last stream it processed) before closing: at once when no stream is "
		"open, after the stream in flight completes otherwise. (RFC 9113 6.8: endpoints "
		"SHOULD always send a GOAWAY frame before closing a connection.) Found by "
		"fuzz_SUITE."),
	Port = ?config(port, Config),
	Start = [mustang_http2_frame:preface(), mustang_http2_frame:settings(#{}),
		mustang_http2_frame:settings_ack()],
	Goaway = mustang_http2_frame:goaway(0, no_error, <<>>),
	Idle = frames_until_closed(Port, [Start, Goaway]),
	case [F || F = {goaway, _, _, _} <- Idle] of
		[{goaway, 0, no_error, _}] -> ok;
		_ -> ct:fail("no stream open: expected GOAWAY(0, NO_ERROR) then the close; got ~p",
			[Idle])
	end,
	{Block, _} = mustang_hpack:encode([{<<":method">>, <<"GET">>}, {<<":scheme">>, <<"http">>},
		{<<":path">>, <<"/slow/300">>}, {<<":authority">>, <<"localhost">>}], mustang_hpack:init()),
	InFlight = frames_until_closed(Port, [Start, mustang_http2_frame:headers(1, fin, Block),
		Goaway]),
	case lists:dropwhile(fun(F) -> not is_tuple(F) orelse element(1, F) =/= data end, InFlight) of
		[{data, 1, fin, <<"slow">>}, {goaway, 1, no_error, _}, {recv_error, closed}] -> ok;
		_ -> ct:fail("stream 1 in flight: expected its response, then GOAWAY(1, NO_ERROR), "
			"then the close; got ~p", [InFlight])
	end.

%% Sends Data on a new connection; the frames received until it closes.
frames_until_closed(Port, Data) ->
	{ok, S} = gen_tcp:connect("127.0.0.1", Port, [binary, {active, false}]),
	ok = gen_tcp:send(S, Data),
	Frames = frames_until_closed(S, <<>>, []),
	ok = gen_tcp:close(S),
	ct:log("~p", [Frames]),
	Frames.

frames_until_closed(S, Buffer, Acc) ->
	case mustang_http2_frame:parse(Buffer, 16384) of
		{ok, Frame, Rest} ->
			frames_until_closed(S, Rest, [Frame | Acc]);
		_ ->
			case gen_tcp:recv(S, 0, 5000) of
				{ok, Data} -> frames_until_closed(S, <<Buffer/binary, Data/binary>>, Acc);
				{error, Reason} -> lists:reverse([{recv_error, Reason} | Acc])
			end
	end.

content_length_mismatch(Config) ->
	doc("DATA that adds up to less or more than content-length: RST_STREAM "
		"PROTOCOL_ERROR, no response; an exact one is served. (RFC 9113 8.1.1)"),
	R = py(Config, content_length, ?config(port, Config), []),
	eq("content-length 10, 5 bytes: RST_STREAM", <<"PROTOCOL_ERROR">>, get_in([short, rst], R), R),
	eq("content-length 10, 5 bytes: status", null, get_in([short, status], R), R),
	eq("content-length 5, 10 bytes: RST_STREAM", <<"PROTOCOL_ERROR">>, get_in([long, rst], R), R),
	eq("content-length 5, 10 bytes: status", null, get_in([long, status], R), R),
	eq("content-length 5, 5 bytes: status", 200, get_in([exact, status], R), R),
	eq("content-length 5, 5 bytes: body", <<"5 1">>, get_in([exact, body], R), R),
	eq("GOAWAY", none, goaway_code(R), R).

handler_crash(Config) ->
	doc("A handler that crashes before replying gives 500; one that crashes after "
		"stream_reply gives RST_STREAM INTERNAL_ERROR; the other streams of the "
		"connection are served."),
	R = py(Config, crash, ?config(port, Config), []),
	eq("crash before reply: status", 500, get_in([before, status], R), R),
	eq("crash after stream_reply: status", 200, get_in([<<"after">>, status], R), R),
	eq("crash after stream_reply: RST_STREAM", <<"INTERNAL_ERROR">>,
		get_in([<<"after">>, rst], R), R),
	eq("crash after stream_reply: partial body", <<"partial">>, get_in([<<"after">>, body], R), R),
	eq("slow stream beside them", {200, <<"slow">>},
		{get_in([slow, status], R), get_in([slow, body], R)}, R),
	eq("hello stream beside them", 200, get_in([ok, status], R), R),
	eq("a new stream afterwards", 200, get_in([again, status], R), R),
	eq("GOAWAY", none, goaway_code(R), R).

header_list_size(Config) ->
	doc("max_header_list_size (65536): a decoded header list of ~60 KB is served, one of "
		"~70 KB gets 431 on that stream and the connection goes on. (RFC 9113 6.5.2)"),
	Port = ?config(port, Config),
	Below = py(Config, header_list_too_large, Port, [{kb, 60}]),
	eq("60 KB: status", 200, get_in([status], Below), Below),
	Above = py(Config, header_list_too_large, Port, [{kb, 70}]),
	eq("70 KB: status", 431, get_in([status], Above), Above),
	eq("70 KB: next stream", 200, get_in([<<"after">>, status], Above), Above),
	eq("GOAWAY", none, goaway_code(Above), Above).

settings_timeout(Config) ->
	doc("A client that never acknowledges the server's SETTINGS gets GOAWAY "
		"SETTINGS_TIMEOUT after settings_timeout (1000 here). (RFC 9113 6.5.3)"),
	with_listener(?FUNCTION_NAME, clear, #{settings_timeout => 1000}, Config, fun(Port, _) ->
		R = py(Config, no_settings_ack, Port, [{wait, "5"}]),
		assert_cut(<<"SETTINGS_TIMEOUT">>, R),
		Ms = get_in([ms], R),
		is(io_lib:format("cut between 800 and 3000 ms (~b)", [Ms]), Ms >= 800 andalso Ms < 3000, R)
	end).

idle_timeout(Config) ->
	doc("A connection with no stream and no traffic for idle_timeout (1000 here) gets "
		"GOAWAY NO_ERROR and is closed."),
	with_listener(?FUNCTION_NAME, clear, #{idle_timeout => 1000}, Config, fun(Port, _) ->
		R = py(Config, idle, Port, [{wait, "5"}]),
		eq("first request", 200, get_in([status], R), R),
		assert_cut(<<"NO_ERROR">>, R),
		Ms = get_in([ms], R),
		is(io_lib:format("cut between 800 and 3000 ms (~b)", [Ms]), Ms >= 800 andalso Ms < 3000, R)
	end).

preface_timeout(Config) ->
	doc("A TLS client that negotiated h2 by ALPN and never sends the preface is closed "
		"after preface_timeout (1000 here). (Over h2c prior knowledge nothing tells "
		"HTTP/2 yet, so HTTP/1.1's request_timeout applies instead.)"),
	with_listener(?FUNCTION_NAME, tls, #{preface_timeout => 1000}, Config, fun(Port, _) ->
		R = py(Config, no_preface, Port, [{tls, "1"}, {wait, "5"}]),
		eq("closed", true, get_in([closed], R), R),
		Ms = get_in([ms], R),
		is(io_lib:format("closed within 3000 ms (~b)", [Ms]), Ms < 3000, R)
	end).

%% Floods. Each runs on a fresh connection to the group's default listener,
%% once below the limit (not cut) and once well past it (GOAWAY).

rapid_reset(Config) ->
	doc("Rapid reset (CVE-2023-44487): HEADERS then RST_STREAM in a loop. 400 resets "
		"are tolerated; 1200 get GOAWAY ENHANCE_YOUR_CALM (max_cancel_stream_rate "
		"{500, 10000})."),
	Port = ?config(port, Config),
	assert_not_cut(py(Config, rapid_reset, Port, [{count, 400}, {wait, "1"}])),
	assert_cut(<<"ENHANCE_YOUR_CALM">>, py(Config, rapid_reset, Port, [{count, 1200}])).

continuation_flood(Config) ->
	doc("CONTINUATION flood: HEADERS then 1 KB CONTINUATION frames without END_HEADERS: "
		"GOAWAY ENHANCE_YOUR_CALM once the block passes max_header_block_size (65536)."),
	R = py(Config, continuation_flood, ?config(port, Config), [{count, 1000}]),
	assert_cut(<<"ENHANCE_YOUR_CALM">>, R),
	Sent = get_in([sent], R),
	is(io_lib:format("cut before 200 KB were sent (~b frames)", [Sent]), Sent < 200, R).

header_block_size(Config) ->
	doc("max_header_block_size (65536): a complete header block of ~61 KB over "
		"CONTINUATIONs is served; one of ~71 KB gets GOAWAY ENHANCE_YOUR_CALM."),
	Port = ?config(port, Config),
	Below = py(Config, header_block_size, Port, [{kb, 60}, {wait, "1"}]),
	eq("60 KB block: status", 200, get_in([stream, status], Below), Below),
	assert_not_cut(Below),
	assert_cut(<<"ENHANCE_YOUR_CALM">>, py(Config, header_block_size, Port, [{kb, 70}])).

empty_continuation(Config) ->
	doc("An empty CONTINUATION without END_HEADERS gets GOAWAY ENHANCE_YOUR_CALM at once."),
	R = py(Config, empty_continuation, ?config(port, Config), []),
	assert_cut(<<"ENHANCE_YOUR_CALM">>, R),
	is("within 1000 ms", get_in([ms], R) < 1000, R).

settings_flood(Config) ->
	overhead_flood(Config, settings_flood, "SETTINGS").

ping_flood(Config) ->
	overhead_flood(Config, ping_flood, "PING").

priority_flood(Config) ->
	overhead_flood(Config, priority_flood, "PRIORITY").

window_update_flood(Config) ->
	overhead_flood(Config, window_update_flood, "WINDOW_UPDATE (connection, increment 1, "
		"nothing waiting)").

overhead_flood(Config, Case, What) ->
	doc(What ++ " flood: 1500 frames are tolerated, 4000 get GOAWAY ENHANCE_YOUR_CALM "
		"(max_overhead_frame_rate {2000, 10000})."),
	Port = ?config(port, Config),
	assert_not_cut(py(Config, Case, Port, [{count, 1500}, {wait, "1"}])),
	assert_cut(<<"ENHANCE_YOUR_CALM">>, py(Config, Case, Port, [{count, 4000}])).

empty_data_flood(Config) ->
	doc("Empty DATA frames without END_STREAM on an open request: 1500 are tolerated "
		"(and the body is then read), 4000 get GOAWAY ENHANCE_YOUR_CALM "
		"(max_overhead_frame_rate {2000, 10000})."),
	Port = ?config(port, Config),
	Below = py(Config, empty_data_flood, Port, [{count, 1500}, {wait, "1"}]),
	eq("request after 1500 empty DATA", {200, <<"3 1">>},
		{get_in([stream, status], Below), get_in([stream, body], Below)}, Below),
	eq("GOAWAY", none, goaway_code(Below), Below),
	eq("status on a new connection", 200, get_in([fresh_status], Below), Below),
	assert_cut(<<"ENHANCE_YOUR_CALM">>, py(Config, empty_data_flood, Port, [{count, 4000}])).

hpack_bomb(Config) ->
	doc("HPACK bomb: a 4 KB dynamic-table entry referenced 30 times (~120 KB decoded "
		"from 30 bytes) gets 431 on that stream; the connection goes on. (RFC 9113 10.5.1)"),
	R = py(Config, hpack_bomb, ?config(port, Config), [{refs, 30}]),
	eq("stream inserting the entry", 200, get_in([insert, status], R), R),
	eq("stream with 30 references", 431, get_in([bomb, status], R), R),
	eq("next stream, one reference", 200, get_in([<<"after">>, status], R), R),
	eq("GOAWAY", none, goaway_code(R), R).

max_concurrent_streams(Config) ->
	doc("SETTINGS_MAX_CONCURRENT_STREAMS is 100: with 100 streams in flight the 101st "
		"gets RST_STREAM REFUSED_STREAM and the 100 complete. (RFC 9113 5.1.2)"),
	R = py(Config, concurrent_streams, ?config(port, Config),
		[{open, 100}, {extra, 1}, {path, "/slow/1000"}, {wait, "1"}]),
	eq("advertised limit", 100, get_in([advertised], R), R),
	eq("streams beyond the limit refused", 1, get_in([beyond_refused], R), R),
	eq("streams within the limit served", 100, get_in([first_ok], R), R),
	assert_not_cut(R).

refused_stream_flood(Config) ->
	doc("A client that keeps opening streams beyond max_concurrent_streams gets them "
		"refused, then GOAWAY ENHANCE_YOUR_CALM (refused streams count toward "
		"max_cancel_stream_rate {500, 10000})."),
	R = py(Config, concurrent_streams, ?config(port, Config),
		[{open, 100}, {extra, 1500}, {path, "/slow/3000"}]),
	is("some streams were refused", get_in([beyond_refused], R) >= 1, R),
	assert_cut(<<"ENHANCE_YOUR_CALM">>, R).

flow_control_timeout(Config) ->
	doc("A client that never opens its stream window while a response waits on it gets "
		"GOAWAY ENHANCE_YOUR_CALM after flow_control_timeout (1000 here)."),
	with_listener(?FUNCTION_NAME, clear, #{flow_control_timeout => 1000}, Config,
		fun(Port, _) ->
			R = py(Config, flow_control_timeout, Port, [{path, "/big"}]),
			assert_cut(<<"ENHANCE_YOUR_CALM">>, R),
			Ms = get_in([ms], R),
			is(io_lib:format("cut between 800 and 6000 ms (~b)", [Ms]),
				Ms >= 800 andalso Ms < 6000, R)
		end).

bulk_requests_python(Config) ->
	doc("2000 GETs on one connection, 10 streams at a time, from a client that returns "
		"window credit like nghttp2 does: all served, no GOAWAY."),
	R = py(Config, bulk_requests, ?config(port, Config), [{n, 2000}, {concurrency, 10}]),
	eq("requests served with 200", 2000, get_in([ok], R), R),
	eq("GOAWAY", none, goaway_code(R), R).

bulk_requests_h2load(Config) ->
	doc("h2load -n 2000 -c 1 -m 10 over h2c: 2000 requests succeed on one connection."),
	H2load = tool("h2load", undefined, []),
	{Status, Out} = run(H2load, ["-n", "2000", "-c", "1", "-m", "10", url(Config, "/")], 120000),
	eq("h2load exit status", 0, Status, Out),
	is("2000 succeeded", binary:match(Out, <<"2000 succeeded, 0 failed, 0 errored">>) =/= nomatch,
		Out).

upload_200mb(Config) ->
	doc("A 200 MiB POST with default options, sent as fast as the server's windows "
		"allow, is read whole; no GOAWAY."),
	R = py(Config, upload, ?config(port, Config), [{mb, 200}], 170000),
	eq("bytes sent", 200 * 1024 * 1024, get_in([sent], R), R),
	eq("status", 200, get_in([status], R), R),
	[Len, _] = binary:split(get_in([body], R), <<" ">>),
	eq("bytes read by the handler", <<"209715200">>, Len, R),
	eq("GOAWAY", none, goaway_code(R), R).

%% Robustness.

mutated_frames_property(Config) ->
	doc("250 random and mutated frame sequences after a valid preface: each gets a GOAWAY, "
		"a closed socket, or leaves the connection usable; no error is logged and the "
		"listener answers a fresh request after every case."),
	Port = ?config(port, Config),
	Tab = ets:new(h2_test_errors, [public, named_table, duplicate_bag]),
	ok = logger:add_handler(h2_test_errors, ?MODULE, #{level => error}),
	try
		Counts = ets:new(h2_test_outcomes, [public]),
		Prop = ?FORALL(Seq, mustang_fuzz_gen:frame_sequence(),
			check_sequence(Port, Seq, Counts)),
		Result = proper:quickcheck(Prop, [{numtests, 250}, {max_shrinks, 30}, {to_file, user},
			long_result]),
		Outcomes = lists:sort(ets:tab2list(Counts)),
		ct:pal("outcomes: ~p", [Outcomes]),
		ct:comment("~p", [Outcomes]),
		case Result of
			true -> ok;
			CounterExample -> ct:fail("counterexample: ~p~nerrors logged: ~p",
				[CounterExample, ets:tab2list(Tab)])
		end
	after
		_ = logger:remove_handler(h2_test_errors),
		ets:delete(Tab)
	end.

%% logger handler callback: keeps error-level events for the property.
log(Event, _) ->
	catch ets:insert(h2_test_errors, {erlang:monotonic_time(), Event}),
	ok.

check_sequence(Port, Frames, Counts) ->
	Bin = iolist_to_binary(Frames),
	Outcome = send_sequence(Port, Bin),
	ets:update_counter(Counts, Outcome, 1, {Outcome, 0}),
	Errors = ets:tab2list(h2_test_errors),
	Fresh = fresh_request(Port),
	case {Errors, Fresh} of
		{[], ok} ->
			true;
		_ ->
			ct:log("sequence ~p~noutcome ~p~nerrors ~p~nfresh request ~p",
				[Bin, Outcome, Errors, Fresh]),
			ets:delete_all_objects(h2_test_errors),
			false
	end.

%% Preface, SETTINGS, the sequence, then a PING: what comes back says which
%% state the connection is in.
send_sequence(Port, Bin) ->
	{ok, S} = gen_tcp:connect("127.0.0.1", Port, [binary, {active, false}, {nodelay, true}]),
	Ping = mustang_http2_frame:ping(16#5AFE5AFE5AFE5AFE),
	_ = gen_tcp:send(S, [mustang_http2_frame:preface(), mustang_http2_frame:settings(#{}),
		mustang_http2_frame:settings_ack()]),
	_ = gen_tcp:send(S, Bin),
	_ = gen_tcp:send(S, Ping),
	Deadline = erlang:monotonic_time(millisecond) + 300,
	Outcome = wait_outcome(S, <<>>, Deadline),
	gen_tcp:close(S),
	Outcome.

wait_outcome(S, Buf, Deadline) ->
	case next_frame(Buf) of
		{7, _, _, _, _} -> goaway;
		{6, 1, 0, <<16#5AFE5AFE5AFE5AFE:64>>, _} -> usable;
		{_, _, _, _, Rest} -> wait_outcome(S, Rest, Deadline);
		more ->
			Wait = Deadline - erlang:monotonic_time(millisecond),
			case Wait > 0 andalso gen_tcp:recv(S, 0, Wait) of
				{ok, Data} -> wait_outcome(S, <<Buf/binary, Data/binary>>, Deadline);
				{error, timeout} -> silent;
				false -> silent;
				{error, _} -> closed
			end
	end.

%% Our own frame splitter for what the server sends (not the server's codec).
next_frame(<<Len:24, Type:8, Flags:8, _:1, Sid:31, Payload:Len/binary, Rest/bits>>) ->
	{Type, Flags, Sid, Payload, Rest};
next_frame(_) ->
	more.

%% GET / on a new connection with prior knowledge answers 200.
fresh_request(Port) ->
	{ok, S} = gen_tcp:connect("127.0.0.1", Port, [binary, {active, false}, {nodelay, true}]),
	{Block, _} = mustang_hpack:encode(mustang_fuzz_gen:request_headers(<<"/">>),
		mustang_hpack:init()),
	_ = gen_tcp:send(S, [mustang_http2_frame:preface(), mustang_http2_frame:settings(#{}),
		mustang_http2_frame:settings_ack(), mustang_http2_frame:headers(1, fin, Block)]),
	Result = wait_status(S, <<>>, erlang:monotonic_time(millisecond) + 5000),
	gen_tcp:close(S),
	Result.

wait_status(S, Buf, Deadline) ->
	case next_frame(Buf) of
		{1, Flags, 1, Payload, _} ->
			case mustang_hpack:decode(header_block(Flags, Payload), mustang_hpack:init()) of
				{ok, [{<<":status">>, <<"200">>} | _], _} -> ok;
				Other -> {unexpected_headers, Other}
			end;
		{7, _, _, Payload, _} -> {goaway, Payload};
		{_, _, _, _, Rest} -> wait_status(S, Rest, Deadline);
		more ->
			case gen_tcp:recv(S, 0, max(0, Deadline - erlang:monotonic_time(millisecond))) of
				{ok, Data} -> wait_status(S, <<Buf/binary, Data/binary>>, Deadline);
				Error -> Error
			end
	end.

%% The field block of a HEADERS frame: without padding (0x8) and priority
%% (0x20) fields.
header_block(Flags, Payload0) ->
	Payload = case Flags band 16#8 of
		0 -> Payload0;
		_ ->
			<<Pad, P/bits>> = Payload0,
			binary:part(P, 0, byte_size(P) - Pad)
	end,
	case Flags band 16#20 of
		0 -> Payload;
		_ -> <<_:40, Block/bits>> = Payload, Block
	end.
