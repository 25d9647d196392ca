%% Content negotiation for mustang_rest (RFC 9110 12.5): plain functions on
%% the parsed accept headers (mustang_http_hd) and on the lists a handler's
%% content_types_provided, content_types_accepted, languages_provided and
%% charsets_provided return. No Req and no handler call: mustang_rest runs
%% the decision flow, calls the handler and answers 406 or 415 when these
%% functions find nothing.
%%
%% Media types are {Type, SubType, Params}, lowercased as mustang_http_hd
%% parses them; provided or accepted parameters '*' match any parameters.
%% Weights are qvalues in thousandths (0..1000), 0 meaning "not acceptable".
-module(mustang_conneg).

%% Media types.
-export([normalize_media_type/1]).
-export([default_media_type/1]).
-export([media_types/2]).
-export([prioritize_accept/1]).
-export([refused/2]).
-export([range_matches/2]).
-export([accepted_content_type/2]).
-export([content_type/2]).

%% Languages and charsets.
-export([language/2]).
-export([charset/2]).
-export([language_matches/2]).
-export([prioritize/1]).

-type media_type() :: mustang_rest:media_type().
-type accept() :: {mustang_http_hd:media_type(), mustang_http_hd:qvalue(),
	mustang_http_hd_accept:accept_ext()}.
-type provided() :: {media_type(), atom()}.
%% A media type choice, in the order of preference: {chosen, ...} is a
%% choice; {if_charset, Charset, ...} is one only when the resource provides
%% Charset (charsets_provided, any charset when it is not exported).
-type candidate() :: {chosen, provided(), media_type(), binary() | undefined}
	| {if_charset, binary(), provided(), media_type()}.
-export_type([accept/0, provided/0, candidate/0]).

%% A binary media type in content_types_provided or _accepted is parsed
%% like a content-type header: its parameters must then match exactly.
-spec normalize_media_type(binary() | media_type()) -> media_type().
normalize_media_type(Type) when is_binary(Type) ->
	{ok, MediaType} = mustang_http_hd:parse_content_type(Type),
	MediaType;
normalize_media_type(MediaType) ->
	MediaType.

%% Without an accept header: the media type of the first type provided,
%% without parameters when it provides any.
-spec default_media_type(provided()) -> media_type().
default_media_type({{Type, SubType, '*'}, _}) -> {Type, SubType, []};
default_media_type({MediaType, _}) -> MediaType.

%% The choices for an accept header, best first: for each accepted range by
%% priority (weight 0 out), the provided types it matches, less those
%% refused. Provided parameters '*': any parameters match, and the chosen
%% media type has those of the range; a charset among them must be one the
%% resource provides. Provided parameters listed: each accepted parameter
%% must be one of them, and their charset is chosen. [] is 406.
-spec media_types([accept()], [provided()]) -> [candidate()].
media_types(Accept, CTP) ->
	Acceptable = CTP -- refused(Accept, CTP),
	[Candidate || {Range, Q, _} <- prioritize_accept(Accept), Q > 0,
		Provided <- Acceptable, {true, Candidate} <- [candidate(Range, Provided)]].

candidate({TA, STA, PA}, Provided = {{TP, STP, PP}, _})
		when TA =:= TP orelse TA =:= <<"*">>, STA =:= STP orelse STA =:= <<"*">> ->
	case PP of
		'*' ->
			case lists:keyfind(<<"charset">>, 1, PA) of
				false -> {true, {chosen, Provided, {TP, STP, PA}, undefined}};
				{_, Charset} -> {true, {if_charset, Charset, Provided, {TP, STP, PA}}}
			end;
		_ ->
			case lists:all(fun(P) -> lists:member(P, PP) end, PA) of
				true ->
					{true, {chosen, Provided, {TP, STP, PP},
						proplists:get_value(<<"charset">>, PP)}};
				false ->
					false
			end
	end;
candidate(_, _) ->
	false.

%% Highest weight first; at equal weight the more specific range first
%% (RFC 9110 12.5.1): type/subtype;params, type/subtype, type/*, */*; at
%% equal weight and specificity, the order of the header.
-spec prioritize_accept([accept()]) -> [accept()].
prioritize_accept(Accept) ->
	Keyed = [{-Q, -specificity(MediaType), N, A}
		|| {N, A = {MediaType, Q, _}} <- lists:zip(lists:seq(1, length(Accept)), Accept)],
	[A || {_, _, _, A} <- lists:sort(Keyed)].

specificity({<<"*">>, _, _}) -> 0;
specificity({_, <<"*">>, _}) -> 1;
specificity({_, _, []}) -> 2;
specificity({_, _, Params}) -> 2 + length(Params).

