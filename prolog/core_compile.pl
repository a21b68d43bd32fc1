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

    All clauses go into the engine's own module, so engines never see each
    other's rules or state.
*/
:- module(core_compile,
          [ compile_rule/3,             % +Module, +Rule, +Options
            node_count/2,               % +Module, -Count
            forget_nodes/1,             % +Module
            rule_graph/2,               % +Module, -Graph
            graph_node/2,               % +Module, -Node        (the graph as terms, below)
            graph_rule/2                % +Module, -Rule
          ]).
:- set_prolog_flag(optimise, true).   % file-scoped: inline arithmetic
:- use_module(library(lists)).
:- op(1200, xfx, <-).
:- use_module(library(apply)).
:- use_module(library(ordsets)).

:- dynamic
    ep_node/3,          % ep_node(Module, Key, Id)
    ep_edge/3,          % ep_edge(Module, Parent, ChildId): Parent a node id or rule(Head)
    ep_node_counter/2.  % ep_node_counter(Module, Next)

%!  compile_rule(+Module, +Rule, +Options) is det.
%
%   Compile one rule `Head <- Body` into EDBC clauses in Module.
%   Options: policy(unrestricted|recent|chronological).
%   Raises a domain_error naming the offending sub-term for patterns the
%   language does not have.
compile_rule(M, Rule, Options) :-
    (   Rule = (Head <- Body)
    ->  true
    ;   domain_error(event_rule, Rule)
    ),
    must_be(callable, Head),
    option_policy(Options, Policy),
    % Nodes are shared only between rules added with no event in between,
    % so that every rule sees exactly the events pushed after it was added.
    (   M:ep_state(_, Epoch, _, _, _, _) -> true ; Epoch = 0 ),
    Ctx = ctx(M, inf, Policy),
    b_setval(ep_compile_epoch, Epoch),
    copy_term(Head-Body, H1-B1),
    b_setval(ep_compile_parent, rule(H1)),
    b_setval(ep_compile_module, M),
    b_setval(ep_compile_policy, Policy),
    node(Ctx, B1, Id),
    term_variables(B1, Vs),
    occ_head(Id, Vs, T1, T2, OccHead),
    assert_clause(M, (OccHead :- ep_emit(H1, T1, T2))).

option_policy(Options, Policy) :-
    (   memberchk(policy(P), Options) -> Policy = P ; Policy = unrestricted ),
    must_be(oneof([unrestricted, recent, chronological]), Policy).

%!  node_count(+Module, -Count) is det.
node_count(M, N) :-
    aggregate_all(count, ep_node(M, _, _), N).

%!  forget_nodes(+Module) is det.
%
%   Drop the compiler's node table of Module (on engine reset).
forget_nodes(M) :-
    retractall(ep_node(M, _, _)),
    retractall(ep_edge(M, _, _)),
    retractall(ep_node_counter(M, _)).

%!  rule_graph(+Module, -Graph:dict) is det.
%
%   The binarised rule graph of Module, for explain tools:
%   graph{nodes: [node{id, pattern, window, policy, children}],
%         rules: [rule{head, node}]}.  Patterns and heads are strings.
rule_graph(M, graph{nodes: Nodes, rules: Rules}) :-
    findall(node{id: Id, pattern: PT, window: W, policy: Pol, children: Cs},
            ( ep_node(M, Key, Id),
              Key = P-W-Pol-_,
              term_string_nv(P, PT),
              findall(C, ep_edge(M, Id, C), Cs) ),
            Nodes0),
    sort(id, @<, Nodes0, Nodes),
    findall(rule{head: HT, node: Id},
            ( ep_edge(M, rule(H), Id), term_string_nv(H, HT) ),
            Rules).

term_string_nv(T, S) :-
    copy_term(T, T1),
    numbervars(T1, 0, _, [singletons(true)]),
    with_output_to(string(S), print(T1)).

%   node(+Ctx, +Pattern, -Id): the node for Pattern, created on first use.
node(Ctx, P, Id) :-
    Ctx = ctx(M, W, Pol),
    node_key(P, W, Pol, Key),
    b_getval(ep_compile_parent, Parent),
    (   ep_node(M, Key, Id0)
    ->  Id = Id0
    ;   new_id(M, Id),
        assertz(ep_node(M, Key, Id)),
        b_setval(ep_compile_parent, Id),
        build(Ctx, P, Id),
        b_setval(ep_compile_parent, Parent)
    ),
    (   ep_edge(M, Parent, Id) -> true ; assertz(ep_edge(M, Parent, Id)) ).

node_key(P, W, Pol, Key) :-
    b_getval(ep_compile_epoch, Epoch),
    copy_term(P-W-Pol-Epoch, Key),
    numbervars(Key, 0, _).

