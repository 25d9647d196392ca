%% PROXY protocol codec (HAProxy's proxy-protocol.txt, versions 1 and 2):
%% parse/1 reads the header a proxy (HAProxy send-proxy, send-proxy-v2; AWS
%% NLB; ...) sends before anything else on a connection; header/1 builds one
%% (tests, and clients of a Mustang server behind nothing). Pure functions on
%% binaries: no sockets, no processes. mustang_conn reads the header from
%% the socket when the protocol option proxy_header is true, before the TLS
%% handshake on a TLS listener.
%%
%% Contract: strict when parsing, lax when building.
%% - parse/1 refuses everything the specification does not allow: a first
%%   line that is not "PROXY " plus TCP4, TCP6 or UNKNOWN, addresses that are
%%   not strict dotted quads or IPv6 addresses of the announced family, ports
%%   outside 0..65535 or with leading zeros, a version 1 line longer than 107
%%   bytes (2.1); a version 2 header with another version or command, an
%%   unknown address family or protocol, an address block longer than the
%%   header, TLVs that overrun it, a CRC32C TLV that does not match (2.2).
%%   It also refuses version 2 headers longer than 4096 bytes (16 bytes plus
%%   address and TLVs), a limit of Mustang's own: HAProxy sends a few dozen.
%% - header/1 trusts its input (addresses of the family given, UNIX paths of
%%   at most 108 bytes).
%%
%% parse(Bin) returns one of:
%%   {ok, Info, Rest}   Rest: the bytes after the header (the client's first
%%                      bytes, a TLS ClientHello or an HTTP request);
%%   more               Bin is a strict prefix of a header that may still be
%%                      valid: read more and call parse/1 on everything;
%%   {error, {proxy_error, 400, Reason}}
%%                      the one error shape (mustang_error); the connection
%%                      is closed, nothing is answered.
%%
%% Info is the map Ranch's ranch_proxy_header documents, so that code
%% written for Cowboy's cowboy_req:proxy_header/1 reads it unchanged:
%%   version (1 | 2) and command (proxy | local), always;
%%   transport_family (ipv4 | ipv6 | unix | undefined) and transport_protocol
%%   (stream | dgram | undefined), for the proxy command; undefined for a
%%   version 1 UNKNOWN line or a version 2 AF_UNSPEC header;
%%   src_address, src_port, dest_address, dest_port when the family is known:
%%   the client's address as the proxy saw it (src) and the address it
%%   connected to (dest); an inet:ip_address() for ipv4 and ipv6, the path
%%   (binary, up to its first NUL byte) for unix, no ports for unix;
%%   and from the version 2 TLVs (2.2.x): alpn, authority (the TLS SNI),
%%   unique_id, netns (binaries), ssl (a map: client, a list of ssl,
%%   cert_conn and cert_sess; verified, a boolean; and version, cn, cipher,
%%   sig_alg, key_alg when sent), raw_tlvs ([{Type, Value}] for the types
%%   not listed here, in the order received). CRC32C and NOOP TLVs are
%%   checked or skipped, not returned. A local command carries only version
%%   and command: its addresses are to be ignored (2.2).
-module(mustang_proxy_header).

-export([parse/1]).
-export([header/1]).
-export([max_length/1]).

-type ssl_info() :: #{
	client := [ssl | cert_conn | cert_sess],
	verified := boolean(),
	version => binary(),
	cn => binary(),
	cipher => binary(),
	sig_alg => binary(),
	key_alg => binary()
}.
-type info() :: #{
	version := 1 | 2,
	command := proxy | local,
	transport_family => ipv4 | ipv6 | unix | undefined,
	transport_protocol => stream | dgram | undefined,
	src_address => inet:ip_address() | binary(),
	src_port => inet:port_number(),
	dest_address => inet:ip_address() | binary(),
	dest_port => inet:port_number(),
	alpn => binary(),
	authority => binary(),
	unique_id => binary(),
	netns => binary(),
	ssl => ssl_info(),
	raw_tlvs => [{0..255, binary()}]
}.
-type error() :: {proxy_error, 400, atom()}.
-export_type([info/0, ssl_info/0, error/0]).

-define(V2_SIG, "\r\n\r\n\0\r\nQUIT\n").
-define(V1_MAX, 107).
%% A macro, so that the error literals show in the abstract code
%% (test/mustang_error_tests.erl walks them).
-define(ERR(Reason), {error, {proxy_error, 400, Reason}}).
-define(V2_MAX, 4096).

