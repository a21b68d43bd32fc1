"""Large literals through the command line: peak memory per byte (issue 25, finding 11).

    .venv/bin/python bench/large_literal.py                  # 10 MB and 50 MB literals
    .venv/bin/python bench/large_literal.py --quick          # 10 MB only
    .venv/bin/python bench/large_literal.py --formats jsonl,csv --tree ../other/checkout

What a user runs: ``epsparql run Q.rq --stream F.nt --output-format jsonl
--out FILE`` in a fresh process.  F holds one large plain literal and one
small one; Q either answers both (``?s <p> ?o``) or matches nothing.  The
baseline is the same run over a file of two small literals (the process
with SWI-Prolog, rdflib, pyarrow loaded, ~100 MB).  Printed per run: the
process's peak RSS, what it is over the baseline per byte of the literal
("extra per byte"), wall time, the load average.  Results:
bench/results/large_literal.json; bench/README.md holds the figures.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import OUT, ROOT, describe, machine, results_path, run_child, write_results  # noqa: E402

P = "http://ex.org/p"
QUERIES = {"answered": f"SELECT ?s ?o WHERE {{ ?s <{P}> ?o }}",
           "unanswered": "SELECT ?s ?o WHERE { ?s <http://ex.org/none> ?o }"}


def stream(size: int) -> Path:
    """A file of one literal of ``size`` characters and one small one."""
    path = OUT / f"large_literal_{size}.nt"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "w") as f:
            f.write(f'<http://ex.org/a> <{P}> "{"x" * size}" 1 .\n'
                    f'<http://ex.org/b> <{P}> "small" 2 .\n')
    return path


def run(tree: Path, query: str, size: int, fmt: str) -> dict:
    OUT.mkdir(parents=True, exist_ok=True)
    q = OUT / f"large_literal_{query}.rq"
    q.write_text(QUERIES[query])
    out = OUT / f"large_literal.{fmt}"
    cmd = [sys.executable, "-c", f"import sys; sys.path.insert(0, {str(tree)!r}); "
           f"from epsparql.cli import main; sys.exit(main(sys.argv[1:]))",
           "run", str(q), "--stream", str(stream(size)), "--output-format", fmt,
           "--out", str(out), "--quiet"]
    _, r = run_child(cmd, log=f"large_literal_{query}_{size}", check=False)
    if r["returncode"] != 0:
        raise RuntimeError(f"{query} {size} failed: {r.get('stderr_tail')}")
    return {"tree": str(tree), "query": query, "size": size, "format": fmt,
            "peak_rss_mb": r["maxrss_mb"], "elapsed_s": r["elapsed_s"], "cpu_s": r["cpu_s"],
            "load": [r["load_avg_before"], r["load_avg_after"]]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="a 10 MB literal only")
    ap.add_argument("--formats", default="jsonl", help="output formats, comma-separated")
    ap.add_argument("--tree", action="append", default=[], type=Path,
                    help="another checkout to measure too, alternating with this one")
    args = ap.parse_args()
    sizes = [10_000_000] if args.quick else [10_000_000, 50_000_000]
    info = machine()
    print(describe(info), flush=True)
    rows = []
    for tree in [ROOT] + [t.resolve() for t in args.tree]:
        for fmt in args.formats.split(","):
            run(tree, "answered", 5, fmt)          # (a first run may fill caches: not counted)
            base = run(tree, "answered", 5, fmt)["peak_rss_mb"]
            for size in sizes:
                for query in QUERIES:
                    row = run(tree, query, size, fmt)
                    row["baseline_mb"] = base
                    row["extra_per_byte"] = round((row["peak_rss_mb"] - base) * 2**20 / size, 1)
                    rows.append(row)
                    print(f"  {size / 1e6:>4.0f} MB {query:<10} {fmt:<11} peak "
                          f"{row['peak_rss_mb']:>6.1f} MB (baseline {base:.1f})  "
                          f"{row['extra_per_byte']:>4.1f}x  {row['elapsed_s']:>5.2f} s  "
                          f"load {row['load'][0]:.1f}  [{tree.name}]", flush=True)
    write_results({"machine": info, "rows": rows}, results_path("large_literal", args.quick))


if __name__ == "__main__":
    main()
