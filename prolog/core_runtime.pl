/*  What the compiled rules call at run time.

    The clauses core_compile.pl writes into an engine module call these
    (module-qualified: the engine module imports nothing): consuming and
    replacing stored goals under the recent and chronological policies,
    the do-action of a rule, and the windowed aggregates.  They are
    exported for that reason alone; nothing else calls them.
*/
:- module(core_runtime,
          [ consume_goal/2,             % +Module, +Goal
            replace_goals/2,            % +Module, +Goal
            run_action/6,               % +Module, :Action, +RuleKey, +Head, +T1, +T2
            aggregate_step/10           % +Module, +Store, +Group, +Window, +Op, +X,
                                        % +T1, +T2, -TS, -Value
          ]).
:- set_prolog_flag(optimise, true).   % file-scoped: inline arithmetic
:- use_module(library(lists)).
:- use_module(library(apply)).
:- use_module(library(pairs)).
:- use_module(core_errors, [record_error/4]).

%!  consume_goal(+Module, +Goal) is det.
%
%   Remove the stored goal that a recent/chronological step just used: the
%   first clause identical to it (equivalent when several are), found by
%   retract/1 through the index for ground goals.  Called from compiled
%   rules only.
%
%   A goal with variables is erased through its clause reference: the
%   first clause that unifies with it (what retract/1 would take) can be
%   a more general goal stored before it, so the clause is found as a
%   variant and erased by reference (goals with variables are rare).
consume_goal(M, G) :-
    (   ground(G)
    ->  retract(M:G)
    ;   copy_term(G, T),
        once(( clause(M:T, true, Ref), T =@= G )),
        erase(Ref)
    ).

%!  replace_goals(+Module, +Goal) is det.
%
%   Remove the stored goals with Goal's bindings (its arguments but the
%   interval, by unification), before Goal is stored: the
%   replace_bindings option.  Called from compiled rules only.
replace_goals(M, G) :-
    functor(G, N, A),
    functor(P, N, A),
    K is A - 2,
    same_args(K, G, P),
    retractall(M:P).

same_args(K, G, P) :-
    (   K =:= 0
    ->  true
    ;   arg(K, G, X),
        arg(K, P, X),
        K1 is K - 1,
        same_args(K1, G, P)
    ).

%!  run_action(+Module, :Action, +RuleKey, +Head, +T1, +T2) is det.
%
%   The do-action of a rule, once per detection, after the head was
%   emitted.  Its failure is ignored; an exception is recorded as an
%   error of the detection.  Events it raises are queued.  Called from
%   compiled rules only.
run_action(M, Action, Key, H, T1, T2) :-
    b_setval('$epsparql_raising', key(Key)),
    catch(( M:Action -> true ; true ),
          Error,
          record_error(M, Error, action(H, [T1, T2]), key(Key))),
    b_setval('$epsparql_raising', none).

%!  aggregate_step(+M, +Store, +Group, +Window, +Op, +X, +T1, +T2, -TS, -Value) is semidet.
%
%   Add X to the window of Group and compute the aggregate over it.
%   Called from compiled rules only.
aggregate_step(M, Store, G, Window, Op, X, T1, T2, TS, Value) :-
    Item =.. [Store, G, T1, T2, X],
    assertz(M:Item),
    prune_window(Window, M, Store, G, T2),
    Probe =.. [Store, G, S, _, V],
    findall(S-V, M:Probe, Pairs),
    pairs_keys_values(Pairs, Starts, Values),
    min_list(Starts, TS),
    aggregate_value(Op, Values, Value).

%   Expired items are found with clause/2, then removed by consume_goal/2
%   in their order, without clause references (each one is a blob in the
%   atom table, see epsparql_core:drop_expired/4).
prune_window(time(W), M, Store, G, Now) :-
    Lim is Now - W,
    Probe =.. [Store, G, S, _, _],
    findall(Probe, ( clause(M:Probe, true), S < Lim ), Items),
    maplist(consume_goal(M), Items).
prune_window(count(N), M, Store, G, _) :-
    Probe =.. [Store, G, _, _, _],
    aggregate_all(count, M:Probe, C),
    Drop is C - N,
    drop_oldest(Drop, M, Probe).

drop_oldest(K, M, Probe) :-
    (   K =< 0 -> true
    ;   copy_term(Probe, P1),
        once(retract(M:P1)),                % the group's oldest item
        K1 is K - 1,
        drop_oldest(K1, M, Probe)
    ).

aggregate_value(count, Vs, C) :- length(Vs, C).
aggregate_value(sum, Vs, S) :- sum_list(Vs, S).
aggregate_value(avg, Vs, A) :- sum_list(Vs, S), length(Vs, C), A is S / C.
aggregate_value(min, Vs, X) :- min_list(Vs, X).
aggregate_value(max, Vs, X) :- max_list(Vs, X).

