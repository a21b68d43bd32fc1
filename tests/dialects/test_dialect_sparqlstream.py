"""SPARQLstream against the brute-force reference, on generated streams and queries."""
from __future__ import annotations

import pytest

from dialect_cases import check_against_reference, sparqlstream_query


@pytest.mark.parametrize("seed", range(120))
def test_sparqlstream_matches_reference(seed):
    check_against_reference(2000 + seed, sparqlstream_query, "sparqlstream")
