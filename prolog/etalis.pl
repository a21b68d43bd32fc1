/*  ETALIS programs on the epsparql core.

    Load this file where an ETALIS program loads ETALIS' src/etalis.P and
    the program runs unchanged, in SWI-Prolog's default mode:

        ?- ['prolog/etalis.pl'].
        ?- compile_event_file('rules.event'),
           set_etalis_flag(store_fired_events, on),
           event(a), event(b),
           findall(E, stored_event(E), Es).

    This is a thin translation onto the core (epsparql_core.pl), not a
    second engine:

    - rule files are read with ETALIS' operators and priorities
      (etalis_syntax.pl) and each rule becomes one core rule
      (etalis_translate.pl): `seq` is the core's seq, ETALIS' readings of
      par, during, starts and finishes are core relations defined below,
      `where` keeps ETALIS' first solution, `check`/`timestamp` see the
      interval through t1/1 and t2/1, alarms, star_times, aggregates,
      cnot and fnot are the core's;
    - ETALIS' consumption policies are the core's recent/chronological
      with one partial match per bindings (replace_bindings), its
      rule_sharing flag the core's share option, out_of_order and
      etalis_justification the core's options of the same meaning;
    - time stamps: ETALIS stamps events with datime(Y,M,D,H,Min,S,Counter)
      (local time, the counter ordering events within one second) or with
      numbers.  The core sees numbers: a datime is mapped to seconds
      (its fields read as UTC, plus Counter/2^21, core_timers.pl) and
      back for stored_event/1.  A program on datime stamps is on the wall
      clock: its alarms fire at the real time (SWI-Prolog's alarms advance
      the core's clock); on numbers, alarms follow the stream's own time.

    What differs from ETALIS and why: docs/ETALIS.md.
*/
:- module(etalis,
          [ compile_event_file/1,       % +File
            compile_events/1,           % +File
            compile_event_rules/1,      % +Rules
            compile_event_rules/2,      % +Name, +Rules
            compile_internal_event_rules/2, % +Name, +CoreRules
            event/1,                    % +Event
            event/2,                    % +Event, +Stamps
            set_etalis_flag/2,          % +Flag, +Value
            get_etalis_flag/2,          % +Flag, -Value
            stored_event/1,             % ?event(Event, [T1,T2])
            external_trigger/1,         % ?Trigger
            print_trigger/1,            % ?Trigger
            event_rule_property/3,      % ?Label, ?Property, ?Value
            t1/1, t2/1,                 % -Stamp (inside check/timestamp)
            load_static_rules/1,        % +File
            load_database/1,            % +File
            execute_event_stream_file/1,% +File
            fire_event_list/1,          % +Events
            ins_event_rule/1,           % +Rule
            del_event_rule/1,           % +LabelOrRule
            ins_static_rule/1,          % +Clause
            del_static_rule/1,          % +Clause
            retractall_stored_events/0,
            reset_etalis_state/0,
            reset_etalis_static_state_and_engine/0,
            reset_etalis/0,
            justify_event/3,            % ?Event, ?[T1,T2], -Justification
            write_justification/1,      % +Justification
            write_justification_udraw/3,% +Goal, +Justification, +File
            fire_events_java/2,         % +Events, -Triggered
            reset_log_file/1,           % +File
            write_log/2,                % +File, +Term
            etalis_engine/1,            % -CoreEngineModule
            op(1200, xfy, <-),
            op(1200, xfy, 'rule:'),
            op(1200, xfy, iff),
            op(1124, yfx, do),
            op(1060, yfx, where),
            op(1055, xfy, within),
            op(1053, yfx, or),
            op(1050, yfx, check),
            op(1050, yfx, timestamp),
            op(1050, yfx, event_multiply),
            op(1045, yfx, par),
            op(1040, yfx, and),
            op(1031, yfx, cnot),
            op(1031, yfx, fnot),
            op(1025, yfx, seq),
            op(1025, yfx, forall_seq),
            op(1025, yfx, equals),
            op(1025, yfx, meets),
            op(1025, yfx, during),
            op(1025, yfx, starts),
            op(1025, yfx, finishes),
            op(1025, yfx, ntimes),
            op(200, xf, star_times)
          ]).
