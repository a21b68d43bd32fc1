/*  epsparql_core: an ETALIS-style complex event processor in SWI-Prolog.

    Event rules `Head <- Body` are binarised and compiled into
    event-driven backward-chaining clauses (see core_compile.pl).  Events
    are pushed with explicit interval time stamps; detected complex events
    go to an optional hook and into a buffer that is drained in one call.

    Each engine lives in a Prolog module of its own (rules, goals,
    detections), so several engines can share one process.  The
    predicates without an engine argument act on the *current* engine,
    `epsparql_default` unless set_current_event_engine/1 says otherwise.

    Usage from the toplevel:

        ?- use_module(prolog/epsparql_core).
        ?- add_event_rules([rise(K,P1,P2) <- price(K,P1) seq price(K,P2)
                                              where P2 > P1 within 10]).
        ?- event(price(acme, 10), [1,1]), event(price(acme, 12), [3,3]).
        ?- drain_detected(L).
        L = [detected(rise(acme,10,12), [1,3])].

    This module is the executor and the public API of the core.  The
    other modules of the core, each importing only the ones above it in
    this list:

        core_state.pl     the registry of engines, options, stores
        core_graph.pl     the binarised rule graph
        core_errors.pl    errors inside rules: where, which rules
        core_runtime.pl   what the compiled rules call
        core_timers.pl    alarms;  core_justify.pl  justification
        core_compile.pl   binarisation and EDBC compilation
        core_snapshot.pl  state snapshots (export and import)

    The API exports some of their predicates as its own:
    engine_clear_state/1, engine_option/3 and engine_busy/1
    (core_state.pl), message_text/2 (core_errors.pl),
    engine_export_state/2 and engine_import_state/2 (core_snapshot.pl).
*/
:- module(epsparql_core,
          [ reset_engine/0,
            clear_engine_state/0,
            add_event_rules/1,          % +Rules
            load_event_rules/1,         % +File
            event/1,                    % +Event
            event/2,                    % +Event, +[T1,T2]
            events/1,                   % +Batch
            detected/2,                 % ?Event, ?[T1,T2]
            drain_detected/1,           % -List
            set_event_option/2,         % +Key, +Value
            current_event_engine/1,     % -Module
            set_current_event_engine/1, % +Module
            engine_create/1,            % +Module
            is_event_engine/1,          % +Module
            engine_busy/1,              % +Module
            engine_destroy/1,           % +Module
            engine_reset/1,             % +Module
            engine_clear_state/1,       % +Module
            engine_add_rules/2,         % +Module, +Rules
            engine_load_rules/2,        % +Module, +File
            engine_event/3,             % +Module, +Event, +[T1,T2]
            engine_events/2,            % +Module, +Batch
            engine_detected/3,          % +Module, ?Event, ?[T1,T2]
            engine_drain/2,             % +Module, -List
            engine_errors/2,            % +Module, -List
            engine_set_option/3,        % +Module, +Key, +Value
            engine_option/3,            % +Module, ?Key, ?Value
            engine_stats/2,             % +Module, -Stats
            engine_gc/1,                % +Module
            engine_drop_goals/2,        % +Module, +Before
            engine_advance/2,           % +Module, +Time
            engine_flush/1,             % +Module
            engine_export_state/2,      % +Module, -State
            engine_import_state/2,      % +Module, +State
            advance_time/1,             % +Time
            flush_events/0,
            read_event_rules/3,         % +Stream, -Terms, +Options
            with_detection_sink/2,      % :Sink, :Goal
            direct_sink/1,              % ?Sink (a multifile hook)
            message_text/2,             % +Error, -Text
            engine_delete_rules/2,      % +Module, +LabelOrRule
            delete_event_rules/1,       % +LabelOrRule
            engine_justify/4,           % +Module, ?Event, ?[T1,T2], -Justification
            justify_event/3,            % ?Event, ?[T1,T2], -Justification
            write_justification/1,      % +Justification
            engine_timers/2,            % +Module, -Timers
            op(1200, xfx, <-),
            op(1200, xfy, 'rule:'),
            op(1100, xfx, do),
            op(1055, yfx, fnot),
            op(200, xf, star_times),
            op(1095, yfx, within),
            op(1090, xfx, where),
            op(1080, yfx, or),
            op(1070, yfx, and),
            op(1060, yfx, par),
            op(1055, yfx, cnot),
            op(1050, yfx, seq),
            op(1040, yfx, equals),
            op(1040, yfx, meets),
            op(1040, yfx, during),
            op(1040, yfx, starts),
            op(1040, yfx, finishes)
          ]).
:- set_prolog_flag(optimise, true).   % file-scoped: inline arithmetic
:- use_module(library(lists)).
:- use_module(library(apply)).
:- use_module(library(error)).
:- use_module(library(nb_set)).
:- use_module(library(pairs)).
:- use_module(core_state).
:- use_module(core_graph, [forget_nodes/1, node_count/2]).
:- use_module(core_errors).
:- use_module(core_compile, [compile_rule/3, delete_rule/3, strip_origins/2]).
:- use_module(core_justify, [justify/4, record_alarm/5, write_tree/1]).
:- use_module(core_runtime, [consume_goal/2]).
:- use_module(core_snapshot).

:- initialization(init_core).

init_core :-
    set_depth(0),
    nb_setval(epsparql_sink, []),
    (   engine(epsparql_default) -> true ; engine_create(epsparql_default) ),
    nb_setval(epsparql_current_engine, epsparql_default).

		 /*******************************
		 *       CURRENT ENGINE         *
		 *******************************/

%!  current_event_engine(-Module) is det.
current_event_engine(M) :-
    (   nb_current(epsparql_current_engine, M0) -> M = M0 ; M = epsparql_default ).

%!  set_current_event_engine(+Module) is det.
%
%   Make Module (created if needed) the engine of the engine-less API.
set_current_event_engine(M) :-
    must_be(atom, M),
    (   engine(M) -> true ; engine_create(M) ),
    nb_setval(epsparql_current_engine, M).

