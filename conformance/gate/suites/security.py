"""Request signing and ownership (A8, A28): each request below is wrong in one way (a fault of parts, such as the
keyId's serial and issuer, broken one part at a time), after a correctly signed control the target accepted, and the
validator's whole-request check says what a conforming implementation answers to it exactly as sent (401 SIGNATURE_MISSING /
SIGNATURE_INVALID / CERTIFICATE_EXPIRED, 400 FORMAT_ERROR for the Digest). Another TPP's payment does not exist for
a TPP (A28): 404 RESOURCE_UNKNOWN in a path, 400 RESOURCE_UNKNOWN as a basket's paymentId."""
from __future__ import annotations

import datetime as _dt
import re
import uuid
from dataclasses import replace
from typing import Callable

from conformance.client import Identity, PreparedRequest
from validator.signing import SignableRequest, sign_request
from validator.signing.digest import compute_digest

from ..model import SETUP_FAILED, Expected, NotExercised, check, reason, said
from ..session import Session
from .data import REDIRECT, SEPA, SESSION_ID, UNKNOWN_REFERENCE, sepa_body

OPERATION = "createSepaCreditTransfer"
REFS = ("A8", "Signing")
NO_DUPLICATE_CHECK = {"allowLogicalDuplicate": "true"}  # each request stands alone (A30)


def _unsigned(session: Session, amount: str) -> PreparedRequest:
    return session.client().prepare(OPERATION, body=sepa_body(amount), query=NO_DUPLICATE_CHECK, sign=False)


def _sign(request: PreparedRequest, identity: Identity, *, at: _dt.datetime, headers=None,
          body_known: bool = True, also: tuple[str, ...] = ()) -> PreparedRequest:
    signed = sign_request(SignableRequest(request.method, request.target, list(request.headers),
                                          request.body if body_known else None),
                          identity.key, identity.certificate, headers=headers, date=at, also=also)
    return PreparedRequest(request.method, request.target, list(signed.headers), request.body)


def _also(session: Session) -> tuple[str, ...]:
    """The headers the profile has signed besides the signing profile's (``signature: extra-headers``)."""
    return session.profile.signature_extra_headers


def _set(request: PreparedRequest, name: str, value: str) -> PreparedRequest:
    headers = [(n, value if n.lower() == name.lower() else v) for n, v in request.headers]
    return replace(request, headers=headers)


def _header(request: PreparedRequest, name: str) -> str:
    return next(v for n, v in request.headers if n.lower() == name.lower())


def _control_refused(session: Session) -> bool:
    """A correctly signed request of the operation the signing checks send, once per run before the first wrong one:
    where a target refuses every request for another reason (a gateway, the certificate, the body), a refusal is no
    answer to the fault under test, so a check expecting one would pass for nothing. True when the target did not
    accept it (no 2xx): the check's outcome is then "not exercised: the valid control was refused (status code)"."""
    if "_security_control" not in session.__dict__:
        request = _sign(_unsigned(session, "11.00"), session.identities.tpp, at=session.now(), also=_also(session))
        exchange = session.send(session.client(), request, OPERATION)
        session._security_control = None if 200 <= exchange.answer.status < 300 else \
            f"the valid control was refused ({exchange.answer.describe()})"
    if session._security_control:
        outcome = session.outcome(OPERATION)
        if outcome.status != "failed":   # the control's own answer may be a finding (the first check's)
            outcome.status, outcome.reason = "not-exercised", session._security_control
    return bool(session._security_control)


def _refused(rule_hint: str, title: str, build: Callable[[Session, _dt.datetime], PreparedRequest],
             *, at: Callable[[Session], _dt.datetime] | None = None) -> Callable[[Session], None]:
    """A check sending one wrong request; the validator predicts the refusal (and must: else the check is wrong)."""
    def run(session: Session) -> None:
        now = session.now()
        request = build(session, (at or (lambda s: now))(session))
        expected, errors = session.predict(request, success=(201,), at=now)
        rule = errors[0].rule if errors else _relaxed_by_profile(session, request, now, rule_hint)
        if _control_refused(session):
            return
        exchange = session.send(session.client(), request, OPERATION)
        session.expect(exchange, expected, rule=rule, ref=", ".join(REFS), errors=errors,
                       message=f"{title}: expected {expected.describe()} ({expected.why}), "
                               f"the target answered {exchange.answer.describe()}")
    return run


