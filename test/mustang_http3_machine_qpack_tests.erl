%% Tests for the HTTP/3 machine's QPACK side (RFC 9204 sections 2-4): the
%% encoder and decoder streams, blocked streams, acknowledgments and
%% cancellations, errors on either stream, and responses encoded with the
%% dynamic table once the client allows one. Tests are named after the rule,
%% or after the case of Cowboy's rfc9204_SUITE they cover.
-module(mustang_http3_machine_qpack_tests).

-include_lib("eunit/include/eunit.hrl").

-define(M, mustang_http3_machine).
-define(F, mustang_http3_frame).
-define(Q, mustang_qpack).
-define(W, mustang_qpack_wire).
-define(T, mustang_http3_machine_tests).
-define(DATE, <<"Thu, 01 Jan 2026 00:00:00 GMT">>).

feed(StreamID, Data, IsFin, M) -> ?T:feed(StreamID, Data, IsFin, M).

conn_error({error, Code, Section, Actions}) ->
	{close, Code, _} = lists:last(Actions),
	{Code, Section};
conn_error(Other) ->
	{no_connection_error, Other}.

%% A machine with the client's control stream (2) and encoder stream (6)
%% open, and the client's encoder, its table set to 4096.
client() ->
	{Set, E} = ?Q:encoder_settings(#{qpack_max_table_capacity => 4096, qpack_blocked_streams => 100},
		?Q:init_encoder(#{})),
	{[], [], M} = feed(6, [<<2>>, Set], nofin, ?T:ready(#{}, #{})),
	{M, E}.

%% A request whose field section references an entry the machine does not
%% have yet (Required Insert Count 1, Base 1, relative index 0), and the
%% encoder stream bytes that bring it.
blocked_request() ->
	<<0, 0, Lines/binary>> = ?T:block(?T:req()),
	Block = <<2, 0, Lines/binary, 16#80>>,
	{iolist_to_binary([?W:set_capacity(220), ?W:insert_literal(<<"x-token">>, <<"abc">>, false)]),
		iolist_to_binary(?F:headers(Block))}.

%% RFC 9204 2.1.2, 2.2.1: a blocked request waits, with the data behind it,
%% until its entry arrives; then it is decoded and acknowledged.
blocked_stream_test() ->
	{EncBytes, Headers} = blocked_request(),
	{[], [], M1} = feed(6, <<2>>, nofin, ?T:ready(#{}, #{})),
	{[], [], M2} = feed(0, [Headers, ?F:data(<<"body">>)], fin, M1),
	{idle, open} = ?M:stream(0, M2),
	%% The entry arrives split in two.
	<<E1:3/binary, E2/binary>> = EncBytes,
	{[], [], M3} = feed(6, E1, nofin, M2),
	{[{headers, 0, nofin, #{headers := #{<<"x-token">> := <<"abc">>}}}, {data, 0, fin, <<"body">>}],
		[{send_uni, decoder, Ack}], _} = feed(6, E2, nofin, M3),
	%% The Section Acknowledgment (stream 0) also covers the insertion.
	<<16#80>> = iolist_to_binary(Ack),
	ok.

%% SETTINGS_QPACK_BLOCKED_STREAMS, at the limit and one past (RFC 9204 2.1.2).
blocked_limit_test_() ->
	{_, Headers} = blocked_request(),
	M = fun(Max) -> ?T:ready(#{qpack_blocked_streams => Max}, #{}) end,
	Open = fun(N, M0) ->
		lists:foldl(fun
			(I, {_, _, Acc}) -> feed(4 * I, Headers, nofin, Acc);
			(_, Error) -> Error
		end, {[], [], M0}, lists:seq(0, N - 1))
	end,
	[
		?_assertMatch({[], [], _}, Open(2, M(2))),
		?_assertEqual({qpack_decompression_failed, "RFC9204 2.1.2"}, conn_error(Open(3, M(2)))),
		?_assertEqual({qpack_decompression_failed, "RFC9204 2.1.2"}, conn_error(Open(1, M(0))))
	].

%% RFC 9204 4.4.2: a blocked stream the client resets is dropped and the
%% encoder told (Stream Cancellation); its place is free again.
blocked_reset_test() ->
	{EncBytes, Headers} = blocked_request(),
	{[], [], M1} = feed(0, Headers, nofin, ?T:ready(#{qpack_blocked_streams => 1}, #{})),
	{ok, [{cancel, 0, h3_request_cancelled}], M2} = ?M:stream_reset(0, 16#10c, 0, M1),
	{[{reset_stream, 0, h3_request_cancelled}, {send_uni, decoder, <<16#40>>}], M3} = ?M:take_actions(M2),
	{[], [], M4} = feed(4, Headers, nofin, M3),
	%% The entry arrives: stream 4 goes on, stream 0 is gone.
	{[{headers, 4, nofin, _}], [{send_uni, decoder, <<16#84>>}], _} = feed(6, [<<2>>, EncBytes], nofin, M4),
	ok.

%% RFC 9204 4.4.3: entries received and not acknowledged by a section are
%% acknowledged with an Insert Count Increment; a section that references
%% entries is acknowledged (RFC 9204 4.4.1).
insert_count_increment_test() ->
	{M, E} = client(),
	Fields = ?T:req() ++ [{<<"x-a">>, <<"1">>}],
	%% The client's encoder inserts a field the second time it sees it:
	%% here :authority and x-a.
	{_, [], E1} = ?Q:encode_field_section(0, Fields, E),
	{Block, Ins, _} = ?Q:encode_field_section(4, Fields, E1),
	{[], [{send_uni, decoder, <<2>>}], M2} = feed(6, Ins, nofin, M),
	{[{headers, 4, fin, #{headers := #{<<"x-a">> := <<"1">>}}}], [{send_uni, decoder, <<16#84>>}], _} =
		feed(4, ?F:headers(Block), fin, M2),
	ok.

%% RFC 9204 2.2.3: references outside the table.
invalid_reference_test_() ->
	<<0, 0, Lines/binary>> = ?T:block(?T:req()),
	[
		?_assertEqual({qpack_decompression_failed, "RFC9204 2.2.3"},
			conn_error(feed(0, ?F:headers(<<0, 0, Lines/binary, 16#80>>), fin, ?T:ready(#{}, #{})))),
		?_assertEqual({qpack_decompression_failed, "RFC9204 3.1"},
			conn_error(feed(0, ?F:headers(<<0, 0, Lines/binary, 16#ff, 36>>), fin, ?T:ready(#{}, #{}))))
	].

%% RFC 9204 4.2: one encoder and one decoder stream each way, never closed.
qpack_streams_test_() ->
	Critical = {h3_closed_critical_stream, "RFC9114 6.2.1"},
	Twice = fun(Type) ->
		{[], [], M} = feed(6, <<Type>>, nofin, ?T:ready(#{}, #{})),
		conn_error(feed(10, <<Type>>, nofin, M))
	end,
	Open = fun(Type) -> element(3, feed(6, <<Type>>, nofin, ?T:ready(#{}, #{}))) end,
	[
		%% encoder_reject_multiple, decoder_reject_multiple
		?_assertEqual({h3_stream_creation_error, "RFC9114 6.2.1"}, Twice(2)),
		?_assertEqual({h3_stream_creation_error, "RFC9114 6.2.1"}, Twice(3)),
		%% encoder_remote_closed_abort, decoder_remote_closed_abort, and closed gracefully
		?_assertEqual(Critical, conn_error(feed(6, <<>>, fin, Open(2)))),
		?_assertEqual(Critical, conn_error(feed(6, <<>>, fin, Open(3)))),
		?_assertEqual(Critical, conn_error(feed(6, <<2>>, fin, ?T:ready(#{}, #{})))),
		?_assertEqual(Critical, conn_error(?T:feed(6, ?W:set_capacity(10), fin, Open(2)))),
		?_assertEqual(Critical, conn_error(result(?M:stream_reset(6, 0, 0, Open(2))))),
		?_assertEqual(Critical, conn_error(result(?M:stream_reset(6, 0, 0, Open(3))))),
		%% encoder_local_closed_abort, decoder_local_closed_abort: ours
		%% (server unidirectional streams 7 and 11) must not be stopped.
		?_assertEqual(Critical, conn_error(result(?M:stop_sending(7, 16#100, 0, ?T:ready(#{}, #{}))))),
		?_assertEqual(Critical, conn_error(result(?M:stop_sending(11, 16#100, 0, ?T:ready(#{}, #{}))))),
		%% Allowed even when our settings prevent their use (RFC 9204 4.2).
		?_assertMatch({[], [], _}, feed(6, <<2>>, nofin, ?T:ready(#{qpack_max_table_capacity => 0}, #{}))),
		?_assertMatch({[], [], _}, feed(6, <<3>>, nofin, ?T:ready(#{qpack_max_table_capacity => 0}, #{})))
	].

result({ok, Events, M}) ->
	{Actions, M2} = ?M:take_actions(M),
	{Events, Actions, M2};
result({error, {connection_error, Code, Reason}, M}) ->
	{Actions, _} = ?M:take_actions(M),
	{error, Code, mustang_http3_frame_tests:cites(Reason), Actions}.

%% RFC 9204 4.3, 4.4: errors on the client's encoder and decoder streams
%% close the connection.
stream_errors_test_() ->
	Enc = fun(Bytes, Opts) -> conn_error(feed(6, [<<2>>, Bytes], nofin, ?T:ready(Opts, #{}))) end,
	Dec = fun(Bytes) -> conn_error(feed(6, [<<3>>, Bytes], nofin, ?T:ready(#{}, #{}))) end,
	ES = qpack_encoder_stream_error,
	DS = qpack_decoder_stream_error,
	[
		%% Capacity above our SETTINGS_QPACK_MAX_TABLE_CAPACITY (RFC 9204 4.3.1).
		?_assertMatch({[], [], _}, feed(6, [<<2>>, ?W:set_capacity(4096)], nofin, ?T:ready(#{}, #{}))),
		?_assertEqual({ES, "RFC9204 4.3.1"}, Enc(?W:set_capacity(4097), #{})),
		?_assertEqual({ES, "RFC9204 4.3.1"}, Enc(?W:set_capacity(1), #{qpack_max_table_capacity => 0})),
		%% An entry larger than the capacity (RFC 9204 3.2.2).
		?_assertEqual({ES, "RFC9204 3.2.2"}, Enc(?W:insert_literal(<<"a">>, <<"b">>, false), #{})),
		%% A Section Acknowledgment of nothing, increments of 0 or past what
		%% was inserted (RFC 9204 4.4.1, 4.4.3).
		?_assertEqual({DS, "RFC9204 4.4.1"}, Dec(?W:section_ack(0))),
		?_assertEqual({DS, "RFC9204 4.4.3"}, Dec(<<0>>)),
		?_assertEqual({DS, "RFC9204 4.4.3"}, Dec(?W:insert_count_increment(1))),
		%% A Stream Cancellation of anything is fine.
		?_assertMatch({[], [], _}, feed(6, [<<3>>, ?W:stream_cancellation(0)], nofin, ?T:ready(#{}, #{})))
	].

%% Responses: RFC 9204 3.2.3, 2.1.

respond(StreamID, Headers, M0) ->
	{[{headers, StreamID, fin, _}], _, M1} = feed(StreamID, ?T:headers(?T:req()), fin, M0),
	{ok, [], M2} = ?M:send(StreamID, {response, 200, Headers, <<"ok">>}, ?DATE, M1),
	{Actions, M3} = ?M:take_actions(M2),
	Enc = iolist_to_binary([B || {send_uni, encoder, B} <- Actions]),
	[Frames] = [iolist_to_binary(F) || {send, S, F, fin} <- Actions, S =:= StreamID],
	{ok, {headers, Block}, _} = ?F:parse(Frames, 100000),
	{Enc, Block, M3}.

%% The client's view: its decoder reads our encoder stream, then our block.
client_decode(StreamID, Enc, Block, D0) ->
	{ok, [], _, D1} = ?Q:decoder_feed(Enc, D0),
	{ok, Fields, _, D2} = ?Q:decode_field_section(StreamID, Block, D1),
	{Fields, D2}.

dynamic_responses_test() ->
	Headers = #{<<"content-type">> => <<"text/plain">>, <<"server">> => <<"mustang">>,
		<<"x-trace">> => <<"0123456789">>},
	%% Before the client's SETTINGS: static table and literals only.
	M0 = ?T:init(#{}),
	{<<>>, _, _} = respond(0, Headers, M0),
	%% The client allows a table of 4096 and 10 blocked streams: the
	%% capacity is set as soon as its SETTINGS are read.
	{[{settings, _}], [{send_uni, encoder, Set}], M1} = feed(2, ?T:control(?F:settings(
		#{qpack_max_table_capacity => 4096, qpack_blocked_streams => 10})), nofin, M0),
	<<16#3f, 16#e1, 16#1f>> = iolist_to_binary(Set),
	D0 = ?Q:init_decoder(#{max_table_capacity => 4096, blocked_streams => 10}),
	{ok, [], _, D1} = ?Q:decoder_feed(iolist_to_binary(Set), D0),
	%% First response: seen; second: inserted and referenced.
	{<<>>, B1, M2} = respond(0, Headers, M1),
	{F1, D2} = client_decode(0, <<>>, B1, D1),
	{Enc2, B2, M3} = respond(4, Headers, M2),
	true = byte_size(Enc2) > 0,
	{F2, D3} = client_decode(4, Enc2, B2, D2),
	true = byte_size(B2) < byte_size(B1),
	F1 = F2,
	<<"mustang">> = proplists:get_value(<<"server">>, F2),
	%% The client acknowledges: the entries are referenced without blocking.
	{[], [], M4} = feed(10, [<<3>>, ?W:section_ack(4)], nofin, M3),
	{<<>>, B3, _} = respond(8, Headers, M4),
	{F1, _} = client_decode(8, <<>>, B3, D3),
	ok.

%% A client that allows no table, or our option at 0: never anything on the
%% encoder stream (RFC 9204 3.2.3).
static_responses_test_() ->
	Headers = #{<<"server">> => <<"mustang">>},
	Run = fun(Opts, Cap) ->
		{_, Actions, M1} = feed(2, ?T:control(?F:settings(#{qpack_max_table_capacity => Cap,
			qpack_blocked_streams => 10})), nofin, ?T:init(Opts)),
		{E1, _, M2} = respond(0, Headers, M1),
		{E2, _, _} = respond(4, Headers, M2),
		{[A || A = {send_uni, encoder, _} <- Actions], E1, E2}
	end,
	[
		?_assertEqual({[], <<>>, <<>>}, Run(#{}, 0)),
		?_assertEqual({[], <<>>, <<>>}, Run(#{qpack_encoder_max_table_capacity => 0}, 4096))
	].
