/*  Binarisation and EDBC compilation of event rules.

    A rule `Head <- Body` is split into binary steps, one node per
    sub-pattern of Body (left-associative, as the operators are yfx).
    Every node N owns an occurrence predicate

        ep_n<N>(V1, ..., Vk, T1, T2)

    whose arguments are the variables of the node's pattern (in
    term_variables/2 order) and the occurrence interval.  Calling it means
    "N has just occurred"; its clauses are the continuations of N's parents
    (goal-insertion and checking rules of the specification, section 5).
    Atomic event patterns are entered from ep_on(Event, T1, T2), indexed
    on the event's functor.

    Binary steps keep their partial matches ("goals") in store predicates

        ep_g<N>l(J1..Jj, L1..Ll, T1, T2)     left-hand occurrences
        ep_g<N>r(J1..Jj, R1..Rr, T3, T4)     right-hand ones (not for seq)

    whose first arguments are the join variables, so that a checking rule
    finds its partners through SWI-Prolog's JIT argument indexing instead
    of scanning.  A time window (`within`) is pushed into every step below
    it: a combination longer than the window is never built, and the
    periodic garbage collection removes goals that can no longer complete.

    Identical sub-patterns (variants, same window, same policy) are
    compiled once and shared between rules.

    A sub-pattern may be written `'$origin'(Origin, Pattern)`: Origin (a
    ground term chosen by whoever wrote the rule) is what the step of
    Pattern implements; the Python side writes the number of the algebra
    element each piece of a query's rule comes from
    (epsparql/rules/from_algebra.py).  The annotations are taken off before
    anything is compiled (they change neither the steps, their sharing,
    nor the rule as stored) and kept per step (core_graph.pl,
    node_origins/3), for the tools that explain the graph.

    All clauses go into the engine's own module, so engines never see each
    other's rules or state.  The graph of steps is recorded in
    core_graph.pl, the goal stores and rule predicates in core_state.pl;
    the clauses call what they need of core_runtime.pl, core_timers.pl
    and core_justify.pl by exported, module-qualified predicates.  What
    the compiler knows about the rule being compiled goes down its
    predicates as one argument, the compile context (compile_rule/3).
*/
:- module(core_compile,
          [ compile_rule/3,             % +Module, +Rule, +Options
            graph_node/2,               % +Module, -Node        (the graph as terms, below)
            graph_rule/2,               % +Module, -Rule
            delete_rule/3,              % +Module, +RuleKey, -DeletedNodes
            strip_origins/2,            % +Term, -Clean
            relation/9                  % ?Op, +T1, +T2, +T3, +T4, -Check, -TS, -TE, -Span (a hook)
          ]).
:- set_prolog_flag(optimise, true).   % file-scoped: inline arithmetic
:- use_module(library(lists)).
:- op(1200, xfx, <-).
:- use_module(library(apply)).
:- use_module(library(ordsets)).
:- use_module(library(assoc)).
:- use_module(core_state, [ engine_busy/1, engine_store/4, engine_store_newest_first/2,
                            engine_rule_pred/2, engine_has_pending/1, engine_has_timers/1 ]).
