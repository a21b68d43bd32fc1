"""``epsparql serve``'s HTTP API, on the real service as a subprocess.

What a client sees: deployments registered, shown, paused, resumed and
deleted; events in as batches of every stream format; answers out as JSON
lines, Server-Sent Events and WebSocket messages, equal to what
``epsparql run`` writes for the same stream; and every refusal (no token,
wrong scope, oversized, malformed or hostile bodies, too many requests)
with its status and a one-line message, the service serving on.
"""
from __future__ import annotations

import contextlib
import http.client
import io
import json
import random
import socket
import threading
from collections import Counter
from pathlib import Path

import pytest

from service_proc import ServiceProcess, wait_for

from epsparql.cli.main import main as epsparql_main

EX = "http://ex.org/"
SEQ_QUERY = (f"PREFIX : <{EX}> SELECT ?c ?p1 ?p2 WHERE {{ {{?c :price ?p1}} SEQ {{?c :price ?p2}} "
             f'FILTER(?p2 > ?p1 && getDURATION() < "PT20S"^^xsd:duration) }}')
CSPARQL_QUERY = (f"REGISTER QUERY avg AS PREFIX : <{EX}> SELECT ?c (AVG(?p) AS ?a) "
                 f"FROM STREAM <{EX}s> [RANGE 10s STEP 5s] WHERE {{ ?c :price ?p }} GROUP BY ?c")
XSD_INT = "http://www.w3.org/2001/XMLSchema#integer"


def stock_lines(n: int, seed: int = 7, companies: int = 8) -> list[str]:
    rnd = random.Random(seed)
    return [f'<{EX}c{rnd.randrange(companies)}> <{EX}price> "{rnd.randrange(100)}"^^<{XSD_INT}> '
            f"{t} ." for t in range(1, n + 1)]


def run_answers(tmp: Path, name: str, query: str, lines: list[str], fmt: str = "nt") -> list[str]:
    """``epsparql run``'s JSON lines for the query (named ``name``) over the stream."""
    q, s, out = tmp / f"{name}.rq", tmp / f"s.{fmt}", tmp / "out.jsonl"
    q.write_text(query)
    s.write_text("\n".join(lines) + "\n")
    with contextlib.redirect_stderr(io.StringIO()):
        assert epsparql_main(["run", str(q), "--stream", str(s), "--output-format", "jsonl",
                              "--out", str(out), "--quiet"]) == 0
    return out.read_text().splitlines()


TOKENS = {
    "push-token-0123456789": ["push"],
    "read-token-0123456789": ["read"],
    "readq-token-012345678": ["read:q"],
    "manage-token-01234567": ["manage"],
    "metrics-token-0123456": ["metrics"],
}


@pytest.fixture(scope="module")
def svc(tmp_path_factory):
    d = tmp_path_factory.mktemp("serve")
    (d / "tokens.json").write_text(json.dumps(dict(TOKENS, **{"admin-token-0123456789": ["admin"]})))
    with ServiceProcess("--tokens", str(d / "tokens.json"), "--max-body", "200000",
                        "--subscriber-buffer", "50") as s:
        s.token = "admin-token-0123456789"
        yield s


def fresh(svc: ServiceProcess, name: str, query: str, **kw) -> None:
    svc.request("DELETE", f"/queries/{name}")
    svc.json("POST", "/queries", dict({"name": name, "query": query}, **kw), expect=201)


def push(svc: ServiceProcess, lines: list[str], *, batch: int = 1000, **params: str) -> None:
    qs = "&".join(f"{k}={v}" for k, v in dict({"wait": "true"}, **params).items())
    for i in range(0, len(lines), batch):
        body = "\n".join(lines[i:i + batch]) + "\n"
        status, _, out = svc.request("POST", f"/events?{qs}", body)
        assert status == 200, out


# -- answers equal epsparql run's -------------------------------------------------------------
def test_answers_over_http_equal_run(svc, tmp_path):
    fresh(svc, "pairs", SEQ_QUERY)
    lines = stock_lines(3000)
    push(svc, lines)
    want = run_answers(tmp_path, "pairs", SEQ_QUERY, lines)
    assert len(want) > 100
    got = svc.answers("pairs")
    assert Counter(got) == Counter(want)
    show = svc.json("GET", "/queries/pairs")
    assert show["events"] == 3000 and show["answers"] == len(want)
    assert show["queries"][0]["dialect"] == "ep-sparql"


