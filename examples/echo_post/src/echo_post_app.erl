-module(echo_post_app).
-behaviour(application).

-export([start/2]).
-export([stop/1]).

-spec start(application:start_type(), any()) -> {ok, pid()}.
start(_, _) ->
	Dispatch = mustang_router:compile([{'_', [
		{"/", echo_post_h, []}
	]}]),
	{ok, _} = mustang:start_clear(echo_post,
		#{port => application:get_env(echo_post, port, 8080)},
		#{env => #{dispatch => Dispatch}}),
	echo_post_sup:start_link().

-spec stop(any()) -> ok.
stop(_) ->
	ok = mustang:stop_listener(echo_post).
