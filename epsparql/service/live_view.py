"""The live view: a web page served by the service (``GET /view``).

The page (``static/view.html`` with its script and style, plain JS and
SVG/canvas, no build step and no library) is opened as
``/view?access_token=TOKEN``; it keeps the token in memory (and takes it
out of the address bar), sends it as ``Authorization: Bearer`` on its
fetches and as ``?access_token=`` on its EventSource.  Once a second it
reads ``/status`` (the deployments, the service's counters and the
per-second series) and ``/view/api/steps/NAME`` (the selected
deployment's processing steps with their counters,
:mod:`epsparql.service.steps`); answers arrive live from
``/queries/NAME/stream`` (Server-Sent Events).

Every route needs a token: ``/view`` one that may read some deployment
(as ``/status``), ``/view/api/steps/NAME`` one that may read ``NAME``.
The page is sent with a Content-Security-Policy that lets only its own
script (by nonce) run and its fetches go only to this origin, and with
``Referrer-Policy: no-referrer`` (its address held the token).
"""
from __future__ import annotations

import secrets
import time
from functools import cache
from importlib import resources
from typing import Any

from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

__all__ = ["live_routes"]


@cache
def _static(name: str) -> str:
    return (resources.files(__package__) / "static" / name).read_text(encoding="utf-8")


def page_html(nonce: str) -> str:
    """The page, its script and style inlined (one request, one token check)."""
    html = _static("view.html")
    return (html.replace("{{NONCE}}", nonce)
            .replace("/*{{STYLE}}*/", _static("view.css"))
            .replace("/*{{SCRIPT}}*/", _static("view.js")))


def _service(request: Request) -> Any:
    svc = getattr(request.app.state, "service", None)
    if svc is None:                       # not mounted in a ServiceApp
        raise RuntimeError("the live view's routes need a ServiceApp (app.state.service)")
    return svc


async def view(request: Request) -> Response:
    """``GET /view``: the page (a token that may read some deployment)."""
    svc = _service(request)
    svc._scopes_any(request)
    nonce = secrets.token_urlsafe(16)
    csp = (f"default-src 'none'; script-src 'nonce-{nonce}'; style-src 'nonce-{nonce}'; "
           f"connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; "
           f"frame-ancestors 'none'")
    return HTMLResponse(page_html(nonce), headers={
        "Content-Security-Policy": csp, "Referrer-Policy": "no-referrer",
        "Cache-Control": "no-store", "X-Content-Type-Options": "nosniff"})


async def steps(request: Request) -> Response:
    """``GET /view/api/steps/NAME``: the deployment's processing steps and
    counters (:func:`epsparql.service.steps.deployment_steps`)."""
    from .steps import deployment_steps
    svc = _service(request)
    name = svc._name(request)
    svc._allow(request, "read", name)
    # viewers share a reply for a moment: the engine room computes a
    # deployment's steps at most about twice a second however many watch
    d = svc.room.deployments.get(name)
    now = time.monotonic()
    recent = svc.shared_replies
    got = recent.get(name)
    if got is not None and got[1] is d and now - got[0] < _SHARE_FOR:
        out = got[2]
    else:
        out = await svc._call(deployment_steps, svc.room, name)
        recent[name] = (now, d, out)
        for k in [k for k, v in recent.items() if now - v[0] > 10]:
            del recent[k]
    return JSONResponse(out, headers={"Cache-Control": "no-store"})


#: seconds a steps reply is shared between viewers
_SHARE_FOR = 0.45


def live_routes() -> list[Any]:
    """The routes of the live view's page and data."""
    return [Route("/view", view, methods=["GET"]),
            Route("/view/api/steps/{name}", steps, methods=["GET"])]
