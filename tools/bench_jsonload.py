"""Benchmark validator.jsonload.load_json_bytes against plain json.loads.

Builds a bulk-payment-like document with 10,000 entries (about 3 MB) and prints the
best-of-N times and their ratio. Run: python tools/bench_jsonload.py [--entries N]
"""
from __future__ import annotations

import argparse
import json
import random
import time

from validator.jsonload import load_json_bytes


def bulk_payment(entries: int, seed: int = 1, floats: bool = False) -> dict:
    rnd = random.Random(seed)
    payments = []
    for i in range(entries):
        payment = {
            "instructedAmount": {"amount": f"{rnd.randint(1, 99999)}.{rnd.randint(0, 99):02d}", "currency": "NOK"},
            "creditorName": f"Kreditor {i} AS [avd. {i % 7}] \"Nord\"",
            "creditorAccount": {"bban": f"{rnd.randint(10**10, 10**11 - 1)}", "currency": "NOK"},
            "creditorAddress": {"city": "Tromsø", "country": "NO"},
            "endToEndIdentification": f"{rnd.getrandbits(128):032x}",
            "remittanceInformationStructuredArray": [{"reference": str(rnd.randint(10**10, 10**12)), "referenceType": "SCOR"}],
            "sequence": i,
        }
        if floats:
            payment["scores"] = [rnd.random() * 1000 for _ in range(5)]
        payments.append(payment)
    return {"paymentInformationId": "bulk-1", "debtorAccount": {"bban": "12345678903", "currency": "NOK"},
            "payments": payments}


def best_of(func, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        func()
        best = min(best, time.perf_counter() - start)
    return best


def run(entries: int, repeat: int, floats: bool) -> float:
    data = json.dumps(bulk_payment(entries, floats=floats), separators=(",", ":")).encode()
    assert load_json_bytes(data).problems == []
    plain = best_of(lambda: json.loads(data), repeat)
    strict = best_of(lambda: load_json_bytes(data), repeat)
    label = "with 5 floats per entry" if floats else "amounts as strings"
    print(f"{entries} entries, {len(data) / 1e6:.2f} MB ({label}): json.loads {plain * 1000:.1f} ms, "
          f"load_json_bytes {strict * 1000:.1f} ms, ratio {strict / plain:.2f}x")
    return strict / plain


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--entries", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
    run(args.entries, args.repeat, floats=False)
    run(args.entries, args.repeat, floats=True)


if __name__ == "__main__":
    main()
