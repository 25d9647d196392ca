%% permessage-deflate (RFC 7692) for the server side of a Websocket
%% connection: negotiation of the Sec-WebSocket-Extensions offers, and the
%% compression of messages, with OTP's zlib.
%%
%% Negotiation. negotiate(Offers, Opts) reads the client's
%% Sec-WebSocket-Extensions value (several header lines joined with ", ")
%% and accepts the first permessage-deflate offer that is valid, returning
%% the value of our Sec-WebSocket-Extensions response header and a state. It
%% returns none when compress is not true in Opts, when no offer is valid,
%% and when the header does not follow the grammar of RFC 6455 9.1 (after a
%% syntax error the offers cannot be told apart). An offer is invalid, and
%% skipped (RFC 7692 5), when it has an unknown parameter, a parameter twice,
%% a value where none is allowed or none where one is required, or a window
%% size that is not 8 to 15 written without leading zeros (RFC 7692 7.1.2;
%% the quoted-string form is accepted, RFC 6455 9.1). Names are compared
%% case-insensitively.
%%
%% Opts (the shape of Cowboy's compress and deflate_opts options):
%%   compress => boolean()             (false)
%%   deflate_opts => #{
%%     level => zlib:zlevel()                           (default)
%%     mem_level => zlib:zmemlevel()                    (8)
%%     strategy => zlib:zstrategy()                     (default)
%%     server_context_takeover => takeover | no_takeover (takeover)
%%     client_context_takeover => takeover | no_takeover (takeover)
%%     server_max_window_bits => 8..15                  (15)
%%     client_max_window_bits => 8..15                  (15)
%%   }
%% What we answer (RFC 7692 7.1):
%% - server_no_context_takeover when the client asked for it or the option
%%   says no_takeover; our compressor is then reset after each message.
%% - client_no_context_takeover when the client offered it or the option
%%   says no_takeover (a server may always send it, 7.1.1.2); our
%%   decompressor is then reset after each message.
%% - server_max_window_bits=N, N the smaller of the client's value and ours,
%%   when the client sent the parameter or ours is below 15 (a server may
%%   say it uses a smaller window than the client allows, 7.1.2.1).
%% - client_max_window_bits=N, N the smaller of the client's value (15 when
%%   it gave none) and ours, only when the client offered the parameter: the
%%   response must not have it otherwise (7.1.2.2), and then the client may
%%   use a 15-bit window whatever our option says, so we inflate with 15.
%% Window size 8: zlib refuses raw deflate with an 8-bit window (a stream
%% error; zlib since 1.2.9 turns 8 into 9 only for zlib-wrapped streams).
%% When we announce server_max_window_bits=8, we compress with 9 bits: zlib
%% keeps match distances within the window size minus 262 bytes (MAX_DIST
%% in its deflate.h), 250 bytes for a 9-bit window, so the stream never
%% refers further back than an 8-bit (256-byte) window reaches, which is
%% what the client's inflater relies on (RFC 7692 7.1.2.1). Inflating with
%% an 8-bit window works as is.
%%
%% Messages. The zlib streams are opened on first use by the process that
%% calls inflate/4 or deflate/2,3 (the connection process), and must be
%% closed with close/1.
%% - inflate(Data, Fin, St, MaxSize) inflates the next piece of a message
%%   whose first frame had RSV1 set, appending the 0x00 0x00 0xff 0xff tail
%%   at the end of the message (RFC 7692 7.2.2). It returns the inflated
%%   bytes as a list of binaries. It inflates in bounded steps
%%   (zlib:safeInflate/2) and stops with {error, {ws_error, 1009, _}} as
%%   soon as the message inflates past MaxSize bytes, so a small message
%%   cannot expand into a large memory use. Data that is not a deflate
%%   stream gives {error, {ws_error, 1007, _}}. A client may end a
%%   message's deflate stream with a final block (BFINAL set, RFC 7692
%%   7.2.3.3); by 7.2.1 the payload then ends with a 0x00 byte, which with
%%   the tail we append forms an empty stored block. The decompressor
%%   restarts with an empty window on the bytes that follow the final block
%%   (zlib's reset end-of-stream behaviour), so that block is read by the new
%%   stream and the next message inflates normally. A client that ends its
%%   stream this way and still refers to the previous window in the next
%%   message is not supported: zlib cannot go on after the end of a stream.
%% - deflate(Data, St) compresses a whole message: the output is the payload
%%   of a frame with RSV1 set (mustang_ws_frame:compressed_frame/2), the
%%   sync-flush tail removed (7.2.1). deflate(Data, nofin, St) and then
%%   deflate(Data, fin, St) compress a message sent in fragments.
-module(mustang_ws_deflate).

-export([negotiate/2]).
-export([inflate/4]).
-export([deflate/2]).
-export([deflate/3]).
-export([close/1]).
-export([info/1]).

-export_type([state/0, opts/0, deflate_opts/0]).

-type takeover() :: takeover | no_takeover.
-type window_bits() :: 8..15.

-type deflate_opts() :: #{
	level => zlib:zlevel(),
	mem_level => zlib:zmemlevel(),
	strategy => zlib:zstrategy(),
	server_context_takeover => takeover(),
	client_context_takeover => takeover(),
	server_max_window_bits => window_bits(),
	client_max_window_bits => window_bits()
}.

