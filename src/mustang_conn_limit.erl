%% A listener's max_connections, counted across its connection supervisor
%% shards so that the limit holds exactly: each shard has a counter of its
%% connections, and an acceptor reserves a place in its shard's counter
%% before it accepts (so that ten acceptors blocked in accept cannot take
%% ten connections past the limit). A reservation succeeds when the sum over
%% all shards, its own place included, is within the limit; two acceptors
%% racing for the last place may then both back off, never both succeed.
%% The array also counts the acceptors waiting for capacity, so that a shard
%% whose connection ended knows whether other shards' acceptors must be
%% woken. It also holds the listener's status (running, suspended,
%% draining), which HTTP/1.1 connections read where a response head is
%% written (an atomics read, no message).
-module(mustang_conn_limit).

-export([new/2]).
-export([reserve/2]).
-export([release/2]).
-export([reset/3]).
-export([has_capacity/1]).
-export([count/1]).
-export([set_max/2]).
-export([max/1]).
-export([sleeping/2]).
-export([sleepers/1]).
-export([set_status/2]).
-export([status/1]).

-opaque limit() :: {atomics:atomics_ref(), pos_integer()}.
-export_type([limit/0]).

-type status() :: running | suspended | draining.
-export_type([status/0]).

%% Slots 1..N: the shards' counts; N+1: waiting acceptors; N+2: the limit;
%% N+3: the status.
-define(INFINITY, ((1 bsl 63) - 1)).

-spec new(pos_integer(), pos_integer() | infinity) -> limit().
new(NumShards, Max) ->
	Ref = atomics:new(NumShards + 3, [{signed, true}]),
	Limit = {Ref, NumShards},
	ok = set_max(Limit, Max),
	Limit.

%% Takes a place in the shard's count for a connection about to be accepted.
-spec reserve(limit(), pos_integer()) -> boolean().
reserve(Limit = {Ref, _}, Shard) ->
	atomics:add(Ref, Shard, 1),
	case count(Limit) =< atomics:get(Ref, max_slot(Limit)) of
		true ->
			true;
		false ->
			atomics:sub(Ref, Shard, 1),
			false
	end.

-spec release(limit(), pos_integer()) -> ok.
release({Ref, _}, Shard) ->
	atomics:sub(Ref, Shard, 1).

%% A shard that (re)starts has no connection; a shard whose acceptors were
%% stopped has exactly its connections.
-spec reset(limit(), pos_integer(), non_neg_integer()) -> ok.
reset({Ref, _}, Shard, Count) ->
	atomics:put(Ref, Shard, Count).

-spec has_capacity(limit()) -> boolean().
has_capacity(Limit = {Ref, _}) ->
	count(Limit) < atomics:get(Ref, max_slot(Limit)).

%% Connections open and places reserved, over all shards.
-spec count(limit()) -> non_neg_integer().
count({Ref, N}) ->
	count(Ref, N, 0).

count(_, 0, Acc) -> Acc;
count(Ref, I, Acc) -> count(Ref, I - 1, Acc + atomics:get(Ref, I)).

-spec set_max(limit(), pos_integer() | infinity) -> ok.
set_max(Limit = {Ref, _}, infinity) ->
	atomics:put(Ref, max_slot(Limit), ?INFINITY);
set_max(Limit = {Ref, _}, Max) when is_integer(Max), Max > 0 ->
	atomics:put(Ref, max_slot(Limit), Max).

-spec max(limit()) -> pos_integer() | infinity.
max(Limit = {Ref, _}) ->
	case atomics:get(Ref, max_slot(Limit)) of
		?INFINITY -> infinity;
		Max -> Max
	end.

%% An acceptor starts (+1) or stops (-1) waiting for capacity; or several
%% stopped at once (killed acceptors, mustang_conns_sup:recount/1).
-spec sleeping(limit(), integer()) -> ok.
sleeping({Ref, N}, Delta) ->
	atomics:add(Ref, N + 1, Delta).

-spec sleepers(limit()) -> non_neg_integer().
sleepers({Ref, N}) ->
	atomics:get(Ref, N + 1).

-spec set_status(limit(), status()) -> ok.
set_status({Ref, N}, Status) ->
	atomics:put(Ref, N + 3, case Status of running -> 0; suspended -> 1; draining -> 2 end).

-spec status(limit()) -> status().
status({Ref, N}) ->
	case atomics:get(Ref, N + 3) of
		0 -> running;
		1 -> suspended;
		2 -> draining
	end.

max_slot({_, N}) -> N + 2.
