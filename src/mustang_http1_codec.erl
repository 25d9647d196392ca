%% HTTP/1.1 wire codec (RFC 9112): request parsing and chunked body decoding
%% (responses are built by mustang_http1_resp). Pure functions on binaries: no
%% sockets, no processes.
%%
%% Contract: strict. The parser rejects anything off-spec (bare LF, obs-fold,
%% whitespace before the colon, CR/LF/NUL in values, conflicting framing
%% headers) because leniency here is what request smuggling feeds on.
%%
%% Errors have Mustang's one shape (mustang_error, doc/internals/errors.md):
%% {error, {http_error, Status, Reason}} where Status is the HTTP status to
%% answer with and Reason a sentence naming the rule broken and its RFC section.
-module(mustang_http1_codec).

%% Requests.
-export([parse_request/3]).
-export([parse_request/4]).
-export([check_partial/2]).
-export([parse_host/1]).
-export([default_limits/0]).

%% Bodies.
-export([init_chunked/2]).
-export([decode_chunked/2]).

-export_type([request/0, limits/0, chunked_state/0, parse_error/0, cache/0]).

%% What parse_request/4 remembers of the previous request on a connection:
%% its header section, as bytes and parsed, and the Host it gave. Keep-alive
%% clients usually send the same header section every time; identical bytes
%% parse to identical results, so they are not parsed again.
%% Not to be looked into by callers.
-type cache() :: undefined
	| {HeaderLines :: binary(), #{binary() => binary()},
		undefined | {'HTTP/1.1' | 'HTTP/1.0', term()}}.

-type limits() :: #{
	max_empty_lines := non_neg_integer(),
	max_request_line_length := pos_integer(),
	max_method_length := pos_integer(),
	max_header_name_length := pos_integer(),
	max_header_value_length := pos_integer(),
	max_headers := non_neg_integer()
}.

-type body() :: none | {length, pos_integer()} | chunked.

-type request() :: #{
	method := binary(),
	version := 'HTTP/1.1' | 'HTTP/1.0',
	path := binary(),
	qs := binary(),
	host := binary(),
	port := inet:port_number() | undefined,
	headers := #{binary() => binary()},
	body := body(),
	keepalive := boolean(),
	expect_continue := boolean()
}.

-type parse_error() :: {error, {http_error, 400 | 414 | 431 | 501 | 505, atom()}}.

%% Chunked decoder state: which part of the chunked framing comes next, and
%% the limits.
-type chunked_state() ::
	{size, binary(), chunked_limits()}
	| {data, pos_integer(), chunked_limits()}
	| {data_crlf, chunked_limits()}
	| {data_lf, chunked_limits()}
	| {trailers, binary(), non_neg_integer(), non_neg_integer()}.

%% The size of the trailer section allowed, and the bytes of chunk
%% extensions still allowed in the body.
-type chunked_limits() :: {MaxTrailers :: non_neg_integer(), ExtLeft :: non_neg_integer()}.

-define(P(Name), mustang_pattern:compiled(Name)).

-define(ERROR(Status, Reason), {error, {http_error, Status, Reason}}).

