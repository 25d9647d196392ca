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
-module(bench_report_SUITE).
-compile([export_all, nowarn_export_all]).

-include_lib("common_test/include/ct.hrl").
-include_lib("stdlib/include/assert.hrl").

suite() ->
	[{timetrap, {seconds, 120}}].

all() ->
	[medians_spread_and_ratios, failed_round_left_out, markdown_report_and_charts,
		server_order_rotates].

init_per_testcase(_, Config) ->
	%% report.py writes results.json into the directory: work on a copy.
	Dir = filename:join(?config(priv_dir, Config), "results"),
	ok = filelib:ensure_dir(filename:join(Dir, "x")),
	Src = filename:join(?config(data_dir, Config), "results"),
	{ok, Names} = file:list_dir(Src),
	[{ok, _} = file:copy(filename:join(Src, N), filename:join(Dir, N)) || N <- Names],
	[{results, Dir} | Config].

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
	Python = mustang_test:require_python(mustang_test:python(), ["matplotlib"]),
	_ = report(Config),
	Dir = ?config(results, Config),
	Script = filename:join([mustang_test:root(), "bench", "publish.py"]),
	{0, _} = mustang_test:run(Python, [Script, Dir], 60000),
	{ok, Md} = file:read_file(filename:join(Dir, "report.md")),
	Lines = binary:split(Md, <<"\n">>, [global]),
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

%% Runs bench/report.py on the copy; the rows of results.json (HTTP and Websocket).
report(Config) ->
	Dir = ?config(results, Config),
	Script = filename:join([mustang_test:root(), "bench", "report.py"]),
	{0, _} = mustang_test:run(mustang_test:python(), [Script, Dir], 60000),
	{ok, Json} = file:read_file(filename:join(Dir, "results.json")),
	Results = mustang_test:json(Json),
	maps:get(<<"rows">>, Results) ++ maps:get(<<"ws_rows">>, Results).

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
