%% The documentation cannot rot: every ```erlang code block of the guide
%% (doc/guide/*.md) and of README.md compiles, and the reference manual of
%% make docs (scripts/gen_docs.escript) has every exported function of every
%% public module with its spec.
%%
%% A block is one of:
%% - a whole module: its first form is -module(Name); compiled as it is;
%% - a file of Erlang terms (sys.config, rebar.config): every form is a term;
%% - function definitions: compiled wrapped in a generated module with
%%   -compile([export_all, nowarn_export_all]), so they may call each other
%%   and any remote function (a remote module need not exist).
%% Code that is none of these (an expression, a shell session, a part of a
%% map) belongs in a ```text or ```shell block, or wrapped in a function.
%% Errors are reported at their line in the Markdown file; warnings are
%% logged, not failures.
-module(docs_SUITE).
-compile([export_all, nowarn_export_all]).

-include_lib("common_test/include/ct.hrl").

all() ->
	[guide_code_blocks, code_block_checker, reference_manual, reference_new_module,
		reference_checks,
		readme_module_index, readme_guide_links, docs_speak_to_users, guide_names_exist].

%% Every Mustang function or type README and the guide name as
%% `mustang_mod:name/Arity`, `mustang_mod:name/A,B` or `mustang_mod:name(...)`
%% is exported by that module (a function of that arity, or a type).
guide_names_exist(_) ->
	Root = mustang_test:root(),
	Files = [filename:join(Root, "README.md")]
		++ filelib:wildcard(filename:join(Root, "doc/guide/*.md")),
	Bad = lists:append([[io_lib:format("~s:~b: ~s:~s~s", [rel(Root, F), N, M, Name, Rest])
		|| {N, Line} <- numbered_lines(F),
			[M, Name, Rest] <- name_refs(Line),
			not exported(list_to_atom(M), list_to_atom(Name), Rest)] || F <- Files]),
	case Bad of
		[] -> ok;
		_ -> ct:fail("names that no module exports:~n~s", [lists:join("\n", Bad)])
	end.

name_refs(Line) ->
	case re:run(Line, "\\b(mustang[a-z0-9_]*):([a-z][a-zA-Z0-9_]*)(/[0-9]+(?:,[0-9]+)*|\\()",
			[global, unicode, {capture, all_but_first, list}]) of
		{match, Refs} -> Refs;
		nomatch -> []
	end.

exported(Mod, Name, Rest) ->
	case code:ensure_loaded(Mod) of
		{module, Mod} ->
			Funs = [A || {F, A} <- Mod:module_info(exports), F =:= Name],
			Types = [A || {T, A} <- exported_types(Mod), T =:= Name],
			case Rest of
				"(" -> Funs ++ Types =/= [];
				"/" ++ Arities ->
					lists:all(fun(A) -> lists:member(list_to_integer(A), Funs ++ Types) end,
						string:split(Arities, ",", all))
			end;
		_ ->
			false
	end.

exported_types(Mod) ->
	case beam_lib:chunks(code:which(Mod), [abstract_code]) of
		{ok, {_, [{abstract_code, {raw_abstract_v1, Forms}}]}} ->
			lists:append([Ts || {attribute, _, export_type, Ts} <- Forms]);
		_ ->
			[]
	end.

%% README and the guide speak to a user about what Mustang does today: no
%% words about the project's issues, sessions or plans ("come next", "not
%% built yet", "once they land"), which meant something only to whoever
%% wrote them. Each hit is named with its file and line.
docs_speak_to_users(_) ->
	Root = mustang_test:root(),
	Files = [filename:join(Root, "README.md")]
		++ filelib:wildcard(filename:join(Root, "doc/guide/*.md")),
	Patterns = ["\\b[Ii]ssues? [0-9]+", "\\b[A-Z][a-z]+ issue\\b", "\\bthe [A-Za-z]+ issue\\b",
		"\\bcomes? next\\b", "\\bnot built yet\\b", "\\bonce (they|it) lands?\\b",
		"\\bthis session\\b", "\\(yet\\)", "\\bnot (done|implemented|written) yet\\b"],
	Hits = [io_lib:format("~s:~b: ~s", [rel(Root, F), N, Line])
		|| F <- Files,
			{N, Line} <- numbered_lines(F),
			lists:any(fun(P) -> re:run(Line, P, [unicode, {capture, none}]) =:= match end,
				Patterns)],
	case Hits of
		[] -> ok;
		_ -> ct:fail("text that speaks of the project's work instead of to a user:~n~s",
			[lists:join("\n", Hits)])
	end.

numbered_lines(File) ->
	{ok, Bin} = file:read_file(File),
	Lines = string:split(unicode:characters_to_list(Bin), "\n", all),
	lists:zip(lists:seq(1, length(Lines)), Lines).

%% README's module index (## Modules) has a row for every module of src/,
%% and names no module that is not there. Whoever adds a module adds its
%% row: the failure names it.
readme_module_index(_) ->
	Root = mustang_test:root(),
	Src = lists:sort([filename:basename(F, ".erl")
		|| F <- filelib:wildcard(filename:join(Root, "src/*.erl"))]),
	Indexed = readme_modules(readme_section(Root, "## Modules")),
	ct:log("~b modules in src/, ~b in README's index", [length(Src), length(Indexed)]),
	case {Src -- Indexed, Indexed -- Src} of
		{[], []} ->
			ok;
		{Missing, Unknown} ->
			ct:fail("README.md's module index (## Modules) and src/ disagree:~n"
				"  modules of src/ with no row: ~s~n  rows naming no module of src/: ~s",
				[names(Missing), names(Unknown)])
	end.

%% The modules named in the first column of a Markdown table.
readme_modules(Section) ->
	Rows = [R || R <- string:split(Section, "\n", all), string:prefix(R, "| `") =/= nomatch],
	lists:usort(lists:append([begin
		[_, First | _] = string:split(Row, "|", all),
		[M || [M] <- case re:run(First, "`([a-z0-9_]+)`", [global, {capture, all_but_first, list}]) of
			{match, Ms} -> Ms;
			nomatch -> []
		end]
	end || Row <- Rows])).

