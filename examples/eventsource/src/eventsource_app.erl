-module(eventsource_app).
-behaviour(application).

-export([start/2]).
-export([stop/1]).

-spec start(application:start_type(), any()) -> {ok, pid()}.
start(_, _) ->
	Dispatch = mustang_router:compile([{'_', [
		{"/", eventsource_page_h, []},
		{"/eventsource", eventsource_h, []}
	]}]),
	{ok, _} = mustang:start_clear(eventsource,
		#{port => application:get_env(eventsource, port, 8080)},
		#{env => #{dispatch => Dispatch}}),
	eventsource_sup:start_link().

-spec stop(any()) -> ok.
stop(_) ->
	ok = mustang:stop_listener(eventsource).