:- use_module(library(lists)).
:- use_module(library(apply)).
:- use_module(library(error)).
:- use_module(library(time)).
:- use_module(epsparql_core,
              [ engine_create/1, engine_destroy/1, engine_events/2, engine_set_option/3,
                engine_add_rules/2, engine_delete_rules/2, engine_errors/2,
                engine_advance/2, engine_justify/4, engine_drop_goals/2,
                engine_clear_state/1, is_event_engine/1, engine_busy/1,
                message_text/2 ]).
:- use_module(core_timers, [datime_seconds/2, seconds_datime/2]).
:- use_module(core_justify, [why_not/3, write_tree/1]).
:- use_module(etalis_runtime).
:- use_module(etalis_syntax).
:- use_module(etalis_translate).
:- reexport(etalis_helpers).

:- dynamic
    stored_event/1,             % stored_event(event(Event, [T1, T2])): every event, in order
    external_trigger/1,         % external_trigger(Spec): events to print and hand to Java
    print_trigger/1,            % print_trigger(Spec): the same (ETALIS keeps both)
    flag_value/2,               % flag_value(Flag, Value): flags set by set_etalis_flag/2
    second_counter/2,           % second_counter(Datime6, N): events stamped in that second
    last_general_gc/1,          % last_general_gc(Time): garbage_control(general)
    java_collect/1.             % java_collect(Event): fire_events_java/2 is running

%!  etalis_engine(-Module) is det.
%
%   The core engine (module) that runs the ETALIS program.
etalis_engine(etalis_engine).

		 /*******************************
		 *            FLAGS             *
		 *******************************/

%   ETALIS' flags with their defaults.  Honoured: store_fired_events,
%   event_consumption_policy, out_of_order, etalis_justification,
%   rule_sharing, garbage_control (general), garbage_window,
%   garbage_window_step, logging_to_file, output_temporary_files,
%   store_fired_events_java.  The others are kept (get_etalis_flag/2
%   returns them) and do nothing: docs/ETALIS.md says why.
default_flag(store_fired_events, off).
default_flag(event_consumption_policy, recent).
default_flag(out_of_order, off).
default_flag(etalis_justification, off).
default_flag(rule_sharing, off).
default_flag(garbage_control, off).
default_flag(garbage_window, -1).
default_flag(garbage_window_step, -1).
default_flag(logging, off).
default_flag(logging_to_file, off).
default_flag(output_temporary_files, off).
default_flag(binarization_flag, on).
default_flag(revision_flag, off).
default_flag(prolog_backend, swi).
default_flag(store_fired_events_java, off).
default_flag(java_notification, off).
default_flag(db_trace, off).
default_flag(rule_sharing_debuging, off).
default_flag(subPatterns, on).
default_flag(save_ruleId, off).

%!  set_etalis_flag(+Flag, +Value) is det.
set_etalis_flag(Flag, Value) :-
    must_be(atom, Flag),
    must_be(ground, Value),
    (   Flag == event_consumption_policy
    ->  must_be(oneof([recent, chronological, unrestricted, recent_2, chronological_2]), Value)
    ;   true
    ),
    retractall(flag_value(Flag, _)),
    assertz(flag_value(Flag, Value)).

%!  get_etalis_flag(+Flag, -Value) is semidet.
get_etalis_flag(Flag, Value) :-
    (   flag_value(Flag, V0) -> Value = V0
    ;   default_flag(Flag, V0) -> Value = V0
    ).

flag_on(Flag) :-
    get_etalis_flag(Flag, on).

		 /*******************************
		 *           THE ENGINE         *
		 *******************************/

ensure_engine :-
    etalis_engine(M),
    (   current_module(M), is_event_engine(M)
    ->  true
    ;   engine_create(M),
        engine_set_option(M, buffer, false),
        engine_set_option(M, hook, etalis:on_detection),
        engine_set_option(M, timer_hook, etalis:on_alarm_set)
    ).

