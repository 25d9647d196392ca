%% HTTP/2 field sections (RFC 9113 8.2, 8.3): turning a decoded request
%% header list into a request, checking trailers, and building response
%% header lists. Pure functions; HPACK is mustang_hpack's job and stream
%% state is mustang_http2's.
%%
%% A request that breaks a rule of RFC 9113 8.2 or 8.3 is malformed: the
%% connection resets the stream with PROTOCOL_ERROR (RFC 9113 8.1.1). Errors
%% are {error, Reason} with Reason an atom that names the rule.
-module(mustang_http2_headers).

-export([request/2]).
-export([trailers/1]).
-export([response/3]).
-export([informational/2]).
-export([trailer_fields/1]).

-type request() :: #{
	method := binary(),
	scheme := binary(),
	authority := binary() | undefined,
	host := binary(),
	port := inet:port_number() | undefined,
	path := binary(),
	qs := binary(),
	protocol := binary() | undefined,
	headers := mustang_req:headers(),
	content_length := non_neg_integer() | undefined
}.
-export_type([request/0]).

-type opts() :: #{enable_connect_protocol := boolean()}.

%% Request.

%% Headers come in the order the client sent them. Pseudo-header fields
%% must come first (RFC 9113 8.3).
-spec request([{binary(), binary()}], opts()) -> {ok, request()} | {error, atom()}.
request(Fields, Opts) ->
	case pseudo(Fields, #{}) of
		{ok, Pseudo, Regular} ->
			case regular(Regular, #{}) of
				{ok, Headers} -> request(Pseudo, Headers, Opts);
				Error -> Error
			end;
		Error ->
			Error
	end.

pseudo([{<<":", _/bits>> = Name, Value} | Rest], Acc) ->
	Key = case Name of
		<<":method">> -> method;
		<<":scheme">> -> scheme;
		<<":authority">> -> authority;
		<<":path">> -> path;
		<<":protocol">> -> protocol;
		_ -> unknown
	end,
	case Acc of
		_ when Key =:= unknown -> {error, unknown_pseudo_header};
		#{Key := _} -> {error, duplicate_pseudo_header};
		_ -> pseudo(Rest, Acc#{Key => Value})
	end;
pseudo(Regular, Acc) ->
	{ok, Acc, Regular}.

%% Regular fields: lowercase names, no connection-specific fields, `te` only
%% "trailers", and no pseudo-header after them. Repeated fields are joined
%% with ", ", cookies with "; " (RFC 9113 8.2.3).
regular([], Acc) ->
	{ok, Acc};
regular([{<<":", _/bits>>, _} | _], _) ->
	{error, pseudo_header_after_regular};
regular([{Name, Value} | Rest], Acc) ->
	case valid_name(Name) of
		false ->
			{error, invalid_header_name};
		true ->
			case valid_value(Value) of
				false ->
					{error, invalid_header_value};
				true ->
					case connection_specific(Name, Value) of
						true -> {error, connection_specific_header};
						false -> regular(Rest, add(Name, Value, Acc))
					end
			end
	end.

add(<<"cookie">>, Value, Acc = #{<<"cookie">> := Prev}) ->
	Acc#{<<"cookie">> => <<Prev/binary, "; ", Value/binary>>};
add(Name, Value, Acc) ->
	case Acc of
		#{Name := Prev} -> Acc#{Name => <<Prev/binary, ", ", Value/binary>>};
		_ -> Acc#{Name => Value}
	end.

connection_specific(<<"connection">>, _) -> true;
connection_specific(<<"keep-alive">>, _) -> true;
connection_specific(<<"proxy-connection">>, _) -> true;
connection_specific(<<"transfer-encoding">>, _) -> true;
connection_specific(<<"upgrade">>, _) -> true;
connection_specific(<<"te">>, Value) -> Value =/= <<"trailers">>;
connection_specific(_, _) -> false.

%% RFC 9113 8.2.1: no uppercase, no controls, no space, nothing above 0x7e.
%% Token characters only (RFC 9110 5.1), which also excludes ":" here.
valid_name(<<>>) -> false;
valid_name(Name) -> token(Name).

token(<<>>) -> true;
token(<<C, Rest/bits>>) when C >= $a, C =< $z; C >= $0, C =< $9; C =:= $-; C =:= $_;
		C =:= $!; C =:= $#; C =:= $$; C =:= $%; C =:= $&; C =:= $'; C =:= $*;
		C =:= $+; C =:= $.; C =:= $^; C =:= $`; C =:= $|; C =:= $~ ->
	token(Rest);
token(_) -> false.

%% RFC 9113 8.2.1: no NUL, CR or LF anywhere, no leading or trailing space
%% or tab.
valid_value(<<>>) ->
	true;
valid_value(Value) ->
	First = binary:first(Value),
	Last = binary:last(Value),
	First =/= $\s andalso First =/= $\t andalso Last =/= $\s andalso Last =/= $\t
		andalso binary:match(Value, mustang_pattern:compiled(unsafe_value)) =:= nomatch.

request(#{method := <<"CONNECT">>, protocol := Protocol} = Pseudo, Headers,
		#{enable_connect_protocol := true}) ->
	%% Extended CONNECT (RFC 8441 4): a normal request plus :protocol.
	case Pseudo of
		#{scheme := _, path := _, authority := _} ->
			target(Pseudo, Headers, Protocol);
		_ ->
			{error, missing_pseudo_header}
	end;
request(#{protocol := _}, _, _) ->
	{error, unexpected_protocol_pseudo_header};
request(#{method := <<"CONNECT">>} = Pseudo, _, _) ->
	%% Plain CONNECT (RFC 9113 8.5): :method and :authority only. Mustang is
	%% not a proxy, but the request is well-formed; the router answers it.
	case maps:keys(Pseudo) -- [method, authority] of
		[] when is_map_key(authority, Pseudo) -> {error, connect_not_supported};
		_ -> {error, invalid_connect_request}
	end;
request(#{method := _, scheme := _, path := _} = Pseudo, Headers, _) ->
	target(Pseudo, Headers, undefined);
request(_, _, _) ->
	{error, missing_pseudo_header}.

target(#{method := Method, scheme := Scheme, path := Path0} = Pseudo, Headers0, Protocol) ->
	Authority = maps:get(authority, Pseudo, undefined),
	case {valid_method(Method), split_path(Method, Path0)} of
		{false, _} ->
			{error, invalid_method};
		{true, error} ->
			{error, invalid_path};
		{true, {Path, Qs}} ->
			case host(Authority, Headers0) of
				{ok, Host, Port, Headers} ->
					case content_length(Headers) of
						{ok, Length} ->
							{ok, #{method => Method, scheme => Scheme, authority => Authority,
								host => Host, port => Port, path => Path, qs => Qs,
								protocol => Protocol, headers => Headers,
								content_length => Length}};
						Error ->
							Error
					end;
				Error ->
					Error
			end
	end.

valid_method(<<>>) -> false;
valid_method(Method) -> method_token(Method).

method_token(<<>>) -> true;
method_token(<<C, Rest/bits>>) when C > 32, C < 127, C =/= $(, C =/= $), C =/= $,, C =/= $/,
		C =/= $:, C =/= $;, C =/= $<, C =/= $=, C =/= $>, C =/= $?, C =/= $@, C =/= $[,
		C =/= $\\, C =/= $], C =/= ${, C =/= $}, C =/= $" ->
	method_token(Rest);
method_token(_) -> false.

%% :path is never empty for http and https; "*" only for OPTIONS
%% (RFC 9113 8.3.1).
split_path(<<"OPTIONS">>, <<"*">>) ->
	{<<"*">>, <<>>};
split_path(_, <<"/", _/bits>> = Target) ->
	case visible(Target) of
		false -> error;
		true ->
			case mustang_pattern:find(Target, qmark) of
				nomatch -> {Target, <<>>};
				{Pos, 1} ->
					{binary:part(Target, 0, Pos),
						binary:part(Target, Pos + 1, byte_size(Target) - Pos - 1)}
			end
	end;
split_path(_, _) ->
	error.

visible(<<>>) -> true;
visible(<<$#, _/bits>>) -> false;
visible(<<C, Rest/bits>>) when C > 32, C < 127 -> visible(Rest);
visible(_) -> false.

%% :authority wins; a host header must then name the same authority
%% (RFC 9113 8.3.1). Without :authority, host is used. The host header is
%% kept (or added) so handlers find it where HTTP/1.1 puts it.
host(undefined, Headers = #{<<"host">> := Host}) ->
	case mustang_http1_codec:parse_host(Host) of
		{ok, Name, Port} -> {ok, Name, Port, Headers};
		_ -> {error, invalid_host}
	end;
host(undefined, _) ->
	{error, missing_authority};
host(Authority, Headers) ->
	case mustang_http1_codec:parse_host(Authority) of
		{ok, Name, Port} ->
			case Headers of
				#{<<"host">> := Authority} -> {ok, Name, Port, Headers};
				#{<<"host">> := Other} ->
					case mustang_http1_codec:parse_host(Other) of
						{ok, Name, Port} -> {ok, Name, Port, Headers};
						_ -> {error, host_authority_mismatch}
					end;
				_ -> {ok, Name, Port, Headers#{<<"host">> => Authority}}
			end;
		_ ->
			{error, invalid_authority}
	end.

content_length(#{<<"content-length">> := Value}) ->
	case digits(Value, 0) of
		error -> {error, invalid_content_length};
		N -> {ok, N}
	end;
content_length(_) ->
	{ok, undefined}.

digits(<<>>, _) -> error;
digits(Bin, _) when byte_size(Bin) > 19 -> error;
digits(Bin, N) -> digits1(Bin, N).

digits1(<<>>, N) -> N;
digits1(<<C, Rest/bits>>, N) when C >= $0, C =< $9 -> digits1(Rest, N * 10 + C - $0);
digits1(_, _) -> error.

%% Trailers: no pseudo-header fields (RFC 9113 8.1), and the same rules as
%% other fields.
-spec trailers([{binary(), binary()}]) -> ok | {error, atom()}.
trailers(Fields) ->
	case pseudo(Fields, #{}) of
		{ok, Pseudo, _} when map_size(Pseudo) > 0 -> {error, pseudo_header_in_trailers};
		{ok, _, Regular} ->
			case regular(Regular, #{}) of
				{ok, _} -> ok;
				Error -> Error
			end;
		Error -> Error
	end.

%% Response.

%% The header list of a response: :status first, names lowercased,
%% connection-specific fields dropped (handlers written for HTTP/1.1 set
%% them), a date unless the handler gave one, and each set-cookie value as
%% its own field.
-spec response(mustang_req:status(), mustang_req:headers(), iodata())
	-> [{binary(), iodata()}].
response(Status, Headers, Date) ->
	Fields = fields(Headers),
	DateField = case Headers of
		#{<<"date">> := _} -> [];
		_ -> [{<<"date">>, Date}]
	end,
	[{<<":status">>, status(Status)} | DateField ++ Fields].

-spec informational(mustang_req:status(), mustang_req:headers()) -> [{binary(), iodata()}].
informational(Status, Headers) ->
	[{<<":status">>, status(Status)} | fields(Headers)].

-spec trailer_fields(mustang_req:headers()) -> [{binary(), iodata()}].
trailer_fields(Trailers) ->
	fields(Trailers).

%% An HTTP/2 message has no connection-specific field (RFC 9113 8.2.2):
%% connection, the fields it names, keep-alive, proxy-connection,
%% transfer-encoding and upgrade are dropped, and te, which only a request
%% may carry. Names are compared lowercased, as they are sent.
fields(Headers) ->
	case maps:fold(fun field/3, {[], []}, Headers) of
		{Fields, []} -> Fields;
		{Fields, Named} -> [Field || Field = {Name, _} <- Fields, not lists:member(Name, Named)]
	end.

field(Name0, Value, {Acc, Named}) ->
	case lowercase(Name0) of
		<<"connection">> -> {Acc, connection_options(Value) ++ Named};
		<<"keep-alive">> -> {Acc, Named};
		<<"proxy-connection">> -> {Acc, Named};
		<<"transfer-encoding">> -> {Acc, Named};
		<<"upgrade">> -> {Acc, Named};
		<<"te">> -> {Acc, Named};
		<<"set-cookie">> when is_list(Value), Value =/= [], not is_integer(hd(Value)) ->
			{[{<<"set-cookie">>, V} || V <- Value] ++ Acc, Named};
		Name -> {[{Name, Value} | Acc], Named}
	end.

%% The fields a connection header names; when it cannot be parsed, only the
%% connection field itself is known to go.
connection_options(Value) ->
	case mustang_http_hd:parse_connection(iolist_to_binary(Value)) of
		{ok, Options} -> Options;
		{error, _} -> []
	end.

lowercase(Name) ->
	case has_upper(Name) of
		false -> Name;
		true -> << <<(if C >= $A, C =< $Z -> C + 32; true -> C end)>> || <<C>> <= Name >>
	end.

has_upper(<<>>) -> false;
has_upper(<<C, _/bits>>) when C >= $A, C =< $Z -> true;
has_upper(<<_, Rest/bits>>) -> has_upper(Rest).

status(Status) when is_integer(Status) -> integer_to_binary(Status);
status(<<S:3/binary, _/bits>>) -> S.
