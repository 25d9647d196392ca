%% The mustang application.
-module(mustang_app).
-behaviour(application).

-export([start/2]).
-export([stop/1]).

-spec start(application:start_type(), any()) -> {ok, pid()} | {error, any()}.
start(_, _) ->
	mustang_sup:start_link().

-spec stop(any()) -> ok.
stop(_) ->
	ok.
