%% Owns the ETS table that holds each listener's options, its port and its
%% connection supervisors. Connection processes read their protocol options
%% here when they start, so mustang:set_env/3 applies to new connections
%% without restarting the listener.
%%
%% The options a connection process keeps (its protocol's defaults merged
%% with the listener's options, get_conn_opts/2) are in persistent_term: a
%% connection reads them without copying them onto its heap (ETS would copy
%% them, the dispatch list with them, into every connection: about 1.5 KiB
%% of each idle HTTP/1.1 connection, 2 KiB of each HTTP/2 one). Replacing
%% them (set_protocol_opts/2) or erasing them (delete_listener/1) makes the
%% runtime scan every process once and copy the old ones into the
%% connections still using them: rare events.
-module(mustang_registry).
-behaviour(gen_server).

-export([start_link/0]).
-export([set_listener/4]).
-export([delete_listener/1]).
-export([get_protocol_opts/1]).
-export([set_protocol_opts/2]).
-export([get_conn_opts/2]).
-export([get_conn_chain/2]).
-export([get_transport_opts/1]).
-export([set_transport_opts/2]).
-export([get_transport/1]).
-export([set_given_transport_opts/2]).
-export([get_given_transport_opts/1]).
-export([set_tls_opts/2]).
-export([get_tls_opts/1]).
-export([set_port/2]).
-export([get_port/1]).
-export([set_listen_socket/2]).
-export([get_listen_socket/1]).
-export([set_conns_sup/3]).
-export([get_conns_sups/1]).
-export([set_conn_limit/2]).
-export([get_conn_limit/1]).

-export([init/1]).
-export([handle_call/3]).
-export([handle_cast/2]).

-define(TAB, ?MODULE).

-spec start_link() -> {ok, pid()} | {error, any()}.
start_link() ->
	gen_server:start_link({local, ?MODULE}, ?MODULE, [], []).

-spec set_listener(mustang:ref(), module(), map(), map()) -> ok.
set_listener(Ref, Transport, TransOpts, ProtoOpts) ->
	true = ets:insert(?TAB, [{{transport, Ref}, Transport}, {{trans_opts, Ref}, TransOpts},
		{{proto_opts, Ref}, ProtoOpts}]),
	put_conn_opts(Ref, ProtoOpts).

-spec delete_listener(mustang:ref()) -> ok.
delete_listener(Ref) ->
	true = ets:match_delete(?TAB, {{'_', Ref}, '_'}),
	true = ets:match_delete(?TAB, {{conns_sup, Ref, '_'}, '_'}),
	_ = persistent_term:erase({?MODULE, Ref}),
	ok.

-spec get_protocol_opts(mustang:ref()) -> map().
get_protocol_opts(Ref) ->
	ets:lookup_element(?TAB, {proto_opts, Ref}, 2).

-spec set_protocol_opts(mustang:ref(), map()) -> ok.
set_protocol_opts(Ref, Opts) ->
	true = ets:insert(?TAB, {{proto_opts, Ref}, Opts}),
	put_conn_opts(Ref, Opts).

%% The options of a connection of listener Ref over Protocol, merged with
%% that protocol's defaults (mustang_http1:conn_opts/1,
%% mustang_http2:conn_opts/1).
-spec get_conn_opts(mustang:ref(), http | http2) -> map().
get_conn_opts(Ref, Protocol) ->
	maps:get(Protocol, persistent_term:get({?MODULE, Ref})).

%% The stream handler chain of those connections, prepared
%% (mustang_stream:prepare/1 copies the options).
-spec get_conn_chain(mustang:ref(), http | http2) -> mustang_stream:prepared().
get_conn_chain(Ref, Protocol) ->
	maps:get({chain, Protocol}, persistent_term:get({?MODULE, Ref})).

put_conn_opts(Ref, Opts) ->
	Http = mustang_http1:conn_opts(Opts),
	Http2 = mustang_http2:conn_opts(Opts),
	persistent_term:put({?MODULE, Ref}, #{http => Http, http2 => Http2,
		{chain, http} => mustang_stream:prepare(Http), {chain, http2} => mustang_stream:prepare(Http2)}).

