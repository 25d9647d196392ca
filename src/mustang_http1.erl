%% The HTTP/1.1 connection process (RFC 9112). One per connection; it owns
%% the socket in {active, N} mode.
%%
%% By default the middlewares and the handler run inside this process
%% (request_process => false): HTTP/1.1 cannot multiplex, so a process per
%% request only adds message passing. mustang_req calls made by the handler
%% come back here through inline_command/1 and read or write the socket
%% directly. With request_process => true each request runs in its own
%% process and the same calls arrive as messages. See doc/internals/http1.md.
%%
%% Protocol options (defaults in parentheses):
%%   env (#{})                     middleware environment; `dispatch` for the router
%%   middlewares ([mustang_router, mustang_handler])
%%   request_process (false)       run each request in its own process
%%   active_n (100)                socket messages between {active, N} rearms
%%   dynamic_buffer ({1024, 131072}) bounds of the dynamic socket buffer, or false
%%   hibernate (false)             hibernate between requests
%%   idle_timeout (60000)          ms without data while a request is in progress
%%   request_timeout (5000)        ms to receive a complete request head, and ms
%%                                 a keep-alive connection may wait for the next one
%%   max_keepalive (1000)          requests per connection
%%   max_request_line_length (8000), max_method_length (32),
%%   max_header_name_length (64), max_header_value_length (4096),
%%   max_headers (100), max_empty_lines (5)
%%   max_skip_body_length (1000000) unread body discarded to keep the connection
%%   max_trailer_length (4096)     bytes of chunked trailers skipped
%%   linger_timeout (1000)         ms spent reading and discarding what the client
%%                                 still sends once we decided to close (RFC 9112 9.6)
%%   logger (logger)               module used for logs
-module(mustang_http1).

-export([init/5]).
-export([validate_opts/1]).
-export([inline_command/1]).

-export([defaults/0]).

%% Internal: process loop entry point.
-export([loop/2]).

-export([system_continue/3]).
-export([system_terminate/4]).
-export([system_code_change/4]).

-define(DEFAULTS, #{
	env => #{},
	middlewares => [mustang_router, mustang_handler],
	request_process => false,
	active_n => 100,
	dynamic_buffer => {1024, 131072},
	hibernate => false,
	idle_timeout => 60000,
	request_timeout => 5000,
	max_keepalive => 1000,
	max_skip_body_length => 1000000,
	max_trailer_length => 4096,
	linger_timeout => 1000,
	logger => logger
}).

-record(stream, {
	id :: pos_integer(),
	transport :: module(),
	socket :: mustang_transport:socket(),
	messages :: mustang_transport:messages(),
	version :: 'HTTP/1.1' | 'HTTP/1.0',
	head :: boolean(),
	%% Whether the connection stays open after this response.
	keepalive :: boolean(),
	%% Request body still to be read.
	body :: done | {length, pos_integer()} | {chunked, mustang_http1_codec:chunked_state()},
	%% 100 Continue still to be sent before the first body read.
	expect :: boolean(),
	%% Bytes received past the request head and not consumed yet.
	buffer :: binary(),
	%% Response progress.
	resp = none :: none | chunked | identity | close_delimited | done | {switch, module(), any()},
	dynbuf :: mustang_dynbuf:dynbuf() | undefined,
	active_n :: pos_integer(),
	%% How long a body read may wait for data, and how much unread body
	%% may be discarded to keep the connection.
	idle_timeout :: timeout(),
	max_skip :: non_neg_integer()
}).

-record(st, {
	parent :: pid(),
	ref :: mustang:ref(),
	transport :: module(),
	socket :: mustang_transport:socket(),
	messages :: mustang_transport:messages(),
	opts :: map(),
	limits :: mustang_http1_codec:limits(),
	%% Options read for every request, taken out of the options map once
	%% (a map lookup is a linear key scan).
	env :: map(),
	middlewares :: [module()],
	request_process :: boolean(),
	max_keepalive :: non_neg_integer() | infinity,
	request_timeout :: timeout(),
	idle_timeout :: timeout(),
	max_skip :: non_neg_integer(),
	max_trailer :: non_neg_integer(),
	hibernate :: boolean(),
	peer :: {inet:ip_address(), inet:port_number()} | undefined,
	sock :: {inet:ip_address(), inet:port_number()} | undefined,
	cert :: binary() | undefined,
	scheme :: binary(),
	%% HTTP/2 by prior knowledge or Upgrade: h2c (clear text only).
	h2c :: boolean(),
	%% Socket reading.
	active_n :: pos_integer(),
	dynbuf :: mustang_dynbuf:dynbuf() | undefined,
	%% Idle timeout: a periodic tick counts the ticks without data.
	idle_ticks = 0 :: non_neg_integer(),
	received = false :: boolean(),
	%% Request timeout: a lazily re-armed timer and the deadline it guards.
	req_deadline = undefined :: undefined | integer(),
	req_timer = undefined :: undefined | reference(),
	scan_from = 0 :: non_neg_integer(),
	%% The previous request's header section, parsed (keep-alive clients
	%% usually repeat it byte for byte).
	parse_cache = undefined :: mustang_http1_codec:cache(),
	requests = 0 :: non_neg_integer(),
	%% A request running in its own process (request_process => true).
	stream = undefined :: undefined | #stream{},
	child = undefined :: undefined | pid(),
	pending_read = undefined :: undefined | {reference(), pid(), non_neg_integer(), reference(), iodata(), non_neg_integer()},
	%% {active, N} not re-armed while a request process runs with much buffered.
	paused = false :: boolean(),
	%% Method and path of the request in flight, for log lines.
	req_info = {<<>>, <<>>} :: {binary(), binary()},
	%% The parent asked us to stop: finish the request in flight, then close.
	stopping = false :: boolean()
}).

%% Options.

-spec defaults() -> map().
defaults() ->
	?DEFAULTS.

