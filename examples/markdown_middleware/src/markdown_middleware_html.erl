%% A tiny Markdown to HTML converter, enough for the example's pages:
%% headings (# to ######), paragraphs, lists (- or *), fenced code blocks
%% (```), and inline `code`, **strong**, *emphasis* and [links](url). All
%% text is HTML-escaped; a link whose URL has a scheme other than http or
%% https stays text.
-module(markdown_middleware_html).

-export([page/2]).
-export([to_html/1]).

%% A whole HTML document.
-spec page(binary(), binary()) -> iodata().
page(Title, Markdown) ->
	[<<"<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>">>,
		escape(Title), <<"</title>\n</head>\n<body>\n">>, to_html(Markdown),
		<<"</body>\n</html>\n">>].

-spec to_html(binary()) -> iodata().
to_html(Markdown) ->
	blocks(binary:split(Markdown, [<<"\r\n">>, <<"\n">>], [global])).

blocks([]) ->
	[];
blocks([<<"```", _/binary>> | Rest]) ->
	{Code, Rest1} = lists:splitwith(fun(L) -> not is_fence(L) end, Rest),
	[<<"<pre><code>">>, lists:join($\n, [escape(L) || L <- Code]), <<"</code></pre>\n">>
		| blocks(drop_first(Rest1))];
blocks([Line | Rest]) ->
	case {heading(Line), item(Line), is_blank(Line)} of
		{{Level, Text}, _, _} ->
			H = [$h, $0 + Level],
			[[$<, H, $>, inline(Text), $<, $/, H, $>, $\n] | blocks(Rest)];
		{_, {ok, _}, _} ->
			{Items, Rest1} = lists:splitwith(fun(L) -> item(L) =/= none end, [Line | Rest]),
			[<<"<ul>\n">>, [[<<"<li>">>, inline(T), <<"</li>\n">>] || {ok, T} <- [item(I) || I <- Items]],
				<<"</ul>\n">> | blocks(Rest1)];
		{_, _, true} ->
			blocks(Rest);
		_ ->
			{Para, Rest1} = lists:splitwith(fun is_text/1, [Line | Rest]),
			[<<"<p>">>, lists:join($\n, [inline(L) || L <- Para]), <<"</p>\n">> | blocks(Rest1)]
	end.

heading(Line) ->
	case re:run(Line, "^(#{1,6}) +(.*)$", [{capture, all_but_first, binary}]) of
		{match, [Hashes, Text]} -> {byte_size(Hashes), Text};
		nomatch -> none
	end.

item(Line) ->
	case re:run(Line, "^[-*] +(.*)$", [{capture, all_but_first, binary}]) of
		{match, [Text]} -> {ok, Text};
		nomatch -> none
	end.

is_fence(Line) -> binary:longest_common_prefix([Line, <<"```">>]) =:= 3.

is_blank(Line) -> string:trim(Line) =:= <<>>.

is_text(Line) ->
	not is_blank(Line) andalso heading(Line) =:= none andalso item(Line) =:= none
		andalso not is_fence(Line).

drop_first([]) -> [];
drop_first([_ | Rest]) -> Rest.

%% Code spans first (nothing inside them is markup), then links, strong and
%% emphasis in the escaped text.
inline(Text) ->
	inline_parts(binary:split(Text, <<"`">>, [global]), text).

inline_parts([], _) -> [];
inline_parts([Part], code) -> [$`, escape(Part)];
inline_parts([Part | Rest], text) -> [markup(escape(Part)) | inline_parts(Rest, code)];
inline_parts([Part | Rest], code) -> [<<"<code>">>, escape(Part), <<"</code>">> | inline_parts(Rest, text)].

markup(Escaped) ->
	Linked = re:replace(Escaped, "\\[([^]]+)\\]\\(((https?://|/|#)?[^():\\s]*|https?://[^()\\s]*)\\)",
		"<a href=\"\\2\">\\1</a>", [global]),
	Strong = re:replace(Linked, "\\*\\*(.+?)\\*\\*", "<strong>\\1</strong>", [global]),
	re:replace(Strong, "\\*(.+?)\\*", "<em>\\1</em>", [global]).

escape(Text) ->
	<< <<(escape_char(C))/binary>> || <<C>> <= Text >>.

escape_char($&) -> <<"&amp;">>;
escape_char($<) -> <<"&lt;">>;
escape_char($>) -> <<"&gt;">>;
escape_char($") -> <<"&quot;">>;
escape_char(C) -> <<C>>.
