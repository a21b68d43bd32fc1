/*  epsparql_core: an ETALIS-style complex event processor in SWI-Prolog.

    Event rules `Head <- Body` are binarised and compiled into
    event-driven backward-chaining clauses (see ep_compile.pl).  Events
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
            read_event_rules/3,         % +Stream, -Terms, +Options
            op(1200, xfx, <-),
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
:- use_module(library(lists)).
:- use_module(library(apply)).
:- use_module(library(error)).
:- use_module(ep_compile).

%   Declared global state: the registry of engines and what the compiler
%   created in each of them.  Everything else lives in the engine modules.
:- dynamic
    engine/1,                   % engine(Module)
    engine_opt/3,               % engine_opt(Module, Key, Value)
    engine_store/4,             % engine_store(Module, Name/Arity, Window, NodeId)
    engine_rule_pred/2,         % engine_rule_pred(Module, Name/Arity)
    engine_rule/2,              % engine_rule(Module, Rule)
    engine_swept/3.             % engine_swept(Module, StoreName, Now)

%   Per-engine dynamic predicates, created in each engine module.
engine_local(ep_on/3).          % ep_on(Event, T1, T2): entry of atomic patterns
engine_local(ep_det/3).         % ep_det(Event, T1, T2): detection buffer
engine_local(ep_err/2).         % ep_err(Message, Context): errors not yet reported
engine_local(ep_state/6).       % ep_state(Now, Events, SinceGC, LastGC, Late, Stamp)

%!  default_option(?Key, ?Value) is nondet.
%
%   Options of an engine and their defaults:
%     - policy: consumption policy for rules added afterwards
%       (unrestricted, recent, chronological)
%     - gc_every: run the garbage collection every N events (0: never)
%     - gc_period: also run it when application time advanced this many
%       seconds since the last run (inf: never)
%     - hook: a goal called as call(Hook, Event, [T1,T2]) per detection
%     - buffer: keep detections in the buffer (true/false)
%     - max_depth: how deep derived events may trigger further rules
default_option(policy, unrestricted).
default_option(gc_every, 1000).
default_option(gc_period, inf).
default_option(hook, none).
default_option(buffer, true).
default_option(max_depth, 200).

:- initialization(init_core).

init_core :-
    nb_setval(epsparql_depth, 0),
    (   engine(epsparql_default) -> true ; engine_create(epsparql_default) ),
    nb_setval(epsparql_current_engine, epsparql_default).

		 /*******************************
		 *       CURRENT ENGINE         *
		 *******************************/

%!  current_event_engine(-Module) is det.
current_event_engine(M) :-
    nb_getval(epsparql_current_engine, M).

%!  set_current_event_engine(+Module) is det.
%
%   Make Module (created if needed) the engine of the engine-less API.
set_current_event_engine(M) :-
    must_be(atom, M),
    (   engine(M) -> true ; engine_create(M) ),
    nb_setval(epsparql_current_engine, M).

reset_engine :- current_event_engine(M), engine_reset(M).
clear_engine_state :- current_event_engine(M), engine_clear_state(M).
add_event_rules(Rules) :- current_event_engine(M), engine_add_rules(M, Rules).
load_event_rules(File) :- current_event_engine(M), engine_load_rules(M, File).
event(E, Interval) :- current_event_engine(M), engine_event(M, E, Interval).
events(Batch) :- current_event_engine(M), engine_events(M, Batch).
detected(E, Interval) :- current_event_engine(M), engine_detected(M, E, Interval).
drain_detected(L) :- current_event_engine(M), engine_drain(M, L).
set_event_option(K, V) :- current_event_engine(M), engine_set_option(M, K, V).

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
    init_state(M).

init_state(M) :-
    retractall(M:ep_state(_, _, _, _, _, _)),
    NegInf is -inf,
    assertz(M:ep_state(NegInf, 0, 0, NegInf, 0, NegInf)).

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
engine_reset(M) :-
    must_be_engine(M),
    engine_clear_state(M),
    forall(retract(engine_rule_pred(M, N/A)),
           (functor(H, N, A), retractall(M:H))),
    forall(retract(engine_store(M, N/A, _, _)),
           (functor(H, N, A), retractall(M:H))),
    retractall(engine_rule(M, _)),
    retractall(M:ep_on(_, _, _)),
    forget_nodes(M).

%!  engine_clear_state(+Module) is det.
%
%   Forget goals, detections, errors and time, keep the rules.
engine_clear_state(M) :-
    must_be_engine(M),
    forall(engine_store(M, N/A, _, _), (functor(H, N, A), retractall(M:H))),
    retractall(engine_swept(M, _, _)),
    retractall(M:ep_det(_, _, _)),
    retractall(M:ep_err(_, _)),
    init_state(M).

must_be_engine(M) :-
    (   engine(M) -> true ; existence_error(event_engine, M) ).

		 /*******************************
		 *            OPTIONS           *
		 *******************************/

