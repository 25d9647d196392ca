%% A middleware between the router and the handler: when the request names
%% a directory under the root of a mustang_static {dir, Root, _} route, the
%% handler becomes file_server_h, which lists it. The path is checked as
%% mustang_static checks it (mustang_static_path): safe segments, and a real
%% path, symbolic links resolved, under the real root; anything else stays
%% with mustang_static, which serves files and refuses the rest.
-module(file_server_lister).
-behaviour(mustang_middleware).

-export([execute/2]).

-spec execute(Req, Env) -> {ok, Req, Env}
	when Req :: mustang_req:req(), Env :: mustang_middleware:env().
execute(Req, Env = #{handler := mustang_static, handler_opts := {dir, Root, _}}) ->
	case directory(Root, mustang_req:path_info(Req)) of
		{ok, Dir} -> {ok, Req, Env#{handler => file_server_h, handler_opts => Dir}};
		false -> {ok, Req, Env}
	end;
execute(Req, Env) ->
	{ok, Req, Env}.

directory(Root, PathInfo) ->
	case {mustang_static_path:realpath(Root), mustang_static_path:join(Root, PathInfo)} of
		{{ok, RealRoot}, {ok, Path}} ->
			case mustang_static_path:realpath(Path) of
				{ok, Real} ->
					case mustang_static_path:within(RealRoot, Real) andalso filelib:is_dir(Real) of
						true -> {ok, Real};
						false -> false
					end;
				{error, _} ->
					false
			end;
		_ ->
			false
	end.
