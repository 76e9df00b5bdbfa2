"""Concurrent signed creations against a running implementation: the load of the reliability tests and of
tools/bench_sandbox.py.

    load = Load(url, identity, clients=16, per_client=500, body=sepa_creation("run-1")).start()
    load.wait_for(4000, timeout=120)       # e.g. to kill the server half-way
    load.join(timeout=300)
    load.creations                          # one Creation per answered request

Each client is a thread with its own :class:`~conformance.client.SignedClient`, sending its creations one after the
other, each signed just before it is sent. With ``resend_seconds`` a request that fails in transport (the server
is down) is resent as it was — the same bytes, the same X-Request-ID — until it is answered or the time is up, which
is what a TPP does and what A29 makes safe.
"""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Callable

import httpx

from .client import Identity, PreparedRequest, SignedClient
from .sandbox.testdata import EUR_ACCOUNT

CREDITOR_IBAN = "DE89370400440532013000"  # the spec's example SEPA creditor


def sepa_creation(tag: str, debtor_iban: str = EUR_ACCOUNT["iban"]) -> Callable[[int, int], dict]:
    """Bodies of distinct SEPA creations for (client, index): the remittance names both, so no two are logical
    duplicates (A30), and amounts vary."""
    def body(client: int, index: int) -> dict:
        return {"instructedAmount": {"amount": f"{client + 1}.{index % 100:02d}", "currency": "EUR"},
                "creditorName": "Ingrid Hansen Immobilien GmbH",
                "creditorAccount": {"iban": CREDITOR_IBAN, "currency": "EUR"},
                "debtorAccount": {"iban": debtor_iban, "currency": "EUR"},
                "remittanceInformationUnstructured": f"{tag} {client}-{index}"}
    return body


def join_all(threads: list[threading.Thread], timeout: float) -> int:
    """Wait for ``threads`` within one ``timeout`` in all; how many are still running."""
    deadline = time.monotonic() + timeout
    for thread in threads:
        thread.join(max(0.0, deadline - time.monotonic()))
    return sum(thread.is_alive() for thread in threads)


@dataclass(frozen=True)
class Creation:
    client: int
    index: int
    status: int
    payment_id: str | None
    attempts: int                 # > 1: resent after a transport failure
    answered: float               # time.monotonic() of the answer
    latency: float                # seconds from the first send to the answer (signing excluded)


class Load:
    def __init__(self, url: str, identity: Identity, *, clients: int, per_client: int,
                 body: Callable[[int, int], dict], operation: str = "createSepaCreditTransfer",
                 resend_seconds: float = 0.0) -> None:
        self.url, self.identity, self.body, self.operation = url, identity, body, operation
        self.clients, self.per_client, self.resend_seconds = clients, per_client, resend_seconds
        self.creations: list[Creation] = []
        self.failures: list[str] = []
        self._answered = threading.Condition()
        self._threads = [threading.Thread(target=self._client, args=(n,), daemon=True) for n in range(clients)]

    @property
    def total(self) -> int:
        return self.clients * self.per_client

    def start(self) -> "Load":
        for thread in self._threads:
            thread.start()
        return self

    def wait_for(self, answered: int, timeout: float) -> None:
        """Until ``answered`` creations are answered, a client failed, or ``timeout`` passed."""
        with self._answered:
            self._answered.wait_for(lambda: len(self.creations) >= answered or self.failures, timeout)

    def join(self, timeout: float) -> None:
        """Until every client is done; AssertionError if one is still running after ``timeout``."""
        alive = join_all(self._threads, timeout)
        assert not alive, f"{alive} load clients still running after {timeout:.0f} s"

    def _client(self, number: int) -> None:
        try:
            with SignedClient(self.url, self.identity, timeout=30.0) as client:
                for index in range(self.per_client):
                    request = client.prepare(self.operation, body=self.body(number, index))
                    sent = time.monotonic()
                    response, attempts = self._send(client, request)
                    answered = time.monotonic()
                    pid = response.json().get("paymentId") if response.status_code in (200, 201) else None
                    with self._answered:
                        self.creations.append(Creation(number, index, response.status_code, pid, attempts,
                                                       answered, answered - sent))
                        self._answered.notify_all()
        except Exception as exc:  # noqa: BLE001 - reported through failures; a dead client must not hang a run
            with self._answered:
                self.failures.append(f"client {number}: {type(exc).__name__}: {exc}")
                self._answered.notify_all()

    def _send(self, client: SignedClient, request: PreparedRequest) -> tuple[httpx.Response, int]:
        deadline = time.monotonic() + self.resend_seconds
        attempts = 0
        while True:
            attempts += 1
            try:
                return client.send_prepared(request), attempts
            except httpx.TransportError:
                if time.monotonic() >= deadline:
                    raise
                time.sleep(0.05)
