"""A real Mosquitto on a free loopback port, in a directory of its own.

``Mosquitto(dir)`` writes a small configuration (loopback only, anonymous
clients, persistence in the directory so that a persistent session
survives a restart of the broker, no limit on the messages queued for a
client that is away) and starts ``/usr/sbin/mosquitto``; ``stop()`` ends
it, ``restart()`` starts it again on the same port.  Used by the tests of
``epsparql serve --mqtt`` and by bench/serve.py.
"""
from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from pathlib import Path

MOSQUITTO = shutil.which("mosquitto") or "/usr/sbin/mosquitto"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def available() -> bool:
    return Path(MOSQUITTO).exists()


class Mosquitto:
    """A running broker: ``host``, ``port``, ``address`` ("HOST:PORT")."""

    def __init__(self, directory: Path, port: int | None = None) -> None:
        self.dir = Path(directory)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.host = "127.0.0.1"
        self.port = port or free_port()
        self.conf = self.dir / "mosquitto.conf"
        self.conf.write_text(
            f"listener {self.port} 127.0.0.1\n"
            "allow_anonymous true\n"
            # run as root (as here), mosquitto drops to the user mosquitto, who may not
            # write this directory: no log, no persistence; the user running it writes
            + ("user root\n" if os.geteuid() == 0 else "") +
            "persistence true\n"
            f"persistence_location {self.dir}/\n"
            "autosave_interval 1\n"
            # QoS 1 messages held for a client that is away (default 1,000: more are dropped)
            "max_queued_messages 0\n"
            "max_inflight_messages 0\n"
            f"log_dest file {self.dir}/mosquitto.log\n")
        self.proc: subprocess.Popen[bytes] | None = None
        self.start()

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"

    def start(self, timeout: float = 10.0) -> None:
        self.proc = subprocess.Popen([MOSQUITTO, "-c", str(self.conf)],
                                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                log = self.dir / "mosquitto.log"
                raise RuntimeError("mosquitto stopped: " +
                                   (log.read_text()[-2000:] if log.exists() else ""))
            try:
                with socket.create_connection((self.host, self.port), 0.2):
                    return
            except OSError:
                time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"mosquitto did not listen on {self.address}")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None

    def restart(self) -> None:
        self.stop()
        self.start()

    def __enter__(self) -> "Mosquitto":
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
