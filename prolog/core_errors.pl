/*  Errors raised inside rules: where they were raised, which rules they
    concern, how they are kept.

    Rule code (a where condition, a helper it calls, a do-action, a hook,
    the arithmetic of a step) runs under the executor's guards
    (epsparql_core.pl), which record every exception as an error of the
    engine instead of letting it out: record_error/3,4 keeps it in the
    engine module (ep_err/4) with what triggered it, the step it was
    raised in and the heads of the rules concerned, until the caller
    takes them (engine_errors/2).  The step is found without cost on the
    hot path: an exception hook notes the innermost step an exception
    leaves (only when one is raised), and for events raised inside the
    engine raise_origin/2 looks at the Prolog stack.

    Steps are the compiled predicates ep_n<Id> and ep_c<Id> of an engine
    module (core_compile.pl); the rule graph (core_graph.pl) says which
    rules hold them.
*/
:- module(core_errors,
          [ record_error/3,             % +Module, +Error, +Context
            record_error/4,             % +Module, +Error, +Context, +Where
            raise_origin/2,             % +Module, -Origin
            rule_heads_of/3,            % +Module, +Event, -Heads
            message_text/2              % +Error, -Text
          ]).
:- use_module(library(lists)).
:- use_module(core_state, [engine/1, engine_rule/2, engine_rule_key/3, rule_head/2]).
:- use_module(core_graph, [ep_owner/3, ep_rule_root/4, node_rules/3]).

%!  raise_origin(+Module, -Origin) is det.
%
%   The rules running when an event was raised inside the engine,
%   rules(Heads) or unknown: the rule of the do-action or the head of the
%   hook running (both say so in a global variable while they run), or
%   else found on the Prolog stack (so that the hot path pays nothing):
%   the innermost frame of a step of Module (ep_n<Id>/N) tells the node,
%   the rule graph the rules.
raise_origin(M, Origin) :-
    prolog_current_frame(F),
    (   nb_current('$epsparql_raising', Raising), Raising \== none
    ->  (   Raising = key(Key), engine_rule_key(M, Key, R)
        ->  rule_head(R, H),
            Origin = rules([H])
        ;   Raising = head(H)
        ->  rule_heads_of(M, H, Heads),
            Origin = rules(Heads)
        ;   Origin = unknown
        )
    ;   stack_node(F, M, Id)
    ->  node_rules(M, Id, Heads),
        Origin = rules(Heads)
    ;   Origin = unknown
    ).

stack_node(F, M, Id) :-
    (   frame_step(F, M, Id0)
    ->  Id = Id0
    ;   prolog_frame_attribute(F, parent, P),
        stack_node(P, M, Id)
    ).

%   frame_step(+Frame, -M, -Id): Frame runs step Id of engine M.  A frame
%   of ep_n<Child> runs a continuation clause of Child, which is a step
%   of the parent it calls, or the clause that emits a rule's head, a step
%   of the rule's root (which is Child unless the root is a within step
%   compiled as its child, core_compile.pl's can_alias/3); a frame of ep_c<Id>
%   closes an instant of Id.
frame_step(F, M, Id) :-
    prolog_frame_attribute(F, predicate_indicator, M:Name/_),
    atom(M), engine(M),
    step_name(Name, Kind, Own),
    (   Kind == n,
        prolog_frame_attribute(F, clause, Ref),
        clause(_, Body, Ref),
        (   called_node(Body, Parent)
        ->  Id = Parent
        ;   ep_owner(M, key(Key), Ref),
            ep_rule_root(M, Key, Root, _)
        ->  Id = Root
        )
    ->  true
    ;   Id = Own
    ).

%   step_name(+Name, -Kind, -Id): Name is ep_n<Id> (Kind n) or ep_c<Id> (c),
%   a step predicate of the compiler (core_compile.pl).
step_name(Name, Kind, Id) :-
    (   atom_concat(ep_n, Digits, Name) -> Kind = n
    ;   atom_concat(ep_c, Digits, Name) -> Kind = c
    ),
    atom_number(Digits, Id),
    integer(Id).

