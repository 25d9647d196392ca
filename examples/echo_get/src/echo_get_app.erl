-module(echo_get_app).
-behaviour(application).

-export([start/2]).
-export([stop/1]).

-spec start(application:start_type(), any()) -> {ok, pid()}.
start(_, _) ->
	Dispatch = mustang_router:compile([{'_', [
		{"/", echo_get_h, []}
	]}]),
	{ok, _} = mustang:start_clear(echo_get,
		#{port => application:get_env(echo_get, port, 8080)},
		#{env => #{dispatch => Dispatch}}),
	echo_get_sup:start_link().

-spec stop(any()) -> ok.
stop(_) ->
	ok = mustang:stop_listener(echo_get).
