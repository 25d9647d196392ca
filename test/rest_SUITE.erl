%% mustang_rest: the REST decision flow, one test per node of the
%% flowcharts in doc/guide/rest/ (the test is named after its node; where a
%% node has several exits, the test checks each of them), through real
%% requests in the four groups of mustang_test (inline, process, h2c, h2).
%% The handlers are test/handlers/rest_h (every callback answers what the
%% route's options say, or its documented default), rest_full_h (rest_h
%% plus the four callbacks whose absence skips a step) and rest_hello_h
%% (nothing but init/2 and to_html/2: the defaults themselves).
%%
%% real_clients checks negotiation, conditional and range requests with
%% curl over HTTP/1.1 and with httpx over HTTP/2 (inline group only: they
%% open their own connections).
-module(rest_SUITE).
-compile([export_all, nowarn_export_all]).

-include_lib("common_test/include/ct.hrl").
-include_lib("stdlib/include/assert.hrl").

-import(mustang_test, [header/2, doc/1]).

suite() ->
	[{timetrap, {seconds, 60}}].

all() ->
	mustang_test:common_all(all) ++ [{group, real_clients}].

groups() ->
	mustang_test:common_groups(all, tests()) ++ [{real_clients, [], [curl_negotiation,
		curl_conditional, curl_ranges, httpx_http2]}].

tests() ->
	[
		%% Start.
		defaults,
		service_available,
		known_methods,
		uri_too_long,
		allowed_methods,
		malformed_request,
		is_authorized,
		forbidden,
		rate_limited,
		rate_limited_date,
		valid_content_headers,
		valid_entity_length,
		%% OPTIONS.
		options_default,
		options,
		%% Content negotiation.
		content_types_provided_none,
		content_types_provided_no_accept,
		accept_media_type,
		accept_wildcards,
		accept_q_zero,
		accept_params,
		accept_charset_param,
		accept_invalid,
		languages_provided,
		languages_provided_no_header,
		languages_provided_none,
		charsets_provided,
		charsets_provided_no_header,
		charsets_provided_none,
		ranges_provided,
		variances,
		%% Resource missing.
		resource_exists,
		previously_existed_moved_permanently,
		moved_temporarily,
		gone,
		allow_missing_post,
		if_match_must_not_exist,
		%% Conditional requests.
		if_match,
		if_match_weak,
		if_unmodified_since,
		if_none_match_get,
		if_none_match_put,
		if_none_match_star,
		if_modified_since,
		if_modified_since_future,
		generate_etag_called_once,
		%% GET and HEAD.
		get_resp_headers,
		head,
		multiple_choices,
		%% Ranges.
		range_satisfiable,
		range_satisfiable_max_len,
		range_callback_single,
		range_callback_multipart,
		range_auto_single,
		range_auto_multipart,
		range_auto_unsatisfiable,
		range_auto_sendfile,
		range_unit_not_provided,
		if_range,
		%% PUT, POST, PATCH.
		is_conflict,
		is_conflict_missing,
		content_types_accepted_no_content_type,
		content_types_accepted_no_match,
		accept_callback_false,
		accept_callback_true,
		accept_callback_created,
		accept_callback_see_other,
		accept_callback_true_uri,
		accept_callback_true_location,
		put_created,
		put_missing_moved_permanently,
		patch,
		%% DELETE.
		delete_resource,
		delete_completed,
		delete_has_resp_body,
		%% Any callback.
		stop,
		stop_with_reply,
		switch_handler,
		switch_handler_opts,
		terminate_normal,
		crash
	].

-define(HTML, {<<"text">>, <<"html">>, '*'}).
-define(JSON, {<<"application">>, <<"json">>, '*'}).
-define(TEXT, {<<"text">>, <<"plain">>, '*'}).
-define(DATE, {{2020, 1, 1}, {0, 0, 0}}).
-define(DATE_BIN, "Wed, 01 Jan 2020 00:00:00 GMT").