%% TLV types (2.2.1 to 2.2.7) that have no table below.
-define(PP2_TYPE_CRC32C, 16#03).
-define(PP2_TYPE_NOOP, 16#04).
-define(PP2_TYPE_UNIQUE_ID, 16#05).
-define(PP2_TYPE_SSL, 16#20).

%% Parsing.

%% Parses a PROXY protocol header (version 1 or 2) at the start of Data:
%% `{ok, Info, Rest}` with the map described in the module's head comment and
%% the bytes after the header, `more` when Data is a prefix of a header (read
%% more, up to `max_length/1`), or `{error, {proxy_error, 400, Reason}}`.
%% Never raises on a binary. Connections call it with `proxy_header => true`;
%% `mustang_req:proxy_header/1` gives handlers the result.
-spec parse(binary()) -> {ok, info(), binary()} | more | {error, error()}.
parse(<<?V2_SIG, Rest/bits>>) ->
	parse_v2(Rest);
parse(<<"PROXY ", Rest/bits>>) ->
	parse_v1(Rest);
parse(Bin) ->
	case is_prefix(Bin, <<?V2_SIG>>) orelse is_prefix(Bin, <<"PROXY ">>) of
		true -> more;
		false -> ?ERR('The connection does not start with a PROXY protocol signature. (PROXY protocol 2)')
	end.

is_prefix(Bin, Sig) ->
	byte_size(Bin) < byte_size(Sig) andalso binary:longest_common_prefix([Bin, Sig]) =:= byte_size(Bin).

%% The largest number of bytes a header can have: 107 for version 1, 4096
%% for version 2 (a reader needs no more before parse/1 decides).
-spec max_length(1 | 2) -> pos_integer().
max_length(1) -> ?V1_MAX;
max_length(2) -> ?V2_MAX.

%% Version 1 (2.1): "PROXY " then the rest of one line ending with CRLF, 107
%% bytes at most in all (so 101 after "PROXY ").
parse_v1(Bin) ->
	case binary:match(Bin, <<"\r\n">>, [{scope, {0, min(byte_size(Bin), ?V1_MAX - 6)}}]) of
		{Pos, 2} ->
			<<Line:Pos/binary, "\r\n", Rest/bits>> = Bin,
			case v1_line(Line) of
				{ok, Info} -> {ok, Info, Rest};
				Error -> Error
			end;
		nomatch when byte_size(Bin) >= ?V1_MAX - 6 ->
			?ERR('The PROXY protocol version 1 line is longer than 107 bytes. (PROXY protocol 2.1)');
		nomatch ->
			%% No CRLF yet: an LF is a bare one, and the line cannot end well.
			case binary:match(Bin, <<"\n">>) of
				nomatch -> more;
				_ -> ?ERR('The PROXY protocol version 1 line has an LF that is not after a CR. (PROXY protocol 2.1)')
			end
	end.

v1_line(Line) when Line =:= <<"UNKNOWN">>; binary_part(Line, 0, 8) =:= <<"UNKNOWN ">> ->
	%% The receiver must ignore anything after UNKNOWN (2.1).
	{ok, #{version => 1, command => proxy, transport_family => undefined,
		transport_protocol => undefined}};
v1_line(<<"TCP4 ", Addresses/bits>>) ->
	v1_addresses(ipv4, Addresses);
v1_line(<<"TCP6 ", Addresses/bits>>) ->
	v1_addresses(ipv6, Addresses);
v1_line(_) ->
	?ERR('The PROXY protocol version 1 protocol is not TCP4, TCP6 or UNKNOWN. (PROXY protocol 2.1)').

v1_addresses(Family, Addresses) ->
	case binary:split(Addresses, <<" ">>, [global]) of
		[Src, Dest, SrcPort, DestPort] ->
			case {v1_address(Family, Src), v1_address(Family, Dest), v1_port(SrcPort),
					v1_port(DestPort)} of
				{{ok, SrcIP}, {ok, DestIP}, {ok, SP}, {ok, DP}} ->
					{ok, #{version => 1, command => proxy, transport_family => Family,
						transport_protocol => stream, src_address => SrcIP, src_port => SP,
						dest_address => DestIP, dest_port => DP}};
				{{ok, _}, {ok, _}, _, _} ->
					?ERR('A PROXY protocol version 1 port is not a number from 0 to 65535. (PROXY protocol 2.1)');
				_ ->
					?ERR('A PROXY protocol version 1 address is not an address of the announced family. (PROXY protocol 2.1)')
			end;
		_ ->
			?ERR('The PROXY protocol version 1 line does not have four fields after the protocol, separated by single spaces. (PROXY protocol 2.1)')
	end.

v1_address(ipv4, Bin) -> inet:parse_ipv4strict_address(binary_to_list(Bin));
v1_address(ipv6, Bin) -> inet:parse_ipv6strict_address(binary_to_list(Bin)).

v1_port(<<"0">>) ->
	{ok, 0};
v1_port(Bin = <<First, _/bits>>) when byte_size(Bin) =< 5, First >= $1, First =< $9 ->
	case lists:all(fun(C) -> C >= $0 andalso C =< $9 end, binary_to_list(Bin)) of
		true ->
			case binary_to_integer(Bin) of
				Port when Port =< 65535 -> {ok, Port};
				_ -> error
			end;
		false ->
			error
	end;
v1_port(_) ->
	error.

%% Version 2 (2.2): after the signature, version and command (1 byte),
%% family and protocol (1 byte), the length of the rest (2 bytes).
parse_v2(<<VerCmd, FamProto, Len:16, Rest/bits>>) ->
	if
		16 + Len > ?V2_MAX ->
			?ERR('The PROXY protocol version 2 header is longer than 4096 bytes. (Mustang proxy_header)');
		VerCmd bsr 4 =/= 2 ->
			?ERR('The PROXY protocol version 2 header has a version other than 2. (PROXY protocol 2.2)');
		VerCmd band 15 > 1 ->
			?ERR('The PROXY protocol version 2 command is neither LOCAL nor PROXY. (PROXY protocol 2.2)');
		byte_size(Rest) < Len ->
			more;
		true ->
			<<Block:Len/binary, Rest2/bits>> = Rest,
			Header = <<?V2_SIG, VerCmd, FamProto, Len:16, Block/binary>>,
			case v2_command(VerCmd band 15, FamProto, Block, Header) of
				{ok, Info} -> {ok, Info, Rest2};
				Error -> Error
			end
	end;
parse_v2(_) ->
	more.

v2_command(0, _, _, _) ->
	%% LOCAL: the proxy's own connection (a health check); the address
	%% block, whatever it holds, is skipped (2.2).
	{ok, #{version => 2, command => local}};
v2_command(1, FamProto, Block, Header) ->
	case v2_family(FamProto bsr 4, FamProto band 15) of
		{ok, Family, Protocol, AddrLen} when byte_size(Block) >= AddrLen ->
			<<Addresses:AddrLen/binary, TLVs/binary>> = Block,
			Info = v2_addresses(Family, Addresses, #{version => 2, command => proxy,
				transport_family => Family, transport_protocol => Protocol}),
			v2_tlvs(TLVs, Header, Info, []);
		{ok, _, _, _} ->
			?ERR('The PROXY protocol version 2 length is shorter than the address block of its family. (PROXY protocol 2.2)');
		error ->
			?ERR('The PROXY protocol version 2 address family or transport protocol is unknown. (PROXY protocol 2.2)')
	end.

%% The family (high nibble) and protocol (low nibble), and the length of
%% their address block.
v2_family(0, 0) -> {ok, undefined, undefined, 0};
v2_family(Family, Protocol) when Family >= 1, Family =< 3, Protocol >= 1, Protocol =< 2 ->
	{ok, element(Family, {ipv4, ipv6, unix}), element(Protocol, {stream, dgram}),
		element(Family, {12, 36, 216})};
v2_family(_, _) -> error.

v2_addresses(undefined, _, Info) ->
	Info;
v2_addresses(ipv4, <<S1, S2, S3, S4, D1, D2, D3, D4, SP:16, DP:16>>, Info) ->
	Info#{src_address => {S1, S2, S3, S4}, dest_address => {D1, D2, D3, D4},
		src_port => SP, dest_port => DP};
v2_addresses(ipv6, <<S:16/binary, D:16/binary, SP:16, DP:16>>, Info) ->
	Info#{src_address => ipv6(S), dest_address => ipv6(D), src_port => SP, dest_port => DP};
v2_addresses(unix, <<S:108/binary, D:108/binary>>, Info) ->
	Info#{src_address => unix_path(S), dest_address => unix_path(D)}.

ipv6(<<A:16, B:16, C:16, D:16, E:16, F:16, G:16, H:16>>) -> {A, B, C, D, E, F, G, H}.

unix_path(Bin) ->
	case binary:match(Bin, <<0>>) of
		{Pos, 1} -> binary:part(Bin, 0, Pos);
		nomatch -> Bin
	end.

%% TLVs (2.2.x): type (1 byte), length (2 bytes), value.
v2_tlvs(<<>>, _, Info, []) ->
	{ok, Info};
v2_tlvs(<<>>, _, Info, Raw) ->
	{ok, Info#{raw_tlvs => lists:reverse(Raw)}};
v2_tlvs(<<?PP2_TYPE_CRC32C, 4:16, CRC:32, Rest/bits>>, Header, Info, Raw) ->
	%% The checksum of the whole header with this field zeroed (2.2.3).
	Pos = byte_size(Header) - byte_size(Rest) - 4,
	<<Before:Pos/binary, _:32, After/binary>> = Header,
	case crc32c(<<Before/binary, 0:32, After/binary>>) of
		CRC -> v2_tlvs(Rest, Header, Info, Raw);
		_ -> ?ERR('The PROXY protocol version 2 CRC32C checksum does not match the header. (PROXY protocol 2.2.3)')
	end;
v2_tlvs(<<Type, Len:16, Value:Len/binary, Rest/bits>>, Header, Info, Raw) ->
	case v2_tlv(Type, Value, Info) of
		{ok, Info2} -> v2_tlvs(Rest, Header, Info2, Raw);
		raw -> v2_tlvs(Rest, Header, Info, [{Type, Value} | Raw]);
		Error -> Error
	end;
v2_tlvs(_, _, _, _) ->
	?ERR('A PROXY protocol version 2 TLV runs past the end of the header. (PROXY protocol 2.2)').

v2_tlv(?PP2_TYPE_CRC32C, _, _) ->
	?ERR('The PROXY protocol version 2 CRC32C TLV is not 4 bytes long. (PROXY protocol 2.2.3)');
v2_tlv(?PP2_TYPE_NOOP, _, Info) -> {ok, Info};
v2_tlv(?PP2_TYPE_UNIQUE_ID, Value, Info) when byte_size(Value) =< 128 ->
	{ok, Info#{unique_id => Value}};
v2_tlv(?PP2_TYPE_UNIQUE_ID, _, _) ->
	?ERR('The PROXY protocol version 2 unique ID is longer than 128 bytes. (PROXY protocol 2.2.5)');
v2_tlv(?PP2_TYPE_SSL, <<Client, Verify:32, Sub/bits>>, Info) ->
	SSL = #{client => [Name || {Bit, Name} <- [{1, ssl}, {2, cert_conn}, {4, cert_sess}],
		Client band Bit =/= 0], verified => Verify =:= 0},
	case ssl_subtlvs(Sub, SSL) of
		{ok, SSL2} -> {ok, Info#{ssl => SSL2}};
		Error -> Error
	end;
v2_tlv(?PP2_TYPE_SSL, _, _) ->
	?ERR('The PROXY protocol version 2 SSL TLV is shorter than 5 bytes. (PROXY protocol 2.2.6)');
v2_tlv(Type, Value, Info) ->
	case lists:keyfind(Type, 2, text_tlvs()) of
		{Key, _} -> {ok, Info#{Key => Value}};
		false -> raw
	end.

%% The TLVs whose value is text, and the SSL sub-TLVs (2.2.6).
text_tlvs() ->
	[{alpn, 16#01}, {authority, 16#02}, {netns, 16#30}].

ssl_subtlvs() ->
	[{version, 16#21}, {cn, 16#22}, {cipher, 16#23}, {sig_alg, 16#24}, {key_alg, 16#25}].

ssl_subtlvs(<<>>, SSL) ->
	{ok, SSL};
ssl_subtlvs(<<Type, Len:16, Value:Len/binary, Rest/bits>>, SSL) ->
	SSL2 = case lists:keyfind(Type, 2, ssl_subtlvs()) of
		{Key, _} -> SSL#{Key => Value};
		false -> SSL
	end,
	ssl_subtlvs(Rest, SSL2);
ssl_subtlvs(_, _) ->
	?ERR('A PROXY protocol version 2 SSL sub-TLV runs past the end of the SSL TLV. (PROXY protocol 2.2.6)').

%% CRC32C (Castagnoli, reflected polynomial 16#82F63B78), a bit at a time:
%% only headers that carry the TLV pay for it, and they are short.
crc32c(Bin) ->
	crc32c(Bin, 16#FFFFFFFF) bxor 16#FFFFFFFF.

crc32c(<<>>, CRC) ->
	CRC;
crc32c(<<Byte, Rest/bits>>, CRC) ->
	crc32c(Rest, crc32c_bits(CRC bxor Byte, 8)).

crc32c_bits(CRC, 0) -> CRC;
crc32c_bits(CRC, N) when CRC band 1 =:= 1 -> crc32c_bits((CRC bsr 1) bxor 16#82F63B78, N - 1);
crc32c_bits(CRC, N) -> crc32c_bits(CRC bsr 1, N - 1).

%% Building. Version 1 for maps with version 1, version 2 otherwise; a
%% version 2 header carries the alpn, authority, unique_id, netns, ssl and
%% raw_tlvs of the map, and a CRC32C TLV when crc32c => true.

%% Builds a PROXY protocol header from such a map: version 1 for maps with
%% `version => 1`, version 2 otherwise (with the map's `alpn`, `authority`,
%% `unique_id`, `netns`, `ssl` and `raw_tlvs`, and a CRC32C TLV when
%% `crc32c => true`). For tests and for proxies written in Erlang.
%%
%%     Header = mustang_proxy_header:header(#{version => 2, command => proxy,
%%         transport_family => ipv4, transport_protocol => stream,
%%         src_address => {192, 0, 2, 1}, src_port => 54321,
%%         dest_address => {192, 0, 2, 2}, dest_port => 443})
-spec header(info() | #{crc32c => boolean(), _ => _}) -> binary().
header(#{version := 1, transport_family := Family, src_address := Src, dest_address := Dest,
		src_port := SP, dest_port := DP}) when Family =:= ipv4; Family =:= ipv6 ->
	Proto = case Family of ipv4 -> <<"TCP4">>; ipv6 -> <<"TCP6">> end,
	iolist_to_binary(["PROXY ", Proto, $\s, inet:ntoa(Src), $\s, inet:ntoa(Dest), $\s,
		integer_to_binary(SP), $\s, integer_to_binary(DP), "\r\n"]);
header(#{version := 1}) ->
	<<"PROXY UNKNOWN\r\n">>;
header(#{version := 2, command := local}) ->
	<<?V2_SIG, 16#20, 0, 0:16>>;
header(Info = #{version := 2, command := proxy}) ->
	Family = maps:get(transport_family, Info, undefined),
	FamProto = case Family of
		undefined -> 0;
		_ ->
			F = case Family of ipv4 -> 1; ipv6 -> 2; unix -> 3 end,
			P = case maps:get(transport_protocol, Info, stream) of stream -> 1; dgram -> 2 end,
			F bsl 4 bor P
	end,
	Addresses = build_addresses(Family, Info),
	TLVs = build_tlvs(Info),
	case maps:get(crc32c, Info, false) of
		false ->
			v2(FamProto, [Addresses, TLVs]);
		true ->
			Zeroed = v2(FamProto, [Addresses, TLVs, tlv(?PP2_TYPE_CRC32C, <<0:32>>)]),
			v2(FamProto, [Addresses, TLVs, tlv(?PP2_TYPE_CRC32C, <<(crc32c(Zeroed)):32>>)])
	end.

v2(FamProto, Block) ->
	iolist_to_binary([<<?V2_SIG, 16#21, FamProto, (iolist_size(Block)):16>>, Block]).

build_addresses(undefined, _) ->
	<<>>;
build_addresses(ipv4, #{src_address := {S1, S2, S3, S4}, dest_address := {D1, D2, D3, D4},
		src_port := SP, dest_port := DP}) ->
	<<S1, S2, S3, S4, D1, D2, D3, D4, SP:16, DP:16>>;
build_addresses(ipv6, #{src_address := S, dest_address := D, src_port := SP, dest_port := DP}) ->
	<< <<W:16>> || W <- tuple_to_list(S) ++ tuple_to_list(D) ++ [SP, DP] >>;
build_addresses(unix, #{src_address := S, dest_address := D}) ->
	<<(pad108(S))/binary, (pad108(D))/binary>>.

pad108(Path) ->
	<<Path/binary, 0:((108 - byte_size(Path)) * 8)>>.

build_tlvs(Info) ->
	Simple = [tlv(Type, maps:get(Key, Info))
		|| {Key, Type} <- [{unique_id, ?PP2_TYPE_UNIQUE_ID} | text_tlvs()], maps:is_key(Key, Info)],
	SSL = case Info of
		#{ssl := S = #{client := Client, verified := Verified}} ->
			Bits = lists:sum([Bit || {Bit, Name} <- [{1, ssl}, {2, cert_conn}, {4, cert_sess}],
				lists:member(Name, Client)]),
			Verify = case Verified of true -> 0; false -> 1 end,
			Sub = [tlv(Type, maps:get(Key, S)) || {Key, Type} <- ssl_subtlvs(), maps:is_key(Key, S)],
			[tlv(?PP2_TYPE_SSL, [<<Bits, Verify:32>>, Sub])];
		_ ->
			[]
	end,
	Raw = [tlv(Type, Value) || {Type, Value} <- maps:get(raw_tlvs, Info, [])],
	[Simple, SSL, Raw].

tlv(Type, Value) ->
	[<<Type, (iolist_size(Value)):16>>, Value].
