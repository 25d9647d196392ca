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

%% The Req: a map with the keys of Cowboy's Req. Read it with the functions
%% of this module; the keys marked `=>` appear after routing or with a
%% response. An application may add keys of its own (they are kept).
-type req() :: #{
	method := binary(),
	version := 'HTTP/1.0' | 'HTTP/1.1' | 'HTTP/2' | 'HTTP/3',
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
%% Headers in a map: lower-case names (binaries) to values.
-type headers() :: #{binary() => iodata()}.
%% The values a route bound, by name.
-type bindings() :: #{atom() => any()}.
%% A response status: an integer 100..999, or a binary with the status and
%% its reason phrase (`<<"404 Not Here">>`).
-type status() :: 100..999 | binary().
%% A response body: iodata, or `{sendfile, Offset, Length, Path}` for a part
%% of a file.
-type resp_body() :: iodata() | {sendfile, non_neg_integer(), non_neg_integer(), file:name_all()}.
%% The options of `read_body/2`: `length` (8000000 bytes, `infinity`, or
%% `auto`), `period` (15000 ms), `timeout` (`period` + 1000 ms).
-type read_body_opts() :: #{length => non_neg_integer() | infinity | auto, period => non_neg_integer(),
	timeout => timeout()}.
%% The options of `set_resp_cookie/4`: `max_age`, `domain`, `path`,
%% `secure`, `http_only`, `same_site`, `partitioned` (see
%% `mustang_cookie:cookie_opts()`).
-type cookie_opts() :: map().
-type fields() :: mustang_constraints:fields().
%% A server-sent event for `stream_events/3`: each key optional.
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

