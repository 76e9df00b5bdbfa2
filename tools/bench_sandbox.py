"""Benchmark: signed creations per second on loopback against the reference sandbox as a real server process, with
16 concurrent clients, and the p50/p99 latency — next to baselines measured side by side on the same machine.

    python tools/bench_sandbox.py [--clients 16] [--per-client 150] [--rounds 3]

Three measurements, in paired alternating rounds (sandbox, bare, sandbox, bare, ...) so both share the noise:
- sandbox: ``obvalidate sandbox serve`` on a free 127.0.0.1 port with a file database (SQLite, WAL, synchronous
  FULL); every request checked by the validator (signature, Digest, headers, body rules), stored, answered 201.
- bare: the same clients sending the same signed creations to a Starlette endpoint on the same uvicorn that reads
  the body and answers a fixed 201 without checking or storing anything: the floor of this HTTP stack and client.
- signing alone: what one client spends to build and sign one creation (SignedClient.prepare), single-threaded,
  and the RSA-2048 PKCS#1 v1.5 signature inside it.
Throughput counts answered creations per wall-clock second of the whole load (signing included: each client signs
just before it sends); latency is the HTTP round trip of one request (signing excluded). The server's CPU time per
request comes from /proc, the clients' (all client processes) from process_time. Every creation is distinct (the remittance names client, index and round). Bounded: each
round is at most --timeout seconds.
"""
from __future__ import annotations

import argparse
import multiprocessing
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from conformance.client import Identity, SignedClient  # noqa: E402
from conformance.load import Load, sepa_creation  # noqa: E402
from conformance.server_process import SandboxProcess, ServerFailed  # noqa: E402

IDENTITY: Identity | None = None  # the TPP identity, inherited by the forked client processes

# The bare endpoint: the same uvicorn, one Starlette route that reads the body and answers 201.
BARE_APP = """
import sys, uvicorn
from starlette.applications import Starlette
from starlette.responses import Response
from starlette.routing import Route
BODY = b'{"transactionStatus":"RCVD","paymentId":"bare"}'
async def created(request):
    await request.body()
    return Response(BODY, status_code=201, media_type="application/json")
app = Starlette(routes=[Route("/v1/payments/{product}", created, methods=["POST"])])
uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
"""


class BareProcess(SandboxProcess):
    def command(self) -> list[str]:
        return [sys.executable, "-c", BARE_APP, str(self.port)]


def server_cpu_seconds(pid: int) -> float | None:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def client_share(url: str, clients: int, per_client: int, tag: str, first: int, timeout: float) -> tuple[list, float]:
    """One client process's part of a round: ``clients`` threads numbered from ``first``; (creations, CPU seconds)."""
    cpu = time.process_time()
    body = sepa_creation(tag)
    load = Load(url, IDENTITY, clients=clients, per_client=per_client, body=lambda c, i: body(first + c, i))
    load.start().join(timeout)
    if load.failures:
        raise RuntimeError(f"{tag}: {load.failures[0]}")
    return [(c.status, c.latency) for c in load.creations], time.process_time() - cpu


