%% The request API: functions with the names, arities and meaning of Cowboy's
%% documented cowboy_req. The Req is a map with the documented keys.
%%
%% Calls that touch the connection (body reads, replies, streaming) go to the
%% stream handlers (mustang_stream) as infos, and work the same whether the
%% handler runs in the connection process (mode inline: they reach the stream
%% through mustang_inline) or in a process of its own (mode process: they are
%% messages to the connection), and from any process the handler gives its
%% Req to; see doc/internals/http1.md.
%%
%% Bad client input found here (invalid query string, header or urlencoded
%% body) ends the request with exit({request_error, Reason, Text}): the
%% connection answers 400 (408 for a body read timeout, 413 for a body too
%% large) if nothing was sent yet, and logs a line, not a crash report.
-module(mustang_req).

%% Request.
-export([method/1]).
-export([version/1]).
-export([scheme/1]).
-export([host/1]).
-export([host_info/1]).
-export([port/1]).
-export([path/1]).
-export([path_info/1]).
-export([qs/1]).
-export([parse_qs/1]).
-export([parse_qs/2]).
-export([match_qs/2]).
-export([match_qs/3]).
-export([uri/1]).
-export([uri/2]).
-export([binding/2]).
-export([binding/3]).
-export([bindings/1]).
-export([header/2]).
-export([header/3]).
-export([headers/1]).
-export([parse_header/2]).
-export([parse_header/3]).
-export([parse_cookies/1]).
-export([parse_cookies/2]).
-export([match_cookies/2]).
-export([match_cookies/3]).
-export([filter_cookies/2]).
-export([peer/1]).
-export([sock/1]).
-export([cert/1]).
-export([proxy_header/1]).

%% Request body.
-export([has_body/1]).
-export([body_length/1]).
-export([read_body/1]).
-export([read_body/2]).
-export([read_urlencoded_body/1]).
-export([read_urlencoded_body/2]).
-export([read_and_match_urlencoded_body/2]).
-export([read_and_match_urlencoded_body/3]).
-export([read_part/1]).
-export([read_part/2]).
-export([read_part_body/1]).
-export([read_part_body/2]).

%% Response.
-export([set_resp_cookie/3]).
-export([set_resp_cookie/4]).
-export([set_resp_header/3]).
-export([set_resp_headers/2]).
-export([has_resp_header/2]).
-export([resp_header/2]).
-export([resp_header/3]).
-export([resp_headers/1]).
-export([delete_resp_header/2]).
-export([set_resp_body/2]).
-export([has_resp_body/1]).
-export([inform/2]).
-export([inform/3]).
-export([reply/2]).
-export([reply/3]).
-export([reply/4]).
-export([stream_reply/2]).
-export([stream_reply/3]).
-export([stream_body/3]).
-export([stream_events/3]).
-export([stream_trailers/2]).
-export([push/3]).
-export([push/4]).

%% Stream handlers.
-export([cast/2]).

%% Connections.
-export([new/4]).
-export([with_proxy_header/2]).

-type req() :: #{
	method := binary(),
	version := 'HTTP/1.0' | 'HTTP/1.1' | 'HTTP/2',
	scheme := binary(),
	host := binary(),
	port := inet:port_number(),
	path := binary(),
	qs := binary(),
	headers := headers(),
	peer := {inet:ip_address(), inet:port_number()} | undefined,
	sock := {inet:ip_address(), inet:port_number()} | undefined,
	cert := binary() | undefined,
	ref := mustang:ref(),
	pid := pid(),
	streamid := pos_integer(),
	mode := inline | process,
	inline => undefined | mustang_inline:context(),
	has_body := boolean(),
	body_length := non_neg_integer() | undefined,
	bindings => bindings(),
	host_info => undefined | [binary()],
	path_info => undefined | [binary()],
	resp_headers => headers(),
	resp_cookies => #{iodata() => iodata()},
	resp_body => resp_body(),
	has_sent_resp => headers | true,
	atom() => any()
}.
-type headers() :: #{binary() => iodata()}.
-type bindings() :: #{atom() => any()}.
-type status() :: 100..999 | binary().
-type resp_body() :: iodata() | {sendfile, non_neg_integer(), non_neg_integer(), file:name_all()}.
-type read_body_opts() :: #{length => non_neg_integer() | infinity | auto, period => non_neg_integer(),
	timeout => timeout()}.
-type cookie_opts() :: map().
-type fields() :: mustang_constraints:fields().
-type event() :: #{comment => iodata(), data => iodata(), event => iodata() | atom(),
	id => iodata(), retry => non_neg_integer()}.
-export_type([req/0, fields/0, headers/0, bindings/0, status/0, resp_body/0, read_body_opts/0]).
-type read_part_opts() :: #{length => non_neg_integer(), period => non_neg_integer(),
	timeout => timeout(), max_part_header_length => non_neg_integer(),
	max_parts => non_neg_integer() | infinity}.
-type read_part_body_opts() :: #{length => non_neg_integer(), period => non_neg_integer(),
	timeout => timeout(), max_part_length => non_neg_integer() | infinity}.
-export_type([read_part_opts/0, read_part_body_opts/0]).

%% Request.