%% Every page of doc/guide/ and doc/internals/ is linked from README's guide
%% list (## Guide), and every such link there leads to a page that exists.
readme_guide_links(_) ->
	Root = mustang_test:root(),
	Pages = lists:sort([lists:nthtail(length(Root) + 1, F)
		|| F <- filelib:wildcard(filename:join(Root, "doc/{guide,internals}/*.md"))]),
	Section = readme_section(Root, "## Guide"),
	Links = case re:run(Section, "\\]\\((doc/(?:guide|internals)/[^)#]+\\.md)(#[^)]*)?\\)",
			[global, {capture, [1], list}]) of
		{match, Ms} -> lists:usort([L || [L] <- Ms]);
		nomatch -> []
	end,
	case {Pages -- Links, Links -- Pages} of
		{[], []} ->
			ok;
		{Unlinked, Broken} ->
			ct:fail("README.md's guide list (## Guide) and doc/guide/ disagree:~n"
				"  pages not linked: ~s~n  links to no page: ~s", [names(Unlinked), names(Broken)])
	end.

readme_section(Root, Heading) ->
	{ok, Bin} = file:read_file(filename:join(Root, "README.md")),
	Text = unicode:characters_to_list(Bin),
	case string:find(Text, "\n" ++ Heading ++ "\n") of
		nomatch ->
			ct:fail("README.md has no section ~s", [Heading]);
		Rest0 ->
			Rest = string:slice(Rest0, length(Heading) + 2),
			case string:find(Rest, "\n## ") of
				nomatch -> Rest;
				Next -> string:slice(Rest, 0, length(Rest) - length(Next))
			end
	end.

names([]) -> "none";
names(Names) -> lists:join(", ", Names).

%% Every block compiles; all failures are listed at once.
guide_code_blocks(Config) ->
	Root = mustang_test:root(),
	Files = filelib:wildcard(filename:join(Root, "doc/guide/*.md"))
		++ [filename:join(Root, "README.md")],
	Blocks = lists:append([code_blocks(F) || F <- Files]),
	ct:log("~b erlang blocks in ~b files", [length(Blocks), length(Files)]),
	true = length(Blocks) >= 10,
	Dir = filename:join(proplists:get_value(priv_dir, Config), "guide_blocks"),
	Results = [{B, check_block(B, Dir)} || B <- Blocks],
	_ = [ct:log("~s:~b: ~p~s", [rel(Root, F), L, Kind, warnings(W)])
		|| {{F, L, _}, {ok, Kind, W}} <- Results],
	case [[rel(Root, F), $:, integer_to_list(L), $\s, Errors]
			|| {{F, L, _}, {error, Errors}} <- Results] of
		[] -> ok;
		Failed -> ct:fail("code blocks that do not compile:~n~s", [lists:join("\n", Failed)])
	end.

%% The checker refuses what does not compile: a syntax error, a call to a
%% local function that does not exist, and an expression that is no function
%% definition; it takes a module, terms and fragments.
code_block_checker(Config) ->
	Dir = filename:join(proplists:get_value(priv_dir, Config), "checker_blocks"),
	Check = fun(Text) -> check_block({"check.md", 1, Text}, Dir) end,
	{ok, module, []} = Check("-module(m).\n-export([f/0]).\nf() -> ok.\n"),
	{ok, terms, []} = Check("%% sys.config\n[{kernel, []}].\n"),
	{ok, fragment, []} = Check("f() -> g(1).\ng(X) -> X.\n"),
	{error, _} = Check("f() -> ok\n"),
	{error, _} = Check("f() -> g(1).\n"),
	{error, _} = Check("mustang_router:compile([]).\n"),
	{error, _} = Check("-module(m).\n-export([f/0]).\nf() -> undefined_local().\n"),
	%% Errors are given at their line in the Markdown file.
	{error, Error} = check_block({"page.md", 40, "f() ->\n\tok\ng() -> ok.\n"}, Dir),
	{match, _} = re:run(Error, "page.md:4[0-9]:"),
	ok.

%% Every module of src/ is in the index, as a public module with a page or
%% as an internal one; the modules a user calls or implements are public;
%% every function a public module exports (as the compiler says, not the
%% generator) has its heading and its -spec on the page, or is named under
%% "Internal exports", and every callback of a behaviour its heading;
%% comments above a spec are carried. The generator's checks pass (--check:
%% every public function and callback has text, every type named is defined
%% on some page, no broken markup); what they find is listed on failure.
reference_manual(Config) ->
	Root = mustang_test:root(),
	Out = filename:join(proplists:get_value(priv_dir, Config), "reference"),
	case gen_docs(["--check", filename:join(Root, "src"), Out]) of
		{0, _} -> ok;
		{_, Problems} -> ct:fail("the reference manual has problems (make docs lists them):~n~s",
			[Problems])
	end,
	{ok, Index} = file:read_file(filename:join(Out, "index.md")),
	Mods = [list_to_atom(filename:basename(F, ".erl"))
		|| F <- filelib:wildcard(filename:join(Root, "src/*.erl"))],
	Public = [M || M <- Mods, filelib:is_regular(filename:join(Out, atom_to_list(M) ++ ".md"))],
	Internal = Mods -- Public,
	[] = [M || M <- Public, nomatch =:= string:find(Index, ["[", atom_to_list(M), "](", atom_to_list(M), ".md)"])],
	[] = [M || M <- Internal, nomatch =:= string:find(Index, ["| `", atom_to_list(M), "` |"])],
	[] = [mustang, mustang_req, mustang_router, mustang_constraints, mustang_middleware,
		mustang_handler, mustang_loop, mustang_rest, mustang_static, mustang_stream,
		mustang_stream_h, mustang_compress_h, mustang_decompress_h, mustang_metrics_h,
		mustang_tracer_h, mustang_access_log_h, mustang_websocket, mustang_opts] -- Public,
	Missing = lists:append([missing_entries(M, Out) || M <- Public]),
	ct:log("~b public modules, ~b internal", [length(Public), length(Internal)]),
	[] = Missing,
	{ok, Page} = file:read_file(filename:join(Out, "mustang.md")),
	{match, _} = re:run(Page, "### stop_listener/1\n\n```erlang\n-spec stop_listener\\(.*?```\n\n"
		"(Types: [^\n]*\n\n)?Graceful stop: stop accepting", [dotall]),
	%% Internal functions are not listed as API.
	{ok, Req} = file:read_file(filename:join(Out, "mustang_req.md")),
	nomatch = re:run(Req, "### (new/4|with_proxy_header/2)"),
	{match, _} = re:run(Req, "## Internal exports\n\n[^\n]*`new/4`"),
	ok.

