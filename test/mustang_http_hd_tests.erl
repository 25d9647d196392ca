-module(mustang_http_hd_tests).

-define(UNKNOWN, {error, {value_error, 400, sentence(unknown_header)}}).

-include_lib("proper/include/proper.hrl").
-include_lib("eunit/include/eunit.hrl").

%% Each table is {HeaderName, [{Value, Expected}], [ValueThatMustFail]}. Every case
%% goes through parse/2, and through the exported parse_* function of that field.

-define(HEADERS, [
	<<"accept">>, <<"accept-charset">>, <<"accept-encoding">>, <<"accept-language">>,
	<<"authorization">>, <<"connection">>, <<"content-encoding">>, <<"content-language">>,
	<<"content-length">>, <<"content-type">>, <<"cookie">>, <<"date">>, <<"expect">>,
	<<"expires">>, <<"host">>, <<"if-match">>, <<"if-modified-since">>,
	<<"if-none-match">>, <<"if-range">>, <<"if-unmodified-since">>, <<"last-modified">>,
	<<"max-forwards">>, <<"proxy-authorization">>, <<"range">>,
	<<"sec-websocket-extensions">>, <<"sec-websocket-protocol">>,
	<<"sec-websocket-version">>, <<"te">>, <<"trailer">>, <<"transfer-encoding">>,
	<<"upgrade">>, <<"vary">>, <<"x-forwarded-for">>,
	<<"access-control-request-headers">>, <<"access-control-request-method">>, <<"origin">>
]).

table_test_() ->
	[table(Name, Ok, Errors) || {Name, Ok, Errors} <- tables()].

table(Name, Ok, Errors) ->
	Fun = parse_fun(Name),
	Reason = error_reason(Name),
	{Name, [
		[{Value, ?_assertEqual({ok, Expected}, mustang_http_hd:parse(Name, Value))}
			|| {Value, Expected} <- Ok],
		[{Value, ?_assertEqual({ok, Expected}, mustang_http_hd:Fun(Value))}
			|| {Value, Expected} <- Ok],
		[{Value, ?_assertEqual({error, Reason}, mustang_http_hd:parse(Name, Value))}
			|| Value <- Errors]
	]}.

parse_fun(Name) ->
	Base = case Name of
		<<"expires">> -> <<"date">>;
		<<"if-modified-since">> -> <<"date">>;
		<<"if-unmodified-since">> -> <<"date">>;
		<<"last-modified">> -> <<"date">>;
		<<"proxy-authorization">> -> <<"authorization">>;
		_ -> Name
	end,
	binary_to_atom(<<"parse_", (underscore(Base))/binary>>).

error_reason(Name) ->
	Field = case parse_fun(Name) of
		parse_date -> invalid_date;
		parse_authorization -> invalid_authorization;
		Fun -> binary_to_atom(<<"invalid_", (binary:part(atom_to_binary(Fun), 6,
			byte_size(atom_to_binary(Fun)) - 6))/binary>>)
	end,
	{value_error, 400, sentence(Field)}.

%% The documented reason of each field (doc/internals/errors.md), written
%% out here so that a changed sentence is a failing test.
sentence(invalid_accept) ->
	'The accept header must be a list of media ranges. (RFC9110 12.5.1)';
sentence(invalid_accept_charset) ->
	'The accept-charset header must be a list of charsets with optional weights. (RFC9110 12.5.2)';
sentence(invalid_accept_encoding) ->
	'The accept-encoding header must be a list of codings with optional weights. (RFC9110 12.5.3)';
sentence(invalid_accept_language) ->
	'The accept-language header must be a list of language ranges with optional weights. (RFC9110 12.5.4)';
sentence(invalid_authorization) ->
	'The authorization header must be a scheme and valid credentials. (RFC9110 11.6.2)';
sentence(unsupported_auth_scheme) ->
	'Only the basic, bearer and digest authentication schemes are understood. (RFC9110 11.1)';
sentence(invalid_access_control_request_headers) ->
	'The access-control-request-headers header must be a list of field names. (RFC9110 5.6.1)';
sentence(invalid_access_control_request_method) ->
	'The access-control-request-method header must be a method token. (RFC9110 9.1)';
sentence(invalid_origin) ->
	'The origin header must be "null" or serialized origins separated by spaces. (RFC6454 7.1)';
sentence(invalid_connection) ->
	'The connection header must be a list of tokens. (RFC9110 7.6.1)';
sentence(invalid_content_encoding) ->
	'The content-encoding header must be a non-empty list of codings. (RFC9110 8.4)';
sentence(invalid_content_language) ->
	'The content-language header must be a non-empty list of language tags. (RFC9110 8.5)';
sentence(invalid_content_length) ->
	'The content-length header must be one non-negative decimal number. (RFC9110 8.6)';
sentence(invalid_content_type) ->
	'The content-type header must be a media type with optional parameters. (RFC9110 8.3)';
sentence(invalid_cookie) ->
	'The cookie header must be name=value pairs with token names and no control characters. (RFC6265 4.2.1)';
sentence(invalid_date) ->
	'A date must be an IMF-fixdate, an RFC 850 date or an asctime date. (RFC9110 5.6.7)';
sentence(invalid_expect) ->
	'The expect header must be 100-continue. (RFC9110 10.1.1)';
sentence(invalid_host) ->
	'The host header must be a uri-host with an optional port. (RFC9110 7.2)';
sentence(invalid_if_match) ->
	'The if-match header must be * or a list of entity tags. (RFC9110 13.1.1)';
sentence(invalid_if_none_match) ->
	'The if-none-match header must be * or a list of entity tags. (RFC9110 13.1.2)';
sentence(invalid_if_range) ->
	'The if-range header must be an entity tag or a date. (RFC9110 13.1.5)';
sentence(invalid_max_forwards) ->
	'The max-forwards header must be a non-negative decimal number. (RFC9110 7.6.2)';
sentence(invalid_range) ->
	'The range header must be a range unit and a list of ranges. (RFC9110 14.2)';
sentence(invalid_sec_websocket_extensions) ->
	'The sec-websocket-extensions header must be a non-empty list of extensions. (RFC6455 9.1)';
sentence(invalid_sec_websocket_protocol) ->
	'The sec-websocket-protocol header must be a non-empty list of tokens. (RFC6455 11.3.4)';
