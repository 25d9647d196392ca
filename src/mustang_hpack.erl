%% HPACK header compression for HTTP/2 (RFC 7541). Pure functions: no
%% processes, no sockets. One opaque state() is one compression context,
%% used either for decoding (the peer's header blocks) or for encoding (ours),
%% never both.
%%
%% Contract: strict when decoding, lax when encoding. The decoder never
%% crashes: any input gives {ok, ...} or an error tuple, and it rejects
%% everything RFC 7541 forbids: index 0 and indexes past the tables, integers
%% above 2^28 or encoded on more than 4 continuation octets, truncated
%% integers and strings, EOS or bad padding in Huffman strings, table size
%% updates after the first field or above our SETTINGS_HEADER_TABLE_SIZE, and
%% a missing size update after that setting was lowered. It does not check
%% HTTP/2 field rules (lowercase names, pseudo-headers, connection headers):
%% that is the HTTP/2 layer's job (RFC 9113 8.2). The encoder trusts its
%% input, so the layer above must check what handlers give it.
%%
%% Decoding results:
%%   {ok, Headers, State}
%%   {error, compression_error, Reason}: the context is unusable, so HTTP/2
%%     must end the connection with COMPRESSION_ERROR (RFC 9113 4.3).
%%   {error, header_list_too_large, State}: the block was fully decoded and
%%     the dynamic table is up to date, but the fields add up to more than
%%     max_decoded_size (name + value + 32 per field, RFC 9113 6.5.2), so
%%     they were dropped. The connection may go on; the stream gets a 431 or
%%     a reset.
%%
%% Reasons (all of class compression_error):
%%   integer_too_large           integer above 2^28 + prefix (RFC7541 5.1, 7.4)
%%   truncated_integer           block ends inside an integer (RFC7541 5.1)
%%   truncated_string            string longer than the block (RFC7541 5.2)
%%   huffman_eos                 EOS inside a Huffman string (RFC7541 5.2)
%%   huffman_padding             padding over 7 bits or not 1s (RFC7541 5.2)
%%   index_zero                  index 0 (RFC7541 6.1)
%%   index_out_of_range          index past both tables (RFC7541 2.3.3)
%%   size_update_not_at_start    size update after a field (RFC7541 4.2)
%%   size_update_too_large       size update above our limit (RFC7541 6.3)
%%   size_update_required        limit lowered, no update (RFC7541 4.2)
%%
%% Never-indexed fields (RFC 7541 7.1.3): decode_with_flags/3 returns each
%% field with how it was represented, and encode/2,3 accepts the same
%% {Name, Value, Flag} triples, so a proxy that passes the decoder's output
%% to an encoder keeps never-indexed fields never indexed.
-module(mustang_hpack).

%% Contexts.
-export([init/0]).
-export([init/1]).
-export([set_max_size/2]).

%% Decoding.
-export([decode/2]).
-export([decode/3]).
-export([decode_with_flags/3]).

%% Encoding.
-export([encode/2]).
-export([encode/3]).

-export_type([state/0]).
-export_type([flag/0]).
-export_type([decode_opts/0]).
-export_type([encode_opts/0]).
-export_type([error_reason/0]).
-export_type([decode_error/0]).

-type flag() :: indexed | not_indexed | never_indexed.

-type decode_opts() :: #{max_decoded_size => non_neg_integer() | infinity}.

-type encode_opts() :: #{huffman => boolean(), indexing => boolean()}.

-type error_reason() :: integer_too_large | truncated_integer | truncated_string
	| huffman_eos | huffman_padding | index_zero | index_out_of_range
	| size_update_not_at_start | size_update_too_large | size_update_required.

-type decode_error() :: {error, compression_error, error_reason()}
	| {error, header_list_too_large, state()}.

-record(state, {
	%% Dynamic table (RFC 7541 2.3.2, 4.1). Entries are keyed by insertion
	%% number: the newest is ins, the oldest ins - count + 1. Dynamic index
	%% I (62 and up) is therefore entry ins - I + 62.
	entries = #{} :: #{non_neg_integer() => {binary(), binary()}},
	ins = 0 :: non_neg_integer(),
	count = 0 :: non_neg_integer(),
	size = 0 :: non_neg_integer(),
	max_size = 4096 :: non_neg_integer(),
	%% Decoder: the largest size update accepted (our
	%% SETTINGS_HEADER_TABLE_SIZE) and whether the next block must start with
	%% a size update because that limit went below max_size.
	limit = 4096 :: non_neg_integer(),
	update_required = false :: boolean(),
	%% Encoder: where the latest entry of each field and of each name is, and
	%% the size updates to send first in the next block: {Smallest, Last}.
	fields = #{} :: #{{binary(), binary()} => non_neg_integer()},
	names = #{} :: #{binary() => non_neg_integer()},
	pending = none :: none | {non_neg_integer(), non_neg_integer()}
}).

-opaque state() :: #state{}.

%% A budget so large that no block reaches it stands for infinity.
-define(NO_LIMIT, (1 bsl 58)).

%% Contexts.

%% A context whose dynamic table holds at most 4096 octets, the initial
%% SETTINGS_HEADER_TABLE_SIZE (RFC 9113 6.5.2).
-spec init() -> state().
init() ->
	init(4096).

%% A context agreed at MaxSize octets from the start. A decoder that
%% advertises another SETTINGS_HEADER_TABLE_SIZE calls init() then
%% set_max_size/2 once the setting is acknowledged.
-spec init(non_neg_integer()) -> state().
init(MaxSize) when is_integer(MaxSize), MaxSize >= 0 ->
	#state{max_size = MaxSize, limit = MaxSize}.

%% Decoder: Size is our new SETTINGS_HEADER_TABLE_SIZE, the largest size
%% update we accept. When it is below the current table size limit, the
%% next block must start with a size update (RFC 7541 4.2).
%% Encoder: Size is the peer's new SETTINGS_HEADER_TABLE_SIZE. The table
%% takes that size and the next block starts with a size update; when the
%% size changed several times in between, it signals the smallest then the
%% last (RFC 7541 4.2).
-spec set_max_size(non_neg_integer(), state()) -> state().
set_max_size(Size, State = #state{max_size = Max, update_required = Required,
		pending = Pending})
		when is_integer(Size), Size >= 0 ->
	NewPending = case Pending of
		none when Size =:= Max -> none;
		none -> {Size, Size};
		{Min, _} -> {min(Min, Size), Size}
	end,
	State#state{limit = Size, update_required = Required orelse Size < Max,
		pending = NewPending}.

