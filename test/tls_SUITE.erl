%% TLS listeners (issue 12, point 4): the safe defaults of mustang_tls
%% (TLS 1.2 and 1.3 only, ECDHE + AEAD suites, no client renegotiation) and
%% how the user replaces them, certificate rotation under load
%% (mustang:set_tls_certificate/2), SNI with several certificates, and
%% client certificates through mustang_req:cert/1 over HTTP/1.1 (both
%% execution modes) and h2. Certificates are made here with public_key (one
%% root and one peer certificate per name, ECDSA P-256), clients are OTP's
%% ssl and curl.
-module(tls_SUITE).
-compile([export_all, nowarn_export_all]).

-include_lib("common_test/include/ct.hrl").
-include_lib("stdlib/include/assert.hrl").

-import(mustang_test, [doc/1]).

all() ->
	[tls12_and_tls13_accepted, tls11_refused, weak_cipher_refused, renegotiation_refused,
		user_options_replace_defaults, rotation_errors, rotation_under_load, sni_hosts,
		sni_fun, client_cert_http1_inline, client_cert_http1_process, client_cert_h2,
		client_cert_required].

init_per_suite(Config) ->
	{ok, _} = application:ensure_all_started(mustang),
	Config.

end_per_suite(_) ->
	ok.

end_per_testcase(Name, _) ->
	_ = mustang:stop_listener(Name),
	_ = mustang:stop_listener({Name, 2}),
	ok.

dispatch() ->
	mustang_router:compile([{'_', [
		{"/", hello_h, []},
		{"/cert", cert_h, []}
	]}]).

start(Name, SocketOpts) ->
	start(Name, SocketOpts, #{}).

start(Name, SocketOpts, ProtoOpts) ->
	{ok, _} = mustang:start_tls(Name, #{port => 0, socket_opts => SocketOpts},
		ProtoOpts#{env => #{dispatch => dispatch()}}),
	mustang:get_port(Name).

%% Certificates.

%% A server certificate for the DNS name Name (signed by a root of its
%% own) and a client certificate, each with the key and the root the other
%% side needs to verify it: #{server => SslOpts, client => SslOpts}
%% (cert, key, cacerts).
certs(Name) ->
	Key = public_key:generate_key({namedCurve, secp256r1}),
	SAN = {'Extension', {2, 5, 29, 17}, false, [{dNSName, Name}]},
	#{server_config := Server, client_config := Client} = public_key:pkix_test_data(#{
		server_chain => #{root => [{key, Key}, {digest, sha256}],
			peer => [{key, Key}, {digest, sha256}, {extensions, [SAN]}]},
		client_chain => #{root => [{key, Key}, {digest, sha256}],
			peer => [{key, Key}, {digest, sha256}]}
	}),
	Keep = fun(Opts) -> [O || O = {K, _} <- Opts, lists:member(K, [cert, key, cacerts])] end,
	#{server => Keep(Server), client => Keep(Client)}.

server_cert(Certs) ->
	proplists:get_value(cert, maps:get(server, Certs)).

client_cert(Certs) ->
	proplists:get_value(cert, maps:get(client, Certs)).

%% Clients.

%% No session resumption (TLS 1.2): each connection makes a full handshake
%% and gets the server's current certificate. (ssl refuses reuse_sessions
%% with TLS 1.3 alone.)
connect(Port, Opts) ->
	Reuse = case proplists:get_value(versions, Opts) of
		['tlsv1.3'] -> [];
		_ -> [{reuse_sessions, false}]
	end,
	ssl:connect("localhost", Port, [binary, {active, false}, {verify, verify_none}
		| Reuse ++ Opts], 5000).

%% One HTTP/1.1 request on an open TLS connection: {Status, Body}.
get(S, Path) ->
	ok = ssl:send(S, ["GET ", Path, " HTTP/1.1\r\nhost: localhost\r\n\r\n"]),
	read_response(S, <<>>).