sentence(invalid_sec_websocket_version) ->
	'The sec-websocket-version header must be a number from 0 to 255. (RFC6455 11.3.5)';
sentence(invalid_te) ->
	'The te header must be a list of transfer codings with optional weights. (RFC9110 10.1.4)';
sentence(invalid_trailer) ->
	'The trailer header must be a non-empty list of field names. (RFC9110 6.6.2)';
sentence(invalid_transfer_encoding) ->
	'The transfer-encoding header must be a non-empty list of codings. (RFC9112 6.1)';
sentence(invalid_upgrade) ->
	'The upgrade header must be a non-empty list of protocols. (RFC9110 7.8)';
sentence(invalid_vary) ->
	'The vary header must be * or a list of field names. (RFC9110 12.5.5)';
sentence(invalid_x_forwarded_for) ->
	'The x-forwarded-for header must be a non-empty list of nodes. (RFC7239 6)';
sentence(unknown_header) ->
	'There is no parser for this header. (Mustang unknown_header)'.

underscore(Bin) ->
	<< <<(case C of $- -> $_; _ -> C end)>> || <<C>> <= Bin >>.

tables() ->
	Nov6 = {{1994, 11, 6}, {8, 49, 37}},
	[
		{<<"accept">>, [
			{<<>>, []},
			{<<"text/html">>, [{{<<"text">>, <<"html">>, []}, 1000, []}]},
			{<<"*/*">>, [{{<<"*">>, <<"*">>, []}, 1000, []}]},
			{<<"text/*">>, [{{<<"text">>, <<"*">>, []}, 1000, []}]},
			{<<"Text/HTML">>, [{{<<"text">>, <<"html">>, []}, 1000, []}]},
			{<<"text/html;q=0.5">>, [{{<<"text">>, <<"html">>, []}, 500, []}]},
			{<<"text/html ; Q=0.5">>, [{{<<"text">>, <<"html">>, []}, 500, []}]},
			{<<"text/html;q=0">>, [{{<<"text">>, <<"html">>, []}, 0, []}]},
			{<<"text/html;q=0.">>, [{{<<"text">>, <<"html">>, []}, 0, []}]},
			{<<"text/html;q=0.001">>, [{{<<"text">>, <<"html">>, []}, 1, []}]},
			{<<"text/html;q=0.999">>, [{{<<"text">>, <<"html">>, []}, 999, []}]},
			{<<"text/html;q=0.05">>, [{{<<"text">>, <<"html">>, []}, 50, []}]},
			{<<"text/html;q=1">>, [{{<<"text">>, <<"html">>, []}, 1000, []}]},
			{<<"text/html;q=1.">>, [{{<<"text">>, <<"html">>, []}, 1000, []}]},
			{<<"text/html;q=1.000">>, [{{<<"text">>, <<"html">>, []}, 1000, []}]},
			{<<"text/html;level=1;q=0.7;ext=\"a b\";flag">>,
				[{{<<"text">>, <<"html">>, [{<<"level">>, <<"1">>}]}, 700,
					[{<<"ext">>, <<"a b">>}, <<"flag">>]}]},
			{<<"text/plain; charset=UTF-8">>,
				[{{<<"text">>, <<"plain">>, [{<<"charset">>, <<"utf-8">>}]}, 1000, []}]},
			%% RFC 9110 12.5.1 examples.
			{<<"audio/*; q=0.2, audio/basic">>, [
				{{<<"audio">>, <<"*">>, []}, 200, []},
				{{<<"audio">>, <<"basic">>, []}, 1000, []}]},
			{<<"text/*, text/plain, text/plain;format=flowed, */*">>, [
				{{<<"text">>, <<"*">>, []}, 1000, []},
				{{<<"text">>, <<"plain">>, []}, 1000, []},
				{{<<"text">>, <<"plain">>, [{<<"format">>, <<"flowed">>}]}, 1000, []},
				{{<<"*">>, <<"*">>, []}, 1000, []}]},
			{<<" , text/html ,, image/png;q=0.9 , ">>, [
				{{<<"text">>, <<"html">>, []}, 1000, []},
				{{<<"image">>, <<"png">>, []}, 900, []}]},
			{<<"text/html;;a=b;">>, [{{<<"text">>, <<"html">>, [{<<"a">>, <<"b">>}]}, 1000, []}]},
			%% Empty parameters are allowed (RFC 9110 5.6.6), after the weight too.
			{<<"text/html;q=0.5;">>, [{{<<"text">>, <<"html">>, []}, 500, []}]}
		], [
			<<"text">>, <<"text/">>, <<"/html">>, <<"*/html">>, <<"text/html;q=2">>,
			<<"text/html;q=1.001">>, <<"text/html;q=0.0001">>, <<"text/html;q=-1">>,
			<<"text/html;q=">>, <<"text/html;q=\"0.5\"">>,
			<<"text/html;a">>, <<"text/html;a=">>, <<"text/html;a=\"b">>,
			<<"text/html;a =b">>, <<"text/html text/plain">>, <<"text/html;q=0.5 x">>,
			<<"text/html\r\n">>, <<"text/ht ml">>, <<"text/html;q=1.1">>,
			<<"text/plain; q=0.5, text/html,\r\n">>
		]},
		{<<"accept-charset">>, [
			{<<>>, []},
			{<<"utf-8">>, [{<<"utf-8">>, 1000}]},
			{<<"UTF-8, iso-8859-5;q=0.8, *;q=0.1">>,
				[{<<"utf-8">>, 1000}, {<<"iso-8859-5">>, 800}, {<<"*">>, 100}]},
			{<<"iso-8859-5 ; q=0">>, [{<<"iso-8859-5">>, 0}]}
		], [
			<<";q=1">>, <<"utf-8;q=2">>, <<"utf-8;level=1">>, <<"utf-8;q">>, <<"utf-8 x">>,
			<<"utf-8;">>, <<"\"utf-8\"">>
		]},
		{<<"accept-encoding">>, [
			{<<>>, []},
			{<<"   ">>, []},
			{<<"gzip">>, [{<<"gzip">>, 1000}]},
			{<<"compress, gzip">>, [{<<"compress">>, 1000}, {<<"gzip">>, 1000}]},
			{<<"*">>, [{<<"*">>, 1000}]},
			{<<"compress;q=0.5, gzip;q=1.0">>, [{<<"compress">>, 500}, {<<"gzip">>, 1000}]},
			{<<"GZIP;Q=1.0, identity; q=0.5, *;q=0">>,
				[{<<"gzip">>, 1000}, {<<"identity">>, 500}, {<<"*">>, 0}]}
		], [
			<<"gzip;q=1.1">>, <<"gzip;q=0.1234">>, <<"gzip/1">>, <<"gzip;v=1">>, <<"gzip deflate">>
		]},
		{<<"accept-language">>, [
			{<<>>, []},
			{<<"da, en-GB;q=0.8, en;q=0.7">>,
				[{<<"da">>, 1000}, {<<"en-gb">>, 800}, {<<"en">>, 700}]},
			{<<"*">>, [{<<"*">>, 1000}]},
			{<<"zh-Hant-TW">>, [{<<"zh-hant-tw">>, 1000}]},
			{<<"abcdefgh-12345678">>, [{<<"abcdefgh-12345678">>, 1000}]},
			{<<"de-1996;q=0.5">>, [{<<"de-1996">>, 500}]}
		], [
			<<"abcdefghi">>, <<"en-123456789">>, <<"en-">>, <<"-en">>, <<"en--gb">>,
			<<"1en">>, <<"*-en">>, <<"en_GB">>, <<"en;q=2">>
		]},
		{<<"authorization">>, [
			{<<"Basic dXNlcjpwYXNz">>, {basic, <<"user">>, <<"pass">>}},
			{<<"basic   dXNlcjpwYXNz  ">>, {basic, <<"user">>, <<"pass">>}},
			{<<"BASIC dXNlcjo=">>, {basic, <<"user">>, <<>>}},
			{<<"Basic OnBhc3M=">>, {basic, <<>>, <<"pass">>}},
			{<<"Basic dXNlcjpwOmE6c3M=">>, {basic, <<"user">>, <<"p:a:ss">>}},
			{<<"Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ==">>,
				{basic, <<"Aladdin">>, <<"open sesame">>}},
			{<<"Bearer mF_9.B5f-4.1JqM">>, {bearer, <<"mF_9.B5f-4.1JqM">>}},
			{<<"bearer abc/def+ghi~==">>, {bearer, <<"abc/def+ghi~==">>}},
			{<<"Digest username=\"Mufasa\", realm=\"http-auth@example.org\", "
					"uri=\"/dir/index.html\", Algorithm=MD5, nc=00000001, qop=auth">>,
				{digest, [{<<"username">>, <<"Mufasa">>},
					{<<"realm">>, <<"http-auth@example.org">>},
					{<<"uri">>, <<"/dir/index.html">>}, {<<"algorithm">>, <<"MD5">>},
					{<<"nc">>, <<"00000001">>}, {<<"qop">>, <<"auth">>}]}},
			{<<"Digest a = b ,c=\"d\\\"e\"">>,
				{digest, [{<<"a">>, <<"b">>}, {<<"c">>, <<"d\"e">>}]}}
		], [
			<<>>, <<"Basic">>, <<"Basic ">>, <<"Basic dXNlcjpwYXNz extra">>,
			<<"Basic dXNlcnBhc3M=">>, <<"Basic ####">>, <<"Basic dXNlcjpw-YXNz">>,
			<<"Basic=dXNlcjpwYXNz">>, <<"Basic\tdXNlcjpwYXNz">>, <<"Bearer">>,
			<<"Bearer a b">>, <<"Bearer =abc">>, <<"Bearer ab=c">>, <<"Digest">>,
			<<"Digest a">>, <<"Digest a=">>, <<"Digest a=\"b">>, <<"Digest a=b c=d">>,
			<<" Basic">>
		]},
		{<<"connection">>, [
			{<<"close">>, [<<"close">>]},
			{<<"Keep-Alive">>, [<<"keep-alive">>]},
			{<<"Upgrade, HTTP2-Settings">>, [<<"upgrade">>, <<"http2-settings">>]},
			{<<"a, , b">>, [<<"a">>, <<"b">>]},
			{<<",a,">>, [<<"a">>]},
			%% #connection-option: the list may be empty (RFC 9110 7.6.1, 5.6.1).
			{<<>>, []},
			{<<" ">>, []},
			{<<",">>, []},
			{<<" , , ">>, []}
		], [
			<<"a b">>, <<"a;b">>, <<"\"a\"">>, <<"a/b">>, <<"a=b">>, <<"a,@">>, <<"a\tb">>,
			<<"a", 0>>, <<"caf", 233>>
		]},
		{<<"content-encoding">>, [
			{<<"gzip">>, [<<"gzip">>]},
			{<<"GZip, br">>, [<<"gzip">>, <<"br">>]}
		], [
			<<>>, <<"gzip;q=1">>, <<"gzip br">>
		]},
		{<<"content-language">>, [
			{<<"en">>, [<<"en">>]},
			{<<"mi, EN">>, [<<"mi">>, <<"en">>]},
			{<<"en-US">>, [<<"en-us">>]}
		], [
			<<>>, <<"*">>, <<"en;q=1">>, <<"abcdefghi">>
		]},
		{<<"content-length">>, [
			{<<"0">>, 0},
			{<<"5">>, 5},
			{<<"007">>, 7},
			{<<" 42 ">>, 42},
			{<<"5, 5">>, 5},
			{<<"5,5,5">>, 5},
			{<<"18446744073709551615">>, 18446744073709551615}
		], [
			<<>>, <<" ">>, <<"-1">>, <<"+1">>, <<"1.0">>, <<"1e3">>, <<"0x10">>, <<"5, 6">>,
			<<"5,">>, <<",5">>, <<"5,,5">>, <<"5 5">>, <<"5;">>, <<"abc">>,
			<<"18446744073709551616">>, <<"99999999999999999999999999">>
		]},
		{<<"content-type">>, [
			{<<"text/html">>, {<<"text">>, <<"html">>, []}},
			{<<"Text/HTML;Charset=\"UTF-8\"">>,
				{<<"text">>, <<"html">>, [{<<"charset">>, <<"utf-8">>}]}},
			{<<"text/html; charset=utf-8">>,
				{<<"text">>, <<"html">>, [{<<"charset">>, <<"utf-8">>}]}},
			{<<"text/html ;charset=UTF-8">>,
				{<<"text">>, <<"html">>, [{<<"charset">>, <<"utf-8">>}]}},
			{<<"multipart/form-data; boundary=\"--a b\\\"c\\\\\"">>,
				{<<"multipart">>, <<"form-data">>, [{<<"boundary">>, <<"--a b\"c\\">>}]}},
			{<<"application/x-Foo; A=B; c=\"\"; d=\"caf", 233, "\"">>,
				{<<"application">>, <<"x-foo">>, [{<<"a">>, <<"B">>}, {<<"c">>, <<>>},
					{<<"d">>, <<"caf", 233>>}]}},
			{<<"text/plain;;a=1;">>, {<<"text">>, <<"plain">>, [{<<"a">>, <<"1">>}]}},
			{<<"text/plain;a=1;a=2">>,
				{<<"text">>, <<"plain">>, [{<<"a">>, <<"1">>}, {<<"a">>, <<"2">>}]}},
			{<<"  text/plain  ">>, {<<"text">>, <<"plain">>, []}}
		], [
			<<>>, <<"text">>, <<"text/">>, <<"/plain">>, <<"text /plain">>, <<"text/ plain">>,
			<<"text/plain/x">>, <<"text/plain, text/html">>, <<"text/plain; a">>,
			<<"text/plain; a=">>, <<"text/plain; a =b">>, <<"text/plain; a= b">>,
			<<"text/plain; a=\"b">>, <<"text/plain; a=\"b\\">>, <<"text/plain; a=b c">>,
			<<"text/plain; a=\"b\"c">>, <<"text/plain; a=\"", 0, "\"">>,
			<<"text/plain; a=\"\r\n\"">>, <<"text/pla\"in">>, <<"tex(t)/plain">>
		]},
		{<<"cookie">>, [
			{<<"a=b; c=d">>, [{<<"a">>, <<"b">>}, {<<"c">>, <<"d">>}]},
			{<<>>, []}
		], [
			<<"a">>, <<"=b">>
		]},
		{<<"date">>, [
			{<<"Sun, 06 Nov 1994 08:49:37 GMT">>, Nov6},
			{<<" Sun, 06 Nov 1994 08:49:37 GMT ">>, Nov6},
			{<<"Sunday, 06-Nov-94 08:49:37 GMT">>, Nov6},
			{<<"Sun Nov  6 08:49:37 1994">>, Nov6}
		], [
			<<>>, <<"Sun, 06 Nov 1994">>, <<"1994-11-06T08:49:37Z">>,
			<<"Sun, 31 Nov 1994 08:49:37 GMT">>
		]},
		{<<"expires">>, [{<<"Sun, 06 Nov 1994 08:49:37 GMT">>, Nov6}], [<<"0">>, <<"-1">>]},
		{<<"if-modified-since">>, [{<<"Sun, 06 Nov 1994 08:49:37 GMT">>, Nov6}], [<<"x">>]},
		{<<"if-unmodified-since">>, [{<<"Sun, 06 Nov 1994 08:49:37 GMT">>, Nov6}], [<<"x">>]},
		{<<"last-modified">>, [{<<"Sun, 06 Nov 1994 08:49:37 GMT">>, Nov6}], [<<"x">>]},
		{<<"expect">>, [
			{<<"100-continue">>, continue},
			{<<"100-Continue">>, continue},
			{<<" 100-CONTINUE ">>, continue}
		], [
			<<>>, <<"100">>, <<"200-continue">>, <<"100-continue, foo">>, <<"100-continued">>,
			<<"100 continue">>
		]},
		{<<"host">>, [
			{<<>>, {<<>>, undefined}},
			{<<"example.org">>, {<<"example.org">>, undefined}},
			{<<"Example.ORG">>, {<<"example.org">>, undefined}},
			{<<"example.org:8080">>, {<<"example.org">>, 8080}},
			{<<"example.org:">>, {<<"example.org">>, undefined}},
			{<<"example.org:65535">>, {<<"example.org">>, 65535}},
			{<<"example.org:00080">>, {<<"example.org">>, 80}},
			{<<"127.0.0.1:80">>, {<<"127.0.0.1">>, 80}},
			{<<"[::1]">>, {<<"[::1]">>, undefined}},
			{<<"[::1]:8080">>, {<<"[::1]">>, 8080}},
			{<<"[::1]:">>, {<<"[::1]">>, undefined}},
			{<<"[2001:DB8::A]:443">>, {<<"[2001:db8::a]">>, 443}},
			{<<"[::ffff:192.0.2.1]">>, {<<"[::ffff:192.0.2.1]">>, undefined}},
			{<<"[1:2:3:4:5:6:7:8]">>, {<<"[1:2:3:4:5:6:7:8]">>, undefined}},
			{<<"[v1.fe80::a+en1]">>, {<<"[v1.fe80::a+en1]">>, undefined}},
			{<<"my_host-1.example~">>, {<<"my_host-1.example~">>, undefined}},
			{<<"a%2Db.example">>, {<<"a%2db.example">>, undefined}},
			{<<"!$&'()*+,;=">>, {<<"!$&'()*+,;=">>, undefined}},
			{<<":80">>, {<<>>, 80}},
			{<<" example.org ">>, {<<"example.org">>, undefined}}
		], [
			<<"example.org:65536">>, <<"example.org:99999999999999999999999">>,
			%% Port 0 names no port a client can reach.
			<<"example.org:0">>, <<"example.org:00000">>, <<"[::1]:0">>,
			<<"example.org:-1">>, <<"example.org:8o">>, <<"example.org:80:80">>,
			<<"example.org/">>, <<"user@example.org">>, <<"exa mple.org">>,
			<<"example.org\r\n">>, <<"a%2">>, <<"a%zz">>, <<"[::1">>, <<"::1">>,
			<<"[::1]x">>, <<"[::1]:65536">>, <<"[1::2::3]">>,
			<<"[fe80::1%eth0]">>, <<"[fe80::1%25eth0]">>, <<"[1:2:3:4:5:6:7:8:9]">>,
			<<"[example.org]">>, <<"[]">>, <<"[v1.]">>, <<"[v.a]">>, <<"[vx.a]">>,
			<<"[v1.a/b]">>, <<"exam", 200, "ple">>, <<"[", 0, "]">>
		]},
		{<<"if-match">>, [
			{<<"*">>, '*'},
			{<<" * ">>, '*'},
			{<<>>, []},
			{<<"\"xyzzy\"">>, [{strong, <<"xyzzy">>}]},
			{<<"\"xyzzy\", \"r2d2xxxx\", \"c3piozzzz\"">>,
				[{strong, <<"xyzzy">>}, {strong, <<"r2d2xxxx">>}, {strong, <<"c3piozzzz">>}]},
			{<<"W/\"xyzzy\", \"\"">>, [{weak, <<"xyzzy">>}, {strong, <<>>}]},
			{<<"\"a,b\"">>, [{strong, <<"a,b">>}]},
			{<<"\"", 128, 255, "\"">>, [{strong, <<128, 255>>}]}
		], [
			<<"xyzzy">>, <<"\"xyzzy">>, <<"w/\"xyzzy\"">>, <<"W/xyzzy">>, <<"W/ \"a\"">>,
			<<"*, \"a\"">>, <<"\"a\" \"b\"">>, <<"\"a b\"">>, <<"\"a\tb\"">>,
			<<"\"a", 127, "\"">>, <<"**">>
		]},
		{<<"if-none-match">>, [
			{<<"*">>, '*'},
			{<<"W/\"xyzzy\", W/\"r2d2xxxx\"">>, [{weak, <<"xyzzy">>}, {weak, <<"r2d2xxxx">>}]}
		], [
			<<"xyzzy">>, <<"\"a\"b">>
		]},
		{<<"if-range">>, [
			{<<"\"xyzzy\"">>, {strong, <<"xyzzy">>}},
			{<<"W/\"xyzzy\"">>, {weak, <<"xyzzy">>}},
			{<<"Sun, 06 Nov 1994 08:49:37 GMT">>, Nov6}
		], [
			<<>>, <<"*">>, <<"\"a\", \"b\"">>, <<"xyzzy">>, <<"Sun, 06 Nov 1994">>
		]},
		{<<"max-forwards">>, [
			{<<"0">>, 0},
			{<<"10">>, 10}
		], [
			<<>>, <<"-1">>, <<"1, 1">>, <<"ten">>
		]},
		{<<"proxy-authorization">>, [
			{<<"Basic dXNlcjpwYXNz">>, {basic, <<"user">>, <<"pass">>}}
		], [
			<<"Basic">>
		]},
		{<<"range">>, [
			{<<"bytes=0-499">>, {bytes, [{0, 499}]}},
			{<<"bytes=0-0">>, {bytes, [{0, 0}]}},
			{<<"Bytes=500-999">>, {bytes, [{500, 999}]}},
			{<<"bytes=-500">>, {bytes, [-500]}},
			{<<"bytes=-0">>, {bytes, [0]}},
			{<<"bytes=9500-">>, {bytes, [{9500, infinity}]}},
			{<<"bytes=0-0,-1">>, {bytes, [{0, 0}, -1]}},
			{<<"bytes= 0-999, 4500-5499, -1000">>,
				{bytes, [{0, 999}, {4500, 5499}, -1000]}},
			{<<"bytes=500-600,601-999,">>, {bytes, [{500, 600}, {601, 999}]}},
			{<<"bytes=0-18446744073709551615">>, {bytes, [{0, 18446744073709551615}]}},
			{<<"items=0-5">>, {<<"items">>, <<"0-5">>}},
			{<<"Other=a, b">>, {<<"other">>, <<"a, b">>}}
		], [
			<<>>, <<"bytes">>, <<"bytes=">>, <<"bytes=,">>, <<"bytes=-">>, <<"bytes=a-b">>,
			<<"bytes=5-4">>, <<"bytes=1-2-3">>, <<"bytes=--1">>, <<"bytes =0-1">>,
			<<"bytes= 0 - 1">>, <<"bytes=0-1;">>, <<"bytes=0-18446744073709551616">>,
			<<"=0-1">>, <<"items=">>, <<"items=a b">>, <<"items=", 0>>
		]},
		{<<"sec-websocket-extensions">>, [
			{<<"foo">>, [{<<"foo">>, []}]},
			{<<"permessage-deflate; client_max_window_bits; server_max_window_bits=10">>,
				[{<<"permessage-deflate">>, [<<"client_max_window_bits">>,
					{<<"server_max_window_bits">>, <<"10">>}]}]},
			{<<"mux; max-channels=4; flow-control, deflate-stream">>,
				[{<<"mux">>, [{<<"max-channels">>, <<"4">>}, <<"flow-control">>]},
					{<<"deflate-stream">>, []}]},
			{<<"x; a=\"b\"">>, [{<<"x">>, [{<<"a">>, <<"b">>}]}]}
		], [
			<<>>, <<";a">>, <<"x;">>, <<"x; a=">>, <<"x a">>, <<"x;=b">>
		]},
		{<<"sec-websocket-protocol">>, [
			{<<"chat">>, [<<"chat">>]},
			{<<"chat, superchat">>, [<<"chat">>, <<"superchat">>]},
			{<<"MQIsdp, v12.stomp">>, [<<"MQIsdp">>, <<"v12.stomp">>]}
		], [
			<<>>, <<"a b">>, <<"a/b">>, <<"\"chat\"">>
		]},
		{<<"sec-websocket-version">>, [
			{<<"13">>, 13},
			{<<"0">>, 0},
			{<<"8">>, 8},
			{<<"255">>, 255}
		], [
			<<>>, <<"256">>, <<"013">>, <<"00">>, <<"1000">>, <<"13, 8">>, <<"-1">>, <<"x">>
		]},
		{<<"te">>, [
			{<<>>, []},
			{<<"trailers">>, [{<<"trailers">>, 1000}]},
			{<<"Trailers, deflate;q=0.5">>, [{<<"trailers">>, 1000}, {<<"deflate">>, 500}]},
			{<<"gzip;q=0.001, chunked">>, [{<<"gzip">>, 1}, {<<"chunked">>, 1000}]},
			{<<"foo;a=b;c = \"d\";q=0.2">>, [{<<"foo">>, 200}]}
		], [
			<<"trailers;q=0.5">>, <<"gzip;q=2">>, <<"gzip;q=0.5;a=b">>, <<"gzip;a">>,
			<<"gzip deflate">>
		]},
		{<<"trailer">>, [
			{<<"Expires">>, [<<"expires">>]},
			{<<"Server-Timing, ETag">>, [<<"server-timing">>, <<"etag">>]}
		], [
			<<>>, <<",">>, <<"a b">>, <<"a:">>
		]},
		{<<"transfer-encoding">>, [
			{<<"chunked">>, [<<"chunked">>]},
			{<<"Chunked">>, [<<"chunked">>]},
			{<<"gzip, chunked">>, [<<"gzip">>, <<"chunked">>]},
			{<<"gzip,, chunked">>, [<<"gzip">>, <<"chunked">>]}
		], [
			<<>>, <<" ">>, <<",">>, <<"chunked;a=b">>, <<"chunked, \"x\"">>, <<"chun ked">>,
			<<"chunked\r\n">>, <<"chunked", 0>>
		]},
		{<<"upgrade">>, [
			{<<"websocket">>, [<<"websocket">>]},
			{<<"WebSocket">>, [<<"websocket">>]},
			{<<"h2c">>, [<<"h2c">>]},
			{<<"HTTP/2.0, SHTTP/1.3, IRC/6.9, RTA/x11">>,
				[<<"http/2.0">>, <<"shttp/1.3">>, <<"irc/6.9">>, <<"rta/x11">>]}
		], [
			<<>>, <<"http/">>, <<"/2.0">>, <<"http/2/0">>, <<"a b">>
		]},
		{<<"vary">>, [
			{<<>>, []},
			{<<"*">>, [<<"*">>]},
			{<<"Accept-Encoding, Accept-Language">>,
				[<<"accept-encoding">>, <<"accept-language">>]}
		], [
			<<"a b">>, <<"a;b">>
		]},
		{<<"x-forwarded-for">>, [
			{<<"203.0.113.195">>, [<<"203.0.113.195">>]},
			{<<"203.0.113.195, 2001:db8:85a3:8d3:1319:8a2e:370:7348">>,
				[<<"203.0.113.195">>, <<"2001:db8:85a3:8d3:1319:8a2e:370:7348">>]},
			{<<"203.0.113.195,70.41.3.18, [2001:db8::1]:4711, unknown">>,
				[<<"203.0.113.195">>, <<"70.41.3.18">>, <<"[2001:db8::1]:4711">>, <<"unknown">>]}
		], [
			<<>>, <<", ,">>, <<"1.2.3.4 5.6.7.8">>, <<"1.2.3.4", 0>>
		]},
		{<<"access-control-request-headers">>, [
			{<<>>, []},
			{<<"Content-Type">>, [<<"content-type">>]},
			{<<"content-type, X-Custom-Header,authorization">>,
				[<<"content-type">>, <<"x-custom-header">>, <<"authorization">>]},
			{<<" , x-a , ">>, [<<"x-a">>]}
		], [
			<<"content type">>, <<"x-a;b">>, <<"x:y">>, <<"\"x\"">>, <<"x", 0>>
		]},
		{<<"access-control-request-method">>, [
			{<<"PUT">>, <<"PUT">>},
			{<<" delete ">>, <<"delete">>},
			{<<"X-CUSTOM">>, <<"X-CUSTOM">>}
		], [
			<<>>, <<"GET POST">>, <<"GET,POST">>, <<"G\"T">>, <<"GET", 0>>
		]},
		{<<"origin">>, [
			{<<"https://example.com">>, [{<<"https">>, <<"example.com">>, 443}]},
			{<<"HTTP://Example.COM:8080">>, [{<<"http">>, <<"example.com">>, 8080}]},
			{<<"http://[2001:db8::1]">>, [{<<"http">>, <<"[2001:db8::1]">>, 80}]},
			{<<"wss://a.b:1 chrome-extension://abcdef">>,
				[{<<"wss">>, <<"a.b">>, 1}, {<<"chrome-extension">>, <<"abcdef">>, undefined}]}
		], [
			<<>>, <<"Null">>, <<"example.com">>, <<"http://">>, <<"http://a:0">>,
			<<"http://a:65536">>, <<"http://a/path">>, <<"http://a  http://b">>, <<"1http://a">>,
			<<"ht tp://a">>, <<"http://a:b">>, <<"http://a", 0>>
		]}
	].

