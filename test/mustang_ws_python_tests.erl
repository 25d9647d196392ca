%% Cross-check of mustang_ws_frame, mustang_ws_deflate and mustang_utf8
%% against independent implementations, through test/ws_xcheck.py:
%% - wsproto masks client frames (sizes 0 to 1 MiB across the length
%%   encodings, fragmented messages with a ping inside, ping, pong, close)
%%   and we parse them; we build server frames and wsproto parses them;
%% - for each of five permessage-deflate offers made by wsproto, we answer
%%   with negotiate/2, websockets checks the answer as its client would,
%%   wsproto inflates our compressed frames, and we inflate wsproto's.
%% Python is found through MUSTANG_PYTHON (set by the Makefile), else
%% _tools/venv/bin/python. Without it, or without wsproto and websockets,
%% the test fails: run scripts/setup.sh.
-module(mustang_ws_python_tests).

-include_lib("eunit/include/eunit.hrl").

python_cross_check_test_() ->
	{timeout, 300, fun cross_check/0}.

cross_check() ->
	{Python, Script} = find_python(),
	Offers = [begin
		[Idx, Offer] = string:split(Line, " "),
		{binary_to_integer(Idx), Offer}
	end || Line <- run(Python, Script, "offers", <<>>)],
	?assertEqual(6, length(Offers)),
	%% Our server frames, no extension.
	{ServerStream, ServerExpected} = server_frames(),
	%% Our compressed server frames, one session per offer.
	Sessions = [begin
		{ok, Response, St0} = mustang_ws_deflate:negotiate(Offer, #{compress => true}),
		{Stream, Expected, St} = deflate_frames(St0),
		{Idx, Response, Stream, Expected, St}
	end || {Idx, Offer} <- Offers],
	Input = [["server ", hex(ServerStream), $\n]
		| [["deflate ", integer_to_binary(Idx), " ", hex(Stream), " ", Response, $\n]
			|| {Idx, Response, Stream, _, _} <- Sessions]],
	Report = [string:split(L, " ", all) || L <- run(Python, Script, "check", Input)],
	%% wsproto's client frames, parsed by us in one piece and in 4 KiB reads.
	[[<<"client">>, ClientHex]] = [L || L = [<<"client">>|_] <- Report],
	ClientStream = binary:decode_hex(ClientHex),
	ClientExpected = [{Op, Sha} || [<<"expect">>, Op, Sha] <- Report],
	?assertEqual(29, length(ClientExpected)),
	?assertEqual(ClientExpected, messages([ClientStream], none)),
	?assertEqual(ClientExpected, messages(chunks(ClientStream, 4096), none)),
	%% Our server frames, parsed by wsproto.
	?assertEqual(ServerExpected, [{Op, Sha} || [<<"server-msg">>, Op, Sha] <- Report]),
	[begin
		I = integer_to_binary(Idx),
		%% websockets accepts our response (it refuses 8-bit windows, so the
		%% last offer goes unchecked).
		?assertEqual({Idx, Response, ok},
			{Idx, Response, case [L || L = [<<"resp-", _/bits>>, J|_] <- Report, J =:= I] of
				[[<<"resp-ok">>, _]] -> ok;
				[[<<"resp-unchecked">>, <<"5">>]] -> ok;
				Other -> Other
			end}),
		?assertEqual({Idx, Expected},
			{Idx, [{Op, Sha} || [<<"deflate-msg">>, J, Op, Sha] <- Report, J =:= I]}),
		%% wsproto sends compressed frames for every offer but the 8-bit one.
		case [L || L = [<<"deflate-client">>, J, _] <- Report, J =:= I] of
			[] ->
				?assertEqual(5, Idx);
			[[_, _, DeflateHex]] ->
				DeflateExpected = [{Op, Sha} || [<<"deflate-expect">>, J, Op, Sha] <- Report,
					J =:= I],
				?assertEqual(11, length(DeflateExpected)),
				Frames = chunks(binary:decode_hex(DeflateHex), 1000),
				?assertEqual({Idx, DeflateExpected}, {Idx, messages(Frames, St)})
		end,
		mustang_ws_deflate:close(St)
	end || {Idx, Response, _, Expected, St} <- Sessions],
	ok.

%% Our frames and what wsproto must read from them.
server_frames() ->
	Sizes = [0, 1, 125, 126, 127, 65535, 65536, 65537, 1 bsl 20],
	Msgs = lists:append([[{text, text(S)}, {binary, crypto:strong_rand_bytes(S)}] || S <- Sizes]),
	Frames = Msgs ++ [{ping, <<"p">>}, pong, {close, 1001, <<"gone ☺"/utf8>>}],
	Fragmented = [
		mustang_ws_frame:fragment(text, nofin, false, <<"Hel">>),
		mustang_ws_frame:frame({ping, <<"x">>}),
		mustang_ws_frame:fragment(continuation, nofin, false, <<"lo">>),
		mustang_ws_frame:fragment(continuation, fin, false, <<"!">>)
	],
	Stream = iolist_to_binary([Fragmented, mustang_ws_frame:frames(Frames)]),
	Expected = [{<<"ping">>, sha(<<"x">>)}, {<<"text">>, sha(<<"Hello!">>)}]
		++ [{atom_to_binary(T), sha(D)} || {T, D} <- Msgs]
		++ [{<<"ping">>, sha(<<"p">>)}, {<<"pong">>, sha(<<>>)},
			{<<"close">>, sha(<<"1001:gone ☺"/utf8>>)}],
	{Stream, Expected}.

%% Compressed messages: whole ones, repeats (context takeover) and one sent
%% in fragments.
deflate_frames(St0) ->
	Rand = crypto:strong_rand_bytes(70000),
	Msgs = [{binary, <<>>}, {text, <<"Hello">>}, {text, binary:copy(<<"Hello">>, 100)},
		{binary, Rand}, {binary, Rand}, {text, binary:copy(<<"héllo wörld "/utf8>>, 1000)}],
	{Frames, St1} = lists:mapfoldl(fun({Type, Data}, St) ->
		{Deflated, St2} = mustang_ws_deflate:deflate(Data, St),
		{mustang_ws_frame:compressed_frame(Type, Deflated), St2}
	end, St0, Msgs),
	Long = binary:copy(<<"fragmented message ">>, 2000),
	<<A:10000/binary, B/binary>> = Long,
	{DA, St3} = mustang_ws_deflate:deflate(A, nofin, St1),
	{DB, St4} = mustang_ws_deflate:deflate(B, fin, St3),
	%% No control frame between these fragments: wsproto 1.3.2 forgets that
	%% the message is compressed after one (its inbound RSV1 state is reset
	%% by the control frame's header). Our parser is tested with them.
	Fragmented = [mustang_ws_frame:fragment(text, nofin, true, DA),
		mustang_ws_frame:fragment(continuation, fin, false, DB)],
	Expected = [{atom_to_binary(T), sha(D)} || {T, D} <- Msgs] ++ [{<<"text">>, sha(Long)}],
	{iolist_to_binary([Frames, Fragmented]), Expected, St4}.

%% Parse a stream fed in pieces, inflate compressed messages (Deflate is the
%% negotiated state, or none), validate text; {Opcode, SHA-256} per message.
messages(Pieces, Deflate) ->
	Opts = #{deflate => Deflate =/= none, max_frame_size => 16 * 1024 * 1024},
	messages(Pieces, mustang_ws_frame:init(Opts), Deflate, [], mustang_utf8:init(), []).

messages([], _, _, [], _, Acc) ->
	lists:reverse(Acc);
messages([Piece|Tail], St, Deflate, Parts, Utf8, Acc) ->
	event(mustang_ws_frame:parse(Piece, St), Tail, Deflate, Parts, Utf8, Acc).

event({more, St}, Pieces, Deflate, Parts, Utf8, Acc) ->
	messages(Pieces, St, Deflate, Parts, Utf8, Acc);
event({frame, Frame, Rest, St}, Pieces, Deflate, Parts, Utf8, Acc) ->
	Msg = case Frame of
		{close, Code, Reason} -> {<<"close">>, sha([integer_to_binary(Code), ":", Reason])};
		{Op, Payload} -> {atom_to_binary(Op), sha(Payload)}
	end,
	event(mustang_ws_frame:parse(Rest, St), Pieces, Deflate, Parts, Utf8, [Msg|Acc]);
event({data, Type, Compressed, Fin, Data, Rest, St}, Pieces, Deflate, Parts, Utf8, Acc) ->
	{Plain, Deflate2} = case Compressed of
		true ->
			{ok, Out, D2} = mustang_ws_deflate:inflate(Data, Fin, Deflate, 16 * 1024 * 1024),
			{iolist_to_binary(Out), D2};
		false ->
			{Data, Deflate}
	end,
	{ok, Utf8b} = case Type of
		text -> mustang_utf8:validate(Plain, Utf8);
		binary -> {ok, Utf8}
	end,
	case Fin of
		nofin ->
			event(mustang_ws_frame:parse(Rest, St), Pieces, Deflate2, [Plain|Parts], Utf8b, Acc);
		fin ->
			ok = mustang_utf8:finish(Utf8b),
			Msg = {atom_to_binary(Type), sha(lists:reverse([Plain|Parts]))},
			event(mustang_ws_frame:parse(Rest, St), Pieces, Deflate2, [], mustang_utf8:init(),
				[Msg|Acc])
	end;
event({error, Code, Reason}, _, _, _, _, Acc) ->
	lists:reverse([{error, Code, Reason}|Acc]).

%% Helpers.

find_python() ->
	Source = proplists:get_value(source, ?MODULE:module_info(compile)),
	TestDirs = [filename:dirname(Source), "test"],
	[Script|_] = [S || D <- TestDirs, S <- [filename:join(D, "ws_xcheck.py")],
		filelib:is_regular(S)] ++ [missing],
	?assertNotEqual(missing, Script),
	Root = filename:dirname(filename:dirname(filename:absname(Script))),
	Candidates = [os:getenv("MUSTANG_PYTHON"), filename:join(Root, "_tools/venv/bin/python"),
		"_tools/venv/bin/python"],
	case [P || P <- Candidates, is_list(P), P =/= "", filelib:is_regular(P)] of
		[Python|_] ->
			Check = os:cmd(Python ++ " -c 'import wsproto, websockets; print(\"ws-ok\")' 2>&1"),
			?assertEqual({Python, "ws-ok\n"}, {Python, Check}),
			{Python, Script};
		[] ->
			erlang:error({python_not_found, "set MUSTANG_PYTHON or run scripts/setup.sh",
				Candidates})
	end.

run(Python, Script, Command, Input) ->
	Dir = filename:join(filename:basedir(user_cache, "mustang_ws_python_tests"),
		integer_to_list(erlang:unique_integer([positive]))),
	ok = filelib:ensure_dir(filename:join(Dir, "x")),
	In = filename:join(Dir, "in.txt"),
	Err = filename:join(Dir, "err.txt"),
	ok = file:write_file(In, Input),
	Out = os:cmd(Python ++ " " ++ Script ++ " " ++ Command ++ " < " ++ In ++ " 2> " ++ Err
		++ "; echo \"exit=$?\""),
	{ok, Stderr} = file:read_file(Err),
	_ = [file:delete(F) || F <- [In, Err]],
	_ = file:del_dir(Dir),
	Lines = [L || L <- binary:split(unicode:characters_to_binary(Out), <<"\n">>, [global]),
		L =/= <<>>],
	?assertEqual({<<"exit=0">>, Stderr}, {lists:last(Lines), <<>>}),
	lists:droplast(Lines).

sha(Data) ->
	string:lowercase(binary:encode_hex(crypto:hash(sha256, Data))).

hex(Bin) ->
	binary:encode_hex(Bin).

%% The same text as ws_xcheck.py's text/1.
text(Size) ->
	Pattern = <<"0123456789abcdef€"/utf8>>,
	cut(binary:part(binary:copy(Pattern, Size div byte_size(Pattern) + 1), 0, Size)).

cut(Bin) ->
	case unicode:characters_to_binary(Bin) of
		B when is_binary(B) -> Bin;
		_ -> cut(binary:part(Bin, 0, byte_size(Bin) - 1))
	end.

chunks(Bin, Size) when byte_size(Bin) =< Size ->
	[Bin];
chunks(Bin, Size) ->
	<<Chunk:Size/binary, Rest/binary>> = Bin,
	[Chunk|chunks(Rest, Size)].
