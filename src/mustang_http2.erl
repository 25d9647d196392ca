%% The HTTP/2 connection process (RFC 9113). One per connection; it owns the
%% socket in {active, N} mode, the timers and the stream handlers, and leaves
%% the protocol itself (frames, stream states, settings, HPACK, flow control,
%% send queues, rate limits) to the pure mustang_http2_machine. Each stream's
%% middlewares and handler run in a process of its own. Handlers use mustang_req exactly as over HTTP/1.1:
%% their calls arrive here as the same stream commands (see
%% doc/internals/http2.md).
%%
%% Entered from mustang_http1 (h2c prior knowledge or Upgrade: h2c) or from
%% mustang_conn (ALPN h2), always by tail call, so the process keeps its pid,
%% its supervisor and the dynamic buffer state.
%%
%% Protocol options, besides the shared env, middlewares, active_n,
%% dynamic_buffer, idle_timeout, hibernate_after and logger (defaults in
%% parentheses):
%%   protocols ([http2, http])         which protocols the listener serves
%%   alpn_default_protocol (http)      protocol for TLS clients that send no ALPN
%%   enable_connect_protocol (false)   RFC 8441 extended CONNECT
%%   max_concurrent_streams (100)      more are refused with REFUSED_STREAM
%%   initial_connection_window_size (16777216)
%%   connection_window_update_threshold (4194304)
%%                                     bytes received before the connection
%%                                     window is topped up again
%%   initial_stream_window_size (65535) advertised SETTINGS_INITIAL_WINDOW_SIZE
%%   stream_window_margin_size (65535) granted beyond what a body read asks for
%%   stream_window_update_threshold (163840) smallest WINDOW_UPDATE step (a
%%                                     quarter of the window when larger, half
%%                                     of it when smaller)
%%   max_stream_window_size (8388608) the most a stream's window grows to
%%   max_frame_size_received (16384)   advertised SETTINGS_MAX_FRAME_SIZE
%%   max_frame_size_sent (infinity)    cap on the peer's SETTINGS_MAX_FRAME_SIZE
%%   max_decode_table_size (4096)      advertised SETTINGS_HEADER_TABLE_SIZE
%%   max_encode_table_size (4096)      cap on the peer's SETTINGS_HEADER_TABLE_SIZE
%%   max_header_list_size (65536)      decoded request headers; above: 431
%%   max_header_block_size (65536)     encoded HEADERS + CONTINUATION; above:
%%                                     GOAWAY ENHANCE_YOUR_CALM
%%   preface_timeout (5000)            ms to receive the preface and SETTINGS
%%   settings_timeout (5000)           ms for the peer to acknowledge SETTINGS
%%   max_cancel_stream_rate ({500, 10000})
%%                                     streams reset by the client before their
%%                                     response ended, plus refused streams, per ms
%%   max_overhead_frame_rate ({2000, 10000})
%%                                     frames that do no work (SETTINGS, PING,
%%                                     PRIORITY, needless WINDOW_UPDATE, empty
%%                                     DATA) per ms
%%   flow_control_timeout (30000)      ms response data may wait on a window the
%%                                     client does not open
%%   stream_send_buffer_size (262144)  queued response bytes per stream, and
%%   connection_send_buffer_size (1048576)
%%                                     per connection, above which stream_body
%%                                     blocks the handler
%% Every limit ends the connection with GOAWAY ENHANCE_YOUR_CALM and a log
%% line, except max_header_list_size (a 431 response on that stream).
-module(mustang_http2).

-export([init/6]).
-export([loop/2]).
-export([defaults/0]).
-export([conn_opts/1]).
-export([read_file/3]).

-type opts() :: mustang_opts:http2_opts().
-export_type([opts/0]).

-export([system_continue/3]).
-export([system_terminate/4]).
-export([system_code_change/4]).

-define(DEFAULTS, #{
	protocols => [http2, http],
	alpn_default_protocol => http,
	enable_connect_protocol => false,
	max_concurrent_streams => 100,
	initial_connection_window_size => 16777216,
	connection_window_update_threshold => 4194304,
	initial_stream_window_size => 65535,
	stream_window_margin_size => 65535,
	stream_window_update_threshold => 163840,
	max_stream_window_size => 8388608,
	max_frame_size_received => 16384,
	max_frame_size_sent => infinity,
	max_decode_table_size => 4096,
	max_encode_table_size => 4096,
	max_header_list_size => 65536,
	max_header_block_size => 65536,
	preface_timeout => 5000,
	settings_timeout => 5000,
	max_cancel_stream_rate => {500, 10000},
	max_overhead_frame_rate => {2000, 10000},
	flow_control_timeout => 30000,
	stream_send_buffer_size => 262144,
	connection_send_buffer_size => 1048576,
	min_recv_rate => {1024, 30000}
}).

%% Output is written when the mailbox is empty or when this much is pending.
-define(OUT_FLUSH, 65536).