%!  reset_engine is det.
%!  clear_engine_state is det.
%!  add_event_rules(+Rules) is det.
%!  load_event_rules(+File) is det.
%!  event(+Event, +Interval) is det.
%!  events(+Batch) is det.
%!  detected(?Event, ?Interval) is nondet.
%!  drain_detected(-List) is det.
%!  set_event_option(+Key, +Value) is det.
%!  advance_time(+Time) is det.
%!  flush_events is det.
%
%   engine_reset/1, engine_clear_state/1, engine_add_rules/2, ... (the
%   engine_ predicate of the same meaning) on the current engine.
reset_engine :- current_event_engine(M), engine_reset(M).
clear_engine_state :- current_event_engine(M), engine_clear_state(M).
add_event_rules(Rules) :- current_event_engine(M), engine_add_rules(M, Rules).
load_event_rules(File) :- current_event_engine(M), engine_load_rules(M, File).
event(E, Interval) :- current_event_engine(M), engine_event(M, E, Interval).
events(Batch) :- current_event_engine(M), engine_events(M, Batch).
detected(E, Interval) :- current_event_engine(M), engine_detected(M, E, Interval).
drain_detected(L) :- current_event_engine(M), engine_drain(M, L).
set_event_option(K, V) :- current_event_engine(M), engine_set_option(M, K, V).
advance_time(T) :- current_event_engine(M), engine_advance(M, T).
flush_events :- current_event_engine(M), engine_flush(M).

%!  event(+Event) is det.
%
%   Push Event stamped with the wall clock, never earlier than the last
%   time seen by the engine (a monotonic clock).
event(E) :-
    current_event_engine(M),
    get_time(T0),
    M:ep_state(Now, _, _, _, _, _),
    T is max(T0, Now),
    engine_event(M, E, [T, T]).

		 /*******************************
		 *          LIFECYCLE           *
		 *******************************/

%!  engine_create(+Module) is det.
%
%   Create an empty engine in Module.  Raises permission_error if Module
%   is already an engine.
engine_create(M) :-
    must_be(atom, M),
    (   engine(M)
    ->  permission_error(create, event_engine, M)
    ;   true
    ),
    assertz(engine(M)),
    forall(engine_local(PI), dynamic(M:PI)),
    init_state(M),
    install_runner(M),
    update_emit(M).

%!  is_event_engine(+Module) is semidet.
%
%   Module is an engine.
is_event_engine(M) :-
    atom(M),
    engine(M).

%!  engine_destroy(+Module) is det.
engine_destroy(M) :-
    engine_reset(M),
    forall(engine_local(N/A), (functor(H, N, A), retractall(M:H))),
    retractall(engine_opt(M, _, _)),
    retractall(engine(M)).

%!  engine_reset(+Module) is det.
%
%   Remove every rule, goal, detection and error of the engine and reset
%   its clock.  Options are kept.
%
%   A rule predicate's clauses are retracted before it is abolished.
%   The compiler keeps a clause reference to each clause it makes
%   (ep_owner/3), and SWI-Prolog (9.2.9) counts the erased clauses that
%   still have one: retract/1 adds to that count, abolish/1 does not,
%   while the reference's release subtracts either way.  Abolished with
%   their references alive, the count wrapped below zero and stayed
%   there, and from then on every clause garbage collection of the
%   process came with an atom garbage collection (its rule: more than a
%   tenth of the erased clauses have a reference).  Every add_rules/2
%   does this to its dry-run engine (dry_run/2).
engine_reset(M) :-
    must_be_engine(M),
    engine_clear_state(M),
    forall(retract(engine_rule_pred(M, N/A)),
           (   functor(H, N, A),
               (   predicate_property(M:H, dynamic) -> retractall(M:H) ; true ),
               (   engine_local(N/A) -> true ; abolish(M:N/A) )
           )),
    forall(retract(engine_store(M, N/A, _, _)),
           (functor(H, N, A), retractall(M:H))),
    retractall(engine_store_newest_first(M, _)),
    retractall(engine_rule(M, _)),
    retractall(engine_rule_key(M, _, _)),
    retractall(engine_has_timers(M)),
    retractall(engine_has_pending(M)),
    retractall(engine_fingerprint_cache(M, _)),
    retractall(M:ep_on(_, _, _)),
    retractall(M:ep_multi(_, _)),
    forget_nodes(M),
    update_emit(M).

		 /*******************************
		 *            OPTIONS           *
		 *******************************/

%!  engine_set_option(+Module, +Key, +Value) is det.
engine_set_option(M, K, V) :-
    must_be_engine(M),
    (   default_option(K, _) -> true ; domain_error(engine_option, K) ),
    check_option(K, V),
    retractall(engine_opt(M, K, _)),
    assertz(engine_opt(M, K, V)),
    update_emit(M).

check_option(policy, V) :- !, must_be(oneof([unrestricted, recent, chronological]), V).
check_option(gc_every, V) :- !, must_be(nonneg, V).
check_option(gc_period, V) :- !, ( V == inf -> true ; must_be(positive_integer_or_number, V) ).
check_option(buffer, V) :- !, must_be(boolean, V).
check_option(max_depth, V) :- !, must_be(positive_integer, V).
check_option(dedup, V) :- !, must_be(oneof([true, false, listened]), V).
check_option(hook, V) :- !, ( V == none -> true ; must_be(callable, V) ).
check_option(max_queued, V) :- !, must_be(positive_integer, V).
check_option(replace_bindings, V) :- !, must_be(boolean, V).
check_option(out_of_order, V) :- !, must_be(boolean, V).
check_option(share, V) :- !, must_be(boolean, V).
check_option(justify, V) :- !, must_be(boolean, V).
check_option(timer_hook, V) :- !, ( V == none -> true ; must_be(callable, V) ).
check_option(_, _).

:- multifile error:has_type/2.
error:has_type(positive_integer_or_number, X) :- number(X), X > 0.

		 /*******************************
		 *            RULES             *
		 *******************************/

%!  engine_add_rules(+Module, +Rules:list) is det.
%
%   Compile event rules `Head <- Body` into Module.  Other clauses in
%   the list (`Head :- Body` or facts) are added to Module as helper
%   predicates callable from `where` conditions.  The whole list is
%   checked before anything is added.
engine_add_rules(M, Rules) :-
    must_be_engine(M),
    must_be(list, Rules),
    maplist(check_rule_item, Rules),
    compile_options(M, Options),
    dry_run(Rules, Options),
    retractall(engine_fingerprint_cache(M, _)),
    forall(member(R, Rules), add_item(M, R, Options)),
    update_emit(M).                     % whether detections are fed back may change

