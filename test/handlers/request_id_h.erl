%% The worked example of doc/guide/streams.md: a stream handler that gives
%% every response an x-request-id header (the client's own when it sent a
%% sane one, else a new random id) and counts the response body bytes, which
%% it logs with the id when the stream ends.
%%
%%   stream_handlers => [request_id_h, mustang_stream_h]
%%
%% Setting: request_id_header (<<"x-request-id">>), the header name, in the
%% `env' protocol option (Mustang refuses protocol options it does not know).
-module(request_id_h).
-behaviour(mustang_stream).

-include_lib("kernel/include/logger.hrl").

-export([init/3, data/4, info/3, terminate/3, early_error/5]).

-record(state, {
	next :: mustang_stream:state(),
	name :: binary(),
	id :: binary(),
	bytes = 0 :: non_neg_integer()
}).

-spec init(mustang_stream:streamid(), mustang_req:req(), map())
	-> {mustang_stream:commands(), #state{}}.
init(StreamID, Req, Opts) ->
	Name = header_name(Opts),
	Id = request_id(Name, maps:get(headers, Req, #{})),
	{Commands0, Next} = mustang_stream:init(StreamID, Req, Opts),
	commands(Commands0, #state{next = Next, name = Name, id = Id}).

-spec data(mustang_stream:streamid(), mustang_stream:fin(), binary(), #state{})
	-> {mustang_stream:commands(), #state{}}.
data(StreamID, IsFin, Data, State = #state{next = Next0}) ->
	{Commands, Next} = mustang_stream:data(StreamID, IsFin, Data, Next0),
	commands(Commands, State#state{next = Next}).

-spec info(mustang_stream:streamid(), any(), #state{})
	-> {mustang_stream:commands(), #state{}}.
info(StreamID, Info, State = #state{next = Next0}) ->
	{Commands, Next} = mustang_stream:info(StreamID, Info, Next0),
	commands(Commands, State#state{next = Next}).

-spec terminate(mustang_stream:streamid(), mustang_stream:reason(), #state{}) -> any().
terminate(StreamID, Reason, #state{next = Next, id = Id, bytes = Bytes}) ->
	?LOG_INFO("request ~s: ~b response bytes", [Id, Bytes],
		#{request_id => Id, resp_bytes => Bytes}),
	mustang_stream:terminate(StreamID, Reason, Next).

%% Early errors get an id too.
-spec early_error(mustang_stream:streamid(), mustang_stream:reason(),
	mustang_stream:partial_req(), Resp, map()) -> Resp
	when Resp :: mustang_stream:resp_command().
early_error(StreamID, Reason, PartialReq, Resp0, Opts) ->
	{response, Status, Headers, Body} =
		mustang_stream:early_error(StreamID, Reason, PartialReq, Resp0, Opts),
	{response, Status, Headers#{header_name(Opts) => new_id()}, Body}.

header_name(Opts) ->
	maps:get(request_id_header, maps:get(env, Opts, #{}), <<"x-request-id">>).

%% Adds the header to what starts a response, counts what makes its body,
%% and passes everything else on unchanged.
commands(Commands, State) ->
	lists:mapfoldl(fun command/2, State, Commands).

command({response, Status, Headers, Body}, State) ->
	{{response, Status, add_id(Headers, State), Body}, count(Body, State)};
%% Sent only if no response started: its body is not counted here.
command({error_response, Status, Headers, Body}, State) ->
	{{error_response, Status, add_id(Headers, State), Body}, State};
command({headers, Status, Headers}, State) ->
	{{headers, Status, add_id(Headers, State)}, State};
command(Command = {data, _, Body}, State) ->
	{Command, count(Body, State)};
command(Command, State) ->
	{Command, State}.

add_id(Headers, #state{name = Name, id = Id}) ->
	Headers#{Name => Id}.

count({sendfile, _, Length, _}, State = #state{bytes = Bytes}) ->
	State#state{bytes = Bytes + Length};
count(Data, State = #state{bytes = Bytes}) ->
	State#state{bytes = Bytes + iolist_size(Data)}.

%% The client's id when it is 1 to 64 letters, digits, '-' or '_'.
request_id(Name, Headers) ->
	case Headers of
		#{Name := Id} when byte_size(Id) >= 1, byte_size(Id) =< 64 ->
			case re:run(Id, "^[A-Za-z0-9_-]+$", [{capture, none}]) of
				match -> Id;
				nomatch -> new_id()
			end;
		_ ->
			new_id()
	end.

new_id() ->
	binary:encode_hex(<<(rand:uniform(1 bsl 64) - 1):64>>).
