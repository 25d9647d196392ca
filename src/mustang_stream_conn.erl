%% The stream handler side of a multiplexed connection process: what a
%% connection that runs many requests at once does with the stream handler
%% chain (mustang_stream), whatever its protocol. A request starts the
%% chain; body data, mustang_req calls ({{ConnPid, StreamID}, Info}
%% messages) and the exits of the chain's processes go down it; the
%% commands that come back are executed, the protocol's part through the
%% connection module's callbacks; a stream ends once its handlers stopped
%% and its response was sent whole.
%%
%% Used by mustang_http3. The connection module (Mod) keeps the streams in
%% its state and gives them here through its callbacks:
%%   streams(St) -> {Streams, Pids, Opts}, set_streams(St, Streams, Pids)
%%   chain(St)                           the prepared chain (mustang_stream)
%%   stream_state(St, StreamID) -> idle | headers | done | gone
%%       nothing sent yet, the response head sent, the response sent whole,
%%       or the stream already forgotten by the protocol
%%   send(St, StreamID, Part)            a response part (mustang_stream)
%%   flow(St, StreamID, Size)            the handlers want Size more body bytes
%%   over_limits(St, StreamID)           whether an ack waits for sending
%%   reset(St, StreamID, internal_error | cancel)
%%   close_stream(St, StreamID)          the protocol forgets the stream
%%   maybe_close(St)                     the connection may end (no stream left)
%%   log(St, Level, Format, Args)
-module(mustang_stream_conn).

-export([start/5]).
-export([data/5]).
-export([info/4]).
-export([remove/4]).
-export([exit/5]).
-export([release/3]).
-export([terminate/4]).

-record(stream, {
	id :: non_neg_integer(),
	pid = undefined :: pid() | undefined,
	%% ack commands whose answer waits for the queued data to go.
	waiting = [] :: [{reference(), pid()}],
	chain :: mustang_stream:state() | undefined,
	%% Whether the stream handlers stopped (the stream ends once its
	%% response is sent), and why the stream ends, for terminate/3.
	stopped = false :: boolean(),
	reason = normal :: mustang_stream:reason(),
	%% min_recv_rate while the request body comes; too_slow once refused.
	rate = undefined :: undefined | too_slow | mustang_conn_chores:recv_rate()
}).

-opaque stream() :: #stream{}.
-export_type([stream/0]).

-type st() :: any().
-type id() :: non_neg_integer().

streams(Mod, St) ->
	{Streams, _, _} = Mod:streams(St),
	Streams.