%   The options the compiler takes from the engine (see default_option/2).
compile_options(M, [policy(Policy), replace(Replace), out_of_order(OOO),
                    share(Share), justify(Justify)]) :-
    engine_option(M, policy, Policy),
    engine_option(M, replace_bindings, Replace),
    engine_option(M, out_of_order, OOO),
    engine_option(M, share, Share),
    engine_option(M, justify, Justify).

%   Compile the rules into a scratch engine first, so that a bad rule
%   raises before anything is added to the real one.
dry_run(Rules, Options) :-
    flag(epsparql_scratch, N, N + 1),
    atom_concat(epsparql_scratch_, N, T),
    engine_create(T),
    call_cleanup(
        forall(( member(R, Rules), R \= (:- _) ), add_item(T, R, Options)),
        engine_destroy(T)).

check_rule_item(R) :-
    (   var(R) -> instantiation_error(R)
    ;   R = 'rule:'(L, Rule)
    ->  must_be(ground, L),
        (   nonvar(Rule), Rule = (H <- _) -> must_be(callable, H)
        ;   domain_error(event_rule, Rule)
        )
    ;   R = (H <- _) -> must_be(callable, H)
    ;   R = (:- _) -> true
    ;   R = (H :- _) -> must_be(callable, H)
    ;   must_be(callable, R)
    ).

add_item(M, 'rule:'(Label, Rule), Options) :- !,
    add_rule(M, 'rule:'(Label, Rule), Rule, Options).
add_item(M, (H <- B), Options) :- !,
    add_rule(M, (H <- B), (H <- B), Options).
add_item(M, (:- G), _) :- !,
    call(M:G).
add_item(M, Clause, _) :-
    assertz(M:Clause),
    clause_head_pi(Clause, PI),
    (   engine_rule_pred(M, PI) -> true ; assertz(engine_rule_pred(M, PI)) ).

%   Every rule gets a key (unique in the process): the compiler records
%   which clauses and nodes it made for it, so that it can be deleted.
%   A rule is stored without its origin annotations (core_compile.pl).
add_rule(M, Stored0, Rule, Options) :-
    flag(epsparql_rule_key, K, K + 1),
    compile_rule(M, Rule, [key(K)|Options]),
    strip_origins(Stored0, Stored),
    assertz(engine_rule(M, Stored)),
    assertz(engine_rule_key(M, K, Stored)).

clause_head_pi((H :- _), N/A) :- !, functor(H, N, A).
clause_head_pi(H, N/A) :- functor(H, N, A).

%!  engine_load_rules(+Module, +File) is det.
%
%   Load a rule file: event rules, helper clauses and directives, read
%   with the rule language's operators.
engine_load_rules(M, File) :-
    setup_call_cleanup(
        open(File, read, S),
        read_event_rules(S, Terms, []),
        close(S)),
    engine_add_rules(M, Terms).

%!  read_event_rules(+Stream, -Terms, +Options) is det.
%
%   Read all clauses from Stream with the operators of the rule language.
read_event_rules(S, Terms, Options) :-
    read_term(S, T, [module(epsparql_core)|Options]),
    (   T == end_of_file
    ->  Terms = []
    ;   Terms = [T|Rest],
        read_event_rules(S, Rest, Options)
    ).

		 /*******************************
		 *          EXECUTION           *
		 *******************************/

%!  engine_event(+Module, +Event, +Interval) is det.
%
%   Push one event occurring over Interval = [T1,T2] (numbers, T1 =< T2).
engine_event(M, E, [T1, T2]) :- !,
    engine_events(M, [e(E, T1, T2)]).
engine_event(_, _, I) :-
    type_error(event_interval, I).

%!  engine_events(+Module, +Batch:list) is det.
%
%   Push a batch of events, each `e(Event, T1, T2)` or
%   `event(Event, [T1,T2])`, in order.  The batch is validated before
%   any event is processed.  Events are expected in nondecreasing order
%   of their end time; an event ending before the latest end time seen is
%   still processed, and counted as late.
%
%   Called while the engine is processing an event (from a where
%   condition, a hook, a do-action or an alarm, in the same thread), the
%   events are queued and processed right after the current one, in
%   order (see Events raised inside the engine).
engine_events(M, Batch) :-
    must_be_engine(M),
    must_be(list, Batch),
    normalise_batch(Batch, Items),
    engine_items(M, Items).

%   engine_items(+M, +Items): run e(E,T1,T2), adv(T) and flush items, or
%   queue them when this thread is already inside M.  The engine's mutex
%   keeps other threads out until the run (queue included) is over.
engine_items(M, Items) :-
    engine_mutex(M, Mutex),
    with_mutex(Mutex,
               (   engine_busy(M)
               ->  queue_items(M, Items)
               ;   run_batch(M, Items)
               )).

engine_mutex(M, Mutex) :-
    atom_concat('$epsparql_engine_', M, Mutex).

run_batch(M, Items) :-
    M:ep_state(Now0, N0, Since0, LastGC0, Late0, Stamp),
    engine_option(M, gc_every, Every),
    engine_option(M, gc_period, Period),
    set_depth(0),
    instant_work(M, Instant),
    busy_key(M, Key),
    setup_call_cleanup(
        nb_setval(Key, true),
        M:ep_items(Items, Instant, Every, Period,
                   Now0, N0, Since0, LastGC0, Late0, Now, N, Since, LastGC, Late),
        ( nb_setval(Key, false),
          retractall(M:ep_queue(_, _)) )),
    retract(M:ep_state(_, _, _, _, _, _)),
    assertz(M:ep_state(Now, N, Since, LastGC, Late, Stamp)).

%   normalise_batch(+Batch, -Items): Batch as e(E, T1, T2) items, checked.
%   A batch of valid e/3 items (what the bridge and the rows path make)
%   is its own normal form: it is checked in one pass that allocates
%   nothing; any other batch takes normalise_items/2, which converts
%   event/2 items and raises on the first bad one.
normalise_batch(Batch, Items) :-
    (   plain_items(Batch)
    ->  Items = Batch
    ;   normalise_items(Batch, Items)
    ).

%   plain_items(+Items): every item is e(E, T1, T2) with E callable, T1
%   and T2 integers or finite floats, T1 =< T2 (what check_event/3
%   accepts, tested without a call per item).  Fails on anything else,
%   binding nothing.
plain_items([]).
plain_items([X|Xs]) :-
    X = e(E, T1, T2),
    callable(E),
    (   integer(T1) -> true ; float(T1), float_class(T1, C1), C1 \== nan, C1 \== infinite ),
    (   integer(T2) -> true ; float(T2), float_class(T2, C2), C2 \== nan, C2 \== infinite ),
    T1 =< T2,
    plain_items(Xs).

