/*  The Python side's entry points into the core.

    Python calls these through janus-swi (epsparql/core/runtime.py:
    apply_once, text arguments arrive as atoms or strings).  Every
    predicate here takes text and answers with one JSON text, so a call
    from Python is a single crossing with no per-term conversion:
    batches of events go in as the text of a Prolog list (read as data by
    read_term/3, never called), detections come back as JSON.  Errors are
    caught here and returned as {"error": Message}, so no Prolog exception
    crosses the foreign interface.

    JSON encoding of a term: numbers as numbers, atoms as strings, strings
    as {"s": Text}, compound terms as {"f": Name, "a": [Args]}, proper lists
    as arrays, variables as null, non-finite floats as {"n": "inf"|"-inf"|"nan"}.
*/
:- module(bridge_python,
          [ py_create/2,         % +Engine, -Reply
            py_destroy/2,        % +Engine, -Reply
            py_reset/2,          % +Engine, -Reply
            py_clear/2,          % +Engine, -Reply
            py_add_rules/3,      % +Engine, +RulesText, -Reply
            py_load_rules/3,     % +Engine, +File, -Reply
            py_push/3,           % +Engine, +BatchText, -Reply
            py_push_table/3,     % +Engine, +TableBatchText, -Reply
            py_drain/2,          % +Engine, -Reply
            py_set_option/4,     % +Engine, +Key, +ValueText, -Reply
            py_stats/2,          % +Engine, -Reply
            py_rule_graph/2,     % +Engine, -Reply
            py_goals/2,          % +Engine, -Reply
            py_justify/5,        % +Engine, +Name, +Arity, +IntervalText, -Reply
            py_background/4,     % +Engine, +Op, +TriplesText, -Reply
            py_gc/2,             % +Engine, -Reply
            py_advance/3,        % +Engine, +TimeText, -Reply
            py_flush/2,          % +Engine, -Reply
            py_export_state/2,   % +Engine, -Reply
            py_import_state/3,   % +Engine, +StateText, -Reply
            py_consult/2,        % +File, -Reply
            py_register_function/3,   % +IRI, +IdText|+PredText, -Reply
            py_register_prolog_function/3, % +IRI, +PredText, -Reply
            py_function_registered/2, % +IRI, -Reply
            py_text_call/3,      % +Name, +Args, -Reply
            py_columns/5,        % +Op, +Engine, +Receiver, +Arg, -Reply
            py_module_call/4,    % +Module, +Name, +Args, -Reply
            columns_call/5,      % +Engine, +Receiver, :Goal, :MoreErrors, -Reply
            send_detected/1,     % +Engine
            triple_rows_batch/2, % +Data, -Batch
            triple_rows_batch/3, % +Data, -Batch, -LongRefs
            table_batch/2,       % +Text, -Batch
            exact_time/2,        % +Time, -Exact
            reply/3,             % :Goal, +Out, -Reply
            json_term//1,        % +Term (from bridge_json)
            columns_sink/3       % +Event, +T1, +T2 (from bridge_columns: the sink
                                 % bridge_windows.pl passes, called directly)
          ]).
:- set_prolog_flag(optimise, true).   % file-scoped: inline arithmetic
:- use_module(library(http/json)).

%   Stack limit of this process, set explicitly (environment variable
%   EPSPARQL_STACK_LIMIT in bytes, default 1 GiB): exhausting it raises a
%   resource error that reaches Python as a PrologError, and the engine
%   can be reset and used again.
:- initialization(set_stack_limit).

set_stack_limit :-
    (   getenv('EPSPARQL_STACK_LIMIT', Text), atom_number(Text, N), integer(N), N > 0
    ->  Limit = N
    ;   Limit is 1024 * 1024 * 1024
    ),
    set_prolog_flag(stack_limit, Limit).
