/*  Driver of bench/sink.py: synthetic answers through the columns sink.

    sink_dets(+Shape, +N, -Ds): N detections d(Event, T1, T2) shaped like
    the all-pairs seq2 answers (5 per event, the key and the later price
    shared by the answers of one event): Shape core is rise(Key, P1, P2)
    with an atom key and float prices, Shape engine the EP-SPARQL head
    sparql_q1(Key, P1, P2) with an IRI key and literals n(V, DT, Lex).
*/
:- module(sink_driver, [sink_dets/3, sink_run/4]).
:- use_module(library(lists)).

sink_dets(Shape, N, Ds) :-
    findall(d(E, T1, T2),
            ( between(1, N, I),
              Ev is I // 5, Km is Ev mod 100,
              P1 is 100.0 + (I * 7919 mod 997) / 10,
              P2 is 101.0 + (Ev mod 13),
              T1 is Ev - (I mod 5) * 3 - 1, T2 = Ev,
              event(Shape, Km, P1, P2, E) ),
            Ds).

event(core, Km, P1, P2, rise(K, P1, P2)) :-
    atom_concat(k, Km, K).
event(engine, Km, P1, P2, sparql_q1(K, L1, L2)) :-
    atom_concat('http://example.org/company/', Km, K),
    lit(P1, L1), lit(P2, L2).

lit(P, n(P, 'http://www.w3.org/2001/XMLSchema#decimal', S)) :-
    format(string(S), "~2f", [P]).

%!  sink_run(+Mode, +Engine, +Receiver, +Ds) is det.
%
%   Mode sink: every detection of Ds through bridge_columns:columns_sink/3
%   in one with_columns/3 call; Mode none: the same loop, no sink (the
%   loop's own cost, subtracted).
sink_run(sink, M, R, Ds) :-
    bridge_columns:with_columns(M, R,
        forall(member(d(E, T1, T2), Ds), bridge_columns:columns_sink(E, T1, T2))).
sink_run(none, M, R, Ds) :-
    bridge_columns:with_columns(M, R, forall(member(d(_, _, _), Ds), true)).