normalise_items([], []).
normalise_items([X|Xs], [e(E, T1, T2)|Ys]) :-
    (   X = e(E, T1, T2) -> true
    ;   X = event(E, [T1, T2]) -> true
    ;   type_error(event_item, X)
    ),
    check_event(E, T1, T2),
    normalise_items(Xs, Ys).

check_event(E, T1, T2) :-
    (   var(E) -> instantiation_error(E) ; true ),
    (   callable(E) -> true ; type_error(event, E) ),
    check_time(T1), check_time(T2),
    (   T1 =< T2 -> true ; domain_error(event_interval, [T1, T2]) ).

check_time(T) :-
    (   var(T) -> instantiation_error(T)
    ;   \+ number(T) -> type_error(number, T)
    ;   float(T), \+ float_class(T, normal), \+ float_class(T, zero), \+ float_class(T, subnormal)
    ->  domain_error(finite_number, T)
    ;   true
    ).

%   instant_work(+M, -Work): what a new end instant must do in this
%   batch, decided once per batch (rules do not change within one):
%   none, or i(Close, SeenKey, Timers).  Close: close the earlier
%   instants (only engines with eqopt/leftjoin steps ever have answers
%   waiting in ep_pend/3); SeenKey: the global variable of the dedup set
%   to forget (none without dedup); Timers: fire the alarms the clock
%   passes.
instant_work(M, Work) :-
    (   engine_has_pending(M) -> Close = true ; Close = false ),
    (   engine_option(M, dedup, false) -> Seen = none ; seen_key(M, Seen) ),
    (   engine_has_timers(M) -> Timers = true ; Timers = false ),
    (   Close == false, Seen == none, Timers == false
    ->  Work = none
    ;   Work = i(Close, Seen, Timers)
    ).

new_instant(none, _, _) :- !.
new_instant(i(Close, Seen, Timers), M, T2) :-
    (   Timers == true -> fire_timers(M, <, T2) ; true ),
    (   Close == true -> close_instants(M, T2) ; true ),
    (   Seen == none -> true
    ;   nb_delete(Seen)                 % succeeds when there is no set (4x cheaper than nb_current/2)
    ).

%   run_item(+Item, +M, +Instant, +Every, +Period, +S0, -S): one item,
%   the state as s(Now, N, Since, LastGC, Late): the queued items and
%   the adv/flush ones (the engine's ep_items/14, install_runner/1, runs
%   the events of a batch itself, the same way).
run_item(e(E, T1, T2), M, Instant, Every, Period, s(Now0, N0, Since0, Last0, Late0), S) :-
    (   T2 < Now0 -> Late is Late0 + 1, Now = Now0
    ;   T2 > Now0
    ->  Late = Late0, Now = T2,
        new_instant(Instant, M, T2)
    ;   Late = Late0, Now = T2
    ),
    M:ep_event(E, T1, T2),
    N is N0 + 1,
    Since1 is Since0 + 1,
    (   (   Every > 0, Since1 >= Every
        ;   Period \== inf, ( Last0 =:= -inf -> true ; Now - Last0 >= Period )
        )
    ->  collect_garbage(M, Now), Since = 0, Last = Now
    ;   Since = Since1, Last = Last0
    ),
    S = s(Now, N, Since, Last, Late).
run_item(adv(T), M, _, _, _, s(Now0, N, Since, Last, Late), s(Now, N, Since, Last, Late)) :-
    fire_timers(M, =<, T),
    close_instants(M, =<, T),
    Now is max(Now0, T).
run_item(flush, M, _, _, _, S, S) :-
    close_instants(M, inf).

		 /*******************************
		 *  EVENTS RAISED INSIDE RULES  *
		 *******************************/

%   An event pushed while the engine is processing one (event/2 called
%   from a where condition, a hook, a do-action or an alarm in the same
%   thread) cannot be processed there and then: the rules are in the
%   middle of a step.  It is queued (ep_queue/2) with the rule that raised
%   it, and run right after the current event, in order; events it raises
%   in turn join the end of the queue.  One pushed event may lead to at
%   most max_queued queued ones: a rule that keeps raising events is
%   stopped there with an error naming it, and the rest of the queue is
%   dropped.

queue_items(M, Items) :-
    raise_origin(M, Origin),
    forall(member(I, Items), assertz(M:ep_queue(I, Origin))).

drain_queue(M, Instant, Every, Period, K, S0, S) :-
    (   retract(M:ep_queue(Item, Origin))
    ->  engine_option(M, max_queued, Max),
        (   K >= Max
        ->  retractall(M:ep_queue(_, _)),
            record_error(M, error(event_loop(Max, Origin), _), Item, none),
            S = S0
        ;   K1 is K + 1,
            set_depth(0),
            run_item(Item, M, Instant, Every, Period, S0, S1),
            drain_queue(M, Instant, Every, Period, K1, S1, S)
        )
    ;   S = S0
    ).

%!  close_instants(+Module, +Before) is det.
%
%   Time has reached Before: every instant earlier than it is closed, so
%   answers that waited for an optional part at such an instant (eqopt,
%   leftjoin) are decided now.  Closing may derive events at the closed
%   instant that wait in turn, hence the loop.
close_instants(M, Before) :-
    close_instants(M, <, Before).

close_instants(M, Cmp, Limit) :-
    (   findall(k(T, NegId),
                ( clause(M:ep_pend(T, Id, _), true),
                  compare_time(Cmp, T, Limit),
                  NegId is -Id ),
                Keys),
        Keys \== [],
        min_member(k(T0, NegId0), Keys)
    ->  % earliest instant first; within it the innermost step (children are
        % numbered after their parents), all of that step's waiting answers
        % at once, then look again: closing them may make outer steps wait
        Id0 is -NegId0,
        % all of them go: by retractall/1 per time found (5 and 5.0 are
        % two), no clause reference (see drop_expired/4)
        findall(T1-G, ( clause(M:ep_pend(T1, Id0, G), true), T1 =:= T0 ), TGs),
        pairs_keys_values(TGs, T1s, Gs),
        sort(T1s, Ts),
        forall(member(T1, Ts), retractall(M:ep_pend(T1, Id0, _))),
        forall(member(G, Gs), run_close(M, G, T0, Id0)),
        close_instants(M, Cmp, Limit)
    ;   true
    ).

