%% A small HTTP/2 client for the test suites (RFC 9113): h2c by prior
%% knowledge over TCP, or h2 over TLS (ALPN "h2"). It speaks the protocol
%% with Mustang's own codecs, mustang_http2_frame and mustang_hpack. That is
%% acceptable here, and only here, because those codecs are checked on their
%% own against independent implementations: h2spec, curl, nghttp and
%% python-h2 in http2_SUITE, plus their unit tests. A codec bug shared by
%% this client and the server would show there.
%%
%% One process per connection (a gen_server), linked to the process that
%% called connect/4 and ending when that process ends. It handles the
%% connection by itself: SETTINGS and their ACK, PING, WINDOW_UPDATE in both
%% directions, HEADERS followed by CONTINUATION both ways (header blocks are
%% split at the server's SETTINGS_MAX_FRAME_SIZE), several streams at once.
%%
%% Flow control. Uploads respect the server's connection and stream windows:
%% body data waits in the stream's queue until WINDOW_UPDATE (or a larger
%% SETTINGS_INITIAL_WINDOW_SIZE) makes room, and goes out in DATA frames no
%% larger than the server's SETTINGS_MAX_FRAME_SIZE. Downloads: whenever the
%% connection or a stream window falls to half its initial size, a
%% WINDOW_UPDATE brings it back (padding counts, RFC 9113 6.9.1).
%%
%% Server push is refused (SETTINGS_ENABLE_PUSH = 0): a PUSH_PROMISE is a
%% connection error. SETTINGS_MAX_CONCURRENT_STREAMS is not enforced here:
%% a request over the limit is the server's to refuse, and shows up as an
%% RST_STREAM error.
%%
%% API:
%%   connect(tcp | tls, Host, Port, Opts) -> {ok, Pid} | {error, Reason}
%%       returns once the server's SETTINGS frame arrived
%%   request(Pid, Method, Path, Headers, Body) -> {ok, StreamID} | {error, Reason}
%%       Headers [{Name, Value}] (iodata; names are lowercased). A `host'
%%       field becomes :authority (default "localhost") and is not sent;
%%       pseudo-header fields given in Headers replace the defaults.
%%       Body: none (END_STREAM on HEADERS), iodata (one DATA run with
%%       END_STREAM; <<>> is the same as none), {parts, [iodata]} (one DATA
%%       run per part, END_STREAM on the last) or nofin (the body follows
%%       with send_body/4 and send_trailers/3). No header is added: the
%%       caller adds content-length when it wants one.
%%   send_body(Pid, StreamID, fin | nofin, iodata) -> ok | {error, Reason}
%%   send_trailers(Pid, StreamID, Headers) -> ok | {error, Reason}
%%   await(Pid, StreamID, Timeout) -> {ok, Response} | {error, Reason}
%%       Response: #{version => <<"HTTP/2">>, status, headers => [{Name, Value}],
%%       body, trailers => [{Name, Value}], informs => [#{status, headers}]}
%%       (field lists in the order received, pseudo-header fields removed).
%%       Reason: timeout (the stream stays usable: await again),
%%       {stream_error, Code} (RST_STREAM before the response ended),
%%       {goaway, Code, DebugData} (GOAWAY that leaves the stream out, or
%%       the connection closed after one), closed (closed without GOAWAY),
%%       {connection_error, Code, Why} (the server broke the protocol; the
%%       client sent GOAWAY), {malformed, Why}, unknown_stream.
%%   server_settings(Pid) -> map(), the SETTINGS received (mustang_http2_frame)
%%   goaway(Pid) -> undefined | {LastStreamID, Code, DebugData}
%%   sockname(Pid) -> {ok, {IP, Port}}
%%   close(Pid) -> ok (sends GOAWAY NO_ERROR, closes)
%%
%% Options of connect/4 (defaults):
%%   initial_window_size  65535: our SETTINGS_INITIAL_WINDOW_SIZE, the
%%                        receive window of each stream (the connection's
%%                        stays 65535, RFC 9113 6.9.2)
%%   timeout              5000: ms for the TCP/TLS connection and the
%%                        server's SETTINGS
%%   tls_opts             []: more ssl options (verify_none and the ALPN
%%                        list "h2" are always given)
-module(mustang_h2_client).
-behaviour(gen_server).

-export([connect/4]).
-export([request/5]).
-export([send_body/4]).
-export([send_trailers/3]).
-export([await/3]).
-export([server_settings/1]).
-export([goaway/1]).
-export([sockname/1]).
-export([close/1]).

-export([init/1]).
-export([handle_call/3]).
-export([handle_cast/2]).
-export([handle_info/2]).

-define(DEFAULT_WINDOW, 65535).
-define(DEFAULT_MAX_FRAME, 16384).

-type body() :: none | iodata() | {parts, [iodata()]} | nofin.
-type response() :: #{version := binary(), status := 100..999,
	headers := [{binary(), binary()}], body := binary(),
	trailers := [{binary(), binary()}], informs := [map()]}.
-export_type([body/0, response/0]).

-record(stream, {
	send_window :: integer(),
	recv_window :: integer(),
	%% What is still to send: {data, IsFin, Binary} and {trailers, Fields}.
	queue = [] :: [{data, fin | nofin, binary()} | {trailers, list()}],
	local = open :: open | closed,
	remote = open :: open | closed,
	status = undefined :: undefined | integer(),
	headers = [] :: list(),
	informs = [] :: list(),
	body = [] :: iodata(),
	trailers = [] :: list(),
	result = undefined :: undefined | {ok, response()} | {error, any()},
	waiter = undefined :: undefined | {gen_server:from(), reference()}
}).

-record(state, {
	owner :: pid(),
	transport :: gen_tcp | ssl,
	socket :: any(),
	scheme :: binary(),
	buffer = <<>> :: binary(),
	encoder :: mustang_hpack:state(),
	decoder :: mustang_hpack:state(),
	%% Our receive windows: the stream windows start at this.
	local_window :: pos_integer(),
	conn_recv_window = ?DEFAULT_WINDOW :: integer(),
	conn_send_window = ?DEFAULT_WINDOW :: integer(),
	server_settings = #{} :: map(),
	server_window = ?DEFAULT_WINDOW :: integer(),
	server_max_frame = ?DEFAULT_MAX_FRAME :: pos_integer(),
	settings_received = false :: boolean(),
	settings_waiters = [] :: [gen_server:from()],
	%% A header block being received: {StreamID, IsFin, Fragments}.
	continuation = undefined :: undefined | {pos_integer(), fin | nofin, iodata()},
	next_id = 1 :: pos_integer(),
	streams = #{} :: #{pos_integer() => #stream{}},
	goaway = undefined :: undefined | {non_neg_integer(), any(), binary()},
	closed = false :: false | {true, any()}
}).

%% API.

-spec connect(tcp | tls, inet:hostname() | inet:ip_address(), inet:port_number(), map())
	-> {ok, pid()} | {error, any()}.
connect(Transport, Host, Port, Opts) ->
	Timeout = maps:get(timeout, Opts, 5000),
	Common = [binary, {active, false}, {nodelay, true}],
	Connected = case Transport of
		tcp ->
			gen_tcp:connect(Host, Port, Common, Timeout);
		tls ->
			TLSOpts = Common ++ [{verify, verify_none}, {alpn_advertised_protocols, [<<"h2">>]}
				| maps:get(tls_opts, Opts, [])],
			case ssl:connect(Host, Port, TLSOpts, Timeout) of
				{ok, S} ->
					case ssl:negotiated_protocol(S) of
						{ok, <<"h2">>} -> {ok, S};
						Other -> _ = ssl:close(S), {error, {alpn, Other}}
					end;
				TLSError ->
					TLSError
			end
	end,
	case Connected of
		{ok, Socket} ->
			Module = case Transport of tcp -> gen_tcp; tls -> ssl end,
			{ok, Pid} = gen_server:start_link(?MODULE, {self(), Module, Opts}, []),
			ok = Module:controlling_process(Socket, Pid),
			case gen_server:call(Pid, {start, Socket}, Timeout) of
				ok -> {ok, Pid};
				StartError -> close(Pid), StartError
			end;
		Error ->
			Error
	end.

-spec request(pid(), iodata(), iodata(), [{iodata(), iodata()}], body())
	-> {ok, pos_integer()} | {error, any()}.
request(Pid, Method, Path, Headers, Body) ->
	gen_server:call(Pid, {request, to_bin(Method), to_bin(Path),
		[{to_bin(N), to_bin(V)} || {N, V} <- Headers], body(Body)}).

-spec send_body(pid(), pos_integer(), fin | nofin, iodata()) -> ok | {error, any()}.
send_body(Pid, StreamID, IsFin, Data) ->
	gen_server:call(Pid, {send, StreamID, [{data, IsFin, iolist_to_binary(Data)}]}).

-spec send_trailers(pid(), pos_integer(), [{iodata(), iodata()}]) -> ok | {error, any()}.
send_trailers(Pid, StreamID, Trailers) ->
	gen_server:call(Pid, {send, StreamID,
		[{trailers, [{lower(N), to_bin(V)} || {N, V} <- Trailers]}]}).

-spec await(pid(), pos_integer(), timeout()) -> {ok, response()} | {error, any()}.
await(Pid, StreamID, Timeout) ->
	gen_server:call(Pid, {await, StreamID, Timeout}, infinity).

-spec server_settings(pid()) -> map().
server_settings(Pid) ->
	gen_server:call(Pid, server_settings).

-spec goaway(pid()) -> undefined | {non_neg_integer(), any(), binary()}.
goaway(Pid) ->
	gen_server:call(Pid, goaway).

-spec sockname(pid()) -> {ok, {inet:ip_address(), inet:port_number()}} | {error, any()}.
sockname(Pid) ->
	gen_server:call(Pid, sockname).

-spec close(pid()) -> ok.
close(Pid) ->
	unlink(Pid),
	_ = catch gen_server:call(Pid, close),
	ok.

body(none) -> none;
body(nofin) -> nofin;
body({parts, Parts}) -> {parts, [iolist_to_binary(P) || P <- Parts]};
body(Data) -> iolist_to_binary(Data).

to_bin(V) -> iolist_to_binary(V).

lower(N) -> string:lowercase(iolist_to_binary(N)).

%% gen_server.

-spec init({pid(), gen_tcp | ssl, map()}) -> {ok, #state{}}.
init({Owner, Module, Opts}) ->
	_ = erlang:monitor(process, Owner),
	Scheme = case Module of gen_tcp -> <<"http">>; ssl -> <<"https">> end,
	{ok, #state{owner = Owner, transport = Module, scheme = Scheme,
		encoder = mustang_hpack:init(), decoder = mustang_hpack:init(),
		local_window = maps:get(initial_window_size, Opts, ?DEFAULT_WINDOW)}}.

-spec handle_call(any(), gen_server:from(), #state{}) -> {reply, any(), #state{}}
	| {noreply, #state{}} | {stop, normal, ok, #state{}}.
handle_call({start, Socket}, From, State0 = #state{local_window = Window}) ->
	State = State0#state{socket = Socket},
	Settings = #{enable_push => false, initial_window_size => Window},
	ok = send(State, [mustang_http2_frame:preface(), mustang_http2_frame:settings(Settings)]),
	_ = setopts(State),
	{noreply, State#state{settings_waiters = [From]}};
handle_call({request, _, _, _, _}, _, State = #state{closed = {true, Reason}}) ->
	{reply, {error, Reason}, State};
handle_call({request, _, _, _, _}, _, State = #state{goaway = {_, Code, Debug}}) ->
	{reply, {error, {goaway, Code, Debug}}, State};
handle_call({request, Method, Path, Headers, Body}, _, State0 = #state{next_id = ID}) ->
	{Fields, Queue} = request_fields(Method, Path, Headers, Body, State0),
	HeadFin = case Queue of
		[] when Body =/= nofin -> fin;
		_ -> nofin
	end,
	Stream = #stream{send_window = State0#state.server_window,
		recv_window = State0#state.local_window, queue = Queue,
		local = case Body of nofin -> open; _ -> closed end},
	State1 = send_headers(ID, HeadFin, Fields, State0),
	State = State1#state{next_id = ID + 2, streams = (State1#state.streams)#{ID => Stream}},
	{reply, {ok, ID}, flush(State)};
handle_call({send, ID, Items}, _, State = #state{streams = Streams}) ->
	case Streams of
		#{ID := #stream{result = {error, Reason}}} ->
			{reply, {error, Reason}, State};
		#{ID := Stream = #stream{local = open, queue = Queue}} ->
			Local = case lists:last(Items) of
				{data, nofin, _} -> open;
				_ -> closed
			end,
			State2 = State#state{streams = Streams#{ID => Stream#stream{
				queue = Queue ++ Items, local = Local}}},
			{reply, ok, flush(State2)};
		#{ID := _} ->
			{reply, {error, stream_closed_locally}, State};
		_ ->
			{reply, {error, unknown_stream}, State}
	end;
handle_call({await, ID, Timeout}, From, State = #state{streams = Streams}) ->
	case Streams of
		#{ID := #stream{result = undefined, waiter = undefined} = Stream} ->
			Ref = make_ref(),
			_ = case Timeout of
				infinity -> ok;
				_ -> erlang:send_after(Timeout, self(), {await_timeout, ID, Ref})
			end,
			{noreply, State#state{streams = Streams#{ID => Stream#stream{waiter = {From, Ref}}}}};
		#{ID := #stream{result = undefined}} ->
			{reply, {error, already_awaited}, State};
		#{ID := #stream{result = Result}} ->
			{reply, Result, State};
		_ ->
			{reply, {error, unknown_stream}, State}
	end;
handle_call(server_settings, _, State) ->
	{reply, State#state.server_settings, State};
handle_call(goaway, _, State) ->
	{reply, State#state.goaway, State};
handle_call(sockname, _, State = #state{transport = gen_tcp, socket = S}) ->
	{reply, inet:sockname(S), State};
handle_call(sockname, _, State = #state{transport = ssl, socket = S}) ->
	{reply, ssl:sockname(S), State};
handle_call(close, _, State = #state{closed = false}) ->
	_ = send(State, mustang_http2_frame:goaway(0, no_error, <<>>)),
	_ = (State#state.transport):close(State#state.socket),
	{stop, normal, ok, State};
handle_call(close, _, State) ->
	{stop, normal, ok, State}.

-spec handle_cast(any(), #state{}) -> {noreply, #state{}}.
handle_cast(_, State) ->
	{noreply, State}.

-spec handle_info(any(), #state{}) -> {noreply, #state{}} | {stop, normal, #state{}}.
handle_info({Tag, S, Data}, State = #state{socket = S, buffer = Buffer})
		when Tag =:= tcp; Tag =:= ssl ->
	case frames(State#state{buffer = <<Buffer/binary, Data/binary>>}) of
		State2 = #state{closed = false} ->
			_ = setopts(State2),
			{noreply, flush(State2)};
		State2 ->
			{noreply, State2}
	end;
handle_info({Tag, S}, State = #state{socket = S}) when Tag =:= tcp_closed; Tag =:= ssl_closed ->
	{noreply, closed(closed, State)};
handle_info({Tag, S, Reason}, State = #state{socket = S}) when Tag =:= tcp_error; Tag =:= ssl_error ->
	{noreply, closed({socket_error, Reason}, State)};
handle_info({await_timeout, ID, Ref}, State = #state{streams = Streams}) ->
	case Streams of
		#{ID := Stream = #stream{waiter = {From, Ref}}} ->
			gen_server:reply(From, {error, timeout}),
			{noreply, State#state{streams = Streams#{ID => Stream#stream{waiter = undefined}}}};
		_ ->
			{noreply, State}
	end;
handle_info({'DOWN', _, process, Owner, _}, State = #state{owner = Owner}) ->
	_ = catch (State#state.transport):close(State#state.socket),
	{stop, normal, State};
handle_info(_, State) ->
	{noreply, State}.

%% Sending.

%% A failed send is not an error here: the socket's closing comes as a
%% message and fails the streams then.
send(#state{transport = Module, socket = S}, Data) ->
	_ = Module:send(S, Data),
	ok.

setopts(#state{transport = gen_tcp, socket = S}) -> inet:setopts(S, [{active, once}]);
setopts(#state{transport = ssl, socket = S}) -> ssl:setopts(S, [{active, once}]).

%% Pseudo-header fields first (RFC 9113 8.3); the body as queued items.
request_fields(Method, Path, Headers0, Body, #state{scheme = Scheme}) ->
	Headers = [{lower(N), V} || {N, V} <- Headers0],
	{Pseudo0, Regular0} = lists:partition(fun({N, _}) -> binary:first(N) =:= $: end, Headers),
	Authority = case lists:keyfind(<<"host">>, 1, Regular0) of
		{_, Host} -> Host;
		false -> <<"localhost">>
	end,
	Regular = case lists:keymember(<<":authority">>, 1, Pseudo0) of
		true -> Regular0;
		false -> lists:keydelete(<<"host">>, 1, Regular0)
	end,
	Defaults = [{<<":method">>, Method}, {<<":scheme">>, Scheme},
		{<<":authority">>, Authority}, {<<":path">>, Path}],
	Pseudo = [case lists:keyfind(N, 1, Pseudo0) of
		false -> D;
		Given -> Given
	end || D = {N, _} <- Defaults] ++ [P || P = {N, _} <- Pseudo0,
		not lists:keymember(N, 1, Defaults)],
	Queue = case Body of
		none -> [];
		nofin -> [];
		<<>> -> [];
		{parts, []} -> [];
		{parts, Parts} ->
			{Init, [Last]} = lists:split(length(Parts) - 1, Parts),
			[{data, nofin, P} || P <- Init] ++ [{data, fin, Last}];
		Data -> [{data, fin, Data}]
	end,
	{Pseudo ++ Regular, Queue}.

send_headers(ID, IsFin, Fields, State = #state{encoder = Enc0, server_max_frame = Max}) ->
	{Block, Enc} = mustang_hpack:encode(Fields, Enc0),
	ok = send(State, mustang_http2_frame:headers(ID, IsFin, Block, Max)),
	State#state{encoder = Enc}.

%% Sends what the windows allow, streams in id order.
flush(State = #state{closed = {true, _}}) ->
	State;
flush(State = #state{streams = Streams}) ->
	lists:foldl(fun flush_stream/2, State, lists:sort(maps:keys(Streams))).

flush_stream(ID, State = #state{streams = Streams}) ->
	#{ID := Stream} = Streams,
	flush_stream(ID, Stream, State).

flush_stream(ID, Stream = #stream{queue = []}, State = #state{streams = Streams}) ->
	State#state{streams = Streams#{ID => Stream}};
flush_stream(ID, Stream = #stream{queue = [{trailers, Fields} | Rest]}, State0) ->
	State = send_headers(ID, fin, Fields, State0),
	flush_stream(ID, Stream#stream{queue = Rest}, State);
flush_stream(ID, Stream = #stream{queue = [{data, IsFin, <<>>} | Rest]}, State) ->
	ok = send(State, mustang_http2_frame:data(ID, IsFin, <<>>)),
	flush_stream(ID, Stream#stream{queue = Rest}, State);
flush_stream(ID, Stream = #stream{queue = [{data, IsFin, Data} | Rest], send_window = SWin},
		State = #state{conn_send_window = CWin, server_max_frame = Max, streams = Streams}) ->
	case lists:min([byte_size(Data), SWin, CWin, Max]) of
		Size when Size =< 0 ->
			State#state{streams = Streams#{ID => Stream}};
		Size ->
			<<Chunk:Size/binary, More/bits>> = Data,
			{FrameFin, Queue} = case More of
				<<>> -> {IsFin, Rest};
				_ -> {nofin, [{data, IsFin, More} | Rest]}
			end,
			ok = send(State, mustang_http2_frame:data(ID, FrameFin, Chunk)),
			flush_stream(ID, Stream#stream{queue = Queue, send_window = SWin - Size},
				State#state{conn_send_window = CWin - Size})
	end.

%% Receiving.

frames(State = #state{buffer = Buffer}) ->
	case mustang_http2_frame:parse(Buffer, ?DEFAULT_MAX_FRAME) of
		{ok, Frame, Rest} ->
			%% Flow control counts the whole DATA payload, padding included.
			<<Len:24, _/bits>> = Buffer,
			case frame(Frame, Len, State#state{buffer = Rest}) of
				State2 = #state{closed = false} -> frames(State2);
				State2 -> State2
			end;
		more ->
			State;
		{more, _} ->
			State;
		{ignore, Rest} ->
			frames(State#state{buffer = Rest});
		{stream_error, ID, Code, Why, Rest} ->
			ok = send(State, mustang_http2_frame:rst_stream(ID, Code)),
			frames(finish(ID, {error, {malformed, Why}}, State#state{buffer = Rest}));
		{connection_error, Code, Why} ->
			connection_error(Code, Why, State)
	end.

%% Nothing but CONTINUATION frames of that stream may come inside a header
%% block (RFC 9113 6.10).
frame(Frame, Len, State = #state{continuation = {ID, _, _}}) ->
	case Frame of
		{continuation, ID, _, _} -> handle_frame(Frame, Len, State);
		_ -> connection_error(protocol_error, expected_continuation, State)
	end;
frame(Frame, Len, State) ->
	handle_frame(Frame, Len, State).

handle_frame({data, ID, IsFin, Data}, Len, State0 = #state{streams = Streams}) ->
	State = conn_recv(Len, State0),
	case Streams of
		#{ID := Stream0 = #stream{remote = open, status = Status, body = Body}}
				when is_integer(Status) ->
			Stream = stream_recv(ID, Len, IsFin, Stream0#stream{body = [Body, Data]}, State),
			remote_fin(ID, IsFin, State#state{streams = Streams#{ID => Stream}});
		#{ID := #stream{remote = open}} ->
			malformed(ID, data_before_headers, State);
		_ ->
			State
	end;
handle_frame({headers, ID, IsFin, head_fin, Block}, _, State) ->
	header_block(ID, IsFin, Block, State);
handle_frame({headers, ID, IsFin, head_fin, _, Block}, _, State) ->
	header_block(ID, IsFin, Block, State);
handle_frame({headers, ID, IsFin, head_nofin, Block}, _, State) ->
	State#state{continuation = {ID, IsFin, Block}};
handle_frame({headers, ID, IsFin, head_nofin, _, Block}, _, State) ->
	State#state{continuation = {ID, IsFin, Block}};
handle_frame({continuation, ID, HeadFin, Fragment}, _, State = #state{continuation = {ID, IsFin, Acc}}) ->
	case HeadFin of
		head_fin ->
			header_block(ID, IsFin, iolist_to_binary([Acc, Fragment]),
				State#state{continuation = undefined});
		head_nofin ->
			State#state{continuation = {ID, IsFin, [Acc, Fragment]}}
	end;
handle_frame({continuation, _, _, _}, _, State) ->
	connection_error(protocol_error, unexpected_continuation, State);
handle_frame({priority, _, _, _, _}, _, State) ->
	State;
handle_frame({rst_stream, ID, Code}, _, State = #state{streams = Streams}) ->
	case Streams of
		#{ID := Stream = #stream{remote = closed}} ->
			%% The response is whole: the server only stops our upload
			%% (NO_ERROR after an early response, RFC 9113 8.1).
			State#state{streams = Streams#{ID => Stream#stream{queue = [], local = closed}}};
		#{ID := Stream} ->
			finish(ID, {error, {stream_error, Code}}, State#state{streams = Streams#{
				ID => Stream#stream{queue = [], local = closed, remote = closed}}});
		_ ->
			State
	end;
handle_frame({settings, Settings}, _, State0) ->
	ok = send(State0, mustang_http2_frame:settings_ack()),
	State = apply_settings(Settings, State0),
	[gen_server:reply(From, ok) || From <- State#state.settings_waiters],
	State#state{settings_received = true, settings_waiters = []};
handle_frame(settings_ack, _, State) ->
	State;
handle_frame({ping, Opaque}, _, State) ->
	ok = send(State, mustang_http2_frame:ping_ack(Opaque)),
	State;
handle_frame({ping_ack, _}, _, State) ->
	State;
handle_frame({goaway, Last, Code, Debug}, _, State = #state{streams = Streams}) ->
	Refused = [ID || ID <- maps:keys(Streams), ID > Last],
	lists:foldl(fun(ID, S) -> finish(ID, {error, {goaway, Code, Debug}}, S) end,
		State#state{goaway = {Last, Code, Debug}}, Refused);
handle_frame({window_update, Inc}, _, State = #state{conn_send_window = Win}) ->
	State#state{conn_send_window = Win + Inc};
handle_frame({window_update, ID, Inc}, _, State = #state{streams = Streams}) ->
	case Streams of
		#{ID := Stream = #stream{send_window = Win}} ->
			State#state{streams = Streams#{ID => Stream#stream{send_window = Win + Inc}}};
		_ ->
			State
	end;
handle_frame({push_promise, _, _, _, _}, _, State) ->
	connection_error(protocol_error, push_promise_with_push_disabled, State).

apply_settings(Settings, State0 = #state{server_settings = Old, streams = Streams}) ->
	State1 = State0#state{server_settings = maps:merge(Old, Settings)},
	State2 = case Settings of
		#{max_frame_size := Max} -> State1#state{server_max_frame = Max};
		_ -> State1
	end,
	State3 = case Settings of
		#{header_table_size := Size} ->
			State2#state{encoder = mustang_hpack:set_max_size(Size, State2#state.encoder)};
		_ -> State2
	end,
	case Settings of
		#{initial_window_size := New} ->
			%% Open streams' windows move by the difference (RFC 9113 6.9.2).
			Delta = New - State3#state.server_window,
			State3#state{server_window = New, streams = maps:map(fun(_, S) ->
				S#stream{send_window = S#stream.send_window + Delta}
			end, Streams)};
		_ ->
			State3
	end.

conn_recv(Len, State = #state{conn_recv_window = Win0}) ->
	case Win0 - Len of
		Win when Win =< ?DEFAULT_WINDOW div 2 ->
			ok = send(State, mustang_http2_frame:window_update(?DEFAULT_WINDOW - Win)),
			State#state{conn_recv_window = ?DEFAULT_WINDOW};
		Win ->
			State#state{conn_recv_window = Win}
	end.

%% No WINDOW_UPDATE on a stream the server ends with this frame.
stream_recv(_, Len, fin, Stream = #stream{recv_window = Win}, _) ->
	Stream#stream{recv_window = Win - Len};
stream_recv(ID, Len, nofin, Stream = #stream{recv_window = Win0}, State = #state{local_window = Initial}) ->
	case Win0 - Len of
		Win when Win =< Initial div 2 ->
			ok = send(State, mustang_http2_frame:window_update(ID, Initial - Win)),
			Stream#stream{recv_window = Initial};
		Win ->
			Stream#stream{recv_window = Win}
	end.

header_block(ID, IsFin, Block, State = #state{decoder = Dec0, streams = Streams}) ->
	case mustang_hpack:decode(Block, Dec0) of
		{ok, Fields, Dec} ->
			case Streams of
				#{ID := Stream = #stream{remote = open}} ->
					stream_headers(ID, IsFin, Fields, Stream, State#state{decoder = Dec});
				_ ->
					State#state{decoder = Dec}
			end;
		{error, _, Why} ->
			connection_error(compression_error, Why, State)
	end.

stream_headers(ID, IsFin, Fields, Stream = #stream{status = undefined},
		State = #state{streams = Streams}) ->
	case Fields of
		[{<<":status">>, StatusBin} | Regular] ->
			case {catch binary_to_integer(StatusBin), pseudo(Regular), IsFin} of
				{Status, false, nofin} when is_integer(Status), Status >= 100, Status < 200 ->
					Inform = #{status => Status, headers => Regular},
					State#state{streams = Streams#{ID => Stream#stream{
						informs = Stream#stream.informs ++ [Inform]}}};
				{Status, false, _} when is_integer(Status), Status >= 200, Status < 1000 ->
					remote_fin(ID, IsFin, State#state{streams = Streams#{ID => Stream#stream{
						status = Status, headers = Regular}}});
				_ ->
					malformed(ID, bad_response_pseudo_headers, State)
			end;
		_ ->
			malformed(ID, no_status, State)
	end;
stream_headers(ID, fin, Fields, Stream, State = #state{streams = Streams}) ->
	case pseudo(Fields) of
		false ->
			remote_fin(ID, fin, State#state{streams = Streams#{ID => Stream#stream{
				trailers = Fields}}});
		true ->
			malformed(ID, pseudo_header_in_trailers, State)
	end;
stream_headers(ID, nofin, _, _, State) ->
	malformed(ID, trailers_without_end_stream, State).

pseudo(Fields) ->
	lists:any(fun({<<":", _/bits>>, _}) -> true; (_) -> false end, Fields).

%% A malformed response is a stream error (RFC 9113 8.1.1).
malformed(ID, Why, State = #state{streams = Streams}) ->
	ok = send(State, mustang_http2_frame:rst_stream(ID, protocol_error)),
	#{ID := Stream} = Streams,
	finish(ID, {error, {malformed, Why}}, State#state{streams = Streams#{
		ID => Stream#stream{queue = [], local = closed, remote = closed}}}).

remote_fin(_, nofin, State) ->
	State;
remote_fin(ID, fin, State = #state{streams = Streams}) ->
	#{ID := Stream} = Streams,
	#stream{status = Status, headers = Headers, body = Body, trailers = Trailers,
		informs = Informs} = Stream,
	Response = #{version => <<"HTTP/2">>, status => Status, headers => Headers,
		body => iolist_to_binary(Body), trailers => Trailers, informs => Informs},
	finish(ID, {ok, Response}, State#state{streams = Streams#{ID => Stream#stream{remote = closed}}}).

%% The stream's result, given to its waiter; the first result stays.
finish(ID, Result, State = #state{streams = Streams}) ->
	case Streams of
		#{ID := Stream = #stream{result = undefined, waiter = Waiter}} ->
			case Waiter of
				{From, _} -> gen_server:reply(From, Result);
				undefined -> ok
			end,
			State#state{streams = Streams#{ID => Stream#stream{result = Result,
				waiter = undefined}}};
		_ ->
			State
	end.

%% Last-Stream-ID 0: with push disabled the server opened no stream.
connection_error(Code, Why, State0) ->
	_ = send(State0, mustang_http2_frame:goaway(0, Code, <<>>)),
	_ = (State0#state.transport):close(State0#state.socket),
	closed({connection_error, Code, Why}, State0).

%% Streams without a result fail: with the GOAWAY's code when one came.
closed(Reason0, State = #state{streams = Streams, goaway = GoAway}) ->
	Reason = case {Reason0, GoAway} of
		{closed, {_, Code, Debug}} -> {goaway, Code, Debug};
		_ -> Reason0
	end,
	[gen_server:reply(From, {error, Reason}) || From <- State#state.settings_waiters],
	lists:foldl(fun(ID, S) -> finish(ID, {error, Reason}, S) end,
		State#state{closed = {true, Reason}, settings_waiters = []}, maps:keys(Streams)).
