"""Benchmark: what ``obvalidate proxy`` adds to a TPP's calls -- latency p50/p99 at 1 and 16 concurrent clients and
exchanges per second -- against calling the reference sandbox directly, with Stoplight Prism's ``prism proxy`` over
the same workload as a reference (it validates against the schema only), side by side in one run.

    python tools/bench_proxy.py [--requests 600] [--rounds 3] [--clients 1,16] [--no-prism]

Every target is a process of its own on 127.0.0.1: the sandbox (``obvalidate sandbox serve``, a file database), the
proxy in front of it (``obvalidate proxy --quiet``: every exchange judged, the terminal lines off) and, when
``.ci/node`` has it, ``prism proxy spec/openapi.yaml SANDBOX`` (its log to /dev/null). The workload: one payment
created, then its status and detail reads, signed once (Date, Digest, Signature) and sent again and again -- the
proxy's judge checks each exchange whole (signature verified, headers, the answer's schema and rules, links).
Clients are threads of this process, each with its own keep-alive connection (``http.client``: nothing of a client
library's own in the requests); latency is one request's round trip, measured by the client. Rounds alternate
direct, proxy, prism so the three share the machine's noise; the figures are over every round's requests.

A second workload isolates the proxy's own capacity from the sandbox's: the same status read answered at once by a
canned upstream (a bare asyncio server returning a valid status answer), direct and through the proxy.

``added`` is the through-proxy percentile minus the direct one. The machine is shared (2 cores, other work on it):
compare figures of one run with each other, not across runs.
"""
from __future__ import annotations

import argparse
import http.client
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from conformance.client import Identity, SignedClient  # noqa: E402
from conformance.server_process import SandboxProcess, free_port  # noqa: E402

PRISM = ROOT / ".ci" / "node" / "node_modules" / ".bin" / "prism"
SPEC = ROOT / "spec" / "openapi.yaml"

CANNED = r"""
import asyncio, sys
BODY = b'{"transactionStatus":"RCVD"}'
ANSWER = (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " + str(len(BODY)).encode()
          + b"\r\n\r\n" + BODY)
async def serve(reader, writer):
    try:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            length = [l for l in head.split(b"\r\n") if l.lower().startswith(b"content-length:")]
            if length:
                await reader.readexactly(int(length[0].split(b":")[1]))
            writer.write(ANSWER)
            await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionError):
        writer.close()
async def main():
    server = await asyncio.start_server(serve, "127.0.0.1", int(sys.argv[1]))
    async with server:
        await server.serve_forever()
asyncio.run(main())
"""


class Process(SandboxProcess):
    """A server process given by its command (the proxy, Prism, the canned upstream), started and stopped as the
    sandbox's is."""

    def __init__(self, command: list[str], port: int) -> None:
        super().__init__(db=":memory:", port=port)
        self._command = command

    def command(self) -> list[str]:
        return self._command


def proxy_process(upstream: str, log: Path) -> Process:
    port = free_port()
    return Process([sys.executable, "-m", "validator", "proxy", "--upstream", upstream, "--port", str(port),
                    "--quiet", "--log", str(log)], port)


class JudgedCount:
    """How many exchanges the proxy's judge has written to its ``--log`` so far (read as the file grows)."""

    def __init__(self, path: Path) -> None:
        self.path, self.offset, self.count, self.rest = path, 0, 0, b""

    def __call__(self) -> int:
        try:
            with open(self.path, "rb") as log:
                log.seek(self.offset)
                data = log.read()
        except OSError:
            return self.count
        self.offset += len(data)
        lines = (self.rest + data).split(b"\n")
        self.rest = lines.pop()
        self.count += sum(1 for line in lines if line.startswith(b'{"type":"exchange"'))
        return self.count

    def wait_for(self, total: int, timeout: float = 120.0) -> float:
        """Wait until ``total`` exchanges are judged; the time it happened (perf_counter)."""
        deadline = time.perf_counter() + timeout
        while self() < total:
            if time.perf_counter() > deadline:
                raise RuntimeError(f"the proxy's judge wrote {self.count} of {total} exchanges in {timeout:.0f} s")
            time.sleep(0.005)
        return time.perf_counter()


