%% mustang_opts: every protocol and Websocket option accepted with a valid
%% value, refused with invalid ones (ranges at the bound and one past it),
%% unknown keys refused, every default of the connection modules covered by
%% a rule, and every option documented in the README with its default.
-module(mustang_opts_tests).

-include_lib("eunit/include/eunit.hrl").

-define(M, mustang_opts).
-define(MAX_MS, 4294967295).
-define(MAX_SETTING, 4294967295).
-define(MAX_WINDOW, 2147483647).

%% {Key, ValidValues, InvalidValues}: every protocol option.
protocol_table() ->
	Fun0 = fun() -> ok end,
	Fun1 = fun(_) -> ok end,
	Fun2 = fun(_, _) -> ok end,
	[
		{env, [#{}, #{dispatch => x}], [[], #{<<"dispatch">> => x}, undefined]},
		{middlewares, [[], [mustang_router, mustang_handler]], [[<<"m">>], [a | b], a]},
		{stream_handlers, [[], [mustang_stream_h], [a, b]], [["a"], [a | b], a]},
		{active_n, [1, 100, 32767], [0, 32768, -1, infinity, 1.0]},
		{adaptive_active, [true, false], [1, yes, undefined]},
		{dynamic_buffer, [false, {1, 1}, {1024, 131072}],
			[true, {0, 10}, {10, 9}, {1, a}, {1, 2, 3}, [1, 2]]},
		{hibernate, [true, false], [yes, 1]},
		{hibernate_after, [1, 1000, ?MAX_MS, infinity], [0, -1, ?MAX_MS + 1, 1.5]},
		{idle_timeout, [0, ?MAX_MS, infinity], [-1, ?MAX_MS + 1, 1.5, inf]},
		{logger, [logger, my_logger], ["logger", fun logger:info/1]},
		{protocols, [[http], [http2], [http2, http]], [[], [http3], [http | http2], http]},
		{alpn_default_protocol, [http, http2], [h2, <<"h2">>, [http]]},
		{proxy_header, [true, false], [1, yes, v2]},
		{proxy_header_timeout, [0, 5000, ?MAX_MS], [-1, ?MAX_MS + 1, infinity]},
		{request_process, [true, false], [yes, 0]},
		{request_timeout, [0, ?MAX_MS, infinity], [-1, ?MAX_MS + 1, undefined]},
		{max_keepalive, [0, 1000, infinity], [-1, 1.0, unlimited]},
		{max_request_line_length, [1, 8000], [0, -1, infinity]},
		{max_method_length, [1, 32], [0, -1, infinity]},
		{max_header_name_length, [1, 64], [0, -1, infinity]},
		{max_header_value_length, [1, 4096], [0, -1, infinity]},
		{max_headers, [0, 100], [-1, infinity, 1.0]},
		{max_empty_lines, [0, 5], [-1, infinity]},
		{max_skip_body_length, [0, 1000000], [-1, infinity]},
		{max_trailer_length, [0, 4096], [-1, infinity]},
		{max_chunk_ext_length, [0, 1048576], [-1, infinity, 1.0]},
		{min_recv_rate, [off, {1, 1}, {1024, 30000}, {1, ?MAX_MS}],
			[on, {0, 1000}, {1024, 0}, {1024, ?MAX_MS + 1}, {1024, infinity}, 1024]},
		{linger_timeout, [0, 1000, ?MAX_MS], [-1, ?MAX_MS + 1, infinity]},
		{enable_connect_protocol, [true, false], [1, yes]},
		{max_concurrent_streams, [0, 100, ?MAX_SETTING], [-1, ?MAX_SETTING + 1, infinity]},
		{initial_connection_window_size, [65535, 16777216, ?MAX_WINDOW],
			[65534, ?MAX_WINDOW + 1, infinity]},
		{connection_window_update_threshold, [0, ?MAX_WINDOW], [-1, ?MAX_WINDOW + 1]},
		{initial_stream_window_size, [0, 65535, ?MAX_WINDOW], [-1, ?MAX_WINDOW + 1]},
		{stream_window_margin_size, [0, ?MAX_WINDOW], [-1, ?MAX_WINDOW + 1]},
		{stream_window_update_threshold, [0, ?MAX_WINDOW], [-1, ?MAX_WINDOW + 1]},
		{max_stream_window_size, [0, ?MAX_WINDOW], [-1, ?MAX_WINDOW + 1]},
		{max_frame_size_received, [16384, 16777215], [16383, 16777216, infinity]},
		{max_frame_size_sent, [16384, 16777215, infinity], [16383, 16777216, 0]},
		{max_decode_table_size, [0, 4096, ?MAX_SETTING], [-1, ?MAX_SETTING + 1]},
		{max_encode_table_size, [0, 4096, ?MAX_SETTING + 1], [-1, infinity]},
		{max_header_list_size, [0, 65536, ?MAX_SETTING], [-1, ?MAX_SETTING + 1]},
		{max_header_block_size, [0, 65536], [-1, infinity]},
		{preface_timeout, [0, ?MAX_MS], [-1, ?MAX_MS + 1, infinity]},
		{settings_timeout, [0, ?MAX_MS], [-1, ?MAX_MS + 1, infinity]},
		{max_cancel_stream_rate, [{1, 1}, {500, 10000}],
			[{0, 10000}, {500, 0}, {500, infinity}, 500, {1, 2, 3}]},
		{max_overhead_frame_rate, [{1, 1}, {2000, 10000}], [{0, 1}, {1, 0}, {a, 1}]},
		{flow_control_timeout, [0, ?MAX_MS, infinity], [-1, ?MAX_MS + 1]},
		{stream_send_buffer_size, [0, 262144], [-1, infinity]},
		{connection_send_buffer_size, [0, 1048576], [-1, infinity]},
		{max_field_section_size, [0, 65536, (1 bsl 62) - 1], [-1, 1 bsl 62, infinity]},
		{qpack_max_table_capacity, [0, 4096, ?MAX_SETTING], [-1, ?MAX_SETTING + 1]},
		{qpack_blocked_streams, [0, 100, ?MAX_SETTING], [-1, ?MAX_SETTING + 1]},
		{qpack_encoder_max_table_capacity, [0, 4096], [-1, infinity]},
		{max_uni_streams, [3, 16, 1 bsl 60], [2, 0, (1 bsl 60) + 1]},
		{quic_stream_receive_window, [1, 1250000, (1 bsl 62) - 1], [0, 1 bsl 62]},
		{quic_receive_window, [1, 15000000], [0, infinity]},
		{quic_send_window, [1, 15000000], [0, -1]},
		{alt_svc, [<<"h3=\":443\"; ma=86400">>, <<>>], [<<"h3\r\nx: y">>, "h3=\":443\"", 1]},
		{compress_threshold, [0, 300], [-1, infinity]},
		{compress_buffering, [true, false], [0, yes]},
		{decompress_enabled, [true, false], [0, yes]},
		{decompress_ratio_limit, [1, 20], [0, -1, infinity]},
		{metrics_callback, [Fun1], [Fun0, Fun2, undefined]},
		{metrics_req_filter, [Fun1], [Fun0, Fun2, undefined]},
		{metrics_resp_headers_filter, [Fun1], [Fun0, Fun2, undefined]},
		{tracer_callback, [Fun2], [Fun1, undefined]},
		{tracer_match_specs, [[], [{method, <<"GET">>}, Fun1]], [[a | b], undefined]},
		{tracer_flags, [[], [send, 'receive', set_on_spawn]], [[{tracer, self()}], [send | x],
			send]},
		{access_log_format, [common, combined, json], [<<"common">>, apache]},
		{access_log_peer, [socket, proxy_header], [peer, <<"socket">>, undefined]}
	].

%% Protocol options that have no default.
no_default_keys() ->
	[metrics_callback, metrics_req_filter, metrics_resp_headers_filter,
		tracer_callback, tracer_match_specs, tracer_flags, alt_svc].

websocket_table() ->
	Fun1 = fun(_) -> ok end,
	[
		{idle_timeout, [0, ?MAX_MS, infinity], [-1, ?MAX_MS + 1, undefined]},
		{hibernate_after, [1, 1000, ?MAX_MS, infinity], [0, -1, ?MAX_MS + 1, undefined]},
		{max_frame_size, [0, 1048576, infinity], [-1, 1.0, undefined]},
		{compress, [true, false], [1, yes]},
		{deflate_opts, [#{}, #{level => 0}, #{level => 9}, #{level => best_speed},
				#{level => none, mem_level => 1, strategy => rle},
				#{mem_level => 9, strategy => huffman_only},
				#{server_context_takeover => no_takeover, client_context_takeover => takeover},
				#{server_max_window_bits => 8, client_max_window_bits => 15}],
			[[], #{level => 10}, #{level => -1}, #{level => fast}, #{mem_level => 0},
				#{mem_level => 10}, #{strategy => fixed},
				#{server_context_takeover => true}, #{client_context_takeover => false},
				#{server_max_window_bits => 7}, #{server_max_window_bits => 16},
				#{client_max_window_bits => 7}, #{client_max_window_bits => 16},
				#{window_bits => 15}]},
		{validate_utf8, [true, false], [1, yes]},
		{active_n, [1, 32767], [0, 32768]},
		{req_filter, [Fun1], [fun() -> ok end, #{}]},
		{close_timeout, [0, 3000, ?MAX_MS, infinity], [-1, ?MAX_MS + 1, undefined]},
		{min_recv_rate, [off, {1, 1}, {1024, 30000}], [on, {0, 1000}, {1024, 0}, 1024]}
	].

%% The defaults the Websocket process uses (mustang_websocket), as the
%% README must show them.
websocket_defaults() ->
	#{idle_timeout => 60000, hibernate_after => 1000, max_frame_size => 1048576, compress => false,
		deflate_opts => #{}, validate_utf8 => true, close_timeout => 3000,
		min_recv_rate => {1024, 30000}}.

%% Every key alone, with each valid and each invalid value.
protocol_values_test_() ->
	values_tests(protocol_table(), fun ?M:validate/1, invalid_protocol_option).

websocket_values_test_() ->
	values_tests(websocket_table(), fun ?M:validate_websocket/1, invalid_websocket_option).

values_tests(Table, Validate, InvalidTag) ->
	[{lists:flatten(io_lib:format("~p => ~0p", [Key, Value])),
		?_assertEqual(Expected, Validate(#{Key => Value}))}
		|| {Key, Valids, Invalids} <- Table,
			{Value, Expected} <- [{V, ok} || V <- Valids]
				++ [{V, {error, {InvalidTag, Key, V}}} || V <- Invalids]].

%% A key added to the defaults of a connection module without a rule here
%% fails this test (validate/1 refuses it as unknown).
connection_defaults_have_rules_test_() ->
	Defaults = lists:append([maps:to_list(mustang_http1:defaults()),
		maps:to_list(mustang_http1_codec:default_limits()),
		maps:to_list(mustang_http2:defaults()), maps:to_list(mustang_http3:defaults())]),
	[{atom_to_list(Key), ?_assertEqual(ok, ?M:validate(#{Key => Value}))}
		|| {Key, Value} <- Defaults].

%% The table of this module covers every option, so each has its invalid
%% values tested.
table_covers_every_option_test() ->
	TableKeys = lists:sort([Key || {Key, _, _} <- protocol_table()]),
	?assertEqual(TableKeys, lists:usort(maps:keys(?M:defaults()) ++ no_default_keys())).

defaults_test() ->
	Defaults = ?M:defaults(),
	?assertEqual(ok, ?M:validate(Defaults)),
	?assertEqual([mustang_stream_h], maps:get(stream_handlers, Defaults)),
	?assertEqual(300, maps:get(compress_threshold, Defaults)),
	?assertEqual(false, maps:get(compress_buffering, Defaults)),
	?assertEqual(true, maps:get(decompress_enabled, Defaults)),
	?assertEqual(20, maps:get(decompress_ratio_limit, Defaults)),
	?assertEqual(common, maps:get(access_log_format, Defaults)),
	%% The connection modules' own defaults are what defaults/0 gives.
	?assertEqual(1000, maps:get(linger_timeout, Defaults)),
	?assertEqual(16384, maps:get(max_frame_size_received, Defaults)),
	?assertEqual(8000, maps:get(max_request_line_length, Defaults)),
	[?assertNot(maps:is_key(Key, Defaults)) || Key <- no_default_keys()].

websocket_defaults_valid_test() ->
	?assertEqual(ok, ?M:validate_websocket(websocket_defaults())).

errors_test_() ->
	[
		?_assertEqual(ok, ?M:validate(#{})),
		?_assertEqual(ok, ?M:validate_websocket(#{})),
		?_assertEqual({error, {unknown_protocol_options, [max_header]}},
			?M:validate(#{max_header => 1})),
		%% All unknown keys at once, in term order; they win over invalid values.
		?_assertEqual({error, {unknown_protocol_options, [foo, zeta, <<"port">>]}},
			?M:validate(#{zeta => 1, foo => 2, active_n => 0, <<"port">> => 1})),
		%% Websocket options are not protocol options, and the other way round.
		?_assertEqual({error, {unknown_protocol_options, [close_timeout]}},
			?M:validate(#{close_timeout => 1000})),
		?_assertEqual({error, {unknown_websocket_options, [max_headers]}},
			?M:validate_websocket(#{max_headers => 1})),
		?_assertEqual({error, {unknown_websocket_options, [foo, port]}},
			?M:validate_websocket(#{port => 1, foo => 2, idle_timeout => -1})),
		%% Several invalid values: the one of the smallest key.
		?_assertEqual({error, {invalid_protocol_option, active_n, 0}},
			?M:validate(#{request_process => yes, active_n => 0})),
		?_assertEqual({error, {invalid_websocket_option, compress, 1}},
			?M:validate_websocket(#{idle_timeout => -1, compress => 1})),
		?_assertEqual({error, {badarg, options_must_be_maps}}, ?M:validate([{active_n, 1}])),
		?_assertEqual({error, {badarg, options_must_be_maps}}, ?M:validate_websocket([]))
	].

%% README: every option appears in its section, in a table row that shows
%% its default.
readme_test_() ->
	Readme = readme(),
	Options = section(Readme, <<"## Options\n">>, <<"### Websocket options\n">>),
	Websocket = section(Readme, <<"### Websocket options\n">>, <<"\n## ">>),
	Defaults = ?M:defaults(),
	[{"README protocol option " ++ atom_to_list(Key),
		?_assertEqual({Key, true}, {Key, documented(Options, Key, maps:find(Key, Defaults))})}
		|| {Key, _, _} <- protocol_table()]
	++ [{"README Websocket option " ++ atom_to_list(Key),
		?_assertEqual({Key, true},
			{Key, documented(Websocket, Key, maps:find(Key, websocket_defaults()))})}
		|| {Key, _, _} <- websocket_table()].

readme() ->
	Candidates = [filename:join([filename:dirname(?FILE), "..", "README.md"]), "README.md"],
	[Readme | _] = [Bin || Path <- Candidates, {ok, Bin} <- [file:read_file(Path)]],
	Readme.

section(Text, Start, End) ->
	{Pos, Len} = binary:match(Text, Start),
	Rest = binary:part(Text, Pos + Len, byte_size(Text) - Pos - Len),
	case binary:match(Rest, End) of
		{EndPos, _} -> binary:part(Rest, 0, EndPos);
		nomatch -> Rest
	end.

%% A table row naming the key (alone or beside another, "`a` / `b`") whose
%% default column, spaces and backquotes removed, holds the default.
documented(Section, Key, Default) ->
	Name = <<"`", (atom_to_binary(Key))/binary, "`">>,
	Rows = [Row || Row <- binary:split(Section, <<"\n">>, [global]),
		binary:match(Row, <<"| ", Name/binary>>) =/= nomatch],
	case {Rows, Default} of
		{[], _} ->
			false;
		{_, error} ->
			true;
		{_, {ok, Value}} ->
			Expected = iolist_to_binary(io_lib:format("~0p", [Value])),
			lists:any(fun(Row) ->
				[_, _, DefaultCol | _] = binary:split(Row, <<"|">>, [global]),
				binary:replace(DefaultCol, [<<" ">>, <<"`">>], <<>>, [global]) =:= Expected
			end, Rows)
	end.

%% The Websocket options are the same three times: the keys of
%% mustang_opts:websocket_opts() (which validate_websocket/1 knows), the rows
%% of README's Websocket table and the rows of the guide's Websocket page,
%% with the same defaults in both tables.
websocket_tables_agree_test() ->
	TypeKeys = websocket_type_keys(),
	[?assertEqual({Key, known}, {Key, known_websocket_option(Key)}) || Key <- TypeKeys],
	Readme = table_rows(section(readme(), <<"### Websocket options\n">>, <<"\n## ">>)),
	Guide = table_rows(section(guide(<<"websocket.md">>), <<"## Options\n">>, <<"\n## ">>)),
	%% Each table: the options of websocket_opts() it lacks, the rows that
	%% are no option.
	?assertEqual({readme, [], []}, {readme, TypeKeys -- maps:keys(Readme), maps:keys(Readme) -- TypeKeys}),
	?assertEqual({guide, [], []}, {guide, TypeKeys -- maps:keys(Guide), maps:keys(Guide) -- TypeKeys}),
	%% The default of each option, README's then the guide's.
	[?assertEqual({Key, maps:get(Key, Readme)}, {Key, maps:get(Key, Guide)}) || Key <- TypeKeys].

%% The keys of the map type websocket_opts(), from mustang_opts' abstract code.
websocket_type_keys() ->
	{ok, {_, [{abstract_code, {raw_abstract_v1, Forms}}]}} =
		beam_lib:chunks(code:which(?M), [abstract_code]),
	[{type, _, map, Assocs}] = [T || {attribute, _, type, {websocket_opts, T, []}} <- Forms],
	lists:sort([K || {type, _, map_field_assoc, [{atom, _, K}, _]} <- Assocs]).

known_websocket_option(Key) ->
	case ?M:validate_websocket(#{Key => '$not_a_valid_value'}) of
		{error, {unknown_websocket_options, _}} -> unknown;
		_ -> known
	end.

%% The rows of the Markdown tables of a section: #{Key => Default column},
%% the default without spaces and backquotes.
table_rows(Section) ->
	maps:from_list([begin
		[_, KeyCol, DefaultCol | _] = binary:split(Row, <<"|">>, [global]),
		{match, [Key]} = re:run(KeyCol, "^ *`([a-z_0-9]+)` *$", [{capture, all_but_first, binary}]),
		{binary_to_atom(Key), binary:replace(DefaultCol, [<<" ">>, <<"`">>], <<>>, [global])}
	end || Row <- binary:split(Section, <<"\n">>, [global]),
		re:run(Row, "^\\| `[a-z_0-9]+` \\|", [{capture, none}]) =:= match]).

guide(Page) ->
	Candidates = [filename:join([filename:dirname(?FILE), "..", "doc", "guide", Page]),
		filename:join(["doc", "guide", Page])],
	[Bin | _] = [B || Path <- Candidates, {ok, B} <- [file:read_file(Path)]],
	Bin.