-type opts() :: #{
	compress => boolean(),
	deflate_opts => deflate_opts(),
	atom() => term()
}.

-record(ws_deflate, {
	level :: zlib:zlevel(),
	mem_level :: zlib:zmemlevel(),
	strategy :: zlib:zstrategy(),
	%% Negotiated: our window and the client's, and who keeps a context.
	server_bits :: window_bits(),
	client_bits :: window_bits(),
	server_takeover :: boolean(),
	client_takeover :: boolean(),
	%% Opened on first use.
	inflate = undefined :: undefined | zlib:zstream(),
	deflate = undefined :: undefined | zlib:zstream(),
	%% Bytes inflated so far in the current message.
	inflated = 0 :: non_neg_integer()
}).

-opaque state() :: #ws_deflate{}.

-define(TAIL, 0, 0, 255, 255).

%% Negotiation.

-spec negotiate(binary(), opts()) -> {ok, binary(), state()} | none.
negotiate(Header, Opts = #{compress := true}) ->
	case extensions(Header) of
		{ok, Extensions} ->
			accept([Params || {<<"permessage-deflate">>, Params} <- Extensions],
				maps:get(deflate_opts, Opts, #{}));
		error ->
			none
	end;
negotiate(_, _) ->
	none.

accept([], _) ->
	none;
accept([Params|Tail], DeflateOpts) ->
	case offer(Params, #{}) of
		{ok, Offer} -> response(Offer, DeflateOpts);
		error -> accept(Tail, DeflateOpts)
	end.

%% An offer's parameters as a map, or error when the offer is invalid.
offer([], Offer) ->
	{ok, Offer};
offer([{Name, _}|_], Offer) when is_map_key(Name, Offer) ->
	error;
offer([{Name = <<"server_no_context_takeover">>, true}|Tail], Offer) ->
	offer(Tail, Offer#{Name => true});
offer([{Name = <<"client_no_context_takeover">>, true}|Tail], Offer) ->
	offer(Tail, Offer#{Name => true});
offer([{Name = <<"client_max_window_bits">>, true}|Tail], Offer) ->
	offer(Tail, Offer#{Name => true});
offer([{Name, Value}|Tail], Offer) when Name =:= <<"server_max_window_bits">>;
		Name =:= <<"client_max_window_bits">> ->
	case window_bits(Value) of
		error -> error;
		Bits -> offer(Tail, Offer#{Name => Bits})
	end;
offer(_, _) ->
	error.

window_bits(<<"8">>) -> 8;
window_bits(<<"9">>) -> 9;
window_bits(<<"10">>) -> 10;
window_bits(<<"11">>) -> 11;
window_bits(<<"12">>) -> 12;
window_bits(<<"13">>) -> 13;
window_bits(<<"14">>) -> 14;
window_bits(<<"15">>) -> 15;
window_bits(_) -> error.

response(Offer, Opts) ->
	ServerTakeover = not (maps:is_key(<<"server_no_context_takeover">>, Offer)
		orelse maps:get(server_context_takeover, Opts, takeover) =:= no_takeover),
	ClientTakeover = not (maps:is_key(<<"client_no_context_takeover">>, Offer)
		orelse maps:get(client_context_takeover, Opts, takeover) =:= no_takeover),
	OurServerBits = maps:get(server_max_window_bits, Opts, 15),
	ServerBits = min(OurServerBits, maps:get(<<"server_max_window_bits">>, Offer, 15)),
	{ClientBits, ClientBitsParam} = case maps:get(<<"client_max_window_bits">>, Offer, none) of
		none ->
			{15, []};
		Offered ->
			Bits = case Offered of
				true -> maps:get(client_max_window_bits, Opts, 15);
				_ -> min(Offered, maps:get(client_max_window_bits, Opts, 15))
			end,
			{Bits, [<<"; client_max_window_bits=">>, integer_to_binary(Bits)]}
	end,
	ServerBitsParam = case maps:is_key(<<"server_max_window_bits">>, Offer)
			orelse ServerBits < 15 of
		true -> [<<"; server_max_window_bits=">>, integer_to_binary(ServerBits)];
		false -> []
	end,
	Response = iolist_to_binary([<<"permessage-deflate">>,
		[<<"; server_no_context_takeover">> || not ServerTakeover],
		[<<"; client_no_context_takeover">> || not ClientTakeover],
		ServerBitsParam, ClientBitsParam]),
	{ok, Response, #ws_deflate{
		level = maps:get(level, Opts, default),
		mem_level = maps:get(mem_level, Opts, 8),
		strategy = maps:get(strategy, Opts, default),
		server_bits = ServerBits,
		client_bits = ClientBits,
		server_takeover = ServerTakeover,
		client_takeover = ClientTakeover
	}}.

%% Sec-WebSocket-Extensions (RFC 6455 9.1):
%%   extension-list = 1#extension
%%   extension = extension-token *( ";" extension-param )
%%   extension-param = token [ "=" (token | quoted-string) ]
%% with optional whitespace around the separators, and empty list elements
%% allowed (RFC 9110 5.6.1). Gives [{Name, [{Param, Value | true}]}], names
%% in lowercase.
extensions(Bin) ->
	try
		{ok, extension_list(ows(Bin), [])}
	catch throw:syntax ->
		error
	end.

extension_list(<<>>, Acc) ->
	lists:reverse(Acc);
extension_list(<<$,, Rest/bits>>, Acc) ->
	extension_list(ows(Rest), Acc);
extension_list(Bin, Acc) ->
	{Name, Rest} = token(Bin),
	{Params, Rest2} = params(ows(Rest), []),
	case Rest2 of
		<<>> -> lists:reverse([{Name, Params}|Acc]);
		<<$,, Rest3/bits>> -> extension_list(ows(Rest3), [{Name, Params}|Acc]);
		_ -> throw(syntax)
	end.

params(<<$;, Rest/bits>>, Acc) ->
	{Name, Rest2} = token(ows(Rest)),
	case ows(Rest2) of
		<<$=, Rest3/bits>> ->
			{Value, Rest4} = value(ows(Rest3)),
			params(ows(Rest4), [{Name, Value}|Acc]);
		Rest3 ->
			params(Rest3, [{Name, true}|Acc])
	end;
params(Rest, Acc) ->
	{lists:reverse(Acc), Rest}.

value(<<$", Rest/bits>>) ->
	quoted(Rest, <<>>);
value(Bin) ->
	{Token, Rest} = token(Bin),
	{Token, Rest}.

%% The unescaped value must be a token (RFC 6455 9.1); window_bits/1 then
%% refuses everything but 8 to 15, so it is not checked here.
quoted(<<$", Rest/bits>>, Acc) -> {Acc, Rest};
quoted(<<$\\, C, Rest/bits>>, Acc) -> quoted(Rest, <<Acc/binary, C>>);
quoted(<<C, Rest/bits>>, Acc) when C =/= $\\ -> quoted(Rest, <<Acc/binary, C>>);
quoted(_, _) -> throw(syntax).

token(Bin) ->
	case token_size(Bin, 0) of
		0 -> throw(syntax);
		Size ->
			<<Token:Size/binary, Rest/bits>> = Bin,
			{string:lowercase(Token), Rest}
	end.

token_size(Bin, N) ->
	case Bin of
		<<_:N/binary, C, _/bits>> when C >= $a, C =< $z; C >= $A, C =< $Z; C >= $0, C =< $9;
				C =:= $!; C =:= $#; C =:= $$; C =:= $%; C =:= $&; C =:= $'; C =:= $*;
				C =:= $+; C =:= $-; C =:= $.; C =:= $^; C =:= $_; C =:= $`; C =:= $|;
				C =:= $~ ->
			token_size(Bin, N + 1);
		_ ->
			N
	end.

ows(<<C, Rest/bits>>) when C =:= $\s; C =:= $\t -> ows(Rest);
ows(Bin) -> Bin.

%% Messages.

-spec inflate(binary(), fin | nofin, state(), non_neg_integer() | infinity)
	-> {ok, [binary()], state()} | {error, mustang_error:ws_error()}.
inflate(Data, Fin, St0, MaxSize) ->
	St = #ws_deflate{inflate = Z, inflated = Size} = open_inflate(St0),
	Input = case Fin of
		fin -> [Data, <<?TAIL>>];
		nofin -> Data
	end,
	try inflate_loop(Z, zlib:safeInflate(Z, Input), Size, MaxSize, []) of
		{ok, Out, _} when Fin =:= fin ->
			_ = [zlib:inflateReset(Z) || not St#ws_deflate.client_takeover],
			{ok, Out, St#ws_deflate{inflated = 0}};
		{ok, Out, Size2} ->
			{ok, Out, St#ws_deflate{inflated = Size2}};
		too_big ->
			{error, {ws_error, 1009, 'The message inflates past max_frame_size. (RFC6455 7.4.1)'}}
	catch error:data_error ->
		{error, {ws_error, 1007, 'The message is not a valid deflate stream. (RFC7692 7.2.2)'}}
	end.

inflate_loop(Z, {Status, Chunk}, Size0, MaxSize, Acc) ->
	Bin = iolist_to_binary(Chunk),
	Size = Size0 + byte_size(Bin),
	Acc2 = case Bin of
		<<>> -> Acc;
		_ -> [Bin|Acc]
	end,
	if
		is_integer(MaxSize), Size > MaxSize ->
			too_big;
		Status =:= continue ->
			inflate_loop(Z, zlib:safeInflate(Z, []), Size, MaxSize, Acc2);
		true ->
			{ok, lists:reverse(Acc2), Size}
	end;
inflate_loop(_, {need_dictionary, _, _}, _, _, _) ->
	erlang:error(data_error).

open_inflate(St = #ws_deflate{inflate = undefined, client_bits = Bits}) ->
	Z = zlib:open(),
	ok = zlib:inflateInit(Z, -Bits, reset),
	St#ws_deflate{inflate = Z};
open_inflate(St) ->
	St.

-spec deflate(iodata(), state()) -> {iodata(), state()}.
deflate(Data, St) ->
	deflate(Data, fin, St).

-spec deflate(iodata(), fin | nofin, state()) -> {iodata(), state()}.
deflate(Data, nofin, St0) ->
	St = #ws_deflate{deflate = Z} = open_deflate(St0),
	{zlib:deflate(Z, Data, none), St};
deflate(Data, fin, St0) ->
	St = #ws_deflate{deflate = Z} = open_deflate(St0),
	Out = iolist_to_binary(zlib:deflate(Z, Data, sync)),
	_ = [zlib:deflateReset(Z) || not St#ws_deflate.server_takeover],
	%% A sync flush ends with the 4 bytes of an empty stored block, which
	%% are removed (RFC 7692 7.2.1). With nothing to flush (an empty message
	%% after another), zlib writes nothing: the message is then the single
	%% byte 0x00, an empty block without its tail (RFC 7692 7.2.3.6).
	Size = byte_size(Out) - 4,
	case Out of
		<<Payload:Size/binary, ?TAIL>> -> {Payload, St};
		_ -> {<<Out/binary, 0>>, St}
	end.

open_deflate(St = #ws_deflate{deflate = undefined, server_bits = Bits, level = Level,
		mem_level = MemLevel, strategy = Strategy}) ->
	%% See the head comment for 8.
	Z = zlib:open(),
	ok = zlib:deflateInit(Z, Level, deflated, -max(Bits, 9), MemLevel, Strategy),
	St#ws_deflate{deflate = Z};
open_deflate(St) ->
	St.

-spec close(state()) -> ok.
close(#ws_deflate{inflate = In, deflate = Out}) ->
	_ = [zlib:close(Z) || Z <- [In, Out], Z =/= undefined],
	ok.

%% The negotiated parameters.
-spec info(state()) -> #{server_max_window_bits := window_bits(),
	client_max_window_bits := window_bits(), server_context_takeover := takeover(),
	client_context_takeover := takeover()}.
info(#ws_deflate{server_bits = SB, client_bits = CB, server_takeover = ST,
		client_takeover = CT}) ->
	#{
		server_max_window_bits => SB,
		client_max_window_bits => CB,
		server_context_takeover => case ST of true -> takeover; false -> no_takeover end,
		client_context_takeover => case CT of true -> takeover; false -> no_takeover end
	}.
