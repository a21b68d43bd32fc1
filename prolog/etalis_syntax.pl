/*  Reading ETALIS rule, database and stream files.

    ETALIS declares its event operators globally, with its own priorities
    (lower binds tighter):

        seq equals meets during starts finishes forall_seq ntimes  1025 yfx
        cnot fnot not                                               1031 yfx
        and                                                         1040 yfx
        par  #                                                      1045 yfx
        check timestamp event_multiply                              1050 yfx
        or                                                          1053 yfx
        within                                                      1055 xfy
        where                                                       1060 yfx
        do                                                          1124 yfx
        <-  'rule:'  iff                                            1200 xfy
        star_times                                                   200 xf

    each also in its capitalised and upper-case form (Seq, SEQ, ...), and
    quoted or not ('seq' is seq).  So `a and b par c` is `(a and b) par
    c`, `a seq b meets c` is `(a seq b) meets c` and `a where C within 10`
    is `a where (C within 10)`, which the core's own priorities read
    differently: a file is read here, in this module's operator table,
    and never with the core's.

    Not redefined, unlike ETALIS: `*` (ETALIS' old spelling of seq, 1025)
    and `/\` `\/` (and, or) keep their arithmetic priorities so that
    conditions can compute; as event patterns they still mean seq, and,
    or (etalis_translate.pl).  `:` keeps its module meaning (write rule
    labels with 'rule:').  Double-quoted text reads as codes, as ETALIS'
    programs (written for --traditional) expect.
*/
:- module(etalis_syntax,
          [ read_etalis_file/2,         % +File, -Terms
            read_etalis_terms/2         % +Stream, -Terms
          ]).

:- op(1200, xfy, <-).
:- op(1200, xfy, 'rule:').
:- op(1200, xfy, iff).
:- op(1200, xfy, 'IFF').
:- op(1124, yfx, do).
:- op(1124, yfx, 'Do').
:- op(1124, yfx, 'DO').
:- op(1060, yfx, where).
:- op(1060, yfx, 'Where').
:- op(1060, yfx, 'WHERE').
:- op(1055, xfy, within).
:- op(1053, yfx, or).
:- op(1053, yfx, 'Or').
:- op(1053, yfx, 'OR').
:- op(1050, yfx, check).
:- op(1050, yfx, 'Check').
:- op(1050, yfx, 'CHECK').
:- op(1050, yfx, timestamp).
:- op(1050, yfx, 'Timestamp').
:- op(1050, yfx, 'TIMESTAMP').
:- op(1050, yfx, event_multiply).
:- op(1050, yfx, 'Event_multiply').
:- op(1050, yfx, 'EVENT_MULTIPLY').
:- op(1045, yfx, par).
:- op(1045, yfx, 'Par').
:- op(1045, yfx, 'PAR').
:- op(1045, yfx, #).
:- op(1040, yfx, and).
:- op(1040, yfx, 'And').
:- op(1040, yfx, 'AND').
:- op(1031, yfx, cnot).
:- op(1031, yfx, 'Cnot').
:- op(1031, yfx, 'CNOT').
:- op(1031, yfx, fnot).
:- op(1031, yfx, 'Fnot').
:- op(1031, yfx, 'FNOT').
:- op(1031, yfx, 'fNOT').
:- op(1031, yfx, not).
:- op(1031, yfx, 'Not').
:- op(1031, yfx, 'NOT').
:- op(1025, yfx, seq).
:- op(1025, yfx, 'Seq').
:- op(1025, yfx, 'SEQ').
:- op(1025, yfx, forall_seq).
:- op(1025, yfx, 'Forall_Seq').
:- op(1025, yfx, 'FORALL_SEQ').
:- op(1025, yfx, equals).
:- op(1025, yfx, 'Equals').
:- op(1025, yfx, 'EQUALS').
:- op(1025, yfx, meets).
:- op(1025, yfx, 'Meets').
:- op(1025, yfx, 'MEETS').
:- op(1025, yfx, during).
:- op(1025, yfx, 'During').
:- op(1025, yfx, 'DURING').
:- op(1025, yfx, starts).
:- op(1025, yfx, 'Starts').
:- op(1025, yfx, 'STARTS').
:- op(1025, yfx, finishes).
:- op(1025, yfx, 'Finishes').
:- op(1025, yfx, 'FINISHES').
:- op(1025, yfx, ntimes).
:- op(200, xf, star_times).

%!  read_etalis_file(+File, -Terms) is det.
%
%   All clauses of File, read with ETALIS' operators.  A syntax error
%   raises, naming the file, line and column.
read_etalis_file(File, Terms) :-
    read_file_to_codes(File, Codes0, []),
    unquote_operators(Codes0, Codes),
    setup_call_cleanup(
        open_codes_stream(Codes, S),
        ( set_stream(S, file_name(File)),
          read_etalis_terms(S, Terms) ),
        close(S)).

%!  read_etalis_terms(+Stream, -Terms) is det.
%
%   The clauses on Stream, read with ETALIS' operators (quoted operators
%   must already be unquoted: see unquote_operators/2).
read_etalis_terms(S, Terms) :-
    read_term(S, T0, [module(etalis_syntax), double_quotes(codes),
                      syntax_errors(error)]),
    (   T0 == end_of_file
    ->  Terms = []
    ;   relabel(T0, T),
        Terms = [T|Rest],
        read_etalis_terms(S, Rest)
    ).

%   'rule:' is read as rule_ (see below), also inside terms (a rule given
%   to ins_event_rule/1 in a condition).
relabel(T0, T) :-
    (   compound(T0)
    ->  compound_name_arguments(T0, F0, As0),
        maplist(relabel, As0, As),
        (   F0 == rule_, As = [_, _] -> F = 'rule:' ; F = F0 ),
        compound_name_arguments(T, F, As)
    ;   T = T0
    ).

