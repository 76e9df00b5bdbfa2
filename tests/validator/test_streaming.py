"""Large bulks are checked one entry at a time (issue 7: memory): the report is exactly the whole document's,
finding for finding, in order, or the input takes the whole-document path. Both paths run on the same inputs
here (the size threshold set to zero for one of them), and each test says which path must have answered."""
from __future__ import annotations

import json
import random
import tracemalloc

import pytest

from validator import Validator
from validator.checks.accounts import norwegian_bban_check_digit
from validator.jsonload import ArrayStream, Unstreamable, streamable_text
from validator.rules.examples import spec_example
from validator.schema import stream_plan
from validator.spec import load_spec

SPEC = load_spec()
TODAY = SPEC.example_today
BULK = spec_example(SPEC, "createBulkPayment request invoicesWithKid")
NEVER = 1 << 62


class _Streaming(Validator):
    """Streams every input it can, and counts the inputs it answered by streaming."""

    stream_bytes = 0

    def __init__(self, **options):
        super().__init__(**options)
        self.streamed = 0

    def _streamed(self, data, kind, source):
        report = super()._streamed(data, kind, source)
        self.streamed += report is not None
        return report


def _validators(**options) -> tuple[Validator, _Streaming]:
    whole = Validator(today=TODAY, **options)
    whole.stream_bytes = NEVER
    return whole, _Streaming(today=TODAY, **options)


WHOLE, STREAMING = _validators()


def _bban(rng: random.Random) -> str:
    while True:
        first10 = f"{rng.randrange(10**9, 10**10):010d}"
        digit = norwegian_bban_check_digit(first10)
        if digit is not None:
            return first10 + digit


def _bulk(seed: int, entries: int) -> dict:
    """A valid bulk of ``entries`` distinct entries (the spec example's, varied)."""
    rng = random.Random(seed)
    bulk = json.loads(json.dumps(BULK))
    templates = bulk["payments"]
    payments = []
    for i in range(entries):
        entry = json.loads(json.dumps(templates[i % len(templates)]))
        entry["creditorName"] = f"{rng.choice(('Kari', 'Øystein', 'Åse', 'Ola'))} {rng.choice(('Nordmann', 'Bjørnstad'))} {i}"
        entry["creditorAccount"]["bban"] = _bban(rng)
        entry["instructedAmount"] = {"amount": f"{rng.randrange(1, 10**6)}.{rng.randrange(100):02d}", "currency": "NOK"}
        payments.append(entry)
    bulk["payments"] = payments
    return bulk


def _same(data: bytes, kind: str | None = "bulk-payment", *, streamed: bool, validators=None) -> list:
    """Both paths' reports of ``data``, asserted equal; ``streamed``: whether the streaming path must have answered."""
    whole, streaming = validators or (WHOLE, STREAMING)
    before = streaming.streamed
    expected = whole.validate_bytes(data, kind)
    got = streaming.validate_bytes(data, kind)
    assert got == expected
    assert [(f.rule, f.pointer, f.message, f.line, f.column) for f in got.findings] == [
        (f.rule, f.pointer, f.message, f.line, f.column) for f in expected.findings]
    assert streaming.streamed - before == int(streamed)
    return got.findings


def _encode(payload, seed: int = 0) -> bytes:
    """JSON text in one of several layouts (compact, spaced, indented, non-ASCII escaped or not)."""
    style = seed % 4
    if style == 0:
        return json.dumps(payload, separators=(",", ":"), ensure_ascii=False).encode()
    if style == 1:
        return json.dumps(payload, indent=2, ensure_ascii=False).encode()
    if style == 2:
        return json.dumps(payload).encode()  # non-ASCII as \\u escapes
    return json.dumps(payload, indent="\t", ensure_ascii=False).replace("\n", "\r\n").encode()


@pytest.mark.parametrize("seed", range(8))
def test_valid_bulks(seed):
    bulk = _bulk(seed, 1 + seed * 7)
    assert _same(_encode(bulk, seed), streamed=True) == []
    assert _same(_encode(bulk, seed), None, streamed=True) == []  # the kind detected from the top level


