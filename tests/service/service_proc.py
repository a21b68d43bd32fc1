"""``epsparql serve`` as a real subprocess, and a small HTTP client for it.

The service prints ``epsparql serve: admin token: T`` (without
``--tokens``) and ``epsparql serve: listening on http://HOST:PORT`` on
standard error; :class:`ServiceProcess` waits for them, keeps reading the
rest (so the pipe never fills) and gives requests a base URL and a token.
"""
from __future__ import annotations

import http.client
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


def epsparql_cmd(*args: str) -> list[str]:
    """The command line of ``epsparql ARGS`` with this checkout's code."""
    return [sys.executable, "-m", "epsparql.cli", *args]


def child_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return env


class ServiceProcess:
    """A running ``epsparql serve --port 0 ARGS``."""

    def __init__(self, *args: str, timeout: float = 60.0) -> None:
        self.args = list(args)
        self.lines: list[str] = []
        self.proc = subprocess.Popen(epsparql_cmd("serve", "--port", "0", *args), cwd=ROOT,
                                     env=child_env(), stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                     text=True)
        self._ready = threading.Event()
        self.token: str | None = None
        self.port = 0
        threading.Thread(target=self._read, daemon=True).start()
        if not self._ready.wait(timeout):
            self.kill()
            raise RuntimeError("the service did not start:\n" + "".join(self.lines))
        if not self.port:
            raise RuntimeError("the service stopped:\n" + "".join(self.lines))

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.lines.append(line)
            m = re.search(r"admin token: (\S+)", line)
            if m:
                self.token = m.group(1)
            m = re.search(r"listening on https?://[^:]+:(\d+)", line)
            if m:
                self.port = int(m.group(1))
                self._ready.set()
        self._ready.set()

    @property
    def stderr(self) -> str:
        return "".join(self.lines)

    # -- requests --------------------------------------------------------------------
    def request(self, method: str, path: str, body: bytes | str | None = None, *,
                token: str | None = "", headers: dict[str, str] | None = None,
                timeout: float = 60.0) -> tuple[int, dict[str, str], bytes]:
        """One request; ``token=""``: the admin token, None: no token."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        h = dict(headers or {})
        tok = self.token if token == "" else token
        if tok is not None:
            h["Authorization"] = f"Bearer {tok}"
        if isinstance(body, str):
            body = body.encode("utf-8")
        try:
            conn.request(method, path, body=body, headers=h)
            r = conn.getresponse()
            return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read()
        finally:
            conn.close()

    def json(self, method: str, path: str, body: Any = None, *, token: str | None = "",
             expect: int | tuple[int, ...] = (200, 201, 202, 204)) -> Any:
        data = None if body is None else (body if isinstance(body, (bytes, str))
                                          else json.dumps(body))
        headers = {"Content-Type": "application/json"} if body is not None and \
            not isinstance(body, (bytes, str)) else {}
        status, _, out = self.request(method, path, data, token=token, headers=headers)
        ok = (expect,) if isinstance(expect, int) else expect
        assert status in ok, f"{method} {path}: {status} {out[:500]!r}"
        return json.loads(out) if out else None

    def answers(self, name: str, after: int = 0) -> list[str]:
        """Every answer of a deployment after ``after``, as JSON lines."""
        out: list[str] = []
        while True:
            status, h, body = self.request("GET", f"/queries/{name}/answers?after={after}"
                                                  f"&limit=100000")
            assert status == 200, body
            lines = body.decode("utf-8").splitlines()
            if not lines:
                return out
            out += lines
            after = int(h["x-last-answer"])

    # -- life ------------------------------------------------------------------------
    def terminate(self, timeout: float = 30.0) -> int:
        self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(timeout)

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(30)

    def __enter__(self) -> "ServiceProcess":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.kill()


def wait_for(pred: Any, timeout: float = 30.0, every: float = 0.05) -> Any:
    """Poll ``pred()`` until it is truthy (its value) or fail after ``timeout``."""
    end = time.monotonic() + timeout
    while True:
        v = pred()
        if v:
            return v
        if time.monotonic() > end:
            raise AssertionError(f"timed out waiting for {pred}")
        time.sleep(every)
