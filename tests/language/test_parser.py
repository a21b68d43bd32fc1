"""Tests for the EP-SPARQL query parser (``epsparql.language``): text -> AST."""
from __future__ import annotations

import pickle
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rdflib import BNode, Literal, Namespace, URIRef
from rdflib import namespace as _rdfns

from epsparql.language import (
    DEFAULT_BASE, AskQuery, BGP, Bind, BinaryOp, ConstructQuery, Exists,
    Filter, FunctionCall, Graph, Group, In, Minus, NotIn, Optional, PathAlt,
    PathInv, PathMod, PathSeq, Pos, QueryError, QuerySyntaxError, SelectQuery,
    SubSelect, TemporalJoin, TriplePattern, UnaryOp, Union, Var, parse_query,
)

NS = "http://epsparql.org/ns#"
# Plain namespaces: rdflib's closed ones warn when pytest inspects them.
XSD, RDF, RDFS, OWL = (Namespace(str(n)) for n in (
    _rdfns.XSD, _rdfns.RDF, _rdfns.RDFS, _rdfns.OWL))


def ns(name: str) -> URIRef:
    """IRI of a bare name under the default base."""
    return URIRef(NS + name)


def lit(value: str, dtype=None) -> Literal:
    """Shorthand for a typed literal."""
    return Literal(value, datatype=dtype)


def dec(value: str) -> Literal:
    return lit(value, XSD.decimal)


def integer(value: str) -> Literal:
    return lit(value, XSD.integer)


def tp(s, p, o) -> TriplePattern:
    return TriplePattern(s, p, o)


def bgp_group(*triples) -> Group:
    """A ``{ ... }`` block holding just these triple patterns."""
    return Group((BGP(tuple(triples)),))


def where_of(text: str, **kw) -> Group:
    return parse_query(text, **kw).where


def only_triples(text: str, **kw) -> tuple[TriplePattern, ...]:
    """The triples of a query whose WHERE is a single BGP."""
    where = where_of(text, **kw)
    assert len(where.elements) == 1 and isinstance(where.elements[0], BGP)
    return where.elements[0].triples


def filter_expr(condition: str, prologue: str = ""):
    """The expression of ``FILTER (condition)`` in a minimal query."""
    where = where_of(f"{prologue} SELECT * WHERE {{ ?s ?p ?o FILTER ({condition}) }}")
    flt = where.elements[1]
    assert isinstance(flt, Filter)
    return flt.expr


def syntax_error(text: str) -> QuerySyntaxError:
    with pytest.raises(QuerySyntaxError) as info:
        parse_query(text)
    return info.value


def query_error(text: str) -> QueryError:
    """A QueryError that is *not* a syntax error."""
    with pytest.raises(QueryError) as info:
        parse_query(text)
    assert not isinstance(info.value, QuerySyntaxError), str(info.value)
    return info.value


# ===================================================================
# The paper's queries, exactly as printed in section 4.1 (PDF text).
# Queries (1) and (3) carry the paper's equation numbers "(1)" / "(3)"
# inside the text, an artefact of the PDF layout, not query syntax.
# ===================================================================

PRINTED_Q1 = 'SELECT ?company WHERE { ?company hasStockPrice ?price1 } SEQ { ?company hasStockPrice ?price2 } SEQ { ?company hasStockPrice ?price3 } (1) FILTER ( ?price2 < ?price1 * 0.7 && ?price3 > ?price1 * 1.05 && getDURATION() < "P30D"^^xsd:duration)'  # noqa: E501
PRINTED_Q2 = 'SELECT ?company ?ratingagency WHERE { ?company downratedby ?ratingagency} OPTIONALSEQ { { ?company hasStockPrice ?price1 } SEQ { ?company hasStockPrice ?price2 }} FILTER (?price2 < ?price1 * 0.5)'  # noqa: E501
PRINTED_Q3 = 'SELECT ?company WHERE { ?company hasStockprice ?price1 } SEQ { { ?company hasAcquired ?othercompany } (3) OPTIONALSEQ { ?company hasStockPrice ?price2 } } FILTER ( ?price2 < ?price1 * 1.5 && !BOUND(?othercompany) && getDURATION() < "P15D"^^xsd:duration )'  # noqa: E501
PRINTED_RULE = 'CONSTRUCT ?company downratedby ?ratingagency WHERE { ?rating1 rater ?ratingagency ; rated ?company ; score ?score1 } SEQ { ?rating2 rater ?ratingagency ; rated ?company ; score ?score2 } FILTER ( ?score2 < ?score1 )'  # noqa: E501


def drop_label(text: str, number: int) -> str:
    """Remove the paper's equation number ``(n)`` from a printed query."""
    label = f" ({number}) "
    assert label in text
    return text.replace(label, " ", 1)


Q1 = drop_label(PRINTED_Q1, 1)
Q3 = drop_label(PRINTED_Q3, 3)

Q1_FORMATTED = """
SELECT ?company
WHERE   { ?company hasStockPrice ?price1 }
    SEQ { ?company hasStockPrice ?price2 }
    SEQ { ?company hasStockPrice ?price3 }
FILTER ( ?price2 < ?price1 * 0.7
      && ?price3 > ?price1 * 1.05
      && getDURATION() < "P30D"^^xsd:duration )
"""

Q2_FORMATTED = """
SELECT ?company ?ratingagency
WHERE { ?company downratedby ?ratingagency }
      OPTIONALSEQ { { ?company hasStockPrice ?price1 }
                    SEQ
                    { ?company hasStockPrice ?price2 } }
FILTER (?price2 < ?price1 * 0.5)
"""

Q3_FORMATTED = """
SELECT ?company
WHERE { ?company hasStockprice ?price1 }
      SEQ { { ?company hasAcquired ?othercompany }
            OPTIONALSEQ
            { ?company hasStockPrice ?price2 } }
FILTER ( ?price2 < ?price1 * 1.5
      && !BOUND(?othercompany)
      && getDURATION() < "P15D"^^xsd:duration )
"""

RULE_FORMATTED = """
CONSTRUCT { ?company downratedby ?ratingagency }
WHERE { ?rating1 rater ?ratingagency ;
                 rated ?company ;
                 score ?score1 }
      SEQ
      { ?rating2 rater ?ratingagency ;
                 rated ?company ;
                 score ?score2 }
FILTER ( ?score2 < ?score1 )
"""

