%% Runs an example of examples/<Name>/ inside a Common Test node, the way
%% `make example NAME=<Name>` runs it from a shell: its src/*.erl compiled
%% into the suite's priv_dir, its application started with the env key
%% `port' set to 0 (the examples listen on 8080 by default), so that tests
%% do not need a free fixed port.
%%
%% Convention of every example (examples/README.md): an OTP application
%% named after its directory, whose clear listener is registered under the
%% application's name (mustang:start_clear(Name, ...)) and takes its port
%% from application:get_env(Name, port, 8080); a TLS listener, when it has
%% one, is named {Name, tls} and takes tls_port (8443).
-module(mustang_example).

-export([start/2]).
-export([stop/1]).
-export([port/1]).
-export([tls_port/1]).
-export([dir/1]).

%% Compiles and starts the example; returns its clear port.
-spec start(atom(), list()) -> inet:port_number().
start(Name, Config) ->
	{ok, _} = application:ensure_all_started(mustang),
	Src = dir(Name) ++ "/src",
	Out = filename:join(proplists:get_value(priv_dir, Config), "example_" ++ atom_to_list(Name)),
	ok = filelib:ensure_dir(Out ++ "/"),
	Include = filename:join(code:lib_dir(mustang), "include"),
	Modules = [begin
		{ok, Mod} = compile:file(File, [debug_info, return_errors, {outdir, Out}, {i, Include}]),
		Mod
	end || File <- filelib:wildcard(Src ++ "/*.erl")],
	_ = [code:purge(M) || M <- Modules],
	_ = [code:delete(M) || M <- Modules],
	{ok, [AppSpec]} = file:consult(Src ++ "/" ++ atom_to_list(Name) ++ ".app.src"),
	ok = file:write_file(filename:join(Out, atom_to_list(Name) ++ ".app"),
		io_lib:format("~p.~n", [AppSpec])),
	true = code:add_patha(Out),
	_ = application:load(Name),
	ok = application:set_env(Name, port, 0),
	ok = application:set_env(Name, tls_port, 0),
	{ok, _} = application:ensure_all_started(Name),
	port(Name).

-spec stop(atom()) -> ok.
stop(Name) ->
	_ = application:stop(Name),
	_ = application:unload(Name),
	ok.

-spec port(atom()) -> inet:port_number().
port(Name) ->
	mustang:get_port(Name).

-spec tls_port(atom()) -> inet:port_number().
tls_port(Name) ->
	mustang:get_port({Name, tls}).

%% The example's directory (examples/<Name>) in the source tree.
-spec dir(atom()) -> string().
dir(Name) ->
	%% _build/test/lib/mustang/test/mustang_example.beam: the source tree is
	%% four levels above the application directory.
	AppDir = filename:dirname(filename:dirname(code:which(?MODULE))),
	Candidates = [filename:join([AppDir, "..", "..", "..", "..", "examples", atom_to_list(Name)]),
		filename:join([AppDir, "examples", atom_to_list(Name)])],
	case [D || D <- Candidates, filelib:is_dir(filename:join(D, "src"))] of
		[Dir | _] -> filename:absname(Dir);
		[] -> error({example_not_found, Name, Candidates})
	end.