:- use_module(core_graph).              % the graph this compiler makes
:- use_module(core_timers, [timer_head/3]).
%   The clauses compiled here call these modules' exported predicates,
%   module-qualified (what they call is listed in each module's header).
:- use_module(core_runtime, []).
:- use_module(core_justify, []).

%   relation(?Op, +T1, +T2, +T3, +T4, -Check, -TS, -TE, -Span): binary
%   operators defined outside the core (etalis.pl defines ETALIS' own
%   readings of starts, finishes, during and par this way): Check is the
%   condition on a left interval [T1,T2] and a right one [T3,T4], Span
%   computes the combined interval [TS,TE].  Such an operator is compiled
%   like `and` (both sides stored) with that condition and interval.
:- multifile relation/9.
:- dynamic relation/9.

%!  compile_rule(+Module, +Rule, +Options) is det.
%
%   Compile one rule `Head <- Body` into EDBC clauses in Module.
%   Options: policy(unrestricted|recent|chronological).
%   Raises a domain_error naming the offending sub-term for patterns the
%   language does not have.
compile_rule(M, Rule, Options) :-
    (   Rule = (Head <- Body0)
    ->  true
    ;   domain_error(event_rule, Rule)
    ),
    must_be(callable, Head),
    option_policy(Options, Policy),
    (   memberchk(key(Key), Options) -> true ; flag(epsparql_rule_key, Key, Key + 1) ),
    option_flag(replace, Options, false, Replace),
    option_flag(out_of_order, Options, false, OutOfOrder),
    option_flag(share, Options, true, Share),
    option_flag(justify, Options, false, Justify),
    (   nonvar(Body0), Body0 = do(Body, Action) -> true ; Body = Body0, Action = none ),
    % Nodes are shared only between rules added with no event in between,
    % so that every rule sees exactly the events pushed after it was added;
    % never with share(false), nor for a rule added while events are
    % being processed (the event count is not up to date then).
    (   ( Share == false ; engine_busy(M) )
    ->  Epoch = rule(Key)
    ;   M:ep_state(_, Epoch, _, _, _, _) -> true
    ;   Epoch = 0
    ),
    copy_term(Head-Body-Action, H1-B1a-A1),
    origin_index(B1a, B1, Origins),
    Ctx = ctx(M, inf, Policy, rule(H1),
              rule(Key, Epoch, Origins, Replace, OutOfOrder, Justify)),
    node(Ctx, B1, Id),
    term_variables(B1, Vs),
    occ_head(M, Id, Vs, T1, T2, OccHead),
    rule_emit(Ctx, H1, A1, Id, Vs, T1, T2, Emit),
    assert_clause(Ctx, (OccHead :- Emit)),
    assertz(ep_rule_root(M, Key, Id, H1)).

%   The compile context, one term passed down the compile predicates:
%
%       ctx(M, Window, Policy, Parent, Rule)
%
%   M is the engine module, Window the smallest window of the enclosing
%   `within` steps (inf: none), Policy the rule's consumption policy.
%   Parent is the node whose clauses are being made (they belong to it,
%   and a node compiled now is its child), rule(Head) at the top (the
%   clause that emits the head belongs to the rule).  Rule holds what is
%   the same for the whole rule:
%
%       rule(Key, Epoch, Origins, Replace, OutOfOrder, Justify)
%
%   Key the rule's key, Epoch what node sharing is limited to (node_key/5),
%   Origins the index of its '$origin' annotations (origin_index/3), and
%   the replace, out_of_order and justify options.
ctx_module(ctx(M, _, _, _, _), M).
ctx_key(ctx(_, _, _, _, rule(Key, _, _, _, _, _)), Key).
ctx_epoch(ctx(_, _, _, _, rule(_, Epoch, _, _, _, _)), Epoch).
ctx_origins(ctx(_, _, _, _, rule(_, _, Origins, _, _, _)), Origins).
ctx_replace(ctx(_, _, _, _, rule(_, _, _, Replace, _, _)), Replace).
ctx_out_of_order(ctx(_, _, _, _, rule(_, _, _, _, OOO, _)), OOO).
ctx_justify(ctx(_, _, _, _, rule(_, _, _, _, _, Justify)), Justify).

%   The context with another window, or another parent.
ctx_window(ctx(M, _, Pol, P, R), W, ctx(M, W, Pol, P, R)).
ctx_parent(ctx(M, W, Pol, _, R), P, ctx(M, W, Pol, P, R)).

option_flag(Name, Options, Default, Value) :-
    Opt =.. [Name, V],
    (   memberchk(Opt, Options) -> Value = V ; Value = Default ),
    must_be(boolean, Value).

%   What a rule does when its body is detected: emit its head (recording
%   the justification first when asked), set an alarm for an alarm head
%   (core_timers.pl), and run its do-action.
rule_emit(Ctx, H, Action, Id, Vs, T1, T2, Goal) :-
    ctx_module(Ctx, M),
    ctx_key(Ctx, Key),
    ctx_justify(Ctx, Justify),
    (   Justify == true -> Why = j(Key, Id, Vs, T1, T2) ; Why = none ),
    (   timer_head(H, E, Spec)
    ->  Emit = core_timers:schedule_timer(M, Spec, E, T1, T2, Why),
        (   engine_has_timers(M) -> true
        ;   assertz(engine_has_timers(M))
        )
    ;   Justify == true
    ->  Emit = (core_justify:record_rule(M, H, T1, T2, Key, Id, Vs), ep_emit(H, T1, T2))
    ;   Emit = ep_emit(H, T1, T2)
    ),
    (   Action == none
    ->  Goal = Emit
    ;   Goal = (Emit, core_runtime:run_action(M, Action, Key, H, T1, T2))
    ).

option_policy(Options, Policy) :-
    (   memberchk(policy(P), Options) -> Policy = P ; Policy = unrestricted ),
    must_be(oneof([unrestricted, recent, chronological]), Policy).

%   node(+Ctx, +Pattern, -Id): the node for Pattern, created on first use.
node(Ctx, P, Id) :-
    Ctx = ctx(M, W, Pol, Parent, _),
    ctx_epoch(Ctx, Epoch),
    node_key(P, W, Pol, Epoch, Key),
    (   ep_node(M, Key, Id0)
    ->  Id = Id0,
        note_shared(Ctx, P, Id)
    ;   new_id(M, Id),
        assertz(ep_node(M, Key, Id)),
        ctx_parent(Ctx, Id, Inner),
        build(Inner, P, Id)
    ),
    note_origins(Ctx, P, Id),
    (   ep_edge(M, Parent, Id) -> true ; assertz(ep_edge(M, Parent, Id)) ).

		 /*******************************
		 *           ORIGINS            *
		 *******************************/

%!  strip_origins(+Term, -Clean) is det.
%
%   Term without its '$origin'(Origin, Pattern) annotations.
strip_origins(T, C) :-
    strip_origins(T, C, [], _).

%   strip_origins(+Term, -Clean, +Pairs0, -Pairs): also collect
%   Sub-Origins for every annotated sub-term, Sub being the very sub-term
%   of Clean (the compiler finds it again with same_term/2).
strip_origins(T, C, P0, P) :-
    (   var(T)
    ->  C = T, P = P0
    ;   T = '$origin'(O, X)
    ->  annotations(X, [O], Os, X1),
        strip_origins(X1, C, P0, P1),
        P = [C-Os|P1]
    ;   compound(T)
    ->  compound_name_arguments(T, F, As),
        strip_args(As, Cs, P0, P),
        compound_name_arguments(C, F, Cs)
    ;   C = T, P = P0
    ).

annotations(X, Os0, Os, X1) :-
    (   nonvar(X), X = '$origin'(O, Y)
    ->  annotations(Y, [O|Os0], Os, X1)
    ;   Os = Os0, X1 = X
    ).

strip_args([], [], P, P).
strip_args([A|As], [C|Cs], P0, P) :-
    strip_origins(A, C, P0, P1),
    strip_args(As, Cs, P1, P).

%   origin_index(+Body, -Clean, -Index): Body without annotations and an
%   index of its annotated sub-terms: variant_sha1 of the sub-term ->
%   [Sub-Origins, ...] (none: the empty assoc).  A rule without
%   annotations costs one walk of its body.
origin_index(B, C, Index) :-
    strip_origins(B, C, [], Pairs),
    empty_assoc(I0),
    foldl(index_origin, Pairs, I0, Index).

index_origin(Sub-Os, I0, I) :-
    variant_sha1(Sub, H),
    (   get_assoc(H, I0, L) -> true ; L = [] ),
    put_assoc(H, I0, [Sub-Os|L], I).

%   Record the origins of the sub-term P compiled into step Id, and of a
%   join whose condition is fused into the same step (build/3 on
%   `(L op R) where C`).
note_origins(Ctx, P, Id) :-
    ctx_origins(Ctx, Index),
    (   empty_assoc(Index)
    ->  true
    ;   ctx_module(Ctx, M),
        ctx_key(Ctx, Key),
        note_origins(M, Key, Index, P, Id),
        (   compound(P), P = where(B, _),
            compound(B), functor(B, Op, 2), binary_op(Op), \+ chain_pattern(B, _, _)
        ->  note_origins(M, Key, Index, B, Id)
        ;   true
        )
    ).

note_origins(M, Key, Index, P, Id) :-
    (   variant_sha1(P, H),
        get_assoc(H, Index, Cands),
        member(Sub-Os, Cands),
        same_term(Sub, P)
    ->  forall(member(O, Os),
               (   ep_origin(M, Id, Key, O) -> true
               ;   assertz(ep_origin(M, Id, Key, O))
               ))
    ;   true
    ).

%   A sub-pattern found compiled already (a step shared with an earlier
%   rule): the annotations inside it name the steps below it, found by
%   matching the children's patterns with its sub-terms.
note_shared(Ctx, P, Id) :-
    ctx_origins(Ctx, Index),
    (   empty_assoc(Index)
    ->  true
    ;   note_below(Ctx, P, Id)
    ).

note_below(Ctx, P, Id) :-
    ctx_module(Ctx, M),
    findall(C-P0, ( ep_edge(M, Id, C), ep_node(M, K, C), K = P0-_-_-_ ), Kids),
    forall(kid_subterm(P, Kids, C, S),
           (   note_origins(Ctx, S, C),
               note_below(Ctx, S, C)
           )).

%   kid_subterm(+P, +Kids, -C, -S): a proper sub-term S of P (the very
%   term) that is a variant of the numbered pattern of child C, and not
%   inside another such sub-term; on backtracking, every one.
kid_subterm(P, Kids, C, S) :-
    compound(P),
    compound_name_arguments(P, _, Args),
    member(A, Args),
    compound(A),
    (   member(C0-P0, Kids), \+ \+ ( copy_term(A, A1), numbervars(A1, 0, _), A1 == P0 )
    ->  C = C0, S = A
    ;   kid_subterm(A, Kids, C, S)
    ).

node_key(P, W, Pol, Epoch, Key) :-
    copy_term(P-W-Pol-Epoch, Key),
    numbervars(Key, 0, _).

new_id(M, Id) :-
    (   retract(ep_node_counter(M, Id)) -> true ; Id = 1 ),
    Id1 is Id + 1,
    assertz(ep_node_counter(M, Id1)).

occ_name(Id, Name) :- atom_concat(ep_n, Id, Name).

%   occ_head(+M, +Id, +Vs, ?T1, ?T2, -Head): the occurrence head of node
%   Id in engine M.  For a within step compiled as its child (ep_alias/3)
%   it is the child's.
occ_head(M, Id0, Vs, T1, T2, Head) :-
    occ_node(M, Id0, Id),
    occ_name(Id, Name),
    append(Vs, [T1, T2], Args),
    Head =.. [Name|Args].

%   occ_node(+M, +Id0, -Id): the node whose occurrence predicate stands
%   for Id0's.  Asked for the head of a child C that a within step is
%   aliased to, the caller is a new parent of C itself: the alias is
%   undone first (unalias/3), so that C's clauses stay in the order they
%   would have without it.
occ_node(M, Id0, Id) :-
    (   ep_alias(M, Id0, C)
    ->  Id = C
    ;   ep_alias(M, W, Id0)
    ->  unalias(M, W, Id0),
        Id = Id0
    ;   Id = Id0
    ).

%   A within step over a step that checks the window itself
%   (window_checked/1) occurs exactly when its child does, with the same
%   variables and interval: its only clause would be ep_n<C>(...) :-
%   ep_n<Id>(...), one more call per occurrence.  Unless the rule is
%   justified (that clause would record the step), such a step is
%   compiled as its child: ep_alias(M, Id, C), and the clauses of Id's
%   parents go to C's predicate (occ_head/6).  Only while C has no other
%   parent: C must have no clause when Id is aliased to it, and the first
%   other parent undoes the alias (unalias/3), so that every clause runs
%   in the order it would without the alias.  The rule graph is not
%   changed (Id is a node of its own, with its edges).
can_alias(Ctx, C, Arity) :-
    ctx_justify(Ctx, false),
    ctx_module(Ctx, M),
    \+ ep_alias(M, C, _),
    \+ ep_alias(M, _, C),
    occ_name(C, Name),
    functor(H, Name, Arity),
    \+ clause(M:H, _).

%   unalias(+M, +W, +C): compile within step W as a step of its own again:
%   C's clauses (all of them made for W's parents, in order) move to W's
%   predicate with their owners, and C gets the clause that calls W.
unalias(M, W, C) :-
    retract(ep_alias(M, W, C)),
    occ_name(C, CName),
    occ_name(W, WName),
    (   current_predicate(M:CName/A) -> true ; current_predicate(M:WName/A) ),
    functor(HC, CName, A),
    findall(c(HC, Body, Owner),
            (   clause(M:HC, Body, Ref),
                (   retract(ep_owner(M, Owner0, Ref)) -> Owner = Owner0 ; Owner = node(W) ),
                erase(Ref)
            ),
            Moved),
    HC =.. [CName|Args],
    HW =.. [WName|Args],
    assert_owned(M, (HC :- HW), node(W)),
    forall(member(c(H, Body, Owner), Moved),
           (   H =.. [_|HArgs],
               H1 =.. [WName|HArgs],
               assert_owned(M, (H1 :- Body), Owner)
           )).

