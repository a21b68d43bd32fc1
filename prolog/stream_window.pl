/*  stream_window: windows over named RDF streams, evaluated on the watermark.

    The runtime of the window-based stream dialects (C-SPARQL, CQELS,
    SPARQLstream, Streaming SPARQL, LUPOSDATE, RSP-QL; docs/DIALECTS.md).
    It lives in the engine's module, next to the EP-SPARQL rules, the
    background knowledge (sparql_background.pl) and the expression
    evaluator (sparql_eval.pl) it shares with them.

    A registered query (sw_register/2) names its windows, its report
    policy and its relation-to-stream operator, and a compiled clause
    swe<N>(Bounds, Rows) in the engine module (written by
    epsparql/rules/window_compile.py) that evaluates its SPARQL part over
    the windows' contents at one instant.  Occurrences arrive in order of
    their time stamp τ (their end time) through sw_push/2.  Before an
    occurrence with τ is stored, every instant t < τ that a query's policy
    names is complete, and is evaluated (in the order of the instants,
    then of registration); for a query with closed-open windows (co/5:
    C-SPARQL's and RSP-QL's [t0 + kβ, t0 + kβ + ω), read at their closes
    over the occurrences before them) every instant t =< τ.  sw_advance/2 and sw_flush/1 complete instants
    without data.

    Window state.  Each window keeps its content incrementally, in a
    dynamic predicate of the engine module (one per window):

        Store(Key, G, S, P, O, Tau, Seq)

    one clause per distinct triple in the window (the content is an RDF
    graph, a set), with the time Tau and arrival number Seq of its latest
    occurrence; Key is a hash of the triple (first-argument index).  A
    new occurrence of a triple replaces its clause, so the clauses are in
    the order of their latest occurrences and the expired ones are at
    the front: the garbage collection before each evaluation removes
    them from the front, at a cost proportional to what expires.  Memory
    is bounded by the windows' contents.  A window wholly in the past
    (SPARQLstream's `NOW - a TO NOW - d`) also keeps the occurrences not
    yet old enough for it, in Pending(Tau, Seq, G, S, P, O).  The window
    of an aggregate query over one triple pattern may instead keep its
    matches and per-pane aggregates (stream_panes.pl): it is then updated
    per arrival and read per pane, never re-scanned.

    Runtime state.  The clock, the late count, the next instant due and
    each query's progress (started, next step instants, pending arrival
    instant, occurrences counted) are one term

        rt(Clock, Late, Due, Queries)

    stored in sw_rt/1, read once per call, updated in place (nb_setarg/3)
    while a batch is pushed, and stored back at the end: a batch costs
    two database updates for it, not two per occurrence.

    Streams that queries write.  A CONSTRUCT query registered with an
    output stream (sw_out/3) writes its answers' triples, stamped with the
    evaluation instant, on that stream right after the evaluations at
    that instant; other queries read them as pushed triples.

    Snapshots.  sw_export/2 writes the whole stream state (the runtime
    term, the windows' clauses in order, previous results) as one ground
    term; sw_import/2 checks such a term against the registered queries
    and puts it back.

    Times are exact numbers of seconds: window widths, steps and instants
    are integers or rationals (`100ms` is 1r10), and so are time stamps:
    the bridge takes a float stamp as the decimal it was written as (0.1 is
    1r10: bridge_python:exact_time/2), and exact/2 below does the same for
    a float that comes another way.  So a stamp falls in the window its
    written value says; times leave as floats again.
*/
:- module(stream_window,
          [ sw_register/2,       % +Module, +QueryDef
            sw_unregister/2,     % +Module, +Qid
            sw_push/2,           % +Module, +Items
            sw_push_events/3,    % +Module, +Batch, +Streams
            sw_with_sink/2,      % :Sink, :Goal
            sw_errors/2,         % +Module, -Errors
            sw_register_text/2,  % +Module, +Text
            sw_advance/2,        % +Module, +Time
            sw_flush/1,          % +Module
            sw_drain/2,          % +Module, -Answers
            sw_clear/1,          % +Module
            sw_destroy/1,        % +Module
            sw_stats/2,          % +Module, -Stats
            sw_windows/3,        % +Module, +SampleSize, -Windows
            win_match/8,         % +Module, +Store, +Hi, +Reasoning, ?G, ?S, ?P, ?O
            win_holds/7,         % +Module, +Store, +Hi, +Reasoning, +S, +P, +O
            timestamp_value/4,   % +Module, +Windows, +ArgExprs, -Value
            fresh_bnode/1,       % -BlankNode
            rdf_triple/1,        % +Triple
            sw_export/2,         % +Module, -State
            sw_import/2          % +Module, +State
          ]).
:- set_prolog_flag(optimise, true).
:- use_module(library(lists)).
:- use_module(library(apply)).
:- use_module(library(error)).
:- use_module(library(pairs)).
:- use_module(sparql_background).
:- use_module(stream_relation).
:- use_module(stream_panes).
:- use_module(epsparql_core, [message_text/2]).
:- use_module(sparql_eval, [sparql_eval/2, sparql_seconds_datetime/2]).
:- use_module(bridge_columns, [columns_groups/5]).

%   Per-engine dynamic predicates (created in the engine module).
sw_local(sw_q/2).          % sw_q(Qid, swq(Qid, Head, Windows, Policy, R2S, Pred))
sw_local(sw_rt/1).         % sw_rt(rt(Clock, Late, Due, Queries)): see the header
sw_local(sw_prev/2).       % sw_prev(Qid, Rows): the previous evaluation's result
sw_local(sw_n/3).          % sw_n(Store, G, N): occurrences per stream of a STREAM ?g window
sw_local(sw_ans/4).        % sw_ans(Qid, Answer, Start, End): answers not yet drained (no sink)
sw_local(sw_err/2).        % sw_err(Error, Context): errors not yet reported
sw_local(sw_out/3).        % sw_out(Qid, Stream, TemplatePred): a CONSTRUCT writing a stream
sw_local(sw_head/3).       % sw_head(Qid, Head, Fresh): answers' functor, blank nodes per answer
sw_local(sw_derived/1).    % sw_derived(o(G, S, P, O, T, T)): its triples of the instant
sw_local(sw_depth/2).      % sw_depth(T, N): rounds of derived triples at instant T
sw_local(sw_direct/4).     % sw_direct(Qid, Grouped, Map, Bg): rows are groups as they are

ensure_local(M) :-
    forall(sw_local(N/A), ( functor(H, N, A),
                            ( predicate_property(M:H, dynamic) -> true ; dynamic(M:N/A) ) )).

%   The runtime term.  Queries: q(Qid, Windows, Policy, R2S, Pred, St)
%   in registration order; St = st(Started, Nexts, Arrival, Count);
%   Windows: w(Store, Source, Kind, Seq, Mode), Seq the occurrences
%   stored so far, Mode plain or panes(Panes, MatchPred, PaneState).
load_rt(M, RT) :-
    (   M:sw_rt(RT0) -> RT = RT0 ; NegInf is -inf, RT = rt(NegInf, 0, inf, []) ).

save_rt(M, RT) :-
    retractall(M:sw_rt(_)),
    assertz(M:sw_rt(RT)).

%   with_rt(+M, :Goal): call Goal(RT) and store RT back, also when Goal
%   throws (the windows it has filled stay consistent with it).
with_rt(M, Goal) :-
    ensure_local(M),
    load_rt(M, RT),
    (   catch(call(Goal, RT), E, true) -> true ; E = error(goal_failed(Goal), _) ),
    save_rt(M, RT),
    (   var(E) -> true ; throw(E) ).

		 /*******************************
		 *         REGISTRATION         *
		 *******************************/

