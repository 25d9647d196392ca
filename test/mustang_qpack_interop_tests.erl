%% QPACK against implementations no one here wrote:
%% - the QPACK offline-interop files (qpackers/qifs, MIT): six encoders'
%%   output (f5, ls-qpack, nghttp3, proxygen, qthingey, quinn) for the same
%%   header lists, at table sizes 0, 256, 512 and 4096 and blocked-stream
%%   limits 0 and 100, must decode to exactly the source QIF lists. The
%%   whole set is read from $MUSTANG_QPACK_INTEROP, else ../shared/qpack-interop
%%   beside the repository or /work/shared/qpack-interop; without it, the
%%   subset kept in test/qpack_interop_netbsd.tar.gz (the netbsd lists, all
%%   encoders and settings) is used, and a note says so;
%% - ls-qpack through Python's pylsqpack (test/qpack_xcheck.py, run as a
%%   port): every static table entry; our encoder's output decoded by
%%   ls-qpack, and ls-qpack's encoder output decoded by ours, with PropEr
%%   over header lists, table sizes, blocked-stream limits, and the order in
%%   which encoder streams, field sections and acknowledgments arrive.
%%   Python is $MUSTANG_PYTHON (set by the Makefile), else _tools/venv/bin/python.
-module(mustang_qpack_interop_tests).

-include_lib("proper/include/proper.hrl").
-include_lib("eunit/include/eunit.hrl").

-define(Q, mustang_qpack).

%% The offline-interop files.

interop_test_() ->
	{setup, fun interop_dir/0, fun({_, Cleanup}) -> Cleanup() end, fun({Dir, _}) ->
		Files = filelib:wildcard(filename:join(Dir, "encoded/qpack-05/*/*.out.*")),
		Encoders = lists:usort([lists:nth(2, lists:reverse(filename:split(F))) || F <- Files]),
		[
			?_assertEqual(["f5", "ls-qpack", "nghttp3", "proxygen", "qthingey", "quinn"], Encoders),
			{timeout, 600, ?_assertEqual([], [{F, R} || F <- Files, (R = interop_file(Dir, F)) =/= ok])}
		]
	end}.

interop_dir() ->
	Root = mustang_test:root(),
	Candidates = [os:getenv("MUSTANG_QPACK_INTEROP"),
		filename:join([Root, "..", "shared", "qpack-interop"]), "/work/shared/qpack-interop"],
	case [D || D <- Candidates, is_list(D), filelib:is_dir(filename:join(D, "encoded"))] of
		[Dir | _] ->
			{Dir, fun() -> ok end};
		[] ->
			Tmp = filename:join(filename:basedir(user_cache, "mustang_qpack_interop"),
				integer_to_list(erlang:unique_integer([positive]))),
			ok = erl_tar:extract(filename:join([Root, "test", "qpack_interop_netbsd.tar.gz"]),
				[compressed, {cwd, Tmp}]),
			io:format(user, "~nqpack interop: the full set is not here; using the netbsd subset~n", []),
			{Tmp, fun() -> _ = file:del_dir_r(Tmp), ok end}
	end.

