"""The reference sandbox as a real server process on a loopback port, for reliability tests and benchmarks.

Usage::

    from conformance.server_process import SandboxProcess

    with SandboxProcess(db="sandbox.db") as server:      # started, answering, on a free 127.0.0.1 port
        ... SignedClient(server.url, identity) ...
        server.kill()                                     # SIGKILL, as a crash: nothing flushed, nothing closed
        server.start()                                    # again on the same port and database

The child runs the sandbox the way a user does, through the ``obvalidate sandbox serve`` command; its output goes to a
log file (``log``) that :class:`ServerFailed` quotes when the server does not come up. Every wait is bounded.
"""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

STARTUP_SECONDS = 30.0
SERVE = (sys.executable, "-m", "validator", "sandbox", "serve")  # `obvalidate sandbox serve` with this interpreter


class ServerFailed(RuntimeError):
    pass


def free_port(host: str = "127.0.0.1") -> int:
    """A port no one listens on right now (the kernel's pick)."""
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


class SandboxProcess:
    """One sandbox server process: ``db`` a file (kept across restarts), ``faults`` fault switch names, ``now``
    the sandbox clock's start (ISO instant; default real time)."""

    def __init__(self, db: str | os.PathLike, *, port: int | None = None, host: str = "127.0.0.1",
                 faults: tuple[str, ...] = (), now: str | None = None, log: str | os.PathLike | None = None) -> None:
        self.db, self.host, self.faults, self.now = str(db), host, tuple(faults), now
        self.port = port or free_port(host)
        self.log = Path(log) if log else Path(tempfile.mkstemp(prefix="sandbox-", suffix=".log")[1])
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def command(self) -> list[str]:
        command = [*SERVE, "--host", self.host, "--port", str(self.port), "--db", self.db]
        for name in self.faults:
            command += ["--fault", name]
        if self.now:
            command += ["--now", self.now]
        return command

    def start(self, timeout: float = STARTUP_SECONDS) -> "SandboxProcess":
        """Start the server and wait until it answers HTTP (any status)."""
        if self.running:
            raise ServerFailed("the sandbox server is already running")
        with open(self.log, "ab") as log:
            self.process = subprocess.Popen(self.command(), stdin=subprocess.DEVNULL, stdout=log,
                                            stderr=subprocess.STDOUT)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise ServerFailed(f"the sandbox server exited with {self.process.returncode}: {self._log_tail()}")
            try:
                httpx.get(self.url + "/", timeout=1.0)
                return self
            except httpx.TransportError:
                time.sleep(0.05)
        self.kill()
        raise ServerFailed(f"the sandbox server did not answer within {timeout:.0f} s: {self._log_tail()}")

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def kill(self) -> None:
        """SIGKILL: the process gets no chance to flush or close anything."""
        if self.process is not None:
            if self.process.poll() is None:
                self.process.send_signal(signal.SIGKILL)
            self.process.wait(timeout=10)
            self.process = None

    def stop(self, timeout: float = 10.0) -> None:
        """SIGTERM (uvicorn's graceful shutdown), SIGKILL after ``timeout``."""
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                pass
        self.kill()

    def _log_tail(self, chars: int = 2000) -> str:
        try:
            return self.log.read_text("utf-8", "replace")[-chars:]
        except OSError:
            return "(no log)"

    def __enter__(self) -> "SandboxProcess":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