%!  engine_set_option(+Module, +Key, +Value) is det.
engine_set_option(M, K, V) :-
    must_be_engine(M),
    (   default_option(K, _) -> true ; domain_error(engine_option, K) ),
    check_option(K, V),
    retractall(engine_opt(M, K, _)),
    assertz(engine_opt(M, K, V)).

check_option(policy, V) :- !, must_be(oneof([unrestricted, recent, chronological]), V).
check_option(gc_every, V) :- !, must_be(nonneg, V).
check_option(gc_period, V) :- !, ( V == inf -> true ; must_be(positive_integer_or_number, V) ).
check_option(buffer, V) :- !, must_be(boolean, V).
check_option(max_depth, V) :- !, must_be(positive_integer, V).
check_option(hook, V) :- !, ( V == none -> true ; must_be(callable, V) ).
check_option(_, _).

:- multifile error:has_type/2.
error:has_type(positive_integer_or_number, X) :- number(X), X > 0.

%!  engine_option(+Module, ?Key, ?Value) is nondet.
engine_option(M, K, V) :-
    default_option(K, D),
    (   engine_opt(M, K, V0) -> V = V0 ; V = D ).

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
    engine_option(M, policy, Policy),
    forall(member(R, Rules), add_item(M, R, Policy)).

check_rule_item(R) :-
    (   var(R) -> instantiation_error(R)
    ;   R = (H <- _) -> must_be(callable, H)
    ;   R = (:- _) -> true
    ;   R = (H :- _) -> must_be(callable, H)
    ;   must_be(callable, R)
    ).

add_item(M, (H <- B), Policy) :- !,
    compile_rule(M, (H <- B), [policy(Policy)]),
    assertz(engine_rule(M, (H <- B))).
add_item(M, (:- G), _) :- !,
    call(M:G).
add_item(M, Clause, _) :-
    assertz(M:Clause),
    clause_head_pi(Clause, PI),
    (   engine_rule_pred(M, PI) -> true ; assertz(engine_rule_pred(M, PI)) ).

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
engine_events(M, Batch) :-
    must_be_engine(M),
    must_be(list, Batch),
    normalise_batch(Batch, Items),
    retract(M:ep_state(Now0, N0, Since0, LastGC0, Late0, Stamp)),
    engine_option(M, gc_every, Every),
    engine_option(M, gc_period, Period),
    nb_setval(epsparql_depth, 0),
    catch(run_items(Items, M, Every, Period,
                    s(Now0, N0, Since0, LastGC0, Late0), s(Now, N, Since, LastGC, Late)),
          Error,
          ( assertz(M:ep_state(Now0, N0, Since0, LastGC0, Late0, Stamp)),
            throw(Error))),
    assertz(M:ep_state(Now, N, Since, LastGC, Late, Stamp)).

normalise_batch([], []).
normalise_batch([X|Xs], [e(E, T1, T2)|Ys]) :-
    (   X = e(E, T1, T2) -> true
    ;   X = event(E, [T1, T2]) -> true
    ;   type_error(event_item, X)
    ),
    check_event(E, T1, T2),
    normalise_batch(Xs, Ys).

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

run_items([], _, _, _, S, S).
run_items([e(E, T1, T2)|Es], M, Every, Period, s(Now0, N0, Since0, Last0, Late0), S) :-
    (   T2 < Now0 -> Late is Late0 + 1, Now = Now0 ; Late = Late0, Now = T2 ),
    dispatch(M, E, T1, T2),
    N is N0 + 1,
    Since1 is Since0 + 1,
    (   (   Every > 0, Since1 >= Every
        ;   Period \== inf, Now - Last0 >= Period
        )
    ->  collect_garbage(M, Now), Since = 0, Last = Now
    ;   Since = Since1, Last = Last0
    ),
    run_items(Es, M, Every, Period, s(Now, N, Since, Last, Late), S).

%   Run every rule step the event enters.  An exception in a rule
%   (a where-condition, a hook) is recorded with the event and the
%   engine goes on with the next event.
dispatch(M, E, T1, T2) :-
    catch(forall(M:ep_on(E, T1, T2), true),
          Error,
          record_error(M, Error, event(E, [T1, T2]))).

record_error(M, Error, Context) :-
    (   Error = error(resource_error(_), _) -> throw(Error) ; true ),
    message_text(Error, Text),
    assertz(M:ep_err(Text, Context)).

message_text(E, Text) :-
    catch(( message_to_codes(E, Codes), string_codes(Text, Codes) ),
          _,
          format(string(Text), '~q', [E])).

message_to_codes(E, Codes) :-
    phrase('$messages':translate_message(E), Lines),
    with_output_to(codes(Codes), print_message_lines(current_output, '', Lines)).

