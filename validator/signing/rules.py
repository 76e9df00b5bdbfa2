"""The signature rules' metadata (ids, codes, statuses, explanations), free of cryptography so that
the rule catalogue loads without it; the verifier that produces these findings is in verifier.py."""
from __future__ import annotations

from typing import Any

from ..findings import ERROR, WARNING
from ..records import record

# The profile's signed headers, each "when available", in this order (signing.md, Profile).
PROFILE_SIGNED_HEADERS = ("date", "digest", "x-request-id", "psu-id", "psu-corporate-id", "tpp-redirect-uri")

REF_SIGNING = "Authentication › Request signing (all operations)"
REF_HEADERS = "Endpoints › Header parameters"


@record
class SignatureRule:
    id: str
    name: str
    summary: str
    code: str
    status: int
    severity: str = ERROR
    ref: str = REF_SIGNING

    def as_dict(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "summary": self.summary, "code": self.code,
                "status": self.status, "severity": self.severity, "ref": self.ref}


def _rules(*rules: SignatureRule) -> dict[str, SignatureRule]:
    return {r.id: r for r in rules}


SIGNATURE_RULES: dict[str, SignatureRule] = _rules(
    SignatureRule("signature-missing", "Signature header absent",
                  "Every operation requires a Signature header (draft-cavage-http-signatures-10 with the payment "
                  "profile). A request without it cannot be attributed to the TPP and is refused with 401 "
                  "SIGNATURE_MISSING (decision A8).", "SIGNATURE_MISSING", 401),
    SignatureRule("signature-malformed", "Signature parameters malformed",
                  "The Signature value (after RFC 2047 unwrapping) must carry the parameters keyId, algorithm "
                  "(optional), headers and signature, each once, as quoted strings (a parameter it does not "
                  "recognise is ignored: cavage-10 section 2.1); headers must be a non-empty "
                  "list of distinct names; keyId must read SN=<hex>,CA=<DN>; signature must be Base64. Anything "
                  "else is refused as 401 SIGNATURE_INVALID.", "SIGNATURE_INVALID", 401),
    SignatureRule("signature-algorithm", "Signature algorithm not allowed",
                  "The algorithm parameter must be rsa-sha256 (or hs2019 where the profile allows it, with an RSA "
                  "key). hmac-*, rsa-sha1 and unknown names are refused; the verifier never lets the message choose "
                  "the algorithm.", "SIGNATURE_INVALID", 401),
    SignatureRule("signature-headers-incomplete", "Profile header present but not signed",
                  "headers must list date, digest, x-request-id, psu-id, psu-corporate-id and tpp-redirect-uri, "
                  "each when the request carries it. A present header missing from the list could be altered "
                  "without breaking the signature, so the request is refused with 401 SIGNATURE_INVALID.",
                  "SIGNATURE_INVALID", 401),
    SignatureRule("signature-invalid", "Signature does not verify",
                  "The signature must be the RSA PKCS#1 v1.5 SHA-256 signature, by the key of "
                  "TPP-Signature-Certificate, over the signing string built from the listed headers; it must be as "
                  "long as the key's modulus, and every listed header must be present. Otherwise 401 "
                  "SIGNATURE_INVALID.", "SIGNATURE_INVALID", 401),
    SignatureRule("signature-keyid-mismatch", "keyId does not name the certificate",
                  "keyId must carry the serial number (hex) and issuer DN of the certificate in "
                  "TPP-Signature-Certificate. The serial is compared as an integer and the DN attribute by "
                  "attribute; a mismatch is 401 SIGNATURE_INVALID.", "SIGNATURE_INVALID", 401),
    SignatureRule("signature-header-injection", "CR/LF in a signed header value",
                  "A signed header value containing CR, LF or NUL could forge extra lines of the signing string; "
                  "such a request is refused with 401 SIGNATURE_INVALID.", "SIGNATURE_INVALID", 401),
    SignatureRule("signature-date-window", "Date outside the accepted window",
                  "When a clock is given, the signed Date header must lie within the configured window (default "
                  "5 minutes) of it; an older or future Date allows replay and is refused with 401 "
                  "SIGNATURE_INVALID.", "SIGNATURE_INVALID", 401),
    SignatureRule("date-malformed", "Date header not an IMF-fixdate",
                  "The Date header must be an IMF-fixdate such as 'Tue, 01 Jul 2025 12:00:00 GMT' so the window "
                  "and the certificate validity can be checked; otherwise 400 FORMAT_ERROR.",
                  "FORMAT_ERROR", 400),
    SignatureRule("certificate-missing", "TPP-Signature-Certificate absent",
                  "Every operation requires TPP-Signature-Certificate, the Base64 DER signing certificate. Without "
                  "it the signature cannot be checked: 401 CERTIFICATE_INVALID.", "CERTIFICATE_INVALID", 401),
    SignatureRule("certificate-invalid", "TPP-Signature-Certificate unparseable",
                  "TPP-Signature-Certificate must be Base64 of one DER X.509 certificate (PEM armour and whitespace "
                  "are tolerated). Otherwise 401 CERTIFICATE_INVALID.", "CERTIFICATE_INVALID", 401),
    SignatureRule("certificate-key-weak", "Certificate key not RSA >= 2048 bits",
                  "The profile signs with rsa-sha256, so the certificate key must be RSA with a modulus of at least "
                  "2048 bits. EC, EdDSA, DSA or shorter RSA keys are refused with 401 CERTIFICATE_INVALID.",
                  "CERTIFICATE_INVALID", 401),
    SignatureRule("certificate-expired", "Certificate expired",
                  "The certificate's validity period must contain the request time (the clock given, else the "
                  "Date header, else now). An expired certificate is refused with 401 CERTIFICATE_EXPIRED.",
                  "CERTIFICATE_EXPIRED", 401),
    SignatureRule("certificate-not-yet-valid", "Certificate not yet valid",
                  "The certificate's validity period must contain the request time (the clock given, else the "
                  "Date header, else now). A certificate whose notBefore lies after it is refused with 401 "
                  "CERTIFICATE_EXPIRED.", "CERTIFICATE_EXPIRED", 401),
    SignatureRule("digest-missing", "Digest absent",
                  "The header table requires Digest on operations with a body (SEPA credit transfer, bulk payment, "
                  "sandbox card transaction creation). Its absence is 400 FORMAT_ERROR (decision A8).",
                  "FORMAT_ERROR", 400, ref=REF_HEADERS),
    SignatureRule("digest-malformed", "Digest malformed",
                  "Digest must be a comma-separated list of <algorithm>=<Base64 digest> entries (RFC 3230), each "
                  "algorithm once and each value of the algorithm's length. Otherwise 400 FORMAT_ERROR.",
                  "FORMAT_ERROR", 400),
    SignatureRule("digest-algorithm", "Digest algorithm not accepted",
                  "Digest must contain SHA-256 or SHA-512. MD5 or SHA (SHA-1) alone is refused with 400 "
                  "FORMAT_ERROR.", "FORMAT_ERROR", 400),
    SignatureRule("digest-mismatch", "Digest does not match the body",
                  "Every SHA-256/SHA-512 (and any accompanying MD5/SHA) entry of Digest must equal the hash of the "
                  "exact body bytes; an empty body hashes the empty input. A mismatch is 400 FORMAT_ERROR.",
                  "FORMAT_ERROR", 400),
    SignatureRule("digest-unverifiable", "Digest not checked against the body",
                  "The body bytes were not available, so the Digest could only be checked for syntax; the "
                  "signature over the Digest header was still verified.", "FORMAT_ERROR", 400, severity=WARNING),
    SignatureRule("header-oversized", "Header value longer than the validator reads",
                  "The document states no length limit for a header value (A33): a value longer than the "
                  "validator reads (default 8192 characters) is reported as a warning and not read further. A "
                  "server may take the request or refuse it with 400, 413 or 431 (RFC 9110 section 5.4), never a "
                  "5xx. Signature, TPP-Signature-Certificate, Digest, Date or a signed header that long cannot be "
                  "verified and is refused under its own rule (A8).", "FORMAT_ERROR", 400, severity=WARNING,
                  ref=REF_HEADERS),
)