:- use_module(library(apply)).
:- use_module(epsparql_core).
:- use_module(core_state, [engine_store/4, must_be_engine/1]).
:- use_module(bridge_json, [write_json/2, json_term//1]).
:- use_module(bridge_columns).
:- use_module(native, [native_library/2]).

%   triple_rows_c/7: the e/3 items of the common batch in C
%   (prolog/c/rows_batch.c); it fails where triple_rows/8 must run.
:- native_library(rows_batch, Lib),
   use_foreign_library(Lib, install_rows_batch).
:- use_module(bridge_long_text, [long_text_string/3, with_long_refs/2]).

%   The columns sink, as with_detection_sink/2 receives it from here, is
%   called directly by the engines' ep_emit/3 (no call/4 per detection).
:- multifile epsparql_core:direct_sink/1.
epsparql_core:direct_sink(bridge_python:columns_sink).

%!  reply(:Goal, -Reply:string) is det.
%
%   Run Goal (which binds Out to a JSON-writing goal) and return its
%   output, or {"error": Message} if it raised or failed.
:- meta_predicate reply(0, -, -).
reply(Goal, Out0, Reply) :-
    catch(( call(Goal) -> Out = Out0 ; Out = fail_json ), E, Out = error_json(E)),
    (   Out == ok
    ->  Reply = "{\"ok\":true}"               % the common reply, without a stream
    ;   with_output_to(string(Reply), write_out(Out))
    ).

write_out(fail_json) :- !, write('{"error":"goal failed"}').
write_out(error_json(E)) :- !,
    message_text(E, Text),
    error_kind(E, Kind, Formal),
    write('{"error":'), json:json_write_string(current_output, Text),
    write(',"kind":'), json:json_write_string(current_output, Kind),
    write(',"formal":'), write_json(current_output, Formal),
    write(',"term":'), format(string(T), '~q', [E]), json:json_write_string(current_output, T),
    write('}').
write_out(ok) :- !, write('{"ok":true}').
write_out(errors(Errs)) :- !,
    write('{"e":['), write_errors(Errs), write(']}').
write_out(raw(Text)) :- !, write(Text).
write_out(goals(Gs)) :- !,
    write('['),
    foldl([g(N, Id, Args), Sep, ","]>>( write(Sep),
                                        write('{"store":'), json:json_write_string(current_output, N),
                                        format(',"node":~w,"goal":', [Id]),
                                        write_json(current_output, Args), write('}') ),
          Gs, "", _),
    write(']').
write_out(json(Term)) :- !, json_value(Term).
write_out(terms(Term)) :- !, write_json(current_output, Term).
write_out(detections(M, Ds)) :- !,
    engine_errors(M, Errs0),
    function_errors(Errs1),
    append(Errs0, Errs1, Errs),
    write('{"d":['), write_detections(Ds), write('],"e":['),
    write_errors(Errs), write(']}').

%   Errors of Prolog extension functions (sparql_eval) raised during the
%   call: they belong to the engine the call ran.
function_errors(Errs) :-
    (   catch(sparql_eval:sparql_function_errors(Errs0), _, fail) -> Errs = Errs0 ; Errs = [] ).

%!  py_text_call(+Name, +Args:list, -Reply) is det.
%
%   Call bridge_python:Name(Args..., Reply), where an argument `s-Obj`
%   (the Python tuple ("s", obj)) stands for a long text: Obj is a Python
%   object (a janus `PyObject` blob) whose str() is the text, and the
%   argument becomes that text as a Prolog string (janus:py_str/2).  janus
%   passes Python `str` arguments as atoms, and atoms are reclaimed only by
%   atom garbage collection, which counts atoms, not bytes: batches of
%   megabytes passed as atoms would pile up.  The runtime sends long texts
%   this way; other arguments (atoms, numbers, Python objects) pass as
%   they are.
py_text_call(Name, Args0, Reply) :-
    maplist(text_arg, Args0, Args),
    append(Args, [Reply], CallArgs),
    Goal =.. [Name|CallArgs],
    call(Goal).

%!  py_module_call(+Module, +Name, +Args:list, -Reply) is det.
%
%   As py_text_call/3, for the entry Module:Name of another bridge
%   module (prolog/bridge_windows.pl), which must export it.
py_module_call(Module, Name, Args0, Reply) :-
    must_be(atom, Module),
    must_be(atom, Name),
    length(Args0, N),
    Arity is N + 1,
    (   module_property(Module, exports(Exports)), memberchk(Name/Arity, Exports)
    ->  true
    ;   existence_error(bridge_entry, Module:Name/Arity)
    ),
    maplist(text_arg, Args0, Args),
    append(Args, [Reply], CallArgs),
    Goal =.. [Name|CallArgs],
    call(Module:Goal).

text_arg(X, Text) :-
    (   nonvar(X), X = s-Obj, blob(Obj, 'PyObject')
    ->  janus:py_str(Obj, Text)
    ;   Text = X
    ).

py_create(M, R)  :- reply(engine_create(M), ok, R).
py_destroy(M, R) :- reply(( engine_destroy(M), columns_drop(M) ), ok, R).
py_reset(M, R)   :- reply(engine_reset(M), ok, R).
py_clear(M, R)   :- reply(engine_clear_state(M), ok, R).
py_gc(M, R)      :- reply(engine_gc(M), ok, R).
py_consult(F, R) :- reply(load_files(user:F, [if(not_loaded)]), ok, R).

%!  py_register_function(+IRI, +IdText, -Reply) is det.
%!  py_register_prolog_function(+IRI, +PredText, -Reply) is det.
%!  py_function_registered(+IRI, -Reply) is det.
%
%   Extension functions for SPARQL expressions (see sparql_eval.pl): a
%   Python function by number, or a Prolog predicate given as text
%   (`name` or `module:name`), called as call(Pred, Args..., Result).
py_register_function(IRI, IdText, R) :-
    reply(( atom_number(IdText, Id), bridge_pyfun:pyfun_register(IRI, Id) ), ok, R).
py_register_prolog_function(IRI, PredText, R) :-
    reply(( term_string(Pred, PredText), callable(Pred),
            sparql_eval:sparql_register_function(IRI, Pred) ), ok, R).
py_function_registered(IRI, R) :-
    (   catch(sparql_eval:sparql_function_registered(IRI), _, fail)
    ->  R = "{\"ok\":true}"
    ;   R = "{\"ok\":false}"
    ).

%!  py_add_rules(+Engine, +Text, -Reply) is det.
%
%   Text holds clauses in the rule language, each ending in a full stop.
py_add_rules(M, Text, R) :-
    reply(add_rules_text(M, Text), ok, R).

add_rules_text(M, Text) :-
    setup_call_cleanup(
        open_string(Text, S),
        read_event_rules(S, Terms, [syntax_errors(error)]),
        close(S)),
    engine_add_rules(M, Terms).

py_load_rules(M, File, R) :- reply(engine_load_rules(M, File), ok, R).

%!  py_push(+Engine, +BatchText, -Reply) is det.
%
%   BatchText is the text of a list of e(Event, T1, T2).  The batch's
%   detections are written as JSON into a memory file while the batch
%   runs (no buffer round trip); Reply carries them, the detections left
%   in the buffer, and the rule errors.
py_push(M, Text, R) :-
    catch(push_text(M, Text, R), E, reply(throw(E), ok, R)).

push_text(M, Text, Reply) :-
    term_string(Batch, Text, [syntax_errors(error)]),
    push_batch(M, Batch, Reply).

%!  py_push_table(+Engine, +Text, -Reply) is det.
%
%   Like py_push/3 for a batch of stream triples written with a term
%   table, so that terms repeated in the batch (IRIs, blank nodes,
%   datatype IRIs) are written once: Text is the text of
%   `b(Vars, Values, Items)`, Vars a list of distinct variables, Values
%   the list of the (ground) terms they stand for, and Items a list in
%   which those variables occur, each item one of
%
%     - t(S, P, O, T1, T2): the event triple(S, P, O) over [T1, T2]
%     - n(S, P, V, D, L, T1, T2): triple(S, P, n(V, D, L)), and likewise
%       d/7 and dur/7 (the literal's arguments written flat: fewer
%       nested terms to read)
%     - the same without T2 (t/4, n/6, d/6, dur/6): a point event, T2 = T1
%     - e(Event, T1, T2): any event
%
%   It is read as data (read_term, never called); unifying Vars with
%   Values puts every term in place at once, and the batch must then be
%   ground.  See epsparql/rdf/wire.py.
py_push_table(M, Text, R) :-
    catch(push_table_text(M, Text, R), E, reply(throw(E), ok, R)).

push_table_text(M, Text, Reply) :-
    term_string(T, Text, [syntax_errors(error)]),
    (   T = b(Vars, Values, Items), is_list(Vars), is_list(Values), ground(Values),
        Vars = Values, is_list(Items), ground(Items)
    ->  table_items(Items, Batch),
        push_batch(M, Batch, Reply)
    ;   domain_error(table_batch, b/3)
    ).

table_items([], []).
table_items([X|Xs], [e(E, T1, T2)|Ys]) :-
    (   table_item(X, e(E, T10, T20)) -> true ; domain_error(table_batch_item, X) ),
    exact_time(T10, T1), exact_time(T20, T2),
    table_items(Xs, Ys).

%!  exact_time(+Time, -Exact) is det.
%
%   A stream's time stamp as the engine keeps it: a float is the decimal
%   it was written as (the simplest rational it stands for: 0.1 is 1r10,
%   1700000000.25 is 6800000001r4), so windows, panes and getDURATION()
%   compute with the times as written, not with their binary
%   approximations (0.4 - 0.1 is 3r10, not 0.30000000000000004).  Times
%   leave as floats again (the columns sink, bridge_json).
exact_time(T, R) :- ( float(T) -> R is rationalize(T) ; R = T ).

table_item(t(S, P, O, T1, T2), e(triple(S, P, O), T1, T2)).
table_item(n(S, P, V, D, L, T1, T2), e(triple(S, P, n(V, D, L)), T1, T2)).
table_item(d(S, P, V, D, L, T1, T2), e(triple(S, P, d(V, D, L)), T1, T2)).
table_item(dur(S, P, V, D, L, T1, T2), e(triple(S, P, dur(V, D, L)), T1, T2)).
table_item(e(E, T1, T2), e(E, T1, T2)).
table_item(t(S, P, O, T), e(triple(S, P, O), T, T)).
table_item(n(S, P, V, D, L, T), e(triple(S, P, n(V, D, L)), T, T)).
table_item(d(S, P, V, D, L, T), e(triple(S, P, d(V, D, L)), T, T)).
table_item(dur(S, P, V, D, L, T), e(triple(S, P, dur(V, D, L)), T, T)).

push_batch(M, Batch, Reply) :-
    setup_call_cleanup(
        new_memory_file(MF),
        push_to_memory_file(M, Batch, MF, Reply),
        free_memory_file(MF)).

push_to_memory_file(M, Batch, MF, Reply) :-
    setup_call_cleanup(
        open_memory_file(MF, write, Out, [encoding(utf8)]),
        ( write(Out, '{"d":['),
          nb_setval(epsparql_first, true),
          with_detection_sink(sink_json(Out), engine_events(M, Batch)),
          engine_drain(M, Ds),
          forall(member(detected(E, [T1, T2]), Ds), sink_json(Out, E, T1, T2)),
          engine_errors(M, Errs0),
          function_errors(Errs1),
          append(Errs0, Errs1, Errs),
          write(Out, '],"e":['),
          with_output_to(Out, write_errors(Errs)),
          write(Out, ']}')
        ),
        close(Out)),
    memory_file_to_string(MF, Reply, utf8).

%   The detection sink: one JSON array [Event, T1, T2] per detection.
sink_json(Out, E, T1, T2) :-
    (   nb_getval(epsparql_first, true)
    ->  nb_setval(epsparql_first, false)
    ;   put_char(Out, ',')
    ),
    write_detection(Out, detected(E, [T1, T2])).

py_drain(M, R) :-
    reply(engine_drain(M, Ds), detections(M, Ds), R).

%!  py_columns(+Op, +Engine, +Receiver, +Arg, -Reply) is det.
%
%   Run Op on Engine with every detection it releases sent to Receiver,
%   a Python object, in chunks of flat rows (see bridge_columns.pl), as
%   the detections are made; Reply is {"e": [RuleErrors]} or the usual
%   {"error": ...}.  Op and Arg:
%
%     - push: Arg is the text of a list of e/3 (as py_push/3)
%     - push_rows: Arg is a list of -(Name, Args, T1, T2), Args a -/N
%       term of the event's arguments or [] (plain events passed by janus
%       as data: terms.py, batch_rows())
%     - push_table: Arg is the text of b/3 (as py_push_table/3)
%     - push_triples: Arg is [Terms, Ss, Ps, Os, T1s, T2s], a batch of
%       stream triples as janus data (epsparql/rdf/wire_rows.py): the
%       batch's distinct terms, then per triple the places of its
%       subject, predicate and object in Terms (or the objects as
%       numbers and lexical forms) and its times
%     - advance: Arg is a time (as py_advance/3)
%     - flush, drain: Arg is ignored
%
%   Detections still in the engine's buffer (made outside a bridge call)
%   are sent first.  Chunks sent before an error stay sent.
py_columns(Op, M, Receiver, Arg, R) :-
    columns_call(M, Receiver, columns_op(Op, M, Arg), no_errors, R).

%!  columns_call(+Engine, +Receiver, :Goal, :MoreErrors, -Reply) is det.
%
%   Run Goal as a columns operation of Engine: what Goal sends to
%   columns_sink/3 goes to Receiver in buffers (bridge_columns.pl), and
%   Reply lists the errors recorded meanwhile, the engine's rules', the
%   extension functions' and call(MoreErrors, Errors)'s (rule_error/4
%   terms), or is the error Goal raised.
:- meta_predicate columns_call(+, +, 0, 1, -).
columns_call(M, Receiver, Goal, More, R) :-
    reply(( with_columns(M, Receiver, Goal),
            engine_errors(M, Errs0),
            function_errors(Errs1),
            call(More, Errs2),
            append([Errs0, Errs1, Errs2], Errs) ),
          errors(Errs), R).

no_errors([]).

columns_op(Op, M, Arg) :-
    send_detected(M),
    columns_run(Op, M, Arg),
    send_detected(M).

%!  send_detected(+Engine) is det.
%
%   Send the detections in Engine's buffer (made outside a columns call)
%   to columns_sink/3.
send_detected(M) :-
    engine_drain(M, Ds),
    forall(member(detected(E, [T1, T2]), Ds), columns_sink(E, T1, T2)).

columns_run(push, M, Text) :- !,
    term_string(Batch, Text, [syntax_errors(error)]),
    with_detection_sink(columns_sink, engine_events(M, Batch)).
columns_run(push_rows, M, Rows) :- !,
    must_be(list, Rows),
    rows_batch(Rows, Batch),
    with_detection_sink(columns_sink, engine_events(M, Batch)).
columns_run(push_table, M, Text) :- !,
    table_batch(Text, Batch),
    with_detection_sink(columns_sink, engine_events(M, Batch)).
columns_run(push_triples, M, Data) :- !,
    triple_rows_batch(Data, Batch, Refs),
    with_long_refs(Refs, with_detection_sink(columns_sink, engine_events(M, Batch))).
columns_run(advance, M, Text) :- !,
    (   number(Text) -> T0 = Text ; atom_number(Text, T0) ),
    exact_time(T0, T),
    with_detection_sink(columns_sink, engine_advance(M, T)).
columns_run(flush, M, _) :- !,
    with_detection_sink(columns_sink, engine_flush(M)).
columns_run(drain, _, _) :- !.
columns_run(Op, _, _) :-
    domain_error(columns_op, Op).

%!  table_batch(+Text, -Batch) is det.
%
%   The e/3 items of a batch written with a term table: Text is the text
%   of b(Vars, Values, Items) (see py_push_table/3), read as data.
table_batch(Text, Batch) :-
    term_string(T, Text, [syntax_errors(error)]),
    (   T = b(Vars, Values, Items), is_list(Vars), is_list(Values), ground(Values),
        Vars = Values, is_list(Items), ground(Items)
    ->  table_items(Items, Batch)
    ;   domain_error(table_batch, b/3)
    ).

%   rows_batch(+Rows, -Batch): the rows of terms.py's batch_rows() as
%   janus passes them (Python str as atoms, a tuple as a -/N term), as
%   e/3 items: -(Name, Args, T1, T2), Args the -/N term of the arguments
%   or [] for an atom event.  engine_events/2 checks the items as it
%   checks parsed ones.
rows_batch([], []).
rows_batch([Row|Rows], [e(E, T1, T2)|Batch]) :-
    (   Row = -(Name, Args, T1, T2), atom(Name)
    ->  (   Args == []
        ->  E = Name
        ;   compound(Args)
        ->  compound_name_arguments(Args, _, As),
            E =.. [Name|As]
        ;   type_error(event_row, Row)
        )
    ;   type_error(event_row, Row)
    ),
    rows_batch(Rows, Batch).

%!  triple_rows_batch(+Data, -Batch) is det.
%
%   The e/3 items of a batch of stream
%   triples passed as janus data (op push_triples; the format is
%   described in epsparql/rdf/wire_rows.py): Data is
%   [Terms, Ss, Ps, Os, T1s, T2s].  Each element of Terms is an IRI (an
%   atom), a number (a literal the codec writes as one) or
%   -(Name, Mask, Arg, ...), the term Name(Arg, ...) with the
%   arguments whose bit is set in Mask (bit 0: the first) made strings
%   (an atom's text, or the text of a Python LongText passed by
%   reference: bridge_long_text.pl); arguments are atomic.  Item I is e(triple(S, P, O), T1, T2), S the
%   term at place Ss[I] of Terms (1-based), and so on; Os is such a list
%   of places too, or -(Name, Datatype, Values, Lexicals): the objects
%   Name(Value, Datatype, Lexical), Lexicals a Python object whose str()
%   is the lexical forms joined by spaces.  Terms are only looked up,
%   never called; a malformed entry or row is a domain_error naming its
%   place.  engine_events/2 checks the times.
triple_rows_batch(Data, Batch) :-
    triple_rows_batch(Data, Batch, _).

%!  triple_rows_batch(+Data, -Batch, -LongRefs) is det.
%
%   As triple_rows_batch/2; LongRefs: the entries of the texts passed by
%   reference, for with_long_refs/2 around the batch's processing (an
%   answer then sends such a text back as the Python object it came as).
triple_rows_batch(Data, Batch, Refs) :-
    (   Data = [Terms, Ss, Ps, Os0, T1s, T2s], is_list(Terms)
    ->  true
    ;   domain_error(triple_rows, Data)
    ),
    table_terms(Terms, 1, Ts, Refs, []),
    compound_name_arguments(Table, terms, Ts),
    object_terms(Os0, Table, Os),
    (   triple_rows_c(Ss, Ps, Os, T1s, T2s, Table, Batch0)
    ->  Batch = Batch0
    ;   triple_rows(Ss, Ps, Os, T1s, T2s, Table, 0, Batch)
    ).

