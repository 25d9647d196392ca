%% mustang_compress_h and mustang_decompress_h end to end, with real clients
%% decoding what the server sends and sending gzip bodies:
%% - curl --compressed (HTTP/1.1; --http2-prior-knowledge for h2c; -k --http2
%%   for h2 over TLS), Python httpx (http2=True for h2c and h2), nghttp (h2c);
%% - a streamed response read part by part: the handler sends a part and waits
%%   until the test saw the client print it, so a client that could not
%%   decode a part before the next one is sent fails the test;
%% - gzip uploads decoded for the handler, and a zip bomb (1 GiB of zeros,
%%   about 1 MiB gzipped) refused with 413 while the node's memory stays
%%   within 50 MiB of what it was.
%% Groups: inline (HTTP/1.1, the default execution), process (HTTP/1.1,
%% request_process => true), h2c (HTTP/2 prior knowledge), h2 (HTTP/2 over
%% TLS, ALPN). Every listener runs
%%   stream_handlers => [mustang_compress_h, mustang_decompress_h, mustang_stream_h].
-module(compress_SUITE).
-compile([export_all, nowarn_export_all]).

-include_lib("common_test/include/ct.hrl").

-import(mustang_test, [doc/1, python/0, require_python/2, tool/3, run/3, start_program/5,
	kill_port/1, json/1]).

-define(OBSERVER, compress_SUITE_observer).
-define(UPLOAD_SIZE, 1000000).

suite() ->
	[{timetrap, {seconds, 120}}].

all() ->
	[{group, inline}, {group, process}, {group, h2c}, {group, h2}].

groups() ->
	Clients = [
		curl_whole,
		curl_streamed,
		curl_threshold,
		curl_identity,
		curl_parts,
		curl_workers,
		httpx_whole,
		httpx_parts,
		curl_upload,
		curl_upload_identity,
		curl_upload_unknown_coding,
		curl_upload_split,
		httpx_upload,
		bomb_upload
	],
	Raw = [raw_whole, raw_threshold, raw_identity, raw_streamed, raw_head],
	[
		{inline, [], Clients ++ Raw},
		{process, [], Clients ++ Raw},
		{h2c, [], Clients ++ [nghttp_get, nghttp_upload]},
		{h2, [], Clients}
	].

init_per_suite(Config) ->
	{ok, _} = application:ensure_all_started(mustang),
	Python = require_python(python(), ["httpx", "h2"]),
	Dir = ?config(priv_dir, Config),
	Text = gzip_resp_h:text(?UPLOAD_SIZE),
	TextFile = filename:join(Dir, "text.txt"),
	ok = file:write_file(TextFile, Text),
	GzFile = filename:join(Dir, "text.gz"),
	ok = file:write_file(GzFile, zlib:gzip(Text)),
	BombFile = filename:join(Dir, "bomb.gz"),
	ok = write_bomb(BombFile),
	[{python, Python}, {text_file, TextFile}, {gz_file, GzFile}, {bomb_file, BombFile},
		{tls_opts, mustang_demo:tls_opts()} | Config].

%% 1 GiB of zeros, gzipped 1 MiB at a time (the output is about 1 MiB).
write_bomb(File) ->
	Z = zlib:open(),
	ok = zlib:deflateInit(Z, best_compression, deflated, 31, 9, default),
	Zeros = binary:copy(<<0>>, 1048576),
	Parts = [zlib:deflate(Z, Zeros) || _ <- lists:seq(1, 1023)],
	Last = zlib:deflate(Z, Zeros, finish),
	zlib:close(Z),
	Bomb = iolist_to_binary([Parts, Last]),
	ct:log("bomb: 1 GiB of zeros in ~b bytes", [byte_size(Bomb)]),
	file:write_file(File, Bomb).

end_per_suite(_) ->
	ok.

