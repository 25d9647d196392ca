%% mustang_transport:send_in_pieces/3: the pieces, joined, are the data;
%% each is at most the piece size, and only the last may be shorter; an
%% error stops the writes.
-module(mustang_transport_tests).

-include_lib("proper/include/proper.hrl").
-include_lib("eunit/include/eunit.hrl").

pieces(Data, Max) ->
	Self = make_ref(),
	ok = mustang_transport:send_in_pieces(fun(Piece) -> self() ! {Self, Piece}, ok end, Data, Max),
	gather(Self, []).

gather(Ref, Acc) ->
	receive {Ref, Piece} -> gather(Ref, [iolist_to_binary(Piece) | Acc])
	after 0 -> lists:reverse(Acc)
	end.

small_binary_one_write_test() ->
	?assertEqual([<<"hello">>], pieces(<<"hello">>, 10)).

binary_split_test() ->
	?assertEqual([<<"abc">>, <<"def">>, <<"g">>], pieces(<<"abcdefg">>, 3)).

iolist_exact_pieces_test() ->
	?assertEqual([<<"abcd">>, <<"efgh">>], pieces([$a, [<<"bc">>, $d], [[<<"efg">>] | <<"h">>]], 4)).

empty_test() ->
	?assertEqual([], pieces([[], <<>>], 4)).

error_stops_test() ->
	Self = self(),
	Send = fun(Piece) -> Self ! {piece, iolist_to_binary(Piece)}, {error, timeout} end,
	?assertEqual({error, timeout}, mustang_transport:send_in_pieces(Send, <<"abcdefgh">>, 3)),
	?assertEqual([{piece, <<"abc">>}], flush()).

flush() ->
	receive M -> [M | flush()] after 0 -> [] end.

%% Random iodata: nested lists of bytes, binaries and improper binary tails.
iodata() ->
	?SIZED(Size, iodata(Size)).

iodata(0) ->
	oneof([binary(), list(byte())]);
iodata(Size) ->
	oneof([
		binary(),
		list(oneof([byte(), binary(), ?LAZY(iodata(Size div 3))])),
		?LET({L, T}, {list(oneof([byte(), binary()])), binary()}, L ++ T)
	]).

prop_pieces() ->
	?FORALL({Data, Max}, {iodata(), range(1, 40)},
		begin
			Pieces = pieces(Data, Max),
			Sizes = [byte_size(P) || P <- Pieces],
			iolist_to_binary(Pieces) =:= iolist_to_binary(Data)
				andalso lists:all(fun(S) -> S > 0 andalso S =< Max end, Sizes)
				andalso (Sizes =:= [] orelse lists:all(fun(S) -> S =:= Max end, lists:droplast(Sizes)))
		end).

properties_test_() ->
	{timeout, 60, [?_assert(proper:quickcheck(prop_pieces(), [{numtests, 1000}, {to_file, user}]))]}.
