%% Soak: long mixed load from real clients, then the server must be back
%% where it started. The listeners run in this CT node (so that it can be
%% measured) with the demo's routes (mustang_demo:routes/0) plus /crash
%% (crash_h), on port 0: soak_inline (clear, handlers in the connection
%% process), soak_process (clear, request_process => true) and soak_tls
%% (TLS, ALPN h2 and http/1.1, the demo's self-signed certificate).
%%
%% Size, from the environment (`make soak' sets the full size):
%%   SOAK_REQUESTS     HTTP requests in http_mixed_load (default 20000)
%%   SOAK_WS_SESSIONS  Websocket sessions in websocket_sessions (default 2000)
%%   SOAK_IDLE_CONNS   connections held in idle_connections (default 2000),
%%                     half HTTP/1.1, half h2c
%% The defaults are the short version that `make test' runs (plain
%% `rebar3 ct' runs every suite); `make soak' runs 1,000,000, 100,000 and
%% 20,000 idle connections.
%%
%% Clients: h2load for HTTP/2 (h2c by prior knowledge, h2 over TLS) and for
%% HTTP/1.1 (--h1), with keep-alive and with a new connection per request
%% (HTTP/1.1 "connection: close"; HTTP/2 one h2load client per request);
%% bench/wsload in session mode for Websocket (built with Go into
%% _build/soak/ when missing or when its sources changed; $WSLOAD names
%% another binary). Every client count is checked: all requests answered
%% 2xx with the expected number of body bytes, all sessions completed.
%%
%% Resources: process count, port count and the VM's memory in use (the
%% memory of every process but the test case's own, plus
%% erlang:memory(system): memory/0 says why not erlang:memory(total), which
%% is logged beside it), measured after a warm-up round and again after the
%% load, once the connections are gone (settle/0), must be within 5% of
%% each other. The supervisors
%% from mustang_sup down to the acceptors keep their pids (no restart).
-module(soak_SUITE).
-compile([export_all, nowarn_export_all]).

-include_lib("common_test/include/ct.hrl").
-include_lib("stdlib/include/assert.hrl").

-import(mustang_test, [doc/1, root/0]).

%% Resources must come back within this many percent of the baseline.
-define(TOLERANCE, 5).
%% HTTP/2 with a new connection per request: h2load runs of this many
%% clients doing one request each, one run after the other. (h2load -r,
%% which creates clients at a fixed rate whatever the server's pace, piled
%% up connections on the loaded machine until the accept queue overflowed:
%% connects took up to 7 s and 2% of them failed.)
-define(CHURN_RUN, 100).
%% The rate limit of crash log lines being implemented (protocol option
%% log_rate_limit): at most this many lines per second per listener, then
%% one line per period saying how many were "suppressed".
-define(LOG_LINES_PER_SECOND, 10).

suite() ->
	%% A cap for a stuck run only: on the 2-core machine the short version
	%% takes about 20 s, `make soak' about 5 minutes.
	[{timetrap, {seconds, 300 + requests() div 400 + sessions() div 40 + idle_conns() div 100}}].

all() ->
	[http_mixed_load, websocket_sessions, crash_under_load, idle_connections].

requests() -> env_int("SOAK_REQUESTS", 20000).

sessions() -> env_int("SOAK_WS_SESSIONS", 2000).

idle_conns() -> env_int("SOAK_IDLE_CONNS", 2000).

env_int(Name, Default) ->
	case os:getenv(Name, "") of
		"" -> Default;
		Value -> list_to_integer(Value)
	end.

init_per_suite(Config) ->
	{ok, _} = application:ensure_all_started(mustang),
	H2load = mustang_test:tool("h2load", "H2LOAD", []),
	Wsload = wsload(),
	Priv = ?config(priv_dir, Config),
	_ = [ok = file:write_file(body_file([{priv, Priv}], Size), rand:bytes(Size))
		|| Size <- [1024, 16384]],
	{ok, _} = mustang:start_clear(soak_inline, #{port => 0}, proto_opts(false)),
	{ok, _} = mustang:start_clear(soak_process, #{port => 0}, proto_opts(true)),
	{ok, _} = mustang:start_tls(soak_tls, #{port => 0, socket_opts => mustang_demo:tls_opts()},
		proto_opts(false)),
	%% The body of each GET route, to check the bytes h2load received.
	Port = mustang:get_port(soak_inline),
	Sizes = maps:from_list([{Path, begin
		#{status := 200, body := Body} = mustang_test:get(Port, Path),
		byte_size(Body)
	end} || Path <- ["/", "/stream"]]),
	[{h2load, H2load}, {wsload, Wsload}, {body_sizes, Sizes}, {priv, Priv} | Config].

end_per_suite(_) ->
	_ = [mustang:stop_listener(Ref) || Ref <- listeners()],
	ok.

listeners() -> [soak_inline, soak_process, soak_tls].

routes() ->
	[{'_', Paths}] = mustang_demo:routes(),
	[{'_', Paths ++ [{"/crash", crash_h, before_reply}]}].

proto_opts(RequestProcess) ->
	maps:merge(mustang_demo:protocol_opts(#{request_process => RequestProcess}),
		#{env => #{dispatch => mustang_router:compile(routes())}}).

%% Tests.

http_mixed_load(Config) ->
	doc("SOAK_REQUESTS requests mixed over HTTP/1.1 (inline and process), h2c and h2 "
		"(TLS), keep-alive and a new connection per request, GET / and /stream, POST "
		"/echo and /read_body: every request gets its 2xx and body, and processes, ports "
		"and memory come back within 5% of the start."),
	soak(Config, fun http_parts/1, requests(), 2000, "requests").

websocket_sessions(Config) ->
	doc("SOAK_WS_SESSIONS Websocket sessions over HTTP/1.1 (with and without "
		"permessage-deflate) and HTTP/2 (RFC 8441), opened, 3 echoes, closed: every "
		"session completes, and processes, ports and memory come back within 5% of "
		"the start."),
	soak(Config, fun ws_parts/1, sessions(), 200, "sessions").

%% Total requests or sessions split into parts by PartsFun. The baseline is
%% measured after a warm-up round (the same parts, 1/50 of the size, at
%% least WarmupMin), so that it holds what the first requests load or
%% allocate once: code, ETS tables, the TLS certificate cache, the first
%% heap growth of the long-lived processes. A full run later, the
%% difference is what the load left behind: a leak.
soak(Config, PartsFun, Total, WarmupMin, Unit) ->
	[check_part(Config, R) || R <- run_load(Config, PartsFun(max(WarmupMin, Total div 50)))],
	Tree = supervisor_pids(),
	Before = settle(),
	Start = erlang:monotonic_time(millisecond),
	Results = run_load(Config, PartsFun(Total)),
	Seconds = (erlang:monotonic_time(millisecond) - Start) / 1000,
	After = settle(),
	Count = lists:sum([N || #{done := N} <- Results]),
	#{processes := P0, ports := Ports0, memory := M0, total := T0} = Before,
	#{processes := P1, ports := Ports1, memory := M1, total := T1} = After,
	Summary = io_lib:format("soak: ~b ~s in ~.1f s (~b/s); processes ~b -> ~b, ports ~b -> ~b, "
		"memory in use ~.1f -> ~.1f MiB (~s%), erlang:memory(total) ~.1f -> ~.1f MiB",
		[Count, Unit, Seconds, round(Count / Seconds), P0, P1, Ports0, Ports1,
		M0 / 1048576, M1 / 1048576, signed((M1 - M0) * 100 / M0), T0 / 1048576, T1 / 1048576]),
	report(Summary, "Parts:~n~ts~nBefore: ~p~nAfter: ~p~nChanged ({Count, Memory} by initial "
		"call):~n~p", [format_parts(Results), maps:without([by_initial_call], Before),
		maps:without([by_initial_call], After), diff_initial_calls(Before, After)]),
	[check_part(Config, R) || R <- Results],
	?assertEqual(Tree, supervisor_pids()),
	[?assert(within(maps:get(K, Before), maps:get(K, After)), {K, Before, After})
		|| K <- [processes, ports, memory]],
	ok.

signed(X) when X >= 0 -> io_lib:format("+~.1f", [X]);
signed(X) -> io_lib:format("~.1f", [X]).

within(Before, After) ->
	abs(After - Before) * 100 =< Before * ?TOLERANCE.

crash_under_load(Config) ->
	doc("A handler that crashes on every request, hit under load over HTTP/1.1 and "
		"h2c: its requests get 500, the healthy routes of the same listener are all "
		"served at no less than half the throughput they have without it, no supervisor "
		"restarts, and the crash log is rate-limited (at most 10 lines a second plus one "
		"\"suppressed\" line per second)."),
	Tree = supervisor_pids(),
	Duration = 3,
	%% Without the crashing route before and after, against the drift of a
	%% shared machine.
	AloneBefore = run_load(Config, healthy_parts(Duration)),
	ok = logger:add_handler(soak_log_count, ?MODULE, #{level => all,
		config => #{counters => counters:new(3, [write_concurrency])}}),
	{Beside, Crash, LoadSeconds, [Errors, Suppressed, Named]} = try
		crash_load(Config, Duration)
	after
		_ = logger:remove_handler(soak_log_count)
	end,
	AloneAfter = run_load(Config, healthy_parts(Duration)),
	Alone = (rate(AloneBefore) + rate(AloneAfter)) / 2,
	Ratio = rate(Beside) / Alone,
	Summary = io_lib:format("crash under load: healthy ~b req/s alone, ~b req/s beside "
		"~b crashing requests (~.2f); ~.1f s of load, ~b error log events (~b naming mustang), "
		"~b \"suppressed\" lines", [round(Alone), round(rate(Beside)),
		lists:sum([N || #{done := N} <- Crash]), Ratio, LoadSeconds, Errors, Named, Suppressed]),
	report(Summary, "Alone, before:~n~tsBeside:~n~tsCrash:~n~tsAlone, after:~n~ts",
		[format_parts(AloneBefore), format_parts(Beside), format_parts(Crash),
		format_parts(AloneAfter)]),
	[check_part(Config, R) || R <- AloneBefore ++ Beside ++ Crash ++ AloneAfter],
	[?assert(CrashEnd >= HealthyEnd, {healthy_load_outlasted_the_crashing_one, Crash, Beside})
		|| #{ended := CrashEnd} <- Crash, #{ended := HealthyEnd} <- Beside],
	?assert(Ratio >= 0.5, {healthy_throughput_collapsed, Ratio}),
	?assertEqual(Tree, supervisor_pids()),
	Periods = ceil(LoadSeconds) + 1,
	?assert(Errors =< ?LOG_LINES_PER_SECOND * Periods + Periods,
		{crash_log_not_rate_limited, Errors, Periods}),
	?assert(Suppressed >= 1, {no_suppressed_line, Errors}),
	ok.

idle_connections(_) ->
	doc("SOAK_IDLE_CONNS connections held open at once, half HTTP/1.1 and half h2c, each "
		"idle after one request: the VM's memory per connection is measured and logged; "
		"all of them are still open and answer a second request, and a new connection "
		"meanwhile is answered in less than a second."),
	%% This node holds the server side, the peer node the clients: each
	%% needs N descriptors and some. A lower limit (`make soak' raises it
	%% when it may) caps N, and the summary says so.
	Wanted = idle_conns(),
	Limit = list_to_integer(string:trim(os:cmd("ulimit -n"))),
	N = min(Wanted, Limit - 1000),
	?assert(N >= 1000, {raise_the_file_descriptor_limit, {ulimit_n, Limit}}),
	Capped = case N < Wanted of
		true -> io_lib:format(" (capped from ~b by ulimit -n ~b)", [Wanted, Limit]);
		false -> ""
	end,
	H1 = N div 2,
	H2 = N - H1,
	Ref = soak_idle,
	{ok, _} = mustang:start_clear(Ref, #{port => 0, max_connections => infinity},
		%% Held longer than request_timeout (HTTP/1.1 between requests) and
		%% idle_timeout allow by default.
		maps:merge(proto_opts(false), #{idle_timeout => 600000, request_timeout => 600000})),
	Port = mustang:get_port(Ref),
	{ok, Peer, _} = peer:start_link(#{connection => standard_io,
		args => lists:append([["-pa", P] || P <- code:get_path(),
			string:find(P, "_build") =/= nomatch]) ++ ["+Q", integer_to_list(N + 10000)]}),
	try
		M0 = idle_memory(),
		{ok, Holder} = peer:call(Peer, ?MODULE, idle_open, [Port, http1, H1], infinity),
		M1 = idle_memory(),
		?assertEqual(H1, mustang:active_connections(Ref)),
		{ok, Holder2} = peer:call(Peer, ?MODULE, idle_open, [Port, h2c, H2], infinity),
		M2 = idle_memory(),
		?assertEqual(N, mustang:active_connections(Ref)),
		Start = erlang:monotonic_time(microsecond),
		#{status := 200} = mustang_test:get(Port, "/"),
		NewMs = (erlang:monotonic_time(microsecond) - Start) / 1000,
		%% All of them still there, and each answers again.
		timer:sleep(2000),
		?assertEqual(N, mustang:active_connections(Ref)),
		{H1, 0} = peer:call(Peer, ?MODULE, idle_again, [Holder], infinity),
		{H2, 0} = peer:call(Peer, ?MODULE, idle_again, [Holder2], infinity),
		?assertEqual(N, mustang:active_connections(Ref)),
		%% Each measure collected every process after its raw reading:
		%% the raw figure of a batch counts from the collected one before.
		PerConn = fun(KeyA, KeyB, A, B, Count) ->
			(proplists:get_value(KeyB, B) - proplists:get_value(KeyA, A)) / Count / 1024
		end,
		Summary = io_lib:format("idle connections: ~b held~s (~b HTTP/1.1, ~b h2c); "
			"erlang:memory(total) per connection: HTTP/1.1 ~.1f KiB, h2c ~.1f KiB "
			"(after a garbage collection of every process ~.1f and ~.1f KiB; of which "
			"erlang:memory(system), the sockets, ~.1f and ~.1f KiB); ~.1f -> ~.1f MiB in all; "
			"a new request answered in ~.1f ms",
			[N, Capped, H1, H2, PerConn(gc_total, total, M0, M1, H1),
				PerConn(gc_total, total, M1, M2, H2), PerConn(gc_total, gc_total, M0, M1, H1),
				PerConn(gc_total, gc_total, M1, M2, H2), PerConn(system, system, M0, M1, H1),
				PerConn(system, system, M1, M2, H2),
				proplists:get_value(total, M0) / 1048576, proplists:get_value(total, M2) / 1048576,
				NewMs]),
		report(Summary, "Before: ~p~nHTTP/1.1 open: ~p~nh2c open too: ~p", [M0, M1, M2]),
		?assert(NewMs < 1000, {slow_new_request, NewMs})
	after
		peer:stop(Peer),
		ok = mustang:stop_listener(Ref)
	end.

%% erlang:memory/0 once the node is quiet, 3 s after the last connection
%% opened (as bench/idle_memory.sh; an idle connection hibernates within
%% 2 x hibernate_after, 2 s by default): first the connections as they
%% are (what an idle connection really holds), then after a garbage
%% collection of every process (the least it holds), under the key gc_total.
idle_memory() ->
	timer:sleep(3000),
	Memory = erlang:memory(),
	_ = [erlang:garbage_collect(P) || P <- erlang:processes()],
	[{gc_total, erlang:memory(total)} | Memory].

%% In the peer node: Count connections to Port, each after one request
%% (GET /, keep-alive), held by a process of their own (in 10 parts at once)
%% that answers idle_again/1. Returns {ok, Holder}.
idle_open(Port, Kind, Count) ->
	Self = self(),
	Holder = spawn(fun() ->
		Me = self(),
		Parts = [spawn_link(fun() -> idle_part(Me, Port, Kind, Size) end)
			|| Size <- [Count div 10 + (case I =< Count rem 10 of true -> 1; false -> 0 end)
				|| I <- lists:seq(1, 10)], Size > 0],
		[receive {Part, opened} -> ok end || Part <- Parts],
		Self ! {self(), opened},
		idle_holder(Parts)
	end),
	receive {Holder, opened} -> {ok, Holder} end.

idle_holder(Parts) ->
	receive
		{again, From} ->
			Results = [begin
				Part ! {again, self()},
				receive {Part, Result} -> Result end
			end || Part <- Parts],
			From ! {self(), {lists:sum([Ok || {Ok, _} <- Results]),
				lists:sum([Bad || {_, Bad} <- Results])}},
			idle_holder(Parts)
	end.

idle_part(Holder, Port, Kind, Size) ->
	Conns = [idle_conn(Port, Kind) || _ <- lists:seq(1, Size)],
	Holder ! {self(), opened},
	idle_part_loop(Conns).

idle_part_loop(Conns) ->
	receive
		{again, From} ->
			Results = [idle_request(C) || C <- Conns],
			From ! {self(), {length([ok || ok <- Results]), length([x || R <- Results, R =/= ok])}},
			idle_part_loop(Conns)
	end.

idle_conn(Port, http1) ->
	{ok, S} = gen_tcp:connect("127.0.0.1", Port, [binary, {active, false}], 30000),
	ok = idle_request(S),
	S;
idle_conn(Port, h2c) ->
	{ok, Pid} = mustang_h2_client:connect(tcp, "127.0.0.1", Port, #{timeout => 30000}),
	ok = idle_request({h2c, Pid}),
	{h2c, Pid}.

idle_request({h2c, Pid}) ->
	case mustang_h2_client:request(Pid, <<"GET">>, "/", [], none) of
		{ok, StreamID} ->
			case mustang_h2_client:await(Pid, StreamID, 30000) of
				{ok, #{status := 200}} -> ok;
				Other -> Other
			end;
		Error ->
			Error
	end;
idle_request(S) ->
	ok = gen_tcp:send(S, "GET / HTTP/1.1\r\nhost: localhost\r\n\r\n"),
	case mustang_test:recv_response(S, #{timeout => 30000}) of
		#{status := 200} -> ok;
		Other -> Other
	end.

idle_again(Holder) ->
	Holder ! {again, self()},
	receive {Holder, Result} -> Result end.

%% The crashing load starts first and ends last, so that the healthy load
%% runs entirely beside it. Returns the results, the seconds of crashing
%% load and the log handler's counts.
crash_load(Config, Duration) ->
	{ok, #{config := #{counters := Counters}}} = logger:get_handler_config(soak_log_count),
	Start = erlang:monotonic_time(millisecond),
	CrashRuns = start_parts(Config, crash_parts(Duration + 2)),
	timer:sleep(500),
	Beside = run_load(Config, healthy_parts(Duration)),
	Crash = collect(CrashRuns),
	LoadSeconds = (erlang:monotonic_time(millisecond) - Start) / 1000,
	%% The line saying how many were suppressed in the last period may
	%% come after it.
	timer:sleep(1500),
	{Beside, Crash, LoadSeconds, [counters:get(Counters, I) || I <- [1, 2, 3]]}.

rate(Results) ->
	lists:sum([N / S || #{done := N, seconds := S} <- Results]).

%% The figures in the CT log; the summary line on the console too and as
%% the test's comment.
report(Summary, Format, Args) ->
	ct:log("~ts~n~n" ++ Format, [Summary | Args]),
	io:format(user, "~n~ts~n", [Summary]),
	ct:comment("~ts", [Summary]).

%% The load: parts run at the same time, each a list of client runs (one
%% after the other). A part is a map:
%%   name         shown in the logs
%%   client       h2load | wsload
%%   listener     soak_inline, soak_process or soak_tls
%%   proto        h1, h2c or h2 (TLS)
%%   count        requests (h2load -n) or sessions (wsload -sessions)
%%   duration     instead of count: h2load -D (seconds)
%%   clients      h2load -c, wsload -conns
%%   churn        h2load HTTP/2: one client per request, so a new connection
%%                for each (runs of ?CHURN_RUN)
%%   args         more client arguments
%%   paths        h2load: URL paths, used in turn by each client
%%   body         h2load: POST bodies of this many bytes
%%   expect       h2load: 2xx (default) or 5xx

%% SOAK_REQUESTS split between the parts by share (percent), each rounded
%% to a whole number of rounds of its clients over its paths, so that the
%% expected body bytes are exact.
http_parts(Total) ->
	[size_part(P, Total) || P <- [
		#{name => "h2c keep-alive GET", proto => h2c, listener => soak_inline, share => 22,
			clients => 10, args => ["-m", "10"], paths => ["/", "/stream"]},
		#{name => "h2c keep-alive POST /echo", proto => h2c, listener => soak_inline,
			share => 10, clients => 4, args => ["-m", "10"], paths => ["/echo"], body => 1024},
		#{name => "h2 (TLS) keep-alive GET", proto => h2, listener => soak_tls, share => 10,
			clients => 4, args => ["-m", "10"], paths => ["/", "/stream"]},
		#{name => "h2c new connection per request", proto => h2c, listener => soak_inline,
			share => 5, churn => true, paths => ["/"]},
		#{name => "h2 (TLS) new connection per request", proto => h2, listener => soak_tls,
			share => 1, churn => true, paths => ["/"]},
		#{name => "HTTP/1.1 keep-alive GET", proto => h1, listener => soak_inline, share => 20,
			clients => 10, paths => ["/", "/stream"]},
		#{name => "HTTP/1.1 (TLS) keep-alive GET", proto => h1, listener => soak_tls,
			share => 3, clients => 4, paths => ["/", "/stream"]},
		#{name => "HTTP/1.1 process keep-alive POST /read_body", proto => h1,
			listener => soak_process, share => 10, clients => 4, paths => ["/read_body"],
			body => 16384},
		#{name => "HTTP/1.1 process keep-alive POST /echo", proto => h1,
			listener => soak_process, share => 5, clients => 4, paths => ["/echo"],
			body => 1024},
		#{name => "HTTP/1.1 connection: close GET", proto => h1, listener => soak_inline,
			share => 10, clients => 4, args => ["-H", "connection: close"],
			paths => ["/", "/stream"]},
		#{name => "HTTP/1.1 process connection: close POST /read_body", proto => h1,
			listener => soak_process, share => 4, clients => 4,
			args => ["-H", "connection: close"], paths => ["/read_body"], body => 1024}
	]].

