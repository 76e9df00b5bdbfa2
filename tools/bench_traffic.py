"""Benchmark `obvalidate traffic`: exchanges judged per second on a generated HAR of distinct entries, side by side
with baselines on the same file in the same run.

The HAR (default 100,000 entries) is a TPP's traffic as the reference sandbox answers it: SEPA payments created and
their status read, each request signed on its own (its own X-Request-ID, amount, remittance text, Date, Digest and
Signature; no entry repeated), the answers the sandbox's own for that request (the shapes recorded from it once,
with each payment's own id), one entry every 10 ms. It is generated once and kept (``--har``).

Each round runs, in alternating order (paired), as separate processes:

- ``json.load``: the whole file parsed by the standard library (no judging; the floor of reading it at all, and what a
  reader that holds the file needs in memory);
- ``read``: the file streamed by :class:`conformance.traffic.har.Recording` (both passes), nothing judged;
- ``traffic``: ``obvalidate traffic FILE --format json -o /dev/null -q`` (the command, start-up included).

and prints per workload the entries per second (median and min-max over the rounds) and each process's peak RSS.

    python tools/bench_traffic.py [--entries 100000] [--rounds 3] [--har PATH]
"""
from __future__ import annotations

import argparse
import datetime as _dt
import multiprocessing
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
START = _dt.datetime(2026, 7, 1, 8, 30, tzinfo=_dt.timezone.utc)
STEP = _dt.timedelta(milliseconds=10)
ORIGIN = "http://testserver"
SEPA = {"payment-service": "payments", "payment-product": "sepa-credit-transfers"}

_worker: dict = {}


# ------------------------------------------------------------------ the recording
def _templates(identity) -> dict:
    """One create and one status read through the in-process sandbox: the answers' shapes, as recorded."""
    import warnings

    from conformance.client import SignedClient
    from conformance.sandbox import Sandbox, create_app
    from conformance.sandbox.clock import Clock

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from starlette.testclient import TestClient

        sandbox = Sandbox.create(clock=Clock(START.isoformat(), frozen=True))
        http = TestClient(create_app(sandbox), base_url=ORIGIN, follow_redirects=False)
    del http.headers["user-agent"]
    client = SignedClient(ORIGIN, identity, clock=sandbox.clock.now, http=http)
    created = client.call("createSepaCreditTransfer", body=_sepa_body(0))
    pid = created.json()["paymentId"]
    read = client.call("getPaymentStatus", path={**SEPA, "paymentId": pid})
    assert created.status_code == 201 and read.status_code == 200, (created.text, read.text)

    def answer(response) -> dict:
        return {"status": response.status_code, "headers": [(n.decode("latin-1"), v.decode("latin-1"))
                                                             for n, v in response.headers.raw],
                "body": response.content.decode("utf-8")}

    return {"pid": pid, "created": answer(created), "read": answer(read)}


def _sepa_body(i: int) -> dict:
    """A SEPA payment from the sandbox's EUR account (its fixed test data), amount and text its own."""
    from conformance.gate.suites import data
    from conformance.sandbox import testdata

    return data.sepa_body(f"{1 + i % 9999}.{i % 100:02d}", debtor=testdata.EUR_ACCOUNT,
                          creditor="DE89370400440532013000", text=f"Faktura {i}")


def _init(key_pem: bytes, cert_pem: bytes, templates: dict) -> None:
    from conformance.client import Identity, SignedClient
    from validator.request import load_signing_identity

    identity = Identity(*load_signing_identity(key_pem, cert_pem))
    _worker["now"] = [START]
    _worker["client"] = SignedClient(ORIGIN, identity, clock=lambda: _worker["now"][0])
    _worker["templates"] = templates


def _entries(chunk: range) -> str:
    """The HAR entries of pairs ``chunk`` (a create and its status read each), as JSON text."""
    from conformance.exchange import RecordedAnswer, RecordedRequest
    from conformance.traffic.har import _dumps, entry

    client, templates = _worker["client"], _worker["templates"]
    texts = []
    for i in chunk:
        pid = f"enc!!bench{i:010d}"
        for n, (operation, options, shape) in enumerate((
                ("createSepaCreditTransfer", {"body": _sepa_body(i)}, templates["created"]),
                ("getPaymentStatus", {"path": {**SEPA, "paymentId": pid}}, templates["read"]))):
            at = START + (2 * i + n) * STEP
            _worker["now"][0] = at
            prepared = client.prepare(operation, **options)
            request = RecordedRequest(prepared.method, prepared.target, tuple(prepared.headers), prepared.body, at,
                                      ORIGIN)
            body = shape["body"].replace(templates["pid"], pid).encode("utf-8")
            headers = tuple((k, str(len(body)) if k.lower() == "content-length" else v) for k, v in shape["headers"])
            texts.append(_dumps(entry(request, RecordedAnswer(shape["status"], headers, body), time_ms=2.0)))
    return ",\n".join(texts)


