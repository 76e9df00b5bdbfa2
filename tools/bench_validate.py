"""Validator benchmarks: each measure run side by side with its baseline, printed as a table of
figures, ratios and their spread.

Fair by construction: the baseline is the fastest form a user would write (python-jsonschema with the
schema's `$ref`s inlined once, `is_valid`; `json.loads` of the same bytes; a bare interpreter), every
input is a distinct generated payload (tools/bench_payloads.py: never one payload repeated), and the
runs are paired and alternate which side goes first, so a noisy machine slows both sides of a pair.
Each ratio is the median of the per-pair ratios, with their min-max; the script never asserts.

    python tools/bench_validate.py [--runs 7] [--quick] [--only bulk,scale,...] [--json]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tools"))

from bench_payloads import Payloads, encoded  # noqa: E402

from validator import Validator  # noqa: E402
from validator.spec import load_spec  # noqa: E402


# ---------------------------------------------------------------- measuring
def paired(ours, baseline, inputs: list) -> dict:
    """Time ``ours(x)`` and ``baseline(x)`` on each input, alternating which goes first."""
    mine, theirs = [], []
    for n, item in enumerate(inputs):
        order = ((ours, mine), (baseline, theirs)) if n % 2 else ((baseline, theirs), (ours, mine))
        for fn, times in order:
            start = time.perf_counter()
            fn(item)
            times.append(time.perf_counter() - start)
    return figures(mine, theirs)


def figures(mine: list[float], theirs: list[float]) -> dict:
    ratios = [a / b for a, b in zip(mine, theirs)]
    return {
        "ours_s": statistics.median(mine),
        "baseline_s": statistics.median(theirs),
        "ratio": statistics.median(ratios),
        "ratio_min": min(ratios),
        "ratio_max": max(ratios),
        "pairs": len(ratios),
    }


def inline_refs(spec, node, depth: int = 0):
    """The schema with every `$ref` replaced by its target: the fastest form for python-jsonschema."""
    if isinstance(node, dict):
        if isinstance(node.get("$ref"), str):
            target = inline_refs(spec, spec.resolve(node["$ref"]), depth + 1)
            rest = {k: inline_refs(spec, v, depth + 1) for k, v in node.items() if k != "$ref"}
            return {**target, **rest}
        return {k: inline_refs(spec, v, depth + 1) for k, v in node.items() if not k.startswith("x-")}
    if isinstance(node, list):
        return [inline_refs(spec, v, depth + 1) for v in node]
    return node


def plain_jsonschema(spec, component: str):
    from jsonschema import Draft202012Validator

    schema = {"$schema": "https://json-schema.org/draft/2020-12/schema", **inline_refs(spec, spec.schema(component))}
    return Draft202012Validator(schema, format_checker=Draft202012Validator.FORMAT_CHECKER)


# ---------------------------------------------------------------- workloads
def bench_bulk(gen: Payloads, validator: Validator, runs: int, entries: int, errors: int) -> dict:
    """Decode + schema + every rule of a bulk payment vs `json.loads` of the same bytes."""
    inputs = [encoded(gen.broken_bulk(entries, errors) if errors else gen.bulk(entries)) for _ in range(runs)]
    report = validator.validate_bytes(inputs[0], "bulk-payment")
    found = sum(1 for f in report.findings if f.severity == "error")
    assert found == errors, (found, errors, report.findings[:3])
    result = paired(lambda d: validator.validate_bytes(d, "bulk-payment"), json.loads, inputs)
    return {**result, "bytes": len(inputs[0]), "errors": found, "entries": entries}


def bench_vs_jsonschema(gen: Payloads, validator: Validator, runs: int, entries: int) -> dict:
    """obvalidate, every rule, vs python-jsonschema schema only, both from the decoded payload."""
    plain = plain_jsonschema(validator.spec, "BulkPaymentRequest")
    inputs = [gen.bulk(entries) for _ in range(runs)]
    assert plain.is_valid(inputs[0]) and validator.validate(inputs[0], "bulk-payment").valid
    return {**paired(lambda p: validator.validate(p, "bulk-payment"), plain.is_valid, inputs), "entries": entries}


def bench_single(gen: Payloads, validator: Validator, runs: int, per_run: int) -> dict:
    """One SEPA payload at a time, in process: a loop of distinct payloads on each side."""
    plain = plain_jsonschema(validator.spec, "SepaCreditTransferRequest")
    batches = [[gen.sepa() for _ in range(per_run)] for _ in range(runs)]
    assert all(plain.is_valid(p) and validator.validate(p, "sepa-credit-transfer").valid for p in batches[0])

    def ours(batch):
        for p in batch:
            validator.validate(p, "sepa-credit-transfer")

    def baseline(batch):
        for p in batch:
            plain.is_valid(p)

    warm = [gen.sepa() for _ in range(per_run)]  # both sides warmed on payloads of their own (caches, branch paths)
    ours(warm)
    baseline(warm)
    result = paired(ours, baseline, batches)
    return {**result, "payloads_per_run": per_run, "ours_us": result["ours_s"] / per_run * 1e6, "baseline_us": result["baseline_s"] / per_run * 1e6}


def bench_scale(gen: Payloads, validator: Validator, runs: int, small: int, large: int) -> dict:
    """µs per entry of a large bulk vs a small one (garbage collection and caches show up here), next to the same
    ratio for `json.loads` of the same bytes: what decoding alone loses at that size on this machine."""
    validator.validate_bytes(encoded(gen.bulk(small)), "bulk-payment")  # warm-up: schemas compiled, caches filled
    pairs = [(encoded(gen.bulk(small)), encoded(gen.bulk(large))) for _ in range(runs)]
    per_small, per_large, loads_small, loads_large = [], [], [], []
    for n, (a, b) in enumerate(pairs):
        for data, entries, out, loads_out in ((a, small, per_small, loads_small), (b, large, per_large, loads_large))[:: 1 if n % 2 else -1]:
            start = time.perf_counter()
            validator.validate_bytes(data, "bulk-payment")
            out.append((time.perf_counter() - start) / entries * 1e6)
            start = time.perf_counter()
            json.loads(data)
            loads_out.append((time.perf_counter() - start) / entries * 1e6)
    result = figures(per_large, per_small)
    loads = figures(loads_large, loads_small)
    return {**result, "large_us_per_entry": result.pop("ours_s"), "small_us_per_entry": result.pop("baseline_s"),
            "small": small, "large": large, "json_loads_ratio": loads["ratio"],
            "json_loads_ratio_min": loads["ratio_min"], "json_loads_ratio_max": loads["ratio_max"]}


def cli() -> list[str]:
    script = Path(sys.executable).with_name("obvalidate")
    return [str(script)] if script.exists() else [sys.executable, "-m", "validator"]


def compiled_env(tmp: Path) -> dict:
    """The environment of a measured process: compiled bytecode in a cache of its own, as after any installation
    (pip compiles it; Python writes it on first import), so a machine that sets PYTHONDONTWRITEBYTECODE does not
    charge obvalidate -- its main process and each worker -- for compiling its sources on every run while the
    baseline's standard library comes precompiled. Warm it with one run before measuring."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(tmp / "bytecode")
    return env