# The ACME sliding-window average pair, in standard SPARQL 1.1 expression
# syntax (the PDF text of the first query is garbled: "?sum ." was moved).
ACME_CONSTRUCT = """
CONSTRUCT { _:aaa :hasCount ?count . _:aaa :hasSum ?sum . }
WHERE {
  { SELECT (?prevcount + 1 AS ?count) (?prevsum + ?price AS ?sum)
    WHERE {
      { { ?point :hasCount ?prevcount . ?point :hasSum ?prevsum . }
        SEQ { :ACME :hasStockPrice ?price . } }
      EQUALSOPTIONAL
      { { ?point :hasCount ?prevcount . ?point :hasSum ?prevsum . }
        SEQ { :ACME :hasStockPrice ?inbetween . }
        SEQ { :ACME :hasStockPrice ?price . } }
      FILTER ( !BOUND(?inbetween) && getDURATION() < "P10D"^^xsd:duration )
    }
  }
}
"""

# The same with the paper's WHERE style inside the sub-select (no braces
# around the operator chain and its FILTER).
ACME_CONSTRUCT_PAPER_WHERE = """
CONSTRUCT { _:aaa :hasCount ?count . _:aaa :hasSum ?sum . }
{ SELECT (?prevcount + 1 AS ?count) (?prevsum + ?price AS ?sum)
  WHERE {{ ?point :hasCount ?prevcount . ?point :hasSum ?prevsum . }
         SEQ { :ACME :hasStockPrice ?price . }}
  EQUALSOPTIONAL {{ ?point :hasCount ?prevcount . ?point :hasSum ?prevsum . }
         SEQ { :ACME :hasStockPrice ?inbetween . } SEQ { :ACME :hasStockPrice ?price . }}
  FILTER ( !BOUND(?inbetween) && getDURATION() < "P10D"^^xsd:duration ) }
"""

ACME_AVERAGE = 'SELECT (?sum / ?count AS ?average) WHERE {{ :ACME :hasStockPrice ?price . } SEQ { ?point :hasCount ?prevcount . ?point :hasSum ?prevsum . }} EQUALSOPTIONAL {{ :ACME :hasStockPrice ?price . } SEQ { :ACME :hasStockPrice ?inbetween . } SEQ { ?point :hasCount ?prevcount . ?point :hasSum ?prevsum . }} FILTER ( !BOUND(?inbetween) && getDURATION() > "P10D"^^xsd:duration )'  # noqa: E501

# As printed in the paper: unparenthesised select expression.
ACME_AVERAGE_PRINTED = 'SELECT ?sum / ?count AS ?average WHERE {{ :ACME :hasStockPrice ?price . } SEQ { ?point :hasCount ?prevcount . ?point :hasSum ?prevsum . }} EQUALSOPTIONAL {{ :ACME :hasStockPrice ?price . } SEQ { :ACME :hasStockPrice ?inbetween . } SEQ { ?point :hasCount ?prevcount . ?point :hasSum ?prevsum . }} FILTER ( !BOUND(?inbetween) && getDURATION() > "P10D"^^xsd:duration )'  # noqa: E501

ALL_PAPER_QUERIES = [Q1, PRINTED_Q2, Q3, PRINTED_RULE, Q1_FORMATTED,
                     Q2_FORMATTED, Q3_FORMATTED, RULE_FORMATTED,
                     ACME_CONSTRUCT, ACME_CONSTRUCT_PAPER_WHERE, ACME_AVERAGE,
                     ACME_AVERAGE_PRINTED]


def price(company: str, n: str) -> Group:
    return bgp_group(tp(Var(company), ns("hasStockPrice"), Var(n)))


class TestPaperQueries:
    @pytest.mark.parametrize("printed, number", [(PRINTED_Q1, 1), (PRINTED_Q3, 3)])
    def test_equation_numbers_in_the_pdf_text_are_syntax_errors(self, printed, number):
        err = syntax_error(printed)
        assert (err.line, err.column) == (1, printed.index(f"({number})") + 1)
        assert "found '('" in err.message

    def test_query_1_shape(self):
        q = parse_query(Q1)
        assert isinstance(q, SelectQuery)
        assert q.projection == (Var("company"),)
        assert not q.distinct and q.prefixes == () and q.base is None
        join, flt = q.where.elements
        assert join == TemporalJoin(
            "SEQ",
            TemporalJoin("SEQ", price("company", "price1"), price("company", "price2")),
            price("company", "price3"))
        assert flt == Filter(BinaryOp(
            "&&",
            BinaryOp("&&",
                     BinaryOp("<", Var("price2"),
                              BinaryOp("*", Var("price1"), dec("0.7"))),
                     BinaryOp(">", Var("price3"),
                              BinaryOp("*", Var("price1"), dec("1.05")))),
            BinaryOp("<", FunctionCall("GETDURATION", ()),
                     lit("P30D", XSD.duration))))

    def test_query_1_top_level_filter_is_the_same_as_a_wrapped_one(self):
        body = Q1.split("WHERE", 1)[1]
        assert parse_query(Q1) == parse_query("SELECT ?company WHERE {" + body + "}")

    def test_query_2_shape(self):
        q = parse_query(PRINTED_Q2)
        assert q.projection == (Var("company"), Var("ratingagency"))
        join, flt = q.where.elements
        assert join.op == "OPTIONALSEQ"
        assert join.left == bgp_group(
            tp(Var("company"), ns("downratedby"), Var("ratingagency")))
        assert join.right == Group((TemporalJoin(
            "SEQ", price("company", "price1"), price("company", "price2")),))
        assert flt.expr == BinaryOp("<", Var("price2"),
                                    BinaryOp("*", Var("price1"), dec("0.5")))

    def test_query_3_shape(self):
        q = parse_query(Q3)
        join, flt = q.where.elements
        assert join.op == "SEQ"
        assert join.left == bgp_group(
            tp(Var("company"), ns("hasStockprice"), Var("price1")))  # sic
        inner, = join.right.elements
        assert inner == TemporalJoin(
            "OPTIONALSEQ",
            bgp_group(tp(Var("company"), ns("hasAcquired"), Var("othercompany"))),
            price("company", "price2"))
        lhs, duration = flt.expr.right, flt.expr
        assert flt.expr.left.right == UnaryOp(
            "!", FunctionCall("BOUND", (Var("othercompany"),)))
        assert duration.right.right == lit("P15D", XSD.duration)
        assert lhs.left == FunctionCall("GETDURATION", ())

    def test_construct_rule_shape(self):
        q = parse_query(PRINTED_RULE)
        assert isinstance(q, ConstructQuery)
        assert q.template == (tp(Var("company"), ns("downratedby"), Var("ratingagency")),)
        join, flt = q.where.elements
        assert join.op == "SEQ"
        for side, n in ((join.left, "1"), (join.right, "2")):
            assert side == bgp_group(
                tp(Var("rating" + n), ns("rater"), Var("ratingagency")),
                tp(Var("rating" + n), ns("rated"), Var("company")),
                tp(Var("rating" + n), ns("score"), Var("score" + n)))
        assert flt.expr == BinaryOp("<", Var("score2"), Var("score1"))

    @pytest.mark.parametrize("printed, formatted", [
        (Q1, Q1_FORMATTED), (PRINTED_Q2, Q2_FORMATTED), (Q3, Q3_FORMATTED),
        (PRINTED_RULE, RULE_FORMATTED)])
    def test_formatted_and_printed_forms_are_equal(self, printed, formatted):
        assert parse_query(printed) == parse_query(formatted)

    def test_acme_construct_shape(self):
        q = parse_query(ACME_CONSTRUCT)
        aaa = BNode("aaa")
        assert q.template == (tp(aaa, ns("hasCount"), Var("count")),
                              tp(aaa, ns("hasSum"), Var("sum")))
        (sub_group,) = q.where.elements
        (sub,) = sub_group.elements
        assert isinstance(sub, SubSelect)
        assert sub.projection == (
            (BinaryOp("+", Var("prevcount"), integer("1")), Var("count")),
            (BinaryOp("+", Var("prevsum"), Var("price")), Var("sum")))
        chain, (flt,) = sub.where.elements[0], sub.where.elements[1:]
        assert chain.op == "EQUALSOPTIONAL"
        assert [e.op for e in chain.left.elements] == ["SEQ"]
        right, = chain.right.elements
        assert right.op == "SEQ" and right.left.op == "SEQ"
        assert right.right == bgp_group(tp(ns("ACME"), ns("hasStockPrice"), Var("price")))
        assert flt.expr.left == UnaryOp("!", FunctionCall("BOUND", (Var("inbetween"),)))

    def test_acme_paper_style_where_in_subselect(self):
        standard = parse_query(ACME_CONSTRUCT)
        paper = parse_query(ACME_CONSTRUCT_PAPER_WHERE)
        assert paper.template == standard.template
        # the paper omits WHERE and the braces around the sub-select
        assert paper.where == standard.where.elements[0]

    def test_acme_average_shape(self):
        q = parse_query(ACME_AVERAGE)
        assert q.projection == ((BinaryOp("/", Var("sum"), Var("count")), Var("average")),)
        chain, flt = q.where.elements
        assert chain.op == "EQUALSOPTIONAL"
        assert flt.expr.right == BinaryOp(">", FunctionCall("GETDURATION", ()),
                                          lit("P10D", XSD.duration))

    def test_acme_average_unparenthesised_projection(self):
        assert parse_query(ACME_AVERAGE_PRINTED) == parse_query(ACME_AVERAGE)

    def test_bare_names_use_base_when_given(self):
        q = parse_query(PRINTED_Q2, base="http://stocks.example/#")
        join = q.where.elements[0]
        assert join.left.elements[0].triples[0].p == URIRef("http://stocks.example/#downratedby")
        assert q.base == "http://stocks.example/#"