def test_windowed_answers_equal_run_after_an_advance(svc, tmp_path):
    fresh(svc, "avg", CSPARQL_QUERY)
    lines = [f"{ln.rsplit(' ', 2)[0]} <{EX}s> {ln.rsplit(' ', 2)[1]} ."
             for ln in stock_lines(400, seed=3)]
    push(svc, lines, batch=97, format="nqt")
    svc.json("POST", "/advance", {"time": 10_000})
    want = run_answers(tmp_path, "avg", CSPARQL_QUERY, lines, "nqt")
    assert len(want) > 50
    got = svc.answers("avg")
    # run's end of stream evaluates every window opened by its last event;
    # the advance closes the same windows here (and no later one holds data)
    assert Counter(got) == Counter(want)


def test_rows_without_a_stream_go_to_the_requests_stream(svc):
    fresh(svc, "avg2", CSPARQL_QUERY.replace("QUERY avg", "QUERY avg2"))
    push(svc, stock_lines(30), stream=f"{EX}s")
    svc.json("POST", "/advance", {"time": 1000})
    assert svc.answers("avg2")
    assert svc.json("GET", "/queries/avg2")["events"] == 30


def test_every_stream_format(svc):
    fresh(svc, "fmt", SEQ_QUERY)
    a, p = f"<{EX}a>", f"<{EX}price>"
    bodies = {
        "nt": f'{a} {p} "1"^^<{XSD_INT}> 1 .\n',
        "nqt": f'{a} {p} "2"^^<{XSD_INT}> <{EX}s> 2 .\n',
        "jsonl": json.dumps({"s": f"<{EX}a>", "p": f"<{EX}price>",
                             "o": f'"3"^^<{XSD_INT}>', "start": 3}) + "\n",
    }
    for fmt, body in bodies.items():
        status, _, out = svc.request("POST", f"/events?format={fmt}&wait=1", body)
        assert status == 200 and json.loads(out)["accepted"] == 1, (fmt, out)
    assert len(svc.answers("fmt")) == 3          # 1<2, 1<3, 2<3


# -- deployments ------------------------------------------------------------------------------
def test_register_show_pause_resume_delete(svc):
    fresh(svc, "life", SEQ_QUERY)
    assert "life" in [d["name"] for d in svc.json("GET", "/queries")]
    shown = svc.json("GET", "/queries/life?explain=true")
    assert "SeqJoin" in shown["explain"] and shown["state"] == "running"
    base = 100_000
    a = [f'<{EX}x> <{EX}price> "{v}"^^<{XSD_INT}> {base + t} .' for t, v in ((0, 1), (1, 2))]
    push(svc, a)
    assert len(svc.answers("life")) == 1
    assert svc.json("POST", "/queries/life/pause")["state"] == "paused"
    push(svc, [f'<{EX}x> <{EX}price> "9"^^<{XSD_INT}> {base + 2} .'])
    assert svc.json("GET", "/queries/life")["events"] == 2        # not fed while paused
    assert svc.json("POST", "/queries/life/resume")["state"] == "running"
    push(svc, [f'<{EX}x> <{EX}price> "5"^^<{XSD_INT}> {base + 3} .'])
    assert len(svc.answers("life")) == 3                          # 1<5, 2<5 (the 9 unseen)
    assert svc.request("DELETE", "/queries/life")[0] == 204
    assert svc.request("GET", "/queries/life")[0] == 404
    assert svc.request("DELETE", "/queries/life")[0] == 404


def test_register_as_text_and_every_dialect(svc):
    status, h, out = svc.request("POST", "/queries?name=txt", SEQ_QUERY,
                                 headers={"Content-Type": "application/sparql-query"})
    assert status == 201 and h["location"] == "/queries/txt", out
    svc.request("DELETE", "/queries/txt")
    queries = {
        "cqels": f"SELECT ?s WHERE {{ STREAM <{EX}s> [RANGE 10s] {{ ?s <{EX}p> ?o }} }}",
        "rspql": (f"REGISTER RSTREAM <{EX}out> AS SELECT ?s FROM NAMED WINDOW <{EX}w> ON "
                  f"<{EX}s> [RANGE PT10S STEP PT5S] WHERE {{ WINDOW <{EX}w> {{ ?s <{EX}p> ?o }} }}"),
    }
    for name, text in queries.items():
        fresh(svc, name, text)
        assert svc.json("GET", f"/queries/{name}")["queries"][0]["dialect"] == name
        svc.request("DELETE", f"/queries/{name}")


