/*  Justification: why the core detected an event.

    Rules added while the engine option `justify` is true are compiled
    with one more goal in each step (core_compile.pl, just_goal/8): when a
    step occurs it records which occurrences of its children made it,

        ep_just(NodeId, Vars, T1, T2, Children)
            Children: c(ChildId, ChildVars, S, E) for a step,
                      event(Event, S, E) for an event entering the rule

    and when a rule emits its head it records the detection with the rule
    and the root step (or, for an alarm, the step whose detection set it),

        ep_just_rule(Head, T1, T2, RuleKey, node(RootId, Vars))
        ep_just_rule(Event, Start, Due, RuleKey, alarm(node(Id, Vars, T1, T2)))

    Both live in the engine module and are part of neither the state
    snapshot nor the goal count; engine_clear_state/1 forgets them.  They
    grow with the stream: justification is a debugging and explanation
    aid, for bounded runs.

    justify/4 rebuilds the tree of a detection from them:

        justification(Event, [T1,T2], Rule, Why)
            Rule: the rule's text (with its label)
            Why:  step(Pattern, [T1,T2], Children)   a step of the rule, its
                                                     pattern with the bindings
                  received(Event, [T1,T2])           an event pushed in
                  justification(...)                 an event another rule derived
                  alarm(Why)                         an alarm set by that step
                  unknown(NodeId, [T1,T2])           a step with no record

    justify_data/4 gives the same tree as data for tools (the Python
    bridge's py_justify/5: epsparql explain and the trace), naming each
    step by its node and the values of its variables instead of printing
    its pattern:

        detection(Event, [T1,T2], Rule, Why)
            Why: step(NodeId, Values, [T1,T2], Children)
                 received(Event, [T1,T2])
                 detection(...)
                 alarm(Why)
                 unknown(NodeId, [T1,T2])

    Values are the node's variables in graph_node/2's order.
*/
:- module(core_justify,
          [ edge/6,                     % +Module, +NodeId, +Vars, +T1, +T2, +Children
            record_rule/7,              % +Module, +Head, +T1, +T2, +Key, +RootId, +Vars
            record_alarm/5,             % +Module, +Why, +Event, +Start, +Due
            alarm_info/1,               % @Why
            justify/4,                  % +Module, ?Event, ?[T1,T2], -Justification
            justify_data/4,             % +Module, ?Event, ?[T1,T2], -Tree
            why_not/3,                  % +Module, +Event, -Explanation
            write_tree/1                % +Justification
          ]).
:- use_module(library(lists)).
:- use_module(library(apply)).
:- use_module(core_state, [engine_rule_key/3, engine_store/4, rule_head/2]).
:- use_module(core_graph, [ep_rule_root/4, node_pattern/3, reachable_nodes/3]).

%!  edge(+Module, +NodeId, +Vars, +T1, +T2, +Children) is det.
%
%   Record an occurrence of a step.  Called from compiled rules only.
edge(M, Id, Vs, T1, T2, Children) :-
    assertz(M:ep_just(Id, Vs, T1, T2, Children)).

%!  record_rule(+Module, +Head, +T1, +T2, +Key, +RootId, +Vars) is det.
%
%   Record a detection of the rule Key.  Called from compiled rules only.
record_rule(M, H, T1, T2, Key, Id, Vs) :-
    assertz(M:ep_just_rule(H, T1, T2, Key, node(Id, Vs))).

%!  record_alarm(+Module, +Why, +Event, +Start, +Due) is det.
%
%   Record an alarm event about to be emitted; Why is what the alarm
%   was set with (none when its rule does not justify).
record_alarm(_, none, _, _, _) :- !.
record_alarm(M, j(Key, Id, Vs, T1, T2), E, Start, Due) :-
    assertz(M:ep_just_rule(E, Start, Due, Key, alarm(node(Id, Vs, T1, T2)))).

