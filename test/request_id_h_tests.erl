%% The guide's worked stream handler (test/handlers/request_id_h.erl),
%% driven through its callbacks with fake_stream_h as the rest of the chain.
-module(request_id_h_tests).

-include_lib("eunit/include/eunit.hrl").

req(Headers) ->
	#{method => <<"GET">>, version => 'HTTP/1.1', path => <<"/">>, qs => <<>>,
		headers => Headers, peer => {{127, 0, 0, 1}, 1}, pid => self(), streamid => 1,
		mode => inline}.

opts(Extra) ->
	maps:merge(#{stream_handlers => [fake_stream_h]}, Extra).

with_log(Fun) ->
	ok = logger:set_module_level(request_id_h, info),
	ok = logger:add_handler(?MODULE, log_forward_h, #{config => #{pid => self()},
		filter_default => stop,
		filters => [{mine, {fun(E = #{meta := #{request_id := _}}, _) -> E; (_, _) -> stop end,
			[]}}]}),
	try Fun() after
		_ = logger:remove_handler(?MODULE),
		logger:unset_module_level(request_id_h)
	end.

logged() ->
	receive {log_event, #{meta := Meta}} -> Meta after 1000 -> error(no_log) end.

new_id_and_bytes_test() ->
	with_log(fun() ->
		Head = {headers, 200, #{<<"content-type">> => <<"text/plain">>}},
		{[{headers, 200, #{<<"x-request-id">> := Id, <<"content-type">> := _}}], S1} =
			request_id_h:init(1, req(#{}), opts(#{fake_init => [Head]})),
		?assertMatch({match, _}, re:run(Id, "^[0-9A-F]{16}$")),
		Body = [{data, nofin, <<"hello">>}, {data, fin, {sendfile, 0, 10, "/f"}}, {flow, 1}],
		{Body, S2} = request_id_h:info(1, {fake_commands, Body}, S1),
		_ = request_id_h:terminate(1, normal, S2),
		?assertMatch(#{request_id := Id, resp_bytes := 15}, logged())
	end).

client_id_test() ->
	Resp = {response, 200, #{}, <<"abc">>},
	{[{response, 200, #{<<"x-request-id">> := <<"abc-123_X">>}, <<"abc">>}], _} =
		request_id_h:init(1, req(#{<<"x-request-id">> => <<"abc-123_X">>}),
			opts(#{fake_init => [Resp]})),
	%% Not a sane id: replaced.
	{[{response, 200, #{<<"x-request-id">> := Id}, _}], _} =
		request_id_h:init(1, req(#{<<"x-request-id">> => <<"a b">>}),
			opts(#{fake_init => [Resp]})),
	?assertNotEqual(<<"a b">>, Id),
	%% Another header name.
	{[{response, 200, #{<<"request-id">> := <<"r1">>} = H, _}], _} =
		request_id_h:init(1, req(#{<<"request-id">> => <<"r1">>}),
			opts(#{fake_init => [Resp], env => #{request_id_header => <<"request-id">>}})),
	?assertNot(is_map_key(<<"x-request-id">>, H)).

error_response_and_early_error_test() ->
	Cmds = [{error_response, 500, #{}, <<>>}, stop],
	{[], S1} = request_id_h:init(1, req(#{}), opts(#{})),
	{[{error_response, 500, #{<<"x-request-id">> := _}, <<>>}, stop], _} =
		request_id_h:info(1, {fake_commands, Cmds}, S1),
	{response, 400, #{<<"x-request-id">> := _, <<"connection">> := <<"close">>}, <<>>} =
		request_id_h:early_error(1, x, #{}, {response, 400, #{<<"connection">> => <<"close">>},
			<<>>}, opts(#{})).
