%% The stream handlers mustang_metrics_h, mustang_tracer_h,
%% mustang_access_log_h and the guide's request_id_h, end to end with real
%% clients, in four groups:
%%   inline   HTTP/1.1, handler in the connection process (curl --http1.1)
%%   process  HTTP/1.1, request_process => true (curl --http1.1)
%%   h2c      HTTP/2 over clear text by prior knowledge (curl)
%%   h2       HTTP/2 over TLS, ALPN h2 (Python httpx)
%% Every group's listener runs the chain
%%   [mustang_metrics_h, mustang_tracer_h, mustang_access_log_h, request_id_h,
%%    mustang_stream_h]
%% whose callbacks send what they get to the test case process (registered
%% as stream_handlers_sink); the access log is caught by an OTP logger
%% handler (log_forward_h) filtered on the [mustang, access] domain.
-module(stream_handlers_SUITE).
-compile([export_all, nowarn_export_all]).

-include_lib("common_test/include/ct.hrl").

-import(mustang_test, [doc/1, python/0, require_python/2, tool/3, run/3, json/1]).

-define(SINK, stream_handlers_sink).
-define(LOG_HANDLER, stream_handlers_suite).
-define(FILE_SIZE, 10000).

suite() ->
	[{timetrap, {seconds, 120}}].

all() ->
	[{group, inline}, {group, process}, {group, h2c}, {group, h2}, {group, other}].

tests() ->
	[
		metrics_request,
		metrics_request_body,
		metrics_user_data,
		metrics_sendfile,
		metrics_crash,
		metrics_early_error,
		metrics_callback_crash,
		tracer_matching,
		tracer_not_matching,
		access_log_request,
		access_log_early_error,
		request_id
	].

groups() ->
	[{inline, [], tests()}, {process, [], tests()}, {h2c, [], tests()}, {h2, [], tests()},
		{other, [], [access_log_json_python, sys_config_parses, guide_example_is_request_id_h]}].

init_per_suite(Config) ->
	{ok, _} = application:ensure_all_started(mustang),
	File = filename:join(?config(priv_dir, Config), "sendfile.bin"),
	ok = file:write_file(File, binary:copy(<<"0123456789">>, ?FILE_SIZE div 10)),
	%% Info events of the access log handler pass the primary level.
	ok = logger:set_module_level([mustang_access_log_h, request_id_h], info),
	[{file, File}, {tls_opts, mustang_demo:tls_opts()} | Config].

end_per_suite(_) ->
	_ = logger:unset_module_level([mustang_access_log_h, request_id_h]),
	ok.

init_per_group(other, Config) ->
	Config;
