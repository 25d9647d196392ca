%% Reads a multipart body with mustang_req:read_part/2 and read_part_body/2
%% and answers with what it read, printed with ~0p: for each part
%% {form_data(Headers), BodySize, erlang:md5(Body), Pieces} (Pieces: how many
%% read_part_body calls it took). The route binding `mode': `all' reads
%% every part, `skip' only the headers (bodies are skipped). The query string
%% may give options: length (read_part_body's), max_parts,
%% max_part_header_length, max_part_length.
-module(multipart_h).
-export([init/2]).

init(Req, Opts) ->
	Qs = maps:from_list([{binary_to_atom(K), binary_to_integer(V)} || {K, V} <- mustang_req:parse_qs(Req)]),
	PartOpts = maps:with([max_parts, max_part_header_length], Qs),
	BodyOpts = maps:with([length, max_part_length], Qs),
	Mode = mustang_req:binding(mode, Req),
	{Parts, Req2} = parts(Req, Mode, PartOpts, BodyOpts, []),
	Body = iolist_to_binary(io_lib:format("~0p", [Parts])),
	{ok, mustang_req:reply(200, #{<<"content-type">> => <<"text/plain">>}, Body, Req2), Opts}.

parts(Req, Mode, PartOpts, BodyOpts, Acc) ->
	case mustang_req:read_part(Req, PartOpts) of
		{ok, Headers, Req2} when Mode =:= <<"skip">> ->
			parts(Req2, Mode, PartOpts, BodyOpts, [mustang_multipart:form_data(Headers) | Acc]);
		{ok, Headers, Req2} ->
			{Body, Pieces, Req3} = body(Req2, BodyOpts, [], 1),
			Part = {mustang_multipart:form_data(Headers), byte_size(Body), erlang:md5(Body), Pieces},
			parts(Req3, Mode, PartOpts, BodyOpts, [Part | Acc]);
		{done, Req2} ->
			{lists:reverse(Acc), Req2}
	end.

body(Req, Opts, Acc, N) ->
	case mustang_req:read_part_body(Req, Opts) of
		{ok, Data, Req2} -> {iolist_to_binary(lists:reverse([Data | Acc])), N, Req2};
		{more, Data, Req2} -> body(Req2, Opts, [Data | Acc], N + 1)
	end.
