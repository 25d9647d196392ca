%% What each entry point installs (scripts/setup.sh, README "Two commands"):
%% `make run` and `make example` install the run set only (Erlang/OTP and
%% rebar3), `make test` the test tools, `make bench` the benchmark tools.
%%
%% The Makefile is read as make itself reads it (`make -n TARGET` prints
%% the commands without running them); each scripts/setup.sh command it
%% would run is then asked for its plan with --list, which prints every item
%% of its sets and installs nothing. bench/run.sh calls setup itself: its
%% scripts/setup.sh lines are read from the script.
-module(setup_SUITE).
-compile([export_all, nowarn_export_all]).

-include_lib("common_test/include/ct.hrl").

all() ->
	[run_installs_run_set, example_installs_run_set, test_installs_test_tools,
		bench_installs_bench_tools, sets_are_what_readme_says, list_installs_nothing].

%% What running the demo needs: the demo makes its TLS certificate with
%% OTP's public_key, so not even openssl.
run_set() ->
	[<<"apt erlang-nox">>, <<"apt erlang-dev">>, <<"apt rebar3">>].

run_installs_run_set(_) ->
	mustang_test:doc("make run installs Erlang/OTP and rebar3, and none of the tools of the "
		"tests and benchmarks."),
	Plan = make_plan(["run"]),
	[] = run_set() -- Plan,
	[] = Plan -- run_set(),
	ok.

example_installs_run_set(_) ->
	mustang_test:doc("make example installs what make run installs."),
	Plan = make_plan(["example", "NAME=hello_world"]),
	[] = run_set() -- Plan,
	[] = Plan -- run_set(),
	ok.

test_installs_test_tools(_) ->
	mustang_test:doc("make test installs the run set and the test tools (a sample of them)."),
	Plan = make_plan(["test"]),
	[] = (run_set() ++ [<<"apt curl">>, <<"apt chromium">>, <<"apt haproxy">>,
		<<"apt erlang-common-test">>, <<"python hypercorn">>, <<"python h2">>,
		<<"go h2spec">>, <<"npm ws">>]) -- Plan,
	ok.

bench_installs_bench_tools(_) ->
	mustang_test:doc("bench/run.sh (make bench) installs the load tools, not the test-only "
		"ones."),
	{ok, Script} = file:read_file(filename:join(mustang_test:root(), "bench/run.sh")),
	Commands = setup_commands(Script),
	[_ | _] = Commands,
	Plan = lists:usort(lists:append([list_plan(C) || C <- Commands])),
	ct:log("bench/run.sh: ~p~n~p", [Commands, Plan]),
	[] = (run_set() ++ [<<"apt wrk">>, <<"apt nginx-light">>, <<"apt nghttp2-client">>,
		<<"python matplotlib">>, <<"go toolchain">>]) -- Plan,
	[] = [I || I <- [<<"go h2spec">>, <<"npm ws">>, <<"apt chromium">>, <<"apt haproxy">>,
		<<"python hypercorn">>], lists:member(I, Plan)],
	ok.

sets_are_what_readme_says(_) ->
	mustang_test:doc("README says what make run installs and the ports it uses."),
	{ok, Readme} = file:read_file(filename:join(mustang_test:root(), "README.md")),
	{match, [Section]} = re:run(Readme, "## Two commands\n(.*?)\n## ",
		[dotall, {capture, all_but_first, binary}]),
	Packages = [P || <<"apt ", P/binary>> <- run_set()],
	[] = [P || P <- Packages, binary:match(Section, <<"`", P/binary, "`">>) =:= nomatch],
	[] = [Re || Re <- ["\\b8080\\b", "\\b8443\\b", "`PORT`", "`TLS_PORT`"],
		re:run(Section, Re, [{capture, none}]) =/= match],
	ok.

list_installs_nothing(Config) ->
	mustang_test:doc("--list prints the plan and exits before anything is installed: a "
		"copy of the script in a tree without _tools creates nothing."),
	Tree = filename:join(proplists:get_value(priv_dir, Config), "tree"),
	Script = filename:join(Tree, "scripts/setup.sh"),
	ok = filelib:ensure_dir(Script),
	{ok, _} = file:copy(filename:join(mustang_test:root(), "scripts/setup.sh"), Script),
	{0, Out} = sh(Tree, "bash scripts/setup.sh --list all"),
	Lines = string:split(string:trim(Out), "\n", all),
	[_, _, _ | _] = Lines,
	[{match, _} = re:run(L, "^(apt|python|go|npm) [^ ]+$") || L <- Lines],
	{ok, ["scripts"]} = file:list_dir(Tree),
	%% Refused: an unknown set.
	{2, _} = sh(Tree, "bash scripts/setup.sh --list nothing_of_that_name"),
	ok.

%% The items the scripts/setup.sh commands of `make -n Args` would install
%% (sorted, unique).
make_plan(Args) ->
	Root = mustang_test:root(),
	{0, Out} = sh(Root, lists:flatten(["make --no-print-directory -n ", lists:join(" ", Args)])),
	Commands = setup_commands(Out),
	ct:log("make -n ~s: setup commands ~p", [lists:join(" ", Args), Commands]),
	%% No setup at all would install nothing: that is a pass only if the
	%% run set is there anyway, which the callers check.
	Plan = lists:usort(lists:append([list_plan(C) || C <- Commands])),
	ct:log("plan: ~p", [Plan]),
	Plan.

%% The scripts/setup.sh commands of a script or of make's output, with their
%% arguments: "scripts/setup.sh run" at the start of a line or after ||, &&
%% or ; (not in comments, not inside a message).
setup_commands(Text) ->
	case re:run(Text, "(?:^[ \t]*|\\|\\||&&|;)[ \t]*(scripts/setup\\.sh(?:[ \t]+[a-z-]+)*)[ \t]*$",
			[multiline, global, {capture, all_but_first, binary}]) of
		{match, Matches} -> [C || [C] <- Matches];
		nomatch -> []
	end.

%% The items of one setup command's plan.
list_plan(Command) ->
	{Status, Out} = sh(mustang_test:root(), binary_to_list(iolist_to_binary(
		["bash ", Command, " --list"]))),
	ct:log("~s --list: exit ~p~n~s", [Command, Status, Out]),
	0 = Status,
	[L || L <- string:split(string:trim(Out), "\n", all), L =/= <<>>].

sh(Dir, Command) ->
	Port = open_port({spawn_executable, "/bin/sh"}, [{args, ["-c", Command]}, {cd, Dir},
		binary, exit_status, stderr_to_stdout, use_stdio, hide]),
	collect(Port, []).

collect(Port, Acc) ->
	receive
		{Port, {data, Data}} -> collect(Port, [Acc, Data]);
		{Port, {exit_status, Status}} -> {Status, iolist_to_binary(Acc)}
	after 120000 ->
		error({timeout, Port})
	end.
