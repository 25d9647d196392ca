%% A broadcast chat for the browser tests, like the demo's /ws/chat, plus one
%% thing: a client's first message is "joined over <version>" (HTTP/1.1 or
%% HTTP/2), so that a test knows which protocol the browser used. Each text
%% message goes to every member, the sender included. Members are kept in
%% the pg scope named by the route's options (#{scope := Scope}), which the
%% suite starts.
-module(ws_chat_h).
-behaviour(mustang_websocket).

-export([init/2]).
-export([websocket_init/1]).
-export([websocket_handle/2]).
-export([websocket_info/2]).

init(Req, #{scope := Scope}) ->
	{mustang_websocket, Req, #{scope => Scope, version => mustang_req:version(Req)},
		#{compress => true}}.

websocket_init(State = #{scope := Scope, version := Version}) ->
	ok = pg:join(Scope, chat, self()),
	{[{text, <<"joined over ", (atom_to_binary(Version))/binary>>}], State}.

websocket_handle({text, Message}, State = #{scope := Scope}) ->
	_ = [Pid ! {chat, Message} || Pid <- pg:get_members(Scope, chat)],
	{[], State};
websocket_handle(_, State) ->
	{[], State}.

websocket_info({chat, Message}, State) ->
	{[{text, Message}], State};
websocket_info(_, State) ->
	{[], State}.
