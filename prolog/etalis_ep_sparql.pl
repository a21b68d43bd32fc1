/*  ETALIS' EP-SPARQL entry point on epsparql's own EP-SPARQL compiler.

    Load this file where an ETALIS program loads ETALIS'
    src/ep_sparql/ep_sparql.P; it loads etalis.pl too (as ETALIS' does):

        ?- ['prolog/etalis_ep_sparql.pl'].
        ?- ep_sparql_parse('SELECT ?company WHERE { ?company hasStockPrice ?p1 }
                            SEQ { ?company hasStockPrice ?p2 } FILTER (?p1 < ?p2)', Q),
           ep_sparql_compile(Q, Rules, Result),      % Result = select_event(_)
           compile_internal_event_rules(main, Rules),
           event(rdf(company1, hasStockPrice, 1)), event(rdf(company1, hasStockPrice, 2)).
        % stored_event(event(select_event([company1]), [T1, T2]))

    The query is parsed, translated to the algebra and compiled by
    epsparql's EP-SPARQL compiler (Python: epsparql.language,
    epsparql.algebra, epsparql.rules), reached through SWI-Prolog's
    library(janus); its rule runs on the same core engine as the ETALIS
    program.  Around it:

    - ETALIS' events rdf(S, P, O) carry plain Prolog terms; the compiled
      rule matches RDF terms.  A bridge rule turns every rdf/3 event into
      the core's triple/3 event: a name is the IRI of the query's base
      (epsparql's default base, as bare names in queries are), a number
      a typed literal (xsd:integer or xsd:decimal), an atom that is an
      IRI stays one, any other term a literal that reads back as itself.
    - A SELECT query's answers are select_event([V1, ...]) events (the
      projection, values turned back into plain terms), a CONSTRUCT
      query's are rdf(S, P, O) events, fed back as events (Q-closure).
    - ETALIS' extensions are accepted: Prolog goals among a FILTER's
      `&&` conjuncts (a call that is no SPARQL function, `?x is Expr`)
      and DO ( goal && ... ) run in module user, first solution, on the
      plain values, and may bind new variables used in the head or
      template; `{ aggregate(Op, rdf(S, P, O), ?R) }` right after SEQ is
      the core's running aggregate (count, sum, min, max) of that
      pattern since the left side.  These goals are the program's own
      code (as in ETALIS); event data only ever reaches them as
      arguments.

    The internal triple/3 events and the query's own head are not
    stored_event/1 events.
*/
:- module(etalis_ep_sparql,
          [ ep_sparql_parse/2,          % +QueryText, -ParsedQuery
            ep_sparql_parse/3,          % +QueryText, -ParsedQuery, -Within
            ep_sparql_compile/3,        % +ParsedQuery, -CoreRules, -ResultEvent
            ep_sparql_compile/4,        % +ParsedQuery, -CoreRules, -ResultEvent, +Within
            rdf_value_term/2,           % ?Value, ?RdfTerm
            ext_goals/3                 % +Known, +New, :Goal (compiled rules only)
          ]).
:- reexport(etalis).
:- use_module(library(janus)).
:- use_module(library(lists)).
:- use_module(library(apply)).
:- use_module(library(error)).
:- use_module(sparql_eval, []).         % the compiled rules call it
:- use_module(core_compile, [strip_origins/2]).  % epsparql's rules carry origins
:- use_module(etalis_runtime, [hidden_event/1]).

:- dynamic
    bridged/0,                  % the rdf/3 -> triple/3 bridge rule is in the engine
    python_ready/0.             % the Python path is set up

:- op(1200, xfx, <-).

		 /*******************************
		 *            PYTHON            *
		 *******************************/

%   The repository (for the epsparql package) and its virtual
%   environment's packages (lark, rdflib) on the embedded Python's path;
%   VIRTUAL_ENV, when set, is added by janus itself.
:- prolog_load_context(directory, Dir),
   file_directory_name(Dir, Root),
   retractall(user:etalis_ep_sparql_root(_)),
   assertz(user:etalis_ep_sparql_root(Root)).

