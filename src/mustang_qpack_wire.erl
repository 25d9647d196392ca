%% The wire primitives of QPACK (RFC 9204 4.1, 4.3, 4.4): prefixed integers,
%% string literals (with HPACK's Huffman code, mustang_hpack_huffman: RFC
%% 9204 4.1.2 uses the same table), and the encoder and decoder stream
%% instructions. Pure; used by mustang_qpack (the decoder) and
%% mustang_qpack_encoder. No options.
%%
%% Contract: the readers never crash on a binary: int/3 returns {ok, Int,
%% Rest}, more (the input ends inside the integer) or too_large (above
%% 2^62-1, the largest QPACK must handle, RFC 9204 4.1.1); string/4 also
%% {more, N} (N more bytes complete the string) and huffman (a string RFC
%% 7541 5.2 refuses). The builders trust their input.
-module(mustang_qpack_wire).

%% Reading.
-export([int/3]).
-export([int8/1]).
-export([string/4]).

%% Building.
-export([int_bin/3]).
-export([string_bin/3]).
-export([set_capacity/1]).
-export([insert_name_ref/4]).
-export([insert_literal/3]).
-export([duplicate/1]).
-export([section_ack/1]).
-export([stream_cancellation/1]).
-export([insert_count_increment/1]).

-define(MAX_INT, 16#3fffffffffffffff).

%% Reading.

%% An integer whose first Bits bits (the prefix, already read as Prefix)
%% are in the previous byte and whose continuation bytes, if any, start Bin
%% (RFC 7541 5.1, RFC 9204 4.1.1).
-spec int(non_neg_integer(), 1..8, binary())
	-> {ok, non_neg_integer(), binary()} | more | too_large.
int(Prefix, Bits, Bin) when Prefix < (1 bsl Bits) - 1 ->
	{ok, Prefix, Bin};
int(Prefix, _, Bin) ->
	cont(Bin, 0, Prefix).

cont(<<0:1, V:7, Rest/bits>>, Shift, Acc) ->
	case Acc + (V bsl Shift) of
		Int when Int > ?MAX_INT -> too_large;
		Int -> {ok, Int, Rest}
	end;
cont(<<1:1, V:7, Rest/bits>>, Shift, Acc) when Shift < 56 ->
	cont(Rest, Shift + 7, Acc + (V bsl Shift));
cont(<<_, _/bits>>, _, _) ->
	too_large;
cont(<<>>, _, _) ->
	more.

%% An integer with an 8-bit prefix, the first byte of Bin.
-spec int8(binary()) -> {ok, non_neg_integer(), binary()} | more | too_large.
int8(<<Prefix, Rest/bits>>) -> int(Prefix, 8, Rest);
int8(<<>>) -> more.

%% A string literal whose Huffman flag H and length prefix (Bits bits) were
%% in the previous byte (RFC 9204 4.1.2).
-spec string(0 | 1, non_neg_integer(), 1..8, binary())
	-> {ok, binary(), binary()} | {more, pos_integer()} | more | too_large | huffman.
string(H, Prefix, Bits, Bin) ->
	case int(Prefix, Bits, Bin) of
		{ok, Len, Rest} ->
			case Rest of
				<<S:Len/binary, Rest2/bits>> when H =:= 0 ->
					{ok, S, Rest2};
				<<S:Len/binary, Rest2/bits>> ->
					case mustang_hpack_huffman:decode(S) of
						{ok, Decoded} -> {ok, Decoded, Rest2};
						{error, _} -> huffman
					end;
				_ ->
					{more, Len - byte_size(Rest)}
			end;
		Other ->
			Other
	end.

%% Building.

%% Int with a Bits-bit prefix, the byte's higher bits being High.
-spec int_bin(non_neg_integer(), 1..8, non_neg_integer()) -> binary().
int_bin(Int, Bits, High) when Int < (1 bsl Bits) - 1 ->
	<<((High bsl Bits) + Int)>>;
int_bin(Int, Bits, High) ->
	Max = (1 bsl Bits) - 1,
	<<((High bsl Bits) + Max), (cont_bin(Int - Max))/binary>>.

cont_bin(Int) when Int < 128 -> <<Int>>;
cont_bin(Int) -> <<1:1, (Int band 127):7, (cont_bin(Int bsr 7))/binary>>.

%% A string literal with a Bits-bit length prefix below the H bit, High the
%% bits above it; Huffman-coded when that is shorter.
-spec string_bin(binary(), 1..7, non_neg_integer()) -> iodata().
string_bin(S, Bits, High) ->
	Huffman = mustang_hpack_huffman:encode(S),
	case byte_size(Huffman) < byte_size(S) of
		true -> [int_bin(byte_size(Huffman), Bits, High * 2 + 1), Huffman];
		false -> [int_bin(byte_size(S), Bits, High * 2), S]
	end.

%% Encoder instructions (RFC 9204 4.3).

-spec set_capacity(non_neg_integer()) -> binary().
set_capacity(Capacity) ->
	int_bin(Capacity, 5, 2#001).

%% Insert with name reference: Index is static or relative to the newest
%% entry (dynamic).
-spec insert_name_ref(static | dynamic, non_neg_integer(), binary(), boolean()) -> iodata().
insert_name_ref(Table, Index, Value, Huffman) ->
	T = case Table of static -> 1; dynamic -> 0 end,
	[int_bin(Index, 6, 2 + T), value_bin(Value, Huffman)].

-spec insert_literal(binary(), binary(), boolean()) -> iodata().
insert_literal(Name, Value, true) ->
	[string_bin(Name, 5, 2#01), value_bin(Value, true)];
insert_literal(Name, Value, false) ->
	[int_bin(byte_size(Name), 5, 2#010), Name, value_bin(Value, false)].

value_bin(Value, true) -> string_bin(Value, 7, 0);
value_bin(Value, false) -> [int_bin(byte_size(Value), 7, 0), Value].

-spec duplicate(non_neg_integer()) -> binary().
duplicate(Rel) ->
	int_bin(Rel, 5, 2#000).

%% Decoder instructions (RFC 9204 4.4).

-spec section_ack(non_neg_integer()) -> binary().
section_ack(StreamID) ->
	int_bin(StreamID, 7, 1).

-spec stream_cancellation(non_neg_integer()) -> binary().
stream_cancellation(StreamID) ->
	int_bin(StreamID, 6, 2#01).

-spec insert_count_increment(pos_integer()) -> binary().
insert_count_increment(Increment) ->
	int_bin(Increment, 6, 2#00).