def _relaxed_by_profile(session: Session, request: PreparedRequest, now: _dt.datetime, rule_hint: str) -> str:
    """The rule a request the validator accepts was built to break, when the profile made it a warning (the
    target must accept it: the check goes on expecting 201). A rule turned off is not exercised; a request that
    breaks nothing even by the decisions' own severities is a wrong check."""
    broken = [f.rule for f in session.findings_by_decision(request, at=now) if f.severity == "error"]
    if not broken:
        raise RuntimeError(f"the validator accepts the request meant to break {rule_hint}: the check is wrong")
    off = [r for r in dict.fromkeys(broken) if session.rule_off(r)]
    if off:
        raise NotExercised(f"{', '.join(off)} off in the profile")
    return broken[0]


def unsigned(session: Session, at: _dt.datetime) -> PreparedRequest:
    return _unsigned(session, "12.00")


def tampered_body(session: Session, at: _dt.datetime) -> PreparedRequest:
    request = _sign(_unsigned(session, "13.00"), session.identities.tpp, at=at, also=_also(session))
    return replace(request, body=request.body.replace(b'"13.00"', b'"93.00"'))


def wrong_digest(session: Session, at: _dt.datetime) -> PreparedRequest:
    unsigned_request = _unsigned(session, "14.00")
    headers = list(unsigned_request.headers) + [("Digest", compute_digest(b'{"another":"body"}', "SHA-256"))]
    return _sign(replace(unsigned_request, headers=headers), session.identities.tpp, at=at, body_known=False,
                 also=_also(session))


def algorithm_confusion(session: Session, at: _dt.datetime) -> PreparedRequest:
    request = _sign(_unsigned(session, "16.00"), session.identities.tpp, at=at, also=_also(session))
    return _set(request, "Signature", re.sub(r'algorithm="[^"]*"', 'algorithm="hmac-sha256"', _header(request, "Signature")))


# An issuer no certificate of the run has (the second TPP's may share the first's CA: a bank's test QTSP).
OTHER_ISSUER = "CN=Obvalidate Other Test CA,O=Obvalidate,C=NO"


def _with_key_id(request: PreparedRequest, key_id: str) -> PreparedRequest:
    written = key_id.replace('"', '\\"')
    return _set(request, "Signature", re.sub(r'keyId="(?:[^"\\]|\\.)*"', lambda _m: f'keyId="{written}"',
                                             _header(request, "Signature")))


def key_id_other_serial(session: Session, at: _dt.datetime) -> PreparedRequest:
    """The keyId's one part broken: the serial is not the certificate's, the issuer is (a target comparing only the
    issuer accepts it)."""
    certificate = session.identities.tpp.certificate
    request = _sign(_unsigned(session, "17.00"), session.identities.tpp, at=at, also=_also(session))
    return _with_key_id(request, f"SN={certificate.serial_number + 1:X},CA={certificate.issuer.rfc4514_string()}")


def key_id_other_issuer(session: Session, at: _dt.datetime) -> PreparedRequest:
    """The keyId's other part broken: the serial is the certificate's, the issuer is not."""
    certificate = session.identities.tpp.certificate
    request = _sign(_unsigned(session, "17.50"), session.identities.tpp, at=at, also=_also(session))
    return _with_key_id(request, f"SN={certificate.serial_number:X},CA={OTHER_ISSUER}")


def expired_certificate(session: Session, at: _dt.datetime) -> PreparedRequest:
    expired = Identity.generate("PSDNO-FSA-OBVALIDATE-A", not_before=at - _dt.timedelta(days=400),
                                not_after=at - _dt.timedelta(days=1))
    return _sign(_unsigned(session, "18.00"), expired, at=at, also=_also(session))


