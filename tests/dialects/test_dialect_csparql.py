"""C-SPARQL against the brute-force reference, on generated streams and queries."""
from __future__ import annotations

import pytest

from dialect_cases import check_against_reference, csparql_query


@pytest.mark.parametrize("seed", range(150))
def test_csparql_matches_reference(seed):
    check_against_reference(1000 + seed, csparql_query, "csparql")
