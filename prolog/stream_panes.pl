/*  stream_panes: aggregates over a time window kept per pane, incrementally.

    The runtime of the windowed queries (stream_window.pl) evaluates most
    queries by reading their windows' contents at each instant.  A query
    whose relation is "aggregates of one triple pattern over one time
    window" (docs/DIALECTS.md, "Incremental aggregates"; the compiler,
    epsparql/rules/window_compile.py, decides) is kept here instead: each
    matching triple updates the aggregates of its group once, and an
    evaluation reads the groups' totals.

    Panes.  The window (t - A, t] is evaluated at instants that are all
    multiples of some L (its step, or the query's period); with G the
    greatest common divisor of A and L, pane J is the interval
    ((J-1)G, JG], and every window is a whole number of panes.  Per
    window, in the engine's module (the names come in pn/8, below):

        Store(c(Trie, Table)) the window's content (a set): from each
                              distinct match, the matched triple Key =
                              t(S, P, O), to the pane of its latest
                              occurrence; a match of atoms and a 64-bit
                              integer object in Table (C, pane_accum.c;
                              none when the Prolog code runs throughout,
                              pane_accumulator/1), any other in Trie.
        Store(J, Keys)        the keys t(S, P, O) of the matches that
                              entered pane J, in pane order (a match
                              that moved on to a later pane stays listed
                              and is skipped at expiry; a snapshot of an
                              earlier version lists Key-GK-AR, GK the
                              group key, AR the aggregate arguments:
                              read alike).
        Pane(J, Parts)        pane J's partial aggregates, Parts a list
                              GK-Acc in the standard order of GK (read by
                              J: first-argument indexing).
        Live(J)               the live panes, in increasing order.
        Unf(J)                the live panes not folded into Run yet.
        Run(Totals)           the window's totals over the panes folded
                              so far, a list GK-Acc in the same order
                              (groups with no match left are dropped).
        Raw(J)                panes that received any triple of the
                              window's stream (matching or not), for
                              C-SPARQL's "non-empty windows only".

    An arrival adds its match to a buffer of the pane it falls in (an
    array in the mutable state, at most buffer_size/1 long); the buffer
    is committed when the next pane starts, when it is full, and before
    anything reads the window (an evaluation, statistics, a snapshot).
    A commit takes the buffer's matches, keeps the new ones and moves
    those already in the window from their old pane (a new occurrence of
    a triple moves its contribution to the new pane), and merges them,
    folded per group, into the pane's partials.  An evaluation at t
    merges the panes up to t into the totals (once per pane, not once per
    arrival: the arrivals of a pane are done when t passes it), then, as
    the window moves past pane J, subtracts J's partials from the totals,
    forgets them, and removes the matches that expired.  (A change to a
    pane already folded, which only a new occurrence of an old triple or
    an occurrence at an instant already evaluated makes, goes to the
    totals at once.)  COUNT, SUM and AVG are subtracted that way; MIN, MAX
    and SAMPLE are kept per pane only and combined over the live panes at
    each evaluation (a value that moved stays in its old pane too, which
    is harmless: every window holding the old pane holds the new one).
    So an arrival costs a few steps and no database update, a pane one
    update per commit, an evaluation O(groups) merging of sorted lists
    (O(groups x panes) with MIN/MAX/SAMPLE), and memory is bounded by the
    window's content.  The folding point, the last pane that saw a
    triple and the buffer are kept in a mutable term ps(Folded, LastRaw,
    BufPane, BufCount, Buffer, Shape) of the caller's runtime state (Shape:
    what pane_segment/5 read of the window's match clause).

    A segment of arrivals (the events of a batch up to the next instant
    due) at a window whose match clause is one triple pattern with a
    constant predicate and nothing else to decide is taken in one foreign
    call (pane_segment/5): matching, panes, the content table and each
    pane's fold in C, the same steps as the buffer's commit.

    Accumulators: acc(N, A1, ..., Ak), N the number of matches, Ai per
    aggregate (specs agg(Op, Distinct, Sep) as in stream_relation.pl):
    count: the count of non-error values; sum/avg: i(C, I) while every
    value is xsd:integer-ranked (C the values, I their exact sum: the
    common case, a small term), else s(E, C, I, C1, S1, C2, S2, C3, S3)
    with E the errors, C the values, I the exact sum of the
    xsd:integer-ranked values and Ci/Si the count and sum of the decimal
    (encoded), float and double values (back to i/2 when those leave);
    min/max/sample: the value or none.
    Float and double sums are exact: x(Q, PosInf, NegInf, NaN), Q the
    rational sum of the finite values and the counts of the others, so a
    sum does not depend on the order in which values came or were taken
    out (panes committed in one piece or in two, one engine or partitions
    on Spark) and a long-running window does not drift; the float is made
    once, when the aggregate is read.
*/
:- module(stream_panes,
          [ pane_state/1,          % -State
            pane_reset/1,          % +State
            pane_commit/3,         % +Module, +Panes, +State
            pane_restored/2,       % +Module, +Panes
            pane_raw/4,            % +Module, +Panes, +State, +Tau
            pane_insert/7,         % +Module, +Panes, +State, +Key, +Tau, +GK, +AR
            pane_add/4,            % +Module, +Panes, +State, +Matches
            pane_segment/5,        % +Module, +Panes, +Match, +State, +Segment
            pane_segments/1,       % -Count
            segment_cut/8,         % +N, +Events, +Cmp, +Due, -Seg, -K, -Rest, -Last
            pane_index/3,          % +Tau, +Width, -J
            pane_advance/5,        % +Module, +Panes, +State, +Lo, +Hi
            pane_nonempty/4,       % +Module, +Panes, +Lo, +Hi
            pane_groups/5,         % +Module, +Panes, +Grouped, +Extras, -Groups
            pane_groups_native/5,  % +Module, +Panes, +Grouped, +Extras, -Groups
            pane_in_window/3,      % +Module, +Panes, +Key
            pane_clear/2,          % +Module, +Panes
            pane_content/3,        % +Module, +Panes, -N
            pane_declare/2,        % +Module, +Panes
            pane_predicates/2,     % +Panes, -PIs
            entails/8,             % +Module, +Reasoning, +S0, +P0, +O0, ?S, ?P, ?O
            pane_accumulator/1     % ?Mode
          ]).
:- set_prolog_flag(optimise, true).   % file-scoped: inline arithmetic
:- use_module(library(lists)).
:- use_module(library(apply)).
:- use_module(sparql_eval).
:- use_module(sparql_background).
:- use_module(stream_relation, [order_key/3]).
:- use_module(native, [native_library/2]).

%   pa_merge/5, pa_fold/3, pa_values/3: the per-group loops of the common
%   accumulators in C (prolog/c/pane_accum.c); each fails, binding
%   nothing, where the Prolog code below must run instead.
:- native_library(pane_accum, Lib),
   use_foreign_library(Lib, install_pane_accum).

%   native_off: the Prolog code runs for every call (pane_accumulator/1;
%   EPSPARQL_PANE_ACCUM=prolog at load time).  For the tests that check
%   both paths give the same answers.
:- dynamic native_off/0.
:- (   getenv('EPSPARQL_PANE_ACCUM', prolog) -> assertz(native_off) ; true ).

%!  pane_accumulator(?Mode) is det.
%
%   Mode native (the per-group loops in C where the accumulators allow
%   it, the default) or prolog (the Prolog code always: for tests).
pane_accumulator(Mode) :-
    var(Mode), !,
    (   native_off -> Mode = prolog ; Mode = native ).
pane_accumulator(native) :- !, retractall(native_off).
pane_accumulator(prolog) :- !, retractall(native_off), assertz(native_off).
pane_accumulator(Mode) :- domain_error(pane_accumulator, Mode).

