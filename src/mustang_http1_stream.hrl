%% The state of one HTTP/1.1 request and its response (mustang_http1_stream),
%% shared with the connection process (mustang_http1).
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
	%% The client waits for 100 Continue before it sends the body.
	expect :: boolean(),
	%% The client accepts trailers in a chunked response (TE: trailers,
	%% RFC 9110 10.1.4).
	te_trailers :: boolean(),
	%% Bytes received past the request head and not decoded yet.
	buffer :: binary(),
	%% Response progress; identity counts the bytes content-length announced.
	resp = none :: none | chunked | {identity, non_neg_integer() | unknown} | close_delimited
		| done | {switch, module(), any()},
	dynbuf :: mustang_dynbuf:dynbuf() | undefined,
	active_n :: mustang_conn_chores:active(),
	%% How long a body read may wait for data, and how much unread body
	%% may be discarded to keep the connection.
	idle_timeout :: timeout(),
	max_skip :: non_neg_integer(),
	logger :: module(),
	%% The stream handlers.
	chain :: mustang_stream:state(),
	%% What the stream handlers asked the connection for: a process of the
	%% request, an inline run, request body bytes (flow), the end (stopped).
	child = undefined :: pid() | undefined,
	run = undefined :: undefined | {module(), atom(), list()},
	flow = 0 :: integer(),
	stopped = false :: boolean(),
	%% Why the stream ends, for terminate/3.
	reason = normal :: mustang_stream:reason(),
	%% The connection process. An inline handler reads the body in it from
	%% socket messages, as the connection does between requests; the first
	%% read from another process (a process the handler gave its Req to)
	%% makes the socket passive (read with recv from then on) and takes the
	%% socket data already sent to the connection out of a copy of its
	%% mailbox: taken counts those messages, which the connection drops.
	owner :: pid(),
	%% The connection's parent, for sys while an inline loop handler waits.
	parent :: pid() | undefined,
	passive = false :: boolean(),
	taken = 0 :: non_neg_integer(),
	%% min_recv_rate: at least Bytes of body in every Period ms, counted
	%% from the start of the body (rate: the current period's start, bytes).
	min_rate :: off | {pos_integer(), pos_integer()},
	rate = undefined :: undefined | mustang_conn_chores:recv_rate(),
	%% The result of the last socket write.
	sent = ok :: ok | {error, any()},
	%% The listener's status (mustang:drain/2), read when a response starts.
	listener :: mustang_conn_limit:limit() | undefined
}).
