/*  The binarised rule graph of each engine.

    The compiler (core_compile.pl) splits every rule into steps, one node
    per sub-pattern, and records here what it made:

        ep_node(M, Key, Id)         node Id; Key = Pattern-Window-Policy-Epoch,
                                    variables numbered (node sharing looks
                                    Key up)
        ep_edge(M, Parent, Child)   Parent a node id, or rule(Head) for the
                                    root of a rule's body
        ep_rule_root(M, RuleKey, RootId, Head)
        ep_owner(M, Owner, ClauseRef)   who made a clause: node(Id) or
                                    key(RuleKey) (the clause emitting a
                                    rule's head)
        ep_origin(M, NodeId, RuleKey, Origin)   what a step implements
        ep_alias(M, WithinId, ChildId)  a within step compiled as its child
        ep_node_counter(M, Next)    the next node id

    The rest of the core reads them: the executor and the errors (which
    rules a step belongs to, which step a clause runs), the
    justification (the steps of a rule), the snapshots (the rule layout's
    fingerprint), the bridge (the graph for explain tools).  The facts
    are exported to them as dynamic predicates; the queries below are
    what is asked of the graph as a whole.
*/
:- module(core_graph,
          [ ep_node/3,                  % ?Module, ?Key, ?Id
            ep_edge/3,                  % ?Module, ?Parent, ?ChildId
            ep_node_counter/2,          % ?Module, ?Next
            ep_owner/3,                 % ?Module, ?Owner, ?ClauseRef
            ep_rule_root/4,             % ?Module, ?RuleKey, ?RootId, ?Head
            ep_origin/4,                % ?Module, ?NodeId, ?RuleKey, ?Origin
            ep_alias/3,                 % ?Module, ?WithinId, ?ChildId
            node_count/2,               % +Module, -Count
            forget_nodes/1,             % +Module
            rule_graph/2,               % +Module, -Graph
            node_rules/3,               % +Module, +NodeId, -Heads
            node_pattern/3,             % +Module, +NodeId, -Pattern
            node_origins/3,             % +Module, +NodeId, -Origins
            reachable_nodes/3           % +Module, +Roots, -NodeIds
          ]).
:- use_module(library(lists)).

:- dynamic
    ep_node/3,          % ep_node(Module, Key, Id)
    ep_edge/3,          % ep_edge(Module, Parent, ChildId): Parent a node id or rule(Head)
    ep_node_counter/2,  % ep_node_counter(Module, Next)
    ep_owner/3,         % ep_owner(Module, node(Id) or key(RuleKey), ClauseRef): who made a clause
    ep_rule_root/4,     % ep_rule_root(Module, RuleKey, RootId, Head)
    ep_origin/4,        % ep_origin(Module, NodeId, RuleKey, Origin): what the step implements
    ep_alias/3.         % ep_alias(Module, WithinId, ChildId): a within step compiled as its child

%!  ep_node(?Module, ?Key, ?Id) is nondet.
%!  ep_edge(?Module, ?Parent, ?ChildId) is nondet.
%!  ep_node_counter(?Module, ?Next) is semidet.
%!  ep_owner(?Module, ?Owner, ?ClauseRef) is nondet.
%!  ep_rule_root(?Module, ?RuleKey, ?RootId, ?Head) is nondet.
%!  ep_origin(?Module, ?NodeId, ?RuleKey, ?Origin) is nondet.
%!  ep_alias(?Module, ?WithinId, ?ChildId) is nondet.
%
%   The graph's facts (see the header), dynamic: written by the compiler
%   only, read by the rest of the core.

%!  node_count(+Module, -Count) is det.
node_count(M, N) :-
    aggregate_all(count, ep_node(M, _, _), N).

%!  forget_nodes(+Module) is det.
%
%   Drop the node table of Module (on engine reset).
forget_nodes(M) :-
    retractall(ep_alias(M, _, _)),
    retractall(ep_origin(M, _, _, _)),
    retractall(ep_node(M, _, _)),
    retractall(ep_edge(M, _, _)),
    retractall(ep_node_counter(M, _)),
    retractall(ep_owner(M, _, _)),
    retractall(ep_rule_root(M, _, _, _)).

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

%!  node_rules(+Module, +NodeId, -Heads:list) is det.
%
%   The heads of the rules whose pattern contains the step NodeId (in
%   the order found walking up the graph).
node_rules(M, Id, Heads) :-
    rule_ancestors(M, [Id], [], [], Heads).

rule_ancestors(_, [], _, Hs, Hs).
rule_ancestors(M, [Id|Ids], Seen, Hs0, Hs) :-
    (   memberchk(Id, Seen)
    ->  rule_ancestors(M, Ids, Seen, Hs0, Hs)
    ;   findall(H, ep_edge(M, rule(H), Id), New),
        append(Hs0, New, Hs1),
        findall(P, ( ep_edge(M, P, Id), integer(P) ), Ps),
        append(Ids, Ps, Next),
        rule_ancestors(M, Next, [Id|Seen], Hs1, Hs)
    ).

%!  node_pattern(+Module, +NodeId, -Pattern) is semidet.
%
%   The pattern of step NodeId (variables numbered, '$VAR'(N)).
node_pattern(M, Id, P) :-
    ep_node(M, Key, Id),
    Key = P-_-_-_, !.

%!  node_origins(+Module, +NodeId, -Origins:list) is det.
%
%   What step NodeId implements, as the rules that made it say
%   (core_compile.pl, '$origin' annotations): their origins, in the order
%   they were recorded, without repeats.
node_origins(M, Id, Origins) :-
    findall(O, ep_origin(M, Id, _, O), Os0),
    list_to_set(Os0, Origins).

%!  reachable_nodes(+Module, +Roots:list, -NodeIds:list) is det.
%
%   The steps reachable from Roots (node ids) going down the edges,
%   Roots included, each once, in no particular order.
reachable_nodes(M, Roots, Nodes) :-
    reachable(M, Roots, [], Nodes).

reachable(_, [], Seen, Seen).
reachable(M, [Id|Ids], Seen, Live) :-
    (   memberchk(Id, Seen)
    ->  reachable(M, Ids, Seen, Live)
    ;   findall(C, ep_edge(M, Id, C), Cs),
        append(Cs, Ids, Next),
        reachable(M, Next, [Id|Seen], Live)
    ).
