/*  Detections to Python in bulk: flat rows, dictionary-encoded terms.

    While a bridge call runs the engine, each detection is encoded by the
    sink (columns_sink/3) straight into numbers, written into the cells
    of a preallocated list (nb_setarg/3: an integer is not copied, a float
    is three words), with no copy of the detection and no second walk.
    Full buffers are handed to Python as they fill (janus:py_call/1, there
    when Python hosts this Prolog), so a batch never holds all its answers
    in Prolog, neither as a string nor as a list.

    A buffer crosses as one call

        take(Generation, NewTerms, Runs, Values)

    Values holds Arity + 2 numbers per detection, in detection order:

        V1, ..., VArity, T1, T2

    Vi is the argument itself when it is an integer or a float, else the
    integer id of the argument in the engine's term dictionary, and bit
    i-1 of the detection's mask is then set.  Runs splits Values into runs
    of detections of one head Name/Arity, four items per run:

        Name, Arity, Count, Masks

    Masks is the mask when it is the same for every detection of the run
    (the usual case: Python then slices whole columns out of Values), else
    the list of the masks.  Python makes one chunk of each run.

    Everything crosses as lists, none as a -/N term: janus (1.5.3) makes
    a slower Python tuple of such a term and keeps an extra reference to
    each of its elements (they are never freed).  Values is cut out of
    the buffer's list for the call (the tail of its last cell is set to
    [] and back afterwards), so no copy is made of a partial buffer.

    The dictionary (a trie per engine) gives each distinct non-number term
    an id on its first use; the term itself crosses once, in the NewTerms
    of the buffer that first uses it, two items per term: Kind, Payload.
    atom, Text; string, Text; flat, [Name, Kinds, Arg...] (a compound of
    atoms, strings and numbers, Kinds a letter per argument: a atom, s
    string, n number); or json, Text (anything else, in the bridge's JSON
    encoding, variables as null).  It is bounded: past MaxTerms entries
    it starts afresh under a new generation number, which Python sees in
    the next buffer; and after a call that raised (Python may have missed
    a buffer and its new terms).
*/
:- module(bridge_columns,
          [ with_columns/3,            % +Engine, +Receiver, :Goal
            columns_sink/3,            % +Event, +T1, +T2
            columns_forget/1,          % +Engine
            columns_drop/1,            % +Engine
            columns_set_limits/2       % +MaxRows, +MaxTerms
          ]).
