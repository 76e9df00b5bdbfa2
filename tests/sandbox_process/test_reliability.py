"""Reliability of the sandbox as a real server process over loopback (issue 9, must-show 3).

16 concurrent TPP clients each send 500 signed creations. Half-way through, the server is killed with SIGKILL and
started again on the same database file while the clients keep going: a client whose request failed in transport
resends the same signed request (same bytes, same X-Request-ID), so a creation committed before the kill answers its
first 201 again (A29) and one that was not committed is made now. Afterwards every creation has exactly one answer,
no answer is a 5xx, the 201s' paymentIds are distinct, each one is readable through the API with status RCVD, and
the database holds exactly as many payments as there were 201s. The same checks run against the
``write-lost-under-concurrency`` fault switch must fail, so they can. Ownership (A28) is probed by two TPPs at once,
and again after a SIGKILL and restart.
"""
from __future__ import annotations

import threading
import time
from collections import Counter

import httpx

from conformance.client import Identity, SignedClient
from conformance.load import Load, join_all, sepa_creation
from conformance.sandbox.faults import WRITE_LOST
from conformance.sandbox.storage import Store

CLIENTS, CREATIONS = 16, 500
LOAD_SECONDS = 420.0       # bound of one whole load, restart included
RESEND_SECONDS = 60.0      # how long a client resends one request while the server is down
SEPA = {"payment-service": "payments", "payment-product": "sepa-credit-transfers"}
REDIRECT = "https://tpp.example.no/callback?state=reliability"
SESSION = "0d9c6e1a-3f2b-4c5d-8e7f-9a0b1c2d3e4f"


def read_statuses(url: str, identity: Identity, payment_ids: list[str], *, clients: int = CLIENTS) -> dict[str, tuple[int, str | None]]:
    """Every payment's status through the API, ``clients`` readers at once: id -> (HTTP status, transactionStatus)."""
    found: dict[str, tuple[int, str | None]] = {}
    lock = threading.Lock()

    def reader(share: list[str]) -> None:
        with SignedClient(url, identity, timeout=30.0) as client:
            for pid in share:
                r = client.call("getPaymentStatus", path={**SEPA, "paymentId": pid})
                with lock:
                    found[pid] = (r.status_code, r.json().get("transactionStatus") if r.status_code == 200 else None)

    threads = [threading.Thread(target=reader, args=(payment_ids[n::clients],), daemon=True) for n in range(clients)]
    for thread in threads:
        thread.start()
    join_all(threads, LOAD_SECONDS)
    return found


def stored_payments(db) -> int:
    """How many payments the database file holds (read with the server stopped)."""
    store = Store(str(db))
    try:
        with store.transaction() as tx:
            return tx.payment_count()
    finally:
        store.close()


def load_problems(load: Load, reads: dict[str, tuple[int, str | None]], stored: int) -> list[str]:
    """Everything that breaks "every 201 stored exactly once, no 5xx" in a finished load."""
    problems = list(load.failures)
    if len(load.creations) != load.total:
        problems.append(f"{len(load.creations)} of {load.total} creations answered")
    statuses = Counter(c.status for c in load.creations)
    if set(statuses) != {201}:
        problems.append(f"answers other than 201: {dict(statuses)}")
    ids = [c.payment_id for c in load.creations if c.status == 201]
    shared = {pid: n for pid, n in Counter(ids).items() if n > 1}
    if shared:
        problems.append(f"{len(shared)} paymentIds answered to more than one creation, e.g. {next(iter(shared))}")
    unreadable = {pid: got for pid, got in reads.items() if got != (200, "RCVD")}
    missing = set(ids) - reads.keys()
    if unreadable or missing:
        problems.append(f"{len(unreadable) + len(missing)} of {len(set(ids))} created payments not readable as RCVD,"
                        f" e.g. {next(iter(unreadable.items() or [(m, None) for m in missing]))}")
    if stored != len(ids):
        problems.append(f"the database holds {stored} payments for {len(ids)} answers 201")
    return problems


