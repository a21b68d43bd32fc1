"""Who may do what: bearer tokens and their scopes.

A token grants scopes:

- ``push``: send events and advance event time;
- ``read``: read every deployment's answers, list and show deployments;
  ``read:NAME`` only deployment NAME's;
- ``manage``: register, pause, resume and delete deployments, load and
  replace background graphs (and everything ``read`` gives);
- ``metrics``: the Prometheus metrics and the service's counters.

``admin`` is all of them.  The token file has one token per line,
``TOKEN SCOPE [SCOPE ...]`` (``#`` starts a comment), or is a JSON object
of token to a list of scopes.  Tokens are compared in constant time and
kept only as their SHA-256.
"""
from __future__ import annotations

import hashlib
import hmac
import json
import secrets
from pathlib import Path

__all__ = ["Tokens", "SCOPES", "TokenFileError"]

SCOPES = ("push", "read", "manage", "metrics")


class TokenFileError(ValueError):
    """A token file that cannot be read (names the line)."""


def _digest(token: str) -> bytes:
    return hashlib.sha256(token.encode("utf-8")).digest()


def _check_scope(scope: str, where: str) -> list[str]:
    if scope == "admin":
        return list(SCOPES)
    base, _, name = scope.partition(":")
    if base not in SCOPES or (name and base != "read"):
        raise TokenFileError(f"{where}: unknown scope {scope!r} (push, read, read:NAME, "
                             f"manage, metrics, admin)")
    return [scope]


class Tokens:
    """The tokens the service accepts, each with its scopes."""

    def __init__(self) -> None:
        self._scopes: dict[bytes, frozenset[str]] = {}

    def add(self, token: str, scopes: list[str], where: str = "token") -> None:
        if len(token) < 16:
            raise TokenFileError(f"{where}: a token must have at least 16 characters")
        got: list[str] = []
        for s in scopes:
            got += _check_scope(s, where)
        if not got:
            raise TokenFileError(f"{where}: a token needs at least one scope")
        self._scopes[_digest(token)] = frozenset(got)

    @classmethod
    def load(cls, path: str | Path) -> "Tokens":
        p = Path(path)
        text = p.read_text(encoding="utf-8")
        t = cls()
        if text.lstrip().startswith("{"):
            try:
                d = json.loads(text)
            except json.JSONDecodeError as e:
                raise TokenFileError(f"{p}:{e.lineno}:{e.colno}: {e.msg}") from None
            for tok, scopes in d.items():
                if not isinstance(scopes, list):
                    raise TokenFileError(f"{p}: the scopes of a token are a list")
                t.add(tok, scopes, f"{p}")
        else:
            for i, line in enumerate(text.splitlines(), 1):
                line = line.split("#", 1)[0].strip()
                if not line:
                    continue
                tok, *scopes = line.split()
                t.add(tok, scopes, f"{p}:{i}")
        if not t._scopes:
            raise TokenFileError(f"{p}: no tokens")
        return t

    @staticmethod
    def new_token() -> str:
        return secrets.token_urlsafe(24)

    def scopes(self, token: str | None) -> frozenset[str] | None:
        """The scopes of ``token`` (None: not a token of this service)."""
        if not token:
            return None
        d = _digest(token)
        for k, v in self._scopes.items():
            if hmac.compare_digest(k, d):
                return v
        return None


def allows(scopes: frozenset[str], need: str, name: str | None = None) -> bool:
    """Do ``scopes`` grant ``need`` (for deployment ``name`` when reading)?"""
    if need in scopes:
        return True
    if need == "read":
        if "manage" in scopes:
            return True
        if name is not None and f"read:{name}" in scopes:
            return True
    return False


__all__ += ["allows"]