%% What the process keeps of a stream; the machine keeps the protocol side.
-record(stream, {
	id :: pos_integer(),
	pid :: pid() | undefined,
	%% ack commands whose answer waits for the queue to drain.
	waiting = [] :: [{reference(), pid()}],
	%% The stream handlers, and whether they stopped (the stream ends once
	%% its response is sent).
	chain :: mustang_stream:state(),
	stopped = false :: boolean(),
	%% Why the stream ends, for terminate/3.
	reason = normal :: mustang_stream:reason(),
	%% min_recv_rate while the request body comes: the current period's
	%% start and bytes; too_slow once refused (what follows is dropped).
	rate = undefined :: undefined | too_slow | mustang_conn_chores:recv_rate()
}).

-record(st, {
	parent :: pid(),
	ref :: mustang:ref(),
	transport :: module(),
	socket :: mustang_transport:socket(),
	messages :: mustang_transport:messages(),
	opts :: map(),
	%% The first stream handler and its options.
	chain :: mustang_stream:prepared(),
	peer :: {inet:ip_address(), inet:port_number()} | undefined,
	sock :: {inet:ip_address(), inet:port_number()} | undefined,
	cert :: binary() | undefined,
	%% The PROXY protocol header (option proxy_header), for the Req.
	proxy_header = undefined :: undefined | mustang_proxy_header:info(),
	scheme :: binary(),
	active_n :: mustang_conn_chores:active(),
	dynbuf :: mustang_dynbuf:dynbuf() | undefined,
	m :: mustang_http2_machine:machine(),
	settings_timer = undefined :: undefined | reference(),
	preface_timer = undefined :: undefined | reference(),
	%% The flow-control timer, and the machine's blocked_since it is for.
	flow_timer = undefined :: undefined | reference(),
	flow_since = undefined :: undefined | integer(),
	%% Streams, and the stream of each handler process.
	streams = #{} :: #{pos_integer() => #stream{}},
	pids = #{} :: #{pid() => pos_integer() | undefined},
	quiet = 0 :: non_neg_integer(),
	received = false :: boolean()
}).

%% Options.

-spec defaults() -> map().
defaults() ->
	?DEFAULTS.

%% The options of an HTTP/2 connection of a listener with options Opts: the
%% defaults of both protocols (those they share have theirs in
%% mustang_http1) and the machine's file reader. Kept in persistent_term by
%% mustang_registry, so that connections do not copy them.
-spec conn_opts(map()) -> map().
conn_opts(Opts) ->
	(maps:merge(?DEFAULTS, mustang_http1:conn_opts(Opts)))#{read_file => fun ?MODULE:read_file/3}.

%% Connection start.

%% Opts are conn_opts/1's (mustang_registry:get_conn_opts/2), not copied
%% into the process. Conn carries what the previous protocol knew: buffer
%% (bytes already read, starting with the client preface), dynbuf, peer,
%% sock, cert, proxy_header (the PROXY protocol header, option
%% proxy_header), and for an Upgrade: h2c request the request itself as
%% {upgrade, Request, Settings}.
-spec init(pid(), mustang:ref(), module(), mustang_transport:socket(), map(), map())
	-> no_return().
init(Parent, Ref, Transport, Socket, Opts, Conn) ->
	process_flag(trap_exit, true),
	ok = mustang_conns_sup:protocol(Parent, http2),
	ActiveN0 = maps:get(active_n, Opts),
	ActiveN = mustang_conn_chores:active(Transport, ActiveN0, maps:get(adaptive_active, Opts)),
	DynBuf = case Conn of
		#{dynbuf := D} -> D;
		_ -> mustang_dynbuf:for_listener(Ref, maps:get(dynamic_buffer, Opts))
	end,
	SockOpts = case mustang_dynbuf:size(DynBuf) of
		undefined -> [{active, ActiveN0}];
		Size -> [{active, ActiveN0}, {buffer, Size}]
	end,
	Info = case Conn of
		#{peer := P, sock := S} -> {ok, P, S, maps:get(cert, Conn, undefined)};
		_ -> mustang_transport:socket_info(Transport, Socket)
	end,
	case {Transport:setopts(Socket, SockOpts), Info} of
		{ok, {ok, Peer, Sock, Cert}} ->
			%% Our SETTINGS are queued by the machine; their timer is ours.
			M = mustang_http2_machine:init(Opts, ms()),
			St0 = #st{parent = Parent, ref = Ref, transport = Transport, socket = Socket,
				messages = Transport:messages(), opts = Opts,
				chain = mustang_registry:get_conn_chain(Ref, http2),
				peer = Peer, sock = Sock, cert = Cert,
				proxy_header = maps:get(proxy_header, Conn, undefined),
				scheme = case Transport:secure() of true -> <<"https">>; false -> <<"http">> end,
				active_n = ActiveN, dynbuf = DynBuf, m = M,
				settings_timer = erlang:start_timer(maps:get(settings_timeout, Opts), self(),
					settings_timeout)},
			St2 = case Conn of
				#{upgrade := {Request, PeerSettings}} ->
					result(St0, mustang_http2_machine:upgrade(Request, PeerSettings, ms(), M));
				_ ->
					St0
			end,
			start_idle_tick(St2),
			PrefaceTimer = erlang:start_timer(maps:get(preface_timeout, Opts), self(), preface_timeout),
			St3 = St2#st{preface_timer = PrefaceTimer},
			loop(socket_data(St3, maps:get(buffer, Conn, <<>>)));
		_ ->
			Transport:close(Socket),
			exit(normal)
	end.

