"""Fuzzing obvalidate's public API with inputs derived from the spec's examples.

Shared by ``tests/fuzz/test_fuzz.py`` (a bounded, seeded run inside the test command, and the replay of every
input ever found failing, ``tests/fuzz/corpus/``) and ``tools/fuzz_long.py`` (long runs on several workers).

Inputs (one :class:`Case` per index, reproducible from ``(seed, index)`` alone):

* structure-aware: a spec example (every request and response example) or a request envelope (every operation,
  signed with the signing reference's test vector or unsigned) with one to four mutations: a value replaced by an
  edge value of every JSON type (huge and 4,301-digit integers, NaN and infinities, lone surrogates, Unicode
  digits such as "²", very long texts, deep nesting), a member dropped, renamed or added, a node wrapped, an
  array repeated, a duplicate key written into the text; for requests also header values and names, query
  parameters, the path, the method, Content-Length and the body;
* byte-level: the text of such an input with bits flipped, cut short, bytes inserted, deleted or repeated,
  another encoding (UTF-16/32, Latin-1, a byte order mark), other line endings.

Each case goes through the entry points of its form: ``Validator.validate`` (decoded values and envelopes),
``Validator.validate_bytes`` (JSON bytes, envelope bytes, raw ``.http`` requests), and sampled per case
``validator.validate``/``validate_bytes``/``validate_file`` (``.json``, ``.http``, ``.jsonl``),
``Validator.validate_path``/``validate_line``/``detect_kind``, a JSONL file in which the input is one line of
three, and the CLI (click's in-process runner, every output format). Every call is checked: no exception, a
report of findings, no ``internal-error`` finding and no "internal verifier error".
"""
from __future__ import annotations

import base64
import copy
import json
import os
import random
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from validator import api
from validator.api import Validator
from validator.findings import Finding, Report
from validator.jsonload import load_json_text
from validator.spec import load_spec

SPEC = load_spec()
KINDS = sorted(SPEC.kinds)
FORMATS = ("text", "json", "junit", "sarif", "github")
CORPUS = Path(__file__).resolve().parent / "corpus"
# Time per byte is measured against at least this many bytes: a tiny input's fixed cost is not a cost per byte.
PER_BYTE_FLOOR = 1024


# ============================================================ values that do not fit JSON's Python model
@dataclass(frozen=True)
class Huge:
    """An integer of ``digits`` digits: text for byte forms, ``10**digits - 1`` for decoded values (never ``str()``)."""

    digits: int
    negative: bool = False

    def text(self) -> str:
        return ("-" if self.negative else "") + "9" * self.digits

    def value(self) -> int:
        number = 10 ** self.digits - 1
        return -number if self.negative else number


@dataclass(frozen=True)
class Deep:
    """``depth`` nested arrays around ``leaf`` (built without recursion)."""

    depth: int
    leaf: Any = None

    def text(self) -> str:
        return "[" * self.depth + to_text(self.leaf) + "]" * self.depth

    def value(self) -> Any:
        node = to_object(self.leaf)
        for _ in range(self.depth):
            node = [node]
        return node


def to_object(node: Any) -> Any:
    """The decoded Python value of a generated tree."""
    if isinstance(node, (Huge, Deep)):
        return node.value()
    if isinstance(node, dict):
        return {k: to_object(v) for k, v in node.items()}
    if isinstance(node, list):
        return [to_object(v) for v in node]
    return node


def _string(text: str, ascii_only: bool) -> str:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        ascii_only = True  # a lone surrogate can only be written as a \\u escape
    return json.dumps(text, ensure_ascii=ascii_only)


def to_text(node: Any, rng: random.Random | None = None, duplicate_rate: float = 0.0, ascii_only: bool = False) -> str:
    """JSON text of a generated tree; NaN and infinities as the literals json writes, huge integers in full,
    and (with ``duplicate_rate``) some members written twice."""
    if isinstance(node, (Huge, Deep)):
        return node.text()
    if node is None:
        return "null"
    if node is True:
        return "true"
    if node is False:
        return "false"
    if isinstance(node, int):
        return str(node)
    if isinstance(node, float):
        return json.dumps(node)  # NaN, Infinity, -Infinity as json writes them
    if isinstance(node, str):
        return _string(node, ascii_only)
    if isinstance(node, list):
        return "[" + ",".join(to_text(v, rng, duplicate_rate, ascii_only) for v in node) + "]"
    if isinstance(node, dict):
        members = []
        for k, v in node.items():
            member = _string(str(k), ascii_only) + ":" + to_text(v, rng, duplicate_rate, ascii_only)
            members.append(member)
            if rng is not None and duplicate_rate and rng.random() < duplicate_rate:
                members.append(_string(str(k), ascii_only) + ":" + to_text(rng.choice(SCALARS), ascii_only=ascii_only))
        return "{" + ",".join(members) + "}"
    return json.dumps(str(node))


