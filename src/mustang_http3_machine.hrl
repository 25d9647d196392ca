%% Records of mustang_http3_machine, shared with mustang_http3_machine_stream.

%% The largest control stream frame we read (SETTINGS, GOAWAY...): larger
%% ones are refused (RFC 9114 10.5).
-define(MAX_CONTROL_FRAME, 16384).
%% What a request stream may hold while its field section waits for QPACK
%% entries (RFC 9204 2.1.2); more is a stream error.
-define(MAX_HELD, 1048576).
%% The largest client-initiated bidirectional stream id, sent in the first
%% GOAWAY of a graceful shutdown (RFC 9114 5.2).
-define(MAX_REQUEST_ID, 16#3ffffffffffffffc).

%% Reading frames from a stream: the frame header, a frame payload to join
%% once whole, a DATA payload handed over as it arrives, or the payload of
%% an unknown frame skipped as it arrives. Bytes not looked at yet wait as
%% parts (newest first) until at least `need` are there.
-record(rd, {
	state = header :: header | {frame, mustang_http3_frame:frame_type(), non_neg_integer()}
		| {data, non_neg_integer()} | {skip, non_neg_integer()},
	parts = [] :: [binary()],
	size = 0 :: non_neg_integer(),
	need = 1 :: non_neg_integer()
}).

-type local() :: idle | headers | fin.

%% A request stream (RFC 9114 4.1, 6.1).
-record(req, {
	id :: non_neg_integer(),
	%% headers: waiting for the request's HEADERS; body: DATA or trailers;
	%% trailers: nothing but unknown frames until the end; blocked: a field
	%% section waits for QPACK entries, the data after it is held; discard:
	%% the request was answered early, the rest is ignored.
	phase = headers :: headers | body | trailers | blocked | discard,
	rd = #rd{} :: #rd{},
	%% While blocked: whether headers or trailers wait, and the data held
	%% after them (newest first), its size, and whether the stream ended.
	blocked = headers :: headers | trailers,
	held = [] :: [binary()],
	held_size = 0 :: non_neg_integer(),
	held_fin = nofin :: fin | nofin,
	remote = open :: open | fin,
	recv_total = 0 :: non_neg_integer(),
	recv_expected = undefined :: non_neg_integer() | undefined,
	head = false :: boolean(),
	%% Sending: nothing yet, the head sent (body in progress), or done.
	local = idle :: local()
}).

%% A unidirectional stream of the peer's (RFC 9114 6.2): its type is read
%% first; then frames (control), QPACK instructions (encoder, decoder), or
%% nothing (an unknown type, refused with STOP_SENDING).
-record(uni, {
	id :: non_neg_integer(),
	type = undefined :: undefined | control | encoder | decoder,
	buffer = <<>> :: binary(),
	rd = #rd{} :: #rd{}
}).

-record(h3, {
	opts :: map(),
	decoder :: mustang_qpack:decoder(),
	encoder :: mustang_qpack:encoder(),
	%% Request streams and the peer's unidirectional streams by id, the
	%% largest id of each kind opened so far (-4 and -2: none), and the ids
	%% below them not seen yet, as ranges; data on a smaller id that is in
	%% neither is for a stream already forgotten, and ignored.
	streams = #{} :: #{non_neg_integer() => #req{} | #uni{}},
	last_request = -4 :: integer(),
	last_uni = -2 :: integer(),
	skipped = [] :: [{non_neg_integer(), non_neg_integer()}],
	%% The peer's critical streams, once their type is known.
	control = undefined :: undefined | non_neg_integer(),
	encoder_stream = undefined :: undefined | non_neg_integer(),
	decoder_stream = undefined :: undefined | non_neg_integer(),
	%% The peer's SETTINGS, once received (RFC 9114 6.2.1).
	peer_settings = undefined :: undefined | mustang_http3_frame:settings(),
	max_push_id = undefined :: undefined | non_neg_integer(),
	peer_goaway = undefined :: undefined | non_neg_integer(),
	%% Our GOAWAY: none, the graceful first one (the largest id), or the
	%% final one, whose id new requests must be below.
	shutdown = none :: none | goaway_max | goaway,
	goaway_id = ?MAX_REQUEST_ID + 4 :: non_neg_integer(),
	%% Streams cancelled by the peer: {Count, WindowStart}.
	cancel_rate = {0, 0} :: {non_neg_integer(), integer()},
	now = 0 :: integer(),
	%% Output: actions and events of the current call (newest first).
	actions = [] :: [mustang_http3_machine:action()],
	events = [] :: [mustang_http3_machine:event()]
}).
