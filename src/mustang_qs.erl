%% Query string and application/x-www-form-urlencoded codec (RFC 3986 2.1, WHATWG URL).
%%
%% Contract: strict when parsing, lax when building.
%%
%% The parsers return {ok, Value} or {error, {value_error, 400, Reason}} (mustang_error,
%% doc/internals/errors.md) and never crash on any binary; arguments of the wrong
%% type (not a binary, a negative max_keys) raise badarg.
%% A "%" that is not followed by two hexadecimal digits is an error. Other bytes
%% are taken as they are: checking which characters may appear in a request-target
%% is the HTTP parser's job.
%%
%% parse_qs/1 splits on "&", skips empty pairs, splits each pair on its first "=",
%% turns "+" into a space and percent-decodes. A key without "=" has the value true.
%% Order and duplicates are kept.
%%
%% The builders trust their input: qs/1 expects binaries (or true as a value) and
%% percent-encodes every byte outside the RFC 3986 unreserved set.
-module(mustang_qs).

%% Parsing.
-export([parse_qs/1]).
-export([parse_qs_limited/2]).
-export([urldecode/1]).

%% Building.
-export([qs/1]).
-export([urlencode/1]).

-type qs() :: [{binary(), binary() | true}].
-export_type([qs/0]).

-define(IS_HEX(C), ((C >= $0 andalso C =< $9) orelse (C >= $a andalso C =< $f)
	orelse (C >= $A andalso C =< $F))).

%% Parsing.

%% Parses a query string or an `application/x-www-form-urlencoded` body:
%% `{ok, [{Key, Value | true}]}` in order, duplicates kept, `+` as a space,
%% percent-decoded; a key without `=` has the value `true`. A `%` not followed
%% by two hex digits gives `{error, {value_error, 400, Reason}}`; a
%% non-binary raises `badarg`.
%%
%%     {ok, [{<<"a">>, <<"1">>}, {<<"b">>, true}, {<<"c">>, <<"x y!">>}]} =
%%         mustang_qs:parse_qs(<<"a=1&b&c=x+y%21">>)
-spec parse_qs(binary()) -> {ok, qs()} | {error, mustang_error:value_error()}.
parse_qs(Qs) ->
	parse_qs_limited(Qs, infinity).

%% `parse_qs/1` with at most MaxKeys pairs (or `infinity`); more is an error
%% (`{error, {value_error, 400, Reason}}`), found without scanning the input
%% past the first pair over the limit. A negative MaxKeys raises `badarg`.
-spec parse_qs_limited(binary(), non_neg_integer() | infinity)
	-> {ok, qs()} | {error, mustang_error:value_error()}.
parse_qs_limited(Qs, MaxKeys) when is_binary(Qs), MaxKeys =:= infinity;
		is_binary(Qs), is_integer(MaxKeys), MaxKeys >= 0 ->
	pairs(Qs, MaxKeys, []);
parse_qs_limited(_, _) ->
	error(badarg).

-spec pairs(binary(), non_neg_integer() | infinity, qs())
	-> {ok, qs()} | {error, mustang_error:value_error()}.
pairs(<<>>, _, Acc) ->
	{ok, lists:reverse(Acc)};
pairs(<<$&, Rest/binary>>, Left, Acc) ->
	pairs(Rest, Left, Acc);
pairs(_, 0, _) ->
	{error, {value_error, 400, 'The query string has more pairs than max_keys allows. (Mustang max_keys)'}};
pairs(Qs, Left, Acc) ->
	key(Qs, Qs, 0, false, Left, Acc).

%% Scans the key, remembering whether it holds anything to decode. Most keys and
%% values do not: they are returned as sub-binaries, without copying.
-spec key(binary(), binary(), non_neg_integer(), boolean(), non_neg_integer() | infinity, qs())
	-> {ok, qs()} | {error, mustang_error:value_error()}.
key(<<$=, Rest/binary>>, Qs, Len, Decode, Left, Acc) ->
	case form_decode(binary:part(Qs, 0, Len), Decode) of
		{ok, Key} -> value(Rest, Rest, 0, false, Key, Left, Acc);
		Error -> Error
	end;
key(<<$&, Rest/binary>>, Qs, Len, Decode, Left, Acc) ->
	key_only(Rest, binary:part(Qs, 0, Len), Decode, Left, Acc);
key(<<>>, Qs, _, Decode, Left, Acc) ->
	key_only(<<>>, Qs, Decode, Left, Acc);
key(<<C, Rest/binary>>, Qs, Len, _, Left, Acc) when C =:= $%; C =:= $+ ->
	key(Rest, Qs, Len + 1, true, Left, Acc);
key(<<_, Rest/binary>>, Qs, Len, Decode, Left, Acc) ->
	key(Rest, Qs, Len + 1, Decode, Left, Acc).

-spec key_only(binary(), binary(), boolean(), non_neg_integer() | infinity, qs())
	-> {ok, qs()} | {error, mustang_error:value_error()}.
key_only(Rest, Key0, Decode, Left, Acc) ->
	case form_decode(Key0, Decode) of
		{ok, Key} -> pairs(Rest, decrement(Left), [{Key, true} | Acc]);
		Error -> Error
	end.

-spec value(binary(), binary(), non_neg_integer(), boolean(), binary(),
	non_neg_integer() | infinity, qs()) -> {ok, qs()} | {error, mustang_error:value_error()}.
value(<<$&, Rest/binary>>, Bin, Len, Decode, Key, Left, Acc) ->
	pair(Rest, Key, binary:part(Bin, 0, Len), Decode, Left, Acc);
value(<<>>, Bin, _, Decode, Key, Left, Acc) ->
	pair(<<>>, Key, Bin, Decode, Left, Acc);
