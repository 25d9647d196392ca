%% Constraints: validate and convert user input (route bindings, query string
%% and cookie fields), with the interface of Cowboy's constraints.
%%
%% A constraint is the atom `int` or `nonempty`, or a fun of arity 2 called as
%% Fun(Operation, Value):
%%
%% - Fun(forward, Input) -> {ok, Value} | {error, Reason}: validate and convert;
%% - Fun(reverse, Value) -> {ok, Input} | {error, Reason}: convert back;
%% - Fun(format_error, {Reason, Value}) -> iodata(): a sentence for humans.
%%
%% A list of constraints is applied in order, each one getting the value the
%% previous one returned. reverse/2 applies the list from the last constraint to
%% the first, so that it undoes validate/2. An error carries the constraint that
%% failed, its reason and the value it was given: format_error/1 turns it into
%% text.
%%
%% A field is how routes (and match functions) name their constraints:
%% `Name`, `{Name, Constraints}` or `{Name, Constraints, Default}`.
-module(mustang_constraints).

-export([validate/2]).
-export([reverse/2]).
-export([format_error/1]).
-export([match_fields/2]).

%% A constraint: `int`, `nonempty`, or a fun of arity 2 (see the module's
%% head comment).
-type constraint() :: int | nonempty | fun((forward | reverse | format_error, any()) -> any()).
%% Why a constraint failed: the constraint, its reason, and the value it was
%% given.
-type reason() :: {constraint(), Reason :: any(), Value :: any()}.
%% A field of a route, `mustang_req:match_qs/2` or `match_cookies/2`: a name,
%% with constraints, with a default for when it is missing.
-type field() :: atom()
	| {atom(), constraint() | [constraint()]}
	| {atom(), constraint() | [constraint()], Default :: any()}.
%% A list of fields.
-type fields() :: [field()].
-export_type([constraint/0]).
-export_type([reason/0]).
-export_type([field/0]).
-export_type([fields/0]).

%% Runs one constraint or a list of them forward on Value (a list in order,
%% each one getting what the previous one returned): `{ok, Converted}`, or
%% `{error, {Constraint, Reason, Value}}` naming the constraint that failed,
%% its reason and the value it was given.
%%
%%     {ok, 42} = mustang_constraints:validate(<<"42">>, int),
%%     {error, {int, not_an_integer, <<"x">>}} = mustang_constraints:validate(<<"x">>, [nonempty, int])
%%
%% A constraint that is not `int`, `nonempty` or a fun of arity 2 raises
%% `error({badconstraint, Constraint})`; a fun that returns something other
%% than `{ok, _}` or `{error, _}` raises `error({badconstraint, Fun, Op,
%% Result})`.
-spec validate(any(), constraint() | [constraint()]) -> {ok, any()} | {error, reason()}.
validate(Value, Constraints) when is_list(Constraints) ->
	apply_all(forward, Value, Constraints);
validate(Value, Constraint) ->
	apply_all(forward, Value, [Constraint]).

%% Runs one constraint or a list of them backward (the last constraint first)
%% on a converted value, to get the input back: the inverse of `validate/2`,
%% for building URLs. `{ok, Input}` or `{error, {Constraint, Reason,
%% Value}}`; raises as `validate/2`.
%%
%%     {ok, <<"42">>} = mustang_constraints:reverse(42, int)
-spec reverse(any(), constraint() | [constraint()]) -> {ok, any()} | {error, reason()}.
reverse(Value, Constraints) when is_list(Constraints) ->
	apply_all(reverse, Value, lists:reverse(Constraints));
reverse(Value, Constraint) ->
	apply_all(reverse, Value, [Constraint]).

%% A sentence for humans (iodata) from the error of `validate/2` or
%% `reverse/2`: the failed constraint's `format_error` operation.
%%
%%     <<"The value <<\"x\">> is not an integer.">> =
%%         iolist_to_binary(mustang_constraints:format_error({int, not_an_integer, <<"x">>}))
-spec format_error(reason()) -> iodata().
format_error({Constraint, Reason, Value}) ->
	apply_one(Constraint, format_error, {Reason, Value}).

