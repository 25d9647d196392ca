#!/usr/bin/env escript
%%! -noshell
%% The reference manual: one Markdown page per public module of src/, made
%% from its -spec, -type and -callback attributes and the comments above
%% them, plus an index (make docs; doc/reference/ by default):
%%
%%   escript scripts/gen_docs.escript [--check] [SrcDir [OutDir]]
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
%% comes first; no blank line between), the types its specs and callbacks
%% name (its exported types, the local types they use, and the types of
%% internal modules they use, each with the comment above it; an opaque
%% type without its representation), and its
%% callbacks when it defines a behaviour. Each spec is followed by links to
%% the pages that define the types it names (OTP's types link to
%% erlang.org). Comments are Markdown: code in `backquotes`; a `%% @doc`
%% marker at the start of a comment is dropped, as are `@end` lines, and
%% lines indented by two spaces or more are kept as they are in a code
%% block, without their common indentation: an Erlang block when they are
%% indented by four spaces or more (an example), a text block otherwise (a
%% table, a list). OTP 25 has no -doc attributes for user code, hence
%% comments.
%%
%% Internal functions: an exported function whose comment starts with
%% `@private` (the edoc marker) is exported for Mustang's own modules only;
%% its page names it under "Internal exports", without its spec, and
%% nothing checks its text.
%%
%% What is checked (a problem is printed as File:Line: text on stderr; with
%% --check the script then exits with status 1, after writing the pages):
%% - a public function with no text, or no -spec;
%% - a callback with no text;
%% - a type named by a spec, callback or shown type that is defined on no
%%   page: not a built-in type, not a type of the module or of an internal
%%   module (shown on the page), not an exported type of a public module,
%%   not a type of an OTP module;
%% - markup that breaks: an odd number of backquotes in a paragraph (an
%%   edoc-style `quote' opens a code span that runs on), or a code span with
%%   an odd number of single quotes (`a' and `b').
-mode(compile).

