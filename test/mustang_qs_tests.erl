-module(mustang_qs_tests).

-define(BADARG, {error, {value_error, 400,
	'A "%" must be followed by two hexadecimal digits. (RFC3986 2.1)'}}).
-define(TOO_MANY_KEYS, {error, {value_error, 400,
	'The query string has more pairs than max_keys allows. (Mustang max_keys)'}}).

-include_lib("proper/include/proper.hrl").
-include_lib("eunit/include/eunit.hrl").

%% Parsing.

parse_qs_test_() ->
	Tests = [
		{<<>>, []},
		{<<"&">>, []},
		{<<"&&&">>, []},
		{<<"a">>, [{<<"a">>, true}]},
		{<<"a=">>, [{<<"a">>, <<>>}]},
		{<<"=">>, [{<<>>, <<>>}]},
		{<<"=b">>, [{<<>>, <<"b">>}]},
		{<<"a=b">>, [{<<"a">>, <<"b">>}]},
		{<<"a=b=c">>, [{<<"a">>, <<"b=c">>}]},
		{<<"a=b&c=d">>, [{<<"a">>, <<"b">>}, {<<"c">>, <<"d">>}]},
		{<<"a=b&&c=d&">>, [{<<"a">>, <<"b">>}, {<<"c">>, <<"d">>}]},
		{<<"&a=b">>, [{<<"a">>, <<"b">>}]},
		{<<"a&b=c&d">>, [{<<"a">>, true}, {<<"b">>, <<"c">>}, {<<"d">>, true}]},
		{<<"a=1&a=2&a">>, [{<<"a">>, <<"1">>}, {<<"a">>, <<"2">>}, {<<"a">>, true}]},
		{<<"b=2&a=1">>, [{<<"b">>, <<"2">>}, {<<"a">>, <<"1">>}]},
		{<<"a+b=c+d">>, [{<<"a b">>, <<"c d">>}]},
		{<<"a%20b=c%20d">>, [{<<"a b">>, <<"c d">>}]},
		{<<"%2B=%2b">>, [{<<"+">>, <<"+">>}]},
		{<<"a=%26%3D">>, [{<<"a">>, <<"&=">>}]},
		{<<"%C3%A9t%c3%a9=%E2%82%AC">>, [{<<"été"/utf8>>, <<"€"/utf8>>}]},
		{<<"a=%00">>, [{<<"a">>, <<0>>}]},
		{<<"a=%FF">>, [{<<"a">>, <<255>>}]},
		{<<"a=%7E%7e">>, [{<<"a">>, <<"~~">>}]},
		{<<"a=b+%2B+c">>, [{<<"a">>, <<"b + c">>}]},
		{<<"a=;,/?:@">>, [{<<"a">>, <<";,/?:@">>}]},
		{<<"a==">>, [{<<"a">>, <<"=">>}]},
		{<<"a%3Db=c">>, [{<<"a=b">>, <<"c">>}]}
	],
	[{Qs, ?_assertEqual({ok, Expected}, mustang_qs:parse_qs(Qs))} || {Qs, Expected} <- Tests].

parse_qs_error_test_() ->
	Tests = [
		<<"%">>,
		<<"a=%">>,
		<<"a=%2">>,
		<<"a=%2G">>,
		<<"a=%G2">>,
		<<"a=%%20">>,
		<<"%zz=b">>,
		<<"a=b&c=%">>,
		<<"a=b&c%=d">>,
		<<"a=%2&b=c">>,
		<<"a=% 20">>,
		<<"a=%-1">>
	],
	[{Qs, ?_assertEqual(?BADARG, mustang_qs:parse_qs(Qs))} || Qs <- Tests].

