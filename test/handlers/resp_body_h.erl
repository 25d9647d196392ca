%% Sets the response body with set_resp_body/2 then replies with reply/2.
%% Options: iodata, {sendfile, Offset, Length, Path}, or empty (no body set).
%% The x-has-resp-body header tells what has_resp_body/1 said.
-module(resp_body_h).
-export([init/2]).

init(Req0, Opts) ->
	Req1 = case Opts of
		iodata -> mustang_req:set_resp_body([<<"io">>, [$d, "at"], <<"a">>], Req0);
		{sendfile, _, _, _} -> mustang_req:set_resp_body(Opts, Req0);
		empty -> Req0
	end,
	Has = atom_to_binary(mustang_req:has_resp_body(Req1)),
	Req = mustang_req:set_resp_header(<<"x-has-resp-body">>, Has, Req1),
	{ok, mustang_req:reply(200, Req), Opts}.
