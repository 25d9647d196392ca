%% The supervisor owns the table of pastes (rest_pastebin), which lives as
%% long as the application.
-module(rest_pastebin_sup).
-behaviour(supervisor).

-export([start_link/0]).
-export([init/1]).

-spec start_link() -> {ok, pid()}.
start_link() ->
	supervisor:start_link({local, ?MODULE}, ?MODULE, []).

-spec init([]) -> {ok, {supervisor:sup_flags(), []}}.
init([]) ->
	rest_pastebin = ets:new(rest_pastebin, [named_table, public, set, {read_concurrency, true}]),
	{ok, {#{strategy => one_for_one}, []}}.