%% The provided types whose most specific matching range has weight 0: not
%% acceptable, even when a less specific range matches them too
%% (RFC 9110 12.5.1: "text/html;q=0, */*").
-spec refused([accept()], [provided()]) -> [provided()].
refused(Accept, CTP) ->
	[Provided || Provided = {MediaType, _} <- CTP,
		case [{specificity(Range), Q} || {Range, Q, _} <- Accept, range_matches(Range, MediaType)] of
			[] -> false;
			Matches -> element(2, lists:max(Matches)) =:= 0
		end].

%% Whether an accepted range matches a provided media type: type and
%% subtype equal or "*", each accepted parameter among the provided ones.
-spec range_matches(mustang_http_hd:media_type(), media_type()) -> boolean().
range_matches({TA, STA, PA}, {TP, STP, PP}) ->
	(TA =:= TP orelse TA =:= <<"*">>) andalso (STA =:= STP orelse STA =:= <<"*">>)
		andalso (PP =:= '*' orelse lists:all(fun(P) -> lists:member(P, PP) end, PA)).

%% The AcceptCallback of the first content_types_accepted entry that takes
%% the request's content type: '*' any content type, {Type, SubType, '*'}
%% any parameters, otherwise the same parameters in any order. error is 415.
-spec accepted_content_type(mustang_http_hd:media_type(), [{binary() | media_type() | '*', atom()}])
	-> {ok, atom()} | error.
accepted_content_type(_, []) ->
	error;
accepted_content_type(ContentType, [{Accepted, Fun} | Tail]) ->
	case accepts(normalize_accepted(Accepted), ContentType) of
		true -> {ok, Fun};
		false -> accepted_content_type(ContentType, Tail)
	end.

normalize_accepted('*') -> '*';
normalize_accepted(Type) -> normalize_media_type(Type).

accepts('*', _) -> true;
accepts({Type, SubType, '*'}, {Type, SubType, _}) -> true;
accepts({Type, SubType, Params}, {Type, SubType, Params2}) ->
	lists:sort(Params) =:= lists:sort(Params2);
accepts(_, _) -> false.

%% The content-type of the response: the chosen media type and its
%% parameters, the charset last. The charset is added to text types only,
%% or where the media type has it among its parameters.
-spec content_type(mustang_http_hd:media_type(), binary() | undefined) -> binary().
content_type({Type, SubType, Params}, Charset) ->
	ParamsBin = [[<<"; ">>, K, <<"=">>, V] || {K, V} <- Params, K =/= <<"charset">>],
	CharsetBin = case Charset of
		undefined -> [];
		_ when Type =:= <<"text">> -> [<<"; charset=">>, Charset];
		_ ->
			case lists:keymember(<<"charset">>, 1, Params) of
				true -> [<<"; charset=">>, Charset];
				false -> []
			end
	end,
	iolist_to_binary([Type, $/, SubType, ParamsBin, CharsetBin]).

%% languages_provided and charsets_provided against a parsed Accept-Language
%% or Accept-Charset: the first provided value that the range of highest
%% weight matches ("*" the first provided value), then the next range;
%% error (406) when none does.
-spec language([binary(), ...], [{binary(), mustang_http_hd:qvalue()}]) -> {ok, binary()} | error.
language(Provided, Ranges) ->
	choose(Provided, prioritize(Ranges), fun language_matches/2).

-spec charset([binary(), ...], [{binary(), mustang_http_hd:qvalue()}]) -> {ok, binary()} | error.
charset(Provided, Ranges) ->
	choose(Provided, prioritize(Ranges), fun(Range, Charset) -> Range =:= Charset end).

choose(_, [], _) ->
	error;
choose([First | _], [<<"*">> | _], _) ->
	{ok, First};
choose(Provided, [Range | Rest], Matches) ->
	case [P || P <- Provided, Matches(Range, P)] of
		[Value | _] -> {ok, Value};
		[] -> choose(Provided, Rest, Matches)
	end.

%% A language range matches a tag equal to it or that starts with it
%% followed by "-" (RFC 4647 3.3.1, basic filtering).
-spec language_matches(binary(), binary()) -> boolean().
language_matches(Range, Tag) ->
	Size = byte_size(Range),
	case Tag of
		Range -> true;
		<<Range:Size/binary, $-, _/binary>> -> true;
		_ -> false
	end.

%% Highest weight first, in the order given at equal weight; weight 0 out.
-spec prioritize([{V, mustang_http_hd:qvalue()}]) -> [V].
prioritize(List) ->
	Keyed = [{-Q, N, V} || {N, {V, Q}} <- lists:zip(lists:seq(1, length(List)), List), Q > 0],
	[V || {_, _, V} <- lists:sort(Keyed)].