put_stream(Mod, St, Stream = #stream{id = StreamID}) ->
	{Streams, Pids, _} = Mod:streams(St),
	Mod:set_streams(St, Streams#{StreamID => Stream}, Pids).

%% A new request: the chain starts (mustang_stream_h spawns the request
%% process).
-spec start(module(), st(), id(), mustang_req:req(), fin | nofin) -> st().
start(Mod, St0, StreamID, Req, IsFin) ->
	Chain0 = Mod:chain(St0),
	Stream = case IsFin of
		fin -> #stream{id = StreamID};
		nofin -> #stream{id = StreamID, rate = mustang_conn_chores:recv_rate_start()}
	end,
	St = put_stream(Mod, St0, Stream),
	try mustang_stream:init_prepared(StreamID, Req, Chain0) of
		{Commands, Chain} ->
			commands(Mod, put_stream(Mod, St, Stream#stream{chain = Chain}), StreamID, Commands)
	catch Class:Reason:Stacktrace ->
		crash(Mod, St, Stream, init, [StreamID, Req], Class, Reason, Stacktrace)
	end.

%% Request body data; min_recv_rate (mustang_conn_chores:recv_rate/3): a
%% body slower than the minimum is refused (the read fails, 408) and the
%% rest of it dropped.
-spec data(module(), st(), id(), fin | nofin, binary()) -> st().
data(Mod, St, StreamID, IsFin, Data) ->
	case streams(Mod, St) of
		#{StreamID := Stream} ->
			St2 = rate(Mod, St, Stream, IsFin, Data),
			case IsFin of
				fin -> maybe_end(Mod, St2, StreamID);
				nofin -> St2
			end;
		_ ->
			St
	end.

rate(_, St, #stream{rate = too_slow}, _, _) ->
	St;
rate(Mod, St, Stream = #stream{id = StreamID, rate = Rate = {_, _}}, IsFin, Data) ->
	{_, _, Opts} = Mod:streams(St),
	case maps:get(min_recv_rate, Opts, off) of
		off ->
			body(Mod, St, Stream, IsFin, Data);
		MinRate ->
			case mustang_conn_chores:recv_rate(MinRate, Rate, byte_size(Data)) of
				{ok, Rate2} ->
					body(Mod, St, Stream#stream{rate = Rate2}, IsFin, Data);
				too_slow ->
					info(Mod, put_stream(Mod, St, Stream#stream{rate = too_slow}), StreamID,
						{body_error, too_slow})
			end
	end;
rate(Mod, St, Stream, IsFin, Data) ->
	body(Mod, St, Stream, IsFin, Data).

body(Mod, St, Stream0 = #stream{id = StreamID, chain = Chain}, IsFin, Data) ->
	try mustang_stream:data(StreamID, IsFin, Data, Chain) of
		{Commands, Chain2} ->
			commands(Mod, put_stream(Mod, St, Stream0#stream{chain = Chain2}), StreamID, Commands)
	catch Class:Reason:Stacktrace ->
		crash(Mod, St, Stream0, data, [StreamID, IsFin, Data], Class, Reason, Stacktrace)
	end.

%% An info for the stream's handlers (a mustang_req call, a message sent to
%% {ConnPid, StreamID}, going_away...).
-spec info(module(), st(), id(), any()) -> st().
info(Mod, St, StreamID, Info) ->
	case streams(Mod, St) of
		#{StreamID := Stream = #stream{chain = Chain}} ->
			try mustang_stream:info(StreamID, Info, Chain) of
				{Commands, Chain2} ->
					commands(Mod, put_stream(Mod, St, Stream#stream{chain = Chain2}), StreamID,
						Commands)
			catch Class:Reason:Stacktrace ->
				crash(Mod, St, Stream, info, [StreamID, Info], Class, Reason, Stacktrace)
			end;
		_ ->
			%% The stream is gone: callers waiting for an answer get one.
			_ = case Info of
				{read_body, Pid, Ref, _, _} -> Pid ! {request_body, Ref, {error, closed}};
				{ack, Pid, Ref} -> Pid ! {Ref, {error, closed}};
				{relay, Pid, Ref} -> Pid ! {Ref, {error, closed}};
				_ -> ok
			end,
			St
	end.

crash(Mod, St, Stream = #stream{id = StreamID}, Callback, Args, Class, Reason, Stacktrace) ->
	commands(Mod, put_stream(Mod, St, Stream#stream{chain = undefined}), StreamID,
		[mustang_stream:make_error_log(Callback, Args, Class, Reason, Stacktrace),
			{internal_error, {Class, Reason}, 'A stream handler crashed.'}]).

commands(_, St, _, []) ->
	St;
commands(Mod, St, StreamID, [Command | Rest]) ->
	case streams(Mod, St) of
		#{StreamID := Stream} ->
			commands(Mod, command(Mod, St, Stream, Command), StreamID, Rest);
		_ ->
			_ = case Command of
				{ack, Pid, Ref} -> Pid ! {Ref, {error, closed}};
				_ -> ok
			end,
			commands(Mod, St, StreamID, Rest)
	end.

command(Mod, St, #stream{id = StreamID}, {flow, Size}) ->
	Mod:flow(St, StreamID, Size);
command(Mod, St, Stream, {spawn, Pid, _}) ->
	{Streams, Pids, _} = Mod:streams(St),
	Mod:set_streams(St, Streams#{Stream#stream.id => Stream#stream{pid = Pid}},
		Pids#{Pid => Stream#stream.id});
command(Mod, St, Stream = #stream{id = StreamID, waiting = Waiting}, {ack, Pid, Ref}) ->
	%% Answered once the data before it is sent, or queued within the limits.
	case Mod:over_limits(St, StreamID) of
		true -> put_stream(Mod, St, Stream#stream{waiting = [{Ref, Pid} | Waiting]});
		false -> Pid ! {Ref, ok}, St
	end;
command(Mod, St, _, {log, Level, Format, Args}) ->
	Mod:log(St, Level, Format, Args),
	St;
command(Mod, St, Stream, stop) ->
	stop(Mod, St, Stream);
command(Mod, St, Stream = #stream{id = StreamID}, Error = {internal_error, _, _}) ->
	Stream2 = Stream#stream{reason = Error},
	case Mod:stream_state(St, StreamID) of
		idle ->
			St2 = Mod:send(put_stream(Mod, St, Stream2#stream{stopped = true}), StreamID,
				{response, 500, #{}, <<>>}),
			maybe_end(Mod, St2, StreamID);
		done ->
			maybe_close_stream(Mod, St, Stream2#stream{stopped = true});
		_ ->
			Mod:log(St, debug, "mustang: stream ~b reset: the response could not be completed",
				[StreamID]),
			remove(Mod, Mod:reset(put_stream(Mod, St, Stream2), StreamID, internal_error), StreamID,
				{shutdown, {stream_error, internal_error}})
	end;
command(Mod, St, Stream = #stream{id = StreamID}, {error_response, Status, Headers, Body}) ->
	case Mod:stream_state(St, StreamID) of
		idle -> command(Mod, St, Stream, {response, Status, Headers, Body});
		_ -> St
	end;
command(Mod, St, #stream{id = StreamID}, Part) when element(1, Part) =:= data;
		element(1, Part) =:= trailers; element(1, Part) =:= response;
		element(1, Part) =:= headers; element(1, Part) =:= inform ->
	Mod:send(St, StreamID, Part);
command(_, St, _, _) ->
	%% push (no server push over this protocol), switch_protocol,
	%% set_options, and commands of other protocols.
	St.

%% The stream handlers are done: the response is completed if it is not
%% (204, or the end of a streamed body), and the stream ends once sent.
stop(Mod, St, Stream = #stream{id = StreamID}) ->
	Stopped = Stream#stream{stopped = true},
	case Mod:stream_state(St, StreamID) of
		idle ->
			maybe_end(Mod, Mod:send(put_stream(Mod, St, Stopped), StreamID,
				{response, 204, #{}, <<>>}), StreamID);
		headers ->
			maybe_end(Mod, Mod:send(put_stream(Mod, St, Stopped), StreamID,
				{data, fin, <<>>}), StreamID);
		_ ->
			maybe_close_stream(Mod, St, Stopped)
	end.

maybe_end(Mod, St, StreamID) ->
	case streams(Mod, St) of
		#{StreamID := Stream = #stream{stopped = true}} -> maybe_close_stream(Mod, St, Stream);
		_ -> St
	end.

%% A stream ends when its handlers stopped, its response was sent whole and
%% no caller is held back: its process is stopped, the handlers terminate.
maybe_close_stream(Mod, St, Stream = #stream{id = StreamID, stopped = true, waiting = []}) ->
	case Mod:stream_state(St, StreamID) of
		State when State =:= done; State =:= gone ->
			{Streams, Pids, _} = Mod:streams(St),
			Pids2 = case Stream#stream.pid of
				undefined -> Pids;
				Pid -> erlang:exit(Pid, {shutdown, stopped}), Pids#{Pid => undefined}
			end,
			terminate(Mod, St, Stream, Stream#stream.reason),
			St2 = Mod:set_streams(St, maps:remove(StreamID, Streams), Pids2),
			Mod:maybe_close(Mod:close_stream(St2, StreamID));
		_ ->
			put_stream(Mod, St, Stream)
	end;
maybe_close_stream(Mod, St, Stream) ->
	put_stream(Mod, St, Stream).

%% Queued data went out: held callers may go on, and a stopped stream may
%% end.
-spec release(module(), st(), id()) -> st().
release(Mod, St, StreamID) ->
	case streams(Mod, St) of
		#{StreamID := Stream = #stream{waiting = Waiting}} ->
			_ = [From ! {Tag, ok} || {Tag, From} <- lists:reverse(Waiting)],
			maybe_end(Mod, put_stream(Mod, St, Stream#stream{waiting = []}), StreamID);
		_ ->
			St
	end.

%% The stream ends now (the protocol has already forgotten it): its process
%% is stopped (its exit is then ignored), waiting callers are released, the
%% handlers terminate.
-spec remove(module(), st(), id(), {shutdown, any()}) -> st().
remove(Mod, St, StreamID, ExitReason) ->
	{Streams, Pids, _} = Mod:streams(St),
	case Streams of
		#{StreamID := Stream = #stream{pid = Pid, waiting = Waiting}} ->
			_ = [From ! {Tag, {error, closed}} || {Tag, From} <- Waiting],
			Pids2 = case Pid of
				undefined -> Pids;
				_ -> erlang:exit(Pid, ExitReason), Pids#{Pid => undefined}
			end,
			terminate(Mod, St, Stream, case Stream#stream.reason of
				normal -> terminate_reason(ExitReason);
				Reason -> Reason
			end),
			Mod:maybe_close(Mod:set_streams(St, maps:remove(StreamID, Streams), Pids2));
		_ ->
			St
	end.

terminate_reason({shutdown, stream_reset}) ->
	{stream_error, cancel, 'The client reset the stream.'};
terminate_reason({shutdown, {stream_error, Code}}) ->
	{stream_error, Code, 'The stream was reset.'}.

%% A process of the chain ended ({spawn, ...}): its exit goes down the
%% chain. StreamID is undefined for a stream already gone.
-spec exit(module(), st(), id() | undefined, pid(), any()) -> st().
exit(Mod, St, StreamID, Pid, Reason) ->
	case streams(Mod, St) of
		#{StreamID := Stream = #stream{pid = Pid}} ->
			info(Mod, put_stream(Mod, St, Stream#stream{pid = undefined}), StreamID,
				{'EXIT', Pid, Reason});
		_ ->
			Mod:maybe_close(St)
	end.

%% The handlers' terminate/3; a crash there is logged.
-spec terminate(module(), st(), stream(), mustang_stream:reason()) -> ok.
terminate(_, _, #stream{chain = undefined}, _) ->
	ok;
terminate(Mod, St, #stream{id = StreamID, chain = Chain}, Reason) ->
	try
		_ = mustang_stream:terminate(StreamID, Reason, Chain),
		ok
	catch Class:Reason2:Stacktrace ->
		{log, Level, Format, Args} = mustang_stream:make_error_log(terminate,
			[StreamID, Reason], Class, Reason2, Stacktrace),
		Mod:log(St, Level, Format, Args)
	end.
