-module(mustang_conneg_tests).

-include_lib("proper/include/proper.hrl").
-include_lib("eunit/include/eunit.hrl").

-define(HTML, {{<<"text">>, <<"html">>, []}, to_html}).
-define(PLAIN, {{<<"text">>, <<"plain">>, []}, to_text}).
-define(JSON, {{<<"application">>, <<"json">>, []}, to_json}).

accept(Bin) ->
	{ok, Accept} = mustang_http_hd:parse_accept(Bin),
	Accept.

%% Media types.

normalize_media_type_test_() -> [
	?_assertEqual({<<"text">>, <<"html">>, [{<<"charset">>, <<"utf-8">>}]},
		mustang_conneg:normalize_media_type(<<"Text/HTML; charset=UTF-8">>)),
	?_assertEqual({<<"text">>, <<"html">>, []}, mustang_conneg:normalize_media_type(<<"text/html">>)),
	?_assertEqual({<<"text">>, <<"html">>, '*'},
		mustang_conneg:normalize_media_type({<<"text">>, <<"html">>, '*'})),
	?_assertError({badmatch, _}, mustang_conneg:normalize_media_type(<<"text">>))
].

default_media_type_test_() -> [
	?_assertEqual({<<"text">>, <<"html">>, []},
		mustang_conneg:default_media_type({{<<"text">>, <<"html">>, '*'}, to_html})),
	?_assertEqual({<<"text">>, <<"html">>, [{<<"level">>, <<"1">>}]},
		mustang_conneg:default_media_type({{<<"text">>, <<"html">>, [{<<"level">>, <<"1">>}]}, f}))
].

%% Weight first, then specificity, then the order of the header.
prioritize_accept_test_() ->
	Tests = [
		{<<"*/*, text/*, text/html, text/html;level=1">>,
			[<<"text/html;level=1">>, <<"text/html">>, <<"text/*">>, <<"*/*">>]},
		{<<"text/html;q=0.5, */*">>, [<<"*/*">>, <<"text/html">>]},
		{<<"text/plain, text/html">>, [<<"text/plain">>, <<"text/html">>]},
		{<<"text/html;q=0, text/plain;q=0.001">>, [<<"text/plain">>, <<"text/html">>]},
		{<<"a/b;x=1;y=2, a/b;x=1">>, [<<"a/b;x=1;y=2">>, <<"a/b;x=1">>]},
		{<<>>, []}
	],
	[{Header, ?_assertEqual([R || {R, _, _} <- accept(Expected)],
		[R || {R, _, _} <- mustang_conneg:prioritize_accept(accept(Header))])}
		|| {Header, Order} <- Tests, Expected <- [join(Order)]].

join(List) -> iolist_to_binary(lists:join(<<", ">>, List)).

range_matches_test_() ->
	HtmlL1 = {<<"text">>, <<"html">>, [{<<"level">>, <<"1">>}]},
	Tests = [
		{{<<"*">>, <<"*">>, []}, {<<"text">>, <<"html">>, []}, true},
		{{<<"text">>, <<"*">>, []}, {<<"text">>, <<"html">>, []}, true},
		{{<<"text">>, <<"*">>, []}, {<<"image">>, <<"png">>, []}, false},
		{{<<"text">>, <<"html">>, []}, {<<"text">>, <<"plain">>, []}, false},
		{{<<"text">>, <<"html">>, [{<<"level">>, <<"1">>}]}, HtmlL1, true},
		{{<<"text">>, <<"html">>, [{<<"level">>, <<"2">>}]}, HtmlL1, false},
		{{<<"text">>, <<"html">>, []}, HtmlL1, true},
		{{<<"text">>, <<"html">>, [{<<"level">>, <<"1">>}]}, {<<"text">>, <<"html">>, []}, false},
		{{<<"text">>, <<"html">>, [{<<"a">>, <<"b">>}]}, {<<"text">>, <<"html">>, '*'}, true}
	],
	[?_assertEqual(Expected, mustang_conneg:range_matches(Range, MediaType))
		|| {Range, MediaType, Expected} <- Tests].

