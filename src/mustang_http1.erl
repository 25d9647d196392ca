%% The HTTP/1.1 connection process (RFC 9112). One per connection; it owns
%% the socket in {active, N} mode.
%%
%% Every request goes through the stream handlers of the `stream_handlers'
%% option (mustang_stream; default [mustang_stream_h]), whose commands are
%% carried out on the socket by mustang_http1_stream. By default
%% mustang_stream_h runs the middlewares and the handler inside this process
%% (request_process => false): HTTP/1.1 cannot multiplex, so a process per
%% request only adds message passing; the handler's mustang_req calls then
%% reach the stream through mustang_inline. With request_process => true each
%% request runs in its own process and the same calls arrive as messages.
%% See doc/internals/http1.md.
%%
%% Protocol options (defaults in parentheses):
%%   env (#{})                     middleware environment; `dispatch` for the router
%%   middlewares ([mustang_router, mustang_handler])
%%   request_process (false)       run each request in its own process
%%   active_n (100)                socket messages between {active, N} rearms
%%   adaptive_active (true)        {active, 1} between requests while the run
%%                                 queues are empty (gen_tcp only, not Websocket:
%%                                 mustang_conn_chores:rearm_idle/3)
%%   dynamic_buffer ({1024, 131072}) bounds of the dynamic socket buffer, or false
%%   hibernate (false)             hibernate between requests
%%   hibernate_after (1000)        ms without data after which an idle connection
%%                                 hibernates (within twice that), or infinity
%%   idle_timeout (60000)          ms without data while a request is in progress
%%   request_timeout (5000)        ms to receive a complete request head, and ms
%%                                 a keep-alive connection may wait for the next one
%%   max_keepalive (1000)          requests per connection
%%   max_request_line_length (8000), max_method_length (32),
%%   max_header_name_length (64), max_header_value_length (4096),
%%   max_headers (100), max_empty_lines (5)
%%   max_skip_body_length (1000000) unread body discarded to keep the connection
%%   max_trailer_length (4096)     bytes of chunked trailers skipped
%%   min_recv_rate ({1024, 30000}) a request body must bring at least Bytes in
%%                                 every Ms ({Bytes, Ms}), else 408 and close;
%%                                 or off
%%   max_chunk_ext_length (1048576) bytes of chunk extensions in a whole chunked
%%                                 body (past it: 400 and close; RFC 9112 7.1.1)
%%   linger_timeout (1000)         ms spent reading and discarding what the client
%%                                 still sends once we decided to close (RFC 9112 9.6)
%%   logger (logger)               module used for logs
%% (mustang_opts validates them, with the HTTP/2 and stream handler options)
%%   stream_handlers ([mustang_stream_h]) the stream handler chain
-module(mustang_http1).

-export([init/6]).

-export([defaults/0]).
-export([conn_opts/1]).

-type opts() :: mustang_opts:http1_opts().
-export_type([opts/0]).

%% Internal: process loop entry point.
-export([loop/2]).

-export([system_continue/3]).
-export([system_terminate/4]).
-export([system_code_change/4]).

%% Bytes kept unread while a request process runs before reading pauses.
-define(MAX_BUFFERED, 1000000).

%% When the listener drains, a keep-alive connection with no request in
%% flight closes unless a request comes within this many ms: a client that
%% was just told keep-alive may already be sending its next request, which
%% a close would lose (the client would see the connection end with no
%% response). That request is answered with `connection: close'.
-define(DRAIN_GRACE, 1000).

-define(DEFAULTS, #{
	env => #{},
	proxy_header => false,
	proxy_header_timeout => 5000,
	middlewares => [mustang_router, mustang_handler],
	request_process => false,
	active_n => 100,
	adaptive_active => true,
	dynamic_buffer => {1024, 131072},
	hibernate => false,
	hibernate_after => 1000,
	idle_timeout => 60000,
	request_timeout => 5000,
	max_keepalive => 1000,
	max_skip_body_length => 1000000,
	max_trailer_length => 4096,
	%% Generous: AWS SigV4 streaming uploads put about 80 bytes of
	%% extensions on every chunk (16384 stopped them at about 200 chunks).
	max_chunk_ext_length => 1048576,
	linger_timeout => 1000,
	min_recv_rate => {1024, 30000},
	logger => logger,
	stream_handlers => [mustang_stream_h]
}).

