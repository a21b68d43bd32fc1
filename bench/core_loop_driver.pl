/*  bench/core_loop.py's driver: the core's own per-event cost, answers
    passed to a sink that does nothing.

    swipl bench/core_loop_driver.pl Core Rule Events Batch How

    Core    the core module to load (a tree's prolog/epsparql_core)
    Rule    the rule, as text ending in '.'
    Events  a file of e(price(K, P), T, T) terms
    Batch   events per engine_events/2 call
    How     run: read a batch, push it with with_detection_sink/2 and a
            sink that does nothing, and so on (only the pushing timed; CPU
            time is the process's, SWI-Prolog's garbage-collection thread
            included), then count the answers with a second engine
            (untimed); profile: the timed part under SWI-Prolog's profiler

    Prints one line: RESULT {"events", "answers", "wall_s", "cpu_s",
    "goals", "peak_rss_kb"}; memory is this process's (VmHWM, reset
    before pushing).

    The sinks are declared with epsparql_core:direct_sink/1, as
    bridge_python.pl declares its columns sink, so that a core that calls
    such sinks directly does so here as through Python (a core without
    the hook ignores the declaration).
*/
:- initialization(main, main).

main :-
    current_prolog_flag(argv, [Core, RuleText, File, BatchA, How]),
    atom_number(BatchA, Batch),
    use_module(Core),
    assertz(epsparql_core:direct_sink(user:null_sink)),
    assertz(epsparql_core:direct_sink(user:count_sink)),
    engine(RuleText, loop_bench, E),
    garbage_collect,
    reset_hwm,
    (   How == profile
    ->  profile(push_file(File, Batch, E, null_sink, N, Wall, Cpu), [cumulative(false), top(40)]),
        Answers = -1
    ;   push_file(File, Batch, E, null_sink, N, Wall, Cpu),
        engine(RuleText, loop_count, C),
        flag(loop_answers, _, 0),
        push_file(File, Batch, C, count_sink, _, _, _),
        flag(loop_answers, Answers, Answers)
    ),
    status_kb('VmHWM', Peak),
    engine_stats(E, St),
    format("RESULT {\"events\":~w,\"answers\":~w,\"wall_s\":~15g,\"cpu_s\":~15g,\"goals\":~w,\"peak_rss_kb\":~w}~n",
           [N, Answers, Wall, Cpu, St.goals, Peak]).

engine(RuleText, E, E) :-
    engine_create(E),
    setup_call_cleanup(open_string(RuleText, RS), read_event_rules(RS, Rules, []), close(RS)),
    engine_add_rules(E, Rules).

null_sink(_, _, _).
count_sink(_, _, _) :- flag(loop_answers, N, N + 1).

%   push_file(+File, +Batch, +E, +Sink, -N, -Wall, -Cpu): push File's
%   events Batch at a time (each batch read first, as the Python side
%   makes its batch, then pushed: only the pushing timed).
push_file(File, Batch, E, Sink, N, Wall, Cpu) :-
    setup_call_cleanup(open(File, read, S),
                       push_stream(S, Batch, E, Sink, 0, N, 0.0, Wall, 0.0, Cpu),
                       close(S)).

push_stream(S, Batch, E, Sink, N0, N, W0, W, C0, C) :-
    read_batch(Batch, S, B),
    (   B == []
    ->  N = N0, W = W0, C = C0
    ;   statistics(process_cputime, CA), get_time(WA),
        with_detection_sink(Sink, engine_events(E, B)),
        get_time(WB), statistics(process_cputime, CB),
        length(B, K), N1 is N0 + K,
        W1 is W0 + WB - WA, C1 is C0 + CB - CA,
        push_stream(S, Batch, E, Sink, N1, N, W1, W, C1, C)
    ).

read_batch(0, _, []) :- !.
read_batch(N, S, Items) :-
    read_term(S, T, []),
    (   T == end_of_file -> Items = []
    ;   Items = [T|Rest], N1 is N - 1, read_batch(N1, S, Rest)
    ).

status_kb(Field, KB) :-
    setup_call_cleanup(open('/proc/self/status', read, S), read_string(S, _, Text), close(S)),
    split_string(Text, "\n", "", Lines),
    atom_string(Field, F),
    (   member(Line, Lines), split_string(Line, ":", " \t", [F, V]), split_string(V, " ", " ", [NS|_])
    ->  number_string(KB, NS)
    ;   KB = 0
    ).

reset_hwm :-
    catch(setup_call_cleanup(open('/proc/self/clear_refs', write, S), write(S, '5'), close(S)), _, true).
