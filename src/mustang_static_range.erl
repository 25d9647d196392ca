%% Conditional and range requests for mustang_static (RFC 9110 13 and 14),
%% over a body that is a binary or a sendfile body.
%%
%% precondition/3 evaluates If-Match, If-Unmodified-Since, If-None-Match and
%% If-Modified-Since in the order of RFC 9110 13.2.2. reply/5 answers a GET
%% with the whole body (200), the range asked (206 with content-range), a
%% multipart/byteranges body of the ranges asked (206, RFC 9110 14.6), or 416
%% with content-range: bytes */Size when no range is satisfiable; If-Range
%% (13.1.5) must match for the Range header to count. ranges/2 is the pure
%% part: byte ranges against a size.
%%
%% A Range header the server may ignore (14.2) is ignored, and the whole body
%% sent: one that does not parse, a unit other than bytes, more than
%% ?MAX_RANGES ranges, or ranges that add up to more bytes than the body has
%% (overlapping ranges asked to amplify the response).
-module(mustang_static_range).

-export([precondition/3]).
-export([reply/5]).
-export([ranges/2]).
-export([multipart/4]).

-type etag() :: {strong | weak, binary()} | binary() | undefined.
-type body() :: mustang_req:resp_body().

-define(MAX_RANGES, 64).

%% @doc ok when the request's preconditions hold for a resource with this
%% etag and modification time, else the status to answer: 412, or 304 for
%% the failed If-None-Match or If-Modified-Since of a GET or HEAD.
-spec precondition(mustang_req:req(), etag(), calendar:datetime()) -> ok | 304 | 412.
precondition(Req, ETag0, Modified) ->
	ETag = etag(ETag0),
	case if_match(Req, ETag, Modified) of
		ok -> if_none_match(Req, ETag, Modified);
		Fail -> Fail
	end.

if_match(Req, ETag, Modified) ->
	case mustang_req:parse_header(<<"if-match">>, Req) of
		undefined ->
			case header_date(<<"if-unmodified-since">>, Req) of
				{ok, Date} when Modified > Date -> 412;
				_ -> ok
			end;
		'*' ->
			ok;
		ETags ->
			case lists:any(fun(E) -> strong_match(E, ETag) end, ETags) of
				true -> ok;
				false -> 412
			end
	end.

if_none_match(Req, ETag, Modified) ->
	Safe = lists:member(mustang_req:method(Req), [<<"GET">>, <<"HEAD">>]),
	case mustang_req:parse_header(<<"if-none-match">>, Req) of
		undefined when Safe ->
			%% A date in the future is ignored (RFC 9110 13.1.3).
			case header_date(<<"if-modified-since">>, Req) of
				{ok, Date} when Modified =< Date ->
					case Date =< calendar:universal_time() of
						true -> 304;
						false -> ok
					end;
				_ -> ok
			end;
		undefined ->
			ok;
		ETags ->
			Match = ETags =:= '*' orelse lists:any(fun(E) -> weak_match(E, ETag) end, ETags),
			case {Match, Safe} of
				{false, _} -> ok;
				{true, true} -> 304;
				{true, false} -> 412
			end
	end.

%% An invalid date is ignored (RFC 9110 13.1.3, 13.1.4).
header_date(Name, Req) ->
	case mustang_req:header(Name, Req) of
		undefined -> undefined;
		Value -> mustang_http_hd:parse_date(Value)
	end.

%% Custom etags may be given already quoted.
etag(ETag) when is_binary(ETag) ->
	case mustang_http_hd:parse_if_match(ETag) of
		{ok, [Parsed]} -> Parsed;
		_ -> error({badarg, {etag, ETag}})
	end;
etag(ETag) ->
	ETag.

%% RFC 9110 8.8.3.2.
strong_match({strong, Tag}, {strong, Tag}) -> true;
strong_match(_, _) -> false.

weak_match({_, Tag}, {_, Tag}) -> true;
weak_match(_, _) -> false.

%% @doc Answers a GET or HEAD whose preconditions held: the whole body, or
%% the ranges that the Range header asks (see the module comment). Headers
%% are the response headers, content-type included.
-spec reply(Req, body(), mustang_req:headers(), etag(), calendar:datetime()) -> Req
	when Req :: mustang_req:req().
reply(Req, Body, Headers, ETag, Modified) ->
	Size = body_size(Body),
	case range_header(Req, etag(ETag), Modified) of
		undefined ->
			mustang_req:reply(200, Headers, Body, Req);
		Range ->
			case ranges(Range, Size) of
				ignore ->
					mustang_req:reply(200, Headers, Body, Req);
				unsatisfiable ->
					mustang_req:reply(416, maps:remove(<<"content-type">>,
						Headers#{<<"content-range">> => [<<"bytes */">>, integer_to_binary(Size)]}),
						<<>>, Req);
				{ok, [{First, Length}]} ->
					mustang_req:reply(206, Headers#{<<"content-range">> =>
						content_range(First, Length, Size)}, part(Body, First, Length), Req);
				{ok, Ranges} ->
					reply_multipart(Req, Body, Headers, Ranges, Size)
			end
	end.

