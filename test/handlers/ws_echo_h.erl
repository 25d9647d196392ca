%% Websocket echo: text back as text, binary back as binary. The route's
%% options map may hold ws_opts, the Websocket options (max_frame_size,
%% compress...).
-module(ws_echo_h).
-behaviour(mustang_websocket).

-export([init/2]).
-export([websocket_handle/2]).
-export([websocket_info/2]).

init(Req, Opts) ->
	{mustang_websocket, Req, Opts, maps:get(ws_opts, Opts, #{})}.

websocket_handle({text, Text}, State) ->
	{[{text, Text}], State};
websocket_handle({binary, Bin}, State) ->
	{[{binary, Bin}], State};
websocket_handle(_, State) ->
	{[], State}.

websocket_info(_, State) ->
	{[], State}.
