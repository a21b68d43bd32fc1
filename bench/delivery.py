#!/usr/bin/env python
"""The goods-delivery application (Test 3, Figure 3 of the EP-SPARQL paper).

    .venv/bin/python bench/delivery.py              # 1 and 10 agents, 20 locations, 30 days
    .venv/bin/python bench/delivery.py --quick      # 5 days, results to bench/out/

Workload: examples/delivery (see its README): a strongly connected road
graph of 20 locations in the background, each agent visiting all 20
locations a day along its tour, traffic updates blocking the road to the
next stop before 60% of the arrivals (the paper: "more than 50% of the
connections ... inaccessible") plus other roads; the queries reroute.rq
(blocked next road -> alternatives by the transitive closure ``:road+``)
and blocked.rq.  The stream does not depend on the answers (generated
first, seeded).

Per configuration (1 or 10 agents; each in a fresh subprocess):

* events pushed one at a time (Delivery.push of one row: Engine.push_many
  of one row plus draining both queries): wall and CPU time per event,
  split by kind (arrival that re-routes, other arrival, traffic update);
* Figure 3 (a): processing time consumed until every agent has visited
  k locations, k = 1..20, per day (mean over the days);
* Figure 3 (b): memory at the same points: process RSS growth since just
  before the stream (day 1 and last day) and the partial matches the
  engine stores (engine.core.stats()["goals"]);
* the same stream pushed in batches of 5,000: events/s;
* variant ``every-arrival``: reroute.rq with its GRAPH patterns inside the
  arrival's group, so the closure is computed for every arrival instead of
  only after a matching blockage (same answers, more work);
* correctness: the decisions of each run equal examples/delivery/
  generate.py's reference(), computed directly from the data.

Output: bench/results/delivery.json and delivery.png (--quick: bench/out/).
"""
from __future__ import annotations

import argparse
import json
import resource
import statistics
import sys
import time
from pathlib import Path

from harness import (OUT, RESULTS, ROOT, describe, freeze, load_module, machine, pct,
                     proc_status_kb, reset_hwm, run_child)

sys.path.insert(0, str(ROOT))
gen = load_module("delivery_generate", ROOT / "examples" / "delivery" / "generate.py")
example = load_module("delivery_run", ROOT / "examples" / "delivery" / "run.py")

EVERY_ARRIVAL = """PREFIX : <http://epsparql.org/delivery#>
SELECT ?agent ?from ?dest ?alt
WHERE {
  { ?from :blockedTo ?dest }
  SEQ
  { ?agent :at ?from
    GRAPH <urn:epsparql:background> { ?leg :agent ?agent ; :from ?from ; :to ?dest }
    OPTIONAL {
      GRAPH <urn:epsparql:background> { ?from :road ?alt . ?alt :road+ ?dest }
      FILTER (?alt != ?dest)
    } }
  FILTER (getDURATION() <= "PT15M"^^xsd:duration)
}"""


def build(agents: int, days: int, seed: int, variant: str):
    c = gen.city(seed=seed)
    plans = gen.tours(c, agents, seed)
    rows = gen.stream(c, plans, days, seed)
    city_ttl, plans_ttl = gen.turtle(c, plans)
    d = example.delivery(city_ttl, plans_ttl, reroute=EVERY_ARRIVAL if variant == "every-arrival" else None)
    return c, plans, rows, d


def as_tuples(decisions) -> list[tuple]:
    return [(x.time, x.agent, x.at, x.dest, x.blocked_since, x.alternatives, x.blocked)
            for x in decisions]


