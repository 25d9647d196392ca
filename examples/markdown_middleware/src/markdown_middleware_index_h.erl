%% GET /: links to the pages, one per .md file of the directory.
-module(markdown_middleware_index_h).

-export([init/2]).

-spec init(mustang_req:req(), any()) -> {ok, mustang_req:req(), any()}.
init(Req, State) ->
	Dir = application:get_env(markdown_middleware, dir, "priv"),
	Names = lists:sort([filename:basename(F, ".md") || F <- filelib:wildcard("*.md", Dir)]),
	Items = [["- [", N, "](", N, ".html)\n"] || N <- Names,
		re:run(N, "^[A-Za-z0-9_-]+$", [{capture, none}]) =:= match],
	Markdown = iolist_to_binary(["# Pages\n\n", Items]),
	{ok, mustang_req:reply(200, #{<<"content-type">> => <<"text/html; charset=utf-8">>},
		markdown_middleware_html:page(<<"Pages">>, Markdown), Req), State}.
