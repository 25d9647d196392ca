%% HTTP/3 listeners (mustang:start_quic/3) against clients no one here
%% wrote: aioquic (Python: its own QUIC, TLS and QPACK), through
%% http3_SUITE_data/h3client.py, which also sends malformed frames.
%%
%% Groups:
%%   build   HTTP/3 is optional: without the NIF start_quic/3 says how to
%%           build it and the other listeners work; the build script never
%%           fails without cargo. These run whether the NIF is built or not.
%%   quic    the QUIC layer: handshake, listener functions, limits.
%%   h3      requests: aioquic, Chromium (headless, h3 forced on the
%%           listener's origin), Debian's ngtcp2 client (gtlsclient), and
%%           Websocket over HTTP/3 (RFC 9220) with aioquic.
%% The quic and h3 groups are skipped, saying why, when the NIF is not built.
-module(http3_SUITE).
-compile([export_all, nowarn_export_all]).

-include_lib("common_test/include/ct.hrl").
-include_lib("stdlib/include/assert.hrl").

-import(mustang_test, [doc/1, root/0, run/3, run/4, json/1, require_python/2, python/0]).

suite() ->
	[{timetrap, {seconds, 120}}].

all() ->
	[{group, build}, {group, quic}, {group, h3}].

groups() ->
	[
		{build, [], [no_nif_error, build_script_without_cargo, alt_svc_http1, alt_svc_http2]},
		{quic, [], [
			handshake_aioquic,
			listener_info,
			suspend_refuses_new_connections,
			stop_listener_closes_connections,
			max_connections_per_ip,
			retry_validates_address,
			amplification_limit,
			idle_timeout_closes,
			drain_goaway,
			set_tls_certificate_quic,
			unknown_transport_option
		]},
		{h3, [], [
			get_aioquic,
			post_body_aioquic,
			crash_500_connection_goes_on,
			malformed_request_stream_error,
			websocket_rfc9220_aioquic,
			chromium_h3,
			ngtcp2_client,
			huge_field_section_431,
			qpack_capacity_over_limit,
			reset_flood_closes_connection
		]}
	].

init_per_suite(Config) ->
	{ok, _} = application:ensure_all_started(mustang),
	[{suite, ?MODULE} | Config].

end_per_suite(_) ->
	ok.

init_per_group(h3, Config0) ->
	case init_per_group(quic, Config0) of
		Config when is_list(Config) ->
			Routes = [{'_', [{"/", hello_h, []}, {"/echo/:key", echo_h, []},
				{"/crash", crash_h, []}, {"/page", protocol_page_h, []},
				{"/ws", mustang_demo_ws_echo_h, []}]}],
			Port = start(h3_group, #{}, #{env => #{dispatch => mustang_router:compile(Routes)},
				enable_connect_protocol => true}),
			[{port, Port} | Config];
		Skip ->
			Skip
	end;
init_per_group(quic, Config) ->
	case mustang_quic:available() of
		true ->
			Python = require_python(python(), ["aioquic"]),
			[{python, Python} | Config];
		{false, Why} ->
			{skip, io_lib:format("the QUIC NIF is not built (~p): no cargo?", [Why])}
	end;
init_per_group(_, Config) ->
	Config.

end_per_group(h3, _) ->
	mustang:stop_listener(h3_group);
end_per_group(_, _) ->
	ok.

%% Helpers.

start(Ref, TransOpts, ProtoOpts) ->
	{ok, _} = mustang:start_quic(Ref, maps:merge(#{port => 0,
		socket_opts => mustang_demo:tls_opts()}, TransOpts), ProtoOpts),
	mustang:get_port(Ref).

%% Runs h3client.py: the JSON it prints, as a map.
h3client(Config, Port, Steps) ->
	h3client(Config, Port, Steps, 5).

h3client(Config, Port, Steps, Timeout) ->
	Script = filename:join(?config(data_dir, Config), "h3client.py"),
	{Status, Out} = run(?config(python, Config), [Script, integer_to_list(Port),
		json_encode(Steps), integer_to_list(Timeout)], (Timeout + 20) * 1000),
	ct:log("h3client.py: exit ~p~n~ts", [Status, Out]),
	0 = Status,
	Lines = binary:split(string:trim(Out), <<"\n">>, [global]),
	json(lists:last(Lines)).

