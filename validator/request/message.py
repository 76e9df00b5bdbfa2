"""The HTTP request model of the ``request`` kind: a request as parsed from an envelope or a ``.http`` file, and
the problems found on the way (findings before the validator applies the profile to them).

Finding pointers: ``/method``, ``/path``, ``/query/<name>``, ``/headers/<Header-Name>``, ``/body/...``.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from ..findings import escape_pointer_token


@dataclass(frozen=True, slots=True)
class RequestProblem:
    """A finding before the validator turns it into one (profile overrides applied there)."""

    rule: str
    pointer: str
    message: str
    severity: str | None = None


@dataclass(frozen=True, init=False)
class HttpRequest:
    method: str
    target: str                              # path + query exactly as sent (the signing string's request-target)
    path: str                                # the path part, still percent-encoded
    query: list[tuple[str, str]]             # percent-decoded, in order, repeats kept
    headers: list[tuple[str, str]]           # wire order, original case, repeats kept
    body: bytes | None                       # exact bytes (b"" = no body); None when only a JSON value is known
    body_is_exact: bool
    body_value: Any = None                   # the JSON value when the envelope gave one instead of text
    form: str = "envelope"                   # "envelope" | "http"
    version: str | None = None               # HTTP version of a .http request line
    newline: str = "\r\n"                    # line ending of a .http input
    body_start: int | None = None            # byte offset of the body in a .http input
    # What parsing found, tied to the very objects it looked at (a dataclasses.replace of headers or body with other
    # objects drops it): the header list whose names are all tokens and values all printable ASCII, and the body's
    # text when the input gave the body as text (so it is never decoded again).
    clean_headers: list[tuple[str, str]] | None = field(default=None, repr=False, compare=False)
    text_of_body: tuple[bytes, str] | None = field(default=None, repr=False, compare=False)

    def __init__(self, method: str, target: str, path: str, query: list[tuple[str, str]], headers: list[tuple[str, str]],
                 body: bytes | None, body_is_exact: bool, body_value: Any = None, form: str = "envelope",
                 version: str | None = None, newline: str = "\r\n", body_start: int | None = None,
                 clean_headers: list[tuple[str, str]] | None = None, text_of_body: tuple[bytes, str] | None = None,
                 *, header_index: dict[str, list[str]] | None = None, header_values_within: int | None = None) -> None:
        # The fields go into the instance's dict at once: a frozen dataclass's own __init__ sets each one through
        # object.__setattr__, a few microseconds a request. ``header_index``: :attr:`header_index` when the parser
        # built it from ``headers`` on the way (dataclasses.replace never passes it, so a copy builds its own).
        fields = self.__dict__
        fields.update(method=method, target=target, path=path, query=query, headers=headers, body=body,
                      body_is_exact=body_is_exact, body_value=body_value, form=form, version=version, newline=newline,
                      body_start=body_start, clean_headers=clean_headers, text_of_body=text_of_body)
        if header_index is not None:
            fields["header_index"] = header_index
            if header_values_within is not None:
                fields["header_values_within"] = header_values_within

    # Found by the parser while it built header_index (never by dataclasses.replace, which builds its own): every
    # header name occurs once, its value trimmed of blanks, and no value is longer than this many characters. None:
    # not known.
    header_values_within = None

    @property
    def has_body(self) -> bool:
        return bool(self.body) if self.body_is_exact else self.body_value is not None

    @property
    def headers_clean(self) -> bool:
        """Every header name is an HTTP token and every value printable ASCII (found while parsing)."""
        return self.clean_headers is not None and self.clean_headers is self.headers

    @property
    def body_text(self) -> str | None:
        """The exact body as text when the input gave it as text, else None (decode :attr:`body`)."""
        pair = self.text_of_body
        return pair[1] if pair is not None and pair[0] is self.body else None

    @cached_property
    def header_index(self) -> dict[str, list[str]]:
        """Lower-case header name -> values in wire order; built once per request for every check that reads it
        (the header checks and the signature verifier). Read-only by convention."""
        index: dict[str, list[str]] = {}
        for name, value in self.headers:
            lname = name.lower()
            values = index.get(lname)
            if values is None:
                index[lname] = [value]
            else:
                values.append(value)
        return index

    def header_values(self, name: str) -> list[str]:
        wanted = name.lower()
        return [v for n, v in self.headers if n.lower() == wanted]


@dataclass(frozen=True, init=False)
class Parsed:
    request: HttpRequest | None
    problems: list[RequestProblem] = field(default_factory=list)

    def __init__(self, request: HttpRequest | None, problems: list[RequestProblem] | None = None) -> None:
        # As HttpRequest: the fields into the instance's dict at once, not one object.__setattr__ each
        self.__dict__.update(request=request, problems=[] if problems is None else problems)


def header_pointer(name: str) -> str:
    return "/headers/" + escape_pointer_token(name)


def query_pointer(name: str) -> str:
    return "/query/" + escape_pointer_token(name)


class Problems:
    """The problems the header, query and body checks collect, in the order found."""

    def __init__(self) -> None:
        self.problems: list[RequestProblem] = []

    def add(self, rule: str, pointer: str, message: str, severity: str | None = None) -> None:
        self.problems.append(RequestProblem(rule, pointer, message, severity))