-spec get_transport_opts(mustang:ref()) -> map().
get_transport_opts(Ref) ->
	ets:lookup_element(?TAB, {trans_opts, Ref}, 2).

-spec set_transport_opts(mustang:ref(), map()) -> ok.
set_transport_opts(Ref, TransOpts) ->
	true = ets:insert(?TAB, {{trans_opts, Ref}, TransOpts}),
	ok.

%% The transport options as the user gave them (mustang:get_transport_options/1).
-spec set_given_transport_opts(mustang:ref(), map()) -> ok.
set_given_transport_opts(Ref, TransOpts) ->
	true = ets:insert(?TAB, {{given_trans_opts, Ref}, TransOpts}),
	ok.

-spec get_given_transport_opts(mustang:ref()) -> map().
get_given_transport_opts(Ref) ->
	ets:lookup_element(?TAB, {given_trans_opts, Ref}, 2).

-spec get_transport(mustang:ref()) -> module().
get_transport(Ref) ->
	ets:lookup_element(?TAB, {transport, Ref}, 2).

%% The ssl options a TLS listener's handshakes take on top of its listen
%% options (mustang:set_tls_certificate/2); [] until a rotation. Only TLS
%% listeners have them.
-spec set_tls_opts(mustang:ref(), [ssl:tls_server_option()]) -> ok.
set_tls_opts(Ref, Opts) ->
	true = ets:insert(?TAB, {{tls_opts, Ref}, Opts}),
	ok.

-spec get_tls_opts(mustang:ref()) -> [ssl:tls_server_option()].
get_tls_opts(Ref) ->
	ets:lookup_element(?TAB, {tls_opts, Ref}, 2).

-spec set_port(mustang:ref(), inet:port_number()) -> ok.
set_port(Ref, Port) ->
	true = ets:insert(?TAB, {{port, Ref}, Port}),
	ok.

-spec get_port(mustang:ref()) -> inet:port_number().
get_port(Ref) ->
	ets:lookup_element(?TAB, {port, Ref}, 2).

-spec set_listen_socket(mustang:ref(), mustang_transport:socket()) -> ok.
set_listen_socket(Ref, LSocket) ->
	true = ets:insert(?TAB, {{listen_socket, Ref}, LSocket}),
	ok.

-spec get_listen_socket(mustang:ref()) -> mustang_transport:socket().
get_listen_socket(Ref) ->
	ets:lookup_element(?TAB, {listen_socket, Ref}, 2).

-spec set_conns_sup(mustang:ref(), pos_integer(), pid()) -> ok.
set_conns_sup(Ref, Id, Pid) ->
	true = ets:insert(?TAB, {{conns_sup, Ref, Id}, Pid}),
	ok.

-spec set_conn_limit(mustang:ref(), mustang_conn_limit:limit()) -> ok.
set_conn_limit(Ref, Limit) ->
	true = ets:insert(?TAB, {{conn_limit, Ref}, Limit}),
	ok.

-spec get_conn_limit(mustang:ref()) -> mustang_conn_limit:limit().
get_conn_limit(Ref) ->
	ets:lookup_element(?TAB, {conn_limit, Ref}, 2).

-spec get_conns_sups(mustang:ref()) -> [{pos_integer(), pid()}].
get_conns_sups(Ref) ->
	lists:sort([{Id, Pid} || [Id, Pid] <- ets:match(?TAB, {{conns_sup, Ref, '$1'}, '$2'})]).

-spec init([]) -> {ok, undefined}.
init([]) ->
	_ = ets:new(?TAB, [named_table, public, set, {read_concurrency, true}]),
	%% The state of inline streams while their handler runs (mustang_inline).
	ok = mustang_inline:new_table(),
	{ok, undefined}.

-spec handle_call(any(), gen_server:from(), undefined) -> {reply, {error, unknown_call}, undefined}.
handle_call(_, _, State) ->
	{reply, {error, unknown_call}, State}.

-spec handle_cast(any(), undefined) -> {noreply, undefined}.
handle_cast(_, State) ->
	{noreply, State}.
