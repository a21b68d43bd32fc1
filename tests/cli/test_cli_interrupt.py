"""Ctrl-C on `epsparql run`: what the summary counts is what the output
holds, in every answer format (issue 25, finding 3: with sparql-json the
summary counted answers that were not in the file)."""
from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cli_child import NEVER, env
from conftest import ROOT

QUERY = "PREFIX ex: <http://example.org/>\nSELECT ?s ?o WHERE { ?s ex:p ?o }\n"


def big_stream(path, n: int = 400_000) -> None:
    with open(path, "w") as f:
        for i in range(n):
            f.write(f'<http://example.org/s{i % 97}> <http://example.org/p> "{i}" {i} .\n')


def written(fmt: str, text: str) -> int:
    if fmt == "jsonl":
        return sum(1 for line in text.splitlines() if line.strip())
    if fmt == "csv":
        return max(0, len(text.splitlines()) - 1)
    if fmt == "sparql-json":
        return sum(len(json.loads(line)["results"]["bindings"]) for line in text.splitlines()
                   if line.strip())
    raise AssertionError(fmt)


def spooled(pid: int) -> int:
    """Bytes in the process's deleted temporary files (the sparql-json
    writer's spools), read through /proc."""
    total = 0
    fds = Path(f"/proc/{pid}/fd")
    for fd in list(fds.iterdir()) if fds.exists() else []:
        try:
            if os.readlink(fd).endswith(" (deleted)"):
                total += os.stat(fd).st_size
        except OSError:
            pass
    return total


@pytest.mark.slow
@pytest.mark.parametrize("fmt, delay", [("sparql-json", 2.0), ("sparql-json", 3.5),
                                        ("jsonl", 2.5), ("csv", 3.0)])
def test_interrupted_run_counts_what_it_wrote(tmp_path, fmt, delay):
    (tmp_path / "q.rq").write_text(QUERY)
    big_stream(tmp_path / "s.nt")
    out = tmp_path / "out"
    proc = subprocess.Popen([sys.executable, "-m", "epsparql.cli", "run", "q.rq", "--stream",
                             "s.nt", "--output-format", fmt, "--out", str(out)],
                            cwd=tmp_path, env=env(), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    # wait until it is writing answers (sparql-json: into its spool, an
    # unnamed temporary file, written out at the end), then interrupt; a
    # fixed delay interrupted a slow start-up on a loaded machine instead
    t0 = time.monotonic()
    while time.monotonic() - t0 < 60 and proc.poll() is None:
        if out.exists() and out.stat().st_size > 0 or fmt == "sparql-json" \
                and spooled(proc.pid) > 0:
            break
        time.sleep(0.05)
    time.sleep(delay / 4)
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    for word in NEVER:
        assert word not in err, err[-2000:]
    m = re.search(r"q\s+SELECT\s+([\d,]+) answers", err)
    assert m, err
    counted = int(m.group(1).replace(",", ""))
    assert written(fmt, out.read_text()) == counted
    if proc.returncode == 130:
        assert "interrupted; the answers found so far were written" in err
    else:
        assert proc.returncode == 0 and counted == 400_000     # it finished first


CTRL_C_WHILE_LOADING = """\
import runpy, sys
class CtrlC:
    # Ctrl-C arriving while the engine's modules load (the first second
    # of every command): raised where the signal would surface
    def find_spec(self, name, path=None, target=None):
        if name == "epsparql.query_engine":
            raise KeyboardInterrupt
        return None
sys.meta_path.insert(0, CtrlC())
sys.argv = ["epsparql", "check", sys.argv[1]]
runpy.run_module("epsparql.cli", run_name="__main__")
"""


def test_ctrl_c_while_the_command_starts_is_one_line(tmp_path):
    """Ctrl-C in the first second of a command (while Python loads the
    engine) printed an import's traceback; now the command says it was
    interrupted and exits 130, as later."""
    q = tmp_path / "q.rq"
    q.write_text("SELECT ?s WHERE { ?s ?p ?o }\n")
    r = subprocess.run([sys.executable, "-c", CTRL_C_WHILE_LOADING, str(q)], cwd=ROOT,
                       capture_output=True, text=True, timeout=120, env=env())
    assert r.returncode == 130, r.stderr
    assert r.stderr == "epsparql: interrupted\n", r.stderr