def test_a_deployment_of_several_queries_runs_its_construct_rules_together(svc):
    construct = (f"PREFIX : <{EX}> CONSTRUCT {{ ?c :rose ?p2 }} WHERE {{ {{?c :price ?p1}} SEQ "
                 f"{{?c :price ?p2}} FILTER(?p2 > ?p1 && getDURATION() < \"PT5S\"^^xsd:duration) }}")
    reader = f"PREFIX : <{EX}> SELECT ?c ?v WHERE {{ ?c :rose ?v }}"
    svc.request("DELETE", "/queries/chain")
    svc.json("POST", "/queries", {"name": "chain", "queries": {"make": construct, "read": reader}},
             expect=201)
    base = 200_000
    push(svc, [f'<{EX}k> <{EX}price> "{v}"^^<{XSD_INT}> {base + t} .' for t, v in ((0, 1), (1, 4))])
    got = [json.loads(x) for x in svc.answers("chain")]
    assert {a["query"] for a in got} == {"chain/make", "chain/read"}


def test_registration_refusals_name_what_is_wrong(svc):
    fresh(svc, "dup", SEQ_QUERY)
    s, _, out = svc.request("POST", "/queries", json.dumps({"name": "dup", "query": SEQ_QUERY}),
                            headers={"Content-Type": "application/json"})
    assert s == 409 and "exists" in json.loads(out)["error"]
    cases = [
        ({"name": "bad", "query": "SELECT ?x WHERE { ?x }"}, "line 1, column"),
        ({"name": "../etc", "query": SEQ_QUERY}, "name must be"),
        ({"name": "x", "query": SEQ_QUERY, "colour": 1}, "unknown field"),
        ({"name": "x"}, "either 'query'"),
        ({"name": "x", "query": SEQ_QUERY, "dialect": "sql"}, "'dialect' must be"),
        ({"name": "x", "query": SEQ_QUERY, "rules": "a :- b."}, "--allow-rules"),
        ([1, 2], "JSON object"),
    ]
    for body, msg in cases:
        s, _, out = svc.request("POST", "/queries", json.dumps(body),
                                headers={"Content-Type": "application/json"})
        assert s == 400 and msg in json.loads(out)["error"], (body, out)
    s, _, out = svc.request("POST", "/queries", b'{"name": "x", "query": ',
                            headers={"Content-Type": "application/json"})
    assert s == 400 and "not JSON: line 1" in json.loads(out)["error"]


# -- access control ----------------------------------------------------------------------------
@pytest.mark.parametrize("method,path", [
    ("GET", "/queries"), ("POST", "/queries"), ("GET", "/queries/q"), ("DELETE", "/queries/q"),
    ("POST", "/queries/q/pause"), ("GET", "/queries/q/answers"), ("GET", "/queries/q/stream"),
    ("POST", "/events"), ("POST", "/advance"), ("GET", "/metrics"), ("GET", "/status"),
    ("GET", "/openapi.json"), ("PUT", "/graphs"), ("GET", "/graphs"),
])
def test_nothing_but_health_without_a_token(svc, method, path):
    for token in (None, "not-a-token-of-this-service"):
        s, h, out = svc.request(method, path, b"", token=token)
        assert s == 401 and h.get("www-authenticate") == "Bearer", (method, path, out)
        assert "token" in json.loads(out)["error"]
    assert svc.request("GET", "/health", token=None)[0] == 200


def test_scopes(svc):
    fresh(svc, "q", SEQ_QUERY)
    fresh(svc, "other", SEQ_QUERY)
    ev = f'<{EX}a> <{EX}price> "1"^^<{XSD_INT}> 300000 .\n'
    allowed = {
        "push-token-0123456789": {("POST", "/events", ev)},
        "read-token-0123456789": {("GET", "/queries/q/answers", None),
                                  ("GET", "/queries/other/answers", None), ("GET", "/queries", None)},
        "readq-token-012345678": {("GET", "/queries/q/answers", None), ("GET", "/queries", None)},
        "metrics-token-0123456": {("GET", "/metrics", None)},
    }
    requests = {("POST", "/events", ev), ("GET", "/queries/q/answers", None),
                ("GET", "/queries/other/answers", None), ("GET", "/metrics", None),
                ("POST", "/queries/q/pause", None)}
    for token, ok in allowed.items():
        for method, path, body in requests:
            s, _, out = svc.request(method, path, body, token=token)
            if (method, path, body) in ok:
                assert s in (200, 202), (token, path, out)
            else:
                assert s == 403 and "may not" in json.loads(out)["error"], (token, path, out)
    listed = svc.json("GET", "/queries", token="readq-token-012345678")
    assert [d["name"] for d in listed] == ["q"]
    assert svc.json("POST", "/queries/q/pause", token="manage-token-01234567")["state"] == "paused"


