#!/usr/bin/env escript
%%! -noshell
%% The reference manual: one Markdown page per public module of src/, made
%% from its -spec, -type and -callback attributes and the comments above
%% them, plus an index (make docs; doc/reference/ by default):
%%
%%   escript scripts/gen_docs.escript [SrcDir [OutDir]]
%%
%% Which modules are public: every module of src/ except those named in
%% internal/0 below (supervisors, acceptors, connection processes, the
%% protocol codecs and their helpers). A module that is not in that list,
%% such as a new one, is public: it gets a page. Internal modules get no
%% page; the index lists them with the first sentence of their head comment.
%%
%% What a page holds: the module's head comment (the comment lines before
%% -module), its behaviours, every exported function in the order of the
%% -export attributes with its -spec as written (macros expanded) and the
%% comment just above the -spec (or just above the function when the spec
%% comes first; no blank line between), its exported types, and its
%% callbacks when it defines a behaviour. Comments are Markdown; a
%% `%% @doc' marker at the start of a comment is dropped, as are `@private'
%% and `@end' lines, and lines indented by two spaces or more (tables,
%% code) are kept as they are in a text block. OTP 25 has no -doc
%% attributes for user code, hence comments.
-mode(compile).

main(Args) ->
	{Src, Out} = case Args of
		[] -> {"src", "doc/reference"};
		[S] -> {S, "doc/reference"};
		[S, O] -> {S, O};
		_ -> usage()
	end,
	Files = lists:sort(filelib:wildcard(filename:join(Src, "*.erl"))),
	Files =/= [] orelse fail("no .erl file in ~s", [Src]),
	ok = filelib:ensure_dir(filename:join(Out, "index.md")),
	Mods = [module_doc(F, Src) || F <- Files],
	{Public, Internal} = lists:partition(fun(#{internal := I}) -> not I end, Mods),
	_ = [ok = file:write_file(filename:join(Out, atom_to_list(M) ++ ".md"), page(Mod, Src))
		|| Mod = #{name := M} <- Public],
	ok = file:write_file(filename:join(Out, "index.md"), index(Public, Internal)),
	io:format("~s: ~b module pages, ~b internal modules listed in index.md~n",
		[Out, length(Public), length(Internal)]).

usage() ->
	fail("usage: gen_docs.escript [SrcDir [OutDir]]", []).

fail(Format, Args) ->
	io:format(standard_error, "gen_docs: " ++ Format ++ "~n", Args),
	halt(1).

%% Modules a user neither calls nor implements.
internal() ->
	[mustang_acceptor, mustang_acceptors_sup, mustang_app, mustang_clock,
		mustang_conn, mustang_conn_chores, mustang_conn_limit, mustang_conneg, mustang_conns_sup,
		mustang_dynbuf, mustang_error, mustang_hpack, mustang_hpack_huffman,
		mustang_http1, mustang_http1_codec, mustang_http1_resp, mustang_http1_stream,
		mustang_http2, mustang_http2_frame, mustang_http2_headers, mustang_http2_machine,
		mustang_http2_machine_send, mustang_http3_frame, mustang_http3_machine,
		mustang_http3_machine_stream, mustang_http_hd_accept, mustang_http_hd_grammar,
		mustang_inline, mustang_listener_sup, mustang_listeners_sup, mustang_log_limit,
		mustang_pattern, mustang_qpack, mustang_qpack_encoder, mustang_qpack_static,
		mustang_qpack_wire, mustang_range, mustang_registry, mustang_sup, mustang_tcp, mustang_tls,
		mustang_transport, mustang_uri, mustang_utf8, mustang_ws_deflate, mustang_ws_frame].

%% Reading a module.

module_doc(File, Src) ->
	Forms = case epp:parse_file(File, [{includes, [Src, filename:join(Src, "../include")]}]) of
		{ok, Fs} -> Fs;
		{error, Reason} -> fail("~s: ~p", [File, Reason])
	end,
	[Name] = [M || {attribute, _, module, M} <- Forms],
	Comments = comments(File),
	ModLine = hd([line(F) || F = {attribute, _, module, _} <- Forms]),
	Exports = lists:append([Fs || {attribute, _, export, Fs} <- Forms]),
	Specs = maps:from_list([{FA, F} || F = {attribute, _, spec, {FA, _}} <- Forms]),
	FunLines = maps:from_list([{{N, A}, line(F)} || F = {function, _, N, A, _} <- Forms]),
	ExportTypes = lists:append([Ts || {attribute, _, export_type, Ts} <- Forms]),
	Types = [F || F = {attribute, _, T, {N, _, Vs}} <- Forms,
		T =:= type orelse T =:= opaque, lists:member({N, length(Vs)}, ExportTypes)],
	Optional = lists:append([Cs || {attribute, _, optional_callbacks, Cs} <- Forms]),
	Callbacks = [{FA, F, lists:member(FA, Optional), comment_above(line(F), Comments)}
		|| F = {attribute, _, callback, {FA, _}} <- Forms],
	Functions = [function_doc(FA, Specs, FunLines, Comments) || FA <- Exports,
		FA =/= {module_info, 0}, FA =/= {module_info, 1}],
	#{name => Name, file => File,
		internal => lists:member(Name, internal()),
		head => head_comment(ModLine, Comments),
		behaviours => [B || {attribute, _, Tag, B} <- Forms, Tag =:= behaviour orelse Tag =:= behavior],
		functions => Functions, types => Types, callbacks => Callbacks}.

function_doc(FA, Specs, FunLines, Comments) ->
	Spec = maps:get(FA, Specs, undefined),
	FunLine = maps:get(FA, FunLines, undefined),
	Above = case Spec of
		undefined -> [];
		_ -> comment_above(line(Spec), Comments)
	end,
	Comment = case {Above, FunLine} of
		{[], undefined} -> [];
		{[], _} -> comment_above(FunLine, Comments);
		_ -> Above
	end,
	#{fa => FA, spec => Spec, comment => Comment}.

line(Form) ->
	erl_anno:line(element(2, Form)).

%% Top-level comment blocks, by the line they end on: #{End => {Start, Lines}}.
comments(File) ->
	maps:from_list([{Start + length(Lines) - 1, {Start, Lines}}
		|| {Start, 1, _, Lines} <- erl_comment_scan:file(File)]).

comment_above(Line, Comments) ->
	case Comments of
		#{(Line - 1) := {_, Lines}} -> clean(Lines);
		_ -> []
	end.

%% The comment blocks before -module, joined.
head_comment(ModLine, Comments) ->
	Blocks = lists:sort([B || {End, B} <- maps:to_list(Comments), End < ModLine]),
	lists:join([""], [clean(Lines) || {_, Lines} <- Blocks]).

%% Comment lines without their %%, the first space and the @doc markers.
clean(Lines) ->
	Text = [strip(L) || L <- Lines],
	[L || L <- [drop_tag(L) || L <- Text], L =/= drop].

strip([$% | Rest]) -> strip(Rest);
strip([$\s | Rest]) -> Rest;
strip(Rest) -> Rest.

drop_tag("@doc " ++ Rest) -> Rest;
drop_tag("@doc") -> "";
drop_tag("@private" ++ _) -> drop;
drop_tag("@end" ++ _) -> drop;
drop_tag(Line) -> Line.

%% Writing Markdown.

page(#{name := Name, file := File, head := Head, behaviours := Behaviours,
		functions := Functions, types := Types, callbacks := Callbacks}, Src) ->
	[
		"# ", atom_to_list(Name), "\n\n",
		markdown(lists:append(Head)),
		"Source: [", rel_src(File, Src), "](../../", rel_src(File, Src), ")",
		case Behaviours of
			[] -> "";
			_ -> ["; implements ", lists:join(", ", [code(B) || B <- Behaviours])]
		end,
		". Index: [all modules](index.md).\n\n",
		case Functions of
			[] -> "";
			_ -> [
				"## Functions\n\n",
				lists:join(", ", [["[", fa(FA), "](#", anchor(FA), ")"] || #{fa := FA} <- Functions]),
				"\n\n",
				[function_md(F) || F <- Functions]
			]
		end,
		case Types of
			[] -> "";
			_ -> ["## Types\n\n```erlang\n", [pp(T) || T <- Types], "```\n\n"]
		end,
		case Callbacks of
			[] -> "";
			_ -> ["## Callbacks\n\n", [callback_md(C) || C <- Callbacks]]
		end
	].

function_md(#{fa := FA, spec := Spec, comment := Comment}) ->
	[
		"### ", fa(FA), "\n\n",
		case Spec of
			undefined -> "No `-spec`.\n\n";
			_ -> ["```erlang\n", pp(Spec), "```\n\n"]
		end,
		markdown(Comment)
	].

callback_md({FA, Form, Optional, Comment}) ->
	[
		"### ", fa(FA), case Optional of true -> " (optional)"; false -> "" end, "\n\n",
		"```erlang\n", pp(Form), "```\n\n",
		markdown(Comment)
	].

index(Public, Internal) ->
	[
		"# Reference manual\n\n",
		"Generated by `make docs` (scripts/gen_docs.escript) from the `-spec`s and\n"
		"comments of `src/`; do not edit. The [guide](../guide/) explains how the\n"
		"pieces fit together.\n\n",
		"| module | summary |\n|---|---|\n",
		[["| [", atom_to_list(N), "](", atom_to_list(N), ".md) | ", summary(H), " |\n"]
			|| #{name := N, head := H} <- Public],
		"\n## Internal modules\n\n"
		"Modules a user neither calls nor implements; no page (read their source).\n\n",
		"| module | summary |\n|---|---|\n",
		[["| `", atom_to_list(N), "` | ", summary(H), " |\n"] || #{name := N, head := H} <- Internal]
	].

%% The first sentence of the head comment, on one line.
summary(Head) ->
	Para = lists:takewhile(fun(L) -> string:trim(L) =/= "" end, lists:append(Head)),
	Text = string:trim(lists:join(" ", [string:trim(L) || L <- Para])),
	Sentence = case re:run(Text, "^(.*?[.])(\\s|$)", [unicode, {capture, [1], list}]) of
		{match, [S]} -> S;
		nomatch -> Text
	end,
	escape_table(Sentence).

escape_table(Text) ->
	lists:flatten(string:replace(Text, "|", "\\|", all)).

%% Comment lines to Markdown: paragraphs as they are; lines indented by two
%% spaces or a tab in a text block.
markdown([]) ->
	"";
markdown(Lines) ->
	[[Chunk, "\n"] || Chunk <- chunks(Lines)].

chunks([]) ->
	[];
chunks(Lines = [L | _]) ->
	case {string:trim(L), is_pre(L)} of
		{"", _} ->
			chunks(tl(Lines));
		{_, true} ->
			{Pre, Rest} = lists:splitwith(fun(X) -> is_pre(X) orelse string:trim(X) =:= "" end, Lines),
			Pre1 = lists:reverse(lists:dropwhile(fun(X) -> string:trim(X) =:= "" end,
				lists:reverse(Pre))),
			[["```text\n", [[X, "\n"] || X <- Pre1], "```\n"] | chunks(Rest)];
		{_, false} ->
			{Para, Rest} = lists:splitwith(fun(X) -> string:trim(X) =/= "" andalso not is_pre(X) end,
				Lines),
			[[[X, "\n"] || X <- Para] | chunks(Rest)]
	end.

is_pre("  " ++ _) -> true;
is_pre("\t" ++ _) -> true;
is_pre(_) -> false.

pp(Form) ->
	[erl_pp:attribute(Form, [{encoding, utf8}])].

fa({F, A}) ->
	io_lib:format("~w/~b", [F, A]).

%% GitHub's heading ids: lower case, punctuation but - and _ dropped.
anchor({F, A}) ->
	[C || C <- string:lowercase(lists:flatten(fa({F, A}))),
		(C >= $a andalso C =< $z) orelse (C >= $0 andalso C =< $9) orelse C =:= $_ orelse C =:= $-].

code(Atom) ->
	["`", atom_to_list(Atom), "`"].

rel_src(File, Src) ->
	filename:join("src", lists:nthtail(length(filename:split(Src)), filename:split(File))).
