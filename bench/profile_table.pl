/*  The last profile of SWI-Prolog's profiler as a table of predicates by
    their own time (bench/harness.py, profiled/3).  show_profile/1 sorts
    oddly and prints overflowed counters for predicates it did not sample
    when the profile was started from Python; this reads profile_data/1.
*/
:- module(profile_table, [profile_top/2]).
:- use_module(library(statistics)).
:- use_module(library(prolog_profile)).

%!  profile_top(+N, -Text:string) is det.
%
%   The N predicates with the most own samples, with their share of all
%   samples, after a header of the profile's summary.
profile_top(N, Text) :-
    profile_data(D),
    get_dict(summary, D, S),
    get_dict(nodes, D, Nodes),
    findall(T-P, ( member(Nd, Nodes), get_dict(ticks_self, Nd, T), T > 0,
                   get_dict(predicate, Nd, P0), format(string(P), "~q", [P0]) ), L),
    msort(L, Up),
    reverse(Up, Down),
    get_dict(ticks, S, Total0),
    Total is max(1, Total0),
    length(Down, Len),
    K is min(N, Len),
    length(Top, K),
    append(Top, _, Down),
    get_dict(time, S, Time),
    with_output_to(string(Text),
                   ( format("~w samples, ~2f s profiled; own time:~n", [Total0, Time]),
                     forall(member(T-P, Top),
                            ( Pct is 100 * T / Total,
                              format("~t~1f~6|%  ~w~n", [Pct, P]) )) )).