%% The limit counts pairs, not the empty ones skipped between "&".
parse_qs_limited_test_() ->
	Qs = <<"a=1&b=2&c">>,
	Three = [{<<"a">>, <<"1">>}, {<<"b">>, <<"2">>}, {<<"c">>, true}],
	[
		?_assertEqual({ok, Three}, mustang_qs:parse_qs_limited(Qs, infinity)),
		?_assertEqual({ok, Three}, mustang_qs:parse_qs_limited(Qs, 4)),
		?_assertEqual({ok, Three}, mustang_qs:parse_qs_limited(Qs, 3)),
		?_assertEqual(?TOO_MANY_KEYS, mustang_qs:parse_qs_limited(Qs, 2)),
		?_assertEqual(?TOO_MANY_KEYS, mustang_qs:parse_qs_limited(Qs, 0)),
		?_assertEqual({ok, Three}, mustang_qs:parse_qs_limited(<<"&&a=1&&b=2&&c&&&">>, 3)),
		?_assertEqual({ok, []}, mustang_qs:parse_qs_limited(<<>>, 0)),
		?_assertEqual({ok, []}, mustang_qs:parse_qs_limited(<<"&&">>, 0)),
		?_assertEqual({ok, [{<<"a">>, true}]}, mustang_qs:parse_qs_limited(<<"a">>, 1)),
		?_assertEqual(?TOO_MANY_KEYS, mustang_qs:parse_qs_limited(<<"a">>, 0)),
		%% Too many keys is reported before a bad escape further on.
		?_assertEqual(?TOO_MANY_KEYS, mustang_qs:parse_qs_limited(<<"a&b&%">>, 2)),
		?_assertEqual(?BADARG, mustang_qs:parse_qs_limited(<<"a&%&c">>, 2)),
		?_assertError(badarg, mustang_qs:parse_qs_limited(<<"a">>, -1)),
		?_assertError(badarg, mustang_qs:parse_qs_limited("a", 1)),
		?_assertError(badarg, mustang_qs:urldecode("a"))
	].

urldecode_test_() ->
	Tests = [
		{<<>>, <<>>},
		{<<"abc">>, <<"abc">>},
		{<<"a+b">>, <<"a+b">>},
		{<<"a%20b">>, <<"a b">>},
		{<<"%2B">>, <<"+">>},
		{<<"%2b%2F%3a">>, <<"+/:">>},
		{<<"%00%ff">>, <<0, 255>>},
		{<<"%E2%82%AC">>, <<"€"/utf8>>},
		{<<"a=b&c">>, <<"a=b&c">>}
	],
	Errors = [<<"%">>, <<"%2">>, <<"%2x">>, <<"%x2">>, <<"abc%">>, <<"%%">>, <<"%g0">>],
	[{Bin, ?_assertEqual({ok, Expected}, mustang_qs:urldecode(Bin))}
		|| {Bin, Expected} <- Tests]
	++ [{Bin, ?_assertEqual(?BADARG, mustang_qs:urldecode(Bin))} || Bin <- Errors].

%% Building.

qs_test_() ->
	Tests = [
		{[], <<>>},
		{[{<<"a">>, true}], <<"a">>},
		{[{<<"a">>, <<>>}], <<"a=">>},
		{[{<<>>, <<>>}], <<"=">>},
		{[{<<"a">>, <<"b">>}], <<"a=b">>},
		{[{<<"a">>, <<"b">>}, {<<"c">>, true}, {<<"a">>, <<"d">>}], <<"a=b&c&a=d">>},
		{[{<<"a b">>, <<"c d">>}], <<"a+b=c+d">>},
		{[{<<"a+b">>, <<"&=">>}], <<"a%2Bb=%26%3D">>},
		{[{<<"k">>, <<"-._~">>}], <<"k=-._~">>},
		{[{<<"k">>, <<"!*'()/?:@">>}], <<"k=%21%2A%27%28%29%2F%3F%3A%40">>},
		{[{<<"été"/utf8>>, <<"€"/utf8>>}], <<"%C3%A9t%C3%A9=%E2%82%AC">>},
		{[{<<"k">>, <<0, 255, $%>>}], <<"k=%00%FF%25">>}
	],
	[{Expected, ?_assertEqual(Expected, mustang_qs:qs(Qs))} || {Qs, Expected} <- Tests].

