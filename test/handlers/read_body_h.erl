%% Reads the request body with mustang_req:read_body/2. Options:
%%   #{length => L}   read the whole body in calls of at most L bytes; reply
%%                    "<total bytes> <number of calls>", followed by `pad`
%%                    bytes "x" when the option is given
%%   period           first read with period 200 ms, then the rest; reply
%%                    "<first result>:<first data>|<second result>:<second data>"
-module(read_body_h).
-export([init/2]).

init(Req0, Opts = #{length := Length}) ->
	{Total, Calls, Req} = count(Req0, Length, 0, 0),
	Pad = binary:copy(<<"x">>, maps:get(pad, Opts, 0)),
	{ok, mustang_req:reply(200, #{}, [integer_to_binary(Total), " ", integer_to_binary(Calls), Pad],
		Req), Opts};
init(Req0, period) ->
	{R1, D1, Req1} = mustang_req:read_body(Req0, #{period => 200}),
	{R2, D2, Req} = mustang_req:read_body(Req1),
	{ok, mustang_req:reply(200, #{}, [atom_to_binary(R1), ":", D1, "|", atom_to_binary(R2), ":", D2],
		Req), period}.

count(Req0, Length, Total, Calls) ->
	case mustang_req:read_body(Req0, #{length => Length}) of
		{ok, Data, Req} -> {Total + byte_size(Data), Calls + 1, Req};
		{more, Data, Req} -> count(Req, Length, Total + byte_size(Data), Calls + 1)
	end.
