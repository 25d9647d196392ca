%% Extended CONNECT (RFC 8441) target: notifies {h2_connect, Method,
%% Protocol} (see h2_notify) and replies 200 with the same pair as an Erlang
%% term. Protocol is the Req's `protocol' key (the :protocol pseudo-header),
%% or undefined.
-module(h2_connect_h).
-export([init/2]).

init(Req, Opts) ->
	What = {mustang_req:method(Req), maps:get(protocol, Req, undefined)},
	h2_notify:send(Opts, {h2_connect, self(), What}),
	Body = iolist_to_binary(io_lib:format("~0p", [What])),
	{ok, mustang_req:reply(200, #{}, Body, Req), Opts}.
