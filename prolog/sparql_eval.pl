/*  sparql_eval: SPARQL 1.1 expressions (FILTER, BIND, SELECT) evaluated on
    encoded RDF terms.

    RDF terms are Prolog terms (epsparql/rdf/codec.py builds them from
    rdflib terms; this module builds the same ones from lexical forms):

        IRI                         an atom, the full IRI
        blank node                  b(Id)
        simple literal, xsd:string  s(Lex)
        language-tagged literal     l(Lex, Lang)       Lang a lower-case atom
        numeric literal             n(Value, Datatype, Lex), or the bare
                                    number: an integer for xsd:integer in
                                    canonical form ("42"), a float for an
                                    xsd:double written as its shortest
                                    numeral without exponent ("101.5",
                                    1e-4 =< |V| < 1e15; canonical_double/2)
        xsd:dateTime, date,         d(Seconds, Datatype, Lex)
          dateTimeStamp
        xsd:duration and subtypes   dur(Seconds, Datatype, Lex)
        xsd:boolean                 bool(true|false, Lex)
        any other typed literal     t(Lex, Datatype)

    Lex is a string, Datatype the datatype IRI (an atom).  Value is an
    integer for xsd:integer and its derived types, a float for decimal,
    float, double.  Seconds: since the epoch, UTC (no timezone = UTC), a
    float; for durations a month is 30 days and a year 365 days, and the
    number is an integer when whole.  An ill-typed lexical form, and a
    double/float whose value is not finite ("INF", "NaN", "1e400"), is
    t(Lex, Datatype); the doubles are still numbers here (IEEE specials).

    Expressions (built by the compiler):

        var(X)          X bound to an encoded term, or unbound (an error)
        const(T)        an encoded term
        or(A,B)  and(A,B)  not(A)
        eq ne lt gt le ge (A,B)
        add sub mul div (A,B)   neg(A)  pos(A)
        in(A, List)  notin(A, List)     List: a list of expressions
        call(Name, Args)    a builtin (upper-case atom, see builtin/3) or
                            an extension function IRI (see
                            sparql_register_function/2)

    A bare encoded term is also accepted as a constant, and a bare Prolog
    number as xsd:integer (integer) or xsd:double (float).

    Errors are values: evaluation yields the atom '$error', which the
    three-valued logic of ||, && and ! and the functions IF, COALESCE, IN
    handle as SPARQL 1.1 section 17 says.  Arithmetic promotes integer <
    decimal < float < double (integer / integer is a decimal) and keeps
    xsd:decimal exact (rationals, division rounded to 18 fractional
    digits); float and double follow IEEE (division by zero gives INF or
    NaN; for integer and decimal it is an error).

    Comparisons: numerics by value (NaN is unordered: = false, != true);
    simple literals and xsd:string by code points; language-tagged
    literals with the same tag likewise (= across tags is false, < an
    error); booleans false < true; date-times by instant (xsd:date only
    with xsd:date); durations by seconds.  Otherwise = is RDF term
    equality, an error for two different literals that are not of
    comparable types (e.g. "1" = 1, "a" = "a"@en), and != its negation.

    Builtins (call/2, upper-case names): BOUND IF COALESCE STR LANG
    DATATYPE IRI URI ISIRI ISURI ISBLANK ISLITERAL ISNUMERIC SAMETERM
    LANGMATCHES REGEX REPLACE STRLEN UCASE LCASE CONTAINS STRSTARTS
    STRENDS STRBEFORE STRAFTER CONCAT SUBSTR ENCODE_FOR_URI ABS CEIL FLOOR
    ROUND STRDT STRLANG YEAR MONTH DAY HOURS MINUTES SECONDS TIMEZONE TZ
    MD5 SHA1 SHA256 SHA384 SHA512 RAND NOW UUID STRUUID BNODE, and
    EP-SPARQL's GETDURATION GETSTARTTIME GETENDTIME, called with the
    start and end (seconds) of the match the compiler passes.  IRI has no
    base IRI to resolve against; NOW is the wall clock at evaluation;
    BNODE gives a fresh blank node on every call (also BNODE(str)).

    Results of arithmetic get canonical lexical forms: integers "42",
    decimals "3.3" / "2.0", doubles and floats "1.5E2" (XSD 1.1 canonical
    form), durations (GETDURATION) "[-]P[nD][T[nH][nM][n[.f]S]]", "PT0S"
    for zero, date-times "YYYY-MM-DDThh:mm:ss[.f]Z".
*/
:- module(sparql_eval,
          [ sparql_eval/2,                  % +Expr, -Value
            sparql_true/1,                  % +Expr
            sparql_ebv/2,                   % +Value, -Bool
            sparql_number/2,                % +Encoded, -Number
            sparql_float_value/3,           % +Encoded, -Rank, -Float
            sparql_float_term/3,            % +Rank, +Float, -Term
            sparql_typed_literal/3,         % +Lex, +Datatype, -Term
            sparql_seconds_datetime/2,      % +Seconds, -Term
            sparql_seconds_duration/2,      % +Seconds, -Term
            sparql_builtin/3,               % ?Name, ?MinArgs, ?MaxArgs
            sparql_register_function/2,     % +IRI, :Pred
            sparql_unregister_function/1,   % +IRI
            sparql_function_registered/1,   % +IRI
            sparql_function_errors/1        % -Errors
          ]).
:- set_prolog_flag(optimise, true).   % file-scoped: inline arithmetic
:- use_module(library(lists)).
:- use_module(library(apply)).
:- use_module(library(error)).

%   Optional libraries: without them the functions that need them yield
%   '$error'.  REGEX and REPLACE need library(pcre) (PCRE2); MD5 and SHA*
%   library(md5) and library(sha); UUID, STRUUID library(uuid).
:- if(catch(use_module(library(pcre), [re_match/3, re_replace/5]), _, fail)).
have_pcre.
:- else.
have_pcre :- fail.
:- endif.
:- if(catch(( use_module(library(md5), [md5_hash/3]),
              use_module(library(sha), [sha_hash/3, hash_atom/2]) ), _, fail)).
have_hashes.
:- else.
have_hashes :- fail.
:- endif.
:- if(catch(use_module(library(uuid), [uuid/1]), _, fail)).
have_uuid.
:- else.
have_uuid :- fail.
:- endif.

%   Declared global state: the registry of extension functions, and the
%   counter flag(ep_sparql_bnode) that numbers BNODE()'s blank nodes.
:- dynamic registered_function/3.       % registered_function(IRI, Closure, Arity|any)
:- dynamic function_error/3.            % function_error(IRI, Args, Error): not yet reported

%   An exception inside an extension function is an evaluation error for
%   SPARQL, and is also remembered so that the engine can report it (the
%   Python bridge drains these after each batch; at most 1,000 kept).
note_function_error(F, Args, E) :-
    (   predicate_property(function_error(_, _, _), number_of_clauses(N)), N >= 1000
    ->  true
    ;   assertz(function_error(F, Args, E))
    ).

%!  sparql_function_errors(-Errors:list) is det.
%
%   The exceptions raised inside extension functions since the last call,
%   as rule_error(Error, function(IRI, Args), none, []) (the shape of
%   epsparql_core:engine_errors/2), oldest first, and forget them.
sparql_function_errors(Errors) :-
    findall(rule_error(E, function(F, Args), none, []), retract(function_error(F, Args, E)), Errors).

:- meta_predicate sparql_register_function(+, :).


		 /*******************************
		 *            API               *
		 *******************************/

%!  sparql_eval(+Expr, -Value) is det.
%
%   Value is the encoded RDF term Expr evaluates to, or the atom
%   '$error' for a SPARQL evaluation error (errors are values: this
%   never throws for bad data, unbound variables or type errors).

sparql_eval(Expr, Value) :-
    ev(Expr, V0),
    value(V0, V1),
    bare(V1, Value).

%!  sparql_true(+Expr) is semidet.
%
%   True iff the effective boolean value of Expr is true: what FILTER
%   keeps.  False and errors both fail.  Comparisons of numerics are
%   done without building intermediate terms.

sparql_true(E) :-
    var(E), !, fail.
sparql_true(and(A, B)) :- !,
    sparql_true(A),
    sparql_true(B).
sparql_true(or(A, B)) :- !,
    (   sparql_true(A)
    ->  true
    ;   sparql_true(B)
    ).
sparql_true(lt(A, B)) :- !,
    (   fast_pair(A, B, P, Q)
    ->  P < Q
    ;   ev(A, X), ev(B, Y),
        (   num_val(X, P), num_val(Y, Q) -> P < Q ; ord(X, Y, O), O == (<) )
    ).
sparql_true(gt(A, B)) :- !,
    (   fast_pair(A, B, P, Q)
    ->  P > Q
    ;   ev(A, X), ev(B, Y),
        (   num_val(X, P), num_val(Y, Q) -> P > Q ; ord(X, Y, O), O == (>) )
    ).
sparql_true(le(A, B)) :- !,
    (   fast_pair(A, B, P, Q)
    ->  P =< Q
    ;   ev(A, X), ev(B, Y),
        (   num_val(X, P), num_val(Y, Q) -> P =< Q ; ord(X, Y, O), ( O == (<) ; O == (=) ) )
    ).
sparql_true(ge(A, B)) :- !,
    (   fast_pair(A, B, P, Q)
    ->  P >= Q
    ;   ev(A, X), ev(B, Y),
        (   num_val(X, P), num_val(Y, Q) -> P >= Q ; ord(X, Y, O), ( O == (>) ; O == (=) ) )
    ).
sparql_true(eq(A, B)) :- !,
    (   fast_pair(A, B, P, Q)
    ->  P =:= Q
    ;   ev(A, X), ev(B, Y),
        (   num_val(X, P), num_val(Y, Q) -> P =:= Q ; eq_tv(X, Y, true) )
    ).
sparql_true(ne(A, B)) :- !,
    ev(A, X), ev(B, Y),
    (   num_val(X, P), num_val(Y, Q) -> \+ P =:= Q ; eq_tv(X, Y, false) ).
sparql_true(E) :-
    truth(E, true).

%   fast_pair(+A, +B, -P, -Q): the common FILTER operands, a variable
%   and a constant (or two variables) bound to n/3, without ev/2.
%   Nothing here binds a variable of the expression.
fast_pair(A, B, P, Q) :-
    nonvar(A), nonvar(B),
    fast_pair_(A, B, P, Q).

fast_pair_(var(X), B, P, Q) :-
    fast_num(X, P),
    fast_operand(B, Q).
fast_pair_(const(C), var(Y), P, Q) :-
    fast_num(C, P),
    fast_num(Y, Q).

fast_operand(const(C), Q) :- fast_num(C, Q).
fast_operand(var(Y), Q) :- fast_num(Y, Q).

