"""How a whole-request input is recognised, without importing the request checker (kept off the
CLI's cold start: most inputs are plain payloads)."""
from __future__ import annotations

import re
from typing import Any

REQUEST_KIND = "request"


def looks_like_envelope(payload: Any) -> bool:
    """A JSON object with at least method, path and headers: a request envelope."""
    # Three plain tests, not all() over a generator: this runs for every payload checked without a kind.
    return isinstance(payload, dict) and "method" in payload and "path" in payload and "headers" in payload


_HTTP_START_RE = re.compile(rb"(?:\r?\n)*[!#$%&'*+\-.^_`|~0-9A-Za-z]+ [^ \r\n]+( HTTP/[0-9.]+)?\r?\n")


def looks_like_http(data: bytes) -> bool:
    """Raw bytes that start with an HTTP request line."""
    # endpos reads the first 8 KiB in place (a slice would copy them, for every input checked without a kind).
    return isinstance(data, (bytes, bytearray)) and _HTTP_START_RE.match(data, 0, 8192) is not None