%% <name>.out.<table size>.<blocked streams>.<ack mode>: records of an
%% 8-byte stream id (0: the encoder stream) and a 4-byte length. These
%% encoders assume the capacity starts at its maximum, as drafts before RFC
%% 9204 had it, so the Set Dynamic Table Capacity they leave out is sent
%% first.
interop_file(Dir, File) ->
	[Name, "out", Cap, Blocked, _] = string:split(filename:basename(File), ".", all),
	Lists = qif(filename:join([Dir, "qifs", Name ++ ".qif"])),
	{ok, Bin} = file:read_file(File),
	D0 = ?Q:init_decoder(#{max_table_capacity => list_to_integer(Cap),
		blocked_streams => list_to_integer(Blocked)}),
	{ok, [], [], D} = ?Q:decoder_feed(mustang_qpack_wire:set_capacity(list_to_integer(Cap)), D0),
	Expected = maps:from_list(lists:zip(lists:seq(1, length(Lists)), Lists)),
	case records(Bin, D, #{}) of
		Expected -> ok;
		{error, _} = Error -> Error;
		Got -> {mismatch, [K || K <- maps:keys(Expected), maps:get(K, Got, none) =/= maps:get(K, Expected)]}
	end.

records(<<>>, D, Acc) ->
	case ?Q:blocked_streams(D) of
		0 -> Acc;
		N -> {error, {still_blocked, N}}
	end;
records(<<0:64, Len:32, Data:Len/binary, Rest/bits>>, D, Acc) ->
	case ?Q:decoder_feed(Data, D) of
		{ok, Unblocked, _, D2} ->
			records(Rest, D2, lists:foldl(fun({S, {ok, F}}, A) -> A#{S => F} end, Acc, Unblocked));
		Error ->
			Error
	end;
records(<<StreamID:64, Len:32, Data:Len/binary, Rest/bits>>, D, Acc) ->
	case ?Q:decode_field_section(StreamID, Data, D) of
		{ok, Fields, _, D2} -> records(Rest, D2, Acc#{StreamID => Fields});
		{blocked, D2} -> records(Rest, D2, Acc);
		Error -> Error
	end.

%% QIF: name<TAB>value lines, a blank line between lists, # comments.
qif(Path) ->
	{ok, Bin} = file:read_file(Path),
	qif(binary:split(Bin, <<"\n">>, [global]), [], []).

qif([], [], Acc) -> lists:reverse(Acc);
qif([], Cur, Acc) -> lists:reverse([lists:reverse(Cur) | Acc]);
qif([<<"#", _/bits>> | Rest], Cur, Acc) -> qif(Rest, Cur, Acc);
qif([<<>> | Rest], [], Acc) -> qif(Rest, [], Acc);
qif([<<>> | Rest], Cur, Acc) -> qif(Rest, [], [lists:reverse(Cur) | Acc]);
qif([Line | Rest], Cur, Acc) ->
	[Name, Value] = binary:split(Line, <<"\t">>),
	qif(Rest, [{Name, Value} | Cur], Acc).

%% ls-qpack, as a port.

python_test_() ->
	{setup, fun start/0, fun stop/1, fun(Port) -> [
		{timeout, 120, {"static table", ?_test(static_table(Port))}},
		{timeout, 60, {"rfc 9204 appendix B in ls-qpack", ?_test(appendix_b(Port))}},
		{timeout, 600, {"our encoder, ls-qpack's decoder",
			?_assert(proper:quickcheck(prop_encoder(Port), [{numtests, 200}, {to_file, user}]))}},
		{timeout, 600, {"ls-qpack's encoder, our decoder",
			?_assert(proper:quickcheck(prop_decoder(Port), [{numtests, 200}, {to_file, user}]))}}
	] end}.

%% The port belongs to a process of its own that serves calls: EUnit runs
%% each test in a new process, and a port talks to its owner only.
start() ->
	Parent = self(),
	Pid = spawn(fun() -> owner(Parent) end),
	receive
		{Pid, ready} -> Pid;
		{Pid, Error} -> error(Error)
	after 60000 ->
		error(qpack_xcheck_start_timeout)
	end.

owner(Parent) ->
	Root = mustang_test:root(),
	Python = case os:getenv("MUSTANG_PYTHON") of
		P when is_list(P), P =/= "" -> filename:absname(P, Root);
		_ -> filename:join(Root, "_tools/venv/bin/python")
	end,
	Script = filename:join([Root, "test", "qpack_xcheck.py"]),
	case filelib:is_regular(Python) of
		false ->
			Parent ! {self(), {python_not_found, Python, "run scripts/setup.sh"}};
		true ->
			Port = open_port({spawn_executable, Python}, [{args, [Script]}, {packet, 4}, binary,
				exit_status, use_stdio]),
			case port_call(Port, <<"D", 0:32, 0:32>>) of
				<<"o">> ->
					Parent ! {self(), ready},
					serve(Port);
				Other ->
					Parent ! {self(), {qpack_xcheck_failed, Other,
						"is pylsqpack installed? run scripts/setup.sh"}}
			end
	end.

serve(Port) ->
	receive
		{call, From, Ref, Request} ->
			From ! {Ref, port_call(Port, Request)},
			serve(Port);
		stop ->
			catch port_close(Port),
			ok
	end.

port_call(Port, Request) ->
	true = port_command(Port, Request),
	receive
		{Port, {data, Reply}} -> Reply;
		{Port, {exit_status, Status}} -> {qpack_xcheck_exited, Status}
	after 60000 ->
		qpack_xcheck_timeout
	end.

stop(Pid) ->
	Pid ! stop,
	ok.

call(Pid, Request) ->
	Ref = make_ref(),
	Pid ! {call, self(), Ref, Request},
	receive
		{Ref, Reply} when is_binary(Reply) -> Reply;
		{Ref, Error} -> error(Error)
	end.

b(Bin) -> [<<(iolist_size(Bin)):32>>, Bin].

hs(Fields) -> [<<(length(Fields)):32>>, [[b(N), b(V)] || {N, V} <- Fields]].

%% Replies: o control count (sid headers)*.
decoded(<<"o", Len:32, Control:Len/binary, Count:32, Rest/binary>>) ->
	{Control, streams(Count, Rest, [])};
decoded(<<"b">>) ->
	blocked;
decoded(<<"e", Error/binary>>) ->
	{error, {ls_qpack, Error}}.

streams(0, <<>>, Acc) -> lists:reverse(Acc);
streams(N, <<StreamID:64, Count:32, Rest/binary>>, Acc) ->
	{Fields, Rest2} = fields(Count, Rest, []),
	streams(N - 1, Rest2, [{StreamID, Fields} | Acc]).

fields(0, Rest, Acc) -> {lists:reverse(Acc), Rest};
fields(N, <<NL:32, Name:NL/binary, VL:32, Value:VL/binary, Rest/binary>>, Acc) ->
	fields(N - 1, Rest, [{Name, Value} | Acc]).

%% RFC 9204 Appendix A, checked against ls-qpack: with no dynamic table,
%% each entry must come out as an indexed static reference to its index.
static_table(Port) ->
	<<"o", _/binary>> = call(Port, <<"E", 0:32, 0:32>>),
	[begin
		{Name, Value} = mustang_qpack_static:entry(I),
		<<"o", 0:32, BL:32, Block:BL/binary>> = call(Port, [<<"e", 0:64>>, hs([{Name, Value}])]),
		{I, {ok, [{Name, Value}]}} = {I, decode_static(Block)}
	end || I <- lists:seq(0, 98)],
	error = mustang_qpack_static:entry(99),
	ok.

decode_static(<<0, 0, 2#11:2, I0:6, Rest/binary>>) ->
	{ok, I, <<>>} = mustang_qpack_wire:int(I0, 6, Rest),
	{ok, [mustang_qpack_static:entry(I)]};
decode_static(Other) ->
	{not_indexed_static, Other}.

%% The Appendix B bytes decode the same in ls-qpack (a check of the test
%% data, which mustang_qpack_tests uses).
appendix_b(Port) ->
	H = fun(Hex) -> binary:decode_hex(list_to_binary(Hex)) end,
	<<"o">> = call(Port, <<"D", 220:32, 100:32>>),
	{<<>>, [{0, [{<<":path">>, <<"/index.html">>}]}]} =
		decoded(call(Port, [<<"H", 0:64>>, b(H("0000510b2f696e6465782e68746d6c"))])),
	{<<>>, []} = decoded(call(Port, [<<"F">>,
		b(H("3fbd01c00f7777772e6578616d706c652e636f6dc10c2f73616d706c652f70617468"))])),
	{<<16#84>>, [{4, [{<<":authority">>, <<"www.example.com">>}, {<<":path">>, <<"/sample/path">>}]}]} =
		decoded(call(Port, [<<"H", 4:64>>, b(H("03811011"))])),
	ok.

%% Properties.

field() ->
	frequency([
		{6, elements([{<<":status">>, <<"200">>}, {<<":method">>, <<"GET">>},
			{<<"content-type">>, <<"text/html; charset=utf-8">>}, {<<"server">>, <<"mustang">>},
			{<<"x-request-id">>, <<"abc">>}, {<<"x-request-id">>, <<"def">>},
			{<<"cache-control">>, <<"private">>}, {<<"set-cookie">>, <<"a=b">>},
			{<<"user-agent">>, <<"curl/8.0">>}, {<<"x-long">>, binary:copy(<<"L">>, 300)}])},
		{2, {elements([<<"x-a">>, <<"x-b">>, <<"content-length">>, <<"etag">>]), value()}},
		{1, {?LET(N, non_empty(list(range($a, $z))), list_to_binary(N)), value()}}
	]).

value() ->
	oneof([binary(), ?LET(S, list(range(32, 126)), list_to_binary(S)), elements([<<"1">>, <<"2">>])]).

%% Per header list: encoder stream sent before the section or later,
%% acknowledgments sent back now or later, the section decoded or its
%% stream cancelled.
step() ->
	{boolean(), boolean(), frequency([{9, decode}, {1, cancel}])}.

settings() ->
	{elements([0, 64, 220, 1024, 4096]), elements([0, 1, 2, 16])}.

%% Header lists are not empty here: ls-qpack's decoder refuses an empty
%% field section (its encoder makes one, 0x0000; HTTP/3 never sends one:
%% a response has :status).
prop_encoder(Port) ->
	?FORALL({{Cap, Blocked}, Huffman}, {settings(), boolean()},
		?FORALL(Lists, non_empty(list(non_empty(list(field())))),
			?FORALL(Steps, vector(length(Lists), step()),
				encoder_run(Port, Cap, Blocked, Huffman, Lists, Steps)))).

encoder_run(Port, Cap, Blocked, Huffman, Lists, Steps) ->
	<<"o">> = call(Port, <<"D", Cap:32, Blocked:32>>),
	{Set, E0} = ?Q:encoder_settings(#{qpack_max_table_capacity => Cap, qpack_blocked_streams => Blocked},
		?Q:init_encoder(#{huffman => Huffman})),
	S0 = #{port => Port, e => E0, enc => [Set], acks => [], expected => #{}, got => #{}, errors => []},
	S = lists:foldl(fun({{Fields, {SendEnc, SendAcks, Fate}}, N}, Acc0) ->
		StreamID = 4 * N,
		{Block, Ins, E} = ?Q:encode_field_section(StreamID, Fields, maps:get(e, Acc0)),
		Acc1 = Acc0#{e := E, enc := [Ins | maps:get(enc, Acc0)]},
		Acc2 = case SendEnc of true -> enc_to_ls(Acc1); false -> Acc1 end,
		Acc3 = case Fate of
			decode ->
				ls_section(StreamID, Block, Acc2#{expected := (maps:get(expected, Acc2))#{StreamID => Fields}});
			cancel ->
				<<"o", CL:32, Control:CL/binary>> = call(Port, <<"C", StreamID:64>>),
				Acc2#{acks := [Control | maps:get(acks, Acc2)]}
		end,
		case SendAcks of true -> acks_to_ours(Acc3); false -> Acc3 end
	end, S0, lists:zip(lists:zip(Lists, Steps), lists:seq(0, length(Lists) - 1))),
	#{expected := Expected, got := Got, errors := Errors} = acks_to_ours(enc_to_ls(S)),
	?WHENFAIL(io:format("cap ~p blocked ~p~nerrors ~p~nexpected ~p~ngot ~p~n",
			[Cap, Blocked, Errors, Expected, Got]),
		Errors =:= [] andalso Expected =:= Got).

enc_to_ls(S = #{port := Port, enc := Enc}) ->
	case decoded(call(Port, [<<"F">>, b(lists:reverse(Enc))])) of
		{error, _} = Error -> S#{enc := [], errors := [Error | maps:get(errors, S)]};
		{Control, Streams} -> got(Streams, S#{enc := [], acks := [Control | maps:get(acks, S)]})
	end.

ls_section(StreamID, Block, S = #{port := Port}) ->
	case decoded(call(Port, [<<"H", StreamID:64>>, b(Block)])) of
		blocked -> S;
		{error, _} = Error -> S#{errors := [Error | maps:get(errors, S)]};
		{Control, Streams} -> got(Streams, S#{acks := [Control | maps:get(acks, S)]})
	end.

got(Streams, S = #{got := Got}) ->
	S#{got := maps:merge(Got, maps:from_list(Streams))}.

acks_to_ours(S = #{acks := Acks, e := E0}) ->
	case ?Q:encoder_feed(iolist_to_binary(lists:reverse(Acks)), E0) of
		{ok, E} -> S#{acks := [], e := E};
		Error -> S#{acks := [], errors := [Error | maps:get(errors, S)]}
	end.

prop_decoder(Port) ->
	?FORALL({Cap, Blocked}, settings(),
		?FORALL(Lists, non_empty(list(list(field()))),
			?FORALL(Steps, vector(length(Lists), step()),
				decoder_run(Port, Cap, Blocked, Lists, Steps)))).

decoder_run(Port, Cap, Blocked, Lists, Steps) ->
	<<"o", SL:32, Set:SL/binary>> = call(Port, <<"E", Cap:32, Blocked:32>>),
	D0 = ?Q:init_decoder(#{max_table_capacity => Cap, blocked_streams => Blocked}),
	S0 = #{port => Port, d => D0, enc => [Set], acks => [], expected => #{}, got => #{}, errors => []},
	S = lists:foldl(fun({{Fields, {SendEnc, SendAcks, Fate}}, N}, Acc0) ->
		StreamID = 4 * N,
		<<"o", EL:32, Ins:EL/binary, BL:32, Block:BL/binary>> =
			call(Port, [<<"e", StreamID:64>>, hs(Fields)]),
		Acc1 = Acc0#{enc := [Ins | maps:get(enc, Acc0)]},
		Acc2 = case SendEnc of true -> enc_to_ours(Acc1); false -> Acc1 end,
		Acc3 = case Fate of
			decode ->
				our_section(StreamID, Block, Acc2#{expected := (maps:get(expected, Acc2))#{StreamID => Fields}});
			cancel ->
				{Bytes, D} = ?Q:cancel_stream(StreamID, maps:get(d, Acc2)),
				Acc2#{d := D, acks := [Bytes | maps:get(acks, Acc2)]}
		end,
		case SendAcks of true -> acks_to_ls(Acc3); false -> Acc3 end
	end, S0, lists:zip(lists:zip(Lists, Steps), lists:seq(0, length(Lists) - 1))),
	#{expected := Expected, got := Got, errors := Errors, d := DEnd} = acks_to_ls(enc_to_ours(S)),
	?WHENFAIL(io:format("cap ~p blocked ~p~nerrors ~p~nexpected ~p~ngot ~p~n",
			[Cap, Blocked, Errors, Expected, Got]),
		Errors =:= [] andalso Expected =:= Got andalso ?Q:blocked_streams(DEnd) =:= 0).

enc_to_ours(S = #{d := D0, enc := Enc}) ->
	case ?Q:decoder_feed(iolist_to_binary(lists:reverse(Enc)), D0) of
		{ok, Unblocked, Acks, D1} ->
			{Inc, D2} = ?Q:decoder_increment(D1),
			Got = lists:foldl(fun({StreamID, {ok, F}}, A) -> A#{StreamID => F} end,
				maps:get(got, S), Unblocked),
			S#{d := D2, enc := [], got := Got, acks := [Inc, Acks | maps:get(acks, S)]};
		Error ->
			S#{enc := [], errors := [Error | maps:get(errors, S)]}
	end.

our_section(StreamID, Block, S = #{d := D0}) ->
	case ?Q:decode_field_section(StreamID, Block, D0) of
		{ok, Fields, Ack, D} -> S#{d := D, acks := [Ack | maps:get(acks, S)],
			got := (maps:get(got, S))#{StreamID => Fields}};
		{blocked, D} -> S#{d := D};
		Error -> S#{errors := [Error | maps:get(errors, S)]}
	end.

acks_to_ls(S = #{port := Port, acks := Acks}) ->
	case call(Port, [<<"d">>, b(lists:reverse(Acks))]) of
		<<"o">> -> S#{acks := []};
		Error -> S#{acks := [], errors := [Error | maps:get(errors, S)]}
	end.
