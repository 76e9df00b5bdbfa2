"""The loader's fast path (plain C decoding, its checks proved moot by counting) against the exact path it stands
in for: the same value and the same problems, rule for rule, message, line, column and pointer."""
import json
import sys
import threading

import pytest
from hypothesis import given, settings, strategies as st

from validator import jsonload
from validator.jsonload import _load, _load_exact, _load_fast, load_json_bytes, load_json_text


def same(fast, exact) -> bool:
    # repr tells 1 from 1.0 and True, -0.0 from 0.0, and keeps the order of members.
    return repr(fast.value) == repr(exact.value) and fast.problems == exact.problems


def both(data: bytes, max_depth: int = jsonload.DEFAULT_MAX_DEPTH):
    return _load(data, jsonload.DEFAULT_MAX_BYTES, max_depth), _load_exact(data, jsonload.DEFAULT_MAX_BYTES, max_depth)


# ---- generated JSON texts: repeated keys (also spelled differently), escapes, structure inside strings, numbers
# out of range, whitespace, empty containers ----

def _char(ch: str, how: int) -> str:
    if ch in '"\\' or ch < " " or "\ud800" <= ch <= "\udfff" or how == 1:
        if how == 2 and ch in '"\\':
            return "\\" + ch
        return f"\\u{ord(ch):04x}" if how != 3 else f"\\u{ord(ch):04X}"
    if ch == "/" and how == 2:
        return "\\/"
    return ch


CHARS = st.sampled_from(list('ab"\\,:[]{} /é\x7f\u2028') + ["\ud800", "\udc00", "\U0001f600", "\x01", "\n"])
STRINGS = st.lists(st.tuples(CHARS, st.integers(0, 3)), max_size=6).map(
    lambda chars: '"' + "".join(_char(c, h) for c, h in chars) + '"')
KEYS = st.tuples(st.sampled_from(["a", "b", "k", "c,d", 'x"y', "[", "{}", ":", "\\", "é", "s\\"]),
                 st.lists(st.integers(0, 3), min_size=3, max_size=3)).map(
    lambda key: '"' + "".join(_char(c, key[1][i % 3]) for i, c in enumerate(key[0])) + '"')
NUMBERS = st.one_of(
    st.integers(-10**20, 10**20).map(str),
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
    st.sampled_from(["1e400", "-1e400", "1.5E+309", "NaN", "Infinity", "-Infinity", "-0", "0.0", "1E2", "2e-400",
                     "9" * 4301, "-" + "1" * 5000, "1" * 400 + ".0"]),
)
WS = st.sampled_from(["", "", "", " ", "\n  ", "\t", "\r\n"])
SCALARS = NUMBERS | STRINGS | st.sampled_from(["true", "false", "null"])


@st.composite
def _array(draw, children):
    items = draw(st.lists(children, max_size=4))
    return "[" + draw(WS) + ",".join(draw(WS) + item + draw(WS) for item in items) + draw(WS) + "]"


@st.composite
def _object(draw, children):
    members = draw(st.lists(st.tuples(KEYS, children), max_size=4))
    return "{" + draw(WS) + ",".join(draw(WS) + k + draw(WS) + ":" + draw(WS) + v for k, v in members) + draw(WS) + "}"


JSON_TEXTS = st.recursive(SCALARS, lambda children: _array(children) | _object(children), max_leaves=25)


@settings(max_examples=400)
@given(JSON_TEXTS, WS, WS, st.integers(1, 8))
def test_fast_path_agrees_with_the_exact_path_on_generated_json(text, before, after, max_depth):
    data = (before + text + after).encode("utf-8", "surrogatepass")
    fast, exact = both(data, max_depth)
    assert same(fast, exact), (data, fast.problems, exact.problems)
    fast, exact = both(data)
    assert same(fast, exact), (data, fast.problems, exact.problems)


@settings(max_examples=300)
@given(st.text(alphabet='[]{}":,\\ 0123456789.eE+-ntrufalsNIiyu\n', max_size=60))
def test_fast_path_agrees_with_the_exact_path_on_json_like_text(text):
    fast, exact = both(text.encode())
    assert same(fast, exact)
    assert same(load_json_text(text), jsonload._load_exact(text.encode(), jsonload.DEFAULT_MAX_BYTES,
                                                           jsonload.DEFAULT_MAX_DEPTH, text))


@settings(max_examples=200)
@given(st.binary(max_size=80))
def test_fast_path_agrees_with_the_exact_path_on_bytes(data):
    fast, exact = both(data)
    assert same(fast, exact)


# ---- what the counting must get right, each case by hand ----