%   Ensure the occurrence predicate exists even before it has parents.
declare_occ(M, Id, Vs) :-
    occ_name(Id, Name),
    length(Vs, K), A is K + 2,
    dynamic(M:Name/A).

%!  build(+Ctx, +Pattern, +Id) is det.
%
%   Compile the node Id for Pattern: compile its children with
%   continuations that feed Id's occurrence predicate.
build(Ctx, P, _) :-
    var(P), !,
    Ctx = ctx(_, _, _, _, _),
    instantiation_error(P).
build(Ctx, within(P, W), Id) :- !,
    check_window(W),
    Ctx = ctx(M, W0, _, _, _),
    W1 is min(W0, W),
    ctx_window(Ctx, W1, Inner),
    node(Inner, P, C),
    term_variables(within(P, W), Vs),
    declare_occ(M, Id, Vs),
    length(Vs, K),
    Arity is K + 2,
    (   window_checked(P),
        can_alias(Ctx, C, Arity)
    ->  assertz(ep_alias(M, Id, C))         % compiled as C (see can_alias/3)
    ;   occ_head(M, C, Vs, T1, T2, CH),
        occ_head(M, Id, Vs, T1, T2, H0),
        just_goal(Ctx, Id, Vs, T1, T2, [c(C, Vs, T1, T2)], H0, H),
        (   window_checked(P)
        ->  assert_clause(Ctx, (CH :- H))
        ;   assert_clause(Ctx, (CH :- T2 - T1 =< W, H))
        )
    ).
build(Ctx, where(P, Cond), Id) :-
    compound(P),
    functor(P, Op, 2),
    binary_op(Op),
    \+ chain_pattern(P, _, _), !,
    arg(1, P, L),
    arg(2, P, R),
    compile_binary(Ctx, Op, L, R, Cond, Id).
build(Ctx, where(P, Cond), Id) :- !,
    Ctx = ctx(M, _, _, _, _),
    node(Ctx, P, C),
    term_variables(P, PVs),
    term_variables(where(P, Cond), Vs),
    declare_occ(M, Id, Vs),
    occ_head(M, C, PVs, T1, T2, CH),
    occ_head(M, Id, Vs, T1, T2, H0),
    just_goal(Ctx, Id, Vs, T1, T2, [c(C, PVs, T1, T2)], H0, H),
    condition_goal(Cond, Goal),
    assert_clause(Ctx, (CH :- Goal, H)).
build(Ctx, or(L, R), Id) :- !,
    Ctx = ctx(M, _, _, _, _),
    node(Ctx, L, CL),
    node(Ctx, R, CR),
    term_variables(or(L, R), Vs),
    declare_occ(M, Id, Vs),
    term_variables(L, LVs),
    term_variables(R, RVs),
    occ_head(M, CL, LVs, T1, T2, HL),
    occ_head(M, CR, RVs, T1, T2, HR),
    occ_head(M, Id, Vs, T1, T2, H),
    just_goal(Ctx, Id, Vs, T1, T2, [c(CL, LVs, T1, T2)], H, HJL),
    just_goal(Ctx, Id, Vs, T1, T2, [c(CR, RVs, T1, T2)], H, HJR),
    copy_term(HL-HJL, HL1-HJL1),        % the other side's variables stay free
    assert_clause(Ctx, (HL1 :- HJL1)),
    assert_clause(Ctx, (HR :- HJR)).
build(Ctx, cnot(P, E), Id) :- !,
    compile_negation(Ctx, cnot, P, E, Id).
build(Ctx, fnot(P, E), Id) :- !,
    compile_negation(Ctx, fnot, P, E, Id).
build(Ctx, P, Id) :-
    chain_pattern(P, L, Chain), !,
    compile_chain(Ctx, L, Chain, Id).
build(Ctx, span(P, S, E), Id) :- !,
    Ctx = ctx(M, _, _, _, _),
    node(Ctx, P, C),
    term_variables(P, PVs),
    term_variables(span(P, S, E), Vs),
    declare_occ(M, Id, Vs),
    occ_head(M, C, PVs, T1, T2, CH),
    occ_head(M, Id, Vs, T1, T2, H0),
    just_goal(Ctx, Id, Vs, T1, T2, [c(C, PVs, T1, T2)], H0, H),
    assert_clause(Ctx, (CH :- S = T1, E = T2, H)).
build(Ctx, P, Id) :-
    optional_pattern(P, Kind, L, R, Cond, SE), !,
    term_variables(P, Sig),                 % what the parent passes
    compile_optional(Ctx, Kind, L, R, Cond, SE, Sig, Id).
build(Ctx, aggregate(Op, P, Window, Result), Id) :- !,
    compile_aggregate(Ctx, Op, P, Window, Result, Id).
build(Ctx, P, Id) :-
    compound(P),
    functor(P, Op, 2),
    binary_op(Op), !,
    arg(1, P, L),
    arg(2, P, R),
    compile_binary(Ctx, Op, L, R, true, Id).
build(Ctx, P, Id) :-
    callable(P),
    \+ reserved_pattern(P), !,
    Ctx = ctx(M, _, _, _, _),
    term_variables(P, Vs),
    declare_occ(M, Id, Vs),
    occ_head(M, Id, Vs, T1, T2, H0),
    just_goal(Ctx, Id, Vs, T1, T2, [event(P, T1, T2)], H0, H),
    assert_clause(Ctx, (ep_on(P, T1, T2) :- H)),
    note_entry(M, P).
