"""The ``request`` kind: a whole HTTP request checked against the operation it addresses, and the TPP side that
builds and signs requests. Modules by layer, highest first (a module imports only from layers below its own; the
import-linter contract ``request-layers`` in pyproject.toml):

* :mod:`.examples` -- the rule catalogue's signed whole-request examples.
* :mod:`.checker` -- the whole-request check: parse, resolve, headers, query, the body through the payload engine
  it is handed, and the signature verifier. :mod:`.sign` -- signing a request as a TPP must, ``keygen``.
* :mod:`.build` -- an envelope for an operation from the spec. :mod:`.headers`, :mod:`.query` -- the header and
  query checks. :mod:`.resolve` -- the operation a method + path addresses (profile path overrides applied).
* :mod:`.parameters` -- the schemas of header, query and path parameters. :mod:`.parse` -- JSON envelopes and raw
  ``.http`` bytes into an :class:`HttpRequest`, never raising.
* :mod:`.message` -- the request model (:class:`HttpRequest`), problems, finding pointers. :mod:`.shape` --
  recognising a request input (envelope or ``.http``) without importing the rest.

The package never imports :mod:`validator.engine`, nor does the engine import it: :mod:`validator.api`, above
both, routes kind ``request`` to :mod:`.checker` and hands it the payload engine. Names load lazily (the CLI's cold start, cryptography).
"""
from __future__ import annotations

import importlib

_EXPORTS = {
    "REQUEST_KIND": "shape", "looks_like_envelope": "shape", "looks_like_http": "shape",
    "HttpRequest": "message", "Parsed": "message", "RequestProblem": "message",
    "parse_envelope": "parse", "parse_http": "parse",
    "Resolution": "resolve", "resolve_operation": "resolve", "resolve_path": "resolve",
    "creation_operation": "resolve",
    "REQUEST_KIND_DESCRIPTION": "checker", "check_request": "checker", "check_request_bytes": "checker",
    "request_findings": "checker",
    "body_text": "build", "build_request": "build", "sample_value": "build",
    "RequestError": "sign", "keygen": "sign", "load_signing_identity": "sign", "serialize_http": "sign",
    "sign_envelope": "sign",
    "example_identity": "examples", "example_now": "examples", "materialize_example": "examples",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value
