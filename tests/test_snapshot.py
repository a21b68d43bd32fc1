"""State snapshots: export/restore of an engine's dynamic state.

``b.restore(a.snapshot())`` (same queries, same order) makes ``b`` continue
exactly as ``a`` would; the same for ``CoreEngine.export_state`` /
``import_state`` with core rules.  Real SWI-Prolog, no mocks.
"""
from __future__ import annotations

from collections import Counter

import pytest
from rdflib import Literal, URIRef

from epsparql import Engine

NS = "http://epsparql.org/ns#"

QUERY1 = """SELECT ?company WHERE { ?company hasStockPrice ?price1 }
    SEQ { ?company hasStockPrice ?price2 }
    SEQ { ?company hasStockPrice ?price3 }
    FILTER ( ?price2 < ?price1 * 0.7 && ?price3 > ?price1 * 1.05
             && getDURATION() < "P30D"^^xsd:duration )"""


def test_stock_query_continues_after_restore():
    acme, price = URIRef(NS + "ACME"), URIRef(NS + "hasStockPrice")
    a, b = Engine(), Engine()
    try:
        qa, qb = a.register(QUERY1), b.register(QUERY1)
        a.push_many([(acme, price, Literal(100), 0), (acme, price, Literal(60), 5 * 86400)])
        b.restore(a.snapshot())
        for e in (a, b):
            e.push_many([(acme, price, Literal(110), 20 * 86400)])
            e.flush()
        ra, rb = qa.results(), qb.results()
        assert len(ra) == 1
        assert Counter((tuple(x.bindings.items()), x.start, x.end) for x in ra) == \
            Counter((tuple(x.bindings.items()), x.start, x.end) for x in rb)
    finally:
        a.close()
        b.close()
