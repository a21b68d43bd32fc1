/*  bench/seq2.py --profile: a parse-only entry point of the bridge, to split
    the bridge's Prolog time into reading a batch's text and running the
    engine.  Consulted into the bridge's process by the benchmark.
*/
bridge_python:bench_parse_only(Text, Reply) :-
    term_string(Batch, Text, [syntax_errors(error)]),
    length(Batch, N),
    format(string(Reply), '{"n":~w}', [N]).