%% Decoding.

-spec decode(binary(), state())
	-> {ok, [{binary(), binary()}], state()} | decode_error().
decode(Bin, State) ->
	decode_block(Bin, State, ?NO_LIMIT, pairs).

-spec decode(binary(), state(), decode_opts())
	-> {ok, [{binary(), binary()}], state()} | decode_error().
decode(Bin, State, Opts) ->
	decode_block(Bin, State, budget(Opts), pairs).

%% Like decode/3, with each field's representation: indexed (an indexed
%% field or a literal added to the table), not_indexed or never_indexed.
-spec decode_with_flags(binary(), state(), decode_opts())
	-> {ok, [{binary(), binary(), flag()}], state()} | decode_error().
decode_with_flags(Bin, State, Opts) ->
	decode_block(Bin, State, budget(Opts), flags).

budget(Opts) ->
	case maps:get(max_decoded_size, Opts, infinity) of
		infinity -> ?NO_LIMIT;
		Max when is_integer(Max), Max >= 0 -> Max
	end.

decode_block(Bin, State0, Budget, Mode) ->
	case size_updates(Bin, State0) of
		{ok, Rest, State} ->
			fields(Rest, State, Mode, Budget, []);
		Error ->
			Error
	end.

%% Size updates may only open a block (RFC 7541 4.2), any number of them.
size_updates(<<2#001:3, Prefix:5, Rest0/binary>>, State) ->
	case prefix_int(Prefix, 31, Rest0) of
		{ok, Size, _} when Size > State#state.limit ->
			comp_error(size_update_too_large);
		{ok, Size, Rest} ->
			size_updates(Rest, resize(Size, State#state{update_required = false}));
		Error ->
			Error
	end;
size_updates(_, #state{update_required = true}) ->
	comp_error(size_update_required);
size_updates(Bin, State) ->
	{ok, Bin, State}.

%% Indexed field (RFC 7541 6.1).
fields(<<1:1, Index:7, Rest/binary>>, State, Mode, Budget, Acc)
		when Index > 0, Index < 127 ->
	indexed_field(Index, Rest, State, Mode, Budget, Acc);
fields(<<1:1, 127:7, Rest0/binary>>, State, Mode, Budget, Acc) ->
	case int_cont(Rest0, 0, 127) of
		{ok, Index, Rest} -> indexed_field(Index, Rest, State, Mode, Budget, Acc);
		Error -> Error
	end;
fields(<<1:1, 0:7, _/binary>>, _, _, _, _) ->
	comp_error(index_zero);
%% Literal field with incremental indexing (RFC 7541 6.2.1).
fields(<<2#01:2, Prefix:6, Rest/binary>>, State, Mode, Budget, Acc) ->
	literal(Prefix, 63, indexed, Rest, State, Mode, Budget, Acc);
fields(<<2#001:3, _:5, _/binary>>, _, _, _, _) ->
	comp_error(size_update_not_at_start);
%% Literal field never indexed (RFC 7541 6.2.3).
fields(<<2#0001:4, Prefix:4, Rest/binary>>, State, Mode, Budget, Acc) ->
	literal(Prefix, 15, never_indexed, Rest, State, Mode, Budget, Acc);
%% Literal field without indexing (RFC 7541 6.2.2).
fields(<<2#0000:4, Prefix:4, Rest/binary>>, State, Mode, Budget, Acc) ->
	literal(Prefix, 15, not_indexed, Rest, State, Mode, Budget, Acc);
fields(<<>>, State, _, Budget, Acc) when Budget >= 0 ->
	{ok, lists:reverse(Acc), State};
fields(<<>>, State, _, _, _) ->
	{error, header_list_too_large, State}.

indexed_field(Index, Rest, State, Mode, Budget, Acc) ->
	case lookup(Index, State) of
		{Name, Value} -> field(Name, Value, indexed, Rest, State, Mode, Budget, Acc);
		Error -> Error
	end.

literal(Prefix, Max, Flag, Rest0, State, Mode, Budget, Acc) ->
	case literal_name(Prefix, Max, Rest0, State) of
		{ok, Name, Rest1} ->
			case dec_string(Rest1) of
				{ok, Value, Rest} when Flag =:= indexed ->
					field(Name, Value, Flag, Rest, add(Name, Value, State), Mode, Budget, Acc);
				{ok, Value, Rest} ->
					field(Name, Value, Flag, Rest, State, Mode, Budget, Acc);
				Error ->
					Error
			end;
		Error ->
			Error
	end.

literal_name(0, _, Rest, _) ->
	dec_string(Rest);
literal_name(Prefix, Max, Rest0, State) ->
	case prefix_int(Prefix, Max, Rest0) of
		{ok, Index, Rest} ->
			case lookup(Index, State) of
				{Name, _} -> {ok, Name, Rest};
				Error -> Error
			end;
		Error ->
			Error
	end.

%% Once the budget is spent the fields are no longer kept, but decoding goes
%% on so the dynamic table stays in step with the encoder's.
field(Name, Value, Flag, Rest, State, Mode, Budget0, Acc) ->
	Budget = Budget0 - byte_size(Name) - byte_size(Value) - 32,
	if
		Budget < 0 -> fields(Rest, State, Mode, Budget, []);
		Mode =:= pairs -> fields(Rest, State, Mode, Budget, [{Name, Value}|Acc]);
		true -> fields(Rest, State, Mode, Budget, [{Name, Value, Flag}|Acc])
	end.

lookup(Index, _) when Index =< 61 ->
	static(Index);
lookup(Index, #state{entries = Entries, ins = Ins, count = Count}) when Index - 61 =< Count ->
	map_get(Ins - Index + 62, Entries);
lookup(_, _) ->
	comp_error(index_out_of_range).

%% String literal (RFC 7541 5.2): H flag, 7-bit prefix length, octets.
dec_string(<<H:1, 127:7, Rest0/binary>>) ->
	case int_cont(Rest0, 0, 127) of
		{ok, Len, Rest} -> string_body(H, Len, Rest);
		Error -> Error
	end;
dec_string(<<H:1, Len:7, Rest/binary>>) ->
	string_body(H, Len, Rest);
dec_string(<<>>) ->
	comp_error(truncated_string).

string_body(0, Len, Bin) ->
	case Bin of
		<<Str:Len/binary, Rest/binary>> -> {ok, Str, Rest};
		_ -> comp_error(truncated_string)
	end;
string_body(1, Len, Bin) ->
	case Bin of
		<<Huff:Len/binary, Rest/binary>> ->
			case mustang_hpack_huffman:decode(Huff) of
				{ok, Str} -> {ok, Str, Rest};
				{error, Reason} -> comp_error(Reason)
			end;
		_ ->
			comp_error(truncated_string)
	end.

%% Integers (RFC 7541 5.1). Max is 2^N - 1 for an N-bit prefix. At most 4
%% continuation octets are read, which bounds values to Max + 2^28 - 1.
prefix_int(Prefix, Max, Rest) when Prefix < Max ->
	{ok, Prefix, Rest};
prefix_int(_, Max, Rest) ->
	int_cont(Rest, 0, Max).

int_cont(<<0:1, Bits:7, Rest/binary>>, Shift, Acc) ->
	{ok, Acc + (Bits bsl Shift), Rest};
int_cont(<<1:1, Bits:7, Rest/binary>>, Shift, Acc) when Shift < 21 ->
	int_cont(Rest, Shift + 7, Acc + (Bits bsl Shift));
int_cont(<<1:1, _:7, _/binary>>, _, _) ->
	comp_error(integer_too_large);
int_cont(<<>>, _, _) ->
	comp_error(truncated_integer).

comp_error(Reason) ->
	{error, compression_error, Reason}.

%% Dynamic table (RFC 7541 4).

entry_size(Name, Value) ->
	byte_size(Name) + byte_size(Value) + 32.

%% Adding an entry first evicts from the oldest end until it fits; an entry
%% larger than the whole table empties it and is not added (RFC 7541 4.4).
%% Stored binaries are copied when they point into a larger binary, so the
%% table does not keep whole frames alive.
add(Name0, Value0, State0 = #state{max_size = Max}) ->
	Size = entry_size(Name0, Value0),
	if
		Size > Max ->
			State0#state{entries = #{}, count = 0, size = 0};
		true ->
			State = #state{entries = Entries, ins = Ins, count = Count, size = Used}
				= evict(Max - Size, State0),
			Entry = {own(Name0), own(Value0)},
			State#state{entries = Entries#{Ins + 1 => Entry}, ins = Ins + 1,
				count = Count + 1, size = Used + Size}
	end.

own(Bin) ->
	case binary:referenced_byte_size(Bin) > byte_size(Bin) of
		true -> binary:copy(Bin);
		false -> Bin
	end.

%% A size update (RFC 7541 4.3).
resize(Max, State) ->
	evict(Max, State#state{max_size = Max}).

evict(Target, State = #state{size = Used}) when Used =< Target ->
	State;
evict(Target, State = #state{entries = Entries0, ins = Ins, count = Count, size = Used,
		fields = Fields, names = Names}) ->
	Oldest = Ins - Count + 1,
	{Entry = {Name, Value}, Entries} = maps:take(Oldest, Entries0),
	evict(Target, State#state{entries = Entries, count = Count - 1,
		size = Used - entry_size(Name, Value),
		fields = forget(Entry, Oldest, Fields), names = forget(Name, Oldest, Names)}).

%% The encoder's lookup maps point at the newest entry of each key, so an
%% evicted entry is in them only when no newer entry has that key.
forget(Key, Abs, Map) ->
	case Map of
		#{Key := Abs} -> maps:remove(Key, Map);
		#{} -> Map
	end.

%% Encoding.

%% Headers may mix {Name, Value} (same as flag indexed) and
%% {Name, Value, Flag}. Flag indexed lets the encoder add the field to the
%% dynamic table, not_indexed keeps it out, never_indexed sends it as a
%% never-indexed literal whatever the tables hold (RFC 7541 6.2.3).
-spec encode([{binary(), binary()} | {binary(), binary(), flag()}], state())
	-> {iodata(), state()}.
encode(Headers, State) ->
	encode(Headers, State, #{}).

%% Options: huffman (true) Huffman-codes a string when that is not longer
%% than the raw string; indexing (true) adds indexed-flag fields to the
%% dynamic table when they fit in it.
-spec encode([{binary(), binary()} | {binary(), binary(), flag()}], state(), encode_opts())
	-> {iodata(), state()}.
encode(Headers, State0, Opts) ->
	Huffman = maps:get(huffman, Opts, true),
	Indexing = maps:get(indexing, Opts, true),
	{Acc, State} = pending_updates(State0),
	encode_fields(Headers, State, Huffman, Indexing, Acc).

pending_updates(State = #state{pending = none}) ->
	{[], State};
pending_updates(State = #state{pending = {Min, Last}}) when Min < Last ->
	{[size_update(Last), size_update(Min)],
		resize(Last, resize(Min, State#state{pending = none, update_required = false}))};
pending_updates(State = #state{pending = {_, Last}}) ->
	{[size_update(Last)], resize(Last, State#state{pending = none, update_required = false})}.

size_update(Size) ->
	integer(2#001, 5, Size).

%% The block is built as a reversed list of iodata, one element per field.
encode_fields([], State, _, _, Acc) ->
	{lists:reverse(Acc), State};
encode_fields([{Name, Value}|Tail], State0, Huffman, Indexing, Acc) ->
	{Data, State} = encode_field(Name, Value, indexed, State0, Huffman, Indexing),
	encode_fields(Tail, State, Huffman, Indexing, [Data|Acc]);
encode_fields([{Name, Value, Flag}|Tail], State0, Huffman, Indexing, Acc) ->
	{Data, State} = encode_field(Name, Value, Flag, State0, Huffman, Indexing),
	encode_fields(Tail, State, Huffman, Indexing, [Data|Acc]).

encode_field(Name, Value, never_indexed, State, Huffman, _) ->
	{literal_bin(2#0001, 4, Name, Value, State, Huffman), State};
encode_field(Name, Value, Flag, State, Huffman, Indexing) ->
	case static_field(Name, Value) of
		none ->
			case State#state.fields of
				#{{Name, Value} := Abs} ->
					{integer(1, 7, State#state.ins - Abs + 62), State};
				#{} ->
					encode_literal(Name, Value, Flag, State, Huffman, Indexing)
			end;
		Index ->
			{<<1:1, Index:7>>, State}
	end.

encode_literal(Name, Value, indexed, State, Huffman, true)
		when byte_size(Name) + byte_size(Value) + 32 =< State#state.max_size ->
	Data = literal_bin(2#01, 6, Name, Value, State, Huffman),
	{Data, add_encoder(Name, Value, State)};
encode_literal(Name, Value, _, State, Huffman, _) ->
	{literal_bin(2#0000, 4, Name, Value, State, Huffman), State}.

add_encoder(Name0, Value0, State0) ->
	Name = own(Name0),
	Value = own(Value0),
	State = #state{ins = Ins, fields = Fields, names = Names} = add(Name, Value, State0),
	State#state{fields = Fields#{{Name, Value} => Ins}, names = Names#{Name => Ins}}.

%% The name is taken from the static table first, as in RFC 7541 C.5.3.
literal_bin(Type, N, Name, Value, State, Huffman) ->
	case static_name(Name) of
		none ->
			case State#state.names of
				#{Name := Abs} ->
					[integer(Type, N, State#state.ins - Abs + 62), enc_string(Value, Huffman)];
				#{} ->
					[<<Type:(8 - N), 0:N>>, enc_string(Name, Huffman), enc_string(Value, Huffman)]
			end;
		Index ->
			[integer(Type, N, Index), enc_string(Value, Huffman)]
	end.

%% Returns the length and the octets, raw or Huffman coded, as iodata.
enc_string(<<>>, _) ->
	<<0>>;
enc_string(Str, true) ->
	Huff = mustang_hpack_huffman:encode(Str),
	case byte_size(Huff) =< byte_size(Str) of
		true -> [integer(1, 7, byte_size(Huff)), Huff];
		false -> [integer(0, 7, byte_size(Str)), Str]
	end;
enc_string(Str, false) ->
	[integer(0, 7, byte_size(Str)), Str].

%% Type fills the high 8 - N bits of the first octet.
integer(Type, N, Int) when Int < (1 bsl N) - 1 ->
	<<Type:(8 - N), Int:N>>;
integer(Type, N, Int) ->
	Max = (1 bsl N) - 1,
	int_tail(Int - Max, <<Type:(8 - N), Max:N>>).

int_tail(Int, Acc) when Int < 128 ->
	<<Acc/binary, Int>>;
int_tail(Int, Acc) ->
	int_tail(Int bsr 7, <<Acc/binary, 1:1, Int:7>>).

%% Static table (RFC 7541 Appendix A).

static(1) -> {<<":authority">>, <<>>};
static(2) -> {<<":method">>, <<"GET">>};
static(3) -> {<<":method">>, <<"POST">>};
static(4) -> {<<":path">>, <<"/">>};
static(5) -> {<<":path">>, <<"/index.html">>};
static(6) -> {<<":scheme">>, <<"http">>};
static(7) -> {<<":scheme">>, <<"https">>};
static(8) -> {<<":status">>, <<"200">>};
static(9) -> {<<":status">>, <<"204">>};
static(10) -> {<<":status">>, <<"206">>};
static(11) -> {<<":status">>, <<"304">>};
static(12) -> {<<":status">>, <<"400">>};
static(13) -> {<<":status">>, <<"404">>};
static(14) -> {<<":status">>, <<"500">>};
static(15) -> {<<"accept-charset">>, <<>>};
static(16) -> {<<"accept-encoding">>, <<"gzip, deflate">>};
static(17) -> {<<"accept-language">>, <<>>};
static(18) -> {<<"accept-ranges">>, <<>>};
static(19) -> {<<"accept">>, <<>>};
static(20) -> {<<"access-control-allow-origin">>, <<>>};
static(21) -> {<<"age">>, <<>>};
static(22) -> {<<"allow">>, <<>>};
static(23) -> {<<"authorization">>, <<>>};
static(24) -> {<<"cache-control">>, <<>>};
static(25) -> {<<"content-disposition">>, <<>>};
static(26) -> {<<"content-encoding">>, <<>>};
static(27) -> {<<"content-language">>, <<>>};
static(28) -> {<<"content-length">>, <<>>};
static(29) -> {<<"content-location">>, <<>>};
static(30) -> {<<"content-range">>, <<>>};
static(31) -> {<<"content-type">>, <<>>};
static(32) -> {<<"cookie">>, <<>>};
static(33) -> {<<"date">>, <<>>};
static(34) -> {<<"etag">>, <<>>};
static(35) -> {<<"expect">>, <<>>};
static(36) -> {<<"expires">>, <<>>};
static(37) -> {<<"from">>, <<>>};
static(38) -> {<<"host">>, <<>>};
static(39) -> {<<"if-match">>, <<>>};
static(40) -> {<<"if-modified-since">>, <<>>};
static(41) -> {<<"if-none-match">>, <<>>};
static(42) -> {<<"if-range">>, <<>>};
static(43) -> {<<"if-unmodified-since">>, <<>>};
static(44) -> {<<"last-modified">>, <<>>};
static(45) -> {<<"link">>, <<>>};
static(46) -> {<<"location">>, <<>>};
static(47) -> {<<"max-forwards">>, <<>>};
static(48) -> {<<"proxy-authenticate">>, <<>>};
static(49) -> {<<"proxy-authorization">>, <<>>};
static(50) -> {<<"range">>, <<>>};
static(51) -> {<<"referer">>, <<>>};
static(52) -> {<<"refresh">>, <<>>};
static(53) -> {<<"retry-after">>, <<>>};
static(54) -> {<<"server">>, <<>>};
static(55) -> {<<"set-cookie">>, <<>>};
static(56) -> {<<"strict-transport-security">>, <<>>};
static(57) -> {<<"transfer-encoding">>, <<>>};
static(58) -> {<<"user-agent">>, <<>>};
static(59) -> {<<"vary">>, <<>>};
static(60) -> {<<"via">>, <<>>};
static(61) -> {<<"www-authenticate">>, <<>>}.

%% Full matches. Of the names that have a value in the table, only
%% :authority (1) also has an entry with an empty value.
static_field(<<":authority">>, <<>>) -> 1;
static_field(<<":method">>, <<"GET">>) -> 2;
static_field(<<":method">>, <<"POST">>) -> 3;
static_field(<<":path">>, <<"/">>) -> 4;
static_field(<<":path">>, <<"/index.html">>) -> 5;
static_field(<<":scheme">>, <<"http">>) -> 6;
static_field(<<":scheme">>, <<"https">>) -> 7;
static_field(<<":status">>, <<"200">>) -> 8;
static_field(<<":status">>, <<"204">>) -> 9;
static_field(<<":status">>, <<"206">>) -> 10;
static_field(<<":status">>, <<"304">>) -> 11;
static_field(<<":status">>, <<"400">>) -> 12;
static_field(<<":status">>, <<"404">>) -> 13;
static_field(<<":status">>, <<"500">>) -> 14;
static_field(<<"accept-encoding">>, <<"gzip, deflate">>) -> 16;
static_field(Name, <<>>) ->
	case static_name(Name) of
		Index when Index =:= 1; Index >= 15, Index =/= 16 -> Index;
		_ -> none
	end;
static_field(_, _) ->
	none.

%% Name matches, first index of each name.
static_name(<<":authority">>) -> 1;
static_name(<<":method">>) -> 2;
static_name(<<":path">>) -> 4;
static_name(<<":scheme">>) -> 6;
static_name(<<":status">>) -> 8;
static_name(<<"accept-charset">>) -> 15;
static_name(<<"accept-encoding">>) -> 16;
static_name(<<"accept-language">>) -> 17;
static_name(<<"accept-ranges">>) -> 18;
static_name(<<"accept">>) -> 19;
static_name(<<"access-control-allow-origin">>) -> 20;
static_name(<<"age">>) -> 21;
static_name(<<"allow">>) -> 22;
static_name(<<"authorization">>) -> 23;
static_name(<<"cache-control">>) -> 24;
static_name(<<"content-disposition">>) -> 25;
static_name(<<"content-encoding">>) -> 26;
static_name(<<"content-language">>) -> 27;
static_name(<<"content-length">>) -> 28;
static_name(<<"content-location">>) -> 29;
static_name(<<"content-range">>) -> 30;
static_name(<<"content-type">>) -> 31;
static_name(<<"cookie">>) -> 32;
static_name(<<"date">>) -> 33;
static_name(<<"etag">>) -> 34;
static_name(<<"expect">>) -> 35;
static_name(<<"expires">>) -> 36;
static_name(<<"from">>) -> 37;
static_name(<<"host">>) -> 38;
static_name(<<"if-match">>) -> 39;
static_name(<<"if-modified-since">>) -> 40;
static_name(<<"if-none-match">>) -> 41;
static_name(<<"if-range">>) -> 42;
static_name(<<"if-unmodified-since">>) -> 43;
static_name(<<"last-modified">>) -> 44;
static_name(<<"link">>) -> 45;
static_name(<<"location">>) -> 46;
static_name(<<"max-forwards">>) -> 47;
static_name(<<"proxy-authenticate">>) -> 48;
static_name(<<"proxy-authorization">>) -> 49;
static_name(<<"range">>) -> 50;
static_name(<<"referer">>) -> 51;
static_name(<<"refresh">>) -> 52;
static_name(<<"retry-after">>) -> 53;
static_name(<<"server">>) -> 54;
static_name(<<"set-cookie">>) -> 55;
static_name(<<"strict-transport-security">>) -> 56;
static_name(<<"transfer-encoding">>) -> 57;
static_name(<<"user-agent">>) -> 58;
static_name(<<"vary">>) -> 59;
static_name(<<"via">>) -> 60;
static_name(<<"www-authenticate">>) -> 61;
static_name(_) -> none.
