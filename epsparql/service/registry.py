"""What a user registers with the service: a named deployment of queries.

A :class:`Deployment` is what ``POST /queries`` carries and what the
service's journal and checkpoints record: a name, one query (or several,
run in one engine so that a CONSTRUCT query's output feeds the others),
optional rules of the core's rule language, and the options of its
engine.  It is data only: checked here, compiled by the service's engine
room (:mod:`epsparql.service.engine_room`).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ..algebra.streams import WINDOW_SEMANTICS

__all__ = ["Deployment", "DeploymentError", "NAME_RE", "check_name", "DIALECTS"]

#: names of deployments and of their queries: what a URL path and an MQTT
#: topic level can hold without escaping
NAME_RE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}")

#: the ``dialect`` a deployment may force (None: detected per query)
DIALECTS = ("ep-sparql", "csparql", "cqels", "sparqlstream", "streaming-sparql",
            "luposdate", "rspql")

#: at most this many queries in one deployment
MAX_QUERIES = 64


class DeploymentError(ValueError):
    """A registration request that cannot be a deployment (HTTP 400)."""


def check_name(name: Any, what: str = "name") -> str:
    """``name`` if it is a valid deployment or query name, else DeploymentError."""
    if not isinstance(name, str) or not NAME_RE.fullmatch(name):
        raise DeploymentError(f"{what} must be 1-64 letters, digits, '_', '.' or '-' (not "
                              f"starting with '.' or '-'), got {str(name)[:80]!r}")
    return name


@dataclass
class Deployment:
    """A named set of queries run together in one engine.

    ``queries`` maps each query's name to its text; a deployment of one
    query names the query after itself, so its answers say
    ``"query": name``.  ``rules`` is text of the core's rule language
    (docs/CORE.md): it is Prolog code, accepted only when the service runs
    with ``--allow-rules``.  ``paused``: not fed while true."""

    name: str
    queries: dict[str, str]
    rules: str | None = None
    dialect: str | None = None
    window_semantics: str | None = None
    paused: bool = False
    options: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_request(cls, body: dict[str, Any]) -> "Deployment":
        """A deployment from a registration request's JSON object:
        ``name``, and ``query`` (a text) or ``queries`` (an object of name
        to text), optional ``rules``, ``dialect``, ``window_semantics``,
        ``paused``.  DeploymentError names what is wrong."""
        if not isinstance(body, dict):
            raise DeploymentError("the request must be a JSON object")
        known = {"name", "query", "queries", "rules", "dialect", "window_semantics", "paused"}
        extra = sorted(set(body) - known)
        if extra:
            raise DeploymentError(f"unknown field(s) {', '.join(map(repr, extra))}; "
                                  f"expected {', '.join(sorted(known))}")
        name = check_name(body.get("name"))
        if ("query" in body) == ("queries" in body):
            raise DeploymentError("give either 'query' (one query's text) or 'queries' "
                                  "(an object of query name to text)")
        if "query" in body:
            text = body["query"]
            if not isinstance(text, str) or not text.strip():
                raise DeploymentError("'query' must be the text of a query")
            queries = {name: text}
        else:
            qs = body["queries"]
            if not isinstance(qs, dict) or not qs:
                raise DeploymentError("'queries' must be a non-empty object of name to text")
            if len(qs) > MAX_QUERIES:
                raise DeploymentError(f"at most {MAX_QUERIES} queries in one deployment")
            queries = {}
            for k, v in qs.items():
                check_name(k, "a query name")
                if not isinstance(v, str) or not v.strip():
                    raise DeploymentError(f"query {k!r} must be the text of a query")
                queries[f"{name}/{k}"] = v
        rules = body.get("rules")
        if rules is not None and not isinstance(rules, str):
            raise DeploymentError("'rules' must be text of the core's rule language")
        dialect = body.get("dialect")
        if dialect is not None and dialect not in DIALECTS:
            raise DeploymentError(f"'dialect' must be one of {', '.join(DIALECTS)}, "
                                  f"got {str(dialect)[:40]!r}")
        sem = body.get("window_semantics")
        if sem is not None and sem not in WINDOW_SEMANTICS:
            raise DeploymentError(f"'window_semantics' must be one of "
                                  f"{', '.join(WINDOW_SEMANTICS)}, got {str(sem)[:40]!r}")
        paused = body.get("paused", False)
        if not isinstance(paused, bool):
            raise DeploymentError("'paused' must be true or false")
        return cls(name, queries, rules, dialect, sem, paused)

    def to_json(self) -> dict[str, Any]:
        """As the journal and checkpoints keep it (and ``from_json`` reads)."""
        return {"name": self.name, "queries": self.queries, "rules": self.rules,
                "dialect": self.dialect, "window_semantics": self.window_semantics,
                "paused": self.paused}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> "Deployment":
        return cls(d["name"], dict(d["queries"]), d.get("rules"), d.get("dialect"),
                   d.get("window_semantics"), bool(d.get("paused", False)))
