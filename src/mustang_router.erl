%% Router: maps the host and path of a request to a handler, with the route
%% syntax and results of cowboy_router. compile/1 turns routes into dispatch
%% rules, match/3 looks a host and path up in them, and execute/2 is the router
%% middleware (Env key `dispatch` in; Env keys `handler`, `handler_opts` and Req
%% keys `bindings`, `host_info`, `path_info` out; 400 or 404 when nothing matches).
%%
%% Compiled form. Every pattern is split into segments at compile time, host
%% patterns right to left. Optional segments are expanded into all the patterns
%% they stand for, longest first: "/a/[b/[c]]" gives a/b/c, a/b and a. A run of
%% consecutive rules made only of literal segments becomes one map keyed by the
%% segment list, so literal routes cost one lookup whatever their number.
%%
%% Matching. The host is lowercased (ASCII), loses its port and one trailing dot,
%% and is split on ".". The path is split on "/" once, the first time a rule needs
%% its segments ('_' does not): each segment is percent-decoded, "." and ".."
%% segments are removed (RFC 3986 5.2.4) and a trailing "/" is ignored. A path
%% that is neither "*" nor starts with "/" is a bad request, and so is a bad
%% escape in a path some rule needs split. Only the paths of the first matching
%% host are tried (a 404, not a 400, when none match). A binding repeated in a
%% pattern, or bound by both the host and the path, must have the same raw value
%% everywhere. Constraints run on the bindings after a pattern matched; when one
%% fails, the next pattern or rule is tried.
-module(mustang_router).
-behaviour(mustang_middleware).

%% Routes.
-export([compile/1]).
-export([match/3]).

%% Middleware.
-export([execute/2]).

-type bindings() :: #{atom() => any()}.
-type tokens() :: [binary()].
%% A host or path pattern (`"/users/:id"`, `"[...].example.org"`), or `'_'`
%% for any.
-type route_match() :: '_' | iodata().
%% A path rule: pattern, optional constraints, handler module and its
%% options (the second argument of its `init/2`).
-type route_path() :: {route_match(), module(), any()}
	| {route_match(), mustang_constraints:fields(), module(), any()}.
%% A host rule: pattern, optional constraints, and its path rules.
-type route_host() :: {route_match(), [route_path()]}
	| {route_match(), mustang_constraints:fields(), [route_path()]}.
%% What `compile/1` takes: host rules in order, the first that matches wins.
-type routes() :: [route_host()].
-export_type([bindings/0]).
-export_type([tokens/0]).
-export_type([routes/0]).
-export_type([dispatch_rules/0]).

