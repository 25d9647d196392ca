%% mustang_multipart: table tests (RFC 7578 and RFC 2046 examples, browser
%% bodies, errors) and properties: built bodies split at random points parse
%% back to the same parts; garbage gives an error or asks for more, never a
%% crash.
-module(mustang_multipart_tests).

-include_lib("proper/include/proper.hrl").
-include_lib("eunit/include/eunit.hrl").

-define(B, <<"AaB03x">>).

%% Parsing whole bodies.

rfc7578_example_test() ->
	%% RFC 7578 4.1 (with CRLF line ends, as on the wire).
	Body = <<"--AaB03x\r\n"
		"content-disposition: form-data; name=\"field1\"\r\n"
		"content-type: text/plain;charset=UTF-8\r\n"
		"content-transfer-encoding: quoted-printable\r\n"
		"\r\n"
		"Joe owes =E2=82=AC100.\r\n"
		"--AaB03x--\r\n">>,
	{ok, [{Headers, <<"Joe owes =E2=82=AC100.">>}]} = mustang_multipart:parse(Body, ?B),
	[{<<"content-disposition">>, <<"form-data; name=\"field1\"">>},
		{<<"content-type">>, <<"text/plain;charset=UTF-8">>},
		{<<"content-transfer-encoding">>, <<"quoted-printable">>}] = Headers.

preamble_epilogue_padding_test() ->
	%% RFC 2046 5.1.1: preamble and epilogue are ignored; transport padding
	%% may follow a boundary; a part may have no headers.
	Body = <<"This is the preamble.\r\n--AaB03x \t\r\n\r\nplain text\r\n"
		"--AaB03x\r\nContent-Type: text/plain; charset=us-ascii\r\n\r\n"
		"with explicit type\r\n--AaB03x--\r\nThis is the epilogue.\r\n">>,
	{ok, [{[], <<"plain text">>},
		{[{<<"content-type">>, <<"text/plain; charset=us-ascii">>}], <<"with explicit type">>}]}
		= mustang_multipart:parse(Body, ?B).

empty_parts_test() ->
	{ok, []} = mustang_multipart:parse(<<"--AaB03x--">>, ?B),
	{ok, [{[], <<>>}, {[{<<"a">>, <<"b">>}], <<>>}]}
		= mustang_multipart:parse(<<"--AaB03x\r\n\r\n\r\n--AaB03x\r\na:b\r\n\r\n\r\n--AaB03x--">>, ?B).

body_with_boundary_like_content_test() ->
	%% Only CRLF "--" boundary delimits: the boundary elsewhere is content.
	Content = <<"--AaB03x at the start, \n--AaB03x after LF, x--AaB03x\r\n-AaB03x">>,
	{ok, [{[], Content}]} = mustang_multipart:parse(
		iolist_to_binary(mustang_multipart:build(?B, [{[], Content}])), ?B).

errors_test_() ->
	Bad = [
		%% Header line without a colon.
		<<"--AaB03x\r\nno colon here\r\n\r\nbody\r\n--AaB03x--">>,
		%% Header name that is not a token.
		<<"--AaB03x\r\nbad name: x\r\n\r\nbody\r\n--AaB03x--">>,
		<<"--AaB03x\r\n: empty name\r\n\r\nbody\r\n--AaB03x--">>,
		%% obs-fold and control characters.
		<<"--AaB03x\r\na: b\r\n c\r\n\r\nbody\r\n--AaB03x--">>,
		<<"--AaB03x\r\na: b\0c\r\n\r\nbody\r\n--AaB03x--">>,
		%% Something else than padding and CRLF after the boundary.
		<<"--AaB03xyz\r\n\r\nbody\r\n--AaB03x--">>,
		%% Truncated: no close delimiter.
		<<"--AaB03x\r\n\r\nbody">>,
		<<"--AaB03x\r\na: b\r\n">>,
		<<"no boundary at all">>,
		<<>>
	],
	[?_assertMatch({error, {value_error, 400, _}}, mustang_multipart:parse(B, ?B)) || B <- Bad].

garbage_refused_before_header_end_test() ->
	%% A bad header line is refused as soon as its line is complete.
	{error, {value_error, 400, _}} = mustang_multipart:parse_headers(<<"--AaB03x\r\nnocolon\r\n">>, ?B).

%% Incremental parsing.