urlencode_test_() ->
	Tests = [
		{<<>>, <<>>},
		{<<"AZaz09-._~">>, <<"AZaz09-._~">>},
		{<<" ">>, <<"%20">>},
		{<<"+">>, <<"%2B">>},
		{<<"a b&c=d/e">>, <<"a%20b%26c%3Dd%2Fe">>},
		{<<"%">>, <<"%25">>},
		{<<0, 15, 16, 127, 128, 255>>, <<"%00%0F%10%7F%80%FF">>},
		{<<"€"/utf8>>, <<"%E2%82%AC">>}
	],
	[{Bin, ?_assertEqual(Expected, mustang_qs:urlencode(Bin))} || {Bin, Expected} <- Tests].

%% Properties.

qs_list() ->
	list({binary(), oneof([true, binary()])}).

prop_qs_roundtrip() ->
	?FORALL(Qs, qs_list(),
		begin
			Expected = [Pair || Pair <- Qs, Pair =/= {<<>>, true}],
			mustang_qs:parse_qs(mustang_qs:qs(Qs)) =:= {ok, Expected}
		end).

prop_qs_limited_roundtrip() ->
	?FORALL({Qs, Max}, {non_empty(list({non_empty(binary()), binary()})), range(0, 10)},
		begin
			Result = mustang_qs:parse_qs_limited(mustang_qs:qs(Qs), Max),
			case length(Qs) > Max of
				true -> Result =:= ?TOO_MANY_KEYS;
				false -> Result =:= {ok, Qs}
			end
		end).

prop_urlencode_roundtrip() ->
	?FORALL(Bin, binary(), mustang_qs:urldecode(mustang_qs:urlencode(Bin)) =:= {ok, Bin}).

%% Encoded output only holds unreserved characters and well-formed escapes.
prop_urlencode_output() ->
	?FORALL(Bin, binary(), only_url_chars(mustang_qs:urlencode(Bin))).

qs_chars() ->
	list(oneof([$&, $=, $%, $+, $a, $0, $F, $g, byte()])).

prop_parse_qs_never_crashes() ->
	?FORALL(Chars, qs_chars(),
		begin
			Bin = list_to_binary(Chars),
			is_qs_result(mustang_qs:parse_qs(Bin))
				andalso is_bin_result(mustang_qs:urldecode(Bin))
		end).

prop_parse_qs_limited_never_crashes() ->
	?FORALL({Chars, Max}, {qs_chars(), oneof([infinity, range(0, 5)])},
		case mustang_qs:parse_qs_limited(list_to_binary(Chars), Max) of
			?TOO_MANY_KEYS -> true;
			Other -> is_qs_result(Other)
		end).

properties_test_() ->
	Props = [
		prop_qs_roundtrip(),
		prop_qs_limited_roundtrip(),
		prop_urlencode_roundtrip(),
		prop_urlencode_output(),
		prop_parse_qs_never_crashes(),
		prop_parse_qs_limited_never_crashes()
	],
	[{timeout, 60, ?_assert(proper:quickcheck(P, [{numtests, 500}, {to_file, user}]))}
		|| P <- Props].

is_qs_result({ok, List}) when is_list(List) ->
	lists:all(fun
		({K, true}) -> is_binary(K);
		({K, V}) -> is_binary(K) andalso is_binary(V);
		(_) -> false
	end, List);
is_qs_result(?BADARG) ->
	true;
is_qs_result(_) ->
	false.

is_bin_result({ok, Bin}) -> is_binary(Bin);
is_bin_result(?BADARG) -> true;
is_bin_result(_) -> false.

only_url_chars(<<>>) ->
	true;
only_url_chars(<<$%, H, L, Rest/binary>>) ->
	is_upper_hex(H) andalso is_upper_hex(L) andalso only_url_chars(Rest);
only_url_chars(<<C, Rest/binary>>) ->
	(lists:member(C, "-._~") orelse (C >= $a andalso C =< $z) orelse (C >= $A andalso C =< $Z)
		orelse (C >= $0 andalso C =< $9)) andalso only_url_chars(Rest).

is_upper_hex(C) ->
	(C >= $0 andalso C =< $9) orelse (C >= $A andalso C =< $F).
