-module(cookie_app).
-behaviour(application).

-export([start/2]).
-export([stop/1]).

-spec start(application:start_type(), any()) -> {ok, pid()}.
start(_, _) ->
	Dispatch = mustang_router:compile([{'_', [
		{"/", cookie_h, []}
	]}]),
	{ok, _} = mustang:start_clear(cookie,
		#{port => application:get_env(cookie, port, 8080)},
		#{env => #{dispatch => Dispatch}}),
	cookie_sup:start_link().

-spec stop(any()) -> ok.
stop(_) ->
	ok = mustang:stop_listener(cookie).
