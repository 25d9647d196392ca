%% Tests for the HTTP/3 frame codec (RFC 9114 6.2, 7, 8; RFC 9000 16).
%% Three kinds, as in STYLE.md 5:
%% - tables of inputs that must parse (the exact result and the rest) and
%%   of inputs that must fail (the exact code and the RFC section the reason
%%   cites); integers and limits at and one past each boundary;
%% - PropEr: build then parse, and any split of a frame sequence gives the
%%   same frames;
%% - bytes written by hand from the RFC's layouts, not by the builders.
-module(mustang_http3_frame_tests).

-include_lib("proper/include/proper.hrl").
-include_lib("eunit/include/eunit.hrl").

-define(M, mustang_http3_frame).

%% Shared with the QPACK and machine tests.
-export([cites/1]).
-export([err/1]).

%% The section a reason cites, once checked it is a sentence ending with it.
cites(Reason) ->
	case re:run(atom_to_list(Reason), "^[A-Z][^\\n]*\\. \\((RFC[0-9]+ [0-9]+(\\.[0-9]+)*)\\)$",
			[{capture, [1], list}]) of
		{match, [Section]} -> Section;
		nomatch -> {bad_reason, Reason}
	end.

err({error, {connection_error, Code, Reason}}) -> {Code, cites(Reason)};
err(Other) -> {not_an_error, Other}.

