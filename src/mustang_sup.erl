%% Top supervisor: the clock, the registry of listener options, and the
%% supervisor of listeners. The registry starts before the listeners so the
%% ETS table they read outlives any of them.
-module(mustang_sup).
-behaviour(supervisor).

-export([start_link/0]).
-export([init/1]).

-spec start_link() -> {ok, pid()} | {error, any()}.
start_link() ->
	supervisor:start_link({local, ?MODULE}, ?MODULE, []).

-spec init([]) -> {ok, {supervisor:sup_flags(), [supervisor:child_spec()]}}.
init([]) ->
	{ok, {#{strategy => one_for_one, intensity => 10, period => 10}, [
		#{id => mustang_clock, start => {mustang_clock, start_link, []}},
		#{id => mustang_registry, start => {mustang_registry, start_link, []}},
		#{id => mustang_listeners_sup, start => {mustang_listeners_sup, start_link, []},
			type => supervisor, shutdown => infinity}
	]}}.
