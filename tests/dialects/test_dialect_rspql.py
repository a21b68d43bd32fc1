"""RSP-QL against the brute-force reference, on generated streams and queries."""
from __future__ import annotations

import pytest

from dialect_cases import check_against_reference, rspql_query


@pytest.mark.parametrize("seed", range(120))
def test_rspql_matches_reference(seed):
    check_against_reference(6000 + seed, rspql_query, "rspql")
