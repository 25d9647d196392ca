%% Tests for mustang_router and mustang_constraints: tables of routes, requests
%% and expected match/3 results following the Cowboy routing guide, compile
%% errors, the middleware on the matching path, and PropEr properties.
-module(mustang_router_tests).

-include_lib("proper/include/proper.hrl").
-include_lib("eunit/include/eunit.hrl").

-define(ANY(Paths), [{'_', Paths}]).

%% Helpers.

match(Routes, Host, Path) ->
	mustang_router:match(mustang_router:compile(Routes), Host, Path).

ok(Handler, Bindings) ->
	{ok, Handler, opts, Bindings, undefined, undefined}.

table(Cases) ->
	[{Title, ?_assertEqual(Expected, match(Routes, Host, Path))}
		|| {Title, Routes, Host, Path, Expected} <- Cases].

%% Hosts (routing guide: match syntax, hosts matched right to left).

host_test_() ->
	Eu = fun(HostMatch) -> [{HostMatch, [{'_', h, opts}]}] end,
	table([
		{"literal host", Eu("ninenines.eu"), <<"ninenines.eu">>, <<"/">>, ok(h, #{})},
		{"literal host, binary pattern", Eu(<<"ninenines.eu">>), <<"ninenines.eu">>, <<"/">>,
			ok(h, #{})},
		{"literal host, iolist pattern", Eu(["nine", <<"nines">>, ".eu"]), <<"ninenines.eu">>,
			<<"/">>, ok(h, #{})},
		{"literal host does not match a subdomain", Eu("ninenines.eu"), <<"www.ninenines.eu">>,
			<<"/">>, {error, notfound, host}},
		{"literal host does not match a parent", Eu("www.ninenines.eu"), <<"ninenines.eu">>,
			<<"/">>, {error, notfound, host}},
		{"pattern trailing dot is ignored", Eu("ninenines.eu."), <<"ninenines.eu">>, <<"/">>,
			ok(h, #{})},
		{"pattern leading dot is ignored", Eu(".ninenines.eu"), <<"ninenines.eu">>, <<"/">>,
			ok(h, #{})},
		{"request trailing dot is ignored", Eu("ninenines.eu"), <<"ninenines.eu.">>, <<"/">>,
			ok(h, #{})},
		{"request port is not matched", Eu("ninenines.eu"), <<"ninenines.eu:8080">>, <<"/">>,
			ok(h, #{})},
		{"request host is case-insensitive", Eu("ninenines.eu"), <<"NineNines.EU">>, <<"/">>,
			ok(h, #{})},
		{"pattern host is case-insensitive", Eu("NineNines.EU"), <<"ninenines.eu">>, <<"/">>,
			ok(h, #{})},
		{"host binding", Eu(":subdomain.ninenines.eu"), <<"www.ninenines.eu">>, <<"/">>,
			ok(h, #{subdomain => <<"www">>})},
		{"host binding value is lowercased", Eu(":subdomain.ninenines.eu"),
			<<"WWW.ninenines.eu">>, <<"/">>, ok(h, #{subdomain => <<"www">>})},
		{"host binding name keeps its case", Eu(":Sub.ninenines.eu"), <<"a.ninenines.eu">>,
			<<"/">>, ok(h, #{'Sub' => <<"a">>})},
		{"host binding needs a segment", Eu(":subdomain.ninenines.eu"), <<"ninenines.eu">>,
			<<"/">>, {error, notfound, host}},
		{"host :_ matches and discards", Eu("ninenines.:_"), <<"ninenines.com">>, <<"/">>,
			ok(h, #{})},
		{"host _ matches and discards", Eu("_.ninenines.eu"), <<"www.ninenines.eu">>, <<"/">>,
			ok(h, #{})},
		{"host :_ matches one segment only", Eu("ninenines.:_"), <<"ninenines.co.uk">>, <<"/">>,
			{error, notfound, host}},
		{"host optional segment present", Eu("[www.]ninenines.eu"), <<"www.ninenines.eu">>,
			<<"/">>, ok(h, #{})},
		{"host optional segment absent", Eu("[www.]ninenines.eu"), <<"ninenines.eu">>, <<"/">>,
			ok(h, #{})},
		{"host optional segment other", Eu("[www.]ninenines.eu"), <<"ftp.ninenines.eu">>,
			<<"/">>, {error, notfound, host}},
		{"host optional binding", Eu("[:sub.]ninenines.eu"), <<"ninenines.eu">>, <<"/">>,
			ok(h, #{})},
		{"host [...] gives host_info", Eu("[...].ninenines.eu"), <<"cowboy.bugs.ninenines.eu">>,
			<<"/">>, {ok, h, opts, #{}, [<<"cowboy">>, <<"bugs">>], undefined}},
		{"host [...] without a dot", Eu("[...]ninenines.eu"), <<"bugs.ninenines.eu">>, <<"/">>,
			{ok, h, opts, #{}, [<<"bugs">>], undefined}},
		{"host [...] matches nothing", Eu("[...].ninenines.eu"), <<"ninenines.eu">>, <<"/">>,
			{ok, h, opts, #{}, [], undefined}},
		{"host [...] with a binding", Eu("[...].:name.eu"), <<"a.b.ninenines.eu">>, <<"/">>,
			{ok, h, opts, #{name => <<"ninenines">>}, [<<"a">>, <<"b">>], undefined}},
		{"host [...] alone", Eu("[...]"), <<"a.b.c">>, <<"/">>,
			{ok, h, opts, #{}, [<<"a">>, <<"b">>, <<"c">>], undefined}},
		{"host [...] alone, empty host", Eu("[...]"), <<>>, <<"/">>,
			{ok, h, opts, #{}, [], undefined}},
		{"host [...] with an IPv6 literal and port", Eu("[...]"), <<"[::1]:8080">>, <<"/">>,
			{ok, h, opts, #{}, [<<"[::1]">>], undefined}},
		{"host '_' matches any host", Eu('_'), <<"anything.example">>, <<"/">>, ok(h, #{})},
		{"host '_' matches the empty host", Eu('_'), <<>>, <<"/">>, ok(h, #{})},
		{"IPv4 host", Eu("127.0.0.1"), <<"127.0.0.1:80">>, <<"/">>, ok(h, #{})},
		{"repeated host binding, same value", Eu(":a.:a.eu"), <<"x.x.eu">>, <<"/">>,
			ok(h, #{a => <<"x">>})},
		{"repeated host binding, other value", Eu(":a.:a.eu"), <<"x.y.eu">>, <<"/">>,
			{error, notfound, host}},
		{"empty request segment is not a literal", Eu("a.b"), <<"a..b">>, <<"/">>,
			{error, notfound, host}},
		{"no host rule", [], <<"a">>, <<"/">>, {error, notfound, host}},
		{"first matching host wins", [{"[...].eu", [{'_', first, opts}]},
				{"ninenines.eu", [{'_', second, opts}]}], <<"ninenines.eu">>, <<"/">>,
			{ok, first, opts, #{}, [<<"ninenines">>], undefined}},
		{"only the first matching host's paths are tried",
			[{"ninenines.eu", [{"/a", first, opts}]}, {'_', [{"/b", second, opts}]}],
			<<"ninenines.eu">>, <<"/b">>, {error, notfound, path}},
		{"later host after a non-matching one",
			[{"a.eu", [{'_', first, opts}]}, {"b.eu", [{'_', second, opts}]}],
			<<"b.eu">>, <<"/">>, ok(second, #{})}
	]).

%% Paths (routing guide: match syntax).

path_test_() ->
	P = fun(PathMatch) -> ?ANY([{PathMatch, h, opts}]) end,
	table([
		{"root", P("/"), <<"h">>, <<"/">>, ok(h, #{})},
		{"root does not match a segment", P("/"), <<"h">>, <<"/a">>, {error, notfound, path}},
		{"literal path", P("/path/to/resource"), <<"h">>, <<"/path/to/resource">>, ok(h, #{})},
		{"literal path, request trailing slash", P("/path/to/resource"), <<"h">>,
			<<"/path/to/resource/">>, ok(h, #{})},
		{"literal path, pattern trailing slash", P("/path/to/resource/"), <<"h">>,
			<<"/path/to/resource">>, ok(h, #{})},
		{"literal path, binary pattern", P(<<"/path">>), <<"h">>, <<"/path">>, ok(h, #{})},
		{"literal path is case-sensitive", P("/hats"), <<"h">>, <<"/Hats">>,
			{error, notfound, path}},
		{"literal path, shorter request", P("/a/b"), <<"h">>, <<"/a">>, {error, notfound, path}},
		{"literal path, longer request", P("/a/b"), <<"h">>, <<"/a/b/c">>,
			{error, notfound, path}},
		{"path binding", P("/hats/:name/prices"), <<"h">>, <<"/hats/wild_cowboy/prices">>,
			ok(h, #{name => <<"wild_cowboy">>})},
		{"path binding values keep their case", P("/:name"), <<"h">>, <<"/CAP">>,
			ok(h, #{name => <<"CAP">>})},
		{"path bindings", P("/:a/:b"), <<"h">>, <<"/x/y">>, ok(h, #{a => <<"x">>, b => <<"y">>})},
		{"path :_ matches and discards", P("/hats/:_/prices"), <<"h">>, <<"/hats/x/prices">>,
			ok(h, #{})},
		{"path _ matches and discards", P("/hats/_/prices"), <<"h">>, <<"/hats/x/prices">>,
			ok(h, #{})},
		{"optional segments absent", P("/hats/[page/:number]"), <<"h">>, <<"/hats">>,
			ok(h, #{})},
		{"optional segments present", P("/hats/[page/:number]"), <<"h">>, <<"/hats/page/2">>,
			ok(h, #{number => <<"2">>})},
		{"optional segments are all or nothing", P("/hats/[page/:number]"), <<"h">>,
			<<"/hats/page">>, {error, notfound, path}},
		{"nested optional, none", P("/hats/[page/[:number]]"), <<"h">>, <<"/hats">>,
			ok(h, #{})},
		{"nested optional, outer", P("/hats/[page/[:number]]"), <<"h">>, <<"/hats/page">>,
			ok(h, #{})},
		{"nested optional, both", P("/hats/[page/[:number]]"), <<"h">>, <<"/hats/page/3">>,
			ok(h, #{number => <<"3">>})},
		{"optional segment holding the slash, present", P("[/:language]/cars"), <<"h">>,
			<<"/en/cars">>, ok(h, #{language => <<"en">>})},
		{"optional segment holding the slash, absent", P("[/:language]/cars"), <<"h">>,
			<<"/cars">>, ok(h, #{})},
		{"optional segment after a segment", P("/hats[/:x]"), <<"h">>, <<"/hats/1">>,
			ok(h, #{x => <<"1">>})},
		{"optional root segment", P("[/:x]"), <<"h">>, <<"/">>, ok(h, #{})},
		{"sibling optional segments", P("/[:a]/[:b]"), <<"h">>, <<"/1">>, ok(h, #{a => <<"1">>})},
		{"[...] gives path_info", P("/hats/[...]"), <<"h">>, <<"/hats/a/b">>,
			{ok, h, opts, #{}, undefined, [<<"a">>, <<"b">>]}},
		{"[...] matches nothing", P("/hats/[...]"), <<"h">>, <<"/hats">>,
			{ok, h, opts, #{}, undefined, []}},
		{"[...] matches nothing, trailing slash", P("/hats/[...]"), <<"h">>, <<"/hats/">>,
			{ok, h, opts, #{}, undefined, []}},
		{"[...] keeps empty segments", P("/hats/[...]"), <<"h">>, <<"/hats//a">>,
			{ok, h, opts, #{}, undefined, [<<>>, <<"a">>]}},
		{"[...] alone", P("/[...]"), <<"h">>, <<"/a/b">>,
			{ok, h, opts, #{}, undefined, [<<"a">>, <<"b">>]}},
		{"[...] needs its prefix", P("/hats/[...]"), <<"h">>, <<"/caps/a">>,
			{error, notfound, path}},
		{"[...] in an optional segment, present", P("/cars/[:name/[...]]"), <<"h">>,
			<<"/cars/bmw/a">>, {ok, h, opts, #{name => <<"bmw">>}, undefined, [<<"a">>]}},
		{"[...] in an optional segment, absent", P("/cars/[:name/[...]]"), <<"h">>,
			<<"/cars">>, ok(h, #{})},
		{"repeated path binding, same value", P("/hats/:name/:name"), <<"h">>, <<"/hats/a/a">>,
			ok(h, #{name => <<"a">>})},
		{"repeated path binding, other value", P("/hats/:name/:name"), <<"h">>,
			<<"/hats/a/b">>, {error, notfound, path}},
		{"repeated optional binding, absent", P("/hats/:name/[:name]"), <<"h">>,
			<<"/hats/a">>, ok(h, #{name => <<"a">>})},
		{"repeated optional binding, same value", P("/hats/:name/[:name]"), <<"h">>,
			<<"/hats/a/a">>, ok(h, #{name => <<"a">>})},
		{"repeated optional binding, other value", P("/hats/:name/[:name]"), <<"h">>,
			<<"/hats/a/b">>, {error, notfound, path}},
		{"'_' matches any path", P('_'), <<"h">>, <<"/any/thing">>, ok(h, #{})},
		{"'_' matches the asterisk", P('_'), <<"h">>, <<"*">>, ok(h, #{})},
		{"'_' does not look at escapes", P('_'), <<"h">>, <<"/%zz">>, ok(h, #{})},
		{"asterisk", P("*"), <<"h">>, <<"*">>, ok(h, #{})},
		{"asterisk does not match root", P("*"), <<"h">>, <<"/">>, {error, notfound, path}},
		{"asterisk request, segment routes", P("/[...]"), <<"h">>, <<"*">>,
			{error, notfound, path}},
		{"no path rule", ?ANY([]), <<"h">>, <<"/">>, {error, notfound, path}},
		{"first matching path wins", ?ANY([{"/:x", first, opts}, {"/a", second, opts}]),
			<<"h">>, <<"/a">>, ok(first, #{x => <<"a">>})},
		{"exact route after a pattern", ?ANY([{"/:x/b", first, opts}, {"/a", second, opts}]),
			<<"h">>, <<"/a">>, ok(second, #{})},
		{"first of two identical literal routes wins",
			?ANY([{"/a", first, opts}, {"/a/", second, opts}]), <<"h">>, <<"/a">>,
			ok(first, #{})},
		{"binding shared by host and path, same value",
			[{":user.example.org", [{"/users/:user/[...]", h, opts}]}],
			<<"bob.example.org">>, <<"/users/bob/x">>,
			{ok, h, opts, #{user => <<"bob">>}, undefined, [<<"x">>]}},
		{"binding shared by host and path, other value",
			[{":user.example.org", [{"/users/:user", h, opts}]}],
			<<"bob.example.org">>, <<"/users/alice">>, {error, notfound, path}},
		{"host_info and path_info together", [{"[...].eu", [{"/a/[...]", h, opts}]}],
			<<"x.eu">>, <<"/a/b">>, {ok, h, opts, #{}, [<<"x">>], [<<"b">>]}}
	]).

%% Request paths: percent-decoding, dot segments, malformed paths.

request_path_test_() ->
	P = fun(PathMatch) -> ?ANY([{PathMatch, h, opts}]) end,
	table([
		{"empty path", P("/"), <<"h">>, <<>>, {error, badrequest, path}},
		{"empty path, '_' route", P('_'), <<"h">>, <<>>, {error, badrequest, path}},
		{"relative path", P("/[...]"), <<"h">>, <<"a/b">>, {error, badrequest, path}},
		{"absolute URI", P("/[...]"), <<"h">>, <<"http://h/a">>, {error, badrequest, path}},
		{"decoded binding", P("/:v"), <<"h">>, <<"/caf%C3%A9">>, ok(h, #{v => <<"café"/utf8>>})},
		{"lowercase hex", P("/:v"), <<"h">>, <<"/caf%c3%a9">>, ok(h, #{v => <<"café"/utf8>>})},
		{"decoded literal", P("/a b"), <<"h">>, <<"/a%20b">>, ok(h, #{})},
		{"encoded letters", P("/abc"), <<"h">>, <<"/%61%62%63">>, ok(h, #{})},
		{"plus is not a space", P("/:v"), <<"h">>, <<"/a+b">>, ok(h, #{v => <<"a+b">>})},
		{"%2F stays inside its segment", P("/:v"), <<"h">>, <<"/a%2Fb">>,
			ok(h, #{v => <<"a/b">>})},
		{"%25 is a percent sign", P("/:v"), <<"h">>, <<"/100%25">>, ok(h, #{v => <<"100%">>})},
		{"%00 is a byte", P("/:v"), <<"h">>, <<"/%00">>, ok(h, #{v => <<0>>})},
		{"decoded path_info", P("/[...]"), <<"h">>, <<"/a%20b/%2F">>,
			{ok, h, opts, #{}, undefined, [<<"a b">>, <<"/">>]}},
		{"bad escape, letters", P("/:v"), <<"h">>, <<"/%zz">>, {error, badrequest, path}},
		{"bad escape, one digit", P("/:v"), <<"h">>, <<"/%2">>, {error, badrequest, path}},
		{"bad escape, percent alone", P("/:v"), <<"h">>, <<"/a%">>, {error, badrequest, path}},
		{"bad escape, half hex", P("/:v"), <<"h">>, <<"/%G1">>, {error, badrequest, path}},
		{"bad escape in a later segment", P("/a/b"), <<"h">>, <<"/a/%x">>,
			{error, badrequest, path}},
		{"bad escape, exact routes", P("/a"), <<"h">>, <<"/%">>, {error, badrequest, path}},
		{"bad escape after a '_' route is never looked at",
			?ANY([{'_', h, opts}, {"/a", other, opts}]), <<"h">>, <<"/%">>, ok(h, #{})},
		{"dot segment removed", P("/a/b"), <<"h">>, <<"/a/./b">>, ok(h, #{})},
		{"dot-dot segment removed", P("/b"), <<"h">>, <<"/a/../b">>, ok(h, #{})},
		{"dot-dot above the root", P("/b"), <<"h">>, <<"/../../b">>, ok(h, #{})},
		{"encoded dot-dot removed", P("/b"), <<"h">>, <<"/a/%2E%2e/b">>, ok(h, #{})},
		{"dot-dot does not escape [...]", P("/static/[...]"), <<"h">>,
			<<"/static/../etc/passwd">>, {error, notfound, path}},
		{"trailing dot-dot", P("/"), <<"h">>, <<"/a/..">>, ok(h, #{})},
		{"dots inside a segment are kept", P("/:v"), <<"h">>, <<"/a..b">>,
			ok(h, #{v => <<"a..b">>})},
		{"three dots are a segment", P("/:v"), <<"h">>, <<"/...">>, ok(h, #{v => <<"...">>})},
		{"empty segment binds an empty value", P("/users/:id"), <<"h">>, <<"/users//">>,
			ok(h, #{id => <<>>})},
		{"empty segment is not a literal", P("/a/b"), <<"h">>, <<"/a//b">>,
			{error, notfound, path}},
		{"double slash root", P("/"), <<"h">>, <<"//">>, {error, notfound, path}}
	]).

%% Constraints in routes (routing guide: constraints).

constraints_test_() ->
	Positive = fun
		(forward, V) when is_integer(V), V > 0 -> {ok, V};
		(forward, _) -> {error, not_positive};
		(reverse, V) -> {ok, V};
		(format_error, {not_positive, V}) -> io_lib:format("~p is not positive", [V])
	end,
	Upper = fun
		(forward, V) -> {ok, string:uppercase(V)};
		(reverse, V) -> {ok, string:lowercase(V)};
		(format_error, _) -> <<>>
	end,
	table([
		{"int converts", ?ANY([{"/items/:id", [{id, int}], h, opts}]), <<"h">>,
			<<"/items/42">>, ok(h, #{id => 42})},
		{"int accepts a sign", ?ANY([{"/items/:id", [{id, int}], h, opts}]), <<"h">>,
			<<"/items/-7">>, ok(h, #{id => -7})},
		{"int rejects letters", ?ANY([{"/items/:id", [{id, int}], h, opts}]), <<"h">>,
			<<"/items/4a">>, {error, notfound, path}},
		{"int rejects empty", ?ANY([{"/items/:id", [{id, int}], h, opts}]), <<"h">>,
			<<"/items//">>, {error, notfound, path}},
		{"int rejects spaces", ?ANY([{"/items/:id", [{id, int}], h, opts}]), <<"h">>,
			<<"/items/%201">>, {error, notfound, path}},
		{"failed constraint falls through to the next route",
			?ANY([{"/items/:id", [{id, int}], by_id, opts}, {"/items/:slug", by_slug, opts}]),
			<<"h">>, <<"/items/hat">>, ok(by_slug, #{slug => <<"hat">>})},
		{"failed constraint falls through to an exact route",
			?ANY([{"/items/:id", [{id, int}], by_id, opts}, {"/items/new", new, opts}]),
			<<"h">>, <<"/items/new">>, ok(new, #{})},
		{"failed constraint falls through to another pattern of the route",
			?ANY([{"/items/[:id]/[...]", [{id, int}], h, opts}]), <<"h">>, <<"/items/a/b">>,
			{ok, h, opts, #{}, undefined, [<<"a">>, <<"b">>]}},
		{"nonempty accepts", ?ANY([{"/users/:id", [{id, nonempty}], h, opts}]), <<"h">>,
			<<"/users/a">>, ok(h, #{id => <<"a">>})},
		{"nonempty rejects", ?ANY([{"/users/:id", [{id, nonempty}], h, opts}]), <<"h">>,
			<<"/users//">>, {error, notfound, path}},
		{"fun converts", ?ANY([{"/:v", [{v, Upper}], h, opts}]), <<"h">>, <<"/abc">>,
			ok(h, #{v => <<"ABC">>})},
		{"constraint list in order", ?ANY([{"/:v", [{v, [int, Positive]}], h, opts}]),
			<<"h">>, <<"/5">>, ok(h, #{v => 5})},
		{"constraint list rejects", ?ANY([{"/:v", [{v, [int, Positive]}], h, opts}]),
			<<"h">>, <<"/0">>, {error, notfound, path}},
		{"constraints for every binding", ?ANY([{"/:a/:b", [{a, int}, {b, int}], h, opts}]),
			<<"h">>, <<"/1/x">>, {error, notfound, path}},
		{"constraint on an absent optional binding is skipped",
			?ANY([{"/hats/[page/:page]", [{page, int}], h, opts}]), <<"h">>, <<"/hats">>,
			ok(h, #{})},
		{"constraint on a present optional binding",
			?ANY([{"/hats/[page/:page]", [{page, int}], h, opts}]), <<"h">>,
			<<"/hats/page/x">>, {error, notfound, path}},
		{"defaults are ignored by the router",
			?ANY([{"/hats/[page/:page]", [{page, int, 1}], h, opts}]), <<"h">>, <<"/hats">>,
			ok(h, #{})},
		{"defaults do not stop constraints",
			?ANY([{"/hats/[page/:page]", [{page, int, 1}], h, opts}]), <<"h">>,
			<<"/hats/page/9">>, ok(h, #{page => 9})},
		{"fields without constraints are skipped",
			?ANY([{"/:a", [a, {b, int}, {a, []}], h, opts}]), <<"h">>, <<"/x">>,
			ok(h, #{a => <<"x">>})},
		{"constraint for an unknown binding is skipped",
			?ANY([{"/a", [{nope, int}], h, opts}]), <<"h">>, <<"/a">>, ok(h, #{})},
		{"host constraint converts", [{":id.example.org", [{id, int}], [{'_', h, opts}]}],
			<<"42.example.org">>, <<"/">>, ok(h, #{id => 42})},
		{"failed host constraint falls through to the next host",
			[{":id.example.org", [{id, int}], [{'_', by_id, opts}]},
				{":name.example.org", [{'_', by_name, opts}]}],
			<<"www.example.org">>, <<"/">>, ok(by_name, #{name => <<"www">>})},
		{"failed host constraint, no other host",
			[{":id.example.org", [{id, int}], [{'_', h, opts}]}],
			<<"www.example.org">>, <<"/">>, {error, notfound, host}},
		{"host and path constraints together",
			[{":id.example.org", [{id, int}], [{"/:n", [{n, int}], h, opts}]}],
			<<"1.example.org">>, <<"/2">>, ok(h, #{id => 1, n => 2})},
		{"shared binding compares raw values, then host constraint applies",
			[{":id.example.org", [{id, int}], [{"/:id", h, opts}]}],
			<<"7.example.org">>, <<"/7">>, ok(h, #{id => 7})},
		{"path constraint chains on a converted host binding",
			[{":id.example.org", [{id, int}], [{"/:id", [{id, Positive}], h, opts}]}],
			<<"0.example.org">>, <<"/0">>, {error, notfound, path}},
		{"host bindings reach an exact path",
			[{":id.example.org", [{id, int}], [{"/a", h, opts}]}],
			<<"3.example.org">>, <<"/a">>, ok(h, #{id => 3})}
	]).

%% mustang_constraints on its own.

constraints_module_test_() ->
	Even = fun
		(forward, V) when V rem 2 =:= 0 -> {ok, V};
		(forward, _) -> {error, odd};
		(reverse, V) when V rem 2 =:= 0 -> {ok, V};
		(reverse, _) -> {error, odd};
		(format_error, {odd, V}) -> io_lib:format("~p is odd", [V])
	end,
	Bad = fun(_, _) -> maybe end,
	Tests = [
		{"int", {ok, 12}, mustang_constraints:validate(<<"12">>, int)},
		{"int in a list", {ok, 12}, mustang_constraints:validate(<<"12">>, [int])},
		{"int plus sign", {ok, 3}, mustang_constraints:validate(<<"+3">>, int)},
		{"int big", {ok, 123456789012345678901234567890},
			mustang_constraints:validate(<<"123456789012345678901234567890">>, int)},
		{"int letters", {error, {int, not_an_integer, <<"1x">>}},
			mustang_constraints:validate(<<"1x">>, int)},
		{"int empty", {error, {int, not_an_integer, <<>>}},
			mustang_constraints:validate(<<>>, int)},
		{"int sign only", {error, {int, not_an_integer, <<"-">>}},
			mustang_constraints:validate(<<"-">>, int)},
		{"int not a binary", {error, {int, not_an_integer, 1.5}},
			mustang_constraints:validate(1.5, int)},
		{"nonempty", {ok, <<"a">>}, mustang_constraints:validate(<<"a">>, nonempty)},
		{"nonempty empty", {error, {nonempty, empty, <<>>}},
			mustang_constraints:validate(<<>>, nonempty)},
		{"no constraints", {ok, <<"v">>}, mustang_constraints:validate(<<"v">>, [])},
		{"list in order", {ok, 4}, mustang_constraints:validate(<<"4">>, [int, Even])},
		{"list error names the failing constraint and its input", {error, {Even, odd, 3}},
			mustang_constraints:validate(<<"3">>, [int, Even])},
		{"list stops at the first error", {error, {int, not_an_integer, <<"x">>}},
			mustang_constraints:validate(<<"x">>, [int, Even])},
		{"reverse int", {ok, <<"-5">>}, mustang_constraints:reverse(-5, int)},
		{"reverse int error", {error, {int, not_an_integer, <<"5">>}},
			mustang_constraints:reverse(<<"5">>, int)},
		{"reverse nonempty", {ok, <<"a">>}, mustang_constraints:reverse(<<"a">>, nonempty)},
		{"reverse runs the list backwards", {ok, <<"4">>},
			mustang_constraints:reverse(4, [int, Even])},
		{"reverse error", {error, {Even, odd, 3}}, mustang_constraints:reverse(3, [int, Even])},
		{"format int", <<"The value <<\"1x\">> is not an integer.">>,
			iolist_to_binary(mustang_constraints:format_error({int, not_an_integer, <<"1x">>}))},
		{"format nonempty", <<"The value <<>> is empty.">>,
			iolist_to_binary(mustang_constraints:format_error({nonempty, empty, <<>>}))},
		{"format fun", <<"3 is odd">>,
			iolist_to_binary(mustang_constraints:format_error({Even, odd, 3}))},
		{"format the error validate returned", <<"3 is odd">>, begin
			{error, Reason} = mustang_constraints:validate(<<"3">>, [int, Even]),
			iolist_to_binary(mustang_constraints:format_error(Reason))
		end}
	],
	[{Title, ?_assertEqual(Expected, Result)} || {Title, Expected, Result} <- Tests] ++ [
		{"fun with a bad return value",
			?_assertError({badconstraint, Bad, forward, maybe},
				mustang_constraints:validate(<<"x">>, Bad))},
		{"unknown constraint",
			?_assertError({badconstraint, float}, mustang_constraints:validate(<<"1">>, float))}
	].

%% Compile errors: error({badarg, {What, Term, Reason}}).

compile_error_test_() ->
	Path = fun(PathMatch) -> ?ANY([{PathMatch, h, opts}]) end,
	Host = fun(HostMatch) -> [{HostMatch, [{'_', h, opts}]}] end,
	Tests = [
		{"[...] not at the end of a path", Path("/a/[...]/b"),
			{path, <<"/a/[...]/b">>, rest_not_at_end_of_path}},
		{"[...] followed by an optional segment", Path("/[...]/[:x]"),
			{path, <<"/[...]/[:x]">>, rest_not_at_end_of_path}},
		{"two [...] in a path", Path("/[...]/[...]"),
			{path, <<"/[...]/[...]">>, rest_not_at_end_of_path}},
		{"[...] not at the start of a host", Host("a.[...].eu"),
			{host, <<"a.[...].eu">>, rest_not_at_start_of_host}},
		{"unclosed bracket", Path("/a/[b"), {path, <<"/a/[b">>, unclosed_bracket}},
		{"unopened bracket", Path("/a/b]"), {path, <<"/a/b]">>, unopened_bracket}},
		{"empty optional segment", Path("/a/[]"), {path, <<"/a/[]">>, empty_optional_segment}},
		{"brackets inside a segment", Path("/a[b]"), {path, <<"/a[b]">>, brackets_inside_segment}},
		{"binding without a name", Path("/a/:"), {path, <<"/a/:">>, empty_binding_name}},
		{"binding without a name in a host", Host(":.eu"), {host, <<":.eu">>, empty_binding_name}},
		{"path without a leading slash", Path("a/b"),
			{path, <<"a/b">>, path_must_start_with_slash}},
		{"empty path", Path(""), {path, <<>>, path_must_start_with_slash}},
		{"optional segment without a slash", Path("[:x]/cars"),
			{path, <<"[:x]/cars">>, path_must_start_with_slash}},
		{"too many optional segments", Path(lists:append(lists:duplicate(11, "/[a]"))),
			{path, iolist_to_binary(lists:duplicate(11, "/[a]")), too_many_optional_segments}},
		{"path is not iodata", Path(42), {path, 42, not_iodata}},
		{"path is an atom other than '_'", Path(foo), {path, foo, not_iodata}},
		{"host is not iodata", Host(42), {host, 42, not_iodata}},
		{"routes are not a list", {'_', []}, {routes, {'_', []}, not_a_list}},
		{"bad host rule", [{'_'}], {host_rule, {'_'}, not_host_match_and_paths_list}},
		{"paths are not a list", [{'_', x}], {host_rule, {'_', x}, not_host_match_and_paths_list}},
		{"bad path rule", ?ANY([{"/", "h", opts}]),
			{path_rule, {"/", "h", opts}, not_path_match_and_handler}},
		{"path rule without options", ?ANY([{"/", h}]),
			{path_rule, {"/", h}, not_path_match_and_handler}},
		{"unknown constraint", ?ANY([{"/:a", [{a, float}], h, opts}]),
			{constraints, {a, float}, unknown_constraint}},
		{"fun of the wrong arity", ?ANY([{"/:a", [{a, fun erlang:abs/1}], h, opts}]),
			{constraints, {a, fun erlang:abs/1}, unknown_constraint}},
		{"field is not a field", ?ANY([{"/:a", ["a"], h, opts}]),
			{constraints, "a", not_a_field}},
		{"fields are not a list", ?ANY([{"/:a", #{a => int}, h, opts}]),
			{constraints, #{a => int}, not_a_list}},
		{"host constraints are checked", [{":a", [{a, float}], []}],
			{constraints, {a, float}, unknown_constraint}},
		{"constraints of a '_' route are checked", ?ANY([{'_', [{a, float}], h, opts}]),
			{constraints, {a, float}, unknown_constraint}}
	],
	[{Title, ?_assertError({badarg, Reason}, mustang_router:compile(Routes))}
		|| {Title, Routes, Reason} <- Tests].

%% Route forms that compile, each checked with one request.

compile_ok_test_() ->
	table([
		{"empty routes", [], <<"h">>, <<"/">>, {error, notfound, host}},
		{"host with no paths", [{'_', []}], <<"h">>, <<"/">>, {error, notfound, path}},
		{"host constraints and path constraints",
			[{"a.eu", [{"/", h, opts}]}, {":id.eu", [{id, int}], [{"/:x", [{x, int}], h, opts}]}],
			<<"1.eu">>, <<"/2">>, ok(h, #{id => 1, x => 2})},
		{"literal ... segment", ?ANY([{"/a/...", h, opts}]), <<"h">>, <<"/a/...">>, ok(h, #{})},
		{"ten sibling optional segments",
			?ANY([{lists:append(lists:duplicate(10, "/[a]")), h, opts}]), <<"h">>,
			<<"/a/a/a">>, ok(h, #{})},
		{"percent sign in a pattern is literal", ?ANY([{"/100%", h, opts}]), <<"h">>,
			<<"/100%25">>, ok(h, #{})}
	]).

%% Middleware, on the matching path only (the others call mustang_req:reply/2).

execute_test_() ->
	Dispatch = mustang_router:compile([{":sub.example.org", [{"/a/[...]", h, hopts}]}]),
	Req = #{host => <<"www.example.org">>, path => <<"/a/b">>, method => <<"GET">>},
	Expected = {ok,
		Req#{bindings => #{sub => <<"www">>}, host_info => undefined, path_info => [<<"b">>]},
		#{dispatch => Dispatch, other => 1, handler => h, handler_opts => hopts}},
	[
		{"compiled rules in Env",
			?_assertEqual(Expected,
				mustang_router:execute(Req, #{dispatch => Dispatch, other => 1}))},
		{"rules in persistent_term", fun() ->
			Key = {?MODULE, execute_test},
			persistent_term:put(Key, Dispatch),
			try
				Env = #{dispatch => {persistent_term, Key}, other => 1},
				{ok, Req1, Env1} = mustang_router:execute(Req, Env),
				?assertEqual(element(2, Expected), Req1),
				?assertEqual(h, maps:get(handler, Env1)),
				?assertEqual(hopts, maps:get(handler_opts, Env1)),
				?assertEqual({persistent_term, Key}, maps:get(dispatch, Env1))
			after
				persistent_term:erase(Key)
			end
		end}
	].

%% Properties.

proper_test_() ->
	Props = [
		{"literal path routes", prop_literal_paths()},
		{"literal host routes", prop_literal_hosts()},
		{"percent-decoded binding", prop_decoded_binding()},
		{"match/3 never crashes", prop_no_crash()}
	],
	[{Title, {timeout, 120,
			?_assert(proper:quickcheck(Prop, [{numtests, 300}, {to_file, user}]))}}
		|| {Title, Prop} <- Props].

%% For literal routes, match/3 finds the first route whose segments equal the
%% decoded request segments. Separated routes put a pattern route between two
%% literal ones, so the literal routes land in several maps.
prop_literal_paths() ->
	?FORALL({Routes0, Separated, Pick, Extra, Encodings, Trailing},
			{list(path_segments()), boolean(), nat(), path_segments(), list(boolean()), boolean()},
		begin
			Routes = dedup(Routes0),
			Segments = pick(Routes, Pick, Extra),
			Compiled = mustang_router:compile(?ANY(path_rules(Routes, Separated))),
			Path = encode_path(Segments, Encodings, Trailing),
			Expected = case index_of(Segments, Routes) of
				0 -> {error, notfound, path};
				N -> {ok, h, N, #{}, undefined, undefined}
			end,
			?WHENFAIL(io:format(user, "path ~p~n", [Path]),
				Expected =:= mustang_router:match(Compiled, <<"h">>, Path))
		end).

path_segments() ->
	list(?SUCHTHAT(S, non_empty(list(oneof([$a, $b, $., $%, $\s, $c]))),
		S =/= "." andalso S =/= "..")).

path_rules(Routes, Separated) ->
	lists:append([path_rule(Segments, N, Separated)
		|| {N, Segments} <- lists:zip(lists:seq(1, length(Routes)), Routes)]).

path_rule(Segments, N, false) ->
	[{["/" ++ S || S <- Segments] ++ ["/"], h, N}];
path_rule(Segments, N, true) ->
	[{"/:x/zzz", never, 0}, {["/" ++ S || S <- Segments] ++ ["/"], h, N}].

encode_path(Segments, Encodings, Trailing) ->
	Encoded = [encode_segment(S, Encodings) || S <- Segments],
	Path = iolist_to_binary(["/", lists:join("/", Encoded)]),
	case Trailing andalso Segments =/= [] of
		true -> <<Path/binary, "/">>;
		false -> Path
	end.

encode_segment(Segment, Encodings) ->
	[encode_char(C, E) || {C, E} <- lists:zip(Segment, cycle(Encodings, length(Segment)))].

encode_char($%, _) -> "%25";
encode_char($\s, _) -> "%20";
encode_char($c, true) -> "%63";
encode_char($., true) -> "%2e";
encode_char(C, _) -> C.

%% Same for hosts, with the request host in mixed case.
prop_literal_hosts() ->
	?FORALL({Hosts0, Pick, Extra, Upper},
			{list(host_labels()), nat(), host_labels(), list(boolean())},
		begin
			Hosts = dedup(Hosts0),
			Labels = pick(Hosts, Pick, Extra),
			Compiled = mustang_router:compile(
				[{lists:join(".", H), [{'_', h, N}]}
					|| {N, H} <- lists:zip(lists:seq(1, length(Hosts)), Hosts)]),
			Host = iolist_to_binary(lists:join(".", [mixed_case(L, Upper) || L <- Labels])),
			Expected = case index_of(Labels, Hosts) of
				0 -> {error, notfound, host};
				N -> {ok, h, N, #{}, undefined, undefined}
			end,
			?WHENFAIL(io:format(user, "host ~p~n", [Host]),
				Expected =:= mustang_router:match(Compiled, Host, <<"/">>))
		end).

host_labels() ->
	non_empty(list(non_empty(list(oneof([$a, $b, $z, $0, $-]))))).

mixed_case(Label, Upper) ->
	[case U of true -> string:to_upper(C); false -> C end
		|| {C, U} <- lists:zip(Label, cycle(Upper, length(Label)))].

%% Any bytes, fully percent-encoded, come back as the binding value.
prop_decoded_binding() ->
	Compiled = mustang_router:compile(?ANY([{"/x/:v", h, opts}])),
	?FORALL(Value, ?SUCHTHAT(V, non_empty(binary()), V =/= <<".">> andalso V =/= <<"..">>),
		begin
			Encoded = << <<"%", (hex(B div 16)), (hex(B rem 16))>> || <<B>> <= Value >>,
			{ok, h, opts, #{v => Value}, undefined, undefined}
				=:= mustang_router:match(Compiled, <<"h">>, <<"/x/", Encoded/binary>>)
		end).

hex(N) when N < 10 -> $0 + N;
hex(N) -> $A + N - 10.

%% Random hosts and paths get one of the documented results.
prop_no_crash() ->
	Compiled = mustang_router:compile([
		{"[...].:a.eu", [{a, nonempty}], [{"/:a/[:b]/[...]", [{b, int}], h, opts}]},
		{":x.example.org", [{"/a/b", h, opts}, {"*", h, opts}]},
		{"[www.]example.com", [{"/[:p/[:q]]", h, opts}, {'_', h, opts}]},
		{'_', [{"/:id", [{id, int}], h, opts}, {"/s/[...]", h, opts}]}
	]),
	?FORALL({Host, Path}, {request_host(), request_path()},
		valid_result(mustang_router:match(Compiled, Host, Path))).

request_host() ->
	oneof([binary(), from_chars("abcABC.:[]0-", 12),
		?LET(H, from_chars("abc.", 8), <<H/binary, ".eu">>),
		elements([<<"www.example.com">>, <<"Example.COM.">>, <<"x.example.org:80">>])]).

request_path() ->
	oneof([binary(), ?LET(P, binary(), <<"/", P/binary>>), from_chars("/%.ab1*:[]", 16),
		?LET(P, from_chars("/%.ab1", 16), <<"/", P/binary>>),
		?LET(P, from_chars("/ab1s", 10), <<"/", P/binary>>)]).

from_chars(Chars, Max) ->
	?LET(N, choose(0, Max), ?LET(L, vector(N, elements(Chars)), list_to_binary(L))).

valid_result({ok, h, opts, Bindings, HostInfo, PathInfo}) ->
	is_map(Bindings) andalso valid_info(HostInfo) andalso valid_info(PathInfo);
valid_result({error, notfound, host}) -> true;
valid_result({error, notfound, path}) -> true;
valid_result({error, badrequest, path}) -> true;
valid_result(_) -> false.

valid_info(undefined) -> true;
valid_info(Info) -> is_list(Info) andalso lists:all(fun is_binary/1, Info).

%% Property helpers.

dedup(List) ->
	lists:reverse(lists:foldl(fun(E, Acc) ->
		case lists:member(E, Acc) of
			true -> Acc;
			false -> [E | Acc]
		end
	end, [], List)).

%% Either one of the routes (to hit) or Extra (usually a miss).
pick([], _, Extra) -> Extra;
pick(_, Pick, Extra) when Pick rem 4 =:= 0 -> Extra;
pick(Routes, Pick, _) -> lists:nth(1 + Pick rem length(Routes), Routes).

index_of(E, List) -> index_of(E, List, 1).

index_of(_, [], _) -> 0;
index_of(E, [E | _], N) -> N;
index_of(E, [_ | Tail], N) -> index_of(E, Tail, N + 1).

cycle([], N) -> lists:duplicate(N, false);
cycle(List, N) when length(List) >= N -> lists:sublist(List, N);
cycle(List, N) -> cycle(List ++ List, N).
