%% /ws: a Websocket echo (text as text, binary as binary), over HTTP/1.1 and
%% over HTTP/2 (RFC 8441). permessage-deflate is accepted when the client
%% offers it. Messages up to 16 MiB.
-module(mustang_demo_ws_echo_h).
-behaviour(mustang_websocket).

-export([init/2]).
-export([websocket_handle/2]).
-export([websocket_info/2]).

-spec init(mustang_req:req(), any()) -> {mustang_websocket, mustang_req:req(), any(), map()}.
init(Req, State) ->
	{mustang_websocket, Req, State, #{compress => true, max_frame_size => 16777216}}.

-spec websocket_handle({text | binary | ping | pong, binary()}, State) -> {list(), State}.
websocket_handle({text, Data}, State) -> {[{text, Data}], State};
websocket_handle({binary, Data}, State) -> {[{binary, Data}], State};
websocket_handle(_, State) -> {[], State}.

-spec websocket_info(any(), State) -> {list(), State}.
websocket_info(_, State) -> {[], State}.
