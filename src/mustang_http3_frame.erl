%% HTTP/3 frame codec (RFC 9114 section 7), the stream type prefix of
%% unidirectional streams (RFC 9114 6.2) and QUIC variable-length integers
%% (RFC 9000 16). Pure functions on binaries: no sockets, no processes. Which
%% frame may come on which stream, and in which order, is the machine's job
%% (mustang_http3_machine), not this module's.
%%
%% Contract: strict when parsing, lax when building.
%% - Parsing rejects what can be checked on the frame alone: the frame types
%%   that HTTP/2 used and HTTP/3 reserves (PRIORITY, PING, WINDOW_UPDATE,
%%   CONTINUATION: H3_FRAME_UNEXPECTED, RFC 9114 7.2.8), payloads that end
%%   before their fields or go past them (H3_FRAME_ERROR, RFC 9114 7.1),
%%   SETTINGS that repeat an identifier, use an HTTP/2 one or give a boolean
%%   setting another value than 0 or 1 (H3_SETTINGS_ERROR, RFC 9114 7.2.4),
%%   and frames longer than the caller's limit (H3_EXCESSIVE_LOAD, RFC 9114
%%   10.5). Unknown and reserved frame types and unknown settings are
%%   ignored, as RFC 9114 7.2.8, 7.2.4.1 and 9 require. Integers are read
%%   whatever their encoded length (RFC 9000 16 allows longer encodings).
%% - The builders trust their input: integers below 2^62, known settings.
%%
%% Parsing comes in two steps, so that a caller never buffers a payload it
%% will refuse or skip, and never waits for a whole DATA frame:
%%   parse_header(Bin) -> {ok, Type, Length, Rest} | {more, N} | {error, E}
%%     Type is data, headers, cancel_push, settings, push_promise, goaway,
%%     max_push_id, or {unknown, Integer} for a type to ignore: its Length
%%     bytes of payload are skipped as they arrive.
%%   parse_payload(Type, Payload) -> {ok, Frame} | {error, E}
%%     for a non-DATA type, once its Length bytes are there.
%% parse/2 chains them for callers that have whole frames (tests, clients):
%%   {ok, Frame, Rest}      a whole non-DATA frame
%%   {data, Length, Rest}   a DATA frame header: the next Length bytes (the
%%                          start of Rest, then what comes next on the
%%                          stream) are its payload
%%   {ignore, Length, Rest} an unknown or reserved frame type: skip Length
%%                          bytes
%%   {more, N}              at least N more bytes are needed (exactly N
%%                          when the frame header is known)
%%   {error, {connection_error, Code, Reason}}
%% Reason is an atom holding an English sentence that ends with the RFC
%% section it enforces, as in doc/internals/errors.md.
%%
%% Error codes (RFC 9114 8.1, RFC 9204 6) are atoms: code/1 gives the wire
%% value, code_name/1 the atom of a wire value; an unknown value is
%% h3_no_error, as RFC 9114 8 says it is to be treated.
-module(mustang_http3_frame).

%% Variable-length integers.
-export([encode_int/1]).
-export([decode_int/1]).

%% Frames.
-export([parse/2]).
-export([parse_header/1]).
-export([parse_payload/2]).
-export([data/1]).
-export([data_header/1]).
-export([headers/1]).
-export([cancel_push/1]).
-export([settings/1]).
-export([push_promise/2]).
-export([goaway/1]).
-export([max_push_id/1]).
-export([reserved_type/1]).

%% Unidirectional stream types.
-export([parse_stream_type/1]).
-export([stream_type/1]).

%% Error codes.
-export([code/1]).
-export([code_name/1]).

-type frame_type() :: data | headers | cancel_push | settings | push_promise | goaway
	| max_push_id | {unknown, non_neg_integer()}.
-type settings() :: #{
	qpack_max_table_capacity => non_neg_integer(),
	max_field_section_size => non_neg_integer(),
	qpack_blocked_streams => non_neg_integer(),
	enable_connect_protocol => boolean(),
	h3_datagram => boolean()
}.
-type frame() :: {headers, binary()}
	| {cancel_push, non_neg_integer()}
	| {settings, settings()}
	| {push_promise, non_neg_integer(), binary()}
	| {goaway, non_neg_integer()}
	| {max_push_id, non_neg_integer()}.
