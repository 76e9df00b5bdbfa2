"""Benchmark: exchanges judged per second in process -- a signed SEPA creation (distinct, each signed anew) and its 201
answer through :class:`conformance.exchange.ExchangeJudge` (client findings, the prediction, the answer's status,
content type, response kind, links and the session's lifecycle state) -- paired with the bare whole-request check of
the validator over the same requests (what the judge adds is the answer and the state). Runs alternate; the note
gives the median and the spread of each side and of the per-pair ratio, by the process's CPU time (a shared machine's
wall clock counts the other processes' turns) and by the wall clock.

    python tools/bench_exchange.py [--requests 2000] [--runs 5]
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import statistics
import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from conformance.client import Identity, SignedClient  # noqa: E402
from conformance.exchange import ExchangeJudge, RecordedAnswer, RecordedRequest  # noqa: E402
from conformance.exchange.oracle import Oracle  # noqa: E402
from validator.context import DEFAULT_PROFILE  # noqa: E402
from validator.spec import load_spec  # noqa: E402

AT = dt.datetime(2026, 7, 1, 8, 30, tzinfo=dt.timezone.utc)


def exchanges(count: int) -> list[tuple[RecordedRequest, RecordedAnswer]]:
    """``count`` distinct signed SEPA creations (amount, creditor name and X-Request-ID vary) and the sandbox's
    201 answer for each (its own paymentId and links)."""
    spec = load_spec()
    client = SignedClient("http://bank.example", Identity.generate("PSDNO-FSA-BENCH"), spec=spec, clock=lambda: AT)
    out = []
    for i in range(count):
        body = {"instructedAmount": {"amount": f"{100 + i}.{i % 100:02d}", "currency": "EUR"},
                "creditorName": f"Ingrid Hansen {i}", "creditorAccount": {"iban": "DE89370400440532013000", "currency": "EUR"},
                "debtorAccount": {"iban": "NO9386011117947", "currency": "EUR"},
                "remittanceInformationUnstructured": f"Faktura {i}", "requestedExecutionDate": "2026-08-01"}
        sent = client.prepare("createSepaCreditTransfer", body=body, headers={"X-Request-ID": str(uuid.uuid4())})
        pid = f"enc!!bench-{i:06d}"
        base = f"/v1/payments/sepa-credit-transfers/{pid}"
        answer = {"paymentId": pid, "transactionStatus": "RCVD",
                  "_links": {"self": {"href": base, "verbs": ["GET", "DELETE"]},
                             "status": {"href": base + "/status", "verbs": ["GET"]},
                             "startAuthorisation": {"href": base + "/authorisations", "verbs": ["POST"]}}}
        out.append((RecordedRequest(sent.method, sent.target, tuple(sent.headers), sent.body, AT),
                    RecordedAnswer(201, (("Content-Type", "application/json"),), json.dumps(answer).encode())))
    client.close()
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args(argv)
    recorded = exchanges(args.requests)
    spec = load_spec()
    oracle = Oracle(spec, DEFAULT_PROFILE)
    judge = ExchangeJudge(spec)
    first = [judge.judge(q, a) for q, a in recorded[:50]]
    assert all(j.findings == () and j.predicted == (201, None) for j in first), first[0]

    def bare() -> tuple[float, float]:
        started, cpu = time.perf_counter(), time.process_time()
        for request, _answer in recorded:
            oracle.findings(request, at=request.at)
        return time.perf_counter() - started, time.process_time() - cpu

    def judged() -> tuple[float, float]:
        fresh = ExchangeJudge(spec)   # a new session: the state grows with the run, as a proxy's does
        fresh.judge(*recorded[0])     # its validator's compiled kinds warm, as after a proxy's first exchange
        fresh.lifecycle.resources.clear()
        fresh.lifecycle.request_ids.clear()
        started, cpu = time.perf_counter(), time.process_time()
        for request, answer in recorded:
            fresh.judge(request, answer)
        return time.perf_counter() - started, time.process_time() - cpu

    bare(), judged()  # warm caches (the spec's plans, the certificate)
    pairs = []
    for i in range(args.runs):
        first, second = (bare, judged) if i % 2 == 0 else (judged, bare)
        a, b = first(), second()
        pairs.append((a, b) if first is bare else (b, a))
    print(f"{args.requests} distinct signed SEPA creations with their 201 answers, {args.runs} paired runs")
    for clock, k in (("CPU time", 1), ("wall clock", 0)):
        bare_rates = [args.requests / p[0][k] for p in pairs]
        judge_rates = [args.requests / p[1][k] for p in pairs]
        ratios = [p[1][k] / p[0][k] for p in pairs]
        print(f"  by {clock}: validator request check median {statistics.median(bare_rates):,.0f}/s "
              f"({min(bare_rates):,.0f}-{max(bare_rates):,.0f}); exchange judged median "
              f"{statistics.median(judge_rates):,.0f}/s ({min(judge_rates):,.0f}-{max(judge_rates):,.0f}); "
              f"the judge {statistics.median(ratios):.2f}x the request check ({min(ratios):.2f}-{max(ratios):.2f})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
