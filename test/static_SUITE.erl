%% mustang_static, through real requests: files of a directory tree built in
%% init_per_suite (with symbolic links in and out of it), a file, a priv
%% directory inside an .ez archive built with zip:create/2.
%%
%% The tests of tests() run in the four groups of mustang_test: inline and
%% process (HTTP/1.1), h2c and h2 (HTTP/2, over TLS), through the
%% transport-neutral client, which sends the path as written (no dot segment
%% removal). The group clients runs real clients against a clear and a TLS
%% listener: curl (-r ranges, --path-as-is traversal, HTTP/1.1 over TLS
%% where the body is read and sent in pieces, h2c) and httpx (HTTP/2 over
%% TLS).
%%
%% Traversal: every attempt must answer 403 or 404 without the secret's
%% bytes; the router has already removed "." and ".." segments (decoded ones
%% too), so some attempts are 404s of the router and the rest are refused by
%% mustang_static_path.
-module(static_SUITE).
-compile([export_all, nowarn_export_all]).

-include_lib("common_test/include/ct.hrl").
-include_lib("stdlib/include/assert.hrl").
-include_lib("kernel/include/file.hrl").

-import(mustang_test, [header/2, doc/1]).

-define(SECRET, <<"SECRET outside the root">>).
-define(INDEX, <<"<!DOCTYPE html><title>index</title>\n">>).
-define(BIG_SIZE, 1500000).

suite() ->
	[{timetrap, {seconds, 120}}].

all() ->
	mustang_test:common_all(all) ++ [{group, clients}].

groups() ->
	mustang_test:common_groups(all, tests()) ++ [{clients, [], clients_tests()}].

tests() ->
	[
		get_file,
		get_big_file,
		head_file,
		get_empty_file,
		file_option,
		not_found,
		file_option_not_found,
		directory_forbidden,
		dir_without_path_info,
		traversal_dotdot,
		traversal_encoded_dotdot,
		traversal_encoded_slash,
		traversal_nul,
		traversal_backslash,
		traversal_symlink_relative,
		traversal_symlink_absolute,
		traversal_symlink_dir,
		symlink_inside,
		root_through_symlink,
		method_not_allowed,
		method_unknown,
		options,
		not_acceptable,
		acceptable_wildcard,
		if_none_match,
		if_none_match_other,
		if_modified_since,
		if_modified_since_earlier,
		if_match_fails,
		if_match_succeeds,
		if_match_missing_file,
		if_unmodified_since_fails,
		range_single,
		range_suffix,
		range_open,
		range_big_file,
		range_multiple,
		range_multiple_big_file,
		range_unsatisfiable,
		range_amplification_refused,
		range_invalid_ignored,
		range_head_ignored,
		if_range_etag,
		if_range_etag_other,
		if_range_date,
		if_range_date_other,
		etag_custom,
		etag_false,
		mimetypes_default_web,
		mimetypes_all,
		mimetypes_custom,
		mimetypes_forced,
		charset,
		charset_mf,
		charset_not_acceptable,
		ez_file,
		ez_not_found,
		ez_range,
		ez_traversal,
		priv_file
	].

clients_tests() ->
	[
		curl_get,
		curl_range,
		curl_multirange,
		curl_path_as_is_traversal,
		curl_tls_http1_big,
		curl_h2c_range,
		httpx_h2_tls_range
	].

init_per_suite(Config) ->
	{ok, _} = application:ensure_all_started(mustang),
	Priv = ?config(priv_dir, Config),
	{ok, Tmp} = mustang_static_path:realpath(Priv),
	Root = filename:join(Tmp, "root"),
	ok = filelib:ensure_dir(filename:join([Root, "sub", "x"])),
	Big = rand:bytes(?BIG_SIZE),
	Files = [
		{"index.html", ?INDEX},
		{"style.css", <<"body { color: black; }\n">>},
		{"digits.txt", <<"0123456789abcdefghijklmnopqrstuvwxyz">>},
		{"empty.txt", <<>>},
		{"big.bin", Big},
		{"archive.tar", <<"not really a tar">>},
		{"back\\slash.txt", <<"backslash in the name">>},
		{"sub/inner.txt", <<"inner file">>}
	],
	[ok = file:write_file(filename:join(Root, N), C) || {N, C} <- Files],
	ok = file:write_file(filename:join(Tmp, "secret.txt"), ?SECRET),
	ok = file:make_symlink("sub/inner.txt", filename:join(Root, "in")),
	ok = file:make_symlink("../secret.txt", filename:join(Root, "out")),
	ok = file:make_symlink(filename:join(Tmp, "secret.txt"), filename:join(Root, "abs")),
	ok = file:make_symlink("..", filename:join(Root, "dirout")),
	ok = file:make_symlink("root", filename:join(Tmp, "rootlink")),
	ok = ez_app(Tmp),
	%% Not the big file's bytes: CT prints the Config of every test.
	[{suite, ?MODULE}, {root, Root}, {tmp, Tmp} | Config].

