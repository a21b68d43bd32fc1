/*  Helpers of compiled CONSTRUCT rules (Q-closure).

    A CONSTRUCT template's blank nodes are fresh for every answer; a
    template triple is only added to the stream when all its positions are
    bound and form a valid RDF triple (an IRI or blank node as subject, an
    IRI as predicate), as section 4.2 of the specification requires.
    Terms use the encoding of sparql_eval.pl: IRIs are atoms, blank nodes
    b(Id).
*/
:- module(sparql_construct,
          [ construct_fresh_bnode/1,    % -BNode
            construct_valid_triple/3    % +S, +P, +O
          ]).


%!  construct_fresh_bnode(-BNode) is det.
%
%   A blank node never handed out before in this process:
%   b('epsparql<random>_<N>').
construct_fresh_bnode(b(Id)) :-
    flag(ep_construct_bnode, N, N + 1),
    bnode_prefix(Prefix),
    atom_concat(Prefix, N, Id).

%   Labels of constructed blank nodes carry a random per-process prefix, so
%   they do not clash with the labels of blank nodes in the input.
:- dynamic bnode_prefix/1.
:- initialization(( R is random(1 << 40), format(atom(P), 'epsparql~36r_', [R]),
                    retractall(bnode_prefix(_)), assertz(bnode_prefix(P)) )).

%!  construct_valid_triple(+S, +P, +O) is semidet.
%
%   True if S, P, O are bound and make an RDF triple.
construct_valid_triple(S, P, O) :-
    nonvar(S), nonvar(P), nonvar(O),
    ( atom(S) -> true ; S = b(_) ),
    atom(P).
