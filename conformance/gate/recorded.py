"""A finding's request as a later replay needs it, and that request rebuilt and signed anew.

A curl command expires with its Date and Signature. What a finding keeps instead is the request without its
signature headers (method, target, the other headers, the body) and what the check did to those on purpose, found
by signing the request again exactly as it was sent -- RSA PKCS#1 v1.5 signatures are deterministic, so a request
signed as the client signs it gives the same Signature again, and whatever differs was altered by the check:

- ``digest``: the Digest does not match the body (a tampered body): the replay sends the recorded Digest value;
- ``date``: the Date was off the clock by more than :data:`DATE_SLACK` (a stale or future date): the replay sends a
  Date off by the same number of seconds from its own clock;
- ``x-request-id``: not a UUID (a check of its format): the replay keeps it; a UUID is issued anew;
- ``absent:<header>``: a signature header the check removed: the replay removes it after signing.

A request whose Signature itself was altered, or that was signed by a certificate that is not one of the run's two
identities (an expired or foreign certificate a check made), cannot be re-created from the request alone: its
check is run again instead.
"""
from __future__ import annotations

import base64
import datetime as _dt
import re
import uuid
from typing import Any, Iterable

from conformance.client import Identity, PreparedRequest
from validator.signing.cavage import SignableRequest
from validator.signing.certificate import certificate_header_value
from validator.signing.digest import compute_digest
from validator.signing.signer import imf_fixdate, sign_request
from validator.signing.verifier import parse_imf_fixdate

SIGNATURE_HEADERS = ("date", "digest", "signature", "tpp-signature-certificate")
DATE_SLACK = 30   # seconds a Date may be off the sending clock and still count as the client's own
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\Z")
IDENTITIES = ("tpp", "other")


class NotReplayable(Exception):
    """The request cannot be re-created alone (the message says why)."""


def _value(headers: list[tuple[str, str]], name: str) -> str | None:
    return next((v for n, v in headers if n.lower() == name), None)


def record(request: PreparedRequest, identities: Any, sent_at: _dt.datetime, *, gateway: Iterable[str] = (),
           also_signed: tuple[str, ...] = ()) -> dict[str, Any]:
    """The request as a replay needs it: ``method``, ``target``, ``headers`` (name-value pairs, signature headers
    and the run's ``gateway`` header names left out: the report keeps no API key), ``body`` (text) or
    ``body_base64``, ``signed``, ``identity`` (tpp/other, or null unsigned) and ``altered`` (what the check did on
    purpose, see the module); ``date_offset`` (seconds) with an altered date; ``not_replayable`` (why) when the
    request cannot be re-created alone. ``also_signed``: the profile's extra signed headers, as the run signed."""
    headers = list(request.headers)
    hidden = {*SIGNATURE_HEADERS, *(n.lower() for n in gateway)}
    out: dict[str, Any] = {
        "method": request.method, "target": request.target,
        "headers": [[n, v] for n, v in headers if n.lower() not in hidden]}
    try:
        out["body"] = request.body.decode("utf-8")
    except UnicodeDecodeError:
        out["body_base64"] = base64.b64encode(request.body).decode("ascii")
    altered: list[str] = []
    request_id = _value(headers, "x-request-id")
    if request_id is not None and not _UUID.match(request_id):
        altered.append("x-request-id")
    present = {n.lower() for n, _v in headers}
    certificate = _value(headers, "tpp-signature-certificate")
    out["signed"] = "signature" in present or certificate is not None
    out["identity"] = None
    if out["signed"]:
        who = next((name for name in IDENTITIES
                    if certificate == certificate_header_value(getattr(identities, name).certificate)), None)
        if certificate is not None and who is None:
            out["not_replayable"] = "signed with a certificate the check made (not one of the run's identities)"
        out["identity"] = who or "tpp"
        digest = _value(headers, "digest")
        if digest is not None and digest != compute_digest(request.body):
            altered.append("digest")
            out["digest"] = digest
        date = _value(headers, "date")
        if date is not None:
            try:
                offset = (parse_imf_fixdate(date) - sent_at).total_seconds()
            except ValueError:
                out["not_replayable"] = f"its Date is not a date ({date!r}): re-created by its check only"
                offset = 0.0
            if abs(offset) > DATE_SLACK:
                altered.append("date")
                out["date_offset"] = round(offset)
        altered += [f"absent:{name}" for name in SIGNATURE_HEADERS if name not in present]
        if who is not None and "signature" in present and "not_replayable" not in out:
            try:
                again = _sign(request.method, request.target, headers, getattr(identities, who), date=date,
                              also=also_signed)
            except ValueError as exc:   # a value no signature can cover (CR/LF), nothing to sign: the check's own
                again = [("Signature", f"not signable: {exc}")]
            if _value(again, "signature") != _value(headers, "signature"):
                out["not_replayable"] = ("its Signature is not the one its headers give (altered by the check): "
                                         "re-created by its check only")
    out["altered"] = altered
    return out


