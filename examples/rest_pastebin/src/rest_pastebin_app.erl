-module(rest_pastebin_app).
-behaviour(application).

-export([start/2]).
-export([stop/1]).

-spec start(application:start_type(), any()) -> {ok, pid()}.
start(_, _) ->
	{ok, Sup} = rest_pastebin_sup:start_link(),
	Dispatch = mustang_router:compile([{'_', [{"/[:paste_id]", rest_pastebin_h, []}]}]),
	{ok, _} = mustang:start_clear(rest_pastebin,
		#{port => application:get_env(rest_pastebin, port, 8080)},
		#{env => #{dispatch => Dispatch}}),
	{ok, Sup}.

-spec stop(any()) -> ok.
stop(_) ->
	ok = mustang:stop_listener(rest_pastebin).
