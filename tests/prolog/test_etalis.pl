/*  plunit tests of prolog/etalis.pl (ETALIS programs on the core) and of
    the core's justification.

    Run: swipl -g run_tests -t halt tests/prolog/test_etalis.pl
    (tests/etalis/test_etalis_plunit.py runs it with the project's swipl).

    Event time only (numeric stamps): nothing here waits on the clock.
*/
:- use_module(library(plunit)).
:- use_module(library(lists)).
:- use_module(library(random)).
:- prolog_load_context(directory, Dir),
   atom_concat(Dir, '/../../prolog/etalis', Etalis),
   use_module(Etalis).

%   A fresh ETALIS state with the given flags, rules (a list of terms) and
%   events ([Event-T] or [Event-T1-T2], numeric stamps).
fresh(Flags, Rules) :-
    reset_etalis,
    forall(member(F-V, Flags), set_etalis_flag(F, V)),
    set_etalis_flag(store_fired_events, on),
    compile_event_rules(Rules).

push(Events) :-
    forall(member(E, Events),
           (   E = Ev-T1-T2 -> event(Ev, [T1, T2])
           ;   E = Ev-T -> event(Ev, [T, T])
           )).

stored(Pattern, List) :-
    findall(Pattern-I, stored_event(event(Pattern, I)), List).

read_rules(Text, Terms) :-
    setup_call_cleanup(open_string(Text, S0),
                       ( read_string(S0, _, Str),
                         string_codes(Str, Codes0),
                         etalis_syntax:unquote_operators(Codes0, Codes),
                         open_codes_stream(Codes, S),
                         etalis_syntax:read_etalis_terms(S, Terms),
                         close(S) ),
                       close(S0)).

:- begin_tests(etalis_syntax).

test(priorities) :-
    read_rules("h <- a and b par c. h <- a seq b meets c. h <- a where x within 10.", Ts),
    Ts = [(h <- R1), (h <- R2), (h <- R3)],
    R1 = par(and(a, b), c),
    R2 = meets(seq(a, b), c),
    R3 = where(a, within(x, 10)).

test(quoted_and_upper_case_operators) :-
    read_rules("h <- a 'seq' b 'SEQ' c 'And' d.  r1 'rule:' k <- x 'where' y.", Ts),
    Ts = [(h <- and(seq(seq(a, b), c), d)), 'rule:'(r1, (k <- where(x, y)))].

test(quoted_operator_as_an_atom_stays_an_atom) :-
    read_rules("f('and', 'seq'). g(x 'seq' y, 'seq').", Ts),
    Ts = [f(and, seq), g(seq(x, y), seq)].

test(comments_and_strings_untouched) :-
    read_rules("% 'seq' in a comment\nf(\"a 'seq' b\", 'x''seq'). /* 'and' */ g.", Ts),
    Ts = [f(Codes, 'x\'seq'), g],
    atom_codes('a \'seq\' b', Codes).

test(syntax_error_names_line, [throws(error(syntax_error(_), _))]) :-
    read_rules("h <- a seq.\n", _).

:- end_tests(etalis_syntax).

:- begin_tests(etalis_translate).

tr(Rule, Core) :-
    etalis_translate:classify_item(Rule, rule(R)),
    etalis_translate:translate_rule(R, Core).

test(operators) :-
    tr((h <- a par b), (h <- etalis_par(a, b))),
    tr((h <- a starts b), (h <- etalis_starts(a, b))),
    tr((h <- (a seq b) cnot c), (h <- cnot(seq(a, b), c))),
    tr((h <- a cnot c), (h <- fnot(a, c))),
    tr((h(X) <- a(X) where X > 1), (h(X) <- where(a(X), once(user:(X > 1))))),
    tr((h <- a seq prolog(g)), (h <- where(a, once(user:g)))),
    tr((h <- a seq star_times(b)), (h <- seq(a, star_times(b)))),
    tr((h(R) <- s seq aggregate(min(X), v(X), R)), (h(R) <- seq(s, aggregate(min(X, 100000), v(X), R)))).

test(do_is_a_first_solution_condition) :-
    tr((do(h, w) <- a), (h <- where(a, once(user:w)))).

test(unsupported_operator, [throws(error(domain_error(etalis_operator_without_translation, forall_seq), _))]) :-
    tr((h <- a forall_seq b), _).

:- end_tests(etalis_translate).

:- begin_tests(etalis_run).

test(sequence_and_stored_events) :-
    fresh([], [(c(X) <- a(X) seq b(X))]),
    push([a(1)-1, b(1)-2, b(2)-3]),
    findall(E, stored_event(E), Es),
    Es == [event(a(1), [1, 1]), event(b(1), [2, 2]), event(c(1), [1, 2]), event(b(2), [3, 3])].

