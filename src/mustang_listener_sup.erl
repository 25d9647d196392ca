%% One listener: its connection supervisor shards, then the acceptors that
%% own the listen socket. rest_for_one, so that if a shard dies the acceptors
%% restart and pick up the new shard pids; on stop, acceptors go first (no new
%% connections) and the shards then drain.
-module(mustang_listener_sup).
-behaviour(supervisor).

-export([start_link/3]).
-export([acceptors_spec/3]).
-export([init/1]).

-spec start_link(mustang:ref(), module(), map()) -> {ok, pid()} | {error, any()}.
start_link(Ref, Transport, TransOpts) ->
	supervisor:start_link(?MODULE, {Ref, Transport, TransOpts}).

-spec init({mustang:ref(), module(), map()})
	-> {ok, {supervisor:sup_flags(), [supervisor:child_spec()]}}.
init({Ref, Transport, TransOpts = #{num_conns_sups := NumConnsSups, max_connections := Max}}) ->
	%% Made here, before the shards: a restarted listener starts from zero.
	ok = mustang_registry:set_conn_limit(Ref, mustang_conn_limit:new(NumConnsSups, Max)),
	ConnsSups = [#{
		id => {mustang_conns_sup, Id},
		start => {mustang_conns_sup, start_link, [Ref, Id, Transport, TransOpts]},
		type => supervisor,
		shutdown => infinity
	} || Id <- lists:seq(1, NumConnsSups)],
	Children = case Transport of
		%% QUIC: the endpoint owns the UDP socket the connections send on,
		%% so it starts first and stops last (after the shards drained).
		mustang_quic ->
			[#{id => mustang_quic_endpoint,
				start => {mustang_quic_endpoint, start_link,
					[Ref, TransOpts, mustang_registry:get_protocol_opts(Ref)]},
				type => worker,
				shutdown => 5000} | ConnsSups];
		_ ->
			ConnsSups ++ [acceptors_spec(Ref, Transport, TransOpts)]
	end,
	{ok, {#{strategy => rest_for_one, intensity => 1, period => 5}, Children}}.

%% The acceptors and their listen socket: stopped and started again by
%% mustang:suspend_listener/1 and resume_listener/1.
-spec acceptors_spec(mustang:ref(), module(), map()) -> supervisor:child_spec().
acceptors_spec(Ref, Transport, TransOpts) ->
	#{
		id => mustang_acceptors_sup,
		start => {mustang_acceptors_sup, start_link, [Ref, Transport, TransOpts]},
		type => supervisor,
		shutdown => infinity
	}.