compare_time(<, A, B) :- A < B.
compare_time(=<, A, B) :- A =< B.

run_close(M, G, T, Id) :-
    catch(all_solutions(M, G), Error, record_error(M, Error, close(T), node(Id))).

%!  engine_advance(+Module, +Time) is det.
%
%   Declare that no more events will end at or before Time (a heartbeat
%   or watermark): fire the alarms due by then, close those instants and
%   move the clock to Time.  Queued when called inside the engine.
engine_advance(M, T) :-
    must_be_engine(M),
    check_time(T),
    engine_items(M, [adv(T)]).

%!  engine_flush(+Module) is det.
%
%   Close every instant: emit all answers that wait for one.  Alarms are
%   not fired: the clock does not move (see engine_advance/2).
engine_flush(M) :-
    must_be_engine(M),
    engine_items(M, [flush]).

%   seen_before(+Key, +E, +T1, +T2) is semidet.
%
%   With dedup on: true if this occurrence was seen already, else remember
%   it.  Duplicates can only meet within one end instant (input is ordered
%   by end time, and instants are closed before they are forgotten), so
%   only the open instant is remembered: a hash set (library(nb_set)) in
%   a global variable of the engine, emptied when time advances.
seen_before(Key, E, T1, T2) :-
    (   nb_current(Key, Set)
    ->  true
    ;   empty_nb_set(Set0),
        nb_setval(Key, Set0),
        nb_getval(Key, Set)             % the stored copy is the one to update
    ),
    add_nb_set(occ(E, T1, T2), Set, New),
    New == false.

%   Run every rule step the event enters.  An exception in a rule
%   (a where-condition, a hook) is recorded with the event and the
%   engine goes on with the next event.
%
%   install_runner(+M): the engine's own clauses for this, in its module,
%   so that the hot path makes direct calls to M's predicates (a call
%   M:G with M known only at run time builds the term M:G and looks G's
%   predicate up in M every time):
%
%       ep_items(Items, Instant, Every, Period, Now0, N0, Since0, LastGC0,
%           Late0, Now, N, Since, LastGC, Late): run the items of a batch
%           in order (run_batch/2), the clock and counters of ep_state/6
%           threaded through as arguments (no term per event); the
%           events raised inside (ep_queue/2) run after the event that
%           raised them; an adv/flush item takes run_item/7
%       ep_event(E, T1, T2): E into the rules (see below for ep_multi/2)
%       ep_entries(E, T1, T2): every solution of ep_on(E, T1, T2), under
%           one catch/3
%
%   They are compiled with the optimise flag (inline arithmetic).
install_runner(M) :-
    retractall(M:ep_items(_, _, _, _, _, _, _, _, _, _, _, _, _, _)),
    retractall(M:ep_event(_, _, _)),
    retractall(M:ep_entries(_, _, _)),
    runner_clauses(M, Clauses),
    current_prolog_flag(optimise, Old),
    setup_call_cleanup(set_prolog_flag(optimise, true),
                       forall(member(C, Clauses), assertz(M:C)),
                       set_prolog_flag(optimise, Old)).

runner_clauses(M,
    [ ep_items([], _, _, _, Now, N, Since, Last, Late, Now, N, Since, Last, Late),
      ( ep_items([Item|Items], I, Every, Period,
                 Now0, N0, Since0, Last0, Late0, Now, N, Since, Last, Late) :-
            (   Item = e(E, T1, T2)
            ->  (   T2 > Now0
                ->  Now1 = T2, Late1 = Late0,
                    (   I == none -> true ; epsparql_core:new_instant(I, M, T2) )
                ;   T2 < Now0
                ->  Now1 = Now0, Late1 is Late0 + 1
                ;   Now1 = T2, Late1 = Late0
                ),
                ep_event(E, T1, T2),
                N1 is N0 + 1,
                Since2 is Since0 + 1,
                (   (   Every > 0, Since2 >= Every
                    ;   Period \== inf, ( Last0 =:= -inf -> true ; Now1 - Last0 >= Period )
                    )
                ->  epsparql_core:collect_garbage(M, Now1), Since1 = 0, Last1 = Now1
                ;   Since1 = Since2, Last1 = Last0
                )
            ;   epsparql_core:run_item(Item, M, I, Every, Period,
                                       s(Now0, N0, Since0, Last0, Late0),
                                       s(Now1, N1, Since1, Last1, Late1))
            ),
            (   ep_queue(_, _)
            ->  epsparql_core:drain_queue(M, I, Every, Period, 0,
                                          s(Now1, N1, Since1, Last1, Late1),
                                          s(Now2, N2, Since3, Last2, Late2))
            ;   Now2 = Now1, N2 = N1, Since3 = Since1, Last2 = Last1, Late2 = Late1
            ),
            ep_items(Items, I, Every, Period,
                     Now2, N2, Since3, Last2, Late2, Now, N, Since, Last, Late) ),
      ( ep_event(E, T1, T2) :-
            (   functor(E, Name, Arity),
                ep_multi(Name, Arity)
            ->  epsparql_core:dispatch_multi(M, E, T1, T2)
            ;   catch(ep_entries(E, T1, T2), Error, true),
                (   var(Error)
                ->  true
                ;   epsparql_core:entry_error(M, Error, E, T1, T2)
                )
            ) ),
      ( ep_entries(E, T1, T2) :-
            (   ep_on(E, T1, T2), fail ; true ) )
    ]).

dispatch_multi(M, E, T1, T2) :-
    (   clause(M:ep_on(E, T1, T2), Body),
        run_entry(M, Body, E, T1, T2),
        fail
    ;   true
    ).

%   One entry of an event into the rules, its exceptions recorded with
%   the event (and the step that raised, core_errors.pl).
run_entry(M, Goal, E, T1, T2) :-
    catch(all_solutions(M, Goal), Error, entry_error(M, Error, E, T1, T2)).

entry_error(M, Error, E, T1, T2) :-
    set_depth(0),
    record_error(M, Error, event(E, [T1, T2])).

