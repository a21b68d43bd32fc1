#!/usr/bin/env python
"""seq2: throughput and memory of the Prolog event core on a two-event sequence.

    .venv/bin/python bench/seq2.py            # full run (N = 1,000,000)
    .venv/bin/python bench/seq2.py --quick    # smoke run (N = 50,000)
    .venv/bin/python bench/seq2.py --profile  # profiles of W = 1,000 (both modes)

Workload
--------
100 keys ``k0`` .. ``k99``; one event ``price(Key, Price)`` per second at
t = 1, 2, 3, ... (point intervals [t, t]), the key drawn uniformly at random
(seeded).  The rule, for a window W (seconds = input events):

    rise(K, P1, P2) <- price(K, P1) seq price(K, P2) where P2 > P1 * 1.05 within W.

"a price of a key followed, within W, by a price of the same key more than
5% higher", under the default ``unrestricted`` policy (every pair counts),
and as extra series under ``recent`` and ``chronological``.

Why a 5% threshold and this price generator
-------------------------------------------
With the literal condition ``P2 > P1`` the number of complex events grows
linearly with the window whatever the prices do, as long as they are
stationary: a new price is above about half of the ~W/100 earlier prices of
its key in the window.  Measured (200,000 events): 0.50 complex events per
input event at W = 100, 4.95 at W = 1,000, i.e. ~250 at W = 50,000.  A plain
geometric random walk does not help, even with the 5% threshold (the walk
drifts more than 5% over long lags): 0.0 / 0.28 / 20 / 143 per event for
W = 100 / 1,000 / 10,000 / 50,000.

So prices are *mean-reverting with rare spikes*: per key, the log-price is
an AR(1) process around a fixed base price (base uniform in [20, 200],
coefficient 0.9 per event of that key, stationary s.d. 1%), and with
probability 0.002 an event is a one-off spike of +6% .. +12% above it.
Prices are rounded to cents.  A rise of more than 5% is then (almost) only
a spike arriving after ordinary prices of its key, so the number of complex
events per input event is about 0.002 * W / 100:
0.002 / 0.02 / 0.2 / ~1 for W = 100 / 1,000 / 10,000 / 50,000 (measured by
this benchmark, see the output).  The cost of the unrestricted rule still
grows with W, as it must: every arriving price is joined with all ~W/100
stored prices of its key in the window (the where condition cannot be
indexed).  ``--rise 0`` runs the literal ``P2 > P1`` rule (small windows only).

Modes (each configuration in a fresh subprocess, so peak memory is per run)
----------------------------------------------------------------------------
prolog: bench/seq2_driver.pl run by ``swipl``: it loads
  prolog/epsparql_core.pl, reads the pre-generated events (the same stream
  as the bridge mode, a file of ``e(price(K, P), T, T).`` terms) 5,000 at a
  time, pushes each batch with engine_events/2 and drains it with
  engine_drain/2, counting detections.  Only push + drain is timed
  (get_time/1 and statistics(cputime)), not the reading.
bridge: epsparql.core.CoreEngine; all events pre-generated as Python tuples
  ``(term("price", key, price), t)``; pushed with push_many in chunks of
  5,000 (= batch_size, one crossing each), each followed by drain() so the
  engine's Python-side detection list does not grow; only push + drain is
  timed (time.perf_counter / process_time).

Memory: both modes reset the kernel's high-water mark (/proc/self/clear_refs)
just before pushing and read VmHWM after it: ``peak_rss_mb`` is the peak RSS
of the process while pushing, ``rss_before_mb`` its RSS just before (for the
bridge it includes the pre-generated events), ``growth_mb`` the difference.
``maxrss_mb`` is the child's lifetime peak from wait4().

Sources: the run copies prolog/*.pl and epsparql/**/*.py to
bench/out/src-<hash>/ at its start and measures that copy (the core may be
edited while a long run goes on); the hash and the git commit are in the
output.  --live measures the working tree instead.

Other work on the machine skews the wall-clock numbers (2 cores): each row
keeps the load average before and after its run; --repeat R runs every
configuration R times and reports the median.

--profile: SWI-Prolog's profiler on the Prolog driver and cProfile on the
bridge (W = 1,000 unless --windows names one), plus a bridge time breakdown
measured without a profiler; written to bench/out/seq2_profile_*.txt.

Output: bench/out/seq2.json (every run), bench/results/seq2.json (summary)
and bench/results/seq2.png (full runs only; --quick writes to bench/out/).
"""
from __future__ import annotations

