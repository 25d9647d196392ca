%% Tests for mustang_hpack and mustang_hpack_huffman (RFC 7541): the
%% Appendix C examples both ways, integer and Huffman edge cases, every
%% decoding error at its boundary, PropEr round trips and robustness, and a
%% cross-check against Python's hpack package when it is installed
%% (MUSTANG_PYTHON or _tools/venv/bin/python).
-module(mustang_hpack_tests).

-include_lib("proper/include/proper.hrl").
-include_lib("eunit/include/eunit.hrl").

%% Helpers.

hex(Str) ->
	binary:decode_hex(<< <<C>> || <<C>> <= iolist_to_binary(Str), C =/= $\s >>).

enc(Headers, State) ->
	enc(Headers, State, #{}).

enc(Headers, State0, Opts) ->
	{Data, State} = mustang_hpack:encode(Headers, State0, Opts),
	{iolist_to_binary(Data), State}.

%% Independent integer encoder (RFC 7541 5.1) used to build test input.
int(Type, N, I) when I < (1 bsl N) - 1 ->
	<<Type:(8 - N), I:N>>;
int(Type, N, I) ->
	Max = (1 bsl N) - 1,
	<<Type:(8 - N), Max:N, (int_tail(I - Max))/binary>>.

int_tail(I) when I < 128 -> <<I>>;
int_tail(I) -> <<1:1, (I band 127):7, (int_tail(I bsr 7))/binary>>.

%% The dynamic table as seen through indexed fields 62, 63...: each index
%% decodes to its entry until index_out_of_range. Decoding indexed fields
%% does not change the state, so this works on encoder states too.
table(State) ->
	table(State, 62, []).

table(State, Index, Acc) ->
	case mustang_hpack:decode(int(1, 7, Index), State) of
		{ok, [Field], _} -> table(State, Index + 1, [Field|Acc]);
		{error, compression_error, index_out_of_range} -> lists:reverse(Acc)
	end.

table_size(State) ->
	lists:sum([byte_size(N) + byte_size(V) + 32 || {N, V} <- table(State)]).

%% RFC 7541 Appendix A.
static_table() -> [
	{<<":authority">>, <<>>}, {<<":method">>, <<"GET">>}, {<<":method">>, <<"POST">>},
	{<<":path">>, <<"/">>}, {<<":path">>, <<"/index.html">>}, {<<":scheme">>, <<"http">>},
	{<<":scheme">>, <<"https">>}, {<<":status">>, <<"200">>}, {<<":status">>, <<"204">>},
	{<<":status">>, <<"206">>}, {<<":status">>, <<"304">>}, {<<":status">>, <<"400">>},
	{<<":status">>, <<"404">>}, {<<":status">>, <<"500">>}, {<<"accept-charset">>, <<>>},
	{<<"accept-encoding">>, <<"gzip, deflate">>}, {<<"accept-language">>, <<>>},
	{<<"accept-ranges">>, <<>>}, {<<"accept">>, <<>>},
	{<<"access-control-allow-origin">>, <<>>}, {<<"age">>, <<>>}, {<<"allow">>, <<>>},
	{<<"authorization">>, <<>>}, {<<"cache-control">>, <<>>},
	{<<"content-disposition">>, <<>>}, {<<"content-encoding">>, <<>>},
	{<<"content-language">>, <<>>}, {<<"content-length">>, <<>>},
	{<<"content-location">>, <<>>}, {<<"content-range">>, <<>>},
	{<<"content-type">>, <<>>}, {<<"cookie">>, <<>>}, {<<"date">>, <<>>},
	{<<"etag">>, <<>>}, {<<"expect">>, <<>>}, {<<"expires">>, <<>>}, {<<"from">>, <<>>},
	{<<"host">>, <<>>}, {<<"if-match">>, <<>>}, {<<"if-modified-since">>, <<>>},
	{<<"if-none-match">>, <<>>}, {<<"if-range">>, <<>>}, {<<"if-unmodified-since">>, <<>>},
	{<<"last-modified">>, <<>>}, {<<"link">>, <<>>}, {<<"location">>, <<>>},
	{<<"max-forwards">>, <<>>}, {<<"proxy-authenticate">>, <<>>},
	{<<"proxy-authorization">>, <<>>}, {<<"range">>, <<>>}, {<<"referer">>, <<>>},
	{<<"refresh">>, <<>>}, {<<"retry-after">>, <<>>}, {<<"server">>, <<>>},
	{<<"set-cookie">>, <<>>}, {<<"strict-transport-security">>, <<>>},
	{<<"transfer-encoding">>, <<>>}, {<<"user-agent">>, <<>>}, {<<"vary">>, <<>>},
	{<<"via">>, <<>>}, {<<"www-authenticate">>, <<>>}].

%% RFC 7541 C.1: integer representation.

c1_1_test() ->
	%% 10 on a 5-bit prefix, here in a dynamic table size update (RFC7541 C.1.1).
	{Bin, _} = enc([], mustang_hpack:set_max_size(10, mustang_hpack:init())),
	?assertEqual(<<2#001:3, 2#01010:5>>, Bin),
	{ok, [], D} = mustang_hpack:decode(Bin, mustang_hpack:init()),
	?assertEqual([], table(D)).

c1_2_test() ->
	%% 1337 on a 5-bit prefix: 31, then 154, then 10 (RFC7541 C.1.2).
	{Bin, _} = enc([], mustang_hpack:set_max_size(1337, mustang_hpack:init())),
	?assertEqual(<<2#00111111, 2#10011010, 2#00001010>>, Bin),
	?assertMatch({ok, [], _}, mustang_hpack:decode(Bin, mustang_hpack:init(1337))).

%% RFC 7541 C.2: header field representations, one block each from an
%% empty table; decoded, re-encoded to the same octets, table checked.

c2_test_() ->
	Tests = [
		%% C.2.1 Literal header field with indexing.
		{"400a 6375 7374 6f6d 2d6b 6579 0d63 7573 746f 6d2d 6865 6164 6572",
			[{<<"custom-key">>, <<"custom-header">>, indexed}],
			[{<<"custom-key">>, <<"custom-header">>}], 55},
		%% C.2.2 Literal header field without indexing.
		{"040c 2f73 616d 706c 652f 7061 7468",
			[{<<":path">>, <<"/sample/path">>, not_indexed}], [], 0},
		%% C.2.3 Literal header field never indexed.
		{"1008 7061 7373 776f 7264 0673 6563 7265 74",
			[{<<"password">>, <<"secret">>, never_indexed}], [], 0},
		%% C.2.4 Indexed header field.
		{"82", [{<<":method">>, <<"GET">>, indexed}], [], 0}
	],
	[{Hex, fun() ->
		Bin = hex(Hex),
		{ok, Fields, D} = mustang_hpack:decode_with_flags(Bin, mustang_hpack:init(), #{}),
		?assertEqual(Expected, Fields),
		?assertEqual(Table, table(D)),
		?assertEqual(Size, table_size(D)),
		{ok, Pairs, _} = mustang_hpack:decode(Bin, mustang_hpack:init()),
		?assertEqual([{N, V} || {N, V, _} <- Expected], Pairs),
		{Out, E} = enc(Expected, mustang_hpack:init(), #{huffman => false}),
		?assertEqual(Bin, Out),
		?assertEqual(Table, table(E))
	end} || {Hex, Expected, Table, Size} <- Tests].

%% RFC 7541 C.3 to C.6: a sequence of blocks on one connection. Each step is
%% {Hex, Headers, Table, TableSize}; the decoder and the encoder (Huffman as
%% the example says) each run the whole sequence sharing their state.

replay(MaxSize, Huffman, Steps) ->
	lists:foldl(fun({Hex, Headers, Table, Size}, {D0, E0}) ->
		Bin = hex(Hex),
		{ok, Decoded, D} = mustang_hpack:decode(Bin, D0),
		?assertEqual(Headers, Decoded),
		?assertEqual(Table, table(D)),
		?assertEqual(Size, table_size(D)),
		{Encoded, E} = enc(Headers, E0, #{huffman => Huffman}),
		?assertEqual(Bin, Encoded),
		?assertEqual(Table, table(E)),
		{D, E}
	end, {mustang_hpack:init(MaxSize), mustang_hpack:init(MaxSize)}, Steps),
	ok.

-define(REQ1, [{<<":method">>, <<"GET">>}, {<<":scheme">>, <<"http">>},
	{<<":path">>, <<"/">>}, {<<":authority">>, <<"www.example.com">>}]).
-define(REQ2, ?REQ1 ++ [{<<"cache-control">>, <<"no-cache">>}]).
-define(REQ3, [{<<":method">>, <<"GET">>}, {<<":scheme">>, <<"https">>},
	{<<":path">>, <<"/index.html">>}, {<<":authority">>, <<"www.example.com">>},
	{<<"custom-key">>, <<"custom-value">>}]).
-define(REQ_T1, [{<<":authority">>, <<"www.example.com">>}]).
-define(REQ_T2, [{<<"cache-control">>, <<"no-cache">>}|?REQ_T1]).
-define(REQ_T3, [{<<"custom-key">>, <<"custom-value">>}|?REQ_T2]).

c3_requests_without_huffman_test() ->
	replay(4096, false, [
		{"8286 8441 0f77 7777 2e65 7861 6d70 6c65 2e63 6f6d", ?REQ1, ?REQ_T1, 57},
		{"8286 84be 5808 6e6f 2d63 6163 6865", ?REQ2, ?REQ_T2, 110},
		{"8287 85bf 400a 6375 7374 6f6d 2d6b 6579 0c63 7573 746f 6d2d 7661 6c75 65",
			?REQ3, ?REQ_T3, 164}
	]).

c4_requests_with_huffman_test() ->
	replay(4096, true, [
		{"8286 8441 8cf1 e3c2 e5f2 3a6b a0ab 90f4 ff", ?REQ1, ?REQ_T1, 57},
		{"8286 84be 5886 a8eb 1064 9cbf", ?REQ2, ?REQ_T2, 110},
		{"8287 85bf 4088 25a8 49e9 5ba9 7d7f 8925 a849 e95b b8e8 b4bf", ?REQ3, ?REQ_T3, 164}
	]).

-define(DATE1, <<"Mon, 21 Oct 2013 20:13:21 GMT">>).
-define(DATE2, <<"Mon, 21 Oct 2013 20:13:22 GMT">>).
-define(LOC, <<"https://www.example.com">>).
-define(COOKIE, <<"foo=ASDJKHQKBZXOQWEOPIUAXQWEOIU; max-age=3600; version=1">>).
-define(RESP1, [{<<":status">>, <<"302">>}, {<<"cache-control">>, <<"private">>},
	{<<"date">>, ?DATE1}, {<<"location">>, ?LOC}]).
-define(RESP2, [{<<":status">>, <<"307">>}|tl(?RESP1)]).
-define(RESP3, [{<<":status">>, <<"200">>}, {<<"cache-control">>, <<"private">>},
	{<<"date">>, ?DATE2}, {<<"location">>, ?LOC}, {<<"content-encoding">>, <<"gzip">>},
	{<<"set-cookie">>, ?COOKIE}]).
-define(RESP_T1, [{<<"location">>, ?LOC}, {<<"date">>, ?DATE1},
	{<<"cache-control">>, <<"private">>}, {<<":status">>, <<"302">>}]).
-define(RESP_T2, [{<<":status">>, <<"307">>}, {<<"location">>, ?LOC}, {<<"date">>, ?DATE1},
	{<<"cache-control">>, <<"private">>}]).
-define(RESP_T3, [{<<"set-cookie">>, ?COOKIE}, {<<"content-encoding">>, <<"gzip">>},
	{<<"date">>, ?DATE2}]).

c5_responses_without_huffman_test() ->
	replay(256, false, [
		{"4803 3330 3258 0770 7269 7661 7465 611d 4d6f 6e2c 2032 3120 4f63 7420 3230 3133"
			" 2032 303a 3133 3a32 3120 474d 546e 1768 7474 7073 3a2f 2f77 7777 2e65 7861 6d70"
			" 6c65 2e63 6f6d", ?RESP1, ?RESP_T1, 222},
		{"4803 3330 37c1 c0bf", ?RESP2, ?RESP_T2, 222},
		{"88c1 611d 4d6f 6e2c 2032 3120 4f63 7420 3230 3133 2032 303a 3133 3a32 3220 474d"
			" 54c0 5a04 677a 6970 7738 666f 6f3d 4153 444a 4b48 514b 425a 584f 5157 454f 5049"
			" 5541 5851 5745 4f49 553b 206d 6178 2d61 6765 3d33 3630 303b 2076 6572 7369 6f6e"
			" 3d31", ?RESP3, ?RESP_T3, 215}
	]).

c6_responses_with_huffman_test() ->
	replay(256, true, [
		{"4882 6402 5885 aec3 771a 4b61 96d0 7abe 9410 54d4 44a8 2005 9504 0b81 66e0 82a6"
			" 2d1b ff6e 919d 29ad 1718 63c7 8f0b 97c8 e9ae 82ae 43d3", ?RESP1, ?RESP_T1, 222},
		{"4883 640e ffc1 c0bf", ?RESP2, ?RESP_T2, 222},
		{"88c1 6196 d07a be94 1054 d444 a820 0595 040b 8166 e084 a62d 1bff c05a 839b d9ab"
			" 77ad 94e7 821d d7f2 e6c7 b335 dfdf cd5b 3960 d5af 2708 7f36 72c1 ab27 0fb5 291f"
			" 9587 3160 65c0 03ed 4ee5 b106 3d50 07", ?RESP3, ?RESP_T3, 215}
	]).

%% Static table (RFC 7541 Appendix A).

static_table_decode_test() ->
	%% Each index 1-61 decodes to its Appendix A entry (RFC7541 2.3.1).
	Indexed = [mustang_hpack:decode(<<1:1, I:7>>, mustang_hpack:init())
		|| I <- lists:seq(1, 61)],
	?assertEqual(static_table(), [F || {ok, [F], _} <- Indexed]).

static_table_encode_test() ->
	%% Each entry encodes as an indexed field of its first index, each name
	%% as a literal that refers to the first index with that name (RFC7541 6.1, 6.2).
	Static = lists:zip(lists:seq(1, 61), static_table()),
	Full = [element(1, enc([F], mustang_hpack:init())) || {_, F} <- Static],
	?assertEqual([<<1:1, (first(F, Static)):7>> || {_, F} <- Static], Full),
	Names = [element(1, enc([{N, <<"?">>, not_indexed}], mustang_hpack:init(),
		#{huffman => false})) || {_, {N, _}} <- Static],
	?assertEqual([<<(int(0, 4, first_name(N, Static)))/binary, 1, "?">>
		|| {_, {N, _}} <- Static], Names).

first(F, Static) ->
	hd([I || {I, G} <- Static, G =:= F]).

first_name(N, Static) ->
	hd([I || {I, {M, _}} <- Static, M =:= N]).

%% Integer boundaries (RFC 7541 5.1): values 2^N - 2, 2^N - 1 and 2^N for
%% each prefix size the format uses.

%% A decoder and an encoder whose tables hold h1..h100 with empty values
%% (34 octets for h1..h9, 35 for h10..h99, 36 for h100, 3492 in all):
%% index 62 is h100, index I is h(162 - I).
filled() ->
	Fields = [{<<"h", (integer_to_binary(I))/binary>>, <<>>} || I <- lists:seq(1, 100)],
	{Bin, E} = enc(Fields, mustang_hpack:init(), #{huffman => false}),
	{ok, Fields, D} = mustang_hpack:decode(Bin, mustang_hpack:init()),
	{D, E}.

h(I) -> <<"h", (integer_to_binary(I))/binary>>.

int_prefix7_index_test() ->
	%% Indexed field, 7-bit prefix: 126 in the prefix, 127 and 128 continue.
	{D, E} = filled(),
	Cases = [{126, <<16#fe>>}, {127, <<16#ff, 0>>}, {128, <<16#ff, 1>>},
		{161, <<16#ff, 34>>}],
	[begin
		?assertEqual({ok, [{h(162 - I), <<>>}], D}, mustang_hpack:decode(Bin, D)),
		?assertEqual({Bin, E}, enc([{h(162 - I), <<>>}], E))
	end || {I, Bin} <- Cases],
	?assertEqual({error, compression_error, index_out_of_range},
		mustang_hpack:decode(<<16#ff, 35>>, D)).

int_prefix6_name_test() ->
	%% Literal with incremental indexing, indexed name, 6-bit prefix.
	{D, E} = filled(),
	Cases = [{62, <<16#7e>>}, {63, <<16#7f, 0>>}, {64, <<16#7f, 1>>}],
	[begin
		Bin = <<Prefix/binary, 1, "v">>,
		?assertMatch({ok, [{_, <<"v">>}], _}, mustang_hpack:decode(Bin, D)),
		{ok, [{Name, _}], _} = mustang_hpack:decode(Bin, D),
		?assertEqual(h(162 - I), Name),
		?assertMatch({Bin, _}, enc([{h(162 - I), <<"v">>}], E, #{huffman => false}))
	end || {I, Prefix} <- Cases].

int_prefix4_name_test() ->
	%% Never indexed and without indexing literals, indexed name, 4-bit prefix:
	%% index 14 (:status), 15 (accept-charset), 16 (accept-encoding).
	D = mustang_hpack:init(),
	?assertEqual({ok, [{<<":status">>, <<>>, never_indexed}], D},
		mustang_hpack:decode_with_flags(<<16#1e, 0>>, D, #{})),
	?assertEqual({ok, [{<<"accept-charset">>, <<>>, never_indexed}], D},
		mustang_hpack:decode_with_flags(<<16#1f, 0, 0>>, D, #{})),
	?assertEqual({ok, [{<<"accept-encoding">>, <<>>, not_indexed}], D},
		mustang_hpack:decode_with_flags(<<16#0f, 1, 0>>, D, #{})),
	?assertMatch({<<16#1f, 0, 0>>, _},
		enc([{<<"accept-charset">>, <<>>, never_indexed}], mustang_hpack:init())),
	?assertMatch({<<16#1f, 1, 0>>, _},
		enc([{<<"accept-encoding">>, <<>>, never_indexed}], mustang_hpack:init())),
	?assertMatch({<<16#0f, 1, 0>>, _},
		enc([{<<"accept-encoding">>, <<>>, not_indexed}], mustang_hpack:init())),
	?assertMatch({<<16#18, 0>>, _},
		enc([{<<":status">>, <<>>, never_indexed}], mustang_hpack:init())).

int_prefix5_size_update_test() ->
	%% Dynamic table size update, 5-bit prefix: 30, 31, 32, and 4096.
	Cases = [{30, <<16#3e>>}, {31, <<16#3f, 0>>}, {32, <<16#3f, 1>>},
		{4096, <<16#3f, 16#e1, 16#1f>>}],
	[begin
		{Bin, _} = enc([], mustang_hpack:set_max_size(Size, mustang_hpack:init(5000))),
		?assertEqual(Update, Bin),
		{ok, [{<<"a">>, <<>>}], D} = mustang_hpack:decode(<<Update/binary, 16#40, 1, "a", 0>>,
			mustang_hpack:init()),
		?assertEqual(case Size >= 33 of true -> [{<<"a">>, <<>>}]; false -> [] end, table(D))
	end || {Size, Update} <- Cases].

int_prefix7_string_length_test() ->
	%% String length, 7-bit prefix: 126, 127, 128, and 127 + 2^14 (3 octets).
	Cases = [{126, <<126>>}, {127, <<127, 0>>}, {128, <<127, 1>>},
		{127 + 16384, <<127, 16#80, 16#80, 1>>}],
	[begin
		Value = binary:copy(<<"v">>, Len),
		Bin = <<0, 1, "n", LenBin/binary, Value/binary>>,
		?assertEqual({ok, [{<<"n">>, Value}], mustang_hpack:init()},
			mustang_hpack:decode(Bin, mustang_hpack:init())),
		?assertMatch({Bin, _}, enc([{<<"n">>, Value, not_indexed}], mustang_hpack:init(),
			#{huffman => false}))
	end || {Len, LenBin} <- Cases].

int_limits_test_() ->
	%% Integers are limited to 4 continuation octets (RFC7541 5.1, 7.4).
	Tests = [
		{<<16#ff, 16#ff, 16#ff, 16#ff, 16#7f>>, index_out_of_range},
		{<<16#ff, 16#80, 16#80, 16#80, 16#80, 1>>, integer_too_large},
		{<<16#ff, 16#ff, 16#ff, 16#ff, 16#ff, 16#ff, 16#ff, 16#ff, 16#ff, 16#0f>>,
			integer_too_large},
		{<<16#ff>>, truncated_integer},
		{<<16#ff, 16#80>>, truncated_integer},
		{<<16#7f>>, truncated_integer},
		{<<16#3f>>, truncated_integer},
		{<<0, 1, "n", 127>>, truncated_integer},
		{<<0, 16#7f, 16#80, 16#80, 16#80, 16#80, 1>>, integer_too_large}
	],
	[{binary:encode_hex(Bin), ?_assertEqual({error, compression_error, Reason},
		mustang_hpack:decode(Bin, mustang_hpack:init()))} || {Bin, Reason} <- Tests].

%% Huffman (RFC 7541 5.2, Appendix B).

huffman_every_byte_test() ->
	%% Every byte value alone and all of them together round trip; a byte
	%% alone takes ceil(code length / 8) octets.
	Lengths = [13, 23, 28, 28, 28, 28, 28, 28, 28, 24, 30, 28, 28, 30, 28, 28,
		28, 28, 28, 28, 28, 28, 30, 28, 28, 28, 28, 28, 28, 28, 28, 28],
	[begin
		Huff = mustang_hpack_huffman:encode(<<B>>),
		?assertEqual({ok, <<B>>}, mustang_hpack_huffman:decode(Huff)),
		?assertEqual((L + 7) div 8, byte_size(Huff))
	end || {B, L} <- lists:zip(lists:seq(0, 31), Lengths)],
	[?assertEqual({ok, <<B>>}, mustang_hpack_huffman:decode(mustang_hpack_huffman:encode(<<B>>)))
		|| B <- lists:seq(0, 255)],
	All = list_to_binary(lists:seq(0, 255)),
	?assertEqual({ok, All}, mustang_hpack_huffman:decode(mustang_hpack_huffman:encode(All))),
	?assertEqual({ok, <<>>}, mustang_hpack_huffman:decode(<<>>)),
	?assertEqual(<<>>, mustang_hpack_huffman:encode(<<>>)).

huffman_rfc_strings_test_() ->
	%% Huffman strings of RFC 7541 C.4 and C.6, both ways.
	Tests = [
		{<<"www.example.com">>, "f1e3 c2e5 f23a 6ba0 ab90 f4ff"},
		{<<"no-cache">>, "a8eb 1064 9cbf"},
		{<<"custom-key">>, "25a8 49e9 5ba9 7d7f"},
		{<<"custom-value">>, "25a8 49e9 5bb8 e8b4 bf"},
		{<<"302">>, "6402"},
		{<<"307">>, "640e ff"},
		{<<"private">>, "aec3 771a 4b"},
		{?DATE1, "d07a be94 1054 d444 a820 0595 040b 8166 e082 a62d 1bff"},
		{?LOC, "9d29 ad17 1863 c78f 0b97 c8e9 ae82 ae43 d3"},
		{<<"gzip">>, "9bd9 ab"},
		{?COOKIE, "94e7 821d d7f2 e6c7 b335 dfdf cd5b 3960 d5af 2708 7f36 72c1 ab27 0fb5"
			" 291f 9587 3160 65c0 03ed 4ee5 b106 3d50 07"}
	],
	[{Str, fun() ->
		?assertEqual(hex(Hex), mustang_hpack_huffman:encode(Str)),
		?assertEqual({ok, Str}, mustang_hpack_huffman:decode(hex(Hex)))
	end} || {Str, Hex} <- Tests].

huffman_padding_test_() ->
	%% Padding is at most 7 bits, all 1s (RFC7541 5.2).
	Tests = [
		%% "a" = 00011, then 111: 3 bits of padding.
		{<<16#1f>>, {ok, <<"a">>}},
		%% "00000" = 25 bits, then 7 bits of padding.
		{<<0, 0, 0, 16#7f>>, {ok, <<"00000">>}},
		%% "aaaaaaaa" = 40 bits, then 8 bits of 1s.
		{<<16#18, 16#c6, 16#31, 16#8c, 16#63, 16#ff>>, {error, huffman_padding}},
		%% "a" then 11 bits of 1s.
		{<<16#1f, 16#ff>>, {error, huffman_padding}},
		%% "a" then 000.
		{<<16#18>>, {error, huffman_padding}},
		%% "a" then 101.
		{<<16#1d>>, {error, huffman_padding}},
		{<<16#ff>>, {error, huffman_padding}},
		{<<16#fe>>, {error, huffman_padding}}
	],
	[?_assertEqual(Result, mustang_hpack_huffman:decode(Bin)) || {Bin, Result} <- Tests].

huffman_eos_test_() ->
	%% A string containing EOS is an error (RFC7541 5.2).
	Tests = [
		%% EOS (30 bits) and 2 bits of padding.
		<<16#ff, 16#ff, 16#ff, 16#ff>>,
		%% "a", EOS, 5 bits of padding.
		<<16#1f, 16#ff, 16#ff, 16#ff, 16#ff>>,
		%% EOS then "a" (00011) then padding.
		<<16#ff, 16#ff, 16#ff, 16#fc, 16#7f>>
	],
	[?_assertEqual({error, huffman_eos}, mustang_hpack_huffman:decode(Bin)) || Bin <- Tests].

huffman_in_block_test_() ->
	%% Huffman errors inside a block are compression errors.
	Tests = [
		{<<0, 16#81, 16#1f, 16#81, 16#18>>, huffman_padding},
		{<<0, 16#84, 16#ff, 16#ff, 16#ff, 16#ff, 0>>, huffman_eos},
		{<<0, 16#81, 16#1f, 16#82, 16#1f>>, truncated_string}
	],
	[?_assertEqual({error, compression_error, Reason},
		mustang_hpack:decode(Bin, mustang_hpack:init())) || {Bin, Reason} <- Tests].

huffman_choice_test() ->
	%% With huffman => true a string is Huffman coded when not longer.
	{Short, _} = enc([{<<"x-a">>, <<"aaaa">>, not_indexed}], mustang_hpack:init()),
	?assertEqual(<<0, 16#83, (mustang_hpack_huffman:encode(<<"x-a">>))/binary,
		16#83, (mustang_hpack_huffman:encode(<<"aaaa">>))/binary>>, Short),
	{Long, _} = enc([{<<"x-a">>, <<0, 1, 2>>, not_indexed}], mustang_hpack:init()),
	?assertEqual(<<0, 16#83, (mustang_hpack_huffman:encode(<<"x-a">>))/binary, 3, 0, 1, 2>>,
		Long).

%% Decoding errors (RFC 7541 2.3.3, 4.2, 6).

decode_errors_test_() ->
	Tests = [
		{<<16#80>>, index_zero},
		{<<16#82, 16#80>>, index_zero},
		{<<16#be>>, index_out_of_range},
		{<<16#7e, 0>>, index_out_of_range},
		{<<16#0f, 16#2f, 0>>, index_out_of_range},
		{<<16#1f, 16#2f, 0>>, index_out_of_range},
		{<<16#82, 16#20>>, size_update_not_at_start},
		{<<16#20, 16#82, 16#3f, 16#e1, 16#1f>>, size_update_not_at_start},
		{<<16#3f, 16#e2, 16#1f>>, size_update_too_large},
		{<<16#40>>, truncated_string},
		{<<16#40, 5, "ab">>, truncated_string},
		{<<16#40, 1, "a">>, truncated_string},
		{<<16#40, 1, "a", 3, "ab">>, truncated_string},
		{<<16#44>>, truncated_string},
		{<<16#10, 0>>, truncated_string}
	],
	[{binary:encode_hex(Bin), ?_assertEqual({error, compression_error, Reason},
		mustang_hpack:decode(Bin, mustang_hpack:init()))} || {Bin, Reason} <- Tests].

size_update_limit_test() ->
	%% A size update may go up to the decoder's limit and not past it (RFC7541 6.3).
	?assertMatch({ok, [], _}, mustang_hpack:decode(<<16#3f, 16#e1, 16#1f>>, mustang_hpack:init())),
	D = mustang_hpack:set_max_size(100, mustang_hpack:init()),
	?assertEqual({error, compression_error, size_update_too_large},
		mustang_hpack:decode(<<16#3f, 16#46>>, D)),
	?assertMatch({ok, [{<<":method">>, <<"GET">>}], _},
		mustang_hpack:decode(<<16#3f, 16#45, 16#82>>, D)).

size_update_required_test() ->
	%% After our limit goes below the table size, the next block must open
	%% with a size update (RFC7541 4.2); one is enough, later blocks need none.
	D0 = mustang_hpack:set_max_size(100, mustang_hpack:init()),
	?assertEqual({error, compression_error, size_update_required},
		mustang_hpack:decode(<<16#82>>, D0)),
	?assertEqual({error, compression_error, size_update_required},
		mustang_hpack:decode(<<>>, D0)),
	{ok, [{<<":method">>, <<"GET">>}], D1} = mustang_hpack:decode(<<16#20, 16#3f, 16#45, 16#82>>, D0),
	?assertMatch({ok, [{<<":method">>, <<"GET">>}], _}, mustang_hpack:decode(<<16#82>>, D1)),
	%% Raising the limit requires nothing.
	D2 = mustang_hpack:set_max_size(8192, mustang_hpack:init()),
	?assertMatch({ok, [{<<":method">>, <<"GET">>}], _}, mustang_hpack:decode(<<16#82>>, D2)).

size_update_evicts_test() ->
	%% A smaller size evicts the oldest entries; 0 empties the table (RFC7541 4.3).
	{D0, _} = filled(),
	{ok, [], D1} = mustang_hpack:decode(int(2#001, 5, 36 + 35 + 35), D0),
	?assertEqual([{h(100), <<>>}, {h(99), <<>>}, {h(98), <<>>}], table(D1)),
	{ok, [], D1b} = mustang_hpack:decode(int(2#001, 5, 36 + 35 + 35 - 1), D0),
	?assertEqual([{h(100), <<>>}, {h(99), <<>>}], table(D1b)),
	{ok, [], D2} = mustang_hpack:decode(<<16#20>>, D0),
	?assertEqual([], table(D2)),
	{ok, [{<<"a">>, <<>>}], D3} = mustang_hpack:decode(<<16#40, 1, "a", 0>>, D2),
	?assertEqual([], table(D3)).

entry_larger_than_table_test() ->
	%% An entry larger than the table empties it and is not added (RFC7541 4.4);
	%% one of exactly the table size fits alone.
	{ok, _, D0} = mustang_hpack:decode(<<16#40, 1, "a", 1, "b">>, mustang_hpack:init(100)),
	?assertEqual([{<<"a">>, <<"b">>}], table(D0)),
	Fits = binary:copy(<<"v">>, 100 - 32 - 1),
	{ok, _, D1} = mustang_hpack:decode(<<16#40, 1, "a", 67, Fits/binary>>, D0),
	?assertEqual([{<<"a">>, Fits}], table(D1)),
	TooBig = binary:copy(<<"v">>, 100 - 32),
	{ok, [{<<"a">>, TooBig}], D2} = mustang_hpack:decode(<<16#40, 1, "a", 68, TooBig/binary>>, D1),
	?assertEqual([], table(D2)),
	%% The encoder sends such a field without indexing.
	{Bin, E} = enc([{<<"a">>, TooBig}], mustang_hpack:init(100), #{huffman => false}),
	?assertEqual(<<0, 1, "a", 68, TooBig/binary>>, Bin),
	?assertEqual([], table(E)).

eviction_keeps_referenced_name_test() ->
	%% A literal may name the entry its own insertion evicts (RFC7541 4.4).
	{ok, _, D0} = mustang_hpack:decode(<<16#40, 4, "name", 4, "aaaa">>, mustang_hpack:init(80)),
	{ok, [{<<"name">>, <<"bbbbb">>}], D1} = mustang_hpack:decode(<<16#7e, 5, "bbbbb">>, D0),
	?assertEqual([{<<"name">>, <<"bbbbb">>}], table(D1)).

max_decoded_size_test() ->
	%% name + value + 32 per field (RFC9113 6.5.2): 42 + 43 + 38 + 57 here.
	%% At the limit the list is returned; one below it, the block is still
	%% decoded into the table but the list is refused.
	Bin = hex("8286 8441 0f77 7777 2e65 7861 6d70 6c65 2e63 6f6d"),
	Size = (7 + 3 + 32) + (7 + 4 + 32) + (5 + 1 + 32) + (10 + 15 + 32),
	?assertMatch({ok, [_, _, _, _], _},
		mustang_hpack:decode(Bin, mustang_hpack:init(), #{max_decoded_size => Size})),
	?assertMatch({ok, [_, _, _, _], _},
		mustang_hpack:decode(Bin, mustang_hpack:init(), #{max_decoded_size => infinity})),
	{error, header_list_too_large, D} =
		mustang_hpack:decode(Bin, mustang_hpack:init(), #{max_decoded_size => Size - 1}),
	?assertEqual([{<<":authority">>, <<"www.example.com">>}], table(D)),
	?assertEqual({error, header_list_too_large, D},
		mustang_hpack:decode_with_flags(Bin, mustang_hpack:init(), #{max_decoded_size => Size - 1})),
	?assertEqual({error, header_list_too_large, mustang_hpack:init()},
		mustang_hpack:decode(<<16#82>>, mustang_hpack:init(), #{max_decoded_size => 41})),
	?assertMatch({ok, [], _},
		mustang_hpack:decode(<<>>, mustang_hpack:init(), #{max_decoded_size => 0})),
	%% A compression error later in the block still wins.
	?assertEqual({error, compression_error, index_zero},
		mustang_hpack:decode(<<Bin/binary, 16#80>>, mustang_hpack:init(), #{max_decoded_size => 10})).

%% Flags and never-indexed fields (RFC 7541 6.2.3, 7.1.3).

flags_test() ->
	%% Each representation is reported; the encoder, fed the decoder's output,
	%% sends never-indexed fields as never-indexed literals again, even when
	%% the field is in a table.
	Bin = <<16#82, 16#40, 1, "a", 1, "b", 16#04, 2, "/x", 16#10, 1, "c", 1, "d",
		16#1f, 16#2d, 0>>,
	Expected = [{<<":method">>, <<"GET">>, indexed}, {<<"a">>, <<"b">>, indexed},
		{<<":path">>, <<"/x">>, not_indexed}, {<<"c">>, <<"d">>, never_indexed},
		{<<"via">>, <<>>, never_indexed}],
	{ok, Fields, _} = mustang_hpack:decode_with_flags(Bin, mustang_hpack:init(), #{}),
	?assertEqual(Expected, Fields),
	{Out, E} = enc(Fields, mustang_hpack:init(), #{huffman => false}),
	?assertEqual(Bin, Out),
	?assertEqual([{<<"a">>, <<"b">>}], table(E)),
	{Again, _} = enc([{<<":method">>, <<"GET">>, never_indexed}, {<<"a">>, <<"b">>, never_indexed}],
		E, #{huffman => false}),
	?assertEqual(<<16#12, 3, "GET", 16#1f, 16#2f, 1, "b">>, Again).

indexing_option_test() ->
	%% indexing => false adds nothing but still uses what the tables hold.
	{Bin1, E1} = enc([{<<"a">>, <<"b">>}], mustang_hpack:init(), #{huffman => false}),
	?assertEqual(<<16#40, 1, "a", 1, "b">>, Bin1),
	{Bin2, E2} = enc([{<<"a">>, <<"b">>}, {<<"a">>, <<"c">>}, {<<"x">>, <<"y">>},
		{<<":method">>, <<"GET">>}], E1, #{huffman => false, indexing => false}),
	?assertEqual(<<16#be, 16#0f, 16#2f, 1, "c", 0, 1, "x", 1, "y", 16#82>>, Bin2),
	?assertEqual([{<<"a">>, <<"b">>}], table(E2)).

dynamic_name_reference_test() ->
	%% A name only in the dynamic table is referenced there (RFC7541 2.3.3).
	{_, E1} = enc([{<<"x-k">>, <<"1">>}], mustang_hpack:init(), #{huffman => false}),
	{Bin, E2} = enc([{<<"x-k">>, <<"2">>}, {<<"x-k">>, <<"1">>}], E1, #{huffman => false}),
	?assertEqual(<<16#7e, 1, "2", 16#bf>>, Bin),
	?assertEqual([{<<"x-k">>, <<"2">>}, {<<"x-k">>, <<"1">>}], table(E2)).

encoder_set_max_size_test() ->
	%% The encoder signals the smallest size then the last one (RFC7541 4.2),
	%% only in the next block, and nothing when the size did not change.
	E0 = mustang_hpack:init(),
	{_, E1} = enc([{<<"a">>, <<"b">>}], E0, #{huffman => false}),
	?assertEqual(E1, mustang_hpack:set_max_size(4096, E1)),
	E2 = mustang_hpack:set_max_size(4096, mustang_hpack:set_max_size(0, E1)),
	{Bin, E3} = enc([{<<"a">>, <<"b">>}], E2, #{huffman => false}),
	?assertEqual(<<16#20, 16#3f, 16#e1, 16#1f, 16#40, 1, "a", 1, "b">>, Bin),
	{Bin4, _} = enc([{<<"a">>, <<"b">>}], E3, #{huffman => false}),
	?assertEqual(<<16#be>>, Bin4),
	E5 = mustang_hpack:set_max_size(50, mustang_hpack:set_max_size(40, E3)),
	{Bin5, E6} = enc([], E5),
	?assertEqual(<<16#3f, 9, 16#3f, 19>>, Bin5),
	?assertEqual([{<<"a">>, <<"b">>}], table(E6)),
	{Bin6, _} = enc([], mustang_hpack:set_max_size(0, E6)),
	?assertEqual(<<16#20>>, Bin6).

%% PropEr.

properties_test_() ->
	Props = [
		{"round trip over shared contexts", fun prop_round_trip/0, 300},
		{"Huffman round trip", fun prop_huffman_round_trip/0, 500},
		{"random bytes never crash the decoder", fun prop_random_bytes/0, 3000},
		{"mutated blocks never crash the decoder", fun prop_mutated_blocks/0, 1000}
	],
	[{Title, {timeout, 60, ?_assert(proper:quickcheck(Prop(), [{numtests, N}, {to_file, user}]))}}
		|| {Title, Prop, N} <- Props].

gen_name() ->
	frequency([
		{4, elements([N || {N, _} <- static_table()])},
		{2, elements([<<"x-request-id">>, <<"custom-key">>, <<"a">>, <<"cookie">>])},
		{2, ?LET(L, non_empty(list(elements(lists:seq($a, $z) ++ "-"))), list_to_binary(L))},
		{1, binary()}
	]).

gen_value() ->
	frequency([
		{3, elements([<<>>, <<"GET">>, <<"200">>, <<"/">>, <<"gzip, deflate">>, <<"https">>])},
		{4, binary()},
		{2, ?LET(L, list(range($ , $~)), list_to_binary(L))},
		{1, ?LET(N, range(100, 600), binary:copy(<<"z">>, N))}
	]).

gen_field() ->
	oneof([{gen_name(), gen_value()},
		{gen_name(), gen_value(), elements([indexed, not_indexed, never_indexed])}]).

gen_size() ->
	oneof([0, 33, 64, 256, 4096, range(0, 8192)]).

gen_op() ->
	frequency([
		{8, {block, list(gen_field()), boolean(), boolean()}},
		{1, {resize, gen_size()}}
	]).

%% Blocks encoded and decoded over shared contexts, with size changes that
%% both sides learn (as SETTINGS_HEADER_TABLE_SIZE would tell them): the
%% fields come back equal, never-indexed ones flagged so, and after each
%% block the two dynamic tables are identical.
prop_round_trip() ->
	?FORALL({Init, Ops}, {gen_size(), list(gen_op())},
		no_exception(fun() ->
			run_ops(Ops, mustang_hpack:init(Init), mustang_hpack:init(Init))
		end)).

%% PropEr 1.2 reports exceptions badly on OTP 23+ (it calls the removed
%% erlang:get_stacktrace/0), so properties print them and fail instead.
no_exception(Fun) ->
	try
		Fun()
	catch Class:Reason:Stack ->
		io:format(user, "~p:~p~n~p~n", [Class, Reason, Stack]),
		false
	end.

run_ops([], _, _) ->
	true;
run_ops([{resize, Size}|Tail], E, D) ->
	run_ops(Tail, mustang_hpack:set_max_size(Size, E), mustang_hpack:set_max_size(Size, D));
run_ops([{block, Fields, Huffman, Indexing}|Tail], E0, D0) ->
	{Bin, E} = enc(Fields, E0, #{huffman => Huffman, indexing => Indexing}),
	{ok, Decoded, D} = mustang_hpack:decode_with_flags(Bin, D0, #{}),
	Expected = [{element(1, F), element(2, F), flag(F)} || F <- Fields],
	Got = [{N, V, never(Flag)} || {N, V, Flag} <- Decoded],
	(Expected =:= Got) andalso (table(E) =:= table(D)) andalso run_ops(Tail, E, D).

prop_huffman_round_trip() ->
	?FORALL(Bin, binary(),
		mustang_hpack_huffman:decode(mustang_hpack_huffman:encode(Bin)) =:= {ok, Bin}).

%% Any input gives a result or an error tuple, never an exception, whatever
%% the state.
safe_decode(Bin, State) ->
	try mustang_hpack:decode_with_flags(Bin, State, #{max_decoded_size => 2000}) of
		{ok, L, _} when is_list(L) -> true;
		{error, compression_error, R} when is_atom(R) -> true;
		{error, header_list_too_large, _} -> true
	catch Class:Reason ->
		io:format(user, "~p:~p on ~p~n", [Class, Reason, Bin]),
		false
	end.

gen_state() ->
	{D, _} = filled(),
	elements([mustang_hpack:init(), mustang_hpack:init(0), D,
		mustang_hpack:set_max_size(100, mustang_hpack:init())]).

prop_random_bytes() ->
	?FORALL({Bin, State}, {binary(), gen_state()}, safe_decode(Bin, State)).

gen_mutation() ->
	oneof([{flip, non_neg_integer(), range(1, 255)}, {truncate, non_neg_integer()},
		{insert, non_neg_integer(), range(0, 255)}]).

mutate(<<>>, _) ->
	<<>>;
mutate(Bin, {flip, Pos0, Mask}) ->
	Pos = Pos0 rem byte_size(Bin),
	<<A:Pos/binary, B, C/binary>> = Bin,
	<<A/binary, (B bxor Mask), C/binary>>;
mutate(Bin, {truncate, Pos0}) ->
	binary:part(Bin, 0, Pos0 rem byte_size(Bin));
mutate(Bin, {insert, Pos0, Byte}) ->
	Pos = Pos0 rem byte_size(Bin),
	<<A:Pos/binary, C/binary>> = Bin,
	<<A/binary, Byte, C/binary>>.

prop_mutated_blocks() ->
	?FORALL({Fields, Huffman, Mutations}, {list(gen_field()), boolean(), list(gen_mutation())},
		begin
			{D, E} = filled(),
			{Bin, _} = enc(Fields, E, #{huffman => Huffman}),
			safe_decode(lists:foldl(fun(M, B) -> mutate(B, M) end, Bin, Mutations), D)
		end).

%% Python's hpack package, an independent implementation.

-define(PY_SCRIPT, <<"
import sys
from hpack import Encoder, Decoder, NeverIndexedHeaderTuple
from hpack.huffman import HuffmanEncoder
from hpack.huffman_constants import REQUEST_CODES, REQUEST_CODES_LENGTH

def fields(parts):
    out = []
    for p in parts:
        n, v, f = p.split(',')
        n, v = bytes.fromhex(n), bytes.fromhex(v)
        out.append(NeverIndexedHeaderTuple(n, v) if f == 'n' else (n, v))
    return out

huff = HuffmanEncoder(REQUEST_CODES, REQUEST_CODES_LENGTH)
enc = dec = None
for line in sys.stdin:
    w = line.split()
    if w[0] == 'S':
        enc, dec = Encoder(), Decoder(max_header_list_size=1 << 30)
    elif w[0] == 'Z':
        enc.header_table_size = int(w[1])
    elif w[0] == 'A':
        dec.max_allowed_table_size = int(w[1])
    elif w[0] == 'H':
        print(huff.encode(bytes.fromhex(w[1] if w[1] != '-' else '')).hex() or '-')
    elif w[0] == 'E':
        print(enc.encode(fields(w[2:]), huffman=(w[1] == '1')).hex() or '-')
    elif w[0] == 'D':
        try:
            hs = dec.decode(bytes.fromhex(w[1] if w[1] != '-' else ''), raw=True)
            print(' '.join('%s,%s,%s' % (h[0].hex(), h[1].hex(), 'i' if h.indexable else 'n')
                for h in hs) or '-')
        except Exception as e:
            print('ERR', type(e).__name__)
">>).

find_python() ->
	Candidates = [os:getenv("MUSTANG_PYTHON"), "/work/main/_tools/venv/bin/python"],
	case [P || P <- Candidates, is_list(P), P =/= "", filelib:is_regular(P)] of
		[Python|_] ->
			case os:cmd(Python ++ " -c 'import hpack; print(\"hpack-ok\")' 2>&1") of
				"hpack-ok\n" -> Python;
				_ -> false
			end;
		[] ->
			false
	end.

python_test_() ->
	case find_python() of
		false ->
			io:format(user, "~nnote: Python with the hpack package not found "
				"(MUSTANG_PYTHON or /work/main/_tools/venv/bin/python); "
				"the cross-check was not generated.~n", []),
			[];
		Python ->
			[{timeout, 60, {"python hpack cross-check", fun() -> python_cross_check(Python) end}}]
	end.

run_python(Python, Commands) ->
	Dir = filename:join(filename:basedir(user_cache, "mustang_hpack_tests"),
		integer_to_list(erlang:unique_integer([positive]))),
	ok = filelib:ensure_dir(filename:join(Dir, "x")),
	Script = filename:join(Dir, "xcheck.py"),
	In = filename:join(Dir, "in.txt"),
	ok = file:write_file(Script, ?PY_SCRIPT),
	ok = file:write_file(In, [[C, $\n] || C <- Commands]),
	Out = os:cmd(Python ++ " " ++ Script ++ " < " ++ In ++ " 2>&1"),
	_ = [file:delete(F) || F <- [Script, In]],
	_ = file:del_dir(Dir),
	[L || L <- string:split(Out, "\n", all), L =/= ""].

field_cmd({N, V}) -> field_cmd({N, V, indexed});
field_cmd({N, V, F}) ->
	[" ", hexs(N), ",", hexs(V), ",", case F of never_indexed -> "n"; _ -> "i" end].

hexs(Bin) -> string:lowercase(binary_to_list(binary:encode_hex(Bin))).

unhex("-") -> <<>>;
unhex(S) -> binary:decode_hex(list_to_binary(S)).

parse_fields("-") ->
	[];
parse_fields(Line) ->
	[begin
		[N, V, F] = string:split(P, ",", all),
		{unhex(N), unhex(V), case F of "n" -> never_indexed; "i" -> indexed end}
	end || P <- string:lexemes(Line, " ")].

%% Sessions of random blocks with random table size changes. Python encodes
%% and we decode; we encode and Python decodes; each side's never-indexed
%% fields must come back flagged so. All sessions go through one Python run.
python_cross_check(Python) ->
	_ = rand:seed(exsss, {7541, 2015, 5}),
	Sessions = [random_session() || _ <- lists:seq(1, 40)],
	%% Our encodings, made first so that Python can decode them.
	Ours = [our_encodings(Ops) || Ops <- Sessions],
	Huff = [<<B>> || B <- lists:seq(0, 255)] ++ [list_to_binary(lists:seq(0, 255)),
		<<"www.example.com">>, <<>>],
	Commands = [["H ", case B of <<>> -> "-"; _ -> hexs(B) end] || B <- Huff]
		++ lists:append([session_cmds(Ops, Bins) || {Ops, Bins} <- lists:zip(Sessions, Ours)]),
	Lines = run_python(Python, Commands),
	{HuffLines, Rest} = lists:split(length(Huff), Lines),
	%% Every byte value and a few strings Huffman-code to the same octets.
	?assertEqual([hexs(mustang_hpack_huffman:encode(B)) || B <- Huff],
		[case L of "-" -> ""; _ -> L end || L <- HuffLines]),
	Checked = check_sessions(Sessions, Ours, Rest, 0),
	io:format(user, "~npython hpack cross-check: ~b blocks each way in ~b sessions~n",
		[Checked, length(Sessions)]),
	?assert(Checked > 200).

%% A resize is always followed by a block: Python's encoder signals every
%% intermediate size, not the smallest and the last (RFC7541 4.2), so two
%% resizes in a row (say 100 then 50) would make it send 100, above the
%% limit of 50, which both decoders rightly refuse.
random_session() ->
	lists:append([case rand:uniform(8) of
		1 -> [{resize, lists:nth(rand:uniform(5), [0, 100, 256, 4096, rand:uniform(6000)])},
			random_block()];
		_ -> [random_block()]
	end || _ <- lists:seq(1, 5 + rand:uniform(15))]).

random_block() ->
	{block, [random_field() || _ <- lists:seq(1, rand:uniform(12))], rand:uniform(2) =:= 1}.

random_field() ->
	Name = case rand:uniform(4) of
		1 -> element(1, lists:nth(rand:uniform(61), static_table()));
		2 -> lists:nth(rand:uniform(4), [<<"x-a">>, <<"x-b">>, <<"cookie">>, <<"custom-key">>]);
		_ -> list_to_binary([$a - 1 + rand:uniform(26) || _ <- lists:seq(1, rand:uniform(20))])
	end,
	Value = case rand:uniform(4) of
		1 -> lists:nth(rand:uniform(4), [<<>>, <<"GET">>, <<"200">>, <<"v">>]);
		2 -> rand:bytes(rand:uniform(300));
		_ -> list_to_binary([31 + rand:uniform(95) || _ <- lists:seq(1, rand:uniform(40))])
	end,
	case rand:uniform(6) of
		1 -> {Name, Value, never_indexed};
		_ -> {Name, Value}
	end.

our_encodings(Ops) ->
	{Bins, _} = lists:foldl(fun
		({resize, Size}, {Acc, E}) ->
			{Acc, mustang_hpack:set_max_size(Size, E)};
		({block, Fields, Huffman}, {Acc, E0}) ->
			{Bin, E} = enc(Fields, E0, #{huffman => Huffman}),
			{[Bin|Acc], E}
	end, {[], mustang_hpack:init()}, Ops),
	lists:reverse(Bins).

%% Per session: S, then for each op either a resize of Python's encoder and
%% decoder limit, or an E (Python encodes the block) and a D (Python
%% decodes our encoding of it).
session_cmds(Ops, Bins0) ->
	{Cmds, []} = lists:mapfoldl(fun
		({resize, Size}, Bins) ->
			S = integer_to_list(Size),
			{[["Z ", S], ["A ", S]], Bins};
		({block, Fields, Huffman}, [Bin|Bins]) ->
			H = case Huffman of true -> "1"; false -> "0" end,
			{[["E ", H, [field_cmd(F) || F <- Fields]],
				["D ", case Bin of <<>> -> "-"; _ -> hexs(Bin) end]], Bins}
	end, Bins0, Ops),
	["S"|lists:append(Cmds)].

check_sessions([], [], [], N) ->
	N;
check_sessions([Ops|Sessions], [_|Ours], Lines0, N0) ->
	{N, Lines} = check_session(Ops, mustang_hpack:init(), static_table(), Lines0, N0),
	check_sessions(Sessions, Ours, Lines, N).

%% Seen holds the fields Python may send as an indexed field although we
%% gave them as never-indexed: its encoder uses any exact match in its
%% tables, sensitive or not. These are the static table and the fields
%% given earlier without the flag (they may have been evicted since, but
%% then Python cannot refer to them).
check_session([], _, _, Lines, N) ->
	{N, Lines};
check_session([{resize, Size}|Ops], D, Seen, Lines, N) ->
	check_session(Ops, mustang_hpack:set_max_size(Size, D), Seen, Lines, N);
check_session([{block, Fields, _}|Ops], D0, Seen0, [PyEnc, PyDec|Lines], N) ->
	Expected = [{element(1, F), element(2, F), flag(F)} || F <- Fields],
	%% We encoded, Python decoded.
	?assertEqual(Expected, [{Nm, V, never(Fl)} || {Nm, V, Fl} <- parse_fields(PyDec)]),
	%% Python encoded, we decode.
	{ok, Decoded, D} = mustang_hpack:decode_with_flags(unhex(PyEnc), D0, #{}),
	?assertEqual([{Nm, V} || {Nm, V, _} <- Expected], [{Nm, V} || {Nm, V, _} <- Decoded]),
	Seen = lists:foldl(fun
		({{Nm, V, never_indexed}, {_, _, Fl}}, Acc) ->
			?assert(Fl =:= never_indexed orelse
				(Fl =:= indexed andalso lists:member({Nm, V}, Acc))),
			Acc;
		({{Nm, V, other}, {_, _, Fl}}, Acc) ->
			?assertNotEqual(never_indexed, Fl),
			[{Nm, V}|Acc]
	end, Seen0, lists:zip(Expected, Decoded)),
	check_session(Ops, D, Seen, Lines, N + 1).

flag({_, _, never_indexed}) -> never_indexed;
flag(_) -> other.

never(never_indexed) -> never_indexed;
never(_) -> other.

%% Speed: a typical request header block, printed in µs per call.

speed_test_() ->
	{timeout, 60, fun speed/0}.

speed() ->
	Headers = [{<<":method">>, <<"GET">>}, {<<":scheme">>, <<"https">>}, {<<":path">>, <<"/">>},
		{<<":authority">>, <<"example.com">>}, {<<"user-agent">>, <<"curl/8.0">>},
		{<<"accept">>, <<"*/*">>}],
	{First, E1} = enc(Headers, mustang_hpack:init()),
	{Second, _} = enc(Headers, E1),
	?assertEqual(<<16#82, 16#87, 16#84, 16#c0, 16#bf, 16#be>>, Second),
	{ok, Headers, D1} = mustang_hpack:decode(First, mustang_hpack:init()),
	{ok, Headers, _} = mustang_hpack:decode(Second, D1),
	N = 20000,
	Init = mustang_hpack:init(),
	Runs = [
		{"encode, first block (empty table, Huffman)", fun() -> mustang_hpack:encode(Headers, Init) end},
		{"encode, next block (all indexed)", fun() -> mustang_hpack:encode(Headers, E1) end},
		{"decode, first block (literals, Huffman)", fun() -> mustang_hpack:decode(First, Init) end},
		{"decode, next block (all indexed)", fun() -> mustang_hpack:decode(Second, D1) end}
	],
	[begin
		_ = loop(F, 1000),
		{T, _} = timer:tc(fun() -> loop(F, N) end),
		io:format(user, "~nhpack speed: ~s: ~.2f us/call", [Name, T / N])
	end || {Name, F} <- Runs],
	io:format(user, "~n", []).

loop(_, 0) -> ok;
loop(F, N) -> _ = F(), loop(F, N - 1).
