"""Long fuzz runs of obvalidate's public API (the generator and the checks: tests/fuzz/fuzzing.py).

    python tools/fuzz_long.py --inputs 1000000 --workers 2            # a million inputs on two cores
    python tools/fuzz_long.py --seconds 600 --seed 7                  # ten minutes
    python tools/fuzz_long.py --seed 7 --replay 12345 --save-failures tests/fuzz/corpus

Input ``i`` of seed ``s`` is the same on every machine, so a failure is reproduced with ``--replay i`` (which runs
it through every entry point). ``--save-failures DIR`` writes each failing input as a corpus entry (the tests
replay every file of tests/fuzz/corpus/). The summary gives inputs, inputs/s, escapes (exceptions out of the public
API or a CLI traceback), internal-error findings, the slowest inputs per byte (each measured against at least
1 KiB) with their descriptions, and the resident memory of each worker process after warm-up and at the end.
Exit code 1 when anything failed.
"""
from __future__ import annotations

import argparse
import collections
import json
import multiprocessing
import os
import random
import re
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "fuzz")]

import fuzzing  # noqa: E402

CHUNK = 1000  # inputs per task: small enough for a prompt stop at the time budget
MAX_KEPT = 50  # failing inputs kept per chunk
MAX_FAILURES = 500  # ... and per run (saved with --save-failures); all are counted

_STATE: dict = {}


def _warm_up(workdir: str) -> None:
    # Warm-up, as a long-lived server is warm: every kind's checkers compiled, every path imported.
    for v in fuzzing.validators().values():
        for _name, value, kind in fuzzing.payload_seeds():
            v.validate(value, kind)
        for _name, envelope in fuzzing.request_seeds():
            v.validate(envelope, "request")
    warm = fuzzing.Outcome()
    for index in range(20):  # every code path imported and compiled before the first measurement
        fuzzing.run_case(fuzzing.make_case(-1, index), warm, random.Random(index), workdir=Path(workdir))


def _init_worker(workdir: str) -> None:
    _warm_up(workdir)
    _STATE.update(workdir=Path(workdir), rss_start=fuzzing.rss_kib(), pid=os.getpid())


def _retime(seed: int, slowest: list, workdir: str, repeats: int = 5) -> list:
    """The slowest inputs of a busy run timed again, alone and warm: the shortest of ``repeats`` runs each, so a
    pause of the machine does not pass for a slow input."""
    _warm_up(workdir)
    again = []
    for _per_byte, seconds, size, entry, description in slowest:
        match = re.match(r"#(\d+) ", description)
        if match is None:
            continue
        case = fuzzing.make_case(seed, int(match.group(1)))
        outcome = fuzzing.Outcome(fastest={})
        for _ in range(repeats):
            fuzzing.run_case(case, outcome, random.Random(f"entries:{seed}:{case.index}"), workdir=Path(workdir))
        best = outcome.fastest.get(entry, seconds)
        again.append((best / max(size, fuzzing.PER_BYTE_FLOOR), best, size, entry, description))
    return sorted(again, reverse=True)


def _run_chunk(task: tuple[int, int, int, float | None, int]) -> dict:
    seed, start, stop, deadline, keep_slowest = task
    seconds = None if deadline is None else max(0.0, deadline - time.time())
    if seconds == 0.0:
        return {"pid": os.getpid(), "done": 0, "calls": 0, "seconds": 0.0, "failures": [], "failure_count": 0,
                "slowest": [], "rss_start": _STATE["rss_start"], "rss_end": fuzzing.rss_kib(), "start": start}
    outcome, done = fuzzing.fuzz(seed, range(start, stop), seconds=seconds, workdir=_STATE["workdir"],
                                 keep_slowest=keep_slowest)
    return {"pid": os.getpid(), "done": done, "calls": outcome.calls, "seconds": outcome.seconds,
            "failures": outcome.failures[:MAX_KEPT], "failure_count": len(outcome.failures),
            "classes": collections.Counter(_classify(f) for f in outcome.failures),
            "slowest": outcome.slowest, "rss_start": _STATE["rss_start"], "rss_end": fuzzing.rss_kib(), "start": start}


