/*  The Python side's entry points into the stream dialects' windows.

    epsparql/window_runtime.py calls these through the runtime
    (janus-swi), as it calls bridge_python.pl's: text or janus data in,
    one JSON text out.  The windows of an engine live in the engine's
    module next to its EP-SPARQL rules (stream_window.pl), and both are
    fed in one crossing: py_windows_columns/5 pushes a batch of stream
    triples into the windows and into the core, advances or flushes
    both, and every answer, windowed or not, leaves through the same
    columns sink (bridge_columns.pl) under the head of its query: one
    answer channel.  Loaded with the first windowed query.
*/
:- module(bridge_windows,
          [ py_windows_columns/5,  % +Op, +Engine, +Receiver, +Arg, -Reply
            sw_py_register/3,      % +Engine, +Text, -Reply
            sw_py_clear/2,         % +Engine, -Reply
            sw_py_stats/2,         % +Engine, -Reply
            sw_py_export/2,        % +Engine, -Reply
            sw_py_import/3,        % +Engine, +Text, -Reply
            sw_py_destroy/2        % +Engine, -Reply
          ]).
:- use_module(library(apply)).
:- use_module(library(error)).
:- use_module(stream_window).
:- use_module(epsparql_core, [with_detection_sink/2, engine_events/2, engine_advance/2,
                              engine_flush/1]).
:- use_module(bridge_python, [columns_call/5, send_detected/1, triple_rows_batch/3,
                              table_batch/2, reply/3, exact_time/2]).
:- use_module(bridge_long_text, [with_long_refs/2]).

%!  py_windows_columns(+Op, +Engine, +Receiver, +Arg, -Reply) is det.
%
%   One columns operation (bridge_python:columns_call/5) over Engine's
%   windows and, when Core is true (the engine has rules that read the
%   stream), its core, in this order:
%
%     - push: Arg is [Data, Streams, Core], Data a batch of stream
%       triples as janus data (bridge_python:triple_rows_batch/2),
%       Streams the runs Stream-Count of their streams, in order
%     - push_text: Arg is [Text, Streams, Core], the batch as the text of
%       b(Vars, Values, Items) (bridge_python:table_batch/2), or a Python
%       object whose str() is that text
%     - advance: Arg is [Time, Core]: no triple will end at or before Time
%     - flush: Arg is Core: end of input
%
%   The windows' answers and the core's detections go to Receiver as
%   they come; Reply lists the errors of both.
py_windows_columns(Op, M, Receiver, Arg, R) :-
    columns_call(M, Receiver, windows_op(Op, M, Arg), sw_errors(M), R).

windows_op(push, M, [Data, Streams, Core]) :- !,
    triple_rows_batch(Data, Batch, Refs),
    with_long_refs(Refs, push_both(M, Batch, Streams, Core)).
windows_op(push_text, M, [Text0, Streams, Core]) :- !,
    (   blob(Text0, 'PyObject') -> janus:py_str(Text0, Text) ; Text = Text0 ),
    table_batch(Text, Batch),
    push_both(M, Batch, Streams, Core).
windows_op(advance, M, [T0, Core]) :- !,
    must_be(number, T0),
    exact_time(T0, T),
    core_goal(Core, M, engine_advance(M, T)),
    sw_with_sink(bridge_python:columns_sink, sw_advance(M, T)).
windows_op(flush, M, Core) :- !,
    core_goal(Core, M, engine_flush(M)),
    sw_with_sink(bridge_python:columns_sink, sw_flush(M)).
windows_op(Op, _, _) :-
    domain_error(windows_columns_op, Op).

push_both(M, Batch, Streams, Core) :-
    must_be(list, Streams),
    maplist(stream_run, Streams, Runs),
    sw_with_sink(bridge_python:columns_sink, sw_push_events(M, Batch, Runs)),
    core_goal(Core, M, engine_events(M, Batch)).

%   Runs cross as lists [Stream, Count] (janus makes a -/2 term a tuple).
stream_run([G, N], G-N) :- !.
stream_run(X, _) :- domain_error(stream_run, X).

%   The core's part of an operation, with its detections sent to the
%   columns sink (directly: the sink bridge_python declares).  Core is a
%   boolean (janus passes Python's as @true and @false).
core_goal(Core, M, Goal) :-
    (   ( Core == true ; Core == @(true) )
    ->  send_detected(M),
        with_detection_sink(bridge_python:columns_sink, Goal),
        send_detected(M)
    ;   ( Core == false ; Core == @(false) )
    ->  true
    ;   must_be(boolean, Core)
    ).

%!  sw_py_register(+Engine, +Text, -Reply) is det.
%!  sw_py_clear(+Engine, -Reply) is det.
%!  sw_py_destroy(+Engine, -Reply) is det.
%!  sw_py_import(+Engine, +Text, -Reply) is det.
%
%   Register a compiled query (stream_window:sw_register_text/2), forget
%   the stream state, remove every windowed query, or put back an
%   exported state (read as data).  Reply {"ok": true} or the error.
sw_py_register(M, Text, R) :-
    reply(sw_register_text(M, Text), ok, R).
sw_py_clear(M, R) :-
    reply(sw_clear(M), ok, R).
sw_py_destroy(M, R) :-
    reply(sw_destroy(M), ok, R).
sw_py_import(M, Text, R) :-
    reply(( term_string(State, Text, [syntax_errors(error)]), sw_import(M, State) ), ok, R).

%!  sw_py_export(+Engine, -Reply) is det.
%
%   The stream state of Engine's windows (sw_export/2) as the text of one
%   ground term, or an error as JSON.
sw_py_export(M, R) :-
    catch(( sw_export(M, State),
            with_output_to(string(R), write_canonical(State)) ),
          E, reply(throw(E), ok, R)).

%!  sw_py_stats(+Engine, -Reply) is det.
%
%   sw_stats/2 as a JSON object (due: null when no instant is due).
sw_py_stats(M, R) :-
    catch(( sw_stats(M, S),
            with_output_to(string(R), ( write('{'), foldl(write_stat, S, "", _), write('}') )) ),
          E, reply(throw(E), ok, R)).

write_stat(K-V, Sep, ",") :- format('~w"~w":~w', [Sep, K, V]).
