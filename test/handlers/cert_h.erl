%% Replies 200 with the client certificate, mustang_req:cert/1: its DER
%% bytes, or "undefined" when the client sent none; the header x-mode says
%% where the handler ran (mode of the Req).
-module(cert_h).
-export([init/2]).

init(Req = #{mode := Mode}, Opts) ->
	Body = case mustang_req:cert(Req) of
		undefined -> <<"undefined">>;
		Der when is_binary(Der) -> Der
	end,
	{ok, mustang_req:reply(200, #{<<"content-type">> => <<"application/octet-stream">>,
		<<"x-mode">> => atom_to_binary(Mode)}, Body, Req), Opts}.
