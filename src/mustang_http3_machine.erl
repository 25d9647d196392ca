%% The HTTP/3 connection state machine (RFC 9114, RFC 9204, RFC 9220),
%% server side. Pure: it never touches a socket or the QUIC engine, sends no
%% messages, writes no logs and starts no timers; the current monotonic time
%% (milliseconds) is passed in where a rate limit needs it. The connection
%% process (socket, NIF, timers, stream handlers) calls it; see
%% doc/internals/http3.md.
%%
%% In: QUIC stream events, as the QUIC layer reports them: a peer stream
%% opened (new_stream/3, or implicitly by its first data), its data with or
%% without the end (stream_data/5), its reset (stream_reset/4), a request to
%% stop sending on one of ours (stop_sending/4). Stream ids say who opened a
%% stream and in which direction (RFC 9000 2.1): client bidirectional
%% (id rem 4 = 0) streams are requests, client unidirectional ones (2) carry
%% a type (control, QPACK encoder or decoder, or one to refuse).
%%
%% Out: events for the connection process (requests, their body and
%% trailers, cancellations, stream errors, the peer's settings and GOAWAY),
%% returned by each call, and actions for the QUIC layer (bytes to write on a
%% stream, our unidirectional streams to open and write, streams to reset or
%% stop, the connection to close), gathered in the machine and taken with
%% take_actions/1, in the order they were made.
%%
%% Every function that can fail returns
%%   {ok, [event()], Machine}
%%   {error, {connection_error, Code, Reason}, Machine}
%% Code is an HTTP/3 or QPACK error code (mustang_http3_frame:error_code()),
%% Reason a sentence ending with the RFC section it enforces. After a
%% connection error the machine is the one from before the failing call with
%% a {close, Code, Reason} action added: the caller takes the actions, closes
%% the connection, and logs. A stream error is an event, {stream_error,
%% StreamID, Code, Reason}: its RESET_STREAM and STOP_SENDING are already
%% queued and the stream forgotten; the other streams go on.
%%
%% Options (all optional; defaults in parentheses):
%%   qpack_max_table_capacity (4096): our SETTINGS_QPACK_MAX_TABLE_CAPACITY,
%%     the peer's encoder's dynamic table in our decoder;
%%   qpack_blocked_streams (100): our SETTINGS_QPACK_BLOCKED_STREAMS;
%%   qpack_encoder_max_table_capacity (4096): the most of the peer's table our
%%     encoder uses; 0 keeps responses to the static table and literals;
%%   max_field_section_size (65536): our SETTINGS_MAX_FIELD_SECTION_SIZE,
%%     the largest request head or trailers (a larger head is answered 431);
%%   enable_connect_protocol (false): SETTINGS_ENABLE_CONNECT_PROTOCOL,
%%     extended CONNECT (RFC 9220) for Websocket over HTTP/3;
%%   max_cancel_stream_rate ({500, 10000}): streams the client may cancel
%%     (or unknown unidirectional streams it may open) per period in ms,
%%     beyond which the connection is closed with H3_EXCESSIVE_LOAD.
-module(mustang_http3_machine).

-export([init/2]).
-export([new_stream/3]).
-export([stream_data/5]).
-export([stream_reset/4]).
-export([stop_sending/4]).
-export([send/4]).
-export([early_response/7]).
-export([reset_stream/3]).
-export([close_stream/2]).
-export([start_shutdown/1]).
-export([final_goaway/1]).
-export([close/3]).
-export([stream/2]).
-export([request_count/1]).
-export([shutdown/1]).
-export([closing/1]).
-export([peer_settings/1]).
-export([take_actions/1]).

-include("mustang_http3_machine.hrl").

-type stream_id() :: non_neg_integer().
-type code() :: mustang_http3_frame:error_code().
-type fin() :: fin | nofin.
-type error() :: {connection_error, code(), atom()}.
-type role() :: control | encoder | decoder.
-type event() ::
	{headers, stream_id(), fin(), mustang_http2_headers:request()}
	| {data, stream_id(), fin(), binary()}
	| {trailers, stream_id(), [{binary(), binary()}]}
	| {cancel, stream_id(), code()}
	| {stream_error, stream_id(), code(), atom()}
	| {early_error, stream_id(), fin(), 431 | 501, atom()}
	| {settings, mustang_http3_frame:settings()}
	| {goaway, non_neg_integer()}
	| {ignored, stream_id(), atom(), local()}.
-type action() ::
	{send, stream_id(), iodata(), fin()}
	| {sendfile, stream_id(), non_neg_integer(), non_neg_integer(), file:name_all(), fin()}
	| {open_uni, role(), iodata()}
	| {send_uni, role(), iodata()}
	| {reset_stream, stream_id(), code()}
	| {stop_sending, stream_id(), code()}
	| {close, code(), atom()}.
-type result() :: {ok, [event()], machine()} | {error, error(), machine()}.
-type part() :: {inform, mustang_req:status(), mustang_req:headers()}
	| {response, mustang_req:status(), mustang_req:headers(), body()}
	| {headers, mustang_req:status(), mustang_req:headers()}
	| {data, fin(), body()}
	| {trailers, mustang_req:headers()}.
-type body() :: iodata() | {sendfile, non_neg_integer(), non_neg_integer(), file:name_all()}.
-export_type([machine/0, event/0, action/0, error/0, result/0, part/0, role/0, local/0]).

-opaque machine() :: #h3{}.

-define(S, mustang_http3_machine_stream).

defaults() ->
	#{qpack_max_table_capacity => 4096, qpack_blocked_streams => 100,
		qpack_encoder_max_table_capacity => 4096, max_field_section_size => 65536,
		enable_connect_protocol => false, max_cancel_stream_rate => {500, 10000}}.