ENTRY_BREAKERS = (
    lambda e: e["creditorAccount"].update(bban=e["creditorAccount"]["bban"][:10]),  # bban-format
    lambda e: e.update(creditorName="N" * 71),  # schema-length
    lambda e: e["instructedAmount"].update(amount="-" + e["instructedAmount"]["amount"]),  # amount-grammar
    lambda e: e["instructedAmount"].update(amount=e["instructedAmount"]["amount"] + "1"),  # amount-minor-units
    lambda e: e["creditorAddress"].update(country="XX"),  # schema-enum
    lambda e: e.update(creditorNaem=e.pop("creditorName", "Kari")),  # schema-required + unknown-property (warning)
    lambda e: e.update(remittanceInformationStructured={"reference": "12345678903", "referenceType": "SCOR"}),
    lambda e: e["instructedAmount"].update(currency="EUR"),  # currency-product-mismatch
    lambda e: e.update(endToEndIdentification=7, ultimateDebtor=None),  # schema-type
    lambda e: e.update(creditorAddress={"country": "NO", "townName": "Tromsø", "postCode": "9008", "ekstra": {"dypt": [[[1]]]}}),
)


@pytest.mark.parametrize("seed", range(10))
def test_errors_and_warnings_in_entries(seed):
    rng = random.Random(seed)
    bulk = _bulk(seed, 40)
    for _ in range(1 + seed):
        rng.choice(ENTRY_BREAKERS)(rng.choice(bulk["payments"]))
    if seed % 3 == 0:
        bulk["payments"][rng.randrange(40)] = rng.choice((7, None, "x", [], {}))  # an entry that is no object
    findings = _same(_encode(bulk, seed), streamed=True)
    assert findings and all(f.pointer.startswith("/payments/") for f in findings)


def test_errors_at_the_top_level_and_across_entries():
    bulk = _bulk(1, 30)
    bulk["requestedExecutionDate"] = "2001-01-01"  # execution-date-past
    bulk["paymentInformationId"] = "x" * 40  # schema-length
    bulk["debtorAcount"] = {}  # unknown-property
    bulk["payments"][3]["creditorAccount"] = dict(bulk["debtorAccount"])  # same-debtor-creditor, read from the top
    bulk["payments"][17]["creditorAccount"] = dict(bulk["debtorAccount"])
    findings = _same(_encode(bulk, 1), streamed=True)
    assert {f.rule for f in findings} >= {"execution-date-past", "schema-length", "unknown-property", "same-debtor-creditor"}
    assert [f.pointer for f in findings if f.rule == "same-debtor-creditor"] == ["/payments/3/creditorAccount", "/payments/17/creditorAccount"]
    del bulk["debtorAccount"]  # required: the top level's schema, with every entry still checked
    bulk["payments"][5]["creditorName"] = ""
    assert {f.rule for f in _same(_encode(bulk, 2), streamed=True)} >= {"schema-required", "schema-length"}


def test_members_after_the_array():
    bulk = _bulk(2, 12)
    moved = {"payments": bulk.pop("payments"), **bulk}  # payments first, debtorAccount after it
    moved["payments"][4]["creditorAccount"] = dict(moved["debtorAccount"])
    moved["requestedExecutionDate"] = "2001-01-01"
    for kind in ("bulk-payment", None):
        findings = _same(_encode(moved, 1), kind, streamed=True)
        assert {f.rule for f in findings} == {"same-debtor-creditor", "execution-date-past"}


def test_min_items_and_other_streamed_kinds():
    # tppMessages: minItems 1, keeps its verdict with nulls standing in for the entries
    assert stream_plan(SPEC, "TppMessagesError").key == "tppMessages"
    assert [f.rule for f in _same(b'{"tppMessages": []}', "tpp-messages-error", streamed=True)] == ["schema-items"]
    assert _same(b'{"tppMessages": [{"category": "ERROR", "code": "FORMAT_ERROR"}]}', "tpp-messages-error", streamed=True) == []
    assert _same(b'{"tppMessages": [{"category": "EROR", "code": 5}, 3]}', "tpp-messages-error", streamed=True)
    assert _same(b'{"debtorAccount": {"bban": "12547919074", "currency": "NOK"}, "payments": []}', streamed=True) == []