# -- bad input, and the service serves on -------------------------------------------------------
def test_oversized_malformed_and_hostile_bodies(svc):
    fresh(svc, "safe", SEQ_QUERY)
    s, _, out = svc.request("POST", "/events", b"x" * 300_000)
    assert s == 413 and "limit" in json.loads(out)["error"]
    before = svc.json("GET", "/queries/safe")["events"]
    body = (f'<{EX}a> <{EX}price> "1"^^<{XSD_INT}> 400000 .\n'
            f'<{EX}a> <{EX}price> oops 400001 .\n')
    s, _, out = svc.request("POST", "/events?wait=1", body)
    err = json.loads(out)["error"]
    assert s == 400 and "<request>:2:" in err and "nothing of this request was taken" in err
    assert svc.json("GET", "/queries/safe")["events"] == before
    s, _, out = svc.request("POST", "/events?wait=1&on_error=skip", body)
    assert s == 200 and json.loads(out) == {"accepted": 1, "skipped": 1,
                                            "errors": [json.loads(out)["errors"][0]]}
    assert svc.json("GET", "/status")["malformed"] >= 1
    # data is data: Prolog in a literal, an IRI or a stream name is never run
    hostile = (f'<{EX}a> <{EX}price> "x\'), halt. :- halt. %"@en 400002 .\n'
               f'<{EX}halt)> <{EX}price> "1"^^<{XSD_INT}> 400003 .\n')
    s, _, out = svc.request(f"POST", "/events?wait=1&stream=http://ex.org/halt').", hostile)
    assert s == 200, out
    s, _, out = svc.request("POST", "/events?format=sql", b"")
    assert s == 400 and "unknown format" in json.loads(out)["error"]
    s, _, out = svc.request("POST", "/events?stream=not%20an%20iri", b"")
    assert s == 400 and "absolute IRI" in json.loads(out)["error"]
    s, _, out = svc.request("POST", "/advance", b'{"time": "soon"}')
    assert s == 400
    assert svc.request("GET", "/health", token=None)[0] == 200
    assert svc.json("GET", "/queries/safe")["state"] == "running"


def test_repeated_inputs_with_a_key_are_taken_once(svc):
    fresh(svc, "keyed", SEQ_QUERY)
    body = f'<{EX}a> <{EX}price> "1"^^<{XSD_INT}> 500000 .\n'
    first = svc.request("POST", "/events?wait=1", body, headers={"Idempotency-Key": "b-1"})
    again = svc.request("POST", "/events?wait=1", body, headers={"Idempotency-Key": "b-1"})
    assert json.loads(first[2])["accepted"] == 1
    assert json.loads(again[2]) == {"accepted": 0, "skipped": 0, "duplicate": True}
    assert svc.json("GET", "/queries/keyed")["events"] == 1


# -- answers live ---------------------------------------------------------------------------------
def _sse_events(sock_file, n: int) -> list[tuple[str, str]]:
    """The first ``n`` SSE events (id, data) read from a response body."""
    out, ident, data = [], None, None
    while len(out) < n:
        line = sock_file.readline().decode("utf-8")
        if not line:
            break
        line = line.rstrip("\r\n")
        if line.startswith("id: "):
            ident = line[4:]
        elif line.startswith("data: "):
            data = line[6:]
        elif line == "" and data is not None:
            out.append((ident, data))
            ident = data = None
    return out


def _open_sse(svc: ServiceProcess, path: str, headers: str = "", rcvbuf: int | None = None):
    s = socket.socket()
    if rcvbuf:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    s.connect(("127.0.0.1", svc.port))
    s.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {svc.token}\r\n"
              f"{headers}\r\n".encode())
    f = s.makefile("rb")
    assert b" 200 " in f.readline()
    while f.readline() not in (b"\r\n", b""):
        pass
    return s, f


