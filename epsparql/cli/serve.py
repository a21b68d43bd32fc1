"""``epsparql serve``: a long-running CEP service (see docs/SERVE.md).

One process: the engine room (every deployment's engine, one thread),
the HTTP API (Starlette on uvicorn), optionally an MQTT bridge (events in
from topics, answers out to topics), and the live view.  Binds to
127.0.0.1 unless told otherwise; every endpoint but ``/health`` needs a
token (``--tokens FILE``; without one, an admin token is made, printed
and, with ``--state``, kept in ``STATE/admin.token``).  SIGTERM or Ctrl-C
stops it gracefully: what is queued is applied, a checkpoint written.
"""
from __future__ import annotations

import argparse
import contextlib
import gc
import os
import signal
import socket
import sys
import threading
from pathlib import Path
from typing import Any, Iterator

from .common import (EXIT_OK, PROG, UsageError, add_engine_options, count_arg, say, window_options,
                     seconds_arg)

__all__ = ["add_parser", "cmd_serve"]

#: seconds a thread computing keeps the GIL from one that wants it (see cmd_serve)
SWITCH_INTERVAL = 0.001


def add_parser(sub: Any) -> None:
    """The ``serve`` command."""
    s = sub.add_parser("serve", help="run as a service: queries managed over HTTP, events "
                       "in over HTTP and MQTT, answers out live",
                       description="A long-running CEP service: register queries over a "
                       "REST API, push events over HTTP or MQTT, read answers as Server-Sent "
                       "Events, WebSocket or MQTT, watch them in the live view.  See "
                       "docs/SERVE.md.")
    s.add_argument("--host", default="127.0.0.1",
                   help="address to bind (default 127.0.0.1: this machine only)")
    s.add_argument("--port", type=int, default=8787, help="port (0: any free one; default 8787)")
    s.add_argument("--tokens", metavar="FILE",
                   help="bearer tokens and their scopes (docs/SERVE.md); without it an admin "
                        "token is made and printed")
    s.add_argument("--state", metavar="DIR",
                   help="keep state here: input log, checkpoints, answers; a restart continues "
                        "where the last run stopped, nothing acknowledged lost")
    s.add_argument("--answers-dir", metavar="DIR",
                   help="append each deployment's answers to DIR/NAME.jsonl "
                        "(default with --state: STATE/answers)")
    s.add_argument("--checkpoint-every", type=seconds_arg, default=30.0, metavar="SECONDS",
                   help="seconds between checkpoints with --state (default 30)")
    s.add_argument("--lateness", type=seconds_arg, default=0.0, metavar="SECONDS",
                   help="how far out of order an event may come and still be processed")
    s.add_argument("--max-goals", type=count_arg, metavar="N",
                   help="fail a deployment holding more than N partial matches")
    s.add_argument("--allow-rules", action="store_true",
                   help="accept deployments with rules of the core's rule language (they are "
                        "Prolog code: give manage tokens only to those who may run code)")
    s.add_argument("--query", action="append", metavar="NAME=FILE", default=[],
                   help="register a query file at start-up (unless NAME is registered)")
    s.add_argument("--max-body", type=count_arg, default=16 << 20, metavar="BYTES",
                   help="largest request body (default 16 MiB)")
    s.add_argument("--rate", type=float, default=1000.0, metavar="N",
                   help="requests per second per token (default 1000)")
    s.add_argument("--burst", type=count_arg, default=2000, metavar="N",
                   help="requests at once per token (default 2000)")
    s.add_argument("--keep-answers", type=count_arg, default=10000, metavar="N",
                   help="answers of each deployment kept in memory for GET .../answers and "
                        "resuming subscribers (older ones are read from the answer file when "
                        "there is one; default 10000)")
    s.add_argument("--subscriber-buffer", type=count_arg, default=10000, metavar="N",
                   help="answers a subscriber may fall behind before it is dropped")
    s.add_argument("--tls-cert", metavar="FILE", help="serve HTTPS with this certificate")
    s.add_argument("--tls-key", metavar="FILE", help="the certificate's private key")
    s.add_argument("--mqtt", metavar="HOST:PORT",
                   help="an MQTT broker to read events from and publish answers to")
    s.add_argument("--mqtt-in", action="append", metavar="TOPIC[=STREAM]", default=[],
                   help="subscribe to TOPIC (MQTT wildcards allowed); its events go to the "
                        "stream IRI STREAM (default: the stream their lines name, else the "
                        "default stream)")
    s.add_argument("--mqtt-format", default="nt", choices=("nt", "nqt", "jsonl", "csv"),
                   help="payload format of the MQTT messages (default nt)")
    s.add_argument("--mqtt-out", metavar="PREFIX",
                   help="publish each answer to PREFIX/DEPLOYMENT (QoS 1)")
    s.add_argument("--mqtt-client-id", metavar="ID", default=None,
                   help="MQTT client id (with --state the session is persistent: default "
                        "epsparql-serve; give each service on a broker its own)")
    add_engine_options(s)
    s.set_defaults(func=cmd_serve)


