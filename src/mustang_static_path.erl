%% Safe file paths for mustang_static: the file a request's path_info names
%% under a root directory, never one outside it.
%%
%% Two checks, both needed:
%% - segments/1 refuses, in each path_info segment, what could change the
%%   directory the path points into: empty, "." and ".." segments, and
%%   segments holding "/", "\" or NUL (a %2F, %5C or %00 in the request
%%   decodes to one). The router already drops "." and ".." segments (RFC
%%   3986 5.2.4), but path_info may come from elsewhere.
%% - realpath/1 resolves every symbolic link of a path, as the kernel would
%%   open it, so that within/2 can check the file really is under the real
%%   root: a link inside the root that points out of it is refused. A link
%%   swapped between this check and the open is not caught (no openat2
%%   RESOLVE_BENEATH in OTP); the root must not be writable by whoever the
%%   server does not trust.
%%
%% Paths are binaries. Unix paths only ("/" separator).
-module(mustang_static_path).

-export([segments/1]).
-export([join/2]).
-export([realpath/1]).
-export([within/2]).

-include_lib("kernel/include/file.hrl").

%% Linux's limit of links followed in one lookup (MAXSYMLINKS).
-define(MAX_LINKS, 40).

%% Checks path_info segments: ok, or forbidden when one could leave the
%% directory or names no single directory entry.
-spec segments([binary()]) -> ok | {error, forbidden}.
segments([]) ->
	ok;
segments([Segment | Tail]) ->
	case safe_segment(Segment) of
		true -> segments(Tail);
		false -> {error, forbidden}
	end.

safe_segment(<<>>) -> false;
safe_segment(<<".">>) -> false;
safe_segment(<<"..">>) -> false;
safe_segment(Segment) when is_binary(Segment) ->
	binary:match(Segment, [<<"/">>, <<"\\">>, <<0>>]) =:= nomatch;
safe_segment(_) -> false.

%% Root joined with checked segments.
-spec join(binary(), [binary()]) -> {ok, binary()} | {error, forbidden}.
join(Root, Segments) ->
	case segments(Segments) of
		ok -> {ok, iolist_to_binary([Root | [[$/, S] || S <- Segments]])};
		Error -> Error
	end.

%% The absolute path with no symbolic link, "." or ".." left: what the
%% kernel opens for Path. Every component must exist.
-spec realpath(file:name_all()) -> {ok, binary()} | {error, file:posix() | badarg}.
realpath(Path) ->
	case filename:split(to_binary(filename:absname(Path))) of
		[<<"/">> | Segments] -> walk(<<>>, Segments, 0);
		_ -> {error, badarg}
	end.

%% Current is the real path so far, <<>> for the root directory.
walk(<<>>, [], _) ->
	{ok, <<"/">>};
walk(Current, [], _) ->
	{ok, Current};
walk(Current, [<<".">> | Tail], Links) ->
	walk(Current, Tail, Links);
walk(Current, [<<"..">> | Tail], Links) ->
	walk(parent(Current), Tail, Links);
walk(Current, [Segment | Tail], Links) ->
	Next = <<Current/binary, $/, Segment/binary>>,
	case file:read_link_info(Next, [raw]) of
		{ok, #file_info{type = symlink}} when Links >= ?MAX_LINKS ->
			{error, eloop};
		{ok, #file_info{type = symlink}} ->
			case file:read_link_all(Next) of
				{ok, Target0} ->
					case filename:split(to_binary(Target0)) of
						[<<"/">> | Target] -> walk(<<>>, Target ++ Tail, Links + 1);
						Target -> walk(Current, Target ++ Tail, Links + 1)
					end;
				Error ->
					Error
			end;
		{ok, #file_info{type = directory}} ->
			walk(Next, Tail, Links);
		{ok, _} when Tail =:= [] ->
			{ok, Next};
		{ok, _} ->
			{error, enotdir};
		Error ->
			Error
	end.

parent(<<>>) ->
	<<>>;
parent(Path) ->
	case filename:dirname(Path) of
		<<"/">> -> <<>>;
		Parent -> Parent
	end.

to_binary(Name) when is_binary(Name) -> Name;
to_binary(Name) -> unicode:characters_to_binary(Name).

%% Whether the real path Path is Root or under it (both from realpath/1).
-spec within(binary(), binary()) -> boolean().
within(Root, Root) ->
	true;
within(<<"/">>, <<"/", _/bits>>) ->
	true;
within(Root, Path) ->
	Len = byte_size(Root),
	case Path of
		<<Root:Len/binary, $/, _/bits>> -> true;
		_ -> false
	end.
