%% A middleware (mustang_middleware behaviour): a GET or HEAD request for
%% /<name>.html, where <name>.md is a file of the `dir' directory, gets that
%% file rendered as HTML, and the chain stops there. Any other request goes
%% on unchanged to the next middleware.
%%
%% Only names of letters, digits, '-' and '_' are looked up, so that a
%% request can never name a file outside the directory (no '/', no '..', no
%% percent-encoding).
-module(markdown_middleware_converter).
-behaviour(mustang_middleware).

-export([execute/2]).

-spec execute(Req, Env) -> {ok, Req, Env} | {stop, Req}
	when Req :: mustang_req:req(), Env :: mustang_middleware:env().
execute(Req, Env) ->
	case markdown_file(Req) of
		{ok, Title, Markdown} ->
			Html = markdown_middleware_html:page(Title, Markdown),
			{stop, mustang_req:reply(200,
				#{<<"content-type">> => <<"text/html; charset=utf-8">>}, Html, Req)};
		none ->
			{ok, Req, Env}
	end.

markdown_file(Req) ->
	Method = mustang_req:method(Req),
	case re:run(mustang_req:path(Req), "^/([A-Za-z0-9_-]+)\\.html$", [{capture, [1], binary}]) of
		{match, [Name]} when Method =:= <<"GET">>; Method =:= <<"HEAD">> ->
			File = filename:join(dir(), <<Name/binary, ".md">>),
			case file:read_file(File) of
				{ok, Markdown} -> {ok, Name, Markdown};
				{error, _} -> none
			end;
		_ ->
			none
	end.

-spec dir() -> file:filename().
dir() ->
	application:get_env(markdown_middleware, dir, "priv").
