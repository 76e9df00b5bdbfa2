"""The ``Digest`` header (RFC 3230 / RFC 5843): ``SHA-256=<base64>`` or ``SHA-512=<base64>`` of the exact body bytes.

A comma-separated list is allowed and algorithm names are case-insensitive. At least one of SHA-256/SHA-512 must be
present; every entry whose algorithm can be computed here (SHA-256, SHA-512, and the weak MD5/SHA that may accompany
them) must match. Entries with other algorithm names (e.g. ``UNIXsum``) are ignored. MD5 or SHA alone is refused.
"""
from __future__ import annotations

import base64
import binascii
import hashlib
import re
from dataclasses import dataclass

ACCEPTED = {"SHA-256": "sha256", "SHA-512": "sha512"}
WEAK = {"MD5": "md5", "SHA": "sha1"}
_HASHES = {**ACCEPTED, **WEAK}
_CONSTRUCTORS = {alg: getattr(hashlib, name) for alg, name in _HASHES.items()}
_DIGEST_SIZES = {alg: make().digest_size for alg, make in _CONSTRUCTORS.items()}
_ALG_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9\-]*\Z")


def compute_digest(body: bytes | None, algorithm: str = "SHA-256") -> str:
    """``"SHA-256=<base64>"`` of the exact body bytes (``None`` and ``b""`` hash the empty input)."""
    name = algorithm.upper()
    if name not in ACCEPTED:
        raise ValueError(f"digest algorithm {algorithm!r} is not SHA-256 or SHA-512")
    raw = hashlib.new(ACCEPTED[name], body or b"").digest()
    return f"{name}=" + base64.b64encode(raw).decode("ascii")


@dataclass(frozen=True)
class DigestProblem:
    kind: str        # "malformed" | "algorithm" | "mismatch"
    message: str


def parse_digest(value: str) -> list[tuple[str, str]]:
    """``[(ALGORITHM upper-case, base64 value), ...]``; raises ValueError with a specific message."""
    if not isinstance(value, str) or not value.strip(" \t"):
        raise ValueError("Digest is empty")
    out: list[tuple[str, str]] = []
    for item in value.split(","):
        item = item.strip(" \t")
        if "=" not in item:
            raise ValueError(f"Digest entry {item[:40]!r} is not of the form <algorithm>=<base64>")
        alg, _, b64 = item.partition("=")
        alg = alg.strip(" \t")
        if not _ALG_RE.match(alg):
            raise ValueError(f"Digest algorithm name {alg[:40]!r} is not a token")
        out.append((alg.upper(), b64.strip(" \t")))
    return out


def sha256_header(body: bytes) -> str:
    """The Digest value a client sends for ``body``: ``SHA-256=<base64>``."""
    return "SHA-256=" + base64.b64encode(hashlib.sha256(body).digest()).decode("ascii")


def check_digest(value: str, body: bytes | None) -> list[DigestProblem]:
    """Problems with a Digest header value against ``body``. ``body=None`` checks the syntax only."""
    if body is not None and value == sha256_header(body):
        return []  # the form clients send, exactly: well-formed, SHA-256, matching; nothing more to look at
    try:
        entries = parse_digest(value)
    except ValueError as exc:
        return [DigestProblem("malformed", str(exc))]
    problems: list[DigestProblem] = []
    seen = set()
    decoded: list[tuple[str, bytes]] = []
    for alg, b64 in entries:
        if alg in seen:
            problems.append(DigestProblem("malformed", f"Digest lists {alg} more than once"))
            continue
        seen.add(alg)
        if alg not in _HASHES:
            continue
        try:
            raw = base64.b64decode(b64, validate=True)
        except (binascii.Error, ValueError):
            problems.append(DigestProblem("malformed", f"Digest {alg} value {b64[:60]!r} is not valid Base64"))
            continue
        expected_len = _DIGEST_SIZES[alg]
        if len(raw) != expected_len:
            problems.append(DigestProblem(
                "malformed", f"Digest {alg} value is {len(raw)} bytes, a {alg} digest is {expected_len} bytes"))
            continue
        decoded.append((alg, raw))
    if not any(alg in ACCEPTED for alg in seen):
        named = ", ".join(sorted(seen)) or "none"
        problems.append(DigestProblem(
            "algorithm", f"Digest must contain SHA-256 or SHA-512; it has only {named}"))
    if body is None:
        return problems
    for alg, raw in decoded:
        actual = _CONSTRUCTORS[alg](body).digest()
        if actual != raw:
            problems.append(DigestProblem(
                "mismatch",
                f"Digest {alg} does not match the body: expected {base64.b64encode(actual).decode('ascii')}, "
                f"got {base64.b64encode(raw).decode('ascii')} ({len(body)} body bytes)"))
    return problems
