%% The smallest REST handler: init/2 and the default ProvideCallback
%% to_html; every other callback takes its default.
-module(rest_hello_h).
-export([init/2]).
-export([to_html/2]).

init(Req, Opts) ->
	{mustang_rest, Req, Opts}.

to_html(Req, State) ->
	{<<"<html><body>Hello REST</body></html>">>, Req, State}.
