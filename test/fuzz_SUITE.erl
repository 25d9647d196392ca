%% Fuzzing a live server: PropEr generators (mustang_fuzz_gen) build valid
%% HTTP/1.1 requests, HTTP/2 frame sequences, HPACK blocks and Websocket
%% frames, mutate them at the byte level, and send them to listeners running
%% the demo's routes: a clear one with handlers inline, a clear one with
%% request_process, and a TLS one (ALPN h2 and http/1.1).
%%
%% Each target runs for FUZZ_SECONDS seconds (environment variable; 7 when
%% unset, the short run of `make test`; `make fuzz` sets it). A PropEr test
%% is a batch of cases run in parallel, one connection each; after every
%% batch:
%%   (a) the listeners' supervisors, connection supervisor shards and
%%       acceptors have the pids they had before it (no restart);
%%   (b) the process and port counts come back to what they were before it
%%       once the connections are closed (polled, no fixed sleep);
%%   (c) every connection ended with a protocol-correct answer
%%       (mustang_fuzz_oracle reads what the server sent):
%%       HTTP/1.1: whole responses (status line, headers, body by
%%         content-length, chunked or the close), then the server closed or
%%         answered the probe request sent after the fuzzed bytes; after a
%%         101, valid frames of the new protocol and a close; never a hang
%%         (HANG ms, the listeners' request_timeout is SERVER_TIMEOUT);
%%       HTTP/2 (frames and HPACK): valid frames and header blocks, then the
%%         PING sent after the fuzzed bytes is acknowledged, or GOAWAY and
%%         the connection closes; never INTERNAL_ERROR;
%%       Websocket (HTTP/1.1 upgrade and HTTP/2 extended CONNECT): exactly
%%         the pongs, echoes and close code that an independent model of the
%%         echo server (mustang_fuzz_oracle:ws_model/2) predicts for the
%%         bytes sent, then the close or the echo of a probe message;
%%       cases left whole (no mutation) must moreover be served: every
%%         request answered, the probe too;
%%   (d) no log event of level error or above (crash reports included).
%% A failed batch is shrunk (for at most SHRINK_SECONDS) towards the
%% smallest failing case; the test fails with it, and the failing cases are
%% saved for replay/2. Each target logs its case counts and outcomes (ct:log,
%% and one summary line on the console). See doc/internals/fuzzing.md.
-module(fuzz_SUITE).
-compile([export_all, nowarn_export_all]).

-include_lib("common_test/include/ct.hrl").
-include_lib("proper/include/proper.hrl").

-import(mustang_test, [doc/1]).

%% request_timeout and idle_timeout of the listeners (ms).
-define(SERVER_TIMEOUT, 1000).
%% A connection neither answered nor closed after this many ms hangs.
-define(HANG, 6000).
%% max_frame_size of the fuzzed Websocket route.
-define(WS_MAX, 4096).
%% At most this many cases (connections) run at once.
-define(BATCH, 24).
%% PropEr tests per quickcheck call: the budget is checked between calls.
-define(TESTS_PER_ROUND, 4).
%% Seconds of shrinking after the first failure.
-define(SHRINK_SECONDS, 60).
-define(LOG_HANDLER, fuzz_SUITE_errors).
-define(LOG_TABLE, fuzz_SUITE_errors).

suite() ->
	[{timetrap, {seconds, budget() + 600}}].

all() ->
	[oracle_self_check, http1, http2_frames, hpack, websocket].

%% Seconds per target.
budget() ->
	case os:getenv("FUZZ_SECONDS") of
		false -> 7;
		"" -> 7;
		S -> list_to_integer(S)
	end.

init_per_suite(Config) ->
	{ok, _} = application:ensure_all_started(mustang),
	{ok, _} = application:ensure_all_started(ssl),
	%% The demo's chat (/ws/chat) needs its process group scope.
	Pg = case pg:start(mustang_demo) of
		{ok, Pid} -> Pid;
		{error, {already_started, _}} -> none
	end,
	Opts = maps:merge(mustang_demo:protocol_opts(#{}), #{
		env => #{dispatch => mustang_router:compile(routes())},
		request_timeout => ?SERVER_TIMEOUT,
		idle_timeout => ?SERVER_TIMEOUT,
		linger_timeout => 200,
		preface_timeout => 2000,
		settings_timeout => 2000
	}),
	{ok, _} = mustang:start_clear({?MODULE, clear}, #{port => 0}, Opts),
	{ok, _} = mustang:start_clear({?MODULE, process}, #{port => 0}, Opts#{request_process => true}),
	{ok, _} = mustang:start_tls({?MODULE, tls}, #{port => 0,
		socket_opts => mustang_demo:tls_opts()}, Opts),
	Ports = maps:from_list([{L, mustang:get_port({?MODULE, L})} || L <- [clear, process, tls]]),
	[{pg, Pg}, {ports, Ports} | Config].

end_per_suite(Config) ->
	_ = [mustang:stop_listener({?MODULE, L}) || L <- [clear, process, tls]],
	case ?config(pg, Config) of
		none -> ok;
		Pg -> exit(Pg, shutdown)
	end,
	ok.

%% The demo's routes, a Websocket echo with a small max_frame_size for the
%% websocket target, and one that also closes after 1 s without data (and
%% accepts permessage-deflate) for the upgrades of the http1 target.
routes() ->
	[{'_', Paths}] = mustang_demo:routes(),
	[{'_', [
		{"/fuzz/ws", ws_echo_h, #{ws_opts => #{max_frame_size => ?WS_MAX,
			idle_timeout => 10000, close_timeout => 1000}}},
		{"/fuzz/ws/short", ws_echo_h, #{ws_opts => #{max_frame_size => ?WS_MAX,
			idle_timeout => ?SERVER_TIMEOUT, close_timeout => 1000, compress => true}}}
		| Paths]}].

%% Targets.

http1(Config) ->
	doc("Mutated HTTP/1.1 requests (pipelined, bodies with content-length and chunked, "
		"upgrades, the HTTP/2 preface; bit flips, inserts, deletes, duplicates, truncation, "
		"splices, CR/LF games, odd numbers), then a probe request: the server answers with "
		"whole responses, then closes or answers the probe; no restart, leak or error log."),
	fuzz(Config, http1).