%% A compiled pattern: its number of segments (not counting '...'), whether it
%% ends with '...' and its segments. Literal segments are binaries.
-type segment() :: binary() | '_' | '...' | {bind, atom()}.
-type pattern() :: {non_neg_integer(), boolean(), [segment()]}.
-type checks() :: [{atom(), [mustang_constraints:constraint()]}].
-type rule(Target) :: {exact, #{[binary()] | '*' => Target}}
	| {any, Target}
	| {pattern, [pattern()], checks(), Target}.
-type path_rules() :: [rule({module(), any()})].
%% Compiled routes, for the `dispatch` key of `env` (or in a
%% `persistent_term` named there).
-opaque dispatch_rules() :: [rule(path_rules())].

%% What `match/3` returns.
-type match_result() :: {ok, module(), any(), bindings(), undefined | tokens(),
		undefined | tokens()}
	| {error, notfound, host | path}
	| {error, badrequest, path}.

%% The request host and path, split the first time a rule needs the segments.
%% Host segments are kept right to left.
-type split() :: {split, tokens(), non_neg_integer()}.
-type req_host() :: binary() | split().
-type req_path() :: star | badrequest | binary() | split().

%% Sibling optional segments multiply the patterns: refuse more than this.
-define(MAX_PATTERNS, 1024).

-define(IS_HEX(C), ((C >= $0 andalso C =< $9) orelse (C >= $a andalso C =< $f)
	orelse (C >= $A andalso C =< $F))).

%% Compiling.

%% Compiles routes (Cowboy's route syntax) into dispatch rules for the
%% `dispatch` key of the `env` protocol option. Routes are
%% `[{HostMatch, PathsList}]` or `[{HostMatch, Constraints, PathsList}]`, each
%% path `{PathMatch, Handler, Opts}` or `{PathMatch, Constraints, Handler,
%% Opts}`; matches are strings or binaries with `:name` bindings, `[...]`
%% and `[optional]` segments, or `'_'` (anything). See the guide's routing
%% page.
%%
%%     Dispatch = mustang_router:compile([
%%         {'_', [
%%             {"/", index_h, []},
%%             {"/users/:id", [{id, int}], user_h, #{}},
%%             {"/static/[...]", mustang_static, {priv_dir, my_app, "static"}}
%%         ]}
%%     ]),
%%     {ok, _} = mustang:start_clear(http, #{port => 8080}, #{env => #{dispatch => Dispatch}})
%%
%% Raises `error({badarg, {What, Term, Reason}})` on a malformed route (for
%% example `{constraints, Field, unknown_constraint}` for a constraint that is
%% neither `int`, `nonempty` nor a fun of arity 2), so that a bad route fails
%% at start, not on a request.
-spec compile(routes()) -> dispatch_rules().
compile(Routes) when is_list(Routes) ->
	group([compile_host(Host) || Host <- Routes]);
compile(Routes) ->
	error({badarg, {routes, Routes, not_a_list}}).

-spec compile_host(any()) -> {any, path_rules()} | {alts, [pattern()], checks(), path_rules()}.
compile_host({HostMatch, Paths}) when is_list(Paths) ->
	rule(host, HostMatch, [], compile_paths(Paths));
compile_host({HostMatch, Fields, Paths}) when is_list(Paths) ->
	rule(host, HostMatch, Fields, compile_paths(Paths));
compile_host(Host) ->
	error({badarg, {host_rule, Host, not_host_match_and_paths_list}}).

-spec compile_paths([any()]) -> path_rules().
compile_paths(Paths) ->
	group([compile_path(Path) || Path <- Paths]).

-spec compile_path(any()) -> {any | star, {module(), any()}}
	| {alts, [pattern()], checks(), {module(), any()}}.
compile_path({PathMatch, Handler, Opts}) when is_atom(Handler) ->
	rule(path, PathMatch, [], {Handler, Opts});
compile_path({PathMatch, Fields, Handler, Opts}) when is_atom(Handler) ->
	rule(path, PathMatch, Fields, {Handler, Opts});
compile_path(Path) ->
	error({badarg, {path_rule, Path, not_path_match_and_handler}}).

-spec rule(host | path, any(), any(), T) -> {any | star, T} | {alts, [pattern()], checks(), T}.
rule(_, '_', Fields, Target) ->
	_ = checks(Fields),
	{any, Target};
rule(Kind, Match, Fields, Target) ->
	Checks = checks(Fields),
	case patterns(Kind, Match) of
		star -> {star, Target};
		Patterns -> {alts, Patterns, Checks, Target}
	end.

%% Consecutive literal rules share one map; the first rule for a key wins, as it
%% would when trying rules in order.
-spec group([{any | star, T} | {alts, [pattern()], checks(), T}]) -> [rule(T)].
group(Rules) ->
	lists:reverse(lists:foldl(fun group/2, [], Rules)).

-spec group({any | star, T} | {alts, [pattern()], checks(), T}, [rule(T)]) -> [rule(T)].
group({any, Target}, Acc) ->
	[{any, Target} | Acc];
group({star, Target}, Acc) ->
	add_exact(['*'], Target, Acc);
group({alts, Patterns, Checks, Target}, Acc) ->
	case lists:all(fun is_literal/1, Patterns) of
		true -> add_exact([Segments || {_, _, Segments} <- Patterns], Target, Acc);
		false -> [{pattern, Patterns, Checks, Target} | Acc]
	end.

-spec is_literal(pattern()) -> boolean().
is_literal({_, false, Segments}) ->
	lists:all(fun is_binary/1, Segments);
is_literal(_) ->
	false.

-spec add_exact([[binary()] | '*'], T, [rule(T)]) -> [rule(T)].
add_exact(Keys, Target, [{exact, Map} | Acc]) ->
	[{exact, put_new(Keys, Target, Map)} | Acc];
add_exact(Keys, Target, Acc) ->
	[{exact, put_new(Keys, Target, #{})} | Acc].

-spec put_new([[binary()] | '*'], T, #{[binary()] | '*' => T}) -> #{[binary()] | '*' => T}.
put_new(Keys, Target, Map0) ->
	lists:foldl(fun(Key, Map) ->
		case Map of
			#{Key := _} -> Map;
			_ -> Map#{Key => Target}
		end
	end, Map0, Keys).

%% Constraints.

%% Fields without constraints are skipped and defaults are ignored: the router
%% only validates bindings that were bound (Cowboy routing guide).
-spec checks(any()) -> checks().
checks(Fields) when is_list(Fields) ->
	lists:flatmap(fun field_checks/1, Fields);
checks(Fields) ->
	error({badarg, {constraints, Fields, not_a_list}}).

-spec field_checks(any()) -> checks().
field_checks(Name) when is_atom(Name) ->
	[];
field_checks(Field = {Name, Constraints}) when is_atom(Name) ->
	field_checks(Name, Constraints, Field);
field_checks(Field = {Name, Constraints, _Default}) when is_atom(Name) ->
	field_checks(Name, Constraints, Field);
field_checks(Field) ->
	error({badarg, {constraints, Field, not_a_field}}).

-spec field_checks(atom(), any(), tuple()) -> checks().
field_checks(Name, Constraints, Field) when not is_list(Constraints) ->
	field_checks(Name, [Constraints], Field);
field_checks(_, [], _) ->
	[];
field_checks(Name, Constraints, Field) ->
	case lists:all(fun is_constraint/1, Constraints) of
		true -> [{Name, Constraints}];
		false -> error({badarg, {constraints, Field, unknown_constraint}})
	end.

-spec is_constraint(any()) -> boolean().
is_constraint(int) -> true;
is_constraint(nonempty) -> true;
is_constraint(Fun) -> is_function(Fun, 2).

%% Patterns.

-spec patterns(host | path, any()) -> star | [pattern()].
patterns(Kind, Match) ->
	Bin = try
		iolist_to_binary(Match)
	catch error:badarg ->
		error({badarg, {Kind, Match, not_iodata}})
	end,
	try
		parse(Kind, Bin)
	catch throw:Reason ->
		error({badarg, {Kind, Bin, Reason}})
	end.

-spec parse(host | path, binary()) -> star | [pattern()].
parse(path, <<"*">>) ->
	star;
parse(path, <<C, _/bits>>) when C =/= $/, C =/= $[ ->
	throw(path_must_start_with_slash);
parse(path, <<>>) ->
	throw(path_must_start_with_slash);
parse(Kind, Bin) ->
	Tree = tree(tokenize(Bin, separator(Kind))),
	case count(Tree) of
		N when N > ?MAX_PATTERNS -> throw(too_many_optional_segments);
		_ -> [pattern(Kind, Flat) || Flat <- expand(Tree)]
	end.

-spec separator(host | path) -> byte().
separator(host) -> $.;
separator(path) -> $/.

-type token() :: sep | open | close | rest | {text, binary()}.
-type tree() :: [sep | rest | {text, binary()} | {opt, tree()}].

-spec tokenize(binary(), byte()) -> [token()].
tokenize(<<>>, _) ->
	[];
tokenize(<<"[...]", Rest/bits>>, Sep) ->
	[rest | tokenize(Rest, Sep)];
tokenize(<<"[", Rest/bits>>, Sep) ->
	[open | tokenize(Rest, Sep)];
tokenize(<<"]", Rest/bits>>, Sep) ->
	[close | tokenize(Rest, Sep)];
tokenize(<<C, Rest/bits>>, Sep) when C =:= Sep ->
	[sep | tokenize(Rest, Sep)];
tokenize(Bin, Sep) ->
	case binary:match(Bin, [<<"[">>, <<"]">>, <<Sep>>]) of
		nomatch ->
			[{text, Bin}];
		{Pos, _} ->
			<<Text:Pos/binary, Rest/bits>> = Bin,
			[{text, Text} | tokenize(Rest, Sep)]
	end.

-spec tree([token()]) -> tree().
tree(Tokens) ->
	case tree(Tokens, []) of
		{Tree, []} -> Tree;
		{_, [close | _]} -> throw(unopened_bracket)
	end.

-spec tree([token()], tree()) -> {tree(), [token()]}.
tree([], Acc) ->
	{lists:reverse(Acc), []};
tree(Tokens = [close | _], Acc) ->
	{lists:reverse(Acc), Tokens};
tree([open | Tokens], Acc) ->
	case tree(Tokens, []) of
		{[], [close | _]} -> throw(empty_optional_segment);
		{Inner, [close | Rest]} -> tree(Rest, [{opt, Inner} | Acc]);
		{_, []} -> throw(unclosed_bracket)
	end;
tree([Token | Tokens], Acc) ->
	tree(Tokens, [Token | Acc]).

-spec count(tree()) -> pos_integer().
count([]) -> 1;
count([{opt, Inner} | Tail]) -> (count(Inner) + 1) * count(Tail);
count([_ | Tail]) -> count(Tail).

%% Each optional group is taken first with, then without, its contents.
-spec expand(tree()) -> [[sep | rest | {text, binary()}]].
expand([]) ->
	[[]];
expand([{opt, Inner} | Tail]) ->
	Tails = expand(Tail),
	[Head ++ Rest || Head <- expand(Inner) ++ [[]], Rest <- Tails];
expand([Token | Tail]) ->
	[[Token | Rest] || Rest <- expand(Tail)].

%% Empty segments are dropped: "/a/" and "//a" are "/a", ".a.b." is "a.b".
-spec pattern(host | path, [sep | rest | {text, binary()}]) -> pattern().
pattern(path, Flat = [sep | _]) ->
	pattern_segments(path, [segment(path, S) || S <- split(Flat, none, [])]);
pattern(path, []) ->
	pattern_segments(path, []);
pattern(path, _) ->
	throw(path_must_start_with_slash);
pattern(host, Flat) ->
	Segments = [segment(host, S) || S <- split(Flat, none, [])],
	pattern_segments(host, lists:reverse(Segments)).

-spec split([sep | rest | {text, binary()}], none | binary(), [rest | binary()])
	-> [rest | binary()].
split([], Current, Acc) ->
	lists:reverse(push(Current, Acc));
split([sep | Tail], Current, Acc) ->
	split(Tail, none, push(Current, Acc));
split([rest | Tail], Current, Acc) ->
	split(Tail, none, [rest | push(Current, Acc)]);
split([{text, Text} | Tail], none, Acc) ->
	split(Tail, Text, Acc);
split([{text, _} | _], _, _) ->
	throw(brackets_inside_segment).

-spec push(none | binary(), [rest | binary()]) -> [rest | binary()].
push(none, Acc) -> Acc;
push(Text, Acc) -> [Text | Acc].

-spec segment(host | path, rest | binary()) -> segment().
segment(_, rest) ->
	'...';
segment(_, <<"_">>) ->
	'_';
segment(_, <<":_">>) ->
	'_';
segment(_, <<":">>) ->
	throw(empty_binding_name);
segment(_, <<":", Name/bits>>) ->
	try
		{bind, binary_to_atom(Name, utf8)}
	catch error:_ ->
		throw(bad_binding_name)
	end;
segment(host, Text) ->
	lowercase(Text);
segment(path, Text) ->
	Text.

%% '...' must be the last segment: at the end of a path, first in a host.
-spec pattern_segments(host | path, [segment()]) -> pattern().
pattern_segments(Kind, Segments) ->
	case lists:splitwith(fun(S) -> S =/= '...' end, Segments) of
		{Fixed, []} -> {length(Fixed), false, Segments};
		{Fixed, ['...']} -> {length(Fixed), true, Segments};
		_ when Kind =:= path -> throw(rest_not_at_end_of_path);
		_ -> throw(rest_not_at_start_of_host)
	end.

%% Matching.

%% Looks a host and a path up in dispatch rules, as the router does for a
%% request: `{ok, Handler, Opts, Bindings, HostInfo, PathInfo}`, or
%% `{error, notfound, host}` (no host rule matches: the router answers 400),
%% `{error, notfound, path}` (404) or `{error, badrequest, path}` (a path
%% that is neither `*` nor starts with `/`, or a bad percent-escape: 400).
%% Host and Path are binaries as in the Req (the host may carry a port, which
%% is ignored). Useful in tests of the routes:
%%
%%     {ok, user_h, #{}, #{id := 42}, undefined, undefined} =
%%         mustang_router:match(Dispatch, <<"example.org">>, <<"/users/42">>)
-spec match(dispatch_rules(), binary(), binary()) -> match_result().
match(Rules, Host, Path) when is_binary(Host), is_binary(Path) ->
	match_host(Rules, Host, Path).

-spec match_host(dispatch_rules(), req_host(), binary()) -> match_result().
match_host([], _, _) ->
	{error, notfound, host};
match_host([{any, PathRules} | _], _, Path) ->
	match_path(PathRules, path_request(Path), {#{}, #{}}, undefined);
match_host([Rule | Tail], Host0, Path) ->
	Host = {split, Segments, _} = split_host(Host0),
	case match_rule(Rule, Segments, Host, {#{}, #{}}) of
		{ok, PathRules, Acc, Rest} ->
			match_path(PathRules, path_request(Path), Acc, host_info(Rest));
		nomatch ->
			match_host(Tail, Host, Path)
	end.

-spec host_info(undefined | tokens()) -> undefined | tokens().
host_info(undefined) -> undefined;
host_info(Reversed) -> lists:reverse(Reversed).

-spec path_request(binary()) -> star | badrequest | binary().
path_request(<<"*">>) -> star;
path_request(Path = <<"/", _/bits>>) -> Path;
path_request(_) -> badrequest.

%% Acc holds the raw bindings (to compare repeated names) and the bindings
%% converted by constraints (the result).
-spec match_path(path_rules(), req_path(), {bindings(), bindings()}, undefined | tokens())
	-> match_result().
match_path(_, badrequest, _, _) ->
	{error, badrequest, path};
match_path([], _, _, _) ->
	{error, notfound, path};
match_path([{any, {Handler, Opts}} | _], _, {_, Bindings}, HostInfo) ->
	{ok, Handler, Opts, Bindings, HostInfo, undefined};
match_path(Rules, Path, Acc, HostInfo) when is_binary(Path) ->
	case split_path(Path) of
		{ok, Split} -> match_path(Rules, Split, Acc, HostInfo);
		error -> {error, badrequest, path}
	end;
match_path([Rule | Tail], Path, Acc, HostInfo) ->
	case match_path_rule(Rule, Path, Acc) of
		{ok, {Handler, Opts}, {_, Bindings}, PathInfo} ->
			{ok, Handler, Opts, Bindings, HostInfo, PathInfo};
		nomatch ->
			match_path(Tail, Path, Acc, HostInfo)
	end.

-spec match_path_rule(rule(T), star | split(), {bindings(), bindings()})
	-> {ok, T, {bindings(), bindings()}, undefined | tokens()} | nomatch.
match_path_rule({exact, #{'*' := Target}}, star, Acc) ->
	{ok, Target, Acc, undefined};
match_path_rule(_, star, _) ->
	nomatch;
match_path_rule(Rule, Path = {split, Segments, _}, Acc) ->
	match_rule(Rule, Segments, Path, Acc).

-spec match_rule(rule(T), [binary()], split(), {bindings(), bindings()})
	-> {ok, T, {bindings(), bindings()}, undefined | tokens()} | nomatch.
match_rule({exact, Map}, Key, _, Acc) ->
	case Map of
		#{Key := Target} -> {ok, Target, Acc, undefined};
		_ -> nomatch
	end;
match_rule({any, Target}, _, _, Acc) ->
	{ok, Target, Acc, undefined};
match_rule({pattern, Patterns, Checks, Target}, _, {split, Segments, Len}, Acc) ->
	match_patterns(Patterns, {Checks, Target}, Segments, Len, Acc).

-spec match_patterns([pattern()], {checks(), T}, [binary()], non_neg_integer(),
		{bindings(), bindings()})
	-> {ok, T, {bindings(), bindings()}, undefined | tokens()} | nomatch.
match_patterns([], _, _, _, _) ->
	nomatch;
match_patterns([{N, Rest, Pattern} | Tail], Rule = {Checks, Target}, Segments, Len,
		Acc = {Raw0, Bindings0}) when Len =:= N; Rest, Len > N ->
	case match_segments(Pattern, Segments, Raw0) of
		{ok, Raw, Info} ->
			case check(Checks, maps:merge(Raw, Bindings0)) of
				{ok, Bindings} -> {ok, Target, {Raw, Bindings}, Info};
				error -> match_patterns(Tail, Rule, Segments, Len, Acc)
			end;
		nomatch ->
			match_patterns(Tail, Rule, Segments, Len, Acc)
	end;
match_patterns([_ | Tail], Rule, Segments, Len, Acc) ->
	match_patterns(Tail, Rule, Segments, Len, Acc).

-spec match_segments([segment()], [binary()], bindings())
	-> {ok, bindings(), undefined | tokens()} | nomatch.
match_segments([], [], Raw) ->
	{ok, Raw, undefined};
match_segments(['...'], Rest, Raw) ->
	{ok, Raw, Rest};
match_segments(['_' | Pattern], [_ | Segments], Raw) ->
	match_segments(Pattern, Segments, Raw);
match_segments([{bind, Name} | Pattern], [Value | Segments], Raw) ->
	case Raw of
		#{Name := Value} -> match_segments(Pattern, Segments, Raw);
		#{Name := _} -> nomatch;
		_ -> match_segments(Pattern, Segments, Raw#{Name => Value})
	end;
match_segments([Literal | Pattern], [Literal | Segments], Raw) ->
	match_segments(Pattern, Segments, Raw);
match_segments(_, _, _) ->
	nomatch.

-spec check(checks(), bindings()) -> {ok, bindings()} | error.
check([], Bindings) ->
	{ok, Bindings};
check([{Name, Constraints} | Tail], Bindings) ->
	case Bindings of
		#{Name := Value0} ->
			case mustang_constraints:validate(Value0, Constraints) of
				{ok, Value} -> check(Tail, Bindings#{Name := Value});
				{error, _} -> error
			end;
		_ ->
			check(Tail, Bindings)
	end.

%% Request host and path.

-spec split_host(req_host()) -> split().
split_host(Host = {split, _, _}) ->
	Host;
split_host(Host0) ->
	case trim_dot(strip_port(lowercase(Host0))) of
		<<>> ->
			{split, [], 0};
		Host ->
			Segments = binary:split(Host, <<".">>, [global]),
			{split, lists:reverse(Segments), length(Segments)}
	end.

-spec strip_port(binary()) -> binary().
strip_port(Host = <<"[", _/bits>>) ->
	case binary:match(Host, [<<"]">>]) of
		{Pos, 1} -> binary:part(Host, 0, Pos + 1);
		nomatch -> Host
	end;
strip_port(Host) ->
	case mustang_pattern:find(Host, colon) of
		{Pos, 1} -> binary:part(Host, 0, Pos);
		nomatch -> Host
	end.

-spec trim_dot(binary()) -> binary().
trim_dot(<<>>) ->
	<<>>;
trim_dot(Host) ->
	Size = byte_size(Host) - 1,
	case Host of
		<<Trimmed:Size/binary, ".">> -> Trimmed;
		_ -> Host
	end.

-spec lowercase(binary()) -> binary().
lowercase(Bin) ->
	case has_upper(Bin) of
		false -> Bin;
		true -> << <<(lower(C))>> || <<C>> <= Bin >>
	end.

-spec has_upper(binary()) -> boolean().
has_upper(<<C, _/bits>>) when C >= $A, C =< $Z -> true;
has_upper(<<_, Rest/bits>>) -> has_upper(Rest);
has_upper(<<>>) -> false.

-spec lower(byte()) -> byte().
lower(C) when C >= $A, C =< $Z -> C + 32;
lower(C) -> C.

-spec split_path(binary()) -> {ok, split()} | error.
split_path(Path) ->
	[<<>> | Segments] = binary:split(Path, <<"/">>, [global]),
	path_segments(Segments, [], 0).

-spec path_segments([binary()], [binary()], non_neg_integer()) -> {ok, split()} | error.
path_segments([], Acc, Len) ->
	{ok, {split, lists:reverse(Acc), Len}};
path_segments([<<>>], Acc, Len) ->
	{ok, {split, lists:reverse(Acc), Len}};
path_segments([Segment0 | Tail], Acc, Len) ->
	case percent_decode(Segment0) of
		{ok, <<".">>} -> path_segments(Tail, Acc, Len);
		{ok, <<"..">>} when Acc =:= [] -> path_segments(Tail, Acc, Len);
		{ok, <<"..">>} -> path_segments(Tail, tl(Acc), Len - 1);
		{ok, Segment} -> path_segments(Tail, [Segment | Acc], Len + 1);
		error -> error
	end.

-spec percent_decode(binary()) -> {ok, binary()} | error.
percent_decode(Segment) ->
	case mustang_pattern:find(Segment, percent) of
		nomatch ->
			{ok, Segment};
		_ ->
			case mustang_qs:urldecode(Segment) of
				{ok, Decoded} -> {ok, Decoded};
				{error, _} -> error
			end
	end.

%% Middleware.

%% The router middleware (first in the default `middlewares`): matches the
%% Req's host and path in the Env's `dispatch` (compiled rules, or
%% `{persistent_term, Key}` naming them), then goes on with `handler` and
%% `handler_opts` in the Env and `bindings`, `host_info` and `path_info` in
%% the Req. When nothing matches it replies 400 (no host, a bad path) or 404
%% (no path) and stops the chain.
-spec execute(Req, Env) -> {ok, Req, Env} | {stop, Req}
	when Req :: mustang_req:req(), Env :: mustang_middleware:env().
execute(Req = #{host := Host, path := Path}, Env = #{dispatch := Dispatch}) ->
	case match(dispatch_rules(Dispatch), Host, Path) of
		{ok, Handler, HandlerOpts, Bindings, HostInfo, PathInfo} ->
			{ok, Req#{host_info => HostInfo, path_info => PathInfo, bindings => Bindings},
				Env#{handler => Handler, handler_opts => HandlerOpts}};
		{error, notfound, host} ->
			{stop, mustang_req:reply(400, Req)};
		{error, badrequest, path} ->
			{stop, mustang_req:reply(400, Req)};
		{error, notfound, path} ->
			{stop, mustang_req:reply(404, Req)}
	end.

-spec dispatch_rules(dispatch_rules() | {persistent_term, any()}) -> dispatch_rules().
dispatch_rules({persistent_term, Key}) -> persistent_term:get(Key);
dispatch_rules(Rules) -> Rules.