@pytest.mark.parametrize("most", [1, 3, 5, 6, 7, 40])
def test_the_findings_limit(most):
    bulk = _bulk(3, 20)
    for i in (2, 9):
        ENTRY_BREAKERS[0](bulk["payments"][i])  # bban-format
        ENTRY_BREAKERS[5](bulk["payments"][i])  # schema-required, unknown-property
    data = _encode(bulk)
    total = len(WHOLE.validate_bytes(data, "bulk-payment").findings)
    assert total == 6
    # streamed up to the limit exactly; past it the whole document decides which findings are listed
    findings = _same(data, streamed=most >= total, validators=_validators(max_findings=most))
    assert len(findings) == min(total, most) + (most < total)


@pytest.mark.parametrize("text", [
    b'{"debtorAccount": {"bban": "12547919074"}, "payments": [{"creditorName": "a"}, {"creditorName": "b",]}',
    b'{"debtorAccount": {"bban": "12547919074"}, "payments": [{"creditorName": "a"} {"creditorName": "b"}]}',
    b'{"debtorAccount": {"bban": "12547919074"}, "payments": [{"creditorName": "a"}]',
    b'{"debtorAccount": {"bban": "12547919074"}, "payments": [{"creditorName": "a"}]} []',
    b'{"debtorAccount": {"bban": "12547919074"}, "payments": [{"creditorName": "a", "creditorName": "b"}]}',
    b'{"debtorAccount": {"bban": "1"}, "debtorAccount": {"bban": "12547919074"}, "payments": []}',
    b'{"debtorAccount": {"bban": "12547919074"}, "payments": [], "payments": []}',
    b'{"debtorAccount": {"bban": "12547919074"}, "payments": [{"creditorName": NaN}]}',
    b'{"debtorAccount": {"bban": "12547919074"}, "payments": [{"x": 1e400}]}',
    b'{"debtorAccount": {"bban": "12547919074"}, "payments": [{"x": 1' + b"0" * 5000 + b"}]}",
    b'{"debtorAccount": {"bban": "12547919074"}, "payments": [{"x": "\\ud800"}]}',
    b'{"debtorAccount": {"bban": "12547919074"}, "\\ud800": 1, "payments": []}',
    b'{"debtorAccount": {"bban": "12547919074"}, "payments": [' + b"[" * 600 + b"]" * 600 + b"]}",
    b'\xef\xbb\xbf{"debtorAccount": {"bban": "12547919074"}, "payments": []}',
    b'{"debtorAccount": {"bban": "12547919074"}, "payments": [{"creditorName": "\xff"}]}',
    b'{"debtorAccount": {"bban": "12547919074"}, "payments": {}}',
    b'{"debtorAccount": {"bban": "12547919074"}}',
    b'[{"debtorAccount": {"bban": "12547919074"}, "payments": []}]',
    b'{"debtorAccount": {"bban": "12547919074"}, "payments": [{"\\udc00": 1}]}',
    # nesting beyond the limit (513 levels), or at it where the levels that hold values cannot tell (512 or 513)
    b'{"debtorAccount": {"bban": "12547919074"}, "payments": [' + b"[" * 511 + b"]" * 511 + b"]}",
    b'{"debtorAccount": {"bban": "12547919074"}, "x": ' + b"[" * 512 + b"]" * 512 + b', "payments": []}',
    b'{"debtorAccount": {"bban": "12547919074"}, "payments": [' + b"[" * 510 + b"1" + b"]" * 510 + b"]}",
    # repeated keys the count of the whole text finds (spelled differently, with commas, quotes, empty arrays)
    b'{"debtorAccount": {"bban": "1", "b\\u0062an": "2"}, "payments": [{"a": "x,y"}]}',
    b'{"debtorAccount": {"bban": "12547919074"}, "payments": [{"a": "\\",[", "a": []}, {"b": []}]}',
    b'{"debtorAccount": {"bban": "12547919074"}, "payments": [{"a": [], "b": [], "a": 1}], "t": {"u": 1, "u": 2}}',
])
def test_what_only_the_whole_document_answers(text):
    for kind in ("bulk-payment", None):
        _same(text, kind, streamed=False)


