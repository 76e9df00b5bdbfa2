"""Recorded traffic judged per TPP: the proxy's JSONL logs as partitions of one TPP each (the identity of the
signing certificate, :func:`validator.signing.certificate.tpp_identity`; exchanges without one form a partition of
their own), ordered by time within a partition (file order among equal times, as ``obvalidate traffic`` orders them),
each judged by an exchange judge of its own.

What one TPP's judgement needs from another's exchanges is what they teach every session: which TPP created a
payment, basket or authorisation (A28, ``foreign-resource-visible``), which SCA pages were linked, a basket deleted,
the sandbox initialised (A32: everything forgotten). Those exchanges -- the POSTs and DELETEs answered 2xx -- are also
judged, in their place in time, in every other partition, and their findings there are dropped (they are their own
partition's). So each partition's judge knows what the single-process judge knows when it judges that TPP's exchanges,
and the findings are the same. The cost: a teaching exchange is judged once per partition.

Stage one reads each log (one task per log) and keeps, per exchange, only where its line is and what orders and
partitions it; stage two reads a partition's lines back and judges them.
"""
from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os
import tempfile
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

from .job import Tally, write_rows

TEACHING_METHODS = frozenset({"POST", "DELETE"})


@dataclass(frozen=True)
class TrafficSettings:
    profile_text: str | None = None
    base_path: str = ""
    origins: tuple[str, ...] = ()

    @property
    def profile_digest(self) -> str:
        return hashlib.sha256((self.profile_text or "").encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Exchange:
    """Where one exchange line is and what partitions and orders it."""

    tpp: str | None
    at: float                 # startedDateTime as a timestamp
    file: int                 # the log's position among the inputs
    line: int                 # the line's number in its log
    offset: int
    length: int
    source: str
    url: str
    teaches: bool             # a POST or DELETE answered 2xx: judged in every partition
    problem: str | None = None


def exchanges_of(numbered: tuple[int, str]) -> list[Exchange]:
    """Stage one: the exchange lines of one log (its position among the inputs, and its local path or fsspec URL). A
    line that is no JSON or no readable
    exchange is kept with its problem (counted as not judged, never dropped)."""
    import fsspec

    from conformance.traffic.har import EXCHANGE, HarError, read_entry
    from validator.signing.certificate import tpp_identity

    file, name = numbered
    out: list[Exchange] = []
    offset = 0
    with fsspec.open(name, "rb") as fh:
        for number, line in enumerate(fh, 1):
            start, offset = offset, offset + len(line)
            if not line.strip():
                continue
            place = dict(file=file, line=number, offset=start, length=len(line), source=name, url=name)
            try:
                value = json.loads(line)
                if not isinstance(value, dict) or value.get("type") != EXCHANGE:
                    if isinstance(value, dict):
                        continue   # finding lines and later additions, as obvalidate traffic skips them
                    raise HarError("not a JSON object")
                entry = read_entry(value.get("entry"), value)
            except (ValueError, RecursionError, HarError) as exc:
                out.append(Exchange(None, 0.0, **place, teaches=False, problem=f"line {number}: {exc}"))
                continue
            certificate = next((v for k, v in entry.headers if k.lower() == "tpp-signature-certificate"), None)
            teaches = entry.method.upper() in TEACHING_METHODS and entry.status is not None and 200 <= entry.status < 300
            out.append(Exchange(tpp_identity(certificate), entry.started.timestamp(), **place, teaches=teaches))
    return out


def partitions(exchanges: Iterable[Exchange]) -> list[list[tuple[Exchange, bool]]]:
    """One partition per TPP (sorted by identity, no certificate first): ``(exchange, own)`` in judging order,
    the other partitions' teaching exchanges among them with ``own`` False."""
    by_tpp: dict[str | None, list[Exchange]] = {}
    for exchange in exchanges:
        by_tpp.setdefault(exchange.tpp, []).append(exchange)
    teaching = [e for e in (x for group in by_tpp.values() for x in group) if e.teaches and e.problem is None]
    out = []
    for tpp in sorted(by_tpp, key=lambda t: (t is not None, t or "")):
        own = [(e, True) for e in by_tpp[tpp]]
        others = [(e, False) for e in teaching if e.tpp != tpp]
        out.append(sorted(own + others, key=lambda item: (item[0].at, item[0].file, item[0].line)))
    return out


_PROFILES: dict[str | None, Any] = {}


def _profile(text: str | None):
    from validator.context import DEFAULT_PROFILE, Profile

    if text is None:
        return DEFAULT_PROFILE
    if text not in _PROFILES:
        handle, path = tempfile.mkstemp(prefix="obvalidate-profile-", suffix=".yaml")
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as fh:
                fh.write(text)
            _PROFILES[text] = Profile.load(path)
        finally:
            os.unlink(path)
    return _PROFILES[text]


def _lines(partition: Sequence[tuple[Exchange, bool]]) -> dict[tuple[str, int], bytes]:
    import fsspec

    wanted: dict[str, list[Exchange]] = {}
    for exchange, _own in partition:
        wanted.setdefault(exchange.url, []).append(exchange)
    out = {}
    for url, exchanges in wanted.items():
        with fsspec.open(url, "rb") as fh:
            for exchange in sorted(exchanges, key=lambda e: e.offset):
                fh.seek(exchange.offset)
                out[(url, exchange.line)] = fh.read(exchange.length)
    return out


def judge_partition(partition: Sequence[tuple[Exchange, bool]], settings: TrafficSettings, out: str) -> Tally:
    """Stage two: one TPP's exchanges judged in order by a judge of their own; its rows written, its tally."""
    from conformance.exchange import ExchangeJudge
    from conformance.traffic.har import read_entry
    from conformance.traffic.run import _reason_head, judge_entry

    judge = ExchangeJudge(profile=_profile(settings.profile_text), base_path=settings.base_path,
                          origins=settings.origins)
    lines = _lines(partition)
    tally, rows = Tally(), []
    for exchange, own in partition:
        if exchange.problem is not None:
            tally.read += 1
            tally.not_judged["exchange-unreadable"] += 1
            tally.unreadable.append((f"{exchange.source}:{exchange.line}", exchange.problem))
            continue
        value = json.loads(lines[(exchange.url, exchange.line)])
        result = judge_entry(judge, read_entry(value["entry"], value))
        if not own:
            continue
        tally.read += 1
        if result.skipped is not None:
            tally.not_judged[_reason_head(result.skipped)] += 1
            continue
        tally.judged += 1
        rows.extend(result_rows(exchange.source, result, settings.profile_digest))
    tally.add_rows(rows)
    tpp = next((exchange.tpp for exchange, own in partition if own), None)
    name = f"tpp-{hashlib.sha256(repr(tpp).encode()).hexdigest()[:16]}"
    write_rows(rows, out, name)
    return tally


def result_rows(source: str, result: Any, profile_digest: str) -> list[dict[str, Any]]:
    """One row per finding of an entry's result (:class:`conformance.traffic.run.EntryResult`): kind the operation,
    status and code the answer a conforming bank gives, party, expected and actual the judge's."""
    valid = not any(f.severity == "error" for f in result.findings)
    status, code = result.predicted if result.predicted is not None else (None, None)
    return [{
        "source": source, "record": result.entry, "kind": result.operation, "valid": valid, "rule": f.rule,
        "severity": f.severity, "pointer": f.pointer, "line": None, "column": None, "message": f.message,
        "status": status, "code": code, "ref": f.ref, "profile_digest": profile_digest,
        "party": f.party, "expected": f.expected, "actual": f.actual,
    } for f in result.findings]
