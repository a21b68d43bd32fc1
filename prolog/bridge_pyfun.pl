/*  Python extension functions for SPARQL expressions.

    A Python function registered under an IRI is called from FILTER and
    SELECT expressions through janus (library(janus), py_call/3): Prolog
    calls epsparql.functions.call_function(Id, ArgsJSON) in the Python that
    hosts this Prolog.  Arguments cross as the bridge's JSON encoding of the
    RDF terms; the result comes back as the text of an encoded term, read
    as data.  A Python exception, or None, makes the call fail, which
    sparql_eval turns into a SPARQL evaluation error: the filter is false,
    the engine goes on.
*/
:- module(bridge_pyfun,
          [ pyfun_register/2            % +IRI, +Id
          ]).
:- use_module(library(janus), [py_call/3]).
:- use_module(sparql_eval).
:- use_module(bridge_json, [json_term//1]).

%!  pyfun_register(+IRI, +Id) is det.
%
%   Make IRI callable in expressions, implemented by Python function Id.
pyfun_register(IRI, Id) :-
    must_be(atom, IRI),
    must_be(integer, Id),
    sparql_register_function(IRI, bridge_pyfun:pyfun_call(Id)).

%   pyfun_call(+Id, +Arg..., -Result): one clause per arity (up to 8).
pyfun_call(Id, R) :- call_py(Id, [], R).
pyfun_call(Id, A, R) :- call_py(Id, [A], R).
pyfun_call(Id, A, B, R) :- call_py(Id, [A, B], R).
pyfun_call(Id, A, B, C, R) :- call_py(Id, [A, B, C], R).
pyfun_call(Id, A, B, C, D, R) :- call_py(Id, [A, B, C, D], R).
pyfun_call(Id, A, B, C, D, E, R) :- call_py(Id, [A, B, C, D, E], R).
pyfun_call(Id, A, B, C, D, E, F, R) :- call_py(Id, [A, B, C, D, E, F], R).
pyfun_call(Id, A, B, C, D, E, F, G, R) :- call_py(Id, [A, B, C, D, E, F, G], R).
pyfun_call(Id, A, B, C, D, E, F, G, H, R) :- call_py(Id, [A, B, C, D, E, F, G, H], R).

%   call_py(+Id, +Args, -Result) is semidet.
%
%   Fails when the Python side raised (it records the error itself) or
%   gave no term; any exception of the crossing itself fails too.
call_py(Id, Args, Result) :-
    phrase(json_term(Args), Codes),
    string_codes(Json, Codes),
    catch(py_call('epsparql.functions':call_function(Id, Json), Text,
                  [py_string_as(string)]),
          _, fail),
    string(Text),
    term_string(Result, Text, [syntax_errors(fail)]).