def test_server_sent_events_and_resuming(svc):
    fresh(svc, "live", SEQ_QUERY)
    s, f = _open_sse(svc, "/queries/live/stream")
    try:
        base = 600_000
        push(svc, [f'<{EX}z> <{EX}price> "{v}"^^<{XSD_INT}> {base + t} .'
                   for t, v in enumerate((1, 2, 3))])
        got = _sse_events(_Unchunk(f), 3)
    finally:
        s.close()
    assert [i for i, _ in got] == ["1", "2", "3"]
    assert Counter(d for _, d in got) == Counter(svc.answers("live"))
    s, f = _open_sse(svc, "/queries/live/stream", "Last-Event-ID: 1\r\n")
    try:
        again = _sse_events(_Unchunk(f), 2)
    finally:
        s.close()
    assert again == got[1:]


def test_websocket_answers(svc):
    from websockets.sync.client import connect
    fresh(svc, "ws", SEQ_QUERY)
    with connect(f"ws://127.0.0.1:{svc.port}/queries/ws/ws?access_token={svc.token}") as ws:
        base = 700_000
        push(svc, [f'<{EX}w> <{EX}price> "{v}"^^<{XSD_INT}> {base + t} .'
                   for t, v in enumerate((1, 2))])
        msg = json.loads(ws.recv(timeout=30))
    assert msg["n"] == 1 and msg["answer"]["query"] == "ws"
    with pytest.raises(Exception):
        with connect(f"ws://127.0.0.1:{svc.port}/queries/ws/ws") as ws:
            ws.recv(timeout=30)


def test_a_slow_subscriber_is_dropped_and_the_engine_goes_on(svc):
    fresh(svc, "flood", SEQ_QUERY)
    s, f = _open_sse(svc, "/queries/flood/stream", rcvbuf=4096)   # and never read
    try:
        before = svc.json("GET", "/status")["subscribers_dropped"]
        base = 800_000
        lines = [f'<{EX}f> <{EX}price> "{t}"^^<{XSD_INT}> {base + t} .' for t in range(400)]
        push(svc, lines)                    # every pair within 20 s: thousands of answers
        wait_for(lambda: svc.json("GET", "/status")["subscribers_dropped"] > before)
        assert svc.json("GET", "/queries/flood")["answers"] > 1000
    finally:
        s.close()


class _Unchunk:
    """Lines of a chunked HTTP body read from a socket file."""

    def __init__(self, f) -> None:
        self.f = f
        self.buf = b""

    def _chunk(self) -> bool:
        size = self.f.readline()
        if not size:
            return False
        n = int(size.strip() or b"0", 16)
        if n == 0:
            return False
        self.buf += self.f.read(n)
        self.f.readline()
        return True

    def readline(self) -> bytes:
        while b"\n" not in self.buf:
            if not self._chunk():
                out, self.buf = self.buf, b""
                return out
        i = self.buf.index(b"\n") + 1
        out, self.buf = self.buf[:i], self.buf[i:]
        return out


# -- background graphs, metrics, OpenAPI ------------------------------------------------------------
def test_background_graphs_are_loaded_and_replaced(svc):
    typed = (f"PREFIX : <{EX}> SELECT ?c WHERE {{ GRAPH <urn:epsparql:background> "
             f"{{ ?c a :Watched }} ?c :price ?p }}")
    fresh(svc, "bg", typed)
    s, _, out = svc.request("PUT", "/graphs?format=turtle",
                            f"@prefix : <{EX}> . :g1 a :Watched .",
                            headers={"Content-Type": "text/turtle"})
    assert s == 200 and json.loads(out)["triples"] == 1
    base = 900_000
    push(svc, [f'<{EX}g1> <{EX}price> "1"^^<{XSD_INT}> {base} .',
               f'<{EX}g2> <{EX}price> "1"^^<{XSD_INT}> {base + 1} .'])
    assert [json.loads(a)["bindings"]["c"]["value"] for a in svc.answers("bg")] == [f"{EX}g1"]
    svc.request("PUT", "/graphs", f"@prefix : <{EX}> . :g2 a :Watched .")
    push(svc, [f'<{EX}g1> <{EX}price> "1"^^<{XSD_INT}> {base + 2} .',
               f'<{EX}g2> <{EX}price> "1"^^<{XSD_INT}> {base + 3} .'])
    got = [json.loads(a)["bindings"]["c"]["value"] for a in svc.answers("bg")]
    assert got == [f"{EX}g1", f"{EX}g2"]
    s, _, out = svc.request("PUT", "/graphs", "this is not turtle")
    assert s == 400 and "cannot read the graph" in json.loads(out)["error"]
    svc.request("PUT", "/graphs", "")               # leave the default background empty


