"""Kind detection finds the kind a person meant (issue 7, item 1), and the accuracy tool stays at no silent miss."""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from validator.cli import main
from validator.detect import detect_kind
from validator.api import Validator
from validator.rules.examples import spec_example
from validator.spec import load_spec
from tool_modules import load_tool

SPEC = load_spec()
VALIDATOR = Validator(today=SPEC.example_today)
SEPA = "createSepaCreditTransfer request rentToBerlin"
BULK = "createBulkPayment request invoicesWithKid"
LINKS = {"scaRedirect": {"href": "https://sca.bank.example.no/authorize?session=1", "verbs": ["GET"]}}


def _renamed(payload: dict, old: str, new: str) -> dict:
    return {(new if k == old else k): v for k, v in payload.items()}


def rules_of(report) -> list[str]:
    return [f.rule for f in report.findings]


@pytest.mark.parametrize(("example", "old", "new", "kind"), [
    (SEPA, "creditorName", "creditorNme", "sepa-credit-transfer"),
    (BULK, "debtorAccount", "debtorAcount", "bulk-payment"),
])
def test_a_typo_keeps_the_request_kind_and_says_did_you_mean(example, old, new, kind):
    payload = _renamed(spec_example(SPEC, example), old, new)
    report = VALIDATOR.validate(payload)
    assert report.kind == kind and report.detected
    messages = [f.message for f in report.findings]
    assert f"unknown property {new!r}; did you mean {old!r}?" in messages
    assert "kind-ambiguous" not in rules_of(report)  # a typo is not a guess
    assert not any("transactionStatus" in m for m in messages)
    assert "response-amount-digits" not in rules_of(report)


def test_request_kinds_come_before_response_kinds():
    # A complete SEPA credit transfer is also most of a payment detail (which adds transactionStatus).
    payload = spec_example(SPEC, SEPA)
    payload.pop("creditorName")
    detection = detect_kind(SPEC, payload)
    assert detection.kind == "sepa-credit-transfer"
    assert not detection.confident and detection.candidates == ("sepa-credit-transfer", "payment-detail")
    assert "runner-up payment-detail" in detection.message and "--kind" in detection.message


@pytest.mark.parametrize("payload", [
    {"transactionStatus": "ACFC", "_links": LINKS},  # an invalid status
    {"paymentId": "enc!!UEFZLTE=", "_links": {**LINKS, "status": {"href": "/v1/payments/x/status"}}},  # no status at all
    {"fundsAvailable": False, "_links": LINKS},  # a payment status without its status
])
def test_an_invalid_response_never_passes_as_sca_redirect(payload):
    report = VALIDATOR.validate(payload)
    assert report.kind != "sca-redirect"
    assert not report.valid, report.findings


def test_a_real_sca_redirect_is_still_one():
    report = VALIDATOR.validate({"_links": LINKS})
    assert (report.kind, report.findings) == ("sca-redirect", [])


def test_a_dropped_only_property_of_a_nested_kind_is_a_warned_guess():
    payload = {"_links": {"startAuthorisation": {"href": "/v1/x", "verbs": ["POST"]}}}  # cancellation without status
    report = VALIDATOR.validate(payload)
    assert "kind-ambiguous" in rules_of(report)
    assert "payment-cancellation" in report.candidates