%   Panes is pn(G, Specs, Store, Pane, Run, Live, Raw, Unf): the pane
%   width (a number, or at(Width, T0) for a closed-open window from T0)
%   and the aggregate specs, and the names of the window's predicates.

%!  pane_predicates(+Panes, -PIs) is det.
%
%   The window's dynamic predicates (what a snapshot holds of it:
%   Store/2, Pane/2, Run/1, Live/1, Unf/1, Raw/1; the trie Store/1 is
%   rebuilt from Store/2, pane_restored/2).
pane_predicates(pn(_, _, Store, Pane, Run, Live, Raw, Unf),
                [Store/2, Pane/2, Run/1, Live/1, Unf/1, Raw/1]).

%!  pane_declare(+Module, +Panes) is det.
%
%   Create the window's dynamic predicates in Module.
pane_declare(M, PN) :-
    PN = pn(_, _, Store, _, _, _, _, _),
    pane_predicates(PN, PIs),
    forall(member(PI, [Store/1|PIs]), dynamic(M:PI)).

%!  pane_state(-State) is det.
%
%   The mutable state of a new window: nothing folded, no pane seen, an
%   empty buffer, the shape of its match clause not read yet
%   (pane_segment/5).
pane_state(ps(NegInf, none, none, 0, Buffer, unknown)) :-
    NegInf is -inf,
    buffer_size(Size),
    functor(Buffer, buffer, Size).

%   Matches buffered before a commit, at most.
buffer_size(4096).

%!  pane_reset(+State) is det.
%
%   Make State that of a new window (its window was cleared).
pane_reset(St) :-
    NegInf is -inf,
    nb_setarg(1, St, NegInf), nb_setarg(2, St, none),
    nb_setarg(3, St, none), nb_setarg(4, St, 0).

%!  pane_clear(+Module, +Panes) is det.
pane_clear(M, PN) :-
    PN = pn(_, _, Store, _, _, _, _, _),
    pane_predicates(PN, PIs),
    forall(member(N/A, [Store/1|PIs]), ( functor(H, N, A), retractall(M:H) )).

%!  pane_content(+Module, +Panes, -N) is det.
%
%   The number of distinct matches in the window (committed).
pane_content(M, pn(_, _, Store, _, _, _, _, _), N) :-
    T =.. [Store, c(Trie, Table)],
    (   M:T
    ->  ( trie_property(Trie, value_count(N0)) -> true ; N0 = 0 ),
        ( Table == none -> N1 = 0 ; pa_count(Table, N1) ),
        N is N0 + N1
    ;   N = 0
    ).

%   pane_trie(+M, +Store, -Content): the window's content c(Trie, Table)
%   (made on first use: Table none when the Prolog code runs throughout).
pane_trie(M, Store, C) :-
    T =.. [Store, C0],
    (   M:T
    ->  C = C0
    ;   trie_new(Trie),
        (   native_off -> Table = none ; pa_table_new(Table) ),
        C = c(Trie, Table),
        T1 =.. [Store, C],
        assertz(M:T1)
    ).

%!  pane_restored(+Module, +Panes) is det.
%
%   The content trie of a window whose Store(J, Entries) facts were put
%   back (a snapshot): each match goes to the latest pane that lists it.
pane_restored(M, pn(_, _, Store, _, _, _, _, _)) :-
    T =.. [Store, _],
    retractall(M:T),
    pane_trie(M, Store, _),
    E =.. [Store, J, Entries],
    forall(M:E, forall(( member(X, Entries), entry_key(X, K) ),
                       ( content_for(M, Store, J, C), content_put(C, K, J) ))).

%   content_for(+M, +Store, +J, -C): the window's content c(Trie, Table)
%   for a match entering pane J; when J does not fit the C table's 64
%   bits (a time stamp past 2^63 s), every key of the table moves to the
%   trie first and the table is dropped for good (c(Trie, none)), so each
%   key keeps one home.
content_for(M, Store, J, C) :-
    pane_trie(M, Store, C0),
    (   C0 = c(Trie, Table), Table \== none,
        \+ ( J >= -9223372036854775808, J =< 9223372036854775807 )
    ->  pa_dump(Table, Pairs),
        forall(member(K-J1, Pairs), trie_put(Trie, K, J1)),
        T0 =.. [Store, C0],
        retract(M:T0),
        C = c(Trie, none),
        T1 =.. [Store, C],
        assertz(M:T1)
    ;   C = C0
    ).

content_put(c(Trie, Table), K, J) :-
    (   Table \== none, pa_put(Table, K, J) -> true ; trie_put(Trie, K, J) ).

trie_put(Trie, K, J) :-
    (   trie_lookup(Trie, K, _) -> trie_update(Trie, K, J) ; trie_insert(Trie, K, J) ).

%!  pane_index(+Tau, +Width, -J) is det.
%
%   The pane of a time stamp: ((J-1)Width, J Width] holds it (a float
%   time taken at its exact binary value); Width at(G, T0) (a closed-open
%   window from T0, docs/DIALECTS.md "Window semantics"): [T0 + (J-1)G,
%   T0 + J G) holds it.
pane_index(Tau, G, J) :- pane_of(Tau, G, J).

pane_of(Tau, at(G, T0), J) :- !,
    (   float(Tau) -> R is rationalize(Tau) ; R = Tau ),
    floor_div(R - T0, G, J0),
    J is J0 + 1.
pane_of(Tau, G, J) :-
    (   G == 1 -> J is ceiling(Tau)
    ;   float(Tau) -> R is rationalize(Tau), floor_div(-R, G, J0), J is -J0
    ;   floor_div(-Tau, G, J0), J is -J0
    ).

%   pane_limit(+Width, +X, -J): the last pane wholly at or before the
%   bound X of a window ((Lo, Hi] or, for at(G, T0), [Lo, Hi)): JG =< X,
%   or T0 + JG =< X.
pane_limit(at(G, T0), X, J) :- !, floor_div(X - T0, G, J).
pane_limit(G, X, J) :- floor_div(X, G, J).

%   floor_div(+X, +G, -Q): floor(X / G), exactly: X / G of two integers
%   is a float when G does not divide X, whose rounding moved pane
%   indices from 2^53 on (times in nanoseconds, say); the C code's were
%   exact, so the two paths differed.
floor_div(X0, G, Q) :-
    X is X0,
    (   integer(X), integer(G) -> Q is X div G ; Q is floor(X / G) ).

%!  pane_raw(+Module, +Panes, +State, +Tau) is det.
%
%   A triple of the window's stream arrived at Tau (matching or not).
pane_raw(M, PN, St, Tau) :-
    arg(1, PN, G),
    pane_of(Tau, G, J),
    raw_pane(M, PN, St, J).

raw_pane(M, pn(_, _, _, _, _, _, Raw, _), St, J) :-
    (   arg(2, St, J)
    ->  true
    ;   nb_setarg(2, St, J),
        H =.. [Raw, J],
        (   M:H -> true ; assertz(M:H) )
    ).

%!  pane_insert(+Module, +Panes, +State, +Key, +Tau, +GK, +AR) is det.
%
%   A match Key (t(S, P, O)) of the window's pattern occurred at Tau, in
%   group GK with aggregate arguments AR: it goes to the buffer.
pane_insert(M, PN, St, Key, Tau, GK, AR) :-
    arg(1, PN, G),
    pane_of(Tau, G, J),
    arg(3, St, BJ),
    (   BJ == J
    ->  true
    ;   pane_commit(M, PN, St),
        nb_setarg(3, St, J)
    ),
    arg(4, St, N0),
    N is N0 + 1,
    arg(5, St, Buffer),
    nb_setarg(N, Buffer, Key-GK-AR),
    nb_setarg(4, St, N),
    (   functor(Buffer, _, N) -> pane_commit(M, PN, St) ; true ).

