%% The QPACK encoder (RFC 9204 2.1, 4.3, 4.5): our field sections, our
%% encoder stream, and the peer's decoder stream. Pure; called through
%% mustang_qpack, whose head comment gives the contract and error shape.
%%
%% Strategy, safe first:
%% - Until the peer's SETTINGS arrive, and whenever its
%%   SETTINGS_QPACK_MAX_TABLE_CAPACITY or our max_table_capacity option is
%%   0, only the static table and literals are used: nothing is ever sent on
%%   the encoder stream (RFC 9204 3.2.3).
%% - Otherwise the capacity is set once to the smaller of the two. A field is
%%   inserted the second time it is seen (responses repeat the same
%%   content-type, server, cache-control...), when its entry takes at most a
%%   quarter of the table and the room can be made by evicting only entries
%%   that are evictable: acknowledged by the decoder and referenced by no
%%   unacknowledged field section nor by the section being encoded (RFC 9204
%%   2.1.1). Names whose values are secrets or unique (authorization,
%%   cookie, set-cookie, proxy-authorization) are never inserted.
%% - A reference to an entry the decoder has not acknowledged may block the
%%   stream: it is used only while the number of streams that could be
%%   blocked stays within the peer's SETTINGS_QPACK_BLOCKED_STREAMS (RFC
%%   9204 2.1.2); otherwise the field is sent as a literal (the insertion
%%   still helps the sections that follow).
%% - Base is the Insert Count after the section's insertions, so every
%%   reference is a pre-Base relative index (RFC 9204 4.5.1.2).
%% - If the decoder stops acknowledging, at most ?MAX_UNACKED sections with
%%   references are remembered; past that the encoder falls back to static
%%   and literal representations, so memory stays bounded.
%% - Strings are Huffman-coded when that is shorter (option huffman, true).
-module(mustang_qpack_encoder).

-export([init/1]).
-export([settings/2]).
-export([encode/3]).
-export([feed/2]).

-export_type([encoder/0, opts/0]).

-type opts() :: #{max_table_capacity => non_neg_integer(), huffman => boolean()}.
-type field() :: {binary(), binary()}.

-record(enc, {
	%% Options: the most of the peer's table we use (0: static only).
	max_capacity :: non_neg_integer(),
	huffman :: boolean(),
	%% The peer's SETTINGS_QPACK_MAX_TABLE_CAPACITY (it sets MaxEntries for
	%% the Required Insert Count, RFC 9204 4.5.1.1) and
	%% SETTINGS_QPACK_BLOCKED_STREAMS.
	peer_max_capacity = 0 :: non_neg_integer(),
	max_blocked = 0 :: non_neg_integer(),
	%% The dynamic table as the peer's decoder has it once it read our
	%% encoder stream: entries by absolute index, from dropped to inserted - 1,
	%% and the newest index of each field and of each name.
	capacity = 0 :: non_neg_integer(),
	size = 0 :: non_neg_integer(),
	inserted = 0 :: non_neg_integer(),
	dropped = 0 :: non_neg_integer(),
	entries = #{} :: #{non_neg_integer() => field()},
	fields = #{} :: #{field() => non_neg_integer()},
	names = #{} :: #{binary() => non_neg_integer()},
	%% The Known Received Count, the references of unacknowledged sections
	%% by entry, and those sections by stream (oldest first) with their
	%% Required Insert Count.
	krc = 0 :: non_neg_integer(),
	refs = #{} :: #{non_neg_integer() => pos_integer()},
	sections = #{} :: #{non_neg_integer() => [{pos_integer(), [non_neg_integer()]}]},
	unacked = 0 :: non_neg_integer(),
	%% Hashes of fields seen once.
	seen = #{} :: #{integer() => true},
	%% A partial decoder stream instruction (a few bytes at most).
	buffer = <<>> :: binary()
}).

-opaque encoder() :: #enc{}.

-define(W, mustang_qpack_wire).
-define(MAX_UNACKED, 1000).
-define(MAX_SEEN, 256).

-spec init(opts()) -> encoder().
init(Opts) ->
	#enc{max_capacity = maps:get(max_table_capacity, Opts, 4096),
		huffman = maps:get(huffman, Opts, true)}.