%   all_solutions(+M, +Goal): run M:Goal through all its solutions.  A
%   predicate, not forall/2 written inside catch/3: janus loads
%   library(apply_macros) with global scope, which rewrites forall/2 into
%   a control construct, and catch/3 would then compile that construct
%   anew at every call (15% of the engine's time on a light workload).
all_solutions(M, G) :-
    (   M:G, fail ; true ).

%!  update_emit(+Module) is det.
%
%   (Re)generate Module's ep_emit/3, the clause every rule calls when its
%   head is detected, from the engine's options: record the detection
%   (into the buffer, or into the active sink of the Python bridge), call
%   the hook, and feed the head back as an event when some rule listens
%   to it.  Generating it keeps option look-ups off the hot path, and so
%   is the feeding when no rule head is an event some rule listens to
%   (then no detection can trigger a rule: no per-detection look-up).
update_emit(M) :-
    engine_option(M, buffer, Buffer),
    engine_option(M, hook, Hook),
    engine_option(M, max_depth, Max),
    sink_call(Sink, H, T1, T2, CallSink),
    (   Buffer == true
    ->  Kept = assertz(M:ep_det(H, T1, T2))
    ;   Kept = true
    ),
    Record = (   nb_current(epsparql_sink, Sink), Sink \== []
             ->  CallSink
             ;   Kept
             ),
    (   Hook == none
    ->  CallHook = true
    ;   CallHook = ( b_setval('$epsparql_raising', head(H)),
                     catch(call(Hook, H, [T1, T2]), E,
                           core_errors:record_error(M, E, hook(H, [T1, T2]), head(H))),
                     b_setval('$epsparql_raising', none) )
    ),
    engine_option(M, dedup, Dedup),
    seen_key(M, Key),
    retractall(M:ep_listened(_)),
    (   Dedup == true
    ->  Fresh = (\+ epsparql_core:seen_before(Key, H, T1, T2))
    ;   Dedup == listened, heads_listened(M)
    ->  forall(listened_head(M, L), assertz(M:ep_listened(L))),
        Fresh = ( M:ep_listened(H) -> \+ epsparql_core:seen_before(Key, H, T1, T2) ; true )
    ;   Fresh = true
    ),
    (   heads_listened(M)
    ->  Feed = epsparql_core:feed(M, H, T1, T2, Max)
    ;   Feed = true
    ),
    foldl(and_goal, [Record, CallHook, Feed], Fresh, Body),
    retractall(M:ep_emit(_, _, _)),
    assertz(M:(ep_emit(H, T1, T2) :- Body)).

%   and_goal(+G, +Acc, -Goal): Acc, G without the trues.
and_goal(G, Acc, Goal) :-
    (   G == true -> Goal = Acc
    ;   Acc == true -> Goal = G
    ;   Goal = (Acc, G)
    ).

%   Can a detected head be an event of some rule?  True if some rule's
%   emitted event (its head; for a labelled rule the inner rule's; for an
%   alarm rule the event the alarm raises) unifies with the event pattern
%   of an entry clause (ep_on/3).
heads_listened(M) :-
    engine_rule(M, Stored),
    rule_head(Stored, Head0),
    emitted_event(Head0, Head),
    \+ \+ clause(M:ep_on(Head, _, _), _),
    !.

%   listened_head(+M, -Head): the heads (a name with fresh arguments, once
%   each) of the rules whose emitted event some entry clause takes: a
%   superset of the detections that can be fed back.
listened_head(M, Head) :-
    setof(N/A, Stored^Head0^E^( engine_rule(M, Stored),
                                rule_head(Stored, Head0),
                                emitted_event(Head0, E),
                                \+ \+ clause(M:ep_on(E, _, _), _),
                                functor(E, N, A) ), NAs),
    member(N/A, NAs),
    functor(Head, N, A).

emitted_event(exceptionAlarm(E, _), E) :- !.
emitted_event(exceptionAlarmAbsoluteDatime(E, _), E) :- !.
emitted_event(Head, Head).

%   Detections go to the sink of a bridge call when one is active
%   (with_detection_sink/2), else to the engine's buffer (or nowhere with
%   the option buffer false): ep_emit/3 does this itself, inline.
%
%   sink_call(?Sink, ?H, ?T1, ?T2, -Goal): how ep_emit/3 passes H, T1,
%   T2 to the active Sink: call(Sink, H, T1, T2), but with a direct call
%   for the sinks declared with direct_sink/1 (a call/4 builds the goal
%   and looks its predicate up at every detection).
sink_call(Sink, H, T1, T2, Goal) :-
    findall(D, ( direct_sink(D), D = Mod:Name, atom(Mod), atom(Name) ), Ds0),
    list_to_set(Ds0, Ds),
    direct_calls(Ds, Sink, H, T1, T2, Goal).

%   The test is Sink = Mod:X, X == Name, which the compiler inlines
%   (Sink is always Module:Closure, with_detection_sink/2 being a meta
%   predicate), where Sink == Mod:Name would be a call to ==/2.
direct_calls([], Sink, H, T1, T2, call(Sink, H, T1, T2)).
direct_calls([Mod:Name|Ds], Sink, H, T1, T2, ( Sink = Mod:X, X == Name -> Mod:G ; Rest )) :-
    G =.. [Name, H, T1, T2],
    direct_calls(Ds, Sink, H, T1, T2, Rest).

