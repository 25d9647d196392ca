-module(websocket_chat_app).
-behaviour(application).

-export([start/2]).
-export([stop/1]).

-spec start(application:start_type(), any()) -> {ok, pid()}.
start(_, _) ->
	%% The room (a pg scope) must exist before the first client joins it.
	{ok, Sup} = websocket_chat_sup:start_link(),
	Dispatch = mustang_router:compile([{'_', [
		{"/", websocket_chat_page_h, []},
		{"/ws", websocket_chat_ws_h, []}
	]}]),
	{ok, _} = mustang:start_clear(websocket_chat,
		#{port => application:get_env(websocket_chat, port, 8080)},
		#{env => #{dispatch => Dispatch}, enable_connect_protocol => true}),
	{ok, Sup}.

-spec stop(any()) -> ok.
stop(_) ->
	ok = mustang:stop_listener(websocket_chat).
