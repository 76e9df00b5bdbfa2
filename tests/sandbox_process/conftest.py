"""Fixtures of the real-process sandbox tests: the sandbox served by its own `obvalidate sandbox serve` process on a
free loopback port with a file database (conformance.server_process), and the signing identities of two TPPs."""
from __future__ import annotations

import pytest

from conformance.client import Identity
from conformance.server_process import SandboxProcess


@pytest.fixture(scope="module")
def identities() -> dict[str, Identity]:
    return {"A": Identity.generate("PSDNO-FSA-PROCA"), "B": Identity.generate("PSDNO-FSA-PROCB")}


@pytest.fixture
def serve(tmp_path):
    """``serve(name, faults=(), now=None)``: a started sandbox process on ``tmp_path/name.db``; every process the
    test started is stopped at its end."""
    started: list[SandboxProcess] = []

    def start(name: str = "sandbox", **options) -> SandboxProcess:
        process = SandboxProcess(tmp_path / f"{name}.db", log=tmp_path / f"{name}.log", **options)
        started.append(process)
        return process.start()

    yield start
    for process in started:
        process.stop()
