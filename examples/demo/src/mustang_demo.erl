%% The demo server run by `make run`. Its routes and ports are a contract:
%% tests and benchmarks outside the repository use them.
%%
%%   GET  /           Hello world! (text/plain)
%%   POST /echo       the request body back, with the request's content-type
%%   POST /read_body  the body's length in bytes, as decimal text (read in chunks)
%%   GET  /sleep      sleeps 100 ms, then 1024 bytes
%%   GET  /stream     a chunked response in 5 parts
%%   /static/...      reserved for the static file handler
%%   /ws              Websocket echo (text and binary; permessage-deflate offered)
%%   GET  /chat       a chat page; its script talks to /ws/chat
%%   /ws/chat         Websocket broadcast chat, across the nodes of a cluster
%%                    (pg); the upgrade response's x-mustang-node header
%%                    names the node that serves the connection
%%   GET  /health     200 "ok": the health check of a load balancer
%%
%% Both listeners serve HTTP/1.1 and HTTP/2 (h2c on the clear port by prior
%% knowledge or Upgrade, h2 by ALPN on the TLS port), and Websocket over
%% HTTP/2 (RFC 8441, enable_connect_protocol).
%%
%% Environment: PORT (8080), TLS_PORT (8443), MUSTANG_REQUEST_PROCESS
%% (true|false), MUSTANG_MAX_KEEPALIVE (integer or infinity; default infinity),
%% TLS_CERTFILE and TLS_KEYFILE (a self-signed certificate is generated
%% at start when they are not set). For benchmarks: MUSTANG_ACTIVE_N,
%% MUSTANG_DYNAMIC_BUFFER ("false" or "Min,Max"), MUSTANG_HIBERNATE (true|false),
%% MUSTANG_HIBERNATE_AFTER (ms or infinity),
%% MUSTANG_STREAM_HANDLERS (comma-separated modules, e.g.
%% "mustang_compress_h,mustang_stream_h"),
%% MUSTANG_SOCKET_BUFFER (bytes: the listeners' socket_opts get {buffer, N},
%% which bounds each socket read to N bytes and turns the dynamic buffer off).
-module(mustang_demo).

-export([start/0]).
-export([start/1]).
-export([routes/0]).
-export([protocol_opts/1]).
-export([tls_opts/0]).

-spec start() -> ok.
start() ->
	{ok, _} = start(#{
		port => env_int("PORT", 8080),
		tls_port => env_int("TLS_PORT", 8443),
		request_process => os:getenv("MUSTANG_REQUEST_PROCESS") =:= "true",
		max_keepalive => env_int("MUSTANG_MAX_KEEPALIVE", infinity),
		tuning => tuning_from_env(),
		socket_opts => socket_opts_from_env()
	}),
	ok.