ensure_python :-
    python_ready, !.
ensure_python :-
    user:etalis_ep_sparql_root(Root),
    py_add_lib_dir(Root),
    (   getenv('VIRTUAL_ENV', _)
    ->  true
    ;   atom_concat(Root, '/.venv/lib/python*/site-packages', Pattern),
        expand_file_name(Pattern, Dirs),
        forall(( member(D, Dirs), exists_directory(D) ), py_add_lib_dir(D))
    ),
    assertz(python_ready).

%   Compile SPARQL text with epsparql: parse, translate, optimise,
%   compile_query (the steps of epsparql.Engine.register), with no RDFS
%   reasoning (ETALIS has none) and no extension functions.
python_compile(Text, Qid, Head, Vars, Rules) :-
    ensure_python,
    etalis_engine(M),
    py_call('epsparql.language':parse_query(Text), Ast),
    py_call('epsparql.algebra':translate(Ast), Alg),
    py_call(Alg:pattern, P0),
    py_call('epsparql.algebra.passes':optimise(P0), P),
    py_call(dataclasses:replace(Alg, pattern=P), Alg2),
    py_call('epsparql.rdf.codec':encode, Encode, [py_object(true)]),
    py_call(operator:not_, NoFunction, [py_object(true)]),     % not_(IRI) is False
    py_call('epsparql.rules':compile_query(Alg2, Qid, encode=Encode,
                                           is_function=NoFunction, module=M,
                                           reasoning=none), C),
    py_call(C:head, Head0), atom_string(Head, Head0),
    py_call(C:variables, Vars0), maplist([S, A]>>atom_string(A, S), Vars0, Vars),
    py_call(C:rules, Rules0), atom_string(Rules0, Rules).

sparql_builtin(Name) :-
    ensure_python,
    (   nb_current(etalis_ep_sparql_builtins, Names)
    ->  true
    ;   py_call('epsparql.language.parser':'BUILTIN_ARITY', Dict),
        dict_keys(Dict, Names0),
        append(Names0, ['ISURI', 'URI'], Names),
        nb_setval(etalis_ep_sparql_builtins, Names)
    ),
    upcase_atom(Name, Up),
    memberchk(Up, Names).

dict_keys(Dict, Keys) :-
    (   is_dict(Dict) -> dict_pairs(Dict, _, Pairs), pairs_keys(Pairs, Keys)
    ;   Keys = []
    ).

		 /*******************************
		 *            PARSING           *
		 *******************************/

%!  ep_sparql_parse(+Query, -Parsed) is det.
%
%   Split an ETALIS EP-SPARQL query (text: atom, string or codes) into
%   the SPARQL epsparql compiles and ETALIS' extensions:
%   ep_sparql(Form, Projection, Template, Sparql, Goals, Aggregates,
%   Within).  Syntax errors are epsparql's (with line and column).
%   ETALIS' `WITHIN Seconds` at the end of a query is a window on the
%   whole match (whole seconds on datime stamps).
ep_sparql_parse(Query, Parsed) :-
    ep_sparql_parse(Query, Parsed, _).

%!  ep_sparql_parse(+Query, -Parsed, -Within) is det.
%
%   Also gives the query's WITHIN window (none without one).
ep_sparql_parse(Query, ep_sparql(Form, Proj, Template, Sparql, Goals, Aggs, Win), Win) :-
    text_to_string(Query, Text),
    string_codes(Text, Codes),
    tokens(Codes, Tokens00),
    take_within(Tokens00, Tokens0, Win),
    query_form(Tokens0, Form),
    take_do(Tokens0, Tokens1, DoGoals),
    take_filter_goals(Tokens1, Tokens2, FilterGoals),
    take_aggregates(Tokens2, 1, Tokens3, Aggs),
    append(FilterGoals, DoGoals, Goals),
    projection(Form, Tokens3, Proj),
    template(Form, Tokens3, Template),
    tokens_text(Tokens3, Sparql).

