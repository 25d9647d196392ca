%% The pastebin's one REST handler, for "/" and "/:paste_id".
%%
%% - GET /: how to use it, as HTML (a form) or plain text.
%% - POST /: creates a paste from a form (field "paste", answered with
%%   303 See Other to the paste, for browsers) or from a text/plain body
%%   (answered with 201 Created and its location).
%% - GET /:paste_id: the paste as text/plain, or as HTML (escaped, in a
%%   <pre>); 404 when there is no such paste; an etag, so that a client can
%%   revalidate with If-None-Match (304).
-module(rest_pastebin_h).

-export([init/2]).
-export([allowed_methods/2]).
-export([content_types_provided/2]).
-export([content_types_accepted/2]).
-export([resource_exists/2]).
-export([generate_etag/2]).
-export([paste_html/2]).
-export([paste_text/2]).
-export([create_from_form/2]).
-export([create_from_text/2]).

-define(MAX_PASTE, 1000000).

-spec init(mustang_req:req(), any()) -> {mustang_rest, mustang_req:req(), undefined}.
init(Req, _) ->
	{mustang_rest, Req, undefined}.

-spec allowed_methods(Req, State) -> {[binary()], Req, State}.
allowed_methods(Req, State) ->
	{[<<"GET">>, <<"HEAD">>, <<"POST">>], Req, State}.

-spec content_types_provided(Req, State) -> {[{binary(), atom()}], Req, State}.
content_types_provided(Req, State) ->
	{[
		{<<"text/plain">>, paste_text},
		{<<"text/html">>, paste_html}
	], Req, State}.

-spec content_types_accepted(Req, State) -> {[{binary() | mustang_rest:media_type(), atom()}], Req, State}.
content_types_accepted(Req, State) ->
	{[
		{<<"application/x-www-form-urlencoded">>, create_from_form},
		{{<<"text">>, <<"plain">>, '*'}, create_from_text}
	], Req, State}.

%% "/" always exists; "/:paste_id" when the paste does. The state becomes
%% the paste, or index.
-spec resource_exists(Req, any()) -> {boolean(), Req, index | binary() | undefined}
	when Req :: mustang_req:req().
resource_exists(Req, _) ->
	case mustang_req:binding(paste_id, Req) of
		undefined ->
			{true, Req, index};
		PasteID ->
			case ets:lookup(rest_pastebin, PasteID) of
				[{_, Paste}] -> {true, Req, Paste};
				[] -> {false, Req, undefined}
			end
	end.

-spec generate_etag(Req, State) -> {{strong, binary()} | undefined, Req, State}.
generate_etag(Req, index) ->
	{undefined, Req, index};
generate_etag(Req, Paste) ->
	Hash = binary:encode_hex(crypto:hash(sha256, Paste)),
	{{strong, binary:part(Hash, 0, 16)}, Req, Paste}.

-spec paste_text(Req, State) -> {iodata(), Req, State}.
paste_text(Req, index) ->
	{usage_text(Req), Req, index};
paste_text(Req, Paste) ->
	{Paste, Req, Paste}.

-spec paste_html(Req, State) -> {iodata(), Req, State}.
paste_html(Req, index) ->
	{[<<"<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>Pastebin</title>"
		"</head><body><form method=\"post\" action=\"/\">"
		"<textarea name=\"paste\" rows=\"20\" cols=\"80\"></textarea><br>"
		"<input type=\"submit\" value=\"Paste\"></form><pre>">>,
		escape_html(usage_text(Req)), <<"</pre></body></html>\n">>], Req, index};
paste_html(Req, Paste) ->
	{[<<"<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>Paste</title>"
		"</head><body><pre>">>, escape_html(Paste), <<"</pre></body></html>\n">>], Req, Paste}.

%% A form: 303 to the new paste, which a browser then GETs.
-spec create_from_form(Req, State) -> {{see_other, binary()} | false, Req, State}.
create_from_form(Req, State) ->
	{ok, Fields, Req2} = mustang_req:read_urlencoded_body(Req, #{length => ?MAX_PASTE}),
	case lists:keyfind(<<"paste">>, 1, Fields) of
		{_, Paste} when is_binary(Paste), Paste =/= <<>> ->
			{{see_other, store(Paste)}, Req2, State};
		_ ->
			{false, Req2, State}
	end.

%% A text/plain body: 201 with the location of the new paste.
-spec create_from_text(Req, State) -> {{created, binary()} | false, Req, State}.
create_from_text(Req, State) ->
	case mustang_req:read_body(Req, #{length => ?MAX_PASTE}) of
		{ok, <<>>, Req2} -> {false, Req2, State};
		{ok, Paste, Req2} -> {{created, store(Paste)}, Req2, State};
		{more, _, Req2} -> {false, Req2, State}
	end.

store(Paste) ->
	PasteID = string:lowercase(binary:encode_hex(crypto:strong_rand_bytes(6))),
	true = ets:insert_new(rest_pastebin, {PasteID, Paste}),
	<<$/, PasteID/binary>>.

usage_text(Req) ->
	URL = mustang_req:uri(Req, #{path => <<"/">>, qs => undefined}),
	[<<"Paste some text:\n\n  curl --data-binary @file.txt -H 'content-type: text/plain' ">>,
		URL, <<"\n\nthen GET the location it answers, as text/plain or text/html.\n">>].

escape_html(Text) ->
	[escape_char(C) || <<C>> <= iolist_to_binary(Text)].

escape_char($<) -> <<"&lt;">>;
escape_char($>) -> <<"&gt;">>;
escape_char($&) -> <<"&amp;">>;
escape_char($") -> <<"&quot;">>;
escape_char($') -> <<"&#39;">>;
escape_char(C) -> C.
