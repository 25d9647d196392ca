%% The HTTP/2 connection process (RFC 9113). One per connection; it owns the
%% socket in {active, N} mode, runs the frame codec (mustang_http2_frame) and
%% HPACK (mustang_hpack), and runs each stream's middlewares and handler in a
%% process of its own. Handlers use mustang_req exactly as over HTTP/1.1:
%% their calls arrive here as the same stream commands (see
%% doc/internals/http2.md).
%%
%% Entered from mustang_http1 (h2c prior knowledge or Upgrade: h2c) or from
%% mustang_conn (ALPN h2), always by tail call, so the process keeps its pid,
%% its supervisor and the dynamic buffer state.
%%
%% Protocol options, besides the shared env, middlewares, active_n,
%% dynamic_buffer, idle_timeout and logger (defaults in parentheses):
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
	connection_send_buffer_size => 1048576
}).

-define(MAX_WINDOW, 16#7fffffff).
%% Opaque data of the PING that ends the first step of a graceful GOAWAY.
-define(GOAWAY_PING, 16#6d757374616e6721).
%% Output is written when the mailbox is empty or when this much is pending.
-define(OUT_FLUSH, 65536).

-record(stream, {
	id :: pos_integer(),
	pid :: pid() | undefined,
	method :: binary(),
	path :: binary(),
	%% Receiving side: open, fin (END_STREAM received) or reset.
	remote = open :: open | fin,
	%% Sending side: idle (nothing sent), headers (body in progress), fin
	%% (the end of the response is queued or sent).
	local = idle :: idle | headers | fin,
	head = false :: boolean(),
	%% What the client may still send (our window), what it sent, and what
	%% content-length announced.
	recv_window :: integer(),
	%% The window the client is allowed, adapted to its pace: doubled each
	%% time a body read had to wait while the client had used up its window.
	win_target :: non_neg_integer(),
	%% The window last aimed at: DATA frames that leave less than half of it
	%% check whether to send a WINDOW_UPDATE.
	target = 0 :: non_neg_integer(),
	recv_total = 0 :: non_neg_integer(),
	recv_expected :: non_neg_integer() | undefined,
	%% Request body bytes the stream handlers asked for ({flow, Size}) and
	%% did not receive yet.
	want = 0 :: integer(),
	%% Sending: our window at the peer, and the queue of what waits for it.
	send_window :: integer(),
	queue = queue:new() :: queue:queue(queued()),
	queued = 0 :: non_neg_integer(),
	%% ack commands whose answer waits for the queue to drain.
	waiting = [] :: [{reference(), pid()}],
	%% The stream handlers, and whether they stopped (the stream ends once
	%% its response is sent).
	chain :: mustang_stream:state(),
	stopped = false :: boolean(),
	%% Why the stream ends, for terminate/3.
	reason = normal :: mustang_stream:reason()
}).

-type queued() :: {data, mustang_http2_frame:fin(), binary()}
	| {sendfile, mustang_http2_frame:fin(), non_neg_integer(), non_neg_integer(), file:name_all()}
	| {trailers, mustang_req:headers()}.

-record(st, {
	parent :: pid(),
	ref :: mustang:ref(),
	transport :: module(),
	socket :: mustang_transport:socket(),
	messages :: mustang_transport:messages(),
	opts :: map(),
	env :: map(),
	middlewares :: [module()],
	%% The first stream handler and its options.
	chain :: mustang_stream:prepared(),
	peer :: {inet:ip_address(), inet:port_number()} | undefined,
	sock :: {inet:ip_address(), inet:port_number()} | undefined,
	cert :: binary() | undefined,
	scheme :: binary(),
	active_n :: pos_integer(),
	dynbuf :: mustang_dynbuf:dynbuf() | undefined,
	%% Parsing: bytes before a whole frame header, and a partial frame.
	buffer = <<>> :: binary(),
	partial = preface :: preface | none
		| {frame, non_neg_integer(), [binary()], non_neg_integer()}
		| {data, pos_integer(), non_neg_integer(), non_neg_integer(), mustang_http2_frame:fin()},
	got_settings = false :: boolean(),
	%% A header block spread over CONTINUATION frames:
	%% {StreamID, IsFin, Fragments (newest first), Size}.
	%% IsFin is `reset` for a block whose stream is reset once it is decoded.
	continuation = undefined :: undefined
		| {pos_integer(), mustang_http2_frame:fin() | reset, [binary()], non_neg_integer()},
	decoder :: mustang_hpack:state(),
	encoder :: mustang_hpack:state(),
	%% Settings: ours awaiting ACK (with their timer), the peer's in effect.
	settings_timer = undefined :: undefined | reference(),
	max_frame_size_received :: pos_integer(),
	max_frame_size_sent = 16384 :: pos_integer(),
	peer_initial_window = 65535 :: non_neg_integer(),
	%% Server push (RFC 9113 8.4): whether the client accepts it, how many
	%% streams it lets us open, the next promised stream id, and the
	%% promised streams still open.
	peer_enable_push = true :: boolean(),
	peer_max_streams = infinity :: non_neg_integer() | infinity,
	next_push_id = 2 :: pos_integer(),
	pushed = 0 :: non_neg_integer(),
	local_initial_window :: non_neg_integer(),
	%% The stream window target learned on this connection, for new streams.
	win_target :: non_neg_integer(),
	%% Flow-control options read for every DATA frame, out of the options map.
	conn_threshold :: non_neg_integer(),
	stream_margin :: non_neg_integer(),
	stream_threshold :: non_neg_integer(),
	max_stream_window :: non_neg_integer(),
	%% Connection windows.
	send_window = 65535 :: integer(),
	recv_window :: integer(),
	recv_unacked = 0 :: non_neg_integer(),
	%% Streams, and the stream of each handler process.
	streams = #{} :: #{pos_integer() => #stream{}},
	pids = #{} :: #{pid() => pos_integer() | undefined},
	last_stream_id = 0 :: non_neg_integer(),
	%% Client stream ids skipped (never opened) below last_stream_id, as
	%% {From, To} ranges, newest first, at most 32: a HEADERS on one of them
	%% is a protocol error, on an opened one a STREAM_CLOSED error.
	skipped = [] :: [{pos_integer(), pos_integer()}],
	%% Streams with queued data, in the order they are served.
	sending = [] :: [pos_integer()],
	queued = 0 :: non_neg_integer(),
	blocked_since = undefined :: undefined | integer(),
	flow_timer = undefined :: undefined | reference(),
	%% Output not written yet (written when the mailbox is empty).
	out = [] :: iodata(),
	out_size = 0 :: non_neg_integer(),
	%% Rate limits: {Count, WindowStart}.
	cancel_rate = {0, 0} :: {non_neg_integer(), integer()},
	overhead_rate = {0, 0} :: {non_neg_integer(), integer()},
	%% Shutdown: none, goaway_ping (first GOAWAY sent, waiting for the PING
	%% ACK), goaway (final GOAWAY sent: no new streams).
	shutdown = none :: none | goaway_ping | goaway,
	peer_goaway = false :: boolean(),
	idle_ticks = 0 :: non_neg_integer(),
	received = false :: boolean(),
	preface_timer = undefined :: undefined | reference()
}).

%% Options.

-spec defaults() -> map().
defaults() ->
	?DEFAULTS.

%% Connection start.

%% Conn carries what the previous protocol knew: buffer (bytes already read,
%% starting with the client preface), dynbuf, peer, sock, cert, and for an
%% Upgrade: h2c request the request itself as {upgrade, Request, Settings}.
-spec init(pid(), mustang:ref(), module(), mustang_transport:socket(), map(), map())
	-> no_return().
init(Parent, Ref, Transport, Socket, Opts0, Conn) ->
	process_flag(trap_exit, true),
	Opts = maps:merge(maps:merge(mustang_http1:defaults(), ?DEFAULTS), Opts0),
	ActiveN = maps:get(active_n, Opts),
	DynBuf = case Conn of
		#{dynbuf := D} -> D;
		_ -> mustang_dynbuf:for_listener(Ref, maps:get(dynamic_buffer, Opts))
	end,
	SockOpts = case mustang_dynbuf:size(DynBuf) of
		undefined -> [{active, ActiveN}];
		Size -> [{active, ActiveN}, {buffer, Size}]
	end,
	Info = case Conn of
		#{peer := P, sock := S} -> {ok, P, S, maps:get(cert, Conn, undefined)};
		_ -> mustang_conn:socket_info(Transport, Socket)
	end,
	case {Transport:setopts(Socket, SockOpts), Info} of
		{ok, {ok, Peer, Sock, Cert}} ->
			#{max_frame_size_received := MaxRecv, initial_stream_window_size := StreamWindow,
				initial_connection_window_size := ConnWindow} = Opts,
			St0 = #st{parent = Parent, ref = Ref, transport = Transport, socket = Socket,
				messages = Transport:messages(), opts = Opts,
				env = maps:get(env, Opts), middlewares = maps:get(middlewares, Opts),
				chain = mustang_stream:prepare(Opts),
				peer = Peer, sock = Sock, cert = Cert,
				scheme = case Transport:secure() of true -> <<"https">>; false -> <<"http">> end,
				active_n = ActiveN, dynbuf = DynBuf,
				decoder = mustang_hpack:init(maps:get(max_decode_table_size, Opts)),
				encoder = mustang_hpack:init(),
				max_frame_size_received = MaxRecv,
				local_initial_window = StreamWindow, win_target = StreamWindow,
				conn_threshold = min(maps:get(connection_window_update_threshold, Opts),
					ConnWindow div 2),
				stream_margin = maps:get(stream_window_margin_size, Opts),
				stream_threshold = maps:get(stream_window_update_threshold, Opts),
				max_stream_window = maps:get(max_stream_window_size, Opts),
				recv_window = ConnWindow},
			St1 = send_preface(St0),
			St2 = case Conn of
				#{upgrade := {Request, PeerSettings}} -> upgrade_stream(St1, Request, PeerSettings);
				_ -> St1
			end,
			start_idle_tick(St2),
			PrefaceTimer = erlang:start_timer(maps:get(preface_timeout, Opts), self(), preface_timeout),
			St3 = St2#st{preface_timer = PrefaceTimer},
			loop(socket_data(St3, maps:get(buffer, Conn, <<>>)));
		_ ->
			Transport:close(Socket),
			exit(normal)
	end.

