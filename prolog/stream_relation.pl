/*  stream_relation: SPARQL 1.1 solution modifiers on bags of rows.

    A windowed query is evaluated at an instant by one compiled clause
    (epsparql/rules/window_compile.py): its WHERE part is a Prolog goal
    whose solutions, collected by findall/3, are the bag of SPARQL
    solutions; this module does what SPARQL does to that bag afterwards:
    grouping and aggregates (SPARQL 1.1, 18.5), ORDER BY, DISTINCT,
    OFFSET/LIMIT, and the bag differences of ISTREAM and DSTREAM.

    Rows are ground: an unbound variable is the atom '$u' (no IRI is
    written so).  Values are RDF terms encoded as in sparql_eval.pl.
*/
:- module(stream_relation,
          [ ground_row/2,        % +Row, -GroundRow
            unground/2,          % +GroundTerm, -Term
            member_row/2,        % -Row, +Rows
            group_rows/3,        % +Pairs, +Grouped, -Groups
            aggregate_values/3,  % +Specs, +AggRows, -Values
            order_key/3,         % +Direction, +Value, -Key
            finish_rows/5,       % +KeyedRows, +Directions, +Distinct, +Slice, -Rows
            bag_difference/3,    % +Bag, +Minus, -Difference
            exists_value/2,      % :Goal, -Boolean
            minus_compatible/1   % +Pairs
          ]).
:- use_module(library(lists)).
:- use_module(library(apply)).
:- use_module(library(pairs)).
:- use_module(sparql_eval).

%!  ground_row(+Row, -Ground) is det.
%
%   Row with every unbound variable replaced by '$u' (a copy).
ground_row(Row, Ground) :-
    ground(Row), !,                 % the usual row: nothing to replace (findall copies it)
    Ground = Row.
ground_row(Row, Ground) :-
    copy_term(Row, Ground),
    term_variables(Ground, Vs),
    maplist(=('$u'), Vs).

%!  unground(+Ground, -Term) is det.
%
%   The inverse of ground_row/2 on the arguments of a row term: '$u'
%   arguments become fresh variables.
unground(G, T) :-
    compound(G), \+ arg(_, G, '$u'), !,  % no unbound argument: the term itself
    T = G.
unground(G, T) :-
    compound(G), !,
    compound_name_arguments(G, F, As),
    maplist(unground_arg, As, Bs),
    compound_name_arguments(T, F, Bs).
unground(G, G).

unground_arg(A, B) :- ( A == '$u' -> true ; B = A ).

%!  member_row(-Row, +Rows) is nondet.
%
%   A row of a sub-query's result, unbound positions as variables.
member_row(Row, Rows) :-
    member(G, Rows),
    unground(G, Row).

		 /*******************************
		 *      GROUPS, AGGREGATES      *
		 *******************************/

%!  group_rows(+Pairs, +Grouped, -Groups) is det.
%
%   Pairs is a list of Key-AggRow (Key ground); Groups the list of
%   Key-[AggRow...] in order of first appearance of each key.  When
%   Grouped is false (no GROUP BY) there is exactly one group, keyed
%   gk, even for an empty bag (SPARQL's implicit group).
group_rows(Pairs, false, [gk-Rows]) :- !,
    pairs_values(Pairs, Rows).
group_rows(Pairs, true, Groups) :-
    number_pairs(Pairs, 0, Numbered),           % I-(Key-Row)
    map_list_to_pairs(key_of, Numbered, Keyed), % Key-(I-(Key-Row))
    keysort(Keyed, Sorted),                     % stable: rows keep their order
    group_pairs_by_key(Sorted, ByKey),
    findall(First-(K-Rows),
            ( member(K-Members, ByKey),
              Members = [First-_|_],
              findall(R, member(_-(_-R), Members), Rows) ),
            Firsts),
    keysort(Firsts, InOrder),
    pairs_values(InOrder, Groups).

number_pairs([], _, []).
number_pairs([P|Ps], I, [I-P|Qs]) :- I1 is I + 1, number_pairs(Ps, I1, Qs).

key_of(_-(K-_), K).

%!  aggregate_values(+Specs, +AggRows, -Values) is det.
%
%   Specs is a list of agg(Op, Distinct, Separator), one per aggregate
%   of the query; each AggRow is a term whose I-th argument is the value
%   of the I-th aggregate's argument for one solution ('$error' when its
%   expression failed, the solution itself for COUNT(*)).  Values is
%   av(V1, ...): the aggregates, '$u' for an aggregate that is an error.
aggregate_values(Specs, Rows, Values) :-
    length(Specs, N),
    numlist_(1, N, Is),
    maplist(aggregate_column(Rows), Is, Specs, Vs),
    Values =.. [av|Vs].

