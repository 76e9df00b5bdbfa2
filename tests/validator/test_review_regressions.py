"""Defects a user review found, each pinned by a test."""
from __future__ import annotations

import json
import re

import pytest
from click.testing import CliRunner

from document import reference_path
from validator.cli import main
from validator.context import ConfigError, Context, Profile
from validator import Validator
from validator.rules import catalogue
from validator.rules.examples import spec_example
from validator.spec import load_spec

SPEC = load_spec()
VALIDATOR = Validator(today=SPEC.example_today)


def findings(payload, kind=None, validator=VALIDATOR):
    return [(f.rule, f.pointer, f.message) for f in validator.validate(payload, kind).findings]


def test_each_missing_required_property_is_named():
    got = findings({}, "sepa-credit-transfer")
    assert sorted(p for _, p, _ in got) == ["/creditorAccount", "/creditorName", "/debtorAccount", "/instructedAmount"]
    exchange = {"sourceCurrency": "EUR"}
    card = spec_example(SPEC, "createSandboxCardTransactions request groceriesAndHotel")
    card[1]["currencyExchange"] = exchange
    pointers = {p for r, p, _ in findings(card, "card-transactions") if r == "schema-required"}
    assert pointers == {f"/1/currencyExchange/{n}" for n in ("targetCurrency", "unitCurrency", "exchangeRate", "quotationDate")}


def test_readme_profile_loads_as_written(tmp_path):
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    block = re.search(r"A profile \(`--profile`, YAML\).*?```yaml\n(.*?)```", readme, re.S).group(1)
    path = tmp_path / "bank.yaml"
    path.write_text(block + "today: 2026-07-01\n")
    profile = Profile.load(path)
    assert profile.rules["unknown-property"].severity == "off"
    assert profile.today.isoformat() == "2026-07-01"


def test_profile_codes_and_context_statuses_are_checked():
    with pytest.raises(ConfigError, match="not a message code"):
        Profile.from_mapping({"rules": {"kid-invalid": {"code": "NOT_A_CODE"}}})
    with pytest.raises(ConfigError, match="not a transaction status"):
        Context.from_mapping({"payments": {"p1": {"service": "payments", "transactionStatus": "PAID"}}})


@pytest.mark.parametrize(
    "args",
    [
        ["sign", "--key", "{garbage}", "--cert", "{cert}", "{request}"],
        ["sign", "--key", "{cert}", "--cert", "{cert}", "{request}"],
        ["sign", "--key", "{key}", "--cert", "{garbage}", "{request}"],
        ["sign", "--key", "{other_key}", "--cert", "{cert}", "{request}"],
        ["keygen", "{keys}"],
        ["-o", "{missing}/out.txt", "{request}"],
        ["{empty_dir}"],
        ["{empty_jsonl}"],
    ],
    ids=["garbage-key", "cert-as-key", "garbage-cert", "foreign-key", "keygen-exists", "output-dir-missing", "empty-dir", "empty-jsonl"],
)
def test_unusable_inputs_exit_2_without_traceback(tmp_path, args):
    runner = CliRunner()
    keys, other = tmp_path / "keys", tmp_path / "other"
    assert runner.invoke(main, ["keygen", str(keys)]).exit_code == 0
    assert runner.invoke(main, ["keygen", str(other)]).exit_code == 0
    (tmp_path / "garbage.pem").write_text("garbage\n")
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty.jsonl").write_text("\n\n")
    request = tmp_path / "request.json"
    request.write_text(json.dumps({"method": "GET", "path": "/v1/sandbox/customers", "headers": {"X-Request-ID": "8f6f1a2e-1c4b-4f7e-9d53-0c8f2d6b9a11"}}))
    names = {
        "garbage": tmp_path / "garbage.pem", "cert": keys / "cert.pem", "key": keys / "key.pem",
        "other_key": other / "key.pem", "request": request, "keys": keys, "missing": tmp_path / "missing",
        "empty_dir": tmp_path / "empty", "empty_jsonl": tmp_path / "empty.jsonl",
    }
    result = runner.invoke(main, [a.format(**{k: str(v) for k, v in names.items()}) for a in args])
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert "Traceback" not in result.output


