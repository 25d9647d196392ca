%% A stream handler for unit tests of the handlers that sit before others in
%% the chain: the test configures what it does through the options and talks
%% to it through info/3.
%%   fake_pid => Pid                 gets {fake_init, Req} and {fake_terminate, Reason}
%%   fake_init_commands => Commands  what init/3 returns
%% info(_, {fake_commands, Commands}, _) returns Commands (as if the request
%% handler had sent them); data/4 returns [{fake_data, IsFin, Data}] so the
%% test sees, among the commands, the body the handler was given.
-module(mustang_fake_stream_h).
-behaviour(mustang_stream).

-export([init/3]).
-export([data/4]).
-export([info/3]).
-export([terminate/3]).
-export([early_error/5]).

init(_, Req, Opts) ->
	Pid = maps:get(fake_pid, Opts, undefined),
	_ = is_pid(Pid) andalso (Pid ! {fake_init, Req}),
	{maps:get(fake_init_commands, Opts, []), #{pid => Pid}}.

data(_, IsFin, Data, State) ->
	true = is_binary(Data),
	{[{fake_data, IsFin, Data}], State}.

info(_, {fake_commands, Commands}, State) ->
	{Commands, State};
info(_, Info, State) ->
	{[{fake_info, Info}], State}.

terminate(_, Reason, #{pid := Pid}) ->
	_ = is_pid(Pid) andalso (Pid ! {fake_terminate, Reason}),
	ok.

early_error(_, _, _, Resp, _) ->
	Resp.
