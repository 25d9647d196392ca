%% Tracer stream handler: traces, with erlang:trace/3, the processes that run
%% the requests matching conditions given in the options, and hands every
%% trace message to a user callback. Requests that do not match are passed
%% on untouched (the conditions are checked once, in init/3).
%%
%%   stream_handlers => [mustang_tracer_h, mustang_stream_h]
%%
%% Protocol options (defaults in parentheses):
%%   tracer_callback (none)    fun((Event, State) -> State), see below; without
%%                             it nothing is traced
%%   tracer_match_specs (none) list of conditions that must all hold for the
%%                             request to be traced; without it nothing is
%%                             traced, [] traces every request. Conditions:
%%                               {method, Method}           e.g. <<"GET">>
%%                               {host, Host}
%%                               {path, Path}               exact
%%                               {path_start, Prefix}
%%                               {header, Name}             present (lowercase)
%%                               {header, Name, Value}      present with Value
%%                               {peer_ip, inet:ip_address()}
%%                               fun((StreamID, Req, Opts) -> boolean())
%%   tracer_flags ([send, 'receive', call, return_to, procs, monotonic_timestamp,
%%                 set_on_spawn])
%%                             erlang:trace/3 flags (any but `tracer`)
%%   logger (logger)           module used to log a crashing callback
%%
%% This module sets no trace patterns: for `call` events, set them yourself
%% (erlang:trace_pattern/3), preferably in advance, or from the callback's
%% `init` call.
%%
%% Callback contract. A tracer process is started for each traced stream; it
%% calls, in that order:
%%   Callback(init, {StreamID, Req, Opts}) -> State   before any trace event
%%   Callback(TraceMsg, State) -> State               for each trace message
%%       ({trace, Pid, ...} or {trace_ts, Pid, ..., Timestamp}, as erlang:trace/3
%%       sends them)
%%   Callback(terminate, State)                       once the stream ended and
%%       the trace messages of its processes were delivered
%% then exits, which stops all tracing it did. If the callback crashes, the
%% crash is logged through `logger`, the tracer exits and tracing of this
%% stream stops; the connection is not affected.
%%
%% What is traced. The process that runs the request:
%% - HTTP/1.1 inline mode (the default): the connection process itself, from
%%   init/3 to terminate/3 (events of the connection's own work for this
%%   request, such as socket messages, are included);
%% - HTTP/1.1 process mode and HTTP/2: the request process that a later handler
%%   starts (the {spawn, Pid, _} command). The connection process is traced
%%   with set_on_first_spawn while the rest of the chain runs its init/3, so
%%   that the process inherits the flags from its first instruction (the few
%%   events of the connection during that call, such as the spawn, are
%%   delivered too); processes announced later with {spawn, ...} are traced
%%   as they are announced.
%% With set_on_spawn (default) the processes these start are traced as well.
%% Tracing stops when the stream ends. A process has one tracer at most: if
%% the connection or request process is already traced by something else,
%% the stream is not traced.
-module(mustang_tracer_h).
-behaviour(mustang_stream).

-export([init/3]).
-export([data/4]).
-export([info/3]).
-export([terminate/3]).
-export([early_error/5]).

%% Internal: the tracer process.
-export([tracer_init/4]).

-type match_spec() :: {method, binary()} | {host, binary()} | {path, binary()}
	| {path_start, binary()} | {header, binary()} | {header, binary(), binary()}
	| {peer_ip, inet:ip_address()}
	| fun((mustang_stream:streamid(), mustang_req:req(), map()) -> boolean()).
-type callback() :: fun((init | terminate | tuple(), any()) -> any()).
-export_type([match_spec/0, callback/0]).

-define(DEFAULT_FLAGS, [send, 'receive', call, return_to, procs, monotonic_timestamp,
	set_on_spawn]).

-record(state, {
	next :: mustang_stream:state(),
	%% undefined when the stream is not traced.
	tracer :: pid() | undefined,
	mode = inline :: inline | process,
	%% The flags we set, without {tracer, _}.
	flags = [] :: [atom()]
}).

