%% Hands the Req to another process, which reads the whole body, then streams
%% the response in two parts; the handler waits for it.
-module(other_process_body_h).
-export([init/2]).
-export([await_worker/3]).
-export([read_all/2]).

init(Req, Opts) ->
	{Pid, MRef} = spawn_monitor(fun() ->
		{ok, Body, Req2} = read_all(Req, <<>>),
		Req3 = mustang_req:stream_reply(200, #{<<"content-type">> => <<"text/plain">>}, Req2),
		ok = mustang_req:stream_body(<<"read ">>, nofin, Req3),
		ok = mustang_req:stream_body([integer_to_binary(byte_size(Body)),
			<<" bytes in another process">>], fin, Req3),
		exit({done, Req3})
	end),
	await_worker(Pid, MRef, Opts).

%% The worker exits with {done, Req}.
await_worker(Pid, MRef, Opts) ->
	receive
		{'DOWN', MRef, process, Pid, {done, Req2}} -> {ok, Req2, Opts};
		{'DOWN', MRef, process, Pid, Reason} -> exit({worker_failed, Reason})
	end.

read_all(Req, Acc) ->
	case mustang_req:read_body(Req, #{length => 65536}) of
		{ok, Data, Req2} -> {ok, <<Acc/binary, Data/binary>>, Req2};
		{more, Data, Req2} -> read_all(Req2, <<Acc/binary, Data/binary>>)
	end.