%% The request method, as the client sent it (case-sensitive, usually upper
%% case): `<<"GET">>`, `<<"POST">>`...
-spec method(req()) -> binary().
method(#{method := Method}) -> Method.

%% The HTTP version of the request: `'HTTP/1.0'`, `'HTTP/1.1'`, `'HTTP/2'` or
%% `'HTTP/3'`.
-spec version(req()) -> 'HTTP/1.0' | 'HTTP/1.1' | 'HTTP/2' | 'HTTP/3'.
version(#{version := Version}) -> Version.

%% `<<"http">>` or `<<"https">>`: the connection's (clear or TLS listener);
%% over HTTP/2, the request's `:scheme` when it is one of these two.
-spec scheme(req()) -> binary().
scheme(#{scheme := Scheme}) -> Scheme.

%% The host the request names (its Host header, its absolute-form target, or
%% HTTP/2's `:authority`), lower case, without the port: `<<"example.org">>`.
-spec host(req()) -> binary().
host(#{host := Host}) -> Host.

%% What the `[...]` at the left of the route's host pattern matched, as a
%% list of labels; `undefined` when the host pattern has no `[...]` (or
%% before routing).
-spec host_info(req()) -> undefined | [binary()].
host_info(Req) -> maps:get(host_info, Req, undefined).

%% The port the request names (Host header or `:authority`); 80 or 443, after
%% the scheme, when it names none. Not the listener's port when a proxy or
%% the client wrote another one.
-spec port(req()) -> inet:port_number().
port(#{port := Port}) -> Port.

%% The path of the request target, as sent (percent-encoded, without the query
%% string): `<<"/users/42">>`. `<<"*">>` for `OPTIONS *`.
-spec path(req()) -> binary().
path(#{path := Path}) -> Path.

%% What the `[...]` at the end of the route's path pattern matched, as a list
%% of percent-decoded segments (`/files/[...]` and `/files/a/b.txt`:
%% `[<<"a">>, <<"b.txt">>]`); `undefined` when the pattern has no `[...]` (or
%% before routing).
-spec path_info(req()) -> undefined | [binary()].
path_info(Req) -> maps:get(path_info, Req, undefined).

%% The query string, as sent (percent-encoded, without the `?`); `<<>>` when
%% there is none.
-spec qs(req()) -> binary().
qs(#{qs := Qs}) -> Qs.

%% The query string's key/value pairs, percent-decoded, in order; a key
%% without `=` has the value `true`, a key given twice appears twice:
%%
%%     %% ?a=1&b&a=2
%%     [{<<"a">>, <<"1">>}, {<<"b">>, true}, {<<"a">>, <<"2">>}] = mustang_req:parse_qs(Req)
%%
%% An invalid query string (bad percent-encoding) ends the request: the
%% process exits with `{request_error, {parse_qs, Error}, Text}`, the client
%% gets 400, and one line is logged at `debug`.
-spec parse_qs(req()) -> [{binary(), binary() | true}].
parse_qs(Req) -> parse_qs(Req, #{}).

%% `parse_qs/1` with options (Mustang's; Cowboy 2.13 has no `parse_qs/2`):
%% `max_keys` (default `infinity`), the most pairs accepted; a query string
%% with more ends the request with 400, as an invalid one does.
-spec parse_qs(req(), #{max_keys => non_neg_integer() | infinity}) -> [{binary(), binary() | true}].
parse_qs(#{qs := Qs}, Opts) ->
	case mustang_qs:parse_qs_limited(Qs, maps:get(max_keys, Opts, infinity)) of
		{ok, List} -> List;
		{error, Error = {value_error, _, Text}} ->
			exit({request_error, {parse_qs, Error}, Text})
	end.

%% The fields of the query string, checked and converted by their
%% constraints, in a map: `match_qs/3` with no options.
%%
%%     #{page := Page} = mustang_req:match_qs([{page, int, 1}], Req)
%%
%% A field that is missing without a default, or whose constraint fails, ends
%% the request with 400 (exit `{request_error, {match_qs, Errors},
%% 'Query string validation failed.'}`).
-spec match_qs(fields(), req()) -> map().
match_qs(Fields, Req) -> match_qs(Fields, Req, #{}).

%% The fields of the query string in a map: Fields are `Name`,
%% `{Name, Constraints}` or `{Name, Constraints, Default}` (see
%% `mustang_constraints`); keys of the query string not named are left out.
%% A key given more than once has the list of its values, in order, which the
%% constraints get whole (as in Cowboy: `int` refuses a repeated key). A key
%% without a value has the value `true`. A missing field without default, or
%% a failed constraint, ends the request with 400 (exit `{request_error,
%% {match_qs, Errors}, Text}`); Opts as for `parse_qs/2`.
-spec match_qs(fields(), req(), #{max_keys => non_neg_integer() | infinity}) -> map().
match_qs(Fields, Req, Opts) ->
	case mustang_constraints:match_fields(Fields, parse_qs(Req, Opts)) of
		{ok, Map} -> Map;
		{error, Errors} ->
			exit({request_error, {match_qs, Errors}, 'Query string validation failed.'})
	end.

%% The request's URI, built from its scheme, host, port (left out when it is
%% the scheme's default), path and query string: `uri(Req, #{})`.
%%
%%     <<"https://example.org/users/42?x=1">> = iolist_to_binary(mustang_req:uri(Req))
-spec uri(req()) -> iodata().
uri(Req) -> uri(Req, #{}).

%% The request's URI with parts replaced (the keys `scheme`, `host`, `port`,
%% `path`, `qs`, `fragment` of Opts) or, with the value `undefined`, left out
%% (RFC 3986 5.3). A port equal to the scheme's default is left out. The URI
%% of an asterisk-form request (`OPTIONS *`) has no path (RFC 9112 3.3).
%% Returns iodata:
%%
%%     %% A URI relative to the scheme, for a link: //example.org/users/42
%%     mustang_req:uri(Req, #{scheme => undefined, qs => undefined})
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

%% The value the route bound to Name (`:name` in the route's host or path),
%% converted by its constraints; `undefined` when there is none.
%%
%%     %% Route {"/users/:id", [{id, int}], user_h, []}, request /users/42
%%     42 = mustang_req:binding(id, Req)
-spec binding(atom(), req()) -> any() | undefined.
binding(Name, Req) -> binding(Name, Req, undefined).

%% The value the route bound to Name, or Default when there is none.
%% Name must be an atom (`function_clause` otherwise).
-spec binding(atom(), req(), Default) -> any() | Default.
binding(Name, Req, Default) when is_atom(Name) ->
	maps:get(Name, maps:get(bindings, Req, #{}), Default).

%% Every value the route bound, in a map by name (`#{}` before routing).
-spec bindings(req()) -> bindings().
bindings(Req) -> maps:get(bindings, Req, #{}).

%% The value of the request header Name (a lower-case binary), or
%% `undefined`. Repeated headers are joined with `", "` (cookies with
%% `"; "`).
%%
%%     <<"curl/8.0">> = mustang_req:header(<<"user-agent">>, Req)
-spec header(binary(), req()) -> binary() | undefined.
header(Name, Req) -> header(Name, Req, undefined).

%% The value of the request header Name (lower-case binary), or Default when
%% the request has none.
-spec header(binary(), req(), Default) -> binary() | Default.
header(Name, #{headers := Headers}, Default) -> maps:get(Name, Headers, Default).

%% Every request header in a map, lower-case names to values (repeated
%% headers joined with `", "`, cookies with `"; "`).
-spec headers(req()) -> headers().
headers(#{headers := Headers}) -> Headers.

%% The request header Name parsed (`mustang_http_hd:parse/2` lists the
%% headers and says how each one parses), or its default when the request has
%% none: 0 for `content-length`, `[]` for `cookie`, `undefined` for the
%% others.
%%
%%     [{{<<"text">>, <<"html">>, []}, 1000, []} | _] = mustang_req:parse_header(<<"accept">>, Req)
%%
%% A value that does not parse ends the request: the process exits with
%% `{request_error, {header, Name, Error}, Text}`, the client gets 400 (or the
%% status the error names) and a line is logged at `debug`. So does a header
%% that has no parser, when the request has it ("There is no parser for this
%% header."): read such headers with `header/2`.
-spec parse_header(binary(), req()) -> any().
parse_header(Name = <<"content-length">>, Req) -> parse_header(Name, Req, 0);
parse_header(Name = <<"cookie">>, Req) -> parse_header(Name, Req, []);
parse_header(Name, Req) -> parse_header(Name, Req, undefined).

%% `parse_header/2` with the value returned when the request has no such
%% header.
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

%% The cookies of the request, in order, as `{Name, Value}` binaries
%% (duplicates kept); `[]` without a cookie header. An invalid cookie header
%% ends the request with 400 (exit `{request_error, {header, <<"cookie">>,
%% Error}, Text}`); `filter_cookies/2` first drops the cookies of other
%% applications that may not parse.
-spec parse_cookies(req()) -> [{binary(), binary()}].
parse_cookies(Req) -> parse_cookies(Req, #{}).

%% `parse_cookies/1` with options (Mustang's: Cowboy 2.13 has no
%% `parse_cookies/2`): `max_keys` (`infinity`), the most cookies accepted;
%% more end the request with 400 (exit `{request_error, {parse_cookies,
%% too_many}, Text}`).
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

%% The cookies named by Fields, checked and converted by their constraints, in
%% a map: `match_cookies/3` with no options.
-spec match_cookies(fields(), req()) -> map().
match_cookies(Fields, Req) -> match_cookies(Fields, Req, #{}).

%% As `match_qs/3`, for cookies: Fields are `Name`, `{Name, Constraints}` or
%% `{Name, Constraints, Default}`, and a cookie sent more than once has the
%% list of its values. A missing cookie without default or a failed
%% constraint ends the request with 400 (exit `{request_error,
%% {match_cookies, Errors}, 'Cookie validation failed.'}`). Opts as for
%% `parse_cookies/2`.
%%
%%     #{session := Session} = mustang_req:match_cookies([{session, nonempty, <<>>}], Req)
-spec match_cookies(fields(), req(), #{max_keys => non_neg_integer() | infinity}) -> map().
match_cookies(Fields, Req, Opts) ->
	case mustang_constraints:match_fields(Fields, parse_cookies(Req, Opts)) of
		{ok, Map} -> Map;
		{error, Errors} ->
			exit({request_error, {match_cookies, Errors}, 'Cookie validation failed.'})
	end.

%% Keeps in the cookie header only the cookies named in Names (atoms or
%% binaries), before `parse_cookies` or `match_cookies`: cookies of other
%% applications on the same domain, which may not even parse, are dropped
%% without being parsed. Without a cookie header, the Req is returned as it
%% is; when no cookie is left, the header is removed. Use the Req it returns.
%%
%%     Req2 = mustang_req:filter_cookies([session, lang], Req),
%%     #{session := S} = mustang_req:match_cookies([session], Req2)
-spec filter_cookies([atom() | binary()], Req) -> Req when Req :: req().
filter_cookies(Names, Req = #{headers := Headers = #{<<"cookie">> := Value}}) ->
	case mustang_cookie:filter(Names, Value) of
		<<>> -> Req#{headers => maps:remove(<<"cookie">>, Headers)};
		Kept -> Req#{headers => Headers#{<<"cookie">> => Kept}}
	end;
filter_cookies(_, Req) ->
	Req.

%% The client's address and port: the socket's peer. Behind a proxy this is
%% the proxy; with the `proxy_header` option the client's own address is in
%% `proxy_header/1`.
-spec peer(req()) -> {inet:ip_address(), inet:port_number()} | undefined.
peer(#{peer := Peer}) -> Peer.

%% The local address and port of the connection (the listener's side).
-spec sock(req()) -> {inet:ip_address(), inet:port_number()} | undefined.
sock(#{sock := Sock}) -> Sock.

%% The client's certificate (DER binary) when the TLS listener asked for one
%% (`ssl`'s `verify` options) and the client sent it; `undefined` otherwise,
%% and always on a clear listener. `public_key:pkix_decode_cert(Der, otp)`
%% decodes it.
-spec cert(req()) -> binary() | undefined.
cert(#{cert := Cert}) -> Cert.

%% The PROXY protocol header the connection started with (protocol option
%% `proxy_header`), as `mustang_proxy_header:parse/1` returns it: the
%% client's address as the proxy saw it is in `src_address` and `src_port`,
%% while `peer/1` stays the proxy's. `undefined` when the option is off.
%% Mustang's: Cowboy keeps the same map under the Req's `proxy_header` key.
-spec proxy_header(req()) -> mustang_proxy_header:info() | undefined.
proxy_header(Req) -> maps:get(proxy_header, Req, undefined).

%% Request body.

%% Whether the request has a body (a content-length above 0, a chunked
%% transfer-encoding, or HTTP/2 DATA to come), read or not.
-spec has_body(req()) -> boolean().
has_body(#{has_body := HasBody}) -> HasBody.

%% The length of the request body in bytes, when known: from content-length,
%% or, once a body of unknown length (chunked, or HTTP/2 without
%% content-length) was read to its end, what was read. `undefined` while it is
%% unknown.
-spec body_length(req()) -> non_neg_integer() | undefined.
body_length(#{body_length := Length}) -> Length.

%% `read_body/2` with the default options (8000000 bytes or 15000 ms).
-spec read_body(req()) -> {ok, binary(), req()} | {more, binary(), req()}.
read_body(Req) -> read_body(Req, #{}).

%% Reads the request body: `{ok, Data, Req}` with its end, `{more, Data, Req}`
%% when there is more (call again with the new Req). Returns as soon as
%% `length` bytes (default 8000000; `infinity`; `auto`: as soon as some bytes
%% arrived, Cowboy 2.11+) were read, the body ended, or `period` ms (default
%% 15000) passed; `timeout` (default `period` + 1000) bounds the wait for the
%% connection. A request without a body gives `{ok, <<>>, Req}`.
%%
%% The first call sends `100 Continue` when the client asked for it. Once a
%% body of unknown length (chunked, or HTTP/2 without content-length) is read
%% to its end, the Req returned has its `body_length`, a content-length header
%% and no transfer-encoding header, as if the length had been given.
%%
%%     read_all(Req0, Acc) ->
%%         case mustang_req:read_body(Req0) of
%%             {ok, Data, Req} -> {ok, iolist_to_binary([Acc, Data]), Req};
%%             {more, Data, Req} -> read_all(Req, [Acc, Data])
%%         end.
%%
%% A body that cannot be read ends the request (exit `{request_error,
%% {read_body, Reason}, Text}`): 408 when it did not arrive in time or slower
%% than `min_recv_rate` (`timeout`, `too_slow`), 400 (or the status it names)
%% for an invalid chunked body. When the client closes the connection the
%% process exits with `{shutdown, connection_closed}`.
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

%% `read_urlencoded_body/2` with the default options.
-spec read_urlencoded_body(req()) -> {ok, [{binary(), binary() | true}], req()}.
read_urlencoded_body(Req) -> read_urlencoded_body(Req, #{}).

%% Reads the whole body and parses it as `application/x-www-form-urlencoded`:
%% `{ok, [{Key, Value | true}], Req}`, in order, percent-decoded. Options:
%% those of `read_body/2` (`length` 64000, `period` 5000) and `max_keys`
%% (1000). A body larger than `length` ends the request with 413 (exit
%% `{request_error, {read_urlencoded_body, too_large}, Text}`); a body that
%% does not parse, or has more than `max_keys` pairs, with 400.
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

%% `read_and_match_urlencoded_body/3` with the default options.
-spec read_and_match_urlencoded_body(fields(), req()) -> {ok, map(), req()}.
read_and_match_urlencoded_body(Fields, Req) ->
	read_and_match_urlencoded_body(Fields, Req, #{}).

%% Reads the urlencoded body (as `read_urlencoded_body/2`, with its options)
%% and matches its fields as `match_qs/3` does: `{ok, Map, Req}`. A missing
%% field without default or a failed constraint ends the request with 400
%% (exit `{request_error, {read_and_match_urlencoded_body, Errors}, Text}`).
%%
%%     {ok, #{name := Name, age := Age}, Req2} =
%%         mustang_req:read_and_match_urlencoded_body([name, {age, int}], Req)
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

%% The headers of the next part of a multipart body (a map, lower-case
%% names), or `done` after the last one: `read_part/2` with the default
%% options. See `read_part/2`.
-spec read_part(req()) -> {ok, headers(), req()} | {done, req()}.
read_part(Req) -> read_part(Req, #{}).

%% The headers of the next part of a multipart body (RFC 2046, RFC 7578), or
%% `{done, Req}` after the last one; the body of the current part, if not
%% read, is skipped. Use the Req it returns: it carries the parser's state.
%% Options: those of `read_body/2` for each read (`length` 64000, `period`
%% 5000), `max_part_header_length` (64000: bytes of preamble and header
%% section before a part's body) and `max_parts` (1000: parts in the body).
%%
%%     {ok, Headers, Req2} = mustang_req:read_part(Req),
%%     {file, <<"upload">>, Filename, _Type} = mustang_multipart:form_data(Headers)
%%
%% Past a limit the request ends with 413; a request whose content-type is not
%% `multipart/*` with a boundary of 1 to 70 characters, or a body that is not
%% valid multipart, ends with 400 (exit `{request_error, {read_part,
%% Reason}, Text}`). See the guide's multipart page.
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

%% The body of the current part, with the default options (`read_part_body/2`).
-spec read_part_body(req()) -> {ok, binary(), req()} | {more, binary(), req()}.
read_part_body(Req) -> read_part_body(Req, #{}).

%% The body of the current part: `{ok, Data, Req}` with its end, or
%% `{more, Data, Req}` with at least `length` bytes (default 8000000) when
%% there is more to read. Options: those of `read_body/2` (`length`, `period`
%% 15000) and `max_part_length` (`infinity`: bytes of one part's body over all
%% the calls; past it the request ends with 413). After the end of a part, and
%% before the first `read_part/1,2`, it returns `{ok, <<>>, Req}`.
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

%% `set_resp_cookie/4` with no options.
-spec set_resp_cookie(iodata(), iodata(), req()) -> req().
set_resp_cookie(Name, Value, Req) -> set_resp_cookie(Name, Value, Req, #{}).

%% Adds a `set-cookie` header to the response: Name and Value, then the
%% attributes of Opts: `max_age` (seconds; an `Expires` comes with it),
%% `domain`, `path` (binaries), `secure`, `http_only`, `partitioned`
%% (booleans), `same_site` (`default`, `none`, `strict`, `lax`). A second
%% cookie of the same name replaces the first. Returns the new Req; call it
%% before the reply.
%%
%%     Req2 = mustang_req:set_resp_cookie(<<"session">>, Id, Req,
%%         #{http_only => true, secure => true, path => <<"/">>, max_age => 3600})
%%
%% A name that is not a token, a value with `;`, `,`, spaces, quotes or
%% control characters, an attribute with `;` or a control character, or an
%% unknown option raises `error({invalid_cookie_name, Name})`,
%% `{invalid_cookie_value, Value}`, `{invalid_cookie_attribute, Key, Value}`
%% or `{invalid_cookie_option, Key, Value}` (a bug of the handler: the client
%% gets 500).
-spec set_resp_cookie(iodata(), iodata(), req(), cookie_opts()) -> req().
set_resp_cookie(Name, Value, Req, Opts) ->
	Cookie = mustang_cookie:setcookie(Name, Value, Opts),
	Cookies = maps:get(resp_cookies, Req, #{}),
	Req#{resp_cookies => Cookies#{iolist_to_binary(Name) => Cookie}}.

%% Sets a response header for the reply to come (a lower-case binary name; a
%% later value replaces an earlier one); returns the new Req. The headers
%% given to `reply` or `stream_reply` win over it. `set-cookie` raises
%% `error({badarg, use_set_resp_cookie})`: use `set_resp_cookie/3,4`. A name
%% or value that would break the response (CR, LF, NUL, a separator in the
%% name) is refused when the response is sent, with
%% `error({invalid_response_header, Name, Value})`.
-spec set_resp_header(binary(), iodata(), req()) -> req().
set_resp_header(<<"set-cookie">>, _, _) ->
	error({badarg, use_set_resp_cookie});
set_resp_header(Name, Value, Req) ->
	Headers = maps:get(resp_headers, Req, #{}),
	Req#{resp_headers => Headers#{Name => Value}}.

%% Sets several response headers at once, from a map or (as Cowboy 2.13
%% allows) a list of `{Name, Value}`; in a list, a later value of a name
%% replaces an earlier one. Returns the new Req. `set-cookie` raises
%% `error({badarg, use_set_resp_cookie})`.
-spec set_resp_headers(headers() | [{binary(), iodata()}], req()) -> req().
set_resp_headers(NewHeaders, Req) when is_list(NewHeaders) ->
	set_resp_headers(maps:from_list(NewHeaders), Req);
set_resp_headers(#{<<"set-cookie">> := _}, _) ->
	error({badarg, use_set_resp_cookie});
set_resp_headers(NewHeaders, Req) ->
	Req#{resp_headers => maps:merge(maps:get(resp_headers, Req, #{}), NewHeaders)}.

%% Whether a response header Name was set with `set_resp_header/3` or
%% `set_resp_headers/2`.
-spec has_resp_header(binary(), req()) -> boolean().
has_resp_header(Name, Req) -> maps:is_key(Name, maps:get(resp_headers, Req, #{})).

%% The value of the response header Name set so far, or `undefined`.
-spec resp_header(binary(), req()) -> iodata() | undefined.
resp_header(Name, Req) -> resp_header(Name, Req, undefined).

%% The value of the response header Name set so far, or Default.
-spec resp_header(binary(), req(), Default) -> iodata() | Default.
resp_header(Name, Req, Default) -> maps:get(Name, maps:get(resp_headers, Req, #{}), Default).

%% The response headers set so far, in a map.
-spec resp_headers(req()) -> headers().
resp_headers(Req) -> maps:get(resp_headers, Req, #{}).

%% Removes the response header Name set so far; returns the new Req.
-spec delete_resp_header(binary(), req()) -> req().
delete_resp_header(Name, Req = #{resp_headers := Headers}) ->
	Req#{resp_headers => maps:remove(Name, Headers)};
delete_resp_header(_, Req) ->
	Req.

%% Sets the body of the reply to come (`reply/2,3` send it): iodata, or
%% `{sendfile, Offset, Length, Path}` to send part of a file (with
%% `file:sendfile` over TCP; read and sent in pieces over TLS and HTTP/2).
%% Returns the new Req.
%%
%%     Req2 = mustang_req:set_resp_body({sendfile, 0, Size, "/srv/file.bin"}, Req),
%%     Req3 = mustang_req:reply(200, Req2)
-spec set_resp_body(resp_body(), req()) -> req().
set_resp_body(Body, Req) -> Req#{resp_body => Body}.

%% Whether a non-empty body was set with `set_resp_body/2`.
-spec has_resp_body(req()) -> boolean().
has_resp_body(#{resp_body := {sendfile, _, Length, _}}) -> Length > 0;
has_resp_body(#{resp_body := Body}) -> iolist_size(Body) > 0;
has_resp_body(_) -> false.

%% A 1xx informational response without headers: `inform/3`.
-spec inform(status(), req()) -> ok.
inform(Status, Req) -> inform(Status, #{}, Req).

%% Sends a 1xx informational response (RFC 9110 15.2), before the final one:
%% `103 Early Hints` with `link` headers, for example. Over HTTP/1.0 nothing
%% is sent. A `100 Continue` counts as the one `read_body/2` would send.
%% After the final response (`reply`, `stream_reply`) it raises
%% `function_clause`; a status outside 100..999 (or a binary that is not
%% `"NNN Reason"`) raises `error({invalid_status, Status})`.
%%
%%     ok = mustang_req:inform(103, #{<<"link">> => <<"</app.css>; rel=preload">>}, Req)
-spec inform(status(), headers(), req()) -> ok.
inform(_, _, #{has_sent_resp := _}) ->
	error(function_clause);
inform(Status, Headers, Req) ->
	check_status(Status),
	check_headers(Headers),
	_ = send_info(Req, {inform, Status, Headers}),
	ok.

%% Sends a response with the status, the headers set with `set_resp_header/3`
%% and the body set with `set_resp_body/2` (none if unset): `reply/4`.
-spec reply(status(), req()) -> req().
reply(Status, Req) -> reply(Status, #{}, Req).

%% Sends a response with the status and headers (merged over those set with
%% `set_resp_header/3`) and the body set with `set_resp_body/2` (none if
%% unset): `reply/4`.
-spec reply(status(), headers(), req()) -> req().
reply(Status, Headers, Req = #{resp_body := Body}) -> reply(Status, Headers, Body, Req);
reply(Status, Headers, Req) -> reply(Status, Headers, <<>>, Req).

%% Sends the whole response: status (100..999, or a binary such as
%% `<<"404 Not Here">>`), headers (lower-case names; they win over those set
%% with `set_resp_header/3`; cookies of `set_resp_cookie/4` are added), body
%% (iodata, or `{sendfile, Offset, Length, Path}`). content-length is computed
%% from the body; a `date` header is added. Returns the new Req, which
%% remembers that a response was sent; return it from the handler.
%%
%%     init(Req0, State) ->
%%         Req = mustang_req:reply(200, #{<<"content-type">> => <<"text/plain">>},
%%             <<"Hello world!">>, Req0),
%%         {ok, Req, State}.
%%
%% Raises (a bug of the handler; the client gets 500 if nothing was sent):
%% `error({mustang_req, response_already_sent})` for a second response,
%% `error({invalid_status, Status})`, `error({invalid_response_header, Name,
%% Value})` for a name or value with CR, LF or NUL or a name with a
%% separator. When the client is gone the process exits with `{shutdown,
%% {socket_error, Reason}}`.
-spec reply(status(), headers(), resp_body(), req()) -> req().
reply(_, _, _, #{has_sent_resp := _}) ->
	error({mustang_req, response_already_sent});
reply(Status, Headers0, Body, Req) ->
	check_status(Status),
	Headers = response_headers(Headers0, Req),
	Req2 = send_info(Req, {response, Status, Headers, Body}),
	Req2#{has_sent_resp => true}.

%% `stream_reply/3` without headers (those set with `set_resp_header/3`
%% still go).
-spec stream_reply(status(), req()) -> req().
stream_reply(Status, Req) -> stream_reply(Status, #{}, Req).

%% Sends the status and headers; the body follows with `stream_body/3` (or
%% `stream_events/3`), and may end with `stream_trailers/2`. Over HTTP/1.1 the
%% body is chunked unless a content-length header is given. Returns the new
%% Req, for the later calls. Raises as `reply/4` does.
%%
%%     Req = mustang_req:stream_reply(200, #{<<"content-type">> => <<"text/plain">>}, Req0),
%%     ok = mustang_req:stream_body(<<"one ">>, nofin, Req),
%%     ok = mustang_req:stream_body(<<"two">>, fin, Req)
-spec stream_reply(status(), headers(), req()) -> req().
stream_reply(_, _, #{has_sent_resp := _}) ->
	error({mustang_req, response_already_sent});
stream_reply(Status, Headers0, Req) ->
	check_status(Status),
	Headers = response_headers(Headers0, Req),
	Req2 = send_info(Req, {headers, Status, Headers}),
	Req2#{has_sent_resp => headers}.

%% Sends a piece of the body of a response started with `stream_reply/2,3`:
%% iodata, or `{sendfile, Offset, Length, Path}`; `fin` with the last piece.
%% Returns once the data is written or queued within the connection's limits
%% (HTTP/2: `stream_send_buffer_size`, `connection_send_buffer_size`), so a
%% handler streaming faster than the client reads is held back. Without
%% `stream_reply` first it raises `error({mustang_req,
%% stream_reply_not_called})`; when the client is gone the process exits with
%% `{shutdown, {socket_error, Reason}}` (or `{shutdown, connection_closed}`).
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

%% Sends server-sent events (`text/event-stream`, HTML Living Standard 9.2)
%% as `stream_body/3` does: one event map or a list of them, with the keys
%% `data`, `event` (iodata or atom), `id`, `retry` (ms) and `comment`, each
%% optional; multi-line data and comments are split into lines. Start the
%% response with `stream_reply/3` and content-type `text/event-stream`.
%%
%%     ok = mustang_req:stream_events(#{event => update, id => <<"7">>, data => Json}, nofin, Req)
%%
%% Errors as `stream_body/3`.
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

%% Ends a streamed response (`stream_reply/2,3`) with trailers, as a map.
%% Over HTTP/1.1 they are sent only to a client whose `te` header names
%% `trailers` (RFC 9110 6.5.1), otherwise the body just ends; HTTP/2 always
%% sends them. Without `stream_reply` first it raises `error({mustang_req,
%% stream_reply_not_called})`; invalid names or values raise
%% `error({invalid_response_header, Name, Value})`.
-spec stream_trailers(headers(), req()) -> ok.
stream_trailers(Trailers, Req = #{has_sent_resp := headers}) ->
	check_headers(Trailers),
	_ = send_info(Req, {trailers, Trailers}),
	ok;
stream_trailers(_, _) ->
	error({mustang_req, stream_reply_not_called}).

%% Server push with the default options: `push/4`.
-spec push(iodata(), headers(), req()) -> ok.
push(Path, Headers, Req) -> push(Path, Headers, Req, #{}).

%% Server push (RFC 9113 8.4): promises the client a response to a GET or
%% HEAD request for Path, which is then served like a request from the
%% client (router, handler, in its own process). Headers are the promised
%% request's headers. Opts may set `method` (`<<"GET">>` or `<<"HEAD">>`),
%% `scheme`, `host`, `port` (those of Req) and `qs` (`<<>>`). As with
%% `cowboy_req:push/3,4` it must come before the response, and it is ignored
%% (still `ok`) over HTTP/1.1 and when the client disabled push
%% (`SETTINGS_ENABLE_PUSH` 0) or allows no more streams.
%%
%%     ok = mustang_req:push("/static/app.css", #{<<"accept">> => <<"text/css">>}, Req)
%%
%% After the response it raises `function_clause`; another method raises
%% `error({mustang_req, {push_method_not_safe, Method}})`; invalid headers
%% raise `error({invalid_response_header, Name, Value})`.
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

%% @private The Req of a new stream, for connections: built here, in one
%% place, with every key it will have (the router's included), so that later
%% updates do not grow the map. Conn holds ref, pid, streamid, peer, sock,
%% cert, mode and the connection's scheme, and alt_svc when the listener has
%% it; Request what the protocol parsed (method, version, host, port when the
%% target gave one, path, qs, headers, and for HTTP/2 scheme from :scheme and
%% extended CONNECT protocol). An HTTP/1.1 request has the connection's
%% scheme, whatever an absolute-form target said (RFC 9112 3.3).
-spec new(map(), map(), boolean(), non_neg_integer() | undefined) -> req().
new(Conn = #{ref := Ref, pid := Pid, streamid := StreamID, peer := Peer, sock := Sock,
		cert := Cert, proxy_header := ProxyHeader, scheme := ConnScheme, mode := Mode},
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
	%% The listener's alt_svc option (RFC 7838): a response header of every
	%% request, as if the handler had set it (it may change or remove it).
	Req3 = case Conn of
		#{alt_svc := AltSvc} when is_binary(AltSvc) -> Req2#{resp_headers => #{<<"alt-svc">> => AltSvc}};
		_ -> Req2
	end,
	with_proxy_header(Req3, ProxyHeader).

%% @private Req with the PROXY protocol header under proxy_header, as
%% Cowboy's Req has it; Req as it is when the connection had none (the option
%% is off).
-spec with_proxy_header(Req, mustang_proxy_header:info() | undefined) -> Req when Req :: map().
with_proxy_header(Req, undefined) -> Req;
with_proxy_header(Req, ProxyHeader) -> Req#{proxy_header => ProxyHeader}.

%% Sends Msg to the stream handlers of Req's stream (their `info/3`), from the
%% request handler, for stream handlers of the application's own or the
%% options of those of Mustang:
%%
%%     ok = mustang_req:cast({set_options, #{metrics_user_data => #{user => Id}}}, Req)
%%
%% Never fails; a message no stream handler knows is passed down the chain
%% and dropped by `mustang_stream_h`.
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