%% The options of both protocols: a listener serves both.
-spec validate_opts(map()) -> ok | {error, any()}.
validate_opts(Opts) ->
	Known = maps:keys(?DEFAULTS) ++ maps:keys(mustang_http1_codec:default_limits())
		++ maps:keys(mustang_http2:defaults()),
	case maps:keys(maps:without(Known, Opts)) of
		[] -> validate_values(maps:to_list(Opts));
		Unknown -> {error, {unknown_protocol_options, Unknown}}
	end.

validate_values([]) -> ok;
validate_values([{Key, Value} | Rest]) ->
	case valid_value(Key, Value) of
		true -> validate_values(Rest);
		false -> {error, {invalid_protocol_option, Key, Value}}
	end.

valid_value(Key, V) when not is_map_key(Key, ?DEFAULTS) ->
	case mustang_http1_codec:default_limits() of
		#{Key := _} -> is_integer(V) andalso V >= 0;
		_ -> mustang_http2:validate_option(Key, V)
	end;
valid_value(env, V) -> is_map(V);
valid_value(middlewares, V) -> is_list(V) andalso lists:all(fun is_atom/1, V);
valid_value(request_process, V) -> is_boolean(V);
valid_value(hibernate, V) -> is_boolean(V);
valid_value(active_n, V) -> is_integer(V) andalso V > 0;
valid_value(dynamic_buffer, false) -> true;
valid_value(dynamic_buffer, {Min, Max}) -> is_integer(Min) andalso is_integer(Max) andalso Min > 0 andalso Max >= Min;
valid_value(logger, V) -> is_atom(V);
valid_value(max_keepalive, infinity) -> true;
valid_value(idle_timeout, infinity) -> true;
valid_value(request_timeout, infinity) -> true;
valid_value(_, V) -> is_integer(V) andalso V >= 0.

%% Connection start.

-spec init(pid(), mustang:ref(), module(), mustang_transport:socket(), map()) -> no_return().
init(Parent, Ref, Transport, Socket, Opts0) ->
	process_flag(trap_exit, true),
	Opts = maps:merge(?DEFAULTS, Opts0),
	Limits = maps:merge(mustang_http1_codec:default_limits(),
		maps:with(maps:keys(mustang_http1_codec:default_limits()), Opts)),
	#{active_n := ActiveN} = Opts,
	DynBuf = mustang_dynbuf:for_listener(Ref, maps:get(dynamic_buffer, Opts)),
	SockOpts = case mustang_dynbuf:size(DynBuf) of
		undefined -> [{active, ActiveN}];
		Size -> [{active, ActiveN}, {buffer, Size}]
	end,
	case {Transport:setopts(Socket, SockOpts), mustang_conn:socket_info(Transport, Socket)} of
		{ok, {ok, Peer, Sock, Cert}} ->
			St = #st{parent = Parent, ref = Ref, transport = Transport, socket = Socket,
				messages = Transport:messages(), opts = Opts, limits = Limits,
				env = maps:get(env, Opts), middlewares = maps:get(middlewares, Opts),
				request_process = maps:get(request_process, Opts),
				max_keepalive = maps:get(max_keepalive, Opts),
				request_timeout = maps:get(request_timeout, Opts),
				idle_timeout = maps:get(idle_timeout, Opts),
				max_skip = maps:get(max_skip_body_length, Opts),
				max_trailer = maps:get(max_trailer_length, Opts),
				hibernate = maps:get(hibernate, Opts),
				peer = Peer, sock = Sock, cert = Cert,
				scheme = case Transport:secure() of true -> <<"https">>; false -> <<"http">> end,
				h2c = not Transport:secure() andalso
					lists:member(http2, maps:get(protocols, Opts, [http2, http])),
				active_n = ActiveN, dynbuf = DynBuf},
			start_idle_tick(St),
			loop(wait_for_request(St), <<>>);
		_ ->
			%% The peer left before we could look at the socket.
			Transport:close(Socket),
			exit(normal)
	end.