build(_, P, _) :-
    domain_error(event_pattern, P).

%   window_checked(+P): P compiles to a binary step (compile_binary/6),
%   which checks `End - Start =< W` on every occurrence it makes, W being
%   the window it is compiled with (min of the enclosing ones).  A
%   `P within W` over such a step need not check again: the same test on
%   the same numbers with a window no larger than W.
window_checked(P) :-
    nonvar(P),
    (   P = where(B, _) -> true ; B = P ),
    compound(B),
    functor(B, Op, 2),
    binary_op(Op),
    \+ chain_pattern(B, _, _).

reserved_pattern(P) :-
    compound(P),
    compound_name_arity(P, Name, Arity),
    reserved(Name, Arity).

reserved(within, 2).
reserved(where, 2).
reserved(or, 2).
reserved(cnot, 2).
reserved(aggregate, 4).
reserved(span, 3).
reserved(optseq, 3).
reserved(optseq, 4).
reserved(eqopt, 3).
reserved(eqopt, 4).
reserved(leftjoin, 3).
reserved(leftjoin, 4).
reserved(<-, 2).
reserved(',', 2).
reserved(;, 2).
reserved(->, 2).
reserved(fnot, 2).
reserved(star_times, 1).
reserved(aggregate, 3).
reserved(do, 2).
reserved('rule:', 2).

binary_op(seq).
binary_op(and).
binary_op(par).
binary_op(equals).
binary_op(meets).
binary_op(during).
binary_op(starts).
binary_op(finishes).
binary_op(Op) :-
    atom(Op),
    \+ \+ relation(Op, _, _, _, _, _, _, _, _).

%!  temporal(+Op, +T1, +T2, +T3, +T4, -Goal) is det.
%
%   The condition on a left interval [T1,T2] and a right one [T3,T4].
temporal(seq,      _,  T2, T3, _,  (T2 < T3)).
temporal(and,      _,  _,  _,  _,  true).
temporal(par,      T1, T2, T3, T4, (T1 =< T4, T3 =< T2)).
temporal(equals,   T1, T2, T3, T4, (T1 =:= T3, T2 =:= T4)).
temporal(meets,    _,  T2, T3, _,  (T2 =:= T3)).
temporal(during,   T1, T2, T3, T4, (T3 < T1, T2 < T4)).
temporal(starts,   T1, T2, T3, T4, (T1 =:= T3, T2 < T4)).
temporal(finishes, T1, T2, T3, T4, (T2 =:= T4, T3 < T1)).
temporal(Op, T1, T2, T3, T4, Check) :-
    relation(Op, T1, T2, T3, T4, Check, _, _, _).

%!  span(+Op, +T1, +T2, +T3, +T4, -TS, -TE, -Goal) is det.
%
%   The combined interval [TS,TE] = [min(T1,T3), max(T2,T4)], computed
%   only where the operator's condition does not already fix it.
span(seq,      T1, _,  _,  T4, T1, T4, true).
span(meets,    T1, _,  _,  T4, T1, T4, true).
span(equals,   T1, T2, _,  _,  T1, T2, true).
span(during,   _,  _,  T3, T4, T3, T4, true).
span(starts,   T1, _,  _,  T4, T1, T4, true).
span(finishes, _,  T2, T3, _,  T3, T2, true).
span(and,      T1, T2, T3, T4, TS, TE, (TS is min(T1, T3), TE is max(T2, T4))).
span(par,      T1, T2, T3, T4, TS, TE, (TS is min(T1, T3), TE is max(T2, T4))).
span(Op,       T1, T2, T3, T4, TS, TE, Span) :-
    relation(Op, T1, T2, T3, T4, _, TS, TE, Span).

store_name(Id, Side, Name) :-
    format(atom(Name), 'ep_g~w~w', [Id, Side]).

%   declare_store(+Ctx, +Name/Arity, +Window, +Id): a goal store of step
%   Id, its goals removed by the garbage collection once older than Window.
declare_store(Ctx, Name/Arity, W, Id) :-
    Ctx = ctx(M, _, Pol, _, _),
    dynamic(M:Name/Arity),
    assertz(engine_store(M, Name/Arity, W, Id)),
    (   Pol == recent                               % newest first: no prefix sweeps
    ->  assertz(engine_store_newest_first(M, Name))
    ;   true
    ).

%!  compile_binary(+Ctx, +Op, +L, +R, +Cond, +Id) is det.
%
%   One binary step; Cond is a where-condition fused into the step
%   (`(L op R) where Cond`), evaluated on each candidate pair right after
%   the temporal check, before the pair is built or a goal consumed.
%
%   One binary step.  For seq only the left side is stored: with input
%   ordered by end time the left part always arrives first.  Every other
%   operator stores both sides; each arrival first stores itself, then
%   looks at the other side's store, so each pair is found exactly once
%   (an occurrence matching both sides pairs with itself once).
compile_binary(Ctx, Op, L, R, Cond0, Id) :-
    Ctx = ctx(M, W, Pol, _, _),
    (   Op == seq, ctx_replace(Ctx, true), same_entry(L, R)
    ->  % an event entering both sides is checked before it is stored (and
        % replaces older partial matches with its bindings), as in ETALIS
        node(Ctx, R, CR),
        node(Ctx, L, CL)
    ;   node(Ctx, L, CL),
        node(Ctx, R, CR)
    ),
    term_variables(L, LVs),
    term_variables(R, RVs),
    term_variables(L-R-Cond0, Vs),
    condition_goal(Cond0, Filter),
    declare_occ(M, Id, Vs),
    goal_stores(Id, LVs, RVs, t(T1, T2, T3, T4), GL, GR),
    functor(GL, LName, LA),
    functor(GR, RName, RA),
    declare_store(Ctx, LName/LA, W, Id),
    temporal(Op, T1, T2, T3, T4, Check),
    span(Op, T1, T2, T3, T4, TS, TE, Span),
    occ_head(M, CL, LVs, T1, T2, HL),
    occ_head(M, CR, RVs, T3, T4, HR),
    occ_head(M, Id, Vs, TS, TE, H0),
    just_goal(Ctx, Id, Vs, TS, TE, [c(CL, LVs, T1, T2), c(CR, RVs, T3, T4)], H0, H),
    (   Op == seq, ctx_out_of_order(Ctx, true)
    ->  % Out of order: both sides are stored; an arrival checks the other
        % side's store first (consuming under recent/chronological), then
        % stores itself, so a late left occurrence pairs with the right
        % ones after it.
        declare_store(Ctx, RName/RA, W, Id),
        window_goal(W, T1, T4, WCheck),
        conj((T2 < T3, WCheck), Filter, Cond),
        insert_goal(Ctx, GL, InsL),
        insert_goal(Ctx, GR, InsR),
        check_goal(Ctx, GL, Cond, FindL),
        check_goal(Ctx, GR, Cond, FindR),
        assert_clause(Ctx, (HR :- ( FindL, H ; InsR ))),
        assert_clause(Ctx, (HL :- ( FindR, H ; InsL )))
    ;   Op == seq
    ->  % The window is checked as the definition reads, `T4 - T1 =< W`
        % (exact, also for floats, so an enclosing `within` need not check
        % again: window_checked/1).  The checking clause comes first: when
        % both sides are the same step, an arrival pairs with the earlier
        % ones before it is stored.
        window_goal(W, T1, T4, WCheck),
        conj(WCheck, T2 < T3, Cond1),
        conj(Cond1, Filter, Cond),
        insert_goal(Ctx, GL, InsL),
        check_goal(Ctx, GL, Cond, Find),
        assert_clause(Ctx, (HR :- Find, H)),
        assert_clause(Ctx, (HL :- InsL))
    ;   window_goal(W, TS, TE, WCheck),
        declare_store(Ctx, RName/RA, W, Id),
        insert_goal(Ctx, GL, InsL),
        insert_goal(Ctx, GR, InsR),
        conj((Check, Span, WCheck), Filter, Cond),
        check_goal(Ctx, GR, Cond, FindR),
        check_goal(Ctx, GL, Cond, FindL),
        (   Pol == unrestricted
        ->  assert_clause(Ctx, (HL :- InsL, FindR, H)),
            assert_clause(Ctx, (HR :- InsR, FindL, H))
        ;   assert_clause(Ctx, (HL :- (FindR -> H ; InsL, fail))),
            assert_clause(Ctx, (HR :- (FindL -> H ; InsR, fail)))
        )
    ).

