-module(file_server_app).
-behaviour(application).
-behaviour(supervisor).

-export([start/2]).
-export([stop/1]).
-export([init/1]).

%% Serves the directory of the env key dir, by default priv/ of the
%% directory it runs from (examples/file_server with make example).
-spec start(application:start_type(), any()) -> {ok, pid()}.
start(_, _) ->
	Dir = filename:absname(application:get_env(file_server, dir, "priv")),
	Dispatch = mustang_router:compile([{'_', [
		{"/[...]", mustang_static, {dir, Dir, [{mimetypes, mustang_mimetypes, all}]}}
	]}]),
	{ok, _} = mustang:start_clear(file_server,
		#{port => application:get_env(file_server, port, 8080)},
		#{env => #{dispatch => Dispatch},
			middlewares => [mustang_router, file_server_lister, mustang_handler]}),
	supervisor:start_link({local, file_server_sup}, ?MODULE, []).

-spec stop(any()) -> ok.
stop(_) ->
	ok = mustang:stop_listener(file_server).

%% The application's supervisor has no children: the listener is Mustang's.
-spec init([]) -> {ok, {supervisor:sup_flags(), []}}.
init([]) ->
	{ok, {#{strategy => one_for_one}, []}}.
