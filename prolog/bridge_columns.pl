/*  Detections to Python in bulk: flat rows, dictionary-encoded terms.

    While a bridge call runs the engine, each detection is put in a buffer
    of MaxRows slots (one nb_setarg/3); full buffers are encoded and
    handed to Python as they fill (janus:py_call/1, there when Python hosts
    this Prolog), so a batch never holds all its answers in Prolog, neither
    as a string nor as a list.

    A buffer is sent as one chunk per run of detections of the same head
    Name/Arity:

        take(Generation, NewTerms, Name, Arity, Masks, Values)

    Values holds Arity + 2 numbers per detection, in detection order:

        V1, ..., VArity, T1, T2

    Vi is the argument itself when it is an integer or a float, else the
    integer id of the argument in the engine's term dictionary, and bit
    i-1 of the detection's mask is then set.  Masks is that mask when it is
    the same for every detection of the chunk (the usual case: Python then
    slices whole columns out of Values), else the list of the masks.

    The dictionary (a trie per engine) gives each distinct non-number term
    an id on its first use; the term itself crosses once, in the NewTerms
    of the chunk that first uses it, as Kind-Payload: atom-Text,
    string-Text, flat-Tuple (a compound of atoms, strings and numbers, as
    the Python tuple (Name, Kinds, Arg...), Kinds a letter per argument:
    a atom, s string, n number), or json-Text (anything else, in the
    bridge's JSON encoding, variables as null).  It is bounded: past MaxTerms entries
    it starts afresh under a new generation number, which Python sees in
    the next chunk; and after a call that raised (Python may have missed a
    chunk and its new terms).
*/
:- module(bridge_columns,
          [ with_columns/3,            % +Engine, +Receiver, :Goal
            columns_sink/3,            % +Event, +T1, +T2
            columns_forget/1,          % +Engine
            columns_drop/1,            % +Engine
            columns_set_limits/2       % +MaxRows, +MaxTerms
          ]).
