%% mustang_tracer_h driven through its callbacks, with fake_stream_h as the
%% rest of the chain (no sockets). The test process plays the connection.
-module(mustang_tracer_h_tests).

-include_lib("eunit/include/eunit.hrl").

req() ->
	req(#{}).

req(Extra) ->
	maps:merge(#{method => <<"GET">>, version => 'HTTP/1.1', scheme => <<"http">>,
		host => <<"example.org">>, port => 80, path => <<"/api/items">>, qs => <<>>,
		headers => #{<<"host">> => <<"example.org">>, <<"x-trace">> => <<"yes">>},
		peer => {{10, 0, 0, 7}, 50000}, sock => {{10, 0, 0, 1}, 80}, cert => undefined,
		ref => test_ref, pid => self(), streamid => 1, mode => inline,
		has_body => false, body_length => 0}, Extra).

%% The callback keeps the events and sends them all to the test process
%% when the stream ends (sending each one would itself be traced).
collector() ->
	Self = self(),
	fun
		(init, {StreamID, Req, _Opts}) -> {StreamID, maps:get(path, Req), []};
		(terminate, {StreamID, Path, Events}) -> Self ! {traced, StreamID, Path,
			lists:reverse(Events)};
		(Event, {StreamID, Path, Events}) -> {StreamID, Path, [Event | Events]}
	end.

opts(Specs, Extra) ->
	maps:merge(#{stream_handlers => [fake_stream_h], tracer_callback => collector(),
		tracer_match_specs => Specs}, Extra).

traced() ->
	receive {traced, StreamID, Path, Events} -> {StreamID, Path, Events}
	after 2000 -> error(not_traced) end.

not_traced() ->
	receive {traced, _, _, _} = Msg -> error({unexpected_trace, Msg}) after 100 -> ok end.

own_flags() ->
	{flags, Flags} = erlang:trace_info(self(), flags),
	Flags.