%% The entries a public module's page lacks: {Module, function | callback, Name, Arity}.
missing_entries(Mod, Out) ->
	{ok, Page} = file:read_file(filename:join(Out, atom_to_list(Mod) ++ ".md")),
	{module, Mod} = code:ensure_loaded(Mod),
	Funs = [{function, F, A} || {F, A} <- Mod:module_info(exports),
		F =/= module_info, F =/= behaviour_info],
	Callbacks = case erlang:function_exported(Mod, behaviour_info, 1) of
		true -> [{callback, F, A} || {F, A} <- Mod:behaviour_info(callbacks)];
		false -> []
	end,
	[{Mod, Kind, F, A} || {Kind, F, A} <- Funs ++ Callbacks, not has_entry(Page, Kind, F, A)].

has_entry(Page, Kind, F, A) ->
	Name = io_lib:format("~w", [F]),
	Attr = case Kind of function -> "-spec "; callback -> "-callback " end,
	Entry = ["### ", Name, "/", integer_to_list(A), "\\b[^\\n]*\\n\\n```erlang\\n", Attr,
		Name, "\\("],
	Internal = ["## Internal exports\\n\\n[^\\n]*`", Name, "/", integer_to_list(A), "`"],
	re:run(Page, lists:flatten(Entry), [{capture, none}]) =:= match
		orelse (Kind =:= function andalso
			re:run(Page, lists:flatten(Internal), [{capture, none}]) =:= match).

