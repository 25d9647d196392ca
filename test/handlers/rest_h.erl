%% A REST handler (mustang_rest) whose callbacks answer what the handler
%% options say: Opts is a map Callback => Spec, where Spec is a value
%% (the callback returns {Value, Req, State}) or a fun(Req, State) that
%% returns the whole result. A callback absent from Opts returns the default
%% that mustang_rest documents, except content_types_accepted and the
%% accept, provide and range callbacks, which crash then (to_html
%% returns <<"<p>rest_h</p>">>).
%%
%% It exports every callback but languages_provided, charsets_provided,
%% ranges_provided and options, whose absence means "skip this step":
%% rest_full_h exports those too. When the request has an x-test-pid
%% header, each callback called sends {rest_h, Callback} to that process,
%% and terminate/3 sends {rest_h, terminate, Reason}.
-module(rest_h).

-export([init/2]).
-export([terminate/3]).
-export([allowed_methods/2, allow_missing_post/2, content_types_accepted/2,
	content_types_provided/2, delete_completed/2, delete_resource/2, expires/2,
	forbidden/2, generate_etag/2, is_authorized/2, is_conflict/2, known_methods/2,
	last_modified/2, malformed_request/2, moved_permanently/2, moved_temporarily/2,
	multiple_choices/2, previously_existed/2, range_satisfiable/2, rate_limited/2,
	resource_exists/2, service_available/2, uri_too_long/2, valid_content_headers/2,
	valid_entity_length/2, variances/2]).
%% Provide, accept and range callbacks.
-export([to_html/2, to_json/2, to_text/2, from_text/2, from_json/2, ranged_bytes/2]).
%% For rest_full_h.
-export([callback/3]).

init(Req, Opts) ->
	{mustang_rest, Req, Opts}.

terminate(Reason, Req, _) ->
	notify(Req, {rest_h, terminate, Reason}),
	ok.

allowed_methods(Req, S) -> callback(allowed_methods, Req, S).
allow_missing_post(Req, S) -> callback(allow_missing_post, Req, S).
content_types_accepted(Req, S) -> callback(content_types_accepted, Req, S).
content_types_provided(Req, S) -> callback(content_types_provided, Req, S).
delete_completed(Req, S) -> callback(delete_completed, Req, S).
delete_resource(Req, S) -> callback(delete_resource, Req, S).
expires(Req, S) -> callback(expires, Req, S).
forbidden(Req, S) -> callback(forbidden, Req, S).
generate_etag(Req, S) -> callback(generate_etag, Req, S).
is_authorized(Req, S) -> callback(is_authorized, Req, S).
is_conflict(Req, S) -> callback(is_conflict, Req, S).
known_methods(Req, S) -> callback(known_methods, Req, S).
last_modified(Req, S) -> callback(last_modified, Req, S).
malformed_request(Req, S) -> callback(malformed_request, Req, S).
moved_permanently(Req, S) -> callback(moved_permanently, Req, S).
moved_temporarily(Req, S) -> callback(moved_temporarily, Req, S).
multiple_choices(Req, S) -> callback(multiple_choices, Req, S).
previously_existed(Req, S) -> callback(previously_existed, Req, S).
range_satisfiable(Req, S) -> callback(range_satisfiable, Req, S).
rate_limited(Req, S) -> callback(rate_limited, Req, S).
resource_exists(Req, S) -> callback(resource_exists, Req, S).
service_available(Req, S) -> callback(service_available, Req, S).
uri_too_long(Req, S) -> callback(uri_too_long, Req, S).
valid_content_headers(Req, S) -> callback(valid_content_headers, Req, S).
valid_entity_length(Req, S) -> callback(valid_entity_length, Req, S).
variances(Req, S) -> callback(variances, Req, S).
to_html(Req, S) -> callback(to_html, Req, S).
to_json(Req, S) -> callback(to_json, Req, S).
to_text(Req, S) -> callback(to_text, Req, S).
from_text(Req, S) -> callback(from_text, Req, S).
from_json(Req, S) -> callback(from_json, Req, S).
ranged_bytes(Req, S) -> callback(ranged_bytes, Req, S).

callback(Name, Req, Opts) ->
	notify(Req, {rest_h, Name}),
	case maps:find(Name, Opts) of
		{ok, Fun} when is_function(Fun, 2) -> Fun(Req, Opts);
		{ok, Value} -> {Value, Req, Opts};
		error -> {default(Name), Req, Opts}
	end.

default(allowed_methods) -> [<<"HEAD">>, <<"GET">>, <<"OPTIONS">>];
default(allow_missing_post) -> true;
default(content_types_provided) -> [{{<<"text">>, <<"html">>, '*'}, to_html}];
default(delete_completed) -> true;
default(delete_resource) -> false;
default(expires) -> undefined;
default(forbidden) -> false;
default(generate_etag) -> undefined;
default(is_authorized) -> true;
default(is_conflict) -> false;
default(known_methods) ->
	[<<"GET">>, <<"HEAD">>, <<"POST">>, <<"PUT">>, <<"PATCH">>, <<"DELETE">>, <<"OPTIONS">>];
default(last_modified) -> undefined;
default(malformed_request) -> false;
default(moved_permanently) -> false;
default(moved_temporarily) -> false;
default(multiple_choices) -> false;
default(previously_existed) -> false;
default(range_satisfiable) -> true;
default(rate_limited) -> false;
default(resource_exists) -> true;
default(service_available) -> true;
default(uri_too_long) -> false;
default(valid_content_headers) -> true;
default(valid_entity_length) -> true;
default(variances) -> [];
default(to_html) -> <<"<p>rest_h</p>">>;
default(Name) -> error({no_value_for, Name}).

notify(Req, Message) ->
	case mustang_req:header(<<"x-test-pid">>, Req) of
		undefined -> ok;
		Pid -> list_to_pid(binary_to_list(Pid)) ! Message
	end,
	ok.