_JSON_LOOP = "import json,sys\nfor line in open(sys.argv[1],'rb'): json.loads(line)"


def warmed_env(tmp: Path, batch: Path, jobs: int, today: str) -> dict:
    """compiled_env, its bytecode written by one run of each side on the first 300 lines of ``batch``."""
    env = compiled_env(tmp)
    head = tmp / "warm-up.jsonl"
    with batch.open("rb") as src:
        head.write_bytes(b"".join(line for _, line in zip(range(300), src)))
    subprocess.run(cli() + ["--jobs", str(jobs), "--today", today, "-o", str(tmp / "warm-up.txt"), str(head)], capture_output=True, env=env)
    subprocess.run([sys.executable, "-c", _JSON_LOOP, str(head)], check=True, env=env)
    return env


def bench_cold_start(gen: Payloads, runs: int) -> dict:
    """`obvalidate payload.json` in a fresh process vs `python -c "import json"`.

    Both run with compiled bytecode, as after any installation (pip compiles it; Python writes it on first
    import): a bytecode cache of their own (PYTHONPYCACHEPREFIX), warmed by one run of each, so a machine that
    sets PYTHONDONTWRITEBYTECODE does not charge obvalidate for compiling its sources on every start while the
    baseline's standard library comes precompiled."""
    today = gen.spec.example_today
    with tempfile.TemporaryDirectory() as tmp:
        files = []
        for n in range(runs + 1):
            path = Path(tmp) / f"payload-{n}.json"
            path.write_bytes(encoded(gen.sepa()))
            files.append(path)
        env = compiled_env(Path(tmp))
        # warm-up: bytecode of both sides, and the spec and IBAN-registry caches
        subprocess.run(cli() + ["--today", today, str(files[-1])], capture_output=True, check=True, env=env)
        subprocess.run([sys.executable, "-c", "import json"], capture_output=True, check=True, env=env)

        def ours(path):
            subprocess.run(cli() + ["--today", today, str(path)], capture_output=True, check=True, env=env)

        def baseline(path):
            subprocess.run([sys.executable, "-c", "import json"], capture_output=True, check=True, env=env)

        result = paired(ours, baseline, files[:runs])
        # The floor under any CLI on these libraries: importing what the check itself cannot do without.
        floor_code = "import click, jsonschema_rs, dataclasses, zoneinfo, json, re, pathlib, typing"
        subprocess.run([sys.executable, "-c", floor_code], capture_output=True, check=True, env=env)
        floor = paired(lambda _p: subprocess.run([sys.executable, "-c", floor_code], capture_output=True, check=True, env=env),
                       baseline, files[:runs])
        return {**result, "floor_s": floor["ours_s"], "floor_ratio": floor["ratio"]}


