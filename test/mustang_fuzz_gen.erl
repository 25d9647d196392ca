%% PropEr generators for fuzzing the server over sockets (fuzz_SUITE, and
%% http2_SUITE's mutated_frames_property): valid input built with the real
%% builders, then mutated at the level of its parts and of its bytes.
%%
%% Each generator gives a map that says what was built and how it was
%% mutated (so that a shrunk counterexample reads as requests, frames and
%% mutations), and a *_bytes function turns it into the bytes to send:
%%   http1_case()  pipelined HTTP/1.1 requests: request line, headers,
%%                 bodies with content-length and chunked, upgrades to
%%                 Websocket and h2c, the HTTP/2 preface (http1_bytes/1)
%%   h2_case()     HTTP/2 frames, sent after a valid preface (h2_bytes/1)
%%   hpack_case()  header blocks encoded by mustang_hpack, with table size
%%                 updates, mutated, then framed as HEADERS and CONTINUATION
%%                 (hpack_bytes/2)
%%   ws_case()     Websocket frames, masked, fragmented, control frames,
%%                 sent after an upgrade over HTTP/1.1 or HTTP/2 (ws_bytes/1)
%%
%% Byte mutations (mutation/0, mutate/2): bit flips, byte insert, delete,
%% duplicate, truncation; for HTTP/1.1 also splicing in another request,
%% end-of-line games (CRLF, LF, CR) and numbers made huge, negative or odd.
%% Positions are fractions of the input (0..65535), so that a mutation lands
%% anywhere in a long input and shrinks towards its start.
-module(mustang_fuzz_gen).

-include_lib("proper/include/proper.hrl").

%% Byte mutations.
-export([mutation/0]).
-export([mutate/2]).
-export([splits/0]).
-export([split/2]).

%% HTTP/1.1.
-export([http1_case/0]).
-export([http1_bytes/1]).
-export([http1_expects_probe/1]).

%% HTTP/2 frames.
-export([frame_sequence/0]).
-export([h2_case/0]).
-export([h2_bytes/1]).
-export([request_headers/1]).

%% HPACK.
-export([hpack_case/0]).
-export([hpack_bytes/2]).
-export([hpack_streams/1]).
-export([hpack_is_mutated/1]).

%% Websocket.
-export([ws_case/0]).
-export([ws_bytes/1]).
-export([ws_frame/1]).
-export([ws_mask/2]).

-define(FRAC, 65536).

%% Byte mutations.

frac() ->
	range(0, ?FRAC - 1).

mutation() ->
	frequency([
		{4, {flip, frac(), range(1, 255)}},
		{2, {insert, frac(), odd_bytes()}},
		{2, {delete, frac(), range(1, 8)}},
		{1, {duplicate, frac(), range(1, 64)}},
		{1, {truncate, frac()}}
	]).

odd_bytes() ->
	oneof([binary(), elements([<<0>>, <<"\r">>, <<"\n">>, <<"\r\n">>, <<" ">>, <<"\t">>,
		<<":">>, <<";">>, <<",">>, <<"\"">>, <<"%">>, <<127>>, <<128>>, <<255>>])]).

%% Position I (a fraction) in a binary of Size bytes: 0..Size-1, or 0..Size
%% where the end is a place too.
at(I, Size) -> I * Size div ?FRAC.
at_incl(I, Size) -> I * (Size + 1) div ?FRAC.

mutate(Bin, Mutations) ->
	lists:foldl(fun mutate1/2, Bin, Mutations).

mutate1({insert, I, X}, B) ->
	N = at_incl(I, byte_size(B)),
	<<Pre:N/binary, Post/binary>> = B,
	<<Pre/binary, X/binary, Post/binary>>;
mutate1(_, <<>>) ->
	<<>>;
mutate1({flip, I, X}, B) ->
	N = at(I, byte_size(B)),
	<<Pre:N/binary, C, Post/binary>> = B,
	<<Pre/binary, (C bxor X), Post/binary>>;
mutate1({delete, I, Len}, B) ->
	N = at(I, byte_size(B)),
	<<Pre:N/binary, Post/binary>> = B,
	<<Pre/binary, (binary:part(Post, min(Len, byte_size(Post)),
		byte_size(Post) - min(Len, byte_size(Post))))/binary>>;
mutate1({duplicate, I, Len}, B) ->
	N = at(I, byte_size(B)),
	<<Pre:N/binary, Post/binary>> = B,
	<<Pre/binary, (binary:part(Post, 0, min(Len, byte_size(Post))))/binary, Post/binary>>;
mutate1({truncate, I}, B) ->
	binary:part(B, 0, at(I, byte_size(B)));
mutate1({splice, I, J, Donor}, B) ->
	N = at_incl(I, byte_size(B)),
	M = at_incl(J, byte_size(Donor)),
	<<(binary:part(B, 0, N))/binary, (binary:part(Donor, M, byte_size(Donor) - M))/binary>>;
mutate1({number, K, New}, B) ->
	%% Numbers, not the digits of the HTTP version.
	replace_nth(B, "(?<![/.0-9])[0-9]+(?![.0-9])", K, New);
mutate1({eol, K, New}, B) ->
	replace_nth(B, "\r\n", K, New).

%% The Kth match (modulo the count) of Regex in B replaced by New.
replace_nth(B, Regex, K, New) ->
	case re:run(B, Regex, [global]) of
		{match, Matches} ->
			[{Pos, Len}] = lists:nth(K rem length(Matches) + 1, Matches),
			<<Pre:Pos/binary, _:Len/binary, Post/binary>> = B,
			<<Pre/binary, New/binary, Post/binary>>;
		nomatch ->
			B
	end.

%% Mostly one mutation, sometimes none or a few.
mutations(Gen) ->
	frequency([{1, []}, {4, [Gen]}, {2, non_empty(short_list(4, Gen))}]).

%% Where to cut bytes into pieces (socket sends, DATA frames).
splits() ->
	list(frac()).

split(Bin, Fracs) ->
	Points = lists:usort([at(F, byte_size(Bin)) || F <- Fracs]),
	split(Bin, Points, 0).

split(Bin, [], From) ->
	[binary:part(Bin, From, byte_size(Bin) - From)];
split(Bin, [P | Rest], From) ->
	[binary:part(Bin, From, P - From) | split(Bin, Rest, P)].

%% A list whose length does not follow the size that the elements get.
short_list(Max, Gen) ->
	?SIZED(S, resize(Max, list(resize(S, Gen)))).

%% HTTP/1.1.

http1_case() ->
	?LET({Listener, Requests, Mutations, Splits},
		{elements([clear, process, tls]), non_empty(short_list(4, http1_request())),
			mutations(http1_mutation()), splits()},
		#{listener => Listener, requests => Requests, mutations => Mutations, splits => Splits}).

http1_bytes(#{requests := Requests, mutations := Mutations}) ->
	mutate(iolist_to_binary([Bin || {_, Bin} <- Requests]), Mutations).

%% Requests left whole, none of which closes or switches the connection:
%% the probe request sent after them must be answered.
http1_expects_probe(#{requests := Requests, mutations := Mutations}) ->
	Mutations =:= [] andalso lists:all(fun({Kind, _}) -> Kind =:= keep end, Requests).

http1_mutation() ->
	frequency([
		{6, mutation()},
		{1, {splice, frac(), frac(), ?LET({_, Bin}, plain_request(), Bin)}},
		{2, {number, nat(), elements([<<"99999999999999999999999">>, <<"-1">>, <<"-0">>,
			<<"+1">>, <<"0x10">>, <<"1e3">>, <<" 1">>, <<"1 1">>, <<"4294967296">>,
			<<"18446744073709551616">>, <<"000000000000000000001">>, <<"">>, <<"1.0">>])}},
		{2, {eol, nat(), elements([<<"\n">>, <<"\r">>, <<"\r\r\n">>, <<"\n\r">>, <<"">>,
			<<"\r\n\r\n">>, <<"\r\n ">>, <<"\r\n\t">>, <<"\r\0\n">>])}}
	]).

%% {Kind, Bytes}: keep (the connection goes on), close (the request ends it)
%% or upgrade (the connection switches protocol).
http1_request() ->
	frequency([
		{10, plain_request()},
		{1, ws_upgrade_request()},
		{1, h2c_upgrade_request()},
		{1, {upgrade, iolist_to_binary([mustang_http2_frame:preface(),
			mustang_http2_frame:settings(#{}), h2_request_frame(1, <<"/">>)])}}
	]).

plain_request() ->
	?LET({{Method, Target}, Version, Headers, Body, Close, Expect},
		{method_target(), frequency([{6, <<"HTTP/1.1">>}, {1, <<"HTTP/1.0">>}]),
			short_list(6, http1_header()), http1_body(), frequency([{6, false}, {1, true}]),
			frequency([{6, false}, {1, true}])},
		begin
			Body2 = case {Version, Body} of
				{<<"HTTP/1.0">>, {chunked, Chunks, _}} -> {length, iolist_to_binary(Chunks)};
				_ -> Body
			end,
			Framing = case Body2 of
				none -> [];
				{length, B} -> [{<<"content-length">>, integer_to_binary(byte_size(B))}];
				{chunked, _, _} -> [{<<"transfer-encoding">>, <<"chunked">>}]
			end,
			Connection = [{<<"connection">>, <<"close">>} || Close],
			Continue = [{<<"expect">>, <<"100-continue">>} || Expect, Body2 =/= none],
			%% A server that answers without reading a body announced with
			%% 100-continue closes: the body may never come (RFC 9110 10.1.1).
			Kind = case Close orelse Version =:= <<"HTTP/1.0">> orelse Continue =/= [] of
				true -> close;
				false -> keep
			end,
			{Kind, iolist_to_binary([Method, " ", Target, " ", Version, "\r\n",
				[[N, ": ", V, "\r\n"] || {N, V} <- [{<<"host">>, <<"localhost">>} | Headers]
					++ Connection ++ Continue ++ Framing],
				"\r\n", http1_body_bytes(Body2)])}
		end).

method_target() ->
	frequency([
		{8, {elements([<<"GET">>, <<"POST">>, <<"PUT">>, <<"DELETE">>, <<"PATCH">>, <<"HEAD">>,
			<<"OPTIONS">>]), elements([<<"/">>, <<"/echo">>, <<"/read_body">>, <<"/sleep">>,
			<<"/stream">>, <<"/chat">>, <<"/nope">>, <<"/echo?a=1&b=%20c">>, <<"/%E2%82%AC">>,
			<<"/a/../b">>, <<"http://localhost/echo">>])}},
		{1, {<<"OPTIONS">>, <<"*">>}}
	]).

http1_header() ->
	frequency([
		{4, elements([{<<"accept">>, <<"*/*">>}, {<<"user-agent">>, <<"fuzz/1.0">>},
			{<<"cookie">>, <<"a=b; c=d">>}, {<<"accept-encoding">>, <<"gzip, deflate">>},
			{<<"content-type">>, <<"text/plain">>}, {<<"te">>, <<"trailers">>},
			{<<"cache-control">>, <<"no-cache">>}, {<<"x-empty">>, <<"">>},
			{<<"Connection">>, <<"keep-alive">>}, {<<"X-Mixed-Case">>, <<"Value">>}])},
		{2, {token(), field_value()}}
	]).

%% Names of fields a valid request may carry with any value: not those of
%% the framing, the connection or the upgrades.
token() ->
	?SUCHTHAT(Name, ?LET(L, non_empty(list(elements(
		"abcdefghijklmnopqrstuvwxyz0123456789-_!#$%&'*+.^`|~"))), list_to_binary(L)),
		not is_reserved(string:lowercase(Name))).

is_reserved(Name) ->
	lists:member(Name, [<<"host">>, <<"content-length">>, <<"transfer-encoding">>,
		<<"connection">>, <<"keep-alive">>, <<"proxy-connection">>, <<"upgrade">>, <<"te">>,
		<<"expect">>, <<"trailer">>, <<"http2-settings">>]).

%% Visible characters with spaces inside, none at either end.
field_value() ->
	?LET(L, list(elements(lists:seq($!, $~) ++ " ")), string:trim(list_to_binary(L))).

http1_body() ->
	frequency([
		{3, none},
		{3, {length, body_bytes()}},
		{2, ?LET({Chunks, Trailers}, {non_empty(list(non_empty(binary()))),
			short_list(3, {token(), field_value()})}, {chunked, Chunks, Trailers})}
	]).

body_bytes() ->
	frequency([{8, binary()}, {1, ?LET(N, range(60000, 70000), binary:copy(<<"x">>, N))}]).

http1_body_bytes(none) ->
	[];
http1_body_bytes({length, Bin}) ->
	Bin;
http1_body_bytes({chunked, Chunks, Trailers}) ->
	[[[integer_to_binary(byte_size(C), 16), "\r\n", C, "\r\n"] || C <- Chunks],
		"0\r\n", [[N, ": ", V, "\r\n"] || {N, V} <- Trailers], "\r\n"].

%% An upgrade to Websocket, and frames after it. The route (fuzz_SUITE's)
%% closes after 1 s without data: the mutated bytes may leave a frame
%% waiting for a payload that never comes.
ws_upgrade_request() ->
	?LET({Key, Deflate, Frames}, {binary(16), boolean(), ws_frames()},
		{upgrade, iolist_to_binary(["GET /fuzz/ws/short HTTP/1.1\r\nhost: localhost\r\n"
			"connection: Upgrade\r\nupgrade: websocket\r\nsec-websocket-version: 13\r\n"
			"sec-websocket-key: ", base64:encode(Key), "\r\n",
			["sec-websocket-extensions: permessage-deflate\r\n" || Deflate], "\r\n",
			[ws_frame(F) || F <- Frames]])}).

%% Upgrade: h2c, sometimes followed by the preface.
h2c_upgrade_request() ->
	?LET({Settings, Preface}, {settings_map(), boolean()},
		begin
			<<_:9/binary, Payload/binary>> = iolist_to_binary(mustang_http2_frame:settings(Settings)),
			{upgrade, iolist_to_binary(["GET / HTTP/1.1\r\nhost: localhost\r\n"
				"connection: Upgrade, HTTP2-Settings\r\nupgrade: h2c\r\n"
				"http2-settings: ", base64url(Payload), "\r\n\r\n",
				[[mustang_http2_frame:preface(), mustang_http2_frame:settings(#{})] || Preface]])}
		end).

base64url(Bin) ->
	<< <<(case C of $+ -> $-; $/ -> $_; _ -> C end)>> || <<C>> <= base64:encode(Bin), C =/= $= >>.

%% HTTP/2 frames: valid frames from the frame builders, then mutations of
%% the frame list and of the bytes.

%% The bytes of a mutated sequence, for http2_SUITE.
frame_sequence() ->
	?LET(Case, h2_case(), h2_bytes(Case)).

h2_case() ->
	?LET({Listener, Frames, ListMutations, Mutations},
		{elements([clear, tls]), non_empty(list(valid_frame())), list(list_mutation()),
			mutations(mutation())},
		#{listener => Listener, frames => [iolist_to_binary(F) || F <- Frames],
			list_mutations => ListMutations, mutations => Mutations}).

h2_bytes(#{frames := Frames, list_mutations := ListMutations, mutations := Mutations}) ->
	mutate(iolist_to_binary(mutate_list(Frames, ListMutations)), Mutations).

stream_id() ->
	oneof([1, 3, 5, 7, range(1, 99), range(0, 16#7fffffff)]).

valid_frame() ->
	frequency([
		{5, ?LET({Sid, Path}, {stream_id(), path()}, h2_request_frame(Sid, Path))},
		{2, ?LET({Sid, Fin, Path, Max}, {stream_id(), oneof([fin, nofin]), path(), range(1, 20)},
			mustang_http2_frame:headers(Sid, Fin, element(1,
				mustang_hpack:encode(request_headers(Path), mustang_hpack:init())), Max))},
		{1, ?LET({Sid, Path}, {stream_id(), path()}, mustang_http2_frame:headers(Sid, nofin,
			element(1, mustang_hpack:encode(request_headers(Path), mustang_hpack:init()))))},
		{4, ?LET({Sid, Fin, Data}, {stream_id(), oneof([fin, nofin]), binary()},
			mustang_http2_frame:data(Sid, Fin, Data))},
		{1, ?LET({Sid, Dep, W}, {stream_id(), stream_id(), range(1, 256)},
			mustang_http2_frame:priority(Sid, shared, Dep, W))},
		{2, ?LET({Sid, Code}, {stream_id(), oneof([cancel, no_error, protocol_error])},
			mustang_http2_frame:rst_stream(Sid, Code))},
		{2, ?LET(S, settings_map(), mustang_http2_frame:settings(S))},
		{1, mustang_http2_frame:settings_ack()},
		{2, ?LET(N, range(0, 16#ffffffffffffffff), mustang_http2_frame:ping(N))},
		{1, ?LET(N, range(0, 16#ffffffffffffffff), mustang_http2_frame:ping_ack(N))},
		{2, ?LET(N, range(1, 16#7fffffff), mustang_http2_frame:window_update(N))},
		{2, ?LET({Sid, N}, {stream_id(), range(1, 16#7fffffff)},
			mustang_http2_frame:window_update(Sid, N))},
		{2, ?LET({Sid, Fin, Bin}, {stream_id(), oneof([head_fin, head_nofin]), binary()},
			mustang_http2_frame:continuation(Sid, Fin, Bin))},
		{1, ?LET({Sid, Code}, {stream_id(), oneof([no_error, protocol_error])},
			mustang_http2_frame:goaway(Sid, Code, <<>>))},
		{1, ?LET({Sid, Promised}, {stream_id(), stream_id()},
			mustang_http2_frame:push_promise(Sid, head_fin, Promised, <<16#82>>))},
		{2, raw_frame()}
	]).

%% A GET on stream Sid, in one HEADERS frame with END_STREAM.
h2_request_frame(Sid, Path) ->
	mustang_http2_frame:headers(Sid, fin,
		element(1, mustang_hpack:encode(request_headers(Path), mustang_hpack:init()))).

%% Paths of the demo's routes and of http2_SUITE's.
path() ->
	oneof([<<"/">>, <<"/echo">>, <<"/read_body">>, <<"/sleep">>, <<"/stream">>,
		<<"/version">>, <<"/push">>, <<"/stream/trailers">>, <<"/crash/none">>, <<"/slow/10">>]).

request_headers(Path) ->
	[{<<":method">>, <<"GET">>}, {<<":scheme">>, <<"http">>}, {<<":path">>, Path},
		{<<":authority">>, <<"localhost">>}].

settings_map() ->
	?LET(L, list(oneof([
		{header_table_size, range(0, 65536)},
		{enable_push, oneof([false])},
		{max_concurrent_streams, range(0, 200)},
		{initial_window_size, range(0, 16#7fffffff)},
		{max_frame_size, range(16384, 16777215)},
		{max_header_list_size, range(0, 100000)}
	])), maps:from_list(L)).

%% Any frame header (types 0-12, any flags, any stream) with a short payload.
raw_frame() ->
	?LET({Type, Flags, Sid, Payload}, {range(0, 12), byte(), range(0, 16#7fffffff), binary()},
		<<(byte_size(Payload)):24, Type:8, Flags:8, 0:1, Sid:31, Payload/binary>>).

list_mutation() ->
	oneof([{duplicate, nat()}, {swap, nat(), nat()}, {drop, nat()}]).

mutate_list(Parts, Mutations) ->
	lists:foldl(fun mutate_list1/2, Parts, Mutations).

mutate_list1(_, []) ->
	[];
mutate_list1({duplicate, I}, Ps) ->
	{A, [P | B]} = lists:split(I rem length(Ps), Ps),
	A ++ [P, P | B];
mutate_list1({drop, I}, Ps) ->
	{A, [_ | B]} = lists:split(I rem length(Ps), Ps),
	A ++ B;
mutate_list1({swap, I, J}, Ps) ->
	T = list_to_tuple(Ps),
	X = I rem tuple_size(T) + 1,
	Y = J rem tuple_size(T) + 1,
	tuple_to_list(setelement(Y, setelement(X, T, element(Y, T)), element(X, T))).

%% HPACK: requests whose header blocks mustang_hpack encodes in turn (one
%% compression context, so later blocks refer to the dynamic table), table
%% size updates between them; then blocks mutated (bytes, or whole blocks
%% dropped, duplicated, swapped, which puts the server's table out of step),
%% and each block framed as HEADERS and CONTINUATION frames of a chosen size,
%% sometimes with a frame in between.

hpack_case() ->
	?LET({Listener, Steps, BlockMutations, Sizes, Interleave},
		{elements([clear, tls]), non_empty(list(hpack_step())),
			frequency([{2, []}, {3, non_empty(list(block_mutation()))}]),
			list(frequency([{3, range(1, 16)}, {1, range(17, 16384)}])),
			frequency([{4, []}, {1, non_empty(list({nat(), nat(), interleaved_frame()}))}])},
		#{listener => Listener, steps => Steps, block_mutations => BlockMutations,
			frame_sizes => Sizes, interleave => Interleave}).

hpack_is_mutated(#{block_mutations := BlockMutations, interleave := Interleave}) ->
	BlockMutations =/= [] orelse Interleave =/= [].

hpack_step() ->
	frequency([
		{8, ?LET({Fields, Huffman, Indexing}, {hpack_fields(), boolean(), boolean()},
			{request, Fields, #{huffman => Huffman, indexing => Indexing}})},
		{1, {table_size, range(0, 4096)}}
	]).

%% The fields of a request after its pseudo-header fields; Scheme is added
%% by hpack_bytes/2.
hpack_fields() ->
	{elements([<<"GET">>, <<"POST">>, <<"HEAD">>, <<"DELETE">>]), path(),
		short_list(12, hpack_field())}.

hpack_field() ->
	?LET({{Name, Value}, Flag},
		{frequency([
			{5, {elements([<<"accept">>, <<"user-agent">>, <<"cookie">>, <<"x-a">>, <<"x-b">>,
				<<"cache-control">>, <<"referer">>, <<"accept-language">>]), field_value()}},
			{3, {lowercase_token(), field_value()}},
			{1, {lowercase_token(), ?LET(N, range(500, 3000), binary:copy(<<"v">>, N))}}
		]), frequency([{6, none}, {1, never_indexed}])},
		case Flag of
			none -> {Name, Value};
			_ -> {Name, Value, Flag}
		end).

lowercase_token() ->
	?SUCHTHAT(Name, ?LET(L, non_empty(list(elements("abcdefghijklmnopqrstuvwxyz0123456789-"))),
		list_to_binary(L)), not is_reserved(Name)).

block_mutation() ->
	frequency([
		{6, {bytes, nat(), mutation()}},
		{1, {drop, nat()}},
		{1, {duplicate, nat()}},
		{1, {swap, nat(), nat()}}
	]).

interleaved_frame() ->
	oneof([
		mustang_http2_frame:ping(1),
		mustang_http2_frame:priority(3, shared, 0, 16),
		iolist_to_binary(mustang_http2_frame:data(1, nofin, <<"x">>)),
		iolist_to_binary(h2_request_frame(99, <<"/">>))
	]).

%% The blocks, as encoded then mutated.
hpack_blocks(#{steps := Steps, block_mutations := BlockMutations}, Scheme) ->
	{Blocks, _} = lists:foldl(fun
		({request, {Method, Path, Fields}, Opts}, {Acc, Enc}) ->
			Headers = [{<<":method">>, Method}, {<<":scheme">>, Scheme}, {<<":path">>, Path},
				{<<":authority">>, <<"localhost">>} | Fields],
			{Block, Enc2} = mustang_hpack:encode(Headers, Enc, Opts),
			{[iolist_to_binary(Block) | Acc], Enc2};
		({table_size, Size}, {Acc, Enc}) ->
			{Acc, mustang_hpack:set_max_size(Size, Enc)}
	end, {[], mustang_hpack:init()}, Steps),
	lists:foldl(fun
		({bytes, _, _}, []) -> [];
		({bytes, I, Mutation}, Bs) ->
			{A, [B | C]} = lists:split(I rem length(Bs), Bs),
			A ++ [mutate(B, [Mutation]) | C];
		(ListMutation, Bs) -> mutate_list(Bs, [ListMutation])
	end, lists:reverse(Blocks), BlockMutations).

%% The stream ids of the requests hpack_bytes/2 sends.
hpack_streams(Case) ->
	[2 * I - 1 || I <- lists:seq(1, length(hpack_blocks(Case, <<"http">>)))].

hpack_bytes(Case = #{frame_sizes := Sizes, interleave := Interleave}, Scheme) ->
	Blocks = hpack_blocks(Case, Scheme),
	Framed = [[iolist_to_binary(F) || F <- headers_frames(2 * I - 1, Block,
			lists:nth(I rem max(1, length(Sizes)) + 1, Sizes ++ [16384]))]
		|| {I, Block} <- lists:zip(lists:seq(1, length(Blocks)), Blocks)],
	Framed2 = lists:foldl(fun({I, J, Frame}, Fs) when Fs =/= [] ->
		{A, [Frames | C]} = lists:split(I rem length(Fs), Fs),
		{F1, F2} = lists:split(J rem (length(Frames) + 1), Frames),
		A ++ [F1 ++ [Frame | F2] | C];
		(_, Fs) -> Fs
	end, Framed, Interleave),
	iolist_to_binary(Framed2).

%% HEADERS (END_STREAM) and CONTINUATION frames of at most Max bytes each.
headers_frames(Sid, Block, Max) when byte_size(Block) =< Max ->
	[mustang_http2_frame:headers(Sid, fin, Block)];
headers_frames(Sid, Block, Max) ->
	<<First:Max/binary, Rest/binary>> = Block,
	[<<Max:24, 1:8, 1:8, 0:1, Sid:31, First/binary>> | continuations(Sid, Rest, Max)].

continuations(Sid, Block, Max) when byte_size(Block) =< Max ->
	[mustang_http2_frame:continuation(Sid, head_fin, Block)];
continuations(Sid, Block, Max) ->
	<<Part:Max/binary, Rest/binary>> = Block,
	[mustang_http2_frame:continuation(Sid, head_nofin, Part) | continuations(Sid, Rest, Max)].

%% Websocket: messages as the frames a client sends (masked, some
%% fragmented, control frames between fragments), then frames mutated
%% (dropped, duplicated, swapped, a field changed) and bytes mutated.
%% A frame is {Fin, Rsv, Opcode, MaskKey | nomask, Payload, LengthEncoding}
%% with the payload unmasked; ws_frame/1 gives its bytes.

ws_case() ->
	?LET({Transport, Listener, Frames, FrameMutations, Mutations, Splits},
		{elements([h1, h2]), elements([clear, tls]), ws_frames(),
			frequency([{1, []}, {2, non_empty(list(ws_frame_mutation()))}]),
			frequency([{3, []}, {1, mutations(mutation())}]), splits()},
		#{transport => Transport, listener => Listener, frames => Frames,
			frame_mutations => FrameMutations, mutations => Mutations, splits => Splits}).

ws_bytes(#{frames := Frames, frame_mutations := FrameMutations, mutations := Mutations}) ->
	Frames2 = lists:foldl(fun ws_frame_mutation/2, Frames, FrameMutations),
	mutate(iolist_to_binary([ws_frame(F) || F <- Frames2]), Mutations).

ws_frames() ->
	?LET(Messages, short_list(8, ws_message()), lists:append(Messages)).

ws_message() ->
	frequency([
		{4, ?LET({Text, Splits, Pings}, {utf8(), splits(), list(ws_ping())},
			fragments(1, Text, Splits, Pings))},
		{3, ?LET({Bin, Splits, Pings}, {ws_binary(), splits(), list(ws_ping())},
			fragments(2, Bin, Splits, Pings))},
		{2, ?LET(F, ws_ping(), [F])},
		{1, ?LET({Payload, Key}, {ws_control_payload(), binary(4)},
			[{1, 0, 10, Key, Payload, min}])},
		{1, ?LET({Code, Reason, Key}, {ws_close_code(), ws_close_reason(), binary(4)},
			[{1, 0, 8, Key, <<Code:16, Reason/binary>>, min}])}
	]).

ws_binary() ->
	frequency([{8, binary()}, {1, ?LET(N, range(3000, 5000), binary:copy(<<"b">>, N))}]).

ws_control_payload() ->
	?LET(B, binary(), binary:part(B, 0, min(125, byte_size(B)))).

ws_ping() ->
	?LET({Payload, Key}, {ws_control_payload(), binary(4)}, {1, 0, 9, Key, Payload, min}).

ws_close_code() ->
	elements([1000, 1001, 1002, 1003, 1007, 1008, 1009, 1010, 1011, 3000, 4999]).

%% A UTF-8 reason of at most 123 bytes.
ws_close_reason() ->
	?LET(Text, utf8(), take_utf8(Text, 123)).

take_utf8(Text, Max) when byte_size(Text) =< Max ->
	Text;
take_utf8(Text, Max) ->
	take_utf8(unicode:characters_to_binary(lists:droplast(unicode:characters_to_list(Text))), Max).

%% A message cut into frames at the split points, pings after some of them.
fragments(Op, Payload, Splits, Pings) ->
	Pieces = split(Payload, Splits),
	Last = length(Pieces),
	Keys = [crypto:hash(md5, [integer_to_binary(I), Payload]) || I <- lists:seq(1, Last)],
	Frames = [{case I of Last -> 1; _ -> 0 end, 0, case I of 1 -> Op; _ -> 0 end,
		binary:part(Key, 0, 4), Piece, min}
		|| {I, Piece, Key} <- lists:zip3(lists:seq(1, Last), Pieces, Keys)],
	interleave(Frames, Pings).

interleave([F], _) -> [F];
interleave([F | Fs], [P | Ps]) -> [F, P | interleave(Fs, Ps)];
interleave(Fs, []) -> Fs.

ws_frame_mutation() ->
	frequency([
		{2, {drop, nat()}},
		{2, {duplicate, nat()}},
		{2, {swap, nat(), nat()}},
		{2, {rsv, nat(), range(1, 7)}},
		{2, {opcode, nat(), range(0, 15)}},
		{2, {fin, nat()}},
		{1, {unmask, nat()}},
		{2, {length, nat(), elements([16, 64])}},
		{2, {payload, nat(), mutation()}},
		{2, {invalid_utf8, nat(), frac(), elements([<<16#80>>, <<16#c0, 16#80>>, <<16#ff>>,
			<<16#ed, 16#a0, 16#80>>, <<16#f4, 16#90, 16#80, 16#80>>, <<16#e2, 16#82>>,
			<<16#f0, 16#9f>>, <<16#c3>>])}}
	]).

ws_frame_mutation(_, []) ->
	[];
ws_frame_mutation(M = {Op, _}, Frames) when Op =:= drop; Op =:= duplicate ->
	mutate_list(Frames, [M]);
ws_frame_mutation(M = {swap, _, _}, Frames) ->
	mutate_list(Frames, [M]);
ws_frame_mutation(Mutation, Frames) ->
	I = element(2, Mutation) rem length(Frames),
	{A, [{Fin, Rsv, Op, Key, Payload, Len} | B]} = lists:split(I, Frames),
	F2 = case Mutation of
		{rsv, _, R} -> {Fin, R, Op, Key, Payload, Len};
		{opcode, _, O} -> {Fin, Rsv, O, Key, Payload, Len};
		{fin, _} -> {1 - Fin, Rsv, Op, Key, Payload, Len};
		{unmask, _} -> {Fin, Rsv, Op, nomask, Payload, Len};
		{length, _, L} -> {Fin, Rsv, Op, Key, Payload, L};
		{payload, _, M} -> {Fin, Rsv, Op, Key, mutate(Payload, [M]), Len};
		{invalid_utf8, _, At, Bad} -> {Fin, Rsv, Op, Key, mutate(Payload, [{insert, At, Bad}]), Len}
	end,
	A ++ [F2 | B].

ws_frame({Fin, Rsv, Op, Key, Payload, LenEnc}) ->
	Len = byte_size(Payload),
	LenBits = if
		LenEnc =:= min, Len < 126 -> <<Len:7>>;
		LenEnc =/= 64, Len < 65536 -> <<126:7, Len:16>>;
		true -> <<127:7, Len:64>>
	end,
	case Key of
		nomask -> <<Fin:1, Rsv:3, Op:4, 0:1, LenBits/bits, Payload/binary>>;
		_ -> <<Fin:1, Rsv:3, Op:4, 1:1, LenBits/bits, Key/binary, (ws_mask(Payload, Key))/binary>>
	end.

ws_mask(<<>>, _) ->
	<<>>;
ws_mask(Payload, Key) ->
	Size = byte_size(Payload),
	crypto:exor(Payload, binary:part(binary:copy(Key, Size div 4 + 1), 0, Size)).