%!  pane_commit(+Module, +Panes, +State) is det.
%
%   Add the buffered matches to the window: those not in it yet, and
%   those whose latest occurrence was in an earlier pane (taken out of
%   it), go to the buffer's pane, folded per group; the buffer is
%   emptied.
pane_commit(M, PN, St) :-
    arg(4, St, N),
    (   N =:= 0
    ->  true
    ;   nb_setarg(4, St, 0),
        arg(3, St, J),
        arg(5, St, Buffer),
        buffered(1, N, Buffer, Ms0),
        add_entries(M, PN, St, J, Ms0)
    ).

%!  pane_add(+Module, +Panes, +State, +Matches) is det.
%
%   Matches J-(Key-GK-AR), in nondecreasing order of their pane J, join
%   the window (the bulk way of pane_insert/7: added per pane at once,
%   after what the buffer holds).
pane_add(M, PN, St, Matches) :-
    pane_commit(M, PN, St),
    add_panes(Matches, M, PN, St).

%!  pane_segment(+Module, +Panes, +Match, +State, +Segment) is semidet.
%
%   The arrivals of Segment (e(triple(S, P, O), T1, Tau) items in time
%   order, no evaluation due among them) at the window, as raw panes and
%   pane_add/4 of the matches of Match would make them, in one foreign
%   call (pa_segment/7: matching, pane index, the content table, the
%   fold per group) when
%   Match's clause is one triple pattern with a constant predicate and
%   nothing else to decide (match_shape/3), no reasoning can entail that
%   predicate from another (decided per segment: the background may have
%   changed), and the times are integers.  Fails, having changed
%   nothing, otherwise: the caller matches the segment in Prolog.
pane_segment(M, PN, Match, St, Seg) :-
    \+ native_off,
    arg(6, St, Shape0),
    (   Shape0 == unknown
    ->  ( match_shape(M, Match, Shape1) -> true ; Shape1 = none ),
        nb_setarg(6, St, Shape1),
        Shape = Shape1
    ;   Shape = Shape0
    ),
    Shape = f(Reasoning, Fast),
    (   Reasoning == none -> true ; \+ sparql_background:bg_flags(M, flags(true, _)) ),
    PN = pn(G, Specs, Store, _, _, _, _, _),
    pane_trie(M, Store, c(Trie, Table)),
    Table \== none,
    pane_commit(M, PN, St),
    pa_segment(Fast, Specs, Table, G, Seg, RawJs, Panes),
    flag(pane_segments, K, K + 1),
    forall(member(RJ, RawJs), raw_pane(M, PN, St, RJ)),
    segment_panes(Panes, M, PN, St, Trie).

%!  segment_cut(+N, +Events, +Cmp, +Due, -Seg, -K, -Rest, -Last) is semidet.
%
%   The longest prefix Seg (K long, at most N, not empty) of Events
%   (e(triple(S, P, O), T1, Tau) items in time order) with time stamps
%   Cmp (< or =<) Due, Rest the events after it, Last the time stamp of
%   its last item: stream_window's segment of a batch, in C (pa_cut/8).
%   Fails, binding nothing, unless Due is an integer or infinite and the
%   time stamps it reads are integers (the caller cuts in Prolog then).
segment_cut(N, Events, Cmp, Due, Seg, K, Rest, Last) :-
    pa_cut(N, Events, Cmp, Due, Seg, K, Rest, Last).

%!  pane_segments(-Count) is det.
%
%   The segments taken by pane_segment/5's foreign call so far in this
%   process (for the tests that check where it applies).
pane_segments(N) :- flag(pane_segments, N, N).

segment_panes([], _, _, _, _).
segment_panes([p(J, Keys0, In0, Moved0, Rest, Part0)|Ps], M, PN, St, Trie) :-
    (   Rest == []
    ->  Keys = Keys0, Moved = Moved0,
        (   Part0 == none -> group_entries(In0, PN, Part) ; Part = Part0 )
    ;   entering_trie(Rest, Trie, J, In1, Moved1),
        entry_keys(In1, Keys1),
        append(Keys0, Keys1, Keys),
        append(Moved0, Moved1, Moved),
        (   Part0 == none
        ->  append(In0, In1, In),
            group_entries(In, PN, Part)
        ;   group_entries(In1, PN, Part1),
            arg(2, PN, Specs),
            merge_parts(Part0, Part1, Specs, plus, Part)
        )
    ),
    add_entered(M, PN, St, J, Keys, Part, Moved),
    segment_panes(Ps, M, PN, St, Trie).

group_entries(In, pn(_, Specs, _, _, _, _, _, _), Part) :-
    (   In == [] -> Part = [] ; group_parts(In, Specs, Part) ).

%   match_shape(+M, +Match, -Shape): Shape f(Reasoning, shape(P, GKs,
%   ARs)) if the window's match clause (window_compile.py) is exactly
%   Match(S, P0, O, t(S, P, O), GK, AR) :- entails(M, Reasoning, S, P0,
%   O, S, P, O) with P an IRI (not rdf:type under rdfs), S and O distinct
%   variables, GK and AR made of S, O (and 0 in AR): GKs and ARs their
%   positions (1 S, 3 O).  No FILTER, no computed value, one clause.
match_shape(M, Match, f(R, shape(P, GKs, ARs))) :-
    functor(H, Match, 6),
    predicate_property(M:H, number_of_clauses(1)),
    clause(M:H, Body),
    H =.. [_, S0, P0, O0, Key, GK, AR],
    strip_module(Body, _, B),
    B = entails(_, R, S1, P1, O1, S, P, O),
    S1 == S0, P1 == P0, O1 == O0,
    term_variables(v(S0, P0, O0, S, O), Vs),
    length(Vs, 5),                      % five distinct variables
    var(S0), var(P0), var(O0), var(S), var(O),
    atom(P),
    (   R == none -> true
    ;   R == rdfs, P \== 'http://www.w3.org/1999/02/22-rdf-syntax-ns#type'
    ),
    Key == t(S, P, O),
    args_positions(GK, gk, S, O, false, GKs),
    args_positions(AR, ar, S, O, true, ARs).

args_positions(T, Name, S, O, Zero, Ps) :-
    compound(T) -> T =.. [Name|As], As \== [], maplist(position(S, O, Zero), As, Ps)
    ;   T == Name, Ps = [].

position(S, O, Zero, A, P) :-
    (   A == S -> P = 1
    ;   A == O -> P = 3
    ;   Zero == true, A == 0 -> P = 0
    ).

add_panes([], _, _, _).
add_panes([J-X|Ms], M, PN, St) :-
    same_pane(Ms, J, Xs, Rest),
    add_entries(M, PN, St, J, [X|Xs]),
    add_panes(Rest, M, PN, St).

%   add_entries(+M, +PN, +St, +J, +Matches): matches Key-GK-AR of pane J
%   join the window: those new to it, and those whose latest occurrence
%   was in an earlier pane (taken out of it), folded per group.
add_entries(M, PN, St, J, Ms) :-
    % not sorted: a match met twice in the pane is found in the content the
    % second time and skipped (GK and AR follow from the match), and the
    % pane's entries are folded sorted by group (group_parts/3)
    PN = pn(_, _, Store, _, _, _, _, _),
    content_for(M, Store, J, C),
    entering(Ms, C, J, In, Moved),
    (   In == []
    ->  Keys = [], Part = []
    ;   entry_keys(In, Keys),
        group_entries(In, PN, Part)
    ),
    add_entered(M, PN, St, J, Keys, Part, Moved).

