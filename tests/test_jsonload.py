import io
import json
import math

import pytest
from hypothesis import given, settings, strategies as st

from validator.jsonload import (
    JSON_BINARY, JSON_DUPLICATE_KEY, JSON_EMPTY, JSON_ENCODING, JSON_NON_FINITE, JSON_SYNTAX,
    JSON_TOO_DEEP, JSON_TOO_LARGE, RULES, LoadProblem, Loaded, iter_jsonl, load_json_bytes,
    load_json_text, pointer_of_duplicate,
)


def rules(loaded):
    return [p.rule for p in loaded.problems]


def test_valid_document():
    loaded = load_json_bytes(b'{"a": [1, 2.5, "x", true, null], "b": {"c": -0}}')
    assert loaded.problems == [] and loaded.ok
    assert loaded.value == {"a": [1, 2.5, "x", True, None], "b": {"c": 0}}


def test_syntax_error_has_line_and_column():
    loaded = load_json_bytes(b'{\n  "a": 1\n  "b": 2\n}')
    assert loaded.value is None
    assert loaded.problems == [LoadProblem(JSON_SYNTAX, "Expecting ',' delimiter", 3, 3)]


@pytest.mark.parametrize("data", [b'{"a":1,}', b"[1 2]", b"'x'", b'{"a":1} x', b'"tab\there"', b"01"])
def test_syntax_errors(data):
    loaded = load_json_bytes(data)
    assert rules(loaded) == [JSON_SYNTAX] and loaded.value is None
    assert loaded.problems[0].line == 1 and loaded.problems[0].column >= 1


def test_duplicate_key_with_position_and_pointer():
    text = '{"a": [{"b": 1,\n  "c": {"x~/y": 1, "x~/y": 2}}], "z": 0, "z": 1}'
    loaded = load_json_text(text)
    assert rules(loaded) == [JSON_DUPLICATE_KEY, JSON_DUPLICATE_KEY]
    first, second = loaded.problems
    assert (first.line, first.column, first.pointer) == (2, 20, "/a/0/c")
    assert "'x~/y'" in first.message
    assert (second.line, second.pointer) == (2, "")
    assert "top-level object" in second.message
    assert loaded.value["z"] == 1  # last wins, as json.loads
    assert pointer_of_duplicate(text) == loaded.problems


def test_duplicate_keys_after_escapes_and_in_arrays():
    loaded = load_json_text('[{"k": 1}, {"\\u006b": 1, "k": 2}]')  # "\u006b" is "k"
    assert rules(loaded) == [JSON_DUPLICATE_KEY]
    assert loaded.problems[0].pointer == "/1"
    assert loaded.problems[0].column == 26


@pytest.mark.parametrize("data, pointer", [
    (b"[NaN]", "/0"), (b'{"a": Infinity}', "/a"), (b'{"a": [1, -Infinity]}', "/a/1"),
    (b"1e400", ""), (b'{"big": -1.5E+309}', "/big"), (b"[" + b"9" * 400 + b".0]", "/0"),
])
def test_non_finite(data, pointer):
    loaded = load_json_bytes(data)
    assert rules(loaded) == [JSON_NON_FINITE]
    assert loaded.problems[0].pointer == pointer and loaded.problems[0].line == 1


def test_large_numbers_kept_exactly_but_huge_integers_reported():
    big = "9" * 4300
    loaded = load_json_text(f'{{"n": {big}, "f": 1e308}}')
    assert loaded.ok and loaded.value["n"] == int(big) and loaded.value["f"] == 1e308
    loaded = load_json_text('{"n": ' + "1" * 5000 + "}")
    assert rules(loaded) == [JSON_NON_FINITE] and loaded.value is None
    assert loaded.problems[0].column == 7 and "5000 digits" in loaded.problems[0].message


def test_invalid_utf8_reports_byte_offset():
    loaded = load_json_bytes(b'{"name": "Bj\xf8rn"}')  # Latin-1, not UTF-8
    assert rules(loaded) == [JSON_ENCODING] and loaded.value is None
    assert "byte offset 12" in loaded.problems[0].message


def test_utf8_bom_is_an_error_but_the_value_is_kept():
    loaded = load_json_bytes(b'\xef\xbb\xbf{"a": 1}')
    assert rules(loaded) == [JSON_ENCODING]
    assert "MUST NOT" in loaded.problems[0].message
    assert loaded.value == {"a": 1}
    assert rules(load_json_text('\ufeff{"a": 1}')) == [JSON_ENCODING]