fast_num(X, P) :-
    nonvar(X),
    (   number(X) -> P = X ; X = n(P, _, _) ).

%!  sparql_ebv(+Value, -Bool) is det.
%
%   Bool is the effective boolean value (SPARQL 1.1 section 17.2.2) of
%   the encoded term Value: `true`, `false`, or `error` (IRIs, blank
%   nodes, date-times, other typed literals, '$error', unbound).

sparql_ebv(V, T) :-
    (   var(V) -> T = error ; ebv(V, T) ).

%!  sparql_number(+Encoded, -Number) is semidet.
%
%   Number is the value of a numeric literal n(Number, _, _).  Fails
%   for anything else: other terms, the non-finite doubles (which are
%   t/2), and an unbound Encoded (an unbound SPARQL variable).

sparql_number(E, V) :-
    nonvar(E),
    (   number(E) -> V = E ; E = n(V, _, _) ).

%!  sparql_float_value(+Encoded, -Rank, -Float) is semidet.
%
%   Float is the value of an xsd:float (Rank 2) or xsd:double (Rank 3)
%   literal, the IEEE specials included (a non-finite one is t/2).
%   Fails for anything else, an ill-typed literal among them.
sparql_float_value(E, R, V) :-
    nonvar(E),
    num(E, V0, R),
    R >= 2,
    V = V0.

%!  sparql_float_term(+Rank, +Float, -Term) is det.
%
%   The encoding of the xsd:float (Rank 2) or xsd:double (Rank 3) whose
%   value is Float (any number, rounded to a float), as arithmetic gives
%   it: the non-finite ones as t/2.
sparql_float_term(R, N, T) :-
    must_be(oneof([2, 3]), R),
    num_term(R, N, T).

%!  sparql_typed_literal(+Lex, +Datatype, -Term) is det.
%
%   Term is the encoding of the literal Lex^^Datatype (Lex text, Datatype
%   an IRI atom): the same term epsparql.rdf.codec.encode gives for it.
%   An ill-typed Lex gives t(Lex, Datatype).

sparql_typed_literal(Lex0, DT, T) :-
    text_to_string(Lex0, Lex),
    (   lexical_term(DT, Lex, T0) -> bare(T0, T) ; T = t(Lex, DT) ).

%!  sparql_seconds_datetime(+Seconds, -Term) is det.
%
%   Term is d(S, xsd:dateTime, Lex) for the instant Seconds (a finite
%   number) after the epoch, in UTC: Lex is "YYYY-MM-DDThh:mm:ss[.f]Z"
%   with the exact fraction of the shortest numeral of the float.  What
%   GETSTARTTIME/GETENDTIME return.

sparql_seconds_datetime(S0, d(S, 'http://www.w3.org/2001/XMLSchema#dateTime', Lex)) :-
    must_be_finite(S0),
    S is float(S0) + 0.0,
    float_decimal(S, Neg, N0, Scale),
    (   Neg == true -> N is -N0 ; N = N0 ),
    P is 10^Scale,
    W is N div P,
    FracN is N - W*P,
    frac_codes(FracN, Scale, Frac),
    Days is W div 86400,
    Sod is W mod 86400,
    civil_from_days(Days, Y, Mo, D),
    H is Sod // 3600, Mi is (Sod mod 3600) // 60, Sec is Sod mod 60,
    (   Y < 0 -> YSign = "-", YA is -Y ; YSign = "", YA = Y ),
    (   Frac == [] -> FracS = "" ; format(string(FracS), ".~s", [Frac]) ),
    format(string(Lex), "~w~|~`0t~d~4+-~|~`0t~d~2+-~|~`0t~d~2+T~|~`0t~d~2+:~|~`0t~d~2+:~|~`0t~d~2+~wZ",
           [YSign, YA, Mo, D, H, Mi, Sec, FracS]).

%!  sparql_seconds_duration(+Seconds, -Term) is det.
%
%   Term is dur(S, xsd:duration, Lex) for a duration of Seconds: S an
%   integer when whole, Lex canonical "[-]P[nD][T[nH][nM][n[.f]S]]"
%   ("PT0S" for zero; e.g. 90 -> "PT1M30S").  What GETDURATION returns.

sparql_seconds_duration(S00, dur(V, 'http://www.w3.org/2001/XMLSchema#duration', Lex)) :-
    must_be_finite(S00),
    (   rational(S00), \+ integer(S00)          % an exact time's difference: 3r10
    ->  S0 is float(S00)
    ;   S0 = S00
    ),
    (   integer(S0)
    ->  V = S0
    ;   S0 =:= float_integer_part(S0)
    ->  V is integer(S0)
    ;   V is S0 + 0.0
    ),
    (   integer(V)
    ->  ( V < 0 -> Neg = true ; Neg = false ), N is abs(V), Scale = 0
    ;   float_decimal(V, Neg, N, Scale)
    ),
    P is 10^Scale,
    W is N // P,
    FracN is N mod P,
    frac_codes(FracN, Scale, Frac),
    Days is W // 86400, H is (W mod 86400) // 3600,
    Mi is (W mod 3600) // 60, Sec is W mod 60,
    with_output_to(string(Lex),
                   ( ( Neg == true -> write('-P') ; write('P') ),
                     ( Days > 0 -> format("~dD", [Days]) ; true ),
                     (   ( H > 0 ; Mi > 0 ; Sec > 0 ; Frac \== [] )
                     ->  write('T'),
                         ( H > 0 -> format("~dH", [H]) ; true ),
                         ( Mi > 0 -> format("~dM", [Mi]) ; true ),
                         (   ( Sec > 0 ; Frac \== [] )
                         ->  ( Frac == [] -> format("~dS", [Sec]) ; format("~d.~sS", [Sec, Frac]) )
                         ;   true
                         )
                     ;   Days =:= 0
                     ->  write('T0S')
                     ;   true
                     ) )).

must_be_finite(X) :-
    must_be(number, X),
    (   finite(X) -> true ; domain_error(finite_number, X) ).

%!  sparql_builtin(?Name, ?MinArgs, ?MaxArgs) is nondet.
%
%   Name is a builtin function of call(Name, Args) taking MinArgs to
%   MaxArgs arguments (MaxArgs `inf` for no limit).  The counts are those
%   of the compiled call: GETDURATION, GETSTARTTIME and GETENDTIME take
%   the two times (seconds) of the match the compiler passes.

sparql_builtin(Name, Min, Max) :-
    builtin(Name, Min, Max).

%!  sparql_register_function(+IRI, :Pred) is det.
%
%   Register Pred as the extension function IRI (an atom).  Pred is a
%   predicate indicator Name/Arity (called with Arity-1 arguments and the
%   result) or a closure; it is called as call(Pred, Arg1, ..., Result)
%   with the evaluated arguments (encoded terms) and must bind Result to
%   an encoded term.  A failure, an exception or an unbound result is an
%   evaluation error ('$error').  Registering again replaces.

sparql_register_function(IRI, M:Spec) :-
    must_be(atom, IRI),
    (   Spec = Q:Name/Arity
    ->  must_be(atom, Name), must_be(nonneg, Arity), Closure = Q:Name
    ;   Spec = Name/Arity
    ->  must_be(atom, Name), must_be(nonneg, Arity), Closure = M:Name
    ;   must_be(callable, Spec), Closure = M:Spec, Arity = any
    ),
    retractall(registered_function(IRI, _, _)),
    assertz(registered_function(IRI, Closure, Arity)).

%!  sparql_unregister_function(+IRI) is det.
%
%   Forget the extension function IRI (nothing if it is not registered).

sparql_unregister_function(IRI) :-
    retractall(registered_function(IRI, _, _)).

%!  sparql_function_registered(+IRI) is semidet.
%
%   True if IRI is a registered extension function.

sparql_function_registered(IRI) :-
    registered_function(IRI, _, _), !.


		 /*******************************
		 *          EVALUATION          *
		 *******************************/

%   ev(+Expr, -Raw): Raw is an encoded term, '$error', or a result not
%   yet given a lexical form (so that comparing it costs no formatting):
%   '$n'(N, Rank) a numeric (Rank 0 integer, N an integer; 1 decimal, N
%   an integer or rational; 2 float, 3 double, N a float), '$dt'(S) the
%   xsd:dateTime and '$dur'(S) the xsd:duration of S seconds (from
%   GETSTARTTIME, GETENDTIME, GETDURATION).  value/2 turns a raw value
%   into an encoded term.

ev(E, V) :-
    var(E), !,
    V = '$error'.
ev(var(X), V) :- !,
    (   var(X) -> V = '$error' ; number(X) -> lifted(X, V) ; V = X ).
ev(const(C), V) :- !,
    (   var(C) -> V = '$error'
    ;   number(C) -> lifted(C, V)
    ;   V = C
    ).
ev(add(A, B), V) :- !,
    ev(A, X), ev(B, Y), arith(add, X, Y, V).
ev(sub(A, B), V) :- !,
    ev(A, X), ev(B, Y), arith(sub, X, Y, V).
ev(mul(A, B), V) :- !,
    ev(A, X), ev(B, Y), arith(mul, X, Y, V).
ev(div(A, B), V) :- !,
    ev(A, X), ev(B, Y), arith(div, X, Y, V).
ev(neg(A), V) :- !,
    ev(A, X),
    (   num(X, N, R) -> M is -N, V = '$n'(M, R) ; V = '$error' ).
ev(pos(A), V) :- !,
    ev(A, X),
    (   num(X, _, _) -> V = X ; V = '$error' ).
ev(call(F, Args), V) :- !,
    call_fn(F, Args, V).
ev(or(A, B), V) :- !,     truth(or(A, B), T), tv_value(T, V).
ev(and(A, B), V) :- !,    truth(and(A, B), T), tv_value(T, V).
ev(not(A), V) :- !,       truth(not(A), T), tv_value(T, V).
ev(eq(A, B), V) :- !,     truth(eq(A, B), T), tv_value(T, V).
ev(ne(A, B), V) :- !,     truth(ne(A, B), T), tv_value(T, V).
ev(lt(A, B), V) :- !,     truth(lt(A, B), T), tv_value(T, V).
ev(gt(A, B), V) :- !,     truth(gt(A, B), T), tv_value(T, V).
ev(le(A, B), V) :- !,     truth(le(A, B), T), tv_value(T, V).
ev(ge(A, B), V) :- !,     truth(ge(A, B), T), tv_value(T, V).
ev(in(A, L), V) :- !,     truth(in(A, L), T), tv_value(T, V).
ev(notin(A, L), V) :- !,  truth(notin(A, L), T), tv_value(T, V).
ev(X, V) :-
    leaf(X, V).

