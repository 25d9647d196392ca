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
	lookup(proto_opts, Ref).

-spec set_protocol_opts(mustang:ref(), map()) -> ok.
set_protocol_opts(Ref, Opts) ->
	ok = insert(proto_opts, Ref, Opts),
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
	lookup(trans_opts, Ref).

-spec set_transport_opts(mustang:ref(), map()) -> ok.
set_transport_opts(Ref, TransOpts) ->
	insert(trans_opts, Ref, TransOpts).

%% The transport options as the user gave them (mustang:get_transport_options/1).
-spec set_given_transport_opts(mustang:ref(), map()) -> ok.
set_given_transport_opts(Ref, TransOpts) ->
	insert(given_trans_opts, Ref, TransOpts).

-spec get_given_transport_opts(mustang:ref()) -> map().
get_given_transport_opts(Ref) ->
	lookup(given_trans_opts, Ref).

-spec get_transport(mustang:ref()) -> module().
get_transport(Ref) ->
	lookup(transport, Ref).

%% The ssl options a TLS listener's handshakes take on top of its listen
%% options (mustang:set_tls_certificate/2); [] until a rotation. Only TLS
%% listeners have them.
-spec set_tls_opts(mustang:ref(), [ssl:tls_server_option()]) -> ok.
set_tls_opts(Ref, Opts) ->
	insert(tls_opts, Ref, Opts).

-spec get_tls_opts(mustang:ref()) -> [ssl:tls_server_option()].
get_tls_opts(Ref) ->
	lookup(tls_opts, Ref).

-spec set_port(mustang:ref(), inet:port_number()) -> ok.
set_port(Ref, Port) ->
	insert(port, Ref, Port).

-spec get_port(mustang:ref()) -> inet:port_number().
get_port(Ref) ->
	lookup(port, Ref).

-spec set_listen_socket(mustang:ref(), mustang_transport:socket()) -> ok.
set_listen_socket(Ref, LSocket) ->
	insert(listen_socket, Ref, LSocket).

-spec get_listen_socket(mustang:ref()) -> mustang_transport:socket().
get_listen_socket(Ref) ->
	lookup(listen_socket, Ref).

-spec set_conns_sup(mustang:ref(), pos_integer(), pid()) -> ok.
set_conns_sup(Ref, Id, Pid) ->
	true = ets:insert(?TAB, {{conns_sup, Ref, Id}, Pid}),
	ok.

-spec set_conn_limit(mustang:ref(), mustang_conn_limit:limit()) -> ok.
set_conn_limit(Ref, Limit) ->
	insert(conn_limit, Ref, Limit).

-spec get_conn_limit(mustang:ref()) -> mustang_conn_limit:limit().
get_conn_limit(Ref) ->
	lookup(conn_limit, Ref).

-spec get_conns_sups(mustang:ref()) -> [{pos_integer(), pid()}].
get_conns_sups(Ref) ->
	lists:sort([{Id, Pid} || [Id, Pid] <- ets:match(?TAB, {{conns_sup, Ref, '$1'}, '$2'})]).

%% One value of a listener, under {Key, Ref}; lookup/2 fails with badarg
%% when the listener does not exist.
insert(Key, Ref, Value) ->
	true = ets:insert(?TAB, {{Key, Ref}, Value}),
	ok.

lookup(Key, Ref) ->
	ets:lookup_element(?TAB, {Key, Ref}, 2).

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