def child(args) -> dict:
    c, plans, rows, d = build(args.agents, args.days, args.seed, args.variant)
    want = gen.reference(c, plans, rows)
    wanted_times = {(t, agent) for t, agent, *_ in want}
    AT = gen.NS + "at"
    # the k-th arrival of every agent, per day: Figure 3's x axis
    day_of = lambda t: int(t // gen.DAY)  # noqa: E731
    kth: dict[tuple[int, int], int] = {}            # (day, k) -> index of the last agent's k-th arrival
    count: dict[tuple[int, str], int] = {}
    for i, (t, s, p, o) in enumerate(rows):
        if p == AT:
            key = (day_of(t), s)
            count[key] = count.get(key, 0) + 1
            kth[(day_of(t), count[key])] = i
    marks = {i: key for key, i in kth.items()}
    freeze()
    wall, cpu, kind = [], [], []
    mem = {}
    hwm = reset_hwm()
    rss0 = proc_status_kb("VmRSS")
    for i, row in enumerate(rows):
        w0, c0 = time.perf_counter_ns(), time.process_time_ns()
        d.push([row])
        w1, c1 = time.perf_counter_ns(), time.process_time_ns()
        wall.append((w1 - w0) / 1000)
        cpu.append((c1 - c0) / 1000)
        t, s, p, o = row
        kind.append("update" if p != AT else "reroute" if (t, s) in wanted_times else "arrival")
        if i in marks:
            mem[marks[i]] = (proc_status_kb("VmRSS") - rss0, d.engine.core.stats()["goals"])
    got = as_tuples(d.flush())
    peak = proc_status_kb("VmHWM")
    days = sorted({day for day, _ in kth})
    # Figure 3 (a): time consumed until all agents visited k locations, per day
    start_of_day = {}
    for i, (t, *_r) in enumerate(rows):
        start_of_day.setdefault(day_of(t), i)
    curve = []
    for k in range(1, c.n + 1):
        per_day = []
        for day in days:
            if (day, k) in kth:
                lo, hi = start_of_day[day], kth[(day, k)]
                per_day.append(sum(wall[lo:hi + 1]) / 1000)        # ms
        curve.append(round(statistics.mean(per_day), 3) if per_day else None)
    mem_first = [round(mem[(days[0], k)][0] / 1024, 2) if (days[0], k) in mem else None for k in range(1, c.n + 1)]
    mem_last = [round(mem[(days[-1], k)][0] / 1024, 2) if (days[-1], k) in mem else None for k in range(1, c.n + 1)]
    goals = [mem[(days[-1], k)][1] if (days[-1], k) in mem else None for k in range(1, c.n + 1)]
    by_kind = {}
    for name in ("reroute", "arrival", "update"):
        ws = [w for w, k in zip(wall, kind) if k == name]
        cs = [x for x, k in zip(cpu, kind) if k == name]
        if ws:
            by_kind[name] = {"events": len(ws), "wall_us_median": round(statistics.median(ws), 1),
                             "wall_us_p99": round(pct(ws, 99), 1),
                             "cpu_us_median": round(statistics.median(cs), 1),
                             "cpu_us_mean": round(statistics.mean(cs), 1)}
    single = {"events": len(rows), "wall_us_median": round(statistics.median(wall), 1),
              "wall_us_p99": round(pct(wall, 99), 1), "cpu_us_median": round(statistics.median(cpu), 1),
              "cpu_us_mean": round(statistics.mean(cpu), 1),
              "events_per_s": round(len(rows) / (sum(wall) / 1e6)),
              "by_kind": by_kind, "correct": got == want,
              "latencies_us": [round(x, 1) for x in wall], "kinds": kind}
    d.engine.close()
    # batched: the same stream in batches of 5,000
    c, plans, rows, d = build(args.agents, args.days, args.seed, args.variant)
    freeze()
    w0, c0 = time.perf_counter(), time.process_time()
    for i in range(0, len(rows), 5000):
        d.push(rows[i:i + 5000])
    got_b = as_tuples(d.flush())
    w1, c1 = time.perf_counter(), time.process_time()
    batched = {"events_per_s": round(len(rows) / (w1 - w0)), "cpu_events_per_s": round(len(rows) / (c1 - c0)),
               "us_per_event": round((w1 - w0) / len(rows) * 1e6, 1), "correct": got_b == want}
    return {"agents": args.agents, "locations": c.n, "roads": len(c.roads), "days": args.days,
            "variant": args.variant, "events": len(rows),
            "arrivals": sum(1 for r in rows if r[2] == AT),
            "updates": sum(1 for r in rows if r[2] != AT), "reroutes": len(want),
            "waits": sum(1 for x in want if not (set(x[5]) - set(x[6]))),
            "single": single, "batched": batched,
            "fig3_time_ms": curve, "fig3_rss_growth_mb_day1": mem_first,
            "fig3_rss_growth_mb_last_day": mem_last, "fig3_goals_last_day": goals,
            "rss_before_stream_mb": round(rss0 / 1024, 1),
            "peak_rss_stream_mb": round(peak / 1024, 1) if hwm else None,
            "maxrss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
            "correct": single["correct"] and batched["correct"]}


def plot(doc: dict, path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    runs = [r for r in doc["runs"] if r["variant"] == "example"]
    fig, axs = plt.subplots(2, 2, figsize=(14, 9))
    ax = axs.ravel()
    for r in runs:
        ks = list(range(1, r["locations"] + 1))
        label = f"{r['agents']} agent{'s' if r['agents'] > 1 else ''}"
        ax[0].plot(ks, r["fig3_time_ms"], marker="o", ms=3, label=label)
        ax[1].plot(ks, r["fig3_rss_growth_mb_last_day"], marker="o", ms=3, label=f"{label}, day {r['days']}")
        ax[1].plot(ks, r["fig3_rss_growth_mb_day1"], ls=":", label=f"{label}, day 1")
        ax[2].plot(ks, r["fig3_goals_last_day"], marker="o", ms=3, label=f"{label}, day {r['days']}")
    for a in ax[:3]:
        a.set_xlabel("number of locations visited (per agent)")
        a.set_xticks([1, 5, 10, 15, 20])
        a.grid(alpha=0.3)
        a.legend(fontsize=8)
    ax[0].set_ylabel("ms")
    ax[0].set_title("(a) processing time consumed until every agent has visited k locations\n"
                    "(events pushed one at a time; mean over the days)", fontsize=10)
    ax[1].set_ylabel("MB")
    ax[1].set_title("(b) process RSS growth since the stream started", fontsize=10)
    ax[2].set_ylabel("partial matches")
    ax[2].set_title("(c) partial matches stored by the engine (garbage-collected\n"
                    "every 100 events: the saw teeth)", fontsize=10)
    labels, data = [], []
    for r in doc["runs"]:
        lat, kinds = r["single"]["latencies_us"], r["single"]["kinds"]
        for name in ("update", "arrival", "reroute"):
            xs = [x for x, k in zip(lat, kinds) if k == name]
            if xs:
                labels.append(f"{name}, {r['agents']} ag." + (" (every-arrival)" if r["variant"] != "example" else ""))
                data.append(xs)
    ax[3].boxplot(data, showfliers=False)
    ax[3].set_xticks(range(1, len(labels) + 1))
    ax[3].set_xticklabels(labels, fontsize=7, rotation=40, ha="right")
    ax[3].set_yscale("log")
    ax[3].set_ylabel("µs per event (wall, one push)")
    ax[3].set_title("(d) delay per event by kind (boxes: quartiles; whiskers: 1.5 IQR)", fontsize=10)
    ax[3].grid(alpha=0.3, axis="y")
    m = doc["machine"]
    fig.suptitle(f"Goods delivery (EP-SPARQL Test 3, Figure 3): 20 locations, {runs[0]['days']} days — "
                 f"{m['cpu']}, {m['cores']} cores, Python {m['python']}", fontsize=11)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--days", type=int, default=30)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--agents", type=int, default=1, help=argparse.SUPPRESS)
    ap.add_argument("--variant", default="example", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.quick:
        args.days = 5
    if args.child:
        print(json.dumps(child(args)))
        return 0
    info = machine()
    print(describe(info))
    runs = []
    for variant in ("example", "every-arrival"):
        for agents in (1, 10):
            r, run = run_child([sys.executable, str(Path(__file__).resolve()), "--child",
                                "--agents", str(agents), "--days", str(args.days),
                                "--seed", str(args.seed), "--variant", variant])
            r["load_avg_before"], r["load_avg_after"] = run["load_avg_before"], run["load_avg_after"]
            runs.append(r)
            s, b = r["single"], r["batched"]
            kinds = ", ".join(f"{k} {v['wall_us_median']:.0f}" for k, v in s["by_kind"].items())
            print(f"{variant:13} {agents:2} agent(s): {r['events']:,} events ({r['arrivals']:,} arrivals, "
                  f"{r['reroutes']:,} re-routings, {r['waits']} waits); one at a time: median "
                  f"{s['wall_us_median']:.0f} µs/event wall ({kinds}), {s['events_per_s']:,} ev/s; "
                  f"batched {b['events_per_s']:,} ev/s; a day's 20 locations: "
                  f"{r['fig3_time_ms'][-1]:.1f} ms; peak RSS {r['peak_rss_stream_mb']} MB "
                  f"(+{(r['peak_rss_stream_mb'] or 0) - r['rss_before_stream_mb']:.1f}); "
                  f"correct: {r['correct']}")
    ex = {r["agents"]: r for r in runs if r["variant"] == "example"}
    summary = {
        "day_ms_1_agent": ex[1]["fig3_time_ms"][-1],
        "day_ms_10_agents": ex[10]["fig3_time_ms"][-1],
        "time_ratio_10_vs_1": round(ex[10]["fig3_time_ms"][-1] / ex[1]["fig3_time_ms"][-1], 2),
        "events_ratio_10_vs_1": round(ex[10]["events"] / ex[1]["events"], 2),
        "all_correct": all(r["correct"] for r in runs),
    }
    print(f"a day's tour (20 locations): {summary['day_ms_1_agent']} ms for 1 agent, "
          f"{summary['day_ms_10_agents']} ms for 10 agents (x{summary['time_ratio_10_vs_1']}; "
          f"events x{summary['events_ratio_10_vs_1']})")
    doc = {"benchmark": "delivery", "machine": info, "days": args.days, "seed": args.seed,
           "summary": summary, "runs": runs}
    dest = OUT if args.quick else RESULTS
    dest.mkdir(parents=True, exist_ok=True)
    (dest / "delivery.json").write_text(json.dumps(doc, indent=1))
    plot(doc, dest / "delivery.png")
    print(f"written {(dest / 'delivery.json').relative_to(ROOT)}, {(dest / 'delivery.png').relative_to(ROOT)}")
    return 0 if summary["all_correct"] else 1


if __name__ == "__main__":
    sys.exit(main())
