"""What rules need beyond the payload: the clock, the payments a basket refers to, and the
implementer's profile (overrides of the decisions marked "profile: yes").
"""
from __future__ import annotations

import datetime as _dt
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping
from zoneinfo import ZoneInfo

OSLO = ZoneInfo("Europe/Oslo")
SEVERITY_CHOICES = ("error", "warning", "off")


class ConfigError(Exception):
    """A context or profile file is unusable (exit code 2 in the CLI)."""


def today_in_oslo(now: _dt.datetime | None = None) -> _dt.date:
    """Today's date in Europe/Oslo (A13): the day a Norwegian bank books on."""
    return (now or _dt.datetime.now(tz=_dt.timezone.utc)).astimezone(OSLO).date()


def parse_day(value: Any, what: str) -> _dt.date:
    if isinstance(value, _dt.date):
        return value
    if isinstance(value, str) and len(value) == 10:
        try:
            return _dt.date.fromisoformat(value)
        except ValueError:
            pass
    raise ConfigError(f"{what} must be a date written YYYY-MM-DD, got {value!r}")


# ---------------------------------------------------------------- profile
PROFILE_SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "obvalidate implementer profile",
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "name": {"type": "string"},
        "today": {"type": "string", "format": "date"},
        "rules": {
            "description": "Per rule: severity (error, warning, off) and the status + code to answer (A7, A8, A12, A14, A16, A19, A21).",
            "type": "object",
            "additionalProperties": {
                "type": "object",
                "additionalProperties": False,
                "properties": {
                    "severity": {"enum": list(SEVERITY_CHOICES)},
                    "code": {"type": "string"},
                    "status": {"type": "integer", "minimum": 100, "maximum": 599},
                },
            },
        },
        "amount-digits": {
            "description": "A9: request amounts carry at most the minor-unit digits (at-most) or exactly that many (exact).",
            "enum": ["at-most", "exact"],
        },
        "kid": {
            "description": "A11: which referenceType values mark a KID (null = referenceType absent) and which check digits count.",
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "reference-types": {"type": "array", "items": {"type": ["string", "null"]}},
                "algorithms": {"type": "array", "items": {"enum": ["mod10", "mod11"]}, "minItems": 1},
            },
        },
        "basket-status-ranking": {
            "description": "A2: basket values worst first, each with the payment statuses it summarises.",
            "type": "array",
            "items": {
                "type": "object",
                "required": ["basket", "payments"],
                "additionalProperties": False,
                "properties": {"basket": {"type": "string"}, "payments": {"type": "array", "items": {"type": "string"}}},
            },
        },
        "signature": {
            "description": "A8: accepted signature algorithms and the Date window.",
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "algorithms": {"type": "array", "items": {"type": "string"}, "minItems": 1},
                "date-window-seconds": {"type": "integer", "minimum": 0},
            },
        },
        "paths": {
            "description": "A1, A15: operationId -> path template where the implementation serves it.",
            "type": "object",
            "additionalProperties": {"type": "string", "pattern": "^/"},
        },
        "batch-run-times": {
            "description": "A25: the sandbox's batch run times, HH:MM in Europe/Oslo (default: the spec's x-batch-run-times).",
            "type": "array",
            "minItems": 1,
            "uniqueItems": True,
            "items": {"type": "string", "pattern": "^([01][0-9]|2[0-3]):[0-5][0-9]$"},
        },
        "cancellation-refused": {
            "description": "A5, A27: status and code answering a DELETE the payment's or basket's state refuses (default: the spec's, 409 CONFLICT).",
            "type": "object",
            "additionalProperties": False,
            "properties": {"status": {"type": "integer", "minimum": 100, "maximum": 599}, "code": {"type": "string"}},
        },
        "logical-duplicates": {
            "description": "A30: a logical duplicate creation without allowLogicalDuplicate=true is refused (409 CONFLICT) or allowed.",
            "enum": ["refused", "allowed"],
        },
    },
}


@dataclass(frozen=True)
class RuleOverride:
    severity: str | None = None
    code: str | None = None
    status: int | None = None


