%% Tests for the HTTP/2 frame codec (RFC 9113 3.4, 4 and 6). Three kinds, as
%% in STYLE.md 5:
%% - tables of frames that must parse (the exact frame and the rest after
%%   it) and of frames that must fail (the exact class, code and stream,
%%   and the RFC section the reason cites); limits are tested at and one past
%%   the boundary;
%% - PropEr properties: build then parse, incremental parsing of random
%%   splits, random and mutated bytes, data_header/2 against parse/2;
%% - a check against an independent implementation, Python's hyperframe
%%   (it comes with h2), in both directions, plus the bytes of a real h2
%%   client session. These run only when a Python with h2 is found
%%   ($MUSTANG_PYTHON, else _tools/venv/bin/python in the repository);
%%   otherwise a note is printed. The Python script is kept below and
%%   written to a temporary file.
-module(mustang_http2_frame_tests).

-include_lib("proper/include/proper.hrl").
-include_lib("eunit/include/eunit.hrl").

-define(M, mustang_http2_frame).
-define(MAX, 16384).

%% Helpers.

%% A frame written by hand, without the builders.
raw(Type, Flags, StreamID, Payload) ->
	<<(byte_size(Payload)):24, Type:8, Flags:8, 0:1, StreamID:31, Payload/binary>>.

p(Bin) ->
	?M:parse(Bin, ?MAX).

%% Error results with the reason replaced by the RFC section it cites, once
%% checked that the reason is a sentence ending with that section.
norm({connection_error, Code, Reason}) ->
	{connection_error, Code, cites(Reason)};
norm({stream_error, StreamID, Code, Reason, Rest}) ->
	{stream_error, StreamID, Code, cites(Reason), Rest};
norm(Other) ->
	Other.

cites(Reason) when is_atom(Reason) ->
	case re:run(atom_to_list(Reason), "^[A-Z][^\\n]*\\. \\((RFC[0-9]+ [0-9]+(\\.[0-9]+)*)\\)$",
			[{capture, [1], list}]) of
		{match, [Section]} -> Section;
		nomatch -> {bad_reason, Reason}
	end;
cites(Reason) ->
	{bad_reason, Reason}.

codes() ->
	[{0, no_error}, {1, protocol_error}, {2, internal_error}, {3, flow_control_error},
		{4, settings_timeout}, {5, stream_closed}, {6, frame_size_error}, {7, refused_stream},
		{8, cancel}, {9, compression_error}, {10, connect_error}, {11, enhance_your_calm},
		{12, inadequate_security}, {13, http_1_1_required}].

code_int(Code) when is_integer(Code) ->
	Code;
code_int(Code) ->
	{Int, Code} = lists:keyfind(Code, 2, codes()),
	Int.

%% Every frame of a buffer, until the first error or partial frame.
parse_all(Bin) ->
	parse_all(Bin, ?MAX).

parse_all(<<>>, _) ->
	[];
parse_all(Bin, Max) ->
	case ?M:parse(Bin, Max) of
		{ok, Frame, Rest} -> [Frame | parse_all(Rest, Max)];
		{ignore, Rest} -> [ignore | parse_all(Rest, Max)];
		Other -> [Other]
	end.

%% Splits Bin into chunks whose sizes are taken from Sizes, cycling.
chunks(Bin, []) ->
	[Bin];
chunks(Bin, Sizes) ->
	chunks(Bin, Sizes, Sizes).

chunks(<<>>, _, _) ->
	[];
chunks(Bin, [], Sizes) ->
	chunks(Bin, Sizes, Sizes);
chunks(Bin, [N | Ns], Sizes) when N < byte_size(Bin) ->
	<<Chunk:N/binary, Rest/binary>> = Bin,
	[Chunk | chunks(Rest, Ns, Sizes)];
chunks(Bin, _, _) ->
	[Bin].

