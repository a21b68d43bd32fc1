/*  Background knowledge and RDFS reasoning for an engine.

    Background triples live in the engine's module as ep_bg(P, S, O, G)
    (predicate first: patterns nearly always name the predicate; SWI's JIT
    indexes the other arguments as needed), terms encoded as in
    sparql_eval.pl (IRIs are atoms).  They hold at all times.

    RDFS entailment is computed on the fly, when a question is asked, and
    remembered (hand-made tabling, invalidated whenever the background
    changes): the ancestors of a class (rdfs:subClassOf*) and of a property
    (rdfs:subPropertyOf*), and the classes a property's domain and range
    entail.  Cycles in the hierarchies are fine (breadth-first with a
    visited set).

    Reasoning modes per engine: rdfs (default), none.  (owlrl is done on
    the Python side by materialising the background closure first; the
    stream is then reasoned over like rdfs.)
*/
:- module(sparql_background,
          [ bg_add/2,               % +Module, +Triples
            bg_remove/2,            % +Module, +Triples
            bg_clear/1,             % +Module
            bg_count/2,             % +Module, -Count
            bg_set_mode/2,          % +Module, +Mode
            bg_triple/5,            % +Module, ?Graph, ?S, ?P, ?O
            bg_path/5,              % +Module, ?Graph, +Path, ?S, ?O
            sub_class/3,            % +Module, +C, ?D
            sub_property/3,         % +Module, +P, ?Q
            strict_sub_property/3,  % +Module, +P, +Q
            entailed_type/4,        % +Module, +P, -Role, -Class
            stream_property/3,      % +Module, +P, +Q
            bg_flags/2              % +Module, -flags(SubProps, DomRange)
          ]).
:- use_module(library(lists)).
:- set_prolog_flag(optimise, true).

:- dynamic
    bg_mode/2,          % bg_mode(Module, Mode)
    bg_flags/2.         % bg_flags(Module, flags(SubProps, DomRange)): schema present?

%!  bg_flags(+Module, -Flags) is semidet.
%
%   Flags is flags(SubProps, DomRange): whether the background of the
%   engine has rdfs:subPropertyOf triples, and rdfs:domain or rdfs:range
%   ones (the entailments they give are skipped when it has none).  Set
%   whenever the background changes (bg_add/2, bg_set_mode/2, ...).

rdf_type('http://www.w3.org/1999/02/22-rdf-syntax-ns#type').
sub_class_of('http://www.w3.org/2000/01/rdf-schema#subClassOf').
sub_property_of('http://www.w3.org/2000/01/rdf-schema#subPropertyOf').
rdfs_domain('http://www.w3.org/2000/01/rdf-schema#domain').
rdfs_range('http://www.w3.org/2000/01/rdf-schema#range').

local(ep_bg/4).         % the background triples
local(ep_anc_c/2).      % ep_anc_c(Class, Ancestors): remembered closure
local(ep_anc_p/2).      % ep_anc_p(Property, Ancestors)
local(ep_ent/2).        % ep_ent(Property, Entailed): domain/range classes

ensure_local(M) :-
    forall(local(N/A), ( functor(H, N, A),
                         ( predicate_property(M:H, dynamic) -> true ; dynamic(M:N/A) ) )).

%!  bg_set_mode(+Module, +Mode) is det.
%
%   Mode is rdfs or none.
bg_set_mode(M, Mode) :-
    must_be(oneof([rdfs, none]), Mode),
    ensure_local(M),
    retractall(bg_mode(M, _)),
    assertz(bg_mode(M, Mode)),
    invalidate(M).

mode(M, Mode) :-
    (   bg_mode(M, Mode0) -> Mode = Mode0 ; Mode = rdfs ).

%!  bg_add(+Module, +Triples:list) is det.
%
%   Add t(S, P, O, G) triples (encoded terms, G the graph IRI atom).
bg_add(M, Triples) :-
    ensure_local(M),
    forall(member(t(S, P, O, G), Triples),
           (   M:ep_bg(P, S, O, G) -> true ; assertz(M:ep_bg(P, S, O, G)) )),
    invalidate(M).

%!  bg_remove(+Module, +Triples:list) is det.
%
%   Remove t(S, P, O, G) triples; an unbound G removes from every graph.
bg_remove(M, Triples) :-
    ensure_local(M),
    forall(member(t(S, P, O, G), Triples), retractall(M:ep_bg(P, S, O, G))),
    invalidate(M).

%!  bg_clear(+Module) is det.
bg_clear(M) :-
    ensure_local(M),
    retractall(M:ep_bg(_, _, _, _)),
    invalidate(M).