json_encode(Term) ->
	iolist_to_binary(json_enc(Term)).

json_enc(M) when is_map(M) ->
	["{", lists:join(",", [[json_enc(atom_to_binary(K)), ":", json_enc(V)]
		|| {K, V} <- maps:to_list(M)]), "}"];
json_enc(L) when is_list(L) -> ["[", lists:join(",", [json_enc(V) || V <- L]), "]"];
json_enc(true) -> "true";
json_enc(false) -> "false";
json_enc(A) when is_atom(A) -> json_enc(atom_to_binary(A));
json_enc(N) when is_integer(N) -> integer_to_binary(N);
json_enc(B) when is_binary(B) ->
	["\"", [case C of
		$" -> "\\\"";
		$\\ -> "\\\\";
		_ when C < 32 -> io_lib:format("\\u~4.16.0b", [C]);
		_ -> C
	end || <<C>> <= B], "\""].

wait_count(Ref, N) ->
	mustang_test:wait_until(fun() ->
		maps:get(http3, maps:get(connections, mustang:info(Ref))) =:= N end, 5000).

%% build.

no_nif_error(_) ->
	doc("Without the QUIC NIF (MUSTANG_NO_QUIC set, as when cargo was missing), "
		"start_quic/3 returns {error, {http3_not_built, HowTo}} naming cargo, and "
		"start_clear/3 and start_tls/3 serve HTTP/1.1 and HTTP/2 as before."),
	Erl = os:find_executable("erl"),
	Ebin = filename:dirname(code:which(mustang)),
	DemoEbin = filename:dirname(code:which(mustang_demo)),
	Eval = "{ok, _} = application:ensure_all_started(mustang),"
		" {false, not_built} = mustang_quic:available(),"
		" {error, {http3_not_built, Why}} = mustang:start_quic(q, #{port => 0,"
		"   socket_opts => mustang_demo:tls_opts()}, #{}),"
		" true = string:find(Why, \"cargo\") =/= nomatch,"
		" {ok, _} = mustang:start_clear(c, #{port => 0}, #{}),"
		" {ok, _} = mustang:start_tls(t, #{port => 0, socket_opts => mustang_demo:tls_opts()}, #{}),"
		" {ok, S} = gen_tcp:connect({127,0,0,1}, mustang:get_port(c), [binary, {active, false}]),"
		" ok = gen_tcp:send(S, <<\"GET / HTTP/1.1\\r\\nhost: x\\r\\n\\r\\n\">>),"
		" {ok, <<\"HTTP/1.1 \", _/bits>>} = gen_tcp:recv(S, 0, 5000),"
		" io:format(\"NO_NIF_OK ~s~n\", [Why]), halt(0).",
	{Status, Out} = run(Erl, ["-noshell", "-pa", Ebin, "-pa", DemoEbin, "-eval", Eval], 60000,
		[{"MUSTANG_NO_QUIC", "1"}]),
	ct:log("~s", [Out]),
	0 = Status,
	{match, _} = re:run(Out, "NO_NIF_OK .*cargo"),
	ok.

build_script_without_cargo(Config) ->
	doc("scripts/build_quic.sh with no cargo anywhere exits 0 (the build goes on) "
		"and says that HTTP/3 is not built."),
	Priv = ?config(priv_dir, Config),
	%% A copy of the script in a tree without priv/mustang_quic.so.
	Dir = filename:join(Priv, "nocargo"),
	ok = filelib:ensure_path(filename:join(Dir, "scripts")),
	ok = filelib:ensure_path(filename:join([Dir, "native", "mustang_quic"])),
	{ok, _} = file:copy(filename:join(root(), "scripts/build_quic.sh"),
		filename:join(Dir, "scripts/build_quic.sh")),
	{ok, _} = file:copy(filename:join(root(), "native/mustang_quic/Cargo.toml"),
		filename:join(Dir, "native/mustang_quic/Cargo.toml")),
	{Status, Out} = run("/bin/sh", [filename:join(Dir, "scripts/build_quic.sh")], 30000,
		[{"PATH", "/usr/bin:/bin"}, {"HOME", Priv}, {"CARGO", false}]),
	ct:log("~s", [Out]),
	0 = Status,
	{match, _} = re:run(Out, "no cargo on PATH: HTTP/3 \\(QUIC NIF\\) not built"),
	false = filelib:is_regular(filename:join(Dir, "priv/mustang_quic.so")),
	ok.