%% A module the generator has never seen: its @doc comments, specs, types
%% and callbacks make its page; it is public since it is not listed internal.
reference_new_module(Config) ->
	Dir = proplists:get_value(priv_dir, Config),
	Src = filename:join(Dir, "new_src"),
	Out = filename:join(Dir, "new_reference"),
	ok = filelib:ensure_dir(Src ++ "/"),
	ok = file:write_file(filename:join(Src, "mustang_new.erl"), <<
		"%% @doc A module written after the generator.\n"
		"%%\n"
		"%%   an indented line\n"
		"-module(mustang_new).\n"
		"-export([hello/1, bye/0]).\n"
		"%% A name, as given.\n"
		"-type name() :: binary().\n"
		"-export_type([name/0]).\n"
		"%% Greets.\n"
		"-callback greet(name()) -> ok.\n\n"
		"%% Section comment, not attached.\n\n"
		"%% @doc Says hello\n"
		"%% to Name.\n"
		"-spec hello(name()) -> {hello, name()}.\n"
		"hello(Name) -> {hello, Name}.\n\n"
		"-spec bye() -> ok.\n"
		"%% Bye, commented below its spec.\n"
		"bye() -> ok.\n">>),
	{0, _} = gen_docs(["--check", Src, Out]),
	{ok, Page} = file:read_file(filename:join(Out, "mustang_new.md")),
	ct:log("~s", [Page]),
	{match, _} = re:run(Page, "^# mustang_new\n\nA module written after the generator.\n\n"
		"```text\nan indented line\n```\n"),
	{match, _} = re:run(Page, "### hello/1\n\n```erlang\n-spec hello\\(name\\(\\)\\) -> \\{hello, name\\(\\)\\}.\n"
		"```\n\nTypes: \\[`name\\(\\)`\\]\\(#type-name\\).\n\nSays hello\nto Name.\n"),
	{match, _} = re:run(Page, "### bye/0\n\n```erlang\n-spec bye\\(\\) -> ok.\n```\n\nBye, commented below its spec.\n"),
	nomatch = re:run(Page, "Section comment"),
	{match, _} = re:run(Page, "## Types\n\n### type name\\(\\)\n\n```erlang\n-type name\\(\\) :: binary\\(\\).\n"
		"```\n\nA name, as given.\n"),
	{match, _} = re:run(Page, "## Callbacks\n\n### greet/1\n\n```erlang\n-callback greet\\(name\\(\\)\\) -> ok.\n"
		"```\n\nTypes: \\[`name\\(\\)`\\]\\(#type-name\\).\n\nGreets.\n"),
	{ok, Index} = file:read_file(filename:join(Out, "index.md")),
	{match, _} = re:run(Index, "\\| \\[mustang_new\\]\\(mustang_new.md\\) \\| A module written after the generator. \\|"),
	ok.

%% Runs the generator: {ExitStatus, Output}.
gen_docs(Args) ->
	Script = filename:join(mustang_test:root(), "scripts/gen_docs.escript"),
	{Status, Output} = mustang_test:run(os:find_executable("escript"), [Script | Args], 60000),
	ct:log("gen_docs ~s: exit ~p~n~s", [lists:join(" ", Args), Status, Output]),
	{Status, Output}.