def _admin_token(state: Path | None) -> tuple[Any, str | None]:
    """Tokens with one admin token: kept in STATE/admin.token with --state."""
    from ..service.tokens import Tokens
    t = Tokens()
    path = state / "admin.token" if state is not None else None
    token = None
    if path is not None and path.exists():
        token = path.read_text(encoding="utf-8").strip()
    if not token:
        token = Tokens.new_token()
        if path is not None:
            state.mkdir(parents=True, exist_ok=True)       # type: ignore[union-attr]
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(token + "\n")
    t.add(token, ["admin"])
    return t, token


def cmd_serve(args: argparse.Namespace) -> int:
    """``epsparql serve``: run until SIGTERM or Ctrl-C."""
    import uvicorn

    from ..service.engine_room import EngineRoom, RoomConfig
    from ..service.http_api import Limits, ServiceApp
    from ..service.live_view import live_routes
    from ..service.tokens import TokenFileError, Tokens

    if (args.tls_cert is None) != (args.tls_key is None):
        raise UsageError("--tls-cert and --tls-key go together")
    if args.mqtt_in and not args.mqtt or args.mqtt_out and not args.mqtt:
        raise UsageError("--mqtt-in and --mqtt-out need --mqtt HOST:PORT")
    state = Path(args.state) if args.state else None
    if args.tokens:
        try:
            tokens = Tokens.load(args.tokens)
        except (OSError, TokenFileError) as e:
            raise UsageError(f"--tokens: {e}") from None
        admin = None
    else:
        tokens, admin = _admin_token(state)
    preload = []
    for spec in args.query:
        name, sep, path = spec.partition("=")
        if not sep or not Path(path).is_file():
            raise UsageError(f"--query {spec}: expected NAME=FILE with an existing file")
        preload.append((name, Path(path).read_text(encoding="utf-8")))

    # an input crosses threads (the event loop, a reader, the engine room, the
    # log's syncer, the MQTT thread), each needing the GIL in turn: with the
    # default 5 ms switch interval a thread that wants it waits up to 5 ms
    # behind one computing, at every crossing (20 ms a request was measured,
    # 10-16 ms with 1 ms, and a third more events/s)
    sys.setswitchinterval(SWITCH_INTERVAL)
    room = EngineRoom(RoomConfig(
        base=args.base, reasoning=args.reasoning, allowed_lateness=args.lateness,
        **window_options(args), max_goals=args.max_goals,
        allow_rules=args.allow_rules, state_dir=state,
        answers_dir=Path(args.answers_dir) if args.answers_dir else None,
        checkpoint_every=args.checkpoint_every, recent=args.keep_answers))
    try:
        room.start()
    except (OSError, ValueError) as e:
        raise UsageError(f"--state {args.state}: cannot restore: {e}") from None
    _preload(room, preload)
    _warm_up()
    # what start-up made (modules, the engines' compiled queries: some 10^5
    # objects) lives as long as the process: out of the collector's sight, a
    # full collection no longer scans it (30 ms each, in the latency's tail)
    gc.collect()
    gc.freeze()

    bridge = None
    if args.mqtt:
        from ..service.mqtt_bridge import MqttBridge, broker_address
        try:
            host, port = broker_address(args.mqtt)
            bridge = MqttBridge(room, host, port, inputs=args.mqtt_in,
                                out_prefix=args.mqtt_out, fmt=args.mqtt_format,
                                client_id=args.mqtt_client_id or None,
                                persistent=state is not None)
        except ValueError as e:
            room.stop(checkpoint=False)
            raise UsageError(str(e)) from None

    limits = Limits(max_body=args.max_body, rate=args.rate, burst=args.burst,
                    subscriber_buffer=args.subscriber_buffer)
    service = ServiceApp(room, tokens, limits, extra_routes=live_routes())

    # IPPROTO_TCP named: asyncio sets TCP_NODELAY only on sockets whose proto says TCP
    # (accepted ones inherit 0 otherwise), and without it a response's body waits
    # for the client's delayed ACK of its headers: 40 ms a request
    sock = socket.socket(socket.AF_INET6 if ":" in args.host else socket.AF_INET,
                         socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((args.host, args.port))
    except OSError as e:
        raise UsageError(f"cannot listen on {args.host}:{args.port}: {e.strerror or e}") from None
    sock.listen(2048)                     # connections wait from now on, not refused
    port = sock.getsockname()[1]
    scheme = "https" if args.tls_cert else "http"
    config = uvicorn.Config(service.app, log_level="warning", access_log=False,
                            ssl_certfile=args.tls_cert, ssl_keyfile=args.tls_key,
                            timeout_graceful_shutdown=5, ws="websockets-sansio")
    server = _Server(config, service.hub.close_all)
    if admin is not None:
        where = f" (kept in {state / 'admin.token'})" if state is not None else ""
        say(f"{PROG} serve: admin token: {admin}{where}")
    if bridge is not None:
        bridge.start()
    say(f"{PROG} serve: listening on {scheme}://{args.host}:{port} "
        f"(live view: {scheme}://{args.host}:{port}/view)")
    sys.stderr.flush()
    try:
        server.run(sockets=[sock])
    finally:
        if bridge is not None:
            bridge.stop()
        room.stop(checkpoint=True)
        say(f"{PROG} serve: stopped ({room.events:,} events, {room.answers:,} answers)")
    return EXIT_OK


def _server_class(on_exit: Any) -> Any:
    import uvicorn

    class Server(uvicorn.Server):
        """uvicorn's server, but a SIGTERM or Ctrl-C it shut down for is not
        raised again afterwards: the engine room still has to finish and
        checkpoint (cmd_serve's ``finally``)."""

        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            if threading.current_thread() is not threading.main_thread():
                yield
                return
            sigs = (signal.SIGINT, signal.SIGTERM)

            def handle(sig: int, frame: Any) -> None:
                self.handle_exit(sig, frame)
                if on_exit is not None:
                    on_exit()
            before = {sig: signal.signal(sig, handle) for sig in sigs}
            try:
                yield
            finally:
                for sig, handler in before.items():
                    signal.signal(sig, handler)
    return Server


def _Server(config: Any, on_exit: Any = None) -> Any:
    """uvicorn's server; ``on_exit()`` is called (in the event loop's
    thread) when a signal asks it to stop."""
    return _server_class(on_exit)(config)


def _warm_up() -> None:
    """Read an input of each size once, before listening: the first one
    imports what reading needs (pyarrow, pandas: 1 to 1.5 s here), which
    would otherwise be added to the first events' latency."""
    from ..service.engine_room import Ingest, parse_input
    line = (b'<http://example.org/a> <http://example.org/b> '
            b'"1"^^<http://www.w3.org/2001/XMLSchema#integer> 0 .\n')
    for n in (1, 200):
        try:
            parse_input(Ingest(line * n, "nt", "http://example.org/s", "skip", "warm-up"))
        except Exception:
            pass


def _preload(room: Any, preload: list[tuple[str, str]]) -> None:
    """Register the ``--query NAME=FILE`` deployments not registered yet."""
    from ..language.errors import QueryError
    from ..service.registry import Deployment, DeploymentError
    for name, text in preload:
        if name in room.deployments:
            continue
        try:
            spec = Deployment.from_request({"name": name, "query": text})
            room.call(room.register, spec).result()
        except (QueryError, DeploymentError) as e:
            room.stop(checkpoint=False)
            raise UsageError(f"--query {name}: {e}") from None
