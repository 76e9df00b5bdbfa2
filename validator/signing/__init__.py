"""Request signing of the interface (draft-cavage-http-signatures-10, Berlin Group / Norwegian profile):
a signer for tests and tools and a strict verifier that returns findings.

Names load lazily: the rule catalogue needs only the rules' metadata, and importing cryptography
would cost every CLI start ~40 ms.
"""
from __future__ import annotations

import importlib

_EXPORTS = {
    "SignableRequest": "cavage", "SignatureParams": "cavage", "build_signing_string": "cavage",
    "decode_rfc2047": "cavage", "parse_signature": "cavage",
    "compute_digest": "digest",
    "generate_test_identity": "keygen", "save_pem": "keygen", "test_vector_certificate": "keygen",
    "test_vector_key": "keygen",
    "sign_request": "signer",
    "PROFILE_SIGNED_HEADERS": "rules", "SIGNATURE_RULES": "rules", "SignatureRule": "rules",
    "VerifyOptions": "verifier", "verify_request": "verifier",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value