%!  alarm_info(@Why) is semidet.
%
%   Why is what an alarm may carry (for the state snapshot checks).
alarm_info(Why) :-
    (   Why == none -> true
    ;   nonvar(Why), Why = j(Key, Id, Vs, T1, T2),
        integer(Key), integer(Id), is_list(Vs), number(T1), number(T2)
    ).

%!  justify(+Module, ?Event, ?Interval, -Justification) is nondet.
%
%   The justification tree of each recorded detection of Event over
%   Interval (see the header).
justify(M, E, I, J) :-
    justify_data(M, E, I, Data),
    printed(M, Data, J).

%!  justify_data(+Module, ?Event, ?Interval, -Tree) is nondet.
%
%   The justification of each recorded detection of Event over Interval
%   as data (see the header).
justify_data(M, E, [T1, T2], J) :-
    clause(M:ep_just_rule(E, T1, T2, Key, Why), true),
    justification(M, E, T1, T2, Key, Why, 0, J).

justification(M, E, T1, T2, Key, Why, Depth, detection(E, [T1, T2], Rule, Tree)) :-
    rule_text(M, Key, Rule),
    D1 is Depth + 1,
    why_tree(M, Why, T1, T2, D1, Tree).

%   The data tree as justify/4 gives it: steps as their patterns with the
%   values bound.
printed(M, detection(E, I, Rule, Why0), justification(E, I, Rule, Why)) :- !,
    printed(M, Why0, Why).
printed(M, step(Id, Vs, I, Cs0), step(P, I, Cs)) :- !,
    bound_pattern(M, Id, Vs, P),
    maplist(printed(M), Cs0, Cs).
printed(M, alarm(W0), alarm(W)) :- !,
    printed(M, W0, W).
printed(_, T, T).

%   The root step occurred over the detection's own interval.
why_tree(M, node(Id, Vs), T1, T2, D, Tree) :-
    node_tree(M, Id, Vs, T1, T2, D, Tree).
why_tree(M, alarm(node(Id, Vs, S, E)), _, _, D, alarm(Tree)) :-
    node_tree(M, Id, Vs, S, E, D, Tree).

%   Trees deeper than this are cut (a rule that derives what it consumes).
max_depth(200).

node_tree(_, Id, _, T1, T2, D, unknown(Id, [T1, T2])) :-
    max_depth(Max), D > Max, !.
node_tree(M, Id, Vs, T1, T2, D, Tree) :-
    (   step_record(M, Id, Vs, T1, T2, Children)
    ->  (   Children = [event(E, S, En)]
        ->  event_tree(M, E, S, En, D, Tree)
        ;   D1 is D + 1,
            maplist(child_tree(M, D1), Children, Subs),
            Tree = step(Id, Vs, [T1, T2], Subs)
        )
    ;   Tree = unknown(Id, [T1, T2])
    ).

child_tree(M, D, c(Id, Vs, S, E), T) :-
    node_tree(M, Id, Vs, S, E, D, T).
child_tree(M, D, event(E, S, En), T) :-
    event_tree(M, E, S, En, D, T).

