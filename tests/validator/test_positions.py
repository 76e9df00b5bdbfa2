"""Line and column of a pointer's value in the JSON text."""
from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from validator import Validator
from validator.findings import pointer as make_pointer, walk_json
from validator.positions import PositionIndex, pointer_offset, pointer_position

values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=8),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4),
    max_leaves=20,
)


_pointers = walk_json


@settings(max_examples=300, deadline=None)
@given(value=values, indent=st.sampled_from([None, 2]), ascii_only=st.booleans())
def test_every_pointer_finds_its_value(value, indent, ascii_only):
    text = json.dumps(value, indent=indent, ensure_ascii=ascii_only)
    decoder = json.JSONDecoder()
    for tokens, expected in _pointers(value):
        offset = pointer_offset(text, make_pointer(*tokens))
        assert offset is not None
        found, _ = decoder.raw_decode(text, offset)
        assert found == expected or (found != found and expected != expected)


def test_absent_member_points_at_its_object_and_positions_are_one_based():
    text = '{\n  "a": [\n    {"b": 1},\n    {"c~/d": 2}\n  ]\n}'
    assert pointer_position(text, "/a/1/c~0~1d") == (4, 14)
    assert pointer_position(text, "/a/0/missing") == (3, 5)
    assert pointer_position(text, "") == (1, 1)
    assert pointer_position(text, "/a/7") == (2, 8)
    pointer_position("[1, 2", "/5")  # malformed text never raises


def test_duplicate_keys_point_at_the_value_parsers_keep():
    assert pointer_position('{"a": 1, "a": 2}', "/a") == (1, 15)


def test_findings_of_a_file_carry_line_and_column():
    text = '{\n  "paymentIds": [\n    "a",\n    "a"\n  ]\n}\n'
    report = Validator().validate_bytes(text.encode(), "signing-basket")
    finding = report.findings[0]
    assert (finding.rule, finding.pointer, finding.line, finding.column) == ("basket-duplicate-ids", "/paymentIds/1", 4, 5)


@settings(max_examples=300, deadline=None)
@given(value=values, indent=st.sampled_from([None, 2]), data=st.data())
def test_a_clean_text_scanned_only_as_far_as_needed_gives_the_same_offsets(value, indent, data):
    """A text the loader found clean is scanned lazily (a container only as far as the wanted member or element,
    resumed later): every pointer, and absent members and elements, asked in any order, give what a whole scan of
    each container gives."""
    text = json.dumps(value, indent=indent)
    pointers = [make_pointer(*tokens) for tokens, _ in _pointers(value)]
    pointers += [p + "/absent" for p in pointers] + [p + "/99" for p in pointers]
    order = data.draw(st.permutations(pointers))
    whole = PositionIndex(text)
    lazy = PositionIndex(text, unique_keys=True)
    assert [lazy.offset(p) for p in order] == [whole.offset(p) for p in order]
    assert [lazy.position(p) for p in order] == [whole.position(p) for p in order]


def test_a_long_array_is_not_decoded_to_find_a_member_before_it():
    text = '{"head": {"a": 1}, "entries": [' + ", ".join(['{"x": 1}'] * 5) + '], "tail": 2}'
    index = PositionIndex(text, unique_keys=True)
    assert index.position("/head/a") == (1, 16)
    third = text.index("[") + 1 + 3 * len('{"x": 1}, ')
    assert index.position("/entries/3/x") == (1, third + len('{"x": ') + 1)
    # only as far as element 3 was read, and the members after the array not at all
    root = index._containers[0]
    assert list(root.found) == ["head", "entries"] and len(index._containers[text.index("[")].found) == 4
    assert index.position("/tail") == (1, text.index('"tail"') + 9)
    assert index.position("/entries/9") == (1, text.index("[") + 1)


