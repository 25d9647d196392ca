%% Hands the Req to another process, which replies (in every mode); if that
%% fails, the handler replies with the error printed with ~0p.
-module(other_process_h).
-export([init/2]).

init(Req, Opts) ->
	{Pid, MRef} = spawn_monitor(fun() ->
		Result = try mustang_req:reply(200, #{}, <<"replied from another process">>, Req) of
			_ -> replied
		catch error:Reason ->
			{error, Reason}
		end,
		exit({result, Result})
	end),
	receive
		{'DOWN', MRef, process, Pid, {result, replied}} ->
			{ok, Req, Opts};
		{'DOWN', MRef, process, Pid, {result, {error, Reason}}} ->
			{ok, mustang_req:reply(200, #{}, io_lib:format("~0p", [Reason]), Req), Opts}
	end.
