%% /ws/chat: a broadcast chat. Each text message a client sends goes to
%% every client connected, the sender included. Members are kept in a pg
%% group (scope mustang_demo, started by mustang_demo:start/1): when the
%% demo runs on several connected nodes (behind a load balancer), the group
%% holds the members of every node and a message reaches them all
%% (doc/guide/deployment.md). The upgrade response has an x-mustang-node
%% header, the name of the node that serves the connection.
-module(mustang_demo_chat_h).
-behaviour(mustang_websocket).

-export([init/2]).
-export([websocket_init/1]).
-export([websocket_handle/2]).
-export([websocket_info/2]).

-define(GROUP, chat).

-spec init(mustang_req:req(), any()) -> {mustang_websocket, mustang_req:req(), any(), map()}.
init(Req, _) ->
	Req2 = mustang_req:set_resp_header(<<"x-mustang-node">>, atom_to_binary(node()), Req),
	{mustang_websocket, Req2, undefined, #{compress => true, max_frame_size => 65536}}.

-spec websocket_init(State) -> {list(), State}.
websocket_init(State) ->
	ok = pg:join(mustang_demo, ?GROUP, self()),
	{[], State}.

-spec websocket_handle({text | binary | ping | pong, binary()}, State) -> {list(), State}.
websocket_handle({text, Message}, State) ->
	_ = [Pid ! {chat, Message} || Pid <- pg:get_members(mustang_demo, ?GROUP)],
	{[], State};
websocket_handle(_, State) ->
	{[], State}.

-spec websocket_info(any(), State) -> {list(), State}.
websocket_info({chat, Message}, State) ->
	{[{text, Message}], State};
websocket_info(_, State) ->
	{[], State}.
