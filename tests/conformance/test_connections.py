"""A run holds a bounded number of connections to its target: one keep-alive pool per run (``--max-connections``,
default 8), shared by every client of the run -- the signed clients, the SCA page's browser and Schemathesis' calls --
and closed at the end. The target here is the reference sandbox behind a TCP proxy that, like a gateway at its
connection limit, resets every connection beyond its limit and counts the most it saw open at once."""
from __future__ import annotations

import asyncio
import socket
import struct
import time

import pytest
from click.testing import CliRunner

from conformance.gate.cli import conform
from conformance.gate.pool import DEFAULT_MAX_CONNECTIONS
from conformance.gate.runner import worker_connections
from conformance.gate.target import ReferenceServer
from gate_helpers import LoopbackServer, pipe


class LimitedProxy(LoopbackServer):
    """A loopback TCP proxy in front of ``upstream_port`` letting at most ``limit`` client connections be open at
    once: one more is reset at once (RST). ``peak`` is the most open at once, ``refused`` how many were reset."""

    def __init__(self, upstream_port: int, limit: int) -> None:
        super().__init__()
        self.upstream_port, self.limit = upstream_port, limit
        self.open = self.peak = self.refused = self.accepted = 0

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self.open >= self.limit:
            self.refused += 1
            sock = writer.get_extra_info("socket")
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # close = reset
            writer.transport.abort()
            return
        self.open += 1
        self.accepted += 1
        self.peak = max(self.peak, self.open)
        try:
            upstream_reader, upstream_writer = await asyncio.open_connection("127.0.0.1", self.upstream_port)
            directions = [asyncio.ensure_future(pipe(reader, upstream_writer)),
                          asyncio.ensure_future(pipe(upstream_reader, writer))]
            _done, pending = await asyncio.wait(directions, return_when=asyncio.FIRST_COMPLETED)
            for task in pending:
                task.cancel()
            upstream_writer.close()
        finally:
            writer.close()
            self.open -= 1

    def wait_idle(self, seconds: float = 10) -> int:
        """Connections still open after waiting up to ``seconds`` for the client side to close them."""
        deadline = time.monotonic() + seconds
        while self.open and time.monotonic() < deadline:
            time.sleep(0.05)
        return self.open


@pytest.fixture
def limited():
    servers: list = []

    def start(limit: int) -> LimitedProxy:
        reference = ReferenceServer().start()
        proxy = LimitedProxy(reference.port, limit).start()
        servers.extend([proxy, reference])
        return proxy

    yield start
    for server in servers:
        server.stop()


def test_a_full_run_completes_against_a_target_limited_to_20_connections(limited):
    proxy = limited(20)
    result = CliRunner().invoke(conform, ["--target", proxy.url, "--max-examples", "1"])
    assert "stopped answering" not in result.output, result.output[-2000:]
    assert result.exit_code == 0, result.output[-2000:]
    assert "0 findings" in result.output
    assert proxy.refused == 0 and proxy.peak <= DEFAULT_MAX_CONNECTIONS <= 20, (proxy.peak, proxy.refused)
    # kept alive: far fewer connections than requests; closed at the end of the run
    requests = int(result.output.rsplit(" requests in ", 1)[0].rsplit(" ", 1)[1])
    assert proxy.accepted < requests / 10, (proxy.accepted, requests)
    assert proxy.wait_idle() == 0, "the run left connections open"


def test_the_limit_holds_for_the_whole_run_with_workers(limited):
    proxy = limited(2)
    # two suites in two worker processes, one connection each; eight threads of concurrent creations share one
    # (not the schema suite: it may reset the sandbox under the other worker's scenarios)
    result = CliRunner().invoke(conform, ["--target", proxy.url, "--max-examples", "1", "--max-connections", "2",
                                          "--workers", "2", "--check", "security:unsigned,security:tampered-body,"
                                          "stateful:concurrent-creations,stateful:lifecycle"])
    assert result.exit_code == 0, result.output[-2000:]
    assert proxy.refused == 0 and proxy.peak <= 2, (proxy.peak, proxy.refused)


def test_each_worker_gets_its_share():
    assert worker_connections(8, 1, 5) == 8
    assert worker_connections(8, 2, 5) == 4
    assert worker_connections(8, 16, 5) == 1      # five suites: at most five workers run at once
    assert worker_connections(2, 4, 5) == 1       # more workers than connections: one each
