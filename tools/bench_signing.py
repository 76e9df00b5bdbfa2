"""Benchmark: median time of verify_request for one signed request (RSA-2048, ~1 KB body) next to the raw
RSA PKCS#1 v1.5 SHA-256 verification it contains.

    python tools/bench_signing.py [--runs 2000]
"""
from __future__ import annotations

import argparse
import base64
import datetime as dt
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from cryptography.hazmat.primitives import hashes  # noqa: E402
from cryptography.hazmat.primitives.asymmetric import padding  # noqa: E402

from validator.signing import (SignableRequest, VerifyOptions, build_signing_string,  # noqa: E402
                               generate_test_identity, parse_signature, sign_request, verify_request)
from validator.signing.cavage import header_index  # noqa: E402


def make_body(size: int = 1024) -> bytes:
    payments = []
    i = 0
    while len(json.dumps({"payments": payments}).encode()) < size:
        payments.append({"instructedAmount": {"currency": "NOK", "amount": f"{100 + i}.00"},
                         "creditorAccount": {"bban": "98765432106"}, "creditorName": f"Kari Nordmann {i}"})
        i += 1
    return json.dumps({"payments": payments}).encode()[:size]


def timed(fn, runs: int) -> list[float]:
    out = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=2000)
    args = parser.parse_args(argv)

    now = dt.datetime(2025, 7, 1, 12, 0, 30, tzinfo=dt.timezone.utc)
    key, cert = generate_test_identity(not_before=dt.datetime(2025, 1, 1, tzinfo=dt.timezone.utc),
                                       not_after=dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc))
    body = make_body()
    request = SignableRequest("POST", "/v1/bulk-payments/norwegian-domestic-credit-transfers", [
        ("Date", "Tue, 01 Jul 2025 12:00:00 GMT"), ("X-Request-ID", "99391c7e-ad88-49ec-a2ad-99ddcb1f7721"),
        ("PSU-ID", "c3a1b7d2-5b1f-4a7e-8a43-1f6c0e1d2b3a"), ("TPP-Redirect-URI", "https://tpp.example.com/cb?state=1"),
        ("PSU-IP-Address", "192.0.2.10"), ("Content-Type", "application/json")], body)
    signed = sign_request(request, key, cert)
    options = VerifyOptions(now=now)
    if verify_request(signed, options):
        print("the benchmark request does not verify", file=sys.stderr)
        return 1

    params = parse_signature(dict(signed.headers)["Signature"])
    message = build_signing_string(signed.method, signed.target, params.headers,
                                   header_index(signed.headers)).encode()
    signature = base64.b64decode(params.signature)
    public_key = cert.public_key()

    # Warm up both paths (the certificate parse cache included), then alternate to share the machine's noise.
    for _ in range(50):
        verify_request(signed, options)
        public_key.verify(signature, message, padding.PKCS1v15(), hashes.SHA256())
    full = timed(lambda: verify_request(signed, options), args.runs)
    raw = timed(lambda: public_key.verify(signature, message, padding.PKCS1v15(), hashes.SHA256()), args.runs)
    med_full, med_raw = statistics.median(full), statistics.median(raw)
    print(f"body {len(body)} bytes, RSA-{public_key.key_size}, {args.runs} runs each")
    print(f"verify_request     median {med_full * 1e6:8.1f} us")
    print(f"public_key.verify  median {med_raw * 1e6:8.1f} us")
    print(f"ratio              {med_full / med_raw:8.2f}x")
    whole_request(key, cert, max(200, args.runs // 4))
    return 0


def whole_request(key, cert, runs: int) -> None:
    """The same machine's cost of validating a whole signed request (kind "request": parse, resolve,
    headers, query, body rules, Digest, signature) next to verify_request alone."""
    from validator import Validator
    from validator.request.build import build_request
    from validator.request.sign import sign_envelope
    from cryptography.hazmat.primitives import serialization

    from validator.spec import load_spec

    spec = load_spec()
    now = dt.datetime(2025, 7, 1, 12, 0, 0, tzinfo=dt.timezone.utc)
    key_pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    cert_pem = cert.public_bytes(serialization.Encoding.PEM)
    envelope = sign_envelope(build_request(spec, "createBulkPayment"), key_pem, cert_pem, now=now)
    validator = Validator(spec=spec, now=now, today="2025-07-01")
    report = validator.validate(envelope, "request")
    if not report.valid:
        print("the benchmark envelope is not valid:", [f.as_dict() for f in report.errors][:3], file=sys.stderr)
        return
    for _ in range(20):
        validator.validate(envelope, "request")
    whole = statistics.median(timed(lambda: validator.validate(envelope, "request"), runs))
    print(f"whole signed request (createBulkPayment envelope, {len(envelope['body'])} body bytes): median {whole * 1e6:8.1f} us")


if __name__ == "__main__":
    raise SystemExit(main())
