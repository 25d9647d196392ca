-module(rest_hello_world_app).
-behaviour(application).

-export([start/2]).
-export([stop/1]).

-spec start(application:start_type(), any()) -> {ok, pid()}.
start(_, _) ->
	Dispatch = mustang_router:compile([{'_', [{"/", rest_hello_world_h, []}]}]),
	{ok, _} = mustang:start_clear(rest_hello_world,
		#{port => application:get_env(rest_hello_world, port, 8080)},
		#{env => #{dispatch => Dispatch}}),
	rest_hello_world_sup:start_link().

-spec stop(any()) -> ok.
stop(_) ->
	ok = mustang:stop_listener(rest_hello_world).
