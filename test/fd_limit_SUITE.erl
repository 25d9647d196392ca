%% The file-descriptor limit (issue 12, point 5): a listener in a peer node
%% started under `ulimit -n 64' is given more connections than it has
%% descriptors. Its acceptors must pause (mustang_acceptor: accept fails
%% with emfile), log a bounded number of lines, keep their pids (no crash, no
%% supervisor restart), and accept again once connections close. The same
%% with the VM's port table full (erl +Q 1024, system_limit).
%%
%% The peer is an OTP `peer' node started through /bin/sh (for the ulimit),
%% controlled over its standard input and output (no distribution: this
%% node need not be distributed, and the peer spends no descriptor on it).
-module(fd_limit_SUITE).
-compile([export_all, nowarn_export_all]).

-include_lib("common_test/include/ct.hrl").
-include_lib("stdlib/include/assert.hrl").

-import(mustang_test, [doc/1]).

%% Descriptors the peer node may open; it uses about 17 of them at start.
-define(FD_LIMIT, 64).
%% Connections opened against it: well past the limit.
-define(CONNECTIONS, 150).
-define(ACCEPTORS, 4).

all() ->
	[accept_pauses_at_fd_limit, accept_pauses_at_port_limit].

init_per_suite(Config) ->
	{ok, _} = application:ensure_all_started(mustang),
	Config.

end_per_suite(_) ->
	ok.

accept_pauses_at_fd_limit(_) ->
	doc("A listener out of file descriptors (ulimit -n 64): the extra connections wait, "
		"the acceptors keep their pids, at most a few log lines (not one per failed "
		"accept), and once connections close the waiting ones and a new one are served."),
	with_peer(["-c", "ulimit -n " ++ integer_to_list(?FD_LIMIT) ++ " && exec \"$0\" \"$@\""],
		[], fun(Peer) -> fd_limit(Peer, ?CONNECTIONS, emfile, 0) end).

accept_pauses_at_port_limit(_) ->
	doc("The same when the VM's port table is full (erl +Q 1024: accept fails with "
		"system_limit), where the acceptors used to retry at once and without a word: "
		"they pause, say so, and do not spin. Here the VM has taken the connection from "
		"the backlog before it finds no port for it, and closes it: each failed accept "
		"loses one waiting connection, so the pause also bounds the loss (at most 60 of "
		"the 280 waiting while the acceptors retry for 5 s, 32 seen; retrying at once "
		"lost all 280)."),
	with_peer(["-c", "exec \"$0\" \"$@\""], ["+Q", "1024"],
		fun(Peer) -> fd_limit(Peer, 1300, system_limit, 60) end).

%% A peer node started through /bin/sh with ShArgs, then erl with Args.
with_peer(ShArgs, Args, Fun) ->
	Erl = os:find_executable("erl"),
	Paths = [P || P <- code:get_path(), string:find(P, "_build") =/= nomatch],
	{ok, Peer, _} = peer:start_link(#{
		exec => {"/bin/sh", ShArgs ++ [Erl]},
		connection => standard_io,
		args => lists:append([["-pa", P] || P <- Paths]) ++ Args
	}),
	try
		Fun(Peer)
	after
		peer:stop(Peer)
	end.

%% MaxLost: waiting connections that may be closed unanswered.
fd_limit(Peer, Connections, Reason, MaxLost) ->
	{Port, Acceptors} = peer:call(Peer, ?MODULE, peer_start, []),
	?assertEqual(?ACCEPTORS, length(Acceptors)),
	#{status := 200} = mustang_test:get(Port, "/"),
	Socks = [begin
		{ok, S} = gen_tcp:connect("127.0.0.1", Port, [binary, {active, false}]),
		S
	end || _ <- lists:seq(1, Connections)],
	%% Time for the acceptors to take what they can and hit the limit, and
	%% for a few pauses of 1 s (the longest).
	timer:sleep(4000),
	#{reductions := Reductions0} = peer:call(Peer, ?MODULE, peer_state, []),
	timer:sleep(1000),
	#{acceptors := Acceptors2, active := Active, errors := Errors, notices := Notices0,
		lines := Lines, reductions := Reductions1} = peer:call(Peer, ?MODULE, peer_state, []),
	ct:log("At the limit: ~b of ~b connections accepted, ~b error lines, ~b notices, "
		"~b reductions in the acceptors in 1 s:~n~p",
		[Active, Connections, Errors, Notices0, Reductions1 - Reductions0, Lines]),
	?assert(Active < Connections, {not_at_the_limit, Active}),
	?assert(Active > 10, {too_few_accepted, Active}),
	?assertEqual(Acceptors, Acceptors2),
	%% One line at the start of each acceptor's run of failures, not one
	%% per failed accept (10 a second for each acceptor before the pause).
	?assert(Errors >= 1, no_out_of_descriptors_line),
	?assert(Errors =< ?ACCEPTORS, {too_many_lines, Errors}),
	Reason = reason(Lines),
	%% Pausing, not spinning (an acceptor retrying at once does millions).
	?assert(Reductions1 - Reductions0 < 100000, {spinning, Reductions1 - Reductions0}),
	%% The descriptors come back: every connection gets its response, those
	%% that waited in the backlog too.
	%% The backlog is served in order: by the time a connection's turn
	%% comes, those before it are closed.
	[gen_tcp:close(S) || S <- lists:sublist(Socks, 40)],
	Served = [served_and_closed(S) || S <- lists:nthtail(40, Socks)],
	Lost = length([closed || closed <- Served]),
	ct:log("Of the ~b connections left, ~b served, ~b closed unanswered",
		[length(Served), length(Served) - Lost, Lost]),
	?assert(Lost =< MaxLost, {lost, Lost}),
	Start = erlang:monotonic_time(millisecond),
	#{status := 200} = mustang_test:get(Port, "/"),
	Waited = erlang:monotonic_time(millisecond) - Start,
	#{acceptors := Acceptors3, errors := Errors2, notices := Notices, lines := Lines2} =
		peer:call(Peer, ?MODULE, peer_state, []),
	ct:log("After closing the connections: a new request answered in ~b ms; ~b error lines, "
		"~b notices:~n~p", [Waited, Errors2, Notices, Lines2]),
	?assertEqual(Acceptors, Acceptors3),
	?assert(Waited < 5000, {slow_to_resume, Waited}),
	?assert(Notices >= 1, no_accepting_again_line),
	ok.

