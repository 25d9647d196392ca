%% The examples of examples/ that have no suite of their own, each started
%% as `make example NAME=...' would start it (mustang_example) and checked
%% with a real client. Other examples have their suite next to this one
%% (examples_<topic>_SUITE).
-module(examples_SUITE).
-compile([export_all, nowarn_export_all]).

-include_lib("common_test/include/ct.hrl").

all() ->
	[hello_world].

hello_world(Config) ->
	Port = mustang_example:start(hello_world, Config),
	try
		Url = "http://127.0.0.1:" ++ integer_to_list(Port) ++ "/",
		"Hello world! 200" = os:cmd("curl -s -w ' %{http_code}' " ++ Url),
		%% And over HTTP/2 (prior knowledge).
		"2 200" = string:trim(os:cmd("curl -s --http2-prior-knowledge -o /dev/null "
			"-w '%{http_version} %{http_code}' " ++ Url))
	after
		mustang_example:stop(hello_world)
	end.
