"""An HTTP exchange as it was recorded: the request exactly as sent (request line target, headers in order with
duplicates, body bytes, the time it was sent) and the answer exactly as received.

Whoever saw the exchange builds these -- the gate from what its signed clients sent, the proxy from the bytes it
forwarded, ``obvalidate traffic`` from a HAR entry -- and the judge (:mod:`.judge`) reads nothing else.
"""
from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from .decoding import code_of, decode


@dataclass(frozen=True)
class RecordedRequest:
    method: str
    target: str                      # as sent on the request line: path and query (an absolute URL is accepted too)
    headers: tuple[tuple[str, str], ...]   # in order, duplicates kept, names as sent
    body: bytes
    at: _dt.datetime                 # when it was sent (timezone-aware): signatures and execution dates judged by it
    origin: str | None = None        # scheme://host[:port] the request went to, when known

    def header(self, name: str) -> str | None:
        """The first value of a header (names compare case-insensitively), or None."""
        return header_value(self.headers, name)

    @property
    def origin_and_target(self) -> tuple[str | None, str]:
        """(origin, path and query): an absolute-form target gives its own origin (RFC 9112 section 3.2.2)."""
        return split_target(self.target, self.origin)


@dataclass(frozen=True)
class RecordedAnswer:
    status: int
    headers: tuple[tuple[str, str], ...]
    body: bytes
    truncated: bool = False          # the body was cut (a cap): body rules are not judged on it

    def header(self, name: str) -> str | None:
        return header_value(self.headers, name)

    @property
    def content_type(self) -> str:
        return self.header("content-type") or ""

    @property
    def code(self) -> str | None:
        """The error code the answer names (A6), its body decoded within the loader's limits (decoding.py)."""
        return code_of(decode(self.body).value)


def header_value(headers: Any, name: str) -> str | None:
    wanted = name.lower()
    return next((value for key, value in headers if key.lower() == wanted), None)


def split_target(target: str, origin: str | None = None) -> tuple[str | None, str]:
    """(origin, origin-form target) of a request-line target: ``https://bank.example/v1/x?y`` gives
    ``("https://bank.example", "/v1/x?y")``; an origin-form target keeps the origin given."""
    if target.startswith(("http://", "https://")) or "://" in target.split("/", 1)[0]:
        parts = urlsplit(target)
        path = parts.path or "/"
        return normal_origin(f"{parts.scheme}://{parts.netloc}"), path + (f"?{parts.query}" if parts.query else "")
    return (normal_origin(origin) if origin else None), target


def normal_origin(origin: str) -> str:
    """scheme://host[:port] in one spelling: lower case, no trailing slash, no default port (RFC 6454 section 4)."""
    text = origin.strip().rstrip("/").lower()
    for scheme, port in (("http://", ":80"), ("https://", ":443")):
        if text.startswith(scheme) and text.endswith(port):
            return text[: -len(port)]
    return text
