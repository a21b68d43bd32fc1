"""LUPOSDATE against the brute-force reference, on generated streams and queries."""
from __future__ import annotations

import pytest

from dialect_cases import check_against_reference, luposdate_query


@pytest.mark.parametrize("seed", range(80))
def test_luposdate_matches_reference(seed):
    check_against_reference(4000 + seed, luposdate_query, "luposdate")