%!  sw_register(+Module, +QueryDef) is det.
%
%   QueryDef is
%
%     swq(Qid, Head, Windows, Policy, R2S, Pred)
%
%   Head the functor of the query's answers; Windows a list of
%   w(Store, Source, Kind) or w(Store, Source, Kind, panes(Panes,
%   Match)) in the order of the Bounds argument of Pred; Source all,
%   iri(Stream) or var (one window per stream); Kind one of
%   range(Width, Step) (Step none: no instants of its own), now, all,
%   count(N), past(Width, Delay, Step, PendingStore), co(Width, Step,
%   T0, Scope, PendingStore) (closed-open windows [T0 + k Step, T0 + k
%   Step + Width), each evaluated at its close, for every integer k
%   (Scope grid) or for k >= 0 (Scope from_t0): C-SPARQL's and RSP-QL's
%   engine reading, docs/DIALECTS.md "Window semantics"; PendingStore
%   none when the query is evaluated only at the window's closes),
%   oc(Width, Step, T0, Scope, PendingStore) (the same windows
%   open-closed, (T0 + k Step, T0 + k Step + Width]; T0 of either may be
%   first: the time stamp of the query's first arrival),
%   cc(Width, Step, T0, Scope) (read at arrival instants t: the earliest
%   of those windows still open at t, cut at t, T0 + k Step =< τ =< t:
%   CQELS as CSRBench's oracle reads it; T0 may be first);
%   panes(...): the
%   window keeps per-pane aggregates (Panes = pn(...), stream_panes.pl),
%   Match(S0, P0, O0, Key, GK, AR) giving the matches of an arriving
%   triple; Policy policy(Steps, ArrivalSources, Every, NonEmpty, Final):
%   the step sizes whose multiples are instants (or a co(...) kind: the
%   closes of its windows), the sources whose
%   arrival instants are instants, evaluate after every Every-th
%   occurrence (none: never), skip instants whose windows are all empty
%   (true/false), evaluate once at the end of input (true/false); R2S
%   rstream, istream or dstream; Pred the name of the evaluation
%   predicate (Pred(Bounds, Rows), Bounds = b(Hi1, ...)).
sw_register(M, Def) :-
    with_rt(M, register(M, Def)).

register(M, Def, RT) :-
    Def = swq(Qid, _Head, Ws, Policy, R2S, Pred),
    must_be(oneof([rstream, istream, dstream]), R2S),
    must_be(atom, Pred),
    (   M:sw_q(Qid, _) -> permission_error(register, window_query, Qid) ; true ),
    maplist(runtime_window(M), Ws, RWs),
    assertz(M:sw_q(Qid, Def)),
    assertz(M:sw_prev(Qid, [])),
    Def = swq(_, Head, _, _, _, _),
    must_be(atom, Head),
    assertz(M:sw_head(Qid, Head, 0)),
    arg(4, RT, Qs0),
    append(Qs0, [q(Qid, RWs, Policy, R2S, Pred, st(false, [], none, 0))], Qs),
    nb_setarg(4, RT, Qs).

runtime_window(M, w(Store, Src, Kind), w(Store, Src, Kind, 0, plain)) :- !,
    declare_window(M, Store, Kind).
runtime_window(M, w(Store, Src, Kind, panes(PN, Match)),
               w(Store, Src, Kind, 0, panes(PN, Match, St))) :-
    PN = pn(_, _, Store, _, _, _, _, _),
    pane_state(St),
    pane_declare(M, PN).

declare_window(M, Store, Kind) :-
    dynamic(M:Store/7),
    (   pending_store(Kind, Pending) -> dynamic(M:Pending/6) ; true ).

%   pending_store(+Kind, -Pending): the window keeps occurrences not yet
%   in its content (a past window's, a closed-open window's evaluated
%   between its closes) in Pending(Tau, Seq, G, S, P, O).
pending_store(past(_, _, _, Pending), Pending).
pending_store(co(_, _, _, _, Pending), Pending) :- Pending \== none.
pending_store(oc(_, _, _, _, Pending), Pending) :- Pending \== none.

%!  sw_unregister(+Module, +Qid) is det.
sw_unregister(M, Qid) :-
    with_rt(M, unregister(M, Qid)).

unregister(M, Qid, RT) :-
    arg(4, RT, Qs0),
    (   selectchk(q(Qid, Ws, _, _, _, _), Qs0, Qs)
    ->  forall(member(W, Ws), forget_window(M, W)),
        nb_setarg(4, RT, Qs)
    ;   true
    ),
    retractall(M:sw_q(Qid, _)),
    retractall(M:sw_prev(Qid, _)),
    retractall(M:sw_out(Qid, _, _)),
    retractall(M:sw_head(Qid, _, _)),
    retractall(M:sw_direct(Qid, _, _, _)),
    update_due(RT).

forget_window(M, w(Store, _, Kind, _, Mode)) :-
    (   Mode = panes(PN, _, St)
    ->  pane_clear(M, PN),
        pane_reset(St)
    ;   functor(H, Store, 7), retractall(M:H),
        retractall(M:sw_n(Store, _, _)),
        (   pending_store(Kind, P) -> functor(HP, P, 6), retractall(M:HP) ; true )
    ).

%!  sw_destroy(+Module) is det.
%
%   Remove every windowed query of Module: their windows, state and
%   evaluation clauses, and the runtime's own predicates (the engine is
%   being closed).
sw_destroy(M) :-
    ensure_local(M),
    forall(M:sw_q(Qid, swq(_, _, _, _, _, Pred)),
           ( sw_unregister(M, Qid), forget_clauses(M, Pred) )),
    forall(sw_local(N/A), ( functor(H, N, A), retractall(M:H) )).

forget_clauses(M, Pred) :-
    atom_concat(Pred, '_', Sub),
    forall(( current_predicate(M:N/A), ( N == Pred ; sub_atom(N, 0, _, _, Sub) ),
             functor(H, N, A), \+ predicate_property(M:H, imported_from(_)) ),
           retractall(M:H)).

%!  sw_clear(+Module) is det.
%
%   Forget the stream state (window contents, clocks, previous results,
%   answers), keep the queries.
sw_clear(M) :-
    with_rt(M, clear(M)).

clear(M, RT) :-
    arg(4, RT, Qs),
    forall(member(q(Qid, Ws, _, _, _, St), Qs),
           ( forall(member(W, Ws), ( forget_window(M, W), nb_setarg(4, W, 0) )),
             nb_setarg(1, St, false), nb_setarg(2, St, []),
             nb_setarg(3, St, none), nb_setarg(4, St, 0),
             retractall(M:sw_prev(Qid, _)), assertz(M:sw_prev(Qid, [])) )),
    NegInf is -inf,
    nb_setarg(1, RT, NegInf), nb_setarg(2, RT, 0), nb_setarg(3, RT, inf),
    retractall(M:sw_ans(_, _, _, _)),
    retractall(M:sw_err(_, _)),
    retractall(M:sw_derived(_)),
    retractall(M:sw_depth(_, _)).

		 /*******************************
		 *          THE STREAM          *
		 *******************************/

%!  sw_push(+Module, +Items) is det.
%
%   Items: o(Stream, S, P, O, T1, T2) in nondecreasing order of T2 (the
%   time stamp).  An item older than the clock is counted as late and
%   ignored (the Python side's reorder buffer sends none).
sw_push(M, Items) :-
    with_rt(M, push_items(Items, M)).

push_items([], _, _).
push_items([o(G, S, P, O, _T1, Tau)|Items], M, RT) :-
    push_item(G, S, P, O, Tau, M, RT),
    push_items(Items, M, RT).

%!  sw_push_events(+Module, +Batch, +Streams) is det.
%
%   The stream triples of an event batch of the core (Batch: a list of
%   e(triple(S, P, O), T1, T2) in nondecreasing order of T2, as the
%   Python bridge passes it to engine_events/2 too), their streams given
%   by Streams, a list of runs Stream-Count covering Batch in order.  As
%   sw_push/2 otherwise.
sw_push_events(M, Batch, Streams) :-
    with_rt(M, push_events(Streams, Batch, M)).

push_events([], Batch, _, _) :- !,
    (   Batch == [] -> true ; domain_error(stream_runs, Batch) ).
push_events([Run|Runs], Batch, M, RT) :-
    (   Run = G-N, atom(G), integer(N), N >= 0 -> true ; domain_error(stream_run, Run) ),
    push_run(N, Batch, Rest, G, M, RT),
    push_events(Runs, Rest, M, RT).

%   push_run(+N, +Batch, -Rest, +G, +M, +RT): the first N events of Batch
%   on stream G.  Where every query that reads G keeps only per-pane
%   windows, has started and evaluates only on its steps, the events up
%   to the next instant due are taken in bulk (a segment: no evaluation
%   can come between them; bulk_segment/4); else one by one.
push_run(0, Batch, Batch, _, _, _) :- !.
push_run(N, [E|Batch], Rest, G, M, RT) :-
    (   E = e(triple(S, P, O), _, Tau), number(Tau)
    ->  true
    ;   domain_error(stream_event, E)
    ),
    arg(1, RT, Now),
    arg(3, RT, Due),
    arg(4, RT, Qs),
    (   closed_open_due(Qs, Due) -> Cmp = (<) ; Cmp = (=<) ),
    (   N > 1, Tau >= Now, compare_time(Cmp, Tau, Due),
        bulk_queries(Qs, G, Bulk)
    ->  (   segment_cut(N, [E|Batch], Cmp, Due, Seg, K, Rest0, Last)   % in C
        ->  true
        ;   segment(N, [E|Batch], Cmp, Due, Seg, K, Rest0),
            last(Seg, e(_, _, Last))
        ),
        \+ \+ bulk_segment(Bulk, Seg, G, M),     % its terms are garbage: undone, not collected
        nb_setarg(1, RT, Last),
        N1 is N - K,
        push_run(N1, Rest0, Rest, G, M, RT)
    ;   push_item(G, S, P, O, Tau, M, RT),
        N1 is N - 1,
        push_run(N1, Batch, Rest, G, M, RT)
    ).

%   segment(+N, +Events, +Cmp, +Due, -Seg, -K, -Rest): the longest prefix
%   (at most N) of events with time stamps Cmp Due (at or before it; before
%   it when Due is the close of a closed-open window: an event at the
%   close comes after its evaluation) (nondecreasing: the reorder
%   buffer's order), K long.
segment(N, Events, Cmp, Due, Seg, K, Rest) :-
    segment_(N, Events, Cmp, Due, Seg, 0, K, Rest).

segment_(0, Events, _, _, [], K, K, Events) :- !.
segment_(N, [E|Es], Cmp, Due, [E|Seg], K0, K, Rest) :-
    E = e(triple(_, _, _), _, Tau), number(Tau), compare_time(Cmp, Tau, Due), !,
    N1 is N - 1, K1 is K0 + 1,
    segment_(N1, Es, Cmp, Due, Seg, K1, K, Rest).
segment_(_, Events, _, _, [], K, K, Events).

%   closed_open_due(+Queries, +Due): Due is the next instant of a query
%   with closed-open windows.
closed_open_due(Qs, Due) :-
    member(Q, Qs), closed_open_query(Q), q_next(Q, T), T =:= Due, !.

%   closed_open_query(+Q): Q has a closed-open window (co(...)): each of
%   its instants t is evaluated over the occurrences before t, so it is
%   complete once an occurrence at or after t arrives (not only after).
closed_open_query(q(_, Ws, _, _, _, _)) :-
    memberchk(w(_, _, co(_, _, _, _, _), _, _), Ws).

%   query_cmp(+Q, +Cmp, -QCmp): how Q's instants compare with the time
%   stamp of an arrival (Cmp <) or an advance (=<) that completes them.
query_cmp(Q, Cmp, QCmp) :-
    (   Cmp == (<), closed_open_query(Q) -> QCmp = (=<) ; QCmp = Cmp ).

%   bulk_queries(+Queries, +G, -Windows): every query reading stream G
%   can take a segment in bulk; Windows are their windows reading G
%   (w/5 terms with panes(...) mode).
bulk_queries([], _, []).
bulk_queries([Q|Qs], G, Bulk) :-
    Q = q(_, Ws, policy(_, Arr, Every, _, _), _, _, St),
    (   \+ accepts_any(Ws, policy([], Arr, Every, x, x), G)
    ->  Bulk = Bulk1
    ;   arg(1, St, true), Every == none,
        \+ ( member(Src, Arr), source_accepts(Src, G) ),
        bulk_windows(Ws, G, Bulk, Bulk1)
    ),
    bulk_queries(Qs, G, Bulk1).

bulk_windows([], _, Bulk, Bulk).
bulk_windows([W|Ws], G, Bulk, Tail) :-
    W = w(_, Src, Kind, _, Mode),
    (   source_accepts(Src, G)
    ->  Mode = panes(_, _, _),
        (   Kind = range(A, B) -> ( B == none ; B =< A )
        ;   Kind = co(A, B, _, _, _), B =< A
        ),
        Bulk = [W|Bulk1]
    ;   Bulk = Bulk1
    ),
    bulk_windows(Ws, G, Bulk1, Tail).

%   bulk_segment(+Windows, +Seg, +G, +M): a segment's arrivals at per-pane
%   windows, each window's matches found in one pass and added per pane
%   (in one foreign call where pane_segment/5 can, else here).
bulk_segment([], _, _, _).
bulk_segment([W|Ws], Seg, G, M) :-
    W = w(_, _, _, _, panes(PN, Match, St)),
    pane_segment(M, PN, Match, St, Seg), !,      % in one foreign call
    bulk_segment(Ws, Seg, G, M).
bulk_segment([W|Ws], Seg, G, M) :-
    W = w(_, _, _, _, panes(PN, Match, St)),
    arg(1, PN, PW),
    Goal =.. [Match, S, P, O, Key, GK, AR],
    catch(findall(J-(Key-GK-AR),
                  ( member(e(triple(S, P, O), _, Tau), Seg),
                    M:Goal,
                    pane_index(Tau, PW, J) ),
                  Ms),
          E, ( record_error(M, E, arrival(G, Seg)), Ms = [] )),
    raw_panes(Seg, M, PN, St),
    pane_add(M, PN, St, Ms),
    bulk_segment(Ws, Seg, G, M).

%   Every pane of the segment saw a triple of the window's stream (once
%   per time stamp: the segment is in time order).
raw_panes([], _, _, _).
raw_panes([e(_, _, Tau)|Es], M, PN, St) :-
    pane_raw(M, PN, St, Tau),
    raw_panes(Es, Tau, M, PN, St).

raw_panes([], _, _, _, _).
raw_panes([e(_, _, Tau)|Es], Tau0, M, PN, St) :-
    (   Tau == Tau0 -> true ; pane_raw(M, PN, St, Tau) ),
    raw_panes(Es, Tau, M, PN, St).

%   One occurrence: the instants before it are complete (evaluated), then
%   it arrives at each query that reads its stream.
push_item(G, S, P, O, Tau, M, RT) :-
    arg(1, RT, Now),
    (   Tau < Now
    ->  arg(2, RT, L), L1 is L + 1, nb_setarg(2, RT, L1)
    ;   (   Tau > Now
        ->  arg(3, RT, Due),
            (   Due =< Tau -> complete_instants(M, RT, <, Tau) ; true ),
            nb_setarg(1, RT, Tau)
        ;   true
        ),
        arg(4, RT, Qs),
        arrive_all(Qs, M, RT, G, S, P, O, Tau)
    ).

arrive_all([], _, _, _, _, _, _, _).
arrive_all([Q|Qs], M, RT, G, S, P, O, Tau) :-
    Q = q(Qid, Ws, Policy, _, _, St),
    (   accepts_any(Ws, Policy, G)
    ->  (   arg(1, St, false) -> exact(Tau, R), set_first_t0(Q, R) ; true ),
        store_all(Ws, M, Qid, G, S, P, O, Tau),
        note_arrival(M, RT, Q, G, Tau)
    ;   true
    ),
    arrive_all(Qs, M, RT, G, S, P, O, Tau).

%   set_first_t0(+Q, +T0): the windows on a grid from the first event
%   (T0 first: SECRET's t0 = the first time stamp on the query's streams)
%   start at T0, the query's first arrival (as are the steps of its policy).
set_first_t0(q(_, Ws, policy(Steps, _, _, _, _), _, _, _), T0) :-
    forall(member(w(_, _, Kind, _, _), Ws), set_first(Kind, T0)),
    forall(member(Step, Steps), set_first(Step, T0)).

set_first(Kind, T0) :-
    (   compound(Kind), functor(Kind, F, _), ( F == co ; F == oc ; F == cc ), arg(3, Kind, first)
    ->  nb_setarg(3, Kind, T0)
    ;   true
    ).

accepts_any(Ws, policy(_, Arr, _, _, _), G) :-
    (   member(w(_, Src, _, _, _), Ws), source_accepts(Src, G)
    ->  true
    ;   member(Src, Arr), source_accepts(Src, G)
    ->  true
    ).

source_accepts(all, _).
source_accepts(var, _).
source_accepts(iri(G), G).

store_all([], _, _, _, _, _, _, _).
store_all([W|Ws], M, Qid, G, S, P, O, Tau) :-
    arg(2, W, Src),
    (   source_accepts(Src, G) -> store_occurrence(M, Qid, W, G, S, P, O, Tau) ; true ),
    store_all(Ws, M, Qid, G, S, P, O, Tau).

%   The query's instants: start at the first arrival (first multiple of
%   each step at or after it, first close strictly after it), remember an
%   arrival instant, count.
note_arrival(M, RT, Q, G, Tau) :-
    Q = q(_, _, policy(Steps, Arr, Every, _, _), _, _, St),
    (   arg(1, St, true)
    ->  true
    ;   findall(N, ( member(Step, Steps), first_instant(Step, Tau, N) ), Nexts),
        nb_setarg(1, St, true),
        nb_setarg(2, St, Nexts),
        forall(member(n(_, X), Nexts), lower_due(RT, X))
    ),
    (   Arr \== [], member(Src, Arr), source_accepts(Src, G)
    ->  nb_setarg(3, St, Tau), lower_due(RT, Tau)
    ;   true
    ),
    (   Every == none
    ->  true
    ;   arg(4, St, Count0), Count is Count0 + 1,
        (   Count >= Every
        ->  nb_setarg(4, St, 0),
            evaluate(M, Q, Tau),
            drop_instant(Q, Tau),
            feed_derived(M, RT, Tau),
            update_due(RT)
        ;   nb_setarg(4, St, Count)
        )
    ).

lower_due(RT, T) :-
    arg(3, RT, Due),
    (   T < Due -> nb_setarg(3, RT, T) ; true ).

%   The next instant due over all started queries (inf: none).
update_due(RT) :-
    arg(4, RT, Qs),
    findall(T, ( member(Q, Qs), q_next(Q, T) ), Ts),
    (   Ts == [] -> Due = inf ; min_list(Ts, Due) ),
    nb_setarg(3, RT, Due).

q_next(q(_, _, _, _, _, st(true, Nexts, Arr, _)), T) :-
    next_instant(Nexts, Arr, T).

%   first_instant(+Step, +Tau, -Next): a step's first instant for a query
%   whose first arrival is at Tau: n(B, X), X the first multiple of B at
%   or after Tau, or for closed-open windows co(A, B, T0, Scope) the
%   first close after Tau (a window closing at Tau does not hold it), not
%   before the first window's (T0 + A) when they start at T0.
first_instant(co(A, B, T0, Scope), Tau, n(B, X)) :- !,
    exact(Tau, R),
    Off is T0 + A,
    X0 is Off + (floor((R - Off) / B) + 1) * B,
    (   Scope == from_t0 -> X is max(X0, Off) ; X = X0 ).
first_instant(oc(A, B, T0, Scope), Tau, n(B, X)) :- !,   % the first close at or after Tau
    exact(Tau, R),
    Off is T0 + A,
    X0 is Off + ceiling((R - Off) / B) * B,
    (   Scope == from_t0 -> X is max(X0, Off) ; X = X0 ).
first_instant(B, Tau, n(B, X)) :-
    first_multiple_at_or_after(Tau, B, X).

%   co_close(+Kind, +T, -C): the latest close at or before T of a
%   window on a grid co(A, B, T0, Scope[, Pending]) or oc(...) (its
%   closes T0 + A + kB).
co_close(Kind, T, C) :-
    arg(1, Kind, A), arg(2, Kind, B), arg(3, Kind, T0),
    exact(T, R),
    Off is T0 + A,
    C is Off + floor((R - Off) / B) * B.

%   Multiples of a step B near a time T, exactly (a float time is taken
%   at its exact binary value).
first_multiple_at_or_after(T, B, N) :-
    exact(T, R), K is ceiling(R / B), N is K * B.

floor_multiple(T, B, N) :-
    exact(T, R), K is floor(R / B), N is K * B.

%   A float time is the decimal it was written as (the simplest rational
%   it stands for), as the bridge takes stream times (exact_time/2 of
%   bridge_python.pl): 0.1 falls in the step of 1r10, not of its binary
%   approximation.
exact(T, R) :- ( float(T) -> R is rationalize(T) ; R = T ).

%!  sw_advance(+Module, +Time) is det.
%
%   No occurrence with a time stamp at or before Time will come:
%   evaluate every instant up to Time.
sw_advance(M, T) :-
    must_be(number, T),
    with_rt(M, advance(M, T)).

advance(M, T, RT) :-
    complete_instants(M, RT, =<, T),
    arg(1, RT, Now),
    Now1 is max(Now, T),
    nb_setarg(1, RT, Now1).

%!  sw_flush(+Module) is det.
%
%   End of input: every instant up to and including, for each query,
%   the first of its instants at or after the latest time stamp.
sw_flush(M) :-
    with_rt(M, flush(M)).

flush(M, RT) :-
    arg(1, RT, Now),
    (   Now =:= -inf
    ->  true
    ;   complete_instants(M, RT, =<, Now),
        arg(4, RT, Qs),
        forall(member(Q, Qs), flush_query(M, RT, Q, Now)),
        update_due(RT)
    ).

%   After the instants up to Now: the pending step instants (each the
%   first multiple of its step after Now), the pending arrival instant,
%   the occurrences counted since the last evaluation (Every), the final
%   evaluation.
%   A closed-open window's pending closes count up to the last window
%   that opened at or before Now (each window holding a triple is
%   evaluated, as CSRBench's oracle evaluates the windows opened up to the
%   end of the stream); an open-closed one's up to its first close at or
%   after Now (as a step's instants).
flush_query(M, RT, Q, Now) :-
    Q = q(_, _, policy(Steps, _, Every, _, Final), _, _, St),
    St = st(Started, Nexts, Arr, Count),
    (   Started == true
    ->  % a step's pending instant counts when its previous one was before Now
        findall(T, ( nth1(I, Nexts, n(B, T0)), nth1(I, Steps, Step),
                     flush_instant(Step, B, T0, Now, T) ), Ts0),
        (   Arr \== none -> Ts1 = [Arr|Ts0] ; Ts1 = Ts0 ),
        (   ( Every \== none, Count > 0 ; Final == true ) -> Ts2 = [Now|Ts1] ; Ts2 = Ts1 ),
        sort(Ts2, Ts),
        forall(member(T, Ts), ( evaluate(M, Q, T), drop_instant(Q, T), feed_derived(M, RT, T) )),
        nb_setarg(3, St, none),
        nb_setarg(4, St, 0)
    ;   true
    ).

%   complete_instants(+M, +RT, +Cmp, +Limit): evaluate, in order of
%   instant then registration, every instant T Cmp Limit that a started
%   query's policy names (T =< Limit for a query with closed-open windows
%   when Cmp is <: query_cmp/3).
complete_instants(M, RT, Cmp, Limit) :-
    arg(4, RT, Qs),
    findall(T, ( member(Q, Qs), q_due(Q, Cmp, Limit, T) ), Ts),
    (   Ts == []
    ->  update_due(RT)
    ;   min_list(Ts, T0),
        arg(1, RT, Now),
        forall(( member(Q, Qs), q_due(Q, Cmp, Limit, T), T =:= T0 ),
               (   empty_from(Q, T0, Now)
               ->  Q = q(_, Ws, _, _, _, _),          % what the windows hold expires
                   prepare_windows(Ws, M, T0, _, _, _, _),
                   query_cmp(Q, Cmp, QCmp),
                   skip_instants(Q, QCmp, Limit)
               ;   evaluate(M, Q, T0), drop_instant(Q, T0)
               )),
        feed_derived(M, RT, T0),
        complete_instants(M, RT, Cmp, Limit)
    ).

%   empty_from(+Q, +T, +Now): Q skips empty windows (C-SPARQL) and every
%   window of Q is empty at T and at every later instant until a triple
%   arrives: a time window whose lower bound is at or after Now, the
%   latest time stamp stored.  So its instants up to the next arrival are
%   skipped at once: a sparse stream with a fine step costs what its data
%   costs, not its span divided by the step (issue 25, finding 5).
empty_from(q(_, Ws, policy(_, _, _, true, _), _, _, st(true, _, none, _)), T, Now) :-
    Ws \== [],
    forall(member(w(_, _, Kind, _, _), Ws), empty_window(Kind, T, Now)).

empty_window(Kind, T, Now) :-
    (   Kind = range(_, _) ; Kind = co(_, _, _, _, _) ; Kind = oc(_, _, _, _, _) ; Kind == now ), !,
    window_bounds(Kind, T, _, Lo),
    (   Lo = lo(X) -> X >= Now ; Lo = ge(X) -> X > Now ).

%   skip_instants(+Q, +Cmp, +Limit): move Q's steps on to their first
%   instants not covered by Cmp Limit (those are due only once a triple
%   has come).
skip_instants(q(_, _, _, _, _, St), Cmp, Limit) :-
    arg(2, St, Nexts0),
    maplist(skip_step(Cmp, Limit), Nexts0, Nexts),
    nb_setarg(2, St, Nexts).

skip_step(Cmp, Limit, n(B, X0), n(B, X)) :-
    exact(Limit, R),
    (   Cmp == (<) -> X1 is X0 + ceiling((R - X0) / B) * B
    ;   X1 is X0 + (floor((R - X0) / B) + 1) * B
    ),
    X is max(X0, X1).

%   flush_instant(+Step, +B, +Next, +Now, -T): the pending instants of a
%   step at the end of input (see flush_query/4).
flush_instant(Step, B, X, Now, T) :-
    (   Step = co(A, _, _, _)
    ->  exact(Now, R),
        R1 is R + A,
        co_close(Step, R1, Lim),
        between_steps(X, B, Lim, T)
    ;   Step = oc(_, _, _, _)                   % up to the first close at or after Now,
    ->  first_instant(Step, Now, n(_, Lim)),    % as the CQL grid's instants
        between_steps(X, B, Lim, T)
    ;   X - B < Now, T = X
    ).

between_steps(X, B, Lim, T) :-
    X =< Lim,
    (   T = X
    ;   X1 is X + B, between_steps(X1, B, Lim, T)
    ).

q_due(Q, Cmp, Limit, T) :-
    q_next(Q, T),
    query_cmp(Q, Cmp, QCmp),
    compare_time(QCmp, T, Limit).

compare_time(<, A, B) :- A < B.
compare_time(=<, A, B) :- A =< B.

next_instant(Nexts, Arr, T) :-
    findall(X, member(n(_, X), Nexts), Xs0),
    (   Arr \== none -> Xs = [Arr|Xs0] ; Xs = Xs0 ),
    Xs \== [],
    min_list(Xs, T).

%   The instant T has been evaluated: move each step on past it (to the
%   next instant of its grid: the multiples of B, or a closed-open
%   window's closes), forget the arrival instant if it was T.
drop_instant(q(_, _, _, _, _, St), T) :-
    St = st(_, Nexts0, Arr0, _),
    maplist(step_past(T), Nexts0, Nexts),
    nb_setarg(2, St, Nexts),
    (   Arr0 \== none, Arr0 =< T -> nb_setarg(3, St, none) ; true ).

step_past(T, n(B, X0), n(B, X)) :-
    (   X0 =< T -> exact(T, R), X is X0 + (floor((R - X0) / B) + 1) * B ; X = X0 ).

		 /*******************************
		 *        WINDOW CONTENT        *
		 *******************************/

%   store_occurrence(+M, +Qid, +Window, +G, +S, +P, +O, +Tau)
%
%   An occurrence that falls between two windows of a window that samples
%   its stream (step > width: no instant t = kB has t - A < Tau =< t) is
%   in none of them, and is not kept.
store_occurrence(_, _, w(_, _, range(A, B), _, _), _, _, _, _, Tau) :-
    B \== none, B > A,
    first_multiple_at_or_after(Tau, B, T1),
    T1 - A >= Tau, !.
store_occurrence(_, _, w(_, _, Kind, _, _), _, _, _, _, Tau) :-
    Kind = co(A, B, T0, Scope, _),
    (   Scope == from_t0, Tau < T0                  % before the first window
    ->  true
    ;   B > A,                                      % between two windows
        first_instant(co(A, B, T0, Scope), Tau, n(_, C)),
        C - A > Tau
    ), !.
store_occurrence(_, _, w(_, _, Kind, _, _), _, _, _, _, Tau) :-
    Kind = oc(A, B, T0, Scope, _),
    (   Scope == from_t0, Tau =< T0                 % before the first window (T0, T0 + A]
    ->  true
    ;   B > A,                                      % between two windows
        first_instant(oc(A, B, T0, Scope), Tau, n(_, C)),
        C - A >= Tau
    ), !.
store_occurrence(M, Qid, W, G0, S, P, O, Tau) :-
    W = w(Store, Src, Kind, _, Mode),
    (   Mode = panes(PN, Match, St)
    ->  pane_raw(M, PN, St, Tau),
        catch(pane_matches(M, Match, PN, St, S, P, O, Tau), E,
              record_error(M, E, arrival(Qid, t(S, P, O), Tau)))
    ;   (   Src == all -> G = '$all' ; G = G0 ),
        next_seq(M, W, G, Seq),
        (   pending_store(Kind, Pending)
        ->  Item =.. [Pending, Tau, Seq, G, S, P, O],
            assertz(M:Item)
        ;   replace_triple(M, Store, G, S, P, O, Tau, Seq)
        )
    ).

%   Each match of an arriving triple goes to the window's panes.  (A
%   failure-driven loop in a clause of its own: forall/2 inside catch/3
%   would be compiled anew at every call.)
pane_matches(M, Match, PN, St, S, P, O, Tau) :-
    Goal =.. [Match, S, P, O, Key, GK, AR],
    (   M:Goal,
        pane_insert(M, PN, St, Key, Tau, GK, AR),
        fail
    ;   true
    ).

next_seq(M, W, G, Seq) :-
    W = w(Store, Src, _, N0, _),
    (   Src == var
    ->  (   retract(M:sw_n(Store, G, C0)) -> true ; C0 = 0 ),
        Seq is C0 + 1,
        assertz(M:sw_n(Store, G, Seq))
    ;   Seq is N0 + 1,
        nb_setarg(4, W, Seq)
    ).

%   One clause per distinct triple: a new occurrence replaces the old.
replace_triple(M, Store, G, S, P, O, Tau, Seq) :-
    term_hash(t(G, S, P, O), K),
    Old =.. [Store, K, G, S, P, O, _, _],
    retractall(M:Old),
    New =.. [Store, K, G, S, P, O, Tau, Seq],
    assertz(M:New).

%   prepare_window(+M, +T, +Window, -Hi, -Open, -Empty, -Last)
%
%   Bring the window to instant T: move pending occurrences in, remove
%   what expired.  Hi: the greatest time stamp in the window's content
%   at T; Open: its opening (docs/DIALECTS.md, "Answers"); Empty:
%   true/false; Last: the latest time stamp of its content (count
%   windows' answer end).
prepare_window(M, T, w(_, _, Kind, _, panes(PN, _, St)), Hi, Lo, Empty, Hi) :- !,
    window_bounds(Kind, T, Hi, L),
    ( L = lo(Lo) -> true ; L = ge(Lo) ),
    ( Hi = lt(Up) -> true ; Up = Hi ),
    pane_advance(M, PN, St, Lo, Up),
    (   pane_nonempty(M, PN, Lo, Up) -> Empty = false ; Empty = true ).
prepare_window(M, T, W, Hi, Open, Empty, Last) :-
    W = w(Store, Src, Kind, _, _),
    window_bounds(Kind, T, Hi, Lo),
    (   pending_store(Kind, Pending) -> release_pending(M, Store, Pending, Hi) ; true ),
    expire(M, W, Src, Lo),
    content_extent(M, Store, Kind, Hi, Empty, First, Last0),
    (   Empty == true -> Last = T ; Last = Last0 ),
    window_open(Kind, T, Lo, Empty, First, Open).

prepare_windows([], _, _, [], [], [], []).
prepare_windows([W|Ws], M, T, [H|Hs], [O|Os], [E|Es], [L|Ls]) :-
    prepare_window(M, T, W, H, O, E, L),
    prepare_windows(Ws, M, T, Hs, Os, Es, Ls).

%   window_bounds(+Kind, +T, -Hi, -Lo): content is Lo < τ =< Hi (Lo is
%   lo(X) for a strict lower bound, ge(X) for τ >= X, none for none;
%   count windows: count(N); Hi is lt(C) for τ < C).  A closed-open
%   window at T: its latest close C at or before T, [C - A, C); before
%   its first window (Scope from_t0) it is empty, [T0, T0); an
%   open-closed one (C - A, C], before its first window (T0, T0].  The
%   earliest open one cut at T (cc/4): [T0 + K B, T], K the least (>= 0
%   from T0) with T0 + K B + A > T.
window_bounds(range(A, none), T, T, lo(Lo)) :- !, Lo is T - A.
window_bounds(co(A, B, T0, Scope, P), T, lt(C), ge(Lo)) :- !,
    co_close(co(A, B, T0, Scope, P), T, C0),
    (   Scope == from_t0, C0 < T0 + A -> C = T0, Lo = T0 ; C = C0, Lo is C - A ).
window_bounds(oc(A, B, T0, Scope, P), T, C, lo(Lo)) :- !,
    co_close(oc(A, B, T0, Scope, P), T, C0),
    (   Scope == from_t0, C0 < T0 + A -> C = T0, Lo = T0 ; C = C0, Lo is C - A ).
window_bounds(cc(A, B, T0, Scope), T, T, ge(Lo)) :- !,    % the earliest open, cut at T
    exact(T, R),
    K0 is floor((R - T0 - A) / B) + 1,
    (   Scope == from_t0 -> K is max(K0, 0) ; K = K0 ),
    Lo is T0 + K * B.
window_bounds(range(A, B), T, Hi, lo(Lo)) :- !, floor_multiple(T, B, Hi), Lo is Hi - A.
window_bounds(now, T, T, ge(T)) :- !.
window_bounds(all, T, T, none) :- !.
window_bounds(count(N), T, T, count(N)) :- !.
window_bounds(past(A, D, B, _), T, Hi, lo(Lo)) :-
    (   B == none -> S = T ; floor_multiple(T, B, S) ),
    Hi is S - D, Lo is S - A.

window_open(range(_, _), _, lo(Lo), _, _, Lo) :- !.
window_open(co(_, _, _, _, _), _, ge(Lo), _, _, Lo) :- !.
window_open(cc(_, _, _, _), _, ge(Lo), _, _, Lo) :- !.
window_open(oc(_, _, _, _, _), _, lo(Lo), _, _, Lo) :- !.
window_open(past(_, _, _, _), _, lo(Lo), _, _, Lo) :- !.
window_open(now, T, _, _, _, T) :- !.
window_open(_, T, _, Empty, First, Open) :-
    (   Empty == true -> Open = T ; Open = First ).

%   The pending occurrences are in time order: those at or before Hi are
%   at the front.  Each is found with clause/2 and removed with retract/1
%   of the term found (see expire/4: no clause references; the term is
%   ground and its arrival number is the stream's own).
release_pending(M, Store, Pending, Hi) :-
    Probe =.. [Pending, Tau, Seq, G, S, P, O],
    (   clause(M:Probe, true),
        (   below(Tau, Hi)
        ->  retract(M:Probe), replace_triple(M, Store, G, S, P, O, Tau, Seq), fail
        ;   true
        )
    ->  true
    ;   true
    ).

%   Remove expired clauses from the front (they are in the order of
%   their latest occurrence).
%
%   Each expired clause is found with clause/2 and removed with
%   retract/1 of the term found, never through a clause reference: a
%   reference is a blob in the atom table, and while more than a tenth of
%   the erased clauses have one, SWI-Prolog follows every clause garbage
%   collection with an atom garbage collection (which marks every
%   thread's stacks): clause/3 and erase/1 per expired triple made one
%   run every few hundred events.  The term found is ground and a window
%   has one clause per triple, so the clause is the only one it unifies
%   with (retract/1 inside the walk also sees the clauses the walk has
%   removed, SWI-Prolog's logical update view, but those are other
%   triples).
expire(_, _, _, none) :- !.
expire(M, w(Store, _, _, C, _), Src, count(N)) :- !,
    (   Src == var
    ->  forall(M:sw_n(Store, G, C1), expire_count(M, Store, G, C1 - N))
    ;   expire_count(M, Store, _, C - N)
    ).
expire(M, w(Store, _, _, _, _), _, Lo) :-
    Probe =.. [Store, _, _, _, _, _, Tau, _],
    (   clause(M:Probe, true),
        (   expired(Lo, Tau) -> retract(M:Probe), fail ; true )
    ->  true
    ;   true
    ).

expired(lo(Lo), Tau) :- Tau =< Lo.
expired(ge(X), Tau) :- Tau < X.

%   Keep the occurrences numbered above Limit (per stream for var).
expire_count(M, Store, G, Limit0) :-
    Limit is Limit0,
    Probe =.. [Store, _, G, _, _, _, _, Seq],
    (   var(G)
    ->  (   clause(M:Probe, true),
            (   Seq =< Limit -> retract(M:Probe), fail ; true )
        ->  true
        ;   true
        )
    ;   forall(( clause(M:Probe, true), Seq =< Limit ), retract(M:Probe))
    ).

%   content_extent(+M, +Store, +Kind, +Hi, -Empty, -First, -Last): the
%   earliest and (count windows only) latest time stamps at or before
%   Hi.  The clauses are in time order: the first one is the earliest.
content_extent(M, Store, Kind, Hi, Empty, First, Last) :-
    Probe =.. [Store, _, _, _, _, _, Tau, _],
    (   once(M:Probe), below(Tau, Hi)
    ->  Empty = false, First = Tau,
        (   Kind = count(_)
        ->  Probe2 =.. [Store, _, _, _, _, _, X, _],
            aggregate_all(max(X), M:Probe2, Last)
        ;   Hi = lt(Last) -> true
        ;   Last = Hi
        )
    ;   Empty = true, First = none, Last = none
    ).

		 /*******************************
		 *          EVALUATION          *
		 *******************************/

%   evaluate(+M, +Q, +T): the query's windows at T, its SPARQL part,
%   the relation-to-stream operator, the answers.
evaluate(M, q(Qid, Ws, policy(_, _, _, NonEmpty, _), R2S, Pred, _), T) :-
    prepare_windows(Ws, M, T, His, Opens, Empties, Lasts),
    (   NonEmpty == true, Ws \== [], \+ memberchk(false, Empties)
    ->  true                                % C-SPARQL: every window empty
    ;   R2S == rstream,
        direct(M, Qid, Ws, T, Opens, Empties, Lasts)
    ->  true
    ;   Bounds =.. [b|His],
        Goal =.. [Pred, Bounds, Rows],
        (   catch(M:Goal, E, ( record_error(M, E, eval(Qid, T)), fail ))
        ->  report(M, Qid, R2S, Rows, Ws, T, Opens, Empties, Lasts)
        ;   true
        )
    ).

%   direct(+M, +Qid, +Ws, +T, +Opens, +Empties, +Lasts) is semidet.
%
%   The evaluation of a query kept per pane whose rows are its groups'
%   keys and aggregates as they are (the compiler's Pred_direct/3,
%   sw_direct/4), when the answers go to the columns sink and the
%   groups' values come from C (stream_panes:pane_groups_native/5): the
%   rows go from the groups to the sink's buffer in one foreign call
%   (bridge_columns:columns_groups/5), not through the compiled
%   projection, the answer terms and a sink call per row.  The same
%   answers as Pred and report/9 give; fails (nothing done) otherwise.
direct(M, Qid, Ws, T, Opens, Empties, Lasts) :-
    M:sw_direct(Qid, Grouped, Map, Bg),
    Ws = [w(_, _, _, _, panes(PN, _, _))],
    nb_current('$stream_window_sink', Sink),
    direct_sink(Sink),
    M:sw_head(Qid, Head, 0),
    \+ M:sw_out(Qid, _, _),
    (   Bg == none
    ->  Extras = []
    ;   BgGoal =.. [Bg, Kx, GKx, ARx],
        findall(GKx-ARx, ( M:BgGoal, \+ pane_in_window(M, PN, Kx) ), Extras)
    ),
    pane_groups_native(M, PN, Grouped, Extras, Groups),
    answer_interval(Ws, T, Opens, Empties, Lasts, Start0, End0),
    time_number(Start0, Start), time_number(End0, End),
    columns_groups(Head, Map, Groups, Start, End).

direct_sink(bridge_python:columns_sink).
direct_sink(bridge_columns:columns_sink).

report(M, Qid, R2S, Rows, Ws, T, Opens, Empties, Lasts) :-
    (   R2S == rstream
    ->  Out = Rows                      % no previous result needed
    ;   retract(M:sw_prev(Qid, Prev)),
        assertz(M:sw_prev(Qid, Rows)),
        (   R2S == istream -> bag_difference(Rows, Prev, Out)
        ;   bag_difference(Prev, Rows, Out)
        )
    ),
    answer_interval(Ws, T, Opens, Empties, Lasts, Start, End),
    emit_answers(M, Qid, Out, Start, End),
    (   M:sw_out(Qid, G, TPred)
    ->  forall(( member(Row, Out), Goal =.. [TPred, Row, Triples], M:Goal,
                 member(t(S, P, O), Triples) ),
               assertz(M:sw_derived(o(G, S, P, O, T, T))))
    ;   true
    ).

%   emit_answers(+M, +Qid, +Rows, +Start, +End): the answers of an
%   evaluation, each Head(V1, ..., Vn, B1, ..., Bk): the row's values
%   ('$error' for an unbound variable, as the EP-SPARQL rules leave a
%   failed expression) and k fresh blank nodes for the CONSTRUCT
%   template's (sw_head/3), the interval's times as integers or floats.
%   They go to the sink of the call (sw_with_sink/2) or, without one,
%   to sw_drain/2.
emit_answers(_, _, [], _, _) :- !.
emit_answers(M, Qid, Rows, Start0, End0) :-
    time_number(Start0, Start), time_number(End0, End),
    M:sw_head(Qid, Head, Fresh),
    (   nb_current('$stream_window_sink', Sink), Sink \== [] -> true ; Sink = none ),
    emit_rows(Rows, Head, Fresh, Sink, M, Qid, Start, End).

emit_rows([], _, _, _, _, _, _, _).
emit_rows([Row|Rows], Head, Fresh, Sink, M, Qid, Start, End) :-
    Row =.. [_|Vs0],
    (   memberchk('$u', Vs0) -> maplist(unbound_out, Vs0, Vs1) ; Vs1 = Vs0 ),
    (   Fresh =:= 0
    ->  Vs = Vs1
    ;   length(Bs, Fresh), maplist(fresh_bnode, Bs), append(Vs1, Bs, Vs)
    ),
    A =.. [Head|Vs],
    (   Sink == none
    ->  assertz(M:sw_ans(Qid, A, Start, End))
    ;   call(Sink, A, Start, End)
    ),
    emit_rows(Rows, Head, Fresh, Sink, M, Qid, Start, End).

unbound_out(X, Y) :- ( X == '$u' -> Y = '$error' ; Y = X ).

%   Times go out as integers when whole, floats otherwise (an instant is
%   exact: an integer or a rational).
time_number(T, N) :-
    (   integer(T) -> N = T
    ;   rational(T) -> N is float(T)
    ;   float(T), T =:= truncate(T), abs(T) < 1.0e15 -> N is truncate(T)
    ;   N = T
    ).

%!  sw_with_sink(:Sink, :Goal) is semidet.
%
%   Run Goal with the answers of the evaluations it makes passed to
%   call(Sink, Answer, Start, End) as they are found, instead of being
%   kept for sw_drain/2 (the Python bridge passes the columns sink, as
%   for the core's detections: prolog/bridge_windows.pl).
:- meta_predicate sw_with_sink(3, 0).
sw_with_sink(Sink, Goal) :-
    (   nb_current('$stream_window_sink', Old) -> true ; Old = [] ),
    b_setval('$stream_window_sink', Sink),
    call(Goal),
    b_setval('$stream_window_sink', Old).

%   feed_derived(+M, +RT, +T): the triples CONSTRUCT queries wrote on
%   their output streams at instant T enter the stream (they may complete
%   evaluations at T of queries evaluated at arrivals, which may write
%   more: after max_derivation_rounds/1 rounds at one instant, an error).
feed_derived(M, RT, T) :-
    findall(I, retract(M:sw_derived(I)), Items),
    (   Items == []
    ->  true
    ;   (   retract(M:sw_depth(T0, N0)), T0 =:= T -> true ; retractall(M:sw_depth(_, _)), N0 = 0 ),
        N is N0 + 1,
        assertz(M:sw_depth(T, N)),
        max_derivation_rounds(Max),
        (   N > Max
        ->  record_error(M, error(derivation_loop(T, Max), _), instant(T))
        ;   push_items(Items, M, RT)
        )
    ).

max_derivation_rounds(100).

:- multifile prolog:error_message//1.
prolog:error_message(derivation_loop(T, Max)) -->
    [ 'CONSTRUCT queries kept writing triples at instant ~w: stopped after ~w rounds (a query reads its own output stream?)'-[T, Max] ].

%!  fresh_bnode(-B) is det.
%
%   A new blank node for a CONSTRUCT template's triples.
fresh_bnode(b(Id)) :-
    flag(stream_window_bnode, N, N + 1),
    format(atom(Id), 'sw~d', [N]).

%!  rdf_triple(+Triple) is semidet.
%
%   t(S, P, O) is an RDF triple: no unbound position ('$u'), an IRI or
%   blank node subject, an IRI predicate.
rdf_triple(t(S, P, O)) :-
    S \== '$u', P \== '$u', O \== '$u',
    atom(P),
    ( atom(S) -> true ; S = b(_) ).

%   [earliest opening, T]; only count windows: [first, last] time stamp
%   of their contents ([T, T] when all are empty).
answer_interval(Ws, T, Opens, Empties, Lasts, Start, End) :-
    (   Ws == [] -> Start = T, End = T
    ;   forall(member(W, Ws), arg(3, W, count(_)))
    ->  findall(O-L, ( nth1(I, Empties, false), nth1(I, Opens, O), nth1(I, Lasts, L) ), OLs),
        (   OLs == []
        ->  Start = T, End = T
        ;   pairs_keys_values(OLs, Os, Ls), min_list(Os, Start), max_list(Ls, End)
        )
    ;   min_list(Opens, Start), End = T
    ).

%   An error inside an evaluation or an arrival is recorded (the stream
%   goes on); a resource error (out of memory, a receiver that takes no
%   more answers) stops the call.
record_error(M, E, Context) :-
    (   E = error(resource_error(_), _) -> throw(E) ; true ),
    assertz(M:sw_err(E, Context)).

%!  sw_drain(+Module, -Answers) is det.
%
%   Answers a(Qid, Answer, Start, End) found without a sink
%   (sw_with_sink/2) and not yet drained, in the order they were found
%   (Answer as emit_answers/5 makes it), then the errors not yet
%   reported, e(Message, Context); both emptied.
sw_drain(M, Out) :-
    ensure_local(M),
    findall(a(Q, R, S, E), retract(M:sw_ans(Q, R, S, E)), As),
    findall(e(Msg, C), ( retract(M:sw_err(Err, C)), message_text(Err, Msg) ), Es),
    append(As, Es, Out).

%!  sw_errors(+Module, -Errors) is det.
%
%   The errors not yet reported, emptied, as the core reports its rules'
%   (engine_errors/2): rule_error(Error, Context, none, Heads), Heads the
%   answer heads of the queries concerned (the query of an evaluation or
%   an arrival, else every windowed query).
sw_errors(M, Errs) :-
    ensure_local(M),
    findall(rule_error(E, C, none, Heads),
            ( retract(M:sw_err(E, C)), context_heads(M, C, Heads) ),
            Errs).

context_heads(M, C, [Head]) :-
    ( C = eval(Qid, _) ; C = arrival(Qid, _, _) ),
    M:sw_head(Qid, Head, _), !.
context_heads(M, _, Heads) :-
    findall(H, M:sw_head(_, H, _), Heads).

%!  sw_stats(+Module, -Stats) is det.
%
%   Stats: a list of Key-Value: content (distinct triples, or matches of
%   a per-pane window, in all windows), pending (occurrences waiting for
%   a past window), late, queries, due (the next instant some query waits
%   for, null if none).
sw_stats(M, Stats) :-
    with_rt(M, commit_panes(M)),
    load_rt(M, rt(_, Late, _, Qs)),
    findall(N, ( member(q(_, Ws, _, _, _, _), Qs), member(W, Ws), window_content(M, W, N) ), Ns),
    sum_list(Ns, Content),
    findall(N, ( member(q(_, Ws, _, _, _, _), Qs), member(w(_, _, Kind, _, _), Ws),
                 pending_store(Kind, P),
                 functor(H, P, 6),
                 ( predicate_property(M:H, number_of_clauses(N)) -> true ; N = 0 ) ), Ps),
    sum_list(Ps, Pending),
    length(Qs, Q),
    load_rt(M, rt(_, _, Due0, _)),
    (   Due0 == inf -> Due = null ; rational(Due0), \+ integer(Due0) -> Due is float(Due0) ; Due = Due0 ),
    Stats = [content-Content, pending-Pending, late-Late, queries-Q, due-Due].

%!  sw_windows(+Module, +SampleSize, -Windows) is det.
%
%   What each window holds now, for a live view: Windows is
%   windows(Clock, List), Clock the windows' clock as a float (none
%   before any row), List a list of [Qid, Index, Count, Sample] per window
%   of every query (Index: its place in the query, from 0), Count as
%   sw_stats/2 counts content, Sample the first SampleSize triples a window
%   without panes holds (the oldest: the next to leave) as [S, P, O, Time]
%   (encoded terms, Time a float), [] for a window kept per pane.  Call
%   sw_stats/2 first for counts with the panes' pending matches committed.
sw_windows(M, Max, windows(Clock, List)) :-
    load_rt(M, rt(C0, _, _, Qs)),
    (   number(C0), C0 =\= inf, C0 =\= -inf -> Clock is float(C0) ; Clock = none ),
    findall([Qid, I, N, Xs],
            ( member(q(Qid, Ws, _, _, _, _), Qs), nth0(I, Ws, W),
              window_content(M, W, N),
              window_sample(M, W, Max, Xs) ),
            List).

window_sample(M, w(Store, _, _, _, plain), Max, Xs) :- !,
    functor(H, Store, 7),
    arg(3, H, S), arg(4, H, P), arg(5, H, O), arg(6, H, T),
    findall([S, P, O, T1], limit(Max, ( M:H, T1 is float(T) )), Xs).
window_sample(_, _, _, []).

window_content(M, w(Store, _, _, _, Mode), N) :-
    (   Mode = panes(PN, _, _)
    ->  pane_content(M, PN, N)
    ;   functor(H, Store, 7),
        ( predicate_property(M:H, number_of_clauses(N0)) -> N = N0 ; N = 0 )
    ).

		 /*******************************
		 *          SNAPSHOTS           *
		 *******************************/

%!  sw_export(+Module, -State) is det.
%
%   The stream state of Module's windowed queries as one ground term
%
%     sw_state(2, rt(Clock, Late, Due), Queries, Facts)
%
%   (version 2: a per-pane window's Store(J, Keys) facts list the
%   matches' keys; version 1 listed Key-GK-AR entries, still restored;
%   a version 1 reader refuses version 2 instead of restoring an empty
%   content.)  Clock the latest time stamp or advance (none before any), Late the
%   late count, Due the next instant due (inf: none); Queries a list of
%   q(Qid, Def, St, Windows, Prev): the registered definition (to check
%   that the engine restoring it has the same queries), the query's
%   progress st(Started, Nexts, Arrival, Count), per window w(Seq,
%   PaneState) (PaneState ps(Folded, LastRaw) or plain), and the previous
%   evaluation's rows (ISTREAM/DSTREAM); Facts the clauses of the
%   windows' predicates (contents, pending occurrences, per-stream
%   counts, panes), each f(Name, Args), in clause order (the order of
%   the latest occurrences, which expiry relies on).  Not in it:
%   answers not yet drained, errors, and queries, functions, background.
sw_export(M, sw_state(2, rt(Clock, Late, Due), Queries, Facts)) :-
    with_rt(M, commit_panes(M)),
    load_rt(M, rt(Clock0, Late, Due, Qs)),
    (   Clock0 =:= -inf -> Clock = none ; Clock = Clock0 ),
    findall(q(Qid, Def, St, WStates, Prev),
            ( member(q(Qid, Ws, _, _, _, St), Qs),
              M:sw_q(Qid, Def),
              ( M:sw_prev(Qid, Prev) -> true ; Prev = [] ),
              maplist(window_state, Ws, WStates0),
              arg(3, Def, DefWs),
              first_t0_state(DefWs, Ws, WStates0, WStates) ),
            Queries),
    findall(F, ( member(q(_, Ws, _, _, _, _), Qs), member(W, Ws), window_fact(M, W, F) ),
            Facts).

%   commit_panes(+M, +RT): the buffered matches of every per-pane window
%   into its content (before the content is read from outside).
commit_panes(M, RT) :-
    arg(4, RT, Qs),
    forall(( member(q(_, Ws, _, _, _, _), Qs), member(w(_, _, _, _, panes(PN, _, St)), Ws) ),
           pane_commit(M, PN, St)).

%   first_t0_state(+DefWs, +Ws, +WStates0, -WStates): a window registered
%   with t0 = first carries the t0 its first arrival gave, w(Seq, PS, t0(T0)).
first_t0_state([], [], [], []).
first_t0_state([D|Ds], [w(_, _, Kind, _, _)|Ws], [w(Seq, PS)|S0], [S|Ss]) :-
    (   arg(3, D, DKind), compound(DKind), arg(3, DKind, first), arg(3, Kind, T0), number(T0)
    ->  S = w(Seq, PS, t0(T0))
    ;   S = w(Seq, PS)
    ),
    first_t0_state(Ds, Ws, S0, Ss).

window_state(w(_, _, _, Seq, Mode), w(Seq, PS)) :-
    (   Mode = panes(_, _, PSt)             % the pane state's first two (stream_panes.pl)
    ->  arg(1, PSt, F0), arg(2, PSt, L),
        ( F0 =:= -inf -> F = none ; F = F0 ), PS = ps(F, L)
    ;   PS = plain
    ).

%   window_fact(+M, +Window, -Fact): the clauses of the window's
%   predicates, in order (a STREAM ?g window: its own per-stream counts).
window_fact(M, W, f(Name, Args)) :-
    window_pred(M, W, Name/Arity),
    functor(H, Name, Arity),
    (   Name == sw_n -> arg(1, W, Store), arg(1, H, Store) ; true ),
    clause(M:H, true),
    H =.. [_|Args].

%   window_pred(+M, +Window, -Name/Arity): the window's predicates.
window_pred(_, w(_, _, _, _, panes(PN, _, _)), P) :- !,
    pane_predicates(PN, Ps),
    member(P, Ps).
window_pred(_, w(Store, Src, Kind, _, plain), P) :-
    (   P = Store/7
    ;   pending_store(Kind, Pending), P = Pending/6
    ;   Src == var, P = sw_n/3
    ).

%!  sw_import(+Module, +State) is det.
%
%   Replace Module's stream state by State (from sw_export/2).  State is
%   data: it is checked to be ground, of the shape sw_export/2 writes,
%   for the same queries (the same definitions, in the same order), and
%   to name only those queries' window predicates, before anything
%   changes; else a domain error, and nothing changed.
sw_import(M, State) :-
    ensure_local(M),
    (   import_plan(M, State, Plan) -> true ; domain_error(window_state, snapshot) ),
    with_rt(M, import(M, Plan)).

import_plan(M, sw_state(V, rt(Clock0, Late, Due), Queries, Facts), plan(Clock, Late, Due, Queries, Facts)) :-
    ( V == 1 ; V == 2 ),
    ground(sw_state(Clock0, Late, Due, Queries, Facts)),
    (   Clock0 == none -> Clock is -inf ; number(Clock0), Clock = Clock0 ),
    integer(Late), Late >= 0,
    ( Due == inf ; number(Due) ),
    findall(Qid-Def, M:sw_q(Qid, Def), Mine),
    length(Mine, N), length(Queries, N),
    load_rt(M, rt(_, _, _, Qs)),
    maplist(import_query_ok, Mine, Qs, Queries),
    findall(Name/Arity, ( member(q(_, Ws, _, _, _, _), Qs), member(W, Ws), window_pred(M, W, Name/Arity) ),
            Preds),
    forall(member(F, Facts), ( F = f(Name, Args), is_list(Args), length(Args, A), memberchk(Name/A, Preds),
                               ( Name == sw_n -> Args = [Store|_], memberchk(Store/7, Preds) ; true ) )).

import_query_ok(Qid-Def, q(Qid, Ws, _, _, _, _), q(Qid, Def1, St, WStates, Prev)) :-
    Def1 == Def,
    St = st(Started, Nexts, Arr, Count),
    memberchk(Started, [true, false]), is_list(Nexts), integer(Count),
    ( Arr == none ; number(Arr) ),
    forall(member(X, Nexts), ( X = n(B, T), number(B), number(T) )),
    is_list(Prev),
    same_length(Ws, WStates),
    maplist(window_state_ok, Ws, WStates).

window_state_ok(W, w(Seq, PS, t0(T0))) :- !,
    number(T0),
    window_state_ok(W, w(Seq, PS)).
window_state_ok(w(_, _, _, _, Mode), w(Seq, PS)) :-
    integer(Seq), Seq >= 0,
    (   Mode = panes(_, _, _) -> PS = ps(F, L), ( number(F) ; F == none ), ( L == none ; integer(L) )
    ;   PS == plain
    ).

import(M, plan(Clock, Late, Due, Queries, Facts), RT) :-
    clear(M, RT),
    forall(member(f(Name, Args), Facts), ( H =.. [Name|Args], assertz(M:H) )),
    nb_setarg(1, RT, Clock), nb_setarg(2, RT, Late), nb_setarg(3, RT, Due),
    arg(4, RT, Qs),
    forall(nth1(I, Qs, q(Qid, Ws, Pol, _, _, St)),
           ( nth1(I, Queries, q(Qid, _, St1, WStates, Prev)),
             forall(between(1, 4, J), ( arg(J, St1, V), nb_setarg(J, St, V) )),
             forall(nth1(K, Ws, W), ( nth1(K, WStates, WS), arg(1, WS, Seq), arg(2, WS, PS),
                                      restore_window(M, W, Seq, PS) )),
             (   member(w(_, _, t0(T0)), WStates)
             ->  set_first_t0(q(Qid, Ws, Pol, x, x, St), T0)
             ;   true
             ),
             retractall(M:sw_prev(Qid, _)), assertz(M:sw_prev(Qid, Prev)) )).

restore_window(M, W, Seq, PS) :-
    nb_setarg(4, W, Seq),
    (   arg(5, W, panes(PN, _, St))
    ->  PS = ps(F0, L), ( F0 == none -> F is -inf ; F = F0 ),
        pane_reset(St),
        nb_setarg(1, St, F), nb_setarg(2, St, L),
        pane_restored(M, PN)
    ;   true
    ).

		 /*******************************
		 *           MATCHING           *
		 *******************************/

%!  win_match(+Module, +Store, +Hi, +Reasoning, ?G, ?S, ?P, ?O) is nondet.
%
%   A triple of a window's content at the current evaluation (time
%   stamp at or before Hi; before C when Hi is lt(C)), or entailed from one (Reasoning rdfs) as a
%   stream triple is for EP-SPARQL: sub-classes and the domain and range
%   of its property for rdf:type patterns, sub-properties otherwise.
%   Each entailed triple once.
win_match(M, Store, Hi, none, G, S, P, O) :- !,
    content(M, Store, Hi, G, S, P, O).
win_match(M, Store, Hi, rdfs, G, S, P, O) :-
    (   P == 'http://www.w3.org/1999/02/22-rdf-syntax-ns#type'
    ->  distinct(G-S-O, type_match(M, Store, Hi, G, S, O))
    ;   nonvar(P)
    ->  (   has_sub_properties(M)
        ->  distinct(G-S-O, ( content(M, Store, Hi, G, S, Q, O), stream_property(M, Q, P) ))
        ;   content(M, Store, Hi, G, S, P, O)
        )
    ;   has_sub_properties(M)
    ->  distinct(G-S-P-O, ( content(M, Store, Hi, G, S, Q, O), sub_property(M, Q, P) ))
    ;   content(M, Store, Hi, G, S, P, O)
    ).

%!  win_holds(+Module, +Store, +Hi, +Reasoning, +S, +P, +O) is semidet.
%
%   The ground triple is in the window's content at the current
%   evaluation or entailed from it, as win_match/8 says, tested once (a
%   join checks a triple whose positions earlier patterns bound: no
%   duplicate check to set up).
win_holds(M, Store, Hi, none, S, P, O) :- !,
    once(content(M, Store, Hi, _, S, P, O)).
win_holds(M, Store, Hi, rdfs, S, P, O) :-
    (   P == 'http://www.w3.org/1999/02/22-rdf-syntax-ns#type'
    ->  once(type_match(M, Store, Hi, _, S, O))
    ;   has_sub_properties(M)
    ->  once(( content(M, Store, Hi, _, S, Q, O), stream_property(M, Q, P) ))
    ;   once(content(M, Store, Hi, _, S, P, O))
    ).

%   S rdf:type O in the window or entailed from it: sub-classes of a
%   stated type; the domain and range of its triples' properties, looked
%   for only when the background states some, by the subject when bound
%   (a join tests `?s a ?c` once per ?s).
type_match(M, Store, Hi, G, S, O) :-
    Type = 'http://www.w3.org/1999/02/22-rdf-syntax-ns#type',
    (   content(M, Store, Hi, G, S, Type, C0), sub_class(M, C0, O)
    ;   sparql_background:bg_flags(M, flags(_, true)),
        (   nonvar(S)
        ->  (   content(M, Store, Hi, G, S, Q, _), Q \== Type,
                entailed_type(M, Q, subject, O)
            ;   content(M, Store, Hi, G, _, Q, S), Q \== Type,
                entailed_type(M, Q, object, O)
            )
        ;   content(M, Store, Hi, G, X, Q, Y), Q \== Type,
            entailed_type(M, Q, Role, O),
            ( Role == subject -> S = X ; S = Y )
        )
    ).

has_sub_properties(M) :-
    sparql_background:bg_flags(M, flags(true, _)).

%   The upper bound of a window's content at an evaluation: Hi (τ =< Hi)
%   or lt(C) (τ < C: a closed-open window).
content(M, Store, lt(C), G, S, P, O) :- !,
    Probe =.. [Store, _, G, S, P, O, Tau, _],
    M:Probe,
    Tau < C.
content(M, Store, Hi, G, S, P, O) :-
    Probe =.. [Store, _, G, S, P, O, Tau, _],
    M:Probe,
    Tau =< Hi.

below(Tau, lt(C)) :- !, Tau < C.
below(Tau, Hi) :- Tau =< Hi.

%!  timestamp_value(+Module, +Windows, +ArgExprs, -Value) is det.
%
%   C-SPARQL's timestamp(): the time of the latest occurrence, in the
%   query's windows at the current evaluation, of the triple (three
%   arguments), or of any triple that mentions a term (one argument; two:
%   only in the windows on the stream given second), as an xsd:dateTime;
%   '$error' when there is none or an argument is an error.  Windows is a
%   list of s(Store, Hi, Source).
timestamp_value(M, Ws, Args, Value) :-
    maplist(arg_value, Args, Vs),
    (   \+ memberchk('$error', Vs),
        aggregate_all(max(Tau), stamp(M, Ws, Vs, Tau), T)
    ->  sparql_seconds_datetime(T, Value)
    ;   Value = '$error'
    ).

arg_value(E, V) :- sparql_eval(E, V).

stamp(M, Ws, [S, P, O], Tau) :-
    member(s(Store, Hi, _), Ws),
    content_tau(M, Store, Hi, S, P, O, Tau).
stamp(M, Ws, [X], Tau) :-
    member(s(Store, Hi, _), Ws),
    mentions(M, Store, Hi, X, _, Tau).
stamp(M, Ws, [X, G], Tau) :-
    member(s(Store, Hi, Src), Ws),
    (   Src == var -> GS = G ; source_accepts(Src, G), GS = _ ),
    mentions(M, Store, Hi, X, GS, Tau).

content_tau(M, Store, Hi, S, P, O, Tau) :-
    Probe =.. [Store, _, _, S, P, O, Tau, _],
    M:Probe,
    below(Tau, Hi).

mentions(M, Store, Hi, X, G, Tau) :-
    (   Probe =.. [Store, _, G, X, _, _, Tau, _]
    ;   Probe =.. [Store, _, G, _, X, _, Tau, _]
    ;   Probe =.. [Store, _, G, _, _, X, Tau, _]
    ),
    M:Probe,
    below(Tau, Hi).

		 /*******************************
		 *     COMPILED REGISTRATION    *
		 *******************************/

%!  sw_register_text(+Module, +Text) is det.
%
%   Register a query compiled by epsparql/rules/window_compile.py: Text
%   holds its clauses (the evaluation predicate Pred and helpers named
%   Pred_..., asserted into Module), one term window_query(QueryDef)
%   (sw_register/2), and optionally window_output(Qid, Stream,
%   TemplatePred) (a CONSTRUCT writing a stream) and window_fresh(Qid,
%   K) (its answers carry K fresh blank nodes for the template's).  Text
%   is read as data; a clause of any other predicate is a domain error.
sw_register_text(M, Text) :-
    setup_call_cleanup(open_string(Text, S), read_all(S, Terms0), close(S)),
    partition([T]>>(T = window_output(_, _, _)), Terms0, Outputs, Terms1),
    partition([T]>>(T = window_fresh(_, _)), Terms1, Fresh, Terms),
    partition([T]>>(T = window_query(_)), Terms, [window_query(Def)], Clauses),
    Def = swq(Qid, _, _, _, _, Pred),
    atom_concat(Pred, '_', Sub),
    (   member(C0, Clauses), clause_pred(C0, Pred),
        forall(member(C, Clauses), ( clause_pred(C, N), ( N == Pred -> true ; sub_atom(N, 0, _, _, Sub) ) ))
    ->  true
    ;   domain_error(window_query_clauses, Pred)
    ),
    forall(member(C, Clauses), assertz(M:C)),
    sw_register(M, Def),
    atom_concat(Pred, '_direct', Direct),
    (   DG =.. [Direct, Grouped, Map, Bg],
        memberchk(DG, Clauses)
    ->  assertz(M:sw_direct(Qid, Grouped, Map, Bg))
    ;   true
    ),
    forall(member(window_output(Qid1, G, TPred), Outputs),
           ( atom(G), atom(TPred) -> assertz(M:sw_out(Qid1, G, TPred))
           ; domain_error(window_output, window_output(Qid1, G, TPred)) )),
    forall(member(window_fresh(Qid2, K), Fresh),
           (   Qid2 == Qid, integer(K), K >= 0, retract(M:sw_head(Qid, H, _))
           ->  assertz(M:sw_head(Qid, H, K))
           ;   domain_error(window_fresh, window_fresh(Qid2, K))
           )).

clause_pred((H :- _), Name) :- !, functor(H, Name, _).
clause_pred(H, Name) :- functor(H, Name, _).

read_all(S, Terms) :-
    read_term(S, T, [module(stream_window), syntax_errors(error)]),
    (   T == end_of_file -> Terms = [] ; Terms = [T|Rest], read_all(S, Rest) ).
