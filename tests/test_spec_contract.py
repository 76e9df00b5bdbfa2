"""The contract: spec/openapi.yaml against the interface document it was written from.

1. openapi-spec-validator accepts the spec.
2. The document's tables and lists (parsed by tests/document.py, never hand-copied) agree with the spec:
   endpoints, header required flags per operation, field required flags and lengths, the Limits
   table, code sets, transaction statuses, message codes, minor units.
3. Every example in the spec validates against its schema (Draft 2020-12 with format checking), and
   a broken copy of an example is rejected.
4. Traceability: x-document-ref and x-assumption name real document sections and decisions.

The spec is read through the project's loader (validator.spec.load_spec). The interface document and
the shared reference files are found as described in tests/document.py; when they are missing the
tests fail with a message saying where they were looked for.
"""
from __future__ import annotations

import copy
import csv
import re
from pathlib import Path
from typing import Any, Iterator
from urllib.parse import urlsplit

import iso4217
import pycountry
import pytest
from jsonschema import Draft202012Validator, FormatChecker
from openapi_spec_validator import validate as validate_openapi

from document import (
    SEP,
    Document,
    DocumentNotFound,
    inline_fields,
    length_rule,
    load_document,
    named_fields,
    parse_markdown,
    reference_path,
    split_list,
    backticked,
)
from validator.findings import pointer as json_pointer, walk_json
from validator.spec import Spec, load_spec

SCHEMAS = "#/components/schemas/"
DIALECT = "https://json-schema.org/draft/2020-12/schema"

# Codes of the document's currency set that are not in the current ISO 4217 list (pycountry's and the
# iso4217 package's 178 codes). Named here so that a change of either list is noticed.
WITHDRAWN_CURRENCIES = {"ANG", "BGN", "BYR", "CUC", "HRK", "MRO", "SLL", "STD", "VEF", "ZWD"}
NOT_ISO_CURRENCIES = {"GGP", "IMP", "JEP", "SPL", "TVD"}


# ============================================================== fixtures and helpers


@pytest.fixture(scope="module")
def spec() -> Spec:
    return load_spec()


def _document_or_failure() -> Document:
    """The parsed document; when it is missing the test FAILS (never skips) saying where it was looked for."""
    try:
        return load_document()
    except DocumentNotFound as exc:
        message = str(exc)
    pytest.fail(message, pytrace=False)


def _reference_or_failure(name: str) -> Path:
    try:
        return reference_path(name)
    except DocumentNotFound as exc:
        message = str(exc)
    pytest.fail(message, pytrace=False)


@pytest.fixture(scope="module")
def doc() -> Document:
    return _document_or_failure()


def test_the_interface_document_and_the_decisions_are_present() -> None:
    document = _document_or_failure()
    assert document.title == "Open-Banking Payment Initiation and Sandbox Interface"
    assert len(document.paths) >= 30
    for name in DECISION_FILES:
        _reference_or_failure(name)
    _reference_or_failure("currency-minor-units.csv")


DECISION_FILES = ("decisions.md", "decisions-lifecycle.md")  # A1-A22, then A23-A32
DECISION_IDS = [f"A{i}" for i in range(1, 33)]
# Decisions the project took after the shared tables (issue 17: each new silent point the document leaves open), declared
# in the spec's x-assumptions only, numbered on from A33.
PROJECT_DECISIONS = ("A33", "A34", "A35", "A36", "A37", "A38", "A39", "A40", "A41", "A42")


def decision_table(name: str) -> dict[str, dict[str, str]]:
    """One decisions file's table, by id: {"gap" (or "gap or ambiguity"), "decision", "profile"}."""
    path = _reference_or_failure(name)
    parsed = parse_markdown(path.read_text(encoding="utf-8"), path)
    tables = [t for s in parsed.sections for t in s.tables if t.header[:1] == ["id"]]
    assert len(tables) == 1, f"expected one decisions table in {path.name}"
    return {r["id"]: r for r in tables[0].records()}


@pytest.fixture(scope="module")
def decisions() -> dict[str, dict[str, str]]:
    """Both decisions files' tables, by id, in order."""
    merged: dict[str, dict[str, str]] = {}
    for name in DECISION_FILES:
        table = decision_table(name)
        assert not set(table) & set(merged), f"{name} repeats decision ids {sorted(set(table) & set(merged))}"
        merged.update(table)
    return merged


def ref_name(ref: str | None) -> str | None:
    return ref[len(SCHEMAS):] if ref and ref.startswith(SCHEMAS) else None


def ref_chain(spec: Spec, node: dict) -> list[str]:
    """Names of the component schemas a node reaches by following $ref."""
    names = []
    while isinstance(node, dict) and "$ref" in node:
        name = ref_name(node["$ref"])
        if name is None or name in names:
            break
        names.append(name)
        node = spec.schema(name)
    return names


def refined_refs(spec: Spec, chain: list[str]) -> list[str]:
    """Component schemas the last schema of a $ref chain refines through allOf (e.g. PaymentCreationLinks: Links)."""
    if not chain:
        return []
    return [name for part in spec.schema(chain[-1]).get("allOf", []) if (name := ref_name(part.get("$ref")))]


def effective(spec: Spec, node: dict) -> dict:
    """A property schema with its $ref chain folded in (the property's own keywords win)."""
    merged: dict = {}
    seen = set()
    while isinstance(node, dict):
        for key, value in node.items():
            if key != "$ref":
                merged.setdefault(key, value)
        ref = node.get("$ref")
        if not ref or ref in seen:
            break
        seen.add(ref)
        node = spec.resolve(ref)
    return merged


def flatten(spec: Spec, schema: dict) -> tuple[dict[str, dict], set[str]]:
    """(properties, required) of an object schema, through $ref and allOf."""
    schema = effective(spec, schema)
    props: dict[str, dict] = {}
    required: set[str] = set()
    for part in schema.get("allOf", []):
        p, r = flatten(spec, part)
        props.update(p)
        required |= r
    props.update(schema.get("properties", {}))
    required |= set(schema.get("required", []))
    return props, required


def prop_at(spec: Spec, schema: dict, dotted: str) -> tuple[dict | None, bool]:
    """(property schema, required) at a dotted path such as cardTransactions.booked."""
    node, required = schema, False
    for part in dotted.split("."):
        props, req = flatten(spec, node)
        if part not in props:
            return None, False
        node, required = props[part], part in req
    return node, required


def format_checker() -> FormatChecker:
    """jsonschema's FormatChecker plus the formats the spec uses that it does not know.

    The virtualenv has no rfc3987 / rfc3986-validator, so `uri` is checked here (RFC 3986 absolute URI:
    a scheme, no spaces or characters RFC 3986 excludes); int32 is OpenAPI's 32-bit integer format.
    """
    checker = FormatChecker()

    @checker.checks("uri", raises=ValueError)
    def _uri(value: object) -> bool:
        if not isinstance(value, str):
            return True
        if not re.fullmatch(r"[A-Za-z][A-Za-z0-9+.\-]*:[^\s<>\"{}|\\^`]*", value):
            return False
        parts = urlsplit(value)
        _ = parts.port  # raises ValueError on a malformed port
        return bool(parts.scheme)

    @checker.checks("int32")
    def _int32(value: object) -> bool:
        return not isinstance(value, int) or isinstance(value, bool) or -(2**31) <= value < 2**31

    @checker.checks("int64")
    def _int64(value: object) -> bool:
        return not isinstance(value, int) or isinstance(value, bool) or -(2**63) <= value < 2**63

    return checker


FORMAT_CHECKER = format_checker()


def validator_for(spec: Spec, schema_or_ref: dict, *, formats: bool = True) -> Draft202012Validator:
    wrapper = {"$schema": DIALECT, "components": spec.document["components"], **schema_or_ref}
    return Draft202012Validator(wrapper, format_checker=FORMAT_CHECKER if formats else None)


def errors_of(spec: Spec, schema_or_ref: dict, value: Any, *, formats: bool = True) -> list[str]:
    v = validator_for(spec, schema_or_ref, formats=formats)
    return [f"{'/'.join(map(str, e.absolute_path)) or '(root)'}: {e.message}" for e in v.iter_errors(value)]


def pointer(*tokens: object) -> str:
    return "#" + json_pointer(*tokens)


walk = walk_json


def assumptions_of(node: dict) -> list[str]:
    value = node.get("x-assumption")
    if value is None:
        return []
    return list(value) if isinstance(value, list) else [value]


def report(errors: list[str], what: str) -> None:
    assert not errors, f"{len(errors)} {what}:\n  " + "\n  ".join(errors)


# ============================================================== 1. the spec is valid OpenAPI


def test_openapi_spec_validator_accepts_the_spec(spec: Spec) -> None:
    assert spec.document["openapi"].startswith("3.1")
    validate_openapi(copy.deepcopy(spec.document))  # raises OpenAPIValidationError on any defect


def test_openapi_spec_validator_is_not_vacuous(spec: Spec) -> None:
    broken = copy.deepcopy(spec.document)
    broken["components"]["parameters"]["PSUID"]["in"] = "body"  # not a parameter location in OpenAPI 3
    with pytest.raises(Exception, match="body"):
        validate_openapi(broken)


def test_every_component_schema_is_a_valid_draft_2020_12_schema(spec: Spec) -> None:
    errors = []
    for name, schema in spec.schemas.items():
        try:
            Draft202012Validator.check_schema({"$schema": DIALECT, **schema})
        except Exception as exc:  # jsonschema.SchemaError
            errors.append(f"{name}: {exc}".splitlines()[0])
    report(errors, "invalid component schemas")


# ============================================================== 2a. endpoints and headers

ENDPOINT_SECTION = "Endpoints"
HEADER_SECTION = "Endpoints › Header parameters"
# The header table's caption names its columns by operation; column 4 lists its endpoints itself.
# A changed caption fails test_header_table_columns_are_the_ones_this_test_knows.
HEADER_COLUMN_CAPTION = (
    "Columns: 1 = signing basket, 2 = SEPA credit transfer, 3 = bulk payment, "
    "4 = GET sandbox operations (endpoints 4, 5, 7), 5 = sandbox card transaction creation."
)
COLUMN_OF_ENDPOINT = {1: 1, 2: 2, 3: 3, 4: 4, 5: 4, 6: 5, 7: 4}
CONTENT_HEADERS = ("Accept", "Content-Type")  # in x-headers, not parameters (OpenAPI forbids them)


def endpoint_rows(doc: Document) -> list[dict[str, str]]:
    rows = doc.section(ENDPOINT_SECTION).table().records()
    assert [r["#"] for r in rows] == [str(i) for i in range(1, 8)], "the Endpoints table lists endpoints 1 to 7"
    return rows


