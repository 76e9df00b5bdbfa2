"""How a whole-request input is recognised, without importing the request checker (kept off the
CLI's cold start: most inputs are plain payloads)."""
from __future__ import annotations

import re
from typing import Any

REQUEST_KIND = "request"


def looks_like_envelope(payload: Any) -> bool:
    """A JSON object with at least method, path and headers: a request envelope."""
    return isinstance(payload, dict) and all(k in payload for k in ("method", "path", "headers"))


_HTTP_START_RE = re.compile(rb"(?:\r?\n)*[!#$%&'*+\-.^_`|~0-9A-Za-z]+ [^ \r\n]+( HTTP/[0-9.]+)?\r?\n")


def looks_like_http(data: bytes) -> bool:
    """Raw bytes that start with an HTTP request line."""
    return isinstance(data, (bytes, bytearray)) and _HTTP_START_RE.match(bytes(data[:8192])) is not None
