%% POST /upload (multipart/form-data): reads the parts one by one with
%% mustang_req:read_part/1 and read_part_body/1, and answers with a line per
%% part: the field's name and value, or the file's name, content type and
%% size (file bodies are read in pieces and not kept).
-module(upload_h).
-export([init/2]).

-spec init(mustang_req:req(), any()) -> {ok, mustang_req:req(), any()}.
init(Req0 = #{method := <<"POST">>}, State) ->
	{Lines, Req1} = parts(Req0, []),
	{ok, mustang_req:reply(200, #{<<"content-type">> => <<"text/plain; charset=utf-8">>},
		Lines, Req1), State};
init(Req0, State) ->
	{ok, mustang_req:reply(405, #{<<"allow">> => <<"POST">>}, Req0), State}.

parts(Req0, Acc) ->
	case mustang_req:read_part(Req0) of
		{ok, Headers, Req1} ->
			{Line, Req} = case mustang_multipart:form_data(Headers) of
				{data, Name} ->
					{ok, Value, Req2} = mustang_req:read_part_body(Req1),
					{[<<"field ">>, Name, <<": ">>, Value, $\n], Req2};
				{file, Name, Filename, Type} ->
					{Size, Req2} = file_size(Req1, 0),
					{io_lib:format("file ~ts: ~ts (~ts, ~b bytes)~n", [Name, Filename, Type, Size]), Req2};
				{error, _} ->
					{<<"a part that is not form data\n">>, Req1}
			end,
			parts(Req, [Line | Acc]);
		{done, Req} ->
			{lists:reverse(Acc), Req}
	end.

file_size(Req0, Size) ->
	case mustang_req:read_part_body(Req0) of
		{ok, Data, Req} -> {Size + byte_size(Data), Req};
		{more, Data, Req} -> file_size(Req, Size + byte_size(Data))
	end.