%   add_entered(+M, +PN, +St, +J, +Keys, +Part, +Moved): the matches Keys
%   entered pane J, Part their group keys and arguments folded per group
%   (Moved: those of them that left an earlier pane, J0-(GK-AR)).
add_entered(M, PN, St, J, Keys, Part, Moved) :-
    PN = pn(_, _, Store, _, _, _, _, _),
    (   Keys == []
    ->  true
    ;   E =.. [Store, J, Keys],
        assertz(M:E),
        arg(1, St, Folded),
        merge_into_pane(M, PN, J, Part, Folded)
    ),
    (   Moved == []
    ->  true
    ;   msort(Moved, Moves),
        take_out(Moves, M, PN, St)
    ).

%   entry_keys(+Entries, -Keys): the matches' keys (what Store(J, Keys)
%   keeps: their group keys and arguments are the panes' partials now).
entry_keys([], []).
entry_keys([K-_-_|Es], [K|Ks]) :- entry_keys(Es, Ks).

%   entry_key(+Entry, -Key): a key of Store(J, Keys); an older snapshot's
%   entries are Key-GK-AR.
entry_key(E, K) :-
    (   E = K0-_-_ -> K = K0 ; K = E ).

buffered(I, N, Buffer, Ms) :-
    (   I > N
    ->  Ms = []
    ;   arg(I, Buffer, X),
        Ms = [X|Rest],
        I1 is I + 1,
        buffered(I1, N, Buffer, Rest)
    ).

%   entering(+Matches, +Trie, +J, -In, -Moved): the matches that enter
%   pane J: new to the window, or moved from an earlier pane J0 (listed
%   in Moved as J0-(GK-AR)).
entering(Ms, c(Trie, Table), J, In, Moved) :-
    (   Table == none
    ->  entering_trie(Ms, Trie, J, In, Moved)
    ;   pa_enter(Table, J, Ms, In0, Moved0, Rest),
        (   Rest == []
        ->  In = In0, Moved = Moved0
        ;   entering_trie(Rest, Trie, J, In1, Moved1),
            append(In0, In1, In),
            append(Moved0, Moved1, Moved)
        )
    ).

entering_trie([], _, _, [], []).
entering_trie([K-GK-AR|Ms], Trie, J, In, Moved) :-
    (   trie_lookup(Trie, K, J0)
    ->  (   J0 =:= J
        ->  In = In1, Moved = Moved1
        ;   trie_update(Trie, K, J),
            In = [K-GK-AR|In1],
            Moved = [J0-(GK-AR)|Moved1]
        )
    ;   trie_insert(Trie, K, J),
        In = [K-GK-AR|In1], Moved = Moved1
    ),
    entering_trie(Ms, Trie, J, In1, Moved1).

%   group_parts(+Entries, +Specs, -Parts): Entries (K-GK-AR) folded per
%   group, as a list GK-Acc in the order of GK.
group_parts(Entries, Specs, Parts) :-
    entry_pairs(Entries, Pairs0),       % no findall: no copy of the entries
    msort(Pairs0, Pairs),
    fold_groups(Pairs, Specs, Parts).

entry_pairs([], []).
entry_pairs([_-GK-AR|Es], [GK-AR|Ps]) :- entry_pairs(Es, Ps).

fold_groups(Pairs, Specs, Parts) :-
    \+ native_off,
    pa_fold(Specs, Pairs, Parts0), !,
    Parts = Parts0.
fold_groups(Pairs, Specs, Parts) :-
    fold_groups_pl(Pairs, Specs, Parts).

fold_groups_pl([], _, []).
fold_groups_pl([GK-AR|Ps], Specs, [GK-Acc|Parts]) :-
    empty_acc(Specs, A0),
    acc_add(Specs, 1, AR, A0, A1),
    same_group(Ps, GK, Specs, A1, Acc, Rest),
    fold_groups_pl(Rest, Specs, Parts).

same_group([GK0-AR|Ps], GK, Specs, A0, Acc, Rest) :-
    GK0 == GK, !,
    acc_add(Specs, 1, AR, A0, A1),
    same_group(Ps, GK, Specs, A1, Acc, Rest).
same_group(Rest, _, _, Acc, Acc, Rest).

%   take_out(+Moves, +M, +PN, +St): Moves J0-(GK-AR) sorted by J0: each
%   match's contribution leaves its old pane J0 (MIN/MAX/SAMPLE stay),
%   and the totals if J0 is folded.
take_out([], _, _, _).
take_out([J0-X|Ms], M, PN, St) :-
    same_pane(Ms, J0, Xs, Rest),
    PN = pn(_, Specs, _, Pane, Run, _, _, _),
    msort([X|Xs], Pairs),
    fold_groups(Pairs, Specs, Part),
    P =.. [Pane, J0, Parts0],
    (   retract(M:P)
    ->  merge_parts(Parts0, Part, Specs, sub, Parts),
        P1 =.. [Pane, J0, Parts],
        assertz(M:P1)
    ;   true
    ),
    arg(1, St, Folded),
    (   J0 =< Folded -> update_run(M, Run, Specs, sub, Part) ; true ),
    take_out(Rest, M, PN, St).

same_pane([J-X|Ms], J0, [X|Xs], Rest) :- J =:= J0, !, same_pane(Ms, J0, Xs, Rest).
same_pane(Rest, _, [], Rest).

%   merge_into_pane(+M, +PN, +J, +Part, +Folded): Part joins pane J's
%   partials (and the totals if J is folded already).
merge_into_pane(M, PN, J, Part, Folded) :-
    PN = pn(_, Specs, _, Pane, Run, Live, _, Unf),
    P =.. [Pane, J, Parts0],
    (   retract(M:P)
    ->  merge_parts(Parts0, Part, Specs, plus, Parts),
        P1 =.. [Pane, J, Parts]
    ;   P1 =.. [Pane, J, Part],
        add_live(M, Live, J),
        (   J > Folded -> UnfJ =.. [Unf, J], assertz(M:UnfJ) ; true )
    ),
    assertz(M:P1),
    (   J =< Folded -> update_run(M, Run, Specs, plus, Part) ; true ).

%   Panes come in increasing order (their buffers are committed in time
%   order): Live(J) is appended, unless a later pane is live already.
add_live(M, Live, J) :-
    Last =.. [Live, L],
    (   \+ ( M:Last, L > J )
    ->  New =.. [Live, J], assertz(M:New)
    ;   findall(L, M:Last, Ls0), msort([J|Ls0], Ls),
        retractall(M:Last),
        forall(member(X, Ls), ( H =.. [Live, X], assertz(M:H) ))
    ).

%   update_run(+M, +Run, +Specs, +Op, +Part): the totals plus or minus Part.
update_run(M, Run, Specs, Op, Part) :-
    R =.. [Run, Totals0],
    (   retract(M:R) -> true ; Totals0 = [] ),
    merge_parts(Totals0, Part, Specs, Op, Totals),
    R1 =.. [Run, Totals],
    assertz(M:R1).

%   merge_parts(+Parts0, +Part, +Specs, +Op, -Parts): two lists GK-Acc in
%   the order of GK merged, the accumulators of a group in both added
%   (Op plus: MIN/MAX/SAMPLE too) or subtracted (Op sub: a group with no
%   match left is dropped).
merge_parts(Xs, Ys, Specs, Op, Out) :-
    \+ native_off,
    pa_merge(Specs, Op, Xs, Ys, Out0), !,
    Out = Out0.
merge_parts(Xs, Ys, Specs, Op, Out) :-
    (   Op == plus, needs_panes(Specs) -> Ext = true ; Ext = false ),   % once, not per group
    merge_parts(Xs, Ys, Specs, Op, Ext, Out).

