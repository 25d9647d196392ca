%% Multipart bodies (RFC 2046 5.1, RFC 7578 multipart/form-data): a pure
%% codec, with the function names and result shapes of Cowboy's cow_multipart
%% so that Cowboy code ports with a rename.
%%
%% Parsing is incremental over a buffer: the caller keeps the bytes a call
%% hands back (Rest) and appends the next chunk of the body to them, so the
%% body may be split anywhere. A part is read in two steps:
%%
%% - parse_headers(Data, Boundary) skips the preamble (or what is left of the
%%   previous part), finds the next delimiter and parses the part's header
%%   section: {ok, Headers, Rest} (Rest is the start of the part's body),
%%   more (nothing can be decided yet: call again with more data appended to
%%   Data), {more, Rest} (call again with more data appended to Rest),
%%   {done, Epilogue} (the close delimiter: no more parts), or {error, Error};
%% - parse_body(Data, Boundary) returns the body bytes before the next
%%   delimiter: {ok, Body} (all of Data is body), {ok, Body, Rest} (Rest may
%%   be the start of the delimiter: append more data to it), or
%%   {done, Body, Rest} (the body ended; Rest, starting with the delimiter,
%%   goes to parse_headers/2; cow_multipart also has {done, Body}, which
%%   cannot happen here).
%%
%% Strict when parsing: a header line must be a token, a colon and a value
%% of visible characters, spaces and tabs (no obs-fold); after a boundary
%% only transport padding (spaces and tabs) then CRLF, or "--" for the close
%% delimiter, may come. Errors are {error, {value_error, 400, Reason}}
%% (mustang_error). Header names are lowercased, values trimmed. Lax when
%% building: the builders trust their arguments. No limits here: the caller
%% (mustang_req:read_part/2) bounds what it buffers.
-module(mustang_multipart).

%% Parsing.
-export([parse_headers/2]).
-export([parse_body/2]).
-export([parse/2]).
-export([form_data/1]).
-export([parse_content_disposition/1]).

%% Building.
-export([boundary/0]).
-export([first_part/2]).
-export([part/2]).
-export([close/1]).
-export([build/2]).

-type headers() :: [{binary(), binary()}].
-type error() :: {error, mustang_error:value_error()}.
-export_type([headers/0]).

%% Parsing.

%% @doc Skips to the next delimiter and parses the header section of the
%% part after it (see the module comment for the results).
-spec parse_headers(binary(), binary()) ->
	{ok, headers(), binary()} | more | {more, binary()} | {done, binary()} | error().
parse_headers(Data, Boundary) ->
	DashBoundary = <<"--", Boundary/binary>>,
	Size = byte_size(DashBoundary),
	case Data of
		<<DashBoundary:Size/binary, After/binary>> ->
			after_boundary(After, Boundary);
		_ when byte_size(Data) < Size ->
			case binary:longest_common_prefix([Data, DashBoundary]) of
				N when N =:= byte_size(Data) -> more;
				_ -> skip_preamble(Data, Boundary)
			end;
		_ ->
			skip_preamble(Data, Boundary)
	end.

%% The next delimiter is CRLF "--" boundary; up to it, everything is
%% preamble (or an unread part body) and is dropped.
skip_preamble(Data, Boundary) ->
	Delimiter = <<"\r\n--", Boundary/binary>>,
	case binary:match(Data, Delimiter) of
		{Pos, _} ->
			<<_:Pos/binary, _:2/binary, Rest/binary>> = Data,
			parse_headers(Rest, Boundary);
		nomatch ->
			%% What may be the start of the delimiter is kept; so is the last
			%% byte otherwise, so that "--" boundary right after it is not
			%% taken for a delimiter at the start of a line.
			Keep = max(1, partial_suffix(Data, Delimiter)),
			{more, binary:part(Data, byte_size(Data) - Keep, Keep)}
	end.

%% After "--" boundary: "--" (close delimiter) or padding then CRLF.
after_boundary(<<"--", Epilogue/binary>>, _) ->
	{done, Epilogue};
after_boundary(<<"-">>, _) ->
	more;
after_boundary(<<>>, _) ->
	more;
after_boundary(Data, _) ->
	case skip_padding(Data) of
		<<"\r\n", Rest/binary>> -> header_section(Rest);
		<<"\r">> -> more;
		<<>> -> more;
		_ -> bad('A multipart boundary must be followed by CRLF or "--". (RFC2046 5.1.1)')
	end.

skip_padding(<<C, Rest/binary>>) when C =:= $\s; C =:= $\t -> skip_padding(Rest);
skip_padding(Rest) -> Rest.

%% The header section ends with an empty line; it may be empty itself.
header_section(<<"\r\n", Rest/binary>>) ->
	{ok, [], Rest};
header_section(Data) ->
	case binary:match(Data, <<"\r\n\r\n">>) of
		{Pos, _} ->
			<<Section:Pos/binary, _:4/binary, Rest/binary>> = Data,
			case header_lines(binary:split(Section, <<"\r\n">>, [global]), []) of
				{ok, Headers} -> {ok, Headers, Rest};
				Error -> Error
			end;
		nomatch ->
			%% The lines already complete are checked now, so that garbage is
			%% refused without waiting for more of it.
			Lines = binary:split(Data, <<"\r\n">>, [global]),
			case header_lines(lists:droplast(Lines), []) of
				{ok, _} -> more;
				Error -> Error
			end
	end.

header_lines([], Acc) ->
	{ok, lists:reverse(Acc)};
header_lines([Line | Rest], Acc) ->
	case header_line(Line) of
		{ok, Header} -> header_lines(Rest, [Header | Acc]);
		Error -> Error
	end.

header_line(Line) ->
	case mustang_http_hd_grammar:token_lc(Line) of
		{<<>>, _} ->
			bad('A multipart header line must start with a field name. (RFC7578 4.8)');
		{Name, <<$:, Value0/binary>>} ->
			Value = mustang_http_hd_grammar:trim(Value0),
			case valid_value(Value) of
				true -> {ok, {Name, Value}};
				false -> bad('A multipart header value must be visible characters, spaces and tabs. (RFC9110 5.5)')
			end;
		_ ->
			bad('A multipart header line must be a field name, ":" and a value. (RFC7578 4.8)')
	end.

valid_value(<<>>) -> true;
valid_value(<<C, Rest/binary>>) when C =:= $\t; C >= $\s, C =/= 16#7f -> valid_value(Rest);
valid_value(_) -> false.

%% @doc The body bytes of the current part up to the next delimiter (see the
%% module comment for the results).
-spec parse_body(binary(), binary()) ->
	{ok, binary()} | {ok, binary(), binary()} | {done, binary(), binary()}.
parse_body(Data, Boundary) ->
	Delimiter = <<"\r\n--", Boundary/binary>>,
	case binary:match(Data, Delimiter) of
		{Pos, _} ->
			<<Body:Pos/binary, _:2/binary, Rest/binary>> = Data,
			{done, Body, Rest};
		nomatch ->
			case partial_suffix(Data, Delimiter) of
				0 -> {ok, Data};
				Keep ->
					BodySize = byte_size(Data) - Keep,
					<<Body:BodySize/binary, Rest/binary>> = Data,
					{ok, Body, Rest}
			end
	end.

%% The length of the longest end of Data that is the start of Delimiter
%% (the delimiter may be cut by the end of the chunk).
partial_suffix(Data, Delimiter) ->
	Size = byte_size(Data),
	From = max(0, Size - byte_size(Delimiter) + 1),
	Candidates = [Pos || {Pos, _} <- binary:matches(Data, <<"\r">>, [{scope, {From, Size - From}}])],
	partial_suffix(Candidates, Data, Delimiter, Size).

partial_suffix([], _, _, _) ->
	0;
partial_suffix([Pos | Rest], Data, Delimiter, Size) ->
	Tail = binary:part(Data, Pos, Size - Pos),
	case binary:longest_common_prefix([Tail, Delimiter]) =:= Size - Pos of
		true -> Size - Pos;
		false -> partial_suffix(Rest, Data, Delimiter, Size)
	end.

%% @doc A whole multipart body parsed at once: its parts, each with its
%% headers and body, or the first error. A body that ends before its close
%% delimiter is an error.
-spec parse(binary(), binary()) -> {ok, [{headers(), binary()}]} | error().
parse(Data, Boundary) ->
	parse_all(Data, Boundary, []).

parse_all(Data, Boundary, Acc) ->
	case parse_headers(Data, Boundary) of
		{ok, Headers, Rest} ->
			case parse_body(Rest, Boundary) of
				{done, Body, Rest2} -> parse_all(Rest2, Boundary, [{Headers, Body} | Acc]);
				_ -> truncated()
			end;
		{done, _} ->
			{ok, lists:reverse(Acc)};
		{error, _} = Error ->
			Error;
		_ ->
			truncated()
	end.

truncated() ->
	bad('A multipart body must end with the close delimiter. (RFC2046 5.1.1)').

%% @doc What a part of a multipart/form-data body holds, from its headers
%% (a list, or a map as mustang_req:read_part/1 returns): {data, FieldName}
%% for a field, or {file, FieldName, Filename, ContentType} for a file
%% (ContentType defaults to text/plain, RFC 7578 4.4). As
%% cow_multipart:form_data/1, but an invalid content-disposition gives
%% {error, _} instead of a crash.
-spec form_data(headers() | #{binary() => binary()}) ->
	{data, binary()} | {file, binary(), binary(), binary()} | error().
form_data(Headers) when is_map(Headers) ->
	form_data(maps:to_list(Headers));
form_data(Headers) ->
	case lists:keyfind(<<"content-disposition">>, 1, Headers) of
		{_, Value} ->
			case parse_content_disposition(Value) of
				{ok, {<<"form-data">>, Params}} ->
					form_data(Params, Headers);
				{ok, _} ->
					bad('A multipart/form-data part must have a form-data content-disposition. (RFC7578 4.2)');
				Error ->
					Error
			end;
		false ->
			bad('A multipart/form-data part must have a content-disposition header. (RFC7578 4.2)')
	end.

form_data(Params, Headers) ->
	case lists:keyfind(<<"name">>, 1, Params) of
		{_, Name} ->
			case filename(Params) of
				undefined ->
					{data, Name};
				Filename ->
					Type = case lists:keyfind(<<"content-type">>, 1, Headers) of
						{_, T} -> T;
						false -> <<"text/plain">>
					end,
					{file, Name, Filename, Type}
			end;
		false ->
			bad('A multipart/form-data content-disposition must have a name. (RFC7578 4.2)')
	end.

%% filename* (RFC 6266 4.3, RFC 8187 UTF-8 encoding) wins over filename.
filename(Params) ->
	case lists:keyfind(<<"filename*">>, 1, Params) of
		{_, Ext} ->
			case ext_value(Ext) of
				{ok, Filename} -> Filename;
				error -> plain_filename(Params)
			end;
		false ->
			plain_filename(Params)
	end.

plain_filename(Params) ->
	case lists:keyfind(<<"filename">>, 1, Params) of
		{_, Filename} -> Filename;
		false -> undefined
	end.

ext_value(Value) ->
	case binary:split(Value, <<"'">>, [global]) of
		[Charset, _Lang, Encoded] ->
			case mustang_http_hd_grammar:lower(Charset) of
				<<"utf-8">> -> percent_decode(Encoded, <<>>);
				_ -> error
			end;
		_ ->
			error
	end.

percent_decode(<<>>, Acc) ->
	{ok, Acc};
percent_decode(<<$%, H, L, Rest/binary>>, Acc) ->
	case {hex(H), hex(L)} of
		{Hi, Lo} when is_integer(Hi), is_integer(Lo) -> percent_decode(Rest, <<Acc/binary, (Hi * 16 + Lo)>>);
		_ -> error
	end;
percent_decode(<<$%, _/binary>>, _) ->
	error;
percent_decode(<<C, Rest/binary>>, Acc) ->
	percent_decode(Rest, <<Acc/binary, C>>).

hex(C) when C >= $0, C =< $9 -> C - $0;
hex(C) when C >= $a, C =< $f -> C - $a + 10;
hex(C) when C >= $A, C =< $F -> C - $A + 10;
hex(_) -> error.

%% @doc content-disposition = disposition-type *( ";" disposition-parm )
%% (RFC 6266 4.1): the type and the parameter names lowercased, the values
%% unquoted.
-spec parse_content_disposition(binary()) -> {ok, {binary(), [{binary(), binary()}]}} | error().
parse_content_disposition(Value) ->
	case mustang_http_hd_grammar:token_lc(mustang_http_hd_grammar:ows(Value)) of
		{<<>>, _} ->
			bad_disposition();
		{Type, Rest0} ->
			case disposition_params(Rest0, []) of
				{ok, Params} -> {ok, {Type, Params}};
				error -> bad_disposition()
			end
	end.

%% Like mustang_http_hd_grammar:params/2, with "*" allowed at the end of a
%% name (filename*, RFC 8187).
disposition_params(Bin, Acc) ->
	case mustang_http_hd_grammar:param_sep(Bin) of
		{ok, Rest0} ->
			case mustang_http_hd_grammar:token_lc(Rest0) of
				{<<>>, _} ->
					error;
				{Name, <<$=, Rest1/binary>>} ->
					disposition_value(Name, Rest1, Acc);
				_ ->
					error
			end;
		{done, Rest} ->
			case mustang_http_hd_grammar:ows(Rest) of
				<<>> -> {ok, lists:reverse(Acc)};
				_ -> error
			end
	end.

disposition_value(Name, Bin, Acc) ->
	case mustang_http_hd_grammar:param_value(Bin) of
		{ok, Value, Rest} -> disposition_params(Rest, [{Name, Value} | Acc]);
		error -> error
	end.

bad_disposition() ->
	bad('The content-disposition header must be a type with optional parameters. (RFC6266 4.1)').

bad(Reason) ->
	{error, {value_error, 400, Reason}}.

%% Building.

%% @doc A random boundary: 32 characters that cannot be confused with
%% anything in a part (RFC 2046 5.1.1 allows up to 70).
-spec boundary() -> binary().
boundary() ->
	<< <<(hexchar(N))>> || <<N:4>> <= crypto:strong_rand_bytes(16) >>.

hexchar(N) when N < 10 -> $0 + N;
hexchar(N) -> $a + N - 10.

%% @doc The delimiter and headers that start the first part.
-spec first_part(binary(), headers() | #{binary() => iodata()}) -> iodata().
first_part(Boundary, Headers) ->
	[<<"--">>, Boundary, <<"\r\n">>, headers_to_iodata(Headers), <<"\r\n">>].

%% @doc The delimiter and headers that start every part after the first.
-spec part(binary(), headers() | #{binary() => iodata()}) -> iodata().
part(Boundary, Headers) ->
	[<<"\r\n--">>, Boundary, <<"\r\n">>, headers_to_iodata(Headers), <<"\r\n">>].

%% @doc The close delimiter, after the last part's body.
-spec close(binary()) -> iodata().
close(Boundary) ->
	[<<"\r\n--">>, Boundary, <<"--\r\n">>].

%% @doc A whole multipart body from its parts (headers and body each).
-spec build(binary(), [{headers() | #{binary() => iodata()}, iodata()}]) -> iodata().
build(Boundary, []) ->
	[<<"--">>, Boundary, <<"--\r\n">>];
build(Boundary, [{Headers, Body} | Parts]) ->
	[first_part(Boundary, Headers), Body,
		[[part(Boundary, H), B] || {H, B} <- Parts], close(Boundary)].

headers_to_iodata(Headers) when is_map(Headers) ->
	headers_to_iodata(maps:to_list(Headers));
headers_to_iodata(Headers) ->
	[[Name, <<": ">>, Value, <<"\r\n">>] || {Name, Value} <- Headers].