%!  emit(+Module, +Head, +T1, +T2) is det.
%
%   A rule head was detected: buffer it, call the hook, and feed it back
%   as an event so that rules over complex events see it.  Called from
%   compiled rules only.
emit(M, H, T1, T2) :-
    (   engine_opt(M, buffer, false) -> true ; assertz(M:ep_det(H, T1, T2)) ),
    (   engine_opt(M, hook, Hook), Hook \== none
    ->  catch(call(Hook, H, [T1, T2]), E, record_error(M, E, hook(H, [T1, T2])))
    ;   true
    ),
    nb_getval(epsparql_depth, D),
    engine_option(M, max_depth, Max),
    (   D >= Max
    ->  throw(error(domain_error(derivation_depth_at_most(Max), D),
                    context(emit/4, 'derived events nested deeper than max_depth: a rule may derive what it consumes')))
    ;   true
    ),
    D1 is D + 1,
    nb_setval(epsparql_depth, D1),
    forall(M:ep_on(H, T1, T2), true),
    nb_setval(epsparql_depth, D).

%!  aggregate_step(+M, +Store, +Group, +Window, +Op, +X, +T1, +T2, -TS, -Value) is semidet.
%
%   Add X to the window of Group and compute the aggregate over it.
%   Called from compiled rules only.
aggregate_step(M, Store, G, Window, Op, X, T1, T2, TS, Value) :-
    Item =.. [Store, G, T1, T2, X],
    assertz(M:Item),
    prune_window(Window, M, Store, G, T2),
    Probe =.. [Store, G, S, _, V],
    findall(S-V, M:Probe, Pairs),
    pairs_keys_values(Pairs, Starts, Values),
    min_list(Starts, TS),
    aggregate_value(Op, Values, Value).

prune_window(time(W), M, Store, G, Now) :-
    Lim is Now - W,
    Probe =.. [Store, G, S, _, _],
    forall(( clause(M:Probe, true, Ref), S < Lim ), erase(Ref)).
prune_window(count(N), M, Store, G, _) :-
    Probe =.. [Store, G, _, _, _],
    aggregate_all(count, M:Probe, C),
    Drop is C - N,
    drop_oldest(Drop, M, Probe).

drop_oldest(K, M, Probe) :-
    (   K =< 0 -> true
    ;   copy_term(Probe, P1),
        once(clause(M:P1, true, Ref)),
        erase(Ref),
        K1 is K - 1,
        drop_oldest(K1, M, Probe)
    ).

aggregate_value(count, Vs, C) :- length(Vs, C).
aggregate_value(sum, Vs, S) :- sum_list(Vs, S).
aggregate_value(avg, Vs, A) :- sum_list(Vs, S), length(Vs, C), A is S / C.
aggregate_value(min, Vs, X) :- min_list(Vs, X).
aggregate_value(max, Vs, X) :- max_list(Vs, X).

		 /*******************************
		 *      GARBAGE COLLECTION      *
		 *******************************/

%!  engine_gc(+Module) is det.
%
%   Remove goals that can no longer take part in a detection because
%   their window has passed.
engine_gc(M) :-
    must_be_engine(M),
    M:ep_state(Now, _, _, _, _, _),
    (   Now =:= -inf -> true ; collect_garbage(M, Now, force) ).

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
    (   Mode == lazy,
        engine_swept(M, Name, Last),
        Now - Last < W / 4
    ->  true
    ;   retractall(engine_swept(M, Name, _)),
        assertz(engine_swept(M, Name, Now)),
        Lim is Now - W,
        functor(H, Name, A),
        P is A - 1,
        arg(P, H, T1),
        forall(( clause(M:H, true, Ref), T1 < Lim ), erase(Ref))
    ).

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
%   Errors raised inside rules since the last call, as
%   `error(MessageText, Context)`, and forget them.
engine_errors(M, L) :-
    must_be_engine(M),
    findall(error(Text, Ctx), retract(M:ep_err(Text, Ctx)), L).

		 /*******************************
		 *           STATISTICS         *
		 *******************************/

%!  engine_stats(+Module, -Stats:dict) is det.
%
%   events (processed), late (ending before the clock), now (latest end
%   time), goals (stored partial matches), stores, nodes, rules, pending
%   (undrained detections).
engine_stats(M, Stats) :-
    must_be_engine(M),
    M:ep_state(Now, N, _, _, Late, _),
    aggregate_all(sum(C), ( engine_store(M, PI, _, _), pi_clauses(M, PI, C) ), Goals),
    aggregate_all(count, engine_store(M, _, _, _), Stores),
    aggregate_all(count, engine_rule(M, _), Rules),
    aggregate_all(count, M:ep_det(_, _, _), Pending),
    node_count(M, Nodes),
    Stats = stats{events:N, late:Late, now:Now, goals:Goals, stores:Stores,
                  nodes:Nodes, rules:Rules, pending:Pending}.

pi_clauses(M, N/A, C) :-
    functor(H, N, A),
    (   predicate_property(M:H, number_of_clauses(C0)) -> C = C0 ; C = 0 ).
