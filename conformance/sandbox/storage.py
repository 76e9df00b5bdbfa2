"""All SQL of the sandbox: one SQLite database (stdlib sqlite3, WAL, synchronous=FULL).

A write is committed before its answer is sent: endpoints that change state run inside :meth:`Store.transaction`,
which commits on leaving the block. One connection writes; a lock serialises write transactions (SQLite allows one
writer at a time anyway), so a transaction's reads and writes are atomic with respect to other requests. Read-only
work runs in :meth:`Store.snapshot`: with a file database (WAL) on a pooled read-only connection of its own, which
sees the last committed state and neither waits for the writer nor holds it up.
Records whose shape the interface owns (a payment's body, a customer, an account) are kept as JSON text next to the
columns the sandbox queries by.
"""
from __future__ import annotations

import json
import queue
import secrets
import sqlite3
import threading
from contextlib import contextmanager
from typing import Any, Iterator

MEMORY = ":memory:"

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS customers (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT UNIQUE NOT NULL, number TEXT UNIQUE NOT NULL, record TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS accounts (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT UNIQUE NOT NULL, customer_number TEXT NOT NULL,
    bban TEXT, iban TEXT, currency TEXT NOT NULL, balance INTEGER NOT NULL, credit_line INTEGER NOT NULL,
    record TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS card_accounts (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT UNIQUE NOT NULL, customer_number TEXT NOT NULL, record TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS account_transactions (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT UNIQUE NOT NULL, account_id TEXT NOT NULL,
    booking_date TEXT NOT NULL, record TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS account_transactions_by_account ON account_transactions (account_id, booking_date, seq);
CREATE TABLE IF NOT EXISTS card_transactions (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, card_account_id TEXT NOT NULL, booking_date TEXT NOT NULL,
    record TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS card_transactions_by_card ON card_transactions (card_account_id, booking_date, seq);
CREATE TABLE IF NOT EXISTS payments (
    id TEXT PRIMARY KEY, seq INTEGER NOT NULL, tpp TEXT NOT NULL, service TEXT NOT NULL, product TEXT NOT NULL,
    body TEXT NOT NULL, status TEXT NOT NULL, funds_available INTEGER, fingerprint TEXT NOT NULL,
    created_at TEXT NOT NULL, execution_date TEXT);
CREATE INDEX IF NOT EXISTS payments_by_status ON payments (status, seq);
CREATE INDEX IF NOT EXISTS payments_by_fingerprint ON payments (tpp, fingerprint);
CREATE TABLE IF NOT EXISTS baskets (
    id TEXT PRIMARY KEY, seq INTEGER NOT NULL, tpp TEXT NOT NULL, payment_ids TEXT NOT NULL, state TEXT NOT NULL,
    created_at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS authorisations (
    id TEXT PRIMARY KEY, seq INTEGER NOT NULL, tpp TEXT NOT NULL, subject_kind TEXT NOT NULL,
    subject_id TEXT NOT NULL, token TEXT UNIQUE NOT NULL, sca_status TEXT NOT NULL, redirect_uri TEXT NOT NULL,
    session_id TEXT NOT NULL, created_at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS request_log (
    tpp TEXT NOT NULL, request_id TEXT NOT NULL, method TEXT NOT NULL, target TEXT NOT NULL,
    body_sha256 TEXT NOT NULL, status INTEGER NOT NULL, response TEXT, created_at TEXT NOT NULL,
    PRIMARY KEY (tpp, request_id));
"""
TABLES = ("meta", "customers", "accounts", "card_accounts", "account_transactions", "card_transactions",
          "payments", "baskets", "authorisations", "request_log")
SEQUENCED = ("payments", "baskets", "authorisations")
TPP_STATE = ("payments", "baskets", "authorisations", "request_log")  # what belongs to a TPP (A28)
OWNED = ("customers", "accounts", "card_accounts")  # sandbox data, with the TPP that created it (owner; A38)
SECRET = "secret"  # meta key of the database's secret for opaque ids


def _row(cursor: sqlite3.Cursor, row: tuple) -> dict[str, Any]:
    return {d[0]: v for d, v in zip(cursor.description, row)}


def _record(row: dict | None) -> dict | None:
    return json.loads(row["record"]) if row else None


def _dump(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


class Store:
    """The database of one sandbox. ``path`` is a file or ``:memory:``."""

    def __init__(self, path: str = MEMORY) -> None:
        self.path = path
        self._conn = self._connect()
        if path != MEMORY:
            self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute("PRAGMA synchronous=FULL")
        self._conn.executescript(SCHEMA)
        self._add_owners()
        self._lock = threading.RLock()
        self._idle_readers: queue.SimpleQueue[sqlite3.Connection] = queue.SimpleQueue()
        self._readers: list[sqlite3.Connection] = []
        self._readers_lock = threading.Lock()  # not the write lock: opening a reader never waits for a write

    def _add_owners(self) -> None:
        """The owner column of the sandbox data tables (NULL: the fixed set), added to a database made before it."""
        for table in OWNED:
            columns = {row["name"] for row in self._conn.execute(f"PRAGMA table_info({table})")}  # noqa: S608
            if "owner" not in columns:
                self._conn.execute(f"ALTER TABLE {table} ADD COLUMN owner TEXT")  # noqa: S608 - fixed names

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None, timeout=30)
        conn.row_factory = _row
        return conn

    def _reader(self) -> sqlite3.Connection:
        try:
            return self._idle_readers.get_nowait()
        except queue.Empty:
            conn = self._connect()
            conn.execute("PRAGMA query_only=1")  # a read that tried to write would fail, not write unlocked
            with self._readers_lock:
                self._readers.append(conn)
            return conn

    @contextmanager
    def transaction(self) -> Iterator["Tx"]:
        """One atomic unit of work, committed (durably) when the block ends, rolled back on an exception."""
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                yield Tx(self._conn)
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")

    @contextmanager
    def snapshot(self) -> Iterator["Tx"]:
        """A read-only view of the committed state, consistent for the whole block. ``:memory:`` has one connection
        only, so there it is a (serialised) transaction."""
        if self.path == MEMORY:
            with self.transaction() as tx:
                yield tx
            return
        conn = self._reader()
        conn.execute("BEGIN")  # WAL: the snapshot is taken at the first read and held until the end
        try:
            yield Tx(conn)
        finally:
            conn.execute("ROLLBACK")
            self._idle_readers.put(conn)

    def close(self) -> None:
        with self._lock, self._readers_lock:
            for conn in self._readers:
                conn.close()
            self._conn.close()


class Tx:
    """The queries of one transaction."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._c = conn

    def _one(self, sql: str, *args: Any) -> dict | None:
        return self._c.execute(sql, args).fetchone()

    def _all(self, sql: str, *args: Any) -> list[dict]:
        return self._c.execute(sql, args).fetchall()

    # ---- whole database ----
    def is_empty(self) -> bool:
        return self._one("SELECT value FROM meta WHERE key = 'initialized'") is None

    def reset(self) -> None:
        for table in TABLES:  # the secret too: ids counted again from 1 after a reset must not repeat old ones
            self._c.execute(f"DELETE FROM {table}")  # noqa: S608 - fixed table names

    def secret(self) -> bytes:
        """The database's secret key for opaque ids (domain.secret_id), created with the database (and anew by a
        reset); stored, so ids and psu-ids stay the same across restarts."""
        value = self.meta(SECRET)
        if value is None:
            value = secrets.token_hex(32)
            self.set_meta(SECRET, value)
        return bytes.fromhex(value)

    def meta(self, key: str) -> str | None:
        row = self._one("SELECT value FROM meta WHERE key = ?", key)
        return row["value"] if row else None

    def set_meta(self, key: str, value: str) -> None:
        self._c.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, value))

    def next_seq(self, table: str) -> int:
        """The next number of ``table``'s ids: past every row there is and every row a TPP's reset removed (A38: an id
        is never issued twice while the database's secret lasts)."""
        if table not in SEQUENCED:
            raise ValueError(table)
        highest = self._one(f"SELECT COALESCE(MAX(seq), 0) AS n FROM {table}")["n"]  # noqa: S608
        return max(highest, int(self.meta(f"seq-floor-{table}") or 0)) + 1

    # ---- one TPP's reset (A38) ----
    def others_hold_state(self, tpp: str) -> bool:
        """Whether any TPP but ``tpp`` has payments, baskets, authorisations, logged requests or sandbox data."""
        for table in TPP_STATE:
            if self._one(f"SELECT 1 AS x FROM {table} WHERE tpp != ? LIMIT 1", tpp):  # noqa: S608
                return True
        return any(self._one(f"SELECT 1 AS x FROM {table} WHERE owner IS NOT NULL AND owner != ? LIMIT 1", tpp)  # noqa: S608
                   for table in OWNED)

    def remove_tpp_state(self, tpp: str) -> None:
        """The TPP's payments, baskets, authorisations and logged requests; the id counters keep their place."""
        for table in SEQUENCED:
            floor = self.next_seq(table) - 1
            self.set_meta(f"seq-floor-{table}", str(floor))
        for table in TPP_STATE:
            self._c.execute(f"DELETE FROM {table} WHERE tpp = ?", (tpp,))  # noqa: S608 - fixed table names

    def payment_bodies_not_of(self, tpp: str) -> list[str]:
        return [r["body"] for r in self._all("SELECT body FROM payments WHERE tpp != ?", tpp)]

    def data_rows(self, table: str) -> list[dict]:
        """id, customer number and owner (and iban, bban of an account) of each row of a sandbox data table."""
        if table not in OWNED:
            raise ValueError(table)
        columns = {"customers": "id, number AS customer_number, owner",
                   "accounts": "id, customer_number, iban, bban, owner",
                   "card_accounts": "id, customer_number, owner"}[table]
        return self._all(f"SELECT {columns} FROM {table} ORDER BY seq")  # noqa: S608

    def delete_account(self, account_id: str) -> None:
        self._c.execute("DELETE FROM account_transactions WHERE account_id = ?", (account_id,))
        self._c.execute("DELETE FROM accounts WHERE id = ?", (account_id,))

    def delete_card_account(self, card_id: str) -> None:
        self._c.execute("DELETE FROM card_transactions WHERE card_account_id = ?", (card_id,))
        self._c.execute("DELETE FROM card_accounts WHERE id = ?", (card_id,))

    # ---- customers ----
    def insert_customer(self, customer_id: str, number: str, record: dict, owner: str | None = None) -> None:
        self._c.execute("INSERT INTO customers (id, number, record, owner) VALUES (?, ?, ?, ?)",
                        (customer_id, number, _dump(record), owner))

    def customers(self) -> list[dict]:
        return [_record(r) for r in self._all("SELECT record FROM customers ORDER BY seq")]

    def customer(self, customer_id: str) -> dict | None:
        return _record(self._one("SELECT record FROM customers WHERE id = ?", customer_id))

    def customer_by_number(self, number: str) -> dict | None:
        return _record(self._one("SELECT record FROM customers WHERE number = ?", number))

    def delete_customer(self, customer_id: str, number: str) -> None:
        """The customer, its accounts and card accounts and their transactions."""
        self._c.execute("DELETE FROM account_transactions WHERE account_id IN (SELECT id FROM accounts WHERE customer_number = ?)", (number,))
        self._c.execute("DELETE FROM card_transactions WHERE card_account_id IN (SELECT id FROM card_accounts WHERE customer_number = ?)", (number,))
        self._c.execute("DELETE FROM accounts WHERE customer_number = ?", (number,))
        self._c.execute("DELETE FROM card_accounts WHERE customer_number = ?", (number,))
        self._c.execute("DELETE FROM customers WHERE id = ?", (customer_id,))

    # ---- accounts ----
    def insert_account(self, account_id: str, record: dict, balance: int, credit_line: int,
                       owner: str | None = None) -> None:
        self._c.execute(
            "INSERT INTO accounts (id, customer_number, bban, iban, currency, balance, credit_line, record, owner) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (account_id, record["customerNumber"], record.get("bban"), record.get("iban"), record["currency"],
             balance, credit_line, _dump(record), owner))

    def account(self, account_id: str) -> dict | None:
        return self._one("SELECT * FROM accounts WHERE id = ?", account_id)

    def account_by_reference(self, iban: str | None, bban: str | None) -> dict | None:
        return self._one("SELECT * FROM accounts WHERE (iban = ? AND ? IS NOT NULL) OR (bban = ? AND ? IS NOT NULL) ORDER BY seq LIMIT 1",
                         iban, iban, bban, bban)

    def accounts_of(self, customer_number: str) -> list[dict]:
        return self._all("SELECT * FROM accounts WHERE customer_number = ? ORDER BY seq", customer_number)

    def add_to_balance(self, account_id: str, delta: int) -> None:
        self._c.execute("UPDATE accounts SET balance = balance + ? WHERE id = ?", (delta, account_id))

    # ---- card accounts ----
    def insert_card_account(self, card_id: str, record: dict, owner: str | None = None) -> None:
        self._c.execute("INSERT INTO card_accounts (id, customer_number, record, owner) VALUES (?, ?, ?, ?)",
                        (card_id, record["customerNumber"], _dump(record), owner))

    def card_account(self, card_id: str) -> dict | None:
        return _record(self._one("SELECT record FROM card_accounts WHERE id = ?", card_id))

    def card_accounts_of(self, customer_number: str) -> list[str]:
        return [r["id"] for r in self._all("SELECT id FROM card_accounts WHERE customer_number = ? ORDER BY seq", customer_number)]

    # ---- transactions ----
    def insert_account_transaction(self, transaction_id: str, account_id: str, record: dict) -> None:
        self._c.execute("INSERT INTO account_transactions (id, account_id, booking_date, record) VALUES (?, ?, ?, ?)",
                        (transaction_id, account_id, record["bookingDate"], _dump(record)))

    def account_transaction_count(self) -> int:
        return self._one("SELECT COALESCE(MAX(seq), 0) AS n FROM account_transactions")["n"]

    def account_transactions(self, account_id: str, from_date: str | None, to_date: str | None) -> list[dict]:
        """Oldest booking first; equal dates in the order they were posted (stable ids, stable order)."""
        return [_record(r) for r in self._all(
            "SELECT record FROM account_transactions WHERE account_id = ? AND (? IS NULL OR booking_date >= ?) "
            "AND (? IS NULL OR booking_date <= ?) ORDER BY booking_date, seq",
            account_id, from_date, from_date, to_date, to_date)]

    def insert_card_transaction(self, card_id: str, record: dict) -> None:
        self._c.execute("INSERT INTO card_transactions (card_account_id, booking_date, record) VALUES (?, ?, ?)",
                        (card_id, record["bookingDate"], _dump(record)))

    def card_transactions(self, card_id: str, from_date: str | None, to_date: str | None) -> list[dict]:
        return [_record(r) for r in self._all(
            "SELECT record FROM card_transactions WHERE card_account_id = ? AND (? IS NULL OR booking_date >= ?) "
            "AND (? IS NULL OR booking_date <= ?) ORDER BY booking_date, seq",
            card_id, from_date, from_date, to_date, to_date)]

    # ---- payments ----
    def save_payment(self, p: dict) -> None:
        """Insert a payment, replacing one with the same id."""
        self._c.execute(
            "INSERT OR REPLACE INTO payments (id, seq, tpp, service, product, body, status, funds_available, fingerprint, created_at, execution_date) "
            "VALUES (:id, :seq, :tpp, :service, :product, :body, :status, :funds_available, :fingerprint, :created_at, :execution_date)", p)

    def payment(self, payment_id: str) -> dict | None:
        return self._one("SELECT * FROM payments WHERE id = ?", payment_id)

    def payments(self, ids: list[str]) -> list[dict]:
        found = {r["id"]: r for r in self._all(f"SELECT * FROM payments WHERE id IN ({','.join('?' * len(ids))})", *ids)}  # noqa: S608
        return [found[i] for i in ids if i in found]

    def payments_in_status(self, status: str) -> list[dict]:
        return self._all("SELECT * FROM payments WHERE status = ? ORDER BY seq", status)

    def payment_count(self) -> int:
        return self._one("SELECT COUNT(*) AS n FROM payments")["n"]

    def set_payment_status(self, payment_id: str, status: str, funds_available: bool | None = None) -> None:
        self._c.execute("UPDATE payments SET status = ?, funds_available = ? WHERE id = ?",
                        (status, None if funds_available is None else int(funds_available), payment_id))

    def logical_duplicate(self, tpp: str, fingerprint: str, since: str, excluded: tuple[str, ...]) -> dict | None:
        return self._one(
            f"SELECT id FROM payments WHERE tpp = ? AND fingerprint = ? AND created_at >= ? "
            f"AND status NOT IN ({','.join('?' * len(excluded))}) ORDER BY seq LIMIT 1",  # noqa: S608
            tpp, fingerprint, since, *excluded)

    # ---- baskets ----
    def insert_basket(self, b: dict) -> None:
        self._c.execute("INSERT INTO baskets (id, seq, tpp, payment_ids, state, created_at) VALUES (:id, :seq, :tpp, :payment_ids, :state, :created_at)",
                        {**b, "payment_ids": _dump(b["payment_ids"])})

    def basket(self, basket_id: str) -> dict | None:
        row = self._one("SELECT * FROM baskets WHERE id = ?", basket_id)
        if row:
            row["payment_ids"] = json.loads(row["payment_ids"])
        return row

    def basket_holding(self, tpp: str, payment_id: str, deleted: str) -> dict | None:
        """The TPP's first basket, not in state ``deleted``, that names ``payment_id`` (A34)."""
        return self._one("SELECT id FROM baskets WHERE tpp = ? AND state != ? AND EXISTS "
                         "(SELECT 1 FROM json_each(baskets.payment_ids) WHERE value = ?) ORDER BY seq LIMIT 1",
                         tpp, deleted, payment_id)

    def set_basket_state(self, basket_id: str, state: str) -> None:
        self._c.execute("UPDATE baskets SET state = ? WHERE id = ?", (state, basket_id))

    # ---- authorisations ----
    def insert_authorisation(self, a: dict) -> None:
        self._c.execute(
            "INSERT INTO authorisations (id, seq, tpp, subject_kind, subject_id, token, sca_status, redirect_uri, session_id, created_at) "
            "VALUES (:id, :seq, :tpp, :subject_kind, :subject_id, :token, :sca_status, :redirect_uri, :session_id, :created_at)", a)

    def authorisation(self, authorisation_id: str) -> dict | None:
        return self._one("SELECT * FROM authorisations WHERE id = ?", authorisation_id)

    def authorisation_by_token(self, token: str) -> dict | None:
        return self._one("SELECT * FROM authorisations WHERE token = ?", token)

    def started_authorisation(self, subject_kind: str, subject_id: str, started: str) -> dict | None:
        """The first authorisation of the payment or basket in state ``started`` (A35)."""
        return self._one("SELECT id FROM authorisations WHERE subject_kind = ? AND subject_id = ? AND sca_status = ? "
                         "ORDER BY seq LIMIT 1", subject_kind, subject_id, started)

    def set_sca_status(self, authorisation_id: str, sca_status: str) -> None:
        self._c.execute("UPDATE authorisations SET sca_status = ? WHERE id = ?", (sca_status, authorisation_id))

    # ---- X-Request-ID log (A29) ----
    def logged_request(self, tpp: str, request_id: str, since: str) -> dict | None:
        return self._one("SELECT * FROM request_log WHERE tpp = ? AND request_id = ? AND created_at >= ?", tpp, request_id, since)

    def log_request(self, entry: dict) -> None:
        self._c.execute(
            "INSERT OR REPLACE INTO request_log (tpp, request_id, method, target, body_sha256, status, response, created_at) "
            "VALUES (:tpp, :request_id, :method, :target, :body_sha256, :status, :response, :created_at)", entry)
