%% Static files: a handler that serves one file ({file, Path},
%% {priv_file, App, Path}) or the files of a directory ({dir, Path},
%% {priv_dir, App, Path}, the file named by the route's path_info, "[...]"),
%% with the options and results of Cowboy's cowboy_static. Each may end with
%% an extra list: {mimetypes, M, F} (M:F(Path) gives the media type; the
%% default is mustang_mimetypes:web/1, mustang_mimetypes:all/1 knows every
%% type of /etc/mime.types), {mimetypes, Type} (one type for every file),
%% {etag, M, F} (M:F(Path, Size, Mtime) gives the etag), {etag, false} (none),
%% {charset, M, F} or {charset, Charset} (the charset of the files, added to
%% the content type, negotiated with accept-charset).
%%
%% No path out of the directory is served: path_info segments that are empty,
%% "." or "..", or hold "/", "\" or NUL (from %2F, %5C, %00) are refused, and
%% so is a file whose real path, symbolic links resolved, is not under the
%% real path of the directory (mustang_static_path): 403, never the file (Cowboy
%% answers 400 to the first kind and serves the second). A directory is 403, a
%% missing file 404; there is no directory listing (examples/file_server writes
%% one). A priv directory inside an .ez archive is read through erl_prim_loader.
%%
%% init/2 resolves the file and hands over to mustang_rest, as cowboy_static
%% does to cowboy_rest; the callbacks below are cowboy_static's, so the
%% response follows the REST flow: GET, HEAD and OPTIONS (405 with allow for
%% the other methods, 501 for unknown ones), 406 when accept or
%% accept-charset refuses the type, etag and last-modified with the
%% conditional requests (304, 412), byte ranges (accept-ranges: bytes; 206,
%% multipart/byteranges for several ranges, 416, If-Range). The body is a
%% sendfile body: sendfile(2) over TCP, read in pieces over TLS and HTTP/2.
%% One addition to cowboy_static: range_satisfiable/2 refuses range sets
%% that would amplify the response.
-module(mustang_static).

%% Handler.
-export([init/2]).

%% Resource callbacks (those of cowboy_static).
-export([forbidden/2]).
-export([content_types_provided/2]).
-export([charsets_provided/2]).
-export([ranges_provided/2]).
-export([range_satisfiable/2]).
-export([resource_exists/2]).
-export([last_modified/2]).
-export([generate_etag/2]).
-export([get_file/2]).

-include_lib("kernel/include/file.hrl").

-type extra_charset() :: {charset, module(), atom()} | {charset, binary()}.
-type extra_etag() :: {etag, module(), atom()} | {etag, false}.
-type extra_mimetypes() :: {mimetypes, module(), atom()}
	| {mimetypes, binary() | {binary(), binary(), [{binary(), binary()}]}}.
-type extra() :: [extra_charset() | extra_etag() | extra_mimetypes()].
-type opts() :: {file | dir, string() | binary()}
	| {file | dir, string() | binary(), extra()}
	| {priv_file | priv_dir, atom(), string() | binary()}
	| {priv_file | priv_dir, atom(), string() | binary(), extra()}.
-export_type([opts/0]).

%% Path: the file as named (its extension gives the media type); File: the
%% file read, symbolic links resolved; Info: direct (the file system) or
%% archive (an .ez archive, through erl_prim_loader) with the file's info, or
%% why there is no file.
-type state() :: #{
	path := binary() | undefined,
	file := binary() | undefined,
	info := {direct | archive, #file_info{}} | {error, atom()},
	extra := extra()
} | error.

%% More ranges than this in one request are refused (RFC 9110 14.2).
-define(MAX_RANGES, 64).

%% Handler.

%% @doc Resolves the file of the request and answers it (see the module
%% comment). A dir or priv_dir route without "[...]" (no path_info) is a
%% configuration error: 500.
-spec init(Req, opts()) -> {mustang_rest, Req, state()} | {ok, Req, error}
	when Req :: mustang_req:req().
init(Req, Opts) ->
	case init_state(Req, Opts) of
		error -> {ok, mustang_req:reply(500, Req), error};
		State -> {mustang_rest, Req, State}
	end.

init_state(Req, {Kind, Path}) when Kind =:= file; Kind =:= dir ->
	init_state(Req, {Kind, Path, []});
init_state(Req, {Kind, App, Path}) when Kind =:= priv_file; Kind =:= priv_dir ->
	init_state(Req, {Kind, App, Path, []});
init_state(_, {file, Path, Extra}) ->
	File = absname(Path),
	state(File, File, read_file_info(File, direct), Extra);
init_state(Req, {dir, Path, Extra}) ->
	dir_state(Req, absname(Path), direct, Extra);
init_state(_, {priv_file, App, Path, Extra}) ->
	{File, Access} = priv_path(App, Path),
	state(File, File, read_file_info(File, Access), Extra);
init_state(Req, {priv_dir, App, Path, Extra}) ->
	{Dir, Access} = priv_path(App, Path),
	dir_state(Req, Dir, Access, Extra);
init_state(_, Opts) ->
	error({badarg, {mustang_static, Opts}}).

state(Path, File, Info, Extra) when is_list(Extra) ->
	#{path => Path, file => File, info => Info, extra => Extra};
state(_, _, _, Extra) ->
	error({badarg, {mustang_static, {extra, Extra}}}).

dir_state(Req, Dir, Access, Extra) ->
	case mustang_req:path_info(Req) of
		undefined ->
			error;
		PathInfo ->
			case mustang_static_path:join(Dir, PathInfo) of
				{ok, Path} -> dir_file(Dir, Path, Access, Extra);
				{error, forbidden} -> state(undefined, undefined, {error, forbidden}, Extra)
			end
	end.

%% The real path of the file must be under the real path of the directory.
%% Archive members have no links: the checked segments are enough.
dir_file(Dir, Path, direct, Extra) ->
	case {mustang_static_path:realpath(Dir), mustang_static_path:realpath(Path)} of
		{{ok, RealDir}, {ok, File}} ->
			case mustang_static_path:within(RealDir, File) of
				true -> state(Path, File, read_file_info(File, direct), Extra);
				false -> state(Path, undefined, {error, forbidden}, Extra)
			end;
		{{ok, _}, {error, Reason}} ->
			state(Path, undefined, {error, Reason}, Extra);
		{{error, Reason}, _} ->
			state(Path, undefined, {error, Reason}, Extra)
	end;
dir_file(_, Path, Access, Extra) ->
	state(Path, Path, read_file_info(Path, Access), Extra).

absname(Path) ->
	filename:absname(iolist_to_binary(Path)).

priv_path(App, Path) ->
	case code:priv_dir(App) of
		{error, bad_name} ->
			error({badarg, {mustang_static, {priv_dir_not_found, App}}});
		PrivDir0 ->
			PrivDir = unicode:characters_to_binary(PrivDir0),
			File = case iolist_to_binary(Path) of
				<<>> -> PrivDir;
				P -> <<PrivDir/binary, $/, P/binary>>
			end,
			{File, priv_access(PrivDir)}
	end.

%% A priv directory that is not a directory is inside an .ez archive: the
%% archive is the regular file found going up from it.
priv_access(PrivDir) ->
	case filelib:is_dir(PrivDir) of
		true -> direct;
		false -> archive_of(PrivDir)
	end.

archive_of(Dir) ->
	case filename:dirname(Dir) of
		Dir -> direct;
		Parent ->
			case filelib:is_regular(Parent) of
				true -> {archive, Parent};
				false -> archive_of(Parent)
			end
	end.

read_file_info(File, direct) ->
	case file:read_file_info(File, [{time, universal}, raw]) of
		{ok, Info} -> {direct, Info};
		Error -> Error
	end;
read_file_info(File, {archive, Archive}) ->
	case {file:read_file_info(Archive, [{time, universal}, raw]),
			erl_prim_loader:read_file_info(binary_to_list(File))} of
		{{ok, ArchiveInfo}, {ok, #file_info{size = Size, type = Type}}} ->
			%% The archive's times, the member's size and type.
			{archive, ArchiveInfo#file_info{size = Size, type = Type, access = read}};
		{{ok, _}, error} ->
			{error, enoent};
		{Error, _} ->
			Error
	end.

%% Resource callbacks.

%% @doc Directories, unreadable files and refused paths are forbidden.
-spec forbidden(Req, State) -> {boolean(), Req, State} when State :: state().
forbidden(Req, State = #{info := {_, #file_info{type = directory}}}) ->
	{true, Req, State};
forbidden(Req, State = #{info := {error, Reason}}) when Reason =:= eacces;
		Reason =:= forbidden; Reason =:= eloop ->
	{true, Req, State};
forbidden(Req, State = #{info := {_, #file_info{access = Access}}})
		when Access =:= write; Access =:= none ->
	{true, Req, State};
forbidden(Req, State) ->
	{false, Req, State}.

%% @doc The media type of the file, from the mimetypes option.
-spec content_types_provided(Req, State)
	-> {[{binary() | {binary(), binary(), [{binary(), binary()}]}, get_file}], Req, State}
	when State :: state().
content_types_provided(Req, State = #{path := Path, extra := Extra}) ->
	Type = case lists:keyfind(mimetypes, 1, Extra) of
		false -> mustang_mimetypes:web(Path);
		{mimetypes, Module, Function} -> Module:Function(Path);
		{mimetypes, Type0} -> Type0
	end,
	{[{Type, get_file}], Req, State}.

%% @doc The charset option; no_call (as if the callback were not exported)
%% without it, as cowboy_static does.
-spec charsets_provided(Req, State) -> {[binary()], Req, State} | no_call when State :: state().
charsets_provided(Req, State = #{path := Path, extra := Extra}) ->
	case lists:keyfind(charset, 1, Extra) of
		false -> no_call;
		{charset, Module, Function} -> {[Module:Function(Path)], Req, State};
		{charset, Charset} when is_binary(Charset) -> {[Charset], Req, State}
	end.

%% @doc Byte ranges, over the body that get_file/2 gives.
-spec ranges_provided(Req, State) -> {[{binary(), auto}], Req, State} when State :: state().
ranges_provided(Req, State) ->
	{[{<<"bytes">>, auto}], Req, State}.

%% @doc Refuses (416 with content-range: bytes */Size) what RFC 9110 14.2
%% lets a server reject: more than 64 ranges, or ranges that add up to more
%% bytes than the file has (overlapping ranges asked to amplify the
%% response). cowboy_static has no such check.
-spec range_satisfiable(Req, State) -> {true | {false, non_neg_integer()}, Req, State}
	when State :: state().
range_satisfiable(Req = #{range := {<<"bytes">>, Ranges}},
		State = #{info := {_, #file_info{size = Size}}}) ->
	Total = lists:sum([range_length(Range, Size) || Range <- Ranges]),
	case length(Ranges) > ?MAX_RANGES orelse Total > Size of
		true -> {{false, Size}, Req, State};
		false -> {true, Req, State}
	end;
range_satisfiable(Req, State) ->
	{true, Req, State}.

%% The bytes a range of the Range header covers in a file of Size bytes.
range_length({First, _}, Size) when First >= Size -> 0;
range_length({First, infinity}, Size) -> Size - First;
range_length({First, Last}, Size) -> min(Last, Size - 1) - First + 1;
range_length(Suffix, Size) -> min(-Suffix, Size).

%% @doc Only regular files exist.
-spec resource_exists(Req, State) -> {boolean(), Req, State} when State :: state().
resource_exists(Req, State = #{info := {_, #file_info{type = regular}}}) ->
	{true, Req, State};
resource_exists(Req, State) ->
	{false, Req, State}.

%% @doc The etag option: by default a strong etag hashed from the size and
%% modification time (that of cowboy_static).
-spec generate_etag(Req, State)
	-> {{strong | weak, binary()} | binary() | undefined, Req, State} when State :: state().
generate_etag(Req, State = #{path := Path, info := {_, #file_info{size = Size, mtime = Mtime}},
		extra := Extra}) ->
	ETag = case lists:keyfind(etag, 1, Extra) of
		false -> {strong, integer_to_binary(erlang:phash2({Size, Mtime}, 16#ffffffff))};
		{etag, Module, Function} -> Module:Function(Path, Size, Mtime);
		{etag, false} -> undefined
	end,
	{ETag, Req, State}.

%% @doc The modification time of the file (of the archive for a member).
-spec last_modified(Req, State) -> {calendar:datetime(), Req, State} when State :: state().
last_modified(Req, State = #{info := {_, #file_info{mtime = Modified}}}) ->
	{Modified, Req, State}.

%% @doc The body: a sendfile body, or the member of an archive.
-spec get_file(Req, State) -> {mustang_req:resp_body(), Req, State} when State :: state().
get_file(Req, State = #{file := File, info := {direct, #file_info{size = Size}}}) ->
	{{sendfile, 0, Size, File}, Req, State};
get_file(Req, State = #{file := File, info := {archive, _}}) ->
	{ok, Bin, _} = erl_prim_loader:get_file(binary_to_list(File)),
	{Bin, Req, State}.
