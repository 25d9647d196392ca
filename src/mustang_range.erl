%% Range requests for mustang_rest (RFC 9110 14): plain functions on the
%% parsed range header (mustang_http_hd:parse_range/1) and on response
%% bodies, with no Req. The satisfiable byte ranges of a body and their
%% parts (ranges_provided's auto), content-range values, and the
%% multipart/byteranges body of several parts (RFC 9110 14.6).
%%
%% A body is iodata or a sendfile tuple {sendfile, Offset, Length, Path};
%% a part of a sendfile body is a sendfile tuple, so that it is not read.
-module(mustang_range).

-export([byte_parts/2]).
-export([byte_range/2]).
-export([body_length/1]).
-export([body_part/3]).
-export([content_range/2]).
-export([multipart/4]).
-export([has_sendfile/1]).

-type byte_range() :: {non_neg_integer(), non_neg_integer() | infinity} | neg_integer() | 0.
-type sendfile() :: {sendfile, non_neg_integer(), non_neg_integer(), file:name_all()}.
-type body() :: iodata() | sendfile().
%% {From, To, Length} (Length '*' when unknown), or the text after the unit.
-type range() :: {non_neg_integer(), non_neg_integer(), non_neg_integer() | '*'} | binary().
-type part() :: {range(), body()}.
-export_type([body/0, range/0, part/0]).

%% The parts of Body for the byte ranges of a range header: the satisfiable
%% ones, in the order of the header; {unsatisfiable, Length} (416) when
%% none is.
-spec byte_parts([byte_range()], body())
	-> {ok, [part(), ...]} | {unsatisfiable, non_neg_integer()}.
byte_parts(Ranges, Body) ->
	Length = body_length(Body),
	case [Range || R <- Ranges, {ok, Range} <- [byte_range(R, Length)]] of
		[] ->
			{unsatisfiable, Length};
		Satisfiable ->
			{ok, [{{From, To, Length}, body_part(Body, From, To)} || {From, To} <- Satisfiable]}
	end.

%% A byte range within a representation of Length bytes (RFC 9110 14.1.2):
%% the first and last positions, the last capped; a suffix range is the
%% last bytes. error when it starts past the end, and for the suffix of 0
%% bytes or of an empty representation.
-spec byte_range(byte_range(), non_neg_integer())
	-> {ok, {non_neg_integer(), non_neg_integer()}} | error.
byte_range({From, _}, Length) when From >= Length -> error;
byte_range({From, infinity}, Length) -> {ok, {From, Length - 1}};
byte_range({From, To}, Length) -> {ok, {From, min(To, Length - 1)}};
byte_range(0, _) -> error;
byte_range(_, 0) -> error;
byte_range(Suffix, Length) -> {ok, {max(0, Length + Suffix), Length - 1}}.

-spec body_length(body()) -> non_neg_integer().
body_length({sendfile, _, Length, _}) -> Length;
body_length(Body) -> iolist_size(Body).

%% The bytes From to To, both included.
-spec body_part(body(), non_neg_integer(), non_neg_integer()) -> binary() | sendfile().
body_part({sendfile, Offset, _, Path}, From, To) ->
	{sendfile, Offset + From, To - From + 1, Path};
body_part(Body, From, To) ->
	binary:part(iolist_to_binary(Body), From, To - From + 1).

%% A content-range value (RFC 9110 14.4).
-spec content_range(binary(), range()) -> iodata().
content_range(Unit, {From, To, Total}) ->
	TotalBin = case Total of
		'*' -> <<"*">>;
		_ -> integer_to_binary(Total)
	end,
	[Unit, $\s, integer_to_binary(From), $-, integer_to_binary(To), $/, TotalBin];
content_range(Unit, Range) when is_binary(Range) ->
	[Unit, $\s, Range].

%% Several parts as multipart/byteranges (RFC 9110 14.6): the content-type
%% of the response and its body as pieces, each part with the ContentType
%% of the representation and its content-range. A piece is iodata or the
%% sendfile tuple of a part.
-spec multipart(binary(), iodata(), binary(), [part()]) -> {iodata(), [body()]}.
multipart(Boundary, ContentType, Unit, Parts) ->
	Pieces = lists:append([[[<<"--">>, Boundary, <<"\r\ncontent-type: ">>, ContentType,
		<<"\r\ncontent-range: ">>, content_range(Unit, Range), <<"\r\n\r\n">>], Body, <<"\r\n">>]
		|| {Range, Body} <- Parts]),
	{[<<"multipart/byteranges; boundary=">>, Boundary],
		Pieces ++ [[<<"--">>, Boundary, <<"--\r\n">>]]}.

%% Whether a body given as pieces must be streamed.
-spec has_sendfile([body()]) -> boolean().
has_sendfile(Pieces) ->
	lists:any(fun({sendfile, _, _, _}) -> true; (_) -> false end, Pieces).
