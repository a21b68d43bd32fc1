"""Which routing ``auto`` picks for a batch replay (epsparql/spark/scan.py).

The scan plan reads the whole input once per partition and holds a
partition's rows in its worker, so ``auto`` takes it only for few
partitions with a bounded share of the input each; the answers of both
plans are compared in test_spark.py, test_spark_windowed.py and
test_spark_dialects.py.
"""
from __future__ import annotations

import gzip

import pytest

from epsparql.spark import scan
from epsparql.spark.read import plan_pieces

SHARE = scan.SCAN_MAX_SHARE


def sparse(path, size: int) -> str:
    with open(path, "wb") as f:            # a hole: the size without the bytes
        f.truncate(size)
    return str(path)


def test_auto_scans_few_partitions_with_a_small_share_each(tmp_path):
    small = sparse(tmp_path / "a.nt", 50 << 20)
    for n in (1, 2, 4):
        assert scan.choose("auto", plan_pieces([small], "nt", n), n) == "scan"
    assert scan.choose("auto", plan_pieces([small], "nt", 5), 5) == "shuffle"


def test_auto_shuffles_when_a_share_is_too_large_to_hold(tmp_path):
    big = sparse(tmp_path / "b.nt", 2 * SHARE + 1)
    pieces = plan_pieces([big], "nt", 2)
    assert len(pieces) > 2                  # cut into pieces, counted whole
    assert scan.choose("auto", pieces, 2) == "shuffle"
    assert scan.choose("auto", plan_pieces([big], "nt", 3), 3) == "scan"
    half = sparse(tmp_path / "c.nt", SHARE // 2)
    assert scan.choose("auto", plan_pieces([half, half], "nt", 1), 1) == "scan"
    more = sparse(tmp_path / "d.nt", 1 << 20)
    assert scan.choose("auto", plan_pieces([half, half, more], "nt", 1), 1) == "shuffle"


def test_a_gzip_file_counts_at_its_inflated_size(tmp_path, monkeypatch):
    monkeypatch.setattr(scan, "SCAN_MAX_SHARE", 8 << 20)    # a small threshold, a small file
    gz = tmp_path / "e.nt.gz"
    with gzip.open(gz, "wb", compresslevel=0) as f:
        f.write(b"#" * (scan.SCAN_MAX_SHARE // scan.GZ_RATIO + (1 << 20)))
    assert scan.choose("auto", plan_pieces([str(gz)], "nt", 1), 1) == "shuffle"


def test_a_forced_routing_is_kept_and_a_wrong_one_named():
    assert scan.choose("shuffle", [], 1) == "shuffle"
    assert scan.choose("scan", [], 64) == "scan"
    with pytest.raises(ValueError, match="routing is one of auto, shuffle, scan, not 'hash'"):
        scan.choose("hash", [], 2)
