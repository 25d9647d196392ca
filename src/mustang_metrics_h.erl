%% Metrics stream handler: gathers what happened to a stream (times, sizes,
%% statuses, processes) and gives it, as one map, to a user callback when the
%% stream ends, and once per early error. The map has the keys Cowboy
%% documents for cowboy_metrics_h (see doc/guide/streams.md for each key).
%% Times are erlang:monotonic_time() values, in native units.
%%
%% Put it before the handlers whose commands it should see, usually first:
%%   stream_handlers => [mustang_metrics_h, mustang_stream_h]
%%
%% Protocol options (defaults in parentheses):
%%   metrics_callback (none)            fun((metrics()) -> any()), called once
%%                                      per stream from terminate/3 and once per
%%                                      early error; without it the handler only
%%                                      passes everything on. A crash of the
%%                                      callback is caught and logged through the
%%                                      `logger` option module.
%%   metrics_req_filter (identity)      fun((Req) -> map()) applied to the Req
%%                                      stored under `req` (drop what you do not
%%                                      need: the map lives as long as the stream)
%%   metrics_resp_headers_filter (identity)
%%                                      fun((Headers) -> Headers) applied to the
%%                                      response headers stored
%%   logger (logger)                    module used to log a crashing callback
%%
%% reason is the terminate reason, or the {internal_error, Reason, Text}
%% command that ended the stream when the connection terminates it as normal.
%% resp_status is the final status sent, or 500 when the stream ended with
%% an {internal_error, _, _} command before any response (the connection
%% then sends 500), or undefined when nothing was sent.
%%
%% The handler adds entries to the `user_data` map when a request handler
%% calls mustang_req:cast({set_options, #{metrics_user_data => Map}}, Req):
%% Map is merged into user_data (later values win). The same option given in
%% a {set_options, _} command coming up the chain is merged too.
-module(mustang_metrics_h).
-behaviour(mustang_stream).

-export([init/3]).
-export([data/4]).
-export([info/3]).
-export([terminate/3]).
-export([early_error/5]).

-type proc_metrics() :: #{pid() => #{spawn := integer(), exit => integer(), reason => any()}}.
-type informational_metrics() :: #{status := mustang_req:status(),
	headers := mustang_req:headers(), time := integer()}.
-type metrics() :: #{
	ref := any(),
	pid := pid(),
	streamid := mustang_stream:streamid(),
	reason := mustang_stream:reason(),
	req => map(),
	partial_req => mustang_stream:partial_req(),
	resp_status := mustang_req:status() | undefined,
	resp_headers := mustang_req:headers() | undefined,
	req_start => integer(),
	req_end => integer(),
	req_body_start => integer() | undefined,
	req_body_end => integer() | undefined,
	resp_start => integer() | undefined,
	resp_end => integer() | undefined,
	early_error_time => integer(),
	procs => proc_metrics(),
	informational => [informational_metrics()],
	req_body_length => non_neg_integer(),
	resp_body_length => non_neg_integer(),
	user_data => map()
}.
-export_type([metrics/0, proc_metrics/0, informational_metrics/0]).

-record(state, {
	next :: mustang_stream:state(),
	%% undefined: no callback, everything is passed on untouched.
	callback :: fun((metrics()) -> any()) | undefined,
	resp_headers_filter :: fun((mustang_req:headers()) -> mustang_req:headers()) | undefined,
	logger :: module(),
	ref :: any(),
	pid :: pid() | undefined,
	req :: map() | undefined,
	req_start :: integer() | undefined,
	req_body_start :: integer() | undefined,
	req_body_end :: integer() | undefined,
	req_body_length = 0 :: non_neg_integer(),
	resp_status :: mustang_req:status() | undefined,
	resp_headers :: mustang_req:headers() | undefined,
	resp_start :: integer() | undefined,
	resp_end :: integer() | undefined,
	resp_body_length = 0 :: non_neg_integer(),
	procs = #{} :: proc_metrics(),
	%% The {internal_error, Reason, Text} command that ended the stream.
	internal_error :: {internal_error, any(), iodata()} | undefined,
	%% Most recent first.
	informational = [] :: [informational_metrics()],
	user_data = #{} :: map()
}).

