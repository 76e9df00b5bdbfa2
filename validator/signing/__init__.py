"""Request signing of the interface (draft-cavage-http-signatures-10, Berlin Group / Norwegian profile):
a signer for tests and tools and a strict verifier that returns findings.
"""
from .cavage import SignableRequest, SignatureParams, build_signing_string, decode_rfc2047, parse_signature
from .digest import compute_digest
from .keygen import generate_test_identity, save_pem, test_vector_certificate, test_vector_key
from .signer import PROFILE_SIGNED_HEADERS, sign_request
from .verifier import SIGNATURE_RULES, SignatureRule, VerifyOptions, verify_request

__all__ = [
    "SignableRequest", "SignatureParams", "build_signing_string", "decode_rfc2047", "parse_signature",
    "compute_digest", "generate_test_identity", "save_pem", "test_vector_certificate", "test_vector_key",
    "PROFILE_SIGNED_HEADERS", "sign_request", "SIGNATURE_RULES", "SignatureRule", "VerifyOptions",
    "verify_request",
]