%% When `tracer_callback` and `tracer_match_specs` are set and the request
%% matches every condition (and nothing else traces the connection), starts a
%% tracer process for the stream and traces, with `tracer_flags`, the process
%% that runs the request (see the module's head comment); otherwise only
%% passes everything on.
-spec init(mustang_stream:streamid(), mustang_req:req(), map())
	-> {mustang_stream:commands(), #state{}}.
init(StreamID, Req, Opts) ->
	case Opts of
		#{tracer_callback := Callback, tracer_match_specs := Specs}
				when is_function(Callback, 2), is_list(Specs) ->
			%% A connection that another tracer traces is left to it.
			case match(Specs, StreamID, Req, Opts)
					andalso erlang:trace_info(self(), tracer) =:= {tracer, []} of
				true -> init_traced(StreamID, Req, Opts, Callback);
				false -> init_untraced(StreamID, Req, Opts)
			end;
		_ ->
			init_untraced(StreamID, Req, Opts)
	end.

init_untraced(StreamID, Req, Opts) ->
	{Commands, Next} = mustang_stream:init(StreamID, Req, Opts),
	{Commands, #state{next = Next}}.

init_traced(StreamID, Req, Opts, Callback) ->
	Flags = [F || F <- maps:get(tracer_flags, Opts, ?DEFAULT_FLAGS),
		is_atom(F), F =/= set_on_first_spawn],
	Logger = maps:get(logger, Opts, logger),
	%% Started before any flag is set so that it is never traced itself.
	Tracer = spawn(?MODULE, tracer_init, [self(), Callback, Logger, {StreamID, Req, Opts}]),
	Mode = case Req of
		#{mode := process} -> process;
		_ -> inline
	end,
	case Mode of
		inline ->
			case set_trace(self(), Flags, Tracer) of
				true ->
					{Commands, Next} = mustang_stream:init(StreamID, Req, Opts),
					{Commands, #state{next = Next, tracer = Tracer, mode = inline,
						flags = Flags}};
				false ->
					stop_tracer(Tracer),
					init_untraced(StreamID, Req, Opts)
			end;
		process ->
			%% The request process inherits the flags (all but set_on_spawn)
			%% before it runs anything; the connection stops being traced
			%% right after.
			Own = [set_on_first_spawn | Flags -- [set_on_spawn]],
			case set_trace(self(), Own, Tracer) of
				true ->
					{Commands, Next} = try
						mustang_stream:init(StreamID, Req, Opts)
					after
						_ = erlang:trace(self(), false, Own)
					end,
					State = #state{next = Next, tracer = Tracer, mode = process, flags = Flags},
					trace_spawned(Commands, State),
					{Commands, State};
				false ->
					stop_tracer(Tracer),
					init_untraced(StreamID, Req, Opts)
			end
	end.

%% Leaves alone a process that another tracer traces (erlang:trace/3 would
%% take it over) or that is gone.
set_trace(Pid, Flags, Tracer) ->
	case erlang:trace_info(Pid, tracer) of
		{tracer, Current} when Current =:= []; Current =:= Tracer ->
			try erlang:trace(Pid, true, [{tracer, Tracer} | Flags]) of
				_ -> true
			catch error:badarg ->
				false
			end;
		_ ->
			false
	end.

%% Processes started by the rest of the chain get the full flags (set_on_spawn
%% included, which set_on_first_spawn does not pass on).
trace_spawned(Commands, #state{tracer = Tracer, flags = Flags}) ->
	_ = [set_trace(Pid, Flags, Tracer) || {spawn, Pid, _} <- Commands],
	ok.

match([], _, _, _) ->
	true;
match([Spec | Tail], StreamID, Req, Opts) ->
	case match1(Spec, StreamID, Req, Opts) of
		true -> match(Tail, StreamID, Req, Opts);
		false -> false
	end.

match1({method, Method}, _, #{method := Method}, _) -> true;
match1({host, Host}, _, #{host := Host}, _) -> true;
match1({path, Path}, _, #{path := Path}, _) -> true;
match1({path_start, Prefix}, _, #{path := Path}, _) ->
	Size = byte_size(Prefix),
	case Path of
		<<Prefix:Size/binary, _/bits>> -> true;
		_ -> false
	end;
match1({header, Name}, _, #{headers := Headers}, _) ->
	is_map_key(Name, Headers);
match1({header, Name, Value}, _, #{headers := Headers}, _) ->
	case Headers of
		#{Name := Value} -> true;
		#{Name := Other} -> iolist_to_binary(Other) =:= Value;
		_ -> false
	end;
match1({peer_ip, IP}, _, #{peer := {IP, _}}, _) -> true;
match1(Fun, StreamID, Req, Opts) when is_function(Fun, 3) ->
	Fun(StreamID, Req, Opts) =:= true;
match1(_, _, _, _) -> false.

%% Passes the data on, and traces the processes the commands that come back
%% spawn.
-spec data(mustang_stream:streamid(), mustang_stream:fin(), binary(), #state{})
	-> {mustang_stream:commands(), #state{}}.
data(StreamID, IsFin, Data, State = #state{next = Next0}) ->
	{Commands, Next} = mustang_stream:data(StreamID, IsFin, Data, Next0),
	spawned(Commands, State),
	{Commands, State#state{next = Next}}.

%% Passes the info on, and traces the processes the commands that come back
%% spawn.
-spec info(mustang_stream:streamid(), any(), #state{}) -> {mustang_stream:commands(), #state{}}.
info(StreamID, Info, State = #state{next = Next0}) ->
	{Commands, Next} = mustang_stream:info(StreamID, Info, Next0),
	spawned(Commands, State),
	{Commands, State#state{next = Next}}.

spawned(_, #state{tracer = undefined}) ->
	ok;
spawned(Commands, State) ->
	trace_spawned(Commands, State).

%% Runs the rest of the chain, stops tracing the connection (inline mode) and
%% tells the tracer to deliver what is left and call the callback's
%% `terminate`.
-spec terminate(mustang_stream:streamid(), mustang_stream:reason(), #state{}) -> any().
terminate(StreamID, Reason, #state{next = Next, tracer = undefined}) ->
	mustang_stream:terminate(StreamID, Reason, Next);
terminate(StreamID, Reason, #state{next = Next, tracer = Tracer, mode = Mode, flags = Flags}) ->
	try
		mustang_stream:terminate(StreamID, Reason, Next)
	after
		%% The connection outlives the stream: it must not stay traced.
		_ = case Mode of
			inline -> erlang:trace(self(), false, Flags);
			process -> ok
		end,
		stop_tracer(Tracer)
	end.

%% Passes the early error on (nothing ran, nothing is traced).
-spec early_error(mustang_stream:streamid(), mustang_stream:reason(),
	mustang_stream:partial_req(), Resp, map()) -> Resp
	when Resp :: mustang_stream:resp_command().
early_error(StreamID, Reason, PartialReq, Resp, Opts) ->
	mustang_stream:early_error(StreamID, Reason, PartialReq, Resp, Opts).

stop_tracer(Tracer) ->
	Tracer ! {?MODULE, stop},
	ok.

%% The tracer process. It ends when told to, or when the connection dies.

%% @private The tracer process of one traced stream.
-spec tracer_init(pid(), callback(), module(), {mustang_stream:streamid(), mustang_req:req(), map()})
	-> ok.
tracer_init(Conn, Callback, Logger, InitArg) ->
	MRef = monitor(process, Conn),
	case call(Callback, init, InitArg, Logger) of
		{ok, State} -> tracer_loop(MRef, Callback, Logger, State);
		error -> ok
	end.

tracer_loop(MRef, Callback, Logger, State0) ->
	receive
		{?MODULE, stop} ->
			tracer_drain(erlang:trace_delivered(all), Callback, Logger, State0);
		{'DOWN', MRef, process, _, _} ->
			tracer_drain(erlang:trace_delivered(all), Callback, Logger, State0);
		Msg when element(1, Msg) =:= trace; element(1, Msg) =:= trace_ts ->
			case call(Callback, Msg, State0, Logger) of
				{ok, State} -> tracer_loop(MRef, Callback, Logger, State);
				error -> ok
			end;
		_ ->
			tracer_loop(MRef, Callback, Logger, State0)
	end.

%% Delivers the trace messages still on their way, then terminate.
tracer_drain(Ref, Callback, Logger, State0) ->
	receive
		{trace_delivered, all, Ref} ->
			_ = call(Callback, terminate, State0, Logger),
			ok;
		Msg when element(1, Msg) =:= trace; element(1, Msg) =:= trace_ts ->
			case call(Callback, Msg, State0, Logger) of
				{ok, State} -> tracer_drain(Ref, Callback, Logger, State);
				error -> ok
			end;
		_ ->
			tracer_drain(Ref, Callback, Logger, State0)
	end.

call(Callback, Event, State, Logger) ->
	try
		{ok, Callback(Event, State)}
	catch Class:Reason:Stacktrace ->
		_ = Logger:error("mustang_tracer_h: tracer_callback crashed with ~0p:~0p on ~0p~n"
			"stacktrace: ~p", [Class, Reason, Event, Stacktrace]),
		error
	end.
