%% Packaging: what a user who depends on Mustang gets. A fresh rebar3
%% application in a temporary directory depends on this repository by git
%% path (the commit checked out here, HEAD), is built by rebar3 the way a
%% user builds it (default profile, offline: file:// git and no hex package),
%% is started in its own node and serves a request to curl.
%%
%% Its build also shows that a compiler warning in Mustang does not break
%% the user's build (rebar.config keeps warnings_as_errors out of the default
%% profile; make test compiles with the strict profile): a module with a
%% warning, standing for one that a newer OTP adds, is put in the fetched
%% Mustang before it is compiled.
%%
%% When the source tree is not a git repository (an unpacked archive), the
%% dependency is a copy of the tree in _checkouts instead.
%%
%% getting_started follows doc/guide/getting_started.md: `rebar3 new app`,
%% then the page's blocks that start with a file name comment
%% (`%% rebar.config`, `%% src/...`) written to those files, Mustang's git
%% URL pointed at this tree and the port made 0; then `rebar3 as prod
%% release`, the release started as a daemon and asked through `bin/NAME
%% eval` for its port, the page's routes queried with curl, and the release
%% stopped.
-module(packaging_SUITE).
-compile([export_all, nowarn_export_all]).

-include_lib("common_test/include/ct.hrl").

suite() ->
	[{timetrap, {minutes, 10}}].

all() ->
	[license_and_metadata, fresh_app, getting_started].

%% The LICENSE file says what the application resource file says, and the
%% resource file has what a package index needs.
license_and_metadata(_) ->
	Root = mustang_test:root(),
	{ok, License} = file:read_file(filename:join(Root, "LICENSE")),
	{match, _} = re:run(License, "^Copyright \\(c\\) [0-9]{4}, Mustang contributors\n"),
	%% The ISC license's grant and disclaimer.
	{match, _} = re:run(License, "Permission to use, copy, modify, and/or distribute this software"),
	{match, _} = re:run(License, "THE SOFTWARE IS PROVIDED \"AS IS\""),
	{ok, [{application, mustang, Props}]} = file:consult(filename:join(Root, "src/mustang.app.src")),
	["ISC"] = proplists:get_value(licenses, Props),
	[_ | _] = proplists:get_value(description, Props),
	[{_, "https://" ++ _} | _] = proplists:get_value(links, Props),
	%% warnings_as_errors only in a profile, never in what a dependent compiles.
	{ok, Terms} = file:consult(filename:join(Root, "rebar.config")),
	false = lists:member(warnings_as_errors, proplists:get_value(erl_opts, Terms)),
	Strict = proplists:get_value(strict, proplists:get_value(profiles, Terms)),
	true = lists:member(warnings_as_errors, proplists:get_value(erl_opts, Strict)),
	ok.

fresh_app(Config) ->
	Root = mustang_test:root(),
	Dir = filename:join(proplists:get_value(priv_dir, Config), "fresh"),
	ok = filelib:ensure_dir(Dir ++ "/src/"),
	Dep = dependency(Root, Dir),
	ct:log("dependency: ~p", [Dep]),
	write_app(Dir, Dep),
	Env = [{"HOME", filename:join(Dir, "home")},
		{"REBAR_CACHE_DIR", filename:join(Dir, "rebar_cache")},
		{"REBAR_COLOR", "none"}],
	{0, _} = rebar3(["get-deps"], Dir, Env),
	DepDir = case Dep of
		checkouts -> filename:join(Dir, "_checkouts/mustang");
		_ -> filename:join(Dir, "_build/default/lib/mustang")
	end,
	ok = file:write_file(filename:join(DepDir, "src/zz_new_warning.erl"),
		"-module(zz_new_warning).\n-export([f/1]).\n-spec f(any()) -> ok.\nf(X) -> ok.\n"),
	{0, Out} = rebar3(["compile"], Dir, Env),
	%% The module with a warning was compiled, and the build went on.
	{match, _} = re:run(Out, "zz_new_warning.erl:4:3: Warning: variable 'X' is unused"),
	PortFile = filename:join(Dir, "port"),
	Ebins = filelib:wildcard(filename:join(Dir, "_build/default/{lib,checkouts}/*/ebin")),
	true = length(Ebins) >= 2,
	Node = open_port({spawn_executable, os:find_executable("erl")}, [
		{args, ["-noshell"] ++ lists:append([["-pa", E] || E <- Ebins])
			++ ["-fresh", "port_file", lists:flatten(io_lib:format("~p", [PortFile])),
				"-eval", "{ok, _} = application:ensure_all_started(fresh)"]},
		{cd, Dir}, exit_status, stderr_to_stdout, binary]),
	{os_pid, OsPid} = erlang:port_info(Node, os_pid),
	try
		Port = wait_port_file(PortFile, Node, 600),
		Url = "http://127.0.0.1:" ++ integer_to_list(Port) ++ "/",
		"Hello from a fresh application! 200" = os:cmd("curl -s -w ' %{http_code}' " ++ Url),
		"2 200" = string:trim(os:cmd("curl -s --http2-prior-knowledge -o /dev/null "
			"-w '%{http_version} %{http_code}' " ++ Url))
	after
		mustang_test:kill_os_pid(OsPid),
		catch port_close(Node)
	end.