numlist_(L, H, []) :- L > H, !.
numlist_(L, H, [L|T]) :- L1 is L + 1, numlist_(L1, H, T).

aggregate_column(Rows, I, agg(Op, Distinct, Sep), V) :-
    findall(X, ( member(R, Rows), arg(I, R, X) ), Xs0),
    (   Distinct == true -> distinct_values(Xs0, Xs) ; Xs = Xs0 ),
    (   catch(aggregate(Op, Sep, Xs, V0), _, fail) -> V = V0 ; V = '$u' ).

distinct_values(Xs, Ys) :-                      % first occurrences, in order
    distinct_values(Xs, [], Ys).
distinct_values([], _, []).
distinct_values([X|Xs], Seen, Ys) :-
    (   memberchk(X, Seen) -> Ys = Ys1 ; Ys = [X|Ys1] ),
    distinct_values(Xs, [X|Seen], Ys1).

%   aggregate(+Op, +Separator, +Values, -Result): fails for an error.
aggregate(count_star, _, Xs, N) :- !,          % xsd:integer: the bare integer
    length(Xs, N).
aggregate(count, _, Xs, N) :- !,
    exclude(is_error, Xs, Ok), length(Ok, N).
aggregate(sum, _, Xs, S) :- !,
    zero(Z), foldl(add, Xs, Z, S), S \== '$error'.
aggregate(avg, _, [], Z) :- !, zero(Z).
aggregate(avg, _, Xs, A) :- !,
    zero(Z), foldl(add, Xs, Z, S), S \== '$error',
    length(Xs, N),
    sparql_eval(div(const(S), const(N)), A),
    A \== '$error'.
aggregate(min, _, Xs, M) :- !,
    exclude(is_error, Xs, Ok), Ok \== [],
    map_list_to_pairs(order_key(asc), Ok, Ks), keysort(Ks, [_-M|_]).
aggregate(max, _, Xs, M) :- !,
    exclude(is_error, Xs, Ok), Ok \== [],
    map_list_to_pairs(order_key(asc), Ok, Ks), keysort(Ks, Sorted), last(Sorted, _-M).
aggregate(sample, _, Xs, X) :- !,
    exclude(is_error, Xs, [X|_]).
aggregate(group_concat, Sep, Xs, s(Str)) :- !,
    exclude(is_error, Xs, Ok),
    maplist(lexical, Ok, Ls),
    atomic_list_concat(Ls, Sep, A), atom_string(A, Str).

is_error(X) :- ( X == '$error' ; X == '$u' ), !.

zero(0).

add(X, Acc, S) :-
    (   Acc == '$error' -> S = '$error'
    ;   is_error(X) -> S = '$error'
    ;   sparql_eval(add(const(Acc), const(X)), S)
    ).

lexical(s(L), L) :- !.
lexical(l(L, _), L) :- !.
lexical(n(_, _, L), L) :- !.
lexical(d(_, _, L), L) :- !.
lexical(dur(_, _, L), L) :- !.
lexical(bool(_, L), L) :- !.
lexical(t(L, _), L) :- !.
lexical(X, L) :- integer(X), !, number_string(X, L).
lexical(X, L) :- float(X), !, format(string(L), '~w', [X]).
lexical(X, L) :- atom(X), !, atom_string(X, L).
lexical(b(Id), L) :- atom_string(Id, L).

		 /*******************************
		 *           ORDERING           *
		 *******************************/

%!  order_key(+Direction, +Value, -Key) is det.
%
%   A term whose standard order is SPARQL's ORDER BY order on values
%   (SPARQL 1.1, 15.1): unbound and errors first, then blank nodes,
%   IRIs, numbers, date-times, durations, booleans, plain and language
%   strings, other literals.  Direction (asc/desc) is kept for
%   finish_rows/5, which sorts on one key at a time.
order_key(_, V, K) :- order_key(V, K).

