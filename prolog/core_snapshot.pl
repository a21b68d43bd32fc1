/*  State snapshots of an engine: its dynamic state out as text, and in.

    The dynamic state of an engine is what changes while events are
    pushed: the goals of every store (in clause order: policies and
    count windows depend on it), the clock and counters (ep_state/6),
    the answers waiting for an instant to close (ep_pend/3), the alarms
    not fired yet (ep_timer/5), the dedup set of the open instant, and
    the bookkeeping of the lazy garbage collection (engine_swept/4).
    Rules, options, helper predicates and background knowledge are not
    state; neither are detections and errors not yet drained (they are
    output: export after draining).  A snapshot carries the fingerprint
    of the rule layout it was taken with, so that it is restored only
    into an engine with the same rules.

    engine_export_state/2 and engine_import_state/2 are part of the
    executor's API (epsparql_core.pl exports them); the Python bridge's
    py_export_state/2 and py_import_state/3 call them.
*/
:- module(core_snapshot,
          [ engine_export_state/2,      % +Module, -State
            engine_import_state/2       % +Module, +State
          ]).
:- use_module(library(lists)).
:- use_module(library(apply)).
:- use_module(library(error)).
:- use_module(library(nb_set)).
:- use_module(library(sha)).
:- use_module(core_state).
:- use_module(core_graph, [ep_node/3, ep_edge/3]).
:- use_module(core_errors, [message_text/2]).
:- use_module(core_justify, [alarm_info/1]).

%   The exported text is a sequence of terms, each written with
%   write_canonical/2 and a full stop, module-free:
%
%       epsparql_state(1, Fingerprint).      header: version, rule layout
%       s(Now, Events, SinceGC, LastGC, Late, Stamp).   ep_state/6
%       w(Store, LastSweep, Sweeps).         engine_swept/4
%       ep_g<N><side>(Args...).              a stored goal
%       p(End, NodeId, ep_c<N>(Args...)).    ep_pend/3
%       t(Due, Seq, Event, Start, Why).      ep_timer/5: an alarm not fired yet
%       o(Event, T1, T2).                    dedup set of the open instant

%!  engine_export_state(+Module, -State:string) is det.
%
%   State is the text of the dynamic state of the engine in Module (see
%   above), to be given to engine_import_state/2 of an engine with the
%   same rules, in this or another process.  Raises a domain_error if a
%   stored goal holds a term that cannot be written and read back (a
%   blob such as a stream or a clause reference; cyclic terms cannot be
%   stored in the first place).
engine_export_state(M, State) :-
    must_be_engine(M),
    engine_fingerprint(M, FP),
    setup_call_cleanup(
        new_memory_file(MF),
        (   setup_call_cleanup(
                open_memory_file(MF, write, Out, [encoding(utf8)]),
                write_state(Out, M, FP),
                close(Out)),
            memory_file_to_string(MF, State, utf8)
        ),
        free_memory_file(MF)),
    (   sub_atom_icasechk(State, _, '>(0x')
    ->  % a blob is written <type>(0x...); elsewhere this can only be in
        % quoted text: look at the terms themselves (rare, slower)
        forall(state_item(M, T), must_be_plain(T))
    ;   true
    ).

%   (A memory file with an explicit stream is about 1.5 times faster
%   than with_output_to/2 here.)
write_state(Out, M, FP) :-
    state_out(Out, epsparql_state(1, FP)),
    M:ep_state(Now, N, Since, Last, Late, Stamp),
    state_out(Out, s(Now, N, Since, Last, Late, Stamp)),
    forall(state_item(M, T), state_out(Out, T)).

%   The items after the clock, in the order they are written and imported.
state_item(M, w(Name, T, K)) :-
    engine_swept(M, Name, T, K).
state_item(M, H) :-
    engine_store(M, Name/A, _, _),
    functor(H, Name, A),
    clause(M:H, true).