# Names and strings made of what can confuse a search of the text: quotes, backslashes, brackets, colons, commas,
# white space, a control character, letters beyond ASCII, and the names themselves.
_TRICKY = st.sampled_from(['"', "\\", "{", "}", "[", "]", ":", ",", " ", "\n", "\x01", "é", "€", "a", "b", "ab"])
_tricky_text = st.lists(_TRICKY, max_size=4).map("".join)
_names = st.sampled_from(["a", "b", "ab", "", "x y", "é"]) | _tricky_text
_tricky_values = st.recursive(
    st.none() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | _names | _tricky_text,
    lambda children: st.lists(children, max_size=3) | st.dictionaries(_names, children, max_size=4),
    max_leaves=24,
)


def _texts(value, draw) -> str:
    indent = draw(st.sampled_from([None, 0, 2]))
    separators = draw(st.sampled_from([None, (",", ":"), (" , ", " : ")]))
    text = json.dumps(value, indent=indent, separators=separators, ensure_ascii=draw(st.booleans()))
    return draw(st.sampled_from(["", " ", "\n"])) + text + draw(st.sampled_from(["", "\r\n"]))


@settings(max_examples=400, deadline=None)
@given(value=_tricky_values, data=st.data())
def test_members_found_by_searching_the_bytes_are_where_the_scan_finds_them(value, data):
    """A clean text's pointers along objects are looked up by searching its bytes (PositionIndex(data=...)): every
    pointer, absent members and members of absent or scalar values included, gives the whole scan's offset."""
    text = _texts(value, data.draw)
    pointers = [make_pointer(*tokens) for tokens, _ in _pointers(value)]
    pointers += [p + suffix for p in pointers for suffix in ("/a", "/b", "/ab", "/", "/0", "/a/b")]
    order = data.draw(st.permutations(pointers))
    whole = PositionIndex(text)
    searched = PositionIndex(text, unique_keys=True, data=text.encode())
    assert [searched.offset(p) for p in order] == [whole.offset(p) for p in order]
    assert [searched.position(p) for p in order] == [whole.position(p) for p in order]


def test_the_search_finds_members_past_nested_values_and_names_written_as_values():
    text = '{"n": "b", "x": {"b": [1, {"b": 2}]}, "y": {"c": "é:,"}, "b": {"b": 3}}'
    index = PositionIndex(text, unique_keys=True, data=text.encode())
    assert index.offset("/b/b") == text.rindex("3")
    assert index.offset("/x/b") == text.index("[")
    assert index.offset("/x/c") == text.index('{"b": [')  # absent: where its object starts
    assert index.offset("/y/b") == text.index('{"c"')  # "b" follows in a sibling: absent here
    assert index.offset("/y/c") == text.index('"é')  # in characters, not bytes
    assert index._search_misses == 4  # all found by searching, none left to the scan
    assert not index._containers  # the scan never ran


def test_what_the_search_cannot_tell_is_left_to_the_scan():
    text = '{"a": "\\"b\\": 0", "\\u0062": 1, "c": [{"d": 2}]}'
    index = PositionIndex(text, unique_keys=True, data=text.encode())
    assert index.offset("/b") == text.index("1")  # written with an escape (and one in a string before it)
    assert index.offset("/c/0/d") == text.index("2}")  # an array on the way
    assert index._search_misses == 2
    text = '{"e": "{", "f": 3}'
    index = PositionIndex(text, unique_keys=True, data=text.encode())
    assert index.offset("/f") == text.index("3")  # a string holding a bracket before it
    assert index._search_misses == 3


def test_the_search_reads_at_most_a_few_times_the_text():
    names = [f"m{n}" for n in range(200)]
    text = json.dumps({name: {"v": n} for n, name in enumerate(names)})
    index = PositionIndex(text, unique_keys=True, data=text.encode())
    assert [index.offset(f"/{name}/v") for name in reversed(names)] == [PositionIndex(text).offset(f"/{name}/v") for name in reversed(names)]
    assert index._search_budget < 0  # spent: the last members were found by the scan
    assert index._containers