%% Start: our control stream with its SETTINGS (RFC 9114 6.2.1), and our
%% QPACK encoder and decoder streams (RFC 9204 4.2), opened at once so the
%% peer never waits for them.
-spec init(map(), integer()) -> machine().
init(Opts0, Now) ->
	Opts = maps:merge(defaults(), maps:with(maps:keys(defaults()), Opts0)),
	#{qpack_max_table_capacity := Capacity, qpack_blocked_streams := Blocked,
		max_field_section_size := MaxSection, enable_connect_protocol := Connect} = Opts,
	Settings = maps:filter(fun(_, V) -> V =/= 0 andalso V =/= infinity andalso V =/= false end,
		#{qpack_max_table_capacity => Capacity, qpack_blocked_streams => Blocked,
			max_field_section_size => MaxSection, enable_connect_protocol => Connect}),
	M = #h3{opts = Opts, now = Now,
		decoder = mustang_qpack:init_decoder(#{max_table_capacity => Capacity,
			blocked_streams => Blocked, max_field_section_size => MaxSection}),
		encoder = mustang_qpack:init_encoder(#{
			max_table_capacity => maps:get(qpack_encoder_max_table_capacity, Opts)})},
	lists:foldl(fun action/2, M, [
		{open_uni, control, [mustang_http3_frame:stream_type(control),
			mustang_http3_frame:settings(Settings)]},
		{open_uni, encoder, mustang_http3_frame:stream_type(encoder)},
		{open_uni, decoder, mustang_http3_frame:stream_type(decoder)}]).