state_item(M, p(T, Id, G)) :-
    clause(M:ep_pend(T, Id, G0), true),
    strip_module(G0, _, G).
state_item(M, t(D, S, E, T1, Why)) :-
    clause(M:ep_timer(D, S, E, T1, Why), true).
state_item(M, o(E, T1, T2)) :-
    seen_key(M, Key),
    nb_current(Key, Set),
    gen_nb_set(Set, occ(E, T1, T2)).

%   write_canonical/2: quoted, no operators, variables named A, B, ... and
%   _ for singletons (so equal states give equal texts), '$VAR' terms of
%   the data written as such.  Every item is a compound term: it ends in
%   `)`, so ".\n" is a safe full stop.
state_out(Out, T) :-
    write_canonical(Out, T),
    write(Out, '.\n').

must_be_plain(T) :-
    (   plain_data(T) -> true ; domain_error(exportable_term, T) ).

%   Terms that read back as themselves: no blobs but atoms (streams,
%   clause references, ... are written as <type>(0x...)).
plain_data(T) :-
    (   compound(T)
    ->  compound_name_arity(T, _, A),
        plain_args(A, T)
    ;   blob(T, Type)
    ->  memberchk(Type, [text, ucs_text, reserved_symbol])
    ;   true
    ).

plain_args(I, T) :-
    (   I =:= 0
    ->  true
    ;   arg(I, T, X),
        plain_data(X),
        I1 is I - 1,
        plain_args(I1, T)
    ).

%!  engine_import_state(+Module, +State) is det.
%
%   Replace the dynamic state of the engine in Module by State, the text
%   (string, atom or codes) that engine_export_state/2 gave for an engine
%   with the same rules (added in the same order; the module may differ).
%   Detections and errors not yet drained are discarded, as by
%   engine_clear_state/1.
%
%   State is data, never code: it is read with read_term/3 (no operators
%   needed, strings as strings) and every term must be a fact of the
%   engine's own goal stores, its clock, its pending answers (whose goal
%   must be one of the engine's closing steps) or its dedup set.  Anything
%   else -- a clause with a body, an unknown predicate, a malformed or
%   truncated text, the state of an engine with other rules -- raises
%   error(invalid_engine_state(Why), _) and leaves the engine as it was.
engine_import_state(M, State) :-
    must_be_engine(M),
    state_text(State, Text),
    read_state(Text, Terms),
    (   Terms = [Header|Items] -> true ; state_error('empty state') ),
    check_state_header(M, Header),
    store_table(M, Stores),
    close_table(M, Closes),
    classify_items(Items, Stores, Closes, Clock, Swept, Goals, Pend, Seen, Timers),
    (   Clock = [s(Now, N, Since, Last, Late, Stamp)] -> true
    ;   Clock == [] -> state_error('no clock term s/6')
    ;   state_error('more than one clock term s/6')
    ),
    % commit: nothing below can fail on validated terms
    engine_clear_state(M),
    retractall(M:ep_state(_, _, _, _, _, _)),
    assertz(M:ep_state(Now, N, Since, Last, Late, Stamp)),
    forall(member(w(Name, T, K), Swept), assertz(engine_swept(M, Name, T, K))),
    forall(member(G, Goals), assertz(M:G)),
    forall(member(p(T, Id, G), Pend), assertz(M:ep_pend(T, Id, G))),
    forall(member(t(D, S, E, T1, Why), Timers), assertz(M:ep_timer(D, S, E, T1, Why))),
    (   Seen == []
    ->  true
    ;   seen_key(M, Key),
        empty_nb_set(Set0),
        nb_setval(Key, Set0),
        nb_getval(Key, Set),
        forall(member(o(E, T1, T2), Seen), add_nb_set(occ(E, T1, T2), Set))
    ).

state_text(S, Text) :-
    (   string(S) -> Text = S
    ;   atom(S) -> atom_string(S, Text)
    ;   is_list(S), catch(string_codes(Text, S), _, fail) -> true
    ;   state_error('the state must be a string, an atom or a list of codes')
    ).