def bench_batch(gen: Payloads, runs: int, lines: int, jobs: int) -> dict:
    """Distinct SEPA payloads as JSONL through the CLI (kind detected) vs one process decoding each line."""
    today = gen.spec.example_today
    with tempfile.TemporaryDirectory() as tmp:
        files = []
        for n in range(runs):
            path = Path(tmp) / f"batch-{n}.jsonl"
            with path.open("wb") as fh:
                for _ in range(lines):
                    fh.write(encoded(gen.sepa()) + b"\n")
            files.append(path)
        out = Path(tmp) / "report.txt"
        env = warmed_env(Path(tmp), files[0], jobs, today)

        def ours(path):
            result = subprocess.run(cli() + ["--jobs", str(jobs), "--today", today, "-o", str(out), str(path)], capture_output=True, env=env)
            if result.returncode != 0:
                raise SystemExit(f"batch run failed ({result.returncode}): {result.stderr.decode()[:500]}")

        def baseline(path):
            subprocess.run([sys.executable, "-c", _JSON_LOOP, str(path)], check=True, env=env)

        result = paired(ours, baseline, files)
    return {**result, "lines": lines, "jobs": jobs, "per_s": lines / result["ours_s"], "baseline_per_s": lines / result["baseline_s"]}


def _load_average() -> float | None:
    try:
        return os.getloadavg()[0]
    except OSError:
        return None


def write_mixed_batch(gen: Payloads, path: Path, lines: int, today: str) -> dict:
    """A JSONL file of ``lines`` distinct SEPA payloads, every third one broken (Payloads.mixed_sepa): the count
    of each defect class."""
    counts: dict = {}
    with path.open("wb") as fh:
        for defect, payload in gen.mixed_sepa(lines, today):
            counts[defect] = counts.get(defect, 0) + 1
            fh.write(encoded(payload) + b"\n")
    return counts