%   Tokens: ws(Codes), var(Name), word(Codes), str(Codes) (quoted, with
%   its quotes), iri(Codes) (with < >), p(Code) (punctuation).  Enough to
%   find keywords, groups and conjuncts outside strings and IRIs, and to
%   give the text back unchanged.
tokens([], []).
tokens([C|Cs], [T|Ts]) :-
    (   code_type(C, space)
    ->  span(space, Cs, S, Rest), T = ws([C|S])
    ;   ( C == 0'? ; C == 0'$ ), Cs = [D|_], code_type(D, csym)
    ->  span(csym, Cs, S, Rest), atom_codes(N, S), T = var(N)
    ;   ( code_type(C, csym) )
    ->  span(word, Cs, S, Rest), T = word([C|S])
    ;   ( C == 0'" ; C == 0'' )
    ->  string_rest(Cs, C, S, Rest), T = str([C|S])
    ;   C == 0'<, iri_rest(Cs, S, Rest)
    ->  T = iri([0'<|S])
    ;   Rest = Cs, T = p(C)
    ),
    tokens(Rest, Ts).

span(Type, [C|Cs], [C|S], Rest) :-
    span_code(Type, C), !,
    span(Type, Cs, S, Rest).
span(_, Rest, [], Rest).

span_code(space, C) :- code_type(C, space).
span_code(csym, C) :- code_type(C, csym).
span_code(word, C) :- ( code_type(C, csym) ; C == 0': ).

string_rest([], _, [], []).
string_rest([0'\\, C|Cs], Q, [0'\\, C|S], Rest) :- !, string_rest(Cs, Q, S, Rest).
string_rest([Q|Cs], Q, [Q], Cs) :- !.
string_rest([C|Cs], Q, [C|S], Rest) :- string_rest(Cs, Q, S, Rest).

%   An IRI: <...> with no space, quote or angle bracket inside (else `<`
%   is a comparison).
iri_rest([0'>|Cs], [0'>], Cs) :- !.
iri_rest([C|Cs], [C|S], Rest) :-
    \+ code_type(C, space),
    \+ memberchk(C, `<"{}|^\``),
    iri_rest(Cs, S, Rest).

tokens_text(Tokens, Text) :-
    phrase(token_codes(Tokens), Codes),
    string_codes(Text, Codes).

token_codes([]) --> [].
token_codes([T|Ts]) --> token_code(T), token_codes(Ts).

token_code(ws(Cs)) --> Cs.
token_code(var(N)) --> { atom_codes(N, Cs) }, [0'?], Cs.
token_code(word(Cs)) --> Cs.
token_code(str(Cs)) --> Cs.
token_code(iri(Cs)) --> Cs.
token_code(p(C)) --> [C].

keyword(word(Cs), K) :-
    atom_codes(A, Cs),
    upcase_atom(A, K).

query_form(Tokens, Form) :-
    (   member(T, Tokens), keyword(T, K), memberchk(K, ['SELECT', 'CONSTRUCT', 'ASK'])
    ->  Form = K
    ;   syntax_error(sparql_query_form)
    ).

%   The tokens of a balanced group opening at the head of Tokens (Open is
%   ( or {), without the brackets, and what follows it.
balanced([p(Open)|Ts], Open, Inner, Rest) :-
    close_of(Open, Close),
    balanced(Ts, Open, Close, 0, Inner, Rest).

balanced([p(Close)|Ts], _, Close, 0, [], Ts) :- !.
balanced([T|Ts], Open, Close, D, [T|In], Rest) :-
    (   T == p(Open) -> D1 is D + 1
    ;   T == p(Close) -> D1 is D - 1
    ;   D1 = D
    ),
    balanced(Ts, Open, Close, D1, In, Rest).

close_of(0'(, 0')).
close_of(0'{, 0'}).

skip_ws([ws(_)|Ts], Rest) :- !, skip_ws(Ts, Rest).
skip_ws(Ts, Ts).

%   WITHIN N at the end (outside groups).
take_within(Tokens, Out, Win) :-
    (   append(Before, [T|After], Tokens),
        keyword(T, 'WITHIN'),
        skip_ws(After, [word(Cs)|Rest]),
        catch(number_codes(N, Cs), _, fail),
        skip_ws(Rest, [])
    ->  Out = Before, Win = N
    ;   Out = Tokens, Win = none
    ).

%   DO ( goals ) after the WHERE clause: ETALIS' extension.
take_do(Tokens, Out, Goals) :-
    (   append(Before, [T|After], Tokens),
        keyword(T, 'DO'),
        skip_ws(After, After1),
        balanced(After1, 0'(, Inner, Rest)
    ->  conjuncts(Inner, Parts),
        maplist(prolog_goal, Parts, Goals),
        append(Before, Rest, Out)
    ;   Out = Tokens, Goals = []
    ).

%   FILTER ( a && b && ... ): the conjuncts that are Prolog goals are
%   taken out; the FILTER keeps the SPARQL ones (or goes).
take_filter_goals([], [], []).
take_filter_goals([T|Ts], Out, Goals) :-
    (   keyword(T, 'FILTER'),
        skip_ws(Ts, Ts1),
        balanced(Ts1, 0'(, Inner, Rest)
    ->  conjuncts(Inner, Parts),
        partition(prolog_conjunct, Parts, PParts, SParts),
        maplist(prolog_goal, PParts, G1),
        (   SParts == []
        ->  Out = Out1
        ;   join_conjuncts(SParts, Joined),
            append([[T, ws(` `), p(0'()], Joined, [p(0'))]], Kept),
            append(Kept, Out1, Out)
        ),
        take_filter_goals(Rest, Out1, G2),
        append(G1, G2, Goals)
    ;   Out = [T|Out1],
        take_filter_goals(Ts, Out1, Goals)
    ).

%   Split on && at depth 0.
conjuncts(Tokens, [Part|Parts]) :-
    conjunct(Tokens, 0, Part, Rest),
    (   Rest == [] -> Parts = [] ; conjuncts(Rest, Parts) ).

conjunct([], _, [], []).
conjunct([p(0'&), p(0'&)|Ts], 0, [], Ts) :- !.
conjunct([T|Ts], D, [T|Part], Rest) :-
    (   T == p(0'() -> D1 is D + 1
    ;   T == p(0')) -> D1 is D - 1
    ;   D1 = D
    ),
    conjunct(Ts, D1, Part, Rest).

join_conjuncts([P], P) :- !.
join_conjuncts([P|Ps], Out) :-
    join_conjuncts(Ps, Rest),
    append([P, [ws(` `), p(0'&), p(0'&), ws(` `)], Rest], Out).

%   A Prolog goal: `?x is E`, or a call name(...) that is no SPARQL
%   function (a prefixed name or IRI is one).
prolog_conjunct(Tokens) :-
    skip_ws(Tokens, [First|Rest]),
    (   member(T, Rest), keyword(T, 'IS')
    ->  true
    ;   First = word(Cs),
        \+ memberchk(0':, Cs),
        skip_ws(Rest, [p(0'()|_]),
        atom_codes(Name, Cs),
        \+ sparql_builtin(Name)
    ).

%   goal(Goal, Bindings): Goal with a Prolog variable per ?name, as
%   Bindings Name=Var.
prolog_goal(Tokens, goal(Goal, Bindings)) :-
    phrase(prolog_codes(Tokens), Codes),
    string_codes(Text, Codes),
    term_string(Goal, Text, [variable_names(VNs)]),
    query_bindings(VNs, Bindings).

%   The ?name variables among a goal's variable names (no copy: the
%   variables are the goal's own).
query_bindings([], []).
query_bindings([VName=V|VNs], Bindings) :-
    (   atom_concat('EPV_', Name, VName)
    ->  Bindings = [Name=V|Bs]
    ;   Bindings = Bs
    ),
    query_bindings(VNs, Bs).

prolog_codes([]) --> [].
prolog_codes([var(N)|Ts]) --> !, { atom_codes(N, Cs) }, "EPV_", Cs, prolog_codes(Ts).
prolog_codes([T|Ts]) --> token_code(T), prolog_codes(Ts).

%   { aggregate(Op, rdf(S, P, O), ?R) }: the group becomes the plain
%   pattern { S P O } for epsparql; aggregate(K, Op, Triple, R) remembers
%   the rest (Triple in tokens, for locating its compiled pattern).
take_aggregates([], _, [], []).
take_aggregates([p(0'{)|Ts], K, Out, Aggs) :-
    skip_ws(Ts, [W|Ts1]),
    keyword(W, 'AGGREGATE'),
    skip_ws(Ts1, Ts2),
    balanced(Ts2, 0'(, Args, After),
    skip_ws(After, [p(0'})|Rest]), !,
    args(Args, [OpT, PatT, ResT]),
    skip_ws(PatT, [PW|PTs]),
    keyword(PW, 'RDF'),
    skip_ws(PTs, PTs1),
    balanced(PTs1, 0'(, TripleArgs, _),
    args(TripleArgs, [ST, PT, OT]),
    phrase(prolog_codes(OpT), OpCodes),
    string_codes(OpText, OpCodes),
    term_string(Op, OpText, [variable_names(OpVNs)]),
    skip_ws(ResT, [var(R)|_]),
    append([[p(0'{), ws(` `)], ST, [ws(` `)], PT, [ws(` `)], OT, [ws(` `), p(0'})]], Group),
    append(Group, Out1, Out),
    Aggs = [aggregate(K, Op, OpVNs, t(ST, PT, OT), R)|Aggs1],
    K1 is K + 1,
    take_aggregates(Rest, K1, Out1, Aggs1).
take_aggregates([T|Ts], K, [T|Out], Aggs) :-
    take_aggregates(Ts, K, Out, Aggs).

%   Split on commas at depth 0.
args(Tokens, Args) :-
    arg_part(Tokens, 0, A, Rest),
    (   Rest == none -> Args = [A] ; args(Rest, As), Args = [A|As] ).

arg_part([], _, [], none).
arg_part([p(0',)|Ts], 0, [], Ts) :- !.
arg_part([T|Ts], D, [T|Part], Rest) :-
    (   memberchk(T, [p(0'(), p(0'{)]) -> D1 is D + 1
    ;   memberchk(T, [p(0')), p(0'})]) -> D1 is D - 1
    ;   D1 = D
    ),
    arg_part(Ts, D1, Part, Rest).

%   SELECT ?a ?b (or *) up to the WHERE clause.
projection('SELECT', Tokens, Proj) :- !,
    append(_, [T|After], Tokens), keyword(T, 'SELECT'), !,
    proj_vars(After, Proj).
projection(_, _, []).

proj_vars([], []).
proj_vars([T|Ts], Vs) :-
    (   T = p(0'{) -> Vs = []
    ;   keyword(T, 'WHERE') -> Vs = []
    ;   T = p(0'*) -> Vs = all
    ;   T = var(N) -> Vs = [N|Vs1], proj_vars(Ts, Vs1)
    ;   proj_vars(Ts, Vs)
    ).

%   CONSTRUCT S P O . ... (with or without braces) up to WHERE: a list of
%   t(S, P, O), each var(Name) or const(Term) (the plain term).
template('CONSTRUCT', Tokens, Template) :- !,
    append(_, [T|After], Tokens), keyword(T, 'CONSTRUCT'), !,
    skip_ws(After, After1),
    (   After1 = [p(0'{)|_]
    ->  balanced(After1, 0'{, Inner, _)
    ;   append(Inner, [W|_], After1), keyword(W, 'WHERE')
    ->  true
    ;   Inner = After1
    ),
    exclude([X]>>(X = ws(_)), Inner, Items),
    template_triples(Items, Template).
template(_, _, []).

template_triples([], []) :- !.
template_triples([p(0'.)|Ts], T) :- !, template_triples(Ts, T).
template_triples([S, P, O|Ts], [t(TS, TP, TO)|T]) :-
    maplist(template_term, [S, P, O], [TS, TP, TO]),
    template_triples(Ts, T).

template_term(var(N), var(N)) :- !.
template_term(word(Cs), const(C)) :- !,
    (   catch(number_codes(C, Cs), _, fail) -> true ; atom_codes(C, Cs) ).
template_term(iri([0'<|Cs]), const(A)) :- !,
    append(I, [0'>], Cs), atom_codes(A, I).
template_term(str([_|Cs]), const(A)) :- !,
    append(I, [_], Cs), atom_codes(A, I).
template_term(T, _) :-
    syntax_error(construct_template(T)).

		 /*******************************
		 *           COMPILING          *
		 *******************************/

%!  ep_sparql_compile(+Parsed, -CoreRules, -ResultEvent) is det.
%
%   The core rules of a parsed query (for compile_internal_event_rules/2)
%   and the event its answers are: select_event(Values) for SELECT,
%   rdf(S, P, O) for CONSTRUCT.
ep_sparql_compile(Parsed, Rules, Result) :-
    ep_sparql_compile(Parsed, Rules, Result, none).

%!  ep_sparql_compile(+Parsed, -CoreRules, -ResultEvent, +Within) is det.
%
%   The same with a window of Within seconds on the match (none for none;
%   a WITHIN in the query text counts too).
ep_sparql_compile(ep_sparql(Form, Proj, Template, Sparql, Goals, Aggs, Win0), Rules, Result, Win1) :-
    (   number(Win1) -> Win = Win1 ; Win = Win0 ),
    flag(etalis_ep_sparql_query, Q, Q + 1),
    python_compile(Sparql, Q, Head, Vars, Text),
    first_rule(Text, Rule0),
    (   Rule0 = (H0 <- B0) -> true ; domain_error(compiled_query, Rule0) ),
    H0 =.. [Head|HeadArgs],
    pairs_keys_values(Named0, Vars, HeadArgs),
    foldl(splice_aggregate(Named0), Aggs, B0-[], B1-AggNamed),
    append(Named0, AggNamed, Named1),
    query_window(Win, B1, B1w),
    goals_condition(Goals, Named1, Named, B1w, B2),
    pairs_values(Named, Args),
    atom_concat(ep_, Head, QHead),
    QH =.. [QHead|Args],
    length(Args, N),
    set_hidden(QHead/N),
    set_hidden(triple/3),
    answer_rules(Form, Proj, Template, Named, QH, Vars, Result, Out),
    bridge_rule(Bridge),
    append([Bridge, [(QH <- B2)], Out], Rules).

%   The query's own rule: the first of the rules text (the others are the
%   CONSTRUCT rules of epsparql's engine, written here as rdf/3 rules),
%   without the algebra element numbers epsparql writes into it (for its
%   own explain; the rule is rewritten here).
first_rule(Text, Rule) :-
    setup_call_cleanup(
        open_string(Text, S),
        read_term(S, Rule0, [module(epsparql_core)]),
        close(S)),
    strip_origins(Rule0, Rule).

%   ETALIS' WITHIN: as its rule windows (etalis_translate.pl).
query_window(none, B, B) :- !.
query_window(W, B, where(span(within(B, W1), S, E), etalis_runtime:in_window(S, E, W))) :-
    must_be(number, W),
    W1 is W + 1.

%   The rdf/3 -> triple/3 bridge, once per engine.
bridge_rule(Rules) :-
    (   bridged
    ->  Rules = []
    ;   assertz(bridged),
        Rules = [ (triple(S, P, O) <- where(rdf(S0, P0, O0),
                                          etalis_ep_sparql:rdf_triple(S0, P0, O0, S, P, O))) ]
    ).

set_hidden(PI) :-
    (   hidden_event(PI) -> true ; assertz(hidden_event(PI)) ).

%   An aggregate group was compiled as its plain pattern S P O, the right
%   side of a seq: that step becomes the core's running aggregate, its
%   result a new variable (as a typed literal).
splice_aggregate(Named, aggregate(K, Op0, OpVNs, t(ST, PT, OT), R), B0-Acc, B-[R-RVar|Acc]) :-
    maplist(pattern_term(Named), [ST, PT, OT], [S, P, O]),
    Triple = triple(S, P, O),
    (   replace_seq_right(B0, Triple, K, Op0, OpVNs, Named, RVar, B)
    ->  true
    ;   domain_error(etalis_ep_sparql_aggregate,
                     'aggregate(...) groups must be the right side of SEQ')
    ).

pattern_term(Named, Tokens, T) :-
    skip_ws(Tokens, [Tok|_]),
    (   Tok = var(N) -> memberchk(N-T, Named)
    ;   template_term(Tok, const(C)), rdf_value_term(C, T)
    ).

replace_seq_right(B0, Triple, K, Op0, OpVNs, Named, RVar, B) :-
    (   nonvar(B0), B0 = seq(L, R), R == Triple
    ->  aggregate_step(Op0, OpVNs, Named, Triple, Raw, Op, Q),
        B = where(seq(L, aggregate(Op, Q, Raw)),
                  etalis_ep_sparql:rdf_value_term(Raw, RVar)),
        _ = K
    ;   compound(B0), \+ B0 = triple(_, _, _)
    ->  B0 =.. [F|As],
        append(Pre, [A|Post], As),
        replace_seq_right(A, Triple, K, Op0, OpVNs, Named, RVar, A1), !,
        append(Pre, [A1|Post], As1),
        B =.. [F|As1]
    ).

%   count, or Op(?x) over the plain value of ?x.
aggregate_step(Op0, OpVNs, Named, Triple, _Raw, Op, Q) :-
    (   Op0 == count
    ->  Op = count, Q = Triple
    ;   compound(Op0), Op0 =.. [F, X], memberchk(F, [sum, min, max]),
        var(X), member(VName=V, OpVNs), V == X,
        atom_concat('EPV_', Name, VName),
        memberchk(Name-Enc, Named)
    ->  Op =.. [F, Plain],
        Q = where(Triple, etalis_ep_sparql:rdf_value_term(Plain, Enc))
    ;   domain_error(etalis_ep_sparql_aggregate_op, Op0)
    ).

%   FILTER and DO goals, after the pattern: the plain values of the
%   variables they read, the encoded values of those they bind.
goals_condition([], Named, Named, B, B) :- !.
goals_condition(Goals, Named0, Named, B0, where(B0, etalis_ep_sparql:ext_goals(Known, New, user:Goal))) :-
    goal_conj(Goals, Goal, Bindings),
    foldl(goal_var(Named0), Bindings, k([], [], []), k(Known, New, Extra)),
    append(Named0, Extra, Named).

goal_conj([goal(G, B)], G, B) :- !.
goal_conj([goal(G, B)|Gs], (G, Rest), Bs) :-
    goal_conj(Gs, Rest, B1),
    append(B, B1, Bs).

%   A ?name is one variable across all the goals (they were read one by
%   one): its first plain variable is unified with the later ones.
goal_var(Named, Name=Plain, k(K0, N0, E0), k(K, N, E)) :-
    (   name_value(Name, Named, Enc)
    ->  N = N0, E = E0,
        (   key_value(Enc, K0, Plain0) -> Plain = Plain0, K = K0 ; K = [Enc-Plain|K0] )
    ;   name_value(Name, E0, Enc)
    ->  K = K0, N = N0, E = E0,
        key_value(Enc, N0, Plain0), Plain = Plain0
    ;   K = K0, N = [Enc-Plain|N0], E = [Name-Enc|E0]
    ).

name_value(Name, [N-V|Ps], Value) :-
    (   N == Name -> Value = V ; name_value(Name, Ps, Value) ).

%   The value of the pair whose key is the variable Key (identity).
key_value(Key, [K-V|Ps], Value) :-
    (   K == Key -> Value = V ; key_value(Key, Ps, Value) ).

%!  ext_goals(+Known, +New, :Goal) is semidet.
%
%   Run an ETALIS FILTER/DO goal (first solution) on the plain values of
%   the Known variables (Encoded-Plain pairs) and encode what it bound
%   for the New ones.  Called from compiled rules only.
ext_goals(Known, New, Goal) :-
    maplist(decode_pair, Known),
    once(Goal),
    maplist(encode_pair, New).

decode_pair(E-P) :-
    (   var(E) -> true ; rdf_value_term(P, E) ).

encode_pair(E-P) :-
    (   var(P) -> true ; rdf_value_term(P, E) ).

answer_rules('SELECT', Proj0, _, Named, QH, Vars, select_event(_), [Rule]) :- !,
    (   Proj0 == all -> Proj = Vars ; Proj = Proj0 ),
    maplist(named_var(Named), Proj, Encs),
    Rule = (select_event(L) <- where(QH, etalis_ep_sparql:plain_values(Encs, L))).
answer_rules('CONSTRUCT', _, Template, Named, QH, _, rdf(_, _, _), Rules) :- !,
    maplist(construct_rule(Named, QH), Template, Rules).
answer_rules('ASK', _, _, _, QH, _, ask_event(yes), [(ask_event(yes) <- QH)]).

named_var(Named, Name, V) :-
    (   memberchk(Name-V, Named) -> true ; true ).

construct_rule(Named, QH, t(S, P, O), (rdf(S1, P1, O1) <- where(QH, Cond))) :-
    maplist(construct_pos(Named), [S, P, O], [S1, P1, O1], Goals),
    foldl([G, A0, (A0, G)]>>true, Goals, true, Cond0),
    Cond = (Cond0, ground(S1-P1-O1)).

construct_pos(_, const(C), C, true).
construct_pos(Named, var(N), Plain, Goal) :-
    named_var(Named, N, Enc),
    Goal = ( nonvar(Enc), etalis_ep_sparql:rdf_value_term(Plain, Enc) ).

plain_values(Encs, Plain) :-
    maplist([E, P]>>( var(E) -> true ; rdf_value_term(P, E) ), Encs, Plain).

		 /*******************************
		 *       VALUES <-> RDF         *
		 *******************************/

%!  rdf_triple(+S0, +P0, +O0, -S, -P, -O) is det.
rdf_triple(S0, P0, O0, S, P, O) :-
    rdf_value_term(S0, S),
    rdf_value_term(P0, P),
    rdf_value_term(O0, O).

%!  rdf_value_term(?Value, ?RdfTerm) is det.
%
%   A plain ETALIS value and the RDF term of epsparql's encoding
%   (epsparql/rdf/codec.py).  Give either.  A name is the IRI of the
%   default base; an atom with `:` is an IRI as it is; an integer an
%   xsd:integer, a float an xsd:decimal literal; a string a simple
%   literal; any other term a literal of type urn:etalis:term holding its
%   text.
rdf_value_term(V, T) :-
    nonvar(V), !,
    value_term(V, T).
rdf_value_term(V, T) :-
    must_be(nonvar, T),
    term_value(T, V).

value_term(V, T) :-
    (   integer(V)
    ->  T = V                           % xsd:integer: the bare integer
    ;   float(V)
    ->  format(string(S), '~w', [V]), T = n(V, 'http://www.w3.org/2001/XMLSchema#decimal', S)
    ;   atom(V), sub_atom(V, _, _, _, ':')
    ->  T = V
    ;   atom(V)
    ->  base(B), atom_concat(B, V, T)
    ;   string(V)
    ->  T = s(V)
    ;   format(string(S), '~q', [V]), T = t(S, 'urn:etalis:term')
    ).

term_value(T, V) :-
    (   atom(T)
    ->  base(B), ( atom_concat(B, L, T) -> V = L ; V = T )
    ;   number(T) -> V = T
    ;   T = n(V0, _, _) -> V = V0
    ;   T = t(S, 'urn:etalis:term') -> term_string(V, S)
    ;   T = s(S) -> atom_string(V, S)
    ;   T = l(S, _) -> atom_string(V, S)
    ;   T = bool(B, _) -> V = B
    ;   T = d(_, _, Lex) -> atom_string(V, Lex)
    ;   T = dur(_, _, Lex) -> atom_string(V, Lex)
    ;   T = t(S, _) -> atom_string(V, S)
    ;   T = b(Id) -> V = Id
    ;   V = T
    ).

%   epsparql's default base: bare names in queries are IRIs in it.
base('http://epsparql.org/ns#').