size_part(Part = #{churn := _, share := Share}, Total) ->
	Part#{client => h2load, count => max(1, round(Total * Share / 100))};
size_part(Part = #{clients := Clients, paths := Paths, share := Share}, Total) ->
	Unit = Clients * length(Paths),
	Part#{client => h2load, count => Unit * max(1, round(Total * Share / 100 / Unit))}.

ws_parts(Total) ->
	[Part#{client => wsload, clients => 20, count => max(1, round(Total * Share / 100))}
		|| Part = #{share := Share} <- [
		#{name => "Websocket HTTP/1.1", proto => h1, listener => soak_inline, share => 50,
			args => []},
		#{name => "Websocket HTTP/1.1 permessage-deflate", proto => h1,
			listener => soak_process, share => 20, args => ["-deflate"]},
		#{name => "Websocket HTTP/2", proto => h2c, listener => soak_inline, share => 30,
			args => []}
	]].

%% The healthy routes under load, for Seconds.
healthy_parts(Seconds) ->
	[
		#{name => "healthy h2c GET", client => h2load, proto => h2c, listener => soak_inline,
			duration => Seconds, clients => 10, args => ["-m", "10"], paths => ["/", "/stream"]},
		#{name => "healthy HTTP/1.1 GET", client => h2load, proto => h1,
			listener => soak_inline, duration => Seconds, clients => 10,
			paths => ["/", "/stream"]}
	].

