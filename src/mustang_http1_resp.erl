%% HTTP/1.1 response encoding (RFC 9112): status lines, header lines, chunked
%% transfer coding of response bodies. Pure functions building iodata; they
%% trust their input (mustang_req checks what handlers give before it gets
%% here), unlike the request parser, mustang_http1_codec.
-module(mustang_http1_resp).

-export([status_line/2]).
-export([headers_to_iodata/1]).
-export([reason_phrase/1]).
-export([chunk/1]).
-export([last_chunk/1]).
-export([no_body_status/1]).

-spec chunk(iodata()) -> iodata().
chunk(Data) ->
	case iolist_size(Data) of
		0 -> [];
		Size -> [integer_to_binary(Size, 16), <<"\r\n">>, Data, <<"\r\n">>]
	end.

-spec last_chunk([{binary(), iodata()}]) -> iodata().
last_chunk([]) ->
	<<"0\r\n\r\n">>;
last_chunk(Trailers) ->
	[<<"0\r\n">>, headers_to_iodata(Trailers), <<"\r\n">>].

-spec status_line('HTTP/1.1' | 'HTTP/1.0', non_neg_integer() | binary()) -> iodata().
status_line('HTTP/1.1', 200) -> <<"HTTP/1.1 200 OK\r\n">>;
status_line('HTTP/1.1', 204) -> <<"HTTP/1.1 204 No Content\r\n">>;
status_line('HTTP/1.1', 404) -> <<"HTTP/1.1 404 Not Found\r\n">>;
status_line(Version, Status) when is_integer(Status) ->
	[atom_to_binary(Version), <<" ">>, integer_to_binary(Status), <<" ">>,
		reason_phrase(Status), <<"\r\n">>];
status_line(Version, Status) when is_binary(Status) ->
	[atom_to_binary(Version), <<" ">>, Status, <<"\r\n">>].

-spec headers_to_iodata([{iodata(), iodata()}]) -> iodata().
headers_to_iodata(Headers) ->
	[[Name, <<": ">>, Value, <<"\r\n">>] || {Name, Value} <- Headers].

-spec reason_phrase(non_neg_integer()) -> binary().
reason_phrase(100) -> <<"Continue">>;
reason_phrase(101) -> <<"Switching Protocols">>;
reason_phrase(102) -> <<"Processing">>;
reason_phrase(103) -> <<"Early Hints">>;
reason_phrase(200) -> <<"OK">>;
reason_phrase(201) -> <<"Created">>;
reason_phrase(202) -> <<"Accepted">>;
reason_phrase(203) -> <<"Non-Authoritative Information">>;
reason_phrase(204) -> <<"No Content">>;
reason_phrase(205) -> <<"Reset Content">>;
reason_phrase(206) -> <<"Partial Content">>;
reason_phrase(207) -> <<"Multi-Status">>;
reason_phrase(300) -> <<"Multiple Choices">>;
reason_phrase(301) -> <<"Moved Permanently">>;
reason_phrase(302) -> <<"Found">>;
reason_phrase(303) -> <<"See Other">>;
reason_phrase(304) -> <<"Not Modified">>;
reason_phrase(307) -> <<"Temporary Redirect">>;
reason_phrase(308) -> <<"Permanent Redirect">>;
reason_phrase(400) -> <<"Bad Request">>;
reason_phrase(401) -> <<"Unauthorized">>;
reason_phrase(402) -> <<"Payment Required">>;
reason_phrase(403) -> <<"Forbidden">>;
reason_phrase(404) -> <<"Not Found">>;
reason_phrase(405) -> <<"Method Not Allowed">>;
reason_phrase(406) -> <<"Not Acceptable">>;
reason_phrase(407) -> <<"Proxy Authentication Required">>;
reason_phrase(408) -> <<"Request Timeout">>;
reason_phrase(409) -> <<"Conflict">>;
reason_phrase(410) -> <<"Gone">>;
reason_phrase(411) -> <<"Length Required">>;
reason_phrase(412) -> <<"Precondition Failed">>;
reason_phrase(413) -> <<"Content Too Large">>;
reason_phrase(414) -> <<"URI Too Long">>;
reason_phrase(415) -> <<"Unsupported Media Type">>;
reason_phrase(416) -> <<"Range Not Satisfiable">>;
reason_phrase(417) -> <<"Expectation Failed">>;
reason_phrase(421) -> <<"Misdirected Request">>;
reason_phrase(422) -> <<"Unprocessable Content">>;
reason_phrase(425) -> <<"Too Early">>;
reason_phrase(426) -> <<"Upgrade Required">>;
reason_phrase(428) -> <<"Precondition Required">>;
reason_phrase(429) -> <<"Too Many Requests">>;
reason_phrase(431) -> <<"Request Header Fields Too Large">>;
reason_phrase(451) -> <<"Unavailable For Legal Reasons">>;
reason_phrase(500) -> <<"Internal Server Error">>;
reason_phrase(501) -> <<"Not Implemented">>;
reason_phrase(502) -> <<"Bad Gateway">>;
reason_phrase(503) -> <<"Service Unavailable">>;
reason_phrase(504) -> <<"Gateway Timeout">>;
reason_phrase(505) -> <<"HTTP Version Not Supported">>;
reason_phrase(_) -> <<"Unknown">>.

%% Statuses whose responses never have a body (RFC 9110 6.4.1): 1xx, 204
%% and 304.
-spec no_body_status(100..999 | binary()) -> boolean().
no_body_status(Status) when is_integer(Status) ->
	Status =:= 204 orelse Status =:= 304 orelse (Status >= 100 andalso Status < 200);
no_body_status(<<S1, S2, S3, _/bits>>) ->
	no_body_status(list_to_integer([S1, S2, S3])).
