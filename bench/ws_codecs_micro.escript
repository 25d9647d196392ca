#!/usr/bin/env escript
%% -*- erlang -*-
%% Micro-measurements behind the choices in mustang_ws_frame (unmasking)
%% and mustang_utf8 (validation). A few seconds in all, one process; best of
%% 5 rounds of about 20 ms each, so that other load on the machine shows
%% less. Run after `rebar3 compile`:
%%
%%   escript bench/ws_codecs_micro.escript
%%
%% Each line gives the size, the time per call in microseconds and the
%% throughput in MB/s (10^6 bytes per second). Every variant is first
%% checked against the module's own function.
-mode(compile).

main(_) ->
	Root = filename:dirname(filename:dirname(filename:absname(escript:script_name()))),
	true = code:add_patha(filename:join(Root, "_build/default/lib/mustang/ebin")),
	io:format("OTP ~s, ~s emulator, ~b schedulers~n~n",
		[erlang:system_info(otp_release), erlang:system_info(emu_flavor),
			erlang:system_info(schedulers_online)]),
	unmasking(),
	utf8().

%% Unmasking.

unmasking() ->
	io:format("Unmasking (MB/s)~n~-10s", ["size"]),
	Variants = [
		{"4B step", fun step4/2},
		{"16B step", fun step16/2},
		{"exor+copy", fun exor_copy/2},
		{"exor+dbl", fun exor_double/2},
		{"module", fun mustang_ws_frame:unmask/2}
	],
	_ = [io:format("~14s", [Name]) || {Name, _} <- Variants],
	io:format("~n"),
	Key = 16#37fa213d,
	_ = [begin
		Bin = crypto:strong_rand_bytes(Size),
		Expected = step4(Bin, Key),
		io:format("~-10b", [Size]),
		_ = [begin
			Expected = F(Bin, Key),
			{Us, MBs} = measure(fun() -> F(Bin, Key) end, Size),
			io:format("~14s", [io_lib:format("~.2fus ~b", [Us, MBs])])
		end || {_, F} <- Variants],
		io:format("~n")
	end || Size <- [2, 16, 125, 1024, 16384, 65536]],
	io:format("~n").

step4(Bin, Key) ->
	Size = byte_size(Bin) band -4,
	<<Body:Size/binary, Tail/bits>> = Bin,
	<< << <<(X bxor Key):32>> || <<X:32>> <= Body >>/binary, (tail(Tail, Key))/binary >>.

step16(Bin, Key) ->
	Size = byte_size(Bin) band -16,
	<<Body:Size/binary, Tail/bits>> = Bin,
	Out = << <<(A bxor Key):32, (B bxor Key):32, (C bxor Key):32, (D bxor Key):32>>
		|| <<A:32, B:32, C:32, D:32>> <= Body >>,
	<<Out/binary, (step4(Tail, Key))/binary>>.

exor_copy(Bin, Key) ->
	Size = byte_size(Bin),
	crypto:exor(Bin, binary:part(binary:copy(<<Key:32>>, (Size + 3) div 4), 0, Size)).

exor_double(Bin, Key) ->
	crypto:exor(Bin, double(<<Key:32>>, byte_size(Bin))).

double(Mask, Size) when byte_size(Mask) >= Size -> binary:part(Mask, 0, Size);
double(Mask, Size) -> double(<<Mask/binary, Mask/binary>>, Size).

tail(<<>>, _) -> <<>>;
tail(<<A:8>>, K) -> <<(A bxor (K bsr 24)):8>>;
tail(<<A:16>>, K) -> <<(A bxor (K bsr 16)):16>>;
tail(<<A:24>>, K) -> <<(A bxor (K bsr 8)):24>>.

%% UTF-8 validation.

utf8() ->
	io:format("UTF-8 validation (MB/s)~n~-14s", ["text"]),
	Variants = [
		{"64-bit band", fun band64/1},
		{"<<_/utf8>>", fun utf8_match/1},
		{"unicode only", fun unicode_only/1},
		{"module", fun mustang_utf8:validate/1}
	],
	_ = [io:format("~16s", [Name]) || {Name, _} <- Variants],
	io:format("~n"),
	_ = [begin
		Bin = text(Kind, Size),
		io:format("~-14s", [io_lib:format("~s ~b", [Kind, byte_size(Bin)])]),
		_ = [begin
			ok = F(Bin),
			{Us, MBs} = measure(fun() -> F(Bin) end, byte_size(Bin)),
			io:format("~16s", [io_lib:format("~.2fus ~b", [Us, MBs])])
		end || {_, F} <- Variants],
		io:format("~n")
	end || Kind <- [ascii, mixed, utf8], Size <- [1024, 65536]],
	ok.

band64(<<X:64, R/bits>>) when X band 16#8080808080808080 =:= 0 -> band64(R);
band64(<<X, R/bits>>) when X < 128 -> band64(R);
band64(<<_/utf8, R/bits>>) -> band64(R);
band64(<<>>) -> ok;
band64(_) -> error.

utf8_match(<<A:32, B:32, R/bits>>) when (A bor B) band 16#80808080 =:= 0 -> utf8_match(R);
utf8_match(<<X, R/bits>>) when X < 128 -> utf8_match(R);
utf8_match(<<_/utf8, R/bits>>) -> utf8_match(R);
utf8_match(<<>>) -> ok;
utf8_match(_) -> error.

unicode_only(Bin) ->
	case unicode:characters_to_binary(Bin, utf8, utf8) of
		B when is_binary(B) -> ok;
		_ -> error
	end.

%% ASCII: letters and punctuation. Mixed: ASCII text with one non-ASCII
%% character (2, 3 or 4 bytes) in about every 8. Mostly UTF-8: Cyrillic and
%% CJK with spaces.
text(Kind, Size) ->
	Chars = list_to_tuple(case Kind of
		ascii -> lists:seq($a, $z) ++ " ,.";
		mixed -> lists:seq($a, $z) ++ " ,." ++ [16#e9, 16#439, 16#20ac, 16#1f600];
		utf8 -> lists:seq(16#430, 16#44f) ++ lists:seq(16#4e00, 16#4e3f) ++ " "
	end),
	S = rand:seed_s(exsss, {6455, 7692, 3629}),
	{Is, _} = lists:mapfoldl(fun(_, S0) -> rand:uniform_s(tuple_size(Chars), S0) end,
		S, lists:seq(1, Size)),
	cut(unicode:characters_to_binary([element(I, Chars) || I <- Is]), Size).

%% The longest prefix of at most Size bytes that ends on a character.
cut(Bin, Size) when byte_size(Bin) =< Size ->
	Bin;
cut(Bin, Size) ->
	case binary:at(Bin, Size) of
		C when C >= 16#80, C < 16#C0 -> cut(Bin, Size - 1);
		_ -> binary:part(Bin, 0, Size)
	end.

%% Best of 5 rounds, each about 20 ms.
measure(Fun, Bytes) ->
	N = max(1, 2000000 div (Bytes + 200)),
	Ns = lists:min([round_ns(Fun, N) || _ <- lists:seq(1, 5)]),
	{Ns / 1000, round(Bytes * 1000 / Ns)}.

round_ns(Fun, N) ->
	T0 = erlang:monotonic_time(nanosecond),
	loop(Fun, N),
	(erlang:monotonic_time(nanosecond) - T0) / N.

loop(_, 0) -> ok;
loop(Fun, N) -> _ = Fun(), loop(Fun, N - 1).