def _sign(method: str, target: str, headers: list[tuple[str, str]], identity: Identity, *,
          date: str | None = None, when: _dt.datetime | None = None,
          also: tuple[str, ...] = ()) -> list[tuple[str, str]]:
    """``headers`` signed by ``identity`` as they stand (a Digest present is kept, none is added)."""
    base = [(n, v) for n, v in headers if n.lower() not in ("signature", "tpp-signature-certificate")]
    if date is not None:
        base = [(n, v) for n, v in base if n.lower() != "date"] + [("Date", date)]
    signed = sign_request(SignableRequest(method, target, base, None), identity.key, identity.certificate,
                          date=when, also=also)
    return list(signed.headers)


def rebuild(recorded: dict[str, Any], identities: Any, now: _dt.datetime, *,
            gateway: tuple[tuple[str, str], ...] = (), also_signed: tuple[str, ...] = ()) -> PreparedRequest:
    """The recorded request signed anew by the run's identity: a fresh Date, Digest, Signature and X-Request-ID,
    except what the check altered on purpose, which is re-created (see the module). Raises :class:`NotReplayable`.
    ``gateway`` are the replay's -H headers (a finding records none of their values), added as the run's client adds
    them; ``also_signed`` the profile's extra signed headers (``signature: extra-headers``), covered when present."""
    if not isinstance(recorded, dict):
        raise NotReplayable("the report has no request to re-send")
    if recorded.get("not_replayable"):
        raise NotReplayable(recorded["not_replayable"])
    try:
        method, target = str(recorded["method"]), str(recorded["target"])
        headers = [(str(n), str(v)) for n, v in recorded["headers"]]
        body = (base64.b64decode(recorded["body_base64"]) if "body_base64" in recorded
                else str(recorded.get("body", "")).encode("utf-8"))
        altered = {str(a) for a in recorded.get("altered", ())}
        offset = _dt.timedelta(seconds=int(recorded.get("date_offset", 0)))
        role = str(recorded.get("identity") or "tpp")
    except (KeyError, TypeError, ValueError, OverflowError) as exc:
        raise NotReplayable(f"the report's request is incomplete ({type(exc).__name__}: {exc})") from None
    if "x-request-id" not in altered:
        headers = [(n, str(uuid.uuid4()) if n.lower() == "x-request-id" else v) for n, v in headers]
    present = {n.lower() for n, _v in headers}
    headers += [(n, v) for n, v in gateway if n.lower() not in present]
    if not recorded.get("signed"):
        return PreparedRequest(method, target, headers, body)
    identity = getattr(identities, role, None) if role in IDENTITIES else None
    if identity is None:
        raise NotReplayable(f"signed by an identity the replay does not have ({role!r})")
    when = now + offset if "date" in altered else now
    if "absent:digest" not in altered:
        headers = headers + [("Digest", str(recorded["digest"]) if "digest" in altered and "digest" in recorded
                              else compute_digest(body))]
    try:
        headers = _sign(method, target, headers, identity, date=imf_fixdate(when), also=also_signed)
    except ValueError as exc:
        raise NotReplayable(f"the request cannot be signed again: {exc}") from None
    gone = {a.split(":", 1)[1] for a in altered if a.startswith("absent:")}
    headers = [(n, v) for n, v in headers if n.lower() not in gone]
    return PreparedRequest(method, target, headers, body)