def endpoint_path(row: dict[str, str], decisions: dict[str, dict[str, str]]) -> str:
    path = row["Path"]
    if path.startswith("/"):
        return path
    # "(signing basket creation)": the path is not shown; A1 decides it.
    assert path == "(signing basket creation)", f"unexpected path cell {path!r}"
    first = re.search(r"`POST (/\S+)`", decisions["A1"]["decision"])
    assert first, "A1 names the basket creation path as `POST /...`"
    return first.group(1)


def endpoint_operations(spec: Spec, doc: Document, decisions) -> dict[int, Any]:
    by_route = {(op.method, op.path): op for op in spec.operations.values()}
    found = {}
    for row in endpoint_rows(doc):
        route = (row["Method"], endpoint_path(row, decisions))
        assert route in by_route, f"endpoint {row['#']} ({row['Purpose']}): no operation {route[0]} {route[1]} in the spec"
        found[int(row["#"])] = by_route[route]
    return found


def test_the_seven_endpoints_exist_with_method_and_path(spec, doc, decisions) -> None:
    ops = endpoint_operations(spec, doc, decisions)
    assert len(ops) == 7 and len({o.operation_id for o in ops.values()}) == 7
    assert ops[1].path == "/v1/signing-baskets" and "A1" in ops[1].assumptions
    for number, op in ops.items():
        heading = [s.path for s in doc.subsections(ENDPOINT_SECTION) if s.title.startswith(f"{number}. ")]
        assert len(heading) == 1, f"one Endpoints subsection for endpoint {number}"
        assert op.document_ref == heading[0], f"{op.operation_id} should refer to {heading[0]!r}, not {op.document_ref!r}"


def test_header_table_columns_are_the_ones_this_test_knows(doc) -> None:
    caption = doc.section(HEADER_SECTION).table().caption or ""
    assert HEADER_COLUMN_CAPTION in caption, f"the header table's column legend changed: {caption!r}"
    in_parens = re.search(r"4 = [^(]*\(endpoints ([\d, ]+)\)", caption)
    assert in_parens and [int(n) for n in in_parens.group(1).split(",")] == [
        e for e, c in COLUMN_OF_ENDPOINT.items() if c == 4
    ]


def test_operations_carry_their_header_table_column(spec, doc, decisions) -> None:
    ops = endpoint_operations(spec, doc, decisions)
    errors = []
    for number, op in ops.items():
        if op.header_table_column != COLUMN_OF_ENDPOINT[number]:
            errors.append(f"{op.operation_id}: x-header-table-column {op.raw.get('x-header-table-column')!r}, "
                          f"the table's column for endpoint {number} is {COLUMN_OF_ENDPOINT[number]}")
    table_ops = {op.operation_id for op in ops.values()}
    for op in spec.operations.values():
        if op.operation_id not in table_ops and op.header_table_column is not None:
            errors.append(f"{op.operation_id} is not one of the 7 endpoints but claims header column {op.header_table_column}")
        if "x-header-table-column" not in op.raw:
            errors.append(f"{op.operation_id} has no x-header-table-column (a column number or 'none')")
    report(errors, "header-table column mismatches")


def test_header_required_flags_match_the_header_table(spec, doc, decisions) -> None:
    table = doc.section(HEADER_SECTION).table()
    assert table.header == ["Header", "Type", "1", "2", "3", "4", "5"]
    assert len(table.rows) == 30
    ops = endpoint_operations(spec, doc, decisions)
    errors = []
    checked = 0
    for number, op in ops.items():
        column = table.column(str(op.header_table_column))
        params = {p.key: p for p in op.header_parameters}
        content = {k.lower(): v for k, v in op.content_headers.items()}
        listed = set()
        for row in table.rows:
            name, cell = row[0], row[column]
            assert cell in ("R", "O", "-"), f"header table cell {cell!r} for {name}"
            listed.add(name.lower())
            where = f"{op.operation_id} (column {op.header_table_column}) {name}"
            checked += 1
            if name in CONTENT_HEADERS:
                entry = content.get(name.lower())
                if entry is None:
                    errors.append(f"{where}: not in x-headers")
                    continue
                if entry.get("required") is not False:
                    errors.append(f"{where}: x-headers required should be false")
                if cell == "-" and entry.get("accepted") is not False and entry.get("x-assumption") != "A33":
                    errors.append(f"{where}: the table says '-', x-headers should say accepted: false (or A33)")
                if cell != "-" and entry.get("accepted") is False:
                    errors.append(f"{where}: the table says {cell}, x-headers says accepted: false")
                if name.lower() in params:
                    errors.append(f"{where}: also declared as a header parameter")
                continue
            param = params.get(name.lower())
            if cell == "-":
                if param is not None:
                    errors.append(f"{where}: the table says '-', the spec declares it")
            elif param is None:
                errors.append(f"{where}: the table says {cell}, the spec does not declare it")
            elif param.required != (cell == "R"):
                errors.append(f"{where}: the table says {cell}, the spec says required={param.required}")
        for key in params:
            if key not in listed:
                errors.append(f"{op.operation_id}: header parameter {key!r} is not in the header table")
    assert checked == 7 * 30
    report(errors, "header flag mismatches")


def test_header_types_match_the_header_table(spec, doc) -> None:
    table = doc.section(HEADER_SECTION).table()
    params = {}
    for op in spec.operations.values():
        for p in op.header_parameters:
            params.setdefault(p.key, []).append((op.operation_id, p))
    errors = []
    for row in table.records():
        name, typ = row["Header"], row["Type"]
        if name in CONTENT_HEADERS:
            continue
        declared = params.get(name.lower())
        if not declared:
            errors.append(f"{name}: no operation declares it")
            continue
        for op_id, p in declared:
            schema = effective(spec, p.schema)
            if typ == "UUID":
                ok = schema.get("type") == "string" and schema.get("format") == "uuid"
            elif " or " in typ:
                ok = schema.get("enum") == split_list(typ)
            else:
                ok = typ == "string" and schema.get("type") == "string"
            if not ok:
                errors.append(f"{op_id} {name}: table type {typ!r}, spec schema {schema}")
    report(errors, "header type mismatches")


def test_x_accept_fix_on_the_basket_must_carry_amount_as_string(spec, doc) -> None:
    meaning = next(i for i in doc.section(HEADER_SECTION).items if i.startswith("x-accept-fix on the signing basket"))
    assert backticked(meaning) == ["amount-as-string"]
    basket = spec.operation("createSigningBasket")
    param = next(p for p in basket.header_parameters if p.key == "x-accept-fix")
    for good in ("amount-as-string", "longer-name,amount-as-string", "amount-as-string, cash-account-type-iso"):
        assert not errors_of(spec, param.schema, good), good
    for bad in ("longer-name", "amount-as-strings", ""):
        assert errors_of(spec, param.schema, bad), f"{bad!r} should be refused on the basket operation"
    assert spec.schema("AcceptFixName")["x-required-on"] == {"createSigningBasket": "amount-as-string"}


def test_endpoint_query_and_path_parameters_match_the_endpoint_sections(spec, doc, decisions) -> None:
    ops = endpoint_operations(spec, doc, decisions)
    errors = []
    checked = 0
    for number, op in ops.items():
        section = next(s for s in doc.subsections(ENDPOINT_SECTION) if s.title.startswith(f"{number}. "))
        for marker, declared in (("Query:", op.query_parameters), ("Path parameter:", op.path_parameters)):
            lines = [i for i in section.items if i.startswith(marker)]
            stated = named_fields(lines[0]) if lines else {}
            have = {p.name: p for p in declared}
            if set(stated) != set(have):
                errors.append(f"{op.operation_id} {marker} document {sorted(stated)}, spec {sorted(have)}")
            for name, tokens in stated.items():
                p = have.get(name)
                if p is None:
                    continue
                checked += 1
                schema = effective(spec, p.schema)
                if p.required != ("R" in tokens):
                    errors.append(f"{op.operation_id} {name}: document {tokens}, spec required={p.required}")
                typ = tokens[0]
                expect = {"boolean": {"type": "boolean"}, "date": {"type": "string", "format": "date"},
                          "int32": {"type": "integer", "format": "int32"}, "string": {"type": "string"}}[typ]
                if any(schema.get(k) != v for k, v in expect.items()):
                    errors.append(f"{op.operation_id} {name}: document type {typ}, spec {schema}")
                for t in tokens:
                    m = re.fullmatch(r">=\s*(\d+)", t)
                    if m and schema.get("minimum") != int(m.group(1)):
                        errors.append(f"{op.operation_id} {name}: document {t}, spec minimum {schema.get('minimum')}")
                # "bookingStatus (string, R; booked, pending or both)": the values follow the R/O flag
                flag = tokens.index("R" if "R" in tokens else "O")
                values = [t for t in tokens[flag + 1:] if not re.match(r"[<>]=", t)]
                if typ == "string" and values and re.fullmatch(r"[a-z]+", values[0]):
                    if schema.get("enum") != split_list(", ".join(values)):
                        errors.append(f"{op.operation_id} {name}: document values {values}, spec enum {schema.get('enum')}")
    assert checked >= 14  # allowLogicalDuplicate x2, withAccounts, withAgreements, 4 + 5 on the lists, 3 path
    report(errors, "endpoint parameter mismatches")


def test_endpoint_success_statuses(spec, doc, decisions) -> None:
    ops = endpoint_operations(spec, doc, decisions)
    errors = []
    for number, op in ops.items():
        section = next(s for s in doc.subsections(ENDPOINT_SECTION) if s.title.startswith(f"{number}. "))
        result = section.line_starting("Result:")
        if "CREATED" in result or "201" in result:
            expected = "201"
        else:  # "Success status code of the GET operations and of operation 6: not shown." -> A15
            assert "Success status code of the GET operations and of operation 6: not shown." in \
                doc.section(ENDPOINT_SECTION).text
            expected = "200" if op.method == "GET" else "201"
            if "A15" not in op.assumptions:
                errors.append(f"{op.operation_id}: success status comes from A15 but the operation does not mark it")
        success = [s for s in op.responses if s.startswith("2")]
        if success != [expected]:
            errors.append(f"{op.operation_id}: success statuses {success}, expected [{expected}]")
    others = doc.section("Endpoints › 3. Create bulk payment").line_starting("Other responses:")
    stated = re.findall(r"\b[45]\d\d\b", others)
    bulk = ops[3]
    missing = [s for s in stated if s not in bulk.responses]
    if missing:
        errors.append(f"{bulk.operation_id}: missing the responses {missing} the document states")
    report(errors, "success status mismatches")