# ===================================================================
# Operators and WHERE clause structure
# ===================================================================

A_ = "{ ?a <http://x/p> ?b }"
B_ = "{ ?b <http://x/p> ?c }"
C_ = "{ ?c <http://x/p> ?d }"
D_ = "{ ?d <http://x/p> ?e }"


def g(src: str) -> Group:
    return where_of(f"SELECT * WHERE {src}")


class TestOperators:
    @pytest.mark.parametrize("op", ["SEQ", "EQUALS", "OPTIONALSEQ", "EQUALSOPTIONAL"])
    def test_each_temporal_operator(self, op):
        where = g(f"{{ {A_} {op} {B_} }}")
        assert where == Group((TemporalJoin(op, g(A_), g(B_)),))

    def test_chain_is_left_associative(self):
        where = g(f"{{ {A_} SEQ {B_} SEQ {C_} }}")
        assert where.elements[0] == TemporalJoin(
            "SEQ", TemporalJoin("SEQ", g(A_), g(B_)), g(C_))

    def test_union_and_temporal_operators_share_one_level(self):
        where = g(f"{{ {A_} UNION {B_} SEQ {C_} EQUALS {D_} }}")
        assert where.elements[0] == TemporalJoin(
            "EQUALS", TemporalJoin("SEQ", Union(g(A_), g(B_)), g(C_)), g(D_))
        where = g(f"{{ {A_} SEQ {B_} UNION {C_} }}")
        assert where.elements[0] == Union(TemporalJoin("SEQ", g(A_), g(B_)), g(C_))

    def test_keywords_are_case_insensitive(self):
        lower = parse_query(Q1.replace("SELECT", "select").replace("WHERE", "where")
                            .replace("SEQ", "Seq").replace("FILTER", "filter"))
        assert lower == parse_query(Q1)

    def test_top_level_chain_without_filter(self):
        assert where_of(f"SELECT * WHERE {A_} SEQ {B_}") == g(f"{{ {A_} SEQ {B_} }}")

    def test_top_level_single_group_with_filters(self):
        where = where_of(f"SELECT * WHERE {A_} FILTER(?a) FILTER(?b)")
        assert where == Group((g(A_), Filter(Var("a")), Filter(Var("b"))))

    def test_plain_where_is_the_group_itself(self):
        assert where_of(f"SELECT * WHERE {A_}") == g(A_)

    def test_where_keyword_is_optional(self):
        assert parse_query(f"SELECT * {A_} SEQ {B_}") == parse_query(
            f"SELECT * WHERE {A_} SEQ {B_}")

    def test_positions_of_operators(self):
        text = f"SELECT * WHERE {A_}\n  SEQ {B_}"
        join = where_of(text).elements[0]
        assert join.pos == Pos(2, 3)
        assert join.left.pos == Pos(1, 16)


# ===================================================================
# SPARQL constructs
# ===================================================================