table_terms([], _, [], R, R).
table_terms([X|Xs], I, [T|Ts], R0, R) :-
    (   table_term(X, T0, R0, R1) -> T = T0 ; domain_error(triple_rows_term, term(I, X)) ),
    I1 is I + 1,
    table_terms(Xs, I1, Ts, R1, R).

table_term(X, X, R, R) :- atom(X), !.
table_term(X, X, R, R) :- number(X), !.
table_term(X, T, R0, R) :-
    compound(X),
    compound_name_arguments(X, -, [Name, Mask|Args]),
    atom(Name), integer(Mask), Args \== [],
    maplist(atomic, Args),
    string_args(Args, Mask, Args1, R0, R),
    compound_name_arguments(T, Name, Args1).

string_args([], _, [], R, R).
string_args([A|As], Mask, [B|Bs], R0, R) :-
    (   Mask /\ 1 =:= 1
    ->  (   blob(A, 'PyObject')
        ->  long_text_string(A, B, Ref),
            R0 = [Ref|R1]
        ;   atom(A), atom_string(A, B), R1 = R0
        )
    ;   B = A, R1 = R0
    ),
    Mask1 is Mask >> 1,
    string_args(As, Mask1, Bs, R1, R).

%   object_terms(+Os0, +Table, -Os): the object of each row (a place in
%   Table, looked up by triple_rows/8) or, for a column of numbers, the
%   literal terms themselves (lit/1).
object_terms(Os, _, Os) :- is_list(Os), !.
object_terms(-(bare, Values), _, Os) :-
    is_list(Values), !,
    (   bare_literals(Values, Os) -> true ; domain_error(triple_rows_objects, bare) ).
