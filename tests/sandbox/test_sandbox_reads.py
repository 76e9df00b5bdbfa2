"""Reads over a file database (WAL): a read-only request reads a snapshot without the write lock, so it is answered
while a write holds the lock; a scheduled batch run the sandbox clock has passed is still performed before the read
that could observe it."""
from __future__ import annotations

import sqlite3
import threading

import pytest
from conftest import START
from flows import authorise, sepa, status

from conformance.sandbox import Sandbox, testdata
from conformance.sandbox.clock import Clock


@pytest.fixture
def sandbox(server, tmp_path):
    """The test's sandbox on a database file (WAL) instead of ``:memory:``."""
    sb = Sandbox.create(str(tmp_path / "sandbox.db"), clock=Clock(START, frozen=True))
    server.app.state.sandbox = sb
    yield sb
    sb.store.close()


def test_a_read_is_answered_while_a_write_holds_the_lock(tpp, sandbox):
    pid = sepa(tpp)
    holding, release, released = threading.Event(), threading.Event(), threading.Event()

    def long_write() -> None:
        with sandbox.store.transaction():
            holding.set()
            release.wait(20)
        released.set()

    writer = threading.Thread(target=long_write)
    writer.start()
    try:
        assert holding.wait(10)
        answer = status(tpp, pid)
        assert not released.is_set(), "the read waited for the write lock"
        assert answer["transactionStatus"] == "RCVD"
    finally:
        release.set()
        writer.join(10)


def test_a_due_batch_run_is_performed_before_a_read(tpp, browser, sandbox):
    pid = sepa(tpp, "10")
    authorise(tpp, browser, pid, testdata.KARI)
    assert status(tpp, pid)["transactionStatus"] == "PDNG"
    sandbox.clock.set("2026-07-01T10:05:00Z")        # 12:05 Oslo: the 12:00 run has happened
    assert status(tpp, pid)["transactionStatus"] == "ACSC"


def test_a_snapshot_cannot_write(sandbox):
    with sandbox.store.snapshot() as tx, pytest.raises(sqlite3.OperationalError):
        tx.set_meta("x", "y")