-spec apply_all(forward | reverse, any(), [constraint()]) -> {ok, any()} | {error, reason()}.
apply_all(_, Value, []) ->
	{ok, Value};
apply_all(Op, Value0, [Constraint | Tail]) ->
	case apply_one(Constraint, Op, Value0) of
		{ok, Value} -> apply_all(Op, Value, Tail);
		{error, Reason} -> {error, {Constraint, Reason, Value0}};
		Other -> error({badconstraint, Constraint, Op, Other})
	end.

-spec apply_one(constraint(), forward | reverse | format_error, any()) -> any().
apply_one(int, Op, Value) ->
	int(Op, Value);
apply_one(nonempty, Op, Value) ->
	nonempty(Op, Value);
apply_one(Fun, Op, Value) when is_function(Fun, 2) ->
	Fun(Op, Value);
apply_one(Other, _, _) ->
	error({badconstraint, Other}).

%% An optional sign then decimal digits, as binary_to_integer/1 accepts them.
-spec int(forward | reverse | format_error, any()) -> {ok, any()} | {error, atom()} | iodata().
int(forward, Value) when is_binary(Value) ->
	try
		{ok, binary_to_integer(Value)}
	catch error:badarg ->
		{error, not_an_integer}
	end;
int(forward, _) ->
	{error, not_an_integer};
int(reverse, Value) when is_integer(Value) ->
	{ok, integer_to_binary(Value)};
int(reverse, _) ->
	{error, not_an_integer};
int(format_error, {not_an_integer, Value}) ->
	io_lib:format("The value ~p is not an integer.", [Value]).

-spec nonempty(forward | reverse | format_error, any()) -> {ok, any()} | {error, atom()} | iodata().
nonempty(format_error, {empty, Value}) ->
	io_lib:format("The value ~p is empty.", [Value]);
nonempty(_, <<>>) ->
	{error, empty};
nonempty(_, Value) ->
	{ok, Value}.

%% Fields from key-value pairs, as `mustang_req:match_qs/2`,
%% `match_cookies/2` and `read_and_match_urlencoded_body/2` use it: each field
%% is `Name`, `{Name, Constraints}` or `{Name, Constraints, Default}`; the
%% result is `{ok, #{Name => Value}}` with the values converted and the
%% defaults filled in, or `{error, #{Name => Reason}}` with every field that
%% failed: `required` for a missing field without default, the error of
%% `validate/2` otherwise. A key given more than once has the list of its
%% values, which the constraints get whole.
%%
%%     {ok, #{page := 2, q := <<>>}} =
%%         mustang_constraints:match_fields([{page, int}, {q, [], <<>>}], [{<<"page">>, <<"2">>}])
-spec match_fields(fields(), [{binary(), binary()}]) -> {ok, map()} | {error, #{atom() => any()}}.
match_fields(Fields, KVs) ->
	{Map, Errors} = lists:foldl(fun(Field, {Acc, Errs}) ->
		{Name, Constraints, Default} = field_spec(Field),
		Key = atom_to_binary(Name, utf8),
		case [V || {K, V} <- KVs, K =:= Key] of
			[] when Default =:= '$mustang_required' ->
				{Acc, Errs#{Name => required}};
			[] ->
				{Acc#{Name => Default}, Errs};
			Values ->
				Value = case Values of [One] -> One; _ -> Values end,
				case validate(Value, Constraints) of
					{ok, Value2} -> {Acc#{Name => Value2}, Errs};
					{error, Reason} -> {Acc, Errs#{Name => Reason}}
				end
		end
	end, {#{}, #{}}, Fields),
	case map_size(Errors) of
		0 -> {ok, Map};
		_ -> {error, Errors}
	end.

field_spec(Name) when is_atom(Name) -> {Name, [], '$mustang_required'};
field_spec({Name, Constraints}) -> {Name, Constraints, '$mustang_required'};
field_spec({Name, Constraints, Default}) -> {Name, Constraints, Default}.