def test_integers_beyond_64_bits():
    text = b'{"debtorAccount": {"bban": "12547919074", "currency": "NOK"}, "payments": [{"creditorName": 12345678901234567890123}]}'
    assert "schema-type" in {f.rule for f in _same(text, streamed=True)}


def test_a_request_envelope_is_the_request_checks():
    envelope = b'{"method": "POST", "path": "/v1/bulk-payments/x", "headers": {}, "payments": []}'
    _same(envelope, None, streamed=False)
    _same(envelope, "bulk-payment", streamed=True)  # told it is a bulk: checked as one


def test_the_text_and_its_layouts():
    bulk = _bulk(4, 6)
    bulk["payments"][2]["creditorName"] = "Ærlig 😀 " + "é" * 70  # schema-length, non-ASCII counted in characters
    bulk["payments"][4]["kommentar"] = "ukjent"
    for seed in range(4):  # seed 2: the emoji as an escaped surrogate pair, which decodes to one character
        findings = _same(_encode(bulk, seed), streamed=True)
        assert [f.pointer for f in findings] == ["/payments/2/creditorName", "/payments/4/kommentar"]
        assert all(f.line for f in findings)  # placed in the text: line and column


def test_the_array_stream_reads_exactly_what_json_reads():
    text = ' \n{"a" : [1, {"b": []}], "p":[ {"x": 1} ,[2],"3" ] ,\t"c": null } \n'
    stream = ArrayStream(text, frozenset({"p"}))
    assert (stream.head, stream.key) == ({"a": [1, {"b": []}]}, "p")
    assert list(stream.entries()) == [{"x": 1}, [2], "3"] == list(stream.entries())
    stream.read_tail()
    assert (stream.tail, stream.length) == ({"c": None}, 3)
    for bad in ('{"p": [1,]}', '{"p": [1] x}', '{"p": [1]}}', '{"p": [1], }', '{"a": 1 "p": []}', '{"p": [1 2]}'):
        with pytest.raises(Unstreamable):
            stream = ArrayStream(bad, frozenset({"p"}))
            list(stream.entries())
            stream.read_tail()


def test_the_streamed_array_is_never_held():
    # Decoded, a bulk takes several times its text; streamed, the text (and the loader's depth check's
    # transient copy of it) is what it holds, a few entries besides.
    data = _encode(_bulk(5, 2000))
    peaks = {}
    for name, validator in (("whole", WHOLE), ("streamed", STREAMING)):
        validator.validate_bytes(data, "bulk-payment")  # compiled schemas and caches first
        tracemalloc.start()
        try:
            assert validator.validate_bytes(data, "bulk-payment").valid
            left, peaks[name] = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    assert peaks["whole"] > 4 * len(data)  # the measure sees a decoded bulk ...
    assert peaks["streamed"] < 2.5 * len(data)  # ... and the streaming path holds none
    assert left < len(data) / 4  # nor keeps its text once done (no reference cycle waits for the collector)


@pytest.mark.parametrize("text", [
    b'{"debtorAccount": {"bban": "12547919074"}, "payments": [{"creditorName": "a, [b] {c}"}, {"creditorName": "\\"d\\\\"}]}',
    b'{"debtorAccount": {"bban": "12547919074", "x": []}, "payments": [{"creditorName": "a", "y": []}, {"z": {}}]}',
])
def test_strings_with_structure_and_empty_containers_stream(text):
    _same(text, streamed=True)


@pytest.mark.parametrize("levels, streams", [(510, True), (511, False)])
def test_the_stream_takes_nesting_up_to_the_limit(levels, streams):
    # 2 + 510 levels: the document's 512; one more is the whole document's to report
    for data in (b'{"payments": [' + b"[" * levels + b"]" * levels + b"]}",
                 b'{"x": ' + b"[" * (levels + 1) + b"]" * (levels + 1) + b', "payments": []}'):
        text = streamable_text(data)
        try:
            stream = ArrayStream(text, frozenset({"payments"}), data)
            for _entry in stream.entries():
                pass
            stream.read_tail()
        except Unstreamable:
            assert not streams
        else:
            assert streams
