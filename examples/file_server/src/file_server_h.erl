%% The directory listing: an HTML page of links to the entries of the
%% directory that file_server_lister found (its handler_opts).
-module(file_server_h).

-export([init/2]).

-spec init(mustang_req:req(), binary()) -> {ok, mustang_req:req(), binary()}.
init(Req, Dir) ->
	{ok, listing(Req, Dir, mustang_req:path_info(Req)), Dir}.

listing(Req, Dir, PathInfo) ->
	{ok, Names} = file:list_dir(Dir),
	Entries = [{Name, filelib:is_dir(filename:join(Dir, Name))}
		|| Name <- lists:sort([unicode:characters_to_binary(N) || N <- Names])],
	Title = html(["/", lists:join("/", PathInfo)]),
	Parent = case PathInfo of
		[] -> [];
		_ -> [<<"<li><a href=\"">>, href(lists:droplast(PathInfo), true), <<"\">..</a></li>\n">>]
	end,
	Body = [<<"<!DOCTYPE html>\n<meta charset=\"utf-8\">\n<title>Index of ">>, Title,
		<<"</title>\n<h1>Index of ">>, Title, <<"</h1>\n<ul>\n">>, Parent,
		[[<<"<li><a href=\"">>, href(PathInfo ++ [Name], IsDir), <<"\">">>, html(Name),
			case IsDir of true -> <<"/">>; false -> <<>> end, <<"</a></li>\n">>]
			|| {Name, IsDir} <- Entries],
		<<"</ul>\n">>],
	mustang_req:reply(200, #{<<"content-type">> => <<"text/html; charset=utf-8">>}, Body, Req).

href([], _) ->
	<<"/">>;
href(Segments, IsDir) ->
	Trailing = case IsDir of true -> <<"/">>; false -> <<>> end,
	html([[$/, percent(S)] || S <- Segments] ++ [Trailing]).

%% Every byte but the unreserved ones (RFC 3986 2.3) is percent-encoded.
percent(Segment) ->
	<< <<(percent_byte(C))/binary>> || <<C>> <= Segment >>.

percent_byte(C) when C >= $a, C =< $z; C >= $A, C =< $Z; C >= $0, C =< $9;
		C =:= $-; C =:= $.; C =:= $_; C =:= $~ ->
	<<C>>;
percent_byte(C) ->
	<<$%, (integer_to_binary(C div 16, 16))/binary, (integer_to_binary(C rem 16, 16))/binary>>.

html(IoData) ->
	<< <<(html_char(C))/binary>> || <<C>> <= iolist_to_binary(IoData) >>.

html_char($&) -> <<"&amp;">>;
html_char($<) -> <<"&lt;">>;
html_char($>) -> <<"&gt;">>;
html_char($") -> <<"&quot;">>;
html_char($') -> <<"&#39;">>;
html_char(C) -> <<C>>.
