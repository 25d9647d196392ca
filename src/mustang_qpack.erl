%% QPACK field compression for HTTP/3 (RFC 9204). Pure functions: no
%% processes, no sockets. A connection has one decoder (the peer's field
%% sections and its encoder stream; our decoder stream) and one encoder
%% (our field sections and encoder stream; the peer's decoder stream). This
%% module is the decoder and the API of both; the encoder's strategy lives in
%% mustang_qpack_encoder, the wire primitives in mustang_qpack_wire, the
%% static table in mustang_qpack_static (RFC 9204 Appendix A).
%%
%% Contract: strict when decoding, lax when encoding. The decoder never
%% crashes on a binary: it returns a result or an error, and rejects what
%% RFC 9204 forbids: static indexes past the table, dynamic references to
%% entries evicted, not yet inserted or at or above the Required Insert
%% Count, an Encoded Required Insert Count no encoder could produce, a
%% negative Base, integers above 2^62-1, truncated representations, bad
%% Huffman strings, more blocked streams than our SETTINGS allow; on the
%% encoder stream a capacity above our maximum, an entry larger than the
%% capacity, references to evicted entries; on the decoder stream (read by
%% the encoder) acknowledgments of nothing and increments of zero or past
%% what was inserted. A Required Insert Count larger than the section's
%% references need is accepted (RFC 9204 2.2.1 allows refusing it; the
%% section is then only held longer). It does not check HTTP field rules
%% (lowercase names, pseudo-header fields): that is the HTTP/3 machine's
%% job. The encoder trusts its input.
%%
%% Errors have the project's one shape (doc/internals/errors.md):
%%   {error, {connection_error, Code, Reason}}
%% with Code qpack_decompression_failed (a field section),
%% qpack_encoder_stream_error (the encoder stream) or
%% qpack_decoder_stream_error (the decoder stream), all connection errors
%% (RFC 9204 6), and Reason a sentence ending with its RFC 9204 section.
%%
%% Decoder:
%%   init_decoder(#{max_table_capacity, blocked_streams, max_field_section_size})
%%     the first two are our SETTINGS_QPACK_MAX_TABLE_CAPACITY and
%%     SETTINGS_QPACK_BLOCKED_STREAMS, the third the largest field section
%%     (name + value + 32 per field, RFC 9114 4.2.2) we accept.
%%   decode_field_section(StreamID, Block, D) ->
%%     {ok, Fields, DecoderBytes, D}   Fields in order; DecoderBytes (a
%%                                     Section Acknowledgment or nothing) go
%%                                     on our decoder stream
%%     {too_large, DecoderBytes, D}    decoded and acknowledged, but larger
%%                                     than max_field_section_size: the
%%                                     fields were dropped (answer 431)
%%     {blocked, D}                    held until the encoder stream brings
%%                                     its entries (RFC 9204 2.1.2)
%%     {error, Error}
%%   decoder_feed(EncoderStreamBytes, D) ->
%%     {ok, Unblocked, DecoderBytes, D}  Unblocked is [{StreamID, {ok, Fields}
%%                                     | too_large}] for the held sections
%%                                     now decoded, in the order they came
%%     {error, Error}
%%   decoder_increment(D) -> {DecoderBytes, D}: an Insert Count Increment for
%%     the entries received and not yet acknowledged, if any; the caller
%%     sends it after a batch of encoder stream data.
%%   cancel_stream(StreamID, D) -> {DecoderBytes, D}: the request stream was
%%     reset or abandoned: its held section is dropped and a Stream
%%     Cancellation sent (none when our table capacity is 0, RFC 9204 2.2.2.2).
%%   blocked_streams(D): the number of streams held.
%%
%% Encoder: see mustang_qpack_encoder (init_encoder/1, encoder_settings/2,
%% encode_field_section/3, encoder_feed/2, encoder_cancel_stream/2),
%% re-exported here.
-module(mustang_qpack).

%% Decoder.
-export([init_decoder/1]).
-export([decode_field_section/3]).
-export([decoder_feed/2]).
-export([decoder_increment/1]).
-export([cancel_stream/2]).
-export([blocked_streams/1]).

%% Encoder.
-export([init_encoder/1]).
-export([encoder_settings/2]).
-export([encode_field_section/3]).
-export([encoder_feed/2]).

-export_type([decoder/0, encoder/0, field/0, error/0, decoder_opts/0]).

-type field() :: {binary(), binary()}.
-type error() :: {connection_error, qpack_decompression_failed | qpack_encoder_stream_error
	| qpack_decoder_stream_error, atom()}.
-type decoder_opts() :: #{
	max_table_capacity => non_neg_integer(),
	blocked_streams => non_neg_integer(),
	max_field_section_size => non_neg_integer() | infinity
}.
-type encoder() :: mustang_qpack_encoder:encoder().

-record(dec, {
	%% Our settings: the most the encoder may set the capacity to (it also
	%% sets MaxEntries for the Required Insert Count, RFC 9204 4.5.1.1), the
	%% most streams it may block, and the largest field section we take.
	max_capacity :: non_neg_integer(),
	max_blocked :: non_neg_integer(),
	max_size :: non_neg_integer() | infinity,
	%% The dynamic table: entries by absolute index, from dropped (the
	%% oldest left) to inserted - 1 (the newest).
	capacity = 0 :: non_neg_integer(),
	size = 0 :: non_neg_integer(),
	inserted = 0 :: non_neg_integer(),
	dropped = 0 :: non_neg_integer(),
	entries = #{} :: #{non_neg_integer() => field()},
	%% The Known Received Count as the encoder sees it: what our Section
	%% Acknowledgments and Insert Count Increments told it.
	acked = 0 :: non_neg_integer(),
	%% A partial encoder instruction: its parts (newest first), their size,
	%% and the size at which it may be complete.
	parts = [] :: [binary()],
	parts_size = 0 :: non_neg_integer(),
	need = 1 :: pos_integer(),
	%% Field sections waiting for entries, by stream, with their Required
	%% Insert Count and the order they came in.
	blocked = #{} :: #{non_neg_integer() => {pos_integer(), non_neg_integer(), binary()}},
	blocked_seq = 0 :: non_neg_integer()
}).

-opaque decoder() :: #dec{}.

-define(W, mustang_qpack_wire).

%% Decoder.

-spec init_decoder(decoder_opts()) -> decoder().
init_decoder(Opts) ->
	#dec{max_capacity = maps:get(max_table_capacity, Opts, 0),
		max_blocked = maps:get(blocked_streams, Opts, 0),
		max_size = maps:get(max_field_section_size, Opts, infinity)}.

