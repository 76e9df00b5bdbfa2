"""Exchanges recorded from the reference sandbox, in process: a signed client of a TPP sends through Starlette's
test client, and every request exactly as sent (headers in order, the body's bytes, the sandbox clock's time) and
every answer exactly as received become :class:`RecordedRequest` / :class:`RecordedAnswer`."""
from __future__ import annotations

import datetime as _dt
import warnings
from dataclasses import dataclass, field
from typing import Callable

import httpx

from conformance.client import Identity, SignedClient
from conformance.exchange import RecordedAnswer, RecordedRequest
from conformance.sandbox import Sandbox, create_app
from conformance.sandbox.clock import Clock

START = "2026-07-01T08:30:00Z"   # 10:30 in Oslo on the spec's example day, between two batch runs
ORIGIN = "http://testserver"


@dataclass
class Recording:
    """The exchanges of one sandbox session, in order."""

    sandbox: Sandbox
    exchanges: list[tuple[RecordedRequest, RecordedAnswer]] = field(default_factory=list)

    def hook(self, response: httpx.Response) -> None:
        response.read()
        request = response.request
        sent = RecordedRequest(request.method, request.url.raw_path.decode("ascii"),
                               tuple((n.decode("latin-1"), v.decode("latin-1")) for n, v in request.headers.raw),
                               request.content, self.sandbox.clock.now(), ORIGIN)
        answer = RecordedAnswer(response.status_code,
                                tuple((n.decode("latin-1"), v.decode("latin-1")) for n, v in response.headers.raw),
                                response.content)
        self.exchanges.append((sent, answer))

    def client(self, identity: Identity, *, clock: Callable[[], _dt.datetime] | None = None) -> SignedClient:
        return SignedClient(ORIGIN, identity, clock=clock or self.sandbox.clock.now, http=self.browser())

    def browser(self) -> httpx.Client:
        with warnings.catch_warnings():  # Starlette's test client would like httpx2; httpx serves the recordings
            warnings.simplefilter("ignore")
            from starlette.testclient import TestClient

            http = TestClient(self.app, base_url=ORIGIN, follow_redirects=False)
        # the test client sends its own User-Agent, as a TPP's client does: HTTP metadata, never a finding (A33)
        http.event_hooks["response"] = [self.hook]
        return http

    @property
    def app(self):
        app = self.__dict__.get("_app")
        if app is None:
            app = self.__dict__["_app"] = create_app(self.sandbox)
        return app


def recording(*faults: str) -> Recording:
    return Recording(Sandbox.create(faults=faults, clock=Clock(START, frozen=True)))