# ============================================================ edge values
SCALARS: list[Any] = [
    None, True, False, 0, -1, 1, 2**53 + 1, -(2**63), 2**64, 10**308, 0.1, -0.0, 1e308, 5e-324, 1.7976931348623157e308,
    float("nan"), float("inf"), float("-inf"),
    "", " ", "0", "-0.00", "1.005", "0.0000001", "9" * 40, "NaN", "Infinity", "1e400", "true", "null",
    "²", "٣٤", "¹²³", "Ⅻ", "\ud800", "a\udfffb", "\x00", "\u202e", "\ufeff", "\u0301", "e\u0301", "🏦", "\r\n",
    "2026-02-30", "9999-12-31", "0000-01-01", "2026-07-01", "2026-07-01T10:00:00Z", "EUR", "NOK", "JPY", "XXX",
    "NO9386011117947", "DE89370400440532013000", "NO93 8601 1117 947", "../..", "%00", "<x>", "~1/", "a/b",
    "1" * 4301, "x" * 5000,
]
EDGE_VALUES: list[Any] = SCALARS + [
    Huge(4301), Huge(5000, True), Huge(400), Huge(20), [], {}, [None], {"": None}, [[[]]],
    Deep(40), Deep(511), Deep(513), Deep(1000), Deep(600, {"a": 1}),
]
KEY_EDGES = [
    "", "²", "٣", "1" * 4301, "0", "00", "-1", "1e3", "\ud800", "/", "~", "~1", "a/b", "__proto__", "x" * 1000, "\x00",
    "paymentIds", "instructedAmount", "amount", "currency", "iban", "bban", "payments", "requestedExecutionDate",
    "remittanceInformationStructuredArray", "tppMessages", "transactionStatus", "_links", "method", "path",
    "headers", "body",
]
HEADER_EDGES = [
    "", " ", "²", "٣", "9" * 4301, "\ud800", "x\udc80y", "Fri, 31 Dec 9999 23:59:59 GMT", "Mon, 01 Jan 0001 00:00:00 GMT",
    "Sat, 01 Jan 2000 00:00:00 GMT", "Wed, 01 Jul 2026 10:00:00 GMT", "x" * 9000, "a\r\nb: c", "\x00", "=?utf-8?B?AAAA?=",
    "=?utf-8?Q?=FF?=", "SHA-256=", "SHA-256=" + "A" * 44, "-1", "1" * 30, "CORPORATE", "application/json", "NaN",
]
QUERY_NAMES = ["offset", "limit", "fromDate", "toDate", "bookingStatus", "withAccounts", "withAgreements",
               "allowLogicalDuplicate", "unknown", "²"]
QUERY_EDGES = ["", "0", "-1", "²", "٣", "9" * 4301, "9" * 30, "1e3", "true", "2026-02-30", "9999-12-31", "0000-01-01",
               "%ff", "%", "\ud800", "x" * 3000, "booked", "both"]


# ============================================================ seeds
_SEEDS: dict[str, Any] = {}


def payload_seeds() -> list[tuple[str, Any, str | None]]:
    """(description, value, kind) of every spec example."""
    seeds = _SEEDS.get("payloads")
    if seeds is None:
        by_schema = {k.schema_name: k.name for k in SPEC.kinds.values()}
        seeds = []
        for location, schema, value in SPEC.iter_examples():
            ref = schema.get("$ref", "") if isinstance(schema, dict) else str(schema)
            seeds.append((location, value, by_schema.get(ref.rsplit("/", 1)[-1])))
        _SEEDS["payloads"] = seeds
    return seeds


