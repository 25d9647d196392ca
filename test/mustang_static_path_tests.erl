%% mustang_static_path: segment checks, realpath/1 against a tree of real
%% symbolic links in a temporary directory, within/2.
-module(mustang_static_path_tests).

-include_lib("eunit/include/eunit.hrl").

segments_test_() ->
	Ok = [[], [<<"a">>], [<<"a">>, <<"b.txt">>], [<<"...">>], [<<".hidden">>], [<<"a..b">>],
		[<<"é"/utf8>>], [<<255, 254>>]],
	Forbidden = [[<<>>], [<<".">>], [<<"..">>], [<<"a">>, <<"..">>], [<<"a/b">>], [<<"/">>],
		[<<"..\\x">>], [<<"a\\b">>], [<<"a", 0, "b">>], [<<0>>], [<<"a">>, <<"/etc">>],
		[<<"a">>, <<>>, <<"b">>]],
	[{iolist_to_binary(io_lib:format("~w", [S])), ?_assertEqual(ok, mustang_static_path:segments(S))}
		|| S <- Ok] ++
	[{iolist_to_binary(io_lib:format("~w", [S])),
		?_assertEqual({error, forbidden}, mustang_static_path:segments(S))} || S <- Forbidden].

join_test() ->
	?assertEqual({ok, <<"/r/a/b">>}, mustang_static_path:join(<<"/r">>, [<<"a">>, <<"b">>])),
	?assertEqual({ok, <<"/r">>}, mustang_static_path:join(<<"/r">>, [])),
	?assertEqual({error, forbidden}, mustang_static_path:join(<<"/r">>, [<<"..">>, <<"etc">>])).

within_test() ->
	?assert(mustang_static_path:within(<<"/srv/www">>, <<"/srv/www">>)),
	?assert(mustang_static_path:within(<<"/srv/www">>, <<"/srv/www/a/b">>)),
	?assert(mustang_static_path:within(<<"/">>, <<"/etc/passwd">>)),
	?assertNot(mustang_static_path:within(<<"/srv/www">>, <<"/srv/www2/a">>)),
	?assertNot(mustang_static_path:within(<<"/srv/www">>, <<"/srv">>)),
	?assertNot(mustang_static_path:within(<<"/srv/www">>, <<"/etc/passwd">>)).

%% Root/                    (Tmp/root, itself reached through Tmp/rootlink)
%%   file.txt
%%   sub/inner.txt
%%   in -> sub/inner.txt    relative link that stays inside
%%   up -> ../outside.txt   relative link out of the root
%%   abs -> Tmp/outside.txt absolute link out of the root
%%   dirout -> ..           link to the parent directory
%%   loop1 -> loop2, loop2 -> loop1
%%   dangling -> nothing
%% Tmp/outside.txt
realpath_test_() ->
	{setup, fun tree/0, fun cleanup/1, fun(Tmp) ->
		Root = <<Tmp/binary, "/root">>,
		Real = fun(P) -> mustang_static_path:realpath(<<Root/binary, P/binary>>) end,
		[
			?_assertEqual({ok, Root}, mustang_static_path:realpath(<<Tmp/binary, "/rootlink">>)),
			?_assertEqual({ok, <<Root/binary, "/file.txt">>},
				mustang_static_path:realpath(<<Tmp/binary, "/rootlink/file.txt">>)),
			?_assertEqual({ok, <<Root/binary, "/file.txt">>}, Real(<<"/./sub/../file.txt">>)),
			?_assertEqual({ok, <<Root/binary, "/sub/inner.txt">>}, Real(<<"/in">>)),
			?_assertEqual({ok, <<Tmp/binary, "/outside.txt">>}, Real(<<"/up">>)),
			?_assertEqual({ok, <<Tmp/binary, "/outside.txt">>}, Real(<<"/abs">>)),
			?_assertEqual({ok, <<Tmp/binary, "/outside.txt">>}, Real(<<"/dirout/outside.txt">>)),
			?_assertEqual({error, eloop}, Real(<<"/loop1">>)),
			?_assertEqual({error, enoent}, Real(<<"/dangling">>)),
			?_assertEqual({error, enoent}, Real(<<"/missing">>)),
			?_assertEqual({error, enotdir}, Real(<<"/file.txt/x">>)),
			?_assertEqual({ok, <<"/">>}, mustang_static_path:realpath(<<"/">>)),
			?_assertEqual({ok, <<"/">>}, mustang_static_path:realpath(<<"/../..">>)),
			?_assertEqual({ok, Root}, mustang_static_path:realpath(binary_to_list(Root)))
		]
	end}.

tree() ->
	{ok, Tmp0} = mustang_static_path:realpath(os:getenv("TMPDIR", "/tmp")),
	Tmp = iolist_to_binary([Tmp0, "/static_path_", integer_to_list(erlang:unique_integer([positive]))]),
	Root = <<Tmp/binary, "/root">>,
	ok = filelib:ensure_dir(<<Root/binary, "/sub/x">>),
	ok = file:write_file(<<Root/binary, "/file.txt">>, <<"file">>),
	ok = file:write_file(<<Root/binary, "/sub/inner.txt">>, <<"inner">>),
	ok = file:write_file(<<Tmp/binary, "/outside.txt">>, <<"outside">>),
	ok = file:make_symlink(<<"root">>, <<Tmp/binary, "/rootlink">>),
	ok = file:make_symlink(<<"sub/inner.txt">>, <<Root/binary, "/in">>),
	ok = file:make_symlink(<<"../outside.txt">>, <<Root/binary, "/up">>),
	ok = file:make_symlink(<<Tmp/binary, "/outside.txt">>, <<Root/binary, "/abs">>),
	ok = file:make_symlink(<<"..">>, <<Root/binary, "/dirout">>),
	ok = file:make_symlink(<<"loop2">>, <<Root/binary, "/loop1">>),
	ok = file:make_symlink(<<"loop1">>, <<Root/binary, "/loop2">>),
	ok = file:make_symlink(<<"nothing">>, <<Root/binary, "/dangling">>),
	Tmp.

cleanup(Tmp) ->
	ok = file:del_dir_r(Tmp).