%% static_ez-1.0.ez holding static_ez-1.0/ebin/static_ez.app and
%% static_ez-1.0/priv/www/hello.txt, its ebin in the code path: code:priv_dir
%% then points inside the archive.
ez_app(Tmp) ->
	Ez = binary_to_list(filename:join(Tmp, "static_ez-1.0.ez")),
	App = <<"{application, static_ez, [{vsn, \"1.0\"}, {modules, []}, "
		"{applications, [kernel, stdlib]}]}.">>,
	{ok, _} = zip:create(Ez, [
		{"static_ez-1.0/ebin/static_ez.app", App},
		{"static_ez-1.0/priv/www/hello.txt", <<"hello from the archive">>},
		{"static_ez-1.0/priv/secret.txt", ?SECRET}
	]),
	true = code:add_patha(filename:join([Ez, "static_ez-1.0", "ebin"])),
	ok.

end_per_suite(_) ->
	_ = code:del_path(static_ez),
	ok.

routes(Config) ->
	Root = ?config(root, Config),
	Dir = fun(Extra) -> {dir, Root, Extra} end,
	[{'_', [
		{"/static/[...]", mustang_static, {dir, Root}},
		{"/file", mustang_static, {file, filename:join(Root, "index.html")}},
		{"/missing_file", mustang_static, {file, filename:join(Root, "missing.html")}},
		{"/no_path_info", mustang_static, {dir, Root}},
		{"/rootlink/[...]", mustang_static, {dir, filename:join(?config(tmp, Config), "rootlink")}},
		{"/etag_custom/[...]", mustang_static, Dir([{etag, ?MODULE, custom_etag}])},
		{"/etag_false/[...]", mustang_static, Dir([{etag, false}])},
		{"/mime_all/[...]", mustang_static, Dir([{mimetypes, mustang_mimetypes, all}])},
		{"/mime_custom/[...]", mustang_static, Dir([{mimetypes, ?MODULE, custom_mimetype}])},
		{"/mime_forced/[...]", mustang_static, Dir([{mimetypes, <<"application/vnd.test">>}])},
		{"/mime_forced_tuple/[...]", mustang_static,
			Dir([{mimetypes, {<<"text">>, <<"plain">>, [{<<"a">>, <<"b">>}]}}])},
		{"/charset/[...]", mustang_static, Dir([{charset, <<"utf-8">>}])},
		{"/charset_mf/[...]", mustang_static, Dir([{charset, ?MODULE, custom_charset}])},
		{"/ez/[...]", mustang_static, {priv_dir, static_ez, "www"}},
		{"/priv_file", mustang_static, {priv_file, mustang, "gen_hpack_huffman.escript"}}
	]}].

custom_etag(Path, Size, _Mtime) ->
	{strong, iolist_to_binary([filename:basename(Path), $-, integer_to_binary(Size)])}.

custom_mimetype(_) ->
	{<<"text">>, <<"x-custom">>, []}.

custom_charset(_) ->
	<<"iso-8859-1">>.

