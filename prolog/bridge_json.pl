/*  Terms as JSON text, for the Python bridge.

    The bridge's JSON encoding of a term: numbers as numbers, atoms as
    strings, strings as {"s": Text}, compound terms as {"f": Name, "a":
    [Args]}, proper lists as arrays, variables as null, non-finite floats
    as {"n": "inf"|"-inf"|"nan"}, rationals (exact times) as floats; anything else (a blob) as the string of
    its quoted text.  Decoded by epsparql/core/terms.py (from_json).
*/
:- module(bridge_json,
          [ write_json/2,        % +Stream, +Term
            json_term//1         % +Term
          ]).
:- use_module(library(http/json), []).

%!  write_json(+Stream, +Term) is det.
%
%   Write Term in the bridge's JSON encoding.
write_json(S, X) :- var(X), !, write(S, null).
write_json(S, X) :- integer(X), !, write(S, X).
write_json(S, X) :- float(X), !,
    (   float_class(X, nan) -> write(S, '{"n":"nan"}')
    ;   float_class(X, infinite) -> ( X > 0 -> write(S, '{"n":"inf"}') ; write(S, '{"n":"-inf"}') )
    ;   write(S, X)
    ).
write_json(S, X) :- rational(X), !,            % an exact time: as a float
    F is float(X),
    write_json(S, F).
write_json(S, X) :- atom(X), !, json:json_write_string(S, X).
write_json(S, X) :- string(X), !,
    write(S, '{"s":'), json:json_write_string(S, X), put_char(S, '}').
write_json(S, X) :- is_list(X), !,
    put_char(S, '['), write_list(S, X), put_char(S, ']').
write_json(S, X) :- compound(X), !,
    compound_name_arguments(X, Name, Args),
    write(S, '{"f":'), json:json_write_string(S, Name),
    write(S, ',"a":['), write_list(S, Args), write(S, ']}').
write_json(S, X) :- format(string(T), '~q', [X]), json:json_write_string(S, T).

write_list(_, []).
write_list(S, [X|Xs]) :-
    write_json(S, X),
    (   Xs == [] -> true ; put_char(S, ','), write_list(S, Xs) ).

%!  json_term(+Term)// is det.
%
%   The JSON encoding of Term as a DCG (for tests and tools).
json_term(T) -->
    { with_output_to(codes(Cs), write_json(current_output, T)) },
    Cs.