def stale_date(session: Session, at: _dt.datetime) -> PreparedRequest:
    return _sign(_unsigned(session, "19.00"), session.identities.tpp, at=at, also=_also(session))


def _stale(session: Session) -> _dt.datetime:
    window = session.profile.signature_date_window
    if window is None:
        raise NotExercised("no Date window in the profile (signature: {date-window-seconds: null})")
    return session.now() - window - _dt.timedelta(minutes=10)


def replayed_signature(session: Session, at: _dt.datetime) -> PreparedRequest:
    first = _sign(_unsigned(session, "20.00"), session.identities.tpp, at=at, also=_also(session))
    other_body = first.body.replace(b'"20.00"', b'"920.00"')
    return replace(_set(first, "Digest", compute_digest(other_body, "SHA-256")), body=other_body)


SIGNING_CHECKS = (
    ("unsigned", "an unsigned request", unsigned, None),
    ("tampered-body", "a body altered after signing", tampered_body, None),
    ("wrong-digest", "a Digest (signed) that does not match the body", wrong_digest, None),
    ("algorithm-confusion", "the Signature claims algorithm hmac-sha256", algorithm_confusion, None),
    ("keyid-other-serial", "keyId with another serial and the certificate's issuer", key_id_other_serial, None),
    ("keyid-other-issuer", "keyId with the certificate's serial and another issuer", key_id_other_issuer, None),
    ("expired-certificate", "a certificate that expired yesterday", expired_certificate, None),
    ("stale-date", "a Date outside the signature window", stale_date, _stale),
    ("replayed-signature", "a signature replayed on another body (Digest recomputed)", replayed_signature, None),
)
for _id, _title, _build, _at in SIGNING_CHECKS:
    check(f"security:{_id}", suite="security", title=_title, refs=REFS)(_refused(_id, _title, _build, at=_at))


# ---------------------------------------------------------------- each profile header left unsigned (A8)
def signed_headers(session: Session) -> tuple[str, ...]:
    """The headers a signature must cover, each when present (the spec's Signature header, ``x-signed-headers``)."""
    listed = tuple(session.spec.document["components"]["parameters"]["Signature"]["x-signed-headers"])
    return listed + tuple(h for h in session.profile.signature_extra_headers if h not in listed)


def _with_profile_headers(session: Session, request: PreparedRequest) -> PreparedRequest:
    """The request with every header of the signing profile it can carry: one the operation declares but the request
    lacks is added with the spec's example value, kept only when the validator still finds the signed request
    valid."""
    op = session.spec.operation(OPERATION)
    declared = {p.name.lower(): p for p in op.header_parameters}
    present = {n.lower() for n, _v in request.headers}
    for name in signed_headers(session):
        parameter = declared.get(name)
        if name in present or parameter is None:
            continue
        schema = session.spec.deref(parameter.schema) if isinstance(parameter.schema, dict) else {}
        examples = (schema or {}).get("examples") or []
        if not examples:
            continue
        candidate = replace(request, headers=[*request.headers, (parameter.name, str(examples[0]))])
        signed = _sign(candidate, session.identities.tpp, at=session.now(), also=_also(session))
        if not [f for f in session.findings_for(signed) if f.severity == "error"]:
            request = candidate
    return request


@check("security:header-unsigned", suite="security", refs=REFS,
       title="each header of the signing profile present in a request, left out of the signature one at a time "
             "(date, digest, x-request-id, psu-id, psu-corporate-id, tpp-redirect-uri)")