object_terms(-(Name, Dt, Values, Obj, Flags), _, Os) :-
    atom(Name), atom(Dt), is_list(Values), blob(Obj, 'PyObject'), is_list(Flags), !,
    janus:py_str(Obj, Text),
    split_string(Text, " ", "", Lexes),
    (   number_literals(Values, Lexes, Flags, Name, Dt, Os)
    ->  true
    ;   domain_error(triple_rows_objects, Name/Dt)
    ).
object_terms(Os, _, _) :-
    domain_error(triple_rows_objects, Os).

%   The codec's bare numbers (canonical xsd:integer and xsd:double).
bare_literals([], []).
bare_literals([V|Vs], [lit(V)|Ts]) :-
    number(V),
    bare_literals(Vs, Ts).

number_literals([], [], [], _, _, []).
number_literals([V|Vs], [L|Ls], [F|Fs], Name, Dt, [lit(T)|Ts]) :-
    number(V),
    (   F == 1 -> T = V ; T =.. [Name, V, Dt, L] ),
    number_literals(Vs, Ls, Fs, Name, Dt, Ts).

triple_rows([], [], [], [], [], _, _, []) :- !.
triple_rows([S|Ss], [P|Ps], [O|Os], [T10|T1s], [T20|T2s], Table, I,
            [e(triple(ST, PT, OT), T1, T2)|Batch]) :- !,
    exact_time(T10, T1), exact_time(T20, T2),
    row_term(S, Table, I, ST),
    row_term(P, Table, I, PT),
    (   O = lit(OT) -> true ; row_term(O, Table, I, OT) ),
    I1 is I + 1,
    triple_rows(Ss, Ps, Os, T1s, T2s, Table, I1, Batch).
