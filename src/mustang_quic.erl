%% The QUIC NIF (native/mustang_quic, quinn-proto with rustls): its loader
%% and its functions. The NIF holds QUIC only; this module adds nothing to
%% it. The interface is described in doc/internals/http3.md ("The QUIC
%% NIF"); the head of native/mustang_quic/src/lib.rs repeats it.
%%
%% The NIF is optional: it is built only where cargo is (scripts/build_quic.sh,
%% run by rebar3's pre-compile hook). Without it this module still loads,
%% available/0 says why HTTP/3 is off, and every NIF function raises
%% {mustang_quic, not_built}.
-module(mustang_quic).

-export([available/0]).
-export([not_built_error/0]).
-export([now/0]).
-export([endpoint_new/2]).
-export([endpoint_set_config/2]).
-export([endpoint_handle/4]).
-export([endpoint_accept/3]).
-export([endpoint_refuse/2]).
-export([endpoint_event/2]).
-export([endpoint_forget/2]).
-export([endpoint_connect/4]).
-export([endpoint_info/1]).
-export([conn_step/3]).
-export([conn_open_bidi/1]).
-export([conn_info/1]).

-on_load(load/0).

-type endpoint() :: reference().
-type incoming() :: reference().
-type conn() :: reference().
-type conn_event() :: reference().
-type endpoint_event() :: reference().
-type key() :: pos_integer().
-type addr() :: {inet:ip_address(), inet:port_number()}.
-type stream_id() :: non_neg_integer().
-type op() :: {event, conn_event()} | timeout
	| {write, stream_id(), iodata(), boolean()}
	| {reset, stream_id(), non_neg_integer()}
	| {stop, stream_id(), non_neg_integer()}
	| {allow, stream_id(), non_neg_integer()}
	| {open_uni, any()}
	| {close, non_neg_integer(), binary()}
	| {max_streams, bidi | uni, non_neg_integer()}
	| {datagram, iodata()}.
-type event() :: connected
	| {stream, stream_id(), bidi | uni}
	| {data, stream_id(), binary(), fin | nofin}
	| {reset, stream_id(), non_neg_integer()}
	| {stopped, stream_id(), non_neg_integer()}
	| {flushed, stream_id()}
	| {datagram, binary()}
	| {lost, any()}
	| {endpoint_event, endpoint_event()}
	| drained.
-type result() :: {opened, any(), stream_id() | undefined} | {queued, stream_id(), pos_integer()}.
-export_type([endpoint/0, incoming/0, conn/0, conn_event/0, endpoint_event/0, key/0, addr/0,
	stream_id/0, op/0, event/0, result/0]).

load() ->
	case so_path() of
		{ok, Path} ->
			case erlang:load_nif(Path, 0) of
				ok ->
					persistent_term:put({?MODULE, status}, ok),
					ok;
				{error, {Reason, Text}} ->
					%% A stale or foreign .so: HTTP/3 is off, the rest works.
					persistent_term:put({?MODULE, status}, {load_failed, Reason, Text}),
					ok
			end;
		Error ->
			persistent_term:put({?MODULE, status}, Error),
			ok
	end.

so_path() ->
	case code:priv_dir(mustang) of
		{error, _} ->
			{error, no_priv_dir};
		Priv ->
			Path = filename:join(Priv, "mustang_quic"),
			case filelib:is_regular(Path ++ ".so") andalso os:getenv("MUSTANG_NO_QUIC") =:= false of
				true -> {ok, Path};
				false -> {error, not_built}
			end
	end.

%% true when the NIF is loaded, else {false, Reason} (not_built: there was
%% no cargo when Mustang was built, or MUSTANG_NO_QUIC was set).
-spec available() -> true | {false, any()}.
available() ->
	case persistent_term:get({?MODULE, status}, {error, not_loaded}) of
		ok -> true;
		{error, Reason} -> {false, Reason};
		Other -> {false, Other}
	end.

%% The error mustang:start_quic/3 returns without the NIF.
-spec not_built_error() -> {http3_not_built, string()}.
not_built_error() ->
	{http3_not_built, "HTTP/3 needs Mustang's QUIC NIF (native/mustang_quic), which was not "
		"built: install Rust's cargo (https://rustup.rs) and rebuild Mustang (rebar3 compile "
		"runs scripts/build_quic.sh when cargo is on PATH; or run that script yourself)."}.

%% The clock the NIF is given: Erlang's monotonic time in microseconds.
-spec now() -> integer().
now() ->
	erlang:monotonic_time(microsecond).

-define(NOT_LOADED, erlang:nif_error({?MODULE, not_built})).

%% A server endpoint (Opts has cert_chain and key) or a client one.
-spec endpoint_new(map(), integer()) -> {ok, endpoint()} | {error, string()}.
endpoint_new(_Opts, _Now) -> ?NOT_LOADED.

%% New certificate or settings, for connections accepted from now on.
-spec endpoint_set_config(endpoint(), map()) -> ok | {error, string()}.
endpoint_set_config(_Endpoint, _Opts) -> ?NOT_LOADED.

%% One datagram received on the endpoint's socket.
-spec endpoint_handle(endpoint(), integer(), addr(), binary())
	-> ok | {conn, key(), conn_event()} | {incoming, incoming()} | {send, binary()}.
endpoint_handle(_Endpoint, _Now, _Addr, _Data) -> ?NOT_LOADED.

%% Accepts a new connection (dirty CPU scheduler: runs the first TLS flight).
-spec endpoint_accept(endpoint(), incoming(), integer())
	-> {ok, key(), conn(), addr()} | {error, string(), binary() | undefined}.
endpoint_accept(_Endpoint, _Incoming, _Now) -> ?NOT_LOADED.

%% Refuses a new connection: the CONNECTION_REFUSED datagram to send.
-spec endpoint_refuse(endpoint(), incoming()) -> binary().
endpoint_refuse(_Endpoint, _Incoming) -> ?NOT_LOADED.

%% An event from a connection (conn_step's {endpoint_event, E}).
-spec endpoint_event(endpoint(), endpoint_event()) -> ok | {conn, key(), conn_event()}.
endpoint_event(_Endpoint, _Event) -> ?NOT_LOADED.

%% The connection Key ended without draining (its process died): the
%% endpoint forgets it.
-spec endpoint_forget(endpoint(), key()) -> ok.
endpoint_forget(_Endpoint, _Key) -> ?NOT_LOADED.

%% Client endpoints (tests): a connection to Addr.
-spec endpoint_connect(endpoint(), integer(), addr(), string()) -> {ok, key(), conn()} | {error, string()}.
endpoint_connect(_Endpoint, _Now, _Addr, _ServerName) -> ?NOT_LOADED.

-spec endpoint_info(endpoint()) -> map().
endpoint_info(_Endpoint) -> ?NOT_LOADED.

%% Applies Ops, then polls: {Results, Datagrams, Events, Timeout, More}.
-spec conn_step(conn(), integer(), [op()])
	-> {[result()], [{addr(), binary()}], [event()], integer() | infinity, boolean()}.
conn_step(_Conn, _Now, _Ops) -> ?NOT_LOADED.

%% Clients: opens a bidirectional stream.
-spec conn_open_bidi(conn()) -> stream_id() | undefined.
conn_open_bidi(_Conn) -> ?NOT_LOADED.

-spec conn_info(conn()) -> map().
conn_info(_Conn) -> ?NOT_LOADED.
