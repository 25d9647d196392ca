-module(compress_response_app).
-behaviour(application).

-export([start/2]).
-export([stop/1]).

%% mustang_compress_h before mustang_stream_h: it gzips the responses of
%% clients that send accept-encoding: gzip, when the body is at least
%% compress_threshold bytes (default 300).
-spec start(application:start_type(), any()) -> {ok, pid()}.
start(_, _) ->
	Dispatch = mustang_router:compile([{'_', [{"/", compress_response_h, []}]}]),
	{ok, _} = mustang:start_clear(compress_response,
		#{port => application:get_env(compress_response, port, 8080)},
		#{env => #{dispatch => Dispatch},
			stream_handlers => [mustang_compress_h, mustang_stream_h]}),
	compress_response_sup:start_link().

-spec stop(any()) -> ok.
stop(_) ->
	ok = mustang:stop_listener(compress_response).