routes(Config) ->
	File = filename:join(?config(data_dir, Config), "ten_bytes.txt"),
	Body = fun(Req, S) -> {<<"<p>body</p>">>, Req, S} end,
	Text = fun(Req, S) -> {<<"0123456789">>, Req, S} end,
	ReadBody = fun(Result) ->
		fun(Req, S) ->
			{ok, _, Req2} = mustang_req:read_body(Req),
			{Result, Req2, S}
		end
	end,
	Accept = [{<<"text/plain">>, from_text}],
	Conneg = [{?HTML, to_html}, {?JSON, to_json}, {?TEXT, to_text}],
	Ranged = #{to_text => Text, content_types_provided => [{?TEXT, to_text}],
		ranges_provided => [{<<"bytes">>, ranged_bytes}]},
	Auto = Ranged#{ranges_provided => [{<<"bytes">>, auto}]},
	Conditional = #{to_html => Body, generate_etag => <<"\"v1\"">>, last_modified => ?DATE,
		allowed_methods => [<<"GET">>, <<"HEAD">>, <<"PUT">>],
		content_types_accepted => Accept, from_text => ReadBody(true)},
	R = fun(Name, Opts) -> {"/" ++ atom_to_list(Name), rest_h, Opts} end,
	F = fun(Name, Opts) -> {"/" ++ atom_to_list(Name), rest_full_h, Opts} end,
	Paths = [
		{"/defaults", rest_hello_h, []},
		R(service_available, #{service_available => false}),
		R(known_methods, #{known_methods => [<<"GET">>]}),
		R(uri_too_long, #{uri_too_long => true}),
		R(allowed_methods, #{allowed_methods => [<<"GET">>, <<"PUT">>]}),
		R(malformed_request, #{malformed_request => true}),
		R(is_authorized, #{is_authorized => {false, <<"Basic realm=\"mustang\"">>}}),
		R(forbidden, #{forbidden => true}),
		R(rate_limited, #{rate_limited => {true, 120}}),
		R(rate_limited_date, #{rate_limited => {true, ?DATE}}),
		R(valid_content_headers, #{valid_content_headers => false}),
		R(valid_entity_length, #{valid_entity_length => false}),
		R(options_default, #{allowed_methods => [<<"GET">>, <<"OPTIONS">>, <<"DELETE">>]}),
		F(options, #{options => fun(Req, S) ->
			{ok, mustang_req:set_resp_header(<<"x-options">>, <<"yes">>, Req), S} end}),
		R(content_types_provided_none, #{content_types_provided => []}),
		R(conneg, #{content_types_provided => Conneg, to_html => Body,
			to_json => fun(Req, S) -> {<<"{}">>, Req, S} end, to_text => Text}),
		R(accept_params, #{content_types_provided => [
			{{<<"text">>, <<"html">>, [{<<"level">>, <<"1">>}]}, to_html},
			{<<"text/plain;format=flowed">>, to_text}], to_html => Body, to_text => Text}),
		F(accept_charset_param, #{content_types_provided => [{?TEXT, to_text}], to_text => Text,
			charsets_provided => [<<"utf-8">>, <<"iso-8859-1">>], languages_provided => [<<"en">>],
			ranges_provided => []}),
		F(languages_provided, #{languages_provided => [<<"en">>, <<"fr-ca">>, <<"de">>],
			charsets_provided => [<<"utf-8">>], ranges_provided => [], to_html => Body}),
		F(charsets_provided, #{charsets_provided => [<<"utf-8">>, <<"iso-8859-1">>],
			languages_provided => [<<"en">>], ranges_provided => [], to_html => Body}),
		F(ranges_provided, #{ranges_provided => [{<<"bytes">>, auto}, {<<"pages">>, ranged_bytes}],
			languages_provided => [<<"en">>], charsets_provided => [<<"utf-8">>], to_html => Body}),
		F(languages_provided_none, #{languages_provided => [], to_html => Body}),
		F(charsets_provided_none, #{languages_provided => [<<"en">>], charsets_provided => [],
			to_html => Body}),
		F(ranges_provided_none, #{ranges_provided => [], languages_provided => [<<"en">>],
			charsets_provided => [<<"utf-8">>], to_html => Body}),
		F(variances, #{content_types_provided => Conneg, languages_provided => [<<"en">>, <<"fr">>],
			charsets_provided => [<<"utf-8">>, <<"iso-8859-1">>], ranges_provided => [],
			variances => [<<"x-custom">>], to_html => Body, to_json => Text, to_text => Text}),
		R(resource_exists, #{resource_exists => false,
			allowed_methods => [<<"GET">>, <<"POST">>, <<"DELETE">>]}),
		R(previously_existed, #{resource_exists => false, previously_existed => true,
			moved_permanently => {true, <<"/new_place">>}}),
		R(moved_temporarily, #{resource_exists => false, previously_existed => true,
			moved_temporarily => {true, <<"/elsewhere">>}}),
		R(gone, #{resource_exists => false, previously_existed => true,
			allowed_methods => [<<"GET">>, <<"POST">>]}),
		R(allow_missing_post, #{resource_exists => false, allowed_methods => [<<"POST">>],
			allow_missing_post => fun(Req, S) ->
				{mustang_req:header(<<"x-allow">>, Req) =:= <<"yes">>, Req, S} end,
			content_types_accepted => Accept, from_text => ReadBody({created, <<"/new">>})}),
		R(if_match_must_not_exist, #{resource_exists => false,
			allowed_methods => [<<"GET">>, <<"PUT">>], content_types_accepted => Accept,
			from_text => ReadBody(true)}),
		R(conditional, Conditional),
		R(conditional_weak, Conditional#{generate_etag => {weak, <<"v1">>}}),
		R(conditional_no_date, Conditional#{last_modified => undefined}),
		R(get_resp_headers, #{to_html => Body, generate_etag => {strong, <<"abc">>},
			last_modified => ?DATE, expires => {{2030, 6, 1}, {12, 0, 0}}}),
		R(expires_binary, #{to_html => Body, expires => <<"0">>}),
		R(multiple_choices, #{to_html => Body, multiple_choices => true}),
		F(range_satisfiable, Ranged#{range_satisfiable => false, languages_provided => [<<"en">>],
			charsets_provided => [<<"utf-8">>]}),
		F(range_satisfiable_max_len, Ranged#{range_satisfiable => {false, 10},
			languages_provided => [<<"en">>], charsets_provided => [<<"utf-8">>]}),
		F(range_callback, Ranged#{languages_provided => [<<"en">>], charsets_provided => [<<"utf-8">>],
			ranged_bytes => fun(Req = #{range := {<<"bytes">>, Ranges}}, S) ->
				{[{{From, To, 10}, binary:part(<<"0123456789">>, From, To - From + 1)}
					|| {From, To} <- Ranges], Req, S}
			end}),
		F(range_auto, Auto#{languages_provided => [<<"en">>], charsets_provided => [<<"utf-8">>],
			generate_etag => <<"\"r1\"">>, last_modified => ?DATE}),
		F(range_sendfile, Auto#{languages_provided => [<<"en">>], charsets_provided => [<<"utf-8">>],
			to_text => {sendfile, 2, 8, File}}),
		R(is_conflict, #{allowed_methods => [<<"PUT">>], is_conflict => true}),
		R(is_conflict_missing, #{allowed_methods => [<<"PUT">>], is_conflict => true,
			resource_exists => false}),
		R(accept_location, #{allowed_methods => [<<"POST">>], resource_exists => false,
			content_types_accepted => Accept, from_text => fun(Req, S) ->
				{ok, Data, Req2} = mustang_req:read_body(Req),
				case Data of
					<<"located">> ->
						{true, mustang_req:set_resp_header(<<"location">>, <<"/here">>, Req2), S};
					_ ->
						{true, Req2, S}
				end
			end}),
		R(gone_post, #{resource_exists => false, previously_existed => true,
			allowed_methods => [<<"POST">>], allow_missing_post => false}),
		R(accepted, #{allowed_methods => [<<"PUT">>, <<"POST">>, <<"PATCH">>],
			content_types_accepted => [{<<"text/plain">>, from_text},
				{{<<"application">>, <<"json">>, '*'}, from_json}],
			from_text => ReadBody(true), from_json => ReadBody(true)}),
		R(accept_false, #{allowed_methods => [<<"POST">>],
			content_types_accepted => Accept, from_text => ReadBody(false)}),
		R(accept_true_body, #{allowed_methods => [<<"POST">>], content_types_accepted => Accept,
			from_text => fun(Req, S) ->
				{ok, Data, Req2} = mustang_req:read_body(Req),
				{true, mustang_req:set_resp_body([<<"got ">>, Data], Req2), S}
			end}),
		R(accept_created, #{allowed_methods => [<<"POST">>],
			content_types_accepted => Accept, from_text => ReadBody({created, <<"/items/1">>})}),
		R(accept_see_other, #{allowed_methods => [<<"POST">>],
			content_types_accepted => Accept, from_text => ReadBody({see_other, <<"/items/2">>})}),
		R(accept_true_uri, #{allowed_methods => [<<"POST">>],
			resource_exists => fun(Req, S) ->
				{mustang_req:header(<<"x-exists">>, Req) =:= <<"yes">>, Req, S} end,
			content_types_accepted => Accept, from_text => ReadBody({true, <<"/items/3">>})}),
		R(put_created, #{allowed_methods => [<<"PUT">>], resource_exists => false,
			content_types_accepted => Accept, from_text => ReadBody(true)}),
		R(put_missing_moved, #{allowed_methods => [<<"PUT">>], resource_exists => false,
			moved_permanently => {true, <<"/moved">>}}),
		R(delete_resource, #{allowed_methods => [<<"DELETE">>]}),
		R(delete_resource_true, #{allowed_methods => [<<"DELETE">>], delete_resource => true}),
		R(delete_completed, #{allowed_methods => [<<"DELETE">>], delete_resource => true,
			delete_completed => false}),
		R(delete_has_resp_body, #{allowed_methods => [<<"DELETE">>],
			delete_resource => fun(Req, S) ->
				{true, mustang_req:set_resp_body(<<"deleted">>, Req), S} end}),
		R(stop, #{forbidden => fun(Req, S) -> {stop, Req, S} end}),
		R(stop_with_reply, #{resource_exists => fun(Req, S) ->
			{stop, mustang_req:reply(418, #{}, <<"teapot">>, Req), S} end}),
		R(switch_handler, #{malformed_request => {switch_handler, rest_switch_h}}),
		R(switch_handler_opts, #{to_html => {switch_handler, rest_switch_h, #{opt => 1}}}),
		R(terminate_normal, #{to_html => Body}),
		R(crash, #{forbidden => fun(_, _) -> error(crash_in_forbidden) end})
	],
	[{'_', Paths}].

init_per_suite(Config) ->
	{ok, _} = application:ensure_all_started(mustang),
	[{suite, ?MODULE} | Config].

end_per_suite(_) ->
	ok.

init_per_group(real_clients, Config) ->
	mustang_test:init_group(inline, Config, routes(Config), #{});
init_per_group(Group, Config) ->
	mustang_test:init_group(Group, Config, routes(Config), #{}).

end_per_group(_, Config) ->
	mustang_test:end_group(Config).

%% Helpers.

req(Config, Method, Path) ->
	req(Config, Method, Path, [], none).

req(Config, Method, Path, Headers) ->
	req(Config, Method, Path, Headers, none).

req(Config, Method, Path, Headers, Body) ->
	mustang_test:request(Config, Method, Path, Headers, Body).

status(Config, Method, Path, Headers) ->
	maps:get(status, req(Config, Method, Path, Headers)).

%% The request carries the test process's pid: rest_h reports the
%% callbacks it runs (rest_h notify/2).
pid_header() ->
	{"x-test-pid", pid_to_list(self())}.

%% The callbacks rest_h reported, in order; the handler ran in this node,
%% its messages arrived before the response was read.
called() ->
	receive {rest_h, Name} -> [Name | called()]
	after 0 -> []
	end.

%% Start.

defaults(Config) ->
	doc("A handler with no callback but to_html: GET 200 text/html, HEAD 200 without "
		"body, 405 with allow: HEAD, GET, OPTIONS for a method it does not allow, 501 for "
		"a method it does not know, OPTIONS 200 with allow; no vary, accept-ranges, etag, "
		"content-language."),
	#{status := 200, body := <<"<html><body>Hello REST</body></html>">>} = Get
		= req(Config, "GET", "/defaults"),
	<<"text/html">> = header(<<"content-type">>, Get),
	[undefined, undefined, undefined, undefined] = [header(H, Get) || H <- [<<"vary">>,
		<<"accept-ranges">>, <<"etag">>, <<"content-language">>]],
	#{status := 200, body := <<>>} = req(Config, "HEAD", "/defaults"),
	#{status := 405} = Post = req(Config, "POST", "/defaults", [], <<"x">>),
	<<"HEAD, GET, OPTIONS">> = header(<<"allow">>, Post),
	#{status := 501} = req(Config, "BREW", "/defaults"),
	#{status := 200} = Options = req(Config, "OPTIONS", "/defaults"),
	<<"HEAD, GET, OPTIONS">> = header(<<"allow">>, Options),
	ok.

service_available(Config) ->
	doc("service_available false: 503."),
	503 = status(Config, "GET", "/service_available", []).

known_methods(Config) ->
	doc("known_methods: a method not in the list is 501, one in it goes on."),
	501 = status(Config, "HEAD", "/known_methods", []),
	200 = status(Config, "GET", "/known_methods", []).

uri_too_long(Config) ->
	doc("uri_too_long true: 414."),
	414 = status(Config, "GET", "/uri_too_long", []).

allowed_methods(Config) ->
	doc("allowed_methods: a method not in the list is 405 with the list in allow."),
	#{status := 405} = Resp = req(Config, "DELETE", "/allowed_methods"),
	<<"GET, PUT">> = header(<<"allow">>, Resp),
	200 = status(Config, "GET", "/allowed_methods", []).

malformed_request(Config) ->
	doc("malformed_request true: 400."),
	400 = status(Config, "GET", "/malformed_request", []).

is_authorized(Config) ->
	doc("is_authorized {false, Challenge}: 401 with the challenge in www-authenticate."),
	#{status := 401} = Resp = req(Config, "GET", "/is_authorized"),
	<<"Basic realm=\"mustang\"">> = header(<<"www-authenticate">>, Resp).

forbidden(Config) ->
	doc("forbidden true: 403."),
	403 = status(Config, "GET", "/forbidden", []).

rate_limited(Config) ->
	doc("rate_limited {true, Seconds}: 429 with retry-after: Seconds (RFC 6585 4)."),
	#{status := 429} = Resp = req(Config, "GET", "/rate_limited"),
	<<"120">> = header(<<"retry-after">>, Resp).

rate_limited_date(Config) ->
	doc("rate_limited {true, DateTime}: 429 with retry-after as an HTTP date."),
	#{status := 429} = Resp = req(Config, "GET", "/rate_limited_date"),
	<<?DATE_BIN>> = header(<<"retry-after">>, Resp).

valid_content_headers(Config) ->
	doc("valid_content_headers false: 501."),
	501 = status(Config, "GET", "/valid_content_headers", []).

valid_entity_length(Config) ->
	doc("valid_entity_length false: 413."),
	413 = status(Config, "GET", "/valid_entity_length", []).

%% OPTIONS.

options_default(Config) ->
	doc("OPTIONS without an options callback: 200 with the allowed methods in allow."),
	#{status := 200} = Resp = req(Config, "OPTIONS", "/options_default"),
	<<"GET, OPTIONS, DELETE">> = header(<<"allow">>, Resp).

options(Config) ->
	doc("OPTIONS with an options callback: its headers, 200, no allow added."),
	#{status := 200} = Resp = req(Config, "OPTIONS", "/options",
		[{"access-control-request-method", "GET"}], none),
	<<"yes">> = header(<<"x-options">>, Resp),
	undefined = header(<<"allow">>, Resp).

%% Content negotiation.

content_types_provided_none(Config) ->
	doc("content_types_provided []: 406."),
	406 = status(Config, "GET", "/content_types_provided_none", []).

content_types_provided_no_accept(Config) ->
	doc("No accept header: the first type provided; vary: accept (several provided)."),
	#{status := 200, body := <<"<p>body</p>">>} = Resp = req(Config, "GET", "/conneg"),
	<<"text/html">> = header(<<"content-type">>, Resp),
	<<"accept">> = header(<<"vary">>, Resp).

accept_media_type(Config) ->
	doc("accept: the range of highest weight that a provided type matches (RFC 9110 "
		"12.5.1); none: 406."),
	#{status := 200, body := <<"{}">>} = Json = req(Config, "GET", "/conneg",
		[{"accept", "text/html;q=0.5, application/json;q=0.9, text/plain;q=0.1"}]),
	<<"application/json">> = header(<<"content-type">>, Json),
	#{status := 200, body := <<"0123456789">>} = req(Config, "GET", "/conneg",
		[{"accept", "text/plain"}]),
	406 = status(Config, "GET", "/conneg", [{"accept", "image/png"}]).

accept_wildcards(Config) ->
	doc("accept wildcards: type/* and */* match, the more specific range first at "
		"equal weight."),
	#{status := 200} = Text = req(Config, "GET", "/conneg", [{"accept", "text/*, text/plain"}]),
	<<"text/plain">> = header(<<"content-type">>, Text),
	#{status := 200} = App = req(Config, "GET", "/conneg", [{"accept", "application/*"}]),
	<<"application/json">> = header(<<"content-type">>, App),
	#{status := 200} = Any = req(Config, "GET", "/conneg", [{"accept", "image/png, */*;q=0.1"}]),
	<<"text/html">> = header(<<"content-type">>, Any).

accept_q_zero(Config) ->
	doc("accept q=0 means not acceptable (RFC 9110 12.4.2), also when a less specific "
		"range matches the type: */* with text/html;q=0 gives the next provided type."),
	#{status := 200} = Resp = req(Config, "GET", "/conneg", [{"accept", "*/*, text/html;q=0"}]),
	<<"application/json">> = header(<<"content-type">>, Resp),
	406 = status(Config, "GET", "/conneg", [{"accept", "text/html;q=0, text/plain;q=0"}]).

accept_params(Config) ->
	doc("Media type parameters: an accepted range's parameters must all be among the "
		"provided type's; a binary provided type is parsed like content-type."),
	#{status := 200} = Level = req(Config, "GET", "/accept_params",
		[{"accept", "text/html;level=1"}]),
	<<"text/html; level=1">> = header(<<"content-type">>, Level),
	406 = status(Config, "GET", "/accept_params", [{"accept", "text/html;level=2"}]),
	#{status := 200} = Flowed = req(Config, "GET", "/accept_params", [{"accept", "text/plain"}]),
	<<"text/plain; format=flowed">> = header(<<"content-type">>, Flowed).

accept_charset_param(Config) ->
	doc("A charset in the accept range of a '*' provided type must be one of "
		"charsets_provided: it is then the charset, and accept-charset is not looked at."),
	#{status := 200} = Resp = req(Config, "GET", "/accept_charset_param",
		[{"accept", "text/plain;charset=iso-8859-1"}, {"accept-charset", "utf-8"}]),
	<<"text/plain; charset=iso-8859-1">> = header(<<"content-type">>, Resp),
	406 = status(Config, "GET", "/accept_charset_param", [{"accept", "text/plain;charset=koi8-r"}]).

accept_invalid(Config) ->
	doc("An accept header that does not parse: 400."),
	400 = status(Config, "GET", "/conneg", [{"accept", "text/html;q=2"}]).

languages_provided(Config) ->
	doc("accept-language: weights, prefix match (en matches en, fr matches fr-ca, "
		"RFC 4647 3.3.1), *; none: 406; the language goes in content-language."),
	#{status := 200} = Fr = req(Config, "GET", "/languages_provided",
		[{"accept-language", "de;q=0.5, fr;q=0.8"}]),
	<<"fr-ca">> = header(<<"content-language">>, Fr),
	#{status := 200} = Any = req(Config, "GET", "/languages_provided",
		[{"accept-language", "ja, *;q=0.1"}]),
	<<"en">> = header(<<"content-language">>, Any),
	406 = status(Config, "GET", "/languages_provided", [{"accept-language", "ja, en;q=0"}]).

languages_provided_no_header(Config) ->
	doc("No accept-language: the first language provided."),
	#{status := 200} = Resp = req(Config, "GET", "/languages_provided"),
	<<"en">> = header(<<"content-language">>, Resp).

languages_provided_none(Config) ->
	doc("languages_provided []: 406."),
	406 = status(Config, "GET", "/languages_provided_none", []).

charsets_provided_none(Config) ->
	doc("charsets_provided []: 406."),
	406 = status(Config, "GET", "/charsets_provided_none", []).

charsets_provided(Config) ->
	doc("accept-charset: the charset of highest weight provided, added to a text "
		"content-type; none: 406."),
	#{status := 200} = Resp = req(Config, "GET", "/charsets_provided",
		[{"accept-charset", "utf-8;q=0.2, iso-8859-1"}]),
	<<"text/html; charset=iso-8859-1">> = header(<<"content-type">>, Resp),
	406 = status(Config, "GET", "/charsets_provided", [{"accept-charset", "koi8-r"}]).

charsets_provided_no_header(Config) ->
	doc("No accept-charset: the first charset provided."),
	#{status := 200} = Resp = req(Config, "GET", "/charsets_provided"),
	<<"text/html; charset=utf-8">> = header(<<"content-type">>, Resp).

ranges_provided(Config) ->
	doc("ranges_provided: accept-ranges lists the units; [] gives accept-ranges: none."),
	#{status := 200} = Resp = req(Config, "GET", "/ranges_provided"),
	<<"bytes, pages">> = header(<<"accept-ranges">>, Resp),
	#{status := 200} = None = req(Config, "GET", "/ranges_provided_none"),
	<<"none">> = header(<<"accept-ranges">>, None).

variances(Config) ->
	doc("vary: accept-charset, accept-language and accept when there was a choice, "
		"then the handler's variances."),
	#{status := 200} = Resp = req(Config, "GET", "/variances"),
	<<"accept-charset, accept-language, accept, x-custom">> = header(<<"vary">>, Resp).

%% Resource missing.

resource_exists(Config) ->
	doc("resource_exists false, previously_existed false: 404 for GET and DELETE."),
	404 = status(Config, "GET", "/resource_exists", []),
	404 = status(Config, "DELETE", "/resource_exists", []).

previously_existed_moved_permanently(Config) ->
	doc("previously_existed true, moved_permanently {true, URI}: 301 with location."),
	#{status := 301} = Resp = req(Config, "GET", "/previously_existed"),
	<<"/new_place">> = header(<<"location">>, Resp).

moved_temporarily(Config) ->
	doc("moved_permanently false, moved_temporarily {true, URI}: 307 with location."),
	#{status := 307} = Resp = req(Config, "GET", "/moved_temporarily"),
	<<"/elsewhere">> = header(<<"location">>, Resp).

gone(Config) ->
	doc("previously_existed true, not moved: 410 Gone; for a POST when "
		"allow_missing_post is false."),
	410 = status(Config, "GET", "/gone", []),
	410 = maps:get(status, req(Config, "POST", "/gone_post", [{"content-type", "text/plain"}],
		<<"x">>)).

allow_missing_post(Config) ->
	doc("POST to a missing resource: allow_missing_post false is 404; true goes to "
		"content_types_accepted (here {created, URI}: 201)."),
	404 = maps:get(status, req(Config, "POST", "/allow_missing_post",
		[{"content-type", "text/plain"}], <<"x">>)),
	#{status := 201} = Resp = req(Config, "POST", "/allow_missing_post",
		[{"content-type", "text/plain"}, {"x-allow", "yes"}], <<"x">>),
	<<"/new">> = header(<<"location">>, Resp).