%% RFC 9000 16 and Appendix A.1: the examples, and each length at its
%% boundaries.
varint_test_() ->
	Cases = [
		{<<16#25>>, 37},
		{<<16#40, 16#25>>, 37},
		{<<16#7b, 16#bd>>, 15293},
		{<<16#9d, 16#7f, 16#3e, 16#7d>>, 494878333},
		{<<16#c2, 16#19, 16#7c, 16#5e, 16#ff, 16#14, 16#e8, 16#8c>>, 151288809941952652},
		{<<63>>, 63},
		{<<16#40, 64>>, 64},
		{<<16#7f, 16#ff>>, 16383},
		{<<16#80, 0, 16#40, 0>>, 16384},
		{<<16#bf, 16#ff, 16#ff, 16#ff>>, 16#3fffffff},
		{<<16#c0, 0, 0, 0, 16#40, 0, 0, 0>>, 16#40000000},
		{<<16#ff, 16#ff, 16#ff, 16#ff, 16#ff, 16#ff, 16#ff, 16#ff>>, 16#3fffffffffffffff}
	],
	[?_assertEqual({ok, Int, <<"rest">>}, ?M:decode_int(<<Bin/binary, "rest">>)) || {Bin, Int} <- Cases]
	++ [?_assertEqual({more, N}, ?M:decode_int(Bin)) || {Bin, N} <- [
		{<<>>, 1}, {<<16#40>>, 1}, {<<16#80, 0>>, 2}, {<<16#c0, 0, 0, 0, 0, 0, 0>>, 1}]]
	%% The shortest encoding, each length at its boundary.
	++ [?_assertEqual(Size, byte_size(?M:encode_int(Int))) || {Int, Size} <- [
		{0, 1}, {63, 1}, {64, 2}, {16383, 2}, {16384, 4}, {16#3fffffff, 4}, {16#40000000, 8},
		{16#3fffffffffffffff, 8}]]
	++ [?_assertError(function_clause, ?M:encode_int(16#4000000000000000))].

%% RFC 9114 7.2: each frame type as written by hand.
parse_test_() ->
	Max = 16384,
	Cases = [
		{<<1, 3, "abc", "next">>, {ok, {headers, <<"abc">>}, <<"next">>}},
		{<<1, 0>>, {ok, {headers, <<>>}, <<>>}},
		{<<3, 1, 7>>, {ok, {cancel_push, 7}, <<>>}},
		{<<4, 0>>, {ok, {settings, #{}}, <<>>}},
		{<<4, 9, 1, 16#50, 0, 6, 16#44, 0, 7, 16#40, 100>>,
			{ok, {settings, #{qpack_max_table_capacity => 4096, max_field_section_size => 1024,
				qpack_blocked_streams => 100}}, <<>>}},
		{<<4, 4, 8, 1, 16#33, 0>>,
			{ok, {settings, #{enable_connect_protocol => true, h3_datagram => false}}, <<>>}},
		%% Unknown and reserved identifiers are ignored (RFC 9114 7.2.4.1).
		{<<4, 6, 16#40, 16#21, 5, 16#40, 16#ff, 0>>, {ok, {settings, #{}}, <<>>}},
		{<<5, 4, 2, "blk">>, {ok, {push_promise, 2, <<"blk">>}, <<>>}},
		{<<7, 1, 4>>, {ok, {goaway, 4}, <<>>}},
		{<<7, 8, 16#c0, 0, 0, 0, 0, 0, 0, 4>>, {ok, {goaway, 4}, <<>>}},
		{<<13, 2, 16#40, 64>>, {ok, {max_push_id, 64}, <<>>}},
		%% DATA: only the header; the payload follows.
		{<<0, 5, "hel">>, {data, 5, <<"hel">>}},
		{<<0, 16#80, 1, 0, 0>>, {data, 65536, <<>>}},
		%% Unknown and reserved types (RFC 9114 7.2.8, 9).
		{<<16#21, 3, "abcd">>, {ignore, 3, <<"abcd">>}},
		{<<16#40, 16#40, 0, "x">>, {ignore, 0, <<"x">>}},
		{<<16#0e, 16#80, 0, 16#40, 0>>, {ignore, 16384, <<>>}},
		{<<16#80, 16#ff, 16#ff, 16#ff, 1, "x">>, {ignore, 1, <<"x">>}}
	],
	[?_assertEqual(Result, ?M:parse(Bin, Max)) || {Bin, Result} <- Cases].

more_test_() ->
	[
		?_assertEqual({more, 2}, ?M:parse(<<>>, 100)),
		?_assertEqual({more, 1}, ?M:parse(<<1>>, 100)),
		?_assertEqual({more, 2}, ?M:parse(<<16#40>>, 100)),
		?_assertEqual({more, 1}, ?M:parse(<<1, 16#40>>, 100)),
		?_assertEqual({more, 3}, ?M:parse(<<1, 3>>, 100)),
		?_assertEqual({more, 1}, ?M:parse(<<7, 2, 16#40>>, 100)),
		?_assertEqual({more, 1}, ?M:parse(<<4, 2, 1>>, 100))
	].

errors_test_() ->
	Cases = [
		%% HTTP/2 frame types (RFC 9114 7.2.8), refused as soon as the type is read.
		{<<2>>, {h3_frame_unexpected, "RFC9114 7.2.8"}},
		{<<6, 8, 0:64>>, {h3_frame_unexpected, "RFC9114 7.2.8"}},
		{<<8, 4, 0:32>>, {h3_frame_unexpected, "RFC9114 7.2.8"}},
		{<<9, 0>>, {h3_frame_unexpected, "RFC9114 7.2.8"}},
		{<<16#40, 9, 0>>, {h3_frame_unexpected, "RFC9114 7.2.8"}},
		%% Fields cut short or followed by more (RFC 9114 7.1).
		{<<7, 0>>, {h3_frame_error, "RFC9114 7.1"}},
		{<<7, 2, 4, 0>>, {h3_frame_error, "RFC9114 7.1"}},
		{<<7, 1, 16#40>>, {h3_frame_error, "RFC9114 7.1"}},
		{<<13, 0>>, {h3_frame_error, "RFC9114 7.1"}},
		{<<13, 2, 1, 1>>, {h3_frame_error, "RFC9114 7.1"}},
		{<<3, 0>>, {h3_frame_error, "RFC9114 7.1"}},
		{<<3, 2, 16#80, 0>>, {h3_frame_error, "RFC9114 7.1"}},
		{<<5, 0>>, {h3_frame_error, "RFC9114 7.1"}},
		{<<4, 1, 1>>, {h3_frame_error, "RFC9114 7.1"}},
		{<<4, 2, 1, 16#40>>, {h3_frame_error, "RFC9114 7.1"}},
		%% SETTINGS (RFC 9114 7.2.4, 7.2.4.1; RFC 8441 3; RFC 9297 2.1.1).
		{<<4, 4, 1, 0, 1, 0>>, {h3_settings_error, "RFC9114 7.2.4"}},
		{<<4, 4, 16#21, 0, 16#21, 1>>, {h3_settings_error, "RFC9114 7.2.4"}},
		{<<4, 2, 2, 0>>, {h3_settings_error, "RFC9114 7.2.4.1"}},
		{<<4, 2, 3, 0>>, {h3_settings_error, "RFC9114 7.2.4.1"}},
		{<<4, 2, 4, 0>>, {h3_settings_error, "RFC9114 7.2.4.1"}},
		{<<4, 2, 5, 0>>, {h3_settings_error, "RFC9114 7.2.4.1"}},
		{<<4, 2, 8, 2>>, {h3_settings_error, "RFC8441 3"}},
		{<<4, 3, 16#40, 16#33, 2>>, {h3_settings_error, "RFC9297 2.1.1"}}
	],
	[?_assertEqual({Bin, Expected}, {Bin, err(?M:parse(Bin, 16384))}) || {Bin, Expected} <- Cases].

%% The caller's limit, at and one past the boundary; DATA and unknown
%% frames are never refused for their length (their payload is not kept).
limit_test_() ->
	[
		?_assertMatch({ok, {headers, _}, <<>>}, ?M:parse(<<1, 10, 0:80>>, 10)),
		?_assertEqual({h3_excessive_load, "RFC9114 10.5"}, err(?M:parse(<<1, 11, 0:88>>, 10))),
		?_assertEqual({h3_excessive_load, "RFC9114 10.5"}, err(?M:parse(<<4, 11>>, 10))),
		?_assertEqual({data, 11, <<>>}, ?M:parse(<<0, 11>>, 10)),
		?_assertEqual({ignore, 11, <<>>}, ?M:parse(<<16#21, 11>>, 10)),
		?_assertMatch({ok, _, <<>>}, ?M:parse(<<1, 60, 0:480>>, infinity))
	].

build_test_() ->
	[
		?_assertEqual(<<0, 5, "hello">>, iolist_to_binary(?M:data(<<"hello">>))),
		?_assertEqual(<<0, 16#40, 64>>, ?M:data_header(64)),
		?_assertEqual(<<1, 3, "abc">>, iolist_to_binary(?M:headers(<<"abc">>))),
		?_assertEqual(<<1, 3, "abc">>, iolist_to_binary(?M:headers([<<"a">>, "bc"]))),
		?_assertEqual(<<3, 1, 7>>, ?M:cancel_push(7)),
		?_assertEqual(<<7, 8, 16#ff, 16#ff, 16#ff, 16#ff, 16#ff, 16#ff, 16#ff, 16#fc>>,
			?M:goaway(16#3ffffffffffffffc)),
		?_assertEqual(<<13, 1, 0>>, ?M:max_push_id(0)),
		?_assertEqual(<<5, 3, 1, "bk">>, iolist_to_binary(?M:push_promise(1, <<"bk">>))),
		%% Settings in the order of their identifiers.
		?_assertEqual(<<4, 11, 1, 16#50, 0, 6, 16#80, 1, 0, 0, 7, 16#40, 100>>,
			?M:settings(#{qpack_blocked_streams => 100, qpack_max_table_capacity => 4096,
				max_field_section_size => 65536})),
		?_assertEqual(<<4, 4, 8, 1, 16#33, 1>>,
			?M:settings(#{enable_connect_protocol => true, h3_datagram => true})),
		?_assertEqual(<<4, 2, 8, 0>>, ?M:settings(#{enable_connect_protocol => false})),
		?_assertEqual([16#21, 16#40, 16#5f], [?M:reserved_type(N) || N <- [0, 1, 2]])
	].

stream_type_test_() ->
	[?_assertEqual({ok, Type, <<"x">>}, ?M:parse_stream_type(<<Bin/binary, "x">>)) || {Bin, Type} <- [
		{<<0>>, control}, {<<1>>, push}, {<<2>>, encoder}, {<<3>>, decoder},
		{<<16#40, 0>>, control}, {<<16#21>>, {unknown, 16#21}}, {<<4>>, {unknown, 4}}]]
	++ [?_assertEqual({more, 1}, ?M:parse_stream_type(<<>>)),
		?_assertEqual({more, 3}, ?M:parse_stream_type(<<16#80>>))]
	++ [?_assertEqual({ok, T, <<>>}, ?M:parse_stream_type(?M:stream_type(T)))
		|| T <- [control, push, encoder, decoder]].

%% RFC 9114 8.1, RFC 9204 6; an unknown code is h3_no_error (RFC 9114 8).
code_test_() ->
	Codes = [{16#100, h3_no_error}, {16#101, h3_general_protocol_error}, {16#102, h3_internal_error},
		{16#103, h3_stream_creation_error}, {16#104, h3_closed_critical_stream},
		{16#105, h3_frame_unexpected}, {16#106, h3_frame_error}, {16#107, h3_excessive_load},
		{16#108, h3_id_error}, {16#109, h3_settings_error}, {16#10a, h3_missing_settings},
		{16#10b, h3_request_rejected}, {16#10c, h3_request_cancelled},
		{16#10d, h3_request_incomplete}, {16#10e, h3_message_error}, {16#10f, h3_connect_error},
		{16#110, h3_version_fallback}, {16#200, qpack_decompression_failed},
		{16#201, qpack_encoder_stream_error}, {16#202, qpack_decoder_stream_error}],
	[?_assertEqual({Int, Name}, {?M:code(Name), ?M:code_name(Int)}) || {Int, Name} <- Codes]
	++ [?_assertEqual(h3_no_error, ?M:code_name(Int)) || Int <- [0, 16#111, 16#1f * 3 + 16#21]].

%% Properties.

frame() ->
	oneof([
		{headers, binary()},
		{cancel_push, varint()},
		{settings, settings()},
		{push_promise, varint(), binary()},
		{goaway, varint()},
		{max_push_id, varint()},
		{data, binary()},
		{unknown, binary()}
	]).

varint() ->
	oneof([range(0, 63), range(64, 16383), range(16384, 16#3fffffff),
		range(16#40000000, 16#3fffffffffffffff)]).

settings() ->
	?LET(L, list(oneof([{qpack_max_table_capacity, varint()}, {max_field_section_size, varint()},
			{qpack_blocked_streams, varint()}, {enable_connect_protocol, boolean()},
			{h3_datagram, boolean()}])),
		maps:from_list(L)).

build({headers, B}) -> ?M:headers(B);
build({cancel_push, I}) -> ?M:cancel_push(I);
build({settings, S}) -> ?M:settings(S);
build({push_promise, I, B}) -> ?M:push_promise(I, B);
build({goaway, I}) -> ?M:goaway(I);
build({max_push_id, I}) -> ?M:max_push_id(I);
build({data, B}) -> ?M:data(B);
build({unknown, B}) -> [?M:encode_int(?M:reserved_type(7)), ?M:encode_int(byte_size(B)), B].

%% Reads frames from pieces the way a stream delivers them: the frame
%% header and non-DATA payloads joined once complete, DATA and unknown
%% payloads taken as they come.
read_all(Pieces) ->
	read(Pieces, <<>>, header, []).

read([], <<>>, header, Acc) ->
	lists:reverse(Acc);
read([], Rest, State, Acc) ->
	{incomplete, Rest, State, lists:reverse(Acc)};
read([P | Ps], Buf, State, Acc) ->
	step(<<Buf/binary, P/binary>>, Ps, State, Acc).

step(Bin, Ps, header, Acc) ->
	case ?M:parse(Bin, infinity) of
		{ok, Frame, Rest} -> step(Rest, Ps, header, [Frame | Acc]);
		{data, Len, Rest} -> step(Rest, Ps, {data, Len, []}, Acc);
		{ignore, Len, Rest} -> step(Rest, Ps, {skip, Len, []}, Acc);
		{more, _} -> read(Ps, Bin, header, Acc)
	end;
step(Bin, Ps, {Kind, Left, Got}, Acc) ->
	case Bin of
		<<Piece:Left/binary, Rest/bits>> ->
			Payload = iolist_to_binary(lists:reverse([Piece | Got])),
			step(Rest, Ps, header, [{Kind, Payload} | Acc]);
		_ ->
			read(Ps, <<>>, {Kind, Left - byte_size(Bin), [Bin | Got]}, Acc)
	end.

expected({unknown, B}) -> {skip, B};
expected(Frame) -> Frame.

splits(Bin) ->
	?LET(Cuts, list(range(0, byte_size(Bin))), cut(Bin, lists:usort(Cuts), 0)).

cut(Bin, [], Pos) -> [binary:part(Bin, Pos, byte_size(Bin) - Pos)];
cut(Bin, [C | Cs], Pos) -> [binary:part(Bin, Pos, C - Pos) | cut(Bin, Cs, C)].

prop_roundtrip_split() ->
	?FORALL(Frames, list(frame()),
		begin
			Bin = iolist_to_binary([build(F) || F <- Frames]),
			?FORALL(Pieces, splits(Bin),
				read_all(Pieces) =:= [expected(F) || F <- Frames])
		end).

%% Random bytes never crash the parser, and give one of the documented
%% results.
prop_random() ->
	?FORALL(Bin, binary(),
		case ?M:parse(Bin, 64) of
			{ok, _, Rest} -> is_binary(Rest);
			{data, Len, Rest} -> is_integer(Len) andalso is_binary(Rest);
			{ignore, Len, Rest} -> is_integer(Len) andalso is_binary(Rest);
			{more, N} -> is_integer(N) andalso N > 0;
			{error, {connection_error, Code, Reason}} ->
				is_tuple(cites(Reason)) =:= false andalso is_integer(?M:code(Code))
		end).

proper_test_() ->
	[
		{timeout, 120, ?_assert(proper:quickcheck(prop_roundtrip_split(), [{numtests, 300}, {to_file, user}]))},
		{timeout, 120, ?_assert(proper:quickcheck(prop_random(), [{numtests, 3000}, {to_file, user}]))}
	].
