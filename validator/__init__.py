"""obvalidate's validator: the spec loader, JSON Schema + semantic rules, findings and formats.

    >>> from validator import validate
    >>> report = validate({"paymentIds": ["a"]}, "signing-basket")
    >>> report.valid
    True
"""
from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__", "validate", "validate_bytes", "validate_file", "Validator", "Report", "Finding", "load_spec"]


def __getattr__(name: str):
    # Lazy: `obvalidate --version` and the CLI's cold start should not pay for every import.
    if name in ("validate", "validate_bytes", "validate_file", "Validator"):
        from . import api

        return getattr(api, name)
    if name in ("Report", "Finding"):
        from . import findings

        return getattr(findings, name)
    if name == "load_spec":
        from .spec import load_spec

        return load_spec
    raise AttributeError(name)