%% Mustang as a dependency: this tree's HEAD by git, else a copy in
%% Dir/_checkouts.
dependency(Root, Dir) ->
	case mustang_test:run(os:find_executable("git"), ["-C", Root, "rev-parse", "HEAD"], 30000) of
		{0, Sha} ->
			{git, "file://" ++ Root, {ref, binary_to_list(string:trim(Sha))}};
		{_, _} ->
			checkout_copy(Root, Dir),
			checkouts
	end.

getting_started(Config) ->
	Root = mustang_test:root(),
	Priv = proplists:get_value(priv_dir, Config),
	%% A name of its own, so that the release's node name (-sname) is not
	%% another worktree's running the same test.
	Name = "gs" ++ integer_to_list(erlang:unique_integer([positive])) ++ "_"
		++ os:getpid(),
	Dir = filename:join(Priv, Name),
	Env = [{"HOME", filename:join(Priv, "gs_home")},
		{"REBAR_CACHE_DIR", filename:join(Priv, "gs_rebar_cache")},
		{"REBAR_COLOR", "none"}],
	{0, _} = run("rebar3", ["new", "app", Name], Priv, Env),
	Dep = dependency(Root, Dir),
	Files = guide_files(filename:join(Root, "doc/guide/getting_started.md")),
	ct:log("files of the guide: ~p", [[F || {F, _} <- Files]]),
	[_, _, _, _ | _] = Files,
	true = lists:member("rebar.config", [F || {F, _} <- Files]),
	_ = [begin
		File = filename:join(Dir, lists:flatten(string:replace(F, "my_app", Name, all))),
		Text1 = lists:flatten(string:replace(Text0, "my_app", Name, all)),
		Text = port_zero(point_dep(Text1, Dep)),
		ok = filelib:ensure_dir(File),
		ok = file:write_file(File, Text)
	end || {F, Text0} <- Files],
	{0, _} = rebar3(["as", "prod", "release"], Dir, Env),
	Bin = filename:join([Dir, "_build/prod/rel", Name, "bin", Name]),
	{0, _} = run(Bin, ["daemon"], Dir, Env),
	try
		ok = mustang_test:wait_until(fun() ->
			element(2, run(Bin, ["ping"], Dir, Env)) =:= "pong\n" end, 30000),
		{0, PortText} = run(Bin, ["eval", "mustang:get_port(my_http)."], Dir, Env),
		Url = "http://127.0.0.1:" ++ string:trim(PortText),
		"Hello world! 200" = os:cmd("curl -s -w ' %{http_code}' " ++ Url ++ "/"),
		"user 42 200" = os:cmd("curl -s -w ' %{http_code}' " ++ Url ++ "/users/42"),
		"404" = os:cmd("curl -s -o /dev/null -w '%{http_code}' " ++ Url ++ "/users/abc")
	after
		{StopStatus, StopOut} = run(Bin, ["stop"], Dir, Env),
		ct:log("stop: ~p ~s", [StopStatus, StopOut])
	end.