-include("mustang_http1_stream.hrl").

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
	hibernate_after :: timeout(),
	max_skip :: non_neg_integer(),
	min_rate :: off | {pos_integer(), pos_integer()},
	%% The chunked decoder's state at the start of a body (it holds the limits).
	chunked :: mustang_http1_codec:chunked_state(),
	hibernate :: boolean(),
	logger :: module(),
	%% The first stream handler and its options.
	chain :: mustang_stream:prepared(),
	%% Versions of the inline stream state (request_process => false).
	inline :: mustang_inline:counter() | undefined,
	peer :: {inet:ip_address(), inet:port_number()} | undefined,
	sock :: {inet:ip_address(), inet:port_number()} | undefined,
	cert :: binary() | undefined,
	%% The PROXY protocol header (option proxy_header), for the Req.
	proxy_header = undefined :: undefined | mustang_proxy_header:info(),
	scheme :: binary(),
	%% HTTP/2 by prior knowledge or Upgrade: h2c (clear text only).
	h2c :: boolean(),
	%% Socket reading.
	active_n :: mustang_conn_chores:active(),
	dynbuf :: mustang_dynbuf:dynbuf() | undefined,
	%% Idle timeout: a periodic tick adds up the quiet time (ms).
	quiet = 0 :: non_neg_integer(),
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
	%% {active, N} not re-armed while a request process runs with much buffered.
	paused = false :: boolean(),
	%% Method and path of the request in flight, for log lines.
	req_info = {<<>>, <<>>} :: {binary(), binary()},
	%% The parent asked us to stop: finish the request in flight, then close.
	stopping = false :: boolean(),
	drain_timer = undefined :: undefined | reference(),
	%% The listener's status, for the streams (mustang:drain/2).
	listener :: mustang_conn_limit:limit() | undefined
}).

%% Options.

-spec defaults() -> map().
defaults() ->
	?DEFAULTS.

%% The options of an HTTP/1.1 connection of a listener with options Opts,
%% kept in persistent_term by mustang_registry, so that connections do not
%% copy them.
-spec conn_opts(map()) -> map().
conn_opts(Opts) ->
	maps:merge(?DEFAULTS, Opts).

%% Connection start.

