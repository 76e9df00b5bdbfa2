"""What rules need beyond the payload: the clock, the payments a basket refers to, and the
implementer's profile (overrides of the decisions marked "profile: yes").
"""
from __future__ import annotations

import calendar
import datetime as _dt
import functools
import json
import re
from pathlib import Path
from typing import Any, Mapping

from .records import record

SEVERITY_CHOICES = ("error", "warning", "off")


ALL_DECISIONS = "all"   # pinned-decisions: all (conform --strict)
# A payment product outside the spec a profile may list as known but not offered (A31): service/product.
PRODUCT_OUTSIDE_SPEC = "^(payments|bulk-payments|periodic-payments)/[a-z0-9]+(-[a-z0-9]+)*$"


def _pinned(value: Any) -> frozenset[str] | str:
    return ALL_DECISIONS if value == ALL_DECISIONS else frozenset(value)


class ConfigError(Exception):
    """A context or profile file is unusable (exit code 2 in the CLI)."""


@functools.cache
def _oslo():
    from zoneinfo import ZoneInfo

    return ZoneInfo("Europe/Oslo")


def __getattr__(name: str):
    # OSLO, the zone, is loaded when first read: with --today a payload check never reads it (zoneinfo, its search
    # for the zone database and the zone's file cost about 2.5 % of a command's start).
    if name == "OSLO":
        return _oslo()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def today_in_oslo(now: _dt.datetime | None = None) -> _dt.date:
    """Today's date in Europe/Oslo (A13): the day a Norwegian bank books on."""
    return (now or _dt.datetime.now(tz=_dt.timezone.utc)).astimezone(_oslo()).date()


_DAY_RE = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})")
_MONTH_NAMES = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
                "November", "December")


def _calendar_problem(year: int, month: int, day: int) -> str | None:
    """Why a well-formed YYYY-MM-DD is still no date: blame the month or the day, not the form."""
    if not 1 <= month <= 12:
        return f"there is no month {month:02d}"
    last = calendar.monthrange(year, month)[1]
    if not 1 <= day <= last:
        return f"{_MONTH_NAMES[month - 1]} {year} has {last} days, not {day}"
    return None


def parse_day(value: Any, what: str) -> _dt.date:
    """A date from YYYY-MM-DD text (ConfigError naming ``what`` otherwise)."""
    if isinstance(value, _dt.date):
        return value
    if isinstance(value, str) and (m := _DAY_RE.fullmatch(value)):
        problem = _calendar_problem(*map(int, m.groups()))
        if problem is None:
            return _dt.date.fromisoformat(value)
        raise ConfigError(f"{what} {value!r} is not a date: {problem}")
    raise ConfigError(f"{what} must be a date written YYYY-MM-DD, e.g. 2026-07-01; got {value!r}")


# Compiled on first use (re keeps what it compiled): only --now and request clocks read instants.
_INSTANT = (r"([0-9]{4})-([0-9]{2})-([0-9]{2})[Tt ]([0-9]{2}):([0-9]{2})(?::([0-9]{2})(?:[.,][0-9]+)?)?"
            r"(?:[Zz]|[+-][0-9]{2}:?[0-9]{2})?")


def parse_instant(value: Any, what: str) -> _dt.datetime:
    """An aware date-time from ISO 8601 text (naive = UTC), worded as :func:`parse_day` words dates."""
    if isinstance(value, _dt.datetime):
        return value if value.tzinfo else value.replace(tzinfo=_dt.timezone.utc)
    if isinstance(value, str) and (m := re.fullmatch(_INSTANT, value.strip())):
        year, month, day, hour, minute, second = (int(g or 0) for g in m.groups())
        problem = _calendar_problem(year, month, day)
        if problem is None and (hour > 23 or minute > 59 or second > 59):
            problem = f"{hour:02d}:{minute:02d}:{second:02d} is not a time of day"
        if problem is None:
            try:
                parsed = _dt.datetime.fromisoformat(value.strip().replace("Z", "+00:00").replace("z", "+00:00"))
            except ValueError:
                problem = "the UTC offset is out of range"
            else:
                return parsed if parsed.tzinfo else parsed.replace(tzinfo=_dt.timezone.utc)
        raise ConfigError(f"{what} {value!r} is not a date-time: {problem}")
    raise ConfigError(f"{what} must be a date-time written YYYY-MM-DDTHH:MM:SSZ, e.g. 2026-07-01T10:00:00Z; got {value!r}")