%% What --check refuses, each named with its file and line: a public
%% function or a callback without text, a function without -spec, a type
%% defined nowhere (a type of no module, one a public module does not
%% export, one of a module that does not exist), edoc-style quotes; an
%% internal function (@private) is not listed and needs no text; a clean
%% module passes.
reference_checks(Config) ->
	Dir = proplists:get_value(priv_dir, Config),
	Src = filename:join(Dir, "checks_src"),
	ok = filelib:ensure_dir(Src ++ "/"),
	Write = fun(Name, Text) -> ok = file:write_file(filename:join(Src, Name), Text) end,
	Write("mustang_clean.erl", <<
		"%% A clean module.\n"
		"-module(mustang_clean).\n"
		"-export([f/1, internal/0]).\n"
		"-type t() :: {t, mustang_clean:u()}.\n"
		"-type u() :: atom().\n"
		"-export_type([t/0, u/0]).\n\n"
		"%% Returns `X` as a `t()`: `{t, X}`, an Erlang term with a `'quoted atom'`.\n"
		"-spec f(u()) -> t() | inet:port_number().\n"
		"f(X) -> {t, X}.\n\n"
		"%% @private Only Mustang calls it.\n"
		"-spec internal() -> ok.\n"
		"internal() -> ok.\n">>),
	{0, _} = gen_docs(["--check", Src, filename:join(Dir, "checks_clean")]),
	{ok, Clean} = file:read_file(filename:join([Dir, "checks_clean", "mustang_clean.md"])),
	{match, _} = re:run(Clean, "Types: \\[`t\\(\\)`\\]\\(#type-t\\), \\[`u\\(\\)`\\]\\(#type-u\\), "
		"\\[`inet:port_number\\(\\)`\\]\\(https://www.erlang.org/doc/man/inet.html#type-port_number\\)."),
	nomatch = re:run(Clean, "### internal/0"),
	{match, _} = re:run(Clean, "## Internal exports\n\n[^\n]*`internal/0`"),
	Write("mustang_bad.erl", <<
		"%% A module with every problem; edoc's `quote' in its head.\n"
		"-module(mustang_bad).\n"
		"-export([no_text/0, no_spec/0, dangling/1, quoted/0]).\n"
		"-callback cb() -> ok.\n\n"
		"-spec no_text() -> ok.\n"
		"no_text() -> ok.\n\n"
		"%% Has no spec.\n"
		"no_spec() -> ok.\n\n"
		"%% Names types that are nowhere.\n"
		"-spec dangling(mustang_clean:hidden()) -> no_such_module:t() | mustang_clean:v().\n"
		"dangling(_) -> ok.\n\n"
		"%% Uses `a' and `b' the edoc way.\n"
		"-spec quoted() -> ok.\n"
		"quoted() -> ok.\n">>),
	Write("mustang_clean.erl", <<
		"%% A clean module.\n"
		"-module(mustang_clean).\n"
		"-type hidden() :: ok.\n">>),
	{1, Out} = gen_docs(["--check", Src, filename:join(Dir, "checks_bad")]),
	_ = [{match, _} = re:run(Out, Re, [multiline]) || Re <- [
		"mustang_bad.erl:1: odd number of backquotes",
		"mustang_bad.erl:6: mustang_bad:no_text/0 has no text",
		"mustang_bad.erl:[0-9]+: mustang_bad:no_spec/0 has no -spec",
		"mustang_bad.erl:13: type mustang_clean:hidden/0 is not exported by mustang_clean",
		"mustang_bad.erl:13: type no_such_module:t/0: no module no_such_module",
		"mustang_bad.erl:13: type mustang_clean:v/0 is not defined",
		"mustang_bad.erl:16: a code span with an odd number of single quotes",
		"mustang_bad.erl:4: callback mustang_bad:cb/0 has no text"]],
	ok.

%% The ```erlang blocks of a Markdown file: {File, Line of the first line of
%% code, Text}. An indented fence (in a list) has its indentation removed
%% from the lines of the block.
code_blocks(File) ->
	{ok, Bin} = file:read_file(File),
	Lines = string:split(unicode:characters_to_list(Bin), "\n", all),
	code_blocks(File, lists:zip(lists:seq(1, length(Lines)), Lines), []).

code_blocks(_, [], Acc) ->
	lists:reverse(Acc);
code_blocks(File, [{N, Line} | Rest], Acc) ->
	case re:run(Line, "^([ \t]*)```erlang[ \t]*$", [unicode, {capture, [1], list}]) of
		{match, [Indent]} ->
			{Code, Rest1} = lists:splitwith(fun({_, L}) -> not is_fence(L) end, Rest),
			Text = [[strip_indent(Indent, L), $\n] || {_, L} <- Code],
			code_blocks(File, drop_fence(Rest1), [{File, N + 1, lists:flatten(Text)} | Acc]);
		nomatch ->
			code_blocks(File, Rest, Acc)
	end.