more_test_() ->
	[
		?_assertEqual(more, mustang_multipart:parse_headers(<<>>, ?B)),
		?_assertEqual(more, mustang_multipart:parse_headers(<<"--Aa">>, ?B)),
		?_assertEqual(more, mustang_multipart:parse_headers(<<"--AaB03x">>, ?B)),
		?_assertEqual(more, mustang_multipart:parse_headers(<<"--AaB03x-">>, ?B)),
		?_assertEqual(more, mustang_multipart:parse_headers(<<"--AaB03x  \r">>, ?B)),
		?_assertEqual(more, mustang_multipart:parse_headers(<<"--AaB03x\r\na: b\r\n\r">>, ?B)),
		?_assertEqual({more, <<"\r\n--Aa">>}, mustang_multipart:parse_headers(<<"preamble\r\n--Aa">>, ?B)),
		?_assertEqual({more, <<"e">>}, mustang_multipart:parse_headers(<<"preamble">>, ?B)),
		?_assertEqual({ok, <<"body">>}, mustang_multipart:parse_body(<<"body">>, ?B)),
		?_assertEqual({ok, <<"body">>, <<"\r\n-">>}, mustang_multipart:parse_body(<<"body\r\n-">>, ?B)),
		?_assertEqual({ok, <<"body">>, <<"\r">>}, mustang_multipart:parse_body(<<"body\r">>, ?B)),
		?_assertEqual({ok, <<"body\r\n-x">>}, mustang_multipart:parse_body(<<"body\r\n-x">>, ?B)),
		?_assertEqual({done, <<"body">>, <<"--AaB03x">>},
			mustang_multipart:parse_body(<<"body\r\n--AaB03x">>, ?B)),
		?_assertEqual({done, <<"body">>, <<"--AaB03x--">>},
			mustang_multipart:parse_body(<<"body\r\n--AaB03x--">>, ?B))
	].

%% form-data.