new_id(M, Id) :-
    (   retract(ep_node_counter(M, Id)) -> true ; Id = 1 ),
    Id1 is Id + 1,
    assertz(ep_node_counter(M, Id1)).

occ_name(Id, Name) :- atom_concat(ep_n, Id, Name).

occ_head(Id, Vs, T1, T2, Head) :-
    occ_name(Id, Name),
    append(Vs, [T1, T2], Args),
    Head =.. [Name|Args].

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
    Ctx = ctx(_, _, _),
    instantiation_error(P).
build(Ctx, within(P, W), Id) :- !,
    check_window(W),
    Ctx = ctx(M, W0, Pol),
    W1 is min(W0, W),
    node(ctx(M, W1, Pol), P, C),
    term_variables(within(P, W), Vs),
    declare_occ(M, Id, Vs),
    occ_head(C, Vs, T1, T2, CH),
    occ_head(Id, Vs, T1, T2, H),
    assert_clause(M, (CH :- T2 - T1 =< W, H)).
build(Ctx, where(P, Cond), Id) :-
    compound(P),
    functor(P, Op, 2),
    binary_op(Op), !,
    arg(1, P, L),
    arg(2, P, R),
    compile_binary(Ctx, Op, L, R, Cond, Id).
build(Ctx, where(P, Cond), Id) :- !,
    Ctx = ctx(M, _, _),
    node(Ctx, P, C),
    term_variables(P, PVs),
    term_variables(where(P, Cond), Vs),
    declare_occ(M, Id, Vs),
    occ_head(C, PVs, T1, T2, CH),
    occ_head(Id, Vs, T1, T2, H),
    condition_goal(Cond, Goal),
    assert_clause(M, (CH :- Goal, H)).
build(Ctx, or(L, R), Id) :- !,
    Ctx = ctx(M, _, _),
    node(Ctx, L, CL),
    node(Ctx, R, CR),
    term_variables(or(L, R), Vs),
    declare_occ(M, Id, Vs),
    term_variables(L, LVs),
    term_variables(R, RVs),
    occ_head(CL, LVs, T1, T2, HL),
    occ_head(CR, RVs, T1, T2, HR),
    occ_head(Id, Vs, T1, T2, H),
    copy_term(HL-H, HL1-H1),            % the other side's variables stay free
    assert_clause(M, (HL1 :- H1)),
    assert_clause(M, (HR :- H)).
build(Ctx, cnot(P, E), Id) :- !,
    Ctx = ctx(M, W, _),
    node(Ctx, P, CP),
    node(Ctx, E, CE),
    term_variables(P, PVs),
    term_variables(E, EVs),
    term_variables(cnot(P, E), Vs),         % E's own variables stay unbound
    declare_occ(M, Id, Vs),
    store_name(Id, n, NegName),
    length(EVs, NE), NA is NE + 2,
    declare_store(M, NegName/NA, W, Id),
    append(EVs, [S1, S2], NArgs),
    Neg =.. [NegName|NArgs],
    occ_head(CE, EVs, S1, S2, HE),
    assert_clause(M, (HE :- assertz(Neg))),
    occ_head(CP, PVs, T1, T2, HP),
    copy_term(PVs-Vs, PVs1-Vs1),
    PVs1 = PVs,
    occ_head(Id, Vs1, T1, T2, H),
    assert_clause(M, (HP :- \+ (Neg, T1 < S1, S2 < T2), H)).
build(Ctx, span(P, S, E), Id) :- !,
    Ctx = ctx(M, _, _),
    node(Ctx, P, C),
    term_variables(P, PVs),
    term_variables(span(P, S, E), Vs),
    declare_occ(M, Id, Vs),
    occ_head(C, PVs, T1, T2, CH),
    occ_head(Id, Vs, T1, T2, H),
    assert_clause(M, (CH :- S = T1, E = T2, H)).
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
    Ctx = ctx(M, _, _),
    term_variables(P, Vs),
    declare_occ(M, Id, Vs),
    occ_head(Id, Vs, T1, T2, H),
    assert_clause(M, (ep_on(P, T1, T2) :- H)),
    note_entry(M, P).
build(_, P, _) :-
    domain_error(event_pattern, P).

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

binary_op(seq).
binary_op(and).
binary_op(par).
binary_op(equals).
binary_op(meets).
binary_op(during).
binary_op(starts).
binary_op(finishes).

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

store_name(Id, Side, Name) :-
    format(atom(Name), 'ep_g~w~w', [Id, Side]).