%!  direct_sink(?Sink) is nondet.
%
%   Sink (Module:Name, as with_detection_sink/2 receives it: qualified
%   with the caller's module) is called directly by the engines whose
%   ep_emit/3 is generated after the declaration (a multifile hook:
%   bridge_python.pl declares its columns sink).  Any other sink is
%   called with call/4.
:- multifile direct_sink/1.
:- dynamic direct_sink/1.

%   A derived event is an event: run the rules that listen to it.  The
%   nesting depth is bounded so that a rule deriving what it consumes
%   stops with an error (naming the limit and the rule) instead of
%   looping.
feed(M, H, T1, T2, Max) :-
    (   \+ \+ clause(M:ep_on(H, _, _), _)
    ->  depth(D),
        D1 is D + 1,
        set_depth(D1),
        (   D >= Max
        ->  set_depth(0),
            rule_heads_of(M, H, Heads),
            throw(error(derivation_depth(Max, Heads), context(feed/5, _)))
        ;   true
        ),
        forall(M:ep_on(H, T1, T2), true),
        set_depth(D)
    ;   true
    ).

%   The nesting depth of derived events, per thread (a global variable:
%   flag/3 would take a mutex at every update, twice per derived event,
%   and is shared by all threads).
depth(D) :-
    (   nb_current('$epsparql_depth', D0) -> D = D0 ; D = 0 ).

set_depth(D) :-
    nb_setval('$epsparql_depth', D).

%!  with_detection_sink(:Sink, :Goal) is semidet.
%
%   Run Goal with detections passed to call(Sink, Event, T1, T2) instead
%   of the buffer (used by the Python bridge to stream them out).
:- meta_predicate with_detection_sink(3, 0).
with_detection_sink(Sink, Goal) :-
    (   nb_current(epsparql_sink, Old) -> true ; Old = [] ),
    b_setval(epsparql_sink, Sink),
    call(Goal),
    b_setval(epsparql_sink, Old).

		 /*******************************
		 *      GARBAGE COLLECTION      *
		 *******************************/

%!  engine_gc(+Module) is det.
%
%   Remove goals that can no longer take part in a detection because
%   their window has passed.  Under the engine's mutex, as pushing is: a
%   sweep takes the first live goal of a store out and puts it back
%   (drop_expired_prefix/4), which another thread must not see.
engine_gc(M) :-
    must_be_engine(M),
    engine_mutex(M, Mutex),
    with_mutex(Mutex,
               (   M:ep_state(Now, _, _, _, _, _),
                   (   Now =:= -inf -> true ; collect_garbage(M, Now, force) )
               )).

%!  engine_drop_goals(+Module, +Before) is det.
%
%   Remove every stored partial match that ended before Before, whatever
%   its rule's window (a general garbage collection by age, as ETALIS'
%   garbage_control(general) flag asks).
engine_drop_goals(M, Limit) :-
    must_be_engine(M),
    check_time(Limit),
    forall(( engine_store(M, Name/A, _, _),
             \+ sub_atom(Name, _, 1, 0, a) ),     % aggregate windows keep their own
           (   functor(H, Name, A),
               arg(A, H, T2),
               findall(H, ( clause(M:H, true), T2 < Limit ), Hs),
               maplist(consume_goal(M), Hs)
           )).

collect_garbage(M, Now) :-
    collect_garbage(M, Now, lazy).

%   A goal stored at start T1 can only complete at an end >= Now, so it is
%   dead when Now - T1 > Window.  A store is swept in full, but only once
%   the clock has moved by a quarter of its window since its last sweep:
%   the cost per event stays constant whatever the window.
collect_garbage(M, Now, Mode) :-
    forall(( engine_store(M, Name/A, W, _), W \== inf ),
           sweep(M, Name, A, W, Now, Mode)).

sweep(M, Name, A, W, Now, Mode) :-
    (   engine_swept(M, Name, Last, N0) -> true ; Last = -inf, N0 = 0 ),
    (   Mode == lazy,
        Last =\= -inf,
        Now - Last < W / 4
    ->  true
    ;   retractall(engine_swept(M, Name, _, _)),
        N is N0 + 1,
        assertz(engine_swept(M, Name, Now, N)),
        Lim is Now - W,
        functor(H, Name, A),
        P is A - 1,
        arg(P, H, T1),
        (   engine_store_newest_first(M, Name)
        ->  drop_expired(M, H, T1, Lim)
        ;   % goals are stored oldest first (mostly: a composite partial match
            % can start earlier than one stored before it): drop the expired
            % prefix; every 8th sweep walks the whole store
            drop_expired_prefix(M, H, T1, Lim),
            (   Mode == lazy, N mod 8 =\= 0
            ->  true
            ;   drop_expired(M, H, T1, Lim)
            )
        )
    ).

