%% Every codec's errors have the documented shape (doc/internals/errors.md):
%% {error, {Class, Code, Reason}} with Class in the known set, Code of the
%% kind its class uses, and Reason an atom whose text ends with the RFC
%% section it enforces, "(RFCnnnn s.s)" (for the PROXY protocol, which has
%% no RFC, the section of HAProxy's specification, "(PROXY protocol s.s)"), or for a limit that is Mustang's own
%% with "(Mustang Name)", Name in the documented exception list.
%%
%% Two walks: each error case run against the codec (runtime shape), and
%% every {Class, Code, Reason} literal compiled into the codecs (static
%% shape), with a check that the runtime cases reach every reason the
%% codecs can return, so that a new error without a case here fails.
-module(mustang_error_tests).

-include_lib("eunit/include/eunit.hrl").

%% Reasons that name no RFC section (doc/internals/errors.md).
-define(EXCEPTIONS, [<<"max_keys">>, <<"unknown_header">>, <<"proxy_header">>]).

-define(CODECS, [mustang_http1_codec, mustang_ws_frame, mustang_utf8, mustang_ws_deflate,
	mustang_http_hd, mustang_http_hd_accept, mustang_qs, mustang_cookie, mustang_date,
	mustang_proxy_header]).

%% The header parsers keep their sentences in a reason/1 table.
-define(REASON_TABLES, [mustang_http_hd, mustang_http_hd_accept]).

%% The shape.

reason_ok(Reason) when is_atom(Reason) ->
	Text = atom_to_binary(Reason, utf8),
	case re:run(Text, <<"^[A-Z].*\\. \\(((?:RFC[0-9]{4}|PROXY protocol) [0-9]+(\\.[0-9]+)*|Mustang ([a-z_]+))\\)$">>,
			[{capture, all, binary}]) of
		{match, [_, <<"RFC", _/binary>> | _]} -> true;
		{match, [_, <<"PROXY protocol", _/binary>> | _]} -> true;
		{match, [_, _, _, Name]} -> lists:member(Name, ?EXCEPTIONS);
		_ -> false
	end;
reason_ok(_) ->
	false.

code_ok(http_error, Code) -> is_integer(Code) andalso Code >= 400 andalso Code =< 505;
code_ok(value_error, Code) -> Code =:= 400;
code_ok(proxy_error, Code) -> Code =:= 400;
code_ok(ws_error, Code) -> lists:member(Code, [1002, 1007, 1009]);
code_ok(_, _) -> false.

shape_ok({Class, Code, Reason}) ->
	code_ok(Class, Code) andalso reason_ok(Reason) andalso mustang_error:is_error({Class, Code, Reason});
shape_ok(_) ->
	false.

reason_format_test_() ->
	[
		?_assert(reason_ok('The request line is longer than max_request_line_length. (RFC9112 3)')),
		?_assert(reason_ok('A "%" must be followed by two hexadecimal digits. (RFC3986 2.1)')),
		?_assert(reason_ok('Too many keys. (Mustang max_keys)')),
		?_assertNot(reason_ok('Too many keys. (Mustang max_other)')),
		?_assertNot(reason_ok('No section. (RFC9112)')),
		?_assertNot(reason_ok('No parenthesis.')),
		?_assertNot(reason_ok(invalid_qs)),
		?_assertNot(reason_ok(<<"A binary. (RFC9112 3)">>)),
		?_assertNot(shape_ok({http_error, 1002, 'A. (RFC9112 3)'})),
		?_assertNot(shape_ok({ws_error, 400, 'A. (RFC6455 5.2)'})),
		?_assertNot(shape_ok({value_error, 404, 'A. (RFC9110 8.3)'})),
		?_assertNot(shape_ok({other_error, 400, 'A. (RFC9110 8.3)'})),
		?_assert(shape_ok({value_error, 400, 'A. (RFC9110 8.3)'})),
		?_assert(shape_ok({proxy_error, 400, 'A. (PROXY protocol 2.1)'})),
		?_assertNot(shape_ok({proxy_error, 1002, 'A. (PROXY protocol 2.1)'})),
		?_assertNot(reason_ok('A. (PROXY protocol)'))
	].

mustang_error_test_() ->
	E = {http_error, 431, 'Big. (RFC6585 5)'},
	[
		?_assertEqual(431, mustang_error:status(E)),
		?_assertEqual(400, mustang_error:status({value_error, 400, 'Bad. (RFC9110 8.3)'})),
		?_assertError(function_clause, mustang_error:status({ws_error, 1002, 'Bad. (RFC6455 5.2)'})),
		?_assertEqual(<<"Big. (RFC6585 5)">>, mustang_error:text(E)),
		?_assert(mustang_error:is_error(E)),
		?_assertNot(mustang_error:is_error({http_error, 431, 'No parenthesis'})),
		?_assertNot(mustang_error:is_error({error, 431, 'Big. (RFC6585 5)'}))
	].

%% The runtime walk.

%% {Name, ExpectedClass, ExpectedCode, Fun}: Fun returns the codec's result.
cases() ->
	http1_cases() ++ chunked_cases() ++ ws_frame_cases() ++ utf8_cases() ++ deflate_cases()
		++ header_cases() ++ qs_cases() ++ cookie_date_cases() ++ proxy_header_cases().

req(Bin) -> req(Bin, #{}).
req(Bin, Limits) ->
	fun() -> mustang_http1_codec:parse_request(Bin, 0,
		maps:merge(mustang_http1_codec:default_limits(), Limits)) end.

get11(Headers) -> <<"GET / HTTP/1.1\r\nHost: a\r\n", Headers/binary, "\r\n">>.

http1_cases() ->
	H = fun(Name, Code, F) -> {Name, http_error, Code, F} end,
	[
		H(bare_lf, 400, req(<<"\nGET / HTTP/1.1\r\nHost: a\r\n\r\n">>)),
		H(bare_lf_partial, 400, req(<<"GET / HTTP/1.1\nHost: a\n">>)),
		H(empty_lines, 400, req(<<"\r\n\r\n\r\n\r\n\r\n\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n">>)),
		H(line_too_long, 414, req(<<"GET /", (binary:copy(<<"a">>, 9000))/binary,
			" HTTP/1.1\r\nHost: a\r\n\r\n">>)),
		H(line_too_long_partial, 414, req(<<"GET /", (binary:copy(<<"a">>, 9000))/binary>>)),
		H(head_too_large, 431, req(<<"GET / HTTP/1.1\r\n", (binary:copy(<<"a">>, 200))/binary>>,
			#{max_headers => 1, max_header_name_length => 4, max_header_value_length => 4})),
		H(method_too_long_partial, 501, req(binary:copy(<<"A">>, 40))),
		H(method_too_long, 501, req(<<(binary:copy(<<"A">>, 40))/binary, " / HTTP/1.1\r\nHost: a\r\n\r\n">>)),
		H(empty_method, 400, req(<<" / HTTP/1.1\r\nHost: a\r\n\r\n">>)),
		H(invalid_method, 400, req(<<"G(T / HTTP/1.1\r\nHost: a\r\n\r\n">>)),
		H(invalid_method_partial, 400, req(<<22, 3, 1>>)),
		H(invalid_request_line, 400, req(<<"GET  / HTTP/1.1\r\nHost: a\r\n\r\n">>)),
		H(no_sp, 400, req(<<"GET\r\nHost: a\r\n\r\n">>)),
		H(version_not_supported, 505, req(<<"GET / HTTP/2.0\r\nHost: a\r\n\r\n">>)),
		H(invalid_version, 400, req(<<"GET / HTTX/1.1\r\nHost: a\r\n\r\n">>)),
		H(too_many_headers, 431, req(get11(<<"X: a\r\nY: b\r\n">>), #{max_headers => 2})),
		H(obs_fold, 400, req(get11(<<"X: a\r\n b\r\n">>))),
		H(no_colon, 400, req(get11(<<"Xyz\r\n">>))),
		H(empty_name, 400, req(get11(<<": x\r\n">>))),
		H(name_too_long, 431, req(get11(<<(binary:copy(<<"x">>, 65))/binary, ": a\r\n">>))),
		H(invalid_name, 400, req(get11(<<"X y: z\r\n">>))),
		H(value_too_long, 431, req(get11(<<"X: ", (binary:copy(<<"v">>, 4097))/binary, "\r\n">>))),
		H(invalid_value, 400, req(get11(<<"X: a", 0, "b\r\n">>))),
		H(connect, 501, req(<<"CONNECT a:443 HTTP/1.1\r\nHost: a:443\r\n\r\n">>)),
		H(invalid_target, 400, req(<<"GET a/b HTTP/1.1\r\nHost: a\r\n\r\n">>)),
		H(invalid_target_absolute, 400, req(<<"GET http://a/b#c HTTP/1.1\r\nHost: a\r\n\r\n">>)),
		H(userinfo, 400, req(<<"GET http://u:p@a/ HTTP/1.1\r\nHost: a\r\n\r\n">>)),
		H(two_hosts, 400, req(<<"GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n">>)),
		H(missing_host, 400, req(<<"GET / HTTP/1.1\r\n\r\n">>)),
		H(empty_authority, 400, req(<<"GET http:///x HTTP/1.1\r\nHost: a\r\n\r\n">>)),
		H(invalid_host, 400, req(<<"GET / HTTP/1.1\r\nHost: a b\r\n\r\n">>)),
		H(invalid_host_ipv6, 400, req(<<"GET / HTTP/1.1\r\nHost: [::1\r\n\r\n">>)),
		H(invalid_host_port, 400, req(<<"GET / HTTP/1.1\r\nHost: a:65536\r\n\r\n">>)),
		H(parse_host, 400, fun() -> mustang_http1_codec:parse_host(<<"a b">>) end),
		H(cl_and_te, 400, req(get11(<<"Content-Length: 1\r\nTransfer-Encoding: chunked\r\n">>))),
		H(te_http10, 400, req(<<"POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n">>)),
		H(te_not_implemented, 501, req(get11(<<"Transfer-Encoding: gzip, chunked\r\n">>))),
		H(te_chunked_not_last, 400, req(get11(<<"Transfer-Encoding: chunked, gzip\r\n">>))),
		H(invalid_cl, 400, req(get11(<<"Content-Length: x\r\n">>))),
		H(invalid_connection, 400, req(get11(<<"Connection: a/b\r\n">>)))
	].

chunked(Bin) -> chunked(Bin, 4096).
chunked(Bin, Max) -> chunked(Bin, Max, 16384).
chunked(Bin, Max, MaxExt) ->
	fun() -> mustang_http1_codec:decode_chunked(Bin, mustang_http1_codec:init_chunked(Max, MaxExt)) end.

chunked_cases() ->
	H = fun(Name, Code, F) -> {Name, http_error, Code, F} end,
	[
		H(chunk_without_crlf, 400, chunked(<<"1\r\naX">>)),
		H(chunk_line_too_long, 400, chunked(<<"5;", (binary:copy(<<"e">>, 4095))/binary>>)),
		H(chunk_line_too_long_complete, 400, chunked(<<"5;", (binary:copy(<<"e">>, 4095))/binary, "\r\n">>)),
		H(invalid_chunk_size, 400, chunked(<<"x\r\n">>)),
		H(chunk_extensions_too_long, 400, chunked(<<"1;a\r\nx\r\n1;b\r\n">>, 4096, 3)),
		H(trailers_too_large, 431, chunked(<<"0\r\nXxxxxx: a\r\n\r\n">>, 4)),
		H(trailers_too_large_partial, 431, chunked(<<"0\r\nXxxxxx: a">>, 4)),
		H(invalid_trailer, 400, chunked(<<"0\r\nbad\r\n\r\n">>))
	].

frame(Bin) -> frame(Bin, #{}).
frame(Bin, Opts) -> fun() -> mustang_ws_frame:parse(Bin, mustang_ws_frame:init(Opts)) end.

%% Two frames: the error comes from the second.
frames(Bin1, Bin2) ->
	fun() ->
		{data, _, _, _, _, <<>>, St} = mustang_ws_frame:parse(Bin1, mustang_ws_frame:init(#{})),
		mustang_ws_frame:parse(Bin2, St)
	end.

ws_frame_cases() ->
	W = fun(Name, Code, F) -> {Name, ws_error, Code, F} end,
	K = <<0:32>>,
	[
		W(rsv2, 1002, frame(<<2#10100001, 16#80>>)),
		W(reserved_opcode, 1002, frame(<<16#83, 16#80>>)),
		W(control_compressed, 1002, frame(<<2#11001001, 16#80>>)),
		W(control_fragmented, 1002, frame(<<16#09, 16#80>>)),
		W(unmasked, 1002, frame(<<16#81, 16#00>>)),
		W(control_too_long, 1002, frame(<<16#89, (16#80 bor 126)>>)),
		W(len16_not_minimal, 1002, frame(<<16#82, (16#80 bor 126), 5:16>>)),
		W(len64_top_bit, 1002, frame(<<16#82, 16#FF, 1:1, 0:63>>)),
		W(len64_not_minimal, 1002, frame(<<16#82, 16#FF, 5:64>>)),
		W(continuation_first, 1002, frame(<<16#80, 16#80, K/binary>>)),
		W(continuation_rsv1, 1002, frames(<<16#01, 16#81, K/binary, "a">>, <<16#C0, 16#80, K/binary>>)),
		W(new_message_in_fragmented, 1002, frames(<<16#01, 16#81, K/binary, "a">>,
			<<16#81, 16#81, K/binary, "b">>)),
		W(rsv1_no_deflate, 1002, frame(<<16#C1, 16#80, K/binary>>)),
		W(too_big, 1009, frame(<<16#82, 16#82, K/binary, "ab">>, #{max_frame_size => 1})),
		W(close_1_byte, 1002, frame(<<16#88, 16#81, K/binary, 3>>)),
		W(close_bad_code, 1002, frame(<<16#88, 16#82, K/binary, 999:16>>)),
		W(close_bad_utf8, 1007, frame(<<16#88, 16#84, K/binary, 1000:16, 16#C0, 16#80>>))
	].

utf8_cases() ->
	W = fun(Name, F) -> {Name, ws_error, 1007, F} end,
	[
		W(utf8_whole, fun() -> mustang_utf8:validate(<<16#C0, 16#80>>) end),
		W(utf8_piece, fun() -> mustang_utf8:validate(<<"a", 16#FF>>, mustang_utf8:init()) end),
		W(utf8_bad_prefix, fun() -> mustang_utf8:validate(<<"a", 16#ED, 16#A0>>, mustang_utf8:init()) end),
		W(utf8_carried, fun() ->
			{ok, St} = mustang_utf8:validate(<<16#E2>>, mustang_utf8:init()),
			mustang_utf8:validate(<<"a", "b">>, St)
		end),
		W(utf8_finish, fun() ->
			{ok, St} = mustang_utf8:validate(<<16#E2, 16#82>>, mustang_utf8:init()),
			mustang_utf8:finish(St)
		end)
	].

inflate_session() ->
	{ok, _, St} = mustang_ws_deflate:negotiate(<<"permessage-deflate">>, #{compress => true}),
	St.

deflate_cases() ->
	[
		{inflate_bad_data, ws_error, 1007, fun() ->
			mustang_ws_deflate:inflate(<<255, 255, 255, 255>>, fin, inflate_session(), infinity)
		end},
		{inflate_too_big, ws_error, 1009, fun() ->
			{D, _} = mustang_ws_deflate:deflate(binary:copy(<<"x">>, 1000), inflate_session()),
			mustang_ws_deflate:inflate(iolist_to_binary(D), fin, inflate_session(), 10)
		end}
	].

header_cases() ->
	Bad = [
		{<<"accept">>, <<"text">>},
		{<<"accept-charset">>, <<"utf-8;q=2">>},
		{<<"accept-encoding">>, <<"gzip;q=x">>},
		{<<"accept-language">>, <<"en_US">>},
		{<<"authorization">>, <<"Basic !!!">>},
		{<<"authorization">>, <<"Negotiate abc">>},
		{<<"connection">>, <<"a b">>},
		{<<"content-encoding">>, <<>>},
		{<<"content-language">>, <<>>},
		{<<"content-length">>, <<"x">>},
		{<<"content-type">>, <<"text">>},
		{<<"cookie">>, <<"a">>},
		{<<"date">>, <<"yesterday">>},
		{<<"expect">>, <<"200-ok">>},
		{<<"host">>, <<"a b">>},
		{<<"if-match">>, <<"abc">>},
		{<<"if-none-match">>, <<"abc">>},
		{<<"if-range">>, <<"abc">>},
		{<<"max-forwards">>, <<"-1">>},
		{<<"range">>, <<"bytes">>},
		{<<"sec-websocket-extensions">>, <<>>},
		{<<"sec-websocket-protocol">>, <<>>},
		{<<"sec-websocket-version">>, <<"256">>},
		{<<"te">>, <<"a;q=5">>},
		{<<"trailer">>, <<>>},
		{<<"transfer-encoding">>, <<>>},
		{<<"upgrade">>, <<>>},
		{<<"vary">>, <<"a b">>},
		{<<"x-forwarded-for">>, <<>>},
		{<<"x-unknown">>, <<"a">>},
		{<<"access-control-request-headers">>, <<"a b">>},
		{<<"access-control-request-method">>, <<>>},
		{<<"origin">>, <<"example.com">>}
	],
	[{{header, Name, Value}, value_error, 400, fun() -> mustang_http_hd:parse(Name, Value) end}
		|| {Name, Value} <- Bad].

qs_cases() ->
	[
		{qs_bad_escape, value_error, 400, fun() -> mustang_qs:parse_qs(<<"a=%zz">>) end},
		{qs_too_many_keys, value_error, 400, fun() -> mustang_qs:parse_qs_limited(<<"a&b">>, 1) end},
		{urldecode, value_error, 400, fun() -> mustang_qs:urldecode(<<"%">>) end}
	].

cookie_date_cases() ->
	[
		{cookie, value_error, 400, fun() -> mustang_cookie:parse_cookie(<<"a=b", 0>>) end},
		{date, value_error, 400, fun() -> mustang_date:parse(<<"Sun, 06 Nov 1994 08:49:37 UTC">>) end}
	].

%% One case per error of mustang_proxy_header (its own tests check the
%% parsed values; mustang_proxy_header_tests).
proxy_header_cases() ->
	P = fun(Name, Bin) -> {Name, proxy_error, 400, fun() -> mustang_proxy_header:parse(Bin) end} end,
	Sig = <<"\r\n\r\n\0\r\nQUIT\n">>,
	V2 = fun(FamProto, Block) -> <<Sig/binary, 16#21, FamProto, (byte_size(Block)):16, Block/binary>> end,
	Addr4 = <<127, 0, 0, 1, 127, 0, 0, 2, 1:16, 2:16>>,
	[
		P(proxy_bad_signature, <<"GET / HTTP/1.1\r\n">>),
		P(proxy_v1_too_long, <<"PROXY ", (binary:copy(<<"a">>, 101))/binary>>),
		P(proxy_v1_bare_lf, <<"PROXY UNKNOWN\n">>),
		P(proxy_v1_protocol, <<"PROXY UDP4 1.1.1.1 2.2.2.2 1 2\r\n">>),
		P(proxy_v1_port, <<"PROXY TCP4 1.1.1.1 2.2.2.2 65536 2\r\n">>),
		P(proxy_v1_address, <<"PROXY TCP4 ::1 2.2.2.2 1 2\r\n">>),
		P(proxy_v1_fields, <<"PROXY TCP4 1.1.1.1  2.2.2.2 1 2\r\n">>),
		P(proxy_v2_too_long, <<Sig/binary, 16#21, 16#11, 4081:16>>),
		P(proxy_v2_version, <<Sig/binary, 16#11, 16#11, 12:16, Addr4/binary>>),
		P(proxy_v2_command, <<Sig/binary, 16#22, 16#11, 12:16, Addr4/binary>>),
		P(proxy_v2_short_block, V2(16#21, Addr4)),
		P(proxy_v2_family, V2(16#41, Addr4)),
		P(proxy_v2_tlv_overrun, V2(16#11, <<Addr4/binary, 16#01, 5:16, "h2">>)),
		P(proxy_v2_crc, V2(16#11, <<Addr4/binary, 16#03, 4:16, 1:32>>)),
		P(proxy_v2_crc_length, V2(16#11, <<Addr4/binary, 16#03, 2:16, 1:16>>)),
		P(proxy_v2_unique_id, V2(16#11, <<Addr4/binary, 16#05, 129:16, (binary:copy(<<"u">>, 129))/binary>>)),
		P(proxy_v2_ssl_short, V2(16#11, <<Addr4/binary, 16#20, 2:16, 1, 0>>)),
		P(proxy_v2_ssl_sub_overrun, V2(16#11, <<Addr4/binary, 16#20, 8:16, 1, 0:32, 16#21, 9:16>>))
	].

runtime_shape_test_() ->
	[{lists:flatten(io_lib:format("~0p", [Name])), fun() ->
		Result = F(),
		?assertMatch({error, {Class, Code, _}}, Result),
		{error, Error} = Result,
		?assert(shape_ok(Error))
	end} || {Name, Class, Code, F} <- cases()].

%% The static walk.

%% Every {Class, Code, Reason} literal in a module's code, and for the
%% header parsers (?REASON_TABLES) the sentences of their reason/1 tables.
literals(Module) ->
	{ok, {_, [{abstract_code, {raw_abstract_v1, Forms}}]}} =
		beam_lib:chunks(code:which(Module), [abstract_code]),
	lists:usort(walk(Forms, Module, [])).

walk({function, _, reason, 1, Clauses}, M, Acc) ->
	case lists:member(M, ?REASON_TABLES) of
		true -> [{value_error, 400, R} || {clause, _, _, _, [{atom, _, R}]} <- Clauses] ++ Acc;
		false -> walk(Clauses, M, Acc)
	end;
walk({tuple, _, [{atom, _, Class}, {integer, _, Code}, {atom, _, Reason}]}, _, Acc)
		when Class =:= http_error; Class =:= ws_error; Class =:= value_error; Class =:= proxy_error ->
	[{Class, Code, Reason} | Acc];
%% In a pattern: {Class, Code, Var = 'Reason'}.
walk({tuple, _, [{atom, _, Class}, {integer, _, Code}, {match, _, _, {atom, _, Reason}}]}, _, Acc)
		when Class =:= http_error; Class =:= ws_error; Class =:= value_error; Class =:= proxy_error ->
	[{Class, Code, Reason} | Acc];
walk(T, M, Acc) when is_tuple(T) ->
	walk(tuple_to_list(T), M, Acc);
walk([H | T], M, Acc) ->
	walk(T, M, walk(H, M, Acc));
walk(_, _, Acc) ->
	Acc.

static_shape_test_() ->
	[{atom_to_list(M) ++ " " ++ atom_to_list(R), ?_assert(shape_ok(E))}
		|| M <- ?CODECS ++ [mustang_http1], E = {_, _, R} <- literals(M)].

%% Errors kept as a guard but that no input can reach: slow_header/4 only
%% sees header lines that end with CRLF, as the head is cut after CRLFCRLF.
-define(UNREACHABLE, [{http_error, 400, 'A field line must end with CRLF. (RFC9112 2.1)'}]).

%% Each codec has at least one error literal (the walk sees them), and the
%% runtime cases reach every one of them.
static_coverage_test_() ->
	Seen = lists:usort([E || {_, _, _, F} <- cases(), {error, E} <- [F()]]) ++ ?UNREACHABLE,
	[{atom_to_list(M), fun() ->
		Literals = literals(M),
		?assertNotEqual([], Literals),
		?assertEqual([], Literals -- Seen)
	end} || M <- ?CODECS].

%% The shared header grammar returns error and leaves the error shape, and its
%% sentence, to the parser of each field.
grammar_has_no_errors_test() ->
	?assertEqual([], literals(mustang_http_hd_grammar)),
	?assertEqual(error, mustang_http_hd_grammar:qvalue(<<"2">>)).

%% mustang_http1 matches the codec's invalid-version error by its sentence to
%% close on bytes that are not HTTP: the two must stay the same.
http1_not_http_match_test() ->
	{error, E} = (req(<<"GET / HTTX/1.1\r\nHost: a\r\n\r\n">>))(),
	?assert(lists:member(E, literals(mustang_http1))).