%   Two atomic patterns an event can enter both.
same_entry(L, R) :-
    callable(L), callable(R),
    \+ reserved_pattern(L), \+ reserved_pattern(R),
    \+ ( compound(L), functor(L, Op, 2), binary_op(Op) ),
    \+ ( compound(R), functor(R, Op2, 2), binary_op(Op2) ),
    functor(L, N, A),
    functor(R, N, A).

%   Remember event names that several atomic patterns take: the executor
%   isolates their entry clauses from each other (see dispatch/4).
note_entry(M, P) :-
    functor(P, N, A),
    functor(Q, N, A),
    aggregate_all(count, clause(M:ep_on(Q, _, _), _), C),
    (   C > 1, \+ M:ep_multi(N, A)
    ->  assertz(M:ep_multi(N, A))
    ;   true
    ).

%!  goal_stores(+Id, +LVs, +RVs, +Times, -GL, -GR) is det.
%
%   The goal terms of step Id's left and right stores: the join variables
%   (shared by both sides) first, so that SWI-Prolog's argument indexing
%   finds a side's partners by them, then that side's other variables and
%   its interval.
goal_stores(Id, LVs, RVs, t(T1, T2, T3, T4), GL, GR) :-
    shared_vars(LVs, RVs, JVs),
    exclude_vars(LVs, JVs, LOnly),
    exclude_vars(RVs, JVs, ROnly),
    store_name(Id, l, LName),
    store_name(Id, r, RName),
    append([JVs, LOnly, [T1, T2]], LArgs),
    append([JVs, ROnly, [T3, T4]], RArgs),
    GL =.. [LName|LArgs],
    GR =.. [RName|RArgs].

conj(true, B, B) :- !.
conj(A, true, A) :- !.
conj(A, B, (A, B)).

window_goal(inf, _, _, true) :- !.
window_goal(W, TS, TE, (TE - TS =< W)).

%   Goal insertion: unrestricted and chronological keep arrival order;
%   recent puts the newest first so the first match is the most recent.
%   With replace_bindings (recent and chronological only), the new goal
%   replaces the stored ones with the same bindings (ETALIS' policies keep
%   one partial match per bindings).
insert_goal(Ctx, G, Ins) :-
    Ctx = ctx(M, _, Pol, _, _),
    base_insert(Pol, G, Ins0),
    (   Pol \== unrestricted,
        ctx_replace(Ctx, true)
    ->  Ins = (core_runtime:replace_goals(M, G), Ins0)
    ;   Ins = Ins0
    ).

base_insert(recent, G, asserta(G)) :- !.
base_insert(_, G, assertz(G)).

%   Goal checking: unrestricted enumerates every partner and keeps it;
%   recent/chronological take the first (newest/oldest) and consume it.
check_goal(Ctx, G, Cond, Find) :-
    Ctx = ctx(M, _, Pol, _, _),
    (   Pol == unrestricted
    ->  Find = (G, Cond)
    ;   Find = (once((G, Cond)), core_runtime:consume_goal(M, G))
    ).

shared_vars([], _, []).
shared_vars([V|Vs], Bs, Shared) :-
    (   memberchk_var(V, Bs)
    ->  Shared = [V|Rest]
    ;   Shared = Rest
    ),
    shared_vars(Vs, Bs, Rest).

exclude_vars([], _, []).
exclude_vars([V|Vs], Ex, Rest) :-
    (   memberchk_var(V, Ex)
    ->  Rest = Rest1
    ;   Rest = [V|Rest1]
    ),
    exclude_vars(Vs, Ex, Rest1).

memberchk_var(V, [H|T]) :-
    (   V == H -> true ; memberchk_var(V, T) ).

%   A window is a number of seconds, possibly fractional.
check_window(W) :-
    must_be(number, W),
    (   W >= 0 -> true ; domain_error(non_negative_window, W) ).

%!  compile_optional(+Ctx, +Kind, +L, +R, +Cond, +S-E, +Sig, +Id) is det.
%
%   The optional joins of EP-SPARQL (section 4.2 of the specification).
%   Cond is a condition over the variables of both sides in which S and E
%   stand for the interval the definition evaluates it on; the node's
%   variables are those of L, R and Cond (S and E excluded).
%
%   - optseq(L, R): SeqRightJoin, R mandatory.  When R arrives every
%     earlier L (L.end < R.start) is known: the combinations passing Cond
%     (on the combined interval) are emitted; R alone is emitted when no
%     compatible earlier L passes Cond on R's interval.  Nothing waits.
%   - eqopt(L, R): EqLeftJoin, L mandatory, R optional over the same
%     interval.  Combinations are emitted when the second one arrives; L
%     alone waits until its end instant is closed (a later event, advance
%     or flush) and is emitted if no compatible R passed Cond.
%   - leftjoin(L, R): LeftJoin with the time condition R.end =< L.end;
%     Cond on L's interval; combinations over [min start, L.end]; L alone
%     waits for the instant to close like eqopt.
%
%   The store of the optional side of optseq and leftjoin is not pruned by
%   a window: an optional occurrence older than the window cannot be part
%   of an answer, but it still rules out the mandatory side alone.
compile_optional(Ctx, Kind, L, R, Cond0, S-E, Vs, Id) :-
    Ctx = ctx(M, _, _, _, _),
    % the optional side is compiled without the window: an optional
    % occurrence longer than the window still rules out the mandatory
    % side alone (eqopt excepted: there it has the mandatory interval)
    ctx_window(Ctx, inf, Unbounded),
    (   Kind == optseq -> node(Unbounded, L, CL) ; node(Ctx, L, CL) ),
    (   Kind == leftjoin -> node(Unbounded, R, CR) ; node(Ctx, R, CR) ),
    term_variables(L, LVs),
    term_variables(R, RVs),
    declare_occ(M, Id, Vs),
    condition_goal(Cond0, Cond),
    goal_stores(Id, LVs, RVs, t(T1, T2, T3, T4), GL, GR),
    functor(GL, LName, LA),
    functor(GR, RName, RA),
    occ_head(M, CL, LVs, T1, T2, HL),
    occ_head(M, CR, RVs, T3, T4, HR),
    (   Kind \== optseq, \+ engine_has_pending(M)
    ->  assertz(engine_has_pending(M))
    ;   true
    ),
    optional_clauses(Kind, Ctx, Id, Vs, LVs, RVs, S-E, Cond,
                     GL, GR, HL-CL, HR-CR, t(T1, T2, T3, T4), Stores),
    forall(member(Name-SW, Stores),
           (   Name == LName
           ->  declare_store(Ctx, LName/LA, SW, Id)
           ;   declare_store(Ctx, RName/RA, SW, Id)
           )).

