%% The one error shape of Mustang's codecs and machines (doc/internals/errors.md).
%%
%% A parser that refuses its input returns {error, {Class, Code, Reason}} (one
%% that can go on after the error may return {error, {Class, Code, Reason}, Rest}):
%%
%% - http_error: an HTTP/1.1 request error; Code is the HTTP status (400..505)
%%   the server answers with;
%% - ws_error: a Websocket error; Code is the close code (1002, 1007, 1009);
%% - value_error: a header value, query string, cookie or date that does not
%%   parse; Code is the status the request API answers with (400);
%% - proxy_error: a PROXY protocol header that does not parse
%%   (mustang_proxy_header); Code is 400, for the class of the error only:
%%   nothing is answered, the connection is closed.
%%
%% HTTP/2 (mustang_http2_frame, mustang_http2) uses the same triple with the
%% stream ID added: {stream_error, StreamID, Code, Reason} and
%% {connection_error, Code, Reason}, Code an RFC 9113 error code atom.
%%
%% Reason is an atom holding one English sentence that ends with the rule it
%% enforces in parentheses: an RFC section ("(RFC9112 3)") or, for limits that
%% are Mustang's own and no RFC's, the option that sets it ("(option max_keys)").
%%
%% No options.
-module(mustang_error).

-export([status/1]).
-export([text/1]).
-export([is_error/1]).

-type error_class() :: http_error | ws_error | value_error | proxy_error.
-type http_status() :: 400..505.
-type close_code() :: 1002 | 1007 | 1009.
-type error_code() :: http_status() | close_code().
-type error() :: {error_class(), error_code(), atom()}.
-type http_error() :: {http_error, http_status(), atom()}.
-type ws_error() :: {ws_error, close_code(), atom()}.
-type value_error() :: {value_error, 400, atom()}.
-type proxy_error() :: {proxy_error, 400, atom()}.
-export_type([error_class/0, error_code/0, http_status/0, close_code/0, error/0,
	http_error/0, ws_error/0, value_error/0, proxy_error/0]).

%% The HTTP status to answer an http_error or value_error with.
-spec status(http_error() | value_error()) -> http_status().
status({Class, Status, _}) when Class =:= http_error; Class =:= value_error ->
	Status.

%% The reason sentence as a binary, for logs and response bodies.
-spec text(error()) -> binary().
text({_, _, Reason}) ->
	atom_to_binary(Reason, utf8).

%% Whether Term has the documented shape: a known class, a code of the kind
%% its class uses, and a reason sentence that ends with ")".
-spec is_error(any()) -> boolean().
is_error({Class, Code, Reason}) when is_atom(Reason) ->
	code_fits(Class, Code) andalso ends_with_paren(atom_to_binary(Reason, utf8));
is_error(_) ->
	false.

code_fits(http_error, Code) -> is_integer(Code) andalso Code >= 400 andalso Code =< 505;
code_fits(value_error, Code) -> Code =:= 400;
code_fits(proxy_error, Code) -> Code =:= 400;
code_fits(ws_error, Code) -> Code =:= 1002 orelse Code =:= 1007 orelse Code =:= 1009;
code_fits(_, _) -> false.

ends_with_paren(<<>>) -> false;
ends_with_paren(Text) -> binary:last(Text) =:= $).