form_data_test_() ->
	[
		?_assertEqual({data, <<"field">>},
			mustang_multipart:form_data([{<<"content-disposition">>, <<"form-data; name=\"field\"">>}])),
		?_assertEqual({data, <<"field">>},
			mustang_multipart:form_data(#{<<"content-disposition">> => <<"form-data; name=field">>})),
		?_assertEqual({file, <<"f">>, <<"a b.txt">>, <<"text/plain">>},
			mustang_multipart:form_data([{<<"content-disposition">>,
				<<"form-data; name=\"f\"; filename=\"a b.txt\"">>}])),
		?_assertEqual({file, <<"f">>, <<"x.png">>, <<"image/png">>},
			mustang_multipart:form_data([{<<"content-disposition">>,
				<<"Form-Data; NAME=\"f\"; filename=\"x.png\"">>}, {<<"content-type">>, <<"image/png">>}])),
		%% filename* (RFC 8187) wins over filename.
		?_assertEqual({file, <<"f">>, <<"€ rates.txt"/utf8>>, <<"text/plain">>},
			mustang_multipart:form_data([{<<"content-disposition">>,
				<<"form-data; name=f; filename=\"rates.txt\"; filename*=UTF-8''%e2%82%ac%20rates.txt">>}])),
		?_assertMatch({error, {value_error, 400, _}}, mustang_multipart:form_data([])),
		?_assertMatch({error, {value_error, 400, _}}, mustang_multipart:form_data(
			[{<<"content-disposition">>, <<"attachment; name=a">>}])),
		?_assertMatch({error, {value_error, 400, _}}, mustang_multipart:form_data(
			[{<<"content-disposition">>, <<"form-data; filename=a">>}])),
		?_assertMatch({error, {value_error, 400, _}}, mustang_multipart:form_data(
			[{<<"content-disposition">>, <<"form-data; name=\"unterminated">>}]))
	].

content_disposition_test_() ->
	Good = [
		{<<"inline">>, {<<"inline">>, []}},
		{<<"attachment; filename=genome.jpeg;\r\n modification-date=\"Wed, 12 Feb 1997 16:29:51 -0500\"">>, error},
		{<<"attachment; filename=genome.jpeg; modification-date=\"Wed, 12 Feb 1997 16:29:51 -0500\"">>,
			{<<"attachment">>, [{<<"filename">>, <<"genome.jpeg">>},
				{<<"modification-date">>, <<"Wed, 12 Feb 1997 16:29:51 -0500">>}]}},
		{<<" form-data ; name = x">>, error},
		{<<"form-data ; name=x ">>, {<<"form-data">>, [{<<"name">>, <<"x">>}]}},
		{<<"form-data; name=\"a\\\"b\"">>, {<<"form-data">>, [{<<"name">>, <<"a\"b">>}]}},
		{<<>>, error},
		{<<"form-data;">>, error},
		{<<"form-data; name">>, error}
	],
	[case Expected of
		error -> ?_assertMatch({error, {value_error, 400, _}}, mustang_multipart:parse_content_disposition(V));
		_ -> ?_assertEqual({ok, Expected}, mustang_multipart:parse_content_disposition(V))
	end || {V, Expected} <- Good].

%% Building.

boundary_test() ->
	B = mustang_multipart:boundary(),
	32 = byte_size(B),
	true = B =/= mustang_multipart:boundary().

build_test() ->
	<<"--b\r\na: 1\r\n\r\nx\r\n--b\r\n\r\ny\r\n--b--\r\n">> = iolist_to_binary(
		mustang_multipart:build(<<"b">>, [{[{<<"a">>, <<"1">>}], <<"x">>}, {#{}, <<"y">>}])).

%% Properties.

%% RFC 2046 5.1.1 bchars, without space (a boundary may not end with one).
bchar() ->
	oneof([range($a, $z), range($A, $Z), range($0, $9), elements("'()+_,-./:=?")]).

boundary() ->
	?LET(Chars, non_empty(list(bchar())), list_to_binary(lists:sublist(Chars, 70))).

%% Bytes that often form CRLF, dashes and boundary characters.
content_byte() ->
	frequency([{4, byte()}, {2, $\r}, {2, $\n}, {2, $-}, {2, bchar()}]).

content() ->
	?LET(Bytes, list(content_byte()), list_to_binary(Bytes)).

header_name() ->
	?LET(Chars, non_empty(list(oneof([range($a, $z), range($0, $9), $-, $_]))), list_to_binary(Chars)).

%% Visible characters and inner spaces (values are trimmed).
header_value() ->
	?LET(Chars, list(oneof([range($!, $~), $\s, range(16#80, 16#ff)])),
		mustang_http_hd_grammar:trim(list_to_binary(Chars))).

part() ->
	{list({header_name(), header_value()}), content()}.

multipart() ->
	resize(12, multipart1()).

multipart1() ->
	?SUCHTHAT({Boundary, Parts, Preamble, _},
		{boundary(), list(part()), oneof([<<>>, content()]), content()},
		begin
			Delimiter = <<"\r\n--", Boundary/binary>>,
			lists:all(fun({_, Body}) -> binary:match(Body, Delimiter) =:= nomatch end, Parts)
				andalso binary:match(<<"\r\n", Preamble/binary, "\r\n">>, Delimiter) =:= nomatch
		end).

encode(Boundary, Parts, Preamble, Epilogue) ->
	Start = case Preamble of
		<<>> -> [];
		_ -> [Preamble, <<"\r\n">>]
	end,
	iolist_to_binary([Start, mustang_multipart:build(Boundary, Parts), Epilogue]).

%% Splits Bin into chunks of the sizes given, in a cycle.
split(Bin, Sizes) ->
	split(Bin, Sizes, Sizes, []).

split(<<>>, _, _, Acc) ->
	lists:reverse(Acc);
split(Bin, [], Sizes, Acc) ->
	split(Bin, Sizes, Sizes, Acc);
split(Bin, [Size | Rest], Sizes, Acc) when byte_size(Bin) =< Size ->
	split(<<>>, Rest, Sizes, [Bin | Acc]);
split(Bin, [Size | Rest], Sizes, Acc) ->
	<<Chunk:Size/binary, Tail/binary>> = Bin,
	split(Tail, Rest, Sizes, [Chunk | Acc]).

%% Parses chunk by chunk, as mustang_req:read_part/2 does.
incremental(Chunks, Boundary) ->
	headers(<<>>, Chunks, Boundary, []).

headers(Buffer, Chunks, Boundary, Acc) ->
	case mustang_multipart:parse_headers(Buffer, Boundary) of
		{ok, Headers, Rest} ->
			body(Rest, Chunks, Boundary, Headers, [], Acc);
		more ->
			feed(Buffer, Chunks, fun(B, C) -> headers(B, C, Boundary, Acc) end);
		{more, Rest} ->
			feed(Rest, Chunks, fun(B, C) -> headers(B, C, Boundary, Acc) end);
		{done, _} ->
			{ok, lists:reverse(Acc)};
		{error, _} = Error ->
			Error
	end.

body(Buffer, Chunks, Boundary, Headers, BodyAcc, Acc) ->
	Next = fun(Data) -> fun(B, C) -> body(B, C, Boundary, Headers, [Data | BodyAcc], Acc) end end,
	Part = fun(Data) -> {Headers, iolist_to_binary(lists:reverse([Data | BodyAcc]))} end,
	case mustang_multipart:parse_body(Buffer, Boundary) of
		{ok, Data} -> feed(<<>>, Chunks, Next(Data));
		{ok, Data, Rest} -> feed(Rest, Chunks, Next(Data));
		{done, Data, Rest} -> headers(Rest, Chunks, Boundary, [Part(Data) | Acc])
	end.

feed(_, [], _) -> truncated;
feed(Buffer, [Chunk | Chunks], Fun) -> Fun(<<Buffer/binary, Chunk/binary>>, Chunks).

lowercase_names(Parts) ->
	[{[{mustang_http_hd_grammar:lower(N), V} || {N, V} <- H], B} || {H, B} <- Parts].

prop_roundtrip_whole() ->
	?FORALL({Boundary, Parts, Preamble, Epilogue}, multipart(),
		mustang_multipart:parse(encode(Boundary, Parts, Preamble, Epilogue), Boundary)
			=:= {ok, lowercase_names(Parts)}).

prop_roundtrip_split() ->
	?FORALL({{Boundary, Parts, Preamble, Epilogue}, Sizes},
		{multipart(), non_empty(list(range(1, 12)))},
		begin
			Chunks = [<<>> | split(encode(Boundary, Parts, Preamble, Epilogue), Sizes)],
			incremental(Chunks, Boundary) =:= {ok, lowercase_names(Parts)}
		end).

garbage() ->
	?LET(Bytes, list(frequency([{3, content_byte()}, {1, $:}, {1, $\s}])), list_to_binary(Bytes)).

prop_garbage_never_crashes() ->
	?FORALL({Boundary, Data}, {boundary(), oneof([garbage(), ?LET(G, garbage(), <<"--", G/binary>>)])},
		begin
			Headers = mustang_multipart:parse_headers(Data, Boundary),
			Body = mustang_multipart:parse_body(Data, Boundary),
			Whole = mustang_multipart:parse(Data, Boundary),
			is_headers_result(Headers) andalso is_body_result(Body)
				andalso (element(1, Whole) =:= ok orelse is_error(Whole))
		end).

%% A header line without a colon anywhere makes the body an error.
prop_bad_header_line_is_error() ->
	?FORALL({{Boundary, Parts0, Preamble, Epilogue}, Line},
		{multipart(), ?LET(Chars, non_empty(list(range($a, $z))), list_to_binary(Chars))},
		begin
			Parts = [{[], <<>>} | Parts0],
			Bin = encode(Boundary, Parts, Preamble, Epilogue),
			Bad = binary:replace(Bin, <<"--", Boundary/binary, "\r\n">>,
				<<"--", Boundary/binary, "\r\n", Line/binary, "\r\n">>),
			is_error(mustang_multipart:parse(Bad, Boundary))
		end).

is_headers_result({ok, Headers, Rest}) -> is_list(Headers) andalso is_binary(Rest);
is_headers_result(more) -> true;
is_headers_result({more, Rest}) -> is_binary(Rest);
is_headers_result({done, Rest}) -> is_binary(Rest);
is_headers_result(Other) -> is_error(Other).

is_body_result({ok, Body}) -> is_binary(Body);
is_body_result({ok, Body, Rest}) -> is_binary(Body) andalso is_binary(Rest);
is_body_result({done, Body, Rest}) -> is_binary(Body) andalso is_binary(Rest);
is_body_result(_) -> false.

is_error({error, Error = {value_error, 400, _}}) -> mustang_error:is_error(Error);
is_error(_) -> false.

properties_test_() ->
	Props = [
		prop_roundtrip_whole(),
		prop_roundtrip_split(),
		prop_garbage_never_crashes(),
		prop_bad_header_line_is_error()
	],
	[{timeout, 120, ?_assert(proper:quickcheck(P, [{numtests, 500}, {to_file, user}]))}
		|| P <- Props].
