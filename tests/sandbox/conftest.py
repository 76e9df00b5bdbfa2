"""Fixtures of the sandbox tests: one uvicorn server on a loopback port for the session, a fresh sandbox (in-memory
database, fault switches from the test) per test, signed clients of two TPPs, and a response hook that checks every
API response the sandbox gives against the validator's response kinds for (operation, status)."""
from __future__ import annotations

import datetime as _dt
import socket
import threading
import time
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import httpx
import pytest
import uvicorn

from conformance.client import Identity, SignedClient
from conformance.sandbox import Sandbox, create_app
from conformance.sandbox.clock import Clock
from validator.api import Validator
from validator.findings import ERROR
from validator.request import resolve_operation
from validator.spec import load_spec

# 10:30 in Oslo on the spec's example day: between the 09:00 and 12:00 batch runs.
START = "2026-07-01T08:30:00Z"
TODAY = "2026-07-01"


# ---------------------------------------------------------------- response checking
@dataclass
class ResponseChecker:
    """Checks each API response: its status is one the spec declares for the operation, and its body passes the
    validator's response kind for (operation, status). ``strict``: a problem fails the test at once."""

    strict: bool = True
    problems: list[str] = field(default_factory=list)
    checked: int = 0

    def __post_init__(self) -> None:
        self.spec = load_spec()
        self.validator = Validator(spec=self.spec, today=TODAY)
        self.kinds = {k.schema_name: k.name for k in self.spec.kinds.values() if not k.is_request}

    def problems_of(self, method: str, target: str, status: int, content_type: str, body: bytes) -> list[str]:
        path = urlsplit(target).path
        op = resolve_operation(self.spec, method, path).operation
        if op is None:  # no operation: the validator's path-unknown / method-not-allowed answers
            return [] if status in (404, 405) and b"tppMessages" in body else [f"{method} {path}: {status} for no operation"]
        declared = op.responses.get(str(status))
        if declared is None:
            return [f"{op.operation_id}: status {status} is not declared in the spec"]
        media = declared.get("content", {}).get("application/json")
        if media is None:
            return [] if not body else [f"{op.operation_id} {status}: a body where the spec declares none"]
        if not content_type.startswith("application/json"):
            return [f"{op.operation_id} {status}: Content-Type {content_type!r}, not application/json"]
        schema = media["schema"]
        refs = [schema.get("$ref")] + [s.get("$ref") for s in schema.get("anyOf", ())]
        kinds = [self.kinds[r.rsplit("/", 1)[1]] for r in refs if r and r.rsplit("/", 1)[1] in self.kinds]
        assert kinds, f"{op.operation_id} {status}: no response kind for {refs}"
        reports = [self.validator.validate_bytes(body, kind) for kind in kinds]
        if any(r.valid for r in reports):
            return []
        return [f"{op.operation_id} {status} as {r.kind}: " + "; ".join(f"{f.rule} {f.pointer} {f.message}"
                                                                         for f in r.findings if f.severity == ERROR)
                for r in reports]

    def __call__(self, response: httpx.Response) -> None:
        response.read()
        request = response.request
        target = request.url.raw_path.decode("ascii")
        if target.startswith("/sca/"):
            return  # the SCA page is HTML for the PSU's browser, not an API response
        self.checked += 1
        found = self.problems_of(request.method, target, response.status_code,
                                 response.headers.get("content-type", ""), response.content)
        self.problems.extend(found)
        if found and self.strict:
            pytest.fail("sandbox response fails the validator: " + " | ".join(found), pytrace=False)


# ---------------------------------------------------------------- server and sandbox
class Server:
    def __init__(self) -> None:
        self.app = create_app(Sandbox.create(clock=Clock(START, frozen=True)))
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.server = uvicorn.Server(uvicorn.Config(self.app, host="127.0.0.1", port=self.port, log_level="warning",
                                                    access_log=False))
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("the sandbox server did not start")
            time.sleep(0.01)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(10)


@pytest.fixture(scope="session")
def server():
    s = Server()
    yield s
    s.stop()


@pytest.fixture(scope="session")
def identities() -> dict[str, Identity]:
    return {"A": Identity.generate("PSDNO-FSA-TPPA"), "B": Identity.generate("PSDNO-FSA-TPPB")}


@pytest.fixture
def faults() -> tuple[str, ...]:
    """Fault switches of the test's sandbox; override (parametrise) to turn some on."""
    return ()


@pytest.fixture
def sandbox(server, faults) -> Sandbox:
    """A fresh sandbox (in-memory database with the fixed test data) behind the session's server."""
    sb = Sandbox.create(faults=faults, clock=Clock(START, frozen=True))
    server.app.state.sandbox = sb
    yield sb
    sb.store.close()


@pytest.fixture
def checker() -> ResponseChecker:
    return ResponseChecker()


def _client(server, sandbox, checker, identity) -> SignedClient:
    return SignedClient(server.url, identity, clock=sandbox.clock.now, event_hooks={"response": [checker]})


@pytest.fixture
def tpp(server, sandbox, checker, identities):
    """TPP A's signed client; every response is checked against the validator's response kinds."""
    with _client(server, sandbox, checker, identities["A"]) as client:
        yield client


@pytest.fixture
def other_tpp(server, sandbox, checker, identities):
    """TPP B's signed client."""
    with _client(server, sandbox, checker, identities["B"]) as client:
        yield client


@pytest.fixture
def browser(server):
    """An unsigned client for the SCA page, as the PSU's browser."""
    with httpx.Client(base_url=server.url, follow_redirects=False, timeout=30) as client:
        yield client


def in_days(sandbox: Sandbox, days: int) -> str:
    return (sandbox.clock.today() + _dt.timedelta(days=days)).isoformat()
