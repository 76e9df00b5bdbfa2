"""The validator's side of the profile keys for the open points of issue 17 section 1: each key read from a profile
(and refused when misspelt), and what it changes in the validator's judgement of a request."""
from __future__ import annotations

import datetime as dt

import pytest
from cryptography.hazmat.primitives import serialization

from validator import Validator
from validator.checks.identity import is_synthetic_test_number, norwegian_identity_control_digits
from validator.context import DEFAULT_PROFILE, ConfigError, Profile
from validator.request.build import build_request
from validator.request.shape import REQUEST_KIND
from validator.request.sign import sign_envelope
from validator.signing import generate_test_identity
from validator.spec import load_spec

SPEC = load_spec()
NOW = dt.datetime(2026, 7, 1, 10, 0, tzinfo=dt.timezone.utc)


@pytest.fixture(scope="module")
def identity():
    key, cert = generate_test_identity(not_before=dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc),
                                       not_after=dt.datetime(2027, 1, 1, tzinfo=dt.timezone.utc))
    key_pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption())
    return key_pem, cert.public_bytes(serialization.Encoding.PEM)


def signed(identity, operation_id="createSepaCreditTransfer", *, set=(), extra=(), now=NOW) -> dict:
    env = build_request(SPEC, operation_id)
    env["headers"].update(dict(set))
    env = sign_envelope(env, *identity, now=now, spec=SPEC)
    env["headers"] = list(env["headers"].items()) + list(extra)
    return env


def rules(env, profile: dict | None = None, now=NOW) -> list[tuple[str, str]]:
    chosen = Profile.from_mapping(profile) if profile is not None else DEFAULT_PROFILE
    report = Validator(now=now, profile=chosen).validate(env, REQUEST_KIND)
    return [(f.rule, f.severity) for f in report.findings]


def number(month_offset: int) -> str:
    for individual in range(100, 500):
        first9 = f"15{3 + month_offset:02d}85{individual:03d}"
        digits = norwegian_identity_control_digits(first9)
        if digits:
            return first9 + digits
    raise AssertionError("no number found")


# ---------------------------------------------------------------- the keys as read
def test_defaults_are_the_decisions():
    p = Profile.from_mapping({})
    assert (p.error_body, p.sca_redirect_status, p.synthetic_identity_numbers) == ("either", None, "accepted")
    assert p.signature_date_window == dt.timedelta(minutes=5) and dict(p.repeated_headers) == {}


def test_the_keys_are_read():
    p = Profile.from_mapping({"error-body": "bulk", "sca-redirect-status": 302,
                              "synthetic-identity-numbers": "refused", "signature": {"date-window-seconds": None},
                              "repeated-headers": {"X-Request-ID": "accepted", "Accept-Language": "refused"}})
    assert (p.error_body, p.sca_redirect_status, p.synthetic_identity_numbers) == ("bulk", 302, "refused")
    assert p.signature_date_window is None
    assert dict(p.repeated_headers) == {"x-request-id": "accepted", "accept-language": "refused"}


@pytest.mark.parametrize("data, words", [
    ({"error-body": "tppMessages"}, "'tppMessages' is not one of either, tpp-messages, bulk, per-operation"),
    ({"sca-redirect-status": 307}, "307 is not one of 303, 302"),
    ({"synthetic-identity-numbers": "yes"}, "'yes' is not one of accepted, refused"),
    ({"repeated-headers": {"X-Request-Id": "accepted"}}, "unknown header of the interface 'X-Request-Id'; did you mean 'X-Request-ID'?"),
    ({"repeated-headers": {"Signature": "accepted"}}, "unknown header of the interface 'Signature'"),
    ({"repeated-headers": {"PSU-ID": "sometimes"}}, "'sometimes' is not one of accepted, refused"),
    ({"signature": {"date-window-seconds": -1}}, "-1 is less than the minimum of 0"),
])
def test_a_wrong_choice_is_refused_plainly(data, words):
    with pytest.raises(ConfigError) as caught:
        Profile.from_mapping(data)
    assert words in str(caught.value)


# ---------------------------------------------------------------- A16: synthetic identity numbers
def test_synthetic_numbers_are_recognised():
    assert is_synthetic_test_number(number(80)) and not is_synthetic_test_number(number(0))
    assert not is_synthetic_test_number("1583854566") and not is_synthetic_test_number(None)


def test_synthetic_identity_numbers_accepted_or_refused(identity):
    synthetic = signed(identity, set=[("X-PSU-IDENTITY", number(80))])
    plain = signed(identity, set=[("X-PSU-IDENTITY", number(0))])
    refused = {"synthetic-identity-numbers": "refused"}
    assert rules(synthetic) == [] and rules(plain) == [] and rules(plain, refused) == []
    assert rules(synthetic, refused) == [("psu-identity-invalid", "error")]
    report = Validator(now=NOW, profile=Profile.from_mapping(refused)).validate(synthetic, REQUEST_KIND)
    (finding,) = report.findings
    assert (finding.status, finding.code, finding.pointer) == (400, "FORMAT_ERROR", "/headers/X-PSU-IDENTITY")
    assert "synthetic test number" in finding.message and "A16" in finding.message
    wrong = number(80)[:-1] + str((int(number(80)[-1]) + 1) % 10)
    assert rules(signed(identity, set=[("X-PSU-IDENTITY", wrong)]), refused) == [("psu-identity-invalid", "error")]


# ---------------------------------------------------------------- no Date window
def test_no_date_window_does_not_check_date_freshness(identity):
    late = signed(identity, now=NOW - dt.timedelta(hours=3))
    assert rules(late) == [("signature-date-window", "error")]
    assert rules(late, {"signature": {"date-window-seconds": None}}) == []
    assert rules(late, {"signature": {"date-window-seconds": 4 * 3600}}) == []


# ---------------------------------------------------------------- repeated headers per header
def test_repeated_headers_per_header(identity):
    session = signed(identity, extra=[("tpp-session-id", "another-session")])
    languages = signed(identity, extra=[("Accept-Language", "nb"), ("accept-language", "en;q=0.5")])
    assert rules(session) == [("header-duplicate", "error")] and rules(languages) == []
    assert rules(session, {"repeated-headers": {"TPP-Session-ID": "accepted"}}) == []
    assert rules(session, {"repeated-headers": {"PSU-ID": "accepted"}}) == [("header-duplicate", "error")]
    assert rules(languages, {"repeated-headers": {"Accept-Language": "refused"}}) == [("header-duplicate", "error")]


# ---------------------------------------------------------------- A17, A18 through rules
def test_a17_and_a18_are_profile_decisions_through_rules(identity):
    request_id = signed(identity, set=[("X-Request-ID", "req-2026-07-01-0001")])
    accept_fix = signed(identity, set=[("x-accept-fix", "amount-as-string, shiny-new-thing")])
    assert rules(request_id) == [("header-recommended-format", "warning")]
    assert rules(request_id, {"rules": {"header-recommended-format": {"severity": "error"}}}) == \
        [("header-recommended-format", "error")]
    assert rules(accept_fix) == [("accept-fix-unknown", "warning")]
    assert rules(accept_fix, {"rules": {"accept-fix-unknown": {"severity": "off"}}}) == []
