%% REST handlers: the HTTP decision flow of Cowboy's cowboy_rest (its manual
%% and its REST flowcharts, drawn again in doc/guide/rest/), started when a
%% handler's init/2 returns {mustang_rest, Req, State}. Every step asks an
%% optional callback of the handler, or uses the callback's default when the
%% handler does not export it, and either answers (a status, with the headers
%% the flow sets) or goes on to the next step. The guide page
%% doc/guide/rest.md lists the callbacks with their defaults and the node of
%% the flowcharts that calls them.
%%
%% The flow is a loop over steps (run/3): each step returns the next step,
%% or the end ({stop, Req, State}: terminate/3 of the handler, the response
%% sent or left to the connection, which answers 204 when there is none), or
%% a switch to another handler type. A crash in a callback or in a step calls
%% terminate/3 with {crash, Class, Reason} and is raised again, as in every
%% handler type. The matching is in plain functions of mustang_conneg
%% (content negotiation) and mustang_range (range requests).
-module(mustang_rest).

-export([upgrade/4]).
-export([upgrade/5]).

-type switch_handler() :: {switch_handler, module()} | {switch_handler, module(), any()}.
-type result(Value) :: {Value | stop | switch_handler(), mustang_req:req(), any()}.
-type media_type() :: {binary(), binary(), '*' | [{binary(), binary()}]}.
-export_type([switch_handler/0, media_type/0]).

%% Common handler callbacks.

%% The handler's `init(Req, Opts)`: returns `{mustang_rest, Req, State}` to
%% run the REST flow (or `{ok, Req, State}` to answer as a plain handler).
%%
%%     init(Req, State) ->
%%         {mustang_rest, Req, State}.
-callback init(Req, any()) -> {ok | module(), Req, any()} | {module(), Req, any(), any()}
	when Req :: mustang_req:req().

%% Optional. Called once at the end of the flow with `normal`, or with
%% `{crash, Class, Reason}` when a callback crashed (the client gets 500 and
%% the crash is logged). Its result is ignored.
-callback terminate(any(), mustang_req:req(), any()) -> ok.

%% REST callbacks, all optional. The accept (content_types_accepted),
%% provide (content_types_provided) and range (ranges_provided) callbacks
%% are named by the handler and not listed here.

%% The methods the resource allows (default `[<<"HEAD">>, <<"GET">>,
%% <<"OPTIONS">>]`); another known method gets 405 with an `allow` header.
%%
%% Every REST callback takes `(Req, State)` and returns `{Result, Req,
%% State}`; any of them may instead return `{stop, Req, State}` (the flow
%% stops: the response the handler sent is the answer, or 204 when it sent
%% none) or `{{switch_handler, Module}, Req, State}` /
%% `{{switch_handler, Module, Opts}, Req, State}` (`Module:upgrade/4,5` takes
%% the request over). All are optional.
%%
%%     allowed_methods(Req, State) ->
%%         {[<<"GET">>, <<"HEAD">>, <<"OPTIONS">>, <<"PUT">>, <<"DELETE">>], Req, State}.
-callback allowed_methods(mustang_req:req(), any()) -> result([binary()]).

%% Whether a POST to a resource that does not exist may create it (default
%% `true`); `false`: 404, or 410 when `previously_existed` says it existed.
-callback allow_missing_post(mustang_req:req(), any()) -> result(boolean()).

%% The charsets the resource provides, lower case, in order of preference
%% (default: no charset negotiation). `[]`, or none acceptable to
%% `accept-charset`: 406. The one chosen is the Req's `charset` and goes in a
%% `text/*` content-type.
-callback charsets_provided(mustang_req:req(), any()) -> result([binary()]).

%% For PUT, POST and PATCH: the media types the resource accepts, each with
%% the name of its AcceptCallback, `[{MediaType | '*', AcceptCallback}]`
%% (no default: a flow that needs it crashes with `{missing_callback,
%% content_types_accepted}`). A request without content-type, or with a type
%% not listed, gets 415. `AcceptCallback(Req, State)` returns `true`,
%% `false` (400), `{created, URI}` (201), `{see_other, URI}` (303) or
%% `{true, URI}` (201 when new, 303 when the resource existed).
%%
%%     content_types_accepted(Req, State) ->
%%         {[{<<"application/json">>, from_json}], Req, State}.
-callback content_types_accepted(mustang_req:req(), any())
	-> result([{binary() | media_type() | '*', atom()}]).

%% The media types the resource provides, each with the name of its
%% ProvideCallback, in order of preference (default `[{{<<"text">>,
%% <<"html">>, '*'}, to_html}]`). A media type is a binary
%% (`<<"text/html">>`) or `{Type, SubType, Params}`. `[]`, or none acceptable
%% to `accept`: 406. `ProvideCallback(Req, State)` returns the body: iodata or
%% `{sendfile, Offset, Length, Path}`.
%%
%%     content_types_provided(Req, State) ->
%%         {[{<<"application/json">>, to_json}, {<<"text/html">>, to_html}], Req, State}.
-callback content_types_provided(mustang_req:req(), any())
	-> result([{binary() | media_type(), atom()}]).

%% After `delete_resource` returned `true`: whether the deletion is done
%% (default `true`); `false`: 202 Accepted.
-callback delete_completed(mustang_req:req(), any()) -> result(boolean()).

%% For DELETE: deletes the resource and says whether it worked (default
%% `false`: 500).
-callback delete_resource(mustang_req:req(), any()) -> result(boolean()).

%% The `expires` header of GET and HEAD responses and 304s: a
%% `calendar:datetime()`, a binary sent as it is, or `undefined` (default: no
%% header).
-callback expires(mustang_req:req(), any()) -> result(calendar:datetime() | binary() | undefined).

