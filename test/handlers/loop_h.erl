%% A loop handler (mustang_loop) for loop_SUITE; the route binding `what'
%% picks the behaviour. terminate/3 reports its reason, and init/2 its pid,
%% to the process registered as loop_SUITE_notify when there is one.
-module(loop_h).
-export([init/2]).
-export([info/3]).
-export([terminate/3]).

init(Req, _) ->
	What = binary_to_atom(mustang_req:binding(what, Req)),
	notify({loop_pid, self()}),
	start(What, Req).

%% A message answers the request.
start(reply, Req) ->
	erlang:send_after(100, self(), {reply, <<"Hello loop">>}),
	{mustang_loop, Req, reply};
%% timeout: info/3 gets `timeout' after 200 ms without a message; the
%% second one stops the loop.
start(timeout, Req) ->
	{mustang_loop, Req, 0, 200};
%% The timeout is restarted by each message: 5 messages 100 ms apart with a
%% 300 ms timeout never time out.
start(timeout_reset, Req) ->
	self() ! tick,
	{mustang_loop, Req, 0, 300};
%% Server-sent events streamed from info/3.
start(events, Req) ->
	Req2 = mustang_req:stream_reply(200, #{<<"content-type">> => <<"text/event-stream">>}, Req),
	self() ! {event, 1},
	{mustang_loop, Req2, events};
%% Hibernates until the test sends {reply, Body}.
start(hibernate, Req) ->
	{mustang_loop, Req, hibernate, hibernate};
start(crash, Req) ->
	self() ! crash,
	{mustang_loop, Req, crash};
%% Waits for ever: the client closes the connection.
start(wait, Req) ->
	{mustang_loop, Req, wait};
%% Reads the body from info/3, after it had time to arrive during the loop.
start(read_body, Req) ->
	erlang:send_after(300, self(), read),
	{mustang_loop, Req, read_body};
%% Messages that look like the connection's, but are the handler's.
start(lookalike, Req) ->
	self() ! {timeout, make_ref(), mine},
	{mustang_loop, Req, lookalike}.

info({reply, Body}, Req, State) ->
	{stop, mustang_req:reply(200, #{}, Body, Req), State};
info(timeout, Req, 0) ->
	{ok, Req, 1};
info(timeout, Req, 1) ->
	{stop, Req, 2};
info(timeout, Req, N) when is_integer(N) ->
	{stop, mustang_req:reply(500, #{}, <<"timed out">>, Req), N};
info(tick, Req, N) when N < 5 ->
	erlang:send_after(100, self(), tick),
	{ok, Req, N + 1};
info(tick, Req, N) ->
	{stop, mustang_req:reply(200, #{}, integer_to_binary(N), Req), N};
info({event, N}, Req, events) when N < 3 ->
	ok = mustang_req:stream_events(#{id => integer_to_binary(N), data => <<"event ", (integer_to_binary(N))/binary>>}, nofin, Req),
	self() ! {event, N + 1},
	{ok, Req, events};
info({event, 3}, Req, events) ->
	ok = mustang_req:stream_events(#{id => <<"3">>, data => <<"last">>}, fin, Req),
	{stop, Req, events};
info(crash, _, crash) ->
	error(loop_crash);
info(read, Req, read_body) ->
	{ok, Body, Req2} = mustang_req:read_body(Req),
	{stop, mustang_req:reply(200, #{}, Body, Req2), read_body};
info({timeout, _, mine}, Req, lookalike) ->
	{stop, mustang_req:reply(200, #{}, <<"mine">>, Req), lookalike};
info(_, Req, State) ->
	{ok, Req, State}.

terminate(Reason, _, State) ->
	notify({terminate, State, Reason}),
	ok.

notify(Msg) ->
	case whereis(loop_SUITE_notify) of
		undefined -> ok;
		Pid -> Pid ! Msg, ok
	end.
