%% Helpers shared by the end-to-end suites (rfc9112, limits, req, clients,
%% http2, websocket, ws_reference).
%%
%% Groups and listeners. The HTTP/1.1 suites run each test in two groups,
%% `inline' (the handler runs in the connection process, the default) and
%% `process' (protocol option request_process => true): common_all/0 and
%% common_groups/1. Suites whose tests mean the same over every transport
%% add two HTTP/2 groups with common_all(all) and common_groups(all, Tests)
%% or common_groups(all, Tests, Http1OnlyTests): `h2c' (clear listener,
%% HTTP/2 by prior knowledge) and `h2' (TLS listener, ALPN h2, with the demo's
%% self-signed certificate from mustang_demo:tls_opts/0). init_group/4 starts
%% the group's listener on port 0 (default protocol options plus the routes
%% and the extra options) and stores in the Config:
%%   {ref, Ref}, {port, Port}, {group, Group},
%%   {transport, http1 | h2c | h2}   what the transport-neutral client speaks
%%   {mode, inline | process}        where handlers run: always process over
%%                                   HTTP/2, whatever request_process says
%%
%% Transport-neutral client: open/1,2, send_request/5, send_body/4,
%% send_trailers/3, await/2,3, close/1, sockname/1, and request/5,6 for one
%% request on a new connection. It speaks HTTP/1.1 with the raw client below
%% (requests pipelined on one connection, so await them in the order they
%% were sent) and HTTP/2 with mustang_h2_client (streams, flow control). A
%% request is a method, a path (with the query), headers [{Name, Value}]
%% and a body:
%%   none              no body (HTTP/2: END_STREAM on HEADERS)
%%   iodata            the body, with content-length added unless the
%%                     headers have content-length or transfer-encoding
%%   {parts, [iodata]} a body of unknown length in several parts: HTTP/1.1
%%                     chunked (one chunk per part), HTTP/2 one DATA run per
%%                     part; when the headers have content-length or
%%                     transfer-encoding, HTTP/1.1 sends the parts as they are
%%   nofin             the body comes later with send_body/4 (same framing as
%%                     parts), or send_trailers/3
%% Without a host header the request gets "host: localhost" (HTTP/2: the
%% host header becomes :authority). HTTP/1.1 sends header names as given,
%% HTTP/2 lowercases them. The response is a map:
%%   #{version, status, headers => [{LowercaseName, Value}], body,
%%     trailers => [{Name, Value}], informs => [#{status, headers}]}
%% plus, over HTTP/1.1, reason and raw (the exact bytes of the final
%% response; informs have their raw too). Errors: {error, Reason}, see
%% await/3.
%%
%% Raw HTTP/1.1 client: connect/1, send/2 and recv_response/1,2 read one
%% response at a time from a passive gen_tcp socket, keeping the bytes past
%% it for the next call (pipelining). A response is a map:
%%   #{version, status, reason, headers => [{LowercaseName, Value}], body,
%%     trailers => [{Name, Value}], raw => the exact bytes read}
%% {error, closed} and {error, timeout} are returned instead when the socket
%% closes or nothing complete arrives in time.
-module(mustang_test).

-include_lib("common_test/include/ct.hrl").

%% Groups and listeners.
-export([common_all/0]).
-export([common_all/1]).
-export([common_groups/1]).
-export([common_groups/2]).
-export([common_groups/3]).
-export([proto_opts/3]).
-export([start_listener/4]).
-export([stop_listener/1]).
-export([init_group/4]).
-export([end_group/1]).
-export([mode/1]).
-export([port/1]).
-export([ref/2]).
-export([transport/1]).
-export([is_http2/1]).
-export([scheme/1]).
-export([default_port/1]).
-export([start_group_listener/4]).

%% Transport-neutral client.
-export([open/1]).
-export([open/2]).
-export([send_request/5]).
-export([send_body/4]).
-export([send_trailers/3]).
-export([await/2]).
-export([await/3]).
-export([sockname/1]).
-export([request/5]).
-export([request/6]).

