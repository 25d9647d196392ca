%% A plain handler: it knows nothing of compression. The stream handler
%% mustang_compress_h, in the listener's stream_handlers, gzips what it
%% replies and adds content-encoding and vary.
-module(compress_response_h).

-export([init/2]).

-spec init(mustang_req:req(), any()) -> {ok, mustang_req:req(), any()}.
init(Req, State) ->
	{ok, mustang_req:reply(200, #{<<"content-type">> => <<"text/plain; charset=utf-8">>},
		body(), Req), State}.

%% 100 lines of text (about 7 KB): it compresses well.
body() ->
	[io_lib:format("Line ~3..0b: a response this long is gzipped for the clients that accept it.~n",
		[N]) || N <- lists:seq(1, 100)].