def request_seeds() -> list[tuple[str, dict]]:
    """(description, envelope) for every operation, signed with the test vector and unsigned."""
    seeds = _SEEDS.get("requests")
    if seeds is None:
        from validator.request import build_request, example_identity, example_now, sign_envelope

        key, cert = example_identity()
        seeds = []
        for op in SPEC.operations.values():
            envelope = build_request(SPEC, op.operation_id)
            seeds.append((f"{op.operation_id} unsigned", envelope))
            signed = sign_envelope(copy.deepcopy(envelope), key, cert, now=example_now(SPEC), spec=SPEC)
            seeds.append((f"{op.operation_id} signed", signed))
        _SEEDS["requests"] = seeds
    return seeds


def validators() -> dict[str, Validator]:
    """The clocks a case is checked under: a given day (``--today``), a given time (``--now``), the real time."""
    found = _SEEDS.get("validators")
    if found is None:
        from validator.request import example_now

        found = _SEEDS["validators"] = {
            "today": Validator(spec=SPEC, today=SPEC.example_today),
            "now": Validator(spec=SPEC, now=example_now(SPEC)),
            "real-time": Validator(spec=SPEC),
        }
    return found


# ============================================================ structure-aware mutations
def _slots(node: Any, out: list, parent: Any = None, key: Any = None, depth: int = 0) -> list:
    """(parent, key) of every node below the root, and (None, None) for the root."""
    out.append((parent, key))
    if depth > 40:
        return out
    if isinstance(node, dict):
        for k, v in node.items():
            _slots(v, out, node, k, depth + 1)
    elif isinstance(node, list):
        for i, v in enumerate(node):
            _slots(v, out, node, i, depth + 1)
    return out


def _get(root: Any, parent: Any, key: Any) -> Any:
    return root if parent is None else parent[key]


def _copy_json(value: Any) -> Any:
    """A copy of a plain JSON seed (json round trip: several times faster than deepcopy)."""
    return json.loads(json.dumps(value))


def _edge(rng: random.Random) -> Any:
    return copy.deepcopy(rng.choice(EDGE_VALUES))