@pytest.mark.parametrize("encoding, name", [
    ("utf-16", "UTF-16LE (byte order mark)"), ("utf-16-le", "UTF-16LE"), ("utf-16-be", "UTF-16BE"),
    ("utf-32-le", "UTF-32LE"), ("utf-32-be", "UTF-32BE"), ("utf-32", "UTF-32LE (byte order mark)"),
])
def test_utf16_and_utf32_are_named(encoding, name):
    loaded = load_json_bytes('{"a": 1}'.encode(encoding))
    assert rules(loaded) == [JSON_ENCODING] and loaded.value is None
    assert f"looks like {name} text" in loaded.problems[0].message


def test_unpaired_surrogate_in_text():
    assert rules(load_json_text('"\ud800"')) == [JSON_ENCODING]
    # ... and so is an escaped one: valid JSON syntax, but no UTF-8 encoder can send it (issue 7); the value is kept
    escaped = load_json_text('"\\ud800"')
    assert rules(escaped) == [JSON_ENCODING] and escaped.value == "\ud800"
    assert load_json_text('"\\ud83d\\ude00"').ok  # an escaped pair is one character


@pytest.mark.parametrize("data", [b"", b" ", b" \n\t\r\n "])
def test_empty(data):
    loaded = load_json_bytes(data)
    assert rules(loaded) == [JSON_EMPTY] and loaded.value is None
    assert rules(load_json_text(data.decode())) == [JSON_EMPTY]


def test_only_bom():
    assert rules(load_json_bytes(b"\xef\xbb\xbf\n")) == [JSON_ENCODING, JSON_EMPTY]


@pytest.mark.parametrize("depth", [100_000, 1_000_000])
def test_very_deep_nesting_is_a_problem_not_a_crash(depth):
    for data in (b"[" * depth, b"[" * depth + b"]" * depth, b'{"a":' * depth + b"1" + b"}" * depth):
        loaded = load_json_bytes(data)
        assert rules(loaded) == [JSON_TOO_DEEP] and loaded.value is None


def test_depth_limit_is_exact():
    ok = b"[" * 512 + b"]" * 512
    assert load_json_bytes(ok).ok
    too_deep = load_json_bytes(b"[" * 513 + b"]" * 513)
    assert rules(too_deep) == [JSON_TOO_DEEP] and "513" in too_deep.problems[0].message
    assert load_json_bytes(b"[" * 11 + b"]" * 11, max_depth=10).problems[0].rule == JSON_TOO_DEEP
    mixed = b'{"a":' * 5 + b"[" * 5 + b"1" + b"]" * 5 + b"}" * 5
    assert load_json_bytes(mixed, max_depth=10).ok
    assert rules(load_json_bytes(mixed, max_depth=9)) == [JSON_TOO_DEEP]


def test_brackets_and_escapes_inside_strings_do_not_count():
    data = json.dumps({"s": "[[[[[[[[[[" * 100, "t": "]]]]" * 100, "q": '\\"[{', "n": [[["x"]]]}).encode()
    assert load_json_bytes(data, max_depth=4).ok
    assert rules(load_json_bytes(data, max_depth=3)) == [JSON_TOO_DEEP]
    # Closing brackets in a string must not hide real depth either.
    hidden = b'["]]]]]]]]]]]]", ' + b"[" * 20 + b"]" * 20 + b"]"
    assert rules(load_json_bytes(hidden, max_depth=20)) == [JSON_TOO_DEEP]
    assert load_json_bytes(hidden, max_depth=21).ok


def test_too_large():
    loaded = load_json_bytes(b"[1, 2, 3]", max_bytes=8)
    assert rules(loaded) == [JSON_TOO_LARGE] and loaded.value is None
    assert rules(load_json_bytes(bytearray(b"[1, 2, 3]"), max_bytes=8)) == [JSON_TOO_LARGE]
    assert rules(load_json_text("[1, 2, 3]", max_bytes=8)) == [JSON_TOO_LARGE]
    assert load_json_bytes(b"[1, 2, 3]", max_bytes=9).ok