init_per_group(Group, Config) ->
	_ = case Group of
		_ when Group =:= h2; Group =:= h2c -> require_python(python(), ["httpx", "h2"]);
		_ -> ok
	end,
	Ref = {?MODULE, Group},
	Opts = proto_opts(Group, Config),
	{ok, _} = case Group of
		h2 -> mustang:start_tls(Ref, #{port => 0, socket_opts => ?config(tls_opts, Config)},
			Opts);
		_ -> mustang:start_clear(Ref, #{port => 0}, Opts)
	end,
	[{group, Group}, {ref, Ref}, {port, mustang:get_port(Ref)} | Config].

end_per_group(other, _) ->
	ok;
end_per_group(_, Config) ->
	mustang:stop_listener(?config(ref, Config)).

init_per_testcase(_, Config) ->
	register(?SINK, self()),
	ok = logger:add_handler(?LOG_HANDLER, log_forward_h, #{config => #{pid => self()},
		level => all, filter_default => stop,
		filters => [
			{access, {fun logger_filters:domain/2, {log, equal, [mustang, access]}}},
			{request_id, {fun(E = #{meta := #{request_id := _}}, _) -> E; (_, _) -> ignore end,
				[]}}
		]}),
	Config.

end_per_testcase(_, _) ->
	_ = logger:remove_handler(?LOG_HANDLER),
	catch unregister(?SINK),
	ok.

sink(Msg) ->
	case whereis(?SINK) of
		undefined -> ok;
		Pid -> Pid ! Msg, ok
	end.

proto_opts(Group, Config) ->
	Routes = [{'_', [
		{"/probe", stream_probe_h, #{}},
		{"/traced/[...]", stream_probe_h, #{}},
		{"/untraced", stream_probe_h, #{}},
		{"/user_data", stream_probe_h, #{user_data => #{handler => stream_probe_h, n => 1}}},
		{"/sendfile", resp_body_h, {sendfile, 0, ?FILE_SIZE, ?config(file, Config)}},
		{"/crash", crash_h, before_reply},
		{"/read_body", read_body_h, #{length => 1000000}},
		{"/metrics_crash", hello_h, []},
		{"/hello", hello_h, []}
	]}],
	Extra = #{
		stream_handlers => [mustang_metrics_h, mustang_tracer_h, mustang_access_log_h,
			request_id_h, mustang_stream_h],
		metrics_callback => fun
			(#{req := #{path := <<"/metrics_crash">>}, pid := Conn}) ->
				sink({metrics_crash, Conn}),
				error(metrics_callback_crash);
			(M) -> sink({metrics, M})
		end,
		tracer_callback => fun
			(init, {StreamID, Req, _}) -> {StreamID, maps:get(path, Req), []};
			(terminate, {StreamID, Path, Events}) ->
				sink({traced, StreamID, Path, lists:reverse(Events)});
			(Event, {StreamID, Path, Events}) -> {StreamID, Path, [Event | Events]}
		end,
		tracer_match_specs => [{path_start, <<"/traced">>}, {method, <<"GET">>}],
		access_log_format => combined
	},
	Extra2 = case Group of
		%% Early errors over HTTP/2: a header block above this gets 431.
		_ when Group =:= h2; Group =:= h2c -> Extra#{max_header_list_size => 4096};
		_ -> Extra
	end,
	mustang_test:proto_opts(Routes, case Group of process -> process; _ -> inline end, Extra2).

%% Clients: one GET per URL on one connection; responses as maps
%% #{version, status, headers => #{Name => Value}, body}.

get(Config, Path) ->
	get(Config, Path, []).

get(Config, Path, Headers) ->
	[Resp] = get_many(Config, [Path], Headers),
	Resp.

get_many(Config, Paths, Headers) ->
	request(Config, Paths, Headers, []).

%% POSTs the contents of File.
post(Config, Path, File) ->
	[Resp] = request(Config, [Path], [], ["--post", File]),
	Resp.

request(Config, Paths, Headers, Post) ->
	case ?config(group, Config) of
		Group when Group =:= h2; Group =:= h2c andalso length(Paths) > 1 ->
			%% curl 7.88 fails to reuse an h2c prior knowledge connection
			%% ("Error in the HTTP2 framing layer" before sending anything).
			Script = filename:join(?config(data_dir, Config), "httpx_get.py"),
			H2c = case Group of
				h2c -> ["--h2c"];
				h2 -> []
			end,
			Args = [Script | H2c] ++ Post ++ lists:append([["-H", N ++ ": " ++ V] || {N, V} <- Headers])
				++ [url(Config, P) || P <- Paths],
			{0, Out} = run(python(), Args, 60000),
			[#{version => V, status => S, headers => H, body => B}
				|| #{<<"http_version">> := V, <<"status">> := S, <<"headers">> := H,
					<<"body">> := B} <- json(Out)];
		Group ->
			Proto = case Group of
				h2c -> "--http2-prior-knowledge";
				_ -> "--http1.1"
			end,
			Sep = "--mustang-next--",
			CurlPost = case Post of
				["--post", File] -> ["--data-binary", "@" ++ File];
				[] -> []
			end,
			Args = [Proto, "-sS", "-i", "-w", Sep] ++ CurlPost
				++ lists:append([["-H", N ++ ": " ++ V] || {N, V} <- Headers])
				++ [url(Config, P) || P <- Paths],
			{0, Out} = run(tool("curl", undefined, []), Args, 60000),
			[parse_curl(R) || R <- binary:split(Out, list_to_binary(Sep), [global, trim_all])]
	end.

url(Config, Path) ->
	Scheme = case ?config(group, Config) of
		h2 -> "https";
		_ -> "http"
	end,
	Scheme ++ "://127.0.0.1:" ++ integer_to_list(?config(port, Config)) ++ Path.

parse_curl(Raw) ->
	[Head, Body] = binary:split(Raw, <<"\r\n\r\n">>),
	[StatusLine | Lines] = binary:split(Head, <<"\r\n">>, [global]),
	[Version, Status | _] = binary:split(StatusLine, <<" ">>, [global]),
	Headers = maps:from_list([begin
		[N, V] = binary:split(L, <<":">>),
		{string:lowercase(N), string:trim(V)}
	end || L <- Lines]),
	#{version => Version, status => binary_to_integer(Status), headers => Headers, body => Body}.

%% HTTP/1.1 for the inline and process groups, HTTP/2 for the others.
expected_version(Config) ->
	case ?config(group, Config) of
		G when G =:= inline; G =:= process -> 'HTTP/1.1';
		_ -> 'HTTP/2'
	end.

%% Waits for the metrics of the request to Path.
metrics(Path) ->
	receive
		{metrics, M = #{req := #{path := Path}}} -> M
	after 5000 ->
		ct:fail("no metrics for ~s", [Path])
	end.

early_error_metrics() ->
	receive
		{metrics, M = #{early_error_time := _}} -> M
	after 5000 ->
		ct:fail("no early error metrics")
	end.

access_event(Pred) ->
	receive
		{log_event, E = #{meta := #{domain := [mustang, access]}, msg := {report, R}}} ->
			case Pred(R) of
				true -> E;
				false -> access_event(Pred)
			end
	after 5000 ->
		ct:fail("no access log event")
	end.

line(#{msg := {report, Report}, meta := #{report_cb := Cb}}) ->
	{Format, Args} = Cb(Report),
	unicode:characters_to_binary(io_lib:format(Format, Args)).

%% Sends what makes an early error: a malformed request line over HTTP/1.1,
%% a header block above max_header_list_size over HTTP/2. Returns the status.
early_error(Config) ->
	case ?config(group, Config) of
		G when G =:= inline; G =:= process ->
			#{status := Status} = mustang_test:request(?config(port, Config),
				<<"GET / HTTP/1.1\nhost: localhost\r\n\r\n">>),
			Status;
		_ ->
			#{status := Status} = get(Config, "/hello",
				[{"x-big", lists:duplicate(5000, $a)}]),
			Status
	end.

early_error_status(Config) ->
	case ?config(group, Config) of
		G when G =:= inline; G =:= process -> 400;
		_ -> 431
	end.

%% Metrics.

metrics_request(Config) ->
	doc("The metrics callback gets one map with every key for a request: the response "
		"status, headers and body length, ordered times, the request process."),
	T0 = erlang:monotonic_time(),
	#{status := 200, body := Body} = get(Config, "/probe?x=1"),
	M = metrics(<<"/probe">>),
	Keys = [ref, pid, streamid, reason, req, resp_status, resp_headers, req_start, req_end,
		req_body_start, req_body_end, resp_start, resp_end, procs, informational,
		req_body_length, resp_body_length, user_data],
	[] = Keys -- maps:keys(M),
	#{ref := {?MODULE, _}, reason := normal, resp_status := 200,
		resp_headers := #{<<"content-type">> := <<"text/plain">>},
		req := #{method := <<"GET">>, qs := <<"x=1">>}, informational := [],
		req_body_length := 0, resp_body_length := RespLength, user_data := UserData,
		procs := Procs} = M,
	0 = map_size(UserData),
	RespLength = byte_size(Body),
	Version = expected_version(Config),
	#{req := #{version := Version}} = M,
	#{req_start := ReqStart, resp_start := RespStart, resp_end := RespEnd,
		req_end := ReqEnd} = M,
	Times = [T0, ReqStart, RespStart, RespEnd, ReqEnd],
	Times = lists:sort(Times),
	%% The handler ran in the connection process, or in a process of its own
	%% whose exit was recorded.
	HandlerPid = list_to_pid(binary_to_list(Body)),
	case ?config(group, Config) of
		inline ->
			HandlerPid = maps:get(pid, M),
			0 = map_size(Procs);
		_ ->
			#{HandlerPid := #{spawn := Spawn, exit := Exit, reason := _}} = Procs,
			1 = map_size(Procs),
			true = ReqStart =< Spawn andalso Spawn =< Exit andalso Exit =< ReqEnd
	end.

metrics_request_body(Config) ->
	doc("A request body: its length and the times of its first and last pieces."),
	Size = 300000,
	File = filename:join(?config(priv_dir, Config), "body.bin"),
	ok = file:write_file(File, binary:copy(<<"x">>, Size)),
	#{status := 200, body := Body} = post(Config, "/read_body", File),
	[<<"300000">>, _Calls] = binary:split(Body, <<" ">>),
	#{req := #{method := <<"POST">>}, req_body_length := Size, req_start := ReqStart,
		req_body_start := BodyStart, req_body_end := BodyEnd, resp_start := RespStart,
		req_end := ReqEnd} = metrics(<<"/read_body">>),
	Times = [ReqStart, BodyStart, BodyEnd, RespStart, ReqEnd],
	Times = lists:sort(Times).

metrics_user_data(Config) ->
	doc("mustang_req:cast({set_options, #{metrics_user_data => Map}}, Req) puts Map "
		"in user_data."),
	#{status := 200} = get(Config, "/user_data"),
	#{user_data := #{handler := stream_probe_h, n := 1}} = metrics(<<"/user_data">>).

metrics_sendfile(Config) ->
	doc("A sendfile body counts its length in resp_body_length."),
	#{status := 200, body := Body} = get(Config, "/sendfile"),
	?FILE_SIZE = byte_size(Body),
	#{resp_status := 200, resp_body_length := ?FILE_SIZE} = metrics(<<"/sendfile">>).

metrics_crash(Config) ->
	doc("A handler crash: status 500 and an internal_error reason."),
	#{status := 500} = get(Config, "/crash"),
	#{resp_status := 500, reason := {internal_error, _, _}} = metrics(<<"/crash">>).

metrics_early_error(Config) ->
	doc("An early error gives the callback a map with early_error_time, the partial "
		"request and the response status."),
	Status = early_error_status(Config),
	Status = early_error(Config),
	M = early_error_metrics(),
	#{ref := {?MODULE, _}, streamid := _, reason := _, partial_req := #{peer := _},
		resp_status := Status, resp_headers := _, early_error_time := Time,
		resp_body_length := _} = M,
	true = is_integer(Time),
	false = is_map_key(req, M).

metrics_callback_crash(Config) ->
	doc("A crashing metrics callback does not end the connection: a second request on "
		"it is served."),
	[#{status := 200}, #{status := 200, body := <<"Hello world!">>}] =
		get_many(Config, ["/metrics_crash", "/hello"], []),
	Conn = receive {metrics_crash, C} -> C after 5000 -> ct:fail(no_crash) end,
	%% Same connection.
	#{resp_status := 200, pid := Conn} = metrics(<<"/hello">>).

%% Tracer.

tracer_matching(Config) ->
	doc("A request matching the tracer match specs is traced: the callback gets init, "
		"the trace events of the process that ran the handler, then terminate; the "
		"connection process is not left traced."),
	#{status := 200, body := Body} = get(Config, "/traced/one"),
	HandlerPid = list_to_pid(binary_to_list(Body)),
	Events = receive
		{traced, _, <<"/traced/one">>, Es} -> Es
	after 5000 ->
		ct:fail("no trace")
	end,
	Sent = [E || E = {trace_ts, P, send, {stream_probe_h, ping, _}, P, _} <- Events,
		P =:= HandlerPid],
	Received = [E || E = {trace_ts, P, 'receive', {stream_probe_h, ping, _}, _} <- Events,
		P =:= HandlerPid],
	{1, 1} = {length(Sent), length(Received)},
	%% Tracing stopped with the stream (the process may be gone).
	case erlang:trace_info(HandlerPid, flags) of
		undefined -> ok;
		{flags, []} -> ok;
		{flags, Flags} ->
			%% A request process still alive keeps its flags only until its
			%% tracer, which ended with the stream, is gone.
			{tracer, []} = erlang:trace_info(HandlerPid, tracer),
			ct:log("flags left: ~p", [Flags])
	end.

tracer_not_matching(Config) ->
	doc("A request that does not match is not traced: the callback is never called."),
	#{status := 200} = get(Config, "/untraced"),
	_ = metrics(<<"/untraced">>),
	receive
		{traced, _, Path, _} -> ct:fail("traced ~s", [Path])
	after 500 ->
		ok
	end.

%% Access log.

access_log_request(Config) ->
	doc("One combined-format line per request, through logger at info with the "
		"[mustang, access] domain."),
	#{status := 200, body := Body} = get(Config, "/probe?a=1",
		[{"referer", "http://example.org/r"}, {"user-agent", "stream-handlers-test"}]),
	E = access_event(fun(#{target := T}) -> T =:= <<"/probe?a=1">> end),
	#{level := info, msg := {report, Report}} = E,
	#{duration_us := Duration, early_error := false, status := 200} = Report,
	true = is_integer(Duration) andalso Duration >= 0,
	Version = case expected_version(Config) of
		'HTTP/1.1' -> "HTTP/1.1";
		'HTTP/2' -> "HTTP/2.0"
	end,
	Line = line(E),
	ct:log("~ts", [Line]),
	{match, _} = re:run(Line, ["^127\\.0\\.0\\.1 - - \\[\\d\\d/\\w{3}/\\d{4}:\\d\\d:\\d\\d:\\d\\d "
		"[+-]\\d{4}\\] \"GET /probe\\?a=1 ", Version, "\" 200 ",
		integer_to_list(byte_size(Body)),
		" \"http://example.org/r\" \"stream-handlers-test\"$"]).

access_log_early_error(Config) ->
	doc("One line per early error, with its status."),
	Status = early_error(Config),
	E = access_event(fun(#{early_error := EarlyError}) -> EarlyError end),
	Line = line(E),
	ct:log("~ts", [Line]),
	{match, _} = re:run(Line, ["^127\\.0\\.0\\.1 - - \\[[^]]+\\] \"[^\"]*\" ",
		integer_to_list(Status), " (\\d+|-) \"-\" \"[^\"]*\"$"]).

%% The guide's example handler.

request_id(Config) ->
	doc("request_id_h (doc/guide/streams.md) adds x-request-id, keeps a sane one from "
		"the client, and logs the body bytes."),
	#{status := 200, headers := #{<<"x-request-id">> := Id}, body := Body} =
		get(Config, "/hello"),
	{match, _} = re:run(Id, "^[0-9A-F]{16}$"),
	Bytes = byte_size(Body),
	receive
		{log_event, #{meta := #{request_id := Id, resp_bytes := Bytes}}} -> ok
	after 5000 ->
		ct:fail("no request_id log")
	end,
	#{headers := #{<<"x-request-id">> := <<"client-id-1">>}} =
		get(Config, "/hello", [{"x-request-id", "client-id-1"}]).

%% Group other.

access_log_json_python(Config) ->
	doc("The json format is valid JSON for Python's json module, tricky values included."),
	Python = python(),
	Report = #{format => json, time => erlang:system_time(microsecond),
		peer => {0, 0, 0, 0, 0, 0, 0, 1}, method => <<"GET">>,
		target => <<"/a\"b\\c?\x01\x7f">>, version => 'HTTP/2', status => 200, bytes => 5,
		referer => undefined, user_agent => <<"ü ✓"/utf8, " \t\r\n", 200>>,
		duration_us => 42, early_error => false},
	Line = mustang_access_log_h:format(Report),
	Script = "import json, sys; d = json.loads(sys.stdin.buffer.read()); "
		"print(json.dumps(d, sort_keys=True))",
	File = filename:join(?config(priv_dir, Config), "line.json"),
	ok = file:write_file(File, Line),
	{0, Out} = run("/bin/sh", ["-c", Python ++ " -c '" ++ Script ++ "' < " ++ File], 30000),
	ct:log("~ts~n~ts", [Line, Out]),
	#{<<"target">> := <<"/a\"b\\c?\x01\x7f">>, <<"peer">> := <<"::1">>,
		<<"version">> := <<"HTTP/2.0">>, <<"referer">> := null, <<"duration_us">> := 42} =
		json(Out).

sys_config_parses(Config) ->
	doc("The sys.config snippet of doc/guide/streams.md parses, and its handler "
		"configuration is accepted by logger."),
	Guide = filename:join(mustang_test:root(), "doc/guide/streams.md"),
	{ok, Md} = file:read_file(Guide),
	%% The first ```erlang block that starts with "%% sys.config".
	{match, [Snippet]} = re:run(Md, "```erlang\n(%% sys.config.*?)```",
		[dotall, {capture, all_but_first, binary}]),
	File = filename:join(?config(priv_dir, Config), "sys.config"),
	ok = file:write_file(File, Snippet),
	{ok, [[{kernel, Kernel}]]} = file:consult(File),
	{logger, LoggerConfig} = lists:keyfind(logger, 1, Kernel),
	[{handler, access_log, logger_std_h, HConfig0}] =
		[H || H = {handler, access_log, _, _} <- LoggerConfig],
	%% Written under priv_dir instead of log/.
	Log = filename:join(?config(priv_dir, Config), "access.log"),
	HConfig = HConfig0#{config => (maps:get(config, HConfig0))#{file => Log}},
	ok = logger:add_handler(access_log_test, logger_std_h, HConfig),
	try
		%% An early error logged the way the handler logs (the module level
		%% set in init_per_suite plays the snippet's module_level).
		Partial = #{ref => test, pid => self(), streamid => 1, peer => {{127, 0, 0, 1}, 1}},
		Resp = {response, 400, #{}, <<"bad">>},
		Resp = mustang_access_log_h:early_error(1, {connection_error, test, <<>>}, Partial,
			Resp, #{stream_handlers => [], access_log_format => common}),
		#{msg := {report, Report}} = access_event(fun(_) -> true end),
		logger:notice("not an access log line"),
		ok = logger_std_h:filesync(access_log_test),
		{ok, Written} = file:read_file(Log),
		ct:log("~ts", [Written]),
		Expected = <<(mustang_access_log_h:format(Report))/binary, "\n">>,
		Expected = Written
	after
		logger:remove_handler(access_log_test)
	end.

guide_example_is_request_id_h(_) ->
	doc("The worked example in doc/guide/streams.md is test/handlers/request_id_h.erl, "
		"byte for byte (so the guide shows tested code)."),
	Root = mustang_test:root(),
	{ok, Md} = file:read_file(filename:join(Root, "doc/guide/streams.md")),
	{ok, Module} = file:read_file(filename:join(Root, "test/handlers/request_id_h.erl")),
	{match, [Block]} = re:run(Md, "```erlang\n(%% The worked example.*?)```",
		[dotall, {capture, all_but_first, binary}]),
	Module = Block.
