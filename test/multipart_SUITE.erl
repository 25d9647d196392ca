%% Multipart request bodies: mustang_req:read_part/1,2 and
%% read_part_body/1,2 over HTTP/1.1 inline and process and HTTP/2 (h2c, h2),
%% with the transport-neutral client of mustang_test and with curl -F. The
%% handler (test/handlers/multipart_h.erl) answers with what it read.
-module(multipart_SUITE).
-compile([export_all, nowarn_export_all]).

-include_lib("common_test/include/ct.hrl").
-include_lib("stdlib/include/assert.hrl").

-import(mustang_test, [doc/1]).

-define(B, <<"mustangboundary">>).

suite() ->
	[{timetrap, {seconds, 60}}].

all() ->
	mustang_test:common_all(all).

groups() ->
	mustang_test:common_groups(all, tests()).

tests() ->
	[
		form_data,
		body_in_small_pieces,
		part_body_length,
		skip_unread_bodies,
		large_file,
		no_parts,
		max_parts_at_limit,
		max_parts_past_limit,
		max_part_header_length_at_limit,
		max_part_header_length_past_limit,
		max_part_length_at_limit,
		max_part_length_past_limit,
		malformed_header,
		truncated,
		not_multipart,
		curl_form
	].

init_per_suite(Config) ->
	{ok, _} = application:ensure_all_started(mustang),
	[{suite, ?MODULE} | Config].

end_per_suite(_) ->
	ok.

init_per_group(Group, Config) ->
	mustang_test:init_group(Group, Config, [{'_', [{"/multipart/:mode", multipart_h, []}]}], #{}).

end_per_group(_, Config) ->
	mustang_test:end_group(Config).

%% Helpers.

post(Config, Path, Body) ->
	post(Config, Path, <<"multipart/form-data; boundary=", ?B/binary>>, Body).

post(Config, Path, ContentType, Body) ->
	mustang_test:request(Config, <<"POST">>, Path, [{<<"content-type">>, ContentType}], Body,
		#{timeout => 20000}).

field(Name) ->
	[{<<"content-disposition">>, <<"form-data; name=\"", Name/binary, "\"">>}].

file(Name, Filename, Type) ->
	[{<<"content-disposition">>, <<"form-data; name=\"", Name/binary, "\"; filename=\"",
		Filename/binary, "\"">>}, {<<"content-type">>, Type}].

body(Parts) ->
	iolist_to_binary(mustang_multipart:build(?B, Parts)).

answer(#{status := 200, body := Body}) ->
	mustang_test:parse_term(Body);
answer(Resp) ->
	ct:fail({unexpected_response, Resp}).

part(FormData, Body) ->
	{FormData, byte_size(Body), erlang:md5(Body), 1}.

three_parts() ->
	[{field(<<"name">>), <<"Mustang">>},
		{field(<<"empty">>), <<>>},
		{file(<<"upload">>, <<"a.txt">>, <<"text/plain">>), <<"line 1\r\n--not the boundary\r\nline 3">>}].

three_answers() ->
	[part({data, <<"name">>}, <<"Mustang">>), part({data, <<"empty">>}, <<>>),
		part({file, <<"upload">>, <<"a.txt">>, <<"text/plain">>},
			<<"line 1\r\n--not the boundary\r\nline 3">>)].

%% Tests.

form_data(Config) ->
	doc("Fields and a file of a multipart/form-data body are read part by part, with "
		"their form-data description (RFC 7578)."),
	?assertEqual(three_answers(), answer(post(Config, <<"/multipart/all">>, body(three_parts())))).

body_in_small_pieces(Config) ->
	doc("A body that arrives in pieces of 1 to 7 bytes (HTTP/1.1 chunks, HTTP/2 DATA "
		"frames) parses the same: delimiters cut anywhere are found."),
	Body = body(three_parts()),
	Pieces = split(Body, [1, 2, 3, 5, 7]),
	?assertEqual(three_answers(), answer(post(Config, <<"/multipart/all">>, {parts, Pieces}))).

split(<<>>, _) -> [];
split(Bin, [N | Ns]) when byte_size(Bin) =< N -> [Bin | split(<<>>, Ns ++ [N])];
split(Bin, [N | Ns]) -> <<P:N/binary, R/binary>> = Bin, [P | split(R, Ns ++ [N])].

part_body_length(Config) ->
	doc("read_part_body/2 with length 1000 returns a 200000-byte part in several pieces "
		"(more, then ok; a piece may be larger than length when more was buffered)."),
	Data = binary:copy(<<"0123456789">>, 20000),
	[{{data, <<"f">>}, 200000, MD5, Pieces}] = answer(post(Config, <<"/multipart/all?length=1000">>,
		body([{field(<<"f">>), Data}]))),
	MD5 = erlang:md5(Data),
	?assert(Pieces >= 2, Pieces).

skip_unread_bodies(Config) ->
	doc("read_part/1 skips the body of a part that was not read."),
	Big = binary:copy(<<"x">>, 200000),
	?assertEqual([{data, <<"a">>}, {data, <<"b">>}, {data, <<"c">>}],
		answer(post(Config, <<"/multipart/skip">>,
			body([{field(<<"a">>), Big}, {field(<<"b">>), <<"\r\n">>}, {field(<<"c">>), Big}])))).

large_file(Config) ->
	doc("A 3 MB file part is read whole."),
	Data = crypto:strong_rand_bytes(3000000),
	[{{file, <<"f">>, <<"big.bin">>, <<"application/octet-stream">>}, 3000000, MD5, _}]
		= answer(post(Config, <<"/multipart/all">>,
			body([{file(<<"f">>, <<"big.bin">>, <<"application/octet-stream">>), Data}]))),
	MD5 = erlang:md5(Data).

no_parts(Config) ->
	doc("A body with only the close delimiter has no parts."),
	[] = answer(post(Config, <<"/multipart/all">>, body([]))).

max_parts_at_limit(Config) ->
	doc("max_parts 3: a body of 3 parts is read."),
	?assertEqual(three_answers(), answer(post(Config, <<"/multipart/all?max_parts=3">>,
		body(three_parts())))).

max_parts_past_limit(Config) ->
	doc("max_parts 2: the third part gets 413."),
	#{status := 413} = post(Config, <<"/multipart/all?max_parts=2">>, body(three_parts())).

%% "--" boundary CRLF, then the header section with its empty line.
header_section_size(Headers) ->
	iolist_size(mustang_multipart:first_part(?B, Headers)).

max_part_header_length_at_limit(Config) ->
	doc("max_part_header_length counts a part's delimiter and header section: exactly "
		"that many bytes pass."),
	Headers = field(<<"a">>),
	Limit = integer_to_binary(header_section_size(Headers)),
	[_] = answer(post(Config, <<"/multipart/all?max_part_header_length=", Limit/binary>>,
		body([{Headers, <<"x">>}]))).

max_part_header_length_past_limit(Config) ->
	doc("max_part_header_length: one byte more gets 413."),
	Headers = field(<<"a">>),
	Limit = integer_to_binary(header_section_size(Headers) - 1),
	#{status := 413} = post(Config, <<"/multipart/all?max_part_header_length=", Limit/binary>>,
		body([{Headers, <<"x">>}])).

max_part_length_at_limit(Config) ->
	doc("max_part_length 10: a 10-byte part body is read."),
	[{_, 10, _, _}] = answer(post(Config, <<"/multipart/all?max_part_length=10">>,
		body([{field(<<"a">>), <<"0123456789">>}]))).

max_part_length_past_limit(Config) ->
	doc("max_part_length 10: an 11-byte part body gets 413."),
	#{status := 413} = post(Config, <<"/multipart/all?max_part_length=10">>,
		body([{field(<<"a">>), <<"0123456789a">>}])).

malformed_header(Config) ->
	doc("A part header line without a colon gets 400."),
	#{status := 400} = post(Config, <<"/multipart/all">>,
		<<"--", ?B/binary, "\r\nno colon\r\n\r\nx\r\n--", ?B/binary, "--\r\n">>).

