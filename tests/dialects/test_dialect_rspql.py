"""RSP-QL against the brute-force reference, on generated streams and
queries: the engine reading (windows closed-open from t0 for every k, as
YASPER and rsp-js open them) with the default t0 and another, and the CQL
reading."""
from __future__ import annotations

from fractions import Fraction
from functools import partial

import pytest

from dialect_cases import check_against_reference, rspql_query


@pytest.mark.parametrize("seed", range(80))
def test_rspql_matches_reference(seed):
    check_against_reference(6000 + seed, rspql_query, "rspql")


@pytest.mark.parametrize("seed", range(30))
def test_rspql_with_a_t0_matches_reference(seed):
    t0 = (Fraction(1, 2), Fraction(1), Fraction(-3), Fraction(5))[seed % 4]
    check_against_reference(6700 + seed, partial(rspql_query, t0=t0), "rspql", window_t0=t0)


@pytest.mark.parametrize("seed", range(40))
def test_rspql_in_the_cql_reading_matches_reference(seed):
    check_against_reference(6200 + seed, partial(rspql_query, semantics="cql"), "rspql",
                            window_semantics="cql")