def one_round(server: SandboxProcess, pool, args, tag: str) -> dict:
    """One load of ``args.clients`` clients split over the pool's client processes."""
    cpu_before = server_cpu_seconds(server.process.pid)
    shares = [args.clients // args.processes + (n < args.clients % args.processes) for n in range(args.processes)]
    firsts = [sum(shares[:n]) for n in range(args.processes)]
    started = time.monotonic()
    parts = pool.starmap(client_share, [(server.url, share, args.per_client, tag, first, args.timeout)
                                        for share, first in zip(shares, firsts)])
    elapsed = time.monotonic() - started
    cpu_after = server_cpu_seconds(server.process.pid)
    answers = [answer for part, _cpu in parts for answer in part]
    statuses = {status for status, _latency in answers}
    if statuses != {201}:
        raise RuntimeError(f"{tag}: answers {sorted(statuses)}, not only 201")
    latencies = [latency for _status, latency in answers]
    return {"rate": len(answers) / elapsed, "p50": percentile(latencies, 0.50), "p99": percentile(latencies, 0.99),
            "client_cpu": sum(cpu for _part, cpu in parts) / len(answers),
            "server_cpu": None if cpu_before is None else (cpu_after - cpu_before) / len(answers)}


def signing_alone(identity: Identity, runs: int) -> tuple[float, float]:
    """Median seconds of SignedClient.prepare (build + Digest + RSA signature) and of the RSA signature alone."""
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import padding

    body = sepa_creation("signing")
    with SignedClient("http://127.0.0.1:9", identity) as client:
        for i in range(20):
            client.prepare("createSepaCreditTransfer", body=body(0, i))
        prepare = []
        for i in range(runs):
            t0 = time.perf_counter()
            client.prepare("createSepaCreditTransfer", body=body(1, i))
            prepare.append(time.perf_counter() - t0)
    message = b"date: Tue, 01 Jul 2025 12:00:00 GMT\ndigest: SHA-256=abc\nx-request-id: 1"
    rsa = []
    for _ in range(runs):
        t0 = time.perf_counter()
        identity.key.sign(message, padding.PKCS1v15(), hashes.SHA256())
        rsa.append(time.perf_counter() - t0)
    return statistics.median(prepare), statistics.median(rsa)


def spread(values: list[float], scale: float = 1.0) -> str:
    """Median (min-max) of the rounds."""
    return f"{statistics.median(values) * scale:.1f} ({min(values) * scale:.1f}-{max(values) * scale:.1f})"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--per-client", type=int, default=150, help="creations per client per round")
    parser.add_argument("--rounds", type=int, default=3, help="paired rounds (sandbox, then bare)")
    parser.add_argument("--processes", type=int, default=2,
                        help="client processes the clients (threads) are split over: one Python process's GIL would "
                             "make the clients, not the server, the limit")
    parser.add_argument("--timeout", type=float, default=300.0, help="bound of one round, seconds")
    args = parser.parse_args(argv)
    args.processes = max(1, min(args.processes, args.clients))

    global IDENTITY
    identity = IDENTITY = Identity.generate("PSDNO-FSA-BENCH")
    work = Path(tempfile.mkdtemp(prefix="bench-sandbox-"))
    results: dict[str, list[dict]] = {"sandbox": [], "bare": []}
    try:
        with SandboxProcess(work / "sandbox.db", log=work / "sandbox.log") as sandbox, \
                BareProcess(work / "unused.db", log=work / "bare.log") as bare, \
                multiprocessing.get_context("fork").Pool(args.processes) as pool:
            warm = argparse.Namespace(**{**vars(args), "per_client": 5})
            for server, name in ((sandbox, "sandbox"), (bare, "bare")):   # warm-up: connections, caches, imports
                one_round(server, pool, warm, f"warm-{name}")
            for n in range(args.rounds):
                for server, name in ((sandbox, "sandbox"), (bare, "bare")):
                    results[name].append(one_round(server, pool, args, f"{name}-{n}"))
    except ServerFailed as exc:
        print(f"a server did not start: {exc}", file=sys.stderr)
        return 1
    prepare, rsa = signing_alone(identity, 300)

    total = args.clients * args.per_client
    print(f"{os.cpu_count()} CPUs; {args.clients} clients ({args.processes} client processes) x {args.per_client} signed"
          f" SEPA creations = {total} per round;"
          f" {args.rounds} paired rounds; median (min, max) over rounds")
    print(f"{'':<24}{'creations/s':>22}{'p50 ms':>20}{'p99 ms':>22}{'server CPU ms/req':>19}{'client CPU ms/req':>19}")
    for name, label in (("sandbox", "sandbox"), ("bare", "bare 201 (HTTP floor)")):
        rows = results[name]
        cpu = [r["server_cpu"] for r in rows if r["server_cpu"] is not None]
        print(f"{label:<24}{spread([r['rate'] for r in rows]):>22}{spread([r['p50'] for r in rows], 1e3):>20}"
              f"{spread([r['p99'] for r in rows], 1e3):>22}{(statistics.median(cpu) * 1e3 if cpu else float('nan')):>19.2f}"
              f"{statistics.median(r['client_cpu'] for r in rows) * 1e3:>19.2f}")
    ratio = statistics.median(r["rate"] for r in results["bare"]) / statistics.median(r["rate"] for r in results["sandbox"])
    print(f"bare / sandbox throughput: {ratio:.2f}x")
    print(f"signing alone, one client thread: SignedClient.prepare median {prepare * 1e3:.2f} ms"
          f" (RSA-2048 signature alone {rsa * 1e3:.2f} ms) per request")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