%   A bare term as a constant.
leaf(X, V) :- number(X), !, lifted(X, V).
leaf(X, V) :- encoded(X), !, V = X.
leaf(_, '$error').

%!  lifted(+Number, -Term) is det.
%
%   The n/3 form of a bare number (an encoded xsd:integer or xsd:double,
%   see the module comment): what the rest of this module takes apart.
lifted(X, n(X, 'http://www.w3.org/2001/XMLSchema#integer', L)) :-
    integer(X), !,
    number_string(X, L).
lifted(X, n(X, 'http://www.w3.org/2001/XMLSchema#double', L)) :-
    format(string(L), '~w', [X]).

%!  bare(+Term, -Encoded) is det.
%
%   The encoded form of a term this module made: an xsd:integer or
%   xsd:double literal in the form the codec writes as a bare number is
%   that number (so that the same RDF term is always the same Prolog term,
%   and joins by unification stay RDF-term equality).
bare(T, V) :-
    (   T = n(X, DT, L),
        (   DT == 'http://www.w3.org/2001/XMLSchema#integer'
        ->  integer(X), number_string(X, L0), L0 == L
        ;   DT == 'http://www.w3.org/2001/XMLSchema#double',
            canonical_double(X, L)
        )
    ->  V = X
    ;   V = T
    ).

%!  canonical_double(+Value, +Lex) is semidet.
%
%   Lex is the form of the xsd:double Value that is encoded as the bare
%   float: `~w` of it without exponent, 1e-4 =< |Value| < 1e15 (where
%   SWI-Prolog and Python write floats alike), "0.0" for zero (not
%   -0.0).  The same test as canonical_double() in epsparql/rdf/codec.py.
canonical_double(X, L) :-
    float(X),
    (   X =:= 0.0
    ->  L == "0.0"
    ;   A is abs(X), A >= 1.0e-4, A < 1.0e15,
        format(string(L0), '~w', [X]),
        L0 == L
    ).

encoded(X) :- atom(X), !.
encoded(X) :- number(X), !.
encoded(s(_)).
encoded(l(_, _)).
encoded(n(_, _, _)).
encoded(d(_, _, _)).
encoded(dur(_, _, _)).
encoded(bool(_, _)).
encoded(t(_, _)).
encoded(b(_)).

%   value(+Raw, -Term): materialise '$n'/2, '$dt'/1 and '$dur'/1.
value('$n'(N, R), T) :- !,
    (   catch(num_term(R, N, T0), error(_, _), fail) -> T = T0 ; T = '$error' ).
value('$dt'(S), T) :- !,
    sparql_seconds_datetime(S, T).
value('$dur'(S), T) :- !,
    sparql_seconds_duration(S, T).
value(V, V).

evv(E, V) :-
    ev(E, V0),
    value(V0, V).

tv_value(true,  bool(true, "true")).
tv_value(false, bool(false, "false")).
tv_value(error, '$error').

%   truth(+Expr, -TV): the EBV of Expr in three-valued logic.
truth(E, T) :-
    var(E), !,
    T = error.
truth(and(A, B), T) :- !,
    connective(A, B, false, true, T).
truth(or(A, B), T) :- !,
    connective(A, B, true, false, T).
truth(not(A), T) :- !,
    truth(A, TA),
    not3(TA, T).
truth(eq(A, B), T) :- !,
    ev(A, X), ev(B, Y), eq_tv(X, Y, T).
truth(ne(A, B), T) :- !,
    ev(A, X), ev(B, Y), eq_tv(X, Y, T0), not3(T0, T).
truth(E, T) :-
    ordering(E, Op, A, B), !,
    ev(A, X), ev(B, Y), ord(X, Y, O), ord_tv(Op, O, T).
truth(in(A, L), T) :- !,
    ev(A, X),
    in_tv(L, X, false, T).
truth(notin(A, L), T) :- !,
    ev(A, X),
    in_tv(L, X, false, T0),
    not3(T0, T).
truth(E, T) :-
    ev(E, V),
    ebv(V, T).

%   connective(+A, +B, +Decisive, +Other, -T): && (Decisive = false) or
%   || (Decisive = true) in three-valued logic: one Decisive operand
%   decides, even beside an error; both Other give Other; else an error.
connective(A, B, Decisive, Other, T) :-
    truth(A, TA),
    (   TA == Decisive
    ->  T = Decisive
    ;   truth(B, TB),
        (   TB == Decisive -> T = Decisive
        ;   TA == Other, TB == Other -> T = Other
        ;   T = error
        )
    ).

ordering(lt(A, B), lt, A, B).
ordering(gt(A, B), gt, A, B).
ordering(le(A, B), le, A, B).
ordering(ge(A, B), ge, A, B).

not3(true, false).
not3(false, true).
not3(error, error).

%   ord_tv(+Op, +Order, -TV): Order is <, =, >, nan (a NaN: unordered)
%   or error (not comparable).
ord_tv(_,  error, T) :- !, T = error.
ord_tv(lt, O, T) :- ( O == (<) -> T = true ; T = false ).
ord_tv(gt, O, T) :- ( O == (>) -> T = true ; T = false ).
ord_tv(le, O, T) :- ( ( O == (<) ; O == (=) ) -> T = true ; T = false ).
ord_tv(ge, O, T) :- ( ( O == (>) ; O == (=) ) -> T = true ; T = false ).

%   IN: true if some `=` is true; else error if some was an error.
in_tv(L, _, _, T) :-
    \+ is_list(L), !,
    T = error.
in_tv([], _, Acc, Acc).
in_tv([E|Es], X, Acc, T) :-
    ev(E, Y),
    eq_tv(X, Y, TV),
    (   TV == true
    ->  T = true
    ;   TV == error
    ->  in_tv(Es, X, error, T)
    ;   in_tv(Es, X, Acc, T)
    ).


		 /*******************************
		 *   EFFECTIVE BOOLEAN VALUE    *
		 *******************************/

ebv(bool(B, _), T) :- !, T = B.
ebv(V, T) :- number(V), !,
    (   V =:= 0 -> T = false ; T = true ).
ebv(n(V, _, _), T) :- !,
    (   V =:= 0 -> T = false ; T = true ).
ebv(s(L), T) :- !,
    (   empty_text(L) -> T = false ; T = true ).
ebv(l(L, _), T) :- !,
    (   empty_text(L) -> T = false ; T = true ).
ebv('$n'(V, _), T) :- !,
    (   float(V), float_class(V, nan) -> T = false
    ;   V =:= 0 -> T = false
    ;   T = true
    ).
ebv(t(L, DT), T) :- !,
    (   float_rank(DT, _), special_float(L, V)
    ->  ( float_class(V, nan) -> T = false ; T = true )
    ;   ( num_rank(DT, _) ; DT == 'http://www.w3.org/2001/XMLSchema#boolean' )
    ->  T = false                  % ill-typed numeric or boolean
    ;   T = error
    ).
ebv(_, error).

empty_text("") :- !.
empty_text('').


		 /*******************************
		 *          COMPARISON          *
		 *******************************/

%   num_val(+Raw, -Number): the value of a numeric, for comparisons.
num_val(n(V, _, _), V).
num_val(V, V) :- number(V), !.
num_val('$n'(V0, R), V) :-
    (   R =:= 1, \+ integer(V0) -> catch(V is float(V0), _, fail) ; V = V0 ).
num_val(t(L, DT), V) :-
    float_rank(DT, _),
    special_float(L, V).

%   eq_tv(+X, +Y, -TV): the `=` operator.
eq_tv(X, Y, T) :-
    num_val(X, P), num_val(Y, Q), !,
    (   P =:= Q -> T = true ; T = false ).
eq_tv('$error', _, T) :- !, T = error.
eq_tv(_, '$error', T) :- !, T = error.
eq_tv(X, Y, T) :-
    X == Y, !,
    T = true.
eq_tv(s(A), s(B), T) :- !,
    (   text_eq(A, B) -> T = true ; T = false ).
eq_tv(l(A, L1), l(B, L2), T) :- !,
    (   L1 == L2, text_eq(A, B) -> T = true ; T = false ).
eq_tv(bool(A, _), bool(B, _), T) :- !,
    (   A == B -> T = true ; T = false ).
eq_tv(X, Y, T) :-
    time_val(X, F, A), time_val(Y, F, B), !,
    (   A =:= B -> T = true ; T = false ).
eq_tv(X, Y, T) :-
    (   literal(X), literal(Y) -> T = error ; T = false ).

literal(s(_)).
literal(l(_, _)).
literal(n(_, _, _)).
literal(X) :- number(X).
literal(d(_, _, _)).
literal(dur(_, _, _)).
literal(bool(_, _)).
literal(t(_, _)).
literal('$n'(_, _)).
literal('$dt'(_)).
literal('$dur'(_)).

%   time_val(+Raw, -Family, -Seconds): date-times (family `datetime` or
%   `date`: a date is not comparable with a date-time) and durations.
time_val(d(S, DT, _), F, S) :- time_family(DT, F).
time_val(dur(S, _, _), duration, S).
time_val('$dt'(S), datetime, S).
time_val('$dur'(S), duration, S).

text_eq(A, B) :-
    (   string(A), string(B)
    ->  A == B
    ;   is_text(A), is_text(B), atom_string(A, S), atom_string(B, S)
    ).

is_text(X) :- string(X), !.
is_text(X) :- atom(X).

%   ord(+X, +Y, -Order): Order is <, =, >, nan or error.
ord(X, Y, O) :-
    num_val(X, P), num_val(Y, Q), !,
    num_order(P, Q, O).
ord(s(A), s(B), O) :- !,
    text_compare(O, A, B).
ord(l(A, L1), l(B, L2), O) :-
    L1 == L2, !,
    text_compare(O, A, B).
ord(bool(A, _), bool(B, _), O) :- !,
    compare(O, A, B).                   % false @< true
ord(X, Y, O) :-
    time_val(X, F, A), time_val(Y, F, B), !,
    num_order(A, B, O).
ord(_, _, error).

num_order(P, Q, O) :-
    (   P < Q -> O = (<)
    ;   P > Q -> O = (>)
    ;   P =:= Q -> O = (=)
    ;   O = nan
    ).

text_compare(O, A, B) :-
    (   string(A), string(B)
    ->  compare(O, A, B)
    ;   is_text(A), is_text(B)
    ->  atom_string(A, SA), atom_string(B, SB), compare(O, SA, SB)
    ;   O = error
    ).

time_family('http://www.w3.org/2001/XMLSchema#dateTime', datetime).
time_family('http://www.w3.org/2001/XMLSchema#dateTimeStamp', datetime).
time_family('http://www.w3.org/2001/XMLSchema#date', date).


		 /*******************************
		 *          ARITHMETIC          *
		 *******************************/

