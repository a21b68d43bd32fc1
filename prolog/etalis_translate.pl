/*  ETALIS rules as rules of the epsparql core.

    One ETALIS rule becomes one core rule; the core binarises it (ETALIS'
    own binariser does the same split into binary steps, with temporary
    events where the core has steps).  Operators, as read by
    etalis_syntax.pl (any case, quoted or not):

        ETALIS                        core
        ---------------------------   ------------------------------------
        P seq Q   (SEQ, *)            seq(P, Q)
        P and Q   (AND, /\)           and(P, Q)
        P or Q    (OR, \/)            or(P, Q)
        P par Q   (PAR, #)            etalis_par(P, Q)       (strict overlap)
        P equals Q, P meets Q         equals(P, Q), meets(P, Q)
        P during Q                    etalis_during(P, Q)    (ETALIS' reading)
        P starts Q, P finishes Q      etalis_starts, etalis_finishes
        P where C                     where(P, once(user:C)) (first solution)
        P check C, P timestamp C      where(span(P, S, E), etalis_runtime:check_times(S, E, user:C))
        P event_multiply C            where(P, user:C)       (every solution)
        P do A   (inside a body)      where(P, once(user:A)) (A runs first; its failure drops P)
        P seq prolog(G) (db, query)   where(P, once(user:G))
        P seq Q star_times            seq(P, star_times(Q))
        P seq aggregate(Op, Q, R)     seq(P, aggregate(Op', Q, R))
        (P seq Q) cnot C              cnot(seq(P, Q), C)     (no C between)
        P cnot C (P not a seq), P fnot C   fnot(P, C)        (no C before)
        P within W                    within(P, W)

    Heads: `(H do A) <- B` runs A (first solution, in user) when B is
    detected, before H is emitted, and drops the detection if A fails, as
    ETALIS does; exceptionAlarm(E, Secs) is the core's;
    exceptionAlarmAbsoluteDatime(E, Datime) converts Datime to the core's
    time.  Rule labels `L 'rule:' Rule` and `L([property(P, V), ...])
    'rule:' Rule` become core labels; the properties window and
    event_rule_window (ETALIS' rule windows, whole seconds) become a
    core window of one more second, which prunes the stored partial
    matches, and an exact check of the rule's interval.

    Conditions run in module user (where ETALIS programs define their
    helpers and facts).  ETALIS' forall_seq, ntimes and not have no
    translation (ETALIS compiles not and ntimes to rules that never fire):
    such a rule is refused with an error.
*/
:- module(etalis_translate,
          [ classify_item/2,            % +Term, -Kind
            translate_rule/2            % +Rule, -CoreRule
          ]).
:- use_module(library(lists)).
:- use_module(library(error)).
:- use_module(etalis_runtime, [event_rule_property/3]).

:- op(1200, xfy, <-).

%!  classify_item(+Term, -Kind) is det.
%
%   What a clause of an ETALIS rule file is: rule(R) (R = labelled(L, Rule)
%   or plain(Head, Body)), directive(Goal), static(Clause), trigger(Spec),
%   module_file(File) or ignored(Term).
classify_item(T, _) :-
    var(T), !,
    instantiation_error(T).
classify_item('rule:'(L, R), rule(labelled(L, R))) :- !.
classify_item((H <- B), rule(plain(H, B))) :- !.
classify_item(iff(H, B), rule(plain(H, B))) :- !.
classify_item('IFF'(H, B), rule(plain(H, B))) :- !.
classify_item((:- G), directive(G)) :- !.
classify_item((?- G), directive(G)) :- !.
classify_item((H :- B), static((H :- B))) :- !.
classify_item(db(F), static(F)) :- !.
classify_item(prolog(F), static(F)) :- !.
classify_item(static(F), static(F)) :- !.
classify_item(external_trigger(F), trigger(F)) :- !.
classify_item(print_trigger(F), trigger(F)) :- !.
classify_item(use_module(F), module_file(F)) :- !.
classify_item(T, ignored(T)) :-
    ignored_item(T), !.
classify_item(T, static(T)).

ignored_item(module(_, _)).
ignored_item(persistent_event(_)).
ignored_item(persistent_rule(_)).

%!  translate_rule(+Rule, -CoreRule) is det.
%
%   The core rule of an ETALIS rule (see the header).  Raises a
%   domain_error naming the construct the core has no counterpart for.
translate_rule(labelled(L0, R), 'rule:'(L, Core)) :- !,
    rule_label(L0, L),
    rule_parts(R, H, B),
    translate_parts(L, H, B, Core).
translate_rule(plain(H, B), Core) :-
    translate_parts(none, H, B, Core).

rule_parts(R, H, B) :-
    (   nonvar(R), ( R = (H <- B) ; R = iff(H, B) ; R = 'IFF'(H, B) )
    ->  true
    ;   domain_error(etalis_event_rule, R)
    ).

%   A label is an atom, or Label(Properties) with property(Name, Value)
%   items, recorded as event_rule_property/3 facts.
rule_label(L0, L) :-
    (   atom(L0)
    ->  L = L0
    ;   compound(L0), L0 =.. [L, Props], is_list(Props)
    ->  forall(member(property(P, V), Props),
               assertz(event_rule_property(L, P, V)))
    ;   must_be(ground, L0), L = L0
    ).