if_match_must_not_exist(Config) ->
	doc("If-Match on a missing resource: 412 (RFC 9110 13.1.1), before anything else."),
	412 = status(Config, "GET", "/if_match_must_not_exist", [{"if-match", "\"x\""}]),
	412 = status(Config, "PUT", "/if_match_must_not_exist", [{"if-match", "*"}]).

%% Conditional requests.

if_match(Config) ->
	doc("If-Match: the current strong etag or * goes on; another etag is 412; a "
		"header that does not parse is 400."),
	200 = status(Config, "GET", "/conditional", [{"if-match", "\"v0\", \"v1\""}]),
	200 = status(Config, "GET", "/conditional", [{"if-match", "*"}]),
	412 = status(Config, "GET", "/conditional", [{"if-match", "\"v2\""}]),
	412 = status(Config, "GET", "/conditional", [{"if-match", "W/\"v1\""}]),
	400 = status(Config, "GET", "/conditional", [{"if-match", "v1"}]).

if_match_weak(Config) ->
	doc("If-Match uses the strong comparison: a weak current etag never matches "
		"(RFC 9110 13.1.1)."),
	412 = status(Config, "GET", "/conditional_weak", [{"if-match", "\"v1\""}]),
	412 = status(Config, "GET", "/conditional_weak", [{"if-match", "W/\"v1\""}]).

