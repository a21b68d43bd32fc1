"""Streaming SPARQL against the brute-force reference, on generated streams and queries."""
from __future__ import annotations

import pytest

from dialect_cases import check_against_reference, streaming_sparql_query


@pytest.mark.parametrize("seed", range(80))
def test_streaming_sparql_matches_reference(seed):
    check_against_reference(3000 + seed, streaming_sparql_query, "streaming-sparql")