%% Raw client.
-export([connect/1]).
-export([send/2]).
-export([recv_response/1]).
-export([recv_response/2]).
-export([recv_all/2]).
-export([wait_closed/2]).
-export([close/1]).
-export([request/2]).
-export([get/2]).
-export([get/3]).
-export([get_req/1]).
-export([get_req/2]).
-export([header/2]).
-export([headers/2]).
-export([parse_term/1]).
-export([count/2]).
-export([assert_new_connection_ok/1]).
-export([doc/1]).

%% External programs (real clients, h2spec, reference servers) and the JSON
%% they print.
-export([root/0]).
-export([python/0]).
-export([require_python/2]).
-export([tool/3]).
-export([run/3]).
-export([run/4]).
-export([kill_port/1]).
-export([kill_os_pid/1]).
-export([start_program/5]).
-export([program_output/1]).
-export([node_path/0]).
-export([json/1]).
-export([wait_until/2]).
-export([curl_args/2]).

-define(TIMEOUT, 5000).

%% Groups and listeners.

common_all() ->
	[{group, inline}, {group, process}].

%% The two HTTP/1.1 groups and the two HTTP/2 ones.
common_all(all) ->
	common_all() ++ [{group, h2c}, {group, h2}].

common_groups(Tests) ->
	[{inline, [], Tests}, {process, [], Tests}].

common_groups(all, Tests) ->
	common_groups(all, Tests, []).

%% Http1Only: tests about HTTP/1.1 itself, run in inline and process only.
common_groups(all, Tests, Http1Only) ->
	common_groups(Tests ++ Http1Only) ++ [{h2c, [], Tests}, {h2, [], Tests}].

proto_opts(Routes, Mode, Extra) ->
	maps:merge(#{
		env => #{dispatch => mustang_router:compile(Routes)},
		request_process => Mode =:= process
	}, Extra).

