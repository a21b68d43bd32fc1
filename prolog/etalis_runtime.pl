/*  What translated ETALIS rules call at run time, and what the
    translators record about rules.

    The core rules that etalis_translate.pl and etalis_ep_sparql.pl make
    from ETALIS programs call the predicates below from their conditions
    (module-qualified: they run in the core engine's module), and ETALIS'
    readings of interval relations (etalis.pl, core_compile:relation/9)
    call same_time/2 and not_after/2.  They read the stamp mode (datime
    stamps on the wall clock, or numbers) that etalis.pl sets for each
    event pushed.  The translators also record the properties of labelled
    rules (event_rule_property/3) and the internal events of EP-SPARQL
    queries (hidden_event/1), which etalis.pl reads.

    Below etalis.pl and both translators, so that neither needs the
    module that uses it.
*/
:- module(etalis_runtime,
          [ event_rule_property/3,      % ?Label, ?Property, ?Value
            hidden_event/1,             % ?Name/Arity
            t1/1, t2/1,                 % -Stamp (inside check/timestamp)
            stamp_mode/1,               % -Mode
            set_stamp_mode/1,           % +Mode
            stamp_out/2,                % +Time, -Stamp
            same_time/2,                % +T1, +T2
            not_after/2,                % +T1, +T2
            in_window/3,                % +T1, +T2, +Seconds
            check_times/3,              % +T1, +T2, :Goal
            alarm_time/2                % +Datime, -Seconds
          ]).
:- use_module(core_timers, [datime_seconds/2, seconds_datime/2]).
:- use_module(etalis_helpers, [current_datime/1]).

:- dynamic
    event_rule_property/3,      % event_rule_property(Label, Property, Value)
    hidden_event/1,             % hidden_event(Name/Arity): internal events (not stored or printed)
    t1/1, t2/1.                 % t1(Stamp), t2(Stamp): the interval inside check/timestamp

%!  event_rule_property(?Label, ?Property, ?Value) is nondet.
%
%   A property of the rules labelled Label (ETALIS'
%   `Label([property(P, V), ...]) 'rule:' Rule`, or a fact of the file).

%!  hidden_event(?Name/Arity) is nondet.
%
%   Events made by the translation (EP-SPARQL's internal steps): not
%   stored, printed or logged as ETALIS events.

%!  t1(-Stamp) is semidet.
%!  t2(-Stamp) is semidet.
%
%   Inside an ETALIS check/timestamp condition: the start and end stamps
%   of the interval being checked.

		 /*******************************
		 *          STAMP MODE          *
		 *******************************/

%!  stamp_mode(-Mode) is det.
%
%   Stamps are datime (wall clock) or numbers (the stream's own time);
%   the mode is that of the event pushed last.
stamp_mode(Mode) :-
    (   nb_current(etalis_stamp_mode, M0), M0 \== [] -> Mode = M0 ; Mode = number ).

%!  set_stamp_mode(+Mode) is det.
set_stamp_mode(Mode) :-
    b_setval(etalis_stamp_mode, Mode),
    nb_setval(etalis_stamp_mode, Mode).

%!  stamp_out(+Time, -Stamp) is det.
%
%   A core time as an ETALIS stamp.
stamp_out(T, S) :-
    (   stamp_mode(datime) -> seconds_datime(T, S) ; S = T ).

		 /*******************************
		 *     CALLED FROM THE RULES    *
		 *******************************/

%!  same_time(+T1, +T2) is semidet.
%
%   The same second on datime stamps; equal numbers otherwise.
same_time(A, B) :-
    (   stamp_mode(datime)
    ->  floor(A) =:= floor(B)
    ;   A =:= B
    ).

%!  not_after(+T1, +T2) is semidet.
%
%   T1 before T2, or at the same time (same_time/2).
not_after(A, B) :-
    (   A < B -> true ; same_time(A, B) ).

%!  in_window(+T1, +T2, +Seconds) is semidet.
%
%   The rule windows of ETALIS (window, event_rule_window properties):
%   at most Seconds whole seconds apart on datime stamps.
in_window(T1, T2, W) :-
    (   stamp_mode(datime)
    ->  floor(T2) - floor(T1) =< W
    ;   T2 - T1 =< W
    ).

%!  check_times(+T1, +T2, :Goal) is semidet.
%
%   ETALIS' check/timestamp: Goal (first solution) with t1/1 and t2/1
%   giving the interval's stamps.
check_times(T1, T2, Goal) :-
    stamp_out(T1, S1),
    stamp_out(T2, S2),
    setup_call_cleanup(
        ( retractall(t1(_)), retractall(t2(_)),
          assertz(t1(S1)), assertz(t2(S2)) ),
        once(Goal),
        ( retractall(t1(_)), retractall(t2(_)) )).

%!  alarm_time(+Datime, -Seconds) is semidet.
%
%   The due time of exceptionAlarmAbsoluteDatime.  On the wall clock, a
%   datime in an earlier calendar year than now sets no alarm (ETALIS
%   cannot schedule those either); a warning says so.
alarm_time(D, T) :-
    (   number(D)
    ->  T = D
    ;   stamp_mode(datime),
        arg(1, D, Year),
        current_datime(datime(Now, _, _, _, _, _)),
        Year < Now
    ->  print_message(warning, etalis(alarm_in_past(D))),
        fail
    ;   datime_seconds(D, T)
    ).

:- multifile prolog:message//1.
prolog:message(etalis(alarm_in_past(D))) -->
    [ 'ETALIS: exceptionAlarmAbsoluteDatime at ~q, in an earlier year: no alarm set (as in ETALIS)'-[D] ].
