%% Tests for mustang_utf8: RFC 3629 cases in the style of Markus Kuhn's
%% UTF-8 decoder stress test, each split at every byte position (and every
%% pair of positions) with ASCII around it so that the 8-byte fast path
%% meets the sequence at every alignment; and properties against
%% unicode:characters_to_binary/1.
-module(mustang_utf8_tests).

-define(BAD, {error, {ws_error, 1007, 'Text messages must be valid UTF-8. (RFC6455 8.1)'}}).

-include_lib("proper/include/proper.hrl").
-include_lib("eunit/include/eunit.hrl").

%% {Name, Bytes, Valid}
cases() ->
	[
		{empty, <<>>, true},
		{ascii, <<"Hello, world!">>, true},
		{nul, <<0>>, true},
		{del, <<16#7F>>, true},
		{kosme, <<"κόσμε"/utf8>>, true},
		%% First and last code points of each length.
		{first_2, <<16#C2, 16#80>>, true},
		{last_2, <<16#DF, 16#BF>>, true},
		{first_3, <<16#E0, 16#A0, 16#80>>, true},
		{last_3, <<16#EF, 16#BF, 16#BF>>, true},
		{first_4, <<16#F0, 16#90, 16#80, 16#80>>, true},
		{last_4, <<16#F4, 16#8F, 16#BF, 16#BF>>, true},
		%% Around the surrogates.
		{before_surrogates, <<16#ED, 16#9F, 16#BF>>, true},
		{after_surrogates, <<16#EE, 16#80, 16#80>>, true},
		{bom, <<16#EF, 16#BB, 16#BF>>, true},
		{noncharacter_fffe, <<16#EF, 16#BF, 16#BE>>, true},
		{cjk_emoji, <<"漢字 😀"/utf8>>, true},
		%% Overlong forms.
		{overlong_c0, <<16#C0, 16#80>>, false},
		{overlong_c1, <<16#C1, 16#BF>>, false},
		{overlong_slash_2, <<16#C0, 16#AF>>, false},
		{overlong_3, <<16#E0, 16#80, 16#80>>, false},
		{overlong_3_max, <<16#E0, 16#9F, 16#BF>>, false},
		{overlong_slash_3, <<16#E0, 16#80, 16#AF>>, false},
		{overlong_4, <<16#F0, 16#80, 16#80, 16#80>>, false},
		{overlong_4_max, <<16#F0, 16#8F, 16#BF, 16#BF>>, false},
		{overlong_5, <<16#F8, 16#80, 16#80, 16#80, 16#AF>>, false},
		{overlong_6, <<16#FC, 16#80, 16#80, 16#80, 16#80, 16#AF>>, false},
		%% Surrogates, alone and paired.
		{surrogate_first, <<16#ED, 16#A0, 16#80>>, false},
		{surrogate_last, <<16#ED, 16#BF, 16#BF>>, false},
		{surrogate_high_last, <<16#ED, 16#AF, 16#BF>>, false},
		{surrogate_pair, <<16#ED, 16#A0, 16#80, 16#ED, 16#B0, 16#80>>, false},
		%% Above U+10FFFF.
		{above_max, <<16#F4, 16#90, 16#80, 16#80>>, false},
		{above_max_f5, <<16#F5, 16#80, 16#80, 16#80>>, false},
		{above_max_f7, <<16#F7, 16#BF, 16#BF, 16#BF>>, false},
		%% Bytes that never appear.
		{byte_fe, <<16#FE>>, false},
		{byte_ff, <<16#FF>>, false},
		%% Continuation bytes without a start.
		{lone_80, <<16#80>>, false},
		{lone_bf, <<16#BF>>, false},
		{two_continuations, <<16#80, 16#BF>>, false},
		%% Starts not followed by enough continuation bytes.
		{truncated_2, <<16#C2>>, false},
		{truncated_3_1, <<16#E0>>, false},
		{truncated_3_2, <<16#E0, 16#A0>>, false},
		{truncated_4_1, <<16#F0>>, false},
		{truncated_4_2, <<16#F0, 16#90>>, false},
		{truncated_4_3, <<16#F0, 16#90, 16#80>>, false},
		{truncated_f4_3, <<16#F4, 16#8F, 16#BF>>, false},
		{start_then_ascii, <<16#E0, 16#A0, $A>>, false},
		{start_then_start, <<16#C2, 16#C2, 16#80>>, false},
		{lone_start_space, <<16#C2, $\s>>, false},
		{too_many_continuations, <<16#C2, 16#80, 16#80>>, false}
	].

%% The sequence with ASCII before and after, so that it meets the 8-byte
%% fast path at every alignment.
padded() ->
	[{{Name, Before, After}, <<(binary:copy(<<"a">>, Before))/binary, Bytes/binary,
			(binary:copy(<<"z">>, After))/binary>>, Valid}
		|| {Name, Bytes, Valid} <- cases(), Before <- [0, 1, 3, 7, 8, 9], After <- [0, 5, 8]].

%% Validation in pieces, ending with finish/1.
pieces(Pieces) ->
	pieces(Pieces, mustang_utf8:init()).

pieces([], St) ->
	mustang_utf8:finish(St) =:= ok;
pieces([P|Tail], St) ->
	case mustang_utf8:validate(P, St) of
		{ok, St2} -> pieces(Tail, St2);
		?BAD -> false
	end.

whole_test_() ->
	[{atom_to_list(Name), ?_assertEqual(Valid, mustang_utf8:validate(Bin) =:= ok)}
		|| {Name, Bin, Valid} <- cases()].

%% Reference: our table and OTP agree on every case.
table_agrees_with_otp_test() ->
	[?assertEqual({Name, Valid}, {Name, is_binary(unicode:characters_to_binary(Bin))})
		|| {Name, Bin, Valid} <- cases()].

split_in_two_test() ->
	[?assertEqual({Id, At, Valid}, {Id, At, pieces([binary:part(Bin, 0, At),
			binary:part(Bin, At, byte_size(Bin) - At)])})
		|| {Id, Bin, Valid} <- padded(), At <- lists:seq(0, byte_size(Bin))].

split_in_three_test() ->
	[?assertEqual({Name, A, B, Valid}, {Name, A, B, pieces([binary:part(Bin, 0, A),
			binary:part(Bin, A, B - A), binary:part(Bin, B, byte_size(Bin) - B)])})
		|| {Name, Bin0, Valid} <- cases(), Bin <- [<<"x", Bin0/binary, "y">>],
			A <- lists:seq(0, byte_size(Bin)), B <- lists:seq(A, byte_size(Bin))].

one_byte_at_a_time_test() ->
	[?assertEqual({Id, Valid}, {Id, pieces([<<C>> || <<C>> <= Bin])})
		|| {Id, Bin, Valid} <- padded()].

%% An invalid sequence is refused at once, not at the end of the message.
early_error_test_() ->
	[?_assertEqual(?BAD, mustang_utf8:validate(B, mustang_utf8:init()))
		|| B <- [<<16#E0, 16#80>>, <<16#ED, 16#A0>>, <<16#F4, 16#90>>, <<16#F0, 16#80>>,
			<<16#C0>>, <<16#F5>>, <<"abc", 16#80>>]].

%% A valid prefix is carried; finish/1 refuses it, more bytes complete it.
carry_test() ->
	{ok, St} = mustang_utf8:validate(<<"abc", 16#F0, 16#9F>>, mustang_utf8:init()),
	?assertEqual(?BAD, mustang_utf8:finish(St)),
	{ok, St2} = mustang_utf8:validate(<<16#98>>, St),
	{ok, St3} = mustang_utf8:validate(<<16#80, "def">>, St2),
	?assertEqual(ok, mustang_utf8:finish(St3)),
	?assertEqual(?BAD, mustang_utf8:validate(<<$a>>, St2)).

large_test() ->
	Text = unicode:characters_to_binary(lists:duplicate(10000, "Grüße, мир, 世界 😀 ")),
	?assertEqual(ok, mustang_utf8:validate(Text)),
	Bad = <<Text/binary, 16#ED, 16#A0, 16#80, Text/binary>>,
	?assertEqual(?BAD, mustang_utf8:validate(Bad)).

%% Properties.

prop_agrees_with_otp_on_random_bytes() ->
	?FORALL(Bin, binary(), agrees(Bin)).

prop_agrees_with_otp_on_mutated_text() ->
	?FORALL({Text, Mutations}, {utf8_text(), list({non_neg_integer(), byte()})},
		agrees(mutate(Text, Mutations))).

prop_split_does_not_matter() ->
	?FORALL({Bin, Cuts}, {oneof([binary(), utf8_text()]), list(non_neg_integer())},
		pieces(split(Bin, Cuts)) =:= (mustang_utf8:validate(Bin) =:= ok)).

agrees(Bin) ->
	(mustang_utf8:validate(Bin) =:= ok) =:= is_binary(unicode:characters_to_binary(Bin)).

utf8_text() ->
	?LET(Chars, list(oneof([range(0, 127), range(128, 16#7FF), range(16#800, 16#D7FF),
			range(16#E000, 16#FFFF), range(16#10000, 16#10FFFF)])),
		unicode:characters_to_binary(Chars)).

mutate(Bin, []) ->
	Bin;
mutate(<<>>, _) ->
	<<>>;
mutate(Bin, [{Pos0, Byte}|Tail]) ->
	Pos = Pos0 rem byte_size(Bin),
	<<Before:Pos/binary, _, After/binary>> = Bin,
	mutate(<<Before/binary, Byte, After/binary>>, Tail).

split(Bin, Cuts) ->
	Positions = lists:usort([C rem (byte_size(Bin) + 1) || C <- Cuts]),
	split(Bin, [0|Positions] ++ [byte_size(Bin)], []).

split(_, [_], Acc) ->
	lists:reverse(Acc);
split(Bin, [A, B|Tail], Acc) ->
	split(Bin, [B|Tail], [binary:part(Bin, A, B - A)|Acc]).

proper_test_() ->
	{timeout, 120, [
		?_assert(proper:quickcheck(P, [{numtests, 2000}, {to_file, user}]))
		|| P <- [prop_agrees_with_otp_on_random_bytes(),
			prop_agrees_with_otp_on_mutated_text(),
			prop_split_does_not_matter()]]}.
