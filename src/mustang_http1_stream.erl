%% One HTTP/1.1 stream (a request and its response) on the wire: carries out
%% the commands of the stream handlers (mustang_stream) on the socket, and
%% decodes and reads the request body. Used by the connection process
%% (mustang_http1) and, while a handler runs inline, by mustang_req through
%% mustang_inline (inline_info/3), from the connection process or from a
%% process the handler gave its Req to.
%%
%% Each response is one iolist written with one send; the status line and
%% headers use the cached date (mustang_clock). Chunked transfer coding is
%% used for streamed HTTP/1.1 responses without content-length; for HTTP/1.0
%% the end of such a body is the end of the connection.
-module(mustang_http1_stream).
-behaviour(mustang_inline).

-include("mustang_http1_stream.hrl").

-export([chain_init/3]).
-export([chain_info/2]).
-export([chain_terminate/2]).
-export([commands/2]).
-export([inline_info/3]).
-export([feed/2]).
-export([complete/1]).
-export([skip_body/1]).
-export([settle/1]).
-export([close_if_body_unskippable/1]).
-export([head/4]).

-export([system_continue/3]).
-export([system_terminate/4]).
-export([system_code_change/4]).

%% The stream handler chain; a crash in a stream handler ends the stream as
%% an internal error, logged once.