def test_bulk_error_responses_match_the_errors_table(spec, doc, decisions) -> None:
    table = doc.section("Errors › Responses of the bulk payment operation").table()
    bulk = endpoint_operations(spec, doc, decisions)[3]
    errors = []
    assert len(table.rows) == 5
    for row in table.records():
        status, body, code = row["HTTP status"], row["Body"], row["Code"]
        response = bulk.responses.get(status)
        if response is None:
            errors.append(f"no {status} response")
            continue
        media = response["content"]["application/json"]
        schema = media["schema"]
        targets = [ref_name(s.get("$ref")) for s in schema.get("anyOf", [schema])]
        if body == "error body" and targets != ["ErrorBody"]:
            errors.append(f"{status}: body should be the error body, spec {targets}")
        if body.startswith("object with _links") and "ScaRedirectResponse" not in targets:
            errors.append(f"{status}: body should carry _links.scaRedirect, spec {targets}")
        codes = {spec.deref(ex)["value"].get("code") for ex in media.get("examples", {}).values()}
        m = re.fullmatch(r"[A-Z_]+", code)
        if m and code not in codes:
            errors.append(f"{status}: no example with code {code} (examples have {sorted(c for c in codes if c)})")
        if m and code not in spec.code_set("MessageCode"):
            errors.append(f"{status}: {code} not in the message code set")
    error_body = doc.section("Errors › Error body (bulk payment operation)").table().records()
    props, _ = flatten(spec, spec.schema("ErrorBody"))
    if [r["Field"] for r in error_body] != list(props):
        errors.append(f"ErrorBody fields {list(props)}, document {[r['Field'] for r in error_body]}")
    for r in error_body:
        if r["Field"] in props and effective(spec, props[r["Field"]]).get("type") != r["Type"]:
            errors.append(f"ErrorBody.{r['Field']}: document type {r['Type']}")
    report(errors, "bulk error response mismatches")


# ============================================================== 2b. resource fields

RES = "Resources and their fields"


def doc_type_matches(spec: Spec, prop: dict, typ: str) -> str | None:
    """None when the spec property has the JSON type the document's Type cell names, else a reason."""
    eff = effective(spec, prop)
    chain = ref_chain(spec, prop)
    t = typ.lower()
    if t.startswith("string"):
        if eff.get("type") != "string":
            return f"type {eff.get('type')}"
        if "date" in t and eff.get("format") != "date":
            return "not format: date"
    elif t.startswith("boolean"):
        if eff.get("type") != "boolean":
            return f"type {eff.get('type')}"
    elif t.startswith("integer") or t == "int32":
        if eff.get("type") != "integer" or eff.get("format") != "int32":
            return f"type {eff.get('type')} format {eff.get('format')}"
    elif t == "number":
        if eff.get("type") != "number":
            return f"type {eff.get('type')}"
    elif t.startswith("array"):
        if eff.get("type") != "array":
            return f"type {eff.get('type')}"
    elif t.startswith("object") or t.startswith("map") or t in ("amount", "address") or t.startswith("account reference"):
        if eff.get("type") != "object" and not eff.get("allOf"):
            return f"type {eff.get('type')}"
        if t == "amount" and "Amount" not in chain:
            return f"not the Amount schema ({chain})"
        if t.startswith("map of name to link") and "Links" not in chain + refined_refs(spec, chain):
            return f"not the Links map ({chain})"
        if t == "address" and not ({"Address", "AddressBulk"} & set(chain)):
            return f"not an Address schema ({chain})"
        if t.startswith("account reference (iban)") and "AccountReferenceIban" not in chain:
            return f"not AccountReferenceIban ({chain})"
        if t.startswith("account reference (bban)") and "AccountReferenceBban" not in chain:
            return f"not AccountReferenceBban ({chain})"
    elif t == "structured remittance entry":
        if "RemittanceStructured" not in chain:
            return f"not the structured remittance entry ({chain})"
    else:
        return f"unknown document type {typ!r}"
    return None


def check_field(spec: Spec, errors: list[str], where: str, prop: dict | None, spec_required: bool,
                doc_required: bool | None, typ: str | None, rule: str) -> None:
    if prop is None:
        errors.append(f"{where}: missing from the spec")
        return
    if doc_required is not None and spec_required != doc_required:
        errors.append(f"{where}: document {'R' if doc_required else 'O'}, spec required={spec_required}")
    if typ:
        problem = doc_type_matches(spec, prop, typ)
        if problem:
            errors.append(f"{where}: document type {typ!r}, spec {problem}")
    text = f"{typ or ''} {rule}"
    limit = length_rule(text)
    eff = effective(spec, prop)
    if limit.max_length is not None and eff.get("maxLength") != limit.max_length:
        errors.append(f"{where}: document max {limit.max_length}, spec maxLength {eff.get('maxLength')}")
    if limit.max_length is None and "maxLength" in eff:
        errors.append(f"{where}: the document states no maximum, spec maxLength {eff['maxLength']}")
    if limit.min_length is not None and eff.get("minLength") != limit.min_length:
        errors.append(f"{where}: document min {limit.min_length}, spec minLength {eff.get('minLength')}")
    if limit.min_length is None and eff.get("minLength", 0) > 1:
        errors.append(f"{where}: the document states no minimum, spec minLength {eff['minLength']}")
    chain = ref_chain(spec, prop)
    if (typ or "").lower().startswith("object"):  # the phrases then speak of the object's own fields
        return
    for phrase, code_set in (("currency set", "CurrencyCode"), ("country set", "CountryCode"),
                             ("purpose codes", "PurposeCode"), ("ISO 4217 alphabetic", "CurrencyCode")):
        if phrase in text and code_set not in chain:
            errors.append(f"{where}: document says {phrase!r}, spec does not use {code_set} ({chain})")
    values = re.fullmatch(r"[A-Z]+(?:, [A-Z]+)* or [A-Z]+|true or false", rule.strip())
    if values:
        listed = split_list(values.group(0))
        if eff.get("enum") != listed:
            errors.append(f"{where}: document values {listed}, spec enum {eff.get('enum')}")


def check_table(spec: Spec, errors: list[str], schema_name: str, records: list[dict[str, str]], *,
                default_required: bool | None = None, skip: tuple[str, ...] = (),
                extra_allowed: tuple[str, ...] = ()) -> int:
    schema = spec.schema(schema_name)
    props, required = flatten(spec, schema)
    stated = []
    for r in records:
        field_ = r["Field"]
        if field_ in skip:
            continue
        stated.append(field_)
        ro = r.get("R/O")
        rule = r.get("Rule", "")
        if ro is not None:
            doc_required = ro.split(";")[0].strip() == "R"
            rule = f"{rule} {ro.split(';', 1)[1] if ';' in ro else ''}"
        elif default_required is not None:
            doc_required = not rule.startswith("O.") and rule != "O"
        else:
            doc_required = None
        prop, spec_required = prop_at(spec, schema, field_)
        if "." not in field_:
            spec_required = field_ in required
        check_field(spec, errors, f"{schema_name}.{field_}", prop, spec_required, doc_required, r.get("Type"), rule)
    top = {f.split(".")[0] for f in stated}
    extra = set(props) - top - set(extra_allowed)
    if extra:
        errors.append(f"{schema_name}: properties not in the document's table: {sorted(extra)}")
    return len(stated)


def test_amount_fields(spec, doc) -> None:
    errors: list[str] = []
    n = check_table(spec, errors, "Amount", doc.section(f"{RES}{SEP}Amount").table().records())
    assert n == 2
    report(errors, "Amount mismatches")


def test_account_reference_fields(spec, doc) -> None:
    rows = doc.section(f"{RES}{SEP}Account reference").table().records()
    variants = {"In the SEPA credit transfer": "AccountReferenceIban",
                "In the bulk payment (debtor and creditor)": "AccountReferenceBban"}
    assert [r["Variant"] for r in rows] == list(variants)
    errors: list[str] = []
    for r in rows:
        name = variants[r["Variant"]]
        fields = inline_fields(r["Fields"])
        assert len(fields) == 2, r["Fields"]
        records = [{"Field": f, "R/O": "R" if "R" in t else "O",
                    "Type": t[0] if t[0] == "string" else "",
                    "Rule": ", ".join(x for x in t if x not in ("R", "O", "string"))} for f, t in fields.items()]
        check_table(spec, errors, name, records)
    iban = effective(spec, spec.schema("AccountReferenceIban")["properties"]["iban"])
    assert iban.get("pattern"), "ISO 13616-1 format: the IBAN has a pattern"
    report(errors, "account reference mismatches")


def test_address_fields(spec, doc) -> None:
    records = doc.section(f"{RES}{SEP}Address (creditorAddress)").table().records()
    by_field = {r["Field"]: r for r in records}
    assert "bulk payment schema only" in by_field["townName"]["Rule"]
    assert "deprecated in the bulk payment schema" in by_field["city"]["Rule"]
    errors: list[str] = []
    check_table(spec, errors, "Address", records, skip=("townName",))
    check_table(spec, errors, "AddressBulk", records)
    if spec.schema("AddressBulk")["properties"]["city"].get("deprecated") is not True:
        errors.append("AddressBulk.city should be deprecated")
    if spec.schema("Address")["properties"]["city"].get("deprecated"):
        errors.append("Address.city is deprecated only in the bulk payment schema")
    uses = {name: ref_chain(spec, spec.schema(owner)["properties"]["creditorAddress"])[0]
            for name, owner in (("SEPA", "SepaCreditTransferRequest"), ("bulk", "BulkEntry"))}
    if uses != {"SEPA": "Address", "bulk": "AddressBulk"}:
        errors.append(f"creditorAddress schemas: {uses}")
    report(errors, "Address mismatches")


def test_structured_remittance_fields(spec, doc) -> None:
    errors: list[str] = []
    n = check_table(spec, errors, "RemittanceStructured",
                    doc.section(f"{RES}{SEP}Structured remittance entry").table().records())
    assert n == 3
    report(errors, "structured remittance mismatches")


def test_sepa_credit_transfer_request_fields(spec, doc) -> None:
    errors: list[str] = []
    n = check_table(spec, errors, "SepaCreditTransferRequest",
                    doc.section(f"{RES}{SEP}Single SEPA credit transfer request").table().records())
    assert n == 8
    report(errors, "SEPA request mismatches")


def test_bulk_payment_request_and_entry_fields(spec, doc) -> None:
    section = doc.section(f"{RES}{SEP}Bulk payment request (Norwegian domestic credit transfers)")
    errors: list[str] = []
    assert check_table(spec, errors, "BulkPaymentRequest", section.table().records()) == 4
    assert check_table(spec, errors, "BulkEntry", section.table("Bulk entry").records()) == 11
    payments = effective(spec, spec.schema("BulkPaymentRequest")["properties"]["payments"])
    if ref_name(payments["items"].get("$ref")) != "BulkEntry":
        errors.append("BulkPaymentRequest.payments items are not BulkEntry")
    array = effective(spec, spec.schema("BulkEntry")["properties"]["remittanceInformationStructuredArray"])
    if ref_name(array["items"].get("$ref")) != "RemittanceStructured":
        errors.append("remittanceInformationStructuredArray items are not the structured remittance entry")
    single = spec.schema("BulkEntry")["properties"]["remittanceInformationStructured"]
    if ref_chain(spec, single) != ["RemittanceStructured"] or not single.get("deprecated"):
        errors.append("remittanceInformationStructured: the structured entry, marked to be deprecated")
    report(errors, "bulk request mismatches")


