-module(long_poll_sup).
-behaviour(supervisor).

-export([start_link/0]).
-export([init/1]).

-spec start_link() -> {ok, pid()}.
start_link() ->
	supervisor:start_link({local, ?MODULE}, ?MODULE, []).

-spec init([]) -> {ok, {supervisor:sup_flags(), [supervisor:child_spec()]}}.
init([]) ->
	%% The pg scope where waiters join their topic's group.
	{ok, {#{strategy => one_for_one}, [#{id => pg, start => {pg, start_link, [long_poll]}}]}}.