order_key(V, k(0)) :- ( var(V) ; V == '$u' ; V == '$error' ), !.
order_key(b(Id), k(1, Id, 0)) :- !.
order_key(n(X, _, _), k(3, 0, X)) :- !.
order_key(X, k(3, 0, X)) :- number(X), !.
order_key(d(X, _, _), k(3, 1, X)) :- !.
order_key(dur(X, _, _), k(3, 2, X)) :- !.
order_key(bool(B, _), k(3, 3, B)) :- !.
order_key(s(L), k(4, L, '')) :- !.
order_key(l(L, T), k(4, L, T)) :- !.
order_key(t(L, D), k(5, D, L)) :- !.
order_key(X, k(2, X, 0)).

%!  finish_rows(+Keyed, +Directions, +Distinct, +Slice, -Rows) is det.
%
%   Keyed is a list of Keys-Row, Keys a list of order keys (one per
%   ORDER BY condition, see order_key/3), Directions the list of asc/desc.
%   Sorts stably on the conditions, removes duplicate rows when Distinct
%   is true (keeping the first), then applies Slice = slice(Offset,
%   Limit) (Limit inf for none).
finish_rows(Keyed, Dirs, Distinct, slice(Offset, Limit), Rows) :-
    (   Dirs == []
    ->  pairs_values(Keyed, Rows0)
    ;   length(Dirs, N),
        sort_by_conditions(N, Dirs, Keyed, Sorted),
        pairs_values(Sorted, Rows0)
    ),
    (   Distinct == true -> distinct_values(Rows0, Rows1) ; Rows1 = Rows0 ),
    slice(Rows1, Offset, Limit, Rows).

%   Stable sorts from the last condition to the first.
sort_by_conditions(0, _, L, L) :- !.
sort_by_conditions(I, Dirs, L0, L) :-
    nth1(I, Dirs, Dir),
    map_list_to_pairs(nth_key(I), L0, Ks),
    (   Dir == desc -> sort(1, @>=, Ks, S) ; sort(1, @=<, Ks, S) ),
    pairs_values(S, L1),
    I1 is I - 1,
    sort_by_conditions(I1, Dirs, L1, L).

nth_key(I, Keys-_, K) :- nth1(I, Keys, K).

slice(Rows, Offset, Limit, Out) :-
    length(Rows, N),
    (   Offset >= N -> Out = []
    ;   length(Skip, Offset), append(Skip, Rest, Rows),
        (   Limit == inf -> Out = Rest
        ;   length(Rest, R), ( R =< Limit -> Out = Rest ; length(Out, Limit), append(Out, _, Rest) )
        )
    ).

		 /*******************************
		 *     BAGS, EXISTS, MINUS      *
		 *******************************/

%!  bag_difference(+Bag, +Minus, -Diff) is det.
%
%   CQL's bag difference: each row of Bag occurs in Diff as many times as
%   its multiplicity in Bag exceeds its multiplicity in Minus; rows keep
%   Bag's order (the later occurrences are the ones kept).
bag_difference(Bag, Minus, Diff) :-
    msort(Minus, SortedMinus),
    clumped_counts(SortedMinus, Counts),
    list_to_assoc_(Counts, A0),
    diff_rows(Bag, A0, Diff).

clumped_counts(Sorted, Counts) :-
    clumped(Sorted, Counts).

list_to_assoc_(Pairs, Assoc) :- list_to_assoc(Pairs, Assoc).

diff_rows([], _, []).
diff_rows([R|Rs], A0, Out) :-
    (   get_assoc(R, A0, C), C > 0
    ->  C1 is C - 1, put_assoc(R, A0, C1, A1), Out = Out1
    ;   A1 = A0, Out = [R|Out1]
    ),
    diff_rows(Rs, A1, Out1).

%!  exists_value(:Goal, -Boolean) is det.
%
%   The xsd:boolean value of EXISTS { Goal } under the current bindings.
:- meta_predicate exists_value(0, -).
exists_value(G, V) :-
    (   \+ \+ call(G) -> V = bool(true, "true") ; V = bool(false, "false") ).

%!  minus_compatible(+Pairs) is semidet.
%
%   Pairs is a list of X-Y, a variable of the left side of MINUS and the
%   same variable of the right side.  True when the two solutions are
%   compatible and share at least one bound variable (SPARQL 1.1, 18.5:
%   Minus); unifies them.
minus_compatible(Pairs) :-
    include(both_bound, Pairs, Shared),
    Shared \== [],
    maplist(unify_pair, Pairs).

both_bound(X-Y) :- nonvar(X), nonvar(Y).
unify_pair(X-Y) :- X = Y.