triple_rows(_, _, _, _, _, _, I, _) :-
    domain_error(triple_rows, row(I)).

row_term(Id, Table, I, T) :-
    (   integer(Id), Id > 0, arg(Id, Table, T0)
    ->  T = T0
    ;   domain_error(triple_rows_place, row(I, Id))
    ).

%!  py_advance(+Engine, +TimeText, -Reply) is det.
%!  py_flush(+Engine, -Reply) is det.
%
%   Close instants (see engine_advance/2, engine_flush/1); Reply carries
%   the detections this released.
py_advance(M, Text, R) :-
    reply(( atom_number(Text, T), engine_advance(M, T), engine_drain(M, Ds) ),
          detections(M, Ds), R).
py_flush(M, R) :-
    reply(( engine_flush(M), engine_drain(M, Ds) ), detections(M, Ds), R).

%!  py_export_state(+Engine, -Reply) is det.
%!  py_import_state(+Engine, +StateText, -Reply) is det.
%
%   The engine's dynamic state as text (engine_export_state/2): Reply is
%   that text itself (it starts with `epsparql_state(`), or the usual
%   {"error": ...} JSON.  Importing replaces the state by StateText, read
%   as data (engine_import_state/2); Reply is {"ok":true} or an error
%   whose "kind" is `invalid_engine_state` when the text was rejected (the
%   engine is then unchanged).
py_export_state(M, R) :-
    catch(engine_export_state(M, R0), E, true),
    (   var(E) -> R = R0 ; reply(throw(E), ok, R) ).