%% With a `metrics_callback`, records the request's start time and the Req
%% (through `metrics_req_filter`), then runs the rest of the chain and notes
%% the processes it spawns; without one, only passes everything on.
-spec init(mustang_stream:streamid(), mustang_req:req(), map())
	-> {mustang_stream:commands(), #state{}}.
init(StreamID, Req, Opts) ->
	case Opts of
		#{metrics_callback := Callback} when is_function(Callback, 1) ->
			ReqStart = erlang:monotonic_time(),
			Filtered = case Opts of
				#{metrics_req_filter := ReqFilter} -> ReqFilter(Req);
				_ -> Req
			end,
			{Commands, Next} = mustang_stream:init(StreamID, Req, Opts),
			State0 = #state{next = Next, callback = Callback,
				resp_headers_filter = maps:get(metrics_resp_headers_filter, Opts, undefined),
				logger = maps:get(logger, Opts, logger),
				ref = maps:get(ref, Req, undefined), pid = maps:get(pid, Req, self()),
				req = Filtered, req_start = ReqStart},
			{Commands, fold(Commands, State0)};
		_ ->
			{Commands, Next} = mustang_stream:init(StreamID, Req, Opts),
			{Commands, #state{next = Next, logger = logger}}
	end.

%% Counts the request body (its start, end and length), then passes it on.
-spec data(mustang_stream:streamid(), mustang_stream:fin(), binary(), #state{})
	-> {mustang_stream:commands(), #state{}}.
data(StreamID, IsFin, Data, State0 = #state{next = Next0, callback = undefined}) ->
	{Commands, Next} = mustang_stream:data(StreamID, IsFin, Data, Next0),
	{Commands, State0#state{next = Next}};
data(StreamID, IsFin, Data, State0 = #state{next = Next0, req_body_start = BodyStart0,
		req_body_length = BodyLength}) ->
	Now = erlang:monotonic_time(),
	BodyStart = case BodyStart0 of
		undefined -> Now;
		_ -> BodyStart0
	end,
	BodyEnd = case IsFin of
		fin -> Now;
		nofin -> undefined
	end,
	{Commands, Next} = mustang_stream:data(StreamID, IsFin, Data, Next0),
	State = State0#state{next = Next, req_body_start = BodyStart, req_body_end = BodyEnd,
		req_body_length = BodyLength + byte_size(Data)},
	{Commands, fold(Commands, State)}.

%% Passes the info on and records what the commands that come back say:
%% informational responses, the response's status, headers (through
%% `metrics_resp_headers_filter`), body length and times, spawned processes
%% and their exits, and `metrics_user_data` given with `set_options`.
-spec info(mustang_stream:streamid(), any(), #state{}) -> {mustang_stream:commands(), #state{}}.
info(StreamID, Info, State0 = #state{next = Next0, callback = undefined}) ->
	{Commands, Next} = mustang_stream:info(StreamID, Info, Next0),
	{Commands, State0#state{next = Next}};
info(StreamID, Info, State0 = #state{next = Next0}) ->
	State1 = info_event(Info, State0),
	{Commands, Next} = mustang_stream:info(StreamID, Info, Next0),
	{Commands, fold(Commands, State1#state{next = Next})}.

info_event({'EXIT', Pid, Reason}, State = #state{procs = Procs}) ->
	case Procs of
		#{Pid := Proc} ->
			State#state{procs = Procs#{Pid => Proc#{exit => erlang:monotonic_time(),
				reason => Reason}}};
		_ ->
			State
	end;
info_event({set_options, Opts}, State) ->
	set_options(Opts, State);
info_event(_, State) ->
	State.

set_options(#{metrics_user_data := Data}, State = #state{user_data = UserData})
		when is_map(Data) ->
	State#state{user_data = maps:merge(UserData, Data)};
set_options(_, State) ->
	State.

%% What the commands going up tell about the response.
fold([], State) ->
	State;
fold([{inform, Status, Headers} | Tail], State = #state{informational = Infos}) ->
	Info = #{status => Status, headers => filter_headers(Headers, State),
		time => erlang:monotonic_time()},
	fold(Tail, State#state{informational = [Info | Infos]});
fold([{response, Status, Headers, Body} | Tail], State) ->
	fold(Tail, response(Status, Headers, Body, State));
fold([{error_response, Status, Headers, Body} | Tail], State = #state{resp_status = undefined}) ->
	fold(Tail, response(Status, Headers, Body, State));
fold([{headers, Status, Headers} | Tail], State) ->
	fold(Tail, State#state{resp_status = Status, resp_headers = filter_headers(Headers, State),
		resp_start = erlang:monotonic_time()});
fold([{data, IsFin, Body} | Tail], State = #state{resp_body_length = Length}) ->
	RespEnd = case IsFin of
		fin -> erlang:monotonic_time();
		nofin -> State#state.resp_end
	end,
	fold(Tail, State#state{resp_body_length = Length + body_length(Body), resp_end = RespEnd});
fold([{trailers, _} | Tail], State) ->
	fold(Tail, State#state{resp_end = erlang:monotonic_time()});
fold([{switch_protocol, Headers, _, _} | Tail], State) ->
	Now = erlang:monotonic_time(),
	fold(Tail, State#state{resp_status = 101, resp_headers = filter_headers(Headers, State),
		resp_start = Now, resp_end = Now});
fold([{spawn, Pid, _} | Tail], State = #state{procs = Procs}) ->
	fold(Tail, State#state{procs = Procs#{Pid => #{spawn => erlang:monotonic_time()}}});
fold([{set_options, Opts} | Tail], State) ->
	fold(Tail, set_options(Opts, State));
%% The connection answers 500 when nothing was sent yet.
fold([Error = {internal_error, _, _} | Tail], State = #state{resp_status = undefined}) ->
	Now = erlang:monotonic_time(),
	fold(Tail, State#state{resp_status = 500, resp_headers = filter_headers(#{}, State),
		resp_start = Now, resp_end = Now, internal_error = Error});
fold([Error = {internal_error, _, _} | Tail], State) ->
	fold(Tail, State#state{internal_error = Error});
fold([_ | Tail], State) ->
	fold(Tail, State).

response(Status, Headers, Body, State = #state{resp_body_length = Length}) ->
	Now = erlang:monotonic_time(),
	State#state{resp_status = Status, resp_headers = filter_headers(Headers, State),
		resp_start = Now, resp_end = Now, resp_body_length = Length + body_length(Body)}.

filter_headers(Headers, #state{resp_headers_filter = undefined}) ->
	Headers;
filter_headers(Headers, #state{resp_headers_filter = Filter}) ->
	Filter(Headers).

body_length({sendfile, _, Length, _}) -> Length;
body_length(Data) -> iolist_size(Data).

%% Runs the rest of the chain, then calls `metrics_callback` with the stream's
%% metrics map (`metrics()`, Cowboy's keys: `ref`, `pid`, `streamid`,
%% `reason`, `req`, `resp_status`, `resp_headers`, `req_start`, `req_end`,
%% `req_body_start`, `req_body_end`, `req_body_length`, `resp_start`,
%% `resp_end`, `resp_body_length`, `informational`, `procs`, `user_data`). A
%% crash of the callback is logged, never raised.
-spec terminate(mustang_stream:streamid(), mustang_stream:reason(), #state{}) -> any().
terminate(StreamID, Reason, #state{next = Next, callback = undefined}) ->
	mustang_stream:terminate(StreamID, Reason, Next);
terminate(StreamID, Reason, State = #state{next = Next, callback = Callback}) ->
	Metrics = #{
		ref => State#state.ref,
		pid => State#state.pid,
		streamid => StreamID,
		reason => metrics_reason(Reason, State),
		req => State#state.req,
		resp_status => State#state.resp_status,
		resp_headers => State#state.resp_headers,
		req_start => State#state.req_start,
		req_end => erlang:monotonic_time(),
		req_body_start => State#state.req_body_start,
		req_body_end => State#state.req_body_end,
		resp_start => State#state.resp_start,
		resp_end => State#state.resp_end,
		procs => State#state.procs,
		informational => lists:reverse(State#state.informational),
		req_body_length => State#state.req_body_length,
		resp_body_length => State#state.resp_body_length,
		user_data => State#state.user_data
	},
	call(Callback, Metrics, State#state.logger),
	mustang_stream:terminate(StreamID, Reason, Next).

%% A stream ended by an {internal_error, _, _} command says so even when the
%% connection terminates it as `normal`.
metrics_reason(normal, #state{internal_error = Error}) when Error =/= undefined -> Error;
metrics_reason(Reason, _) -> Reason.

%% Passes the early error on, then calls `metrics_callback` once with its
%% metrics (`partial_req`, `early_error_time`, the status and headers of the
%% response that will be sent).
-spec early_error(mustang_stream:streamid(), mustang_stream:reason(),
	mustang_stream:partial_req(), Resp, map()) -> Resp
	when Resp :: mustang_stream:resp_command().
early_error(StreamID, Reason, PartialReq, Resp0, Opts) ->
	Time = erlang:monotonic_time(),
	Resp = mustang_stream:early_error(StreamID, Reason, PartialReq, Resp0, Opts),
	case Opts of
		#{metrics_callback := Callback} when is_function(Callback, 1) ->
			{response, Status, Headers, Body} = Resp,
			RespHeaders = case Opts of
				#{metrics_resp_headers_filter := Filter} -> Filter(Headers);
				_ -> Headers
			end,
			Metrics = #{
				ref => maps:get(ref, PartialReq, undefined),
				pid => maps:get(pid, PartialReq, self()),
				streamid => StreamID,
				reason => Reason,
				partial_req => PartialReq,
				resp_status => Status,
				resp_headers => RespHeaders,
				early_error_time => Time,
				resp_body_length => body_length(Body)
			},
			call(Callback, Metrics, maps:get(logger, Opts, logger));
		_ ->
			ok
	end,
	Resp.

%% The user's callback must not end the connection.
call(Callback, Metrics, Logger) ->
	try
		_ = Callback(Metrics),
		ok
	catch Class:Reason:Stacktrace ->
		_ = Logger:error("mustang_metrics_h: metrics_callback crashed with ~0p:~0p~n"
			"stacktrace: ~p", [Class, Reason, Stacktrace]),
		ok
	end.
