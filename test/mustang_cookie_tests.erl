-module(mustang_cookie_tests).

-define(BAD, {error, {value_error, 400,
	'The cookie header must be name=value pairs with token names and no control characters. (RFC6265 4.2.1)'}}).

-include_lib("proper/include/proper.hrl").
-include_lib("eunit/include/eunit.hrl").

%% Parsing.

parse_cookie_test_() ->
	Tests = [
		{<<>>, []},
		{<<" ">>, []},
		{<<";">>, []},
		{<<"; ;">>, []},
		{<<"a=b">>, [{<<"a">>, <<"b">>}]},
		{<<"a=">>, [{<<"a">>, <<>>}]},
		{<<"a=;b=c">>, [{<<"a">>, <<>>}, {<<"b">>, <<"c">>}]},
		{<<"a=b; c=d">>, [{<<"a">>, <<"b">>}, {<<"c">>, <<"d">>}]},
		{<<"a=b;c=d">>, [{<<"a">>, <<"b">>}, {<<"c">>, <<"d">>}]},
		{<<"a=b ;  c=d ; ">>, [{<<"a">>, <<"b">>}, {<<"c">>, <<"d">>}]},
		{<<"  a = b  ;\tc\t=\td\t">>, [{<<"a">>, <<"b">>}, {<<"c">>, <<"d">>}]},
		{<<"a=b;;c=d">>, [{<<"a">>, <<"b">>}, {<<"c">>, <<"d">>}]},
		{<<"a=1; a=2">>, [{<<"a">>, <<"1">>}, {<<"a">>, <<"2">>}]},
		{<<"b=2; a=1">>, [{<<"b">>, <<"2">>}, {<<"a">>, <<"1">>}]},
		{<<"a=b=c">>, [{<<"a">>, <<"b=c">>}]},
		{<<"token=YWJj==">>, [{<<"token">>, <<"YWJj==">>}]},
		{<<"a=\"b\"">>, [{<<"a">>, <<"b">>}]},
		{<<"a=\"\"">>, [{<<"a">>, <<>>}]},
		{<<"a=\"">>, [{<<"a">>, <<"\"">>}]},
		{<<"a=\"b">>, [{<<"a">>, <<"\"b">>}]},
		{<<"a=b\"">>, [{<<"a">>, <<"b\"">>}]},
		{<<"a=hello world">>, [{<<"a">>, <<"hello world">>}]},
		%% Whitespace around a value, TAB included, is not part of it.
		{<<"a=\tb\t; c=d \t ">>, [{<<"a">>, <<"b">>}, {<<"c">>, <<"d">>}]},
		{<<"a=x,y">>, [{<<"a">>, <<"x,y">>}]},
		{<<"a=caf", 195, 169>>, [{<<"a">>, <<"caf", 195, 169>>}]},
		{<<"!#$%&'*+-.^_`|~=v">>, [{<<"!#$%&'*+-.^_`|~">>, <<"v">>}]},
		{<<"SID=31d4d96e407aad42; lang=en-US">>,
			[{<<"SID">>, <<"31d4d96e407aad42">>}, {<<"lang">>, <<"en-US">>}]}
	],
	[{Bin, ?_assertEqual({ok, Expected}, mustang_cookie:parse_cookie(Bin))}
		|| {Bin, Expected} <- Tests].

parse_cookie_error_test_() ->
	Tests = [
		<<"a">>,
		<<"a; b=c">>,
		<<"b=c; a">>,
		<<"=b">>,
		<<" =b">>,
		<<"a b=c">>,
		<<"a,b=c">>,
		<<"\"a\"=b">>,
		<<"a/b=c">>,
		<<"a:b=c">>,
		<<"a=b\r\nc=d">>,
		<<"a=b", 0>>,
		<<"a=", 127>>,
		<<"a=\n">>,
		%% HTAB is a control character, not a cookie-octet (RFC 6265 4.1.1).
		<<"a=b\tc">>,
		<<"a=b \t c">>,
		<<"a=b\t c=d">>,
		<<"a=\"b\tc\"">>,
		<<"a=1; b=x\ty">>,
		<<"a", 0, "=b">>,
		<<"caf", 195, 169, "=b">>
	],
	[{Bin, ?_assertEqual(?BAD, mustang_cookie:parse_cookie(Bin))} || Bin <- Tests].

%% Building.

