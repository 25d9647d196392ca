%% GET /wait/:topic waits for the next message published on the topic (a
%% loop handler: mustang_loop) and answers with it; after `poll_timeout' ms
%% (application environment, 30000 by default) without one, it answers 204
%% and the client asks again. Waiters join the pg group {long_poll, Topic}.
-module(long_poll_wait_h).
-export([init/2]).
-export([info/3]).
-export([terminate/3]).

-spec init(mustang_req:req(), any()) -> {mustang_loop, mustang_req:req(), binary(), timeout()}.
init(Req, _) ->
	Topic = mustang_req:binding(topic, Req),
	ok = pg:join(long_poll, Topic, self()),
	{mustang_loop, Req, Topic, application:get_env(long_poll, poll_timeout, 30000)}.

-spec info(any(), Req, binary()) -> {ok | stop, Req, binary()} when Req :: mustang_req:req().
info({long_poll, Topic, Message}, Req, Topic) ->
	{stop, mustang_req:reply(200, #{<<"content-type">> => <<"text/plain">>}, Message, Req), Topic};
info(timeout, Req, Topic) ->
	%% Nothing was published in time: mustang_loop answers 204.
	{stop, Req, Topic};
info(_, Req, Topic) ->
	{ok, Req, Topic}.

%% However the wait ended (message, timeout, client gone): leave the group,
%% since the process may serve other requests (inline, the connection's).
-spec terminate(any(), mustang_req:req(), binary()) -> ok.
terminate(_, _, Topic) ->
	_ = pg:leave(long_poll, Topic, self()),
	ok.
