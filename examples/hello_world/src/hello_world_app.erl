-module(hello_world_app).
-behaviour(application).

-export([start/2]).
-export([stop/1]).

-spec start(application:start_type(), any()) -> {ok, pid()}.
start(_, _) ->
	Dispatch = mustang_router:compile([{'_', [{"/", hello_world_h, []}]}]),
	{ok, _} = mustang:start_clear(hello_world,
		#{port => application:get_env(hello_world, port, 8080)},
		#{env => #{dispatch => Dispatch}}),
	hello_world_sup:start_link().

-spec stop(any()) -> ok.
stop(_) ->
	ok = mustang:stop_listener(hello_world).
