%% The benchmark suite's reports (bench/report.py, bench/publish.py) on a
%% canned results directory: real raw outputs of a `make bench QUICK=1` run
%% (3 interleaved rounds, Mustang beside Cowboy 2.13, Elli 3.3, nginx and
%% the Go Websocket reference), workloads W1a, W2b and W6a, and W1c where
%% Mustang's first round is wrk's real output against a server that is gone
%% ("unable to connect", exit 1). No server and no benchmark runs here. The
%% raw figures of the fixture, per round:
%%
%%   W1a req/s   mustang 20936.19 6479.06 20680.84   cowboy 9048.14 8822.97 12113.85
%%               elli 24365.44 13942.18 14876.23     nginx 22303.29 10860.77 36907.24
%%   W1a p99     mustang 3.21 194.80 2.35 ms
%%   W2b req/s   mustang 9891.92 13643.53 13576.47   cowboy 6731.90 9763.08 8601.76
%%               nginx 20559.21 13441.85 26881.40    (no Elli: HTTP/2)
%%   W6a frames/s mustang 12405 17094.5 18845        cowboy 8586.5 10807 9554.5
%%               wsref 15600.5 27408 32355
%%   W1c req/s   mustang (failed) 19865.84 36380.38  cowboy 18156.84 17503.90 22268.90
%%
%% W7 comes from a real `BENCH_WORKLOADS=W7 BENCH_ROUNDS=3 bench/run.sh` (at
%% 22470e2: 10,000 paced connections, 30 s; round 1 ran beside other
%% engineers' tests, load average 4-7) and its connection curve (scaling/):
%%
%%   W7 p99 ms   mustang 664.32 105.632 105.248   cowboy 2913.28 128.032 113.12
%%               elli 112.736 114.336 107.744
%%   W7 p50 ms   mustang 106.976 100.96 100.96; p99.9 796.416 188.352 206.016;
%%               max 884.965 213.774 240.016; client CPU 16.6 16.57 16.97 s
%%   curve p99   1000: mustang 101.6 cowboy 101.472 elli 101.088
%%               5000: 105.952 107.488 104.16    10000: 108.896 138.56 111.584
-module(bench_report_SUITE).
-compile([export_all, nowarn_export_all]).

-include_lib("common_test/include/ct.hrl").
-include_lib("stdlib/include/assert.hrl").

suite() ->
	[{timetrap, {seconds, 120}}].

all() ->
	[medians_spread_and_ratios, failed_round_left_out, markdown_report_and_charts,
		server_order_rotates, w7_paced_latency, w7_target_and_failures, w7_markdown, paced_client].

init_per_testcase(_, Config) ->
	%% report.py writes results.json into the directory: work on a copy.
	Dir = filename:join(?config(priv_dir, Config), "results"),
	ok = filelib:ensure_dir(filename:join(Dir, "x")),
	Src = filename:join(?config(data_dir, Config), "results"),
	ok = copy_dir(Src, Dir),
	[{results, Dir} | Config].

%% The fixture's files, and those of its subdirectories (scaling/).
copy_dir(Src, Dir) ->
	{ok, Names} = file:list_dir(Src),
	lists:foreach(fun(N) ->
		From = filename:join(Src, N),
		To = filename:join(Dir, N),
		case filelib:is_dir(From) of
			true ->
				ok = filelib:ensure_dir(filename:join(To, "x")),
				ok = copy_dir(From, To);
			false ->
				{ok, _} = file:copy(From, To)
		end
	end, Names).

end_per_testcase(_, _) ->
	ok.

medians_spread_and_ratios(Config) ->
	mustang_test:doc("report.py keeps the median of the three rounds of each server, "
		"their min and max, and the ratios of Mustang's median to Cowboy's, Elli's, "
		"nginx's and the Websocket reference's medians of the same workload."),
	{Rows, W1a} = mustang_row(Config, <<"W1a">>, 3),
	figure(W1a, <<"req_s">>, {20680.84, 6479.06, 20936.19}),
	close(3.21, maps:get(<<"p99_ms">>, W1a)),
	close(9048.14, maps:get(<<"req_s">>, row(Rows, <<"W1a">>, <<"cowboy">>))),
	close(14876.23, maps:get(<<"req_s">>, row(Rows, <<"W1a">>, <<"elli">>))),
	close(22303.29, maps:get(<<"req_s">>, row(Rows, <<"W1a">>, <<"nginx">>))),
	close(20680.84 / 9048.14, maps:get(<<"x_cowboy">>, W1a)),
	%% measured beside Mustang, not BENCH.md's figure scaled by nginx
	?assertEqual(false, maps:get(<<"x_cowboy_scaled">>, W1a)),
	close(20680.84 / 14876.23, maps:get(<<"x_elli">>, W1a)),
	close(20680.84 / 22303.29, maps:get(<<"x_nginx">>, W1a)),
	%% a peer's own row carries no ratio
	?assertEqual(null, maps:get(<<"x_cowboy">>, row(Rows, <<"W1a">>, <<"cowboy">>))),
	W2b = row(Rows, <<"W2b">>, <<"mustang">>),
	close(13576.47, maps:get(<<"req_s">>, W2b)),
	close(13576.47 / 8601.76, maps:get(<<"x_cowboy">>, W2b)),
	close(13576.47 / 20559.21, maps:get(<<"x_nginx">>, W2b)),
	?assertEqual(null, maps:get(<<"x_elli">>, W2b)),
	W6a = row(Rows, <<"W6a">>, <<"mustang">>),
	figure(W6a, <<"frames_s">>, {17094.5, 12405.0, 18845.0}),
	close(17094.5 / 9554.5, maps:get(<<"x_cowboy">>, W6a)),
	close(17094.5 / 27408, maps:get(<<"x_ref">>, W6a)).

failed_round_left_out(Config) ->
	mustang_test:doc("A round whose run failed is left out of the median and the spread "
		"(two clean rounds: their mean), its errors are kept apart, and the ratios "
		"still come from the clean rounds."),
	{_, W1c} = mustang_row(Config, <<"W1c">>, 2),
	?assertEqual([], maps:get(<<"errors">>, W1c)),
	?assertEqual([<<"exit 1">>], maps:get(<<"failed">>, W1c)),
	figure(W1c, <<"req_s">>, {(19865.84 + 36380.38) / 2, 19865.84, 36380.38}),
	close((19865.84 + 36380.38) / 2 / 18156.84, maps:get(<<"x_cowboy">>, W1c)).

markdown_report_and_charts(Config) ->
	mustang_test:doc("publish.py turns results.json into report.md (median (min–max) "
		"per server, ratios of the medians) and the PNG bar charts."),
	{Dir, Md, Lines} = publish(Config),
	?assert(lists:member(<<"| W1a HTTP/1.1 hello, 1 conn | req/s | 20.7k (6479–20.9k) | "
		"9048 (8823–12.1k) | 14.9k (13.9k–24.4k) | 22.3k (10.9k–36.9k) | 2.29x | 1.39x | 0.93x |"/utf8>>,
		Lines)),
	?assert(lists:member(<<"| W2b h2c hello, c1 m1 | req/s | 13.6k (9892–13.6k) | "
		"8602 (6732–9763) | – | 20.6k (13.4k–26.9k) | 1.58x | – | 0.66x |"/utf8>>, Lines)),
	?assert(lists:member(<<"| W6a WS echo 1 KiB, 1 conn | frames/s | 17.1k (12.4k–18.8k) | "
		"9554 (8586–10.8k) | 27.4k (15.6k–32.4k) | 1.79x | 0.62x |"/utf8>>, Lines)),
	%% the round left out is marked, and listed at the end
	?assert(lists:member(<<"| W1c HTTP/1.1 hello, 100 conns | req/s | 28.1k (19.9k–36.4k) † | "
		"18.2k (17.5k–22.3k) | – | – | 1.55x | – | – |"/utf8>>, Lines)),
	?assert(lists:member(<<"- W1c mustang: 1 round(s) left out: exit 1">>, Lines)),
	[begin
		{ok, <<16#89, "PNG", _/bits>>} = file:read_file(filename:join(Dir, Png)),
		?assertNotEqual(nomatch, binary:match(Md, <<"(", Png/binary, ")">>))
	end || Png <- [<<"throughput.png">>, <<"p99.png">>]].

server_order_rotates(_) ->
	mustang_test:doc("Each round starts the workload with the next server "
		"(bench/servers.sh rotate), so no server always goes first."),
	Servers = filename:join([mustang_test:root(), "bench", "servers.sh"]),
	Rotate = fun(N) ->
		{0, Out} = mustang_test:run("/bin/bash",
			["-c", "source \"$0\" && rotate " ++ integer_to_list(N) ++ " mustang cowboy elli nginx",
				Servers], 10000),
		string:lexemes(binary_to_list(Out), " \n")
	end,
	?assertEqual(["mustang", "cowboy", "elli", "nginx"], Rotate(0)),
	?assertEqual(["cowboy", "elli", "nginx", "mustang"], Rotate(1)),
	?assertEqual(["nginx", "mustang", "cowboy", "elli"], Rotate(3)),
	?assertEqual(["mustang", "cowboy", "elli", "nginx"], Rotate(4)).

w7_paced_latency(Config) ->
	mustang_test:doc("W7 rows: the median over the rounds of req/s, p50, p99 (with its min "
		"and max), p99.9 and max latency and failed requests per server, kept out of the "
		"HTTP table; the target line fails at p99 105.6 ms; the connection curve's points."),
	{Results, Table} = report_json(Config),
	?assertEqual([], [R || R = #{<<"workload">> := <<"W7">>} <- maps:get(<<"rows">>, Results)]),
	W7 = maps:get(<<"w7_rows">>, Results),
	M = row(W7, <<"W7">>, <<"mustang">>),
	?assertEqual(3, maps:get(<<"rounds">>, M)),
	close(10000.0, maps:get(<<"conns">>, M)),
	close(10000.0, maps:get(<<"req_s">>, M)),
	close(100.96, maps:get(<<"p50_ms">>, M)),
	figure(M, <<"p99_ms">>, {105.632, 105.248, 664.32}),
	close(206.016, maps:get(<<"p999_ms">>, M)),
	close(240.016, maps:get(<<"max_ms">>, M)),
	close(16.6, maps:get(<<"client_cpu_s">>, M)),
	?assertEqual(0.0, maps:get(<<"failures">>, M)),
	figure(row(W7, <<"W7">>, <<"cowboy">>), <<"p99_ms">>, {128.032, 113.12, 2913.28}),
	close(112.736, maps:get(<<"p99_ms">>, row(W7, <<"W7">>, <<"elli">>))),
	#{<<"pass">> := false, <<"p99_ms">> := P99, <<"conns">> := 10000.0} = maps:get(<<"w7_target">>, Results),
	close(105.632, P99),
	?assertNotEqual(nomatch, binary:match(Table, <<"[FAIL] W7 p99 <= 101.5 ms at 10000 conns">>)),
	Curve = maps:get(<<"w7_scale">>, Results),
	?assertEqual([<<"1000">>, <<"10000">>, <<"5000">>], lists:sort(maps:keys(Curve))),
	close(108.896, maps:get(<<"p99_ms">>, maps:get(<<"mustang">>, maps:get(<<"10000">>, Curve)))),
	close(107.488, maps:get(<<"p99_ms">>, maps:get(<<"cowboy">>, maps:get(<<"5000">>, Curve)))),
	close(101.088, maps:get(<<"p99_ms">>, maps:get(<<"elli">>, maps:get(<<"1000">>, Curve)))).

w7_target_and_failures(Config) ->
	mustang_test:doc("The W7 target passes when Mustang's median p99 is at most 101.5 ms "
		"with no failed request, and fails on failed requests (the fixture's Mustang rounds "
		"edited: p99 101.2 ms, then timeouts in two rounds)."),
	Dir = ?config(results, Config),
	Edit = fun(Round, From, To) ->
		File = filename:join(Dir, "W7-mustang.r" ++ integer_to_list(Round) ++ ".txt"),
		{ok, Text} = file:read_file(File),
		ok = file:write_file(File, binary:replace(Text, From, To))
	end,
	[Edit(R, P99, <<"\"p99_ms\":101.2,">>)
		|| {R, P99} <- [{1, <<"\"p99_ms\":664.32,">>}, {2, <<"\"p99_ms\":105.632,">>},
			{3, <<"\"p99_ms\":105.248,">>}]],
	{Pass, _} = report_json(Config),
	#{<<"pass">> := true} = maps:get(<<"w7_target">>, Pass),
	[Edit(R, From, To) || R <- [1, 3], {From, To} <- [{<<"\"errors\":0,">>, <<"\"errors\":3,">>},
		{<<"\"errors_timeout\":0,">>, <<"\"errors_timeout\":3,">>}]],
	{Fail, Table} = report_json(Config),
	#{<<"pass">> := false, <<"failures">> := 3.0} = maps:get(<<"w7_target">>, Fail),
	?assertNotEqual(nomatch, binary:match(Table,
		<<"[FAIL] W7 p99 <= 101.5 ms at 10000 conns, no failure p99 101.20 ms, 3 (timeout 3) failed request(s)">>)).

w7_markdown(Config) ->
	mustang_test:doc("publish.py's W7 section: the table of medians with p99's min–max, the "
		"target line, the connection curve and w7.png."),
	{Dir, Md, Lines} = publish(Config),
	[?assert(lists:member(L, Lines), L) || L <- [
		<<"## W7: paced latency">>,
		<<"| Mustang | 10000 | 10.0k | 100.96 | 105.63 (105.25–664.32) | 206.02 | 240.0 | 0 | – | 16.6 |"/utf8>>,
		<<"| Cowboy 2.13 | 10000 | 10.0k | 101.28 | 128.03 (113.12–2913.28) | 246.59 | 338.1 | 0 | – | 16.5 |"/utf8>>,
		<<"Target (BENCH.md): Mustang's p99 ≤ 101.5 ms with 10000 connections and no failed request:"
			" **not met** (p99 105.63 ms at 10000 connections)."/utf8>>,
		<<"| 1000 | 1000, p99 101.60, 0 | 1000, p99 101.47, 0 | 1000, p99 101.09, 0 |">>,
		<<"| 10000 | 10.0k, p99 108.90, 0 | 10.0k, p99 138.56, 0 | 10.0k, p99 111.58, 0 |">>]],
	{ok, <<16#89, "PNG", _/bits>>} = file:read_file(filename:join(Dir, "w7.png")),
	?assertNotEqual(nomatch, binary:match(Md, <<"(w7.png)">>)).

paced_client(_) ->
	mustang_test:doc("W7's client (bench/wsload -mode paced) passes its Go tests: the HTTP/1.1 "
		"answer parser, latency counted from the scheduled send time when an answer is late "
		"(coordinated omission), and resets, wrong statuses and lengths counted apart."),
	Go = mustang_test:tool("go", "GO", ["/usr/local/go/bin/go"]),
	Root = mustang_test:root(),
	Dir = filename:join([Root, "_build", "paced"]),
	Env = [{"GOCACHE", filename:join(Dir, "gocache")},
		{"GOPATH", filename:join(Dir, "gopath")},
		{"GOMODCACHE", filename:join([Root, "_tools", "go", "modcache"])},
		{"GOFLAGS", "-modcacherw"}],
	Src = filename:join([Root, "bench", "wsload"]),
	{Status, Out} = mustang_test:run(Go, ["-C", Src, "test", "-count=1", "-run", "Paced|ReadResponse", "-v", "."],
		600000, Env),
	ct:log("~ts", [Out]),
	?assertEqual(0, Status),
	[?assertNotEqual(nomatch, binary:match(Out, <<"--- PASS: ", Test/binary>>))
		|| Test <- [<<"TestReadResponse">>, <<"TestPacedCoordinatedOmission">>, <<"TestPacedErrors">>,
			<<"TestPacedNoServer">>]].

%% Runs bench/report.py on the copy; the rows of results.json (HTTP and Websocket).
report(Config) ->
	{Results, _} = report_json(Config),
	maps:get(<<"rows">>, Results) ++ maps:get(<<"ws_rows">>, Results).

%% bench/report.py, then bench/publish.py on the copy: report.md, and its lines.
publish(Config) ->
	Python = mustang_test:require_python(mustang_test:python(), ["matplotlib"]),
	_ = report(Config),
	Dir = ?config(results, Config),
	Script = filename:join([mustang_test:root(), "bench", "publish.py"]),
	{0, _} = mustang_test:run(Python, [Script, Dir], 60000),
	{ok, Md} = file:read_file(filename:join(Dir, "report.md")),
	{Dir, Md, binary:split(Md, <<"\n">>, [global])}.

%% bench/report.py's results.json and printed report.
report_json(Config) ->
	Dir = ?config(results, Config),
	Script = filename:join([mustang_test:root(), "bench", "report.py"]),
	{0, Table} = mustang_test:run(mustang_test:python(), [Script, Dir], 60000),
	{ok, Json} = file:read_file(filename:join(Dir, "results.json")),
	{mustang_test:json(Json), Table}.

%% The rows, and Mustang's row of a workload, which has that many rounds.
mustang_row(Config, Workload, Rounds) ->
	Rows = report(Config),
	Row = row(Rows, Workload, <<"mustang">>),
	?assertEqual(Rounds, maps:get(<<"rounds">>, Row)),
	{Rows, Row}.

row(Rows, Workload, Server) ->
	[Row] = [R || R = #{<<"workload">> := W, <<"server">> := S} <- Rows, W =:= Workload, S =:= Server],
	Row.

%% A row's median, min and max of one figure.
figure(Row, Key, {Median, Min, Max}) ->
	close(Median, maps:get(Key, Row)),
	close(Min, maps:get(Key, maps:get(<<"min">>, Row))),
	close(Max, maps:get(Key, maps:get(<<"max">>, Row))).

close(Expected, Value) ->
	?assert(abs(Expected - Value) =< 1.0e-9 * abs(Expected), {Expected, Value}).
