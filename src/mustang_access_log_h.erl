%% Access log stream handler: one log event per request (when the stream
%% ends) and per early error, through OTP's logger at level info with the
%% metadata #{domain => [mustang, access]}, so that a standard handler
%% (logger_std_h: file, rotation) filtered on that domain writes the access
%% log. See doc/guide/streams.md for a configuration.
%%
%%   stream_handlers => [mustang_access_log_h, mustang_stream_h]
%%
%% Protocol options (defaults in parentheses):
%%   access_log_format (common)   common:   Common Log Format
%%                                  127.0.0.1 - - [10/Oct/2024:13:55:36 +0200] "GET /a?b=1 HTTP/1.1" 200 2326
%%                                combined: common + "Referer" "User-Agent"
%%                                json:     one JSON object per line with the
%%                                  keys time, peer, method, target, version,
%%                                  status, bytes, referer, user_agent,
%%                                  duration_us, early_error
%%   access_log_peer (socket)     socket: peer is the socket's peer;
%%                                proxy_header: the source address of the
%%                                  PROXY protocol header (protocol option
%%                                  proxy_header), the client behind the
%%                                  proxy; the socket's peer when there is
%%                                  none (LOCAL command, UNKNOWN, UNIX)
%%
%% Fields: peer is the client IP address; target is path, plus "?" and the
%% query string when there is one; version is HTTP/1.0, HTTP/1.1 or HTTP/2.0;
%% status is the final status sent (500 when the stream ended with an
%% internal error before any response), "-" / null when none was sent; bytes
%% counts the response body as the handlers gave it (sendfile lengths
%% included, framing and headers excluded; 0 for HEAD), "-" for 0 in the
%% common and combined formats as Apache does; the time is the request's
%% arrival, local time; duration_us is the time from the request's arrival
%% at this handler to the end of the stream, in microseconds (null for early
%% errors). Quotes, backslashes and control bytes in the text fields are
%% escaped (\" \\ \xHH; JSON escapes in json).
%%
%% Cost: nothing is recorded when logger would drop an info event from this
%% module (logger:allow/2 is checked in init/3), and the line is only built
%% by the logger handler that writes it: the event is a report map whose
%% report_cb (format_report/1) formats it. The report map has the keys
%% format, time (system time, microseconds), peer, method, target, version,
%% status, bytes, referer, user_agent, duration_us and early_error, for
%% custom formatters.
-module(mustang_access_log_h).
-behaviour(mustang_stream).

-include_lib("kernel/include/logger.hrl").

-export([init/3]).
-export([data/4]).
-export([info/3]).
-export([terminate/3]).
-export([early_error/5]).

%% The report callback, and the formatting, for tests and custom uses.
-export([format_report/1]).
-export([format/1]).

-type format() :: common | combined | json.
-type report() :: #{
	format := format(),
	time := integer(),
	peer := inet:ip_address() | undefined,
	method := binary() | undefined,
	target := binary() | undefined,
	version := atom() | undefined,
	status := non_neg_integer() | undefined,
	bytes := non_neg_integer(),
	referer := binary() | undefined,
	user_agent := binary() | undefined,
	duration_us := non_neg_integer() | undefined,
	early_error := boolean()
}.
-export_type([format/0, report/0]).

-record(state, {
	next :: mustang_stream:state(),
	%% false: logging is off, everything is passed on untouched.
	enabled = false :: boolean(),
	format = common :: format(),
	start :: integer() | undefined,
	time :: integer() | undefined,
	peer :: inet:ip_address() | undefined,
	method :: binary() | undefined,
	target :: binary() | undefined,
	version :: atom() | undefined,
	referer :: binary() | undefined,
	user_agent :: binary() | undefined,
	head = false :: boolean(),
	status :: non_neg_integer() | undefined,
	bytes = 0 :: non_neg_integer()
}).