translate_parts(L, H0, B0, (H <- B)) :-
    (   nonvar(H0), H0 = do(H1, Action) -> true ; H1 = H0, Action = none ),
    must_be(callable, H1),
    body(B0, B1),
    rule_window(L, B1, B2),
    (   Action == none -> B3 = B2 ; B3 = where(B2, once(user:Action)) ),
    alarm_head(H1, H, B3, B).

%   ETALIS' window and event_rule_window properties of a label: the
%   smallest applies.
rule_window(L, B, B1) :-
    (   L \== none,
        findall(V, ( event_rule_property(L, P, V),
                     memberchk(P, [window, event_rule_window]),
                     number(V) ), Vs),
        Vs \== []
    ->  min_list(Vs, W),
        W1 is W + 1,
        B1 = where(span(within(B, W1), S, E), etalis_runtime:in_window(S, E, W))
    ;   B1 = B
    ).

alarm_head(exceptionAlarmAbsoluteDatime(E, D), exceptionAlarmAbsoluteDatime(E, T),
           B, where(B, etalis_runtime:alarm_time(D, T))) :- !.
alarm_head(H, H, B, B).

%!  body(+EtalisPattern, -CorePattern) is det.
body(P, _) :-
    var(P), !,
    instantiation_error(P).
body(P, C) :-
    compound(P),
    compound_name_arguments(P, Op, [A, B]),
    binary(Op, Kind), !,
    binary_body(Kind, A, B, C).
body(P, _) :-
    compound(P),
    compound_name_arity(P, Op, _),
    unsupported(Op), !,
    domain_error(etalis_operator_without_translation, Op).
body(P, _) :-
    compound(P),
    P = star_times(_), !,
    domain_error(etalis_pattern, 'star_times only follows seq: P seq Q star_times').
body(P, P) :-
    callable(P), !.
body(P, _) :-
    type_error(etalis_event_pattern, P).

binary(Op, Kind) :-
    atom(Op),
    downcase_atom(Op, Lower),
    op_kind(Lower, Kind).

op_kind(seq, seq).
op_kind(*, seq).
op_kind(and, and).
op_kind(/\, and).
op_kind(or, or).
op_kind(\/, or).
op_kind(par, etalis_par).
op_kind(#, etalis_par).
op_kind(equals, equals).
op_kind(meets, meets).
op_kind(during, etalis_during).
op_kind(starts, etalis_starts).
op_kind(finishes, etalis_finishes).
op_kind(where, where).
op_kind(check, check).
op_kind(timestamp, check).
op_kind(event_multiply, multiply).
op_kind(do, do).
op_kind(cnot, cnot).
op_kind(fnot, fnot).
op_kind(within, within).

unsupported(Op) :-
    atom(Op),
    downcase_atom(Op, L),
    memberchk(L, [forall_seq, ntimes, not]).

binary_body(seq, A, B, C) :- !,
    seq_body(A, B, C).
binary_body(where, A, Cond, where(CA, once(user:Cond))) :- !,
    body(A, CA).
binary_body(do, A, Action, where(CA, once(user:Action))) :- !,
    body(A, CA).
binary_body(check, A, Cond, where(span(CA, S, E), etalis_runtime:check_times(S, E, user:Cond))) :- !,
    body(A, CA).
binary_body(multiply, A, Cond, where(CA, user:Cond)) :- !,
    body(A, CA).
binary_body(within, A, W, within(CA, W)) :- !,
    must_be(number, W),
    body(A, CA).
binary_body(cnot, A, B, C) :- !,
    body(A, CA),
    body(B, CB),
    (   CA = seq(_, _) -> C = cnot(CA, CB) ; C = fnot(CA, CB) ).
binary_body(Kind, A, B, C) :-
    body(A, CA),
    body(B, CB),
    C =.. [Kind, CA, CB].

%   seq with ETALIS' special right sides: star_times, a running aggregate,
%   a Prolog goal (prolog/1, db/1, query/1 on either side).
seq_body(A, B, C) :-
    (   nonvar(B), B = star_times(Q)
    ->  body(A, CA), body(Q, CQ),
        C = seq(CA, star_times(CQ))
    ;   nonvar(B), B = aggregate(Op, Q, R)
    ->  body(A, CA), body(Q, CQ),
        aggregate_op(Op, Op1),
        C = seq(CA, aggregate(Op1, CQ, R))
    ;   prolog_goal(B, G)
    ->  body(A, CA),
        C = where(CA, once(user:G))
    ;   prolog_goal(A, G)
    ->  body(B, CB),
        C = where(CB, once(user:G))
    ;   body(A, CA), body(B, CB),
        C = seq(CA, CB)
    ).

prolog_goal(T, G) :-
    nonvar(T),
    ( T = prolog(G) ; T = db(G) ; T = query(G) ), !.

%   ETALIS starts min and max at 100000 and -100000.
aggregate_op(count, count) :- !.
aggregate_op(sum(X), sum(X)) :- !.
aggregate_op(min(X), min(X, 100000)) :- !.
aggregate_op(max(X), max(X, -100000)) :- !.
aggregate_op(Op, _) :-
    domain_error(etalis_aggregate, Op).
