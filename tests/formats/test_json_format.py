from __future__ import annotations

import json

from formats_fixtures import CATALOGUE, NASTY, TOOL_VERSION, make_reports
from validator.findings import ERROR, Finding, Report
from validator.formats import render


def _json(reports) -> str:
    return render(reports, "json", catalogue=CATALOGUE, tool_version=TOOL_VERSION)


def test_document_shape_and_key_order(reports):
    out = _json(reports)
    doc = json.loads(out)
    assert list(doc) == ["results", "summary", "tool"]
    assert doc["results"] == [r.as_dict() for r in reports]
    assert doc["tool"] == {"name": "obvalidate", "version": TOOL_VERSION}
    assert doc["summary"] == {
        "inputs": 9,
        "valid": 3,
        "invalid": 6,
        "errors": 8,
        "warnings": 4,
        "by_rule": {
            "amount-format": 1,
            "creditor-name": 1,
            "iban-checksum": 2,
            "json-syntax": 2,
            "links-href-shape": 2,
            "remittance-length": 3,
            "response-status-enum": 1,
        },
    }
    assert list(doc["summary"]) == ["inputs", "valid", "invalid", "errors", "warnings", "by_rule"]
    # Finding keys keep Finding.as_dict's order.
    assert list(doc["results"][1]["findings"][0]) == [
        "rule", "severity", "pointer", "message", "code", "status", "ref",
    ]
    assert doc["results"][7]["candidates"] == ["payment-initiation", "periodic-payment"]


def test_layout_is_indented_unescaped_and_stable(reports):
    out = _json(reports)
    assert out.startswith('{\n  "results": [\n    {\n      "source": "examples/valid.json",')
    assert out.endswith("}\n") and not out.endswith("\n\n")
    assert "æøå" in out and "Ærlig" in out and "\\u00e6" not in out
    assert out == _json(make_reports())
    assert json.loads(out)["results"][5]["findings"][0]["message"] == NASTY


def test_empty_report_list():
    doc = json.loads(_json([]))
    assert doc["results"] == []
    assert doc["summary"] == {"inputs": 0, "valid": 0, "invalid": 0, "errors": 0, "warnings": 0, "by_rule": {}}


def test_lone_surrogate_is_escaped_and_round_trips():
    message = "value \ud800 is not a character, but \U0001f600 is"
    out = _json([Report("s.json", "k", [Finding("r", ERROR, "/a", message)])])
    out.encode("utf-8")
    assert "\\ud800" in out and "\U0001f600" in out
    assert json.loads(out)["results"][0]["findings"][0]["message"] == message


def test_the_document_is_what_json_dumps_writes(reports):
    """The results are written without json.dumps' indented (pure-Python) encoder: byte for byte what it writes, for
    the fixtures' reports (escapes, controls, non-ASCII, candidates, lines and columns) and a value it cannot write."""
    from validator.formats.json_format import dumps

    odd = Report(NASTY + "\ud800\u2028", "sepa-credit-transfer", [Finding("r", ERROR, "/a\u202e", "\x1b[2J é 😀", None, None, None, 3, 7)],
                 candidates=("a", "b"), detected=True)
    for batch in (reports, [odd], [Report("f.json", None)]):
        summary = json.loads(_json(batch))["summary"]
        document = {"results": [r.as_dict() for r in batch], "summary": summary,
                    "tool": {"name": "obvalidate", "version": TOOL_VERSION}}
        assert _json(batch) == dumps(document) + "\n"