import argparse
import json
import math
import os
import random
import re
import subprocess
import sys
import time
from pathlib import Path

from harness import (OUT, RESULTS, ROOT, machine, proc_status_kb, reset_hwm, run_child,
                     swipl_executable)

SRC = ROOT              # where prolog/ and epsparql/ are taken from (see snapshot())
DRIVER = Path(__file__).resolve().parent / "seq2_driver.pl"
BREAKDOWN = Path(__file__).resolve().parent / "seq2_breakdown.pl"

KEYS = 100
PHI = 0.9               # AR(1) coefficient of the log-price, per event of the key
SD = 0.01               # stationary standard deviation of the log-price
P_SPIKE = 0.002         # probability that an event is a spike
SPIKE = (0.06, 0.12)    # size of a spike (log-price)
DEFAULT_WINDOWS = [100, 1000, 10000, 50000]
POLICIES = ["unrestricted", "recent", "chronological"]
TARGET_BRIDGE = 100_000  # input events/s, W = 1,000, unrestricted
TARGET_PROLOG = 300_000
FLAT_W = 1000


# ---------------------------------------------------------------------------
# the workload

def generate(n: int, seed: int):
    """Yield (t, key, price) for t = 1..n.  A prefix of a longer stream with
    the same seed is the shorter stream."""
    rng = random.Random(seed)
    base = [rng.uniform(20.0, 200.0) for _ in range(KEYS)]
    names = [f"k{i}" for i in range(KEYS)]
    x = [0.0] * KEYS
    sig = SD * math.sqrt(1.0 - PHI * PHI)
    gauss, rand, randrange, uniform = rng.gauss, rng.random, rng.randrange, rng.uniform
    lo, hi = SPIKE
    for t in range(1, n + 1):
        k = randrange(KEYS)
        xk = PHI * x[k] + sig * gauss(0.0, 1.0)
        x[k] = xk
        if rand() < P_SPIKE:
            xk += uniform(lo, hi)
        yield t, names[k], round(base[k] * math.exp(xk), 2)


def rule_text(window: int, rise: float) -> str:
    cond = "P2 > P1" if rise == 0 else f"P2 > P1 * {1 + rise!r}"
    return (f"rise(K, P1, P2) <- price(K, P1) seq price(K, P2) "
            f"where {cond} within {window}.")


def events_file(n: int, seed: int) -> Path:
    """The stream as Prolog terms, one per line (shared by runs; prefixes
    of it serve smaller N)."""
    OUT.mkdir(parents=True, exist_ok=True)
    for p in sorted(OUT.glob(f"seq2_events_s{seed}_n*.pl")):
        m = re.search(r"_n(\d+)\.pl$", p.name)
        if m and int(m.group(1)) >= n:
            return p
    path = OUT / f"seq2_events_s{seed}_n{n}.pl"
    tmp = path.with_suffix(".tmp")
    with open(tmp, "w") as f:
        for t, k, p in generate(n, seed):
            f.write(f"e(price({k},{p!r}),{t},{t}).\n")
    tmp.replace(path)
    return path


# ---------------------------------------------------------------------------
# mode (a): pure Prolog (bench/seq2_driver.pl)

def prolog_command(window: int, policy: str, n: int, batch: int, rise: float, efile: Path,
                   profile: bool = False) -> list[str]:
    return [swipl_executable(), str(DRIVER), str(SRC / "prolog" / "epsparql_core"), policy,
            rule_text(window, rise), str(efile), str(n), str(batch),
            "profile" if profile else "run"]


# ---------------------------------------------------------------------------
# mode (b): the Python bridge (run as a worker subprocess)

