"""One regression test per class of failure the fuzz runs found (issue 8): each input gets its proper finding,
and every other finding of that input is still reported."""
from __future__ import annotations


import json

import pytest

from validator import validate, validate_bytes
from validator.api import Validator
from validator.jsonload import JSON_NON_FINITE, JSON_TOO_DEEP, check_value, load_json_bytes
from validator.request import build_request, example_identity, example_now, sign_envelope
from validator.spec import load_spec

SPEC = load_spec()
TODAY = SPEC.example_today
DIGITS_4301 = "1" * 4301


def rules(report) -> list[str]:
    return [f.rule for f in report.findings]


def assert_clean(report) -> None:
    assert not [f for f in report.findings if f.rule == "internal-error" or "internal verifier error" in f.message]


# ---------------------------------------------------------------- escapes from the engine's finding order
@pytest.mark.parametrize("name", ["²", DIGITS_4301, "٣"])
def test_member_names_of_digits_are_ordered_without_int(name):
    data = json.dumps({"paymentIds": ["a"], name: 1, "zz": 2}).encode()
    report = validate_bytes(data, "signing-basket", today=TODAY)
    assert rules(report) == ["unknown-property", "unknown-property"]
    assert {f.pointer for f in report.findings} == {"/" + name, "/zz"}


def test_array_indices_still_sort_numerically():
    report = validate({"paymentIds": ["a"] * 12 + [1, 2]}, "signing-basket", today=TODAY)
    pointers = [f.pointer for f in report.findings if f.rule == "schema-type"]
    assert pointers == ["/paymentIds/12", "/paymentIds/13"]


# ---------------------------------------------------------------- escapes from the JSON loader
@pytest.mark.parametrize("data, pointer", [
    (b"[NaN,true]", "/0"),
    (b'{"x":1e400,"y":false}', "/x"),
    (b"[" + b"9" * 4301 + b",true]", "/0"),
    (b'{"a":null,"n":-Infinity}', "/n"),
])
def test_loader_locates_numbers_beside_literals(data, pointer):
    loaded = load_json_bytes(data)
    assert [p.rule for p in loaded.problems] == [JSON_NON_FINITE]
    assert loaded.problems[0].pointer == pointer and loaded.problems[0].line == 1
    assert loaded.value is not None  # readable: the other checks still run


def test_huge_integer_keeps_the_documents_other_findings():
    body = json.loads(build_request(SPEC, "createSepaCreditTransfer")["body"])
    body["creditorName"] = 4711
    text = json.dumps(body).replace('"1250.00"', "9" * 5000)
    report = validate_bytes(text.encode(), "sepa-credit-transfer", today=TODAY)
    assert "json-non-finite" in rules(report) and "schema-type" in rules(report)
    assert any(f.rule == "amount-grammar" and f.pointer == "/instructedAmount/amount" for f in report.findings)


# ---------------------------------------------------------------- the object API
def test_object_with_huge_integer_gets_findings():
    report = validate({"tppMessages": 10**5000}, "tpp-messages-error", today=TODAY)
    assert rules(report) == ["json-non-finite", "schema-type"]
    assert report.findings[0].pointer == "/tppMessages" and "5,000 digits" in report.findings[0].message


def test_object_huge_amount_gets_the_amount_finding():
    body = json.loads(build_request(SPEC, "createSepaCreditTransfer")["body"])
    body["instructedAmount"]["amount"] = -(10**5000)
    report = validate(body, "sepa-credit-transfer", today=TODAY)
    assert_clean(report)
    assert [(f.rule, f.pointer) for f in report.findings][:2] == [
        ("json-non-finite", "/instructedAmount/amount"), ("amount-grammar", "/instructedAmount/amount")]


@pytest.mark.parametrize("kind", [None, "signing-basket", "request"])
def test_object_nested_too_deep_gets_a_finding(kind):
    deep: list = []
    for _ in range(1000):
        deep = [deep]
    report = validate({"paymentIds": deep}, kind, today=TODAY)
    assert rules(report) == [JSON_TOO_DEEP]


def test_check_value_leaves_ordinary_values_alone():
    value = {"a": [1, 2.5, "x", None, True, 10**4000]}
    assert check_value(value).value is value and check_value(value).ok
    deep: list = []
    for _ in range(511):
        deep = [deep]  # 512 levels, as b"[" * 512 + b"]" * 512: the loader's limit
    assert check_value(deep).ok and load_json_bytes(b"[" * 512 + b"]" * 512).ok
    assert not check_value([deep]).ok and not load_json_bytes(b"[" * 513 + b"]" * 513).ok