def _problem_class(problem: str) -> str:
    """A failure's message without the parts that vary between inputs (numbers, quoted values)."""
    return re.sub(r"'[^']*'|\"[^\"]*\"|\d+", "…", problem)[:160]


def _classify(failure: fuzzing.Failure) -> str:
    if failure.problem.startswith("escaped") or "traceback" in failure.problem:
        return "escapes"
    if "internal error" in failure.problem:
        return "internal errors"
    return "other failures"


def run(args: argparse.Namespace) -> int:
    total = args.inputs if args.inputs is not None else (10**12 if args.seconds else 100_000)
    deadline = time.time() + args.seconds if args.seconds else None
    # Candidates for the slowest: more than are listed, since a pause of a busy machine can make a fast input
    # look slow; all are timed again alone at the end.
    candidates = args.slowest * 5 if args.retime else args.slowest
    tasks = [(args.seed, s, min(s + CHUNK, args.start + total), deadline, candidates)
             for s in range(args.start, args.start + total, CHUNK)] if total < 10**12 else None
    if tasks is None:  # a time budget only: enough chunks for any machine, stopped by the deadline
        tasks = ((args.seed, s, s + CHUNK, deadline, candidates) for s in range(args.start, 10**12, CHUNK))
    started = time.time()
    done = calls = failure_count = 0
    busy = 0.0
    failures: list[fuzzing.Failure] = []
    slowest: list = []
    rss: dict[int, list] = {}
    counts = {"escapes": 0, "internal errors": 0, "other failures": 0}
    last_progress = started
    with tempfile.TemporaryDirectory(prefix="obvalidate-fuzz-") as workdir:
        with multiprocessing.get_context("fork").Pool(args.workers, initializer=_init_worker, initargs=(workdir,)) as pool:
            for result in pool.imap_unordered(_run_chunk, tasks):
                if result["done"] == 0 and deadline is not None and time.time() >= deadline:
                    pool.terminate()
                    break
                done += result["done"]
                calls += result["calls"]
                busy += result["seconds"]
                failure_count += result["failure_count"]
                for name, count in result.get("classes", {}).items():
                    counts[name] += count
                failures.extend(result["failures"][: max(0, MAX_FAILURES - len(failures))])
                slowest = sorted(slowest + result["slowest"], reverse=True)[:candidates]
                entry = rss.setdefault(result["pid"], [result["rss_start"], result["rss_end"], -1])
                if result["start"] > entry[2]:
                    entry[1], entry[2] = result["rss_end"], result["start"]
                if time.time() - last_progress > args.progress:
                    last_progress = time.time()
                    print(f"  ... {done:,} inputs, {done / (last_progress - started):,.0f}/s, {failure_count} failing",
                          file=sys.stderr, flush=True)
        wall = time.time() - started
        if args.retime and slowest:
            slowest = _retime(args.seed, slowest, workdir)
        slowest = slowest[: args.slowest]
    saved = []
    if args.save_failures and failures:
        seen = set()
        for failure in failures:
            key = (failure.case.index, failure.entry)
            if key not in seen:
                seen.add(key)
                saved.append(str(fuzzing.save_failure(failure, Path(args.save_failures))))
    summary = {
        "seed": args.seed, "workers": args.workers, "inputs": done, "entry_point_calls": calls,
        "wall_seconds": round(wall, 1), "inputs_per_second": round(done / wall, 1) if wall else None,
        "escapes": counts["escapes"], "internal_errors": counts["internal errors"],
        "other_failures": counts["other failures"], "failing_calls": failure_count,
        "slowest_per_byte": [
            {"microseconds_per_byte": round(per_byte * 1e6, 3), "seconds": round(sec, 4), "bytes": size, "entry": entry,
             "input": desc} for per_byte, sec, size, entry, desc in slowest],
        "retimed": args.retime,
        "rss_kib": {str(pid): {"after_warm_up": v[0], "end": v[1]} for pid, v in rss.items()},
        "failure_classes": dict(collections.Counter(_problem_class(f.problem) for f in failures).most_common()),
        "failures": [{"entry": f.entry, "problem": f.problem[:300], "input": f.case.description[:300]} for f in failures[:20]],
        "saved": saved,
    }
    if args.json:
        print(json.dumps(summary, indent=2, ensure_ascii=False))
    else:
        print(_text(summary))
    return 1 if failure_count else 0