%% One stream with these specs, the test process sending itself a message
%% while it is traced; whether it was traced.
run(Specs, Req) ->
	run(Specs, Req, #{}).

run(Specs, Req, Extra) ->
	{[], S1} = mustang_tracer_h:init(1, Req, opts(Specs, Extra#{fake_pid => self()})),
	%% Traced means traced from init/3 on.
	Traced = own_flags() =/= [],
	self() ! {ping, make_ref()},
	receive {ping, _} -> ok end,
	_ = mustang_tracer_h:terminate(1, normal, S1),
	receive {fake, terminate, 1, normal} -> ok after 1000 -> error(next_not_terminated) end,
	?assertEqual([], own_flags()),
	receive
		{traced, 1, _, Events} when Traced -> {true, Events}
	after 100 ->
		Traced
	end.

match_specs_test_() ->
	Fun = fun(1, #{path := P}, #{tracer_match_specs := _}) -> P =:= <<"/api/items">> end,
	Cases = [
		{[], true},
		{[{method, <<"GET">>}], true},
		{[{method, <<"POST">>}], false},
		{[{host, <<"example.org">>}], true},
		{[{host, <<"example.com">>}], false},
		{[{path, <<"/api/items">>}], true},
		{[{path, <<"/api">>}], false},
		{[{path_start, <<"/api/">>}], true},
		{[{path_start, <<"/api/items/1">>}], false},
		{[{path_start, <<"/other">>}], false},
		{[{header, <<"x-trace">>}], true},
		{[{header, <<"x-other">>}], false},
		{[{header, <<"x-trace">>, <<"yes">>}], true},
		{[{header, <<"x-trace">>, <<"no">>}], false},
		{[{header, <<"x-other">>, <<"yes">>}], false},
		{[{peer_ip, {10, 0, 0, 7}}], true},
		{[{peer_ip, {10, 0, 0, 8}}], false},
		{[Fun], true},
		{[fun(_, _, _) -> false end], false},
		%% All must hold.
		{[{method, <<"GET">>}, {path_start, <<"/api">>}, {peer_ip, {10, 0, 0, 7}}], true},
		{[{method, <<"GET">>}, {path_start, <<"/api">>}, {peer_ip, {10, 0, 0, 8}}], false}
	],
	[{lists:flatten(io_lib:format("~0p", [Specs])), fun() ->
		case {Expected, run(Specs, req())} of
			{true, {true, Events}} ->
				%% The message the process sent itself is among the events.
				?assert(lists:any(fun
					({trace_ts, P, send, {ping, _}, P, _}) -> P =:= self();
					(_) -> false
				end, Events)),
				?assert(lists:any(fun
					({trace_ts, P, 'receive', {ping, _}, _}) -> P =:= self();
					(_) -> false
				end, Events));
			{false, false} ->
				ok;
			Other ->
				error({Expected, Other})
		end
	end} || {Specs, Expected} <- Cases].

%% Without a callback or without match specs nothing is traced; the chain
%% still runs.
options_required_test() ->
	Opts = #{stream_handlers => [fake_stream_h], fake_pid => self(),
		fake_init => [{response, 200, #{}, <<>>}]},
	lists:foreach(fun(O) ->
		{[{response, 200, #{}, <<>>}], S} = mustang_tracer_h:init(1, req(), O),
		?assertEqual([], own_flags()),
		_ = mustang_tracer_h:terminate(1, normal, S),
		receive {fake, terminate, 1, normal} -> ok after 1000 -> error(next_not_terminated) end
	end, [Opts, Opts#{tracer_callback => collector()}, Opts#{tracer_match_specs => []}]),
	not_traced().

%% Inline mode: the connection process is traced from init to terminate
%% only, with the flags given.
inline_flags_test() ->
	{[], S1} = mustang_tracer_h:init(1, req(), opts([], #{tracer_flags => [send]})),
	?assertEqual([send], own_flags()),
	self() ! hello,
	receive hello -> ok end,
	{[], S2} = mustang_tracer_h:info(1, other, S1),
	_ = mustang_tracer_h:terminate(1, normal, S2),
	?assertEqual([], own_flags()),
	self() ! after_terminate,
	receive after_terminate -> ok end,
	{1, <<"/api/items">>, Events} = traced(),
	Self = self(),
	?assertEqual([{trace, Self, send, hello, Self}], Events).

%% Process mode: the process the rest of the chain starts in init is traced
%% from its first instruction; the connection is not traced after init.
process_mode_test() ->
	Self = self(),
	Spawn = fun(_, _, _) ->
		Pid = spawn(fun() ->
			%% Right away: sent before anyone could trace this process
			%% after the fact.
			Self ! {child_says, hi},
			receive go -> Self ! {child_done, self()} end
		end),
		[{spawn, Pid, 5000}]
	end,
	Opts = opts([{path_start, <<"/api">>}], #{fake_init => Spawn,
		tracer_flags => [send, 'receive', procs, set_on_spawn]}),
	{[{spawn, Child, 5000}], S1} = mustang_tracer_h:init(1, req(#{mode => process}), Opts),
	?assertEqual([], own_flags()),
	{flags, ChildFlags} = erlang:trace_info(Child, flags),
	?assertEqual(lists:sort([send, 'receive', procs, set_on_spawn]), lists:sort(ChildFlags)),
	receive {child_says, hi} -> ok end,
	Child ! go,
	receive {child_done, Child} -> ok end,
	%% Not the connection's own messages after init.
	self() ! not_traced,
	receive not_traced -> ok end,
	_ = mustang_tracer_h:terminate(1, normal, S1),
	{1, _, Events} = traced(),
	?assert(lists:member({trace, Child, send, {child_says, hi}, Self}, Events)),
	?assert(lists:member({trace, Child, 'receive', go}, Events)),
	?assert(lists:member({trace, Child, send, {child_done, Child}, Self}, Events)),
	?assertNot(lists:any(fun(E) -> lists:member(not_traced, tuple_to_list(E)) end, Events)).

%% A process announced later with {spawn, ...} is traced from then on.
late_spawn_test() ->
	Self = self(),
	Opts = opts([], #{tracer_flags => [send]}),
	{[], S1} = mustang_tracer_h:init(1, req(#{mode => process}), Opts),
	Pid = spawn(fun() -> receive go -> Self ! {late, self()} end end),
	Cmd = {spawn, Pid, 5000},
	{[Cmd], S2} = mustang_tracer_h:info(1, {fake_commands, [Cmd]}, S1),
	Pid ! go,
	receive {late, Pid} -> ok end,
	_ = mustang_tracer_h:terminate(1, normal, S2),
	{1, _, Events} = traced(),
	?assertEqual([{trace, Pid, send, {late, Pid}, Self}], Events).

%% Non-matching streams in process mode leave the spawned process alone.
process_mode_no_match_test() ->
	Spawn = fun(_, _, _) -> [{spawn, spawn(fun() -> receive stop -> ok end end), 5000}] end,
	Opts = opts([{path, <<"/nope">>}], #{fake_init => Spawn}),
	{[{spawn, Child, _}], S1} = mustang_tracer_h:init(1, req(#{mode => process}), Opts),
	?assertEqual({flags, []}, erlang:trace_info(Child, flags)),
	_ = mustang_tracer_h:terminate(1, normal, S1),
	Child ! stop,
	not_traced().

%% A connection that something else traces is left to it: the stream is
%% not traced and the other tracer keeps its flags.
already_traced_test() ->
	Other = spawn(fun() -> receive stop -> ok end end),
	1 = erlang:trace(self(), true, [procs, {tracer, Other}]),
	try
		{[], S1} = mustang_tracer_h:init(1, req(), opts([], #{tracer_flags => [send]})),
		?assertEqual({tracer, Other}, erlang:trace_info(self(), tracer)),
		?assertEqual([procs], own_flags()),
		_ = mustang_tracer_h:terminate(1, normal, S1),
		?assertEqual({tracer, Other}, erlang:trace_info(self(), tracer)),
		?assertEqual([procs], own_flags()),
		not_traced()
	after
		_ = erlang:trace(self(), false, [all]),
		Other ! stop
	end.

%% A crashing callback is logged; the stream goes on, tracing stops.
callback_crash_test() ->
	register(fake_logger_sink, self()),
	try
		Crash = fun(init, _) -> ok; (_, _) -> error(boom) end,
		Opts = #{stream_handlers => [fake_stream_h], tracer_callback => Crash,
			tracer_match_specs => [], tracer_flags => [send], logger => fake_logger},
		{[], S1} = mustang_tracer_h:init(1, req(), Opts),
		self() ! one,
		receive one -> ok end,
		receive {fake_logger, error, _, [error, boom, _, _]} -> ok
		after 1000 -> error(no_log) end,
		_ = mustang_tracer_h:terminate(1, normal, S1),
		?assertEqual([], own_flags())
	after
		unregister(fake_logger_sink)
	end.

%% The tracer process ends with the stream, and when the connection dies.
tracer_lifetime_test() ->
	Self = self(),
	Opts = opts([], #{}),
	Conn = spawn(fun() ->
		{[], _} = mustang_tracer_h:init(1, req(#{pid => self()}), Opts),
		Self ! {tracers, [P || P <- processes(), P =/= self(),
			erlang:trace_info(self(), tracer) =:= {tracer, P}]},
		receive die -> exit(died) end
	end),
	Tracer = receive {tracers, [T]} -> T after 1000 -> error(no_tracer) end,
	MRef = monitor(process, Tracer),
	Conn ! die,
	receive {'DOWN', MRef, process, Tracer, normal} -> ok after 2000 -> error(tracer_alive) end,
	%% It still called terminate.
	{1, <<"/api/items">>, _} = traced().

%% Other callbacks pass everything through.
passthrough_test() ->
	Cmds = [{flow, 5}, {unknown, x}],
	Opts = opts([{path, <<"/nope">>}], #{fake_data => Cmds}),
	{[], S1} = mustang_tracer_h:init(1, req(), Opts),
	{Cmds, S2} = mustang_tracer_h:data(1, fin, <<"body">>, S1),
	{Cmds, S3} = mustang_tracer_h:info(1, {fake_commands, Cmds}, S2),
	_ = mustang_tracer_h:terminate(1, normal, S3),
	Resp = {response, 400, #{}, <<>>},
	Resp2 = {response, 400, #{<<"a">> => <<"b">>}, <<>>},
	Resp2 = mustang_tracer_h:early_error(1, x, #{}, Resp,
		Opts#{fake_early_error => fun(_) -> Resp2 end}).
