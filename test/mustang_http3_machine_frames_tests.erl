%% Tests for the HTTP/3 machine, continued: frames on the streams where
%% they may or may not come (RFC 9114 7), limits against denial of service
%% (RFC 9114 10.5), and PropEr: any split of each stream's bytes, and any
%% interleaving of the streams, give the same requests.
-module(mustang_http3_machine_frames_tests).

-include_lib("proper/include/proper.hrl").
-include_lib("eunit/include/eunit.hrl").

-define(M, mustang_http3_machine).
-define(F, mustang_http3_frame).
-define(T, mustang_http3_machine_tests).

ready() -> ?T:ready(#{}, #{}).
feed(StreamID, Data, IsFin, M) -> ?T:feed(StreamID, Data, IsFin, M).
headers(Fields) -> ?T:headers(Fields).
req() -> ?T:req().
data(Bin) -> iolist_to_binary(?F:data(Bin)).
cites(Reason) -> mustang_http3_frame_tests:cites(Reason).

conn_error({error, Code, Section, Actions}) ->
	{close, Code, _} = lists:last(Actions),
	{Code, Section};
conn_error(Other) ->
	{no_connection_error, Other}.

control(Frames) -> conn_error(feed(2, Frames, nofin, ready())).
bidi(Frames) -> conn_error(feed(0, Frames, nofin, ready())).

%% RFC 9114 7.1: frames split anywhere (data_frame_can_span_multiple_packets,
%% headers_, settings_, goaway_, max_push_id_, unknown_frame_...): each
%% stream's bytes fed one at a time give the same result as whole.
one_byte_at_a_time(StreamID, Bytes, M0) ->
	lists:foldl(fun(B, {Events, M}) ->
		{E, Actions, M2} = feed(StreamID, <<B>>, nofin, M),
		[] = [A || A <- Actions, element(1, A) =/= send_uni],
		{Events ++ E, M2}
	end, {[], M0}, binary_to_list(iolist_to_binary(Bytes))).

span_test_() ->
	Request = [headers(?T:req() ++ [{<<"content-length">>, <<"13">>}]), data(<<"Hello server!">>),
		[?F:encode_int(?F:reserved_type(5)), 3, "abc"], headers([{<<"x-t">>, <<"1">>}])],
	Control = [<<0>>, ?F:settings(#{qpack_max_table_capacity => 100, enable_connect_protocol => true}),
		?F:max_push_id(16#4000), ?F:goaway(16#40000000), [?F:encode_int(?F:reserved_type(9)), 2, "ab"]],
	[
		?_test(begin
			{Events, M} = one_byte_at_a_time(0, Request, ready()),
			[{headers, 0, nofin, #{content_length := 13}} | Rest] = Events,
			{Data, [{trailers, 0, [{<<"x-t">>, <<"1">>}]}]} = lists:splitwith(
				fun(E) -> element(1, E) =:= data end, Rest),
			<<"Hello server!">> = iolist_to_binary([D || {data, 0, nofin, D} <- Data]),
			{[{data, 0, fin, <<>>}], [], _} = feed(0, <<>>, fin, M)
		end),
		?_test(begin
			{[{settings, #{qpack_max_table_capacity := 100, enable_connect_protocol := true}},
				{goaway, 16#40000000}], _} = one_byte_at_a_time(2, Control, ?T:init(#{}))
		end)
	].

%% RFC 9114 7.1: a frame's payload holds exactly its fields.
frame_size_test_() ->
	FE = {h3_frame_error, "RFC9114 7.1"},
	[
		%% goaway_frame_too_short, max_push_id_frame_too_short,
		%% goaway_frame_too_long, max_push_id_frame_too_long
		?_assertEqual(FE, control(<<7, 0>>)),
		?_assertEqual(FE, control(<<13, 0>>)),
		?_assertEqual(FE, control(<<7, 2, 0, 0>>)),
		?_assertEqual(FE, control(<<13, 3, 16#40, 0, 0>>)),
		?_assertEqual(FE, control(<<7, 1, 16#40>>)),
		?_assertEqual(FE, control(<<3, 0>>)),
		?_assertEqual(FE, control(<<3, 2, 0, 0>>)),
		%% headers_frame_too_short: an empty field section prefix is a QPACK
		%% decompression failure (RFC 9204 4.5.1).
		?_assertEqual({qpack_decompression_failed, "RFC9204 4.5"}, bidi(<<1, 0>>)),
		?_assertEqual({qpack_decompression_failed, "RFC9204 4.5"}, bidi(<<1, 1, 0>>))
	].

%% RFC 9114 7.2: which frame on which stream.
frame_placement_test_() ->
	Unexpected = fun(Section) -> {h3_frame_unexpected, Section} end,
	[
		%% data_frame_rejected_on_control_stream, headers_frame_rejected_on_control_stream
		?_assertEqual(Unexpected("RFC9114 7.2"), control(data(<<"x">>))),
		?_assertEqual(Unexpected("RFC9114 7.2"), control(headers(req()))),
		%% settings_twice
		?_assertEqual(Unexpected("RFC9114 7.2.4"), control(?F:settings(#{}))),
		%% settings_on_bidi_stream, goaway_on_bidi_stream, max_push_id_on_bidi_stream,
		%% and CANCEL_PUSH; before and after the request head.
		?_assertEqual(Unexpected("RFC9114 7.2"), bidi(?F:settings(#{}))),
		?_assertEqual(Unexpected("RFC9114 7.2"), bidi(?F:goaway(0))),
		?_assertEqual(Unexpected("RFC9114 7.2"), bidi(?F:max_push_id(0))),
		?_assertEqual(Unexpected("RFC9114 7.2"), bidi(?F:cancel_push(0))),
		?_assertEqual(Unexpected("RFC9114 7.2"), bidi([headers(req()), ?F:settings(#{})])),
		?_assertEqual(Unexpected("RFC9114 7.2"), bidi([headers(req()), ?F:goaway(0)])),
		%% reserved_reject_http2_0x02_control, _0x06, _0x08, _0x09, and _bidi
		?_assertEqual(Unexpected("RFC9114 7.2.8"), control(<<2, 5, 0:40>>)),
		?_assertEqual(Unexpected("RFC9114 7.2.8"), control(<<6, 8, 0:64>>)),
		?_assertEqual(Unexpected("RFC9114 7.2.8"), control(<<8, 4, 0:32>>)),
		?_assertEqual(Unexpected("RFC9114 7.2.8"), control(<<9, 0>>)),
		?_assertEqual(Unexpected("RFC9114 7.2.8"), bidi(<<2, 5, 0:40>>)),
		?_assertEqual(Unexpected("RFC9114 7.2.8"), bidi(<<6, 8, 0:64>>)),
		?_assertEqual(Unexpected("RFC9114 7.2.8"), bidi([headers(req()), <<8, 4, 0:32>>])),
		?_assertEqual(Unexpected("RFC9114 7.2.8"), bidi([headers(req()), <<9, 0>>])),
		%% reserved_on_control_stream: ignored.
		?_assertMatch({[], [], _}, feed(2, [?F:encode_int(?F:reserved_type(2)), 4, "abcd"], nofin, ready()))
	].

%% RFC 9114 7.2.4: SETTINGS.
settings_test_() ->
	SE = fun(Section) -> {h3_settings_error, Section} end,
	First = fun(Payload) -> feed(2, [<<0, 4>>, ?F:encode_int(byte_size(Payload)), Payload], nofin, ?T:init(#{})) end,
	[
		%% settings_identifier_twice
		?_assertEqual(SE("RFC9114 7.2.4"), conn_error(First(<<1, 0, 1, 0>>))),
		%% settings_ignore_unknown_identifier, settings_ignore_reserved_identifier
		?_assertMatch({[{settings, #{}}], [], _}, First(<<16#40, 16#ff, 1>>)),
		?_assertMatch({[{settings, #{}}], [], _}, First(<<(?F:encode_int(?F:reserved_type(7)))/binary, 5>>)),
		%% settings_reject_http2_0x02, _0x03, _0x04, _0x05
		?_assertEqual(SE("RFC9114 7.2.4.1"), conn_error(First(<<2, 0>>))),
		?_assertEqual(SE("RFC9114 7.2.4.1"), conn_error(First(<<3, 0>>))),
		?_assertEqual(SE("RFC9114 7.2.4.1"), conn_error(First(<<4, 0>>))),
		?_assertEqual(SE("RFC9114 7.2.4.1"), conn_error(First(<<5, 0>>))),
		%% The client's SETTINGS_ENABLE_CONNECT_PROTOCOL has no effect on a
		%% server, but must be 0 or 1 (RFC 8441 3).
		?_assertMatch({[{settings, #{enable_connect_protocol := true}}], [], _}, First(<<8, 1>>)),
		?_assertEqual(SE("RFC8441 3"), conn_error(First(<<8, 2>>))),
		%% All known settings read.
		?_assertMatch({[{settings, #{qpack_max_table_capacity := 4096, max_field_section_size := 1000,
			qpack_blocked_streams := 5, h3_datagram := false}}], _, _},
			First(<<1, 16#50, 0, 6, 16#43, 16#e8, 7, 5, 16#33, 0>>))
	].

%% RFC 9114 10.5: limits.
dos_test_() ->
	Rate = fun(Max) -> ?T:ready(#{max_cancel_stream_rate => {Max, 1000}}, #{}) end,
	Cancel = fun(N, M0) ->
		lists:foldl(fun
			(I, {ok, _, M}) ->
				{[{headers, _, nofin, _}], [], M2} = feed(4 * I, headers(?T:req()), nofin, M),
				case ?M:stream_reset(4 * I, 16#10c, 0, M2) of
					{ok, Events, M3} -> {ok, Events, element(2, ?M:take_actions(M3))};
					Error -> Error
				end;
			(_, Error) ->
				Error
		end, {ok, [], M0}, lists:seq(0, N - 1))
	end,
	[
		%% reject_large_unknown_frame: Mustang skips an unknown frame as it
		%% arrives, whatever its length, instead of refusing it; nothing of it
		%% is kept.
		?_test(begin
			{[], [], M1} = feed(0, [?F:encode_int(?F:reserved_type(1)), ?F:encode_int(1 bsl 40)],
				nofin, ready()),
			{[], [], M2} = feed(0, binary:copy(<<"x">>, 100000), nofin, M1),
			true = erts_debug:flat_size(M2) < 2000
		end),
		%% Control stream frames: 16384 octets at most.
		?_assertMatch({[], [], _}, feed(2, [<<13>>, ?F:encode_int(16384)], nofin, ready())),
		?_assertEqual({h3_excessive_load, "RFC9114 10.5"},
			conn_error(feed(2, [<<13>>, ?F:encode_int(16385)], nofin, ready()))),
		%% Streams the client cancels: max_cancel_stream_rate, at the limit and
		%% one past.
		?_assertMatch({ok, [{cancel, _, _}], _}, Cancel(5, Rate(5))),
		?_assertMatch({error, {connection_error, h3_excessive_load, _}, _}, Cancel(6, Rate(5))),
		%% Unknown unidirectional streams count too.
		?_assertMatch({error, {connection_error, h3_excessive_load, _}, _},
			lists:foldl(fun(I, {ok, _, M}) -> ?M:stream_data(6 + 4 * I, <<4>>, nofin, 0, M); (_, E) -> E end,
				{ok, [], Rate(3)}, lists:seq(0, 3))),
		%% A request stream held behind a blocked field section: 1 MiB at most,
		%% then a stream error.
		?_test(begin
			M0 = ?T:ready(#{}, #{}),
			{[], [], M1} = feed(0, <<1, 3, 2, 0, 16#80>>, nofin, M0),
			{[], [], M2} = feed(0, binary:copy(<<"x">>, 1048576), nofin, M1),
			{[{stream_error, 0, h3_excessive_load, R}], _, _} = feed(0, <<"x">>, nofin, M2),
			"RFC9114 10.5" = cites(R)
		end)
	].

%% Every reason sentence of the HTTP/3 modules cites a section that one of
%% the tests expects (each error path has a case).
reasons_test() ->
	Reasons = lists:usort(lists:append([mustang_qpack_tests:reasons(M)
		|| M <- [mustang_http3_frame, mustang_http3_machine, mustang_http3_machine_stream]])),
	[] = [R || R <- Reasons, is_tuple(cites(R))],
	Cited = mustang_qpack_tests:cited([mustang_http3_frame_tests, mustang_http3_machine_tests, ?MODULE,
		mustang_http3_machine_qpack_tests]),
	[] = [R || R <- Reasons, not lists:member(cites(R), Cited)],
	ok.

%% Properties: any split of each stream's bytes and any interleaving of the
%% streams give the same requests. The client's streams: control (SETTINGS,
%% unknown frames), QPACK encoder (insertions), requests whose HEADERS may
%% reference them (and so wait for the encoder stream), with DATA, unknown
%% frames and trailers.

request() ->
	?LET({Path, Body, Unknown, Trailers}, {non_empty(list(range($a, $z))), list(binary()), boolean(), boolean()},
		{list_to_binary([$/ | Path]), Body, Unknown, Trailers}).

%% The client's encoder: a table of 4096, entries inserted as it goes.
client_streams(Requests) ->
	E0 = mustang_qpack:init_encoder(#{}),
	{Set, E1} = mustang_qpack:encoder_settings(#{qpack_max_table_capacity => 4096,
		qpack_blocked_streams => 100}, E0),
	{Streams, EncStream, _} = lists:foldl(fun({{Path, Body, Unknown, Trailers}, N}, {Acc, Enc, E}) ->
		StreamID = 4 * N,
		Fields = ?T:req(Path) ++ [{<<"x-common">>, <<"shared value">>}],
		{Block, Ins, E2} = mustang_qpack:encode_field_section(StreamID, Fields, E),
		{TFrame, TIns, E3} = case Trailers of
			true ->
				{TBlock, TI, E2b} = mustang_qpack:encode_field_section(StreamID,
					[{<<"x-common">>, <<"shared value">>}], E2),
				{?F:headers(TBlock), TI, E2b};
			false ->
				{[], [], E2}
		end,
		Bytes = iolist_to_binary([?F:headers(Block), [?F:data(B) || B <- Body],
			[[?F:encode_int(?F:reserved_type(4)), 2, "zz"] || Unknown], TFrame]),
		{[{StreamID, Bytes} | Acc], [Enc, Ins, TIns], E3}
	end, {[], [], E1}, lists:zip(Requests, lists:seq(0, length(Requests) - 1))),
	[{2, iolist_to_binary([<<0>>, ?F:settings(#{}), [?F:encode_int(?F:reserved_type(8)), 1, "u"]])},
		{6, iolist_to_binary([<<2>>, Set, EncStream])} | lists:reverse(Streams)].

%% Pieces: each stream cut anywhere, then the pieces of all streams merged
%% in a random order that keeps each stream's own order.
pieces(Streams) ->
	?LET(Cut, [{StreamID, cuts(Bin)} || {StreamID, Bin} <- Streams], interleave(Cut)).

cuts(Bin) ->
	?LET(Cuts, list(range(0, byte_size(Bin))), split(Bin, lists:usort(Cuts), 0)).

split(Bin, [], Pos) -> [binary:part(Bin, Pos, byte_size(Bin) - Pos)];
split(Bin, [C | Cs], Pos) -> [binary:part(Bin, Pos, C - Pos) | split(Bin, Cs, C)].

interleave(Queues) ->
	case [Q || Q = {_, [_ | _]} <- Queues] of
		[] -> [];
		NonEmpty ->
			?LET(I, range(1, length(NonEmpty)),
				begin
					{StreamID, [P | Ps]} = lists:nth(I, NonEmpty),
					?LET(Rest, interleave(lists:keyreplace(StreamID, 1, NonEmpty, {StreamID, Ps})),
						[{StreamID, P, Ps =:= []} | Rest])
				end)
	end.

%% Each request as the connection would rebuild it: its head, its body
%% joined, its trailers, and whether it ended.
run(Pieces) ->
	{_, Acc} = lists:foldl(fun
		({StreamID, Bin, Last}, {M, Acc}) when is_map(Acc) ->
			IsFin = case Last andalso StreamID band 3 =:= 0 of true -> fin; false -> nofin end,
			case feed(StreamID, Bin, IsFin, M) of
				{Events, _, M2} -> {M2, lists:foldl(fun gather/2, Acc, Events)};
				Error -> {M, Error}
			end;
		(_, Error) ->
			Error
	end, {?T:init(#{}), #{}}, Pieces),
	Acc.

gather({settings, _}, Acc) -> Acc;
gather({headers, S, IsFin, #{path := Path, headers := H}}, Acc) ->
	end_(S, IsFin, Acc#{S => {Path, maps:get(<<"x-common">>, H), [], none, nofin}});
gather({data, S, IsFin, D}, Acc) ->
	{P, C, B, T, _} = maps:get(S, Acc),
	end_(S, IsFin, Acc#{S := {P, C, [B, D], T, nofin}});
gather({trailers, S, T}, Acc) ->
	{P, C, B, _, F} = maps:get(S, Acc),
	Acc#{S := {P, C, B, T, F}}.

end_(_, nofin, Acc) -> Acc;
end_(S, fin, Acc) ->
	{P, C, B, T, _} = maps:get(S, Acc),
	Acc#{S := {P, C, B, T, fin}}.

normal(Error) when not is_map(Error) ->
	Error;
normal(Acc) ->
	maps:map(fun(_, {P, C, B, T, F}) -> {P, C, iolist_to_binary(B), T, F} end, Acc).

prop_splits() ->
	?FORALL(Requests, non_empty(list(request())),
		begin
			Streams = client_streams(Requests),
			Whole = normal(run([{S, B, true} || {S, B} <- Streams])),
			Expected = maps:from_list([{4 * N, {Path, <<"shared value">>, iolist_to_binary(Body),
					case T of true -> [{<<"x-common">>, <<"shared value">>}]; false -> none end, fin}}
				|| {{Path, Body, _, T}, N} <- lists:zip(Requests, lists:seq(0, length(Requests) - 1))]),
			?FORALL(Pieces, pieces(Streams),
				begin
					Split = normal(run(Pieces)),
					?WHENFAIL(io:format("expected ~p~nwhole ~p~nsplit ~p~n", [Expected, Whole, Split]),
						Whole =:= Expected andalso Split =:= Expected)
				end)
		end).

%% Random bytes on any kind of stream (after a valid start, or not) never
%% crash the machine: it gives events, or a connection error whose reason
%% cites its section.
prop_random() ->
	?FORALL({StreamID, Prefix, Bin, IsFin}, {elements([0, 2, 6, 10]),
			elements([<<>>, <<0>>, <<2>>, <<3>>, headers(req())]), binary(), elements([fin, nofin])},
		begin
			M = ready(),
			case ?M:stream_data(StreamID, <<Prefix/binary, Bin/binary>>, IsFin, 0, M) of
				{ok, Events, _} -> is_list(Events);
				{error, {connection_error, Code, Reason}, M2} ->
					{Actions, _} = ?M:take_actions(M2),
					is_integer(?F:code(Code)) andalso is_list(cites(Reason))
						andalso lists:last(Actions) =:= {close, Code, Reason}
			end
		end).

proper_test_() ->
	[
		{timeout, 300, ?_assert(proper:quickcheck(prop_splits(), [{numtests, 300}, {to_file, user}]))},
		{timeout, 300, ?_assert(proper:quickcheck(prop_random(), [{numtests, 3000}, {to_file, user}]))}
	].