# ---------------------------------------------------------------- profile
# The algorithm names a profile may allow (A8): the verifier derives the algorithm from the RSA key, and
# hs2019 is only a label for it (validator/signing/verifier.py).
SIGNATURE_ALGORITHMS = ("rsa-sha256", "hs2019")
# A6: which error body a refusal carries (see the profile schema's error-body).
ERROR_BODY_CHOICES = ("either", "tpp-messages", "bulk", "per-operation")
PROFILE_SCHEMA_FILE = Path(__file__).with_name("profile.schema.json")
PROFILE_SCHEMA_ID = "https://obvalidate.invalid/profile.schema.json"


def build_profile_schema() -> dict:
    """The JSON Schema of implementer profiles, with the spec's operation ids, message codes and
    statuses and the rule catalogue's ids as enums (editors complete them; `obvalidate profile
    schema` prints it). Shipped as validator/profile.schema.json; a test keeps the file current."""
    from .rules import catalogue
    from .spec import load_spec

    spec = load_spec()
    rule_ids = sorted(catalogue())
    payment_statuses = list(spec.code_set("TransactionStatusBulk"))
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": PROFILE_SCHEMA_ID,
        "title": "obvalidate implementer profile",
        "description": "Overrides of the decisions marked 'profile: yes' (A1-A32). Generated from spec/openapi.yaml "
        "and the rule catalogue by validator.context.build_profile_schema.",
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "name": {"type": "string"},
            "today": {"type": "string", "format": "date", "description": "The date rules compare against (YYYY-MM-DD)."},
            "rules": {
                "description": "Per rule: severity (error, warning, off) and the status + code to answer (A5, A7, A8, A12, A14, A16, A19, A21).",
                "type": "object",
                "propertyNames": {"title": "rule id", "description": "See `obvalidate rules`.", "enum": rule_ids},
                "additionalProperties": {
                    "type": "object",
                    "additionalProperties": False,
                    "properties": {
                        "severity": {"enum": list(SEVERITY_CHOICES)},
                        "code": {"title": "message code of the interface", "enum": list(spec.code_set("MessageCode"))},
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
                    "algorithms": {"type": "array", "items": {"title": "KID check digit algorithm", "enum": ["mod10", "mod11"]}, "minItems": 1},
                },
            },
            "basket-status-ranking": {
                "description": "A2: basket values worst first, each with the payment statuses it summarises.",
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["basket", "payments"],
                    "additionalProperties": False,
                    "properties": {
                        "basket": {"title": "basket status", "enum": list(spec.code_set("TransactionStatusBasket"))},
                        "payments": {"type": "array", "items": {"title": "payment status", "enum": payment_statuses}},
                    },
                },
            },
            "signature": {
                "description": "A8: accepted signature algorithms and the Date window.",
                "type": "object",
                "additionalProperties": False,
                "properties": {
                    "algorithms": {"type": "array", "items": {"title": "signature algorithm", "enum": list(SIGNATURE_ALGORITHMS)}, "minItems": 1},
                    "date-window-seconds": {
                        "description": "How far the signed Date may lie from the clock (default 300); null: the implementation does not check Date freshness.",
                        "type": ["integer", "null"], "minimum": 0},
                    "extra-headers": {
                        "description": "Headers the signature must cover besides the signing profile's (date, digest, x-request-id, psu-id, psu-corporate-id, tpp-redirect-uri), each when present: a gateway header the implementation wants signed, such as X-IBM-Client-Id.",
                        "type": "array", "uniqueItems": True,
                        "items": {"type": "string", "pattern": "^[!#$%&'*+.^_`|~0-9A-Za-z-]+$"}},
                },
            },
            "paths": {
                "description": "A1, A15: operationId -> path template where the implementation serves it.",
                "type": "object",
                "propertyNames": {"title": "operation id", "description": "An operationId of spec/openapi.yaml.", "enum": sorted(spec.operations)},
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
                "description": "A5, A27: status and code answering a DELETE the payment's or basket's state refuses (default: the spec's x-cancellation, 409 CONFLICT).",
                "type": "object",
                "additionalProperties": False,
                "properties": {
                    "status": {"type": "integer", "minimum": 100, "maximum": 599},
                    "code": {"title": "message code of the interface", "enum": list(spec.code_set("MessageCode"))},
                },
            },
            "logical-duplicates": {
                "description": "A30: a logical duplicate creation without allowLogicalDuplicate=true is refused (409 CONFLICT) or allowed.",
                "enum": ["refused", "allowed"],
            },
            "error-body": {
                "description": "A6: the body of a refusal. either (default): tppMessages or the bulk body {id, system, status, code, message} on any operation; tpp-messages or bulk: that one everywhere; per-operation: tppMessages except on the bulk operation, which keeps the document's bulk body.",
                "enum": list(ERROR_BODY_CHOICES),
            },
            "sca-redirect-status": {
                "description": "A24: the status of the SCA page's redirect to TPP-Redirect-URI after the form is submitted (default: 302 or 303 both accepted).",
                "enum": list(spec.document["x-sca-page"]["post"]["accepted-statuses"]),
            },
            "synthetic-identity-numbers": {
                "description": "A16: synthetic test national identity numbers (month + 80) in X-PSU-IDENTITY are accepted (default) or refused (400 FORMAT_ERROR).",
                "enum": ["accepted", "refused"],
            },
            "repeated-headers": {
                "description": "Per header: a single-valued header sent more than once is refused (400 FORMAT_ERROR, the default) or accepted; a list header (Accept*, x-accept-fix, ...) repeated is accepted unless refused here.",
                "type": "object",
                "propertyNames": {"title": "header of the interface", "enum": repeatable_headers(spec)},
                "additionalProperties": {"enum": ["accepted", "refused"]},
            },
            "request-id-replay": {
                "description": "A29: a POST or DELETE repeating an X-Request-ID: the same request answers the first response and "
                "another one is 409 CONFLICT (first-response); the id is not used to detect repeats, each request is handled as "
                "new (new-request); or any repeat is 409 CONFLICT (conflict).",
                "enum": list(REQUEST_ID_REPLAY_CHOICES),
            },
            "products-not-offered": {
                "description": "A31: payment products of the interface this implementation does not offer, as "
                "payment-service/payment-product: each of their operations answers 403 PRODUCT_INVALID (a product the "
                "interface does not know stays 404 PRODUCT_UNKNOWN, unless listed here: then it is known but not "
                "offered, 403 PRODUCT_INVALID).",
                "type": "array",
                "uniqueItems": True,
                "items": {"anyOf": [
                    {"title": "payment product of the interface", "enum": list(spec_products(spec))},
                    {"title": "a payment product the interface does not list (instant, cross-border, ...), known to "
                              "this implementation but not offered",
                     "type": "string", "pattern": PRODUCT_OUTSIDE_SPEC}]},
            },
            "absent-operations": {
                "description": "A15, A25 and the other operations the document's endpoint table does not list: those this "
                "implementation does not have (404 RESOURCE_UNKNOWN, or 405 where another operation shares the path).",
                "type": "array",
                "uniqueItems": True,
                "items": {"title": "operation the document does not list", "enum": optional_operations(spec)},
            },
            "gateway-headers": {
                "description": "Headers a gateway in front of the implementation takes (an API key, a client id such as "
                "X-IBM-Client-Id): never judged as not accepted, never signed. `obvalidate conform -H` adds the headers "
                "it sends.",
                "type": "array",
                "uniqueItems": True,
                "items": {"type": "string", "pattern": "^[!#$%&'*+.^_`|~0-9A-Za-z-]+$"},
            },
            "payment-baskets": {
                "description": "A34: how many signing baskets a payment may be in: several (each basket 201), or one (a "
                "basket naming a payment that is in another basket, not deleted, is 409 CONFLICT).",
                "enum": list(PAYMENT_BASKETS_CHOICES),
            },
            "open-authorisations": {
                "description": "A35: how many authorisations of one payment or signing basket may be started at once: "
                "several (each start 201; the first the PSU completes moves the payment, the others then fail), or one "
                "(a start while another authorisation of it is started is 409 CONFLICT).",
                "enum": list(OPEN_AUTHORISATIONS_CHOICES),
            },
            "lack-of-funds": {
                "description": "A24: where a payment the debtor cannot fund is rejected: at-sca (the default: the SCA fails, "
                "the payment RJCT with fundsAvailable false) or at-batch-run (the SCA finalises, PDNG; the batch run "
                "rejects it, RJCT with fundsAvailable false). The document states the flag, not the moment.",
                "enum": ["at-sca", "at-batch-run"],
            },
            "pinned-decisions": {
                "description": "Decisions of ours (x-assumptions) the implementation adopts as they are, where the document "
                "leaves the point open: an answer following another reading of a pinned decision is a failure, not a "
                "difference. all: every decision (conform --strict).",
                "oneOf": [{"const": "all"},
                          {"type": "array", "uniqueItems": True,
                           "items": {"title": "decision", "enum": [a["id"] for a in spec.document["x-assumptions"]]}}],
            },
        },
    }