%% Starts a clear listener on port 0; returns its port.
start_listener(Ref, Routes, Mode, Extra) ->
	{ok, _} = mustang:start_clear(Ref, #{port => 0}, proto_opts(Routes, Mode, Extra)),
	mustang:get_port(Ref).

stop_listener(Ref) ->
	ok = mustang:stop_listener(Ref).

init_group(Group, Config, Routes, Extra) ->
	{Transport, Mode} = case Group of
		inline -> {http1, inline};
		process -> {http1, process};
		h2c -> {h2c, process};
		h2 -> {h2, process}
	end,
	Ref = {?MODULE, proplists:get_value(suite, Config, unknown), Group},
	Config2 = [{group, Group}, {transport, Transport}, {mode, Mode} | Config],
	Port = start_group_listener(Ref, Routes, Config2, Extra),
	[{ref, Ref}, {port, Port} | Config2].

%% A listener like the group's (clear, or TLS for h2); returns its port.
start_group_listener(Ref, Routes, Config, Extra) ->
	case transport(Config) of
		h2 ->
			%% request_process does not apply to HTTP/2: left at its default.
			ProtoOpts = maps:merge(#{env => #{dispatch => mustang_router:compile(Routes)}}, Extra),
			{ok, _} = mustang:start_tls(Ref, #{port => 0, socket_opts => mustang_demo:tls_opts()},
				ProtoOpts),
			mustang:get_port(Ref);
		h2c ->
			start_listener(Ref, Routes, inline, Extra);
		http1 ->
			start_listener(Ref, Routes, mode(Config), Extra)
	end.

end_group(Config) ->
	stop_listener(?config(ref, Config)).

mode(Config) -> ?config(mode, Config).

port(Config) -> ?config(port, Config).

%% http1 when the Config has no transport (the two-group suites).
transport(Config) ->
	proplists:get_value(transport, Config, http1).

is_http2(Config) ->
	transport(Config) =/= http1.

scheme(Config) ->
	case transport(Config) of
		h2 -> <<"https">>;
		_ -> <<"http">>
	end.

default_port(Config) ->
	case transport(Config) of
		h2 -> 443;
		_ -> 80
	end.

%% A listener name unique to a test case and group.
ref(Name, Config) ->
	{Name, proplists:get_value(group, Config, mode(Config))}.

%% Transport-neutral client.

open(Config) ->
	open(Config, port(Config)).

%% A connection to Port, speaking what the Config's group speaks.
open(Config, Port) ->
	case transport(Config) of
		http1 ->
			#{transport => http1, socket => connect(Port)};
		Transport ->
			Kind = case Transport of h2c -> tcp; h2 -> tls end,
			{ok, Pid} = mustang_h2_client:connect(Kind, "127.0.0.1", Port, #{}),
			#{transport => Transport, pid => Pid}
	end.

send_request(#{transport := http1, socket := S}, Method, Path, Headers0, Body) ->
	Headers = case has_header(<<"host">>, Headers0) of
		true -> Headers0;
		false -> [{"host", "localhost"} | Headers0]
	end,
	HasLength = has_header(<<"content-length">>, Headers)
		orelse has_header(<<"transfer-encoding">>, Headers),
	Framing = case Body of
		none -> none;
		_ when HasLength -> raw;
		{parts, _} -> chunked;
		nofin -> chunked;
		_ -> length
	end,
	Extra = case Framing of
		chunked -> [{"transfer-encoding", "chunked"}];
		length -> [{"content-length", integer_to_list(iolist_size(Body))}];
		_ -> []
	end,
	Payload = case Body of
		none -> [];
		nofin -> [];
		{parts, Parts} when Framing =:= raw -> Parts;
		{parts, Parts} -> [[chunk(P) || P <- Parts], "0\r\n\r\n"];
		_ -> Body
	end,
	ok = send(S, [Method, " ", Path, " HTTP/1.1\r\n",
		[[N, ": ", V, "\r\n"] || {N, V} <- Headers ++ Extra], "\r\n", Payload]),
	{http1, iolist_to_binary(Method), Framing};
send_request(#{pid := Pid}, Method, Path, Headers0, Body) ->
	%% The same content-length rule as HTTP/1.1 (RFC 9113 8.1.1 allows it).
	Headers = case Body of
		none -> Headers0;
		nofin -> Headers0;
		{parts, _} -> Headers0;
		_ ->
			case has_header(<<"content-length">>, Headers0) of
				true -> Headers0;
				false -> Headers0 ++ [{"content-length", integer_to_list(iolist_size(Body))}]
			end
	end,
	{ok, StreamID} = mustang_h2_client:request(Pid, Method, Path, Headers, Body),
	StreamID.

has_header(Name, Headers) ->
	lists:any(fun({N, _}) -> string:lowercase(iolist_to_binary(N)) =:= Name end, Headers).

chunk(Data) ->
	case iolist_size(Data) of
		0 -> [];
		Size -> [integer_to_list(Size, 16), "\r\n", Data, "\r\n"]
	end.

%% More body for a request sent with nofin.
send_body(#{transport := http1, socket := S}, {http1, _, Framing}, IsFin, Data) ->
	case {Framing, IsFin} of
		{raw, _} -> send(S, Data);
		{chunked, nofin} -> send(S, chunk(Data));
		{chunked, fin} -> send(S, [chunk(Data), "0\r\n\r\n"])
	end;
send_body(#{pid := Pid}, StreamID, IsFin, Data) ->
	mustang_h2_client:send_body(Pid, StreamID, IsFin, Data).

%% Ends a request sent with nofin (HTTP/1.1: chunked only) with trailers.
send_trailers(#{transport := http1, socket := S}, {http1, _, chunked}, Trailers) ->
	send(S, ["0\r\n", [[N, ": ", V, "\r\n"] || {N, V} <- Trailers], "\r\n"]);
send_trailers(#{pid := Pid}, StreamID, Trailers) ->
	mustang_h2_client:send_trailers(Pid, StreamID, Trailers).

await(Conn, Stream) ->
	await(Conn, Stream, ?TIMEOUT).

%% The whole response, or {error, Reason}: timeout (nothing whole within
%% Timeout ms), closed; over HTTP/2 also {stream_error, Code} (RST_STREAM),
%% {goaway, Code, Debug} and the others of mustang_h2_client:await/3.
await(#{transport := http1, socket := S}, {http1, Method, _}, Timeout) ->
	await_http1(S, Method, Timeout, []);
await(#{pid := Pid}, StreamID, Timeout) ->
	case mustang_h2_client:await(Pid, StreamID, Timeout) of
		{ok, Resp} -> Resp;
		Error -> Error
	end.

%% 1xx responses other than 101 go into informs (RFC 9110 15.2).
await_http1(S, Method, Timeout, Informs) ->
	case recv_response(S, #{timeout => Timeout, head => Method =:= <<"HEAD">>}) of
		#{status := Status, headers := Headers, raw := Raw} when Status >= 100, Status < 200,
				Status =/= 101 ->
			Inform = #{status => Status, headers => Headers, raw => Raw},
			await_http1(S, Method, Timeout, [Inform | Informs]);
		Resp = #{} ->
			Resp#{informs => lists:reverse(Informs)};
		Error ->
			Error
	end.

sockname(#{transport := http1, socket := S}) ->
	inet:sockname(S);
sockname(#{pid := Pid}) ->
	mustang_h2_client:sockname(Pid).

request(Config, Method, Path, Headers, Body) ->
	request(Config, Method, Path, Headers, Body, #{}).

%% One request on a new connection. Options: timeout (ms, default 5000),
%% port (default the group's).
request(Config, Method, Path, Headers, Body, Opts) ->
	Conn = open(Config, maps:get(port, Opts, port(Config))),
	try
		await(Conn, send_request(Conn, Method, Path, Headers, Body),
			maps:get(timeout, Opts, ?TIMEOUT))
	after
		close(Conn)
	end.

%% Raw client.

connect(Port) ->
	{ok, S} = gen_tcp:connect("127.0.0.1", Port, [binary, {active, false}, {nodelay, true}]),
	S.

send(S, Data) ->
	gen_tcp:send(S, Data).

%% A raw socket or a transport-neutral connection.
close(#{transport := http1, socket := S}) ->
	close(S);
close(#{pid := Pid}) ->
	mustang_h2_client:close(Pid);
close(S) ->
	erase({?MODULE, buffer, S}),
	gen_tcp:close(S).

recv_response(S) ->
	recv_response(S, #{}).

%% Options: timeout (ms, default 5000), head (true when the request was HEAD:
%% no body is read whatever the headers say).
recv_response(S, Opts) ->
	Timeout = maps:get(timeout, Opts, ?TIMEOUT),
	Deadline = erlang:monotonic_time(millisecond) + Timeout,
	Buffer = take_buffer(S),
	case read_head(S, Buffer, 0, Deadline) of
		{ok, Head, Rest} ->
			Resp0 = parse_head(Head),
			case read_body(S, Resp0, Rest, Opts, Deadline) of
				{ok, Resp, Raw, Rest2} ->
					put_buffer(S, Rest2),
					Resp#{raw => <<Head/binary, Raw/binary>>};
				{error, Reason, Unused} ->
					put_buffer(S, <<Head/binary, Unused/binary>>),
					{error, Reason}
			end;
		{error, Reason, Unused} ->
			put_buffer(S, Unused),
			{error, Reason}
	end.

take_buffer(S) ->
	case erase({?MODULE, buffer, S}) of
		undefined -> <<>>;
		Buffer -> Buffer
	end.

put_buffer(_, <<>>) -> ok;
put_buffer(S, Buffer) -> put({?MODULE, buffer, S}, Buffer), ok.

recv_more(S, Buffer, Deadline) ->
	Wait = max(0, Deadline - erlang:monotonic_time(millisecond)),
	case gen_tcp:recv(S, 0, Wait) of
		{ok, Data} -> {ok, <<Buffer/binary, Data/binary>>};
		{error, Reason} when Reason =:= closed; Reason =:= econnreset -> {error, closed};
		{error, Reason} -> {error, Reason}
	end.

read_head(S, Buffer, From, Deadline) ->
	case binary:match(Buffer, <<"\r\n\r\n">>, [{scope, {From, byte_size(Buffer) - From}}]) of
		{Pos, 4} ->
			<<Head:(Pos + 4)/binary, Rest/bits>> = Buffer,
			{ok, Head, Rest};
		nomatch ->
			case recv_more(S, Buffer, Deadline) of
				{ok, Buffer2} -> read_head(S, Buffer2, max(0, byte_size(Buffer) - 3), Deadline);
				{error, Reason} -> {error, Reason, Buffer}
			end
	end.

parse_head(Head) ->
	[StatusLine | Lines] = binary:split(Head, <<"\r\n">>, [global, trim_all]),
	[Version, StatusBin | ReasonParts] = binary:split(StatusLine, <<" ">>, [global]),
	#{
		version => Version,
		status => binary_to_integer(StatusBin),
		reason => iolist_to_binary(lists:join(<<" ">>, ReasonParts)),
		headers => [parse_header_line(L) || L <- Lines],
		body => <<>>,
		trailers => []
	}.

parse_header_line(Line) ->
	[Name, Value] = binary:split(Line, <<":">>),
	{string:lowercase(Name), string:trim(Value, both, " \t")}.

read_body(S, Resp = #{status := Status, headers := Headers}, Rest, Opts, Deadline) ->
	NoBody = maps:get(head, Opts, false) orelse Status < 200 orelse Status =:= 204
		orelse Status =:= 304,
	TE = proplists:get_value(<<"transfer-encoding">>, Headers),
	CL = proplists:get_value(<<"content-length">>, Headers),
	if
		NoBody ->
			{ok, Resp, <<>>, Rest};
		TE =:= <<"chunked">> ->
			read_chunked(S, Resp, Rest, 0, [], Deadline);
		CL =/= undefined ->
			read_exact(S, Resp, Rest, binary_to_integer(CL), Deadline);
		true ->
			read_until_closed(S, Resp, Rest, Deadline)
	end.

read_exact(S, Resp, Buffer, Length, Deadline) ->
	case Buffer of
		<<Body:Length/binary, Rest/bits>> ->
			{ok, Resp#{body => Body}, Body, Rest};
		_ ->
			case recv_more(S, Buffer, Deadline) of
				{ok, Buffer2} -> read_exact(S, Resp, Buffer2, Length, Deadline);
				{error, Reason} -> {error, Reason, Buffer}
			end
	end.

read_until_closed(S, Resp, Buffer, Deadline) ->
	case recv_more(S, Buffer, Deadline) of
		{ok, Buffer2} -> read_until_closed(S, Resp, Buffer2, Deadline);
		{error, closed} -> {ok, Resp#{body => Buffer}, Buffer, <<>>};
		{error, Reason} -> {error, Reason, Buffer}
	end.

%% Pos is where the next chunk-size line starts in Buffer.
read_chunked(S, Resp, Buffer, Pos, Acc, Deadline) ->
	More = fun() ->
		case recv_more(S, Buffer, Deadline) of
			{ok, Buffer2} -> read_chunked(S, Resp, Buffer2, Pos, Acc, Deadline);
			{error, Reason} -> {error, Reason, Buffer}
		end
	end,
	case binary:match(Buffer, <<"\r\n">>, [{scope, {Pos, byte_size(Buffer) - Pos}}]) of
		nomatch ->
			More();
		{LineEnd, 2} ->
			SizeLine = binary:part(Buffer, Pos, LineEnd - Pos),
			[SizeHex | _] = binary:split(SizeLine, <<";">>),
			case binary_to_integer(string:trim(SizeHex), 16) of
				0 ->
					case binary:match(Buffer, <<"\r\n\r\n">>, [{scope, {LineEnd, byte_size(Buffer) - LineEnd}}]) of
						nomatch ->
							More();
						{End, 4} ->
							TrailerBin = binary:part(Buffer, LineEnd + 2, End + 2 - LineEnd - 2),
							Trailers = [parse_header_line(L)
								|| L <- binary:split(TrailerBin, <<"\r\n">>, [global, trim_all])],
							<<Raw:(End + 4)/binary, Rest/bits>> = Buffer,
							{ok, Resp#{body => iolist_to_binary(lists:reverse(Acc)),
								trailers => Trailers}, Raw, Rest}
					end;
				Size when byte_size(Buffer) >= LineEnd + 2 + Size + 2 ->
					<<_:(LineEnd + 2)/binary, Chunk:Size/binary, "\r\n", _/bits>> = Buffer,
					read_chunked(S, Resp, Buffer, LineEnd + 2 + Size + 2, [Chunk | Acc], Deadline);
				_ ->
					More()
			end
	end.

%% Everything until the peer closes: {closed, Bytes} or {timeout, Bytes}.
recv_all(S, Timeout) ->
	Deadline = erlang:monotonic_time(millisecond) + Timeout,
	recv_all_loop(S, take_buffer(S), Deadline).

recv_all_loop(S, Acc, Deadline) ->
	case recv_more(S, Acc, Deadline) of
		{ok, Acc2} -> recv_all_loop(S, Acc2, Deadline);
		{error, closed} -> {closed, Acc};
		{error, timeout} -> {timeout, Acc};
		{error, Reason} -> {Reason, Acc}
	end.

%% ok when the peer closes within Timeout ms having sent nothing more;
%% {data, Bytes} when it sent something; timeout otherwise.
wait_closed(S, Timeout) ->
	case recv_all(S, Timeout) of
		{closed, <<>>} -> ok;
		{timeout, <<>>} -> timeout;
		{_, Data} -> {data, Data}
	end.

%% One request on a new connection; returns the response.
request(Port, Data) ->
	S = connect(Port),
	ok = send(S, Data),
	Resp = recv_response(S),
	close(S),
	Resp.

get(Port, Path) ->
	get(Port, Path, []).

get(Port, Path, Headers) ->
	request(Port, get_req(Path, Headers)).

get_req(Path) ->
	get_req(Path, []).

get_req(Path, Headers) ->
	["GET ", Path, " HTTP/1.1\r\nhost: localhost\r\n",
		[[N, ": ", V, "\r\n"] || {N, V} <- Headers], "\r\n"].

header(Name, #{headers := Headers}) ->
	proplists:get_value(Name, Headers).

headers(Name, #{headers := Headers}) ->
	proplists:get_all_values(Name, Headers).

%% The handlers in test/handlers print Erlang terms with ~0p.
parse_term(Bin) ->
	{ok, Tokens, _} = erl_scan:string(binary_to_list(Bin) ++ "."),
	{ok, Term} = erl_parse:parse_term(Tokens),
	Term.

%% Occurrences of Pattern in Bin.
count(Pattern, Bin) ->
	length(binary:matches(Bin, Pattern)).

%% The server still answers GET / on a new connection.
assert_new_connection_ok(Port) ->
	#{status := 200, body := <<"Hello world!">>} = get(Port, "/"),
	ok.

%% The rule a test checks, shown as the test's comment in the CT logs.
doc(String) ->
	ct:comment("~ts", [String]).

%% External programs.

root() ->
	root(code:lib_dir(mustang)).

root("/") ->
	error(repository_root_not_found);
root(Dir) ->
	case filelib:is_regular(filename:join(Dir, "rebar.config")) of
		true -> Dir;
		false -> root(filename:dirname(Dir))
	end.

python() ->
	case os:getenv("MUSTANG_PYTHON") of
		Python when is_list(Python), Python =/= "" ->
			filename:absname(Python, root());
		_ ->
			filename:join(root(), "_tools/venv/bin/python")
	end.

%% Python, when it imports the modules (names); fails the test otherwise.
require_python(Python, Modules) ->
	case run(Python, ["-c", "import " ++ lists:join(", ", Modules)], 30000) of
		{0, _} -> Python;
		{_, Out} -> ct:fail("~s cannot import ~s (run scripts/setup.sh): ~s",
			[Python, lists:join("/", Modules), Out])
	end.

%% A required executable: $EnvVar, then the candidates, then PATH; fails the
%% test when none is there.
tool(Name, EnvVar, Candidates) ->
	Env = case EnvVar of
		undefined -> [];
		_ -> [P || P <- [os:getenv(EnvVar)], is_list(P), P =/= ""]
	end,
	case [P || P <- Env ++ Candidates, filelib:is_regular(P)] of
		[Path | _] -> Path;
		[] ->
			case os:find_executable(Name) of
				false -> ct:fail("~s not found: run scripts/setup.sh", [Name]);
				Path -> Path
			end
	end.

%% Runs a program (no shell): {ExitStatus | timeout, Output}, stderr merged.
run(Exe, Args, Timeout) ->
	run(Exe, Args, Timeout, []).

run(Exe, Args, Timeout, Env) ->
	Port = open_port({spawn_executable, Exe},
		[{args, Args}, {env, Env}, binary, exit_status, stderr_to_stdout, use_stdio, hide]),
	Deadline = erlang:monotonic_time(millisecond) + Timeout,
	collect_output(Port, [], Deadline).

collect_output(Port, Acc, Deadline) ->
	Wait = max(0, Deadline - erlang:monotonic_time(millisecond)),
	receive
		{Port, {data, Data}} -> collect_output(Port, [Data | Acc], Deadline);
		{Port, {exit_status, Status}} -> {Status, iolist_to_binary(lists:reverse(Acc))}
	after Wait ->
		kill_port(Port),
		{timeout, iolist_to_binary(lists:reverse(Acc))}
	end.

kill_port(Port) ->
	case erlang:port_info(Port, os_pid) of
		{os_pid, OsPid} -> kill_os_pid(OsPid);
		undefined -> ok
	end,
	catch port_close(Port),
	ok.

kill_os_pid(OsPid) ->
	_ = os:cmd("kill -9 " ++ integer_to_list(OsPid)),
	ok.

%% Starts a program that keeps running (a server), without a shell, stderr
%% merged; its output comes to the caller one line per message. Waits until
%% a line matches Ready (a regular expression) and returns
%% {Port, OsPid, Groups}, Groups being what the expression's groups captured
%% (binaries). Fails the test when the program exits or prints no such line
%% within Timeout ms. Stop it with kill_os_pid(OsPid) in end_per_testcase:
%% when the test case crashed, the port closed with its owner but the
%% program is still running.
start_program(Exe, Args, Env, Ready, Timeout) ->
	Port = open_port({spawn_executable, Exe}, [{args, Args}, {env, Env}, {line, 16384},
		binary, exit_status, stderr_to_stdout, use_stdio, hide]),
	{os_pid, OsPid} = erlang:port_info(Port, os_pid),
	Deadline = erlang:monotonic_time(millisecond) + Timeout,
	wait_ready(Port, OsPid, Ready, {Deadline, Timeout}, [Exe | Args], []).

wait_ready(Port, OsPid, Ready, Time = {Deadline, Timeout}, Command, Acc) ->
	Wait = max(0, Deadline - erlang:monotonic_time(millisecond)),
	receive
		{Port, {data, {_, Line}}} ->
			case re:run(Line, Ready, [{capture, all_but_first, binary}]) of
				{match, Groups} -> {Port, OsPid, Groups};
				nomatch -> wait_ready(Port, OsPid, Ready, Time, Command, [Line | Acc])
			end;
		{Port, {exit_status, Status}} ->
			ct:fail("~ts exited with ~p before printing a line matching ~ts; output:~n~ts",
				[lists:join(" ", Command), Status, Ready, lists:join("\n", lists:reverse(Acc))])
	after Wait ->
		kill_port(Port),
		ct:fail("~ts printed no line matching ~ts in ~b ms; output:~n~ts",
			[lists:join(" ", Command), Ready, Timeout, lists:join("\n", lists:reverse(Acc))])
	end.

%% What a program started with start_program/5 printed since, one line each.
program_output(Port) ->
	program_output(Port, []).

program_output(Port, Acc) ->
	receive
		{Port, {data, {eol, Line}}} -> program_output(Port, [[Line, $\n] | Acc]);
		{Port, {data, {noeol, Part}}} -> program_output(Port, [Part | Acc]);
		{Port, {exit_status, Status}} ->
			program_output(Port, [io_lib:format("(exited with ~p)~n", [Status]) | Acc])
	after 0 ->
		iolist_to_binary(lists:reverse(Acc))
	end.

%% Node's modules (the ws package), installed by scripts/setup.sh; for
%% NODE_PATH. Fails the test when ws is not there.
node_path() ->
	NodePath = filename:join([root(), "_tools", "node", "node_modules"]),
	case filelib:is_regular(filename:join([NodePath, "ws", "package.json"])) of
		true -> NodePath;
		false -> ct:fail("Node's ws package is not in ~s: run scripts/setup.sh", [NodePath])
	end.

%% A small JSON decoder for the scripts' output (OTP 25 has none): objects
%% become maps with binary keys, strings binaries, null the atom null.
json(Bin) ->
	{V, Rest} = json_value(skip_ws(Bin)),
	<<>> = skip_ws(Rest),
	V.

skip_ws(<<C, R/bits>>) when C =:= $\s; C =:= $\t; C =:= $\n; C =:= $\r -> skip_ws(R);
skip_ws(B) -> B.

json_value(<<"{", R/bits>>) -> json_object(skip_ws(R), #{});
json_value(<<"[", R/bits>>) -> json_array(skip_ws(R), []);
json_value(<<"\"", R/bits>>) -> json_string(R, []);
json_value(<<"true", R/bits>>) -> {true, R};
json_value(<<"false", R/bits>>) -> {false, R};
json_value(<<"null", R/bits>>) -> {null, R};
json_value(B) -> json_number(B).

json_object(<<"}", R/bits>>, M) -> {M, R};
json_object(<<"\"", R/bits>>, M) ->
	{K, R1} = json_string(R, []),
	<<":", R2/bits>> = skip_ws(R1),
	{V, R3} = json_value(skip_ws(R2)),
	case skip_ws(R3) of
		<<",", R4/bits>> -> json_object(skip_ws(R4), M#{K => V});
		<<"}", R4/bits>> -> {M#{K => V}, R4}
	end.

json_array(<<"]", R/bits>>, Acc) -> {lists:reverse(Acc), R};
json_array(B, Acc) ->
	{V, R1} = json_value(B),
	case skip_ws(R1) of
		<<",", R2/bits>> -> json_array(skip_ws(R2), [V | Acc]);
		<<"]", R2/bits>> -> {lists:reverse([V | Acc]), R2}
	end.

json_string(<<"\"", R/bits>>, Acc) ->
	{unicode:characters_to_binary(lists:reverse(Acc)), R};
json_string(<<"\\u", H:4/binary, R/bits>>, Acc) ->
	json_string(R, [binary_to_integer(H, 16) | Acc]);
json_string(<<"\\", C, R/bits>>, Acc) ->
	E = case C of $n -> $\n; $t -> $\t; $r -> $\r; $b -> $\b; $f -> $\f; _ -> C end,
	json_string(R, [E | Acc]);
json_string(<<C/utf8, R/bits>>, Acc) ->
	json_string(R, [C | Acc]).

json_number(B) ->
	{match, [N]} = re:run(B, "^-?[0-9]+(\\.[0-9]+)?([eE][-+]?[0-9]+)?", [{capture, first, binary}]),
	<<_:(byte_size(N))/binary, R/bits>> = B,
	V = case binary:match(N, [<<".">>, <<"e">>, <<"E">>]) of
		nomatch -> binary_to_integer(N);
		_ -> binary_to_float(N)
	end,
	{V, R}.

%% Polls Fun every 20 ms until it returns true (ok), or fails with the last
%% check once Timeout ms have passed.
-spec wait_until(fun(() -> boolean()), integer()) -> ok.
wait_until(Fun, Timeout) when Timeout =< 0 ->
	true = Fun(),
	ok;
wait_until(Fun, Timeout) ->
	case Fun() of
		true -> ok;
		false -> receive after 20 -> wait_until(Fun, Timeout - 20) end
	end.

%% curl's arguments for the Config's transport and the URL of Path on the
%% group's listener: HTTP/1.1, h2c by prior knowledge, or h2 over TLS with
%% the demo's self-signed certificate.
curl_args(Config, Path) ->
	Port = integer_to_list(port(Config)),
	{Scheme, Flags} = case transport(Config) of
		http1 -> {"http", []};
		h2c -> {"http", ["--http2-prior-knowledge"]};
		h2 -> {"https", ["--http2", "-k"]}
	end,
	Flags ++ [Scheme ++ "://127.0.0.1:" ++ Port ++ Path].