%   The step a continuation clause feeds (the ep_n<Id> goal in its body).
called_node(Body, Id) :-
    sub_term(G, Body),
    callable(G),
    functor(G, Name, _),
    atom_concat(ep_n, Digits, Name),
    atom_number(Digits, Id),
    integer(Id), !.

:- multifile prolog:error_message//1.
prolog:error_message(event_loop(Max, Origin)) -->
    [ 'More than ~w events raised inside the engine while processing one event (max_queued); '-[Max] ],
    origin_text(Origin),
    [ ': the rest of the queue is dropped.  If the loop is intended, raise the limit with set_event_option(max_queued, N) (Python: CoreEngine.set_option("max_queued", N))' ].
prolog:error_message(derivation_depth(Max, Heads)) -->
    [ 'Derived events nested deeper than max_depth (~w) '-[Max] ],
    origin_text(rules(Heads)),
    [ ': a rule may derive what it consumes.  If the chain is intended, raise the limit with set_event_option(max_depth, N) (Python: CoreEngine(max_depth=N))' ].

origin_text(rules([H|Hs])) --> !,
    { head_text(H, Text) },
    [ 'by the rule for ~w'-[Text] ],
    more_heads(Hs).
origin_text(_) -->
    [ 'outside any rule' ].

more_heads([]) --> [].
more_heads([H|Hs]) --> { head_text(H, Text) }, [ ' (or the rule for ~w)'-[Text] ], more_heads(Hs).

%!  record_error(+Module, +Error, +Context) is det.
%!  record_error(+Module, +Error, +Context, +Where) is det.
%
%   Keep Error as an error of the engine (ep_err/4), with what triggered
%   it (Context) and where it happened: the step (node id, or none) and
%   the heads of the rules concerned.  Where is node(Id), key(RuleKey) (a
%   rule's do-action), head(H) (the hook of head H), heads(Hs) (rules
%   named by the error itself) or unknown: then the step is the one the
%   exception was raised in (raised_in/4).  The message text is made when
%   the error is reported (message_text/2).  A resource error is not kept
%   but raised again: the engine cannot go on.
record_error(M, Error, Context) :-
    record_error(M, Error, Context, unknown).

record_error(M, Error, Context, Where0) :-
    (   Error = error(resource_error(_), _)
    ->  nb_setval('$epsparql_error_step', none),
        throw(Error)
    ;   true
    ),
    raised_in(M, Error, Where0, Where),
    error_place(M, Where, Node, Heads0),
    (   named_heads(Error, Heads1), Heads1 \== [] -> Heads = Heads1 ; Heads = Heads0 ),
    without_step_context(Error, Error1),
    assertz(M:ep_err(Error1, Context, Node, Heads)).

%   An error whose context names a compiled step predicate (ep_n<Id>/N:
%   inline arithmetic) loses that name: the step is in the record, and
%   the message need not show the engine's internals.
without_step_context(E0, E) :-
    (   subsumes_term(error(_, context(_:_/_, _)), E0),
        E0 = error(F, context(_:Name/_, Msg)),
        atom(Name), step_name(Name, _, _)
    ->  E = error(F, context(_, Msg))
    ;   E = E0
    ).

%   raised_in(+M, +Error, +Where0, -Where): Where0 unless it is unknown;
%   then the step of M the exception hook below saw it raised in, else
%   the step predicate the error's own context names (inline arithmetic
%   in a compiled clause), else unknown.
raised_in(M, Error, Where0, Where) :-
    (   nb_current('$epsparql_error_step', Seen)
    ->  nb_setval('$epsparql_error_step', none)
    ;   Seen = none
    ),
    (   Where0 \== unknown
    ->  Where = Where0
    ;   Seen = step(M, Id, Key), ball_key(Error, Key)
    ->  Where = node(Id)
    ;   subsumes_term(error(_, context(_:_/_, _)), Error),
        Error = error(_, context(M:Name/_, _)),
        atom(Name), step_name(Name, _, Id)
    ->  Where = node(Id)
    ;   Where = unknown
    ).