-type stream_type() :: control | push | encoder | decoder | {unknown, non_neg_integer()}.
-type error_code() :: h3_no_error | h3_general_protocol_error | h3_internal_error
	| h3_stream_creation_error | h3_closed_critical_stream | h3_frame_unexpected
	| h3_frame_error | h3_excessive_load | h3_id_error | h3_settings_error
	| h3_missing_settings | h3_request_rejected | h3_request_cancelled
	| h3_request_incomplete | h3_message_error | h3_connect_error | h3_version_fallback
	| qpack_decompression_failed | qpack_encoder_stream_error | qpack_decoder_stream_error
	| h3_datagram_error.
-type error() :: {connection_error, error_code(), atom()}.
-export_type([frame_type/0, settings/0, frame/0, stream_type/0, error_code/0, error/0]).

-define(MAX_INT, 16#3fffffffffffffff).

%% Variable-length integers (RFC 9000 16).

%% The shortest encoding of Int (0..2^62-1).
-spec encode_int(0..?MAX_INT) -> binary().
encode_int(Int) when Int < 16#40 -> <<0:2, Int:6>>;
encode_int(Int) when Int < 16#4000 -> <<1:2, Int:14>>;
encode_int(Int) when Int < 16#40000000 -> <<2:2, Int:30>>;
encode_int(Int) when Int =< ?MAX_INT -> <<3:2, Int:62>>.

%% An integer at the start of Bin, or how many more bytes it needs.
-spec decode_int(binary()) -> {ok, non_neg_integer(), binary()} | {more, pos_integer()}.
decode_int(<<0:2, Int:6, Rest/bits>>) -> {ok, Int, Rest};
decode_int(<<1:2, Int:14, Rest/bits>>) -> {ok, Int, Rest};
decode_int(<<2:2, Int:30, Rest/bits>>) -> {ok, Int, Rest};
decode_int(<<3:2, Int:62, Rest/bits>>) -> {ok, Int, Rest};
decode_int(<<>>) -> {more, 1};
decode_int(Bin = <<Len:2, _/bits>>) -> {more, (1 bsl Len) - byte_size(Bin)}.

%% Frames.

-spec parse(binary(), non_neg_integer() | infinity)
	-> {ok, frame(), binary()} | {data, non_neg_integer(), binary()}
	| {ignore, non_neg_integer(), binary()} | {more, pos_integer()} | {error, error()}.
parse(Bin, Max) ->
	case parse_header(Bin) of
		{ok, data, Len, Rest} ->
			{data, Len, Rest};
		{ok, {unknown, _}, Len, Rest} ->
			{ignore, Len, Rest};
		{ok, _, Len, _} when Len > Max ->
			{error, too_large()};
		{ok, Type, Len, Rest} ->
			case Rest of
				<<Payload:Len/binary, Rest2/bits>> ->
					case parse_payload(Type, Payload) of
						{ok, Frame} -> {ok, Frame, Rest2};
						Error -> Error
					end;
				_ ->
					{more, Len - byte_size(Rest)}
			end;
		Other ->
			Other
	end.

%% The error for a frame longer than the caller accepts.
too_large() ->
	{connection_error, h3_excessive_load, 'A frame is longer than this endpoint accepts. (RFC9114 10.5)'}.

%% The frame header: type and length (RFC 9114 7.1).
-spec parse_header(binary())
	-> {ok, frame_type(), non_neg_integer(), binary()} | {more, pos_integer()} | {error, error()}.
parse_header(Bin) ->
	case decode_int(Bin) of
		{ok, Type, Rest} ->
			case frame_type(Type) of
				{error, _} = Error ->
					Error;
				FrameType ->
					case decode_int(Rest) of
						{ok, Len, Rest2} -> {ok, FrameType, Len, Rest2};
						More -> More
					end
			end;
		{more, N} ->
			%% Plus at least one byte of length.
			{more, N + 1}
	end.

frame_type(0) -> data;
frame_type(1) -> headers;
frame_type(3) -> cancel_push;
frame_type(4) -> settings;
frame_type(5) -> push_promise;
frame_type(7) -> goaway;
frame_type(13) -> max_push_id;
frame_type(Type) when Type =:= 2; Type =:= 6; Type =:= 8; Type =:= 9 ->
	{error, {connection_error, h3_frame_unexpected,
		'The frame types of HTTP/2 that HTTP/3 left out must not be sent. (RFC9114 7.2.8)'}};
frame_type(Type) ->
	{unknown, Type}.

%% The payload of a non-DATA frame, whole.
-spec parse_payload(frame_type(), binary()) -> {ok, frame()} | {error, error()}.
parse_payload(headers, Block) ->
	{ok, {headers, Block}};
parse_payload(cancel_push, Payload) ->
	one_int(cancel_push, Payload);
parse_payload(settings, Payload) ->
	parse_settings(Payload, #{});
parse_payload(push_promise, Payload) ->
	case decode_int(Payload) of
		{ok, PushID, Block} -> {ok, {push_promise, PushID, Block}};
		{more, _} -> {error, frame_error()}
	end;
parse_payload(goaway, Payload) ->
	one_int(goaway, Payload);
parse_payload(max_push_id, Payload) ->
	one_int(max_push_id, Payload).

one_int(Type, Payload) ->
	case decode_int(Payload) of
		{ok, Int, <<>>} -> {ok, {Type, Int}};
		_ -> {error, frame_error()}
	end.

frame_error() ->
	{connection_error, h3_frame_error,
		'A frame payload must hold exactly the fields of its type. (RFC9114 7.1)'}.

%% SETTINGS (RFC 9114 7.2.4): identifier-value pairs, each identifier once.
%% The HTTP/2 identifiers 0x02..0x05 are errors (RFC 9114 7.2.4.1); unknown
%% and reserved ones are ignored, but still counted as seen.
parse_settings(<<>>, Acc) ->
	{ok, {settings, maps:filter(fun(K, _) -> is_atom(K) end, Acc)}};
parse_settings(Payload, Acc) ->
	case decode_int(Payload) of
		{ok, ID, Rest} ->
			case decode_int(Rest) of
				{ok, Value, Rest2} -> setting(ID, Value, Rest2, Acc);
				{more, _} -> {error, frame_error()}
			end;
		{more, _} ->
			{error, frame_error()}
	end.

setting(ID, _, _, _) when ID >= 2, ID =< 5 ->
	{error, {connection_error, h3_settings_error,
		'The SETTINGS identifiers of HTTP/2 that HTTP/3 left out must not be sent. (RFC9114 7.2.4.1)'}};
setting(ID, Value, Rest, Acc) ->
	Key = setting_name(ID),
	case Acc of
		#{Key := _} ->
			{error, {connection_error, h3_settings_error,
				'A SETTINGS identifier must not appear twice. (RFC9114 7.2.4)'}};
		_ ->
			case setting_value(Key, Value) of
				error when Key =:= enable_connect_protocol ->
					{error, {connection_error, h3_settings_error,
						'SETTINGS_ENABLE_CONNECT_PROTOCOL must be 0 or 1. (RFC8441 3)'}};
				error ->
					{error, {connection_error, h3_settings_error,
						'SETTINGS_H3_DATAGRAM must be 0 or 1. (RFC9297 2.1.1)'}};
				{ok, V} ->
					parse_settings(Rest, Acc#{Key => V})
			end
	end.

setting_name(1) -> qpack_max_table_capacity;
setting_name(6) -> max_field_section_size;
setting_name(7) -> qpack_blocked_streams;
setting_name(8) -> enable_connect_protocol;
setting_name(16#33) -> h3_datagram;
setting_name(ID) -> {unknown, ID}.

setting_value(Key, 0) when Key =:= enable_connect_protocol; Key =:= h3_datagram -> {ok, false};
setting_value(Key, 1) when Key =:= enable_connect_protocol; Key =:= h3_datagram -> {ok, true};
setting_value(Key, _) when Key =:= enable_connect_protocol; Key =:= h3_datagram -> error;
setting_value(_, Value) -> {ok, Value}.

setting_id(qpack_max_table_capacity) -> 1;
setting_id(max_field_section_size) -> 6;
setting_id(qpack_blocked_streams) -> 7;
setting_id(enable_connect_protocol) -> 8;
setting_id(h3_datagram) -> 16#33.

%% Building.

-spec data(iodata()) -> iodata().
data(Data) ->
	[data_header(iolist_size(Data)), Data].

%% The header of a DATA frame whose Length bytes of payload the caller
%% writes next (a file sent in pieces).
-spec data_header(non_neg_integer()) -> binary().
data_header(Length) ->
	<<0, (encode_int(Length))/binary>>.

-spec headers(iodata()) -> iodata().
headers(Block) ->
	[1, encode_int(iolist_size(Block)) | Block].

-spec cancel_push(non_neg_integer()) -> binary().
cancel_push(PushID) ->
	int_frame(3, PushID).

%% A SETTINGS frame with the settings given, in the order of their
%% identifiers.
-spec settings(settings()) -> binary().
settings(Settings) ->
	Payload = << <<(encode_int(ID))/binary, (encode_int(value(V)))/binary>>
		|| {ID, V} <- lists:sort([{setting_id(K), V} || {K, V} <- maps:to_list(Settings)]) >>,
	<<4, (encode_int(byte_size(Payload)))/binary, Payload/binary>>.

value(true) -> 1;
value(false) -> 0;
value(Int) -> Int.

-spec push_promise(non_neg_integer(), iodata()) -> iodata().
push_promise(PushID, Block) ->
	ID = encode_int(PushID),
	[5, encode_int(byte_size(ID) + iolist_size(Block)), ID | Block].

-spec goaway(non_neg_integer()) -> binary().
goaway(ID) ->
	int_frame(7, ID).

-spec max_push_id(non_neg_integer()) -> binary().
max_push_id(PushID) ->
	int_frame(13, PushID).

int_frame(Type, Int) ->
	Bin = encode_int(Int),
	<<Type, (byte_size(Bin)), Bin/binary>>.

%% The N-th reserved frame type, stream type or setting identifier,
%% 0x1f * N + 0x21 (RFC 9114 7.2.8, 6.2.3, 7.2.4.1): values a peer must
%% ignore, for greasing and tests.
-spec reserved_type(non_neg_integer()) -> non_neg_integer().
reserved_type(N) ->
	16#1f * N + 16#21.

%% Unidirectional stream types (RFC 9114 6.2, RFC 9204 4.2).

-spec parse_stream_type(binary()) -> {ok, stream_type(), binary()} | {more, pos_integer()}.
parse_stream_type(Bin) ->
	case decode_int(Bin) of
		{ok, 0, Rest} -> {ok, control, Rest};
		{ok, 1, Rest} -> {ok, push, Rest};
		{ok, 2, Rest} -> {ok, encoder, Rest};
		{ok, 3, Rest} -> {ok, decoder, Rest};
		{ok, Type, Rest} -> {ok, {unknown, Type}, Rest};
		More -> More
	end.

-spec stream_type(control | push | encoder | decoder) -> binary().
stream_type(control) -> <<0>>;
stream_type(push) -> <<1>>;
stream_type(encoder) -> <<2>>;
stream_type(decoder) -> <<3>>.

%% Error codes (RFC 9114 8.1, RFC 9204 6, RFC 9297 5.2).

-spec code(error_code()) -> non_neg_integer().
code(Name) ->
	{Code, Name} = lists:keyfind(Name, 2, codes()),
	Code.

%% The name of a wire error code; an unknown code is h3_no_error (RFC 9114 8).
-spec code_name(non_neg_integer()) -> error_code().
code_name(Code) ->
	case lists:keyfind(Code, 1, codes()) of
		{Code, Name} -> Name;
		false -> h3_no_error
	end.

codes() ->
	[{16#100, h3_no_error}, {16#101, h3_general_protocol_error}, {16#102, h3_internal_error},
		{16#103, h3_stream_creation_error}, {16#104, h3_closed_critical_stream},
		{16#105, h3_frame_unexpected}, {16#106, h3_frame_error}, {16#107, h3_excessive_load},
		{16#108, h3_id_error}, {16#109, h3_settings_error}, {16#10a, h3_missing_settings},
		{16#10b, h3_request_rejected}, {16#10c, h3_request_cancelled},
		{16#10d, h3_request_incomplete}, {16#10e, h3_message_error}, {16#10f, h3_connect_error},
		{16#110, h3_version_fallback}, {16#200, qpack_decompression_failed},
		{16#201, qpack_encoder_stream_error}, {16#202, qpack_decoder_stream_error},
		{16#33, h3_datagram_error}].
