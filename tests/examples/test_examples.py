"""The bundled examples run and find what was planted in their data."""
from __future__ import annotations

import subprocess
import sys

from conftest import ROOT  # the repository root, wherever this file sits


def test_main_job_finds_the_planted_crashes_and_rebounds():
    r = subprocess.run([sys.executable, "-m", "epsparql.demo"], cwd=ROOT,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    out = r.stdout
    counts = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[0] in ("crash", "crash_rebound"):
            counts[(parts[0], parts[1])] = int(parts[2])
    # planted: crashes of ACME, GLOBEX, INITECH, HOOLI; rebounds all but GLOBEX
    assert {c for (k, c) in counts if k == "crash"} == {"ACME", "GLOBEX", "INITECH", "HOOLI"}
    assert {c for (k, c) in counts if k == "crash_rebound"} == {"ACME", "INITECH", "HOOLI"}
    # the EP-SPARQL query (1) over the same data finds the same three companies
    sparql = out[out.index("EP-SPARQL"):]
    found = {line.split()[0] for line in sparql.splitlines()[1:] if "answers, first" in line}
    assert found == {"ACME", "INITECH", "HOOLI"}


def test_acme_running_average():
    sys.path.insert(0, str(ROOT / "examples" / "acme"))
    try:
        import run  # type: ignore
        rows = run.main()
    finally:
        sys.path.pop(0)
    got = [(int(a["count"]), round(float(a["average"]), 4)) for a in rows]
    prices = run.PRICES
    # the chain stops once the interval from the seed reaches 10 days
    want = [(n, round(sum(prices[:n]) / n, 4)) for n in range(1, 10)]
    assert got == want