def test_payment_creation_response_fields(spec, doc) -> None:
    section = doc.section(f"{RES}{SEP}Payment creation response (SEPA credit transfer and bulk)")
    errors: list[str] = []
    for name in ("SepaPaymentInitiationResponse", "BulkPaymentInitiationResponse"):
        assert check_table(spec, errors, name, section.table().records()) == 7
    tpp = inline_fields(section.line_starting("TPP message:"))
    link = inline_fields(section.line_starting("Link:"))
    assert list(tpp) == ["category", "code", "path", "text"] and list(link) == ["href", "verbs"]
    for name, fields in (("TppMessage", tpp), ("Link", link)):
        records = [{"Field": f, "R/O": "R" if "R" in t else "O",
                    "Type": t[0] if t[0] in ("string",) or t[0].startswith("array") else "",
                    "Rule": ", ".join(x for x in t if x not in ("R", "O", "string"))} for f, t in fields.items()]
        check_table(spec, errors, name, records)
    if list(spec.code_set("TppMessageCategory")) != split_list(tpp["category"][1]):
        errors.append(f"TPP message category: document {tpp['category']}")
    if ref_chain(spec, spec.schema("TppMessage")["properties"]["code"]) != ["MessageCode"]:
        errors.append("TppMessage.code does not use the message code set")
    verbs = split_list(", ".join(link["verbs"][:-1]).replace("array of ", ""))
    if list(spec.code_set("LinkVerb")) != verbs:
        errors.append(f"Link verbs: document {verbs}, spec {spec.code_set('LinkVerb')}")
    report(errors, "payment creation response mismatches")


def test_signing_basket_fields(spec, doc) -> None:
    section = doc.section(f"{RES}{SEP}Signing basket")
    errors: list[str] = []
    request = section.line_starting("Request:")
    fields = inline_fields(request)
    assert list(fields) == ["paymentIds"]
    check_table(spec, errors, "SigningBasketRequest",
                [{"Field": "paymentIds", "R/O": "R", "Type": fields["paymentIds"][0], "Rule": ""}])
    at_most = re.search(r"at most (\d+)", request)
    ids = effective(spec, spec.schema("SigningBasketRequest")["properties"]["paymentIds"])
    if not at_most or ids.get("maxItems") != int(at_most.group(1)):
        errors.append(f"paymentIds maxItems {ids.get('maxItems')}, document {request!r}")
    assert check_table(spec, errors, "SigningBasketResponse", section.table("Response").records()) == 3
    status = dict((r["Field"], r["R/O"]) for r in section.table("Response").records())["transactionStatus"]
    listed = split_list(status.split("one of", 1)[1])
    if list(spec.code_set("TransactionStatusBasket")) != listed:
        errors.append(f"basket transactionStatus: document {listed}")
    report(errors, "signing basket mismatches")


def test_sandbox_customer_fields(spec, doc) -> None:
    section = doc.section(f"{RES}{SEP}Sandbox customer")
    errors: list[str] = []
    records = section.table().records()
    assert check_table(spec, errors, "SandboxCustomer", records) == 8
    customer_type = next(r for r in records if r["Field"] == "customerType")
    if list(spec.code_set("CustomerType")) != split_list(customer_type["Rule"]):
        errors.append(f"customerType: document {customer_type['Rule']}")
    links = next(r for r in records if r["Field"] == "_links")
    self_link, self_required = prop_at(spec, spec.schema("SandboxCustomer"), "_links.self")
    if "self (Link, R)" not in links["Rule"] or not self_required or ref_chain(spec, self_link or {}) != ["Link"]:
        errors.append("SandboxCustomer._links.self: a required Link")
    agreement = inline_fields(section.line_starting("Agreement:"))
    assert list(agreement) == ["id", "name", "engagements", "_links"]
    check_table(spec, errors, "SandboxAgreement",
                [{"Field": f, "R/O": "R" if "R" in t else "O", "Type": t[0] if len(t) > 1 else "", "Rule": ""}
                 for f, t in agreement.items()])
    holding = re.search(r"_links \(R\) holding (\w+) and (\w+)", section.line_starting("Agreement:"))
    assert holding
    for name in holding.groups():
        link, req = prop_at(spec, spec.schema("SandboxAgreement"), f"_links.{name}")
        if not req or ref_chain(spec, link or {}) != ["Link"]:
            errors.append(f"SandboxAgreement._links.{name}: a required Link")
    report(errors, "sandbox customer mismatches")


def test_sandbox_account_transaction_fields(spec, doc) -> None:
    records = doc.section(f"{RES}{SEP}Sandbox account transaction (returned by the list)").table().records()
    errors: list[str] = []
    # A36 adds the booking's payment reference (optional: a bank's record without it is not wrong)
    assert check_table(spec, errors, "SandboxAccountTransaction", records, extra_allowed=("paymentId", "endToEndId")) == 15
    for added in ("paymentId", "endToEndId"):
        if added in spec.schema("SandboxAccountTransaction").get("required", ()) or "A36" not in \
                spec.schema("SandboxAccountTransaction")["properties"][added].get("description", ""):
            errors.append(f"SandboxAccountTransaction.{added}: optional and explained by A36")
    # the creation input (A15) is the returned record without id and _links; creditorId is A15's addition
    assert check_table(spec, errors, "SandboxAccountTransactionInput", records, skip=("id", "_links"),
                       extra_allowed=("creditorId",)) == 13
    ref, _ = prop_at(spec, spec.schema("SandboxAccountTransaction"), "creditorAccount")
    props, required = flatten(spec, ref or {})
    if set(props) != {"iban", "bban"} or required != {"iban", "bban"}:
        errors.append(f"creditorAccount: object with iban, bban (strings, R); spec {sorted(props)} {sorted(required)}")
    report(errors, "sandbox account transaction mismatches")


def test_sandbox_card_transaction_input_fields(spec, doc) -> None:
    section = doc.section(f"{RES}{SEP}Sandbox card transaction (input)")
    table = section.table()
    assert table.caption == "All fields are R unless noted."
    errors: list[str] = []
    assert check_table(spec, errors, "SandboxCardTransactionInput", table.records(), default_required=True) == 16
    records = {r["Field"]: r for r in table.records()}
    exchange_rule = records["currencyExchange"]["Rule"]
    holds = re.search(r"Holds (.*?);", exchange_rule)
    assert holds and "all five required inside" in exchange_rule
    inner = {re.sub(r"\s*\(.*\)", "", f).strip(): f for f in split_list(holds.group(1))}
    props, required = flatten(spec, spec.schema("CurrencyExchange"))
    if list(props) != list(inner) or required != set(inner):
        errors.append(f"CurrencyExchange: document {list(inner)} all required, spec {list(props)} required {sorted(required)}")
    for name in inner:
        if "currency" in name.lower() and ref_chain(spec, props.get(name, {})) != ["CurrencyCode"]:
            errors.append(f"CurrencyExchange.{name}: from the currency set")
    if effective(spec, props.get("quotationDate", {})).get("format") != "date":
        errors.append("CurrencyExchange.quotationDate: a date")
    for amount in ("transactionAmount", "originalAmount", "markupFee"):
        typ = records[amount]["Type"]
        parts = inline_fields(typ)
        assert parts == {"currency": ["string"], "amount": ["int32"]}, typ
        obj, _ = prop_at(spec, spec.schema("SandboxCardTransactionInput"), amount)
        obj_props, obj_req = flatten(spec, obj or {})
        if set(obj_props) != set(parts) or obj_req != set(parts):
            errors.append(f"{amount}: currency and amount, both required; spec {sorted(obj_props)} {sorted(obj_req)}")
        for f, t in parts.items():
            if doc_type_matches(spec, obj_props.get(f, {}), t[0]):
                errors.append(f"{amount}.{f}: document {t[0]}")
    report(errors, "card transaction input mismatches")


def test_sandbox_card_transactions_returned_fields(spec, doc) -> None:
    section = doc.section(f"{RES}{SEP}Sandbox card transactions (returned)")
    errors: list[str] = []
    assert check_table(spec, errors, "SandboxCardTransactions", section.table().records()) == 4
    masked, req = prop_at(spec, spec.schema("SandboxCardTransactions"), "cardAccount.maskedPan")
    if masked is None or not req:
        errors.append("cardAccount.maskedPan: string, R")
    booked = section.line_starting("Each booked entry has:")
    names = split_list(re.sub(r"\([^)]*\)|;", ",", booked.split(":", 1)[1].split("All are R")[0]))
    assert "All are R" in booked and len(names) == 6, names
    props, required = flatten(spec, spec.schema("SandboxBookedCardTransaction"))
    if list(props) != names or required != set(names):
        errors.append(f"booked entry: document {names} all R, spec {list(props)} required {sorted(required)}")
    items, _ = prop_at(spec, spec.schema("SandboxCardTransactions"), "cardTransactions.booked")
    if ref_name(effective(spec, items or {}).get("items", {}).get("$ref")) != "SandboxBookedCardTransaction":
        errors.append("cardTransactions.booked items are not the booked entry")
    report(errors, "card transactions (returned) mismatches")


# ---- Limits table

LIMIT_TARGETS = {  # "Applies to" cell -> component schemas holding the limited fields
    "SEPA transfer, bulk entry": ("SepaCreditTransferRequest", "BulkEntry"),
    "payments": ("SepaCreditTransferRequest", "BulkPaymentRequest", "BulkEntry"),
    "addresses": ("Address", "AddressBulk"),
    "SEPA transfer accounts": ("AccountReferenceIban",),
    "bulk accounts": ("AccountReferenceBban",),
    "structured remittance": ("RemittanceStructured",),
    "bulk payment": ("BulkPaymentRequest",),
    "responses": ("PaymentInitiationResponseBase", "PaymentStatusResponse", "TppMessage"),
    "sandbox account transaction": ("SandboxAccountTransaction", "SandboxAccountTransactionInput"),
}
# Limits rows that are not a field constraint of the contract, and where each is accounted for.
LIMITS_OUTSIDE_FIELDS = {
    "Payments per signing basket": "SigningBasketRequest.paymentIds maxItems (checked below)",
    "limit": "the limit query parameter's minimum (checked below)",
    "Amount": "AmountString grammar (checked below)",
    "History without SCA": "behaviour of the bank, not a message field",
    "SCA renewal": "behaviour of the bank, not a message field",
    "Sandbox batch processing": "behaviour of the sandbox, not a message field",
}


def limit_fields(cell: str) -> list[str]:
    """"creditorName, debtorName, ultimateDebtor" / "tppMessages text and psuMessage" -> field names."""
    return [part.split()[-1] for part in split_list(cell)]