declare_store(M, Name/Arity, W, Id) :-
    dynamic(M:Name/Arity),
    assertz(epsparql_core:engine_store(M, Name/Arity, W, Id)),
    (   nb_current(ep_compile_policy, recent)       % newest first: no prefix sweeps
    ->  assertz(epsparql_core:engine_store_newest_first(M, Name))
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
    Ctx = ctx(M, W, Pol),
    node(Ctx, L, CL),
    node(Ctx, R, CR),
    term_variables(L, LVs),
    term_variables(R, RVs),
    term_variables(L-R-Cond0, Vs),
    condition_goal(Cond0, Filter),
    declare_occ(M, Id, Vs),
    goal_stores(Id, LVs, RVs, t(T1, T2, T3, T4), GL, GR),
    functor(GL, LName, LA),
    functor(GR, RName, RA),
    declare_store(M, LName/LA, W, Id),
    temporal(Op, T1, T2, T3, T4, Check),
    span(Op, T1, T2, T3, T4, TS, TE, Span),
    occ_head(CL, LVs, T1, T2, HL),
    occ_head(CR, RVs, T3, T4, HR),
    occ_head(Id, Vs, TS, TE, H),
    (   Op == seq
    ->  % The window bound is computed once per arriving right occurrence;
        % each candidate goal then costs two comparisons.
        (   W == inf
        ->  Pre = true, Cond1 = (T2 < T3)
        ;   Pre = (Lim is T4 - W), Cond1 = (T1 >= Lim, T2 < T3)
        ),
        conj(Cond1, Filter, Cond),
        insert_goal(Pol, GL, InsL),
        assert_clause(M, (HL :- InsL)),
        check_goal(Pol, GL, Cond, Find),
        assert_clause(M, (HR :- Pre, Find, H))
    ;   window_goal(W, TS, TE, WCheck),
        declare_store(M, RName/RA, W, Id),
        insert_goal(Pol, GL, InsL),
        insert_goal(Pol, GR, InsR),
        conj((Check, Span, WCheck), Filter, Cond),
        check_goal(Pol, GR, Cond, FindR),
        check_goal(Pol, GL, Cond, FindL),
        (   Pol == unrestricted
        ->  assert_clause(M, (HL :- InsL, FindR, H)),
            assert_clause(M, (HR :- InsR, FindL, H))
        ;   assert_clause(M, (HL :- (FindR -> H ; InsL, fail))),
            assert_clause(M, (HR :- (FindL -> H ; InsR, fail)))
        )
    ).

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

conj(A, true, A) :- !.
conj(A, B, (A, B)).

window_goal(inf, _, _, true) :- !.
window_goal(W, TS, TE, (TE - TS =< W)).

%   Goal insertion: unrestricted and chronological keep arrival order;
%   recent puts the newest first so the first match is the most recent.
insert_goal(recent, G, asserta(G)) :- !.
insert_goal(_, G, assertz(G)).

%   Goal checking: unrestricted enumerates every partner and keeps it;
%   recent/chronological take the first (newest/oldest) and consume it.
check_goal(unrestricted, G, Cond, (G, Cond)) :- !.
check_goal(_, G, Cond, (once((G, Cond)), epsparql_core:consume_goal(M, G))) :-
    b_getval(ep_compile_module, M).

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
    Ctx = ctx(M, W, Pol),
    % the optional side is compiled without the window: an optional
    % occurrence longer than the window still rules out the mandatory
    % side alone (eqopt excepted: there it has the mandatory interval)
    (   Kind == optseq -> node(ctx(M, inf, Pol), L, CL) ; node(Ctx, L, CL) ),
    (   Kind == leftjoin -> node(ctx(M, inf, Pol), R, CR) ; node(Ctx, R, CR) ),
    term_variables(L, LVs),
    term_variables(R, RVs),
    declare_occ(M, Id, Vs),
    condition_goal(Cond0, Cond),
    goal_stores(Id, LVs, RVs, t(T1, T2, T3, T4), GL, GR),
    functor(GL, LName, LA),
    functor(GR, RName, RA),
    occ_head(CL, LVs, T1, T2, HL),
    occ_head(CR, RVs, T3, T4, HR),
    (   Kind \== optseq, \+ epsparql_core:engine_has_pending(M)
    ->  assertz(epsparql_core:engine_has_pending(M))
    ;   true
    ),
    optional_clauses(Kind, M, W, Id, Vs, LVs, RVs, S-E, Cond,
                     GL, GR, HL, HR, t(T1, T2, T3, T4), Stores),
    forall(member(Name-SW, Stores),
           (   Name == LName
           ->  declare_store(M, LName/LA, SW, Id)
           ;   declare_store(M, RName/RA, SW, Id)
           )).

optional_clauses(optseq, M, W, Id, Vs, _LVs, RVs, S-E, Cond, GL, _GR, HL, HR,
                 t(T1, T2, T3, T4), [LName-inf]) :-
    functor(GL, LName, _),
    assert_clause(M, (HL :- assertz(GL))),
    window_goal(W, T1, T4, WCheck),
    occ_head(Id, Vs, T1, T4, HBoth),
    copy_term(RVs-Vs, RVs1-Vs1),            % R alone: L-only variables stay free
    RVs1 = RVs,
    occ_head(Id, Vs1, T3, T4, HAlone),
    % the combinations passing Cond on the combined interval, and R alone
    % when no compatible earlier L passes Cond on R's interval (both can
    % hold when Cond reads the interval)
    assert_clause(M, (HR :- (   GL, T2 < T3, WCheck, S = T1, E = T4, Cond, HBoth
                            ;   \+ (GL, T2 < T3, S = T3, E = T4, Cond), HAlone
                            ))).