def worker_bridge(args: argparse.Namespace) -> None:
    sys.path.insert(0, str(args.src or ROOT))
    from epsparql.core import CoreEngine, term

    events = [(term("price", k, p), t) for t, k, p in generate(args.n, args.seed)]
    eng = CoreEngine(policy=args.policy, batch_size=args.batch)
    eng.add_rules(rule_text(args.window, args.rise))
    bs = args.batch
    chunks = [events[i:i + bs] for i in range(0, len(events), bs)]

    def run():
        det = 0
        wall = cpu = 0.0
        for chunk in chunks:
            c0 = time.process_time()
            t0 = time.perf_counter()
            det += len(eng.push_many(chunk))
            eng.drain()
            t1 = time.perf_counter()
            c1 = time.process_time()
            wall += t1 - t0
            cpu += c1 - c0
        return det, wall, cpu

    rss0 = proc_status_kb("VmRSS")
    reset_hwm()
    if args.profile_out:
        import cProfile
        import pstats
        prof = cProfile.Profile()
        det, wall, cpu = prof.runcall(run)
        with open(args.profile_out, "w") as f:
            f.write(f"bridge profile: W={args.window} policy={args.policy} N={args.n} "
                    f"sources {args.src}\n\n")
            f.write(bridge_breakdown(args, chunks) + "\n\ncProfile of push_many + drain "
                    f"(wall {wall:.3f} s under the profiler):\n")
            st = pstats.Stats(prof, stream=f)
            st.sort_stats("tottime").print_stats(30)
            st.sort_stats("cumulative").print_stats(30)
    else:
        det, wall, cpu = run()
    peak = proc_status_kb("VmHWM")
    stats = eng.stats()
    res = {"events": len(events), "detections": det, "wall_s": wall, "cpu_s": cpu,
           "batches": len(chunks), "goals": stats["goals"], "late": stats["late"],
           "engine_events": stats["events"], "errors": len(eng.errors),
           "rss_before_kb": rss0, "peak_rss_kb": peak}
    print("RESULT " + json.dumps(res), flush=True)


def bridge_breakdown(args, chunks) -> str:
    """Where the bridge's time goes, measured without a profiler on a fresh
    engine: text building (terms.batch_text), the C call (py_push: parsing
    the text + engine + writing the JSON reply), of which parsing alone
    (term_string/3 on the same texts), and JSON decoding of the replies."""
    from epsparql.core import CoreEngine
    from epsparql.core.runtime import runtime
    from epsparql.core.terms import batch_text, from_json

    rt = runtime()
    rt.consult(BREAKDOWN)
    eng = CoreEngine(policy=args.policy, batch_size=args.batch)
    eng.add_rules(rule_text(args.window, args.rise))
    t0 = time.perf_counter()
    texts = [batch_text(c)[0] for c in chunks]
    t_text = time.perf_counter() - t0
    t0 = time.perf_counter()
    for t in texts:
        rt.call("bench_parse_only", ("s", t))
    t_parse = time.perf_counter() - t0
    t0 = time.perf_counter()
    replies = [rt.call("py_push", eng.module, ("s", t)) for t in texts]
    t_call = time.perf_counter() - t0
    t0 = time.perf_counter()
    ndet = sum(len(from_json(r)["d"]) for r in replies)
    t_json = time.perf_counter() - t0
    eng.close()
    total = t_text + t_call + t_json
    n = sum(len(c) for c in chunks)
    lines = [f"breakdown without profiler ({n:,} events, {ndet:,} detections, "
             f"{total:.3f} s = {n / total:,.0f} events/s):"]
    for name, t in (("text building (terms.batch_text)", t_text),
                    ("C call py_push (parse + engine + JSON reply)", t_call),
                    ("  of which parsing the text (term_string/3)", t_parse),
                    ("  of which engine + reply (difference)", t_call - t_parse),
                    ("JSON decoding (terms.from_json)", t_json)):
        lines.append(f"  {name:48} {t:7.3f} s  {100 * t / total:5.1f}%  "
                     f"{1e6 * t / n:6.2f} us/event")
    return "\n".join(lines)


# ---------------------------------------------------------------------------
# running one configuration in a fresh process