-define(IS_TOKEN(C),
	(C >= $a andalso C =< $z) orelse (C >= $A andalso C =< $Z)
	orelse (C >= $0 andalso C =< $9)
	orelse C =:= $! orelse C =:= $# orelse C =:= $$ orelse C =:= $% orelse C =:= $&
	orelse C =:= $' orelse C =:= $* orelse C =:= $+ orelse C =:= $- orelse C =:= $.
	orelse C =:= $^ orelse C =:= $_ orelse C =:= $` orelse C =:= $| orelse C =:= $~).

%% Largest chunk-size line (hex digits and extensions) we accept.
-define(MAX_CHUNK_LINE, 4096).

%% Optional whitespace allowed around a field value on top of
%% max_header_value_length, which applies to the trimmed value. Bounding it
%% keeps the largest possible head finite, so that check_partial/2 and the
%% parser agree on what fits.
-define(MAX_OWS, 16).

%% Requests.

-spec default_limits() -> limits().
default_limits() ->
	#{
		max_empty_lines => 5,
		max_request_line_length => 8000,
		max_method_length => 32,
		max_header_name_length => 64,
		max_header_value_length => 4096,
		max_headers => 100
	}.

%% Parses one request head from Buffer. ScanFrom is where the previous call
%% stopped looking for the blank line that ends the head, so that a head
%% arriving in many small pieces is scanned once in total.
-spec parse_request(binary(), non_neg_integer(), limits())
	-> {ok, request(), binary()} | {more, non_neg_integer()} | parse_error().
parse_request(Buffer, ScanFrom, Limits) ->
	case parse_request(Buffer, ScanFrom, Limits, undefined) of
		{ok, Request, Rest, _} -> {ok, Request, Rest};
		Other -> Other
	end.

%% The same, with the cache of the previous request on the connection
%% (undefined at first).
-spec parse_request(binary(), non_neg_integer(), limits(), cache())
	-> {ok, request(), binary(), cache()} | {more, non_neg_integer()} | parse_error().
parse_request(Buffer, ScanFrom, Limits = #{max_empty_lines := MaxEmpty}, Cache) ->
	case skip_empty_lines(Buffer, 0, MaxEmpty) of
		{ok, Skipped, Rest} ->
			From = max(0, ScanFrom - Skipped),
			case byte_size(Rest) - From of
				Avail when Avail < 4 ->
					partial(Rest, Skipped, From, Limits);
				Avail ->
					case mustang_pattern:find(Rest, crlfcrlf, From, Avail) of
						nomatch ->
							partial(Rest, Skipped, From, Limits);
						{Pos, 4} ->
							Head = binary:part(Rest, 0, Pos + 2),
							Tail = binary:part(Rest, Pos + 4, byte_size(Rest) - Pos - 4),
							parse_head(Head, Tail, Limits, Cache)
					end
			end;
		more ->
			{more, 0};
		Error ->
			Error
	end.

partial(Rest, Skipped, From, Limits) ->
	case check_partial(Rest, Limits) of
		ok ->
			case bare_lf(Rest, max(0, From - 1)) of
				false -> {more, Skipped + max(0, byte_size(Rest) - 3)};
				true -> ?ERROR(400, 'Lines must end with CRLF, not a bare LF. (RFC9112 2.2)')
			end;
		Error ->
			Error
	end.

%% A head with LF line endings would never show the CRLFCRLF we wait for:
%% refuse it as soon as an LF without its CR arrives (RFC 9112 2.2). Only the
%% bytes not scanned before are looked at.
bare_lf(Rest, From) ->
	lists:any(fun({0, 1}) -> true; ({Pos, 1}) -> binary:at(Rest, Pos - 1) =/= $\r end,
		lf_positions(Rest, From)).

lf_positions(Rest, From) ->
	case mustang_pattern:find(Rest, lf, From, byte_size(Rest) - From) of
		nomatch -> [];
		{Pos, 1} -> [{Pos, 1} | lf_positions(Rest, Pos + 1)]
	end.

skip_empty_lines(<<"\r\n", Rest/bits>>, N, Max) when N < Max ->
	skip_empty_lines(Rest, N + 1, Max);
skip_empty_lines(<<"\r\n", _/bits>>, _, _) ->
	?ERROR(400, 'More empty lines than max_empty_lines precede the request line. (RFC9112 2.2)');
skip_empty_lines(<<"\r">>, _, _) ->
	more;
skip_empty_lines(<<"\n", _/bits>>, _, _) ->
	?ERROR(400, 'Lines must end with CRLF, not a bare LF. (RFC9112 2.2)');
skip_empty_lines(Rest, N, _) ->
	{ok, 2 * N, Rest}.

%% Limits that can be checked before the head is complete, so that a client
%% cannot make us buffer an unbounded head: a request line with no end yet
%% longer than allowed gives 414, a method longer than allowed 501, and more
%% bytes than the largest head the limits allow 431.
-spec check_partial(binary(), limits()) -> ok | parse_error().
check_partial(Rest, #{max_request_line_length := MaxLine, max_method_length := MaxMethod,
		max_headers := MaxHeaders, max_header_name_length := MaxName,
		max_header_value_length := MaxValue}) ->
	Size = byte_size(Rest),
	case mustang_pattern:find(Rest, crlf) of
		nomatch when Size > MaxLine + 1; Size =:= MaxLine + 1, binary_part(Rest, Size, -1) =/= <<"\r">> ->
			?ERROR(414, 'The request line is longer than max_request_line_length. (RFC9112 3)');
		nomatch ->
			check_partial_method(Rest, Size, MaxMethod);
		{LineEnd, 2} when LineEnd > MaxLine ->
			?ERROR(414, 'The request line is longer than max_request_line_length. (RFC9112 3)');
		{LineEnd, 2} ->
			MaxHead = LineEnd + 2 + MaxHeaders * (MaxName + MaxValue + ?MAX_OWS + 3) + 2,
			if
				Size > MaxHead -> ?ERROR(431, 'The header section is larger than the header limits allow. (RFC6585 5)');
				true -> ok
			end
	end.

%% What arrived of the method must be a token: bytes that cannot start a
%% request (a TLS ClientHello sent to a clear port) are refused at once as
%% malformed, before they could pass for a method too long.
check_partial_method(Rest, Size, MaxMethod) ->
	Scope = min(Size, MaxMethod + 1),
	{MethodPart, SP} = case mustang_pattern:find(Rest, sp, 0, Scope) of
		nomatch -> {binary:part(Rest, 0, Scope), false};
		{Pos, 1} -> {binary:part(Rest, 0, Pos), true}
	end,
	case is_token(MethodPart) of
		false -> ?ERROR(400, 'The method must be a token. (RFC9112 3.1)');
		true when not SP, Size > MaxMethod -> ?ERROR(501, 'The method is longer than max_method_length. (RFC9112 3)');
		true -> ok
	end.

parse_head(Head, Tail, Limits = #{max_request_line_length := MaxLine}, Cache) ->
	{LineEnd, 2} = mustang_pattern:find(Head, crlf),
	if
		LineEnd > MaxLine ->
			?ERROR(414, 'The request line is longer than max_request_line_length. (RFC9112 3)');
		true ->
			Line = binary:part(Head, 0, LineEnd),
			HeaderLines = binary:part(Head, LineEnd + 2, byte_size(Head) - LineEnd - 2),
			case parse_request_line(Line, Limits) of
				{ok, Method, Target, Version} ->
					case cached_headers(HeaderLines, Limits, Cache) of
						{ok, Headers, Cache2} ->
							finish_request(Method, Target, Version, Headers, Tail, Cache2);
						Error ->
							Error
					end;
				Error ->
					Error
			end
	end.

cached_headers(HeaderLines, _, Cache = {Cached, Headers, _}) when Cached =:= HeaderLines ->
	{ok, Headers, Cache};
cached_headers(HeaderLines, Limits, _) ->
	case parse_headers(HeaderLines, #{}, 0, Limits) of
		{ok, Headers} -> {ok, Headers, {HeaderLines, Headers, undefined}};
		Error -> Error
	end.

parse_request_line(Line, #{max_method_length := MaxMethod}) ->
	case split_sp(Line) of
		{<<>>, _} ->
			?ERROR(400, 'The request line must start with a method. (RFC9112 3)');
		{Method, Rest} ->
			case is_token(Method) of
				false ->
					?ERROR(400, 'The method must be a token. (RFC9112 3.1)');
				true when byte_size(Method) > MaxMethod ->
					?ERROR(501, 'The method is longer than max_method_length. (RFC9112 3)');
				true ->
					case split_sp(Rest) of
						{Target, Version} when Target =/= <<>> ->
							parse_version(Method, Target, Version);
						_ ->
							?ERROR(400, 'The request line must be method SP request-target SP HTTP-version. (RFC9112 3)')
					end
			end;
		nomatch ->
			?ERROR(400, 'The request line must be method SP request-target SP HTTP-version. (RFC9112 3)')
	end.

split_sp(Bin) ->
	case mustang_pattern:find(Bin, sp) of
		{Pos, 1} -> {binary:part(Bin, 0, Pos), binary:part(Bin, Pos + 1, byte_size(Bin) - Pos - 1)};
		nomatch -> nomatch
	end.

parse_version(Method, Target, <<"HTTP/1.1">>) -> {ok, Method, Target, 'HTTP/1.1'};
parse_version(Method, Target, <<"HTTP/1.0">>) -> {ok, Method, Target, 'HTTP/1.0'};
parse_version(_, _, <<"HTTP/", A, ".", B>>) when A >= $0, A =< $9, B >= $0, B =< $9 ->
	?ERROR(505, 'Only HTTP/1.0 and HTTP/1.1 are supported. (RFC9110 15.6.6)');
parse_version(_, _, _) ->
	?ERROR(400, 'The HTTP version must be HTTP/DIGIT.DIGIT. (RFC9112 2.3)').

is_token(<<>>) -> true;
is_token(<<C, Rest/bits>>) when ?IS_TOKEN(C) -> is_token(Rest);
is_token(_) -> false.

%% Header lines: "name: value" CRLF. Names are lowercased; values are trimmed
%% of optional whitespace. Repeated fields are joined with ", " (RFC 9110 5.3),
%% except cookie which is joined with "; " (RFC 6265 5.4).
parse_headers(<<>>, Acc, _, _) ->
	{ok, Acc};
parse_headers(_, _, Count, #{max_headers := Max}) when Count >= Max ->
	?ERROR(431, 'There are more header fields than max_headers allows. (RFC6585 5)');
parse_headers(Data, Acc, Count, Limits) ->
	case fast_header(Data, Limits) of
		{ok, Name, Value, Rest} ->
			parse_headers(Rest, add_header(Name, Value, Acc), Count + 1, Limits);
		slow ->
			slow_header(Data, Acc, Count, Limits)
	end.

%% The common case in one pass over the line: a token name, a colon, a valid
%% value with little whitespace around it, CRLF. Anything else, valid or not,
%% goes through slow_header/4, which is the reference for what is accepted and
%% which error each fault gives; this function only ever accepts a subset of
%% what it accepts, with the same result.
fast_header(Data, #{max_header_name_length := MaxName, max_header_value_length := MaxValue}) ->
	case fast_name(Data, 0, false) of
		{NameLen, Upper, AfterColon} when NameLen =< MaxName ->
			{Leading, ValueStart} = fast_ows(AfterColon, 0),
			case fast_value(ValueStart, 0, 0) of
				{Len, Trimmed, Rest} when Trimmed =< MaxValue, Leading + Len - Trimmed =< ?MAX_OWS ->
					<<Name0:NameLen/binary, _/bits>> = Data,
					<<Value:Trimmed/binary, _/bits>> = ValueStart,
					Name = case Upper of
						true -> lower_name(Name0);
						false -> Name0
					end,
					{ok, Name, Value, Rest};
				_ ->
					slow
			end;
		_ ->
			slow
	end.

%% Field names as browsers and common clients capitalize them, lowercased by
%% table: a clause match is ten times cheaper than lowercasing byte by byte.
lower_name(<<"Host">>) -> <<"host">>;
lower_name(<<"User-Agent">>) -> <<"user-agent">>;
lower_name(<<"Accept">>) -> <<"accept">>;
lower_name(<<"Accept-Encoding">>) -> <<"accept-encoding">>;
lower_name(<<"Accept-Language">>) -> <<"accept-language">>;
lower_name(<<"Accept-Charset">>) -> <<"accept-charset">>;
lower_name(<<"Connection">>) -> <<"connection">>;
lower_name(<<"Content-Length">>) -> <<"content-length">>;
lower_name(<<"Content-Type">>) -> <<"content-type">>;
lower_name(<<"Content-Encoding">>) -> <<"content-encoding">>;
lower_name(<<"Cookie">>) -> <<"cookie">>;
lower_name(<<"Referer">>) -> <<"referer">>;
lower_name(<<"Origin">>) -> <<"origin">>;
lower_name(<<"Cache-Control">>) -> <<"cache-control">>;
lower_name(<<"Pragma">>) -> <<"pragma">>;
lower_name(<<"Upgrade">>) -> <<"upgrade">>;
lower_name(<<"Upgrade-Insecure-Requests">>) -> <<"upgrade-insecure-requests">>;
lower_name(<<"Authorization">>) -> <<"authorization">>;
lower_name(<<"If-None-Match">>) -> <<"if-none-match">>;
lower_name(<<"If-Modified-Since">>) -> <<"if-modified-since">>;
lower_name(<<"If-Match">>) -> <<"if-match">>;
lower_name(<<"If-Unmodified-Since">>) -> <<"if-unmodified-since">>;
lower_name(<<"If-Range">>) -> <<"if-range">>;
lower_name(<<"Range">>) -> <<"range">>;
lower_name(<<"Expect">>) -> <<"expect">>;
lower_name(<<"Transfer-Encoding">>) -> <<"transfer-encoding">>;
lower_name(<<"TE">>) -> <<"te">>;
lower_name(<<"Trailer">>) -> <<"trailer">>;
lower_name(<<"DNT">>) -> <<"dnt">>;
lower_name(<<"Via">>) -> <<"via">>;
lower_name(<<"X-Forwarded-For">>) -> <<"x-forwarded-for">>;
lower_name(<<"X-Forwarded-Proto">>) -> <<"x-forwarded-proto">>;
lower_name(<<"X-Forwarded-Host">>) -> <<"x-forwarded-host">>;
lower_name(<<"X-Real-IP">>) -> <<"x-real-ip">>;
lower_name(<<"X-Requested-With">>) -> <<"x-requested-with">>;
lower_name(<<"Forwarded">>) -> <<"forwarded">>;
lower_name(<<"Sec-WebSocket-Key">>) -> <<"sec-websocket-key">>;
lower_name(<<"Sec-WebSocket-Version">>) -> <<"sec-websocket-version">>;
lower_name(<<"Sec-WebSocket-Extensions">>) -> <<"sec-websocket-extensions">>;
lower_name(<<"Sec-WebSocket-Protocol">>) -> <<"sec-websocket-protocol">>;
lower_name(<<"Sec-Fetch-Site">>) -> <<"sec-fetch-site">>;
lower_name(<<"Sec-Fetch-Mode">>) -> <<"sec-fetch-mode">>;
lower_name(<<"Sec-Fetch-Dest">>) -> <<"sec-fetch-dest">>;
lower_name(<<"Sec-Fetch-User">>) -> <<"sec-fetch-user">>;
lower_name(<<"Sec-CH-UA">>) -> <<"sec-ch-ua">>;
lower_name(<<"Sec-CH-UA-Mobile">>) -> <<"sec-ch-ua-mobile">>;
lower_name(<<"Sec-CH-UA-Platform">>) -> <<"sec-ch-ua-platform">>;
lower_name(<<"HTTP2-Settings">>) -> <<"http2-settings">>;
lower_name(<<"Keep-Alive">>) -> <<"keep-alive">>;
lower_name(<<"Priority">>) -> <<"priority">>;
lower_name(<<"Date">>) -> <<"date">>;
lower_name(<<"Max-Forwards">>) -> <<"max-forwards">>;
lower_name(<<"Proxy-Authorization">>) -> <<"proxy-authorization">>;
lower_name(Name) -> lower(Name).

fast_name(<<C, Rest/bits>>, N, Upper) when (C >= $a andalso C =< $z); C =:= $- ->
	fast_name(Rest, N + 1, Upper);
fast_name(<<C, Rest/bits>>, N, _) when C >= $A, C =< $Z ->
	fast_name(Rest, N + 1, true);
fast_name(<<$:, Rest/bits>>, N, Upper) when N > 0 ->
	{N, Upper, Rest};
fast_name(<<C, Rest/bits>>, N, Upper) when ?IS_TOKEN(C) ->
	fast_name(Rest, N + 1, Upper);
fast_name(_, _, _) ->
	slow.

fast_ows(<<C, Rest/bits>>, N) when C =:= $\s; C =:= $\t -> fast_ows(Rest, N + 1);
fast_ows(Rest, N) -> {N, Rest}.

%% Returns the length up to CRLF, the length without trailing whitespace, and
%% the bytes after CRLF.
fast_value(<<C, Rest/bits>>, N, _) when C > 32, C =/= 127 -> fast_value(Rest, N + 1, N + 1);
fast_value(<<C, Rest/bits>>, N, Trimmed) when C =:= $\s; C =:= $\t -> fast_value(Rest, N + 1, Trimmed);
fast_value(<<"\r\n", Rest/bits>>, N, Trimmed) -> {N, Trimmed, Rest};
fast_value(_, _, _) -> slow.

slow_header(Data, Acc, Count, Limits) ->
	case mustang_pattern:find(Data, crlf) of
		{End, 2} ->
			Line = binary:part(Data, 0, End),
			Rest = binary:part(Data, End + 2, byte_size(Data) - End - 2),
			case parse_header_line(Line, Limits) of
				{ok, Name, Value} ->
					parse_headers(Rest, add_header(Name, Value, Acc), Count + 1, Limits);
				Error ->
					Error
			end;
		nomatch ->
			?ERROR(400, 'A field line must end with CRLF. (RFC9112 2.1)')
	end.

parse_header_line(<<C, _/bits>>, _) when C =:= $\s; C =:= $\t ->
	?ERROR(400, 'Obsolete line folding is refused. (RFC9112 5.2)');
parse_header_line(Line, #{max_header_name_length := MaxName,
		max_header_value_length := MaxValue}) ->
	case mustang_pattern:find(Line, colon) of
		nomatch ->
			?ERROR(400, 'A field line must have a colon after the field name. (RFC9112 5)');
		{0, 1} ->
			?ERROR(400, 'A field name must not be empty. (RFC9110 5.1)');
		{NameLen, 1} when NameLen > MaxName ->
			?ERROR(431, 'A field name is longer than max_header_name_length. (RFC6585 5)');
		{NameLen, 1} ->
			case lower_token(binary:part(Line, 0, NameLen)) of
				error ->
					?ERROR(400, 'A field name must be a token followed by the colon without whitespace. (RFC9112 5.1)');
				Name ->
					RawValue = binary:part(Line, NameLen + 1, byte_size(Line) - NameLen - 1),
					Value = trim(RawValue),
					if
						byte_size(Value) > MaxValue;
								byte_size(RawValue) > byte_size(Value) + ?MAX_OWS ->
							?ERROR(431, 'A field value is longer than max_header_value_length. (RFC6585 5)');
						true ->
							case valid_value(Value) of
								true -> {ok, Name, Value};
								false -> ?ERROR(400, 'A field value must not hold CR, LF, NUL or other control characters. (RFC9110 5.5)')
							end
					end
			end
	end.

%% Validates a token and lowercases it; names already in lowercase (HTTP/2
%% style, and most of ours) are returned without a copy.
lower_token(Token) ->
	case check_token(Token, false) of
		lower -> Token;
		upper -> lower(Token);
		error -> error
	end.

check_token(<<>>, false) -> lower;
check_token(<<>>, true) -> upper;
check_token(<<C, Rest/bits>>, _) when C >= $A, C =< $Z -> check_token(Rest, true);
check_token(<<C, Rest/bits>>, Upper) when ?IS_TOKEN(C) -> check_token(Rest, Upper);
check_token(_, _) -> error.

%% Field values: visible characters, obs-text, SP and HTAB. No CR, LF, NUL
%% or other controls.
valid_value(<<>>) -> true;
valid_value(<<C, Rest/bits>>) when C >= 32, C =/= 127 -> valid_value(Rest);
valid_value(<<$\t, Rest/bits>>) -> valid_value(Rest);
valid_value(_) -> false.

trim(Value) ->
	trim_trailing(trim_leading(Value)).

trim_leading(<<C, Rest/bits>>) when C =:= $\s; C =:= $\t -> trim_leading(Rest);
trim_leading(Value) -> Value.

trim_trailing(<<>>) -> <<>>;
trim_trailing(Value) ->
	Last = binary:last(Value),
	if
		Last =:= $\s; Last =:= $\t ->
			trim_trailing(binary:part(Value, 0, byte_size(Value) - 1));
		true ->
			Value
	end.

add_header(Name, Value, Acc) ->
	case Acc of
		#{Name := Prev} when Name =:= <<"cookie">> -> Acc#{Name => <<Prev/binary, "; ", Value/binary>>};
		#{Name := Prev} -> Acc#{Name => <<Prev/binary, ", ", Value/binary>>};
		_ -> Acc#{Name => Value}
	end.

finish_request(Method, Target, Version, Headers, Tail, Cache0) ->
	case parse_target(Method, Target) of
		{ok, TargetAuthority, Path, Qs} ->
			case cached_host(Version, TargetAuthority, Headers, Cache0) of
				{{ok, Host, Port}, Cache} ->
					case {request_body(Version, Headers), keepalive(Version, Headers)} of
						{{ok, Body}, {ok, Keepalive}} ->
							{ok, #{
								method => Method,
								version => Version,
								path => Path,
								qs => Qs,
								host => Host,
								port => Port,
								headers => Headers,
								body => Body,
								keepalive => Keepalive,
								expect_continue => expect_continue(Version, Body, Headers)
							}, Tail, Cache};
						{{ok, _}, Error} ->
							Error;
						{Error, _} ->
							Error
					end;
				{Error, _} ->
					Error
			end;
		Error ->
			Error
	end.

%% The Host of an origin-form request only depends on the version and the
%% header section, both part of the cache key.
cached_host(Version, undefined, _, Cache = {_, _, {Version, Result}}) ->
	{Result, Cache};
cached_host(Version, undefined, Headers, {HeaderLines, Headers, _}) ->
	Result = request_host(Version, undefined, Headers),
	{Result, {HeaderLines, Headers, {Version, Result}}};
cached_host(Version, TargetAuthority, Headers, Cache) ->
	{request_host(Version, TargetAuthority, Headers), Cache}.

%% Request targets (RFC 9112 3.2): origin-form, absolute-form, and
%% asterisk-form for OPTIONS. CONNECT (authority-form) is answered with 501.
%% The scheme of an absolute-form target must be http or https but is not
%% returned: the request's scheme is the connection's (RFC 9112 3.3), so that
%% a request over a clear connection never passes for one over TLS.
parse_target(<<"CONNECT">>, _) ->
	?ERROR(501, 'The CONNECT method is not implemented. (RFC9110 9.3.6)');
parse_target(<<"OPTIONS">>, <<"*">>) ->
	{ok, undefined, <<"*">>, <<>>};
parse_target(_, <<"/", _/bits>> = Target) ->
	split_path(Target, undefined);
parse_target(_, Target) ->
	case Target of
		<<S1, S2, S3, S4, "://", Rest/bits>> when (S1 bor 32) =:= $h, (S2 bor 32) =:= $t,
				(S3 bor 32) =:= $t, (S4 bor 32) =:= $p ->
			absolute_form(Rest);
		<<S1, S2, S3, S4, S5, "://", Rest/bits>> when (S1 bor 32) =:= $h,
				(S2 bor 32) =:= $t, (S3 bor 32) =:= $t, (S4 bor 32) =:= $p,
				(S5 bor 32) =:= $s ->
			absolute_form(Rest);
		_ ->
			?ERROR(400, 'The request target must be in origin, absolute or asterisk form. (RFC9112 3.2)')
	end.

absolute_form(Rest) ->
	{Authority, PathQs} = case binary:match(Rest, [<<"/">>, <<"?">>]) of
		nomatch -> {Rest, <<"/">>};
		{Pos, _} -> {binary:part(Rest, 0, Pos), binary:part(Rest, Pos, byte_size(Rest) - Pos)}
	end,
	case binary:match(Authority, [<<"@">>]) of
		nomatch ->
			PathQs2 = case PathQs of
				<<"?", _/bits>> -> <<"/", PathQs/binary>>;
				_ -> PathQs
			end,
			split_path(PathQs2, Authority);
		_ ->
			?ERROR(400, 'The request target must not hold userinfo. (RFC9110 4.2.4)')
	end.

split_path(Target, Authority) ->
	case valid_target(Target) of
		false ->
			?ERROR(400, 'The request target must be in origin, absolute or asterisk form. (RFC9112 3.2)');
		true ->
			case mustang_pattern:find(Target, qmark) of
				nomatch ->
					{ok, Authority, Target, <<>>};
				{Pos, 1} ->
					{ok, Authority, binary:part(Target, 0, Pos),
						binary:part(Target, Pos + 1, byte_size(Target) - Pos - 1)}
			end
	end.

%% Visible ASCII only, and no fragment (clients never send one).
valid_target(<<>>) -> true;
valid_target(<<$#, _/bits>>) -> false;
valid_target(<<C, Rest/bits>>) when C > 32, C < 127 -> valid_target(Rest);
valid_target(_) -> false.

%% Host (RFC 9112 3.2): required in HTTP/1.1, exactly once. With the
%% absolute-form, the target's authority wins over the Host header.
request_host(Version, TargetAuthority, Headers) ->
	HeaderHost = case Headers of
		#{<<"host">> := Value} ->
			case parse_host(Value) of
				%% Repeated Host fields were joined with ", " (add_header/3).
				{error, _} = HostError ->
					case mustang_pattern:find(Value, comma) of
						nomatch -> HostError;
						_ -> ?ERROR(400, 'A request must not have more than one Host field. (RFC9112 3.2)')
					end;
				Host ->
					Host
			end;
		_ when Version =:= 'HTTP/1.0' ->
			{ok, <<>>, undefined};
		_ ->
			?ERROR(400, 'An HTTP/1.1 request must have a Host field. (RFC9112 3.2)')
	end,
	case {HeaderHost, TargetAuthority} of
		{{ok, _, _}, undefined} -> HeaderHost;
		{{ok, _, _}, <<>>} -> ?ERROR(400, 'An absolute-form target must have a non-empty authority. (RFC9110 4.2.1)');
		{{ok, _, _}, Authority} -> parse_host(Authority);
		{Error, _} -> Error
	end.

%% A Host header value or an authority: lowercase host and optional port.
-spec parse_host(binary())
	-> {ok, binary(), inet:port_number() | undefined} | {error, {http_error, 400, atom()}}.
parse_host(<<"[", _/bits>> = Value) ->
	case binary:match(Value, [<<"]">>]) of
		nomatch ->
			?ERROR(400, 'The Host must be a valid uri-host with an optional port. (RFC9112 3.2)');
		{Pos, 1} ->
			Host = binary:part(Value, 0, Pos + 1),
			case valid_ipv6(binary:part(Host, 1, Pos - 1)) of
				true -> host_port(lower(Host), binary:part(Value, Pos + 1, byte_size(Value) - Pos - 1));
				false -> ?ERROR(400, 'The Host must be a valid uri-host with an optional port. (RFC9112 3.2)')
			end
	end;
parse_host(Value) ->
	case reg_name_port(Value, 0, false) of
		{Len, Upper, PortPart} ->
			<<Host0:Len/binary, _/bits>> = Value,
			Host = case Upper of
				true -> lower(Host0);
				false -> Host0
			end,
			host_port(Host, PortPart);
		error ->
			?ERROR(400, 'The Host must be a valid uri-host with an optional port. (RFC9112 3.2)')
	end.

%% reg-name (RFC 3986 3.2.2): unreserved, pct-encoded, sub-delims; then
%% nothing or ":" and the port, in one pass.
reg_name_port(<<C, Rest/bits>>, N, Upper) when (C >= $a andalso C =< $z);
		(C >= $0 andalso C =< $9); C =:= $.; C =:= $- ->
	reg_name_port(Rest, N + 1, Upper);
reg_name_port(<<C, Rest/bits>>, N, _) when C >= $A, C =< $Z ->
	reg_name_port(Rest, N + 1, true);
reg_name_port(<<C, Rest/bits>>, N, Upper) when C =:= $_; C =:= $~; C =:= $%;
		C =:= $!; C =:= $$; C =:= $&; C =:= $'; C =:= $(; C =:= $); C =:= $*; C =:= $+;
		C =:= $;; C =:= $= ->
	reg_name_port(Rest, N + 1, Upper);
reg_name_port(PortPart = <<$:, _/bits>>, N, Upper) ->
	{N, Upper, PortPart};
reg_name_port(<<>>, N, Upper) ->
	{N, Upper, <<>>};
reg_name_port(_, _, _) ->
	error.

host_port(Host, <<>>) ->
	{ok, Host, undefined};
host_port(Host, <<":", Port/bits>>) when Port =/= <<>>, byte_size(Port) =< 5 ->
	case digits(Port, 0) of
		%% Port 0 names no port a client can reach.
		N when is_integer(N), N > 0, N =< 65535 -> {ok, Host, N};
		_ -> ?ERROR(400, 'The Host must be a valid uri-host with an optional port. (RFC9112 3.2)')
	end;
host_port(_, _) ->
	?ERROR(400, 'The Host must be a valid uri-host with an optional port. (RFC9112 3.2)').

valid_ipv6(<<>>) -> false;
valid_ipv6(Bin) -> valid_ipv6_chars(Bin).

valid_ipv6_chars(<<>>) -> true;
valid_ipv6_chars(<<C, Rest/bits>>) when (C >= $0 andalso C =< $9); (C >= $a andalso C =< $f);
		(C >= $A andalso C =< $F); C =:= $:; C =:= $. ->
	valid_ipv6_chars(Rest);
valid_ipv6_chars(_) -> false.

%% Through a list: faster than building the binary byte by byte.
lower(Bin) -> list_to_binary([if C >= $A, C =< $Z -> C + 32; true -> C end || <<C>> <= Bin]).

digits(<<>>, N) -> N;
digits(<<C, Rest/bits>>, N) when C >= $0, C =< $9 -> digits(Rest, N * 10 + C - $0);
digits(_, _) -> error.

%% Message body framing (RFC 9112 6): Transfer-Encoding and Content-Length
%% together are refused, as are differing Content-Length values.
request_body(Version, Headers) ->
	case Headers of
		#{<<"transfer-encoding">> := _, <<"content-length">> := _} ->
			?ERROR(400, 'A request must not have both Transfer-Encoding and Content-Length. (RFC9112 6.1)');
		#{<<"transfer-encoding">> := _} when Version =:= 'HTTP/1.0' ->
			?ERROR(400, 'Transfer-Encoding in an HTTP/1.0 request is refused. (RFC9112 6.1)');
		#{<<"transfer-encoding">> := TE} ->
			transfer_encoding(lower(TE));
		#{<<"content-length">> := CL} ->
			content_length(CL);
		_ ->
			{ok, none}
	end.

transfer_encoding(<<"chunked">>) ->
	{ok, chunked};
transfer_encoding(TE) ->
	Codings = [trim(C) || C <- binary:split(TE, <<",">>, [global])],
	case lists:last(Codings) of
		<<"chunked">> -> ?ERROR(501, 'Only the chunked transfer coding is implemented. (RFC9112 6.1)');
		_ -> ?ERROR(400, 'The chunked transfer coding must be the last one applied. (RFC9112 6.3)')
	end.

content_length(CL) ->
	case digits(CL, 0) of
		0 when byte_size(CL) > 0 -> {ok, none};
		N when is_integer(N), byte_size(CL) > 0, byte_size(CL) =< 19 -> {ok, {length, N}};
		_ ->
			%% "5, 5" is the same length sent twice (RFC 9110 8.6).
			case lists:usort([trim(V) || V <- binary:split(CL, <<",">>, [global])]) of
				[Single] when Single =/= CL -> content_length(Single);
				_ -> ?ERROR(400, 'The Content-Length must be one non-negative decimal number. (RFC9112 6.3)')
			end
	end.

%% Connection (RFC 9110 7.6.1): a list of connection options, which are
%% tokens; anything else is refused. close ends an HTTP/1.1 connection after
%% the response, keep-alive keeps an HTTP/1.0 one (RFC 9112 9.3).
keepalive(Version, #{<<"connection">> := Value}) ->
	case mustang_http_hd:parse_connection(Value) of
		{ok, Options} when Version =:= 'HTTP/1.1' ->
			{ok, not lists:member(<<"close">>, Options)};
		{ok, Options} ->
			{ok, lists:member(<<"keep-alive">>, Options)};
		{error, _} ->
			?ERROR(400, 'The Connection header must be a list of connection options (tokens). (RFC9110 7.6.1)')
	end;
keepalive('HTTP/1.1', _) ->
	{ok, true};
keepalive('HTTP/1.0', _) ->
	{ok, false}.

expect_continue('HTTP/1.1', Body, #{<<"expect">> := Expect}) when Body =/= none ->
	lower(Expect) =:= <<"100-continue">>;
expect_continue(_, _, _) ->
	false.

%% Chunked transfer coding (RFC 9112 7.1). decode_chunked/2 returns body bytes
%% as soon as they are decoded: a chunk is never waited for in whole. The
%% state only ever holds a partial chunk-size line or trailer section, and
%% the limits: the size of the trailer section, and the bytes of chunk
%% extensions (everything after the size on a chunk-size line) left for the
%% rest of the body. Extensions are bounded per line by the line's length,
%% and in total so that a client cannot stream megabytes of them in tiny
%% chunks.

-spec init_chunked(non_neg_integer(), non_neg_integer()) -> chunked_state().
init_chunked(MaxTrailers, MaxExtensions) ->
	{size, <<>>, {MaxTrailers, MaxExtensions}}.

-spec decode_chunked(binary(), chunked_state())
	-> {more, iodata(), chunked_state()}
	| {done, iodata(), binary()}
	| {error, {http_error, 400 | 431, atom()}}.
decode_chunked(Data, State) ->
	decode_chunked(Data, State, []).

decode_chunked(<<>>, State, Acc) ->
	{more, lists:reverse(Acc), State};
decode_chunked(Data, {data, Left, Lim}, Acc) ->
	Size = byte_size(Data),
	if
		Size < Left ->
			{more, lists:reverse([Data | Acc]), {data, Left - Size, Lim}};
		true ->
			<<Chunk:Left/binary, Rest/bits>> = Data,
			decode_chunked(Rest, {data_crlf, Lim}, [Chunk | Acc])
	end;
decode_chunked(<<"\r\n", Rest/bits>>, {data_crlf, Lim}, Acc) ->
	decode_chunked(Rest, {size, <<>>, Lim}, Acc);
decode_chunked(<<"\r">>, {data_crlf, Lim}, Acc) ->
	{more, lists:reverse(Acc), {data_lf, Lim}};
decode_chunked(<<"\n", Rest/bits>>, {data_lf, Lim}, Acc) ->
	decode_chunked(Rest, {size, <<>>, Lim}, Acc);
decode_chunked(_, {DataCrlf, _}, _) when DataCrlf =:= data_crlf; DataCrlf =:= data_lf ->
	?ERROR(400, 'Chunk data must be followed by CRLF. (RFC9112 7.1)');
decode_chunked(Data, {size, Partial, Lim = {MaxTrailers, ExtLeft}}, Acc) ->
	Line = case Partial of <<>> -> Data; _ -> <<Partial/binary, Data/binary>> end,
	case mustang_pattern:find(Line, crlf) of
		nomatch when byte_size(Line) > ?MAX_CHUNK_LINE + 1;
				byte_size(Line) =:= ?MAX_CHUNK_LINE + 1, binary_part(Line, byte_size(Line), -1) =/= <<"\r">> ->
			?ERROR(400, 'The chunk-size line is longer than 4096 bytes. (RFC9112 7.1.1)');
		nomatch ->
			{more, lists:reverse(Acc), {size, Line, Lim}};
		{Pos, 2} when Pos > ?MAX_CHUNK_LINE ->
			?ERROR(400, 'The chunk-size line is longer than 4096 bytes. (RFC9112 7.1.1)');
		{Pos, 2} ->
			Rest = binary:part(Line, Pos + 2, byte_size(Line) - Pos - 2),
			case chunk_size(binary:part(Line, 0, Pos), 0, 0) of
				{_, Ext} when Ext > ExtLeft ->
					?ERROR(400, 'The chunk extensions are longer in total than max_chunk_ext_length. (RFC9112 7.1.1)');
				{0, _} ->
					decode_chunked(Rest, {trailers, <<>>, 0, MaxTrailers}, Acc);
				{Size, Ext} ->
					decode_chunked(Rest, {data, Size, {MaxTrailers, ExtLeft - Ext}}, Acc);
				error ->
					?ERROR(400, 'The chunk-size line must be hex digits and valid chunk extensions. (RFC9112 7.1)')
			end
	end;
decode_chunked(Data, {trailers, Partial, Seen, Max}, Acc) ->
	Buf = case Partial of <<>> -> Data; _ -> <<Partial/binary, Data/binary>> end,
	skip_trailers(Buf, Seen, Max, Acc).

%% Trailer fields are skipped (not merged into headers: RFC 9110 6.5.1 lets
%% us discard them), up to Max bytes, until the empty line.
skip_trailers(<<"\r\n", Rest/bits>>, _, _, Acc) ->
	{done, lists:reverse(Acc), Rest};
skip_trailers(<<"\r">>, Seen, Max, Acc) ->
	{more, lists:reverse(Acc), {trailers, <<"\r">>, Seen, Max}};
skip_trailers(Buf, Seen, Max, Acc) ->
	case mustang_pattern:find(Buf, crlf) of
		nomatch when Seen + byte_size(Buf) > Max ->
			?ERROR(431, 'The trailer section is longer than max_trailer_length. (RFC6585 5)');
		nomatch ->
			{more, lists:reverse(Acc), {trailers, Buf, Seen, Max}};
		{Pos, 2} when Seen + Pos + 2 > Max ->
			?ERROR(431, 'The trailer section is longer than max_trailer_length. (RFC6585 5)');
		{Pos, 2} ->
			case valid_trailer(binary:part(Buf, 0, Pos)) of
				false -> ?ERROR(400, 'A trailer field line must be a valid field line. (RFC9112 7.1.2)');
				true -> skip_trailers(binary:part(Buf, Pos + 2, byte_size(Buf) - Pos - 2),
					Seen + Pos + 2, Max, Acc)
			end
	end.

%% A trailer field line is held to the same rules as a header line.
valid_trailer(Line) ->
	case mustang_pattern:find(Line, colon) of
		{Pos, 1} when Pos > 0 ->
			check_token(binary:part(Line, 0, Pos), false) =/= error
				andalso valid_value(binary:part(Line, Pos + 1, byte_size(Line) - Pos - 1));
		_ ->
			false
	end.

%% chunk-size [ chunk-ext ] (RFC 9112 7.1.1): hex digits, then extensions,
%% which are validated and ignored. Returns the size and the length of the
%% extensions.
chunk_size(_, _, Digits) when Digits > 15 -> error;
chunk_size(<<>>, _, 0) -> error;
chunk_size(<<>>, N, _) -> {N, 0};
chunk_size(<<C, Rest/bits>>, N, D) when C >= $0, C =< $9 -> chunk_size(Rest, N * 16 + C - $0, D + 1);
chunk_size(<<C, Rest/bits>>, N, D) when C >= $a, C =< $f -> chunk_size(Rest, N * 16 + C - $a + 10, D + 1);
chunk_size(<<C, Rest/bits>>, N, D) when C >= $A, C =< $F -> chunk_size(Rest, N * 16 + C - $A + 10, D + 1);
chunk_size(Ext = <<C, _/bits>>, N, D) when D > 0, (C =:= $; orelse C =:= $\s orelse C =:= $\t) ->
	case chunk_ext(Ext) of
		ok -> {N, byte_size(Ext)};
		error -> error
	end;
chunk_size(_, _, _) -> error.

%% chunk-ext = *( BWS ";" BWS ext-name [ BWS "=" BWS ext-val ] )
chunk_ext(<<>>) -> ok;
chunk_ext(<<C, Rest/bits>>) when C =:= $\s; C =:= $\t -> chunk_ext(Rest);
chunk_ext(<<$;, Rest/bits>>) ->
	case token_prefix(skip_ws(Rest), 0) of
		{0, _} -> error;
		{_, AfterName} ->
			case skip_ws(AfterName) of
				<<$=, Value/bits>> -> chunk_ext_value(skip_ws(Value));
				More -> chunk_ext(More)
			end
	end;
chunk_ext(_) -> error.

chunk_ext_value(<<$", Rest/bits>>) -> quoted_string(Rest);
chunk_ext_value(Value) ->
	case token_prefix(Value, 0) of
		{0, _} -> error;
		{_, More} -> chunk_ext(More)
	end.

quoted_string(<<$", Rest/bits>>) -> chunk_ext(Rest);
quoted_string(<<$\\, C, Rest/bits>>) when C >= 32, C =/= 127; C =:= $\t -> quoted_string(Rest);
quoted_string(<<C, Rest/bits>>) when C >= 32, C =/= 127, C =/= $\\; C =:= $\t -> quoted_string(Rest);
quoted_string(_) -> error.

token_prefix(<<C, Rest/bits>>, N) when ?IS_TOKEN(C) -> token_prefix(Rest, N + 1);
token_prefix(Rest, N) -> {N, Rest}.

skip_ws(<<C, Rest/bits>>) when C =:= $\s; C =:= $\t -> skip_ws(Rest);
skip_ws(Rest) -> Rest.
