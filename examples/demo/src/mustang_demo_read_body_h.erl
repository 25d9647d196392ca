%% POST /read_body: the body's length in bytes, read in chunks of at most
%% 64 KiB so large bodies are never held whole.
-module(mustang_demo_read_body_h).
-export([init/2]).

-spec init(mustang_req:req(), any()) -> {ok, mustang_req:req(), any()}.
init(Req0, State) ->
	{Length, Req} = count(Req0, 0),
	{ok, mustang_req:reply(200, #{<<"content-type">> => <<"text/plain">>},
		integer_to_binary(Length), Req), State}.

count(Req0, N) ->
	case mustang_req:read_body(Req0, #{length => 65536}) of
		{ok, Data, Req} -> {N + byte_size(Data), Req};
		{more, Data, Req} -> count(Req, N + byte_size(Data))
	end.