def run_config(mode: str, window: int, policy: str, n: int, args, efile: Path) -> dict:
    """Run a configuration args.repeat times (fresh process each); the row of
    the median run by throughput, with every run's throughput."""
    rows = [run_once(mode, window, policy, n, args, efile, i) for i in range(args.repeat)]
    if len(rows) == 1:
        return rows[0]
    ok = sorted((r for r in rows if r.get("events_per_s")), key=lambda r: r["events_per_s"])
    row = dict(ok[len(ok) // 2] if ok else rows[0])
    row["events_per_s_runs"] = [r.get("events_per_s") for r in rows]
    row["events_per_cpu_s_runs"] = [round(r["events"] / r["cpu_s"]) if r.get("cpu_s") else None
                                    for r in rows]
    row["loadavg_runs"] = [(r.get("loadavg_before"), r.get("loadavg_after")) for r in rows]
    row["peak_rss_mb_runs"] = [r.get("peak_rss_mb") for r in rows]
    return row


def run_once(mode: str, window: int, policy: str, n: int, args, efile: Path, i: int) -> dict:
    tag = f"{mode}_W{window}_{policy}_N{n}" + (f"_r{i}" if i else "")
    if mode == "prolog":
        cmd = prolog_command(window, policy, n, args.batch, args.rise, efile)
    else:
        cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", "bridge",
               "--src", str(SRC), "--window", str(window), "--policy", policy, "--n", str(n),
               "--seed", str(args.seed), "--batch", str(args.batch), "--rise", str(args.rise)]
    # other work on the machine skews wall-clock numbers: run_child keeps the
    # 1-minute load average before and after the run (this run itself adds ~1)
    res, info = run_child(cmd, args.timeout, log=tag, check=False)
    info["loadavg_before"] = info.pop("load_avg_before")
    info["loadavg_after"] = info.pop("load_avg_after")
    row = {"mode": mode, "window": window, "policy": policy, "n": n, **info}
    if res is not None:
        w = res["wall_s"]
        row.update({
            "events": res["events"], "detections": res["detections"],
            "wall_s": round(w, 3), "cpu_s": round(res["cpu_s"], 3),
            "events_per_s": round(res["events"] / w) if w > 0 else None,
            "detections_per_s": round(res["detections"] / w) if w > 0 else None,
            "detections_per_event": round(res["detections"] / max(res["events"], 1), 4),
            "peak_rss_mb": round(res["peak_rss_kb"] / 1024, 1),
            "rss_before_mb": round(res["rss_before_kb"] / 1024, 1),
            "growth_mb": round((res["peak_rss_kb"] - res["rss_before_kb"]) / 1024, 1),
            "goals": res["goals"], "late": res["late"], "errors": res["errors"],
        })
        if res["engine_events"] != res["events"]:
            row["warning"] = f"engine counted {res['engine_events']} events"
    return row


# ---------------------------------------------------------------------------
# machine, summary, plot

def source_files(root: Path) -> list[Path]:
    return sorted([*(root / "prolog").glob("*.pl"), *(root / "epsparql").rglob("*.py")])


def sources_hash(root: Path) -> str:
    """A hash of the core's sources (prolog/*.pl, epsparql/**/*.py)."""
    import hashlib
    h = hashlib.sha256()
    for p in source_files(root):
        h.update(str(p.relative_to(root)).encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()[:16]


def snapshot(src_hash: str) -> Path:
    """Copy the core's sources to bench/out/src-<hash>/, so that a long run
    measures one version even if the tree is edited meanwhile."""
    import shutil
    dest = OUT / f"src-{src_hash}"
    if not dest.exists():
        tmp = OUT / f"src-{src_hash}.tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        for p in source_files(ROOT):
            q = tmp / p.relative_to(ROOT)
            q.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(p, q)
        tmp.rename(dest)
    return dest


def find(rows, **kw):
    for r in rows:
        if all(r.get(k) == v for k, v in kw.items()) and r.get("events_per_s"):
            return r
    return None


def summarise(rows: list[dict], n: int, flat_ns: list[int]) -> dict:
    t = {}
    b = find(rows, mode="bridge", window=FLAT_W, policy="unrestricted", n=n)
    p = find(rows, mode="prolog", window=FLAT_W, policy="unrestricted", n=n)
    if b:
        t["bridge_W1000_events_per_s"] = {"target": TARGET_BRIDGE, "measured": b["events_per_s"],
                                          "met": b["events_per_s"] >= TARGET_BRIDGE}
    if p:
        t["prolog_W1000_events_per_s"] = {"target": TARGET_PROLOG, "measured": p["events_per_s"],
                                          "met": p["events_per_s"] >= TARGET_PROLOG}
    for mode, key in (("prolog", "peak_rss_mb"), ("bridge", "growth_mb")):
        pts = [(m, find(rows, mode=mode, window=FLAT_W, policy="unrestricted", n=m))
               for m in flat_ns]
        pts = [(m, r[key]) for m, r in pts if r]
        if len(pts) >= 2:
            lo, hi = pts[0][1], pts[-1][1]
            # flat: the largest N needs at most 10% (or 5 MB) more than the smallest
            t[f"{mode}_memory_flat_in_N"] = {
                "metric": key, "points": {str(m): v for m, v in pts},
                "met": hi <= max(lo * 1.10, lo + 5.0)}
    return t


def plot(rows: list[dict], n: int, flat_ns: list[int], path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    fig, (a1, a2) = plt.subplots(1, 2, figsize=(13, 5.2))
    colours = {"prolog": "tab:blue", "bridge": "tab:orange"}
    styles = {"unrestricted": ("-", "o"), "recent": ("--", "s"), "chronological": (":", "^")}
    for mode in ("prolog", "bridge"):
        for pol in POLICIES:
            pts = sorted((r["window"], r["events_per_s"]) for r in rows
                         if r["mode"] == mode and r["policy"] == pol and r["n"] == n
                         and r.get("events_per_s"))
            if not pts:
                continue
            ls, mk = styles[pol]
            a1.plot([x for x, _ in pts], [y for _, y in pts], ls, marker=mk,
                    color=colours[mode], label=f"{mode}, {pol}",
                    lw=2.2 if pol == "unrestricted" else 1.2)
    for mode, target in (("prolog", TARGET_PROLOG), ("bridge", TARGET_BRIDGE)):
        a1.plot([FLAT_W], [target], marker="*", ms=16, ls="none", color=colours[mode],
                markeredgecolor="black", zorder=5, label=f"target {mode}, W={FLAT_W:,}")
    a1.set_xscale("log")
    a1.set_yscale("log")
    fmt = matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:,.0f}")
    a1.yaxis.set_major_formatter(fmt)
    a1.yaxis.set_minor_formatter(matplotlib.ticker.FuncFormatter(
        lambda v, _: f"{v:,.0f}" if str(int(round(v)))[0] in "235" else ""))
    a1.tick_params(axis="y", which="minor", labelsize=7)
    a1.xaxis.set_major_formatter(fmt)
    a1.set_xlabel("window W (seconds = input events)")
    a1.set_ylabel("input events / s (wall clock)")
    a1.set_title(f"seq2 throughput, N = {n:,}")
    a1.grid(True, which="both", alpha=0.3)
    a1.legend(fontsize=8, loc="best")

    for mode, key, label in (("prolog", "peak_rss_mb", "prolog: peak RSS of the process"),
                             ("bridge", "growth_mb", "bridge: peak RSS - RSS before pushing"),
                             ("bridge", "peak_rss_mb",
                              "bridge: peak RSS of the process\n(includes the N pre-generated "
                              "Python events)")):
        pts = []
        for m in flat_ns:
            r = find(rows, mode=mode, window=FLAT_W, policy="unrestricted", n=m)
            if r:
                pts.append((m, r[key]))
        if pts:
            faint = mode == "bridge" and key == "peak_rss_mb"
            a2.plot([x for x, _ in pts], [y for _, y in pts],
                    ":" if faint else "-", marker="o", alpha=0.5 if faint else 1,
                    color=colours[mode], label=label)
            for x, y in pts:
                a2.annotate(f"{y:.0f}", (x, y), textcoords="offset points",
                            xytext=(0, 6), ha="center", fontsize=8)
    a2.set_xlabel("N (input events)")
    a2.set_ylabel("MB (log scale)")
    a2.set_yscale("log")
    a2.yaxis.set_major_formatter(fmt)
    a2.set_xticks(flat_ns)
    a2.set_xticklabels([f"{m / 1e6:g}M" if m >= 1e6 else f"{m / 1e3:g}k" for m in flat_ns])
    a2.set_title(f"peak memory vs N (W = {FLAT_W:,}, unrestricted)")
    a2.grid(True, alpha=0.3)
    a2.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def table(rows: list[dict], n: int) -> str:
    head = ("| mode | policy | W | N | input ev/s | ev/s CPU | complex events | complex/s | "
            "peak RSS MB | growth MB | goals |\n"
            "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    lines = [head]
    key = {"prolog": 0, "bridge": 1}
    for r in sorted(rows, key=lambda r: (POLICIES.index(r["policy"]), r["n"] != n,
                                         r["window"], r["n"], key[r["mode"]])):
        if not r.get("events_per_s"):
            lines.append(f"| {r['mode']} | {r['policy']} | {r['window']:,} | {r['n']:,} | "
                         f"failed (rc {r['returncode']}) | | | | | | |")
            continue
        lines.append(
            f"| {r['mode']} | {r['policy']} | {r['window']:,} | {r['n']:,} | "
            f"{r['events_per_s']:,} | {round(r['events'] / r['cpu_s']):,} | "
            f"{r['detections']:,} | {r['detections_per_s']:,} | "
            f"{r['peak_rss_mb']:.0f} | {r['growth_mb']:.0f} | {r['goals']:,} |")
    return "\n".join(lines)


# ---------------------------------------------------------------------------

def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="smoke run: N = 50,000")
    ap.add_argument("--n", type=int, default=None, help="input events (default 1,000,000)")
    ap.add_argument("--windows", type=lambda s: [int(x) for x in s.split(",")],
                    default=DEFAULT_WINDOWS, help="comma-separated windows (seconds)")
    ap.add_argument("--policies", type=lambda s: s.split(","), default=POLICIES)
    ap.add_argument("--modes", type=lambda s: s.split(","), default=["prolog", "bridge"])
    ap.add_argument("--no-flat", action="store_true", help="skip the memory-vs-N runs")
    ap.add_argument("--rise", type=float, default=0.05,
                    help="condition P2 > P1 * (1 + rise); 0: the literal P2 > P1")
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--batch", type=int, default=5000)
    ap.add_argument("--repeat", type=int, default=1,
                    help="runs per configuration; the median by throughput is reported")
    ap.add_argument("--timeout", type=float, default=3600, help="per run, seconds")
    ap.add_argument("--profile", action="store_true",
                    help="profile W=1,000 unrestricted in both modes instead of benchmarking")
    ap.add_argument("--report", type=Path, default=None, metavar="JSON",
                    help="only rewrite the summary, plot and table of an earlier run's JSON")
    ap.add_argument("--out", type=Path, default=None,
                    help="JSON output (default bench/out/seq2.json; when given, or with "
                         "--quick, bench/results/ is left alone)")
    # internal: the bridge worker
    ap.add_argument("--worker", choices=["bridge"], help=argparse.SUPPRESS)
    ap.add_argument("--window", type=int, default=FLAT_W, help=argparse.SUPPRESS)
    ap.add_argument("--policy", default="unrestricted", help=argparse.SUPPRESS)
    ap.add_argument("--profile-out", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--src", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--sources", type=Path, default=None, metavar="DIR",
                    help="measure the prolog/ and epsparql/ under DIR (e.g. an earlier "
                         "run's bench/out/src-<hash>/)")
    ap.add_argument("--live", action="store_true",
                    help="run the working tree's prolog/ and epsparql/ directly instead "
                         "of a snapshot taken at the start (bench/out/src-<hash>/)")
    args = ap.parse_args()

    if args.worker == "bridge":
        if args.n is None:
            args.n = 1_000_000
        worker_bridge(args)
        return

    if args.report:
        path = args.report.resolve()
        doc = json.loads(path.read_text())
        report(doc, path, to_results=path == (OUT / "seq2.json").resolve())
        return

    n = args.n or (50_000 if args.quick else 1_000_000)
    OUT.mkdir(parents=True, exist_ok=True)
    global SRC
    if args.sources:
        SRC = args.sources.resolve()
        src_hash = sources_hash(SRC)
    else:
        src_hash = sources_hash(ROOT)
        SRC = ROOT if args.live else snapshot(src_hash)
    efile = events_file(n, args.seed)

    if args.profile:
        profile(args, n, efile)
        return

    flat_ns = [] if args.no_flat else [n // 4, n // 2, n]
    configs = []
    for pol in args.policies:
        for w in args.windows:
            for mode in args.modes:
                configs.append((mode, w, pol, n))
    for m in flat_ns:
        for mode in args.modes:
            c = (mode, FLAT_W, "unrestricted", m)
            if c not in configs:
                configs.append(c)

    quick = args.quick or args.out is not None   # nothing goes to bench/results/
    out_json = (args.out or OUT / ("seq2_quick.json" if args.quick else "seq2.json")).resolve()
    doc = {"benchmark": "seq2", "machine": machine(),
           "sources": {"sha256": src_hash, "ran_from": os.path.relpath(SRC, ROOT)},
           "config": {"n": n, "windows": args.windows, "policies": args.policies,
                      "modes": args.modes, "keys": KEYS, "seed": args.seed,
                      "batch": args.batch, "repeat": args.repeat, "rule": rule_text(999, args.rise).replace(" 999.", " W."),
                      "generator": {"ar1_coefficient": PHI, "log_price_sd": SD,
                                    "spike_probability": P_SPIKE, "spike_size": list(SPIKE),
                                    "base_price": [20, 200], "rounding": 0.01},
                      "flat_ns": flat_ns, "flat_window": FLAT_W},
           "runs": []}
    print(f"seq2: {len(configs)} runs, N = {n:,}, events in {efile.relative_to(ROOT)}",
          file=sys.stderr, flush=True)
    for i, (mode, w, pol, m) in enumerate(configs, 1):
        row = run_config(mode, w, pol, m, args, efile)
        doc["runs"].append(row)
        if row.get("events_per_s"):
            msg = (f"{row['events_per_s']:>9,} ev/s  {row['detections']:>10,} complex  "
                   f"peak {row['peak_rss_mb']:7.1f} MB  goals {row['goals']:,}")
        else:
            msg = f"FAILED rc={row['returncode']}: {row.get('stderr_tail', '')[-300:]}"
        print(f"[{i}/{len(configs)}] {mode:6} {pol:13} W={w:<6} N={m:<8} {msg}",
              file=sys.stderr, flush=True)
        doc["targets"] = summarise(doc["runs"], n, flat_ns)
        out_json.write_text(json.dumps(doc, indent=1))

    report(doc, out_json, to_results=not quick)


def report(doc: dict, out_json: Path, to_results: bool) -> None:
    """Write the JSON, the summary and the plot of a run; print the table."""
    n, flat_ns = doc["config"]["n"], doc["config"]["flat_ns"]
    for r in doc["runs"]:
        if r.get("events_per_s") and r.get("cpu_s"):
            r["events_per_cpu_s"] = round(r["events"] / r["cpu_s"])
    doc["targets"] = summarise(doc["runs"], n, flat_ns)
    out_json.write_text(json.dumps(doc, indent=1))
    png = out_json.with_suffix(".png")
    if to_results:
        RESULTS.mkdir(parents=True, exist_ok=True)
        keep = ("mode", "policy", "window", "n", "events_per_s", "events_per_cpu_s",
                "detections", "detections_per_s", "detections_per_event", "wall_s", "cpu_s",
                "peak_rss_mb", "rss_before_mb", "growth_mb", "maxrss_mb", "goals",
                "loadavg_before", "loadavg_after", "events_per_s_runs", "events_per_cpu_s_runs",
                "loadavg_runs", "returncode")
        summary = {"benchmark": "seq2", "machine": doc["machine"],
                   "sources": doc.get("sources"), "config": doc["config"],
                   "targets": doc["targets"],
                   "runs": [{k: r[k] for k in keep if k in r} for r in doc["runs"]]}
        if "extra" in doc:   # checks added by hand after the run
            summary["extra"] = doc["extra"]
        (RESULTS / "seq2.json").write_text(json.dumps(summary, indent=1) + "\n")
        png = RESULTS / "seq2.png"
    plot(doc["runs"], n, flat_ns, png)
    print(table(doc["runs"], n))
    print(json.dumps(doc["targets"], indent=1))
    print(f"wrote {out_json} and {png}", file=sys.stderr)


def profile(args, n: int, efile: Path) -> None:
    """SWI-Prolog's profiler on the pure Prolog driver and cProfile on the
    bridge, both for W = 1,000 unrestricted; reports in bench/out/."""
    w = args.windows[0] if args.windows != DEFAULT_WINDOWS else FLAT_W
    tag = "" if w == FLAT_W else f"_W{w}"
    global SRC
    if args.sources:
        SRC = args.sources.resolve()
    else:
        SRC = ROOT if args.live else snapshot(sources_hash(ROOT))
    cmd = prolog_command(w, "unrestricted", n, args.batch, args.rise, efile, profile=True)
    pout = OUT / f"seq2_profile_prolog{tag}.txt"
    with open(pout, "w") as f:
        f.write(f"prolog profile: W={w} policy=unrestricted N={n} sources {SRC}\n"
                "(events read before profiling: the profile is of engine_events + engine_drain)\n")
        f.flush()
        subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT, cwd=ROOT)
    bout = OUT / f"seq2_profile_bridge{tag}.txt"
    subprocess.run([sys.executable, str(Path(__file__).resolve()), "--worker", "bridge",
                    "--src", str(SRC), "--window", str(w), "--policy", "unrestricted", "--n", str(n),
                    "--seed", str(args.seed), "--batch", str(args.batch),
                    "--rise", str(args.rise), "--profile-out", str(bout)], cwd=ROOT, check=True)
    print(f"wrote {pout.relative_to(ROOT)} and {bout.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