if_unmodified_since(Config) ->
	doc("If-Unmodified-Since: 412 when modified after the date; ignored when there is "
		"If-Match, when the date is invalid, and when there is no last_modified."),
	412 = status(Config, "GET", "/conditional",
		[{"if-unmodified-since", "Tue, 31 Dec 2019 00:00:00 GMT"}]),
	200 = status(Config, "GET", "/conditional", [{"if-unmodified-since", ?DATE_BIN}]),
	200 = status(Config, "GET", "/conditional", [{"if-match", "\"v1\""},
		{"if-unmodified-since", "Tue, 31 Dec 2019 00:00:00 GMT"}]),
	200 = status(Config, "GET", "/conditional", [{"if-unmodified-since", "yesterday"}]),
	200 = status(Config, "GET", "/conditional_no_date",
		[{"if-unmodified-since", "Tue, 31 Dec 2019 00:00:00 GMT"}]).

if_none_match_get(Config) ->
	doc("If-None-Match on GET/HEAD: a matching etag (weak comparison) is 304 with etag, "
		"without content-type; no match goes on."),
	#{status := 304, body := <<>>} = Resp = req(Config, "GET", "/conditional",
		[{"if-none-match", "W/\"v1\""}]),
	<<"\"v1\"">> = header(<<"etag">>, Resp),
	undefined = header(<<"content-type">>, Resp),
	304 = status(Config, "HEAD", "/conditional", [{"if-none-match", "\"v1\""}]),
	200 = status(Config, "GET", "/conditional", [{"if-none-match", "\"v2\""}]).

