"""A signed number right after an operand: ``?y+1`` is ``?y + 1``.

SPARQL's grammar reads ``?y+1`` as the operand ``?y`` and the signed
number ``+1`` (AdditiveExpression's NumericLiteralPositive); rdflib
normalises ``+1`` to ``1``, and the parser took the first digit for the
operator: ``?y+1`` became ``?y "1" ""``, an invalid literal, and ``?y+1.5``
silently ``?y 1 0.5``.  Checked against Python's own arithmetic on the
same text, for generated expressions, and through the engine.
"""
from __future__ import annotations

from decimal import Decimal
from fractions import Fraction

from hypothesis import given, settings
from hypothesis import strategies as st
from rdflib import Literal, URIRef

from epsparql import Engine, parse_query
from epsparql.language import ast as A

numbers = st.one_of(
    st.integers(0, 999).map(str),
    st.tuples(st.integers(0, 99), st.integers(0, 99)).map(lambda t: f"{t[0]}.{t[1]}"),
    st.tuples(st.integers(1, 9), st.integers(-2, 2)).map(lambda t: f"{t[0]}e{t[1]}"))
signs = st.sampled_from(["+", "-"])
spaces = st.sampled_from(["", " "])


@st.composite
def expressions(draw):
    """``?y`` followed by 1-4 additive steps written in every spacing,
    e.g. ``?y+1 - 2.5 +-3``, and the same with a number for ?y (Python)."""
    parts = []
    for _ in range(draw(st.integers(1, 4))):
        op, sp1, sp2 = draw(signs), draw(spaces), draw(spaces)
        inner = draw(st.sampled_from(["", "+", "-"]))      # a signed number after the operator
        parts.append(f"{sp1}{op}{sp2}{inner}{draw(numbers)}")
    return "?y" + "".join(parts)


def value(e, y: Fraction) -> Fraction:
    """A tiny evaluator of the parsed additive expression."""
    if isinstance(e, A.Var):
        return y
    if isinstance(e, Literal):
        return Fraction(str(Decimal(str(e))))
    if isinstance(e, A.UnaryOp):
        v = value(e.operand, y)
        return -v if e.op == "-" else v
    assert isinstance(e, A.BinaryOp) and e.op in "+-", e
    a, b = value(e.left, y), value(e.right, y)
    return a + b if e.op == "+" else a - b


def python_value(text: str, y: Fraction) -> Fraction:
    """Python reads ``5+1``, ``5 +-1``, ``5- 2.5`` as SPARQL does."""
    import ast as pyast
    tree = pyast.parse(text.replace("?y", "Y"), mode="eval")

    def ev(n):
        if isinstance(n, pyast.Name):
            return y
        if isinstance(n, pyast.Constant):
            return Fraction(str(Decimal(repr(n.value) if isinstance(n.value, float) else str(n.value))))
        if isinstance(n, pyast.UnaryOp):
            return -ev(n.operand) if isinstance(n.op, pyast.USub) else ev(n.operand)
        a, b = ev(n.left), ev(n.right)
        return a + b if isinstance(n.op, pyast.Add) else a - b
    return ev(tree.body)


@settings(max_examples=400, deadline=None)
@given(expressions(), st.integers(-50, 50))
def test_additive_chains_with_signed_numbers(text, y):
    q = parse_query(f"SELECT ?v WHERE {{ ?s <http://ex/p> ?y BIND({text} AS ?v) }}")
    bind = next(x for x in q.where.elements if isinstance(x, A.Bind))
    got = value(bind.expr, Fraction(y))
    want = python_value(text, Fraction(y))
    assert abs(got - want) < Fraction(1, 10**9), (text, got, want)


def test_through_the_engine():
    cases = ["?y+1", "?y +1", "?y+1.5", "?y-1", "?y -1.5", "?y+-2", "?y*2+1", "?y+1e1",
             "?y+ 1", "?y + +1"]
    e = Engine()
    try:
        qs = [e.register(f"SELECT ?v WHERE {{ <http://ex/s> <http://ex/p> ?y "
                         f"BIND({c} AS ?v) }}") for c in cases]
        e.push_many([(URIRef("http://ex/s"), URIRef("http://ex/p"), Literal(10), 1)])
        e.flush()
        got = [float(q.results()[0]["v"]) for q in qs]
        assert got == [11, 11, 11.5, 9, 8.5, 8, 21, 20, 11, 11]
        assert e.errors == []
    finally:
        e.close()
