"""JSONL cut into blocks of whole lines (what --jobs workers are handed): the same lines, numbers and
over-long lines as reading the stream line by line, wherever a block edge falls."""
from __future__ import annotations

import io

from hypothesis import given, settings
from hypothesis import strategies as st

from validator.jsonload import _TOO_LONG, _bounded_lines, block_lines, jsonl_blocks, jsonl_lines, span_blocks, span_lines


def line_by_line(data: bytes, max_bytes: int) -> list[tuple[int, bytes | None]]:
    """The reference: one bounded readline per line, as before blocks existed."""
    out = []
    for lineno, line in enumerate(_bounded_lines(io.BytesIO(data), max_bytes), 1):
        if line is _TOO_LONG:
            out.append((lineno, None))
        elif line.rstrip(b"\r\n").strip(b" \t\r"):
            out.append((lineno, line.rstrip(b"\r\n")))
    return out


def by_blocks(data: bytes, max_bytes: int, block_bytes: int) -> list[tuple[int, bytes | None]]:
    out = []
    for first, block in jsonl_blocks(io.BytesIO(data), max_bytes, block_bytes):
        if block is None:
            out.append((first, None))
        else:
            out.extend(block_lines(block, first))
    return out


def blocks(data: bytes, max_bytes: int, block_bytes: int) -> list[tuple[int, bytes | None]]:
    return list(jsonl_blocks(io.BytesIO(data), max_bytes, block_bytes))


# Lines of a few characters that matter here: line ends, blank-ish bytes, and payload bytes.
LINE_BYTES = st.lists(st.sampled_from([b"\n", b"\r", b"\r\n", b" ", b"\t", b"{", b"1", b"}", b"x"]), max_size=60)


@settings(max_examples=400, deadline=None)
@given(LINE_BYTES, st.integers(1, 12), st.integers(1, 16))
def test_blocks_give_the_lines_of_line_by_line_reading(parts, max_bytes, block_bytes):
    data = b"".join(parts)
    assert by_blocks(data, max_bytes, block_bytes) == line_by_line(data, max_bytes)
    assert list(jsonl_lines(io.BytesIO(data), max_bytes)) == line_by_line(data, max_bytes)


def by_spans(data: bytes, max_bytes: int, block_bytes: int, span_bytes: int) -> list[tuple[int, bytes | None]]:
    """What --jobs workers read of a file cut into byte ranges: each the lines beginning in its range, numbered from
    the line ends counted in the ranges before it."""
    out, line = [], 1
    for start in range(0, len(data), span_bytes):
        stream = io.BytesIO(data)
        first, stop, newlines = span_lines(stream, start, start + span_bytes)
        for number, block in span_blocks(stream, first, stop, line, max_bytes, block_bytes):
            out.extend([(number, None)] if block is None else block_lines(block, number))
        line += newlines
    return out


@settings(max_examples=400, deadline=None)
@given(LINE_BYTES, st.integers(1, 12), st.integers(1, 16), st.integers(1, 20))
def test_byte_ranges_give_the_lines_of_line_by_line_reading(parts, max_bytes, block_bytes, span_bytes):
    data = b"".join(parts)
    assert by_spans(data, max_bytes, block_bytes, span_bytes) == line_by_line(data, max_bytes)


def test_each_block_holds_whole_lines_and_numbers_its_first():
    data = b'{"a":1}\n{"b":2}\n{"c":3}\n{"d":4}\n'
    # 10-byte reads end inside lines: each block is finished to its line's end, so every edge is a line edge.
    assert blocks(data, 100, 10) == [(1, b'{"a":1}\n{"b":2}\n'), (3, b'{"c":3}\n{"d":4}\n')]
    # A read ending exactly at a line end takes nothing of the next line.
    assert blocks(data, 100, 8) == [(1, b'{"a":1}\n'), (2, b'{"b":2}\n'), (3, b'{"c":3}\n'), (4, b'{"d":4}\n')]


def test_a_line_spanning_many_reads_is_one_line():
    long = b"[" + b"1," * 50 + b"1]"
    data = b"[0]\n" + long + b"\n[2]\n"
    assert by_blocks(data, 1000, 7) == [(1, b"[0]"), (2, long), (3, b"[2]")]


def test_crlf_blank_lines_and_a_last_line_without_newline():
    data = b'{"a":1}\r\n\r\n  \t\n{"b":2}\r\n\n{"c":3}'
    assert by_blocks(data, 100, 5) == [(1, b'{"a":1}'), (4, b'{"b":2}'), (6, b'{"c":3}')]
    assert blocks(data, 100, 1000) == [(1, data)]


def test_over_long_lines_are_numbered_and_never_kept():
    data = b"[1]\n" + b"[" + b"1," * 5000 + b"1]\n" + b"[2]\n" + b"9" * 300
    found = blocks(data, 100, 64)
    assert (2, None) in found and (4, None) in found  # the last line, without "\n", is too long too
    assert all(block is None or len(block) < 400 for _, block in found)  # neither long line held whole
    assert by_blocks(data, 100, 64) == [(1, b"[1]"), (2, None), (3, b"[2]"), (4, None)]


def test_a_line_exactly_at_the_limit_is_read():
    # max_bytes content bytes plus "\r\n" is the longest line read (the limit of the line-by-line reader).
    data = b"1" * 10 + b"\r\n" + b"2" * 11 + b"\n" + b"3" * 11
    assert by_blocks(data, 10, 4) == line_by_line(data, 10) == [(1, b"1" * 10), (2, b"2" * 11), (3, b"3" * 11)]
    assert by_blocks(data + b"3", 10, 4)[-1] == (3, None)