def test_limits_table(spec, doc) -> None:
    table = doc.section("Limits").table()
    assert table.header == ["Limit", "Value", "Applies to"]
    errors: list[str] = []
    checked = 0
    for r in table.records():
        limit, value, applies = r["Limit"], r["Value"], r["Applies to"]
        if limit in LIMITS_OUTSIDE_FIELDS:
            continue
        if applies not in LIMIT_TARGETS:
            errors.append(f"Limits row {limit!r}: 'Applies to' {applies!r} is not mapped to spec schemas")
            continue
        rule = length_rule(value)
        assert rule.max_length is not None, f"{limit}: {value!r} is not a length"
        for name in limit_fields(limit):
            holders = [s for s in LIMIT_TARGETS[applies] if name in flatten(spec, spec.schema(s))[0]]
            if not holders:
                errors.append(f"Limits {limit!r}: no {name} in {LIMIT_TARGETS[applies]}")
            for holder in holders:
                checked += 1
                eff = effective(spec, flatten(spec, spec.schema(holder))[0][name])
                got = (eff.get("minLength"), eff.get("maxLength"))
                want_min = rule.min_length if rule.min_length is not None else eff.get("minLength")
                if eff.get("maxLength") != rule.max_length or (rule.min_length is not None and eff.get("minLength") != want_min):
                    errors.append(f"{holder}.{name}: Limits says {value!r}, spec min/max {got}")
    assert checked >= 20
    records = {r["Limit"]: r for r in table.records()}
    basket = records["Payments per signing basket"]["Value"]
    ids = effective(spec, spec.schema("SigningBasketRequest")["properties"]["paymentIds"])
    if ids.get("maxItems") != int(re.search(r"at most (\d+)", basket).group(1)):
        errors.append(f"paymentIds maxItems {ids.get('maxItems')}, Limits says {basket!r}")
    minimum = int(re.search(r">=\s*(\d+)", records["limit"]["Value"]).group(1))
    limit_params = {p.name: p for op in spec.operations.values() for p in op.query_parameters if p.name == "limit"}
    if not limit_params or effective(spec, limit_params["limit"].schema).get("minimum") != minimum:
        errors.append(f"limit query parameter: minimum should be {minimum}")
    amount = records["Amount"]["Value"]
    precision, scale = map(int, re.search(r"precision (\d+), scale (\d+)", amount).groups())
    amount_schema = spec.schema("AmountString")
    if (amount_schema.get("x-precision"), amount_schema.get("x-scale")) != (precision, scale):
        errors.append(f"AmountString x-precision/x-scale, Limits says {amount!r}")
    integer_digits = precision - scale
    ok = ["1" * integer_digits + "." + "1" * scale, "0", "1." + "0" * scale]
    bad = ["1" * (integer_digits + 1), "1." + "1" * (scale + 1), "-1", "1e5", "1,5", " 1"]
    for v in ok:
        if errors_of(spec, {"$ref": SCHEMAS + "AmountString"}, v):
            errors.append(f"AmountString refuses {v!r} (precision {precision}, scale {scale})")
    for v in bad:
        if not errors_of(spec, {"$ref": SCHEMAS + "AmountString"}, v):
            errors.append(f"AmountString accepts {v!r}")
    report(errors, "Limits mismatches")


# ============================================================== 2c. code sets

CODE_SETS = f"{RES}{SEP}Code sets"


def currency_list(doc: Document) -> list[str]:
    items = doc.section(CODE_SETS).items_after("Currency set")
    codes = []
    for item in items:
        letter, rest = item.split(":", 1)
        group = split_list(rest)
        assert all(c.startswith(letter.strip()) for c in group), item
        codes.extend(group)
    return codes


def country_list(doc: Document) -> list[str]:
    return [c for item in doc.section(CODE_SETS).items_after("Country set") for c in split_list(item)]


def test_currency_set_equals_the_documents_list(spec, doc) -> None:
    listed = currency_list(doc)
    assert len(listed) == 162 and len(set(listed)) == 162
    assert list(spec.code_set("CurrencyCode")) == listed


def test_currency_set_differs_from_iso_only_by_withdrawn_and_non_iso_codes(spec, doc) -> None:
    listed = set(currency_list(doc))
    current_pycountry = {c.alpha_3 for c in pycountry.currencies}
    current_iso4217 = {c.code for c in iso4217.Currency}
    for current in (current_pycountry, current_iso4217):
        assert listed - current == WITHDRAWN_CURRENCIES | NOT_ISO_CURRENCIES
    not_current = spec.schema("CurrencyCode")["x-not-current-iso"]
    assert set(not_current["withdrawn"]) == WITHDRAWN_CURRENCIES
    assert set(not_current["not-iso"]) == NOT_ISO_CURRENCIES


def test_country_set_equals_the_documents_list_and_iso_3166(spec, doc) -> None:
    listed = country_list(doc)
    assert len(listed) == 249 and len(set(listed)) == 249
    assert list(spec.code_set("CountryCode")) == listed  # the document's order
    assert set(listed) == {c.alpha_2 for c in pycountry.countries}
    assert len(list(pycountry.countries)) == 249


def test_purpose_codes(spec, doc) -> None:
    line = doc.section(CODE_SETS).line_starting("Purpose codes")
    listed = split_list(line.split(":", 1)[1])
    assert len(listed) == 14
    assert list(spec.code_set("PurposeCode")) == listed


def test_transaction_status_sets_per_context(spec, doc) -> None:
    rows = doc.section("States and transitions").table().records()
    assert [r["Context"] for r in rows] == [
        "Response to creating a single SEPA credit transfer",
        "Response to creating a bulk payment",
        "Response to creating a signing basket",
    ]
    sepa = split_list(rows[0]["Values"])
    plus = re.fullmatch(r"the values above, plus (\w+)", rows[1]["Values"])
    assert plus, rows[1]["Values"]
    bulk = sepa + [plus.group(1)]
    basket = split_list(rows[2]["Values"])
    assert (len(sepa), len(bulk), basket) == (11, 12, ["RCVD", "ACTC", "PATC", "RJCT"])
    assert list(spec.code_set("TransactionStatusSepa")) == sepa
    assert list(spec.code_set("TransactionStatusBulk")) == bulk
    assert list(spec.code_set("TransactionStatusBasket")) == basket
    used = {name: ref_chain(spec, flatten(spec, spec.schema(name))[0]["transactionStatus"])[-1]
            for name in ("SepaPaymentInitiationResponse", "BulkPaymentInitiationResponse", "SigningBasketResponse")}
    assert used == {"SepaPaymentInitiationResponse": "TransactionStatusSepa",
                    "BulkPaymentInitiationResponse": "TransactionStatusBulk",
                    "SigningBasketResponse": "TransactionStatusBasket"}


def test_basket_worst_case_ranking_follows_a2(spec, decisions) -> None:
    ranking = spec.schema("TransactionStatusBasket")["x-worst-case-ranking"]
    stated = re.findall(r"\b([A-Z]{4}) \(([^)]*)\)", decisions["A2"]["decision"])
    assert [r["basket"] for r in ranking] == [b for b, _ in stated]
    assert [r["payments"] for r in ranking] == [split_list(p.replace("payment ", "")) for _, p in stated]
    ranked = [p for r in ranking for p in r["payments"]]
    assert sorted(ranked) == sorted(spec.code_set("TransactionStatusSepa")), "every SEPA status ranked once"


def test_message_codes_are_the_documents_23_plus_marked_extensions(spec, doc, decisions) -> None:
    section = doc.section("Errors › Message code set (tppMessages code, SEPA credit transfer and bulk payment responses)")
    listed = split_list(section.paragraphs[0])
    assert len(listed) == 23
    codes = list(spec.code_set("MessageCode"))
    assert codes[:23] == listed
    extensions = spec.schema("MessageCode")["x-extensions"]
    assert codes[23:] == list(extensions)
    for code, mark in extensions.items():
        ref, assumption = mark.get("x-document-ref"), mark.get("x-assumption")
        assert ref or assumption, f"extension {code} names neither a section nor an assumption"
        if ref:
            assert code in doc.section(ref).text, f"{code} is not stated in {ref!r}"
        if assumption:
            assert code in decisions[assumption]["decision"], f"{code} is not in decision {assumption}"
    category = split_list(section.line_starting("Category values:").split(":", 1)[1])
    assert list(spec.code_set("TppMessageCategory")) == category == ["ERROR", "WARNING"]


def test_link_verbs_booking_status_customer_type_and_psu_context(spec, doc) -> None:
    link = inline_fields(doc.section(f"{RES}{SEP}Payment creation response (SEPA credit transfer and bulk)").line_starting("Link:"))
    assert list(spec.code_set("LinkVerb")) == split_list(", ".join(link["verbs"][:-1]).replace("array of ", ""))
    query = named_fields(doc.section("Endpoints › 7. List sandbox card transactions").line_starting("Query:"))
    assert list(spec.code_set("BookingStatus")) == split_list(", ".join(query["bookingStatus"][2:]))
    customer = {r["Field"]: r for r in doc.section(f"{RES}{SEP}Sandbox customer").table().records()}
    assert list(spec.code_set("CustomerType")) == split_list(customer["customerType"]["Rule"])
    header = {r["Header"]: r for r in doc.section(HEADER_SECTION).table().records()}
    assert list(spec.code_set("PsuContext")) == split_list(header["PSU-Context"]["Type"])


def test_x_accept_fix_change_names_follow_versioning(spec, doc, decisions) -> None:
    item = doc.section("Versioning").line_starting("A published future breaking change")
    names = backticked(item)
    assert len(names) == 4
    assert list(spec.code_set("AcceptFixName")) == names
    aliases = spec.schema("AcceptFixName").get("x-aliases", {})
    for alias, target in aliases.items():
        assert target in names and alias in decisions["A18"]["decision"], f"alias {alias} -> {target} is not A18's"


def test_release_matches_versioning(spec, doc) -> None:
    item = doc.section("Versioning").line_starting("The current release is")
    release, date = re.search(r"is (\d+(?:\.\d+)+) \(dated (\d{4}-\d{2}-\d{2})\)", item).groups()
    assert (spec.info["version"], spec.info["x-release-date"]) == (release, date)


# ---- minor units


def test_minor_units_cover_exactly_the_currency_set(spec, doc) -> None:
    assert list(spec.minor_units) == currency_list(doc)
    assert all(isinstance(v, int) and 0 <= v <= 4 for v in spec.minor_units.values())


def test_minor_units_agree_with_iso_4217_for_every_current_code(spec) -> None:
    iso = {c.code: c.exponent for c in iso4217.Currency}
    errors = []
    compared = 0
    for code, units in spec.minor_units.items():
        if code not in iso:
            assert code in WITHDRAWN_CURRENCIES | NOT_ISO_CURRENCIES, code
            continue
        if iso[code] is None:  # ISO's "N/A" (XDR): A10 takes 2 by convention
            if units != 2:
                errors.append(f"{code}: ISO has no minor unit, A10 takes 2, spec {units}")
            continue
        compared += 1
        if units != iso[code]:
            errors.append(f"{code}: ISO 4217 {iso[code]}, spec {units}")
    assert compared == 162 - len(WITHDRAWN_CURRENCIES | NOT_ISO_CURRENCIES) - 1
    report(errors, "minor-unit disagreements with ISO 4217")


