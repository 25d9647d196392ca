%% The request API functions of issue 10 (filter_cookies/2, parse_qs/2,
%% match_qs/3, parse_cookies/2, match_cookies/3, set_resp_headers/2 with a
%% list, read_body with length auto, body_length after a body of unknown
%% length, parse_header of the CORS fields): the route binding `what' picks
%% one; the answer is what it returned, printed with ~0p.
-module(req_api_h).
-export([init/2]).

init(Req, Opts) ->
	{Value, Req2} = value(binary_to_atom(mustang_req:binding(what, Req)), Req),
	Body = iolist_to_binary(io_lib:format("~0p", [Value])),
	{ok, mustang_req:reply(200, #{<<"content-type">> => <<"text/plain">>}, Body, Req2), Opts}.

value(filter_cookies, Req) ->
	Req2 = mustang_req:filter_cookies([a, <<"c">>], Req),
	{{mustang_req:header(<<"cookie">>, Req2), mustang_req:parse_cookies(Req2)}, Req2};
value(parse_cookies, Req) ->
	{mustang_req:parse_cookies(Req), Req};
value(parse_cookies_max, Req) ->
	{mustang_req:parse_cookies(Req, #{max_keys => 2}), Req};
value(match_cookies, Req) ->
	{mustang_req:match_cookies([a, {b, [], none}], Req, #{max_keys => 3}), Req};
value(parse_qs_max, Req) ->
	{mustang_req:parse_qs(Req, #{max_keys => 2}), Req};
value(match_qs, Req) ->
	{mustang_req:match_qs([k, {x, int}, {y, [], none}], Req, #{}), Req};
value(match_qs_int, Req) ->
	{mustang_req:match_qs([{k, int}], Req), Req};
value(set_resp_headers, Req) ->
	{ok, mustang_req:set_resp_headers([{<<"x-a">>, <<"1">>}, {<<"x-b">>, <<"2">>},
		{<<"x-a">>, <<"3">>}], Req)};
value(read_body_auto, Req) ->
	{more, Data, Req2} = mustang_req:read_body(Req, #{length => auto}),
	{Data, Req2};
value(body_length, Req) ->
	Before = {mustang_req:body_length(Req), mustang_req:header(<<"content-length">>, Req)},
	{Size, Req2} = read_all(Req, 0),
	{{Before, Size, mustang_req:body_length(Req2), mustang_req:header(<<"content-length">>, Req2),
		mustang_req:header(<<"transfer-encoding">>, Req2)}, Req2};
value(parse_header, Req) ->
	#{name := Name} = mustang_req:match_qs([name], Req),
	case mustang_req:parse_header(Name, Req) of
		[Ref] when is_reference(Ref) -> {null_origin, Req};
		Value -> {Value, Req}
	end.

read_all(Req, Size) ->
	case mustang_req:read_body(Req, #{length => 1000}) of
		{ok, Data, Req2} -> {Size + byte_size(Data), Req2};
		{more, Data, Req2} -> read_all(Req2, Size + byte_size(Data))
	end.