class TestTerms:
    def test_prefix_and_base(self):
        q = parse_query("BASE <http://ex.org/a/> PREFIX ex: <http://ex.org/ns#> "
                        "PREFIX rel: <r/> SELECT * { <x> ex:p rel:q }")
        assert q.prefixes == (("ex", "http://ex.org/ns#"), ("rel", "http://ex.org/a/r/"))
        assert q.prefix_map()["ex"] == "http://ex.org/ns#"
        assert q.base == "http://ex.org/a/"
        (t,) = q.where.elements[0].triples
        assert t == tp(URIRef("http://ex.org/a/x"), URIRef("http://ex.org/ns#p"),
                       URIRef("http://ex.org/a/r/q"))

    def test_relative_prefix_keeps_trailing_hash(self):
        q = parse_query("BASE <http://ex.org/a/> PREFIX ex: <ns#> SELECT * { ?s ex:p ?o }")
        assert q.prefix_map()["ex"] == "http://ex.org/a/ns#"

    def test_base_argument_and_query_base(self):
        assert only_triples("SELECT * { ?s <p> ?o }", base="http://b.org/")[0].p == \
            URIRef("http://b.org/p")
        assert only_triples("BASE <http://q.org/> SELECT * { ?s <p> ?o }",
                            base="http://b.org/")[0].p == URIRef("http://q.org/p")
        assert only_triples("SELECT * { ?s <p> ?o }")[0].p == URIRef("p")

    def test_bare_names_concatenate_with_base(self):
        t, = only_triples("BASE <http://q.org/v#> SELECT * { ACME hasPrice ?p }")
        assert t == tp(URIRef("http://q.org/v#ACME"), URIRef("http://q.org/v#hasPrice"), Var("p"))
        t, = only_triples("SELECT * { ACME hasPrice price }")
        assert t == tp(ns("ACME"), ns("hasPrice"), ns("price"))
        assert DEFAULT_BASE == NS

    def test_empty_prefix(self):
        assert only_triples("SELECT * { :a :b :c }")[0] == tp(ns("a"), ns("b"), ns("c"))
        t, = only_triples("PREFIX : <http://e/> SELECT * { :a :b :c }")
        assert t.s == URIRef("http://e/a")

    def test_predeclared_prefixes(self):
        t, = only_triples("SELECT * { ?s rdf:type rdfs:Class ; owl:x xsd:y }")[:1]
        assert t == tp(Var("s"), RDF.type, RDFS.Class)
        assert only_triples("SELECT * { ?s owl:x xsd:y }")[0] == tp(
            Var("s"), URIRef(str(OWL) + "x"), XSD.y)
        t, = only_triples("PREFIX xsd: <http://mine/> SELECT * { ?s xsd:p ?o }")
        assert t.p == URIRef("http://mine/p")

    def test_prefixed_name_local_escapes(self):
        t, = only_triples(r"PREFIX e: <http://e/> SELECT * { ?s e:a\.b e:x%20y }")
        assert t.p == URIRef("http://e/a.b") and t.o == URIRef("http://e/x%20y")

    def test_a_is_rdf_type(self):
        assert only_triples("SELECT * { ?s a ?c }")[0].p == RDF.type

    def test_predicate_object_lists(self):
        ts = only_triples("SELECT * { ?s :p ?a, ?b ; :q ?c ; }")
        assert ts == (tp(Var("s"), ns("p"), Var("a")), tp(Var("s"), ns("p"), Var("b")),
                      tp(Var("s"), ns("q"), Var("c")))

    def test_dollar_variables(self):
        assert only_triples("SELECT $x { $x ?p ?o }")[0].s == Var("x")

    def test_blank_nodes(self):
        ts = only_triples("SELECT * { _:x :p [] . [ :q ?v ; :r [ :s 1 ] ] :t _:x . [ :u 2 ] }")
        assert ts[0] == tp(BNode("x"), ns("p"), BNode("anon0"))
        b1 = ts[1].s
        assert isinstance(b1, BNode) and ts[1].p == ns("t") and ts[1].o == BNode("x")
        assert tp(b1, ns("q"), Var("v")) in ts
        inner = next(t.o for t in ts if t.s == b1 and t.p == ns("r"))
        assert tp(inner, ns("s"), integer("1")) in ts
        assert any(t.p == ns("u") and t.o == integer("2") for t in ts)
        assert len({t.s for t in ts if isinstance(t.s, BNode)}) == 4

    def test_generated_blank_nodes_avoid_user_labels(self):
        ts = only_triples("SELECT * { [] :p _:anon0 }")
        assert ts[0].s != BNode("anon0") and ts[0].o == BNode("anon0")

    def test_parsing_is_deterministic(self):
        text = "SELECT * { [ :p [] ] :q [] }"
        assert parse_query(text) == parse_query(text)

    @pytest.mark.parametrize("src, expected", [
        ('"P30D"^^xsd:duration', lit("P30D", XSD.duration)),
        ('"2024-01-01T00:00:00Z"^^xsd:dateTime', lit("2024-01-01T00:00:00Z", XSD.dateTime)),
        ('"x"^^<http://t/>', lit("x", URIRef("http://t/"))),
        ('"chat"@fr', Literal("chat", lang="fr")),
        ('"hi"@en-US', Literal("hi", lang="en-US")),
        ("42", integer("42")),
        ("-7", integer("-7")),
        ("+7", integer("7")),
        ("3.25", dec("3.25")),
        (".5", dec("0.5")),
        ("-0.5", dec("-0.5")),
        ("1e3", lit("1e3", XSD.double)),
        ("-2.5E-2", lit("-2.5E-2", XSD.double)),
        ("true", lit("true", XSD.boolean)),
        ("FALSE", lit("false", XSD.boolean)),
        ("'single'", Literal("single")),
        (r'"tab\tnl\nq\"b\\ s\'"', Literal("tab\tnl\nq\"b\\ s'")),
        (r'"\u00e9\U0001F600"', Literal("\u00e9\U0001F600")),
        ('"""multi\nline "quoted" ""x"""', Literal('multi\nline "quoted" ""x')),
        ("'''it's'''", Literal("it's")),
        ('""', Literal("")),
    ])
    def test_literals(self, src, expected):
        (t,) = only_triples(f"SELECT * {{ ?s ?p {src} }}")
        assert t.o == expected
        assert t.o.datatype == expected.datatype and t.o.language == expected.language

    def test_comments(self):
        text = "# leading\nSELECT ?x # trailing\nWHERE { ?x ?p <http://a#b> # in\n}"
        assert only_triples(text)[0].o == URIRef("http://a#b")