py_import_state(M, Text, R) :-
    reply(engine_import_state(M, Text), ok, R).

%!  py_set_option(+Engine, +Key, +ValueText, -Reply) is det.
py_set_option(M, K, VText, R) :-
    reply(( term_string(V, VText), engine_set_option(M, K, V) ), ok, R).

%!  py_background(+Engine, +Op, +TriplesText, -Reply) is det.
%
%   Op is add, remove, clear or mode (TriplesText then the mode name).
%   TriplesText is the text of a list of t(S, P, O, Graph) terms.
py_background(M, add, Text, R) :- !,
    reply(( term_string(Ts, Text), sparql_background:bg_add(M, Ts), sparql_background:bg_count(M, N) ),
          json(stats([count-N])), R).
py_background(M, remove, Text, R) :- !,
    reply(( term_string(Ts, Text), sparql_background:bg_remove(M, Ts), sparql_background:bg_count(M, N) ),
          json(stats([count-N])), R).
py_background(M, clear, _, R) :- !,
    reply(sparql_background:bg_clear(M), ok, R).
py_background(M, mode, Mode, R) :-
    reply(( atom_string(A, Mode), sparql_background:bg_set_mode(M, A) ), ok, R).

%!  py_goals(+Engine, -Reply) is det.
%
%   Every stored goal of every step (for tracing small runs), as JSON:
%   [{"store": Name, "node": Id, "goal": [Args...]}, ...].
py_goals(M, R) :-
    reply(( findall(g(N, Id, Args),
                    ( engine_store(M, N/A, _, Id),
                      functor(H, N, A),
                      catch(M:H, _, fail),
                      H =.. [_|Args] ),
                    Gs) ),
          goals(Gs), R).

%!  py_justify(+Engine, +Name, +Arity, +IntervalText, -Reply) is det.
%
%   Why the engine detected events Name/Arity over the interval
%   IntervalText (the text of [T1, T2]): the justification of each such
%   detection recorded (engine option justify; core_justify:justify_data/4),
%   as a JSON array of terms, e.g. [detection(Event, [T1,T2], RuleText,
%   Why)].  Times compare as numbers (1 matches 1.0).
py_justify(M, Name, ArityText, IText, R) :-
    reply(( must_be_engine(M),
            ( integer(ArityText) -> Arity = ArityText ; atom_number(ArityText, Arity) ),
            term_string([T1, T2], IText),
            number(T1), number(T2),
            functor(E, Name, Arity),
            findall(J, ( core_justify:justify_data(M, E, [S, En], J),
                         S =:= T1, En =:= T2 ),
                    Js) ),
          terms(Js), R).

%!  py_rule_graph(+Engine, -Reply) is det.
%
%   The binarised rule graph (core_compile:graph_node/2, graph_rule/2)
%   and the goal count of each step's stores, as JSON:
%
%     {"nodes": [{"id", "pattern", "term", "vars", "window", "policy",
%                 "children", "origins"}],
%      "rules":  [{"head", "term", "node"}],
%      "stores": [{"name", "node", "side", "args", "window", "goals"}]}
%
%   "pattern" and "head" are the terms as text (variables A, B, ...,
%   singletons _).  "term" is the same term as data: a variable is
%   {"v": I}, I its place among the node's "vars" variables (the
%   arguments of its occurrence predicate, then the interval); a
%   compound is {"f": Name, "a": Args}, wrapped in {"node": Child,
%   "vars": Places, "term": ...} where it is a child node's pattern
%   (Places: the places of its variables, term_variables/2 order; its
%   term cut a few levels down, see child_depth/1); other terms as
%   write_json/2 writes them.  A store's "args" are the places of the variables its
%   goals hold before their interval.  A node's "origins" are what the
%   rules that made it say it implements (core_graph:node_origins/3;
%   terms as write_json/2 writes them).
py_rule_graph(M, R) :-
    reply(( findall(N, core_compile:graph_node(M, N), Nodes0),
            sort(1, @<, Nodes0, Nodes),
            findall(Rule, core_compile:graph_rule(M, Rule), Rules),
            findall(s(Name, Id, W, C),
                    ( engine_store(M, Name/A, W, Id),
                      functor(H, Name, A),
                      ( predicate_property(M:H, number_of_clauses(C)) -> true ; C = 0 ) ),
                    Stores),
            with_output_to(string(J), write_graph(M, Nodes, Rules, Stores)) ),
          raw(J), R).