def bench_mixed_batch(gen: Payloads, runs: int, lines: int, jobs: int) -> dict:
    """A SEPA JSONL batch of which a third is invalid, five defect classes in turn (an amount with 3 fraction
    digits, an IBAN check digit, creditorName missing, currency EURO, an execution date before --today), through
    the CLI (kind detected) vs one process decoding each line with `json.loads`."""
    today = gen.spec.example_today
    load_before = _load_average()
    with tempfile.TemporaryDirectory() as tmp:
        files = [Path(tmp) / f"mixed-{n}.jsonl" for n in range(runs)]
        counts = [write_mixed_batch(gen, path, lines, today) for path in files]
        invalid = sum(n for defect, n in counts[0].items() if defect is not None)
        out = Path(tmp) / "report.txt"
        env = warmed_env(Path(tmp), files[0], jobs, today)

        def ours(path):
            result = subprocess.run(cli() + ["--jobs", str(jobs), "--today", today, "-o", str(out), str(path)], capture_output=True, env=env)
            summary = result.stderr.decode(errors="replace")
            # Exit 1 (errors found) is the expected outcome; the summary must count every broken line as invalid.
            if result.returncode != 1 or f"{lines} inputs: {lines - invalid} valid, {invalid} invalid" not in summary:
                raise SystemExit(f"mixed batch run gave exit {result.returncode}: {summary[-500:]}")

        def baseline(path):
            subprocess.run([sys.executable, "-c", _JSON_LOOP, str(path)], check=True, env=env)

        result = paired(ours, baseline, files)
    return {**result, "lines": lines, "invalid": invalid, "jobs": jobs, "per_s": lines / result["ours_s"],
            "baseline_per_s": lines / result["baseline_s"], "load": (load_before, _load_average())}


_SHARE_CHILD = r"""
import resource, sys
from validator.cli import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
me, workers = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
print(me.ru_utime + me.ru_stime, workers.ru_utime + workers.ru_stime, file=sys.stderr)
"""


def bench_parent_share(gen: Payloads, runs: int, lines: int, jobs: int) -> dict:
    """The main process's share of all the CPU time of `obvalidate --jobs N` on the mixed SEPA batch (its own user and
    system time against its workers'): what the main process does besides handing out the work and joining the
    report."""
    today = gen.spec.example_today
    load_before = _load_average()
    with tempfile.TemporaryDirectory() as tmp:
        path, out = Path(tmp) / "mixed.jsonl", Path(tmp) / "report.txt"
        write_mixed_batch(gen, path, lines, today)
        env = warmed_env(Path(tmp), path, jobs, today)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
        shares, parents, workers = [], [], []
        for _ in range(runs):
            args = ["--jobs", str(jobs), "--today", today, "-o", str(out), str(path)]
            result = subprocess.run([sys.executable, "-c", _SHARE_CHILD, *args], capture_output=True, text=True, env=env)
            parent, children = map(float, result.stderr.split()[-2:])
            parents.append(parent)
            workers.append(children)
            shares.append(parent / (parent + children))
    return {"share": statistics.median(shares), "share_min": min(shares), "share_max": max(shares), "runs": runs,
            "parent_s": statistics.median(parents), "workers_s": statistics.median(workers), "lines": lines, "jobs": jobs,
            "load": (load_before, _load_average())}


_DEFECT_SLICE = 20  # lines of one side measured before the other side's turn


