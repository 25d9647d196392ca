%% POST /publish/:topic sends the request body to everyone waiting on the
%% topic and answers with how many there were.
-module(long_poll_publish_h).
-export([init/2]).

-spec init(mustang_req:req(), any()) -> {ok, mustang_req:req(), any()}.
init(Req0 = #{method := <<"POST">>}, State) ->
	Topic = mustang_req:binding(topic, Req0),
	{ok, Message, Req} = mustang_req:read_body(Req0, #{length => 65536}),
	Waiters = pg:get_members(long_poll, Topic),
	_ = [Pid ! {long_poll, Topic, Message} || Pid <- Waiters],
	{ok, mustang_req:reply(200, #{}, integer_to_binary(length(Waiters)), Req), State};
init(Req0, State) ->
	{ok, mustang_req:reply(405, #{<<"allow">> => <<"POST">>}, Req0), State}.
