"""Finding rows: the validator's reports as flat records, one per finding, for a data frame or a Parquet file.

:func:`finding_rows` is the library function an engine calls inside a partition: records in (``source``, record
number, the bytes), rows out, pure per record -- the same record gives the same rows wherever and whenever it is
judged. The rows of an input are the findings ``obvalidate --format json`` reports for it, one row each (a JSONL
line's result ``file.jsonl:17`` is source ``file.jsonl``, record 17); a record without findings gives no row.

The spec, the profile and the rule caches are built once per process, when a worker first needs them, from
:class:`Settings` -- a small picklable value (the profile's and context's text, not file names: a worker of a
cluster need not see the driver's files), sent with every task.
"""
from __future__ import annotations

import gc
import hashlib
import os
import tempfile
from dataclasses import dataclass
from typing import Any, Iterable, Iterator

from validator.findings import Report

# The row schema, in column order: (name, Arrow type name). Traffic rows fill party, expected and actual (the exchange
# judge's); payload rows leave them null.
ROW_COLUMNS: tuple[tuple[str, str], ...] = (
    ("source", "string"), ("record", "int64"), ("kind", "string"), ("valid", "bool_"), ("rule", "string"),
    ("severity", "string"), ("pointer", "string"), ("line", "int64"), ("column", "int64"), ("message", "string"),
    ("status", "int64"), ("code", "string"), ("ref", "string"), ("profile_digest", "string"),
    ("party", "string"), ("expected", "string"), ("actual", "string"),
)
ROW_FIELDS = tuple(name for name, _type in ROW_COLUMNS)


def arrow_schema():
    """The rows' Arrow schema (pyarrow imported only here: the rows themselves are plain dictionaries)."""
    import pyarrow as pa

    return pa.schema([(name, getattr(pa, kind)()) for name, kind in ROW_COLUMNS])


def spark_ddl() -> str:
    """The rows' schema as Spark SQL DDL, for ``mapInArrow``."""
    spark_types = {"string": "STRING", "int64": "BIGINT", "bool_": "BOOLEAN"}
    return ", ".join(f"`{name}` {spark_types[kind]}" for name, kind in ROW_COLUMNS)


@dataclass(frozen=True)
class Settings:
    """What judges every record of a job: the command line's options, with the profile and context as text (read
    once on the driver) and the day fixed on the driver (a worker's clock never decides a finding)."""

    kind: str | None = None
    profile_text: str | None = None
    profile_name: str | None = None
    context_text: str | None = None
    today: str | None = None
    now: str | None = None
    max_bytes: int = 50 * 1024 * 1024
    max_findings: int = 1000

    @classmethod
    def from_options(cls, *, kind=None, profile: str | None = None, context: str | None = None, today=None, now=None,
                     max_bytes: int = 50 * 1024 * 1024, max_findings: int = 1000) -> "Settings":
        """Settings from the command line's options (file names read here; ConfigError for an unusable one). The day
        is the one given, else today in Europe/Oslo as the driver sees it."""
        from validator.context import ConfigError

        def text(path: str | None, what: str) -> str | None:
            if path is None:
                return None
            try:
                with open(path, encoding="utf-8") as fh:
                    return fh.read()
            except (OSError, UnicodeDecodeError) as exc:
                raise ConfigError(f"cannot read {what} {path}: {exc}") from exc

        settings = cls(kind, text(profile, "profile"), profile, text(context, "context"), today, now, max_bytes,
                       max_findings)
        validator = settings.validator()   # an unusable profile or context fails here, on the driver
        if today is None and not validator.today_given:
            settings = cls(**{**settings.__dict__, "today": validator.today.isoformat()})
        return settings

    @property
    def profile_digest(self) -> str:
        """SHA-256 of the profile's text (of the empty text for the default profile): which profile judged a row."""
        return hashlib.sha256((self.profile_text or "").encode("utf-8")).hexdigest()

    def validator(self):
        """This process's validator for these settings, built on first use."""
        built = _VALIDATORS.get(self)
        if built is None:
            built = _VALIDATORS[self] = _build(self)
            # What was made so far (the engine's modules, the spec, the rule catalogue) lives as long as the worker:
            # the cyclic collector no longer walks it on each of the many collections the records cause.
            gc.freeze()
        return built


_VALIDATORS: dict[Settings, Any] = {}


def _build(settings: Settings):
    from validator.api import Validator
    from validator.context import Context, Profile

    profile = None
    if settings.profile_text is not None:
        # Profile.load reads a file (its YAML loader keeps dates as text for the schema's messages): the text is
        # written to a private file of this process, once.
        handle, path = tempfile.mkstemp(prefix="obvalidate-profile-", suffix=".yaml")
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as fh:
                fh.write(settings.profile_text)
            profile = Profile.load(path)
        finally:
            os.unlink(path)
    context = None
    if settings.context_text is not None:
        import json

        from validator.context import ConfigError

        try:
            mapping = json.loads(settings.context_text)
        except ValueError as exc:
            raise ConfigError(f"the context is not valid JSON: {exc}") from exc
        context = Context.from_mapping(mapping)
    return Validator(profile=profile, context=context, today=settings.today, now=settings.now,
                     max_bytes=settings.max_bytes, max_findings=settings.max_findings)


# ---- records to reports to rows
def judged(records: Iterable[tuple[str, int, bytes | None]], settings: Settings) -> Iterator[tuple[str, int, Report]]:
    """``(source, record, report)`` for each record ``(source, record, bytes)``; bytes None: a line longer than
    ``max_bytes``, not read. Never raises for a record: every one gets its report."""
    validator = settings.validator()
    # The command line's reader refuses a line longer than max_bytes with its line end ("\n") and room for a "\r":
    # a record given whole is refused as that line would be (json-too-large, unread).
    longest = settings.max_bytes + 1
    for source, number, data in records:
        if data is not None and len(data) > longest:
            data = None
        yield source, number, validator.validate_line(data, settings.kind, f"{source}:{number}")


def report_rows(source: str, number: int, report: Report, profile_digest: str) -> list[dict[str, Any]]:
    """One row per finding of ``report``, the report's own fields repeated on each."""
    valid = report.valid
    return [{
        "source": source, "record": number, "kind": report.kind, "valid": valid, "rule": f.rule,
        "severity": f.severity, "pointer": f.pointer, "line": f.line, "column": f.column, "message": f.message,
        "status": f.status, "code": f.code, "ref": f.ref, "profile_digest": profile_digest,
        "party": None, "expected": None, "actual": None,
    } for f in report.findings]


def finding_rows(records: Iterable[tuple[str, int, bytes | None]], settings: Settings | None = None) -> Iterator[dict[str, Any]]:
    """The finding rows of ``records`` (``(source, record number, bytes)`` each), as ``obvalidate --format json``
    reports the same records."""
    settings = settings or Settings()
    digest = settings.profile_digest
    for source, number, report in judged(records, settings):
        yield from report_rows(source, number, report, digest)


def not_judged_reason(report: Report) -> str | None:
    """Why a record was not judged against a kind (not JSON, not UTF-8, too large, no kind it could be): its first
    finding's rule; None for a judged record."""
    if report.kind is not None:
        return None
    return report.findings[0].rule if report.findings else "not-judged"