%   The core's compile options follow the ETALIS flags at the time rules
%   are compiled (as in ETALIS, where they select the compiled clauses).
apply_compile_flags :-
    etalis_engine(M),
    get_etalis_flag(event_consumption_policy, P),
    policy_options(P, Policy, Replace),
    engine_set_option(M, policy, Policy),
    engine_set_option(M, replace_bindings, Replace),
    onoff(out_of_order, OOO),
    engine_set_option(M, out_of_order, OOO),
    onoff(rule_sharing, Share),
    engine_set_option(M, share, Share),
    onoff(etalis_justification, J),
    engine_set_option(M, justify, J).

onoff(Flag, Bool) :-
    (   flag_on(Flag) -> Bool = true ; Bool = false ).

%   ETALIS' recent and chronological keep one partial match per bindings;
%   its recent_2 and chronological_2 keep them all.
policy_options(recent, recent, true).
policy_options(chronological, chronological, true).
policy_options(recent_2, recent, false).
policy_options(chronological_2, chronological, false).
policy_options(unrestricted, unrestricted, false).

		 /*******************************
		 *       COMPILING RULES        *
		 *******************************/

%!  compile_event_file(+File) is det.
%
%   Read an ETALIS rule file (ETALIS' operators and priorities, quoted or
%   not, upper-case forms) and add its rules; its other clauses go to
%   module user (helper predicates, facts), its directives are run.
compile_event_file(File) :-
    read_etalis_file(File, Terms),
    compile_items(File, Terms).

%!  compile_events(+File) is det.
compile_events(File) :-
    compile_event_file(File).

%!  compile_event_rules(+Rules) is det.
%
%   The same for a list of terms.
compile_event_rules(Rules) :-
    must_be(list, Rules),
    compile_items(main, Rules).

%!  compile_event_rules(+Name, +Rules) is det.
compile_event_rules(Name, Rules) :-
    must_be(list, Rules),
    compile_items(Name, Rules).

%!  compile_internal_event_rules(+Name, +CoreRules) is det.
%
%   Add rules already in the core's language (what ep_sparql_compile/3
%   gives).
compile_internal_event_rules(_Name, Rules) :-
    must_be(list, Rules),
    ensure_engine,
    apply_compile_flags,
    etalis_engine(M),
    engine_add_rules(M, Rules).

compile_items(Name, Terms) :-
    ensure_engine,
    % rule properties may follow their rule in the file: collect them first
    forall(member(event_rule_property(L, P, V), Terms),
           assertz(event_rule_property(L, P, V))),
    foldl(compile_item, Terms, [], CoreRev),
    reverse(CoreRev, Core),
    write_core_file(Name, Core).

compile_item(Term, Acc0, Acc) :-
    catch(item_action(Term, Acc0, Acc), E,
          ( print_message(warning, etalis(rule_skipped(Term, E))),
            Acc = Acc0 )).

item_action(event_rule_property(_, _, _), Acc, Acc) :- !.
item_action(Term, Acc0, Acc) :-
    classify_item(Term, Kind),
    do_item(Kind, Acc0, Acc).

do_item(rule(R), Acc0, [Core|Acc0]) :-
    translate_rule(R, Core),
    add_core_rule(Core).
do_item(directive(G), Acc, Acc) :-
    (   catch(user:G, E, (print_message(error, E), fail))
    ->  true
    ;   print_message(warning, goal_failed(directive, user:G))
    ).
do_item(static(C), Acc, Acc) :-
    assertz(user:C).
do_item(trigger(F), Acc, Acc) :-
    assertz(external_trigger(F)).
do_item(module_file(F), Acc, Acc) :-
    compile_event_file(F).
do_item(ignored(_), Acc, Acc).

add_core_rule(Core) :-
    apply_compile_flags,
    etalis_engine(M),
    engine_add_rules(M, [Core]).

%   output_temporary_files: the core rules a file compiled to, in
%   File.core (ETALIS writes its internal forms to .event_bin and .ctr).
write_core_file(Name, Core) :-
    (   flag_on(output_temporary_files), atom(Name), Name \== main
    ->  atom_concat(Name, '.core', Out),
        catch(setup_call_cleanup(
                  open(Out, write, S),
                  forall(member(R, Core), portray_clause(S, R)),
                  close(S)),
              E, print_message(warning, E))
    ;   true
    ).

