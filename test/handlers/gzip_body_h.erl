%% Reads the request body whole (read_body/2 in 64 KiB calls) and replies
%% "<bytes> <sha256 hex> <content_decoded> <content-encoding or none>": what
%% the handler got once mustang_decompress_h decoded it. With the option
%% split, the handler's process reads the first 64 KiB and another process
%% it gives its Req to reads the rest.
-module(gzip_body_h).
-export([init/2]).

init(Req0, split) ->
	{_, Data, Req1} = mustang_req:read_body(Req0, #{length => 65536}),
	Hash0 = crypto:hash_update(crypto:hash_init(sha256), Data),
	{Pid, MRef} = spawn_monitor(fun() -> exit({done, read(Req1, byte_size(Data), Hash0)}) end),
	receive
		{'DOWN', MRef, process, Pid, {done, {Size, Hash, Req}}} -> reply(Size, Hash, Req, split);
		{'DOWN', MRef, process, Pid, Reason} -> exit({worker_failed, Reason})
	end;
init(Req0, Opts) ->
	{Size, Hash, Req} = read(Req0, 0, crypto:hash_init(sha256)),
	reply(Size, Hash, Req, Opts).

reply(Size, Hash, Req, Opts) ->
	Decoded = iolist_to_binary(lists:join(",", maps:get(content_decoded, Req, [<<"missing">>]))),
	Coding = mustang_req:header(<<"content-encoding">>, Req, <<"none">>),
	{ok, mustang_req:reply(200, #{<<"content-type">> => <<"text/plain">>},
		[integer_to_binary(Size), " ", string:lowercase(binary:encode_hex(crypto:hash_final(Hash))), " ",
			Decoded, " ", Coding], Req), Opts}.

read(Req0, Size, Hash) ->
	case mustang_req:read_body(Req0, #{length => 65536}) of
		{ok, Data, Req} -> {Size + byte_size(Data), crypto:hash_update(Hash, Data), Req};
		{more, Data, Req} -> read(Req, Size + byte_size(Data), crypto:hash_update(Hash, Data))
	end.
