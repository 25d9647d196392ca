-module(upload_app).
-behaviour(application).

-export([start/2]).
-export([stop/1]).

-spec start(application:start_type(), any()) -> {ok, pid()}.
start(_, _) ->
	Dispatch = mustang_router:compile([{'_', [
		{"/", upload_form_h, []},
		{"/upload", upload_h, []}
	]}]),
	{ok, _} = mustang:start_clear(upload,
		#{port => application:get_env(upload, port, 8080)},
		#{env => #{dispatch => Dispatch}}),
	upload_sup:start_link().

-spec stop(any()) -> ok.
stop(_) ->
	ok = mustang:stop_listener(upload).