read_state(Text, Terms) :-
    catch(setup_call_cleanup(
              open_string(Text, S),
              read_state_terms(S, Terms),
              close(S)),
          E,
          (   E = error(syntax_error(What), Ctx)
          ->  syntax_where(Ctx, Where),
              format(atom(Why), 'malformed text: syntax error (~w)~w', [What, Where]),
              state_error(Why)
          ;   E = error(invalid_engine_state(_), _)
          ->  throw(E)
          ;   message_text(E, Msg),
              format(atom(Why), 'unreadable text: ~w', [Msg]),
              state_error(Why)
          )).

syntax_where(Ctx, Where) :-
    (   nonvar(Ctx), Ctx = string(_, Pos), integer(Pos)
    ->  format(atom(Where), ' at character ~d', [Pos])
    ;   nonvar(Ctx), Ctx = stream(_, Line, LinePos, _)
    ->  format(atom(Where), ' at line ~w, column ~w', [Line, LinePos])
    ;   Where = ''
    ).

read_state_terms(S, Terms) :-
    read_term(S, T, [syntax_errors(error), double_quotes(string), back_quotes(codes),
                     module(epsparql_core)]),
    (   T == end_of_file
    ->  (   at_end_of_stream(S)
        ->  Terms = []
        ;   state_error('text after an end_of_file item')
        )
    ;   Terms = [T|Rest],
        read_state_terms(S, Rest)
    ).

check_state_header(M, H) :-
    (   nonvar(H), H = epsparql_state(V, FP)
    ->  true
    ;   state_error('it does not start with an epsparql_state/2 header')
    ),
    (   V == 1 -> true
    ;   format(atom(Why), 'unsupported state version ~q', [V]), state_error(Why)
    ),
    engine_fingerprint(M, Own),
    (   FP == Own
    ->  true
    ;   state_error('it was exported from an engine with other rules (rule fingerprints differ): register the same queries/rules, in the same order, before restoring')
    ).

%   The engine's stores (Name/Arity) and closing steps (ep_c<N>/Arity - N).
store_table(M, Stores) :-
    findall(N/A-W, engine_store(M, N/A, W, _), Stores).

close_table(M, Closes) :-
    findall(N/A-Id,
            ( engine_rule_pred(M, N/A),
              atom_concat(ep_c, Digits, N),
              atom_number(Digits, Id), integer(Id) ),
            Closes).

classify_items([], _, _, [], [], [], [], [], []).
classify_items([T|Ts], Stores, Closes, Clock, Swept, Goals, Pend, Seen, Timers) :-
    classify_item(T, Stores, Closes, Kind),
    (   Kind == clock -> Clock = [T|Clock1] ; Clock = Clock1 ),
    (   Kind == swept -> Swept = [T|Swept1] ; Swept = Swept1 ),
    (   Kind == goal  -> Goals = [T|Goals1] ; Goals = Goals1 ),
    (   Kind == pend  -> Pend  = [T|Pend1]  ; Pend  = Pend1 ),
    (   Kind == seen  -> Seen  = [T|Seen1]  ; Seen  = Seen1 ),
    (   Kind == timer -> Timers = [T|Timers1] ; Timers = Timers1 ),
    classify_items(Ts, Stores, Closes, Clock1, Swept1, Goals1, Pend1, Seen1, Timers1).

classify_item(T, _, _, _) :-
    var(T), !,
    state_error('a variable where a fact was expected').
classify_item(T, Stores, _, goal) :-
    compound(T),
    compound_name_arity(T, N, A),
    memberchk(N/A-_, Stores), !.
classify_item(s(Now, N, Since, Last, Late, Stamp), _, _, clock) :-
    state_time(Now), nonneg_int(N), nonneg_int(Since), state_time(Last),
    nonneg_int(Late), state_time(Stamp), !.