setcookie_test_() ->
	Tests = [
		{<<"a">>, <<"b">>, #{}, <<"a=b">>},
		{<<"a">>, <<>>, #{}, <<"a=">>},
		{[<<"na">>, "me"], [<<"va">>, $l], #{}, <<"name=val">>},
		{<<"a">>, <<"b">>, #{path => <<"/">>}, <<"a=b; Path=/">>},
		{<<"a">>, <<"b">>, #{domain => <<"example.org">>}, <<"a=b; Domain=example.org">>},
		{<<"a">>, <<"b">>, #{secure => true}, <<"a=b; Secure">>},
		{<<"a">>, <<"b">>, #{secure => false}, <<"a=b">>},
		{<<"a">>, <<"b">>, #{http_only => true}, <<"a=b; HttpOnly">>},
		{<<"a">>, <<"b">>, #{http_only => false}, <<"a=b">>},
		{<<"a">>, <<"b">>, #{same_site => default}, <<"a=b">>},
		{<<"a">>, <<"b">>, #{same_site => none}, <<"a=b; SameSite=None">>},
		{<<"a">>, <<"b">>, #{same_site => strict}, <<"a=b; SameSite=Strict">>},
		{<<"a">>, <<"b">>, #{same_site => lax}, <<"a=b; SameSite=Lax">>},
		{<<"a">>, <<"b">>, #{partitioned => true}, <<"a=b; Partitioned">>},
		{<<"a">>, <<"b">>, #{partitioned => false}, <<"a=b">>},
		{<<"a">>, <<"b">>, #{max_age => 0},
			<<"a=b; Expires=Thu, 01 Jan 1970 00:00:00 GMT; Max-Age=0">>},
		{<<"sid">>, <<"\"x\"">>, #{path => <<"/app">>, domain => <<"a.example">>, secure => true,
				http_only => true, same_site => lax, partitioned => true},
			<<"sid=\"x\"; Domain=a.example; Path=/app; Secure; HttpOnly; SameSite=Lax; "
				"Partitioned">>}
	],
	[{Expected, ?_assertEqual(Expected, iolist_to_binary(mustang_cookie:setcookie(N, V, O)))}
		|| {N, V, O, Expected} <- Tests].

%% Expires is now + Max-Age, computed when the header is built.
setcookie_max_age_test_() ->
	[{integer_to_list(MaxAge), fun() -> check_max_age(MaxAge) end}
		|| MaxAge <- [1, 3600, 86400 * 365 * 10]].

check_max_age(MaxAge) ->
	Before = now_secs(),
	Bin = iolist_to_binary(mustang_cookie:setcookie(<<"a">>, <<"b">>, #{max_age => MaxAge})),
	After = now_secs(),
	MaxAgeBin = integer_to_binary(MaxAge),
	<<"a=b; Expires=", Date:29/binary, "; Max-Age=", MaxAgeBin/binary>> = Bin,
	{ok, Expires} = mustang_date:parse(Date),
	ExpiresSecs = calendar:datetime_to_gregorian_seconds(Expires),
	?assert(ExpiresSecs >= Before + MaxAge),
	?assert(ExpiresSecs =< After + MaxAge).

%% Expires stays a four-digit-year HTTP-date however large Max-Age is.
setcookie_huge_max_age_test() ->
	Bin = iolist_to_binary(mustang_cookie:setcookie(<<"a">>, <<"b">>,
		#{max_age => 1 bsl 64})),
	?assertEqual(<<"a=b; Expires=Fri, 31 Dec 9999 23:59:59 GMT; Max-Age=18446744073709551616">>,
		Bin).

setcookie_error_test_() ->
	Tests = [
		{<<>>, <<"b">>, #{}, {invalid_cookie_name, <<>>}},
		{<<"a=">>, <<"b">>, #{}, {invalid_cookie_name, <<"a=">>}},
		{<<"a;">>, <<"b">>, #{}, {invalid_cookie_name, <<"a;">>}},
		{<<"a b">>, <<"b">>, #{}, {invalid_cookie_name, <<"a b">>}},
		{<<"a\r\n">>, <<"b">>, #{}, {invalid_cookie_name, <<"a\r\n">>}},
		{<<"a", 0>>, <<"b">>, #{}, {invalid_cookie_name, <<"a", 0>>}},
		{<<"a", 200>>, <<"b">>, #{}, {invalid_cookie_name, <<"a", 200>>}},
		{<<"a">>, <<"b;">>, #{}, {invalid_cookie_value, <<"b;">>}},
		{<<"a">>, <<"b,c">>, #{}, {invalid_cookie_value, <<"b,c">>}},
		{<<"a">>, <<"b c">>, #{}, {invalid_cookie_value, <<"b c">>}},
		{<<"a">>, <<"b\r\nSet-Cookie: x=y">>, #{},
			{invalid_cookie_value, <<"b\r\nSet-Cookie: x=y">>}},
		{<<"a">>, <<"b", 127>>, #{}, {invalid_cookie_value, <<"b", 127>>}},
		{<<"a">>, <<"\t">>, #{}, {invalid_cookie_value, <<"\t">>}},
		{<<"a">>, <<"b">>, #{path => <<"/; Domain=evil">>},
			{invalid_cookie_attribute, path, <<"/; Domain=evil">>}},
		{<<"a">>, <<"b">>, #{domain => <<"x\r\n">>},
			{invalid_cookie_attribute, domain, <<"x\r\n">>}},
		{<<"a">>, <<"b">>, #{max_age => -1}, {invalid_cookie_option, max_age, -1}},
		{<<"a">>, <<"b">>, #{secure => yes}, {invalid_cookie_option, secure, yes}},
		{<<"a">>, <<"b">>, #{same_site => maybe}, {invalid_cookie_option, same_site, maybe}},
		{<<"a">>, <<"b">>, #{httponly => true}, {invalid_cookie_option, httponly, true}},
		{<<"a">>, <<"b">>, #{path => "/"}, {invalid_cookie_option, path, "/"}}
	],
	[{iolist_to_binary(io_lib:format("~p", [Reason])),
		?_assertError(Reason, mustang_cookie:setcookie(N, V, O))}
		|| {N, V, O, Reason} <- Tests].

%% Properties.

tchar() ->
	oneof([range($a, $z), range($A, $Z), range($0, $9) | "!#$%&'*+-.^_`|~"]).

cookie_name() ->
	?LET(Chars, non_empty(list(tchar())), list_to_binary(Chars)).

%% Any byte the builder accepts in a value.
cookie_value() ->
	?LET(Chars, list(?SUCHTHAT(C, byte(), C > 32 andalso C =/= 127 andalso C =/= $;
			andalso C =/= $,)),
		list_to_binary(Chars)).

unquoted(<<$", Rest/binary>> = V) when byte_size(Rest) > 0 ->
	case binary:last(Rest) of
		$" -> binary:part(Rest, 0, byte_size(Rest) - 1);
		_ -> V
	end;
unquoted(V) ->
	V.

%% A client sends back "name=value" pairs joined by "; " (RFC 6265 5.4).
prop_roundtrip() ->
	?FORALL(Cookies, list({cookie_name(), cookie_value()}),
		begin
			Header = iolist_to_binary(lists:join(<<"; ">>,
				[mustang_cookie:setcookie(N, V, #{}) || {N, V} <- Cookies])),
			Expected = [{N, unquoted(V)} || {N, V} <- Cookies],
			mustang_cookie:parse_cookie(Header) =:= {ok, Expected}
		end).

prop_setcookie_parses() ->
	?FORALL({Name, Value, Opts}, {cookie_name(), cookie_value(), cookie_opts()},
		begin
			Bin = iolist_to_binary(mustang_cookie:setcookie(Name, Value, Opts)),
			[First | _] = binary:split(Bin, <<";">>),
			mustang_cookie:parse_cookie(First) =:= {ok, [{Name, unquoted(Value)}]}
		end).

cookie_opts() ->
	?LET(Opts, list(oneof([
			{max_age, range(0, 100000000)},
			{path, elements([<<"/">>, <<"/a b">>, <<"/x,y">>])},
			{domain, elements([<<"example.org">>, <<".example.org">>])},
			{secure, boolean()},
			{http_only, boolean()},
			{same_site, elements([default, none, strict, lax])},
			{partitioned, boolean()}
		])),
		maps:from_list(Opts)).

prop_never_crashes() ->
	?FORALL(Chars, list(oneof([$;, $=, $\s, $", $a, $\t, byte()])),
		is_result(mustang_cookie:parse_cookie(list_to_binary(Chars)))).

prop_mutated_never_crashes() ->
	?FORALL({Cookies, Pos, Byte}, {non_empty(list({cookie_name(), cookie_value()})),
			non_neg_integer(), byte()},
		begin
			Header = iolist_to_binary(lists:join(<<"; ">>,
				[mustang_cookie:setcookie(N, V, #{}) || {N, V} <- Cookies])),
			P = Pos rem byte_size(Header),
			<<Before:P/binary, _, After/binary>> = Header,
			is_result(mustang_cookie:parse_cookie(<<Before/binary, Byte, After/binary>>))
		end).

properties_test_() ->
	Props = [
		prop_roundtrip(),
		prop_setcookie_parses(),
		prop_never_crashes(),
		prop_mutated_never_crashes()
	],
	[{timeout, 60, ?_assert(proper:quickcheck(P, [{numtests, 500}, {to_file, user}]))}
		|| P <- Props].

is_result({ok, List}) when is_list(List) ->
	lists:all(fun
		({<<_, _/binary>>, V}) -> is_binary(V);
		(_) -> false
	end, List);
is_result(?BAD) ->
	true;
is_result(_) ->
	false.

now_secs() ->
	calendar:datetime_to_gregorian_seconds(erlang:universaltime()).
