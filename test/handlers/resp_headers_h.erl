%% Exercises the response header functions; the body prints what they
%% returned and the response carries the headers left at the end.
-module(resp_headers_h).
-export([init/2]).

init(Req0, Opts) ->
	Req1 = mustang_req:set_resp_header(<<"x-one">>, <<"1">>, Req0),
	Req2 = mustang_req:set_resp_headers(#{<<"x-two">> => <<"2">>, <<"x-three">> => <<"3">>}, Req1),
	Req3 = mustang_req:set_resp_header(<<"x-one">>, <<"one">>, Req2),
	Has = {mustang_req:has_resp_header(<<"x-one">>, Req3), mustang_req:has_resp_header(<<"x-none">>, Req3)},
	Values = {mustang_req:resp_header(<<"x-two">>, Req3), mustang_req:resp_header(<<"x-none">>, Req3),
		mustang_req:resp_header(<<"x-none">>, Req3, default)},
	Req4 = mustang_req:delete_resp_header(<<"x-three">>, Req3),
	All = mustang_req:resp_headers(Req4),
	Body = io_lib:format("~0p", [{Has, Values, All}]),
	%% Headers given to reply/4 override those set before.
	{ok, mustang_req:reply(200, #{<<"x-two">> => <<"two">>}, Body, Req4), Opts}.