start_idle_tick(#st{idle_timeout = infinity}) -> ok;
start_idle_tick(#st{idle_timeout = Timeout}) ->
	_ = erlang:send_after(max(1, Timeout div 10), self(), {?MODULE, idle_tick}),
	ok.

%% The request timeout is enforced with a deadline and at most one armed
%% timer: when the timer fires early (the deadline moved), it is re-armed for
%% the rest. Requests that arrive whole in one packet never touch a timer.
wait_for_request(St = #st{request_timeout = infinity}) ->
	St;
wait_for_request(St = #st{request_timeout = Timeout, req_timer = Timer}) ->
	Deadline = erlang:monotonic_time(millisecond) + Timeout,
	case Timer of
		undefined ->
			St#st{req_deadline = Deadline,
				req_timer = erlang:start_timer(Timeout, self(), request_timeout)};
		_ ->
			St#st{req_deadline = Deadline}
	end.

%% The process loop.

-spec loop(#st{}, binary()) -> no_return().
loop(St = #st{socket = Socket, messages = {OK, Closed, Error, Passive}, parent = Parent}, Buffer) ->
	receive
		{OK, Socket, Data} ->
			St2 = St#st{received = true, dynbuf = update_dynbuf(byte_size(Data), St)},
			case St#st.stream of
				undefined ->
					parse(St2, case Buffer of <<>> -> Data; _ -> <<Buffer/binary, Data/binary>> end);
				_ ->
					loop(stream_data(St2, Data), Buffer)
			end;
		{Passive, Socket} ->
			passive(St, Buffer);
		{Closed, Socket} ->
			terminate(St, closed);
		{Error, Socket, Reason} ->
			terminate(St, {socket_error, Reason});
		{?MODULE, idle_tick} ->
			idle_tick(St, Buffer);
		{timeout, Timer, request_timeout} when Timer =:= St#st.req_timer ->
			request_timeout(St#st{req_timer = undefined}, Buffer);
		{{Pid, _}, {Tag, From, Command}} when Pid =:= self(), is_reference(Tag) ->
			loop(process_command(St, Tag, From, Command), Buffer);
		{{Pid, _}, {cast, Command}} when Pid =:= self() ->
			loop(process_cast(St, Command), Buffer);
		{timeout, TRef, {read_period, Tag}} ->
			loop(read_period(St, TRef, Tag), Buffer);
		{'EXIT', Parent, _} ->
			stop_requested(St, Buffer);
		{'EXIT', Pid, Reason} when Pid =:= St#st.child ->
			child_exit(St, Reason, Buffer);
		{system, From, Request} ->
			sys:handle_system_msg(Request, From, Parent, ?MODULE, [], {St, Buffer});
		{'$gen_call', From, Call} ->
			supervisor_call(Call, From, St),
			loop(St, Buffer);
		{timeout, _, _} ->
			loop(St, Buffer);
		{'EXIT', _, _} ->
			loop(St, Buffer);
		Msg ->
			log(St, warning, "mustang_http1 ~p: unexpected message ~0p", [St#st.ref, Msg]),
			loop(St, Buffer)
	end.

%% While a request runs in its own process, stop reading once a lot of
%% pipelined data is buffered: the socket then does the back-pressure.
passive(St = #st{stream = #stream{buffer = StreamBuffer}}, Buffer)
		when byte_size(StreamBuffer) + byte_size(Buffer) > 1000000 ->
	loop(St#st{paused = true}, Buffer);
passive(St = #st{transport = Transport, socket = Socket, active_n = N}, Buffer) ->
	_ = Transport:setopts(Socket, [{active, N}]),
	loop(St, Buffer).

update_dynbuf(Size, #st{transport = Transport, socket = Socket, dynbuf = DynBuf}) ->
	mustang_dynbuf:update_socket(Size, DynBuf, Transport, Socket).

idle_tick(St = #st{received = true}, Buffer) ->
	start_idle_tick(St),
	loop(St#st{received = false, idle_ticks = 0}, Buffer);
idle_tick(St = #st{idle_ticks = Ticks}, _) when Ticks >= 9 ->
	terminate(St, idle_timeout);
idle_tick(St = #st{idle_ticks = 0, stream = undefined}, <<>>) ->
	%% A whole tick without data between requests: give back the heap grown
	%% while serving the last request (about 13 KiB down to 5 KiB per idle
	%% connection, bench/idle_memory.sh). Busy connections never get here.
	start_idle_tick(St),
	proc_lib:hibernate(?MODULE, loop, [St#st{idle_ticks = 1}, <<>>]);
idle_tick(St = #st{idle_ticks = Ticks}, Buffer) ->
	start_idle_tick(St),
	loop(St#st{idle_ticks = Ticks + 1}, Buffer).

request_timeout(St = #st{req_deadline = undefined}, Buffer) ->
	loop(St, Buffer);
request_timeout(St = #st{req_deadline = Deadline}, Buffer) ->
	case Deadline - erlang:monotonic_time(millisecond) of
		Left when Left > 0 ->
			loop(St#st{req_timer = erlang:start_timer(Left, self(), request_timeout)}, Buffer);
		_ when Buffer =:= <<>> ->
			%% Nothing of a new request arrived: close quietly, as keep-alive
			%% connections are expected to end this way.
			terminate(St, idle);
		_ ->
			error_response(St, 408, request_timeout)
	end.

%% Parsing requests.

parse(St = #st{requests = 0, h2c = true}, Buffer = <<"PRI * HTTP/2.0\r\n", _/bits>>) ->
	%% The HTTP/2 connection preface (RFC 9113 3.3, prior knowledge).
	switch_to_http2(St, #{buffer => Buffer});
parse(St = #st{scan_from = ScanFrom, limits = Limits, parse_cache = Cache}, Buffer) ->
	case mustang_http1_codec:parse_request(Buffer, ScanFrom, Limits, Cache) of
		{ok, Request, Rest, Cache2} ->
			handle_request(St#st{scan_from = 0, req_deadline = undefined, parse_cache = Cache2},
				Request, Rest);
		{more, ScanFrom2} ->
			St2 = case St#st.req_deadline of
				undefined -> wait_for_request(St);
				_ -> St
			end,
			loop(St2#st{scan_from = ScanFrom2}, Buffer);
		{error, 400, invalid_http_version} when St#st.requests =:= 0 ->
			%% Bytes that do not even name HTTP (such as an invalid HTTP/2
			%% preface) get no HTTP/1.1 response, which the peer could not
			%% read: the connection is closed (RFC 9113 3.4 wants that for a
			%% bad preface).
			case binary:match(Buffer, <<" HTTP/">>) of
				nomatch ->
					log(St, notice, "mustang ~p: ~s sent bytes that are not HTTP; closing",
						[St#st.ref, peer(St)]),
					terminate(St, {http_error, 400, not_http});
				_ ->
					error_response(St, 400, invalid_http_version)
			end;
		{error, Status, Reason} ->
			error_response(St, Status, Reason)
	end.

handle_request(St = #st{h2c = true}, Request = #{headers := #{<<"upgrade">> := _,
		<<"http2-settings">> := _}, body := none}, Rest) ->
	case h2c_upgrade(Request) of
		{ok, Settings} ->
			_ = (St#st.transport):send(St#st.socket,
				<<"HTTP/1.1 101 Switching Protocols\r\nconnection: Upgrade\r\nupgrade: h2c\r\n\r\n">>),
			switch_to_http2(St, #{buffer => Rest, upgrade => {h2_request(Request), Settings}});
		no ->
			handle_request1(St, Request, Rest)
	end;
handle_request(St, Request, Rest) ->
	handle_request1(St, Request, Rest).

handle_request1(St = #st{requests = Count}, Request, Rest) ->
	#{method := Method, version := Version, body := Body, keepalive := WantsKeepalive,
		expect_continue := Expect} = Request,
	StreamID = Count + 1,
	Keepalive = WantsKeepalive andalso not St#st.stopping
		andalso keepalive_allowed(StreamID, St#st.max_keepalive),
	Stream = #stream{
		id = StreamID,
		transport = St#st.transport,
		socket = St#st.socket,
		messages = St#st.messages,
		version = Version,
		head = Method =:= <<"HEAD">>,
		keepalive = Keepalive,
		body = case Body of
			none -> done;
			{length, N} -> {length, N};
			chunked -> {chunked, mustang_http1_codec:init_chunked(St#st.max_trailer)}
		end,
		expect = Expect,
		buffer = Rest,
		dynbuf = St#st.dynbuf,
		active_n = St#st.active_n,
		idle_timeout = St#st.idle_timeout,
		max_skip = St#st.max_skip
	},
	Mode = case St#st.request_process of true -> process; false -> inline end,
	Req = build_req(St, StreamID, Request, Mode),
	St2 = St#st{requests = StreamID},
	case St#st.request_process of
		true ->
			Pid = proc_lib:spawn_link(mustang_middleware, request_process,
				[Req, St#st.env, St#st.middlewares]),
			loop(St2#st{stream = Stream, child = Pid, req_info = {Method, maps:get(path, Request)}},
				<<>>);
		false ->
			put(mustang_stream, Stream),
			Result = mustang_middleware:run(Req, St#st.env, St#st.middlewares),
			request_done(St2, erase(mustang_stream), Result, Req)
	end.

%% Upgrade: h2c (RFC 7540 3.2; RFC 9113 drops it but curl and others still
%% use it): only for requests without a body, whose Connection header names
%% both Upgrade and HTTP2-Settings, with valid settings.
h2c_upgrade(#{headers := Headers = #{<<"http2-settings">> := Settings64}}) ->
	case mustang_http_hd:has_token(<<"upgrade">>, <<"h2c">>, Headers)
			andalso mustang_http_hd:has_token(<<"connection">>, <<"upgrade">>, Headers)
			andalso mustang_http_hd:has_token(<<"connection">>, <<"http2-settings">>, Headers) of
		true ->
			try base64:decode(pad64(<< <<(urlsafe(C))>> || <<C>> <= Settings64 >>)) of
				Payload ->
					Frame = <<(byte_size(Payload)):24, 4:8, 0:8, 0:32, Payload/binary>>,
					case mustang_http2_frame:parse(Frame, 16384) of
						{ok, {settings, Settings}, <<>>} -> {ok, Settings};
						_ -> no
					end
			catch _:_ ->
				no
			end;
		false ->
			no
	end.

%% base64url (RFC 4648 5); base64:decode/2 and its mode option need OTP 26.
urlsafe($-) -> $+;
urlsafe($_) -> $/;
urlsafe(C) -> C.

pad64(Bin) ->
	case byte_size(Bin) rem 4 of
		0 -> Bin;
		2 -> <<Bin/binary, "==">>;
		3 -> <<Bin/binary, "=">>;
		_ -> Bin
	end.

%% The request as mustang_http2 expects it, without the hop-by-hop fields.
h2_request(#{method := Method, path := Path, qs := Qs, host := Host, port := Port,
		headers := Headers}) ->
	#{method => Method, scheme => <<"http">>, authority => undefined, host => Host,
		port => Port, path => Path, qs => Qs, protocol => undefined,
		headers => maps:without([<<"connection">>, <<"upgrade">>, <<"http2-settings">>,
			<<"keep-alive">>, <<"te">>, <<"transfer-encoding">>], Headers),
		content_length => undefined}.

-spec switch_to_http2(#st{}, map()) -> no_return().
switch_to_http2(St = #st{req_timer = Timer}, Conn) ->
	_ = case Timer of undefined -> ok; _ -> erlang:cancel_timer(Timer) end,
	mustang_http2:init(St#st.parent, St#st.ref, St#st.transport, St#st.socket, St#st.opts,
		Conn#{dynbuf => St#st.dynbuf, peer => St#st.peer, sock => St#st.sock, cert => St#st.cert}).

keepalive_allowed(_, infinity) -> true;
keepalive_allowed(StreamID, Max) -> StreamID < Max.

%% Built once with every key it will have (the router's included), so that
%% later updates do not grow the map.
build_req(#st{ref = Ref, peer = Peer, sock = Sock, cert = Cert, scheme = Scheme0}, StreamID,
		#{method := Method, version := Version, path := Path, qs := Qs, host := Host,
			port := Port0, scheme := TargetScheme, headers := Headers, body := Body}, Mode) ->
	Scheme = case TargetScheme of undefined -> Scheme0; _ -> TargetScheme end,
	Port = case Port0 of
		undefined when Scheme =:= <<"https">> -> 443;
		undefined -> 80;
		_ -> Port0
	end,
	{HasBody, BodyLength} = case Body of
		none -> {false, 0};
		{length, N} -> {true, N};
		chunked -> {true, undefined}
	end,
	#{
		ref => Ref,
		pid => self(),
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
		path_info => undefined
	}.

%% After the handler: complete the response, discard the unread body, and
%% either read the next request or close.
request_done(St, #stream{resp = {switch, Module, Args}, buffer = Buffer, dynbuf = DynBuf}, ok, _) ->
	%% The handler upgraded the connection (Websocket): the protocol module
	%% takes the socket and this process over.
	_ = case St#st.req_timer of undefined -> ok; Timer -> erlang:cancel_timer(Timer) end,
	Module:takeover(St#st.parent, St#st.ref, St#st.transport, St#st.socket, St#st.opts, Buffer,
		DynBuf, Args);
request_done(St, Stream0, Result, Req) ->
	log_result(St, Result, Req),
	Stream1 = complete_response(Stream0, Result),
	Stream = case Stream1 of
		#stream{keepalive = true} -> skip_body(Stream1);
		_ -> Stream1
	end,
	St2 = resume_reading(St#st{dynbuf = Stream#stream.dynbuf, stream = undefined,
		child = undefined, pending_read = undefined}),
	case Stream of
		#stream{keepalive = true, resp = done} when not St#st.stopping ->
			next_request(St2, Stream#stream.buffer);
		_ ->
			terminate(St2, normal)
	end.

resume_reading(St = #st{paused = true, transport = Transport, socket = Socket, active_n = N}) ->
	_ = Transport:setopts(Socket, [{active, N}]),
	St#st{paused = false};
resume_reading(St) ->
	St.

next_request(St = #st{hibernate = true}, <<>>) ->
	proc_lib:hibernate(?MODULE, loop, [wait_for_request(St), <<>>]);
next_request(St, <<>>) ->
	loop(wait_for_request(St), <<>>);
next_request(St, Buffer) ->
	parse(St, Buffer).

log_result(_, ok, _) ->
	ok;
log_result(_, {crash, exit, {shutdown, _}, _}, _) ->
	%% The client went away while we were answering: nothing to report.
	ok;
log_result(St, {request_error, Reason, Text}, Req) ->
	log(St, notice, "mustang ~p: bad request ~s ~s from ~s: ~0p (~s)",
		[St#st.ref, maps:get(method, Req), maps:get(path, Req), peer(St), Reason, Text]);
log_result(St, {crash, Class, Reason, Stacktrace}, Req) ->
	log(St, error, "mustang ~p: handler crashed on ~s ~s from ~s: ~0p:~0p~n~p",
		[St#st.ref, maps:get(method, Req), maps:get(path, Req), peer(St), Class, Reason,
			Stacktrace]).

peer(#st{peer = {IP, Port}}) -> [inet:ntoa(IP), $:, integer_to_list(Port)];
peer(_) -> "unknown".

complete_response(Stream = #stream{resp = none}, ok) ->
	{_, Stream2} = command({response, 204, #{}, <<>>}, Stream),
	Stream2;
complete_response(Stream = #stream{resp = none}, {request_error, Reason, _}) ->
	{_, Stream2} = command({response, mustang_middleware:request_error_status(Reason), #{}, <<>>},
		Stream#stream{keepalive = false}),
	Stream2;
complete_response(Stream = #stream{resp = none}, {crash, _, _, _}) ->
	{_, Stream2} = command({response, 500, #{}, <<>>}, Stream#stream{keepalive = false}),
	Stream2;
complete_response(Stream = #stream{resp = chunked}, ok) ->
	{_, Stream2} = command({data, fin, <<>>}, Stream),
	Stream2;
complete_response(Stream = #stream{resp = done}, ok) ->
	Stream;
complete_response(Stream, _) ->
	%% A response cut short (crash mid-stream, identity body not finished, or
	%% close-delimited): only closing tells the client.
	Stream#stream{keepalive = false}.


%% Unread body: discard it when it is small enough, else close (RFC 9112 9.3).
%% A client that asked for 100-continue and was never told to continue may
%% not send the body at all: waiting for it would hang, so close.
skip_body(Stream0) ->
	case close_if_body_unskippable(Stream0) of
		Stream = #stream{body = done} -> Stream;
		Stream = #stream{keepalive = false} -> Stream;
		Stream = #stream{max_skip = Max, idle_timeout = Timeout} ->
			skip_body_loop(Stream, Max, Timeout)
	end.

skip_body_loop(Stream, Left, Timeout) ->
	case read_inline(Stream, Left + 1, Timeout, Timeout) of
		{fin, Data, Stream2} when Left >= 0 ->
			case iolist_size(Data) =< Left of
				true -> Stream2;
				false -> Stream2#stream{keepalive = false}
			end;
		{nofin, Data, Stream2} ->
			case Left - iolist_size(Data) of
				Left2 when Left2 >= 0 -> skip_body_loop(Stream2, Left2, Timeout);
				_ -> Stream2#stream{keepalive = false}
			end;
		{error, _, Stream2} ->
			Stream2#stream{keepalive = false}
	end.

%% Commands from mustang_req, inline mode.

-spec inline_command(any()) -> any().
inline_command(Command) ->
	case get(mustang_stream) of
		undefined ->
			error({mustang_req, inline_req_used_from_other_process});
		Stream = #stream{} ->
			{Result, Stream2} = inline_command(Command, Stream),
			put(mustang_stream, Stream2),
			Result
	end.

inline_command({read_body, Length, Period, Timeout}, Stream0) ->
	Stream = send_continue(Stream0),
	case read_inline(Stream, Length, Period, Timeout) of
		{error, Reason, Stream2} ->
			{{error, Reason}, Stream2#stream{keepalive = false}};
		{IsFin, Data, Stream2} ->
			{{IsFin, join(Data)}, Stream2}
	end;
inline_command(Command, Stream) ->
	command(Command, Stream).

%% Reads the body in the connection process: first what is buffered, then
%% socket messages, until Length bytes, the end of the body, or Period ms.
read_inline(Stream = #stream{body = done}, _, _, _) ->
	{fin, [], Stream};
read_inline(Stream = #stream{buffer = <<>>}, Length, Period, Timeout) ->
	Deadline = erlang:monotonic_time(millisecond) + Period,
	read_inline_loop(Stream, Length, Deadline, Timeout, [], 0);
read_inline(Stream = #stream{buffer = Buffer}, Length, Period, Timeout) ->
	case decode_body(Buffer, Stream#stream{buffer = <<>>}) of
		{ok, Data, Stream2 = #stream{body = done}} ->
			{fin, Data, Stream2};
		{ok, Data, Stream2} ->
			Size = iolist_size(Data),
			case Size >= Length of
				true ->
					{nofin, Data, Stream2};
				false ->
					Deadline = erlang:monotonic_time(millisecond) + Period,
					read_inline_loop(Stream2, Length, Deadline, Timeout, [Data], Size)
			end;
		{error, Reason} ->
			{error, Reason, Stream}
	end.

read_inline_loop(Stream = #stream{socket = Socket, transport = Transport,
		messages = {OK, Closed, Error, Passive}}, Length, Deadline, Timeout, Acc, Size) ->
	Wait = min(min(Timeout, Stream#stream.idle_timeout),
		max(0, Deadline - erlang:monotonic_time(millisecond))),
	receive
		{OK, Socket, Data} ->
			DynBuf = mustang_dynbuf:update_socket(byte_size(Data), Stream#stream.dynbuf,
				Transport, Socket),
			case decode_body(Data, Stream#stream{dynbuf = DynBuf}) of
				{ok, Decoded, Stream2 = #stream{body = done}} ->
					{fin, lists:reverse(Acc, [Decoded]), Stream2};
				{ok, Decoded, Stream2} ->
					Size2 = Size + iolist_size(Decoded),
					case Size2 >= Length of
						true -> {nofin, lists:reverse(Acc, [Decoded]), Stream2};
						false -> read_inline_loop(Stream2, Length, Deadline, Timeout,
							[Decoded | Acc], Size2)
					end;
				{error, Reason} ->
					{error, Reason, Stream}
			end;
		{Passive, Socket} ->
			_ = Transport:setopts(Socket, [{active, Stream#stream.active_n}]),
			read_inline_loop(Stream, Length, Deadline, Timeout, Acc, Size);
		{Closed, Socket} ->
			{error, closed, Stream};
		{Error, Socket, Reason} ->
			{error, Reason, Stream}
	after Wait ->
		case erlang:monotonic_time(millisecond) >= Deadline of
			true -> {nofin, lists:reverse(Acc), Stream};
			false -> {error, timeout, Stream}
		end
	end.

%% Body data as one binary. Most reads are a single socket message, returned
%% as is: joining copies, and for large bodies the copy is the main cost.
join(Data) when is_binary(Data) -> Data;
join([]) -> <<>>;
join([Data]) -> join(Data);
join([[], Data]) -> join(Data);
join(Data) -> iolist_to_binary(Data).

%% Decodes body bytes out of Data. Bytes past the end of the body stay in
%% the stream buffer for the next (pipelined) request.
decode_body(Data, Stream = #stream{body = done, buffer = Buffer}) ->
	{ok, [], Stream#stream{buffer = <<Buffer/binary, Data/binary>>}};
decode_body(Data, Stream = #stream{body = {length, Left}}) ->
	case Data of
		<<Body:Left/binary, Rest/bits>> ->
			{ok, Body, Stream#stream{body = done, buffer = Rest}};
		_ ->
			{ok, Data, Stream#stream{body = {length, Left - byte_size(Data)}}}
	end;
decode_body(Data, Stream = #stream{body = {chunked, State}}) ->
	case mustang_http1_codec:decode_chunked(Data, State) of
		{more, Decoded, State2} -> {ok, Decoded, Stream#stream{body = {chunked, State2}}};
		{done, Decoded, Rest} -> {ok, Decoded, Stream#stream{body = done, buffer = Rest}};
		{error, Status, Reason} -> {error, {Status, Reason}}
	end.

send_continue(Stream = #stream{expect = true, transport = Transport, socket = Socket}) ->
	_ = Transport:send(Socket, <<"HTTP/1.1 100 Continue\r\n\r\n">>),
	Stream#stream{expect = false};
send_continue(Stream) ->
	Stream.

%% Response commands, shared by both modes. Each writes with one send.

command({inform, Status, Headers}, Stream = #stream{version = 'HTTP/1.1', resp = none}) ->
	{send(Stream, [mustang_http1_codec:status_line('HTTP/1.1', Status),
		mustang_http1_codec:headers_to_iodata(headers_list(Headers)), <<"\r\n">>]), Stream};
command({inform, _, _}, Stream) ->
	%% HTTP/1.0 clients do not understand 1xx (RFC 9110 15.2).
	{ok, Stream};
command({switch_protocol, Headers, Module, Args}, Stream = #stream{resp = none}) ->
	{send(Stream, [mustang_http1_codec:status_line('HTTP/1.1', 101),
		mustang_http1_codec:headers_to_iodata(headers_list(Headers)), <<"\r\n">>]),
		Stream#stream{resp = {switch, Module, Args}}};
command({response, Status, Headers, Body}, Stream = #stream{resp = none}) ->
	send_response(Status, Headers, Body, close_if_body_unskippable(Stream));
command({headers, Status, Headers}, Stream = #stream{resp = none}) ->
	send_headers(Status, Headers, close_if_body_unskippable(Stream));
command({data, IsFin, _}, Stream = #stream{head = true, resp = Resp}) when Resp =/= none, Resp =/= done ->
	{ok, done_if(IsFin, Stream)};
command({data, IsFin, Data}, Stream = #stream{resp = chunked}) ->
	Last = case IsFin of fin -> [<<"0\r\n\r\n">>]; nofin -> [] end,
	case Data of
		{sendfile, Offset, Length, Path} ->
			Result = sendfile(Stream, [integer_to_binary(Length, 16), <<"\r\n">>],
				Offset, Length, Path, [<<"\r\n">> | Last]),
			{Result, done_if(IsFin, Stream)};
		_ ->
			{send(Stream, [mustang_http1_codec:chunk(Data) | Last]), done_if(IsFin, Stream)}
	end;
command({data, IsFin, Data}, Stream = #stream{resp = Resp})
		when Resp =:= identity; Resp =:= close_delimited ->
	Result = case Data of
		{sendfile, Offset, Length, Path} -> sendfile(Stream, [], Offset, Length, Path, []);
		_ -> send(Stream, Data)
	end,
	case {IsFin, Resp} of
		{fin, identity} -> {Result, Stream#stream{resp = done}};
		{fin, close_delimited} -> {Result, Stream#stream{resp = done, keepalive = false}};
		_ -> {Result, Stream}
	end;
command({trailers, Trailers}, Stream = #stream{resp = chunked, head = false}) ->
	{send(Stream, mustang_http1_codec:last_chunk(headers_list(Trailers))),
		Stream#stream{resp = done}};
command({trailers, _}, Stream = #stream{resp = chunked}) ->
	{ok, Stream#stream{resp = done}};
command({trailers, _}, Stream = #stream{resp = Resp}) when Resp =:= identity; Resp =:= close_delimited ->
	{ok, Stream#stream{resp = done}};
command(Command, Stream) ->
	{{error, {invalid_command, element(1, Command), Stream#stream.resp}}, Stream}.

%% When the response starts before the body was read, decide now whether the
%% connection can be kept, so the response head can say so: a body larger
%% than max_skip_body_length, or one the client was not yet told to send
%% (100-continue), is never waited for.
close_if_body_unskippable(Stream = #stream{body = done}) ->
	Stream;
close_if_body_unskippable(Stream = #stream{expect = true}) ->
	Stream#stream{keepalive = false};
close_if_body_unskippable(Stream = #stream{body = {length, N}, max_skip = Max}) when N > Max ->
	Stream#stream{keepalive = false};
close_if_body_unskippable(Stream) ->
	Stream.

done_if(fin, Stream) -> Stream#stream{resp = done};
done_if(nofin, Stream) -> Stream.

send_response(Status, Headers0, Body, Stream = #stream{head = Head}) ->
	BodyLength = case Body of
		{sendfile, _, Length, _} -> Length;
		_ -> iolist_size(Body)
	end,
	NoBody = mustang_http1_codec:no_body_status(Status),
	Headers1 = maps:remove(<<"transfer-encoding">>, Headers0),
	Headers = case NoBody of
		true -> maps:remove(<<"content-length">>, Headers1);
		false -> Headers1#{<<"content-length">> => integer_to_binary(BodyLength)}
	end,
	Stream2 = Stream#stream{resp = done},
	HeadIo = head(Status, Headers, Stream2),
	Result = case Body of
		_ when Head; NoBody -> send(Stream2, HeadIo);
		{sendfile, Offset, Length2, Path} -> sendfile(Stream2, HeadIo, Offset, Length2, Path, []);
		_ -> send(Stream2, [HeadIo, Body])
	end,
	{Result, Stream2}.

%% Streamed responses: chunked for HTTP/1.1 unless the handler gave a
%% content-length; for HTTP/1.0 without one, the end of the body is the end
%% of the connection.
send_headers(Status, Headers, Stream = #stream{version = Version}) ->
	{Resp, Headers2, Stream2} = case {mustang_http1_codec:no_body_status(Status), Headers, Version} of
		{true, _, _} ->
			{done, Headers, Stream};
		{false, #{<<"content-length">> := _}, _} ->
			{identity, Headers, Stream};
		{false, _, 'HTTP/1.1'} ->
			{chunked, Headers#{<<"transfer-encoding">> => <<"chunked">>}, Stream};
		{false, _, 'HTTP/1.0'} ->
			{close_delimited, Headers, Stream#stream{keepalive = false}}
	end,
	Stream3 = Stream2#stream{resp = Resp},
	{send(Stream3, head(Status, Headers2, Stream3)), Stream3}.

head(Status, Headers, #stream{version = Version, keepalive = Keepalive}) ->
	Connection = case {Version, Keepalive} of
		{'HTTP/1.1', true} -> [];
		{'HTTP/1.1', false} -> <<"connection: close\r\n">>;
		{'HTTP/1.0', true} -> <<"connection: keep-alive\r\n">>;
		{'HTTP/1.0', false} -> []
	end,
	Date = case Headers of
		#{<<"date">> := _} -> [];
		_ -> mustang_clock:date_header()
	end,
	%% A server answers with its own version (RFC 9110 2.5), whatever the client's.
	[mustang_http1_codec:status_line('HTTP/1.1', Status),
		mustang_http1_codec:headers_to_iodata(headers_list(maps:remove(<<"connection">>, Headers))),
		Date, Connection, <<"\r\n">>].

%% set-cookie may hold several values, each sent on its own line.
headers_list(Headers) ->
	maps:fold(fun
		(<<"set-cookie">>, Values, Acc) when is_list(Values), Values =/= [],
				not is_integer(hd(Values)) ->
			[{<<"set-cookie">>, V} || V <- Values] ++ Acc;
		(Name, Value, Acc) ->
			[{Name, Value} | Acc]
	end, [], Headers).

send(#stream{transport = Transport, socket = Socket}, Data) ->
	case Transport:send(Socket, Data) of
		ok -> ok;
		{error, Reason} -> {error, Reason}
	end.

sendfile(Stream = #stream{transport = Transport, socket = Socket}, Before, Offset, Length, Path, After) ->
	case send(Stream, Before) of
		ok when Length =:= 0 ->
			send(Stream, After);
		ok ->
			case Transport:sendfile(Socket, Path, Offset, Length) of
				{ok, _} -> send(Stream, After);
				{error, Reason} -> {error, Reason}
			end;
		Error ->
			Error
	end.

%% Process mode: commands arrive as messages from the request process.

process_command(St = #st{stream = undefined}, Tag, From, _) ->
	From ! {Tag, {error, no_stream}},
	St;
process_command(St = #st{stream = Stream0}, Tag, From, {read_body, Length, Period, _Timeout}) ->
	Stream = send_continue(Stream0),
	case Stream#stream.buffer of
		<<>> when Stream#stream.body =/= done ->
			start_pending_read(St#st{stream = Stream}, Tag, From, Length, Period, [], 0);
		Buffer ->
			case decode_body(Buffer, Stream#stream{buffer = <<>>}) of
				{ok, Data, Stream2 = #stream{body = done}} ->
					From ! {Tag, {fin, join(Data)}},
					St#st{stream = Stream2};
				{ok, Data, Stream2} ->
					Size = iolist_size(Data),
					case Size >= Length of
						true ->
							From ! {Tag, {nofin, join(Data)}},
							St#st{stream = Stream2};
						false ->
							start_pending_read(St#st{stream = Stream2}, Tag, From, Length, Period,
								[Data], Size)
					end;
				{error, Reason} ->
					From ! {Tag, {error, Reason}},
					St#st{stream = Stream#stream{keepalive = false}}
			end
	end;
process_command(St = #st{stream = Stream}, Tag, From, Command) ->
	{Result, Stream2} = command(Command, Stream),
	From ! {Tag, Result},
	St#st{stream = Stream2}.

%% Commands the request process does not wait for (whole responses, heads,
%% trailers, 1xx): a failed send shows up as the connection closing.
process_cast(St = #st{stream = undefined}, _) ->
	St;
process_cast(St = #st{stream = Stream}, Command) ->
	{_, Stream2} = command(Command, Stream),
	St#st{stream = Stream2}.

start_pending_read(St, Tag, From, Length, Period, Acc, Size) ->
	TRef = erlang:start_timer(Period, self(), {read_period, Tag}),
	St#st{pending_read = {Tag, From, Length, TRef, lists:reverse(Acc), Size}}.

%% Socket data while a request process runs: body for a pending read, or
%% bytes to keep for later.
stream_data(St = #st{stream = Stream, pending_read = undefined}, Data) ->
	Buffer = Stream#stream.buffer,
	St#st{stream = Stream#stream{buffer = <<Buffer/binary, Data/binary>>}};
stream_data(St = #st{stream = Stream, pending_read = {Tag, From, Length, TRef, Acc, Size}}, Data) ->
	case decode_body(Data, Stream) of
		{ok, Decoded, Stream2 = #stream{body = done}} ->
			_ = erlang:cancel_timer(TRef),
			From ! {Tag, {fin, join([Acc, Decoded])}},
			St#st{stream = Stream2, pending_read = undefined};
		{ok, Decoded, Stream2} ->
			Size2 = Size + iolist_size(Decoded),
			case Size2 >= Length of
				true ->
					_ = erlang:cancel_timer(TRef),
					From ! {Tag, {nofin, join([Acc, Decoded])}},
					St#st{stream = Stream2, pending_read = undefined};
				false ->
					St#st{stream = Stream2, pending_read = {Tag, From, Length, TRef, [Acc, Decoded], Size2}}
			end;
		{error, Reason} ->
			From ! {Tag, {error, Reason}},
			St#st{stream = Stream#stream{keepalive = false}, pending_read = undefined}
	end.

read_period(St = #st{pending_read = {Tag, From, _, TRef, Acc, _}}, TRef, Tag) ->
	From ! {Tag, {nofin, join(Acc)}},
	St#st{pending_read = undefined};
read_period(St, _, _) ->
	St.

child_exit(St = #st{stream = Stream}, Reason, Buffer) ->
	Result = case Reason of
		normal -> ok;
		{shutdown, {mustang_request, Error}} -> Error;
		Other -> {crash, exit, Other, []}
	end,
	%% Bytes that arrived while the request ran belong after its buffer.
	Stream2 = Stream#stream{buffer = <<(Stream#stream.buffer)/binary, Buffer/binary>>},
	{Method, Path} = St#st.req_info,
	request_done(St, Stream2, Result, #{method => Method, path => Path}).

%% Stopping.

stop_requested(St = #st{stream = undefined}, _) ->
	terminate(St, shutdown);
stop_requested(St, Buffer) ->
	%% A request is running in its own process: let it finish; request_done
	%% closes the connection because stopping is set.
	loop(St#st{stopping = true, stream = (St#st.stream)#stream{keepalive = false}}, Buffer).

supervisor_call(which_children, From, #st{child = Child}) when is_pid(Child) ->
	gen:reply(From, [{mustang_request, Child, worker, [?MODULE]}]);
supervisor_call(which_children, From, _) ->
	gen:reply(From, []);
supervisor_call(count_children, From, #st{child = Child}) ->
	N = case Child of undefined -> 0; _ -> 1 end,
	gen:reply(From, [{specs, 1}, {active, N}, {supervisors, 0}, {workers, N}]);
supervisor_call(_, From, _) ->
	gen:reply(From, {error, not_supported}).

-spec error_response(#st{}, 400..599, atom()) -> no_return().
error_response(St = #st{transport = Transport, socket = Socket}, Status, Reason) ->
	log(St, notice, "mustang ~p: ~b response to ~s: ~0p", [St#st.ref, Status, peer(St), Reason]),
	_ = Transport:send(Socket, [mustang_http1_codec:status_line('HTTP/1.1', Status),
		<<"content-length: 0\r\nconnection: close\r\n">>, mustang_clock:date_header(),
		<<"\r\n">>]),
	terminate(St, {http_error, Status, Reason}).

-spec terminate(#st{}, any()) -> no_return().
terminate(St = #st{transport = Transport, socket = Socket, child = Child}, Reason) ->
	case Child of
		undefined -> ok;
		_ -> exit(Child, kill)
	end,
	_ = Transport:shutdown(Socket, write),
	linger(St, Reason),
	Transport:close(Socket),
	exit(exit_reason(Reason)).

%% Closing a socket with unread data makes the kernel send a reset, which can
%% destroy the response before the client reads it. After our half-close, read
%% and discard what the client still sends until it closes or linger_timeout
%% passes (RFC 9112 9.6). Not when the peer is known to be gone.
linger(_, closed) -> ok;
linger(_, {socket_error, _}) -> ok;
%% Idle connections: the client is not sending anything.
linger(_, idle) -> ok;
linger(_, idle_timeout) -> ok;
linger(#st{stream = undefined}, shutdown) -> ok;
linger(#st{opts = #{linger_timeout := 0}}, _) -> ok;
linger(St = #st{opts = #{linger_timeout := Timeout}}, _) ->
	Deadline = erlang:monotonic_time(millisecond) + Timeout,
	linger_loop(St, Deadline).

linger_loop(St = #st{socket = Socket, transport = Transport,
		messages = {OK, Closed, Error, Passive}}, Deadline) ->
	Wait = max(0, Deadline - erlang:monotonic_time(millisecond)),
	receive
		{OK, Socket, _} -> linger_loop(St, Deadline);
		{Passive, Socket} ->
			_ = Transport:setopts(Socket, [{active, St#st.active_n}]),
			linger_loop(St, Deadline);
		{Closed, Socket} -> ok;
		{Error, Socket, _} -> ok
	after Wait ->
		ok
	end.

%% Ordinary endings are `normal` so that no crash report is written.
exit_reason(shutdown) -> shutdown;
exit_reason(_) -> normal.

log(#st{opts = #{logger := Logger}}, Level, Format, Args) ->
	_ = Logger:Level(Format, Args),
	ok.

%% sys callbacks.

-spec system_continue(pid(), [sys:debug_option()], {#st{}, binary()}) -> no_return().
system_continue(_, _, {St, Buffer}) ->
	loop(St, Buffer).

-spec system_terminate(any(), pid(), [sys:debug_option()], {#st{}, binary()}) -> no_return().
system_terminate(Reason, _, _, {St, _}) ->
	terminate(St, Reason).

-spec system_code_change(Misc, module(), any(), any()) -> {ok, Misc} when Misc :: {#st{}, binary()}.
system_code_change(Misc, _, _, _) ->
	{ok, Misc}.