def test_minor_units_agree_with_the_shared_reference_table(spec) -> None:
    path = _reference_or_failure("currency-minor-units.csv")
    with path.open(encoding="utf-8", newline="") as fh:
        table = {row["code"]: int(row["minor_units"]) for row in csv.DictReader(fh)}
    assert len(table) == 162
    assert set(table) == set(spec.minor_units)
    diff = {c: (table[c], spec.minor_units[c]) for c in table if table[c] != spec.minor_units[c]}
    assert not diff, f"(csv, spec) minor units differ: {diff}"


# ============================================================== 3. examples


def media_examples_raw(spec: Spec) -> Iterator[tuple[str, dict, Any]]:
    """Every media-type example in the raw document (paths and components), by JSON pointer."""
    for tokens, node in walk(spec.document):
        if len(tokens) >= 2 and tokens[-2] == "content" and isinstance(node, dict) and "schema" in node:
            for name, ex in node.get("examples", {}).items():
                yield pointer(*tokens, "examples", name), node["schema"], spec.deref(ex)["value"]


def schema_examples_raw(spec: Spec) -> Iterator[tuple[str, dict, Any]]:
    """Every `examples` list of a schema (component schemas and parameter schemas), by JSON pointer."""
    for tokens, node in walk(spec.document["components"], ("components",)):
        if isinstance(node, dict) and isinstance(node.get("examples"), list) and ("type" in node or "$ref" in node or "anyOf" in node):
            for i, value in enumerate(node["examples"]):
                yield pointer(*tokens, "examples", i), node, value
    for tokens, node in walk(spec.document["paths"], ("paths",)):
        if isinstance(node, dict) and isinstance(node.get("examples"), list) and "content" not in node:
            for i, value in enumerate(node["examples"]):
                yield pointer(*tokens, "examples", i), node, value


EXAMPLES = list(load_spec().iter_examples())
SCHEMA_EXAMPLES = list(schema_examples_raw(load_spec()))


@pytest.mark.parametrize(("location", "schema", "value"), EXAMPLES, ids=[e[0] for e in EXAMPLES])
def test_operation_example_validates(spec, location, schema, value) -> None:
    report(errors_of(spec, schema, value), f"errors in {location}")


def test_every_media_example_in_the_file_validates(spec) -> None:
    found = list(media_examples_raw(spec))
    assert len(found) >= 30
    errors = [f"{where}: {e}" for where, schema, value in found for e in errors_of(spec, schema, value)]
    report(errors, "example errors")


def test_the_loader_reaches_every_operation_example(spec) -> None:
    loader = {loc for loc, _, _ in EXAMPLES}
    missing = []
    for where, _, _ in media_examples_raw(spec):
        m = re.match(r"#/paths/([^/]+)/(\w+)/(requestBody|responses/(\d+))/content/application~1json/examples/(\w+)$", where)
        if not m:
            continue
        op = spec.document["paths"][m.group(1).replace("~1", "/").replace("~0", "~")][m.group(2)]["operationId"]
        label = f"{op} request example {m.group(5)}" if m.group(3) == "requestBody" else f"{op} {m.group(4)} example {m.group(5)}"
        if label not in loader:
            missing.append(label)
    assert not missing, f"examples the loader does not yield: {missing}"


@pytest.mark.parametrize(("location", "schema", "value"), SCHEMA_EXAMPLES, ids=[e[0] for e in SCHEMA_EXAMPLES])
def test_schema_and_parameter_examples_validate(spec, location, schema, value) -> None:
    report(errors_of(spec, schema, value), f"errors in {location}")


def test_parameter_examples_exist_and_are_checked(spec) -> None:
    with_examples = [name for name, p in spec.components["parameters"].items() if p.get("schema", {}).get("examples")]
    assert len(with_examples) >= 5
    locations = {loc for loc, _, _ in SCHEMA_EXAMPLES}
    for name in with_examples:
        assert any(loc.startswith(pointer("components", "parameters", name)) for loc in locations), name


def test_every_format_in_the_spec_is_checked() -> None:
    used = {node["format"] for _, node in walk(load_spec().document) if isinstance(node, dict) and isinstance(node.get("format"), str)}
    assert used, "the spec uses formats"
    unchecked = used - set(FORMAT_CHECKER.checkers)
    assert not unchecked, f"formats the FormatChecker would silently ignore: {sorted(unchecked)}"


@pytest.mark.parametrize(("fmt", "good", "bad"), [
    ("date", "2026-02-28", "2026-02-30"),
    ("uuid", "8f6f1a2e-1c4b-4f7e-9d53-0c8f2d6b9a11", "8f6f1a2e-1c4b-4f7e"),
    ("uri", "https://tpp.example.no/callback?state=4c1d", "tpp.example.no/callback path"),
    ("ipv4", "192.0.2.17", "192.0.2.300"),
    ("int32", 2**31 - 1, 2**31),
    ("date-time", "2026-07-01T12:00:00Z", "2026-07-01 noon"),
])
def test_format_checker_rejects_bad_values(fmt, good, bad) -> None:
    assert FORMAT_CHECKER.conforms(good, fmt)
    assert not FORMAT_CHECKER.conforms(bad, fmt)


def _sepa_example(spec: Spec) -> tuple[dict, dict]:
    media = spec.operation("createSepaCreditTransfer").raw["requestBody"]["content"]["application/json"]
    return media["schema"], copy.deepcopy(media["examples"]["rentToBerlin"]["value"])


@pytest.mark.parametrize(("mutation", "needs_formats"), [
    ("currency not in the set", False),
    ("creditorName too long", False),
    ("creditorAccount missing", False),
    ("amount with a thousands separator", False),
    ("country of three letters", False),
    ("impossible execution date", True),
])
def test_a_broken_copy_of_an_example_is_rejected(spec, mutation, needs_formats) -> None:
    schema, value = _sepa_example(spec)
    assert not errors_of(spec, schema, value), "the unbroken example validates"
    if mutation == "currency not in the set":
        value["instructedAmount"]["currency"] = "EURO"
    elif mutation == "creditorName too long":
        value["creditorName"] = "x" * 71
    elif mutation == "creditorAccount missing":
        del value["creditorAccount"]
    elif mutation == "amount with a thousands separator":
        value["instructedAmount"]["amount"] = "1,250.00"
    elif mutation == "country of three letters":
        value["creditorAddress"]["country"] = "DEU"
    elif mutation == "impossible execution date":
        value["requestedExecutionDate"] = "2026-08-32"
    assert errors_of(spec, schema, value), f"{mutation}: the broken copy was accepted"
    if needs_formats:  # only format checking catches this one: it is switched on
        assert not errors_of(spec, schema, value, formats=False)


def test_a_broken_parameter_example_is_rejected(spec) -> None:
    psu_id = spec.components["parameters"]["PSUID"]["schema"]
    assert not errors_of(spec, psu_id, "8f6f1a2e-1c4b-4f7e-9d53-0c8f2d6b9a11")
    assert errors_of(spec, psu_id, "12345678901")
    redirect = spec.components["parameters"]["TPPRedirectURI"]["schema"]
    assert errors_of(spec, redirect, "not a uri at all")


def test_every_operation_has_request_and_success_examples(spec) -> None:
    errors = []
    for op in spec.operations.values():
        if op.raw.get("requestBody"):
            body = spec.deref(op.raw["requestBody"])
            if not body["content"]["application/json"].get("examples"):
                errors.append(f"{op.operation_id}: request body without an example")
        for status, response in op.responses.items():
            if status.startswith("2") and response.get("content"):
                if not response["content"]["application/json"].get("examples"):
                    errors.append(f"{op.operation_id} {status}: response without an example")
    report(errors, "missing examples")


# ============================================================== 4. traceability

CONSTRAINT_KEYWORDS = ("maxLength", "minLength", "pattern", "format", "enum", "minimum", "maximum",
                       "minItems", "maxItems", "uniqueItems")


def iter_properties(node: Any, tokens: tuple) -> Iterator[tuple[tuple, dict]]:
    """Every property schema below a schema, with its pointer tokens."""
    if not isinstance(node, dict):
        return
    for name, prop in (node.get("properties") or {}).items():
        here = tokens + ("properties", name)
        yield here, prop
        yield from iter_properties(prop, here)
    for key in ("items", "additionalProperties", "not"):
        if isinstance(node.get(key), dict):
            yield from iter_properties(node[key], tokens + (key,))
    for key in ("allOf", "anyOf", "oneOf"):
        for i, part in enumerate(node.get(key) or []):
            yield from iter_properties(part, tokens + (key, i))


def test_every_operation_schema_and_parameter_carries_a_document_ref(spec) -> None:
    missing = [f"operation {op.operation_id}" for op in spec.operations.values() if not op.document_ref]
    missing += [f"schema {n}" for n, s in spec.schemas.items() if not s.get("x-document-ref")]
    missing += [f"parameter {n}" for n, p in spec.components["parameters"].items() if not p.get("x-document-ref")]
    for path, item in spec.document["paths"].items():
        for tokens, node in walk(item, ("paths", path)):
            if tokens and tokens[-2:-1] == ("parameters",) and isinstance(node, dict) and "$ref" not in node:
                if not node.get("x-document-ref"):
                    missing.append(f"parameter {pointer(*tokens)}")
    report(missing, "definitions without x-document-ref")


def test_every_constrained_property_carries_a_document_ref(spec) -> None:
    code_sets = set(spec.code_sets)
    missing = []
    checked = 0
    for name, schema in spec.schemas.items():
        for tokens, prop in iter_properties(schema, ("components", "schemas", name)):
            target = ref_name(prop.get("$ref"))
            constrained = any(k in prop for k in CONSTRAINT_KEYWORDS) or target in code_sets
            if not constrained:
                continue
            checked += 1
            if prop.get("x-document-ref"):
                continue
            if target and spec.schema(target).get("x-document-ref"):
                continue
            missing.append(pointer(*tokens))
    report(missing, "constrained properties without x-document-ref")
    assert checked >= 50


def test_every_document_ref_names_a_section_of_the_document(spec, doc) -> None:
    refs = [(pointer(*t[:-1]), n) for t, n in walk(spec.document) if t and t[-1] == "x-document-ref"]
    assert len(refs) >= 100
    unknown = [f"{where}: {ref!r}" for where, ref in refs if not doc.has(ref)]
    report(unknown, "x-document-ref values that are not a section heading path of the document")


def test_document_ref_check_can_fail(doc) -> None:
    assert doc.has("Endpoints › Header parameters") and doc.has("Limits")
    assert not doc.has("Header parameters") and not doc.has("Endpoints › Limits") and not doc.has("Endpoints ›")