optional_clauses(optseq, Ctx, Id, Vs, LVs, RVs, S-E, Cond, GL, _GR, HL-CL, HR-CR,
                 t(T1, T2, T3, T4), [LName-inf]) :-
    Ctx = ctx(M, W, _, _, _),
    functor(GL, LName, _),
    assert_clause(Ctx, (HL :- assertz(GL))),
    window_goal(W, T1, T4, WCheck),
    occ_head(M, Id, Vs, T1, T4, HBoth0),
    just_goal(Ctx, Id, Vs, T1, T4, [c(CL, LVs, T1, T2), c(CR, RVs, T3, T4)], HBoth0, HBoth),
    copy_term(RVs-Vs, RVs1-Vs1),            % R alone: L-only variables stay free
    RVs1 = RVs,
    occ_head(M, Id, Vs1, T3, T4, HAlone0),
    just_goal(Ctx, Id, Vs1, T3, T4, [c(CR, RVs, T3, T4)], HAlone0, HAlone),
    % the combinations passing Cond on the combined interval, and R alone
    % when no compatible earlier L passes Cond on R's interval (both can
    % hold when Cond reads the interval)
    assert_clause(Ctx, (HR :- (   GL, T2 < T3, WCheck, S = T1, E = T4, Cond, HBoth
                            ;   \+ (GL, T2 < T3, S = T3, E = T4, Cond), HAlone
                            ))).
optional_clauses(eqopt, Ctx, Id, Vs, LVs, RVs, S-E, Cond, GL, GR, HL-CL, HR-CR,
                 t(T1, T2, T3, T4), [LName-W, RName-W]) :-
    Ctx = ctx(M, W, _, _, _),
    functor(GL, LName, _),
    functor(GR, RName, _),
    occ_head(M, Id, Vs, T1, T2, HBoth0),
    just_goal(Ctx, Id, Vs, T1, T2, [c(CL, LVs, T1, T2), c(CR, RVs, T3, T4)], HBoth0, HBoth),
    close_name(Id, CName),
    append(LVs, [T1, T2], CArgs),
    Close =.. [CName|CArgs],
    assert_clause(Ctx, (HL :- assertz(GL), assertz(ep_pend(T2, Id, Close)),
                            GR, T3 =:= T1, T4 =:= T2, S = T1, E = T2, Cond, HBoth)),
    assert_clause(Ctx, (HR :- assertz(GR), GL, T1 =:= T3, T2 =:= T4,
                            S = T1, E = T2, Cond, HBoth)),
    copy_term(LVs-Vs, LVs1-Vs1),
    LVs1 = LVs,
    occ_head(M, Id, Vs1, T1, T2, HAlone0),
    just_goal(Ctx, Id, Vs1, T1, T2, [c(CL, LVs, T1, T2)], HAlone0, HAlone),
    assert_clause(Ctx, (Close :- \+ (GR, T3 =:= T1, T4 =:= T2, S = T1, E = T2, Cond),
                               HAlone)).
optional_clauses(leftjoin, Ctx, Id, Vs, LVs, RVs, S-E, Cond, GL, GR, HL-CL, HR-CR,
                 t(T1, T2, T3, T4), [LName-W, RName-inf]) :-
    Ctx = ctx(M, W, _, _, _),
    functor(GL, LName, _),
    functor(GR, RName, _),
    occ_head(M, Id, Vs, TS, T2, HBoth0),
    just_goal(Ctx, Id, Vs, TS, T2, [c(CL, LVs, T1, T2), c(CR, RVs, T3, T4)], HBoth0, HBoth),
    close_name(Id, CName),
    append(LVs, [T1, T2], CArgs),
    Close =.. [CName|CArgs],
    window_goal(W, TS, T2, WCheck),
    assert_clause(Ctx, (HL :- assertz(GL), assertz(ep_pend(T2, Id, Close)),
                            GR, T4 =< T2, S = T1, E = T2, Cond,
                            TS is min(T1, T3), WCheck, HBoth)),
    assert_clause(Ctx, (HR :- assertz(GR), GL, T2 =:= T4,
                            S = T1, E = T2, Cond, TS is min(T1, T3), WCheck, HBoth)),
    copy_term(LVs-Vs, LVs1-Vs1),
    LVs1 = LVs,
    occ_head(M, Id, Vs1, T1, T2, HAlone0),
    just_goal(Ctx, Id, Vs1, T1, T2, [c(CL, LVs, T1, T2)], HAlone0, HAlone),
    assert_clause(Ctx, (Close :- \+ (GR, T4 =< T2, S = T1, E = T2, Cond), HAlone)).

close_name(Id, Name) :- atom_concat(ep_c, Id, Name).

optional_pattern(P, Kind, L, R, Cond, SE) :-
    compound(P),
    compound_name_arguments(P, Kind, Args),
    memberchk(Kind, [optseq, eqopt, leftjoin]),
    (   Args = [L, R, Cond] -> SE = _-_
    ;   Args = [L, R, Cond, SE], SE = _-_
    ).

%!  compile_aggregate(+Ctx, +Op, +P, +Window, -Result, +Id) is det.
%
%   aggregate(Op, Pattern, Window, Result): each occurrence of Pattern
%   updates the aggregate of its group (the variables of Pattern not in
%   Op, minus those marked V^Pattern) over a sliding window,
%   `time(Seconds)` or `count(N)`, and occurs itself with the new value,
%   over [start of the oldest item in the window, end of the new one].
compile_aggregate(Ctx, Op, P0, Window, Result, Id) :-
    ctx_module(Ctx, M),
    (   aggregate_op(Op) -> true ; domain_error(aggregate_op, Op) ),
    (   Window = time(S) -> check_window(S)
    ;   Window = count(N) -> must_be(positive_integer, N)
    ;   domain_error(aggregate_window, Window)
    ),
    strip_hidden(P0, Hidden, P),
    node(Ctx, P, C),
    term_variables(P, PVs),
    term_variables(Op-Hidden, OpVs),
    exclude_vars(PVs, OpVs, GVs),
    (   Op = count -> X = 1 ; arg(1, Op, X) ),
    functor(Op, OpName, _),
    (   GVs = [G] -> true
    ;   GVs == [] -> G = g
    ;   G =.. [g|GVs]
    ),
    % the node's signature is the variables of the whole aggregate term
    % (what a parent passes); the value and hidden variables stay unbound
    term_variables(aggregate(Op, P0, Window, Result), OutVs),
    declare_occ(M, Id, OutVs),
    store_name(Id, a, AName),
    declare_store(Ctx, AName/4, inf, Id),
    occ_head(M, C, PVs, T1, T2, HC),
    occ_head(M, Id, OutVs, TS, T2, H0),
    just_goal(Ctx, Id, OutVs, TS, T2, [c(C, PVs, T1, T2)], H0, H),
    assert_clause(Ctx, (HC :- core_runtime:aggregate_step(M, AName, G, Window, OpName,
                                                        X, T1, T2, TS, Result), H)).

aggregate_op(Op) :- Op == count, !.
aggregate_op(Op) :- compound(Op), compound_name_arity(Op, N, 1), memberchk(N, [sum, avg, min, max]).

strip_hidden(V^P, [V|Vs], Q) :- !, strip_hidden(P, Vs, Q).
strip_hidden(P, [], P).

%   A where-condition is inlined in the checking clause (no meta-call on
%   the hot path); one with a cut is called so its cut stays local.
%   Exceptions are caught per event by the executor.
condition_goal(Cond, Goal) :-
    (   sub_term(S, Cond), S == !
    ->  Goal = call(Cond)
    ;   Goal = Cond
    ).

