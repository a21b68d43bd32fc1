"""``epsparql serve`` against ``epsparql run`` on the same stream (issue 24's targets).

    .venv/bin/python bench/serve.py                  # N = 100,000 (a few minutes on 2 cores)
    .venv/bin/python bench/serve.py --quick          # N = 20,000
    .venv/bin/python bench/serve.py --soak 600       # the soak alone: 10 minutes of MQTT load

A real Mosquitto (``/usr/sbin/mosquitto``) on a free loopback port, the
service a subprocess with ``--state`` (every input fsync'ed to the input
log before it is acknowledged), its answers written to its answer files.
Stream: 100 keys ``ex:k0`` … ``ex:k99``, one reading per key per second
(event i is key i mod 100 at t = i div 100), a price drawn from 1,000
(seeded), on the stream ``ex:s``.  Queries:

- ``seq`` (EP-SPARQL): ``{?k :v ?a} SEQ {?k :v ?b} FILTER(?b > ?a * 1.9 &&
  getDURATION() < "PT5S")``, about one answer per 2 events;
- ``avg`` (C-SPARQL): ``AVG(?v) … [RANGE 10s STEP 1s] GROUP BY ?k``, one
  answer per event.

Parts:

1. **HTTP**, batches of 1,000 events (``POST /events``, one connection)
   against ``epsparql run QUERY --stream FILE`` (its own "events in T s",
   start-up excluded; and its wall time with start-up).  Target: the
   service at least 80 % of run's events/s.
2. **MQTT**, one event a message, QoS 1, through Mosquitto, published by
   ``mosquitto_pub -l`` (C; Debian's mosquitto-clients), or with
   ``--publisher paho`` (or without the C clients) by a Python paho
   process, which manages 8-10k messages/s and is then the limit.
   Target 20,000 events/s.  The rate is the service's (first message
   taken to last event applied); the publisher's own rate is printed
   beside it.
3. **Latency**, publish → answer received by an MQTT subscriber
   (``mosquitto_sub``, or paho), at 1,000 and 10,000 events/s offered for
   a few seconds: p50, p99, those of the first second apart (the query: a
   SEQ of two readings of a key 10 events apart, one answer per event,
   its end the event that made it); and the same publisher, broker and
   subscriber without the service, for what the machine's load adds.
   Target p99 < 50 ms at 1,000/s.
4. ``--soak SECONDS``: MQTT at ``--soak-rate`` events/s (default 5,000)
   into both queries, the service's RSS printed every 10 s.

Printed per part: events/s, CPU per event (the service's; ``run``'s past
its start-up, a one-event run's CPU subtracted), the load average, the
peak RSS of every process (service, Mosquitto, run, this one).  Results:
bench/results/serve.json; bench/README.md holds the figures.
"""
from __future__ import annotations

import argparse
import http.client
import json
import multiprocessing as mp
import os
import random
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import OUT, ROOT, describe, machine, pct, results_path, write_results  # noqa: E402

sys.path.insert(0, str(ROOT / "tests" / "service"))
from mqtt_broker import Mosquitto  # noqa: E402
from service_proc import ServiceProcess  # noqa: E402

EX = "http://example.org/"
STREAM = EX + "s"
XSD_INT = "http://www.w3.org/2001/XMLSchema#integer"
QUERIES = {
    "seq": ("PREFIX : <http://example.org/>\nSELECT ?k ?a ?b WHERE { {?k :v ?a} SEQ {?k :v ?b} "
            'FILTER(?b > ?a * 1.9 && getDURATION() < "PT5S"^^xsd:duration) }\n'),
    "avg": (f"REGISTER QUERY avg AS\nSELECT ?k (AVG(?v) AS ?a)\nFROM STREAM <{STREAM}> "
            f"[RANGE 10s STEP 1s]\nWHERE {{ ?k <{EX}v> ?v }} GROUP BY ?k\n"),
}
PY = sys.executable
MOSQUITTO_PUB = shutil.which("mosquitto_pub")
MOSQUITTO_SUB = shutil.which("mosquitto_sub")
C_CHUNK = 10000                           # lines per mosquitto_pub process, unpaced
PUBLISHER = "c"                           # --publisher: "c" (mosquitto_pub) or "paho"
RUN_EXTRA: list[str] = []