class TestPatterns:
    def test_group_elements_in_order(self):
        where = g("{ ?a :p ?b . FILTER(?b) ?b :q ?c OPTIONAL { ?c :r ?d } BIND(?d AS ?e) }")
        kinds = [type(e) for e in where.elements]
        assert kinds == [BGP, Filter, BGP, Optional, Bind]
        assert where.elements[3] == Optional(bgp_group(tp(Var("c"), ns("r"), Var("d"))))
        assert where.elements[4] == Bind(Var("d"), Var("e"))

    def test_union(self):
        assert g(f"{{ {A_} UNION {B_} }}").elements == (Union(g(A_), g(B_)),)

    def test_graph(self):
        where = g(f"{{ GRAPH <http://g> {A_} GRAPH ?gr {B_} }}")
        assert where.elements == (Graph(URIRef("http://g"), g(A_)), Graph(Var("gr"), g(B_)))

    def test_minus(self):
        assert g(f"{{ {A_} MINUS {B_} }}").elements == (g(A_), Minus(g(B_)))

    def test_nested_groups(self):
        assert g(f"{{ {{ {A_} }} }}") == Group((Group((g(A_),)),))
        assert g(f"{{ {A_} . {B_} }}").elements == (g(A_), g(B_))
        assert g("{ }") == Group(())

    def test_exists(self):
        where = g(f"{{ ?s ?p ?o FILTER NOT EXISTS {A_} FILTER (EXISTS {B_}) }}")
        assert where.elements[1] == Filter(Exists(g(A_), negated=True))
        assert where.elements[2] == Filter(Exists(g(B_), negated=False))

    def test_subselect(self):
        where = g("{ { SELECT DISTINCT ?x WHERE { ?x :p ?y } } ?x :q ?z }")
        sub = where.elements[0].elements[0]
        assert sub == SubSelect((Var("x"),), bgp_group(tp(Var("x"), ns("p"), Var("y"))),
                                distinct=True)
        assert isinstance(where.elements[1], BGP)

    def test_property_paths(self):
        t, = only_triples("SELECT * { ?s :p/:q|^:r* ?o }")
        assert t.p == PathAlt((PathSeq((ns("p"), ns("q"))), PathInv(PathMod(ns("r"), "*"))))
        t, = only_triples("SELECT * { ?s (:p|a)+ ?o }")
        assert t.p == PathMod(PathAlt((ns("p"), RDF.type)), "+")
        t, = only_triples("SELECT * { ?s :p? ?o }")
        assert t.p == PathMod(ns("p"), "?")
        t, = only_triples("SELECT * { ?s :p+5 }")   # "+5" is a number, as in SPARQL
        assert t == tp(Var("s"), ns("p"), integer("5"))


class TestExpressions:
    def test_precedence(self):
        e = filter_expr("?a + ?b * ?c > 1 || !?d && ?e = ?f")
        assert e == BinaryOp(
            "||",
            BinaryOp(">", BinaryOp("+", Var("a"), BinaryOp("*", Var("b"), Var("c"))),
                     integer("1")),
            BinaryOp("&&", UnaryOp("!", Var("d")), BinaryOp("=", Var("e"), Var("f"))))

    def test_left_associative_arithmetic(self):
        assert filter_expr("?a - ?b - ?c") == BinaryOp(
            "-", BinaryOp("-", Var("a"), Var("b")), Var("c"))
        assert filter_expr("?a / ?b * ?c") == BinaryOp(
            "*", BinaryOp("/", Var("a"), Var("b")), Var("c"))

    @pytest.mark.parametrize("src", ["?a-5", "?a -5", "?a - 5"])
    def test_subtraction_of_a_number(self, src):
        assert filter_expr(src) == BinaryOp("-", Var("a"), integer("5"))

    def test_signed_number_product(self):
        assert filter_expr("?a -2 * ?b") == BinaryOp(
            "-", Var("a"), BinaryOp("*", integer("2"), Var("b")))

    def test_unary(self):
        assert filter_expr("-?a") == UnaryOp("-", Var("a"))
        assert filter_expr("+?a") == UnaryOp("+", Var("a"))
        assert filter_expr("- 5") == integer("-5")
        assert filter_expr("!!?a") == UnaryOp("!", UnaryOp("!", Var("a")))

    @pytest.mark.parametrize("op", ["=", "!=", "<", ">", "<=", ">="])
    def test_comparisons(self, op):
        assert filter_expr(f"?a {op} ?b") == BinaryOp(op, Var("a"), Var("b"))

    def test_in_and_not_in(self):
        assert filter_expr("?a IN (1, ?b)") == In(Var("a"), (integer("1"), Var("b")))
        assert filter_expr("?a NOT IN ()") == NotIn(Var("a"), ())

    @pytest.mark.parametrize("src, name, nargs", [
        ("BOUND(?x)", "BOUND", 1), ("bound(?x)", "BOUND", 1),
        ("IF(?a, 1, 2)", "IF", 3), ("COALESCE(?a, ?b, 3)", "COALESCE", 3),
        ("COALESCE()", "COALESCE", 0), ("STR(?a)", "STR", 1),
        ("LANG(?a)", "LANG", 1), ("DATATYPE(?a)", "DATATYPE", 1),
        ('REGEX(?a, "x")', "REGEX", 2), ('regex(?a, "x", "i")', "REGEX", 3),
        ("isIRI(?a)", "ISIRI", 1), ("isURI(?a)", "ISIRI", 1),
        ("isLiteral(?a)", "ISLITERAL", 1), ("isBlank(?a)", "ISBLANK", 1),
        ("isNumeric(?a)", "ISNUMERIC", 1), ("sameTerm(?a, ?b)", "SAMETERM", 2),
        ('langMatches(?a, "en")', "LANGMATCHES", 2), ("STRLEN(?a)", "STRLEN", 1),
        ("UCASE(?a)", "UCASE", 1), ("LCASE(?a)", "LCASE", 1),
        ('CONTAINS(?a, "b")', "CONTAINS", 2), ('STRSTARTS(?a, "b")', "STRSTARTS", 2),
        ('STRENDS(?a, "b")', "STRENDS", 2), ("CONCAT(?a, ?b, ?c)", "CONCAT", 3),
        ("ABS(?a)", "ABS", 1), ("CEIL(?a)", "CEIL", 1), ("FLOOR(?a)", "FLOOR", 1),
        ("ROUND(?a)", "ROUND", 1), ("getDURATION()", "GETDURATION", 0),
        ("getSTARTTIME()", "GETSTARTTIME", 0), ("getENDTIME( )", "GETENDTIME", 0),
        ("URI(?a)", "IRI", 1),
    ])
    def test_builtin_calls(self, src, name, nargs):
        e = filter_expr(src)
        assert isinstance(e, FunctionCall) and e.name == name and len(e.args) == nargs

    def test_filter_without_parentheses(self):
        where = g('{ ?s ?p ?o FILTER regex(?o, "a") FILTER bound(?s) }')
        assert [f.expr.name for f in where.elements[1:]] == ["REGEX", "BOUND"]

    def test_extension_functions(self):
        e = filter_expr("ex:inRegion(?a, ?b)", "PREFIX ex: <http://ex/>")
        assert e == FunctionCall(URIRef("http://ex/inRegion"), (Var("a"), Var("b")))
        assert filter_expr("<http://f/g>()") == FunctionCall(URIRef("http://f/g"), ())

    def test_time_functions_in_comparisons(self):
        e = filter_expr('getENDTIME() - getSTARTTIME() <= "PT1H"^^xsd:duration')
        assert e.left == BinaryOp("-", FunctionCall("GETENDTIME", ()),
                                  FunctionCall("GETSTARTTIME", ()))

    def test_iri_and_literal_operands(self):
        assert filter_expr('?a = <http://x> || ?a = "s"@en || ?a = true').left.left.right \
            == URIRef("http://x")