if_none_match_put(Config) ->
	doc("If-None-Match on other methods: a match is 412 (RFC 9110 13.1.2)."),
	412 = maps:get(status, req(Config, "PUT", "/conditional",
		[{"if-none-match", "\"v1\""}, {"content-type", "text/plain"}], <<"x">>)),
	204 = maps:get(status, req(Config, "PUT", "/conditional",
		[{"if-none-match", "\"v2\""}, {"content-type", "text/plain"}], <<"x">>)).

if_none_match_star(Config) ->
	doc("If-None-Match: * on an existing resource: 304 for GET, 412 for PUT."),
	304 = status(Config, "GET", "/conditional", [{"if-none-match", "*"}]),
	412 = maps:get(status, req(Config, "PUT", "/conditional",
		[{"if-none-match", "*"}, {"content-type", "text/plain"}], <<"x">>)).

if_modified_since(Config) ->
	doc("If-Modified-Since on GET: 304 when not modified since; 200 when modified; "
		"ignored when If-None-Match is there (RFC 9110 13.1.3)."),
	304 = status(Config, "GET", "/conditional", [{"if-modified-since", ?DATE_BIN}]),
	200 = status(Config, "GET", "/conditional",
		[{"if-modified-since", "Tue, 31 Dec 2019 00:00:00 GMT"}]),
	200 = status(Config, "GET", "/conditional", [{"if-none-match", "\"v2\""},
		{"if-modified-since", ?DATE_BIN}]).