%% The most specific matching range decides (RFC 9110 12.5.1).
refused_test_() ->
	CTP = [?HTML, ?PLAIN, ?JSON],
	Tests = [
		{<<"text/html;q=0, */*">>, [?HTML]},
		{<<"text/*;q=0, text/html">>, [?PLAIN]},
		{<<"*/*;q=0">>, CTP},
		{<<"*/*;q=0, application/json;q=0.1">>, [?HTML, ?PLAIN]},
		{<<"text/html">>, []},
		{<<"text/html;q=0, text/html;q=1">>, []}
	],
	[{Header, ?_assertEqual(Expected, mustang_conneg:refused(accept(Header), CTP))}
		|| {Header, Expected} <- Tests].

media_types_test_() ->
	HtmlAny = {{<<"text">>, <<"html">>, '*'}, to_html},
	Utf8 = [{<<"charset">>, <<"utf-8">>}],
	HtmlUtf8 = {{<<"text">>, <<"html">>, Utf8}, to_html},
	Tests = [
		{<<"text/html;q=0, */*">>, [?HTML, ?PLAIN],
			[{chosen, ?PLAIN, element(1, ?PLAIN), undefined}]},
		{<<"*/*;q=0">>, [?HTML, ?PLAIN], []},
		{<<"image/png">>, [?HTML, ?PLAIN], []},
		{<<"application/json;q=0.5, text/plain">>, [?JSON, ?PLAIN],
			[{chosen, ?PLAIN, element(1, ?PLAIN), undefined},
				{chosen, ?JSON, element(1, ?JSON), undefined}]},
		{<<"text/*">>, [?JSON, ?HTML, ?PLAIN],
			[{chosen, ?HTML, element(1, ?HTML), undefined},
				{chosen, ?PLAIN, element(1, ?PLAIN), undefined}]},
		%% Provided parameters '*': the range's parameters, a charset to check.
		{<<"text/html;level=1">>, [HtmlAny],
			[{chosen, HtmlAny, {<<"text">>, <<"html">>, [{<<"level">>, <<"1">>}]}, undefined}]},
		{<<"text/html;charset=utf-8">>, [HtmlAny],
			[{if_charset, <<"utf-8">>, HtmlAny, {<<"text">>, <<"html">>, Utf8}}]},
		{<<"text/html;charset=utf-8, text/*;q=0">>, [HtmlAny],
			[{if_charset, <<"utf-8">>, HtmlAny, {<<"text">>, <<"html">>, Utf8}}]},
		%% Provided parameters listed: the provided media type and its charset.
		{<<"text/html">>, [HtmlUtf8], [{chosen, HtmlUtf8, element(1, HtmlUtf8), <<"utf-8">>}]},
		{<<"text/html;charset=iso-8859-1">>, [HtmlUtf8], []},
		{<<"text/html;charset=iso-8859-1, text/html;q=0.5">>, [HtmlUtf8],
			[{chosen, HtmlUtf8, element(1, HtmlUtf8), <<"utf-8">>}]}
	],
	[{Header, ?_assertEqual(Expected, mustang_conneg:media_types(accept(Header), CTP))}
		|| {Header, CTP, Expected} <- Tests].

accepted_content_type_test_() ->
	Json = {<<"application">>, <<"json">>, []},
	JsonUtf8 = {<<"application">>, <<"json">>, [{<<"charset">>, <<"utf-8">>}]},
	Form = {<<"application">>, <<"x-www-form-urlencoded">>, []},
	AB = [{<<"a">>, <<"1">>}, {<<"b">>, <<"2">>}],
	Tests = [
		{Json, [{<<"application/json">>, from_json}], {ok, from_json}},
		{JsonUtf8, [{<<"application/json">>, from_json}], error},
		{JsonUtf8, [{{<<"application">>, <<"json">>, '*'}, from_json}], {ok, from_json}},
		{JsonUtf8, [{<<"application/json; charset=UTF-8">>, from_json}], {ok, from_json}},
		{{<<"x">>, <<"y">>, AB}, [{{<<"x">>, <<"y">>, lists:reverse(AB)}, f}], {ok, f}},
		{Form, [{<<"application/json">>, from_json}, {'*', from_any}], {ok, from_any}},
		{Form, [{<<"application/json">>, from_json}], error},
		{Json, [], error}
	],
	[?_assertEqual(Expected, mustang_conneg:accepted_content_type(ContentType, CTA))
		|| {ContentType, CTA, Expected} <- Tests].

