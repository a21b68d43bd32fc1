/*  stream_paths: SPARQL property paths over windows and background graphs.

    A triple pattern of a windowed query whose predicate is a property
    path (epsparql/rules/window_compile.py) reads the union of its
    sources: the windows it is written over (their contents at the
    current evaluation, with the RDFS entailment stream_window:win_match/8
    gives) and background graphs (sparql_background:bg_triple/5).  The
    path is evaluated over that merged graph, with the semantics
    sparql_background:bg_path/5 has for the background alone: a sequence
    joins its steps, an alternative and the transitive closures are sets,
    and the closures are computed breadth first from the bound end, each
    node once (cycles are fine).
*/
:- module(stream_paths,
          [ sw_path/5              % +Module, +Sources, +Path, ?S, ?O
          ]).
:- use_module(library(lists)).
:- use_module(sparql_background).
:- use_module(stream_window, [win_match/8]).

%!  sw_path(+Module, +Sources, +Path, ?S, ?O) is nondet.
%
%   Sources: a list of win(Store, Hi, Reasoning, G) (G the stream a
%   STREAM ?g window binds, or a fresh variable) and bg(Graph).  Path: an
%   IRI, seq(A, B), alt(A, B), inv(A), star(A), plus(A), opt(A).
sw_path(M, Srcs, P, S, O) :-
    atom(P), !,
    edge(M, Srcs, P, S, O).
sw_path(M, Srcs, seq(A, B), S, O) :-
    (   nonvar(S) ; var(O) ), !,
    sw_path(M, Srcs, A, S, X),
    sw_path(M, Srcs, B, X, O).
sw_path(M, Srcs, seq(A, B), S, O) :- !,
    sw_path(M, Srcs, B, X, O),
    sw_path(M, Srcs, A, S, X).
sw_path(M, Srcs, alt(A, B), S, O) :- !,
    distinct(S-O, ( sw_path(M, Srcs, A, S, O) ; sw_path(M, Srcs, B, S, O) )).
sw_path(M, Srcs, inv(A), S, O) :- !,
    sw_path(M, Srcs, A, O, S).
sw_path(M, Srcs, opt(A), S, O) :- !,
    distinct(S-O, ( S = O, ( nonvar(S) -> true ; node(M, Srcs, S) )
                  ; sw_path(M, Srcs, A, S, O) )).
sw_path(M, Srcs, star(A), S, O) :- !,
    closure(M, Srcs, A, S, O, true).
sw_path(M, Srcs, plus(A), S, O) :- !,
    closure(M, Srcs, A, S, O, false).
sw_path(_, _, P, _, _) :-
    domain_error(property_path, P).

closure(M, Srcs, A, S, O, Reflexive) :-
    (   nonvar(S) -> reach(M, Srcs, A, S, O, Reflexive)
    ;   nonvar(O) -> reach(M, Srcs, inv(A), O, S, Reflexive)
    ;   distinct(S-O, ( node(M, Srcs, S), reach(M, Srcs, A, S, O, Reflexive) ))
    ).

%   One step over the merged graph (a set: an edge in two sources once).
edge(M, [Src], P, S, O) :- !,
    edge1(M, Src, P, S, O).
edge(M, Srcs, P, S, O) :-
    distinct(S-O, ( member(Src, Srcs), edge1(M, Src, P, S, O) )).

edge1(M, win(Store, Hi, R, G), P, S, O) :-
    win_match(M, Store, Hi, R, G, S, P, O).
edge1(M, bg(Graph), P, S, O) :-
    bg_triple(M, Graph, S, P, O).

%   reach(+M, +Srcs, +Path, +From, ?To, +Reflexive): the nodes reachable
%   from From by one or more steps of Path (zero or more when Reflexive).
reach(M, Srcs, A, From, To, Reflexive) :-
    findall(Y, sw_path(M, Srcs, A, From, Y), Ys0),
    sort(Ys0, Ys),
    reach_(Ys, M, Srcs, A, Ys, Reached),
    (   Reflexive == true -> Nodes = [From|Reached] ; Nodes = Reached ),
    sort(Nodes, Set),
    (   nonvar(To) -> memberchk(To, Set) ; member(To, Set) ).

reach_([], _, _, _, Seen, Seen).
reach_([X|Queue], M, Srcs, A, Seen, All) :-
    findall(Y, ( sw_path(M, Srcs, A, X, Y), \+ memberchk(Y, Seen) ), Ys0),
    sort(Ys0, Ys),
    append(Seen, Ys, Seen1),
    append(Queue, Ys, Queue1),
    reach_(Queue1, M, Srcs, A, Seen1, All).

%   The nodes of the merged graph (subjects and objects).
node(M, Srcs, N) :-
    distinct(N, ( member(Src, Srcs), edge1(M, Src, _, S, O), ( N = S ; N = O ) )).
