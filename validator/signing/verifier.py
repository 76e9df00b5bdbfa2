"""Verification of a signed request against the profile. ``verify_request`` never raises: every problem is a
``Finding`` whose rule is one of ``SIGNATURE_RULES``.

The algorithm is derived from the certificate key and the options (RSA PKCS#1 v1.5 with SHA-256), never from the
message: the ``algorithm`` parameter is only checked against ``VerifyOptions.allowed_algorithms``. ``hs2019`` (when
allowed) is a label only; with the RSA key the profile requires, the signature is still RSA-SHA256.
"""
from __future__ import annotations

import base64
import binascii
import datetime as _dt
import functools
import re
from dataclasses import dataclass
from typing import Any, Mapping

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import padding

from ..findings import ERROR, Finding, escape_pointer_token
from .cavage import (REQUEST_TARGET, SignableRequest, SignatureFormatError, SigningStringError, build_signing_string,
                     parse_signature, signature_head_at_once)
from .certificate import CertificateError, certificate_facts, validity_period_problem
from .digest import check_digest, sha256_header
from .keyid import KeyIdError, issuer_matches, issuer_rdns_match, parse_key_id
from .rules import PROFILE_SIGNED_HEADERS, SIGNATURE_RULES



@dataclass(frozen=True)
class VerifyOptions:
    now: _dt.datetime | None = None
    date_window: _dt.timedelta | None = _dt.timedelta(minutes=5)  # None: Date freshness is not checked
    allowed_algorithms: tuple[str, ...] = ("rsa-sha256",)
    digest_required: bool = True
    signature_required: bool = True
    max_header_length: int = 8192
    mandatory_signed: tuple[str, ...] = PROFILE_SIGNED_HEADERS


_CANONICAL = {
    "signature": "Signature", "digest": "Digest", "tpp-signature-certificate": "TPP-Signature-Certificate",
    "date": "Date", "x-request-id": "X-Request-ID", "psu-id": "PSU-ID", "psu-corporate-id": "PSU-Corporate-ID",
    "tpp-redirect-uri": "TPP-Redirect-URI",
}
# The verifier's own headers: one it cannot read (over the length it reads) is refused under its rule.
_UNREADABLE = {"signature": "signature-malformed", "tpp-signature-certificate": "certificate-invalid",
               "digest": "digest-malformed", "date": "date-malformed"}
