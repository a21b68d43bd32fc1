"""The OpenAPI 3.1 description of the service's HTTP API (``GET /openapi.json``).

Written by hand next to :mod:`epsparql.service.http_api` (each path here
is a route there; tests/service checks that the two agree)."""
from __future__ import annotations

from typing import Any

__all__ = ["document", "PATHS"]

_ERR = {"description": "refused: a JSON object {\"error\": message}",
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}}


def _op(summary: str, scope: str, ok: dict[str, Any], *, params: list[dict] | None = None,
        body: dict[str, Any] | None = None, errors: tuple[str, ...] = ("400", "401", "403")
        ) -> dict[str, Any]:
    op: dict[str, Any] = {"summary": summary, "description": f"Scope: {scope}.",
                          "responses": dict(ok, **{e: _ERR for e in errors})}
    if scope == "none":
        op["security"] = []
    if params:
        op["parameters"] = params
    if body:
        op["requestBody"] = body
    return op


def _q(name: str, desc: str, schema: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"name": name, "in": "query", "required": False, "description": desc,
            "schema": schema or {"type": "string"}}


_NAME = {"name": "name", "in": "path", "required": True, "schema": {"type": "string",
         "pattern": "^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$"}}
_JSON = {"application/json": {"schema": {"type": "object"}}}
_TEXT = {"text/plain": {"schema": {"type": "string"}}}

PATHS: dict[str, dict[str, Any]] = {
    "/health": {"get": _op("Is the service up?", "none", {"200": {"description": "up"},
                                                            "503": {"description": "failed"}},
                           errors=())},
    "/openapi.json": {"get": _op("This document", "read", {"200": {"description": "OpenAPI"}})},
    "/status": {"get": _op("Counters, deployments and the last minutes' throughput and latency",
                           "read (any)", {"200": {"description": "status", "content": _JSON}})},
    "/metrics": {"get": _op("Prometheus metrics", "metrics",
                            {"200": {"description": "text format 0.0.4"}})},
    "/events": {"post": _op(
        "Push a batch of events", "push",
        {"202": {"description": "durable (with --state) and queued: {accepted, skipped}"},
         "200": {"description": "applied (wait=true): {accepted, skipped}"}},
        params=[_q("format", "nt, nqt, jsonl or csv (default from Content-Type, else nt)"),
                _q("stream", "the stream IRI of rows that name none"),
                _q("on_error", "stop (refuse the batch at a malformed line) or skip"),
                _q("wait", "true: answer once the batch was applied")],
        body={"required": True, "content": {"application/n-triples": {"schema": {
            "type": "string"}}}},
        errors=("400", "401", "403", "413", "429"))},
    "/advance": {"post": _op("Advance event time: no event will end at or before time",
                             "push", {"200": {"description": "advanced"}},
                             body={"required": True, "content": {"application/json": {
                                 "schema": {"type": "object", "properties": {
                                     "time": {"type": "number"}}, "required": ["time"]}}}})},
    "/queries": {
        "get": _op("List deployments", "read", {"200": {"description": "deployments",
                                                        "content": _JSON}}),
        "post": _op("Register a deployment: JSON {name, query | queries, rules?, dialect?, "
                    "window_semantics?, paused?}, or a query's text with ?name=", "manage",
                    {"201": {"description": "registered"}},
                    params=[_q("name", "the name (with a text body)"),
                            _q("dialect", "force a language"),
                            _q("window_semantics", "engine, cql or csrbench")],
                    body={"required": True, "content": dict(_JSON, **_TEXT)},
                    errors=("400", "401", "403", "409", "413"))},
    "/queries/{name}": {
        "get": _op("A deployment: queries, state, counters; ?explain=true adds the explain "
                   "text", "read:NAME", {"200": {"description": "deployment"}},
                   params=[_NAME, _q("explain", "true: include epsparql explain's text")],
                   errors=("401", "403", "404")),
        "delete": _op("Delete a deployment", "manage", {"204": {"description": "deleted"}},
                      params=[_NAME], errors=("401", "403", "404"))},
    "/queries/{name}/pause": {"post": _op("Stop feeding a deployment", "manage",
                                          {"200": {"description": "paused"}}, params=[_NAME],
                                          errors=("401", "403", "404", "409"))},
    "/queries/{name}/resume": {"post": _op("Feed a paused deployment again", "manage",
                                           {"200": {"description": "running"}}, params=[_NAME],
                                           errors=("401", "403", "404", "409"))},
    "/queries/{name}/answers": {"get": _op(
        "Answers after a number, as JSON lines (X-Last-Answer: the last number sent)",
        "read:NAME", {"200": {"description": "application/x-ndjson"}},
        params=[_NAME, _q("after", "answer number", {"type": "integer"}),
                _q("limit", "at most this many", {"type": "integer"})],
        errors=("400", "401", "403", "404"))},
    "/queries/{name}/stream": {"get": _op(
        "Answers as Server-Sent Events (id: the answer's number; Last-Event-ID resumes)",
        "read:NAME", {"200": {"description": "text/event-stream"}},
        params=[_NAME, _q("after", "resume after this answer number", {"type": "integer"})],
        errors=("400", "401", "403", "404"))},
    "/queries/{name}/ws": {"get": _op(
        "Answers over a WebSocket: {\"n\": number, \"answer\": {...}} per message",
        "read:NAME", {"101": {"description": "switching protocols"}}, params=[_NAME],
        errors=())},
    "/view": {"get": _op("The live view (an HTML page; open it as /view?access_token=TOKEN)",
                         "read (any)", {"200": {"description": "text/html"}},
                         errors=("401", "403"))},
    "/view/api/steps/{name}": {"get": _op(
        "A deployment's processing steps as a graph with live counters (the live view's data)",
        "read:NAME", {"200": {"description": "nodes and edges", "content": _JSON}},
        params=[_NAME], errors=("401", "403", "404"))},
    "/graphs": {
        "get": _op("Background graphs loaded", "read", {"200": {"description": "graphs"}}),
        "put": _op("Load or replace a background graph in every engine", "manage",
                   {"200": {"description": "{graph, triples}"}},
                   params=[_q("graph", "the graph IRI (none: the default background)"),
                           _q("format", "an rdflib format (turtle, nt, xml, json-ld)")],
                   body={"required": True, "content": {"text/turtle": {"schema": {
                       "type": "string"}}}}, errors=("400", "401", "403", "413")),
        "delete": _op("Remove a background graph", "manage",
                      {"204": {"description": "removed"}},
                      params=[_q("graph", "the graph IRI")], errors=("401", "403", "404"))},
}


def document() -> dict[str, Any]:
    """The whole OpenAPI document."""
    from .. import __version__
    return {
        "openapi": "3.1.0",
        "info": {"title": "epsparql serve", "version": __version__,
                 "description": "Continuous EP-SPARQL and RDF stream dialect queries as a "
                                "service. See docs/SERVE.md."},
        "components": {
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
            "schemas": {"Error": {"type": "object", "properties": {
                "error": {"type": "string"}}, "required": ["error"]}}},
        "security": [{"bearer": []}],
        "paths": PATHS,
    }
