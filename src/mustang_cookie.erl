%% Cookie and Set-Cookie codec (RFC 6265).
%%
%% Contract: strict when parsing, lax when building, with one exception below.
%%
%% parse_cookie/1 reads a Cookie header value: pairs separated by ";". It returns
%% {ok, [{Name, Value}]} in the order sent, duplicates kept, or
%% {error, {value_error, 400, Reason}} (mustang_error), and never crashes on a binary. It is as lenient as browsers are about what they actually send:
%% whitespace around names, values and separators is ignored, empty pairs (";;" or
%% a trailing ";") are skipped, and values may hold any byte except ";" and control
%% characters, HTAB included (RFC 6265 4.1.1 cookie-octet; only SP, which browsers
%% do send, is let through inside a value). Names must be non-empty tokens
%% (RFC 9110 5.6.2) and every pair must have a "=". A value wrapped in double
%% quotes is returned without them.
%%
%% setcookie/3 builds a Set-Cookie header value. The builders otherwise trust their
%% input, but a bad cookie name, value, path or domain would let a handler inject
%% attributes or break the response, so setcookie/3 raises
%% error({invalid_cookie_name, Name}), error({invalid_cookie_value, Value}),
%% error({invalid_cookie_attribute, Key, Value}) or error({invalid_cookie_option, Key,
%% Value}) (unknown option keys included). These are bugs in the calling handler.
-module(mustang_cookie).

%% Parsing.
-export([parse_cookie/1]).

%% Building.
-export([setcookie/3]).
-export([filter/2]).

-type cookie_opts() :: #{
	max_age => non_neg_integer(),
	domain => binary(),
	path => binary(),
	secure => boolean(),
	http_only => boolean(),
	same_site => default | none | strict | lax,
	partitioned => boolean()
}.
-export_type([cookie_opts/0]).

-define(ERROR, {error, {value_error, 400,
	'The cookie header must be name=value pairs with token names and no control characters. (RFC6265 4.2.1)'}}).

