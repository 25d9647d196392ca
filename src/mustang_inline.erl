%% Where the state of a stream whose handler runs inline (inside the HTTP/1.1
%% connection process, the default) lives while the handler runs.
%%
%% The handler's mustang_req calls act on the stream (they read the body,
%% write the response and go through the stream handlers), but the Req a
%% handler holds may be stale (Cowboy code often replies and returns the Req
%% it was given) or used from a process the handler spawned (as Cowboy
%% allows). So the stream state cannot live only in the Req, and there is no
%% process dictionary:
%%
%% - the Req carries a snapshot of the stream state, stamped with a version
%%   (key `inline': {Counter, Version, Module, State}); Counter is an atomics
%%   array of the connection holding the latest version;
%% - a call made with the latest Req (its version is the counter's: the
%%   common case, the handler passing on the Req each call returned) uses the
%%   snapshot; any other call finds the latest state in this module's public
%%   ETS table, keyed by {ConnectionPid, StreamID};
%% - each call stores the state it leaves in the table, moves the counter on
%%   and puts the new snapshot in the Req it returns;
%% - the connection moves the counter on when the handler starts and when it
%%   returns (run/4), and takes the state back from the table if a call was
%%   made, so a Req used after its handler returned finds nothing and gets
%%   {error, closed}.
%% A request whose handler makes one call costs one ETS insert and one take.
%% The protocol module that owns the state is stored with it
%% (Module:inline_info/3 carries out a call), so this module and mustang_req
%% know no connection module.
%%
%% Calls for one stream must not be made from two processes at the same time
%% (the connection process is busy in the handler meanwhile, so a handler that
%% waits for the process it gave its Req to is fine).
-module(mustang_inline).

-export([new_table/0]).
-export([new_counter/0]).
-export([run/5]).
-export([info/3]).

-define(TAB, ?MODULE).

-opaque counter() :: atomics:atomics_ref().
-type context() :: {counter(), non_neg_integer(), module(), any()}.
-export_type([counter/0, context/0]).

-callback inline_info(any(), timeout(), State) -> {any(), State} when State :: any().

%% Called once by the process that owns the table (mustang_registry).
-spec new_table() -> ok.
new_table() ->
	_ = ets:new(?TAB, [named_table, public, set, {write_concurrency, true}]),
	ok.

%% One per connection that runs handlers inline.
-spec new_counter() -> counter().
new_counter() ->
	atomics:new(1, [{signed, false}]).

%% Calls apply(M, F, [Req2 | Args]) with Req2 carrying the stream State;
%% returns the result and the stream state the handler's calls left.
-spec run(counter(), module(), any(), {module(), atom(), [any()]}, {pid(), pos_integer()})
	-> {any(), any()}.
run(Counter, Module, State, {M, F, [Req | Args]}, Key) ->
	Version = atomics:add_get(Counter, 1, 1),
	Result = erlang:apply(M, F, [Req#{inline => {Counter, Version, Module, State}} | Args]),
	case atomics:add_get(Counter, 1, 1) of
		Next when Next =:= Version + 1 ->
			%% No call was made.
			{Result, State};
		_ ->
			case ets:take(?TAB, Key) of
				[{_, State2}] -> {Result, State2};
				[] -> {Result, State}
			end
	end.

%% Carries out Info (a stream handler info: a response part, a body read...)
%% for the stream of Req; returns what the protocol module answered, or
%% {error, closed} when the stream is over, and Req with the new snapshot.
-spec info(mustang_req:req(), any(), timeout()) -> {any(), mustang_req:req()}.
info(Req = #{inline := {Counter, Version, Module, Snapshot}, pid := Pid, streamid := StreamID},
		Info, Timeout) ->
	Key = {Pid, StreamID},
	State = case atomics:get(Counter, 1) of
		Version -> {ok, Snapshot};
		_ ->
			case ets:lookup(?TAB, Key) of
				[{_, S}] -> {ok, S};
				[] -> closed
			end
	end,
	case State of
		{ok, State0} ->
			{Result, State2} = Module:inline_info(Info, Timeout, State0),
			true = ets:insert(?TAB, {Key, State2}),
			Version2 = atomics:add_get(Counter, 1, 1),
			{Result, Req#{inline => {Counter, Version2, Module, State2}}};
		closed ->
			{{error, closed}, Req}
	end;
info(Req, _, _) ->
	{{error, closed}, Req}.
