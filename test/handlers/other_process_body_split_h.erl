%% The handler reads the first part of the body itself, waits so that more
%% of it arrives meanwhile, then hands its Req to another process, which
%% reads the rest and answers with the size and SHA-256 of the whole body.
%% Inline, the first read is made from socket messages and the second from
%% another process that must find the bytes already sent to the connection.
-module(other_process_body_split_h).
-export([init/2]).

init(Req0, Opts) ->
	%% All of the body may have arrived by then (process mode buffers it).
	{IsFin, First, Req} = mustang_req:read_body(Req0, #{length => 1000}),
	timer:sleep(200),
	{Pid, MRef} = spawn_monitor(fun() ->
		{ok, Rest, Req2} = case IsFin of
			more -> other_process_body_h:read_all(Req, <<>>);
			ok -> {ok, <<>>, Req}
		end,
		Body = <<First/binary, Rest/binary>>,
		Digest = binary:encode_hex(crypto:hash(sha256, Body)),
		exit({done, mustang_req:reply(200, #{<<"content-type">> => <<"text/plain">>},
			[integer_to_binary(byte_size(Body)), $\s, Digest], Req2)})
	end),
	other_process_body_h:await_worker(Pid, MRef, Opts).
