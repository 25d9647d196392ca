%% Tests for mustang_proxy_header (HAProxy's proxy-protocol.txt). Headers are
%% written out byte by byte here (and built by HAProxy itself in
%% proxy_header_SUITE), not only by header/1, so that a bug shared by the
%% builder and the parser cannot cancel itself out.
-module(mustang_proxy_header_tests).

-include_lib("proper/include/proper.hrl").
-include_lib("eunit/include/eunit.hrl").

-define(SIG, "\r\n\r\n\0\r\nQUIT\n").

parse(Bin) -> mustang_proxy_header:parse(Bin).

v2(VerCmd, FamProto, Block) ->
	<<?SIG, VerCmd, FamProto, (byte_size(Block)):16, Block/binary>>.

addr4() -> <<192, 0, 2, 1, 198, 51, 100, 7, 56324:16, 443:16>>.

is_proxy_error({error, {proxy_error, 400, Reason}}) -> is_atom(Reason);
is_proxy_error(_) -> false.

%% Version 1 (2.1).

v1_test_() ->
	[
		?_assertEqual({ok, #{version => 1, command => proxy, transport_family => ipv4,
			transport_protocol => stream, src_address => {192, 0, 2, 1}, src_port => 56324,
			dest_address => {198, 51, 100, 7}, dest_port => 443}, <<"GET / HTTP/1.1\r\n">>},
			parse(<<"PROXY TCP4 192.0.2.1 198.51.100.7 56324 443\r\nGET / HTTP/1.1\r\n">>)),
		?_assertEqual({ok, #{version => 1, command => proxy, transport_family => ipv6,
			transport_protocol => stream, src_address => {16#2001, 16#db8, 0, 0, 0, 0, 0, 1},
			src_port => 0, dest_address => {0, 0, 0, 0, 0, 0, 0, 1}, dest_port => 65535}, <<>>},
			parse(<<"PROXY TCP6 2001:db8::1 ::1 0 65535\r\n">>)),
		?_assertEqual({ok, #{version => 1, command => proxy, transport_family => undefined,
			transport_protocol => undefined}, <<"x">>},
			parse(<<"PROXY UNKNOWN\r\nx">>)),
		%% Anything after UNKNOWN is ignored.
		?_assertMatch({ok, #{transport_family := undefined}, <<>>},
			parse(<<"PROXY UNKNOWN ffff::1 ffff::2 1 2\r\n">>)),
		%% 107 bytes at most, CRLF included: at and just past the limit.
		?_assertMatch({ok, #{transport_family := undefined}, <<>>},
			parse(<<"PROXY UNKNOWN ", (binary:copy(<<"a">>, 91))/binary, "\r\n">>)),
		?_assert(is_proxy_error(parse(<<"PROXY UNKNOWN ", (binary:copy(<<"a">>, 92))/binary, "\r\n">>))),
		?_assertEqual(107, byte_size(<<"PROXY UNKNOWN ", (binary:copy(<<"a">>, 91))/binary, "\r\n">>)),
		%% The longest real line (TCP6, full addresses, 5-digit ports) fits.
		?_assertMatch({ok, #{transport_family := ipv6}, <<>>},
			parse(<<"PROXY TCP6 ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff "
				"ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff 65535 65535\r\n">>))
	].

v1_error_test_() ->
	[?_assert(is_proxy_error(parse(Bin))) || Bin <- [
		<<"PROXY TCP4 192.0.2.1 198.51.100.7 56324 65536\r\n">>,
		<<"PROXY TCP4 192.0.2.1 198.51.100.7 056324 443\r\n">>,
		<<"PROXY TCP4 192.0.2.1 198.51.100.7 -1 443\r\n">>,
		<<"PROXY TCP4 192.0.2.1 198.51.100.7 1a 443\r\n">>,
		<<"PROXY TCP4 192.0.2.1 198.51.100.7 56324\r\n">>,
		<<"PROXY TCP4 192.0.2.1 198.51.100.7 56324 443 1\r\n">>,
		<<"PROXY TCP4 192.0.2.1  198.51.100.7 56324 443\r\n">>,
		<<"PROXY TCP4 192.0.2 198.51.100.7 56324 443\r\n">>,
		<<"PROXY TCP4 ::1 198.51.100.7 56324 443\r\n">>,
		<<"PROXY TCP6 192.0.2.1 ::1 56324 443\r\n">>,
		<<"PROXY TCP5 192.0.2.1 198.51.100.7 56324 443\r\n">>,
		<<"PROXY UNKNOWNX\r\n">>,
		<<"PROXY tcp4 192.0.2.1 198.51.100.7 56324 443\r\n">>,
		<<"PROXY  TCP4 192.0.2.1 198.51.100.7 56324 443\r\n">>,
		<<"PROXY TCP4 192.0.2.1 198.51.100.7 56324 443\n">>,
		<<"PROXY\r\n">>,
		<<"proxy TCP4 192.0.2.1 198.51.100.7 56324 443\r\n">>,
		%% A client that speaks straight away (no proxy in front).
		<<"GET / HTTP/1.1\r\nhost: a\r\n\r\n">>,
		<<22, 3, 1, 0, 200>>,
		<<"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n">>
	]].

%% Every strict prefix of a valid header is more; the signature check is
%% done on the first byte that differs.
prefix_test_() ->
	Headers = [<<"PROXY TCP4 192.0.2.1 198.51.100.7 56324 443\r\n">>,
		v2(16#21, 16#11, addr4()), v2(16#20, 16#00, <<>>)],
	[?_assertEqual(more, parse(binary:part(H, 0, N))) || H <- Headers, N <- lists:seq(0, byte_size(H) - 1)]
	++ [?_assert(is_proxy_error(parse(<<"PROXX">>))), ?_assert(is_proxy_error(parse(<<"\r\n\r\n\0\r\nQUIT!">>)))].

%% Version 2 (2.2).

v2_test_() ->
	[
		?_assertEqual({ok, #{version => 2, command => proxy, transport_family => ipv4,
			transport_protocol => stream, src_address => {192, 0, 2, 1}, src_port => 56324,
			dest_address => {198, 51, 100, 7}, dest_port => 443}, <<"rest">>},
			parse(<<(v2(16#21, 16#11, addr4()))/binary, "rest">>)),
		?_assertMatch({ok, #{transport_protocol := dgram, src_address := {192, 0, 2, 1}}, <<>>},
			parse(v2(16#21, 16#12, addr4()))),
		?_assertEqual({ok, #{version => 2, command => proxy, transport_family => ipv6,
			transport_protocol => stream, src_address => {16#2001, 16#db8, 0, 0, 0, 0, 0, 1},
			src_port => 1, dest_address => {0, 0, 0, 0, 0, 0, 0, 1}, dest_port => 2}, <<>>},
			parse(v2(16#21, 16#21, <<16#2001:16, 16#db8:16, 0:80, 1:16, 0:120, 1:8, 1:16, 2:16>>))),
		?_assertEqual({ok, #{version => 2, command => proxy, transport_family => unix,
			transport_protocol => stream, src_address => <<"/run/client.sock">>,
			dest_address => <<"/run/haproxy.sock">>}, <<>>},
			parse(v2(16#21, 16#31, <<"/run/client.sock", 0:(92 * 8), "/run/haproxy.sock", 0:(91 * 8)>>))),
		%% AF_UNSPEC: no addresses (2.2).
		?_assertEqual({ok, #{version => 2, command => proxy, transport_family => undefined,
			transport_protocol => undefined}, <<>>}, parse(v2(16#21, 16#00, <<>>))),
		%% LOCAL: the address block is skipped, whatever it holds (2.2).
		?_assertEqual({ok, #{version => 2, command => local}, <<"GET">>},
			parse(<<(v2(16#20, 16#11, addr4()))/binary, "GET">>)),
		?_assertEqual({ok, #{version => 2, command => local}, <<>>}, parse(v2(16#20, 16#00, <<>>))),
		%% The address block may be followed by bytes that are not TLVs only
		%% as TLVs: a length longer than the block holds TLVs.
		?_assertMatch({ok, #{src_port := 56324}, <<>>}, parse(v2(16#21, 16#11, <<(addr4())/binary>>)))
	].

v2_error_test_() ->
	[?_assert(is_proxy_error(parse(Bin))) || Bin <- [
		v2(16#11, 16#11, addr4()),
		v2(16#31, 16#11, addr4()),
		v2(16#22, 16#11, addr4()),
		v2(16#2F, 16#11, addr4()),
		v2(16#21, 16#11, binary:part(addr4(), 0, 11)),
		v2(16#21, 16#21, addr4()),
		v2(16#21, 16#31, addr4()),
		v2(16#21, 16#41, addr4()),
		v2(16#21, 16#13, addr4()),
		v2(16#21, 16#10, addr4()),
		v2(16#21, 16#01, addr4()),
		v2(16#21, 16#11, <<(addr4())/binary, 1>>),
		v2(16#21, 16#11, <<(addr4())/binary, 1, 0>>),
		v2(16#21, 16#11, <<(addr4())/binary, 1, 3:16, "h2">>)
	]].

%% 4096 bytes in all at most: at and just past the limit; the limit is
%% checked on the fixed 16 bytes, before the rest is read.
v2_length_limit_test_() ->
	Pad = fun(N) -> <<16#04, (N - 3):16, 0:((N - 3) * 8)>> end,
	AtLimit = v2(16#21, 16#11, <<(addr4())/binary, (Pad(4096 - 16 - 12))/binary>>),
	Past = v2(16#21, 16#11, <<(addr4())/binary, (Pad(4097 - 16 - 12))/binary>>),
	[
		?_assertEqual(4096, byte_size(AtLimit)),
		?_assertMatch({ok, #{src_port := 56324}, <<>>}, parse(AtLimit)),
		?_assertEqual(4097, byte_size(Past)),
		?_assert(is_proxy_error(parse(Past))),
		?_assert(is_proxy_error(parse(binary:part(Past, 0, 16)))),
		?_assertEqual(more, parse(binary:part(AtLimit, 0, 16))),
		?_assertEqual(107, mustang_proxy_header:max_length(1)),
		?_assertEqual(4096, mustang_proxy_header:max_length(2))
	].

%% TLVs (2.2.1 to 2.2.7).

tlv(Type, Value) -> <<Type, (byte_size(Value)):16, Value/binary>>.

v2_tlv_test_() ->
	SSL = <<16#07, 0:32, (tlv(16#21, <<"TLSv1.3">>))/binary, (tlv(16#22, <<"client.example">>))/binary,
		(tlv(16#23, <<"TLS_AES_128_GCM_SHA256">>))/binary, (tlv(16#24, <<"RSA-SHA256">>))/binary,
		(tlv(16#25, <<"RSA2048">>))/binary, (tlv(16#2F, <<"unknown sub">>))/binary>>,
	TLVs = <<(tlv(16#01, <<"h2">>))/binary, (tlv(16#02, <<"example.com">>))/binary,
		(tlv(16#04, <<0, 0, 0>>))/binary, (tlv(16#05, <<"id-1">>))/binary, (tlv(16#20, SSL))/binary,
		(tlv(16#30, <<"blue">>))/binary, (tlv(16#E0, <<"custom">>))/binary, (tlv(16#E1, <<>>))/binary>>,
	{ok, Info, <<>>} = parse(v2(16#21, 16#11, <<(addr4())/binary, TLVs/binary>>)),
	[
		?_assertEqual(<<"h2">>, maps:get(alpn, Info)),
		?_assertEqual(<<"example.com">>, maps:get(authority, Info)),
		?_assertEqual(<<"id-1">>, maps:get(unique_id, Info)),
		?_assertEqual(<<"blue">>, maps:get(netns, Info)),
		?_assertEqual(#{client => [ssl, cert_conn, cert_sess], verified => true,
			version => <<"TLSv1.3">>, cn => <<"client.example">>,
			cipher => <<"TLS_AES_128_GCM_SHA256">>, sig_alg => <<"RSA-SHA256">>,
			key_alg => <<"RSA2048">>}, maps:get(ssl, Info)),
		?_assertEqual([{16#E0, <<"custom">>}, {16#E1, <<>>}], maps:get(raw_tlvs, Info)),
		?_assertEqual({ok, #{version => 2, command => proxy, transport_family => ipv4,
			transport_protocol => stream, src_address => {192, 0, 2, 1}, src_port => 56324,
			dest_address => {198, 51, 100, 7}, dest_port => 443,
			ssl => #{client => [ssl], verified => false}}, <<>>},
			parse(v2(16#21, 16#11, <<(addr4())/binary, (tlv(16#20, <<1, 1:32>>))/binary>>))),
		%% Unique ID: 128 bytes at most (2.2.5).
		?_assertMatch({ok, #{unique_id := <<_:128/binary>>}, <<>>},
			parse(v2(16#21, 16#11, <<(addr4())/binary, (tlv(16#05, binary:copy(<<"u">>, 128)))/binary>>))),
		?_assert(is_proxy_error(parse(v2(16#21, 16#11,
			<<(addr4())/binary, (tlv(16#05, binary:copy(<<"u">>, 129)))/binary>>))))
	].

%% CRC32C (2.2.3): the checksum of the header with the field zeroed,
%% computed here by the test's own code, checked against the reference
%% values of RFC 3720 B.4 (32 zero bytes) and the usual check value.
crc32c_test_() ->
	Header = fun(CRC) -> v2(16#21, 16#11, <<(addr4())/binary, (tlv(16#E0, <<"x">>))/binary,
		16#03, 4:16, CRC:32>>) end,
	CRC = crc32c(Header(0)),
	Built = mustang_proxy_header:header(#{version => 2, command => proxy,
		transport_family => ipv4, src_address => {192, 0, 2, 1}, dest_address => {198, 51, 100, 7},
		src_port => 1, dest_port => 2, crc32c => true}),
	BuiltSize = byte_size(Built) - 4,
	<<BuiltHead:BuiltSize/binary, BuiltCRC:32>> = Built,
	[
		?_assertEqual(16#8A9136AA, crc32c(<<0:256>>)),
		?_assertEqual(16#E3069283, crc32c(<<"123456789">>)),
		?_assertMatch({ok, #{src_port := 56324, raw_tlvs := [{16#E0, <<"x">>}]}, <<>>}, parse(Header(CRC))),
		?_assert(is_proxy_error(parse(Header(CRC bxor 1)))),
		?_assert(is_proxy_error(parse(Header(0)))),
		?_assertEqual(crc32c(<<BuiltHead/binary, 0:32>>), BuiltCRC)
	].

crc32c(Bin) ->
	crc32c(Bin, 16#FFFFFFFF) bxor 16#FFFFFFFF.
crc32c(<<>>, C) -> C;
crc32c(<<B, R/binary>>, C) -> crc32c(R, lists:foldl(fun(_, X) ->
	case X band 1 of 1 -> (X bsr 1) bxor 16#82F63B78; 0 -> X bsr 1 end end, C bxor B, lists:seq(1, 8))).

%% Properties: what header/1 builds parses back to the same map, whole or
%% split anywhere (the reader feeds what it has so far), followed by any
%% bytes.

ipv4() -> {byte(), byte(), byte(), byte()}.
ipv6() -> {word(), word(), word(), word(), word(), word(), word(), word()}.
word() -> integer(0, 65535).
port() -> integer(0, 65535).
text() -> ?LET(L, list(integer($!, $~)), list_to_binary(L)).
unix_path() -> ?LET(L, list(integer(1, 255)), list_to_binary(lists:sublist(L, 108))).

v1_info() ->
	oneof([
		?LET({Family, {Src, Dest}, SP, DP}, oneof([{ipv4, {ipv4(), ipv4()}, port(), port()},
				{ipv6, {ipv6(), ipv6()}, port(), port()}]),
			#{version => 1, command => proxy, transport_family => Family,
				transport_protocol => stream, src_address => Src, dest_address => Dest,
				src_port => SP, dest_port => DP}),
		#{version => 1, command => proxy, transport_family => undefined,
			transport_protocol => undefined}
	]).

v2_info() ->
	oneof([
		#{version => 2, command => local},
		?LET({Base, TLVs}, {v2_base(), v2_tlvs()}, maps:merge(Base, TLVs))
	]).

v2_base() ->
	?LET(Proto, oneof([stream, dgram]), oneof([
		?LET({S, D, SP, DP}, {ipv4(), ipv4(), port(), port()}, #{version => 2, command => proxy,
			transport_family => ipv4, transport_protocol => Proto, src_address => S,
			dest_address => D, src_port => SP, dest_port => DP}),
		?LET({S, D, SP, DP}, {ipv6(), ipv6(), port(), port()}, #{version => 2, command => proxy,
			transport_family => ipv6, transport_protocol => Proto, src_address => S,
			dest_address => D, src_port => SP, dest_port => DP}),
		?LET({S, D}, {unix_path(), unix_path()}, #{version => 2, command => proxy,
			transport_family => unix, transport_protocol => Proto, src_address => S,
			dest_address => D}),
		#{version => 2, command => proxy, transport_family => undefined,
			transport_protocol => undefined}
	])).

v2_tlvs() ->
	?LET(Pairs, list(oneof([
		{alpn, text()}, {authority, text()}, {netns, text()},
		{unique_id, ?LET(T, text(), binary:part(T, 0, min(128, byte_size(T))))},
		{ssl, ?LET({Client, Verified, Sub}, {list(oneof([ssl, cert_conn, cert_sess])), boolean(),
			list({oneof([version, cn, cipher, sig_alg, key_alg]), text()})},
			maps:merge(maps:from_list(Sub), #{client => [C || C <- [ssl, cert_conn, cert_sess],
				lists:member(C, Client)], verified => Verified}))},
		{raw_tlvs, non_empty(list({oneof([16#06, 16#10, 16#31, 16#E0, 16#FF]), text()}))},
		{crc32c, boolean()}
	])), maps:from_list(Pairs)).

prop_roundtrip() ->
	?FORALL({Info, Tail, Cuts}, {oneof([v1_info(), v2_info()]), binary(), list(non_neg_integer())},
		begin
			Bin = mustang_proxy_header:header(Info),
			Expected = maps:remove(crc32c, Info),
			Whole = parse(<<Bin/binary, Tail/binary>>),
			%% Each prefix the reader may hold: more until the header is whole.
			Prefixes = [parse(binary:part(Bin, 0, C rem byte_size(Bin))) || C <- Cuts],
			Whole =:= {ok, Expected, Tail} andalso lists:all(fun(R) -> R =:= more end, Prefixes)
		end).

%% Whatever the bytes, parse/1 returns one of its three shapes and never
%% raises.
prop_any_bytes() ->
	?FORALL(Bin, oneof([binary(), ?LET(B, binary(), <<"PROXY ", B/binary>>),
			?LET(B, binary(), <<?SIG, B/binary>>), ?LET(B, binary(), <<?SIG, 16#21, B/binary>>)]),
		case parse(Bin) of
			{ok, #{version := _, command := _}, Rest} -> is_binary(Rest);
			more -> true;
			Error -> is_proxy_error(Error)
		end).

proper_test_() ->
	{timeout, 300, [
		?_assert(proper:quickcheck(P, [{numtests, 1000}, {to_file, user}]))
		|| P <- [prop_roundtrip(), prop_any_bytes()]]}.
