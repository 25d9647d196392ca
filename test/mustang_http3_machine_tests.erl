%% Tests for the HTTP/3 machine, without a socket or a QUIC engine: bytes of
%% client streams in, events and actions out. Grouped by section of RFC 9114
%% (4 HTTP semantics, 5 connection closure, 6 stream mapping, 7 frames, 10.5
%% denial of service) and RFC 9220; one test per server-side rule, each
%% named after the case of Cowboy's rfc9114_SUITE / rfc9220_SUITE it covers
%% where there is one. The QPACK side (RFC 9204 2-4) is in
%% mustang_http3_machine_qpack_tests; PropEr on splits at the end.
-module(mustang_http3_machine_tests).

-include_lib("proper/include/proper.hrl").
-include_lib("eunit/include/eunit.hrl").

%% Helpers for mustang_http3_machine_qpack_tests.
-export([init/1]).
-export([ready/2]).
-export([feed/4]).
-export([block/1]).
-export([headers/1]).
-export([req/0]).
-export([req/1]).
-export([control/1]).

-define(M, mustang_http3_machine).
-define(F, mustang_http3_frame).
-define(DATE, <<"Thu, 01 Jan 2026 00:00:00 GMT">>).

%% Helpers.

init(Opts) ->
	{_, M} = ?M:take_actions(?M:init(Opts, 0)),
	M.