:- use_module(bridge_json, [json_term//1]).

%   engine_terms(Engine, Trie, NextId, Generation): the term dictionary of
%   an engine (shared by the threads that call it; calls are serialised).
:- dynamic engine_terms/4.

%   limits(MaxRows, MaxTerms): rows per buffer, entries per dictionary.
:- dynamic limits/2.
limits(4096, 1048576).

%!  columns_set_limits(+MaxRows, +MaxTerms) is det.
%
%   Set the buffer size (detections per chunk, at most) and the bound of
%   the term dictionaries (for tests and tuning; the defaults are 4096 and
%   1048576).  The buffer of a thread is made anew at its next call.
columns_set_limits(MaxRows, MaxTerms) :-
    must_be(positive_integer, MaxRows),
    must_be(positive_integer, MaxTerms),
    retractall(limits(_, _)),
    assertz(limits(MaxRows, MaxTerms)).

%!  with_columns(+Engine, +Receiver, :Goal) is semidet.
%
%   Run Goal with the detections sent to columns_sink/3 passed to
%   Receiver (a Python object with a method take/6) in chunks; the last
%   ones are sent when Goal succeeds.  If Goal raises or fails, or a chunk
%   could not be delivered, the dictionary is started afresh and the error
%   raised.
%   Re-entrant: a call made from inside Goal (a Python function called by
%   a rule that pushes into another engine) gets a buffer of its own, and
%   the outer call's state is back when it returns.
:- meta_predicate with_columns(+, +, 0).
with_columns(M, Receiver, Goal) :-
    (   nb_current('$epsparql_columns', Outer) -> true ; Outer = [] ),
    open_columns(M, Receiver, Outer),
    setup_call_cleanup(true, run_columns(M, Goal), restore_outer(Outer)).

restore_outer(Outer) :-
    nb_setval('$epsparql_columns', Outer),
    (   Outer = c(Buf, _, _, _, _, _, _, _, _)
    ->  nb_getval('$epsparql_columns', C),
        nb_linkarg(1, C, Buf)           % nb_setval copied it: point at the live one
    ;   true
    ).

run_columns(M, Goal) :-
    catch(( call(Goal) -> Ok = true ; Ok = false ), E, true),
    (   var(E), Ok == true
    ->  catch(flush_columns, E2, true),
        nb_getval('$epsparql_columns', C),
        arg(8, C, E3),
        close_columns(M),
        (   var(E2), E3 == none
        ->  true
        ;   columns_forget(M),
            (   nonvar(E2) -> throw(E2) ; throw(E3) )
        )
    ;   close_columns(M),
        columns_forget(M),
        (   nonvar(E) -> throw(E) ; fail )
    ).

%!  columns_forget(+Engine) is det.
%
%   Start Engine's term dictionary afresh: its next chunk has a new
%   generation.
columns_forget(M) :-
    (   retract(engine_terms(M, _, _, G0)) -> G is G0 + 1 ; G = 1 ),
    trie_new(Trie),
    assertz(engine_terms(M, Trie, 0, G)).

%!  columns_drop(+Engine) is det.
%
%   Forget Engine's term dictionary altogether (the engine is destroyed).
columns_drop(M) :-
    retractall(engine_terms(M, _, _, _)),
    atom_concat('$epsparql_idcache_', M, Key),
    nb_delete(Key).

%   The state of a call, in the global variable '$epsparql_columns':
%     c(Buffer, N, Receiver, Trie, Next, Generation, Engine, Error, MaxRows)
%   Buffer a term with MaxRows arguments, N of them used (each
%   r(Event, T1, T2)); Next the next free term id; Error an exception of
%   the Python side, or none.  The buffer is kept per thread across calls
%   (global variable '$epsparql_columns_buf').
open_columns(M, Receiver, Outer) :-
    limits(MaxRows, MaxT),
    (   engine_terms(M, Trie0, Next0, Gen0)
    ->  true,
        (   Next0 >= MaxT
        ->  columns_forget(M),
            engine_terms(M, Trie, Next, Gen)
        ;   Trie = Trie0, Next = Next0, Gen = Gen0
        )
    ;   columns_forget(M),
        engine_terms(M, Trie, Next, Gen)
    ),
    (   Outer \== []
    ->  functor(Buf0, rows, MaxRows),    % nested: the thread's buffer is in use
        nb_setval('$epsparql_columns_nested', Buf0),
        nb_getval('$epsparql_columns_nested', Buf)
    ;   nb_current('$epsparql_columns_buf', Buf), functor(Buf, rows, MaxRows)
    ->  true
    ;   functor(Buf0, rows, MaxRows),
        nb_setval('$epsparql_columns_buf', Buf0),
        nb_getval('$epsparql_columns_buf', Buf)
    ),
    nb_setval('$epsparql_columns', c([], 0, Receiver, Trie, Next, Gen, M, none, MaxRows)),
    nb_getval('$epsparql_columns', C),
    nb_linkarg(1, C, Buf).             % the state points at the buffer, not a copy

close_columns(M) :-
    (   nb_current('$epsparql_columns', C), C \== []
    ->  arg(5, C, Next),
        (   retract(engine_terms(M, Trie, _, Gen))
        ->  assertz(engine_terms(M, Trie, Next, Gen))
        ;   true
        )
    ;   true
    ),
    nb_setval('$epsparql_columns', []).

%!  columns_sink(+Event, +T1, +T2) is det.
%
%   The detection sink of a with_columns/3 call: keep the detection,
%   send the buffer when it is full.
columns_sink(E, T1, T2) :-
    nb_getval('$epsparql_columns', C),
    arg(2, C, N0),
    N is N0 + 1,
    arg(1, C, Buf),
    nb_setarg(N, Buf, r(E, T1, T2)),
    nb_setarg(2, C, N),
    (   arg(9, C, N) -> flush_columns ; true ).  % the buffer is full

%   Encode the buffered detections, one chunk per run of one head, and
%   send each to the receiver.
flush_columns :-
    nb_getval('$epsparql_columns', C),
    arg(2, C, N),
    (   N =:= 0
    ->  true
    ;   arg(1, C, Buf),
        send_runs(1, N, Buf, C),
        nb_setarg(2, C, 0)
    ).

send_runs(I, N, Buf, C) :-
    (   I > N
    ->  true
    ;   arg(I, Buf, r(E, _, _)),
        same_head(E, Name, Ar),
        arg(4, C, Trie),
        arg(6, C, Gen),
        arg(7, C, M),
        id_cache(M, Gen, Cache),
        b_setval('$epsparql_news', []),
        encode_run(I, N, Buf, Name, Ar, d(Trie, Cache), C, MaskList, Values, Next),
        (   MaskList = [M0|Ms], all_equal(Ms, M0) -> Masks = M0 ; Masks = MaskList ),
        b_getval('$epsparql_news', News0),
        reverse(News0, News),
        send(C, News, Name, Ar, Masks, Values),
        send_runs(Next, N, Buf, C)
    ).

all_equal([], _).
all_equal([X|Xs], M) :- X == M, all_equal(Xs, M).

%   same_head(+Event, ?Name, ?Arity): Event is Name/Arity (an atom for 0).
same_head(E, Name, Ar) :-
    (   compound(E) -> compound_name_arity(E, Name, Ar) ; E = Name, Ar = 0 ).

%   A receiver that raises (it will take no more: a cap on answers was
%   reached, its output was closed) stops the call at once: the error is
%   kept and raised as a resource error, which the core never records as
%   a rule's error but passes up, so the rest of the batch is not run for
%   detections nobody takes.
send(C, News, Name, Ar, Masks, Values) :-
    C = c(_, _, Receiver, _, _, Gen, _, Err0, _),
    (   Err0 == none
    ->  catch(janus:py_call(Receiver:take(Gen, News, Name, Ar, Masks, Values)), E,
              ( nb_setarg(8, C, E),
                throw(error(resource_error(detection_receiver), E)) ))
    ;   true                            % an earlier chunk was lost: send no more
    ).

%   encode_run(+I, +N, +Buf, +Name, +Ar, +Dict, +C, -Masks, -Values, -Next):
%   the masks and values of rows I.. of head Name/Ar, up to the first row
%   of another head (Next) or the end of the buffer (Next = N + 1).
%
%   An argument equal (==) to the same argument of the row before takes
%   that row's value without a dictionary look-up: the answers one event
%   completes come one after the other and share most of their arguments
%   (the key, the event's own terms), and a look-up in a large trie costs
%   several times the comparison.
encode_run(I, N, Buf, Name, Ar, Dict, C, Masks, Values, Next) :-
    functor(Prev, Name, Ar),            % no row before: fresh variables, equal to nothing
    encode_run(I, N, Buf, Name, Ar, Dict, C, Prev, _, Masks, Values, Next).

encode_run(I, N, Buf, Name, Ar, Dict, C, Prev, PrevVs, Masks, Values, Next) :-
    (   I =< N,
        arg(I, Buf, r(E, T1, T2)),
        same_head(E, Name, Ar)
    ->  encode_args(Ar, E, Prev, PrevVs, Dict, C, Mask, Values, [T1, T2|Values1]),
        Masks = [Mask|Masks1],
        I1 is I + 1,
        encode_run(I1, N, Buf, Name, Ar, Dict, C, E, Values, Masks1, Values1, Next)
    ;   Masks = [], Values = [], Next = I
    ).

%   encode_args(+Arity, +E, +Prev, +PrevValues, +Dict, +C, -Mask, -Values,
%   ?Tail): arities up to 4 written out with the tests inline (this runs
%   for every argument of every detection), the others by a loop.
%   PrevValues: the values of the row before (Prev), a list starting with
%   its arguments' values.
encode_args(0, _, _, _, _, _, 0, Tail, Tail) :- !.
encode_args(1, E, P, [P1|_], Dict, C, M, [V1|Tail], Tail) :- !,
    arg(1, E, A1),
    (   ( float(A1) ; integer(A1) ) -> V1 = A1, B1 = 0
    ;   arg(1, P, Q1), A1 == Q1 -> V1 = P1, B1 = 1
    ;   dict_id(Dict, C, A1, V1), B1 = 1
    ),
    M is B1.
encode_args(2, E, P, [P1, P2|_], Dict, C, M, [V1, V2|Tail], Tail) :- !,
    arg(1, E, A1),
    (   ( float(A1) ; integer(A1) ) -> V1 = A1, B1 = 0
    ;   arg(1, P, Q1), A1 == Q1 -> V1 = P1, B1 = 1
    ;   dict_id(Dict, C, A1, V1), B1 = 1
    ),
    arg(2, E, A2),
    (   ( float(A2) ; integer(A2) ) -> V2 = A2, B2 = 0
    ;   arg(2, P, Q2), A2 == Q2 -> V2 = P2, B2 = 2
    ;   dict_id(Dict, C, A2, V2), B2 = 2
    ),
    M is B1 \/ B2.
encode_args(3, E, P, [P1, P2, P3|_], Dict, C, M, [V1, V2, V3|Tail], Tail) :- !,
    arg(1, E, A1),
    (   ( float(A1) ; integer(A1) ) -> V1 = A1, B1 = 0
    ;   arg(1, P, Q1), A1 == Q1 -> V1 = P1, B1 = 1
    ;   dict_id(Dict, C, A1, V1), B1 = 1
    ),
    arg(2, E, A2),
    (   ( float(A2) ; integer(A2) ) -> V2 = A2, B2 = 0
    ;   arg(2, P, Q2), A2 == Q2 -> V2 = P2, B2 = 2
    ;   dict_id(Dict, C, A2, V2), B2 = 2
    ),
    arg(3, E, A3),
    (   ( float(A3) ; integer(A3) ) -> V3 = A3, B3 = 0
    ;   arg(3, P, Q3), A3 == Q3 -> V3 = P3, B3 = 4
    ;   dict_id(Dict, C, A3, V3), B3 = 4
    ),
    M is B1 \/ B2 \/ B3.
encode_args(4, E, P, [P1, P2, P3, P4|_], Dict, C, M, [V1, V2, V3, V4|Tail], Tail) :- !,
    arg(1, E, A1),
    (   ( float(A1) ; integer(A1) ) -> V1 = A1, B1 = 0
    ;   arg(1, P, Q1), A1 == Q1 -> V1 = P1, B1 = 1
    ;   dict_id(Dict, C, A1, V1), B1 = 1
    ),
    arg(2, E, A2),
    (   ( float(A2) ; integer(A2) ) -> V2 = A2, B2 = 0
    ;   arg(2, P, Q2), A2 == Q2 -> V2 = P2, B2 = 2
    ;   dict_id(Dict, C, A2, V2), B2 = 2
    ),
    arg(3, E, A3),
    (   ( float(A3) ; integer(A3) ) -> V3 = A3, B3 = 0
    ;   arg(3, P, Q3), A3 == Q3 -> V3 = P3, B3 = 4
    ;   dict_id(Dict, C, A3, V3), B3 = 4
    ),
    arg(4, E, A4),
    (   ( float(A4) ; integer(A4) ) -> V4 = A4, B4 = 0
    ;   arg(4, P, Q4), A4 == Q4 -> V4 = P4, B4 = 8
    ;   dict_id(Dict, C, A4, V4), B4 = 8
    ),
    M is B1 \/ B2 \/ B3 \/ B4.
encode_args(Ar, E, P, PVs, Dict, C, M, Values, Tail) :-
    encode_args(1, Ar, E, P, PVs, Dict, C, 0, M, Values, Tail).

encode_args(I, Ar, E, P, PVs, Dict, C, M0, M, Values, Tail) :-
    (   I > Ar
    ->  M = M0, Values = Tail
    ;   arg(I, E, A),
        arg(I, P, Q),
        PVs = [PV|PVs1],
        Bit is 1 << (I - 1),
        (   A == Q, \+ number(A) -> V = PV, M1 is M0 \/ Bit
        ;   enc(A, Dict, C, V, Bit, M0, M1)
        ),
        Values = [V|Values1],
        I1 is I + 1,
        encode_args(I1, Ar, E, P, PVs1, Dict, C, M1, M, Values1, Tail)
    ).

%   enc(+Arg, +Dict, +C, -Value, +Bit, +Mask0, -Mask): a number is its own
%   value; any other term its dictionary id, with Bit set in the mask.
enc(A, _, _, A, _, M, M) :- float(A), !.
enc(A, _, _, A, _, M, M) :- integer(A), !.
enc(A, Dict, C, Id, Bit, M0, M) :-
    dict_id(Dict, C, A, Id),
    M is M0 \/ Bit.

%   dict_id(+Dict, +C, +Term, -Id): the id of a term that is not a number,
%   Dict = d(Trie, Cache).  Recent terms are found in a direct-mapped
%   cache (4,096 slots by term_hash/2, a term and its id in each) before
%   the trie: the arguments of answers repeat the terms of recent events
%   (a stored partial match takes part in many answers), and a look-up in
%   a trie of many thousands of terms misses the processor's caches
%   (0.4-1 µs) where a hash and a comparison do not (~0.1 µs).
dict_id(d(Trie, Cache), C, T, Id) :-
    (   atom(T)                         % an atom: the trie finds it at once
    ->  (   trie_lookup(Trie, T, Id) -> true ; new_id(Trie, C, T, Id) )
    ;   term_hash(T, H),
        integer(H)
    ->  Slot is H /\ 4095 + 2,
        arg(Slot, Cache, E),
        (   E = T0-Id0, T0 == T
        ->  Id = Id0
        ;   (   trie_lookup(Trie, T, Id) -> true ; new_id(Trie, C, T, Id) ),
            nb_setarg(Slot, Cache, T-Id)
        )
    ;   trie_lookup(Trie, T, Id)         % not ground: no hash
    ->  true
    ;   new_id(Trie, C, T, Id)
    ).

%   id_cache(+Engine, +Generation, -Cache): the calling thread's cache of
%   Engine's dictionary: a term cache(Generation, Slot...) in a global
%   variable, made anew for a new generation (ids change then).
id_cache(M, Gen, Cache) :-
    atom_concat('$epsparql_idcache_', M, Key),
    (   nb_current(Key, Cache), arg(1, Cache, Gen)
    ->  true
    ;   functor(Cache0, cache, 4097),
        nb_setval(Key, Cache0),
        nb_getval(Key, Cache),
        nb_setarg(1, Cache, Gen)
    ).

%   flat_types(+Args, -Types): the codes of the kinds of Args (a: atom,
%   s: string, n: number) when every one is one of those (not [], which
%   janus would make a list); else fail.
flat_types([], []).
flat_types([A|As], [K|Ks]) :-
    (   string(A) -> K = 0's
    ;   number(A) -> K = 0'n
    ;   atom(A), A \== [] -> K = 0'a
    ),
    flat_types(As, Ks).

%   A term seen for the first time: the next id, queued to cross with
%   the chunk being encoded.
new_id(Trie, C, T, Id) :-
    arg(5, C, Id),
    trie_insert(Trie, T, Id),
    Next is Id + 1,
    nb_setarg(5, C, Next),
    term_payload(T, Kind, Payload),
    b_getval('$epsparql_news', News),   % encoding a run is deterministic: no
    b_setval('$epsparql_news', [Kind-Payload|News]).   % copy, nothing undone before it is sent

term_payload(T, atom, T) :- atom(T), T \== [], !.     % janus would make [] a list
term_payload(T, string, T) :- string(T), !.
term_payload(T, flat, Payload) :-
    compound(T),
    compound_name_arguments(T, Name, Args),
    flat_types(Args, Types),
    !,
    atom_codes(TypeAtom, Types),
    Payload =.. [-, Name, TypeAtom|Args].        % a Python tuple
term_payload(T, json, Text) :-
    phrase(json_term(T), Codes),
    string_codes(Text, Codes).