def generate(path: Path, entries: int, jobs: int = 2) -> None:
    from cryptography.hazmat.primitives import serialization

    from conformance.client import Identity

    identity = Identity.generate("PSDNO-FSA-BENCH")
    key_pem = identity.key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                         serialization.NoEncryption())
    cert_pem = identity.certificate.public_bytes(serialization.Encoding.PEM)
    templates = _templates(identity)
    pairs = entries // 2
    chunks = [range(start, min(start + 500, pairs)) for start in range(0, pairs, 500)]
    partial = path.with_suffix(".partial")
    started = time.perf_counter()
    with open(partial, "w", encoding="utf-8") as out, multiprocessing.get_context("fork").Pool(
            jobs, initializer=_init, initargs=(key_pem, cert_pem, templates)) as pool:
        out.write('{"log":{"version":"1.2","creator":{"name":"tools/bench_traffic.py","version":"1"},"entries":[\n')
        for n, text in enumerate(pool.imap(_entries, chunks)):
            out.write(("" if n == 0 else ",\n") + text)
        out.write("\n]}}\n")
    partial.replace(path)
    print(f"generated {path} ({pairs * 2:,} entries, {path.stat().st_size / 1e6:,.0f} MB) in "
          f"{time.perf_counter() - started:.0f} s", flush=True)


# ------------------------------------------------------------------ the workloads
# Each workload in a process of its own, which reports its peak resident set (VmHWM: this process's own high-water
# mark; ru_maxrss would carry the benchmark's own over the exec) on standard error as it exits.
WORKLOAD = """
import atexit, os, sys

def peak():
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                sys.stderr.write("VmHWM " + line.split()[1] + "\\n")

atexit.register(peak)
kind, path = sys.argv[1:3]
if kind == "json.load":
    import json
    with open(path, encoding="utf-8") as f:
        print(len(json.load(f)["log"]["entries"]))
elif kind == "read":
    from conformance.traffic.har import Recording
    recording = Recording(path)
    recording.scan()
    print(sum(1 for _ in recording))
else:
    from validator.cli import main
    sys.argv = ["obvalidate", "traffic", path, "--format", "json", "-o", os.devnull, "-q"]
    main()
"""
WORKLOADS = ("json.load", "read", "traffic")


def _measure(kind: str, har: Path) -> tuple[float, int]:
    """(seconds, peak RSS in bytes) of one workload's process."""
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", WORKLOAD, kind, str(har)], cwd=ROOT, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True)
    seconds = time.perf_counter() - started
    if done.returncode not in (0, 1):
        raise SystemExit(f"{kind} exited {done.returncode}: {done.stderr[-2000:]}")
    peak = [int(line.split()[1]) for line in done.stderr.splitlines() if line.startswith("VmHWM ")]
    return seconds, peak[-1] * 1024 if peak else 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--entries", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--har", type=Path, help="the generated HAR (kept; generated when missing)")
    args = parser.parse_args()
    har = args.har or Path(tempfile.gettempdir()) / f"obvalidate-bench-traffic-{args.entries}.har"
    if not har.exists():
        generate(har, args.entries)
    entries = sum(1 for _ in _entry_times(har))
    print(f"{har}: {entries:,} entries, {har.stat().st_size / 1e6:,.0f} MB; {args.rounds} rounds, os.cpu_count() "
          f"{os.cpu_count()}", flush=True)
    runs: dict[str, list[tuple[float, int]]] = {name: [] for name in WORKLOADS}
    for round_ in range(args.rounds):
        order = list(WORKLOADS)
        if round_ % 2:
            order.reverse()   # paired: neither workload always runs first
        for name in order:
            seconds, rss = _measure(name, har)
            runs[name].append((seconds, rss))
            print(f"  round {round_ + 1} {name}: {seconds:.1f} s, {entries / seconds:,.0f} entries/s, peak RSS "
                  f"{rss / 1e6:,.0f} MB", flush=True)
    print("workload      entries/s median (min-max)      peak RSS median")
    for name, measured in runs.items():
        rates = [entries / s for s, _rss in measured]
        print(f"{name:<12}  {statistics.median(rates):>10,.0f} ({min(rates):,.0f}-{max(rates):,.0f})"
              f"{'':>8}{statistics.median(r for _s, r in measured) / 1e6:,.0f} MB")
    ratios = [t / j for (t, _a), (j, _b) in zip(runs["traffic"], runs["json.load"])]
    print(f"traffic / json.load time per pair: median {statistics.median(ratios):.0f}x "
          f"({min(ratios):.0f}x-{max(ratios):.0f}x)")


def _entry_times(har: Path):
    import ijson

    with open(har, "rb") as raw:
        yield from ijson.items(raw, "log.entries.item.startedDateTime")


if __name__ == "__main__":
    main()
