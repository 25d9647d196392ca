%% Tests for mustang_http2_headers: a request's :authority (or host) with
%% port 0 is malformed.
-module(mustang_http2_headers_tests).

-include_lib("eunit/include/eunit.hrl").

-define(H, mustang_http2_headers).

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
