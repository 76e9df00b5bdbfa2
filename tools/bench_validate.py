"""Validator benchmarks, each measured side by side with a baseline in the same run, printed as ratios.

1. Full validation (decode + schema + every rule) of a 10,000-entry bulk payment vs `json.loads` of
   the same bytes and vs plain python-jsonschema schema-only validation of the decoded payload.
2. A single small payload through the CLI (a cold process) vs `python -c "import json"`.
3. 100,000 JSONL payloads through the CLI with --jobs 2: payloads per second.

Targets (issue "The validator"): bulk <= 10x json.loads and >= 3x faster than plain jsonschema;
cold start <= 0.25 s median; >= 20,000 payloads/s on the batch. This machine is noisy: the script
reports medians of repeated runs and never asserts.

    python tools/bench_validate.py [--entries 10000] [--lines 100000] [--runs 7]
"""
from __future__ import annotations

import argparse
import copy
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from validator import Validator  # noqa: E402
from validator.checks.accounts import norwegian_bban_check_digit  # noqa: E402
from validator.checks.kid import kid_check_digit_mod10  # noqa: E402
from validator.rules.examples import spec_example  # noqa: E402
from validator.schema import FORMAT_CHECKER, bundled_schema  # noqa: E402
from validator.spec import load_spec  # noqa: E402