%% Opts are conn_opts/1's (mustang_registry:get_conn_opts/2), not copied
%% into the process. Conn carries what was known before the protocol
%% started: proxy_header, the PROXY protocol header (mustang_conn, option
%% proxy_header).
-spec init(pid(), mustang:ref(), module(), mustang_transport:socket(), map(),
	#{proxy_header => mustang_proxy_header:info()}) -> no_return().
init(Parent, Ref, Transport, Socket, Opts, Conn) ->
	process_flag(trap_exit, true),
	Limits = maps:merge(mustang_http1_codec:default_limits(),
		maps:with(maps:keys(mustang_http1_codec:default_limits()), Opts)),
	#{active_n := ActiveN0} = Opts,
	ActiveN = mustang_conn_chores:active(Transport, ActiveN0, maps:get(adaptive_active, Opts)),
	DynBuf = mustang_dynbuf:for_listener(Ref, maps:get(dynamic_buffer, Opts)),
	SockOpts = case mustang_dynbuf:size(DynBuf) of
		undefined -> [{active, ActiveN0}];
		Size -> [{active, ActiveN0}, {buffer, Size}]
	end,
	case {Transport:setopts(Socket, SockOpts), mustang_transport:socket_info(Transport, Socket)} of
		{ok, {ok, Peer, Sock, Cert}} ->
			St = #st{parent = Parent, ref = Ref, transport = Transport, socket = Socket,
				messages = Transport:messages(), opts = Opts, limits = Limits,
				env = maps:get(env, Opts), middlewares = maps:get(middlewares, Opts),
				request_process = maps:get(request_process, Opts),
				max_keepalive = maps:get(max_keepalive, Opts),
				request_timeout = maps:get(request_timeout, Opts),
				idle_timeout = maps:get(idle_timeout, Opts),
				hibernate_after = maps:get(hibernate_after, Opts),
				max_skip = maps:get(max_skip_body_length, Opts),
				min_rate = maps:get(min_recv_rate, Opts),
				chunked = mustang_http1_codec:init_chunked(maps:get(max_trailer_length, Opts),
					maps:get(max_chunk_ext_length, Opts)),
				hibernate = maps:get(hibernate, Opts),
				logger = maps:get(logger, Opts),
				chain = mustang_registry:get_conn_chain(Ref, http),
				inline = case maps:get(request_process, Opts) of
					false -> mustang_inline:new_counter();
					true -> undefined
				end,
				peer = Peer, sock = Sock, cert = Cert,
				proxy_header = maps:get(proxy_header, Conn, undefined),
				scheme = case Transport:secure() of true -> <<"https">>; false -> <<"http">> end,
				h2c = not Transport:secure() andalso
					lists:member(http2, maps:get(protocols, Opts, [http2, http])),
				active_n = ActiveN, dynbuf = DynBuf,
				listener = listener(Ref)},
			start_idle_tick(St),
			loop(wait_for_request(St), <<>>);
		_ ->
			%% The peer left before we could look at the socket.
			Transport:close(Socket),
			exit(normal)
	end.

%% Connections started outside a listener (tests) have none.
listener(Ref) ->
	try mustang_registry:get_conn_limit(Ref)
	catch error:badarg -> undefined
	end.