%% Whether the client may not access the resource (default `false`); `true`:
%% 403.
-callback forbidden(mustang_req:req(), any()) -> result(boolean()).

%% The resource's entity tag, for conditional requests and the `etag` header:
%% a binary as in the header (`<<"\"v1\"">>`), `{strong | weak, Binary}`, or
%% `undefined` (default: none). Called at most once per request.
-callback generate_etag(mustang_req:req(), any())
	-> result(binary() | {weak | strong, binary()} | undefined).

%% Whether the client is authorized (default `true`); `{false, Challenge}`:
%% 401 with `www-authenticate: Challenge`.
%%
%%     is_authorized(Req, State) ->
%%         case mustang_req:parse_header(<<"authorization">>, Req) of
%%             {bearer, Token} when Token =:= State#state.token -> {true, Req, State};
%%             _ -> {{false, <<"Bearer">>}, Req, State}
%%         end.
-callback is_authorized(mustang_req:req(), any()) -> result(true | {false, iodata()}).

%% For PUT: whether the request conflicts with the resource's state (default
%% `false`); `true`: 409.
-callback is_conflict(mustang_req:req(), any()) -> result(boolean()).

%% The methods the resource knows (default GET, HEAD, POST, PUT, PATCH,
%% DELETE, OPTIONS); another method gets 501.
-callback known_methods(mustang_req:req(), any()) -> result([binary()]).

%% The languages the resource provides, lower case, in order of preference
%% (default: no language negotiation). `[]`, or none acceptable to
%% `accept-language` (matched by prefix, RFC 4647): 406. The one chosen is the
%% Req's `language` and goes in `content-language`.
-callback languages_provided(mustang_req:req(), any()) -> result([binary()]).

%% The resource's last modification date, for conditional requests and the
%% `last-modified` header: a `calendar:datetime()` (UTC) or `undefined`
%% (default: none). Called at most once per request.
-callback last_modified(mustang_req:req(), any()) -> result(calendar:datetime() | undefined).

%% Whether the request is malformed (default `false`); `true`: 400.
-callback malformed_request(mustang_req:req(), any()) -> result(boolean()).

%% For a resource that does not exist but `previously_existed`:
%% `{true, URI}` answers 301 with `location: URI` (default `false`).
-callback moved_permanently(mustang_req:req(), any()) -> result({true, iodata()} | false).

%% For a resource that does not exist but `previously_existed`:
%% `{true, URI}` answers 307 with `location: URI` (default `false`).
-callback moved_temporarily(mustang_req:req(), any()) -> result({true, iodata()} | false).

%% Before a 200: whether there are several representations the client should
%% choose from (default `false`); `true`: 300.
-callback multiple_choices(mustang_req:req(), any()) -> result(boolean()).

%% For OPTIONS: set the response (headers, body) on the Req and return `ok`:
%% the client gets 200 with it. Default: 200 with an `allow` header listing
%% `allowed_methods`.
-callback options(mustang_req:req(), any()) -> result(ok).

%% For a resource that does not exist: whether it existed before (default
%% `false`); `true` asks `moved_permanently` and `moved_temporarily`, then
%% 410 Gone (404 otherwise).
-callback previously_existed(mustang_req:req(), any()) -> result(boolean()).

%% For a GET with a valid range in a provided unit: whether the ranges (the
%% Req's `range`) can be served (default `true`); `false`: 416;
%% `{false, Length}`: 416 with `content-range: Unit */Length`.
-callback range_satisfiable(mustang_req:req(), any())
	-> result(boolean() | {false, non_neg_integer() | iodata()}).

%% The range units the resource serves, each with the name of its
%% RangeCallback or `auto` (bytes only: Mustang cuts the ProvideCallback's
%% body itself), `[{Unit, RangeCallback | auto}]` (default: no
%% `accept-ranges`, ranges ignored; `[]`: `accept-ranges: none`).
%% `RangeCallback(Req, State)` returns the parts, `[{{From, To, Total | '*'}
%% | binary(), Body}]`: one part is a 206 with `content-range`, several a
%% `multipart/byteranges` 206.
%%
%%     ranges_provided(Req, State) ->
%%         {[{<<"bytes">>, auto}], Req, State}.
-callback ranges_provided(mustang_req:req(), any()) -> result([{binary(), atom()}]).

%% Whether the client sent too many requests (default `false`);
%% `{true, Seconds | DateTime}`: 429 with `retry-after`.
-callback rate_limited(mustang_req:req(), any())
	-> result(false | {true, non_neg_integer() | calendar:datetime()}).

%% Whether the resource exists (default `true`); `false` takes the "missing"
%% branches of the flow (404, 410, moves, POST creating it, PUT creating it).
-callback resource_exists(mustang_req:req(), any()) -> result(boolean()).

%% Whether the service is available (default `true`); `false`: 503.
-callback service_available(mustang_req:req(), any()) -> result(boolean()).

%% Whether the request URI is too long for the resource (default `false`);
%% `true`: 414.
-callback uri_too_long(mustang_req:req(), any()) -> result(boolean()).

%% Whether the request's `content-*` headers are acceptable (default
%% `true`); `false`: 501.
-callback valid_content_headers(mustang_req:req(), any()) -> result(boolean()).

%% Whether the request body's length is acceptable (default `true`); `false`:
%% 413.
-callback valid_entity_length(mustang_req:req(), any()) -> result(boolean()).

%% Header names to add to the response's `vary` header, beyond those the
%% negotiation adds (`accept`, `accept-language`, `accept-charset` when more
%% than one value is provided); default `[]`.
-callback variances(mustang_req:req(), any()) -> result([binary()]).