value(<<C, Rest/binary>>, Bin, Len, _, Key, Left, Acc) when C =:= $%; C =:= $+ ->
	value(Rest, Bin, Len + 1, true, Key, Left, Acc);
value(<<_, Rest/binary>>, Bin, Len, Decode, Key, Left, Acc) ->
	value(Rest, Bin, Len + 1, Decode, Key, Left, Acc).

-spec pair(binary(), binary(), binary(), boolean(), non_neg_integer() | infinity, qs())
	-> {ok, qs()} | {error, mustang_error:value_error()}.
pair(Rest, Key, Value0, Decode, Left, Acc) ->
	case form_decode(Value0, Decode) of
		{ok, Value} -> pairs(Rest, decrement(Left), [{Key, Value} | Acc]);
		Error -> Error
	end.

-spec decrement(non_neg_integer() | infinity) -> non_neg_integer() | infinity.
decrement(infinity) -> infinity;
decrement(N) -> N - 1.

-spec form_decode(binary(), boolean()) -> {ok, binary()} | {error, mustang_error:value_error()}.
form_decode(Bin, false) -> {ok, Bin};
form_decode(Bin, true) -> decode(Bin, Bin, 0, true, <<>>).

%% Percent-decodes a binary (`+` stays `+`): `{ok, Decoded}`, or
%% `{error, {value_error, 400, Reason}}` for a `%` not followed by two hex
%% digits; a non-binary raises `badarg`.
-spec urldecode(binary()) -> {ok, binary()} | {error, mustang_error:value_error()}.
urldecode(Bin) when is_binary(Bin) ->
	decode(Bin, Bin, 0, false, <<>>);
urldecode(_) ->
	error(badarg).

%% Copies runs of plain bytes at once: Run is where the current run starts and Len
%% its length so far. With Plus, "+" decodes to a space.
-spec decode(binary(), binary(), non_neg_integer(), boolean(), binary())
	-> {ok, binary()} | {error, mustang_error:value_error()}.
decode(<<$%, H, L, Rest/binary>>, Run, Len, Plus, Acc) when ?IS_HEX(H), ?IS_HEX(L) ->
	Byte = unhex(H) * 16 + unhex(L),
	decode(Rest, Rest, 0, Plus, <<Acc/binary, (binary:part(Run, 0, Len))/binary, Byte>>);
decode(<<$%, _/binary>>, _, _, _, _) ->
	{error, {value_error, 400, 'A "%" must be followed by two hexadecimal digits. (RFC3986 2.1)'}};
decode(<<$+, Rest/binary>>, Run, Len, true, Acc) ->
	decode(Rest, Rest, 0, true, <<Acc/binary, (binary:part(Run, 0, Len))/binary, $\s>>);
decode(<<_, Rest/binary>>, Run, Len, Plus, Acc) ->
	decode(Rest, Run, Len + 1, Plus, Acc);
decode(<<>>, Run, _, _, <<>>) ->
	{ok, Run};
decode(<<>>, Run, _, _, Acc) ->
	{ok, <<Acc/binary, Run/binary>>}.

-spec unhex(byte()) -> 0..15.
unhex(C) when C >= $0, C =< $9 -> C - $0;
unhex(C) when C >= $a, C =< $f -> C - $a + 10;
unhex(C) when C >= $A, C =< $F -> C - $A + 10.

%% Building.

%% Builds a query string from `[{Key, Value | true}]` (binaries): every byte
%% outside the RFC 3986 unreserved set is percent-encoded, spaces as `+`; a
%% `true` value gives the key alone.
%%
%%     <<"a=1+2&b">> = mustang_qs:qs([{<<"a">>, <<"1 2">>}, {<<"b">>, true}])
-spec qs(qs()) -> binary().
qs([]) ->
	<<>>;
qs([Pair | Tail]) ->
	qs_tail(Tail, qs_pair(Pair, <<>>)).

-spec qs_tail(qs(), binary()) -> binary().
qs_tail([], Acc) ->
	Acc;
qs_tail([Pair | Tail], Acc) ->
	qs_tail(Tail, qs_pair(Pair, <<Acc/binary, $&>>)).

-spec qs_pair({binary(), binary() | true}, binary()) -> binary().
qs_pair({Key, true}, Acc) ->
	encode(Key, true, Acc);
qs_pair({Key, Value}, Acc) ->
	encode(Value, true, <<(encode(Key, true, Acc))/binary, $=>>).

%% Percent-encodes every byte outside the RFC 3986 unreserved set (a space as
%% `%20`): `<<"a%20b%2Fc">>` for `<<"a b/c">>`.
-spec urlencode(binary()) -> binary().
urlencode(Bin) ->
	encode(Bin, false, <<>>).

%% Unreserved characters (RFC 3986 2.3) are kept; with Plus, space becomes "+".
-spec encode(binary(), boolean(), binary()) -> binary().
encode(<<C, Rest/binary>>, Plus, Acc) when C >= $a, C =< $z; C >= $A, C =< $Z;
		C >= $0, C =< $9; C =:= $-; C =:= $.; C =:= $_; C =:= $~ ->
	encode(Rest, Plus, <<Acc/binary, C>>);
encode(<<$\s, Rest/binary>>, true, Acc) ->
	encode(Rest, true, <<Acc/binary, $+>>);
encode(<<C, Rest/binary>>, Plus, Acc) ->
	encode(Rest, Plus, <<Acc/binary, $%, (hex(C bsr 4)), (hex(C band 15))>>);
encode(<<>>, _, Acc) ->
	Acc.

-spec hex(0..15) -> byte().
hex(N) when N < 10 -> $0 + N;
hex(N) -> $A + N - 10.