start_idle_tick(#st{idle_timeout = Timeout, hibernate_after = HibernateAfter, quiet = Quiet}) ->
	mustang_conn_chores:start_idle_tick(?MODULE, Timeout, HibernateAfter, Quiet).

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
					stream_data(St2, Data, Buffer)
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
		%% Not while part of a request is here: it is answered with close.
		{timeout, Timer, drain_grace} when Timer =:= St#st.drain_timer, St#st.stream =:= undefined,
				Buffer =:= <<>> ->
			terminate(St, shutdown);
		{{Pid, StreamID}, Info} when Pid =:= self(), StreamID =:= St#st.requests ->
			stream_info(St, Info, Buffer);
		{'EXIT', Parent, _} ->
			stop_requested(St, Buffer);
		{'EXIT', Pid, Reason} when Pid =:= St#st.child ->
			stream_info(St, {'EXIT', Pid, Reason}, Buffer);
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
		when byte_size(StreamBuffer) + byte_size(Buffer) > ?MAX_BUFFERED ->
	loop(St#st{paused = true}, Buffer);
passive(St = #st{transport = Transport, socket = Socket, active_n = N, stream = undefined}, <<>>) ->
	ok = mustang_conn_chores:rearm_idle(Transport, Socket, N),
	loop(St, <<>>);
passive(St = #st{transport = Transport, socket = Socket, active_n = N}, Buffer) ->
	ok = mustang_conn_chores:rearm(Transport, Socket, N),
	loop(St, Buffer).

update_dynbuf(Size, #st{transport = Transport, socket = Socket, dynbuf = DynBuf}) ->
	mustang_dynbuf:update_socket(Size, DynBuf, Transport, Socket).

idle_tick(St = #st{received = Received, quiet = Quiet, stream = Stream,
		idle_timeout = Timeout, hibernate_after = HibernateAfter}, Buffer) ->
	case mustang_conn_chores:idle_tick(Received, Quiet, Stream =/= undefined orelse Buffer =/= <<>>,
			Timeout, HibernateAfter) of
		timeout ->
			terminate(St, idle_timeout);
		{hibernate, Quiet2} ->
			%% 13.0 KiB down to 4.6 KiB per idle connection, 10,000 of them
			%% (bench/idle_memory.sh, doc/guide/performance.md). The previous
			%% request's parsed head (the keep-alive parse cache) and its
			%% method and path go: they point into the packet it came in.
			St2 = St#st{received = false, quiet = Quiet2, parse_cache = undefined,
				req_info = {<<>>, <<>>}},
			start_idle_tick(St2),
			proc_lib:hibernate(?MODULE, loop, [St2, Buffer]);
		{continue, Quiet2} ->
			St2 = St#st{received = false, quiet = Quiet2},
			start_idle_tick(St2),
			loop(St2, Buffer)
	end.

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
			error_response(St, 408,
				'The request head did not arrive within request_timeout. (RFC9110 15.5.9)')
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
		{error, {http_error, 400, Reason = 'The HTTP version must be HTTP/DIGIT.DIGIT. (RFC9112 2.3)'}}
				when St#st.requests =:= 0 ->
			%% Bytes that do not even name HTTP (such as an invalid HTTP/2
			%% preface) get no HTTP/1.1 response, which the peer could not
			%% read: the connection is closed (RFC 9113 3.4 wants that for a
			%% bad preface). The sentence is the codec's invalid-version
			%% reason (mustang_error_tests checks that they agree).
			case binary:match(Buffer, <<" HTTP/">>) of
				nomatch ->
					log(St, debug, "mustang ~p: ~s sent bytes that are not HTTP; closing",
						[St#st.ref, peer(St)]),
					terminate(St, {http_error, 400,
						'The bytes received are not an HTTP/1.x request. (RFC9113 3.4)'});
				_ ->
					error_response(St, 400, Reason)
			end;
		{error, {http_error, Status, Reason}} ->
			error_response(St, Status, Reason)
	end.

%% HTTP/1.0 has no Upgrade (RFC 9110 7.8): an HTTP/1.0 request is answered
%% over HTTP/1.0 as if it had none.
handle_request(St = #st{h2c = true}, Request = #{version := 'HTTP/1.1',
		headers := #{<<"upgrade">> := _, <<"http2-settings">> := _}, body := none}, Rest) ->
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
		owner = self(),
		parent = St#st.parent,
		transport = St#st.transport,
		socket = St#st.socket,
		messages = St#st.messages,
		version = Version,
		head = Method =:= <<"HEAD">>,
		keepalive = Keepalive,
		body = case Body of
			none -> done;
			{length, N} -> {length, N};
			chunked -> {chunked, St#st.chunked}
		end,
		expect = Expect,
		te_trailers = te_trailers(Request),
		buffer = Rest,
		dynbuf = St#st.dynbuf,
		active_n = St#st.active_n,
		idle_timeout = St#st.idle_timeout,
		max_skip = St#st.max_skip,
		min_rate = St#st.min_rate,
		rate = case Body of
			none -> undefined;
			_ -> mustang_conn_chores:recv_rate_start()
		end,
		logger = St#st.logger,
		listener = St#st.listener
	},
	Mode = case St#st.request_process of true -> process; false -> inline end,
	Req = build_req(St, StreamID, Request, Mode),
	St2 = St#st{requests = StreamID, req_info = {Method, maps:get(path, Request)}},
	run_stream(St2, mustang_http1_stream:chain_init(Req, St#st.chain, Stream)).

%% Trailers are sent only to clients that say they accept them (RFC 9110
%% 6.5.1); an invalid TE says nothing.
te_trailers(#{headers := #{<<"te">> := TE}}) ->
	case mustang_http_hd:parse_te(TE) of
		{ok, Codings} -> lists:keymember(<<"trailers">>, 1, Codings);
		{error, _} -> false
	end;
te_trailers(_) ->
	false.

%% The stream handlers started the request: inline (mustang_stream_h's run
%% command, the default), or in a process of its own, whose calls then
%% arrive as messages.
run_stream(St, Stream0 = #stream{run = {M, F, A}, id = StreamID}) ->
	%% run is cleared: the state is copied at each call the handler makes
	%% (mustang_inline publishes it), and the Req, env and routes in it would
	%% be copied too.
	{Result, Stream2} = mustang_inline:run(St#st.inline, mustang_http1_stream,
		Stream0#stream{run = undefined}, {M, F, A}, {self(), StreamID}),
	Stream3 = mustang_http1_stream:settle(Stream2),
	after_commands(St, mustang_http1_stream:chain_info({run_done, Result}, Stream3), <<>>);
run_stream(St, Stream) ->
	after_commands(St, Stream, <<>>).

%% After the stream handlers' commands were carried out.
after_commands(St, Stream = #stream{stopped = true}, Buffer) ->
	stream_done(St, Stream, Buffer);
after_commands(St, Stream = #stream{flow = Flow, buffer = StreamBuffer, body = Body}, Buffer)
		when Flow > 0, StreamBuffer =/= <<>>, Body =/= done, not Stream#stream.passive ->
	after_commands(St, mustang_http1_stream:feed(StreamBuffer, Stream#stream{buffer = <<>>}), Buffer);
after_commands(St, Stream = #stream{child = Child}, Buffer) ->
	loop(resume_reading(St#st{stream = Stream, child = Child}), Buffer).

%% Socket data while a request runs in its own process: body for the
%% stream handlers when they asked for it, else bytes to keep for later.
stream_data(St = #st{stream = Stream = #stream{body = Body, flow = Flow}}, Data, Buffer)
		when Body =/= done, Flow > 0 ->
	after_commands(St, mustang_http1_stream:feed(Data, Stream), Buffer);
stream_data(St = #st{stream = Stream = #stream{buffer = StreamBuffer}}, Data, Buffer) ->
	loop(St#st{stream = Stream#stream{buffer = <<StreamBuffer/binary, Data/binary>>}}, Buffer).

stream_info(St = #st{stream = undefined}, _, Buffer) ->
	loop(St, Buffer);
stream_info(St = #st{stream = Stream}, Info, Buffer) ->
	after_commands(St, mustang_http1_stream:chain_info(Info, Stream), Buffer).

%% The stream handlers stopped: complete the response, discard the unread
%% body, and either read the next request or close.
stream_done(St, Stream0 = #stream{child = Child}, Buffer) ->
	_ = is_pid(Child) andalso is_process_alive(Child) andalso exit(Child, {shutdown, stopped}),
	Stream1 = mustang_http1_stream:complete(Stream0),
	%% Bytes that arrived while the request ran belong after its buffer.
	Stream2 = case Buffer of
		<<>> -> Stream1;
		_ -> Stream1#stream{buffer = <<(Stream1#stream.buffer)/binary, Buffer/binary>>}
	end,
	case Stream2 of
		#stream{resp = {switch, Module, Args}, buffer = Rest, dynbuf = DynBuf} ->
			ok = mustang_http1_stream:chain_terminate(switch_protocol, Stream2),
			%% The handler upgraded the connection (Websocket): the protocol
			%% module takes the socket and this process over.
			_ = case St#st.req_timer of undefined -> ok; Timer -> erlang:cancel_timer(Timer) end,
			_ = Stream2#stream.passive andalso go_active(St),
			Module:takeover(St#st.parent, St#st.ref, St#st.transport, St#st.socket, St#st.opts, Rest,
				DynBuf, Args);
		_ ->
			ok = mustang_http1_stream:chain_terminate(Stream2#stream.reason, Stream2),
			Stream3 = case Stream2 of
				#stream{keepalive = true, body = Body} when Body =/= done ->
					mustang_http1_stream:skip_body(go_passive(St, Stream2));
				_ ->
					Stream2
			end,
			St2 = St#st{dynbuf = Stream3#stream.dynbuf, stream = undefined, child = undefined},
			St3 = case Stream3#stream.passive of
				true -> go_active(St2);
				false -> resume_reading(St2)
			end,
			case Stream3 of
				#stream{keepalive = true, resp = done} when not St#st.stopping ->
					next_request(St3, Stream3#stream.buffer);
				#stream{keepalive = true, resp = done} ->
					%% Stopping, but this response said keep-alive.
					next_request(drain_grace(St3), Stream3#stream.buffer);
				_ ->
					terminate(St3, normal)
			end
	end.

%% The socket goes passive: socket messages already here become buffered
%% bytes.
go_passive(#st{}, Stream = #stream{passive = true}) ->
	Stream;
go_passive(#st{transport = Transport, socket = Socket, messages = {OK, _, _, Passive}}, Stream) ->
	_ = Transport:setopts(Socket, [{active, false}]),
	drain(Socket, OK, Passive, Stream#stream{passive = true}).

drain(Socket, OK, Passive, Stream = #stream{buffer = Buffer}) ->
	receive
		{OK, Socket, Data} -> drain(Socket, OK, Passive, Stream#stream{buffer = <<Buffer/binary, Data/binary>>});
		{Passive, Socket} -> drain(Socket, OK, Passive, Stream)
	after 0 ->
		Stream
	end.

go_active(St = #st{transport = Transport, socket = Socket, active_n = N}) ->
	ok = mustang_conn_chores:rearm(Transport, Socket, N),
	St#st{paused = false}.

%% Reading stopped while a request process ran with much data buffered.
resume_reading(St = #st{paused = true, stream = undefined}) ->
	go_active(St);
resume_reading(St = #st{paused = true, stream = #stream{buffer = Buffer}})
		when byte_size(Buffer) =< ?MAX_BUFFERED ->
	go_active(St);
resume_reading(St) ->
	St.

next_request(St = #st{hibernate = true}, <<>>) ->
	proc_lib:hibernate(?MODULE, loop, [wait_for_request(St), <<>>]);
next_request(St, <<>>) ->
	loop(wait_for_request(St), <<>>);
next_request(St, Buffer) ->
	parse(St, Buffer).

peer(#st{peer = Peer}) -> mustang_conn_chores:peer(Peer).

%% Upgrade: h2c (RFC 7540 3.2; RFC 9113 drops it but curl and others still
%% use it): only for HTTP/1.1 requests without a body (handle_request/3 checks
%% both), whose Connection header names both Upgrade and HTTP2-Settings, with
%% valid settings.
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
	mustang_http2:init(St#st.parent, St#st.ref, St#st.transport, St#st.socket,
		mustang_registry:get_conn_opts(St#st.ref, http2),
		Conn#{dynbuf => St#st.dynbuf, peer => St#st.peer, sock => St#st.sock, cert => St#st.cert,
			proxy_header => St#st.proxy_header}).

keepalive_allowed(_, infinity) -> true;
keepalive_allowed(StreamID, Max) -> StreamID < Max.

%% Built once with every key it will have (the router's included), so that
%% later updates do not grow the map.
build_req(#st{ref = Ref, peer = Peer, sock = Sock, cert = Cert, proxy_header = ProxyHeader,
		scheme = Scheme, opts = Opts}, StreamID, Request = #{body := Body}, Mode) ->
	{HasBody, BodyLength} = case Body of
		none -> {false, 0};
		{length, N} -> {true, N};
		chunked -> {true, undefined}
	end,
	mustang_req:new(#{ref => Ref, pid => self(), streamid => StreamID, peer => Peer, sock => Sock,
		cert => Cert, proxy_header => ProxyHeader, scheme => Scheme, mode => Mode,
		alt_svc => maps:get(alt_svc, Opts, undefined)}, Request, HasBody, BodyLength).

%% Stopping.

%% No request in flight: close, after a short grace for the request the
%% client may be sending (DRAIN_GRACE); the next request is answered with
%% `connection: close'.
stop_requested(St = #st{stream = undefined}, Buffer) ->
	loop(drain_grace(St#st{stopping = true}), Buffer);
stop_requested(St = #st{stream = Stream = #stream{resp = none}}, Buffer) ->
	%% A request is running in its own process: let it finish; its response
	%% says `connection: close', and stream_done closes the connection.
	loop(St#st{stopping = true, stream = Stream#stream{keepalive = false}}, Buffer);
stop_requested(St, Buffer) ->
	%% Its response started: the connection closes after it, or after the
	%% grace if it said keep-alive.
	loop(St#st{stopping = true}, Buffer).

drain_grace(St) ->
	St#st{drain_timer = erlang:start_timer(?DRAIN_GRACE, self(), drain_grace)}.

supervisor_call(Call, From, #st{child = Child}) ->
	mustang_conn_chores:supervisor_call(Call, From, [Child || is_pid(Child)], ?MODULE).

%% A request refused before any handler ran: the stream handlers may shape
%% the response (early_error/5), which ends the connection.
-spec error_response(#st{}, 400..599, atom()) -> no_return().
error_response(St = #st{transport = Transport, socket = Socket, opts = Opts}, Status, Reason) ->
	log(St, debug, "mustang ~p: ~b response to ~s: ~s", [St#st.ref, Status, peer(St), Reason]),
	StreamID = St#st.requests + 1,
	PartialReq = mustang_req:with_proxy_header(#{ref => St#st.ref, pid => self(),
		streamid => StreamID, peer => St#st.peer, sock => St#st.sock, cert => St#st.cert},
		St#st.proxy_header),
	{response, Status2, Headers, Body} = mustang_stream:early_error_response(StreamID,
		{connection_error, {http_error, Status, Reason}, Reason}, PartialReq,
		{response, Status, #{<<"content-length">> => <<"0">>}, <<>>}, Opts, St#st.logger),
	Headers2 = Headers#{<<"content-length">> => integer_to_binary(iolist_size(Body))},
	_ = Transport:send(Socket, [mustang_http1_stream:head(Status2, Headers2, 'HTTP/1.1', false), Body]),
	terminate(St, {http_error, Status, Reason}).

-spec terminate(#st{}, any()) -> no_return().
terminate(St = #st{transport = Transport, socket = Socket, child = Child, stream = Stream}, Reason) ->
	case Child of
		undefined -> ok;
		%% As over HTTP/2: a loop handler (mustang_loop) traps it and
		%% tells its terminate/3.
		_ -> exit(Child, {shutdown, connection_closed})
	end,
	_ = case Stream of
		#stream{} ->
			mustang_http1_stream:chain_terminate(case Reason of
				{socket_error, SocketReason} -> {socket_error, SocketReason, 'The socket failed.'};
				_ -> {stop, Reason, 'The connection ended.'}
			end, Stream);
		undefined ->
			ok
	end,
	_ = Transport:shutdown(Socket, write),
	linger(St, Reason),
	Transport:close(Socket),
	exit(exit_reason(Reason)).

%% Lingering after our half-close (mustang_conn_chores:linger/3), but not
%% when the peer is known to be gone or idle.
linger(_, closed) -> ok;
linger(_, {socket_error, _}) -> ok;
linger(_, idle) -> ok;
linger(_, idle_timeout) -> ok;
linger(#st{stream = undefined}, shutdown) -> ok;
linger(#st{transport = Transport, socket = Socket, opts = #{linger_timeout := Timeout}}, _) ->
	mustang_conn_chores:linger(Transport, Socket, Timeout).

%% Ordinary endings are `normal` so that no crash report is written.
exit_reason(shutdown) -> shutdown;
exit_reason(_) -> normal.

log(#st{logger = Logger}, Level, Format, Args) ->
	mustang_conn_chores:log(Logger, Level, Format, Args).

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
