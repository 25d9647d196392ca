%% mustang_compress_h driven directly, with mustang_fake_stream_h after it
%% standing for the request handler: no connection, no socket.
-module(mustang_compress_h_tests).

-include_lib("eunit/include/eunit.hrl").

-define(ID, 1).

%% Helpers.

req(Headers) ->
	#{method => <<"GET">>, version => 'HTTP/1.1', path => <<"/">>, headers => Headers}.

start(ReqHeaders) ->
	start(ReqHeaders, #{}).

start(ReqHeaders, Opts) ->
	{[], State} = mustang_stream:init(?ID, req(ReqHeaders),
		Opts#{stream_handlers => [mustang_compress_h, mustang_fake_stream_h], fake_pid => self()}),
	State.

gzip_req() ->
	#{<<"accept-encoding">> => <<"gzip">>}.

%% What comes up when the request handler sends Commands.
send(Commands, State) ->
	mustang_stream:info(?ID, {fake_commands, Commands}, State).

%% The response that comes up for a whole response.
respond(ReqHeaders, Status, Headers, Body) ->
	respond(ReqHeaders, #{}, Status, Headers, Body).

respond(ReqHeaders, Opts, Status, Headers, Body) ->
	{[Resp = {response, _, _, _}], _} = send([{response, Status, Headers, Body}],
		start(ReqHeaders, Opts)),
	Resp.

text(N) ->
	iolist_to_binary(lists:duplicate(N div 10 + 1, <<"0123456789">>)).

body(N) ->
	binary:part(text(N), 0, N).

%% The zstream a state holds while it compresses (white box: the z field of
%% the #gz{} record in the resp field).
zstream(S) ->
	element(2, resp(S)).

%% The resp field of the state (white box).
resp({mustang_compress_h, State}) ->
	element(6, State).

%% A fresh inflate stream that decodes gzip, as a client would.
inflater() ->
	Z = zlib:open(),
	ok = zlib:inflateInit(Z, 31),
	Z.

%% Runs Fun in a new process (as a handler's worker would call the chain).
elsewhere(Fun) ->
	{Pid, MRef} = spawn_monitor(fun() -> exit({result, Fun()}) end),
	receive
		{'DOWN', MRef, process, Pid, {result, Result}} -> Result;
		{'DOWN', MRef, process, Pid, Reason} -> error(Reason)
	end.

closed(Z) ->
	try zlib:deflate(Z, <<"x">>) of
		_ -> false
	catch error:not_initialized -> true
	end.

%% Accept-Encoding negotiation (RFC 9110 12.5.3).

accepts_gzip_test_() ->
	Cases = [
		{undefined, false},
		{<<>>, false},
		{<<" , ">>, false},
		{<<"gzip">>, true},
		{<<"GZip">>, true},
		{<<"x-gzip">>, true},
		{<<"deflate">>, false},
		{<<"br, deflate">>, false},
		{<<"deflate, gzip">>, true},
		{<<"*">>, true},
		{<<"*;q=0">>, false},
		{<<"gzip;q=0">>, false},
		{<<"gzip;q=0.000">>, false},
		{<<"gzip;q=0.001">>, true},
		{<<"gzip;q=0, *">>, false},
		{<<"*, gzip;q=0">>, false},
		{<<"identity;q=0">>, false},
		{<<"gzip, identity;q=0">>, true},
		{<<"identity;q=0, gzip">>, true},
		{<<"*;q=0, gzip">>, true},
		{<<"gzip;q=0.8">>, true},
		{<<"br;q=1.0, gzip;q=0.8">>, true},
		{<<"gzip;q=0.5, identity">>, false},
		{<<"gzip;q=0.5, identity;q=0.5">>, true},
		{<<"gzip;q=0.5, identity;q=0.4">>, true},
		{<<"*;q=0.5, identity">>, false},
		{<<"*;q=0.5">>, true},
		{<<"gzip;Q=1.000">>, true},
		{[<<"deflate, ">>, <<"gzip">>], true},
		%% Invalid headers mean identity.
		{<<"gzip;q=2">>, false},
		{<<"gzip;q=">>, false},
		{<<"gzip;level=9">>, false},
		{<<"\"gzip\"">>, false}
	],
	[{iolist_to_binary(io_lib:format("~p", [V])),
		?_assertEqual(Expected, mustang_compress_h:accepts_gzip(V))} || {V, Expected} <- Cases].

%% The same decisions, as seen on a response.
negotiation_on_response_test() ->
	Body = body(1000),
	lists:foreach(fun({AE, Gzip}) ->
		ReqHeaders = case AE of undefined -> #{}; _ -> #{<<"accept-encoding">> => AE} end,
		{response, 200, H, B} = respond(ReqHeaders, 200, #{}, Body),
		?assertEqual(<<"accept-encoding">>, maps:get(<<"vary">>, H)),
		case Gzip of
			true ->
				?assertEqual(<<"gzip">>, maps:get(<<"content-encoding">>, H)),
				?assertEqual(Body, zlib:gunzip(B));
			false ->
				?assertNot(maps:is_key(<<"content-encoding">>, H)),
				?assertEqual(Body, B)
		end
	end, [{undefined, false}, {<<"gzip">>, true}, {<<"identity;q=0">>, false},
		{<<"gzip;q=0">>, false}, {<<"*">>, true}, {<<"gzip;q=0.3, identity;q=0.5">>, false}]).

%% Threshold.

threshold_test_() ->
	[
		{"299 bytes: as is, no vary", fun() ->
			Body = body(299),
			?assertEqual({response, 200, #{}, Body}, respond(gzip_req(), 200, #{}, Body))
		end},
		{"300 bytes: compressed", fun() ->
			Body = body(300),
			{response, 200, H, B} = respond(gzip_req(), 200, #{}, Body),
			?assertEqual(#{<<"content-encoding">> => <<"gzip">>, <<"vary">> => <<"accept-encoding">>}, H),
			?assertEqual(Body, zlib:gunzip(B)),
			?assert(byte_size(B) < 300)
		end},
		{"301 bytes as an iolist: compressed", fun() ->
			Body = [body(1), [body(200) | body(100)]],
			{response, 200, H, B} = respond(gzip_req(), 200, #{}, Body),
			?assertEqual(<<"gzip">>, maps:get(<<"content-encoding">>, H)),
			?assertEqual(iolist_to_binary(Body), zlib:gunzip(B))
		end},
		{"compress_threshold option", fun() ->
			Body = body(100),
			?assertEqual({response, 200, #{}, Body}, respond(gzip_req(), 200, #{}, Body)),
			{response, 200, H, B} = respond(gzip_req(), #{compress_threshold => 100}, 200, #{}, Body),
			?assertEqual(<<"gzip">>, maps:get(<<"content-encoding">>, H)),
			?assertEqual(Body, zlib:gunzip(B)),
			?assertEqual({response, 200, #{}, Body},
				respond(gzip_req(), #{compress_threshold => 101}, 200, #{}, Body))
		end},
		{"compressed not smaller: as is, with vary", fun() ->
			Body = crypto:strong_rand_bytes(400),
			?assertEqual({response, 200, #{<<"vary">> => <<"accept-encoding">>}, Body},
				respond(gzip_req(), 200, #{}, Body))
		end},
		{"set_options changes the threshold for the stream", fun() ->
			Body = body(100),
			S0 = start(gzip_req()),
			{[{set_options, _}], S1} = send([{set_options, #{compress_threshold => 50, idle_timeout => 1}}], S0),
			{[{response, 200, H, B}], _} = send([{response, 200, #{}, Body}], S1),
			?assertEqual(<<"gzip">>, maps:get(<<"content-encoding">>, H)),
			?assertEqual(Body, zlib:gunzip(B))
		end}
	].

%% Headers of whole responses.

content_length_removed_test() ->
	Body = body(1000),
	{response, 200, H, B} = respond(gzip_req(), 200,
		#{<<"content-length">> => <<"1000">>, <<"content-type">> => <<"text/plain">>}, Body),
	?assertEqual(#{<<"content-encoding">> => <<"gzip">>, <<"vary">> => <<"accept-encoding">>,
		<<"content-type">> => <<"text/plain">>}, H),
	?assertEqual(Body, zlib:gunzip(B)).

vary_merge_test_() ->
	Body = body(1000),
	Cases = [
		{<<"origin">>, <<"origin, accept-encoding">>},
		{<<"Origin, User-Agent">>, <<"Origin, User-Agent, accept-encoding">>},
		{[<<"ori">>, "gin"], <<"origin, accept-encoding">>},
		{<<"Accept-Encoding">>, <<"Accept-Encoding">>},
		{<<"origin,accept-encoding">>, <<"origin,accept-encoding">>},
		{<<"*">>, <<"*">>},
		{<<>>, <<"accept-encoding">>},
		{<<", ">>, <<"accept-encoding">>}
	],
	[{binary_to_list(iolist_to_binary(V)), fun() ->
		%% Compressed or not: the same vary.
		lists:foreach(fun(ReqHeaders) ->
			{response, 200, #{<<"vary">> := Got}, _} = respond(ReqHeaders, 200, #{<<"vary">> => V}, Body),
			?assertEqual(Expected, iolist_to_binary(Got))
		end, [gzip_req(), #{}])
	end} || {V, Expected} <- Cases].

left_alone_test_() ->
	Body = body(1000),
	Alone = fun(Status, Headers, B) ->
		Resp = {response, Status, Headers, B},
		?assertEqual(Resp, respond(gzip_req(), Status, Headers, B))
	end,
	[
		{"content-encoding set", fun() -> Alone(200, #{<<"content-encoding">> => <<"br">>}, Body) end},
		{"content-encoding identity set", fun() -> Alone(200, #{<<"content-encoding">> => <<"identity">>}, Body) end},
		{"etag set", fun() -> Alone(200, #{<<"etag">> => <<"\"abc\"">>}, Body) end},
		{"206 with content-range", fun() ->
			Alone(206, #{<<"content-range">> => <<"bytes 0-999/5000">>}, Body) end},
		{"204", fun() -> Alone(204, #{}, Body) end},
		{"304", fun() -> Alone(304, #{<<"etag">> => <<"\"x\"">>}, Body) end},
		{"304 as a binary", fun() -> Alone(<<"304 Not Modified">>, #{}, Body) end},
		{"sendfile body", fun() -> Alone(200, #{}, {sendfile, 0, 100000, "/etc/hostname"}) end},
		{"binary 200 status is compressed", fun() ->
			{response, <<"200 OK">>, H, B} = respond(gzip_req(), <<"200 OK">>, #{}, Body),
			?assertEqual(<<"gzip">>, maps:get(<<"content-encoding">>, H)),
			?assertEqual(Body, zlib:gunzip(B))
		end},
		{"error_response untouched", fun() ->
			C = {error_response, 500, #{}, Body},
			?assertMatch({[C], _}, send([C], start(gzip_req())))
		end}
	].

%% Commands that are not responses pass unchanged, around a response.
other_commands_test() ->
	Body = body(1000),
	Self = self(),
	Ref = make_ref(),
	{[{inform, 103, #{}}, {flow, 100}, {response, 200, #{<<"content-encoding">> := <<"gzip">>}, _},
			{ack, Self, Ref}, stop, {unknown, 1}], _}
		= send([{inform, 103, #{}}, {flow, 100}, {response, 200, #{}, Body}, {ack, Self, Ref},
			stop, {unknown, 1}], start(gzip_req())).

%% Commands returned by the next handler's init/3 and data/4 go through too.
init_and_data_commands_test() ->
	Body = body(1000),
	{[{response, 200, #{<<"content-encoding">> := <<"gzip">>}, B}], S} = mustang_stream:init(?ID,
		req(gzip_req()), #{stream_handlers => [mustang_compress_h, mustang_fake_stream_h],
			fake_init_commands => [{response, 200, #{}, Body}]}),
	?assertEqual(Body, zlib:gunzip(B)),
	?assertMatch({[{fake_data, fin, <<"req">>}], _}, mustang_stream:data(?ID, fin, <<"req">>, S)).

%% Streamed responses.

%% Every part, once the client has it, decodes to all that was sent so far.
streamed_sync_flush_test() ->
	S0 = start(gzip_req()),
	{[{headers, 200, H}], S1} = send([{headers, 200, #{<<"content-length">> => <<"12345">>,
		<<"content-type">> => <<"text/plain">>}}], S0),
	?assertEqual(#{<<"content-encoding">> => <<"gzip">>, <<"vary">> => <<"accept-encoding">>,
		<<"content-type">> => <<"text/plain">>}, H),
	Inflate = inflater(),
	Parts = [<<"a">>, body(10), [<<"io">>, "list"], body(5000), crypto:strong_rand_bytes(100),
		body(100000), <<"z">>],
	{SLast, Received, Decoded} = lists:foldl(fun(Part, {S, Sent0, Decoded0}) ->
		{[{data, nofin, Out}], S2} = send([{data, nofin, Part}], S),
		Sent = <<Sent0/binary, (iolist_to_binary(Part))/binary>>,
		%% What the client can decode now, with nothing more to come yet.
		Decoded = <<Decoded0/binary, (iolist_to_binary(zlib:inflate(Inflate, Out)))/binary>>,
		?assertEqual(Sent, Decoded),
		{S2, Sent, Decoded}
	end, {S1, <<>>, <<>>}, Parts),
	%% An empty part sends nothing.
	?assertMatch({[], _}, send([{data, nofin, <<>>}], SLast)),
	{[{data, fin, Last}], S3} = send([{data, fin, <<"end">>}], SLast),
	Final = iolist_to_binary(zlib:inflate(Inflate, Last)),
	?assertEqual(<<Received/binary, "end">>, <<Decoded/binary, Final/binary>>),
	%% The gzip stream ended properly (CRC-32 and size checked by zlib).
	ok = zlib:inflateEnd(Inflate),
	zlib:close(Inflate),
	?assertEqual(done, resp(S3)),
	%% Later commands pass untouched.
	?assertMatch({[{data, fin, <<"x">>}], _}, send([{data, fin, <<"x">>}], S3)).

%% Parts from other processes (in inline mode the chain runs in whatever
%% process calls mustang_req): the same gzip stream goes on, each part still
%% decodable at once.
streamed_other_processes_test() ->
	S0 = start(gzip_req()),
	{[{headers, 200, _}], S1} = send([{headers, 200, #{}}], S0),
	Inflate = inflater(),
	Decode = fun(Out) -> iolist_to_binary(zlib:inflate(Inflate, Out)) end,
	{[{data, nofin, Out1}], S2} = send([{data, nofin, body(1000)}], S1),
	?assertEqual(body(1000), Decode(Out1)),
	{[{data, nofin, Out2}], S3} = elsewhere(fun() -> send([{data, nofin, <<"from a worker">>}], S2) end),
	?assertEqual(<<"from a worker">>, Decode(Out2)),
	{[{data, nofin, Out3}], S4} = elsewhere(fun() -> send([{data, nofin, body(500)}], S3) end),
	?assertEqual(body(500), Decode(Out3)),
	{[{data, nofin, Out4}], S5} = send([{data, nofin, <<"back">>}], S4),
	?assertEqual(<<"back">>, Decode(Out4)),
	{[{data, fin, Out5}], _} = elsewhere(fun() -> send([{data, fin, <<"end">>}], S5) end),
	?assertEqual(<<"end">>, Decode(Out5)),
	ok = zlib:inflateEnd(Inflate),
	zlib:close(Inflate).

%% With buffering, parts are kept until 32 KiB; the whole still decodes.
streamed_buffering_test() ->
	S0 = start(gzip_req(), #{compress_buffering => true}),
	{[{headers, 200, _}], S1} = send([{headers, 200, #{}}], S0),
	{[], S2} = send([{data, nofin, <<"hello ">>}], S1),
	{[], S3} = elsewhere(fun() -> send([{data, nofin, <<"world">>}], S2) end),
	{[{data, fin, Out}], _} = send([{data, fin, <<>>}], S3),
	?assertEqual(<<"hello world">>, zlib:gunzip(iolist_to_binary(Out))).

streamed_buffering_size_test() ->
	S0 = start(gzip_req(), #{compress_buffering => true}),
	{[{headers, 200, _}], S1} = send([{headers, 200, #{}}], S0),
	Inflate = inflater(),
	Part = body(1000),
	%% 32 parts of 1000 bytes are kept, the 33rd (32768 bytes or more) sends all.
	S2 = lists:foldl(fun(_, S) ->
		{[], S2} = send([{data, nofin, Part}], S),
		S2
	end, S1, lists:seq(1, 32)),
	{[{data, nofin, Out}], S3} = send([{data, nofin, Part}], S2),
	?assertEqual(binary:copy(Part, 33), iolist_to_binary(zlib:inflate(Inflate, Out))),
	{[], S4} = send([{data, nofin, Part}], S3),
	{[{data, nofin, Last}, {trailers, #{}}], _} = send([{trailers, #{}}], S4),
	?assertEqual(Part, iolist_to_binary(zlib:inflate(Inflate, Last))),
	ok = zlib:inflateEnd(Inflate),
	zlib:close(Inflate).

%% set_options switches buffering within a stream.
streamed_buffering_set_options_test() ->
	S0 = start(gzip_req(), #{compress_buffering => true}),
	{[{headers, 200, _}], S1} = send([{headers, 200, #{}}], S0),
	{[], S2} = send([{data, nofin, <<"kept ">>}], S1),
	{[{set_options, _}, {data, nofin, Out1}], _} = send([{set_options, #{compress_buffering => false}},
		{data, nofin, <<"hello">>}], S2),
	Inflate = inflater(),
	?assertEqual(<<"kept hello">>, iolist_to_binary(zlib:inflate(Inflate, Out1))),
	zlib:close(Inflate).

%% Streamed responses are compressed whatever their size; the same things
%% as for whole responses leave them alone.
streamed_not_compressed_test_() ->
	Alone = fun(ReqHeaders, Status, Headers) ->
		S0 = start(ReqHeaders),
		{[{headers, Status, H}], S1} = send([{headers, Status, Headers}], S0),
		{[{data, nofin, <<"abc">>}, {data, fin, <<"def">>}], S2} =
			send([{data, nofin, <<"abc">>}, {data, fin, <<"def">>}], S1),
		?assertEqual(done, resp(S2)),
		H
	end,
	[
		{"no accept-encoding: vary only", fun() ->
			?assertEqual(#{<<"vary">> => <<"accept-encoding">>, <<"content-length">> => <<"6">>},
				Alone(#{}, 200, #{<<"content-length">> => <<"6">>}))
		end},
		{"gzip;q=0: vary only", fun() ->
			?assertEqual(#{<<"vary">> => <<"origin, accept-encoding">>},
				Alone(#{<<"accept-encoding">> => <<"gzip;q=0">>}, 200, #{<<"vary">> => <<"origin">>}))
		end},
		{"content-encoding set", fun() ->
			?assertEqual(#{<<"content-encoding">> => <<"br">>},
				Alone(gzip_req(), 200, #{<<"content-encoding">> => <<"br">>}))
		end},
		{"204", fun() -> ?assertEqual(#{}, Alone(gzip_req(), 204, #{})) end},
		{"304", fun() -> ?assertEqual(#{}, Alone(gzip_req(), 304, #{})) end}
	].

streamed_trailers_test() ->
	S0 = start(gzip_req()),
	{[{headers, 200, _}], S1} = send([{headers, 200, #{<<"trailer">> => <<"x-sum">>}}], S0),
	{[{data, nofin, Out1}], S2a} = send([{data, nofin, body(1000)}], S1),
	Z = zstream(S2a),
	{[{data, nofin, Out2}, {trailers, #{<<"x-sum">> := <<"1">>}}], S2} =
		send([{trailers, #{<<"x-sum">> => <<"1">>}}], S2a),
	%% A complete gzip stream (gunzip fails on a cut one).
	?assertEqual(body(1000), zlib:gunzip(iolist_to_binary([Out1, Out2]))),
	?assert(closed(Z)),
	?assertEqual(done, resp(S2)).

streamed_sendfile_test() ->
	Path = filename:join(tmp_dir(), "mustang_compress_h_sendfile"),
	Content = iolist_to_binary([body(200000), crypto:strong_rand_bytes(1000)]),
	ok = file:write_file(Path, Content),
	try
		S0 = start(gzip_req()),
		{[{headers, 200, #{<<"content-encoding">> := <<"gzip">>}}], S1} = send([{headers, 200, #{}}], S0),
		Inflate = zlib:open(),
		ok = zlib:inflateInit(Inflate, 31),
		{[{data, nofin, Out1}], S2} = send([{data, nofin, {sendfile, 10, 150000, Path}}], S1),
		%% Flushed like any other part.
		?assertEqual(binary:part(Content, 10, 150000), iolist_to_binary(zlib:inflate(Inflate, Out1))),
		{[{data, fin, Out2}], _} = send([{data, fin, {sendfile, 150010, 51000 - 10, Path}}], S2),
		?assertEqual(binary:part(Content, 150010, 50990), iolist_to_binary(zlib:inflate(Inflate, Out2))),
		ok = zlib:inflateEnd(Inflate),
		zlib:close(Inflate),
		%% A file shorter than said: internal error.
		S3 = start(gzip_req()),
		{_, S4} = send([{headers, 200, #{}}], S3),
		?assertMatch({[{internal_error, {sendfile, _, eof}, _}], _},
			send([{data, fin, {sendfile, 0, byte_size(Content) + 1, Path}}], S4)),
		%% Not compressed: passed as is.
		S5 = start(#{}),
		{_, S6} = send([{headers, 200, #{}}], S5),
		?assertMatch({[{data, fin, {sendfile, 0, 10, Path}}], _},
			send([{data, fin, {sendfile, 0, 10, Path}}], S6))
	after
		file:delete(Path)
	end.

tmp_dir() ->
	case os:getenv("TMPDIR") of
		false -> "/tmp";
		Dir -> Dir
	end.

%% The zstream is closed at terminate, e.g. when the stream is reset in the
%% middle of a compressed response, and terminate reaches the next handler.
terminate_closes_test() ->
	S0 = start(gzip_req()),
	{_, S1} = send([{headers, 200, #{}}], S0),
	{_, S2} = send([{data, nofin, <<"part">>}], S1),
	Z = zstream(S2),
	?assertNot(closed(Z)),
	ok = mustang_stream:terminate(?ID, {stream_error, cancel, 'Reset by the client.'}, S2),
	?assert(closed(Z)),
	receive {fake_terminate, {stream_error, cancel, _}} -> ok after 0 -> error(no_terminate) end.

%% The response switched protocols: nothing after it is touched.
switch_protocol_test() ->
	S0 = start(gzip_req()),
	{[{switch_protocol, #{}, m, s}], S1} = send([{switch_protocol, #{}, m, s}], S0),
	Body = body(1000),
	?assertMatch({[{response, 200, #{}, Body}]}, {element(1, send([{response, 200, #{}, Body}], S1))}).

early_error_test() ->
	Resp = {response, 400, #{}, body(1000)},
	?assertEqual(Resp, mustang_stream:early_error(?ID, {connection_error, x, 'x'}, #{}, Resp,
		#{stream_handlers => [mustang_compress_h, mustang_fake_stream_h]})).
