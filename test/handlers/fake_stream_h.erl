%% A stream handler for unit tests of the stream handlers: it stands for
%% the rest of the chain and answers with commands taken from the options.
%%   fake_init => Commands | fun((StreamID, Req, Opts) -> Commands)
%%   fake_data => Commands                    returned by every data/4 call
%%   fake_early_error => fun((Resp) -> Resp)
%%   fake_pid => pid()                        told {fake, terminate, StreamID, Reason}
%% info/3 returns Commands for {fake_commands, Commands} and [] for anything
%% else; every call is recorded in the state (calls, most recent first).
-module(fake_stream_h).
-behaviour(mustang_stream).

-export([init/3, data/4, info/3, terminate/3, early_error/5]).

init(StreamID, Req, Opts) ->
	Commands = case maps:get(fake_init, Opts, []) of
		Fun when is_function(Fun, 3) -> Fun(StreamID, Req, Opts);
		List -> List
	end,
	{Commands, #{opts => Opts, calls => [{init, StreamID, Req}]}}.

data(StreamID, IsFin, Data, State = #{opts := Opts, calls := Calls}) ->
	{maps:get(fake_data, Opts, []), State#{calls => [{data, StreamID, IsFin, Data} | Calls]}}.

info(StreamID, Info, State = #{calls := Calls}) ->
	Commands = case Info of
		{fake_commands, Cs} -> Cs;
		_ -> []
	end,
	{Commands, State#{calls => [{info, StreamID, Info} | Calls]}}.

terminate(StreamID, Reason, #{opts := Opts}) ->
	case Opts of
		#{fake_pid := Pid} -> Pid ! {fake, terminate, StreamID, Reason};
		_ -> ok
	end,
	ok.

early_error(_, _, _, Resp, Opts) ->
	case Opts of
		#{fake_early_error := Fun} -> Fun(Resp);
		_ -> Resp
	end.
