%% The handler and a process it spawned take turns with the same stale Req:
%% the handler streams a part, the worker another with the Req the handler
%% used (its state is then only in the connection's mailbox in inline mode),
%% and the handler the last one once the worker is done.
-module(other_process_interleaved_h).
-export([init/2]).

init(Req0, Opts) ->
	Req = mustang_req:stream_reply(200, #{<<"content-type">> => <<"text/plain">>}, Req0),
	ok = mustang_req:stream_body(<<"one ">>, nofin, Req),
	{Pid, MRef} = spawn_monitor(fun() ->
		exit({done, mustang_req:stream_body(<<"two ">>, nofin, Req)})
	end),
	receive
		{'DOWN', MRef, process, Pid, {done, ok}} -> ok;
		{'DOWN', MRef, process, Pid, Reason} -> exit({worker_failed, Reason})
	end,
	ok = mustang_req:stream_body(<<"three">>, fin, Req),
	{ok, Req, Opts}.