def repeatable_headers(spec) -> list[str]:
    """The header parameters of the spec whose repeats the header-duplicate rule judges (the signature verifier
    owns the repeats of the signed headers it reads: Signature, Digest, Date, TPP-Signature-Certificate)."""
    from .spec import as_tuple

    names = {p.key: p.name for op in spec.operations.values() for p in op.header_parameters
             if "A8" not in as_tuple(p.raw.get("x-assumption")) and p.key != "host"}
    return sorted(names.values(), key=str.lower)


REQUEST_ID_REPLAY_CHOICES = ("first-response", "new-request", "conflict")  # A29, ours first
PAYMENT_BASKETS_CHOICES = ("several", "one")  # A34, ours first
OPEN_AUTHORISATIONS_CHOICES = ("several", "one")  # A35, ours first


def spec_products(spec) -> tuple[str, ...]:
    """The payment products of the interface as payment-service/payment-product: its creation paths (A31)."""
    out = []
    for op in spec.operations.values():
        parts = op.path.split("/")
        if op.method == "POST" and len(parts) == 4 and parts[1] == "v1" and "{" not in op.path and op.path.endswith(
                "-credit-transfers"):
            out.append(f"{parts[2]}/{parts[3]}")
    return tuple(out)


def optional_operations(spec) -> list[str]:
    """Operations the document's endpoint table does not list (their header-table column is "none"): an
    implementation may lack them (A15, A25)."""
    return sorted(op.operation_id for op in spec.operations.values() if op.raw.get("x-header-table-column") == "none")


