"""The service's HTTP API (Starlette; served by uvicorn, see cli/serve.py).

Every endpoint but ``GET /health`` needs a bearer token with the right
scope (:mod:`epsparql.service.tokens`): ``Authorization: Bearer TOKEN``,
or ``?access_token=TOKEN`` on the GET endpoints a browser opens directly
(the live view, Server-Sent Events).  Bodies are bounded
(``max_body``, 413), requests per token are rate limited (429), and what
the engines cannot take is refused with a status and a one-line message
in a JSON object ``{"error": ...}``.  The endpoints are listed, with
their parameters, in the OpenAPI document the service serves
(:mod:`epsparql.service.openapi`, ``GET /openapi.json``) and in
docs/SERVE.md.
"""
from __future__ import annotations

import asyncio
import json
import time
from contextlib import asynccontextmanager
from concurrent.futures import Future
from typing import Any, AsyncIterator, Callable

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response, StreamingResponse
from starlette.routing import Route, WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect

from ..io.stream_lines import StreamFormatError
from ..io.streams import FORMATS
from ..rdf.ntriples import absolute_iri_problem
from ..language.errors import QueryError
from .engine_room import EngineRoom, Ingest, ServiceError, parse_input
from .hub import CLOSING, DROPPED, Hub
from .registry import Deployment, DeploymentError, check_name
from .tokens import Tokens, allows

__all__ = ["ServiceApp", "Limits"]


class Limits:
    """Bounds on what one request may ask."""

    def __init__(self, max_body: int = 16 << 20, rate: float = 1000.0, burst: int = 2000,
                 subscriber_buffer: int = 10000, max_query: int = 1 << 20) -> None:
        self.max_body = max_body
        self.rate = rate
        self.burst = burst
        self.subscriber_buffer = subscriber_buffer
        self.max_query = max_query


class _Refused(Exception):
    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = headers or {}


def _error(status: int, message: str, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status, headers=headers)


class _Bucket:
    """A token bucket: ``rate`` requests a second, ``burst`` at once."""

    __slots__ = ("tokens", "at")

    def __init__(self, burst: int) -> None:
        self.tokens = float(burst)
        self.at = time.monotonic()