classify_item(w(Name, T, K), Stores, _, swept) :-
    atom(Name), memberchk(Name/_-W, Stores), W \== inf,
    state_time(T), nonneg_int(K), !.
classify_item(p(T, Id, G), _, Closes, pend) :-
    state_time(T), integer(Id),
    compound(G), compound_name_arity(G, N, A),
    memberchk(N/A-Id, Closes), !.
classify_item(o(E, T1, T2), _, _, seen) :-
    callable(E), state_time(T1), state_time(T2), !.
classify_item(t(D, S, E, T1, Why), _, _, timer) :-
    state_time(D), integer(S), callable(E), state_time(T1),
    alarm_info(Why), !.
classify_item(T, _, _, _) :-
    (   T = (_ :- _)
    ->  Why0 = 'a clause with a body'
    ;   callable(T), functor(T, N, A)
    ->  format(atom(Why0), 'a term that is no fact of this engine''s state (~q/~d)', [N, A])
    ;   Why0 = 'a term that is no fact of this engine''s state'
    ),
    short_text(T, Short),
    format(atom(Why), '~w: ~w', [Why0, Short]),
    state_error(Why).

state_time(T) :- number(T).
nonneg_int(N) :- integer(N), N >= 0.

short_text(T, Short) :-
    format(string(S), '~W', [T, [quoted(true), max_depth(6), ignore_ops(true)]]),
    (   string_length(S, L), L > 120
    ->  sub_string(S, 0, 120, _, S1), string_concat(S1, "...", Short)
    ;   Short = S
    ).

state_error(Why) :-
    throw(error(invalid_engine_state(Why), _)).

:- multifile prolog:error_message//1.
prolog:error_message(invalid_engine_state(Why)) -->
    [ 'Invalid engine state: ~w'-[Why] ].

%   engine_fingerprint(+Module, -Hex:atom) is det.
%
%   SHA-1 of the engine's rule layout: its rules (in order), the nodes of
%   the binarised rule graph (pattern, window, policy), their edges, the
%   goal stores and their windows.  The module name is replaced by a
%   placeholder, so engines in different modules with the same rules
%   added in the same order have the same fingerprint.  Cached until the
%   rules change.
engine_fingerprint(M, FP) :-
    (   engine_fingerprint_cache(M, FP0)
    ->  FP = FP0
    ;   layout_term(M, L0),
        replace_atom(L0, M, '$engine', L),
        copy_term(L, L1),
        numbervars(L1, 0, _, [singletons(true)]),
        with_output_to(string(Text),
                       write_term(L1, [quoted(true), ignore_ops(true),
                                       numbervars(false)])),
        sha_hash(Text, Hash, [algorithm(sha1), encoding(utf8)]),
        hash_atom(Hash, FP),
        assertz(engine_fingerprint_cache(M, FP))
    ).

layout_term(M, layout(Rules, Nodes, Edges, Stores, Newest)) :-
    findall(R, engine_rule(M, R), Rules),
    findall(Id-(P-W-Pol), ( ep_node(M, Key, Id), Key = P-W-Pol-_ ), Nodes0),
    msort(Nodes0, Nodes),
    findall(Parent-Child, ep_edge(M, Parent, Child), Edges),
    findall(S-W-Id, engine_store(M, S, W, Id), Stores0),
    msort(Stores0, Stores),
    findall(S, engine_store_newest_first(M, S), Newest0),
    msort(Newest0, Newest).

replace_atom(T, A, B, T2) :-
    (   T == A
    ->  T2 = B
    ;   compound(T)
    ->  compound_name_arguments(T, F0, Args0),
        (   F0 == A -> F = B ; F = F0 ),
        maplist(replace_atom_in(A, B), Args0, Args),
        compound_name_arguments(T2, F, Args)
    ;   T2 = T
    ).

%   Not a yall lambda: under library(apply_macros), which janus loads with
%   global scope, a lambda's free variables (A, B) would become local.
replace_atom_in(A, B, X, Y) :- replace_atom(X, A, B, Y).
