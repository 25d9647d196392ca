%% Incremental UTF-8 validation (RFC 3629) for Websocket text messages
%% (RFC 6455 5.6 and 8.1). Pure functions on binaries.
%%
%% A text message may arrive in many pieces (frames, TCP reads, inflated
%% chunks) and a code point may be split between two of them. The state
%% carries the incomplete sequence at the end of the last piece (0 to 3
%% bytes, already checked to be the start of a valid sequence), so the
%% result does not depend on where the message was cut.
%%
%% Contract:
%%   State0 = init(),
%%   {ok, State1} = validate(Piece1, State0), ...,
%%   ok = finish(StateN)                   at the end of the message.
%% validate/2 returns {error, Error} as soon as the bytes seen so far
%% cannot start a valid text: overlong forms, surrogates (U+D800-DFFF), code
%% points above U+10FFFF, bytes C0, C1, F5-FF, stray continuation bytes, and
%% an incomplete sequence that could not be completed. finish/1 returns
%% {error, Error} when the message ends inside a sequence. Error is the
%% Websocket error {ws_error, 1007, Reason} (mustang_error).
%% validate/1 checks one whole text.
%%
%% How (figures in doc/internals/websocket_codecs.md, measured with
%% bench/ws_codecs_micro.escript): ASCII runs are skipped 8 bytes at a time,
%% matched as two 32-bit integers whose union has no high bit set. Matching
%% one 64-bit integer with the band 16#8080808080808080 is about 6x slower on
%% a 64-bit VM: values above 2^59 are bignums. At the first non-ASCII byte
%% the rest of the piece goes to unicode:characters_to_binary/3, which runs
%% in C and was 3-4x faster on mixed and mostly non-ASCII text than a
%% byte-level Erlang decoder (and than matching <<_/utf8>>). Its
%% {incomplete, ...} answer is not trusted as is: the trailing bytes are
%% checked here to be the start of a valid sequence.
-module(mustang_utf8).

-export([init/0]).
-export([validate/1]).
-export([validate/2]).
-export([finish/1]).

-export_type([state/0]).

%% The incomplete trailing sequence of the text seen so far (<<>>: none).
-opaque state() :: binary().

-define(ERROR, {error, {ws_error, 1007, 'Text messages must be valid UTF-8. (RFC6455 8.1)'}}).

-spec init() -> state().
init() ->
	<<>>.

%% A whole text.
-spec validate(binary()) -> ok | {error, mustang_error:ws_error()}.
validate(Bin) ->
	case validate(Bin, <<>>) of
		{ok, <<>>} -> ok;
		_ -> ?ERROR
	end.

-spec validate(binary(), state()) -> {ok, state()} | {error, mustang_error:ws_error()}.
validate(Bin, <<>>) ->
	ascii(Bin);
validate(Bin, Partial) ->
	%% Complete the carried sequence with the first bytes of this piece
	%% without copying the piece.
	Missing = seq_size(Partial) - byte_size(Partial),
	case Bin of
		<<More:Missing/binary, Rest/bits>> ->
			case <<Partial/binary, More/binary>> of
				<<_/utf8>> -> ascii(Rest);
				_ -> ?ERROR
			end;
		_ ->
			partial(<<Partial/binary, Bin/binary>>)
	end.

-spec finish(state()) -> ok | {error, mustang_error:ws_error()}.
finish(<<>>) -> ok;
finish(_) -> ?ERROR.

%% ASCII fast path, 8 bytes then 1 byte at a time.
ascii(<<A:32, B:32, Rest/bits>>) when (A bor B) band 16#80808080 =:= 0 ->
	ascii(Rest);
ascii(<<C, Rest/bits>>) when C < 128 ->
	ascii(Rest);
ascii(<<>>) ->
	{ok, <<>>};
ascii(Bin) ->
	case unicode:characters_to_binary(Bin, utf8, utf8) of
		Valid when is_binary(Valid) -> {ok, <<>>};
		{incomplete, _, Partial} -> partial(Partial);
		{error, _, _} -> ?ERROR
	end.

%% A trailing incomplete sequence is kept only if some continuation could
%% make it valid (RFC 3629 4, UTF8-2 to UTF8-4).
partial(Bin) ->
	case is_prefix(Bin) of
		true -> {ok, Bin};
		false -> ?ERROR
	end.

is_prefix(<<A>>) -> A >= 16#C2 andalso A =< 16#F4;
is_prefix(<<16#E0, B>>) -> B >= 16#A0 andalso B =< 16#BF;
is_prefix(<<16#ED, B>>) -> B >= 16#80 andalso B =< 16#9F;
is_prefix(<<A, B>>) when A >= 16#E1, A =< 16#EF -> is_tail(B);
is_prefix(<<16#F0, B>>) -> B >= 16#90 andalso B =< 16#BF;
is_prefix(<<16#F4, B>>) -> B >= 16#80 andalso B =< 16#8F;
is_prefix(<<A, B>>) when A >= 16#F1, A =< 16#F3 -> is_tail(B);
is_prefix(<<A, B, C>>) when A >= 16#F0, A =< 16#F4 -> is_prefix(<<A, B>>) andalso is_tail(C);
is_prefix(_) -> false.

is_tail(B) -> B >= 16#80 andalso B =< 16#BF.

%% Length of the sequence that a valid prefix starts.
seq_size(<<A, _/bits>>) when A < 16#E0 -> 2;
seq_size(<<A, _/bits>>) when A < 16#F0 -> 3;
seq_size(_) -> 4.