read_response(S, Buffer) ->
	case binary:split(Buffer, <<"\r\n\r\n">>) of
		[Head, Rest] ->
			{match, [Status]} = re:run(Head, "^HTTP/1.1 ([0-9]{3})", [{capture, all_but_first,
				binary}]),
			{match, [Length]} = re:run(Head, "content-length: *([0-9]+)",
				[caseless, {capture, all_but_first, binary}]),
			Body = read_exact(S, Rest, binary_to_integer(Length)),
			{binary_to_integer(Status), Body, Head};
		[_] ->
			{ok, Data} = ssl:recv(S, 0, 5000),
			read_response(S, <<Buffer/binary, Data/binary>>)
	end.

read_exact(_, Buffer, Length) when byte_size(Buffer) >= Length ->
	binary:part(Buffer, 0, Length);
read_exact(S, Buffer, Length) ->
	{ok, Data} = ssl:recv(S, 0, 5000),
	read_exact(S, <<Buffer/binary, Data/binary>>, Length).

%% The TLS version curl negotiated (curl -v: "SSL connection using TLSv1.x")
%% and the body it got.
curl(Port, Args) ->
	Curl = mustang_test:tool("curl", "CURL", []),
	mustang_test:run(Curl, ["-sk", "-v", "--max-time", "10" | Args]
		++ ["https://127.0.0.1:" ++ integer_to_list(Port) ++ "/"], 15000).

%% Tests: defaults.

tls12_and_tls13_accepted(_) ->
	doc("curl connects with TLS 1.2 and with TLS 1.3 and gets its response; the "
		"suite of TLS 1.2 is one of Mustang's (ECDHE, AEAD)."),
	Port = start(?FUNCTION_NAME, maps:get(server, certs("localhost"))),
	{0, Out12} = curl(Port, ["--tlsv1.2", "--tls-max", "1.2"]),
	{match, [Suite]} = re:run(Out12, "SSL connection using TLSv1.2 / ([A-Z0-9-]+)",
		[{capture, all_but_first, list}]),
	?assert(lists:member(Suite, [ssl:suite_to_openssl_str(S) || S <- mustang_tls:safe_ciphers()]),
		Suite),
	{match, _} = re:run(Out12, "Hello world!$"),
	{0, Out13} = curl(Port, ["--tlsv1.3"]),
	{match, _} = re:run(Out13, "SSL connection using TLSv1.3"),
	{match, _} = re:run(Out13, "Hello world!$"),
	%% OTP's client too, with each version.
	[begin
		{ok, S} = connect(Port, [{versions, [V]}]),
		{ok, [{protocol, V}]} = ssl:connection_information(S, [protocol]),
		{200, <<"Hello world!">>, _} = get(S, "/"),
		ssl:close(S)
	end || V <- ['tlsv1.2', 'tlsv1.3']],
	ok.

tls11_refused(_) ->
	doc("A TLS 1.1 client gets a protocol_version alert; the listener keeps serving."),
	Port = start(?FUNCTION_NAME, maps:get(server, certs("localhost"))),
	{error, {tls_alert, {protocol_version, _}}} = connect(Port, [{versions, ['tlsv1.1']}]),
	{0, Out} = curl(Port, []),
	{match, _} = re:run(Out, "Hello world!$"),
	ok.

weak_cipher_refused(_) ->
	doc("A TLS 1.2 client offering only suites outside Mustang's defaults (CBC with "
		"SHA-1 MAC, CBC with SHA-256, all with ECDHE: suites OTP's own default list "
		"has) gets an insufficient_security alert; one offering an ECDHE AEAD suite is served."),
	Port = start(?FUNCTION_NAME, maps:get(server, certs("localhost"))),
	Weak = [Suite || Suite <- ssl:cipher_suites(default, 'tlsv1.2'),
		lists:member(ssl:suite_to_openssl_str(Suite),
			["ECDHE-ECDSA-AES128-SHA", "ECDHE-ECDSA-AES256-SHA", "ECDHE-ECDSA-AES128-SHA256"])],
	?assertEqual(3, length(Weak)),
	[{error, {tls_alert, {insufficient_security, _}}} =
		connect(Port, [{versions, ['tlsv1.2']}, {ciphers, [W]}]) || W <- Weak],
	Strong = ssl:filter_cipher_suites(ssl:cipher_suites(default, 'tlsv1.2'),
		[{cipher, fun(C) -> C =:= chacha20_poly1305 end},
			{key_exchange, fun(K) -> K =:= ecdhe_ecdsa end}]),
	{ok, S} = connect(Port, [{versions, ['tlsv1.2']}, {ciphers, Strong}]),
	{200, <<"Hello world!">>, _} = get(S, "/"),
	ssl:close(S),
	ok.

