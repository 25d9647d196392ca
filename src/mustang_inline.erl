%% Where the state of a stream whose handler runs inline (inside the HTTP/1.1
%% connection process, the default) lives while the handler runs.
%%
%% The handler's mustang_req calls act on the stream (they read the body,
%% write the response and go through the stream handlers), but the Req a
%% handler holds may be stale (Cowboy code often replies and returns the Req
%% it was given) or used from a process the handler spawned (as Cowboy
%% allows). So the stream state is kept neither in the Req nor in the process
%% dictionary: the connection puts it in this public ETS table, keyed by
%% {ConnectionPid, StreamID}, for the time the handler runs (enter/3), every
%% call finds and updates it here (info/3), and the connection takes it back
%% when the handler returns (leave/1). The protocol module that owns the state
%% is stored with it (Module:inline_info/3 carries out a call), so this module
%% and mustang_req know no connection module.
%%
%% Calls for one stream must not be made from two processes at the same time
%% (the connection process is busy in the handler meanwhile, so a handler that
%% waits for the process it gave its Req to is fine).
-module(mustang_inline).

-export([new_table/0]).
-export([enter/3]).
-export([leave/1]).
-export([info/3]).

-define(TAB, ?MODULE).

-callback inline_info(any(), timeout(), State) -> {any(), State} when State :: any().

%% Called once by the process that owns the table (mustang_registry).
-spec new_table() -> ok.
new_table() ->
	_ = ets:new(?TAB, [named_table, public, set, {write_concurrency, true}]),
	ok.

-spec enter({pid(), pos_integer()}, module(), any()) -> ok.
enter(Key, Module, State) ->
	true = ets:insert(?TAB, {Key, Module, State}),
	ok.

-spec leave({pid(), pos_integer()}) -> any().
leave(Key) ->
	[{_, _, State}] = ets:take(?TAB, Key),
	State.

%% Carries out Info (a stream handler info: a response part, a body read...)
%% for the stream of Req; returns what the protocol module answered, or
%% {error, closed} when the stream is over.
-spec info(mustang_req:req(), any(), timeout()) -> any().
info(#{pid := Pid, streamid := StreamID}, Info, Timeout) ->
	Key = {Pid, StreamID},
	case ets:lookup(?TAB, Key) of
		[{_, Module, State}] ->
			{Result, State2} = Module:inline_info(Info, Timeout, State),
			true = ets:update_element(?TAB, Key, {3, State2}),
			Result;
		[] ->
			{error, closed}
	end.
