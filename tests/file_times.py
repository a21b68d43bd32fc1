"""Per-file wall and CPU time of a test run (``EPSPARQL_FILE_TIMES=out.tsv``).

The suite's budget is throughput on two shared cores, so the figure that
matters per file is CPU time, the JVMs, Prolog and ``epsparql``
subprocesses it starts included; wall time alone moves with the machine's
load.  tests/conftest.py registers this plugin when the variable is set; each
process (each xdist worker too) appends one line per file:
``file  wall_s  cpu_s  loadavg1  cgroup_cpu_s`` where cpu_s is this
process's CPU plus that of its children, reaped or still running (psutil),
and cgroup_cpu_s that of the cpuacct cgroup the run is in, when it is not
the root one: only that counts the processes a child leaves behind (a
PySpark driver's JVM, orphaned when the driver exits) and is right only
when nothing else runs in the group (``-n 0``).  To put a run in a group
of its own (root): ``mkdir /sys/fs/cgroup/cpuacct/G && echo $$ >
/sys/fs/cgroup/cpuacct/G/cgroup.procs`` in the shell that starts pytest.
"""
from __future__ import annotations

import os
import resource
import time
from pathlib import Path

import psutil


def _cpu_now() -> float:
    """CPU seconds of this process, its reaped children and its live descendants."""
    total = 0.0
    for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN):
        use = resource.getrusage(who)
        total += use.ru_utime + use.ru_stime
    for child in psutil.Process().children(recursive=True):
        try:
            t = child.cpu_times()
        except psutil.Error:
            continue
        total += t.user + t.system + t.children_user + t.children_system
    return total


def _cgroup_usage_file() -> Path | None:
    """The cpuacct.usage file of this process's cgroup, unless it is the root."""
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if "cpuacct" in controllers.split(",") and path != "/":
            f = Path("/sys/fs/cgroup/cpuacct") / path.lstrip("/") / "cpuacct.usage"
            return f if f.exists() else None
    return None


def _cgroup_cpu(f: Path | None) -> float:
    return int(f.read_text()) / 1e9 if f is not None else float("nan")


class FileTimes:
    """Writes a line per test file when the run moves on to the next file."""

    def __init__(self, out: Path) -> None:
        self.out = out
        self.file: str | None = None
        self.wall0 = 0.0
        self.cpu0 = 0.0
        self.group = _cgroup_usage_file()
        self.group0 = 0.0

    def _close(self) -> None:
        if self.file is None:
            return
        wall = time.perf_counter() - self.wall0
        cpu = _cpu_now() - self.cpu0
        group = _cgroup_cpu(self.group) - self.group0
        with self.out.open("a") as f:
            f.write(f"{self.file}\t{wall:.2f}\t{cpu:.2f}\t{os.getloadavg()[0]:.2f}"
                    f"\t{group:.2f}\n")
        self.file = None

    def pytest_runtest_protocol(self, item, nextitem):
        name = item.nodeid.split("::")[0]
        if name != self.file:
            self._close()
            self.file = name
            self.wall0 = time.perf_counter()
            self.cpu0 = _cpu_now()
            self.group0 = _cgroup_cpu(self.group)

    def pytest_sessionfinish(self, session):
        # module fixtures are torn down before this hook: their cost counts
        self._close()
