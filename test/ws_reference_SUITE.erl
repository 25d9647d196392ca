%% The oracle of the Websocket conformance cases (test/ws_conformance): the
%% cases run against two third-party servers, Node's ws over HTTP/1.1 and
%% hypercorn (wsproto) over HTTP/1.1 and over HTTP/2 (RFC 8441, h2c), and
%% each run must fail exactly the cases listed for it in
%% test/ws_conformance/expected_failures.json, each failure explained in
%% test/ws_conformance/README.md. A case that starts failing, or a listed
%% one that starts passing, means the runner, a case or a reference server
%% changed: read it, then fix the case or update the list and the README.
%% Cases listed as flaky may go either way (the reference server races
%% itself; the reason is in the file).
%%
%% Every external tool is required: a missing one fails its test (run
%% scripts/setup.sh). Python (with h2 and hypercorn) is $MUSTANG_PYTHON,
%% then _tools/venv/bin/python; Node's ws package is in
%% _tools/node/node_modules. The servers listen on ports the system picks.
-module(ws_reference_SUITE).
-compile([export_all, nowarn_export_all]).

-include_lib("common_test/include/ct.hrl").

-import(mustang_test, [doc/1, root/0, python/0, require_python/2, tool/3, run/3, kill_os_pid/1,
	start_program/5, program_output/1, node_path/0, json/1]).

suite() ->
	[{timetrap, {seconds, 300}}].

%% One at a time (about 1 s, 7 s and 55 s): together they would save only
%% the two shorter runs' time, on a CI machine that may have 2 cores.
all() ->
	[node_h1, hypercorn_h1, hypercorn_h2].

init_per_suite(Config) ->
	Python = require_python(python(), ["h2", "hypercorn", "wsproto"]),
	File = filename:join(dir(), "expected_failures.json"),
	{ok, Bin} = file:read_file(File),
	[{python, Python}, {expected, json(Bin)} | Config].

end_per_suite(_) ->
	ok.

%% The server is started here, so that end_per_testcase stops it whatever
%% happened to the test; a server that does not start fails the test.
init_per_testcase(Case, Config) ->
	try
		{Exe, Args, Env, Ready} = server(Case, Config),
		start_program(Exe, Args, Env, Ready, 30000)
	of
		{Port, OsPid, [PortNumber]} ->
			[{server, {Port, OsPid}}, {server_port, binary_to_list(PortNumber)} | Config]
	catch
		exit:{test_case_failed, Reason} -> [{server_error, Reason} | Config]
	end.

end_per_testcase(_, Config) ->
	case ?config(server, Config) of
		{Port, OsPid} ->
			kill_os_pid(OsPid),
			catch port_close(Port),
			ok;
		undefined ->
			ok
	end.

dir() ->
	filename:join([root(), "test", "ws_conformance"]).

%% Both print their actual port once they accept connections.
server(node_h1, _) ->
	{tool("node", undefined, []), [filename:join(dir(), "node_echo_server.js"), "0"],
		[{"NODE_PATH", node_path()}], "^listening ([0-9]+)"};
server(_, Config) ->
	{?config(python, Config), [filename:join(dir(), "hypercorn_echo.py"), "0"], [],
		"Running on http://127\\.0\\.0\\.1:([0-9]+)"}.

%% The options are those of test/ws_conformance/validate.sh.

node_h1(Config) ->
	doc("Node's ws over HTTP/1.1 fails exactly the cases listed for it (node_h1)."),
	reference(Config, <<"node_h1">>, ["--proto", "h1"]).

hypercorn_h1(Config) ->
	doc("hypercorn over HTTP/1.1, errors checked leniently, fails exactly the cases listed "
		"for it (hypercorn_h1)."),
	reference(Config, <<"hypercorn_h1">>, ["--proto", "h1", "--lenient-errors", "-j", "16"]).

hypercorn_h2(Config) ->
	doc("hypercorn over HTTP/2 (RFC 8441 extended CONNECT on h2c), errors checked leniently "
		"and the end of the stream not required, fails exactly the cases listed for it "
		"(hypercorn_h2)."),
	reference(Config, <<"hypercorn_h2">>,
		["--proto", "h2", "--lenient-errors", "--no-end-check", "-j", "16"]).

%% Runs run.py against the test's server and compares the failed cases with
%% the expected ones.
reference(Config, Name, Args) ->
	case ?config(server_error, Config) of
		undefined -> ok;
		Reason -> ct:fail(Reason)
	end,
	#{Name := Expected = #{<<"total">> := Total, <<"fail">> := Fail}} = ?config(expected, Config),
	Flaky = lists:append([Ids || #{<<"ids">> := Ids} <- maps:get(<<"flaky">>, Expected, [])]),
	Script = filename:join(dir(), "run.py"),
	{Status, Out} = run(?config(python, Config),
		[Script, "--port", ?config(server_port, Config), "--quiet" | Args], 240000),
	%% hypercorn's output is large (a traceback for each crashed connection).
	{ServerPort, _} = ?config(server, Config),
	ServerLog = filename:join(?config(priv_dir, Config), binary_to_list(Name) ++ "_server.log"),
	ok = file:write_file(ServerLog, program_output(ServerPort)),
	ct:log("run.py exited with ~p:~n~ts~nThe server's output is in ~ts", [Status, Out, ServerLog]),
	Lines = binary:split(Out, <<"\n">>, [global, trim_all]),
	Summary = case [S || <<"SUMMARY ", S/bits>> <- Lines] of
		[S] -> json(S);
		_ -> ct:fail("run.py exited with ~p without a summary:~n~ts", [Status, Out])
	end,
	#{<<"total">> := Ran, <<"passed">> := Passed, <<"failed_ids">> := Failed} = Summary,
	if
		Ran =/= Total ->
			ct:fail("run.py ran ~b cases, expected ~b (the total in expected_failures.json)",
				[Ran, Total]);
		true ->
			ok
	end,
	New = Failed -- (Fail ++ Flaky),
	NowPassing = Fail -- Failed,
	FlakyFailed = [Id || Id <- Flaky, lists:member(Id, Failed)],
	ct:comment("~b/~b passed, ~b expected failures, ~b of ~b flaky cases failed~s",
		[Passed, Ran, length(Fail), length(FlakyFailed), length(Flaky),
			[[": ", lists:join(" ", FlakyFailed)] || FlakyFailed =/= []]]),
	case {New, NowPassing} of
		{[], []} ->
			ok;
		_ ->
			FailLines = [L || L = <<"FAIL ", Rest/bits>> <- Lines,
				lists:member(hd(binary:split(Rest, <<":">>)), New)],
			ct:fail("~s: ~b new failure(s), ~b listed failure(s) now passing "
				"(test/ws_conformance/expected_failures.json)~n"
				"new failures:~n~ts~nnow passing: ~ts",
				[Name, length(New), length(NowPassing), lists:join("\n", FailLines),
					lists:join(" ", NowPassing)])
	end.
