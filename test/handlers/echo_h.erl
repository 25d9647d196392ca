%% Replies 200 with one request field printed as an Erlang term (~0p).
%% The field is the route binding `key' when there is one, else the handler
%% options (an atom). Keys needing a parameter take it from the query string.
-module(echo_h).
-export([init/2]).

init(Req, Opts) ->
	What = case mustang_req:binding(key, Req) of
		undefined -> Opts;
		Key -> binary_to_atom(Key)
	end,
	{Value, Req2} = value(What, Req),
	Body = iolist_to_binary(io_lib:format("~0p", [Value])),
	{ok, mustang_req:reply(200, #{<<"content-type">> => <<"text/plain">>}, Body, Req2), Opts}.

value(method, Req) -> {mustang_req:method(Req), Req};
value(version, Req) -> {mustang_req:version(Req), Req};
value(scheme, Req) -> {mustang_req:scheme(Req), Req};
value(host, Req) -> {mustang_req:host(Req), Req};
value(port, Req) -> {mustang_req:port(Req), Req};
value(path, Req) -> {mustang_req:path(Req), Req};
value(qs, Req) -> {mustang_req:qs(Req), Req};
value(target, Req) ->
	{{mustang_req:scheme(Req), mustang_req:host(Req), mustang_req:port(Req),
		mustang_req:path(Req), mustang_req:qs(Req)}, Req};
value(uri, Req) -> {iolist_to_binary(mustang_req:uri(Req)), Req};
value(asterisk, Req) ->
	{{mustang_req:scheme(Req), mustang_req:path(Req), iolist_to_binary(mustang_req:uri(Req)),
		iolist_to_binary(mustang_req:uri(Req, #{path => <<"/x">>}))}, Req};
value(uri_variants, Req) ->
	{[try iolist_to_binary(mustang_req:uri(Req, Opts)) catch Class:Reason -> {Class, Reason} end
		|| Opts <- [
		#{},
		#{host => undefined},
		#{scheme => undefined},
		#{qs => undefined},
		#{path => undefined, qs => undefined},
		#{port => 80},
		#{scheme => <<"https">>, port => 443},
		#{fragment => <<"frag">>},
		#{host => <<"example.org">>, path => <<"/other">>, qs => <<"x=y">>}
	]], Req};
value(header, Req) ->
	{{mustang_req:header(<<"x-test">>, Req), mustang_req:header(<<"x-missing">>, Req),
		mustang_req:header(<<"x-missing">>, Req, <<"default">>)}, Req};
value(headers, Req) -> {mustang_req:headers(Req), Req};
value(parse_qs, Req) -> {mustang_req:parse_qs(Req), Req};
value(match_qs, Req) ->
	{mustang_req:match_qs([{n, int}, {opt, [], <<"default">>}], Req), Req};
value(parse_header, Req) ->
	%% The header to parse is named by the query string: ?content-type
	Name = mustang_req:qs(Req),
	{{mustang_req:parse_header(Name, Req),
		mustang_req:parse_header(Name, Req, no_such_header_default)}, Req};
value(parse_cookies, Req) -> {mustang_req:parse_cookies(Req), Req};
value(match_cookies, Req) ->
	{mustang_req:match_cookies([{id, int}, {name, nonempty, <<"anon">>}], Req), Req};
value(binding, Req) ->
	{{mustang_req:binding(a, Req), mustang_req:binding(b, Req),
		mustang_req:binding(missing, Req), mustang_req:binding(missing, Req, default)}, Req};
value(bindings, Req) -> {mustang_req:bindings(Req), Req};
value(host_info, Req) -> {mustang_req:host_info(Req), Req};
value(path_info, Req) -> {mustang_req:path_info(Req), Req};
value(peer, Req) -> {mustang_req:peer(Req), Req};
value(sock, Req) -> {mustang_req:sock(Req), Req};
value(cert, Req) -> {mustang_req:cert(Req), Req};
value(has_body, Req) -> {{mustang_req:has_body(Req), mustang_req:body_length(Req)}, Req};
value(read_body, Req0) ->
	{Body, Req} = read_all(Req0, []),
	{Body, Req};
value(read_urlencoded_body, Req0) ->
	{ok, KVs, Req} = mustang_req:read_urlencoded_body(Req0),
	{KVs, Req}.

read_all(Req0, Acc) ->
	case mustang_req:read_body(Req0) of
		{ok, Data, Req} -> {iolist_to_binary(lists:reverse(Acc, [Data])), Req};
		{more, Data, Req} -> read_all(Req, [Data | Acc])
	end.
