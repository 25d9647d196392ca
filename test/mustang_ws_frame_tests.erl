%% Tests for mustang_ws_frame (RFC 6455 5, RFC 7692 6). Client frames are
%% made by a test-only encoder (client_frame/5) that masks with its own code,
%% not with mustang_ws_frame:unmask/2, so that a masking bug cannot cancel
%% itself out.
-module(mustang_ws_frame_tests).

-include_lib("proper/include/proper.hrl").
-include_lib("eunit/include/eunit.hrl").

-define(KEY, 16#A1B2C3D4).

%% Test client encoder.

-define(OP(Name), op(Name)).
op(continuation) -> 0;
op(text) -> 1;
op(binary) -> 2;
op(close) -> 8;
op(ping) -> 9;
op(pong) -> 10;
op(N) when is_integer(N) -> N.

%% A masked client frame. Opts: fin (true), rsv (0..7), key, len (minimal
%% | 7 | 16 | 64: force an encoding), masked (true).
client_frame(Op, Payload) ->
	client_frame(Op, Payload, #{}).

client_frame(Op, Payload, Opts) ->
	Fin = case maps:get(fin, Opts, true) of true -> 1; false -> 0 end,
	Rsv = maps:get(rsv, Opts, 0),
	Key = maps:get(key, Opts, ?KEY),
	Len = byte_size(Payload),
	LenBits = case maps:get(len, Opts, minimal) of
		minimal when Len < 126 -> <<Len:7>>;
		minimal when Len < 65536 -> <<126:7, Len:16>>;
		minimal -> <<127:7, Len:64>>;
		7 -> <<Len:7>>;
		16 -> <<126:7, Len:16>>;
		64 -> <<127:7, Len:64>>
	end,
	case maps:get(masked, Opts, true) of
		true ->
			<<Fin:1, Rsv:3, (?OP(Op)):4, 1:1, LenBits/bits, Key:32,
				(test_mask(Payload, Key))/binary>>;
		false ->
			<<Fin:1, Rsv:3, (?OP(Op)):4, 0:1, LenBits/bits, Payload/binary>>
	end.

%% Byte by byte, from the key's 4 bytes (RFC 6455 5.3: j = i MOD 4).
test_mask(Payload, Key) ->
	K = list_to_tuple(binary_to_list(<<Key:32>>)),
	Size = byte_size(Payload) band -4,
	<<Words:Size/binary, Tail/binary>> = Payload,
	%% Whole words first (fast enough for 16 MiB), then the tail bytes.
	Masked = << <<(A bxor element(1, K)), (B bxor element(2, K)), (C bxor element(3, K)),
		(D bxor element(4, K))>> || <<A, B, C, D>> <= Words >>,
	{MaskedTail, _} = lists:mapfoldl(fun(Byte, I) -> {Byte bxor element(I + 1, K), I + 1} end,
		0, binary_to_list(Tail)),
	<<Masked/binary, (list_to_binary(MaskedTail))/binary>>.

%% Parsing helpers: all events of a stream fed in pieces, data pieces joined
%% into messages.

events(Pieces) ->
	events(Pieces, #{}).

events(Pieces, Opts) ->
	feed(Pieces, mustang_ws_frame:init(Opts), [], []).

feed([], _, [], Acc) ->
	lists:reverse(Acc);
feed([], _, Partial, Acc) ->
	lists:reverse([{incomplete, iolist_to_binary(lists:reverse([D || {_, _, D} <- Partial]))}|Acc]);
feed([Piece|Tail], St, Partial, Acc) ->
	step(mustang_ws_frame:parse(Piece, St), Tail, Partial, Acc).

step({more, St}, Pieces, Partial, Acc) ->
	feed(Pieces, St, Partial, Acc);
step({data, Type, Compressed, nofin, Data, Rest, St}, Pieces, Partial, Acc) ->
	%% Pieces are never empty, and keep the message's type and flag.
	?assertNotEqual(<<>>, Data),
	[?assertEqual({Type, Compressed}, {T, C}) || {T, C, _} <- [hd(Partial) || Partial =/= []]],
	step(mustang_ws_frame:parse(Rest, St), Pieces, [{Type, Compressed, Data}|Partial], Acc);
step({data, Type, Compressed, fin, Data, Rest, St}, Pieces, Partial, Acc) ->
	[?assertEqual({Type, Compressed}, {T, C}) || {T, C, _} <- Partial],
	Msg = iolist_to_binary(lists:reverse([Data|[D || {_, _, D} <- Partial]])),
	Event = case Compressed of
		true -> {Type, compressed, Msg};
		false -> {Type, Msg}
	end,
	step(mustang_ws_frame:parse(Rest, St), Pieces, [], [Event|Acc]);
step({frame, Frame, Rest, St}, Pieces, Partial, Acc) ->
	step(mustang_ws_frame:parse(Rest, St), Pieces, Partial, [Frame|Acc]);
step({error, Error = {ws_error, Code, Reason}}, _, _, Acc) ->
	?assert(is_atom(Reason)),
	?assert(mustang_error:is_error(Error)),
	lists:reverse([{error, Code}|Acc]).

%% The result of parsing a stream in one piece.
one(Bin) -> events([Bin]).
one(Bin, Opts) -> events([Bin], Opts).

%% Opcodes (RFC 6455 5.2, 5.5, 5.6).

opcodes_test_() ->
	[
		?_assertEqual([{text, <<"Hello">>}], one(client_frame(text, <<"Hello">>))),
		?_assertEqual([{binary, <<1, 2, 3>>}], one(client_frame(binary, <<1, 2, 3>>))),
		?_assertEqual([{ping, <<>>}], one(client_frame(ping, <<>>))),
		?_assertEqual([{ping, <<"abc">>}], one(client_frame(ping, <<"abc">>))),
		?_assertEqual([{pong, <<"abc">>}], one(client_frame(pong, <<"abc">>))),
		?_assertEqual([close], one(client_frame(close, <<>>))),
		?_assertEqual([{close, 1000, <<>>}], one(client_frame(close, <<1000:16>>))),
		?_assertEqual([{close, 1001, <<"bye ☺"/utf8>>}],
			one(client_frame(close, <<1001:16, "bye ☺"/utf8>>))),
		?_assertEqual([{text, <<"Hello">>}],
			one(<<(client_frame(text, <<"Hel">>, #{fin => false}))/binary,
				(client_frame(continuation, <<"lo">>))/binary>>)),
		%% An empty text message, and an empty first fragment.
		?_assertEqual([{text, <<>>}], one(client_frame(text, <<>>))),
		?_assertEqual([{binary, <<"x">>}],
			one(<<(client_frame(binary, <<>>, #{fin => false}))/binary,
				(client_frame(continuation, <<>>, #{fin => false}))/binary,
				(client_frame(continuation, <<"x">>))/binary>>))
	].

%% Control frames between the fragments of a message (RFC 6455 5.4).
interleaved_test() ->
	Stream = iolist_to_binary([
		client_frame(text, <<"Hel">>, #{fin => false}),
		client_frame(ping, <<"p1">>),
		client_frame(continuation, <<"lo, ">>, #{fin => false}),
		client_frame(pong, <<>>),
		client_frame(ping, <<>>),
		client_frame(continuation, <<"world">>),
		client_frame(binary, <<0, 1>>),
		client_frame(close, <<1000:16, "done">>)
	]),
	Expected = [{ping, <<"p1">>}, {pong, <<>>}, {ping, <<>>}, {text, <<"Hello, world">>},
		{binary, <<0, 1>>}, {close, 1000, <<"done">>}],
	?assertEqual(Expected, one(Stream)),
	%% And split at every position, and one byte at a time.
	[?assertEqual({At, Expected}, {At, events(split_at(Stream, [At]))})
		|| At <- lists:seq(0, byte_size(Stream))],
	?assertEqual(Expected, events([<<B>> || <<B>> <= Stream])).

%% Empty frames are skipped. Many of them after a header split between
%% reads take parse/2 through its joined-bytes path past the end of the bytes
%% it joined; the events must not depend on where the reads were cut.
empty_frames_test() ->
	Stream = iolist_to_binary([
		client_frame(text, <<>>, #{fin => false}),
		[client_frame(continuation, <<>>, #{fin => false}) || _ <- lists:seq(1, 40)],
		client_frame(continuation, <<"x">>, #{fin => false}),
		client_frame(ping, <<"p">>),
		[client_frame(continuation, <<>>, #{fin => false}) || _ <- lists:seq(1, 40)],
		client_frame(continuation, <<"yz">>),
		client_frame(binary, <<"end">>)
	]),
	Expected = [{ping, <<"p">>}, {text, <<"xyz">>}, {binary, <<"end">>}],
	?assertEqual(Expected, one(Stream)),
	[?assertEqual({A, B, Expected}, {A, B, events(split_at(Stream, [A, B]))})
		|| A <- lists:seq(0, 12), B <- lists:seq(A, byte_size(Stream), 7)].

%% Pieces keep the message type and compression flag; a control frame in the
%% middle does not end the message.
pieces_test() ->
	Stream = iolist_to_binary([
		client_frame(text, <<"ab">>, #{fin => false, rsv => 4}),
		client_frame(ping, <<>>),
		client_frame(continuation, <<"cd">>)
	]),
	St0 = mustang_ws_frame:init(#{deflate => true}),
	{data, text, true, nofin, <<"ab">>, R1, St1} = mustang_ws_frame:parse(Stream, St0),
	{frame, {ping, <<>>}, R2, St2} = mustang_ws_frame:parse(R1, St1),
	{data, text, true, fin, <<"cd">>, <<>>, St3} = mustang_ws_frame:parse(R2, St2),
	{more, _} = mustang_ws_frame:parse(<<>>, St3).

%% Lengths (RFC 6455 5.2): each encoding at its boundaries, both ways.

sizes() -> [0, 1, 125, 126, 127, 65535, 65536, 65537].

length_encodings_test_() ->
	[{integer_to_list(Size), fun() ->
		Payload = payload(Size),
		?assertEqual([{binary, Payload}], one(client_frame(binary, Payload))),
		?assertEqual([{text, Payload}], one(client_frame(text, Payload))),
		Built = iolist_to_binary(mustang_ws_frame:frame({binary, Payload})),
		Header = if
			Size < 126 -> <<16#82, Size>>;
			Size < 65536 -> <<16#82, 126, Size:16>>;
			true -> <<16#82, 127, Size:64>>
		end,
		?assertEqual(<<Header/binary, Payload/binary>>, Built)
	end} || Size <- sizes()].

large_frame_test_() ->
	{timeout, 60, fun() ->
		Size = 16 * 1024 * 1024,
		Payload = payload(Size),
		Frame = client_frame(binary, Payload),
		?assertEqual([{binary, Payload}], one(Frame)),
		%% As a server would read it: 64 KiB at a time, each piece handed on
		%% at once and unmasked in the right phase.
		?assertEqual([{binary, Payload}], events(chunks(Frame, 65536 + 3))),
		Built = iolist_to_binary(mustang_ws_frame:frame({binary, Payload})),
		?assertEqual(<<16#82, 127, Size:64, Payload/binary>>, Built)
	end}.

%% Text payloads of these sizes: ASCII with a 3-byte character, cut on a
%% character boundary (the codec does not validate text, but keep it valid).
payload(Size) ->
	Pattern = <<"0123456789abcdef€"/utf8>>,
	binary:part(binary:copy(Pattern, Size div byte_size(Pattern) + 1), 0, Size).

%% A large frame comes out in pieces as it arrives, without waiting for the
%% rest of it, and the pieces have the bytes of each read.
streaming_test() ->
	Payload = crypto:strong_rand_bytes(60000),
	<<Head:8/binary, Body/binary>> = client_frame(binary, Payload),
	St0 = mustang_ws_frame:init(#{}),
	%% The 8-byte header alone (16-bit length form).
	{more, St1} = mustang_ws_frame:parse(Head, St0),
	<<P1:1001/binary, P2:30001/binary, P3/binary>> = Body,
	{data, binary, false, nofin, D1, <<>>, St2} = mustang_ws_frame:parse(P1, St1),
	?assertEqual(1001, byte_size(D1)),
	{data, binary, false, nofin, D2, <<>>, St3} = mustang_ws_frame:parse(P2, St2),
	{data, binary, false, fin, D3, <<>>, _} = mustang_ws_frame:parse(P3, St3),
	?assertEqual(Payload, <<D1/binary, D2/binary, D3/binary>>).

%% Errors: every rule, with the close code it must give.

errors() ->
	Big = <<0:(126 * 8)>>,
	[
		{unmasked, 1002, client_frame(text, <<"hi">>, #{masked => false}), #{}},
		{unmasked_ping, 1002, client_frame(ping, <<>>, #{masked => false}), #{}},
		{rsv1_no_deflate, 1002, client_frame(text, <<"hi">>, #{rsv => 4}), #{}},
		{rsv2, 1002, client_frame(text, <<"hi">>, #{rsv => 2}), #{deflate => true}},
		{rsv3, 1002, client_frame(text, <<"hi">>, #{rsv => 1}), #{deflate => true}},
		{rsv1_ping, 1002, client_frame(ping, <<>>, #{rsv => 4}), #{deflate => true}},
		{rsv1_close, 1002, client_frame(close, <<>>, #{rsv => 4}), #{deflate => true}},
		{rsv1_continuation, 1002, <<(client_frame(text, <<"a">>, #{fin => false, rsv => 4}))/binary,
			(client_frame(continuation, <<"b">>, #{rsv => 4}))/binary>>, #{deflate => true}},
		{ping_126, 1002, client_frame(ping, Big), #{}},
		{pong_126, 1002, client_frame(pong, Big), #{}},
		{close_126, 1002, client_frame(close, <<1000:16, Big/binary>>), #{}},
		{ping_fragmented, 1002, client_frame(ping, <<>>, #{fin => false}), #{}},
		{close_fragmented, 1002, client_frame(close, <<>>, #{fin => false}), #{}},
		{continuation_first, 1002, client_frame(continuation, <<"a">>), #{}},
		{continuation_after_end, 1002, <<(client_frame(text, <<"a">>))/binary,
			(client_frame(continuation, <<"b">>))/binary>>, #{}},
		{text_in_message, 1002, <<(client_frame(text, <<"a">>, #{fin => false}))/binary,
			(client_frame(text, <<"b">>))/binary>>, #{}},
		{binary_in_message, 1002, <<(client_frame(binary, <<"a">>, #{fin => false}))/binary,
			(client_frame(binary, <<"b">>))/binary>>, #{}},
		{len64_top_bit, 1002, <<16#82, 16#FF, 1:1, 0:63, ?KEY:32>>, #{}},
		{len16_not_minimal, 1002, client_frame(binary, <<0:125/unit:8>>, #{len => 16}), #{}},
		{len16_zero, 1002, client_frame(binary, <<>>, #{len => 16}), #{}},
		{len64_not_minimal, 1002, client_frame(binary, <<0:65535/unit:8>>, #{len => 64}), #{}},
		{len64_small, 1002, client_frame(binary, <<"a">>, #{len => 64}), #{}},
		{too_big, 1009, client_frame(binary, <<0:1001/unit:8>>), #{max_frame_size => 1000}},
		{too_big_fragmented, 1009, <<(client_frame(text, <<0:600/unit:8>>, #{fin => false}))/binary,
			(client_frame(continuation, <<0:401/unit:8>>))/binary>>, #{max_frame_size => 1000}},
		{close_1_byte, 1002, client_frame(close, <<3>>), #{}},
		{close_bad_utf8, 1007, client_frame(close, <<1000:16, 16#C0, 16#80>>), #{}},
		{close_truncated_utf8, 1007, client_frame(close, <<1000:16, "ab", 16#E2, 16#82>>), #{}},
		{close_surrogate, 1007, client_frame(close, <<1000:16, 16#ED, 16#A0, 16#80>>), #{}}
	]
	++ [{{reserved_opcode, Op}, 1002, client_frame(Op, <<>>), #{}}
		|| Op <- lists:seq(3, 7) ++ lists:seq(11, 15)]
	++ [{{close_code, Code}, 1002, client_frame(close, <<Code:16>>), #{}}
		|| Code <- [0, 999, 1004, 1005, 1006, 1015, 1016, 1100, 2000, 2999, 5000, 65535]].

errors_test_() ->
	[{lists:flatten(io_lib:format("~p", [Name])), fun() ->
		Events = one(Bin, Opts),
		?assertEqual({error, Code}, lists:last(Events)),
		%% The same events whatever the reads.
		?assertEqual(Events, events([<<B>> || <<B>> <= Bin], Opts))
	end} || {Name, Code, Bin, Opts} <- errors()].

%% Limits, at and just past the boundary.
limits_test_() ->
	[
		?_assertEqual([{ping, <<0:125/unit:8>>}], one(client_frame(ping, <<0:125/unit:8>>))),
		?_assertEqual([{close, 1000, <<0:123/unit:8>>}],
			one(client_frame(close, <<1000:16, 0:123/unit:8>>))),
		?_assertEqual([{binary, <<0:1000/unit:8>>}],
			one(client_frame(binary, <<0:1000/unit:8>>), #{max_frame_size => 1000})),
		?_assertEqual([{text, <<0:1000/unit:8>>}],
			one(<<(client_frame(text, <<0:600/unit:8>>, #{fin => false}))/binary,
				(client_frame(continuation, <<0:400/unit:8>>))/binary>>,
				#{max_frame_size => 1000})),
		%% The limit is per message: the next one starts from zero.
		?_assertEqual([{binary, <<0:1000/unit:8>>}, {binary, <<0:1000/unit:8>>}],
			one(<<(client_frame(binary, <<0:1000/unit:8>>))/binary,
				(client_frame(binary, <<0:1000/unit:8>>))/binary>>, #{max_frame_size => 1000})),
		?_assertEqual([{binary, <<0:126/unit:8>>}],
			one(client_frame(binary, <<0:126/unit:8>>, #{len => 16}))),
		?_assertEqual([{binary, <<0:65536/unit:8>>}],
			one(client_frame(binary, <<0:65536/unit:8>>, #{len => 64}))),
		%% RSV1 on the first frame is fine once deflate is negotiated.
		?_assertEqual([{text, compressed, <<"x">>}],
			one(client_frame(text, <<"x">>, #{rsv => 4}), #{deflate => true}))
	].

%% 1009 comes from the header, before any payload byte arrives.
too_big_early_test() ->
	<<Header:14/binary, _/binary>> = client_frame(binary, <<0:70000/unit:8>>, #{len => 64}),
	?assertMatch({error, {ws_error, 1009, _}},
		mustang_ws_frame:parse(Header, mustang_ws_frame:init(#{max_frame_size => 65536}))),
	%% Other errors too are found on the first bytes.
	?assertMatch({error, {ws_error, 1002, _}}, mustang_ws_frame:parse(<<16#83>>, mustang_ws_frame:init(#{}))),
	?assertMatch({error, {ws_error, 1002, _}}, mustang_ws_frame:parse(<<16#81, 16#05>>,
		mustang_ws_frame:init(#{}))).

close_codes_test() ->
	Valid = [C || C <- lists:seq(0, 70000), mustang_ws_frame:is_valid_close_code(C)],
	?assertEqual(lists:seq(1000, 1003) ++ lists:seq(1007, 1014) ++ lists:seq(3000, 4999), Valid),
	[?assertEqual([{close, C, <<"r">>}], one(client_frame(close, <<C:16, "r">>)))
		|| C <- [1000, 1001, 1002, 1003, 1007, 1008, 1009, 1010, 1011, 1012, 1013, 1014,
			3000, 4999]].

%% Unmasking.

unmask_test_() ->
	[?_assertEqual({Size, Phase, test_mask(Bin, Key)},
		{Size, Phase, mustang_ws_frame:unmask(Bin, mustang_ws_frame:rotate_key(?KEY, Phase))})
		|| Size <- [0, 1, 2, 3, 4, 5, 15, 16, 17, 255, 256, 257, 1000, 70001],
			Phase <- [0, 1, 2, 3],
			Bin <- [crypto:strong_rand_bytes(Size)],
			%% The key as seen from byte Phase of the payload.
			Key <- [rotate_ref(?KEY, Phase)]].

rotate_ref(Key, Phase) ->
	<<A:Phase/binary, B/binary>> = <<Key:32>>,
	binary:decode_unsigned(<<B/binary, A/binary>>).

%% Building (RFC 6455 5.2, 5.5, 5.7 examples; server frames are unmasked).

build_test_() ->
	B = fun(F) -> iolist_to_binary(mustang_ws_frame:frame(F)) end,
	[
		?_assertEqual(<<16#81, 16#05, "Hello">>, B({text, <<"Hello">>})),
		?_assertEqual(<<16#81, 16#05, "Hello">>, B({text, [<<"He">>, "llo"]})),
		?_assertEqual(<<16#82, 16#03, 1, 2, 3>>, B({binary, <<1, 2, 3>>})),
		?_assertEqual(<<16#89, 16#05, "Hello">>, B({ping, <<"Hello">>})),
		?_assertEqual(<<16#8A, 16#05, "Hello">>, B({pong, <<"Hello">>})),
		?_assertEqual(<<16#89, 0>>, B(ping)),
		?_assertEqual(<<16#8A, 0>>, B(pong)),
		?_assertEqual(<<16#88, 0>>, B(close)),
		?_assertEqual(<<16#88, 5, 1000:16, "bye">>, B({close, 1000, <<"bye">>})),
		?_assertEqual(<<16#88, 2, 4000:16>>, B({close, <<4000:16>>})),
		?_assertEqual(<<16#81, 2, "ab", 16#88, 0>>,
			iolist_to_binary(mustang_ws_frame:frames([{text, <<"ab">>}, close]))),
		?_assertEqual(<<16#C1, 3, "abc">>,
			iolist_to_binary(mustang_ws_frame:compressed_frame(text, <<"abc">>))),
		?_assertEqual(<<16#C2, 126, 200:16, 0:1600>>,
			iolist_to_binary(mustang_ws_frame:compressed_frame(binary, <<0:1600>>))),
		?_assertEqual(<<16#01, 3, "Hel">>,
			iolist_to_binary(mustang_ws_frame:fragment(text, nofin, false, <<"Hel">>))),
		?_assertEqual(<<16#42, 1, "x">>,
			iolist_to_binary(mustang_ws_frame:fragment(binary, nofin, true, <<"x">>))),
		?_assertEqual(<<16#80, 2, "lo">>,
			iolist_to_binary(mustang_ws_frame:fragment(continuation, fin, false, <<"lo">>)))
	].

%% Properties.

%% A client frame made from a server frame: set the mask bit, insert the
%% key, mask the payload.
mask_server_frame(Frame, Key) ->
	{First, Len, Payload} = case iolist_to_binary(Frame) of
		<<F:8, 0:1, 127:7, L:64, P/binary>> -> {F, <<127:7, L:64>>, P};
		<<F:8, 0:1, 126:7, L:16, P/binary>> -> {F, <<126:7, L:16>>, P};
		<<F:8, 0:1, L:7, P/binary>> -> {F, <<L:7>>, P}
	end,
	<<First:8, 1:1, Len/bits, Key:32, (test_mask(Payload, Key))/binary>>.

%% What the server built, as parse/2 returns it.
expected({text, D}) -> {text, iolist_to_binary(D)};
expected({binary, D}) -> {binary, iolist_to_binary(D)};
expected({ping, D}) -> {ping, iolist_to_binary(D)};
expected({pong, D}) -> {pong, iolist_to_binary(D)};
expected({close, C, R}) -> {close, C, iolist_to_binary(R)};
expected(close) -> close.

frame_gen() ->
	oneof([
		{text, payload_gen()},
		{binary, payload_gen()},
		{ping, control_payload()},
		{pong, control_payload()},
		{close, oneof([1000, 1001, 1011, 3000, 4999]), control_reason()},
		close
	]).

payload_gen() ->
	frequency([{10, binary()}, {1, ?LET(N, range(126, 70000), binary(N))}]).

control_payload() ->
	?LET(N, range(0, 125), binary(N)).

control_reason() ->
	?LET(N, range(0, 40), list_to_binary(lists:duplicate(N, $r))).

prop_build_parse_roundtrip() ->
	?FORALL({Frames, Keys, Cuts}, {list(frame_gen()), list(integer(0, 16#ffffffff)),
			list(non_neg_integer())},
		begin
			Ks = Keys ++ [?KEY],
			Stream = iolist_to_binary([mask_server_frame(mustang_ws_frame:frame(F),
				lists:nth(I rem length(Ks) + 1, Ks))
				|| {I, F} <- lists:zip(lists:seq(1, length(Frames)), Frames)]),
			Expected = [expected(F) || F <- Frames],
			Expected =:= one(Stream) andalso Expected =:= events(split_at(Stream, Cuts))
		end).

%% Fragmented messages with control frames in between: one piece or many,
%% the same events.
message_gen() ->
	oneof([
		{message, oneof([text, binary]), boolean(), list(binary())},
		{control, oneof([ping, pong]), control_payload()}
	]).

encode_messages(Messages) ->
	iolist_to_binary([encode_message(M) || M <- Messages]).

encode_message({control, Op, Payload}) ->
	client_frame(Op, Payload);
encode_message({message, Type, Compressed, []}) ->
	client_frame(Type, <<>>, #{rsv => rsv(Compressed)});
encode_message({message, Type, Compressed, [First|Rest]}) ->
	[client_frame(Type, First, #{fin => Rest =:= [], rsv => rsv(Compressed)})
		|continuations(Rest)].

rsv(true) -> 4;
rsv(false) -> 0.

continuations([]) -> [];
continuations([Last]) -> [client_frame(continuation, Last)];
continuations([P|Rest]) -> [client_frame(continuation, P, #{fin => false})|continuations(Rest)].

decoded({control, Op, Payload}) -> {Op, Payload};
decoded({message, Type, true, Parts}) -> {Type, compressed, iolist_to_binary(Parts)};
decoded({message, Type, false, Parts}) -> {Type, iolist_to_binary(Parts)}.

prop_split_anywhere() ->
	?FORALL({Messages, Cuts}, {list(message_gen()), list(non_neg_integer())},
		begin
			Stream = encode_messages(Messages),
			Expected = [decoded(M) || M <- Messages],
			Opts = #{deflate => true},
			Expected =:= one(Stream, Opts) andalso Expected =:= events(split_at(Stream, Cuts), Opts)
		end).

proper_test_() ->
	{timeout, 300, [
		?_assert(proper:quickcheck(P, [{numtests, 500}, {to_file, user}]))
		|| P <- [prop_build_parse_roundtrip(), prop_split_anywhere()]]}.

%% Helpers.

split_at(Bin, Cuts) ->
	Positions = lists:usort([C rem (byte_size(Bin) + 1) || C <- Cuts]),
	cut(Bin, [0|Positions] ++ [byte_size(Bin)], []).

cut(_, [_], Acc) ->
	lists:reverse(Acc);
cut(Bin, [A, B|Tail], Acc) ->
	cut(Bin, [B|Tail], [binary:part(Bin, A, B - A)|Acc]).

chunks(Bin, Size) when byte_size(Bin) =< Size ->
	[Bin];
chunks(Bin, Size) ->
	<<Chunk:Size/binary, Rest/binary>> = Bin,
	[Chunk|chunks(Rest, Size)].