%   Generated clauses are compiled with the optimise flag on, so that
%   their arithmetic (time checks, conditions) becomes VM instructions
%   instead of calls to is/2, </2, ... (about 1.5x on the seq2 workload).
assert_clause(Ctx, Clause) :-
    ctx_module(Ctx, M),
    clause_owner(Ctx, Owner),
    assert_owned(M, Clause, Owner).

assert_owned(M, Clause, Owner) :-
    current_prolog_flag(optimise, Old),
    setup_call_cleanup(set_prolog_flag(optimise, true),
                       assertz(M:Clause, Ref),
                       set_prolog_flag(optimise, Old)),
    assertz(ep_owner(M, Owner, Ref)),
    clause_pi(Clause, PI),
    (   engine_rule_pred(M, PI)
    ->  true
    ;   assertz(engine_rule_pred(M, PI))
    ).

clause_pi((H :- _), Name/Arity) :- !, functor(H, Name, Arity).
clause_pi(H, Name/Arity) :- functor(H, Name, Arity).

%   The clauses of a node belong to it, the clause that emits a rule's head
%   to the rule: rule deletion erases exactly those (delete_rule/3).
clause_owner(Ctx, Owner) :-
    Ctx = ctx(_, _, _, P, _),
    (   P = rule(_)
    ->  ctx_key(Ctx, Key),
        Owner = key(Key)
    ;   Owner = node(P)
    ).

		 /*******************************
		 *         JUSTIFICATION        *
		 *******************************/

%   just_goal(+Ctx, +Id, +Vs, +TS, +TE, +Children, +H, -Goal): the call of
%   node Id's occurrence H, preceded, in rules compiled with justify(true), by
%   recording which occurrences of its children made it (core_justify.pl).
%   A child is c(ChildId, ChildVars, Start, End) or, for an atomic
%   pattern, event(Event, Start, End).
just_goal(Ctx, Id, Vs, TS, TE, Children, H, Goal) :-
    (   ctx_justify(Ctx, true)
    ->  ctx_module(Ctx, M),
        Goal = (core_justify:edge(M, Id, Vs, TS, TE, Children), H)
    ;   Goal = H
    ).

		 /*******************************
		 *   NEGATION AND CHAIN STEPS   *
		 *******************************/

%!  compile_negation(+Ctx, +Op, +P, +E, +Id) is det.
%
%   P cnot E (Op = cnot): an occurrence of P with no compatible occurrence
%   of E strictly inside it; P fnot E (Op = fnot): an occurrence of P for
%   which no compatible occurrence of E ending at or before P's end has
%   been seen ("E never happened before").  E's occurrences are kept in a
%   store pruned by the window of the rule (without one, forever); the two
%   differ only in which stored occurrences count (negated/5).
compile_negation(Ctx, Op, P, E, Id) :-
    Ctx = ctx(M, W, _, _, _),
    node(Ctx, P, CP),
    node(Ctx, E, CE),
    term_variables(P, PVs),
    term_variables(E, EVs),
    term_variables(P-E, Vs),                % E's own variables stay unbound
    declare_occ(M, Id, Vs),
    store_name(Id, n, NegName),
    length(EVs, NE), NA is NE + 2,
    declare_store(Ctx, NegName/NA, W, Id),
    append(EVs, [S1, S2], NArgs),
    Neg =.. [NegName|NArgs],
    occ_head(M, CE, EVs, S1, S2, HE),
    assert_clause(Ctx, (HE :- assertz(Neg))),
    occ_head(M, CP, PVs, T1, T2, HP),
    copy_term(PVs-Vs, PVs1-Vs1),
    PVs1 = PVs,
    occ_head(M, Id, Vs1, T1, T2, H0),
    just_goal(Ctx, Id, Vs1, T1, T2, [c(CP, PVs, T1, T2)], H0, H),
    negated(Op, T1, T2, S1, S2, Inside),
    assert_clause(Ctx, (HP :- \+ (Neg, Inside), H)).

%   negated(+Op, ?T1, ?T2, ?S1, ?S2, -Test): the stored occurrence S1-S2
%   of E that blocks an occurrence T1-T2 of P.
negated(cnot, T1, T2, S1, S2, (T1 < S1, S2 < T2)).
negated(fnot, _, T2, _, S2, S2 =< T2).

%   chain_pattern(+P, -L, -Chain): P is `L seq star_times(Q)` (Chain =
%   star(Q)) or `L seq aggregate(Op, Q, R)` (Chain = running(Op, Q, R)).
chain_pattern(P, L, Chain) :-
    compound(P),
    P = seq(L, C),
    compound(C),
    (   C = star_times(Q) -> Chain = star(Q)
    ;   C = aggregate(Op, Q, R) -> Chain = running(Op, Q, R)
    ).

%!  compile_chain(+Ctx, +L, +Chain, +Id) is det.
%
%   Chains: an occurrence of L starts a chain and occurs at once, over
%   L's interval; every later occurrence of Q (starting after the chain's
%   end, compatible with it) extends a chain to its own end and occurs
%   again, over [chain start, Q's end].
%
%   - `L seq star_times(Q)`: L followed by any number of Q (ETALIS'
%     star_times); Q's own variables are bound in the occurrences Q makes.
%   - `L seq aggregate(Op, Q, R)`: the same with a running aggregate R of
%     the Q's in the chain (ETALIS' aggregates): Op is count, sum(X),
%     min(X), max(X), min(X, Initial) or max(X, Initial); the occurrence
%     of L carries the initial value (0; for min and max inf and -inf
%     unless given).
%
%   Which chains a Q extends follows the policy: every compatible chain
%   (unrestricted), the most recent one (recent) or the oldest
%   (chronological).  Chains are stored per L occurrence: goal
%   ep_g<Id>l(Join..., LOnly..., [Acc,] Start, End).
compile_chain(Ctx, L, Chain, Id) :-
    Ctx = ctx(M, W, Pol, _, _),
    chain_parts(Chain, Q, R, Acc, Init, Acc1, Step),
    node(Ctx, L, CL),
    node(Ctx, Q, CQ),
    term_variables(L, LVs),
    term_variables(Q, QVs),
    term_variables(L-Chain, Vs),
    declare_occ(M, Id, Vs),
    shared_vars(LVs, QVs, JVs),
    exclude_vars(LVs, JVs, LOnly),
    store_name(Id, l, Name),
    append([JVs, LOnly, Acc, [T1, T2]], Args),
    append([JVs, LOnly, Acc1, [T1, T4]], Args2),
    G =.. [Name|Args],
    G2 =.. [Name|Args2],
    functor(G, Name, A),
    declare_store(Ctx, Name/A, W, Id),
    (   Pol == recent -> Ins = asserta(G), Again = asserta(G2)
    ;   Ins = assertz(G), Again = assertz(G2)
    ),
    % L starts a chain; the variables of Q (and R) not in L stay unbound,
    % R but for the initial value
    occ_head(M, CL, LVs, T1, T2, HL),
    copy_term(LVs-Vs-R, LVs1-VsS-RS),
    LVs1 = LVs,
    occ_head(M, Id, VsS, T1, T2, HStart0),
    just_goal(Ctx, Id, VsS, T1, T2, [c(CL, LVs, T1, T2)], HStart0, HStart),
    start_value(Acc, RS, SetR),
    assert_clause(Ctx, (HL :- Init, Ins, SetR, HStart)),
    % Q extends the chains that ended before it started
    occ_head(M, CQ, QVs, T3, T4, HQ),
    window_goal(W, T1, T4, WCheck),
    occ_head(M, Id, Vs, T1, T4, HExt0),
    copy_term(LVs-Vs, LVs2-VsPrev),
    LVs2 = LVs,
    just_goal(Ctx, Id, Vs, T1, T4, [c(Id, VsPrev, T1, T2), c(CQ, QVs, T3, T4)], HExt0, HExt),
    % the chain a Q extends is taken out of the store.  Under recent and
    % chronological, the first that fits, removed by
    % core_runtime:consume_goal/2 as a sequence's partner is: no clause
    % reference (a blob in the atom table, see epsparql_core:drop_expired/4)
    % for a ground chain.  Under unrestricted every chain that fits is
    % taken while the walk goes on: each is erased through its reference,
    % which is exact; retract/1 inside the walk could unify with a chain
    % the walk took already (the logical update view holds for the walk).
    (   Pol == unrestricted
    ->  Find = (clause(G, true, Ref), T2 < T3, WCheck),
        Take = erase(Ref)
    ;   Find = once((clause(G, true), T2 < T3, WCheck)),
        Take = core_runtime:consume_goal(M, G)
    ),
    start_value(Acc1, R, SetR1),
    assert_clause(Ctx, (HQ :- Find, Take, Step, Again, SetR1, HExt)).

