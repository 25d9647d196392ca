%% At most log_rate_limit error lines per second from Mustang's connections
%% (handler crashes, stream handler crashes): a handler that crashes on every
%% request must not turn each request into a log line, or whoever sends the
%% requests controls the log volume. Lines past the limit are counted, and
%% each second that had some ends with one line saying how many (written by
%% mustang_clock's tick), so nothing is lost silently. The limit is the
%% application environment variable `log_rate_limit' (default 10; infinity
%% logs every line), for the node: it is read when the application starts.
%% Client errors are not counted here: they are logged at debug level.
-module(mustang_log_limit).

-export([init/0]).
-export([allow/0]).
-export([tick/0]).

-define(KEY, {?MODULE, counters}).
-define(DEFAULT, 10).

%% Called once when the application starts (mustang_clock:init/1).
-spec init() -> ok.
init() ->
	Limit = case application:get_env(mustang, log_rate_limit, ?DEFAULT) of
		infinity -> infinity;
		N when is_integer(N), N >= 0 -> N;
		Other -> error({bad_app_env, log_rate_limit, Other})
	end,
	%% Slots: lines this second, lines not logged this second.
	persistent_term:put(?KEY, {Limit, atomics:new(2, [{signed, false}])}),
	ok.

%% Whether an error line may be written now; counts it either way.
-spec allow() -> boolean().
allow() ->
	case persistent_term:get(?KEY, undefined) of
		{infinity, _} ->
			true;
		{Limit, Counters} ->
			case atomics:add_get(Counters, 1, 1) =< Limit of
				true -> true;
				false -> atomics:add(Counters, 2, 1), false
			end;
		undefined ->
			%% The application is not started (a connection module used alone).
			true
	end.

%% Each second: a new allowance, and one line for what was not logged.
-spec tick() -> ok.
tick() ->
	case persistent_term:get(?KEY, undefined) of
		{Limit, Counters} ->
			atomics:put(Counters, 1, 0),
			case atomics:exchange(Counters, 2, 0) of
				0 ->
					ok;
				Suppressed ->
					logger:error("mustang: ~b more error lines in the last second were suppressed "
						"(log_rate_limit: ~p per second)", [Suppressed, Limit])
			end;
		undefined ->
			ok
	end.