-spec settings(mustang_http3_frame:settings(), encoder()) -> {iodata(), encoder()}.
settings(Settings, E = #enc{max_capacity = Max}) ->
	PeerMax = maps:get(qpack_max_table_capacity, Settings, 0),
	E2 = E#enc{peer_max_capacity = PeerMax,
		max_blocked = maps:get(qpack_blocked_streams, Settings, 0)},
	case min(PeerMax, Max) of
		0 -> {[], E2};
		Capacity -> {?W:set_capacity(Capacity), E2#enc{capacity = Capacity}}
	end.

%% Encoding.

-spec encode(non_neg_integer(), [{binary(), iodata()}], encoder()) -> {iodata(), iodata(), encoder()}.
encode(_, Fields, E = #enc{capacity = Capacity, unacked = Unacked})
		when Capacity =:= 0; Unacked >= ?MAX_UNACKED ->
	{[0, 0 | [static_line(Name, value(Value), E) || {Name, Value} <- Fields]], [], E};
encode(StreamID, Fields, E0) ->
	CanBlock = blocking(StreamID, E0) orelse count_blocking(E0) < E0#enc.max_blocked,
	{Reps, Instructions, Refs, E} = lines(Fields, CanBlock, E0, [], [], []),
	Base = E#enc.inserted,
	Lines = [line(Rep, Base, E) || Rep <- Reps],
	case Refs of
		[] ->
			{[0, 0 | Lines], Instructions, E};
		_ ->
			RIC = lists:max(Refs) + 1,
			MaxEntries = E#enc.peer_max_capacity div 32,
			Prefix = [?W:int_bin(RIC rem (2 * MaxEntries) + 1, 8, 0), ?W:int_bin(Base - RIC, 7, 0)],
			{[Prefix | Lines], Instructions, record_section(StreamID, RIC, Refs, E)}
	end.

value(Value) when is_binary(Value) -> Value;
value(Value) -> iolist_to_binary(Value).

lines([], _, E, Reps, Instructions, Refs) ->
	{lists:reverse(Reps), lists:reverse(Instructions), lists:usort(Refs), E};
lines([{Name, Value0} | Fields], CanBlock, E, Reps, Instructions, Refs) ->
	Value = value(Value0),
	Field = {Name, Value},
	case usable(maps:get(Field, E#enc.fields, none), CanBlock, E) of
		true ->
			Abs = map_get(Field, E#enc.fields),
			lines(Fields, CanBlock, E, [{dynamic, Abs} | Reps], Instructions, [Abs | Refs]);
		false ->
			case mustang_qpack_static:find(Name, Value) of
				{field, I} ->
					lines(Fields, CanBlock, E, [{static, I} | Reps], Instructions, Refs);
				Static ->
					case insert(Field, Static, Refs, E) of
						{ok, Instruction, Abs, E2} when CanBlock ->
							lines(Fields, CanBlock, E2, [{dynamic, Abs} | Reps],
								[Instruction | Instructions], [Abs | Refs]);
						{ok, Instruction, _, E2} ->
							{Rep, Refs2} = literal(Field, Static, CanBlock, E2, Refs),
							lines(Fields, CanBlock, E2, [Rep | Reps], [Instruction | Instructions], Refs2);
						{no, E2} ->
							{Rep, Refs2} = literal(Field, Static, CanBlock, E2, Refs),
							lines(Fields, CanBlock, E2, [Rep | Reps], Instructions, Refs2)
					end
			end
	end.

%% Whether an entry may be referenced: still in the table, and either
%% acknowledged or allowed to block the stream.
usable(none, _, _) -> false;
usable(Abs, _, #enc{dropped = Dropped}) when Abs < Dropped -> false;
usable(Abs, CanBlock, #enc{krc = KRC}) -> Abs < KRC orelse CanBlock.

literal({_, Value}, {name, I}, _, _, Refs) ->
	{{static_name, I, Value}, Refs};
literal(Field = {Name, Value}, none, CanBlock, E, Refs) ->
	Abs = maps:get(Name, E#enc.names, none),
	case usable(Abs, CanBlock, E) of
		true -> {{dynamic_name, Abs, Value}, [Abs | Refs]};
		false -> {{literal, Field}, Refs}
	end.

line({static, I}, _, _) -> ?W:int_bin(I, 6, 2#11);
line({dynamic, Abs}, Base, _) -> ?W:int_bin(Base - 1 - Abs, 6, 2#10);
line({static_name, I, Value}, _, E) -> [?W:int_bin(I, 4, 2#0101), string(Value, 7, 0, E)];
line({dynamic_name, Abs, Value}, Base, E) ->
	[?W:int_bin(Base - 1 - Abs, 4, 2#0100), string(Value, 7, 0, E)];
line({literal, {Name, Value}}, _, E) -> [string(Name, 3, 2#0010, E), string(Value, 7, 0, E)].

static_line(Name, Value, E) ->
	case mustang_qpack_static:find(Name, Value) of
		{field, I} -> line({static, I}, 0, E);
		{name, I} -> line({static_name, I, Value}, 0, E);
		none -> line({literal, {Name, Value}}, 0, E)
	end.

string(S, Bits, High, #enc{huffman = true}) -> ?W:string_bin(S, Bits, High);
string(S, Bits, High, #enc{huffman = false}) -> [?W:int_bin(byte_size(S), Bits, High * 2), S].

%% Insertion: the second time a field is seen, when it takes at most a
%% quarter of the table and room can be made. The fields seen are kept as
%% hashes, at most ?MAX_SEEN of them (then forgotten at once).
insert({Name, _}, _, _, E) when Name =:= <<"authorization">>; Name =:= <<"cookie">>;
		Name =:= <<"set-cookie">>; Name =:= <<"proxy-authorization">> ->
	{no, E};
insert(Field = {Name, Value}, Static, SectionRefs, E = #enc{seen = Seen, capacity = Capacity}) ->
	Size = byte_size(Name) + byte_size(Value) + 32,
	Hash = erlang:phash2(Field),
	case Seen of
		_ when Size * 4 > Capacity ->
			{no, E};
		#{Hash := _} ->
			case room(Size, SectionRefs, E) of
				{ok, Evict} -> insert_entry(Field, Static, Size, Evict, E);
				no -> {no, E}
			end;
		_ when map_size(Seen) >= ?MAX_SEEN ->
			{no, E#enc{seen = #{Hash => true}}};
		_ ->
			{no, E#enc{seen = Seen#{Hash => true}}}
	end.

%% How many of the oldest entries must go for Size more octets, if they are
%% all evictable (RFC 9204 2.1.1).
room(Size, SectionRefs, E = #enc{size = Used, capacity = Capacity, dropped = Dropped}) ->
	room(Used + Size - Capacity, Dropped, SectionRefs, E, 0).

room(Excess, _, _, _, N) when Excess =< 0 ->
	{ok, N};
room(Excess, Abs, SectionRefs, E = #enc{krc = KRC, refs = Refs, entries = Entries}, N) ->
	case Abs < KRC andalso not is_map_key(Abs, Refs) andalso not lists:member(Abs, SectionRefs) of
		true ->
			{Name, Value} = map_get(Abs, Entries),
			room(Excess - byte_size(Name) - byte_size(Value) - 32, Abs + 1, SectionRefs, E, N + 1);
		false ->
			no
	end.

insert_entry(Field = {Name, Value}, Static, Size, Evict, E0) ->
	%% The name reference is taken before the evictions: RFC 9204 3.2.2
	%% lets an insertion name an entry that it evicts.
	Instruction = case Static of
		{name, I} ->
			?W:insert_name_ref(static, I, Value, E0#enc.huffman);
		none ->
			case maps:get(Name, E0#enc.names, none) of
				none -> ?W:insert_literal(Name, Value, E0#enc.huffman);
				NameAbs -> ?W:insert_name_ref(dynamic, E0#enc.inserted - 1 - NameAbs, Value,
					E0#enc.huffman)
			end
	end,
	E = #enc{inserted = Abs, entries = Entries} = evict(Evict, E0),
	{ok, Instruction, Abs, E#enc{inserted = Abs + 1, size = E#enc.size + Size,
		entries = Entries#{Abs => Field}, fields = (E#enc.fields)#{Field => Abs},
		names = (E#enc.names)#{Name => Abs}}}.

evict(0, E) ->
	E;
evict(N, E = #enc{dropped = Abs, entries = Entries, fields = Fields, names = Names}) ->
	{Field = {Name, Value}, Entries2} = maps:take(Abs, Entries),
	Fields2 = case Fields of
		#{Field := Abs} -> maps:remove(Field, Fields);
		_ -> Fields
	end,
	Names2 = case Names of
		#{Name := Abs} -> maps:remove(Name, Names);
		_ -> Names
	end,
	evict(N - 1, E#enc{dropped = Abs + 1, entries = Entries2, fields = Fields2, names = Names2,
		size = E#enc.size - byte_size(Name) - byte_size(Value) - 32}).

%% Sections with references are remembered until acknowledged or cancelled.
record_section(StreamID, RIC, Refs, E = #enc{sections = Sections, refs = RefCounts}) ->
	RefCounts2 = lists:foldl(fun(Abs, Acc) -> maps:update_with(Abs, fun(C) -> C + 1 end, 1, Acc) end,
		RefCounts, Refs),
	E#enc{sections = Sections#{StreamID => maps:get(StreamID, Sections, []) ++ [{RIC, Refs}]},
		refs = RefCounts2, unacked = E#enc.unacked + 1}.

release(Refs, RefCounts) ->
	lists:foldl(fun(Abs, Acc) ->
		case map_get(Abs, Acc) of
			1 -> maps:remove(Abs, Acc);
			C -> Acc#{Abs := C - 1}
		end
	end, RefCounts, Refs).

%% A stream could be blocked while one of its sections needs entries the
%% decoder has not acknowledged.
blocking(StreamID, #enc{sections = Sections, krc = KRC}) ->
	lists:any(fun({RIC, _}) -> RIC > KRC end, maps:get(StreamID, Sections, [])).

count_blocking(E = #enc{sections = Sections}) ->
	length([S || S <- maps:keys(Sections), blocking(S, E)]).

%% The decoder stream (RFC 9204 4.4).

-spec feed(binary(), encoder()) -> {ok, encoder()} | {error, mustang_qpack:error()}.
feed(Data, E = #enc{buffer = Buffer}) ->
	try instructions(<<Buffer/binary, Data/binary>>, E#enc{buffer = <<>>}) of
		E2 -> {ok, E2}
	catch
		throw:{qpack, Reason} -> {error, {connection_error, qpack_decoder_stream_error, Reason}}
	end.

instructions(<<>>, E) ->
	E;
instructions(Bin = <<1:1, S0:7, R0/bits>>, E) ->
	case int(S0, 7, R0) of
		{ok, StreamID, R} -> instructions(R, section_ack(StreamID, E));
		more -> E#enc{buffer = Bin}
	end;
instructions(Bin = <<0:1, 1:1, S0:6, R0/bits>>, E) ->
	case int(S0, 6, R0) of
		{ok, StreamID, R} -> instructions(R, cancel(StreamID, E));
		more -> E#enc{buffer = Bin}
	end;
instructions(Bin = <<0:2, I0:6, R0/bits>>, E) ->
	case int(I0, 6, R0) of
		{ok, 0, _} ->
			throw({qpack, 'An Insert Count Increment must not be zero. (RFC9204 4.4.3)'});
		{ok, I, _} when E#enc.krc + I > E#enc.inserted ->
			throw({qpack, 'An Insert Count Increment must not go past the entries inserted. (RFC9204 4.4.3)'});
		{ok, I, R} ->
			instructions(R, E#enc{krc = E#enc.krc + I});
		more ->
			E#enc{buffer = Bin}
	end.

int(Prefix, Bits, Bin) ->
	case ?W:int(Prefix, Bits, Bin) of
		too_large -> throw({qpack, 'An integer is larger than 2^62-1. (RFC9204 4.1.1)'});
		Other -> Other
	end.

%% RFC 9204 4.4.1: the oldest unacknowledged section of the stream.
section_ack(StreamID, E = #enc{sections = Sections}) ->
	case Sections of
		#{StreamID := [{RIC, Refs} | Rest]} ->
			Sections2 = case Rest of
				[] -> maps:remove(StreamID, Sections);
				_ -> Sections#{StreamID := Rest}
			end,
			E#enc{sections = Sections2, refs = release(Refs, E#enc.refs),
				krc = max(E#enc.krc, RIC), unacked = E#enc.unacked - 1};
		_ ->
			throw({qpack, 'A Section Acknowledgment must name a stream with an unacknowledged field section. (RFC9204 4.4.1)'})
	end.

%% RFC 9204 4.4.2: the stream's sections will never be acknowledged.
cancel(StreamID, E = #enc{sections = Sections}) ->
	case maps:take(StreamID, Sections) of
		{Pending, Sections2} ->
			Refs = lists:foldl(fun({_, R}, Acc) -> release(R, Acc) end, E#enc.refs, Pending),
			E#enc{sections = Sections2, refs = Refs, unacked = E#enc.unacked - length(Pending)};
		error ->
			E
	end.
