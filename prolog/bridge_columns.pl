/*  Detections to Python in bulk: flat rows, dictionary-encoded terms.

    While a bridge call runs the engine, each detection goes to the sink,
    columns_sink/3, which is C (prolog/c/columns_buffer.c, built on first
    use by native.pl): one foreign call per detection writes its values
    into a native buffer, 8 bytes and a kind byte each, with no Prolog
    term made.  Full buffers are handed to Python as they fill
    (janus:py_call/1, there when Python hosts this Prolog), so a batch
    never holds all its answers in Prolog, and Python copies a buffer in
    one go (epsparql/core/columns.py), with no conversion per value.

    A buffer crosses as one call

        take(Generation, NewTerms, Runs, Values, Kinds, Count, Lits)

    Values and Kinds are the addresses of the buffer's Count values
    (int64 or double, 8 bytes each) and of their kinds (a byte each: 1 an
    integer that fits 64 bits, 2 a float, 4 the id of any other term in
    the engine's term dictionary, 8 the index of an inline literal); they
    are valid during the call only.  Lits: [] or the buffer's inline
    literals, [N, Vals, Dts, LitKinds, Text, TextLen]: the codec's typed
    literals n/3, d/3 and dur/3 with a short ASCII lexical form (a
    computed decimal, a time), which are new in nearly every answer, so
    they cross in the buffer (value, datatype id, lexical form) and never
    enter the dictionary (see the C source).
    A detection is Arity + 2 values, in detection order:

        V1, ..., VArity, T1, T2

    Runs splits Values into runs of detections of one head Name/Arity,
    four items per run:

        Name, Arity, Count, ColumnKinds

    ColumnKinds is the list of the Arity + 2 columns' kinds or-ed over the
    run: where it is 1, 2 or 4 (the usual case) Python slices a whole
    column out of Values, typed as one; else it reads the kind of each
    value.  Python makes one chunk of each run.

    Everything else crosses as lists, none as a -/N term: janus (1.5.3)
    makes a slower Python tuple of such a term and keeps an extra
    reference to each of its elements (they are never freed).

    The dictionary (a trie per engine) gives each distinct non-number term
    an id on its first use (sink_id/2, which the C sink calls; an atom
    equal to the last one at its argument position is not looked up
    again); the term itself crosses once, in the NewTerms of the buffer
    that first uses it, two items per term: Kind, Payload.  atom, Text;
    string, Text; flat, [Name, Kinds, Arg...] (a compound of atoms,
    strings and numbers, Kinds a letter per argument: a atom, s string, n
    number); or json, Text (anything else, in the bridge's JSON encoding,
    variables as null).  A long string the batch passed by reference
    (bridge_long_text.pl) crosses as the blob of its Python object, in
    place of Text or of an s argument.  It is bounded: past MaxTerms entries it starts
    afresh under a new generation number, which Python sees in the next
    buffer; and after a call that raised (Python may have missed a buffer
    and its new terms).
*/
:- module(bridge_columns,
          [ with_columns/3,            % +Engine, +Receiver, :Goal
            columns_sink/3,            % +Event, +T1, +T2
            columns_groups/5,          % +Head, +Map, +Groups, +T1, +T2
            columns_forget/1,          % +Engine
            columns_drop/1,            % +Engine
            columns_set_limits/2       % +MaxRows, +MaxTerms
          ]).
