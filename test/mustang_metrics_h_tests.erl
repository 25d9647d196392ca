%% mustang_metrics_h driven through its callbacks, with fake_stream_h as the
%% rest of the chain (no sockets).
-module(mustang_metrics_h_tests).

-include_lib("eunit/include/eunit.hrl").

-define(KEYS, [ref, pid, streamid, reason, req, resp_status, resp_headers, req_start, req_end,
	req_body_start, req_body_end, resp_start, resp_end, procs, informational,
	req_body_length, resp_body_length, user_data]).

req() ->
	#{method => <<"POST">>, version => 'HTTP/1.1', scheme => <<"http">>,
		host => <<"localhost">>, port => 8080, path => <<"/upload">>, qs => <<"a=1">>,
		headers => #{<<"host">> => <<"localhost">>, <<"user-agent">> => <<"test">>},
		peer => {{127, 0, 0, 1}, 50000}, sock => {{127, 0, 0, 1}, 8080}, cert => undefined,
		ref => test_ref, pid => self(), streamid => 1, mode => inline,
		has_body => true, body_length => 5}.

opts(Extra) ->
	Self = self(),
	maps:merge(#{stream_handlers => [fake_stream_h],
		metrics_callback => fun(M) -> Self ! {metrics, M} end}, Extra).

metrics() ->
	receive {metrics, M} -> M after 1000 -> error(no_metrics) end.

no_more_metrics() ->
	receive {metrics, M} -> error({unexpected_metrics, M}) after 50 -> ok end.