def test_metrics_and_openapi(svc):
    fresh(svc, "counted", SEQ_QUERY)
    status, h, out = svc.request("GET", "/metrics")
    text = out.decode()
    assert status == 200 and h["content-type"].startswith("text/plain")
    assert "# TYPE epsparql_events_total counter" in text
    assert 'epsparql_deployment_answers_total{deployment="counted"} 0' in text
    for line in text.splitlines():
        if line and not line.startswith("#"):
            name, value = line.rsplit(" ", 1)
            float(value)
    doc = svc.json("GET", "/openapi.json")
    assert doc["openapi"].startswith("3.")
    from epsparql.service.engine_room import EngineRoom, RoomConfig
    from epsparql.service.http_api import ServiceApp
    from epsparql.service.openapi import PATHS
    from epsparql.service.tokens import Tokens
    from epsparql.service.live_view import live_routes
    app = ServiceApp(EngineRoom(RoomConfig()), Tokens(), extra_routes=live_routes()).app
    routes = {(r.path, m.lower()) for r in app.routes for m in (getattr(r, "methods", None)
                                                                   or {"GET"}) if m != "HEAD"}
    documented = {(p, m) for p, ops in PATHS.items() for m in ops}
    assert routes == documented
    assert doc["paths"].keys() == PATHS.keys()


def test_too_many_requests(tmp_path):
    with ServiceProcess("--rate", "2", "--burst", "3") as s:
        got = [s.request("GET", "/status")[0] for _ in range(8)]
        assert got[:3] == [200, 200, 200] and 429 in got
        status, h, out = s.request("GET", "/status")
        assert status == 429 and h["retry-after"] == "1" and "too many" in json.loads(out)["error"]
        assert s.request("GET", "/health", token=None)[0] == 200


def test_sigterm_stops_gracefully(tmp_path):
    s = ServiceProcess("--state", str(tmp_path / "st"))
    try:
        s.json("POST", "/queries", {"name": "g", "query": SEQ_QUERY}, expect=201)
        push(s, stock_lines(50))
        assert s.terminate() == 0
        assert "stopped (50 events" in s.stderr
        cp = json.loads((tmp_path / "st" / "checkpoint.json").read_text())
        assert [d["spec"]["name"] for d in cp["deployments"]] == ["g"]
    finally:
        s.kill()
    assert threading.active_count() >= 1


def test_late_events_are_counted_and_shown(svc):
    fresh(svc, "late", SEQ_QUERY)
    base = 1_000_000
    push(svc, [f'<{EX}l> <{EX}price> "1"^^<{XSD_INT}> {base + 10} .'])
    before = svc.json("GET", "/status")["late"]
    push(svc, [f'<{EX}l> <{EX}price> "5"^^<{XSD_INT}> {base + 5} .'])      # behind the clock
    assert svc.json("GET", "/status")["late"] == before + 1
    assert svc.json("GET", "/queries/late")["late"] == 1
    assert "epsparql_late_events_total" in svc.request("GET", "/metrics")[2].decode()


def test_a_query_is_data_never_prolog(svc):
    hostile = (f"SELECT ?x WHERE {{ ?x <{EX}p> \"a'), halt, ('\" . "
               f"?x <{EX}q> <{EX}halt)),(halt> }}")
    fresh(svc, "hostile", hostile)
    push(svc, [f'<{EX}h> <{EX}p> "a\'), halt, (\'" 1 .',
               f'<{EX}h> <{EX}q> <{EX}halt)),(halt> 1 .'])
    assert len(svc.answers("hostile")) == 1
    assert svc.request("GET", "/health", token=None)[0] == 200


def test_https_with_a_certificate(tmp_path):
    import ssl
    import subprocess
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout",
                    str(key), "-out", str(cert), "-days", "1", "-subj", "/CN=127.0.0.1",
                    "-addext", "subjectAltName=IP:127.0.0.1"], check=True, capture_output=True)
    with ServiceProcess("--tls-cert", str(cert), "--tls-key", str(key)) as s:
        assert "listening on https://" in s.stderr
        ctx = ssl.create_default_context(cafile=str(cert))
        conn = http.client.HTTPSConnection("127.0.0.1", s.port, context=ctx, timeout=30)
        conn.request("GET", "/status", headers={"Authorization": f"Bearer {s.token}"})
        r = conn.getresponse()
        assert r.status == 200 and "events" in json.loads(r.read())
        conn.close()
        plain = http.client.HTTPConnection("127.0.0.1", s.port, timeout=30)
        with pytest.raises((http.client.HTTPException, OSError)):
            plain.request("GET", "/health")
            plain.getresponse().read()
