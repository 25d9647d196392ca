%% Tests for mustang_http2_headers: the connection-specific fields of
%% RFC 9113 8.2.2 are left out of every header list built for a response
%% (response/3, informational/2, trailer_fields/1), whatever the case of
%% their names; and a request's :authority (or host) with port 0 is
%% malformed.
-module(mustang_http2_headers_tests).

-include_lib("eunit/include/eunit.hrl").

-define(H, mustang_http2_headers).

%% Fields a handler written for HTTP/1.1 may set, mixed with end-to-end
%% ones (x-end-to-end): the handler of http2_SUITE's test sets the same.
hop(Headers) ->
	hop_headers_h:hop(Headers).

sorted(Fields) ->
	lists:sort([{N, iolist_to_binary(V)} || {N, V} <- Fields]).

strip_test_() ->
	[
		{"response/3 keeps :status, date and end-to-end fields only",
			?_assertEqual([{<<":status">>, <<"200">>}, {<<"content-type">>, <<"text/plain">>},
					{<<"date">>, <<"D">>}, {<<"x-end-to-end">>, <<"kept">>}],
				sorted(?H:response(200, hop(#{<<"content-type">> => <<"text/plain">>}), <<"D">>)))},
		{"informational/2 too",
			?_assertEqual([{<<":status">>, <<"103">>}, {<<"link">>, <<"</a>">>}, {<<"x-end-to-end">>, <<"kept">>}],
				sorted(?H:informational(103, hop(#{<<"link">> => <<"</a>">>}))))},
		{"trailer_fields/1 too",
			?_assertEqual([{<<"x-checksum">>, <<"abc">>}, {<<"x-end-to-end">>, <<"kept">>}],
				sorted(?H:trailer_fields(hop(#{<<"x-checksum">> => <<"abc">>}))))},
		{"a connection header given as iodata names fields too",
			?_assertEqual([{<<"x-kept">>, <<"k">>}],
				sorted(?H:trailer_fields(#{<<"connection">> => [<<"X-A">>, ", b"], <<"x-a">> => <<"1">>,
					<<"b">> => <<"2">>, <<"x-kept">> => <<"k">>})))},
		{"an unparsable connection header is dropped, the fields stay",
			?_assertEqual([{<<"x-a">>, <<"1">>}],
				sorted(?H:trailer_fields(#{<<"connection">> => <<"x-a;b">>, <<"x-a">> => <<"1">>})))},
		{"without connection-specific fields nothing changes, names are lowercased",
			?_assertEqual([{<<":status">>, <<"204">>}, {<<"date">>, <<"D">>}, {<<"x-a">>, <<"1">>}],
				sorted(?H:response(204, #{<<"X-A">> => <<"1">>}, <<"D">>)))},
		{"set-cookie values are still one field each",
			?_assertEqual([{<<":status">>, <<"200">>}, {<<"date">>, <<"D">>},
					{<<"set-cookie">>, <<"a=1">>}, {<<"set-cookie">>, <<"b=2">>}],
				sorted(?H:response(200, #{<<"set-cookie">> => [<<"a=1">>, <<"b=2">>],
					<<"connection">> => <<"close">>}, <<"D">>)))}
	].

request(Authority, Extra) ->
	?H:request([{<<":method">>, <<"GET">>}, {<<":scheme">>, <<"https">>}, {<<":path">>, <<"/">>}
		| [{<<":authority">>, Authority} || Authority =/= undefined] ++ Extra],
		#{enable_connect_protocol => false}).

authority_port_test_() ->
	[
		{":authority with port 0 is malformed (RFC 9110 4.2.1)",
			?_assertEqual({error, invalid_authority}, request(<<"localhost:0">>, []))},
		{"a host header with port 0 and no :authority is malformed",
			?_assertEqual({error, invalid_host}, request(undefined, [{<<"host">>, <<"localhost:0">>}]))},
		{"a host header with port 0 beside a valid :authority does not match it",
			?_assertEqual({error, host_authority_mismatch},
				request(<<"localhost">>, [{<<"host">>, <<"localhost:0">>}]))},
		{":authority with port 1",
			?_assertMatch({ok, #{host := <<"localhost">>, port := 1}}, request(<<"localhost:1">>, []))}
	].