def test_every_assumption_mark_names_a_decision(spec, decisions) -> None:
    declared = set(spec.assumptions)
    marks = [(pointer(*t[:-1]), a) for t, n in walk(spec.document) if t and t[-1] == "x-assumption"
             for a in (n if isinstance(n, list) else [n])]
    assert len(marks) >= 50
    bad = [f"{where}: {a!r}" for where, a in marks
           if not re.fullmatch(r"A[1-9]\d*", str(a)) or a not in {*decisions, *PROJECT_DECISIONS} or a not in declared]
    report(bad, "x-assumption marks that name no decision")


def test_decisions_and_spec_assumptions_are_the_same_32(spec, decisions) -> None:
    assert list(decision_table("decisions.md")) == DECISION_IDS[:22]
    assert list(decision_table("decisions-lifecycle.md")) == DECISION_IDS[22:]
    assert list(decisions) == DECISION_IDS
    assert [a for a in spec.assumptions if a not in PROJECT_DECISIONS] == DECISION_IDS


@pytest.mark.parametrize("decision", ["A33", "A35", "A36"])
def test_a_later_decision_gives_its_reasons(spec, decision) -> None:
    """A decision taken after the shared decision files carries its gap, decision and reasons in the spec."""
    entry = spec.assumptions[decision]
    assert entry.get("gap") and entry.get("decision") and "profile" in entry
    assert isinstance(entry.get("reasons"), list) and entry["reasons"], f"{decision} gives no reasons"


def test_every_decision_is_marked_in_the_spec(spec) -> None:
    marked = {a for t, n in walk(spec.document) if t and t[-1] == "x-assumption"
              for a in (n if isinstance(n, list) else [n])}
    unmarked = [a for a in spec.assumptions if a not in marked]
    assert not unmarked, f"decisions not marked by any x-assumption: {unmarked}"


def test_profile_flags_match_the_decisions_table(spec, decisions) -> None:
    """The spec's profile flag is the decisions table's, unless the spec says where it differs and why
    (decisions-table-profile, profile-note): every point the document leaves open is the implementer's to state."""
    wrong = []
    for aid, row in decisions.items():
        expected = bool(re.search(r"\byes\b", row["profile"]))
        entry = spec.assumptions[aid]
        got = entry.get("profile")
        if entry.get("decisions-table-profile", got) is not expected:
            wrong.append(f"{aid}: decisions.md profile {row['profile']!r}, spec profile {got!r}")
        if "decisions-table-profile" in entry and not (got and aid in entry.get("profile-note", "")):
            wrong.append(f"{aid}: differs from the decisions table without a profile-note naming it")
        if got and not entry.get("profile-key"):
            wrong.append(f"{aid}: a profile-overridable assumption without profile-key")
    report(wrong, "profile flag mismatches")


# ============================================================== 5. the lifecycle operations (A23-A32)
# Each test reads what it checks from the decision's own text (decisions-lifecycle.md), never from a copy.


def _backticked_routes(text: str) -> list[tuple[str, str]]:
    """`METHOD /path` spans of a decision, e.g. ("POST", "/v1/signing-baskets/{basketId}/authorisations")."""
    return re.findall(r"`(GET|POST|DELETE) (/[^`\s]+)`", text)


def _operation_at(spec: Spec, method: str, path: str):
    found = [op for op in spec.operations.values() if (op.method, op.path) == (method, path)]
    assert len(found) == 1, f"no operation {method} {path} in the spec"
    return found[0]


def _schema_name(media_or_schema: dict) -> str | None:
    return ref_name(media_or_schema.get("schema", media_or_schema).get("$ref"))


def _example_codes(spec: Spec, response: dict) -> set[str]:
    codes = set()
    for example in response["content"]["application/json"].get("examples", {}).values():
        value = spec.deref(example)["value"]
        codes |= {m["code"] for m in value.get("tppMessages", [])} | ({value["code"]} if "code" in value else set())
    return codes


def test_authorisation_operations_follow_a23(spec, decisions) -> None:
    text = decisions["A23"]["decision"]
    posts = [(m, p) for m, p in _backticked_routes(text) if m == "POST"]
    assert [p for _, p in posts] == ["/v1/{payment-service}/{payment-product}/{paymentId}/authorisations",
                                     "/v1/signing-baskets/{basketId}/authorisations"]
    required_headers = re.search(r"\(signed; (.*?) required; no body\)", text).group(1)
    wanted = {h.lower() for h in split_list(required_headers.replace(" and ", ", "))}
    assert wanted == {"x-request-id", "tpp-redirect-uri", "tpp-session-id"}
    sca_statuses = split_list(re.search(r"one of ([a-z, ]+)\.", text).group(1).replace(" and ", ", "))
    assert list(spec.code_set("ScaStatus")) == sca_statuses
    errors: list[str] = []
    for method, path in posts:
        op = _operation_at(spec, method, path)
        headers = {p.key: p for p in op.header_parameters}
        for name in wanted | {"signature", "tpp-signature-certificate"}:
            if name not in headers or not headers[name].required:
                errors.append(f"{op.operation_id}: {name} must be a required header")
        if "digest" in headers or op.raw.get("requestBody"):
            errors.append(f"{op.operation_id}: no body, so neither a request body nor Digest")
        if _schema_name(op.responses["201"]["content"]["application/json"]) != "StartAuthorisationResponse":
            errors.append(f"{op.operation_id}: 201 is not the StartAuthorisationResponse")
        if "PAYMENT_FAILED" not in _example_codes(spec, op.responses["400"]):
            errors.append(f"{op.operation_id}: no 400 PAYMENT_FAILED example (lack of funds)")
        if "CONFLICT" not in _example_codes(spec, op.responses["409"]):
            errors.append(f"{op.operation_id}: no 409 CONFLICT example (payment not RCVD)")
        status_path = path + "/{authorisationId}"
        status_op = _operation_at(spec, "GET", status_path)
        if _schema_name(status_op.responses["200"]["content"]["application/json"]) != "ScaStatusResponse":
            errors.append(f"{status_op.operation_id}: 200 is not the ScaStatusResponse")
    started = spec.schema("StartAuthorisationResponse")
    if started["required"] != ["scaStatus", "authorisationId", "_links"] or started["properties"]["scaStatus"]["enum"] != ["started"]:
        errors.append("StartAuthorisationResponse: {scaStatus: started, authorisationId, _links} all required")
    link_names = re.search(r'"_links": \{"scaRedirect": \{href, verbs\}, "scaStatus": \{href, verbs\}\}', _lifecycle_text("A23"))
    if not link_names or started["properties"]["_links"]["required"] != ["scaRedirect", "scaStatus"]:
        errors.append("StartAuthorisationResponse._links: scaRedirect and scaStatus required")
    report(errors, "A23 mismatches")


def _lifecycle_text(aid: str) -> str:
    """A decision's cell exactly as decisions-lifecycle.md writes it (with its backticks and JSON)."""
    path = _reference_or_failure("decisions-lifecycle.md")
    line = next(line for line in path.read_text(encoding="utf-8").splitlines() if line.startswith(f"| {aid} |"))
    return line


def test_created_payments_link_self_status_and_start_authorisation(spec) -> None:
    named = re.search(r"`_links` ([a-z]+), ([a-z]+), ([A-Za-z]+)", _lifecycle_text("A23")).groups()
    creation_links = spec.schema("PaymentCreationLinks")
    refined = next(part for part in creation_links["allOf"] if "$ref" not in part)
    assert refined["required"] == list(named) == ["self", "status", "startAuthorisation"]
    for name in ("SepaPaymentInitiationResponse", "BulkPaymentInitiationResponse", "PeriodicPaymentInitiationResponse"):
        links, _ = prop_at(spec, spec.schema(name), "_links")
        assert ref_chain(spec, links) == ["PaymentCreationLinks"], name


def test_every_openapi_link_names_an_operation_and_its_path_parameters(spec) -> None:
    errors: list[str] = []
    checked = 0
    for op in spec.operations.values():
        for status, response in op.responses.items():
            for name, link in (response.get("links") or {}).items():
                checked += 1
                target = spec.operations.get(link.get("operationId"))
                if target is None:
                    errors.append(f"{op.operation_id} {status} link {name}: no operation {link.get('operationId')!r}")
                    continue
                given = set(link.get("parameters", {}))
                names = {p.name for p in target.parameters}
                path_names = {p.name for p in target.path_parameters}
                if given - names:
                    errors.append(f"{op.operation_id} {status} link {name}: {sorted(given - names)} are not parameters of {target.operation_id}")
                if path_names - given:
                    errors.append(f"{op.operation_id} {status} link {name}: path parameters {sorted(path_names - given)} of {target.operation_id} not given")
    assert checked >= 20
    report(errors, "OpenAPI link defects")


def test_the_lifecycle_is_linked_from_creation_to_sca_status(spec) -> None:
    def links(operation_id: str, status: str) -> dict[str, str]:
        return {name: link["operationId"] for name, link in spec.operation(operation_id).responses[status]["links"].items()}

    for creation in ("createSepaCreditTransfer", "createBulkPayment", "createPeriodicPayment"):
        assert "startPaymentAuthorisation" in links(creation, "201").values(), creation
    assert "startSigningBasketAuthorisation" in links("createSigningBasket", "201").values()
    assert list(links("startPaymentAuthorisation", "201").values()) == ["getPaymentAuthorisationStatus"]
    assert list(links("startSigningBasketAuthorisation", "201").values()) == ["getSigningBasketAuthorisationStatus"]
    started = spec.operation("startPaymentAuthorisation").responses["201"]["links"]["getPaymentAuthorisationStatus"]
    assert started["parameters"]["authorisationId"] == "$response.body#/authorisationId"


def test_the_sca_page_is_described_but_not_an_operation(spec, decisions) -> None:
    text = decisions["A24"]["decision"]
    assert "not an API operation" in text and "not in the spec's paths" in text
    page = spec.document["x-sca-page"]
    assert "A24" in assumptions_of(page)
    assert not [p for p in spec.document["paths"] if "sca" in p.lower().split("/")[-1]], "the SCA page is not in paths"
    form_field = re.search(r"one field `(\w+)`", text).group(1)
    assert page["get"]["form"]["fields"] == page["post"]["fields"] == [form_field]
    assert (page["get"]["status"], page["post"]["status"]) == (200, int(re.search(r"→ (\d{3}) to TPP-Redirect-URI", text).group(1)))
    assert page["post"]["status"] in page["post"]["accepted-statuses"] == [303, 302], "302 is a redirect as much as 303"
    assert page["post"]["profile-key"] == spec.assumptions["A24"]["profile-key"]
    assert page["post"]["query-on-success"] == backticked(text.split("on success")[0])[-2:]
    redirect = spec.schema("StartAuthorisationResponse")["properties"]["_links"]["properties"]["scaRedirect"]
    assert redirect["properties"]["href"]["format"] == "uri", "an absolute URL"


