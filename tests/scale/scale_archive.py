"""The archives the scale tests judge, and the rows the command line reports for them.

:func:`write_archive` writes a JSONL archive with every defect class: the mixed SEPA batch's five (tools/bench_payloads.py),
a broken bulk, baskets, and every kind of record that cannot be judged -- a corrupt line, a line that is not UTF-8, a
line over --max-bytes, a record of no known kind, a NUL byte, too deep, a duplicate key, NaN --, with blank lines, a
CRLF line and a last line without its line end. :func:`cli_rows` flattens ``obvalidate --format json`` into the
finding rows' schema, one row per finding, so the engines' rows compare with it field by field.
"""
from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from conformance.scale.rows import ROW_FIELDS, Settings
from tool_modules import load_tool
from validator.cli import main

TODAY = "2026-07-01"
MAX_BYTES = 4096


def write_archive(path: Path, lines: int = 90) -> Path:
    payloads = load_tool("bench_payloads")
    gen = payloads.Payloads(seed=30)
    encoded = payloads.encoded
    out = [encoded(payload) for _defect, payload in gen.mixed_sepa(lines, TODAY)]
    out.insert(5, encoded(gen.broken_bulk(6, 3)))
    out.insert(9, encoded(gen.bulk(2)))
    out.insert(11, b'{"paymentIds": ["a", "b"]}')
    out.insert(13, b'{"paymentIds": []}')
    out.insert(17, b'{"instructedAmount": {"amount": "1.00", "currency": "EUR"}, "creditorName": ')   # corrupt
    out.insert(19, b'{"paymentIds": ["\xff\xfe"]}')                                                    # not UTF-8
    out.insert(23, b'{"paymentIds": ["' + b"x" * (MAX_BYTES + 100) + b'"]}')                             # too large
    out.insert(29, b'{"hello": "world"}')                                                               # no kind
    out.insert(31, b'{"paymentIds": ["a"]}\x00')                                                        # binary
    out.insert(37, b"[" * 600 + b"]" * 600)                                                             # too deep
    out.insert(41, b'{"paymentIds": ["a"], "paymentIds": ["b"]}')                                       # duplicate
    out.insert(43, b'{"paymentIds": ["a"], "n": NaN}')                                                  # not finite
    out.insert(47, b"")                                                                                 # blank
    out.insert(48, b"   ")
    out[min(50, len(out) - 2)] += b"\r"                                                                                 # CRLF
    path.write_bytes(b"\n".join(out))                                                                   # no last \n
    return path


def settings() -> Settings:
    return Settings(today=TODAY, max_bytes=MAX_BYTES)


def cli_rows(*paths: Path | str, profile_digest: str | None = None) -> list[dict]:
    """The command line's findings for ``paths`` (--format json) as finding rows."""
    result = CliRunner().invoke(main, ["validate", "--format", "json", "--today", TODAY, "--max-bytes", str(MAX_BYTES),
                                       *map(str, paths)])
    assert result.exit_code in (0, 1), result.output
    digest = profile_digest or settings().profile_digest
    rows = []
    for report in json.loads(result.stdout)["results"]:
        source, _, number = report["source"].rpartition(":")
        for finding in report["findings"]:
            rows.append({"source": source, "record": int(number), "kind": report["kind"], "valid": report["valid"],
                         "rule": finding["rule"], "severity": finding["severity"], "pointer": finding["pointer"],
                         "line": finding.get("line"), "column": finding.get("column"), "message": finding["message"],
                         "status": finding["status"], "code": finding["code"], "ref": finding["ref"],
                         "profile_digest": digest, "party": None, "expected": None, "actual": None})
    return rows


def ordered(rows) -> list[dict]:
    """Rows in one order (every field a key, None first), each with the schema's fields in order."""
    def key(row):
        return tuple((row[name] is not None, row[name] if row[name] is not None else 0) for name in ROW_FIELDS)

    return [{name: row[name] for name in ROW_FIELDS} for row in sorted(rows, key=key)]


def assert_same_rows(got, expected) -> None:
    got, expected = ordered(got), ordered(expected)
    assert len(got) == len(expected), (len(got), len(expected))
    for mine, theirs in zip(got, expected):
        differ = {name: (mine[name], theirs[name]) for name in ROW_FIELDS if mine[name] != theirs[name]}
        assert not differ, f"row {theirs['source']}:{theirs['record']} {theirs['rule']}: (engine, command line) {differ}"