def test_concurrent_signed_creations_survive_sigkill(serve, identities):
    server = serve("load")
    load = Load(server.url, identities["A"], clients=CLIENTS, per_client=CREATIONS, body=sepa_creation("load"),
                resend_seconds=RESEND_SECONDS).start()
    started = time.monotonic()

    load.wait_for(load.total // 2, LOAD_SECONDS)
    assert not load.failures, load.failures
    server.kill()                                            # SIGKILL in the middle of the load
    killed = time.monotonic()
    server.start()                                           # the same port and database file

    load.join(max(1.0, LOAD_SECONDS - (time.monotonic() - started)))
    before_kill = [c for c in load.creations if c.answered < killed and c.status == 201]
    resent = [c for c in load.creations if c.attempts > 1]
    assert load.total * 0.4 <= len(before_kill) <= load.total * 0.9, "the kill did not land in the middle"
    assert resent, "no client noticed the kill"

    ids = [c.payment_id for c in load.creations if c.payment_id]
    reads = read_statuses(server.url, identities["A"], ids)
    server.stop()
    problems = load_problems(load, reads, stored_payments(server.db))
    assert not problems, problems
    assert all(reads[c.payment_id] == (200, "RCVD") for c in before_kill)   # what got a 201 before the kill is there


def test_the_load_checks_catch_lost_writes(serve, identities):
    """The same load and checks, small, against a sandbox that loses writes under concurrency: they must fail."""
    server = serve("lost", faults=(WRITE_LOST,))
    load = Load(server.url, identities["A"], clients=CLIENTS, per_client=10, body=sepa_creation("lost")).start()
    load.join(LOAD_SECONDS)
    ids = [c.payment_id for c in load.creations if c.payment_id]
    reads = read_statuses(server.url, identities["A"], sorted(set(ids)))
    server.stop()
    problems = load_problems(load, reads, stored_payments(server.db))
    assert any("more than one creation" in p for p in problems), problems
    assert any("the database holds" in p for p in problems), problems


# ---------------------------------------------------------------- ownership (A28), two TPPs at once
def _probe_foreign(client: SignedClient, payment_id: str, authorisation_id: str, basket_id: str) -> list[str]:
    """Everything one TPP may try with another's payment, authorisation and basket; what answered wrongly."""
    path = {**SEPA, "paymentId": payment_id}
    redirect = {"TPP-Redirect-URI": REDIRECT, "TPP-Session-ID": SESSION}
    attempts = {
        "getPayment": client.call("getPayment", path=path),
        "getPaymentStatus": client.call("getPaymentStatus", path=path),
        "deletePayment": client.call("deletePayment", path=path),
        "startPaymentAuthorisation": client.call("startPaymentAuthorisation", path=path, headers=redirect),
        "getPaymentAuthorisationStatus": client.call("getPaymentAuthorisationStatus",
                                                     path={**path, "authorisationId": authorisation_id}),
        "getSigningBasket": client.call("getSigningBasket", path={"basketId": basket_id}),
        "getSigningBasketStatus": client.call("getSigningBasketStatus", path={"basketId": basket_id}),
        "deleteSigningBasket": client.call("deleteSigningBasket", path={"basketId": basket_id}),
        "startSigningBasketAuthorisation": client.call("startSigningBasketAuthorisation", path={"basketId": basket_id},
                                                       headers=redirect),
    }
    attempts["createSigningBasket"] = client.call("createSigningBasket", body={"paymentIds": [payment_id]})
    expected = {op: 400 if op == "createSigningBasket" else 404 for op in attempts}
    return [f"{op}: {r.status_code} {r.text[:120]}" for op, r in attempts.items()
            if (r.status_code, first_code(r)) != (expected[op], "RESOURCE_UNKNOWN")]


def first_code(response: httpx.Response) -> str | None:
    try:
        return response.json()["tppMessages"][0]["code"]
    except (ValueError, KeyError, IndexError, TypeError):
        return None


def _own_resources(client: SignedClient, tag: str) -> tuple[str, str, str]:
    """A payment of the client's TPP with an authorisation started, and a basket of another of its payments."""
    body = sepa_creation(tag)
    pid = client.call("createSepaCreditTransfer", body=body(0, 0)).json()["paymentId"]
    authorisation = client.call("startPaymentAuthorisation", path={**SEPA, "paymentId": pid},
                                headers={"TPP-Redirect-URI": REDIRECT, "TPP-Session-ID": SESSION})
    in_basket = client.call("createSepaCreditTransfer", body=body(0, 1)).json()["paymentId"]
    basket = client.call("createSigningBasket", body={"paymentIds": [in_basket]})
    assert authorisation.status_code == 201 and basket.status_code == 201, (authorisation.text, basket.text)
    return pid, authorisation.json()["authorisationId"], basket.json()["basketId"]


def test_tpps_cannot_touch_each_others_payments_concurrently_and_after_restart(serve, identities):
    server = serve("ownership")
    rounds, workers = 3, 4
    owned: dict[str, list[tuple[str, str, str]]] = {"A": [], "B": []}
    wrong: list[str] = []
    lock = threading.Lock()
    barrier = threading.Barrier(2 * workers, timeout=60)

    def worker(me: str, other: str, number: int) -> None:
        try:
            with SignedClient(server.url, identities[me], timeout=30.0) as client:
                for n in range(rounds):
                    mine = _own_resources(client, f"own {me}{number}-{n}")
                    with lock:
                        owned[me].append(mine)
                    if n == 0:
                        barrier.wait()                       # both TPPs own something before the first probe
                    with lock:
                        theirs = owned[other][(number + n) % len(owned[other])]
                    found = _probe_foreign(client, *theirs)
                    with lock:
                        wrong.extend(f"{me} on {other}'s {theirs[0]}: {w}" for w in found)
        except Exception as exc:  # noqa: BLE001 - reported below
            with lock:
                wrong.append(f"{me}{number}: {type(exc).__name__}: {exc}")

    threads = [threading.Thread(target=worker, args=(me, other, n), daemon=True)
               for me, other in (("A", "B"), ("B", "A")) for n in range(workers)]
    for thread in threads:
        thread.start()
    assert not join_all(threads, LOAD_SECONDS), "ownership probes did not finish"
    assert not wrong, wrong

    server.kill()                                             # ownership is stored, not remembered
    server.start()
    with SignedClient(server.url, identities["A"]) as a, SignedClient(server.url, identities["B"]) as b:
        assert not _probe_foreign(a, *owned["B"][0]) and not _probe_foreign(b, *owned["A"][0])
        for me, client in (("A", a), ("B", b)):                # each TPP still has its own, untouched
            for pid, _authorisation, basket_id in owned[me]:
                status = client.call("getPaymentStatus", path={**SEPA, "paymentId": pid})
                assert (status.status_code, status.json().get("transactionStatus")) == (200, "RCVD"), status.text
                assert client.call("getSigningBasket", path={"basketId": basket_id}).status_code == 200