@dataclass(frozen=True)
class Profile:
    name: str = "defaults (decisions A1-A22)"
    today: _dt.date | None = None
    rules: Mapping[str, RuleOverride] = field(default_factory=dict)
    amount_digits: str = "at-most"
    kid_reference_types: tuple[str | None, ...] = (None, "SCOR")
    kid_algorithms: tuple[str, ...] = ("mod10", "mod11")
    basket_status_ranking: tuple[tuple[str, tuple[str, ...]], ...] | None = None  # None: the spec's
    signature_algorithms: tuple[str, ...] = ("rsa-sha256",)
    signature_date_window: _dt.timedelta = _dt.timedelta(minutes=5)
    paths: Mapping[str, str] = field(default_factory=dict)
    batch_run_times: tuple[str, ...] | None = None  # None: the spec's x-batch-run-times (A25)
    cancellation_refused: RuleOverride | None = None  # None: the spec's x-cancellation (A5, A27)
    logical_duplicates: str = "refused"  # A30

    @classmethod
    def from_mapping(cls, data: Any, source: str = "profile") -> "Profile":
        if data is None:
            data = {}
        import jsonschema

        validator = jsonschema.Draft202012Validator(PROFILE_SCHEMA, format_checker=jsonschema.FormatChecker())
        errors = sorted(validator.iter_errors(data), key=lambda e: list(e.absolute_path))
        if errors:
            e = errors[0]
            where = "/".join(str(p) for p in e.absolute_path) or "(top level)"
            raise ConfigError(f"{source}: {where}: {e.message}")
        from .rules import catalogue
        from .spec import load_spec

        known = catalogue()
        codes = load_spec().code_set("MessageCode")
        for rule_id, override in data.get("rules", {}).items():
            if rule_id not in known:
                raise ConfigError(f"{source}: rules: unknown rule id {rule_id!r} (see `obvalidate rules`)")
            if "code" in override and override["code"] not in codes:
                raise ConfigError(f"{source}: rules/{rule_id}/code: {override['code']!r} is not a message code of the interface")
        refused = data.get("cancellation-refused")
        if refused and "code" in refused and refused["code"] not in codes:
            raise ConfigError(f"{source}: cancellation-refused/code: {refused['code']!r} is not a message code of the interface")
        kid = data.get("kid", {})
        sig = data.get("signature", {})
        ranking = data.get("basket-status-ranking")
        return cls(
            name=data.get("name", source),
            today=parse_day(data["today"], f"{source}: today") if "today" in data else None,
            rules={k: RuleOverride(**v) for k, v in data.get("rules", {}).items()},
            amount_digits=data.get("amount-digits", "at-most"),
            kid_reference_types=tuple(kid.get("reference-types", (None, "SCOR"))),
            kid_algorithms=tuple(kid.get("algorithms", ("mod10", "mod11"))),
            basket_status_ranking=tuple((r["basket"], tuple(r["payments"])) for r in ranking) if ranking else None,
            signature_algorithms=tuple(sig.get("algorithms", ("rsa-sha256",))),
            signature_date_window=_dt.timedelta(seconds=sig.get("date-window-seconds", 300)),
            paths=dict(data.get("paths", {})),
            batch_run_times=tuple(data["batch-run-times"]) if "batch-run-times" in data else None,
            cancellation_refused=RuleOverride(**refused) if refused else None,
            logical_duplicates=data.get("logical-duplicates", "refused"),
        )

    @classmethod
    def load(cls, path: str | Path) -> "Profile":
        import yaml

        try:
            text = Path(path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"cannot read profile {path}: {exc}") from exc
        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise ConfigError(f"profile {path} is not valid YAML: {exc}") from exc
        return cls.from_mapping(_plain_yaml(data), str(path))


DEFAULT_PROFILE = Profile()


def _plain_yaml(node: Any, key: str | None = None) -> Any:
    """Undo YAML 1.1's implicit typing where a profile means text: `severity: off` is the word
    "off", not false, and `today: 2026-07-01` the text of a date."""
    if isinstance(node, dict):
        return {k: _plain_yaml(v, k) for k, v in node.items()}
    if isinstance(node, list):
        return [_plain_yaml(v) for v in node]
    if key == "severity" and node is False:
        return "off"
    if isinstance(node, _dt.date):
        return node.isoformat()
    return node

# ---------------------------------------------------------------- context
CONTEXT_SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "obvalidate context",
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "today": {"type": "string", "format": "date"},
        "payments": {
            "type": "object",
            "additionalProperties": {
                "type": "object",
                "additionalProperties": False,
                "properties": {
                    "service": {"enum": ["payments", "bulk-payments", "periodic-payments"]},
                    "product": {"type": "string"},
                    "transactionStatus": {"type": "string"},
                },
            },
        },
    },
}


@dataclass(frozen=True)
class PaymentFacts:
    service: str | None = None
    product: str | None = None
    transaction_status: str | None = None


@dataclass(frozen=True)
class Context:
    today: _dt.date | None = None
    payments: Mapping[str, PaymentFacts] = field(default_factory=dict)

    @classmethod
    def from_mapping(cls, data: Any, source: str = "context") -> "Context":
        if data is None:
            return cls()
        import jsonschema

        errors = list(jsonschema.Draft202012Validator(CONTEXT_SCHEMA, format_checker=jsonschema.FormatChecker()).iter_errors(data))
        if errors:
            e = errors[0]
            where = "/".join(str(p) for p in e.absolute_path) or "(top level)"
            raise ConfigError(f"{source}: {where}: {e.message}")
        from .spec import load_spec

        statuses = set(load_spec().code_set("TransactionStatusBulk"))
        for pid, facts in data.get("payments", {}).items():
            status = facts.get("transactionStatus")
            if status is not None and status not in statuses:
                raise ConfigError(f"{source}: payments/{pid}/transactionStatus: {status!r} is not a transaction status of the interface")
        return cls(
            today=parse_day(data["today"], f"{source}: today") if "today" in data else None,
            payments={
                pid: PaymentFacts(p.get("service"), p.get("product"), p.get("transactionStatus"))
                for pid, p in data.get("payments", {}).items()
            },
        )

    @classmethod
    def load(cls, path: str | Path) -> "Context":
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"cannot read context {path}: {exc}") from exc
        except ValueError as exc:
            raise ConfigError(f"context {path} is not valid JSON: {exc}") from exc
        return cls.from_mapping(data, str(path))