def bench_defect_costs(gen: Payloads, validator: Validator, runs: int, per_run: int) -> dict:
    """In process, kind detected (as a batch line is checked): the cost of a line of each defect class of the
    mixed batch against a valid line, each pair a batch of distinct broken lines and one of distinct valid ones."""
    today = gen.spec.example_today
    load_before = _load_average()
    for defect in gen.SEPA_DEFECTS:  # warm-up: schemas compiled, each class's path taken once
        validator.validate_line(encoded(gen.broken_sepa(defect, today)), None, "warm-up")
    validator.validate_line(encoded(gen.sepa()), None, "warm-up")
    results = {}
    for defect in gen.SEPA_DEFECTS:
        broken = [[encoded(gen.broken_sepa(defect, today)) for _ in range(per_run)] for _ in range(runs)]
        valid = [[encoded(gen.sepa()) for _ in range(per_run)] for _ in range(runs)]
        report = validator.validate_line(broken[0][0], None, "check")
        assert not report.valid and report.kind == "sepa-credit-transfer", report.findings
        assert validator.validate_line(valid[0][0], None, "check").valid

        times_broken, times_valid = [], []
        for bad, good in zip(broken, valid):
            # Within a run the two sides alternate in slices of a few lines, so that a machine whose speed drifts
            # (other work starting and stopping) slows both sides alike.
            spent = [0.0, 0.0]
            for n in range(0, per_run, _DEFECT_SLICE):
                for side in ((0, 1) if (n // _DEFECT_SLICE) % 2 else (1, 0)):
                    lines = (bad, good)[side][n:n + _DEFECT_SLICE]
                    start = time.perf_counter()
                    for line in lines:
                        validator.validate_line(line, None, "line")
                    spent[side] += time.perf_counter() - start
            times_broken.append(spent[0])
            times_valid.append(spent[1])
        f = figures(times_broken, times_valid)
        results[defect] = {**f, "per_run": per_run, "ours_us": f["ours_s"] / per_run * 1e6, "valid_us": f["baseline_s"] / per_run * 1e6,
                           "rules": sorted({x.rule for x in report.findings})}
    return {"classes": results, "load": (load_before, _load_average())}


def bench_signed(gen: Payloads, runs: int, per_run: int) -> dict:
    """Whole signed requests in process (kind "request": parse, resolve, headers, query, body rules, Digest,
    certificate, signature), each a distinct SEPA payment signed anew, vs the bare RSA verification of
    the same signatures (the least any verifier does)."""
    import base64
    import datetime as dt

    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import padding

    from validator.request.build import build_request
    from validator.request.sign import sign_envelope
    from validator.signing import build_signing_string, generate_test_identity, parse_signature
    from validator.signing.cavage import header_index

    now = dt.datetime(2026, 7, 1, 12, 0, 0, tzinfo=dt.timezone.utc)
    key, cert = generate_test_identity(not_before=now - dt.timedelta(days=30), not_after=now + dt.timedelta(days=300))
    validator = Validator(spec=gen.spec, now=now, today=gen.spec.example_today)
    public_key = cert.public_key()

    rng = gen.random

    def distinct_id() -> str:
        return str(uuid.UUID(int=rng.getrandbits(128), version=4))

    def envelope():
        # What differs between a TPP's requests differs here too (request and session ids, the PSU and its
        # address), so no check can be flattered by a value repeated across the inputs; the key and certificate
        # go in loaded (parsing a PEM key checks it, tens of ms, and would dominate the set-up).
        env = build_request(gen.spec, "createSepaCreditTransfer", body=json.dumps(gen.sepa()), headers={
            "X-Request-ID": distinct_id(), "TPP-Session-ID": distinct_id(), "PSU-ID": distinct_id(),
            "PSU-IP-Address": f"198.51.100.{rng.randrange(1, 255)}"})
        signed = sign_envelope(env, key, cert, now=now, spec=gen.spec)
        headers = list(signed["headers"].items())
        params = parse_signature(signed["headers"]["Signature"])
        message = build_signing_string(signed["method"], signed["path"], params.headers, header_index(headers)).encode()
        return signed, base64.b64decode(params.signature), message

    batches = [[envelope() for _ in range(per_run)] for _ in range(runs)]
    first = validator.validate(batches[0][0][0], "request")
    assert first.valid, [f.as_dict() for f in first.findings][:3]

    def ours(batch):
        for signed, _sig, _msg in batch:
            validator.validate(signed, "request")

    def baseline(batch):
        for _signed, sig, msg in batch:
            public_key.verify(sig, msg, padding.PKCS1v15(), hashes.SHA256())

    result = paired(ours, baseline, batches)
    # What the least a whole-request check must do costs on this machine: the body's own check (the same bodies
    # as payloads of their kind) plus the RSA verification; the rest is headers, Digest, Signature and the path.
    bodies = [[signed["body"].encode() for signed, _sig, _msg in batch] for batch in batches]

    def body_only(batch):
        for body in batch:
            validator.validate_bytes(body, "sepa-credit-transfer")

    body = paired(body_only, lambda batch: None, bodies)
    return {**result, "per_run": per_run, "per_s": per_run / result["ours_s"], "baseline_per_s": per_run / result["baseline_s"],
            "us_per_request": result["ours_s"] / per_run * 1e6, "rsa_us": result["baseline_s"] / per_run * 1e6,
            "body_us": body["ours_s"] / per_run * 1e6}


_MEMORY_CHILD = r"""
import json, os, resource, sys
mode, path, today = sys.argv[1:4]
def peak():
    # This process's own high-water mark (Linux): ru_maxrss keeps the parent's across exec, so a benchmark
    # holding its generated payloads would be measured instead of the child.
    try:
        with open("/proc/self/status") as fh:
            return next(int(line.split()[1]) * 1024 for line in fh if line.startswith("VmHWM:"))
    except (OSError, StopIteration):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
def reset_peak():  # the high-water mark back to what is resident now (Linux 4.0+), so the warm-up does not count
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
    except OSError:
        pass
def now():  # resident now (Linux); the peak so far elsewhere
    try:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:
        return peak()
if mode == "obvalidate":
    from validator import Validator
    v = Validator(today=today)
    v.validate_bytes(b'{"paymentIds": ["a"]}', "signing-basket")
    reset_peak()
    before = now()
    report = v.validate_path(path, "bulk-payment")[0]
    assert report.valid, report.findings[:3]
else:
    reset_peak()
    before = now()
    with open(path, "rb") as fh:
        json.loads(fh.read())
print(peak() - before)
"""


def bench_memory(gen: Payloads, runs: int, megabytes: int) -> dict:
    """Peak resident memory added by validating a large bulk file, against the file's size; the
    baseline reads and decodes the same file with `json.loads`."""
    entries = megabytes * 1_000_000 // 430
    with tempfile.TemporaryDirectory() as tmp:
        files = []
        for n in range(runs):
            path = Path(tmp) / f"bulk-{n}.json"
            path.write_bytes(encoded(gen.bulk(entries)))
            files.append(path)
        size = files[0].stat().st_size
        env = {**os.environ, "PYTHONPATH": str(ROOT)}

        def child(mode, path):
            out = subprocess.run([sys.executable, "-c", _MEMORY_CHILD, mode, str(path), gen.spec.example_today], capture_output=True, env=env, check=True)
            return int(out.stdout.decode().strip().splitlines()[-1])

        ours = [child("obvalidate", f) / size for f in files]
        theirs = [child("json.loads", f) / size for f in files]
    return {"bytes": size, "ours_x_file": statistics.median(ours), "ours_min": min(ours), "ours_max": max(ours),
            "baseline_x_file": statistics.median(theirs), "baseline_min": min(theirs), "baseline_max": max(theirs)}


# ---------------------------------------------------------------- report
def _spread(f: dict) -> str:
    return f"{f['ratio']:.2f}× ({f['ratio_min']:.2f}–{f['ratio_max']:.2f}, {f['pairs']} pairs)"


def _faster(f: dict) -> str:
    return f"{1 / f['ratio']:.1f}× faster ({1 / f['ratio_max']:.1f}–{1 / f['ratio_min']:.1f}, {f['pairs']} pairs)"


def _load(f: dict) -> str:
    """The 1-minute load average before and after a measure ("?" where the system does not say)."""
    return "–".join("?" if v is None else f"{v:.1f}" for v in f["load"])


def table(results: dict) -> str:
    rows = ["| workload | obvalidate | baseline | ratio (median, min–max) | target |", "|---|---|---|---|---|"]
    if "bulk_valid" in results:
        f = results["bulk_valid"]
        rows.append(f"| valid {f['entries']:,}-entry bulk ({f['bytes'] / 1e6:.1f} MB), in process | {f['ours_s'] * 1000:.0f} ms | `json.loads`: {f['baseline_s'] * 1000:.0f} ms | {_spread(f)} | ≤ 2.5× |")
    if "bulk_invalid" in results:
        f = results["bulk_invalid"]
        rows.append(f"| invalid {f['entries']:,}-entry bulk ({f['errors']:,} errors) | {f['ours_s'] * 1000:.0f} ms | `json.loads`: {f['baseline_s'] * 1000:.0f} ms | {_spread(f)} | ≤ 4× |")
    if "vs_jsonschema" in results:
        f = results["vs_jsonschema"]
        rows.append(f"| valid {f['entries']:,}-entry bulk, decoded: every rule vs plain `jsonschema` (refs inlined, `is_valid`) | {f['ours_s'] * 1000:.0f} ms | {f['baseline_s'] * 1000:.0f} ms | {_faster(f)} | ≥ 4× faster |")
    if "single" in results:
        f = results["single"]
        rows.append(f"| one SEPA payload at a time, in process ({f['payloads_per_run']:,} distinct per run) | {f['ours_us']:.0f} µs | `jsonschema`: {f['baseline_us']:.0f} µs | {_faster(f)} | ≥ 3× faster |")
    if "batch" in results:
        f = results["batch"]
        rows.append(f"| {f['lines']:,} distinct SEPA payloads, JSONL, `--jobs {f['jobs']}`, kind detected | {f['per_s']:,.0f}/s | one process `json.loads` per line: {f['baseline_per_s']:,.0f}/s | {_spread(f)} | ≥ 30,000/s |")
    if "mixed_batch" in results:
        f = results["mixed_batch"]
        rows.append(f"| {f['lines']:,} distinct SEPA payloads, JSONL, {f['invalid']:,} invalid in five defect classes, `--jobs {f['jobs']}`, kind detected | {f['per_s']:,.0f}/s ({f['ours_s']:.1f} s) | one process `json.loads` per line: {f['baseline_per_s']:,.0f}/s | {_spread(f)}; load {_load(f)} | ≥ 40,000/s (≤ 6×) |")
    if "parent_share" in results:
        f = results["parent_share"]
        rows.append(f"| the main process's share of all CPU time, {f['lines']:,}-line mixed batch, `--jobs {f['jobs']}` | {f['share']:.1%} ({f['share_min']:.1%}–{f['share_max']:.1%}, {f['runs']} runs; {f['parent_s']:.2f} s of {f['parent_s'] + f['workers_s']:.2f} s) | | load {_load(f)} | ≤ 5 % |")
    if "defect_costs" in results:
        costs = results["defect_costs"]
        for defect, f in costs["classes"].items():
            rows.append(f"| a SEPA line with {defect} ({', '.join(f['rules'])}) vs a valid line, in process, kind detected ({f['per_run']:,} distinct per run) | {f['ours_us']:.0f} µs | valid: {f['valid_us']:.0f} µs | {_spread(f)}; load {_load(costs)} | ≤ 3× |")
    if "scale" in results:
        f = results["scale"]
        rows.append(f"| µs per entry, {f['large']:,}-entry bulk vs {f['small']:,}-entry bulk | {f['large_us_per_entry']:.1f} µs | {f['small_us_per_entry']:.1f} µs (`json.loads` alone: {f['json_loads_ratio']:.2f}×, {f['json_loads_ratio_min']:.2f}–{f['json_loads_ratio_max']:.2f}) | {_spread(f)} | ≤ 1.25× |")
    if "memory" in results:
        f = results["memory"]
        rows.append(f"| peak memory added validating a {f['bytes'] / 1e6:.0f} MB bulk file | {f['ours_x_file']:.2f}× the file ({f['ours_min']:.2f}–{f['ours_max']:.2f}) | `json.loads` of it: {f['baseline_x_file']:.2f}× | | ≤ 4× the file |")
    if "signed" in results:
        f = results["signed"]
        rows.append(f"| whole signed requests in process ({f['per_run']:,} distinct per run) | {f['per_s']:,.0f}/s ({f['us_per_request']:.0f} µs: body check {f['body_us']:.0f} µs + RSA {f['rsa_us']:.0f} µs + the rest) | bare RSA verify of each: {f['baseline_per_s']:,.0f}/s | {_spread(f)} | ≤ 4× |")
    if "cold_start" in results:
        f = results["cold_start"]
        rows.append(f"| cold start `obvalidate payload.json` | {f['ours_s'] * 1000:.0f} ms (importing click, jsonschema_rs and the stdlib modules it needs, nothing else: {f['floor_s'] * 1000:.0f} ms, {f['floor_ratio']:.2f}×) | `python -c \"import json\"`: {f['baseline_s'] * 1000:.0f} ms | {_spread(f)} | ≤ 3× |")
    return "\n".join(rows)


WORKLOADS = ("bulk", "vs_jsonschema", "single", "signed", "scale", "memory", "cold_start", "batch", "mixed_batch", "parent_share",
             "defect_costs")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=7, help="pairs per in-process measure")
    parser.add_argument("--quick", action="store_true", help="fewer and smaller runs (a smoke test, not figures)")
    parser.add_argument("--only", default=",".join(WORKLOADS), help=f"comma-separated subset of {', '.join(WORKLOADS)}")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    only = set(args.only.split(","))
    quick = args.quick
    runs = 3 if quick else args.runs
    spec = load_spec()
    gen = Payloads(seed=20260701, spec=spec)
    validator = Validator(spec=spec, today=spec.example_today)
    results: dict = {}
    entries = 1_000 if quick else 10_000
    if "bulk" in only:
        results["bulk_valid"] = bench_bulk(gen, validator, runs, entries, 0)
        results["bulk_invalid"] = bench_bulk(gen, validator, runs, entries, entries // 10)
    if "vs_jsonschema" in only:
        results["vs_jsonschema"] = bench_vs_jsonschema(gen, validator, max(3, runs // 2), entries)
    if "single" in only:
        results["single"] = bench_single(gen, validator, runs, 200 if quick else 2_000)
    if "signed" in only:
        results["signed"] = bench_signed(gen, runs, 50 if quick else 500)
    if "scale" in only:
        results["scale"] = bench_scale(gen, validator, 3, 1_000, 10_000 if quick else 100_000)
    if "memory" in only:
        results["memory"] = bench_memory(gen, 1 if quick else 2, 4 if quick else 40)
    if "cold_start" in only:
        results["cold_start"] = bench_cold_start(gen, 5 if quick else 15)
    if "batch" in only:
        results["batch"] = bench_batch(gen, 1 if quick else 2, 5_000 if quick else 100_000, 2)
    if "mixed_batch" in only:
        results["mixed_batch"] = bench_mixed_batch(gen, 1 if quick else 3, 6_000 if quick else 100_000, 2)
    if "parent_share" in only:
        results["parent_share"] = bench_parent_share(gen, 1 if quick else 3, 6_000 if quick else 100_000, 2)
    if "defect_costs" in only:
        results["defect_costs"] = bench_defect_costs(gen, validator, runs, 100 if quick else 1_000)
    if args.json:
        print(json.dumps(results, indent=2))
    else:
        print(table(results))


if __name__ == "__main__":
    main()