renegotiation_refused(_) ->
	doc("A TLS 1.2 client asking to renegotiate is refused (no_renegotiation); the "
		"connection goes on serving requests."),
	Port = start(?FUNCTION_NAME, maps:get(server, certs("localhost"))),
	{ok, S} = connect(Port, [{versions, ['tlsv1.2']}]),
	{200, <<"Hello world!">>, _} = get(S, "/"),
	{error, renegotiation_rejected} = ssl:renegotiate(S),
	{200, <<"Hello world!">>, _} = get(S, "/"),
	ssl:close(S),
	ok.

user_options_replace_defaults(_) ->
	doc("A socket option the user gives replaces Mustang's default of the same key: "
		"versions TLS 1.3 only refuses TLS 1.2; ciphers with a CBC suite accepts it; "
		"client_renegotiation true lets a TLS 1.2 client renegotiate."),
	Server = maps:get(server, certs("localhost")),
	Port = start(?FUNCTION_NAME, [{versions, ['tlsv1.3']} | Server]),
	{error, {tls_alert, {protocol_version, _}}} = connect(Port, [{versions, ['tlsv1.2']}]),
	{ok, S13} = connect(Port, []),
	{200, _, _} = get(S13, "/"),
	ssl:close(S13),
	[Cbc] = [Suite || Suite <- ssl:cipher_suites(default, 'tlsv1.2'),
		ssl:suite_to_openssl_str(Suite) =:= "ECDHE-ECDSA-AES128-SHA256"],
	Port2 = start({?FUNCTION_NAME, 2}, [{ciphers, [Cbc]}, {client_renegotiation, true} | Server]),
	{ok, S} = connect(Port2, [{versions, ['tlsv1.2']}, {ciphers, [Cbc]}]),
	{ok, [{selected_cipher_suite, Selected}]} =
		ssl:connection_information(S, [selected_cipher_suite]),
	"ECDHE-ECDSA-AES128-SHA256" = ssl:suite_to_openssl_str(Selected),
	ok = ssl:renegotiate(S),
	{200, <<"Hello world!">>, _} = get(S, "/"),
	ssl:close(S),
	ok.

%% Tests: certificate rotation.

