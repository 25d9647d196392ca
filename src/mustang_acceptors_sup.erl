%% Owns the listen socket (it closes when this supervisor stops) and
%% supervises the acceptors.
-module(mustang_acceptors_sup).
-behaviour(supervisor).

-export([start_link/3]).
-export([init/1]).

-spec start_link(mustang:ref(), module(), map()) -> {ok, pid()} | {error, any()}.
start_link(Ref, Transport, TransOpts) ->
	supervisor:start_link(?MODULE, {Ref, Transport, TransOpts}).

-spec init({mustang:ref(), module(), map()})
	-> {ok, {supervisor:sup_flags(), [supervisor:child_spec()]}}.
init({Ref, Transport, TransOpts = #{num_acceptors := NumAcceptors, socket_opts := SocketOpts}}) ->
	case Transport:listen(SocketOpts) of
		{ok, LSocket} ->
			{ok, {_, Port}} = Transport:sockname(LSocket),
			ok = mustang_registry:set_port(Ref, Port),
			ok = mustang_registry:set_listen_socket(Ref, LSocket),
			ConnsSups = list_to_tuple(mustang_registry:get_conns_sups(Ref)),
			Limit = mustang_registry:get_conn_limit(Ref),
			Logger = maps:get(logger, TransOpts, logger),
			Acceptors = [#{
				id => {mustang_acceptor, Id},
				start => {mustang_acceptor, start_link,
					[LSocket, Transport, erlang:append_element(
						element(1 + (Id rem tuple_size(ConnsSups)), ConnsSups), Limit), Logger]},
				%% Closing the listen socket ends them (mustang:stop_acceptors/2).
				restart => transient,
				shutdown => brutal_kill
			} || Id <- lists:seq(1, NumAcceptors)],
			{ok, {#{strategy => one_for_one, intensity => 1 + NumAcceptors, period => 5}, Acceptors}};
		{error, Reason} ->
			%% mustang:start_clear/3 turns this into {error, {listen_error, Reason}}.
			exit({listen_error, Reason})
	end.