if_modified_since_future(Config) ->
	doc("If-Modified-Since with a date in the future, or invalid, is ignored."),
	200 = status(Config, "GET", "/conditional",
		[{"if-modified-since", "Fri, 01 Jan 2100 00:00:00 GMT"}]),
	200 = status(Config, "GET", "/conditional", [{"if-modified-since", "soon"}]).

generate_etag_called_once(Config) ->
	doc("generate_etag and last_modified are called once per request, however many "
		"conditions use them."),
	200 = status(Config, "GET", "/conditional", [pid_header(), {"if-match", "\"v1\""},
		{"if-none-match", "\"v2\""}]),
	Called = called(),
	1 = length([x || generate_etag <- Called]),
	1 = length([x || last_modified <- Called]).

%% GET and HEAD.

get_resp_headers(Config) ->
	doc("GET: etag, last-modified and expires from their callbacks; expires as given "
		"when it is a binary."),
	#{status := 200, body := <<"<p>body</p>">>} = Resp = req(Config, "GET", "/get_resp_headers"),
	<<"\"abc\"">> = header(<<"etag">>, Resp),
	<<?DATE_BIN>> = header(<<"last-modified">>, Resp),
	<<"Sat, 01 Jun 2030 12:00:00 GMT">> = header(<<"expires">>, Resp),
	#{status := 200} = Bin = req(Config, "GET", "/expires_binary"),
	<<"0">> = header(<<"expires">>, Bin).

head(Config) ->
	doc("HEAD: the GET headers, content-length of the representation, no body."),
	#{status := 200, body := <<>>} = Resp = req(Config, "HEAD", "/get_resp_headers"),
	<<"\"abc\"">> = header(<<"etag">>, Resp),
	<<"11">> = header(<<"content-length">>, Resp),
	ok.

multiple_choices(Config) ->
	doc("multiple_choices true: 300 with the representation."),
	#{status := 300, body := <<"<p>body</p>">>} = req(Config, "GET", "/multiple_choices"),
	ok.

%% Ranges.

range_satisfiable(Config) ->
	doc("range_satisfiable false: 416 without content-range."),
	#{status := 416} = Resp = req(Config, "GET", "/range_satisfiable", [{"range", "bytes=0-1"}]),
	undefined = header(<<"content-range">>, Resp).

range_satisfiable_max_len(Config) ->
	doc("range_satisfiable {false, Length}: 416 with content-range: bytes */Length."),
	#{status := 416} = Resp = req(Config, "GET", "/range_satisfiable_max_len",
		[{"range", "bytes=20-30"}]),
	<<"bytes */10">> = header(<<"content-range">>, Resp).

range_callback_single(Config) ->
	doc("A RangeCallback with one part: 206 with content-range; the parsed range is the "
		"Req's range key."),
	#{status := 206, body := <<"234">>} = Resp = req(Config, "GET", "/range_callback",
		[{"range", "bytes=2-4"}]),
	<<"bytes 2-4/10">> = header(<<"content-range">>, Resp),
	<<"text/plain; charset=utf-8">> = header(<<"content-type">>, Resp),
	#{status := 200, body := <<"0123456789">>} = req(Config, "GET", "/range_callback").

range_callback_multipart(Config) ->
	doc("A RangeCallback with several parts: 206 multipart/byteranges (RFC 9110 14.6), "
		"each part with content-type and content-range."),
	#{status := 206, body := Body} = Resp = req(Config, "GET", "/range_callback",
		[{"range", "bytes=0-1, 8-9"}]),
	check_byteranges(Resp, Body, [{<<"bytes 0-1/10">>, <<"01">>}, {<<"bytes 8-9/10">>, <<"89">>}]).

check_byteranges(Resp, Body, Expected) ->
	<<"multipart/byteranges; boundary=", Boundary/binary>> = header(<<"content-type">>, Resp),
	[<<>> | Parts] = binary:split(Body, <<"--", Boundary/binary>>, [global]),
	{PartsIn, [<<"--\r\n">>]} = lists:split(length(Parts) - 1, Parts),
	Expected = [begin
		[Head, PartBody] = binary:split(P, <<"\r\n\r\n">>),
		<<"\r\n", Fields/binary>> = Head,
		[<<"content-type: text/plain; charset=utf-8">>, <<"content-range: ", Range/binary>>]
			= binary:split(Fields, <<"\r\n">>, [global]),
		{Range, binary:part(PartBody, 0, byte_size(PartBody) - 2)}
	end || P <- PartsIn],
	ok.

range_auto_single(Config) ->
	doc("auto ranges over the ProvideCallback's body: first-last, open-ended and "
		"suffix ranges, the last position capped (RFC 9110 14.1.2)."),
	#{status := 206, body := <<"3456">>} = A = req(Config, "GET", "/range_auto",
		[{"range", "bytes=3-6"}]),
	<<"bytes 3-6/10">> = header(<<"content-range">>, A),
	#{status := 206, body := <<"789">>} = B = req(Config, "GET", "/range_auto",
		[{"range", "bytes=-3"}]),
	<<"bytes 7-9/10">> = header(<<"content-range">>, B),
	#{status := 206, body := <<"89">>} = C = req(Config, "GET", "/range_auto",
		[{"range", "bytes=8-"}]),
	<<"bytes 8-9/10">> = header(<<"content-range">>, C),
	#{status := 206, body := <<"56789">>} = req(Config, "GET", "/range_auto",
		[{"range", "bytes=5-100"}]),
	ok.

