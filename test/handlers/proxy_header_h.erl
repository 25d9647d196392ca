%% Replies 200 with what the connection knows of the client, as an Erlang
%% term (~0p): #{proxy_header => mustang_req:proxy_header(Req), peer =>
%% mustang_req:peer(Req), version => mustang_req:version(Req), scheme =>
%% mustang_req:scheme(Req), has_key =>
%% whether the Req map has the proxy_header key}. With the options
%% {notify, Name} it also sends {Name, Term} to the process registered as
%% Name, when there is one.
-module(proxy_header_h).
-export([init/2]).

init(Req, Opts) ->
	Term = #{proxy_header => mustang_req:proxy_header(Req), peer => mustang_req:peer(Req),
		version => mustang_req:version(Req), scheme => mustang_req:scheme(Req),
		has_key => maps:is_key(proxy_header, Req)},
	case Opts of
		{notify, Name} when is_atom(Name) ->
			case whereis(Name) of
				undefined -> ok;
				Pid -> Pid ! {Name, Term}
			end;
		_ ->
			ok
	end,
	Body = io_lib:format("~0p", [Term]),
	{ok, mustang_req:reply(200, #{<<"content-type">> => <<"text/plain">>}, Body, Req), Opts}.