def _text(s: dict) -> str:
    lines = [
        f"obvalidate fuzz run — seed {s['seed']}, {s['workers']} worker(s)",
        f"  inputs            {s['inputs']:,} ({s['entry_point_calls']:,} entry-point calls)",
        f"  wall time         {s['wall_seconds']:,} s — {s['inputs_per_second']:,} inputs/s",
        f"  escapes           {s['escapes']} (exceptions out of the public API, CLI tracebacks)",
        f"  internal errors   {s['internal_errors']} (internal-error findings, internal verifier errors)",
        f"  other failures    {s['other_failures']}",
    ]
    if s["slowest_per_byte"]:
        worst = s["slowest_per_byte"][0]
        lines.append(f"  worst time/byte   {worst['microseconds_per_byte']} µs/byte ({worst['seconds']} s for "
                     f"{worst['bytes']:,} bytes, {worst['entry']}; per byte of at least 1 KiB; "
                     f"{'the best of 5 runs alone' if s['retimed'] else 'as measured in the run'})")
        lines.append(f"                    input {worst['input'][:200]}")
        lines.append("  slowest inputs per byte:")
        for row in s["slowest_per_byte"]:
            lines.append(f"    {row['microseconds_per_byte']:>9} µs/B {row['seconds']:>8} s {row['bytes']:>9,} B  "
                         f"{row['entry']}: {row['input'][:160]}")
    for pid, r in s["rss_kib"].items():
        start = f"{r['after_warm_up'] / 1024:.0f} MiB" if r["after_warm_up"] else "?"
        end = f"{r['end'] / 1024:.0f} MiB" if r["end"] else "?"
        lines.append(f"  resident memory   worker {pid}: {start} after warm-up, {end} at the end")
    for problem, count in s["failure_classes"].items():
        lines.append(f"  {count:>6} × {problem}")
    for f in s["failures"][:5]:
        lines.append(f"  FAIL {f['entry']}: {f['problem'][:200]}\n       input {f['input'][:200]}")
    if s["saved"]:
        lines.append(f"  saved {len(s['saved'])} failing input(s) to {Path(s['saved'][0]).parent}")
    return "\n".join(lines)


def replay(args: argparse.Namespace) -> int:
    failed = 0
    with tempfile.TemporaryDirectory(prefix="obvalidate-fuzz-") as workdir:
        for index in args.replay:
            case = fuzzing.make_case(args.seed, index)
            outcome = fuzzing.Outcome()
            fuzzing.run_case(case, outcome, every_entry=True, workdir=Path(workdir))
            if case.form == "bytes":
                fuzzing.run_cli_every_format(case, outcome, Path(workdir))
            print(f"{case.description}\n  {outcome.calls} calls, {outcome.seconds:.3f} s, {len(outcome.failures)} failing")
            for f in outcome.failures:
                print(f"  FAIL {f.entry}: {f.problem}")
            if outcome.failures and args.save_failures:
                print(f"  saved {fuzzing.save_failure(outcome.failures[0], Path(args.save_failures))}")
            failed += bool(outcome.failures)
    return 1 if failed else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--inputs", type=int, help="number of inputs (default 100,000 unless --seconds)")
    parser.add_argument("--seconds", type=float, help="time budget; with --inputs, whichever comes first")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--start", type=int, default=0, help="first input index")
    parser.add_argument("--workers", type=int, default=max(1, min(2, os.cpu_count() or 1)))
    parser.add_argument("--slowest", type=int, default=10, help="slowest inputs per byte to list")
    parser.add_argument("--save-failures", metavar="DIR", help="write failing inputs as corpus entries (tests/fuzz/corpus)")
    parser.add_argument("--replay", type=int, nargs="+", metavar="INDEX", help="run these inputs through every entry point")
    parser.add_argument("--progress", type=float, default=60.0, help="seconds between progress lines on stderr")
    parser.add_argument("--json", action="store_true", help="the summary as JSON")
    parser.add_argument("--no-retime", dest="retime", action="store_false",
                        help="list the slowest inputs as measured during the run, not timed again alone")
    args = parser.parse_args(argv)
    if args.replay:
        return replay(args)
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