write_graph(M, Nodes, Rules, Stores) :-
    write('{"nodes":['),
    foldl(write_graph_node(M, Nodes), Nodes, "", _),
    write('],"rules":['),
    foldl(write_graph_rule, Rules, "", _),
    write('],"stores":['),
    foldl(write_graph_store(Nodes), Stores, "", _),
    write(']}').

write_graph_node(M, Nodes, node(Id, P, W, Pol, Cs, _), Sep, ",") :-
    term_variables(P, Vs),
    length(Vs, K),
    kids(Cs, Nodes, Kids),
    format('~w{"id":~d,"pattern":', [Sep, Id]), write_term_text(P),
    write(',"term":'), write_graph_root(P, g(Vs, Nodes), Kids),
    format(',"vars":~d,"window":', [K]), write_json(current_output, W),
    write(',"policy":'), write_json(current_output, Pol),
    write(',"children":'), write_json(current_output, Cs),
    core_graph:node_origins(M, Id, Origins),
    write(',"origins":'), write_json(current_output, Origins),
    write('}').

write_graph_rule(rule(H, Id, Vs), Sep, ",") :-
    format('~w{"head":', [Sep]), write_term_text(H),
    write(',"term":'), graph_term(H, g(Vs, []), [], [], _),
    format(',"node":~d}', [Id]).

write_graph_store(Nodes, s(Name, Id, W, C), Sep, ",") :-
    (   memberchk(node(Id, P, _, _, _, Layouts), Nodes),
        memberchk(store(Name, Side, Args), Layouts)
    ->  term_variables(P, Vs),
        maplist(arg_place(Vs), Args, Places)
    ;   Side = '?', Places = []
    ),
    format('~w{"name":', [Sep]), write_json(current_output, Name),
    format(',"node":~d,"side":', [Id]), write_json(current_output, Side),
    write(',"args":'), write_json(current_output, Places),
    write(',"window":'), write_json(current_output, W),
    format(',"goals":~d}', [C]).

%   child_places(+Vs, +CVs, -Places): the place in Vs of each variable of
%   CVs, in linear time (a child of a node with thousands of variables).
child_places(Vs, CVs, Places) :-
    findall(Ps, ( number_places(Vs, 0), maplist(place_value, CVs, Ps) ), [Places]).

%   write_places(+Places): a list of places (integers, unbound: null) as a
%   JSON array, in one write: a deep chain's children write hundreds of
%   thousands of places, and write_json/2 per place took a fifth of the
%   graph's time.
write_places(Places) :-
    maplist(place_text, Places, Texts),
    atomic_list_concat(Texts, ',', A),
    write('['), write(A), write(']').

place_text(P, T) :- ( var(P) -> T = null ; T = P ).

number_places([], _).
number_places([V|Vs], I) :-
    V = '$place'(I),
    I1 is I + 1,
    number_places(Vs, I1).

place_value(V, P) :-
    (   nonvar(V), V = '$place'(P0) -> P = P0 ; true ).     % unbound: null

arg_place(Vs, V, I) :-
    (   var_place(V, Vs, 0, I0) -> I = I0 ; true ).      % unbound: null