class TestQueries:
    def test_select_forms(self):
        q = parse_query("SELECT DISTINCT ?a (?b + 1 AS ?c) (STR(?a) AS ?d) { ?a ?b ?e }")
        assert q.distinct and not q.reduced
        assert q.projection == (Var("a"), (BinaryOp("+", Var("b"), integer("1")), Var("c")),
                                (FunctionCall("STR", (Var("a"),)), Var("d")))
        assert parse_query("SELECT REDUCED * {}").reduced
        assert parse_query("SELECT * {}").projection == "*"

    def test_unparenthesised_projection_mixes_with_standard_ones(self):
        q = parse_query("SELECT ?a ?b * 2 AS ?c (?a AS ?d) (?a) / 2 AS ?e ?f { }")
        assert q.projection == (
            Var("a"), (BinaryOp("*", Var("b"), integer("2")), Var("c")),
            (Var("a"), Var("d")), (BinaryOp("/", Var("a"), integer("2")), Var("e")),
            Var("f"))

    def test_construct_forms(self):
        braced = parse_query("CONSTRUCT { ?s :p ?o . ?o :q 1 } WHERE { ?s :r ?o }")
        unbraced = parse_query("CONSTRUCT ?s :p ?o . ?o :q 1 WHERE { ?s :r ?o }")
        assert braced == unbraced
        assert len(braced.template) == 2
        short = parse_query("CONSTRUCT WHERE { ?s :p ?o }")
        assert short.template == (tp(Var("s"), ns("p"), Var("o")),)
        assert short.where == bgp_group(tp(Var("s"), ns("p"), Var("o")))
        assert parse_query("CONSTRUCT {} WHERE {}").template == ()

    def test_ask(self):
        q = parse_query(f"ASK {A_} SEQ {B_}")
        assert isinstance(q, AskQuery)
        assert q.where.elements[0].op == "SEQ"


# ===================================================================
# Rejections and semantic errors
# ===================================================================

REJECTIONS = [
    ("SELECT * { ?s ?p ?o } LIMIT 10", "LIMIT is not supported on a stream", (1, 23)),
    ("SELECT * { ?s ?p ?o }\nOFFSET 3", "OFFSET is not supported on a stream", (2, 1)),
    ("SELECT * { ?s ?p ?o } ORDER BY ?s", "ORDER BY is not supported on a stream", (1, 23)),
    ("SELECT * { ?s ?p ?o } ORDER BY DESC(?s) LIMIT 1", "ORDER BY", (1, 23)),
    ("SELECT ?s { ?s ?p ?o } GROUP BY ?s", "GROUP BY is not supported yet", (1, 24)),
    ("SELECT ?s { ?s ?p ?o } GROUP BY ?s HAVING (?s > 1)", "GROUP BY", (1, 24)),
    ("SELECT (COUNT(*) AS ?n) { ?s ?p ?o }", "aggregate COUNT", (1, 9)),
    ("SELECT (sum(DISTINCT ?o) AS ?n) { ?s ?p ?o }", "aggregate SUM", (1, 9)),
    ("SELECT (GROUP_CONCAT(?o; separator=',') AS ?n) { ?s ?p ?o }",
     "aggregate GROUP_CONCAT", (1, 9)),
    ("DESCRIBE <http://x>", "DESCRIBE", (1, 1)),
    ("SELECT * FROM <http://g> { ?s ?p ?o }", "FROM", (1, 10)),
    ("SELECT * FROM NAMED <http://g> { ?s ?p ?o }", "FROM", (1, 10)),
    ("SELECT * { SERVICE <http://s> { ?s ?p ?o } }", "SERVICE", (1, 12)),
    ("SELECT * { VALUES ?x { 1 2 } ?x ?p ?o }", "VALUES", (1, 12)),
    ("SELECT * { ?x ?p ?o } VALUES (?x) { (1) (UNDEF) }", "VALUES", (1, 23)),
    ("SELECT * { ?x ?p ?o }\n  LIMIT 5 ORDER BY ?x", None, None),  # syntax: wrong order
]


class TestRejections:
    @pytest.mark.parametrize("text, fragment, position", REJECTIONS)
    def test_rejected_constructs(self, text, fragment, position):
        if fragment is None:
            syntax_error(text)
            return
        err = query_error(text)
        assert fragment in err.message
        assert (err.line, err.column) == position
        assert str(err).startswith(f"line {position[0]}, column {position[1]}: ")

    def test_first_rejected_construct_in_the_text_is_reported(self):
        err = query_error("SELECT * FROM <g> { ?s ?p ?o } LIMIT 1")
        assert err.message.startswith("FROM")

    @pytest.mark.parametrize("text, fragment, position", [
        ("SELECT * { ?s ex:p ?o }", "unknown prefix 'ex:'", (1, 15)),
        ("PREFIX ex: <http://e/>\nSELECT * {\n  ?s ex:p foo:bar }", "unknown prefix 'foo:'", (3, 11)),
        ("SELECT * { ?s ?p ?o FILTER (?o = e:x) }", "unknown prefix 'e:'", (1, 34)),
        ("SELECT * { ?s ?p ?o FILTER (frob(?o)) }", "unknown function 'frob'", (1, 29)),
        ("SELECT * { ?s ?p ?o FILTER (BOUND(?o, ?s)) }", "BOUND() takes 1 argument", (1, 29)),
        ("SELECT * { ?s ?p ?o FILTER (IF(?o, 1)) }", "IF() takes 3 arguments, got 2", (1, 29)),
        ("SELECT * { ?s ?p ?o FILTER (getDURATION(?o) < 1) }", "takes 0 arguments", (1, 29)),
        ("SELECT * { ?s ?p ?o FILTER (BOUND(1)) }", "BOUND needs a variable", (1, 29)),
        ("SELECT * { ?s ?p ?o FILTER (STR(DISTINCT ?o)) }", "DISTINCT", (1, 29)),
        ("CONSTRUCT { ?s :p/:q ?o } WHERE { ?s ?p ?o }", "property paths", (1, 13)),
        ("SELECT ?x (1 AS ?x) { }", "projected twice", (1, 17)),
    ])
    def test_semantic_errors(self, text, fragment, position):
        err = query_error(text)
        assert fragment in err.message
        assert (err.line, err.column) == position