merge_parts([], Ys, Specs, Op, _, Out) :- !,
    (   Op == plus -> Out = Ys ; dropped(Ys, Specs, Out) ).
merge_parts(Xs, [], _, _, _, Xs) :- !.
merge_parts([K1-A1|Xs], [K2-A2|Ys], Specs, Op, Ext, Out) :-
    compare(O, K1, K2),
    (   O == (=)
    ->  (   Op == plus
        ->  acc_plus(Specs, A1, A2, A3),
            (   Ext == true -> merge_extremes(Specs, A2, A3, A) ; A = A3 ),
            Out = [K1-A|Rest]
        ;   acc_sub(Specs, A1, A2, A),
            (   arg(1, A, 0) -> Out = Rest ; Out = [K1-A|Rest] )
        ),
        merge_parts(Xs, Ys, Specs, Op, Ext, Rest)
    ;   O == (<)
    ->  Out = [K1-A1|Rest],
        merge_parts(Xs, [K2-A2|Ys], Specs, Op, Ext, Rest)
    ;   (   Op == plus -> Out = [K2-A2|Rest] ; Out = Rest )     % sub: nothing to take from
    ,   merge_parts([K1-A1|Xs], Ys, Specs, Op, Ext, Rest)
    ).

dropped(_, _, []).

%!  pane_advance(+Module, +Panes, +State, +Lo, +Hi) is det.
%
%   Bring the window to (Lo, Hi] (multiples of the pane width; [Lo, Hi)
%   for a closed-open window, pane width at(G, T0)): fold the panes up to
%   Hi into the totals, forget the panes up to Lo and the matches whose
%   latest occurrence is at or before Lo (before Lo: closed-open).
pane_advance(M, PN, St, Lo, Hi) :-
    pane_commit(M, PN, St),
    PN = pn(G, Specs, Store, Pane, Run, Live, Raw, Unf),
    pane_limit(G, Hi, JHi),
    pane_limit(G, Lo, JLo),
    arg(1, St, F0),
    (   JHi > F0 -> nb_setarg(1, St, JHi) ; true ),
    first_panes(M, Unf, JHi, New),         % to fold in
    first_panes(M, Live, JLo, Gone),       % out of the window
    (   New == [], Gone == []
    ->  true
    ;   R =.. [Run, Totals0],
        (   retract(M:R) -> true ; Totals0 = [] ),
        maplist(pane_parts(M, Pane, keep), New, NewParts),
        maplist(pane_parts(M, Pane, drop), Gone, GoneParts),
        (   NewParts = [P1], GoneParts = [P2],      % one pane in, one out: one pass
            \+ native_off,
            pa_merge3(Specs, Totals0, P1, P2, Totals2)
        ->  Totals = Totals2
        ;   foldl(plus_parts(Specs, plus), NewParts, Totals0, Totals1),
            foldl(plus_parts(Specs, sub), GoneParts, Totals1, Totals)
        ),
        R1 =.. [Run, Totals],
        assertz(M:R1)
    ),
    RawP =.. [Raw, RJ],
    forall(( M:RawP, RJ =< JLo ), retract(M:RawP)),
    SP =.. [Store, SJ, Entries],
    (   M:SP,
        (   SJ =< JLo
        ->  retract(M:SP),
            pane_trie(M, Store, C),
            forget_entries(Entries, C, SJ),
            fail
        ;   true
        )
    ->  true
    ;   true
    ).

%   first_panes(+M, +Pred, +Limit, -Js): the clauses Pred(J) with J =<
%   Limit at the front (erased).
first_panes(M, Pred, Limit, Js) :-
    P =.. [Pred, J],
    (   M:P, J =< Limit
    ->  retract(M:P), Js = [J|Rest], first_panes(M, Pred, Limit, Rest)
    ;   Js = []
    ).

%   pane_parts(+M, +Pane, +What, +J, -Parts): pane J's partials ([] if
%   none), kept (keep: a pane folded into the totals) or forgotten (drop:
%   a pane leaving the window); plus_parts(+Specs, +Op, +Parts, +T0, -T):
%   the totals plus or minus them.
pane_parts(M, Pane, keep, J, Parts) :-
    P =.. [Pane, J, Parts0],
    (   M:P -> Parts = Parts0 ; Parts = [] ).
pane_parts(M, Pane, drop, J, Parts) :-
    P =.. [Pane, J, Parts0],
    (   retract(M:P) -> Parts = Parts0 ; Parts = [] ).

plus_parts(Specs, Op, Parts, T0, T) :-
    (   Parts == [] -> T = T0 ; merge_parts(T0, Parts, Specs, Op, T) ).

%   The matches of a pane that leaves the window leave the content,
%   unless they moved to a later pane.
forget_entries(Es, c(Trie, Table), J) :-
    (   Table == none
    ->  forget_trie(Es, Trie, J)
    ;   pa_forget(Table, J, Es, Rest),
        forget_trie(Rest, Trie, J)
    ).

forget_trie([], _, _).
forget_trie([X|Es], Trie, J) :-
    entry_key(X, K),
    (   trie_delete(Trie, K, J0)        % one trie step; put back if it moved on
    ->  ( J0 =:= J -> true ; trie_insert(Trie, K, J0) )
    ;   true
    ),
    forget_trie(Es, Trie, J).

%!  pane_nonempty(+Module, +Panes, +Lo, +Hi) is semidet.
%
%   Some triple of the window's stream arrived in (Lo, Hi] ([Lo, Hi) for
%   a closed-open window).
pane_nonempty(M, pn(G, _, _, _, _, _, Raw, _), Lo, Hi) :-
    pane_limit(G, Lo, JLo), pane_limit(G, Hi, JHi),
    P =.. [Raw, J],
    once(( M:P, J > JLo, J =< JHi )).

%!  pane_in_window(+Module, +Panes, +Key) is semidet.
%
%   The match Key is in the window (background matches that are also in
%   the window count once: the default graph is a merge).
pane_in_window(M, pn(_, _, Store, _, _, _, _, _), Key) :-
    T =.. [Store, c(Trie, Table)],
    M:T,
    (   Table == none
    ->  trie_lookup(Trie, Key, _)
    ;   pa_lookup(Table, Key, J),
        (   J == other -> trie_lookup(Trie, Key, _) ; J \== none )
    ).

%!  pane_groups(+Module, +Panes, +Grouped, +Extras, -Groups) is det.
%
%   Groups: GK-AV for each group with matches in the window (AV =
%   av(V1, ...) the aggregates' values, '$u' for an error), in the order
%   of their keys; without GROUP BY (Grouped false) exactly one group gk.
%   Extras: more matches as GK-AR pairs, counted for this evaluation
%   only (the background's, when the window's pattern reads the default
%   graph; the caller leaves out those already in the window).
pane_groups(M, Panes, Grouped, Extras, Groups) :-
    pane_pairs(M, Panes, Grouped, Extras, Specs, Pairs),
    (   \+ native_off, pa_values(Specs, Pairs, Groups0)
    ->  Groups = Groups0
    ;   maplist(group_values(Specs), Pairs, Groups)
    ).

%!  pane_groups_native(+Module, +Panes, +Grouped, +Extras, -Groups) is semidet.
%
%   As pane_groups/5 when every group's values are computed in C (an
%   integer, or an AVG's xsd:decimal n/3 term: no value a row's
%   projection would change); fails otherwise.
pane_groups_native(M, Panes, Grouped, Extras, Groups) :-
    \+ native_off,
    pane_pairs(M, Panes, Grouped, Extras, Specs, Pairs),
    pa_values(Specs, Pairs, Groups).

