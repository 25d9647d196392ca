%% Dynamic socket buffer: keeps an exponential moving average of the size of
%% the data each socket message carries and sizes the socket's `buffer` option
%% to fit. Large bodies get large reads (fewer messages, fewer appends); idle
%% and small-request connections keep a small buffer (less memory).
%%
%% The size doubles when the average passes 90% of it or a read fills it,
%% and halves when the average falls below 40%, within [Min, Max]. It is disabled (undefined) when
%% the user sets `buffer` in socket_opts, or sets dynamic_buffer => false.
-module(mustang_dynbuf).

-export([new/1]).
-export([update/2]).
-export([size/1]).
-export([for_listener/2]).
-export([update_socket/4]).

-opaque dynbuf() :: {Size :: pos_integer(), Average :: non_neg_integer(),
	Min :: pos_integer(), Max :: pos_integer()}.
-export_type([dynbuf/0]).

-spec new(false | {pos_integer(), pos_integer()}) -> dynbuf() | undefined.
new(false) ->
	undefined;
new({Min, Max}) when is_integer(Min), is_integer(Max), Min > 0, Max >= Min ->
	{Min, Min, Min, Max}.

%% Returns the new state and, when the buffer size must change, the new size
%% for the caller to set on its socket.
-spec update(non_neg_integer(), dynbuf() | undefined)
	-> {dynbuf() | undefined, keep | pos_integer()}.
update(_, undefined) ->
	{undefined, keep};
update(DataSize, {Size, Average0, Min, Max}) ->
	Average = (Average0 * 7 + DataSize) bsr 3,
	if
		%% A read that filled the buffer left data in the socket: messages a
		%% little larger than the buffer (a 1 KiB Websocket frame and its
		%% header) would otherwise always take two reads, and their average
		%% never pass 90%.
		%% The average is raised to half the new size, or the next reads
		%% (smaller than the buffer, as they now fit) would halve it back.
		DataSize >= Size, Size < Max ->
			NewSize = min(Size * 2, Max),
			{{NewSize, max(Average, NewSize div 2), Min, Max}, NewSize};
		Average * 10 > Size * 9, Size < Max ->
			NewSize = min(Size * 2, Max),
			{{NewSize, Average, Min, Max}, NewSize};
		Average * 10 < Size * 4, Size > Min ->
			NewSize = max(Size div 2, Min),
			{{NewSize, Average, Min, Max}, NewSize};
		true ->
			{{Size, Average, Min, Max}, keep}
	end.

-spec size(dynbuf() | undefined) -> pos_integer() | undefined.
size(undefined) -> undefined;
size({Size, _, _, _}) -> Size.

%% The dynamic buffer of a new connection of listener Ref, for the
%% dynamic_buffer protocol option: off when the listener's socket_opts set
%% `buffer` (the user chose a size).
-spec for_listener(mustang:ref(), false | {pos_integer(), pos_integer()}) -> dynbuf() | undefined.
for_listener(Ref, Setting) ->
	UserBuffer = try mustang_registry:get_transport_opts(Ref) of
		#{socket_opts := SocketOpts} -> lists:keymember(buffer, 1, SocketOpts);
		_ -> false
	catch error:badarg ->
		false
	end,
	case UserBuffer of
		true -> undefined;
		false -> new(Setting)
	end.

%% update/2 for a socket read of Size bytes, setting the socket's `buffer`
%% when the size changes.
-spec update_socket(non_neg_integer(), dynbuf() | undefined, module(), mustang_transport:socket())
	-> dynbuf() | undefined.
update_socket(Size, DynBuf0, Transport, Socket) ->
	case update(Size, DynBuf0) of
		{DynBuf, keep} ->
			DynBuf;
		{DynBuf, NewSize} ->
			_ = Transport:setopts(Socket, [{buffer, NewSize}]),
			DynBuf
	end.