-spec start(map()) -> {ok, {pid(), pid()}} | {error, any()}.
start(Config = #{port := Port, tls_port := TLSPort}) ->
	{ok, _} = application:ensure_all_started(mustang),
	%% The chat's process group scope: on every node of a cluster, so that
	%% a message reaches the members on all of them.
	_ = case pg:start(mustang_demo) of
		{ok, _} -> ok;
		{error, {already_started, _}} -> ok
	end,
	ProtoOpts = protocol_opts(Config),
	SocketOpts = maps:get(socket_opts, Config, []),
	TlsOpts = tls_opts(),
	%% HTTP/3 on the same port number over UDP, when Mustang was built with
	%% its QUIC NIF (cargo); the HTTPS listener advertises it (RFC 7838).
	H3 = mustang_quic:available() =:= true andalso TLSPort =/= 0,
	TlsProtoOpts = case H3 of
		true -> ProtoOpts#{alt_svc => iolist_to_binary(
			[<<"h3=\":">>, integer_to_binary(TLSPort), <<"\"; ma=86400">>])};
		false -> ProtoOpts
	end,
	case mustang:start_clear(demo_http, #{port => Port, socket_opts => SocketOpts}, ProtoOpts) of
		{ok, Clear} ->
			case mustang:start_tls(demo_https, #{port => TLSPort, socket_opts => SocketOpts ++ TlsOpts},
					TlsProtoOpts) of
				{ok, TLS} ->
					Mode = case maps:get(request_process, ProtoOpts) of
						true -> "process per request";
						false -> "inline"
					end,
					logger:notice("Mustang demo listening on http://localhost:~b/ (~s)",
						[mustang:get_port(demo_http), Mode]),
					logger:notice("Mustang demo listening on https://localhost:~b/ (~s)",
						[mustang:get_port(demo_https), Mode]),
					_ = H3 andalso start_h3(TLSPort, TlsOpts, ProtoOpts),
					{ok, {Clear, TLS}};
				Error ->
					Error
			end;
		Error ->
			Error
	end.

start_h3(Port, TlsOpts, ProtoOpts) ->
	case mustang:start_quic(demo_h3, #{port => Port, socket_opts => TlsOpts}, ProtoOpts) of
		{ok, _} ->
			logger:notice("Mustang demo listening on https://localhost:~b/ over HTTP/3 (UDP)",
				[Port]);
		{error, Reason} ->
			logger:warning("Mustang demo: no HTTP/3 listener: ~0p", [Reason])
	end.

-spec routes() -> mustang_router:routes().
routes() ->
	[{'_', [
		{"/", mustang_demo_hello_h, []},
		{"/echo", mustang_demo_echo_h, []},
		{"/read_body", mustang_demo_read_body_h, []},
		{"/sleep", mustang_demo_sleep_h, []},
		{"/stream", mustang_demo_stream_h, []},
		{"/ws", mustang_demo_ws_echo_h, []},
		{"/chat", mustang_demo_chat_page_h, []},
		{"/ws/chat", mustang_demo_chat_h, []},
		{"/health", mustang_demo_health_h, []}
	]}].

-spec protocol_opts(map()) -> map().
protocol_opts(Config) ->
	maps:merge(#{
		env => #{dispatch => mustang_router:compile(routes())},
		request_process => maps:get(request_process, Config, false),
		enable_connect_protocol => true,
		max_keepalive => maps:get(max_keepalive, Config, 1000)
	}, maps:get(tuning, Config, #{})).

%% Protocol options a benchmark may vary without editing code.
tuning_from_env() ->
	Opts = [
		{active_n, "MUSTANG_ACTIVE_N", fun list_to_integer/1},
		{adaptive_active, "MUSTANG_ADAPTIVE_ACTIVE", fun list_to_atom/1},
		{dynamic_buffer, "MUSTANG_DYNAMIC_BUFFER", fun
			("false") -> false;
			(MinMax) ->
				[Min, Max] = string:split(MinMax, ","),
				{list_to_integer(Min), list_to_integer(Max)}
		end},
		{hibernate, "MUSTANG_HIBERNATE", fun list_to_atom/1},
		{hibernate_after, "MUSTANG_HIBERNATE_AFTER", fun
			("infinity") -> infinity;
			(Ms) -> list_to_integer(Ms)
		end},
		{stream_handlers, "MUSTANG_STREAM_HANDLERS", fun(Mods) ->
			[list_to_atom(M) || M <- string:lexemes(Mods, ",")]
		end}
	],
	Tuning = maps:from_list([{Key, Parse(Value)} || {Key, Var, Parse} <- Opts, (Value = os:getenv(Var)) =/= false]),
	maps:merge(Tuning, options_from_env()).

%% MUSTANG_OPTIONS: any protocol options, as an Erlang map term, for
%% benchmarks that vary an option without a variable of its own, e.g.
%% MUSTANG_OPTIONS='#{initial_stream_window_size => 1048576}'; merged over
%% the other variables' options. mustang:start_clear/3 checks them.
options_from_env() ->
	case os:getenv("MUSTANG_OPTIONS") of
		Unset when Unset =:= false; Unset =:= "" ->
			#{};
		Text ->
			Parsed = case erl_scan:string(Text ++ ".") of
				{ok, Tokens, _} -> erl_parse:parse_term(Tokens);
				Error -> Error
			end,
			case Parsed of
				{ok, Options} when is_map(Options) -> Options;
				_ -> error({bad_env, "MUSTANG_OPTIONS", Text, "an Erlang map is expected, e.g. #{active_n => 10}"})
			end
	end.

%% Listener socket options a benchmark may vary: MUSTANG_SOCKET_BUFFER=N
%% bounds each socket read to N bytes (see bench/h2_linear.sh).
socket_opts_from_env() ->
	case os:getenv("MUSTANG_SOCKET_BUFFER") of
		false -> [];
		Value -> [{buffer, list_to_integer(Value)}]
	end.

-spec tls_opts() -> [any()].
tls_opts() ->
	case {os:getenv("TLS_CERTFILE"), os:getenv("TLS_KEYFILE")} of
		{Cert, Key} when is_list(Cert), is_list(Key) ->
			[{certfile, Cert}, {keyfile, Key}];
		_ ->
			self_signed()
	end.

%% A certificate for localhost made at start with OTP's public_key: no
%% files, no openssl. Self-signed, marked basicConstraints CA:FALSE, and
%% its ECDSA signature algorithm has no parameters (RFC 5758 3.2): QUIC
%% clients (rustls, aioquic, Chromium over HTTP/3) refuse a certificate
%% that breaks either rule, which pkix_test_data's does.
self_signed() ->
	Key = public_key:generate_key({namedCurve, secp256r1}),
	SAN = {'Extension', {2, 5, 29, 17}, false, [{dNSName, "localhost"}, {iPAddress, <<127, 0, 0, 1>>}]},
	#{server_config := ServerConfig} = public_key:pkix_test_data(#{
		server_chain => #{root => [{key, Key}, {digest, sha256}],
			peer => [{key, Key}, {digest, sha256}, {extensions, [SAN]}]},
		client_chain => #{root => [{key, Key}], peer => [{key, Key}]}
	}),
	{cert, Der} = lists:keyfind(cert, 1, ServerConfig),
	{'OTPCertificate', TBS, _, _} = public_key:pkix_decode_cert(Der, otp),
	%% OTPTBSCertificate: 4 signature, 5 issuer, 7 subject, 11 extensions.
	NoParams = {'SignatureAlgorithm', {1, 2, 840, 10045, 4, 3, 2}, asn1_NOVALUE},
	NotCA = {'Extension', {2, 5, 29, 19}, true, {'BasicConstraints', false, asn1_NOVALUE}},
	TBS2 = setelement(11, setelement(5, setelement(4, TBS, NoParams), element(7, TBS)),
		element(11, TBS) ++ [NotCA]),
	[{cert, public_key:pkix_sign(TBS2, Key)} | [Opt || Opt = {key, _} <- ServerConfig]].

env_int(Name, Default) ->
	case os:getenv(Name) of
		false -> Default;
		"infinity" -> infinity;
		Value -> list_to_integer(Value)
	end.
