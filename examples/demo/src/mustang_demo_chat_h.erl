%% /ws/chat: a broadcast chat. Each text message a client sends goes to
%% every client connected, the sender included. Members are kept in a pg
%% group (scope mustang_demo, started by mustang_demo:start/1).
-module(mustang_demo_chat_h).
-behaviour(mustang_websocket).

-export([init/2]).
-export([websocket_init/1]).
-export([websocket_handle/2]).
-export([websocket_info/2]).

-define(GROUP, chat).

-spec init(mustang_req:req(), any()) -> {mustang_websocket, mustang_req:req(), any(), map()}.
init(Req, _) ->
	{mustang_websocket, Req, undefined, #{compress => true, max_frame_size => 65536}}.

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