%% The ```erlang blocks of a guide page whose first line is a comment naming
%% a file: [{File, Text}].
guide_files(Page) ->
	{ok, Bin} = file:read_file(Page),
	{match, Blocks} = re:run(Bin, "```erlang\n%% ([a-z_./]+)\n(.*?)```",
		[global, dotall, {capture, all_but_first, list}]),
	[{File, Text} || [File, Text] <- Blocks].

%% The guide's git dependency on Mustang, pointed at this tree.
point_dep(Text, checkouts) ->
	re:replace(Text, "\\{mustang, \\{git, [^}]*\\}\\}", "mustang", [{return, list}]);
point_dep(Text, {git, Url, {ref, Sha}}) ->
	Dep = io_lib:format("{mustang, {git, ~p, {ref, ~p}}}", [Url, Sha]),
	New = re:replace(Text, "\\{mustang, \\{git, \"[^\"]*\", \\{[a-z]+, \"[^\"]*\"\\}\\}\\}",
		lists:flatten(Dep), [{return, list}]),
	case {string:find(Text, "{mustang, {git,"), New =:= Text} of
		{nomatch, _} -> New;
		{_, false} -> New;
		{_, true} -> error({dependency_line_not_understood, Text})
	end.

port_zero(Text) ->
	lists:flatten(string:replace(Text, "port => 8080", "port => 0", all)).

%% The application: rebar.config, the resource file, the callback module
%% (which writes the listener's port to a file for the test), a supervisor
%% and a handler.
write_app(Dir, Dep) ->
	Deps = case Dep of
		checkouts -> "{deps, [mustang]}.\n";
		_ -> io_lib:format("{deps, [{mustang, ~p}]}.\n", [Dep])
	end,
	Files = [
		{"rebar.config", Deps},
		{"src/fresh.app.src",
			"{application, fresh, [{description, \"Depends on Mustang\"}, {vsn, \"1\"},\n"
			"\t{applications, [kernel, stdlib, mustang]}, {mod, {fresh_app, []}}, {env, []}]}.\n"},
		{"src/fresh_app.erl",
			"-module(fresh_app).\n"
			"-behaviour(application).\n"
			"-export([start/2, stop/1]).\n"
			"start(_, _) ->\n"
			"\tDispatch = mustang_router:compile([{'_', [{\"/\", fresh_h, []}]}]),\n"
			"\t{ok, _} = mustang:start_clear(fresh, #{port => 0}, #{env => #{dispatch => Dispatch}}),\n"
			"\t{ok, PortFile} = application:get_env(fresh, port_file),\n"
			"\tok = file:write_file(PortFile, integer_to_list(mustang:get_port(fresh))),\n"
			"\tfresh_sup:start_link().\n"
			"stop(_) -> ok.\n"},
		{"src/fresh_sup.erl",
			"-module(fresh_sup).\n"
			"-behaviour(supervisor).\n"
			"-export([start_link/0, init/1]).\n"
			"start_link() -> supervisor:start_link({local, ?MODULE}, ?MODULE, []).\n"
			"init([]) -> {ok, {#{}, []}}.\n"},
		{"src/fresh_h.erl",
			"-module(fresh_h).\n"
			"-export([init/2]).\n"
			"init(Req, State) ->\n"
			"\t{ok, mustang_req:reply(200, #{<<\"content-type\">> => <<\"text/plain\">>},\n"
			"\t\t<<\"Hello from a fresh application!\">>, Req), State}.\n"}
	],
	_ = [ok = file:write_file(filename:join(Dir, F), C) || {F, C} <- Files],
	ok.

%% What a package holds: the application's sources and its rebar.config.
checkout_copy(Root, Dir) ->
	Copy = filename:join(Dir, "_checkouts/mustang"),
	ok = filelib:ensure_dir(Copy ++ "/"),
	_ = [{0, _} = run("cp", ["-r", filename:join(Root, F), Copy], Root, [])
		|| F <- ["src", "rebar.config", "LICENSE"]],
	ok.

wait_port_file(File, Node, Tries) ->
	case file:read_file(File) of
		{ok, <<_, _/binary>> = Port} ->
			binary_to_integer(Port);
		_ when Tries > 0 ->
			receive
				{Node, {exit_status, Status}} -> error({node_exited, Status});
				{Node, {data, Data}} -> ct:log("node: ~s", [Data])
			after 100 -> ok
			end,
			wait_port_file(File, Node, Tries - 1);
		_ ->
			error(port_file_timeout)
	end.

rebar3(Args, Dir, Env) ->
	{Status, Out} = run("rebar3", Args, Dir, Env),
	ct:log("rebar3 ~s: exit ~p~n~s", [lists:join(" ", Args), Status, Out]),
	{Status, Out}.

%% Runs an executable in Dir; returns its exit status and its output.
run(Exe, Args, Dir, Env) ->
	Port = open_port({spawn_executable, os:find_executable(Exe)},
		[{args, Args}, {cd, Dir}, {env, Env}, exit_status, stderr_to_stdout, binary]),
	collect(Port, []).

collect(Port, Acc) ->
	receive
		{Port, {data, Data}} -> collect(Port, [Acc, Data]);
		{Port, {exit_status, Status}} -> {Status, unicode:characters_to_list(Acc)}
	end.