origin_null_test() ->
	%% As in Cowboy: a new reference, equal to no other origin.
	{ok, [Ref]} = mustang_http_hd:parse_origin(<<"null">>),
	true = is_reference(Ref),
	{ok, [Ref2]} = mustang_http_hd:parse(<<"origin">>, <<" null ">>),
	true = Ref =/= Ref2.

parse_unknown_test_() ->
	[
		?_assertEqual(?UNKNOWN, mustang_http_hd:parse(<<"x-unknown">>, <<"a">>)),
		?_assertEqual(?UNKNOWN,
			mustang_http_hd:parse(<<"Content-Length">>, <<"1">>)),
		?_assertEqual(?UNKNOWN, mustang_http_hd:parse(<<>>, <<>>))
	].

%% Authorization with an unknown scheme is valid but not understood.
parse_authorization_unsupported_test_() ->
	[?_assertEqual({error, {value_error, 400, sentence(unsupported_auth_scheme)}},
		mustang_http_hd:parse_authorization(V))
		|| V <- [<<"Negotiate abc">>, <<"Negotiate">>, <<"HOBA result=\"x\"">>]].

%% Properties.

%% Bytes that matter to header grammars, and any other byte.
header_chars() ->
	list(frequency([
		{10, oneof([$,, $;, $=, $", $\\, $/, $\s, $\t, $:, $[, $], $-, $*, $., $%])},
		{10, oneof([$a, $q, $Q, $0, $1, $5, $9, $W, $z])},
		{2, byte()}
	])).

prop_never_crashes() ->
	?FORALL({Name, Chars}, {elements(?HEADERS), header_chars()},
		is_result(Name, mustang_http_hd:parse(Name, list_to_binary(Chars)))).

prop_mutated_never_crashes() ->
	?FORALL({{Name, Value}, Pos, Byte}, {valid_sample(), non_neg_integer(), byte()},
		begin
			P = Pos rem byte_size(Value),
			<<Before:P/binary, _, After/binary>> = Value,
			is_result(Name, mustang_http_hd:parse(Name, <<Before/binary, Byte, After/binary>>))
		end).

prop_truncated_never_crashes() ->
	?FORALL({{Name, Value}, Pos}, {valid_sample(), non_neg_integer()},
		begin
			P = Pos rem byte_size(Value),
			<<Prefix:P/binary, _/binary>> = Value,
			is_result(Name, mustang_http_hd:parse(Name, Prefix))
		end).

valid_sample() ->
	elements([{Name, Value} || {Name, Ok, _} <- tables(), {Value, _} <- Ok, Value =/= <<>>]).

is_result(Name, {error, Reason}) ->
	Reason =:= error_reason(Name)
		orelse Reason =:= {value_error, 400, sentence(unsupported_auth_scheme)};
is_result(_, {ok, _}) ->
	true;
is_result(_, _) ->
	false.

%% Round trips: values written the way senders write them parse back.

tchar() ->
	oneof([range($a, $z), range($0, $9) | "!#$%&'*+-.^_`|~"]).

token() ->
	?LET(Chars, non_empty(list(tchar())), list_to_binary(Chars)).

upper_token() ->
	?LET(Chars, non_empty(list(oneof([range($A, $Z), tchar()]))), list_to_binary(Chars)).

qdtext() ->
	?LET(Chars, list(?SUCHTHAT(C, byte(), C =:= $\t orelse (C >= 16#20 andalso C =/= 16#7f))),
		list_to_binary(Chars)).

quote(Bin) ->
	<<$", << <<(case C of $" -> <<"\\\"">>; $\\ -> <<"\\\\">>; _ -> <<C>> end)/binary>>
		|| <<C>> <= Bin >>/binary, $">>.

lower(Bin) ->
	<< <<(case C >= $A andalso C =< $Z of true -> C + 32; false -> C end)>> || <<C>> <= Bin >>.

qvalue() ->
	range(0, 1000).

format_q(1000) -> <<"1">>;
format_q(Q) -> iolist_to_binary(io_lib:format("0.~3..0B", [Q])).

ows() ->
	elements([<<>>, <<" ">>, <<"\t">>, <<" \t ">>]).

param_value() ->
	oneof([{token, token()}, {quoted, qdtext()}]).

format_param_value({token, V}) -> V;
format_param_value({quoted, V}) -> quote(V).

raw_param_value({_, V}) -> V.

params() ->
	list({?SUCHTHAT(N, upper_token(), lower(N) =/= <<"q">> andalso lower(N) =/= <<"charset">>),
		param_value(), ows()}).

format_params(Params) ->
	[[Ows, $;, Ows, Name, $=, format_param_value(V)] || {Name, V, Ows} <- Params].

expected_params(Params) ->
	[{lower(Name), raw_param_value(V)} || {Name, V, _} <- Params].

prop_content_type_roundtrip() ->
	?FORALL({Type, SubType, Params}, {upper_token(), upper_token(), params()},
		begin
			Bin = iolist_to_binary([Type, $/, SubType, format_params(Params)]),
			mustang_http_hd:parse_content_type(Bin)
				=:= {ok, {lower(Type), lower(SubType), expected_params(Params)}}
		end).

prop_accept_roundtrip() ->
	?FORALL(Ranges, list({token(), token(), params(), oneof([default, qvalue()])}),
		begin
			Bin = iolist_to_binary(lists:join(<<", ">>, [
				[T, $/, S, format_params(P), case Q of
					default -> <<>>;
					_ -> [<<";q=">>, format_q(Q)]
				end] || {T, S, P, Q} <- Ranges])),
			Expected = [{{T, S, expected_params(P)}, case Q of default -> 1000; _ -> Q end, []}
				|| {T, S, P, Q} <- Ranges],
			%% */subtype is not a valid media range.
			Valid = [ok || {T, S, _, _} <- Ranges, T =:= <<"*">>, S =/= <<"*">>] =:= [],
			case Valid of
				true -> mustang_http_hd:parse_accept(Bin) =:= {ok, Expected};
				false -> mustang_http_hd:parse_accept(Bin) =:= {error, error_reason(<<"accept">>)}
			end
		end).

prop_accept_encoding_roundtrip() ->
	?FORALL(Codings, list({upper_token(), qvalue(), ows()}),
		begin
			Bin = iolist_to_binary(lists:join(<<",">>,
				[[Ows, C, Ows, $;, Ows, $q, $=, format_q(Q), Ows] || {C, Q, Ows} <- Codings])),
			mustang_http_hd:parse_accept_encoding(Bin)
				=:= {ok, [{lower(C), Q} || {C, Q, _} <- Codings]}
		end).

prop_token_list_roundtrip() ->
	?FORALL({Tokens, Sep}, {non_empty(list(upper_token())), elements([<<",">>, <<", ">>,
			<<" ,\t">>, <<",,">>, <<" , , ">>])},
		begin
			Bin = iolist_to_binary(lists:join(Sep, Tokens)),
			Expected = {ok, [lower(T) || T <- Tokens]},
			lists:all(fun(Name) -> mustang_http_hd:parse(Name, Bin) =:= Expected end,
				[<<"connection">>, <<"transfer-encoding">>, <<"trailer">>, <<"vary">>,
					<<"upgrade">>, <<"content-encoding">>])
		end).

prop_content_length_roundtrip() ->
	?FORALL({N, Count}, {oneof([range(0, 1000), non_neg_integer(), range(0, 1 bsl 64 - 1)]),
			range(1, 4)},
		begin
			Bin = iolist_to_binary(lists:join(<<", ">>,
				lists:duplicate(Count, integer_to_binary(N)))),
			mustang_http_hd:parse_content_length(Bin) =:= {ok, N}
		end).

prop_range_roundtrip() ->
	?FORALL(Specs, non_empty(list(oneof([
			?LET({A, B}, {non_neg_integer(), non_neg_integer()}, {A, A + B}),
			{non_neg_integer(), infinity},
			?LET(S, non_neg_integer(), -S)]))),
		begin
			Bin = iolist_to_binary([<<"bytes=">>, lists:join(<<", ">>, [case Spec of
				{F, infinity} -> [integer_to_binary(F), $-];
				{F, L} -> [integer_to_binary(F), $-, integer_to_binary(L)];
				S -> [$-, integer_to_binary(-S)]
			end || Spec <- Specs])]),
			mustang_http_hd:parse_range(Bin) =:= {ok, {bytes, Specs}}
		end).

etagc() ->
	?SUCHTHAT(C, byte(), C >= 16#21 andalso C =/= $" andalso C =/= 16#7f).

prop_etag_roundtrip() ->
	?FORALL(ETags, list({elements([weak, strong]), ?LET(L, list(etagc()), list_to_binary(L))}),
		begin
			Bin = iolist_to_binary(lists:join(<<", ">>, [case S of
				weak -> [<<"W/\"">>, T, $"];
				strong -> [$", T, $"]
			end || {S, T} <- ETags])),
			mustang_http_hd:parse_if_none_match(Bin) =:= {ok, ETags}
		end).

prop_basic_roundtrip() ->
	?FORALL({User, Password}, {?SUCHTHAT(U, binary(), binary:match(U, <<":">>) =:= nomatch),
			binary()},
		begin
			Bin = <<"Basic ", (base64:encode(<<User/binary, $:, Password/binary>>))/binary>>,
			mustang_http_hd:parse_authorization(Bin) =:= {ok, {basic, User, Password}}
		end).

prop_digest_roundtrip() ->
	?FORALL(Params, non_empty(list({upper_token(), param_value()})),
		begin
			Bin = iolist_to_binary([<<"Digest ">>, lists:join(<<", ">>,
				[[N, $=, format_param_value(V)] || {N, V} <- Params])]),
			mustang_http_hd:parse_authorization(Bin)
				=:= {ok, {digest, [{lower(N), raw_param_value(V)} || {N, V} <- Params]}}
		end).

reg_name() ->
	?LET(Chars, list(oneof([range($a, $z), range($A, $Z), range($0, $9) | "-._~!$&'()*+,;="])),
		list_to_binary(Chars)).

prop_host_roundtrip() ->
	?FORALL({Host, Port}, {oneof([reg_name(), ipv6()]), oneof([undefined, range(1, 65535)])},
		begin
			Bin = case Port of
				undefined -> Host;
				_ -> <<Host/binary, $:, (integer_to_binary(Port))/binary>>
			end,
			mustang_http_hd:parse_host(Bin) =:= {ok, {lower(Host), Port}}
		end).

%% Link-local addresses (fe80::/10) left out: inet:ntoa/1 writes
%% {16#fe80, 1, 0, 0, 0, 0, 0, 0} as "fe80::%01" (the second group taken for
%% a scope id), which is no URI host (RFC 3986 3.2.2).
ipv6() ->
	?LET([First | Groups], vector(8, range(0, 65535)),
		begin
			First2 = case First band 16#ffc0 of
				16#fe80 -> 16#2001;
				_ -> First
			end,
			list_to_binary([$[, inet:ntoa(list_to_tuple([First2 | Groups])), $]])
		end).

prop_sec_websocket_extensions_roundtrip() ->
	?FORALL(Exts, non_empty(list({upper_token(), list({upper_token(),
			oneof([none, param_value()])})})),
		begin
			Bin = iolist_to_binary(lists:join(<<", ">>, [[Ext, [case V of
				none -> [<<"; ">>, K];
				_ -> [<<"; ">>, K, $=, format_param_value(V)]
			end || {K, V} <- Params]] || {Ext, Params} <- Exts])),
			Expected = [{Ext, [case V of none -> K; _ -> {K, raw_param_value(V)} end
				|| {K, V} <- Params]} || {Ext, Params} <- Exts],
			mustang_http_hd:parse_sec_websocket_extensions(Bin) =:= {ok, Expected}
		end).

prop_origin_roundtrip() ->
	?FORALL(Origins, non_empty(list({scheme(), oneof([reg_name1(), ipv6()]),
			oneof([undefined, range(1, 65535)])})),
		begin
			Bin = iolist_to_binary(lists:join(<<" ">>, [[S, <<"://">>, H, case P of
				undefined -> <<>>;
				_ -> [$:, integer_to_binary(P)]
			end] || {S, H, P} <- Origins])),
			Expected = [{lower(S), lower(H), case P of
				undefined -> default_port(lower(S));
				_ -> P
			end} || {S, H, P} <- Origins],
			mustang_http_hd:parse_origin(Bin) =:= {ok, Expected}
		end).

scheme() ->
	?LET({C, Cs}, {oneof([range($a, $z), range($A, $Z)]),
			list(oneof([range($a, $z), range($A, $Z), range($0, $9), $+, $-, $.]))},
		oneof([<<"http">>, <<"https">>, <<"HTTPS">>, <<"ws">>, <<"wss">>, list_to_binary([C | Cs])])).

reg_name1() ->
	?LET(Chars, non_empty(list(oneof([range($a, $z), range($A, $Z), range($0, $9) | "-._~!$&'()*+,;="]))),
		list_to_binary(Chars)).

default_port(<<"http">>) -> 80;
default_port(<<"ws">>) -> 80;
default_port(<<"https">>) -> 443;
default_port(<<"wss">>) -> 443;
default_port(_) -> undefined.

prop_access_control_request_headers_roundtrip() ->
	?FORALL({Names, Sep}, {list(upper_token()), elements([<<",">>, <<", ">>, <<" ,\t">>])},
		mustang_http_hd:parse_access_control_request_headers(iolist_to_binary(lists:join(Sep, Names)))
			=:= {ok, [lower(N) || N <- Names]}).

prop_access_control_request_method_roundtrip() ->
	?FORALL(Method, upper_token(),
		mustang_http_hd:parse_access_control_request_method(<<" ", Method/binary, " ">>)
			=:= {ok, Method}).

properties_test_() ->
	Props = [
		prop_origin_roundtrip(),
		prop_access_control_request_headers_roundtrip(),
		prop_access_control_request_method_roundtrip(),
		prop_never_crashes(),
		prop_mutated_never_crashes(),
		prop_truncated_never_crashes(),
		prop_content_type_roundtrip(),
		prop_accept_roundtrip(),
		prop_accept_encoding_roundtrip(),
		prop_token_list_roundtrip(),
		prop_content_length_roundtrip(),
		prop_range_roundtrip(),
		prop_etag_roundtrip(),
		prop_basic_roundtrip(),
		prop_digest_roundtrip(),
		prop_host_roundtrip(),
		prop_sec_websocket_extensions_roundtrip()
	],
	%% One timeout per property: all of them under one timeout ran out on a
	%% loaded machine.
	[{timeout, 120, ?_assert(proper:quickcheck(P, [{numtests, 500}, {to_file, user}]))}
		|| P <- Props].
