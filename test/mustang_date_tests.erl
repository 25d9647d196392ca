-module(mustang_date_tests).

-define(BAD, {error, {value_error, 400,
	'A date must be an IMF-fixdate, an RFC 850 date or an asctime date. (RFC9110 5.6.7)'}}).

-include_lib("proper/include/proper.hrl").
-include_lib("eunit/include/eunit.hrl").

%% Building.

rfc7231_test_() ->
	Tests = [
		{{{1994, 11, 6}, {8, 49, 37}}, <<"Sun, 06 Nov 1994 08:49:37 GMT">>},
		{{{1970, 1, 1}, {0, 0, 0}}, <<"Thu, 01 Jan 1970 00:00:00 GMT">>},
		{{{2000, 2, 29}, {23, 59, 59}}, <<"Tue, 29 Feb 2000 23:59:59 GMT">>},
		{{{9999, 12, 31}, {23, 59, 59}}, <<"Fri, 31 Dec 9999 23:59:59 GMT">>},
		{{{999, 5, 3}, {1, 2, 3}}, <<"Fri, 03 May 0999 01:02:03 GMT">>},
		{{{2024, 7, 15}, {12, 0, 9}}, <<"Mon, 15 Jul 2024 12:00:09 GMT">>},
		{{{2021, 4, 10}, {10, 10, 10}}, <<"Sat, 10 Apr 2021 10:10:10 GMT">>},
		{{{2023, 8, 16}, {6, 6, 6}}, <<"Wed, 16 Aug 2023 06:06:06 GMT">>},
		{{{2023, 3, 21}, {0, 0, 1}}, <<"Tue, 21 Mar 2023 00:00:01 GMT">>},
		{{{2022, 9, 30}, {0, 0, 0}}, <<"Fri, 30 Sep 2022 00:00:00 GMT">>},
		{{{2022, 10, 1}, {0, 0, 0}}, <<"Sat, 01 Oct 2022 00:00:00 GMT">>},
		{{{2022, 6, 12}, {0, 0, 0}}, <<"Sun, 12 Jun 2022 00:00:00 GMT">>}
	],
	[{Expected, ?_assertEqual(Expected, mustang_date:rfc7231(Date))} || {Date, Expected} <- Tests].

now_test() ->
	Before = calendar:datetime_to_gregorian_seconds(erlang:universaltime()),
	Now = mustang_date:now(),
	After = calendar:datetime_to_gregorian_seconds(erlang:universaltime()),
	?assertEqual(29, byte_size(Now)),
	{ok, Parsed} = mustang_date:parse(Now),
	Secs = calendar:datetime_to_gregorian_seconds(Parsed),
	?assert(Secs >= Before),
	?assert(Secs =< After).

%% Parsing.

parse_test_() ->
	Nov6 = {{1994, 11, 6}, {8, 49, 37}},
	Tests = [
		%% The three examples of RFC 9110 5.6.7.
		{<<"Sun, 06 Nov 1994 08:49:37 GMT">>, Nov6},
		{<<"Sunday, 06-Nov-94 08:49:37 GMT">>, Nov6},
		{<<"Sun Nov  6 08:49:37 1994">>, Nov6},
		{<<"Sun Nov 06 08:49:37 1994">>, Nov6},
		{<<"Sun Nov 16 08:49:37 1994">>, {{1994, 11, 16}, {8, 49, 37}}},
		%% Bounds of each field.
		{<<"Thu, 01 Jan 1970 00:00:00 GMT">>, {{1970, 1, 1}, {0, 0, 0}}},
		{<<"Fri, 31 Dec 9999 23:59:59 GMT">>, {{9999, 12, 31}, {23, 59, 59}}},
		{<<"Sat, 01 Jan 0000 00:00:00 GMT">>, {{0, 1, 1}, {0, 0, 0}}},
		{<<"Tue, 29 Feb 2000 12:00:00 GMT">>, {{2000, 2, 29}, {12, 0, 0}}},
		{<<"Wed, 31 Dec 2008 23:59:60 GMT">>, {{2008, 12, 31}, {23, 59, 59}}},
		{<<"Thu, 30 Apr 2015 10:00:00 GMT">>, {{2015, 4, 30}, {10, 0, 0}}},
		%% Every month name.
		{<<"Mon, 01 Feb 2021 00:00:00 GMT">>, {{2021, 2, 1}, {0, 0, 0}}},
		{<<"Mon, 01 Mar 2021 00:00:00 GMT">>, {{2021, 3, 1}, {0, 0, 0}}},
		{<<"Mon, 01 May 2021 00:00:00 GMT">>, {{2021, 5, 1}, {0, 0, 0}}},
		{<<"Mon, 01 Jun 2021 00:00:00 GMT">>, {{2021, 6, 1}, {0, 0, 0}}},
		{<<"Mon, 01 Jul 2021 00:00:00 GMT">>, {{2021, 7, 1}, {0, 0, 0}}},
		{<<"Mon, 01 Aug 2021 00:00:00 GMT">>, {{2021, 8, 1}, {0, 0, 0}}},
		{<<"Mon, 01 Sep 2021 00:00:00 GMT">>, {{2021, 9, 1}, {0, 0, 0}}},
		{<<"Mon, 01 Oct 2021 00:00:00 GMT">>, {{2021, 10, 1}, {0, 0, 0}}},
		%% Every long day name.
		{<<"Monday, 07-Nov-94 08:49:37 GMT">>, {{1994, 11, 7}, {8, 49, 37}}},
		{<<"Tuesday, 08-Nov-94 08:49:37 GMT">>, {{1994, 11, 8}, {8, 49, 37}}},
		{<<"Wednesday, 09-Nov-94 08:49:37 GMT">>, {{1994, 11, 9}, {8, 49, 37}}},
		{<<"Thursday, 10-Nov-94 08:49:37 GMT">>, {{1994, 11, 10}, {8, 49, 37}}},
		{<<"Friday, 11-Nov-94 08:49:37 GMT">>, {{1994, 11, 11}, {8, 49, 37}}},
		{<<"Saturday, 12-Nov-94 08:49:37 GMT">>, {{1994, 11, 12}, {8, 49, 37}}},
		%% The day name is not checked against the date.
		{<<"Mon, 06 Nov 1994 08:49:37 GMT">>, Nov6}
	],
	[{Bin, ?_assertEqual({ok, Expected}, mustang_date:parse(Bin))} || {Bin, Expected} <- Tests].

