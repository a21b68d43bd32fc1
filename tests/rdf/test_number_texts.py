"""The writers' shortcut for numeric terms: the N-Triples and JSON text of
an encoded number (a bare one, or ``n(Value, Datatype, Lexical)``, what
aggregates make) written without the rdflib term must be exactly the text
of the decoded term."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from epsparql.core.terms import Compound, PlString
from epsparql.io.results import _numbers_json_texts, term_json_text
from epsparql.rdf.codec import XSD, decode, encode
from epsparql.rdf.ntriples import format_encoded_numbers, format_term

DATATYPES = [XSD + t for t in ("integer", "decimal", "double", "float", "int", "long",
                               "nonNegativeInteger", "unsignedByte")] + ["http://ex/odd\"type"]

lexical = st.one_of(
    st.from_regex(r"-?[0-9]{1,12}(\.[0-9]{1,8})?", fullmatch=True),
    st.from_regex(r"[+-]?[0-9]*\.?[0-9]+([eE][+-]?[0-9]{1,3})?", fullmatch=True),
    st.text(max_size=8))


@st.composite
def encoded_numbers(draw):
    kind = draw(st.sampled_from(["int", "float", "n", "other"]))
    if kind == "int":
        return draw(st.integers(-10**20, 10**20))
    if kind == "float":
        return draw(st.floats(allow_nan=False, allow_infinity=False))
    if kind == "n":
        lex = draw(lexical)
        dt = draw(st.sampled_from(DATATYPES))
        value = draw(st.one_of(st.integers(-10**6, 10**6), st.floats(allow_nan=False,
                                                                     allow_infinity=False)))
        return Compound("n", (value, dt, PlString(lex)))
    return draw(st.sampled_from(["http://ex/a", Compound("s", (PlString("x"),)), None]))


@settings(max_examples=400, deadline=None)
@given(st.lists(encoded_numbers(), max_size=12))
def test_texts_of_encoded_numbers_are_those_of_the_terms(values):
    nt = format_encoded_numbers(values)
    js = _numbers_json_texts(values)
    for v, a, b in zip(values, nt, js):
        if a is None:
            assert b is None
            assert not isinstance(v, (int, float)) and not (
                isinstance(v, Compound) and v.name == "n")
            continue
        node = decode(v)
        assert a == format_term(node)
        assert b == term_json_text(node)


def test_an_aggregates_decimal():
    v = encode(decode(Compound("n", (2201.5, XSD + "decimal", PlString("2201.5")))))
    [a] = format_encoded_numbers([v])
    assert a == f'"2201.5"^^<{XSD}decimal>'


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(DATATYPES), st.sampled_from(["n", "d", "dur"]),
       st.lists(lexical, min_size=1, max_size=12))
def test_a_column_of_one_typed_literal_kind_is_written_as_each_alone(dt, name, lexes):
    """A column of n/3 (d/3, dur/3) terms of one datatype, its lexical
    forms plain or not, is taken apart a column at a time: the same texts
    as writing each value alone."""
    values = [Compound(name, (i, dt, PlString(lex))) for i, lex in enumerate(lexes)]
    for texts in (format_encoded_numbers, _numbers_json_texts):
        assert texts(values) == [texts([v])[0] for v in values]
    if name == "n":
        for v, a, b in zip(values, format_encoded_numbers(values), _numbers_json_texts(values)):
            node = decode(v)
            assert a == format_term(node) and b == term_json_text(node)