%   pane_pairs(+M, +Panes, +Grouped, +Extras, -Specs, -Pairs): the groups'
%   accumulators GK-Acc (with MIN/MAX/SAMPLE over the live panes, and the
%   extra matches).
pane_pairs(M, Panes, Grouped, Extras, Specs, Pairs) :-
    Panes = pn(_, Specs, _, Pane, Run, _, _, _),
    R =.. [Run, Totals],
    (   M:R -> true ; Totals = [] ),
    (   needs_panes(Specs)
    ->  Panes = pn(_, _, _, _, _, Live, _, _),
        L =.. [Live, J],
        P =.. [Pane, J, Parts],
        findall(Parts, ( M:L, M:P ), AllParts),
        foldl(extremes_parts(Specs), AllParts, [], Ext),
        with_extremes(Totals, Ext, Specs, Pairs0)
    ;   Pairs0 = Totals
    ),
    (   Extras == []
    ->  Pairs1 = Pairs0
    ;   msort(Extras, Es),
        fold_groups(Es, Specs, ExtraParts),
        merge_parts(Pairs0, ExtraParts, Specs, plus, Pairs1)
    ),
    (   Grouped == false, Pairs1 == []
    ->  empty_acc(Specs, E), Pairs = [gk-E]
    ;   Pairs = Pairs1
    ).

needs_panes(Specs) :-
    member(agg(Op, _, _), Specs), memberchk(Op, [min, max, sample]), !.

%   The MIN/MAX/SAMPLE of each group over the live panes: the panes'
%   partials merged, by group, with merge_extremes/4 only.
extremes_parts(Specs, Parts, E0, E) :- merge_ext(E0, Parts, Specs, E).

merge_ext([], Ys, _, Ys) :- !.
merge_ext(Xs, [], _, Xs) :- !.
merge_ext([K1-A1|Xs], [K2-A2|Ys], Specs, Out) :-
    compare(O, K1, K2),
    (   O == (=)
    ->  merge_extremes(Specs, A2, A1, A), Out = [K1-A|Rest], merge_ext(Xs, Ys, Specs, Rest)
    ;   O == (<)
    ->  Out = [K1-A1|Rest], merge_ext(Xs, [K2-A2|Ys], Specs, Rest)
    ;   Out = [K2-A2|Rest], merge_ext([K1-A1|Xs], Ys, Specs, Rest)
    ).

%   The totals (no extremes of their own: values are never taken out of
%   them) with each group's extremes from the panes.
with_extremes([], _, _, []).
with_extremes([GK-Acc0|Ts], Ext, Specs, [GK-Acc|Out]) :-
    no_extremes(Specs, Acc0, Acc1),
    ext_of(Ext, GK, Ext1, EA),
    (   EA == none -> Acc = Acc1 ; merge_extremes(Specs, EA, Acc1, Acc) ),
    with_extremes(Ts, Ext1, Specs, Out).

ext_of([K-A|Es], GK, Rest, EA) :-
    compare(O, K, GK),
    (   O == (=) -> EA = A, Rest = Es
    ;   O == (<) -> ext_of(Es, GK, Rest, EA)
    ;   EA = none, Rest = [K-A|Es]
    ).
ext_of([], _, [], none).

no_extremes(Specs, Acc0, Acc) :-
    \+ needs_panes(Specs), !,
    Acc = Acc0.
no_extremes(Specs, Acc0, Acc) :-
    Acc0 =.. [acc, N|As0],
    maplist(no_extreme, Specs, As0, As),
    Acc =.. [acc, N|As].

no_extreme(agg(Op, _, _), A0, A) :-
    (   memberchk(Op, [min, max, sample]) -> A = none ; A = A0 ).

group_values([S], GK-acc(N, A), GK-av(V)) :- !,       % one aggregate: the usual case
    value_one(N, S, A, V).
group_values(Specs, GK-Acc, GK-AV) :-
    acc_values(Specs, Acc, Vs),
    AV =.. [av|Vs].

		 /*******************************
		 *         ACCUMULATORS         *
		 *******************************/

empty_acc([S], acc(0, A)) :- !,
    empty_one(S, A).
empty_acc(Specs, Acc) :-
    maplist(empty_one, Specs, As),
    Acc =.. [acc, 0|As].

empty_one(agg(count_star, _, _), 0).
empty_one(agg(count, _, _), 0).
empty_one(agg(sum, _, _), i(0, 0)).
empty_one(agg(avg, _, _), i(0, 0)).
empty_one(agg(min, _, _), none).
empty_one(agg(max, _, _), none).
empty_one(agg(sample, _, _), none).

%   acc_add(+Specs, +Sign, +AR, +Acc0, -Acc): add (Sign 1) or remove
%   (Sign -1) one match's arguments.
acc_add([agg(Op, _, _)], Sign, AR, acc(N0, A0), acc(N, A)) :- !,   % one aggregate
    N is N0 + Sign,
    arg(1, AR, X),
    add_one(Op, Sign, X, A0, A).
acc_add(Specs, Sign, AR, Acc0, Acc) :-
    Acc0 =.. [acc, N0|As0],
    N is N0 + Sign,
    add_args(Specs, 1, Sign, AR, As0, As),
    Acc =.. [acc, N|As].

add_args([], _, _, _, [], []).
add_args([agg(Op, _, _)|Ss], I, Sign, AR, [A0|As0], [A|As]) :-
    arg(I, AR, X),
    add_one(Op, Sign, X, A0, A),
    I1 is I + 1,
    add_args(Ss, I1, Sign, AR, As0, As).

add_one(count_star, _, _, A, A).
add_one(count, Sign, X, C0, C) :-
    (   bad(X) -> C = C0 ; C is C0 + Sign ).
add_one(sum, Sign, X, S0, S) :- add_sum(Sign, X, S0, S).
add_one(avg, Sign, X, S0, S) :- add_sum(Sign, X, S0, S).
add_one(min, Sign, X, V0, V) :- extreme(min, Sign, X, V0, V).
add_one(max, Sign, X, V0, V) :- extreme(max, Sign, X, V0, V).
add_one(sample, Sign, X, V0, V) :-
    (   Sign > 0, V0 == none, \+ bad(X) -> V = X ; V = V0 ).

bad(X) :- ( X == '$error' ; X == '$u' ), !.

extreme(Which, Sign, X, V0, V) :-
    (   Sign < 0 ; bad(X) )
    ->  V = V0                           % removals leave MIN/MAX alone
    ;   V0 == none
    ->  V = X
    ;   better(Which, X, V0) -> V = X
    ;   V = V0.

better(min, X, Y) :- order_key(asc, X, KX), order_key(asc, Y, KY), KX @< KY.
better(max, X, Y) :- order_key(asc, X, KX), order_key(asc, Y, KY), KX @> KY.

%   i(C, I) (every value an xsd:integer, the common case: a small term
%   to copy, store and merge) or s(E, C, I, C1, S1, C2, S2, C3, S3)
add_sum(Sign, X, i(C0, I0), S) :- !,
    (   (   integer(X) -> V = X
        ;   X = n(V, DT, _), integer(V), int_type(DT)
        )
    ->  C is C0 + Sign, I is I0 + Sign * V,
        S = i(C, I)
    ;   add_sum(Sign, X, s(0, C0, I0, 0, 0, 0, 0, 0, 0), S)
    ).
