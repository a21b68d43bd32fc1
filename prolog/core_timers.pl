/*  Alarms of the event-processing core: rules whose head sets a timer.

    A rule with one of the heads

        exceptionAlarm(Event, Seconds)            relative: due Seconds after
                                                  the end of the body
        exceptionAlarmAbsoluteDatime(Event, Time) absolute: due at Time

    does not emit its head when its body is detected over [T1, T2]: it
    sets an alarm, stored in the engine module as

        ep_timer(Due, Seq, Event, T1, Why)

    (Seq orders alarms with the same due time; Why is what the
    justification of the alarm event needs, or `none`).  The executor
    (epsparql_core.pl, section ALARMS) fires an alarm when the engine's
    clock passes its due time: Event is then emitted over [T1, Due] like a
    rule head (recorded, hooked, fed to the rules listening to it).  The
    clock is event time, so alarms are deterministic; a program on the
    wall clock moves the clock with engine_advance/2, and the engine
    option timer_hook (called as call(Hook, Due) for every alarm set)
    tells it when.

    Time is the core's: a number of seconds.  An absolute time may also
    be written datime(Y, M, D, H, Min, S) or datime(Y, M, D, H, Min, S,
    Counter), read as UTC; the counter orders events within one second
    (it adds Counter/2^21 seconds, which is exact in a float and keeps
    datimes and their numbers in the same order).  etalis.pl stamps
    ETALIS' datime events with the same mapping (datime_seconds/2).
*/
:- module(core_timers,
          [ timer_head/3,               % +Head, -Event, -Spec
            schedule_timer/6,           % +Module, +Spec, +Event, +T1, +T2, +Why
            datime_seconds/2,           % +Datime, -Seconds
            seconds_datime/2            % +Seconds, -Datime
          ]).
:- use_module(library(error)).
:- use_module(core_state, [engine_option/3]).
:- use_module(core_errors, [record_error/3]).

%!  timer_head(+Head, -Event, -Spec) is semidet.
%
%   Head is an alarm head: Spec is after(Seconds) or at(Time).
timer_head(H, E, Spec) :-
    compound(H),
    (   H = exceptionAlarm(E, S)
    ->  Spec = after(S)
    ;   H = exceptionAlarmAbsoluteDatime(E, D)
    ->  Spec = at(D)
    ).

%!  schedule_timer(+Module, +Spec, +Event, +T1, +T2, +Why) is det.
%
%   Set an alarm for the body detection [T1, T2].  Raises a type error
%   for a due time that is not a time (the executor records it as an
%   error of the event that triggered the rule).
schedule_timer(M, Spec, E, T1, T2, Why) :-
    must_be(callable, E),
    due_time(Spec, T2, Due),
    flag(epsparql_timer_seq, Seq, Seq + 1),
    assertz(M:ep_timer(Due, Seq, E, T1, Why)),
    engine_option(M, timer_hook, Hook),
    (   Hook == none
    ->  true
    ;   catch(call(Hook, Due), Error,
              record_error(M, Error, timer_hook(E, Due)))
    ).

due_time(after(S), T2, Due) :- !,
    must_be(number, S),
    (   S >= 0 -> true ; domain_error(non_negative_alarm_delay, S) ),
    Due is T2 + S.
due_time(at(D), _, Due) :-
    (   number(D) -> Due = D
    ;   datime_seconds(D, Due)
    ).

%!  datime_seconds(+Datime, -Seconds) is det.
%
%   datime(Y,M,D,H,Min,S) or datime(Y,M,D,H,Min,S,Counter), read as UTC,
%   as seconds since the epoch (a float when Counter > 0).  Raises a type
%   error for anything else.
datime_seconds(D, T) :-
    (   D = datime(Y, Mo, Da, H, Mi, S)
    ->  C = 0
    ;   D = datime(Y, Mo, Da, H, Mi, S, C)
    ->  true
    ;   type_error(datime, D)
    ),
    must_be(integer, C),
    (   C >= 0, C < 2097152 -> true ; domain_error(datime_counter, C) ),
    date_time_stamp(date(Y, Mo, Da, H, Mi, S, 0, -, -), Stamp),
    (   C =:= 0
    ->  T is integer(Stamp)
    ;   T is integer(Stamp) + C / 2097152
    ).

%!  seconds_datime(+Seconds, -Datime) is det.
%
%   The inverse of datime_seconds/2: datime(Y,M,D,H,Min,S,Counter) (UTC).
seconds_datime(T, datime(Y, Mo, Da, H, Mi, S, C)) :-
    must_be(number, T),
    Sec is floor(T),
    C is round((T - Sec) * 2097152),
    stamp_date_time(Sec, date(Y, Mo, Da, H, Mi, S0, _, _, _), 'UTC'),
    S is floor(S0).