%   num(+Raw, -N, -Rank): N is the value for arithmetic: integers for
%   rank 0, exact rationals for decimals, floats for float and double.
num(n(V, DT, L), N, R) :-
    num_rank(DT, R),
    (   R =:= 1 -> decimal_value(L, V, N) ; N = V ).
num('$n'(N, R), N, R).
num(X, X, R) :- integer(X), !, R = 0.
num(X, X, 3) :- float(X).
num(t(L, DT), N, R) :-
    float_rank(DT, R),
    special_float(L, N).

%   The exact value of a decimal's lexical form (its float if unparsable).
%   The lexical form of an n/3 is valid (the codec and
%   sparql_typed_literal/3 check it), so number_string/2 on its digit
%   runs is safe and much faster than a DCG.
decimal_value(L, V, N) :-
    (   catch(decimal_rational(L, N0), error(_, _), fail)
    ->  N = N0
    ;   N is rationalize(V)
    ).

decimal_rational(L, N) :-
    (   sub_string(L, 0, 1, _, "-")
    ->  Neg = true, sub_string(L, 1, _, 0, U)
    ;   sub_string(L, 0, 1, _, "+")
    ->  Neg = false, sub_string(L, 1, _, 0, U)
    ;   Neg = false, U = L
    ),
    (   sub_string(U, B, 1, A, ".")
    ->  sub_string(U, 0, B, _, IS), sub_string(U, _, A, 0, FS)
    ;   IS = U, FS = ""
    ),
    ( IS == "" -> I = 0 ; number_string(I, IS), integer(I) ),
    (   FS == ""
    ->  N0 = I
    ;   number_string(F, FS), integer(F),
        string_length(FS, K),
        N0 is (I*10^K + F) rdiv 10^K
    ),
    ( Neg == true -> N is -N0 ; N = N0 ).

arith(Op, X, Y, V) :-
    (   num(X, A, RA), num(Y, B, RB)
    ->  R is max(RA, RB),
        (   arith(Op, R, A, B, V0) -> V = V0 ; V = '$error' )
    ;   V = '$error'
    ).

arith(add, R, A, B, '$n'(C, R)) :- R =< 1, !, C is A + B.
arith(sub, R, A, B, '$n'(C, R)) :- R =< 1, !, C is A - B.
arith(mul, R, A, B, '$n'(C, R)) :- R =< 1, !, C is A * B.
arith(div, R, A, B, '$n'(C, 1)) :- R =< 1, !,
    B =\= 0,                            % integer/decimal division by zero: error
    C0 is A rdiv B,
    decimal_round(C0, C).
arith(Op, R, A, B, '$n'(C, R)) :-
    float_arith(Op, A, B, C).

%   Decimal division is exact, then rounded to 18 fractional digits.
decimal_round(Q, Q) :- integer(Q), !.
decimal_round(Q, R) :-
    P is 10^18,
    R is round(Q*P) rdiv P.

to_float(X, F) :- float(X), !, F = X.
to_float(X, F) :- F is float(X).

%   IEEE 754 arithmetic on floats (SWI-Prolog raises where IEEE yields
%   INF or NaN, so those cases are worked out here).
float_arith(Op, A0, B0, C) :-
    catch(( to_float(A0, A), to_float(B0, B) ), error(evaluation_error(_), _), fail),
    (   catch(float_op(Op, A, B, C0), error(evaluation_error(_), _), fail)
    ->  C = C0
    ;   ieee(Op, A, B, C)
    ).

float_op(add, A, B, C) :- C is A + B.
float_op(sub, A, B, C) :- C is A - B.
float_op(mul, A, B, C) :- C is A * B.
float_op(div, A, B, C) :- C is A / B.

is_nan(X) :- float_class(X, nan).
is_inf(X) :- float_class(X, infinite).

signed_inf(S, X) :- ( S < 0 -> X is -inf ; X is inf ).

neg_sign(X) :- X < 0, !.
neg_sign(X) :- X =:= 0, copysign(1.0, X) < 0.

prod_sign(A, B, S) :-
    (   neg_sign(A) -> SA = -1 ; SA = 1 ),
    (   neg_sign(B) -> SB = -1 ; SB = 1 ),
    S is SA*SB.

ieee(_, A, B, C) :-
    ( is_nan(A) ; is_nan(B) ), !,
    C is nan.
ieee(add, A, B, C) :- !,
    ieee_add(A, B, C).
ieee(sub, A, B, C) :- !,
    NB is -B,
    ieee_add(A, NB, C).
ieee(mul, A, B, C) :- !,
    (   ( is_inf(A) ; is_inf(B) ), ( A =:= 0 ; B =:= 0 )
    ->  C is nan
    ;   prod_sign(A, B, S), signed_inf(S, C)      % infinite operand or overflow
    ).
ieee(div, A, B, C) :-
    (   is_inf(A), is_inf(B) -> C is nan
    ;   is_inf(B) -> prod_sign(A, B, S), ( S < 0 -> C = -0.0 ; C = 0.0 )
    ;   B =:= 0, A =:= 0 -> C is nan
    ;   prod_sign(A, B, S), signed_inf(S, C)      % x/0, INF/x, overflow
    ).

ieee_add(A, B, C) :-
    (   is_inf(A), is_inf(B)
    ->  ( sign(A) =:= sign(B) -> C = A ; C is nan )
    ;   is_inf(A) -> C = A
    ;   is_inf(B) -> C = B
    ;   signed_inf(A, C)                           % overflow: A, B same sign
    ).

%   num_term(+Rank, +N, -Term): the encoded literal of a numeric result.
num_term(0, N, n(N, 'http://www.w3.org/2001/XMLSchema#integer', L)) :- !,
    number_string(N, L).
num_term(1, N0, T) :- !,
    (   float(N0) -> N is rationalize(N0) ; N = N0 ),
    decimal_string(N, L),
    sparql_typed_literal(L, 'http://www.w3.org/2001/XMLSchema#decimal', T).
num_term(R, N0, T) :-
    rank_datatype(R, DT),
    to_float(N0, N),
    (   is_nan(N) -> T = t("NaN", DT)
    ;   is_inf(N) -> ( N > 0 -> T = t("INF", DT) ; T = t("-INF", DT) )
    ;   double_string(N, L),
        T = n(N, DT, L)
    ).