%   The node and the rule heads of a place (see record_error/4).
error_place(M, node(Id), Id, Heads) :- !,
    node_rules(M, Id, Heads).
error_place(M, key(Key), Node, Heads) :- !,
    (   ep_rule_root(M, Key, Root, H)
    ->  Node = Root, Heads = [H]
    ;   Node = none, Heads = []
    ).
error_place(M, head(H), none, Heads) :- !,
    rule_heads_of(M, H, Heads).
error_place(_, heads(Heads), none, Heads) :- !.
error_place(_, _, none, []).

%   The rules an error names itself (the loop and depth limits).
named_heads(error(event_loop(_, rules(Heads)), _), Heads).
named_heads(error(derivation_depth(_, Heads), _), Heads).

%   The exception hook: when an exception raised inside a step of an
%   engine (rule code: a where condition, a helper it calls, the step's
%   own arithmetic) is about to leave that step, note the innermost such
%   step.  Rule code runs only under the executor's guards
%   (epsparql_core.pl: ep_event/3, run_entry/5, run_close/4,
%   fire_timers/3), whose catch/3 takes every exception, so the note is
%   for the guard that records the error next (raised_in/4 checks that
%   the note is about that error).  An exception caught inside the step
%   itself is not noted.  The hook always fails: the exception is
%   unchanged.  It costs nothing on the hot path: it runs only when an
%   exception is raised.
:- multifile prolog:prolog_exception_hook/5.
:- dynamic prolog:prolog_exception_hook/5.

install_exception_hook :-
    (   clause(prolog:prolog_exception_hook(_, _, _, _, _), core_errors:note_raising_step(_, _, _))
    ->  true
    ;   asserta((prolog:prolog_exception_hook(Ball, _, Frame, Catcher, _) :-
                     core_errors:note_raising_step(Ball, Frame, Catcher)))
    ).
:- initialization(install_exception_hook).

note_raising_step(Ball, Frame, Catcher) :-
    integer(Catcher),
    catch(( step_between(Frame, Catcher, M, Id),
            ball_key(Ball, Key),
            nb_setval('$epsparql_error_step', step(M, Id, Key)) ),
          _, true),
    fail.

%   The innermost frame of a step of an engine at or above Frame and
%   below Stop, the frame that will catch (frame_step/3 says which step a
%   frame runs).
step_between(F, Stop, M, Id) :-
    F \== Stop,
    (   frame_step(F, M, Id)
    ->  true
    ;   prolog_frame_attribute(F, parent, P),
        step_between(P, Stop, M, Id)
    ).

%   What tells one error from another cheaply: the name of its formal
%   part (or of the ball).
ball_key(Ball, Key) :-
    (   compound(Ball), Ball = error(F, _), callable(F) -> functor(F, Key, _)
    ;   callable(Ball) -> functor(Ball, Key, _)
    ;   Key = '?'
    ).

%!  rule_heads_of(+Module, +Event, -Heads:list) is det.
%
%   The heads of the rules that can derive Event.
rule_heads_of(M, E, Heads) :-
    findall(H,
            ( engine_rule(M, R),
              rule_head(R, H),
              \+ H \= E ),
            Heads).

head_text(H, Text) :-
    copy_term(H, H1),
    numbervars(H1, 0, _, [singletons(true)]),
    format(string(Text), '~W', [H1, [quoted(true), numbervars(true), max_depth(8)]]).

%!  message_text(+Error, -Text:string) is det.
%
%   Prolog's own message for Error (as the toplevel would print it), or
%   the error term written out if it has none.
message_text(E, Text) :-
    catch(( phrase('$messages':translate_message(E), Lines),
            with_output_to(string(Text), print_message_lines(current_output, '', Lines)) ),
          _,
          format(string(Text), '~q', [E])).

