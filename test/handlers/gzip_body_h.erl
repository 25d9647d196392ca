%% Reads the request body whole (read_body/2 in 64 KiB calls) and replies
%% "<bytes> <sha256 hex> <content_decoded> <content-encoding or none>": what
%% the handler got once mustang_decompress_h decoded it.
-module(gzip_body_h).
-export([init/2]).

init(Req0, Opts) ->
	{Size, Hash, Req} = read(Req0, 0, crypto:hash_init(sha256)),
	Decoded = iolist_to_binary(lists:join(",", maps:get(content_decoded, Req, [<<"missing">>]))),
	Coding = mustang_req:header(<<"content-encoding">>, Req, <<"none">>),
	{ok, mustang_req:reply(200, #{<<"content-type">> => <<"text/plain">>},
		[integer_to_binary(Size), " ", binary:encode_hex(crypto:hash_final(Hash)), " ",
			Decoded, " ", Coding], Req), Opts}.

read(Req0, Size, Hash) ->
	case mustang_req:read_body(Req0, #{length => 65536}) of
		{ok, Data, Req} -> {Size + byte_size(Data), crypto:hash_update(Hash, Data), Req};
		{more, Data, Req} -> read(Req, Size + byte_size(Data), crypto:hash_update(Hash, Data))
	end.
