-module(mustang_range_tests).

-include_lib("proper/include/proper.hrl").
-include_lib("eunit/include/eunit.hrl").

%% RFC 9110 14.1.2, and the examples of 14.1.2 on a 10000-byte representation.
byte_range_test_() ->
	Tests = [
		{{0, 499}, 10000, {ok, {0, 499}}},
		{{500, 999}, 10000, {ok, {500, 999}}},
		{-500, 10000, {ok, {9500, 9999}}},
		{{9500, infinity}, 10000, {ok, {9500, 9999}}},
		{{9500, 20000}, 10000, {ok, {9500, 9999}}},
		{{9999, 9999}, 10000, {ok, {9999, 9999}}},
		{{10000, infinity}, 10000, error},
		{{10000, 10001}, 10000, error},
		{-20000, 10000, {ok, {0, 9999}}},
		{-1, 1, {ok, {0, 0}}},
		{0, 10000, error},
		{-1, 0, error},
		{{0, infinity}, 0, error}
	],
	[{iolist_to_binary(io_lib:format("~p of ~b", [Range, Length])),
		?_assertEqual(Expected, mustang_range:byte_range(Range, Length))}
		|| {Range, Length, Expected} <- Tests].

byte_parts_test_() ->
	Body = [<<"0123">>, "456", <<"789">>],
	File = {sendfile, 100, 10, "/tmp/f"},
	[
		?_assertEqual({ok, [{{0, 1, 10}, <<"01">>}, {{8, 9, 10}, <<"89">>}]},
			mustang_range:byte_parts([{0, 1}, {20, 30}, -2], Body)),
		?_assertEqual({ok, [{{3, 9, 10}, <<"3456789">>}]}, mustang_range:byte_parts([{3, infinity}], Body)),
		?_assertEqual({unsatisfiable, 10}, mustang_range:byte_parts([{10, 11}, 0], Body)),
		?_assertEqual({unsatisfiable, 0}, mustang_range:byte_parts([{0, 0}, -5], <<>>)),
		?_assertEqual({ok, [{{2, 4, 10}, {sendfile, 102, 3, "/tmp/f"}}, {{5, 9, 10}, {sendfile, 105, 5, "/tmp/f"}}]},
			mustang_range:byte_parts([{2, 4}, -5], File))
	].

body_length_test_() -> [
	?_assertEqual(0, mustang_range:body_length(<<>>)),
	?_assertEqual(5, mustang_range:body_length([<<"ab">>, $c, "de"])),
	?_assertEqual(42, mustang_range:body_length({sendfile, 7, 42, "/tmp/f"}))
].

content_range_test_() -> [
	?_assertEqual(<<"bytes 0-9/100">>,
		iolist_to_binary(mustang_range:content_range(<<"bytes">>, {0, 9, 100}))),
	?_assertEqual(<<"items 5-9/*">>,
		iolist_to_binary(mustang_range:content_range(<<"items">>, {5, 9, '*'}))),
	?_assertEqual(<<"items */10">>,
		iolist_to_binary(mustang_range:content_range(<<"items">>, <<"*/10">>)))
].

%% RFC 9110 14.6: each part opens with the boundary, its content-type and
%% content-range, an empty line; the last boundary ends with "--".
multipart_test() ->
	Parts = [{{0, 1, 10}, <<"ab">>}, {{8, 9, 10}, [<<"y">>, "z"]}],
	{ContentType, Pieces} = mustang_range:multipart(<<"B0UND">>, <<"text/plain">>, <<"bytes">>, Parts),
	?assertEqual(<<"multipart/byteranges; boundary=B0UND">>, iolist_to_binary(ContentType)),
	?assertEqual(<<
		"--B0UND\r\ncontent-type: text/plain\r\ncontent-range: bytes 0-1/10\r\n\r\nab\r\n"
		"--B0UND\r\ncontent-type: text/plain\r\ncontent-range: bytes 8-9/10\r\n\r\nyz\r\n"
		"--B0UND--\r\n">>, iolist_to_binary(Pieces)),
	?assertNot(mustang_range:has_sendfile(Pieces)).

multipart_sendfile_test() ->
	File = {sendfile, 0, 4, "/tmp/f"},
	{_, Pieces} = mustang_range:multipart(<<"B">>, <<"a/b">>, <<"bytes">>,
		[{{0, 3, 100}, File}, {{10, 11, 100}, <<"xy">>}]),
	?assert(mustang_range:has_sendfile(Pieces)),
	?assertEqual(1, length([P || P = {sendfile, _, _, _} <- Pieces])).

%% Properties.

byte_range_spec() ->
	oneof([{non_neg_integer(), oneof([infinity, non_neg_integer()])}, neg_integer(), 0]).

%% The model: From-To is the bytes From to min(To, Length - 1) when From
%% is within the representation; a suffix of N is the last min(N, Length)
%% bytes, none when N or Length is 0.
model_part({From, _}, Body) when From >= byte_size(Body) -> error;
model_part({From, infinity}, Body) -> {ok, binary:part(Body, From, byte_size(Body) - From)};
model_part({From, To}, Body) -> {ok, binary:part(Body, From, min(To + 1, byte_size(Body)) - From)};
model_part(Suffix, Body) when Suffix =:= 0; Body =:= <<>> -> error;
model_part(Suffix, Body) ->
	N = min(-Suffix, byte_size(Body)),
	{ok, binary:part(Body, byte_size(Body) - N, N)}.

%% As mustang_http_hd:parse_range/1 returns them: first =< last.
valid_range({From, To}) when is_integer(To) -> To >= From;
valid_range(_) -> true.

%% byte_parts keeps the satisfiable ranges in order, each the bytes of the
%% model, with a content-range of those positions and the whole length.
prop_byte_parts() ->
	?FORALL({Body, Ranges}, {binary(), non_empty(list(byte_range_spec()))},
		begin
			Valid = [R || R <- Ranges, valid_range(R)],
			Expected = [Part || R <- Valid, {ok, Part} <- [model_part(R, Body)]],
			case mustang_range:byte_parts(Valid, Body) of
				{unsatisfiable, Length} ->
					Length =:= byte_size(Body) andalso Expected =:= [];
				{ok, Parts} ->
					[Bin || {_, Bin} <- Parts] =:= Expected andalso lists:all(fun
						({{From, To, Length}, Bin}) ->
							Length =:= byte_size(Body) andalso To - From + 1 =:= byte_size(Bin)
								andalso binary:part(Body, From, To - From + 1) =:= Bin
					end, Parts)
			end
		end).

%% A part of a sendfile body covers the same bytes as the part of the
%% binary body.
prop_sendfile_part() ->
	?FORALL({Offset, Body, Range}, {non_neg_integer(), binary(), byte_range_spec()},
		case mustang_range:byte_range(Range, byte_size(Body)) of
			error ->
				true;
			{ok, {From, To}} ->
				{sendfile, O, L, "f"} = mustang_range:body_part({sendfile, Offset, byte_size(Body), "f"},
					From, To),
				O =:= Offset + From andalso binary:part(Body, O - Offset, L)
					=:= mustang_range:body_part(Body, From, To)
		end).

properties_test_() ->
	Props = [prop_byte_parts(), prop_sendfile_part()],
	{timeout, 60, [?_assert(proper:quickcheck(P, [{numtests, 1000}, {to_file, user}]))
		|| P <- Props]}.