content_type_test_() ->
	Tests = [
		{{<<"text">>, <<"html">>, []}, undefined, <<"text/html">>},
		{{<<"text">>, <<"html">>, []}, <<"utf-8">>, <<"text/html; charset=utf-8">>},
		{{<<"text">>, <<"html">>, [{<<"charset">>, <<"utf-8">>}, {<<"level">>, <<"1">>}]},
			<<"utf-8">>, <<"text/html; level=1; charset=utf-8">>},
		{{<<"application">>, <<"json">>, []}, <<"utf-8">>, <<"application/json">>},
		{{<<"application">>, <<"xml">>, [{<<"charset">>, <<"utf-8">>}]}, <<"utf-16">>,
			<<"application/xml; charset=utf-16">>},
		{{<<"application">>, <<"xml">>, [{<<"charset">>, <<"utf-8">>}]}, undefined,
			<<"application/xml">>}
	],
	[?_assertEqual(Expected, mustang_conneg:content_type(MediaType, Charset))
		|| {MediaType, Charset, Expected} <- Tests].

%% Languages and charsets.

language_test_() ->
	Provided = [<<"en">>, <<"fr-ca">>, <<"fr">>],
	Tests = [
		{<<"fr">>, {ok, <<"fr-ca">>}},
		{<<"fr-ca">>, {ok, <<"fr-ca">>}},
		{<<"de, fr;q=0.5">>, {ok, <<"fr-ca">>}},
		{<<"de, *;q=0.1">>, {ok, <<"en">>}},
		{<<"*">>, {ok, <<"en">>}},
		{<<"*;q=0">>, error},
		{<<"en;q=0, fr">>, {ok, <<"fr-ca">>}},
		{<<"en;q=0">>, error},
		{<<"e, fr-c">>, error},
		{<<"de">>, error}
	],
	[{Header, ?_assertEqual(Expected, mustang_conneg:language(Provided, ranges(<<"accept-language">>, Header)))}
		|| {Header, Expected} <- Tests].

charset_test_() ->
	Provided = [<<"utf-8">>, <<"iso-8859-1">>],
	Tests = [
		{<<"iso-8859-1">>, {ok, <<"iso-8859-1">>}},
		{<<"utf-16, iso-8859-1;q=0.2, utf-8;q=0.5">>, {ok, <<"utf-8">>}},
		{<<"*">>, {ok, <<"utf-8">>}},
		{<<"utf">>, error},
		{<<"utf-8;q=0, iso-8859-1;q=0">>, error}
	],
	[{Header, ?_assertEqual(Expected, mustang_conneg:charset(Provided, ranges(<<"accept-charset">>, Header)))}
		|| {Header, Expected} <- Tests].

ranges(Name, Header) ->
	{ok, Ranges} = mustang_http_hd:parse(Name, Header),
	Ranges.

language_matches_test_() ->
	Tests = [
		{<<"en">>, <<"en">>, true},
		{<<"en">>, <<"en-us">>, true},
		{<<"en">>, <<"en-us-x">>, true},
		{<<"en">>, <<"eng">>, false},
		{<<"en-us">>, <<"en">>, false},
		{<<"en-">>, <<"en-us">>, false}
	],
	[?_assertEqual(Expected, mustang_conneg:language_matches(Range, Tag))
		|| {Range, Tag, Expected} <- Tests].

prioritize_test_() -> [
	?_assertEqual([c, a, b], mustang_conneg:prioritize([{a, 500}, {b, 500}, {c, 1000}, {d, 0}])),
	?_assertEqual([], mustang_conneg:prioritize([{a, 0}])),
	?_assertEqual([], mustang_conneg:prioritize([]))
].

%% Properties.

type() -> oneof([<<"text">>, <<"application">>]).
subtype() -> oneof([<<"html">>, <<"plain">>, <<"json">>]).
params() ->
	?LET(Ps, list(oneof([{<<"level">>, <<"1">>}, {<<"level">>, <<"2">>},
		{<<"charset">>, <<"utf-8">>}])), lists:usort(Ps)).
qvalue() -> oneof([0, 1000, range(0, 1000)]).

accept_range() ->
	oneof([{<<"*">>, <<"*">>, []}, {type(), <<"*">>, []}, {type(), subtype(), params()}]).

accept_list() -> list({accept_range(), qvalue(), []}).