init_per_group(clients, Config) ->
	Curl = case os:find_executable("curl") of
		false -> ct:fail("curl not found: run scripts/setup.sh");
		C -> C
	end,
	Python = mustang_test:require_python(mustang_test:python(), ["httpx", "h2"]),
	Clear = mustang_test:start_listener({?MODULE, clients}, routes(Config), inline, #{}),
	{ok, _} = mustang:start_tls({?MODULE, clients_tls},
		#{port => 0, socket_opts => mustang_demo:tls_opts()},
		#{env => #{dispatch => mustang_router:compile(routes(Config))}}),
	[{curl, Curl}, {python, Python}, {port, Clear},
		{tls_port, mustang:get_port({?MODULE, clients_tls})} | Config];
init_per_group(Group, Config) ->
	mustang_test:init_group(Group, Config, routes(Config), #{}).

end_per_group(clients, _) ->
	mustang_test:stop_listener({?MODULE, clients}),
	mustang_test:stop_listener({?MODULE, clients_tls});
end_per_group(_, Config) ->
	mustang_test:end_group(Config).

%% Helpers.

req(Config, Method, Path) ->
	req(Config, Method, Path, []).

req(Config, Method, Path, Headers) ->
	mustang_test:request(Config, Method, Path, Headers, none).

get(Config, Path) ->
	req(Config, "GET", Path).

get(Config, Path, Headers) ->
	req(Config, "GET", Path, Headers).

status(#{status := Status}) -> Status.

body(#{body := Body}) -> Body.

content_type(Config, Path) ->
	header(<<"content-type">>, get(Config, Path)).

big(Config) ->
	file(Config, "big.bin").

file(Config, Name) ->
	{ok, Bin} = file:read_file(filename:join(?config(root, Config), Name)),
	Bin.

%% A refused path: 403 or 404, and never a byte of the secret.
assert_refused(Config, Path) ->
	Resp = get(Config, Path),
	?assert(lists:member(status(Resp), [403, 404]), {Path, Resp}),
	?assertEqual(nomatch, binary:match(body(Resp), <<"SECRET">>)),
	status(Resp).

validators(Config, Path) ->
	Resp = get(Config, Path),
	200 = status(Resp),
	{header(<<"etag">>, Resp), header(<<"last-modified">>, Resp)}.

%% The parts of a multipart/byteranges response: [{Headers, Body}].
byteranges(Resp) ->
	<<"multipart/byteranges; boundary=", Boundary/binary>> = header(<<"content-type">>, Resp),
	Body = body(Resp),
	[<<>> | Parts] = binary:split(Body, <<"--", Boundary/binary>>, [global]),
	{Last, [<<"--\r\n">>]} = lists:split(length(Parts) - 1, Parts),
	[begin
		<<"\r\n", Part1/binary>> = Part,
		[Head, Data0] = binary:split(Part1, <<"\r\n\r\n">>),
		DataSize = byte_size(Data0) - 2,
		<<Data:DataSize/binary, "\r\n">> = Data0,
		Headers = [list_to_tuple(binary:split(H, <<": ">>))
			|| H <- binary:split(Head, <<"\r\n">>, [global])],
		{Headers, Data}
	end || Part <- Last].

%% Files.

get_file(Config) ->
	doc("A file of the directory: 200, its bytes, its media type, validators and "
		"accept-ranges: bytes."),
	Resp = get(Config, "/static/index.html"),
	?assertMatch(#{status := 200, body := ?INDEX}, Resp),
	?assertEqual(<<"text/html">>, header(<<"content-type">>, Resp)),
	?assertEqual(integer_to_binary(byte_size(?INDEX)), header(<<"content-length">>, Resp)),
	?assertEqual(<<"bytes">>, header(<<"accept-ranges">>, Resp)),
	?assertMatch(<<$", _/binary>>, header(<<"etag">>, Resp)),
	{ok, #file_info{mtime = Mtime}} = file:read_file_info(
		filename:join(?config(root, Config), "index.html"), [{time, universal}]),
	?assertEqual(mustang_date:rfc7231(Mtime), header(<<"last-modified">>, Resp)).

get_big_file(Config) ->
	doc("A 1.5 MB file comes whole (sendfile over TCP, pieces as windows open "
		"over HTTP/2 and TLS)."),
	Resp = get(Config, "/static/big.bin"),
	?assertEqual(200, status(Resp)),
	?assertEqual(big(Config), body(Resp)),
	?assertEqual(<<"application/octet-stream">>, header(<<"content-type">>, Resp)).

head_file(Config) ->
	doc("HEAD: the GET's headers, content-length the file's size, no body. "
		"(RFC 9110 9.3.2)"),
	Resp = req(Config, "HEAD", "/static/big.bin"),
	?assertMatch(#{status := 200, body := <<>>}, Resp),
	?assertEqual(integer_to_binary(?BIG_SIZE), header(<<"content-length">>, Resp)),
	?assertEqual(<<"bytes">>, header(<<"accept-ranges">>, Resp)).

get_empty_file(Config) ->
	doc("An empty file: 200 with content-length 0."),
	Resp = get(Config, "/static/empty.txt"),
	?assertMatch(#{status := 200, body := <<>>}, Resp),
	?assertEqual(<<"0">>, header(<<"content-length">>, Resp)).

file_option(Config) ->
	doc("{file, Path} serves that file."),
	?assertMatch(#{status := 200, body := ?INDEX}, get(Config, "/file")).

not_found(Config) ->
	doc("A missing file of the directory: 404."),
	?assertEqual(404, status(get(Config, "/static/missing.html"))),
	?assertEqual(404, status(get(Config, "/static/sub/missing/deeper"))),
	?assertEqual(404, status(get(Config, "/static/index.html/under_a_file"))).

file_option_not_found(Config) ->
	doc("{file, Path} of a missing file: 404."),
	?assertEqual(404, status(get(Config, "/file_missing"))),
	?assertEqual(404, status(get(Config, "/missing_file"))).

directory_forbidden(Config) ->
	doc("A directory is not listed: 403, for the root and a subdirectory."),
	?assertEqual(403, status(get(Config, "/static/sub"))),
	?assertEqual(403, status(get(Config, "/static/sub/"))),
	?assertEqual(403, status(get(Config, "/static"))).

dir_without_path_info(Config) ->
	doc("A dir route without [...] has no path_info: a configuration error, 500."),
	?assertEqual(500, status(get(Config, "/no_path_info"))).

%% Traversal.

traversal_dotdot(Config) ->
	doc("'..' segments never leave the directory."),
	[assert_refused(Config, P) || P <- ["/static/../secret.txt", "/static/sub/../../secret.txt",
		"/static/../../../../../../etc/passwd", "/static/..", "/static/sub/../.."]],
	%% Inside the directory, '..' is only a path.
	?assertMatch(#{status := 200, body := ?INDEX}, get(Config, "/static/sub/../index.html")).

traversal_encoded_dotdot(Config) ->
	doc("Percent-encoded '..' (%2e%2e, %2E%2E, .%2e) never leaves the directory."),
	[assert_refused(Config, P) || P <- ["/static/%2e%2e/secret.txt", "/static/%2E%2E/secret.txt",
		"/static/sub/.%2e/%2e%2e/secret.txt", "/static/%2e%2e/%2e%2e/etc/passwd"]].

traversal_encoded_slash(Config) ->
	doc("%2F decodes to a '/' inside one segment: refused, 403, even where it "
		"would name a file inside."),
	?assertEqual(403, assert_refused(Config, "/static/..%2fsecret.txt")),
	?assertEqual(403, assert_refused(Config, "/static/sub%2F..%2F..%2Fsecret.txt")),
	?assertEqual(403, assert_refused(Config, "/static/%2Fetc%2Fpasswd")),
	?assertEqual(403, assert_refused(Config, "/static/sub%2finner.txt")).

traversal_nul(Config) ->
	doc("A NUL (%00) in a segment: 403."),
	?assertEqual(403, assert_refused(Config, "/static/index.html%00.png")),
	?assertEqual(403, assert_refused(Config, "/static/%00")).

traversal_backslash(Config) ->
	doc("A backslash (%5C) in a segment: 403, even for a file whose name has one."),
	?assertEqual(403, assert_refused(Config, "/static/..%5Csecret.txt")),
	?assertEqual(403, assert_refused(Config, "/static/sub%5C..%5C..%5Csecret.txt")),
	?assertEqual(403, assert_refused(Config, "/static/back%5Cslash.txt")).

traversal_symlink_relative(Config) ->
	doc("A relative symbolic link to a file out of the directory: 403."),
	?assertEqual(403, assert_refused(Config, "/static/out")).

traversal_symlink_absolute(Config) ->
	doc("An absolute symbolic link to a file out of the directory: 403."),
	?assertEqual(403, assert_refused(Config, "/static/abs")).

traversal_symlink_dir(Config) ->
	doc("A symbolic link to the parent directory: what is under it is refused, 403, "
		"unless its real path leads back inside."),
	?assertEqual(403, assert_refused(Config, "/static/dirout/secret.txt")),
	?assertMatch(#{status := 200, body := ?INDEX}, get(Config, "/static/dirout/root/index.html")).

symlink_inside(Config) ->
	doc("A symbolic link to a file inside the directory is served."),
	?assertMatch(#{status := 200, body := <<"inner file">>}, get(Config, "/static/in")).

root_through_symlink(Config) ->
	doc("A directory option that is itself a symbolic link works (its real path is "
		"the root), and still refuses links out."),
	?assertMatch(#{status := 200, body := ?INDEX}, get(Config, "/rootlink/index.html")),
	?assertEqual(403, assert_refused(Config, "/rootlink/out")).

%% Methods and negotiation.

method_not_allowed(Config) ->
	doc("POST, PUT, DELETE: 405 with allow. (RFC 9110 15.5.6)"),
	[begin
		Resp = req(Config, M, "/static/index.html"),
		?assertEqual(405, status(Resp)),
		?assertEqual(<<"HEAD, GET, OPTIONS">>, header(<<"allow">>, Resp))
	end || M <- ["POST", "PUT", "DELETE"]].

method_unknown(Config) ->
	doc("A method no resource knows: 501. (RFC 9110 9.1)"),
	?assertEqual(501, status(req(Config, "BREW", "/static/index.html"))).

options(Config) ->
	doc("OPTIONS: 200 with allow."),
	Resp = req(Config, "OPTIONS", "/static/index.html"),
	?assertEqual(200, status(Resp)),
	?assertEqual(<<"HEAD, GET, OPTIONS">>, header(<<"allow">>, Resp)).

not_acceptable(Config) ->
	doc("accept without the file's type: 406. (RFC 9110 12.5.1)"),
	?assertEqual(406, status(get(Config, "/static/index.html", [{"accept", "application/json"}]))),
	?assertEqual(406, status(get(Config, "/static/index.html",
		[{"accept", "text/html;q=0, */*;q=1"}]))).

acceptable_wildcard(Config) ->
	doc("accept with a range that takes the type: 200."),
	?assertEqual(200, status(get(Config, "/static/index.html", [{"accept", "text/*"}]))),
	?assertEqual(200, status(get(Config, "/static/index.html",
		[{"accept", "application/json, */*;q=0.1"}]))).

%% Conditional requests.

if_none_match(Config) ->
	doc("If-None-Match with the etag: 304 with the etag, no body. (RFC 9110 13.1.2, "
		"15.4.5)"),
	{ETag, _} = validators(Config, "/static/index.html"),
	Resp = get(Config, "/static/index.html", [{"if-none-match", ETag}]),
	?assertMatch(#{status := 304, body := <<>>}, Resp),
	?assertEqual(ETag, header(<<"etag">>, Resp)),
	?assertEqual(304, status(get(Config, "/static/index.html",
		[{"if-none-match", <<"\"x\", W/", ETag/binary>>}]))),
	?assertEqual(304, status(get(Config, "/static/index.html", [{"if-none-match", "*"}]))).

if_none_match_other(Config) ->
	doc("If-None-Match with another etag: 200."),
	?assertMatch(#{status := 200, body := ?INDEX}, get(Config, "/static/index.html",
		[{"if-none-match", "\"other\""}])).

if_modified_since(Config) ->
	doc("If-Modified-Since at the modification time: 304. (RFC 9110 13.1.3)"),
	{_, Modified} = validators(Config, "/static/index.html"),
	?assertMatch(#{status := 304, body := <<>>}, get(Config, "/static/index.html",
		[{"if-modified-since", Modified}])).

if_modified_since_earlier(Config) ->
	doc("If-Modified-Since before the modification time, or invalid: 200; and "
		"If-None-Match wins over it (RFC 9110 13.2.2)."),
	?assertEqual(200, status(get(Config, "/static/index.html",
		[{"if-modified-since", "Sun, 06 Nov 1994 08:49:37 GMT"}]))),
	?assertEqual(200, status(get(Config, "/static/index.html",
		[{"if-modified-since", "yesterday"}]))),
	{_, Modified} = validators(Config, "/static/index.html"),
	?assertEqual(200, status(get(Config, "/static/index.html",
		[{"if-modified-since", Modified}, {"if-none-match", "\"other\""}]))).

if_match_fails(Config) ->
	doc("If-Match with another etag, or a weak one: 412. (RFC 9110 13.1.1)"),
	{ETag, _} = validators(Config, "/static/index.html"),
	?assertEqual(412, status(get(Config, "/static/index.html", [{"if-match", "\"other\""}]))),
	?assertEqual(412, status(get(Config, "/static/index.html",
		[{"if-match", <<"W/", ETag/binary>>}]))).

if_match_succeeds(Config) ->
	doc("If-Match with the etag or *: 200."),
	{ETag, _} = validators(Config, "/static/index.html"),
	?assertEqual(200, status(get(Config, "/static/index.html", [{"if-match", ETag}]))),
	?assertEqual(200, status(get(Config, "/static/index.html", [{"if-match", "*"}]))).

if_match_missing_file(Config) ->
	doc("If-Match of a missing file: 412, not 404. (RFC 9110 13.1.1)"),
	?assertEqual(412, status(get(Config, "/static/missing.html", [{"if-match", "*"}]))).

if_unmodified_since_fails(Config) ->
	doc("If-Unmodified-Since before the modification time: 412; at it: 200. "
		"(RFC 9110 13.1.4)"),
	?assertEqual(412, status(get(Config, "/static/index.html",
		[{"if-unmodified-since", "Sun, 06 Nov 1994 08:49:37 GMT"}]))),
	{_, Modified} = validators(Config, "/static/index.html"),
	?assertEqual(200, status(get(Config, "/static/index.html",
		[{"if-unmodified-since", Modified}]))).

%% Ranges.

range_single(Config) ->
	doc("One range: 206 with content-range and those bytes. (RFC 9110 14.4)"),
	Resp = get(Config, "/static/digits.txt", [{"range", "bytes=2-5"}]),
	?assertMatch(#{status := 206, body := <<"2345">>}, Resp),
	?assertEqual(<<"bytes 2-5/36">>, header(<<"content-range">>, Resp)),
	?assertEqual(<<"4">>, header(<<"content-length">>, Resp)),
	?assertEqual(<<"text/plain">>, header(<<"content-type">>, Resp)),
	%% A last position past the end is the end (RFC 9110 14.1.2).
	Resp2 = get(Config, "/static/digits.txt", [{"range", "bytes=30-1000"}]),
	?assertMatch(#{status := 206, body := <<"uvwxyz">>}, Resp2),
	?assertEqual(<<"bytes 30-35/36">>, header(<<"content-range">>, Resp2)).

range_suffix(Config) ->
	doc("A suffix range: the last N bytes; more than the size is the whole file."),
	Resp = get(Config, "/static/digits.txt", [{"range", "bytes=-3"}]),
	?assertMatch(#{status := 206, body := <<"xyz">>}, Resp),
	?assertEqual(<<"bytes 33-35/36">>, header(<<"content-range">>, Resp)),
	Resp2 = get(Config, "/static/digits.txt", [{"range", "bytes=-100"}]),
	?assertEqual(206, status(Resp2)),
	?assertEqual(file(Config, "digits.txt"), body(Resp2)),
	?assertEqual(<<"bytes 0-35/36">>, header(<<"content-range">>, Resp2)).

range_open(Config) ->
	doc("An open range: from First to the end."),
	Resp = get(Config, "/static/digits.txt", [{"range", "bytes=32-"}]),
	?assertMatch(#{status := 206, body := <<"wxyz">>}, Resp),
	?assertEqual(<<"bytes 32-35/36">>, header(<<"content-range">>, Resp)).

range_big_file(Config) ->
	doc("One range across most of a 1.5 MB file: the exact bytes."),
	Big = big(Config),
	Resp = get(Config, "/static/big.bin", [{"range", "bytes=1000-1400999"}]),
	?assertEqual(206, status(Resp)),
	?assertEqual(binary:part(Big, 1000, 1400000), body(Resp)),
	?assertEqual(<<"bytes 1000-1400999/1500000">>, header(<<"content-range">>, Resp)).

range_multiple(Config) ->
	doc("Several ranges: 206 multipart/byteranges, one part per range in the order "
		"asked, each with content-type and content-range. (RFC 9110 14.6)"),
	Resp = get(Config, "/static/digits.txt", [{"range", "bytes=30-, 0-1,-2"}]),
	?assertEqual(206, status(Resp)),
	?assertEqual(undefined, header(<<"content-range">>, Resp)),
	?assertEqual([
		{[{<<"content-type">>, <<"text/plain">>}, {<<"content-range">>, <<"bytes 30-35/36">>}],
			<<"uvwxyz">>},
		{[{<<"content-type">>, <<"text/plain">>}, {<<"content-range">>, <<"bytes 0-1/36">>}],
			<<"01">>},
		{[{<<"content-type">>, <<"text/plain">>}, {<<"content-range">>, <<"bytes 34-35/36">>}],
			<<"yz">>}
	], byteranges(Resp)),
	%% Unsatisfiable ranges are left out.
	Resp2 = get(Config, "/static/digits.txt", [{"range", "bytes=100-200,1-2,3-3"}]),
	?assertMatch([{_, <<"12">>}, {_, <<"3">>}], byteranges(Resp2)).

range_multiple_big_file(Config) ->
	doc("Three ranges of a 1.5 MB file, each larger than an HTTP/2 window: every part "
		"exact (sendfile parts)."),
	Big = big(Config),
	Resp = get(Config, "/static/big.bin", [{"range", "bytes=0-99999,500000-699999,-300000"}]),
	?assertEqual(206, status(Resp)),
	?assertEqual([binary:part(Big, 0, 100000), binary:part(Big, 500000, 200000),
		binary:part(Big, 1200000, 300000)], [D || {_, D} <- byteranges(Resp)]).

range_unsatisfiable(Config) ->
	doc("No satisfiable range: 416 with content-range: bytes */Size. (RFC 9110 15.5.17)"),
	[begin
		Resp = get(Config, "/static/digits.txt", [{"range", R}]),
		?assertEqual(416, status(Resp), R),
		?assertEqual(<<"bytes */36">>, header(<<"content-range">>, Resp))
	end || R <- ["bytes=36-", "bytes=100-200", "bytes=-0", "bytes=36-40,50-"]],
	Resp = get(Config, "/static/empty.txt", [{"range", "bytes=0-"}]),
	?assertEqual(416, status(Resp)),
	?assertEqual(<<"bytes */0">>, header(<<"content-range">>, Resp)).

range_amplification_refused(Config) ->
	doc("Ranges that add up to more than the file (overlaps), or more than 64 ranges: "
		"refused, 416 with content-range: bytes */Size. (RFC 9110 14.2)"),
	Resp = get(Config, "/static/big.bin", [{"range", "bytes=0-,0-,0-,0-"}]),
	?assertMatch(#{status := 416, body := <<>>}, Resp),
	?assertEqual(<<"bytes */1500000">>, header(<<"content-range">>, Resp)),
	Many = ["bytes=", lists:join(",", [integer_to_list(N) ++ "-" ++ integer_to_list(N)
		|| N <- lists:seq(0, 64)])],
	?assertEqual(416, status(get(Config, "/static/big.bin", [{"range", Many}]))),
	%% 64 ranges are fine.
	Max = ["bytes=", lists:join(",", [integer_to_list(N) ++ "-" ++ integer_to_list(N)
		|| N <- lists:seq(0, 63)])],
	?assertEqual(206, status(get(Config, "/static/big.bin", [{"range", Max}]))).

range_invalid_ignored(Config) ->
	doc("A Range header that does not parse, or of another unit: 200, the whole file. "
		"(RFC 9110 14.2)"),
	[?assertMatch(#{status := 200, body := <<"0123456789", _/binary>>},
		get(Config, "/static/digits.txt", [{"range", R}]))
		|| R <- ["bytes=5-1", "bytes=x", "items=0-1", "bytes="]].

range_head_ignored(Config) ->
	doc("Range is only for GET (RFC 9110 14.2): HEAD gets 200."),
	Resp = req(Config, "HEAD", "/static/digits.txt", [{"range", "bytes=0-1"}]),
	?assertEqual(200, status(Resp)),
	?assertEqual(<<"36">>, header(<<"content-length">>, Resp)).

if_range_etag(Config) ->
	doc("If-Range with the etag: the range. (RFC 9110 13.1.5)"),
	{ETag, _} = validators(Config, "/static/digits.txt"),
	?assertMatch(#{status := 206, body := <<"01">>}, get(Config, "/static/digits.txt",
		[{"range", "bytes=0-1"}, {"if-range", ETag}])).

if_range_etag_other(Config) ->
	doc("If-Range with another etag, or the etag made weak: the whole file, 200."),
	{ETag, _} = validators(Config, "/static/digits.txt"),
	[?assertMatch(#{status := 200, body := <<"0123456789", _/binary>>},
		get(Config, "/static/digits.txt", [{"range", "bytes=0-1"}, {"if-range", IfRange}]))
		|| IfRange <- [<<"\"other\"">>, <<"W/", ETag/binary>>, <<"garbage">>]].

if_range_date(Config) ->
	doc("If-Range with the modification time: the range."),
	{_, Modified} = validators(Config, "/static/digits.txt"),
	?assertMatch(#{status := 206, body := <<"01">>}, get(Config, "/static/digits.txt",
		[{"range", "bytes=0-1"}, {"if-range", Modified}])).

if_range_date_other(Config) ->
	doc("If-Range with another date: the whole file, 200."),
	?assertMatch(#{status := 200, body := <<"0123456789", _/binary>>},
		get(Config, "/static/digits.txt",
			[{"range", "bytes=0-1"}, {"if-range", "Sun, 06 Nov 1994 08:49:37 GMT"}])).

%% Options.

etag_custom(Config) ->
	doc("{etag, M, F}: M:F(Path, Size, Mtime) is the etag, and conditions use it."),
	Resp = get(Config, "/etag_custom/digits.txt"),
	?assertEqual(<<"\"digits.txt-36\"">>, header(<<"etag">>, Resp)),
	?assertEqual(304, status(get(Config, "/etag_custom/digits.txt",
		[{"if-none-match", "\"digits.txt-36\""}]))).

etag_false(Config) ->
	doc("{etag, false}: no etag header; If-Match then fails (412)."),
	Resp = get(Config, "/etag_false/digits.txt"),
	?assertEqual(200, status(Resp)),
	?assertEqual(undefined, header(<<"etag">>, Resp)),
	?assertNotEqual(undefined, header(<<"last-modified">>, Resp)),
	?assertEqual(412, status(get(Config, "/etag_false/digits.txt", [{"if-match", "\"x\""}]))).

mimetypes_default_web(Config) ->
	doc("The default table is the web one: css known, tar not."),
	?assertEqual(<<"text/css">>, content_type(Config, "/static/style.css")),
	?assertEqual(<<"application/octet-stream">>, content_type(Config, "/static/archive.tar")).

mimetypes_all(Config) ->
	doc("{mimetypes, mustang_mimetypes, all}: every type of /etc/mime.types."),
	?assertEqual(<<"application/x-tar">>, content_type(Config, "/mime_all/archive.tar")).

mimetypes_custom(Config) ->
	doc("{mimetypes, M, F}: M:F(Path) is the type."),
	?assertEqual(<<"text/x-custom">>, content_type(Config, "/mime_custom/index.html")).

mimetypes_forced(Config) ->
	doc("{mimetypes, Type}: that type for every file, binary or parsed."),
	?assertEqual(<<"application/vnd.test">>, content_type(Config, "/mime_forced/index.html")),
	?assertEqual(<<"text/plain; a=b">>, content_type(Config, "/mime_forced_tuple/index.html")).

charset(Config) ->
	doc("{charset, Charset}: a charset parameter on the content type."),
	?assertEqual(<<"text/html; charset=utf-8">>, content_type(Config, "/charset/index.html")).

charset_mf(Config) ->
	doc("{charset, M, F}: M:F(Path) is the charset."),
	?assertEqual(<<"text/html; charset=iso-8859-1">>, content_type(Config, "/charset_mf/index.html")).

charset_not_acceptable(Config) ->
	doc("accept-charset without the charset: 406; with it or *: 200. (RFC 9110 12.5.2)"),
	?assertEqual(406, status(get(Config, "/charset/index.html",
		[{"accept-charset", "iso-8859-1"}]))),
	?assertEqual(200, status(get(Config, "/charset/index.html",
		[{"accept-charset", "iso-8859-1, UTF-8;q=0.5"}]))),
	?assertEqual(200, status(get(Config, "/charset/index.html", [{"accept-charset", "*"}]))).

%% Priv directories.

ez_file(Config) ->
	doc("{priv_dir, App, Dir} with the application in an .ez archive: the member's "
		"bytes, its type, validators."),
	Resp = get(Config, "/ez/hello.txt"),
	?assertMatch(#{status := 200, body := <<"hello from the archive">>}, Resp),
	?assertEqual(<<"text/plain">>, header(<<"content-type">>, Resp)),
	?assertNotEqual(undefined, header(<<"etag">>, Resp)),
	?assertEqual(304, status(get(Config, "/ez/hello.txt",
		[{"if-none-match", header(<<"etag">>, Resp)}]))).

ez_not_found(Config) ->
	doc("A name the archive does not hold: 404."),
	?assertEqual(404, status(get(Config, "/ez/missing.txt"))).

ez_range(Config) ->
	doc("Ranges of an archive member (a binary body): 206, and multipart."),
	?assertMatch(#{status := 206, body := <<"from">>},
		get(Config, "/ez/hello.txt", [{"range", "bytes=6-9"}])),
	?assertMatch([{_, <<"he">>}, {_, <<"ve">>}],
		byteranges(get(Config, "/ez/hello.txt", [{"range", "bytes=0-1,-2"}]))).

ez_traversal(Config) ->
	doc("Out of the archive's priv/www: refused, 403 or 404."),
	[assert_refused(Config, P) || P <- ["/ez/../secret.txt", "/ez/%2e%2e/secret.txt",
		"/ez/..%2fsecret.txt", "/ez/..%5Csecret.txt"]].

priv_file(Config) ->
	doc("{priv_file, App, File} of an application in a directory."),
	{ok, Bin} = file:read_file(filename:join(code:priv_dir(mustang), "gen_hpack_huffman.escript")),
	?assertMatch(#{status := 200, body := Bin}, get(Config, "/priv_file")).

%% Real clients.

curl(Config, Args) ->
	mustang_test:run(?config(curl, Config), ["-s", "--max-time", "30" | Args], 60000).

url(Config, Path) ->
	"http://127.0.0.1:" ++ integer_to_list(?config(port, Config)) ++ Path.

curl_get(Config) ->
	doc("curl GET: the file, with its headers (-i)."),
	{0, Out} = curl(Config, ["-i", url(Config, "/static/index.html")]),
	[Head, Body] = binary:split(Out, <<"\r\n\r\n">>),
	?assertEqual(?INDEX, Body),
	?assertMatch({match, _}, re:run(Head, "^HTTP/1.1 200 ", [])),
	?assertMatch({match, _}, re:run(Head, "\r\ncontent-type: text/html\r\n", [])).

curl_range(Config) ->
	doc("curl -r 2-5 gets 206 and those bytes; -r -3 the last three."),
	?assertEqual({0, <<"2345 206">>},
		curl(Config, ["-r", "2-5", "-w", " %{http_code}", url(Config, "/static/digits.txt")])),
	?assertEqual({0, <<"xyz 206">>},
		curl(Config, ["-r", "-3", "-w", " %{http_code}", url(Config, "/static/digits.txt")])).

curl_multirange(Config) ->
	doc("curl -r 0-1,4-5: a multipart/byteranges body curl reads whole."),
	{0, Out} = curl(Config, ["-r", "0-1,4-5", "-w", "\n%{http_code} %{content_type}",
		url(Config, "/static/digits.txt")]),
	?assertMatch({match, _}, re:run(Out, "\r\n\r\n01\r\n--.*\r\n\r\n45\r\n--.*--\r\n\n"
		"206 multipart/byteranges; boundary=", [dotall])).

curl_path_as_is_traversal(Config) ->
	doc("curl --path-as-is sends '..' and encoded forms as written: never the secret."),
	[begin
		{0, Out} = curl(Config, ["--path-as-is", "-w", "\n%{http_code}", url(Config, P)]),
		?assertEqual(nomatch, binary:match(Out, <<"SECRET">>), P),
		?assertMatch({match, _}, re:run(Out, "\n40[34]$", []), {P, Out})
	end || P <- ["/static/../secret.txt", "/static/../../../../etc/passwd",
		"/static/%2e%2e/secret.txt", "/static/..%2fsecret.txt", "/static/..%5csecret.txt",
		"/static/out", "/static/dirout/secret.txt", "/static/index.html%00"]].

curl_tls_http1_big(Config) ->
	doc("curl over TLS, HTTP/1.1: the 1.5 MB file and a range of it, exact (the body "
		"is read and sent in pieces: no sendfile(2) through TLS)."),
	Base = "https://127.0.0.1:" ++ integer_to_list(?config(tls_port, Config)),
	Out = filename:join(?config(priv_dir, Config), "tls_big.out"),
	?assertEqual({0, <<"200 1.1">>}, curl(Config, ["-k", "--http1.1", "-o", Out,
		"-w", "%{http_code} %{http_version}", Base ++ "/static/big.bin"])),
	?assertEqual({ok, big(Config)}, file:read_file(Out)),
	?assertEqual({0, <<"206 1.1">>}, curl(Config, ["-k", "--http1.1", "-o", Out, "-r", "100-200099",
		"-w", "%{http_code} %{http_version}", Base ++ "/static/big.bin"])),
	?assertEqual({ok, binary:part(big(Config), 100, 200000)}, file:read_file(Out)).

curl_h2c_range(Config) ->
	doc("curl --http2-prior-knowledge: the file and a range over h2c."),
	Out = filename:join(?config(priv_dir, Config), "h2c_big.out"),
	?assertEqual({0, <<"200 2">>}, curl(Config, ["--http2-prior-knowledge", "-o", Out,
		"-w", "%{http_code} %{http_version}", url(Config, "/static/big.bin")])),
	?assertEqual({ok, big(Config)}, file:read_file(Out)),
	?assertEqual({0, <<"89 206 2">>}, curl(Config, ["--http2-prior-knowledge", "-r", "8-9",
		"-w", " %{http_code} %{http_version}", url(Config, "/static/digits.txt")])).

httpx_h2_tls_range(Config) ->
	doc("httpx over TLS with HTTP/2: the whole file and a range, checked by sha256."),
	Url = "https://127.0.0.1:" ++ integer_to_list(?config(tls_port, Config)) ++ "/static/big.bin",
	Big = big(Config),
	Script = filename:join(?config(data_dir, Config), "httpx_static.py"),
	Hex = fun(Bin) -> string:lowercase(binary:encode_hex(crypto:hash(sha256, Bin))) end,
	{0, Out1} = mustang_test:run(?config(python, Config), [Script, Url, "http2"], 60000),
	?assertEqual(iolist_to_binary(["200 HTTP/2 application/octet-stream - 1500000 ", Hex(Big),
		"\n"]), Out1),
	{0, Out2} = mustang_test:run(?config(python, Config), [Script, Url, "http2",
		"bytes=1000000-"], 60000),
	?assertEqual(iolist_to_binary(["206 HTTP/2 application/octet-stream bytes 1000000-1499999/1500000 "
		"500000 ", Hex(binary:part(Big, 1000000, 500000)), "\n"]), Out2).
