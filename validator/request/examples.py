"""The rule catalogue's whole-request examples: a recipe ``{"x-example": {...}}`` (see
:func:`materialize_example`) built from the spec and signed with the signing reference's deterministic test-vector
identity at 10:00 UTC on the spec's ``x-example-today``, so every example is reproducible and no private key is
kept in the repository."""
from __future__ import annotations

import datetime as _dt
import functools
import json
import re
from typing import Any

from ..rules import REMOVE
from ..rules.examples import set_pointer, spec_example
from ..spec import Spec
from .build import FIRST_EXAMPLE, build_request, first_body_example
from .sign import sign_envelope

EXAMPLE_KEY = "x-example"  # catalogue examples only: a recipe materialize_example turns into a signed envelope


def example_now(spec: Spec) -> _dt.datetime:
    """The clock of the catalogue's request examples: 10:00 UTC on the spec's x-example-today."""
    day = _dt.date.fromisoformat(spec.example_today)
    return _dt.datetime.combine(day, _dt.time(10, 0), tzinfo=_dt.timezone.utc)


@functools.lru_cache(maxsize=4)
def example_identity(which: str = "test-vector"):
    """``(key, certificate)`` for the catalogue's signed examples.

    The signing reference's deterministic test vector (key derived from SHAKE256, never stored; certificate valid
    2025-01-01..2030-01-01, covering the spec's x-example-today). ``expired`` and ``not-yet-valid`` re-certify the
    same key for 2020 and 2031, so the examples are reproducible and no private key is kept in the repository.
    """
    from cryptography import x509
    from ..signing import test_vector_certificate, test_vector_key
    from ..signing.keygen import build_self_signed

    key = test_vector_key()
    if which == "test-vector":
        return key, test_vector_certificate()
    windows = {"expired": (2020, 2021), "not-yet-valid": (2031, 2032)}
    start, end = windows[which]
    name: x509.Name = test_vector_certificate().subject
    cert = build_self_signed(key, name, 0x0B0000 + start, _dt.datetime(start, 1, 1, tzinfo=_dt.timezone.utc),
                             _dt.datetime(end, 1, 1, tzinfo=_dt.timezone.utc))
    return key, cert


@functools.lru_cache(maxsize=1)
def _ec_certificate_value() -> str:
    """A certificate with a P-256 key (deterministic key, for the certificate-key-weak example)."""
    from cryptography.hazmat.primitives.asymmetric import ec
    from ..signing import test_vector_certificate
    from ..signing.certificate import certificate_header_value
    from ..signing.keygen import build_self_signed

    key = ec.derive_private_key(0x5EC0DE, ec.SECP256R1())
    cert = build_self_signed(key, test_vector_certificate().subject, 0x0A1B2C3D4E5F60718293,
                             _dt.datetime(2025, 1, 1, tzinfo=_dt.timezone.utc), _dt.datetime(2030, 1, 1, tzinfo=_dt.timezone.utc))
    return certificate_header_value(cert)


_TOKENS = {"@ec-certificate": _ec_certificate_value}


def _patch(envelope: dict, pointer: str, value: Any) -> None:
    """Set (None: remove) ``/method``, ``/path``, ``/body`` or ``/headers/<Name>`` of an envelope."""
    tokens = [t.replace("~1", "/").replace("~0", "~") for t in pointer.split("/")[1:]]
    parent: Any = envelope
    for t in tokens[:-1]:
        parent = parent[t]
    last = tokens[-1]
    if isinstance(value, str) and value in _TOKENS:
        value = _TOKENS[value]()
    elif isinstance(value, str) and value.startswith("@algorithm:"):  # rewrite the signed Signature's algorithm
        value = re.sub(r'algorithm="[^"]*"', f'algorithm="{value.split(":", 1)[1]}"', parent[last])
    elif isinstance(value, str) and value.startswith("@keyid-serial:"):  # ... or its keyId serial
        value = re.sub(r'keyId="SN=[^,]*', f'keyId="SN={value.split(":", 1)[1]}', parent[last])
    if value is None:
        parent.pop(last, None)
    else:
        parent[last] = value


def materialize_example(document: Any, spec: Spec) -> Any:
    """Turn a catalogue example recipe ``{"x-example": {...}}`` into the (signed) envelope it stands for.

    Recipe members: ``operation`` (operationId), ``body`` (spec example label, a JSON value, null; default the
    operation's first example), ``body-patch`` ([[pointer, value]] on the body value), ``query`` (object),
    ``path-values`` (object), ``set`` ([[envelope pointer, value or null]] before signing), ``sign`` (default
    true), ``identity`` (test-vector | expired | not-yet-valid), ``signed-headers`` (list), ``after`` (patches after
    signing), ``body-as-value`` (give the body as a JSON value instead of exact text). Other documents pass through.
    """
    if not isinstance(document, dict) or EXAMPLE_KEY not in document:
        return document
    recipe = document[EXAMPLE_KEY]
    body: Any = FIRST_EXAMPLE
    if "body" in recipe:
        body = recipe["body"]
        if isinstance(body, str):
            body = spec_example(spec, body)
    op = spec.operation(recipe["operation"])
    if body is FIRST_EXAMPLE:
        body = first_body_example(spec, op) if op.request_schema_ref else None
    for pointer, value in recipe.get("body-patch", ()):
        body = set_pointer(body, pointer, REMOVE if value is None else value)
    envelope = build_request(spec, recipe["operation"], path_values=recipe.get("path-values"),
                             query=recipe.get("query"), body=body)
    for pointer, value in recipe.get("set", ()):
        _patch(envelope, pointer, value)
    if recipe.get("sign", True):
        key, cert = example_identity(recipe.get("identity", "test-vector"))
        envelope = sign_envelope(envelope, key, cert, now=example_now(spec), spec=spec, headers=recipe.get("signed-headers"))
    for pointer, value in recipe.get("after", ()):
        _patch(envelope, pointer, value)
    if recipe.get("body-as-value") and isinstance(envelope.get("body"), str):
        envelope["body"] = json.loads(envelope["body"])
    return envelope

