"""Reading a stream file: rows, texts and Arrow batches (issue 22).

    .venv/bin/python bench/reader.py             # N = 1,000,000 lines a stream, median of 3
    .venv/bin/python bench/reader.py --quick     # N = 100,000, once

What one pass over a stream file costs, by the ways of reading it that
``StreamReader`` offers: ``rows`` (``iter(reader)``: rdflib terms),
``texts`` (``reader.texts()``: N-Triples texts per row) and ``batches``
(``reader.batches(5000)``: Arrow record batches of texts, the columnar
reader of epsparql/io/stream_batches.py), the last also from a pipe fed
by ``cat`` (the reader's process only; ``cat`` is another).  Nothing is
done with the rows: this is the reading alone.

Streams (generated once into bench/out/, both ``nqt`` and ``nt``):

- ``windowed``: bench/windowed.py's stream as StreamWriter writes it, 100
  keys, ``ex:k ex:price "P"^^xsd:integer`` on the stream ``ex:stock``
  (``nqt``; none in ``nt``), times i / 1000 s (decimals);
- ``mixed``: subjects from 1,000 IRIs, objects a third each typed
  integers, IRIs and language-tagged literals with a space, every other
  row on a named stream, every third with an end time, integer times.

Each measurement runs in a fresh process (bench/harness.py ``run_child``)
with the modules imported before the timed section (their import is
reported apart).  Printed per run: lines per CPU second and CPU µs per
line (process time), wall-clock lines/s, the RSS before reading (imports
done) and the peak RSS while reading (the kernel's high-water mark, reset
before it), and the load average around it (a run that started at load
≥ 1 is marked "under load").  Results: bench/results/reader.json;
bench/README.md holds the figures.
"""
from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import (OUT, Clock, describe, generated_file, machine, peak_rss_mb, proc_status_kb,  # noqa: E402
                     reset_hwm, results_path, run_child, write_results)

EX = "http://example.org/"
XSD_INTEGER = "http://www.w3.org/2001/XMLSchema#integer"
PATHS = ("rows", "texts", "batches", "batches-pipe")


# ------------------------------------------------------------------- streams

def _windowed_line(i: int, rnd: random.Random, nq: bool) -> str:
    t = i / 1000
    time_text = str(int(t)) if t.is_integer() else repr(t)       # as format_time writes it
    g = f" <{EX}stock>" if nq else ""
    return (f"<{EX}k{i % 100}> <{EX}price> \"{rnd.randrange(1, 10001)}\"^^<{XSD_INTEGER}>{g} "
            f"{time_text} .\n")


def _mixed_line(i: int, rnd: random.Random, nq: bool) -> str:
    kind = i % 3
    if kind == 0:
        o = f"\"{rnd.randrange(100000)}\"^^<{XSD_INTEGER}>"
    elif kind == 1:
        o = f"<{EX}room/{rnd.randrange(50)}>"
    else:
        o = f"\"reading {rnd.randrange(100)}\"@en"
    g = f" <{EX}stream/a>" if nq and i % 2 else ""
    t = 1_700_000_000 + i
    end = f" {t + 5}" if i % 3 == 0 else ""
    return f"<{EX}sensor/{rnd.randrange(1000)}> <{EX}value> {o}{g} {t}{end} .\n"


def stream_file(shape: str, fmt: str, n: int) -> Path:
    """The stream ``shape`` of ``n`` lines in ``fmt``, written once."""
    def lines():
        make = _windowed_line if shape == "windowed" else _mixed_line
        rnd = random.Random(1)
        return (make(i, rnd, fmt == "nqt") for i in range(n))
    return generated_file(OUT / f"reader-{shape}-{n}.{fmt}", lines(), chunk=10_000)


# ------------------------------------------------------------------ measure

