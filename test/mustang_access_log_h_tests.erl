%% mustang_access_log_h driven through its callbacks, with fake_stream_h as
%% the rest of the chain (no sockets); the log events are caught with an
%% OTP logger handler (log_forward_h) filtered on the [mustang, access]
%% domain.
-module(mustang_access_log_h_tests).

-include_lib("eunit/include/eunit.hrl").

-define(HANDLER, mustang_access_log_h_tests).

req() ->
	#{method => <<"GET">>, version => 'HTTP/1.1', scheme => <<"http">>,
		host => <<"localhost">>, port => 8080, path => <<"/a b\"c">>, qs => <<"x=1&y=2">>,
		headers => #{<<"host">> => <<"localhost">>, <<"user-agent">> => <<"curl/8.0">>,
			<<"referer">> => <<"http://example.org/">>},
		peer => {{192, 168, 1, 20}, 50000}, sock => {{127, 0, 0, 1}, 8080}, cert => undefined,
		ref => test_ref, pid => self(), streamid => 1, mode => inline,
		has_body => false, body_length => 0}.

setup() ->
	ok = logger:set_module_level(mustang_access_log_h, info),
	ok = logger:add_handler(?HANDLER, log_forward_h, #{config => #{pid => self()},
		level => all, filter_default => stop,
		filters => [{access, {fun logger_filters:domain/2, {log, equal, [mustang, access]}}}]}).

cleanup() ->
	_ = logger:remove_handler(?HANDLER),
	ok = logger:unset_module_level(mustang_access_log_h).

with_logger(Fun) ->
	setup(),
	try Fun() after cleanup() end.

event() ->
	receive {log_event, E} -> E after 1000 -> error(no_log_event) end.

no_event() ->
	receive {log_event, E} -> error({unexpected_log_event, E}) after 50 -> ok end.

%% The line as the logger handler's formatter would write it.
line(#{msg := {report, Report}, meta := #{report_cb := Cb}}) ->
	{Format, Args} = Cb(Report),
	unicode:characters_to_binary(io_lib:format(Format, Args)).

%% One stream: init, the commands given come back from info, terminate.
stream(Format, Commands, Reason) ->
	stream(Format, req(), Commands, Reason).

stream(Format, Req, Commands, Reason) ->
	Opts = #{stream_handlers => [fake_stream_h], access_log_format => Format,
		fake_pid => self()},
	{[], S1} = mustang_access_log_h:init(1, Req, Opts),
	{Commands, S2} = mustang_access_log_h:info(1, {fake_commands, Commands}, S1),
	_ = mustang_access_log_h:terminate(1, Reason, S2),
	receive {fake, terminate, 1, Reason} -> ok after 1000 -> error(next_not_terminated) end,
	event().

%% The local time of a system time (microseconds) as CLF shows it, computed
%% from the RFC 3339 form, independently of the module's own code.
clf_time(Time) ->
	Rfc = calendar:system_time_to_rfc3339(Time div 1000000, [{unit, second}]),
	{match, [Y, Mo, D, H, Mi, S, Sign, OH, OM]} = re:run(Rfc,
		"^(\\d{4})-(\\d\\d)-(\\d\\d)T(\\d\\d):(\\d\\d):(\\d\\d)(?:([+-])(\\d\\d):(\\d\\d)|Z)$",
		[{capture, all_but_first, list}]),
	Month = lists:nth(list_to_integer(Mo), ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul",
		"Aug", "Sep", "Oct", "Nov", "Dec"]),
	Zone = case Sign of
		"" -> "+0000";
		_ -> Sign ++ OH ++ OM
	end,
	list_to_binary([D, "/", Month, "/", Y, ":", H, ":", Mi, ":", S, " ", Zone]).

