-module(long_poll_app).
-behaviour(application).

-export([start/2]).
-export([stop/1]).

-spec start(application:start_type(), any()) -> {ok, pid()}.
start(_, _) ->
	Dispatch = mustang_router:compile([{'_', [
		{"/wait/:topic", long_poll_wait_h, []},
		{"/publish/:topic", long_poll_publish_h, []}
	]}]),
	{ok, _} = mustang:start_clear(long_poll,
		#{port => application:get_env(long_poll, port, 8080)},
		#{env => #{dispatch => Dispatch}}),
	long_poll_sup:start_link().

-spec stop(any()) -> ok.
stop(_) ->
	ok = mustang:stop_listener(long_poll).