:- op(1200, xfy, rule_).

%!  unquote_operators(+Codes, -Codes2) is det.
%
%   ETALIS' rule files quote their operators ('seq', 'and', 'rule:'):
%   under --traditional a quoted atom still acts as an operator, in
%   SWI-Prolog's default mode it does not.  A quoted operator name in
%   operator position (after the end of a term, not followed by `(`) is
%   rewritten unquoted, padded with spaces to the same length so that
%   lines and columns of syntax errors stay right; 'rule:' (no valid
%   unquoted atom) becomes the operator rule_.  Comments, strings and
%   other quoted atoms are left alone.
unquote_operators(Codes0, Codes) :-
    scan(Codes0, 0'\s, Codes).

scan([], _, []).
scan([0'%|Cs], _, [0'%|Out]) :- !,
    line_comment(Cs, Out, Rest, Out1),
    scan(Rest, 0'\n, Out1).
scan([0'/, 0'*|Cs], _, [0'/, 0'*|Out]) :- !,
    block_comment(Cs, Out, Rest, Out1),
    scan(Rest, 0'\s, Out1).
scan([0'0, 0''|Cs], _, [0'0, 0''|Out]) :- !,     % 0'c
    char_literal(Cs, Out, Rest, Out1),
    scan(Rest, 0'0, Out1).
scan([0'"|Cs], _, [0'"|Out]) :- !,
    quoted(Cs, 0'", Out, Rest, Out1),
    scan(Rest, 0'", Out1).
scan([0'`|Cs], _, [0'`|Out]) :- !,
    quoted(Cs, 0'`, Out, Rest, Out1),
    scan(Rest, 0'`, Out1).
scan([0''|Cs], Prev, Out) :- !,
    (   quoted_name(Cs, Name, Rest),
        etalis_operator(Name, Replacement),
        operator_position(Prev, Rest)
    ->  atom_codes(Name, NCs),
        length(NCs, N),
        atom_codes(Replacement, RCs),
        length(RCs, RN),
        Pad is N + 2 - RN - 1,
        Pad >= 0,
        pad(Pad, PadCs),
        append([[0'\s|RCs], PadCs], Token),
        append(Token, Out1, Out),
        scan(Rest, 0'a, Out1)
    ;   Out = [0''|Out0],
        quoted(Cs, 0'', Out0, Rest, Out1),
        scan(Rest, 0'', Out1)
    ).
scan([C|Cs], Prev, [C|Out]) :-
    (   code_type(C, space) -> Prev1 = Prev ; Prev1 = C ),
    scan(Cs, Prev1, Out).

line_comment([], [], [], []).
line_comment([C|Cs], [C|Out], Rest, Out1) :-
    (   C == 0'\n
    ->  Rest = Cs, Out = Out1
    ;   line_comment(Cs, Out, Rest, Out1)
    ).

block_comment([], [], [], []).
block_comment([0'*, 0'/|Cs], [0'*, 0'/|Out], Cs, Out) :- !.
block_comment([C|Cs], [C|Out], Rest, Out1) :-
    block_comment(Cs, Out, Rest, Out1).

char_literal([0'\\, C|Cs], [0'\\, C|Out], Cs, Out) :- !.
char_literal([0'', 0''|Cs], [0'', 0''|Out], Cs, Out) :- !.
char_literal([C|Cs], [C|Out], Cs, Out) :- !.
char_literal([], [], [], []).

%   The rest of a quoted item (after the opening quote Q), copied.
quoted([], _, [], [], []).
quoted([0'\\, C|Cs], Q, [0'\\, C|Out], Rest, Out1) :- !,
    quoted(Cs, Q, Out, Rest, Out1).
quoted([Q, Q|Cs], Q, [Q, Q|Out], Rest, Out1) :- !,
    quoted(Cs, Q, Out, Rest, Out1).
quoted([Q|Cs], Q, [Q|Out], Cs, Out) :- !.
quoted([C|Cs], Q, [C|Out], Rest, Out1) :-
    quoted(Cs, Q, Out, Rest, Out1).

%   A quoted atom of letters, digits, _ and : only, closed on this line.
quoted_name(Cs, Name, Rest) :-
    name_codes(Cs, NCs, [0''|Rest]),
    NCs \== [],
    atom_codes(Name, NCs).

name_codes([C|Cs], [C|Ns], Rest) :-
    ( code_type(C, csym) ; C == 0': ), !,
    name_codes(Cs, Ns, Rest).
name_codes(Rest, [], Rest).

%   After the end of a term (a name, a number, a closing bracket or
%   quote) and not a functor (no `(` right after): an operator.
operator_position(Prev, Rest) :-
    ( code_type(Prev, csym) ; memberchk(Prev, `)]}'"\``) ),
    \+ Rest = [0'(|_].

pad(0, []) :- !.
pad(N, [0'\s|Cs]) :- N1 is N - 1, pad(N1, Cs).

%   The operator names (as read here) of the quoted names.
%   Capitalised and upper-case forms become the lower-case operator
%   (unquoted, 'SEQ' would read as a variable).
etalis_operator('rule:', rule_) :- !.
etalis_operator(Name, Lower) :-
    current_op(_, Type, etalis_syntax:Name),
    Type \== fx, Type \== fy,
    \+ system_op(Name),
    downcase_atom(Name, Lower),
    current_op(_, _, etalis_syntax:Lower).

%   Standard operators ('is', 'mod', ...) are left as written.
system_op(Name) :-
    current_op(_, _, system:Name).