%   chain_parts(+Chain, -Q, -R, -Acc, -Init, -Acc1, -Step): the
%   accumulator argument of a chain goal ([] or [A]), the goal giving its
%   initial value, and the one computing the accumulator after a Q.
chain_parts(star(Q), Q, none, [], true, [], true).
chain_parts(running(Op, Q, R), Q, R, [A], Init, [A1], Step) :-
    (   running_op(Op, A, A1, Init, Step)
    ->  true
    ;   domain_error(running_aggregate, Op)
    ).

running_op(Op, _, _, _, _) :- var(Op), !, fail.
running_op(count, A, A1, A = 0, A1 is A + 1).
running_op(sum(X), A, A1, A = 0, A1 is A + X).
running_op(min(X), A, A1, A is inf, A1 is min(A, X)).
running_op(max(X), A, A1, A is -inf, A1 is max(A, X)).
running_op(min(X, I), A, A1, A = I, A1 is min(A, X)).
running_op(max(X, I), A, A1, A = I, A1 is max(A, X)).

start_value([], _, true).
start_value([A], R, R = A).

		 /*******************************
		 *        RULE DELETION         *
		 *******************************/

%!  delete_rule(+Module, +Key, -DeletedNodes) is det.
%
%   Remove the rule compiled with Key: the clause emitting its head, and
%   every step no remaining rule reaches (their clauses and graph entries).
%   DeletedNodes are the ids of the removed steps, whose stores the
%   executor empties.
delete_rule(M, Key, Deleted) :-
    forall(retract(ep_owner(M, key(Key), Ref)), erase_clause(Ref)),
    retractall(ep_origin(M, _, Key, _)),
    (   retract(ep_rule_root(M, Key, Root, H))
    ->  (   clause(ep_edge(M, rule(H1), Root), true, ERef), H1 =@= H
        ->  erase(ERef)
        ;   true
        )
    ;   true
    ),
    findall(R, ep_rule_root(M, _, R, _), Roots),
    reachable_nodes(M, Roots, Live),
    findall(Id, ( ep_node(M, _, Id), \+ memberchk(Id, Live) ), Deleted),
    forall(member(Id, Deleted), delete_node(M, Id)).

delete_node(M, Id) :-
    forall(retract(ep_owner(M, node(Id), Ref)), erase_clause(Ref)),
    retractall(ep_alias(M, Id, _)),
    retractall(ep_alias(M, _, Id)),
    retractall(ep_origin(M, Id, _, _)),
    retractall(ep_node(M, _, Id)),
    retractall(ep_edge(M, Id, _)),
    retractall(ep_edge(M, _, Id)).

erase_clause(Ref) :-
    catch(erase(Ref), _, true).         % already gone with its predicate

		 /*******************************
		 *     THE GRAPH AS TERMS       *
		 *******************************/

%   For tools that explain the compiled rules (the Python bridge writes
%   these as structured JSON): what core_graph:rule_graph/2 prints, as terms.
:- use_module(library(varnumbers)).
:- use_module(library(pairs)).

%!  graph_node(+Module, -Node) is nondet.
%
%   A node of Module's rule graph: node(Id, Pattern, Window, Policy,
%   Children, Stores).  Pattern has fresh variables; its variables in
%   term_variables/2 order are the arguments of the node's occurrence
%   predicate ep_n<Id> (then the interval).  Children are in the order
%   the operands were compiled.  Stores are store(Name, Side, Args) for
%   each store the step may keep (Side l, r, n or a), Args the pattern
%   variables its goals hold before their interval, in goal_stores/6
%   order ([] for an aggregate: Group, T1, T2, Value).
graph_node(M, node(Id, P, W, Pol, Cs, Stores)) :-
    ep_node(M, Key, Id),
    Key = P0-W-Pol-_,
    varnumbers(P0, P),
    findall(C, ep_edge(M, Id, C), Cs),
    findall(P-store(Name, Side, Args), store_layout(Id, P, Side, Name, Args), Pairs),
    pairs_keys_values(Pairs, Ps, Stores),
    maplist(=(P), Ps).                  % the copies findall made share P's variables again

store_layout(Id, P, Side, Name, Args) :-
    step_operands(P, L, R), !,
    term_variables(L, LVs),
    term_variables(R, RVs),
    goal_stores(Id, LVs, RVs, t(_, _, _, _), GL, GR),
    (   Side = l, G = GL ; Side = r, G = GR ),
    G =.. [Name|Args0],
    append(Args, [_, _], Args0).
store_layout(Id, cnot(_, E), n, Name, Args) :- !,
    store_name(Id, n, Name),
    term_variables(E, Args).
store_layout(Id, aggregate(_, _, _, _), a, Name, []) :-
    store_name(Id, a, Name).

step_operands(where(B, _), L, R) :-
    compound(B), functor(B, Op, 2), binary_op(Op), !,
    arg(1, B, L), arg(2, B, R).
step_operands(B, L, R) :-
    compound(B), functor(B, Op, 2), binary_op(Op), !,
    arg(1, B, L), arg(2, B, R).
step_operands(P, L, R) :-
    optional_pattern(P, _, L, R, _, _).

%!  graph_rule(+Module, -Rule) is nondet.
%
%   A rule of Module, in the order rules were added: rule(Head, Id, Vars),
%   Id the root node of its body and Vars the root's variables (as
%   graph_node/2 orders them) as they occur in Head.  Rules with a
%   do-action, an alarm head or justification are rules like the others.
graph_rule(M, rule(H, Id, Vs)) :-
    ep_rule_root(M, RuleKey, Id, H0),
    ep_node(M, Key, Id),
    Key = P0-_-_-_,
    varnumbers(P0, P),
    term_variables(P, Vs),
    (   ep_alias(M, Id, C) -> true ; C = Id ),
    occ_name(C, Name),
    append(Vs, [_, _], Args),
    OccHead =.. [Name|Args],
    (   ep_owner(M, key(RuleKey), Ref),
        clause(M:OccHead, Body, Ref),
        emitted_head(Body, H0, H1)
    ->  H = H1
    ;   copy_term(H0, H)
    ).

%   The head a rule's emitting clause emits (sharing its variables).
emitted_head(Body, H0, H) :-
    sub_term(G, Body),
    compound(G),
    (   G = ep_emit(H, _, _)
    ->  true
    ;   G = core_timers:schedule_timer(_, Spec, E, _, _, _)
    ->  copy_term(H0, H),
        timer_head(H, E, Spec)
    ),
    H =@= H0, !.