@pytest.mark.parametrize("text", [
    '{"a": 1, "a": 2}', '{"a": 1, "\\u0061": 2}', '{"a,b": 1, "a,b": 2}', '{"[": [], "[": {}}',
    '{"x\\"": 1, "x\\"": 2}', '{"\\\\": 1, "\\\\": 2}', '{"a\\\\": "]", "a\\\\": ","}', '{"a": {}, "a": {}}',
    '[{"k": [1, 2]}, {"k": 1, "k": [3]}]', '{"a": [], "b": [1], "a": 0}', '{"\\u003a": 1, ":": 2}',
    '{"a": "\\",\\"", "a": 1}',
])
def test_repeated_keys_are_never_taken_by_the_fast_path(text):
    data = text.encode()
    assert _load_fast(data, 512, None) is None
    loaded = load_json_bytes(data)
    assert loaded.problems and loaded.problems[0].rule == jsonload.JSON_DUPLICATE_KEY
    assert same(loaded, _load_exact(data, jsonload.DEFAULT_MAX_BYTES, 512))


@pytest.mark.parametrize("text", [
    '{"a": "x, [y] {z}", "b": ["\\"[", "]\\\\"], "c": {"d": ":,"}}',  # structure inside strings
    '{"a\\\\": 1, "b": "\\\\\\"{"}', '{"\\u002c": [1], ";": 2}', '{"e": {}, "f": [{}], "g": [1], "h": ["s"]}',
    '{"a": 1.5, "b": -0.0, "c": 1e308, "d": 2e-400}', ' \n {"a": [true, false, null]} \r\n', '"just a string"', "17",
    'null', '[]', '{}', '[[[["deep"]]]]', '{"s": "\\ud83d\\ude00", "t": "\\u00f8"}',
])
def test_valid_documents_are_taken_by_the_fast_path(text):
    data = text.encode()
    fast = _load_fast(data, 512, None)
    assert fast is not None and fast.ok
    assert same(fast, _load_exact(data, jsonload.DEFAULT_MAX_BYTES, 512))


@pytest.mark.parametrize("depth", [510, 511, 512, 513, 514])
@pytest.mark.parametrize("shape", ["array", "object", "empty", "empty object", "mixed"])
def test_nesting_near_the_limit(depth, shape):
    if shape == "array":
        text = "[" * depth + "1" + "]" * depth
    elif shape == "object":
        text = '{"a":' * depth + "1" + "}" * depth
    elif shape == "empty":
        text = "[" * depth + "]" * depth
    elif shape == "empty object":
        text = '{"a":' * (depth - 1) + "{}" + "}" * (depth - 1)
    else:
        text = '[{"a":' * (depth // 2) + "[" * (depth % 2) + '"s"' + "]" * (depth % 2) + "}]" * (depth // 2)
    fast, exact = both(text.encode())
    assert same(fast, exact)
    assert bool(fast.problems) == (depth > 512)


def test_non_finite_numbers_and_huge_integers_go_to_the_exact_path():
    for text in ("[NaN]", '{"a": -Infinity}', "1e400", "[1.5E+309]", "[" + "9" * 4301 + "]"):
        assert _load_fast(text.encode(), 512, None) is None
        assert load_json_bytes(text.encode()).problems[0].rule == jsonload.JSON_NON_FINITE


def test_lone_surrogates_are_reported_on_the_fast_path_too():
    data = b'{"a": "\\ud800", "b": ["\\udc00x"]}'
    fast, exact = both(data)
    assert [p.rule for p in fast.problems] == [jsonload.JSON_ENCODING] * 2 and same(fast, exact)


def test_del_bytes_in_the_sniffed_head_decide_as_before():
    data = b'{"a": "' + b"\x7f" * 200 + b'"}'
    fast, exact = both(data)
    assert [p.rule for p in exact.problems] == [jsonload.JSON_BINARY] and same(fast, exact)
    data = b'{"a": "' + b"x" * 1100 + b"\x7f" * 200 + b'"}'
    assert _load_fast(data, 512, None) is not None and same(*both(data))


def test_the_fast_path_is_thread_safe():
    documents = [json.dumps({"n": i, "f": [i + 0.5] * 50, "s": {"k": str(i)}}).encode() for i in range(40)]
    documents += [b'{"a": 1, "a": 2}', b"[NaN]", b'{"x": 1e400}']
    expected = [load_json_bytes(d) for d in documents]
    failures = []

    def work() -> None:
        for _ in range(30):
            for data, want in zip(documents, expected):
                got = load_json_bytes(data)
                if repr(got.value) != repr(want.value) or got.problems != want.problems:
                    failures.append(data)

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        threads = [threading.Thread(target=work) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(interval)
    assert failures == []