-spec method(req()) -> binary().
method(#{method := Method}) -> Method.

-spec version(req()) -> 'HTTP/1.0' | 'HTTP/1.1' | 'HTTP/2'.
version(#{version := Version}) -> Version.

-spec scheme(req()) -> binary().
scheme(#{scheme := Scheme}) -> Scheme.

-spec host(req()) -> binary().
host(#{host := Host}) -> Host.

-spec host_info(req()) -> undefined | [binary()].
host_info(Req) -> maps:get(host_info, Req, undefined).

-spec port(req()) -> inet:port_number().
port(#{port := Port}) -> Port.

-spec path(req()) -> binary().
path(#{path := Path}) -> Path.

-spec path_info(req()) -> undefined | [binary()].
path_info(Req) -> maps:get(path_info, Req, undefined).

-spec qs(req()) -> binary().
qs(#{qs := Qs}) -> Qs.

%% @doc The query string's key/value pairs in order (a key without "="
%% has the value true). An invalid query string ends the request with 400.
-spec parse_qs(req()) -> [{binary(), binary() | true}].
parse_qs(Req) -> parse_qs(Req, #{}).

%% @doc parse_qs/1 with options (Mustang's: Cowboy 2.13 has no parse_qs/2):
%% max_keys (infinity), the most pairs accepted; more end the request with
%% 400.
-spec parse_qs(req(), #{max_keys => non_neg_integer() | infinity}) -> [{binary(), binary() | true}].
parse_qs(#{qs := Qs}, Opts) ->
	case mustang_qs:parse_qs_limited(Qs, maps:get(max_keys, Opts, infinity)) of
		{ok, List} -> List;
		{error, Error = {value_error, _, Text}} ->
			exit({request_error, {parse_qs, Error}, Text})
	end.

%% @doc The fields of the query string, checked and converted by their
%% constraints, in a map (see match_qs/3).
-spec match_qs(fields(), req()) -> map().
match_qs(Fields, Req) -> match_qs(Fields, Req, #{}).

%% @doc The fields of the query string in a map: Fields are Name,
%% {Name, Constraints} or {Name, Constraints, Default}. A key given more
%% than once has the list of its values, in order, which the constraints
%% get whole (as in Cowboy: a constraint such as int refuses a repeated
%% key). A missing field without default, or a failed constraint, ends the
%% request with 400. Opts as for parse_qs/2.
-spec match_qs(fields(), req(), #{max_keys => non_neg_integer() | infinity}) -> map().
match_qs(Fields, Req, Opts) ->
	case mustang_constraints:match_fields(Fields, parse_qs(Req, Opts)) of
		{ok, Map} -> Map;
		{error, Errors} ->
			exit({request_error, {match_qs, Errors}, 'Query string validation failed.'})
	end.

-spec uri(req()) -> iodata().
uri(Req) -> uri(Req, #{}).

%% Builds the request URI; each part can be replaced or, with undefined,
%% left out (RFC 3986 5.3). The URI of an asterisk-form request (OPTIONS *,
%% whose path/1 is <<"*">>) has no path (RFC 9112 3.3).
-spec uri(req(), map()) -> iodata().
uri(#{scheme := Scheme0, host := Host0, port := Port0, path := Path0, qs := Qs0}, Opts) ->
	Scheme = maps:get(scheme, Opts, Scheme0),
	Host = maps:get(host, Opts, Host0),
	Port = maps:get(port, Opts, Port0),
	Path = case Opts of
		#{path := OptPath} -> OptPath;
		_ when Path0 =:= <<"*">> -> undefined;
		_ -> Path0
	end,
	Qs = maps:get(qs, Opts, Qs0),
	mustang_uri:build(Scheme, Host, Port, Path, Qs, maps:get(fragment, Opts, undefined)).

-spec binding(atom(), req()) -> any() | undefined.
binding(Name, Req) -> binding(Name, Req, undefined).

-spec binding(atom(), req(), Default) -> any() | Default.
binding(Name, Req, Default) when is_atom(Name) ->
	maps:get(Name, maps:get(bindings, Req, #{}), Default).

-spec bindings(req()) -> bindings().
bindings(Req) -> maps:get(bindings, Req, #{}).

-spec header(binary(), req()) -> binary() | undefined.
header(Name, Req) -> header(Name, Req, undefined).

-spec header(binary(), req(), Default) -> binary() | Default.
header(Name, #{headers := Headers}, Default) -> maps:get(Name, Headers, Default).

-spec headers(req()) -> headers().
headers(#{headers := Headers}) -> Headers.

-spec parse_header(binary(), req()) -> any().
parse_header(Name = <<"content-length">>, Req) -> parse_header(Name, Req, 0);
parse_header(Name = <<"cookie">>, Req) -> parse_header(Name, Req, []);
parse_header(Name, Req) -> parse_header(Name, Req, undefined).

-spec parse_header(binary(), req(), any()) -> any().
parse_header(Name, #{headers := Headers}, Default) ->
	case Headers of
		#{Name := Value} ->
			case mustang_http_hd:parse(Name, Value) of
				{ok, Parsed} -> Parsed;
				{error, Error = {value_error, _, Text}} ->
					exit({request_error, {header, Name, Error}, Text})
			end;
		_ ->
			Default
	end.

%% @doc The cookies of the request in order ([] without a cookie header).
%% An invalid cookie header ends the request with 400.
-spec parse_cookies(req()) -> [{binary(), binary()}].
parse_cookies(Req) -> parse_cookies(Req, #{}).

%% @doc parse_cookies/1 with options (Mustang's: Cowboy 2.13 has no
%% parse_cookies/2): max_keys (infinity), the most cookies accepted; more
%% end the request with 400.
-spec parse_cookies(req(), #{max_keys => non_neg_integer() | infinity}) -> [{binary(), binary()}].
parse_cookies(Req, Opts) ->
	Cookies = parse_header(<<"cookie">>, Req),
	case maps:get(max_keys, Opts, infinity) of
		Max when is_integer(Max), length(Cookies) > Max ->
			exit({request_error, {parse_cookies, too_many},
				'The cookie header has more cookies than max_keys allows. (Mustang max_keys)'});
		_ ->
			Cookies
	end.

%% @doc The cookies named by Fields, checked and converted by their
%% constraints, in a map (see match_cookies/3).
-spec match_cookies(fields(), req()) -> map().
match_cookies(Fields, Req) -> match_cookies(Fields, Req, #{}).

%% @doc As match_qs/3, for cookies: a cookie sent more than once has the
%% list of its values. Opts as for parse_cookies/2.
-spec match_cookies(fields(), req(), #{max_keys => non_neg_integer() | infinity}) -> map().
match_cookies(Fields, Req, Opts) ->
	case mustang_constraints:match_fields(Fields, parse_cookies(Req, Opts)) of
		{ok, Map} -> Map;
		{error, Errors} ->
			exit({request_error, {match_cookies, Errors}, 'Cookie validation failed.'})
	end.

%% @doc Keeps in the cookie header only the cookies named in Names (atoms or
%% binaries), before parse_cookies or match_cookies: cookies of other
%% applications on the same domain, which may not even parse, are dropped
%% without being parsed. Without a cookie header, the Req is returned as is;
%% when no cookie is left, the header is removed.
-spec filter_cookies([atom() | binary()], Req) -> Req when Req :: req().
filter_cookies(Names, Req = #{headers := Headers = #{<<"cookie">> := Value}}) ->
	case mustang_cookie:filter(Names, Value) of
		<<>> -> Req#{headers => maps:remove(<<"cookie">>, Headers)};
		Kept -> Req#{headers => Headers#{<<"cookie">> => Kept}}
	end;
filter_cookies(_, Req) ->
	Req.

-spec peer(req()) -> {inet:ip_address(), inet:port_number()} | undefined.
peer(#{peer := Peer}) -> Peer.

-spec sock(req()) -> {inet:ip_address(), inet:port_number()} | undefined.
sock(#{sock := Sock}) -> Sock.

-spec cert(req()) -> binary() | undefined.
cert(#{cert := Cert}) -> Cert.

%% The PROXY protocol header the connection started with (protocol option
%% proxy_header), as mustang_proxy_header:parse/1 returns it: the client's
%% address as the proxy saw it is in src_address and src_port, while peer/1
%% stays the proxy's. undefined when the option is off.
-spec proxy_header(req()) -> mustang_proxy_header:info() | undefined.
proxy_header(Req) -> maps:get(proxy_header, Req, undefined).

%% Request body.

-spec has_body(req()) -> boolean().
has_body(#{has_body := HasBody}) -> HasBody.

-spec body_length(req()) -> non_neg_integer() | undefined.
body_length(#{body_length := Length}) -> Length.

-spec read_body(req()) -> {ok, binary(), req()} | {more, binary(), req()}.
read_body(Req) -> read_body(Req, #{}).

%% Returns as soon as `length` bytes (default 8000000) were read, the body
%% ended, or `period` ms (default 15000) passed; with length auto, as soon
%% as some bytes arrived (Cowboy 2.11+). Call again while it returns `more`.
%% The first call sends 100 Continue when the client asked. Once a body of
%% unknown length (chunked, or HTTP/2 without content-length) is read to its
%% end, the Req returned has its body_length, a content-length header and
%% no transfer-encoding header, as if the length had been given.
-spec read_body(req(), read_body_opts()) -> {ok, binary(), req()} | {more, binary(), req()}.
read_body(Req = #{has_body := false}, _) ->
	{ok, <<>>, Req};
read_body(Req, Opts) ->
	Length = case maps:get(length, Opts, 8000000) of
		infinity -> 1 bsl 62;
		L -> L
	end,
	Period = maps:get(period, Opts, 15000),
	Timeout = maps:get(timeout, Opts, Period + 1000),
	case read_body_call(Req, Length, Period, Timeout) of
		{{fin, Data}, Req2} ->
			{ok, Data, count_body(Req2, Data, fin)};
		{{nofin, Data}, Req2} ->
			{more, Data, count_body(Req2, Data, nofin)};
		{{error, Reason}, _} ->
			exit({request_error, {read_body, Reason}, 'The request body could not be read.'})
	end.

%% Bytes read of a body of unknown length (key body_read) until it ends.
count_body(Req = #{body_length := undefined}, Data, IsFin) ->
	Read = maps:get(body_read, Req, 0) + byte_size(Data),
	case IsFin of
		nofin ->
			Req#{body_read => Read};
		fin ->
			Headers = maps:remove(<<"transfer-encoding">>, maps:get(headers, Req)),
			maps:remove(body_read, Req#{body_length => Read,
				headers => Headers#{<<"content-length">> => integer_to_binary(Read)}})
	end;
count_body(Req, _, _) ->
	Req.

read_body_call(Req = #{mode := inline}, Length, Period, Timeout) ->
	mustang_inline:info(Req, {read_body, self(), make_ref(), Length, Period}, Timeout);
read_body_call(Req = #{pid := Pid, streamid := StreamID}, Length, Period, Timeout) ->
	{read_body_wait(Pid, StreamID, Length, Period, Timeout), Req}.

read_body_wait(Pid, StreamID, Length, Period, Timeout) ->
	Ref = make_ref(),
	MRef = monitor(process, Pid),
	Pid ! {{Pid, StreamID}, {read_body, self(), Ref, Length, Period}},
	receive
		{request_body, Ref, IsFin, Data} ->
			demonitor(MRef, [flush]),
			{IsFin, Data};
		{request_body, Ref, Error} ->
			demonitor(MRef, [flush]),
			Error;
		{'DOWN', MRef, process, _, _} ->
			exit({shutdown, connection_closed})
	after Timeout ->
		demonitor(MRef, [flush]),
		{error, timeout}
	end.

-spec read_urlencoded_body(req()) -> {ok, [{binary(), binary() | true}], req()}.
read_urlencoded_body(Req) -> read_urlencoded_body(Req, #{}).

%% Reads the whole body (up to `length`, default 64000 bytes; larger bodies
%% give 413) and parses it, keeping at most `max_keys` pairs (default 1000).
-spec read_urlencoded_body(req(), read_body_opts() | #{max_keys => non_neg_integer() | infinity})
	-> {ok, [{binary(), binary() | true}], req()}.
read_urlencoded_body(Req, Opts) ->
	ReadOpts = maps:merge(#{length => 64000, period => 5000}, maps:without([max_keys], Opts)),
	MaxLength = maps:get(length, ReadOpts),
	case read_body(Req, ReadOpts) of
		{ok, Body, _} when is_integer(MaxLength), byte_size(Body) > MaxLength ->
			%% read_body/2 may return more than `length` when it was already
			%% buffered; this function's length is a hard limit.
			exit({request_error, {read_urlencoded_body, too_large},
				'The urlencoded body is larger than allowed.'});
		{ok, Body, Req2} ->
			case mustang_qs:parse_qs_limited(Body, maps:get(max_keys, Opts, 1000)) of
				{ok, List} -> {ok, List, Req2};
				{error, Error = {value_error, _, Text}} ->
					exit({request_error, {read_urlencoded_body, Error}, Text})
			end;
		{more, _, _} ->
			exit({request_error, {read_urlencoded_body, too_large},
				'The urlencoded body is larger than allowed.'})
	end.

-spec read_and_match_urlencoded_body(fields(), req()) -> {ok, map(), req()}.
read_and_match_urlencoded_body(Fields, Req) ->
	read_and_match_urlencoded_body(Fields, Req, #{}).

-spec read_and_match_urlencoded_body(fields(), req(), map()) -> {ok, map(), req()}.
read_and_match_urlencoded_body(Fields, Req, Opts) ->
	{ok, KVs, Req2} = read_urlencoded_body(Req, Opts),
	case mustang_constraints:match_fields(Fields, KVs) of
		{ok, Map} -> {ok, Map, Req2};
		{error, Errors} ->
			exit({request_error, {read_and_match_urlencoded_body, Errors},
				'Urlencoded body validation failed.'})
	end.

%% Multipart request bodies (RFC 7578, RFC 2046 5.1), read part by part with
%% mustang_multipart: read_part/1,2 returns the next part's headers (a map),
%% read_part_body/1,2 its body, as cowboy_req does. The parsing state is
%% kept in the Req (key multipart): use the Req each call returns.

%% @doc The headers of the next part, or done after the last one.
-spec read_part(req()) -> {ok, headers(), req()} | {done, req()}.
read_part(Req) -> read_part(Req, #{}).

%% @doc The headers of the next part, or done after the last one; the body
%% of the current part, if not read, is skipped. Options: those of
%% read_body/2 for each read (length 64000, period 5000), max_part_header_length
%% (64000: bytes of preamble and header section before a part's body) and
%% max_parts (1000: parts in the body). Past a limit the request ends with
%% 413; a body that is not multipart/* with a boundary, or not a valid
%% multipart body, with 400.
-spec read_part(req(), read_part_opts()) -> {ok, headers(), req()} | {done, req()}.
read_part(Req, Opts) ->
	ReadOpts = maps:merge(#{length => 64000, period => 5000}, maps:with([length, period, timeout], Opts)),
	Limits = {maps:get(max_part_header_length, Opts, 64000), maps:get(max_parts, Opts, 1000)},
	case multipart(Req) of
		MP = #{in := body} -> skip_part_body(Req, MP, ReadOpts, Limits);
		MP = #{in := headers} -> part_headers(Req, MP, ReadOpts, Limits, 0);
		#{in := done} -> {done, Req}
	end.

multipart(#{multipart := MP}) ->
	MP;
multipart(Req) ->
	Boundary = case parse_header(<<"content-type">>, Req) of
		{<<"multipart">>, _, Params} ->
			case lists:keyfind(<<"boundary">>, 1, Params) of
				{_, B} when byte_size(B) >= 1, byte_size(B) =< 70 -> B;
				_ -> undefined
			end;
		_ ->
			undefined
	end,
	case Boundary of
		undefined -> exit({request_error, {read_part, no_boundary},
			'The content-type must be multipart with a boundary of 1 to 70 characters. (RFC2046 5.1.1)'});
		_ -> #{boundary => Boundary, buffer => <<>>, in => headers, fin => false, parts => 0,
			part_length => 0}
	end.

part_headers(Req, MP = #{boundary := Boundary, buffer := Buffer}, ReadOpts, Limits, Seen) ->
	{MaxHeader, MaxParts} = Limits,
	case mustang_multipart:parse_headers(Buffer, Boundary) of
		{ok, _, _} when is_integer(MaxParts), map_get(parts, MP) >= MaxParts ->
			exit({request_error, {read_part, too_many_parts},
				'The multipart body has more parts than max_parts allows. (Mustang max_parts)'});
		{ok, _, Rest} when Seen + byte_size(Buffer) - byte_size(Rest) > MaxHeader ->
			part_header_too_large();
		{ok, Headers, Rest} ->
			{ok, maps:from_list(Headers), Req#{multipart => MP#{buffer => Rest, in => body,
				parts => map_get(parts, MP) + 1, part_length => 0}}};
		{done, _} ->
			{done, Req#{multipart => MP#{buffer => <<>>, in => done}}};
		{error, Error = {value_error, _, Text}} ->
			exit({request_error, {read_part, Error}, Text});
		More ->
			Keep = case More of more -> Buffer; {more, Rest} -> Rest end,
			Seen2 = Seen + byte_size(Buffer) - byte_size(Keep),
			_ = Seen2 + byte_size(Keep) > MaxHeader andalso part_header_too_large(),
			{Data, Req2, MP2} = read_more(Req, MP#{buffer => Keep}, ReadOpts),
			part_headers(Req2, MP2#{buffer => <<Keep/binary, Data/binary>>}, ReadOpts, Limits, Seen2)
	end.

-spec part_header_too_large() -> no_return().
part_header_too_large() ->
	exit({request_error, {read_part, too_large},
		'A multipart part header section is larger than max_part_header_length allows. (Mustang max_part_header_length)'}).

skip_part_body(Req, MP = #{boundary := Boundary, buffer := Buffer}, ReadOpts, Limits) ->
	case mustang_multipart:parse_body(Buffer, Boundary) of
		{done, _, Rest} ->
			part_headers(Req, MP#{buffer => Rest, in => headers}, ReadOpts, Limits, 0);
		{ok, _} ->
			{Data, Req2, MP2} = read_more(Req, MP, ReadOpts),
			skip_part_body(Req2, MP2#{buffer => Data}, ReadOpts, Limits);
		{ok, _, Rest} ->
			{Data, Req2, MP2} = read_more(Req, MP, ReadOpts),
			skip_part_body(Req2, MP2#{buffer => <<Rest/binary, Data/binary>>}, ReadOpts, Limits)
	end.

%% The next piece of the request body; its end before the close delimiter
%% is an error.
read_more(_, #{fin := true}, _) ->
	exit({request_error, {read_part, {value_error, 400,
		'A multipart body must end with the close delimiter. (RFC2046 5.1.1)'}},
		'A multipart body must end with the close delimiter. (RFC2046 5.1.1)'});
read_more(Req, MP, ReadOpts) ->
	case read_body(Req, ReadOpts) of
		{ok, Data, Req2} -> {Data, Req2, MP#{fin => true}};
		{more, Data, Req2} -> {Data, Req2, MP}
	end.

%% @doc The body of the current part (read_part_body/2 with the defaults).
-spec read_part_body(req()) -> {ok, binary(), req()} | {more, binary(), req()}.
read_part_body(Req) -> read_part_body(Req, #{}).

%% @doc The body of the current part: ok with its end, or more with at least
%% `length` bytes (default 8000000) when there is more to read. Options:
%% those of read_body/2 (length, period 15000) and max_part_length
%% (infinity: bytes of one part's body; past it the request ends with 413).
%% After the last piece, and before the first read_part/1,2, it returns
%% {ok, <<>>, Req}.
-spec read_part_body(req(), read_part_body_opts()) -> {ok, binary(), req()} | {more, binary(), req()}.
read_part_body(Req = #{multipart := MP = #{in := body}}, Opts) ->
	ReadOpts = maps:merge(#{length => 8000000, period => 15000}, maps:with([length, period, timeout], Opts)),
	part_body(Req, MP, ReadOpts, maps:get(max_part_length, Opts, infinity), []);
read_part_body(Req, _) ->
	{ok, <<>>, Req}.

part_body(Req, MP = #{boundary := Boundary, buffer := Buffer}, ReadOpts, Max, Acc) ->
	{Result, Data, Rest} = case mustang_multipart:parse_body(Buffer, Boundary) of
		{done, D, R} -> {done, D, R};
		{ok, D} -> {more, D, <<>>};
		{ok, D, R} -> {more, D, R}
	end,
	Length = map_get(part_length, MP) + byte_size(Data),
	_ = is_integer(Max) andalso Length > Max andalso exit({request_error, {read_part_body, too_large},
		'A multipart part body is larger than max_part_length allows. (Mustang max_part_length)'}),
	Acc2 = [Data | Acc],
	MP2 = MP#{part_length => Length},
	case Result of
		done ->
			{ok, join_parts(Acc2), Req#{multipart => MP2#{buffer => Rest, in => headers}}};
		more ->
			case iolist_size(Acc2) >= map_get(length, ReadOpts) of
				true ->
					{more, join_parts(Acc2), Req#{multipart => MP2#{buffer => Rest}}};
				false ->
					{More, Req2, MP3} = read_more(Req, MP2, ReadOpts),
					part_body(Req2, MP3#{buffer => <<Rest/binary, More/binary>>}, ReadOpts, Max, Acc2)
			end
	end.

join_parts(Acc) -> iolist_to_binary(lists:reverse(Acc)).

%% Response.

-spec set_resp_cookie(iodata(), iodata(), req()) -> req().
set_resp_cookie(Name, Value, Req) -> set_resp_cookie(Name, Value, Req, #{}).

-spec set_resp_cookie(iodata(), iodata(), req(), cookie_opts()) -> req().
set_resp_cookie(Name, Value, Req, Opts) ->
	Cookie = mustang_cookie:setcookie(Name, Value, Opts),
	Cookies = maps:get(resp_cookies, Req, #{}),
	Req#{resp_cookies => Cookies#{iolist_to_binary(Name) => Cookie}}.

-spec set_resp_header(binary(), iodata(), req()) -> req().
set_resp_header(<<"set-cookie">>, _, _) ->
	error({badarg, use_set_resp_cookie});
set_resp_header(Name, Value, Req) ->
	Headers = maps:get(resp_headers, Req, #{}),
	Req#{resp_headers => Headers#{Name => Value}}.

%% @doc Sets several response headers at once, from a map or (as Cowboy
%% 2.13 allows) a list of {Name, Value}; in a list, a later value of a
%% name replaces an earlier one.
-spec set_resp_headers(headers() | [{binary(), iodata()}], req()) -> req().
set_resp_headers(NewHeaders, Req) when is_list(NewHeaders) ->
	set_resp_headers(maps:from_list(NewHeaders), Req);
set_resp_headers(#{<<"set-cookie">> := _}, _) ->
	error({badarg, use_set_resp_cookie});
set_resp_headers(NewHeaders, Req) ->
	Req#{resp_headers => maps:merge(maps:get(resp_headers, Req, #{}), NewHeaders)}.

-spec has_resp_header(binary(), req()) -> boolean().
has_resp_header(Name, Req) -> maps:is_key(Name, maps:get(resp_headers, Req, #{})).

-spec resp_header(binary(), req()) -> iodata() | undefined.
resp_header(Name, Req) -> resp_header(Name, Req, undefined).

-spec resp_header(binary(), req(), Default) -> iodata() | Default.
resp_header(Name, Req, Default) -> maps:get(Name, maps:get(resp_headers, Req, #{}), Default).

-spec resp_headers(req()) -> headers().
resp_headers(Req) -> maps:get(resp_headers, Req, #{}).

-spec delete_resp_header(binary(), req()) -> req().
delete_resp_header(Name, Req = #{resp_headers := Headers}) ->
	Req#{resp_headers => maps:remove(Name, Headers)};
delete_resp_header(_, Req) ->
	Req.

-spec set_resp_body(resp_body(), req()) -> req().
set_resp_body(Body, Req) -> Req#{resp_body => Body}.

-spec has_resp_body(req()) -> boolean().
has_resp_body(#{resp_body := {sendfile, _, Length, _}}) -> Length > 0;
has_resp_body(#{resp_body := Body}) -> iolist_size(Body) > 0;
has_resp_body(_) -> false.

-spec inform(status(), req()) -> ok.
inform(Status, Req) -> inform(Status, #{}, Req).

%% 1xx informational response (RFC 9110 15.2), before the final one.
-spec inform(status(), headers(), req()) -> ok.
inform(_, _, #{has_sent_resp := _}) ->
	error(function_clause);
inform(Status, Headers, Req) ->
	check_status(Status),
	check_headers(Headers),
	_ = send_info(Req, {inform, Status, Headers}),
	ok.

-spec reply(status(), req()) -> req().
reply(Status, Req) -> reply(Status, #{}, Req).

-spec reply(status(), headers(), req()) -> req().
reply(Status, Headers, Req = #{resp_body := Body}) -> reply(Status, Headers, Body, Req);
reply(Status, Headers, Req) -> reply(Status, Headers, <<>>, Req).

%% Sends the whole response. Headers given here override those set with
%% set_resp_header/3; content-length is computed from the body.
-spec reply(status(), headers(), resp_body(), req()) -> req().
reply(_, _, _, #{has_sent_resp := _}) ->
	error({mustang_req, response_already_sent});
reply(Status, Headers0, Body, Req) ->
	check_status(Status),
	Headers = response_headers(Headers0, Req),
	Req2 = send_info(Req, {response, Status, Headers, Body}),
	Req2#{has_sent_resp => true}.

-spec stream_reply(status(), req()) -> req().
stream_reply(Status, Req) -> stream_reply(Status, #{}, Req).

%% Sends the status and headers; the body follows with stream_body/3 (chunked
%% on HTTP/1.1 unless a content-length header is given).
-spec stream_reply(status(), headers(), req()) -> req().
stream_reply(_, _, #{has_sent_resp := _}) ->
	error({mustang_req, response_already_sent});
stream_reply(Status, Headers0, Req) ->
	check_status(Status),
	Headers = response_headers(Headers0, Req),
	Req2 = send_info(Req, {headers, Status, Headers}),
	Req2#{has_sent_resp => headers}.

-spec stream_body(resp_body(), fin | nofin, req()) -> ok.
stream_body(Data, IsFin, Req = #{has_sent_resp := headers, mode := inline}) ->
	{Result, _} = mustang_inline:info(Req, {data, IsFin, Data}, infinity),
	ok(Result);
stream_body(Data, IsFin, #{has_sent_resp := headers, pid := Pid, streamid := StreamID}) ->
	%% The connection answers once the data is written, or queued within its
	%% limits: a handler streaming faster than the client reads is held back.
	Ref = make_ref(),
	MRef = monitor(process, Pid),
	Pid ! {{Pid, StreamID}, {data, IsFin, Data}},
	Pid ! {{Pid, StreamID}, {ack, self(), Ref}},
	receive
		{Ref, Result} ->
			demonitor(MRef, [flush]),
			ok(Result);
		{'DOWN', MRef, process, _, _} ->
			exit({shutdown, connection_closed})
	end;
stream_body(_, _, _) ->
	error({mustang_req, stream_reply_not_called}).

%% Server-sent events (text/event-stream, HTML Living Standard 9.2).
-spec stream_events(event() | [event()], fin | nofin, req()) -> ok.
stream_events(Event, IsFin, Req) when is_map(Event) ->
	stream_events([Event], IsFin, Req);
stream_events(Events, IsFin, Req) ->
	stream_body([event_to_iodata(E) || E <- Events], IsFin, Req).

event_to_iodata(Event) ->
	[
		case Event of
			#{comment := Comment} -> prefix_lines(Comment, <<":">>);
			_ -> []
		end,
		case Event of
			#{event := Name} when is_atom(Name) -> [<<"event: ">>, atom_to_binary(Name, utf8), $\n];
			#{event := Name} -> [<<"event: ">>, Name, $\n];
			_ -> []
		end,
		case Event of
			#{id := Id} -> [<<"id: ">>, Id, $\n];
			_ -> []
		end,
		case Event of
			#{retry := Retry} -> [<<"retry: ">>, integer_to_binary(Retry), $\n];
			_ -> []
		end,
		case Event of
			#{data := Data} -> prefix_lines(Data, <<"data: ">>);
			_ -> []
		end,
		$\n
	].

prefix_lines(IoData, Prefix) ->
	Lines = binary:split(iolist_to_binary(IoData), [<<"\r\n">>, <<"\r">>, <<"\n">>], [global]),
	[[Prefix, Line, $\n] || Line <- Lines].

-spec stream_trailers(headers(), req()) -> ok.
stream_trailers(Trailers, Req = #{has_sent_resp := headers}) ->
	check_headers(Trailers),
	_ = send_info(Req, {trailers, Trailers}),
	ok;
stream_trailers(_, _) ->
	error({mustang_req, stream_reply_not_called}).

%% Server push (RFC 9113 8.4): promises the client a response to a GET or
%% HEAD request for Path, which is then served like a request from the
%% client (router, handler, in its own process). Headers are the promised
%% request's headers. Opts may set method (<<"GET">>), scheme, host, port
%% (those of Req) and qs (<<>>). As with cowboy_req:push/3,4 it must come
%% before the response, and it is ignored over HTTP/1.1 and when the
%% client disabled push (SETTINGS_ENABLE_PUSH 0) or allows no more streams.
-spec push(iodata(), headers(), req()) -> ok.
push(Path, Headers, Req) -> push(Path, Headers, Req, #{}).

-spec push(iodata(), headers(), req(), #{method => binary(), scheme => binary(),
	host => binary(), port => inet:port_number(), qs => binary()}) -> ok.
push(_, _, #{has_sent_resp := _}, _) ->
	error(function_clause);
push(Path, Headers, Req = #{version := 'HTTP/2'}, Opts) ->
	Method = maps:get(method, Opts, <<"GET">>),
	case Method of
		<<"GET">> -> ok;
		<<"HEAD">> -> ok;
		%% RFC 9113 8.4: promised requests are safe and cacheable.
		_ -> error({mustang_req, {push_method_not_safe, Method}})
	end,
	check_headers(Headers),
	#{scheme := Scheme, host := Host, port := Port} = Req,
	_ = send_info(Req, {push, Method, maps:get(scheme, Opts, Scheme), maps:get(host, Opts, Host),
		maps:get(port, Opts, Port), iolist_to_binary(Path), maps:get(qs, Opts, <<>>), Headers}),
	ok;
push(_, _, _, _) ->
	ok.

response_headers(Headers0, Req) ->
	Headers1 = maps:merge(maps:get(resp_headers, Req, #{}), Headers0),
	check_headers(Headers1),
	case maps:get(resp_cookies, Req, #{}) of
		Cookies when map_size(Cookies) =:= 0 -> Headers1;
		Cookies -> Headers1#{<<"set-cookie">> => maps:values(Cookies)}
	end.

check_status(Status) when is_integer(Status), Status >= 100, Status =< 999 -> ok;
check_status(<<A, B, C, " ", Reason/bits>>) when A >= $1, A =< $9, B >= $0, B =< $9,
		C >= $0, C =< $9 ->
	case safe(Reason) of
		true -> ok;
		false -> error({invalid_status, Reason})
	end;
check_status(Status) ->
	error({invalid_status, Status}).

%% Handler bugs must not become response splitting: names and values with
%% CR, LF or NUL, and names with separators, are refused before anything is
%% sent, so the handler crashes and the client gets a 500.
check_headers(Headers) ->
	check_header_list(maps:to_list(Headers)).

check_header_list([]) ->
	ok;
check_header_list([{Name, Value} | Rest]) when is_binary(Name), Name =/= <<>> ->
	case valid_name(Name) andalso safe(Value) of
		true -> check_header_list(Rest);
		false -> error({invalid_response_header, Name, Value})
	end;
check_header_list([{Name, Value} | _]) ->
	error({invalid_response_header, Name, Value}).

valid_name(<<>>) -> true;
valid_name(<<C, Rest/bits>>) when C > 32, C < 127, C =/= $: -> valid_name(Rest);
valid_name(_) -> false.

safe(Value) when is_binary(Value) ->
	binary:match(Value, mustang_pattern:compiled(unsafe_value)) =:= nomatch;
safe(Value) ->
	safe(iolist_to_binary(Value)).

ok(ok) -> ok;
ok({error, closed}) -> exit({shutdown, {socket_error, closed}});
ok({error, Reason}) -> exit({shutdown, {socket_error, Reason}}).

%% The Req of a new stream, for connections: built here, in one place, with
%% every key it will have (the router's included), so that later updates do
%% not grow the map. Conn holds ref, pid, streamid, peer, sock, cert, mode
%% and the connection's scheme; Request what the protocol parsed (method,
%% version, host, port when the target gave one, path, qs, headers, and for
%% HTTP/2 scheme from :scheme and extended CONNECT protocol). An HTTP/1.1
%% request has the connection's scheme, whatever an absolute-form target
%% said (RFC 9112 3.3).
-spec new(map(), map(), boolean(), non_neg_integer() | undefined) -> req().
new(#{ref := Ref, pid := Pid, streamid := StreamID, peer := Peer, sock := Sock, cert := Cert,
		proxy_header := ProxyHeader, scheme := ConnScheme, mode := Mode},
		Request = #{method := Method, version := Version, host := Host, path := Path, qs := Qs,
			headers := Headers}, HasBody, BodyLength) ->
	Scheme = case maps:get(scheme, Request, undefined) of
		S = <<"http">> -> S;
		S = <<"https">> -> S;
		_ -> ConnScheme
	end,
	Port = case maps:get(port, Request, undefined) of
		undefined when Scheme =:= <<"https">> -> 443;
		undefined -> 80;
		P -> P
	end,
	Req = #{
		ref => Ref,
		pid => Pid,
		streamid => StreamID,
		peer => Peer,
		sock => Sock,
		cert => Cert,
		method => Method,
		version => Version,
		scheme => Scheme,
		host => Host,
		port => Port,
		path => Path,
		qs => Qs,
		headers => Headers,
		has_body => HasBody,
		body_length => BodyLength,
		mode => Mode,
		bindings => #{},
		host_info => undefined,
		path_info => undefined,
		%% The stream state of an inline request (mustang_inline).
		inline => undefined
	},
	Req2 = case maps:get(protocol, Request, undefined) of
		undefined -> Req;
		Protocol -> Req#{protocol => Protocol}
	end,
	with_proxy_header(Req2, ProxyHeader).

%% Req with the PROXY protocol header under proxy_header, as Cowboy's Req
%% has it; Req as it is when the connection had none (the option is off).
-spec with_proxy_header(Req, mustang_proxy_header:info() | undefined) -> Req when Req :: map().
with_proxy_header(Req, undefined) -> Req;
with_proxy_header(Req, ProxyHeader) -> Req#{proxy_header => ProxyHeader}.

%% Sends Msg to the stream handlers of Req's stream (their info/3), for
%% stream handlers of the application's own: for example
%% mustang_req:cast({set_options, #{metrics_user_data => Data}}, Req).
-spec cast(any(), req()) -> ok.
cast(Msg, Req = #{mode := inline}) ->
	_ = mustang_inline:info(Req, Msg, infinity),
	ok;
cast(Msg, #{pid := Pid, streamid := StreamID}) ->
	Pid ! {{Pid, StreamID}, Msg},
	ok.

%% A response part, for the stream handlers. In process mode it is a one-way
%% message (the connection handles messages in order, and the request
%% process' exit after them); body data is not sent this way, so that a
%% handler streaming faster than the client reads is held back.
send_info(Req = #{mode := inline}, Info) ->
	{Result, Req2} = mustang_inline:info(Req, Info, infinity),
	ok = ok(Result),
	Req2;
send_info(Req = #{pid := Pid, streamid := StreamID}, Info) ->
	Pid ! {{Pid, StreamID}, Info},
	Req.
