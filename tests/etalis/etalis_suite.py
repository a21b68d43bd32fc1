"""Run ETALIS' own examples against prolog/etalis.pl (see suite/README.md).

Each example runs in a scratch copy of ``suite/examples`` next to a
``src/etalis.P`` and a ``src/ep_sparql/ep_sparql.P`` that load the
epsparql entry points, with its own command line from ``test.sh.bat``
(only ``swipl`` replaced by the SWI-Prolog that has library(janus)), from
the example's folder, stdin closed.  The verdict is what the example wrote
to ``../results.txt``: PASS when it wrote lines and all say "passed".
Examples that set alarms may keep running after their verdict: a run is
stopped a few seconds after one appears, or at the time limit.
"""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SUITE = Path(__file__).resolve().parent / "suite"
PROLOG = ROOT / "prolog"


@dataclass
class Run:
    """One example's run: its verdict and what it printed."""

    name: str
    verdict: str            # PASS, FAIL, NO_VERDICT, TIMEOUT
    results: str
    stdout: str
    stderr: str
    seconds: float


def etalis_verdicts() -> dict[str, str]:
    """ETALIS' own verdict per example (suite/etalis_verdicts.tsv)."""
    out = {}
    for line in (SUITE / "etalis_verdicts.tsv").read_text().splitlines():
        if line.strip():
            name, verdict = line.split("\t")
            out[name] = verdict
    return out


@lru_cache(maxsize=1)
def swipl_with_janus() -> str:
    """The swipl the project builds for janus (scripts/swipl.sh prints its prefix)."""
    proc = subprocess.run(["bash", str(ROOT / "scripts" / "swipl.sh")],
                          capture_output=True, text=True, timeout=1800)
    if proc.returncode != 0:
        raise RuntimeError(f"scripts/swipl.sh failed: {proc.stderr[-2000:]}")
    exe = Path(proc.stdout.strip().splitlines()[-1]) / "bin" / "swipl"
    if not exe.exists():
        raise RuntimeError(f"no swipl at {exe}")
    return str(exe)


def command_line(example: Path) -> str:
    """The example's swipl command line (the first one not commented out)."""
    for line in (example / "test.sh.bat").read_text().splitlines():
        if line.lstrip().startswith("swipl "):
            return line.strip()
    raise ValueError(f"{example.name}: no swipl command line in test.sh.bat")


def scratch_tree(workdir: Path, entry: Path = PROLOG / "etalis",
                 ep_entry: Path = PROLOG / "etalis_ep_sparql") -> Path:
    """A copy of the examples beside a src/ that loads the entry points."""
    shutil.copytree(SUITE / "examples", workdir / "examples")
    src = workdir / "src"
    (src / "ep_sparql").mkdir(parents=True)
    (src / "etalis.P").write_text(f":- ensure_loaded('{entry}').\n")
    (src / "ep_sparql" / "ep_sparql.P").write_text(f":- ensure_loaded('{ep_entry}').\n")
    return workdir / "examples"


def run_example(name: str, workdir: Path, timeout: float = 120.0,
                grace: float = 5.0, entry: Path = PROLOG / "etalis") -> Run:
    """Run one example in its own scratch tree under workdir (entry: the
    file src/etalis.P loads)."""
    examples = scratch_tree(workdir, entry)
    folder = examples / name
    line = command_line(folder)
    swipl = swipl_with_janus()
    line = swipl + line[len("swipl"):]
    results = examples / "results.txt"
    t0 = time.monotonic()
    proc = subprocess.Popen(["bash", "-c", line], cwd=folder, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    verdict_at = None
    timed_out = False
    while True:
        try:
            out, err = proc.communicate(timeout=0.5)
            break
        except subprocess.TimeoutExpired:
            now = time.monotonic()
            if verdict_at is None and results.exists() and results.read_text().strip():
                verdict_at = now
            if (verdict_at is not None and now - verdict_at > grace) or now - t0 > timeout:
                timed_out = verdict_at is None
                os.killpg(proc.pid, signal.SIGKILL)
                out, err = proc.communicate()
                break
    text = results.read_text() if results.exists() else ""
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if lines and all("passed" in ln for ln in lines):
        verdict = "PASS"
    elif lines:
        verdict = "FAIL"
    else:
        verdict = "TIMEOUT" if timed_out else "NO_VERDICT"
    return Run(name, verdict, text, out, err, time.monotonic() - t0)