def stream_lines(n: int, with_stream: bool) -> list[str]:
    rnd = random.Random(1)
    g = f" <{STREAM}>" if with_stream else ""
    return [f'<{EX}k{i % 100}> <{EX}v> "{rnd.randrange(1000)}"^^<{XSD_INT}>{g} {i // 100} .\n'
            for i in range(n)]


def vm(pid: int, field: str = "VmHWM") -> float:
    """A process's VmHWM / VmRSS in MB (0 once it is gone)."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return round(int(line.split()[1]) / 1024, 1)
    except OSError:
        pass
    return 0.0


def cpu_s(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/stat") as f:
            parts = f.read().rsplit(")", 1)[1].split()
        return (int(parts[11]) + int(parts[12])) / os.sysconf("SC_CLK_TCK")
    except OSError:
        return 0.0


# ---------------------------------------------------------------------------
# epsparql run

def run_cli(query: str, lines: list[str], work: Path) -> dict[str, Any]:
    q = work / "q.rq"
    q.write_text(QUERIES[query])
    s = work / "s.nqt"
    s.write_text("".join(lines))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    r = subprocess.run([PY, "-m", "epsparql.cli", "run", str(q), "--stream", str(s),
                        "--output-format", "jsonl", "--out", str(work / "run.jsonl")] + RUN_EXTRA,
                       cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)),
                       capture_output=True, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode:
        raise RuntimeError(r.stderr)
    m = re.search(r"([\d,]+) events in ([\d.]+) s", r.stderr)
    proc_s = float(m.group(2)) if m else wall
    answers = sum(1 for _ in open(work / "run.jsonl"))
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    out = {"events": len(lines), "answers": answers, "wall_s": round(wall, 2),
           "process_s": proc_s, "events_per_s": round(len(lines) / proc_s),
           "events_per_s_with_startup": round(len(lines) / wall),
           "cpu_s": round(cpu, 2), "peak_rss_mb": round(after.ru_maxrss / 1024, 1),
           "load_avg": round(os.getloadavg()[0], 2)}
    if len(lines) > 1:                    # CPU past start-up: a one-event run's CPU less
        base = run_cli(query, lines[:1], work)["cpu_s"]
        out["startup_cpu_s"] = base
        out["cpu_us_per_event"] = round((cpu - base) / len(lines) * 1e6, 1)
    return out


# ---------------------------------------------------------------------------
# the service

class Service:
    def __init__(self, work: Path, queries: list[str], broker: Mosquitto | None = None,
                 extra: tuple[str, ...] = ()) -> None:
        work.mkdir(parents=True, exist_ok=True)
        args = ["--state", str(work / "state"), "--rate", "100000", "--burst", "100000"]
        for q in queries:
            f = work / f"{q}.rq"
            f.write_text(QUERIES[q] if q in QUERIES else LATENCY_QUERIES[q])
            args += ["--query", f"{q}={f}"]
        if broker is not None:
            args += ["--mqtt", broker.address, "--mqtt-in", f"sensors/#={STREAM}",
                     "--mqtt-client-id", f"bench-{os.getpid()}-{time.time_ns()}"]
        args += list(extra)
        self.svc = ServiceProcess(*args, timeout=120)
        self.proc, self.token, self.port, self.lines = (self.svc.proc, self.svc.token,
                                                        self.svc.port, self.svc.lines)
        if broker is not None:
            while "mqtt: connected" not in "".join(self.lines):
                time.sleep(0.05)
            time.sleep(0.3)                # subscribed

    @property
    def pid(self) -> int:
        return self.proc.pid

    def conn(self) -> http.client.HTTPConnection:
        return http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)

    def get(self, path: str) -> Any:
        c = self.conn()
        try:
            c.request("GET", path, headers={"Authorization": f"Bearer {self.token}"})
            r = c.getresponse()
            body = r.read()
            if r.status != 200:
                raise RuntimeError(f"{path}: {r.status} {body[:300]!r}")
            return json.loads(body) if path != "/metrics" else body.decode()
        finally:
            c.close()

    def wait_events(self, n: int, timeout: float = 600) -> float:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            st = self.get("/status")
            if st["events"] >= n and not st["queued"]:
                return time.perf_counter()
            time.sleep(0.02)
        raise RuntimeError(f"the service took {st['events']} of {n} events")

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def paced(lines: list[str], rate: float, t0: float, times: list[float]) -> Any:
    """The lines, each given out at its due time (``rate`` a second from
    ``t0``), the time it was given out appended to ``times``."""
    step = 1.0 / rate
    for i, line in enumerate(lines):
        due = t0 + i * step
        now = time.perf_counter()
        if due > now:
            time.sleep(due - now)
        times.append(time.perf_counter())
        yield line


def http_part(query: str, lines: list[str], work: Path, batch: int = 1000) -> dict[str, Any]:
    """POST the batches one after the other on one connection: the rows must
    come in time order, and requests on several connections may be taken
    in another order than they were sent."""
    svc = Service(work, [query])
    try:
        bodies = ["".join(lines[i:i + batch]).encode() for i in range(0, len(lines), batch)]
        cpu0 = cpu_s(svc.pid)
        c = svc.conn()
        t0 = time.perf_counter()
        for body in bodies:
            c.request("POST", "/events?format=nqt", body=body,
                      headers={"Authorization": f"Bearer {svc.token}"})
            r = c.getresponse()
            r.read()
            if r.status not in (200, 202):
                raise RuntimeError(f"POST /events: {r.status}")
        c.close()
        t1 = svc.wait_events(len(lines))
        st = svc.get("/status")
        cpu = cpu_s(svc.pid) - cpu0
        row = {"events": len(lines), "answers": st["answers"], "late": st["late"],
               "seconds": round(t1 - t0, 2), "events_per_s": round(len(lines) / (t1 - t0)),
               "service_cpu_s": round(cpu, 2),
               "cpu_us_per_event": round(cpu / len(lines) * 1e6, 1),
               "service_peak_rss_mb": vm(svc.pid), "load_avg": round(os.getloadavg()[0], 2)}
    finally:
        svc.stop()
    return row


# ---------------------------------------------------------------------------
# MQTT

def _publisher(address: str, topic: str, lines: list[str], rate: float, out: Any) -> None:
    """A process publishing lines one a message (QoS 1), paced at ``rate``
    a second (0: as fast as it can); sends back (start, end) and the
    publish time of every message (perf_counter) when paced."""
    import paho.mqtt.client as mqtt
    from paho.mqtt.enums import CallbackAPIVersion
    host, port = address.split(":")
    c = mqtt.Client(CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv5)
    c.max_inflight_messages_set(0)
    c.max_queued_messages_set(0)
    c.connect(host, int(port))
    c.loop_start()
    times = []
    t0 = time.perf_counter()
    infos: list[Any] = []
    done = 0

    def send(line: str) -> None:
        nonlocal done
        # packet ids are 16 bits: never more than 30,000 unacknowledged
        while len(infos) - done >= 30000:
            infos[done].wait_for_publish(600)
            done += 1
        info = c.publish(topic, line, qos=1)
        if info.rc:
            raise RuntimeError(f"publish: {info.rc}")
        infos.append(info)
    if rate:
        for line in paced(lines, rate, t0, times):
            send(line)
    else:
        for line in lines:
            send(line)
    for i in infos[done:]:
        i.wait_for_publish(600)
    t1 = time.perf_counter()
    c.loop_stop()
    c.disconnect()
    out.send((t0, t1, times))


def start_publisher(address: str, lines: list[str], rate: float = 0,
                    topic: str = "sensors/bench") -> tuple[Any, Any]:
    """A publisher process: ``mosquitto_pub -l`` (C, one message a line,
    QoS 1) when installed, fed from here (paced: each line written at its
    time, which is the time recorded), else paho in a forked process."""
    if MOSQUITTO_PUB and PUBLISHER == "c":
        return _CPublisher(address, topic, lines, rate), None
    a, b = mp.Pipe(duplex=False)
    p = mp.get_context("fork").Process(target=_publisher,
                                       args=(address, topic, lines, rate, b))
    p.start()
    return p, a


class _CPublisher:
    """``mosquitto_pub -l`` with the lines written to its standard input by
    a thread of this process; ``recv()`` gives (start, end, times) as the
    paho publisher sends them (end: mosquitto_pub exited).  Unpaced, the
    lines go in chunks of :data:`C_CHUNK`, a process each, one after the
    other: given 100,000 lines at once, mosquitto_pub 2.0.11 exited at the
    end of its input with a third of them sent."""

    def __init__(self, address: str, topic: str, lines: list[str], rate: float) -> None:
        import threading
        self.address, self.topic = address, topic
        self.proc: Any = None
        self.out: tuple[float, float, list[float]] | None = None
        self.thread = threading.Thread(target=self._feed, args=(lines, rate), daemon=True)
        self.thread.start()

    def _start(self) -> Any:
        host, port = self.address.split(":")
        self.proc = subprocess.Popen([MOSQUITTO_PUB, "-h", host, "-p", port, "-t", self.topic,
                                      "-q", "1", "-l", "-V", "5", "-M", "1000"],
                                     stdin=subprocess.PIPE, stdout=subprocess.DEVNULL)
        return self.proc

    def _feed(self, lines: list[str], rate: float) -> None:
        times: list[float] = []
        t0 = time.perf_counter()
        if rate:
            f = self._start().stdin
            # lines written before mosquitto_pub is up and connected would wait
            # for it in the pipe (0.1-0.2 s here), counted as the first events'
            # latency: the clock starts once it has had the time to connect
            time.sleep(0.5)
            t0 = time.perf_counter()
            for line in paced(lines, rate, t0, times):
                f.write(line.encode())
                f.flush()
            f.close()
            self.proc.wait()
        else:
            for at in range(0, len(lines), C_CHUNK):
                proc = self._start()
                proc.communicate("".join(lines[at:at + C_CHUNK]).encode())
        self.out = (t0, time.perf_counter(), times)

    def join(self) -> None:
        self.thread.join()

    def recv(self) -> tuple[float, float, list[float]]:
        self.thread.join()
        assert self.out is not None
        return self.out


def publish(address: str, lines: list[str], rate: float = 0, topic: str = "sensors/bench"
            ) -> tuple[Any, Any]:
    """(process, pipe) for either publisher: ``pipe.recv()`` then ``process.join()``."""
    p, pipe = start_publisher(address, lines, rate, topic)
    return (p, pipe) if pipe is not None else (p, p)


def mqtt_part(query: str, lines: list[str], work: Path, broker: Mosquitto) -> dict[str, Any]:
    svc = Service(work, [query], broker)
    try:
        cpu0 = cpu_s(svc.pid)
        p, pipe = publish(broker.address, lines)
        # the service's clock: from its first event to its last
        first = None
        while first is None:
            st = svc.get("/status")
            if st["events"] or st["inputs"]:
                first = time.perf_counter()
            else:
                time.sleep(0.02)
        t1 = svc.wait_events(len(lines))
        p0, p1, _ = pipe.recv()
        p.join()
        st = svc.get("/status")
        m = svc.get("/metrics")
        dups = int(re.search(r"epsparql_mqtt_duplicates_total (\d+)", m).group(1))
        row = {"events": len(lines), "answers": st["answers"], "inputs": st["inputs"],
               "late": st["late"], "duplicates": dups,
               "seconds": round(t1 - first, 2), "events_per_s": round(len(lines) / (t1 - first)),
               "publisher_events_per_s": round(len(lines) / (p1 - p0)),
               "service_cpu_s": round(cpu_s(svc.pid) - cpu0, 2),
               "cpu_us_per_event": round((cpu_s(svc.pid) - cpu0) / len(lines) * 1e6, 1),
               "load_avg": round(os.getloadavg()[0], 2),
               "service_peak_rss_mb": vm(svc.pid), "mosquitto_peak_rss_mb": vm(broker.proc.pid)}
    finally:
        svc.stop()
    return row


LATENCY_QUERIES: dict[str, str] = {}


class Subscriber:
    """An MQTT subscriber appending (arrival time, payload) to ``got``:
    ``mosquitto_sub`` (C) when installed, its lines read by a thread of
    this process (a Python MQTT client at 10,000 messages/s would be the
    bottleneck, as the paho publisher was), else paho."""

    def __init__(self, broker: Mosquitto, topic: str, got: list[tuple[float, bytes]]) -> None:
        import threading
        self.proc = self.client = None
        if MOSQUITTO_SUB and PUBLISHER == "c":
            self.proc = subprocess.Popen([MOSQUITTO_SUB, "-h", broker.host, "-p",
                                          str(broker.port), "-t", topic, "-q", "1", "-V", "5"],
                                         stdout=subprocess.PIPE)

            def read() -> None:
                assert self.proc is not None and self.proc.stdout is not None
                f = self.proc.stdout
                while True:
                    line = f.readline()
                    if not line:
                        return
                    got.append((time.perf_counter(), line))
            threading.Thread(target=read, daemon=True).start()
            return
        import paho.mqtt.client as mqtt
        from paho.mqtt.enums import CallbackAPIVersion
        self.client = mqtt.Client(CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv5)
        self.client.on_message = lambda c, u, m: got.append((time.perf_counter(), m.payload))
        self.client.connect(broker.host, broker.port)
        self.client.subscribe(topic, 1)
        self.client.loop_start()

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait()
        if self.client is not None:
            self.client.loop_stop()
            self.client.disconnect()


def latency_part(rate: int, seconds: float, work: Path, broker: Mosquitto) -> dict[str, Any]:
    """Events i at t = i / rate, key i mod 10, price i: each event pairs with
    the one 10 before it (getDURATION() < 15 events' time): one answer an
    event, its end the event's time."""
    n = int(rate * seconds)
    span = 15 / rate
    name = f"lat{rate}"
    LATENCY_QUERIES[name] = (
        "PREFIX : <http://example.org/>\nSELECT ?k ?a ?b WHERE { {?k :v ?a} SEQ {?k :v ?b} "
        f'FILTER(?b > ?a && getDURATION() < "PT{span:.6f}S"^^xsd:duration) }}\n')
    lines = [f'<{EX}k{i % 10}> <{EX}v> "{i}"^^<{XSD_INT}> {i / rate:.6f} .\n' for i in range(n)]
    svc = Service(work, [name], broker, ("--mqtt-out", "answers"))
    got: list[tuple[float, bytes]] = []
    sub = Subscriber(broker, f"answers/{name}", got)
    time.sleep(0.5)
    try:
        cpu0 = cpu_s(svc.pid)
        p, pipe = publish(broker.address, lines, rate)
        p0, p1, times = pipe.recv()
        p.join()
        svc.wait_events(n)
        deadline = time.monotonic() + 30
        while len(got) < n - 10 and time.monotonic() < deadline:
            time.sleep(0.05)
        lat, warm, first = [], [], []
        for t, payload in got:
            end = json.loads(payload)["end"]
            i = round(end * rate)
            if 0 <= i < len(times):
                lat.append((t - times[i]) * 1000)
                (warm if i >= rate else first).append(lat[-1])     # after the first second
        row = {"rate": rate, "events": n, "answers": len(got), "seconds": round(p1 - p0, 2),
               "p50_ms": round(pct(lat, 50), 2), "p99_ms": round(pct(lat, 99), 2),
               "max_ms": round(max(lat), 2) if lat else None,
               "after_1s_p50_ms": round(pct(warm, 50), 2),
               "after_1s_p99_ms": round(pct(warm, 99), 2),
               "first_1s_p99_ms": round(pct(first, 99), 2),
               "service_cpu_s": round(cpu_s(svc.pid) - cpu0, 2),
               "cpu_us_per_event": round((cpu_s(svc.pid) - cpu0) / n * 1e6, 1),
               "service_peak_rss_mb": vm(svc.pid), "load_avg": round(os.getloadavg()[0], 2)}
    finally:
        sub.stop()
        svc.stop()
    return row


def baseline_latency(rate: int, seconds: float, broker: Mosquitto) -> dict[str, Any]:
    """The path without the service: the same publisher, broker and
    subscriber, each line published to the subscriber's topic.  What this
    shows (scheduling on a loaded machine, the publisher's pacing) is in
    the service's figures too."""
    n = int(rate * seconds)
    topic = f"baseline/{rate}"
    got: list[tuple[float, bytes]] = []
    sub = Subscriber(broker, topic, got)
    time.sleep(0.5)
    try:
        p, pipe = publish(broker.address, [f"{i}\n" for i in range(n)], rate, topic)
        _, _, times = pipe.recv()
        p.join()
        deadline = time.monotonic() + 10
        while len(got) < n and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        sub.stop()
    lat = [(t - times[int(line)]) * 1000 for t, line in got]
    return {"rate": rate, "messages": n, "received": len(got), "p50_ms": round(pct(lat, 50), 2),
            "p99_ms": round(pct(lat, 99), 2), "max_ms": round(max(lat), 2) if lat else None,
            "load_avg": round(os.getloadavg()[0], 2)}


def soak(seconds: float, rate: int, work: Path, broker: Mosquitto) -> dict[str, Any]:
    """MQTT at ``rate`` events/s for ``seconds`` into seq and avg; RSS every 10 s."""
    svc = Service(work, ["seq", "avg"], broker, ("--mqtt-out", "answers",
                                                 "--checkpoint-every", "30"))
    chunk = rate * 10
    samples = []
    try:
        t0 = time.perf_counter()
        i = 0
        rss0 = vm(svc.pid, "VmRSS")
        print(f"  soak: {rate:,} events/s for {seconds:.0f} s; service RSS at start "
              f"{rss0} MB", flush=True)
        while time.perf_counter() - t0 < seconds:
            base = i
            # the stream goes on: times continue from the last chunk
            lines = []
            rnd = random.Random(i)
            for j in range(chunk):
                k = base + j
                lines.append(f'<{EX}k{k % 100}> <{EX}v> "{rnd.randrange(1000)}"^^<{XSD_INT}> '
                             f'{k // 100} .\n')
            p, pipe = publish(broker.address, lines, rate)
            pipe.recv()
            p.join()
            i += chunk
            st = svc.get("/status")
            s = {"t": round(time.perf_counter() - t0), "events": st["events"],
                 "answers": st["answers"], "queued": st["queued"],
                 "rss_mb": vm(svc.pid, "VmRSS"), "mosquitto_rss_mb": vm(broker.proc.pid, "VmRSS")}
            samples.append(s)
            print(f"  t={s['t']:>4} s  events {s['events']:>10,}  answers {s['answers']:>10,}  "
                  f"queued {s['queued']:>3}  service RSS {s['rss_mb']:>7.1f} MB  "
                  f"mosquitto {s['mosquitto_rss_mb']:>5.1f} MB", flush=True)
        peak = vm(svc.pid)
    finally:
        svc.stop()
    return {"rate": rate, "seconds": seconds, "samples": samples, "service_peak_rss_mb": peak}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="20,000 events")
    ap.add_argument("-n", type=int, default=None, help="events (default 100,000)")
    ap.add_argument("--parts", default="http,mqtt,latency",
                    help="which parts (comma separated: http, mqtt, latency)")
    ap.add_argument("--soak", type=float, default=0, metavar="SECONDS",
                    help="only the soak, this long")
    ap.add_argument("--soak-rate", type=int, default=5000)
    ap.add_argument("--publisher", choices=("c", "paho"), default="c",
                    help="MQTT publisher and subscriber of the bench: c (mosquitto_pub and "
                         "mosquitto_sub, when installed; default) or paho (Python)")
    args = ap.parse_args()
    global PUBLISHER
    PUBLISHER = args.publisher
    if PUBLISHER == "c" and not (MOSQUITTO_PUB and MOSQUITTO_SUB):
        print("mosquitto_pub/mosquitto_sub not found (Debian: mosquitto-clients): the "
              "Python publisher is used, and may be the limit", flush=True)
        PUBLISHER = "paho"
    n = args.n or (20_000 if args.quick else 100_000)
    info = machine(events=n, publisher=PUBLISHER)
    print(describe(info), flush=True)
    OUT.mkdir(parents=True, exist_ok=True)
    doc: dict[str, Any] = {"machine": info}
    with tempfile.TemporaryDirectory(dir=OUT) as tmp:
        work = Path(tmp)
        broker = Mosquitto(work / "mosquitto")
        try:
            if args.soak:
                doc["soak"] = soak(args.soak, args.soak_rate, work / "soak", broker)
                write_results(doc, results_path("serve_soak", False))
                return
            parts = args.parts.split(",")
            lines = stream_lines(n, with_stream=True)
            if "http" in parts:
                print(f"HTTP, batches of 1,000, {n:,} events (run: its own events/s, start-up "
                      f"excluded)", flush=True)
                doc["http"] = []
                for q in ("seq", "avg"):
                    w = work / f"run-{q}"
                    w.mkdir()
                    r = run_cli(q, lines, w)
                    w = work / f"http-{q}"
                    w.mkdir()
                    s = http_part(q, lines, w)
                    ratio = s["events_per_s"] / r["events_per_s"]
                    doc["http"].append({"query": q, "run": r, "serve": s,
                                        "ratio": round(ratio, 2)})
                    print(f"  {q:<4} run {r['events_per_s']:>8,} ev/s ({r['answers']:,} answers, "
                          f"{r['events_per_s_with_startup']:,} ev/s with start-up, CPU "
                          f"{r['cpu_us_per_event']} us/event past start-up, peak "
                          f"{r['peak_rss_mb']} MB, load {r['load_avg']}) | serve "
                          f"{s['events_per_s']:>8,} ev/s ({s['answers']:,} answers, CPU "
                          f"{s['cpu_us_per_event']} us/event, peak {s['service_peak_rss_mb']} MB, "
                          f"load {s['load_avg']}) = "
                          f"{ratio:.0%} of run{'  target met' if ratio >= 0.8 else ''}",
                          flush=True)
            if "mqtt" in parts:
                print(f"MQTT, one event a message, QoS 1, {n:,} events", flush=True)
                doc["mqtt"] = []
                plain = stream_lines(n, with_stream=False)
                for q in ("avg", "seq"):
                    w = work / f"mqtt-{q}"
                    w.mkdir()
                    s = mqtt_part(q, plain, w, broker)
                    s["query"] = q
                    doc["mqtt"].append(s)
                    print(f"  {q:<4} serve {s['events_per_s']:>8,} ev/s (publisher "
                          f"{s['publisher_events_per_s']:,}/s; {s['inputs']:,} inputs, "
                          f"{s['answers']:,} answers, late {s['late']}, CPU "
                          f"{s['cpu_us_per_event']} us/event, peak "
                          f"{s['service_peak_rss_mb']} MB, mosquitto "
                          f"{s['mosquitto_peak_rss_mb']} MB, load {s['load_avg']})"
                          f"{'  target met' if s['events_per_s'] >= 20000 else ''}", flush=True)
            if "latency" in parts:
                print("Latency, publish -> answer received over MQTT", flush=True)
                doc["latency"] = []
                doc["latency_baseline"] = []
                for rate, secs in ((1000, 10), (10000, 5)):
                    b = baseline_latency(rate, secs, broker)
                    doc["latency_baseline"].append(b)
                    print(f"  {rate:>6,} msg/s without the service (publisher -> broker -> "
                          f"subscriber): p50 {b['p50_ms']} ms, p99 {b['p99_ms']} ms, max "
                          f"{b['max_ms']} ms (load {b['load_avg']})", flush=True)
                    w = work / f"lat-{rate}"
                    w.mkdir()
                    s = latency_part(rate, secs, w, broker)
                    doc["latency"].append(s)
                    print(f"  {rate:>6,} ev/s offered, {s['events']:,} events: p50 "
                          f"{s['p50_ms']} ms, p99 {s['p99_ms']} ms, max {s['max_ms']} ms; "
                          f"after the first second p50 {s['after_1s_p50_ms']} ms, p99 "
                          f"{s['after_1s_p99_ms']} ms, first second p99 "
                          f"{s['first_1s_p99_ms']} ms ({s['answers']:,} answers, CPU "
                          f"{s['cpu_us_per_event']} us/event, load {s['load_avg']})"
                          f"{'  target met' if rate == 1000 and s['p99_ms'] < 50 else ''}",
                          flush=True)
            doc["bench_peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
                                             / 1024, 1)
            write_results(doc, results_path("serve", args.quick))
        finally:
            broker.stop()


if __name__ == "__main__":
    main()