%% A machine whose client control stream (id 2) sent its SETTINGS.
ready() -> ready(#{}, #{}).
ready(Opts, Settings) ->
	{[{settings, Settings}], _, M} = feed(2, control(?F:settings(Settings)), nofin, init(Opts)),
	M.

control(Frames) -> [<<0>>, Frames].

%% {Events, Actions, M}, or {error, Code, Section, Actions} for a connection
%% error (Section: the RFC section its reason cites).
feed(StreamID, Data, IsFin, M) ->
	result(?M:stream_data(StreamID, iolist_to_binary(Data), IsFin, 0, M)).

result({ok, Events, M}) ->
	{Actions, M2} = ?M:take_actions(M),
	{Events, Actions, M2};
result({error, {connection_error, Code, Reason}, M}) ->
	{Actions, _} = ?M:take_actions(M),
	{error, Code, cites(Reason), Actions}.

cites(Reason) -> mustang_http3_frame_tests:cites(Reason).

%% A field section with the static table and literals only.
block(Fields) ->
	{Block, [], _} = mustang_qpack:encode_field_section(0, Fields,
		mustang_qpack:init_encoder(#{max_table_capacity => 0})),
	iolist_to_binary(Block).

headers(Fields) -> iolist_to_binary(?F:headers(block(Fields))).
data(Bin) -> iolist_to_binary(?F:data(Bin)).

req() -> req(<<"/">>).
req(Path) ->
	[{<<":method">>, <<"GET">>}, {<<":scheme">>, <<"https">>}, {<<":authority">>, <<"localhost">>},
		{<<":path">>, Path}].

post(Length) ->
	[{<<":method">>, <<"POST">>}, {<<":scheme">>, <<"https">>}, {<<":authority">>, <<"localhost">>},
		{<<":path">>, <<"/">>}, {<<"content-length">>, integer_to_binary(Length)}].

unknown(Len) -> [?F:encode_int(?F:reserved_type(3)), ?F:encode_int(Len), binary:copy(<<"u">>, Len)].

%% The connection error of a result, {Code, Section}, with the close action.
conn_error({error, Code, Section, Actions}) ->
	{close, Code, _} = lists:last(Actions),
	{Code, Section};
conn_error(Other) ->
	{no_connection_error, Other}.

%% A stream error: the event, RESET_STREAM and the rest of the connection
%% going on (a request on another stream is served).
stream_error(StreamID, Data, IsFin, M) ->
	case feed(StreamID, Data, IsFin, M) of
		{Events = [_ | _], Actions, M2} when element(1, hd(Events)) =/= error ->
			{stream_error, StreamID, Code, Reason} = lists:last(Events),
			true = lists:member({reset_stream, StreamID, Code}, Actions),
			undefined = ?M:stream(StreamID, M2),
			{[{headers, 100, fin, _}], _, _} = feed(100, headers(req()), fin, M2),
			{Code, cites(Reason)};
		Other ->
			{no_stream_error, Other}
	end.

malformed(Fields) ->
	stream_error(0, headers(Fields), fin, ready()).

%% RFC 9114 4.1: HTTP message framing.

req_stream_test() ->
	%% "Complete lifecycle of a request stream." (req_stream)
	{[{headers, 0, fin, #{method := <<"GET">>, path := <<"/">>, authority := <<"localhost">>}}], [], M1}
		= feed(0, headers(req()), fin, ready()),
	{fin, fin} = {element(2, ?M:stream(0, M1)), fin},
	{ok, [], M2} = ?M:send(0, {response, 200, #{<<"content-type">> => <<"text/plain">>}, <<"Hello">>},
		?DATE, M1),
	{[{send, 0, Bytes, fin}], M3} = ?M:take_actions(M2),
	{fin, fin} = ?M:stream(0, M3),
	%% HEADERS (with :status 200, date, content-type, content-length) and DATA.
	{ok, {headers, Block}, Rest} = ?F:parse(iolist_to_binary(Bytes), 16384),
	{ok, Fields, _, _} = mustang_qpack:decode_field_section(0, Block, mustang_qpack:init_decoder(#{})),
	[{<<":status">>, <<"200">>} | _] = Fields,
	{<<"5">>, ?DATE} = {proplists:get_value(<<"content-length">>, Fields), proplists:get_value(<<"date">>, Fields)},
	{data, 5, <<"Hello">>} = ?F:parse(Rest, 16384),
	undefined = ?M:stream(0, ?M:close_stream(0, M3)),
	ok.

body_test() ->
	%% HEADERS, DATA in two frames, the end with the last piece.
	{[{headers, 0, nofin, #{content_length := 10}}, {data, 0, nofin, <<"hello">>}, {data, 0, fin, <<"world">>}],
		[], _} = feed(0, [headers(post(10)), data(<<"hello">>), data(<<"world">>)], fin, ready()),
	%% The end alone.
	{[{headers, 0, nofin, _}, {data, 0, nofin, <<"hello">>}], [], M} =
		feed(0, [headers(post(5)), data(<<"hello">>)], nofin, ready()),
	{[{data, 0, fin, <<>>}], [], _} = feed(0, <<>>, fin, M),
	%% A DATA frame handed over as it comes, never waited for whole.
	{[{headers, 0, nofin, _}, {data, 0, nofin, <<"he">>}], [], M2} =
		feed(0, [headers(post(5)), <<0, 5, "he">>], nofin, ready()),
	{[{data, 0, nofin, <<"l">>}], [], M3} = feed(0, <<"l">>, nofin, M2),
	{[{data, 0, fin, <<"lo">>}], [], _} = feed(0, <<"lo">>, fin, M3),
	%% Empty DATA frames give no event: the end goes with the head.
	{[{headers, 0, fin, _}], [], _} = feed(0, [headers(post(0)), data(<<>>), data(<<>>)], fin, ready()),
	ok.

headers_then_trailers_test() ->
	%% "Receipt of HEADERS followed by trailer HEADERS must be accepted." (RFC 9114 4.1)
	{[{headers, 0, nofin, _}, {trailers, 0, [{<<"x-checksum">>, <<"1">>}]}, {data, 0, fin, <<>>}], [], _} =
		feed(0, [headers(req()), headers([{<<"x-checksum">>, <<"1">>}])], fin, ready()),
	{[{headers, 0, nofin, _}, {data, 0, nofin, <<"ab">>}, {trailers, 0, [_]}, {data, 0, fin, <<>>}], [], _} =
		feed(0, [headers(post(2)), data(<<"ab">>), headers([{<<"x-t">>, <<"1">>}])], fin, ready()),
	ok.

frame_order_test_() ->
	Unexpected = {h3_frame_unexpected, "RFC9114 4.1"},
	F = fun(Frames) -> conn_error(feed(0, Frames, fin, ready())) end,
	Trailers = headers([{<<"x-t">>, <<"1">>}]),
	[
		%% data_then_headers
		?_assertEqual(Unexpected, F([data(<<"Hello">>), headers(req())])),
		%% headers_then_trailers_then_data
		?_assertEqual(Unexpected, F([headers(post(2)), Trailers, data(<<"ab">>)])),
		%% headers_then_data_then_trailers_then_data
		?_assertEqual(Unexpected, F([headers(post(4)), data(<<"ab">>), Trailers, data(<<"cd">>)])),
		%% headers_then_data_then_trailers_then_trailers
		?_assertEqual(Unexpected, F([headers(post(2)), data(<<"ab">>), Trailers, Trailers]))
	].

%% Unknown and reserved frames may come anywhere on a request stream and are
%% skipped (RFC 9114 4.1, 9): unknown_then_headers, headers_then_unknown,
%% headers_then_data_then_unknown, headers_then_trailers_then_unknown,
%% headers_then_data_then_unknown_then_trailers,
%% headers_then_data_then_unknown_then_data,
%% headers_then_data_then_trailers_then_unknown (and the reserved_ ones:
%% the reserved types are the unknown types used here).
unknown_frames_test_() ->
	U = unknown(7),
	T = headers([{<<"x-t">>, <<"1">>}]),
	Cases = [
		[U, headers(req())],
		[headers(req()), U],
		[headers(post(2)), data(<<"ab">>), U],
		[headers(req()), T, U],
		[headers(post(2)), data(<<"ab">>), U, T],
		[headers(post(4)), data(<<"ab">>), U, data(<<"cd">>)],
		[headers(post(2)), data(<<"ab">>), T, U],
		[unknown(0), headers(req()), unknown(100000)]
	],
	[?_assertMatch({[{headers, 0, _, _} | _], [], _}, feed(0, Frames, fin, ready())) || Frames <- Cases].

two_requests_test() ->
	%% "Receipt of multiple requests on a single stream must be rejected with
	%% an H3_MESSAGE_ERROR stream error." (req_stream_two_requests): the
	%% second HEADERS is read as trailers, which must not carry pseudo-header
	%% fields.
	{[{headers, 0, nofin, _}, {stream_error, 0, h3_message_error, Reason}], Actions, M} =
		feed(0, [headers(req()), headers(req())], fin, ready()),
	"RFC9114 4.3" = cites(Reason),
	[{reset_stream, 0, h3_message_error}] = [A || A = {reset_stream, _, _} <- Actions],
	undefined = ?M:stream(0, M),
	ok.

incomplete_test_() ->
	[
		%% A request stream that ends without a request head (RFC 9114 4.1).
		?_assertEqual({h3_request_incomplete, "RFC9114 4.1"}, stream_error(0, <<>>, fin, ready())),
		?_assertEqual({h3_request_incomplete, "RFC9114 4.1"}, stream_error(0, unknown(3), fin, ready())),
		%% Truncated frames (RFC 9114 7.1): data_frame_truncated, headers_frame_truncated.
		?_assertEqual({h3_frame_error, "RFC9114 7.1"},
			conn_error(feed(0, [headers(post(13)), <<0, 13, "Hello">>], fin, ready()))),
		?_assertEqual({h3_frame_error, "RFC9114 7.1"},
			conn_error(feed(0, binary:part(headers(req()), 0, 5), fin, ready()))),
		?_assertEqual({h3_frame_error, "RFC9114 7.1"}, conn_error(feed(0, <<1>>, fin, ready()))),
		?_assertEqual({h3_frame_error, "RFC9114 7.1"},
			conn_error(feed(0, [headers(req()), <<16#21, 5, "ab">>], fin, ready())))
	].

%% RFC 9114 4.1.1: cancellation and rejection.

client_reset_test() ->
	{[{headers, 0, nofin, _}], [], M1} = feed(0, headers(post(10)), nofin, ready()),
	{ok, [{cancel, 0, h3_request_cancelled}], M2} = ?M:stream_reset(0, ?F:code(h3_request_cancelled), 0, M1),
	%% Our side reset, the QPACK encoder told (RFC 9204 4.4.2); no
	%% STOP_SENDING: the client's side is reset already.
	{[{reset_stream, 0, h3_request_cancelled}, {send_uni, decoder, <<16#40>>}], M3} = ?M:take_actions(M2),
	undefined = ?M:stream(0, M3),
	%% Data still in the mailbox for the stream is ignored.
	{[], [], _} = feed(0, <<"late">>, nofin, M3),
	%% An unknown code counts as H3_NO_ERROR (RFC 9114 8).
	{ok, [{cancel, 0, h3_no_error}], _} = ?M:stream_reset(0, 16#abcdef, 0, M1),
	%% A reset after the whole request is no cancellation.
	{[{headers, 4, fin, _}], [], M4} = feed(4, headers(req()), fin, M1),
	{ok, [], M5} = ?M:stream_reset(4, 16#10c, 0, M4),
	{fin, fin} = {fin, element(2, ?M:stream(4, M5))},
	ok.

client_stop_sending_test() ->
	%% The client does not want the response: our side is reset with its
	%% code (RFC 9000 3.5), the request body is not read further.
	{[{headers, 0, nofin, _}], [], M1} = feed(0, headers(post(10)), nofin, ready()),
	{ok, [{cancel, 0, h3_request_cancelled}], M2} = ?M:stop_sending(0, 16#10c, 0, M1),
	%% And a QPACK Stream Cancellation (RFC 9204 4.4.2).
	{[{reset_stream, 0, h3_request_cancelled}, {stop_sending, 0, h3_request_cancelled},
		{send_uni, decoder, <<16#40>>}], _} = ?M:take_actions(M2),
	ok.

server_reset_test() ->
	{[{headers, 0, nofin, _}], [], M1} = feed(0, headers(post(10)), nofin, ready()),
	M2 = ?M:reset_stream(0, h3_internal_error, M1),
	{[{reset_stream, 0, h3_internal_error}, {stop_sending, 0, h3_internal_error},
		{send_uni, decoder, <<16#40>>}], M3} = ?M:take_actions(M2),
	undefined = ?M:stream(0, M3),
	%% A response sent whole, the body not read: STOP_SENDING H3_NO_ERROR
	%% (RFC 9114 4.1).
	{[{headers, 4, nofin, _}], [], M4} = feed(4, headers(post(10)), nofin, M3),
	{ok, [], M5} = ?M:send(4, {response, 200, #{}, <<>>}, ?DATE, M4),
	{[{send, 4, _, fin}], M6} = ?M:take_actions(M5),
	{[{stop_sending, 4, h3_no_error}, {send_uni, decoder, <<16#44>>}], _} =
		?M:take_actions(?M:close_stream(4, M6)),
	%% A response left unfinished is cancelled.
	{[{headers, 8, fin, _}], [], M7} = feed(8, headers(req()), fin, M6),
	{ok, [], M8} = ?M:send(8, {headers, 200, #{}}, ?DATE, M7),
	{[{send, 8, _, nofin}], M9} = ?M:take_actions(M8),
	{[{reset_stream, 8, h3_request_cancelled}], _} = ?M:take_actions(?M:close_stream(8, M9)),
	ok.

%% Responses (RFC 9114 4.1, 4.2, 4.5).

%% The fields of the HEADERS frames of a stream's send actions.
sent_fields(StreamID, Actions) ->
	Bytes = iolist_to_binary([B || {send, S, B, _} <- Actions, S =:= StreamID]),
	sent_fields(Bytes).

sent_fields(<<>>) -> [];
sent_fields(Bytes) ->
	case ?F:parse(Bytes, 100000) of
		{ok, {headers, Block}, Rest} ->
			{ok, Fields, _, _} = mustang_qpack:decode_field_section(0, Block, mustang_qpack:init_decoder(#{})),
			[Fields | sent_fields(Rest)];
		{data, Len, Rest} ->
			<<_:Len/binary, Rest2/binary>> = Rest,
			sent_fields(Rest2)
	end.

response_test_() ->
	Respond = fun(Parts) ->
		{[{headers, 0, fin, _}], [], M1} = feed(0, headers(req()), fin, ready()),
		lists:foldl(fun(Part, {Events, Acc}) ->
			{ok, E, Acc2} = ?M:send(0, Part, ?DATE, Acc),
			{Events ++ E, Acc2}
		end, {[], M1}, Parts)
	end,
	Fields = fun(Parts) ->
		{_, M} = Respond(Parts),
		{Actions, _} = ?M:take_actions(M),
		sent_fields(0, Actions)
	end,
	[
		%% Names are sent lowercase; connection-specific fields are not sent
		%% (RFC 9114 4.2), nor the fields the connection header names.
		?_assertMatch([[{<<":status">>, <<"200">>} | _]], Fields([{response, 200,
			#{<<"X-Mixed">> => <<"1">>}, <<>>}])),
		?_test(begin
			[F] = Fields([{response, 200, #{<<"X-Mixed">> => <<"1">>, <<"connection">> => <<"close, x-hop">>,
				<<"x-hop">> => <<"1">>, <<"keep-alive">> => <<"5">>, <<"transfer-encoding">> => <<"chunked">>,
				<<"upgrade">> => <<"h2c">>, <<"proxy-connection">> => <<"x">>, <<"te">> => <<"trailers">>},
				<<"ok">>}]),
			<<"1">> = proplists:get_value(<<"x-mixed">>, F),
			[] = [N || {N, _} <- F, lists:member(N, [<<"connection">>, <<"x-hop">>, <<"keep-alive">>,
				<<"transfer-encoding">>, <<"upgrade">>, <<"proxy-connection">>, <<"te">>, <<"X-Mixed">>])],
			<<"2">> = proplists:get_value(<<"content-length">>, F)
		end),
		%% Informational responses, then the response; 101 is not sent
		%% (RFC 9114 4.5).
		?_assertMatch([[{<<":status">>, <<"103">>} | _], [{<<":status">>, <<"200">>} | _]],
			Fields([{inform, 103, #{<<"link">> => <<"</a>; rel=preload">>}}, {inform, 101, #{}},
				{response, 200, #{}, <<>>}])),
		?_assertMatch({[{ignored, 0, inform, idle}], _}, Respond([{inform, 101, #{}}])),
		%% One response per request: a second is ignored.
		?_assertMatch({[{ignored, 0, response, fin}], _},
			Respond([{response, 200, #{}, <<>>}, {response, 500, #{}, <<>>}])),
		%% No body for 204 and 304, nor for HEAD; trailers end the stream.
		?_assertMatch([[{<<":status">>, <<"204">>} | _]], Fields([{response, 204, #{}, <<"no">>}])),
		?_test(begin
			{[], M} = Respond([{headers, 200, #{}}, {data, nofin, <<"a">>}, {trailers, #{<<"x-t">> => <<"1">>}}]),
			{[{send, 0, _, nofin}, {send, 0, _, nofin}, {send, 0, _, fin}], _} = ?M:take_actions(M)
		end),
		%% A file body: the DATA frame header, then the file's bytes.
		?_test(begin
			{[], M} = Respond([{response, 200, #{}, {sendfile, 10, 100, "/f"}}]),
			{[{send, 0, H, nofin}, {sendfile, 0, 10, 100, "/f", fin}], _} = ?M:take_actions(M),
			<<0, 16#40, 100>> = binary:part(iolist_to_binary(H), byte_size(iolist_to_binary(H)) - 3, 3)
		end)
	].

%% RFC 9114 4.1.2: content-length must match the DATA.

content_length_test_() ->
	[
		?_assertEqual({h3_message_error, "RFC9114 4.1.2"},
			stream_error(0, [headers(post(3)), data(<<"abcd">>)], fin, ready())),
		?_assertEqual({h3_message_error, "RFC9114 4.1.2"},
			stream_error(0, [headers(post(3)), data(<<"ab">>)], fin, ready())),
		?_assertEqual({h3_message_error, "RFC9114 4.1.2"}, stream_error(0, headers(post(3)), fin, ready())),
		?_assertMatch({[_, {data, 0, fin, <<"abc">>}], [], _},
			feed(0, [headers(post(3)), data(<<"abc">>)], fin, ready())),
		?_assertMatch({[{headers, 0, fin, _}], [], _}, feed(0, headers(post(0)), fin, ready())),
		?_assertEqual({h3_message_error, "RFC9114 4.1.2"},
			malformed(req() ++ [{<<"content-length">>, <<"x">>}]))
	].

%% RFC 9114 4.2: fields.

fields_test_() ->
	[
		%% headers_reject_uppercase_header_name
		?_assertEqual({h3_message_error, "RFC9114 4.2"}, malformed(req() ++ [{<<"I-AM-GIGANTIC">>, <<"x">>}])),
		%% reject_connection_header, reject_keep_alive_header,
		%% reject_transfer_encoding_header, reject_upgrade_header; and
		%% proxy-connection (RFC 9114 4.2 names it).
		?_assertEqual({h3_message_error, "RFC9114 4.2"}, malformed(req() ++ [{<<"connection">>, <<"close">>}])),
		?_assertEqual({h3_message_error, "RFC9114 4.2"}, malformed(req() ++ [{<<"keep-alive">>, <<"timeout=5">>}])),
		?_assertEqual({h3_message_error, "RFC9114 4.2"}, malformed(req() ++ [{<<"transfer-encoding">>, <<"chunked">>}])),
		?_assertEqual({h3_message_error, "RFC9114 4.2"}, malformed(req() ++ [{<<"upgrade">>, <<"h2c">>}])),
		?_assertEqual({h3_message_error, "RFC9114 4.2"}, malformed(req() ++ [{<<"proxy-connection">>, <<"x">>}])),
		%% reject_transfer_encoding_header_with_body
		?_assertEqual({h3_message_error, "RFC9114 4.2"}, stream_error(0, [headers(req() ++
			[{<<"transfer-encoding">>, <<"chunked">>}]), data(<<"13\r\nHello server!\r\n0\r\n\r\n">>)], fin, ready())),
		%% accept_te_header_value_trailers, reject_te_header_other_values
		?_assertMatch({[{headers, 0, fin, _}], [], _}, feed(0, headers(req() ++ [{<<"te">>, <<"trailers">>}]), fin, ready())),
		?_assertEqual({h3_message_error, "RFC9114 4.2"}, malformed(req() ++ [{<<"te">>, <<"gzip">>}])),
		%% Characters not allowed in a value (RFC 9114 10.3).
		?_assertEqual({h3_message_error, "RFC9114 10.3"}, malformed(req() ++ [{<<"x">>, <<"a\r\nb">>}])),
		?_assertEqual({h3_message_error, "RFC9114 10.3"}, malformed(req() ++ [{<<"x">>, <<"a", 0, "b">>}])),
		?_assertEqual({h3_message_error, "RFC9114 10.3"}, malformed(req() ++ [{<<"x">>, <<" a">>}])),
		?_assertEqual({h3_message_error, "RFC9114 4.2"}, malformed(req() ++ [{<<"x y">>, <<"a">>}])),
		?_assertEqual({h3_message_error, "RFC9114 4.2"}, malformed(req() ++ [{<<>>, <<"a">>}])),
		%% Cookies may be split (RFC 9114 4.2.1): joined with "; ".
		?_assertMatch({[{headers, 0, fin, #{headers := #{<<"cookie">> := <<"a=b; c=d">>}}}], [], _},
			feed(0, headers(req() ++ [{<<"cookie">>, <<"a=b">>}, {<<"cookie">>, <<"c=d">>}]), fin, ready()))
	].

%% RFC 9114 4.2.2, 10.5.1: max_field_section_size, at and one past the
%% limit, counted as name + value + 32 per field.
field_section_size_test_() ->
	Fields = req(),
	Size = lists:sum([byte_size(N) + byte_size(V) + 32 || {N, V} <- Fields]),
	M = fun(Max) -> ready(#{max_field_section_size => Max}, #{}) end,
	Trailers = [{<<"x-t">>, <<"1">>}],
	[
		?_assertMatch({[{headers, 0, fin, _}], [], _}, feed(0, headers(Fields), fin, M(Size))),
		?_assertMatch({[{early_error, 0, fin, 431, _}], [], _}, feed(0, headers(Fields), fin, M(Size - 1))),
		?_assertEqual("RFC9114 4.2.2", cites(element(5, hd(element(1, feed(0, headers(Fields), fin, M(Size - 1))))))),
		%% The answer: the response, and STOP_SENDING for a request still coming.
		?_test(begin
			{[{early_error, 0, nofin, 431, _}], [], M1} = feed(0, headers(Fields), nofin, M(Size - 1)),
			M2 = ?M:early_response(0, nofin, 431, #{}, <<>>, ?DATE, M1),
			{[{send, 0, _, fin}, {stop_sending, 0, h3_no_error}, {send_uni, decoder, <<16#40>>}], M3} =
				?M:take_actions(M2),
			undefined = ?M:stream(0, M3),
			{[], [], _} = feed(0, data(<<"more">>), fin, M3)
		end),
		%% A HEADERS frame too long to be that small is not read (4 times the
		%% limit plus 1024 octets).
		?_assertMatch({[{early_error, 0, nofin, 431, _}], [], _},
			feed(0, [<<1>>, ?F:encode_int(4 * Size + 1025)], nofin, M(Size))),
		?_assertMatch({[], [], _}, feed(0, [<<1>>, ?F:encode_int(4 * Size + 1024)], nofin, M(Size))),
		%% Trailers past the limit are a stream error.
		?_assertMatch({[{headers, 0, nofin, _}, {trailers, 0, _}, _], [], _},
			feed(0, [headers(Fields), headers(Trailers)], fin, M(Size))),
		?_assertMatch({[{headers, 0, nofin, _}, {stream_error, 0, h3_excessive_load, _}], _, _},
			feed(0, [headers(Fields), headers([{<<"x-t">>, binary:copy(<<"t">>, Size)}])], fin, M(Size))),
		?_assertEqual({h3_excessive_load, "RFC9114 4.2.2"}, stream_error(0,
			[headers(Fields), headers([{<<"x-t">>, binary:copy(<<"t">>, Size)}])], fin, M(Size)))
	].

%% RFC 9114 4.3: pseudo-header fields.

pseudo_headers_test_() ->
	Method = {<<":method">>, <<"GET">>},
	Scheme = {<<":scheme">>, <<"https">>},
	Authority = {<<":authority">>, <<"localhost">>},
	Path = {<<":path">>, <<"/">>},
	[
		%% reject_unknown_pseudo_headers, reject_response_pseudo_headers
		?_assertEqual({h3_message_error, "RFC9114 4.3"}, malformed(req() ++ [{<<":upgrade">>, <<"x">>}])),
		?_assertEqual({h3_message_error, "RFC9114 4.3"}, malformed([{<<":status">>, <<"200">>} | req()])),
		%% reject_pseudo_headers_after_regular_headers
		?_assertEqual({h3_message_error, "RFC9114 4.3"},
			malformed([Method, Scheme, {<<"x">>, <<"y">>}, Authority, Path])),
		%% reject_pseudo_headers_in_trailers
		?_assertEqual({h3_message_error, "RFC9114 4.3"},
			stream_error(0, [headers(req()), headers([Path])], fin, ready())),
		%% reject_many_pseudo_header_method, _scheme, _authority, _path
		?_assertEqual({h3_message_error, "RFC9114 4.3"}, malformed([Method, Method, Scheme, Authority, Path])),
		?_assertEqual({h3_message_error, "RFC9114 4.3"}, malformed([Method, Scheme, Scheme, Authority, Path])),
		?_assertEqual({h3_message_error, "RFC9114 4.3"}, malformed([Method, Scheme, Authority, Authority, Path])),
		?_assertEqual({h3_message_error, "RFC9114 4.3"}, malformed([Method, Scheme, Authority, Path, Path])),
		%% reject_missing_pseudo_header_method, _scheme, _path
		?_assertEqual({h3_message_error, "RFC9114 4.3.1"}, malformed([Scheme, Authority, Path])),
		?_assertEqual({h3_message_error, "RFC9114 4.3.1"}, malformed([Method, Authority, Path])),
		?_assertEqual({h3_message_error, "RFC9114 4.3.1"}, malformed([Method, Scheme, Authority])),
		%% reject_missing_pseudo_header_authority, and
		%% accept_host_header_on_missing_pseudo_header_authority
		?_assertEqual({h3_message_error, "RFC9114 4.3.1"}, malformed([Method, Scheme, Path])),
		?_assertMatch({[{headers, 0, fin, #{host := <<"example.org">>, authority := undefined}}], [], _},
			feed(0, headers([Method, Scheme, Path, {<<"host">>, <<"example.org">>}]), fin, ready())),
		%% reject_userinfo, reject_empty_path
		?_assertEqual({h3_message_error, "RFC9114 4.3.1"},
			malformed([Method, Scheme, {<<":authority">>, <<"user@localhost">>}, Path])),
		?_assertEqual({h3_message_error, "RFC9114 4.3.1"}, malformed([Method, Scheme, Authority, {<<":path">>, <<>>}])),
		%% Host must name the same authority as :authority.
		?_assertEqual({h3_message_error, "RFC9114 4.3.1"},
			malformed(req() ++ [{<<"host">>, <<"example.org">>}])),
		?_assertMatch({[{headers, 0, fin, _}], [], _},
			feed(0, headers(req() ++ [{<<"host">>, <<"localhost">>}]), fin, ready())),
		%% OPTIONS * (RFC 9114 4.3.1), and * for nothing else.
		?_assertMatch({[{headers, 0, fin, #{path := <<"*">>}}], [], _},
			feed(0, headers([{<<":method">>, <<"OPTIONS">>}, Scheme, Authority, {<<":path">>, <<"*">>}]),
				fin, ready())),
		?_assertEqual({h3_message_error, "RFC9114 4.3.1"}, malformed([Method, Scheme, Authority, {<<":path">>, <<"*">>}])),
		?_assertEqual({h3_message_error, "RFC9114 4.3.1"}, malformed([{<<":method">>, <<"G(T">>}, Scheme, Authority, Path]))
	].

%% RFC 9114 4.4: CONNECT. Mustang is no proxy: a well-formed plain CONNECT
%% is answered 501; one with :scheme or :path is malformed.
connect_test_() ->
	Connect = [{<<":method">>, <<"CONNECT">>}, {<<":authority">>, <<"example.org:443">>}],
	[
		?_assertMatch({[{early_error, 0, fin, 501, _}], [], _}, feed(0, headers(Connect), fin, ready())),
		?_assertEqual("RFC9110 9.3.6", cites(element(5, hd(element(1, feed(0, headers(Connect), fin, ready())))))),
		?_assertEqual({h3_message_error, "RFC9114 4.4"}, malformed(Connect ++ [{<<":path">>, <<"/">>}]))
	].

%% RFC 9220 (with RFC 8441 4): extended CONNECT, Websocket over HTTP/3.
ws_request() ->
	[{<<":method">>, <<"CONNECT">>}, {<<":protocol">>, <<"websocket">>}, {<<":scheme">>, <<"https">>},
		{<<":path">>, <<"/ws">>}, {<<":authority">>, <<"localhost">>}, {<<"sec-websocket-version">>, <<"13">>},
		{<<"origin">>, <<"http://localhost">>}].

extended_connect_test_() ->
	On = fun() -> ready(#{enable_connect_protocol => true}, #{}) end,
	Malformed = fun(Fields) -> stream_error(0, headers(Fields), nofin, On()) end,
	Without = fun(Name) -> lists:keydelete(Name, 1, ws_request()) end,
	[
		%% SETTINGS_ENABLE_CONNECT_PROTOCOL is sent when enabled only.
		?_assertMatch([{open_uni, control, [<<0>>, <<4, _, 1, _, _, 6, _, _, _, _, 7, _, _, 8, 1>>]} | _],
			element(1, ?M:take_actions(?M:init(#{enable_connect_protocol => true}, 0)))),
		?_assertMatch([{open_uni, control, [<<0>>, <<4, 11, 1, _:16, 6, _:32, 7, _:16>>]} | _],
			element(1, ?M:take_actions(?M:init(#{}, 0)))),
		%% reject_handshake_when_disabled, reject_handshake_disabled_by_default
		?_assertEqual({h3_message_error, "RFC9220 3"}, stream_error(0, headers(ws_request()), nofin, ready())),
		%% reject_many_pseudo_header_protocol, reject_missing_pseudo_header_scheme,
		%% _path, _authority, _protocol, reject_connection_header, reject_upgrade_header
		?_assertEqual({h3_message_error, "RFC9114 4.3"}, Malformed(ws_request() ++ [{<<":protocol">>, <<"x">>}])),
		?_assertEqual({h3_message_error, "RFC9114 4.3.1"}, Malformed(Without(<<":scheme">>))),
		?_assertEqual({h3_message_error, "RFC9114 4.3.1"}, Malformed(Without(<<":path">>))),
		?_assertEqual({h3_message_error, "RFC9114 4.3.1"}, Malformed(Without(<<":authority">>))),
		?_assertEqual({h3_message_error, "RFC9114 4.4"}, Malformed(Without(<<":protocol">>))),
		?_assertEqual({h3_message_error, "RFC9114 4.2"}, Malformed(ws_request() ++ [{<<"connection">>, <<"upgrade">>}])),
		?_assertEqual({h3_message_error, "RFC9114 4.2"}, Malformed(ws_request() ++ [{<<"upgrade">>, <<"websocket">>}])),
		%% accept_handshake_when_enabled: the stream then carries Websocket
		%% frames in DATA both ways, and stays open.
		?_test(begin
			{[{headers, 0, nofin, #{method := <<"CONNECT">>, protocol := <<"websocket">>, path := <<"/ws">>}}],
				[], M1} = feed(0, headers(ws_request()), nofin, On()),
			{ok, [], M2} = ?M:send(0, {headers, 200, #{}}, ?DATE, M1),
			{[{send, 0, _, nofin}], M3} = ?M:take_actions(M2),
			Frame = <<16#81, 16#85, 1, 2, 3, 4, "abcde">>,
			{[{data, 0, nofin, Frame}], [], M4} = feed(0, data(Frame), nofin, M3),
			{ok, [], M5} = ?M:send(0, {data, nofin, <<16#81, 2, "Hi">>}, ?DATE, M4),
			{[{send, 0, [[], [<<0, 4>>, <<16#81, 2, "Hi">>]], nofin}], M6} = ?M:take_actions(M5),
			{headers, open} = ?M:stream(0, M6)
		end)
	].

%% RFC 9114 4.6, 7.2.3, 7.2.5, 7.2.7: server push is not used, but the
%% client's frames about it are checked.
push_test_() ->
	C = fun(Frames) -> feed(2, Frames, nofin, ready()) end,
	[
		%% A client must not send PUSH_PROMISE (RFC 9114 7.2.5), anywhere.
		?_assertEqual({h3_frame_unexpected, "RFC9114 7.2.5"},
			conn_error(feed(0, [headers(req()), ?F:push_promise(0, block(req()))], fin, ready()))),
		?_assertEqual({h3_frame_unexpected, "RFC9114 7.2"}, conn_error(C(?F:push_promise(0, <<0, 0>>)))),
		%% MAX_PUSH_ID may rise, never fall (max_push_id_reject_lower).
		?_assertMatch({[], [], _}, C([?F:max_push_id(10), ?F:max_push_id(10), ?F:max_push_id(20)])),
		?_assertEqual({h3_id_error, "RFC9114 7.2.7"}, conn_error(C([?F:max_push_id(10), ?F:max_push_id(9)]))),
		%% CANCEL_PUSH of a push id the client allowed: ignored; above it, or
		%% with none allowed: an error (RFC 9114 7.2.3).
		?_assertMatch({[], [], _}, C([?F:max_push_id(10), ?F:cancel_push(10)])),
		?_assertEqual({h3_id_error, "RFC9114 7.2.3"}, conn_error(C([?F:max_push_id(10), ?F:cancel_push(11)]))),
		?_assertEqual({h3_id_error, "RFC9114 7.2.3"}, conn_error(C(?F:cancel_push(0)))),
		%% A client's push stream (RFC 9114 6.2.2).
		?_assertEqual({h3_stream_creation_error, "RFC9114 6.2.2"}, conn_error(feed(6, <<1>>, nofin, ready())))
	].

%% RFC 9114 5.2: connection shutdown.

goaway_test() ->
	{[{headers, 0, fin, _}], [], M1} = feed(0, headers(req()), fin, ready()),
	{[{headers, 4, nofin, _}], [], M2} = feed(4, headers(post(2)), nofin, M1),
	%% Step one: the largest id, nothing refused.
	{[{send_uni, control, G1}], M3} = ?M:take_actions(?M:start_shutdown(M2)),
	{ok, {goaway, 16#3ffffffffffffffc}, <<>>} = ?F:parse(G1, 100),
	goaway_max = ?M:shutdown(M3),
	false = ?M:closing(M3),
	{[{headers, 8, fin, _}], [], M4} = feed(8, headers(req()), fin, M3),
	%% Step two: the first id not processed; later requests are rejected
	%% unprocessed, earlier ones go on.
	{[{send_uni, control, G2}], M5} = ?M:take_actions(?M:final_goaway(M4)),
	{ok, {goaway, 12}, <<>>} = ?F:parse(G2, 100),
	true = ?M:closing(M5),
	{[], [{reset_stream, 12, h3_request_rejected}, {stop_sending, 12, h3_request_rejected}], M6} =
		feed(12, headers(req()), fin, M5),
	undefined = ?M:stream(12, M6),
	{[{data, 4, fin, <<"ok">>}], [], M7} = feed(4, data(<<"ok">>), fin, M6),
	%% No second final GOAWAY, no identifier raised.
	{[], _} = ?M:take_actions(?M:final_goaway(?M:start_shutdown(M7))),
	%% The connection ends when the requests are done.
	3 = ?M:request_count(M7),
	0 = ?M:request_count(lists:foldl(fun ?M:close_stream/2, M7, [0, 4, 8])),
	ok.

goaway_none_processed_test() ->
	%% No request was processed: GOAWAY 0 (RFC 9114 5.2 allows zero).
	{[{send_uni, control, G}], _} = ?M:take_actions(?M:final_goaway(ready())),
	{ok, {goaway, 0}, <<>>} = ?F:parse(G, 100),
	ok.

close_test() ->
	%% Closing now: the final GOAWAY, then the close (RFC 9114 5.3).
	{[{headers, 0, fin, _}], [], M1} = feed(0, headers(req()), fin, ready()),
	{[{send_uni, control, G}, {close, h3_no_error, 'Idle.'}], _} =
		?M:take_actions(?M:close(h3_no_error, 'Idle.', M1)),
	{ok, {goaway, 4}, <<>>} = ?F:parse(G, 100),
	ok.

client_goaway_test() ->
	{[{goaway, 8}], [], M1} = feed(2, ?F:goaway(8), nofin, ready()),
	true = ?M:closing(M1),
	{[{goaway, 8}], [], M2} = feed(2, ?F:goaway(8), nofin, M1),
	{[{goaway, 4}], [], M3} = feed(2, ?F:goaway(4), nofin, M2),
	%% A GOAWAY must not raise the identifier (RFC 9114 5.2).
	{h3_id_error, "RFC9114 5.2"} = conn_error(feed(2, ?F:goaway(5), nofin, M3)),
	%% Requests in flight finish.
	{[{headers, 0, fin, _}], [], _} = feed(0, headers(req()), fin, M3),
	ok.

%% RFC 9114 6: stream mapping.

bidi_allow_at_least_a_hundred_test() ->
	M = lists:foldl(fun(N, Acc) ->
		{[{headers, _, nofin, _}], [], Acc2} = feed(4 * N, headers(post(1)), nofin, Acc),
		Acc2
	end, ready(), lists:seq(0, 99)),
	100 = ?M:request_count(M),
	ok.

unidi_create_critical_first_test() ->
	%% Our control stream with SETTINGS, and the QPACK encoder and decoder
	%% streams, opened at once (RFC 9114 6.2.1, RFC 9204 4.2).
	{[{open_uni, control, [<<0>>, Settings]}, {open_uni, encoder, <<2>>}, {open_uni, decoder, <<3>>}], _} =
		?M:take_actions(?M:init(#{}, 0)),
	{ok, {settings, #{qpack_max_table_capacity := 4096, qpack_blocked_streams := 100,
		max_field_section_size := 65536}}, <<>>} = ?F:parse(Settings, 100),
	%% Settings at 0 (and infinity for the section size) are left out.
	{[{open_uni, control, [<<0>>, <<4, 0>>]} | _], _} = ?M:take_actions(?M:init(#{qpack_max_table_capacity => 0,
		qpack_blocked_streams => 0, max_field_section_size => infinity}, 0)),
	ok.

unidi_allow_at_least_three_test() ->
	{[], [], M1} = feed(6, <<2>>, nofin, ready()),
	{[], [], M2} = feed(10, <<3>>, nofin, M1),
	{[{headers, 0, fin, _}], [], _} = feed(0, headers(req()), fin, M2),
	ok.

unidi_unknown_type_test_() ->
	Refused = fun(Type) ->
		{[], [{stop_sending, 6, h3_stream_creation_error}], M} =
			feed(6, [?F:encode_int(Type), binary:copy(<<"x">>, 100)], nofin, ready()),
		%% What comes next on it is ignored.
		{[], [], _} = feed(6, <<"more">>, fin, M),
		ok
	end,
	[
		%% unidi_abort_unknown_type, unidi_abort_reserved_type
		?_assertEqual(ok, Refused(4)),
		?_assertEqual(ok, Refused(?F:reserved_type(0))),
		?_assertEqual(ok, Refused(?F:reserved_type(1000))),
		%% Closed or reset before its type: tolerated (RFC 9114 6.2).
		?_assertMatch({[], [], _}, feed(6, <<>>, fin, ready())),
		?_assertMatch({[], [], _}, feed(6, <<16#40>>, fin, ready())),
		?_assertMatch({ok, [], _}, ?M:stream_reset(6, 0, 0, element(3, feed(6, <<16#40>>, nofin, ready())))),
		%% A type split over two pieces.
		?_assertMatch({[], [{stop_sending, 6, h3_stream_creation_error}], _},
			feed(6, <<16#21>>, nofin, element(3, feed(6, <<16#40>>, nofin, ready()))))
	].

control_stream_test_() ->
	First = fun(Frame) -> conn_error(feed(2, [<<0>>, Frame], nofin, init(#{}))) end,
	Missing = {h3_missing_settings, "RFC9114 6.2.1"},
	Critical = {h3_closed_critical_stream, "RFC9114 6.2.1"},
	[
		%% control_reject_first_frame_data, _headers, _cancel_push,
		%% _push_promise, _goaway, _max_push_id, _reserved
		?_assertEqual(Missing, First(data(<<"x">>))),
		?_assertEqual(Missing, First(headers(req()))),
		?_assertEqual(Missing, First(?F:cancel_push(0))),
		?_assertEqual(Missing, First(?F:push_promise(0, <<0, 0>>))),
		?_assertEqual(Missing, First(?F:goaway(0))),
		?_assertEqual(Missing, First(?F:max_push_id(0))),
		?_assertEqual(Missing, First(unknown(2))),
		%% control_accept_first_frame_settings, then anything in any split.
		?_assertMatch({[{settings, #{}}], [], _}, feed(2, [<<0>>, ?F:settings(#{})], nofin, init(#{}))),
		%% control_reject_multiple
		?_assertEqual({h3_stream_creation_error, "RFC9114 6.2.1"},
			conn_error(feed(6, [<<0>>, ?F:settings(#{})], nofin, ready()))),
		%% control_local_closed_abort, _graceful: our control stream (server
		%% unidirectional ids are 3 mod 4) must not be stopped.
		?_assertEqual(Critical, conn_error(result(?M:stop_sending(3, 16#100, 0, ready())))),
		%% control_remote_closed_abort, and closed gracefully.
		?_assertEqual(Critical, conn_error(result(?M:stream_reset(2, 16#100, 0, ready())))),
		?_assertEqual(Critical, conn_error(feed(2, <<>>, fin, ready()))),
		?_assertEqual(Critical, conn_error(feed(2, ?F:max_push_id(1), fin, ready()))),
		%% Before its SETTINGS too.
		?_assertEqual(Critical, conn_error(feed(2, <<0>>, fin, init(#{}))))
	].
