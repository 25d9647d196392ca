%% Every protocol option a listener takes and every Websocket option a
%% handler returns: each key's type, its default and the rule its value must
%% follow. mustang:start_clear/3, start_tls/3 and set_protocol_options/2 call
%% validate/1; the Websocket upgrade calls validate_websocket/1. Each key has
%% its own clause: an unknown key is refused, never accepted by a catch-all.
%%
%% The defaults of the connection options stay beside the code that uses
%% them (mustang_http1:defaults/0, mustang_http1_codec:default_limits/0,
%% mustang_http2:defaults/0); defaults/0 merges them with those of the stream
%% layer, kept here. Times are in ms, at most 4294967295 (the largest
%% `receive ... after` value); sizes are in bytes.
%%
%% Protocol options shared by HTTP/1.1 and HTTP/2 (defaults in parentheses):
%%   env (#{})                       middleware environment (atom keys)
%%   middlewares ([mustang_router, mustang_handler])
%%   stream_handlers ([mustang_stream_h])  the stream handler chain
%%   active_n (100)                  1..32767, {active, N} of the socket
%%   adaptive_active (true)          boolean, {active, 1} between requests when the run
%%                                   queues are empty (HTTP/1.1, HTTP/2; not Websocket)
%%   dynamic_buffer ({1024, 131072}) {Min, Max}, 1 =< Min =< Max, or false
%%   hibernate (false)
%%   hibernate_after (1000)          ms without data before an idle connection
%%                                   hibernates (within twice that), or infinity
%%   idle_timeout (60000)            or infinity
%%   min_recv_rate ({1024, 30000})   {Bytes, Ms}: a request body must bring at
%%                                   least Bytes in every Ms once started, or off
%%   logger (logger)                 module
%%   protocols ([http2, http])       non-empty list of http and http2
%%   alpn_default_protocol (http)    http | http2
%%   proxy_header (false)            read a PROXY protocol header (v1 or v2)
%%                                   first, before TLS (mustang_proxy_header)
%%   proxy_header_timeout (5000)     ms for the whole header, no infinity
%% HTTP/1.1:
%%   request_process (false)
%%   request_timeout (5000)          or infinity
%%   max_keepalive (1000)            or infinity
%%   max_request_line_length (8000), max_method_length (32),
%%   max_header_name_length (64), max_header_value_length (4096): >= 1
%%   max_headers (100), max_empty_lines (5): >= 0
%%   max_skip_body_length (1000000), max_trailer_length (4096),
%%   max_chunk_ext_length (1048576): >= 0
%%   linger_timeout (1000)           no infinity
%% HTTP/2 (ranges from RFC 9113):
%%   enable_connect_protocol (false)
%%   max_concurrent_streams (100)    0..4294967295 (a SETTINGS value, 6.5.1)
%%   initial_connection_window_size (16777216)  65535..2147483647 (6.9.2)
%%   initial_stream_window_size (65535), max_stream_window_size (8388608),
%%   connection_window_update_threshold (4194304),
%%   stream_window_margin_size (65535),
%%   stream_window_update_threshold (163840): 0..2147483647 (6.9.1)
%%   max_frame_size_received (16384) 16384..16777215 (6.5.2)
%%   max_frame_size_sent (infinity)  16384..16777215 or infinity
%%   max_decode_table_size (4096), max_header_list_size (65536):
%%                                   0..4294967295 (SETTINGS values)
%%   max_encode_table_size (4096), max_header_block_size (65536),
%%   stream_send_buffer_size (262144),
%%   connection_send_buffer_size (1048576): >= 0
%%   preface_timeout (5000), settings_timeout (5000)  no infinity
%%   flow_control_timeout (30000)    or infinity
%%   max_cancel_stream_rate ({500, 10000}),
%%   max_overhead_frame_rate ({2000, 10000}): {Count >= 1, Ms >= 1}
%% HTTP/3 (mustang:start_quic/3; max_concurrent_streams and
%% enable_connect_protocol as HTTP/2's, idle_timeout is also QUIC's
%% max_idle_timeout; RFC 9114, RFC 9204, RFC 9000):
%%   max_field_section_size (65536)  SETTINGS_MAX_FIELD_SECTION_SIZE, 0..2^62-1
%%   qpack_max_table_capacity (4096), qpack_blocked_streams (100):
%%                                   our decoder's SETTINGS, 0..4294967295
%%   qpack_encoder_max_table_capacity (4096)  >= 0
%%   max_uni_streams (16)            3..2^60 (RFC 9114 6.2 wants 3 or more)
%%   quic_stream_receive_window (1250000), quic_receive_window (15000000),
%%   quic_send_window (15000000)     1..2^62-1
%% TCP listeners:
%%   alt_svc (none)                  an Alt-Svc field value (RFC 7838) added to
%%                                   every response, e.g. <<"h3=\":443\"">>
%% Stream handlers:
%%   compress_threshold (300)        >= 0
%%   compress_buffering (false)
%%   decompress_enabled (true)
%%   decompress_ratio_limit (20)     >= 1
%%   metrics_callback (none)         fun/1
%%   metrics_req_filter (none)       fun/1
%%   metrics_resp_headers_filter (none)  fun/1
%%   tracer_callback (none)          fun/2
%%   tracer_match_specs (none)       list
%%   tracer_flags (mustang_tracer_h's)  list of erlang:trace/3 flag atoms
%%   access_log_format (common)      common | combined | json
%%   access_log_peer (socket)        socket | proxy_header: the client address
%%                                   logged, the socket peer or the PROXY
%%                                   protocol header's source
%%
%% Websocket options (the Opts of {mustang_websocket, Req, State, Opts}):
%%   idle_timeout (60000)            or infinity
%%   hibernate_after (1000)          as the protocol option
%%   max_frame_size (1048576)        >= 0 or infinity
%%   min_recv_rate ({1024, 30000})   {Bytes, Ms} while a frame is in progress,
%%                                   or off
%%   compress (false)
%%   deflate_opts (#{})              level (zlib:zlevel()), mem_level (1..9),
%%                                   strategy (zlib:zstrategy()),
%%                                   server_context_takeover,
%%                                   client_context_takeover (takeover |
%%                                   no_takeover), server_max_window_bits,
%%                                   client_max_window_bits (8..15, RFC 7692)
%%   validate_utf8 (true)
%%   active_n (the listener's)       1..32767
%%   req_filter (none)               fun/1
%%   close_timeout (3000)            or infinity
-module(mustang_opts).

-export([validate/1]).
-export([validate_websocket/1]).
-export([defaults/0]).

-export_type([http1_opts/0, http2_opts/0, http3_opts/0, protocol_opts/0, websocket_opts/0]).
-export_type([error/0, websocket_error/0]).

%% The largest timeout a `receive ... after` takes.
-define(MAX_MS, 4294967295).
%% RFC 9113 6.5.1: SETTINGS values are 32 bits; 6.9.1: windows at most 2^31-1.
-define(MAX_SETTING, 4294967295).
-define(MAX_WINDOW, 2147483647).
%% RFC 9000 16: QUIC variable-length integers.
-define(MAX_VARINT, 4611686018427387903).
%% inet: {active, N} takes N up to 32767.
-define(MAX_ACTIVE_N, 32767).

-type ms() :: 0..?MAX_MS.
-type pos_ms() :: 1..?MAX_MS.
-type window_size() :: 0..?MAX_WINDOW.
-type setting() :: 0..?MAX_SETTING.
-type frame_size() :: 16384..16777215.
-type rate() :: {pos_integer(), pos_integer()}.
-type active_n() :: 1..?MAX_ACTIVE_N.

-define(SHARED_OPTS,
	env => mustang_middleware:env(),
	middlewares => [module()],
	stream_handlers => [module()],
	active_n => active_n(),
	adaptive_active => boolean(),
	dynamic_buffer => false | {pos_integer(), pos_integer()},
	hibernate => boolean(),
	hibernate_after => pos_ms() | infinity,
	idle_timeout => ms() | infinity,
	min_recv_rate => off | {pos_integer(), pos_integer()},
	logger => module(),
	protocols => [http | http2, ...],
	alpn_default_protocol => http | http2,
	proxy_header => boolean(),
	proxy_header_timeout => ms()).

-define(HTTP1_OPTS,
	request_process => boolean(),
	request_timeout => ms() | infinity,
	max_keepalive => non_neg_integer() | infinity,
	max_request_line_length => pos_integer(),
	max_method_length => pos_integer(),
	max_header_name_length => pos_integer(),
	max_header_value_length => pos_integer(),
	max_headers => non_neg_integer(),
	max_empty_lines => non_neg_integer(),
	max_skip_body_length => non_neg_integer(),
	max_trailer_length => non_neg_integer(),
	max_chunk_ext_length => non_neg_integer(),
	linger_timeout => ms()).

-define(HTTP2_OPTS,
	enable_connect_protocol => boolean(),
	max_concurrent_streams => setting(),
	initial_connection_window_size => 65535..?MAX_WINDOW,
	connection_window_update_threshold => window_size(),
	initial_stream_window_size => window_size(),
	stream_window_margin_size => window_size(),
	stream_window_update_threshold => window_size(),
	max_stream_window_size => window_size(),
	max_frame_size_received => frame_size(),
	max_frame_size_sent => frame_size() | infinity,
	max_decode_table_size => setting(),
	max_encode_table_size => non_neg_integer(),
	max_header_list_size => setting(),
	max_header_block_size => non_neg_integer(),
	preface_timeout => ms(),
	settings_timeout => ms(),
	max_cancel_stream_rate => rate(),
	max_overhead_frame_rate => rate(),
	flow_control_timeout => ms() | infinity,
	stream_send_buffer_size => non_neg_integer(),
	connection_send_buffer_size => non_neg_integer()).

-define(HTTP3_OPTS,
	max_field_section_size => 0..?MAX_VARINT,
	qpack_max_table_capacity => setting(),
	qpack_blocked_streams => setting(),
	qpack_encoder_max_table_capacity => non_neg_integer(),
	max_uni_streams => 3..1152921504606846976,
	quic_stream_receive_window => 1..?MAX_VARINT,
	quic_receive_window => 1..?MAX_VARINT,
	quic_send_window => 1..?MAX_VARINT,
	alt_svc => binary()).

-define(STREAM_OPTS,
	compress_threshold => non_neg_integer(),
	compress_buffering => boolean(),
	decompress_enabled => boolean(),
	decompress_ratio_limit => pos_integer(),
	metrics_callback => fun((map()) -> any()),
	metrics_req_filter => fun((map()) -> map()),
	metrics_resp_headers_filter => fun((mustang_req:headers()) -> mustang_req:headers()),
	tracer_callback => fun((any(), any()) -> any()),
	tracer_match_specs => list(),
	tracer_flags => [atom()],
	access_log_format => common | combined | json,
	access_log_peer => socket | proxy_header).

-type http1_opts() :: #{?SHARED_OPTS, ?HTTP1_OPTS}.
-type http2_opts() :: #{?SHARED_OPTS, ?HTTP2_OPTS}.
-type http3_opts() :: #{?SHARED_OPTS, ?HTTP3_OPTS}.
-type protocol_opts() :: #{?SHARED_OPTS, ?HTTP1_OPTS, ?HTTP2_OPTS, ?HTTP3_OPTS, ?STREAM_OPTS}.

-type websocket_opts() :: #{
	idle_timeout => ms() | infinity,
	hibernate_after => pos_ms() | infinity,
	max_frame_size => non_neg_integer() | infinity,
	compress => boolean(),
	deflate_opts => mustang_ws_deflate:deflate_opts(),
	validate_utf8 => boolean(),
	active_n => active_n(),
	req_filter => fun((mustang_req:req()) -> map()),
	close_timeout => ms() | infinity,
	min_recv_rate => off | {pos_integer(), pos_integer()}
}.

-type error() :: {unknown_protocol_options, [any()]}
	| {invalid_protocol_option, atom(), any()}
	| {badarg, options_must_be_maps}.
-type websocket_error() :: {unknown_websocket_options, [any()]}
	| {invalid_websocket_option, atom(), any()}
	| {badarg, options_must_be_maps}.

%% Defaults of the stream layer (those of the connections are in their modules).
-define(STREAM_DEFAULTS, #{
	stream_handlers => [mustang_stream_h],
	compress_threshold => 300,
	compress_buffering => false,
	decompress_enabled => true,
	decompress_ratio_limit => 20,
	access_log_format => common,
	access_log_peer => socket
}).

%% Validation.

%% Checks protocol options as `mustang:start_clear/3` does: `ok`, or
%% `{error, {unknown_protocol_options, Keys}}` (every unknown key, in term
%% order), `{error, {invalid_protocol_option, Key, Value}}` (the first invalid
%% value, by key) or `{error, {badarg, options_must_be_maps}}`.
%%
%%     {error, {invalid_protocol_option, active_n, 0}} = mustang_opts:validate(#{active_n => 0})
-spec validate(any()) -> ok | {error, error()}.
validate(Opts) when is_map(Opts) ->
	check(Opts, fun protocol_option/2, unknown_protocol_options, invalid_protocol_option);
validate(_) ->
	{error, {badarg, options_must_be_maps}}.

%% Checks the options of `{mustang_websocket, Req, State, Opts}`: `ok`, or
%% `{error, {unknown_websocket_options, Keys}}`,
%% `{error, {invalid_websocket_option, Key, Value}}` or
%% `{error, {badarg, options_must_be_maps}}`. The upgrade raises
%% `error({badarg, Reason})` with that error.
-spec validate_websocket(any()) -> ok | {error, websocket_error()}.
validate_websocket(Opts) when is_map(Opts) ->
	check(Opts, fun websocket_option/2, unknown_websocket_options, invalid_websocket_option);
validate_websocket(_) ->
	{error, {badarg, options_must_be_maps}}.

%% Every protocol option that has a default, with that default (the options
%% without one, such as `metrics_callback`, are absent).
-spec defaults() -> protocol_opts().
defaults() ->
	maps:merge(
		maps:merge(mustang_http1:defaults(), mustang_http1_codec:default_limits()),
		maps:merge(maps:merge(mustang_http2:defaults(), mustang_http3:defaults()),
			?STREAM_DEFAULTS)).

check(Opts, Rule, UnknownTag, InvalidTag) ->
	{Unknown, Invalid} = maps:fold(fun(Key, Value, {U, I}) ->
		case Rule(Key, Value) of
			true -> {U, I};
			false -> {U, [{Key, Value} | I]};
			unknown -> {[Key | U], I}
		end
	end, {[], []}, Opts),
	case {lists:sort(Unknown), lists:sort(Invalid)} of
		{[], []} -> ok;
		{[], [{Key, Value} | _]} -> {error, {InvalidTag, Key, Value}};
		{Keys, _} -> {error, {UnknownTag, Keys}}
	end.

%% Protocol options, shared by both protocols.
protocol_option(env, V) -> is_map(V) andalso atoms(maps:keys(V));
protocol_option(middlewares, V) -> atoms(V);
protocol_option(stream_handlers, V) -> atoms(V);
protocol_option(active_n, V) -> int(V, 1, ?MAX_ACTIVE_N);
protocol_option(adaptive_active, V) -> is_boolean(V);
protocol_option(dynamic_buffer, V) -> V =:= false orelse buffer_bounds(V);
protocol_option(hibernate, V) -> is_boolean(V);
protocol_option(hibernate_after, V) -> V =:= infinity orelse int(V, 1, ?MAX_MS);
protocol_option(idle_timeout, V) -> timeout_or_infinity(V);
protocol_option(logger, V) -> is_atom(V);
protocol_option(protocols, V) -> V =/= [] andalso protocols(V);
protocol_option(alpn_default_protocol, V) -> V =:= http orelse V =:= http2;
protocol_option(proxy_header, V) -> is_boolean(V);
protocol_option(proxy_header_timeout, V) -> ms(V);
%% HTTP/1.1.
protocol_option(request_process, V) -> is_boolean(V);
protocol_option(request_timeout, V) -> timeout_or_infinity(V);
protocol_option(max_keepalive, V) -> V =:= infinity orelse non_neg(V);
protocol_option(max_request_line_length, V) -> pos(V);
protocol_option(max_method_length, V) -> pos(V);
protocol_option(max_header_name_length, V) -> pos(V);
protocol_option(max_header_value_length, V) -> pos(V);
protocol_option(max_headers, V) -> non_neg(V);
protocol_option(max_empty_lines, V) -> non_neg(V);
protocol_option(max_skip_body_length, V) -> non_neg(V);
protocol_option(max_trailer_length, V) -> non_neg(V);
protocol_option(max_chunk_ext_length, V) -> non_neg(V);
protocol_option(linger_timeout, V) -> ms(V);
protocol_option(min_recv_rate, off) -> true;
protocol_option(min_recv_rate, {Bytes, Period}) -> pos(Bytes) andalso ms(Period) andalso Period > 0;
protocol_option(min_recv_rate, _) -> false;
%% HTTP/2.
protocol_option(enable_connect_protocol, V) -> is_boolean(V);
protocol_option(max_concurrent_streams, V) -> int(V, 0, ?MAX_SETTING);
%% RFC 9113 6.9.2: the connection window starts at 65535 and only grows.
protocol_option(initial_connection_window_size, V) -> int(V, 65535, ?MAX_WINDOW);
protocol_option(connection_window_update_threshold, V) -> int(V, 0, ?MAX_WINDOW);
protocol_option(initial_stream_window_size, V) -> int(V, 0, ?MAX_WINDOW);
protocol_option(stream_window_margin_size, V) -> int(V, 0, ?MAX_WINDOW);
protocol_option(stream_window_update_threshold, V) -> int(V, 0, ?MAX_WINDOW);
protocol_option(max_stream_window_size, V) -> int(V, 0, ?MAX_WINDOW);
protocol_option(max_frame_size_received, V) -> frame_size(V);
protocol_option(max_frame_size_sent, V) -> V =:= infinity orelse frame_size(V);
protocol_option(max_decode_table_size, V) -> int(V, 0, ?MAX_SETTING);
protocol_option(max_encode_table_size, V) -> non_neg(V);
protocol_option(max_header_list_size, V) -> int(V, 0, ?MAX_SETTING);
protocol_option(max_header_block_size, V) -> non_neg(V);
protocol_option(preface_timeout, V) -> ms(V);
protocol_option(settings_timeout, V) -> ms(V);
protocol_option(max_cancel_stream_rate, V) -> rate(V);
protocol_option(max_overhead_frame_rate, V) -> rate(V);
protocol_option(flow_control_timeout, V) -> timeout_or_infinity(V);
protocol_option(stream_send_buffer_size, V) -> non_neg(V);
protocol_option(connection_send_buffer_size, V) -> non_neg(V);
%% HTTP/3.
protocol_option(max_field_section_size, V) -> int(V, 0, ?MAX_VARINT);
protocol_option(qpack_max_table_capacity, V) -> int(V, 0, ?MAX_SETTING);
protocol_option(qpack_blocked_streams, V) -> int(V, 0, ?MAX_SETTING);
protocol_option(qpack_encoder_max_table_capacity, V) -> non_neg(V);
protocol_option(max_uni_streams, V) -> int(V, 3, 1 bsl 60);
protocol_option(quic_stream_receive_window, V) -> int(V, 1, ?MAX_VARINT);
protocol_option(quic_receive_window, V) -> int(V, 1, ?MAX_VARINT);
protocol_option(quic_send_window, V) -> int(V, 1, ?MAX_VARINT);
protocol_option(alt_svc, V) -> is_binary(V) andalso safe_value(V);
%% Stream handlers.
protocol_option(compress_threshold, V) -> non_neg(V);
protocol_option(compress_buffering, V) -> is_boolean(V);
protocol_option(decompress_enabled, V) -> is_boolean(V);
protocol_option(decompress_ratio_limit, V) -> pos(V);
protocol_option(metrics_callback, V) -> is_function(V, 1);
protocol_option(metrics_req_filter, V) -> is_function(V, 1);
protocol_option(metrics_resp_headers_filter, V) -> is_function(V, 1);
protocol_option(tracer_callback, V) -> is_function(V, 2);
protocol_option(tracer_match_specs, V) -> proper_list(V);
protocol_option(tracer_flags, V) -> proper_list(V) andalso lists:all(fun is_atom/1, V);
protocol_option(access_log_format, V) -> V =:= common orelse V =:= combined orelse V =:= json;
protocol_option(access_log_peer, V) -> V =:= socket orelse V =:= proxy_header;
protocol_option(_, _) -> unknown.

websocket_option(idle_timeout, V) -> timeout_or_infinity(V);
websocket_option(hibernate_after, V) -> protocol_option(hibernate_after, V);
websocket_option(max_frame_size, V) -> V =:= infinity orelse non_neg(V);
websocket_option(compress, V) -> is_boolean(V);
websocket_option(deflate_opts, V) -> is_map(V) andalso maps:fold(
	fun(Key, Value, Acc) -> Acc andalso deflate_option(Key, Value) end, true, V);
websocket_option(validate_utf8, V) -> is_boolean(V);
websocket_option(active_n, V) -> int(V, 1, ?MAX_ACTIVE_N);
websocket_option(req_filter, V) -> is_function(V, 1);
websocket_option(close_timeout, V) -> timeout_or_infinity(V);
websocket_option(min_recv_rate, V) -> protocol_option(min_recv_rate, V);
websocket_option(_, _) -> unknown.

%% The keys of deflate_opts (an unknown one makes the whole map invalid).
deflate_option(level, V) ->
	V =:= none orelse V =:= default orelse V =:= best_compression orelse V =:= best_speed
		orelse int(V, 0, 9);
deflate_option(mem_level, V) -> int(V, 1, 9);
deflate_option(strategy, V) ->
	V =:= default orelse V =:= filtered orelse V =:= huffman_only orelse V =:= rle;
deflate_option(server_context_takeover, V) -> V =:= takeover orelse V =:= no_takeover;
deflate_option(client_context_takeover, V) -> V =:= takeover orelse V =:= no_takeover;
%% RFC 7692 7.1.2: window bits are 8 to 15.
deflate_option(server_max_window_bits, V) -> int(V, 8, 15);
deflate_option(client_max_window_bits, V) -> int(V, 8, 15);
deflate_option(_, _) -> false.

%% Value rules.

%% A field value that cannot split a response: no CR, LF or NUL.
safe_value(V) -> binary:match(V, [<<"\r">>, <<"\n">>, <<0>>]) =:= nomatch.

int(V, Min, Max) -> is_integer(V) andalso V >= Min andalso V =< Max.

non_neg(V) -> is_integer(V) andalso V >= 0.

pos(V) -> is_integer(V) andalso V >= 1.

ms(V) -> int(V, 0, ?MAX_MS).

timeout_or_infinity(V) -> V =:= infinity orelse ms(V).

frame_size(V) -> int(V, 16384, 16777215).

rate({Count, Ms}) -> pos(Count) andalso pos(Ms);
rate(_) -> false.

buffer_bounds({Min, Max}) -> pos(Min) andalso is_integer(Max) andalso Max >= Min;
buffer_bounds(_) -> false.

atoms([]) -> true;
atoms([A | Rest]) when is_atom(A) -> atoms(Rest);
atoms(_) -> false.

protocols([]) -> true;
protocols([P | Rest]) when P =:= http; P =:= http2 -> protocols(Rest);
protocols(_) -> false.

proper_list([]) -> true;
proper_list([_ | Rest]) -> proper_list(Rest);
proper_list(_) -> false.
