%% An OTP logger handler for tests: sends every log event it gets as
%% {log_event, Event} to the pid in its config (#{config => #{pid => Pid}}).
%% Add it with a domain filter to capture, for example, the access log:
%%   logger:add_handler(Id, log_forward_h, #{config => #{pid => self()},
%%       filter_default => stop,
%%       filters => [{d, {fun logger_filters:domain/2, {log, equal, [mustang, access]}}}]})
-module(log_forward_h).
-export([log/2]).

log(Event, #{config := #{pid := Pid}}) ->
	Pid ! {log_event, Event},
	ok.