:- use_module(bridge_json, [json_term//1]).

:- set_prolog_flag(optimise, true).   % file-scoped: inline arithmetic

%   engine_terms(Engine, Trie, NextId, Generation): the term dictionary of
%   an engine (shared by the threads that call it; calls are serialised).
:- dynamic engine_terms/4.

%   limits(MaxRows, MaxTerms): rows per buffer, entries per dictionary.
:- dynamic limits/2.
limits(4096, 1048576).

%   Values per row a buffer holds on average (a buffer of MaxRows rows
%   holds MaxRows * this many values; a row too wide for that gets a
%   buffer of its own width).
row_width(6).

%!  columns_set_limits(+MaxRows, +MaxTerms) is det.
%
%   Set the buffer size (detections per chunk, at most) and the bound of
%   the term dictionaries (for tests and tuning; the defaults are 4096 and
%   1048576).  The buffers of a thread are made anew at its next call.
columns_set_limits(MaxRows, MaxTerms) :-
    must_be(positive_integer, MaxRows),
    must_be(positive_integer, MaxTerms),
    retractall(limits(_, _)),
    assertz(limits(MaxRows, MaxTerms)).

%!  with_columns(+Engine, +Receiver, :Goal) is semidet.
%
%   Run Goal with the detections sent to columns_sink/3 passed to
%   Receiver (a Python object with a method take/4) in buffers; the last
%   ones are sent when Goal succeeds.  If Goal raises or fails, or a
%   buffer could not be delivered, the dictionary is started afresh and
%   the error raised.
%   Re-entrant: a call made from inside Goal (a Python function called by
%   a rule that pushes into another engine) gets buffers of its own, and
%   the outer call's state is back when it returns.
:- meta_predicate with_columns(+, +, 0).
with_columns(M, Receiver, Goal) :-
    (   nb_current('$epsparql_columns', Outer) -> true ; Outer = [] ),
    open_columns(M, Receiver, Outer),
    setup_call_cleanup(true, run_columns(M, Goal), restore_outer(Outer)).

%   The outer call's state is still on the global stack (Outer holds it,
%   and a global variable's value is not undone by backtracking): link it
%   back, with the buffers it points at, without a copy.
restore_outer(Outer) :-
    nb_linkval('$epsparql_columns', Outer).

run_columns(M, Goal) :-
    catch(( call(Goal) -> Ok = true ; Ok = false ), E, true),
    (   var(E), Ok == true
    ->  catch(flush_columns, E2, true),
        nb_getval('$epsparql_columns', C),
        arg(28, C, E3),
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
%   Start Engine's term dictionary afresh: its next buffer has a new
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

/*  The state of a call, in the global variable '$epsparql_columns':

      c(Head, Last, Rows, MaxRows, RunName, RunArity, RunMask,
        K1, I1, K2, I2, K3, I3, K4, I4,
        RunStart, Runs, NRuns, Masks, NewsHead, NewsLast, Cache,
        Receiver, Trie, Next, Generation, Engine, Error, Depth, Cap)

    Head: the buffer, a list whose first cell is a sentinel and whose Cap
    further cells take the values; Last: the last cell written (Head when
    none); Rows: the detections in the buffer.  The current run:
    RunName/RunArity its head ([] and -1 when there is none), RunStart
    its first row (1-based), RunMask `none` before its first row, its
    mask while that is the same for every row, or `mixed` (its rows'
    masks are then in Masks, a term of MaxRows arguments, by row).
    Ki, Ii: the last term that was not a number at argument position i
    (1-4) and its id (0 and 0 at first: no argument is compared to a
    number there).  Runs holds r(Name, Arity, Count, Mask) of the
    buffer's finished runs (NRuns of them; Mask an integer, or `mixed`).
    NewsHead/NewsLast: the list of the new terms (sentinel first; Kind,
    Payload per term; grown as needed) and its last cell written.  Cache:
    the engine's term_hash cache (dict_id/3).  Next: the next free term
    id.  Error: an exception of the Python side, or none.  Depth: the
    nesting depth of the call (0 for a call not made from inside
    another).

    The sink reads the fields by unifying the state with a c/30 pattern
    (no call) and writes them with nb_setarg/3: a call to a built-in such
    as arg/3 or nb_setarg/3 costs ~25 ns here, a unification next to
    nothing.

    The buffers are kept per thread and nesting depth across calls, in
    the global variable '$epsparql_columns_bufs_<Depth>', as

      bufs(MaxRows, Head, NewsHead, Masks, Runs, Cap)
*/
open_columns(M, Receiver, Outer) :-
    limits(MaxRows, MaxT),
    (   engine_terms(M, Trie0, Next0, Gen0)
    ->  (   Next0 >= MaxT
        ->  columns_forget(M),
            engine_terms(M, Trie, Next, Gen)
        ;   Trie = Trie0, Next = Next0, Gen = Gen0
        )
    ;   columns_forget(M),
        engine_terms(M, Trie, Next, Gen)
    ),
    (   Outer == [] -> Depth = 0 ; arg(29, Outer, D0), Depth is D0 + 1 ),
    thread_buffers(Depth, MaxRows, bufs(_, Head, NewsHead, Masks, Runs, Cap)),
    id_cache(M, Gen, Cache),
    nb_setval('$epsparql_columns',
              c([], [], 0, MaxRows, [], -1, none, 0, 0, 0, 0, 0, 0, 0, 0,
                1, [], 0, [], [], [], [],
                Receiver, Trie, Next, Gen, M, none, Depth, Cap)),
    nb_getval('$epsparql_columns', C),
    nb_linkarg(1, C, Head),             % the state points at the buffers, no copies
    nb_linkarg(2, C, Head),
    nb_linkarg(17, C, Runs),
    nb_linkarg(19, C, Masks),
    nb_linkarg(20, C, NewsHead),
    nb_linkarg(21, C, NewsHead),
    nb_linkarg(22, C, Cache).

%   thread_buffers(+Depth, +MaxRows, -Bufs): this thread's buffers for
%   calls at nesting depth Depth, made anew when the limits changed.
thread_buffers(Depth, MaxRows, Bufs) :-
    atom_concat('$epsparql_columns_bufs_', Depth, Key),
    (   nb_current(Key, Bufs), arg(1, Bufs, MaxRows)
    ->  true
    ;   row_width(RW),
        Cap is MaxRows * RW,
        skeleton(Cap, Head),
        skeleton(64, NewsHead),
        functor(Masks, masks, MaxRows),
        functor(Runs, runs, MaxRows),
        nb_setval(Key, bufs(MaxRows, Head, NewsHead, Masks, Runs, Cap)),
        nb_getval(Key, Bufs)
    ).

%   skeleton(+N, -List): a sentinel and N free cells.
skeleton(N, [sentinel|Cells]) :-
    length(Cells, N),
    maplist(=(0), Cells).

close_columns(M) :-
    (   nb_current('$epsparql_columns', C), C \== []
    ->  arg(25, C, Next),
        (   retract(engine_terms(M, Trie, _, Gen))
        ->  assertz(engine_terms(M, Trie, Next, Gen))
        ;   true
        )
    ;   true
    ),
    nb_setval('$epsparql_columns', []).

%   Inlined in the sink's clauses (goal_expansion/2 below): the work per
%   value and per row, where a call would cost more than the work.
%
%   put_value(+A, +K, +Id0, +Slot, +Cell, +C, +Bit, -B): write argument
%   A's value into Cell: a number is its own value (B = 0); any other
%   term its dictionary id (B = Bit).  A term equal to the last one at
%   the same position (K, its id Id0 in the state's slots Slot and Slot
%   + 1) takes that id without a look-up: the answers one event
%   completes come one after the other and share most of their arguments
%   (the key, the event's own terms), and a look-up costs several times
%   the comparison.
%
%   row_done(+C, +End, +Mask): the row ends at cell End: count it, note
%   its mask, send the buffer when it is full.
goal_expansion(put_value(A, K, Id0, Slot, Cell, C, Bit, B),
               (   integer(A) -> nb_setarg(1, Cell, A), B = 0
               ;   float(A) -> nb_setarg(1, Cell, A), B = 0
               ;   A == K -> nb_setarg(1, Cell, Id0), B = Bit
               ;   put_new(A, Slot, Cell, C), B = Bit
               )).
goal_expansion(row_done(C, End, Mask),
               (   nb_linkarg(2, C, End),
                   C = c(_, _, Rows0, MaxRows, _, _, RunMask, _, _, _, _, _, _, _, _,
                         _, _, _, _, _, _, _, _, _, _, _, _, _, _, _),
                   Rows is Rows0 + 1,
                   nb_setarg(3, C, Rows),
                   (   RunMask == Mask -> true ; row_mask(C, RunMask, Mask, Rows) ),
                   (   Rows == MaxRows -> flush_columns(C) ; true )
               )).

%!  columns_sink(+Event, +T1, +T2) is det.
%
%   The detection sink of a with_columns/3 call: encode the detection
%   into the buffer, send the buffer when it is full.
columns_sink(E, T1, T2) :-
    nb_getval('$epsparql_columns', C),
    functor(E, Name, Ar),
    sink(Ar, E, T1, T2, C, Name).

%   sink(+Arity, +E, +T1, +T2, +C, +Name): the values of detection E,
%   T1, T2 go into the cells after the last one written, when the row
%   continues the current run and fits (the cells are reached by
%   unification, not by calls); else new_run/3 sends the buffer or
%   closes the run, and put_row/8 writes the row.  Arities up to 4 are
%   written out, the others take put_row/8's loop.
sink(0, E, T1, T2, C, Name) :- !,
    C = c(_, Last, _, _, RunName, RunAr, _, _, _, _, _, _, _, _, _,
          _, _, _, _, _, _, _, _, _, _, _, _, _, _, _),
    (   Name == RunName, RunAr == 0,
        Last = [_|X1], X1 = [_|X2], X2 = [_|_]
    ->  nb_setarg(1, X1, T1), nb_setarg(1, X2, T2),
        row_done(C, X2, 0)
    ;   slow_row(0, E, T1, T2, C, Name)
    ).
sink(1, E, T1, T2, C, Name) :- !,
    C = c(_, Last, _, _, RunName, RunAr, _, K1, I1, _, _, _, _, _, _,
          _, _, _, _, _, _, _, _, _, _, _, _, _, _, _),
    (   Name == RunName, RunAr == 1,
        Last = [_|X1], X1 = [_|X2], X2 = [_|X3], X3 = [_|_]
    ->  arg(1, E, A1), put_value(A1, K1, I1, 8, X1, C, 1, M),
        nb_setarg(1, X2, T1), nb_setarg(1, X3, T2),
        row_done(C, X3, M)
    ;   slow_row(1, E, T1, T2, C, Name)
    ).
sink(2, E, T1, T2, C, Name) :- !,
    C = c(_, Last, _, _, RunName, RunAr, _, K1, I1, K2, I2, _, _, _, _,
          _, _, _, _, _, _, _, _, _, _, _, _, _, _, _),
    (   Name == RunName, RunAr == 2,
        Last = [_|X1], X1 = [_|X2], X2 = [_|X3], X3 = [_|X4], X4 = [_|_]
    ->  arg(1, E, A1), put_value(A1, K1, I1, 8, X1, C, 1, B1),
        arg(2, E, A2), put_value(A2, K2, I2, 10, X2, C, 2, B2),
        nb_setarg(1, X3, T1), nb_setarg(1, X4, T2),
        M is B1 \/ B2,
        row_done(C, X4, M)
    ;   slow_row(2, E, T1, T2, C, Name)
    ).
sink(3, E, T1, T2, C, Name) :- !,
    C = c(_, Last, _, _, RunName, RunAr, _, K1, I1, K2, I2, K3, I3, _, _,
          _, _, _, _, _, _, _, _, _, _, _, _, _, _, _),
    (   Name == RunName, RunAr == 3,
        Last = [_|X1], X1 = [_|X2], X2 = [_|X3], X3 = [_|X4], X4 = [_|X5],
        X5 = [_|_]
    ->  arg(1, E, A1), put_value(A1, K1, I1, 8, X1, C, 1, B1),
        arg(2, E, A2), put_value(A2, K2, I2, 10, X2, C, 2, B2),
        arg(3, E, A3), put_value(A3, K3, I3, 12, X3, C, 4, B3),
        nb_setarg(1, X4, T1), nb_setarg(1, X5, T2),
        M is B1 \/ B2 \/ B3,
        row_done(C, X5, M)
    ;   slow_row(3, E, T1, T2, C, Name)
    ).
sink(4, E, T1, T2, C, Name) :- !,
    C = c(_, Last, _, _, RunName, RunAr, _, K1, I1, K2, I2, K3, I3, K4, I4,
          _, _, _, _, _, _, _, _, _, _, _, _, _, _, _),
    (   Name == RunName, RunAr == 4,
        Last = [_|X1], X1 = [_|X2], X2 = [_|X3], X3 = [_|X4], X4 = [_|X5],
        X5 = [_|X6], X6 = [_|_]
    ->  arg(1, E, A1), put_value(A1, K1, I1, 8, X1, C, 1, B1),
        arg(2, E, A2), put_value(A2, K2, I2, 10, X2, C, 2, B2),
        arg(3, E, A3), put_value(A3, K3, I3, 12, X3, C, 4, B3),
        arg(4, E, A4), put_value(A4, K4, I4, 14, X4, C, 8, B4),
        nb_setarg(1, X5, T1), nb_setarg(1, X6, T2),
        M is B1 \/ B2 \/ B3 \/ B4,
        row_done(C, X6, M)
    ;   slow_row(4, E, T1, T2, C, Name)
    ).
sink(Ar, E, T1, T2, C, Name) :-
    slow_row(Ar, E, T1, T2, C, Name).

%   slow_row(+Ar, +E, +T1, +T2, +C, +Name): a row that starts a run (or
%   of an arity above 4): make room and start the run, then write it.
slow_row(Ar, E, T1, T2, C, Name) :-
    (   arg(5, C, Name), arg(6, C, Ar), arg(2, C, Last), room(Ar, Last)
    ->  true                            % arity above 4: the run goes on
    ;   new_run(C, Name, Ar)
    ),
    arg(2, C, Last1),
    (   put_row(Ar, E, T1, T2, C, Last1, End, Mask)
    ->  row_done(C, End, Mask)
    ;   throw(error(system_error(columns_sink(no_room)), _))   % new_run/3 made room
    ).

%   put_new(+A, +Slot, +Cell, +C): A is not a number, nor the last term
%   at its position: its id into Cell, and into the state's slots Slot
%   and Slot + 1 the term and its id.  An atom is put there as it is; a
%   compound or string is linked to its copy in the term_hash cache (no
%   copy of its own: a literal's copy costs more than its look-up); a
%   term that is not ground is not kept (nb_setarg/3 does not copy a
%   variable: the slot would be bound with it when the engine binds it).
put_new(A, Slot, Cell, C) :-
    dict_id(C, A, Id, Kept),
    nb_setarg(1, Cell, Id),
    (   Kept == none
    ->  true
    ;   nb_linkarg(Slot, C, Kept),
        Slot1 is Slot + 1,
        nb_setarg(Slot1, C, Id)
    ).

%   new_run(+C, +Name, +Ar): a row of head Name/Ar comes next and is not
%   part of the current run (another head, or no room left for it): send
%   the buffer if the row does not fit, and start a run.
new_run(C, Name, Ar) :-
    arg(2, C, Last),
    (   room(Ar, Last)
    ->  close_run(C)
    ;   flush_columns(C),
        fit_row(C, Ar)
    ),
    nb_setarg(5, C, Name),
    nb_setarg(6, C, Ar),
    arg(3, C, Rows),
    Start is Rows + 1,
    nb_setarg(16, C, Start),
    nb_setarg(7, C, none).

%   room(+Ar, +Last): Ar + 2 free cells after Last.
room(Ar, Last) :-
    W is Ar + 2,
    room_(W, Last).

room_(0, _) :- !.
room_(N, [_|Next]) :-
    Next = [_|_],
    N1 is N - 1,
    room_(N1, Next).

%   A row wider than a whole buffer: this call gets a buffer that fits
%   MaxRows of them (the thread's buffers are kept).
fit_row(C, Ar) :-
    (   arg(2, C, Last), room(Ar, Last)
    ->  true
    ;   arg(4, C, MaxRows),
        Cap is (Ar + 2) * MaxRows,
        skeleton(Cap, Head0),
        nb_setarg(1, C, Head0),         % a copy, for this call only
        arg(1, C, Head),
        nb_linkarg(2, C, Head),
        nb_setarg(30, C, Cap)
    ).

%   The current run ends: keep its head, count and mask in Runs.
close_run(C) :-
    C = c(_, _, Rows, _, Name, Ar, Mask, _, _, _, _, _, _, _, _,
          Start, Runs, K0, _, _, _, _, _, _, _, _, _, _, _, _),
    Count is Rows - Start + 1,
    (   Count > 0
    ->  K is K0 + 1,
        nb_setarg(K, Runs, r(Name, Ar, Count, Mask)),
        nb_setarg(18, C, K)
    ;   true
    ).

%   row_mask(+C, +RunMask, +Mask, +Row): Mask of row Row differs from the
%   run's mask: the run's first row, the first that differs (the masks of
%   the rows before are written out), or a row of a mixed run.
row_mask(C, RunMask, Mask, Row) :-
    (   RunMask == none
    ->  nb_setarg(7, C, Mask)
    ;   arg(19, C, Masks),
        (   RunMask == mixed
        ->  true
        ;   arg(16, C, Start),
            Before is Row - 1,
            forall(between(Start, Before, R), nb_setarg(R, Masks, RunMask)),
            nb_setarg(7, C, mixed)
        ),
        nb_setarg(Row, Masks, Mask)
    ).

%   put_row(+Arity, +E, +T1, +T2, +C, +Last, -End, -Mask): write the
%   values of detection E, T1, T2 into the cells after Last (End the last
%   one); fails, writing nothing, when there are fewer than Arity + 2.
put_row(Ar, E, T1, T2, C, Last, End, M) :-
    room(Ar, Last),
    put_args(1, Ar, E, C, Last, Cell, 0, M),
    Cell = [_|X1], X1 = [_|End], End = [_|_],
    nb_setarg(1, X1, T1), nb_setarg(1, End, T2).

put_args(I, Ar, E, C, Cell0, Cell, M0, M) :-
    (   I > Ar
    ->  Cell = Cell0, M = M0
    ;   arg(I, E, A),
        Cell0 = [_|Cell1],
        (   integer(A) -> nb_setarg(1, Cell1, A), M1 = M0
        ;   float(A) -> nb_setarg(1, Cell1, A), M1 = M0
        ;   dict_id(C, A, Id),
            nb_setarg(1, Cell1, Id),
            M1 is M0 \/ (1 << (I - 1))
        ),
        I1 is I + 1,
        put_args(I1, Ar, E, C, Cell1, Cell, M1, M)
    ).

%   dict_id(+C, +Term, -Id) and dict_id(+C, +Term, -Id, -Kept): the id of
%   a term that is not a number.  An atom is looked up in the trie at
%   once; other terms in a direct-mapped cache first (4,096 slots by
%   term_hash/2, a copy of the term and its id in each): the arguments of
%   answers repeat the terms of recent events (a stored partial match
%   takes part in many answers; EP-SPARQL's literals are compounds
%   n(Value, Datatype, Lexical)), and a look-up in a trie of many
%   thousands of terms misses the processor's caches (0.4-1 µs) where a
%   hash and a comparison do not (~0.1 µs).  Kept: a term equal to Term
%   that stays (the atom, the cache's copy), or none (Term is not ground).
dict_id(C, T, Id) :-
    dict_id(C, T, Id, _).

dict_id(C, T, Id, Kept) :-
    arg(24, C, Trie),
    (   atom(T)
    ->  Kept = T,
        (   trie_lookup(Trie, T, Id) -> true ; new_id(C, T, Id) )
    ;   term_hash(T, H),
        integer(H)
    ->  Slot is H /\ 4095 + 2,
        arg(22, C, Cache),
        arg(Slot, Cache, E),
        (   E = T0-Id0, T0 == T
        ->  Id = Id0
        ;   (   trie_lookup(Trie, T, Id) -> true ; new_id(C, T, Id) ),
            nb_setarg(Slot, Cache, T-Id),
            arg(Slot, Cache, T0-_)
        ),
        Kept = T0
    ;   Kept = none,
        (   trie_lookup(Trie, T, Id)     % not ground: no hash
        ->  true
        ;   new_id(C, T, Id)
        )
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

%   A term seen for the first time: the next id; the term's kind and
%   payload are queued in the news list, to cross with this buffer (not
%   undone on backtracking, as the trie's entry is not).
new_id(C, T, Id) :-
    arg(24, C, Trie),
    arg(25, C, Id),
    trie_insert(Trie, T, Id),
    Next is Id + 1,
    nb_setarg(25, C, Next),
    term_payload(T, Kind, Payload),
    arg(21, C, Last0),
    grow_news(Last0),
    arg(2, Last0, KCell), nb_setarg(1, KCell, Kind),
    arg(2, KCell, PCell), nb_setarg(1, PCell, Payload),
    nb_linkarg(21, C, PCell).

%   grow_news(+Last): at least two free cells after Last, the last cell
%   written, else 64 more at the end of the list (a copy, in place).
grow_news(Last) :-
    arg(2, Last, T0),
    (   T0 = [_|T1], T1 = [_|_]
    ->  true
    ;   length(More, 64),
        maplist(=(0), More),
        (   T0 == []
        ->  nb_setarg(2, Last, More)
        ;   nb_setarg(2, T0, More)      % one free cell: after it
        )
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

term_payload(T, atom, T) :- atom(T), T \== [], !.     % janus would make [] a list
term_payload(T, string, T) :- string(T), !.
term_payload(T, flat, [Name, TypeAtom|Args]) :-
    compound(T),
    compound_name_arguments(T, Name, Args),
    flat_types(Args, Types),
    !,
    atom_codes(TypeAtom, Types).
term_payload(T, json, Text) :-
    phrase(json_term(T), Codes),
    string_codes(Text, Codes).

%   Send the buffer (its runs, values and new terms) to the receiver and
%   start it afresh.
flush_columns :-
    nb_getval('$epsparql_columns', C),
    flush_columns(C).

flush_columns(C) :-
    arg(3, C, Rows),
    (   Rows =:= 0
    ->  true
    ;   close_run(C),
        C = c(Head, Last, _, _, _, _, _, _, _, _, _, _, _, _, _,
              _, RunsT, NRuns, Masks, NewsHead, NewsLast, _, _, _, _, _, _, _, _, _),
        runs_list(1, NRuns, RunsT, Masks, 1, Runs),
        % the state starts afresh before the receiver runs: one that
        % raises leaves an empty buffer behind
        nb_linkarg(2, C, Head),
        nb_setarg(3, C, 0),
        nb_setarg(5, C, []),
        nb_setarg(6, C, -1),
        nb_setarg(7, C, none),
        nb_setarg(16, C, 1),
        nb_setarg(18, C, 0),
        nb_linkarg(21, C, NewsHead),
        send_cut(C, Head, Last, NewsHead, NewsLast, Runs)
    ).

%   runs_list(+K, +NRuns, +RunsT, +Masks, +Row, -Runs): the runs K.. as
%   the flat list Python takes (Name, Arity, Count, Masks per run); Row
%   the first row of run K.
runs_list(K, N, RunsT, Masks, Row, Runs) :-
    (   K > N
    ->  Runs = []
    ;   arg(K, RunsT, r(Name, Ar, Count, Mask)),
        Row1 is Row + Count,
        (   Mask == mixed
        ->  Last is Row1 - 1,
            findall(M, ( between(Row, Last, R), arg(R, Masks, M) ), RowMasks),
            Runs = [Name, Ar, Count, RowMasks|Runs1]
        ;   Runs = [Name, Ar, Count, Mask|Runs1]
        ),
        K1 is K + 1,
        runs_list(K1, N, RunsT, Masks, Row1, Runs1)
    ).

%   send_cut(+C, +Head, +Last, +NewsHead, +NewsLast, +Runs): send the
%   cells of Head up to Last and those of NewsHead up to NewsLast,
%   cutting the lists there for the call (no copy) and mending them
%   after it, whatever it does.
send_cut(C, Head, Last, NewsHead, NewsLast, Runs) :-
    arg(2, Last, Rest),
    arg(2, NewsLast, NewsRest),
    nb_linkarg(2, Last, []),
    nb_linkarg(2, NewsLast, []),
    arg(2, Head, Values),
    arg(2, NewsHead, News),
    catch(send(C, News, Runs, Values), E, true),
    nb_linkarg(2, Last, Rest),
    nb_linkarg(2, NewsLast, NewsRest),
    (   var(E) -> true ; throw(E) ).

%   A receiver that raises (it will take no more: a cap on answers was
%   reached, its output was closed) stops the call at once: the error is
%   kept and raised as a resource error, which the core never records as
%   a rule's error but passes up, so the rest of the batch is not run for
%   detections nobody takes.
send(C, News, Runs, Values) :-
    C = c(_, _, _, _, _, _, _, _, _, _, _, _, _, _, _,
          _, _, _, _, _, _, _, Receiver, _, _, Gen, _, Err0, _, _),
    (   Err0 == none
    ->  catch(janus:py_call(Receiver:take(Gen, News, Runs, Values)), E,
              ( nb_setarg(28, C, E),
                throw(error(resource_error(detection_receiver), E)) ))
    ;   true                            % an earlier buffer was lost: send no more
    ).