-spec chain_init(mustang_req:req(), mustang_stream:prepared(), #stream{}) -> #stream{}.
chain_init(Req, Prepared, Stream = #stream{id = StreamID}) ->
	try mustang_stream:init_prepared(StreamID, Req, Prepared) of
		%% mustang_stream_h's inline run, the default: one copy of the record.
		{[{run, M, F, A}], Chain} -> Stream#stream{chain = Chain, run = {M, F, A}};
		{Commands, Chain} -> commands(Commands, Stream#stream{chain = Chain})
	catch Class:Reason:Stacktrace ->
		chain_crash(init, [StreamID, Req], Class, Reason, Stacktrace, Stream)
	end.

-spec chain_info(any(), #stream{}) -> #stream{}.
chain_info(Info, Stream = #stream{id = StreamID, chain = Chain}) ->
	try mustang_stream:info(StreamID, Info, Chain) of
		{Commands, Chain2} -> commands(Commands, Stream#stream{chain = Chain2})
	catch Class:Reason:Stacktrace ->
		chain_crash(info, [StreamID, Info, Chain], Class, Reason, Stacktrace, Stream)
	end.

chain_data(IsFin, Data, Stream = #stream{id = StreamID, chain = Chain}) ->
	try mustang_stream:data(StreamID, IsFin, Data, Chain) of
		{Commands, Chain2} -> commands(Commands, Stream#stream{chain = Chain2})
	catch Class:Reason:Stacktrace ->
		chain_crash(data, [StreamID, IsFin, Data, Chain], Class, Reason, Stacktrace, Stream)
	end.

-spec chain_terminate(mustang_stream:reason(), #stream{}) -> ok.
chain_terminate(Reason, Stream = #stream{id = StreamID, chain = Chain}) ->
	try
		mustang_stream:terminate(StreamID, Reason, Chain)
	catch Class:Reason2:Stacktrace ->
		_ = commands([mustang_stream:make_error_log(terminate, [StreamID, Reason, Chain], Class,
			Reason2, Stacktrace)], Stream),
		ok
	end.

chain_crash(Callback, Args, Class, Reason, Stacktrace, Stream) ->
	commands([mustang_stream:make_error_log(Callback, Args, Class, Reason, Stacktrace),
		{internal_error, {Class, Reason}, 'A stream handler crashed.'}],
		Stream#stream{chain = undefined}).

%% Commands.

-spec commands(mustang_stream:commands(), #stream{}) -> #stream{}.
commands([], Stream) ->
	Stream;
commands([Command | Rest], Stream) ->
	commands(Rest, command(Command, Stream)).

command({log, Level, Format, Args}, Stream = #stream{logger = Logger}) ->
	ok = mustang_conn_chores:log(Logger, Level, Format, Args),
	Stream;
command({spawn, Pid, _}, Stream) ->
	Stream#stream{child = Pid};
command({run, M, F, A}, Stream) ->
	Stream#stream{run = {M, F, A}};
command({flow, Size}, Stream) ->
	Stream#stream{flow = Size};
command({ack, Pid, Ref}, Stream = #stream{sent = Sent}) ->
	Pid ! {Ref, Sent},
	Stream;
command({set_options, Opts}, Stream) ->
	Stream#stream{idle_timeout = maps:get(idle_timeout, Opts, Stream#stream.idle_timeout)};
command({push, _, _, _, _, _, _, _}, Stream) ->
	%% HTTP/1.1 has no server push.
	Stream;
command(stop, Stream) ->
	Stream#stream{stopped = true};
command(Error = {internal_error, _, _}, Stream = #stream{resp = none, stopped = false}) ->
	command(stop, send_response(500, #{}, <<>>, Stream#stream{keepalive = false, reason = Error}));
command(Error = {internal_error, _, _}, Stream) ->
	%% The response is cut short or its state is unknown: only closing
	%% tells the client.
	Stream#stream{keepalive = false, stopped = true, reason = Error};
command({error_response, Status, Headers, Body}, Stream = #stream{resp = none, stopped = false}) ->
	send_response(Status, Headers, Body, Stream#stream{keepalive = false});
command({error_response, _, _, _}, Stream) ->
	Stream;
command(_, Stream = #stream{stopped = true}) ->
	Stream#stream{sent = {error, closed}};
command({inform, 100, _}, Stream = #stream{expect = false}) ->
	Stream;
command({inform, Status, Headers}, Stream = #stream{version = 'HTTP/1.1', resp = none}) ->
	send(Stream#stream{expect = Stream#stream.expect andalso Status =/= 100},
		[mustang_http1_resp:status_line('HTTP/1.1', Status),
			mustang_http1_resp:headers_to_iodata(headers_list(Headers)), <<"\r\n">>]);
command({inform, _, _}, Stream) ->
	%% HTTP/1.0 clients do not understand 1xx (RFC 9110 15.2).
	Stream;
command({switch_protocol, Headers, Module, Args}, Stream = #stream{resp = none}) ->
	send(Stream#stream{resp = {switch, Module, Args}},
		[mustang_http1_resp:status_line('HTTP/1.1', 101),
			mustang_http1_resp:headers_to_iodata(headers_list(Headers)), <<"\r\n">>]);
command({response, Status, Headers, Body}, Stream = #stream{resp = none}) ->
	send_response(Status, Headers, Body, close_if_draining(close_if_body_unskippable(Stream)));
command({headers, Status, Headers}, Stream = #stream{resp = none}) ->
	send_headers(Status, Headers, close_if_draining(close_if_body_unskippable(Stream)));
command({data, IsFin, _}, Stream = #stream{head = true, resp = Resp})
		when Resp =/= none, Resp =/= done ->
	done_if(IsFin, Stream#stream{sent = ok});
command({data, IsFin, Data}, Stream = #stream{resp = chunked}) ->
	Last = case IsFin of fin -> [<<"0\r\n\r\n">>]; nofin -> [] end,
	Stream2 = case Data of
		{sendfile, Offset, Length, Path} ->
			sendfile(Stream, [integer_to_binary(Length, 16), <<"\r\n">>], Offset, Length, Path,
				[<<"\r\n">> | Last]);
		_ ->
			send(Stream, [mustang_http1_resp:chunk(Data) | Last])
	end,
	done_if(IsFin, Stream2);
command({data, IsFin, Data}, Stream = #stream{resp = Resp})
		when element(1, Resp) =:= identity; Resp =:= close_delimited ->
	{Stream2, Size} = case Data of
		{sendfile, Offset, Length, Path} -> {sendfile(Stream, [], Offset, Length, Path, []), Length};
		_ -> {send(Stream, Data), iolist_size(Data)}
	end,
	case {IsFin, Resp} of
		{fin, {identity, unknown}} -> Stream2#stream{resp = done};
		{fin, {identity, Left}} when Size =:= Left -> Stream2#stream{resp = done};
		{fin, {identity, _}} ->
			%% Fewer or more bytes than content-length announced.
			Stream2#stream{resp = done, keepalive = false};
		{nofin, {identity, unknown}} -> Stream2;
		{nofin, {identity, Left}} -> Stream2#stream{resp = {identity, Left - Size}};
		{fin, close_delimited} -> Stream2#stream{resp = done, keepalive = false};
		{nofin, close_delimited} -> Stream2
	end;
command({trailers, Trailers}, Stream = #stream{resp = chunked, head = false, te_trailers = true}) ->
	send(Stream#stream{resp = done}, mustang_http1_resp:last_chunk(headers_list(Trailers)));
command({trailers, _}, Stream = #stream{resp = chunked, head = false}) ->
	%% The client did not say it accepts trailers (RFC 9110 6.5.1): the
	%% body ends without them.
	send(Stream#stream{resp = done}, mustang_http1_resp:last_chunk([]));
command({trailers, _}, Stream = #stream{resp = Resp}) when Resp =/= none, Resp =/= done ->
	%% No trailers without chunked coding (HEAD, content-length given): the
	%% body ends here.
	command({data, fin, <<>>}, Stream);
command(Command, Stream) when element(1, Command) =:= data; element(1, Command) =:= trailers;
		element(1, Command) =:= response; element(1, Command) =:= headers;
		element(1, Command) =:= inform; element(1, Command) =:= switch_protocol ->
	Stream#stream{sent = {error, {invalid_command, element(1, Command), Stream#stream.resp}}};
command(_, Stream) ->
	%% Commands of other protocols or handlers.
	Stream.

%% When the response starts before the body was read, decide now whether the
%% connection can be kept, so the response head can say so: a body larger
%% than max_skip_body_length, or one the client was not yet told to send
%% (100-continue), is never waited for.
-spec close_if_body_unskippable(#stream{}) -> #stream{}.
close_if_body_unskippable(Stream = #stream{body = done}) ->
	Stream;
close_if_body_unskippable(Stream = #stream{expect = true}) ->
	Stream#stream{keepalive = false};
close_if_body_unskippable(Stream = #stream{body = {length, N}, max_skip = Max}) when N > Max ->
	Stream#stream{keepalive = false};
close_if_body_unskippable(Stream) ->
	Stream.

%% The listener drains (mustang:drain/2): the response in flight says
%% `connection: close' and the connection closes after it. One atomics read
%% per response, in whichever process runs the request.
-spec close_if_draining(#stream{}) -> #stream{}.
close_if_draining(Stream = #stream{keepalive = true, listener = Listener}) when Listener =/= undefined ->
	case mustang_conn_limit:status(Listener) of
		draining -> Stream#stream{keepalive = false};
		_ -> Stream
	end;
close_if_draining(Stream) ->
	Stream.

done_if(fin, Stream) -> Stream#stream{resp = done};
done_if(nofin, Stream) -> Stream.

send_response(Status, Headers0, Body, Stream = #stream{head = Head}) ->
	BodyLength = case Body of
		{sendfile, _, Length, _} -> Length;
		_ -> iolist_size(Body)
	end,
	NoBody = mustang_http1_resp:no_body_status(Status),
	Headers1 = maps:remove(<<"transfer-encoding">>, Headers0),
	Headers = case NoBody of
		true -> maps:remove(<<"content-length">>, Headers1);
		false -> Headers1#{<<"content-length">> => integer_to_binary(BodyLength)}
	end,
	HeadIo = head(Status, Headers, Stream),
	case Body of
		_ when Head; NoBody -> send(Stream, HeadIo, done);
		{sendfile, Offset, Length2, Path} ->
			sendfile(Stream#stream{resp = done}, HeadIo, Offset, Length2, Path, []);
		_ -> send(Stream, [HeadIo, Body], done)
	end.

send_headers(Status, Headers, Stream = #stream{version = Version}) ->
	{Resp, Headers2, Stream2} = case {mustang_http1_resp:no_body_status(Status), Headers, Version} of
		{true, _, _} ->
			{done, Headers, Stream};
		{false, #{<<"content-length">> := Length}, _} ->
			{{identity, content_length(Length)}, Headers, Stream};
		{false, _, 'HTTP/1.1'} when Stream#stream.te_trailers ->
			{chunked, Headers#{<<"transfer-encoding">> => <<"chunked">>}, Stream};
		{false, _, 'HTTP/1.1'} ->
			%% No trailers will be sent: none is announced (RFC 9110 6.6.2).
			{chunked, maps:remove(<<"trailer">>, Headers#{<<"transfer-encoding">> => <<"chunked">>}),
				Stream};
		{false, _, 'HTTP/1.0'} ->
			{close_delimited, Headers, Stream#stream{keepalive = false}}
	end,
	Stream3 = Stream2#stream{resp = Resp},
	send(Stream3, head(Status, Headers2, Stream3)).

content_length(Value) ->
	try binary_to_integer(iolist_to_binary(Value)) of
		N when N >= 0 -> N;
		_ -> unknown
	catch _:_ ->
		unknown
	end.

head(Status, Headers, #stream{version = Version, keepalive = Keepalive}) ->
	head(Status, Headers, Version, Keepalive).

-spec head(mustang_req:status(), mustang_req:headers(), 'HTTP/1.1' | 'HTTP/1.0', boolean())
	-> iodata().
head(Status, Headers, Version, Keepalive) ->
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
	[mustang_http1_resp:status_line('HTTP/1.1', Status),
		mustang_http1_resp:headers_to_iodata(headers_list(maps:remove(<<"connection">>, Headers))),
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

send(Stream = #stream{transport = Transport, socket = Socket}, Data) ->
	Stream#stream{sent = Transport:send(Socket, Data)}.

%% A write that also moves the response on: one copy of the record.
send(Stream = #stream{transport = Transport, socket = Socket}, Data, Resp) ->
	Stream#stream{resp = Resp, sent = Transport:send(Socket, Data)}.

sendfile(Stream = #stream{transport = Transport, socket = Socket}, Before, Offset, Length, Path, After) ->
	case send(Stream, Before) of
		Stream2 = #stream{sent = ok} when Length =:= 0 ->
			send(Stream2, After);
		Stream2 = #stream{sent = ok} ->
			case Transport:sendfile(Socket, Path, Offset, Length) of
				{ok, _} -> send(Stream2, After);
				{error, Reason} -> Stream2#stream{sent = {error, Reason}}
			end;
		Stream2 ->
			Stream2
	end.

%% After the stream handlers stopped: a response still open is ended the only
%% way left (the last chunk, or closing).
-spec complete(#stream{}) -> #stream{}.
complete(Stream = #stream{resp = none}) ->
	send_response(204, #{}, <<>>, Stream#stream{stopped = false});
complete(Stream = #stream{resp = chunked, keepalive = true}) ->
	command({data, fin, <<>>}, Stream#stream{stopped = false});
complete(Stream = #stream{resp = done}) ->
	Stream;
complete(Stream = #stream{resp = {switch, _, _}}) ->
	Stream;
complete(Stream) ->
	Stream#stream{keepalive = false}.

%% Calls from mustang_req while the handler runs inline (mustang_inline).

-spec inline_info(any(), timeout(), #stream{}) -> {any(), #stream{}}.
inline_info(Info = {read_body, _, Ref, _, Period}, Timeout, Stream0) ->
	Stream = chain_info(Info, Stream0),
	Deadline = erlang:monotonic_time(millisecond) + Period,
	read_until_reply(Stream, Ref, Deadline, Timeout);
inline_info(mustang_loop_receive, _, Stream) ->
	loop_receive(Stream);
inline_info(Info, _, Stream0) ->
	Stream = chain_info(Info, case Stream0 of
		#stream{sent = ok} -> Stream0;
		_ -> Stream0#stream{sent = ok}
	end),
	{Stream#stream.sent, Stream}.

%% A loop handler (mustang_loop) running inline waits for its next message
%% here, where the connection's own messages are known: socket data is kept
%% for body reads and the next request (reading stops past MAX_LOOP_BUFFER,
%% and then a close goes unseen until the loop ends); a closed socket ends
%% the loop; sys requests are answered here (the connection is suspended
%% with its loop handler); the connection's timers, supervisor and parent
%% messages and the inline state (mustang_inline) stay in the mailbox.
-define(MAX_LOOP_BUFFER, 1000000).
-define(IS_CONNECTION_MESSAGE(M, Owner), (is_tuple(M) andalso (
	(tuple_size(M) =:= 4 andalso element(1, M) =:= '$mustang_inline')
	orelse (tuple_size(M) =:= 2 andalso element(1, M) =:= mustang_http1)
	orelse (tuple_size(M) =:= 3 andalso (element(1, M) =:= 'EXIT' orelse element(1, M) =:= system
		orelse element(1, M) =:= '$gen_call'
		orelse (element(1, M) =:= timeout andalso element(3, M) =:= request_timeout)))
	orelse (tuple_size(M) =:= 2 andalso is_tuple(element(1, M)) andalso tuple_size(element(1, M)) =:= 2
		andalso element(1, element(1, M)) =:= Owner)))).

loop_receive(Stream = #stream{transport = Transport, socket = Socket, owner = Owner,
		messages = {OK, Closed, Error, Passive}, buffer = Buffer}) ->
	receive
		{OK, Socket, Data} ->
			loop_receive(received_later(Data, Stream));
		{Passive, Socket} when byte_size(Buffer) > ?MAX_LOOP_BUFFER ->
			loop_receive(Stream#stream{passive = true});
		{Passive, Socket} ->
			ok = mustang_conn_chores:rearm(Transport, Socket, Stream#stream.active_n),
			loop_receive(Stream);
		{Closed, Socket} ->
			{{error, closed}, Stream#stream{keepalive = false}};
		{Error, Socket, Reason} ->
			{{error, Reason}, Stream#stream{keepalive = false}};
		{system, From, Request} when Owner =:= self() ->
			try
				sys:handle_system_msg(Request, From, Stream#stream.parent, ?MODULE, [], Stream)
			catch throw:{?MODULE, terminate, Reason} ->
				%% Closed now: the handler was stopped, not answered.
				_ = Transport:close(Socket),
				{{terminate, Reason}, Stream#stream{keepalive = false}}
			end;
		Message when not ?IS_CONNECTION_MESSAGE(Message, Owner) ->
			{{message, Message}, Stream}
	end.

%% sys callbacks, while an inline loop handler waits in loop_receive/1.
%% sys:terminate/2 ends the loop as in a request process (mustang_loop:
%% terminate/3 gets the reason), then the connection closes: the throw
%% unwinds sys back to loop_receive/1, which returns to the handler's loop.

-spec system_continue(pid(), [sys:debug_option()], #stream{}) -> {any(), #stream{}}.
system_continue(_, _, Stream) ->
	loop_receive(Stream).

-spec system_terminate(any(), pid(), [sys:debug_option()], #stream{}) -> no_return().
system_terminate(Reason, _, _, _) ->
	throw({?MODULE, terminate, Reason}).

-spec system_code_change(Misc, module(), any(), any()) -> {ok, Misc} when Misc :: #stream{}.
system_code_change(Misc, _, _, _) ->
	{ok, Misc}.

%% Socket data while no read waits: body bytes the handler may read later,
%% or pipelined requests.
received_later(Data, Stream = #stream{transport = Transport, socket = Socket, buffer = Buffer}) ->
	DynBuf = mustang_dynbuf:update_socket(byte_size(Data), Stream#stream.dynbuf, Transport, Socket),
	Stream#stream{dynbuf = DynBuf, buffer = <<Buffer/binary, Data/binary>>}.

%% The stream handlers answer the read with a message to this process once
%% they have the data; until then the socket is read and the body fed to
%% them.
read_until_reply(Stream, Ref, Deadline, Timeout) ->
	receive
		{request_body, Ref, IsFin, Data} -> {{IsFin, Data}, Stream};
		{request_body, Ref, Error} -> {Error, Stream}
	after 0 ->
		read_more(Stream, Ref, Deadline, Timeout)
	end.

read_more(Stream = #stream{buffer = Buffer}, Ref, Deadline, Timeout) when Buffer =/= <<>> ->
	read_until_reply(feed(Buffer, Stream#stream{buffer = <<>>}), Ref, Deadline, Timeout);
read_more(Stream = #stream{stopped = true}, _, _, _) ->
	{{error, closed}, Stream};
read_more(Stream = #stream{body = done}, Ref, _, _) ->
	%% The body ended and no answer came: a stream handler holds the data
	%% back (or dropped the read); ask again with what there is.
	read_until_reply(chain_info({read_body_timeout, Ref}, Stream), Ref, infinity, 0);
read_more(Stream = #stream{owner = Owner, passive = false}, Ref, Deadline, Timeout)
		when Owner =:= self() ->
	receive_more(Stream, Ref, Deadline, Timeout);
read_more(Stream = #stream{passive = false}, Ref, Deadline, Timeout) ->
	read_until_reply(take_socket(Stream), Ref, Deadline, Timeout);
read_more(Stream = #stream{owner = Owner, taken = Taken}, Ref, Deadline, Timeout)
		when Taken > 0, Owner =:= self() ->
	read_more(settle(Stream), Ref, Deadline, Timeout);
read_more(Stream = #stream{transport = Transport, socket = Socket}, Ref, Deadline, Timeout) ->
	{Left, Wait} = wait(Stream, Deadline, Timeout),
	case Transport:recv(Socket, 0, Wait) of
		{ok, Data} ->
			read_until_reply(received(Data, Stream), Ref, Deadline, Timeout);
		{error, timeout} when Wait =:= Left ->
			read_until_reply(chain_info({read_body_timeout, Ref}, Stream), Ref, Deadline, Timeout);
		{error, Reason} ->
			{{error, Reason}, Stream#stream{keepalive = false}}
	end.

%% In the connection process, the body arrives as socket messages: keeping
%% the socket active costs less than recv, which arms the poller at each
%% call (W3a, 1 MB bodies on one connection: 3.5 epoll_ctl per request with
%% recv against 1.3).
receive_more(Stream = #stream{transport = Transport, socket = Socket,
		messages = {OK, Closed, Error, Passive}}, Ref, Deadline, Timeout) ->
	{Left, Wait} = wait(Stream, Deadline, Timeout),
	receive
		{OK, Socket, Data} ->
			read_until_reply(received(Data, Stream), Ref, Deadline, Timeout);
		{Passive, Socket} ->
			ok = mustang_conn_chores:rearm(Transport, Socket, Stream#stream.active_n),
			receive_more(Stream, Ref, Deadline, Timeout);
		{Closed, Socket} ->
			{{error, closed}, Stream#stream{keepalive = false}};
		{Error, Socket, Reason} ->
			{{error, Reason}, Stream#stream{keepalive = false}}
	after Wait ->
		case Wait =:= Left of
			true -> read_until_reply(chain_info({read_body_timeout, Ref}, Stream), Ref, Deadline, Timeout);
			false -> {{error, timeout}, Stream#stream{keepalive = false}}
		end
	end.

wait(Stream, Deadline, Timeout) ->
	Left = max(0, Deadline - erlang:monotonic_time(millisecond)),
	{Left, min(min(Timeout, Stream#stream.idle_timeout), Left)}.

received(Data, Stream = #stream{transport = Transport, socket = Socket}) ->
	DynBuf = mustang_dynbuf:update_socket(byte_size(Data), Stream#stream.dynbuf, Transport, Socket),
	feed(Data, Stream#stream{dynbuf = DynBuf}).

%% A process other than the connection reads the body: only recv lets it,
%% so the socket goes passive. The data the socket already sent to the
%% connection (which is busy in the handler) comes first: it is copied from
%% the connection's mailbox; the connection drops those messages (settle/1).
%% Once setopts returns, the socket sends nothing more, and what it sent
%% before is in the connection's queue ahead of process_info's request.
take_socket(Stream = #stream{transport = Transport, socket = Socket, owner = Owner,
		messages = {OK, _, _, _}, buffer = Buffer}) ->
	_ = Transport:setopts(Socket, [{active, false}]),
	Data = case erlang:process_info(Owner, messages) of
		{messages, Messages} -> [D || {Tag, S, D} <- Messages, Tag =:= OK, S =:= Socket];
		_ -> []
	end,
	Stream#stream{passive = true, taken = length(Data), buffer = iolist_to_binary([Buffer | Data])}.

%% In the connection process: drops the socket messages another process
%% copied (take_socket/1), and the notice that the active count ran out.
-spec settle(#stream{}) -> #stream{}.
settle(Stream = #stream{passive = false}) ->
	Stream;
settle(Stream = #stream{socket = Socket, messages = {OK, _, _, Passive}, taken = Taken}) ->
	drop_data(Socket, OK, Taken),
	flush_passive(Socket, Passive),
	Stream#stream{taken = 0}.

drop_data(_, _, 0) ->
	ok;
drop_data(Socket, OK, N) ->
	receive
		{OK, Socket, _} -> drop_data(Socket, OK, N - 1)
	after 0 ->
		ok
	end.

flush_passive(Socket, Passive) ->
	receive
		{Passive, Socket} -> flush_passive(Socket, Passive)
	after 0 ->
		ok
	end.

%% Decodes body bytes out of Data and hands them to the stream handlers.
%% Bytes past the end of the body stay in the buffer for the next
%% (pipelined) request.
-spec feed(binary(), #stream{}) -> #stream{}.
feed(Data, Stream = #stream{body = done, buffer = Buffer}) ->
	Stream#stream{buffer = <<Buffer/binary, Data/binary>>};
feed(Data, Stream0) ->
	case check_rate(byte_size(Data), Stream0) of
		{ok, Stream} -> feed_body(Data, Stream);
		too_slow -> chain_info({body_error, too_slow}, Stream0#stream{keepalive = false, body = done})
	end.

feed_body(Data, Stream) ->
	case decode_body(Data, Stream) of
		{ok, Decoded, Stream2 = #stream{body = done}} ->
			chain_data(fin, Decoded, Stream2);
		{ok, Decoded, Stream2 = #stream{flow = Flow}} ->
			chain_data(nofin, Decoded, Stream2#stream{flow = Flow - byte_size(Decoded)});
		{error, Reason} ->
			chain_info({body_error, Reason}, Stream#stream{keepalive = false, body = done})
	end.

decode_body(Data, Stream = #stream{body = {length, Left}}) ->
	case Data of
		<<Body:Left/binary, Rest/bits>> ->
			{ok, Body, Stream#stream{body = done, buffer = Rest}};
		_ ->
			{ok, Data, Stream#stream{body = {length, Left - byte_size(Data)}}}
	end;
decode_body(Data, Stream = #stream{body = {chunked, State}}) ->
	case mustang_http1_codec:decode_chunked(Data, State) of
		{more, Decoded, State2} -> {ok, iolist_to_binary(Decoded), Stream#stream{body = {chunked, State2}}};
		{done, Decoded, Rest} -> {ok, iolist_to_binary(Decoded), Stream#stream{body = done, buffer = Rest}};
		{error, Error = {http_error, _, _}} -> {error, Error}
	end.

%% min_recv_rate (mustang_conn_chores:recv_rate/3): a body slower than the
%% minimum is refused (408: the read fails with too_slow) and the
%% connection closes.
check_rate(_, Stream = #stream{min_rate = off}) ->
	{ok, Stream};
check_rate(_, Stream = #stream{rate = undefined}) ->
	{ok, Stream};
check_rate(Size, Stream = #stream{min_rate = MinRate, rate = Rate}) ->
	case mustang_conn_chores:recv_rate(MinRate, Rate, Size) of
		{ok, Rate2} -> {ok, Stream#stream{rate = Rate2}};
		too_slow -> too_slow
	end.

%% Unread body: discard it when it is small enough, else close (RFC 9112 9.3).
%% A client that asked for 100-continue and was never told to continue may
%% not send the body at all: waiting for it would hang, so close. The socket
%% is passive here.
-spec skip_body(#stream{}) -> #stream{}.
skip_body(Stream0) ->
	case close_if_body_unskippable(Stream0) of
		Stream = #stream{body = done} -> Stream;
		Stream = #stream{keepalive = false} -> Stream;
		Stream = #stream{max_skip = Max} -> skip_buffered(Stream, Max)
	end.

skip_buffered(Stream = #stream{buffer = <<>>}, Left) ->
	skip_loop(Stream, Left);
skip_buffered(Stream = #stream{buffer = Buffer}, Left) ->
	skip_data(Buffer, Stream#stream{buffer = <<>>}, Left).

skip_data(Data, Stream0, Left) ->
	case check_rate(byte_size(Data), Stream0) of
		{ok, Stream} -> skip_decoded(Data, Stream, Left);
		too_slow -> Stream0#stream{keepalive = false}
	end.

skip_decoded(Data, Stream, Left) ->
	case decode_body(Data, Stream) of
		{ok, Decoded, Stream2 = #stream{body = done}} when byte_size(Decoded) =< Left ->
			Stream2;
		{ok, Decoded, Stream2} when byte_size(Decoded) =< Left ->
			skip_loop(Stream2, Left - byte_size(Decoded));
		_ ->
			Stream#stream{keepalive = false}
	end.

skip_loop(Stream = #stream{transport = Transport, socket = Socket, idle_timeout = Timeout}, Left) ->
	case Transport:recv(Socket, 0, Timeout) of
		{ok, Data} -> skip_data(Data, Stream, Left);
		{error, _} -> Stream#stream{keepalive = false}
	end.