range_auto_multipart(Config) ->
	doc("auto ranges, several: multipart/byteranges; unsatisfiable ranges left out."),
	#{status := 206, body := Body} = Resp = req(Config, "GET", "/range_auto",
		[{"range", "bytes=0-0, 50-60, -2"}]),
	check_byteranges(Resp, Body, [{<<"bytes 0-0/10">>, <<"0">>}, {<<"bytes 8-9/10">>, <<"89">>}]).

range_auto_unsatisfiable(Config) ->
	doc("auto ranges, none satisfiable: 416 with content-range: bytes */Length "
		"(RFC 9110 15.5.17)."),
	#{status := 416} = Resp = req(Config, "GET", "/range_auto", [{"range", "bytes=10-20"}]),
	<<"bytes */10">> = header(<<"content-range">>, Resp).

range_auto_sendfile(Config) ->
	doc("auto ranges over a {sendfile, Offset, Length, Path} body: one range is a "
		"sendfile part, several a streamed multipart/byteranges."),
	#{status := 206, body := <<"45">>} = One = req(Config, "GET", "/range_sendfile",
		[{"range", "bytes=2-3"}]),
	<<"bytes 2-3/8">> = header(<<"content-range">>, One),
	#{status := 206, body := Body} = Several = req(Config, "GET", "/range_sendfile",
		[{"range", "bytes=0-1,-2"}]),
	check_byteranges(Several, Body, [{<<"bytes 0-1/8">>, <<"23">>}, {<<"bytes 6-7/8">>, <<"89">>}]).

range_unit_not_provided(Config) ->
	doc("A range in a unit not provided, or that does not parse, is ignored: 200 with "
		"the whole representation (RFC 9110 14.2)."),
	#{status := 200, body := <<"0123456789">>} = req(Config, "GET", "/range_auto",
		[{"range", "pages=1-2"}]),
	#{status := 200, body := <<"0123456789">>} = req(Config, "GET", "/range_auto",
		[{"range", "bytes=5-1"}]),
	#{status := 200, body := <<>>} = Head = req(Config, "HEAD", "/range_auto",
		[{"range", "bytes=0-1"}]),
	undefined = header(<<"content-range">>, Head),
	ok.

if_range(Config) ->
	doc("If-Range: the current strong etag or the exact last-modified date apply the "
		"range (206); anything else sends the whole representation (200) (RFC 9110 13.1.5)."),
	206 = status(Config, "GET", "/range_auto", [{"range", "bytes=0-1"}, {"if-range", "\"r1\""}]),
	206 = status(Config, "GET", "/range_auto", [{"range", "bytes=0-1"}, {"if-range", ?DATE_BIN}]),
	200 = status(Config, "GET", "/range_auto", [{"range", "bytes=0-1"}, {"if-range", "\"r0\""}]),
	200 = status(Config, "GET", "/range_auto", [{"range", "bytes=0-1"}, {"if-range", "W/\"r1\""}]),
	200 = status(Config, "GET", "/range_auto", [{"range", "bytes=0-1"},
		{"if-range", "Tue, 31 Dec 2019 00:00:00 GMT"}]).

%% PUT, POST, PATCH.

upload(Config, Path, ContentType, Body) ->
	upload(Config, "PUT", Path, ContentType, Body).

upload(Config, Method, Path, ContentType, Body) ->
	Headers = case ContentType of
		undefined -> [];
		_ -> [{"content-type", ContentType}]
	end,
	req(Config, Method, Path, Headers, Body).

is_conflict(Config) ->
	doc("is_conflict true on PUT: 409."),
	#{status := 409} = upload(Config, "/is_conflict", "text/plain", <<"x">>),
	ok.

is_conflict_missing(Config) ->
	doc("is_conflict true on a PUT to a missing resource: 409."),
	#{status := 409} = upload(Config, "/is_conflict_missing", "text/plain", <<"x">>),
	ok.

content_types_accepted_no_content_type(Config) ->
	doc("A request body without content-type: 415."),
	#{status := 415} = upload(Config, "/accepted", undefined, <<"x">>),
	ok.

content_types_accepted_no_match(Config) ->
	doc("content_types_accepted: a binary type matches the same parameters only; "
		"{T, S, '*'} any; no match: 415; a content-type that does not parse: 415."),
	#{status := 204} = upload(Config, "/accepted", "text/plain", <<"x">>),
	#{status := 415} = upload(Config, "/accepted", "text/plain;charset=utf-8", <<"x">>),
	#{status := 204} = upload(Config, "/accepted", "application/json;charset=utf-8", <<"{}">>),
	#{status := 415} = upload(Config, "/accepted", "image/png", <<"x">>),
	#{status := 415} = upload(Config, "/accepted", "text/", <<"x">>),
	ok.

accept_callback_false(Config) ->
	doc("AcceptCallback false: 400."),
	#{status := 400} = upload(Config, "POST", "/accept_false", "text/plain", <<"x">>),
	ok.

accept_callback_true(Config) ->
	doc("AcceptCallback true on an existing resource: 204 without body, 200 with the "
		"body the callback set."),
	#{status := 204} = upload(Config, "PATCH", "/accepted", "text/plain", <<"x">>),
	#{status := 200, body := <<"got hi">>} = upload(Config, "POST", "/accept_true_body",
		"text/plain", <<"hi">>),
	ok.

accept_callback_created(Config) ->
	doc("AcceptCallback {created, URI}: 201 with location."),
	#{status := 201} = Resp = upload(Config, "POST", "/accept_created", "text/plain", <<"x">>),
	<<"/items/1">> = header(<<"location">>, Resp).

accept_callback_see_other(Config) ->
	doc("AcceptCallback {see_other, URI}: 303 with location."),
	#{status := 303} = Resp = upload(Config, "POST", "/accept_see_other", "text/plain", <<"x">>),
	<<"/items/2">> = header(<<"location">>, Resp).

accept_callback_true_uri(Config) ->
	doc("AcceptCallback {true, URI}: 201 when the resource did not exist, 303 when it "
		"did, with location."),
	#{status := 201} = New = upload(Config, "POST", "/accept_true_uri", "text/plain", <<"x">>),
	<<"/items/3">> = header(<<"location">>, New),
	#{status := 303} = req(Config, "POST", "/accept_true_uri",
		[{"content-type", "text/plain"}, {"x-exists", "yes"}], <<"x">>),
	ok.