rotation_errors(Config) ->
	doc("set_tls_certificate/2 refuses an unknown listener, a clear one, an option "
		"that is not a certificate option, a certificate file that does not exist and one "
		"that holds no PEM; "
		"the listener keeps its certificate."),
	Certs = certs("localhost"),
	Port = start(?FUNCTION_NAME, maps:get(server, Certs)),
	{error, not_found} = mustang:set_tls_certificate(nope, maps:get(server, Certs)),
	{ok, _} = mustang:start_clear({?FUNCTION_NAME, 2}, #{port => 0}, #{}),
	{error, not_tls} = mustang:set_tls_certificate({?FUNCTION_NAME, 2}, maps:get(server, Certs)),
	{error, {invalid_certificate_options, [{verify, verify_peer}]}} =
		mustang:set_tls_certificate(?FUNCTION_NAME, [{verify, verify_peer}]),
	{error, {invalid_certificate_options, []}} = mustang:set_tls_certificate(?FUNCTION_NAME, []),
	{error, {invalid_certificate_options, {certfile, "/nonexistent/cert.pem", enoent}}} =
		mustang:set_tls_certificate(?FUNCTION_NAME,
			[{certfile, "/nonexistent/cert.pem"}, {keyfile, "/nonexistent/key.pem"}]),
	NotPem = filename:join(?config(priv_dir, Config), "not.pem"),
	ok = file:write_file(NotPem, <<"not a certificate">>),
	{error, {invalid_certificate_options, {certfile, NotPem, no_pem_entries}}} =
		mustang:set_tls_certificate(?FUNCTION_NAME, [{certfile, NotPem}, {keyfile, NotPem}]),
	{ok, S} = connect(Port, []),
	?assertEqual({ok, server_cert(Certs)}, ssl:peercert(S)),
	ssl:close(S),
	ok.

rotation_under_load(Config) ->
	doc("Clients handshake without pause (TLS 1.2 and 1.3, a request on each "
		"connection) while the certificate is rotated twice, A -> B -> A, the second "
		"time from PEM files: no handshake fails, every handshake started after a "
		"rotation returned sees the new certificate, and connections opened before each "
		"rotation keep their certificate and keep serving."),
	A = certs("localhost"),
	B = certs("localhost"),
	CertA = server_cert(A),
	CertB = server_cert(B),
	Port = start(?FUNCTION_NAME, maps:get(server, A)),
	{ok, OldA} = connect(Port, []),
	{200, _, _} = get(OldA, "/"),
	Workers = [spawn_link(fun() -> handshake_loop(Port, V, []) end)
		|| V <- lists:append(lists:duplicate(3, ['tlsv1.2', 'tlsv1.3']))],
	timer:sleep(1500),
	T1 = erlang:monotonic_time(microsecond),
	ok = mustang:set_tls_certificate(?FUNCTION_NAME, maps:get(server, B)),
	T1Done = erlang:monotonic_time(microsecond),
	{ok, OldB} = connect(Port, []),
	?assertEqual({ok, CertB}, ssl:peercert(OldB)),
	?assertEqual({ok, CertA}, ssl:peercert(OldA)),
	{200, _, _} = get(OldA, "/"),
	timer:sleep(1500),
	%% Back to A, from files this time.
	T2 = erlang:monotonic_time(microsecond),
	ok = mustang:set_tls_certificate(?FUNCTION_NAME, pem_files(?config(priv_dir, Config), A)),
	T2Done = erlang:monotonic_time(microsecond),
	timer:sleep(1500),
	Results = lists:append([begin
		W ! {stop, self()},
		receive {W, R} -> R after 30000 -> ct:fail({worker_stuck, W}) end
	end || W <- Workers]),
	%% The connections opened before each rotation.
	?assertEqual({ok, CertA}, ssl:peercert(OldA)),
	?assertEqual({ok, CertB}, ssl:peercert(OldB)),
	{200, <<"Hello world!">>, _} = get(OldA, "/"),
	{200, <<"Hello world!">>, _} = get(OldB, "/"),
	ssl:close(OldA),
	ssl:close(OldB),
	Failed = [R || R = {_, _, _, {error, _}} <- Results],
	Phase = fun(Start) when Start < T1 -> before; (Start) when Start < T2 -> between;
		(_) -> 'after' end,
	Count = fun(P) -> length([x || {Start, _, _, _} <- Results, Phase(Start) =:= P]) end,
	%% Ended before a rotation: the certificate then; started after the call
	%% returned: the new one; across a rotation: either.
	Expected = fun
		(_, End) when End < T1 -> [CertA];
		(Start, End) when Start >= T1Done, End < T2 -> [CertB];
		(Start, _) when Start >= T2Done -> [CertA];
		(_, _) -> [CertA, CertB]
	end,
	WrongCert = [R || R = {Start, End, _, {ok, Cert}} <- Results,
		not lists:member(Cert, Expected(Start, End))],
	Summary = io_lib:format("rotation under load: ~b handshakes (~b before the first rotation, "
		"~b between, ~b after the second), ~b failed, ~b with the wrong certificate",
		[length(Results), Count(before), Count(between), Count('after'), length(Failed),
			length(WrongCert)]),
	ct:log("~ts~nFailed: ~p~nWrong: ~p", [Summary, Failed, WrongCert]),
	ct:comment("~ts", [Summary]),
	?assertEqual([], Failed),
	?assertEqual([], WrongCert),
	[?assert(Count(P) >= 20, {too_few_handshakes, P, Count(P)}) || P <- [before, between, 'after']],
	ok.

%% Handshakes one after the other until told to stop, each recorded as
%% {StartMicroseconds, EndMicroseconds, Version,
%% {ok, ServerCertDer} | {error, Reason}}
%% (a request is made on each connection).
handshake_loop(Port, Version, Acc) ->
	receive
		{stop, From} -> From ! {self(), Acc}
	after 0 ->
		Start = erlang:monotonic_time(microsecond),
		Result = try connect(Port, [{versions, [Version]}]) of
			{ok, S} ->
				try
					{ok, Cert} = ssl:peercert(S),
					{200, <<"Hello world!">>, _} = get(S, "/"),
					{ok, Cert}
				catch Class:Reason ->
					{error, {Class, Reason}}
				after
					ssl:close(S)
				end;
			Error ->
				Error
		catch Class:Reason ->
			{error, {Class, Reason}}
		end,
		End = erlang:monotonic_time(microsecond),
		handshake_loop(Port, Version, [{Start, End, Version, Result} | Acc])
	end.

%% The server certificate and key of Certs in PEM files (certfile, keyfile).
pem_files(Dir, Certs) ->
	Server = maps:get(server, Certs),
	{KeyType, KeyDer} = proplists:get_value(key, Server),
	CertFile = filename:join(Dir, "cert.pem"),
	KeyFile = filename:join(Dir, "key.pem"),
	ok = file:write_file(CertFile,
		public_key:pem_encode([{'Certificate', proplists:get_value(cert, Server), not_encrypted}])),
	ok = file:write_file(KeyFile, public_key:pem_encode([{KeyType, KeyDer, not_encrypted}])),
	[{certfile, CertFile}, {keyfile, KeyFile}].

%% Tests: SNI.

sni_hosts(_) ->
	doc("sni_hosts: each of two names gets its certificate, a client without SNI the "
		"default one; ALPN offers h2 to both names and the safe defaults apply to them "
		"(TLS 1.1 refused for a name)."),
	Default = certs("localhost"),
	One = certs("one.example"),
	Two = certs("two.example"),
	Port = start(?FUNCTION_NAME, maps:get(server, Default) ++ [{sni_hosts, [
		{"one.example", maps:get(server, One)},
		{"two.example", maps:get(server, Two)}]}]),
	sni_checks(Port, Default, One, Two).

sni_fun(_) ->
	doc("sni_fun: the same checks as sni_hosts with a function choosing the certificate."),
	Default = certs("localhost"),
	One = certs("one.example"),
	Two = certs("two.example"),
	Fun = fun("one.example") -> maps:get(server, One);
		("two.example") -> maps:get(server, Two);
		(_) -> [] end,
	Port = start(?FUNCTION_NAME, maps:get(server, Default) ++ [{sni_fun, Fun}]),
	sni_checks(Port, Default, One, Two).

sni_checks(Port, Default, One, Two) ->
	[begin
		{ok, S} = connect(Port, [{server_name_indication, Name}]),
		?assertEqual({ok, server_cert(Certs)}, ssl:peercert(S)),
		{200, <<"Hello world!">>, _} = get(S, "/"),
		ssl:close(S),
		{ok, Pid} = mustang_h2_client:connect(tls, "127.0.0.1", Port,
			#{tls_opts => [{server_name_indication, Name}]}),
		{ok, StreamID} = mustang_h2_client:request(Pid, <<"GET">>, "/", [], none),
		{ok, #{status := 200, body := <<"Hello world!">>}} =
			mustang_h2_client:await(Pid, StreamID, 5000),
		mustang_h2_client:close(Pid),
		{error, {tls_alert, {protocol_version, _}}} =
			connect(Port, [{server_name_indication, Name}, {versions, ['tlsv1.1']}])
	end || {Name, Certs} <- [{"one.example", One}, {"two.example", Two}]],
	{ok, S} = connect(Port, [{server_name_indication, disable}]),
	?assertEqual({ok, server_cert(Default)}, ssl:peercert(S)),
	ssl:close(S),
	ok.

%% Tests: client certificates.

client_cert_http1_inline(_) ->
	doc("HTTP/1.1, handler in the connection process: mustang_req:cert/1 is the DER "
		"client certificate, or undefined for a client that sent none."),
	client_cert_http1(?FUNCTION_NAME, false, <<"inline">>).

client_cert_http1_process(_) ->
	doc("HTTP/1.1, handler in a process of its own: as client_cert_http1_inline."),
	client_cert_http1(?FUNCTION_NAME, true, <<"process">>).

client_cert_http1(Name, RequestProcess, Mode) ->
	Certs = certs("localhost"),
	Port = start(Name, client_cert_opts(Certs, false), #{request_process => RequestProcess}),
	Alpn = [{alpn_advertised_protocols, [<<"http/1.1">>]}],
	{ok, S} = connect(Port, Alpn ++ client_opts(Certs)),
	{200, Body, Head} = get(S, "/cert"),
	?assertEqual(client_cert(Certs), Body),
	{match, _} = re:run(Head, <<"x-mode: ", Mode/binary>>),
	ssl:close(S),
	{ok, S2} = connect(Port, Alpn),
	{200, <<"undefined">>, _} = get(S2, "/cert"),
	ssl:close(S2),
	ok.

client_cert_h2(_) ->
	doc("HTTP/2 over TLS: mustang_req:cert/1 is the DER client certificate, or "
		"undefined for a client that sent none."),
	Certs = certs("localhost"),
	Port = start(?FUNCTION_NAME, client_cert_opts(Certs, false)),
	[begin
		{ok, Pid} = mustang_h2_client:connect(tls, "127.0.0.1", Port, #{tls_opts => TLSOpts}),
		{ok, StreamID} = mustang_h2_client:request(Pid, <<"GET">>, "/cert", [], none),
		{ok, #{status := 200, body := Body}} = mustang_h2_client:await(Pid, StreamID, 5000),
		?assertEqual(Expected, Body),
		mustang_h2_client:close(Pid)
	end || {TLSOpts, Expected} <- [{client_opts(Certs), client_cert(Certs)},
		{[], <<"undefined">>}]],
	ok.

client_cert_required(_) ->
	doc("fail_if_no_peer_cert: a client without a certificate is refused at the "
		"handshake, one with a certificate the server's roots do not sign too, one with "
		"a good certificate is served."),
	Certs = certs("localhost"),
	Port = start(?FUNCTION_NAME, client_cert_opts(Certs, true)),
	{error, _} = connect_and_get(Port, []),
	{error, _} = connect_and_get(Port, client_opts(certs("localhost"))),
	{ok, S} = connect(Port, client_opts(Certs)),
	{200, Body, _} = get(S, "/cert"),
	?assertEqual(client_cert(Certs), Body),
	ssl:close(S),
	ok.

%% With TLS 1.3 the client learns that its certificate was refused after its
%% handshake finished: at its first read.
connect_and_get(Port, Opts) ->
	case connect(Port, Opts) of
		{ok, S} ->
			_ = ssl:send(S, "GET /cert HTTP/1.1\r\nhost: localhost\r\n\r\n"),
			Result = ssl:recv(S, 0, 5000),
			ssl:close(S),
			case Result of
				{ok, Data} -> {ok, Data};
				Error -> Error
			end;
		Error ->
			Error
	end.

client_cert_opts(Certs, Required) ->
	maps:get(server, Certs) ++ [{verify, verify_peer}, {fail_if_no_peer_cert, Required}].

client_opts(Certs) ->
	[O || O = {K, _} <- maps:get(client, Certs), K =/= cacerts].
