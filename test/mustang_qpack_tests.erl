%% Tests for QPACK (RFC 9204): mustang_qpack, mustang_qpack_encoder,
%% mustang_qpack_wire, mustang_qpack_static. As in STYLE.md 5:
%% - the examples of RFC 9204 Appendix B, byte for byte, in both directions;
%% - a table of every error path, each limit at and one past its boundary,
%%   and a check that the cases reach every reason the modules hold;
%% - PropEr: our encoder into our decoder over random header lists, table
%%   sizes, blocked-stream limits, splits of the encoder stream and
%%   delivery orders.
%% The checks against ls-qpack and the offline-interop files are in
%% mustang_qpack_interop_tests.
-module(mustang_qpack_tests).

-include_lib("proper/include/proper.hrl").
-include_lib("eunit/include/eunit.hrl").

%% For the HTTP/3 tests' check of their reasons.
-export([reasons/1]).
-export([cited/1]).

-define(Q, mustang_qpack).
-define(W, mustang_qpack_wire).

h(Hex) -> binary:decode_hex(list_to_binary(Hex)).

dec(Cap) -> dec(Cap, 100).
dec(Cap, Blocked) ->
	?Q:init_decoder(#{max_table_capacity => Cap, blocked_streams => Blocked}).

feed(Bin, D) ->
	{ok, Unblocked, Bytes, D2} = ?Q:decoder_feed(Bin, D),
	{Unblocked, iolist_to_binary(Bytes), D2}.

decode(StreamID, Bin, D) ->
	case ?Q:decode_field_section(StreamID, Bin, D) of
		{ok, Fields, Bytes, D2} -> {Fields, iolist_to_binary(Bytes), D2};
		Other -> Other
	end.

cites(Reason) -> mustang_http3_frame_tests:cites(Reason).
err(Result) -> mustang_http3_frame_tests:err(Result).

%% RFC 9204 Appendix B: the decoder side. Each step's decoder stream output
%% is checked byte for byte where the example shows it.
appendix_b_decoder_test() ->
	%% B.1: a literal with a static name reference, no dynamic table.
	D0 = dec(220),
	{[{<<":path">>, <<"/index.html">>}], <<>>, D0} = decode(0, h("0000510b2f696e6465782e68746d6c"), D0),
	%% B.2: capacity 220, two insertions with static name references, a
	%% section with post-Base references, acknowledged (0x84).
	{[], <<>>, D1} = feed(h("3fbd01c00f7777772e6578616d706c652e636f6dc10c2f73616d706c652f70617468"), D0),
	{[{<<":authority">>, <<"www.example.com">>}, {<<":path">>, <<"/sample/path">>}], <<16#84>>, D2}
		= decode(4, h("03811011"), D1),
	%% The section acknowledgment covered both insertions: no increment.
	{<<>>, D2} = inc(D2),
	%% B.3: an insertion with a literal name; Insert Count Increment 1.
	{[], <<>>, D3} = feed(h("4a637573746f6d2d6b65790c637573746f6d2d76616c7565"), D2),
	{<<16#01>>, D4} = inc(D3),
	%% B.4: a duplicate of entry 0; a section with relative references; the
	%% stream is then cancelled (0x48).
	{[], <<>>, D5} = feed(h("02"), D4),
	{[{<<":authority">>, <<"www.example.com">>}, {<<":path">>, <<"/">>},
		{<<"custom-key">>, <<"custom-value">>}], <<16#88>>, D6} = decode(8, h("050080c181"), D5),
	{Cancel, D7} = ?Q:cancel_stream(8, D6),
	<<16#48>> = iolist_to_binary(Cancel),
	%% B.5: an insertion with a dynamic name reference that evicts entry 0:
	%% a reference to it is now an error, to entry 1 is not.
	{[], <<>>, D8} = feed(h("810d637573746f6d2d76616c756532"), D7),
	{<<16#01>>, D9} = inc(D8),
	{qpack_decompression_failed, "RFC9204 2.2.3"} = err(?Q:decode_field_section(12, <<6, 0, 16#84>>, D9)),
	{[{<<":path">>, <<"/sample/path">>}, {<<"custom-key">>, <<"custom-value2">>}], <<16#8c>>, _}
		= decode(12, <<6, 0, 16#83, 16#80>>, D9),
	ok.

inc(D) ->
	{Bytes, D2} = ?Q:decoder_increment(D),
	{iolist_to_binary(Bytes), D2}.

%% RFC 9204 Appendix B, the wire builders: the same bytes.
appendix_b_wire_test_() ->
	[
		?_assertEqual(h("3fbd01"), ?W:set_capacity(220)),
		?_assertEqual(h("c00f7777772e6578616d706c652e636f6d"),
			iolist_to_binary(?W:insert_name_ref(static, 0, <<"www.example.com">>, false))),
		?_assertEqual(h("4a637573746f6d2d6b65790c637573746f6d2d76616c7565"),
			iolist_to_binary(?W:insert_literal(<<"custom-key">>, <<"custom-value">>, false))),
		?_assertEqual(h("02"), ?W:duplicate(2)),
		?_assertEqual(h("810d637573746f6d2d76616c756532"),
			iolist_to_binary(?W:insert_name_ref(dynamic, 1, <<"custom-value2">>, false))),
		?_assertEqual(<<16#84>>, ?W:section_ack(4)),
		?_assertEqual(<<16#48>>, ?W:stream_cancellation(8)),
		?_assertEqual(<<16#01>>, ?W:insert_count_increment(1)),
		%% Integers past their prefix (RFC 7541 C.1.2, the same encoding).
		?_assertEqual(<<31, 154, 10>>, ?W:int_bin(1337, 5, 0)),
		?_assertEqual(<<10>>, ?W:int_bin(10, 5, 0)),
		?_assertEqual(<<42>>, ?W:int_bin(42, 8, 0)),
		?_assertEqual({ok, 16#3fffffffffffffff, <<>>}, ?W:int8(?W:int_bin(16#3fffffffffffffff, 8, 0))),
		?_assertEqual(too_large, ?W:int8(?W:int_bin(16#4000000000000000, 8, 0))),
		?_assertEqual(more, ?W:int8(<<255, 128>>))
	].

%% The encoder side of Appendix B: after B.2's settings, our encoder sets
%% the same capacity; the peer's decoder stream instructions of B.2-B.4 are
%% accepted in order.
appendix_b_encoder_test() ->
	E0 = ?Q:init_encoder(#{max_table_capacity => 4096}),
	{Set, E1} = ?Q:encoder_settings(#{qpack_max_table_capacity => 220, qpack_blocked_streams => 100}, E0),
	<<16#3f, 16#bd, 16#01>> = iolist_to_binary(Set),
	%% A section with a dynamic reference on stream 4, then its ack (0x84).
	Fields = [{<<"custom-key">>, <<"custom-value">>}],
	{_, [], E2} = ?Q:encode_field_section(0, Fields, E1),
	{Block, Ins, E3} = ?Q:encode_field_section(4, Fields, E2),
	{[], _, D} = feed(iolist_to_binary([?W:set_capacity(220), Ins]), dec(220)),
	{Fields, <<16#84>>, _} = decode(4, iolist_to_binary(Block), D),
	{ok, E4} = ?Q:encoder_feed(<<16#84>>, E3),
	%% Nothing more to acknowledge.
	{qpack_decoder_stream_error, "RFC9204 4.4.1"} = err(?Q:encoder_feed(<<16#84>>, E4)),
	ok.

%% Limits and errors. Each case: the input, and {Code, Section} or ok.

%% A decoder with entries 0 and 1 (Appendix B.2) at capacity 220.
b2() ->
	{[], <<>>, D} = feed(h("3fbd01c00f7777772e6578616d706c652e636f6dc10c2f73616d706c652f70617468"),
		dec(220)),
	D.

section_errors_test_() ->
	Sect = fun(Bin) -> err(?Q:decode_field_section(4, Bin, b2())) end,
	Ok = fun(Bin) -> element(1, ?Q:decode_field_section(4, Bin, b2())) end,
	DF = qpack_decompression_failed,
	[
		%% Static indexes (RFC 9204 3.1): 98 is the last.
		?_assertEqual(ok, Ok(<<0, 0, 16#ff, 35>>)),
		?_assertEqual({DF, "RFC9204 3.1"}, Sect(<<0, 0, 16#ff, 36>>)),
		?_assertEqual(ok, Ok(<<0, 0, 16#5f, 83, 0>>)),
		?_assertEqual({DF, "RFC9204 3.1"}, Sect(<<0, 0, 16#5f, 84, 0>>)),
		%% Dynamic references (RFC 9204 2.2.3): none without a Required
		%% Insert Count; relative ones not below 0, post-Base ones below the
		%% Required Insert Count.
		?_assertEqual({DF, "RFC9204 2.2.3"}, Sect(<<0, 0, 16#80>>)),
		?_assertEqual({DF, "RFC9204 2.2.3"}, Sect(<<0, 0, 16#10>>)),
		?_assertEqual({DF, "RFC9204 2.2.3"}, Sect(<<0, 0, 16#40, 0>>)),
		?_assertEqual({DF, "RFC9204 2.2.3"}, Sect(<<0, 0, 16#00, 0>>)),
		?_assertEqual(ok, Ok(<<3, 0, 16#81>>)),
		?_assertEqual({DF, "RFC9204 2.2.3"}, Sect(<<3, 0, 16#82>>)),
		?_assertEqual(ok, Ok(<<3, 16#81, 16#11>>)),
		?_assertEqual({DF, "RFC9204 2.2.3"}, Sect(<<3, 16#81, 16#12>>)),
		?_assertEqual(ok, Ok(<<3, 16#81, 16#01, 0>>)),
		?_assertEqual({DF, "RFC9204 2.2.3"}, Sect(<<3, 16#81, 16#02, 0>>)),
		%% A reference at the Required Insert Count (1) though the entry exists.
		?_assertEqual({DF, "RFC9204 2.2.3"}, Sect(<<2, 0, 16#10, 16#11>>)),
		%% The Encoded Required Insert Count (RFC 9204 4.5.1.1), with 2
		%% inserts and MaxEntries 6 (FullRange 12): 9 decodes to 8 (blocked),
		%% 10 to 9, past MaxValue 8 and within FullRange: an error; above
		%% FullRange, an error.
		?_assertMatch({blocked, _}, ?Q:decode_field_section(4, <<9, 0>>, b2())),
		?_assertEqual({DF, "RFC9204 4.5.1.1"}, Sect(<<10, 0>>)),
		?_assertEqual({DF, "RFC9204 4.5.1.1"}, Sect(<<12, 0>>)),
		?_assertEqual({DF, "RFC9204 4.5.1.1"}, Sect(<<13, 0>>)),
		%% No dynamic table: any Required Insert Count is an error.
		?_assertEqual({DF, "RFC9204 4.5.1.1"}, err(?Q:decode_field_section(0, <<1, 0>>, dec(0)))),
		%% Nothing inserted: an encoded 1 would be Required Insert Count 0.
		?_assertEqual({DF, "RFC9204 4.5.1.1"}, err(?Q:decode_field_section(0, <<1, 0>>, dec(220)))),
		?_assertMatch({blocked, _}, ?Q:decode_field_section(0, <<2, 0>>, dec(220))),
		%% The Base (RFC 9204 4.5.1.2): Delta Base 1 with sign gives 0; 2, -1.
		?_assertEqual(ok, Ok(<<3, 16#81>>)),
		?_assertEqual({DF, "RFC9204 4.5.1.2"}, Sect(<<3, 16#82>>)),
		%% Truncations (RFC 9204 4.5).
		?_assertEqual({DF, "RFC9204 4.5"}, Sect(<<>>)),
		?_assertEqual({DF, "RFC9204 4.5"}, Sect(<<0>>)),
		?_assertEqual({DF, "RFC9204 4.5"}, Sect(<<16#ff>>)),
		?_assertEqual({DF, "RFC9204 4.5"}, Sect(<<0, 16#7f>>)),
		?_assertEqual({DF, "RFC9204 4.5"}, Sect(<<0, 0, 16#51>>)),
		?_assertEqual({DF, "RFC9204 4.5"}, Sect(<<0, 0, 16#51, 5, "ab">>)),
		?_assertEqual({DF, "RFC9204 4.5"}, Sect(<<0, 0, 16#27, 16#ff>>)),
		?_assertEqual({DF, "RFC9204 4.5"}, Sect(<<0, 0, 16#23, "ab">>)),
		?_assertEqual({DF, "RFC9204 4.5"}, Sect(<<0, 0, 16#23, "abc">>)),
		?_assertEqual({DF, "RFC9204 4.5"}, Sect(<<0, 0, 16#ff, 16#80>>)),
		%% Integers (RFC 9204 4.1.1): 2^62-1 is read (here a static index
		%% out of range), 2^62 is not.
		?_assertEqual({DF, "RFC9204 3.1"},
			Sect(<<0, 0, (?W:int_bin(16#3fffffffffffffff, 6, 2#11))/binary>>)),
		?_assertEqual({DF, "RFC9204 4.1.1"},
			Sect(<<0, 0, (?W:int_bin(16#4000000000000000, 6, 2#11))/binary>>)),
		?_assertEqual({DF, "RFC9204 4.1.1"},
			Sect(<<(?W:int_bin(16#4000000000000000, 8, 0))/binary, 0>>)),
		?_assertEqual({DF, "RFC9204 4.1.1"}, Sect(<<0, 0, 16#ff, (binary:copy(<<16#ff>>, 10))/binary>>)),
		%% Huffman strings (RFC 9204 4.1.2): "a" is 00011 + 111 padding; zero
		%% padding or EOS are errors.
		?_assertEqual(ok, Ok(<<0, 0, 16#29, 16#1f, 0>>)),
		?_assertEqual({DF, "RFC9204 4.1.2"}, Sect(<<0, 0, 16#29, 16#18, 0>>)),
		?_assertEqual({DF, "RFC9204 4.1.2"}, Sect(<<0, 0, 16#2c, 16#ff, 16#ff, 16#ff, 16#ff, 0>>)),
		?_assertEqual({DF, "RFC9204 4.1.2"}, Sect(<<0, 0, 16#51, 16#81, 16#18>>))
	].

%% SETTINGS_QPACK_BLOCKED_STREAMS (RFC 9204 2.1.2): at the limit, then one
%% past.
blocked_limit_test_() ->
	Block = <<2, 0, 16#80>>,
	{blocked, D1} = ?Q:decode_field_section(0, Block, dec(220, 2)),
	{blocked, D2} = ?Q:decode_field_section(4, Block, D1),
	[
		?_assertEqual(2, ?Q:blocked_streams(D2)),
		?_assertEqual({qpack_decompression_failed, "RFC9204 2.1.2"},
			err(?Q:decode_field_section(8, Block, D2))),
		?_assertEqual({qpack_decompression_failed, "RFC9204 2.1.2"},
			err(?Q:decode_field_section(0, Block, dec(220, 0)))),
		%% A cancelled stream frees its place.
		?_assertMatch({blocked, _},
			?Q:decode_field_section(8, Block, element(2, ?Q:cancel_stream(4, D2))))
	].

%% Held sections are decoded once their entries arrive, in the order they
%% came, and each is then acknowledged.
unblock_test() ->
	Authority = {<<":authority">>, <<"www.example.com">>},
	{blocked, D1} = ?Q:decode_field_section(8, <<3, 0, 16#81, 16#80>>, dec(220)),
	{blocked, D2} = ?Q:decode_field_section(4, <<2, 0, 16#80>>, D1),
	{[{4, {ok, [Authority]}}], <<16#84>>, D3} =
		feed(h("3fbd01c00f7777772e6578616d706c652e636f6d"), D2),
	%% The second insertion split: nothing until it is whole.
	{[], <<>>, D4} = feed(h("c10c2f73616d706c652f7061"), D3),
	1 = ?Q:blocked_streams(D4),
	{[{8, {ok, [Authority, {<<":path">>, <<"/sample/path">>}]}}], <<16#88>>, D5} = feed(h("7468"), D4),
	0 = ?Q:blocked_streams(D5),
	ok.

unblock_order_test() ->
	{blocked, D1} = ?Q:decode_field_section(8, <<2, 0, 16#80>>, dec(220)),
	{blocked, D2} = ?Q:decode_field_section(4, <<2, 0, 16#80>>, D1),
	{[{8, {ok, [_]}}, {4, {ok, [_]}}], <<16#88, 16#84>>, _} =
		feed(h("3fbd01c00f7777772e6578616d706c652e636f6d"), D2),
	ok.

%% max_field_section_size: name + value + 32 per field (RFC 9114 4.2.2), at
%% the limit and one past; a section with references is still acknowledged.
size_limit_test_() ->
	Block = <<0, 0, 16#23, "abc", 3, "def">>,
	D = fun(Max) -> ?Q:init_decoder(#{max_table_capacity => 220, max_field_section_size => Max}) end,
	DD = fun(Max) ->
		{[], <<>>, D2} = feed(h("3fbd01c00f7777772e6578616d706c652e636f6d"), D(Max)),
		D2
	end,
	[
		?_assertMatch({ok, [{<<"abc">>, <<"def">>}], _, _}, ?Q:decode_field_section(0, Block, D(38))),
		?_assertMatch({too_large, [], _}, ?Q:decode_field_section(0, Block, D(37))),
		?_assertMatch({ok, [_], <<16#84>>, _}, ?Q:decode_field_section(4, <<2, 0, 16#80>>, DD(57))),
		?_assertMatch({too_large, <<16#84>>, _}, ?Q:decode_field_section(4, <<2, 0, 16#80>>, DD(56))),
		%% Past the limit, the rest is still checked.
		?_assertEqual({qpack_decompression_failed, "RFC9204 3.1"},
			err(?Q:decode_field_section(0, <<Block/binary, 16#ff, 36>>, D(37))))
	].

%% The encoder stream (RFC 9204 4.3), read by the decoder.
enc_stream(Bins, D) ->
	lists:foldl(fun
		(Bin, {ok, _, _, Acc}) -> ?Q:decoder_feed(iolist_to_binary(Bin), Acc);
		(_, Error) -> Error
	end, {ok, [], [], D}, Bins).

enc_err(Bins, D) -> err(enc_stream(Bins, D)).
enc_ok(Bins, D) -> element(1, enc_stream(Bins, D)).

cap(N) -> ?W:set_capacity(N).

encoder_stream_errors_test_() ->
	ES = qpack_encoder_stream_error,
	D = dec(220),
	Value = fun(N) -> binary:copy(<<"v">>, N) end,
	Lit = fun(N) -> ?W:insert_literal(<<"a">>, Value(N), false) end,
	[
		%% Capacity (RFC 9204 4.3.1): the maximum, then one past.
		?_assertEqual(ok, enc_ok([cap(220)], D)),
		?_assertEqual({ES, "RFC9204 4.3.1"}, enc_err([cap(221)], D)),
		?_assertEqual({ES, "RFC9204 4.3.1"}, enc_err([cap(1)], dec(0))),
		?_assertEqual(ok, enc_ok([cap(0)], dec(0))),
		%% Entry size (RFC 9204 3.2.2): 1 + 67 + 32 = 100 fits a capacity of 100,
		%% 1 + 68 + 32 does not; nothing fits a capacity of 0.
		?_assertEqual(ok, enc_ok([cap(100), Lit(67)], D)),
		?_assertEqual({ES, "RFC9204 3.2.2"}, enc_err([cap(100), Lit(68)], D)),
		?_assertEqual(ok, enc_ok([cap(100), ?W:insert_name_ref(static, 1, Value(63), false)], D)),
		?_assertEqual({ES, "RFC9204 3.2.2"},
			enc_err([cap(100), ?W:insert_name_ref(static, 1, Value(64), false)], D)),
		?_assertEqual({ES, "RFC9204 3.2.2"}, enc_err([Lit(0)], D)),
		%% Refused as soon as the length is read, before the string comes:
		%% plain (68 octets), or Huffman (300 octets decode to at least 80).
		?_assertEqual({ES, "RFC9204 3.2.2"}, enc_err([cap(100), <<16#41, "a", 68>>], D)),
		?_assertEqual({ES, "RFC9204 3.2.2"},
			enc_err([cap(100), <<16#41, "a">>, ?W:int_bin(300, 7, 1)], D)),
		?_assertEqual({ES, "RFC9204 3.2.2"}, enc_err([cap(100), <<16#5f, 16#ff, 16#ff, 3>>], D)),
		%% References (RFC 9204 2.2.3): with two entries, relative index 1 is
		%% the oldest, 2 is none; an evicted entry is none either.
		?_assertEqual(ok, enc_ok([cap(220), Lit(1), Lit(2), ?W:duplicate(1)], D)),
		?_assertEqual({ES, "RFC9204 2.2.3"}, enc_err([cap(220), Lit(1), Lit(2), ?W:duplicate(2)], D)),
		?_assertEqual({ES, "RFC9204 2.2.3"},
			enc_err([cap(220), Lit(1), ?W:insert_name_ref(dynamic, 1, <<"x">>, false)], D)),
		?_assertEqual({ES, "RFC9204 2.2.3"}, enc_err([cap(100), Lit(40), Lit(40), ?W:duplicate(1)], D)),
		?_assertEqual(ok, enc_ok([cap(100), Lit(40), Lit(40), ?W:duplicate(0)], D)),
		%% Static names (RFC 9204 3.1): 98 is the last.
		?_assertEqual(ok, enc_ok([cap(220), ?W:insert_name_ref(static, 98, <<>>, false)], D)),
		?_assertEqual({ES, "RFC9204 3.1"}, enc_err([cap(220), ?W:insert_name_ref(static, 99, <<>>, false)], D)),
		%% Integers (RFC 9204 4.1.1) and Huffman strings (4.1.2).
		?_assertEqual({ES, "RFC9204 4.1.1"}, enc_err([?W:int_bin(16#4000000000000000, 5, 2#001)], D)),
		?_assertEqual({ES, "RFC9204 4.1.1"}, enc_err([<<16#3f, (binary:copy(<<16#ff>>, 10))/binary>>], D)),
		?_assertEqual({ES, "RFC9204 4.1.2"}, enc_err([cap(220), <<16#61, 16#18, 0>>], D)),
		?_assertEqual({ES, "RFC9204 4.1.2"}, enc_err([cap(220), <<16#c0, 16#81, 16#18>>], D)),
		%% A capacity lowered evicts (RFC 9204 3.2.2): the entry is gone.
		?_assertEqual({ES, "RFC9204 2.2.3"}, enc_err([cap(220), Lit(1), cap(0), ?W:duplicate(0)], D))
	].

%% Instructions split at every byte give the same table as whole.
encoder_stream_split_test() ->
	Stream = iolist_to_binary([cap(220), ?W:insert_name_ref(static, 0, <<"www.example.com">>, true),
		?W:insert_literal(<<"custom-key">>, <<"custom-value">>, true), ?W:duplicate(1),
		?W:insert_name_ref(dynamic, 0, <<"v2">>, false)]),
	Block = <<5, 0, 16#83, 16#82, 16#81, 16#80>>,
	Expected = [{<<":authority">>, <<"www.example.com">>}, {<<"custom-key">>, <<"custom-value">>},
		{<<":authority">>, <<"www.example.com">>}, {<<":authority">>, <<"v2">>}],
	{[], _, DAll} = feed(Stream, dec(220)),
	{Expected, _, _} = decode(0, Block, DAll),
	{ok, [], [], DBytes} = enc_stream([<<B>> || <<B>> <= Stream], dec(220)),
	{Expected, _, _} = decode(0, Block, DBytes),
	ok.

%% The decoder stream (RFC 9204 4.4), read by the encoder.
encoder_with(Inserted) ->
	E0 = ?Q:init_encoder(#{}),
	{_, E1} = ?Q:encoder_settings(#{qpack_max_table_capacity => 4096, qpack_blocked_streams => 10}, E0),
	Fields = [{<<"x-", (integer_to_binary(N))/binary>>, <<"v">>} || N <- lists:seq(1, Inserted)],
	%% Seen once, then inserted the second time (on stream 4: blocking).
	{_, _, E2} = ?Q:encode_field_section(0, Fields, E1),
	{_, Ins, E3} = ?Q:encode_field_section(4, Fields, E2),
	true = (iolist_size(Ins) > 0) =:= (Inserted > 0),
	E3.

decoder_stream_errors_test_() ->
	DS = qpack_decoder_stream_error,
	Feed = fun(Bin, E) -> err(?Q:encoder_feed(Bin, E)) end,
	[
		?_assertEqual({DS, "RFC9204 4.4.1"}, Feed(<<16#84>>, ?Q:init_encoder(#{}))),
		?_assertMatch({ok, _}, ?Q:encoder_feed(<<16#84>>, encoder_with(2))),
		?_assertEqual({DS, "RFC9204 4.4.1"}, Feed(<<16#84, 16#84>>, encoder_with(2))),
		?_assertEqual({DS, "RFC9204 4.4.1"}, Feed(<<16#80>>, encoder_with(2))),
		?_assertEqual({DS, "RFC9204 4.4.3"}, Feed(<<0>>, encoder_with(2))),
		?_assertMatch({ok, _}, ?Q:encoder_feed(<<2>>, encoder_with(2))),
		?_assertEqual({DS, "RFC9204 4.4.3"}, Feed(<<3>>, encoder_with(2))),
		?_assertEqual({DS, "RFC9204 4.4.3"}, Feed(<<1, 2>>, encoder_with(2))),
		?_assertEqual({DS, "RFC9204 4.4.3"}, Feed(<<1>>, ?Q:init_encoder(#{}))),
		?_assertEqual({DS, "RFC9204 4.1.1"},
			Feed(?W:int_bin(16#4000000000000000, 7, 1), ?Q:init_encoder(#{}))),
		%% A cancellation of a stream with nothing outstanding is no error.
		?_assertMatch({ok, _}, ?Q:encoder_feed(<<16#48>>, ?Q:init_encoder(#{}))),
		%% Split anywhere.
		?_assertMatch({ok, _}, feed_bytes(<<16#84, 16#48, (?W:int_bin(1000, 6, 2#01))/binary>>,
			encoder_with(2)))
	].

feed_bytes(<<>>, E) -> {ok, E};
feed_bytes(<<B, Rest/bits>>, E) ->
	case ?Q:encoder_feed(<<B>>, E) of
		{ok, E2} -> feed_bytes(Rest, E2);
		Error -> Error
	end.

%% The encoder's strategy.

settings(Cap, Blocked) ->
	#{qpack_max_table_capacity => Cap, qpack_blocked_streams => Blocked}.

encoder(Opts, Cap, Blocked) ->
	{Set, E} = ?Q:encoder_settings(settings(Cap, Blocked), ?Q:init_encoder(Opts)),
	{iolist_to_binary(Set), E}.

fields() ->
	[{<<":status">>, <<"200">>}, {<<"server">>, <<"mustang">>}, {<<"x-trace">>, <<"abcdef">>}].

%% Until the peer's SETTINGS allow a table, and with the option at 0,
%% nothing goes on the encoder stream (RFC 9204 3.2.3).
static_only_test_() ->
	E0 = ?Q:init_encoder(#{}),
	{B1, I1, E1} = ?Q:encode_field_section(0, fields(), E0),
	{_, I2, _} = ?Q:encode_field_section(4, fields(), E1),
	{Set, EOff} = encoder(#{max_table_capacity => 0}, 4096, 100),
	{_, I3, EOff2} = ?Q:encode_field_section(0, fields(), EOff),
	{_, I4, _} = ?Q:encode_field_section(4, fields(), EOff2),
	{Set0, _} = encoder(#{}, 0, 100),
	[
		?_assertEqual([[], [], [], []], [I1, I2, I3, I4]),
		?_assertEqual(<<>>, Set),
		?_assertEqual(<<>>, Set0),
		?_assertMatch({ok, _, [], _}, ?Q:decode_field_section(0, iolist_to_binary(B1), dec(0))),
		%% The capacity is the smaller of ours and the peer's.
		?_assertEqual(?W:set_capacity(1024), element(1, encoder(#{max_table_capacity => 1024}, 4096, 1))),
		?_assertEqual(?W:set_capacity(300), element(1, encoder(#{}, 300, 1)))
	].

%% Inserted the second time; with no blocked streams allowed, an entry is
%% referenced only once the decoder acknowledged it (RFC 9204 2.1.2).
insert_and_block_test() ->
	{Set, E0} = encoder(#{}, 4096, 0),
	{ok, [], [], D0} = ?Q:decoder_feed(Set, ?Q:init_decoder(#{max_table_capacity => 4096, blocked_streams => 0})),
	{B1, [], E1} = ?Q:encode_field_section(0, fields(), E0),
	{B2, I2, E2} = ?Q:encode_field_section(4, fields(), E1),
	true = iolist_size(I2) > 0,
	%% Both sections reference nothing: the first is the same size again.
	true = iolist_size(B2) =:= iolist_size(B1),
	{ok, [], [], D1} = ?Q:decoder_feed(iolist_to_binary(I2), D0),
	{ok, _, [], D2} = ?Q:decode_field_section(4, iolist_to_binary(B2), D1),
	{Inc, _} = ?Q:decoder_increment(D2),
	{ok, E3} = ?Q:encoder_feed(iolist_to_binary(Inc), E2),
	{B3, [], _} = ?Q:encode_field_section(8, fields(), E3),
	%% Now indexed: three one-byte references after the prefix.
	<<_, 0, _, _, _>> = iolist_to_binary(B3),
	{ok, Fields, _, _} = ?Q:decode_field_section(8, iolist_to_binary(B3), D2),
	Fields = fields(),
	ok.

%% Secrets are never inserted; nor fields larger than a quarter of the table.
never_insert_test_() ->
	Encode = fun(Fields, Cap) ->
		{_, E0} = encoder(#{}, Cap, 10),
		{_, [], E1} = ?Q:encode_field_section(0, Fields, E0),
		{_, I, _} = ?Q:encode_field_section(4, Fields, E1),
		iolist_size(I)
	end,
	Value = fun(N) -> binary:copy(<<"v">>, N) end,
	[?_assertEqual(0, Encode([{Name, <<"secret">>}], 4096))
		|| Name <- [<<"cookie">>, <<"set-cookie">>, <<"authorization">>, <<"proxy-authorization">>]]
	++ [
		?_assert(Encode([{<<"x">>, Value(1024 - 33)}], 4096) > 0),
		?_assertEqual(0, Encode([{<<"x">>, Value(1024 - 32)}], 4096))
	].

%% Only evictable entries are evicted (RFC 9204 2.1.1): while an
%% unacknowledged section references the oldest entry, a new one that would
%% evict it is not inserted; once acknowledged, it is.
eviction_test() ->
	F = fun(Name) -> {Name, binary:copy(<<"v">>, 20)} end,
	Four = [F(<<"x-a">>), F(<<"x-c">>), F(<<"x-d">>), F(<<"x-e">>)],
	B = [F(<<"x-b">>)],
	{_, E0} = encoder(#{}, 256, 10),
	{_, [], E1} = ?Q:encode_field_section(0, Four, E0),
	%% Four entries of 55 octets: 220 of 256, all referenced by stream 4.
	{_, I4, E2} = ?Q:encode_field_section(4, Four, E1),
	true = iolist_size(I4) > 0,
	{_, [], E3} = ?Q:encode_field_section(8, B, E2),
	{_, [], E4} = ?Q:encode_field_section(12, B, E3),
	{ok, E5} = ?Q:encoder_feed(<<16#84>>, E4),
	{_, IB, _} = ?Q:encode_field_section(16, B, E5),
	true = iolist_size(IB) > 0,
	ok.

%% If the decoder never acknowledges, the encoder stops referencing the
%% table once 1000 sections wait, and keeps working.
unacked_bound_test() ->
	{_, E0} = encoder(#{}, 4096, 100),
	{_, [], E1} = ?Q:encode_field_section(0, fields(), E0),
	{_, I, E2} = ?Q:encode_field_section(4, fields(), E1),
	true = iolist_size(I) > 0,
	{ok, E3} = ?Q:encoder_feed(?W:section_ack(4), E2),
	{E4, RICs} = lists:foldl(fun(N, {E, Acc}) ->
		{Block, [], E5} = ?Q:encode_field_section(8 + 4 * N, fields(), E),
		<<RIC, _/bits>> = iolist_to_binary(Block),
		{E5, [RIC | Acc]}
	end, {E3, []}, lists:seq(1, 1001)),
	%% Newest first: the 1001st went without references.
	[0 | Rest] = RICs,
	1000 = length([R || R <- Rest, R > 0]),
	{_, [], _} = ?Q:encode_field_section(10000, fields(), E4),
	ok.

%% Every reason sentence in the QPACK modules is reached by a case above.
reasons_test() ->
	Reasons = lists:usort(lists:append([reasons(M) || M <- [mustang_qpack, mustang_qpack_encoder]])),
	[] = [R || R <- Reasons, is_tuple(cites(R))],
	Cited = cited([?MODULE]),
	[] = [R || R <- Reasons, not lists:member(cites(R), Cited)],
	ok.

%% The RFC sections the test modules expect, as "RFCnnnn s.s" strings.
cited(Modules) ->
	lists:usort(lists:append([begin
		{ok, Source} = file:read_file(proplists:get_value(source, M:module_info(compile))),
		[Section || {match, Ms} <- [re:run(Source, "\"(RFC[0-9]{4} [0-9.]+)\"",
			[global, {capture, [1], list}])], [Section] <- Ms]
	end || M <- Modules])).


reasons(Module) ->
	{ok, {_, [{atoms, Atoms}]}} = beam_lib:chunks(code:which(Module), [atoms]),
	[A || {_, A} <- Atoms, re:run(atom_to_list(A), "\\(RFC[0-9]+ ", [{capture, none}]) =:= match].

%% Properties: our encoder into our decoder.

%% Header lists drawn from a small pool (so that fields repeat and the
%% encoder inserts, duplicates names and evicts) and random fields.
field() ->
	frequency([
		{6, elements([{<<":status">>, <<"200">>}, {<<":status">>, <<"404">>},
			{<<"content-type">>, <<"text/html; charset=utf-8">>}, {<<"server">>, <<"mustang">>},
			{<<"x-request-id">>, <<"abc">>}, {<<"x-request-id">>, <<"def">>},
			{<<"cache-control">>, <<"private">>}, {<<"set-cookie">>, <<"a=b">>},
			{<<"vary">>, <<"accept-encoding">>}, {<<"x-long">>, binary:copy(<<"L">>, 300)}])},
		{2, {elements([<<"x-a">>, <<"x-b">>, <<"content-length">>, <<"etag">>]), value()}},
		{1, {?LET(N, non_empty(list(range($a, $z))), list_to_binary(N)), value()}}
	]).

value() ->
	oneof([binary(), ?LET(S, list(range(32, 126)), list_to_binary(S)), elements([<<"1">>, <<"2">>])]).

header_lists() ->
	non_empty(list(list(field()))).

%% One step per header list: whether the encoder stream reaches the decoder
%% before the section, whether acknowledgments reach the encoder after it,
%% and whether the stream is cancelled instead of decoded.
step() ->
	{boolean(), boolean(), frequency([{9, decode}, {1, cancel}])}.

prop_roundtrip() ->
	?FORALL({Cap, Blocked, Huffman}, {elements([0, 32, 100, 220, 1024, 4096]), elements([0, 1, 2, 16]),
			boolean()},
		?FORALL(Lists, header_lists(),
			?FORALL(Steps, vector(length(Lists), step()),
				roundtrip(Cap, Blocked, Huffman, Lists, Steps)))).

%% The simulation: state {E, D, PendingEncoderStream, PendingAcks, Expected,
%% Got}; at the end everything is delivered and every section not cancelled
%% must have decoded to its list.
roundtrip(Cap, Blocked, Huffman, Lists, Steps) ->
	{Set, E0} = encoder(#{huffman => Huffman}, Cap, Blocked),
	D0 = ?Q:init_decoder(#{max_table_capacity => Cap, blocked_streams => Blocked}),
	Sim0 = #{e => E0, d => D0, enc => [Set], acks => [], expected => #{}, got => #{}},
	Sim = lists:foldl(fun({{Fields, {SendEnc, SendAcks, Fate}}, N}, S0) ->
		StreamID = 4 * N,
		{Block, Ins, E} = ?Q:encode_field_section(StreamID, Fields, maps:get(e, S0)),
		S1 = S0#{e := E, enc := [Ins | maps:get(enc, S0)]},
		S2 = case SendEnc of true -> deliver_enc(S1); false -> S1 end,
		S3 = case Fate of
			decode -> section(StreamID, iolist_to_binary(Block), S2#{expected := (maps:get(expected, S2))#{StreamID => Fields}});
			cancel -> cancel(StreamID, S2)
		end,
		case SendAcks of true -> deliver_acks(S3); false -> S3 end
	end, Sim0, lists:zip(lists:zip(Lists, Steps), lists:seq(0, length(Lists) - 1))),
	#{expected := Expected, got := Got, d := D} = deliver_acks(deliver_enc(Sim)),
	?WHENFAIL(io:format("expected ~p~ngot ~p~n", [Expected, Got]),
		Expected =:= Got andalso ?Q:blocked_streams(D) =:= 0).

deliver_enc(S = #{enc := Enc, d := D0, acks := Acks}) ->
	Bin = iolist_to_binary(lists:reverse(Enc)),
	%% Split in two anywhere.
	Cut = case Bin of <<>> -> 0; _ -> rand:uniform(byte_size(Bin) + 1) - 1 end,
	<<P1:Cut/binary, P2/binary>> = Bin,
	{ok, U1, B1, D1} = ?Q:decoder_feed(P1, D0),
	{ok, U2, B2, D2} = ?Q:decoder_feed(P2, D1),
	{Inc, D3} = ?Q:decoder_increment(D2),
	Got = lists:foldl(fun({StreamID, {ok, Fields}}, Acc) -> Acc#{StreamID => Fields} end,
		maps:get(got, S), U1 ++ U2),
	S#{enc := [], d := D3, acks := [Inc, B2, B1 | Acks], got := Got}.

section(StreamID, Block, S = #{d := D0, acks := Acks, got := Got}) ->
	case ?Q:decode_field_section(StreamID, Block, D0) of
		{ok, Fields, Ack, D} -> S#{d := D, acks := [Ack | Acks], got := Got#{StreamID => Fields}};
		{blocked, D} -> S#{d := D}
	end.

cancel(StreamID, S = #{d := D0, acks := Acks}) ->
	{Bytes, D} = ?Q:cancel_stream(StreamID, D0),
	S#{d := D, acks := [Bytes | Acks]}.

deliver_acks(S = #{acks := Acks, e := E0}) ->
	{ok, E} = ?Q:encoder_feed(iolist_to_binary(lists:reverse(Acks)), E0),
	S#{acks := [], e := E}.

%% Random bytes never crash the decoder or the encoder's reading of the
%% decoder stream: each gives a documented result.
prop_random() ->
	?FORALL({Cap, Bin, Split}, {elements([0, 220, 4096]), binary(), non_neg_integer()},
		begin
			D = ?Q:init_decoder(#{max_table_capacity => Cap, blocked_streams => 2}),
			Section = case ?Q:decode_field_section(0, Bin, D) of
				{ok, Fields, _, _} -> is_list(Fields);
				{too_large, _, _} -> true;
				{blocked, _} -> true;
				{error, {connection_error, qpack_decompression_failed, R1}} -> is_list(cites(R1))
			end,
			Cut = Split rem (byte_size(Bin) + 1),
			<<P1:Cut/binary, P2/binary>> = Bin,
			Stream = case ?Q:decoder_feed(P1, D) of
				{ok, _, _, D2} ->
					case ?Q:decoder_feed(P2, D2) of
						{ok, _, _, _} -> true;
						{error, {connection_error, qpack_encoder_stream_error, R2}} -> is_list(cites(R2))
					end;
				{error, {connection_error, qpack_encoder_stream_error, R3}} -> is_list(cites(R3))
			end,
			Acks = case ?Q:encoder_feed(Bin, encoder_with(2)) of
				{ok, _} -> true;
				{error, {connection_error, qpack_decoder_stream_error, R4}} -> is_list(cites(R4))
			end,
			Section andalso Stream andalso Acks
		end).

proper_test_() ->
	[
		{timeout, 300, ?_assert(proper:quickcheck(prop_roundtrip(), [{numtests, 300}, {to_file, user}]))},
		{timeout, 300, ?_assert(proper:quickcheck(prop_random(), [{numtests, 3000}, {to_file, user}]))}
	].
