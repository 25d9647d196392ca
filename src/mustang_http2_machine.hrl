%% Records of mustang_http2_machine, shared with mustang_http2_machine_send.

-define(MAX_WINDOW, 16#7fffffff).

-type local() :: idle | headers | fin.

-record(stream, {
	id :: pos_integer(),
	%% Receiving side: open or fin (END_STREAM received).
	remote = open :: open | fin,
	%% Sending side: idle (nothing sent), headers (body in progress), fin
	%% (the end of the response is queued or sent).
	local = idle :: local(),
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
	%% Request body bytes the stream handlers asked for and did not get yet.
	want = 0 :: integer(),
	%% Sending: our window at the peer, and the queue of what waits for it.
	send_window :: integer(),
	queue = queue:new() :: queue:queue(queued()),
	queued = 0 :: non_neg_integer(),
	%% The process holds callers back until the queues drain (hold/2).
	held = false :: boolean()
}).

-type queued() :: {data, mustang_http2_frame:fin(), binary()}
	| {sendfile, mustang_http2_frame:fin(), non_neg_integer(), non_neg_integer(), file:name_all()}
	| {trailers, mustang_req:headers()}.

-record(m, {
	opts :: map(),
	%% Parsing: bytes not looked at yet, and a partial frame.
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
	%% When our SETTINGS were sent, until the peer acknowledges them.
	settings_sent :: integer() | undefined,
	max_frame_size_received :: pos_integer(),
	max_frame_size_sent = 16384 :: pos_integer(),
	peer_initial_window = 65535 :: non_neg_integer(),
	%% Server push (RFC 9113 8.4).
	peer_enable_push = true :: boolean(),
	peer_max_streams = infinity :: non_neg_integer() | infinity,
	next_push_id = 2 :: pos_integer(),
	pushed = 0 :: non_neg_integer(),
	local_initial_window :: non_neg_integer(),
	%% The stream window target learned on this connection, for new streams.
	win_target :: non_neg_integer(),
	conn_threshold :: non_neg_integer(),
	stream_margin :: non_neg_integer(),
	stream_threshold :: non_neg_integer(),
	max_stream_window :: non_neg_integer(),
	%% Connection windows.
	send_window = 65535 :: integer(),
	recv_window :: integer(),
	recv_unacked = 0 :: non_neg_integer(),
	streams = #{} :: #{pos_integer() => #stream{}},
	last_stream_id = 0 :: non_neg_integer(),
	%% Client stream ids skipped (never opened) below last_stream_id, as
	%% {From, To} ranges, newest first, at most 32: a HEADERS on one of them
	%% is a protocol error, on an opened one a STREAM_CLOSED error.
	skipped = [] :: [{pos_integer(), pos_integer()}],
	%% Idle client stream ids we reset (a PRIORITY frame that made the stream
	%% depend on itself), newest first, at most 32: they are closed, and a
	%% HEADERS frame on one is ignored (RFC 9113 5.1).
	reset_idle = [] :: [pos_integer()],
	%% Streams with queued data or held callers, in the order they are served.
	sending = [] :: [pos_integer()],
	queued = 0 :: non_neg_integer(),
	blocked_since = undefined :: undefined | integer(),
	%% Output not taken yet, and events of the current call (newest first).
	out = [] :: iodata(),
	out_size = 0 :: non_neg_integer(),
	events = [] :: [mustang_http2_machine:event()],
	now = 0 :: integer(),
	%% Rate limits: {Count, WindowStart}.
	cancel_rate = {0, 0} :: {non_neg_integer(), integer()},
	overhead_rate = {0, 0} :: {non_neg_integer(), integer()},
	%% none, goaway_ping (first GOAWAY sent, waiting for the PING ACK),
	%% goaway (final GOAWAY sent: no new streams).
	shutdown = none :: none | goaway_ping | goaway,
	peer_goaway = false :: boolean()
}).
