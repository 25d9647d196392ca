%% mustang_decompress_h driven directly, with mustang_fake_stream_h after it
%% standing for mustang_stream_h: it reports the body it is given as
%% {fake_data, IsFin, Data} commands. No connection, no socket.
-module(mustang_decompress_h_tests).

-include_lib("eunit/include/eunit.hrl").

-define(ID, 1).

%% Helpers.

req(Headers, Mode) ->
	#{method => <<"POST">>, version => 'HTTP/1.1', path => <<"/">>, headers => Headers,
		has_body => true, body_length => maps:get(<<"content-length">>, Headers, undefined),
		mode => Mode, pid => self()}.

%% Starts the chain; returns the state and the Req the next handler got.
start(ReqHeaders) ->
	start(ReqHeaders, #{}).

%% Opts may have mode => inline | process (default process): the Req's mode.
start(ReqHeaders, Opts) ->
	flush_inits(),
	{[], State} = mustang_stream:init(?ID, req(ReqHeaders, maps:get(mode, Opts, process)),
		Opts#{stream_handlers => [mustang_decompress_h, mustang_fake_stream_h], fake_pid => self()}),
	receive {fake_init, Req} -> {State, Req} after 0 -> error(no_init) end.

flush_inits() ->
	receive {fake_init, _} -> flush_inits() after 0 -> ok end.

gzip_headers(Body) ->
	#{<<"content-encoding">> => <<"gzip">>, <<"content-length">> => integer_to_binary(byte_size(Body)),
		<<"content-type">> => <<"text/plain">>}.

%% Feeds Body in parts of Size bytes (the last one fin); returns all the
%% commands that came up and the final state.
feed(Body, Size, State) ->
	feed(Body, Size, State, []).

feed(Body, Size, State0, Acc) when byte_size(Body) =< Size ->
	{Commands, State} = mustang_stream:data(?ID, fin, Body, State0),
	{lists:append(lists:reverse([Commands | Acc])), State};
feed(Body, Size, State0, Acc) ->
	<<Part:Size/binary, Rest/binary>> = Body,
	{Commands, State} = mustang_stream:data(?ID, nofin, Part, State0),
	feed(Rest, Size, State, [Commands | Acc]).

%% The body the next handler got, checking it ends once with fin.
received(Commands) ->
	Data = [{IsFin, D} || {fake_data, IsFin, D} <- Commands],
	{Fins, _} = lists:partition(fun({IsFin, _}) -> IsFin =:= fin end, Data),
	?assertMatch([_], Fins),
	?assertMatch({fin, _}, lists:last(Data)),
	iolist_to_binary([D || {_, D} <- Data]).

text(N) ->
	binary:part(iolist_to_binary(lists:duplicate(N div 40 + 1,
		<<"The quick brown fox jumps over the dog. ">>)), 0, N).

%% Text that compresses about 2 to 1, like ordinary documents.
mixed(N) ->
	<< <<(C rem 26 + $a)>> || <<C>> <= crypto:strong_rand_bytes(N) >>.

%% The commands other than the body reports.
others(Commands) ->
	[C || C <- Commands, not is_tuple(C) orelse element(1, C) =/= fake_data].

inflate_state({mustang_decompress_h, State}) ->
	element(3, State).

closed({direct, Z}) ->
	try zlib:inflate(Z, <<>>) of
		_ -> false
	catch error:not_initialized -> true
	end;
closed({proc, Pid}) ->
	MRef = monitor(process, Pid),
	receive
		{'DOWN', MRef, process, Pid, _} -> true
	after 1000 ->
		demonitor(MRef, [flush]),
		false
	end.

%% Runs Fun in a new process (as a handler's worker would call the chain).
elsewhere(Fun) ->
	{Pid, MRef} = spawn_monitor(fun() -> exit({result, Fun()}) end),
	receive
		{'DOWN', MRef, process, Pid, {result, Result}} -> Result;
		{'DOWN', MRef, process, Pid, Reason} -> error(Reason)
	end.

-define(MODES, [process, inline]).

%% Requests left alone.

not_gzip_test_() ->
	Cases = [
		{"no content-encoding", #{}},
		{"br", #{<<"content-encoding">> => <<"br">>}},
		{"deflate", #{<<"content-encoding">> => <<"deflate">>}},
		{"two codings", #{<<"content-encoding">> => <<"gzip, br">>}},
		{"gzip twice", #{<<"content-encoding">> => <<"gzip, gzip">>}},
		{"invalid", #{<<"content-encoding">> => <<"gz ip">>}}
	],
	[{Name, fun() ->
		Body = zlib:gzip(text(1000)),
		Headers = Headers0#{<<"content-length">> => <<"9">>},
		{S0, Req} = start(Headers),
		?assertEqual(Headers, maps:get(headers, Req)),
		?assertEqual(<<"9">>, maps:get(body_length, Req)),
		?assertEqual([], maps:get(content_decoded, Req)),
		{Commands, _} = feed(Body, 100, S0),
		?assertEqual(Body, received(Commands))
	end} || {Name, Headers0} <- Cases].

disabled_test() ->
	Body = zlib:gzip(text(1000)),
	Headers = gzip_headers(Body),
	{S0, Req} = start(Headers, #{decompress_enabled => false}),
	?assertEqual(Headers, maps:get(headers, Req)),
	?assertEqual([], maps:get(content_decoded, Req)),
	{Commands, _} = feed(Body, 100, S0),
	?assertEqual(Body, received(Commands)).

%% Decoding.

req_updated_test() ->
	Body = zlib:gzip(text(1000)),
	{_, Req} = start(gzip_headers(Body)),
	?assertEqual(#{<<"content-type">> => <<"text/plain">>}, maps:get(headers, Req)),
	?assertEqual(undefined, maps:get(body_length, Req)),
	?assertEqual([<<"gzip">>], maps:get(content_decoded, Req)),
	?assert(maps:get(has_body, Req)).

decode_test_() ->
	%% Repeated text compresses far more than 20 to 1: no ratio limit for it.
	Cases = [{"text", text(100000), infinity}, {"mixed", mixed(100000), 20},
		{"short mixed", mixed(5000), 20}, {"empty", <<>>, 20}],
	[{lists:flatten(io_lib:format("~s in parts of ~b, ~s, ~s", [What, Size, Coding, Mode])), fun() ->
		Body = zlib:gzip(Plain),
		{S0, _} = start((gzip_headers(Body))#{<<"content-encoding">> => Coding},
			#{decompress_ratio_limit => Ratio, mode => Mode}),
		{Commands, S} = feed(Body, Size, S0),
		?assertEqual(Plain, received(Commands)),
		?assertEqual([], others(Commands)),
		%% Closed once the body ended.
		?assertEqual(ended, inflate_state(S))
	end} || {What, Plain, Ratio} <- Cases,
		Size <- [1, 7, 1000, 16384, 1000000],
		Coding <- [<<"gzip">>, <<"GZIP">>, <<"x-gzip">>, <<" gzip ">>],
		Mode <- ?MODES,
		Size > 1 orelse byte_size(Plain) < 10000,
		Mode =:= process orelse Coding =:= <<"gzip">>].

%% Inline mode: the body read by several processes in turn, one inflate
%% stream all along.
other_processes_test() ->
	Plain = mixed(200000),
	Body = zlib:gzip(Plain),
	{S0, _} = start(gzip_headers(Body), #{mode => inline}),
	<<P1:30000/binary, P2:30000/binary, P3:30000/binary, P4/binary>> = Body,
	{C1, S1} = mustang_stream:data(?ID, nofin, P1, S0),
	{C2, S2} = elsewhere(fun() -> mustang_stream:data(?ID, nofin, P2, S1) end),
	{C3, S3} = mustang_stream:data(?ID, nofin, P3, S2),
	{C4, S4} = elsewhere(fun() -> mustang_stream:data(?ID, fin, P4, S3) end),
	?assertEqual(Plain, received(C1 ++ C2 ++ C3 ++ C4)),
	?assertEqual(ended, inflate_state(S4)),
	%% Its process is gone with the end of the body.
	?assert(closed(inflate_state(S1))).

%% Each piece passed down is bounded, whatever the input part.
bounded_pieces_test() ->
	Plain = binary:copy(<<"a">>, 1000000),
	Body = zlib:gzip(Plain),
	{S0, _} = start(gzip_headers(Body), #{decompress_ratio_limit => infinity}),
	{Commands, _} = mustang_stream:data(?ID, fin, Body, S0),
	Sizes = [byte_size(D) || {fake_data, _, D} <- Commands],
	?assertEqual(1000000, lists:sum(Sizes)),
	?assert(lists:max(Sizes) =< 65536).

no_body_test() ->
	{S0, _} = start(#{<<"content-encoding">> => <<"gzip">>}),
	?assertMatch({[{fake_data, fin, <<>>}], _}, mustang_stream:data(?ID, fin, <<>>, S0)).

%% What follows the end of the gzip stream is ignored (zlib does not say
%% where the end was within a part).
trailing_data_test() ->
	Body = zlib:gzip(<<"hello">>),
	{S0, _} = start(gzip_headers(Body)),
	{C1, S1} = mustang_stream:data(?ID, nofin, Body, S0),
	{C2, S2} = mustang_stream:data(?ID, nofin, <<"garbage">>, S1),
	{C3, _} = mustang_stream:data(?ID, fin, <<"more">>, S2),
	?assertEqual(<<"hello">>, received(C1 ++ C2 ++ C3)).

%% Errors.

bad_gzip_test_() ->
	Good = zlib:gzip(mixed(10000)),
	Cases = [
		{"not gzip", <<"this is not gzip data at all">>},
		{"cut short", binary:part(Good, 0, byte_size(Good) - 4)},
		{"cut in the header", binary:part(Good, 0, 5)},
		{"corrupted", <<(binary:part(Good, 0, 20))/binary, 255, 255, 255, 255,
			(binary:part(Good, 24, byte_size(Good) - 24))/binary>>}
	],
	[{Name ++ ", " ++ atom_to_list(Mode), fun() ->
		{S0, _} = start(gzip_headers(Body), #{mode => Mode}),
		{Commands, S} = feed(Body, 100, S0),
		?assertMatch([{error_response, 400, _, _}, stop], others(Commands)),
		?assertEqual([], [fin || {fake_data, fin, _} <- Commands]),
		?assertEqual(failed, inflate_state(S))
	end} || {Name, Body} <- Cases, Mode <- ?MODES].

%% A zip bomb: 100 MB of zeros, about 100 KB gzipped, sent in 16 KB parts.
bomb_test_() ->
	[{atom_to_list(Mode), fun() -> bomb(Mode) end} || Mode <- ?MODES].

bomb(Mode) ->
	Z = zlib:open(),
	ok = zlib:deflateInit(Z, best_compression, deflated, 31, 8, default),
	Chunk = binary:copy(<<0>>, 1048576),
	Body = iolist_to_binary([[zlib:deflate(Z, Chunk) || _ <- lists:seq(1, 99)],
		zlib:deflate(Z, Chunk, finish)]),
	zlib:close(Z),
	?assert(byte_size(Body) < 200000),
	{S0, _} = start(gzip_headers(Body), #{mode => Mode}),
	{_, SFirst} = mustang_stream:data(?ID, nofin, binary:part(Body, 0, 10), S0),
	Inflater = inflate_state(SFirst),
	{Commands, S, Fed0} = feed_until_stop(binary:part(Body, 10, byte_size(Body) - 10), 16384,
		SFirst, [], 0),
	Fed = Fed0 + 10,
	Passed = iolist_size([D || {fake_data, _, D} <- Commands]),
	%% Stopped with 413 at the first part that went over.
	?assertMatch([{error_response, 413, _, _}, stop],
		others(Commands)),
	?assert(Passed =< 20 * Fed),
	?assert(Fed =< 16384 * 2),
	?assertEqual(failed, inflate_state(S)),
	?assert(closed(Inflater)),
	%% Later data is dropped.
	?assertMatch({[], _}, mustang_stream:data(?ID, fin, <<"more">>, S)).

feed_until_stop(Body, Size, State0, Acc, Fed) ->
	<<Part:Size/binary, Rest/binary>> = Body,
	{Commands, State} = mustang_stream:data(?ID, nofin, Part, State0),
	case lists:member(stop, Commands) of
		true -> {Acc ++ Commands, State, Fed + Size};
		false -> feed_until_stop(Rest, Size, State, Acc ++ Commands, Fed + Size)
	end.

%% The ratio is that of the decoded size to the encoded size received so far.
ratio_test_() ->
	Plain = text(100000),
	Body = zlib:gzip(Plain),
	Ratio = byte_size(Plain) / byte_size(Body),
	Run = fun(Opts) ->
		{S0, _} = start(gzip_headers(Body), Opts),
		{Commands, _} = mustang_stream:data(?ID, fin, Body, S0),
		others(Commands)
	end,
	[
		{"text compresses more than 20 to 1", ?_assert(Ratio > 20)},
		{"default limit 20: 413", ?_assertMatch([{error_response, 413, _, _}, stop], Run(#{}))},
		{"limit just below the ratio: 413", ?_assertMatch([{error_response, 413, _, _}, stop],
			Run(#{decompress_ratio_limit => trunc(Ratio) - 1}))},
		{"limit above the ratio", ?_assertEqual([], Run(#{decompress_ratio_limit => trunc(Ratio) + 1}))},
		{"infinity", ?_assertEqual([], Run(#{decompress_ratio_limit => infinity}))}
	].

%% set_options, from the handler (it comes up as a command).
set_options_test_() ->
	Plain = mixed(100000),
	Body = zlib:gzip(Plain),
	SetOptions = fun(S, Opts) ->
		{[{set_options, Opts}], S2} = mustang_stream:info(?ID, {fake_commands, [{set_options, Opts}]}, S),
		S2
	end,
	[
		{"ratio raised", fun() ->
			{S0, _} = start(gzip_headers(Body)),
			S1 = SetOptions(S0, #{decompress_ratio_limit => infinity}),
			{Commands, _} = feed(zlib:gzip(text(100000)), 1000, S1),
			?assertEqual(text(100000), received(Commands))
		end},
		{"ratio lowered after the body started", fun() ->
			{S0, _} = start(gzip_headers(Body), #{decompress_ratio_limit => infinity}),
			<<First:1000/binary, Rest/binary>> = Body,
			{_, S1} = mustang_stream:data(?ID, nofin, First, S0),
			S2 = SetOptions(S1, #{decompress_ratio_limit => 1}),
			{Commands, _} = mustang_stream:data(?ID, fin, Rest, S2),
			?assertMatch([{error_response, 413, _, _}, stop],
				others(Commands))
		end},
		{"disabled before the body", fun() ->
			{S0, _} = start(gzip_headers(Body), #{decompress_ratio_limit => infinity}),
			S1 = SetOptions(S0, #{decompress_enabled => false}),
			{Commands, _} = feed(Body, 1000, S1),
			?assertEqual(Body, received(Commands))
		end},
		{"enabled before the body", fun() ->
			{S0, _} = start(gzip_headers(Body), #{decompress_enabled => false,
				decompress_ratio_limit => infinity}),
			S1 = SetOptions(S0, #{decompress_enabled => true}),
			{Commands, _} = feed(Body, 1000, S1),
			?assertEqual(Plain, received(Commands))
		end},
		{"enabling once the body started is ignored", fun() ->
			{S0, _} = start(gzip_headers(Body), #{decompress_enabled => false}),
			<<First:1000/binary, Rest/binary>> = Body,
			{C1, S1} = mustang_stream:data(?ID, nofin, First, S0),
			S2 = SetOptions(S1, #{decompress_enabled => true}),
			{C2, _} = feed(Rest, 1000, S2),
			?assertEqual(Body, received(C1 ++ C2))
		end},
		{"disabling once the body started is ignored", fun() ->
			{S0, _} = start(gzip_headers(Body), #{decompress_ratio_limit => infinity}),
			<<First:1000/binary, Rest/binary>> = Body,
			{C1, S1} = mustang_stream:data(?ID, nofin, First, S0),
			S2 = SetOptions(S1, #{decompress_enabled => false}),
			{C2, _} = feed(Rest, 1000, S2),
			?assertEqual(Plain, received(C1 ++ C2))
		end}
	].

%% The inflate stream is closed at terminate (a reset in the middle of the
%% body) and terminate reaches the next handler.
terminate_closes_test_() ->
	[{atom_to_list(Mode), fun() -> terminate_closes(Mode) end} || Mode <- ?MODES].

terminate_closes(Mode) ->
	Body = zlib:gzip(mixed(100000)),
	{S0, _} = start(gzip_headers(Body), #{mode => Mode}),
	{_, S1} = mustang_stream:data(?ID, nofin, binary:part(Body, 0, 100), S0),
	Z = inflate_state(S1),
	?assertNot(closed(Z)),
	ok = mustang_stream:terminate(?ID, {stream_error, cancel, 'Reset.'}, S1),
	?assert(closed(Z)),
	receive {fake_terminate, {stream_error, cancel, _}} -> ok after 0 -> error(no_terminate) end.

%% Commands from the next handler pass, in order, with the body reports.
commands_pass_test() ->
	Body = zlib:gzip(<<"hello">>),
	{S0, _} = start(gzip_headers(Body)),
	Commands = [{flow, 10}, {response, 200, #{}, <<"ok">>}, {unknown, 1}],
	?assertMatch({Commands, _}, mustang_stream:info(?ID, {fake_commands, Commands}, S0)),
	?assertMatch({[{fake_info, hello}], _}, mustang_stream:info(?ID, hello, S0)).
