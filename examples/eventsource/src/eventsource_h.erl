%% GET /eventsource: a loop handler (mustang_loop) that sends an event every
%% second (the `interval' of the application environment, in ms) with
%% mustang_req:stream_events/3. A client that comes back with Last-Event-ID
%% goes on from there.
-module(eventsource_h).
-export([init/2]).
-export([info/3]).

-spec init(mustang_req:req(), any()) -> {mustang_loop, mustang_req:req(), non_neg_integer()}.
init(Req0, _) ->
	Req = mustang_req:stream_reply(200, #{<<"content-type">> => <<"text/event-stream">>,
		<<"cache-control">> => <<"no-cache">>}, Req0),
	Next = case mustang_req:header(<<"last-event-id">>, Req) of
		undefined -> 1;
		Id -> try binary_to_integer(Id) + 1 catch error:badarg -> 1 end
	end,
	self() ! tick,
	{mustang_loop, Req, Next}.

-spec info(any(), Req, non_neg_integer()) -> {ok, Req, non_neg_integer()}
	when Req :: mustang_req:req().
info(tick, Req, N) ->
	Id = integer_to_binary(N),
	ok = mustang_req:stream_events(#{id => Id, data => [<<"event ">>, Id, <<" at ">>,
		calendar:system_time_to_rfc3339(erlang:system_time(second))]}, nofin, Req),
	erlang:send_after(application:get_env(eventsource, interval, 1000), self(), tick),
	{ok, Req, N + 1};
info(_, Req, N) ->
	{ok, Req, N}.
