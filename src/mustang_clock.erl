%% Keeps the current HTTP date, formatted once a second, in an ETS table so
%% that responses never format dates themselves (RFC 9110 6.6.1).
-module(mustang_clock).
-behaviour(gen_server).

-export([start_link/0]).
-export([date_header/0]).
-export([rfc7231/0]).

-export([init/1]).
-export([handle_call/3]).
-export([handle_cast/2]).
-export([handle_info/2]).

-define(TAB, ?MODULE).

-spec start_link() -> {ok, pid()} | {error, any()}.
start_link() ->
	gen_server:start_link({local, ?MODULE}, ?MODULE, [], []).

%% The whole "date: ...\r\n" line, ready to be put in a response head.
-spec date_header() -> binary().
date_header() ->
	try
		ets:lookup_element(?TAB, date_header, 2)
	catch error:badarg ->
		<<"date: ", (mustang_date:now())/binary, "\r\n">>
	end.

-spec rfc7231() -> binary().
rfc7231() ->
	try
		ets:lookup_element(?TAB, rfc7231, 2)
	catch error:badarg ->
		mustang_date:now()
	end.

-spec init([]) -> {ok, undefined}.
init([]) ->
	_ = ets:new(?TAB, [named_table, protected, set, {read_concurrency, true}]),
	ok = mustang_log_limit:init(),
	update(),
	{ok, undefined}.

-spec handle_call(any(), gen_server:from(), undefined) -> {reply, {error, unknown_call}, undefined}.
handle_call(_, _, State) ->
	{reply, {error, unknown_call}, State}.

-spec handle_cast(any(), undefined) -> {noreply, undefined}.
handle_cast(_, State) ->
	{noreply, State}.

-spec handle_info(any(), undefined) -> {noreply, undefined}.
handle_info(update, State) ->
	update(),
	ok = mustang_log_limit:tick(),
	{noreply, State};
handle_info(_, State) ->
	{noreply, State}.

%% Wake up just after the next second starts, so the date is never a second
%% late for long.
update() ->
	Date = mustang_date:now(),
	true = ets:insert(?TAB, [{rfc7231, Date}, {date_header, <<"date: ", Date/binary, "\r\n">>}]),
	Ms = erlang:system_time(millisecond) rem 1000,
	_ = erlang:send_after(1000 - Ms + 1, self(), update),
	ok.
