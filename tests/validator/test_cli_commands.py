"""The catalogue and spec commands: `rules`, `explain`, `kinds`, `spec check`."""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from validator.cli import main
from validator.rules import catalogue
from validator.spec import load_spec


def run(*args):
    return CliRunner().invoke(main, list(args))


def test_rules_lists_the_whole_catalogue():
    result = run("rules", "--format", "json")
    assert result.exit_code == 0
    listed = {r["id"] for r in json.loads(result.output)}
    assert listed == set(catalogue())
    text = run("rules").output
    assert "kid-invalid" in text and "400 KID_INVALID" in text


@pytest.mark.parametrize("rule_id", ["kid-invalid", "basket-reference-mix", "json-duplicate-key", "signature-invalid", "header-required"])
def test_explain_shows_section_answer_and_both_examples(rule_id):
    rule = catalogue()[rule_id]
    result = run("explain", rule_id)
    assert result.exit_code == 0, result.output
    assert rule.ref in result.output
    assert f"HTTP {rule.status} with tppMessages code {rule.code}" in result.output
    good, bad = result.output.split("Bad example", 1)
    assert "-> no findings" in good
    assert f"[{rule_id}]" in bad


def test_explain_unknown_rule_suggests():
    result = run("explain", "kid-invalidd")
    assert result.exit_code == 2
    assert "kid-invalid" in result.output


def test_kinds_lists_every_kind_with_its_operation():
    result = run("kinds", "--format", "json")
    rows = {r["kind"]: r for r in json.loads(result.output)}
    spec = load_spec()
    assert set(rows) == set(spec.kinds) | {"request"}
    assert rows["bulk-payment"]["operations"] == ["createBulkPayment request"]
    assert "createSigningBasket 201" in rows["signing-basket-response"]["operations"]


def test_spec_check():
    result = run("spec", "check")
    assert result.exit_code == 0
    assert "valid OpenAPI 3.1.0" in result.output


# ---- issue 29, item 11: typos get "did you mean"; explain marks where the bad example differs
def test_a_misspelt_kind_or_command_gets_did_you_mean(tmp_path):
    runner = CliRunner()
    kind = runner.invoke(main, ["--kind", "bulk-paymnt", "x.json"])
    assert kind.exit_code == 2 and "unknown kind 'bulk-paymnt'; did you mean 'bulk-payment'? The kinds:" in kind.output
    for typo, command in (("sandbx", "sandbox"), ("conformm", "conform"), ("explian", "explain")):
        done = runner.invoke(main, [typo, "serve"])
        assert done.exit_code == 2 and f"did you mean the command '{command}'" in done.output, done.output
    missing = runner.invoke(main, [str(tmp_path / "payload.json")])
    assert missing.exit_code == 2 and "did you mean" not in missing.output


def test_explain_marks_the_lines_where_the_bad_example_differs():
    done = CliRunner().invoke(main, ["explain", "kid-invalid"])
    assert done.exit_code == 0, done.output
    bad = done.output.split("Bad example", 1)[1]
    assert "» marks the lines that differ from the good example" in bad.splitlines()[0]
    marked = [line for line in bad.splitlines() if line.startswith("» ")]
    assert marked and all('"reference"' in line or "referenceType" in line or "amount" in line for line in marked), \
        marked
    assert "» " not in done.output.split("Bad example", 1)[0]