:- use_module(bridge_json, [json_term//1]).
:- use_module(bridge_long_text, [long_text_blob/2]).
:- use_module(native, [native_library/2]).

%   columns_sink/3 and columns_groups/5 (exported), colbuf_open/1, colbuf_close/0,
%   colbuf_rows/1, colbuf_take/5, colbuf_reset/0: see the C source.
:- native_library(columns_buffer, Lib),
   use_foreign_library(Lib, install_columns_buffer).

:- set_prolog_flag(optimise, true).   % file-scoped: inline arithmetic

%   engine_terms(Engine, Trie, NextId, Generation, LongBytes): the term
%   dictionary of an engine (shared by the threads that call it; calls are
%   serialised); LongBytes: the size of the long texts it holds.
:- dynamic engine_terms/5.

%   limits(MaxRows, MaxTerms): rows per buffer, entries per dictionary.
:- dynamic limits/2.
limits(4096, 1048576).

%   Long texts (a document, a payload in a literal): a text longer than
%   long_text/1 characters is not kept in the id cache of dict_id/3, and
%   a dictionary whose long texts add up to more than long_budget/1
%   characters starts afresh at the next call, as one past MaxTerms
%   entries does: the trie (and the table of the Python side) would
%   otherwise keep every large literal ever answered.  The same bound as
%   the push side's (epsparql/memo.py, LONG_KEY).
long_text(4096).
long_budget(67108864).

%!  columns_set_limits(+MaxRows, +MaxTerms) is det.
%
%   Set the buffer size (detections per chunk, at most) and the bound of
%   the term dictionaries (for tests and tuning; the defaults are 4096 and
%   1048576).  Calls started afterwards use them.
columns_set_limits(MaxRows, MaxTerms) :-
    must_be(positive_integer, MaxRows),
    must_be(positive_integer, MaxTerms),
    retractall(limits(_, _)),
    assertz(limits(MaxRows, MaxTerms)).

%!  with_columns(+Engine, +Receiver, :Goal) is semidet.
%
%   Run Goal with the detections sent to columns_sink/3 passed to
%   Receiver (a Python object with a method take/7) in buffers; the last
%   ones are sent when Goal succeeds.  If Goal raises or fails, or a
%   buffer could not be delivered, the dictionary is started afresh and
%   the error raised.
%   Re-entrant: a call made from inside Goal (a Python function called by
%   a rule that pushes into another engine) gets a buffer of its own, and
%   the outer call's state is back when it returns.
:- meta_predicate with_columns(+, +, 0).
with_columns(M, Receiver, Goal) :-
    (   nb_current('$epsparql_columns', Outer) -> true ; Outer = [] ),
    setup_call_cleanup(open_columns(M, Receiver, Outer),
                       run_columns(M, Goal),
                       restore_outer(Outer)).

%   The outer call's state is still on the global stack (Outer holds it,
%   and a global variable's value is not undone by backtracking): link it
%   back, with the list it points at, without a copy.  The C buffer of
%   this call goes.
restore_outer(Outer) :-
    colbuf_close,
    nb_linkval('$epsparql_columns', Outer).

run_columns(M, Goal) :-
    catch(( call(Goal) -> Ok = true ; Ok = false ), E, true),
    (   var(E), Ok == true
    ->  catch(flush_columns, E2, true),
        nb_getval('$epsparql_columns', C),
        arg(9, C, E3),
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
    (   retract(engine_terms(M, _, _, G0, _)) -> G is G0 + 1 ; G = 1 ),
    trie_new(Trie),
    assertz(engine_terms(M, Trie, 0, G, 0)).

%!  columns_drop(+Engine) is det.
%
%   Forget Engine's term dictionary altogether (the engine is destroyed).
columns_drop(M) :-
    retractall(engine_terms(M, _, _, _, _)),
    atom_concat('$epsparql_idcache_', M, Key),
    nb_delete(Key).

/*  The state of a call, in the global variable '$epsparql_columns':

      c(NewsHead, NewsLast, Cache, Receiver, Trie, Next, Generation,
        Engine, Error, Depth, LongBytes)

    NewsHead/NewsLast: the list of the new terms of the buffer (sentinel
    first; Kind, Payload per term; grown as needed) and its last cell
    written.  Cache: the engine's term_hash cache (dict_id/3).  Next: the
    next free term id.  Error: an exception of the Python side, or none.
    Depth: the nesting depth of the call (0 for a call not made from
    inside another).  LongBytes: the size of the dictionary's long texts.
    The values themselves are in the C buffer of the call (colbuf_open/1).

    The news lists are kept per thread and nesting depth across calls, in
    the global variable '$epsparql_columns_news_<Depth>'.
*/
open_columns(M, Receiver, Outer) :-
    limits(MaxRows, MaxT),
    (   engine_terms(M, Trie0, Next0, Gen0, Long0)
    ->  (   ( Next0 >= MaxT ; long_budget(B), Long0 > B )
        ->  columns_forget(M),
            engine_terms(M, Trie, Next, Gen, Long)
        ;   Trie = Trie0, Next = Next0, Gen = Gen0, Long = Long0
        )
    ;   columns_forget(M),
        engine_terms(M, Trie, Next, Gen, Long)
    ),
    (   Outer == [] -> Depth = 0 ; arg(10, Outer, D0), Depth is D0 + 1 ),
    thread_news(Depth, NewsHead),
    id_cache(M, Gen, Cache),
    nb_setval('$epsparql_columns',
              c([], [], [], Receiver, Trie, Next, Gen, M, none, Depth, Long)),
    nb_getval('$epsparql_columns', C),
    nb_linkarg(1, C, NewsHead),         % the state points at the list, no copies
    nb_linkarg(2, C, NewsHead),
    nb_linkarg(3, C, Cache),
    colbuf_open(MaxRows).

%   thread_news(+Depth, -NewsHead): this thread's list of new terms for
%   calls at nesting depth Depth.
thread_news(Depth, NewsHead) :-
    atom_concat('$epsparql_columns_news_', Depth, Key),
    (   nb_current(Key, NewsHead)
    ->  true
    ;   length(Cells, 64),
        maplist(=(0), Cells),
        nb_setval(Key, [sentinel|Cells]),
        nb_getval(Key, NewsHead)
    ).

close_columns(M) :-
    (   nb_current('$epsparql_columns', C), C \== []
    ->  arg(6, C, Next),
        arg(11, C, Long),
        (   retract(engine_terms(M, Trie, _, Gen, _))
        ->  assertz(engine_terms(M, Trie, Next, Gen, Long))
        ;   true
        )
    ;   true
    ),
    nb_setval('$epsparql_columns', []).

%   sink_id(+Term, -Id): the dictionary id of Term (not a number, or an
%   integer beyond 64 bits), for the C sink.
sink_id(T, Id) :-
    nb_getval('$epsparql_columns', C),
    dict_id(C, T, Id).

%   dict_id(+C, +Term, -Id): the id of a term that is not a number.  An
%   atom is looked up in the trie at once; other terms in a direct-mapped
%   cache first (4,096 slots by term_hash/2, a copy of the term and its id
%   in each): the arguments of answers repeat the terms of recent events
%   (a stored partial match takes part in many answers; EP-SPARQL's
%   literals can be compounds n(Value, Datatype, Lexical)), and a look-up
%   in a trie of many thousands of terms misses the processor's caches
%   (0.4-1 µs) where a hash and a comparison do not (~0.1 µs).
%
%   A term with a long text (long_size/2: a document, a payload) is not
%   copied into the cache, and the trie holds it under its SHA-1
%   ('$long'(Hash), variant_sha1/2) instead of a copy: equal terms still
%   get one id, and the dictionary keeps 40 characters, not the text.
%   Its payload names, in place of a long string the batch passed by
%   reference, the Python object it came as (long_payload/3).
dict_id(C, T, Id) :-
    arg(5, C, Trie),
    (   atom(T)
    ->  (   trie_lookup(Trie, T, Id) -> true ; new_id(C, T, T, Id) )
    ;   term_hash(T, H),
        integer(H)
    ->  Slot is H /\ 4095 + 2,
        arg(3, C, Cache),
        arg(Slot, Cache, E),
        (   E = T0-Id0, T0 == T
        ->  Id = Id0
        ;   long_size(T, Size)
        ->  variant_sha1(T, Hash),
            Key = '$long'(Hash),
            (   trie_lookup(Trie, Key, Id)
            ->  true
            ;   long_payload(T, Kind, Payload),
                new_id(C, Key, Kind, Payload, Id),
                arg(11, C, Long0),
                Long is Long0 + Size,
                nb_setarg(11, C, Long)
            )
        ;   (   trie_lookup(Trie, T, Id) -> true ; new_id(C, T, T, Id) ),
            nb_setarg(Slot, Cache, T-Id)
        )
    ;   (   trie_lookup(Trie, T, Id)     % not ground: no hash
        ->  true
        ;   new_id(C, T, T, Id)
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

%   new_id(+C, +Key, +Term, -Id): a term seen for the first time (in the
%   trie under Key): the next id; the term's kind and payload are queued
%   in the news list, to cross with this buffer (not undone on
%   backtracking, as the trie's entry is not).
new_id(C, Key, T, Id) :-
    term_payload(T, Kind, Payload),
    new_id(C, Key, Kind, Payload, Id).

new_id(C, Key, Kind, Payload, Id) :-
    arg(5, C, Trie),
    arg(6, C, Id),
    trie_insert(Trie, Key, Id),
    Next is Id + 1,
    nb_setarg(6, C, Next),
    arg(2, C, Last0),
    grow_news(Last0),
    arg(2, Last0, KCell), nb_setarg(1, KCell, Kind),
    arg(2, KCell, PCell), nb_setarg(1, PCell, Payload),
    nb_linkarg(2, C, PCell).

%   long_payload(+Term, -Kind, -Payload): term_payload/3 of a term with
%   a long text, each string of it that the current batch passed by
%   reference (bridge_long_text.pl) replaced by the blob of its Python
%   object: a string is sent as the blob, a flat compound with the blob
%   as that argument.  The news list then holds no copy of the text, and
%   janus makes no Python text of it.
long_payload(T, Kind, Payload) :-
    term_payload(T, Kind0, Payload0),
    (   Kind0 == string, long_text_blob(T, Blob)
    ->  Kind = string, Payload = Blob
    ;   Kind0 == flat
    ->  Payload0 = [Name, Types|Args0],
        maplist(arg_by_ref, Args0, Args),
        Kind = flat, Payload = [Name, Types|Args]
    ;   Kind = Kind0, Payload = Payload0
    ).

arg_by_ref(A, B) :-
    (   string(A), long_text(Min), string_length(A, L), L > Min, long_text_blob(A, B0)
    ->  B = B0
    ;   B = A
    ).

%   long_size(+Term, -Size): Term is a string, or a compound with a string
%   argument (a literal), longer than long_text/1; Size: its length.
long_size(T, Size) :-
    long_text(Min),
    (   string(T)
    ->  string_length(T, Size), Size > Min
    ;   compound(T),
        compound_name_arity(T, _, N),
        long_arg(N, T, Min, 0, Size), Size > Min
    ).

long_arg(0, _, _, S, S) :- !.
long_arg(I, T, Min, S0, S) :-
    arg(I, T, A),
    (   string(A) -> string_length(A, L), S1 is S0 + L ; S1 = S0 ),
    I1 is I - 1,
    long_arg(I1, T, Min, S1, S).

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

%   flush_columns: send the C buffer (its runs and values) and the new
%   terms to the receiver and start both afresh, whatever the receiver
%   does.  Called by the C sink when the buffer is full, and at the end.
flush_columns :-
    colbuf_rows(Rows),
    (   Rows =:= 0
    ->  true
    ;   nb_getval('$epsparql_columns', C),
        C = c(NewsHead, NewsLast, _, _, _, _, _, _, _, _, _),
        colbuf_take(Runs, Values, Kinds, Count, Lits),
        nb_linkarg(2, C, NewsHead),
        catch(send_cut(C, NewsHead, NewsLast, Runs, Values, Kinds, Count, Lits), E, true),
        colbuf_reset,
        (   var(E) -> true ; throw(E) )
    ).

%   send_cut(+C, +NewsHead, +NewsLast, +Runs, +Values, +Kinds, +Count, +Lits):
%   send, with the cells of NewsHead up to NewsLast, cutting the list
%   there for the call (no copy) and mending it after, whatever it does.
send_cut(C, NewsHead, NewsLast, Runs, Values, Kinds, Count, Lits) :-
    arg(2, NewsLast, NewsRest),
    nb_linkarg(2, NewsLast, []),
    arg(2, NewsHead, News),
    catch(send(C, News, Runs, Values, Kinds, Count, Lits), E, true),
    nb_linkarg(2, NewsLast, NewsRest),
    (   var(E) -> true ; throw(E) ).

%   A receiver that raises (it will take no more: a cap on answers was
%   reached, its output was closed) stops the call at once: the error is
%   kept and raised as a resource error, which the core never records as
%   a rule's error but passes up, so the rest of the batch is not run for
%   detections nobody takes.
send(C, News, Runs, Values, Kinds, Count, Lits) :-
    C = c(_, _, _, Receiver, _, _, Gen, _, Err0, _, _),
    (   Err0 == none
    ->  catch(janus:py_call(Receiver:take(Gen, News, Runs, Values, Kinds, Count, Lits)), E,
              ( nb_setarg(9, C, E),
                throw(error(resource_error(detection_receiver), E)) ))
    ;   true                            % an earlier buffer was lost: send no more
    ).