-optional_callbacks([terminate/3, allowed_methods/2, allow_missing_post/2,
	charsets_provided/2, content_types_accepted/2, content_types_provided/2,
	delete_completed/2, delete_resource/2, expires/2, forbidden/2, generate_etag/2,
	is_authorized/2, is_conflict/2, known_methods/2, languages_provided/2,
	last_modified/2, malformed_request/2, moved_permanently/2, moved_temporarily/2,
	multiple_choices/2, options/2, previously_existed/2, range_satisfiable/2,
	ranges_provided/2, rate_limited/2, resource_exists/2, service_available/2,
	uri_too_long/2, valid_content_headers/2, valid_entity_length/2, variances/2]).

-define(KNOWN_METHODS, [<<"GET">>, <<"HEAD">>, <<"POST">>, <<"PUT">>, <<"PATCH">>,
	<<"DELETE">>, <<"OPTIONS">>]).
-define(ALLOWED_METHODS, [<<"HEAD">>, <<"GET">>, <<"OPTIONS">>]).
-define(CONTENT_TYPES_PROVIDED, [{{<<"text">>, <<"html">>, '*'}, to_html}]).

-record(state, {
	env :: mustang_middleware:env(),
	method :: binary(),
	handler :: module(),
	handler_state :: any(),
	%% Allowed methods, for the allow header of OPTIONS.
	allowed_methods = ?ALLOWED_METHODS :: [binary()],
	%% Content negotiation: what the resource provides, what was chosen.
	content_types_p = [] :: [{media_type(), atom()}],
	content_type_a :: undefined | {media_type(), atom()},
	languages_p = [] :: [binary()],
	charsets_p = [] :: [binary()],
	charset_a :: undefined | binary(),
	ranges_a = [] :: [{binary(), atom()}],
	exists = false :: boolean(),
	%% generate_etag and last_modified are called once.
	etag = unknown :: unknown | undefined | {strong | weak, binary()},
	last_modified = unknown :: unknown | undefined | calendar:datetime()
}).

-type state() :: #state{}.
-type step() :: fun((mustang_req:req(), state()) -> step_result()).
-type step_result() :: {next, step(), mustang_req:req(), state()}
	| {stop, mustang_req:req(), state()}
	| {switch_handler, module(), none | {opts, any()}, mustang_req:req(), state()}.

%% @doc Runs the REST flow for Handler, whose init/2 returned
%% {mustang_rest, Req, HandlerState}.
-spec upgrade(Req, Env, module(), any()) -> {ok, Req, Env}
	when Req :: mustang_req:req(), Env :: mustang_middleware:env().
upgrade(Req, Env, Handler, HandlerState) ->
	State = #state{env = Env, method = mustang_req:method(Req), handler = Handler,
		handler_state = HandlerState},
	run(fun service_available/2, Req, State).

%% @doc As upgrade/4: the REST flow takes no options, as in Cowboy.
-spec upgrade(Req, Env, module(), any(), any()) -> {ok, Req, Env}
	when Req :: mustang_req:req(), Env :: mustang_middleware:env().
upgrade(Req, Env, Handler, HandlerState, _Opts) ->
	upgrade(Req, Env, Handler, HandlerState).

%% The loop. The result clauses are outside the try, so the loop is a tail
%% call and a crash is caught once, with the Req and handler state of the
%% step that crashed.
-spec run(step(), mustang_req:req(), state()) -> {ok, mustang_req:req(), mustang_middleware:env()}.
run(Step, Req, State) ->
	try Step(Req, State) of
		{next, Next, Req2, State2} ->
			run(Next, Req2, State2);
		{stop, Req2, State2} ->
			terminate(Req2, State2);
		{switch_handler, Mod, Opts, Req2, #state{env = Env, handler = Handler,
				handler_state = HState}} ->
			case Opts of
				none -> Mod:upgrade(Req2, Env, Handler, HState);
				{opts, Opts2} -> Mod:upgrade(Req2, Env, Handler, HState, Opts2)
			end
	catch Class:Reason:Stacktrace ->
		#state{handler = Handler, handler_state = HState} = State,
		_ = mustang_handler:terminate({crash, Class, Reason}, Req, HState, Handler),
		erlang:raise(Class, Reason, Stacktrace)
	end.

