"""The live view in a real browser: ``epsparql serve`` as a subprocess,
Debian's chromium driven headless by Playwright (no browser downloaded).

The page is opened with a token, draws the deployment's processing steps
(an element per step), and while events are pushed over HTTP its
counters move and the answers arrive (waited for in the page's DOM, with
a timeout, never slept for).  Without a token ``/view`` is refused, and
its data endpoint refuses a token that may not read.
"""
from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from service_proc import ServiceProcess

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"

pytestmark = pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="no chromium")

ADMIN = "admin-token-0123456789abcdef"
PUSHER = "push-token-0123456789abcdef"
READER = "read-token-0123456789abcdef"

from test_serve_steps import SEQ, WINDOWED  # noqa: E402  (the same queries, in the page)


class Service(ServiceProcess):
    """``epsparql serve --port 0`` with a tokens file (service_proc.py)."""

    def __init__(self, tmp: Path) -> None:
        tokens = tmp / "tokens"
        tokens.write_text(f"{ADMIN} admin\n{PUSHER} push\n{READER} read\n", encoding="utf-8")
        super().__init__("--tokens", str(tokens))
        self.token = ADMIN
        self.url = f"http://127.0.0.1:{self.port}"

    def request(self, method: str, path: str, body: bytes | None = None,  # type: ignore[override]
                token: str | None = ADMIN, ctype: str | None = None) -> tuple[int, bytes]:
        status, _, out = super().request(method, path, body, token=token,
                                         headers={"Content-Type": ctype} if ctype else None)
        return status, out

    def stop(self) -> None:
        if self.proc.poll() is None:
            try:
                self.terminate(15)
            except subprocess.TimeoutExpired:
                self.kill()


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory):
    s = Service(tmp_path_factory.mktemp("serve"))
    try:
        status, body = s.request("POST", "/queries?name=seq", SEQ.encode(), ctype="text/plain")
        assert status == 201, body
        yield s
    finally:
        s.stop()


def events(lines: list[str]) -> bytes:
    return "".join(lines).encode("utf-8")


def test_view_needs_a_token(service: Service) -> None:
    status, body = service.request("GET", "/view", token=None)
    assert status == 401
    assert "token" in json.loads(body)["error"]
    status, _ = service.request("GET", "/view?access_token=not-a-token-of-this-service", token=None)
    assert status == 401
    # a token that may not read anything: not the page, not its data
    status, body = service.request("GET", "/view", token=PUSHER)
    assert status == 403, body
    status, body = service.request("GET", "/view/api/steps/seq", token=PUSHER)
    assert status == 403 and "read" in json.loads(body)["error"]
    status, body = service.request("GET", f"/view/api/steps/seq?access_token={PUSHER}",
                                   token=None)
    assert status == 403
    status, _ = service.request("GET", "/view/api/steps/seq", token=None)
    assert status == 401
    # a reader may; an unknown deployment is 404
    status, body = service.request("GET", "/view/api/steps/seq", token=READER)
    assert status == 200 and json.loads(body)["name"] == "seq"
    status, _ = service.request("GET", "/view/api/steps/nope", token=READER)
    assert status == 404
    status, body = service.request("GET", f"/view?access_token={READER}", token=None)
    assert status == 200 and b"epsparql live view" in body