test(recent_keeps_one_partial_match_per_bindings) :-
    fresh([], [(c(X) <- a(X) seq b(X))]),            % ETALIS' default: recent
    push([a(1)-1, a(1)-2, b(1)-3, b(1)-4]),
    stored(c(_), L),
    L == [c(1)-[2, 3]].

test(unrestricted_pairs_everything) :-
    fresh([event_consumption_policy-unrestricted], [(c(X) <- a(X) seq b(X))]),
    push([a(1)-1, a(1)-2, b(1)-3]),
    stored(c(_), L),
    msort(L, [c(1)-[1, 3], c(1)-[2, 3]]).

test(where_takes_the_first_solution) :-
    fresh([], [(h(Y) <- a(X) where member(Y, [X, 9]))]),
    push([a(1)-1]),
    stored(h(_), [h(1)-[1, 1]]).

test(event_multiply_takes_every_solution) :-
    fresh([], [(h(Y) <- a(X) event_multiply member(Y, [X, 9]))]),
    push([a(1)-1]),
    stored(h(_), [h(1)-[1, 1], h(9)-[1, 1]]).

test(starts_follows_etalis_here_and_allen_in_the_core) :-
    Rules = [(c(X) <- a(X) seq b(X)), (d(X) <- a(X) seq b(X)), (e(X) <- c(X) starts d(X))],
    fresh([], Rules),
    push([a(1)-1, b(1)-2]),
    stored(e(_), [e(1)-[1, 2]]),
    % the core's own starts: P.end < Q.end, strictly
    Core = epsparql_etalis_test_core,
    (   epsparql_core:is_event_engine(Core) -> epsparql_core:engine_destroy(Core) ; true ),
    epsparql_core:engine_create(Core),
    epsparql_core:engine_add_rules(Core, Rules),
    epsparql_core:engine_event(Core, a(1), [1, 1]),
    epsparql_core:engine_event(Core, b(1), [2, 2]),
    epsparql_core:engine_drain(Core, Ds),
    epsparql_core:engine_destroy(Core),
    \+ memberchk(detected(e(_), _), Ds).

test(finishes_follows_etalis) :-
    fresh([], [(c(X) <- a(X) seq b(X)), (d(X) <- a(X) seq b(X)), (e(X) <- c(X) finishes d(X))]),
    push([a(1)-1, b(1)-2]),
    stored(e(_), [e(1)-[1, 2]]).

test(alarm_on_event_time) :-
    fresh([], [(exceptionAlarm(ring(X), 5) <- a(X))]),
    push([a(1)-1, z-6]),
    stored(ring(_), []),                     % due at 6: not passed by an event at 6
    push([z-7]),
    stored(ring(_), [ring(1)-[1, 6]]).

test(rule_window_property) :-
    fresh([], [ 'rule:'(r1([property(window, 2)]), (c(X) <- a(X) seq b(X))) ]),
    push([a(1)-1, b(1)-3, a(2)-10, b(2)-13]),
    stored(c(_), [c(1)-[1, 3]]).

test(delete_by_label_and_by_rule) :-
    fresh([], [ 'rule:'(r1, (e(X) <- a(X))), (f(X) <- a(X)), (g(X) <- a(X)) ]),
    push([a(1)-1]),
    del_event_rule(r1),
    del_event_rule((f(_) <- a(_))),
    push([a(2)-2]),
    stored(_, L),
    L == [a(1)-[1, 1], e(1)-[1, 1], f(1)-[1, 1], g(1)-[1, 1], a(2)-[2, 2], g(2)-[2, 2]].

test(events_raised_by_a_do_action) :-
    fresh([], [ (do(b(X), event(c(X), [5, 5])) <- a(X)), (d(X) <- c(X)) ]),
    push([a(1)-5]),
    stored(_, L),
    L == [a(1)-[5, 5], c(1)-[5, 5], b(1)-[5, 5], d(1)-[5, 5]].

test(check_sees_the_interval) :-
    fresh([], [ (d(X) <- a(X) seq b(X) check (t1(T1), t2(T2), T2 - T1 < 2)) ]),
    push([a(1)-1, b(1)-2, a(2)-3, b(2)-9]),
    stored(d(_), [d(1)-[1, 2]]).

test(out_of_order_flag) :-
    fresh([out_of_order-on], [(d(X) <- a(X) seq b(X))]),
    push([b(1)-2, a(1)-1]),
    stored(d(_), [d(1)-[1, 2]]).

