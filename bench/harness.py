"""What every benchmark here shares: the machine it ran on, timing, peak
memory, child processes and results files.

Each benchmark runs its measurements in fresh child processes (so one
run's memory and caches do not colour the next), reads the child's JSON
result from its last line, notes the load average around it (the machine
is shared: figures measured under load say so), and writes a results
document that starts with :func:`machine`.

    from harness import machine, run_child, write_results
    info = machine()
    res, run = run_child([sys.executable, __file__, "--child", ...])
    write_results({"machine": info, "rows": rows}, results_path("seq2", quick))
"""
from __future__ import annotations

import gc
import importlib.util
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "bench" / "out"            # scratch: quick runs, drivers, logs (not committed)
RESULTS = ROOT / "bench" / "results"    # the figures the README quotes

# This tree's epsparql, unless PYTHONPATH names another tree to measure
# (`PYTHONPATH=OTHER_TREE .venv/bin/python bench/crossing.py`: before/after pairs).
if not any((Path(p) / "epsparql").is_dir() for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p):
    sys.path.insert(0, str(ROOT))


def swipl_executable() -> str:
    """The bridge's SWI-Prolog (``swipl`` for a tree of before the janus
    bridge); starts nothing."""
    try:
        from epsparql.core.swipl import swipl_executable as exe
    except ImportError:
        return "swipl"
    return exe()


__all__ = ["ROOT", "OUT", "RESULTS", "machine", "describe", "proc_status_kb", "reset_hwm",
           "peak_rss_mb", "Clock", "freeze", "pct", "median", "run_child", "load_module",
           "results_path", "write_results", "swipl_executable", "profiled"]


# ---------------------------------------------------------------------------
# the machine

def machine(**extra: Any) -> dict:
    """The machine and software a result was measured with: CPU, cores,
    memory, OS, Python, SWI-Prolog, the Python bridge, the commit (and
    whether the engine's sources differ from it), date, load average."""
    cpu = "?"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    mem_kb = 0
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemTotal:"):
                mem_kb = int(line.split()[1])
    try:
        swi = subprocess.run([swipl_executable(), "--version"], capture_output=True, text=True).stdout.strip()
    except OSError:
        swi = "?"
    bridge = "?"
    for dist in ("janus-swi", "pyswip"):
        try:
            from importlib.metadata import version
            bridge = f"{dist} {version(dist)}"
            break
        except Exception:
            continue
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
                                capture_output=True, text=True).stdout.strip()
        dirty = bool(subprocess.run(["git", "status", "--porcelain", "prolog", "epsparql"],
                                    cwd=ROOT, capture_output=True, text=True).stdout.strip())
    except OSError:
        commit, dirty = "?", False
    return {"cpu": cpu, "cores": os.cpu_count(), "ram_gb": round(mem_kb / 1024 / 1024, 1),
            "os": platform.platform(), "python": platform.python_version(), "swipl": swi,
            "bridge": bridge, "git_commit": commit, "engine_modified_since_commit": dirty,
            "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
            "load_avg": round(os.getloadavg()[0], 2), **extra}


def describe(info: dict) -> str:
    """The machine in one line, for the start of a benchmark's output."""
    return (f"machine: {info['cpu']}, {info['cores']} cores, {info['ram_gb']} GB, Python "
            f"{info['python']}, {info['swipl']}, {info['bridge']}; load average "
            f"{info['load_avg']:.2f}" + ("" if info["load_avg"] < 1 else " (under load)"))


# ---------------------------------------------------------------------------
# memory of this process (Linux)

def proc_status_kb(field: str) -> int:
    """A field of /proc/self/status in kB (VmRSS, VmHWM, ...); 0 if absent."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def reset_hwm() -> bool:
    """Reset the peak-memory mark (VmHWM) to the current size; False where
    the kernel does not allow it."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def peak_rss_mb() -> float:
    """This process's peak resident memory (VmHWM) in MB."""
    return round(proc_status_kb("VmHWM") / 1024, 1)


# ---------------------------------------------------------------------------
# timing

class Clock:
    """Wall and CPU (process) seconds of a ``with`` block, accumulated over
    the blocks it times: ``with clock: ...``; ``clock.wall``, ``clock.cpu``."""

    def __init__(self) -> None:
        self.wall = 0.0
        self.cpu = 0.0

    def __enter__(self) -> "Clock":
        self._w, self._c = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.wall += time.perf_counter() - self._w
        self.cpu += time.process_time() - self._c


def freeze() -> None:
    """Collect, then move every object alive now out of the cyclic
    collector's reach: the input built before a timed section is not
    scanned again and again while it runs."""
    gc.collect()
    gc.freeze()


def pct(xs: Sequence[float], p: float) -> float:
    """The p-th percentile (nearest rank) of xs."""
    s = sorted(xs)
    if not s:
        return float("nan")
    k = min(len(s) - 1, max(0, round(p / 100 * len(s) + 0.5) - 1))
    return s[k]


def median(xs: Sequence[float]) -> float:
    s = sorted(xs)
    m = len(s) // 2
    return s[m] if len(s) % 2 else (s[m - 1] + s[m]) / 2


# ---------------------------------------------------------------------------
# child processes