%   A term as text, as the Prolog toplevel prints it (A, B, ... and _).
%   Deep terms are cut (max_depth, as the graph's terms are): a node's
%   pattern holds its whole subgraph, and a chain of thousands of steps
%   would otherwise print its length squared.
write_term_text(T) :-
    copy_term(T, T1),
    numbervars(T1, 0, _, [singletons(true)]),
    graph_depth(D),
    with_output_to(string(S), write_term(T1, [portray(true), numbervars(true), quoted(true),
                                              max_depth(D)])),
    json:json_write_string(current_output, S).

%   graph_term(+Term, +G, +AllKids, +Kids0, -Kids): write Term, G being
%   g(Vars, Nodes): the node's variables and the graph's nodes.  AllKids
%   are the children (Id-Pattern) of the node whose pattern Term is part
%   of, Kids0 those no sub-term has been matched with yet (operands are
%   compiled in order, so two variant operands with other windows are
%   told apart by taking the first child not matched yet).  A matched
%   sub-term is written inside {"node": Id, "term": ...}, and its own
%   sub-terms are matched with that child's children, and so on down.
write_graph_root(P, G, Kids) :-
    compound(P), \+ is_list(P), !,
    compound_name_arguments(P, F, As),
    write('{"f":'), json:json_write_string(current_output, F),
    write(',"a":['), graph_args(As, G, Kids, Kids, _, "", 1), write(']}').
write_graph_root(P, G, _) :-
    graph_term(P, G, [], [], _).

%   Terms nested deeper than graph_depth/1 (a condition over a chain of
%   thousands of BINDs) are cut there, written as the atom '...': the
%   graph is for reading, and JSON readers (Python's) refuse deep nesting.
graph_depth(100).
%   A child node's pattern inside its parent's is written this many levels
%   deep, with its variables ("vars", their places in the parent): the
%   child's own node has the whole of it, and a chain of thousands of steps
%   would otherwise write its length squared.
child_depth(6).

graph_term(X, G, All, K0, K) :-
    graph_term(X, G, All, K0, K, 0).

graph_term(X, g(Vs, _), _, K, K, _) :- var(X), !,
    (   var_place(X, Vs, 0, I)
    ->  format('{"v":~d}', [I])
    ;   write('{"v":null}')                 % a head variable the body does not bind
    ).
graph_term(X, _, _, K, K, D) :- compound(X), graph_depth(Max), D >= Max, !,
    write('"..."').
graph_term(X, G, All, K0, K, D) :- is_list(X), !,
    D1 is D + 1,
    write('['), graph_args(X, G, All, K0, K, "", D1), write(']').
graph_term(X, G, All, K0, K, D) :- compound(X), !,
    compound_name_arguments(X, F, As),
    D1 is D + 1,
    (   child_of(X, All, K0, C, K)
    ->  G = g(Vs, Nodes),
        (   memberchk(node(C, _, _, _, Cs, _), Nodes) -> kids(Cs, Nodes, Inner) ; Inner = [] ),
        term_variables(X, CVs),
        child_places(Vs, CVs, Places),
        format('{"node":~d,"vars":', [C]), write_places(Places),
        write(',"term":{"f":'), json:json_write_string(current_output, F),
        graph_depth(Max), child_depth(CD),
        Dc is max(D1, Max - CD),            % the child's own node has the rest
        write(',"a":['), graph_args(As, G, Inner, Inner, _, "", Dc), write(']}}')
    ;   write('{"f":'), json:json_write_string(current_output, F),
        write(',"a":['), graph_args(As, G, All, K0, K, "", D1), write(']}')
    ).
graph_term(X, _, _, K, K, _) :-
    write_json(current_output, X).

graph_args([], _, _, K, K, _, _).
graph_args([A|As], G, All, K0, K, Sep, D) :-
    write(Sep),
    graph_term(A, G, All, K0, K1, D),
    graph_args(As, G, All, K1, K, ",", D).

child_of(X, All, K0, C, K) :-
    (   select(C-PC, K0, K1), same_functor(X, PC), X =@= PC
    ->  K = K1
    ;   member(C-PC, All), same_functor(X, PC), X =@= PC
    ->  K = K0
    ).

%   A variant has the same name and arity: checked first, as most sub-terms
%   tried are not a child.
same_functor(X, Y) :-
    compound(Y),
    compound_name_arity(X, F, A),
    compound_name_arity(Y, F, A).

%   kids(+Cs, +Nodes, -Kids): Id-Pattern of each child, the patterns those of
%   Nodes themselves, not copies (findall/3 copied a whole subgraph per child;
%   nothing binds their variables: child_places/3 numbers them in findall/3).
kids([], _, []).
kids([C|Cs], Nodes, Kids) :-
    (   memberchk(node(C, PC, _, _, _, _), Nodes)
    ->  Kids = [C-PC|Kids1]
    ;   Kids = Kids1
    ),
    kids(Cs, Nodes, Kids1).

var_place(V, [W|Ws], I0, I) :-
    (   V == W -> I = I0 ; I1 is I0 + 1, var_place(V, Ws, I1, I) ).

py_stats(M, R) :-
    reply(( engine_stats(M, S), dict_pairs(S, _, Pairs) ), json(stats(Pairs)), R).

		 /*******************************
		 *            JSON              *
		 *******************************/

json_value(stats(Pairs)) :- !,
    write('{'),
    foldl(write_pair, Pairs, "", _),
    write('}').

write_pair(K-V, Sep, ",") :-
    write(Sep), json:json_write_string(current_output, K), write(':'),
    write_json(current_output, V).

write_detections([]).
write_detections([D|Ds]) :-
    write_detection(current_output, D),
    (   Ds == [] -> true ; write(','), write_detections(Ds) ).

write_detection(S, detected(E, [T1, T2])) :-
    put_char(S, '['), write_json(S, E), put_char(S, ','),
    write_json(S, T1), put_char(S, ','), write_json(S, T2), put_char(S, ']').

%   Rule errors (engine_errors/2, sparql_function_errors/1) as JSON:
%   {"message": Prolog's message, "kind": the error's name, "error": the
%   error term (its formal part for error(Formal, Context)), "context":
%   what triggered it, "node": the step it was raised in or null,
%   "rules": [{"name": HeadName, "head": HeadText}]}.
write_errors([]).
write_errors([rule_error(E, Ctx, Node, Heads)|Es]) :-
    message_text(E, Text),
    error_kind(E, Kind, Formal),
    write('{"message":'), json:json_write_string(current_output, Text),
    write(',"kind":'), json:json_write_string(current_output, Kind),
    write(',"error":'), write_json(current_output, Formal),
    write(',"context":'), write_json(current_output, Ctx),
    write(',"node":'), ( integer(Node) -> write(Node) ; write(null) ),
    write(',"rules":['), foldl(write_rule_ref, Heads, "", _), write(']}'),
    (   Es == [] -> true ; write(','), write_errors(Es) ).

write_rule_ref(H, Sep, ",") :-
    (   callable(H) -> functor(H, Name, _) ; Name = '?' ),
    format('~w{"name":', [Sep]), json:json_write_string(current_output, Name),
    write(',"head":'), write_term_text(H), write('}').

%   error_kind(+Error, -Kind, -Formal): the name of an error
%   (`type_error`, `existence_error`, `event_loop`, ...; `exception` for
%   a ball that is not error(Formal, Context)) and the term that says it.
error_kind(E, Kind, Formal) :-
    (   nonvar(E), E = error(F, _), nonvar(F)
    ->  Formal = F,
        (   callable(F) -> functor(F, Kind, _) ; Kind = exception )
    ;   Formal = E, Kind = exception
    ).