is_fence(Line) ->
	re:run(Line, "^[ \t]*```[ \t]*$", [unicode, {capture, none}]) =:= match.

drop_fence([]) -> [];
drop_fence([_ | Rest]) -> Rest.

strip_indent(Indent, Line) ->
	case lists:prefix(Indent, Line) of
		true -> lists:nthtail(length(Indent), Line);
		false -> string:trim(Line, leading)
	end.

%% {ok, module | terms | fragment, Warnings} or {error, Text}.
check_block({File, Line, Text}, Dir) ->
	case erl_scan:string(Text, Line) of
		{ok, Tokens, _} ->
			check_forms(File, Line, Text, split_forms(Tokens), Dir);
		{error, {ErrLine, Mod, Reason}, _} ->
			{error, io_lib:format("~s:~p: ~s", [File, ErrLine, Mod:format_error(Reason)])}
	end.

check_forms(File, Line, Text, [[{'-', _}, {atom, _, module}, {'(', _}, {atom, _, Mod} | _] | _], Dir) ->
	compile_text(File, module, Mod, [file_attr(File, Line), Text], Dir);
check_forms(File, Line, Text, Forms, Dir) ->
	case Forms =/= [] andalso lists:all(fun is_term/1, Forms) of
		true ->
			{ok, terms, []};
		false ->
			Mod = list_to_atom("guide_block_" ++ integer_to_list(erlang:unique_integer([positive]))),
			Head = io_lib:format("-module(~s).~n-compile([export_all, nowarn_export_all]).~n",
				[Mod]),
			compile_text(File, fragment, Mod, [Head, file_attr(File, Line), Text], Dir)
	end.

%% epp numbers the line after -file(File, N) N + 1.
file_attr(File, Line) ->
	io_lib:format("-file(~p, ~b).~n", [File, Line - 1]).

%% Forms as token lists, each ending with its dot (a block's leading
%% comments are not tokens).
split_forms(Tokens) ->
	split_forms(Tokens, [], []).

split_forms([], [], Acc) -> lists:reverse(Acc);
split_forms([], Form, Acc) -> lists:reverse([lists:reverse(Form) | Acc]);
split_forms([Dot = {dot, _} | Rest], Form, Acc) ->
	split_forms(Rest, [], [lists:reverse([Dot | Form]) | Acc]);
split_forms([Token | Rest], Form, Acc) ->
	split_forms(Rest, [Token | Form], Acc).

is_term(Form) ->
	element(1, erl_parse:parse_term(Form)) =:= ok.

compile_text(File, Kind, Mod, Text, Dir0) ->
	Dir = filename:join(Dir0, integer_to_list(erlang:unique_integer([positive]))),
	Src = filename:join(Dir, atom_to_list(Mod) ++ ".erl"),
	ok = filelib:ensure_dir(Src),
	ok = file:write_file(Src, unicode:characters_to_binary(Text)),
	Include = filename:join(code:lib_dir(mustang), "include"),
	case compile:file(Src, [binary, return_errors, return_warnings, {i, Include}]) of
		{ok, Mod, _, Warnings} ->
			{ok, Kind, Warnings};
		{ok, Other, _, _} ->
			{error, io_lib:format("~s: module ~s compiled from a file named ~s.erl",
				[File, Other, Mod])};
		{error, Errors, _} ->
			{error, format_errors(Errors)}
	end.

format_errors(Errors) ->
	[io_lib:format("~s:~s: ~s~n", [F, location(Loc), M:format_error(E)])
		|| {F, Es} <- Errors, {Loc, M, E} <- Es].

location({Line, Col}) -> io_lib:format("~b:~b", [Line, Col]);
location(Line) when is_integer(Line) -> integer_to_list(Line);
location(none) -> "".

warnings([]) -> "";
warnings(Warnings) -> [" (warnings: ", format_errors(Warnings), ")"].

rel(Root, File) ->
	case lists:prefix(Root ++ "/", File) of
		true -> lists:nthtail(length(Root) + 1, File);
		false -> File
	end.