parse_error_test_() ->
	Tests = [
		<<>>,
		<<"Sun, 06 Nov 1994 08:49:37 GM">>,
		<<"Sun, 06 Nov 1994 08:49:37 GMT ">>,
		<<" Sun, 06 Nov 1994 08:49:37 GMT">>,
		<<"Sun, 06 Nov 1994 08:49:37 UTC">>,
		<<"Sun, 06 Nov 1994 08:49:37 gmt">>,
		<<"sun, 06 Nov 1994 08:49:37 GMT">>,
		<<"Sun, 06 nov 1994 08:49:37 GMT">>,
		<<"Sun, 06 NOV 1994 08:49:37 GMT">>,
		<<"Sux, 06 Nov 1994 08:49:37 GMT">>,
		<<"Sun, 06 Nox 1994 08:49:37 GMT">>,
		<<"Sun, 6 Nov 1994 08:49:37 GMT">>,
		<<"Sun,  6 Nov 1994 08:49:37 GMT">>,
		<<"Sun, 06 Nov 94 08:49:37 GMT">>,
		<<"Sun, 06 Nov 1994 8:49:37 GMT">>,
		<<"Sun, 06-Nov-1994 08:49:37 GMT">>,
		<<"Sun 06 Nov 1994 08:49:37 GMT">>,
		%% Field bounds, one past each limit.
		<<"Sun, 00 Nov 1994 08:49:37 GMT">>,
		<<"Sun, 31 Nov 1994 08:49:37 GMT">>,
		<<"Sun, 32 Dec 1994 08:49:37 GMT">>,
		<<"Sun, 29 Feb 1900 08:49:37 GMT">>,
		<<"Sun, 29 Feb 2001 08:49:37 GMT">>,
		<<"Sun, 06 Nov 1994 24:00:00 GMT">>,
		<<"Sun, 06 Nov 1994 23:60:00 GMT">>,
		<<"Sun, 06 Nov 1994 23:59:61 GMT">>,
		<<"Sun, 06 Nov 1994 99:99:99 GMT">>,
		<<"Sun, 0a Nov 1994 08:49:37 GMT">>,
		<<"Sun, 06 Nov 19x4 08:49:37 GMT">>,
		<<"Sun, 06 Nov 1994 08:4-:37 GMT">>,
		<<"Sun, 06 Nov 1994 08:49:37 GMT\r\n">>,
		<<"Sun, 06 Nov -994 08:49:37 GMT">>,
		%% RFC 850.
		<<"Sun, 06-Nov-94 08:49:37 GMT">>,
		<<"Sunday, 06-Nov-94 08:49:37 GM">>,
		<<"sunday, 06-Nov-94 08:49:37 GMT">>,
		<<"Sunday, 6-Nov-94 08:49:37 GMT">>,
		<<"Sunday, 06 Nov 94 08:49:37 GMT">>,
		<<"Sunday, 31-Nov-94 08:49:37 GMT">>,
		<<"Sunday, 06-Nov-94 25:49:37 GMT">>,
		<<"Sundae, 06-Nov-94 08:49:37 GMT">>,
		<<"Sunday, 06-Nov-9x 08:49:37 GMT">>,
		%% asctime.
		<<"Sun Nov 6 08:49:37 1994">>,
		<<"Sun Nov  6 08:49:37 94">>,
		<<"Sun Nov   6 08:49:37 1994">>,
		<<"Sun Nov  0 08:49:37 1994">>,
		<<"Sun Nov 31 08:49:37 1994">>,
		<<"Sun Nov  6 08:49:37 1994 GMT">>,
		<<"Sun Nov x6 08:49:37 1994">>,
		<<"Sunday Nov  6 08:49:37 1994">>
	],
	[{Bin, ?_assertEqual(?BAD, mustang_date:parse(Bin))} || Bin <- Tests].