def test_batch_runs_follow_a25(spec, doc, decisions) -> None:
    text = decisions["A25"]["decision"]
    (method, path), = _backticked_routes(text)
    op = _operation_at(spec, method, path)
    zone, times = spec.batch_run_times
    assert list(times) == re.findall(r"\b\d\d:\d\d\b", text) and zone in text
    per_day = doc.section("Limits").table().records()
    stated = next(r["Value"] for r in per_day if r["Limit"] == "Sandbox batch processing")
    assert len(times) == int(re.search(r"(\d+) times per day", stated).group(1))
    assert op.raw["x-batch-run-times"]["profile-key"] == spec.assumptions["A25"]["profile-key"]
    assert op.raw["requestBody"]["required"] is False, "the body is optional"
    result = spec.schema("BatchRunResponse")
    assert result["required"] == list(re.search(r'\{"(\w+)": \[paymentId…\], "(\w+)": \[paymentId…\]\}', _lifecycle_text("A25")).groups())
    assert list(op.responses)[0] == "200"


def test_every_post_and_delete_answers_409_conflict(spec, decisions) -> None:
    assert "POST and DELETE" in decisions["A29"]["decision"] and "409 `CONFLICT`" in decisions["A29"]["decision"]
    missing = []
    for op in spec.operations.values():
        if op.method in ("POST", "DELETE"):
            conflict = op.responses.get("409")
            if conflict is None or "CONFLICT" not in _example_codes(spec, conflict):
                missing.append(op.operation_id)
    assert not missing, f"POST/DELETE operations without a 409 CONFLICT answer (A29): {missing}"
    for name in ("Conflict", "BulkConflict"):
        assert {"A29", "A30"} <= set(assumptions_of(spec.components["responses"][name])), name


def test_cancellation_follows_a27(spec, decisions) -> None:
    text = decisions["A27"]["decision"]
    cancellation = spec.operation("deletePayment").raw["x-cancellation"]
    assert cancellation["cancellable"] == re.findall(r"`DELETE` of a `(\w+)` payment", text)
    assert cancellation["becomes"] == re.search(r"status `(\w+)`", text).group(1)
    refused = re.search(r"`PDNG` → (\d{3}) `(\w+)`", text).groups()
    assert (str(cancellation["refused"]["status"]), cancellation["refused"]["code"]) == refused
    for operation_id in ("deletePayment", "deleteSigningBasket"):
        op = spec.operation(operation_id)
        assert {"204", "404", "409"} <= set(op.responses) and "A27" in op.assumptions, operation_id


def test_another_tpps_resources_do_not_exist_a28(spec) -> None:
    not_found = spec.components["responses"]["NotFound"]
    assert "RESOURCE_UNKNOWN" in _example_codes(spec, not_found) and "A28" in assumptions_of(not_found)
    bad_request = spec.components["responses"]["BadRequest"]
    basket_unknown = [spec.deref(e)["value"]["tppMessages"][0] for e in bad_request["content"]["application/json"]["examples"].values()
                      if spec.deref(e)["value"]["tppMessages"][0]["code"] == "RESOURCE_UNKNOWN"]
    assert basket_unknown and basket_unknown[0]["path"].startswith("/paymentIds/")
    without_404 = [op.operation_id for op in spec.operations.values()
                   if any(p.name in ("paymentId", "basketId", "authorisationId") for p in op.path_parameters) and "404" not in op.responses]
    assert not without_404, f"operations on a TPP's resources without 404: {without_404}"


def test_logical_duplicates_follow_a30(spec) -> None:
    creations = [op for op in spec.operations.values() if op.operation_id.startswith("create") and op.path.split("/")[2].endswith("payments")]
    assert {op.operation_id for op in creations} == {"createSepaCreditTransfer", "createBulkPayment", "createPeriodicPayment"}
    for op in creations:
        param = next(p for p in op.query_parameters if p.name == "allowLogicalDuplicate")
        assert "A30" in assumptions_of(param.raw) and "A30" in op.assumptions, op.operation_id


def test_periodic_payments_follow_a31(spec, decisions) -> None:
    text = _lifecycle_text("A31")
    (method, path), = [r for r in _backticked_routes(text) if r[0] == "POST"]
    op = _operation_at(spec, method, path)
    assert op.request_schema_ref == SCHEMAS + "PeriodicPaymentRequest"
    schema = spec.schema("PeriodicPaymentRequest")
    assert schema["allOf"][0] == {"$ref": SCHEMAS + "BulkEntry"}, "a bulk entry's domestic fields"
    props, required = flatten(spec, schema)
    stated = dict(re.findall(r"`(\w+)` \(((?:R|O|array)[^)]*)\)", text))
    assert set(stated) == {"startDate", "endDate", "executionRule", "frequency", "dayOfExecution", "monthsOfExecution"}
    errors: list[str] = []
    for name, spec_cell in stated.items():
        if name not in props:
            errors.append(f"{name}: missing")
            continue
        if (name in required) != spec_cell.startswith("R"):
            errors.append(f"{name}: decision {spec_cell!r}, spec required={name in required}")
    for name, code_set in (("executionRule", "ExecutionRule"), ("frequency", "PeriodicFrequency")):
        values = split_list(stated[name].split(":", 1)[1])
        if list(spec.code_set(code_set)) != values or ref_chain(spec, props[name]) != [code_set]:
            errors.append(f"{name}: decision {values}, spec {spec.code_set(code_set)}")
    for name, code_set in (("dayOfExecution", "DayOfExecution"), ("monthsOfExecution", "MonthOfExecution")):
        low, high = map(int, re.search(r'"(\d+)" to "(\d+)"', stated[name]).groups())
        if list(spec.code_set(code_set)) != [str(i) for i in range(low, high + 1)]:
            errors.append(f"{name}: {code_set} should be {low} to {high}")
    months = effective(spec, props["monthsOfExecution"])
    if months.get("type") != "array" or months.get("uniqueItems") is not True or ref_name(months["items"].get("$ref")) != "MonthOfExecution":
        errors.append("monthsOfExecution: an array of MonthOfExecution, free of duplicates")
    with_months = spec.schema("PeriodicFrequency")["x-months-of-execution"]["required-with"]
    if with_months != [re.search(r"required with (\w+)", stated["monthsOfExecution"]).group(1)]:
        errors.append(f"PeriodicFrequency x-months-of-execution {with_months}")
    if ref_chain(spec, props["debtorAccount"]) != ["AccountReferenceBban"] or spec.schema("BulkEntry")["x-expected-currency"] != "NOK":
        errors.append("a NOK payment between bban accounts")
    if "periodic-payments" not in spec.code_set("PaymentService"):
        errors.append("payment-service periodic-payments (status, detail, delete, authorisation)")
    detail = [ref_name(part["allOf"][0]["$ref"]) for part in spec.schema("PaymentDetail")["anyOf"]]
    if "PeriodicPaymentRequest" not in detail:
        errors.append(f"PaymentDetail branches {detail} lack the periodic payment")
    report(errors, "A31 mismatches")
    from validator.rules import catalogue

    periodic_rules = {r.id for r in catalogue().values() if "A31" in r.assumptions}
    assert {"periodic-start-date-past", "periodic-end-before-start", "months-of-execution-frequency",
            "months-of-execution-duplicate"} <= periodic_rules


def test_fixed_test_data_a32(spec, decisions) -> None:
    (method, path), = _backticked_routes(decisions["A32"]["gap"])
    op = _operation_at(spec, method, path)
    assert "A32" in op.assumptions and "MOD11" in op.raw["description"]


def test_lifecycle_profile_keys_are_profile_settings(spec) -> None:
    from validator.context import ConfigError, Profile, profile_schema

    keys = {aid: a["profile-key"] for aid, a in spec.assumptions.items() if a.get("profile") and int(aid[1:]) >= 23}
    assert keys == {"A24": "sca-redirect-status", "A25": "batch-run-times", "A27": "cancellation-refused",
                    "A29": "request-id-replay", "A30": "logical-duplicates", "A31": "products-not-offered",
                    "A34": "payment-baskets", "A35": "open-authorisations",
                    "A37": "rules", "A40": "rules", "A41": "rules", "A42": "rules"}
    assert set(keys.values()) <= set(profile_schema()["properties"])
    profile = Profile.from_mapping({"batch-run-times": ["07:00", "19:00"], "cancellation-refused": {"status": 400, "code": "FORMAT_ERROR"},
                                    "logical-duplicates": "allowed"})
    assert profile.batch_run_times == ("07:00", "19:00") and profile.logical_duplicates == "allowed"
    assert (profile.cancellation_refused.status, profile.cancellation_refused.code) == (400, "FORMAT_ERROR")
    for bad in ({"batch-run-times": ["7:00"]}, {"cancellation-refused": {"code": "GONE"}}, {"logical-duplicates": "maybe"}):
        with pytest.raises(ConfigError):
            Profile.from_mapping(bad)


def test_readme_lists_every_decision_with_its_profile_flag(spec) -> None:
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Assumptions", 1)[1].split("\n## ", 1)[0]
    rows = {cells[0]: cells[-1] for line in section.splitlines() if line.startswith("| A")
            for cells in [[c.strip() for c in line.strip("|").split(" | ")]]}
    assert list(rows) == list(spec.assumptions)
    wrong = [aid for aid, profile in rows.items() if profile.startswith("yes") != bool(spec.assumptions[aid].get("profile"))]
    assert not wrong, f"README profile column disagrees with the spec for {wrong}"


def test_basket_cancellation_and_the_payment_lifecycle_are_data(spec, decisions) -> None:
    basket = spec.operation("deleteSigningBasket").raw["x-cancellation"]
    text = decisions["A27"]["decision"]
    assert re.search(r"before its authorisation (\w+) → 204", text).group(1) in basket["refused-after-sca-status"]
    assert (basket["deleted"]["status"], basket["deleted"]["code"]) == tuple(
        int(v) if v.isdigit() else v for v in re.search(r"deleted basket is (\d{3}) `(\w+)`", text).groups())
    transitions = spec.schema("TransactionStatusBulk")["x-transitions"]
    statuses = set(spec.code_set("TransactionStatusBulk"))
    errors = []
    for t in transitions:
        if not {t["from"], t["to"]} <= statuses:
            errors.append(f"{t}: not transaction statuses")
        words = decisions[t["x-assumption"]]["decision"]
        if t["to"] not in words or t["from"] not in words + decisions["A23"]["decision"]:
            errors.append(f"{t}: {t['x-assumption']} does not speak of {t['from']} and {t['to']}")
    pairs = {(t["from"], t["to"]) for t in transitions}
    assert ("RCVD", "CANC") in pairs and ("PDNG", "ACSC") in pairs and ("RCVD", "PDNG") in pairs
    assert len({(t["from"], t["event"]) for t in transitions}) == len(transitions), "one target per status and event"
    report(errors, "lifecycle transitions that no decision states")