%   drop_expired_prefix(+M, +H, ?T1, +Lim): remove the goals at the front
%   of the store of H (fresh arguments, T1 its start) that started before
%   Lim.  One pass of retract/1, which takes the clauses in order: the
%   first goal still alive is taken too and put back in front (asserta/1:
%   the order is unchanged).  H is left unbound.  No clause reference is
%   made: a reference is a blob, and SWI-Prolog reclaims the clauses
%   erased through one with an atom garbage collection (which marks every
%   thread's stacks) for every clause garbage collection; clause/3 and
%   erase/1 per expired goal made that collection run every few hundred
%   events.
drop_expired_prefix(M, H, T1, Lim) :-
    \+ \+ (   retract(M:H), T1 >= Lim
           ->  asserta(M:H)
           ;   true
           ).

%   drop_expired(+M, +H, ?T1, +Lim): remove every goal of the store that
%   started before Lim.  They are found with clause/2 and then removed in
%   their order by consume_goal/2: a ground goal by retract/1, which takes
%   the first clause it unifies with, the goal itself (the expired goals
%   before it are gone by then, and the others have another start); a
%   goal with variables by its reference, found as the first variant
%   (rare).  Found first and removed after: retract/1 inside the walk
%   would see the goals the walk has removed (SWI-Prolog's logical update
%   view holds for the whole walk) and could unify with one of them.
drop_expired(M, H, T1, Lim) :-
    findall(H, ( clause(M:H, true), T1 < Lim ), Hs),
    maplist(consume_goal(M), Hs).

		 /*******************************
		 *            ALARMS            *
		 *******************************/

%   A rule with the head exceptionAlarm(E, Secs) or
%   exceptionAlarmAbsoluteDatime(E, Time) does not emit its head: each
%   detection of its body sets an alarm (core_timers.pl) that emits E
%   over [start of the body, due time] when the engine's clock passes the
%   due time: before the first event ending after it is processed, or by
%   engine_advance/2 to a time at or after it.  The clock is event time;
%   a program on the wall clock drives it with engine_advance/2 (the
%   timer_hook option says when).  engine_flush/1 does not fire alarms.

%!  fire_timers(+Module, +Cmp, +Limit) is det.
%
%   Fire, in order of due time (then of setting), the alarms due before
%   Limit (Cmp `<`) or at or before it (`=<`).  The instants before each
%   due time are closed first, as they are for an event.
fire_timers(M, Cmp, Limit) :-
    (   findall(k(D, S),
                ( clause(M:ep_timer(D, S, _, _, _), true),
                  compare_time(Cmp, D, Limit) ),
                Ks),
        Ks \== [],
        min_member(k(Due, Seq), Ks)
    ->  retract(M:ep_timer(Due, Seq, E, T1, Why)),
        close_instants(M, Due),
        Start is min(T1, Due),
        set_depth(0),
        catch(( record_alarm(M, Why, E, Start, Due),
                ignore(M:ep_emit(E, Start, Due)) ),
              Error,
              ( set_depth(0),
                record_error(M, Error, alarm(E, [Start, Due])) )),
        fire_timers(M, Cmp, Limit)
    ;   true
    ).

%!  engine_timers(+Module, -Timers:list) is det.
%
%   The alarms set and not fired yet, as `alarm(Event, Due)`, in the
%   order they will fire.
engine_timers(M, Timers) :-
    must_be_engine(M),
    findall(k(D, S)-alarm(E, D), clause(M:ep_timer(D, S, E, _, _), true), Pairs0),
    keysort(Pairs0, Pairs),
    pairs_values(Pairs, Timers).

		 /*******************************
		 *         RULE DELETION        *
		 *******************************/

%!  engine_delete_rules(+Module, +What) is det.
%
%   Delete rules at run time.  What is a label (every rule added as
%   `Label 'rule:' Head <- Body` with that label), a labelled rule
%   `Label 'rule:' Rule` (the rules with that label that unify with Rule)
%   or a rule `Head <- Body` (the rules, labelled or not, that unify with
%   it, as ETALIS deletes).  The steps no other rule uses are removed
%   with their stored partial matches and waiting answers; other rules
%   are untouched.  Alarms already set stay set.
engine_delete_rules(M, What) :-
    must_be_engine(M),
    (   var(What) -> instantiation_error(What) ; true ),
    findall(K-R, ( engine_rule_key(M, K, R), rule_selected(What, R) ), KRs),
    forall(member(K-R, KRs), delete_rule_key(M, K, R)),
    retractall(engine_fingerprint_cache(M, _)).

%!  delete_event_rules(+What) is det.
%
%   engine_delete_rules/2 on the current engine.
delete_event_rules(What) :-
    current_event_engine(M),
    engine_delete_rules(M, What).

rule_selected('rule:'(L, Rule), 'rule:'(L1, Rule1)) :- !,
    L == L1, \+ Rule \= Rule1.
rule_selected((H <- B), R) :- !,
    (   R = 'rule:'(_, R1) -> true ; R1 = R ),
    \+ R1 \= (H <- B).
rule_selected(Label, 'rule:'(L, _)) :-
    Label == L.

delete_rule_key(M, K, R) :-
    delete_rule(M, K, Nodes),
    retract(engine_rule_key(M, K, R)),
    (   clause(engine_rule(M, R0), true, Ref), R0 =@= R
    ->  erase(Ref)
    ;   true
    ),
    forall(member(Id, Nodes), forget_node_state(M, Id)).

%   The stores and waiting answers of a deleted step.
forget_node_state(M, Id) :-
    forall(retract(engine_store(M, N/A, _, Id)),
           (   functor(H, N, A),
               retractall(M:H),
               retractall(engine_swept(M, N, _, _)),
               retractall(engine_store_newest_first(M, N))
           )),
    retractall(M:ep_pend(_, Id, _)).

		 /*******************************
		 *         JUSTIFICATION        *
		 *******************************/

%!  engine_justify(+Module, ?Event, ?Interval, -Justification) is nondet.
%
%   Why Event was detected over Interval, for engines with the justify
%   option on (see core_justify.pl for the tree).
engine_justify(M, E, I, J) :-
    must_be_engine(M),
    justify(M, E, I, J).

%!  justify_event(?Event, ?Interval, -Justification) is nondet.
justify_event(E, I, J) :-
    current_event_engine(M),
    engine_justify(M, E, I, J).

%!  write_justification(+Justification) is det.
%
%   Print a justification tree, one line per event, indented.
write_justification(J) :-
    write_tree(J).

		 /*******************************
		 *          DETECTIONS          *
		 *******************************/

%!  engine_detected(+Module, ?Event, ?Interval) is nondet.
%
%   Detected complex events not yet drained, in detection order.
engine_detected(M, E, [T1, T2]) :-
    M:ep_det(E, T1, T2).

%!  engine_drain(+Module, -List) is det.
%
%   Return the buffered detections as `detected(Event, [T1,T2])`, in
%   detection order, and empty the buffer.
engine_drain(M, L) :-
    must_be_engine(M),
    findall(detected(E, [T1, T2]), retract(M:ep_det(E, T1, T2)), L).

%!  engine_errors(+Module, -List) is det.
%
%   Errors raised inside rules since the last call, oldest first, and
%   forget them.  Each is `rule_error(Error, Context, Node, Heads)`:
%
%     - Error: the exception term as raised (message_text/2 gives
%       Prolog's message for it)
%     - Context: what triggered it: event(E, [T1,T2]) (an event entering
%       the rules), action(H, [T1,T2]) (the do-action of a detection of
%       H), hook(H, [T1,T2]), close(T) (deciding answers that waited for
%       instant T), alarm(E, [T1,T2]), timer_hook(E, Due), or the queued
%       item a loop stopped at (event_loop errors)
%     - Node: the step of the rule graph it was raised in (graph_node/2's
%       id; the root step of the rule for a do-action), or none
%     - Heads: the heads of the rules concerned (those whose pattern holds
%       Node, the rule of a do-action, the rules deriving the event a
%       hook or a limit was about)
engine_errors(M, L) :-
    must_be_engine(M),
    findall(rule_error(E, Ctx, Node, Heads), retract(M:ep_err(E, Ctx, Node, Heads)), L).

		 /*******************************
		 *           STATISTICS         *
		 *******************************/

%!  engine_stats(+Module, -Stats:dict) is det.
%
%   events (processed), late (ending before the clock), now (latest end
%   time), goals (stored partial matches), stores, nodes, rules, pending
%   (undrained detections), waiting (answers waiting for their instant to
%   close, ep_pend/3).
engine_stats(M, Stats) :-
    must_be_engine(M),
    M:ep_state(Now, N, _, _, Late, _),
    aggregate_all(sum(C), ( engine_store(M, PI, _, _), pi_clauses(M, PI, C) ), Goals),
    aggregate_all(count, engine_store(M, _, _, _), Stores),
    aggregate_all(count, engine_rule(M, _), Rules),
    aggregate_all(count, M:ep_det(_, _, _), Pending),
    pi_clauses(M, ep_pend/3, Waiting),
    node_count(M, Nodes),
    Stats = stats{events:N, late:Late, now:Now, goals:Goals, stores:Stores,
                  nodes:Nodes, rules:Rules, pending:Pending, waiting:Waiting}.

pi_clauses(M, N/A, C) :-
    functor(H, N, A),
    (   predicate_property(M:H, number_of_clauses(C0)) -> C = C0 ; C = 0 ).