def test_text_json_and_sarif_say_the_kind_was_detected(tmp_path):
    path = tmp_path / "sepa.json"
    path.write_text(json.dumps(spec_example(SPEC, SEPA)), encoding="utf-8")
    runner = CliRunner()
    text = runner.invoke(main, ["--today", SPEC.example_today, str(path)])
    assert text.exit_code == 0, text.output
    assert text.output.splitlines()[0] == f"{path}: note checked as sepa-credit-transfer (detected)"
    doc = json.loads(runner.invoke(main, ["--today", SPEC.example_today, "--format", "json", str(path)]).output)
    assert doc["results"][0]["kind"] == "sepa-credit-transfer" and doc["results"][0]["detected"] is True
    given = runner.invoke(main, ["--today", SPEC.example_today, "--kind", "sepa-credit-transfer", "--format", "json", str(path)])
    assert json.loads(given.output)["results"][0]["detected"] is False
    plain = runner.invoke(main, ["--today", SPEC.example_today, "--kind", "sepa-credit-transfer", str(path)])
    assert "note" not in plain.output
    junit = runner.invoke(main, ["--today", SPEC.example_today, "--format", "junit", str(path)]).output
    assert "note: checked as sepa-credit-transfer (detected)" in junit
    path.write_text(json.dumps(_renamed(spec_example(SPEC, SEPA), "creditorName", "creditorNme")), encoding="utf-8")
    sarif = json.loads(runner.invoke(main, ["--today", SPEC.example_today, "--format", "sarif", str(path)]).output)
    assert sarif["runs"][0]["results"][0]["properties"]["kindDetected"] is True


def test_a_valid_jsonl_line_gets_no_note_but_one_with_findings_does(tmp_path):
    good = json.dumps(spec_example(SPEC, SEPA))
    bad = json.dumps(_renamed(spec_example(SPEC, SEPA), "creditorName", "creditorNme"))
    path = tmp_path / "batch.jsonl"
    path.write_text(f"{good}\n{bad}\n", encoding="utf-8")
    out = CliRunner().invoke(main, ["--today", SPEC.example_today, str(path)]).output
    notes = [line for line in out.splitlines() if " note " in line]
    assert notes == [f"{path}:2: note checked as sepa-credit-transfer (detected)"]


def _accuracy_tool():
    return load_tool("detection_accuracy")


def test_detection_accuracy_one_mistake_from_every_spec_example():
    tool = _accuracy_tool()
    cases = tool.run(SPEC)
    totals = tool.summary(cases)
    assert totals["kinds"] == len(SPEC.kinds)
    wrong = [c for c in cases if c.outcome == "wrong"]
    assert not wrong, wrong  # every miss is either impossible to tell or comes with a warning or error
    assert totals["accuracy"] >= 0.9, totals
    assert all(c.outcome == "right" for c in cases if "misspelt" in c.change and c.kind.endswith(("payment", "transfer")))


def test_misspellings_are_one_typo_away():
    tool = _accuracy_tool()
    assert tool.misspellings("creditorName") == [("left out", "creditrName"), ("swapped", "crediotrName")]


def test_remembered_key_sets_still_read_the_nested_objects_each_time():
    # Same top-level keys, different objects one level down: the remembered fit must not decide alone.
    for _ in range(2):
        assert detect_kind(SPEC, {"_links": LINKS}).kind == "sca-redirect"
        assert detect_kind(SPEC, {"_links": {"startAuthorisation": {"href": "/v1/x"}}}).kind != "sca-redirect"


def test_remembered_key_sets_are_bounded():
    from validator import detect

    for n in range(detect.FIT_CACHE_SIZE + 50):  # key sets from the input: each distinct
        detect_kind(SPEC, {f"unknown{n}": 1, "creditorName": "x"})
    assert len(SPEC._cache["detect_fit"]) <= detect.FIT_CACHE_SIZE
    assert detect_kind(SPEC, spec_example(SPEC, SEPA)).kind == "sepa-credit-transfer"  # still right once full


def test_a_guessed_kind_names_the_missing_and_undeclared_properties():
    """The kind-ambiguous warning says which properties the closest kind misses or does not declare (issue 21)."""
    complete = spec_example(SPEC, SEPA)
    assert "kind-ambiguous" not in rules_of(VALIDATOR.validate(complete))
    payload = json.loads(json.dumps(complete))
    del payload["creditorAccount"], payload["debtorAccount"]["currency"]
    payload["frobnicate"] = 1
    report = VALIDATOR.validate(payload)
    [warning] = [f for f in report.findings if f.rule == "kind-ambiguous"]
    assert report.kind == "sepa-credit-transfer"
    assert "3 undeclared or missing properties: missing creditorAccount, debtorAccount.currency; " \
           "undeclared frobnicate)" in warning.message, warning.message
