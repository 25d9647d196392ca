%% Tests for mustang_ws_deflate (RFC 7692): negotiation table, compression
%% round trips at every window size with and without context takeover, the
%% inflate limit, and 8-bit windows. The cross-check against Python is in
%% mustang_ws_python_tests.
-module(mustang_ws_deflate_tests).

-include_lib("eunit/include/eunit.hrl").

-define(ON, #{compress => true}).

neg(Header) -> neg(Header, #{}).
neg(Header, DeflateOpts) ->
	case mustang_ws_deflate:negotiate(Header, #{compress => true, deflate_opts => DeflateOpts}) of
		{ok, Response, St} -> {Response, mustang_ws_deflate:info(St)};
		none -> none
	end.

%% {Offers, DeflateOpts, Expected response | none}
negotiation() ->
	[
		{<<"permessage-deflate">>, #{}, <<"permessage-deflate">>},
		{<<"PerMessage-Deflate">>, #{}, <<"permessage-deflate">>},
		{<<"permessage-deflate; client_max_window_bits">>, #{},
			<<"permessage-deflate; client_max_window_bits=15">>},
		{<<"permessage-deflate; client_max_window_bits=10">>, #{},
			<<"permessage-deflate; client_max_window_bits=10">>},
		{<<"permessage-deflate; client_max_window_bits=\"10\"">>, #{},
			<<"permessage-deflate; client_max_window_bits=10">>},
		{<<"permessage-deflate; client_max_window_bits">>, #{client_max_window_bits => 9},
			<<"permessage-deflate; client_max_window_bits=9">>},
		{<<"permessage-deflate; client_max_window_bits=12">>, #{client_max_window_bits => 9},
			<<"permessage-deflate; client_max_window_bits=9">>},
		{<<"permessage-deflate; client_max_window_bits=9">>, #{client_max_window_bits => 12},
			<<"permessage-deflate; client_max_window_bits=9">>},
		%% Not offered: we must not send it, whatever our option.
		{<<"permessage-deflate">>, #{client_max_window_bits => 9}, <<"permessage-deflate">>},
		{<<"permessage-deflate; server_max_window_bits=10">>, #{},
			<<"permessage-deflate; server_max_window_bits=10">>},
		{<<"permessage-deflate; server_max_window_bits=15">>, #{},
			<<"permessage-deflate; server_max_window_bits=15">>},
		{<<"permessage-deflate; server_max_window_bits=12">>, #{server_max_window_bits => 10},
			<<"permessage-deflate; server_max_window_bits=10">>},
		{<<"permessage-deflate">>, #{server_max_window_bits => 11},
			<<"permessage-deflate; server_max_window_bits=11">>},
		{<<"permessage-deflate; server_no_context_takeover">>, #{},
			<<"permessage-deflate; server_no_context_takeover">>},
		{<<"permessage-deflate; client_no_context_takeover">>, #{},
			<<"permessage-deflate; client_no_context_takeover">>},
		{<<"permessage-deflate">>, #{server_context_takeover => no_takeover},
			<<"permessage-deflate; server_no_context_takeover">>},
		{<<"permessage-deflate">>, #{client_context_takeover => no_takeover},
			<<"permessage-deflate; client_no_context_takeover">>},
		{<<"permessage-deflate;server_no_context_takeover;client_no_context_takeover;"
			"server_max_window_bits=8;client_max_window_bits=8">>, #{},
			<<"permessage-deflate; server_no_context_takeover; client_no_context_takeover; "
				"server_max_window_bits=8; client_max_window_bits=8">>},
		%% Several offers: the first valid one wins.
		{<<"permessage-deflate; server_max_window_bits=7, permessage-deflate; "
			"client_max_window_bits">>, #{}, <<"permessage-deflate; client_max_window_bits=15">>},
		{<<"permessage-deflate; client_max_window_bits=11, permessage-deflate">>, #{},
			<<"permessage-deflate; client_max_window_bits=11">>},
		{<<"x-webkit-deflate-frame, permessage-deflate; foo=1, permessage-deflate">>, #{},
			<<"permessage-deflate">>},
		{<<" , permessage-deflate ,">>, #{}, <<"permessage-deflate">>},
		%% Invalid offers, skipped.
		{<<"permessage-deflate; server_max_window_bits">>, #{}, none},
		{<<"permessage-deflate; server_max_window_bits=7">>, #{}, none},
		{<<"permessage-deflate; server_max_window_bits=16">>, #{}, none},
		{<<"permessage-deflate; server_max_window_bits=08">>, #{}, none},
		{<<"permessage-deflate; server_max_window_bits=abc">>, #{}, none},
		{<<"permessage-deflate; client_max_window_bits=0">>, #{}, none},
		{<<"permessage-deflate; client_max_window_bits=\"\"">>, #{}, none},
		{<<"permessage-deflate; server_no_context_takeover=1">>, #{}, none},
		{<<"permessage-deflate; client_no_context_takeover=true">>, #{}, none},
		{<<"permessage-deflate; server_no_context_takeover; server_no_context_takeover">>, #{}, none},
		{<<"permessage-deflate; client_max_window_bits; client_max_window_bits=9">>, #{}, none},
		{<<"permessage-deflate; unknown">>, #{}, none},
		{<<"x-webkit-deflate-frame">>, #{}, none},
		{<<>>, #{}, none},
		%% Syntax errors: nothing is accepted.
		{<<"permessage-deflate; ">>, #{}, none},
		{<<"permessage-deflate;; client_max_window_bits">>, #{}, none},
		{<<"permessage-deflate client_max_window_bits">>, #{}, none},
		{<<"permessage-deflate; client_max_window_bits=\"10">>, #{}, none},
		{<<"permessage-deflate; client_max_window_bits=">>, #{}, none}
	].

negotiation_test_() ->
	[{binary_to_list(Header), ?_assertEqual(Expected, case neg(Header, Opts) of
		none -> none;
		{Response, _} -> Response
	end)} || {Header, Opts, Expected} <- negotiation()].

off_test_() ->
	[
		?_assertEqual(none, mustang_ws_deflate:negotiate(<<"permessage-deflate">>, #{})),
		?_assertEqual(none, mustang_ws_deflate:negotiate(<<"permessage-deflate">>,
			#{compress => false}))
	].

info_test() ->
	?assertEqual({<<"permessage-deflate; server_no_context_takeover; server_max_window_bits=9; "
			"client_max_window_bits=10">>,
		#{server_max_window_bits => 9, client_max_window_bits => 10,
			server_context_takeover => no_takeover, client_context_takeover => takeover}},
		neg(<<"permessage-deflate; client_max_window_bits=10; server_max_window_bits=9">>,
			#{server_context_takeover => no_takeover})),
	%% client_max_window_bits not offered: the client may use 15 bits.
	?assertMatch({_, #{client_max_window_bits := 15}},
		neg(<<"permessage-deflate">>, #{client_max_window_bits => 9})).

%% Round trips through our own deflate and inflate.

session(Offer, Opts) ->
	{ok, _, St} = mustang_ws_deflate:negotiate(Offer, #{compress => true, deflate_opts => Opts}),
	St.

%% Messages with repetition within and across messages.
messages() ->
	Base = crypto:strong_rand_bytes(300),
	[<<>>, <<"Hello">>, binary:copy(<<"Hello">>, 100), Base, Base,
		binary:copy(Base, 20), crypto:strong_rand_bytes(70000), binary:copy(<<0>>, 200000)].

roundtrip_test_() ->
	[{lists:flatten(io_lib:format("~s ~p", [Offer, Opts])), fun() ->
		%% Our deflate as the server, our inflate standing for the client
		%% with the same parameters (client and server swapped).
		Tx = session(Offer, Opts),
		Rx = session(swap(Offer), swap_opts(Opts)),
		lists:foldl(fun(Msg, {T, R}) ->
			{Deflated, T2} = mustang_ws_deflate:deflate(Msg, T),
			{ok, Out, R2} = mustang_ws_deflate:inflate(iolist_to_binary(Deflated), fin, R, infinity),
			?assertEqual(Msg, iolist_to_binary(Out)),
			{T2, R2}
		end, {Tx, Rx}, messages())
	end} || Offer <- [<<"permessage-deflate">>, <<"permessage-deflate; server_no_context_takeover">>,
			<<"permessage-deflate; server_max_window_bits=9">>],
		Opts <- [#{}, #{level => best_speed, mem_level => 9}, #{strategy => huffman_only},
			#{server_max_window_bits => 8}, #{server_max_window_bits => 12}]].

swap(Offer) ->
	binary:replace(Offer, <<"server_">>, <<"client_">>).

swap_opts(Opts) ->
	maps:from_list([{case K of
		server_max_window_bits -> client_max_window_bits;
		_ -> K
	end, V} || {K, V} <- maps:to_list(Opts)]).

%% Without context takeover each message inflates on its own; with it, the
%% second copy of a message refers to the first.
context_takeover_test() ->
	Msg = crypto:strong_rand_bytes(1000),
	Sizes = fun(Offer) ->
		St = session(Offer, #{}),
		{A, St2} = mustang_ws_deflate:deflate(Msg, St),
		{B, _} = mustang_ws_deflate:deflate(Msg, St2),
		{iolist_size(A), iolist_size(B), iolist_to_binary(B)}
	end,
	{A1, B1, _} = Sizes(<<"permessage-deflate">>),
	{A2, B2, Second} = Sizes(<<"permessage-deflate; server_no_context_takeover">>),
	?assert(B1 < A1 div 10),
	?assertEqual(A2, B2),
	%% Inflated by a fresh raw inflater.
	?assertEqual(Msg, raw_inflate(Second, 15)).

%% An empty message right after another: zlib has nothing to flush, and the
%% payload must be the single byte 0x00 (RFC 7692 7.2.3.6), which a client
%% inflates to nothing. (It used to crash the connection.)
empty_after_message_test() ->
	St = session(<<"permessage-deflate">>, #{}),
	{A, St2} = mustang_ws_deflate:deflate(<<"a">>, St),
	{B, St3} = mustang_ws_deflate:deflate(<<>>, St2),
	{C, _} = mustang_ws_deflate:deflate(<<"a">>, St3),
	?assertEqual(<<0>>, iolist_to_binary(B)),
	Z = zlib:open(),
	ok = zlib:inflateInit(Z, -15),
	Inflate = fun(Data) -> iolist_to_binary(zlib:inflate(Z, [Data, <<0, 0, 255, 255>>])) end,
	?assertEqual([<<"a">>, <<>>, <<"a">>], [Inflate(X) || X <- [A, B, C]]),
	zlib:close(Z).

raw_inflate(Data, Bits) ->
	Z = zlib:open(),
	ok = zlib:inflateInit(Z, -Bits),
	Out = iolist_to_binary(zlib:inflate(Z, [Data, <<0, 0, 255, 255>>])),
	zlib:close(Z),
	Out.

%% Our window is 8 bits: zlib refuses raw deflate with 8, so we deflate with
%% 9, whose matches zlib keeps within 512 - 262 = 250 bytes (MAX_DIST in
%% zlib's deflate.h), which an 8-bit (256-byte) window holds.
window_8_test() ->
	Chunk = crypto:strong_rand_bytes(200),
	Msg = binary:copy(Chunk, 10),
	{Response, #{server_max_window_bits := 8}} =
		neg(<<"permessage-deflate; server_max_window_bits=8">>),
	?assertEqual(<<"permessage-deflate; server_max_window_bits=8">>, Response),
	St = session(<<"permessage-deflate; server_max_window_bits=8">>, #{}),
	{D1, St2} = mustang_ws_deflate:deflate(Msg, St),
	{D2, _} = mustang_ws_deflate:deflate(Msg, St2),
	Z = zlib:open(),
	ok = zlib:inflateInit(Z, -8),
	?assertEqual(Msg, iolist_to_binary(zlib:inflate(Z, [D1, <<0, 0, 255, 255>>]))),
	?assertEqual(Msg, iolist_to_binary(zlib:inflate(Z, [D2, <<0, 0, 255, 255>>]))),
	zlib:close(Z),
	%% zlib's inflate does not refuse distances past its window while they
	%% stay within the output at hand, so the inflate above does not prove
	%% the distances short: check that the stream is zlib's 9-bit one (and
	%% that it compressed: the 200-byte repeats are within reach).
	Z2 = zlib:open(),
	ok = zlib:deflateInit(Z2, default, deflated, -9, 8, default),
	Out9 = iolist_to_binary(zlib:deflate(Z2, Msg, sync)),
	zlib:close(Z2),
	?assertEqual(binary:part(Out9, 0, byte_size(Out9) - 4), iolist_to_binary(D1)),
	?assert(iolist_size(D1) < byte_size(Msg) div 3).

%% Messages arriving in pieces, and deflated in pieces.
pieces_test() ->
	St = session(<<"permessage-deflate">>, #{}),
	Msg = binary:copy(<<"abcdefghij">>, 10000),
	{D1, St2} = mustang_ws_deflate:deflate(binary:part(Msg, 0, 50000), nofin, St),
	{D2, _} = mustang_ws_deflate:deflate(binary:part(Msg, 50000, 50000), fin, St2),
	Deflated = iolist_to_binary([D1, D2]),
	Rx = session(<<"permessage-deflate">>, #{}),
	Pieces = [binary:part(Deflated, P, min(7, byte_size(Deflated) - P))
		|| P <- lists:seq(0, byte_size(Deflated) - 1, 7)],
	{Out, _} = lists:foldl(fun(P, {Acc, R}) ->
		Fin = case P =:= lists:last(Pieces) of true -> fin; false -> nofin end,
		{ok, O, R2} = mustang_ws_deflate:inflate(P, Fin, R, byte_size(Msg)),
		{[Acc, O], R2}
	end, {[], Rx}, Pieces),
	?assertEqual(Msg, iolist_to_binary(Out)).

%% The inflate limit: at the limit, one byte past it, and a zip bomb.
limit_test() ->
	Msg = binary:copy(<<"x">>, 10000),
	Tx = session(<<"permessage-deflate; server_no_context_takeover">>, #{}),
	{D, _} = mustang_ws_deflate:deflate(Msg, Tx),
	Deflated = iolist_to_binary(D),
	Rx = session(<<"permessage-deflate">>, #{}),
	?assertMatch({ok, _, _}, mustang_ws_deflate:inflate(Deflated, fin, Rx, 10000)),
	Rx2 = session(<<"permessage-deflate">>, #{}),
	?assertEqual({error, {ws_error, 1009, 'The message inflates past max_frame_size. (RFC6455 7.4.1)'}}, mustang_ws_deflate:inflate(Deflated, fin, Rx2, 9999)),
	%% The limit counts the whole message, across pieces.
	Rx3 = session(<<"permessage-deflate">>, #{}),
	Half = byte_size(Deflated) div 2,
	<<P1:Half/binary, P2/binary>> = Deflated,
	{ok, _, Rx4} = mustang_ws_deflate:inflate(P1, nofin, Rx3, 9999),
	?assertEqual({error, {ws_error, 1009, 'The message inflates past max_frame_size. (RFC6455 7.4.1)'}}, mustang_ws_deflate:inflate(P2, fin, Rx4, 9999)).

zip_bomb_test() ->
	%% 1 GiB of zeros is about 1 MB compressed; build 64 MiB (64 KB).
	Z = zlib:open(),
	ok = zlib:deflateInit(Z, best_compression, deflated, -15, 9, default),
	Bomb = iolist_to_binary([[zlib:deflate(Z, <<0:(1024 * 1024 * 8)>>, none) || _ <- lists:seq(1, 64)],
		zlib:deflate(Z, <<>>, sync)]),
	zlib:close(Z),
	?assert(byte_size(Bomb) < 100000),
	Rx = session(<<"permessage-deflate">>, #{}),
	{Time, Result} = timer:tc(fun() ->
		mustang_ws_deflate:inflate(binary:part(Bomb, 0, byte_size(Bomb) - 4), fin, Rx,
			1024 * 1024)
	end),
	?assertEqual({error, {ws_error, 1009, 'The message inflates past max_frame_size. (RFC6455 7.4.1)'}}, Result),
	%% It stopped near the limit instead of inflating 64 MiB.
	?assert(Time < 500000).

bad_data_test() ->
	Rx = session(<<"permessage-deflate">>, #{}),
	?assertEqual({error, {ws_error, 1007, 'The message is not a valid deflate stream. (RFC7692 7.2.2)'}}, mustang_ws_deflate:inflate(<<255, 255, 255, 255>>, fin, Rx,
		infinity)).

%% A message that ends its deflate stream with a final block (RFC 7692
%% 7.2.3.3: the payload then ends with a 0x00 byte), then a normal message.
bfinal_test() ->
	Z = zlib:open(),
	ok = zlib:deflateInit(Z, default, deflated, -15, 8, default),
	M1 = iolist_to_binary([zlib:deflate(Z, <<"hello hello hello">>, finish), <<0>>]),
	ok = zlib:deflateReset(Z),
	M2Full = iolist_to_binary(zlib:deflate(Z, <<"world world">>, sync)),
	zlib:close(Z),
	M2 = binary:part(M2Full, 0, byte_size(M2Full) - 4),
	Rx = session(<<"permessage-deflate">>, #{}),
	{ok, O1, Rx2} = mustang_ws_deflate:inflate(M1, fin, Rx, infinity),
	?assertEqual(<<"hello hello hello">>, iolist_to_binary(O1)),
	{ok, O2, _} = mustang_ws_deflate:inflate(M2, fin, Rx2, infinity),
	?assertEqual(<<"world world">>, iolist_to_binary(O2)).

close_test() ->
	St = session(<<"permessage-deflate">>, #{}),
	?assertEqual(ok, mustang_ws_deflate:close(St)),
	{_, St2} = mustang_ws_deflate:deflate(<<"x">>, St),
	?assertEqual(ok, mustang_ws_deflate:close(St2)).

%% RFC 7692 7.2.3.1 and 7.2.3.2: "Hello" compressed, then again with the
%% window of the first message.
rfc7692_examples_test() ->
	Tx = session(<<"permessage-deflate">>, #{}),
	{D1, Tx2} = mustang_ws_deflate:deflate(<<"Hello">>, Tx),
	?assertEqual(<<16#f2, 16#48, 16#cd, 16#c9, 16#c9, 16#07, 16#00>>, iolist_to_binary(D1)),
	{D2, _} = mustang_ws_deflate:deflate(<<"Hello">>, Tx2),
	?assertEqual(<<16#f2, 16#00, 16#11, 16#00, 16#00>>, iolist_to_binary(D2)),
	Rx = session(<<"permessage-deflate">>, #{}),
	{ok, O1, Rx2} = mustang_ws_deflate:inflate(<<16#f2, 16#48, 16#cd, 16#c9, 16#c9, 16#07, 16#00>>,
		fin, Rx, 5),
	?assertEqual(<<"Hello">>, iolist_to_binary(O1)),
	{ok, O2, _} = mustang_ws_deflate:inflate(<<16#f2, 16#00, 16#11, 16#00, 16#00>>, fin, Rx2, 5),
	?assertEqual(<<"Hello">>, iolist_to_binary(O2)).