add_sum(Sign, X, s(E0, C0, I0, C10, S10, C20, S20, C30, S30), S) :-
    C is C0 + Sign,
    (   (   integer(X) -> V = X         % a bare xsd:integer
        ;   X = n(V, DT, _), integer(V), int_type(DT)
        )
    ->  I is I0 + Sign * V,
        S = s(E0, C, I, C10, S10, C20, S20, C30, S30)
    ;   numeric_rank(X, R)
    ->  (   R =:= 1 -> rank_add(Sign, X, C10, S10, C1, S1), S = s(E0, C, I0, C1, S1, C20, S20, C30, S30)
        ;   R =:= 2 -> rank_add(Sign, X, C20, S20, C2, S2), S = s(E0, C, I0, C10, S10, C2, S2, C30, S30)
        ;   rank_add(Sign, X, C30, S30, C3, S3), S = s(E0, C, I0, C10, S10, C20, S20, C3, S3)
        )
    ;   E is E0 + Sign,                  % not a number: SUM and AVG are errors
        S = s(E, C, I0, C10, S10, C20, S20, C30, S30)
    ).

rank_add(Sign, X, C0, S0, C, S) :-
    C is C0 + Sign,
    (   sparql_float_value(X, _, V), exact(S0, E0), E0 = x(_, _, _, _)
    ->  exact_add(Sign, V, E0, E1),
        (   C =:= 0 -> S = 0 ; S = E1 )
    ;   C =:= 0 -> S = 0
    ;   C0 =:= 0 -> S = X
    ;   Sign > 0 -> sparql_eval(add(const(S0), const(X)), S)
    ;   sparql_eval(sub(const(S0), const(X)), S)
    ).

%   exact(+S, -X): a float sum slot as x(Q, PosInf, NegInf, NaN) (0 is
%   the empty sum).
exact(0, x(0, 0, 0, 0)) :- !.
exact(X, X).

exact_add(Sign, V, x(Q0, P0, N0, A0), x(Q, P, N, A)) :-
    (   float_class(V, nan) -> Q = Q0, P = P0, N = N0, A is A0 + Sign
    ;   float_class(V, infinite)
    ->  Q = Q0, A = A0, ( V > 0 -> P is P0 + Sign, N = N0 ; N is N0 + Sign, P = P0 )
    ;   Q is Q0 + Sign * rational(V), P = P0, N = N0, A = A0
    ).

%   exact_term(+Rank, +X, -Term): the sum as the literal arithmetic
%   would give (NaN if any NaN or both infinities, else an infinity,
%   else the float of the exact sum).
exact_term(R, x(_, P, N, A), T) :-
    (   A > 0 ; P > 0, N > 0 ), !,
    V is nan, sparql_float_term(R, V, T).
exact_term(R, x(_, P, _, _), T) :- P > 0, !, V is inf, sparql_float_term(R, V, T).
exact_term(R, x(_, _, N, _), T) :- N > 0, !, V is -inf, sparql_float_term(R, V, T).
exact_term(R, x(Q, _, _, _), T) :- V is float(Q), sparql_float_term(R, V, T).

int_type('http://www.w3.org/2001/XMLSchema#integer') :- !.
int_type(DT) :- numeric_rank(n(0, DT, ""), 0).

%   numeric_rank(+Term, -Rank): 0 integer (and derived), 1 decimal,
%   2 float, 3 double (the non-finite ones are t/2).
numeric_rank(n(_, DT, _), R) :- rank(DT, R), !.
numeric_rank(X, R) :- number(X), !, ( integer(X) -> R = 0 ; R = 3 ).   % bare
numeric_rank(t(_, DT), R) :-
    (   DT == 'http://www.w3.org/2001/XMLSchema#float' -> R = 2
    ;   DT == 'http://www.w3.org/2001/XMLSchema#double' -> R = 3
    ).

rank(DT, R) :-
    atom(DT),
    atom_concat('http://www.w3.org/2001/XMLSchema#', Local, DT),
    rank_local(Local, R).

rank_local(integer, 0).
rank_local(decimal, 1).
rank_local(float, 2).
rank_local(double, 3).
rank_local(L, 0) :-
    memberchk(L, [int, long, short, byte, nonNegativeInteger, positiveInteger,
                  negativeInteger, nonPositiveInteger, unsignedLong, unsignedInt,
                  unsignedShort, unsignedByte]).

%   acc_sub(+Specs, +Acc0, +Part, -Acc): Acc0 minus a pane's partial Part
%   (COUNT, SUM, AVG, the match count; MIN/MAX/SAMPLE are not totals).
acc_sub([S], acc(N0, A0), acc(NP, P), acc(N, A)) :- !,
    N is N0 - NP,
    sub_one(S, A0, P, A).
acc_sub(Specs, Acc0, Part, Acc) :-
    Acc0 =.. [acc, N0|As0],
    Part =.. [acc, NP|Ps],
    N is N0 - NP,
    maplist(sub_one, Specs, As0, Ps, As),
    Acc =.. [acc, N|As].

%   acc_plus(+Specs, +Acc0, +Part, -Acc): Acc0 plus a pane's partial Part.
acc_plus([S], acc(N0, A0), acc(NP, P), acc(N, A)) :- !,
    N is N0 + NP,
    plus_one(S, A0, P, A).
acc_plus(Specs, Acc0, Part, Acc) :-
    Acc0 =.. [acc, N0|As0],
    Part =.. [acc, NP|Ps],
    N is N0 + NP,
    maplist(plus_one, Specs, As0, Ps, As),
    Acc =.. [acc, N|As].

plus_one(agg(count, _, _), A, P, C) :- !, C is A + P.
plus_one(_, i(C0, I0), i(C1, I1), S) :- !,
    C is C0 + C1, I is I0 + I1,
    S = i(C, I).
plus_one(Spec, A, P, S) :-
    ( A = i(_, _) ; P = i(_, _) ), !,
    full_sum(A, A1), full_sum(P, P1),
    plus_one(Spec, A1, P1, S).
plus_one(agg(Op, _, _), s(E0, C0, I0, C10, S10, C20, S20, C30, S30),
         s(E1, C1, I1, C11, S11, C21, S21, C31, S31), S) :-
    memberchk(Op, [sum, avg]), !,
    E is E0 + E1, C is C0 + C1, I is I0 + I1,
    part_plus(C10, S10, C11, S11, C1x, S1x),
    part_plus(C20, S20, C21, S21, C2x, S2x),
    part_plus(C30, S30, C31, S31, C3x, S3x),
    S = s(E, C, I, C1x, S1x, C2x, S2x, C3x, S3x).
plus_one(_, A, _, A).

part_plus(C0, S0, CP, SP, C, S) :-
    C is C0 + CP,
    (   ( S0 = x(_, _, _, _) ; SP = x(_, _, _, _) )
    ->  (   C =:= 0 -> S = 0
        ;   exact(S0, X0), exact(SP, XP), exact_merge(1, X0, XP, X) -> S = X
        ;   S = '$error'
        )
    ;   C =:= 0 -> S = 0
    ;   CP =:= 0 -> S = S0
    ;   C0 =:= 0 -> S = SP
    ;   sparql_eval(add(const(S0), const(SP)), S)
    ).

sub_one(agg(count, _, _), A, P, C) :- !, C is A - P.
sub_one(_, i(C0, I0), i(C1, I1), S) :- !,
    C is C0 - C1, I is I0 - I1,
    S = i(C, I).
sub_one(Spec, A, P, S) :-
    ( A = i(_, _) ; P = i(_, _) ), !,
    full_sum(A, A1), full_sum(P, P1),
    sub_one(Spec, A1, P1, S0),
    compact_sum(S0, S).
sub_one(agg(Op, _, _), s(E0, C0, I0, C10, S10, C20, S20, C30, S30),
        s(E1, C1, I1, C11, S11, C21, S21, C31, S31), S) :-
    memberchk(Op, [sum, avg]), !,
    E is E0 - E1, C is C0 - C1, I is I0 - I1,
    part_sub(C10, S10, C11, S11, C1x, S1x),
    part_sub(C20, S20, C21, S21, C2x, S2x),
    part_sub(C30, S30, C31, S31, C3x, S3x),
    S = s(E, C, I, C1x, S1x, C2x, S2x, C3x, S3x).