def profile_schema() -> dict:
    """The shipped profile schema (validator/profile.schema.json)."""
    cached = _PROFILE_SCHEMA_CACHE.get("schema")
    if cached is None:
        cached = _PROFILE_SCHEMA_CACHE["schema"] = json.loads(PROFILE_SCHEMA_FILE.read_text(encoding="utf-8"))
    return cached


_PROFILE_SCHEMA_CACHE: dict[str, dict] = {}


def profile_problem(data: Any, source: str) -> str | None:
    """The first way ``data`` breaks the profile schema, said plainly, with "did you mean" for a
    misspelt name; None when it is a valid profile."""
    import jsonschema

    validator = jsonschema.Draft202012Validator(profile_schema(), format_checker=jsonschema.FormatChecker())
    errors = sorted(validator.iter_errors(data), key=lambda e: (list(map(str, e.absolute_path)), e.validator))
    if not errors:
        return None
    e = errors[0]
    where = "/".join(str(p) for p in e.absolute_path) or "(top level)"
    return f"{source}: {where}: {_profile_message(e)}"


def _profile_message(error) -> str:
    from .suggest import did_you_mean

    schema = error.schema if isinstance(error.schema, dict) else {}
    if error.validator == "additionalProperties" and schema.get("additionalProperties") is False and isinstance(error.instance, dict):
        known = sorted(schema.get("properties", {}))
        unknown = sorted(set(error.instance) - set(known))
        return "; ".join(f"unknown key {k!r}{did_you_mean(k, known)}" for k in unknown) + f" (known: {', '.join(known)})"
    if error.validator == "format" and error.validator_value == "date" and isinstance(error.instance, str):
        try:
            parse_day(error.instance, "")
        except ConfigError as exc:
            return str(exc).strip()
    if error.validator == "enum":
        members = [str(m) for m in error.validator_value]
        hint = did_you_mean(error.instance, members) if isinstance(error.instance, str) else ""
        title = schema.get("title")
        if "propertyNames" in error.schema_path:  # the key itself is unknown
            return f"unknown {title} {error.instance!r}{hint}"
        if title:
            return f"{error.instance!r} is not a {title}{hint}"
        return f"{error.instance!r} is not one of {', '.join(members)}{hint}"
    if error.validator == "anyOf" and isinstance(error.instance, str):  # e.g. a product of the interface or beyond it
        members = [str(m) for alternative in error.validator_value for m in alternative.get("enum", ())]
        forms = " nor ".join(a["title"] + (f" ({', '.join(a['enum'])})" if "enum" in a else f" (written {a['pattern']})")
                            for a in error.validator_value if "title" in a)
        return f"{error.instance!r} is neither {forms}{did_you_mean(error.instance, members)}"
    if error.validator == "oneOf" and "pinned-decisions" in map(str, error.absolute_path):
        return f"{error.instance!r}: pinned-decisions takes all or a list of decision ids (A1, A7, ...)"
    return error.message


