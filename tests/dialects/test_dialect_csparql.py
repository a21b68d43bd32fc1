"""C-SPARQL against the brute-force reference, on generated streams and
queries: the engine reading (time windows closed-open from t0, as CSRBench's
oracle reproduces C-SPARQL 0.9) with the default t0 and another, and the
CQL reading."""
from __future__ import annotations

from fractions import Fraction
from functools import partial

import pytest

from dialect_cases import check_against_reference, csparql_query


@pytest.mark.parametrize("seed", range(100))
def test_csparql_matches_reference(seed):
    check_against_reference(1000 + seed, csparql_query, "csparql")


@pytest.mark.parametrize("seed", range(30))
def test_csparql_with_a_t0_matches_reference(seed):
    """``window_t0``: windows [t0 + kβ, t0 + kβ + ω), k >= 0 (nothing before t0)."""
    t0 = (Fraction(3, 2), Fraction(2), Fraction(-1), Fraction(7))[seed % 4]
    check_against_reference(1700 + seed, partial(csparql_query, t0=t0), "csparql",
                            window_t0=t0)


@pytest.mark.parametrize("seed", range(40))
def test_csparql_in_the_cql_reading_matches_reference(seed):
    """``window_semantics="cql"``: (t − ω, t] at t = k·β, as before."""
    check_against_reference(1200 + seed, partial(csparql_query, semantics="cql"), "csparql",
                            window_semantics="cql")
