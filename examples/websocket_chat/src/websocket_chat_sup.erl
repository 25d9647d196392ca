%% Supervises the chat room: an OTP pg scope named websocket_chat, whose
%% group `room' holds the Websocket process of every connected client.
-module(websocket_chat_sup).
-behaviour(supervisor).

-export([start_link/0]).
-export([init/1]).

-spec start_link() -> {ok, pid()}.
start_link() ->
	supervisor:start_link({local, ?MODULE}, ?MODULE, []).

-spec init([]) -> {ok, {supervisor:sup_flags(), [supervisor:child_spec()]}}.
init([]) ->
	Room = #{id => room, start => {pg, start_link, [websocket_chat]}},
	{ok, {#{strategy => one_for_one}, [Room]}}.
