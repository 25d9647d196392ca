%% Lets the h2_* test handlers tell a test what they are doing: the handler
%% options may name a registered process (#{notify => Name}); messages go to
%% it when it is registered and are dropped otherwise.
-module(h2_notify).
-export([send/2]).

send(#{notify := Name}, Msg) ->
	case whereis(Name) of
		undefined -> ok;
		Pid -> Pid ! Msg, ok
	end;
send(_, _) ->
	ok.