%   The record of an occurrence of step Id: the one with exactly these
%   values (a variant: an optional step records its mandatory side alone
%   with the optional variables unbound, which would unify with the
%   combination's values too), else one they unify with.
step_record(M, Id, Vs, T1, T2, Children) :-
    (   clause(M:ep_just(Id, Vs0, T1, T2, Children0), true),
        Vs0 =@= Vs
    ->  Children = Children0
    ;   clause(M:ep_just(Id, Vs, T1, T2, Children), true)
    ->  true
    ).

%   An event entering a rule: pushed in, or derived by another rule (its
%   detection, a variant first as for steps).
event_tree(M, E, S, En, D, T) :-
    (   (   clause(M:ep_just_rule(E0, S, En, Key, Why), true), E0 =@= E
        ->  true
        ;   clause(M:ep_just_rule(E, S, En, Key, Why), true)
        )
    ->  justification(M, E, S, En, Key, Why, D, T)
    ;   T = received(E, [S, En])
    ).

%   The step's pattern with the bindings of this occurrence.
bound_pattern(M, Id, Vs, P) :-
    (   node_pattern(M, Id, P0)
    ->  copy_term(P0, P1),
        bind_numbered(P1, Vs, P)
    ;   P = step(Id)
    ).

bind_numbered(T, Vs, B) :-
    (   T = '$VAR'(N), integer(N)
    ->  (   nth0(N, Vs, B0) -> B = B0 ; B = _ )
    ;   compound(T)
    ->  T =.. [F|As],
        bind_list(As, Vs, Bs),
        B =.. [F|Bs]
    ;   B = T
    ).

bind_list([], _, []).
bind_list([A|As], Vs, [B|Bs]) :-
    bind_numbered(A, Vs, B),
    bind_list(As, Vs, Bs).

rule_text(M, Key, Text) :-
    (   engine_rule_key(M, Key, R)
    ->  term_text(R, Text)
    ;   Text = "(a rule deleted since)"
    ).

term_text(T, Text) :-
    copy_term(T, T1),
    numbervars(T1, 0, _, [singletons(true)]),
    format(string(Text), '~W', [T1, [quoted(true), numbervars(true), portray(true),
                                     max_depth(12), module(epsparql_core), spacing(next_argument)]]).

%!  why_not(+Module, +Event, -Explanation) is det.
%
%   For an event with no recorded detection: the rules that could derive
%   it, each with the number of partial matches its steps hold now,
%   `not_detected(Event, [rule(Text, PartialMatches), ...])`.
why_not(M, E, not_detected(E, Rules)) :-
    findall(rule(Text, N),
            ( engine_rule_key(M, Key, R),
              rule_head(R, H),
              \+ H \= E,
              term_text(R, Text),
              rule_goals(M, Key, N) ),
            Rules).

rule_goals(M, Key, N) :-
    (   ep_rule_root(M, Key, Root, _)
    ->  reachable_nodes(M, [Root], Nodes),
        aggregate_all(sum(C),
                      ( member(Id, Nodes),
                        engine_store(M, S/A, _, Id),
                        functor(G, S, A),
                        predicate_property(M:G, number_of_clauses(C)) ),
                      N)
    ;   N = 0
    ).

%!  write_tree(+Justification) is det.
%
%   Print a justification (or why_not/3's explanation), one line per
%   event or step, indented by depth.
write_tree(J) :-
    write_tree(J, 0).

write_tree(justification(E, I, Rule, Why), D) :- !,
    indent(D), format('~W @ ~w  by ~w~n', [E, [quoted(true), max_depth(10)], I, Rule]),
    D1 is D + 1,
    write_tree(Why, D1).
write_tree(step(P, I, Subs), D) :- !,
    indent(D), format('~W @ ~w~n', [P, [quoted(true), max_depth(10), portray(true)], I]),
    D1 is D + 1,
    forall(member(S, Subs), write_tree(S, D1)).
write_tree(received(E, I), D) :- !,
    indent(D), format('~W @ ~w  (received)~n', [E, [quoted(true), max_depth(10)], I]).
write_tree(alarm(T), D) :- !,
    indent(D), format('alarm set when this occurred:~n'),
    D1 is D + 1,
    write_tree(T, D1).
write_tree(unknown(Id, I), D) :- !,
    indent(D), format('step n~w @ ~w  (not recorded: added without justify)~n', [Id, I]).
write_tree(not_detected(E, Rules), D) :- !,
    indent(D), format('~W was not detected.~n', [E, [quoted(true), max_depth(10)]]),
    (   Rules == []
    ->  indent(D), format('No rule derives it.~n')
    ;   forall(member(rule(Text, N), Rules),
               ( indent(D), format('  rule ~w: ~d partial match(es) waiting~n', [Text, N]) ))
    ).
write_tree(T, D) :-
    indent(D), print(T), nl.

indent(D) :-
    N is 2 * D,
    format('~t~*|', [N]).
