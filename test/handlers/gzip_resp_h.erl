%% Responses for compress_SUITE, N bytes of text (N from the binding `size').
%% Options (a map, `mode' says which):
%%   #{mode => reply}    one reply/4
%%   #{mode => stream}   stream_reply/3 then the body in parts of 1000 bytes,
%%                       the last with fin
%%   #{mode => parts, notify => Name}
%%                       stream_reply/3, then three lines "part K ...\n"
%%                       (nofin), then fin. After sending part K it sends
%%                       {gzip_part_sent, self(), K} to the process
%%                       registered as Name and waits for {gzip_next, K}
%%                       before sending the next one: the test answers once
%%                       the client has shown part K.
%%   #{mode => workers}  stream_reply/3 and a first part from the handler's
%%                       process, two parts from another process it gave its
%%                       Req to, and no fin: mustang_stream_h ends the body
%%                       once the handler returns (in inline mode, the stream
%%                       handlers run in each of these processes in turn)
-module(gzip_resp_h).
-export([init/2]).
-export([text/1]).
-export([part/1]).

init(Req0, Opts = #{mode := reply}) ->
	Body = text(binary_to_integer(mustang_req:binding(size, Req0))),
	{ok, mustang_req:reply(200, #{<<"content-type">> => <<"text/plain">>}, Body, Req0), Opts};
init(Req0, Opts = #{mode := stream}) ->
	Body = text(binary_to_integer(mustang_req:binding(size, Req0))),
	Req = mustang_req:stream_reply(200, #{<<"content-type">> => <<"text/plain">>}, Req0),
	ok = stream(Body, Req),
	{ok, Req, Opts};
init(Req0, Opts = #{mode := workers}) ->
	Req = mustang_req:stream_reply(200, #{<<"content-type">> => <<"text/plain">>}, Req0),
	ok = mustang_req:stream_body(<<"from the handler\n">>, nofin, Req),
	{Pid, MRef} = spawn_monitor(fun() ->
		ok = mustang_req:stream_body(<<"from a worker\n">>, nofin, Req),
		ok = mustang_req:stream_body(text(5000), nofin, Req)
	end),
	receive
		{'DOWN', MRef, process, Pid, normal} -> {ok, Req, Opts};
		{'DOWN', MRef, process, Pid, Reason} -> exit({worker_failed, Reason})
	end;
init(Req0, Opts = #{mode := parts}) ->
	Req = mustang_req:stream_reply(200, #{<<"content-type">> => <<"text/plain">>}, Req0),
	lists:foreach(fun(K) ->
		ok = mustang_req:stream_body(part(K), nofin, Req),
		h2_notify:send(Opts, {gzip_part_sent, self(), K}),
		receive
			{gzip_next, K} -> ok
		after 20000 ->
			exit(no_gzip_next)
		end
	end, [1, 2, 3]),
	ok = mustang_req:stream_body(<<"end\n">>, fin, Req),
	{ok, Req, Opts}.

stream(Body, Req) when byte_size(Body) =< 1000 ->
	mustang_req:stream_body(Body, fin, Req);
stream(<<Part:1000/binary, Rest/binary>>, Req) ->
	ok = mustang_req:stream_body(Part, nofin, Req),
	stream(Rest, Req).

%% Text that compresses well but not absurdly (no 413 when echoed gzipped).
text(N) ->
	Words = [<<"alpha ">>, <<"bravo ">>, <<"charlie ">>, <<"delta ">>, <<"echo ">>,
		<<"foxtrot ">>, <<"golf ">>, <<"hotel ">>, <<"india ">>, <<"juliett\n">>],
	Seq = iolist_to_binary([[lists:nth((I * 7 + I div 10) rem 10 + 1, Words),
		integer_to_binary(I), " "] || I <- lists:seq(1, N div 8 + 1)]),
	binary:part(Seq, 0, N).

%% Part K of the `parts' mode: one line, short (a client decoding it must
%% see it without more data).
part(K) ->
	<<"part ", (integer_to_binary(K))/binary, " of the streamed response\n">>.