alt_svc_http1(_) ->
	doc("The alt_svc protocol option adds its Alt-Svc field (RFC 7838) to every "
		"HTTP/1.1 response, inline and process mode."),
	[alt_svc(Mode, http1) || Mode <- [inline, process]],
	ok.

alt_svc_http2(_) ->
	doc("The alt_svc protocol option adds its Alt-Svc field to HTTP/2 responses."),
	alt_svc(process, h2c).

alt_svc(Mode, Transport) ->
	Ref = {alt_svc, Mode, Transport},
	AltSvc = <<"h3=\":8443\"; ma=86400">>,
	Port = mustang_test:start_listener(Ref, [{'_', [{"/", hello_h, []}]}], Mode,
		#{alt_svc => AltSvc}),
	try
		Config = [{port, Port}, {transport, Transport}, {mode, Mode}],
		#{status := 200, headers := Headers} = mustang_test:request(Config, "GET", "/", [], none),
		{_, AltSvc} = lists:keyfind(<<"alt-svc">>, 1, Headers)
	after
		mustang:stop_listener(Ref)
	end.

%% quic.

handshake_aioquic(Config) ->
	doc("aioquic completes a QUIC handshake with ALPN h3 (RFC 9114 3.1) and a PING; "
		"the connection process ends when the client closes."),
	Port = start(?FUNCTION_NAME, #{}, #{}),
	try
		#{<<"handshake">> := true, <<"alpn">> := <<"h3">>} =
			h3client(Config, Port, [#{op => ping}]),
		ok = wait_count(?FUNCTION_NAME, 0)
	after
		mustang:stop_listener(?FUNCTION_NAME)
	end.

listener_info(_) ->
	doc("info/1 and get_port/1 describe a QUIC listener: its UDP port, transport "
		"mustang_quic, HTTP/3 connections counted."),
	Port = start(?FUNCTION_NAME, #{}, #{}),
	try
		#{port := Port, transport := mustang_quic, status := running,
			connections := #{http3 := 0}, active_connections := 0} = mustang:info(?FUNCTION_NAME),
		true = Port > 0
	after
		mustang:stop_listener(?FUNCTION_NAME)
	end.

suspend_refuses_new_connections(Config) ->
	doc("suspend_listener/1 keeps the UDP socket (open connections go on) and "
		"refuses new connections (CONNECTION_REFUSED); resume_listener/1 takes them again."),
	Port = start(?FUNCTION_NAME, #{}, #{}),
	try
		ok = mustang:suspend_listener(?FUNCTION_NAME),
		suspended = mustang:get_status(?FUNCTION_NAME),
		#{<<"handshake">> := false} = h3client(Config, Port, [#{op => ping}], 3),
		ok = mustang:resume_listener(?FUNCTION_NAME),
		Port = mustang:get_port(?FUNCTION_NAME),
		#{<<"handshake">> := true} = h3client(Config, Port, [#{op => ping}])
	after
		mustang:stop_listener(?FUNCTION_NAME)
	end.

stop_listener_closes_connections(Config) ->
	doc("stop_listener/1 closes the open QUIC connections (the client sees the "
		"connection closed) and the UDP port."),
	Port = start(?FUNCTION_NAME, #{}, #{}),
	Self = self(),
	Client = spawn_link(fun() ->
		Self ! {client, h3client(Config, Port, [#{op => ping}, #{op => sleep, ms => 3000},
			#{op => ping}], 5)}
	end),
	ok = wait_count(?FUNCTION_NAME, 1),
	ok = mustang:stop_listener(?FUNCTION_NAME),
	receive
		{client, #{<<"closed">> := Closed}} -> true = Closed =/= null
	after 20000 ->
		exit(Client, kill),
		error(client_timeout)
	end,
	{ok, S} = gen_udp:open(Port, [{ip, {0, 0, 0, 0}}]),
	ok = gen_udp:close(S).

max_connections_per_ip(Config) ->
	doc("With max_connections_per_ip 1, a second connection from 127.0.0.1 is refused "
		"while the first is open."),
	Port = start(?FUNCTION_NAME, #{max_connections_per_ip => 1}, #{}),
	Self = self(),
	try
		spawn_link(fun() ->
			Self ! {first, h3client(Config, Port, [#{op => ping}, #{op => sleep, ms => 2500}])}
		end),
		ok = wait_count(?FUNCTION_NAME, 1),
		#{<<"handshake">> := false} = h3client(Config, Port, [#{op => ping}], 2),
		receive {first, #{<<"handshake">> := true}} -> ok after 20000 -> error(first) end
	after
		mustang:stop_listener(?FUNCTION_NAME)
	end.

retry_validates_address(Config) ->
	doc("With the retry transport option the handshake goes through a Retry "
		"(RFC 9000 8.1.2) and completes."),
	Port = start(?FUNCTION_NAME, #{retry => true}, #{}),
	try
		#{<<"handshake">> := true} = h3client(Config, Port, [#{op => ping}])
	after
		mustang:stop_listener(?FUNCTION_NAME)
	end.

amplification_limit(Config) ->
	doc("A client that sends one Initial and never answers gets at most three times "
		"the bytes it sent, retransmissions included (RFC 9000 8.1)."),
	Port = start(?FUNCTION_NAME, #{}, #{}),
	try
		Script = filename:join(?config(data_dir, Config), "amplification.py"),
		{0, Out} = run(?config(python, Config), [Script, integer_to_list(Port), "4"], 30000),
		ct:log("~s", [Out]),
		#{<<"sent">> := Sent, <<"received">> := Received} = json(Out),
		true = Sent >= 1200,
		true = Received > 0,
		true = Received =< 3 * Sent
	after
		mustang:stop_listener(?FUNCTION_NAME)
	end.

idle_timeout_closes(Config) ->
	doc("idle_timeout is QUIC's idle timeout: a connection with no traffic ends "
		"(RFC 9000 10.1) and its process with it."),
	Port = start(?FUNCTION_NAME, #{}, #{idle_timeout => 300}),
	Self = self(),
	try
		spawn_link(fun() ->
			Self ! {client, h3client(Config, Port, [#{op => ping}, #{op => sleep, ms => 2000}])}
		end),
		ok = wait_count(?FUNCTION_NAME, 1),
		T0 = erlang:monotonic_time(millisecond),
		ok = wait_count(?FUNCTION_NAME, 0),
		true = erlang:monotonic_time(millisecond) - T0 < 1900,
		receive {client, _} -> ok after 20000 -> error(client_timeout) end
	after
		mustang:stop_listener(?FUNCTION_NAME)
	end.

drain_goaway(Config) ->
	doc("drain/2 closes an idle HTTP/3 connection gracefully: GOAWAY (RFC 9114 5.2), "
		"then CONNECTION_CLOSE with H3_NO_ERROR; drain returns when it has ended."),
	Port = start(?FUNCTION_NAME, #{}, #{}),
	Self = self(),
	try
		spawn_link(fun() ->
			Self ! {client, h3client(Config, Port, [#{op => ping}, #{op => sleep, ms => 4000}],
				8)}
		end),
		ok = wait_count(?FUNCTION_NAME, 1),
		T0 = erlang:monotonic_time(millisecond),
		ok = mustang:drain(?FUNCTION_NAME, 10000),
		true = erlang:monotonic_time(millisecond) - T0 < 3500,
		receive
			{client, #{<<"closed">> := #{<<"error_code">> := 16#100}}} -> ok
		after 20000 ->
			error(client_timeout)
		end
	after
		mustang:stop_listener(?FUNCTION_NAME)
	end.

set_tls_certificate_quic(Config) ->
	doc("set_tls_certificate/2 on a QUIC listener: new connections get the new "
		"certificate; a key that does not match is refused."),
	Port = start(?FUNCTION_NAME, #{}, #{}),
	try
		New = mustang_demo:tls_opts(),
		ok = mustang:set_tls_certificate(?FUNCTION_NAME, New),
		#{<<"handshake">> := true} = h3client(Config, Port, [#{op => ping}]),
		{cert, Cert} = lists:keyfind(cert, 1, New),
		{key, OtherKey} = lists:keyfind(key, 1, mustang_demo:tls_opts()),
		{error, {invalid_certificate_options, _}} =
			mustang:set_tls_certificate(?FUNCTION_NAME, [{cert, Cert}, {key, OtherKey}])
	after
		mustang:stop_listener(?FUNCTION_NAME)
	end.

unknown_transport_option(_) ->
	doc("start_quic/3 refuses unknown transport options and a listener without a "
		"certificate, naming them."),
	{error, {unknown_transport_options, [nope]}} =
		mustang:start_quic(?FUNCTION_NAME, #{nope => 1, socket_opts => mustang_demo:tls_opts()}, #{}),
	{error, {invalid_transport_options, [tls_certificate]}} =
		mustang:start_quic(?FUNCTION_NAME, #{}, #{}),
	{error, {invalid_transport_options, [retry]}} =
		mustang:start_quic(?FUNCTION_NAME, #{retry => yes, socket_opts => mustang_demo:tls_opts()}, #{}).

%% h3.

response(#{<<"results">> := Results}, N) ->
	lists:nth(N, Results).

get_aioquic(Config) ->
	doc("aioquic GETs / over HTTP/3: 200 and the body (RFC 9114 4.1)."),
	R = h3client(Config, ?config(port, Config), [#{op => request, path => <<"/">>},
		#{op => request, path => <<"/echo/version">>}]),
	#{<<"status">> := 200, <<"body">> := <<"Hello world!">>} = response(R, 1),
	#{<<"status">> := 200, <<"body">> := <<"'HTTP/3'">>} = response(R, 2).

post_body_aioquic(Config) ->
	doc("A request body in several DATA frames is read whole by the handler."),
	R = h3client(Config, ?config(port, Config), [#{op => request, method => <<"POST">>,
		path => <<"/echo/read_body">>, parts => [<<"hello ">>, <<"world">>]}]),
	#{<<"status">> := 200, <<"body">> := <<"<<\"hello world\">>">>} = response(R, 1).

crash_500_connection_goes_on(Config) ->
	doc("A crashing handler gets its request a 500; the connection's next request is "
		"served."),
	R = h3client(Config, ?config(port, Config), [#{op => request, path => <<"/crash">>},
		#{op => request, path => <<"/">>}]),
	#{<<"status">> := 500} = response(R, 1),
	#{<<"status">> := 200} = response(R, 2),
	%% The client closed it (error 0), not the server.
	case maps:get(<<"closed">>, R) of
		null -> ok;
		#{<<"error_code">> := 0} -> ok
	end.

malformed_request_stream_error(Config) ->
	doc("A request without :path is malformed (RFC 9114 4.3.1): a stream error "
		"(H3_MESSAGE_ERROR) or a 400 on that stream, and the next request on the "
		"connection is served (RFC 9114 4.1.2)."),
	%% HEADERS (type 1, length 4): Required Insert Count 0, Base 0, then the
	%% static table's :method GET (17) and :scheme https (23), indexed.
	R = h3client(Config, ?config(port, Config), [
		#{op => raw, stream => <<"new">>, hex => <<"01040000d1d7">>, fin => true},
		#{op => request, path => <<"/">>}]),
	case response(R, 1) of
		#{<<"reset">> := 16#10e} -> ok;
		#{<<"body_hex">> := Hex} -> true = Hex =/= null
	end,
	#{<<"status">> := 200} = response(R, 2).

websocket_rfc9220_aioquic(Config) ->
	doc("Websocket over HTTP/3 (RFC 9220): extended CONNECT with :protocol websocket "
		"gets 200, text messages are echoed, the close handshake ends with 1000."),
	R = h3client(Config, ?config(port, Config), [#{op => ws, path => <<"/ws">>,
		messages => [<<"hello">>, <<"over h3">>]}]),
	#{<<"status">> := 200, <<"messages">> := [<<"hello">>, <<"over h3">>],
		<<"close">> := 1000} = response(R, 1).

chromium_h3(Config) ->
	doc("Headless Chromium, with QUIC forced on the listener's origin and the "
		"certificate's SPKI hash trusted, loads a page over HTTP/3 and reports its "
		"protocol as h3."),
	Chromium = case os:find_executable("chromium") of
		false -> ct:fail("chromium not found: run scripts/setup.sh");
		C -> C
	end,
	Port = integer_to_list(?config(port, Config)),
	Profile = filename:join(?config(priv_dir, Config), "chromium-profile"),
	{Status, Out} = run(Chromium, ["--headless", "--no-sandbox", "--disable-gpu",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--no-first-run", "--user-data-dir=" ++ Profile,
		"--origin-to-force-quic-on=127.0.0.1:" ++ Port,
		"--ignore-certificate-errors-spki-list=" ++ spki_hash(),
		"--dump-dom", "https://127.0.0.1:" ++ Port ++ "/page"], 60000),
	ct:log("~s", [Out]),
	0 = Status,
	{match, _} = re:run(Out, "protocol: h3").

spki_hash() ->
	#{socket_opts := SocketOpts} = mustang:get_transport_options(h3_group),
	{cert, Der} = lists:keyfind(cert, 1, SocketOpts),
	{'Certificate', TBS, _, _} = public_key:der_decode('Certificate', Der),
	Spki = public_key:der_encode('SubjectPublicKeyInfo', element(8, TBS)),
	base64:encode_to_string(crypto:hash(sha256, Spki)).

ngtcp2_client(Config) ->
	doc("Debian's ngtcp2 client (gtlsclient, ngtcp2 and nghttp3 over GnuTLS) GETs / "
		"over HTTP/3."),
	Client = case os:find_executable("gtlsclient") of
		false -> ct:fail("gtlsclient not found: run scripts/setup.sh (ngtcp2-client)");
		G -> G
	end,
	Port = integer_to_list(?config(port, Config)),
	{0, Out} = run(Client, ["--exit-on-all-streams-close", "127.0.0.1", Port,
		"https://127.0.0.1:" ++ Port ++ "/"], 30000),
	ct:log("~s", [Out]),
	{match, _} = re:run(Out, "\\[:status: 200\\]"),
	{match, _} = re:run(Out, "Hello world!").

huge_field_section_431(Config) ->
	doc("A request head larger than max_field_section_size (65536) gets a 431 "
		"(RFC 9114 4.2.2) and the connection goes on."),
	%% 20 fields of 4000 bytes (pylsqpack refuses one value that long).
	Big = [[<<"x-big-", (integer_to_binary(I))/binary>>, binary:copy(<<"x">>, 4000)]
		|| I <- lists:seq(1, 20)],
	R = h3client(Config, ?config(port, Config), [
		#{op => request, path => <<"/">>, headers => Big},
		#{op => request, path => <<"/">>}]),
	#{<<"status">> := 431} = response(R, 1),
	#{<<"status">> := 200} = response(R, 2).

qpack_capacity_over_limit(Config) ->
	doc("A Set Dynamic Table Capacity above our SETTINGS_QPACK_MAX_TABLE_CAPACITY "
		"(4096) on the client's encoder stream is a connection error "
		"QPACK_ENCODER_STREAM_ERROR (RFC 9204 4.3.1)."),
	%% 001xxxxx with a 5-bit prefix: 31 + 65505 = 65536.
	R = h3client(Config, ?config(port, Config), [
		#{op => encoder, hex => <<"3fe1ff03">>}, #{op => sleep, ms => 500}]),
	#{<<"closed">> := #{<<"error_code">> := 16#201}} = R.

reset_flood_closes_connection(Config) ->
	doc("Requests opened and reset faster than max_cancel_stream_rate end the "
		"connection with H3_EXCESSIVE_LOAD (RFC 9114 10.5); another connection "
		"is served meanwhile."),
	Ref = ?FUNCTION_NAME,
	Port = start(Ref, #{}, #{env => #{dispatch => mustang_router:compile(
		[{'_', [{"/", hello_h, []}]}])}, max_cancel_stream_rate => {20, 10000}}),
	try
		Self = self(),
		spawn_link(fun() ->
			Self ! {other, h3client(Config, Port, [#{op => sleep, ms => 500},
				#{op => request, path => <<"/">>}])}
		end),
		R = h3client(Config, Port, [#{op => reset_flood, n => 60}]),
		#{<<"closed">> := #{<<"error_code">> := 16#107}} = R,
		receive
			{other, Other} -> #{<<"status">> := 200} = response(Other, 2)
		after 20000 ->
			error(other_connection_timeout)
		end
	after
		mustang:stop_listener(Ref)
	end.