@record
class RuleOverride:
    severity: str | None = None
    code: str | None = None
    status: int | None = None


@record
class Profile:
    """An implementer profile: the overrides of the decisions marked "profile: yes". The mappings are read-only
    (the empty default is shared)."""

    name: str = "defaults (decisions A1-A32)"
    today: _dt.date | None = None
    rules: Mapping[str, RuleOverride] = {}
    amount_digits: str = "at-most"
    kid_reference_types: tuple[str | None, ...] = (None, "SCOR")
    kid_algorithms: tuple[str, ...] = ("mod10", "mod11")
    basket_status_ranking: tuple[tuple[str, tuple[str, ...]], ...] | None = None  # None: the spec's
    signature_algorithms: tuple[str, ...] = ("rsa-sha256",)
    signature_date_window: _dt.timedelta | None = _dt.timedelta(minutes=5)  # None: Date freshness not checked
    signature_extra_headers: tuple[str, ...] = ()  # lower case: signed besides the profile list, each when present
    paths: Mapping[str, str] = {}
    batch_run_times: tuple[str, ...] | None = None  # None: the spec's x-batch-run-times (A25)
    cancellation_refused: RuleOverride | None = None  # None: the spec's x-cancellation (A5, A27)
    logical_duplicates: str = "refused"  # A30
    error_body: str = "either"  # A6
    sca_redirect_status: int | None = None  # A24; None: any of the spec's x-sca-page accepted-statuses
    synthetic_identity_numbers: str = "accepted"  # A16
    repeated_headers: Mapping[str, str] = {}  # lower-case header name -> "accepted" | "refused"
    request_id_replay: str = "first-response"  # A29
    products_not_offered: tuple[str, ...] = ()  # A31: payment-service/payment-product
    absent_operations: frozenset[str] = frozenset()  # A15, A25: operations the document does not list
    payment_baskets: str = "several"  # A34
    open_authorisations: str = "several"  # A35
    gateway_headers: frozenset[str] = frozenset()  # lower-case names of headers a gateway takes (never judged)
    pinned_decisions: frozenset[str] | str = frozenset()  # decisions adopted as they are; "all": every one (--strict)
    lack_of_funds: str = "at-sca"  # A24: where a payment without funds is rejected (at-sca, at-batch-run)
    stated: frozenset[str] = frozenset()  # the keys the profile states (a default choice may be stated or not)

    @classmethod
    def from_mapping(cls, data: Any, source: str = "profile") -> "Profile":
        if data is None:
            data = {}
        problem = profile_problem(data, source)
        if problem:
            raise ConfigError(problem)
        kid = data.get("kid", {})
        sig = data.get("signature", {})
        ranking = data.get("basket-status-ranking")
        refused = data.get("cancellation-refused")
        return cls(
            name=data.get("name", source),
            today=parse_day(data["today"], f"{source}: today") if "today" in data else None,
            rules={k: RuleOverride(**v) for k, v in data.get("rules", {}).items()},
            amount_digits=data.get("amount-digits", "at-most"),
            kid_reference_types=tuple(kid.get("reference-types", (None, "SCOR"))),
            kid_algorithms=tuple(kid.get("algorithms", ("mod10", "mod11"))),
            basket_status_ranking=tuple((r["basket"], tuple(r["payments"])) for r in ranking) if ranking else None,
            signature_algorithms=tuple(sig.get("algorithms", ("rsa-sha256",))),
            signature_date_window=_date_window(sig.get("date-window-seconds", 300)),
            signature_extra_headers=tuple(dict.fromkeys(h.lower() for h in sig.get("extra-headers", ()))),
            paths=dict(data.get("paths", {})),
            batch_run_times=tuple(data["batch-run-times"]) if "batch-run-times" in data else None,
            cancellation_refused=RuleOverride(**refused) if refused else None,
            logical_duplicates=data.get("logical-duplicates", "refused"),
            error_body=data.get("error-body", "either"),
            sca_redirect_status=data.get("sca-redirect-status"),
            synthetic_identity_numbers=data.get("synthetic-identity-numbers", "accepted"),
            repeated_headers={k.lower(): v for k, v in data.get("repeated-headers", {}).items()},
            request_id_replay=data.get("request-id-replay", "first-response"),
            products_not_offered=tuple(data.get("products-not-offered", ())),
            absent_operations=frozenset(data.get("absent-operations", ())),
            payment_baskets=data.get("payment-baskets", "several"),
            open_authorisations=data.get("open-authorisations", "several"),
            gateway_headers=frozenset(h.lower() for h in data.get("gateway-headers", ())),
            pinned_decisions=_pinned(data.get("pinned-decisions", ())),
            lack_of_funds=data.get("lack-of-funds", "at-sca"),
            stated=frozenset(data),
        )

    def states(self, key: str) -> bool:
        """Whether the profile states ``key`` (its choice, even the default one): then the target is held to it."""
        return key in self.stated

    def pins(self, decision: str | None) -> bool:
        """Whether the profile adopts ``decision`` as it is (pinned-decisions, --strict): another reading of it is
        then a failure."""
        return decision is not None and (self.pinned_decisions == ALL_DECISIONS or decision in self.pinned_decisions)

    @classmethod
    def load(cls, path: str | Path) -> "Profile":
        import yaml

        try:
            text = Path(path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"cannot read profile {path}: {exc}") from exc
        try:
            data = yaml.load(text, Loader=_profile_loader())
        except (yaml.YAMLError, ValueError) as exc:  # ValueError: an explicit !!timestamp that is no date
            raise ConfigError(f"profile {path} is not valid YAML: {exc}") from exc
        return cls.from_mapping(_plain_yaml(data), str(path))


DEFAULT_PROFILE = Profile()


def _date_window(seconds: int | None) -> _dt.timedelta | None:
    return None if seconds is None else _dt.timedelta(seconds=seconds)


def _profile_loader():
    """YAML's safe loader without implicit dates: `today: 2026-13-01` reaches the schema as text (and
    its message), not a ValueError from the YAML library."""
    import yaml

    class ProfileLoader(yaml.SafeLoader):
        pass

    ProfileLoader.yaml_implicit_resolvers = {
        first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
        for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
    }
    return ProfileLoader


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


@record
class PaymentFacts:
    service: str | None = None
    product: str | None = None
    transaction_status: str | None = None


@record
class Context:
    """What rules need to know beyond the payload: the day, and the payments a basket refers to (read-only; the
    empty default is shared)."""

    today: _dt.date | None = None
    payments: Mapping[str, PaymentFacts] = {}

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