http2_frames(Config) ->
	doc("Mutated HTTP/2 frame sequences after a valid preface, then a PING: the server "
		"sends valid frames, then the PING ACK or GOAWAY (never INTERNAL_ERROR) and closes; "
		"no restart, leak or error log."),
	fuzz(Config, http2_frames).

hpack(Config) ->
	doc("Header blocks encoded by mustang_hpack (dynamic table, Huffman, never-indexed, size "
		"updates), mutated, sent as HEADERS and CONTINUATION frames, then a PING: valid "
		"frames and header blocks back, every request answered when nothing was mutated, "
		"the PING ACK or GOAWAY (never INTERNAL_ERROR); no restart, leak or error log."),
	fuzz(Config, hpack).

websocket(Config) ->
	doc("Mutated Websocket frames after an HTTP/1.1 upgrade and after HTTP/2 extended "
		"CONNECT (RFC 8441), clear and TLS: the server sends exactly the pongs, echoes and "
		"close code (1002, 1007, 1009, or the client's) that a model predicts; no restart, "
		"leak or error log."),
	fuzz(Config, websocket).

gen(http1) -> mustang_fuzz_gen:http1_case();
gen(http2_frames) -> mustang_fuzz_gen:h2_case();
gen(hpack) -> mustang_fuzz_gen:hpack_case();
gen(websocket) -> mustang_fuzz_gen:ws_case().

batch(Target) ->
	?SIZED(S, resize(?BATCH, non_empty(list(resize(S, gen(Target)))))).