common_line_test() ->
	with_logger(fun() ->
		Before = erlang:system_time(microsecond),
		E = stream(common, [{response, 200, #{}, [<<"hello">>, " world"]}], normal),
		#{level := info, msg := {report, Report}, meta := Meta} = E,
		?assertMatch(#{domain := [mustang, access], mfa := {mustang_access_log_h, _, _}}, Meta),
		#{time := Time, duration_us := Duration} = Report,
		?assert(Time >= Before andalso Time =< erlang:system_time(microsecond)),
		?assert(is_integer(Duration) andalso Duration >= 0),
		?assertMatch(#{peer := {192, 168, 1, 20}, method := <<"GET">>,
			target := <<"/a b\"c?x=1&y=2">>, version := 'HTTP/1.1', status := 200,
			bytes := 11, referer := <<"http://example.org/">>, user_agent := <<"curl/8.0">>,
			early_error := false, format := common}, Report),
		?assertEqual(<<"192.168.1.20 - - [", (clf_time(Time))/binary,
			"] \"GET /a b\\\"c?x=1&y=2 HTTP/1.1\" 200 11">>, line(E)),
		no_event()
	end).

combined_line_test() ->
	with_logger(fun() ->
		Cmds = [{headers, <<"206 Partial Content">>, #{}},
			{data, nofin, <<"12345">>},
			{data, fin, {sendfile, 0, 1000, "/some/file"}}],
		E = stream(combined, Cmds, normal),
		#{msg := {report, #{time := Time}}} = E,
		?assertEqual(<<"192.168.1.20 - - [", (clf_time(Time))/binary,
			"] \"GET /a b\\\"c?x=1&y=2 HTTP/1.1\" 206 1005"
			" \"http://example.org/\" \"curl/8.0\"">>, line(E))
	end).

%% Missing fields are "-"; a HEAD response counts no body; HTTP/2 is written
%% as HTTP/2.0; bytes that could forge a line are escaped.
combined_edge_cases_test() ->
	with_logger(fun() ->
		Req = maps:merge(req(), #{method => <<"HEAD">>, version => 'HTTP/2',
			path => <<"/">>, qs => <<>>, peer => {{0, 0, 0, 0, 0, 0, 0, 1}, 1},
			headers => #{<<"user-agent">> => <<"evil\n1.2.3.4 - - \"\\", 200>>}}),
		E = stream(combined, Req, [{response, 204, #{}, <<"ignored">>}], normal),
		#{msg := {report, #{time := Time}}} = E,
		?assertEqual(<<"::1 - - [", (clf_time(Time))/binary, "] \"HEAD / HTTP/2.0\" 204 -"
			" \"-\" \"evil\\x0A1.2.3.4 - - \\\"\\\\\\xC8\"">>, line(E))
	end).

%% No response at all: status "-"; an internal error with none: 500.
no_response_test() ->
	with_logger(fun() ->
		E1 = stream(common, [], {socket_error, closed, <<"closed">>}),
		?assertMatch(<<_:1/binary, _/binary>>, line(E1)),
		?assertMatch({match, _}, re:run(line(E1), "\" - -$")),
		E2 = stream(common, [], {internal_error, crash, <<"crash">>}),
		?assertMatch({match, _}, re:run(line(E2), "\" 500 -$")),
		E3 = stream(common, [{error_response, 500, #{}, <<"oops">>}, stop], normal),
		?assertMatch({match, _}, re:run(line(E3), "\" 500 4$")),
		%% An error_response after a response started is not sent.
		E4 = stream(common, [{headers, 200, #{}}, {data, nofin, <<"ab">>},
			{error_response, 500, #{}, <<"oops">>}], normal),
		?assertMatch({match, _}, re:run(line(E4), "\" 200 2$")),
		E5 = stream(common, [{internal_error, crash, <<"x">>}], normal),
		?assertMatch({match, _}, re:run(line(E5), "\" 500 -$"))
	end).

json_line_test() ->
	with_logger(fun() ->
		Req = maps:merge(req(), #{headers => #{<<"user-agent">> => <<"ü \"q\" \t", 255>>}}),
		E = stream(json, Req, [{response, 404, #{}, <<"not found">>}], normal),
		Line = line(E),
		%% One line, no raw control characters, valid JSON.
		?assertEqual([], [C || <<C>> <= Line, C < 32]),
		J = mustang_test:json(Line),
		#{msg := {report, #{time := Time, duration_us := Duration}}} = E,
		?assertEqual(#{
			<<"time">> => list_to_binary(calendar:system_time_to_rfc3339(Time,
				[{unit, microsecond}])),
			<<"peer">> => <<"192.168.1.20">>,
			<<"method">> => <<"GET">>,
			<<"target">> => <<"/a b\"c?x=1&y=2">>,
			<<"version">> => <<"HTTP/1.1">>,
			<<"status">> => 404,
			<<"bytes">> => 9,
			<<"referer">> => null,
			%% Not UTF-8 as a whole: read as Latin-1.
			<<"user_agent">> => unicode:characters_to_binary(<<"ü \"q\" \t", 255>>, latin1),
			<<"duration_us">> => Duration,
			<<"early_error">> => false
		}, J)
	end).

json_utf8_test() ->
	?assertEqual(<<"{\"time\":\"">>, binary:part(mustang_access_log_h:format(
		(report())#{format => json}), 0, 9)),
	J = mustang_test:json(mustang_access_log_h:format((report())#{format => json,
		user_agent => <<"ünïcode ✓"/utf8>>})),
	?assertEqual(<<"ünïcode ✓"/utf8>>, maps:get(<<"user_agent">>, J)).

report() ->
	#{format => common, time => 1700000000123456, peer => {127, 0, 0, 1},
		method => <<"GET">>, target => <<"/">>, version => 'HTTP/1.0', status => 200,
		bytes => 0, referer => undefined, user_agent => undefined, duration_us => 12,
		early_error => false}.

early_error_test() ->
	with_logger(fun() ->
		Partial = #{ref => test_ref, pid => self(), streamid => 1,
			peer => {{127, 0, 0, 1}, 4000}, sock => {{127, 0, 0, 1}, 80}, cert => undefined},
		Opts = #{stream_handlers => [fake_stream_h], access_log_format => combined,
			fake_early_error => fun({response, S, H, _}) -> {response, S, H, <<"Bad">>} end},
		Resp = mustang_access_log_h:early_error(1, {connection_error, protocol_error,
			<<"bad request line">>}, Partial, {response, 400, #{}, <<>>}, Opts),
		?assertEqual({response, 400, #{}, <<"Bad">>}, Resp),
		E = event(),
		#{msg := {report, Report = #{time := Time}}, meta := #{domain := [mustang, access]}} = E,
		?assertMatch(#{early_error := true, status := 400, bytes := 3,
			duration_us := undefined, method := undefined}, Report),
		?assertEqual(<<"127.0.0.1 - - [", (clf_time(Time))/binary, "] \"-\" 400 3 \"-\" \"-\"">>,
			line(E)),
		%% With what was parsed, in JSON.
		Partial2 = Partial#{method => <<"GET">>, path => <<"/x">>, qs => <<>>,
			version => 'HTTP/1.1', headers => #{<<"user-agent">> => <<"ua">>}},
		_ = mustang_access_log_h:early_error(1, {connection_error, limit_reached, <<"x">>},
			Partial2, {response, 431, #{}, <<>>}, Opts#{access_log_format => json}),
		J = mustang_test:json(line(event())),
		?assertMatch(#{<<"status">> := 431, <<"method">> := <<"GET">>, <<"target">> := <<"/x">>,
			<<"version">> := <<"HTTP/1.1">>, <<"user_agent">> := <<"ua">>,
			<<"duration_us">> := null, <<"early_error">> := true, <<"bytes">> := 3}, J)
	end).

%% When logger drops info events from this module nothing is recorded or
%% logged, and the chain still runs.
disabled_test() ->
	ok = logger:add_handler(?HANDLER, log_forward_h, #{config => #{pid => self()},
		level => all}),
	try
		false = logger:allow(info, mustang_access_log_h),
		Cmds = [{response, 200, #{}, <<"x">>}],
		Opts = #{stream_handlers => [fake_stream_h], fake_init => Cmds, fake_pid => self()},
		{Cmds, S1} = mustang_access_log_h:init(1, req(), Opts),
		{Cmds, S2} = mustang_access_log_h:info(1, {fake_commands, Cmds}, S1),
		_ = mustang_access_log_h:terminate(1, normal, S2),
		receive {fake, terminate, 1, normal} -> ok after 1000 -> error(next_not_terminated) end,
		Resp = {response, 400, #{}, <<>>},
		Resp = mustang_access_log_h:early_error(1, x, #{}, Resp, Opts),
		receive {log_event, #{meta := #{domain := [mustang, access]}} = E} ->
			error({unexpected, E})
		after 50 -> ok
		end
	after
		logger:remove_handler(?HANDLER)
	end.

%% The standard formatter writes the line as the message.
logger_formatter_test() ->
	Report = report(),
	Event = #{level => info, msg => {report, Report},
		meta => #{time => logger:timestamp(), report_cb => fun mustang_access_log_h:format_report/1}},
	Out = iolist_to_binary(logger_formatter:format(Event, #{template => [msg, "\n"],
		single_line => true})),
	?assertEqual(<<(mustang_access_log_h:format(Report))/binary, "\n">>, Out),
	?assertMatch({match, _}, re:run(Out, "^127\\.0\\.0\\.1 - - \\[\\d\\d/\\w{3}/\\d{4}:"
		"\\d\\d:\\d\\d:\\d\\d [+-]\\d{4}\\] \"GET / HTTP/1\\.0\" 200 -\n$")).

%% access_log_peer => proxy_header logs the client behind the proxy (the
%% PROXY protocol header's source); the socket peer when the option is
%% socket (the default), when the header has no IP source (LOCAL, UNIX) or
%% when there is no header; early errors too.
access_log_peer_test() ->
	with_logger(fun() ->
		Proxy = #{version => 2, command => proxy, transport_family => ipv4,
			transport_protocol => stream, src_address => {203, 0, 113, 9}, src_port => 40000,
			dest_address => {10, 0, 0, 1}, dest_port => 443},
		Peer = fun(Req, PeerOpt) ->
			Opts = #{stream_handlers => [fake_stream_h], access_log_format => common,
				access_log_peer => PeerOpt, fake_pid => self()},
			{[], S1} = mustang_access_log_h:init(1, Req, Opts),
			_ = mustang_access_log_h:terminate(1, normal, S1),
			receive {fake, terminate, 1, normal} -> ok after 1000 -> error(next_not_terminated) end,
			#{msg := {report, #{peer := P}}} = event(),
			P
		end,
		WithProxy = (req())#{proxy_header => Proxy},
		?assertEqual({203, 0, 113, 9}, Peer(WithProxy, proxy_header)),
		?assertEqual({192, 168, 1, 20}, Peer(WithProxy, socket)),
		?assertEqual({192, 168, 1, 20}, Peer(req(), proxy_header)),
		?assertEqual({192, 168, 1, 20}, Peer((req())#{proxy_header => #{version => 2,
			command => local}}, proxy_header)),
		?assertEqual({192, 168, 1, 20}, Peer((req())#{proxy_header => #{version => 2,
			command => proxy, transport_family => unix, src_address => <<"/run/a.sock">>}},
			proxy_header)),
		Partial = #{ref => test_ref, pid => self(), streamid => 1, peer => {{127, 0, 0, 1}, 4000},
			sock => {{127, 0, 0, 1}, 80}, cert => undefined, proxy_header => Proxy},
		_ = mustang_access_log_h:early_error(1, {connection_error, protocol_error, <<"x">>},
			Partial, {response, 400, #{}, <<>>}, #{stream_handlers => [fake_stream_h],
				access_log_peer => proxy_header}),
		?assertMatch(#{msg := {report, #{peer := {203, 0, 113, 9}, early_error := true}}}, event()),
		no_event()
	end).
