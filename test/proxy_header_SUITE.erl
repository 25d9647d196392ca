%% The PROXY protocol (protocol option proxy_header, HAProxy's
%% proxy-protocol.txt) behind a real HAProxy, and on raw sockets.
%%
%% Group haproxy: HAProxy from apt (scripts/setup.sh installs it) runs in
%% the foreground with a configuration written to the CT priv dir, on
%% loopback only and free ports, in front of two Mustang listeners with
%% proxy_header => true, one clear and one TLS. curl connects from
%% 127.0.0.2, HAProxy connects to Mustang from 127.0.0.1, so the handler
%% (proxy_header_h) can tell the client (mustang_req:proxy_header/1) from
%% the proxy (mustang_req:peer/1). HAProxy modes tested: TCP mode with
%% send-proxy and send-proxy-v2 (with the CRC32C TLV) in front of the clear
%% listener (HTTP/1.1, h2c by prior knowledge) and the TLS listener (the
%% PROXY header, then TLS: HTTP/1.1 and h2 by ALPN); HTTP mode with
%% send-proxy-v2 and a unique ID TLV; health checks with the LOCAL command.
%% The group is skipped when there is no haproxy executable.
%%
%% Group raw: a client that writes the header itself, byte by byte, cut
%% short, malformed, late or missing; each time the connection is closed
%% and the listener serves the next client.
-module(proxy_header_SUITE).
-compile([export_all, nowarn_export_all]).

-include_lib("common_test/include/ct.hrl").
-include_lib("stdlib/include/assert.hrl").

-import(mustang_test, [doc/1]).

%% The listeners' proxy_header_timeout (ms).
-define(TIMEOUT, 1000).

suite() ->
	[{timetrap, {seconds, 120}}].

all() ->
	[{group, haproxy}, {group, raw}].

groups() ->
	[
		{haproxy, [], [
			tcp_v1_clear_http11,
			tcp_v1_clear_h2c,
			tcp_v2_clear_http11,
			tcp_v2_clear_h2c,
			tcp_v1_tls_http11,
			tcp_v1_tls_h2,
			tcp_v2_tls_http11,
			tcp_v2_tls_h2,
			http_mode_v2_unique_id,
			health_check_local
		]},
		{raw, [], [
			v1_one_packet_with_request,
			v2_byte_by_byte,
			v2_then_tls,
			v2_local,
			malformed_v1,
			truncated_v2,
			oversized_v2,
			no_header,
			slow_header_timeout,
			option_off
		]}
	].