init_per_group(Group, Config) ->
	Ref = {?MODULE, Group},
	ProtoOpts = #{
		env => #{dispatch => mustang_router:compile(routes())},
		stream_handlers => [mustang_compress_h, mustang_decompress_h, mustang_stream_h],
		request_process => Group =:= process
	},
	{ok, _} = case Group of
		h2 -> mustang:start_tls(Ref, #{port => 0, socket_opts => ?config(tls_opts, Config)},
			ProtoOpts);
		_ -> mustang:start_clear(Ref, #{port => 0}, ProtoOpts)
	end,
	[{group, Group}, {ref, Ref}, {port, mustang:get_port(Ref)} | Config].

end_per_group(_, Config) ->
	_ = mustang:stop_listener(?config(ref, Config)),
	ok.

end_per_testcase(_, Config) ->
	catch unregister(?OBSERVER),
	Config.

routes() ->
	[{'_', [
		{"/reply/:size", gzip_resp_h, #{mode => reply}},
		{"/stream/:size", gzip_resp_h, #{mode => stream}},
		{"/parts", gzip_resp_h, #{mode => parts, notify => ?OBSERVER}},
		{"/workers", gzip_resp_h, #{mode => workers}},
		{"/body", gzip_body_h, []},
		{"/body/split", gzip_body_h, split}
	]}].

%% Clients.

url(Config, Path) ->
	Scheme = case ?config(group, Config) of
		h2 -> "https";
		_ -> "http"
	end,
	Scheme ++ "://127.0.0.1:" ++ integer_to_list(?config(port, Config)) ++ Path.

curl_flags(Config) ->
	case ?config(group, Config) of
		h2 -> ["-k", "--http2"];
		h2c -> ["--http2-prior-knowledge"];
		_ -> ["--http1.1"]
	end.

http_version(Config) ->
	case ?config(group, Config) of
		h2 -> <<"2">>;
		h2c -> <<"2">>;
		_ -> <<"1.1">>
	end.

httpx_version(Config) ->
	case ?config(group, Config) of
		h2 -> "h2";
		h2c -> "h2c";
		_ -> "1.1"
	end.

curl() ->
	tool("curl", undefined, []).

%% curl with the group's flags; its output when it exits with 0.
curl(Config, Args) ->
	case run(curl(), curl_flags(Config) ++ ["-s", "-S" | Args], 60000) of
		{0, Out} -> Out;
		{Status, Out} -> ct:fail("curl ~p exited with ~p:~n~s", [Args, Status, Out])
	end.

%% A file name of this test case and group.
tmp(Config, Name) ->
	filename:join(?config(priv_dir, Config),
		atom_to_list(?config(group, Config)) ++ "-" ++ Name).

%% The last header block curl wrote with -D: [{LowercaseName, Value}].
read_headers(File) ->
	{ok, Bin} = file:read_file(File),
	Blocks = binary:split(Bin, <<"\r\n\r\n">>, [global, trim_all]),
	[_StatusLine | Lines] = binary:split(lists:last(Blocks), <<"\r\n">>, [global, trim_all]),
	[begin
		[Name, Value] = binary:split(Line, <<":">>),
		{string:lowercase(Name), string:trim(Value)}
	end || Line <- Lines].

%% GET Path with curl; returns {Status, Headers, Body, BytesOnTheWire}.
curl_get(Config, Path, Extra) ->
	BodyFile = tmp(Config, "body"),
	HeadersFile = tmp(Config, "headers"),
	Out = curl(Config, Extra ++ ["-D", HeadersFile, "-o", BodyFile,
		"-w", "%{http_code} %{size_download} %{http_version}", url(Config, Path)]),
	[Status, Wire, Version] = binary:split(Out, <<" ">>, [global]),
	eq("http version", http_version(Config), Version, Out),
	{ok, Body} = file:read_file(BodyFile),
	{binary_to_integer(Status), read_headers(HeadersFile), Body, binary_to_integer(Wire)}.

httpx(Config, Mode, Path, Extra) ->
	Script = filename:join(?config(data_dir, Config), "httpx_gzip.py"),
	case run(?config(python, Config), [Script, httpx_version(Config), Mode, url(Config, Path)
			| Extra], 60000) of
		{0, Out} -> json(lists:last(binary:split(Out, <<"\n">>, [global, trim_all])));
		{Status, Out} -> ct:fail("httpx_gzip.py ~s exited with ~p:~n~s", [Mode, Status, Out])
	end.

eq(_, Expected, Expected, _) ->
	ok;
eq(What, Expected, Got, Context) ->
	ct:fail("~s: expected ~p, got ~p~n~p", [What, Expected, Got, Context]).

is(_, true, _) ->
	ok;
is(What, false, Context) ->
	ct:fail("~s: false~n~p", [What, Context]).

sha256(Bin) ->
	string:lowercase(binary:encode_hex(crypto:hash(sha256, Bin))).

%% Whole and streamed responses with curl.

curl_whole(Config) ->
	doc("curl --compressed gets a 100 kB reply gzipped (content-encoding: gzip, vary: "
		"accept-encoding, fewer bytes on the wire) and decodes it to the handler's body."),
	curl_compressed(Config, "/reply/100000", 100000).

curl_streamed(Config) ->
	doc("curl --compressed gets a 100 kB streamed response (100 parts) gzipped and decodes it."),
	curl_compressed(Config, "/stream/100000", 100000).

curl_compressed(Config, Path, Size) ->
	{Status, Headers, Body, Wire} = curl_get(Config, Path, ["--compressed"]),
	Context = {Headers, Wire},
	eq("status", 200, Status, Context),
	eq("content-encoding", <<"gzip">>, proplists:get_value(<<"content-encoding">>, Headers), Context),
	eq("vary", <<"accept-encoding">>, proplists:get_value(<<"vary">>, Headers), Context),
	eq("decoded body", gzip_resp_h:text(Size), Body, Context),
	is("compressed on the wire", Wire < Size div 2, Context).

curl_threshold(Config) ->
	doc("Below compress_threshold (300 bytes) a reply is sent as is, without vary; at 300 "
		"bytes it is gzipped."),
	{200, H299, B299, W299} = curl_get(Config, "/reply/299", ["--compressed"]),
	eq("299: content-encoding", undefined, proplists:get_value(<<"content-encoding">>, H299), H299),
	eq("299: vary", undefined, proplists:get_value(<<"vary">>, H299), H299),
	eq("299: body", gzip_resp_h:text(299), B299, H299),
	eq("299: bytes on the wire", 299, W299, H299),
	{200, H300, B300, W300} = curl_get(Config, "/reply/300", ["--compressed"]),
	eq("300: content-encoding", <<"gzip">>, proplists:get_value(<<"content-encoding">>, H300), H300),
	eq("300: body", gzip_resp_h:text(300), B300, H300),
	is("300: fewer bytes on the wire", W300 < 300, {W300, H300}).

curl_identity(Config) ->
	doc("curl without --compressed (no Accept-Encoding) gets the body as is, with vary: "
		"accept-encoding since another client would get it gzipped."),
	{200, Headers, Body, Wire} = curl_get(Config, "/reply/100000", []),
	eq("content-encoding", undefined, proplists:get_value(<<"content-encoding">>, Headers), Headers),
	eq("vary", <<"accept-encoding">>, proplists:get_value(<<"vary">>, Headers), Headers),
	eq("body", gzip_resp_h:text(100000), Body, Headers),
	eq("bytes on the wire", 100000, Wire, Headers),
	doc("Same with Accept-Encoding: gzip;q=0, identity."),
	{200, Headers2, Body2, _} = curl_get(Config, "/reply/100000",
		["-H", "accept-encoding: gzip;q=0, identity"]),
	eq("gzip;q=0: content-encoding", undefined,
		proplists:get_value(<<"content-encoding">>, Headers2), Headers2),
	eq("gzip;q=0: body", gzip_resp_h:text(100000), Body2, Headers2).

curl_workers(Config) ->
	doc("A streamed response whose parts come from the handler's process, then from a "
		"process it gave its Req to, ended by mustang_stream_h once the handler returns "
		"(inline mode: the stream handlers run in each process in turn) is one valid gzip "
		"stream."),
	{200, Headers, Body, _} = curl_get(Config, "/workers", ["--compressed"]),
	eq("content-encoding", <<"gzip">>, proplists:get_value(<<"content-encoding">>, Headers), Headers),
	eq("decoded body", iolist_to_binary(["from the handler\n", "from a worker\n",
		gzip_resp_h:text(5000)]), Body, Headers).

%% A streamed response read part by part.

curl_parts(Config) ->
	doc("curl --compressed -N shows each part of a gzipped streamed response before the "
		"handler sends the next one (sync flush per part)."),
	register(?OBSERVER, self()),
	{Port, _, _} = start_program(curl(), curl_flags(Config) ++ ["--compressed", "-N", "-s",
		"-D", "-", url(Config, "/parts")], [], "(?i)^content-encoding: *gzip", 10000),
	try
		lockstep(Port, fun(K) -> ["^", string:trim(gzip_resp_h:part(K))] end),
		wait_line(Port, "^end$"),
		wait_exit(Port, 0)
	after
		kill_port(Port)
	end.

httpx_parts(Config) ->
	doc("httpx (iter_bytes) shows each part of a gzipped streamed response before the "
		"handler sends the next one."),
	register(?OBSERVER, self()),
	Script = filename:join(?config(data_dir, Config), "httpx_gzip.py"),
	{Port, _, [Coding]} = start_program(?config(python, Config),
		[Script, httpx_version(Config), "parts", url(Config, "/parts")], [],
		"\"content_encoding\": \"?([a-z]*)", 30000),
	try
		eq("content-encoding", <<"gzip">>, Coding, #{}),
		lockstep(Port, fun(K) -> ["\"chunk\": \"", string:trim(gzip_resp_h:part(K))] end),
		wait_line(Port, "end\\\\n"),
		wait_line(Port, "\"done\": true"),
		wait_exit(Port, 0)
	after
		kill_port(Port)
	end.

%% For each part: the handler says it sent it, the client prints it, and only
%% then is the handler told to send the next.
lockstep(Port, LineRe) ->
	lists:foreach(fun(K) ->
		Pid = receive
			{gzip_part_sent, P, K} -> P
		after 10000 ->
			ct:fail("the handler did not send part ~b", [K])
		end,
		wait_line(Port, iolist_to_binary(LineRe(K))),
		Pid ! {gzip_next, K}
	end, [1, 2, 3]).

wait_line(Port, Re) ->
	wait_line(Port, Re, []).

wait_line(Port, Re, Seen) ->
	receive
		{Port, {data, {_, Line}}} ->
			case re:run(Line, Re) of
				{match, _} -> ok;
				nomatch -> wait_line(Port, Re, [Line | Seen])
			end;
		{Port, {exit_status, Status}} ->
			ct:fail("the client exited with ~p before printing ~s; it printed:~n~p",
				[Status, Re, lists:reverse(Seen)])
	after 10000 ->
		ct:fail("the client did not print ~s within 10 s (it cannot decode what it got?); "
			"it printed:~n~p", [Re, lists:reverse(Seen)])
	end.

wait_exit(Port, Expected) ->
	receive
		{Port, {exit_status, Expected}} -> ok;
		{Port, {exit_status, Status}} -> ct:fail("the client exited with ~p", [Status]);
		{Port, {data, _}} -> wait_exit(Port, Expected)
	after 10000 ->
		ct:fail("the client did not exit")
	end.

%% httpx.

httpx_whole(Config) ->
	doc("httpx gets a 100 kB reply and a 100 kB streamed response gzipped and decodes them."),
	Version = case ?config(group, Config) of
		h2 -> <<"HTTP/2">>;
		h2c -> <<"HTTP/2">>;
		_ -> <<"HTTP/1.1">>
	end,
	Text = gzip_resp_h:text(100000),
	lists:foreach(fun(Path) ->
		R = httpx(Config, "get", Path, []),
		eq("http_version", Version, maps:get(<<"http_version">>, R), R),
		eq("status", 200, maps:get(<<"status">>, R), R),
		eq("content-encoding", <<"gzip">>, maps:get(<<"content_encoding">>, R), R),
		eq("vary", <<"accept-encoding">>, maps:get(<<"vary">>, R), R),
		eq("size", 100000, maps:get(<<"size">>, R), R),
		eq("sha256", sha256(Text), maps:get(<<"sha256">>, R), R),
		is("compressed on the wire", maps:get(<<"wire">>, R) < 50000, R)
	end, ["/reply/100000", "/stream/100000"]).

%% Uploads.

upload_reply(Config, File, Headers) ->
	Out = curl(Config, lists:append([["-H", H] || H <- Headers])
		++ ["--data-binary", "@" ++ File, "-w", " %{http_code}", url(Config, "/body")]),
	binary:split(Out, <<" ">>, [global]).

curl_upload(Config) ->
	doc("curl POSTs a gzipped 1 MB body with content-encoding: gzip: the handler reads it "
		"decoded, with content_decoded [gzip] and no content-encoding header."),
	{ok, Text} = file:read_file(?config(text_file, Config)),
	eq("handler's view", [integer_to_binary(?UPLOAD_SIZE), sha256(Text), <<"gzip">>, <<"none">>,
		<<"200">>], upload_reply(Config, ?config(gz_file, Config),
			["content-encoding: gzip", "content-type: text/plain"]), #{}).

curl_upload_identity(Config) ->
	doc("A body without content-encoding is passed as is (content_decoded [])."),
	{ok, Text} = file:read_file(?config(text_file, Config)),
	eq("handler's view", [integer_to_binary(?UPLOAD_SIZE), sha256(Text), <<>>, <<"none">>,
		<<"200">>], upload_reply(Config, ?config(text_file, Config), []), #{}).

curl_upload_unknown_coding(Config) ->
	doc("A body in a coding other than gzip (br) is passed untouched, header included."),
	{ok, Gz} = file:read_file(?config(gz_file, Config)),
	eq("handler's view", [integer_to_binary(byte_size(Gz)), sha256(Gz), <<>>, <<"br">>,
		<<"200">>], upload_reply(Config, ?config(gz_file, Config), ["content-encoding: br"]), #{}).

curl_upload_split(Config) ->
	doc("A gzipped body read partly by the handler's process and partly by a process it "
		"gave its Req to (inline mode: data/4 runs in each in turn) is decoded whole."),
	{ok, Text} = file:read_file(?config(text_file, Config)),
	Out = curl(Config, ["-H", "content-encoding: gzip", "--data-binary", "@" ++ ?config(gz_file, Config),
		"-w", " %{http_code}", url(Config, "/body/split")]),
	eq("handler's view", [integer_to_binary(?UPLOAD_SIZE), sha256(Text), <<"gzip">>, <<"none">>,
		<<"200">>], binary:split(Out, <<" ">>, [global]), #{}).

httpx_upload(Config) ->
	doc("httpx POSTs a gzipped 1 MB body: the handler reads it decoded."),
	{ok, Text} = file:read_file(?config(text_file, Config)),
	R = httpx(Config, "upload", "/body", [?config(gz_file, Config)]),
	eq("status", 200, maps:get(<<"status">>, R), R),
	eq("handler's view", iolist_to_binary([integer_to_binary(?UPLOAD_SIZE), " ", sha256(Text),
		" gzip none"]), maps:get(<<"text">>, R), R).

bomb_upload(Config) ->
	doc("A zip bomb (1 GiB of zeros gzipped, about 1 MiB) gets 413 and the node's memory "
		"stays within 50 MiB of what it was during the upload."),
	garbage_collect(),
	Base = erlang:memory(total),
	Sampler = spawn_link(fun() -> sample_memory(Base) end),
	Status = bomb_status(Config, ?config(group, Config)),
	Sampler ! {stop, self()},
	Peak = receive {peak, P} -> P after 5000 -> ct:fail("no memory peak") end,
	ct:log("memory: ~b bytes before, peak ~b (+~b)", [Base, Peak, Peak - Base]),
	eq("status", <<"413">>, Status, #{}),
	is("memory peak under base + 50 MiB", Peak - Base < 50 * 1024 * 1024, {Base, Peak}),
	doc("The server still answers."),
	{200, _, _, _} = curl_get(Config, "/reply/10", []).

%% Over HTTP/2 the server answers 413 (END_STREAM) then resets the stream
%% with NO_ERROR to stop the upload (RFC 9113 8.1). curl 7.88 reports that as
%% error 92 without the response, and httpx waits for flow-control credit
%% until its timeout, so nghttp is the client there.
bomb_status(Config, Group) when Group =:= h2c; Group =:= h2 ->
	{0, Out} = run(nghttp(), ["-nv", "-H", "content-encoding: gzip", "-d", ?config(bomb_file, Config),
		url(Config, "/body")], 60000),
	case re:run(Out, ":status: ([0-9]+)", [{capture, all_but_first, binary}]) of
		{match, [Status]} -> Status;
		nomatch -> ct:fail("nghttp got no response:~n~s", [Out])
	end;
bomb_status(Config, _) ->
	curl(Config, ["-H", "content-encoding: gzip", "-o", "/dev/null",
		"--data-binary", "@" ++ ?config(bomb_file, Config), "-w", "%{http_code}",
		url(Config, "/body")]).

sample_memory(Peak) ->
	receive
		{stop, Pid} -> Pid ! {peak, max(Peak, erlang:memory(total))}
	after 2 ->
		sample_memory(max(Peak, erlang:memory(total)))
	end.

%% nghttp (h2c).

nghttp() ->
	tool("nghttp", undefined, []).

nghttp_get(Config) ->
	doc("nghttp (it sends accept-encoding: gzip, deflate and decodes gzip itself) gets a "
		"100 kB reply and a streamed one gzipped: content-encoding: gzip and fewer DATA bytes "
		"than the body; the body it prints is the handler's."),
	lists:foreach(fun(Path) ->
		Url = url(Config, Path),
		{0, Verbose} = run(nghttp(), ["-nv", Url], 30000),
		is("content-encoding: gzip", re:run(Verbose, "recv \\(stream_id=[0-9]+\\) content-encoding: gzip")
			=/= nomatch, Verbose),
		{match, Lengths} = re:run(Verbose, "recv DATA frame <length=([0-9]+)",
			[global, {capture, all_but_first, binary}]),
		Wire = lists:sum([binary_to_integer(L) || [L] <- Lengths]),
		is("compressed on the wire", Wire < 50000, Wire),
		{0, Body} = run(nghttp(), [Url], 30000),
		eq("decoded body", gzip_resp_h:text(100000), Body, byte_size(Body))
	end, ["/reply/100000", "/stream/100000"]).

nghttp_upload(Config) ->
	doc("nghttp POSTs a gzipped 1 MB body with content-encoding: gzip: decoded for the handler."),
	{ok, Text} = file:read_file(?config(text_file, Config)),
	{0, Out} = run(nghttp(), ["-H", "content-encoding: gzip", "-d", ?config(gz_file, Config),
		url(Config, "/body")], 30000),
	eq("handler's view", iolist_to_binary([integer_to_binary(?UPLOAD_SIZE), " ", sha256(Text),
		" gzip none"]), Out, #{}).

%% HTTP/1.1 on the wire (raw client).

raw_get(Config, Path, Headers) ->
	mustang_test:get(?config(port, Config), Path, Headers).

raw_whole(Config) ->
	doc("HTTP/1.1: a gzipped reply has content-length equal to the gzip body's size."),
	R = #{status := 200, body := Body} = raw_get(Config, "/reply/100000",
		[{"accept-encoding", "gzip"}]),
	eq("content-encoding", <<"gzip">>, mustang_test:header(<<"content-encoding">>, R), R),
	eq("vary", <<"accept-encoding">>, mustang_test:header(<<"vary">>, R), R),
	eq("content-length", integer_to_binary(byte_size(Body)),
		mustang_test:header(<<"content-length">>, R), R),
	eq("body", gzip_resp_h:text(100000), zlib:gunzip(Body), R).

raw_threshold(Config) ->
	doc("HTTP/1.1: 299 bytes as is with content-length 299, 300 gzipped, 301 gzipped."),
	R299 = raw_get(Config, "/reply/299", [{"accept-encoding", "gzip"}]),
	eq("299", {<<"299">>, undefined, undefined}, {mustang_test:header(<<"content-length">>, R299),
		mustang_test:header(<<"content-encoding">>, R299), mustang_test:header(<<"vary">>, R299)}, R299),
	lists:foreach(fun(N) ->
		R = #{body := Body} = raw_get(Config, "/reply/" ++ integer_to_list(N),
			[{"accept-encoding", "gzip"}]),
		eq("content-encoding", <<"gzip">>, mustang_test:header(<<"content-encoding">>, R), R),
		eq("body", gzip_resp_h:text(N), zlib:gunzip(Body), R)
	end, [300, 301]).

raw_identity(Config) ->
	doc("HTTP/1.1: without Accept-Encoding, content-length 100000 and vary: accept-encoding."),
	R = raw_get(Config, "/reply/100000", []),
	eq("headers", {<<"100000">>, undefined, <<"accept-encoding">>},
		{mustang_test:header(<<"content-length">>, R), mustang_test:header(<<"content-encoding">>, R),
			mustang_test:header(<<"vary">>, R)}, R).

raw_streamed(Config) ->
	doc("HTTP/1.1: a gzipped streamed response is chunked, without content-length."),
	R = #{body := Body} = raw_get(Config, "/stream/100000", [{"accept-encoding", "gzip"}]),
	eq("headers", {<<"chunked">>, undefined, <<"gzip">>},
		{mustang_test:header(<<"transfer-encoding">>, R), mustang_test:header(<<"content-length">>, R),
			mustang_test:header(<<"content-encoding">>, R)}, R),
	eq("body", gzip_resp_h:text(100000), zlib:gunzip(Body), R).

raw_head(Config) ->
	doc("HTTP/1.1: HEAD gets the headers GET gets (content-encoding, vary, the gzipped "
		"content-length) and no body."),
	#{headers := GetHeaders} = raw_get(Config, "/reply/100000", [{"accept-encoding", "gzip"}]),
	S = mustang_test:connect(?config(port, Config)),
	ok = mustang_test:send(S, ["HEAD /reply/100000 HTTP/1.1\r\nhost: localhost\r\n"
		"accept-encoding: gzip\r\n\r\n"]),
	R = mustang_test:recv_response(S, #{head => true}),
	ok = mustang_test:send(S, mustang_test:get_req("/reply/10")),
	#{status := 200, body := <<"hotel 1 ec">>} = mustang_test:recv_response(S),
	mustang_test:close(S),
	lists:foreach(fun(Name) ->
		eq(Name, proplists:get_value(Name, GetHeaders), mustang_test:header(Name, R), R)
	end, [<<"content-encoding">>, <<"vary">>, <<"content-length">>]).
