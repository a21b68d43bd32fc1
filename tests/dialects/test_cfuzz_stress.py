"""A few small cases of cfuzz_stress.py (the differential stress of the
windowed aggregates' C paths, run by hand at scale): the C paths against
the Prolog path in each dialect and window semantics (snapshot and
restore, and background, mid-stream), two against the reference and two
against re-scanning too, and the content table grown past its first
size with atom collections between chunks."""
from __future__ import annotations

import pytest

from cfuzz_stress import big_case, case


@pytest.mark.parametrize("seed", [100, 107, 109, 112, 113, 130])
def test_c_paths_answer_as_the_prolog_path(seed):
    assert case(seed, 600).startswith("ok ")


@pytest.mark.parametrize("seed", [1, 3])
def test_c_paths_answer_as_the_reference(seed):
    assert case(seed, 300, ref_only=True).endswith("+ref")


@pytest.mark.parametrize("seed", [1039, 1051])
def test_c_paths_answer_as_rescanning(seed):
    assert case(seed, 600, rescan=True).endswith("+rescan")


def test_content_table_at_scale():
    assert big_case(7, 30000).startswith("big ok")