%   Canonical xsd:decimal lexical form of an integer or a rational with a
%   terminating decimal expansion: "-12.5", "3.0".
decimal_string(Q, L) :-
    (   Q < 0 -> Sign = "-", A is -Q ; Sign = "", A = Q ),
    I is floor(A),
    F is A - I,
    (   F =:= 0
    ->  Frac = "0"
    ;   rational(F, Num, Den),
        terminating_scale(Den, K),
        D is Num * (10^K // Den),
        frac_codes(D, K, Frac)
    ),
    format(string(L), "~w~d.~s", [Sign, I, Frac]).

%   The number of decimals of 1/Den; fails if Den is not 2^A*5^B.
terminating_scale(Den, K) :-
    factor_out(Den, 2, 0, A, D1),
    factor_out(D1, 5, 0, B, 1),
    K is max(A, B).

factor_out(D, P, A0, A, R) :-
    (   D mod P =:= 0
    ->  D1 is D // P, A1 is A0 + 1,
        factor_out(D1, P, A1, A, R)
    ;   A = A0, R = D
    ).

%   frac_codes(+N, +Scale, -Codes): the Scale-digit fraction N, without
%   trailing zeros ([] for zero).
frac_codes(_, 0, []) :- !.
frac_codes(N, K, Codes) :-
    number_codes(N, Ds),
    length(Ds, L),
    Pad is K - L,
    length(Zs, Pad),
    maplist(=(0'0), Zs),
    append(Zs, Ds, Cs0),
    strip_trailing_zeros(Cs0, Codes).

strip_trailing_zeros(Cs0, Cs) :-
    reverse(Cs0, R0),
    drop_zeros(R0, R),
    reverse(R, Cs).

drop_zeros([0'0|T], R) :- !, drop_zeros(T, R).
drop_zeros(R, R).

%   float_decimal(+F, -Neg, -N, -Scale): abs(F) = N / 10^Scale for the
%   shortest numeral that reads back as F (SWI-Prolog writes floats that
%   way), with no trailing zeros.
float_decimal(F, Neg, N, Scale) :-
    format(codes(Cs0), "~w", [F]),
    (   Cs0 = [0'-|Cs] -> Neg = true ; Neg = false, Cs = Cs0 ),
    (   append(M, [0'e|E0], Cs)
    ->  ( E0 = [0'+|E] -> true ; E = E0 ), number_codes(Exp, E)
    ;   M = Cs, Exp = 0
    ),
    append(I, [0'.|Fr], M), !,
    append(I, Fr, Ds),
    number_codes(N0, Ds),
    length(Fr, L),
    S0 is L - Exp,
    (   S0 < 0 -> N1 is N0 * 10^(-S0), S1 = 0 ; N1 = N0, S1 = S0 ),
    strip_scale(N1, S1, N, Scale).

strip_scale(N0, S0, N, S) :-
    S0 > 0, N0 mod 10 =:= 0, !,
    N1 is N0 // 10, S1 is S0 - 1,
    strip_scale(N1, S1, N, S).
strip_scale(N, S, N, S).

%   Canonical xsd:double lexical form (XSD 1.1): "1.5E2", "-3.0E-5", "0.0E0".
double_string(F, L) :-
    float_decimal(F, Neg, N, Scale),
    (   Neg == true -> Sign = "-" ; Sign = "" ),
    (   N =:= 0
    ->  format(string(L), "~w0.0E0", [Sign])
    ;   number_codes(N, [D1|Ds]),
        length(Ds, K),
        E is K - Scale,
        strip_trailing_zeros(Ds, Ds1),      % 1.5e300: N is 15 and 299 zeros
        ( Ds1 == [] -> Rest = [0'0] ; Rest = Ds1 ),
        format(string(L), "~w~c.~sE~d", [Sign, D1, Rest, E])
    ).


		 /*******************************
		 *          FUNCTIONS           *
		 *******************************/

%   builtin(?Name, ?Min, ?Max): builtin functions and their argument counts.
builtin('BOUND', 1, 1).
builtin('IF', 3, 3).
builtin('COALESCE', 0, inf).
builtin('STR', 1, 1).
builtin('LANG', 1, 1).
builtin('DATATYPE', 1, 1).
builtin('IRI', 1, 1).
builtin('URI', 1, 1).
builtin('ISIRI', 1, 1).
builtin('ISURI', 1, 1).
builtin('ISBLANK', 1, 1).
builtin('ISLITERAL', 1, 1).
builtin('ISNUMERIC', 1, 1).
builtin('SAMETERM', 2, 2).
builtin('LANGMATCHES', 2, 2).
builtin('REGEX', 2, 3).
builtin('STRLEN', 1, 1).
builtin('UCASE', 1, 1).
builtin('LCASE', 1, 1).
builtin('CONTAINS', 2, 2).
builtin('STRSTARTS', 2, 2).
builtin('STRENDS', 2, 2).
builtin('CONCAT', 0, inf).
builtin('SUBSTR', 2, 3).
builtin('ABS', 1, 1).
builtin('CEIL', 1, 1).
builtin('FLOOR', 1, 1).
builtin('ROUND', 1, 1).
builtin('STRDT', 2, 2).
builtin('STRLANG', 2, 2).
builtin('STRBEFORE', 2, 2).
builtin('STRAFTER', 2, 2).
builtin('ENCODE_FOR_URI', 1, 1).
builtin('REPLACE', 3, 4).
builtin('YEAR', 1, 1).
builtin('MONTH', 1, 1).
builtin('DAY', 1, 1).
builtin('HOURS', 1, 1).
builtin('MINUTES', 1, 1).
builtin('SECONDS', 1, 1).
builtin('TIMEZONE', 1, 1).
builtin('TZ', 1, 1).
builtin('MD5', 1, 1).
builtin('SHA1', 1, 1).
builtin('SHA256', 1, 1).
builtin('SHA384', 1, 1).
builtin('SHA512', 1, 1).
builtin('RAND', 0, 0).
builtin('NOW', 0, 0).
builtin('UUID', 0, 0).
builtin('STRUUID', 0, 0).
builtin('BNODE', 0, 1).
builtin('GETDURATION', 2, 2).
builtin('GETSTARTTIME', 2, 2).
builtin('GETENDTIME', 2, 2).

call_fn(F, Args, V) :-
    (   atom(F), builtin(F, Min, Max)
    ->  (   is_list(Args),
            length(Args, N), N >= Min, ( Max == inf -> true ; N =< Max ),
            catch(fn(F, Args, V0), E, ( fatal(E) -> throw(E) ; fail ))
        ->  V = V0
        ;   V = '$error'
        )
    ;   extension(F, Args, V)
    ).

%   fn(+Name, +Args, -Raw) is semidet: failure is an evaluation error.
fn('BOUND', [A], V) :-
    nonvar(A), A = var(X),
    (   var(X) -> V = bool(false, "false") ; V = bool(true, "true") ).
fn('IF', [C, A, B], V) :-
    truth(C, T),
    (   T == true -> ev(A, V)
    ;   T == false -> ev(B, V)
    ;   V = '$error'
    ).
fn('COALESCE', Args, V) :-
    coalesce(Args, V).
fn('STR', [A], s(L)) :-
    evv(A, X),
    (   iri(X) -> atom_string(X, L) ; lexical(X, L0), text_to_string(L0, L) ).
fn('LANG', [A], s(L)) :-
    evv(A, X),
    literal(X),
    (   X = l(_, Lang) -> atom_string(Lang, L) ; L = "" ).
fn('DATATYPE', [A], DT) :-
    evv(A, X),
    datatype(X, DT).
fn('IRI', [A], V) :-
    iri_fn(A, V).
fn('URI', [A], V) :-
    iri_fn(A, V).
fn('ISIRI', [A], V) :-
    type_test(A, iri, V).
fn('ISURI', [A], V) :-
    type_test(A, iri, V).
fn('ISBLANK', [A], V) :-
    type_test(A, blank, V).
fn('ISLITERAL', [A], V) :-
    type_test(A, literal, V).
fn('ISNUMERIC', [A], V) :-
    type_test(A, numeric, V).
fn('SAMETERM', [A, B], V) :-
    evv(A, X), X \== '$error',
    evv(B, Y), Y \== '$error',
    (   X == Y -> V = bool(true, "true") ; V = bool(false, "false") ).
fn('LANGMATCHES', [A, B], V) :-
    ev(A, s(Tag0)), ev(B, s(Range0)),
    string_lower(Tag0, Tag), string_lower(Range0, Range),
    (   lang_matches(Tag, Range) -> V = bool(true, "true") ; V = bool(false, "false") ).
fn('REGEX', [A, P|F], V) :-
    ev(A, X), string_lit(X, Text, _),
    ev(P, s(Pattern)),
    (   F == [] -> Flags = "" ; F = [FE], ev(FE, s(Flags)) ),
    regex(Text, Pattern, Flags, V).
fn('STRLEN', [A], '$n'(N, 0)) :-
    ev(A, X), string_lit(X, L, _),
    string_length(L, N).
fn('UCASE', [A], V) :-
    ev(A, X), string_lit(X, L, Lang),
    string_upper(L, U),
    string_lit(V, U, Lang).
fn('LCASE', [A], V) :-
    ev(A, X), string_lit(X, L, Lang),
    string_lower(L, U),
    string_lit(V, U, Lang).
fn('CONTAINS', [A, B], V) :-
    string_args(A, B, S1, S2),
    (   sub_string(S1, _, _, _, S2) -> V = bool(true, "true") ; V = bool(false, "false") ).
fn('STRSTARTS', [A, B], V) :-
    string_args(A, B, S1, S2),
    (   string_concat(S2, _, S1) -> V = bool(true, "true") ; V = bool(false, "false") ).
fn('STRENDS', [A, B], V) :-
    string_args(A, B, S1, S2),
    (   sub_string(S1, _, _, 0, S2) -> V = bool(true, "true") ; V = bool(false, "false") ).
fn('CONCAT', Args, V) :-
    concat_args(Args, Strs, Langs),
    atomics_to_string(Strs, S),
    (   Langs = [L|Ls], L \== '', maplist(==(L), Ls)
    ->  V = l(S, L)
    ;   V = s(S)
    ).
fn('SUBSTR', [A, B|C], V) :-
    ev(A, X), string_lit(X, L, Lang),
    ev(B, Y), num_val(Y, Start),
    (   C == [] -> Len = none ; C = [CE], ev(CE, Z), num_val(Z, Len) ),
    substring(L, Start, Len, Sub),
    string_lit(V, Sub, Lang).
fn('ABS', [A], '$n'(N, R)) :-
    ev(A, X), num(X, N0, R),
    (   R >= 2, is_nan(N0) -> N = N0 ; N is abs(N0) ).
fn('CEIL', [A], '$n'(N, R)) :-
    ev(A, X), num(X, N0, R),
    rounding(ceiling, R, N0, N).
fn('FLOOR', [A], '$n'(N, R)) :-
    ev(A, X), num(X, N0, R),
    rounding(floor, R, N0, N).
fn('ROUND', [A], '$n'(N, R)) :-
    ev(A, X), num(X, N0, R),
    rounding(round, R, N0, N).
fn('STRDT', [A, B], T) :-
    ev(A, s(L)),
    ev(B, DT), iri(DT),
    DT \== 'http://www.w3.org/1999/02/22-rdf-syntax-ns#langString',
    sparql_typed_literal(L, DT, T).
fn('STRLANG', [A, B], l(S, Lang)) :-
    ev(A, s(L)),
    ev(B, s(Tag)),
    valid_lang(Tag),
    text_to_string(L, S),
    string_lower(Tag, Lower), atom_string(Lang, Lower).
fn('STRBEFORE', [A, B], V) :-
    string_args(A, B, S1, S2, Lang),
    (   sub_string(S1, Before, _, _, S2)
    ->  sub_string(S1, 0, Before, _, R),
        string_lit(V, R, Lang)
    ;   V = s("")
    ).
fn('STRAFTER', [A, B], V) :-
    string_args(A, B, S1, S2, Lang),
    (   sub_string(S1, _, _, After, S2)
    ->  sub_string(S1, _, After, 0, R),
        string_lit(V, R, Lang)
    ;   V = s("")
    ).
fn('ENCODE_FOR_URI', [A], s(Enc)) :-
    ev(A, X), string_lit(X, L, _),
    encode_for_uri(L, Enc).
fn('REPLACE', [A, P, W|F], V) :-
    ev(A, X), string_lit(X, Text, Lang),
    ev(P, s(Pattern)),
    ev(W, s(With)),
    (   F == [] -> Flags = "" ; F = [FE], ev(FE, s(Flags)) ),
    replace(Text, Pattern, With, Flags, R),
    string_lit(V, R, Lang).
fn('YEAR', [A], '$n'(Y, 0)) :-
    datetime_fields(A, Y, _, _, _, _).
fn('MONTH', [A], '$n'(M, 0)) :-
    datetime_fields(A, _, M, _, _, _).
fn('DAY', [A], '$n'(D, 0)) :-
    datetime_fields(A, _, _, D, _, _).
fn('HOURS', [A], '$n'(H, 0)) :-
    datetime_fields(A, _, _, _, time(H, _, _, _), _).
fn('MINUTES', [A], '$n'(M, 0)) :-
    datetime_fields(A, _, _, _, time(_, M, _, _), _).
fn('SECONDS', [A], '$n'(S, 1)) :-
    datetime_fields(A, _, _, _, time(_, _, S0, F), _),
    (   F == []
    ->  S = S0
    ;   length(F, K), number_codes(FN, [0'0|F]),
        S is (S0*10^K + FN) rdiv 10^K
    ).
fn('TIMEZONE', [A], dur(Secs, 'http://www.w3.org/2001/XMLSchema#dayTimeDuration', Lex)) :-
    datetime_fields(A, _, _, _, _, Tz),
    Tz \== none,
    (   Tz == z
    ->  Secs = 0, Lex = "PT0S"
    ;   Tz = tz(Sign, H, M),
        Secs is Sign*(H*3600 + M*60),
        with_output_to(string(Lex),
                       ( ( Sign < 0, Secs =\= 0 -> write('-PT') ; write('PT') ),
                         ( H > 0 -> format("~dH", [H]) ; true ),
                         ( M > 0 -> format("~dM", [M]) ; true ),
                         ( Secs =:= 0 -> write('0S') ; true ) ))
    ).
fn('TZ', [A], s(L)) :-
    datetime_fields(A, _, _, _, _, Tz),
    (   Tz == none -> L = ""
    ;   Tz == z -> L = "Z"
    ;   Tz = tz(Sign, H, M),
        ( Sign < 0 -> C = 0'- ; C = 0'+ ),
        format(string(L), "~c~|~`0t~d~2+:~|~`0t~d~2+", [C, H, M])
    ).
fn('MD5', [A], s(H)) :-
    hash_arg(A, S), hash_hex(md5, S, H).
fn('SHA1', [A], s(H)) :-
    hash_arg(A, S), hash_hex(sha1, S, H).
fn('SHA256', [A], s(H)) :-
    hash_arg(A, S), hash_hex(sha256, S, H).
fn('SHA384', [A], s(H)) :-
    hash_arg(A, S), hash_hex(sha384, S, H).
fn('SHA512', [A], s(H)) :-
    hash_arg(A, S), hash_hex(sha512, S, H).
fn('RAND', [], '$n'(X, 3)) :-
    X is random_float.
fn('NOW', [], V) :-
    get_time(T),
    sparql_seconds_datetime(T, V).
fn('UUID', [], IRI) :-
    have_uuid,
    uuid(U),
    atom_concat('urn:uuid:', U, IRI).
fn('STRUUID', [], s(S)) :-
    have_uuid,
    uuid(U),
    atom_string(U, S).
fn('BNODE', Args, b(Id)) :-
    (   Args = [A] -> ev(A, X), X = s(_) ; true ),
    flag(ep_sparql_bnode, N, N + 1),
    atom_concat(sparql_bnode_, N, Id).
fn('GETDURATION', [S, E], '$dur'(D)) :-
    time_arg(S, TS), time_arg(E, TE),
    D is TE - TS.
fn('GETSTARTTIME', [S, _], '$dt'(T)) :-
    time_arg(S, T0),
    T is float(T0) + 0.0.
fn('GETENDTIME', [_, E], '$dt'(T)) :-
    time_arg(E, T0),
    T is float(T0) + 0.0.

coalesce([], '$error').
coalesce([E|Es], V) :-
    ev(E, X),
    (   X == '$error' -> coalesce(Es, V) ; V = X ).

iri(X) :- atom(X), X \== '$error'.

lexical(s(L), L).
lexical(l(L, _), L).
lexical(n(_, _, L), L).
lexical(X, L) :- number(X), lifted(X, n(_, _, L)).
lexical(d(_, _, L), L).
lexical(dur(_, _, L), L).
lexical(bool(_, L), L).
lexical(t(L, _), L).

datatype(s(_), 'http://www.w3.org/2001/XMLSchema#string').
datatype(l(_, _), 'http://www.w3.org/1999/02/22-rdf-syntax-ns#langString').
datatype(n(_, DT, _), DT).
datatype(X, DT) :- number(X), lifted(X, n(_, DT, _)).
datatype(d(_, DT, _), DT).
datatype(dur(_, DT, _), DT).
datatype(bool(_, _), 'http://www.w3.org/2001/XMLSchema#boolean').
datatype(t(_, DT), DT).

iri_fn(A, V) :-
    evv(A, X),
    (   iri(X)
    ->  V = X
    ;   X = s(L),
        valid_iri(L),
        atom_string(V, L)
    ).

%   No base IRI: the string must be usable as an IRI as it is.
valid_iri(L) :-
    string_codes(L, Cs),
    Cs \== [],
    \+ ( member(C, Cs), iri_forbidden(C) ).

iri_forbidden(C) :- C =< 0x20.
iri_forbidden(0'<).
iri_forbidden(0'>).
iri_forbidden(0'").
iri_forbidden(0'{).
iri_forbidden(0'}).
iri_forbidden(0'|).
iri_forbidden(0'^).
iri_forbidden(0'`).
iri_forbidden(0'\\).

type_test(A, Type, V) :-
    ev(A, X),
    X \== '$error',
    (   is_type(Type, X) -> V = bool(true, "true") ; V = bool(false, "false") ).

is_type(iri, X) :- atom(X).
is_type(blank, b(_)).
is_type(literal, X) :- literal(X).
is_type(numeric, X) :- num_val(X, _).

lang_matches(Tag, "*") :- !,
    Tag \== "".
lang_matches(Tag, Range) :-
    (   Tag == Range
    ->  true
    ;   string_concat(Range, Rest, Tag),
        sub_string(Rest, 0, 1, _, "-")
    ).

valid_lang(Tag) :-
    string_codes(Tag, Cs),
    phrase(lang_tag, Cs).

lang_tag --> alphas(1, 8), lang_subtags.
lang_subtags --> "-", !, alnums(1, 8), lang_subtags.
lang_subtags --> [].

alphas(Min, Max) --> counted(alpha_code, 0, N), { N >= Min, N =< Max }.
alnums(Min, Max) --> counted(alnum_code, 0, N), { N >= Min, N =< Max }.

counted(G, N0, N) --> [C], { call(G, C) }, !, { N1 is N0 + 1 }, counted(G, N1, N).
counted(_, N, N) --> [].

alpha_code(C) :- between(0'a, 0'z, C), ! ; between(0'A, 0'Z, C).
alnum_code(C) :- alpha_code(C), ! ; between(0'0, 0'9, C).

%   string_lit(?Term, ?Lex, ?Lang): a string literal ('' for no language).
string_lit(s(L), L, '') :- !.
string_lit(l(L, Lang), L, Lang).

%   Argument compatibility of CONTAINS, STRSTARTS, STRENDS, STRBEFORE,
%   STRAFTER (17.4.3.1.3); Lang is the first argument's.
string_args(A, B, S1, S2) :-
    string_args(A, B, S1, S2, _).

string_args(A, B, S1, S2, Lang1) :-
    ev(A, X), ev(B, Y),
    string_lit(X, L1, Lang1),
    string_lit(Y, L2, Lang2),
    (   Lang2 == '' -> true ; Lang1 == Lang2 ),
    text_to_string(L1, S1),
    text_to_string(L2, S2).

%   ENCODE_FOR_URI: every UTF-8 byte but the unreserved characters is %XX.
encode_for_uri(L, Enc) :-
    string_codes(L, Cs),
    phrase(utf8_bytes(Cs), Bytes),
    foldl(percent_byte, Bytes, Out, []),
    string_codes(Enc, Out).

utf8_bytes([]) --> [].
utf8_bytes([C|Cs]) --> utf8_char(C), utf8_bytes(Cs).

utf8_char(C) --> { C < 0x80 }, !, [C].
utf8_char(C) --> { C < 0x800 }, !,
    { B1 is 0xC0 \/ (C >> 6), B2 is 0x80 \/ (C /\ 0x3F) }, [B1, B2].
utf8_char(C) --> { C < 0x10000 }, !,
    { B1 is 0xE0 \/ (C >> 12), B2 is 0x80 \/ ((C >> 6) /\ 0x3F), B3 is 0x80 \/ (C /\ 0x3F) },
    [B1, B2, B3].
utf8_char(C) -->
    { B1 is 0xF0 \/ (C >> 18), B2 is 0x80 \/ ((C >> 12) /\ 0x3F),
      B3 is 0x80 \/ ((C >> 6) /\ 0x3F), B4 is 0x80 \/ (C /\ 0x3F) },
    [B1, B2, B3, B4].

percent_byte(B, [B|T], T) :-
    unreserved(B), !.
percent_byte(B, [0'%, H1, H2|T], T) :-
    Hi is B >> 4, Lo is B /\ 0xF,
    hex_digit(Hi, H1), hex_digit(Lo, H2).

unreserved(C) :- between(0'A, 0'Z, C), !.
unreserved(C) :- between(0'a, 0'z, C), !.
unreserved(C) :- between(0'0, 0'9, C), !.
unreserved(C) :- memberchk(C, `-._~`).

hex_digit(N, C) :- N < 10, !, C is 0'0 + N.
hex_digit(N, C) :- C is 0'A + N - 10.

%   MD5, SHA*: of a simple literal or xsd:string, lower-case hex.
hash_arg(A, S) :-
    have_hashes,
    ev(A, s(L)),
    text_to_string(L, S).

hash_hex(md5, S, H) :- !,
    md5_hash(S, A, [encoding(utf8)]),
    atom_string(A, H).
hash_hex(Alg, S, H) :-
    sha_hash(S, Hash, [algorithm(Alg), encoding(utf8)]),
    hash_atom(Hash, A),
    atom_string(A, H).

%   datetime_fields(+Expr, -Year, -Month, -Day, -Time, -Tz): the fields of
%   the lexical form of an xsd:dateTime (or xsd:date) value, in its own
%   timezone.  Time is time(H, Mi, S, FracCodes) (none for a date), Tz
%   `none`, `z` or tz(Sign, H, M).
datetime_fields(A, Y, Mo, D, Time, Tz) :-
    evv(A, d(_, DT, L)),
    time_family(DT, _),
    string_codes(L, Cs),
    phrase(dt_fields(Y, Mo, D, Time, Tz), Cs).

dt_fields(Y, Mo, D, Time, Tz) -->
    year(Y), "-", two_digits(Mo), "-", two_digits(D),
    (   "T"
    ->  two_digits(H), ":", two_digits(Mi), ":", two_digits(S),
        ( "." -> digits1(F) ; { F = [] } ),
        { Time = time(H, Mi, S, F) }
    ;   { Time = none }
    ),
    tz_fields(Tz).

tz_fields(z) --> "Z", !.
tz_fields(tz(S, H, M)) -->
    ( "+" -> { S = 1 } ; "-", { S = -1 } ), !,
    two_digits(H), ":", two_digits(M).
tz_fields(none) --> [].

concat_args([], [], []).
concat_args([E|Es], [L|Ls], [Lang|Langs]) :-
    ev(E, X),
    string_lit(X, L, Lang),
    concat_args(Es, Ls, Langs).

%   XPath fn:substring: the characters at positions P (from 1) with
%   round(Start) =< P < round(Start) + round(Len).
substring(L, Start, Len, Sub) :-
    string_length(L, N),
    xround(Start, RS),
    (   Len == none
    ->  RE is N + 1
    ;   xround(Len, RL),
        (   integer(RS), integer(RL)
        ->  RE is RS + RL
        ;   float_arith(add, RS, RL, RE)
        )
    ),
    (   ( float(RS), is_nan(RS) ; float(RE), is_nan(RE) )
    ->  Sub = ""
    ;   First0 is max(1, min(N + 1, RS)),
        End0 is max(1, min(N + 1, RE)),
        First is integer(First0), End is integer(End0),
        (   End > First
        ->  B is First - 1, Len1 is End - First,
            sub_string(L, B, Len1, _, Sub0), text_to_string(Sub0, Sub)
        ;   Sub = ""
        )
    ).

%   fn:round: halves towards positive infinity.
xround(X, X) :- integer(X), !.
xround(X, R) :- float(X), !,
    (   ( is_nan(X) ; is_inf(X) ) -> R = X
    ;   F is floor(X), D is X - F,
        (   D >= 0.5 -> R is float(F + 1) ; R is float(F) )
    ).
xround(X, R) :-                          % rational
    R is floor(X + 1 rdiv 2).

rounding(_, 0, N, N) :- !.
rounding(round, R, N0, N) :- !,
    (   R =:= 1 -> N is floor(N0 + 1 rdiv 2) ; xround(N0, N) ).
rounding(F, R, N0, N) :-
    (   R =:= 1
    ->  G =.. [F, N0], N is G
    ;   ( is_nan(N0) ; is_inf(N0) )
    ->  N = N0
    ;   G =.. [F, N0], N is float(G)
    ).

time_arg(X, X) :- finite(X), !.
time_arg(var(X), X) :- finite(X), !.
time_arg(const(X), X) :- finite(X).

finite(X) :- integer(X), !.
finite(X) :- rational(X), !.                  % an exact time
finite(X) :- float(X), \+ is_nan(X), \+ is_inf(X).

%   Extension functions.
extension(F, Args, V) :-
    (   atom(F),
        registered_function(F, Closure, Arity),
        is_list(Args)
    ->  maplist(evv, Args, Vals),
        length(Vals, N),
        (   \+ memberchk('$error', Vals),
            ( Arity == any -> true ; Arity =:= N + 1 ),
            append(Vals, [R], CallArgs),
            Goal =.. [call, Closure|CallArgs],
            catch(Goal, E, ( fatal(E) -> throw(E) ; note_function_error(F, Vals, E), fail ))
        ->  ext_result(R, V)
        ;   V = '$error'
        )
    ;   V = '$error'
    ).

fatal(E) :- var(E), !, fail.
fatal('$aborted').
fatal(time_limit_exceeded).
fatal(unwind(_)).

ext_result(R, V) :-
    (   var(R) -> V = '$error'
    ;   number(R) -> lifted(R, V)       % xsd:integer / xsd:double (Python encodes them so)
    ;   R == '$error' -> V = R
    ;   encoded(R) -> V = R
    ;   V = '$error'
    ).


		 /*******************************
		 *            REGEX             *
		 *******************************/

%   XPath/SPARQL regular expressions on PCRE2: flags i (caseless), s
%   (dot matches newlines), m (multiline), x (whitespace outside
%   character classes removed, as XPath says; not PCRE's extended mode),
%   q (the pattern is a literal string, XPath 3.1).  `$` matches only at
%   the very end unless m is given (XPath), `.` matches no CR or LF, and
%   \w, \d, \s are Unicode-aware (ucp).  Not XPath: character class
%   subtraction [a-z-[aeiou]], \i, \c and \p{IsBlock}; PCRE-only syntax
%   (lookaround, possessive quantifiers) is accepted.  An invalid pattern
%   or flag is an evaluation error.
regex(Text, Pattern, Flags, V) :-
    have_pcre,
    string_chars(Flags, FCs),
    regex_options(FCs, Opts0, Mode),
    text_to_string(Pattern, P0),
    regex_pattern(Mode, P0, P),
    append(Opts0, [dollar_endonly(true), ucp(true), newline(anycrlf)], Opts),
    text_to_string(Text, T),
    catch(( re_match(P, T, Opts) -> V = bool(true, "true") ; V = bool(false, "false") ),
          E, ( fatal(E) -> throw(E) ; fail )).

%   REPLACE: XPath fn:replace, all matches.  In the replacement, $N is
%   group N and \$, \\ are escapes; any other $ or \ is an error, as is
%   a pattern that matches the empty string.  Flags as for REGEX.
replace(Text, Pattern, With, Flags, Result) :-
    have_pcre,
    string_chars(Flags, FCs),
    regex_options(FCs, Opts0, Mode),
    text_to_string(Pattern, P0),
    regex_pattern(Mode, P0, P),
    append(Opts0, [dollar_endonly(true), ucp(true), newline(anycrlf)], Opts),
    string_codes(With, WCs),
    (   Mode == quote
    ->  foldl(literal_replacement, WCs, RCs, [])
    ;   phrase(xpath_replacement(RCs), WCs)
    ),
    string_codes(R, RCs),
    text_to_string(Text, T),
    \+ re_match(P, "", Opts),
    re_replace(P/g, R, T, Result0, Opts),
    text_to_string(Result0, Result).

xpath_replacement([0'$, 0'{|Cs]) -->
    "$", digits1(Ds), !,
    { append(Ds, [0'}|T], Cs) },
    xpath_replacement(T).
xpath_replacement([0'$, 0'$|T]) -->
    "\\$", !,
    xpath_replacement(T).
xpath_replacement([0'\\, 0'\\|T]) -->
    "\\\\", !,
    xpath_replacement(T).
xpath_replacement([C|T]) -->
    [C], { C \== 0'$, C \== 0'\\ }, !,
    xpath_replacement(T).
xpath_replacement([]) --> [].

literal_replacement(0'$, [0'$, 0'$|T], T) :- !.
literal_replacement(0'\\, [0'\\, 0'\\|T], T) :- !.
literal_replacement(C, [C|T], T).

regex_options([], [], plain).
regex_options([C|Cs], Opts, Mode) :-
    regex_options(Cs, Opts0, Mode0),
    (   C == i -> Opts = [caseless(true)|Opts0], Mode = Mode0
    ;   C == s -> Opts = [dotall(true)|Opts0], Mode = Mode0
    ;   C == m -> Opts = [multiline(true)|Opts0], Mode = Mode0
    ;   C == x -> Opts = Opts0, ( Mode0 == quote -> Mode = quote ; Mode = strip )
    ;   C == q -> Opts = Opts0, Mode = quote
    ).

regex_pattern(plain, P, P).
regex_pattern(strip, P0, P) :-
    string_codes(P0, Cs0),
    strip_ws(Cs0, out, Cs),
    string_codes(P, Cs).
regex_pattern(quote, P0, P) :-
    string_codes(P0, Cs0),
    foldl(quote_code, Cs0, Cs, []),
    string_codes(P, Cs).

quote_code(C, [0'\\, C|T], T) :-
    memberchk(C, `\\^$.|?*+()[]{}`), !.
quote_code(C, [C|T], T).

%   Whitespace outside character classes goes; escapes are kept whole.
strip_ws([], _, []).
strip_ws([0'\\, C|T], S, [0'\\, C|R]) :- !,
    strip_ws(T, S, R).
strip_ws([C|T], out, R) :-
    xml_space(C), !,
    strip_ws(T, out, R).
strip_ws([0'[|T], S, [0'[|R]) :- !,
    (   S == out -> strip_ws(T, in(1), R)
    ;   S = in(D), D1 is D + 1, strip_ws(T, in(D1), R)
    ).
strip_ws([0']|T], in(D), [0']|R]) :- !,
    (   D =:= 1 -> strip_ws(T, out, R) ; D1 is D - 1, strip_ws(T, in(D1), R) ).
strip_ws([C|T], S, [C|R]) :-
    strip_ws(T, S, R).

xml_space(0'\s).
xml_space(0'\t).
xml_space(0'\n).
xml_space(0'\r).


		 /*******************************
		 *     DATATYPES AND LEXICAL    *
		 *******************************/

num_rank('http://www.w3.org/2001/XMLSchema#integer', 0).
num_rank('http://www.w3.org/2001/XMLSchema#decimal', 1).
num_rank('http://www.w3.org/2001/XMLSchema#float', 2).
num_rank('http://www.w3.org/2001/XMLSchema#double', 3).
num_rank('http://www.w3.org/2001/XMLSchema#int', 0).
num_rank('http://www.w3.org/2001/XMLSchema#long', 0).
num_rank('http://www.w3.org/2001/XMLSchema#short', 0).
num_rank('http://www.w3.org/2001/XMLSchema#byte', 0).
num_rank('http://www.w3.org/2001/XMLSchema#nonNegativeInteger', 0).
num_rank('http://www.w3.org/2001/XMLSchema#positiveInteger', 0).
num_rank('http://www.w3.org/2001/XMLSchema#negativeInteger', 0).
num_rank('http://www.w3.org/2001/XMLSchema#nonPositiveInteger', 0).
num_rank('http://www.w3.org/2001/XMLSchema#unsignedLong', 0).
num_rank('http://www.w3.org/2001/XMLSchema#unsignedInt', 0).
num_rank('http://www.w3.org/2001/XMLSchema#unsignedShort', 0).
num_rank('http://www.w3.org/2001/XMLSchema#unsignedByte', 0).

float_rank('http://www.w3.org/2001/XMLSchema#float', 2).
float_rank('http://www.w3.org/2001/XMLSchema#double', 3).

rank_datatype(0, 'http://www.w3.org/2001/XMLSchema#integer').
rank_datatype(1, 'http://www.w3.org/2001/XMLSchema#decimal').
rank_datatype(2, 'http://www.w3.org/2001/XMLSchema#float').
rank_datatype(3, 'http://www.w3.org/2001/XMLSchema#double').

%   int_range(?Datatype, ?Min, ?Max): `none` for no bound.
int_range('http://www.w3.org/2001/XMLSchema#integer', none, none).
int_range('http://www.w3.org/2001/XMLSchema#nonPositiveInteger', none, 0).
int_range('http://www.w3.org/2001/XMLSchema#negativeInteger', none, -1).
int_range('http://www.w3.org/2001/XMLSchema#nonNegativeInteger', 0, none).
int_range('http://www.w3.org/2001/XMLSchema#positiveInteger', 1, none).
int_range('http://www.w3.org/2001/XMLSchema#long', -9223372036854775808, 9223372036854775807).
int_range('http://www.w3.org/2001/XMLSchema#int', -2147483648, 2147483647).
int_range('http://www.w3.org/2001/XMLSchema#short', -32768, 32767).
int_range('http://www.w3.org/2001/XMLSchema#byte', -128, 127).
int_range('http://www.w3.org/2001/XMLSchema#unsignedLong', 0, 18446744073709551615).
int_range('http://www.w3.org/2001/XMLSchema#unsignedInt', 0, 4294967295).
int_range('http://www.w3.org/2001/XMLSchema#unsignedShort', 0, 65535).
int_range('http://www.w3.org/2001/XMLSchema#unsignedByte', 0, 255).

%   special_float(+Lex, -Float): the value of a float/double lexical form
%   that is not a finite float: the XSD specials, rdflib's "inf"/"nan",
%   and numerals beyond the float range.
special_float(L, V) :-
    is_text(L),
    text_to_string(L, S),
    (   special_lex(S, V)
    ->  true
    ;   string_codes(S, Cs),
        phrase(double_parts(Neg, _, _, _), Cs),
        \+ double_value(Cs, _),                % beyond the float range
        ( Neg == true -> V is -inf ; V is inf )
    ).

special_lex("INF", V) :- V is inf.
special_lex("+INF", V) :- V is inf.
special_lex("-INF", V) :- V is -inf.
special_lex("NaN", V) :- V is nan.
special_lex("inf", V) :- V is inf.
special_lex("-inf", V) :- V is -inf.
special_lex("nan", V) :- V is nan.

%   lexical_term(+Datatype, +Lex, -Term) is semidet: fails if ill-typed.
lexical_term('http://www.w3.org/2001/XMLSchema#string', L, s(L)) :- !.
lexical_term('http://www.w3.org/2001/XMLSchema#boolean', L, bool(B, L)) :- !,
    boolean_lex(L, B).
lexical_term(DT, L, n(V, DT, L)) :-
    int_range(DT, Min, Max), !,
    string_codes(L, Cs),
    phrase(integer_lex(V), Cs),
    ( Min == none -> true ; V >= Min ),
    ( Max == none -> true ; V =< Max ).
lexical_term('http://www.w3.org/2001/XMLSchema#decimal', L, n(V, 'http://www.w3.org/2001/XMLSchema#decimal', L)) :- !,
    string_codes(L, Cs),
    phrase(decimal_parts(Neg, I, F), Cs),
    decimal_float(Neg, I, F, [], V).
lexical_term(DT, L, n(V, DT, L)) :-
    float_rank(DT, _), !,
    string_codes(L, Cs),
    double_value(Cs, V).
lexical_term(DT, L, d(V, DT, L)) :-
    time_family(DT, Family), !,
    string_codes(L, Cs),
    (   Family == date
    ->  phrase(date_lex(V), Cs)
    ;   ( DT == 'http://www.w3.org/2001/XMLSchema#dateTimeStamp' -> NeedTz = true ; NeedTz = false ),
        phrase(datetime_lex(NeedTz, V), Cs)
    ).
lexical_term(DT, L, dur(V, DT, L)) :-
    duration_kind(DT, Kind), !,
    string_codes(L, Cs),
    phrase(duration_lex(Kind, V), Cs).

duration_kind('http://www.w3.org/2001/XMLSchema#duration', all).
duration_kind('http://www.w3.org/2001/XMLSchema#dayTimeDuration', daytime).
duration_kind('http://www.w3.org/2001/XMLSchema#yearMonthDuration', yearmonth).

boolean_lex("true", true).
boolean_lex("1", true).
boolean_lex("false", false).
boolean_lex("0", false).

%   Numerals (ASCII digits only).
integer_lex(V) -->
    sign(Neg), digits1(Ds),
    { number_codes(N, [0'0|Ds]), ( Neg == true -> V is -N ; V = N ) }.

sign(true) --> "-", !.
sign(false) --> "+", !.
sign(false) --> [].

digits1([D|T]) --> digit(D), digits0(T).
digits0([D|T]) --> digit(D), !, digits0(T).
digits0([]) --> [].
digit(D) --> [D], { between(0'0, 0'9, D) }.

%   [+-]? (digits ('.' digits?)? | '.' digits)
decimal_parts(Neg, I, F) -->
    sign(Neg),
    (   digits1(I)
    ->  ( "." -> digits0(F) ; { F = [] } )
    ;   ".", digits1(F), { I = [0'0] }
    ).

double_parts(Neg, I, F, E) -->
    decimal_parts(Neg, I, F),
    (   ( "e" ; "E" )
    ->  sign(ENeg), digits1(ED),
        { number_codes(E0, [0'0|ED]), ( ENeg == true -> E is -E0 ; E = E0 ) }
    ;   { E = 0 }
    ).

%   The float of a decimal numeral, read as text (correctly rounded, as
%   Python's float()); fails if it is beyond the float range.
decimal_float(Neg, I, F, ExpCs, V) :-
    ( F == [] -> FD = [0'0] ; FD = F ),
    ( Neg == true -> S = [0'-|I] ; S = I ),
    append([S, [0'.], FD, ExpCs], Text),
    catch(number_codes(V, Text), error(syntax_error(_), _), fail),
    float(V).

double_value(Cs, V) :-
    phrase(double_parts(Neg, I, F, E), Cs),
    (   all_zero(I), all_zero(F)
    ->  zero(Neg, V)                            % whatever the exponent
    ;   format(codes(ExpCs), "e~d", [E]),
        (   decimal_float(Neg, I, F, ExpCs, V0)
        ->  V = V0
        ;   E < 0                               % exponent beyond the reader: underflow
        ->  zero(Neg, V)
        )
    ).

zero(true, -0.0).
zero(false, 0.0).

all_zero(Cs) :- \+ ( member(C, Cs), C \== 0'0 ).

%   Dates and times.
year(Y) -->
    ( "-" -> { Sg = -1 } ; { Sg = 1 } ),
    digits1(Ds),
    {   length(Ds, L), L >= 4,
        ( L > 4 -> Ds \= [0'0|_] ; true ),
        number_codes(N, [0'0|Ds]),
        Y is Sg*N
    }.

two_digits(N) -->
    digit(A), digit(B),
    { N is (A - 0'0)*10 + B - 0'0 }.

date_part(Days) -->
    year(Y), "-", two_digits(M), "-", two_digits(D),
    { valid_date(Y, M, D), days_from_civil(Y, M, D, Days) }.

timezone(Off, true) -->
    "Z", !, { Off = 0 }.
timezone(Off, true) -->
    ( "+" -> { S = 1 } ; "-", { S = -1 } ), !,
    two_digits(H), ":", two_digits(M),
    { M =< 59, ( H < 14 ; H =:= 14, M =:= 0 ), Off is S*(H*3600 + M*60) }.
timezone(0, false) --> [].

date_lex(V) -->
    date_part(Days), timezone(Off, _),
    { W is Days*86400 - Off, catch(V is float(W), _, fail) }.

datetime_lex(NeedTz, V) -->
    date_part(Days), "T",
    two_digits(H), ":", two_digits(Mi), ":", two_digits(S),
    ( "." -> digits1(F0) ; { F0 = [] } ),
    timezone(Off, HasTz),
    {   ( NeedTz == true -> HasTz == true ; true ),
        Mi =< 59, S =< 59,
        strip_trailing_zeros(F0, F),
        ( H < 24 -> true ; H =:= 24, Mi =:= 0, S =:= 0, F == [] ),
        W is Days*86400 + H*3600 + Mi*60 + S - Off,
        exact_float(W, F, V)
    }.

valid_date(Y, M, D) :-
    between(1, 12, M),
    D >= 1,
    month_days(M, Y, Max),
    D =< Max.

month_days(2, Y, D) :- !,
    (   Y mod 4 =:= 0, ( Y mod 100 =\= 0 ; Y mod 400 =:= 0 ) -> D = 29 ; D = 28 ).
month_days(M, _, D) :-
    nth1(M, [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31], D).

%   exact_float(+Whole, +FracCodes, -Float): the float nearest to
%   Whole + 0.Frac, read from its decimal numeral (as codec.py does).
exact_float(W, [], V) :- !,
    catch(V0 is float(W), _, fail),
    V is V0 + 0.0.
exact_float(W, F, V) :-
    length(F, K),
    number_codes(FN, [0'0|F]),
    P is 10^K,
    N is W*P + FN,
    A is abs(N),
    I is A // P,
    R is A mod P,
    frac_pad(R, K, RC),
    number_codes(I, IC),
    ( N < 0 -> S = [0'-|IC] ; S = IC ),
    append([S, [0'.], RC], Text),
    catch(number_codes(V0, Text), error(syntax_error(_), _), fail),
    V is V0 + 0.0.

frac_pad(R, K, Cs) :-
    number_codes(R, Ds),
    length(Ds, L),
    Pad is K - L,
    length(Zs, Pad),
    maplist(=(0'0), Zs),
    append(Zs, Ds, Cs).

%   Proleptic Gregorian calendar, year 0 = 1 BCE (H. Hinnant's algorithms).
days_from_civil(Y0, M, D, Days) :-
    ( M =< 2 -> Y is Y0 - 1 ; Y = Y0 ),
    Era is Y div 400,
    Yoe is Y - Era*400,
    Doy is (153*((M + 9) mod 12) + 2) // 5 + D - 1,
    Doe is Yoe*365 + Yoe // 4 - Yoe // 100 + Doy,
    Days is Era*146097 + Doe - 719468.

civil_from_days(Z0, Y, M, D) :-
    Z is Z0 + 719468,
    Era is Z div 146097,
    Doe is Z - Era*146097,
    Yoe is (Doe - Doe // 1460 + Doe // 36524 - Doe // 146096) // 365,
    Doy is Doe - (365*Yoe + Yoe // 4 - Yoe // 100),
    Mp is (5*Doy + 2) // 153,
    D is Doy - (153*Mp + 2) // 5 + 1,
    ( Mp < 10 -> M is Mp + 3 ; M is Mp - 9 ),
    ( M =< 2 -> Y is Yoe + Era*400 + 1 ; Y is Yoe + Era*400 ).

%   Durations: [-]P[nY][nM][nD][T[nH][nM][n[.n]S]], a month = 30 days,
%   a year = 365 days.
duration_lex(Kind, V) -->
    sign_minus(Neg), "P",
    opt_component(0'Y, Y), opt_component(0'M, Mo), opt_component(0'D, D),
    (   "T"
    ->  { T = true },
        opt_component(0'H, H), opt_component(0'M, Mi), opt_seconds(S)
    ;   { T = false, H = none, Mi = none, S = none }
    ),
    {   Comps = [Y, Mo, D, H, Mi, S],
        \+ maplist(==(none), Comps),
        ( T == true -> \+ maplist(==(none), [H, Mi, S]) ; true ),
        ( Kind == daytime -> Y == none, Mo == none ; true ),
        ( Kind == yearmonth -> D == none, T == false ; true ),
        maplist(zero_none, [Y, Mo, D, H, Mi], [Yn, Mon, Dn, Hn, Min]),
        ( S = sec(SI, F0) -> true ; SI = 0, F0 = [] ),
        strip_trailing_zeros(F0, F),
        W is (((Yn*365 + Mon*30 + Dn)*24 + Hn)*60 + Min)*60 + SI,
        (   F == []
        ->  ( Neg == true -> V is -W ; V = W )
        ;   number_codes(W, WC),
            ( Neg == true -> Text0 = [0'-|WC] ; Text0 = WC ),
            append([Text0, [0'.], F], Text),
            catch(number_codes(V, Text), error(syntax_error(_), _), fail)
        )
    }.

sign_minus(true) --> "-", !.
sign_minus(false) --> [].

opt_component(Letter, N) -->
    (   digits1(Ds), [Letter]
    ->  { number_codes(N, [0'0|Ds]) }
    ;   { N = none }
    ).

opt_seconds(S) -->
    (   seconds_numeral(I, F), "S"
    ->  { number_codes(SI, [0'0|I]), S = sec(SI, F) }
    ;   { S = none }
    ).

seconds_numeral(I, F) -->
    (   digits1(I)
    ->  ( "." -> digits0(F) ; { F = [] } )
    ;   ".", digits1(F), { I = [0'0] }
    ).

zero_none(none, 0) :- !.
zero_none(N, N).