accept_callback_true_location(Config) ->
	doc("AcceptCallback true on a new resource (POST): 201 when the callback set a "
		"location header, else 204 (no body)."),
	#{status := 201} = Resp = upload(Config, "POST", "/accept_location", "text/plain", <<"located">>),
	<<"/here">> = header(<<"location">>, Resp),
	#{status := 204} = upload(Config, "POST", "/accept_location", "text/plain", <<"x">>),
	ok.

put_created(Config) ->
	doc("PUT to a missing resource, AcceptCallback true: 201."),
	#{status := 201} = upload(Config, "/put_created", "text/plain", <<"x">>),
	ok.

put_missing_moved_permanently(Config) ->
	doc("PUT to a missing resource that moved_permanently: 301 with location."),
	#{status := 301} = Resp = upload(Config, "/put_missing_moved", "text/plain", <<"x">>),
	<<"/moved">> = header(<<"location">>, Resp).

patch(Config) ->
	doc("PATCH goes to content_types_accepted like POST; application/json;q-less "
		"parameters accepted by a '*' type."),
	#{status := 204} = upload(Config, "PATCH", "/accepted", "application/json", <<"{}">>),
	ok.

%% DELETE.

delete_resource(Config) ->
	doc("delete_resource false (the default): 500; true: 204."),
	500 = status(Config, "DELETE", "/delete_resource", []),
	204 = status(Config, "DELETE", "/delete_resource_true", []).

delete_completed(Config) ->
	doc("delete_completed false: 202 Accepted."),
	202 = status(Config, "DELETE", "/delete_completed", []).

delete_has_resp_body(Config) ->
	doc("DELETE with a response body set: 200 with the body."),
	#{status := 200, body := <<"deleted">>} = req(Config, "DELETE", "/delete_has_resp_body"),
	ok.

%% Any callback.

stop(Config) ->
	doc("{stop, Req, State} from a callback: the flow ends, terminate/3 runs, and "
		"without a response the connection answers 204."),
	#{status := 204} = req(Config, "GET", "/stop", [pid_header()]),
	receive {rest_h, terminate, normal} -> ok after 5000 -> error(no_terminate) end.

stop_with_reply(Config) ->
	doc("{stop, Req, State} after the callback replied: that response."),
	#{status := 418, body := <<"teapot">>} = req(Config, "GET", "/stop_with_reply"),
	ok.

switch_handler(Config) ->
	doc("{{switch_handler, Mod}, Req, State}: Mod:upgrade/4 takes over."),
	#{status := 200, body := <<"{rest_h,no_opts}">>} = req(Config, "GET", "/switch_handler"),
	ok.

switch_handler_opts(Config) ->
	doc("{{switch_handler, Mod, Opts}, Req, State}, here from the ProvideCallback: "
		"Mod:upgrade/5 with Opts."),
	#{status := 200, body := <<"{rest_h,#{opt => 1}}">>} = req(Config, "GET",
		"/switch_handler_opts"),
	ok.

terminate_normal(Config) ->
	doc("terminate/3 is called with normal once the response is sent."),
	200 = status(Config, "GET", "/terminate_normal", [pid_header()]),
	receive {rest_h, terminate, normal} -> ok after 5000 -> error(no_terminate) end.

crash(Config) ->
	doc("A callback that crashes: terminate/3 with {crash, Class, Reason}, 500, and "
		"the server goes on."),
	500 = status(Config, "GET", "/crash", [pid_header()]),
	receive {rest_h, terminate, {crash, error, crash_in_forbidden}} -> ok
	after 5000 -> error(no_terminate)
	end,
	200 = status(Config, "GET", "/defaults", []).

%% Real clients.

url(Config, Path) ->
	"http://127.0.0.1:" ++ integer_to_list(mustang_test:port(Config)) ++ Path.

curl(Args) ->
	{0, Out} = mustang_test:run(os:find_executable("curl"), ["-sS" | Args], 30000),
	Out.

curl_negotiation(Config) ->
	doc("curl: accept, accept-language and accept-charset choose the representation."),
	<<"{} 200 application/json">> = curl(["-H", "accept: application/json",
		"-w", " %{http_code} %{content_type}", url(Config, "/conneg")]),
	<<"406">> = curl(["-o", "/dev/null", "-H", "accept: image/png", "-w", "%{http_code}",
		url(Config, "/conneg")]),
	Head = curl(["-D", "-", "-o", "/dev/null", "-H", "accept-language: fr",
		"-H", "accept-charset: iso-8859-1", url(Config, "/variances")]),
	{match, _} = re:run(Head, "content-language: fr\r\n", [caseless]),
	{match, _} = re:run(Head, "content-type: text/html; charset=iso-8859-1\r\n", [caseless]),
	ok.

curl_conditional(Config) ->
	doc("curl: If-None-Match gives 304, If-Match with another etag 412, "
		"--time-cond (If-Modified-Since) 304."),
	<<"304">> = curl(["-o", "/dev/null", "-w", "%{http_code}", "-H", "if-none-match: \"v1\"",
		url(Config, "/conditional")]),
	<<"412">> = curl(["-o", "/dev/null", "-w", "%{http_code}", "-H", "if-match: \"nope\"",
		url(Config, "/conditional")]),
	<<"304">> = curl(["-o", "/dev/null", "-w", "%{http_code}", "--time-cond", ?DATE_BIN,
		url(Config, "/conditional")]),
	ok.

curl_ranges(Config) ->
	doc("curl --range: 206 with the bytes asked for."),
	<<"2345 206">> = curl(["--range", "2-5", "-w", " %{http_code}", url(Config, "/range_auto")]),
	ok.

httpx_http2(Config) ->
	doc("httpx over HTTP/2 (h2c prior knowledge is not httpx's; TLS with ALPN h2): "
		"negotiation, 304 and a range."),
	Ref = {?MODULE, httpx_tls},
	Port = mustang_test:start_group_listener(Ref, routes(Config), [{transport, h2}], #{}),
	try
		Python = mustang_test:require_python(mustang_test:python(), ["httpx", "h2"]),
		Script = filename:join(?config(data_dir, Config), "httpx_rest.py"),
		{0, Out} = mustang_test:run(Python, [Script, integer_to_list(Port)], 60000),
		<<"HTTP/2 200 application/json {}\nHTTP/2 304\nHTTP/2 206 bytes 0-3/10 0123\n">> = Out
	after
		mustang_test:stop_listener(Ref)
	end.
