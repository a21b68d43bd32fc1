/*  Long texts by reference (epsparql/core/long_text.py).

    A batch of stream triples may hand a long lexical form (a large
    literal) over as a Python LongText object, which janus passes as a
    PyObject blob: the batch's term is made with the string py_str/2 makes
    of it, and the string and its blob are kept side by side while the
    batch is processed (with_long_refs/2).  When an answer's term holds a
    string equal to one of them, the term dictionary sends the blob in its
    place (bridge_columns.pl): Python takes the text of the object it
    made, instead of janus writing the Prolog string out as UTF-8 and
    reading it into a new Python text.  A string without an entry (one
    Prolog built, or one of an earlier call) crosses as text.

    The entries of a batch, r(Hash, String, Blob) each, Hash the
    term_hash/2 of String, are kept as an AVL tree by Hash (a batch may
    hold thousands of long texts, its answers ask for them in any order)
    in a backtrackable global variable (b_setval/2: no copy of the
    strings, and gone with the call's bindings if it fails or raises), in
    front of those of an enclosing call; strings are compared by content
    (==), so two different texts are never confused, whatever their
    hashes.
*/
:- module(bridge_long_text,
          [ long_text_string/3,        % +Blob, -String, -Entry
            with_long_refs/2,          % +Entries, :Goal
            long_text_blob/2           % +String, -Blob
          ]).
:- use_module(library(assoc), [list_to_assoc/2, get_assoc/3]).
:- use_module(library(pairs), [group_pairs_by_key/2]).
:- use_module(library(apply), [maplist/3]).

%!  long_text_string(+Blob, -String, -Entry) is det.
%
%   String is the text of the Python object Blob (a LongText), as a
%   Prolog string; Entry is its entry for with_long_refs/2.
long_text_string(Blob, String, r(Hash, String, Blob)) :-
    janus:py_str(Blob, String),
    term_hash(String, Hash).

%!  with_long_refs(+Entries, :Goal) is semidet.
%
%   Run Goal with Entries (from long_text_string/3) known to
%   long_text_blob/2, as well as those of an enclosing call; afterwards
%   (or when Goal fails or raises) only those of the enclosing call.
:- meta_predicate with_long_refs(+, 0).
with_long_refs([], Goal) :- !,
    call(Goal).
with_long_refs(Entries, Goal) :-
    (   nb_current('$epsparql_long_refs', Old) -> true ; Old = [] ),
    maplist(entry_pair, Entries, Pairs0),
    keysort(Pairs0, Pairs),
    group_pairs_by_key(Pairs, Groups),
    list_to_assoc(Groups, Index),
    b_setval('$epsparql_long_refs', [Index|Old]),
    call(Goal),
    b_setval('$epsparql_long_refs', Old).

entry_pair(r(Hash, String, Blob), Hash-(String-Blob)).

%!  long_text_blob(+String, -Blob) is semidet.
%
%   Blob is the LongText the current batch made String of (a string with
%   the same text); fails when there is none.
long_text_blob(S, Blob) :-
    nb_current('$epsparql_long_refs', Indexes),
    Indexes \== [],
    term_hash(S, H),
    member(Index, Indexes),
    get_assoc(H, Index, Candidates),
    member(S0-B, Candidates),
    S0 == S,
    !,
    Blob = B.
