"""The Python -> Prolog crossing itself: what one bridge call costs.

    .venv/bin/python bench/crossing.py            # ~20 s
    PYTHONPATH=OLD_TREE .venv/bin/python bench/crossing.py   # another tree's epsparql

Only the public ``runtime().call`` contract and ``CoreEngine`` are used, so
any tree of the project can be measured (the pyswip bridge of before the
janus change too).  Per case, the median over ``--repeat`` rounds of the
CPU and wall time per call:

* ``noop``: ``py_function_registered`` (a table lookup, constant reply): the
  call machinery alone;
* ``stats``: ``py_stats`` (a small JSON reply, decoded);
* ``push []``: an empty batch through ``py_push`` (the JSON batch path's
  fixed cost), and through ``CoreEngine.push_text`` (whatever entry point
  the CoreEngine of the tree uses: ``py_columns`` since the columns);
* ``push 5,000 / 0 answers``: 5,000 events that match nothing (per event);
* ``push 5,000 / 5,000 answers``: 5,000 events, one answer each (answers
  decoded into Detection objects: per event, answers included);
* ``push_text 5,000 / 5,000 answers``: the same with the batch text made
  beforehand (the crossing and the answers' decoding, no text building).
"""
from __future__ import annotations

import argparse
import os
import platform
import resource
import statistics
import sys
import time


def machine() -> str:
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo")
                if l.startswith("model name")), "?")
    return (f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()}, "
            f"load average {os.getloadavg()[0]:.2f}")


def bridge_name() -> str:
    try:
        from importlib.metadata import version
        import epsparql.core.runtime as r
        if hasattr(r, "swipl_executable"):
            return f"janus-swi {version('janus-swi')}"
        return f"pyswip {version('pyswip')}"
    except Exception:
        return "?"


def measure(f, n: int, repeat: int) -> tuple[float, float]:
    """(median CPU s, median wall s) per call of f over repeat rounds of n calls."""
    f()
    cpu, wall = [], []
    for _ in range(repeat):
        c0, t0 = time.process_time(), time.perf_counter()
        for _ in range(n):
            f()
        cpu.append((time.process_time() - c0) / n)
        wall.append((time.perf_counter() - t0) / n)
    return statistics.median(cpu), statistics.median(wall)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--calls", type=int, default=20_000, help="calls per round, small cases")
    args = ap.parse_args()
    import epsparql
    from epsparql.core import CoreEngine, term
    from epsparql.core.runtime import runtime
    rt = runtime()
    print(f"machine: {machine()}")
    print(f"bridge: {bridge_name()}; epsparql from {os.path.dirname(epsparql.__file__)}")

    none = CoreEngine()
    none.add_rules("h(X) <- b(X).")
    one = CoreEngine()
    one.add_rules("h(X) <- a(X).")
    batch = [(term("a", i), i) for i in range(1, 5001)]
    big = "[" + ",".join(f"e(a({i}),{i},{i})" for i in range(1, 5001)) + "]"

    rows = []

    def case(label: str, f, n: int, per: int = 1) -> None:
        cpu, wall = measure(f, n, args.repeat)
        rows.append((label, cpu / per, wall / per, per / wall))

    case("noop (py_function_registered)", lambda: rt.call("py_function_registered", "http://x"),
         args.calls)
    case("stats (py_stats, JSON decoded)", lambda: none.stats(), args.calls)
    case("push [] (py_push, empty batch)", lambda: rt.call("py_push", none.module, ("s", "[]")),
         args.calls)
    case("CoreEngine.push_text('[]') (the API's fixed cost)", lambda: none.push_text("[]"),
         args.calls)
    case("push 5,000 events, 0 answers [per event]",
         lambda: rt.call("py_push", none.module, ("s", big)), 40, 5000)
    t = [0]

    def push_answers() -> None:
        base = t[0]
        t[0] += 5000
        one.push_many([(term("a", i), base + i) for i in range(1, 5001)])
        one.drain()
    case("push_many 5,000 events, 5,000 answers [per event]", push_answers, 40, 5000)

    texts = iter(["[" + ",".join(f"e(a({i}),{i},{i})" for i in range(k * 5000 + 1, k * 5000 + 5001))
                  + "]" for k in range(10_000, 10_000 + 41 * args.repeat + 1)])

    def text_answers() -> None:
        one.push_text(next(texts))
        one.drain()
    case("push_text 5,000 events, 5,000 answers [per event]", text_answers, 40, 5000)

    print(f"{'case':58s} {'us CPU':>9s} {'us wall':>9s} {'per s (wall)':>13s}")
    for label, cpu, wall, rate in rows:
        print(f"{label:58s} {cpu * 1e6:9.2f} {wall * 1e6:9.2f} {rate:13,.0f}")
    print(f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")


if __name__ == "__main__":
    sys.exit(main())