-spec blocked_streams(decoder()) -> non_neg_integer().
blocked_streams(#dec{blocked = Blocked}) ->
	map_size(Blocked).

-spec decode_field_section(non_neg_integer(), binary(), decoder())
	-> {ok, [field()], iodata(), decoder()} | {too_large, iodata(), decoder()}
	| {blocked, decoder()} | {error, error()}.
decode_field_section(StreamID, Block, D) ->
	try
		case prefix(Block, D) of
			{RIC, _, _} when RIC > D#dec.inserted ->
				block(StreamID, RIC, Block, D);
			{RIC, Base, Lines} ->
				decoded(StreamID, RIC, lines(Lines, RIC, Base, D), D)
		end
	catch
		throw:{qpack, Reason} -> {error, {connection_error, qpack_decompression_failed, Reason}}
	end.

block(StreamID, RIC, Block, D = #dec{blocked = Blocked, max_blocked = Max, blocked_seq = Seq}) ->
	case map_size(Blocked) >= Max of
		true ->
			{error, {connection_error, qpack_decompression_failed,
				'More streams are blocked than SETTINGS_QPACK_BLOCKED_STREAMS allows. (RFC9204 2.1.2)'}};
		false ->
			{blocked, D#dec{blocked = Blocked#{StreamID => {RIC, Seq, Block}}, blocked_seq = Seq + 1}}
	end.

%% A field section decoded: acknowledged when it referenced the dynamic
%% table (RFC 9204 4.4.1), which also tells the encoder that the decoder has
%% every entry below the Required Insert Count.
decoded(_, 0, Result, D) ->
	result(Result, [], D);
decoded(StreamID, RIC, Result, D = #dec{acked = Acked}) ->
	result(Result, ?W:section_ack(StreamID), D#dec{acked = max(Acked, RIC)}).

result({ok, Fields}, Bytes, D) -> {ok, Fields, Bytes, D};
result(too_large, Bytes, D) -> {too_large, Bytes, D}.

%% The field section prefix (RFC 9204 4.5.1).
prefix(Block, D) ->
	case ?W:int8(Block) of
		{ok, EncRIC, <<Sign:1, Delta0:7, Rest/bits>>} ->
			RIC = required_insert_count(EncRIC, D),
			case ?W:int(Delta0, 7, Rest) of
				{ok, Delta, Lines} when Sign =:= 0 ->
					{RIC, RIC + Delta, Lines};
				{ok, Delta, _} when Delta >= RIC ->
					throw({qpack, 'The Base must not be negative. (RFC9204 4.5.1.2)'});
				{ok, Delta, Lines} ->
					{RIC, RIC - Delta - 1, Lines};
				Error ->
					throw({qpack, int_error(Error)})
			end;
		{ok, _, _} ->
			throw({qpack, truncated()});
		Error ->
			throw({qpack, int_error(Error)})
	end.

%% RFC 9204 4.5.1.1.
required_insert_count(0, _) ->
	0;
required_insert_count(Enc, #dec{max_capacity = MaxCapacity, inserted = Total}) ->
	MaxEntries = MaxCapacity div 32,
	FullRange = 2 * MaxEntries,
	Enc =< FullRange orelse throw({qpack, bad_ric()}),
	MaxValue = Total + MaxEntries,
	MaxWrapped = (MaxValue div FullRange) * FullRange,
	RIC = case MaxWrapped + Enc - 1 of
		R when R > MaxValue, R =< FullRange -> throw({qpack, bad_ric()});
		R when R > MaxValue -> R - FullRange;
		R -> R
	end,
	RIC =/= 0 orelse throw({qpack, bad_ric()}),
	RIC.

bad_ric() ->
	'The Encoded Required Insert Count cannot have been produced by an encoder. (RFC9204 4.5.1.1)'.

truncated() ->
	'A field section ends inside a representation. (RFC9204 4.5)'.

int_error(more) -> truncated();
int_error(too_large) -> 'An integer is larger than 2^62-1. (RFC9204 4.1.1)'.

string_error(more) -> truncated();
string_error(huffman) -> 'A Huffman-encoded string is invalid. (RFC9204 4.1.2)';
string_error(Error) -> int_error(Error).

%% Field line representations (RFC 9204 4.5.2-4.5.6). Sizes are counted as
%% RFC 9114 4.2.2 does; past the limit the fields are no longer kept, but
%% the rest is still checked.
lines(Bin, RIC, Base, D) ->
	lines(Bin, RIC, Base, D, [], 0).

lines(<<>>, _, _, #dec{max_size = Max}, _, Size) when Size > Max ->
	too_large;
lines(<<>>, _, _, _, Acc, _) ->
	{ok, lists:reverse(Acc)};
lines(<<1:1, T:1, I0:6, R0/bits>>, RIC, Base, D, Acc, Size) ->
	%% Indexed field line.
	{I, R} = int(I0, 6, R0),
	Field = case T of
		1 -> static(I);
		0 -> dynamic(Base - 1 - I, RIC, D)
	end,
	add(Field, R, RIC, Base, D, Acc, Size);
lines(<<0:3, 1:1, I0:4, R0/bits>>, RIC, Base, D, Acc, Size) ->
	%% Indexed field line with post-Base index.
	{I, R} = int(I0, 4, R0),
	add(dynamic(Base + I, RIC, D), R, RIC, Base, D, Acc, Size);
lines(<<0:1, 1:1, _N:1, T:1, I0:4, R0/bits>>, RIC, Base, D, Acc, Size) ->
	%% Literal field line with name reference.
	{I, R1} = int(I0, 4, R0),
	{Name, _} = case T of
		1 -> static(I);
		0 -> dynamic(Base - 1 - I, RIC, D)
	end,
	{Value, R} = value(R1),
	add({Name, Value}, R, RIC, Base, D, Acc, Size);
lines(<<0:4, _N:1, I0:3, R0/bits>>, RIC, Base, D, Acc, Size) ->
	%% Literal field line with post-Base name reference.
	{I, R1} = int(I0, 3, R0),
	{Name, _} = dynamic(Base + I, RIC, D),
	{Value, R} = value(R1),
	add({Name, Value}, R, RIC, Base, D, Acc, Size);
lines(<<0:2, 1:1, _N:1, H:1, L0:3, R0/bits>>, RIC, Base, D, Acc, Size) ->
	%% Literal field line with literal name.
	{Name, R1} = string(H, L0, 3, R0),
	{Value, R} = value(R1),
	add({Name, Value}, R, RIC, Base, D, Acc, Size).

add(Field = {Name, Value}, R, RIC, Base, D = #dec{max_size = Max}, Acc, Size0) ->
	case Size0 + byte_size(Name) + byte_size(Value) + 32 of
		Size when Size > Max -> lines(R, RIC, Base, D, [], Size);
		Size -> lines(R, RIC, Base, D, [Field | Acc], Size)
	end.

int(Prefix, Bits, Bin) ->
	case ?W:int(Prefix, Bits, Bin) of
		{ok, I, R} -> {I, R};
		Error -> throw({qpack, int_error(Error)})
	end.

value(<<H:1, L0:7, R/bits>>) -> string(H, L0, 7, R);
value(<<>>) -> throw({qpack, truncated()}).

string(H, L0, Bits, Bin) ->
	case ?W:string(H, L0, Bits, Bin) of
		{ok, S, R} -> {S, R};
		{more, _} -> throw({qpack, truncated()});
		Error -> throw({qpack, string_error(Error)})
	end.

static(I) ->
	case mustang_qpack_static:entry(I) of
		error -> throw({qpack, 'A static table index is out of range. (RFC9204 3.1)'});
		Field -> Field
	end.

%% RFC 9204 2.2.3: a reference at or above the Required Insert Count, or to
%% an entry evicted, is an error.
dynamic(Abs, RIC, #dec{dropped = Dropped, entries = Entries}) when Abs >= Dropped, Abs < RIC ->
	map_get(Abs, Entries);
dynamic(_, _, _) ->
	throw({qpack, 'A dynamic table reference is evicted or not below the Required Insert Count. (RFC9204 2.2.3)'}).

-spec decoder_increment(decoder()) -> {iodata(), decoder()}.
decoder_increment(D = #dec{inserted = Inserted, acked = Acked}) when Inserted > Acked ->
	{?W:insert_count_increment(Inserted - Acked), D#dec{acked = Inserted}};
decoder_increment(D) ->
	{[], D}.

-spec cancel_stream(non_neg_integer(), decoder()) -> {iodata(), decoder()}.
cancel_stream(StreamID, D = #dec{max_capacity = 0}) ->
	{[], D#dec{blocked = maps:remove(StreamID, D#dec.blocked)}};
cancel_stream(StreamID, D) ->
	{?W:stream_cancellation(StreamID), D#dec{blocked = maps:remove(StreamID, D#dec.blocked)}}.

%% The encoder stream (RFC 9204 4.3). Instructions may be split anywhere;
%% a partial one is kept as parts and joined once it can be complete.
-spec decoder_feed(binary(), decoder())
	-> {ok, [{non_neg_integer(), {ok, [field()]} | too_large}], iodata(), decoder()}
	| {error, error()}.
decoder_feed(Data, D = #dec{parts = Parts, parts_size = PartsSize, need = Need}) ->
	case PartsSize + byte_size(Data) of
		Total when Total < Need ->
			{ok, [], [], D#dec{parts = [Data | Parts], parts_size = Total}};
		_ ->
			Bin = case Parts of
				[] -> Data;
				_ -> iolist_to_binary(lists:reverse(Parts, [Data]))
			end,
			try instructions(Bin, D#dec{parts = [], parts_size = 0, need = 1}) of
				D2 -> unblock(D2)
			catch
				throw:{qpack, Reason} ->
					{error, {connection_error, qpack_encoder_stream_error, Reason}}
			end
	end.

instructions(<<>>, D) ->
	D;
instructions(Bin, D) ->
	case instruction(Bin, D) of
		{more, N} ->
			D#dec{parts = [Bin], parts_size = byte_size(Bin), need = byte_size(Bin) + N};
		{D2, Rest} ->
			instructions(Rest, D2)
	end.

%% One instruction, or {more, N}: at least N more bytes are needed.
instruction(<<1:1, T:1, I0:6, R0/bits>>, D) ->
	%% Insert with name reference (RFC 9204 4.3.2).
	case enc_int(I0, 6, R0) of
		{ok, I, R1} ->
			{Name, _} = case T of
				1 -> enc_static(I);
				0 -> enc_dynamic(I, D)
			end,
			case R1 of
				<<H:1, L0:7, R2/bits>> ->
					case enc_string(H, L0, 7, R2, byte_size(Name), D) of
						{ok, Value, R} -> {insert(Name, Value, D), R};
						More -> More
					end;
				<<>> ->
					{more, 1}
			end;
		More ->
			More
	end;
instruction(<<0:1, 1:1, H:1, L0:5, R0/bits>>, D) ->
	%% Insert with literal name (RFC 9204 4.3.3).
	case enc_string(H, L0, 5, R0, 0, D) of
		{ok, Name, <<VH:1, VL0:7, R1/bits>>} ->
			case enc_string(VH, VL0, 7, R1, byte_size(Name), D) of
				{ok, Value, R} -> {insert(Name, Value, D), R};
				More -> More
			end;
		{ok, _, <<>>} ->
			{more, 1};
		More ->
			More
	end;
instruction(<<0:2, 1:1, C0:5, R0/bits>>, D) ->
	%% Set Dynamic Table Capacity (RFC 9204 4.3.1).
	case enc_int(C0, 5, R0) of
		{ok, C, _} when C > D#dec.max_capacity ->
			throw({qpack, 'Set Dynamic Table Capacity exceeds SETTINGS_QPACK_MAX_TABLE_CAPACITY. (RFC9204 4.3.1)'});
		{ok, C, R} ->
			{evict(D#dec{capacity = C}, C), R};
		More ->
			More
	end;
instruction(<<0:3, I0:5, R0/bits>>, D) ->
	%% Duplicate (RFC 9204 4.3.4).
	case enc_int(I0, 5, R0) of
		{ok, I, R} ->
			{Name, Value} = enc_dynamic(I, D),
			{insert(Name, Value, D), R};
		More ->
			More
	end.

enc_int(Prefix, Bits, Bin) ->
	case ?W:int(Prefix, Bits, Bin) of
		more -> {more, 1};
		too_large -> throw({qpack, int_error(too_large)});
		Ok -> Ok
	end.

%% A string of an insert: refused as soon as its length shows that the
%% entry cannot fit the table (RFC 9204 3.2.2), so that nothing larger than
%% an entry is ever buffered. A Huffman string decodes to at least 8 bits
%% for every 30 it takes (the longest code, RFC 7541 Appendix B).
enc_string(H, L0, Bits, Bin, NameSize, D) ->
	case ?W:int(L0, Bits, Bin) of
		{ok, Len, _} when NameSize + (Len * 8 div 30) * H + Len * (1 - H) + 32 > D#dec.capacity ->
			throw({qpack, too_large_entry()});
		{ok, _, _} ->
			case ?W:string(H, L0, Bits, Bin) of
				{ok, S, R} -> {ok, copy(S), R};
				{more, N} -> {more, N};
				Error -> throw({qpack, string_error(Error)})
			end;
		more ->
			{more, 1};
		too_large ->
			throw({qpack, int_error(too_large)})
	end.

too_large_entry() ->
	'An entry must not be larger than the dynamic table capacity. (RFC9204 3.2.2)'.

%% Entries outlive the data they came in: copied when they are a small part
%% of it.
copy(S) ->
	case binary:referenced_byte_size(S) > 2 * byte_size(S) + 64 of
		true -> binary:copy(S);
		false -> S
	end.

enc_static(I) ->
	case mustang_qpack_static:entry(I) of
		error -> throw({qpack, 'A static table index is out of range. (RFC9204 3.1)'});
		Field -> Field
	end.

%% A relative index on the encoder stream counts back from the newest entry
%% (RFC 9204 3.2.5); an evicted one is an error (RFC 9204 2.2.3).
enc_dynamic(Rel, #dec{inserted = Inserted, dropped = Dropped, entries = Entries}) ->
	case Inserted - 1 - Rel of
		Abs when Abs >= Dropped -> map_get(Abs, Entries);
		_ -> throw({qpack, 'An encoder instruction references an evicted or unknown entry. (RFC9204 2.2.3)'})
	end.

%% RFC 9204 3.2.2: an entry larger than the capacity is an error; others
%% evict the oldest entries until they fit.
insert(Name, Value, D = #dec{capacity = Capacity}) ->
	case byte_size(Name) + byte_size(Value) + 32 of
		Size when Size > Capacity ->
			throw({qpack, too_large_entry()});
		Size ->
			D2 = #dec{inserted = Ins, entries = Entries} = evict(D, Capacity - Size),
			D2#dec{inserted = Ins + 1, entries = Entries#{Ins => {Name, Value}},
				size = D2#dec.size + Size}
	end.

evict(D = #dec{size = Size}, Max) when Size =< Max ->
	D;
evict(D = #dec{size = Size, dropped = Dropped, entries = Entries}, Max) ->
	{{Name, Value}, Entries2} = maps:take(Dropped, Entries),
	evict(D#dec{size = Size - byte_size(Name) - byte_size(Value) - 32, dropped = Dropped + 1,
		entries = Entries2}, Max).

%% Held sections whose entries have all arrived are decoded, in the order
%% they came.
unblock(D = #dec{blocked = Blocked, inserted = Inserted}) ->
	Ready = lists:sort([{Seq, StreamID, Block}
		|| {StreamID, {RIC, Seq, Block}} <- maps:to_list(Blocked), RIC =< Inserted]),
	unblock(Ready, D, [], []).

unblock([], D, Results, Bytes) ->
	{ok, lists:reverse(Results), lists:reverse(Bytes), D};
unblock([{_, StreamID, Block} | Ready], D0, Results, Bytes) ->
	D = D0#dec{blocked = maps:remove(StreamID, D0#dec.blocked)},
	case decode_field_section(StreamID, Block, D) of
		{ok, Fields, Ack, D2} -> unblock(Ready, D2, [{StreamID, {ok, Fields}} | Results], [Ack | Bytes]);
		{too_large, Ack, D2} -> unblock(Ready, D2, [{StreamID, too_large} | Results], [Ack | Bytes]);
		{error, _} = Error -> Error
	end.

%% Encoder.

-spec init_encoder(mustang_qpack_encoder:opts()) -> encoder().
init_encoder(Opts) ->
	mustang_qpack_encoder:init(Opts).

%% The peer's SETTINGS_QPACK_MAX_TABLE_CAPACITY and
%% SETTINGS_QPACK_BLOCKED_STREAMS: the encoder may now use the dynamic
%% table; the bytes (a Set Dynamic Table Capacity) go on our encoder stream.
-spec encoder_settings(mustang_http3_frame:settings(), encoder()) -> {iodata(), encoder()}.
encoder_settings(Settings, E) ->
	mustang_qpack_encoder:settings(Settings, E).

%% Our field section for a stream: {Block, EncoderStreamBytes, E}; the
%% encoder stream bytes must be sent too (before or with the block: the
%% peer holds the block until they arrive).
-spec encode_field_section(non_neg_integer(), [{binary(), iodata()}], encoder())
	-> {iodata(), iodata(), encoder()}.
encode_field_section(StreamID, Fields, E) ->
	mustang_qpack_encoder:encode(StreamID, Fields, E).

%% The peer's decoder stream.
-spec encoder_feed(binary(), encoder()) -> {ok, encoder()} | {error, error()}.
encoder_feed(Data, E) ->
	mustang_qpack_encoder:feed(Data, E).
