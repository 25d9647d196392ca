%% For stream_handlers_SUITE: sends itself a message (something for the
%% tracer to see), optionally adds metrics user data with
%% mustang_req:cast({set_options, #{metrics_user_data => Data}}, Req), and
%% replies 200 with the pid of the process that ran it (pid_to_list).
%% Options: #{} or #{user_data => map()}.
-module(stream_probe_h).
-export([init/2]).

init(Req, Opts) ->
	Ref = make_ref(),
	self() ! {?MODULE, ping, Ref},
	receive {?MODULE, ping, Ref} -> ok end,
	_ = case Opts of
		#{user_data := Data} ->
			mustang_req:cast({set_options, #{metrics_user_data => Data}}, Req);
		_ ->
			ok
	end,
	{ok, mustang_req:reply(200, #{<<"content-type">> => <<"text/plain">>},
		pid_to_list(self()), Req), Opts}.
