-module(markdown_middleware_app).
-behaviour(application).

-export([start/2]).
-export([stop/1]).

%% The converter runs before the router: it answers the requests for
%% /<name>.html that have a <name>.md, and lets every other request go on
%% to the router and the handlers.
-spec start(application:start_type(), any()) -> {ok, pid()}.
start(_, _) ->
	Dispatch = mustang_router:compile([{'_', [{"/", markdown_middleware_index_h, []}]}]),
	{ok, _} = mustang:start_clear(markdown_middleware,
		#{port => application:get_env(markdown_middleware, port, 8080)},
		#{env => #{dispatch => Dispatch},
			middlewares => [markdown_middleware_converter, mustang_router, mustang_handler]}),
	markdown_middleware_sup:start_link().

-spec stop(any()) -> ok.
stop(_) ->
	ok = mustang:stop_listener(markdown_middleware).