%!  ins_event_rule(+Rule) is det.
%
%   Add one event rule at run time (also from a rule's condition).
ins_event_rule(Rule) :-
    ensure_engine,
    (   classify_item(Rule, rule(R))
    ->  translate_rule(R, Core),
        add_core_rule(Core)
    ;   domain_error(etalis_event_rule, Rule)
    ).

%!  del_event_rule(+LabelOrRule) is det.
%
%   Delete event rules at run time: by label (every rule with it), or a
%   rule as it was added (labelled `L 'rule:' Rule` or not).  Their
%   partial matches go with them; other rules are untouched.
del_event_rule(What) :-
    ensure_engine,
    etalis_engine(M),
    (   classify_item(What, rule(R))
    ->  translate_rule(R, Core),
        engine_delete_rules(M, Core)
    ;   engine_delete_rules(M, What)
    ).

%!  ins_static_rule(+Clause) is det.
ins_static_rule(Clause) :-
    assertz(user:Clause).

%!  del_static_rule(+Clause) is det.
del_static_rule(Clause) :-
    retractall(user:Clause).

		 /*******************************
		 *      ETALIS' RELATIONS       *
		 *******************************/

%   ETALIS' own readings of four interval relations, as core relations
%   (core_compile.pl, relation/9).  The core keeps Allen's strict starts,
%   finishes and during; ETALIS compares the shared end point at whole
%   seconds (datime stamps; numbers are compared as numbers), takes
%   during's containment non-strictly, and par as a strict overlap.
:- multifile core_compile:relation/9.
core_compile:relation(etalis_starts, T1, _, T3, T4,
                      etalis_runtime:same_time(T1, T3), T1, T4, true).
core_compile:relation(etalis_finishes, T1, T2, _, T4,
                      etalis_runtime:same_time(T2, T4), T1, T4, true).
core_compile:relation(etalis_during, T1, T2, T3, T4,
                      ( etalis_runtime:not_after(T3, T1), etalis_runtime:not_after(T2, T4) ),
                      TS, TE, ( TS is min(T1, T3), TE is max(T2, T4) )).
core_compile:relation(etalis_par, T1, T2, T3, T4,
                      ( T1 < T4, T3 < T2 ),
                      TS, TE, ( TS is min(T1, T3), TE is max(T2, T4) )).

		 /*******************************
		 *            EVENTS            *
		 *******************************/

%!  event(+Event) is det.
%
%   Push Event stamped with the wall clock (a datime/7 stamp), or
%   event(E, Stamps) as event/2.
event(Ev) :-
    nonvar(Ev), Ev = event(E, Stamps), !,
    event(E, Stamps).
event(E) :-
    wall_stamp(T),
    push(datime, E, T, T).

%!  event(+Event, +Stamps) is det.
%
%   Push Event over [T1, T2]: two datime/7 stamps, two datime/6 (a
%   counter is added per second, as ETALIS does), or two numbers.  A
%   single number N stamps the event with the current second and counter
%   N (ETALIS' reading).
event(E, [A, B]) :- !,
    stamp_in(A, Mode, T1),
    stamp_in(B, Mode, T2),
    push(Mode, E, T1, T2).
event(E, N) :-
    number(N), !,
    current_datime(datime(Y, M, D, H, Mi, S)),
    datime_seconds(datime(Y, M, D, H, Mi, S, N), T),
    push(datime, E, T, T).
event(_, Stamps) :-
    type_error(etalis_stamps, Stamps).

stamp_in(X, Mode, T) :-
    (   number(X)
    ->  Mode = number, T = X
    ;   X = datime(_, _, _, _, _, _, _)
    ->  Mode = datime, datime_seconds(X, T)
    ;   X = datime(Y, M, D, H, Mi, S)
    ->  Mode = datime,
        next_counter(datime(Y, M, D, H, Mi, S), C),
        datime_seconds(datime(Y, M, D, H, Mi, S, C), T)
    ;   type_error(etalis_stamp, X)
    ).

%   The wall clock as a datime/7 stamp: the counter numbers the events
%   stamped within one second, from 1.
wall_stamp(T) :-
    current_datime(D),
    next_counter(D, C),
    D = datime(Y, M, Da, H, Mi, S),
    datime_seconds(datime(Y, M, Da, H, Mi, S, C), T).

next_counter(D, C) :-
    (   retract(second_counter(D, C0)) -> C is C0 + 1 ; C = 1 ),
    assertz(second_counter(D, C)).

push(Mode, E, T1, T2) :-
    must_be(callable, E),
    ensure_engine,
    set_stamp_mode(Mode),
    general_gc(T2),
    note_event(E, T1, T2),
    etalis_engine(M),
    engine_events(M, [e(E, T1, T2)]),
    report_errors.

%   Errors raised inside rules (a condition that throws, a loop stopped
%   at a limit) are printed, as ETALIS would let them through.
report_errors :-
    etalis_engine(M),
    (   engine_busy(M)
    ->  true
    ;   engine_errors(M, Errors),
        forall(member(rule_error(E, Ctx0, _, _), Errors),
               (   message_text(E, Text),
                   context_stamps(Ctx0, Ctx),
                   print_message(warning, etalis(rule_error(Text, Ctx)))
               ))
    ).

%   The event of an error's context with ETALIS' stamps.
context_stamps(Ctx0, Ctx) :-
    (   ( Ctx0 = e(E, T1, T2) ; Ctx0 = event(E, [T1, T2]) ),
        number(T1), number(T2)
    ->  stamp_out(T1, S1), stamp_out(T2, S2), Ctx = event(E, [S1, S2])
    ;   Ctx = Ctx0
    ).

%!  on_detection(+Event, +Interval) is det.
%
%   The core engine's hook: every detection is an ETALIS event.
on_detection(E, [T1, T2]) :-
    note_event(E, T1, T2).

%   What ETALIS does for every event, pushed or derived: store it
%   (store_fired_events), print it when a trigger asks, log it to
%   external_tr.log (logging_to_file), hand it to Java.
note_event(E, T1, T2) :-
    (   hidden(E)
    ->  true
    ;   stamp_out(T1, S1),
        stamp_out(T2, S2),
        Ev = event(E, [S1, S2]),
        (   flag_on(store_fired_events) -> assertz(stored_event(Ev)) ; true ),
        (   triggered(E)
        ->  format('*Event: ~q @ ~q~n', [E, [S1, S2]]),
            (   java_collect(_), flag_on(store_fired_events_java)
            ->  assertz(java_collect(Ev))
            ;   true
            )
        ;   true
        ),
        (   flag_on(logging_to_file) -> write_log('external_tr.log', Ev) ; true )
    ).

hidden(E) :-
    functor(E, N, A),
    hidden_event(N/A).

%   ETALIS' trigger check, in its order: all_events, all_defined_events,
%   Name/Arity of the event, the event itself.  Triggers may be clauses of
%   the program (print_trigger(E) :- ...), called with those arguments;
%   one that raises counts as no.
triggered(E) :-
    functor(E, N, A),
    (   trigger(external_trigger(all_events))
    ->  true
    ;   ( trigger(external_trigger(all_defined_events))
        ; trigger(print_trigger(all_defined_events))
        )
    ->  true
    ;   ( trigger(external_trigger(N/A)) ; trigger(print_trigger(N/A)) )
    ->  true
    ;   ( trigger(external_trigger(E)) ; trigger(print_trigger(E)) )
    ->  true
    ).

trigger(G) :-
    catch(G, _, fail), !.

%   garbage_control(general): before an event, drop the partial matches
%   that ended more than garbage_window seconds ago, at most every
%   garbage_window_step seconds (ETALIS runs it on a timer; here it runs
%   on the clock of the events, which has the same effect on detections).
general_gc(Now) :-
    (   get_etalis_flag(garbage_control, general),
        get_etalis_flag(garbage_window, W), number(W), W > 0
    ->  get_etalis_flag(garbage_window_step, Step0),
        (   number(Step0), Step0 > 0 -> Step = Step0 ; Step = W ),
        (   last_general_gc(Last), Now - Last < Step
        ->  true
        ;   retractall(last_general_gc(_)),
            assertz(last_general_gc(Now)),
            Limit is Now - W,
            etalis_engine(M),
            engine_drop_goals(M, Limit)
        )
    ;   true
    ).

		 /*******************************
		 *       WALL-CLOCK ALARMS      *
		 *******************************/

%   The core fires alarms when its clock passes them.  On datime stamps
%   the clock is the wall clock: every alarm set asks SWI-Prolog for a
%   signal at its due time, which advances the core's clock there (events
%   pushed meanwhile are stamped later anyway).  On numbers the stream's
%   own time fires them, deterministically.
on_alarm_set(Due) :-
    (   stamp_mode(datime)
    ->  now_seconds(Now),
        Delay is max(0, Due - Now) + 0.01,
        alarm(Delay, etalis:wall_tick(Due), _, [remove(true)])
    ;   true
    ).

wall_tick(Due) :-
    etalis_engine(M),
    set_stamp_mode(datime),
    catch(engine_advance(M, Due), E, print_message(warning, E)),
    report_errors.

%   Now on the datime mapping: the local date and time read as UTC.
now_seconds(T) :-
    get_time(Now),
    stamp_date_time(Now, date(Y, M, D, H, Mi, S, _, _, _), local),
    date_time_stamp(date(Y, M, D, H, Mi, S, 0, -, -), T).

		 /*******************************
		 *     FILES, STREAMS, LOGS     *
		 *******************************/

%!  load_static_rules(+File) is det.
%
%   Consult a Prolog file into user (helper predicates of the rules).
load_static_rules(File) :-
    user:consult(File).

%!  load_database(+File) is det.
%
%   Assert every clause of File into user.
load_database(File) :-
    read_etalis_file(File, Terms),
    forall(member(T, Terms), assertz(user:T)).

%!  execute_event_stream_file(+File) is det.
%
%   Run the goals of a stream file in order: event(...) terms, sleep/1,
%   anything else callable from user.
execute_event_stream_file(File) :-
    read_etalis_file(File, Terms),
    fire_event_list(Terms).

%!  fire_event_list(+Goals) is det.
fire_event_list(Goals) :-
    (   is_list(Goals)
    ->  forall(member(G, Goals), ignore(user:G))
    ;   event(Goals)
    ).

%!  reset_log_file(+File) is det.
reset_log_file(File) :-
    setup_call_cleanup(open(File, write, S), true, close(S)).

%!  write_log(+File, +Term) is det.
%
%   Append Term to File when logging_to_file is on.
write_log(File, Term) :-
    (   flag_on(logging_to_file)
    ->  setup_call_cleanup(open(File, append, S),
                           format(S, '~q.~n', [Term]),
                           close(S))
    ;   true
    ).

%!  fire_events_java(+Events, -Triggered) is det.
%
%   Push Events and return the events among those and the ones they led
%   to that a trigger selects (with store_fired_events_java on).
fire_events_java(Events, Out) :-
    must_be(list, Events),
    setup_call_cleanup(
        assertz(java_collect(start)),
        ( forall(member(E, Events), event(E)),
          findall(Ev, ( java_collect(Ev), Ev \== start ), Out) ),
        retractall(java_collect(_))).

		 /*******************************
		 *         JUSTIFICATION        *
		 *******************************/

%!  justify_event(?Event, ?Interval, -Justification) is det.
%
%   Why Event was detected (rules compiled with etalis_justification on):
%   the tree of rules and events (core_justify.pl), with ETALIS stamps;
%   for an event not detected, the rules that could derive it and how
%   many partial matches each holds.
justify_event(E, [S1, S2], J) :-
    etalis_engine(M),
    stamp_number(S1, T1),
    stamp_number(S2, T2),
    (   engine_justify(M, E, [T1, T2], J0)
    ->  stamp_out(T1, S1),
        stamp_out(T2, S2),
        stamps_in_tree(J0, J)
    ;   why_not(M, E, J)
    ),
    !.

stamp_number(S, T) :-
    (   var(S) -> true
    ;   number(S) -> T = S
    ;   datime_seconds(S, T)
    ).

stamps_in_tree(T, T1) :-
    (   T = [A, B], number(A), number(B)
    ->  stamp_out(A, SA), stamp_out(B, SB), T1 = [SA, SB]
    ;   compound(T), \+ T = [_|_]
    ->  T =.. [F|As],
        maplist(stamps_in_tree, As, Bs),
        T1 =.. [F|Bs]
    ;   is_list(T)
    ->  maplist(stamps_in_tree, T, T1)
    ;   T1 = T
    ).

%!  write_justification(+Justification) is det.
write_justification(J) :-
    write_tree(J).

%!  write_justification_udraw(+Goal, +Justification, +File) is det.
%
%   Write the justification as a uDraw(Graph) term file (a tree of nodes
%   labelled with the events and steps), as ETALIS does.
write_justification_udraw(_Goal, J, File) :-
    setup_call_cleanup(
        open(File, write, S),
        ( udraw_nodes(J, 0, _, Node),
          format(S, '[~w]~n', [Node]) ),
        close(S)).

udraw_nodes(J, N0, N, Text) :-
    tree_label(J, Label, Children),
    N1 is N0 + 1,
    foldl(udraw_child, Children, Edges, N1, N),
    atomic_list_concat(Edges, ',', EdgeText),
    format(string(LabelText), '~w', [Label]),
    escape_udraw(LabelText, Esc),
    format(string(Text), 'l("n~w",n("",[a("OBJECT","~w")],[~w]))', [N0, Esc, EdgeText]).

udraw_child(C, Edge, N0, N) :-
    udraw_nodes(C, N0, N, Text),
    format(string(Edge), 'e("",[],~w)', [Text]).

tree_label(justification(E, I, R, W), L, [W]) :- !, format(string(L), '~q @ ~q by ~w', [E, I, R]).
tree_label(step(P, I, Cs), L, Cs) :- !, format(string(L), '~q @ ~q', [P, I]).
tree_label(received(E, I), L, []) :- !, format(string(L), '~q @ ~q', [E, I]).
tree_label(alarm(T), "alarm", [T]) :- !.
tree_label(not_detected(E, Rs), L, []) :- !, format(string(L), 'not detected: ~q (~w)', [E, Rs]).
tree_label(T, L, []) :- format(string(L), '~q', [T]).

escape_udraw(S, E) :-
    split_string(S, "\"", "", Parts),
    atomic_list_concat(Parts, '\\"', E).

		 /*******************************
		 *            RESET             *
		 *******************************/

%!  retractall_stored_events is det.
retractall_stored_events :-
    retractall(stored_event(_)).

%!  reset_etalis_state is det.
%
%   Forget the stored events and every partial match; keep the rules.
reset_etalis_state :-
    retractall(stored_event(_)),
    etalis_engine(M),
    (   is_event_engine(M) -> engine_clear_state(M) ; true ).

%!  reset_etalis_static_state_and_engine is det.
%
%   reset_etalis/0 (ETALIS' name for dropping rules and their state).
reset_etalis_static_state_and_engine :-
    reset_etalis.

%!  reset_etalis is det.
%
%   Forget rules, their state, stored events, triggers, properties and
%   flags.
reset_etalis :-
    etalis_engine(M),
    (   is_event_engine(M) -> engine_destroy(M) ; true ),
    retractall(stored_event(_)),
    retractall(external_trigger(_)),
    retractall(print_trigger(_)),
    retractall(event_rule_property(_, _, _)),
    retractall(flag_value(_, _)),
    retractall(last_general_gc(_)),
    retractall(hidden_event(_)),
    ensure_engine.

		 /*******************************
		 *           MESSAGES           *
		 *******************************/

:- multifile prolog:message//1.
prolog:message(etalis(rule_skipped(Term, E))) -->
    [ 'ETALIS: skipped ~W: '-[Term, [quoted(true), max_depth(8)]] ],
    '$messages':translate_message(E).
prolog:message(etalis(rule_error(Text, Ctx))) -->
    [ 'ETALIS: in a rule, on ~W: ~w'-[Ctx, [quoted(true), max_depth(8)], Text] ].

:- initialization(ensure_engine).
