%% HTTP-date codec (RFC 9110 5.6.7).
%%
%% Contract: strict when parsing, lax when building.
%%
%% parse/1 accepts exactly the three formats a recipient must accept: IMF-fixdate,
%% the obsolete RFC 850 format and the obsolete asctime format. Day and month names
%% and "GMT" are case-sensitive, every field has a fixed width, and the date and
%% time are range checked. It never crashes on a binary: it returns {ok, Datetime}
%% or {error, {value_error, 400, Reason}} (mustang_error); a non-binary raises
%% badarg. The day name must be a valid one but is not checked against the date,
%% as recipients are asked to be robust. A leap second (60) is accepted and
%% reported as 59 so that the result stays a calendar:datetime().
%%
%% rfc7231/1 and now/0 build IMF-fixdate. The builder trusts its input: it expects
%% a valid calendar:datetime() with a year in 0..9999.
-module(mustang_date).

%% Building.
-export([rfc7231/1]).
-export([now/0]).

%% Parsing.
-export([parse/1]).

-define(ERROR, {error, {value_error, 400,
	'A date must be an IMF-fixdate, an RFC 850 date or an asctime date. (RFC9110 5.6.7)'}}).

%% Building.

%% The digits of a number, as binary segments.
-define(D2(N), ($0 + N div 10), ($0 + N rem 10)).
-define(D4(N), ($0 + N div 1000), ($0 + N div 100 rem 10), ($0 + N div 10 rem 10),
	($0 + N rem 10)).

%% Formats a `calendar:datetime()` (UTC, year 0..9999) as an IMF-fixdate,
%% the HTTP date format: `<<"Sun, 06 Nov 1994 08:49:37 GMT">>`.
-spec rfc7231(calendar:datetime()) -> binary().
rfc7231({Date = {Y, Mo, D}, {H, Mi, S}}) ->
	Wday = weekday(calendar:day_of_the_week(Date)),
	Month = month(Mo),
	<<Wday/binary, ", ", ?D2(D), " ", Month/binary, " ", ?D4(Y), " ",
		?D2(H), ":", ?D2(Mi), ":", ?D2(S), " GMT">>.

%% The current time as an IMF-fixdate (`rfc7231/1` of
%% `erlang:universaltime()`). Mustang's connections take the `date` header
%% from a cache updated every second instead.
-spec now() -> binary().
now() ->
	rfc7231(erlang:universaltime()).

-spec weekday(1..7) -> binary().
weekday(1) -> <<"Mon">>;
weekday(2) -> <<"Tue">>;
weekday(3) -> <<"Wed">>;
weekday(4) -> <<"Thu">>;
weekday(5) -> <<"Fri">>;
weekday(6) -> <<"Sat">>;
weekday(7) -> <<"Sun">>.

-spec month(1..12) -> binary().
month(1) -> <<"Jan">>;
month(2) -> <<"Feb">>;
month(3) -> <<"Mar">>;
month(4) -> <<"Apr">>;
month(5) -> <<"May">>;
month(6) -> <<"Jun">>;
month(7) -> <<"Jul">>;
month(8) -> <<"Aug">>;
month(9) -> <<"Sep">>;
month(10) -> <<"Oct">>;
month(11) -> <<"Nov">>;
month(12) -> <<"Dec">>.

%% Parsing.

%% Parses an HTTP date in any of the three formats a recipient must accept
%% (IMF-fixdate, RFC 850, asctime): `{ok, calendar:datetime()}`, or
%% `{error, {value_error, 400, Reason}}`; a non-binary raises `badarg`.
%%
%%     {ok, {{1994, 11, 6}, {8, 49, 37}}} = mustang_date:parse(<<"Sun, 06 Nov 1994 08:49:37 GMT">>)
-spec parse(binary()) -> {ok, calendar:datetime()} | {error, mustang_error:value_error()}.
%% IMF-fixdate: Sun, 06 Nov 1994 08:49:37 GMT
parse(<<Wday:3/binary, ", ", D1, D2, " ", Mon:3/binary, " ", Y1, Y2, Y3, Y4, " ",
		H1, H2, ":", Mi1, Mi2, ":", S1, S2, " GMT">>) ->
	check(is_short_day(Wday), d4(Y1, Y2, Y3, Y4), month_number(Mon), d2(D1, D2),
		d2(H1, H2), d2(Mi1, Mi2), d2(S1, S2));
%% asctime: Sun Nov  6 08:49:37 1994
parse(<<Wday:3/binary, " ", Mon:3/binary, " ", D1, D2, " ", H1, H2, ":", Mi1, Mi2, ":",
		S1, S2, " ", Y1, Y2, Y3, Y4>>) ->
	check(is_short_day(Wday), d4(Y1, Y2, Y3, Y4), month_number(Mon), asctime_day(D1, D2),
		d2(H1, H2), d2(Mi1, Mi2), d2(S1, S2));
