%% One chat client. Every text message it sends goes to every client in the
%% room (the sender too) as "Name: text"; joins and leaves are announced.
%% The name comes from the query string (/ws?name=alice), 1 to 32 letters,
%% digits, '-' or '_'; without one the client is "anonymous".
-module(websocket_chat_ws_h).
-behaviour(mustang_websocket).

-export([init/2]).
-export([websocket_init/1]).
-export([websocket_handle/2]).
-export([websocket_info/2]).
-export([terminate/3]).

-spec init(mustang_req:req(), any()) -> {mustang_websocket, mustang_req:req(), binary(), map()}.
init(Req, _) ->
	#{name := Name0} = mustang_req:match_qs([{name, [], <<"anonymous">>}], Req),
	%% A name without a value (?name) is true, a repeated one a list.
	Name = case is_binary(Name0) andalso re:run(Name0, "^[A-Za-z0-9_-]{1,32}$", [{capture, none}]) of
		match -> Name0;
		_ -> <<"anonymous">>
	end,
	%% Chat lines are short: a larger message closes the connection (1009).
	{mustang_websocket, Req, Name, #{max_frame_size => 4096, idle_timeout => 300000}}.

-spec websocket_init(binary()) -> {list(), binary()}.
websocket_init(Name) ->
	ok = pg:join(websocket_chat, room, self()),
	broadcast(<<"* ", Name/binary, " joined">>),
	{[], Name}.

-spec websocket_handle({text | binary | ping | pong, binary()}, binary()) -> {list(), binary()}.
websocket_handle({text, Text}, Name) ->
	broadcast(<<Name/binary, ": ", Text/binary>>),
	{[], Name};
websocket_handle(_, Name) ->
	{[], Name}.

-spec websocket_info(any(), binary()) -> {list(), binary()}.
websocket_info({chat, Line}, Name) ->
	{[{text, Line}], Name};
websocket_info(_, Name) ->
	{[], Name}.

-spec terminate(any(), map(), any()) -> ok.
terminate(_, _, Name) ->
	%% not_joined when the handshake failed before websocket_init/1.
	case pg:leave(websocket_chat, room, self()) of
		ok -> broadcast(<<"* ", Name/binary, " left">>);
		not_joined -> ok
	end.

broadcast(Line) ->
	_ = [Pid ! {chat, Line} || Pid <- pg:get_members(websocket_chat, room)],
	ok.