_MONTHS = {m: i for i, m in enumerate(
    ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"), 1)}
_IMF_RE = re.compile(r"(Mon|Tue|Wed|Thu|Fri|Sat|Sun), (\d{2}) (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) "
                     r"(\d{4}) (\d{2}):(\d{2}):(\d{2}) GMT\Z")
_WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")


def _whole_seconds(span: _dt.timedelta) -> _dt.timedelta:
    """A span as people read it (H:MM:SS): a Date header has whole seconds, so should the message."""
    return _dt.timedelta(seconds=round(span.total_seconds()))


def parse_imf_fixdate(value: str) -> _dt.datetime:
    if type(value) is str and len(value) <= _IMF_CACHED_LENGTH:
        return _parse_imf_fixdate_cached(value)
    return _parse_imf_fixdate(value)


# A Date has a resolution of one second: at any rate worth caching, many requests carry the same one.
_IMF_CACHED_LENGTH = 64  # an IMF-fixdate is 29 characters; longer text is refused anyway, and not kept


def _parse_imf_fixdate(value: str) -> _dt.datetime:
    m = _IMF_RE.match(value.strip(" \t"))
    if not m:
        raise ValueError(f"Date {value[:60]!r} is not an IMF-fixdate (e.g. 'Tue, 01 Jul 2025 12:00:00 GMT')")
    wd, day, mon, year, hh, mm, ss = m.groups()
    when = _dt.datetime(int(year), _MONTHS[mon], int(day), int(hh), int(mm), int(ss), tzinfo=_dt.timezone.utc)
    if _WEEKDAYS[when.weekday()] != wd:
        raise ValueError(f"Date {value!r} names {wd} but that day is a {_WEEKDAYS[when.weekday()]}")
    return when


# Parsing is pure and a datetime immutable; a text that is no IMF-fixdate raises again each time (never cached).
_parse_imf_fixdate_cached = functools.lru_cache(maxsize=64)(_parse_imf_fixdate)
# Stateless, so one of each serves every verification.
_PKCS1V15 = padding.PKCS1v15()
_SHA256 = hashes.SHA256()


class _Collector:
    def __init__(self, names: dict[str, str]):
        self.findings: list[Finding] = []
        self.names = names

    def add(self, rule_id: str, header: str, message: str) -> None:
        rule = SIGNATURE_RULES[rule_id]
        name = _CANONICAL.get(header) or self.names.get(header) or header
        self.findings.append(Finding(rule.id, rule.severity, "/headers/" + escape_pointer_token(name), message,
                                     rule.code, rule.status, rule.ref))


def _as_text(x: Any) -> str:
    if isinstance(x, str):
        return x
    if isinstance(x, (bytes, bytearray)):
        return bytes(x).decode("iso-8859-1")
    return str(x)


def _normalise_headers(headers: Any) -> list[tuple[str, str]]:
    if type(headers) is list:
        for h in headers:
            if type(h) is not tuple or len(h) != 2 or type(h[0]) is not str or type(h[1]) is not str:
                break
        else:
            return headers  # already (name, value) text pairs, as the request check hands them
    out = []
    try:
        items = list(headers or ())
    except TypeError:
        return out
    for item in items:
        try:
            name, value = item
        except (TypeError, ValueError):
            continue
        out.append((_as_text(name), _as_text(value)))
    return out


def verify_request(request: SignableRequest, options: VerifyOptions = VerifyOptions(), *,
                   header_index: Mapping[str, list[str]] | None = None,
                   header_values_within: int | None = None) -> list[Finding]:
    """Check Signature, TPP-Signature-Certificate, Digest and Date of ``request``. Never raises.

    ``header_index``: the request's headers by lower-case name (values in wire order), when the caller has built it
    (the whole-request check): a request the verification finds nothing in is then told at once.
    ``header_values_within``: when the caller knows it of that index, a length no value in it exceeds, every name
    having one value, trimmed of blanks (:attr:`validator.request.message.HttpRequest.header_values_within`)."""
    if header_index is not None:
        try:
            if _verified_at_once(request, options, header_index, header_values_within):
                return []
        except Exception:  # noqa: BLE001 - the full verification below decides, and words what it finds
            pass
    try:
        return _verify(request, options)
    except Exception as exc:  # a defect of the verifier itself must still refuse the request, loudly
        rule = SIGNATURE_RULES["signature-invalid"]
        return [Finding(rule.id, ERROR, "/headers/Signature",
                        f"internal verifier error, request not verified: {type(exc).__name__}: {exc}",
                        rule.code, rule.status, rule.ref)]


@dataclass(frozen=True)
class _SigningPlan:
    """How :func:`_verified_at_once` reads the headers a Signature lists: the lower-case names the profile wants
    signed that it leaves out (``unsigned``: none of them may be sent), each other listed header's name with the
    ``name: `` that starts its line (``prefixed``), and where the ``(request-target)`` line goes among those lines
    (its places, ascending; none when it is not signed)."""

    unsigned: tuple[str, ...]
    prefixed: tuple[tuple[str, str], ...]
    target_at: tuple[int, ...]


# Plans by (the profile's mandatory signed headers, the Signature's headers): a client signs the same list on every
# request. Bounded (emptied when full), as the list comes from the request.
_SIGNING_PLANS: dict[tuple[tuple[str, ...], tuple[str, ...]], _SigningPlan] = {}
_SIGNING_PLANS_BOUND = 256


def _signing_plan(mandatory: tuple[str, ...], signed: tuple[str, ...]) -> _SigningPlan:
    key = (mandatory, signed)
    plan = _SIGNING_PLANS.get(key)
    if plan is None:
        unsigned = tuple(dict.fromkeys(lname for lname in (name.lower() for name in mandatory) if lname not in signed))
        prefixed = tuple((f"{name}: ", name) for name in signed if name != REQUEST_TARGET)
        target_at = tuple(i for i, name in enumerate(signed) if name == REQUEST_TARGET)
        plan = _SigningPlan(unsigned, prefixed, target_at)
        if len(_SIGNING_PLANS) >= _SIGNING_PLANS_BOUND:
            _SIGNING_PLANS.clear()
        _SIGNING_PLANS[key] = plan
    return plan


def _verified_at_once(request: SignableRequest, options: VerifyOptions, index: Mapping[str, list[str]],
                      within: int | None = None) -> bool:
    """True when :func:`_verify` would find nothing in ``request`` (whose headers ``index`` holds by lower-case name),
    decided without wording anything: every header once and within the length read, Date fresh, Digest exactly the
    SHA-256 of the body as clients send it, the Signature parameters, certificate, keyId and signing string as the
    profile wants them, and the RSA signature good. False as soon as any of that is not so: the full verification
    then finds and words what it is (so a refused request costs one more look, never another verdict)."""
    method, target, body = request.method, request.target, request.body
    if type(method) is not str or type(target) is not str or type(body) is not bytes:
        return False
    limit = options.max_header_length
    if within is None or within > limit:  # not known of the index: each header once, within the limit?
        for values in index.values():
            if len(values) != 1 or len(values[0]) > limit:
                return False
    date_time = None
    date = index.get("date")
    if date is not None:
        date_time = parse_imf_fixdate(date[0])  # raises for a malformed one: the full verification words it
        now = options.now
        if now is not None and options.date_window is not None:
            if now.tzinfo is None:
                now = now.replace(tzinfo=_dt.timezone.utc)
            if abs(date_time - now) > options.date_window:
                return False
    digest = index.get("digest")
    if digest is None:
        if options.digest_required:
            return False
    elif digest[0] != sha256_header(body):
        return False
    signature_values = index.get("signature")
    certificate_values = index.get("tpp-signature-certificate")
    if signature_values is None or certificate_values is None:
        return False
    at_once = signature_head_at_once(signature_values[0])
    if at_once is None:
        return False
    params, _encoded, signature = at_once  # params: keyId, algorithm and headers as the value has them
    facts = certificate_facts(certificate_values[0])
    public_key = facts.public_key
    if public_key is None or facts.issuer_rdns is None:
        return False
    if validity_period_problem(facts.not_before, facts.not_after,
                              options.now or date_time or _dt.datetime.now(_dt.timezone.utc)):
        return False
    if params.algorithm is not None and params.algorithm not in options.allowed_algorithms:
        return False
    plan = _signing_plan(options.mandatory_signed, params.headers)
    for name in plan.unsigned:  # headers the profile wants signed that the signature leaves out: none may be sent
        if name in index:
            return False
    key_id = parse_key_id(params.key_id)
    if key_id.serial != facts.serial_number or not issuer_rdns_match(key_id, facts.issuer_rdns):
        return False
    lines = []
    trimmed = within is not None  # the parser's index: its values are trimmed already
    for prefix, name in plan.prefixed:
        values = index.get(name)
        if values is None:
            return False
        lines.append(prefix + values[0] if trimmed else prefix + values[0].strip(" \t"))
    for at in plan.target_at:
        lines.insert(at, f"{REQUEST_TARGET}: {method.lower()} {target}")
    signing_string = "\n".join(lines)
    # ASCII, and no value forging a line (the only line feeds are those between the lines)
    if not signing_string.isascii() or signing_string.count("\n") != len(lines) - 1 or "\r" in signing_string \
            or "\x00" in signing_string:
        return False
    if len(signature) != (public_key.key_size + 7) // 8:
        return False
    try:
        public_key.verify(signature, signing_string.encode("ascii"), _PKCS1V15, _SHA256)
    except InvalidSignature:
        return False
    return True


def _verify(request: SignableRequest, options: VerifyOptions) -> list[Finding]:
    headers = _normalise_headers(getattr(request, "headers", ()))
    method = _as_text(getattr(request, "method", "") or "")
    target = _as_text(getattr(request, "target", "") or "")
    body = getattr(request, "body", None)
    if body is not None and not isinstance(body, (bytes, bytearray, memoryview)):
        body = _as_text(body).encode("utf-8")
    elif body is not None:
        body = bytes(body)

    index: dict[str, list[str]] = {}
    wire_names: dict[str, str] = {}
    for name, value in headers:
        lname = name.lower()
        index.setdefault(lname, []).append(value)
        wire_names.setdefault(lname, name)
    out = _Collector(wire_names)

    oversized: set[str] = set()
    limit = options.max_header_length
    for lname, values in index.items():
        if len(values[0]) <= limit and len(values) == 1:
            continue
        longest = max(len(v) for v in values)
        if longest > limit:
            oversized.add(lname)
            out.add("header-oversized", lname,
                    f"{_CANONICAL.get(lname) or wire_names[lname]} value is {longest} characters long, "
                    f"the limit is {options.max_header_length}")

    # A33: the limit bounds what the verifier reads; the interface states none, so an oversized value is only a
    # warning. A header the signature check needs and cannot read is refused under that header's own rule (A8).
    for lname in sorted(oversized & _UNREADABLE.keys()):
        out.add(_UNREADABLE[lname], lname, f"{_CANONICAL[lname]} is longer than the {limit} characters the verifier "
                                           "reads; it is not read")

    def single(lname: str) -> tuple[str | None, bool]:
        """(value, usable): usable is False when it is oversized or repeated (a finding is then emitted)."""
        values = index.get(lname)
        if not values:
            return None, True
        if lname in oversized:
            return None, False
        if len(values) > 1:
            rule = {"signature": "signature-malformed", "tpp-signature-certificate": "certificate-invalid",
                    "digest": None, "date": "date-malformed"}[lname]
            if rule is not None:
                out.add(rule, lname, f"{_CANONICAL[lname]} occurs {len(values)} times; exactly one is allowed")
                return None, False
            return ", ".join(values), True
        return values[0], True

    # --- Date -----------------------------------------------------------------------------------------------
    date_value, date_ok = single("date")
    date_time = None
    if date_value is not None:
        try:
            date_time = parse_imf_fixdate(date_value)
        except ValueError as exc:
            out.add("date-malformed", "date", str(exc))
        if date_time is not None and options.now is not None and options.date_window is not None:
            now = options.now if options.now.tzinfo else options.now.replace(tzinfo=_dt.timezone.utc)
            skew = date_time - now
            if abs(skew) > options.date_window:
                direction = "ahead of" if skew > _dt.timedelta(0) else "behind"
                out.add("signature-date-window", "date",
                        f"Date {date_value.strip()} is {_whole_seconds(abs(skew))} {direction} the clock "
                        f"({now.astimezone(_dt.timezone.utc).isoformat(timespec='seconds').replace('+00:00', 'Z')}); "
                        f"the window is {_whole_seconds(options.date_window)}")

    # --- Digest ---------------------------------------------------------------------------------------------
    digest_value, digest_ok = single("digest")
    if digest_value is None and digest_ok:
        if options.digest_required:
            out.add("digest-missing", "digest", "Digest is required for this operation but absent")
    elif digest_value is not None:
        problems = check_digest(digest_value, body)
        for p in problems:
            out.add(f"digest-{p.kind}", "digest", p.message)
        if body is None and not problems:
            out.add("digest-unverifiable", "digest",
                    "the body bytes are not available, so Digest was checked for syntax only")

    # --- Signature ------------------------------------------------------------------------------------------
    sig_value, sig_ok = single("signature")
    if sig_value is None:
        if sig_ok and options.signature_required:
            out.add("signature-missing", "signature", "Signature is required on every operation but absent")
        if sig_ok and not options.signature_required and "tpp-signature-certificate" not in index:
            return out.findings
    params = None
    if sig_value is not None:
        try:
            params = parse_signature(sig_value)
        except SignatureFormatError as exc:
            out.add("signature-malformed", "signature", str(exc))

    # --- Certificate ----------------------------------------------------------------------------------------
    cert = facts = None
    public_key = None
    cert_value, cert_ok = single("tpp-signature-certificate")
    if cert_value is None:
        if cert_ok:
            out.add("certificate-missing", "tpp-signature-certificate",
                    "TPP-Signature-Certificate is required on every operation but absent")
    else:
        try:
            facts = certificate_facts(cert_value)
            cert = facts.certificate
        except CertificateError as exc:
            out.add("certificate-invalid", "tpp-signature-certificate", str(exc))
        if facts is not None:
            problem = facts.key_problem
            if problem:
                out.add("certificate-key-weak", "tpp-signature-certificate", problem)
            else:
                public_key = facts.public_key
            at = options.now or date_time or _dt.datetime.now(_dt.timezone.utc)
            validity = validity_period_problem(facts.not_before, facts.not_after, at)
            if validity:
                kind, message = validity
                out.add("certificate-expired" if kind == "expired" else "certificate-not-yet-valid",
                        "tpp-signature-certificate", message)

    if params is None:
        return out.findings

    # --- Signature parameters against the profile -----------------------------------------------------------
    algorithm_ok = True
    if params.algorithm is not None and params.algorithm not in options.allowed_algorithms:
        algorithm_ok = False
        out.add("signature-algorithm", "signature",
                f"algorithm {params.algorithm!r} is not allowed; expected "
                + " or ".join(repr(a) for a in options.allowed_algorithms))
    for name in options.mandatory_signed:
        lname = name.lower()
        if lname in index and lname not in params.headers:
            out.add("signature-headers-incomplete", "signature",
                    f"{_CANONICAL.get(lname) or wire_names[lname]} is present but not listed in the Signature "
                    f"headers parameter ({' '.join(params.headers)})")
    try:
        key_id = parse_key_id(params.key_id)
    except KeyIdError as exc:
        key_id = None
        out.add("signature-malformed", "signature", f"keyId {params.key_id[:120]!r}: {exc}")
    if key_id is not None and facts is not None:
        if key_id.serial != cert.serial_number:
            out.add("signature-keyid-mismatch", "signature",
                    f"keyId serial {key_id.serial:X} is not the certificate serial {cert.serial_number:X}")
        if not (issuer_rdns_match(key_id, facts.issuer_rdns) if facts.issuer_rdns is not None
                else issuer_matches(key_id, cert)):
            out.add("signature-keyid-mismatch", "signature",
                    f"keyId issuer {key_id.issuer_text[:200]!r} is not the certificate issuer "
                    f"{cert.issuer.rfc4514_string()!r}")

    try:
        signature = base64.b64decode(params.signature, validate=True)
    except (binascii.Error, ValueError):
        out.add("signature-malformed", "signature", "the signature parameter is not valid Base64")
        return out.findings

    signed_oversized = [h for h in params.headers if h in oversized]
    try:
        signing_string = build_signing_string(method, target, params.headers, index)
    except SigningStringError as exc:
        out.add("signature-header-injection" if exc.injection else "signature-invalid",
                "signature" if exc.header.startswith("(") or not exc.injection else exc.header, str(exc))
        return out.findings
    if signed_oversized:
        out.add("signature-invalid", "signature",
                f"signed header(s) {', '.join(signed_oversized)} longer than {limit} characters are not read; the "
                "signature is not verified")
        return out.findings
    if public_key is None or not algorithm_ok:
        return out.findings
    expected_len = (public_key.key_size + 7) // 8
    if len(signature) != expected_len:
        out.add("signature-invalid", "signature",
                f"the signature is {len(signature)} bytes, the {public_key.key_size}-bit key needs {expected_len}")
        return out.findings
    try:
        public_key.verify(signature, signing_string.encode("utf-8"), _PKCS1V15, _SHA256)
    except InvalidSignature:
        out.add("signature-invalid", "signature",
                "the RSA-SHA256 signature does not verify with the certificate key over the signing string of "
                f"headers ({' '.join(params.headers)})")
    return out.findings