-define(IS_WS(C), (C =:= $\s orelse C =:= $\t)).
-define(IS_CTL(C), (C < 32 orelse C =:= 127)).
-define(IS_TCHAR(C), ((C >= $a andalso C =< $z) orelse (C >= $A andalso C =< $Z)
	orelse (C >= $0 andalso C =< $9) orelse C =:= $! orelse C =:= $# orelse C =:= $$
	orelse C =:= $% orelse C =:= $& orelse C =:= $' orelse C =:= $* orelse C =:= $+
	orelse C =:= $- orelse C =:= $. orelse C =:= $^ orelse C =:= $_ orelse C =:= $`
	orelse C =:= $| orelse C =:= $~)).

%% Parsing.

%% Parses a cookie header value (RFC 6265 5.4): `{ok, [{Name, Value}]}` in
%% the order sent, duplicates kept, a quoted value without its quotes; or
%% `{error, {value_error, 400, Reason}}` (a pair without `=`, a name that is
%% not a token, a control character). A non-binary raises `badarg`.
%% `mustang_req:parse_cookies/1` is the request's.
-spec parse_cookie(binary()) -> {ok, [{binary(), binary()}]} | {error, mustang_error:value_error()}.
parse_cookie(Bin) when is_binary(Bin) ->
	cookies(Bin, []);
parse_cookie(_) ->
	error(badarg).

-spec cookies(binary(), [{binary(), binary()}])
	-> {ok, [{binary(), binary()}]} | {error, mustang_error:value_error()}.
cookies(<<C, Rest/binary>>, Acc) when ?IS_WS(C); C =:= $; ->
	cookies(Rest, Acc);
cookies(<<>>, Acc) ->
	{ok, lists:reverse(Acc)};
cookies(Bin, Acc) ->
	name(Bin, Bin, 0, Acc).

-spec name(binary(), binary(), non_neg_integer(), [{binary(), binary()}])
	-> {ok, [{binary(), binary()}]} | {error, mustang_error:value_error()}.
name(<<C, Rest/binary>>, Bin, Len, Acc) when ?IS_TCHAR(C) ->
	name(Rest, Bin, Len + 1, Acc);
name(Rest, Bin, Len, Acc) when Len > 0 ->
	Name = binary:part(Bin, 0, Len),
	case skip_ws(Rest) of
		<<$=, Rest1/binary>> ->
			Rest2 = skip_ws(Rest1),
			value(Rest2, Rest2, 0, 0, Name, Acc);
		_ ->
			?ERROR
	end;
name(_, _, _, _) ->
	?ERROR.

%% Len counts the value's bytes; End is the length without trailing whitespace.
%% Whitespace is trailing when the value ends after it; inside the value a TAB
%% is a control character like the others.
-spec value(binary(), binary(), non_neg_integer(), non_neg_integer(), binary(),
	[{binary(), binary()}]) -> {ok, [{binary(), binary()}]} | {error, mustang_error:value_error()}.
value(Ws = <<C, _/binary>>, Bin, Len, End, Name, Acc) when ?IS_WS(C) ->
	case ws_run(Ws, 0, false) of
		{_, <<C2, _/binary>>, true} when C2 =/= $; -> ?ERROR;
		{N, Rest, _} -> value(Rest, Bin, Len + N, End, Name, Acc)
	end;
value(<<C, _/binary>>, _, _, _, _, _) when ?IS_CTL(C) ->
	?ERROR;
value(<<C, Rest/binary>>, Bin, Len, _, Name, Acc) when C =/= $; ->
	value(Rest, Bin, Len + 1, Len + 1, Name, Acc);
value(Rest, Bin, _, End, Name, Acc) ->
	Value = unquote(binary:part(Bin, 0, End)),
	cookies(Rest, [{Name, Value} | Acc]).

%% The length of the whitespace at the start of a binary, the rest, and
%% whether a TAB was in it.
-spec ws_run(binary(), non_neg_integer(), boolean()) -> {non_neg_integer(), binary(), boolean()}.
ws_run(<<$\s, Rest/binary>>, N, Tab) -> ws_run(Rest, N + 1, Tab);
ws_run(<<$\t, Rest/binary>>, N, _) -> ws_run(Rest, N + 1, true);
ws_run(Rest, N, Tab) -> {N, Rest, Tab}.

-spec unquote(binary()) -> binary().
unquote(<<$", Rest/binary>> = Value) when byte_size(Rest) > 0 ->
	case binary:last(Rest) of
		$" -> binary:part(Rest, 0, byte_size(Rest) - 1);
		_ -> Value
	end;
unquote(Value) ->
	Value.

-spec skip_ws(binary()) -> binary().
skip_ws(<<C, Rest/binary>>) when ?IS_WS(C) ->
	skip_ws(Rest);
skip_ws(Bin) ->
	Bin.

%% Building.

%% A `set-cookie` header value: Name=Value with the attributes of Opts
%% (`max_age`, with an `Expires`; `domain`, `path`, `secure`, `http_only`,
%% `same_site`, `partitioned`). `mustang_req:set_resp_cookie/4` uses it. A
%% name that is not a token, a value outside RFC 6265's cookie-octets, an
%% attribute with `;` or a control character, or an unknown or invalid option
%% raises `error({invalid_cookie_name, Name})`, `{invalid_cookie_value,
%% Value}`, `{invalid_cookie_attribute, Key, Value}` or
%% `{invalid_cookie_option, Key, Value}`.
-spec setcookie(iodata(), iodata(), cookie_opts()) -> iodata().
setcookie(Name0, Value0, Opts) ->
	Name = iolist_to_binary(Name0),
	Value = iolist_to_binary(Value0),
	is_token(Name) orelse error({invalid_cookie_name, Name0}),
	is_cookie_value(Value) orelse error({invalid_cookie_value, Value0}),
	[Name, $=, Value | attributes(Opts)].

-spec attributes(cookie_opts()) -> iodata().
attributes(Opts) ->
	ok = maps:foreach(fun check_option/2, Opts),
	[
		max_age(maps:get(max_age, Opts, undefined)),
		attribute(<<"; Domain=">>, domain, maps:get(domain, Opts, undefined)),
		attribute(<<"; Path=">>, path, maps:get(path, Opts, undefined)),
		flag(<<"; Secure">>, maps:get(secure, Opts, false)),
		flag(<<"; HttpOnly">>, maps:get(http_only, Opts, false)),
		same_site(maps:get(same_site, Opts, default)),
		flag(<<"; Partitioned">>, maps:get(partitioned, Opts, false))
	].

-spec check_option(term(), term()) -> ok.
check_option(max_age, V) when is_integer(V), V >= 0 -> ok;
check_option(domain, V) when is_binary(V) -> ok;
check_option(path, V) when is_binary(V) -> ok;
check_option(secure, V) when is_boolean(V) -> ok;
check_option(http_only, V) when is_boolean(V) -> ok;
check_option(same_site, V) when V =:= default; V =:= none; V =:= strict; V =:= lax -> ok;
check_option(partitioned, V) when is_boolean(V) -> ok;
check_option(Key, V) -> error({invalid_cookie_option, Key, V}).

-spec max_age(non_neg_integer() | undefined) -> iodata().
max_age(undefined) ->
	[];
max_age(0) ->
	[<<"; Expires=Thu, 01 Jan 1970 00:00:00 GMT; Max-Age=0">>];
max_age(MaxAge) ->
	Now = calendar:datetime_to_gregorian_seconds(erlang:universaltime()),
	Expires = calendar:gregorian_seconds_to_datetime(min(Now + MaxAge, max_gregorian_seconds())),
	[<<"; Expires=">>, mustang_date:rfc7231(Expires), <<"; Max-Age=">>,
		integer_to_binary(MaxAge)].

%% HTTP-date years have four digits.
-spec max_gregorian_seconds() -> non_neg_integer().
max_gregorian_seconds() ->
	calendar:datetime_to_gregorian_seconds({{9999, 12, 31}, {23, 59, 59}}).

-spec attribute(binary(), domain | path, binary() | undefined) -> iodata().
attribute(_, _, undefined) ->
	[];
attribute(Prefix, Key, Value) ->
	is_attribute_value(Value) orelse error({invalid_cookie_attribute, Key, Value}),
	[Prefix, Value].

-spec flag(binary(), boolean()) -> iodata().
flag(Attr, true) -> Attr;
flag(_, false) -> [].

-spec same_site(default | none | strict | lax) -> iodata().
same_site(default) -> [];
same_site(none) -> <<"; SameSite=None">>;
same_site(strict) -> <<"; SameSite=Strict">>;
same_site(lax) -> <<"; SameSite=Lax">>.

-spec is_token(binary()) -> boolean().
is_token(<<>>) ->
	false;
is_token(Bin) ->
	is_token_chars(Bin).

-spec is_token_chars(binary()) -> boolean().
is_token_chars(<<C, Rest/binary>>) when ?IS_TCHAR(C) ->
	is_token_chars(Rest);
is_token_chars(<<>>) ->
	true;
is_token_chars(_) ->
	false.

-spec is_cookie_value(binary()) -> boolean().
is_cookie_value(<<C, _/binary>>) when ?IS_CTL(C); C =:= $\s; C =:= $;; C =:= $, ->
	false;
is_cookie_value(<<_, Rest/binary>>) ->
	is_cookie_value(Rest);
is_cookie_value(<<>>) ->
	true.

%% av-octet is any CHAR except CTLs or ";" (RFC 6265 4.1.1).
-spec is_attribute_value(binary()) -> boolean().
is_attribute_value(<<C, _/binary>>) when ?IS_CTL(C); C =:= $; ->
	false;
is_attribute_value(<<_, Rest/binary>>) ->
	is_attribute_value(Rest);
is_attribute_value(<<>>) ->
	true.

%% @doc The cookies of a cookie header value whose names are in Names
%% (atoms or binaries), unparsed, joined again; <<>> when none is left.
%% Cookies of other applications, which may not even parse, are dropped
%% without being parsed (mustang_req:filter_cookies/2).
-spec filter([atom() | binary()], iodata()) -> binary().
filter(Names0, Value) ->
	Names = [case N of _ when is_atom(N) -> atom_to_binary(N, utf8); _ -> N end || N <- Names0],
	Kept = [Cookie || Cookie <- binary:split(iolist_to_binary(Value), <<";">>, [global]),
		lists:member(cookie_name(Cookie), Names)],
	iolist_to_binary(lists:join(<<";">>, Kept)).

cookie_name(Cookie) ->
	[Name | _] = binary:split(Cookie, <<"=">>),
	mustang_http_hd_grammar:trim(Name).