%% Runs Fun, collecting its events; connection errors are thrown inside.
run(M0, Now, Fun) ->
	try Fun(M0#h3{now = Now}) of
		M = #h3{events = []} -> {ok, [], M};
		M -> {ok, lists:reverse(M#h3.events), M#h3{events = []}}
	catch
		throw:{connection_error, Code, Reason} ->
			{error, {connection_error, Code, Reason},
				action({close, Code, Reason}, M0#h3{now = Now, events = []})}
	end.

action(Action, M = #h3{actions = Actions}) ->
	M#h3{actions = [Action | Actions]}.

event(Event, M = #h3{events = Events}) ->
	M#h3{events = [Event | Events]}.

-spec connection_error(code(), atom()) -> no_return().
connection_error(Code, Reason) ->
	throw({connection_error, Code, Reason}).

%% The actions made so far, oldest first.
-spec take_actions(machine()) -> {[action()], machine()}.
take_actions(M = #h3{actions = Actions}) ->
	{lists:reverse(Actions), M#h3{actions = []}}.

%% State queries.

%% {Local, Remote} of a request stream, undefined once it is forgotten.
-spec stream(stream_id(), machine()) -> {local(), open | fin} | undefined.
stream(StreamID, #h3{streams = Streams}) ->
	case Streams of
		#{StreamID := #req{local = Local, remote = Remote}} -> {Local, Remote};
		_ -> undefined
	end.

%% The number of request streams not forgotten.
-spec request_count(machine()) -> non_neg_integer().
request_count(#h3{streams = Streams}) ->
	maps:fold(fun(_, #req{}, N) -> N + 1; (_, _, N) -> N end, 0, Streams).

-spec shutdown(machine()) -> none | goaway_max | goaway.
shutdown(#h3{shutdown = Shutdown}) -> Shutdown.

%% Whether the connection ends with its last request (a GOAWAY either way).
-spec closing(machine()) -> boolean().
closing(#h3{shutdown = Shutdown, peer_goaway = PeerGoaway}) ->
	Shutdown =:= goaway orelse PeerGoaway =/= undefined.

-spec peer_settings(machine()) -> mustang_http3_frame:settings() | undefined.
peer_settings(#h3{peer_settings = Settings}) -> Settings.

%% Streams opened by the peer.

%% A new peer stream. Opening a stream opens those of its kind with smaller
%% ids (RFC 9000 2.1): they are remembered as skipped until they come, in
%% any order. An id below the largest seen that is neither known nor
%% skipped was forgotten (data still in the process's mailbox after a
%% reset): ignored. QUIC's stream limit bounds how many ids can be skipped.
-spec new_stream(stream_id(), integer(), machine()) -> result().
new_stream(StreamID, Now, M0) ->
	run(M0, Now, fun(M) -> open(M, StreamID) end).

open(M = #h3{streams = Streams}, StreamID) when is_map_key(StreamID, Streams) ->
	M;
open(M = #h3{last_request = Last}, StreamID) when StreamID band 3 =:= 0 ->
	case seen(StreamID, Last, M#h3.skipped) of
		{new, Skipped} -> create(M#h3{last_request = max(Last, StreamID), skipped = Skipped}, StreamID);
		forgotten -> M
	end;
open(M = #h3{last_uni = Last}, StreamID) when StreamID band 3 =:= 2 ->
	case seen(StreamID, Last, M#h3.skipped) of
		{new, Skipped} -> create(M#h3{last_uni = max(Last, StreamID), skipped = Skipped}, StreamID);
		forgotten -> M
	end;
open(M, _) ->
	M.

%% Skipped ids are kept as ranges {From, To} of ids of one kind.
seen(StreamID, Last, Skipped) when StreamID > Last + 4, Last >= 0 ->
	{new, [{Last + 4, StreamID - 4} | Skipped]};
seen(StreamID, Last, Skipped) when StreamID > Last + 4, StreamID >= 4 ->
	{new, [{StreamID band 3, StreamID - 4} | Skipped]};
seen(StreamID, Last, Skipped) when StreamID > Last ->
	{new, Skipped};
seen(StreamID, _, Skipped) ->
	case lists:partition(fun({From, To}) ->
			StreamID >= From andalso StreamID =< To andalso StreamID band 3 =:= From band 3
		end, Skipped) of
		{[], _} -> forgotten;
		{[{From, To}], Rest} ->
			{new, [R || R = {F, T} <- [{From, StreamID - 4}, {StreamID + 4, To}], F =< T] ++ Rest}
	end.

create(M = #h3{shutdown = goaway, goaway_id = GoawayID}, StreamID) when StreamID band 3 =:= 0,
		StreamID >= GoawayID ->
	%% After our GOAWAY, later requests are refused unprocessed (RFC 9114
	%% 5.2); the client may retry them elsewhere.
	lists:foldl(fun action/2, M, [{reset_stream, StreamID, h3_request_rejected},
		{stop_sending, StreamID, h3_request_rejected}]);
create(M = #h3{streams = Streams}, StreamID) when StreamID band 3 =:= 0 ->
	M#h3{streams = Streams#{StreamID => #req{id = StreamID}}};
create(M = #h3{streams = Streams}, StreamID) ->
	M#h3{streams = Streams#{StreamID => #uni{id = StreamID}}}.

%% Data on a peer stream, IsFin when the stream ends with it.
-spec stream_data(stream_id(), binary(), fin(), integer(), machine()) -> result().
stream_data(StreamID, Data, IsFin, Now, M0) ->
	run(M0, Now, fun(M1) ->
		M = open(M1, StreamID),
		case M#h3.streams of
			#{StreamID := S = #req{}} -> ?S:data(M, S, Data, IsFin);
			#{StreamID := U = #uni{}} -> uni_data(M, U, Data, IsFin);
			_ -> M
		end
	end).

%% The peer reset a stream (RESET_STREAM): a request is cancelled (RFC 9114
%% 4.1.1), a critical stream must never close (RFC 9114 6.2.1, RFC 9204
%% 4.2). Code is the wire value or its name.
-spec stream_reset(stream_id(), code() | non_neg_integer(), integer(), machine()) -> result().
stream_reset(StreamID, Code0, Now, M0) ->
	Code = code(Code0),
	run(M0, Now, fun(M) ->
		case M#h3.streams of
			#{StreamID := #req{remote = fin}} ->
				M;
			#{StreamID := S = #req{}} ->
				cancel(M, S, Code, none);
			#{StreamID := #uni{type = Type}} when Type =/= undefined ->
				critical_closed();
			#{StreamID := #uni{}} ->
				?S:forget(M, StreamID);
			_ ->
				M
		end
	end).

code(Code) when is_integer(Code) -> mustang_http3_frame:code_name(Code);
code(Code) -> Code.

-spec critical_closed() -> no_return().
critical_closed() ->
	connection_error(h3_closed_critical_stream,
		'The control and QPACK streams must stay open. (RFC9114 6.2.1)').

%% The peer asks us to stop sending on a stream (STOP_SENDING): the
%% response is abandoned with a RESET_STREAM of the same code (RFC 9000
%% 3.5); on one of our unidirectional streams (all of them critical) it is
%% an error (RFC 9114 6.2.1).
-spec stop_sending(stream_id(), code() | non_neg_integer(), integer(), machine()) -> result().
stop_sending(StreamID, Code0, Now, M0) ->
	Code = code(Code0),
	run(M0, Now, fun(M) ->
		case M#h3.streams of
			#{StreamID := S = #req{}} -> cancel(M, S, Code, h3_request_cancelled);
			_ when StreamID band 3 =:= 3 -> critical_closed();
			_ -> M
		end
	end).

%% A request the client cancelled: what is open of the stream is closed and
%% the stream forgotten; the connection stops its handlers.
%% RecvCode is none when the client reset its side already.
cancel(M0, S = #req{id = StreamID, local = Local, remote = Remote}, Code, RecvCode) ->
	M = case Local =:= fin andalso Remote =:= fin of
		true -> M0;
		false -> cancel_rate(M0)
	end,
	event({cancel, StreamID, Code}, ?S:close(M, S, Code, RecvCode)).

%% RFC 9114 10.5: a flood of cancelled streams is excessive load.
cancel_rate(M = #h3{cancel_rate = {Count, Start}, opts = #{max_cancel_stream_rate := {Max, Ms}},
		now = Now}) ->
	if
		Now - Start > Ms -> M#h3{cancel_rate = {1, Now}};
		Count + 1 > Max ->
			connection_error(h3_excessive_load,
				'Too many streams cancelled or refused in a short time. (RFC9114 10.5)');
		true -> M#h3{cancel_rate = {Count + 1, Start}}
	end.

%% Unidirectional streams (RFC 9114 6.2).

uni_data(M, U = #uni{type = undefined, buffer = Buffer}, Data, IsFin) ->
	Bin = <<Buffer/binary, Data/binary>>,
	case mustang_http3_frame:parse_stream_type(Bin) of
		{more, _} when IsFin =:= fin ->
			%% Closed before its type: tolerated (RFC 9114 6.2).
			?S:forget(M, U#uni.id);
		{more, _} ->
			store(M, U#uni{buffer = Bin});
		{ok, Type, Rest} ->
			uni_type(M, U#uni{buffer = <<>>}, Type, Rest, IsFin)
	end;
uni_data(M, U, Data, IsFin) ->
	M2 = uni_payload(M, U, Data),
	case IsFin of
		fin -> critical_closed();
		nofin -> M2
	end.

uni_type(_, _, push, _, _) ->
	connection_error(h3_stream_creation_error, 'A client must not open push streams. (RFC9114 6.2.2)');
uni_type(M, #uni{id = StreamID}, {unknown, _}, _, _) ->
	%% RFC 9114 6.2, 9: streams of an unknown type are not read.
	M2 = cancel_rate(M),
	?S:forget(action({stop_sending, StreamID, h3_stream_creation_error}, M2), StreamID);
uni_type(M, U = #uni{id = StreamID}, Type, Rest, IsFin) ->
	Field = case Type of
		control -> #h3.control;
		encoder -> #h3.encoder_stream;
		decoder -> #h3.decoder_stream
	end,
	case element(Field, M) of
		undefined ->
			U2 = U#uni{type = Type},
			uni_data(store(setelement(Field, M, StreamID), U2), U2, Rest, IsFin);
		_ ->
			connection_error(h3_stream_creation_error,
				'A peer opens one control, one encoder and one decoder stream only. (RFC9114 6.2.1)')
	end.

store(M = #h3{streams = Streams}, U = #uni{id = StreamID}) ->
	M#h3{streams = Streams#{StreamID => U}}.

uni_payload(M, U, <<>>) ->
	%% The stream's type may have just been read (its bytes came alone):
	%% keep it, or the next bytes would be read as a type again.
	store(M, U);
uni_payload(M, U = #uni{type = control}, Data) ->
	case ?S:feed(U#uni.rd, Data) of
		{more, Rd} -> store(M, U#uni{rd = Rd});
		{go, Bin, Rd} -> control(M, U#uni{rd = Rd}, Bin)
	end;
uni_payload(M, #uni{type = encoder}, Data) ->
	case mustang_qpack:decoder_feed(Data, M#h3.decoder) of
		{ok, Unblocked, Acks, Decoder} ->
			M2 = lists:foldl(fun({StreamID, Result}, Acc) -> ?S:unblocked(Acc, StreamID, Result) end,
				?S:decoder_bytes(Acks, M#h3{decoder = Decoder}), Unblocked),
			{Increment, Decoder2} = mustang_qpack:decoder_increment(M2#h3.decoder),
			?S:decoder_bytes(Increment, M2#h3{decoder = Decoder2});
		{error, {connection_error, Code, Reason}} ->
			connection_error(Code, Reason)
	end;
uni_payload(M, #uni{type = decoder}, Data) ->
	case mustang_qpack:encoder_feed(Data, M#h3.encoder) of
		{ok, Encoder} -> M#h3{encoder = Encoder};
		{error, {connection_error, Code, Reason}} -> connection_error(Code, Reason)
	end.

%% The control stream (RFC 9114 6.2.1, 7.2).
control(M, U = #uni{rd = Rd}, Bin) ->
	case ?S:read(Rd, Bin) of
		{more, Rd2} ->
			store(M, U#uni{rd = Rd2});
		{header, Type, Len, Rest} ->
			control(M, U#uni{rd = Rd#rd{state = control_header(M, Type, Len)}}, Rest);
		{skip, _, Rd2, Rest} ->
			control(M, U#uni{rd = Rd2}, Rest);
		{frame, Type, Payload, Rd2, Rest} ->
			case mustang_http3_frame:parse_payload(Type, Payload) of
				{ok, Frame} -> control(control_frame(M, Frame), U#uni{rd = Rd2}, Rest);
				{error, {connection_error, Code, Reason}} -> connection_error(Code, Reason)
			end
	end.

%% What to do with the payload of a control stream frame.
control_header(#h3{peer_settings = undefined}, settings, Len) ->
	control_frame_len(settings, Len);
control_header(#h3{peer_settings = undefined}, _, _) ->
	connection_error(h3_missing_settings,
		'The control stream must start with SETTINGS. (RFC9114 6.2.1)');
control_header(_, settings, _) ->
	connection_error(h3_frame_unexpected, 'SETTINGS must be sent once. (RFC9114 7.2.4)');
control_header(_, {unknown, _}, Len) ->
	{skip, Len};
control_header(_, Type, _) when Type =:= data; Type =:= headers; Type =:= push_promise ->
	connection_error(h3_frame_unexpected,
		'DATA, HEADERS and PUSH_PROMISE frames must not be sent on the control stream. (RFC9114 7.2)');
control_header(_, Type, Len) ->
	control_frame_len(Type, Len).

control_frame_len(_, Len) when Len > ?MAX_CONTROL_FRAME ->
	connection_error(h3_excessive_load, 'A frame is longer than this endpoint accepts. (RFC9114 10.5)');
control_frame_len(Type, Len) ->
	{frame, Type, Len}.

control_frame(M, {settings, Settings}) ->
	{Bytes, Encoder} = mustang_qpack:encoder_settings(Settings, M#h3.encoder),
	M2 = case iolist_size(Bytes) of
		0 -> M;
		_ -> action({send_uni, encoder, Bytes}, M)
	end,
	event({settings, Settings}, M2#h3{encoder = Encoder, peer_settings = Settings});
control_frame(#h3{peer_goaway = Previous}, {goaway, ID}) when Previous =/= undefined, ID > Previous ->
	connection_error(h3_id_error, 'A GOAWAY must not raise the identifier of an earlier one. (RFC9114 5.2)');
control_frame(M, {goaway, ID}) ->
	%% A client's GOAWAY carries a push id (we push nothing): it opens no
	%% more requests, those in flight finish.
	event({goaway, ID}, M#h3{peer_goaway = ID});
control_frame(#h3{max_push_id = Previous}, {max_push_id, ID}) when Previous =/= undefined,
		ID < Previous ->
	connection_error(h3_id_error, 'MAX_PUSH_ID must not be lowered. (RFC9114 7.2.7)');
control_frame(M, {max_push_id, ID}) ->
	M#h3{max_push_id = ID};
control_frame(M = #h3{max_push_id = Max}, {cancel_push, ID}) ->
	%% No push is ever promised; one the client could not have been sent is
	%% an error (RFC 9114 7.2.3).
	case Max =:= undefined orelse ID > Max of
		true -> connection_error(h3_id_error, 'CANCEL_PUSH names a push id above MAX_PUSH_ID. (RFC9114 7.2.3)');
		false -> M
	end.

%% Responses.

%% A response part for a request stream: {inform, Status, Headers},
%% {response, Status, Headers, Body}, {headers, Status, Headers}, {data,
%% IsFin, Body}, {trailers, Headers}; Body may be {sendfile, Offset, Length,
%% Path}. Date is the date header's value. Parts in the wrong order (or the
%% body of a HEAD response, which is not sent) give an {ignored, ...} event.
-spec send(stream_id(), part(), binary(), machine()) -> result().
send(StreamID, Part, Date, M0) ->
	run(M0, M0#h3.now, fun(M) -> ?S:send(M, StreamID, Part, Date) end).

%% The answer to an early_error event (431 or 501): the response, then the
%% stream forgotten (STOP_SENDING H3_NO_ERROR if the request still comes).
-spec early_response(stream_id(), fin(), mustang_req:status(), mustang_req:headers(), iodata(),
	binary(), machine()) -> machine().
early_response(StreamID, IsFin, Status, Headers, Body, Date, M) ->
	?S:early_response(M, StreamID, IsFin, Status, Headers, Body, Date).

%% The connection cancels a request (a handler crashed, a limit): RESET_STREAM
%% and STOP_SENDING with Code for what is still open (RFC 9114 4.1.1:
%% H3_REQUEST_REJECTED if nothing was processed, else H3_REQUEST_CANCELLED
%% or H3_INTERNAL_ERROR), then the stream is forgotten.
-spec reset_stream(stream_id(), code(), machine()) -> machine().
reset_stream(StreamID, Code, M) ->
	?S:close(M, StreamID, Code, Code).

%% The connection is done with a stream (handlers stopped, response sent):
%% a request body still coming is not needed (STOP_SENDING H3_NO_ERROR,
%% RFC 9114 4.1); a response left unfinished is cancelled (RESET_STREAM
%% H3_REQUEST_CANCELLED).
-spec close_stream(stream_id(), machine()) -> machine().
close_stream(StreamID, M) ->
	?S:close(M, StreamID, h3_request_cancelled, h3_no_error).

%% Shutdown (RFC 9114 5.2). A graceful one takes two steps: a GOAWAY with
%% the largest request id (requests in flight are not refused), then, after
%% a delay of the caller's choosing (an RTT or so), the final GOAWAY with the
%% first id not processed: later requests are refused with
%% H3_REQUEST_REJECTED. Identifiers never rise.

-spec start_shutdown(machine()) -> machine().
start_shutdown(M = #h3{shutdown = none}) ->
	goaway(M#h3{shutdown = goaway_max}, ?MAX_REQUEST_ID);
start_shutdown(M) ->
	M.

-spec final_goaway(machine()) -> machine().
final_goaway(M = #h3{shutdown = goaway}) ->
	M;
final_goaway(M = #h3{last_request = Last}) ->
	goaway(M#h3{shutdown = goaway}, Last + 4).

%% Closing now (idle timeout, a connection error of the caller's): the final
%% GOAWAY, then the connection closed with Code (RFC 9114 5.3).
-spec close(code(), atom(), machine()) -> machine().
close(Code, Reason, M) ->
	action({close, Code, Reason}, final_goaway(M)).

goaway(M, ID) ->
	action({send_uni, control, mustang_http3_frame:goaway(ID)}, M#h3{goaway_id = ID}).
