%% Tests for the HTTP/2 state machine, driven directly (no socket, no
%% process), grouped by RFC 9113 section. Frames are built with the
%% mustang_http2_frame builders and header blocks with mustang_hpack (without
%% indexing, so that every block stands alone). The output of the machine is
%% parsed back with mustang_http2_frame to check what it would write.
%% PropEr properties: random and mutated frame sequences never crash the
%% machine and only give errors of the documented shapes; any split of a
%% valid byte stream gives the same events and the same output as the whole.
-module(mustang_http2_machine_tests).

-include_lib("proper/include/proper.hrl").
-include_lib("eunit/include/eunit.hrl").

-define(M, mustang_http2_machine).
-define(F, mustang_http2_frame).

-define(CODES, [no_error, protocol_error, internal_error, flow_control_error, settings_timeout,
	stream_closed, frame_size_error, refused_stream, cancel, compression_error, connect_error,
	enhance_your_calm, inadequate_security, http_1_1_required]).

%% Helpers.

opts(Extra) ->
	maps:merge(mustang_http2:defaults(), Extra).

%% A machine whose own SETTINGS were taken out.
new(Extra) ->
	{_, M} = ?M:take_output(?M:init(opts(Extra), 0)),
	M.

%% A machine past the preface and the client's first SETTINGS, output taken.
ready() ->
	ready(#{}).

ready(Extra) ->
	{ok, [{settings, #{}}], M} = feed([?F:preface(), ?F:settings(#{})], new(Extra)),
	{_, M2} = ?M:take_output(M),
	M2.

%% Feeds bytes and goes on until the machine wants more.
feed(Data, M) ->
	feed(Data, 0, M).

feed(Data, Now, M) ->
	feed1(iolist_to_binary(Data), Now, M, []).

feed1(Bin, Now, M0, Acc) ->
	case ?M:parse(Bin, Now, M0) of
		{more, M} -> {ok, lists:append(lists:reverse(Acc)), M};
		{ok, Events, M} -> feed1(<<>>, Now, M, [Events | Acc]);
		{error, Error, M} -> {error, Error, lists:append(lists:reverse(Acc)), M}
	end.

%% The frames the machine would write.
out(M) ->
	{Out, M2} = ?M:take_output(M),
	{frames(iolist_to_binary(Out)), M2}.

frames(<<>>) -> [];
frames(Bin) ->
	{ok, Frame, Rest} = ?F:parse(Bin, 16#ffffff),
	[Frame | frames(Rest)].

block(Fields) ->
	{Block, _} = mustang_hpack:encode(Fields, mustang_hpack:init(), #{indexing => false}),
	iolist_to_binary(Block).

req_fields() ->
	[{<<":method">>, <<"POST">>}, {<<":scheme">>, <<"http">>},
		{<<":authority">>, <<"localhost">>}, {<<":path">>, <<"/">>}].

req(StreamID, IsFin) ->
	req(StreamID, IsFin, []).

req(StreamID, IsFin, Extra) ->
	?F:headers(StreamID, IsFin, block(req_fields() ++ Extra)).

%% HEADERS, raw, with or without END_HEADERS.
hdr(S, IsFin, HeadFin, Block) ->
	Flags = (case IsFin of fin -> 1; nofin -> 0 end) bor (case HeadFin of head_fin -> 4; head_nofin -> 0 end),
	<<(iolist_size(Block)):24, 1:8, Flags:8, 0:1, S:31, (iolist_to_binary(Block))/binary>>.

conn_error(Code, Result) ->
	?assertMatch({error, {connection_error, Code, _}, _, _}, Result),
	{error, {connection_error, _, Reason}, _, _} = Result,
	?assert(is_atom(Reason)),
	Reason.

rfc(Section, Reason) ->
	?assertNotEqual(nomatch, string:find(atom_to_list(Reason), "(RFC9113 " ++ Section ++ ")")).

%% 3.4 The connection preface; the first frame must be SETTINGS.

preface_test_() ->
	[
		{"init writes SETTINGS, pending until acknowledged", fun() ->
			M = ?M:init(opts(#{max_concurrent_streams => 7}), 42),
			?assertEqual(42, ?M:settings_pending(M)),
			{[{settings, S} | _], M2} = out(M),
			?assertEqual(7, maps:get(max_concurrent_streams, S)),
			?assertEqual(preface, ?M:phase(M2))
		end},
		{"init raises the connection window", fun() ->
			{Frames, _} = out(?M:init(opts(#{initial_connection_window_size => 65535 + 1000}), 0)),
			?assertMatch([{settings, _}, {window_update, 1000}], Frames)
		end},
		{"a wrong preface is a PROTOCOL_ERROR", fun() ->
			rfc("3.4", conn_error(protocol_error, feed(<<"GET / HTTP/1.1\r\n\r\n........">>, new(#{}))))
		end},
		{"the preface byte by byte, then SETTINGS", fun() ->
			Bytes = iolist_to_binary([?F:preface(), ?F:settings(#{initial_window_size => 1000})]),
			{Events, M} = lists:foldl(fun(B, {Acc, M0}) ->
				{ok, E, M1} = feed(<<B>>, M0),
				{Acc ++ E, M1}
			end, {[], new(#{})}, binary_to_list(Bytes)),
			?assertEqual([{settings, #{initial_window_size => 1000}}], Events),
			?assertEqual(normal, ?M:phase(M)),
			?assertMatch({[settings_ack], _}, out(M))
		end},
		{"a first frame other than SETTINGS is a PROTOCOL_ERROR", fun() ->
			rfc("3.4", conn_error(protocol_error, feed([?F:preface(), ?F:ping(1)], new(#{})))),
			rfc("3.4", conn_error(protocol_error, feed([?F:preface(), ?F:data(1, fin, <<"x">>)], new(#{}))))
		end},
		{"phase settings between the preface and SETTINGS", fun() ->
			{ok, [], M} = feed(?F:preface(), new(#{})),
			?assertEqual(settings, ?M:phase(M))
		end}
	].

%% 4.2 Frame size.

frame_size_test_() ->
	[
		{"a frame above max_frame_size_received is a FRAME_SIZE_ERROR", fun() ->
			M = ready(),
			Big = <<16385:24, 6:8, 0:8, 0:32>>,
			conn_error(frame_size_error, feed(Big, M))
		end},
		{"a larger max_frame_size_received is honoured", fun() ->
			M = ready(#{max_frame_size_received => 32768}),
			{ok, [{headers, 1, nofin, _}], M2} = feed(req(1, nofin), M),
			{ok, [{data, 1, nofin, D}], _} = feed(?F:data(1, nofin, binary:copy(<<"a">>, 20000)), M2),
			?assertEqual(20000, byte_size(D))
		end}
	].

%% 4.3 Header compression: a bad block is a COMPRESSION_ERROR for the
%% connection; a block that is decoded keeps the context in step.

compression_test_() ->
	[
		{"an undecodable block", fun() ->
			conn_error(compression_error, feed(?F:headers(1, fin, <<16#ff, 16#ff, 16#ff, 16#ff>>), ready()))
		end},
		{"a dynamic table entry is used by the next block", fun() ->
			{B1, E1} = mustang_hpack:encode(req_fields() ++ [{<<"x-a">>, <<"1">>}], mustang_hpack:init()),
			{B2, _} = mustang_hpack:encode(req_fields() ++ [{<<"x-a">>, <<"1">>}], E1),
			?assert(iolist_size(B2) < iolist_size(B1)),
			{ok, [{headers, 1, fin, R1}, {headers, 3, fin, R2}], _} =
				feed([?F:headers(1, fin, B1), ?F:headers(3, fin, B2)], ready()),
			?assertEqual(maps:get(headers, R1), maps:get(headers, R2))
		end},
		{"a header list above max_header_list_size gets a 431, not an error", fun() ->
			M = ready(#{max_header_list_size => 100}),
			{ok, Events, _} = feed(req(1, fin, [{<<"x-big">>, binary:copy(<<"b">>, 200)}]), M),
			?assertEqual([{early_error, 1, fin, 431, header_list_too_large}], Events)
		end},
		{"early_response writes the response", fun() ->
			{ok, _, M} = feed(req(1, nofin, [{<<"x-big">>, binary:copy(<<"b">>, 200)}]),
				ready(#{max_header_list_size => 100})),
			M2 = ?M:early_response(1, nofin, 431, #{}, <<"too big">>, <<"date">>, M),
			?assertMatch({[{headers, 1, nofin, head_fin, _}, {data, 1, fin, <<"too big">>},
				{rst_stream, 1, no_error}], _}, out(M2))
		end}
	].

%% 5.1 Stream states.

stream_states_test_() ->
	[
		{"DATA on an idle stream", fun() ->
			rfc("5.1", conn_error(protocol_error, feed(?F:data(1, fin, <<"x">>), ready())))
		end},
		{"HEADERS on an even stream", fun() ->
			rfc("5.1.1", conn_error(protocol_error, feed(req(2, fin), ready())))
		end},
		{"DATA on a half-closed (remote) stream: STREAM_CLOSED stream error", fun() ->
			{ok, [{headers, 1, fin, _}], M} = feed(req(1, fin), ready()),
			{ok, [{stream_error, 1, stream_closed, R}], M2} = feed(?F:data(1, fin, <<"x">>), M),
			rfc("5.1", R),
			?assertMatch({[{rst_stream, 1, stream_closed}], _}, out(M2)),
			?assertEqual(undefined, ?M:stream(1, M2))
		end},
		{"DATA on a closed stream: STREAM_CLOSED stream error", fun() ->
			{ok, _, M} = feed(req(1, nofin), ready()),
			{ok, [{rst_stream, 1, cancel}], M2} = feed(?F:rst_stream(1, cancel), M),
			{ok, [{stream_error, 1, stream_closed, _}], _} = feed(?F:data(1, fin, <<"x">>), M2)
		end},
		{"HEADERS on a closed stream: STREAM_CLOSED connection error", fun() ->
			{ok, _, M} = feed(req(1, nofin), ready()),
			{ok, _, M2} = feed(?F:rst_stream(1, cancel), M),
			rfc("5.1", conn_error(stream_closed, feed(req(1, fin), M2)))
		end},
		{"stream ids must increase", fun() ->
			{ok, [{headers, 5, fin, _}], M} = feed(req(5, fin), ready()),
			?assertEqual(5, ?M:last_stream_id(M)),
			rfc("5.1.1", conn_error(protocol_error, feed(req(3, fin), M)))
		end},
		{"open, then half-closed (remote) after END_STREAM", fun() ->
			{ok, _, M} = feed(req(1, nofin), ready()),
			?assertEqual({idle, open, 0}, ?M:stream(1, M)),
			{ok, [{data, 1, nofin, <<"x">>}, {data, 1, fin, <<>>}], M2} = feed(?F:data(1, fin, <<"x">>), M),
			?assertEqual({idle, fin, 0}, ?M:stream(1, M2))
		end},
		{"close_stream sends RST_STREAM NO_ERROR while the body comes", fun() ->
			{ok, _, M} = feed(req(1, nofin), ready()),
			{ok, [{drained, 1}], M2} = ?M:send(1, {response, 204, #{}, <<>>}, 0, <<"d">>, M),
			{_, M3} = out(M2),
			?assertMatch({[{rst_stream, 1, no_error}], _}, out(?M:close_stream(1, M3)))
		end}
	].

%% 5.1.2 Stream concurrency.

concurrency_test_() ->
	[
		{"streams above max_concurrent_streams are refused", fun() ->
			M = ready(#{max_concurrent_streams => 1}),
			{ok, [{headers, 1, nofin, _}], M2} = feed(req(1, nofin), M),
			{ok, [], M3} = feed(req(3, nofin), M2),
			?assertMatch({[{rst_stream, 3, refused_stream}], _}, out(M3)),
			?assertEqual(undefined, ?M:stream(3, M3)),
			?assertEqual(3, ?M:last_stream_id(M3))
		end},
		{"refused streams count against max_cancel_stream_rate", fun() ->
			M = ready(#{max_concurrent_streams => 0, max_cancel_stream_rate => {2, 1000}}),
			{ok, [], M2} = feed([req(1, fin), req(3, fin)], M),
			conn_error(enhance_your_calm, feed(req(5, fin), M2))
		end}
	].

%% 5.4 Error handling: a stream error leaves the connection working.

error_handling_test_() ->
	[
		{"after a stream error the next stream works", fun() ->
			{ok, _, M} = feed(req(1, fin), ready()),
			{ok, [{stream_error, 1, stream_closed, _}], M2} = feed(?F:data(1, nofin, <<"x">>), M),
			{ok, [{headers, 3, fin, _}], _} = feed(req(3, fin), M2)
		end},
		{"goaway/3 writes GOAWAY with the last stream id", fun() ->
			{ok, _, M} = feed(req(7, fin), ready()),
			{_, M2} = out(M),
			?assertMatch({[{goaway, 7, protocol_error, <<"x">>}], _},
				out(?M:goaway(protocol_error, <<"x">>, M2)))
		end}
	].

%% 6.1 DATA.

data_test_() ->
	[
		{"padding is removed and counted", fun() ->
			{ok, _, M} = feed(req(1, nofin), ready(#{initial_stream_window_size => 100})),
			Padded = <<(1 + 3 + 50):24, 0:8, 16#8:8, 0:1, 1:31, 50:8, "abc", 0:400>>,
			{ok, [{data, 1, nofin, <<"abc">>}], M2} = feed(Padded, M),
			%% 54 of the 100 bytes of window are used: 47 more are too many.
			{ok, [{stream_error, 1, flow_control_error, R}], _} =
				feed(?F:data(1, nofin, binary:copy(<<"z">>, 47)), M2),
			rfc("6.9.1", R)
		end},
		{"too much padding is a PROTOCOL_ERROR", fun() ->
			{ok, _, M} = feed(req(1, nofin), ready()),
			conn_error(protocol_error, feed(<<3:24, 0:8, 16#8:8, 0:1, 1:31, 5:8, "ab">>, M))
		end},
		{"DATA beyond the stream window is a FLOW_CONTROL_ERROR stream error", fun() ->
			{ok, _, M} = feed(req(1, nofin), ready()),
			Frames = [?F:data(1, nofin, binary:copy(<<"a">>, N)) || N <- [16384, 16384, 16384, 16383]],
			{ok, Events, M2} = feed([Frames, ?F:data(1, nofin, <<"overflow">>)], M),
			?assertMatch([{data, 1, nofin, _}, {data, 1, nofin, _}, {data, 1, nofin, _},
				{data, 1, nofin, _}, {stream_error, 1, flow_control_error, _}], Events),
			{Out, _} = out(M2),
			?assert(lists:member({rst_stream, 1, flow_control_error}, Out))
		end},
		{"data arrives as it comes, before the frame is whole", fun() ->
			{ok, _, M} = feed(req(1, nofin), ready()),
			<<Head:12/binary, Tail/binary>> = iolist_to_binary(?F:data(1, fin, <<"abcdef">>)),
			{ok, [{data, 1, nofin, <<"abc">>}], M2} = feed(Head, M),
			{ok, [{data, 1, nofin, <<"def">>}, {data, 1, fin, <<>>}], _} = feed(Tail, M2)
		end},
		{"the connection window is topped up", fun() ->
			M = ready(#{initial_stream_window_size => 1000000,
				connection_window_update_threshold => 20000}),
			{ok, _, M2} = feed(req(1, nofin), M),
			{_, M3} = out(M2),
			{ok, _, M4} = feed([?F:data(1, nofin, binary:copy(<<"a">>, 16384)),
				?F:data(1, nofin, binary:copy(<<"a">>, 16384))], M3),
			?assertMatch({[{window_update, 32768}], _}, out(M4))
		end},
		{"flow/3 grants the stream window", fun() ->
			{ok, _, M} = feed(req(1, nofin), ready()),
			{_, M2} = out(M),
			{Frames, _} = out(?M:flow(1, 1000000, M2)),
			?assertMatch([{window_update, 1, _}], Frames)
		end},
		{"empty DATA frames count as overhead", fun() ->
			{ok, _, M} = feed(req(1, nofin), ready(#{max_overhead_frame_rate => {3, 1000}})),
			%% The client's SETTINGS counted once already.
			{ok, [], M2} = feed([?F:data(1, nofin, <<>>), ?F:data(1, nofin, <<>>)], M),
			conn_error(enhance_your_calm, feed(?F:data(1, nofin, <<>>), M2))
		end}
	].

%% 8.1 content-length against DATA.

content_length_test_() ->
	CL = [{<<"content-length">>, <<"3">>}],
	[
		{"more DATA than content-length", fun() ->
			{ok, _, M} = feed(req(1, nofin, CL), ready()),
			{ok, [{stream_error, 1, protocol_error, R}], _} = feed(?F:data(1, nofin, <<"abcd">>), M),
			rfc("8.1.1", R)
		end},
		{"less DATA than content-length at END_STREAM", fun() ->
			{ok, _, M} = feed(req(1, nofin, CL), ready()),
			{ok, [{data, 1, nofin, <<"ab">>}, {stream_error, 1, protocol_error, R}], _} =
				feed(?F:data(1, fin, <<"ab">>), M),
			rfc("8.1.1", R)
		end},
		{"exactly content-length", fun() ->
			{ok, _, M} = feed(req(1, nofin, CL), ready()),
			{ok, [{data, 1, nofin, <<"abc">>}, {data, 1, fin, <<>>}], _} =
				feed(?F:data(1, fin, <<"abc">>), M)
		end},
		{"a content-length with END_STREAM on HEADERS is refused", fun() ->
			{ok, [], M} = feed(req(1, fin, CL), ready()),
			?assertMatch({[{rst_stream, 1, protocol_error}], _}, out(M))
		end},
		{"a malformed request is reset", fun() ->
			{ok, [{malformed, 1, _}], M} = feed(?F:headers(1, fin, block([{<<":method">>, <<"GET">>}])),
				ready()),
			?assertMatch({[{rst_stream, 1, protocol_error}], _}, out(M))
		end}
	].

%% 6.2 HEADERS and 6.10 CONTINUATION.

headers_test_() ->
	Block = block(req_fields()),
	<<B1:5/binary, B2:5/binary, B3/binary>> = Block,
	[
		{"a header block over CONTINUATION frames", fun() ->
			{ok, [], M} = feed(hdr(1, fin, head_nofin, B1), ready()),
			?assertEqual(continuation, ?M:phase(M)),
			{ok, [], M2} = feed(?F:continuation(1, head_nofin, B2), M),
			{ok, [{headers, 1, fin, #{path := <<"/">>}}], M3} =
				feed(?F:continuation(1, head_fin, B3), M2),
			?assertEqual(normal, ?M:phase(M3))
		end},
		{"CONTINUATION on another stream", fun() ->
			{ok, [], M} = feed(hdr(1, fin, head_nofin, B1), ready()),
			rfc("6.10", conn_error(protocol_error, feed(?F:continuation(3, head_fin, B2), M)))
		end},
		{"another frame inside a header block", fun() ->
			{ok, [], M} = feed(hdr(1, fin, head_nofin, B1), ready()),
			rfc("6.10", conn_error(protocol_error, feed(?F:ping(1), M))),
			rfc("6.10", conn_error(protocol_error, feed(?F:data(1, fin, <<>>), M))),
			rfc("6.10", conn_error(protocol_error, feed(<<0:24, 99:8, 0:8, 0:32>>, M)))
		end},
		{"CONTINUATION without a header block", fun() ->
			rfc("6.10", conn_error(protocol_error, feed(?F:continuation(1, head_fin, B1), ready())))
		end},
		{"empty CONTINUATION frames are refused", fun() ->
			{ok, [], M} = feed(hdr(1, fin, head_nofin, B1), ready()),
			conn_error(enhance_your_calm, feed(?F:continuation(1, head_nofin, <<>>), M))
		end},
		{"a block above max_header_block_size", fun() ->
			M = ready(#{max_header_block_size => 8}),
			{ok, [], M2} = feed(hdr(1, fin, head_nofin, B1), M),
			conn_error(enhance_your_calm, feed(?F:continuation(1, head_nofin, B2), M2))
		end},
		{"trailers end the stream", fun() ->
			{ok, _, M} = feed(req(1, nofin), ready()),
			{ok, [{trailers, 1, [{<<"x-t">>, <<"1">>}]}, {data, 1, fin, <<>>}], _} =
				feed(?F:headers(1, fin, block([{<<"x-t">>, <<"1">>}])), M)
		end},
		{"trailers without END_STREAM", fun() ->
			{ok, _, M} = feed(req(1, nofin), ready()),
			{ok, [{stream_error, 1, protocol_error, R}], _} =
				feed(?F:headers(1, nofin, block([{<<"x-t">>, <<"1">>}])), M),
			rfc("8.1", R)
		end},
		{"a stream that depends on itself: stream error, HPACK in step", fun() ->
			{Blk, E} = mustang_hpack:encode(req_fields() ++ [{<<"x-a">>, <<"1">>}], mustang_hpack:init()),
			Bin = iolist_to_binary(Blk),
			Self = <<(byte_size(Bin) + 5):24, 1:8, 16#25:8, 0:1, 1:31, 0:1, 1:31, 15:8, Bin/binary>>,
			{Blk2, _} = mustang_hpack:encode(req_fields() ++ [{<<"x-a">>, <<"1">>}], E),
			{ok, Events, _} = feed([Self, ?F:headers(3, fin, Blk2)], ready()),
			?assertMatch([{stream_error, 1, protocol_error, _}, {headers, 3, fin, _}], Events)
		end},
		%% Found by fuzz_SUITE: the request on stream 3 was answered after
		%% its RST_STREAM.
		{"a PRIORITY frame that makes an idle stream depend on itself closes it", fun() ->
			{_, M0} = out(ready()),
			{ok, [{stream_error, 3, protocol_error, _}], M} =
				feed(?F:priority(3, shared, 3, 16), M0),
			{[{rst_stream, 3, protocol_error}], M2} = out(M),
			{ok, [], M3} = feed(req(3, fin), M2),
			{[], M4} = out(M3),
			{ok, [{headers, 5, fin, _}], _} = feed(req(5, fin), M4)
		end}
	].

%% 6.4 RST_STREAM.

rst_stream_test_() ->
	[
		{"RST_STREAM closes the stream", fun() ->
			{ok, _, M} = feed(req(1, nofin), ready()),
			{ok, [{rst_stream, 1, cancel}], M2} = feed(?F:rst_stream(1, cancel), M),
			?assertEqual(undefined, ?M:stream(1, M2))
		end},
		{"RST_STREAM on an idle stream", fun() ->
			rfc("6.4", conn_error(protocol_error, feed(?F:rst_stream(1, cancel), ready())))
		end},
		{"RST_STREAM on a closed stream is ignored", fun() ->
			{ok, _, M} = feed(req(1, nofin), ready()),
			{ok, _, M2} = feed(?F:rst_stream(1, cancel), M),
			{ok, [], _} = feed(?F:rst_stream(1, cancel), M2)
		end},
		{"max_cancel_stream_rate, in its time window", fun() ->
			M = ready(#{max_cancel_stream_rate => {2, 1000}}),
			Cancel = fun(ID, Now, M0) ->
				{ok, _, M1} = feed(req(ID, nofin), Now, M0),
				feed(?F:rst_stream(ID, cancel), Now, M1)
			end,
			{ok, _, M2} = Cancel(1, 10, M),
			{ok, _, M3} = Cancel(3, 20, M2),
			conn_error(enhance_your_calm, Cancel(5, 30, M3)),
			%% Later, a new window starts.
			{ok, [{rst_stream, 5, cancel}], _} = Cancel(5, 5000, M3)
		end},
		{"a reset after the whole response is not a cancellation", fun() ->
			M = ready(#{max_cancel_stream_rate => {1, 1000}}),
			Done = fun(ID, M0) ->
				{ok, _, M1} = feed(req(ID, nofin), M0),
				{ok, _, M2} = ?M:send(ID, {response, 200, #{}, <<"ok">>}, 0, <<"d">>, M1),
				{ok, [{rst_stream, ID, no_error}], M3} = feed(?F:rst_stream(ID, no_error), M2),
				M3
			end,
			_ = Done(5, Done(3, Done(1, M)))
		end}
	].

%% 6.5 SETTINGS.

settings_test_() ->
	[
		{"SETTINGS is acknowledged", fun() ->
			{ok, [{settings, #{max_frame_size := 20000}}], M} =
				feed(?F:settings(#{max_frame_size => 20000}), ready()),
			?assertMatch({[settings_ack], _}, out(M))
		end},
		{"SETTINGS ACK ends the wait, once", fun() ->
			M = ready(),
			?assertEqual(0, ?M:settings_pending(M)),
			{ok, [settings_ack], M2} = feed(?F:settings_ack(), M),
			?assertEqual(undefined, ?M:settings_pending(M2)),
			{ok, [], _} = feed(?F:settings_ack(), M2)
		end},
		{"invalid values", fun() ->
			conn_error(protocol_error, feed(<<6:24, 4:8, 0:8, 0:32, 2:16, 2:32>>, ready())),
			conn_error(flow_control_error, feed(<<6:24, 4:8, 0:8, 0:32, 4:16, 16#80000000:32>>, ready())),
			conn_error(frame_size_error, feed(<<5:24, 4:8, 0:8, 0:32, 0:40>>, ready()))
		end},
		{"max_frame_size splits our DATA", fun() ->
			{ok, _, M} = feed([?F:settings(#{max_frame_size => 16384}), req(1, fin)], ready()),
			{_, M2} = out(M),
			{ok, _, M3} = ?M:send(1, {response, 200, #{}, binary:copy(<<"a">>, 20000)}, 0,
				<<"d">>, M2),
			{Frames, _} = out(M3),
			?assertMatch([{headers, 1, nofin, head_fin, _}, {data, 1, nofin, _}, {data, 1, fin, _}],
				Frames)
		end},
		{"the header table size is capped by max_encode_table_size", fun() ->
			{ok, _, M} = feed(?F:settings(#{header_table_size => 1000000}),
				ready(#{max_encode_table_size => 100})),
			?assertMatch({[settings_ack], _}, out(M))
		end},
		{"SETTINGS floods hit max_overhead_frame_rate", fun() ->
			M = ready(#{max_overhead_frame_rate => {3, 1000}}),
			{ok, _, M2} = feed([?F:settings(#{}), ?F:settings(#{})], 1, M),
			conn_error(enhance_your_calm, feed(?F:settings(#{}), 2, M2))
		end}
	].

%% 6.7 PING.

ping_test_() ->
	[
		{"PING is answered with the same data", fun() ->
			{ok, [], M} = feed(?F:ping(12345), ready()),
			?assertMatch({[{ping_ack, 12345}], _}, out(M))
		end},
		{"a PING ACK that we did not ask for is ignored", fun() ->
			{ok, [], M} = feed(?F:ping_ack(1), ready()),
			?assertMatch({[], _}, out(M))
		end}
	].

%% 6.8 GOAWAY.

goaway_test_() ->
	[
		{"the client's GOAWAY", fun() ->
			M = ready(),
			?assertNot(?M:closing(M)),
			{ok, [{goaway, 0, no_error, <<>>}], M2} = feed(?F:goaway(0, no_error, <<>>), M),
			?assert(?M:closing(M2))
		end},
		{"graceful shutdown in two steps", fun() ->
			{ok, _, M} = feed(req(1, nofin), ready()),
			{_, M1} = out(M),
			{true, M2} = ?M:start_shutdown(M1),
			{false, _} = ?M:start_shutdown(M2),
			{[{goaway, 16#7fffffff, no_error, <<>>}, {ping, Opaque}], M3} = out(M2),
			{ok, [{headers, 3, nofin, _}], M4} = feed(req(3, nofin), M3),
			{ok, [goaway_ping_ack], M5} = feed(?F:ping_ack(Opaque), M4),
			M6 = ?M:final_goaway(M5),
			?assertEqual(goaway, ?M:shutdown(M6)),
			?assertMatch({[{goaway, 3, no_error, <<>>}], _}, out(M6)),
			%% New streams are refused now.
			{ok, [], M7} = feed(req(5, fin), M6),
			{Frames, _} = out(M7),
			?assert(lists:member({rst_stream, 5, refused_stream}, Frames))
		end}
	].

%% 6.9 WINDOW_UPDATE and flow control (sending).

window_update_test_() ->
	Body = binary:copy(<<"b">>, 100000),
	[
		{"the connection window cannot exceed 2^31-1", fun() ->
			rfc("6.9.1", conn_error(flow_control_error, feed(?F:window_update(16#7fffffff), ready())))
		end},
		{"a stream window cannot exceed 2^31-1", fun() ->
			{ok, _, M} = feed(req(1, nofin), ready()),
			{ok, [{stream_error, 1, flow_control_error, R}], _} =
				feed(?F:window_update(1, 16#7fffffff), M),
			rfc("6.9.1", R)
		end},
		{"WINDOW_UPDATE on an idle stream", fun() ->
			rfc("5.1", conn_error(protocol_error, feed(?F:window_update(1, 10), ready())))
		end},
		{"a zero increment", fun() ->
			conn_error(protocol_error, feed(<<4:24, 8:8, 0:8, 0:32, 0:32>>, ready()))
		end},
		{"data waits for the window, then goes", fun() ->
			{ok, _, M} = feed(req(1, fin), ready()),
			{ok, [], M2} = ?M:send(1, {response, 200, #{}, Body}, 7, <<"d">>, M),
			{Frames, M3} = out(M2),
			Sent = lists:sum([byte_size(D) || {data, 1, _, D} <- Frames]),
			?assertEqual(65535, Sent),
			?assertEqual({fin, fin, 100000 - 65535}, ?M:stream(1, M3)),
			?assertEqual(7, ?M:blocked_since(M3)),
			?assert(?M:over_limits(1, ?M:hold(1, M3)) =:= false),
			{ok, [], M4} = feed([?F:window_update(100000)], M3),
			{ok, [{drained, 1}], M5} = feed([?F:window_update(1, 100000)], M4),
			{Frames2, _} = out(M5),
			?assertEqual(100000 - 65535, lists:sum([byte_size(D) || {data, 1, _, D} <- Frames2])),
			?assertMatch({data, 1, fin, _}, lists:last(Frames2)),
			?assertEqual(undefined, ?M:blocked_since(M5))
		end},
		{"held callers are released once below the limits", fun() ->
			{ok, _, M} = feed(req(1, fin), ready(#{stream_send_buffer_size => 1000})),
			{ok, _, M2} = ?M:send(1, {headers, 200, #{}}, 0, <<"d">>, M),
			{ok, [], M3} = ?M:send(1, {data, nofin, Body}, 0, <<"d">>, M2),
			?assert(?M:over_limits(1, M3)),
			M4 = ?M:hold(1, M3),
			{ok, [], M5} = feed(?F:window_update(1000000), M4),
			{ok, Events, _} = feed(?F:window_update(1, 1000000), M5),
			?assertEqual([{release, 1}, {drained, 1}], Events)
		end},
		{"SETTINGS_INITIAL_WINDOW_SIZE moves the stream windows", fun() ->
			{ok, _, M} = feed(req(1, fin), ready()),
			{ok, [], M2} = ?M:send(1, {response, 200, #{}, Body}, 0, <<"d">>, M),
			{ok, _, M3} = feed(?F:window_update(1000000), M2),
			{_, M4} = out(M3),
			%% The stream window was used up: +20000 lets 20000 more go.
			{ok, _, M5} = feed(?F:settings(#{initial_window_size => 65535 + 20000}), M4),
			{Frames, _} = out(M5),
			?assertEqual(20000, lists:sum([byte_size(D) || {data, 1, _, D} <- Frames]))
		end},
		{"SETTINGS_INITIAL_WINDOW_SIZE overflowing a window", fun() ->
			{ok, _, M} = feed([req(1, fin), ?F:window_update(1, 16#7fffffff - 65535)], ready()),
			rfc("6.9.2", conn_error(flow_control_error,
				feed(?F:settings(#{initial_window_size => 65536}), M)))
		end},
		{"sendfile bodies are read through read_file", fun() ->
			Read = fun(<<"f">>, Offset, Len) -> {ok, binary:part(<<"0123456789">>, Offset, Len)} end,
			{ok, _, M} = feed(req(1, fin), ready(#{read_file => Read})),
			{ok, [{drained, 1}], M2} = ?M:send(1, {response, 200, #{}, {sendfile, 2, 5, <<"f">>}}, 0,
				<<"d">>, M),
			?assertMatch({[{headers, 1, nofin, _, _}, {data, 1, fin, <<"23456">>}], _}, out(M2))
		end},
		{"a sendfile body larger than one read goes on with resume/2, not only on WINDOW_UPDATE", fun() ->
			%% 2.5 MiB, windows opened wide first (as curl and httpx do).
			Size = 2621440,
			Read = fun(<<"f">>, Offset, Len) -> {ok, binary:copy(<<(Offset rem 251)>>, Len)} end,
			{ok, _, M} = feed([req(1, fin), ?F:window_update(10000000),
				?F:window_update(1, 10000000)], ready(#{read_file => Read})),
			{ok, [], M2} = ?M:send(1, {response, 200, #{}, {sendfile, 0, Size, <<"f">>}}, 0,
				<<"d">>, M),
			{Frames1, M3} = out(M2),
			?assertEqual(1048576, lists:sum([byte_size(D) || {data, 1, _, D} <- Frames1])),
			?assert(?M:resumable(M3)),
			{ok, [], M4} = ?M:resume(0, M3),
			{Frames2, M5} = out(M4),
			?assertEqual(1048576, lists:sum([byte_size(D) || {data, 1, _, D} <- Frames2])),
			{ok, [{drained, 1}], M6} = ?M:resume(0, M5),
			{Frames3, M7} = out(M6),
			?assertEqual(Size - 2097152, lists:sum([byte_size(D) || {data, 1, _, D} <- Frames3])),
			?assertMatch({data, 1, fin, _}, lists:last(Frames3)),
			?assertNot(?M:resumable(M7))
		end},
		{"not resumable while the stream window is closed", fun() ->
			Read = fun(<<"f">>, _, Len) -> {ok, binary:copy(<<0>>, Len)} end,
			{ok, _, M} = feed([req(1, fin), ?F:window_update(10000000)], ready(#{read_file => Read})),
			{ok, [], M2} = ?M:send(1, {response, 200, #{}, {sendfile, 0, 100000, <<"f">>}}, 0,
				<<"d">>, M),
			{Frames, M3} = out(M2),
			?assertEqual(65535, lists:sum([byte_size(D) || {data, 1, _, D} <- Frames])),
			?assertNot(?M:resumable(M3))
		end},
		{"a sendfile error resets the stream", fun() ->
			Read = fun(_, _, _) -> {error, enoent} end,
			{ok, _, M} = feed(req(1, fin), ready(#{read_file => Read})),
			{ok, Events, _} = ?M:send(1, {response, 200, #{}, {sendfile, 0, 5, <<"f">>}}, 0, <<"d">>, M),
			?assertMatch([{sendfile_error, 1, <<"f">>, enoent},
				{stream_error, 1, internal_error, _}], Events)
		end}
	].

%% Response parts (RFC 9113 8.1) and push (8.4).

send_test_() ->
	[
		{"HEAD responses have no body", fun() ->
			Fields = lists:keyreplace(<<":method">>, 1, req_fields(), {<<":method">>, <<"HEAD">>}),
			{ok, _, M} = feed(?F:headers(1, fin, block(Fields)), ready()),
			{ok, [{drained, 1}], M2} = ?M:send(1, {response, 200, #{}, <<"body">>}, 0, <<"d">>, M),
			?assertMatch({[{headers, 1, fin, head_fin, _}], _}, out(M2)),
			{ok, [], _} = ?M:send(1, {data, fin, <<"x">>}, 0, <<"d">>, M2)
		end},
		{"parts out of order are ignored", fun() ->
			{ok, _, M} = feed(req(1, fin), ready()),
			{ok, [{ignored, 1, data, idle}], _} = ?M:send(1, {data, fin, <<"x">>}, 0, <<"d">>, M)
		end},
		{"inform, headers, data, trailers", fun() ->
			{ok, _, M} = feed(req(1, fin), ready()),
			{ok, [], M1} = ?M:send(1, {inform, 103, #{}}, 0, <<"d">>, M),
			{ok, [], M2} = ?M:send(1, {headers, 200, #{}}, 0, <<"d">>, M1),
			%% Its queue is empty again at once.
			{ok, [{drained, 1}], M3} = ?M:send(1, {data, nofin, <<"a">>}, 0, <<"d">>, M2),
			{ok, [{drained, 1}], M4} = ?M:send(1, {trailers, #{<<"x-t">> => <<"1">>}}, 0, <<"d">>, M3),
			{Frames, _} = out(M4),
			?assertMatch([{headers, 1, nofin, head_fin, _}, {headers, 1, nofin, head_fin, _},
				{data, 1, nofin, <<"a">>}, {headers, 1, fin, head_fin, _}], Frames)
		end},
		{"push opens an even stream", fun() ->
			{ok, _, M} = feed(req(1, fin), ready()),
			Push = {push, <<"GET">>, <<"http">>, <<"localhost">>, 80, <<"/a">>, <<>>, #{}},
			{ok, [{headers, 2, fin, #{path := <<"/a">>}}], M2} = ?M:push(1, Push, M),
			?assertMatch({[{push_promise, 1, head_fin, 2, _}], _}, out(M2)),
			?assertEqual({idle, fin, 0}, ?M:stream(2, M2))
		end},
		{"no push when the client disables it", fun() ->
			{ok, _, M} = feed([?F:settings(#{enable_push => false}), req(1, fin)], ready()),
			Push = {push, <<"GET">>, <<"http">>, <<"localhost">>, 80, <<"/a">>, <<>>, #{}},
			{ok, [], _} = ?M:push(1, Push, M)
		end}
	].

%% Upgrade from HTTP/1.1 (RFC 7540 3.2).

upgrade_test() ->
	{ok, Request} = mustang_http2_headers:request(req_fields(), #{enable_connect_protocol => false}),
	{ok, [{headers, 1, fin, _}], M} = ?M:upgrade(Request, #{}, 0, new(#{})),
	?assertEqual(1, ?M:last_stream_id(M)),
	{ok, [{settings, #{}}], _} = feed([?F:preface(), ?F:settings(#{})], M).

%% Properties.

%% Random frames after a valid start; some of them mutated.
frame_gen() ->
	oneof([
		?LET({S, F}, {sid(), fin()}, req(S, F)),
		?LET({S, F, D}, {sid(), fin(), binary()}, ?F:data(S, F, D)),
		?LET({S, C}, {sid(), code()}, ?F:rst_stream(S, C)),
		?LET(W, integer(0, 70000), ?F:settings(#{initial_window_size => W})),
		?F:settings_ack(),
		?LET(P, integer(0, 1000), ?F:ping(P)),
		?LET({S, I}, {sid(), integer(1, 16#7fffffff)}, ?F:window_update(S, I)),
		?LET(I, integer(1, 100000), ?F:window_update(I)),
		?LET(S, sid(), ?F:priority(S, shared, 0, 16)),
		?LET({S, B}, {sid(), binary()}, ?F:continuation(S, head_fin, B)),
		?LET({S, B}, {sid(), binary()}, hdr(S, fin, head_nofin, B)),
		?F:goaway(0, no_error, <<>>),
		?LET(B, binary(), <<(byte_size(B)):24, 77:8, 0:8, 0:32, B/binary>>)
	]).

sid() -> integer(0, 9).
fin() -> oneof([fin, nofin]).
code() -> oneof([cancel, no_error, protocol_error]).

mutate(Bin, []) -> Bin;
mutate(Bin, _) when byte_size(Bin) =:= 0 -> Bin;
mutate(Bin, [{Pos, Byte} | Rest]) ->
	P = Pos rem byte_size(Bin),
	<<A:P/binary, _, B/binary>> = Bin,
	mutate(<<A/binary, Byte, B/binary>>, Rest).

valid_events(Events) ->
	lists:all(fun
		({stream_error, S, C, R}) -> is_integer(S) andalso lists:member(C, ?CODES) andalso is_atom(R);
		(E) -> is_tuple(E) orelse is_atom(E)
	end, Events).

prop_never_crash() ->
	?FORALL({Frames, Mutations}, {list(frame_gen()), list({non_neg_integer(), byte()})},
		begin
			Bin = mutate(iolist_to_binary([?F:preface(), ?F:settings(#{}) | Frames]), Mutations),
			case feed(Bin, ready()) of
				{ok, Events, _} ->
					valid_events(Events);
				{error, {connection_error, Code, Reason}, Events, M} ->
					lists:member(Code, ?CODES) andalso is_atom(Reason) andalso valid_events(Events)
						andalso is_integer(?M:out_size(M))
			end
		end).

%% A valid exchange: requests, bodies, pings, window updates.
exchange_gen() ->
	?LET(N, integer(1, 5), [exchange_frames(2 * I - 1) || I <- lists:seq(1, N)]).

exchange_frames(S) ->
	?LET({Chunks, Pad, Ping}, {list(binary()), boolean(), integer(0, 100)},
		[req(S, nofin), [case Pad of
			true -> <<(byte_size(C) + 3):24, 0:8, 8:8, 0:1, S:31, 2:8, C/binary, 0:16>>;
			false -> ?F:data(S, nofin, C)
		end || C <- Chunks], ?F:ping(Ping), ?F:data(S, fin, <<"end">>)]).

%% Consecutive data of one stream is joined: splits cut it differently.
normalize([{data, S, nofin, A}, {data, S, IsFin, B} | Rest]) ->
	normalize([{data, S, IsFin, <<A/binary, B/binary>>} | Rest]);
normalize([{data, _, nofin, <<>>} | Rest]) ->
	normalize(Rest);
normalize([E | Rest]) ->
	[E | normalize(Rest)];
normalize([]) ->
	[].

split(Bin, []) -> [Bin];
split(Bin, [N | Rest]) when N < byte_size(Bin) ->
	<<A:N/binary, B/binary>> = Bin,
	[A | split(B, Rest)];
split(Bin, _) -> [Bin].

feed_parts(Parts, M0) ->
	lists:foldl(fun(Part, {Acc, M}) ->
		{ok, E, M2} = feed(Part, M),
		{Acc ++ E, M2}
	end, {[], M0}, Parts).

prop_splits() ->
	?FORALL({Frames, Cuts}, {exchange_gen(), list(integer(0, 40))},
		begin
			Bin = iolist_to_binary([?F:preface(), ?F:settings(#{}) | Frames]),
			{Whole, MW} = feed_parts([Bin], new(#{})),
			{Split, MS} = feed_parts(split(Bin, Cuts), new(#{})),
			{OutW, _} = ?M:take_output(MW),
			{OutS, _} = ?M:take_output(MS),
			normalize(Whole) =:= normalize(Split)
				andalso iolist_to_binary(OutW) =:= iolist_to_binary(OutS)
		end).

properties_test_() ->
	Props = [
		{"random and mutated frames never crash, errors have the documented shape",
			prop_never_crash(), 1500},
		{"any split of a valid byte stream gives the same events and output", prop_splits(), 500}
	],
	[{Name, {timeout, 120, ?_assert(proper:quickcheck(P, [{numtests, N}, {to_file, user}]))}}
		|| {Name, P, N} <- Props].