def median_time(fn, runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def bulk_payload(entries: int) -> bytes:
    spec = load_spec()
    base = spec_example(spec, "createBulkPayment request invoicesWithKid")
    templates = base["payments"]
    payments = []
    for i in range(entries):
        entry = copy.deepcopy(templates[i % len(templates)])
        first10 = f"{1503000000 + i * 7:010d}"
        digit = norwegian_bban_check_digit(first10)
        while digit is None:
            first10 = f"{int(first10) + 1:010d}"
            digit = norwegian_bban_check_digit(first10)
        entry["creditorAccount"]["bban"] = first10 + digit
        entry["endToEndIdentification"] = f"E2E-{i:08d}"
        if "remittanceInformationStructuredArray" in entry:
            payload = f"{i:012d}"
            entry["remittanceInformationStructuredArray"] = [{"reference": payload + kid_check_digit_mod10(payload), "referenceType": "SCOR"}]
        payments.append(entry)
    base["payments"] = payments
    return json.dumps(base, ensure_ascii=False).encode()


def bench_bulk(entries: int, runs: int) -> dict:
    import jsonschema

    spec = load_spec()
    data = bulk_payload(entries)
    validator = Validator(today=spec.example_today)
    report = validator.validate_bytes(data, "bulk-payment")
    assert report.valid and not report.findings, report.findings[:3]
    plain = jsonschema.Draft202012Validator(bundled_schema(spec, "BulkPaymentRequest"), format_checker=FORMAT_CHECKER)
    decoded = json.loads(data)
    assert plain.is_valid(decoded)

    t_loads = median_time(lambda: json.loads(data), runs)
    t_full = median_time(lambda: validator.validate_bytes(data, "bulk-payment"), runs)
    t_plain = median_time(lambda: plain.is_valid(decoded), max(3, runs // 2))
    return {
        "bytes": len(data),
        "json.loads_s": t_loads,
        "obvalidate_full_s": t_full,
        "plain_jsonschema_s": t_plain,
        "full_vs_json.loads": t_full / t_loads,
        "plain_jsonschema_vs_full": t_plain / t_full,
    }


def cli() -> list[str]:
    return [sys.executable, "-m", "validator"]


def bench_cold_start(runs: int) -> dict:
    spec = load_spec()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "payload.json"
        path.write_text(json.dumps(spec_example(spec, "createSepaCreditTransfer request minimal")))
        env = dict(os.environ)
        subprocess.run(cli() + [str(path)], env=env, capture_output=True, check=False)  # warm the spec cache
        cold = []
        baseline = []
        for _ in range(runs):
            start = time.perf_counter()
            subprocess.run(cli() + ["--today", spec.example_today, str(path)], env=env, capture_output=True, check=True)
            cold.append(time.perf_counter() - start)
            start = time.perf_counter()
            subprocess.run([sys.executable, "-c", "import json"], capture_output=True, check=True)
            baseline.append(time.perf_counter() - start)
    return {
        "cli_median_s": statistics.median(cold),
        "python_import_json_median_s": statistics.median(baseline),
        "ratio": statistics.median(cold) / statistics.median(baseline),
    }


def bench_batch(lines: int, jobs: int) -> dict:
    spec = load_spec()
    minimal = spec_example(spec, "createSepaCreditTransfer request minimal")
    broken = copy.deepcopy(minimal)
    broken["instructedAmount"]["amount"] = "49.505"  # one error finding per such line
    sepa = [json.dumps(p) for p in (minimal, spec_example(spec, "createSepaCreditTransfer request rentToBerlin"), broken)]
    mixed = sepa + [json.dumps(spec_example(spec, "createSigningBasket request twoSepaPayments"))]
    figures = {"lines": lines, "jobs": jobs}
    with tempfile.TemporaryDirectory() as tmp:
        for label, samples, kind in (("with_kind", sepa, ["--kind", "sepa-credit-transfer"]), ("kind_detected", mixed, [])):
            path = Path(tmp) / f"{label}.jsonl"
            with path.open("w") as fh:
                for i in range(lines):
                    fh.write(samples[i % len(samples)] + "\n")
            start = time.perf_counter()
            result = subprocess.run(
                cli() + kind + ["-q", "--jobs", str(jobs), "--today", spec.example_today, "-o", str(Path(tmp) / "out.txt"), str(path)],
                capture_output=True,
                check=False,
            )
            elapsed = time.perf_counter() - start
            if result.returncode not in (0, 1):
                raise SystemExit(f"batch run failed: {result.stderr.decode()[:500]}")
            figures[f"seconds_{label}"] = elapsed
            figures[f"payloads_per_s_{label}"] = lines / elapsed
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--entries", type=int, default=10_000)
    parser.add_argument("--lines", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    results = {
        "bulk": bench_bulk(args.entries, args.runs),
        "cold_start": bench_cold_start(max(5, args.runs)),
        "batch": bench_batch(args.lines, 2),
    }
    if args.json:
        print(json.dumps(results, indent=2))
        return
    b, c, j = results["bulk"], results["cold_start"], results["batch"]
    print(f"bulk payment, {args.entries:,} entries ({b['bytes'] / 1e6:.1f} MB):")
    print(f"  json.loads            {b['json.loads_s'] * 1000:8.1f} ms")
    print(f"  obvalidate (full)     {b['obvalidate_full_s'] * 1000:8.1f} ms   = {b['full_vs_json.loads']:.1f}x json.loads   (target <= 10x)")
    print(f"  plain jsonschema      {b['plain_jsonschema_s'] * 1000:8.1f} ms   = obvalidate is {b['plain_jsonschema_vs_full']:.1f}x faster (target >= 3x)")
    print("cold start, one small payload through the CLI:")
    print(f"  obvalidate            {c['cli_median_s'] * 1000:8.1f} ms median (target <= 250 ms)")
    print(f"  python -c 'import json' {c['python_import_json_median_s'] * 1000:6.1f} ms median   ratio {c['ratio']:.1f}x")
    print(f"batch, {j['lines']:,} JSONL payloads, --jobs {j['jobs']}:")
    print(f"  with --kind           {j['seconds_with_kind']:8.2f} s = {j['payloads_per_s_with_kind']:,.0f} payloads/s (target >= 20,000)")
    print(f"  kind detected         {j['seconds_kind_detected']:8.2f} s = {j['payloads_per_s_kind_detected']:,.0f} payloads/s")


if __name__ == "__main__":
    main()