%% When `logger` would let an info event of this module through, records the
%% request's arrival and its fields (method, target, version, peer after
%% `access_log_peer`, referer, user agent), then runs the rest of the chain.
-spec init(mustang_stream:streamid(), mustang_req:req(), map())
	-> {mustang_stream:commands(), #state{}}.
init(StreamID, Req, Opts) ->
	case logger:allow(info, ?MODULE) of
		true ->
			Start = erlang:monotonic_time(),
			Time = erlang:system_time(microsecond),
			{Commands, Next} = mustang_stream:init(StreamID, Req, Opts),
			Headers = maps:get(headers, Req, #{}),
			Method = maps:get(method, Req, undefined),
			State = #state{next = Next, enabled = true,
				format = maps:get(access_log_format, Opts, common),
				start = Start, time = Time, peer = peer_ip(Req, Opts), method = Method,
				target = target(Req), version = maps:get(version, Req, undefined),
				referer = header(<<"referer">>, Headers),
				user_agent = header(<<"user-agent">>, Headers),
				head = Method =:= <<"HEAD">>},
			{Commands, fold(Commands, State)};
		false ->
			{Commands, Next} = mustang_stream:init(StreamID, Req, Opts),
			{Commands, #state{next = Next}}
	end.

%% Passes the request body on and records what the commands that come back
%% say (status, response body bytes).
-spec data(mustang_stream:streamid(), mustang_stream:fin(), binary(), #state{})
	-> {mustang_stream:commands(), #state{}}.
data(StreamID, IsFin, Data, State = #state{next = Next0}) ->
	{Commands, Next} = mustang_stream:data(StreamID, IsFin, Data, Next0),
	{Commands, fold(Commands, State#state{next = Next})}.

%% Passes the info on and records the status and response body bytes of the
%% commands that come back.
-spec info(mustang_stream:streamid(), any(), #state{}) -> {mustang_stream:commands(), #state{}}.
info(StreamID, Info, State = #state{next = Next0}) ->
	{Commands, Next} = mustang_stream:info(StreamID, Info, Next0),
	{Commands, fold(Commands, State#state{next = Next})}.

%% Status and body bytes from the commands going up.
fold(_, State = #state{enabled = false}) ->
	State;
fold([], State) ->
	State;
fold([{response, Status, _, Body} | Tail], State) ->
	fold(Tail, body(Body, State#state{status = status(Status)}));
fold([{error_response, Status, _, Body} | Tail], State = #state{status = undefined}) ->
	fold(Tail, body(Body, State#state{status = status(Status)}));
fold([{headers, Status, _} | Tail], State) ->
	fold(Tail, State#state{status = status(Status)});
fold([{data, _, Body} | Tail], State) ->
	fold(Tail, body(Body, State));
fold([{switch_protocol, _, _, _} | Tail], State) ->
	fold(Tail, State#state{status = 101});
fold([{internal_error, _, _} | Tail], State = #state{status = undefined}) ->
	fold(Tail, State#state{status = 500});
fold([_ | Tail], State) ->
	fold(Tail, State).

body(_, State = #state{head = true}) ->
	State;
body({sendfile, _, Length, _}, State = #state{bytes = Bytes}) ->
	State#state{bytes = Bytes + Length};
body(Data, State = #state{bytes = Bytes}) ->
	State#state{bytes = Bytes + iolist_size(Data)}.

%% Runs the rest of the chain, then logs one event at level `info` with the
%% domain `[mustang, access]`: a report map formatted by `format_report/1` in
%% the `access_log_format`.
-spec terminate(mustang_stream:streamid(), mustang_stream:reason(), #state{}) -> any().
terminate(StreamID, Reason, #state{next = Next, enabled = false}) ->
	mustang_stream:terminate(StreamID, Reason, Next);
terminate(StreamID, Reason, State = #state{next = Next}) ->
	Result = mustang_stream:terminate(StreamID, Reason, Next),
	Status = case {State#state.status, Reason} of
		{undefined, {internal_error, _, _}} -> 500;
		{S, _} -> S
	end,
	Duration = erlang:convert_time_unit(erlang:monotonic_time() - State#state.start,
		native, microsecond),
	log(#{
		format => State#state.format,
		time => State#state.time,
		peer => State#state.peer,
		method => State#state.method,
		target => State#state.target,
		version => State#state.version,
		status => Status,
		bytes => State#state.bytes,
		referer => State#state.referer,
		user_agent => State#state.user_agent,
		duration_us => Duration,
		early_error => false
	}),
	Result.

%% Logs one event for a request refused before any handler ran (`early_error`
%% true), with the response the rest of the chain returned.
-spec early_error(mustang_stream:streamid(), mustang_stream:reason(),
	mustang_stream:partial_req(), Resp, map()) -> Resp
	when Resp :: mustang_stream:resp_command().
early_error(StreamID, Reason, PartialReq, Resp0, Opts) ->
	Resp = mustang_stream:early_error(StreamID, Reason, PartialReq, Resp0, Opts),
	case logger:allow(info, ?MODULE) of
		true ->
			{response, Status, _, Body} = Resp,
			Headers = maps:get(headers, PartialReq, #{}),
			Method = maps:get(method, PartialReq, undefined),
			Bytes = case Method of
				<<"HEAD">> -> 0;
				_ -> body_size(Body)
			end,
			log(#{
				format => maps:get(access_log_format, Opts, common),
				time => erlang:system_time(microsecond),
				peer => peer_ip(PartialReq, Opts),
				method => Method,
				target => target(PartialReq),
				version => maps:get(version, PartialReq, undefined),
				status => status(Status),
				bytes => Bytes,
				referer => header(<<"referer">>, Headers),
				user_agent => header(<<"user-agent">>, Headers),
				duration_us => undefined,
				early_error => true
			});
		false ->
			ok
	end,
	Resp.

log(Report) ->
	?LOG_INFO(Report, #{domain => [mustang, access], report_cb => fun ?MODULE:format_report/1}).

body_size({sendfile, _, Length, _}) -> Length;
body_size(Data) -> iolist_size(Data).

peer_ip(#{proxy_header := #{src_address := IP}}, #{access_log_peer := proxy_header})
		when is_tuple(IP) ->
	IP;
peer_ip(#{peer := {IP, _}}, _) -> IP;
peer_ip(_, _) -> undefined.

target(#{path := Path, qs := Qs}) when Qs =/= <<>> -> <<Path/binary, $?, Qs/binary>>;
target(#{path := Path}) -> Path;
target(_) -> undefined.

header(Name, Headers) ->
	case Headers of
		#{Name := Value} -> iolist_to_binary(Value);
		_ -> undefined
	end.

status(Status) when is_integer(Status) ->
	Status;
status(<<D1, D2, D3, _/bits>>) when D1 >= $0, D1 =< $9, D2 >= $0, D2 =< $9, D3 >= $0, D3 =< $9 ->
	(D1 - $0) * 100 + (D2 - $0) * 10 + (D3 - $0);
status(_) ->
	undefined.

%% Formatting, done by the logger handler that writes the event.

%% The `report_cb` of the access log events: the line of a report map, in its
%% format (common, combined or JSON), without a newline. Logger handlers call
%% it; a formatter of your own may call it too.
-spec format_report(report()) -> {io:format(), [unicode:chardata()]}.
format_report(Report) ->
	{"~ts", [format(Report)]}.

%% The line of a report map as a binary, without a newline, in the report's
%% `format`: the Common Log Format
%% (`127.0.0.1 - - [10/Oct/2024:13:55:36 +0200] "GET /a?b=1 HTTP/1.1" 200 2326`),
%% the combined format, or one JSON object.
-spec format(report()) -> binary().
format(Report = #{format := json}) ->
	json(Report);
format(Report = #{format := combined}) ->
	#{referer := Referer, user_agent := UA} = Report,
	<<(clf(Report))/binary, " \"", (quoted(Referer))/binary, "\" \"",
		(quoted(UA))/binary, "\"">>;
format(Report) ->
	clf(Report).

clf(#{time := Time, peer := Peer, method := Method, target := Target, version := Version,
		status := Status, bytes := Bytes}) ->
	RequestLine = case {Method, Target, Version} of
		{undefined, _, _} -> <<"-">>;
		{_, undefined, _} -> quoted(Method);
		{_, _, undefined} -> <<(quoted(Method))/binary, " ", (quoted(Target))/binary>>;
		_ -> <<(quoted(Method))/binary, " ", (quoted(Target))/binary, " ",
			(version(Version))/binary>>
	end,
	StatusBin = case Status of
		undefined -> <<"-">>;
		_ -> integer_to_binary(Status)
	end,
	BytesBin = case Bytes of
		0 -> <<"-">>;
		_ -> integer_to_binary(Bytes)
	end,
	<<(peer(Peer))/binary, " - - [", (clf_time(Time))/binary, "] \"", RequestLine/binary,
		"\" ", StatusBin/binary, " ", BytesBin/binary>>.

peer(undefined) -> <<"-">>;
peer(IP) -> list_to_binary(inet:ntoa(IP)).

version('HTTP/2') -> <<"HTTP/2.0">>;
version('HTTP/3') -> <<"HTTP/3.0">>;
version(Version) when is_atom(Version) -> atom_to_binary(Version).

%% [10/Oct/2000:13:55:36 -0700], local time.
clf_time(Time) ->
	Seconds = Time div 1000000,
	{{Y, Mo, D}, {H, Mi, S}} = Local = calendar:system_time_to_local_time(Seconds, second),
	Offset = (calendar:datetime_to_gregorian_seconds(Local)
		- calendar:datetime_to_gregorian_seconds(
			calendar:system_time_to_universal_time(Seconds, second))) div 60,
	Sign = case Offset < 0 of
		true -> $-;
		false -> $+
	end,
	iolist_to_binary(io_lib:format("~2..0b/~s/~4..0b:~2..0b:~2..0b:~2..0b ~c~2..0b~2..0b",
		[D, month(Mo), Y, H, Mi, S, Sign, abs(Offset) div 60, abs(Offset) rem 60])).

month(1) -> "Jan"; month(2) -> "Feb"; month(3) -> "Mar"; month(4) -> "Apr";
month(5) -> "May"; month(6) -> "Jun"; month(7) -> "Jul"; month(8) -> "Aug";
month(9) -> "Sep"; month(10) -> "Oct"; month(11) -> "Nov"; month(12) -> "Dec".

%% Text inside a quoted CLF field: ", \ and bytes outside 32..126 escaped,
%% so that a client cannot forge or break lines.
quoted(undefined) -> <<"-">>;
quoted(Bin) -> << <<(escape_byte(C))/binary>> || <<C>> <= Bin >>.

escape_byte($") -> <<"\\\"">>;
escape_byte($\\) -> <<"\\\\">>;
escape_byte(C) when C >= 32, C =< 126 -> <<C>>;
escape_byte(C) -> iolist_to_binary(io_lib:format("\\x~2.16.0B", [C])).

json(#{time := Time, peer := Peer, method := Method, target := Target, version := Version,
		status := Status, bytes := Bytes, referer := Referer, user_agent := UA,
		duration_us := Duration, early_error := EarlyError}) ->
	Fields = [
		{<<"time">>, json_string(list_to_binary(calendar:system_time_to_rfc3339(Time,
			[{unit, microsecond}])))},
		{<<"peer">>, case Peer of
			undefined -> <<"null">>;
			_ -> json_string(peer(Peer))
		end},
		{<<"method">>, json_string(Method)},
		{<<"target">>, json_string(Target)},
		{<<"version">>, case Version of
			undefined -> <<"null">>;
			_ -> json_string(version(Version))
		end},
		{<<"status">>, json_integer(Status)},
		{<<"bytes">>, json_integer(Bytes)},
		{<<"referer">>, json_string(Referer)},
		{<<"user_agent">>, json_string(UA)},
		{<<"duration_us">>, json_integer(Duration)},
		{<<"early_error">>, atom_to_binary(EarlyError)}
	],
	iolist_to_binary([${, lists:join($,, [[$", K, $", $:, V] || {K, V} <- Fields]), $}]).

json_integer(undefined) -> <<"null">>;
json_integer(N) -> integer_to_binary(N).

json_string(undefined) ->
	<<"null">>;
json_string(Bin) ->
	%% Header values are bytes: text that is not UTF-8 is read as Latin-1.
	Chars = case unicode:characters_to_list(Bin) of
		L when is_list(L) -> L;
		_ -> binary_to_list(Bin)
	end,
	iolist_to_binary([$", [json_char(C) || C <- Chars], $"]).

json_char($") -> <<"\\\"">>;
json_char($\\) -> <<"\\\\">>;
json_char($\n) -> <<"\\n">>;
json_char($\r) -> <<"\\r">>;
json_char($\t) -> <<"\\t">>;
json_char(C) when C < 32; C =:= 127 -> io_lib:format("\\u~4.16.0b", [C]);
json_char(C) -> unicode:characters_to_binary([C]).
