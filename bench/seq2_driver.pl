/*  bench/seq2.py's pure Prolog mode: the core without Python.

    swipl bench/seq2_driver.pl Core Policy Rule Events N Batch How

    Core    the core module to load (prolog/epsparql_core, or the copy a
            run took of the sources)
    Policy  unrestricted, recent or chronological
    Rule    the rule, as text ending in '.'
    Events  a file of e(price(K, P), T, T) terms
    N       how many events to push, Batch how many per engine_events/2
    How     run: read Batch events, push and drain them (only push + drain
            timed), and so on; profile: read everything first, then push
            under SWI-Prolog's profiler

    Prints one line: RESULT {"events", "detections", "wall_s", "cpu_s",
    "batches", "goals", "late", "engine_events", "errors",
    "rss_before_kb", "peak_rss_kb"}; memory is this process's
    (/proc/self/status; the peak mark is reset before pushing).
*/
:- initialization(main, main).

main :-
    current_prolog_flag(argv, [Core, Policy, RuleText, File, NA, BatchA, How]),
    atom_number(NA, N),
    atom_number(BatchA, Batch),
    use_module(Core),
    E = seq2_bench,
    engine_create(E),
    engine_set_option(E, policy, Policy),
    setup_call_cleanup(open_string(RuleText, RS), read_event_rules(RS, Rules, []), close(RS)),
    engine_add_rules(E, Rules),
    status_kb('VmRSS', Rss0),
    reset_hwm,
    open(File, read, S),
    garbage_collect,
    (   How == profile
    ->  read_all(S, N, Batch, Batches),
        profile(push_all(Batches, E, Pushed, Det, Wall, Cpu, NB), [cumulative(false), top(40)])
    ;   run(S, E, N, Batch, Pushed, Det, Wall, Cpu, NB)
    ),
    close(S),
    status_kb('VmHWM', Peak),
    engine_stats(E, St),
    engine_errors(E, Errs), length(Errs, NErr),
    format("RESULT {\"events\":~w,\"detections\":~w,\"wall_s\":~15g,\"cpu_s\":~15g,\"batches\":~w,\"goals\":~w,\"late\":~w,\"engine_events\":~w,\"errors\":~w,\"rss_before_kb\":~w,\"peak_rss_kb\":~w}~n",
           [Pushed, Det, Wall, Cpu, NB, St.goals, St.late, St.events, NErr, Rss0, Peak]).

run(S, E, N, Batch, Pushed, Det, Wall, Cpu, NB) :-
    run(S, E, Batch, N, 0, Pushed, 0, Det, 0.0, Wall, 0.0, Cpu, 0, NB).

run(S, E, Batch, Left, P0, P, D0, D, W0, W, C0, C, B0, B) :-
    Want is min(Batch, Left),
    read_batch(Want, S, Items),
    length(Items, K),
    (   K =:= 0
    ->  P = P0, D = D0, W = W0, C = C0, B = B0
    ;   statistics(cputime, CA), get_time(TA),
        engine_events(E, Items),
        engine_drain(E, L),
        get_time(TB), statistics(cputime, CB),
        length(L, ND),
        P1 is P0 + K, D1 is D0 + ND,
        W1 is W0 + TB - TA, C1 is C0 + CB - CA, B1 is B0 + 1,
        Left1 is Left - K,
        run(S, E, Batch, Left1, P1, P, D1, D, W1, W, C1, C, B1, B)
    ).

read_all(S, Left, Batch, Bs) :-
    Want is min(Batch, Left),
    read_batch(Want, S, B),
    (   B == [] -> Bs = []
    ;   Bs = [B|Rest], length(B, K), Left1 is Left - K, read_all(S, Left1, Batch, Rest)
    ).

push_all(Bs, E, P, D, W, C, NB) :-
    push_all(Bs, E, 0, P, 0, D, 0.0, W, 0.0, C, 0, NB).

push_all([], _, P, P, D, D, W, W, C, C, B, B).
push_all([Items|Bs], E, P0, P, D0, D, W0, W, C0, C, B0, B) :-
    statistics(cputime, CA), get_time(TA),
    engine_events(E, Items),
    engine_drain(E, L),
    get_time(TB), statistics(cputime, CB),
    length(L, ND), length(Items, K),
    P1 is P0 + K, D1 is D0 + ND,
    W1 is W0 + TB - TA, C1 is C0 + CB - CA, B1 is B0 + 1,
    push_all(Bs, E, P1, P, D1, D, W1, W, C1, C, B1, B).

read_batch(0, _, []) :- !.
read_batch(N, S, Items) :-
    read_term(S, T, []),
    (   T == end_of_file
    ->  Items = []
    ;   Items = [T|Rest],
        N1 is N - 1,
        read_batch(N1, S, Rest)
    ).

status_kb(Field, KB) :-
    setup_call_cleanup(open('/proc/self/status', read, S),
                       read_string(S, _, Text), close(S)),
    split_string(Text, "\n", "", Lines),
    atom_string(Field, F),
    (   member(Line, Lines),
        split_string(Line, ":", " \t", [F, V]),
        split_string(V, " ", " ", [NS|_])
    ->  number_string(KB, NS)
    ;   KB = 0
    ).

reset_hwm :-
    catch(setup_call_cleanup(open('/proc/self/clear_refs', write, S),
                             write(S, '5'), close(S)), _, true).
