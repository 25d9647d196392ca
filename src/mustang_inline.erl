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
%%   array of the connection whose first slot holds the latest version;
%% - a call made with the latest Req (its version is the counter's: the
%%   common case, the handler passing on the Req each call returned) uses the
%%   snapshot;
%% - each call moves the counter on, puts the new snapshot in the Req it
%%   returns and publishes the new state: a call made by the connection
%%   process sends it to itself ({'$mustang_inline', StreamID, Version,
%%   State}, replacing the one before); a call from another process, which
%%   cannot take messages out of the connection's mailbox, stores it in this
%%   module's public ETS table, keyed by {ConnectionPid, StreamID}, and sets
%%   the counter's second slot so the connection clears the table;
%% - a call with a stale Req finds the latest state where it was published
%%   (another process looks into the connection's mailbox with process_info,
%%   a slow path for a rare case);
%% - the connection moves the counter on when the handler starts and when it
%%   returns (run/5), and takes the latest state back, so a Req used after its
%%   handler returned finds nothing and gets {error, closed}.
%% A request whose handler replies once costs one message to self: a shared
%% ETS table written and read by every connection was measured at about 4 us
%% of CPU per request more (wrk -c100, hello; the insert and take, their
%% locks and deferred frees).
%%
%% Calls for one stream must not be made from two processes at the same time
%% (the connection process is busy in the handler meanwhile, so a handler that
%% waits for the process it gave its Req to is fine). An inline handler must
%% not take messages that are not its own (a receive that matches anything):
%% taking Mustang's ends the connection with an error naming it.
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
	atomics:new(2, [{signed, false}]).

%% Calls apply(M, F, [Req2 | Args]) with Req2 carrying the stream State;
%% returns the result and the stream state the handler's calls left.
-spec run(counter(), module(), any(), {module(), atom(), [any()]}, {pid(), pos_integer()})
	-> {any(), any()}.
run(Counter, Module, State, {M, F, [Req | Args]}, Key = {_, StreamID}) ->
	Version = atomics:add_get(Counter, 1, 1),
	Result = erlang:apply(M, F, [Req#{inline => {Counter, Version, Module, State}} | Args]),
	%% Moving the counter on makes every Req of this stream stale.
	case atomics:add_get(Counter, 1, 1) - 1 of
		Version ->
			%% No call was made.
			{Result, State};
		Latest ->
			Found = own_latest(Key, Latest),
			flush_messages(StreamID),
			_ = atomics:exchange(Counter, 2, 0) =:= 1 andalso ets:delete(?TAB, Key),
			case Found of
				{ok, State2} -> {Result, State2};
				closed -> error({mustang_inline_state_taken, "The handler took a message that was "
					"Mustang's ({'$mustang_inline', ...}): an inline handler must only receive "
					"its own messages."})
			end
	end.

%% Carries out Info (a stream handler info: a response part, a body read...)
%% for the stream of Req; returns what the protocol module answered, or
%% {error, closed} when the stream is over, and Req with the new snapshot.
-spec info(mustang_req:req(), any(), timeout()) -> {any(), mustang_req:req()}.
info(Req = #{inline := {Counter, Version, Module, Snapshot}, pid := Pid, streamid := StreamID},
		Info, Timeout) ->
	Key = {Pid, StreamID},
	Self = self(),
	Latest = atomics:get(Counter, 1),
	State = if
		Latest =:= Version -> {ok, Snapshot};
		Self =:= Pid -> own_latest(Key, Latest);
		true ->
			case lookup_table(Key, Latest) of
				{ok, S} -> {ok, S};
				closed -> peek_message(Pid, StreamID, Latest)
			end
	end,
	case State of
		{ok, State0} ->
			{Result, State2} = Module:inline_info(Info, Timeout, State0),
			Version2 = atomics:add_get(Counter, 1, 1),
			_ = if
				Self =:= Pid ->
					flush_messages(StreamID),
					Self ! {'$mustang_inline', StreamID, Version2, State2};
				true ->
					true = ets:insert(?TAB, {Key, Version2, State2}),
					atomics:put(Counter, 2, 1)
			end,
			{Result, Req#{inline => {Counter, Version2, Module, State2}}};
		closed ->
			{{error, closed}, Req}
	end;
info(Req, _, _) ->
	{{error, closed}, Req}.

%% The latest state, for the connection process: in its own mailbox when it
%% made the last call, in the table when another process did.
own_latest(Key = {_, StreamID}, Version) ->
	receive
		{'$mustang_inline', StreamID, Version, State} -> {ok, State}
	after 0 ->
		lookup_table(Key, Version)
	end.

flush_messages(StreamID) ->
	receive
		{'$mustang_inline', StreamID, _, _} -> flush_messages(StreamID)
	after 0 ->
		ok
	end.

lookup_table(Key, Version) ->
	case ets:lookup(?TAB, Key) of
		[{_, Version, State}] -> {ok, State};
		_ -> closed
	end.

%% The latest state was published by the connection process, which is busy
%% in the handler: read it from its mailbox.
peek_message(Pid, StreamID, Version) ->
	case erlang:process_info(Pid, messages) of
		{messages, Messages} ->
			case [S || {'$mustang_inline', ID, V, S} <- Messages, ID =:= StreamID, V =:= Version] of
				[State | _] -> {ok, State};
				[] -> closed
			end;
		_ ->
			closed
	end.
