"""SWI-Prolog's atom garbage collections over a run of the command line.

While more than a tenth of the erased clauses still have a clause
reference, SWI-Prolog follows every clause garbage collection with an
atom garbage collection (which marks every thread's stacks).  Two ways
in which the engine used to get there, each found with an EP-SPARQL and a
window query: clause/3 and erase/1 per expired triple of a plain window;
and rule predicates abolished while the compiler held references to their
clauses (every add_rules' dry run), after which SWI-Prolog's count of such
clauses wrapped below zero for the rest of the process.

Each case runs ``epsparql run`` twice in one fresh process (the first, on
a short stream, does the start-up and its collections) and counts the
collections of the second: the atom collections stay a small fraction of
the clause collections (before: about one each, the counts are
deterministic up to the collector thread's timing).
"""
from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NS = "http://epsparql.org/ns#"
EX = "http://example.org/"

CHILD = r"""
import sys
sys.path.insert(0, sys.argv[1])
from epsparql.cli import main
import janus_swi as janus

def counts():
    s = janus.query_once("statistics(atom_garbage_collection, [A|_]),"
                         "statistics(clause_garbage_collection, [C|_])")
    return s["A"], s["C"]

q, warm, stream, out = sys.argv[2:6]
assert main(["run", q, "--stream", warm, "--out", out, "--output-format", "jsonl", "-q"]) == 0
a0, c0 = counts()
assert main(["run", q, "--stream", stream, "--out", out, "--output-format", "jsonl", "-q"]) == 0
a1, c1 = counts()
print(a1 - a0, c1 - c0)
"""


def _seq_stream(path: Path, n: int, rnd: random.Random) -> None:
    """37 companies, one price a second, decimals (new atoms: the atom
    collector runs on its own margin too, and released the references)."""
    with open(path, "w") as f:
        for t in range(1, n + 1):
            f.write(f'<{NS}k{t % 37}> <{NS}price> "{rnd.uniform(10, 1000):.2f}"'
                    f'^^<http://www.w3.org/2001/XMLSchema#decimal> {t} .\n')


def _join_stream(path: Path, n: int, rnd: random.Random) -> None:
    """100 sensors, one reading each a second, 1% of them alarms."""
    with open(path, "w") as f:
        for i in range(n):
            k, t = i % 100, i // 100
            if rnd.random() < 0.01:
                f.write(f'<{EX}k{k}> <{EX}alarm> "high" <{EX}s> {t} .\n')
            else:
                f.write(f'<{EX}k{k}> <{EX}v> "{rnd.randrange(10000)}"'
                        f'^^<http://www.w3.org/2001/XMLSchema#integer> <{EX}s> {t} .\n')


CASES = {
    # a two-step SEQ (EP-SPARQL: rules, a dry run, goals expiring)
    "seq": (f"PREFIX : <{NS}> SELECT ?k ?p1 ?p2 WHERE {{ ?k :price ?p1 }} SEQ {{ ?k :price ?p2 }} "
            f"FILTER (?p2 > ?p1 * 3 && getDURATION() < \"PT200S\"^^xsd:duration)\n",
            _seq_stream, "nt", 24116),
    # a C-SPARQL window not kept per pane: the join of two patterns
    "join": (f"REGISTER QUERY j AS\nSELECT ?s ?a ?v\nFROM STREAM <{EX}s> [RANGE 10s STEP 1s]\n"
             f"WHERE {{ ?s <{EX}alarm> ?a . ?s <{EX}v> ?v }}\n",
             _join_stream, "nqt", 27519),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_few_atom_collections_per_clause_collection(tmp_path, case):
    query, write, ext, answers = CASES[case]
    rnd = random.Random(1)
    (tmp_path / "q.rq").write_text(query)
    write(tmp_path / f"warm.{ext}", 1000, rnd)
    write(tmp_path / f"stream.{ext}", 30000, rnd)
    r = subprocess.run([sys.executable, "-c", CHILD, str(ROOT), str(tmp_path / "q.rq"),
                        str(tmp_path / f"warm.{ext}"), str(tmp_path / f"stream.{ext}"),
                        str(tmp_path / "out.jsonl")],
                       capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-2000:]
    agc, cgc = map(int, r.stdout.split()[-2:])
    assert sum(1 for _ in open(tmp_path / "out.jsonl")) == answers
    assert cgc >= 40                      # the run does collect clauses
    assert agc * 10 <= cgc, (agc, cgc)    # the base: about one atom collection each