%% The crashing route, lighter than the healthy load (a few requests in
%% flight), on the same listener. Runs of a fixed count repeated for
%% Seconds: h2load 1.52 -D hangs over HTTP/1.1 when the server closes each
%% connection (as it does after a 500).
crash_parts(Seconds) ->
	[
		#{name => "crashing h2c", client => h2load, proto => h2c, listener => soak_inline,
			until => Seconds, count => 1000, clients => 2, args => ["-m", "2"],
			paths => ["/crash"], expect => '5xx'},
		#{name => "crashing HTTP/1.1", client => h2load, proto => h1, listener => soak_inline,
			until => Seconds, count => 500, clients => 2, paths => ["/crash"], expect => '5xx'}
	].

run_load(Config, Parts) ->
	collect(start_parts(Config, Parts)).

start_parts(Config, Parts) ->
	[begin
		{Pid, MRef} = spawn_monitor(fun() -> exit({part, run_part(Config, Part)}) end),
		{Pid, MRef, Part}
	end || Part <- Parts].

collect(Runs) ->
	[receive
		{'DOWN', MRef, process, Pid, {part, Result}} -> Result;
		{'DOWN', MRef, process, Pid, Reason} -> ct:fail({part_crashed, Name, Reason})
	end || {Pid, MRef, #{name := Name}} <- Runs].

run_part(Config, Part = #{client := wsload, proto := Proto, listener := Ref, count := N,
		clients := Clients, args := Args}) ->
	Url = "ws://127.0.0.1:" ++ integer_to_list(mustang:get_port(Ref)) ++ "/ws",
	ProtoArg = case Proto of h1 -> "h1"; h2c -> "h2" end,
	Start = erlang:monotonic_time(millisecond),
	{Status, Out} = mustang_test:run(?config(wsload, Config), ["-url", Url, "-proto", ProtoArg,
		"-sessions", integer_to_list(N), "-conns", integer_to_list(Clients), "-messages", "3",
		"-size", "256", "-kind", "mixed", "-timeout", "30s" | Args], timeout(N)),
	End = erlang:monotonic_time(millisecond),
	Json = try mustang_test:json(Out) catch _:_ -> #{} end,
	Part#{status => Status, output => Out, result => Json, seconds => (End - Start) / 1000,
		ended => End, done => maps:get(<<"completed">>, Json, 0)};