# ===================================================================
# Syntax errors: positions and messages
# ===================================================================

MULTI_LINE = """PREFIX ex: <http://ex.org/>
SELECT ?company
WHERE { ?company ex:price ?p1 }
  SEQ { ?company ex:price ?p2 }
FILTER (?p2 < ?p1 * )"""


class TestSyntaxErrors:
    @pytest.mark.parametrize("text, position, message", [
        ("SELECT ?x WHERE { ?x ?p ?o . SEQ { } }", (1, 30),
         "expected '}', a triple pattern"),
        ("SELECT ?x WHERE { ?x ?p ?o SEQ { } }", (1, 28), "found 'SEQ'"),
        ("SELECT ?x WHERE { ?x ?p }", (1, 25), "expected an RDF term or a variable, found '}'"),
        ("SELECT ?x WHERE { ?x }", (1, 22), "expected a predicate"),
        ("SELEC ?x WHERE { }", (1, 1), "expected PREFIX/BASE or SELECT/CONSTRUCT/ASK, found 'SELEC'"),
        ("", (1, 1), "found the end of the query"),
        ("   \n  # only a comment\n", (1, 1), "found the end of the query"),
        ("SELECT ?x WHERE { ?x ?p ?o FILTER (?x ?y) }", (1, 39), "expected ')' or an operator"),
        ("SELECT ?x WHERE { ?x ?p ?o } ?y", (1, 30), "found '?y'"),
        (MULTI_LINE, (5, 21), "expected an expression, found ')'"),
        ("SELECT ?x WHERE {\n  ?x ?p ?o .\n", (2, 13), "expected '}'"),
        ("SELECT ?x WHERE {\n  ?x ?p ?o .   # no closing brace\n\n", (2, 13),
         "found the end of the query"),
        ("SELECT ?x\nWHERE { ?x ?p \"unterminated }\n", (2, 15), "unterminated string"),
        ('SELECT * {\n?s ?p """line one\nline two \\q"""\n}', (3, 10), "invalid escape sequence '\\q'"),
        ("SELECT * {\t?s\t?p ?o .\t} }", (1, 25), "found '}'"),
        ("SELECT * { ?s ?p ?o } SEQ", (1, 26), "expected '{', found the end of the query"),
        ("PREFIX ex: <http://a b> SELECT * {}", (1, 12), "an IRI is written <...>"),
        ("SELECT * { ?s ?p ?o FILTER }", (1, 28), "expected '(', a function call or [NOT] EXISTS"),
        ("SELECT * { ?s ?p ?o } FILTER ?o", (1, 30), "found '?o'"),
        ("SELECT * { ?s ?p @en }", (1, 18), "must directly follow a string"),
        ("SELECT * { ?s ?p ?o . @ }", (1, 23), "invalid language tag"),
        ("SELECT * { ?s ?p ? }", (1, 18), "variable name is missing after '?'"),
        ("SELECT * { ?s ?p $ }", (1, 18), "variable name is missing after '$'"),
        ("SELECT * { _: ?p ?o }", (1, 12), "blank node label is missing"),
        ("SELECT * { ?s ?p ?o FILTER(?o = %) }", (1, 33),
         "unexpected character '%'; expected an expression"),
        ("SELECT ?x WHERE { ?x \u00a7 ?o }", (1, 22),
         "unexpected character '\u00a7'; expected a predicate (an IRI, a variable or 'a')"),
        ("SELECT * { ?s ?p ?o } SEQ %", (1, 27), "unexpected character '%'; expected '{'"),
        ("SELECT * { ?s ?p ?o FILTER(foo) }", (1, 31), "expected '(', found ')'"),
        ("ASK { ?s ?p ?o } } ", (1, 18), "found '}'"),
    ])
    def test_positions_and_messages(self, text, position, message):
        err = syntax_error(text)
        assert (err.line, err.column) == position, err
        assert message in err.message, err.message

    def test_str_shows_line_and_caret(self):
        err = syntax_error(MULTI_LINE)
        assert str(err).split("\n") == [
            "line 5, column 21: expected an expression, found ')'",
            "FILTER (?p2 < ?p1 * )",
            "                    ^",
        ]

    def test_caret_keeps_tabs(self):
        err = syntax_error("SELECT * {\t?s\t?p ?o .\t} }")
        source, caret = str(err).split("\n")[1:]
        assert caret == "          \t  \t       \t  ^"
        assert len(caret) == err.column

    def test_query_error_str_has_caret_too(self):
        lines = str(query_error("SELECT *\n{ ?s ?p ?o } LIMIT 1")).split("\n")
        assert lines[0].startswith("line 2, column 14: LIMIT")
        assert lines[1:] == ["{ ?s ?p ?o } LIMIT 1", "             ^"]

    def test_error_classes(self):
        assert issubclass(QuerySyntaxError, QueryError)
        assert issubclass(QueryError, ValueError)
        err = QueryError("no position")
        assert (err.line, err.column, str(err)) == (None, None, "no position")

    def test_errors_pickle(self):
        err = syntax_error(MULTI_LINE)
        copy = pickle.loads(pickle.dumps(err))
        assert type(copy) is QuerySyntaxError
        assert (copy.line, copy.column, copy.message, str(copy)) == (
            err.line, err.column, err.message, str(err))

    def test_non_string_input(self):
        with pytest.raises(TypeError):
            parse_query(b"SELECT * {}")  # type: ignore[arg-type]

    @staticmethod
    def _nested(n: int) -> list[str]:
        return [
            "SELECT * " + "{" * n + "?s ?p ?o" + "}" * n,
            "SELECT * { ?s ?p ?o FILTER(" + "!" * n + "?o) }",
            "SELECT * { ?s ?p ?o FILTER(" + "(" * n + "?o" + ")" * n + ") }",
            "SELECT * { ?s ?p " + "[ :p " * n + "1" + " ]" * n + " }",
        ]

    @pytest.mark.parametrize("index", range(4))
    def test_deep_nesting_up_to_the_limit_parses(self, index):
        from epsparql.language.parser import MAX_NESTING
        text = self._nested(MAX_NESTING - 3)[index]
        assert isinstance(parse_query(text), SelectQuery)   # iterative AST building

    @pytest.mark.parametrize("index", range(4))
    def test_deeper_nesting_is_refused_at_the_first_bracket_past_the_limit(self, index):
        from epsparql.language.parser import MAX_NESTING
        text = self._nested(3000)[index]
        err = query_error(text)
        assert f"more than {MAX_NESTING:,} levels deep, the limit" in err.message
        assert err.line == 1 and text[err.column - 1] in "{([!"
        lines = str(err).split("\n")
        assert len(lines) == 3 and len(lines[1]) < 120      # an excerpt, not the line

    def test_long_chains_are_not_nesting(self):
        text = "SELECT * { ?s ?p ?o FILTER(?o -1" + " * ?o" * 3000 + ") }"
        assert isinstance(parse_query(text), SelectQuery)
        union = " UNION ".join(["{ ?s ?p ?o }"] * 3000)
        assert isinstance(parse_query(f"SELECT * {{ {union} }}"), SelectQuery)