class ServiceApp:
    """The ASGI application over an engine room (``.app``)."""

    def __init__(self, room: EngineRoom, tokens: Tokens, limits: Limits | None = None,
                 extra_routes: list[Any] | None = None,
                 on_startup: Callable[[asyncio.AbstractEventLoop], None] | None = None) -> None:
        self.room = room
        self.tokens = tokens
        self.limits = limits or Limits()
        self.hub = Hub()
        self._buckets: dict[frozenset[str] | str, _Bucket] = {}
        self.refused = 0                  # requests refused (auth, limits, bad input)
        #: the live view's steps replies, shared between viewers for a moment
        self.shared_replies: dict[str, tuple[float, Any, dict[str, Any]]] = {}
        self._on_startup = on_startup
        routes = [
            Route("/health", self.health),
            Route("/openapi.json", self.openapi),
            Route("/status", self.status),
            Route("/metrics", self.metrics),
            Route("/events", self.events, methods=["POST"]),
            Route("/advance", self.advance, methods=["POST"]),
            Route("/queries", self.list_queries, methods=["GET"]),
            Route("/queries", self.register, methods=["POST"]),
            Route("/queries/{name}", self.show, methods=["GET"]),
            Route("/queries/{name}", self.delete, methods=["DELETE"]),
            Route("/queries/{name}/pause", self.pause, methods=["POST"]),
            Route("/queries/{name}/resume", self.resume, methods=["POST"]),
            Route("/queries/{name}/answers", self.answers, methods=["GET"]),
            Route("/queries/{name}/stream", self.sse, methods=["GET"]),
            WebSocketRoute("/queries/{name}/ws", self.websocket),
            Route("/graphs", self.list_graphs, methods=["GET"]),
            Route("/graphs", self.put_graph, methods=["PUT"]),
            Route("/graphs", self.delete_graph, methods=["DELETE"]),
        ] + list(extra_routes or [])
        self.app = Starlette(routes=routes, lifespan=self._lifespan)
        self.app.state.service = self     # the live view's routes find the service here
        self.app.add_exception_handler(_Refused, self._refused)
        self.app.add_exception_handler(Exception, self._internal)

    async def _lifespan(self, app: Any) -> AsyncIterator[None]:
        loop = asyncio.get_running_loop()
        self.room.add_listener(self.hub.listener(loop))
        if self._on_startup is not None:
            self._on_startup(loop)
        yield

    _lifespan = asynccontextmanager(_lifespan)  # type: ignore[assignment]

    async def _refused(self, request: Request, exc: Exception) -> Response:
        assert isinstance(exc, _Refused)
        self.refused += 1
        return _error(exc.status, exc.message, exc.headers)

    async def _internal(self, request: Request, exc: Exception) -> Response:
        """A bug: the request fails with a one-line message; the service goes on."""
        import logging
        import traceback
        logging.getLogger("epsparql.serve").error(
            "%s %s failed:\n%s", request.method, request.url.path,
            "".join(traceback.format_exception(exc)))
        from ..messages import one_line
        return _error(500, f"internal error: {type(exc).__name__}: {one_line(exc)}")

    # -- access --------------------------------------------------------------
    def _token(self, request: Any) -> str | None:
        auth = request.headers.get("authorization", "")
        if auth[:7].lower() == "bearer ":
            return auth[7:].strip()
        if request.scope.get("type") == "websocket" or request.method == "GET":
            return request.query_params.get("access_token")
        return None

    def _known(self, request: Any) -> tuple[str, frozenset[str]]:
        """The request's token and its scopes; 401 without a valid one."""
        token = self._token(request)
        scopes = self.tokens.scopes(token)
        if scopes is None:
            raise _Refused(401, "a valid token is needed (Authorization: Bearer TOKEN)"
                           if token else "no token: send Authorization: Bearer TOKEN",
                           {"WWW-Authenticate": "Bearer"})
        return token or "", scopes

    def _allow(self, request: Any, need: str, name: str | None = None) -> frozenset[str]:
        token, scopes = self._known(request)
        if not allows(scopes, need, name):
            what = f"{need} {name!r}" if name and need == "read" else need
            raise _Refused(403, f"this token may not {what} (its scopes: "
                           f"{', '.join(sorted(scopes))})")
        self._rate(token)
        return scopes

    def _rate(self, key: str) -> None:
        lim = self.limits
        b = self._buckets.get(key)
        if b is None:
            b = self._buckets[key] = _Bucket(lim.burst)
        now = time.monotonic()
        b.tokens = min(lim.burst, b.tokens + (now - b.at) * lim.rate)
        b.at = now
        if b.tokens < 1:
            raise _Refused(429, f"too many requests: at most {lim.rate:g} a second "
                           f"(bursts of {lim.burst})", {"Retry-After": "1"})
        b.tokens -= 1

    async def _body(self, request: Request) -> bytes:
        """The request's body, refused (413) past the limit before it is all read."""
        cl = request.headers.get("content-length")
        if cl is not None and cl.isdigit() and int(cl) > self.limits.max_body:
            raise _Refused(413, f"the body has {int(cl):,} bytes, more than the limit of "
                           f"{self.limits.max_body:,} (send smaller batches)")
        chunks, n = [], 0
        async for chunk in request.stream():
            n += len(chunk)
            if n > self.limits.max_body:
                raise _Refused(413, f"the body is more than the limit of "
                               f"{self.limits.max_body:,} bytes (send smaller batches)")
            chunks.append(chunk)
        return b"".join(chunks)

    async def _json(self, request: Request) -> Any:
        body = await self._body(request)
        try:
            return json.loads(body)
        except (json.JSONDecodeError, UnicodeDecodeError) as e:
            msg = f"line {e.lineno} column {e.colno}: {e.msg}" \
                if isinstance(e, json.JSONDecodeError) else str(e)
            raise _Refused(400, f"the body is not JSON: {msg}") from None

    async def _in_room(self, fut: Future) -> Any:
        """Await a result of the engine room; its refusals become statuses."""
        try:
            return await asyncio.wrap_future(fut)
        except ServiceError as e:
            raise _Refused(e.status, str(e)) from None
        except QueryError as e:
            raise _Refused(400, _query_error(e)) from None
        except DeploymentError as e:
            raise _Refused(400, str(e)) from None

    async def _call(self, fn: Callable[..., Any], *args: Any) -> Any:
        return await self._in_room(self.room.call(fn, *args))

    # -- the endpoints ---------------------------------------------------------------
    async def health(self, request: Request) -> Response:
        ok = self.room.fatal is None
        return JSONResponse({"status": "ok" if ok else "failed"}, status_code=200 if ok else 503)

    async def openapi(self, request: Request) -> Response:
        self._allow(request, "read")
        from .openapi import document
        return JSONResponse(document())

    async def status(self, request: Request) -> Response:
        scopes = self._scopes_any(request)
        r = self.room
        deps = [r.summary(d) for d in list(r.deployments.values())
                if allows(scopes, "read", d.spec.name)]
        for d in deps:
            d["subscribers"] = self.hub.count(d["name"])
        series = [[s[0], s[1], s[2], _percentile(s[3], 50), _percentile(s[3], 99)]
                  for s in list(r.series)]
        return JSONResponse({"events": r.events, "inputs": r.inputs, "late": r.late,
                             "malformed": r.malformed, "answers": r.answers,
                             "queued": r.queued, "uptime": time.time() - r.started,
                             "subscribers_dropped": self.hub.dropped, "refused": self.refused,
                             "deployments": deps,
                             "series": {"fields": ["second", "events", "answers",
                                                   "latency_p50", "latency_p99"],
                                        "rows": series}})

    async def metrics(self, request: Request) -> Response:
        self._allow(request, "metrics")
        from .metrics import prometheus_text
        return PlainTextResponse(prometheus_text(self.room, self.hub, self.refused),
                                 media_type="text/plain; version=0.0.4")

    async def events(self, request: Request) -> Response:
        """``POST /events?format=nt&stream=IRI&on_error=stop&wait=false``: a
        batch of events in a stream format."""
        self._allow(request, "push")
        p = request.query_params
        fmt = p.get("format") or _format_of(request.headers.get("content-type", ""))
        if fmt not in FORMATS:
            raise _Refused(400, f"unknown format {fmt!r}: one of {', '.join(FORMATS)} "
                           f"(?format= or the Content-Type)")
        on_error = p.get("on_error", "stop")
        if on_error not in ("stop", "skip"):
            raise _Refused(400, "on_error must be 'stop' or 'skip'")
        stream = p.get("stream")
        if stream is not None:
            problem = absolute_iri_problem(stream)
            if problem is not None:
                raise _Refused(400, f"stream must be an absolute IRI: {problem}")
        wait = p.get("wait", "false").lower() in ("1", "true", "yes")
        key = request.headers.get("idempotency-key") or p.get("key")
        if key is not None and not 0 < len(key) <= 200:
            raise _Refused(400, "an idempotency key has 1 to 200 characters")
        body = await self._body(request)
        ingest = Ingest(body, fmt, stream, on_error, "http", key)

        def take() -> Future:             # one hop to a worker thread: read, then queue
            return self.room.submit("events", parse_input(ingest), wait=wait)
        try:
            fut = await asyncio.get_running_loop().run_in_executor(None, take)
        except StreamFormatError as e:
            raise _Refused(400, f"{e} (nothing of this request was taken; "
                           f"on_error=skip takes the other lines)") from None
        except ServiceError as e:
            raise _Refused(e.status, str(e)) from None
        got = await self._in_room(fut)
        return JSONResponse(got, status_code=200 if wait else 202)

    async def advance(self, request: Request) -> Response:
        """``POST /advance`` ``{"time": T}``: no event will end at or before T."""
        self._allow(request, "push")
        body = await self._json(request)
        t = body.get("time") if isinstance(body, dict) else None
        if isinstance(t, bool) or not isinstance(t, (int, float)):
            raise _Refused(400, 'the body must be {"time": SECONDS}')
        return JSONResponse(await self._in_room(self.room.submit("advance", t)))

    async def list_queries(self, request: Request) -> Response:
        scopes = self._scopes_any(request)
        r = self.room
        return JSONResponse([r.summary(d) for d in list(r.deployments.values())
                             if allows(scopes, "read", d.spec.name)])

    def _scopes_any(self, request: Request) -> frozenset[str]:
        """A token that may read something (filtered by name after)."""
        token, scopes = self._known(request)
        if not ({"read", "manage"} & scopes or any(s.startswith("read:") for s in scopes)):
            raise _Refused(403, "this token may not read queries")
        self._rate(token)
        return scopes

    async def register(self, request: Request) -> Response:
        """``POST /queries``: a JSON deployment, or a query's text with ``?name=``."""
        self._allow(request, "manage")
        ctype = request.headers.get("content-type", "")
        if "json" in ctype:
            body = await self._json(request)
        else:
            raw = await self._body(request)
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError:
                raise _Refused(400, "the query text is not UTF-8") from None
            body = {"name": request.query_params.get("name"), "query": text}
            for k in ("dialect", "window_semantics"):
                if k in request.query_params:
                    body[k] = request.query_params[k]
        try:
            spec = Deployment.from_request(body)
        except DeploymentError as e:
            raise _Refused(400, str(e)) from None
        if sum(len(t) for t in spec.queries.values()) > self.limits.max_query:
            raise _Refused(413, f"the query text is longer than {self.limits.max_query:,} bytes")
        d = await self._call(self.room.register, spec)
        return JSONResponse(self.room.summary(d), status_code=201,
                            headers={"Location": f"/queries/{spec.name}"})

    def _name(self, request: Request) -> str:
        name = request.path_params["name"]
        try:
            return check_name(name)
        except DeploymentError as e:
            raise _Refused(404, str(e)) from None

    async def show(self, request: Request) -> Response:
        name = self._name(request)
        self._allow(request, "read", name)
        out = await self._call(self.room.describe, name)
        if request.query_params.get("explain", "").lower() in ("1", "true", "yes"):
            out["explain"] = await self._call(_explain, self.room, name)
        out["subscribers"] = self.hub.count(name)
        return JSONResponse(out)

    async def delete(self, request: Request) -> Response:
        name = self._name(request)
        self._allow(request, "manage")
        await self._call(self.room.delete, name)
        return Response(status_code=204)

    async def pause(self, request: Request) -> Response:
        return await self._pause(request, True)

    async def resume(self, request: Request) -> Response:
        return await self._pause(request, False)

    async def _pause(self, request: Request, paused: bool) -> Response:
        name = self._name(request)
        self._allow(request, "manage")
        d = await self._call(self.room.set_paused, name, paused)
        return JSONResponse(self.room.summary(d))

    async def answers(self, request: Request) -> Response:
        """``GET /queries/NAME/answers?after=N&limit=M``: JSON lines, each
        answer as ``epsparql run`` writes it; ``X-Last-Answer`` is the
        number of the last one sent."""
        name = self._name(request)
        self._allow(request, "read", name)
        after, limit = _int(request, "after", 0), _int(request, "limit", 1000)
        got = await self._call(self.room.recent, name, after, min(limit, 100000))
        last = got[-1][0] if got else after
        headers = {"X-Last-Answer": str(last)}
        if got and got[0][0] > after + 1:
            # no longer kept (no answer file; --keep-answers bounds memory)
            headers["X-Answers-Gone"] = str(got[0][0] - after - 1)
        return Response("".join(line for _, line in got), media_type="application/x-ndjson",
                        headers=headers)

    async def sse(self, request: Request) -> Response:
        """``GET /queries/NAME/stream``: Server-Sent Events, one answer each,
        ``id`` its number; ``Last-Event-ID`` (or ``?after=N``) resumes."""
        name = self._name(request)
        self._allow(request, "read", name)
        after = request.headers.get("last-event-id") or request.query_params.get("after")
        sub, backlog = await self._subscribe(name, after)

        async def events() -> AsyncIterator[bytes]:
            try:
                yield b": subscribed\n\n"
                for n, line in backlog:
                    yield f"id: {n}\ndata: {line.rstrip()}\n\n".encode("utf-8")
                while True:
                    try:
                        n, line = await asyncio.wait_for(sub.queue.get(), 15.0)
                    except asyncio.TimeoutError:
                        yield b": ping\n\n"
                        continue
                    if (n, line) == CLOSING:
                        yield b"event: closing\ndata: {}\n\n"
                        return
                    if (n, line) == DROPPED:
                        yield (b"event: dropped\ndata: {\"error\": \"this subscriber fell "
                               b"too far behind and was dropped; reconnect with "
                               b"Last-Event-ID to resume\"}\n\n")
                        return
                    yield f"id: {n}\ndata: {line.rstrip()}\n\n".encode("utf-8")
            finally:
                self.hub.unsubscribe(sub)

        return StreamingResponse(events(), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"})

    async def _subscribe(self, name: str, after: Any) -> tuple[Any, list[tuple[int, str]]]:
        """Subscribe, and the answers after ``after`` given before that."""
        d = self.room.deployments.get(name)
        if d is None:
            raise _Refused(404, f"no deployment named {name!r}")
        if self.hub.closing:
            raise _Refused(503, "the service shuts down")
        sub = self.hub.subscribe(name, self.limits.subscriber_buffer)
        backlog: list[tuple[int, str]] = []
        if after is not None:
            try:
                a = int(after)
            except ValueError:
                self.hub.unsubscribe(sub)
                raise _Refused(400, "Last-Event-ID / after must be an answer number") from None
            backlog = await self._call(self.room.recent, name, a, self.limits.subscriber_buffer)
            if backlog:
                sub.last = max(sub.last, backlog[-1][0])
        else:
            sub.last = d.answers          # only what comes from now on
        return sub, backlog

    async def websocket(self, ws: WebSocket) -> None:
        """``/queries/NAME/ws``: each answer a text message ``{"n": N,
        "answer": {...}}``; ``?after=N`` resumes."""
        name = ws.path_params["name"]
        try:
            check_name(name)
            self._allow(ws, "read", name)
        except (_Refused, DeploymentError) as e:
            await ws.close(code=1008, reason=str(e)[:120])
            return
        await ws.accept()
        try:
            sub, backlog = await self._subscribe(name, ws.query_params.get("after"))
        except _Refused as e:
            await ws.close(code=1008, reason=e.message[:120])
            return
        try:
            for n, line in backlog:
                await ws.send_text('{"n": %d, "answer": %s}' % (n, line.rstrip()))
            while True:
                n, line = await sub.queue.get()
                if (n, line) == CLOSING:
                    await ws.close(code=1001, reason="the service shuts down")
                    return
                if (n, line) == DROPPED:
                    await ws.close(code=1013, reason="too far behind: dropped")
                    return
                await ws.send_text('{"n": %d, "answer": %s}' % (n, line.rstrip()))
        except (WebSocketDisconnect, RuntimeError):
            pass
        finally:
            self.hub.unsubscribe(sub)

    async def list_graphs(self, request: Request) -> Response:
        self._scopes_any(request)
        return JSONResponse([{"graph": k or None, "format": v[1]}
                             for k, v in list(self.room.graphs.items())])

    async def put_graph(self, request: Request) -> Response:
        """``PUT /graphs?graph=IRI&format=turtle``: load or replace a
        background graph (no ``graph``: the default background)."""
        self._allow(request, "manage")
        iri = request.query_params.get("graph", "")
        if iri:
            problem = absolute_iri_problem(iri)
            if problem is not None:
                raise _Refused(400, f"graph must be an absolute IRI: {problem}")
        fmt = request.query_params.get("format") or _rdf_format(
            request.headers.get("content-type", ""))
        body = await self._body(request)
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError:
            raise _Refused(400, "the graph is not UTF-8") from None
        try:
            n = await self._call(self.room.put_graph, iri, text, fmt)
        except _Refused:
            raise
        except Exception as e:           # rdflib's parsers raise many kinds
            from ..messages import flat
            raise _Refused(400, f"cannot read the graph as {fmt}: {flat(e)}") from None
        return JSONResponse({"graph": iri or None, "triples": n})

    async def delete_graph(self, request: Request) -> Response:
        self._allow(request, "manage")
        await self._call(self.room.delete_graph, request.query_params.get("graph", ""))
        return Response(status_code=204)


def _explain(room: EngineRoom, name: str) -> str:
    from ..explain.report import explain_text
    d = room.deployments[name]
    return explain_text(d.engine, d.queries)


def _query_error(e: QueryError) -> str:
    """The error as the command line says it (its position and the line
    with a caret are in the text)."""
    return str(e)


def _int(request: Request, key: str, default: int) -> int:
    v = request.query_params.get(key)
    if v is None:
        return default
    try:
        n = int(v)
    except ValueError:
        raise _Refused(400, f"{key} must be a whole number, got {v[:40]!r}") from None
    if n < 0:
        raise _Refused(400, f"{key} must be >= 0")
    return n


def _format_of(ctype: str) -> str:
    c = ctype.split(";")[0].strip().lower()
    return {"application/n-triples": "nt", "text/plain": "nt", "application/n-quads": "nqt",
            "application/x-ndjson": "jsonl", "application/jsonl": "jsonl",
            "text/csv": "csv", "": "nt",
            # curl --data-binary's default: the body is not a form
            "application/x-www-form-urlencoded": "nt"}.get(c, c.rsplit("/", 1)[-1])


def _rdf_format(ctype: str) -> str:
    c = ctype.split(";")[0].strip().lower()
    return {"application/n-triples": "nt", "text/turtle": "turtle",
            "application/rdf+xml": "xml", "application/ld+json": "json-ld",
            "application/n-quads": "nquads"}.get(c, "turtle")


def _percentile(xs: list[float], p: int) -> float | None:
    if not xs:
        return None
    s = sorted(xs)
    return s[min(len(s) - 1, int(len(s) * p / 100))]
