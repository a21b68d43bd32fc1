"""The plunit suite of prolog/etalis.pl and the core's justification
(tests/prolog/test_etalis.pl), run with the project's SWI-Prolog."""
from __future__ import annotations

import subprocess

from etalis_suite import ROOT, swipl_with_janus

PLUNIT = ROOT / "tests" / "prolog" / "test_etalis.pl"


def test_plunit_suite():
    proc = subprocess.run([swipl_with_janus(), "-g", "run_tests", "-t", "halt", str(PLUNIT)],
                          capture_output=True, text=True, timeout=600, cwd=ROOT)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    assert "tests passed" in out and "FAILED" not in out, out
    assert "Warning" not in out, out