truncated(Config) ->
	doc("A body that ends before the close delimiter gets 400."),
	#{status := 400} = post(Config, <<"/multipart/all">>,
		<<"--", ?B/binary, "\r\ncontent-disposition: form-data; name=a\r\n\r\nx">>).

not_multipart(Config) ->
	doc("A body that is not multipart (no boundary) gets 400."),
	#{status := 400} = post(Config, <<"/multipart/all">>, <<"application/x-www-form-urlencoded">>,
		<<"a=b">>),
	#{status := 400} = post(Config, <<"/multipart/all">>, <<"multipart/form-data">>, <<"a=b">>).

curl_form(Config) ->
	doc("curl -F uploads a field and a file (multipart/form-data built by curl, with its "
		"own boundary), over the group's transport."),
	File = filename:join(?config(priv_dir, Config), "upload.bin"),
	Data = crypto:strong_rand_bytes(300000),
	ok = file:write_file(File, Data),
	Curl = os:find_executable("curl"),
	{0, Out} = mustang_test:run(Curl, ["-sS", "-F", "name=Mustang",
		"-F", "upload=@" ++ File ++ ";type=application/octet-stream"
		| mustang_test:curl_args(Config, "/multipart/all")], 30000),
	?assertEqual([part({data, <<"name">>}, <<"Mustang">>),
		{{file, <<"upload">>, <<"upload.bin">>, <<"application/octet-stream">>}, 300000,
			erlang:md5(Data), 1}], mustang_test:parse_term(Out)).