optional_clauses(eqopt, M, W, Id, Vs, LVs, _RVs, S-E, Cond, GL, GR, HL, HR,
                 t(T1, T2, T3, T4), [LName-W, RName-W]) :-
    functor(GL, LName, _),
    functor(GR, RName, _),
    occ_head(Id, Vs, T1, T2, HBoth),
    close_name(Id, CName),
    append(LVs, [T1, T2], CArgs),
    Close =.. [CName|CArgs],
    assert_clause(M, (HL :- assertz(GL), assertz(ep_pend(T2, Id, Close)),
                            GR, T3 =:= T1, T4 =:= T2, S = T1, E = T2, Cond, HBoth)),
    assert_clause(M, (HR :- assertz(GR), GL, T1 =:= T3, T2 =:= T4,
                            S = T1, E = T2, Cond, HBoth)),
    copy_term(LVs-Vs, LVs1-Vs1),
    LVs1 = LVs,
    occ_head(Id, Vs1, T1, T2, HAlone),
    assert_clause(M, (Close :- \+ (GR, T3 =:= T1, T4 =:= T2, S = T1, E = T2, Cond),
                               HAlone)).
optional_clauses(leftjoin, M, W, Id, Vs, LVs, _RVs, S-E, Cond, GL, GR, HL, HR,
                 t(T1, T2, T3, T4), [LName-W, RName-inf]) :-
    functor(GL, LName, _),
    functor(GR, RName, _),
    occ_head(Id, Vs, TS, T2, HBoth),
    close_name(Id, CName),
    append(LVs, [T1, T2], CArgs),
    Close =.. [CName|CArgs],
    window_goal(W, TS, T2, WCheck),
    assert_clause(M, (HL :- assertz(GL), assertz(ep_pend(T2, Id, Close)),
                            GR, T4 =< T2, S = T1, E = T2, Cond,
                            TS is min(T1, T3), WCheck, HBoth)),
    assert_clause(M, (HR :- assertz(GR), GL, T2 =:= T4,
                            S = T1, E = T2, Cond, TS is min(T1, T3), WCheck, HBoth)),
    copy_term(LVs-Vs, LVs1-Vs1),
    LVs1 = LVs,
    occ_head(Id, Vs1, T1, T2, HAlone),
    assert_clause(M, (Close :- \+ (GR, T4 =< T2, S = T1, E = T2, Cond), HAlone)).

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
    Ctx = ctx(M, W, Pol),
    (   aggregate_op(Op) -> true ; domain_error(aggregate_op, Op) ),
    (   Window = time(S) -> check_window(S)
    ;   Window = count(N) -> must_be(positive_integer, N)
    ;   domain_error(aggregate_window, Window)
    ),
    strip_hidden(P0, Hidden, P),
    node(ctx(M, W, Pol), P, C),
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
    declare_store(M, AName/4, inf, Id),
    occ_head(C, PVs, T1, T2, HC),
    occ_head(Id, OutVs, TS, T2, H),
    assert_clause(M, (HC :- epsparql_core:aggregate_step(M, AName, G, Window, OpName,
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
assert_clause(M, Clause) :-
    current_prolog_flag(optimise, Old),
    setup_call_cleanup(set_prolog_flag(optimise, true),
                       assertz(M:Clause),
                       set_prolog_flag(optimise, Old)),
    clause_pi(Clause, PI),
    (   epsparql_core:engine_rule_pred(M, PI)
    ->  true
    ;   assertz(epsparql_core:engine_rule_pred(M, PI))
    ).

clause_pi((H :- _), Name/Arity) :- !, functor(H, Name, Arity).
clause_pi(H, Name/Arity) :- functor(H, Name, Arity).


		 /*******************************
		 *     THE GRAPH AS TERMS       *
		 *******************************/

%   For tools that explain the compiled rules (the Python bridge writes
%   these as structured JSON): what rule_graph/2 prints, as terms.
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
%   graph_node/2 orders them) as they occur in Head.
graph_rule(M, rule(H, Id, Vs)) :-
    ep_edge(M, rule(H0), Id),
    ep_node(M, Key, Id),
    Key = P0-_-_-_,
    varnumbers(P0, P),
    term_variables(P, Vs),
    occ_head(Id, Vs, _, _, OccHead),
    once(( clause(M:OccHead, ep_emit(H, _, _)), H =@= H0 )).