@pytest.mark.parametrize("data, fragment", [
    (b'{"a": "\x00"}', "NUL byte at byte offset 7"),
    (b"\x1f\x8b\x08\x00\x00\x00", "gzip"),
    (b"%PDF-1.7\n", "PDF"),
    (bytes(range(1, 32)) * 4, "control characters"),
])
def test_binary(data, fragment):
    loaded = load_json_bytes(data)
    assert rules(loaded) == [JSON_BINARY] and loaded.value is None
    assert fragment in loaded.problems[0].message


def test_every_rule_is_covered():
    produced = set()
    for data in (b"{", b'{"a":1,"a":1}', b"NaN", b"\xff", b"", b"[" * 600, b"\x00"):
        produced.update(rules(load_json_bytes(data)))
    produced.update(rules(load_json_bytes(b"[1]", max_bytes=1)))
    assert produced == set(RULES)


def test_type_errors_for_wrong_argument_types():
    with pytest.raises(TypeError):
        load_json_bytes("text")
    with pytest.raises(TypeError):
        load_json_text(b"bytes")


# --- JSON Lines --------------------------------------------------------------------

JSONL = b'{"a": 1}\n\n  \n[1,\n{"a": 1, "a": 2}\r\n\xef\xbb\xbf1\n"\xff"\n'


def _check_jsonl(results):
    assert [n for n, _ in results] == [1, 4, 5, 6, 7]
    assert results[0][1].value == {"a": 1} and results[0][1].ok
    assert rules(results[1][1]) == [JSON_SYNTAX] and results[1][1].problems[0].line == 4
    assert rules(results[2][1]) == [JSON_DUPLICATE_KEY] and results[2][1].problems[0].line == 5
    assert rules(results[3][1]) == [JSON_ENCODING]  # a BOM in the middle of a stream
    assert rules(results[4][1]) == [JSON_ENCODING] and results[4][1].problems[0].line == 7


def test_iter_jsonl_bytes_and_streams():
    _check_jsonl(list(iter_jsonl(JSONL)))
    _check_jsonl(list(iter_jsonl(io.BytesIO(JSONL))))
    _check_jsonl(list(iter_jsonl(JSONL.split(b"\n"))))


def test_iter_jsonl_text():
    text = '{"a": 1}\n\n[true]\r\n'
    results = list(iter_jsonl(text))
    assert [(n, r.value) for n, r in results] == [(1, {"a": 1}), (3, [True])]
    results = list(iter_jsonl(io.StringIO(text)))
    assert [(n, r.value) for n, r in results] == [(1, {"a": 1}), (3, [True])]


def test_iter_jsonl_long_line_in_stream_is_not_read_whole():
    stream = io.BytesIO(b"[1]\n" + b"[" + b"1," * 5000 + b"1]\n" + b"[2]\n")
    results = list(iter_jsonl(stream, max_bytes=100))
    assert [n for n, _ in results] == [1, 2, 3]
    assert rules(results[1][1]) == [JSON_TOO_LARGE] and results[1][1].problems[0].line == 2
    assert results[2][1].value == [2]


# --- properties ----------------------------------------------------------------------

@settings(max_examples=300)
@given(st.binary(max_size=200))
def test_arbitrary_bytes_never_raise(data):
    loaded = load_json_bytes(data)
    assert isinstance(loaded, Loaded)
    assert all(p.rule in RULES for p in loaded.problems)
    if not loaded.problems:
        assert loaded.value == json.loads(data) or loaded.value != loaded.value


@settings(max_examples=200)
@given(st.text(alphabet='[]{}":,\\ 0123456789.eE+-ntrufalsNIiy\n', max_size=60))
def test_json_like_text_never_raises(text):
    loaded = load_json_text(text)
    if loaded.value is None and not loaded.problems:
        assert json.loads(text) is None  # only the document "null"
    for p in loaded.problems:
        assert p.rule in RULES


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda children: st.lists(children) | st.dictionaries(st.text(), children),
    max_leaves=30,
)


@given(json_values, st.booleans())
def test_json_values_round_trip(value, ensure_ascii):
    loaded = load_json_text(json.dumps(value, ensure_ascii=ensure_ascii))
    assert loaded.problems == []
    assert loaded.value == value
    loaded = load_json_bytes(json.dumps(value, indent=1, ensure_ascii=ensure_ascii).encode())
    assert loaded.problems == [] and loaded.value == value


def test_nan_value_is_kept_for_callers():
    loaded = load_json_bytes(b'{"x": NaN}')
    assert math.isnan(loaded.value["x"])