%% RFC 850: Sunday, 06-Nov-94 08:49:37 GMT
parse(Bin) when is_binary(Bin) ->
	parse_rfc850(Bin);
parse(_) ->
	error(badarg).

-spec parse_rfc850(binary()) -> {ok, calendar:datetime()} | {error, mustang_error:value_error()}.
parse_rfc850(Bin) ->
	case long_day(Bin) of
		{ok, <<", ", D1, D2, "-", Mon:3/binary, "-", Y1, Y2, " ", H1, H2, ":", Mi1, Mi2, ":",
				S1, S2, " GMT">>} ->
			check(true, rfc850_year(d2(Y1, Y2)), month_number(Mon), d2(D1, D2),
				d2(H1, H2), d2(Mi1, Mi2), d2(S1, S2));
		_ ->
			?ERROR
	end.

%% A two-digit year that would be more than 50 years in the future is taken as the
%% most recent past year with the same last two digits (RFC 9110 5.6.7).
-spec rfc850_year(0..99 | error) -> non_neg_integer() | error.
rfc850_year(error) ->
	error;
rfc850_year(YY) ->
	{{CurrentYear, _, _}, _} = erlang:universaltime(),
	Y = CurrentYear - CurrentYear rem 100 + YY,
	if
		Y > CurrentYear + 50 -> Y - 100;
		true -> Y
	end.

%% The asctime day is either two digits or a space and one digit.
-spec asctime_day(byte(), byte()) -> 0..99 | error.
asctime_day($\s, D2) -> d2($0, D2);
asctime_day(D1, D2) -> d2(D1, D2).

-spec long_day(binary()) -> {ok, binary()} | error.
long_day(<<"Monday", Rest/binary>>) -> {ok, Rest};
long_day(<<"Tuesday", Rest/binary>>) -> {ok, Rest};
long_day(<<"Wednesday", Rest/binary>>) -> {ok, Rest};
long_day(<<"Thursday", Rest/binary>>) -> {ok, Rest};
long_day(<<"Friday", Rest/binary>>) -> {ok, Rest};
long_day(<<"Saturday", Rest/binary>>) -> {ok, Rest};
long_day(<<"Sunday", Rest/binary>>) -> {ok, Rest};
long_day(_) -> error.

-spec is_short_day(binary()) -> boolean().
is_short_day(<<"Mon">>) -> true;
is_short_day(<<"Tue">>) -> true;
is_short_day(<<"Wed">>) -> true;
is_short_day(<<"Thu">>) -> true;
is_short_day(<<"Fri">>) -> true;
is_short_day(<<"Sat">>) -> true;
is_short_day(<<"Sun">>) -> true;
is_short_day(_) -> false.

-spec month_number(binary()) -> 1..12 | error.
month_number(<<"Jan">>) -> 1;
month_number(<<"Feb">>) -> 2;
month_number(<<"Mar">>) -> 3;
month_number(<<"Apr">>) -> 4;
month_number(<<"May">>) -> 5;
month_number(<<"Jun">>) -> 6;
month_number(<<"Jul">>) -> 7;
month_number(<<"Aug">>) -> 8;
month_number(<<"Sep">>) -> 9;
month_number(<<"Oct">>) -> 10;
month_number(<<"Nov">>) -> 11;
month_number(<<"Dec">>) -> 12;
month_number(_) -> error.

-define(IS_DIGIT(C), (C >= $0 andalso C =< $9)).

-spec d2(byte(), byte()) -> 0..99 | error.
d2(A, B) when ?IS_DIGIT(A), ?IS_DIGIT(B) ->
	(A - $0) * 10 + B - $0;
d2(_, _) ->
	error.

-spec d4(byte(), byte(), byte(), byte()) -> 0..9999 | error.
d4(A, B, C, D) when ?IS_DIGIT(A), ?IS_DIGIT(B), ?IS_DIGIT(C), ?IS_DIGIT(D) ->
	(A - $0) * 1000 + (B - $0) * 100 + (C - $0) * 10 + D - $0;
d4(_, _, _, _) ->
	error.

%% Seconds go up to 60 for a leap second (RFC 9110 5.6.7).
-spec check(boolean(), Int, Int, Int, Int, Int, Int)
	-> {ok, calendar:datetime()} | {error, mustang_error:value_error()}
	when Int :: non_neg_integer() | error.
check(true, Y, Mo, D, H, Mi, S) when is_integer(Y), is_integer(Mo), is_integer(D),
		is_integer(H), is_integer(Mi), is_integer(S), H =< 23, Mi =< 59, S =< 60 ->
	case calendar:valid_date(Y, Mo, D) of
		true -> {ok, {{Y, Mo, D}, {H, Mi, min(S, 59)}}};
		false -> ?ERROR
	end;
check(_, _, _, _, _, _, _) ->
	?ERROR.