%!  bg_count(+Module, -Count) is det.
bg_count(M, N) :-
    ensure_local(M),
    (   predicate_property(M:ep_bg(_, _, _, _), number_of_clauses(N0)) -> N = N0 ; N = 0 ).

%   Forget every remembered inference: the background changed.
invalidate(M) :-
    retractall(M:ep_anc_c(_, _)),
    retractall(M:ep_anc_p(_, _)),
    retractall(M:ep_ent(_, _)),
    sub_property_of(SP), rdfs_domain(D), rdfs_range(R),
    (   M:ep_bg(SP, _, _, _) -> HasSP = true ; HasSP = false ),
    (   ( M:ep_bg(D, _, _, _) ; M:ep_bg(R, _, _, _) ) -> HasDR = true ; HasDR = false ),
    retractall(bg_flags(M, _)),
    assertz(bg_flags(M, flags(HasSP, HasDR))).

		 /*******************************
		 *        HIERARCHIES           *
		 *******************************/

%!  sub_class(+Module, +C, ?D) is nondet.
%
%   C rdfs:subClassOf* D (reflexive) under the background.
sub_class(M, C, D) :-
    (   mode(M, none)
    ->  D = C
    ;   class_ancestors(M, C, As),
        (   nonvar(D) -> memberchk(D, As) ; member(D, As) )
    ).

class_ancestors(M, C, As) :-
    (   M:ep_anc_c(C, As0)
    ->  As = As0
    ;   sub_class_of(SC),
        closure(M, SC, C, As),
        assertz(M:ep_anc_c(C, As))
    ).

%!  sub_property(+Module, +P, ?Q) is nondet.
%
%   P rdfs:subPropertyOf* Q (reflexive).
sub_property(M, P, Q) :-
    (   mode(M, none)
    ->  Q = P
    ;   property_ancestors(M, P, As),
        (   nonvar(Q) -> memberchk(Q, As) ; member(Q, As) )
    ).

%!  stream_property(+Module, +P, +Q) is semidet.
%
%   A stream triple with predicate P matches a pattern asking for Q:
%   P == Q, or P is a sub-property of Q.
stream_property(M, P, Q) :-
    (   P == Q -> true ; strict_sub_property(M, P, Q) ).

%!  strict_sub_property(+Module, +P, +Q) is semidet.
%
%   P is a sub-property of Q other than Q itself.  Cheap when the
%   background states no sub-properties at all (the common case).
strict_sub_property(M, P, Q) :-
    bg_flags(M, flags(true, _)),
    P \== Q,
    \+ mode(M, none),
    property_ancestors(M, P, As),
    memberchk(Q, As).

property_ancestors(M, P, As) :-
    (   M:ep_anc_p(P, As0)
    ->  As = As0
    ;   sub_property_of(SP),
        closure(M, SP, P, As),
        assertz(M:ep_anc_p(P, As))
    ).

%   closure(+M, +Rel, +X, -Reachable): X and everything reachable from X
%   along Rel in the background, breadth first, cycles tolerated.
closure(M, Rel, X, All) :-
    closure_([X], M, Rel, [X], All0),
    reverse(All0, All).

closure_([], _, _, Seen, Seen).
closure_([X|Queue], M, Rel, Seen, All) :-
    findall(Y, ( M:ep_bg(Rel, X, Y, _), atom(Y), \+ memberchk(Y, Seen) ), Ys0),
    sort(Ys0, Ys),
    append(Ys, Seen, Seen1),
    append(Queue, Ys, Queue1),
    closure_(Queue1, M, Rel, Seen1, All).

%!  entailed_type(+Module, +P, -Role, -Class) is nondet.
%
%   A triple with predicate P makes its subject (Role = subject) or
%   object (Role = object) an instance of Class, by the rdfs:domain and
%   rdfs:range of P or of its super-properties, and the super-classes of
%   those.  Fails at once when the background has no domain or range.
entailed_type(M, P, Role, Class) :-
    bg_flags(M, flags(_, true)),
    \+ mode(M, none),
    (   M:ep_ent(P, Ent)
    ->  true
    ;   rdfs_domain(D), rdfs_range(R),
        property_ancestors(M, P, Ps),
        findall(subject-C, ( member(Q, Ps), M:ep_bg(D, Q, C0, _), sub_class(M, C0, C) ), Ds),
        findall(object-C, ( member(Q, Ps), M:ep_bg(R, Q, C0, _), sub_class(M, C0, C) ), Rs),
        append(Ds, Rs, Ent0),
        sort(Ent0, Ent),
        assertz(M:ep_ent(P, Ent))
    ),
    member(Role-Class, Ent).

		 /*******************************
		 *       BACKGROUND MATCHING    *
		 *******************************/

