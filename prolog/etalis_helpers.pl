/*  The helper predicates ETALIS programs call from their conditions.

    ETALIS (the reference implementation of EP-SPARQL) ships date and time
    arithmetic on datime/6 terms, named counters and min/max over numbers
    and time stamps; rule files use them in where, check and do
    conditions.  etalis.pl re-exports this module so that such programs
    run unchanged.  Written anew for SWI-Prolog (no code of ETALIS):

    - datime(Y, M, D, H, Min, S) is a local date and time with whole
      seconds; ETALIS' event stamps are datime/7, the seventh argument a
      counter ordering events within one second.
    - The arithmetic is exact calendar arithmetic (months and years of any
      length), where ETALIS' own only handles shifts within a month or a
      year: the same results wherever ETALIS gives one.

    Counters are named by any ground term; a counter read before it is
    set is 0 (and then exists).
*/
:- module(etalis_helpers,
          [ current_datime/1,           % -Datime
            datime_plus_sec/3,          % +Datime, +Seconds, -Datime
            addSec_Datime/3,            % +Seconds, +Datime, -Datime
            datime_minus_sec/3,         % +Datime, +Seconds, -Datime
            datime_minus_datime/3,      % +Datime, +Datime, -Seconds
            less_datime/2,              % +Time, +Time
            equal_datime/2,             % +Time, +Time
            between_datime/3,           % +Time, +Time, +Time
            is_datime/1,                % @Term
            incCounter/1,               % +Name
            counter/2,                  % +Name, -Value
            resetCounter/1,             % +Name
            min/3,                      % +A, +B, -Min
            max/3                       % +A, +B, -Max
          ]).
:- use_module(library(error)).

:- dynamic counter_value/2.             % counter_value(Name, Value)

%!  current_datime(-Datime) is det.
%
%   The current local date and time, datime(Y, M, D, H, Min, S), whole
%   seconds.
current_datime(datime(Y, M, D, H, Mi, S)) :-
    get_time(Now),
    stamp_date_time(Now, date(Y, M, D, H, Mi, S0, _, _, _), local),
    S is floor(S0).

%   The fields of a datime as seconds: only differences and order matter,
%   so the fields are read as UTC (no daylight saving jumps).
fields_seconds(D, T) :-
    datime_fields(D, Y, M, Da, H, Mi, S),
    date_time_stamp(date(Y, M, Da, H, Mi, S, 0, -, -), T0),
    (   integer(S) -> T is integer(T0) ; T = T0 ).

seconds_fields(T, datime(Y, M, D, H, Mi, S)) :-
    stamp_date_time(T, date(Y, M, D, H, Mi, S0, _, _, _), 'UTC'),
    (   integer(T) -> S is integer(S0) ; S = S0 ).

datime_fields(datime(Y, M, D, H, Mi, S), Y, M, D, H, Mi, S) :- !.
datime_fields(datime(Y, M, D, H, Mi, S, _), Y, M, D, H, Mi, S) :- !.
datime_fields(D, _, _, _, _, _, _) :-
    type_error(datime, D).

%!  datime_plus_sec(+Datime, +Seconds, -Datime2) is det.
%
%   Datime2 is Seconds after Datime (a datime/6).
datime_plus_sec(D, Sec, D2) :-
    must_be(number, Sec),
    fields_seconds(D, T),
    T2 is T + Sec,
    seconds_fields(T2, D2).

%!  addSec_Datime(+Seconds, +Datime, -Datime2) is det.
%
%   datime_plus_sec/3 with the arguments in ETALIS' older order.
addSec_Datime(Sec, D, D2) :-
    datime_plus_sec(D, Sec, D2).

%!  datime_minus_sec(+Datime, +Seconds, -Datime2) is det.
datime_minus_sec(D, Sec, D2) :-
    must_be(number, Sec),
    Minus is -Sec,
    datime_plus_sec(D, Minus, D2).

%!  datime_minus_datime(+Datime1, +Datime2, -Seconds) is det.
%
%   Seconds from Datime2 to Datime1 (counters ignored).
datime_minus_datime(D1, D2, Sec) :-
    fields_seconds(D1, T1),
    fields_seconds(D2, T2),
    Sec is T1 - T2.

%!  less_datime(+T1, +T2) is semidet.
%
%   T1 is before T2: datime/7 stamps compare counters within a second,
%   datime/6 whole seconds, numbers as numbers.
less_datime(T1, T2) :-
    number(T1), number(T2), !,
    T1 < T2.
less_datime(datime(Y1, M1, D1, H1, Mi1, S1, C1), datime(Y2, M2, D2, H2, Mi2, S2, C2)) :- !,
    t(Y1, M1, D1, H1, Mi1, S1, C1) @< t(Y2, M2, D2, H2, Mi2, S2, C2).
less_datime(D1, D2) :-
    fields_seconds(D1, T1),
    fields_seconds(D2, T2),
    T1 < T2.

%!  equal_datime(+T1, +T2) is semidet.
%
%   The same second (counters ignored), or equal numbers.
equal_datime(T1, T2) :-
    number(T1), number(T2), !,
    T1 =:= T2.
equal_datime(D1, D2) :-
    datime_fields(D1, Y, M, D, H, Mi, S),
    datime_fields(D2, Y, M, D, H, Mi, S).

%!  between_datime(+T, +From, +To) is semidet.
between_datime(T, From, To) :-
    (   less_datime(From, T) ; equal_datime(From, T) ),
    (   less_datime(T, To) ; equal_datime(T, To) ),
    !.

%!  is_datime(@Term) is semidet.
is_datime(datime(_, _, _, _, _, _)).
is_datime(datime(_, _, _, _, _, _, _)).

%!  incCounter(+Name) is det.
incCounter(Name) :-
    must_be(ground, Name),
    counter(Name, V),
    V1 is V + 1,
    retractall(counter_value(Name, _)),
    assertz(counter_value(Name, V1)).

%!  counter(+Name, -Value) is det.
%
%   The value of counter Name; 0 (and the counter is created) if it was
%   never set.
counter(Name, V) :-
    (   counter_value(Name, V0)
    ->  V = V0
    ;   must_be(ground, Name),
        assertz(counter_value(Name, 0)),
        V = 0
    ).

%!  resetCounter(+Name) is det.
resetCounter(Name) :-
    must_be(ground, Name),
    retractall(counter_value(Name, _)),
    assertz(counter_value(Name, 0)).

%!  min(+A, +B, -Min) is det.
%
%   The smaller of two numbers or time stamps (B when neither is smaller).
min(A, B, Min) :-
    (   less_datime(A, B) -> Min = A ; Min = B ).

%!  max(+A, +B, -Max) is det.
max(A, B, Max) :-
    (   less_datime(B, A) -> Max = A ; Max = B ).