main(Args) ->
	{Check, Rest} = case Args of
		["--check" | R] -> {true, R};
		R -> {false, R}
	end,
	{Src, Out} = case Rest of
		[] -> {"src", "doc/reference"};
		[S] -> {S, "doc/reference"};
		[S, O] -> {S, O};
		_ -> usage()
	end,
	Files = lists:sort(filelib:wildcard(filename:join(Src, "*.erl"))),
	Files =/= [] orelse fail("no .erl file in ~s", [Src]),
	ok = filelib:ensure_dir(filename:join(Out, "index.md")),
	Mods = [module_doc(F, Src) || F <- Files],
	ByName = maps:from_list([{N, M} || M = #{name := N} <- Mods]),
	{Public, Internal} = lists:partition(fun(#{internal := I}) -> not I end, Mods),
	Pages = [{Mod, page(Mod, Src, ByName)} || Mod <- Public],
	_ = [ok = file:write_file(filename:join(Out, atom_to_list(M) ++ ".md"), Text)
		|| {#{name := M}, {Text, _}} <- Pages],
	ok = file:write_file(filename:join(Out, "index.md"), index(Public, Internal)),
	Problems = lists:append([Ps || {_, {_, Ps}} <- Pages]),
	_ = [io:format(standard_error, "~s:~b: ~s~n", [F, L, T]) || {F, L, T} <- lists:sort(Problems)],
	io:format("~s: ~b module pages, ~b internal modules listed in index.md, ~b problems~n",
		[Out, length(Public), length(Internal), length(Problems)]),
	_ = Problems =/= [] andalso io:format(standard_error, "gen_docs: a module that applications "
		"neither call nor implement goes in internal() of scripts/gen_docs.escript; a function "
		"only Mustang calls gets `%% @private` above its -spec~n", []),
	case Check andalso Problems =/= [] of
		true -> halt(1);
		false -> ok
	end.

usage() ->
	fail("usage: gen_docs.escript [--check] [SrcDir [OutDir]]", []).

fail(Format, Args) ->
	io:format(standard_error, "gen_docs: " ++ Format ++ "~n", Args),
	halt(2).

%% Modules a user neither calls nor implements.
internal() ->
	[mustang_acceptor, mustang_acceptors_sup, mustang_app, mustang_clock, mustang_conn,
		mustang_conn_chores, mustang_conn_limit, mustang_conneg, mustang_conns_sup,
		mustang_dynbuf, mustang_error, mustang_hpack, mustang_hpack_huffman, mustang_http1,
		mustang_http1_codec, mustang_http1_resp, mustang_http1_stream, mustang_http2,
		mustang_http2_frame, mustang_http2_headers, mustang_http2_machine,
		mustang_http2_machine_send, mustang_http3, mustang_http3_frame, mustang_http3_machine,
		mustang_http3_machine_stream, mustang_http_hd_accept, mustang_http_hd_grammar,
		mustang_inline, mustang_listener_sup, mustang_listeners_sup, mustang_log_limit,
		mustang_pattern, mustang_qpack, mustang_qpack_encoder, mustang_qpack_static,
		mustang_qpack_wire, mustang_quic, mustang_quic_conn, mustang_quic_endpoint,
		mustang_range, mustang_registry, mustang_static_path, mustang_stream_conn, mustang_sup,
		mustang_tcp, mustang_tls, mustang_transport, mustang_uri, mustang_utf8,
		mustang_ws_deflate, mustang_ws_frame].

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
	Types = maps:from_list([{{N, length(Vs)}, {F, comment_above(line(F), Comments)}}
		|| F = {attribute, _, T, {N, _, Vs}} <- Forms, T =:= type orelse T =:= opaque]),
	Records = records(Forms, File, #{}),
	Optional = lists:append([Cs || {attribute, _, optional_callbacks, Cs} <- Forms]),
	Callbacks = [{FA, F, lists:member(FA, Optional), comment_above(line(F), Comments)}
		|| F = {attribute, _, callback, {FA, _}} <- Forms],
	Functions = [function_doc(FA, Specs, FunLines, Comments) || FA <- Exports,
		FA =/= {module_info, 0}, FA =/= {module_info, 1}],
	#{name => Name, file => File,
		internal => lists:member(Name, internal()),
		head => head_comment(ModLine, Comments),
		behaviours => [B || {attribute, _, Tag, B} <- Forms, Tag =:= behaviour orelse Tag =:= behavior],
		functions => Functions, types => Types, export_types => ExportTypes,
		records => Records, callbacks => Callbacks}.

%% The records a module knows: #{Name => the file that defines it}.
records([], _, Acc) ->
	Acc;
records([{attribute, _, file, {File, _}} | Forms], _, Acc) ->
	records(Forms, File, Acc);
records([{attribute, _, record, {Name, _}} | Forms], File, Acc) ->
	records(Forms, File, Acc#{Name => File});
records([_ | Forms], File, Acc) ->
	records(Forms, File, Acc).

function_doc(FA, Specs, FunLines, Comments) ->
	Spec = maps:get(FA, Specs, undefined),
	FunLine = maps:get(FA, FunLines, undefined),
	Above = case Spec of
		undefined -> [];
		_ -> comment_above(line(Spec), Comments)
	end,
	{CommentLine, Comment} = case {Above, FunLine} of
		{[], undefined} -> {undefined, []};
		{[], _} -> {FunLine, comment_above(FunLine, Comments)};
		_ -> {line(Spec), Above}
	end,
	Private = case Comment of
		[{_, "@private" ++ _} | _] -> true;
		_ -> false
	end,
	#{fa => FA, spec => Spec, comment => Comment, private => Private,
		line => case {Spec, FunLine} of
			{undefined, undefined} -> CommentLine;
			{undefined, _} -> FunLine;
			_ -> line(Spec)
		end}.

line(Form) ->
	erl_anno:line(element(2, Form)).

%% Top-level comment blocks, by the line they end on: #{End => {Start, Lines}}.
comments(File) ->
	maps:from_list([{Start + length(Lines) - 1, {Start, Lines}}
		|| {Start, 1, _, Lines} <- erl_comment_scan:file(File)]).

%% The comment just above Line: [{LineNumber, Text}], cleaned.
comment_above(Line, Comments) ->
	case Comments of
		#{(Line - 1) := {Start, Lines}} -> clean(Start, Lines);
		_ -> []
	end.

%% The comment blocks before -module, joined.
head_comment(ModLine, Comments) ->
	Blocks = lists:sort([B || {End, B} <- maps:to_list(Comments), End < ModLine]),
	[clean(Start, Lines) || {Start, Lines} <- Blocks].

head_lines(Head) ->
	lists:join([{0, ""}], Head).

%% Comment lines without their %%, the first space and the @doc and @end
%% markers, numbered.
clean(Start, Lines) ->
	Numbered = lists:zip(lists:seq(Start, Start + length(Lines) - 1), [strip(L) || L <- Lines]),
	[{N, L2} || {N, L} <- Numbered, (L2 = drop_tag(L)) =/= drop].

strip([$% | Rest]) -> strip(Rest);
strip([$\s | Rest]) -> Rest;
strip(Rest) -> Rest.

drop_tag("@doc " ++ Rest) -> Rest;
drop_tag("@doc") -> "";
drop_tag("@end" ++ _) -> drop;
drop_tag(Line) -> Line.

text(Comment) ->
	[L || {_, L} <- Comment].

%% The text of a function's comment without its @private marker.
doc_text(#{private := true, comment := [{N, "@private" ++ Rest} | More]}) ->
	text([{N, string:trim(Rest, leading)} | More]);
doc_text(#{comment := Comment}) ->
	text(Comment).

has_text(Lines) ->
	lists:any(fun(L) -> string:trim(L) =/= "" end, Lines).

%% Writing Markdown: {Page, Problems}.

page(Mod = #{name := Name, file := File, head := Head, behaviours := Behaviours,
		functions := Functions0, callbacks := Callbacks}, Src, ByName) ->
	Functions = [F || F = #{private := false} <- Functions0],
	Private = [F || F = #{private := true} <- Functions0],
	{Shown, TypeProblems} = shown_types(Mod, ByName),
	Links = fun(InMod, Form) -> type_links(InMod, Form, Name, ByName) end,
	Text = [
		"# ", atom_to_list(Name), "\n\n",
		markdown(text(lists:append(head_lines(Head)))),
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
				[function_md(F, Name, Links) || F <- Functions]
			]
		end,
		case Callbacks of
			[] -> "";
			_ -> ["## Callbacks\n\n", [callback_md(C, Name, Links) || C <- Callbacks]]
		end,
		case Shown of
			[] -> "";
			_ -> ["## Types\n\n", [type_md(T, Name, ByName, Links) || T <- Shown]]
		end,
		case Private of
			[] -> "";
			_ -> ["## Internal exports\n\n"
				"Exported for Mustang's own modules, not for applications (they may change "
				"without notice): ",
				lists:join(", ", [["`", fa(FA), "`"] || #{fa := FA} <- Private]), ".\n"]
		end
	],
	Problems = TypeProblems
		++ markup_problems(File, lists:append(head_lines(Head)))
		++ lists:append([function_problems(File, Name, F) || F <- Functions])
		++ lists:append([callback_problems(File, Name, C) || C <- Callbacks])
		++ lists:append([type_comment_problems(T, ByName) || T <- Shown]),
	{Text, Problems}.

function_md(F = #{fa := FA, spec := Spec}, Page, Links) ->
	[
		"### ", fa(FA), "\n\n",
		case Spec of
			undefined -> "No `-spec`.\n\n";
			_ -> ["```erlang\n", pp(Spec), "```\n\n", Links(Page, Spec)]
		end,
		markdown(doc_text(F))
	].

callback_md({FA, Form, Optional, Comment}, Page, Links) ->
	[
		"### ", fa(FA), case Optional of true -> " (optional)"; false -> "" end, "\n\n",
		"```erlang\n", pp(Form), "```\n\n",
		Links(Page, Form),
		markdown(text(Comment))
	].

%% A type shown on the page of Page: its own, or one of an internal module
%% (titled with its module's name).
type_md({Mod, {record, R}}, _, ByName, _) ->
	#{records := Records, file := Source} = maps:get(Mod, ByName),
	Text = case maps:get(R, Records) of
		Source ->
			["The internal state of `", atom_to_list(Mod), "`, a record of its source; its fields "
				"are not part of the API."];
		File ->
			case string:split(File, "/include/", trailing) of
				[Before, Header] ->
					["A record of OTP's `", filename:basename(Before), "/include/", Header, "`."];
				[_] ->
					["A record defined in `", rel_path(File), "`; its fields are not part of "
						"the API."]
			end
	end,
	["### ", record_title(R), "\n\n", Text, "\n\n"];
type_md({Mod, {N, A}}, Page, ByName, Links) ->
	{Form, Comment} = maps:get({N, A}, maps:get(types, maps:get(Mod, ByName))),
	[
		"### ", type_title(Page, Mod, N, A), "\n\n",
		"```erlang\n", pp_type(Form), "```\n\n",
		case Mod of
			Page -> "";
			_ -> ["Defined in the internal module `", atom_to_list(Mod), "`.\n\n"]
		end,
		case Form of
			{attribute, _, opaque, _} -> "";
			_ -> Links(Mod, Form)
		end,
		markdown(text(Comment))
	].

type_comment_problems({_, {record, _}}, _) ->
	[];
type_comment_problems({Mod, T}, ByName) ->
	#{file := File, types := Types} = maps:get(Mod, ByName),
	{_, Comment} = maps:get(T, Types),
	markup_problems(File, Comment).

record_title(R) -> ["record #", atom_to_list(R), "{}"].

type_title(Page, Page, N, A) -> ["type ", type_name(N, A)];
type_title(_, Mod, N, A) -> ["type ", atom_to_list(Mod), ":", type_name(N, A)].

function_problems(File, Mod, F = #{fa := FA, spec := Spec, line := Line}) ->
	[{File, Line, io_lib:format("~s:~s has no -spec", [Mod, fa(FA)])} || Spec =:= undefined]
		++ [{File, Line, io_lib:format("~s:~s has no text (a %% comment right above its -spec)",
			[Mod, fa(FA)])} || not has_text(doc_text(F))]
		++ markup_problems(File, maps:get(comment, F)).

callback_problems(File, Mod, {FA, Form, _, Comment}) ->
	[{File, line(Form), io_lib:format("callback ~s:~s has no text (a %% comment right above "
		"its -callback)", [Mod, fa(FA)])} || not has_text(text(Comment))]
		++ markup_problems(File, Comment).

%% Types.

%% The types a page shows, [{Module, {Name, Arity}}] in a stable order (the
%% module's exported types, then the rest as they are found), and the
%% problems: names defined nowhere a reader can find them.
shown_types(Mod = #{name := Name, export_types := Exported, functions := Functions,
		callbacks := Callbacks, types := Types}, ByName) ->
	Roots = [{Name, T} || T <- Exported, maps:is_key(T, Types)],
	Missing = [{maps:get(file, Mod), 1, io_lib:format("-export_type names ~s:~s/~b, which is not "
		"defined", [Name, N, A])} || {N, A} <- Exported, not maps:is_key({N, A}, Types)],
	Forms = [{Name, S} || #{private := false, spec := S} <- Functions, S =/= undefined]
		++ [{Name, F} || {_, F, _, _} <- Callbacks],
	{Shown, Problems} = close_types(Roots, Forms, ByName, Name, Roots, []),
	{Shown, Missing ++ Problems}.

%% Walks the type references of Forms (each in its module's context),
%% adding the types that must be shown on Page to Shown.
close_types([], [], _, _, Shown, Problems) ->
	{Shown, lists:reverse(Problems)};
close_types([{_, {record, _}} | Todo], Forms, ByName, Page, Shown, Problems) ->
	close_types(Todo, Forms, ByName, Page, Shown, Problems);
close_types([{M, T} | Todo], Forms, ByName, Page, Shown, Problems) ->
	case maps:get(T, maps:get(types, maps:get(M, ByName))) of
		%% An opaque type's representation is not shown: nothing to follow.
		{{attribute, _, opaque, _}, _} ->
			close_types(Todo, Forms, ByName, Page, Shown, Problems);
		{Form, _} ->
			close_types(Todo, [{M, Form} | Forms], ByName, Page, Shown, Problems)
	end;
close_types([], [{M, Form} | Forms], ByName, Page, Shown0, Problems0) ->
	#{file := File} = maps:get(M, ByName),
	{Shown, Problems, New} = lists:foldl(fun(Ref, {S, P, N}) ->
		case resolve(Ref, M, Page, ByName) of
			{show, Key} ->
				case lists:member(Key, S) of
					true -> {S, P, N};
					false -> {S ++ [Key], P, [Key | N]}
				end;
			link -> {S, P, N};
			{problem, Text} -> {S, [{File, line(Form), Text} | P], N}
		end
	end, {Shown0, Problems0, []}, type_refs(Form)),
	close_types(lists:reverse(New), Forms, ByName, Page, Shown, Problems).

%% A type reference found in module M's code, for the page of Page: show its
%% definition on the page, link to another page, or a problem.
resolve({local, N, A}, M, Page, ByName) ->
	resolve({remote, M, N, A}, M, Page, ByName);
resolve({remote, M, N, A}, _, Page, ByName) ->
	case maps:find(M, ByName) of
		{ok, #{internal := Internal, types := Types, export_types := Exported}} ->
			Defined = maps:is_key({N, A}, Types),
			if
				not Defined ->
					{problem, io_lib:format("type ~s:~s/~b is not defined", [M, N, A])};
				M =:= Page; Internal ->
					{show, {M, {N, A}}};
				true ->
					case lists:member({N, A}, Exported) of
						true -> link;
						false -> {problem, io_lib:format("type ~s:~s/~b is not exported by ~s",
							[M, N, A, M])}
					end
			end;
		error ->
			case is_otp_module(M) of
				true -> link;
				false -> {problem, io_lib:format("type ~s:~s/~b: no module ~s in the source "
					"directory or in OTP", [M, N, A, M])}
			end
	end;
resolve({record, R}, M, _, ByName) ->
	case maps:get(records, maps:get(M, ByName)) of
		#{R := _} -> {show, {M, {record, R}}};
		_ -> {problem, io_lib:format("record type #~s{} is not defined in ~s", [R, M])}
	end.

is_otp_module(M) ->
	case code:which(M) of
		non_existing -> false;
		Path when is_list(Path) -> lists:prefix(code:lib_dir(), Path);
		_ -> true
	end.

%% The user types a form names: {local, Name, Arity}, {remote, M, Name,
%% Arity} or {record, Name}; built-in types left out.
type_refs(Form) ->
	lists:usort(refs(Form, [])).

refs({user_type, _, N, Args}, Acc) ->
	refs(Args, [{local, N, length(Args)} | Acc]);
refs({type, _, record, [{atom, _, R} | Fields]}, Acc) ->
	refs(Fields, [{record, R} | Acc]);
refs({type, _, _, Args}, Acc) ->
	%% Built-in types and type constructors (union, tuple, map, fun...):
	%% the parser makes user types user_type.
	refs(Args, Acc);
refs({remote_type, _, [{atom, _, M}, {atom, _, N}, Args]}, Acc) ->
	refs(Args, [{remote, M, N, length(Args)} | Acc]);
refs({attribute, _, spec, {_, Clauses}}, Acc) ->
	refs(Clauses, Acc);
refs({attribute, _, callback, {_, Clauses}}, Acc) ->
	refs(Clauses, Acc);
refs({attribute, _, T, {_, Def, _}}, Acc) when T =:= type; T =:= opaque ->
	refs(Def, Acc);
refs(List, Acc) when is_list(List) ->
	lists:foldl(fun refs/2, Acc, List);
refs(Tuple, Acc) when is_tuple(Tuple) ->
	refs(tuple_to_list(Tuple), Acc);
refs(_, Acc) ->
	Acc.

%% "Types: ..." under a spec, callback or type of module InMod shown on
%% Page: a link to where each type it names is defined.
type_links(InMod, Form, Page, ByName) ->
	Links = lists:usort([link(Ref, InMod, Page, ByName) || Ref <- type_refs(Form)]),
	case Links of
		[] -> "";
		_ -> ["Types: ", lists:join(", ", [Link || {_, Link} <- Links]), ".\n\n"]
	end.

link({record, R}, _, _, _) ->
	{{true, '', R, 0}, ["[`#", atom_to_list(R), "{}`](#", anchor_text(lists:flatten(record_title(R))), ")"]};
link({local, N, A}, InMod, Page, ByName) ->
	link({remote, InMod, N, A}, InMod, Page, ByName);
link({remote, M, N, A}, _, Page, ByName) ->
	Name = [atom_to_list(M), ":", type_name(N, A)],
	Here = fun(Text) -> ["[`", Text, "`](#", anchor_text(lists:flatten(type_title(Page, M, N, A))),
		")"] end,
	Link = case maps:find(M, ByName) of
		{ok, _} when M =:= Page -> Here(type_name(N, A));
		{ok, #{internal := true}} -> Here(Name);
		{ok, _} -> ["[`", Name, "`](", atom_to_list(M), ".md#",
			anchor_text(lists:flatten(type_title(M, M, N, A))), ")"];
		error -> ["[`", Name, "`](https://www.erlang.org/doc/man/", atom_to_list(M),
			".html#type-", atom_to_list(N), ")"]
	end,
	{{M =/= Page, M, N, A}, Link}.

type_name(N, 0) -> [atom_to_list(N), "()"];
type_name(N, A) -> [atom_to_list(N), "/", integer_to_list(A)].

%% Markup.

%% Problems in a comment's Markdown: [{File, Line, Text}].
markup_problems(File, Comment) ->
	lists:append([paragraph_problems(File, P) || P <- paragraphs(Comment)]).

%% The paragraphs of a comment that are Markdown (not the indented text
%% blocks): lists of {Line, Text}.
paragraphs(Comment) ->
	Kinds = classify([L || {_, L} <- Comment]),
	paragraphs(lists:zip(Comment, Kinds), [], []).

paragraphs([], [], Acc) ->
	lists:reverse(Acc);
paragraphs([], Para, Acc) ->
	lists:reverse([lists:reverse(Para) | Acc]);
paragraphs([{{N, L}, {Kind, _}} | Rest], Para, Acc) ->
	case Kind =:= text of
		false when Para =:= [] -> paragraphs(Rest, [], Acc);
		false -> paragraphs(Rest, [], [lists:reverse(Para) | Acc]);
		true -> paragraphs(Rest, [{N, L} | Para], Acc)
	end.

paragraph_problems(File, Para = [{First, _} | _]) ->
	Text = lists:flatten(lists:join("\n", [L || {_, L} <- Para])),
	Ticks = length([C || C <- Text, C =:= $`]),
	case Ticks rem 2 of
		1 ->
			{N, L} = hd([X || X = {_, L1} <- Para, lists:member($`, L1)]),
			[{File, N, io_lib:format("odd number of backquotes in a paragraph (an edoc-style "
				"`quote'? write `quote`): ~s", [string:trim(L)])}];
		0 ->
			[{File, First, io_lib:format("a code span with an odd number of single quotes "
				"(edoc-style `quote'?): `~s`", [Span])}
				|| Span <- code_spans(Text), odd(length([C || C <- Span, C =:= $']))]
	end.

code_spans(Text) ->
	case re:run(Text, "`([^`]*)`", [global, unicode, {capture, all_but_first, list}]) of
		{match, Spans} -> [S || [S] <- Spans];
		nomatch -> []
	end.

odd(N) -> N rem 2 =:= 1.

%% The index.

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
	Para = lists:takewhile(fun(L) -> string:trim(L) =/= "" end, text(lists:append(head_lines(Head)))),
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
	[[Chunk, "\n"] || Chunk <- chunks(classify(Lines))].

%% Each line as blank, text or pre. An indented line right under a list item
%% ("- " or "1. "), or under such a continuation, continues the item: text.
classify(Lines) ->
	classify(Lines, false, []).

classify([], _, Acc) ->
	lists:reverse(Acc);
classify([L | Rest], InItem, Acc) ->
	case {string:trim(L), is_pre(L)} of
		{"", _} -> classify(Rest, false, [{blank, L} | Acc]);
		{_, true} when InItem -> classify(Rest, true, [{text, L} | Acc]);
		{_, true} -> classify(Rest, false, [{pre, L} | Acc]);
		{_, false} -> classify(Rest, is_item(L), [{text, L} | Acc])
	end.

is_item("- " ++ _) -> true;
is_item("* " ++ _) -> true;
is_item(Line) -> re:run(Line, "^[0-9]+\\. ", [{capture, none}]) =:= match.

chunks([]) ->
	[];
chunks([{blank, _} | Rest]) ->
	chunks(Rest);
chunks(Lines = [{pre, _} | _]) ->
	{Pre, _} = lists:splitwith(fun({K, _}) -> K =/= text end, Lines),
	Pre1 = lists:reverse(lists:dropwhile(fun({K, _}) -> K =:= blank end,
		lists:reverse(Pre))),
	Rest1 = lists:nthtail(length(Pre1), Lines),
	Text = [X || {_, X} <- Pre1],
	%% Four spaces or more: an Erlang example; two: a table or a list.
	Indent = lists:min([indent(X) || X <- Text, string:trim(X) =/= ""]),
	Lang = case Indent >= 4 of true -> "erlang"; false -> "text" end,
	Code = [case string:trim(X) of "" -> ""; _ -> lists:nthtail(Indent, expand_tabs(X)) end
		|| X <- Text],
	[["```", Lang, "\n", [[X, "\n"] || X <- Code], "```\n"] | chunks(Rest1)];
chunks(Lines = [{text, _} | _]) ->
	{Para, Rest} = lists:splitwith(fun({K, _}) -> K =:= text end, Lines),
	[[[X, "\n"] || {_, X} <- Para] | chunks(Rest)].

indent(Line) ->
	length(lists:takewhile(fun(C) -> C =:= $\s end, expand_tabs(Line))).

expand_tabs(Line) ->
	lists:flatten(string:replace(Line, "\t", "    ", all)).

is_pre("  " ++ _) -> true;
is_pre("\t" ++ _) -> true;
is_pre(_) -> false.

%% An opaque type without its representation.
pp_type({attribute, _, opaque, {N, _, Vars}}) ->
	["-opaque ", atom_to_list(N), "(", lists:join(", ", [atom_to_list(V) || {var, _, V} <- Vars]),
		").\n"];
pp_type(Form) ->
	pp(Form).

pp(Form) ->
	[erl_pp:attribute(Form, [{encoding, utf8}])].

fa({F, A}) ->
	io_lib:format("~w/~b", [F, A]).

%% GitHub's heading ids: lower case, spaces to -, punctuation but - and _
%% dropped.
anchor({F, A}) ->
	anchor_text(lists:flatten(fa({F, A}))).

anchor_text(Text) ->
	[case C of $\s -> $-; _ -> C end || C <- string:lowercase(Text),
		(C >= $a andalso C =< $z) orelse (C >= $0 andalso C =< $9) orelse C =:= $_
			orelse C =:= $- orelse C =:= $\s].

code(Atom) ->
	["`", atom_to_list(Atom), "`"].

%% A path relative to the current directory when it is under it.
rel_path(File) ->
	{ok, Cwd} = file:get_cwd(),
	case lists:prefix(Cwd ++ "/", File) of
		true -> lists:nthtail(length(Cwd) + 1, File);
		false -> File
	end.

rel_src(File, Src) ->
	filename:join("src", lists:nthtail(length(filename:split(Src)), filename:split(File))).