%% Valid frames: each must parse to the exact frame, with the bytes that
%% follow it as the rest.
valid_cases() ->
	Max = binary:copy(<<"x">>, ?MAX),
	AllSettings = <<1:16, 4096:32, 2:16, 0:32, 3:16, 100:32, 4:16, 65535:32,
		5:16, 16384:32, 6:16, 8192:32, 8:16, 1:32>>,
	[
		{"DATA (RFC9113 6.1)", raw(0, 0, 1, <<"hello">>), {data, 1, nofin, <<"hello">>}},
		{"DATA END_STREAM", raw(0, 1, 1, <<"hello">>), {data, 1, fin, <<"hello">>}},
		{"DATA empty", raw(0, 1, 3, <<>>), {data, 3, fin, <<>>}},
		{"DATA PADDED", raw(0, 9, 3, <<3, "abc", 0, 0, 0>>), {data, 3, fin, <<"abc">>}},
		{"DATA PADDED, pad length 0", raw(0, 8, 3, <<0, "abc">>), {data, 3, nofin, <<"abc">>}},
		{"DATA PADDED, pad length = length - 1 (boundary)", raw(0, 8, 3, <<2, 0, 0>>),
			{data, 3, nofin, <<>>}},
		{"DATA PADDED, Pad Length field only", raw(0, 8, 3, <<0>>), {data, 3, nofin, <<>>}},
		{"DATA PADDED, non-zero padding is not checked", raw(0, 8, 3, <<1, "a", 7>>),
			{data, 3, nofin, <<"a">>}},
		{"DATA reserved bit ignored (RFC9113 4.1)", <<5:24, 0, 0, 1:1, 1:31, "hello">>,
			{data, 1, nofin, <<"hello">>}},
		{"DATA unknown flags ignored (RFC9113 4.1)", raw(0, 16#f6, 1, <<"x">>),
			{data, 1, nofin, <<"x">>}},
		{"DATA largest stream id", raw(0, 0, 16#7fffffff, <<"x">>),
			{data, 16#7fffffff, nofin, <<"x">>}},
		{"DATA of exactly the max frame size (RFC9113 4.2)", raw(0, 0, 1, Max),
			{data, 1, nofin, Max}},
		{"HEADERS (RFC9113 6.2)", raw(1, 4, 1, <<"blk">>),
			{headers, 1, nofin, head_fin, <<"blk">>}},
		{"HEADERS END_STREAM without END_HEADERS", raw(1, 1, 1, <<"blk">>),
			{headers, 1, fin, head_nofin, <<"blk">>}},
		{"HEADERS empty", raw(1, 5, 1, <<>>), {headers, 1, fin, head_fin, <<>>}},
		{"HEADERS PADDED", raw(1, 16#d, 1, <<2, "blk", 0, 0>>),
			{headers, 1, fin, head_fin, <<"blk">>}},
		{"HEADERS PADDED, only padding (boundary)", raw(1, 16#c, 1, <<2, 0, 0>>),
			{headers, 1, nofin, head_fin, <<>>}},
		{"HEADERS PRIORITY exclusive", raw(1, 16#24, 3, <<1:1, 1:31, 15, "blk">>),
			{headers, 3, nofin, head_fin, {exclusive, 1, 16}, <<"blk">>}},
		{"HEADERS PRIORITY shared on stream 0, weight 256", raw(1, 16#20, 3, <<0:1, 0:31, 255>>),
			{headers, 3, nofin, head_nofin, {shared, 0, 256}, <<>>}},
		{"HEADERS PADDED PRIORITY", raw(1, 16#2d, 5, <<1, 0:1, 3:31, 0, "b", 0>>),
			{headers, 5, fin, head_fin, {shared, 3, 1}, <<"b">>}},
		{"HEADERS PADDED PRIORITY, only padding (boundary)",
			raw(1, 16#28, 5, <<2, 1:1, 3:31, 0, 0, 0>>),
			{headers, 5, nofin, head_nofin, {exclusive, 3, 1}, <<>>}},
		{"HEADERS unknown flags ignored", raw(1, 16#d2, 1, <<"b">>),
			{headers, 1, nofin, head_nofin, <<"b">>}},
		{"PRIORITY (RFC9113 6.3)", raw(2, 0, 3, <<1:1, 1:31, 255>>),
			{priority, 3, exclusive, 1, 256}},
		{"PRIORITY shared on stream 0, weight 1", raw(2, 0, 3, <<0:1, 0:31, 0>>),
			{priority, 3, shared, 0, 1}},
		{"RST_STREAM (RFC9113 6.4)", raw(3, 0, 1, <<8:32>>), {rst_stream, 1, cancel}},
		{"RST_STREAM unknown code kept as an integer (RFC9113 7)", raw(3, 0, 1, <<14:32>>),
			{rst_stream, 1, 14}},
		{"RST_STREAM largest code", raw(3, 0, 1, <<16#ffffffff:32>>),
			{rst_stream, 1, 16#ffffffff}},
		{"SETTINGS empty (RFC9113 6.5)", raw(4, 0, 0, <<>>), {settings, #{}}},
		{"SETTINGS every known parameter", raw(4, 0, 0, AllSettings),
			{settings, #{header_table_size => 4096, enable_push => false,
				max_concurrent_streams => 100, initial_window_size => 65535,
				max_frame_size => 16384, max_header_list_size => 8192,
				enable_connect_protocol => true}}},
		{"SETTINGS ENABLE_PUSH 1", raw(4, 0, 0, <<2:16, 1:32>>),
			{settings, #{enable_push => true}}},
		{"SETTINGS ENABLE_CONNECT_PROTOCOL 0", raw(4, 0, 0, <<8:16, 0:32>>),
			{settings, #{enable_connect_protocol => false}}},
		{"SETTINGS INITIAL_WINDOW_SIZE 2^31-1 (boundary)", raw(4, 0, 0, <<4:16, 16#7fffffff:32>>),
			{settings, #{initial_window_size => 16#7fffffff}}},
		{"SETTINGS INITIAL_WINDOW_SIZE 0", raw(4, 0, 0, <<4:16, 0:32>>),
			{settings, #{initial_window_size => 0}}},
		{"SETTINGS MAX_FRAME_SIZE 16384 (boundary)", raw(4, 0, 0, <<5:16, 16384:32>>),
			{settings, #{max_frame_size => 16384}}},
		{"SETTINGS MAX_FRAME_SIZE 16777215 (boundary)", raw(4, 0, 0, <<5:16, 16777215:32>>),
			{settings, #{max_frame_size => 16777215}}},
		{"SETTINGS largest HEADER_TABLE_SIZE", raw(4, 0, 0, <<1:16, 16#ffffffff:32>>),
			{settings, #{header_table_size => 16#ffffffff}}},
		{"SETTINGS unknown identifiers ignored (RFC9113 6.5.2)",
			raw(4, 0, 0, <<0:16, 5:32, 7:16, 1:32, 9:16, 2:32, 16#ffff:16, 16#ffffffff:32,
				3:16, 10:32>>),
			{settings, #{max_concurrent_streams => 10}}},
		{"SETTINGS repeated identifier: the last value wins (RFC9113 6.5.3)",
			raw(4, 0, 0, <<3:16, 1:32, 3:16, 2:32>>), {settings, #{max_concurrent_streams => 2}}},
		{"SETTINGS ACK", raw(4, 1, 0, <<>>), settings_ack},
		{"SETTINGS unknown flags ignored", raw(4, 16#fe, 0, <<3:16, 1:32>>),
			{settings, #{max_concurrent_streams => 1}}},
		{"PUSH_PROMISE (RFC9113 6.6)", raw(5, 4, 1, <<0:1, 2:31, "blk">>),
			{push_promise, 1, head_fin, 2, <<"blk">>}},
		{"PUSH_PROMISE empty fragment", raw(5, 0, 1, <<0:1, 2:31>>),
			{push_promise, 1, head_nofin, 2, <<>>}},
		{"PUSH_PROMISE PADDED, reserved bit ignored", raw(5, 8, 1, <<1, 1:1, 4:31, "b", 0>>),
			{push_promise, 1, head_nofin, 4, <<"b">>}},
		{"PUSH_PROMISE PADDED, only padding (boundary)", raw(5, 12, 1, <<2, 0:1, 4:31, 0, 0>>),
			{push_promise, 1, head_fin, 4, <<>>}},
		{"PING (RFC9113 6.7)", raw(6, 0, 0, <<1234:64>>), {ping, 1234}},
		{"PING ACK", raw(6, 1, 0, <<16#ffffffffffffffff:64>>), {ping_ack, 16#ffffffffffffffff}},
		{"GOAWAY (RFC9113 6.8)", raw(7, 0, 0, <<0:1, 7:31, 2:32>>),
			{goaway, 7, internal_error, <<>>}},
		{"GOAWAY debug data, reserved bit ignored",
			raw(7, 0, 0, <<1:1, 16#7fffffff:31, 11:32, "calm down">>),
			{goaway, 16#7fffffff, enhance_your_calm, <<"calm down">>}},
		{"GOAWAY unknown code kept as an integer", raw(7, 0, 0, <<0:32, 99:32>>),
			{goaway, 0, 99, <<>>}},
		{"WINDOW_UPDATE on the connection (RFC9113 6.9)", raw(8, 0, 0, <<0:1, 100:31>>),
			{window_update, 100}},
		{"WINDOW_UPDATE on a stream, increment 1 (boundary)", raw(8, 0, 1, <<0:1, 1:31>>),
			{window_update, 1, 1}},
		{"WINDOW_UPDATE largest increment, reserved bit ignored",
			raw(8, 0, 0, <<1:1, 16#7fffffff:31>>), {window_update, 16#7fffffff}},
		{"CONTINUATION (RFC9113 6.10)", raw(9, 4, 1, <<"blk">>),
			{continuation, 1, head_fin, <<"blk">>}},
		{"CONTINUATION without END_HEADERS", raw(9, 0, 1, <<>>),
			{continuation, 1, head_nofin, <<>>}}
	].

valid_test_() ->
	[{Name, ?_assertEqual({ok, Frame, <<"next">>}, p(<<Bin/binary, "next">>))}
		|| {Name, Bin, Frame} <- valid_cases()].

codes_test_() ->
	[[{"RST_STREAM code " ++ integer_to_list(Int),
			?_assertEqual({ok, {rst_stream, 1, Code}, <<>>}, p(raw(3, 0, 1, <<Int:32>>)))},
		{"GOAWAY code " ++ integer_to_list(Int),
			?_assertEqual({ok, {goaway, 3, Code, <<>>}, <<>>}, p(raw(7, 0, 0, <<3:32, Int:32>>)))},
		{"rst_stream/2 code " ++ integer_to_list(Int),
			?_assertEqual(<<4:24, 3, 0, 1:32, Int:32>>, iolist_to_binary(?M:rst_stream(1, Code)))}]
		|| {Int, Code} <- codes()].

%% Frames of unknown types are ignored, whatever their flags and stream
%% (RFC9113 4.1, 5.5).
ignore_test_() ->
	[{Name, ?_assertEqual({ignore, <<"next">>}, p(<<Bin/binary, "next">>))} || {Name, Bin} <- [
		{"type 10", raw(10, 0, 0, <<"x">>)},
		{"type 255 on a stream with every flag", raw(255, 255, 7, <<"abc">>)},
		{"type 250 empty", raw(16#fa, 0, 0, <<>>)},
		{"type 16 of exactly the max frame size", raw(16, 0, 1, binary:copy(<<0>>, ?MAX))}
	]].

%% Invalid frames: {conn, Code, Section} or {stream, StreamID, Code, Section}.
error_cases() ->
	TooLarge = binary:copy(<<0>>, ?MAX + 1),
	[
		{"frame one byte larger than the max frame size", raw(0, 0, 1, TooLarge),
			{conn, frame_size_error, "RFC9113 4.2"}},
		{"unknown type larger than the max frame size", raw(10, 0, 1, TooLarge),
			{conn, frame_size_error, "RFC9113 4.2"}},
		{"DATA on stream 0", raw(0, 0, 0, <<"x">>), {conn, protocol_error, "RFC9113 6.1"}},
		{"DATA PADDED without the Pad Length field", raw(0, 8, 1, <<>>),
			{conn, frame_size_error, "RFC9113 6.1"}},
		{"DATA pad length = payload length (boundary)", raw(0, 8, 1, <<2, 0>>),
			{conn, protocol_error, "RFC9113 6.1"}},
		{"DATA pad length 255 in a 1-byte payload", raw(0, 8, 1, <<255>>),
			{conn, protocol_error, "RFC9113 6.1"}},
		{"DATA pad length beyond the payload", raw(0, 9, 1, <<4, "ab">>),
			{conn, protocol_error, "RFC9113 6.1"}},
		{"HEADERS on stream 0", raw(1, 4, 0, <<"b">>), {conn, protocol_error, "RFC9113 6.2"}},
		{"HEADERS PADDED without the Pad Length field", raw(1, 12, 1, <<>>),
			{conn, frame_size_error, "RFC9113 6.2"}},
		{"HEADERS pad length = payload length (boundary)", raw(1, 12, 1, <<2, 0>>),
			{conn, protocol_error, "RFC9113 6.2"}},
		{"HEADERS PRIORITY in 4 bytes", raw(1, 16#24, 1, <<0, 0, 0, 3>>),
			{conn, frame_size_error, "RFC9113 6.2"}},
		{"HEADERS PRIORITY empty", raw(1, 16#20, 1, <<>>),
			{conn, frame_size_error, "RFC9113 6.2"}},
		{"HEADERS PADDED PRIORITY in 5 bytes", raw(1, 16#28, 1, <<0, 0, 0, 0, 3>>),
			{conn, frame_size_error, "RFC9113 6.2"}},
		{"HEADERS PADDED PRIORITY, padding past the priority fields",
			raw(1, 16#28, 1, <<1, 0, 0, 0, 3, 16>>), {conn, protocol_error, "RFC9113 6.2"}},
		{"HEADERS depending on its own stream", raw(1, 16#24, 3, <<0:1, 3:31, 16, "b">>),
			{stream, 3, protocol_error, "RFC7540 5.3.1"}},
		{"HEADERS PADDED depending on its own stream",
			raw(1, 16#2c, 3, <<1, 1:1, 3:31, 16, "b", 0>>),
			{stream, 3, protocol_error, "RFC7540 5.3.1"}},
		{"PRIORITY on stream 0", raw(2, 0, 0, <<0:32, 0>>), {conn, protocol_error, "RFC9113 6.3"}},
		{"PRIORITY of 4 bytes", raw(2, 0, 1, <<0:32>>), {stream, 1, frame_size_error, "RFC9113 6.3"}},
		{"PRIORITY of 6 bytes", raw(2, 0, 1, <<0:48>>), {stream, 1, frame_size_error, "RFC9113 6.3"}},
		{"PRIORITY depending on its own stream", raw(2, 0, 5, <<1:1, 5:31, 0>>),
			{stream, 5, protocol_error, "RFC7540 5.3.1"}},
		{"RST_STREAM on stream 0", raw(3, 0, 0, <<0:32>>), {conn, protocol_error, "RFC9113 6.4"}},
		{"RST_STREAM of 3 bytes", raw(3, 0, 1, <<0:24>>), {conn, frame_size_error, "RFC9113 6.4"}},
		{"RST_STREAM of 5 bytes", raw(3, 0, 1, <<0:40>>), {conn, frame_size_error, "RFC9113 6.4"}},
		{"SETTINGS on stream 1", raw(4, 0, 1, <<>>), {conn, protocol_error, "RFC9113 6.5"}},
		{"SETTINGS ACK on stream 1", raw(4, 1, 1, <<>>), {conn, protocol_error, "RFC9113 6.5"}},
		{"SETTINGS ACK with a parameter", raw(4, 1, 0, <<3:16, 1:32>>),
			{conn, frame_size_error, "RFC9113 6.5"}},
		{"SETTINGS ACK with 1 byte", raw(4, 1, 0, <<0>>), {conn, frame_size_error, "RFC9113 6.5"}},
		{"SETTINGS of 5 bytes", raw(4, 0, 0, <<0:40>>), {conn, frame_size_error, "RFC9113 6.5"}},
		{"SETTINGS of 7 bytes", raw(4, 0, 0, <<0:56>>), {conn, frame_size_error, "RFC9113 6.5"}},
		{"SETTINGS ENABLE_PUSH 2", raw(4, 0, 0, <<2:16, 2:32>>),
			{conn, protocol_error, "RFC9113 6.5.2"}},
		{"SETTINGS INITIAL_WINDOW_SIZE 2^31 (boundary)", raw(4, 0, 0, <<4:16, 16#80000000:32>>),
			{conn, flow_control_error, "RFC9113 6.5.2"}},
		{"SETTINGS INITIAL_WINDOW_SIZE 2^32-1", raw(4, 0, 0, <<4:16, 16#ffffffff:32>>),
			{conn, flow_control_error, "RFC9113 6.5.2"}},
		{"SETTINGS MAX_FRAME_SIZE 16383 (boundary)", raw(4, 0, 0, <<5:16, 16383:32>>),
			{conn, protocol_error, "RFC9113 6.5.2"}},
		{"SETTINGS MAX_FRAME_SIZE 16777216 (boundary)", raw(4, 0, 0, <<5:16, 16777216:32>>),
			{conn, protocol_error, "RFC9113 6.5.2"}},
		{"SETTINGS MAX_FRAME_SIZE 0", raw(4, 0, 0, <<5:16, 0:32>>),
			{conn, protocol_error, "RFC9113 6.5.2"}},
		{"SETTINGS ENABLE_CONNECT_PROTOCOL 2", raw(4, 0, 0, <<8:16, 2:32>>),
			{conn, protocol_error, "RFC8441 3"}},
		{"SETTINGS invalid value after valid ones", raw(4, 0, 0, <<3:16, 1:32, 2:16, 7:32>>),
			{conn, protocol_error, "RFC9113 6.5.2"}},
		{"PUSH_PROMISE on stream 0", raw(5, 4, 0, <<0:1, 2:31>>),
			{conn, protocol_error, "RFC9113 6.6"}},
		{"PUSH_PROMISE of 3 bytes", raw(5, 4, 1, <<0:24>>), {conn, frame_size_error, "RFC9113 6.6"}},
		{"PUSH_PROMISE PADDED of 4 bytes", raw(5, 8, 1, <<0, 0:24>>),
			{conn, frame_size_error, "RFC9113 6.6"}},
		{"PUSH_PROMISE PADDED, padding past the promised stream", raw(5, 8, 1, <<1, 0:1, 2:31>>),
			{conn, protocol_error, "RFC9113 6.6"}},
		{"PUSH_PROMISE promising stream 0", raw(5, 4, 1, <<0:32, "b">>),
			{conn, protocol_error, "RFC9113 6.6"}},
		{"PING on stream 1", raw(6, 0, 1, <<0:64>>), {conn, protocol_error, "RFC9113 6.7"}},
		{"PING of 7 bytes", raw(6, 0, 0, <<0:56>>), {conn, frame_size_error, "RFC9113 6.7"}},
		{"PING of 9 bytes", raw(6, 0, 0, <<0:72>>), {conn, frame_size_error, "RFC9113 6.7"}},
		{"PING ACK empty", raw(6, 1, 0, <<>>), {conn, frame_size_error, "RFC9113 6.7"}},
		{"GOAWAY on stream 1", raw(7, 0, 1, <<0:64>>), {conn, protocol_error, "RFC9113 6.8"}},
		{"GOAWAY of 7 bytes (boundary)", raw(7, 0, 0, <<0:56>>),
			{conn, frame_size_error, "RFC9113 6.8"}},
		{"GOAWAY empty", raw(7, 0, 0, <<>>), {conn, frame_size_error, "RFC9113 6.8"}},
		{"WINDOW_UPDATE of 3 bytes on the connection", raw(8, 0, 0, <<0, 0, 1>>),
			{conn, frame_size_error, "RFC9113 6.9"}},
		{"WINDOW_UPDATE of 5 bytes on a stream", raw(8, 0, 1, <<0, 0, 0, 1, 0>>),
			{conn, frame_size_error, "RFC9113 6.9"}},
		{"WINDOW_UPDATE increment 0 on the connection", raw(8, 0, 0, <<0:32>>),
			{conn, protocol_error, "RFC9113 6.9"}},
		{"WINDOW_UPDATE increment 0 on a stream", raw(8, 0, 1, <<0:32>>),
			{stream, 1, protocol_error, "RFC9113 6.9"}},
		{"WINDOW_UPDATE increment 0 with the reserved bit set", raw(8, 0, 7, <<1:1, 0:31>>),
			{stream, 7, protocol_error, "RFC9113 6.9"}},
		{"CONTINUATION on stream 0", raw(9, 4, 0, <<"b">>), {conn, protocol_error, "RFC9113 6.10"}}
	].

error_test_() ->
	[{Name, ?_assertEqual(expected_error(Expected), norm(p(<<Bin/binary, "next">>)))}
		|| {Name, Bin, Expected} <- error_cases()].

expected_error({conn, Code, Section}) ->
	{connection_error, Code, Section};
expected_error({stream, StreamID, Code, Section}) ->
	{stream_error, StreamID, Code, Section, <<"next">>}.

max_frame_size_test_() ->
	TooLarge = {connection_error, frame_size_error, "RFC9113 4.2"},
	[
		{"refused once the 3 length bytes are there",
			?_assertEqual(TooLarge, norm(p(<<(?MAX + 1):24>>)))},
		{"largest length refused from its length alone",
			?_assertEqual(TooLarge, norm(p(<<16#ffffff:24, 0>>)))},
		{"fewer than 3 bytes: more", ?_assertEqual(more, p(<<255, 255>>))},
		{"max frame size 0: empty frame accepted",
			?_assertEqual({ok, settings_ack, <<>>}, ?M:parse(raw(4, 1, 0, <<>>), 0))},
		{"max frame size 0: 1-byte frame refused",
			?_assertEqual(TooLarge, norm(?M:parse(raw(0, 0, 1, <<"x">>), 0)))},
		{"max frame size 16777215: 16385 bytes accepted",
			?_assertMatch({ok, {data, 1, nofin, _}, <<>>},
				?M:parse(raw(0, 0, 1, binary:copy(<<0>>, ?MAX + 1)), 16777215))}
	].

%% Every prefix of a frame asks for more: plain more until the 9-byte header
%% is there, then the exact number of bytes missing.
prefix_test_() ->
	Frames = [
		{"PING", raw(6, 0, 0, <<1:64>>)},
		{"DATA PADDED", raw(0, 8, 1, <<2, "ab", 0, 0>>)},
		{"SETTINGS ACK", raw(4, 1, 0, <<>>)},
		{"unknown type", raw(10, 0, 0, <<"xyz">>)},
		{"invalid PING of 7 bytes", raw(6, 0, 0, <<0:56>>)}
	],
	[{Name, ?_test(begin
		Size = byte_size(Bin),
		Expected = [{K, case K < 9 of true -> more; false -> {more, Size - K} end}
			|| K <- lists:seq(0, Size - 1)],
		?assertEqual(Expected, [{K, p(binary:part(Bin, 0, K))} || K <- lists:seq(0, Size - 1)])
	end)} || {Name, Bin} <- Frames].

parse_header_test_() ->
	Types = [data, headers, priority, rst_stream, settings, push_promise, ping, goaway,
		window_update, continuation],
	[
		{"reserved bit dropped",
			?_assertEqual({ok, data, 1, 1, 5, <<"hello">>},
				?M:parse_header(<<5:24, 0, 1, 1:1, 1:31, "hello">>))},
		{"unknown type as an integer",
			?_assertEqual({ok, 250, 255, 7, 0, <<>>}, ?M:parse_header(raw(250, 255, 7, <<>>)))},
		{"nothing checked", ?_assertEqual({ok, ping, 0, 1, 16#ffffff, <<>>},
			?M:parse_header(<<16#ffffff:24, 6, 0, 1:32>>))},
		{"8 bytes: more", ?_assertEqual(more, ?M:parse_header(<<0:64>>))},
		{"empty: more", ?_assertEqual(more, ?M:parse_header(<<>>))},
		{"every known type", ?_assertEqual([{ok, T, 0, 0, 0, <<>>} || T <- Types],
			[?M:parse_header(raw(N, 0, 0, <<>>)) || N <- lists:seq(0, 9)])}
	].

data_header_test_() ->
	Errors = [
		{"too large", raw(0, 0, 1, binary:copy(<<0>>, ?MAX + 1))},
		{"stream 0", raw(0, 0, 0, <<"x">>)},
		{"PADDED without Pad Length", raw(0, 8, 1, <<>>)},
		{"pad length = payload length", raw(0, 8, 1, <<2, 0>>)},
		{"pad length 255 in 2 bytes", raw(0, 8, 1, <<255, 0>>)}
	],
	[
		{"not padded", ?_assertEqual({ok, 3, fin, 0, 5, <<"hello">>},
			?M:data_header(raw(0, 1, 3, <<"hello">>), ?MAX))},
		{"padded: Rest starts after the Pad Length byte",
			?_assertEqual({ok, 3, nofin, 2, 3, <<"abc", 0, 0>>},
				?M:data_header(raw(0, 8, 3, <<2, "abc", 0, 0>>), ?MAX))},
		{"padded, only padding", ?_assertEqual({ok, 3, nofin, 2, 0, <<0, 0>>},
			?M:data_header(raw(0, 8, 3, <<2, 0, 0>>), ?MAX))},
		{"header only: ok", ?_assertEqual({ok, 3, nofin, 0, 100, <<>>},
			?M:data_header(<<100:24, 0, 0, 3:32>>, ?MAX))},
		{"padded header without the Pad Length byte: more",
			?_assertEqual(more, ?M:data_header(<<100:24, 0, 8, 3:32>>, ?MAX))},
		{"8 bytes: more", ?_assertEqual(more, ?M:data_header(<<100:24, 0, 0, 3:24>>, ?MAX))},
		{"empty: more", ?_assertEqual(more, ?M:data_header(<<>>, ?MAX))},
		{"too large from the length alone",
			?_assertEqual({connection_error, frame_size_error, "RFC9113 4.2"},
				norm(?M:data_header(<<(?MAX + 1):24>>, ?MAX)))},
		{"not a DATA frame: badarg",
			?_assertError(badarg, ?M:data_header(raw(6, 0, 0, <<0:64>>), ?MAX))}
	] ++ [{"same error as parse/2: " ++ Name, ?_test(begin
		Error = p(Bin),
		?assertMatch({connection_error, _, _}, Error),
		?assertEqual(Error, ?M:data_header(Bin, ?MAX))
	end)} || {Name, Bin} <- Errors].

%% The use described in the module's head comment: a padded DATA frame
%% handed to its stream 3 bytes at a time as they arrive, then the PING that
%% follows it.
streaming_data_test() ->
	Data = <<"0123456789abcdefghij">>,
	Bin = <<(raw(0, 9, 5, <<4, Data/binary, 0, 0, 0, 0>>))/binary,
		(raw(6, 0, 0, <<7:64>>))/binary>>,
	?assertEqual([
		{flow, 5, 25},
		{data, 5, <<"01">>}, {data, 5, <<"234">>}, {data, 5, <<"567">>}, {data, 5, <<"89a">>},
		{data, 5, <<"bcd">>}, {data, 5, <<"efg">>}, {data, 5, <<"hij">>},
		{fin, 5},
		{frame, {ping, 7}}
	], stream(chunks(Bin, [3]), {frame, <<>>}, [])).

stream([], {frame, <<>>}, Events) ->
	lists:reverse(Events);
stream([Chunk | Chunks], State, Events0) ->
	{State2, Events} = step(append(State, Chunk), Events0),
	stream(Chunks, State2, Events).

append({frame, Buf}, Chunk) -> {frame, <<Buf/binary, Chunk/binary>>};
append({payload, S, Fin, Left, Pad, Buf}, Chunk) ->
	{payload, S, Fin, Left, Pad, <<Buf/binary, Chunk/binary>>};
append({skip, Left, Buf}, Chunk) -> {skip, Left, <<Buf/binary, Chunk/binary>>}.

step({frame, Buf} = State, Events) ->
	case ?M:parse_header(Buf) of
		{ok, data, _, _, Length, _} ->
			case ?M:data_header(Buf, ?MAX) of
				{ok, StreamID, IsFin, Pad, PayloadLength, Rest} ->
					step({payload, StreamID, IsFin, PayloadLength, Pad, Rest},
						[{flow, StreamID, Length} | Events]);
				more ->
					{State, Events}
			end;
		{ok, _, _, _, _, _} ->
			case p(Buf) of
				{ok, Frame, Rest} -> step({frame, Rest}, [{frame, Frame} | Events]);
				{more, _} -> {State, Events}
			end;
		more ->
			{State, Events}
	end;
step({payload, StreamID, IsFin, Left, Pad, Buf}, Events0) ->
	N = min(Left, byte_size(Buf)),
	<<Data:N/binary, Rest/binary>> = Buf,
	Events = case N of
		0 -> Events0;
		_ -> [{data, StreamID, Data} | Events0]
	end,
	case {Left - N, IsFin} of
		{0, fin} -> step({skip, Pad, Rest}, [{fin, StreamID} | Events]);
		{0, nofin} -> step({skip, Pad, Rest}, Events);
		{Left2, _} -> {{payload, StreamID, IsFin, Left2, Pad, Rest}, Events}
	end;
step({skip, Left, Buf}, Events) when byte_size(Buf) >= Left ->
	<<_:Left/binary, Rest/binary>> = Buf,
	step({frame, Rest}, Events);
step({skip, Left, Buf}, Events) ->
	{{skip, Left - byte_size(Buf), <<>>}, Events}.

preface_test_() ->
	Preface = <<"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n">>,
	Bad = {connection_error, protocol_error, "RFC9113 3.4"},
	[
		{"preface/0", ?_assertEqual(Preface, ?M:preface())},
		{"whole preface", ?_assertEqual(ok, ?M:parse_preface(Preface))},
		{"preface then a frame", ?_assertEqual(ok,
			?M:parse_preface(<<Preface/binary, (raw(4, 0, 0, <<>>))/binary>>))},
		{"every proper prefix: more", ?_assertEqual(
			[{K, more} || K <- lists:seq(0, 23)],
			[{K, ?M:parse_preface(binary:part(Preface, 0, K))} || K <- lists:seq(0, 23)])},
		{"an HTTP/1.1 request", ?_assertEqual(Bad,
			norm(?M:parse_preface(<<"GET / HTTP/1.1\r\nHost: a\r\n\r\n">>)))},
		{"a wrong first byte", ?_assertEqual(Bad, norm(?M:parse_preface(<<"G">>)))},
		{"a wrong last byte", ?_assertEqual(Bad,
			norm(?M:parse_preface(<<"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\r">>)))},
		{"a prefix going wrong", ?_assertEqual(Bad, norm(?M:parse_preface(<<"PRI * HTTP/1.1">>)))}
	].

%% The exact bytes of every builder.
builder_test_() ->
	[{Name, ?_assertEqual(Expected, iolist_to_binary(Built))} || {Name, Built, Expected} <- [
		{"data/3", ?M:data(1, fin, <<"hello">>), <<0, 0, 5, 0, 1, 0, 0, 0, 1, "hello">>},
		{"data/3 iolist", ?M:data(3, nofin, [<<"he">>, "llo"]),
			<<0, 0, 5, 0, 0, 0, 0, 0, 3, "hello">>},
		{"data/3 empty", ?M:data(3, fin, <<>>), <<0, 0, 0, 0, 1, 0, 0, 0, 3>>},
		{"data_header/3", ?M:data_header(5, fin, 100000), <<1, 134, 160, 0, 1, 0, 0, 0, 5>>},
		{"data_header/3 nofin", ?M:data_header(5, nofin, 0), <<0, 0, 0, 0, 0, 0, 0, 0, 5>>},
		{"headers/3 fin", ?M:headers(1, fin, <<"hb">>), <<0, 0, 2, 1, 5, 0, 0, 0, 1, "hb">>},
		{"headers/3 nofin", ?M:headers(1, nofin, [<<"h">>, <<"b">>]),
			<<0, 0, 2, 1, 4, 0, 0, 0, 1, "hb">>},
		{"headers/4 fits", ?M:headers(1, nofin, <<"abc">>, 3), <<0, 0, 3, 1, 4, 0, 0, 0, 1, "abc">>},
		{"headers/4 split", ?M:headers(1, fin, <<"abcdefg">>, 3),
			<<0, 0, 3, 1, 1, 0, 0, 0, 1, "abc", 0, 0, 3, 9, 0, 0, 0, 0, 1, "def",
				0, 0, 1, 9, 4, 0, 0, 0, 1, "g">>},
		{"headers/4 one byte over", ?M:headers(7, nofin, <<"abcd">>, 3),
			<<0, 0, 3, 1, 0, 0, 0, 0, 7, "abc", 0, 0, 1, 9, 4, 0, 0, 0, 7, "d">>},
		{"headers/4 exact multiple", ?M:headers(7, nofin, <<"abcdef">>, 3),
			<<0, 0, 3, 1, 0, 0, 0, 0, 7, "abc", 0, 0, 3, 9, 4, 0, 0, 0, 7, "def">>},
		{"priority/4 exclusive", ?M:priority(3, exclusive, 1, 256),
			<<0, 0, 5, 2, 0, 0, 0, 0, 3, 128, 0, 0, 1, 255>>},
		{"priority/4 shared", ?M:priority(3, shared, 0, 1),
			<<0, 0, 5, 2, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0>>},
		{"rst_stream/2", ?M:rst_stream(1, cancel), <<0, 0, 4, 3, 0, 0, 0, 0, 1, 0, 0, 0, 8>>},
		{"rst_stream/2 integer code", ?M:rst_stream(1, 255),
			<<0, 0, 4, 3, 0, 0, 0, 0, 1, 0, 0, 0, 255>>},
		{"settings/1 empty", ?M:settings(#{}), <<0, 0, 0, 4, 0, 0, 0, 0, 0>>},
		{"settings/1", ?M:settings(#{enable_push => false, max_concurrent_streams => 100,
				initial_window_size => 65535}),
			<<0, 0, 18, 4, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 3, 0, 0, 0, 100,
				0, 4, 0, 0, 255, 255>>},
		{"settings/1 every key and raw identifiers", ?M:settings(#{16#ff => 1, 9 => 1,
				enable_connect_protocol => true, max_header_list_size => 8192,
				max_frame_size => 16777215, initial_window_size => 16#7fffffff,
				max_concurrent_streams => 0, enable_push => true, header_table_size => 4096}),
			<<54:24, 4, 0, 0:32, 1:16, 4096:32, 2:16, 1:32, 3:16, 0:32, 4:16, 16#7fffffff:32,
				5:16, 16777215:32, 6:16, 8192:32, 8:16, 1:32, 9:16, 1:32, 16#ff:16, 1:32>>},
		{"settings_ack/0", ?M:settings_ack(), <<0, 0, 0, 4, 1, 0, 0, 0, 0>>},
		{"push_promise/4", ?M:push_promise(1, head_fin, 2, <<"pp">>),
			<<0, 0, 6, 5, 4, 0, 0, 0, 1, 0, 0, 0, 2, "pp">>},
		{"push_promise/4 head_nofin", ?M:push_promise(1, head_nofin, 2, []),
			<<0, 0, 4, 5, 0, 0, 0, 0, 1, 0, 0, 0, 2>>},
		{"ping/1", ?M:ping(1), <<0, 0, 8, 6, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1>>},
		{"ping_ack/1", ?M:ping_ack(16#0102030405060708),
			<<0, 0, 8, 6, 1, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8>>},
		{"goaway/3", ?M:goaway(7, no_error, <<"bye">>),
			<<0, 0, 11, 7, 0, 0, 0, 0, 0, 0, 0, 0, 7, 0, 0, 0, 0, "bye">>},
		{"goaway/3 empty debug data", ?M:goaway(16#7fffffff, http_1_1_required, <<>>),
			<<0, 0, 8, 7, 0, 0, 0, 0, 0, 127, 255, 255, 255, 0, 0, 0, 13>>},
		{"window_update/1", ?M:window_update(1000), <<0, 0, 4, 8, 0, 0, 0, 0, 0, 0, 0, 3, 232>>},
		{"window_update/2", ?M:window_update(5, 16#7fffffff),
			<<0, 0, 4, 8, 0, 0, 0, 0, 5, 127, 255, 255, 255>>},
		{"continuation/3 head_nofin", ?M:continuation(1, head_nofin, <<"c">>),
			<<0, 0, 1, 9, 0, 0, 0, 0, 1, "c">>},
		{"continuation/3 head_fin", ?M:continuation(1, head_fin, <<"c">>),
			<<0, 0, 1, 9, 4, 0, 0, 0, 1, "c">>}
	]].

%% Properties.

sid() -> integer(1, 16#7fffffff).
sid0() -> oneof([0, sid()]).
u32() -> integer(0, 16#ffffffff).
u64() -> integer(0, 16#ffffffffffffffff).
fin() -> oneof([fin, nofin]).
head_fin() -> oneof([head_fin, head_nofin]).
excl() -> oneof([exclusive, shared]).
weight() -> integer(1, 256).
increment() -> integer(1, 16#7fffffff).
pad() -> oneof([none, integer(0, 255)]).
max_size() -> oneof([?MAX, integer(0, 64), 16777215]).
code() -> oneof([elements([C || {_, C} <- codes()]), integer(14, 16#ffffffff)]).
blob() -> oneof([binary(), ?LET(N, integer(0, 1000), binary(N))]).
short() -> oneof([binary(), ?LET(N, integer(0, 12), binary(N))]).

%% A stream and a stream it may depend on.
sid_dep() ->
	?SUCHTHAT({S, D}, {sid(), sid0()}, S =/= D).

settings_map() ->
	?LET(L, list(oneof([
		{header_table_size, u32()},
		{enable_push, boolean()},
		{max_concurrent_streams, u32()},
		{initial_window_size, integer(0, 16#7fffffff)},
		{max_frame_size, integer(16384, 16777215)},
		{max_header_list_size, u32()},
		{enable_connect_protocol, boolean()}
	])), maps:from_list(L)).

%% Every frame the builders can write.
frame_term() ->
	oneof([
		{data, sid(), fin(), blob()},
		{headers, sid(), fin(), head_fin, blob()},
		?LET({{S, D}, E, W}, {sid_dep(), excl(), weight()}, {priority, S, E, D, W}),
		{rst_stream, sid(), code()},
		{settings, settings_map()},
		settings_ack,
		{push_promise, sid(), head_fin(), sid(), blob()},
		{ping, u64()},
		{ping_ack, u64()},
		{goaway, sid0(), code(), blob()},
		{window_update, increment()},
		{window_update, sid(), increment()},
		{continuation, sid(), head_fin(), blob()}
	]).

build({data, S, F, D}) -> ?M:data(S, F, D);
build({headers, S, F, head_fin, B}) -> ?M:headers(S, F, B);
build({priority, S, E, D, W}) -> ?M:priority(S, E, D, W);
build({rst_stream, S, C}) -> ?M:rst_stream(S, C);
build({settings, M}) -> ?M:settings(M);
build(settings_ack) -> ?M:settings_ack();
build({push_promise, S, H, P, B}) -> ?M:push_promise(S, H, P, B);
build({ping, N}) -> ?M:ping(N);
build({ping_ack, N}) -> ?M:ping_ack(N);
build({goaway, L, C, D}) -> ?M:goaway(L, C, D);
build({window_update, I}) -> ?M:window_update(I);
build({window_update, S, I}) -> ?M:window_update(S, I);
build({continuation, S, H, B}) -> ?M:continuation(S, H, B).

%% Frames the builders do not write (padding, HEADERS with priority),
%% written by hand.
variant() ->
	oneof([
		{{data, sid(), fin(), blob()}, pad()},
		{{headers, sid(), fin(), head_fin(), blob()}, pad()},
		?LET({{S, D}, F, H, E, W, B, P}, {sid_dep(), fin(), head_fin(), excl(), weight(), blob(), pad()},
			{{headers, S, F, H, {E, D, W}, B}, P}),
		{{push_promise, sid(), head_fin(), sid(), blob()}, pad()}
	]).

encode({data, S, F, D}, Pad) ->
	padded(0, fin_bit(F), S, <<>>, D, Pad);
encode({headers, S, F, H, B}, Pad) ->
	padded(1, fin_bit(F) bor head_fin_bit(H), S, <<>>, B, Pad);
encode({headers, S, F, H, {E, Dep, W}, B}, Pad) ->
	EBit = case E of exclusive -> 1; shared -> 0 end,
	padded(1, fin_bit(F) bor head_fin_bit(H) bor 16#20, S, <<EBit:1, Dep:31, (W - 1)>>, B, Pad);
encode({push_promise, S, H, P, B}, Pad) ->
	padded(5, head_fin_bit(H), S, <<0:1, P:31>>, B, Pad).

padded(Type, Flags, S, Fixed, Body, none) ->
	raw(Type, Flags, S, <<Fixed/binary, Body/binary>>);
padded(Type, Flags, S, Fixed, Body, N) ->
	raw(Type, Flags bor 8, S, <<N, Fixed/binary, Body/binary, 0:N/unit:8>>).

fin_bit(fin) -> 1;
fin_bit(nofin) -> 0.

head_fin_bit(head_fin) -> 4;
head_fin_bit(head_nofin) -> 0.

item() ->
	oneof([
		{frame, frame_term()},
		?LET({T, P}, variant(), {variant, T, P}),
		{unknown, integer(10, 255), byte(), sid0(), short()}
	]).

item_bytes({frame, T}) -> iolist_to_binary(build(T));
item_bytes({variant, T, P}) -> encode(T, P);
item_bytes({unknown, Type, Flags, S, B}) -> raw(Type, Flags, S, B).

item_frame({frame, T}) -> T;
item_frame({variant, T, _}) -> T;
item_frame({unknown, _, _, _, _}) -> ignore.

prop_roundtrip() ->
	?FORALL(T, frame_term(), p(iolist_to_binary(build(T))) =:= {ok, T, <<>>}).

prop_variant_roundtrip() ->
	?FORALL({T, Pad}, variant(), p(encode(T, Pad)) =:= {ok, T, <<>>}).

%% Frames fed in random pieces, keeping the rest and appending the next
%% piece, come out the same as they went in.
prop_incremental() ->
	?FORALL({Items, Sizes}, {list(item()), list(integer(1, 64))},
		begin
			Bin = iolist_to_binary([item_bytes(I) || I <- Items]),
			feed(chunks(Bin, Sizes), <<>>, []) =:= [item_frame(I) || I <- Items]
		end).

feed([], <<>>, Acc) ->
	lists:reverse(Acc);
feed([], Buf, _) ->
	{leftover, Buf};
feed([Chunk | Chunks], Buf, Acc) ->
	case drain(<<Buf/binary, Chunk/binary>>, Acc) of
		{more, Buf2, Acc2} -> feed(Chunks, Buf2, Acc2);
		Error -> Error
	end.

drain(Buf, Acc) ->
	case p(Buf) of
		{ok, Frame, Rest} ->
			drain(Rest, [Frame | Acc]);
		{ignore, Rest} ->
			drain(Rest, [ignore | Acc]);
		more when byte_size(Buf) < 9 ->
			{more, Buf, Acc};
		{more, N} = More ->
			<<Len:24, _/bits>> = Buf,
			case byte_size(Buf) + N =:= 9 + Len of
				true -> {more, Buf, Acc};
				false -> {wrong_more, More, Buf}
			end;
		Other ->
			{unexpected, Other}
	end.

prop_random_bytes() ->
	?FORALL({Bin, Max}, {oneof([binary(), frame_like()]), max_size()}, all_shapes(Bin, Max)).

%% A frame header of any type, flags and stream around a short payload of
%% the right length, to reach the checks of every frame type.
frame_like() ->
	?LET({Type, Flags, S, Payload, Extra},
		{integer(0, 12), byte(), oneof([0, 1, 2, 3, u32()]), short(), short()},
		<<(byte_size(Payload)):24, Type, Flags, S:32, Payload/binary, Extra/binary>>).

prop_mutated() ->
	?FORALL({Items, Mutations, Max},
		{non_empty(list(item())), non_empty(list({non_neg_integer(), byte()})), max_size()},
		begin
			Bin = mutate(iolist_to_binary([item_bytes(I) || I <- Items]), Mutations),
			{Cut, _} = hd(Mutations),
			all_shapes(Bin, Max)
				andalso all_shapes(binary:part(Bin, 0, Cut rem byte_size(Bin)), Max)
		end).

mutate(Bin, []) ->
	Bin;
mutate(Bin, [{Pos, Byte} | Mutations]) ->
	P = Pos rem byte_size(Bin),
	<<Before:P/binary, _, After/binary>> = Bin,
	mutate(<<Before/binary, Byte, After/binary>>, Mutations).

%% Parses a buffer to its end, checking the shape of every result.
all_shapes(Bin, Max) ->
	Result = ?M:parse(Bin, Max),
	shape(Result) andalso case Result of
		{ok, _, Rest} -> byte_size(Rest) < byte_size(Bin) andalso all_shapes(Rest, Max);
		{ignore, Rest} -> byte_size(Rest) < byte_size(Bin) andalso all_shapes(Rest, Max);
		{stream_error, _, _, _, Rest} -> byte_size(Rest) < byte_size(Bin) andalso all_shapes(Rest, Max);
		_ -> true
	end.

shape({ok, Frame, Rest}) -> is_binary(Rest) andalso is_frame(Frame);
shape(more) -> true;
shape({more, N}) -> is_integer(N) andalso N > 0;
shape({ignore, Rest}) -> is_binary(Rest);
shape({stream_error, S, Code, Reason, Rest}) ->
	is_sid(S) andalso S > 0 andalso is_code(Code) andalso is_list(cites(Reason))
		andalso is_binary(Rest);
shape({connection_error, Code, Reason}) -> is_code(Code) andalso is_list(cites(Reason));
shape(_) -> false.

is_sid(S) -> is_integer(S) andalso S >= 0 andalso S =< 16#7fffffff.
is_stream(S) -> is_sid(S) andalso S > 0.
is_fin(F) -> F =:= fin orelse F =:= nofin.
is_head_fin(H) -> H =:= head_fin orelse H =:= head_nofin.
is_excl(E) -> E =:= exclusive orelse E =:= shared.
is_weight(W) -> is_integer(W) andalso W >= 1 andalso W =< 256.
is_u(N, Bits) -> is_integer(N) andalso N >= 0 andalso N < 1 bsl Bits.
is_increment(I) -> is_integer(I) andalso I >= 1 andalso I =< 16#7fffffff.
is_code(C) -> lists:keymember(C, 2, codes()) orelse (is_u(C, 32) andalso C >= 14).

is_frame({data, S, F, D}) ->
	is_stream(S) andalso is_fin(F) andalso is_binary(D);
is_frame({headers, S, F, H, B}) ->
	is_stream(S) andalso is_fin(F) andalso is_head_fin(H) andalso is_binary(B);
is_frame({headers, S, F, H, {E, Dep, W}, B}) ->
	is_stream(S) andalso is_fin(F) andalso is_head_fin(H) andalso is_excl(E)
		andalso is_sid(Dep) andalso Dep =/= S andalso is_weight(W) andalso is_binary(B);
is_frame({priority, S, E, Dep, W}) ->
	is_stream(S) andalso is_excl(E) andalso is_sid(Dep) andalso Dep =/= S andalso is_weight(W);
is_frame({rst_stream, S, C}) ->
	is_stream(S) andalso is_code(C);
is_frame({settings, M}) when is_map(M) ->
	lists:all(fun is_setting/1, maps:to_list(M));
is_frame(settings_ack) ->
	true;
is_frame({push_promise, S, H, P, B}) ->
	is_stream(S) andalso is_head_fin(H) andalso is_stream(P) andalso is_binary(B);
is_frame({ping, N}) ->
	is_u(N, 64);
is_frame({ping_ack, N}) ->
	is_u(N, 64);
is_frame({goaway, L, C, D}) ->
	is_sid(L) andalso is_code(C) andalso is_binary(D);
is_frame({window_update, I}) ->
	is_increment(I);
is_frame({window_update, S, I}) ->
	is_stream(S) andalso is_increment(I);
is_frame({continuation, S, H, B}) ->
	is_stream(S) andalso is_head_fin(H) andalso is_binary(B);
is_frame(_) ->
	false.

is_setting({header_table_size, V}) -> is_u(V, 32);
is_setting({enable_push, V}) -> is_boolean(V);
is_setting({max_concurrent_streams, V}) -> is_u(V, 32);
is_setting({initial_window_size, V}) -> is_u(V, 31);
is_setting({max_frame_size, V}) -> is_integer(V) andalso V >= 16384 andalso V =< 16777215;
is_setting({max_header_list_size, V}) -> is_u(V, 32);
is_setting({enable_connect_protocol, V}) -> is_boolean(V);
is_setting(_) -> false.

%% data_header/2 agrees with parse/2 on any DATA frame: same stream, flag
%% and data, same rest after the padding, same flow-controlled length, same
%% errors. On a partial frame its early answer is the one parse/2 gives once
%% the frame is whole.
prop_data_header() ->
	?FORALL({Bin, Max}, {data_frame_bytes(), max_size()},
		begin
			Complete = case ?M:parse(Bin, Max) of
				{more, N} -> <<Bin/binary, 0:N/unit:8>>;
				_ -> Bin
			end,
			data_header_agrees(?M:parse(Complete, Max), ?M:data_header(Bin, Max), Bin, Complete)
		end).

data_header_agrees({ok, {data, S, F, D}, Rest}, {ok, S, F, Pad, PayloadLength, Rest2}, Bin, Bin) ->
	{ok, data, _, S, Length, _} = ?M:parse_header(Bin),
	HeaderSize = byte_size(Bin) - byte_size(Rest2),
	PadLengthField = HeaderSize - 9,
	case Rest2 of
		<<D:PayloadLength/binary, _:Pad/binary, Rest/binary>> ->
			Length =:= PadLengthField + PayloadLength + Pad;
		_ ->
			false
	end;
data_header_agrees({ok, {data, S, F, _}, _}, {ok, S, F, _, _, _}, _, _) ->
	true;
data_header_agrees({ok, {data, _, _, _}, _}, more, Bin, _) ->
	byte_size(Bin) < 10;
data_header_agrees({connection_error, _, _} = Error, Error, _, _) ->
	true;
data_header_agrees({connection_error, _, _}, more, Bin, Complete) ->
	Bin =/= Complete andalso byte_size(Bin) < 10;
data_header_agrees(more, more, _, _) ->
	true;
data_header_agrees(_, _, _, _) ->
	false.

data_frame_bytes() ->
	oneof([
		?LET({{T, Pad}, Extra}, {oneof([{{data, sid(), fin(), blob()}, pad()}]), short()},
			<<(encode(T, Pad))/binary, Extra/binary>>),
		?LET({Flags, S, Payload, Extra}, {byte(), oneof([0, 1, u32()]), short(), short()},
			<<(byte_size(Payload)):24, 0, Flags, S:32, Payload/binary, Extra/binary>>),
		?LET({Bin, Cut}, {?LET({T, Pad}, {{data, sid(), fin(), blob()}, pad()}, encode(T, Pad)),
				non_neg_integer()},
			binary:part(Bin, 0, Cut rem byte_size(Bin)))
	]).

%% headers/4 writes one HEADERS frame then CONTINUATION frames, each within
%% the max frame size, END_HEADERS on the last one only.
prop_headers_split() ->
	?FORALL({S, F, Block, Max}, {sid(), fin(), blob(), integer(1, 50)},
		begin
			Frames = parse_all(iolist_to_binary(?M:headers(S, F, Block, Max)), Max),
			Count = max(1, (byte_size(Block) + Max - 1) div Max),
			Fragments = [B || {continuation, S2, _, B} <- tl(Frames), S2 =:= S],
			HeadFins = [H || {continuation, _, H, _} <- tl(Frames)],
			case hd(Frames) of
				{headers, S, F, H1, B1} ->
					length(Frames) =:= Count
						andalso length(Fragments) =:= Count - 1
						andalso iolist_to_binary([B1 | Fragments]) =:= Block
						andalso [H1 | HeadFins]
							=:= lists:duplicate(Count - 1, head_nofin) ++ [head_fin]
						andalso lists:all(fun(B) -> byte_size(B) =< Max end, [B1 | Fragments]);
				_ ->
					false
			end
		end).

%% push_promise_frames/4 likewise: the promised stream id takes 4 bytes of
%% the first frame.
prop_push_promise_split() ->
	?FORALL({S, P, Block, Max}, {sid(), sid(), blob(), integer(5, 50)},
		begin
			Frames = parse_all(iolist_to_binary(?M:push_promise_frames(S, P, Block, Max)), Max),
			Count = 1 + max(0, (byte_size(Block) - (Max - 4) + Max - 1) div Max),
			Fragments = [B || {continuation, S2, _, B} <- tl(Frames), S2 =:= S],
			HeadFins = [H || {continuation, _, H, _} <- tl(Frames)],
			case hd(Frames) of
				{push_promise, S, H1, P, B1} ->
					length(Frames) =:= Count
						andalso byte_size(B1) =< Max - 4
						andalso iolist_to_binary([B1 | Fragments]) =:= Block
						andalso [H1 | HeadFins]
							=:= lists:duplicate(Count - 1, head_nofin) ++ [head_fin]
						andalso lists:all(fun(B) -> byte_size(B) =< Max end, Fragments);
				_ ->
					false
			end
		end).

properties_test_() ->
	Props = [
		{"build then parse, every frame type", prop_roundtrip(), 2000},
		{"padded and priority variants parse", prop_variant_roundtrip(), 1000},
		{"random splits parse the same", prop_incremental(), 300},
		{"random bytes never crash", prop_random_bytes(), 3000},
		{"mutated frames never crash", prop_mutated(), 1000},
		{"data_header/2 agrees with parse/2", prop_data_header(), 2000},
		{"headers/4 splits into CONTINUATION", prop_headers_split(), 500},
		{"push_promise_frames/4 splits into CONTINUATION", prop_push_promise_split(), 500}
	],
	[{Name, {timeout, 120, ?_assert(proper:quickcheck(P, [{numtests, N}, {to_file, user}]))}}
		|| {Name, P, N} <- Props].

%% Independent check with Python's hyperframe.

%% One line per frame, the same in Erlang and in the Python script:
%% "data 1 fin 68656c6c6f", codes as integers, settings as ID=VALUE sorted
%% by ID with booleans as 0 and 1, "-" for empty bytes.
canon(ignore) ->
	"ignore";
canon(settings_ack) ->
	"settings_ack";
canon({data, S, F, D}) ->
	fmt("data ~b ~s ~s", [S, F, hex(D)]);
canon({headers, S, F, H, {E, Dep, W}, B}) ->
	fmt("headers ~b ~s ~s ~s ~b ~b ~s", [S, F, H, E, Dep, W, hex(B)]);
canon({headers, S, F, H, B}) ->
	fmt("headers ~b ~s ~s ~s", [S, F, H, hex(B)]);
canon({priority, S, E, Dep, W}) ->
	fmt("priority ~b ~s ~b ~b", [S, E, Dep, W]);
canon({rst_stream, S, C}) ->
	fmt("rst_stream ~b ~b", [S, code_int(C)]);
canon({settings, M}) ->
	lists:flatten(lists:join(" ", ["settings" | [fmt("~b=~b", [Id, V])
		|| {Id, V} <- lists:sort([setting_id(K, V) || {K, V} <- maps:to_list(M)])]]));
canon({push_promise, S, H, P, B}) ->
	fmt("push_promise ~b ~s ~b ~s", [S, H, P, hex(B)]);
canon({ping, N}) ->
	fmt("ping ~b", [N]);
canon({ping_ack, N}) ->
	fmt("ping_ack ~b", [N]);
canon({goaway, L, C, D}) ->
	fmt("goaway ~b ~b ~s", [L, code_int(C), hex(D)]);
canon({window_update, I}) ->
	fmt("window_update 0 ~b", [I]);
canon({window_update, S, I}) ->
	fmt("window_update ~b ~b", [S, I]);
canon({continuation, S, H, B}) ->
	fmt("continuation ~b ~s ~s", [S, H, hex(B)]);
canon(Other) ->
	fmt("~0p", [Other]).

canon_all(Bin) ->
	iolist_to_binary(lists:join(";", [canon(F) || F <- parse_all(Bin)])).

setting_id(Key, Value) ->
	Ids = [{header_table_size, 1}, {enable_push, 2}, {max_concurrent_streams, 3},
		{initial_window_size, 4}, {max_frame_size, 5}, {max_header_list_size, 6},
		{enable_connect_protocol, 8}],
	{Key, Id} = lists:keyfind(Key, 1, Ids),
	{Id, case Value of true -> 1; false -> 0; _ -> Value end}.

fmt(Format, Args) ->
	lists:flatten(io_lib:format(Format, Args)).

hex(<<>>) -> "-";
hex(Bin) -> string:lowercase(binary_to_list(binary:encode_hex(Bin))).

python_test_() ->
	case python() of
		false ->
			io:format(user, "~nNote: no Python with h2 found (set MUSTANG_PYTHON or create "
				"_tools/venv with h2); the hyperframe cross-checks are skipped.~n", []),
			[];
		Python ->
			{setup,
				fun() -> write_tmp("py", python_script()) end,
				fun(Script) -> file:delete(Script) end,
				fun(Script) -> {timeout, 60, [
					{"frames written by hyperframe", from_python_tests(Python, Script)},
					{"frames read by hyperframe", to_python_tests(Python, Script)}
				]} end}
	end.

%% What our codec reads from frames hyperframe and h2 wrote.
from_python_tests(Python, Script) ->
	Seed = erlang:unique_integer([positive]) rem 1000000,
	{0, Out} = run(Python, [Script, "gen", integer_to_list(Seed), "300"]),
	Lines = [binary:split(L, <<"|">>, [global])
		|| L <- binary:split(Out, <<"\n">>, [global, trim_all])],
	Names = [binary_to_list(N) || [N, _, _] <- Lines],
	[{"every fixed case present", ?_assertEqual([],
		[N || {N, _} <- from_python_expected(), not lists:member(N, Names)])}
	| [from_python_test(Seed, Line) || Line <- Lines]].

from_python_test(_, [<<"h2_session">>, Canon, Hex]) ->
	{"an h2 client session", ?_test(begin
		<<Preface:24/binary, Frames/binary>> = binary:decode_hex(Hex),
		?assertEqual(ok, ?M:parse_preface(Preface)),
		?assertEqual(Canon, canon_all(Frames))
	end)};
from_python_test(Seed, [<<"rand", N/binary>>, Canon, Hex]) ->
	{fmt("random frame ~s (seed ~b)", [N, Seed]),
		?_assertEqual(Canon, canon_all(binary:decode_hex(Hex)))};
from_python_test(_, [Name, Canon, Hex]) ->
	{Expected, Canon2} = case lists:keyfind(binary_to_list(Name), 1, from_python_expected()) of
		{_, ignore} -> {{ignore, <<>>}, <<"ignore">>};
		{_, Frame} -> {{ok, Frame, <<>>}, list_to_binary(canon(Frame))}
	end,
	{binary_to_list(Name), ?_test(begin
		?assertEqual(Expected, p(binary:decode_hex(Hex))),
		?assertEqual(Canon2, Canon)
	end)}.

%% The frames the fixed part of the Python script writes.
from_python_expected() ->
	[
		{"data", {data, 1, fin, <<"hello">>}},
		{"data_empty", {data, 3, nofin, <<>>}},
		{"data_padded", {data, 5, nofin, <<"abc">>}},
		{"data_padded_empty", {data, 5, fin, <<>>}},
		{"headers", {headers, 1, nofin, head_fin, <<130, 132>>}},
		{"headers_priority", {headers, 3, fin, head_fin, {exclusive, 1, 256}, <<130, 135>>}},
		{"headers_padded_priority", {headers, 7, nofin, head_nofin, {shared, 5, 1}, <<"blk">>}},
		{"priority", {priority, 9, exclusive, 7, 16}},
		{"rst_stream", {rst_stream, 1, cancel}},
		{"rst_stream_unknown", {rst_stream, 1, 255}},
		{"settings", {settings, #{header_table_size => 4096, enable_push => false,
			max_concurrent_streams => 100, initial_window_size => 65535,
			max_frame_size => 16384, max_header_list_size => 8192,
			enable_connect_protocol => true}}},
		{"settings_unknown", {settings, #{max_concurrent_streams => 10}}},
		{"settings_ack", settings_ack},
		{"push_promise", {push_promise, 1, head_fin, 2, <<"pp">>}},
		{"push_promise_padded", {push_promise, 1, head_nofin, 4, <<"pp">>}},
		{"ping", {ping, binary:decode_unsigned(<<"12345678">>)}},
		{"ping_ack", {ping_ack, 0}},
		{"goaway", {goaway, 5, protocol_error, <<"bye">>}},
		{"window_update_conn", {window_update, 16#7fffffff}},
		{"window_update_stream", {window_update, 3, 1}},
		{"continuation", {continuation, 1, head_fin, <<"cont">>}},
		{"extension", ignore}
	].

%% What hyperframe reads from frames our builders wrote: one line of hex
%% per case in, one line of frames out.
to_python_tests(Python, Script) ->
	Block = list_to_binary([I rem 256 || I <- lists:seq(1, 40000)]),
	<<B1:16384/binary, B2:16384/binary, B3/binary>> = Block,
	Split = {"headers/4 split in 3 frames",
		[{headers, 1, fin, head_nofin, B1}, {continuation, 1, head_nofin, B2},
			{continuation, 1, head_fin, B3}],
		?M:headers(1, fin, Block, 16384)},
	DataHeader = {"data_header/3", [{data, 1, fin, <<"hello">>}],
		[?M:data_header(1, fin, 5), <<"hello">>]},
	{ok, Random} = proper_gen:pick(vector(300, frame_term()), 30),
	Terms = to_python_fixed() ++ [even_promise(T) || T <- Random],
	Cases = [Split, DataHeader | [{fmt("builder ~b: ~s", [I, string:slice(canon(T), 0, 60)]), [T],
		build(T)} || {I, T} <- lists:zip(lists:seq(1, length(Terms)), Terms)]],
	Input = write_tmp("hex", [[hex(iolist_to_binary(Bin)), "\n"] || {_, _, Bin} <- Cases]),
	Result = run(Python, [Script, "parse", Input]),
	ok = file:delete(Input),
	{0, Out} = Result,
	Lines = binary:split(Out, <<"\n">>, [global, trim_all]),
	[{"one line per case", ?_assertEqual(length(Cases), length(Lines))}
	| [{Name, ?_assertEqual(iolist_to_binary(lists:join(";", [canon(F) || F <- Frames])), Line)}
		|| {{Name, Frames, _}, Line} <- lists:zip(lists:sublist(Cases, length(Lines)),
			lists:sublist(Lines, length(Cases)))]].

%% hyperframe refuses odd promised stream ids (a rule of RFC 9113 5.1.1 that
%% belongs to the machine, not to the frame codec).
even_promise({push_promise, S, H, P, B}) -> {push_promise, S, H, max(2, P band (bnot 1)), B};
even_promise(T) -> T.

to_python_fixed() ->
	[
		{data, 1, fin, <<"hello">>},
		{data, 3, nofin, <<>>},
		{headers, 1, nofin, head_fin, <<130, 132>>},
		{priority, 3, exclusive, 1, 256},
		{priority, 5, shared, 0, 1},
		{rst_stream, 1, cancel},
		{rst_stream, 1, 255},
		{settings, #{header_table_size => 4096, enable_push => false,
			max_concurrent_streams => 100, initial_window_size => 65535,
			max_frame_size => 16777215, max_header_list_size => 8192,
			enable_connect_protocol => true}},
		{settings, #{}},
		settings_ack,
		{push_promise, 1, head_fin, 2, <<"pp">>},
		{ping, 1},
		{ping_ack, 16#ffffffffffffffff},
		{goaway, 7, no_error, <<"bye">>},
		{goaway, 0, http_1_1_required, <<>>},
		{window_update, 1000},
		{window_update, 5, 16#7fffffff},
		{continuation, 1, head_fin, <<"c">>},
		{continuation, 3, head_nofin, <<>>}
	].

%% $MUSTANG_PYTHON, else the venv of the repository this file is in, else
%% the venv under the current directory; it must import h2.
python() ->
	Source = proplists:get_value(source, ?MODULE:module_info(compile)),
	Root = filename:dirname(filename:dirname(Source)),
	Candidates = case os:getenv("MUSTANG_PYTHON") of
		Env when is_list(Env), Env =/= "" -> [Env];
		_ -> [filename:join(Root, "_tools/venv/bin/python"), "_tools/venv/bin/python"]
	end,
	find_python(Candidates).

find_python([]) ->
	false;
find_python([Candidate | Candidates]) ->
	Exe = case filelib:is_regular(Candidate) of
		true -> filename:absname(Candidate);
		false -> os:find_executable(Candidate)
	end,
	case is_list(Exe) andalso run(Exe, ["-c", "import h2, hyperframe"]) of
		{0, _} -> Exe;
		_ -> find_python(Candidates)
	end.

%% Runs a program without a shell; returns {ExitStatus, Stdout}. Stderr is
%% left on the terminal.
run(Exe, Args) ->
	Port = open_port({spawn_executable, Exe}, [{args, Args}, binary, exit_status, use_stdio, hide]),
	collect_output(Port, []).

collect_output(Port, Acc) ->
	receive
		{Port, {data, Data}} -> collect_output(Port, [Data | Acc]);
		{Port, {exit_status, Status}} -> {Status, iolist_to_binary(lists:reverse(Acc))}
	after 60000 ->
		catch port_close(Port),
		{timeout, iolist_to_binary(lists:reverse(Acc))}
	end.

write_tmp(Ext, Data) ->
	Dir = case os:getenv("TMPDIR") of
		D when is_list(D), D =/= "" -> D;
		_ -> "/tmp"
	end,
	File = filename:join(Dir, fmt("mustang_http2_frame_tests_~s_~b.~s",
		[os:getpid(), erlang:unique_integer([positive]), Ext])),
	ok = file:write_file(File, Data),
	File.

%% The Python side: "gen SEED N" prints name|frames|hex lines for fixed frames,
%% N random frames and an h2 client session; "parse FILE" prints the frames
%% of each hex line of FILE. Frames are printed as canon/1 prints them.
python_script() ->
	[
		"import sys, random\n",
		"from hyperframe.frame import (Frame, DataFrame, HeadersFrame, PriorityFrame, RstStreamFrame,\n",
		"    SettingsFrame, PushPromiseFrame, PingFrame, GoAwayFrame, WindowUpdateFrame,\n",
		"    ContinuationFrame, ExtensionFrame)\n",
		"import h2.connection, h2.config\n",
		"\n",
		"KNOWN_SETTINGS = (1, 2, 3, 4, 5, 6, 8)\n",
		"\n",
		"def hx(b):\n",
		"    return bytes(b).hex() if len(b) else '-'\n",
		"\n",
		"def fin(f):\n",
		"    return 'fin' if 'END_STREAM' in f.flags else 'nofin'\n",
		"\n",
		"def hfin(f):\n",
		"    return 'head_fin' if 'END_HEADERS' in f.flags else 'head_nofin'\n",
		"\n",
		"def excl(e):\n",
		"    return 'exclusive' if e else 'shared'\n",
		"\n",
		"def canon(f):\n",
		"    if isinstance(f, DataFrame):\n",
		"        return 'data %d %s %s' % (f.stream_id, fin(f), hx(f.data))\n",
		"    if isinstance(f, HeadersFrame):\n",
		"        if 'PRIORITY' in f.flags:\n",
		"            return 'headers %d %s %s %s %d %d %s' % (f.stream_id, fin(f), hfin(f),\n",
		"                excl(f.exclusive), f.depends_on, f.stream_weight + 1, hx(f.data))\n",
		"        return 'headers %d %s %s %s' % (f.stream_id, fin(f), hfin(f), hx(f.data))\n",
		"    if isinstance(f, PriorityFrame):\n",
		"        return 'priority %d %s %d %d' % (f.stream_id, excl(f.exclusive), f.depends_on,\n",
		"            f.stream_weight + 1)\n",
		"    if isinstance(f, RstStreamFrame):\n",
		"        return 'rst_stream %d %d' % (f.stream_id, f.error_code)\n",
		"    if isinstance(f, SettingsFrame):\n",
		"        if 'ACK' in f.flags:\n",
		"            return 'settings_ack'\n",
		"        return ' '.join(['settings'] + ['%d=%d' % kv for kv in sorted(f.settings.items())\n",
		"            if kv[0] in KNOWN_SETTINGS])\n",
		"    if isinstance(f, PushPromiseFrame):\n",
		"        return 'push_promise %d %s %d %s' % (f.stream_id, hfin(f), f.promised_stream_id,\n",
		"            hx(f.data))\n",
		"    if isinstance(f, PingFrame):\n",
		"        n = int.from_bytes(f.opaque_data, 'big')\n",
		"        return ('ping_ack %d' if 'ACK' in f.flags else 'ping %d') % n\n",
		"    if isinstance(f, GoAwayFrame):\n",
		"        return 'goaway %d %d %s' % (f.last_stream_id, f.error_code, hx(f.additional_data))\n",
		"    if isinstance(f, WindowUpdateFrame):\n",
		"        return 'window_update %d %d' % (f.stream_id, f.window_increment)\n",
		"    if isinstance(f, ContinuationFrame):\n",
		"        return 'continuation %d %s %s' % (f.stream_id, hfin(f), hx(f.data))\n",
		"    return 'ignore'\n",
		"\n",
		"def parse_all(data):\n",
		"    out = []\n",
		"    mv = memoryview(data)\n",
		"    while len(mv):\n",
		"        f, length = Frame.parse_frame_header(mv[:9])\n",
		"        f.parse_body(mv[9:9 + length])\n",
		"        out.append(canon(f))\n",
		"        mv = mv[9 + length:]\n",
		"    return ';'.join(out)\n",
		"\n",
		"def extension(t, sid, flags, body):\n",
		"    f = ExtensionFrame(type=t, stream_id=sid, flag_byte=flags, body=body)\n",
		"    f.body_len = len(body)\n",
		"    return f\n",
		"\n",
		"def fixed():\n",
		"    return [\n",
		"        ('data', DataFrame(1, b'hello', flags=['END_STREAM'])),\n",
		"        ('data_empty', DataFrame(3, b'')),\n",
		"        ('data_padded', DataFrame(5, b'abc', flags=['PADDED'], pad_length=7)),\n",
		"        ('data_padded_empty', DataFrame(5, b'', flags=['PADDED', 'END_STREAM'], pad_length=0)),\n",
		"        ('headers', HeadersFrame(1, bytes([130, 132]), flags=['END_HEADERS'])),\n",
		"        ('headers_priority', HeadersFrame(3, bytes([130, 135]),\n",
		"            flags=['END_STREAM', 'END_HEADERS', 'PRIORITY'], depends_on=1, stream_weight=255,\n",
		"            exclusive=True)),\n",
		"        ('headers_padded_priority', HeadersFrame(7, b'blk', flags=['PADDED', 'PRIORITY'],\n",
		"            pad_length=3, depends_on=5, stream_weight=0, exclusive=False)),\n",
		"        ('priority', PriorityFrame(9, depends_on=7, stream_weight=15, exclusive=True)),\n",
		"        ('rst_stream', RstStreamFrame(1, error_code=8)),\n",
		"        ('rst_stream_unknown', RstStreamFrame(1, error_code=255)),\n",
		"        ('settings', SettingsFrame(0, settings={1: 4096, 2: 0, 3: 100, 4: 65535, 5: 16384,\n",
		"            6: 8192, 8: 1})),\n",
		"        ('settings_unknown', SettingsFrame(0, settings={9: 1, 3: 10})),\n",
		"        ('settings_ack', SettingsFrame(0, flags=['ACK'])),\n",
		"        ('push_promise', PushPromiseFrame(1, promised_stream_id=2, data=b'pp',\n",
		"            flags=['END_HEADERS'])),\n",
		"        ('push_promise_padded', PushPromiseFrame(1, promised_stream_id=4, data=b'pp',\n",
		"            flags=['PADDED'], pad_length=2)),\n",
		"        ('ping', PingFrame(0, opaque_data=b'12345678')),\n",
		"        ('ping_ack', PingFrame(0, opaque_data=bytes(8), flags=['ACK'])),\n",
		"        ('goaway', GoAwayFrame(0, last_stream_id=5, error_code=1, additional_data=b'bye')),\n",
		"        ('window_update_conn', WindowUpdateFrame(0, window_increment=2 ** 31 - 1)),\n",
		"        ('window_update_stream', WindowUpdateFrame(3, window_increment=1)),\n",
		"        ('continuation', ContinuationFrame(1, data=b'cont', flags=['END_HEADERS'])),\n",
		"        ('extension', extension(250, 1, 255, b'x')),\n",
		"    ]\n",
		"\n",
		"def blob(r):\n",
		"    return bytes(r.randrange(256) for _ in range(r.randrange(0, 40)))\n",
		"\n",
		"def padding(r, flags):\n",
		"    if r.random() < 0.5:\n",
		"        return {'flags': flags + ['PADDED'], 'pad_length': r.randrange(256)}\n",
		"    return {'flags': flags}\n",
		"\n",
		"def maybe(r, flag):\n",
		"    return [flag] if r.random() < 0.5 else []\n",
		"\n",
		"def rand_settings(r):\n",
		"    values = {1: lambda: r.randrange(2 ** 32), 2: lambda: r.randrange(2),\n",
		"        3: lambda: r.randrange(2 ** 32), 4: lambda: r.randrange(2 ** 31),\n",
		"        5: lambda: r.randrange(16384, 16777216), 6: lambda: r.randrange(2 ** 32),\n",
		"        8: lambda: r.randrange(2)}\n",
		"    return {i: values[i]() for i in r.sample(KNOWN_SETTINGS, r.randrange(0, 8))}\n",
		"\n",
		"def rand_frame(r):\n",
		"    t = r.randrange(11)\n",
		"    sid = r.randrange(1, 2 ** 31)\n",
		"    dep = r.randrange(0, 2 ** 31)\n",
		"    if dep == sid:\n",
		"        dep = 0\n",
		"    if t == 0:\n",
		"        return DataFrame(sid, blob(r), **padding(r, maybe(r, 'END_STREAM')))\n",
		"    if t == 1:\n",
		"        flags = maybe(r, 'END_STREAM') + maybe(r, 'END_HEADERS') + maybe(r, 'PRIORITY')\n",
		"        return HeadersFrame(sid, blob(r), depends_on=dep, stream_weight=r.randrange(256),\n",
		"            exclusive=r.random() < 0.5, **padding(r, flags))\n",
		"    if t == 2:\n",
		"        return PriorityFrame(sid, depends_on=dep, stream_weight=r.randrange(256),\n",
		"            exclusive=r.random() < 0.5)\n",
		"    if t == 3:\n",
		"        return RstStreamFrame(sid, error_code=r.choice([r.randrange(14), r.randrange(2 ** 32)]))\n",
		"    if t == 4:\n",
		"        if r.random() < 0.2:\n",
		"            return SettingsFrame(0, flags=['ACK'])\n",
		"        return SettingsFrame(0, settings=rand_settings(r))\n",
		"    if t == 5:\n",
		"        return PushPromiseFrame(sid, promised_stream_id=r.randrange(1, 2 ** 31), data=blob(r),\n",
		"            **padding(r, maybe(r, 'END_HEADERS')))\n",
		"    if t == 6:\n",
		"        return PingFrame(0, opaque_data=bytes(r.randrange(256) for _ in range(8)),\n",
		"            flags=maybe(r, 'ACK'))\n",
		"    if t == 7:\n",
		"        return GoAwayFrame(0, last_stream_id=r.randrange(2 ** 31),\n",
		"            error_code=r.choice([r.randrange(14), r.randrange(2 ** 32)]),\n",
		"            additional_data=blob(r))\n",
		"    if t == 8:\n",
		"        return WindowUpdateFrame(r.choice([0, sid]), window_increment=r.randrange(1, 2 ** 31))\n",
		"    if t == 9:\n",
		"        return ContinuationFrame(sid, data=blob(r), flags=maybe(r, 'END_HEADERS'))\n",
		"    return extension(r.randrange(10, 256), r.randrange(2 ** 31), r.randrange(256), blob(r))\n",
		"\n",
		"def h2_session():\n",
		"    c = h2.connection.H2Connection(config=h2.config.H2Configuration(client_side=True))\n",
		"    c.initiate_connection()\n",
		"    req = [(':method', 'GET'), (':path', '/'), (':scheme', 'https'),\n",
		"        (':authority', 'example.com')]\n",
		"    c.send_headers(1, req, end_stream=True)\n",
		"    c.send_headers(3, [(':method', 'POST')] + req[1:], end_stream=False,\n",
		"        priority_weight=32, priority_depends_on=1, priority_exclusive=True)\n",
		"    c.send_data(3, b'body', end_stream=False)\n",
		"    c.increment_flow_control_window(77, stream_id=3)\n",
		"    c.send_data(3, b'', end_stream=True)\n",
		"    c.ping(b'pingping')\n",
		"    c.increment_flow_control_window(1000)\n",
		"    c.update_settings({h2.settings.SettingCodes.MAX_CONCURRENT_STREAMS: 10})\n",
		"    c.close_connection(error_code=0, additional_data=b'done')\n",
		"    return c.data_to_send()\n",
		"\n",
		"def main():\n",
		"    if sys.argv[1] == 'gen':\n",
		"        for name, f in fixed():\n",
		"            print('%s|%s|%s' % (name, canon(f), f.serialize().hex()))\n",
		"        r = random.Random(int(sys.argv[2]))\n",
		"        for i in range(int(sys.argv[3])):\n",
		"            f = rand_frame(r)\n",
		"            print('rand%d|%s|%s' % (i, canon(f), f.serialize().hex()))\n",
		"        data = h2_session()\n",
		"        print('h2_session|%s|%s' % (parse_all(data[24:]), data.hex()))\n",
		"    elif sys.argv[1] == 'parse':\n",
		"        with open(sys.argv[2]) as lines:\n",
		"            for line in lines:\n",
		"                print(parse_all(bytes.fromhex(line.strip())))\n",
		"\n",
		"main()\n"
	].
