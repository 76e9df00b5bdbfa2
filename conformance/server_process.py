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
    the sandbox clock's start (ISO instant; default real time); ``tls`` a
    :class:`conformance.sandbox.serving.ServerTls` to serve HTTPS (requiring a client certificate when it names a
    client CA); ``forwarded_allow_ips`` the proxies whose forwarded scheme and host it takes."""

    def __init__(self, db: str | os.PathLike, *, port: int | None = None, host: str = "127.0.0.1",
                 faults: tuple[str, ...] = (), now: str | None = None, log: str | os.PathLike | None = None,
                 tls=None, forwarded_allow_ips: str | None = None) -> None:
        self.db, self.host, self.faults, self.now = str(db), host, tuple(faults), now
        self.tls, self.forwarded_allow_ips = tls, forwarded_allow_ips
        self.port = port or free_port(host)
        self.log = Path(log) if log else Path(tempfile.mkstemp(prefix="sandbox-", suffix=".log")[1])
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"{'https' if self.tls else 'http'}://{self.host}:{self.port}"

    def command(self) -> list[str]:
        command = [*SERVE, "--host", self.host, "--port", str(self.port), "--db", self.db]
        for name in self.faults:
            command += ["--fault", name]
        if self.now:
            command += ["--now", self.now]
        if self.tls:
            command += ["--tls-cert", str(self.tls.cert), "--tls-key", str(self.tls.key)]
            if self.tls.client_ca:
                command += ["--client-ca", str(self.tls.client_ca)]
        if self.forwarded_allow_ips:
            command += ["--forwarded-allow-ips", self.forwarded_allow_ips]
        return command

    def start(self, timeout: float = STARTUP_SECONDS) -> "SandboxProcess":
        """Start the server and wait until it answers HTTP (any status; over TLS: until it accepts connections, as a
        server requiring a client certificate answers nobody without one)."""
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
                if self.tls:
                    socket.create_connection((self.host, self.port), timeout=1.0).close()
                else:
                    httpx.get(self.url + "/", timeout=1.0)
                return self
            except (httpx.TransportError, OSError):
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