def test_array_kinds_are_detected_when_invalid():
    sample = json.loads(reference_path("real-examples/evry-sandbox-create-card-transactions-request.json").read_text())
    report = VALIDATOR.validate(sample["request"]["body"])
    assert report.kind == "card-transactions"
    assert not any(f.rule == "kind-undetected" for f in report.findings)


def test_warning_rules_carry_no_answer():
    assert [r.id for r in catalogue().values() if r.severity == "warning" and (r.code or r.status)] == []
    promoted = Validator(today=SPEC.example_today, profile=Profile.from_mapping({"rules": {"unknown-property": {"severity": "error"}}}))
    finding = promoted.validate({"paymentIds": ["a"], "paymentIdz": 1}, "signing-basket").findings[0]
    assert (finding.severity, finding.code, finding.status) == ("error", "FORMAT_ERROR", 400)


def test_today_is_the_verification_day_of_signed_requests():
    from validator.request.examples import materialize_example

    rule = catalogue()["signature-invalid"]
    envelope = materialize_example(rule.good.payload, SPEC)
    assert Validator(today=SPEC.example_today).validate(envelope, "request").valid
    later = {f.rule for f in Validator(today="2031-01-01").validate(envelope, "request").findings}
    assert {"signature-date-window", "certificate-expired"} <= later


def test_execution_date_names_the_payment_section():
    bulk = spec_example(SPEC, "createBulkPayment request invoicesWithKid")
    bulk["requestedExecutionDate"] = "2026-06-30"
    finding = next(f for f in VALIDATOR.validate(bulk, "bulk-payment").findings if f.rule == "execution-date-past")
    assert finding.ref == "Resources and their fields › Bulk payment request (Norwegian domestic credit transfers)"


def test_structured_remittance_on_a_sepa_transfer():
    sepa = spec_example(SPEC, "createSepaCreditTransfer request rentToBerlin")
    sepa["remittanceInformationStructured"] = {"reference": "1234567890128"}
    got = findings(sepa, "sepa-credit-transfer")
    rules = {r for r, _, _ in got}
    assert "deprecated-property" not in rules and "remittance-exclusive" in rules
    message = next(m for r, _, m in got if r == "unknown-property")
    assert "did you mean" not in message and "other resources" in message


def test_bulk_address_city_is_deprecated():
    bulk = spec_example(SPEC, "createBulkPayment request invoicesWithKid")
    bulk["payments"][0]["creditorAddress"]["city"] = "Trondheim"
    assert ("deprecated-property", "/payments/0/creditorAddress/city") in [(r, p) for r, p, _ in findings(bulk, "bulk-payment")]


def test_messages():
    sepa = spec_example(SPEC, "createSepaCreditTransfer request rentToBerlin")
    sepa["creditorAddress"]["country"] = "NOR"
    assert "did you mean 'NO'?" in findings(sepa, "sepa-credit-transfer")[0][2]
    assert "fits no kind exactly" in findings([1])[0][2]
    error = {"tppMessages": [{"category": "ERROR", "code": 17}]}
    assert [r for r, _, _ in findings(error, "tpp-messages-error")] == ["schema-type"]
    card = spec_example(SPEC, "createSandboxCardTransactions request groceriesAndHotel")
    card[0]["invoiced"] = ""
    assert '"true", "false"' in findings(card, "card-transactions")[0][2]


def test_stdin_over_the_limit_says_so():
    result = CliRunner().invoke(main, ["--max-bytes", "100", "-"], input=b" " * 500)
    assert "standard input is larger than 100 bytes" in result.output
    assert result.exit_code == 1


def test_a_non_ascii_digit_key_does_not_break_finding_order():
    """Hypothesis found it: "²".isdigit() is true, int("²") is not a number."""
    report = Validator().validate({"transactionStatus": "ACCP", "_links": {"²": {"href": "", "verbs": []}, "3": 1}},
                                  "payment-cancellation")
    assert [f.pointer for f in report.findings] == ["/_links/3"]
