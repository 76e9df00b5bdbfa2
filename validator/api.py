"""The public validator: payloads go to the payload engine (:mod:`validator.engine`), whole HTTP requests (kind
``request``: a JSON envelope or a raw ``.http`` file) to :mod:`validator.request.checker`, which is handed this
validator for the body. It sits above both, so neither the engine nor the request checks import the other's caller.

    >>> from validator import Validator
    >>> Validator().validate({"paymentIds": ["a"]}, "signing-basket").valid
    True
"""
from __future__ import annotations

import datetime as _dt
from pathlib import Path
from typing import Any

from .context import Context, Profile
from .engine import PayloadValidator
from .findings import Report
from .request.shape import REQUEST_KIND, looks_like_envelope, looks_like_http


class Validator(PayloadValidator):
    """Validation of payloads and whole requests with one spec, profile, context and clock; reuse it for many inputs.
    Without a kind, an envelope (method, path, headers) or bytes starting with a request line are a request."""

    def validate(self, payload: Any, kind: str | None = None, *, source: str = "<payload>") -> Report:
        # A request envelope of text only is within the limits of decoded values by its shape: checked without the
        # engine's walk over it (the request check confirms the shape as it parses the headers).
        if (kind == REQUEST_KIND or (kind is None and looks_like_envelope(payload))) and type(payload) is dict:
            report = _text_envelope_check()(self, payload, source=source)
            if report is not None:
                report.detected = kind is None
                return report
        return super().validate(payload, kind, source=source)

    # validate / validate_bytes are the engine's (limits of decoded values, never an exception); these are the
    # steps they take once an input is within the limits.
    def _validate(self, payload: Any, kind: str | None, source: str) -> Report:
        if kind == REQUEST_KIND or (kind is None and looks_like_envelope(payload)):
            from .request.checker import check_request  # lazily: cryptography is not on the payload path

            report = check_request(self, payload, source=source)
            report.detected = kind is None
            return report
        return PayloadValidator._validate(self, payload, kind, source)  # named, not super(): once per input

    def _validate_bytes(self, data: bytes, kind: str | None, source: str) -> Report:
        # A JSON object's text cannot start a request line ("{" is no token character): tested first, as a
        # batch's every line would otherwise run the request-line pattern
        if kind == REQUEST_KIND or (kind is None and data[:1] != b"{" and looks_like_http(data)):
            from .request.checker import check_request_bytes

            report = check_request_bytes(self, data, source=source)
            report.detected = kind is None
            return report
        report = PayloadValidator._validate_bytes(self, data, kind, source)  # a JSON envelope comes back through _validate
        if report.kind == REQUEST_KIND:  # ... and its body's findings are placed in this file
            from .request.checker import place_body_findings

            report.findings[:] = place_body_findings(report.findings, data)
        return report

    def _stream_kind(self, top: dict, kind: str | None) -> str | None:
        if kind is None and looks_like_envelope(top):  # a request envelope's body is checked by the request checks
            return None
        return super()._stream_kind(top, kind)

    def _known_kind(self, kind: str | None) -> None:
        if kind is not None and kind != REQUEST_KIND:  # None (detected) first: once per input
            PayloadValidator._known_kind(self, kind)

    def validate_path(self, path: str | Path, kind: str | None = None) -> list[Report]:
        """A JSON file gives one report, a .jsonl file one report per non-blank line, a .http file a request's."""
        if kind is None and Path(path).suffix == ".http":
            kind = REQUEST_KIND
        return super().validate_path(path, kind)


def _text_envelope_check():
    """:func:`validator.request.checker.check_text_envelope`, imported on first use (cryptography is not on the payload
    path) and kept: an import statement in a function costs a lookup through the import system on every call."""
    global _TEXT_ENVELOPE_CHECK
    if _TEXT_ENVELOPE_CHECK is None:
        from .request.checker import check_text_envelope

        _TEXT_ENVELOPE_CHECK = check_text_envelope
    return _TEXT_ENVELOPE_CHECK


_TEXT_ENVELOPE_CHECK = None


# ---- module-level conveniences ----
def validate(
    payload: Any,
    kind: str | None = None,
    *,
    context: Context | dict | None = None,
    profile: Profile | dict | None = None,
    today: _dt.date | str | None = None,
    source: str = "<payload>",
) -> Report:
    """Validate one decoded JSON payload as ``kind`` (detected from its shape when None)."""
    return _validator(context, profile, today).validate(payload, kind, source=source)


def validate_bytes(data: bytes, kind: str | None = None, *, context=None, profile=None, today=None, source: str = "<bytes>") -> Report:
    return _validator(context, profile, today).validate_bytes(data, kind, source=source)


def validate_file(path: str | Path, kind: str | None = None, *, context=None, profile=None, today=None) -> list[Report]:
    return _validator(context, profile, today).validate_path(path, kind)


def _validator(context, profile, today) -> Validator:
    if isinstance(context, dict):
        context = Context.from_mapping(context)
    if isinstance(profile, dict):
        profile = Profile.from_mapping(profile)
    return Validator(context=context, profile=profile, today=today)