def run_child(cmd: Sequence[str], timeout: float = 3600, *, log: str | None = None,
              check: bool = True) -> tuple[dict | None, dict]:
    """Run ``cmd`` from the repository root; its result is the JSON object
    of its last stdout line that is one (``RESULT {...}`` counts too).

    Returns (result, run): ``run`` has the return code, elapsed seconds,
    the child's CPU seconds (``cpu_s``, user and system), its peak memory
    (``maxrss_mb``) and the 1-minute load average
    before and after (the run itself adds about 1).  ``log``: keep stdout
    and stderr in ``bench/out/logs/<log>.out/.err``.  ``check``: raise
    RuntimeError when the child fails or gives no result (else the result
    is None and ``run`` has the end of its stderr)."""
    logdir = OUT / "logs"
    logdir.mkdir(parents=True, exist_ok=True)
    out_p = logdir / f"{log or 'child'}.out"
    err_p = logdir / f"{log or 'child'}.err"
    load0 = os.getloadavg()[0]
    t0 = time.perf_counter()
    with open(out_p, "w") as fo, open(err_p, "w") as fe:
        p = subprocess.Popen(list(cmd), stdout=fo, stderr=fe, cwd=ROOT)
        deadline = time.monotonic() + timeout
        while True:
            pid, status, ru = os.wait4(p.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() > deadline:
                p.kill()
                _, status, ru = os.wait4(p.pid, 0)
                break
            time.sleep(0.05)
    run = {"returncode": os.waitstatus_to_exitcode(status),
           "elapsed_s": round(time.perf_counter() - t0, 2),
           "maxrss_mb": round(ru.ru_maxrss / 1024, 1),
           "cpu_s": round(ru.ru_utime + ru.ru_stime, 2),
           "load_avg_before": round(load0, 2), "load_avg_after": round(os.getloadavg()[0], 2)}
    if log:
        run["log"] = str(out_p.relative_to(ROOT))
    result = None
    for line in out_p.read_text().splitlines():
        text = line[7:] if line.startswith("RESULT ") else line
        if text.startswith("{"):
            try:
                result = json.loads(text)
            except ValueError:
                pass
    if result is None or run["returncode"] != 0:
        run["stderr_tail"] = err_p.read_text()[-3000:]
        if check:
            raise RuntimeError(f"{' '.join(cmd)} failed ({run['returncode']}):\n"
                               f"{run['stderr_tail']}")
    return result, run


def generated_file(path: Path, lines: Iterable[str], chunk: int = 100_000) -> Path:
    """``path``, written from ``lines`` (a generator: not run when the file
    is there) unless a non-empty one exists; written under a temporary name
    and renamed, so an interrupted run leaves no half file to reuse."""
    if path.exists() and path.stat().st_size > 0:
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        buf: list[str] = []
        for line in lines:
            buf.append(line)
            if len(buf) == chunk:
                f.write("".join(buf))
                buf = []
        f.write("".join(buf))
    tmp.rename(path)
    return path


def load_module(name: str, path: Path) -> Any:
    """A Python file of the repository (an example, a generator) as the
    module ``name`` (several of them are called generate.py)."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


# ---------------------------------------------------------------------------
# results

def results_path(name: str, quick: bool = False, out: str | None = None) -> Path:
    """Where a benchmark writes its results: ``out`` if given, else
    ``bench/out/<name>.json`` for quick runs and ``bench/results/<name>.json``."""
    if out:
        return Path(out)
    return (OUT if quick else RESULTS) / f"{name}.json"


def write_results(doc: dict, path: Path, indent: int | None = 2) -> Path:
    """Write a results document (it should carry ``"machine": machine()``)
    and say where."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=indent))
    print(f"written {path}")
    return path


def timed(fn: Callable[[], Any]) -> tuple[Any, float, float]:
    """``fn()``'s result, wall and CPU seconds."""
    with Clock() as c:
        r = fn()
    return r, c.wall, c.cpu


# ---------------------------------------------------------------------------
# profiles

_PROFILED: list[Callable[[], Any]] = []


def _run_profiled() -> int:
    """Called from Prolog (janus py_call) inside SWI-Prolog's profiler."""
    _PROFILED.append(_PROFILED.pop()())
    return 1


def profiled(fn: Callable[[], Any], stem: Path, top: int = 40) -> tuple[Any, list[str]]:
    """Run ``fn`` under both profilers: cProfile for Python and SWI-Prolog's
    (``'$profile'/4``, sampling CPU time: ``profiler/2`` alone samples
    nothing in 9.2), with the call into ``fn`` made from Prolog so that
    every Prolog call ``fn`` makes is under it.  Writes
    ``<stem>_python.txt`` (by own time) and ``<stem>_prolog.txt`` (the
    predicates by own time, with their share); returns fn's result and the
    two paths."""
    import cProfile
    import io
    import pstats
    from epsparql.core.runtime import runtime
    rt = runtime()
    rt.consult(Path(__file__).resolve().parent / "profile_table.pl")
    prof = cProfile.Profile()
    _PROFILED.append(fn)
    prof.enable()
    try:
        rt.query_once("'$profile'(py_call(harness:'_run_profiled'(), _), cputime, classic, 200)")
    finally:
        prof.disable()
    result = _PROFILED.pop()
    buf = io.StringIO()
    pstats.Stats(prof, stream=buf).sort_stats("tottime").print_stats(top)
    stem.parent.mkdir(parents=True, exist_ok=True)
    py, pl = Path(f"{stem}_python.txt"), Path(f"{stem}_prolog.txt")
    py.write_text(buf.getvalue())
    pl.write_text(rt.query_once(f"profile_table:profile_top({top}, Text)")["Text"])
    return result, [str(py), str(pl)]
