%% The documentation cannot rot: every ```erlang code block of the guide
%% (doc/guide/*.md) and of README.md compiles.
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
	[guide_code_blocks, code_block_checker].

%% Every block compiles; all failures are listed at once.
guide_code_blocks(Config) ->
	Root = mustang_example:root(),
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