%!  bg_triple(+Module, ?Graph, ?S, ?P, ?O) is nondet.
%
%   A triple of background graph Graph, or entailed from it: sub-property
%   and sub-class closure, domain and range.  Each entailed triple is
%   given once.
bg_triple(M, G, S, P, O) :-
    (   mode(M, none)
    ->  M:ep_bg(P, S, O, G)
    ;   rdf_type(Type),
        (   P == Type
        ->  type_triple(M, G, S, O)
        ;   nonvar(P), \+ bg_flags(M, flags(true, _))
        ->  M:ep_bg(P, S, O, G)                 % no sub-properties: a plain lookup
        ;   nonvar(P)
        ->  distinct(S-O-G, prop_triple(M, G, S, P, O))
        ;   distinct(S-P-O-G, ( ( P = Type, type_triple(M, G, S, O) )
                              ; ( prop_triple(M, G, S, P, O), P \== Type ) ))
        )
    ).

prop_triple(M, G, S, Q, O) :-
    (   nonvar(Q), \+ bg_flags(M, flags(true, _))
    ->  M:ep_bg(Q, S, O, G)
    ;   M:ep_bg(P, S, O, G),
        sub_property(M, P, Q)
    ).

type_triple(M, G, S, C) :-
    rdf_type(Type),
    distinct(S-C-G,
             (   M:ep_bg(Type, S, C0, G), sub_class(M, C0, C)
             ;   bg_flags(M, flags(_, true)),
                 M:ep_bg(P, X, Y, G),
                 P \== Type,
                 entailed_type(M, P, Role, C),
                 ( Role == subject -> S = X ; S = Y )
             )).

%!  bg_path(+Module, ?Graph, +Path, ?S, ?O) is nondet.
%
%   SPARQL property paths over the background: an IRI, seq(A, B),
%   alt(A, B), inv(A), star(A), plus(A), opt(A).  Transitive paths are
%   evaluated breadth first from the bound end, each node once.
bg_path(M, G, P, S, O) :-
    atom(P), !,
    bg_triple(M, G, S, P, O).
bg_path(M, G, seq(A, B), S, O) :-
    (   nonvar(S) ; var(O) ), !,
    bg_path(M, G, A, S, X),
    bg_path(M, G, B, X, O).
bg_path(M, G, seq(A, B), S, O) :- !,
    bg_path(M, G, B, X, O),
    bg_path(M, G, A, S, X).
bg_path(M, G, alt(A, B), S, O) :- !,
    distinct(S-O, ( bg_path(M, G, A, S, O) ; bg_path(M, G, B, S, O) )).
bg_path(M, G, inv(A), S, O) :- !,
    bg_path(M, G, A, O, S).
bg_path(M, G, opt(A), S, O) :- !,
    distinct(S-O, ( S = O, ( nonvar(S) -> true ; path_node(M, G, S) )
                  ; bg_path(M, G, A, S, O) )).
bg_path(M, G, star(A), S, O) :- !,
    (   nonvar(S) -> reach(M, G, A, S, O, true)
    ;   nonvar(O) -> reach(M, G, inv(A), O, S, true)
    ;   distinct(S-O, ( path_node(M, G, S), reach(M, G, A, S, O, true) ))
    ).
bg_path(M, G, plus(A), S, O) :- !,
    (   nonvar(S) -> reach(M, G, A, S, O, false)
    ;   nonvar(O) -> reach(M, G, inv(A), O, S, false)
    ;   distinct(S-O, ( path_node(M, G, S), reach(M, G, A, S, O, false) ))
    ).
bg_path(_, _, P, _, _) :-
    domain_error(property_path, P).

%   reach(+M, +G, +Path, +From, ?To, +Reflexive): nodes reachable from
%   From by one or more steps of Path (zero or more when Reflexive).
reach(M, G, A, From, To, Reflexive) :-
    findall(Y, bg_path(M, G, A, From, Y), Ys0),
    sort(Ys0, Ys),
    reach_(Ys, M, G, A, Ys, Reached),
    (   Reflexive == true -> Nodes = [From|Reached] ; Nodes = Reached ),
    sort(Nodes, Set),
    (   nonvar(To) -> memberchk(To, Set) ; member(To, Set) ).

reach_([], _, _, _, Seen, Seen).
reach_([X|Queue], M, G, A, Seen, All) :-
    findall(Y, ( bg_path(M, G, A, X, Y), \+ memberchk(Y, Seen) ), Ys0),
    sort(Ys0, Ys),
    append(Seen, Ys, Seen1),
    append(Queue, Ys, Queue1),
    reach_(Queue1, M, G, A, Seen1, All).

path_node(M, G, N) :-
    distinct(N, ( M:ep_bg(_, N, _, G) ; M:ep_bg(_, _, N, G) )).