ms() ->
	erlang:monotonic_time(millisecond).

start_idle_tick(#st{opts = Opts, quiet = Quiet}) ->
	mustang_conn_chores:start_idle_tick(?MODULE, maps:get(idle_timeout, Opts),
		maps:get(hibernate_after, Opts), Quiet).

%% The process loop. Output is gathered while messages keep coming and
%% written with one send when the mailbox is empty.

loop(St0 = #st{m = M, streams = Streams}) ->
	St = flow_timer(St0),
	case mustang_http2_machine:out_size(M) of
		0 when map_size(Streams) =:= 0 ->
			case St#st.opts of
				%% The hibernate option: nothing in flight, give the heap back.
				#{hibernate := true} -> proc_lib:hibernate(?MODULE, loop, [St, infinity]);
				_ -> loop(St, infinity)
			end;
		0 ->
			case mustang_http2_machine:resumable(M) of
				%% The next piece of a sendfile body, once the last is written;
				%% a message waiting is handled before it goes out.
				true -> loop(result(St, mustang_http2_machine:resume(ms(), M)), 0);
				false -> loop(St, infinity)
			end;
		Size when Size >= ?OUT_FLUSH ->
			loop(flush_out(St));
		_ ->
			loop(St, 0)
	end.

%% Exported for proc_lib:hibernate/3.
-spec loop(#st{}, timeout()) -> no_return().
loop(St = #st{socket = Socket, messages = {OK, Closed, Error, Passive}, parent = Parent}, Timeout) ->
	receive
		{OK, Socket, Data} ->
			DynBuf = update_dynbuf(byte_size(Data), St),
			loop(socket_data(St#st{received = true, dynbuf = DynBuf}, Data));
		{Passive, Socket} when map_size(St#st.streams) =:= 0 ->
			ok = mustang_conn_chores:rearm_idle(St#st.transport, Socket, St#st.active_n),
			loop(St);
		{Passive, Socket} ->
			ok = mustang_conn_chores:rearm(St#st.transport, Socket, St#st.active_n),
			loop(St);
		{{Pid, StreamID}, Info} when Pid =:= self() ->
			loop(stream_info(St, StreamID, Info));
		{'EXIT', Pid, Reason} when is_map_key(Pid, St#st.pids) ->
			loop(stream_exit(St, Pid, Reason));
		{Closed, Socket} ->
			terminate(St, closed);
		{Error, Socket, Reason} ->
			terminate(St, {socket_error, Reason});
		{?MODULE, idle_tick} ->
			idle_tick(St);
		{timeout, TRef, settings_timeout} when TRef =:= St#st.settings_timer ->
			goaway_close(St, settings_timeout, 'The client did not acknowledge our SETTINGS in time.');
		{timeout, TRef, preface_timeout} when TRef =:= St#st.preface_timer ->
			goaway_close(St, protocol_error, 'The client did not send the connection preface in time.');
		{timeout, TRef, flow_control_timeout} when TRef =:= St#st.flow_timer ->
			loop(flow_control_timeout(St#st{flow_timer = undefined}));
		{'EXIT', Parent, _} ->
			loop(start_shutdown(St));
		{?MODULE, final_goaway} = Msg ->
			case mustang_http2_machine:shutdown(St#st.m) of
				goaway_ping -> loop(final_goaway(St));
				_ -> loop(unexpected(St, Msg))
			end;
		{system, From, Request} ->
			sys:handle_system_msg(Request, From, Parent, ?MODULE, [], St);
		{'$gen_call', From, Call} ->
			supervisor_call(Call, From, St),
			loop(St);
		{timeout, _, _} ->
			loop(St);
		{'EXIT', _, _} ->
			loop(St);
		{mustang_http1, idle_tick} ->
			%% The HTTP/1.1 process this one was before still had a tick armed.
			loop(St);
		Msg ->
			loop(unexpected(St, Msg))
	after Timeout ->
		loop(flush_out(St))
	end.

unexpected(St, Msg) ->
	log(St, warning, "mustang_http2 ~p: unexpected message ~0p", [St#st.ref, Msg]),
	St.

update_dynbuf(Size, #st{transport = Transport, socket = Socket, dynbuf = DynBuf}) ->
	mustang_dynbuf:update_socket(Size, DynBuf, Transport, Socket).

%% Streams in progress count as activity.
idle_tick(St = #st{opts = Opts, streams = Streams, received = Received, quiet = Quiet}) ->
	case mustang_conn_chores:idle_tick(Received orelse map_size(Streams) > 0, Quiet, false,
			maps:get(idle_timeout, Opts), maps:get(hibernate_after, Opts)) of
		timeout ->
			goaway_close(St, no_error, 'The connection was idle for idle_timeout.');
		{hibernate, Quiet2} ->
			St2 = St#st{received = false, quiet = Quiet2},
			start_idle_tick(St2),
			proc_lib:hibernate(?MODULE, loop, [flush_out(St2), infinity]);
		{continue, Quiet2} ->
			St2 = St#st{received = false, quiet = Quiet2},
			start_idle_tick(St2),
			loop(St2)
	end.

%% The machine. Its output and its blocked_since are looked at once per
%% message, in loop/1: output is written when the mailbox is empty or once
%% enough is pending, and the flow-control timer follows blocked_since.
%% (Looking after every machine call cost about 12 calls per HTTP/2
%% request.)

m(St, M) ->
	St#st{m = M}.

result(St, {ok, [], M}) ->
	St#st{m = M};
result(St, {ok, Events, M}) ->
	events(m(St, M), Events);
result(St, {error, {connection_error, Code, Reason}, M}) ->
	goaway_close(m(St, M), Code, Reason).

flush_out(St = #st{transport = Transport, socket = Socket, m = M}) ->
	case mustang_http2_machine:out_size(M) of
		0 ->
			St;
		_ ->
			{Out, M2} = mustang_http2_machine:take_output(M),
			case Transport:send(Socket, Out) of
				ok -> St#st{m = M2};
				{error, Reason} -> terminate(St#st{m = M2}, {socket_error, Reason})
			end
	end.

%% A client that never opens its window would hold the queued data (and the
%% handlers waiting on it) forever: the timer restarts whenever data goes out.
flow_timer(St = #st{m = M, flow_since = Since, flow_timer = Timer}) ->
	case mustang_http2_machine:blocked_since(M) of
		Since ->
			St;
		undefined ->
			cancel(Timer),
			St#st{flow_since = undefined, flow_timer = undefined};
		New ->
			cancel(Timer),
			Timer2 = case St#st.opts of
				#{flow_control_timeout := infinity} -> undefined;
				#{flow_control_timeout := Timeout} ->
					erlang:start_timer(Timeout, self(), flow_control_timeout)
			end,
			St#st{flow_since = New, flow_timer = Timer2}
	end.

cancel(undefined) -> ok;
cancel(Timer) -> _ = erlang:cancel_timer(Timer), ok.

flow_control_timeout(St = #st{m = M, opts = #{flow_control_timeout := Timeout}}) ->
	case mustang_http2_machine:blocked_since(M) of
		undefined ->
			St;
		Since ->
			Now = ms(),
			case Now - Since >= Timeout of
				true ->
					log(St, debug, "mustang ~p: ~s did not open its flow-control window in ~b ms",
						[St#st.ref, peer(St), Timeout]),
					goaway_close(St, enhance_your_calm,
						'The client did not open its flow-control window within flow_control_timeout.');
				false ->
					St#st{flow_timer = erlang:start_timer(Timeout - (Now - Since), self(),
						flow_control_timeout)}
			end
	end.

%% Incoming bytes: the machine stops after each frame that has events, so
%% that they are handled before the next frame is looked at.
socket_data(St, Data) ->
	case mustang_http2_machine:parse(Data, ms(), St#st.m) of
		{more, M} -> m(St, M);
		{ok, Events, M} -> socket_data(events(m(St, M), Events), <<>>);
		{error, {connection_error, Code, Reason}, M} -> goaway_close(m(St, M), Code, Reason)
	end.

events(St, []) ->
	St;
events(St, [Event | Rest]) ->
	events(event(St, Event), Rest).

event(St, {headers, StreamID, IsFin, Request}) ->
	start_stream(St, StreamID, Request, IsFin);
event(St = #st{streams = Streams}, {data, StreamID, IsFin, Data}) ->
	case Streams of
		#{StreamID := Stream} ->
			St2 = stream_data(St, Stream, IsFin, Data),
			case IsFin of
				fin -> maybe_end_stream(St2, StreamID);
				nofin -> St2
			end;
		_ ->
			St
	end;
event(St, {trailers, _, _}) ->
	St;
event(St = #st{streams = Streams}, {rst_stream, StreamID, _}) ->
	case Streams of
		#{StreamID := Stream} -> remove_stream(St, Stream, {shutdown, stream_reset});
		_ -> St
	end;
event(St = #st{streams = Streams}, {stream_error, StreamID, Code, Reason}) ->
	case Streams of
		#{StreamID := Stream} ->
			log(St, debug, "mustang ~p: stream ~b from ~s reset with ~p: ~s",
				[St#st.ref, StreamID, peer(St), Code, Reason]),
			remove_stream(St, Stream, {shutdown, {stream_error, Code}});
		_ ->
			log(St, debug, "mustang ~p: stream ~b reset: ~s", [St#st.ref, StreamID, Reason]),
			St
	end;
event(St, {malformed, _, Reason}) ->
	log(St, debug, "mustang ~p: malformed HTTP/2 request from ~s: ~0p",
		[St#st.ref, peer(St), Reason]),
	St;
event(St, {early_error, StreamID, IsFin, Status, Reason}) ->
	stream_error_response(St, StreamID, IsFin, Status, Reason);
event(St = #st{preface_timer = Timer}, {settings, _}) ->
	cancel(Timer),
	St#st{preface_timer = undefined};
event(St = #st{settings_timer = Timer}, settings_ack) ->
	cancel(Timer),
	St#st{settings_timer = undefined};
event(St, goaway_ping_ack) ->
	final_goaway(St);
event(St, {goaway, _, _, _}) ->
	%% The client opens no more streams; those in flight finish.
	maybe_close_connection(St);
event(St = #st{streams = Streams}, {release, StreamID}) ->
	case Streams of
		#{StreamID := Stream = #stream{waiting = Waiting}} ->
			_ = [From ! {Tag, ok} || {Tag, From} <- lists:reverse(Waiting)],
			St#st{streams = Streams#{StreamID => Stream#stream{waiting = []}}};
		_ ->
			St
	end;
event(St, {drained, StreamID}) ->
	maybe_end_stream(St, StreamID);
event(St, {sendfile_error, _, Path, Reason}) ->
	log(St, error, "mustang ~p: sendfile ~ts failed: ~0p", [St#st.ref, Path, Reason]),
	St;
event(St, {ignored, StreamID, What, Local}) ->
	log(St, debug, "mustang ~p: stream ~b: ~p ignored after ~p", [St#st.ref, StreamID, What, Local]),
	St;
event(St, {push_invalid, FullPath, Reason}) ->
	log(St, warning, "mustang ~p: push of ~s refused, the request is not valid: ~0p",
		[St#st.ref, FullPath, Reason]),
	St.

%% Body data for the stream handlers.
%% min_recv_rate (mustang_conn_chores:recv_rate/3): a request body slower
%% than the minimum is refused (the body read fails, 408) and the rest of it
%% is dropped; the connection goes on.
stream_data(St, #stream{rate = too_slow}, _, _) ->
	St;
stream_data(St = #st{opts = #{min_recv_rate := MinRate = {_, _}}},
		Stream = #stream{id = StreamID, rate = Rate = {_, _}}, IsFin, Data) ->
	case mustang_conn_chores:recv_rate(MinRate, Rate, byte_size(Data)) of
		{ok, Rate2} ->
			stream_body(St, Stream#stream{rate = Rate2}, IsFin, Data);
		too_slow ->
			St2 = St#st{streams = (St#st.streams)#{StreamID => Stream#stream{rate = too_slow}}},
			stream_info(St2, StreamID, {body_error, too_slow})
	end;
stream_data(St, Stream, IsFin, Data) ->
	stream_body(St, Stream, IsFin, Data).

stream_body(St, Stream0 = #stream{id = StreamID, chain = Chain}, IsFin, Data) ->
	try mustang_stream:data(StreamID, IsFin, Data, Chain) of
		{Commands, Chain2} ->
			Stream = Stream0#stream{chain = Chain2},
			commands(St#st{streams = (St#st.streams)#{StreamID => Stream}}, StreamID, Commands)
	catch Class:Reason:Stacktrace ->
		chain_crash(St, Stream0, data, [StreamID, IsFin, Data], Class, Reason, Stacktrace)
	end.

%% A response without a handler, for a request that is not processed; the
%% stream handlers may shape it (early_error/5).
stream_error_response(St = #st{opts = Opts}, StreamID, IsFin, Status, Reason) ->
	log(St, debug, "mustang ~p: ~b response to ~s on stream ~b: ~0p",
		[St#st.ref, Status, peer(St), StreamID, Reason]),
	PartialReq = mustang_req:with_proxy_header(#{ref => St#st.ref, pid => self(),
		streamid => StreamID, peer => St#st.peer, sock => St#st.sock, cert => St#st.cert,
		version => 'HTTP/2'}, St#st.proxy_header),
	{response, Status2, Headers, Body} = mustang_stream:early_error_response(StreamID,
		{stream_error, Reason, 'The request was refused before any handler ran.'}, PartialReq,
		{response, Status, #{}, <<>>}, Opts, maps:get(logger, Opts)),
	m(St, mustang_http2_machine:early_response(StreamID, IsFin, Status2, Headers, Body,
		mustang_clock:rfc7231(), St#st.m)).

start_stream(St = #st{streams = Streams}, StreamID, Request, IsFin) ->
	Req = build_req(St, StreamID, Request, IsFin),
	Stream = case IsFin of
		fin -> #stream{id = StreamID};
		nofin -> #stream{id = StreamID, rate = mustang_conn_chores:recv_rate_start()}
	end,
	try mustang_stream:init_prepared(StreamID, Req, St#st.chain) of
		%% mustang_stream_h's request process, the default: one copy of the state.
		{[Spawn = {spawn, _, _}], Chain} ->
			command(St, Stream#stream{chain = Chain}, Spawn);
		{Commands, Chain} ->
			commands(St#st{streams = Streams#{StreamID => Stream#stream{chain = Chain}}},
				StreamID, Commands)
	catch Class:Reason:Stacktrace ->
		chain_crash(St#st{streams = Streams#{StreamID => Stream}}, Stream, init, [StreamID, Req],
			Class, Reason, Stacktrace)
	end.

build_req(#st{ref = Ref, peer = Peer, sock = Sock, cert = Cert, proxy_header = ProxyHeader,
		scheme = Scheme, opts = Opts}, StreamID, Request = #{content_length := Length}, IsFin) ->
	{HasBody, BodyLength} = case {IsFin, Length} of
		{fin, _} -> {false, 0};
		{nofin, 0} -> {false, 0};
		{nofin, _} -> {true, Length}
	end,
	mustang_req:new(#{ref => Ref, pid => self(), streamid => StreamID, peer => Peer, sock => Sock,
		cert => Cert, proxy_header => ProxyHeader, scheme => Scheme, mode => process,
		alt_svc => maps:get(alt_svc, Opts, undefined)}, Request#{version => 'HTTP/2'}, HasBody,
		BodyLength).

%% The stream ends now (the machine has already forgotten it): its handler
%% process is stopped (its exit is then ignored), waiting callers are
%% released, the stream handlers terminate.
remove_stream(St = #st{pids = Pids}, Stream, ExitReason) ->
	#stream{id = StreamID, pid = Pid, waiting = Waiting} = Stream,
	_ = [From ! {Tag, {error, closed}} || {Tag, From} <- Waiting],
	Pids2 = case Pid of
		undefined -> Pids;
		_ ->
			exit(Pid, ExitReason),
			Pids#{Pid => undefined}
	end,
	chain_terminate(St, Stream, case Stream#stream.reason of
		normal -> terminate_reason(ExitReason);
		Reason -> Reason
	end),
	maybe_close_connection(St#st{pids = Pids2, streams = maps:remove(StreamID, St#st.streams)}).

terminate_reason({shutdown, stream_reset}) ->
	{stream_error, cancel, 'The client reset the stream.'};
terminate_reason({shutdown, {stream_error, Code}}) ->
	{stream_error, Code, 'The stream was reset.'}.

%% We reset the stream (RFC 9113 5.4.2).
stream_reset(St, Stream = #stream{id = StreamID}, Code, Reason) ->
	log(St, debug, "mustang ~p: stream ~b from ~s reset with ~p: ~s",
		[St#st.ref, StreamID, peer(St), Code, Reason]),
	St2 = m(St, mustang_http2_machine:reset_stream(StreamID, Code, St#st.m)),
	remove_stream(St2, Stream, {shutdown, {stream_error, Code}}).

chain_terminate(St, #stream{id = StreamID, chain = Chain}, Reason) ->
	try
		mustang_stream:terminate(StreamID, Reason, Chain)
	catch Class:Reason2:Stacktrace ->
		{log, Level, Format, Args} = mustang_stream:make_error_log(terminate,
			[StreamID, Reason], Class, Reason2, Stacktrace),
		log(St, Level, Format, Args)
	end.

%% A stream ends once the stream handlers stopped and its response is sent
%% (the machine then sends RST_STREAM NO_ERROR if the request body is still
%% coming, RFC 9113 8.1).
maybe_close_stream(St = #st{m = M}, Stream = #stream{id = StreamID}) ->
	maybe_close_stream(St, Stream, mustang_http2_machine:stream(StreamID, M)).

%% With the machine's view of the stream (mustang_http2_machine:stream/2).
maybe_close_stream(St = #st{m = M}, Stream = #stream{id = StreamID, stopped = true,
		waiting = []}, MachineStream) ->
	case MachineStream of
		{fin, _, 0} ->
			Pids = case Stream#stream.pid of
				undefined -> St#st.pids;
				Pid ->
					exit(Pid, {shutdown, stopped}),
					(St#st.pids)#{Pid => undefined}
			end,
			chain_terminate(St, Stream, Stream#stream.reason),
			maybe_close_connection(St#st{m = mustang_http2_machine:close_stream(StreamID, M),
				pids = Pids, streams = maps:remove(StreamID, St#st.streams)});
		_ ->
			St#st{streams = (St#st.streams)#{StreamID => Stream}}
	end;
maybe_close_stream(St = #st{streams = Streams}, Stream, _) ->
	St#st{streams = Streams#{Stream#stream.id => Stream}}.

maybe_end_stream(St = #st{streams = Streams}, StreamID) ->
	case Streams of
		#{StreamID := Stream = #stream{stopped = true}} -> maybe_close_stream(St, Stream);
		_ -> St
	end.

%% After a GOAWAY (ours or the client's), the connection ends with its last
%% stream.
maybe_close_connection(St = #st{streams = Streams, m = M}) when map_size(Streams) =:= 0 ->
	case {mustang_http2_machine:closing(M), mustang_http2_machine:shutdown(M)} of
		{true, goaway} ->
			terminate(flush_out(St), normal);
		{true, _} ->
			%% The client's GOAWAY came first: ours still goes before the
			%% close (RFC 9113 6.8).
			terminate(flush_out(St#st{m = mustang_http2_machine:final_goaway(M)}), normal);
		{false, _} ->
			St
	end;
maybe_close_connection(St) ->
	St.

%% Stream handlers: infos (mustang_req calls, messages to {self(), StreamID},
%% exits of their processes) go down the chain, commands come back.

stream_info(St = #st{streams = Streams}, StreamID, Info) ->
	case Streams of
		#{StreamID := Stream = #stream{chain = Chain}} ->
			try mustang_stream:info(StreamID, Info, Chain) of
				{Commands, Chain2} ->
					commands(St#st{streams = Streams#{StreamID => Stream#stream{chain = Chain2}}},
						StreamID, Commands)
			catch Class:Reason:Stacktrace ->
				chain_crash(St, Stream, info, [StreamID, Info], Class, Reason, Stacktrace)
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

chain_crash(St, Stream = #stream{id = StreamID}, Callback, Args, Class, Reason, Stacktrace) ->
	commands(St#st{streams = (St#st.streams)#{StreamID => Stream#stream{chain = undefined}}},
		StreamID, [mustang_stream:make_error_log(Callback, Args, Class, Reason, Stacktrace),
			{internal_error, {Class, Reason}, 'A stream handler crashed.'}]).

commands(St, _, []) ->
	St;
commands(St = #st{streams = Streams}, StreamID, [Command | Rest]) ->
	case Streams of
		#{StreamID := Stream} ->
			commands(command(St, Stream, Command), StreamID, Rest);
		_ ->
			_ = case Command of
				{ack, Pid, Ref} -> Pid ! {Ref, {error, closed}};
				_ -> ok
			end,
			commands(St, StreamID, Rest)
	end.

command(St, #stream{id = StreamID}, {flow, Size}) ->
	m(St, mustang_http2_machine:flow(StreamID, Size, St#st.m));
command(St = #st{pids = Pids}, Stream, {spawn, Pid, _}) ->
	St#st{pids = Pids#{Pid => Stream#stream.id},
		streams = (St#st.streams)#{Stream#stream.id => Stream#stream{pid = Pid}}};
command(St = #st{m = M}, Stream = #stream{id = StreamID}, {ack, Pid, Ref}) ->
	%% Answered once the data before it is sent, or queued within the limits.
	case mustang_http2_machine:over_limits(StreamID, M) of
		true ->
			St#st{m = mustang_http2_machine:hold(StreamID, M),
				streams = (St#st.streams)#{StreamID =>
					Stream#stream{waiting = [{Ref, Pid} | Stream#stream.waiting]}}};
		false ->
			Pid ! {Ref, ok},
			St
	end;
command(St, _, {log, Level, Format, Args}) ->
	log(St, Level, Format, Args),
	St;
command(St, Stream, stop) ->
	stop_stream(St, Stream);
command(St, Stream = #stream{id = StreamID}, Error = {internal_error, _, _}) ->
	case mustang_http2_machine:stream(StreamID, St#st.m) of
		{idle, _, _} ->
			St1 = St#st{streams = (St#st.streams)#{StreamID => Stream#stream{reason = Error}}},
			St2 = send(St1, StreamID, {response, 500, #{}, <<>>}),
			maybe_end_stream(stop(St2, StreamID), StreamID);
		MachineStream = {fin, _, 0} ->
			maybe_close_stream(St, Stream#stream{reason = Error, stopped = true}, MachineStream);
		_ ->
			stream_reset(St, Stream#stream{reason = Error}, internal_error,
				'The response could not be completed.')
	end;
command(St, Stream = #stream{id = StreamID}, {error_response, Status, Headers, Body}) ->
	case mustang_http2_machine:stream(StreamID, St#st.m) of
		{idle, _, _} -> command(St, Stream, {response, Status, Headers, Body});
		_ -> St
	end;
command(St, #stream{id = StreamID}, Push = {push, _, _, _, _, _, _, _}) ->
	result(St, mustang_http2_machine:push(StreamID, Push, St#st.m));
command(St, #stream{id = StreamID}, Part) when element(1, Part) =:= data;
		element(1, Part) =:= trailers; element(1, Part) =:= response;
		element(1, Part) =:= headers; element(1, Part) =:= inform ->
	send(St, StreamID, Part);
command(St, _, _) ->
	%% switch_protocol, set_options, and commands of other protocols.
	St.

send(St, StreamID, Part) ->
	Date = case element(1, Part) of
		response -> mustang_clock:rfc7231();
		headers -> mustang_clock:rfc7231();
		_ -> <<>>
	end,
	result(St, mustang_http2_machine:send(StreamID, Part, ms(), Date, St#st.m)).

%% The stream handlers are done with the stream: the response is completed
%% if it is not (204, or the end of a streamed body), and the stream ends
%% once it is sent.
stop_stream(St, Stream = #stream{id = StreamID}) ->
	case mustang_http2_machine:stream(StreamID, St#st.m) of
		{idle, _, _} ->
			St2 = send(St, StreamID, {response, 204, #{}, <<>>}),
			maybe_end_stream(stop(St2, StreamID), StreamID);
		{headers, _, _} ->
			St2 = send(St, StreamID, {data, fin, <<>>}),
			maybe_end_stream(stop(St2, StreamID), StreamID);
		MachineStream ->
			maybe_close_stream(St, Stream#stream{stopped = true}, MachineStream)
	end.

stop(St = #st{streams = Streams}, StreamID) ->
	case Streams of
		#{StreamID := Stream} -> St#st{streams = Streams#{StreamID => Stream#stream{stopped = true}}};
		_ -> St
	end.

%% Sendfile bodies are read by the machine through this function, a piece at
%% a time, as the windows open.
-spec read_file(file:name_all(), non_neg_integer(), non_neg_integer())
	-> {ok, binary()} | {error, any()}.
read_file(Path, Offset, Length) ->
	case file:open(Path, [read, raw, binary]) of
		{ok, Fd} ->
			try file:pread(Fd, Offset, Length) of
				{ok, Bin} when byte_size(Bin) > 0 -> {ok, Bin};
				{ok, _} -> {error, file_too_short};
				eof -> {error, file_too_short};
				Error -> Error
			after
				file:close(Fd)
			end;
		Error ->
			Error
	end.

%% Processes of the stream handlers ({spawn, ...}): their exits go down the
%% chain.
stream_exit(St = #st{pids = Pids, streams = Streams}, Pid, Reason) ->
	StreamID = map_get(Pid, Pids),
	Pids2 = maps:remove(Pid, Pids),
	case Streams of
		#{StreamID := Stream = #stream{pid = Pid}} when StreamID =/= undefined ->
			stream_info(St#st{pids = Pids2,
				streams = Streams#{StreamID => Stream#stream{pid = undefined}}},
				StreamID, {'EXIT', Pid, Reason});
		_ ->
			maybe_close_connection(St#st{pids = Pids2})
	end.

%% Shutdown: the two-step GOAWAY of RFC 9113 6.8 (see the machine). A client
%% that does not answer the PING gets the final GOAWAY after a second. The
%% stream handlers get the info going_away (mustang_stream_h tells a
%% Websocket session, which closes with 1001).

start_shutdown(St = #st{m = M}) ->
	case mustang_http2_machine:start_shutdown(M) of
		{true, M2} ->
			_ = erlang:send_after(1000, self(), {?MODULE, final_goaway}),
			lists:foldl(fun(StreamID, Acc) -> stream_info(Acc, StreamID, going_away) end,
				m(St, M2), maps:keys(St#st.streams));
		{false, _} ->
			St
	end.

final_goaway(St) ->
	maybe_close_connection(m(St, mustang_http2_machine:final_goaway(St#st.m))).

-spec goaway_close(#st{}, mustang_http2_frame:error_code(), atom()) -> no_return().
goaway_close(St, Code, Reason) ->
	case Reason of
		'Too many frames that do no work.' ->
			log(St, debug, "mustang ~p: ~s sent too many frames that do no work "
				"(max_overhead_frame_rate ~p)",
				[St#st.ref, peer(St), maps:get(max_overhead_frame_rate, St#st.opts)]);
		'Too many streams cancelled.' ->
			log(St, debug, "mustang ~p: ~s cancelled or overflowed too many streams "
				"(max_cancel_stream_rate ~p)",
				[St#st.ref, peer(St), maps:get(max_cancel_stream_rate, St#st.opts)]);
		_ ->
			ok
	end,
	case Code of
		no_error -> ok;
		_ ->
			log(St, debug, "mustang ~p: connection from ~s closed with ~p: ~s",
				[St#st.ref, peer(St), Code, Reason])
	end,
	Debug = case Code of
		no_error -> <<>>;
		_ -> atom_to_binary(Reason, utf8)
	end,
	St2 = flush_out(St#st{m = mustang_http2_machine:goaway(Code, Debug, St#st.m)}),
	terminate(St2, {goaway, Code}).

-spec terminate(#st{}, any()) -> no_return().
terminate(St = #st{transport = Transport, socket = Socket, pids = Pids, streams = Streams}, Reason) ->
	_ = [exit(Pid, {shutdown, connection_closed}) || Pid <- maps:keys(Pids)],
	StreamReason = case Reason of
		{socket_error, SocketReason} -> {socket_error, SocketReason, 'The socket failed.'};
		{goaway, Code} -> {connection_error, Code, 'The connection ended with an error.'};
		_ -> {stop, Reason, 'The connection ended.'}
	end,
	_ = [chain_terminate(St, Stream, StreamReason) || Stream <- maps:values(Streams)],
	_ = Transport:shutdown(Socket, write),
	linger(St, Reason),
	Transport:close(Socket),
	exit(normal).

%% After a GOAWAY with an error the client may still be sending: read for up
%% to linger_timeout so the kernel does not reset the connection before the
%% client reads ours.
linger(#st{transport = Transport, socket = Socket, opts = #{linger_timeout := Timeout}}, {goaway, _}) ->
	mustang_conn_chores:linger(Transport, Socket, Timeout);
linger(_, _) ->
	ok.

supervisor_call(Call, From, #st{pids = Pids}) ->
	mustang_conn_chores:supervisor_call(Call, From, maps:keys(Pids), ?MODULE).

peer(#st{peer = Peer}) -> mustang_conn_chores:peer(Peer).

log(#st{opts = #{logger := Logger}}, Level, Format, Args) ->
	mustang_conn_chores:log(Logger, Level, Format, Args).

%% sys callbacks.

-spec system_continue(pid(), [sys:debug_option()], #st{}) -> no_return().
system_continue(_, _, St) ->
	loop(St).

-spec system_terminate(any(), pid(), [sys:debug_option()], #st{}) -> no_return().
system_terminate(Reason, _, _, St) ->
	terminate(St, Reason).

-spec system_code_change(Misc, module(), any(), any()) -> {ok, Misc} when Misc :: #st{}.
system_code_change(Misc, _, _, _) ->
	{ok, Misc}.