%% The Range header, when it counts: a GET, and an If-Range that matches.
range_header(Req, ETag, Modified) ->
	case {mustang_req:method(Req), mustang_req:header(<<"range">>, Req)} of
		{<<"GET">>, Range} when Range =/= undefined ->
			case mustang_req:header(<<"if-range">>, Req) of
				undefined -> Range;
				IfRange ->
					case if_range(mustang_http_hd:parse_if_range(IfRange), ETag, Modified) of
						true -> Range;
						false -> undefined
					end
			end;
		_ ->
			undefined
	end.

%% An etag must match strongly; a date must be the modification time
%% (RFC 9110 13.1.5). An invalid If-Range gets the whole body.
if_range({ok, IfETag = {Strength, _}}, ETag, _) when is_atom(Strength) ->
	strong_match(IfETag, ETag);
if_range({ok, Date}, _, Modified) -> Date =:= Modified;
if_range({error, _}, _, _) -> false.

%% @doc The byte ranges a Range header value asks of a body of Size bytes,
%% as {First, Length} in the order asked, unsatisfiable ones left out
%% (RFC 9110 14.1.2): unsatisfiable when none is left, ignore when the header
%% is to be ignored.
-spec ranges(binary(), non_neg_integer())
	-> {ok, [{non_neg_integer(), pos_integer()}, ...]} | unsatisfiable | ignore.
ranges(Value, Size) ->
	case mustang_http_hd:parse_range(Value) of
		{ok, {bytes, Specs}} when length(Specs) =< ?MAX_RANGES ->
			case lists:filtermap(fun(Spec) -> byte_range(Spec, Size) end, Specs) of
				[] ->
					unsatisfiable;
				Ranges ->
					case lists:sum([L || {_, L} <- Ranges]) > Size of
						true -> ignore;
						false -> {ok, Ranges}
					end
			end;
		_ ->
			ignore
	end.

byte_range({First, _}, Size) when First >= Size -> false;
byte_range({First, infinity}, Size) -> {true, {First, Size - First}};
byte_range({First, Last}, Size) -> {true, {First, min(Last, Size - 1) - First + 1}};
byte_range(0, _) -> false;
byte_range(_, 0) -> false;
byte_range(Suffix, Size) when Suffix < 0 ->
	First = max(0, Size + Suffix),
	{true, {First, Size - First}}.

content_range(First, Length, Size) ->
	[<<"bytes ">>, integer_to_binary(First), $-, integer_to_binary(First + Length - 1), $/,
		integer_to_binary(Size)].

body_size({sendfile, _, Length, _}) -> Length;
body_size(Body) -> iolist_size(Body).

part({sendfile, Offset, _, Path}, First, Length) ->
	{sendfile, Offset + First, Length, Path};
part(Body, First, Length) ->
	binary:part(iolist_to_binary(Body), First, Length).

%% Several ranges: a multipart/byteranges body, streamed part by part with
%% its exact content-length (sendfile parts are not read here).
reply_multipart(Req, Body, Headers, Ranges, Size) ->
	Boundary = boundary(),
	Type = maps:get(<<"content-type">>, Headers),
	Parts = multipart(Boundary, Type, [{F, L, part(Body, F, L)} || {F, L} <- Ranges], Size),
	Length = lists:sum([body_size(P) || P <- Parts]),
	Req2 = mustang_req:stream_reply(206, Headers#{
		<<"content-type">> => [<<"multipart/byteranges; boundary=">>, Boundary],
		<<"content-length">> => integer_to_binary(Length)
	}, Req),
	send_parts(Parts, Req2).

send_parts([Last], Req) ->
	ok = mustang_req:stream_body(Last, fin, Req),
	Req;
send_parts([Part | Tail], Req) ->
	ok = mustang_req:stream_body(Part, nofin, Req),
	send_parts(Tail, Req).

%% @doc The pieces of a multipart/byteranges body (RFC 9110 14.6, RFC 2046
%% 5.1.1): each part's delimiter and headers, its data (as given: iodata or
%% a sendfile body) and the closing delimiter.
-spec multipart(binary(), iodata(), [{non_neg_integer(), pos_integer(), body()}],
	non_neg_integer()) -> [body()].
multipart(Boundary, Type, [{First, Length, Data} | Tail], Size) ->
	[part_head(<<"--">>, Boundary, Type, First, Length, Size), Data
		| lists:append([[part_head(<<"\r\n--">>, Boundary, Type, F, L, Size), D]
			|| {F, L, D} <- Tail])]
		++ [<<"\r\n--", Boundary/binary, "--\r\n">>].

part_head(Delimiter, Boundary, Type, First, Length, Size) ->
	iolist_to_binary([Delimiter, Boundary, <<"\r\ncontent-type: ">>, Type,
		<<"\r\ncontent-range: ">>, content_range(First, Length, Size), <<"\r\n\r\n">>]).

%% 32 random characters of the boundary alphabet (RFC 2046 5.1.1): a body
%% part holding them is unlikely.
boundary() ->
	<< <<(boundary_char(B rem 62))>> || <<B>> <= crypto:strong_rand_bytes(32) >>.

boundary_char(N) when N < 10 -> $0 + N;
boundary_char(N) when N < 36 -> $a + N - 10;
boundary_char(N) -> $A + N - 36.