def test_detect_kind_takes_any_value():
    from validator import Validator

    v = Validator(today=TODAY)
    assert v.detect_kind({"tppMessages": [{"category": "ERROR", "code": -(10**5000)}]}).kind == "tpp-messages-error"
    deep: list = []
    for _ in range(1000):
        deep = [deep]
    detection = v.detect_kind(deep)
    assert detection.kind is None and "too deeply" in detection.message
    assert v.detect_kind(None).kind is None and "pass --kind" in v.detect_kind(None).message


def test_unknown_kind_is_still_the_callers_error():
    from validator.spec import SpecError

    with pytest.raises(SpecError):
        validate({}, "no-such-kind")


# ---------------------------------------------------------------- JSONL: one bad line costs nothing else
def test_jsonl_keeps_every_lines_report(tmp_path):
    lines = [b'{"paymentIds":["a"]}', b'{"paymentIds":["a"],"\xc2\xb2":1}', b"[NaN,true]",
             b'{"x":1e400,"y":false}', b"[" + b"9" * 4301 + b",true]", b'{"paymentIds":["b"]}']
    path = tmp_path / "mixed.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    reports = Validator(today=TODAY).validate_path(path, "signing-basket")
    assert [r.source.rsplit(":", 1)[1] for r in reports] == ["1", "2", "3", "4", "5", "6"]
    for report in reports:
        assert_clean(report)
    assert reports[0].valid and reports[5].valid and not reports[2].valid


# ---------------------------------------------------------------- the signature verifier
@pytest.fixture(scope="module")
def signed():
    key, cert = example_identity()
    return sign_envelope(build_request(SPEC, "createSepaCreditTransfer"), key, cert, now=example_now(SPEC), spec=SPEC)


def test_lone_surrogate_in_a_signed_header_value(signed):
    envelope = json.loads(json.dumps(signed))
    envelope["headers"]["X-Request-ID"] = "\ud800" + envelope["headers"]["X-Request-ID"]
    report = Validator(now=example_now(SPEC)).validate(envelope, "request")
    assert_clean(report)
    invalid = [f for f in report.findings if f.rule == "signature-invalid"]
    assert invalid and "unpaired surrogate" in invalid[0].message


@pytest.mark.parametrize("where", ['keyId="SN=', "CA=CN="])
def test_lone_surrogate_in_the_key_id(signed, where):
    envelope = json.loads(json.dumps(signed))
    envelope["headers"]["Signature"] = envelope["headers"]["Signature"].replace(where, where + "\udc00", 1)
    for report in (Validator(now=example_now(SPEC)).validate(envelope, "request"),
                   Validator(now=example_now(SPEC)).validate_bytes(json.dumps(envelope).encode(), "request")):
        assert_clean(report)
        assert {"header-malformed", "signature-malformed"} <= {f.rule for f in report.findings if f.pointer == "/headers/Signature"}


def test_the_verifier_still_checks_the_rest(signed):
    """The surrogate costs the signature, not the Digest check."""
    envelope = json.loads(json.dumps(signed))
    envelope["headers"]["X-Request-ID"] = "\ud800"
    envelope["headers"]["Digest"] = "SHA-256=" + "A" * 43 + "="
    report = Validator(now=example_now(SPEC)).validate(envelope, "request")
    assert {"digest-mismatch", "signature-invalid"} <= set(rules(report))




# ---------------------------------------------------------------- requests: real findings, not one internal error
def http_bytes(envelope: dict, extra: tuple = ()) -> bytes:
    head = [f"{envelope['method']} {envelope['path']} HTTP/1.1"]
    head += [f"{n}: {v}" for n, v in envelope["headers"].items()] + [f"{n}: {v}" for n, v in extra]
    return ("\r\n".join(head) + "\r\n\r\n").encode("utf-8", "surrogatepass") + envelope.get("body", "").encode()


@pytest.mark.parametrize("value", ["²", "٣", "9" * 4301, "-1"])
def test_content_length_not_ascii_digits(signed, value):
    report = Validator(now=example_now(SPEC)).validate_bytes(http_bytes(signed, [("Content-Length", value)]), "request")
    assert_clean(report)
    assert [f.rule for f in report.findings] == ["header-malformed"] if value != "9" * 4301 else ["request-malformed"]


def test_content_length_of_4301_digits_is_a_mismatch(signed):
    report = Validator(now=example_now(SPEC)).validate_bytes(http_bytes(signed, [("Content-Length", "9" * 4301)]), "request")
    assert [(f.rule, f.pointer) for f in report.findings] == [("request-malformed", "/body")]
    assert "Content-Length says" in report.findings[0].message