def prism_process(upstream: str) -> Process | None:
    if not PRISM.exists():
        return None
    port = free_port()
    return Process([str(PRISM), "proxy", str(SPEC), upstream, "-p", str(port), "-h", "127.0.0.1", "--errors",
                    "false", "-v", "error"], port)


def canned_process() -> Process:
    port = free_port()
    return Process([sys.executable, "-c", CANNED, str(port)], port)


def prepared(base_url: str, tpp: Identity):
    """The workload's requests, signed once: the status and the detail read of one created payment."""
    with SignedClient(base_url, tpp) as client:
        created = client.call("createSepaCreditTransfer", body=_sepa())
        assert created.status_code == 201, created.text
        where = {"payment-service": "payments", "payment-product": "sepa-credit-transfers",
                 "paymentId": created.json()["paymentId"]}
        return [client.prepare("getPaymentStatus", path=where), client.prepare("getPayment", path=where)]


def _sepa() -> dict:
    from conformance.gate.suites import data

    return data.sepa_body("125.00")


def load(port: int, requests, clients: int, total: int) -> tuple[list[float], float, int]:
    """``total`` requests from ``clients`` threads (keep-alive each): per-request seconds, wall seconds, failures."""
    latencies: list[list[float]] = [[] for _ in range(clients)]
    failures = [0] * clients
    share = [total // clients + (1 if i < total % clients else 0) for i in range(clients)]
    start = threading.Barrier(clients + 1)

    def client(i: int) -> None:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        start.wait()
        for n in range(share[i]):
            request = requests[(i + n) % len(requests)]
            began = time.perf_counter()
            try:
                connection.putrequest(request.method, request.target, skip_host=True, skip_accept_encoding=True)
                connection.putheader("Host", f"127.0.0.1:{port}")
                for name, value in request.headers:
                    connection.putheader(name, value)
                connection.endheaders(request.body or None)
                answer = connection.getresponse()
                answer.read()
                if answer.status >= 400:
                    failures[i] += 1
            except (OSError, http.client.HTTPException):
                failures[i] += 1
                connection.close()
                connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            latencies[i].append(time.perf_counter() - began)
        connection.close()

    threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
    for thread in threads:
        thread.start()
    start.wait()
    began = time.perf_counter()
    for thread in threads:
        thread.join()
    return [x for part in latencies for x in part], time.perf_counter() - began, sum(failures)


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def run(args) -> dict:
    tpp = Identity.generate("PSDNO-FSA-BENCH")
    results: dict = {"machine": {"cpus": os.cpu_count(), "load_average": os.getloadavg()}, "workloads": {}}
    with tempfile.TemporaryDirectory() as tmp, SandboxProcess(Path(tmp) / "bench.db") as sandbox:
        canned = canned_process().start()
        proxy = proxy_process(sandbox.url, Path(tmp) / "proxy.jsonl").start()
        canned_proxy = proxy_process(canned.url, Path(tmp) / "canned-proxy.jsonl").start()
        judged = {proxy.port: JudgedCount(Path(tmp) / "proxy.jsonl"),
                  canned_proxy.port: JudgedCount(Path(tmp) / "canned-proxy.jsonl")}
        sent = {proxy.port: 1, canned_proxy.port: 1}   # the readiness probe's request is an exchange too
        prism = None if args.no_prism else prism_process(sandbox.url)
        if prism is not None:
            prism.start(timeout=60)
        try:
            requests = prepared(sandbox.url, tpp)
            workloads = {
                "sandbox": ({"direct": sandbox.port, "proxy": proxy.port, **({"prism": prism.port} if prism else {})},
                            requests),
                # the canned answer is a valid status answer: only the status read is sent there
                "canned upstream": ({"direct": canned.port, "proxy": canned_proxy.port}, requests[:1]),
            }
            for workload, (targets, requests) in workloads.items():
                for clients in args.clients:
                    figures = {name: {"latencies": [], "seconds": 0.0, "failures": 0, "requests": 0,
                                      "judged_seconds": 0.0} for name in targets}
                    for _round in range(args.rounds):
                        for name, port in targets.items():
                            load(port, requests, clients, min(50, args.requests))   # warm-up
                            if port in judged:   # each row starts with the judge caught up
                                sent[port] += min(50, args.requests)
                                judged[port].wait_for(sent[port])
                            began = time.perf_counter()
                            latencies, seconds, failures = load(port, requests, clients, args.requests)
                            f = figures[name]
                            if port in judged:
                                sent[port] += args.requests
                                f["judged_seconds"] += judged[port].wait_for(sent[port]) - began
                            f["latencies"] += latencies
                            f["seconds"] += seconds
                            f["failures"] += failures
                            f["requests"] += len(latencies)
                    results["workloads"].setdefault(workload, {})[str(clients)] = _summary(figures, args.rounds)
        finally:
            for process in (prism, canned_proxy, proxy, canned):
                if process is not None:
                    process.stop()
    return results


def _summary(figures: dict, rounds: int) -> dict:
    out = {}
    direct = figures["direct"]["latencies"]
    for name, f in figures.items():
        p50, p99 = percentile(f["latencies"], 50) * 1000, percentile(f["latencies"], 99) * 1000
        row = {"requests": f["requests"], "failures": f["failures"], "p50_ms": round(p50, 3), "p99_ms": round(p99, 3),
               "mean_ms": round(statistics.fmean(f["latencies"]) * 1000, 3),
               "per_second": round(f["requests"] / f["seconds"], 1)}
        if f["judged_seconds"]:   # the proxy: every exchange judged, from the row's start
            row["judged_per_second"] = round(f["requests"] / f["judged_seconds"], 1)
            row["judge_behind_ms"] = round((f["judged_seconds"] - f["seconds"]) * 1000 / rounds, 1)
        if name != "direct":
            row["added_p50_ms"] = round(p50 - percentile(direct, 50) * 1000, 3)
            row["added_p99_ms"] = round(p99 - percentile(direct, 99) * 1000, 3)
        out[name] = row
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=600, help="requests per target, client count and round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--clients", default="1,16", help="concurrent clients, comma-separated")
    parser.add_argument("--no-prism", action="store_true")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    args.clients = [int(c) for c in args.clients.split(",")]
    results = run(args)
    if args.json:
        print(json.dumps(results, indent=2))
        return
    print(f"{os.cpu_count()} CPUs, load average {', '.join(f'{x:.1f}' for x in results['machine']['load_average'])}"
          " (shared machine: compare within this run)")
    for workload, by_clients in results["workloads"].items():
        for clients, rows in by_clients.items():
            print(f"\n{workload}, {clients} client(s):")
            print(f"  {'target':8} {'requests':>8} {'fail':>5} {'p50 ms':>8} {'p99 ms':>8} {'added p50':>10} "
                  f"{'added p99':>10} {'per s':>8} {'judged/s':>9} {'judge behind':>13}")
            for name, r in rows.items():
                judged = (f"{r['judged_per_second']:>9.0f} {r['judge_behind_ms']:>10.0f} ms"
                          if "judged_per_second" in r else "")
                print(f"  {name:8} {r['requests']:>8} {r['failures']:>5} {r['p50_ms']:>8.2f} {r['p99_ms']:>8.2f} "
                      f"{r.get('added_p50_ms', 0):>10.2f} {r.get('added_p99_ms', 0):>10.2f} {r['per_second']:>8.0f} "
                      f"{judged}")


if __name__ == "__main__":
    if shutil.which("node") is None and not PRISM.exists():
        print("prism not found under .ci/node: run with --no-prism", file=sys.stderr)
    main()