test(fire_events_java) :-
    fresh([store_fired_events_java-on], [external_trigger(b/0), external_trigger(c/0),
                                         (c <- a seq b)]),
    fire_events_java([a], O1),
    fire_events_java([b], O2),
    O1 == [],
    O2 = [event(b, _), event(c, _)].

:- end_tests(etalis_run).

:- begin_tests(etalis_justification).

test(tree_of_a_sequence) :-
    fresh([etalis_justification-on], [(c(X) <- a(X) seq b(X))]),
    push([a(1)-1, b(1)-2]),
    justify_event(c(1), I, J),
    I == [1, 2],
    J = justification(c(1), [1, 2], _, step(_, [1, 2], [received(a(1), [1, 1]),
                                                       received(b(1), [2, 2])])).

test(not_detected) :-
    fresh([etalis_justification-on], [(c(X) <- a(X) seq b(X))]),
    push([a(1)-1]),
    justify_event(c(_), _, J),
    J = not_detected(c(_), [rule(_, 1)]).

%   Generated: every detection of a two-level rule set has a justification
%   whose received events are events of the stream, and whose steps hold:
%   seq's left ends before its right starts, intervals are the union.
test(generated_trees_explain_every_detection, [forall(between(1, 15, Seed))]) :-
    set_random(seed(Seed)),
    fresh([etalis_justification-on, event_consumption_policy-unrestricted],
          [ (c(X) <- a(X) seq b(X)),
            (d(X) <- c(X) and e(X)) ]),
    random_between(4, 14, N),
    findall(Ev-T, ( between(1, N, T),
                    random_member(Name, [a, b, e]),
                    random_between(1, 2, K),
                    Ev =.. [Name, K] ), Events),
    push(Events),
    forall(( stored_event(event(H, I)), ( H = c(_) ; H = d(_) ) ),
           ( justify_event(H, I, J),
             J = justification(H, I, _, Tree),
             tree_ok(Tree, I, Events) )).

tree_ok(received(E, [T, T]), [T, T], Events) :- !,
    memberchk(E-T, Events).
tree_ok(justification(_, I, _, Tree), I, Events) :- !,
    tree_ok(Tree, I, Events).
tree_ok(step(P, [S, E], [A, B]), [S, E], Events) :-
    sub_interval(A, [S1, E1]), sub_interval(B, [S2, E2]),
    tree_ok(A, [S1, E1], Events), tree_ok(B, [S2, E2], Events),
    S =:= min(S1, S2), E =:= max(E1, E2),
    (   P = seq(_, _) -> E1 < S2 ; true ).

sub_interval(received(_, I), I).
sub_interval(justification(_, I, _, _), I).
sub_interval(step(_, I, _), I).

:- end_tests(etalis_justification).

:- begin_tests(etalis_helpers).

test(datime_arithmetic) :-
    datime_plus_sec(datime(2024, 1, 31, 23, 59, 50), 20, D1),
    D1 == datime(2024, 2, 1, 0, 0, 10),
    datime_plus_sec(datime(2023, 12, 31, 23, 0, 0), 7200, D2),
    D2 == datime(2024, 1, 1, 1, 0, 0),
    datime_minus_datime(datime(2024, 3, 1, 0, 0, 0), datime(2024, 2, 28, 0, 0, 0), S),
    S =:= 2 * 86400,
    datime_minus_sec(datime(2024, 1, 1, 0, 0, 5), 10, D3),
    D3 == datime(2023, 12, 31, 23, 59, 55).

test(datime_order) :-
    less_datime(datime(2024, 1, 1, 0, 0, 1, 2), datime(2024, 1, 1, 0, 0, 1, 3)),
    \+ less_datime(datime(2024, 1, 1, 0, 0, 1, 3), datime(2024, 1, 1, 0, 0, 1, 2)),
    equal_datime(datime(2024, 1, 1, 0, 0, 1, 3), datime(2024, 1, 1, 0, 0, 1, 9)),
    less_datime(1, 2).

test(stamps_map_to_numbers_and_back) :-
    forall(member(D, [datime(2010, 12, 24, 0, 9, 0, 1), datime(2024, 2, 29, 23, 59, 59, 77)]),
           ( core_timers:datime_seconds(D, T), core_timers:seconds_datime(T, D2), D2 == D )),
    core_timers:datime_seconds(datime(2024, 1, 1, 0, 0, 1, 5), A),
    core_timers:datime_seconds(datime(2024, 1, 1, 0, 0, 1, 6), B),
    core_timers:datime_seconds(datime(2024, 1, 1, 0, 0, 2, 0), C),
    A < B, B < C.

test(counters) :-
    resetCounter(k(1)),
    incCounter(k(1)), incCounter(k(1)),
    counter(k(1), 2),
    counter(never_set, 0).

:- end_tests(etalis_helpers).