def mutate_value(root: Any, rng: random.Random, notes: list[str], donors: list[Any] | None = None) -> Any:
    """One structure-aware mutation of ``root`` (changed in place where possible; the new root is returned)."""
    slots = _slots(root, [])
    parent, key = rng.choice(slots)
    node = _get(root, parent, key)
    op = rng.randrange(10)

    def put(value: Any) -> Any:
        if parent is None:
            return value
        parent[key] = value
        return root

    where = "root" if parent is None else repr(key)[:40]
    if op <= 2:
        value = _edge(rng)
        notes.append(f"{where} := {_describe(value)}")
        return put(value)
    if op == 3 and donors:
        donor = copy.deepcopy(rng.choice(donors))
        donor_slots = _slots(donor, [])
        dp, dk = rng.choice(donor_slots)
        notes.append(f"{where} := a node of another example")
        return put(copy.deepcopy(_get(donor, dp, dk)))
    if op == 4 and isinstance(node, dict) and node:
        k = rng.choice(list(node))
        del node[k]
        notes.append(f"drop member {str(k)[:30]!r}")
        return root
    if op == 5 and isinstance(node, dict) and node:
        k = rng.choice(list(node))
        new = rng.choice(KEY_EDGES)
        node[new] = node.pop(k)
        notes.append(f"rename member {str(k)[:30]!r} to {_describe(new)}")
        return root
    if op == 6 and isinstance(node, dict):
        new = rng.choice(KEY_EDGES)
        node[new] = _edge(rng)
        notes.append(f"add member {_describe(new)}")
        return root
    if op == 7 and isinstance(node, list) and node:
        times = rng.choice((2, 10, 300)) if rng.random() < 0.98 else 3000  # sometimes large: time per byte
        node[:] = node * times
        notes.append(f"array repeated {times} times")
        return root
    if op == 8 and isinstance(node, list) and node:
        del node[rng.randrange(len(node))]
        notes.append("drop array element")
        return root
    if op == 9 and isinstance(node, str):
        value = rng.choice((node + "²", node * 50, "\ud800" + node, node[: len(node) // 2], node.upper(), " " + node + " "))
        notes.append(f"{where} text tweaked")
        return put(value)
    value = rng.choice(([node], {"x": node}, Deep(rng.choice((2, 100, 520)), node)))
    notes.append(f"{where} wrapped")
    return put(value)


def _describe(value: Any) -> str:
    if isinstance(value, Huge):
        return f"an integer of {value.digits} digits"
    if isinstance(value, Deep):
        return f"{value.depth} nested arrays"
    if isinstance(value, str) and len(value) > 24:
        return f"a text of {len(value)} characters ({value[:8]!r}...)"
    return ascii(value)[:40]


# ============================================================ request mutations
def mutate_request(env: dict, rng: random.Random, notes: list[str]) -> dict:
    env = copy.deepcopy(env)
    headers = env.setdefault("headers", {})
    if not isinstance(headers, dict):
        headers = env["headers"] = {}
    op = rng.randrange(9)
    if op <= 2 and headers:
        name = rng.choice(list(headers))
        value = rng.choice(HEADER_EDGES)
        if name.lower() == "signature" and rng.random() < 0.5:  # inside the signature parameters
            part = rng.choice(("keyId=\"SN=", "CA=CN=", "algorithm=\"", "headers=\"", "signature=\""))
            value = headers[name].replace(part, part + rng.choice(("\ud800", "²", "9" * 4301, "\x00", "\"", "")), 1)
        headers[name] = value
        notes.append(f"header {name} := {_describe(value)}")
    elif op == 3:
        name = rng.choice(("Content-Length", "Date", "X-Request-ID", "PSU-IP-Address", "TPP-Redirect-URI", "Digest", "²", "\ud800", "x" * 300, "Bad Name"))
        value = rng.choice(HEADER_EDGES)
        headers[name] = value
        notes.append(f"add header {_describe(name)}: {_describe(value)}")
    elif op == 4 and headers:
        name = rng.choice(list(headers))
        del headers[name]
        notes.append(f"drop header {name}")
    elif op == 5:
        name, value = rng.choice(QUERY_NAMES), rng.choice(QUERY_EDGES)
        path = env.get("path", "/")
        sep = "&" if "?" in str(path) else "?"
        env["path"] = f"{path}{sep}{name}={value}"
        notes.append(f"query {name}={_describe(value)}")
    elif op == 6:
        path = str(env.get("path", "/"))
        segments = path.split("/")
        i = rng.randrange(len(segments))
        segments[i] = rng.choice(("", "²", "%ff", "%", "9" * 4301, "\ud800", "x" * 3000, "..", "sepa-credit-transfers", "{id}"))
        env["path"] = "/".join(segments)
        notes.append(f"path segment {i} changed")
    elif op == 7:
        env["method"] = rng.choice(("", "post", "GET", "DELETE", "PUT", "P OST", "\ud800", "²", None, 1))
        notes.append(f"method := {_describe(env['method'])}")
    else:
        body = env.get("body")
        if isinstance(body, str):
            loaded = load_json_text(body, max_depth=200)  # deeper bodies stay text: to_text recurses
            value = body if loaded.value is None else loaded.value
            value = mutate_value(value, rng, notes)
            env["body"] = to_text(value, rng, 0.05) if rng.random() < 0.8 else value
        else:
            env["body"] = _edge(rng)
            notes.append("body := an edge value")
    return env


def http_bytes(env: dict, rng: random.Random) -> bytes:
    """The raw HTTP/1.1 form of an envelope (CRLF or LF line endings, sometimes a Content-Length)."""
    nl = "\r\n" if rng.random() < 0.7 else "\n"
    headers = env.get("headers") or {}
    lines = [f"{env.get('method')} {env.get('path')} HTTP/1.1"] + [f"{n}: {v}" for n, v in headers.items()]
    body = env.get("body")
    body_bytes = b"" if body is None else (body if isinstance(body, str) else to_text(body)).encode("utf-8", "surrogatepass")
    if rng.random() < 0.2:
        lines.append(f"Content-Length: {rng.choice((len(body_bytes), len(body_bytes) + 1, '²', '9' * 4301, '-1', ''))}")
    return (nl.join(lines) + nl + nl).encode("utf-8", "surrogatepass") + body_bytes


# ============================================================ byte-level mutations
TOKENS = [b"NaN", b"Infinity", b"-Infinity", b"1e400", b"9" * 4301, b"true", b"false", b"null", b"\xff", b"\xc2\xb2",
          b"\xef\xbb\xbf", b"\x00", b'"\\ud800"', b"\\", b'"', b"{", b"}", b"[", b"]", b",", b":", b"\r\n", b"\n\n",
          b"[" * 600, b"\xed\xa0\x80"]


def mutate_bytes(data: bytes, rng: random.Random, notes: list[str]) -> bytes:
    op = rng.randrange(9)
    n = len(data)
    if op == 0 and n:
        b = bytearray(data)
        for _ in range(rng.choice((1, 1, 2, 8))):
            b[rng.randrange(n)] ^= 1 << rng.randrange(8)
        notes.append("bits flipped")
        return bytes(b)
    if op == 1 and n:
        cut = rng.randrange(n)
        notes.append(f"cut at byte {cut}")
        return data[:cut]
    if op == 2:
        at = rng.randrange(n + 1)
        token = rng.choice(TOKENS) if rng.random() < 0.7 else bytes(rng.randrange(256) for _ in range(rng.randrange(1, 8)))
        notes.append(f"{_describe(token)} inserted at byte {at}")
        return data[:at] + token + data[at:]
    if op == 3 and n:
        a = rng.randrange(n)
        b = min(n, a + rng.randrange(1, 64))
        notes.append(f"bytes {a}..{b} deleted")
        return data[:a] + data[b:]
    if op == 4 and n:
        a = rng.randrange(n)
        b = min(n, a + rng.randrange(1, 64))
        notes.append(f"bytes {a}..{b} repeated")
        return data[:b] + data[a:b] * rng.choice((2, 50)) + data[b:]
    if op == 5:
        encoding = rng.choice(("utf-16", "utf-16-le", "utf-32", "latin-1", "bom"))
        notes.append(f"encoded as {encoding}")
        if encoding == "bom":
            return b"\xef\xbb\xbf" + data
        text = data.decode("utf-8", "replace")
        return text.encode(encoding, "replace")
    if op == 6:
        notes.append("line endings changed")
        return data.replace(b"\r\n", b"\n") if b"\r\n" in data else data.replace(b"\n", b"\r\n").replace(b",", b",\n")
    if op == 7 and n:
        a = rng.randrange(n)
        notes.append(f"byte {a} replaced")
        return data[:a] + bytes([rng.choice(b'"{}[],:0\\ \x00\xff')]) + data[a + 1:]
    notes.append("whitespace added")
    return b" \t\n" + data + b"\n "


# ============================================================ cases
@dataclass
class Case:
    index: int
    description: str
    form: str                      # "object" (a decoded value or envelope) or "bytes"
    kind: str | None
    value: Any = None              # form "object": the generated tree (to_object() gives the payload)
    data: bytes = b""              # form "bytes"
    suffix: str = ".json"          # the file suffix its file forms use
    validator: str = "today"
    text_size: int | None = None   # form "object": the size of its JSON text, when known
    decoded: bool = False          # form "object": value is already the payload (a corpus entry)

    @property
    def size(self) -> int:
        if self.form == "bytes":
            return len(self.data)
        if self.text_size is None:
            self.text_size = len(to_text(self.value).encode("utf-8", "surrogatepass"))
        return self.text_size


def make_case(seed: int, index: int) -> Case:
    """The ``index``-th case of run ``seed``: the same pair always gives the same case."""
    rng = random.Random(f"{seed}:{index}")
    notes: list[str] = []
    validator = rng.choice(("today", "today", "now", "real-time"))
    if rng.random() < 0.35:
        name, env = rng.choice(request_seeds())
        env = _copy_json(env)
        for _ in range(rng.choice((0, 1, 1, 2, 3))):
            env = mutate_request(env, rng, notes)
        form = rng.random()
        kind = rng.choice(("request", "request", None))
        if form < 0.35:
            desc = f"{name} envelope (object)"
            case = Case(index, desc, "object", kind, value=env, suffix=".json")
        elif form < 0.65:
            data = to_text(env, rng, 0.01).encode("utf-8", "surrogatepass")
            case = Case(index, f"{name} envelope (JSON bytes)", "bytes", kind, data=data, suffix=".json")
        else:
            case = Case(index, f"{name} (.http)", "bytes", kind, data=http_bytes(env, rng), suffix=".http")
    else:
        seeds = payload_seeds()
        name, value, true_kind = rng.choice(seeds)
        value = _copy_json(value)
        donors = [v for _n, v, _k in rng.sample(seeds, 3)]
        for _ in range(rng.choice((0, 1, 1, 2, 2, 3, 4))):
            value = mutate_value(value, rng, notes, donors)
        kind = rng.choice((true_kind, true_kind, None, rng.choice(KINDS)))
        if rng.random() < 0.4:
            case = Case(index, name, "object", kind, value=value)
        else:
            data = to_text(value, rng, rng.choice((0.0, 0.0, 0.02)), ascii_only=rng.random() < 0.3).encode("utf-8", "surrogatepass")
            case = Case(index, name, "bytes", kind, data=data, suffix=rng.choice((".json", ".json", ".jsonl")))
    if case.form == "bytes" and rng.random() < 0.35:
        for _ in range(rng.choice((1, 1, 2, 4))):
            case.data = mutate_bytes(case.data, rng, notes)
    case.validator = validator
    case.description = f"#{index} {case.description} [{case.form}, kind {case.kind}, clock {validator}]" + (
        ": " + "; ".join(notes) if notes else "")
    return case


# ============================================================ running
@dataclass
class Failure:
    case: Case
    entry: str
    problem: str


@dataclass
class Outcome:
    calls: int = 0
    seconds: float = 0.0
    failures: list[Failure] = field(default_factory=list)
    # (seconds per byte, seconds, bytes, entry, description) of the slowest calls per byte
    slowest: list[tuple[float, float, int, str, str]] = field(default_factory=list)
    keep_slowest: int = 5
    # entry -> the shortest time it took (when asked for: re-timing the slowest inputs of a run)
    fastest: dict[str, float] | None = None

    def timed(self, case: Case, entry: str, call: Callable[[], Any], size: int | None = None) -> Any:
        """``call()``, timed; an exception escaping it is a failure. ``size`` defaults to the case's (found only
        when the call may rank among the slowest: an object case's size costs a serialisation)."""
        start = time.perf_counter()
        try:
            result = call()
        except BaseException as exc:  # noqa: BLE001 - an escape is exactly what is being looked for
            if isinstance(exc, KeyboardInterrupt):
                raise
            self.failures.append(Failure(case, entry, "escaped: " + "".join(traceback.format_exception_only(type(exc), exc)).strip()[:500]))
            return None
        finally:
            elapsed = time.perf_counter() - start
            if self.fastest is not None:
                self.fastest[entry] = min(elapsed, self.fastest.get(entry, elapsed))
            self.calls += 1
            self.seconds += elapsed
            full = len(self.slowest) >= self.keep_slowest
            if not full or elapsed / PER_BYTE_FLOOR > self.slowest[-1][0]:
                size = case.size if size is None else size
                per_byte = elapsed / max(size, PER_BYTE_FLOOR)
            else:
                per_byte = 0.0
            if not full or per_byte > self.slowest[-1][0]:
                self.slowest.append((per_byte, elapsed, size, entry, case.description[:300]))
                self.slowest.sort(reverse=True)
                del self.slowest[self.keep_slowest:]
        return result

    def check(self, case: Case, entry: str, reports: Any, text: bytes | None = None) -> None:
        """Every report well formed, no internal error; with the input's bytes, every line and column inside them."""
        if reports is None:
            return
        lines = None
        if text is not None:
            decoded = text[3:] if text.startswith(b"\xef\xbb\xbf") else text
            lines = decoded.decode("utf-8", "replace").split("\n")
        for report in reports if isinstance(reports, list) else [reports]:
            if not isinstance(report, Report):
                self.failures.append(Failure(case, entry, f"returned {type(report).__name__}, not a Report"))
                continue
            for f in report.findings:
                if not isinstance(f, Finding):
                    self.failures.append(Failure(case, entry, f"a finding is a {type(f).__name__}"))
                elif f.rule == "internal-error" or "internal verifier error" in f.message:
                    self.failures.append(Failure(case, entry, f"internal error: {f.pointer} {f.message[:300]}"))
                elif lines is not None and f.line is not None and not (
                        1 <= f.line <= len(lines) and 1 <= (f.column or 1) <= len(lines[f.line - 1]) + 1):
                    self.failures.append(Failure(case, entry, f"position {f.line}:{f.column} of {f.rule} {f.pointer[:60]} "
                                                              f"is outside the input ({len(lines)} lines)"))


def run_case(case: Case, outcome: Outcome, rng: random.Random | None = None, *, every_entry: bool = False,
             workdir: Path | None = None) -> None:
    """``case`` through its form's entry points: always the Validator method, the others sampled (every one
    when ``every_entry``)."""
    rng = rng or random.Random(case.index)
    v = validators()[case.validator]
    kind = case.kind

    def sampled(p: float) -> bool:
        return every_entry or rng.random() < p

    if case.form == "object":
        payload = case.value if case.decoded else to_object(case.value)
        outcome.check(case, "Validator.validate", outcome.timed(case, "Validator.validate", lambda: v.validate(payload, kind)))
        if sampled(0.02):
            today = v.today.isoformat() if v.today_given else None
            outcome.check(case, "validator.validate", outcome.timed(case, "validator.validate", lambda: api.validate(payload, kind, today=today)))
        if sampled(0.05):
            outcome.timed(case, "Validator.detect_kind", lambda: v.detect_kind(payload))
        return
    data = case.data
    outcome.check(case, "Validator.validate_bytes", outcome.timed(case, "Validator.validate_bytes", lambda: v.validate_bytes(data, kind)), data)
    if sampled(0.02):
        today = v.today.isoformat() if v.today_given else None
        outcome.check(case, "validator.validate_bytes", outcome.timed(case, "validator.validate_bytes", lambda: api.validate_bytes(data, kind, today=today)))
    if sampled(0.03):
        outcome.check(case, "Validator.validate_line", outcome.timed(case, "Validator.validate_line", lambda: v.validate_line(data, kind, "line")))
    workdir = workdir or Path(tempfile.gettempdir())
    if sampled(0.02):
        path = workdir / f"fuzz-{os.getpid()}-{case.index}{case.suffix}"
        path.write_bytes(data)
        try:
            outcome.check(case, f"validate_file({case.suffix})", outcome.timed(case, f"validate_file({case.suffix})", lambda: v.validate_path(path, kind)))
            if sampled(0.2):
                today = v.today.isoformat() if v.today_given else None
                outcome.check(case, "validator.validate_file", outcome.timed(case, "validator.validate_file", lambda: api.validate_file(path, kind, today=today)))
        finally:
            path.unlink()
    if sampled(0.02):
        _run_jsonl(case, outcome, v, workdir)
    if sampled(0.01):
        _run_cli(case, outcome, rng, workdir)


_GOOD_LINE = b'{"paymentIds":["a"]}'


def _run_jsonl(case: Case, outcome: Outcome, v: Validator, workdir: Path) -> None:
    """The input as the middle line of three: every line must keep its report."""
    line = case.data.replace(b"\r", b" ").replace(b"\n", b" ")
    if not line.strip(b" \t"):
        line = b"null"
    path = workdir / f"fuzz-{os.getpid()}-{case.index}.jsonl"
    path.write_bytes(_GOOD_LINE + b"\n" + line + b"\n" + _GOOD_LINE + b"\n")
    try:
        reports = outcome.timed(case, "validate_file(.jsonl)", lambda: v.validate_path(path, "signing-basket"), len(line))
    finally:
        path.unlink()
    outcome.check(case, "validate_file(.jsonl)", reports)
    if reports is not None and [r.source.rsplit(":", 1)[-1] for r in reports] != ["1", "2", "3"]:
        outcome.failures.append(Failure(case, "validate_file(.jsonl)", f"{len(reports)} reports for 3 lines"))


def _run_cli(case: Case, outcome: Outcome, rng: random.Random, workdir: Path, fmt: str | None = None) -> None:
    from click.testing import CliRunner

    from validator.cli import main

    fmt = fmt or rng.choice(FORMATS)
    args = ["--format", fmt]
    clock = validators()[case.validator]
    if clock.now is not None:
        args += ["--now", clock.now.isoformat()]
    elif clock.today_given:
        args += ["--today", clock.today.isoformat()]
    if case.kind:
        args += ["--kind", case.kind]
    if case.suffix == ".json" or rng.random() < 0.5:
        args.append("-")
        stdin = case.data
        path = None
    else:
        path = workdir / f"fuzz-cli-{os.getpid()}-{case.index}{case.suffix}"
        path.write_bytes(case.data)
        args.append(str(path))
        stdin = None
    entry = f"cli --format {fmt}"
    try:
        result = outcome.timed(case, entry, lambda: CliRunner().invoke(main, args, input=stdin))
    finally:
        if path is not None:
            path.unlink()
    if result is None:
        return
    exception = result.exception
    if exception is not None and not isinstance(exception, SystemExit):
        detail = "".join(traceback.format_exception(type(exception), exception, exception.__traceback__))[-800:]
        outcome.failures.append(Failure(case, entry, f"escaped: {detail}"))
    elif result.exit_code not in (0, 1) and not (result.exit_code == 2 and "nothing to validate" in result.output):
        # exit 2 with one line is the CLI's answer to a JSONL file of blank lines
        outcome.failures.append(Failure(case, entry, f"exit code {result.exit_code}: {result.output[-300:]}"))
    elif "Traceback" in result.output:
        outcome.failures.append(Failure(case, entry, "printed a traceback"))
    elif "internal-error" in result.output or "internal verifier error" in result.output:
        outcome.failures.append(Failure(case, entry, "reported an internal error"))


def run_cli_every_format(case: Case, outcome: Outcome, workdir: Path) -> None:
    rng = random.Random(case.index)
    for fmt in FORMATS:
        _run_cli(case, outcome, rng, workdir, fmt)


# ============================================================ the corpus of inputs once found failing
def case_record(case: Case, note: str) -> dict:
    """A corpus entry: JSON text for decoded values (integers in full, NaN literals, \\u escapes), base64 for bytes."""
    record: dict[str, Any] = {"note": note, "form": case.form, "kind": case.kind, "clock": case.validator,
                              "suffix": case.suffix}
    if case.form == "object":
        record["text"] = to_text(case.value, ascii_only=True)
    else:
        record["base64"] = base64.b64encode(case.data).decode("ascii")
    return record


def case_from_record(record: dict, name: str) -> Case:
    case = Case(0, f"corpus {name}: {record.get('note', '')}", record["form"], record.get("kind"),
                suffix=record.get("suffix", ".json"), validator=record.get("clock", "today"))
    if case.form == "object":
        case.value = _decode_full(record["text"])
        case.text_size = len(record["text"])
        case.decoded = True
    else:
        case.data = base64.b64decode(record["base64"]) if "base64" in record else record["text"].encode("utf-8")
    return case


def _decode_full(text: str) -> Any:
    """JSON text as Python decodes it with no integer-length or nesting limit (the object API takes such values)."""
    limit, recursion = sys.get_int_max_str_digits(), sys.getrecursionlimit()
    sys.set_int_max_str_digits(0)
    sys.setrecursionlimit(max(recursion, 20_000))
    try:
        return json.loads(text)
    finally:
        sys.set_int_max_str_digits(limit)
        sys.setrecursionlimit(recursion)


def corpus_cases() -> list[Case]:
    cases = []
    for path in sorted(CORPUS.glob("*.json")):
        cases.append(case_from_record(json.loads(path.read_text(encoding="utf-8")), path.stem))
    return cases


def save_failure(failure: Failure, directory: Path) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    record = case_record(failure.case, f"{failure.entry}: {failure.problem[:200]} ({failure.case.description[:200]})")
    path = directory / f"found-{failure.case.index}-{failure.entry.split('(')[0].replace(' ', '-').replace('.', '-')}.json"
    path.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    return path


def rss_kib() -> int | None:
    """Resident set size of this process (Linux /proc; else the peak from getrusage)."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    try:
        import resource

        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    except (ImportError, OSError):
        return None


def fuzz(seed: int, indices, *, seconds: float | None = None, workdir: Path | None = None,
         keep_slowest: int = 5) -> tuple[Outcome, int]:
    """Run the cases ``indices`` of ``seed`` (stopping after ``seconds``); (outcome, cases run)."""
    outcome = Outcome(keep_slowest=keep_slowest)
    deadline = time.monotonic() + seconds if seconds else None
    done = 0
    for index in indices:
        if deadline is not None and time.monotonic() > deadline:
            break
        case = make_case(seed, index)
        run_case(case, outcome, random.Random(f"entries:{seed}:{index}"), workdir=workdir)
        done += 1
    return outcome, done


__all__ = ["Case", "Outcome", "Failure", "make_case", "run_case", "fuzz", "corpus_cases", "save_failure",
           "run_cli_every_format", "rss_kib", "SPEC"]