@pytest.mark.parametrize("form", ["envelope", "http"])
def test_query_integers_of_4301_digits(form):
    envelope = build_request(SPEC, "listSandboxAccountTransactions", query={"offset": "9" * 4301, "limit": "²"})
    v = Validator(now=example_now(SPEC))
    report = v.validate(envelope, "request") if form == "envelope" else v.validate_bytes(http_bytes(envelope), "request")
    assert_clean(report)
    found = {(f.rule, f.pointer) for f in report.findings}
    assert {("query-format", "/query/offset"), ("query-format", "/query/limit")} <= found
    assert ("signature-missing", "/headers/Signature") in found  # the request's other findings are still there


def test_date_at_the_end_of_time_under_a_given_day(signed):
    envelope = json.loads(json.dumps(signed))
    envelope["headers"]["Date"] = "Fri, 31 Dec 9999 23:59:59 GMT"
    for report in (Validator(today=TODAY).validate(envelope, "request"),
                   Validator(today=TODAY).validate_bytes(http_bytes(envelope), "request")):
        assert_clean(report)
        assert {"signature-date-window", "signature-invalid"} <= set(rules(report))


def test_lone_surrogate_header_is_malformed(signed):
    envelope = json.loads(json.dumps(signed))
    envelope["headers"]["PSU-IP-Address"] = "192.0.2.\udc01"
    report = Validator(now=example_now(SPEC)).validate(envelope, "request")
    assert_clean(report)
    assert ("header-malformed", "/headers/PSU-IP-Address") in {(f.rule, f.pointer) for f in report.findings}


# ---------------------------------------------------------------- body findings carry positions in the file
def _body_with_problems() -> str:
    body = json.loads(build_request(SPEC, "createSepaCreditTransfer")["body"])
    body["creditorName"] = 4711
    return json.dumps(body, indent=2).replace('"EUR"', '"EUR", "currency": "EUR"', 1)


def _at(data: bytes, finding) -> str:
    line = data.decode("utf-8").split("\n")[finding.line - 1]
    return line[finding.column - 1:]


@pytest.mark.parametrize("kind", ["request", None])
def test_body_findings_in_an_envelope_file_point_into_the_file(kind):
    envelope = build_request(SPEC, "createSepaCreditTransfer", body=_body_with_problems())
    data = ("\n" + json.dumps(envelope, indent=2)).encode()
    report = Validator(now=example_now(SPEC)).validate_bytes(data, kind)
    by_rule = {f.rule: f for f in report.findings if f.pointer.startswith("/body/")}
    assert _at(data, by_rule["schema-type"]).startswith("4711,")
    assert _at(data, by_rule["json-duplicate-key"]).startswith('\\"currency\\": \\"EUR\\"')


def test_body_findings_in_an_http_file_point_into_the_file():
    envelope = build_request(SPEC, "createSepaCreditTransfer", body=_body_with_problems())
    data = http_bytes(envelope)
    report = Validator(now=example_now(SPEC)).validate_bytes(data, "request")
    by_rule = {f.rule: f for f in report.findings if f.pointer.startswith("/body/")}
    assert _at(data, by_rule["schema-type"]).startswith("4711,")
    assert _at(data, by_rule["json-duplicate-key"]).startswith('"currency": "EUR"')


def test_string_offsets_follow_escapes():
    from validator.positions import string_offsets

    value = 'a"\\\n🏦\ud800x'
    for ascii_only in (True, False):
        text = '{"body": ' + json.dumps(value, ensure_ascii=ascii_only) + "}"
        offsets = string_offsets(text, 9, list(range(len(value) + 1)))
        for i in range(len(value) + 1):
            assert json.loads(text[9:offsets[i]] + '"') == value[:i]


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_cli_reports_every_jsonl_line(tmp_path, jobs):
    from click.testing import CliRunner

    from validator.cli import main

    lines = [b'{"paymentIds":["a"]}', '{"paymentIds":["a"],"²":1}'.encode(), b"[NaN,true]", b'{"x":1e400,"y":false}',
             b"[" + b"9" * 4301 + b",true]", b'{"paymentIds":["b"]}']
    path = tmp_path / "mixed.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    (tmp_path / "other.jsonl").write_bytes(lines[0] + b"\n")
    result = CliRunner().invoke(main, ["--format", "json", "--kind", "signing-basket", "--jobs", jobs, "--today", TODAY,
                                       str(path), str(tmp_path / "other.jsonl")])
    assert result.exit_code == 1 and (result.exception is None or isinstance(result.exception, SystemExit))
    reports = json.loads(result.output)["results"]
    assert [r["source"].rsplit(":", 1)[1] for r in reports] == ["1", "2", "3", "4", "5", "6", "1"]
    assert "internal-error" not in result.output and "Traceback" not in result.output