def test_page_shows_steps_counters_and_answers(service: Service) -> None:
    from playwright.sync_api import expect, sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            page = browser.new_page()
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(f"{service.url}/view?access_token={READER}")
            # the token left the address bar
            assert "access_token" not in page.url
            expect(page.locator("li.deployment[data-name=seq]")).to_be_visible(timeout=10000)
            # the steps are drawn: the input, the SEQ join and the answers
            steps = page.locator("#graph g.step")
            expect(steps.first).to_be_visible(timeout=10000)
            graph = json.loads(service.request("GET", "/view/api/steps/seq")[1])
            assert steps.count() == len(graph["nodes"])
            join = [n["id"] for n in graph["nodes"] if n["kind"] == "join"]
            assert join, graph["nodes"]
            join_el = page.locator(f'#graph g.step[data-step="{join[0]}"]')
            out_el = page.locator("#graph g.step.answers").first
            in_el = page.locator('#graph g.step[data-step="events"]')
            expect(join_el).to_have_attribute("data-held", "0", timeout=10000)
            expect(in_el).to_have_attribute("data-in", "0")

            # three left events: held by the SEQ's left store, counted in
            body = events([f"<http://ex.org/e{i}> <http://ex.org/a> <http://ex.org/y{i}> {i} .\n"
                           for i in range(3)])
            assert service.request("POST", "/events?format=nt", body,
                                   token=PUSHER)[0] == 202
            expect(in_el).to_have_attribute("data-in", "3", timeout=10000)
            expect(join_el).to_have_attribute("data-held", "3", timeout=10000)
            expect(join_el.locator("text.cnt")).to_contain_text("held 3")
            expect(page.locator("#dep-counters [data-key=events] b")).to_have_text("3")

            # a right event completes one: an answer arrives live, out moves
            body = events(["<http://ex.org/y1> <http://ex.org/b> <http://ex.org/z> 5 .\n"])
            assert service.request("POST", "/events?format=nt", body,
                                   token=PUSHER)[0] == 202
            expect(page.locator("#answers li.answer")).to_have_count(1, timeout=10000)
            expect(page.locator("#answers li.answer").first).to_contain_text("http://ex.org/e1")
            expect(out_el).to_have_attribute("data-out", "1", timeout=10000)
            expect(in_el).to_have_attribute("data-in", "4")
            expect(page.locator("#service [data-key=answers] b")).to_have_text("1", timeout=10000)

            # and another, while the page watches
            body = events(["<http://ex.org/y2> <http://ex.org/b> <http://ex.org/z> 6 .\n"])
            service.request("POST", "/events?format=nt", body, token=PUSHER)
            expect(page.locator("#answers li.answer")).to_have_count(2, timeout=10000)
            expect(page.locator("#answers li.answer").first).to_contain_text("http://ex.org/e2")
            expect(out_el).to_have_attribute("data-out", "2", timeout=10000)

            # malformed input is counted and shown
            service.request("POST", "/events?format=nt&on_error=skip", b"this is not a triple\n",
                            token=PUSHER)
            expect(page.locator("#service [data-key=malformed] b")).to_have_text(
                "1", timeout=10000)
            # the charts are drawn from /status's series (something on the canvas)
            drawn = page.evaluate("""() => {
                const c = document.getElementById('tp-chart');
                const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
                let n = 0; for (let i = 3; i < d.length; i += 4) if (d[i]) n++;
                return n; }""")
            assert drawn > 0

            # a windowed query: its stream, window (what it holds) and answers
            status, body = service.request("POST", "/queries?name=win", WINDOWED.encode(),
                                           ctype="text/plain")
            assert status == 201, body
            page.locator("li.deployment[data-name=win]").click()
            window = page.locator("#graph g.step.window")
            expect(window).to_have_count(1, timeout=10000)
            expect(page.locator("#graph g.step.stream")).to_have_count(1)
            body = events([f"<http://ex.org/w{i}> <http://ex.org/a> <http://ex.org/o{i}> "
                           f"<http://ex.org/s> {10 + i} .\n" for i in range(3)])
            assert service.request("POST", "/events?format=nqt", body,
                                   token=PUSHER)[0] == 202
            expect(window).to_have_attribute("data-held", "3", timeout=10000)
            expect(window.locator("text.cnt")).to_contain_text("holds 3")
            expect(page.locator("#graph g.step.stream")).to_have_attribute("data-in", "3")
            expect(page.locator("#windows")).to_contain_text(":w0 :a :o0")
            expect(page.locator("#answers li.answer").first).to_contain_text(
                "http://ex.org/w", timeout=10000)
            assert not errors, errors
        finally:
            browser.close()