def header_unsigned(session: Session) -> None:
    base = _with_profile_headers(session, _unsigned(session, "15.00"))
    present = [n.lower() for n, _v in base.headers]
    # Date and Digest are added by signing; the others are tried where the request carries them
    tried = [name for name in signed_headers(session) if name in present or name in ("date", "digest")]
    for i, left_out in enumerate(tried):
        now = session.now()
        headers = [name for name in tried if name != left_out]
        fresh = _set(base, "X-Request-ID", str(uuid.uuid4()))  # each its own request (A29)
        request = _sign(fresh, session.identities.tpp, at=now, headers=headers)
        expected, errors = session.predict(request, success=(201,), at=now)
        if not any(e.rule == "signature-headers-incomplete" for e in errors):
            _relaxed_by_profile(session, request, now, "signature-headers-incomplete")  # off: not exercised
        if _control_refused(session):
            return
        exchange = session.send(session.client(), request, OPERATION)
        session.expect(exchange, expected, rule="signature-headers-incomplete", ref=", ".join(REFS), errors=errors,
                       message=f"{left_out} present but left out of the signature (headers=\"{' '.join(headers)}\"): "
                               f"expected {expected.describe()} ({expected.why}), the target answered "
                               f"{exchange.answer.describe()}")


# ---------------------------------------------------------------- another TPP's payment (A28)
FOREIGN = ("A28",)
FOREIGN_RULE = "foreign-resource-visible"   # rules.py, the exchange judge's id for the same (lifecycle.py)
NOT_THERE = Expected((404,), ("RESOURCE_UNKNOWN",), "another TPP's payment does not exist (A28)")


def _foreign_payment(session: Session) -> str | None:
    owner = session.client("tpp")
    created = session.call(owner, OPERATION, body=sepa_body("21.00"), query=NO_DUPLICATE_CHECK)
    body = created.json() if created.answer.status in (200, 201) else {}
    pid = body.get("paymentId") if isinstance(body, dict) else None
    if not isinstance(pid, str) or not pid:  # whether creations work is the creation checks' business
        raise NotExercised(reason(SETUP_FAILED, f"creating the payment another TPP is to reach answered "
                                                f"{created.answer.describe()}"))
    return pid


@check("security:foreign-payment", suite="security", refs=FOREIGN,
       title="another TPP's payment cannot be read, cancelled, authorised or put in a basket")
def foreign_payment(session: Session) -> None:
    pid = _foreign_payment(session)
    if not pid:
        return
    intruder = session.client("other")
    where = {**SEPA, "paymentId": pid}
    owner = session.client("tpp")
    before = session.call(owner, "getPaymentStatus", path=where)
    was = before.object().get("transactionStatus") if before.answer.status == 200 else None
    refused = True   # every request of the intruder refused: then, and only then, its payment must be unchanged
    for operation, options in (
        ("getPaymentStatus", {}),
        ("getPayment", {}),
        ("startPaymentAuthorisation", {"headers": {"TPP-Redirect-URI": REDIRECT, "TPP-Session-ID": SESSION_ID}}),
        ("deletePayment", {}),
    ):
        exchange = session.call(intruder, operation, path=where, refusal_expected=True, **options)
        refused &= session.expect(exchange, NOT_THERE, rule=FOREIGN_RULE, ref="A28",
                                  message=f"{operation} of another TPP's payment answered {exchange.answer.describe()}")
    exchange = session.call(intruder, "createSigningBasket", body={"paymentIds": [pid]}, refusal_expected=True)
    refused &= session.expect(exchange, UNKNOWN_REFERENCE, rule=FOREIGN_RULE, ref="A28",
                              message=f"a basket of another TPP's payment answered {exchange.answer.describe()}")
    if not refused:   # a cancellation or authorisation the intruder got through changes it: a consequence, said
        return
    # Changed by the intruder: RCVD before its attempts (a new payment, A23) and another status after. A status
    # that was not RCVD before them (a mock's canned status) is no sign of the intruder; a status answer without its
    # status is the spec's finding (schema-required), never another TPP's doing.
    status = session.call(owner, "getPaymentStatus", path=where)
    now = status.object().get("transactionStatus") if status.answer.status == 200 else None
    if was == "RCVD" and now is not None and now != was:
        session.disagree(status, rule=FOREIGN_RULE, ref="A28", expected="RCVD",
                         message=f"another TPP changed the payment: its status is {said(now)}")
