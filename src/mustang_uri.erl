%% Builds a URI from its parts (RFC 3986 5.3), for mustang_req:uri/1,2; a
%% part that is undefined is left out, and so is a port that is the
%% scheme's default.
-module(mustang_uri).

-export([build/6]).

-spec build(binary() | undefined, iodata() | undefined, inet:port_number() | undefined,
	iodata() | undefined, iodata() | undefined, iodata() | undefined) -> iodata().
build(Scheme, Host, Port, Path, Qs, Fragment) ->
	[
		case {Scheme, Host} of
			{_, undefined} -> [];
			{undefined, _} -> [<<"//">>, Host];
			_ -> [Scheme, <<"://">>, Host]
		end,
		case {Host, uri_port(Scheme, Port)} of
			{undefined, _} -> [];
			{_, default} -> [];
			{_, P} -> [$:, integer_to_binary(P)]
		end,
		case Path of undefined -> []; _ -> Path end,
		case Qs of undefined -> []; <<>> -> []; _ -> [$?, Qs] end,
		case Fragment of undefined -> []; _ -> [$#, Fragment] end
	].

uri_port(_, undefined) -> default;
uri_port(<<"http">>, 80) -> default;
uri_port(<<"https">>, 443) -> default;
uri_port(_, Port) -> Port.