run_part(Config, Part = #{client := h2load, until := Seconds}) ->
	[Args] = h2load_runs(Config, Part),
	Deadline = erlang:monotonic_time(millisecond) + Seconds * 1000,
	h2load_done(Part, repeat_h2load(Config, Part, Args, Deadline));
run_part(Config, Part = #{client := h2load}) ->
	h2load_done(Part, [h2load(Config, Part, Args) || Args <- h2load_runs(Config, Part)]).

repeat_h2load(Config, Part, Args, Deadline) ->
	case erlang:monotonic_time(millisecond) < Deadline of
		true -> [h2load(Config, Part, Args) | repeat_h2load(Config, Part, Args, Deadline)];
		false -> []
	end.

h2load_done(Part, Runs) ->
	Part#{runs => Runs, seconds => lists:sum([S || #{seconds := S} <- Runs]),
		ended => erlang:monotonic_time(millisecond),
		done => lists:sum([D || #{requests := [_, D | _]} <- Runs])}.

%% The h2load command lines of a part: one, or for HTTP/2 churn one per
%% ?CHURN_RUN connections.
h2load_runs(Config, Part = #{churn := true, count := N}) ->
	[["-n", integer_to_list(C), "-c", integer_to_list(C) | h2load_common(Config, Part)]
		|| C <- chunks(N)];
h2load_runs(Config, Part = #{clients := Clients}) ->
	Size = case Part of
		#{count := N} -> ["-n", integer_to_list(N)];
		#{duration := S} -> ["-D", integer_to_list(S)]
	end,
	[Size ++ ["-c", integer_to_list(Clients) | h2load_common(Config, Part)]].

chunks(N) when N > ?CHURN_RUN -> [?CHURN_RUN | chunks(N - ?CHURN_RUN)];
chunks(N) -> [N].

h2load_common(Config, Part = #{proto := Proto, listener := Ref, paths := Paths}) ->
	Base = case Ref of
		soak_tls -> "https://127.0.0.1:";
		_ -> "http://127.0.0.1:"
	end ++ integer_to_list(mustang:get_port(Ref)),
	ProtoArgs = case Proto of h1 -> ["--h1"]; _ -> [] end,
	BodyArgs = case Part of
		#{body := Size} -> ["-d", body_file(Config, Size)];
		_ -> []
	end,
	Urls = [Base ++ P || P <- Paths],
	UrlArgs = case Urls of
		[Url] -> [Url];
		_ -> ["-i", uri_file(Config, Part, Urls)]
	end,
	ProtoArgs ++ maps:get(args, Part, []) ++ BodyArgs ++ UrlArgs.

%% Written by init_per_suite/1 (parts run at the same time).
body_file(Config, Size) ->
	filename:join(?config(priv, Config), "body_" ++ integer_to_list(Size)).

%% One file per part: parts run at the same time.
uri_file(Config, #{name := Name}, Urls) ->
	File = filename:join(?config(priv, Config),
		"uris_" ++ integer_to_list(erlang:phash2({Name, Urls}))),
	ok = file:write_file(File, [[U, $\n] || U <- Urls]),
	File.

%% The output goes to a file: the test process keeps the results until the
%% memory is measured, and a million requests take 600 h2load runs, whose
%% outputs would be 600 KB of binaries (erlang:memory(binary)).
h2load(Config, Part, Args) ->
	Count = case Args of ["-n", N | _] -> list_to_integer(N); _ -> 0 end,
	Start = erlang:monotonic_time(millisecond),
	{Status, Out} = mustang_test:run(?config(h2load, Config), Args, timeout(Count)),
	Seconds = (erlang:monotonic_time(millisecond) - Start) / 1000,
	File = filename:join(?config(priv, Config),
		"h2load_" ++ integer_to_list(erlang:unique_integer([positive])) ++ ".out"),
	ok = file:write_file(File, Out),
	(parse_h2load(Out))#{status => Status, output_file => File, args => Args,
		seconds => Seconds, part => maps:get(name, Part)}.

%% Generous: a loaded machine, and TLS handshakes for the churn parts.
timeout(Count) ->
	120000 + Count * 5.

%% h2load's figures: requests (total, done, succeeded, failed, errored,
%% timeout), status classes, body bytes and the protocol.
parse_h2load(Out) ->
	Ints = fun(Re) ->
		case re:run(Out, Re, [{capture, all_but_first, list}]) of
			{match, L} -> [list_to_integer(I) || I <- L];
			nomatch -> []
		end
	end,
	Requests = Ints("requests: (\\d+) total, \\d+ started, (\\d+) done, (\\d+) succeeded, "
		"(\\d+) failed, (\\d+) errored, (\\d+) timeout"),
	Codes = Ints("status codes: (\\d+) 2xx, (\\d+) 3xx, (\\d+) 4xx, (\\d+) 5xx"),
	Data = Ints("traffic: .* \\((\\d+)\\) data"),
	Protocol = case re:run(Out, "Application protocol: (\\S+)", [{capture, all_but_first, list}]) of
		{match, [P]} -> P;
		nomatch -> none
	end,
	#{requests => Requests, codes => Codes, data => Data, protocol => Protocol}.

%% Every client count: nothing failed, every answer as expected.
check_part(_, #{client := wsload, name := Name, count := N, status := Status,
		result := Result, output := Out}) ->
	?assertEqual({Name, 0, #{<<"completed">> => N, <<"errors">> => 0, <<"frames">> => 3 * N}},
		{Name, Status, maps:with([<<"completed">>, <<"errors">>, <<"frames">>], Result)}, Out);
check_part(Config, Part = #{client := h2load, runs := Runs}) ->
	[check_h2load(Config, Part, Run) || Run <- Runs],
	ok.

check_h2load(Config, Part = #{name := Name, proto := Proto}, #{status := Status,
		requests := Requests, codes := Codes, data := Data, protocol := Protocol,
		output_file := File, args := Args}) ->
	{ok, Out} = file:read_file(File),
	Info = {Name, Args, Out},
	?assertEqual(0, Status, Info),
	?assertEqual(case Proto of h1 -> "http/1.1"; _ -> atom_to_list(Proto) end, Protocol, Info),
	[Total, Done, Succeeded, Failed, Errored, Timeout] = Requests,
	[C2xx, C3xx, C4xx, C5xx] = Codes,
	?assertEqual({0, 0}, {Errored, Timeout}, Info),
	?assert(Done > 0, Info),
	case {Part, maps:get(expect, Part, '2xx')} of
		{#{duration := _}, '2xx'} ->
			%% What ends after the duration is in the status codes, not in done.
			?assertEqual({Done, 0, 0, 0, 0}, {Succeeded, Failed, C3xx, C4xx, C5xx}, Info),
			?assert(C2xx >= Done, Info);
		{_, '2xx'} ->
			?assertEqual({Done, Done, 0, [Done, 0, 0, 0]}, {Total, Succeeded, Failed, Codes}, Info),
			?assertEqual([expected_data(Config, Part, Done)], Data, Info);
		{_, '5xx'} ->
			?assertEqual({Done, [0, 0, 0, Done]}, {Total, Codes}, Info)
	end.

%% Body bytes for Done requests spread evenly over the paths: each client
%% goes round the paths a whole number of times (http_parts/1).
expected_data(Config, Part = #{paths := Paths}, Done) ->
	Sizes = [path_size(Config, Part, P) || P <- Paths],
	lists:sum(Sizes) * (Done div length(Paths)).

path_size(_, #{body := Size}, "/echo") -> Size;
path_size(_, #{body := Size}, "/read_body") -> byte_size(integer_to_binary(Size));
path_size(Config, _, Path) -> maps:get(Path, ?config(body_sizes, Config)).

format_parts(Results) ->
	[format_part(R) || R <- Results].

format_part(#{client := wsload, name := Name, done := N, seconds := S, result := R}) ->
	io_lib:format("  ~-50s ~8b sessions ~7.1f s ~8b/s ~0p~n", [Name, N, S, round(N / S), R]);
format_part(#{client := h2load, name := Name, runs := Runs, seconds := S, done := Done}) ->
	io_lib:format("  ~-50s ~8b requests ~7.1f s ~8b/s (~b h2load runs)~n",
		[Name, Done, S, round(Done / S), length(Runs)]).

%% Measurements.

%% Waits until the load is gone, then measures: no connection left on the
%% soak listeners and the process and port counts the same in two samples
%% 500 ms apart (or 60 s passed: the assertions then show what was left).
%% Memory is the lowest of three readings 200 ms apart, each after every
%% process was garbage-collected (see memory/0).
settle() ->
	settle(counts(), erlang:monotonic_time(millisecond) + 60000).

settle(Prev, Deadline) ->
	timer:sleep(500),
	Counts = counts(),
	Quiet = Counts =:= Prev andalso lists:sum([mustang:active_connections(Ref)
		|| Ref <- listeners()]) =:= 0,
	case Quiet orelse erlang:monotonic_time(millisecond) > Deadline of
		true ->
			{Memory, ByCall} = lists:min([memory() || _ <- lists:seq(1, 3)]),
			Counts#{memory => proplists:get_value(in_use, Memory),
				total => proplists:get_value(total, Memory),
				breakdown => Memory, by_initial_call => ByCall};
		false ->
			settle(Counts, Deadline)
	end.

%% erlang:memory/0 after a garbage collection of every process, and first
%% the figure compared, `in_use': the memory of every process but this test
%% case's own (process_info/2), plus erlang:memory(system). Two parts of
%% erlang:memory(total) moved by megabytes between two quiet moments, so
%% that the short version's total differed by -5% to +16% with no leak:
%%   - erlang:memory(processes), even processes_used, was 4 to 8 MB above
%%     the sum of the processes' own memory, which stayed within 1%:
%%     allocator accounting, not a process;
%%   - this test case's process, which holds the clients' results: what a
%%     collection leaves of its heap (0.1 to 2.6 MB here) depends on the
%%     heap before it.
memory() ->
	timer:sleep(200),
	_ = [erlang:garbage_collect(P) || P <- erlang:processes()],
	Memory = erlang:memory(),
	Own = self(),
	Processes = lists:sum([M || P <- erlang:processes(), P =/= Own,
		{memory, M} <- [erlang:process_info(P, memory)]]),
	{[{in_use, Processes + proplists:get_value(system, Memory)},
		{processes_but_test, Processes} | Memory], by_initial_call()}.

%% Process count and memory by registered name, else initial call, else
%% current function (all but this test case's process), for the logs: where
%% a difference is.
by_initial_call() ->
	Own = self(),
	lists:foldl(fun(P, Acc) when P =:= Own -> Acc; (P, Acc) ->
		case erlang:process_info(P, [memory, registered_name, current_function]) of
			[{memory, M}, {registered_name, Name}, {current_function, Current}] ->
				Key = case {Name, proc_lib:translate_initial_call(P)} of
					{[], {proc_lib, init_p, 5}} -> Current;
					{[], Call} -> Call;
					_ -> Name
				end,
				maps:update_with(Key, fun({N, Sum}) -> {N + 1, Sum + M} end, {1, M}, Acc);
			undefined ->
				Acc
		end
	end, #{}, erlang:processes()).

%% The groups of by_initial_call/0 whose process count changed, or memory by
%% 16 KiB or more.
diff_initial_calls(#{by_initial_call := Before}, #{by_initial_call := After}) ->
	[{Call, B, A} || Call <- lists:usort(maps:keys(Before) ++ maps:keys(After)),
		{{N0, M0} = B, {N1, M1} = A} <- [{maps:get(Call, Before, {0, 0}),
			maps:get(Call, After, {0, 0})}],
		N0 =/= N1 orelse abs(M1 - M0) >= 16384].

counts() ->
	#{processes => erlang:system_info(process_count), ports => length(erlang:ports())}.

%% The pids of the supervisors from mustang_sup down to the acceptors, and
%% of their workers (not the connections, children of mustang_conns_sup,
%% which come and go): any restart changes one.
supervisor_pids() ->
	supervisor_pids(mustang_sup).

supervisor_pids(Sup) ->
	lists:sort([case {Id, Type} of
		{{mustang_conns_sup, _}, _} -> {Id, Pid};
		{_, supervisor} -> {Id, Pid, supervisor_pids(Pid)};
		{_, worker} -> {Id, Pid}
	end || {Id, Pid, Type, _} <- supervisor:which_children(Sup)]).

%% The Websocket client: $WSLOAD, or bench/wsload built with Go into
%% _build/soak/wsload when it is missing or its sources changed (a hash of
%% them is kept beside it), with the module cache that scripts/setup.sh
%% and bench/run.sh use (_tools/go/modcache).
wsload() ->
	case os:getenv("WSLOAD") of
		Path when is_list(Path), Path =/= "" -> Path;
		_ -> build_wsload(root())
	end.

build_wsload(Root) ->
	Src = filename:join([Root, "bench", "wsload"]),
	Dir = filename:join([Root, "_build", "soak"]),
	Bin = filename:join(Dir, "wsload"),
	Files = lists:sort(filelib:wildcard(filename:join(Src, "*.go"))
		++ [filename:join(Src, F) || F <- ["go.mod", "go.sum"]]),
	Hash = binary:encode_hex(crypto:hash(sha256, [element(2, file:read_file(F)) || F <- Files])),
	HashFile = Bin ++ ".srchash",
	case {filelib:is_regular(Bin), file:read_file(HashFile)} of
		{true, {ok, Hash}} ->
			Bin;
		_ ->
			Go = mustang_test:tool("go", "GO", ["/usr/local/go/bin/go"]),
			ok = filelib:ensure_dir(Bin),
			Env = [{"GOCACHE", filename:join(Dir, "gocache")},
				{"GOPATH", filename:join(Dir, "gopath")},
				{"GOMODCACHE", filename:join([Root, "_tools", "go", "modcache"])},
				{"GOFLAGS", "-modcacherw"}],
			case mustang_test:run(Go, ["-C", Src, "build", "-o", Bin, "."], 600000, Env) of
				{0, _} -> ok = file:write_file(HashFile, Hash), Bin;
				{_, Out} -> ct:fail("go build of bench/wsload failed: ~ts", [Out])
			end
	end.

%% Logger handler (crash_under_load): counts error events, events whose
%% text says "suppressed" (any level), and error events naming mustang.
log(#{level := Level, msg := Msg}, #{config := #{counters := Counters}}) ->
	Text = try text(Msg) catch _:_ -> "" end,
	Error = Level =:= error,
	count(Counters, 1, Error),
	count(Counters, 2, string:find(Text, "suppressed") =/= nomatch),
	count(Counters, 3, Error andalso string:find(Text, "mustang") =/= nomatch).

count(Counters, Index, true) -> counters:add(Counters, Index, 1);
count(_, _, false) -> ok.

text({string, String}) -> String;
text({report, Report}) -> io_lib:format("~0p", [Report]);
text({Format, Args}) -> io_lib:format(Format, Args).