fuzz(Config, Target) ->
	Budget = budget(),
	Stats = ets:new(fuzz_stats, [public]),
	Failed = filename:join(?config(priv_dir, Config), atom_to_list(Target) ++ "_failed.terms"),
	Ctx = #{target => Target, ports => ?config(ports, Config), stats => Stats, failed => Failed},
	_ = ets:new(?LOG_TABLE, [public, named_table, duplicate_bag]),
	ok = logger:add_handler(?LOG_HANDLER, ?MODULE, #{level => error}),
	%% Thousands of notices (one per refused request) stay out of the
	%% console; the CT log keeps them.
	Console = case logger:get_handler_config(default) of
		{ok, #{level := Level}} -> ok = logger:set_handler_config(default, level, warning), Level;
		_ -> none
	end,
	try
		warm_up(Ctx),
		Sups = sup_pids(),
		Base = stable_counts(),
		Start = erlang:monotonic_time(millisecond),
		Result = rounds(Ctx#{sups => Sups}, Start + Budget * 1000, 0),
		Elapsed = erlang:monotonic_time(millisecond) - Start,
		summary(Target, Stats, Elapsed),
		case Result of
			ok -> ok;
			{failed, CounterExample} -> fail_with(Target, CounterExample)
		end,
		%% Over the whole run too, not only batch by batch.
		case {sup_pids(), settle(Base)} of
			{Sups, ok} -> ok;
			{Sups, Leak} -> ct:fail("~p: processes or ports leaked over the run: ~p", [Target, Leak]);
			{Other, _} -> ct:fail("~p: supervisors restarted over the run:~n~p~n~p",
				[Target, Sups, Other])
		end
	after
		_ = Console =/= none andalso logger:set_handler_config(default, level, Console),
		_ = logger:remove_handler(?LOG_HANDLER),
		ets:delete(?LOG_TABLE)
	end.

%% One valid case of each kind, so that what is started once (TLS session
%% caches, modules loaded) is in the baseline.
warm_up(Ctx) ->
	Get = <<"GET / HTTP/1.1\r\nhost: localhost\r\n\r\n">>,
	_ = [{ok, answered} = http1_run(Ctx, #{listener => L, requests => [{keep, Get}],
		mutations => [], splits => []}) || L <- [clear, process, tls]],
	_ = [{ok, usable} = h2_run(Ctx, L, <<>>, []) || L <- [clear, tls]],
	ok.

rounds(Ctx = #{target := Target}, Deadline, Round) ->
	case erlang:monotonic_time(millisecond) >= Deadline of
		true ->
			ok;
		false ->
			%% Sizes go up and down from round to round.
			Size = 2 + (Round * 7) rem 40,
			Prop = ?FORALL(Batch, batch(Target), check_batch(Ctx, Batch)),
			case proper:quickcheck(Prop, [{numtests, ?TESTS_PER_ROUND}, {start_size, Size},
					{max_size, Size + ?TESTS_PER_ROUND}, {max_shrinks, 60}, quiet, long_result]) of
				true -> rounds(Ctx, Deadline, Round + 1);
				CounterExample -> {failed, CounterExample}
			end
	end.

%% Runs one case (a term of the file <target>_failed.terms that a failed run
%% leaves in its priv_dir, read with file:consult/1) against listeners
%% like the suite's, started here; returns what the run gives, {ok, Outcome}
%% or {fail, Why}. From a shell in the test profile:
%%   {ok, Cases} = file:consult(File), fuzz_SUITE:replay(websocket, hd(Cases)).
replay(Target, Case) ->
	Config = init_per_suite([]),
	try
		run_case(#{target => Target, ports => ?config(ports, Config)}, Case)
	after
		end_per_suite(Config)
	end.

fail_with(Target, CounterExample) ->
	Details = case CounterExample of
		[Batch] when is_list(Batch) -> [{Case, case_bytes(Target, Case)} || Case <- Batch];
		_ -> CounterExample
	end,
	ct:fail("~p: shrunk counterexample (the batch of cases, each with the bytes it sends; "
		"the last 'batch failed' in the log says what the server did):~n~p",
		[Target, show(Details)]).

%% Terms with their binaries made readable: printable runs as they are,
%% other bytes apart, long runs of one byte as {N, times, Byte}.
show(B) when is_binary(B) ->
	case io_lib:printable_latin1_list(binary_to_list(B)) of
		true when byte_size(B) < 64 -> B;
		_ -> {bytes, [R || R <- runs(B), R =/= <<>>]}
	end;
show(L) when is_list(L) -> [show(X) || X <- L];
show(T) when is_tuple(T) -> list_to_tuple(show(tuple_to_list(T)));
show(M) when is_map(M) -> maps:from_list([{K, show(V)} || {K, V} <- maps:to_list(M)]);
show(X) -> X.

runs(<<>>) ->
	[];
runs(B = <<C, _/bits>>) ->
	case {same(B, C, 0), text(B, 0)} of
		{Same, _} when Same >= 16 ->
			[{Same, times, <<C>>} | runs(binary:part(B, Same, byte_size(B) - Same))];
		{_, Text} when Text >= 6 ->
			[binary:part(B, 0, Text) | runs(binary:part(B, Text, byte_size(B) - Text))];
		_ ->
			{Other, Rest} = other(B, <<>>),
			[Other | runs(Rest)]
	end.

same(<<C, Rest/bits>>, C, N) -> same(Rest, C, N + 1);
same(_, _, N) -> N.

%% How many printable bytes B starts with, up to a run of one byte.
text(B = <<C, Rest/bits>>, N) when C >= 32, C < 127; C =:= $\r; C =:= $\n; C =:= $\t ->
	case same(B, C, 0) >= 16 of
		true -> N;
		false -> text(Rest, N + 1)
	end;
text(_, N) ->
	N.

%% Bytes up to a run of text or of one byte.
other(B = <<C, Rest/bits>>, Acc) ->
	case same(B, C, 0) >= 16 orelse text(B, 0) >= 6 of
		true when Acc =/= <<>> -> {Acc, B};
		_ -> other(Rest, <<Acc/binary, C>>)
	end;
other(<<>>, Acc) ->
	{Acc, <<>>}.

case_bytes(http1, Case) -> mustang_fuzz_gen:http1_bytes(Case);
case_bytes(http2_frames, Case) -> mustang_fuzz_gen:h2_bytes(Case);
case_bytes(hpack, Case) -> mustang_fuzz_gen:hpack_bytes(Case, <<"http">>);
case_bytes(websocket, Case) -> mustang_fuzz_gen:ws_bytes(Case).

%% The property: one batch of cases, run in parallel, then (a), (b), (d).
%% Once shrinking has run for SHRINK_SECONDS, or when a supervisor restarted
%% since the target started (what runs next no longer meets the same
%% server), every batch passes: PropEr then stops with the smallest failing
%% batch found so far.
check_batch(Ctx = #{stats := Stats, sups := Sups}, Batch) ->
	Now = erlang:monotonic_time(millisecond),
	case ets:lookup(Stats, first_failure) of
		[{_, T}] when T + ?SHRINK_SECONDS * 1000 < Now -> true;
		[_] -> sup_pids() =/= Sups orelse run_batch_checks(Ctx, Batch);
		[] -> run_batch_checks(Ctx, Batch)
	end.

run_batch_checks(Ctx = #{stats := Stats}, Batch) ->
	Sups = sup_pids(),
	Before = counts(),
	Results = run_batch(Ctx, Batch),
	Leak = settle(Before),
	SupsAfter = sup_pids(),
	Logged = take_logged(),
	ets:update_counter(Stats, batches, 1, {batches, 0}),
	_ = [count(Stats, Case, Result) || {Case, Result} <- Results],
	Problems = [{case_failed, Case, Why} || {Case, {fail, Why}} <- Results]
		++ [{leak, Leak} || Leak =/= ok]
		++ [{supervisor_restarted, Sups, SupsAfter} || Sups =/= SupsAfter]
		++ [{logged, Logged} || Logged =/= []],
	case Problems of
		[] ->
			true;
		_ ->
			_ = ets:insert_new(Stats, {first_failure, erlang:monotonic_time(millisecond)}),
			ct:log("batch failed:~n~p", [show(Problems)]),
			_ = [file:write_file(maps:get(failed, Ctx), io_lib:format("~w.~n", [Case]), [append])
				|| {case_failed, Case, _} <- Problems],
			false
	end.

count(Stats, Case, Result) ->
	Outcome = case Result of
		{ok, O} -> O;
		{fail, _} -> failed
	end,
	Listener = maps:get(listener, Case),
	Keys = [cases, {listener, Listener}, {outcome, Outcome}]
		++ [{transport, T} || T <- [maps:get(transport, Case, none)], T =/= none],
	_ = [ets:update_counter(Stats, K, 1, {K, 0}) || K <- Keys],
	ok.

summary(Target, Stats, Elapsed) ->
	All = lists:sort(ets:tab2list(Stats)),
	Cases = proplists:get_value(cases, All, 0),
	Line = io_lib:format("~p: ~b cases in ~b batches, ~.1f s (~.1f cases/s); ~0p",
		[Target, Cases, proplists:get_value(batches, All, 0), Elapsed / 1000,
			Cases * 1000 / max(1, Elapsed), [KV || KV = {K, _} <- All, is_tuple(K)]]),
	ct:log("~s", [Line]),
	io:format(user, "~nfuzz ~s~n", [Line]),
	ct:comment("~s", [Line]).

run_batch(Ctx, Batch) ->
	Started = [{spawn_monitor(fun() -> exit({done, run_case(Ctx, Case)}) end), Case}
		|| Case <- Batch],
	[receive
		{'DOWN', MRef, process, Pid, {done, Result}} -> {Case, Result};
		{'DOWN', MRef, process, Pid, Reason} -> {Case, {fail, {client_crashed, Reason}}}
	after ?HANG * 3 ->
		exit(Pid, kill),
		{Case, {fail, client_stuck}}
	end || {{Pid, MRef}, Case} <- Started].

run_case(Ctx = #{target := http1}, Case) ->
	http1_run(Ctx, Case);
run_case(Ctx = #{target := http2_frames}, Case = #{listener := L}) ->
	h2_run(Ctx, L, mustang_fuzz_gen:h2_bytes(Case), []);
run_case(Ctx = #{target := hpack}, Case = #{listener := L}) ->
	Bytes = mustang_fuzz_gen:hpack_bytes(Case, scheme(L)),
	case mustang_fuzz_gen:hpack_is_mutated(Case) of
		true -> h2_run(Ctx, L, Bytes, []);
		false -> h2_run(Ctx, L, Bytes, mustang_fuzz_gen:hpack_streams(Case))
	end;
run_case(Ctx = #{target := websocket}, Case) ->
	ws_run(Ctx, Case).

scheme(tls) -> <<"https">>;
scheme(_) -> <<"http">>.

%% (a) The pids of the supervision tree: mustang_sup's children and, for
%% each listener, its supervisor, connection supervisor shards, acceptors
%% supervisor and acceptors.
sup_pids() ->
	Top = [Pid || {_, Pid, _, _} <- supervisor:which_children(mustang_sup)],
	Listeners = [Pid || {{mustang_listener_sup, _}, Pid, _, _}
		<- supervisor:which_children(mustang_listeners_sup)],
	Children = [Pid || L <- Listeners, {_, Pid, _, _} <- supervisor:which_children(L)],
	Acceptors = [Pid || L <- Listeners, {mustang_acceptors_sup, Sup, _, _}
		<- supervisor:which_children(L), {_, Pid, _, _} <- supervisor:which_children(Sup)],
	lists:sort([whereis(mustang_sup) | Top ++ Listeners ++ Children ++ Acceptors]).

%% (b) Process and port counts.
counts() ->
	{erlang:system_info(process_count), length(erlang:ports()), erlang:processes(),
		erlang:ports()}.

%% Counts that hold still for 200 ms.
stable_counts() ->
	C1 = {P1, N1, _, _} = counts(),
	timer:sleep(200),
	case counts() of
		{P1, N1, _, _} -> C1;
		_ -> stable_counts()
	end.

%% ok once the counts are back at (or below) those of Before, or what was
%% left after 10 s.
settle(Before) ->
	settle(Before, erlang:monotonic_time(millisecond) + 10000).

settle(Before = {Procs, Ports, ProcList, PortList}, Deadline) ->
	case counts() of
		{P, N, _, _} when P =< Procs, N =< Ports ->
			ok;
		{P, N, NowProcs, NowPorts} ->
			case erlang:monotonic_time(millisecond) > Deadline of
				true ->
					{Procs, Ports, P, N,
						[{Pid, catch erlang:process_info(Pid, [initial_call, current_function,
							dictionary])} || Pid <- NowProcs -- ProcList],
						[{Port, erlang:port_info(Port)} || Port <- NowPorts -- PortList]};
				false ->
					timer:sleep(20),
					settle(Before, Deadline)
			end
	end.

%% (d) The logger handler: error events go to a table.
log(Event, _) ->
	catch ets:insert(?LOG_TABLE, {erlang:monotonic_time(), Event}),
	ok.

take_logged() ->
	Events = ets:tab2list(?LOG_TABLE),
	ets:delete_all_objects(?LOG_TABLE),
	[E || {_, E} <- lists:sort(Events)].

%% Connections.

connect(#{ports := Ports}, Listener, Alpn) ->
	Port = maps:get(Listener, Ports),
	case Listener of
		tls ->
			{ok, S} = ssl:connect("127.0.0.1", Port, [binary, {active, false},
				{verify, verify_none}, {alpn_advertised_protocols, [Alpn]}], 10000),
			{ssl, S};
		_ ->
			{ok, S} = gen_tcp:connect("127.0.0.1", Port, [binary, {active, false},
				{nodelay, true}], 10000),
			{gen_tcp, S}
	end.

%% Fun(Sock) on a new connection, closed after.
with_connection(Ctx, Listener, Alpn, Fun) ->
	Sock = connect(Ctx, Listener, Alpn),
	try
		Fun(Sock)
	after
		close(Sock)
	end.

%% The server may have closed already: errors are for the reads to see.
send({Mod, S}, Data) ->
	_ = Mod:send(S, Data),
	ok.

close({Mod, S}) ->
	_ = Mod:close(S),
	ok.

%% {data, Bytes}, closed or timeout (Deadline passed).
recv({Mod, S}, Deadline) ->
	case Mod:recv(S, 0, max(0, Deadline - erlang:monotonic_time(millisecond))) of
		{ok, Data} -> {data, Data};
		{error, timeout} -> timeout;
		{error, _} -> closed
	end.

deadline() ->
	erlang:monotonic_time(millisecond) + ?HANG.

%% HTTP/1.1.

%% The case's bytes, then a POST /echo whose body names this case: the
%% server must answer it unless it closed the connection.
http1_run(Ctx, Case = #{listener := Listener, splits := Splits}) ->
	Bytes = mustang_fuzz_gen:http1_bytes(Case),
	ProbeBody = <<"probe-", (integer_to_binary(erlang:unique_integer([positive])))/binary>>,
	Probe = [<<"POST /echo HTTP/1.1\r\nhost: localhost\r\ncontent-length: ">>,
		integer_to_binary(byte_size(ProbeBody)), <<"\r\n\r\n">>, ProbeBody],
	Result = with_connection(Ctx, Listener, <<"http/1.1">>, fun(Sock) ->
		_ = [send(Sock, Piece) || Piece <- mustang_fuzz_gen:split(Bytes, Splits)],
		send(Sock, Probe),
		Head = binary:match(Bytes, <<"HEAD">>) =/= nomatch,
		http1_read(Sock, <<>>, {ProbeBody, Head}, deadline())
	end),
	case {Result, mustang_fuzz_gen:http1_expects_probe(Case)} of
		{{fail, Why}, _} ->
			{fail, #{why => Why, sent => Bytes}};
		{{answered, Resps}, true} ->
			Finals = [R || R = #{status := S} <- Resps, S >= 200],
			case length(Finals) =:= length(maps:get(requests, Case)) + 1 of
				true -> {ok, answered};
				false -> {fail, #{why => {responses_missing, Resps}, sent => Bytes}}
			end;
		{{Outcome, Resps}, true} ->
			{fail, #{why => {probe_not_answered, Outcome, Resps}, sent => Bytes}};
		{{answered, _}, false} ->
			{ok, answered};
		{{closed, Resps}, false} ->
			{ok, {closed, case lists:last([none | Resps]) of
				#{status := Status} -> Status;
				none -> none
			end}};
		{{Outcome, _}, false} ->
			{ok, Outcome}
	end.

%% Probe: the body of the probe's response, and whether HEAD was sent.
http1_read(Sock, Buf, Probe = {ProbeBody, Head}, Deadline) ->
	case recv(Sock, Deadline) of
		{data, Data} ->
			Buf2 = <<Buf/binary, Data/binary>>,
			case mustang_fuzz_oracle:http1_parse(Buf2, false, Head) of
				{ok, Resps, <<>>} ->
					case lists:last([undefined | Resps]) of
						#{status := 200, body := ProbeBody} -> {answered, Resps};
						_ -> http1_read(Sock, Buf2, Probe, Deadline)
					end;
				{ok, Resps, {switch, websocket, Rest}} ->
					ws_close_reply(Sock, Resps, Rest, byte_size(Data)),
					http1_read(Sock, Buf2, Probe, Deadline);
				{ok, _, _} ->
					http1_read(Sock, Buf2, Probe, Deadline);
				{error, Why} ->
					{fail, {bad_response, Why, Buf2}}
			end;
		closed ->
			case mustang_fuzz_oracle:http1_parse(Buf, true, Head) of
				{ok, Resps, <<>>} -> {closed, Resps};
				{ok, Resps, {switch, Protocol, Rest}} -> switched(Protocol, Resps, Rest);
				{error, Why} -> {fail, {bad_response, Why, Buf}}
			end;
		timeout ->
			{fail, {hang, Buf}}
	end.

%% After an upgrade to Websocket, the server waits for the client's close
%% frame once it sent its own: send it when the last read (its Last bytes)
%% brought the server's.
ws_close_reply(Sock, Resps, Rest, Last) ->
	Closes = fun(Bytes) ->
		case mustang_fuzz_oracle:ws_feed(Bytes, mustang_fuzz_oracle:ws_init(deflate(Resps))) of
			{ok, Msgs, _} -> [M || M = {close, _, _} <- Msgs];
			{error, _} -> []
		end
	end,
	case {Closes(Rest), Closes(binary:part(Rest, 0, max(0, byte_size(Rest) - Last)))} of
		{[_], []} -> send(Sock, mustang_fuzz_gen:ws_frame({1, 0, 8, <<0:32>>, <<>>, min}));
		_ -> ok
	end.

deflate(Resps) ->
	#{headers := Headers} = lists:last(Resps),
	binary:match(proplists:get_value(<<"sec-websocket-extensions">>, Headers, <<>>),
		<<"permessage-deflate">>) =/= nomatch.

%% After a 101 (or HTTP/2 by prior knowledge), until the server closed.
switched(websocket, Resps, Rest) ->
	case mustang_fuzz_oracle:ws_feed(Rest, mustang_fuzz_oracle:ws_init(deflate(Resps))) of
		{ok, Msgs, _} ->
			case lists:last([none | Msgs]) of
				{close, _, _} -> {{switch, websocket}, Resps};
				_ -> {fail, {websocket_closed_without_close_frame, Msgs}}
			end;
		{error, Why} ->
			{fail, {bad_websocket_frames, Why}}
	end;
switched(Protocol, Resps, Rest) when Protocol =:= h2c; Protocol =:= h2 ->
	case mustang_fuzz_oracle:h2_feed(Rest, mustang_fuzz_oracle:h2_init()) of
		{ok, Events, _} ->
			case [E || E = {goaway, _, _} <- Events] of
				[_ | _] -> {{switch, Protocol}, Resps};
				[] -> {fail, {http2_closed_without_goaway, Events}}
			end;
		{error, Why} ->
			{fail, {bad_http2_frames, Why, Rest}}
	end;
switched(Protocol, _, _) ->
	{fail, {unknown_upgrade, Protocol}}.

%% HTTP/2.

%% A valid preface and SETTINGS, the case's bytes completed to a whole
%% frame, then a PING. Waits for the PING ACK, or a GOAWAY and the close;
%% and for a response on each stream of Awaited.
h2_run(Ctx, Listener, Bytes, Awaited) ->
	Nonce = erlang:unique_integer([positive]),
	Result = with_connection(Ctx, Listener, <<"h2">>, fun(Sock) ->
		send(Sock, [mustang_http2_frame:preface(), mustang_http2_frame:settings(#{}),
			mustang_http2_frame:settings_ack()]),
		send(Sock, [Bytes, mustang_fuzz_oracle:h2_completion(Bytes, 16384)]),
		send(Sock, mustang_http2_frame:ping(Nonce)),
		h2_read(Sock, mustang_fuzz_oracle:h2_init(), #{nonce => Nonce, goaway => none,
			acked => false, awaited => Awaited, statuses => #{}}, deadline())
	end),
	case Result of
		{ok, Outcome} -> {ok, Outcome};
		{fail, Why} -> {fail, #{why => Why, sent => Bytes}}
	end.

h2_read(Sock, H2, St, Deadline) ->
	case recv(Sock, Deadline) of
		{data, Data} ->
			case mustang_fuzz_oracle:h2_feed(Data, H2) of
				{ok, Events, H2b} ->
					case h2_events(Events, St) of
						{done, Outcome} -> {ok, Outcome};
						{fail, Why} -> {fail, Why};
						{continue, St2} -> h2_read(Sock, H2b, St2, Deadline)
					end;
				{error, Why} ->
					{fail, {bad_frames, Why}}
			end;
		closed ->
			case St of
				#{goaway := none} -> {fail, {closed_without_goaway, St}};
				#{goaway := Code, awaited := []} -> {ok, {goaway, Code}};
				_ -> {fail, {responses_missing, St}}
			end;
		timeout ->
			{fail, {hang, St}}
	end.

h2_events([], #{acked := true, awaited := [], goaway := none}) ->
	{done, usable};
h2_events([], St) ->
	{continue, St};
h2_events([{ping_ack, Nonce} | _], #{nonce := Nonce, goaway := Code})
		when Code =/= none, Code =/= no_error ->
	{fail, {ping_ack_after_goaway, Code}};
h2_events([{ping_ack, Nonce} | Rest], St = #{nonce := Nonce}) ->
	h2_events(Rest, St#{acked => true});
h2_events([{goaway, _, Code} | Rest], St) ->
	h2_events(Rest, St#{goaway => Code});
h2_events([{response, Sid, Status, _, _} | Rest], St = #{awaited := Awaited, statuses := S}) ->
	case lists:member(Sid, Awaited) andalso (Status >= 500 orelse Status =:= 400
			orelse Status =:= 431) of
		true -> {fail, {error_status_for_valid_request, Sid, Status}};
		false -> h2_events(Rest, St#{awaited => Awaited -- [Sid], statuses => S#{Sid => Status}})
	end;
h2_events([{rst_stream, Sid, Code} | Rest], St = #{awaited := Awaited}) ->
	case lists:member(Sid, Awaited) of
		true -> {fail, {valid_request_reset, Sid, Code}};
		false -> h2_events(Rest, St)
	end;
h2_events([_ | Rest], St) ->
	h2_events(Rest, St).

%% Websocket.

ws_run(Ctx, Case = #{transport := h1}) ->
	ws_run_h1(Ctx, Case);
ws_run(Ctx, Case = #{transport := h2}) ->
	ws_run_h2(Ctx, Case).

%% The client's bytes (completed to a whole frame, then a probe message)
%% and what the model says the server must answer.
ws_client_bytes(Bytes) ->
	Pad = mustang_fuzz_oracle:ws_completion(Bytes, ?WS_MAX),
	ProbeText = <<"probe-", (integer_to_binary(erlang:unique_integer([positive])))/binary>>,
	Probe = mustang_fuzz_gen:ws_frame({1, 0, 1, <<1, 2, 3, 4>>, ProbeText, min}),
	All = <<Bytes/binary, Pad/binary, Probe/binary>>,
	{All, mustang_fuzz_oracle:ws_model(All, ?WS_MAX)}.

ws_run_h1(Ctx, Case = #{listener := Listener, splits := Splits}) ->
	{All, Expected} = ws_client_bytes(mustang_fuzz_gen:ws_bytes(Case)),
	ws_result(with_connection(Ctx, Listener, <<"http/1.1">>, fun(Sock) ->
		Key = base64:encode(crypto:strong_rand_bytes(16)),
		send(Sock, [<<"GET /fuzz/ws HTTP/1.1\r\nhost: localhost\r\nconnection: Upgrade\r\n"
			"upgrade: websocket\r\nsec-websocket-version: 13\r\nsec-websocket-key: ">>, Key,
			<<"\r\n\r\n">>]),
		case ws_upgraded(Sock, <<>>, Key, deadline()) of
			{ok, Rest} ->
				_ = [send(Sock, Piece) || Piece <- mustang_fuzz_gen:split(All, Splits)],
				ws_read(#{sock => Sock, deadline => deadline(), expected => Expected,
					got => [], ws => mustang_fuzz_oracle:ws_init(false)}, Rest);
			Fail ->
				Fail
		end
	end), All, Expected).

ws_upgraded(Sock, Buf, Key, Deadline) ->
	case recv(Sock, Deadline) of
		{data, Data} ->
			Buf2 = <<Buf/binary, Data/binary>>,
			case mustang_fuzz_oracle:http1_parse(Buf2, false) of
				{ok, [#{status := 101, headers := Headers}], {switch, websocket, Rest}} ->
					Accept = mustang_fuzz_oracle:ws_accept(Key),
					case proplists:get_value(<<"sec-websocket-accept">>, Headers) of
						Accept -> {ok, Rest};
						Other -> {fail, {bad_accept, Other}}
					end;
				{ok, [], {more, _}} ->
					ws_upgraded(Sock, Buf2, Key, Deadline);
				Other ->
					{fail, {no_upgrade, Other}}
			end;
		Other ->
			{fail, {no_upgrade, Other, Buf}}
	end.

%% Reads the server's frames until the connection closes. When the model
%% says the connection stays open, closes it with 1000 once every expected
%% message came; answers the server's close frame with its code.
ws_read(St = #{sock := Sock, deadline := Deadline}, Bytes) ->
	case ws_got(St, Bytes) of
		{ok, St2} ->
			case recv(Sock, Deadline) of
				{data, Data} -> ws_read(St2, Data);
				closed -> {ok, maps:get(got, St2)};
				timeout -> {fail, {hang, maps:get(got, St2)}}
			end;
		Fail ->
			Fail
	end.

ws_got(St = #{ws := WS, got := Got}, Bytes) ->
	case mustang_fuzz_oracle:ws_feed(Bytes, WS) of
		{ok, Msgs, WS2} ->
			St2 = St#{ws => WS2, got => Got ++ Msgs},
			{ok, ws_reply(Got, St2)};
		{error, Why} ->
			{fail, {bad_frames, Why, Got}}
	end.

%% Sends our close frame when it is time, once.
ws_reply(Before, St = #{got := Got, expected := {Msgs, End}}) ->
	Key = <<9, 8, 7, 6>>,
	Close = fun(Payload) -> mustang_fuzz_gen:ws_frame({1, 0, 8, Key, Payload, min}) end,
	case {End, lists:last([none | Before]), lists:last([none | Got])} of
		{_, {close, _, _}, _} ->
			St;
		{_, _, {close, none, _}} ->
			ws_send(St, Close(<<>>)), St;
		{_, _, {close, Code, _}} ->
			ws_send(St, Close(<<Code:16>>)), St;
		{open, _, _} when length(Got) =:= length(Msgs), length(Before) < length(Msgs) ->
			ws_send(St, Close(<<1000:16>>)), St;
		_ ->
			St
	end.

ws_send(#{sock := Sock, h2 := true}, Frame) ->
	send(Sock, mustang_http2_frame:data(1, fin, Frame));
ws_send(#{sock := Sock}, Frame) ->
	send(Sock, Frame).

%% Messages received against the model's.
ws_result({fail, Why}, All, _) ->
	{fail, #{why => Why, sent => All}};
ws_result({ok, Got}, All, Expected = {Msgs, End}) ->
	{Body, Last} = lists:split(max(0, length(Got) - 1), Got),
	case {End, Body =:= Msgs, Last} of
		{open, true, [{close, 1000, _}]} ->
			{ok, echo};
		{{close, Codes}, true, [{close, Code, _}]} ->
			case lists:member(Code, Codes) of
				true -> {ok, {close, Code}};
				false -> {fail, #{why => {wrong_close_code, Code, Codes}, sent => All}}
			end;
		_ ->
			{fail, #{why => {unexpected_messages, Got, Expected}, sent => All}}
	end.

%% Extended CONNECT (RFC 8441), the client's bytes in DATA frames, the
%% server's read from its DATA frames; then a PING on the same connection.
ws_run_h2(Ctx, Case = #{listener := Listener, splits := Splits}) ->
	%% Within the stream's initial window (65535).
	Bytes0 = mustang_fuzz_gen:ws_bytes(Case),
	Bytes = binary:part(Bytes0, 0, min(byte_size(Bytes0), 60000)),
	{All, Expected} = ws_client_bytes(Bytes),
	ws_result(with_connection(Ctx, Listener, <<"h2">>, fun(Sock) ->
		send(Sock, [mustang_http2_frame:preface(), mustang_http2_frame:settings(#{})]),
		{Block, _} = mustang_hpack:encode([{<<":method">>, <<"CONNECT">>},
			{<<":protocol">>, <<"websocket">>}, {<<":scheme">>, scheme(Listener)},
			{<<":path">>, <<"/fuzz/ws">>}, {<<":authority">>, <<"localhost">>},
			{<<"sec-websocket-version">>, <<"13">>}], mustang_hpack:init()),
		St0 = #{sock => Sock, h2 => true, deadline => deadline(), expected => Expected,
			got => [], ws => mustang_fuzz_oracle:ws_init(false),
			h2state => mustang_fuzz_oracle:h2_init(), phase => settings, block => Block},
		ws_h2_stream(h2_ws_read(St0, <<>>, open), All, Splits)
	end), All, Expected).

%% The stream is open: the client's bytes go, the Websocket runs until its
%% stream ends, then the connection must still answer a PING.
ws_h2_stream({ok, St = #{phase := open, sock := Sock}}, All, Splits) ->
	Pieces = lists:append([split_max(P, 16384) || P <- mustang_fuzz_gen:split(All, Splits)]),
	send(Sock, [mustang_http2_frame:data(1, nofin, P) || P <- Pieces]),
	case h2_ws_read(St, <<>>, ended) of
		{ok, St2} -> h2_ws_ping(St2);
		Fail -> Fail
	end;
ws_h2_stream({ok, St}, _, _) ->
	{fail, {no_websocket_stream, St}};
ws_h2_stream(Fail, _, _) ->
	Fail.

split_max(Bin, Max) when byte_size(Bin) =< Max -> [Bin];
split_max(Bin, Max) ->
	<<A:Max/binary, B/binary>> = Bin,
	[A | split_max(B, Max)].

%% Phases: settings (until the server's SETTINGS, which must allow
%% extended CONNECT; then the request goes), response (until its 200), open
%% (the Websocket stream), ended (the stream ended). Reads until the phase
%% is Until or ended.
h2_ws_read(St = #{sock := Sock, deadline := Deadline, h2state := H2}, Bytes, Until) ->
	case mustang_fuzz_oracle:h2_feed(Bytes, H2) of
		{ok, Events, H2b} ->
			case h2_ws_events(Events, St#{h2state => H2b}) of
				{ok, St2 = #{phase := Phase}} when Phase =:= Until; Phase =:= ended ->
					{ok, St2};
				{ok, St2} ->
					case recv(Sock, Deadline) of
						{data, Data} -> h2_ws_read(St2, Data, Until);
						Other -> {fail, {http2_connection, Other, maps:get(phase, St2),
							maps:get(got, St2)}}
					end;
				Fail ->
					Fail
			end;
		{error, Why} ->
			{fail, {bad_frames, Why}}
	end.

h2_ws_events([], St) ->
	{ok, St};
h2_ws_events([{settings, Settings} | Rest], St = #{phase := settings, sock := Sock,
		block := Block}) ->
	case Settings of
		#{enable_connect_protocol := true} ->
			send(Sock, [mustang_http2_frame:settings_ack(),
				mustang_http2_frame:headers(1, nofin, Block)]),
			h2_ws_events(Rest, St#{phase => response});
		_ ->
			{fail, {extended_connect_not_enabled, Settings}}
	end;
h2_ws_events([{response, 1, 200, _, false} | Rest], St = #{phase := response}) ->
	h2_ws_events(Rest, St#{phase => open});
h2_ws_events([{response, 1, Status, _, _} | _], #{phase := response}) ->
	{fail, {connect_refused, Status}};
h2_ws_events([{data, 1, Fin, Data} | Rest], St = #{sock := Sock}) ->
	_ = byte_size(Data) > 0 andalso send(Sock, [mustang_http2_frame:window_update(byte_size(Data)),
		mustang_http2_frame:window_update(1, byte_size(Data))]),
	case ws_got(St, Data) of
		{ok, St2} when Fin =:= fin -> h2_ws_events(Rest, St2#{phase => ended});
		{ok, St2} -> h2_ws_events(Rest, St2);
		Fail -> Fail
	end;
h2_ws_events([{rst_stream, 1, Code} | Rest], St) when Code =:= no_error; Code =:= cancel;
		Code =:= stream_closed ->
	h2_ws_events(Rest, St#{phase => ended});
h2_ws_events([{rst_stream, 1, Code} | _], St) ->
	{fail, {websocket_stream_reset, Code, maps:get(got, St)}};
h2_ws_events([{goaway, _, Code} | _], St) ->
	{fail, {goaway, Code, maps:get(got, St)}};
h2_ws_events([_ | Rest], St) ->
	h2_ws_events(Rest, St).

%% The Websocket stream ended: the connection must still answer a PING.
h2_ws_ping(St = #{sock := Sock, got := Got}) ->
	Nonce = erlang:unique_integer([positive]),
	send(Sock, mustang_http2_frame:ping(Nonce)),
	h2_ws_pong(St, Nonce, Got).

h2_ws_pong(St = #{sock := Sock, deadline := Deadline, h2state := H2}, Nonce, Got) ->
	case recv(Sock, Deadline) of
		{data, Data} ->
			case mustang_fuzz_oracle:h2_feed(Data, H2) of
				{ok, Events, H2b} ->
					case [E || E <- Events, element(1, E) =:= goaway
							orelse E =:= {ping_ack, Nonce}] of
						[{ping_ack, _} | _] -> {ok, Got};
						[{goaway, _, Code} | _] -> {fail, {goaway_after_websocket, Code, Got}};
						[] -> h2_ws_pong(St#{h2state => H2b}, Nonce, Got)
					end;
				{error, Why} ->
					{fail, {bad_frames, Why}}
			end;
		Other ->
			{fail, {no_ping_ack_after_websocket, Other, Got}}
	end.

%% The oracles themselves: they accept what a correct server sends and
%% refuse what a broken one would.

oracle_self_check(_) ->
	doc("The fuzz oracles accept valid server output and refuse broken output (bad status "
		"lines, cut bodies, bytes after connection: close, HTTP/2 without SETTINGS first, "
		"uppercase field names, INTERNAL_ERROR, masked Websocket frames), and the "
		"Websocket model predicts 1002, 1007, 1009, pongs and echoes."),
	O = mustang_fuzz_oracle,
	Ok = <<"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok">>,
	Chunked = <<"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n2\r\nab\r\n0\r\n\r\n">>,
	{ok, [#{status := 200, body := <<"ok">>}], <<>>} = O:http1_parse(Ok, false),
	{ok, [#{body := <<"ab">>}, #{body := <<"ok">>}], <<>>} =
		O:http1_parse(<<Chunked/binary, Ok/binary>>, true),
	%% A response to HEAD, then another; without a HEAD sent, a missing body.
	{ok, [#{status := 200}, #{body := <<"ok">>}], <<>>} = O:http1_parse(
		<<"HTTP/1.1 200 OK\r\ncontent-length: 12\r\n\r\n", Ok/binary>>, true, true),
	{error, _} = O:http1_parse(<<"HTTP/1.1 400 Bad Request\r\ncontent-length: 1\r\n"
		"connection: close\r\n\r\n">>, true),
	{ok, [], {more, _}} = O:http1_parse(<<"HTTP/1.1 200 OK\r\ncontent">>, false),
	{error, {incomplete_head, _}} = O:http1_parse(<<"HTTP/1.1 200 OK\r\ncontent">>, true),
	{error, {bad_status_line, _}} = O:http1_parse(<<"HTTP/1.1 2x0 OK\r\n\r\n">>, false),
	{error, {bad_status_line, _}} = O:http1_parse(<<"HTTP/1.1 200 OK\nhello">>, false),
	{error, {bad_header_line, _}} = O:http1_parse(<<"HTTP/1.1 200 OK\r\nbad\r\n\r\n">>, true),
	{error, _} = O:http1_parse(<<"HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nabc">>, true),
	{error, {bytes_after_connection_close, _, _}} = O:http1_parse(<<"HTTP/1.1 400 Bad Request"
		"\r\nconnection: close\r\ncontent-length: 0\r\n\r\n", Ok/binary>>, true),
	{error, _} = O:http1_parse(<<"HTTP/1.1 204 No Content\r\ncontent-length: 2\r\n\r\nok">>, true),
	{ok, [#{status := 101}], {switch, websocket, <<1, 2>>}} = O:http1_parse(
		<<"HTTP/1.1 101 Switching Protocols\r\nupgrade: websocket\r\n\r\n", 1, 2>>, false),
	%% HTTP/2.
	Settings = iolist_to_binary(mustang_http2_frame:settings(#{})),
	{ok, [{settings, #{}}, {ping_ack, 7}], _} = O:h2_feed(<<Settings/binary,
		(mustang_http2_frame:ping_ack(7))/binary>>, O:h2_init()),
	{error, {server_preface_not_settings, _}} = O:h2_feed(mustang_http2_frame:ping_ack(7),
		O:h2_init()),
	{error, {internal_error, _}} = O:h2_feed(iolist_to_binary([Settings,
		mustang_http2_frame:goaway(0, internal_error, <<>>)]), O:h2_init()),
	Upper = iolist_to_binary(mustang_http2_frame:headers(1, fin, element(1, mustang_hpack:encode(
		[{<<":status">>, <<"200">>}, {<<"Server">>, <<"x">>}], mustang_hpack:init())))),
	{error, {{bad_response_fields, _}, _}} = O:h2_feed(<<Settings/binary, Upper/binary>>,
		O:h2_init()),
	<<0>> = O:h2_completion(<<2:24, 6:8, 0:8, 0:32, 1>>, 16384),
	<<0, 0, 0, 0, 0>> = O:h2_completion(<<20000:24, 0:8>>, 16384),
	<<>> = O:h2_completion(<<20000:24, 0:48, 1>>, 16384),
	%% Websocket: the server's frames (the key and accept of RFC 6455 1.3).
	<<"s3pPLMBiTxaQ9kYGzzhZRbK+xOo=">> = O:ws_accept(<<"dGhlIHNhbXBsZSBub25jZQ==">>),
	{ok, [{close, 1002, <<>>}], _} = O:ws_feed(<<16#88, 2, 1002:16>>, O:ws_init(false)),
	{error, {masked_server_frame, _}} = O:ws_feed(<<16#81, 16#80, 0:32>>, O:ws_init(false)),
	{error, {text_not_utf8, _}} = O:ws_feed(<<16#81, 1, 16#ff>>, O:ws_init(false)),
	%% Websocket: the model.
	F = fun(Fin, Op, Payload) -> mustang_fuzz_gen:ws_frame({Fin, 0, Op, <<1, 2, 3, 4>>, Payload,
		min}) end,
	{[], {close, [1002]}} = O:ws_model(<<16#81, 1, $a>>, 100),
	{[{pong, <<"p">>}, {text, <<"héllo"/utf8>>}], open} = O:ws_model(<<(F(0, 1, <<"hé"/utf8>>))/binary,
		(F(1, 9, <<"p">>))/binary, (F(1, 0, <<"llo">>))/binary>>, 100),
	{[], {close, [1007]}} = O:ws_model(F(1, 1, <<16#ed, 16#a0, 16#80>>), 100),
	{[], {close, [1007]}} = O:ws_model(F(1, 1, <<16#e2, 16#82>>), 100),
	{[], {close, [1009]}} = O:ws_model(F(1, 2, binary:copy(<<0>>, 101)), 100),
	{[], {close, [3000]}} = O:ws_model(F(1, 8, <<3000:16, "bye">>), 100),
	{[], {close, [1002]}} = O:ws_model(F(1, 8, <<1005:16>>), 100),
	{[], {more, 3}} = O:ws_model(binary:part(F(1, 1, <<"abc">>), 0, 6), 100),
	<<0, 0, 0>> = O:ws_completion(binary:part(F(1, 1, <<"abc">>), 0, 6), 100),
	ok.
