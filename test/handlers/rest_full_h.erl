% rest_h with the four callbacks whose absence skips a step exported too:
% languages_provided, charsets_provided, ranges_provided and options (a
% callback absent from the handler options crashes for those four). The
% other callbacks and the handler options are those of rest_h.
-module(rest_full_h).

-export([init/2]).
-export([terminate/3]).
-export([allowed_methods/2, allow_missing_post/2, content_types_accepted/2, content_types_provided/2, delete_completed/2, delete_resource/2, expires/2, forbidden/2, generate_etag/2, is_authorized/2, is_conflict/2, known_methods/2, last_modified/2, malformed_request/2, moved_permanently/2, moved_temporarily/2, multiple_choices/2, previously_existed/2, range_satisfiable/2, rate_limited/2, resource_exists/2, service_available/2, uri_too_long/2, valid_content_headers/2, valid_entity_length/2, variances/2, to_html/2, to_json/2, to_text/2, from_text/2, from_json/2, ranged_bytes/2, languages_provided/2, charsets_provided/2, ranges_provided/2, options/2]).

init(Req, Opts) ->
	{mustang_rest, Req, Opts}.

terminate(Reason, Req, State) ->
	rest_h:terminate(Reason, Req, State).

allowed_methods(Req, S) -> rest_h:callback(allowed_methods, Req, S).
allow_missing_post(Req, S) -> rest_h:callback(allow_missing_post, Req, S).
content_types_accepted(Req, S) -> rest_h:callback(content_types_accepted, Req, S).
content_types_provided(Req, S) -> rest_h:callback(content_types_provided, Req, S).
delete_completed(Req, S) -> rest_h:callback(delete_completed, Req, S).
delete_resource(Req, S) -> rest_h:callback(delete_resource, Req, S).
expires(Req, S) -> rest_h:callback(expires, Req, S).
forbidden(Req, S) -> rest_h:callback(forbidden, Req, S).
generate_etag(Req, S) -> rest_h:callback(generate_etag, Req, S).
is_authorized(Req, S) -> rest_h:callback(is_authorized, Req, S).
is_conflict(Req, S) -> rest_h:callback(is_conflict, Req, S).
known_methods(Req, S) -> rest_h:callback(known_methods, Req, S).
last_modified(Req, S) -> rest_h:callback(last_modified, Req, S).
malformed_request(Req, S) -> rest_h:callback(malformed_request, Req, S).
moved_permanently(Req, S) -> rest_h:callback(moved_permanently, Req, S).
moved_temporarily(Req, S) -> rest_h:callback(moved_temporarily, Req, S).
multiple_choices(Req, S) -> rest_h:callback(multiple_choices, Req, S).
previously_existed(Req, S) -> rest_h:callback(previously_existed, Req, S).
range_satisfiable(Req, S) -> rest_h:callback(range_satisfiable, Req, S).
rate_limited(Req, S) -> rest_h:callback(rate_limited, Req, S).
resource_exists(Req, S) -> rest_h:callback(resource_exists, Req, S).
service_available(Req, S) -> rest_h:callback(service_available, Req, S).
uri_too_long(Req, S) -> rest_h:callback(uri_too_long, Req, S).
valid_content_headers(Req, S) -> rest_h:callback(valid_content_headers, Req, S).
valid_entity_length(Req, S) -> rest_h:callback(valid_entity_length, Req, S).
variances(Req, S) -> rest_h:callback(variances, Req, S).
to_html(Req, S) -> rest_h:callback(to_html, Req, S).
to_json(Req, S) -> rest_h:callback(to_json, Req, S).
to_text(Req, S) -> rest_h:callback(to_text, Req, S).
from_text(Req, S) -> rest_h:callback(from_text, Req, S).
from_json(Req, S) -> rest_h:callback(from_json, Req, S).
ranged_bytes(Req, S) -> rest_h:callback(ranged_bytes, Req, S).
languages_provided(Req, S) -> rest_h:callback(languages_provided, Req, S).
charsets_provided(Req, S) -> rest_h:callback(charsets_provided, Req, S).
ranges_provided(Req, S) -> rest_h:callback(ranges_provided, Req, S).
options(Req, S) -> rest_h:callback(options, Req, S).