sub_one(_, A, _, A).

part_sub(C0, S0, CP, SP, C, S) :-
    C is C0 - CP,
    (   ( S0 = x(_, _, _, _) ; SP = x(_, _, _, _) )
    ->  (   C =:= 0 -> S = 0
        ;   exact(S0, X0), exact(SP, XP), exact_merge(-1, X0, XP, X) -> S = X
        ;   S = '$error'
        )
    ;   C =:= 0 -> S = 0
    ;   CP =:= 0 -> S = S0
    ;   sparql_eval(sub(const(S0), const(SP)), S)
    ).

%   full_sum(+Sum, -S9): a sum accumulator as s/9; compact_sum(+S9, -Sum):
%   back to i/2 when only xsd:integer values are left in it.
full_sum(i(C, I), s(0, C, I, 0, 0, 0, 0, 0, 0)) :- !.
full_sum(S, S).

compact_sum(S, i(C, I)) :- S = s(0, C, I, 0, _, 0, _, 0, _), !.
compact_sum(S, S).

%   merge_extremes(+Specs, +PaneAcc, +Acc0, -Acc): MIN/MAX/SAMPLE of a
%   pane into the group's total.
merge_extremes(Specs, _, Acc0, Acc) :-
    \+ needs_panes(Specs), !,
    Acc = Acc0.
merge_extremes([S], acc(_, P), acc(N, A0), acc(N, A)) :- !,
    merge_one(S, A0, P, A).
merge_extremes(Specs, Part, Acc0, Acc) :-
    Acc0 =.. [acc, N|As0],
    Part =.. [acc, _|Ps],
    maplist(merge_one, Specs, As0, Ps, As),
    Acc =.. [acc, N|As].

merge_one(agg(Op, _, _), A, P, V) :-
    (   memberchk(Op, [min, max]), P \== none
    ->  extreme(Op, 1, P, A, V)
    ;   Op == sample, A == none, P \== none
    ->  V = P
    ;   V = A
    ).

%   acc_values(+Specs, +Acc, -Values): the aggregates (stream_relation's
%   aggregate/4 on the same values gives the same results).
acc_values(Specs, Acc, Vs) :-
    Acc =.. [acc, N|As],
    maplist(value_one(N), Specs, As, Vs).

%   An xsd:integer result is the bare integer (the codec's form).
value_one(N, agg(count_star, _, _), _, N) :- !.
value_one(_, agg(count, _, _), C, C) :- !.
value_one(_, agg(sum, _, _), S, V) :- !,
    (   sum_term(S, T) -> V = T ; V = '$u' ).
value_one(_, agg(avg, _, _), i(C, I), V) :- !,
    (   C =:= 0 -> V = 0 ; integer_avg(I, C, V) ).
value_one(_, agg(avg, _, _), S, V) :- !,
    arg(2, S, C),
    (   C =:= 0 -> V = 0
    ;   S = s(0, _, I, 0, _, 0, _, 0, _)
    ->  integer_avg(I, C, V)            % every value an xsd:integer: the common case
    ;   sum_term(S, T),
        sparql_eval(div(const(T), const(C)), V0), V0 \== '$error'
    ->  V = V0
    ;   V = '$u'
    ).

value_one(_, agg(_, _, _), X, V) :-
    (   X == none -> V = '$u' ; V = X ).

%   integer_avg(+Sum, +Count, -Decimal): what sparql_eval gives for
%   div(const(Sum), const(Count)) on two integers (the quotient rounded to
%   18 fractional digits, as xsd:decimal in canonical form, its value the
%   float of that numeral), without going through the numeral's text
%   twice: an average is computed per group and evaluation.
integer_avg(I, C, n(V, 'http://www.w3.org/2001/XMLSchema#decimal', L)) :-
    P = 1000000000000000000,
    A is abs(I),
    S is (2 * A * P + C) // (2 * C),    % round(A * P / C), halves away from zero
    Ip is S // P,
    Fr is S mod P,
    (   Fr =:= 0
    ->  FS = "0"
    ;   frac_digits(Fr, 18, F, D),
        F1 is F + 10^D,                 % 1 and the D digits of F
        number_string(F1, FS1),
        sub_string(FS1, 1, _, 0, FS)
    ),
    number_string(Ip, IS),
    (   S =\= 0, I < 0 -> atomics_to_string(["-", IS, ".", FS], L)
    ;   atomics_to_string([IS, ".", FS], L)
    ),
    number_string(V, L).

%   frac_digits(+Fr, +D0, -F, -D): Fr, D0 fractional digits, without its
%   trailing zeros: F, D digits (16, 8, 4, 2, then 1 zero at a time: an
%   average of ten integers has 17).
frac_digits(F0, D0, F, D) :-
    strip_zeros(F0, D0, 10000000000000000, 16, F1, D1),
    strip_zeros(F1, D1, 100000000, 8, F2, D2),
    strip_zeros(F2, D2, 10000, 4, F3, D3),
    strip_zeros(F3, D3, 100, 2, F4, D4),
    strip_zeros(F4, D4, 10, 1, F, D).

strip_zeros(F0, D0, P, K, F, D) :-
    (   F0 mod P =:= 0 -> F is F0 // P, D is D0 - K ; F = F0, D = D0 ).

sum_term(i(_, I), I) :- !.
sum_term(s(0, _, I, C1, S1, C2, S2, C3, S3), T) :-
    foldl(add_part, [1-(C1-S1), 2-(C2-S2), 3-(C3-S3)], I, T),
    T \== '$error'.

add_part(R-(C-S0), T0, T) :-
    (   C =:= 0 -> T = T0
    ;   T0 == '$error' -> T = T0
    ;   ( S0 = x(_, _, _, _) -> exact_term(R, S0, S) ; S = S0 ),
        sparql_eval(add(const(T0), const(S)), T)
    ).

exact_merge(Sign, x(Q0, P0, N0, A0), x(Q1, P1, N1, A1), x(Q, P, N, A)) :-
    Q is Q0 + Sign * Q1, P is P0 + Sign * P1, N is N0 + Sign * N1, A is A0 + Sign * A1.

		 /*******************************
		 *      ENTAILED MATCHES        *
		 *******************************/

%!  entails(+Module, +Reasoning, +S0, +P0, +O0, ?S, ?P, ?O) is nondet.
%
%   The triples a stream triple S0 P0 O0 gives a window pattern S P O:
%   itself, and with Reasoning rdfs what stream_window:win_match/8
%   entails from it (sub-classes and the domain and range of its
%   property for rdf:type patterns, sub-properties otherwise), each once.
entails(_, none, S0, P0, O0, S, P, O) :- !,
    S = S0, P = P0, O = O0.
entails(M, rdfs, S0, P0, O0, S, P, O) :-
    Type = 'http://www.w3.org/1999/02/22-rdf-syntax-ns#type',
    (   P == Type
    ->  distinct(S-O,
                 (   P0 == Type, S = S0, sub_class(M, O0, O)
                 ;   P0 \== Type, entailed_type(M, P0, Role, O),
                     ( Role == subject -> S = S0 ; S = O0 )
                 ))
    ;   nonvar(P)
    ->  S = S0, O = O0,
        (   sparql_background:bg_flags(M, flags(true, _))
        ->  once(stream_property(M, P0, P))
        ;   P = P0
        )
    ;   S = S0, O = O0,
        (   sparql_background:bg_flags(M, flags(true, _))
        ->  distinct(P, sub_property(M, P0, P))
        ;   P = P0
        )
    ).