def measure(path: str, fmt: str, how: str) -> dict[str, Any]:
    """One pass over ``path`` the way ``how``, in this process."""
    t0 = time.perf_counter()
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    import pyarrow.compute  # noqa: F401  (what a batch reading uses, imported up front)
    from epsparql.io import StreamReader
    from epsparql.io import stream_batches  # noqa: F401
    import_s = time.perf_counter() - t0
    rss_before = proc_status_kb("VmRSS") / 1024
    reset = reset_hwm()
    clock = Clock()
    cat = None
    with clock:
        if how == "rows":
            reader = StreamReader(path, fmt)
            lines = sum(1 for _ in reader)
        elif how == "texts":
            reader = StreamReader(path, fmt)
            lines = sum(1 for _ in reader.texts())
        else:
            if how == "batches-pipe":
                cat = subprocess.Popen(["cat", path], stdout=subprocess.PIPE)
                reader = StreamReader(cat.stdout, fmt)
            else:
                reader = StreamReader(path, fmt)
            batches = 0
            lines = 0
            for b in reader.batches(5000):
                lines += b.num_rows
                batches += 1
    if cat is not None:
        cat.wait()
    out = {"path": how, "format": fmt, "lines": lines, "cpu_s": round(clock.cpu, 3),
           "wall_s": round(clock.wall, 3), "us_per_line_cpu": round(clock.cpu / lines * 1e6, 3),
           "lines_per_cpu_s": round(lines / clock.cpu), "lines_per_s": round(lines / clock.wall),
           "import_s": round(import_s, 3), "rss_before_mb": round(rss_before, 1),
           "peak_rss_mb": peak_rss_mb() if reset else None}
    if how.startswith("batches"):
        out["batches"] = batches
    return out


def run_isolated(shape: str, fmt: str, how: str, n: int) -> dict[str, Any]:
    path = stream_file(shape, fmt, n)
    res, run = run_child([sys.executable, __file__, "--child", json.dumps([str(path), fmt, how])],
                         log=f"reader-{shape}-{fmt}-{how}-{n}")
    res.update(shape=shape, n=n, child_maxrss_mb=run["maxrss_mb"],
               load_before=run["load_avg_before"], load_after=run["load_avg_after"],
               under_load=run["load_avg_before"] >= 1)
    return res


def run_median(shape: str, fmt: str, how: str, n: int, repeat: int) -> dict[str, Any]:
    """``repeat`` runs of one configuration: the run of median CPU, with
    every run's CPU seconds; printed as it comes."""
    runs = sorted((run_isolated(shape, fmt, how, n) for _ in range(repeat)), key=lambda x: x["cpu_s"])
    kept = dict(runs[len(runs) // 2], cpu_s_runs=[x["cpu_s"] for x in runs])
    print(json.dumps(kept), flush=True)
    return kept


# ------------------------------------------------------------------ the run

def report(results: list[dict[str, Any]]) -> str:
    lines = ["| stream | format | path | lines | µs/line CPU | lines/s CPU | lines/s wall | "
             "RSS before MB | peak RSS MB | load |", "|---|---|---|---:|---:|---:|---:|---:|---:|---|"]
    for r in results:
        load = f"{r['load_before']}–{r['load_after']}" + (" (under load)" if r["under_load"] else "")
        lines.append(f"| {r['shape']} | {r['format']} | {r['path']} | {r['lines']:,} | "
                     f"{r['us_per_line_cpu']:.3f} | {r['lines_per_cpu_s']:,} | {r['lines_per_s']:,} | "
                     f"{r['rss_before_mb']} | {r['peak_rss_mb']} | {load} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=1_000_000, help="lines a stream")
    ap.add_argument("--repeat", type=int, default=3, help="runs of each, the median CPU kept")
    ap.add_argument("--paths", default=",".join(PATHS), help=f"some of {', '.join(PATHS)}")
    ap.add_argument("--quick", action="store_true", help="N = 100,000, once (results under bench/out/)")
    ap.add_argument("--out", help="results file (default bench/results/reader.json)")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.child:
        print("RESULT " + json.dumps(measure(*json.loads(a.child))))
        return
    n, repeat = (100_000, 1) if a.quick else (a.n, a.repeat)
    info = machine(benchmark="reader")
    print(describe(info))
    results = [run_median(shape, fmt, how, n, repeat) for shape in ("windowed", "mixed")
               for fmt in ("nqt", "nt") for how in a.paths.split(",")]
    print(report(results))
    write_results({"machine": info, "results": results}, results_path("reader", a.quick, a.out),
                  indent=1)


if __name__ == "__main__":
    main()
