/*  bench/reasoning.py's Prolog mode: stream reasoning without Python.

    swipl bench/reasoning_driver.pl Mode RulesFile EventsFile BgFile Batch How GcEvery

    Mode       rdfs or none (the background's reasoning mode)
    RulesFile  the rules EP-SPARQL compiled the query to (written by the benchmark)
    EventsFile e(triple(S, P, O), T, T) terms; BgFile t(S, P, O, Graph) terms
    Batch      events per batch
    How        push: each batch as text through bridge_python:py_push/3, as
               Engine.push_many sends it; events: engine_events/2 on the terms
               (the core alone); profile: events under SWI-Prolog's profiler
    GcEvery    the engine's gc_every (Engine's default)

    The options are those Engine sets (dedup, gc_every, max_depth).  Prints
    one JSON line: events, answers, wall_s, cpu_s, bg_load_s, rss_before_kb,
    peak_rss_kb, remembered_closures, per_batch_wall_s, per_batch_cpu_s.
    The prolog/ files are found beside this folder.
*/
:- use_module('../prolog/epsparql_core').
:- use_module('../prolog/bridge_python').
:- load_files(user:'../prolog/sparql_eval.pl', [if(not_loaded)]).
:- load_files(user:'../prolog/sparql_construct.pl', [if(not_loaded)]).
:- load_files(user:'../prolog/sparql_background.pl', [if(not_loaded)]).
:- initialization(main, main).

main :-
    current_prolog_flag(argv, [ModeA, RulesF, EventsF, BgF, BatchA, How, GcA]),
    atom_number(BatchA, Batch),
    atom_number(GcA, GcEvery),
    M = bench_reasoning,
    epsparql_core:engine_create(M),
    engine_set_option(M, dedup, true),
    engine_set_option(M, gc_every, GcEvery),
    engine_set_option(M, max_depth, 200),
    sparql_background:bg_set_mode(M, ModeA),
    read_file_to_terms(BgF, Ts, []),
    get_time(L0), sparql_background:bg_add(M, Ts), get_time(L1),
    read_file_to_string(RulesF, RT, []),
    bridge_python:add_rules_text(M, RT),
    read_file_to_terms(EventsF, Es, []),
    length(Es, N),
    batches(Es, Batch, Bs),
    maplist([B, S]>>format(string(S), "~q", [B]), Bs, Texts),
    garbage_collect,
    status_kb('VmRSS', Rss0),
    (   How == profile
    ->  profile(run_events(Bs, M, Ws, Cs, Answers), [cumulative(false), top(40)])
    ;   How == events
    ->  run_events(Bs, M, Ws, Cs, Answers)
    ;   run_push(Texts, M, Ws, Cs, Answers)
    ),
    status_kb('VmHWM', Peak),
    sum_list(Ws, W), sum_list(Cs, C),
    aggregate_all(count, M:ep_anc_c(_, _), Memo),
    format("{\"events\":~w,\"answers\":~w,\"wall_s\":~6f,\"cpu_s\":~6f,\"bg_load_s\":~6f,\"rss_before_kb\":~w,\"peak_rss_kb\":~w,\"remembered_closures\":~w,\"per_batch_wall_s\":~w,\"per_batch_cpu_s\":~w}~n",
           [N, Answers, W, C, L1 - L0, Rss0, Peak, Memo, Ws, Cs]).

batches([], _, []) :- !.
batches(L, K, [B|Bs]) :- length(B, K), append(B, R, L), !, batches(R, K, Bs).
batches(L, _, [L]).

%  As Engine.push_many does it: the batch text through the bridge (parse,
%  run, answers written as JSON); answers counted from the reply.
run_push([], _, [], [], 0).
run_push([T|Ts], M, [W|Ws], [C|Cs], A) :-
    statistics(cputime, C0), get_time(W0),
    bridge_python:py_push(M, T, R),
    get_time(W1), statistics(cputime, C1),
    W is W1 - W0, C is C1 - C0,
    aggregate_all(count, sub_string(R, _, _, _, "\"sparql_q"), A0),
    run_push(Ts, M, Ws, Cs, A1),
    A is A0 + A1.

%  The core alone: engine_events/2 and engine_drain/2 on the terms.
run_events([], _, [], [], 0).
run_events([B|Bs], M, [W|Ws], [C|Cs], A) :-
    statistics(cputime, C0), get_time(W0),
    engine_events(M, B), engine_drain(M, L),
    get_time(W1), statistics(cputime, C1),
    W is W1 - W0, C is C1 - C0,
    length(L, A0),
    run_events(Bs, M, Ws, Cs, A1),
    A is A0 + A1.

status_kb(Field, KB) :-
    (   catch(read_file_to_string('/proc/self/status', S, []), _, fail),
        split_string(S, "\n", "", Lines),
        member(Line, Lines),
        string_concat(Field, Rest, Line),
        sub_string(Rest, 0, 1, _, ":"),
        split_string(Rest, ": \t", ": \t", Parts),
        member(P, Parts), number_string(KB, P)
    ->  true
    ;   KB = 0
    ).