init_per_suite(Config) ->
	{ok, _} = application:ensure_all_started(mustang),
	Routes = [{'_', [
		{"/", proxy_header_h, []},
		{"/check", proxy_header_h, {notify, proxy_header_check}}
	]}],
	Opts = #{env => #{dispatch => mustang_router:compile(Routes)}, proxy_header => true,
		proxy_header_timeout => ?TIMEOUT},
	Ip = #{port => 0, socket_opts => [{ip, {127, 0, 0, 1}}]},
	{ok, _} = mustang:start_clear(proxy_clear, Ip, Opts),
	{ok, _} = mustang:start_tls(proxy_tls,
		Ip#{socket_opts => [{ip, {127, 0, 0, 1}} | mustang_demo:tls_opts()]}, Opts),
	{ok, _} = mustang:start_clear(proxy_off, Ip, maps:remove(proxy_header, Opts)),
	[{clear, mustang:get_port(proxy_clear)}, {tls, mustang:get_port(proxy_tls)},
		{off, mustang:get_port(proxy_off)} | Config].

end_per_suite(_) ->
	[ok = mustang:stop_listener(Ref) || Ref <- [proxy_clear, proxy_tls, proxy_off]],
	ok.

init_per_group(haproxy, Config) ->
	case haproxy() of
		false ->
			{skip, "haproxy is not installed (scripts/setup.sh installs the apt package)"};
		HAProxy ->
			Curl = mustang_test:tool("curl", undefined, []),
			Frontends = [{Name, free_port()} || Name <- [tcp_v1_clear, tcp_v2_clear, tcp_v1_tls,
				tcp_v2_tls, http_v2]],
			Cfg = filename:join(?config(priv_dir, Config), "haproxy.cfg"),
			ok = file:write_file(Cfg, haproxy_config(Frontends, ?config(clear, Config),
				?config(tls, Config))),
			{_, Version} = mustang_test:run(HAProxy, ["-v"], 10000),
			ct:log("~s~n~s", [Version, element(2, file:read_file(Cfg))]),
			{Port, OsPid} = start_haproxy(HAProxy, Cfg, [P || {_, P} <- Frontends]),
			[{haproxy, {Port, OsPid}}, {curl, Curl}, {frontends, Frontends} | Config]
	end;
init_per_group(raw, Config) ->
	Config.

end_per_group(haproxy, Config) ->
	{Port, OsPid} = ?config(haproxy, Config),
	ct:log("haproxy output:~n~s", [mustang_test:program_output(Port)]),
	mustang_test:kill_os_pid(OsPid),
	catch port_close(Port),
	ok;
end_per_group(_, _) ->
	ok.

%% HAProxy.

haproxy() ->
	case os:find_executable("haproxy") of
		false ->
			case filelib:is_regular("/usr/sbin/haproxy") of
				true -> "/usr/sbin/haproxy";
				false -> false
			end;
		Path ->
			Path
	end.

free_port() ->
	{ok, L} = gen_tcp:listen(0, [{ip, {127, 0, 0, 1}}, {reuseaddr, true}]),
	{ok, Port} = inet:port(L),
	ok = gen_tcp:close(L),
	Port.

haproxy_config(Frontends, Clear, TLS) ->
	Fe = fun(Name) -> integer_to_list(proplists:get_value(Name, Frontends)) end,
	C = integer_to_list(Clear),
	T = integer_to_list(TLS),
	["global\n"
	"\tmaxconn 200\n"
	"defaults\n"
	"\ttimeout connect 5s\n"
	"\ttimeout client 30s\n"
	"\ttimeout server 30s\n",
	tcp_proxy("tcp_v1_clear", Fe(tcp_v1_clear), C, "send-proxy"),
	tcp_proxy("tcp_v2_clear", Fe(tcp_v2_clear), C, "send-proxy-v2 proxy-v2-options crc32c"),
	tcp_proxy("tcp_v1_tls", Fe(tcp_v1_tls), T, "send-proxy"),
	tcp_proxy("tcp_v2_tls", Fe(tcp_v2_tls), T, "send-proxy-v2 proxy-v2-options crc32c"
		" check check-ssl verify none inter 500", "\toption httpchk GET /check\n"),
	"frontend http_v2\n"
	"\tmode http\n"
	"\tbind 127.0.0.1:", Fe(http_v2), "\n"
	"\tunique-id-format %ci:%cp\n"
	"\tdefault_backend http_v2\n"
	"backend http_v2\n"
	"\tmode http\n"
	"\toption httpchk GET /check\n"
	"\tserver s1 127.0.0.1:", C, " send-proxy-v2 proxy-v2-options unique-id check inter 500\n"].

tcp_proxy(Name, Port, Server, Options) ->
	tcp_proxy(Name, Port, Server, Options, "").

tcp_proxy(Name, Port, Server, Options, BackendLines) ->
	["frontend ", Name, "\n"
	"\tmode tcp\n"
	"\tbind 127.0.0.1:", Port, "\n"
	"\tdefault_backend ", Name, "\n"
	"backend ", Name, "\n"
	"\tmode tcp\n",
	BackendLines,
	"\tserver s1 127.0.0.1:", Server, " ", Options, "\n"].

%% HAProxy in the foreground (-db), up when every frontend accepts.
start_haproxy(HAProxy, Cfg, Ports) ->
	Port = open_port({spawn_executable, HAProxy}, [{args, ["-db", "-f", Cfg]}, {line, 4096},
		binary, exit_status, stderr_to_stdout, use_stdio, hide]),
	{os_pid, OsPid} = erlang:port_info(Port, os_pid),
	Deadline = erlang:monotonic_time(millisecond) + 15000,
	wait_listening(Port, OsPid, Ports, Deadline),
	{Port, OsPid}.

wait_listening(_, _, [], _) ->
	ok;
wait_listening(Port, OsPid, [P | Rest], Deadline) ->
	receive
		{Port, {exit_status, Status}} ->
			ct:fail("haproxy exited with ~p:~n~s", [Status, mustang_test:program_output(Port)])
	after 0 ->
		case gen_tcp:connect({127, 0, 0, 1}, P, [binary, {active, false}], 1000) of
			{ok, S} ->
				gen_tcp:close(S),
				wait_listening(Port, OsPid, Rest, Deadline);
			{error, _} ->
				case erlang:monotonic_time(millisecond) > Deadline of
					true ->
						mustang_test:kill_os_pid(OsPid),
						ct:fail("haproxy does not listen on ~b:~n~s",
							[P, mustang_test:program_output(Port)]);
					false ->
						timer:sleep(100),
						wait_listening(Port, OsPid, [P | Rest], Deadline)
				end
		end
	end.

%% curl from 127.0.0.2 through a frontend: the handler's term, curl's local
%% port and the HTTP version curl used.
curl(Config, Frontend, Scheme, Args) ->
	FePort = proplists:get_value(Frontend, ?config(frontends, Config)),
	Url = Scheme ++ "://127.0.0.1:" ++ integer_to_list(FePort) ++ "/",
	{0, Out} = mustang_test:run(?config(curl, Config), ["-sS", "-k", "--interface", "127.0.0.2",
		"-w", "\n%{local_port} %{http_version}" | Args] ++ [Url], 30000),
	[Body, Trailer] = string:split(Out, <<"\n">>, trailing),
	[LocalPort, HttpVersion] = binary:split(Trailer, <<" ">>),
	{mustang_test:parse_term(Body), binary_to_integer(LocalPort), HttpVersion, FePort}.

%% Through HAProxy: the handler sees the client (127.0.0.2 and curl's port)
%% in the PROXY header and HAProxy (127.0.0.1) as the peer.
through(Config, Frontend, Scheme, Args, PPVersion, ExpectedVersion) ->
	{Term, LocalPort, HttpVersion, FePort} = curl(Config, Frontend, Scheme, Args),
	ct:log("~p~nlocal port ~b, curl HTTP version ~s", [Term, LocalPort, HttpVersion]),
	#{proxy_header := PH, peer := {PeerIP, PeerPort}, version := Version, has_key := true} = Term,
	?assertMatch(#{version := PPVersion, command := proxy, transport_family := ipv4,
		transport_protocol := stream, src_address := {127, 0, 0, 2}, dest_address := {127, 0, 0, 1}},
		PH),
	?assertEqual(LocalPort, maps:get(src_port, PH)),
	?assertEqual(FePort, maps:get(dest_port, PH)),
	?assertEqual({127, 0, 0, 1}, PeerIP),
	?assert(is_integer(PeerPort)),
	?assertEqual(ExpectedVersion, Version),
	PH.

%% The TCP mode cases: {Frontend, URL scheme, curl options, PROXY protocol
%% version, the HTTP version the handler sees, what the case checks}.
tcp_case(tcp_v1_clear_http11) ->
	{tcp_v1_clear, "http", ["--http1.1"], 1, 'HTTP/1.1',
		"send-proxy (v1), clear listener, HTTP/1.1: the handler gets the client's address "
		"from proxy_header/1, HAProxy's from peer/1. (PROXY protocol 2.1)"};
tcp_case(tcp_v1_clear_h2c) ->
	{tcp_v1_clear, "http", ["--http2-prior-knowledge"], 1, 'HTTP/2',
		"send-proxy (v1), clear listener, HTTP/2 by prior knowledge."};
tcp_case(tcp_v2_clear_http11) ->
	{tcp_v2_clear, "http", ["--http1.1"], 2, 'HTTP/1.1',
		"send-proxy-v2 with a CRC32C TLV, clear listener, HTTP/1.1. (PROXY protocol 2.2, 2.2.3)"};
tcp_case(tcp_v2_clear_h2c) ->
	{tcp_v2_clear, "http", ["--http2-prior-knowledge"], 2, 'HTTP/2',
		"send-proxy-v2, clear listener, HTTP/2 by prior knowledge."};
tcp_case(tcp_v1_tls_http11) ->
	{tcp_v1_tls, "https", ["--http1.1"], 1, 'HTTP/1.1',
		"send-proxy (v1), TLS listener: the header is read before the TLS handshake; "
		"HTTP/1.1 by ALPN."};
tcp_case(tcp_v1_tls_h2) ->
	{tcp_v1_tls, "https", ["--http2"], 1, 'HTTP/2', "send-proxy (v1), TLS listener, h2 by ALPN."};
tcp_case(tcp_v2_tls_http11) ->
	{tcp_v2_tls, "https", ["--http1.1"], 2, 'HTTP/1.1',
		"send-proxy-v2, TLS listener, HTTP/1.1 by ALPN."};
tcp_case(tcp_v2_tls_h2) ->
	{tcp_v2_tls, "https", ["--http2"], 2, 'HTTP/2', "send-proxy-v2, TLS listener, h2 by ALPN."}.

tcp(Config, Case) ->
	{Frontend, Scheme, Args, PPVersion, Version, Doc} = tcp_case(Case),
	doc("HAProxy TCP mode, " ++ Doc),
	through(Config, Frontend, Scheme, Args, PPVersion, Version).

tcp_v1_clear_http11(Config) -> tcp(Config, ?FUNCTION_NAME).
tcp_v1_clear_h2c(Config) -> tcp(Config, ?FUNCTION_NAME).
tcp_v2_clear_http11(Config) -> tcp(Config, ?FUNCTION_NAME).
tcp_v2_clear_h2c(Config) -> tcp(Config, ?FUNCTION_NAME).
tcp_v1_tls_http11(Config) -> tcp(Config, ?FUNCTION_NAME).
tcp_v1_tls_h2(Config) -> tcp(Config, ?FUNCTION_NAME).
tcp_v2_tls_http11(Config) -> tcp(Config, ?FUNCTION_NAME).
tcp_v2_tls_h2(Config) -> tcp(Config, ?FUNCTION_NAME).

http_mode_v2_unique_id(Config) ->
	doc("HAProxy HTTP mode, send-proxy-v2 with the unique ID TLV (unique-id-format "
		"%ci:%cp): HAProxy speaks HTTP/1.1 to Mustang whatever the client speaks. "
		"(PROXY protocol 2.2.5)"),
	[begin
		PH = through(Config, http_v2, "http", Args, 2, 'HTTP/1.1'),
		?assertEqual(iolist_to_binary(["127.0.0.2:", integer_to_list(maps:get(src_port, PH))]),
			maps:get(unique_id, PH))
	end || Args <- [["--http1.1"], ["--http2-prior-knowledge"]]].

health_check_local(_) ->
	doc("HAProxy's health checks (option httpchk, send-proxy-v2) come with the LOCAL "
		"command: the request is served and proxy_header/1 is #{version => 2, command => "
		"local}; on the clear listener (HTTP mode backend) and on the TLS one (TCP mode "
		"backend, check-ssl: the PROXY header, then TLS). (PROXY protocol 2.2)"),
	true = register(proxy_header_check, self()),
	wait_checks([<<"http">>, <<"https">>]).

wait_checks([]) ->
	ok;
wait_checks(Schemes) ->
	receive
		{proxy_header_check, Term = #{scheme := Scheme}} ->
			?assertMatch(#{peer := {{127, 0, 0, 1}, _}, version := 'HTTP/1.0'}, Term),
			?assertEqual(#{version => 2, command => local}, maps:get(proxy_header, Term)),
			wait_checks(Schemes -- [Scheme])
	after 10000 ->
		ct:fail({no_health_check, Schemes})
	end.

%% Raw sockets.

connect(Config, Which) ->
	{ok, S} = gen_tcp:connect({127, 0, 0, 1}, ?config(Which, Config),
		[binary, {active, false}, {nodelay, true}]),
	S.

v1(SrcPort) ->
	<<"PROXY TCP4 198.51.100.7 192.0.2.1 ", (integer_to_binary(SrcPort))/binary, " 443\r\n">>.

v2(SrcPort) ->
	mustang_proxy_header:header(#{version => 2, command => proxy, transport_family => ipv4,
		transport_protocol => stream, src_address => {198, 51, 100, 7}, src_port => SrcPort,
		dest_address => {192, 0, 2, 1}, dest_port => 443, authority => <<"example.com">>}).

get_request() ->
	<<"GET / HTTP/1.1\r\nhost: localhost\r\nconnection: close\r\n\r\n">>.

%% Everything until the server closes (gen_tcp, or ssl for a TLS socket).
recv_all(S) ->
	recv_all(gen_tcp, S, <<>>).

recv_all(Mod, S, Acc) ->
	case Mod:recv(S, 0, 10000) of
		{ok, Data} -> recv_all(Mod, S, <<Acc/binary, Data/binary>>);
		{error, closed} -> Acc;
		{error, Reason} -> ct:fail({recv, Reason, Acc})
	end.

response_term(Resp) ->
	[Head, Body] = binary:split(Resp, <<"\r\n\r\n">>),
	?assertMatch(<<"HTTP/1.1 200 OK", _/binary>>, Head),
	mustang_test:parse_term(Body).

%% The listener is closed on this client without a byte sent back.
assert_closed_silently(S) ->
	?assertEqual({error, closed}, gen_tcp:recv(S, 0, 10000)),
	gen_tcp:close(S).

%% A correct client is served after whatever came before.
assert_next_served(Config) ->
	S = connect(Config, clear),
	ok = gen_tcp:send(S, [v1(1234), get_request()]),
	?assertMatch(#{proxy_header := #{src_port := 1234}}, response_term(recv_all(S))).

v1_one_packet_with_request(Config) ->
	doc("A v1 header and the request in one packet: the bytes after the header are the "
		"request. (PROXY protocol 2.1)"),
	S = connect(Config, clear),
	{ok, {_, MyPort}} = inet:sockname(S),
	ok = gen_tcp:send(S, [v1(5555), get_request()]),
	Term = response_term(recv_all(S)),
	?assertEqual(#{version => 1, command => proxy, transport_family => ipv4,
		transport_protocol => stream, src_address => {198, 51, 100, 7}, src_port => 5555,
		dest_address => {192, 0, 2, 1}, dest_port => 443}, maps:get(proxy_header, Term)),
	?assertMatch(#{peer := {{127, 0, 0, 1}, MyPort}}, Term).

v2_byte_by_byte(Config) ->
	doc("A v2 header sent one byte per packet is read whole, then the request. "
		"(PROXY protocol 2.2)"),
	S = connect(Config, clear),
	[begin ok = gen_tcp:send(S, <<B>>), timer:sleep(2) end || <<B>> <= v2(6666)],
	ok = gen_tcp:send(S, get_request()),
	Term = response_term(recv_all(S)),
	?assertMatch(#{proxy_header := #{version := 2, src_port := 6666,
		authority := <<"example.com">>}}, Term).

v2_then_tls(Config) ->
	doc("On a TLS listener the v2 header comes first, then the TLS handshake (the client "
		"upgrades the same TCP socket), then HTTP/1.1 by ALPN."),
	S = connect(Config, tls),
	ok = gen_tcp:send(S, v2(7777)),
	{ok, TLS} = ssl:connect(S, [{verify, verify_none}, {alpn_advertised_protocols, [<<"http/1.1">>]},
		{active, false}], 10000),
	ok = ssl:send(TLS, get_request()),
	Term = response_term(recv_all(ssl, TLS, <<>>)),
	?assertMatch(#{proxy_header := #{version := 2, src_port := 7777}, version := 'HTTP/1.1'}, Term).

v2_local(Config) ->
	doc("A v2 LOCAL header (a proxy's own connection, a health check) is accepted and its "
		"address block ignored. (PROXY protocol 2.2)"),
	S = connect(Config, clear),
	ok = gen_tcp:send(S, [mustang_proxy_header:header(#{version => 2, command => local}),
		get_request()]),
	?assertMatch(#{proxy_header := #{version := 2, command := local}, has_key := true},
		response_term(recv_all(S))).

malformed_v1(Config) ->
	doc("A malformed v1 header closes the connection, nothing sent, on the clear and the "
		"TLS listener (before any TLS byte); the next client is served. (PROXY protocol 2.1)"),
	[begin
		S = connect(Config, Listener),
		ok = gen_tcp:send(S, [Bad, get_request()]),
		assert_closed_silently(S)
	end || Listener <- [clear, tls], Bad <- [<<"PROXY TCP4 1.2.3.4 5.6.7.8 99999 1\r\n">>, <<"PROXY TCP4 1.2.3\r\n">>,
		<<"PROXY TCP4 1.2.3.4 5.6.7.8 1 2\n">>, <<"PROXY ", (binary:copy(<<"x">>, 200))/binary>>]],
	assert_next_served(Config).

truncated_v2(Config) ->
	doc("A v2 header cut short (the client stops writing) closes the connection; the next "
		"client is served. (PROXY protocol 2.2)"),
	Header = v2(1),
	S = connect(Config, clear),
	ok = gen_tcp:send(S, binary:part(Header, 0, byte_size(Header) - 3)),
	ok = gen_tcp:shutdown(S, write),
	assert_closed_silently(S),
	assert_next_served(Config).

oversized_v2(Config) ->
	doc("A v2 header that announces more than 4096 bytes is refused on its first 16 bytes. "
		"(Mustang proxy_header)"),
	S = connect(Config, clear),
	ok = gen_tcp:send(S, <<"\r\n\r\n\0\r\nQUIT\n", 16#21, 16#11, 65535:16>>),
	assert_closed_silently(S),
	assert_next_served(Config).

no_header(Config) ->
	doc("A client that speaks HTTP straight away to a proxy_header listener is closed "
		"without a response: only the proxy may connect."),
	S = connect(Config, clear),
	ok = gen_tcp:send(S, get_request()),
	assert_closed_silently(S),
	assert_next_served(Config).

slow_header_timeout(Config) ->
	doc("A header that does not arrive whole within proxy_header_timeout closes the "
		"connection; other clients are served meanwhile."),
	S = connect(Config, clear),
	ok = gen_tcp:send(S, <<"PROXY TCP4 ">>),
	T0 = erlang:monotonic_time(millisecond),
	assert_next_served(Config),
	?assertEqual({error, closed}, gen_tcp:recv(S, 0, 30000)),
	Elapsed = erlang:monotonic_time(millisecond) - T0,
	ct:log("closed after ~b ms (proxy_header_timeout ~b)", [Elapsed, ?TIMEOUT]),
	?assert(Elapsed >= ?TIMEOUT - 100),
	gen_tcp:close(S).

option_off(Config) ->
	doc("Without proxy_header a PROXY header is not HTTP: 400; the Req has no proxy_header "
		"and proxy_header/1 is undefined."),
	S = connect(Config, off),
	ok = gen_tcp:send(S, [v1(1), get_request()]),
	?assertMatch(<<"HTTP/1.1 400 ", _/binary>>, recv_all(S)),
	S2 = connect(Config, off),
	ok = gen_tcp:send(S2, get_request()),
	?assertMatch(#{proxy_header := undefined, has_key := false}, response_term(recv_all(S2))).
