%% A REST handler that says hello in HTML, JSON or plain text, whichever
%% the client's accept header prefers (the first, HTML, without one).
-module(rest_hello_world_h).

-export([init/2]).
-export([content_types_provided/2]).
-export([hello_to_html/2]).
-export([hello_to_json/2]).
-export([hello_to_text/2]).

-spec init(mustang_req:req(), any()) -> {mustang_rest, mustang_req:req(), any()}.
init(Req, Opts) ->
	{mustang_rest, Req, Opts}.

-spec content_types_provided(Req, State) -> {[{binary(), atom()}], Req, State}.
content_types_provided(Req, State) ->
	{[
		{<<"text/html">>, hello_to_html},
		{<<"application/json">>, hello_to_json},
		{<<"text/plain">>, hello_to_text}
	], Req, State}.

-spec hello_to_html(Req, State) -> {binary(), Req, State}.
hello_to_html(Req, State) ->
	Body = <<"<html>
<head>
	<meta charset=\"utf-8\">
	<title>REST Hello World!</title>
</head>
<body>
	<p>REST Hello World as HTML!</p>
</body>
</html>">>,
	{Body, Req, State}.

-spec hello_to_json(Req, State) -> {binary(), Req, State}.
hello_to_json(Req, State) ->
	{<<"{\"rest\": \"Hello World!\"}">>, Req, State}.

-spec hello_to_text(Req, State) -> {binary(), Req, State}.
hello_to_text(Req, State) ->
	{<<"REST Hello World as text!">>, Req, State}.