# ===================================================================
# The AST itself
# ===================================================================

class TestAst:
    def test_nodes_are_hashable_and_positions_do_not_count(self):
        a = parse_query(Q1)
        b = parse_query(Q1_FORMATTED)
        assert a == b and hash(a) == hash(b)
        assert a.where.elements[1].pos != b.where.elements[1].pos
        assert len({a, b}) == 1

    def test_positions(self):
        q = parse_query(Q1_FORMATTED)
        join, flt = q.where.elements
        assert q.pos == Pos(2, 1)
        assert flt.pos == Pos(6, 1)
        assert join.pos == Pos(5, 5) and join.left.pos == Pos(4, 5)
        assert join.left.left.pos == Pos(3, 9)
        assert join.left.left.elements[0].triples[0].pos == Pos(3, 11)
        assert flt.expr.pos == Pos(8, 7)            # the last '&&'
        assert flt.expr.right.left.pos == Pos(8, 10)  # getDURATION
        assert Var("company").pos is None
        assert q.projection[0].pos == Pos(2, 8)

    def test_reprs_are_readable(self):
        assert repr(Var("x")) == "Var('x')"
        text = repr(parse_query("SELECT ?x { ?x ?p ?o }"))
        assert "pos" not in text and "Var('x')" in text

    def test_frozen(self):
        with pytest.raises(Exception):
            Var("x").name = "y"  # type: ignore[misc]


# ===================================================================
# Speed and robustness
# ===================================================================

def test_the_grammar_is_built_once(monkeypatch):
    """Building the LALR parser is the slow part of parsing: 100 parses
    build it at most once (speed itself is measured in bench/, not here)."""
    import epsparql.language.parser as parser_module
    real, built = parser_module.Lark, []

    def counting(*args, **kwargs):
        built.append(1)
        return real(*args, **kwargs)
    monkeypatch.setattr(parser_module, "Lark", counting)
    for _ in range(100):
        parse_query(ACME_CONSTRUCT)
    assert len(built) <= 1


_TOKEN = re.compile(r'"[^"]*"|<[^>]*>|\S+')
_INSERTS = list("{}()[]<>?$.;,:\"'#@^*+-/|!=&_\\ \n\t") + [
    " SEQ ", " UNION ", " FILTER ", " OPTIONAL ", " a ", "?x", "<http://x>",
    "ex:", '"s"', " true ", " LIMIT ", " SELECT ", " WHERE ", " COUNT(",
    " NOT ", " IN ", " EXISTS ", '"""', "\\u12", "_:", "[]", "1.5e", "-",
    " EQUALSOPTIONAL ", " BIND(", " AS ", "xsd:", "^^", "@en", " GRAPH "]


def _mutate(text: str, data) -> str:
    """Apply a few random character- and token-level edits to ``text``."""
    for _ in range(data.draw(st.integers(1, 4), label="edits")):
        kind = data.draw(st.sampled_from(["delete", "insert", "swap", "tokens"]))
        n = len(text)
        i = data.draw(st.integers(0, n), label="at")
        if kind == "delete":
            text = text[:i] + text[i + data.draw(st.integers(1, 8)):]
        elif kind == "insert":
            text = text[:i] + data.draw(st.sampled_from(_INSERTS)) + text[i:]
        elif kind == "swap" and n > 1:
            j = data.draw(st.integers(0, n - 1))
            chars = list(text)
            chars[i % n], chars[j] = chars[j], chars[i % n]
            text = "".join(chars)
        else:
            text = _mutate_tokens(text, data)
    return text


def _mutate_tokens(text: str, data) -> str:
    """Delete, duplicate or swap whole tokens."""
    tokens = _TOKEN.findall(text)
    if len(tokens) < 2:
        return text
    i = data.draw(st.integers(0, len(tokens) - 1))
    j = data.draw(st.integers(0, len(tokens) - 1))
    how = data.draw(st.sampled_from(["delete", "duplicate", "swap"]))
    if how == "delete":
        del tokens[i]
    elif how == "duplicate":
        tokens.insert(j, tokens[i])
    else:
        tokens[i], tokens[j] = tokens[j], tokens[i]
    return " ".join(tokens)


def _check_only_query_errors(text: str) -> None:
    """parse_query may succeed or raise QueryError, with a sane position."""
    try:
        parse_query(text)
    except QuerySyntaxError as err:
        lines = text.split("\n")
        assert isinstance(err.line, int) and isinstance(err.column, int)
        assert 1 <= err.line <= len(lines)
        assert 1 <= err.column <= len(lines[err.line - 1]) + 1
        assert str(err).startswith(f"line {err.line}, column {err.column}: ")
    except QueryError as err:
        assert err.message and str(err)


_SEEDS = ALL_PAPER_QUERIES + [
    "BASE <http://ex.org/> PREFIX ex: <ns#> SELECT DISTINCT * WHERE { ?s ex:p/ex:q|^ex:r* ?o ; "
    "a ex:C, <rel> . [ ex:a 1 ] ex:b [] . _:x ex:c -5, +2.5, 1e3, true, \"x\"@en, 'y' . "
    "OPTIONAL { ?s ex:d ?d } GRAPH <g> { ?s ?p ?o } BIND(?d * 2 AS ?e) MINUS { ?s ex:n ?n } "
    "FILTER NOT EXISTS { ?s ex:z ?z } FILTER(?o IN (1, 2) && ?o NOT IN ()) }",
    "SELECT ?a (?b + 1 AS ?c) ?d - 2 AS ?e { ?a ?b ?d } ORDER BY ?a LIMIT 3",
]


@settings(max_examples=300, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(seed=st.sampled_from(_SEEDS), data=st.data())
def test_mutated_queries_raise_only_query_errors(seed, data):
    _check_only_query_errors(_mutate(seed, data))


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=120))
def test_random_text_raises_only_query_errors(text):
    _check_only_query_errors(text)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(_INSERTS + ["{", "}", "?y", ":p", "."]), max_size=30))
def test_random_token_soup_raises_only_query_errors(tokens):
    _check_only_query_errors("SELECT * WHERE " + "".join(tokens))