%% The two-digit year of RFC 850 dates is resolved against the current year: a year
%% more than 50 years in the future goes back one century (RFC 9110 5.6.7).
parse_rfc850_year_test_() ->
	{{Current, _, _}, _} = erlang:universaltime(),
	Fifty = Current + 50,
	FiftyOne = Current + 51,
	Past = Current - 1,
	[
		?_assertEqual({ok, {{Fifty, 1, 1}, {0, 0, 0}}}, parse_rfc850_year(Fifty)),
		?_assertEqual({ok, {{FiftyOne - 100, 1, 1}, {0, 0, 0}}}, parse_rfc850_year(FiftyOne)),
		?_assertEqual({ok, {{Past, 1, 1}, {0, 0, 0}}}, parse_rfc850_year(Past)),
		?_assertEqual({ok, {{Current, 1, 1}, {0, 0, 0}}}, parse_rfc850_year(Current))
	].

parse_rfc850_year(Year) ->
	YY = Year rem 100,
	Bin = <<"Monday, 01-Jan-", ($0 + YY div 10), ($0 + YY rem 10), " 00:00:00 GMT">>,
	mustang_date:parse(Bin).

%% Properties.

datetime() ->
	?LET({Y, M, D0, H, Mi, S}, {range(1970, 9999), range(1, 12), range(1, 31), range(0, 23),
			range(0, 59), range(0, 59)},
		{{Y, M, min(D0, calendar:last_day_of_the_month(Y, M))}, {H, Mi, S}}).

prop_rfc7231_roundtrip() ->
	?FORALL(Date, datetime(), mustang_date:parse(mustang_date:rfc7231(Date)) =:= {ok, Date}).

prop_asctime_roundtrip() ->
	?FORALL(Date, datetime(), mustang_date:parse(asctime(Date)) =:= {ok, Date}).

prop_random_bytes_never_crash() ->
	?FORALL(Bin, binary(), is_result(mustang_date:parse(Bin))).

prop_mutated_never_crash() ->
	?FORALL({Date, Pos, Byte}, {datetime(), range(0, 28), byte()},
		begin
			<<Before:Pos/binary, _, After/binary>> = mustang_date:rfc7231(Date),
			is_result(mustang_date:parse(<<Before/binary, Byte, After/binary>>))
		end).

prop_truncated_fails() ->
	?FORALL({Date, Len}, {datetime(), range(0, 28)},
		begin
			<<Prefix:Len/binary, _/binary>> = mustang_date:rfc7231(Date),
			mustang_date:parse(Prefix) =:= ?BAD
		end).

properties_test_() ->
	Props = [
		prop_rfc7231_roundtrip(),
		prop_asctime_roundtrip(),
		prop_random_bytes_never_crash(),
		prop_mutated_never_crash(),
		prop_truncated_fails()
	],
	[{timeout, 60, ?_assert(proper:quickcheck(P, [{numtests, 1000}, {to_file, user}]))}
		|| P <- Props].

is_result({ok, {{Y, Mo, D}, {H, Mi, S}}}) ->
	calendar:valid_date(Y, Mo, D) andalso H >= 0 andalso H =< 23
		andalso Mi >= 0 andalso Mi =< 59 andalso S >= 0 andalso S =< 59;
is_result(?BAD) ->
	true;
is_result(_) ->
	false.

asctime({{Y, Mo, D}, {H, Mi, S}} = Date) ->
	<<Wday:3/binary, _/binary>> = mustang_date:rfc7231(Date),
	Month = element(Mo, {<<"Jan">>, <<"Feb">>, <<"Mar">>, <<"Apr">>, <<"May">>, <<"Jun">>,
		<<"Jul">>, <<"Aug">>, <<"Sep">>, <<"Oct">>, <<"Nov">>, <<"Dec">>}),
	Day = case D < 10 of
		true -> <<" ", ($0 + D)>>;
		false -> integer_to_binary(D)
	end,
	iolist_to_binary(io_lib:format("~s ~s ~s ~2..0B:~2..0B:~2..0B ~4..0B",
		[Wday, Month, Day, H, Mi, S, Y])).
