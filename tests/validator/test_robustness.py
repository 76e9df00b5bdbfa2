"""No input gets a traceback: arbitrary JSON values and arbitrary bytes through the library and the
CLI give findings and an exit code in {0, 1, 2}."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from validator.cli import main
from validator import Validator
from validator.findings import Finding
from validator.spec import load_spec

SPEC = load_spec()
KINDS = sorted(SPEC.kinds)
VALIDATOR = Validator(today=SPEC.example_today)

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=20),
    lambda children: st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=12), children, max_size=5),
    max_leaves=25,
)
# Values shaped like the interface's payloads, so rules get deep inputs with the wrong types in them.
field_names = st.sampled_from(
    ["paymentIds", "instructedAmount", "amount", "currency", "payments", "creditorAccount", "iban", "bban",
     "remittanceInformationStructuredArray", "reference", "referenceType", "requestedExecutionDate",
     "transactionStatus", "bookingDate", "valueDate", "debtorAccount", "creditorAddress", "country", "_links"]
)
shaped_values = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(2**70), max_value=2**70) | st.text(max_size=30)
    | st.sampled_from(["EUR", "NOK", "JPY", "1.005", "0", "NO9386011117947", "2026-02-30", "SCOR", "RJCT"]),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(field_names, children, max_size=6),
    max_leaves=30,
)


def _assert_findings(report):
    assert all(isinstance(f, Finding) for f in report.findings)
    assert not any(f.rule == "internal-error" for f in report.findings), report.findings


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(value=json_values | shaped_values, kind=st.none() | st.sampled_from(KINDS))
def test_library_takes_any_json_value(value, kind):
    _assert_findings(VALIDATOR.validate(value, kind))


@settings(max_examples=150, deadline=None)
@given(data=st.binary(max_size=300), kind=st.none() | st.sampled_from(KINDS))
def test_library_takes_any_bytes(data, kind):
    _assert_findings(VALIDATOR.validate_bytes(data, kind))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.binary(max_size=200) | shaped_values.map(lambda v: json.dumps(v).encode()), fmt=st.sampled_from(["text", "json", "junit", "sarif", "github"]))
def test_cli_takes_any_input(data, fmt):
    result = CliRunner().invoke(main, ["--format", fmt, "--today", "2026-07-01", "-"], input=data)
    assert result.exit_code in (0, 1), (result.exit_code, result.output, result.exception)
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert result.output.endswith("\n")


@pytest.mark.parametrize(
    "payload",
    [
        b"[" * 100_000 + b"]" * 100_000,
        b'{"paymentIds": [' + b'"x",' * 200_000 + b'"y"]}',
        b'{"a": 1e400}',
        b'{"a": ' + b"9" * 5000 + b"}",
        b"\xff\xfe{\x00}\x00",
        b"\x00" * 64,
    ],
    ids=["deep", "huge-array", "beyond-double", "huge-int", "utf16", "nul"],
)
def test_nasty_inputs_give_findings(payload):
    report = VALIDATOR.validate_bytes(payload, None)
    _assert_findings(report)
    assert report.findings


def test_exit_codes(tmp_path):
    good = tmp_path / "good.json"
    good.write_text('{"paymentIds": ["enc!!UEFZLTAwMQ=="]}')
    bad = tmp_path / "bad.json"
    bad.write_text('{"paymentIds": []}')
    warn = tmp_path / "warn.json"
    warn.write_text('{"paymentIds": ["a"], "paymentIdz": 1}')
    runner = CliRunner()
    assert runner.invoke(main, [str(good)]).exit_code == 0
    assert runner.invoke(main, ["validate", str(good)]).exit_code == 0
    assert runner.invoke(main, [str(bad)]).exit_code == 1
    assert runner.invoke(main, [str(warn)]).exit_code == 0
    assert runner.invoke(main, ["--fail-on", "warning", str(warn)]).exit_code == 1
    assert runner.invoke(main, [str(tmp_path / "missing.json")]).exit_code == 2
    assert runner.invoke(main, ["--kind", "nonsense", str(good)]).exit_code == 2
    assert runner.invoke(main, ["--today", "yesterday", str(good)]).exit_code == 2
    assert runner.invoke(main, ["--format", "xml", str(good)]).exit_code == 2
    profile = tmp_path / "p.yaml"
    profile.write_text("rules: {nope: {severity: off}}\n")
    assert runner.invoke(main, ["--profile", str(profile), str(good)]).exit_code == 2
    profile.write_text("rules: [unclosed\n")
    assert runner.invoke(main, ["--profile", str(profile), str(good)]).exit_code == 2


def test_directory_and_jsonl_inputs(tmp_path):
    (tmp_path / "a.json").write_text('{"paymentIds": ["a"]}')
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b.jsonl").write_text('{"paymentIds": ["a"]}\n\n{"paymentIds": []}\nnot json\n')
    result = CliRunner().invoke(main, ["--format", "json", str(tmp_path)])
    data = json.loads(result.output)
    sources = [r["source"] for r in data["results"]]
    assert sources == [str(tmp_path / "a.json"), f"{tmp_path / 'sub' / 'b.jsonl'}:1", f"{tmp_path / 'sub' / 'b.jsonl'}:3", f"{tmp_path / 'sub' / 'b.jsonl'}:4"]
    assert [r["valid"] for r in data["results"]] == [True, True, False, False]
    assert result.exit_code == 1


def test_jobs_give_the_same_results(tmp_path):
    lines = []
    for i in range(3000):
        lines.append(json.dumps({"paymentIds": [f"p{i}"] * (1 + i % 2)}))
    path = tmp_path / "many.jsonl"
    path.write_text("\n".join(lines) + "\n")
    one = CliRunner().invoke(main, ["--format", "json", str(path)])
    two = subprocess.run([sys.executable, "-m", "validator", "--format", "json", "--jobs", "2", str(path)], capture_output=True, text=True)
    assert two.returncode == one.exit_code == 1
    assert json.loads(two.stdout)["results"] == json.loads(one.output)["results"]


def test_huge_file_is_refused_without_reading_it(tmp_path):
    big = tmp_path / "big.json"
    with big.open("wb") as fh:
        fh.truncate(60 * 1024 * 1024)  # sparse: 60 MB of NUL bytes, not written
    result = CliRunner().invoke(main, ["--format", "json", str(big)])
    finding = json.loads(result.output)["results"][0]["findings"][0]
    assert finding["rule"] == "json-too-large"
    assert result.exit_code == 1