%% The error of the out-of-descriptors lines (all the same).
reason(Lines) ->
	[Reason] = lists:usort([list_to_atom(R) || {error, Line} <- Lines,
		{match, [R]} <- [re:run(Line, "accept failed: ([a-z_]+)",
			[{capture, all_but_first, list}])]]),
	Reason.

%% A connection accepted at the limit or waiting in the backlog: served.
%% Or closed by the VM unanswered (port table full): closed.
served_and_closed(S) ->
	_ = gen_tcp:send(S, "GET / HTTP/1.1\r\nhost: localhost\r\nconnection: close\r\n\r\n"),
	Result = case mustang_test:recv_response(S, #{timeout => 10000}) of
		#{status := 200} -> served;
		{error, closed} -> closed
	end,
	gen_tcp:close(S),
	Result.

%% In the peer node.

peer_start() ->
	{ok, _} = application:ensure_all_started(mustang),
	ok = logger:remove_handler(default),
	%% The table outlives this call: a process of its own holds it.
	Self = self(),
	spawn(fun() ->
		Self ! {tab, ets:new(?MODULE, [public, duplicate_bag])},
		receive after infinity -> ok end
	end),
	Tab = receive {tab, T} -> T end,
	ok = logger:add_handler(?MODULE, ?MODULE, #{level => all, config => #{tab => Tab}}),
	Dispatch = mustang_router:compile([{'_', [{"/", hello_h, []}]}]),
	{ok, ListenerSup} = mustang:start_clear(fd_limit, #{port => 0, num_acceptors => ?ACCEPTORS},
		#{env => #{dispatch => Dispatch}, request_timeout => 60000}),
	persistent_term:put({?MODULE, listener_sup}, ListenerSup),
	%% What peer_state/0 runs, loaded now: at the limit nothing can be.
	_ = [text(M) || M <- [{string, "x"}, {report, #{}}, {"~p~b~s", [a, 1, "s"]}]],
	{mustang:get_port(fd_limit), acceptors()}.

acceptors() ->
	ListenerSup = persistent_term:get({?MODULE, listener_sup}),
	{_, AcceptorsSup, _, _} = lists:keyfind(mustang_acceptors_sup, 1,
		supervisor:which_children(ListenerSup)),
	lists:sort([Pid || {_, Pid, _, _} <- supervisor:which_children(AcceptorsSup)]).

peer_state() ->
	{ok, #{config := #{tab := Tab}}} = logger:get_handler_config(?MODULE),
	Lines = [{Level, Line} || {Level, Msg} <- ets:tab2list(Tab),
		lists:prefix("mustang acceptor", Line = text(Msg))],
	#{acceptors => acceptors(), active => mustang:active_connections(fd_limit),
		reductions => lists:sum([R || P <- acceptors(),
			{reductions, R} <- [erlang:process_info(P, reductions)]]),
		errors => length([x || {error, _} <- Lines]),
		notices => length([x || {notice, _} <- Lines]), lines => Lines}.

%% logger handler callback (in the peer): keeps each event's level and
%% message as they are. No formatting here: at the descriptor limit no
%% module can be loaded, and a handler that crashes is removed.
log(#{level := Level, msg := Msg}, #{config := #{tab := Tab}}) ->
	true = ets:insert(Tab, {Level, Msg}),
	ok.

text({string, S}) -> unicode:characters_to_list(S);
text({report, R}) -> io_lib:format("~0p", [R]);
text({Format, Args}) -> lists:flatten(io_lib:format(Format, Args)).