%% Our SETTINGS (only what differs from the defaults of RFC 9113 6.5.2), then
%% the connection window raised to its configured size.
send_preface(St = #st{opts = Opts, local_initial_window = StreamWindow,
		recv_window = ConnWindow, max_frame_size_received = MaxRecv}) ->
	Settings0 = #{max_concurrent_streams => maps:get(max_concurrent_streams, Opts),
		max_header_list_size => maps:get(max_header_list_size, Opts)},
	Settings1 = case StreamWindow of 65535 -> Settings0; _ -> Settings0#{initial_window_size => StreamWindow} end,
	Settings2 = case MaxRecv of 16384 -> Settings1; _ -> Settings1#{max_frame_size => MaxRecv} end,
	Settings3 = case maps:get(max_decode_table_size, Opts) of
		4096 -> Settings2;
		TableSize -> Settings2#{header_table_size => TableSize}
	end,
	Settings = case maps:get(enable_connect_protocol, Opts) of
		true -> Settings3#{enable_connect_protocol => true};
		false -> Settings3
	end,
	WindowUpdate = case ConnWindow - 65535 of
		0 -> [];
		Increment -> mustang_http2_frame:window_update(Increment)
	end,
	Timer = erlang:start_timer(maps:get(settings_timeout, Opts), self(), settings_timeout),
	out([mustang_http2_frame:settings(Settings), WindowUpdate], 64, St#st{settings_timer = Timer}).

%% RFC 9113 3.2 (RFC 7540 3.2): the Upgrade request becomes stream 1,
%% half-closed (remote), with the client's HTTP2-Settings in effect.
upgrade_stream(St0, Request, PeerSettings) ->
	St = apply_settings(St0, PeerSettings),
	St2 = St#st{last_stream_id = 1},
	start_stream(St2, 1, Request, fin).

start_idle_tick(#st{opts = #{idle_timeout := infinity}}) -> ok;
start_idle_tick(#st{opts = #{idle_timeout := Timeout}}) ->
	_ = erlang:send_after(max(1, Timeout div 10), self(), {?MODULE, idle_tick}),
	ok.

%% The process loop. Output is gathered while messages keep coming and
%% written with one send when the mailbox is empty.

loop(St = #st{out = [], streams = Streams}) when map_size(Streams) =:= 0 ->
	case St#st.opts of
		%% The hibernate option: nothing in flight, give the heap back.
		#{hibernate := true} -> proc_lib:hibernate(?MODULE, loop, [St, infinity]);
		_ -> loop(St, infinity)
	end;
loop(St = #st{out = []}) ->
	loop(St, infinity);
loop(St) ->
	loop(St, 0).

%% Exported for proc_lib:hibernate/3.
-spec loop(#st{}, timeout()) -> no_return().
loop(St = #st{socket = Socket, messages = {OK, Closed, Error, Passive}, parent = Parent}, Timeout) ->
	receive
		{OK, Socket, Data} ->
			DynBuf = update_dynbuf(byte_size(Data), St),
			loop(socket_data(St#st{received = true, dynbuf = DynBuf}, Data));
		{Passive, Socket} ->
			_ = (St#st.transport):setopts(Socket, [{active, St#st.active_n}]),
			loop(St);
		{{Pid, StreamID}, Info} when Pid =:= self() ->
			loop(catch_errors(St, fun() -> stream_info(St, StreamID, Info) end));
		{'EXIT', Pid, Reason} when is_map_key(Pid, St#st.pids) ->
			loop(catch_errors(St, fun() -> stream_exit(St, Pid, Reason) end));
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
		{?MODULE, final_goaway} when St#st.shutdown =:= goaway_ping ->
			loop(final_goaway(St));
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
			log(St, warning, "mustang_http2 ~p: unexpected message ~0p", [St#st.ref, Msg]),
			loop(St)
	after Timeout ->
		loop(flush_out(St))
	end.

update_dynbuf(Size, #st{transport = Transport, socket = Socket, dynbuf = DynBuf}) ->
	mustang_dynbuf:update_socket(Size, DynBuf, Transport, Socket).

idle_tick(St = #st{streams = Streams, received = Received, idle_ticks = Ticks}) ->
	start_idle_tick(St),
	if
		Received ->
			loop(St#st{received = false, idle_ticks = 0});
		map_size(Streams) > 0 ->
			loop(St#st{idle_ticks = 0});
		Ticks >= 9 ->
			goaway_close(St, no_error, 'The connection was idle for idle_timeout.');
		Ticks =:= 0 ->
			%% A whole tick without data or streams: give back the heap grown
			%% while serving, as HTTP/1.1 does between requests.
			proc_lib:hibernate(?MODULE, loop, [flush_out(St#st{idle_ticks = 1}), infinity]);
		true ->
			loop(St#st{idle_ticks = Ticks + 1})
	end.

%% Output.

out(Data, Size, St = #st{out = Out, out_size = OutSize}) ->
	case OutSize + Size of
		Total when Total >= ?OUT_FLUSH -> flush_out(St#st{out = [Out, Data]});
		Total -> St#st{out = [Out, Data], out_size = Total}
	end.

flush_out(St = #st{out = []}) ->
	St;
flush_out(St = #st{transport = Transport, socket = Socket, out = Out}) ->
	case Transport:send(Socket, Out) of
		ok -> St#st{out = [], out_size = 0};
		{error, Reason} -> terminate(St#st{out = []}, {socket_error, Reason})
	end.

%% Incoming bytes.

socket_data(St = #st{partial = none, buffer = <<>>}, Data) ->
	frames(St, Data);
socket_data(St = #st{partial = none, buffer = Buffer}, Data) ->
	frames(St#st{buffer = <<>>}, <<Buffer/binary, Data/binary>>);
socket_data(St = #st{partial = {frame, Need, Acc, Size}}, Data) ->
	case Size + byte_size(Data) of
		Total when Total >= Need ->
			frames(St#st{partial = none}, iolist_to_binary(lists:reverse(Acc, [Data])));
		Total ->
			St#st{partial = {frame, Need, [Data | Acc], Total}}
	end;
socket_data(St = #st{partial = {data, StreamID, Left, Pad, IsFin}}, Data) ->
	catch_errors(St, fun() -> data_payload(St#st{partial = none}, StreamID, Left, Pad, IsFin, Data) end);
socket_data(St = #st{partial = preface, buffer = Buffer}, Data) ->
	Bin = <<Buffer/binary, Data/binary>>,
	case mustang_http2_frame:parse_preface(Bin) of
		ok ->
			<<_:24/binary, Rest/bits>> = Bin,
			frames(St#st{partial = none, buffer = <<>>}, Rest);
		more ->
			St#st{buffer = Bin};
		{connection_error, Code, Reason} ->
			goaway_close(St#st{buffer = <<>>}, Code, Reason)
	end.

%% Connection errors are thrown by the frame handlers and end here.
catch_errors(St, Fun) ->
	try
		Fun()
	catch
		throw:{connection_error, St2, Code, Reason} -> goaway_close(St2, Code, Reason);
		throw:{connection_error, Code, Reason} -> goaway_close(St, Code, Reason)
	end.

frames(St, Bin) ->
	catch_errors(St, fun() -> frames1(St, Bin) end).

frames1(St, <<>>) ->
	St;
frames1(St = #st{max_frame_size_received = Max, continuation = undefined, got_settings = true,
		streams = Streams}, Bin = <<Len:24, 0:8, 0:8, _:1, StreamID:31, Payload:Len/binary, Rest/bits>>)
		when Len =< Max, Len > 0, is_map_key(StreamID, Streams) ->
	%% The common case, a whole DATA frame without flags on an open stream:
	%% one lookup and one update.
	case map_get(StreamID, Streams) of
		Stream = #stream{remote = open, recv_window = Window, recv_total = Total,
				recv_expected = Expected, want = Want}
				when Len =< Window, (Expected =:= undefined orelse Total + Len =< Expected) ->
			St2 = conn_recv(St, Len),
			Stream2 = Stream#stream{recv_window = Window - Len, recv_total = Total + Len,
				want = Want - Len},
			frames1(stream_data(St2, Stream2, nofin, Payload), Rest);
		_ ->
			frames_data(St, Bin)
	end;
frames1(St, Bin = <<_:24, 0:8, _:40, _/bits>>) ->
	frames_data(St, Bin);
frames1(St = #st{max_frame_size_received = Max}, Bin) ->
	frames_other(St, Bin, Max).

frames_data(St = #st{max_frame_size_received = Max}, Bin = <<Len:24, 0:8, _:40, _/bits>>) ->
	%% DATA: handed to the stream as it arrives, without waiting for the
	%% whole frame.
	expect_no_continuation(St),
	case mustang_http2_frame:data_header(Bin, Max) of
		{ok, StreamID, IsFin, PadLen, PayloadLen, Rest} ->
			St2 = data_start(St, StreamID, Len, PayloadLen, IsFin),
			data_payload(St2, StreamID, PayloadLen, PadLen, IsFin, Rest);
		more ->
			St#st{buffer = Bin};
		{connection_error, Code, Reason} ->
			connection_error(Code, Reason)
	end.

frames_other(St, Bin, Max) ->
	case mustang_http2_frame:parse(Bin, Max) of
		{ok, Frame, Rest} ->
			frames1(frame(St, Frame), Rest);
		more ->
			St#st{buffer = Bin};
		{more, N} ->
			St#st{partial = {frame, byte_size(Bin) + N, [Bin], byte_size(Bin)}};
		{ignore, Rest} ->
			%% Unknown frame types are ignored (RFC 9113 5.5), but not inside
			%% a header block (RFC 9113 6.10).
			expect_no_continuation(St),
			frames1(St, Rest);
		{stream_error, StreamID, _, _, Rest} when binary_part(Bin, 3, 1) =:= <<1>> ->
			%% A HEADERS frame whose stream depends on itself: its header
			%% block is still decoded, so that HPACK stays in step with the
			%% client (RFC 9113 4.3), then the stream is reset.
			expect_no_continuation(St),
			frames1(self_dependent_headers(St, Bin, StreamID), Rest);
		{stream_error, StreamID, Code, Reason, Rest} ->
			expect_no_continuation(St),
			frames1(stream_error(St, StreamID, Code, Reason), Rest);
		{connection_error, Code, Reason} ->
			connection_error(Code, Reason)
	end.

%% The parser checked the frame's lengths and padding; only the block is
%% taken out here. The block goes through header_block/4 with `reset`.
self_dependent_headers(St = #st{opts = Opts}, Bin, StreamID) ->
	<<Len:24, _:8, Flags:8, _:32, Payload:Len/binary, _/bits>> = Bin,
	Fragment = case Flags band 16#8 of
		0 ->
			<<_:40, F/binary>> = Payload,
			F;
		_ ->
			<<PadLen:8, Padded/binary>> = Payload,
			FragmentLen = byte_size(Padded) - PadLen - 5,
			<<_:40, F:FragmentLen/binary, _/binary>> = Padded,
			F
	end,
	check_headers_stream(St, StreamID),
	case Flags band 16#4 of
		0 ->
			check_block_size(byte_size(Fragment), Opts),
			St#st{continuation = {StreamID, reset, [Fragment], byte_size(Fragment)}};
		_ ->
			header_block(St, StreamID, reset, Fragment)
	end.

-spec connection_error(mustang_http2_frame:error_code(), atom()) -> no_return().
connection_error(Code, Reason) ->
	throw({connection_error, Code, Reason}).

expect_no_continuation(#st{continuation = undefined}) -> ok;
expect_no_continuation(_) ->
	connection_error(protocol_error,
		'A header block must be continued by CONTINUATION frames only. (RFC9113 6.10)').

%% DATA frames (RFC 9113 6.1). Flow control counts the whole frame, padding
%% included, as soon as its header is known.

data_start(St0 = #st{got_settings = true}, StreamID, FrameLen, PayloadLen, IsFin) ->
	St = case PayloadLen =:= 0 andalso IsFin =:= nofin of
		true -> overhead_frame(St0);
		false -> St0
	end,
	St2 = conn_recv(St, FrameLen),
	case St2#st.streams of
		#{StreamID := Stream = #stream{remote = open, recv_window = Window}}
				when FrameLen > Window ->
			stream_reset(St2, Stream, flow_control_error,
				'DATA exceeded the stream flow-control window. (RFC9113 6.9.1)');
		#{StreamID := Stream = #stream{remote = open, recv_window = Window}} ->
			St2#st{streams = (St2#st.streams)#{StreamID => Stream#stream{recv_window = Window - FrameLen}}};
		#{StreamID := _} ->
			%% Half-closed (remote) (RFC 9113 5.1).
			stream_error(St2, StreamID, stream_closed,
				'DATA frame received on a half-closed stream. (RFC9113 5.1)');
		_ when StreamID > St2#st.last_stream_id ->
			connection_error(protocol_error, 'DATA frame received on an idle stream. (RFC9113 5.1)');
		_ ->
			stream_error(St2, StreamID, stream_closed,
				'DATA frame received on a closed stream. (RFC9113 5.1)')
	end;
data_start(_, _, _, _, _) ->
	connection_error(protocol_error, 'The first frame must be SETTINGS. (RFC9113 3.4)').

%% The connection window is topped up once enough was received: the stream
%% windows bound what is buffered, so the connection's only has to keep up.
conn_recv(#st{recv_window = Window}, Len) when Len > Window ->
	connection_error(flow_control_error,
		'DATA exceeded the connection flow-control window. (RFC9113 6.9.1)');
conn_recv(St = #st{recv_window = Window, recv_unacked = Unacked, conn_threshold = Threshold}, Len) ->
	case Unacked + Len of
		Total when Total >= Threshold, Total > 0 ->
			out(mustang_http2_frame:window_update(Total), 13,
				St#st{recv_window = Window - Len + Total, recv_unacked = 0});
		Total ->
			St#st{recv_window = Window - Len, recv_unacked = Total}
	end.

data_payload(St, StreamID, 0, 0, IsFin, Rest) ->
	frames1(data_end(St, StreamID, IsFin), Rest);
data_payload(St, StreamID, 0, Pad, IsFin, Rest) ->
	case Rest of
		<<_:Pad/binary, Rest2/bits>> -> frames1(data_end(St, StreamID, IsFin), Rest2);
		_ -> St#st{partial = {data, StreamID, 0, Pad - byte_size(Rest), IsFin}}
	end;
data_payload(St, StreamID, Left, Pad, IsFin, Rest) ->
	case Rest of
		<<Payload:Left/binary, Rest2/bits>> ->
			data_payload(data_deliver(St, StreamID, Payload), StreamID, 0, Pad, IsFin, Rest2);
		<<>> ->
			St#st{partial = {data, StreamID, Left, Pad, IsFin}};
		_ ->
			St2 = data_deliver(St, StreamID, Rest),
			St2#st{partial = {data, StreamID, Left - byte_size(Rest), Pad, IsFin}}
	end.

data_deliver(St = #st{streams = Streams}, StreamID, Payload) ->
	case Streams of
		#{StreamID := Stream = #stream{remote = open, recv_total = Total, recv_expected = Expected,
				want = Want}} ->
			Total2 = Total + byte_size(Payload),
			case Expected of
				_ when Expected =/= undefined, Total2 > Expected ->
					stream_reset(St, Stream, protocol_error,
						'More DATA than the content-length header announced. (RFC9113 8.1.1)');
				_ ->
					stream_data(St, Stream#stream{recv_total = Total2,
						want = Want - byte_size(Payload)}, nofin, Payload)
			end;
		_ ->
			St
	end.

%% Body data for the stream handlers; the window is topped up while they
%% want more and the client has less than half of it left.
stream_data(St, Stream0 = #stream{id = StreamID, chain = Chain}, IsFin, Data) ->
	try mustang_stream:data(StreamID, IsFin, Data, Chain) of
		{Commands, Chain2} ->
			Stream = Stream0#stream{chain = Chain2},
			{St2, Stream2} = case Stream of
				#stream{want = Want, recv_window = Window, target = Target}
						when Want > 0, Window * 2 < Target, IsFin =:= nofin ->
					grant_window(St, Stream, Want);
				_ ->
					{St, Stream}
			end,
			commands(St2#st{streams = (St2#st.streams)#{StreamID => Stream2}}, StreamID, Commands)
	catch Class:Reason:Stacktrace ->
		chain_crash(St, Stream0, data, [StreamID, IsFin, Data], Class, Reason, Stacktrace)
	end.

data_end(St, _, nofin) ->
	St;
data_end(St = #st{streams = Streams}, StreamID, fin) ->
	case Streams of
		#{StreamID := Stream = #stream{remote = open, recv_total = Total, recv_expected = Expected}}
				when Expected =/= undefined, Expected =/= Total ->
			stream_reset(St, Stream, protocol_error,
				'The DATA length differs from the content-length header. (RFC9113 8.1.1)');
		#{StreamID := Stream = #stream{remote = open}} ->
			maybe_end_stream(stream_data(St, Stream#stream{remote = fin}, fin, <<>>), StreamID);
		_ ->
			St
	end.

%% Other frames.

frame(St = #st{got_settings = false}, {settings, Settings}) ->
	_ = erlang:cancel_timer(St#st.preface_timer),
	frame(St#st{got_settings = true, preface_timer = undefined}, {settings, Settings});
frame(#st{got_settings = false}, _) ->
	connection_error(protocol_error, 'The first frame must be SETTINGS. (RFC9113 3.4)');
frame(St = #st{continuation = undefined}, {headers, StreamID, IsFin, HeadFin, _Priority, Fragment}) ->
	frame(St, {headers, StreamID, IsFin, HeadFin, Fragment});
frame(St = #st{continuation = undefined, opts = Opts}, {headers, StreamID, IsFin, head_nofin, Fragment}) ->
	check_block_size(byte_size(Fragment), Opts),
	check_headers_stream(St, StreamID),
	St#st{continuation = {StreamID, IsFin, [Fragment], byte_size(Fragment)}};
frame(St = #st{continuation = undefined}, {headers, StreamID, IsFin, head_fin, Fragment}) ->
	check_headers_stream(St, StreamID),
	header_block(St, StreamID, IsFin, Fragment);
frame(St = #st{continuation = {StreamID, IsFin, Acc, Size}, opts = Opts},
		{continuation, StreamID, HeadFin, Fragment}) ->
	Size2 = Size + byte_size(Fragment),
	check_block_size(Size2, Opts),
	case HeadFin of
		head_nofin when Fragment =:= <<>> ->
			connection_error(enhance_your_calm, 'Empty CONTINUATION frames are refused.');
		head_nofin ->
			St#st{continuation = {StreamID, IsFin, [Fragment | Acc], Size2}};
		head_fin ->
			Block = iolist_to_binary(lists:reverse(Acc, [Fragment])),
			header_block(St#st{continuation = undefined}, StreamID, IsFin, Block)
	end;
frame(#st{continuation = {_, _, _, _}}, _) ->
	connection_error(protocol_error,
		'A header block must be continued by CONTINUATION frames on its stream. (RFC9113 6.10)');
frame(_, {continuation, _, _, _}) ->
	connection_error(protocol_error, 'CONTINUATION frame without a header block. (RFC9113 6.10)');
frame(St, {priority, _, _, _, _}) ->
	%% Accepted and ignored (RFC 9113 5.3.2).
	overhead_frame(St);
frame(St, {rst_stream, StreamID, _Code}) ->
	rst_stream_frame(St, StreamID);
frame(St, {settings, Settings}) ->
	St2 = overhead_frame(St),
	St3 = apply_settings(St2, Settings),
	flush_streams(out(mustang_http2_frame:settings_ack(), 9, St3));
frame(St = #st{settings_timer = Timer}, settings_ack) ->
	case Timer of
		undefined -> St;
		_ ->
			_ = erlang:cancel_timer(Timer),
			St#st{settings_timer = undefined}
	end;
frame(_, {push_promise, _, _, _, _}) ->
	connection_error(protocol_error, 'Clients must not send PUSH_PROMISE frames. (RFC9113 8.4)');
frame(St, {ping, Opaque}) ->
	out(mustang_http2_frame:ping_ack(Opaque), 17, overhead_frame(St));
frame(St = #st{shutdown = goaway_ping}, {ping_ack, ?GOAWAY_PING}) ->
	final_goaway(St);
frame(St, {ping_ack, _}) ->
	St;
frame(St, {goaway, _LastStreamID, _Code, _Debug}) ->
	%% The client opens no more streams; those in flight finish.
	maybe_close_connection(St#st{peer_goaway = true});
frame(St = #st{send_window = Window}, {window_update, Increment}) ->
	case Window + Increment of
		New when New > ?MAX_WINDOW ->
			connection_error(flow_control_error,
				'The connection flow-control window exceeded 2^31-1. (RFC9113 6.9.1)');
		New ->
			St2 = case St#st.queued of
				0 -> overhead_frame(St);
				_ -> St
			end,
			flush_streams(St2#st{send_window = New})
	end;
frame(St, {window_update, StreamID, Increment}) ->
	case St#st.streams of
		#{StreamID := Stream = #stream{send_window = Window, queued = Queued}} ->
			case Window + Increment of
				New when New > ?MAX_WINDOW ->
					stream_reset(St, Stream, flow_control_error,
						'The stream flow-control window exceeded 2^31-1. (RFC9113 6.9.1)');
				New ->
					St2 = case Queued of
						0 -> overhead_frame(St);
						_ -> St
					end,
					Streams = St2#st.streams,
					flush_streams(St2#st{streams = Streams#{StreamID => Stream#stream{send_window = New}}})
			end;
		_ when StreamID rem 2 =:= 1, StreamID > St#st.last_stream_id;
				StreamID rem 2 =:= 0, StreamID >= St#st.next_push_id ->
			connection_error(protocol_error, 'WINDOW_UPDATE frame on an idle stream. (RFC9113 5.1)');
		_ ->
			overhead_frame(St)
	end.

check_block_size(Size, #{max_header_block_size := Max}) when Size > Max ->
	connection_error(enhance_your_calm, 'The header block is larger than max_header_block_size.');
check_block_size(_, _) ->
	ok.

check_headers_stream(_, StreamID) when StreamID rem 2 =:= 0 ->
	connection_error(protocol_error, 'Clients must use odd-numbered streams. (RFC9113 5.1.1)');
check_headers_stream(_, _) ->
	ok.

%% Header blocks: a new request, trailers, or an error. The block is always
%% decoded, so the HPACK context stays in step with the client's (RFC 9113 4.3).
header_block(St = #st{decoder = Decoder, opts = Opts, last_stream_id = Last}, StreamID, reset,
		Block) ->
	case mustang_hpack:decode(Block, Decoder,
			#{max_decoded_size => maps:get(max_header_list_size, Opts)}) of
		{error, compression_error, Reason} ->
			connection_error(compression_error, Reason);
		{_, _, Decoder2} ->
			St2 = case StreamID > Last of
				true -> St#st{last_stream_id = StreamID, skipped = skip(Last, StreamID, St#st.skipped)};
				false -> St
			end,
			stream_error(St2#st{decoder = Decoder2}, StreamID, protocol_error,
				'A stream cannot depend on itself. (RFC9113 5.3.1)')
	end;
header_block(St = #st{decoder = Decoder, opts = Opts}, StreamID, IsFin, Block) ->
	MaxList = maps:get(max_header_list_size, Opts),
	case mustang_hpack:decode(Block, Decoder, #{max_decoded_size => MaxList}) of
		{ok, Fields, Decoder2} ->
			headers_decoded(St#st{decoder = Decoder2}, StreamID, IsFin, {ok, Fields});
		{error, header_list_too_large, Decoder2} ->
			headers_decoded(St#st{decoder = Decoder2}, StreamID, IsFin, too_large);
		{error, compression_error, Reason} ->
			connection_error(compression_error, Reason)
	end.

headers_decoded(St = #st{streams = Streams, last_stream_id = Last}, StreamID, IsFin, Result) ->
	case Streams of
		#{StreamID := Stream = #stream{remote = open}} ->
			trailers(St, Stream, IsFin, Result);
		#{StreamID := _} ->
			stream_error(St, StreamID, stream_closed,
				'HEADERS frame received on a half-closed stream. (RFC9113 5.1)');
		_ when StreamID =< Last ->
			case skipped(StreamID, St#st.skipped) of
				true ->
					connection_error(protocol_error,
						'Stream identifiers must increase. (RFC9113 5.1.1)');
				false ->
					connection_error(stream_closed,
						'HEADERS frame received on a closed stream. (RFC9113 5.1)')
			end;
		_ ->
			new_stream(St#st{last_stream_id = StreamID, skipped = skip(Last, StreamID, St#st.skipped)},
				StreamID, IsFin, Result)
	end.

skip(Last, StreamID, Skipped) when StreamID =:= Last + 2; StreamID =:= 1, Last =:= 0 ->
	Skipped;
skip(Last, StreamID, Skipped) ->
	From = case Last of 0 -> 1; _ -> Last + 2 end,
	lists:sublist([{From, StreamID - 2} | Skipped], 32).

skipped(StreamID, Skipped) ->
	lists:any(fun({From, To}) -> StreamID >= From andalso StreamID =< To end, Skipped).

trailers(St, Stream, nofin, _) ->
	stream_reset(St, Stream, protocol_error,
		'Trailers must end the stream. (RFC9113 8.1)');
trailers(St, Stream, fin, too_large) ->
	stream_reset(St, Stream, protocol_error, 'The trailers are larger than max_header_list_size.');
trailers(St, Stream, fin, {ok, Fields}) ->
	case mustang_http2_headers:trailers(Fields) of
		ok -> data_end(St, Stream#stream.id, fin);
		{error, Reason} -> stream_reset(St, Stream, protocol_error, Reason)
	end.

new_stream(St = #st{shutdown = goaway}, StreamID, _, _) ->
	%% After the final GOAWAY, new streams are refused (RFC 9113 6.8).
	out(mustang_http2_frame:rst_stream(StreamID, refused_stream), 13, St);
new_stream(St = #st{streams = Streams, pushed = Pushed, opts = #{max_concurrent_streams := Max}},
		StreamID, _, _) when map_size(Streams) - Pushed >= Max ->
	St2 = cancel_rate(St),
	out(mustang_http2_frame:rst_stream(StreamID, refused_stream), 13, St2);
new_stream(St, StreamID, IsFin, too_large) ->
	%% RFC 9113 10.5.1: answer 431 rather than process the request.
	stream_error_response(St, StreamID, IsFin, 431, header_list_too_large);
new_stream(St = #st{opts = Opts}, StreamID, IsFin, {ok, Fields}) ->
	case mustang_http2_headers:request(Fields,
			#{enable_connect_protocol => maps:get(enable_connect_protocol, Opts)}) of
		{ok, Request} ->
			start_stream(St, StreamID, Request, IsFin);
		{error, connect_not_supported} ->
			stream_error_response(St, StreamID, IsFin, 501, connect_not_supported);
		{error, Reason} ->
			log(St, notice, "mustang ~p: malformed HTTP/2 request from ~s: ~0p",
				[St#st.ref, peer(St), Reason]),
			out(mustang_http2_frame:rst_stream(StreamID, protocol_error), 13, St)
	end.

%% A response without a handler, for a request that is not processed; the
%% stream handlers may shape it (early_error/5).
stream_error_response(St = #st{opts = Opts}, StreamID, IsFin, Status, Reason) ->
	log(St, notice, "mustang ~p: ~b response to ~s on stream ~b: ~0p",
		[St#st.ref, Status, peer(St), StreamID, Reason]),
	PartialReq = #{ref => St#st.ref, pid => self(), streamid => StreamID, peer => St#st.peer,
		sock => St#st.sock, cert => St#st.cert, version => 'HTTP/2'},
	Resp0 = {response, Status, #{}, <<>>},
	{response, Status2, Headers, Body} = try
		mustang_stream:early_error(StreamID, {stream_error, Reason,
			'The request was refused before any handler ran.'}, PartialReq, Resp0, Opts)
	catch Class:Reason2:Stacktrace ->
		{log, Level, Format, Args} = mustang_stream:make_error_log(early_error,
			[StreamID, Reason, PartialReq, Resp0], Class, Reason2, Stacktrace),
		log(St, Level, Format, Args),
		Resp0
	end,
	BodyBin = iolist_to_binary(Body),
	Fields = mustang_http2_headers:response(Status2,
		Headers#{<<"content-length">> => integer_to_binary(byte_size(BodyBin))},
		mustang_clock:rfc7231()),
	{Block, Encoder} = mustang_hpack:encode([{N, iolist_to_binary(V)} || {N, V} <- Fields],
		St#st.encoder),
	MaxFrame = St#st.max_frame_size_sent,
	St2 = case BodyBin of
		<<>> ->
			out(mustang_http2_frame:headers(StreamID, fin, Block, MaxFrame), 64,
				St#st{encoder = Encoder});
		_ ->
			%% Small bodies only (an early error page): sent at once, within
			%% the initial windows.
			out([mustang_http2_frame:headers(StreamID, nofin, Block, MaxFrame),
				data_frames(StreamID, fin, BodyBin, MaxFrame)], 64 + byte_size(BodyBin),
				St#st{encoder = Encoder})
	end,
	case IsFin of
		fin -> St2;
		nofin -> out(mustang_http2_frame:rst_stream(StreamID, no_error), 13, St2)
	end.

start_stream(St = #st{streams = Streams, local_initial_window = RecvWindow,
		peer_initial_window = SendWindow, win_target = WinTarget}, StreamID, Request, IsFin) ->
	#{method := Method, path := Path, content_length := Expected} = Request,
	case {IsFin, Expected} of
		{fin, N} when N =/= undefined, N =/= 0 ->
			out(mustang_http2_frame:rst_stream(StreamID, protocol_error), 13, St);
		_ ->
			Req = build_req(St, StreamID, Request, IsFin),
			Stream = #stream{id = StreamID, method = Method, path = Path,
				remote = case IsFin of fin -> fin; nofin -> open end,
				head = Method =:= <<"HEAD">>,
				recv_window = RecvWindow, win_target = WinTarget, recv_expected = Expected,
				send_window = SendWindow},
			St2 = St#st{streams = Streams#{StreamID => Stream}},
			try mustang_stream:init_prepared(StreamID, Req, St#st.chain) of
				{Commands, Chain} ->
					commands(St2#st{streams = Streams#{StreamID => Stream#stream{chain = Chain}}},
						StreamID, Commands)
			catch Class:Reason:Stacktrace ->
				chain_crash(St2, Stream, init, [StreamID, Req], Class, Reason, Stacktrace)
			end
	end.

build_req(#st{ref = Ref, peer = Peer, sock = Sock, cert = Cert, scheme = Scheme0}, StreamID,
		Request, IsFin) ->
	#{method := Method, scheme := Scheme1, host := Host, port := Port0, path := Path, qs := Qs,
		headers := Headers, content_length := Length, protocol := Protocol} = Request,
	Scheme = case Scheme1 of <<"http">> -> Scheme1; <<"https">> -> Scheme1; _ -> Scheme0 end,
	Port = case Port0 of
		undefined when Scheme =:= <<"https">> -> 443;
		undefined -> 80;
		_ -> Port0
	end,
	{HasBody, BodyLength} = case {IsFin, Length} of
		{fin, _} -> {false, 0};
		{nofin, 0} -> {false, 0};
		{nofin, _} -> {true, Length}
	end,
	Req = #{
		ref => Ref,
		pid => self(),
		streamid => StreamID,
		peer => Peer,
		sock => Sock,
		cert => Cert,
		method => Method,
		version => 'HTTP/2',
		scheme => Scheme,
		host => Host,
		port => Port,
		path => Path,
		qs => Qs,
		headers => Headers,
		has_body => HasBody,
		body_length => BodyLength,
		mode => process,
		bindings => #{},
		host_info => undefined,
		path_info => undefined
	},
	case Protocol of
		undefined -> Req;
		_ -> Req#{protocol => Protocol}
	end.

rst_stream_frame(St = #st{streams = Streams, last_stream_id = Last}, StreamID) ->
	case Streams of
		#{StreamID := Stream = #stream{local = Local, queued = Queued}} ->
			%% A reset of a stream whose response is not complete is a
			%% cancellation: the rapid reset attack (CVE-2023-44487) is many
			%% of them.
			St2 = case Local =:= fin andalso Queued =:= 0 of
				true -> St;
				false -> cancel_rate(St)
			end,
			remove_stream(St2, Stream, {shutdown, stream_reset});
		_ when StreamID rem 2 =:= 1, StreamID > Last; StreamID rem 2 =:= 0, StreamID >= St#st.next_push_id ->
			connection_error(protocol_error, 'RST_STREAM frame on an idle stream. (RFC9113 6.4)');
		_ ->
			St
	end.

%% Stream errors (RFC 9113 5.4.2).
stream_error(St = #st{streams = Streams}, StreamID, Code, Reason) ->
	case Streams of
		#{StreamID := Stream} -> stream_reset(St, Stream, Code, Reason);
		_ ->
			log(St, debug, "mustang ~p: stream ~b reset: ~s", [St#st.ref, StreamID, Reason]),
			out(mustang_http2_frame:rst_stream(StreamID, Code), 13, St)
	end.

stream_reset(St, Stream = #stream{id = StreamID}, Code, Reason) ->
	log(St, notice, "mustang ~p: stream ~b from ~s reset with ~p: ~s",
		[St#st.ref, StreamID, peer(St), Code, Reason]),
	St2 = out(mustang_http2_frame:rst_stream(StreamID, Code), 13, St),
	remove_stream(St2, Stream, {shutdown, {stream_error, Code}}).

%% The stream ends now: its handler process is stopped (its exit is then
%% ignored), waiting callers are released, the stream handlers terminate.
remove_stream(St = #st{pids = Pids, queued = Queued}, Stream, ExitReason) ->
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
	maybe_close_connection(forget_stream(StreamID, St#st{pids = Pids2,
		queued = Queued - Stream#stream.queued,
		sending = lists:delete(StreamID, St#st.sending)})).

terminate_reason({shutdown, stream_reset}) ->
	{stream_error, cancel, 'The client reset the stream.'};
terminate_reason({shutdown, {stream_error, Code}}) ->
	{stream_error, Code, 'The stream was reset.'}.

chain_terminate(St, #stream{id = StreamID, chain = Chain}, Reason) ->
	try
		mustang_stream:terminate(StreamID, Reason, Chain)
	catch Class:Reason2:Stacktrace ->
		{log, Level, Format, Args} = mustang_stream:make_error_log(terminate,
			[StreamID, Reason], Class, Reason2, Stacktrace),
		log(St, Level, Format, Args)
	end.

%% A stream ends once the stream handlers stopped and its response is sent.
%% A request body still coming is not needed then: RST_STREAM NO_ERROR tells
%% the client to stop sending it (RFC 9113 8.1).
maybe_close_stream(St, Stream = #stream{stopped = true, local = fin, queued = 0,
		waiting = []}) ->
	#stream{id = StreamID, pid = Pid, remote = Remote} = Stream,
	St2 = case Remote of
		open -> out(mustang_http2_frame:rst_stream(StreamID, no_error), 13, St);
		fin -> St
	end,
	Pids = case Pid of
		undefined -> St2#st.pids;
		_ ->
			exit(Pid, {shutdown, stopped}),
			(St2#st.pids)#{Pid => undefined}
	end,
	chain_terminate(St2, Stream, Stream#stream.reason),
	maybe_close_connection(forget_stream(StreamID, St2#st{pids = Pids,
		sending = lists:delete(StreamID, St2#st.sending)}));
maybe_close_stream(St = #st{streams = Streams}, Stream) ->
	St#st{streams = Streams#{Stream#stream.id => Stream}}.

maybe_end_stream(St = #st{streams = Streams}, StreamID) ->
	case Streams of
		#{StreamID := Stream} -> maybe_close_stream(St, Stream);
		_ -> St
	end.

forget_stream(StreamID, St = #st{streams = Streams, pushed = Pushed}) ->
	case StreamID rem 2 of
		0 when is_map_key(StreamID, Streams) ->
			St#st{streams = maps:remove(StreamID, Streams), pushed = Pushed - 1};
		_ ->
			St#st{streams = maps:remove(StreamID, Streams)}
	end.

%% After a GOAWAY (ours or the client's), the connection ends with its last
%% stream.
maybe_close_connection(St = #st{streams = Streams, shutdown = Shutdown, peer_goaway = PeerGoaway})
		when map_size(Streams) =:= 0, (Shutdown =:= goaway orelse PeerGoaway) ->
	terminate(flush_out(St), normal);
maybe_close_connection(St) ->
	St.

%% Settings (RFC 9113 6.5.2).
apply_settings(St, Settings) ->
	maps:fold(fun apply_setting/3, St, Settings).

apply_setting(header_table_size, Size, St = #st{encoder = Encoder, opts = Opts}) ->
	St#st{encoder = mustang_hpack:set_max_size(min(Size, maps:get(max_encode_table_size, Opts)),
		Encoder)};
apply_setting(initial_window_size, Size, St = #st{peer_initial_window = Old, streams = Streams}) ->
	%% RFC 9113 6.9.2: every stream window moves by the difference.
	Delta = Size - Old,
	Streams2 = maps:map(fun(_, S = #stream{send_window = W}) ->
		case W + Delta of
			New when New > ?MAX_WINDOW ->
				connection_error(flow_control_error,
					'SETTINGS_INITIAL_WINDOW_SIZE made a window exceed 2^31-1. (RFC9113 6.9.2)');
			New -> S#stream{send_window = New}
		end
	end, Streams),
	St#st{peer_initial_window = Size, streams = Streams2};
apply_setting(max_frame_size, Size, St = #st{opts = Opts}) ->
	Max = case maps:get(max_frame_size_sent, Opts) of
		infinity -> Size;
		Cap -> min(Size, Cap)
	end,
	St#st{max_frame_size_sent = Max};
apply_setting(enable_push, Enabled, St) ->
	St#st{peer_enable_push = Enabled};
apply_setting(max_concurrent_streams, Max, St) ->
	St#st{peer_max_streams = Max};
apply_setting(_, _, St) ->
	St.

%% Rate limits: each counter covers a window of Ms milliseconds.
overhead_frame(St = #st{overhead_rate = Rate0, opts = #{max_overhead_frame_rate := Limit}}) ->
	case bump(Rate0, Limit) of
		exceeded ->
			log(St, notice, "mustang ~p: ~s sent too many frames that do no work "
				"(max_overhead_frame_rate ~p)", [St#st.ref, peer(St), Limit]),
			connection_error(enhance_your_calm, 'Too many frames that do no work.');
		Rate ->
			St#st{overhead_rate = Rate}
	end.

cancel_rate(St = #st{cancel_rate = Rate0, opts = #{max_cancel_stream_rate := Limit}}) ->
	case bump(Rate0, Limit) of
		exceeded ->
			log(St, notice, "mustang ~p: ~s cancelled or overflowed too many streams "
				"(max_cancel_stream_rate ~p)", [St#st.ref, peer(St), Limit]),
			throw({connection_error, St, enhance_your_calm, 'Too many streams cancelled.'});
		Rate ->
			St#st{cancel_rate = Rate}
	end.

bump({Count, Start}, {Max, Ms}) ->
	Now = erlang:monotonic_time(millisecond),
	if
		Now - Start > Ms -> {1, Now};
		Count + 1 > Max -> exceeded;
		true -> {Count + 1, Start}
	end.

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

command(St, Stream, {flow, Size}) ->
	flow(St, Stream, Size);
command(St = #st{pids = Pids}, Stream, {spawn, Pid, _}) ->
	St#st{pids = Pids#{Pid => Stream#stream.id},
		streams = (St#st.streams)#{Stream#stream.id => Stream#stream{pid = Pid}}};
command(St, Stream, {ack, Pid, Ref}) ->
	%% Answered once the data before it is sent, or queued within the limits.
	case over_limits(St, Stream) of
		true ->
			St#st{streams = (St#st.streams)#{Stream#stream.id =>
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
command(St, Stream = #stream{local = idle}, Error = {internal_error, _, _}) ->
	St2 = command(St, Stream#stream{reason = Error}, {response, 500, #{}, <<>>}),
	maybe_end_stream(stop(St2, Stream#stream.id), Stream#stream.id);
command(St, Stream = #stream{local = fin, queued = 0}, Error = {internal_error, _, _}) ->
	maybe_close_stream(St, Stream#stream{reason = Error, stopped = true});
command(St, Stream, Error = {internal_error, _, _}) ->
	stream_reset(St, Stream#stream{reason = Error}, internal_error,
		'The response could not be completed.');
command(St, Stream = #stream{local = idle}, {error_response, Status, Headers, Body}) ->
	command(St, Stream, {response, Status, Headers, Body});
command(St, _, {error_response, _, _, _}) ->
	St;
command(St, Stream = #stream{local = Local},
		{push, Method, Scheme, Host, Port, Path, Qs, Headers}) when Local =/= fin ->
	case can_push(St) of
		true -> push(St, Stream, Method, Scheme, Host, Port, Path, Qs, Headers);
		false -> St
	end;
command(St, Stream = #stream{local = idle}, {inform, Status, Headers}) ->
	send_headers(St, Stream, mustang_http2_headers:informational(Status, Headers), nofin);
command(St, Stream = #stream{local = idle, head = Head}, {response, Status, Headers0, Body}) ->
	Length = case Body of
		{sendfile, _, L, _} -> L;
		_ -> iolist_size(Body)
	end,
	NoBody = Head orelse mustang_http1_codec:no_body_status(Status),
	Headers = case mustang_http1_codec:no_body_status(Status) of
		true -> maps:remove(<<"content-length">>, Headers0);
		false -> Headers0#{<<"content-length">> => integer_to_binary(Length)}
	end,
	Fields = mustang_http2_headers:response(Status, Headers, mustang_clock:rfc7231()),
	case NoBody orelse Length =:= 0 of
		true ->
			send_headers(St, Stream#stream{local = fin}, Fields, fin);
		false ->
			{St2, Stream2} = send_headers_keep(St, Stream#stream{local = fin}, Fields, nofin),
			queue_data(St2, Stream2, fin, Body)
	end;
command(St, Stream = #stream{local = idle, head = Head}, {headers, Status, Headers}) ->
	Fields = mustang_http2_headers:response(Status, Headers, mustang_clock:rfc7231()),
	case Head orelse mustang_http1_codec:no_body_status(Status) of
		true -> send_headers(St, Stream#stream{local = fin}, Fields, fin);
		false -> send_headers(St, Stream#stream{local = headers}, Fields, nofin)
	end;
command(St, Stream = #stream{local = headers}, {data, IsFin, Data}) ->
	Stream2 = case IsFin of
		fin -> Stream#stream{local = fin};
		nofin -> Stream
	end,
	queue_data(St, Stream2, IsFin, Data);
command(St, Stream = #stream{local = headers}, {trailers, Trailers}) ->
	queue(St, Stream#stream{local = fin}, {trailers, Trailers}, 0);
command(St, Stream, Command) when element(1, Command) =:= data; element(1, Command) =:= trailers;
		element(1, Command) =:= response; element(1, Command) =:= headers;
		element(1, Command) =:= inform ->
	%% A response part out of order (or the body of a HEAD response, which
	%% is not sent).
	_ = Stream#stream.head orelse log(St, debug, "mustang ~p: stream ~b: ~p ignored after ~p",
		[St#st.ref, Stream#stream.id, element(1, Command), Stream#stream.local]),
	St;
command(St, _, _) ->
	%% switch_protocol, set_options, push after the response, and commands
	%% of other protocols.
	St.

%% The stream handlers are done with the stream: the response is completed
%% if it is not (204, or the end of a streamed body), and the stream ends
%% once it is sent.
stop_stream(St, Stream = #stream{local = idle}) ->
	St2 = command(St, Stream, {response, 204, #{}, <<>>}),
	maybe_end_stream(stop(St2, Stream#stream.id), Stream#stream.id);
stop_stream(St, Stream = #stream{local = headers}) ->
	St2 = command(St, Stream, {data, fin, <<>>}),
	maybe_end_stream(stop(St2, Stream#stream.id), Stream#stream.id);
stop_stream(St, Stream) ->
	maybe_close_stream(St, Stream#stream{stopped = true}).

stop(St = #st{streams = Streams}, StreamID) ->
	case Streams of
		#{StreamID := Stream} -> St#st{streams = Streams#{StreamID => Stream#stream{stopped = true}}};
		_ -> St
	end.

%% Server push (RFC 9113 8.4): only when the client accepts it, while the
%% connection is not shutting down, within the number of streams the client
%% allows, and while stream ids remain.
can_push(#st{peer_enable_push = Enabled, shutdown = Shutdown, peer_goaway = PeerGoaway,
		pushed = Pushed, peer_max_streams = Max, next_push_id = Next}) ->
	Enabled andalso Shutdown =:= none andalso not PeerGoaway
		andalso (Max =:= infinity orelse Pushed < Max) andalso Next =< ?MAX_WINDOW.

%% The promised request is checked like a client's, announced with
%% PUSH_PROMISE on the stream it belongs to, then served like a client's
%% request on the promised stream, whose receiving side is already closed.
push(St = #st{encoder = Encoder, max_frame_size_sent = MaxFrame, next_push_id = PromisedID},
		#stream{id = StreamID}, Method, Scheme, Host, Port, Path, Qs, Headers) ->
	Authority = case {Scheme, Port} of
		{<<"http">>, 80} -> Host;
		{<<"https">>, 443} -> Host;
		_ -> [Host, $:, integer_to_binary(Port)]
	end,
	FullPath = case Qs of
		<<>> -> Path;
		_ -> [Path, $?, Qs]
	end,
	Fields = [{<<":method">>, Method}, {<<":scheme">>, Scheme},
		{<<":authority">>, iolist_to_binary(Authority)}, {<<":path">>, iolist_to_binary(FullPath)}
		| [{N, iolist_to_binary(V)} || {N, V} <- maps:to_list(Headers)]],
	case mustang_http2_headers:request(Fields, #{enable_connect_protocol => false}) of
		{ok, Request} ->
			{Block, Encoder2} = mustang_hpack:encode(Fields, Encoder),
			St2 = out(mustang_http2_frame:push_promise_frames(StreamID, PromisedID, Block, MaxFrame),
				iolist_size(Block) + 13, St#st{encoder = Encoder2, next_push_id = PromisedID + 2}),
			St3 = start_stream(St2, PromisedID, Request, fin),
			case is_map_key(PromisedID, St3#st.streams) of
				true -> St3#st{pushed = St3#st.pushed + 1};
				false -> St3
			end;
		{error, Reason} ->
			log(St, warning, "mustang ~p: push of ~s refused, the request is not valid: ~0p",
				[St#st.ref, FullPath, Reason]),
			St
	end.

send_headers(St, Stream, Fields, IsFin) ->
	{St2, Stream2} = send_headers_keep(St, Stream, Fields, IsFin),
	maybe_close_stream(St2, Stream2).

send_headers_keep(St = #st{encoder = Encoder, max_frame_size_sent = MaxFrame}, Stream, Fields, IsFin) ->
	{Block, Encoder2} = mustang_hpack:encode([{N, iolist_to_binary(V)} || {N, V} <- Fields], Encoder),
	Frames = mustang_http2_frame:headers(Stream#stream.id, IsFin, Block, MaxFrame),
	{out(Frames, 128, St#st{encoder = Encoder2}), Stream}.

%% Response body data goes out as far as the windows allow; the rest waits
%% in the stream's queue. An ack after it is answered once its data is sent
%% or the queues are below their limits, so a fast handler is held back by a
%% slow client.
over_limits(#st{queued = ConnQueued, opts = #{connection_send_buffer_size := ConnMax,
		stream_send_buffer_size := StreamMax}}, #stream{queued = Queued}) ->
	Queued > StreamMax orelse ConnQueued > ConnMax.

queue_data(St, Stream, IsFin, {sendfile, Offset, Length, Path}) ->
	queue(St, Stream, {sendfile, IsFin, Offset, Length, Path}, Length);
queue_data(St, Stream, IsFin, Data) ->
	Bin = iolist_to_binary(Data),
	queue(St, Stream, {data, IsFin, Bin}, byte_size(Bin)).

queue(St = #st{queued = ConnQueued, sending = Sending}, Stream = #stream{queue = Q, queued = Queued},
		Item, Size) ->
	StreamID = Stream#stream.id,
	Stream2 = Stream#stream{queue = queue:in(Item, Q), queued = Queued + Size},
	Sending2 = case lists:member(StreamID, Sending) of
		true -> Sending;
		false -> Sending ++ [StreamID]
	end,
	St2 = St#st{streams = (St#st.streams)#{StreamID => Stream2}, queued = ConnQueued + Size,
		sending = Sending2},
	flush_streams(St2).

%% Sends queued data of every stream that has some, in turn, as far as the
%% windows allow.
flush_streams(St = #st{sending = []}) ->
	unblocked(St);
flush_streams(St = #st{sending = Sending}) ->
	St2 = lists:foldl(fun flush_stream/2, St, Sending),
	%% Handlers held back are released once their stream's queue and the
	%% connection's are below the limits; streams stay listed while they
	%% have queued data or held-back handlers.
	St3 = lists:foldl(fun release_waiting/2, St2#st{sending = []}, St2#st.sending),
	case St3#st.queued of
		0 -> unblocked(St3);
		_ -> blocked(St3)
	end.

flush_stream(StreamID, St = #st{streams = Streams}) ->
	case Streams of
		#{StreamID := Stream} ->
			case send_queue(St, Stream) of
				{St2, Stream2} ->
					St2#st{streams = (St2#st.streams)#{StreamID => Stream2}};
				{error, St2, Stream2} ->
					stream_reset(St2, Stream2, internal_error, 'The response body could not be read.')
			end;
		_ ->
			St
	end.

release_waiting(StreamID, St = #st{streams = Streams, sending = Sending}) ->
	case Streams of
		#{StreamID := Stream = #stream{waiting = Waiting, queue = Q}} ->
			Stream2 = case Waiting =/= [] andalso not over_limits(St, Stream) of
				true ->
					_ = [From ! {Tag, ok} || {Tag, From} <- lists:reverse(Waiting)],
					Stream#stream{waiting = []};
				false ->
					Stream
			end,
			case queue:is_empty(Q) andalso Stream2#stream.waiting =:= [] of
				true -> maybe_close_stream(St, Stream2);
				false ->
					St#st{streams = Streams#{StreamID => Stream2}, sending = Sending ++ [StreamID]}
			end;
		_ ->
			St
	end.

send_queue(St, Stream = #stream{queue = Q}) ->
	case queue:out(Q) of
		{empty, _} ->
			{St, Stream};
		{{value, {trailers, Trailers}}, Q2} ->
			{St2, Stream2} = send_headers_keep(St, Stream#stream{queue = Q2},
				mustang_http2_headers:trailer_fields(Trailers), fin),
			send_queue(St2, Stream2);
		{{value, Item}, Q2} ->
			case send_item(St, Stream, Item) of
				{done, St2, Stream2} -> send_queue(St2, Stream2#stream{queue = Q2});
				{partial, St2, Stream2, Item2} -> {St2, Stream2#stream{queue = queue:in_r(Item2, Q2)}};
				error -> {error, St, Stream}
			end
	end.

%% One queued item: sent whole when the windows allow (an empty item only
%% carries END_STREAM), else as much as they allow.
send_item(St, Stream, {data, IsFin, <<>>}) ->
	{done, out(mustang_http2_frame:data(Stream#stream.id, IsFin, <<>>), 9, St), Stream};
send_item(St = #st{send_window = ConnWindow}, Stream = #stream{send_window = StreamWindow}, Item)
		when ConnWindow =< 0; StreamWindow =< 0 ->
	{partial, St, Stream, Item};
send_item(St = #st{send_window = ConnWindow}, Stream = #stream{send_window = StreamWindow},
		{data, IsFin, Bin}) ->
	Size = byte_size(Bin),
	case min(ConnWindow, StreamWindow) of
		Allowed when Allowed >= Size ->
			{done, send_data(St, Stream, IsFin, Bin), sent(Stream, Size)};
		Allowed ->
			<<Now:Allowed/binary, Later/bits>> = Bin,
			{partial, send_data(St, Stream, nofin, Now), sent(Stream, Allowed), {data, IsFin, Later}}
	end;
send_item(St = #st{send_window = ConnWindow}, Stream = #stream{send_window = StreamWindow},
		{sendfile, IsFin, Offset, Length, Path}) ->
	Allowed = min(min(ConnWindow, StreamWindow), min(Length, 1048576)),
	case read_file(Path, Offset, Allowed) of
		{ok, Bin} when byte_size(Bin) =:= Length ->
			{done, send_data(St, Stream, IsFin, Bin), sent(Stream, Length)};
		{ok, Bin} ->
			N = byte_size(Bin),
			{partial, send_data(St, Stream, nofin, Bin), sent(Stream, N),
				{sendfile, IsFin, Offset + N, Length - N, Path}};
		{error, Reason} ->
			log(St, error, "mustang ~p: sendfile ~ts failed: ~0p", [St#st.ref, Path, Reason]),
			error
	end.

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

sent(Stream = #stream{send_window = Window, queued = Queued}, Size) ->
	Stream#stream{send_window = Window - Size, queued = Queued - Size}.

send_data(St = #st{send_window = Window, queued = Queued, max_frame_size_sent = Max}, Stream,
		IsFin, Bin) ->
	Size = byte_size(Bin),
	out(data_frames(Stream#stream.id, IsFin, Bin, Max), Size,
		St#st{send_window = Window - Size, queued = Queued - Size, blocked_since = undefined}).

data_frames(StreamID, IsFin, Bin, Max) when byte_size(Bin) =< Max ->
	mustang_http2_frame:data(StreamID, IsFin, Bin);
data_frames(StreamID, IsFin, Bin, Max) ->
	<<Chunk:Max/binary, Rest/bits>> = Bin,
	[mustang_http2_frame:data(StreamID, nofin, Chunk) | data_frames(StreamID, IsFin, Rest, Max)].

%% A client that never opens its window would hold the queued data (and the
%% handlers waiting on it) forever.
blocked(St = #st{blocked_since = undefined, opts = #{flow_control_timeout := Timeout}}) ->
	Timer = case Timeout of
		infinity -> undefined;
		_ -> erlang:start_timer(Timeout, self(), flow_control_timeout)
	end,
	cancel(St#st.flow_timer),
	St#st{blocked_since = erlang:monotonic_time(millisecond), flow_timer = Timer};
blocked(St = #st{flow_timer = undefined, opts = #{flow_control_timeout := Timeout}})
		when Timeout =/= infinity ->
	St#st{flow_timer = erlang:start_timer(Timeout, self(), flow_control_timeout)};
blocked(St) ->
	St.

unblocked(St = #st{flow_timer = Timer}) ->
	cancel(Timer),
	St#st{blocked_since = undefined, flow_timer = undefined}.

cancel(undefined) -> ok;
cancel(Timer) -> _ = erlang:cancel_timer(Timer), ok.

flow_control_timeout(St = #st{blocked_since = undefined}) ->
	St;
flow_control_timeout(St = #st{blocked_since = Since, opts = #{flow_control_timeout := Timeout}}) ->
	Now = erlang:monotonic_time(millisecond),
	case Now - Since >= Timeout of
		true ->
			log(St, notice, "mustang ~p: ~s did not open its flow-control window in ~b ms",
				[St#st.ref, peer(St), Timeout]),
			goaway_close(St, enhance_your_calm,
				'The client did not open its flow-control window within flow_control_timeout.');
		false ->
			St#st{flow_timer = erlang:start_timer(Timeout - (Now - Since), self(),
				flow_control_timeout)}
	end.

%% Request bodies: the stream handlers ask for Size more bytes ({flow, Size});
%% the client gets what they ask for plus a margin, or the adapted window
%% when larger.

flow(St, Stream0, Size) ->
	%% They wait for data while the client is out of window: the window is
	%% too small for this connection's pace. (Doubling sooner, when half the
	%% window is used, was measured slower: a curl upload took 1.1-1.4 s
	%% instead of 0.41-0.44 s for 400 MB, data piling up unread.)
	{St1, Stream1} = case Stream0 of
		#stream{recv_window = Window, win_target = Target, remote = open} when Window < 16384 ->
			NewTarget = min(Target * 2, St#st.max_stream_window),
			{St#st{win_target = max(NewTarget, St#st.win_target)},
				Stream0#stream{win_target = NewTarget}};
		_ ->
			{St, Stream0}
	end,
	{St2, Stream2} = case Stream1 of
		#stream{remote = open} -> grant_window(St1, Stream1#stream{want = Size}, Size);
		_ -> {St1, Stream1}
	end,
	St2#st{streams = (St2#st.streams)#{Stream2#stream.id => Stream2}}.

grant_window(St = #st{stream_margin = Margin, max_stream_window = MaxWindow},
		Stream = #stream{id = StreamID, recv_window = Window, win_target = WinTarget,
			recv_total = Total, recv_expected = Expected}, Size) ->
	Target = min(max(Size + Margin, WinTarget), MaxWindow),
	%% Never more than the content-length leaves.
	Need = case Expected of
		undefined -> Target;
		_ -> min(Target, Expected - Total)
	end,
	Increment = Need - Window,
	%% Large windows are topped up in large steps: fewer frames and sends;
	%% but always once the client has less than half of what it may send.
	Threshold = min(Target div 2, max(St#st.stream_threshold, Target div 4)),
	case Increment > 0 andalso (Increment >= Threshold orelse Window * 2 < Need) of
		true ->
			{out(mustang_http2_frame:window_update(StreamID, Increment), 13, St),
				Stream#stream{recv_window = Window + Increment, target = Target}};
		false ->
			{St, Stream#stream{target = Target}}
	end.

%% Processes of the stream handlers ({spawn, ...}): their exits go down the
%% chain.
stream_exit(St = #st{pids = Pids}, Pid, Reason) ->
	StreamID = map_get(Pid, Pids),
	St2 = St#st{pids = maps:remove(Pid, Pids)},
	case St2#st.streams of
		#{StreamID := Stream = #stream{pid = Pid}} when StreamID =/= undefined ->
			St3 = St2#st{streams = (St2#st.streams)#{StreamID => Stream#stream{pid = undefined}}},
			stream_info(St3, StreamID, {'EXIT', Pid, Reason});
		_ ->
			maybe_close_connection(St2)
	end.

%% Shutdown. A graceful GOAWAY takes two steps (RFC 9113 6.8): a GOAWAY with
%% the largest stream id and a PING, then, once the PING is answered (every
%% stream the client opened before it has reached us), a GOAWAY with the last
%% stream id processed.

start_shutdown(St = #st{shutdown = none}) ->
	St2 = out([mustang_http2_frame:goaway(?MAX_WINDOW, no_error, <<>>),
		mustang_http2_frame:ping(?GOAWAY_PING)], 34, St),
	%% A client that does not answer the PING gets the final GOAWAY anyway.
	_ = erlang:send_after(1000, self(), {?MODULE, final_goaway}),
	St2#st{shutdown = goaway_ping};
start_shutdown(St) ->
	St.

final_goaway(St = #st{last_stream_id = Last}) ->
	St2 = out(mustang_http2_frame:goaway(Last, no_error, <<>>), 17, St),
	maybe_close_connection(St2#st{shutdown = goaway}).

-spec goaway_close(#st{}, mustang_http2_frame:error_code(), atom()) -> no_return().
goaway_close(St = #st{last_stream_id = Last}, Code, Reason) ->
	case Code of
		no_error -> ok;
		_ ->
			log(St, notice, "mustang ~p: connection from ~s closed with ~p: ~s",
				[St#st.ref, peer(St), Code, Reason])
	end,
	Debug = case Code of
		no_error -> <<>>;
		_ -> atom_to_binary(Reason, utf8)
	end,
	St2 = flush_out(out(mustang_http2_frame:goaway(Last, Code, Debug), 17, St)),
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
linger(#st{transport = Transport, socket = Socket, opts = #{linger_timeout := Timeout}}, {goaway, _})
		when Timeout > 0 ->
	_ = Transport:setopts(Socket, [{active, false}]),
	Deadline = erlang:monotonic_time(millisecond) + Timeout,
	linger_loop(Transport, Socket, Deadline);
linger(_, _) ->
	ok.

linger_loop(Transport, Socket, Deadline) ->
	case Deadline - erlang:monotonic_time(millisecond) of
		Wait when Wait > 0 ->
			case Transport:recv(Socket, 0, Wait) of
				{ok, _} -> linger_loop(Transport, Socket, Deadline);
				_ -> ok
			end;
		_ ->
			ok
	end.

supervisor_call(which_children, From, #st{pids = Pids}) ->
	gen:reply(From, [{mustang_stream, Pid, worker, [?MODULE]} || Pid <- maps:keys(Pids)]);
supervisor_call(count_children, From, #st{pids = Pids}) ->
	N = map_size(Pids),
	gen:reply(From, [{specs, 1}, {active, N}, {supervisors, 0}, {workers, N}]);
supervisor_call(_, From, _) ->
	gen:reply(From, {error, not_supported}).

peer(#st{peer = {IP, Port}}) -> [inet:ntoa(IP), $:, integer_to_list(Port)];
peer(_) -> "unknown".

log(#st{opts = #{logger := Logger}}, Level, Format, Args) ->
	_ = Logger:Level(Format, Args),
	ok.

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
