%% A `logger' protocol option module for tests: every call is sent as
%% {fake_logger, Level, Format, Args} to the process registered as
%% fake_logger_sink (dropped when there is none).
-module(fake_logger).
-export([error/2, warning/2, notice/2, info/2, debug/2]).

error(F, A) -> send(error, F, A).
warning(F, A) -> send(warning, F, A).
notice(F, A) -> send(notice, F, A).
info(F, A) -> send(info, F, A).
debug(F, A) -> send(debug, F, A).

send(Level, F, A) ->
	case whereis(fake_logger_sink) of
		undefined -> ok;
		Pid -> Pid ! {fake_logger, Level, F, A}, ok
	end.