full_request_test() ->
	Proc = spawn(fun() -> receive stop -> ok end end),
	Opts = opts(#{fake_init => [{spawn, Proc, 5000}],
		fake_pid => self()}),
	T0 = erlang:monotonic_time(),
	{[{spawn, Proc, 5000}], S1} = mustang_metrics_h:init(1, req(), Opts),
	{[], S2} = mustang_metrics_h:data(1, nofin, <<"abc">>, S1),
	{[], S3} = mustang_metrics_h:data(1, fin, <<"de">>, S2),
	Inform = {inform, 103, #{<<"link">> => <<"</a.css>; rel=preload">>}},
	{[Inform], S4} = mustang_metrics_h:info(1, {fake_commands, [Inform]}, S3),
	Cast1 = {set_options, #{metrics_user_data => #{handler => upload_h, a => 1}}},
	{[], S5} = mustang_metrics_h:info(1, Cast1, S4),
	%% The same option coming up as a command, merged with later values winning.
	Cast2 = {set_options, #{metrics_user_data => #{a => 2}}},
	{[Cast2], S6} = mustang_metrics_h:info(1, {fake_commands, [Cast2]}, S5),
	Resp = [{headers, 200, #{<<"content-type">> => <<"text/plain">>}},
		{data, nofin, [<<"hel">>, "lo"]},
		{data, nofin, {sendfile, 10, 100, "/tmp/file"}},
		{trailers, #{<<"x-checksum">> => <<"1">>}}],
	{Resp, S7} = mustang_metrics_h:info(1, {fake_commands, Resp}, S6),
	Proc ! stop,
	{[], S8} = mustang_metrics_h:info(1, {'EXIT', Proc, normal}, S7),
	%% An exit of a process we were not told about is not a metric.
	Other = spawn(fun() -> ok end),
	{[], S9} = mustang_metrics_h:info(1, {'EXIT', Other, normal}, S8),
	ok = mustang_metrics_h:terminate(1, normal, S9),
	T1 = erlang:monotonic_time(),
	M = metrics(),
	?assertEqual(lists:sort(?KEYS), lists:sort(maps:keys(M))),
	?assertMatch(#{ref := test_ref, streamid := 1, reason := normal, resp_status := 200,
		resp_headers := #{<<"content-type">> := <<"text/plain">>},
		req_body_length := 5, resp_body_length := 105,
		user_data := #{handler := upload_h, a := 2}}, M),
	?assertEqual(self(), maps:get(pid, M)),
	?assertEqual(req(), maps:get(req, M)),
	#{req_start := ReqStart, req_end := ReqEnd, req_body_start := BodyStart,
		req_body_end := BodyEnd, resp_start := RespStart, resp_end := RespEnd,
		procs := Procs, informational := [Info]} = M,
	Times = [T0, ReqStart, BodyStart, BodyEnd, RespStart, RespEnd, ReqEnd, T1],
	?assert(lists:all(fun is_integer/1, Times)),
	?assertEqual(Times, lists:sort(Times)),
	?assertMatch(#{status := 103, headers := #{<<"link">> := _}}, Info),
	?assert(maps:get(time, Info) >= BodyEnd andalso maps:get(time, Info) =< RespStart),
	?assertEqual([Proc], maps:keys(Procs)),
	#{Proc := #{spawn := Spawn, exit := Exit, reason := normal}} = Procs,
	?assert(ReqStart =< Spawn andalso Spawn =< Exit andalso Exit =< ReqEnd),
	%% The rest of the chain was terminated, once.
	receive {fake, terminate, 1, normal} -> ok after 1000 -> error(next_not_terminated) end,
	no_more_metrics().

response_command_test() ->
	{[], S1} = mustang_metrics_h:init(3, req(), opts(#{})),
	Resp = {response, <<"404 Not Found">>, #{<<"a">> => <<"b">>}, <<"nope">>},
	{[Resp], S2} = mustang_metrics_h:info(3, {fake_commands, [Resp]}, S1),
	%% Sent only when no response started: not one here.
	ErrorResp = {error_response, 500, #{}, <<"error">>},
	{[ErrorResp], S3} = mustang_metrics_h:info(3, {fake_commands, [ErrorResp]}, S2),
	_ = mustang_metrics_h:terminate(3, {stop, test, <<"stop">>}, S3),
	M = metrics(),
	?assertMatch(#{streamid := 3, reason := {stop, test, <<"stop">>},
		resp_status := <<"404 Not Found">>, resp_headers := #{<<"a">> := <<"b">>},
		resp_body_length := 4, req_body_length := 0, req_body_start := undefined,
		req_body_end := undefined, informational := [], procs := Procs,
		user_data := UserData} when map_size(Procs) =:= 0 andalso map_size(UserData) =:= 0, M),
	#{resp_start := RespStart, resp_end := RespEnd} = M,
	?assertEqual(RespStart, RespEnd).

error_response_test() ->
	{[], S1} = mustang_metrics_h:init(1, req(), opts(#{})),
	Cmds = [{error_response, 500, #{<<"content-length">> => <<"0">>}, <<>>}, stop],
	{Cmds, S2} = mustang_metrics_h:info(1, {fake_commands, Cmds}, S1),
	_ = mustang_metrics_h:terminate(1, {internal_error, crash, <<"crash">>}, S2),
	?assertMatch(#{resp_status := 500, resp_body_length := 0,
		reason := {internal_error, crash, <<"crash">>}}, metrics()).

%% A crash before any response: the connection sends 500.
internal_error_test() ->
	Cmds = [{internal_error, {error, crash}, <<"crashed">>}, stop],
	{[], S1} = mustang_metrics_h:init(1, req(), opts(#{})),
	{Cmds, S2} = mustang_metrics_h:info(1, {fake_commands, Cmds}, S1),
	_ = mustang_metrics_h:terminate(1, {internal_error, {error, crash}, <<"crashed">>}, S2),
	?assertMatch(#{resp_status := 500, resp_body_length := 0, resp_start := T, resp_end := T,
		reason := {internal_error, {error, crash}, <<"crashed">>}} when is_integer(T), metrics()),
	%% Terminated as normal after the command: the reason is the command's.
	{[], S2b} = mustang_metrics_h:init(1, req(), opts(#{})),
	{Cmds, S2c} = mustang_metrics_h:info(1, {fake_commands, Cmds}, S2b),
	_ = mustang_metrics_h:terminate(1, normal, S2c),
	?assertMatch(#{resp_status := 500, reason := {internal_error, {error, crash}, <<"crashed">>}},
		metrics()),
	%% Once a response started, an internal error changes nothing.
	Cmds2 = [{headers, 200, #{}}, {internal_error, x, <<"x">>}],
	{[], S3} = mustang_metrics_h:init(1, req(), opts(#{})),
	{Cmds2, S4} = mustang_metrics_h:info(1, {fake_commands, Cmds2}, S3),
	_ = mustang_metrics_h:terminate(1, normal, S4),
	?assertMatch(#{resp_status := 200, resp_end := undefined,
		reason := {internal_error, x, <<"x">>}}, metrics()).

no_response_test() ->
	{[], S1} = mustang_metrics_h:init(1, req(), opts(#{})),
	_ = mustang_metrics_h:terminate(1, {socket_error, closed, <<"closed">>}, S1),
	?assertMatch(#{resp_status := undefined, resp_headers := undefined,
		resp_start := undefined, resp_end := undefined, resp_body_length := 0}, metrics()).

switch_protocol_test() ->
	Cmd = {switch_protocol, #{<<"upgrade">> => <<"websocket">>}, some_mod, state},
	{[Cmd], S1} = mustang_metrics_h:init(1, req(), opts(#{fake_init => [Cmd]})),
	_ = mustang_metrics_h:terminate(1, switch_protocol, S1),
	?assertMatch(#{resp_status := 101, resp_headers := #{<<"upgrade">> := <<"websocket">>},
		reason := switch_protocol}, metrics()).

filters_test() ->
	Opts = opts(#{
		metrics_req_filter => fun(Req) -> maps:with([method, path], Req) end,
		metrics_resp_headers_filter => fun(H) -> maps:remove(<<"set-cookie">>, H) end,
		fake_init => [
			{inform, 100, #{<<"set-cookie">> => <<"x=1">>, <<"a">> => <<"1">>}},
			{response, 200, #{<<"set-cookie">> => <<"s=1">>, <<"b">> => <<"2">>}, <<>>}]
	}),
	{_, S1} = mustang_metrics_h:init(1, req(), Opts),
	_ = mustang_metrics_h:terminate(1, normal, S1),
	M = metrics(),
	?assertEqual(#{method => <<"POST">>, path => <<"/upload">>}, maps:get(req, M)),
	?assertEqual(#{<<"b">> => <<"2">>}, maps:get(resp_headers, M)),
	?assertMatch([#{status := 100, headers := #{<<"a">> := <<"1">>} = H}]
		when not is_map_key(<<"set-cookie">>, H), maps:get(informational, M)).

early_error_test() ->
	Opts = opts(#{
		metrics_resp_headers_filter => fun(H) -> maps:remove(<<"connection">>, H) end,
		%% A later handler changes the response: the metrics see the final one.
		fake_early_error => fun({response, _, H, _}) ->
			{response, 431, H#{<<"x-later">> => <<"1">>}, <<"too big">>} end}),
	Partial = #{ref => test_ref, pid => self(), streamid => 7,
		peer => {{127, 0, 0, 1}, 4000}, sock => {{127, 0, 0, 1}, 80}, cert => undefined},
	Resp0 = {response, 400, #{<<"connection">> => <<"close">>}, <<>>},
	T0 = erlang:monotonic_time(),
	Resp = mustang_metrics_h:early_error(7, {connection_error, protocol_error, <<"bad">>},
		Partial, Resp0, Opts),
	T1 = erlang:monotonic_time(),
	?assertEqual({response, 431, #{<<"connection">> => <<"close">>, <<"x-later">> => <<"1">>},
		<<"too big">>}, Resp),
	M = metrics(),
	?assertEqual(lists:sort([ref, pid, streamid, reason, partial_req, resp_status, resp_headers,
		early_error_time, resp_body_length]), lists:sort(maps:keys(M))),
	?assertMatch(#{ref := test_ref, streamid := 7, partial_req := Partial,
		reason := {connection_error, protocol_error, <<"bad">>}, resp_status := 431,
		resp_headers := #{<<"x-later">> := <<"1">>} = H, resp_body_length := 7}
		when not is_map_key(<<"connection">>, H), M),
	#{early_error_time := Time} = M,
	?assert(T0 =< Time andalso Time =< T1).

callback_crash_test() ->
	register(fake_logger_sink, self()),
	try
		Opts = opts(#{metrics_callback => fun(_) -> error(boom) end, logger => fake_logger,
			fake_pid => self()}),
		{[], S1} = mustang_metrics_h:init(1, req(), Opts),
		%% terminate/3 returns and still terminates the rest of the chain.
		ok = mustang_metrics_h:terminate(1, normal, S1),
		receive {fake, terminate, 1, normal} -> ok after 1000 -> error(next_not_terminated) end,
		receive {fake_logger, error, _, [error, boom, _]} -> ok
		after 1000 -> error(no_log) end,
		Resp = {response, 400, #{}, <<>>},
		Resp = mustang_metrics_h:early_error(1, {connection_error, x, <<>>},
			#{}, Resp, Opts),
		receive {fake_logger, error, _, [error, boom, _]} -> ok
		after 1000 -> error(no_log) end
	after
		unregister(fake_logger_sink)
	end.

%% Without a callback the handler only passes everything on.
no_callback_test() ->
	Cmds = [{response, 200, #{}, <<"x">>}],
	Opts = #{stream_handlers => [fake_stream_h], fake_init => Cmds, fake_data => [{flow, 10}],
		fake_pid => self()},
	{Cmds, S1} = mustang_metrics_h:init(1, req(), Opts),
	{[{flow, 10}], S2} = mustang_metrics_h:data(1, fin, <<"x">>, S1),
	{[stop], S3} = mustang_metrics_h:info(1, {fake_commands, [stop]}, S2),
	_ = mustang_metrics_h:terminate(1, normal, S3),
	receive {fake, terminate, 1, normal} -> ok after 1000 -> error(next_not_terminated) end,
	no_more_metrics().

%% Unknown commands and infos go through unchanged, in order.
passthrough_test() ->
	Cmds = [{log, info, "x", []}, {flow, 100}, {ack, self(), make_ref()}, {unknown, 1},
		{run, m, f, []}, {push, <<"GET">>, <<"http">>, <<"h">>, 80, <<"/">>, <<>>, #{}}],
	{Cmds, S1} = mustang_metrics_h:init(1, req(), opts(#{fake_init => Cmds})),
	{[], S2} = mustang_metrics_h:info(1, {whatever, 1}, S1),
	#{calls := [{info, 1, {whatever, 1}} | _]} = next_state(S2),
	_ = mustang_metrics_h:terminate(1, normal, S2),
	_ = metrics().

next_state(State) ->
	{fake_stream_h, Next} = element(2, State),
	Next.