terminate(Req, #state{env = Env, handler = Handler, handler_state = HState}) ->
	Result = mustang_handler:terminate(normal, Req, HState, Handler),
	{ok, Req, Env#{result => Result}}.

%% Calls a callback of the handler. stop and switch_handler end the flow
%% from any callback; any other value goes to Fun, and so does no_call when
%% the handler does not export the callback or returns no_call.
-spec with(mustang_req:req(), state(), atom(), fun((any(), mustang_req:req(), state()) -> step_result()))
	-> step_result().
with(Req, State = #state{handler = Handler, handler_state = HState}, Callback, Fun) ->
	case erlang:function_exported(Handler, Callback, 2) of
		false ->
			Fun(no_call, Req, State);
		true ->
			case Handler:Callback(Req, HState) of
				%% As in cowboy_rest: the callback acts as if not exported
				%% (cowboy_static's charsets_provided/2 does it).
				no_call ->
					Fun(no_call, Req, State);
				{stop, Req2, HState2} ->
					{stop, Req2, State#state{handler_state = HState2}};
				{{switch_handler, Mod}, Req2, HState2} ->
					{switch_handler, Mod, none, Req2, State#state{handler_state = HState2}};
				{{switch_handler, Mod, Opts}, Req2, HState2} ->
					{switch_handler, Mod, {opts, Opts}, Req2,
						State#state{handler_state = HState2}};
				{Value, Req2, HState2} ->
					Fun(Value, Req2, State#state{handler_state = HState2})
			end
	end.

%% A callback whose default is Expected: that value (or no callback) goes
%% to OnExpected, any other to OnOther. Each is a step or a status.
expect(Req, State, Callback, Expected, OnExpected, OnOther) ->
	with(Req, State, Callback, fun
		(Value, Req2, State2) when Value =:= no_call; Value =:= Expected ->
			next(Req2, State2, OnExpected);
		(_, Req2, State2) ->
			next(Req2, State2, OnOther)
	end).

%% A callback whose default is Default: that value (or no callback) goes to
%% Next; {Tag, Value} is the response Status with the header Name set to
%% Encode(Value).
expect_or_reply(Req, State, Callback, {Default, Next}, {Tag, Name, Encode, Status}) ->
	with(Req, State, Callback, fun
		(Value, Req2, State2) when Value =:= no_call; Value =:= Default ->
			next(Req2, State2, Next);
		({T, Value}, Req2, State2) when T =:= Tag ->
			respond(mustang_req:set_resp_header(Name, Encode(Value), Req2), State2, Status)
	end).

next(Req, State, Status) when is_integer(Status) ->
	respond(Req, State, Status);
next(Req, State, Step) ->
	{next, Step, Req, State}.

%% The response, unless the handler sent one. content-type goes when there
%% is no body, except on 200, where an empty representation is possible.
respond(Req = #{has_sent_resp := _}, State, _) ->
	{stop, Req, State};
respond(Req, State, Status) ->
	Req2 = case Status =/= 200 andalso not mustang_req:has_resp_body(Req) of
		true -> mustang_req:delete_resp_header(<<"content-type">>, Req);
		false -> Req
	end,
	{stop, mustang_req:reply(Status, Req2), State}.

default(no_call, Default) -> Default;
default(Value, _) -> Value.

%% Start (doc/guide/rest/start.svg).

service_available(Req, State) ->
	expect(Req, State, service_available, true, fun known_methods/2, 503).

known_methods(Req, State = #state{method = Method}) ->
	with(Req, State, known_methods, fun(Value, Req2, State2) ->
		case lists:member(Method, default(Value, ?KNOWN_METHODS)) of
			true -> next(Req2, State2, fun uri_too_long/2);
			false -> respond(Req2, State2, 501)
		end
	end).

uri_too_long(Req, State) ->
	expect(Req, State, uri_too_long, false, fun allowed_methods/2, 414).

allowed_methods(Req, State = #state{method = Method}) ->
	with(Req, State, allowed_methods, fun(Value, Req2, State2) ->
		Allowed = default(Value, ?ALLOWED_METHODS),
		case lists:member(Method, Allowed) of
			true ->
				next(Req2, State2#state{allowed_methods = Allowed}, fun malformed_request/2);
			false ->
				respond(set_allow(Allowed, Req2), State2, 405)
		end
	end).

set_allow(Methods, Req) ->
	mustang_req:set_resp_header(<<"allow">>, join(Methods), Req).

malformed_request(Req, State) ->
	expect(Req, State, malformed_request, false, fun is_authorized/2, 400).

is_authorized(Req, State) ->
	expect_or_reply(Req, State, is_authorized, {true, fun forbidden/2},
		{false, <<"www-authenticate">>, fun(Challenge) -> Challenge end, 401}).

forbidden(Req, State) ->
	expect(Req, State, forbidden, false, fun rate_limited/2, 403).

rate_limited(Req, State) ->
	expect_or_reply(Req, State, rate_limited, {false, fun valid_content_headers/2},
		{true, <<"retry-after">>, fun retry_after/1, 429}).

retry_after(Seconds) when is_integer(Seconds) -> integer_to_binary(Seconds);
retry_after(DateTime) -> mustang_date:rfc7231(DateTime).

valid_content_headers(Req, State) ->
	expect(Req, State, valid_content_headers, true, fun valid_entity_length/2, 501).

valid_entity_length(Req, State) ->
	expect(Req, State, valid_entity_length, true, fun options/2, 413).

%% OPTIONS method (options.svg).

options(Req, State = #state{method = <<"OPTIONS">>, allowed_methods = Allowed}) ->
	with(Req, State, options, fun
		(no_call, Req2, State2) -> respond(set_allow(Allowed, Req2), State2, 200);
		(ok, Req2, State2) -> respond(Req2, State2, 200)
	end);
options(Req, State) ->
	next(Req, State, fun content_types_provided/2).

%% Content negotiation (conneg.svg): media type, language, charset; then
%% the ranges and the vary header.

content_types_provided(Req, State) ->
	with(Req, State, content_types_provided, fun
		([], Req2, State2) ->
			respond(Req2, State2, 406);
		(Value, Req2, State2) ->
			CTP = [{mustang_conneg:normalize_media_type(Type), Fun}
				|| {Type, Fun} <- default(Value, ?CONTENT_TYPES_PROVIDED)],
			accept_header(Req2, State2#state{content_types_p = CTP})
	end).

accept_header(Req, State = #state{content_types_p = CTP = [First | _]}) ->
	case mustang_req:header(<<"accept">>, Req) of
		undefined ->
			media_type_chosen(Req, State, First, mustang_conneg:default_media_type(First));
		Value ->
			case mustang_http_hd:parse_accept(Value) of
				{ok, Accept} -> choose_media_type(Req, State, mustang_conneg:media_types(Accept, CTP));
				{error, _} -> respond(Req, State, 400)
			end
	end.

%% The first choice of mustang_conneg:media_types/2, 406 when there is
%% none. A choice that depends on the charset of the accepted range asks
%% charsets_provided (any charset when it is not exported).
choose_media_type(Req, State, []) ->
	respond(Req, State, 406);
choose_media_type(Req, State, [{chosen, Provided, MediaType, Charset} | _]) ->
	media_type_chosen(Req, State#state{charset_a = Charset}, Provided, MediaType);
choose_media_type(Req, State, [{if_charset, Charset, Provided, MediaType} | Rest]) ->
	with(Req, State, charsets_provided, fun
		(no_call, Req2, State2) ->
			media_type_chosen(Req2, State2#state{charset_a = Charset}, Provided, MediaType);
		(CP, Req2, State2) ->
			case lists:member(Charset, CP) of
				true ->
					media_type_chosen(Req2, State2#state{charsets_p = CP, charset_a = Charset},
						Provided, MediaType);
				false ->
					choose_media_type(Req2, State2, Rest)
			end
	end).

media_type_chosen(Req, State, Provided, MediaType) ->
	next(Req#{media_type => MediaType}, State#state{content_type_a = Provided},
		fun languages_provided/2).

languages_provided(Req, State) ->
	negotiate(Req, State, languages_provided, <<"accept-language">>, fun charsets_provided/2,
		fun mustang_conneg:language/2, fun language_chosen/4).

language_chosen(Req, State, LP, Language) ->
	Req2 = mustang_req:set_resp_header(<<"content-language">>, Language, Req),
	next(Req2#{language => Language}, State#state{languages_p = LP}, fun charsets_provided/2).

%% Skipped when the media type already fixed the charset.
charsets_provided(Req, State = #state{charset_a = Charset}) when Charset =/= undefined ->
	next(Req, State, fun set_content_type/2);
charsets_provided(Req, State) ->
	negotiate(Req, State, charsets_provided, <<"accept-charset">>, fun set_content_type/2,
		fun mustang_conneg:charset/2, fun charset_chosen/4).

charset_chosen(Req, State, CP, Charset) ->
	next(Req, State#state{charsets_p = CP, charset_a = Charset}, fun set_content_type/2).

%% languages_provided and charsets_provided: not exported, the step is
%% skipped; [] is 406; without the accept header the first value provided,
%% else Choose's (406 when none); 400 when the header does not parse.
negotiate(Req, State, Callback, Header, Skip, Choose, Chosen) ->
	with(Req, State, Callback, fun
		(no_call, Req2, State2) ->
			next(Req2, State2, Skip);
		([], Req2, State2) ->
			respond(Req2, State2, 406);
		(Provided = [First | _], Req2, State2) ->
			case mustang_req:header(Header, Req2) of
				undefined ->
					Chosen(Req2, State2, Provided, First);
				Value ->
					case mustang_http_hd:parse(Header, Value) of
						{ok, Ranges} ->
							case Choose(Provided, Ranges) of
								{ok, Choice} -> Chosen(Req2, State2, Provided, Choice);
								error -> respond(Req2, State2, 406)
							end;
						{error, _} ->
							respond(Req2, State2, 400)
					end
			end
	end).

%% The content-type of the response, and the charset in the Req.
set_content_type(Req = #{media_type := MediaType}, State = #state{charset_a = Charset}) ->
	Req2 = mustang_req:set_resp_header(<<"content-type">>,
		mustang_conneg:content_type(MediaType, Charset), Req),
	Req3 = case Charset of
		undefined -> Req2;
		_ -> Req2#{charset => Charset}
	end,
	next(Req3, State, fun ranges_provided/2).

%% accept-ranges: the units provided, "none" for an empty list, no header
%% when the callback is not exported.
ranges_provided(Req, State) ->
	with(Req, State, ranges_provided, fun
		(no_call, Req2, State2) ->
			next(Req2, State2, fun variances/2);
		([], Req2, State2) ->
			Req3 = mustang_req:set_resp_header(<<"accept-ranges">>, <<"none">>, Req2),
			next(Req3, State2, fun variances/2);
		(RP, Req2, State2) ->
			Req3 = mustang_req:set_resp_header(<<"accept-ranges">>,
				join([Unit || {Unit, _} <- RP]), Req2),
			next(Req3, State2#state{ranges_a = RP}, fun variances/2)
	end).

%% vary: the accept headers whose negotiation had a choice, then the
%% handler's variances.
variances(Req, State = #state{content_types_p = CTP, languages_p = LP, charsets_p = CP}) ->
	Auto = [Name || {Name, List} <- [{<<"accept-charset">>, CP},
		{<<"accept-language">>, LP}, {<<"accept">>, CTP}], length(List) > 1],
	with(Req, State, variances, fun(Value, Req2, State2) ->
		Req3 = case Auto ++ default(Value, []) of
			[] -> Req2;
			Vary -> mustang_req:set_resp_header(<<"vary">>, join(Vary), Req2)
		end,
		next(Req3, State2, fun resource_exists/2)
	end).

resource_exists(Req, State) ->
	expect(Req, State, resource_exists, true,
		fun(Req2, State2) -> if_match_exists(Req2, State2#state{exists = true}) end,
		fun if_match_must_not_exist/2).

%% Conditional requests (cond.svg), RFC 9110 13.2.2 order.

if_match_exists(Req, State) ->
	case etag_header(<<"if-match">>, Req) of
		undefined -> next(Req, State, fun if_unmodified_since_exists/2);
		'*' -> next(Req, State, fun if_none_match_exists/2);
		invalid -> respond(Req, State, 400);
		ETags -> if_match(Req, State, ETags)
	end.

%% Strong comparison (RFC 9110 8.8.3.2): a weak etag never matches.
if_match(Req, State, ETags) ->
	etag(Req, State, fun
		({strong, _} = ETag, Req2, State2) ->
			case lists:member(ETag, ETags) of
				true -> next(Req2, State2, fun if_none_match_exists/2);
				false -> respond(Req2, State2, 412)
			end;
		(_, Req2, State2) ->
			respond(Req2, State2, 412)
	end).

if_unmodified_since_exists(Req, State) ->
	case date_header(<<"if-unmodified-since">>, Req) of
		undefined -> next(Req, State, fun if_none_match_exists/2);
		Date -> if_unmodified_since(Req, State, Date)
	end.

%% Without a last modification date the condition is ignored (RFC 9110 13.1.4).
if_unmodified_since(Req, State, Date) ->
	last_modified(Req, State, fun
		(LastModified, Req2, State2) when LastModified =/= undefined, LastModified > Date ->
			respond(Req2, State2, 412);
		(_, Req2, State2) ->
			next(Req2, State2, fun if_none_match_exists/2)
	end).

if_none_match_exists(Req, State) ->
	case etag_header(<<"if-none-match">>, Req) of
		undefined -> next(Req, State, fun if_modified_since_exists/2);
		'*' -> precondition_is_head_get(Req, State);
		invalid -> respond(Req, State, 400);
		ETags -> if_none_match(Req, State, ETags)
	end.

%% Weak comparison (RFC 9110 8.8.3.2): the opaque tags are compared. When
%% it fails, If-Modified-Since is not evaluated (RFC 9110 13.1.3).
if_none_match(Req, State, ETags) ->
	etag(Req, State, fun
		({_, Tag}, Req2, State2) ->
			case lists:keymember(Tag, 2, ETags) of
				true -> precondition_is_head_get(Req2, State2);
				false -> next(Req2, State2, fun method/2)
			end;
		(undefined, Req2, State2) ->
			next(Req2, State2, fun method/2)
	end).

precondition_is_head_get(Req, State = #state{method = Method})
		when Method =:= <<"GET">>; Method =:= <<"HEAD">> ->
	not_modified(Req, State);
precondition_is_head_get(Req, State) ->
	respond(Req, State, 412).

%% Only for GET and HEAD, and a date in the future is ignored (RFC 9110 13.1.3).
if_modified_since_exists(Req, State = #state{method = Method})
		when Method =:= <<"GET">>; Method =:= <<"HEAD">> ->
	case date_header(<<"if-modified-since">>, Req) of
		undefined ->
			next(Req, State, fun method/2);
		Date ->
			case Date > erlang:universaltime() of
				true -> next(Req, State, fun method/2);
				false -> if_modified_since(Req, State, Date)
			end
	end;
if_modified_since_exists(Req, State) ->
	next(Req, State, fun method/2).

if_modified_since(Req, State, Date) ->
	last_modified(Req, State, fun
		(LastModified, Req2, State2) when LastModified =:= undefined; LastModified > Date ->
			next(Req2, State2, fun method/2);
		(_, Req2, State2) ->
			not_modified(Req2, State2)
	end).

not_modified(Req, State) ->
	Req2 = mustang_req:delete_resp_header(<<"content-type">>, Req),
	set_resp_etag(Req2, State, fun(Req3, State2) ->
		set_resp_expires(Req3, State2, fun(Req4, State3) ->
			respond(Req4, State3, 304)
		end)
	end).

%% The value of an If-Match or If-None-Match header.
etag_header(Name, Req) ->
	case mustang_req:header(Name, Req) of
		undefined ->
			undefined;
		Value ->
			case mustang_http_hd:parse(Name, Value) of
				{ok, ETags} -> ETags;
				{error, _} -> invalid
			end
	end.

%% An invalid date is ignored (RFC 9110 13.1.3, 13.1.4).
date_header(Name, Req) ->
	case mustang_req:header(Name, Req) of
		undefined ->
			undefined;
		Value ->
			case mustang_http_hd:parse_date(Value) of
				{ok, Date} -> Date;
				{error, _} -> undefined
			end
	end.

%% generate_etag and last_modified, called at most once.
etag(Req, State = #state{etag = unknown}, Fun) ->
	with(Req, State, generate_etag, fun(Value, Req2, State2) ->
		ETag = case Value of
			no_call -> undefined;
			undefined -> undefined;
			{Strength, Tag} when Strength =:= strong; Strength =:= weak -> {Strength, Tag};
			Bin when is_binary(Bin) ->
				{ok, [Parsed]} = mustang_http_hd:parse_if_match(Bin),
				Parsed
		end,
		Fun(ETag, Req2, State2#state{etag = ETag})
	end);
etag(Req, State = #state{etag = ETag}, Fun) ->
	Fun(ETag, Req, State).

last_modified(Req, State = #state{last_modified = unknown}, Fun) ->
	with(Req, State, last_modified, fun(Value, Req2, State2) ->
		LastModified = default(Value, undefined),
		Fun(LastModified, Req2, State2#state{last_modified = LastModified})
	end);
last_modified(Req, State = #state{last_modified = LastModified}, Fun) ->
	Fun(LastModified, Req, State).

%% Resource missing: PUT, POST, GET/HEAD and DELETE diagrams.

if_match_must_not_exist(Req, State) ->
	case mustang_req:header(<<"if-match">>, Req) of
		undefined -> is_put_to_missing_resource(Req, State);
		_ -> respond(Req, State, 412)
	end.

is_put_to_missing_resource(Req, State = #state{method = <<"PUT">>}) ->
	moved_permanently(Req, State, fun is_conflict/2);
is_put_to_missing_resource(Req, State) ->
	expect(Req, State, previously_existed, false,
		fun(Req2, State2) -> is_post_to_missing_resource(Req2, State2, 404) end,
		fun(Req2, State2) -> moved_permanently(Req2, State2, fun moved_temporarily/2) end).

moved_permanently(Req, State, OnFalse) ->
	moved(Req, State, moved_permanently, 301, OnFalse).

moved_temporarily(Req, State) ->
	moved(Req, State, moved_temporarily, 307,
		fun(Req2, State2) -> is_post_to_missing_resource(Req2, State2, 410) end).

moved(Req, State, Callback, Status, OnFalse) ->
	expect_or_reply(Req, State, Callback, {false, OnFalse},
		{true, <<"location">>, fun(URI) -> URI end, Status}).

is_post_to_missing_resource(Req, State = #state{method = <<"POST">>}, OnFalse) ->
	expect(Req, State, allow_missing_post, true, fun accept_resource/2, OnFalse);
is_post_to_missing_resource(Req, State, Status) ->
	respond(Req, State, Status).

%% The method, once the resource exists and the conditions hold.

method(Req, State = #state{method = <<"DELETE">>}) ->
	expect(Req, State, delete_resource, true, fun delete_completed/2, 500);
method(Req, State = #state{method = <<"PUT">>}) ->
	is_conflict(Req, State);
method(Req, State = #state{method = Method})
		when Method =:= <<"POST">>; Method =:= <<"PATCH">> ->
	accept_resource(Req, State);
method(Req, State = #state{method = Method})
		when Method =:= <<"GET">>; Method =:= <<"HEAD">> ->
	set_resp_body_etag(Req, State);
method(Req, State) ->
	multiple_choices(Req, State).

%% DELETE method (delete.svg).

delete_completed(Req, State) ->
	expect(Req, State, delete_completed, true, fun has_resp_body/2, 202).

%% PUT, POST and PATCH methods (put_post_patch.svg).

is_conflict(Req, State) ->
	expect(Req, State, is_conflict, false, fun accept_resource/2, 409).

accept_resource(Req, State) ->
	with(Req, State, content_types_accepted, fun
		(no_call, _, _) ->
			error({missing_callback, content_types_accepted});
		([], Req2, State2) ->
			respond(Req2, State2, 415);
		(CTA, Req2, State2) ->
			case mustang_req:header(<<"content-type">>, Req2) of
				undefined ->
					respond(Req2, State2, 415);
				Value ->
					case mustang_http_hd:parse_content_type(Value) of
						{ok, ContentType} ->
							case mustang_conneg:accepted_content_type(ContentType, CTA) of
								{ok, Fun} -> process_content_type(Req2, State2, Fun);
								error -> respond(Req2, State2, 415)
							end;
						{error, _} ->
							respond(Req2, State2, 415)
					end
			end
	end).

%% The AcceptCallback: true; false (400); {created, URI} (201) or
%% {see_other, URI} (303) with a location header; {true, URI}, the older
%% form, is 303 when the resource existed and 201 when it did not.
process_content_type(Req, State = #state{exists = Exists}, Fun) ->
	with(Req, State, Fun, fun
		(no_call, _, _) ->
			error({missing_callback, Fun});
		(true, Req2, State2) when Exists ->
			has_resp_body(Req2, State2);
		(true, Req2, State2) ->
			maybe_created(Req2, State2);
		(false, Req2, State2) ->
			respond(Req2, State2, 400);
		({created, URI}, Req2, State2) ->
			respond(set_location(URI, Req2), State2, 201);
		({see_other, URI}, Req2, State2) ->
			respond(set_location(URI, Req2), State2, 303);
		({true, URI}, Req2, State2) when Exists ->
			respond(set_location(URI, Req2), State2, 303);
		({true, URI}, Req2, State2) ->
			respond(set_location(URI, Req2), State2, 201)
	end).

set_location(URI, Req) ->
	mustang_req:set_resp_header(<<"location">>, URI, Req).

%% A PUT that created the resource at this URI, or a location header set by
%% the handler, is 201.
maybe_created(Req, State = #state{method = <<"PUT">>}) ->
	respond(Req, State, 201);
maybe_created(Req, State) ->
	case mustang_req:has_resp_header(<<"location">>, Req) of
		true -> respond(Req, State, 201);
		false -> has_resp_body(Req, State)
	end.

has_resp_body(Req, State) ->
	case mustang_req:has_resp_body(Req) of
		true -> multiple_choices(Req, State);
		false -> respond(Req, State, 204)
	end.

multiple_choices(Req, State) ->
	expect(Req, State, multiple_choices, false, 200, 300).

%% GET and HEAD methods (get_head.svg): etag, last-modified and expires,
%% then the range or the whole representation.

set_resp_body_etag(Req, State) ->
	set_resp_etag(Req, State, fun set_resp_body_last_modified/2).

set_resp_etag(Req, State, Next) ->
	etag(Req, State, fun
		(undefined, Req2, State2) ->
			Next(Req2, State2);
		(ETag, Req2, State2) ->
			Next(mustang_req:set_resp_header(<<"etag">>, encode_etag(ETag), Req2), State2)
	end).

encode_etag({strong, Tag}) -> [$", Tag, $"];
encode_etag({weak, Tag}) -> [<<"W/\"">>, Tag, $"].

set_resp_body_last_modified(Req, State) ->
	last_modified(Req, State, fun
		(undefined, Req2, State2) ->
			set_resp_body_expires(Req2, State2);
		(LastModified, Req2, State2) ->
			Req3 = mustang_req:set_resp_header(<<"last-modified">>,
				mustang_date:rfc7231(LastModified), Req2),
			set_resp_body_expires(Req3, State2)
	end).

set_resp_body_expires(Req, State) ->
	set_resp_expires(Req, State, fun range_request/2).

set_resp_expires(Req, State, Next) ->
	with(Req, State, expires, fun
		(Value, Req2, State2) when Value =:= no_call; Value =:= undefined ->
			Next(Req2, State2);
		(Expires, Req2, State2) when is_binary(Expires) ->
			Next(mustang_req:set_resp_header(<<"expires">>, Expires, Req2), State2);
		(Expires, Req2, State2) ->
			Next(mustang_req:set_resp_header(<<"expires">>,
				mustang_date:rfc7231(Expires), Req2), State2)
	end).

%% Ranges (RFC 9110 14): GET only, when the resource provides ranges. An
%% invalid range header or a unit the resource does not provide is
%% ignored: the whole representation is sent.
range_request(Req, State = #state{method = <<"GET">>, ranges_a = [_ | _]}) ->
	case mustang_req:header(<<"range">>, Req) of
		undefined ->
			set_resp_body(Req, State);
		Value ->
			case mustang_http_hd:parse_range(Value) of
				{ok, {bytes, Ranges}} -> if_range(Req, State, <<"bytes">>, Ranges);
				{ok, {Unit, Ranges}} -> if_range(Req, State, Unit, Ranges);
				{error, _} -> set_resp_body(Req, State)
			end
	end;
range_request(Req, State) ->
	set_resp_body(Req, State).

%% If-Range (RFC 9110 13.1.5): the range applies only when the validator
%% is the current strong etag, or exactly the last modification date.
if_range(Req, State, Unit, Ranges) ->
	case mustang_req:header(<<"if-range">>, Req) of
		undefined ->
			range_unit(Req, State, Unit, Ranges);
		Value ->
			case mustang_http_hd:parse_if_range(Value) of
				{ok, ETag = {strong, _}} ->
					if_range_match(Req, State, fun etag/3, ETag, Unit, Ranges);
				{ok, Date = {{_, _, _}, {_, _, _}}} ->
					if_range_match(Req, State, fun last_modified/3, Date, Unit, Ranges);
				_ ->
					set_resp_body(Req, State)
			end
	end.

if_range_match(Req, State, Validator, Expected, Unit, Ranges) ->
	Validator(Req, State, fun
		(Current, Req2, State2) when Current =:= Expected ->
			range_unit(Req2, State2, Unit, Ranges);
		(_, Req2, State2) ->
			set_resp_body(Req2, State2)
	end).

range_unit(Req, State = #state{ranges_a = RP}, Unit, Ranges) ->
	case lists:keyfind(Unit, 1, RP) of
		{_, Callback} -> range_satisfiable(Req#{range => {Unit, Ranges}}, State, Callback);
		false -> set_resp_body(Req, State)
	end.

range_satisfiable(Req, State, Callback) ->
	with(Req, State, range_satisfiable, fun
		(Value, Req2, State2) when Value =:= no_call; Value =:= true ->
			range_body(Req2, State2, Callback);
		(false, Req2, State2) ->
			respond(Req2, State2, 416);
		({false, MaxLen}, Req2, State2) ->
			#{range := {Unit, _}} = Req2,
			Length = case MaxLen of
				_ when is_integer(MaxLen) -> integer_to_binary(MaxLen);
				_ -> MaxLen
			end,
			Req3 = mustang_req:set_resp_header(<<"content-range">>,
				[Unit, <<" */">>, Length], Req2),
			respond(Req3, State2, 416)
	end).

%% auto: the ProvideCallback's body, cut here (bytes only). Otherwise the
%% RangeCallback returns the parts [{Range, Body}].
range_body(Req = #{range := {<<"bytes">>, Ranges}}, State = #state{content_type_a = {_, Fun}},
		auto) ->
	with(Req, State, Fun, fun
		(no_call, _, _) ->
			error({missing_callback, Fun});
		(Body, Req2, State2) ->
			case mustang_range:byte_parts(Ranges, Body) of
				{ok, Parts} ->
					send_ranges(Req2, State2, <<"bytes">>, Parts);
				{unsatisfiable, Length} ->
					Req3 = mustang_req:set_resp_header(<<"content-range">>,
						[<<"bytes */">>, integer_to_binary(Length)], Req2),
					respond(Req3, State2, 416)
			end
	end);
range_body(Req = #{range := {Unit, _}}, State, Callback) ->
	with(Req, State, Callback, fun
		(no_call, _, _) ->
			error({missing_callback, Callback});
		(Parts = [_ | _], Req2, State2) ->
			send_ranges(Req2, State2, Unit, Parts)
	end).

%% One part: 206 with content-range. Several: multipart/byteranges, each
%% part with the content-type of the representation; streamed when a part
%% is a sendfile tuple.
send_ranges(Req, State, Unit, [{Range, Body}]) ->
	Req2 = mustang_req:set_resp_header(<<"content-range">>,
		mustang_range:content_range(Unit, Range), Req),
	{stop, mustang_req:reply(206, #{}, Body, Req2), State};
send_ranges(Req, State, Unit, Parts) ->
	Boundary = binary:encode_hex(crypto:strong_rand_bytes(16)),
	ContentType = mustang_req:resp_header(<<"content-type">>, Req, <<"application/octet-stream">>),
	{MultipartType, Pieces} = mustang_range:multipart(Boundary, ContentType, Unit, Parts),
	Headers = #{<<"content-type">> => MultipartType},
	case mustang_range:has_sendfile(Pieces) of
		false ->
			{stop, mustang_req:reply(206, Headers, Pieces, Req), State};
		true ->
			Req2 = mustang_req:stream_reply(206, Headers, Req),
			ok = lists:foreach(fun(Piece) -> mustang_req:stream_body(Piece, nofin, Req2) end,
				Pieces),
			ok = mustang_req:stream_body(<<>>, fin, Req2),
			{stop, Req2, State}
	end.

%% The whole representation: the ProvideCallback's body.
set_resp_body(Req, State = #state{content_type_a = {_, Fun}}) ->
	with(Req, State, Fun, fun
		(no_call, _, _) ->
			error({missing_callback, Fun});
		(Body, Req2, State2) ->
			multiple_choices(mustang_req:set_resp_body(Body, Req2), State2)
	end).

join([]) -> <<>>;
join([First | Rest]) -> iolist_to_binary([First | [[<<", ">>, X] || X <- Rest]]).