provided_list() ->
	?LET(L, list({{type(), subtype(), oneof(['*', params()])}, oneof([f, g])}), lists:usort(L)).

%% The model: a range matches by type, subtype ("*" any) and parameters
%% (each accepted one among those provided, or any when provided '*'); the
%% most specific matching range decides whether a type is acceptable, the
%% highest weight among the ranges of that specificity.
model_matches({TA, STA, PA}, {TP, STP, PP}) ->
	lists:member(TA, [TP, <<"*">>]) andalso lists:member(STA, [STP, <<"*">>])
		andalso (PP =:= '*' orelse PA -- PP =:= []).

model_specificity({<<"*">>, _, _}) -> 0;
model_specificity({_, <<"*">>, _}) -> 1;
model_specificity({_, _, Ps}) -> 2 + length(Ps).

model_acceptable(Accept, MediaType) ->
	case [{model_specificity(R), Q} || {R, Q, _} <- Accept, model_matches(R, MediaType)] of
		[] -> false;
		Matches -> element(2, lists:max(Matches)) > 0
	end.

%% Negotiation offers provided types that an accepted range of weight above
%% 0 matches (with the range's parameters when the type provides any) and
%% that no more specific range refuses; [] (406) only when no provided type
%% is acceptable.
prop_media_types() ->
	?FORALL({Accept, CTP}, {accept_list(), provided_list()},
		begin
			Candidates = mustang_conneg:media_types(Accept, CTP),
			Acceptable = [P || P = {MT, _} <- CTP, model_acceptable(Accept, MT)],
			Sound = lists:all(fun(C) ->
				{Provided = {MT, _}, Chosen} = case C of
					{chosen, P, M, _} -> {P, M};
					{if_charset, _, P, M} -> {P, M}
				end,
				lists:member(Provided, Acceptable) andalso lists:any(fun({R = {_, _, PA}, Q, _}) ->
					Q > 0 andalso model_matches(R, MT) andalso Chosen =:= case MT of
						{TP, STP, '*'} -> {TP, STP, PA};
						_ -> MT
					end
				end, Accept)
			end, Candidates),
			?WHENFAIL(io:format("~p~n", [{Candidates, Acceptable}]),
				Sound andalso (Candidates =:= []) =:= (Acceptable =:= []))
		end).

%% The first candidate comes from a range of the highest weight that
%% matches an acceptable type.
prop_media_types_best_weight() ->
	?FORALL({Accept, CTP}, {accept_list(), provided_list()},
		case mustang_conneg:media_types(Accept, CTP) of
			[] ->
				true;
			[First | _] ->
				MT = case First of
					{chosen, {M, _}, _, _} -> M;
					{if_charset, _, {M, _}, _} -> M
				end,
				Acceptable = [A || {A, _} <- CTP, model_acceptable(Accept, A)],
				Best = lists:max([Q || {R, Q, _} <- Accept, Q > 0,
					lists:any(fun(A) -> model_matches(R, A) end, Acceptable)]),
				lists:any(fun({R, Q, _}) -> Q =:= Best andalso model_matches(R, MT) end, Accept)
		end).

language_tag() -> oneof([<<"en">>, <<"en-us">>, <<"fr">>, <<"fr-ca">>, <<"de">>]).

%% A language chosen is a provided one, matched by a range of weight above
%% 0 or by "*"; error (406) only when no such range matches any of them.
prop_language() ->
	?FORALL({Provided, Ranges},
		{non_empty(list(language_tag())), list({oneof([<<"*">>, language_tag()]), qvalue()})},
		begin
			Matching = [R || {R, Q} <- Ranges, Q > 0,
				R =:= <<"*">> orelse lists:any(fun(P) -> mustang_conneg:language_matches(R, P) end, Provided)],
			case mustang_conneg:language(Provided, Ranges) of
				error ->
					Matching =:= [];
				{ok, Language} ->
					lists:member(Language, Provided) andalso lists:any(fun(R) ->
						R =:= <<"*">> orelse mustang_conneg:language_matches(R, Language)
					end, Matching)
			end
		end).

properties_test_() ->
	Props = [prop_media_types(), prop_media_types_best_weight(), prop_language()],
	[{timeout, 60, ?_assert(proper:quickcheck(P, [{numtests, 1000}, {to_file, user}]))}
		|| P <- Props].
