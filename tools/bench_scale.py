"""Past one machine, measured side by side (issue 30): one generated archive -- the mixed SEPA batch of
tools/bench_validate.py, every third line broken (five defect classes in turn) -- through

- ``obvalidate --jobs 2`` (the baseline: one machine, two worker processes),
- ``obvalidate validate --engine dask`` on a local cluster of 1 and of 2 worker processes,
- Spark in local mode (``spark-submit --master local[2]`` of conformance/scale/spark.py),

each a whole command as a user runs it (a cluster's start included), timed by the wall clock. Runs are paired: each
round runs every command once, the order rotated from round to round, so a noisy machine slows every side of a round;
each ratio is the median of the rounds' ratios with their min-max. CPU time is the command's and every descendant's
(``wait4``; sampled from /proc where that is more, as for Spark's Python workers, which the JVM does not wait for): on
a machine shared with other work it moves less than the wall clock. Peak memory is each process's high-water resident
set, sampled every 0.1 s over the command's process tree: the largest Python worker's (the validation's worker
processes) and the JVM's for Spark. The script never asserts: it prints the figures, the targets and the load average.

    python tools/bench_scale.py [--lines 1000000] [--runs 3] [--no-spark] [--json]
"""
from __future__ import annotations

import argparse
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
sys.path.insert(0, str(ROOT / "tools"))

from bench_payloads import Payloads  # noqa: E402
from bench_validate import _load_average, cli, write_mixed_batch  # noqa: E402


# ---------------------------------------------------------------- the process tree's memory
def _children() -> dict[int, list[int]]:
    tree: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                parent = int(fh.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        tree.setdefault(parent, []).append(int(entry))
    return tree


def _resident(pid: int) -> tuple[int, str] | None:
    try:
        with open(f"/proc/{pid}/status") as fh:
            rss = next((int(line.split()[1]) * 1024 for line in fh if line.startswith("VmRSS:")), 0)
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            command = fh.read().replace(b"\0", b" ").decode(errors="replace")
        return rss, command
    except OSError:
        return None


class TreeMemory:
    """Each process's peak resident set under ``root``, sampled every 0.1 s while the command runs."""

    def __init__(self, root: int) -> None:
        self.root = root
        self.peaks: dict[int, tuple[int, str]] = {}
        self.ticks: dict[int, int] = {}   # each process's CPU time (user + system) when last seen
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()

    def _watch(self) -> None:
        while not self._stop.wait(0.1):
            tree, todo = _children(), [self.root]
            while todo:
                pid = todo.pop()
                todo.extend(tree.get(pid, ()))
                seen = _resident(pid)
                if seen and seen[0] > self.peaks.get(pid, (0, ""))[0]:
                    self.peaks[pid] = seen
                try:
                    with open(f"/proc/{pid}/stat") as fh:
                        fields = fh.read().rsplit(")", 1)[1].split()
                    self.ticks[pid] = int(fields[11]) + int(fields[12])
                except (OSError, IndexError, ValueError):
                    pass

    def stop(self) -> dict[str, int]:
        self._stop.set()
        self._thread.join()
        python = [rss for pid, (rss, command) in self.peaks.items()
                  if pid != self.root and "python" in command.split(" ", 1)[0] or "obvalidate" in command.split(" ", 1)[0]
                  and pid != self.root]
        java = [rss for rss, command in self.peaks.values() if "java" in command.split(" ", 1)[0]]
        return {"worker_peak": max(python, default=0), "root_peak": self.peaks.get(self.root, (0, ""))[0],
                "jvm_peak": max(java, default=0), "cpu_sampled": sum(self.ticks.values()) / os.sysconf("SC_CLK_TCK")}


def run(command: list[str], env: dict) -> dict:
    """The command's wall time, CPU time (its own and every descendant's that was waited for: ``wait4``'s usage),
    and its process tree's memory peaks."""
    with tempfile.TemporaryFile() as errors:
        start = time.perf_counter()
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=errors, env=env)
        memory = TreeMemory(process.pid)
        _pid, status, usage = os.wait4(process.pid, 0)
        seconds = time.perf_counter() - start
        process.returncode = os.waitstatus_to_exitcode(status)
        figures = memory.stop()
        errors.seek(0)
        message = errors.read().decode(errors="replace")
    if process.returncode != 1:   # exit 1: findings, as a third of the archive is invalid
        raise SystemExit(f"{' '.join(command[:4])} ... exited {process.returncode}: {message[-800:]}")
    # wait4 counts the descendants their parents waited for; Spark's Python workers are not among them (the JVM does
    # not wait for them): for those, the CPU time sampled from /proc (which misses at most each process's last 0.1 s).
    return {"seconds": seconds, "cpu_seconds": max(usage.ru_utime + usage.ru_stime, figures["cpu_sampled"]), **figures}


# ---------------------------------------------------------------- the commands
def commands(archive: Path, work: Path, today: str, spark: bool) -> dict[str, callable]:
    def fresh(name: str) -> str:
        out = work / name
        shutil.rmtree(out, ignore_errors=True)
        return str(out)

    def cli_jobs2():
        return cli() + ["--jobs", "2", "--today", today, "-q", "-o", str(work / "report.txt"), str(archive)]

    def dask(workers: int):
        return lambda: cli() + ["validate", "--engine", "dask", "--jobs", str(workers), "--today", today,
                                str(archive), "--out", fresh(f"dask-{workers}")]

    out = {"obvalidate --jobs 2": cli_jobs2, "dask, 1 worker": dask(1), "dask, 2 workers": dask(2)}
    if spark:
        import pyspark

        from conformance.scale import spark as entry

        submit = str(Path(pyspark.__file__).parent / "bin" / "spark-submit")
        out["spark local[2]"] = lambda: [submit, "--master", "local[2]", "--conf", "spark.ui.enabled=false",
                                         entry.__file__, "--today", today, str(archive), "--out", fresh("spark")]
    return out


def bench(lines: int, runs: int, spark: bool) -> dict:
    gen = Payloads(seed=20260701)
    today = gen.spec.example_today
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "PYSPARK_DRIVER_PYTHON": sys.executable}
    with tempfile.TemporaryDirectory(prefix="obvalidate-bench-scale-") as tmp:
        work = Path(tmp)
        archive = work / "archive.jsonl"
        counts = write_mixed_batch(gen, archive, lines, today)
        invalid = sum(n for defect, n in counts.items() if defect is not None)
        which = commands(archive, work, today, spark)
        names = list(which)
        rounds: list[dict[str, dict]] = []
        load = [_load_average()]
        for r in range(runs):
            order = names[r % len(names):] + names[:r % len(names)]
            rounds.append({name: run(which[name](), env) for name in order})
            load.append(_load_average())
        summaries = {name: json.loads((work / out / "summary.json").read_text())
                     for name, out in (("dask, 2 workers", "dask-2"), ("spark local[2]", "spark")) if name in which}
    result = {"lines": lines, "invalid": invalid, "bytes": None, "runs": runs, "load": load, "commands": {}}
    for name in names:
        seconds = [r[name]["seconds"] for r in rounds]
        result["commands"][name] = {
            "seconds": statistics.median(seconds), "seconds_min": min(seconds), "seconds_max": max(seconds),
            "records_per_s": lines / statistics.median(seconds),
            "cpu_seconds": statistics.median(r[name]["cpu_seconds"] for r in rounds),
            "records_per_cpu_s": lines / statistics.median(r[name]["cpu_seconds"] for r in rounds),
            "worker_peak_mb": max(r[name]["worker_peak"] for r in rounds) / 1e6,
            "jvm_peak_mb": max(r[name]["jvm_peak"] for r in rounds) / 1e6,
        }

    def ratio(a: str, b: str, measure: str = "seconds") -> dict:
        values = [r[a][measure] / r[b][measure] for r in rounds]
        return {"median": statistics.median(values), "min": min(values), "max": max(values)}

    result["ratios"] = {"dask 2 workers / --jobs 2 (time; target <= 1.3)": ratio("dask, 2 workers", "obvalidate --jobs 2"),
                        "dask 1 worker / 2 workers (speed-up; target >= 1.7)": ratio("dask, 1 worker", "dask, 2 workers"),
                        "dask 2 workers / --jobs 2 (CPU time)": ratio("dask, 2 workers", "obvalidate --jobs 2", "cpu_seconds")}
    if spark:
        result["ratios"]["spark local[2] / --jobs 2 (time)"] = ratio("spark local[2]", "obvalidate --jobs 2")
        result["ratios"]["spark local[2] / --jobs 2 (CPU time)"] = ratio("spark local[2]", "obvalidate --jobs 2",
                                                                          "cpu_seconds")
    result["summaries"] = {name: s["records"] for name, s in summaries.items()}
    return result


def table(result: dict) -> str:
    out = [f"archive: {result['lines']:,} mixed SEPA lines, {result['invalid']:,} invalid; {result['runs']} paired "
           f"rounds; load average (1 min) before and after each round: "
           + ", ".join(f"{x:.1f}" for x in result["load"] if x is not None), "",
           f"{'command':<22} {'median s':>9} {'min-max s':>13} {'records/s':>10} {'CPU s':>7} {'rec/CPU s':>10} "
           f"{'worker peak MB':>15} {'JVM peak MB':>12}"]
    for name, f in result["commands"].items():
        out.append(f"{name:<22} {f['seconds']:>9.1f} {f['seconds_min']:>6.1f}-{f['seconds_max']:<6.1f} "
                   f"{f['records_per_s']:>10,.0f} {f['cpu_seconds']:>7.1f} {f['records_per_cpu_s']:>10,.0f} "
                   f"{f['worker_peak_mb']:>15.0f} {f['jvm_peak_mb'] or 0:>12.0f}")
    out.append("")
    for name, r in result["ratios"].items():
        out.append(f"{name}: {r['median']:.2f} (min-max {r['min']:.2f}-{r['max']:.2f})")
    for name, records in result["summaries"].items():
        out.append(f"{name}: records {records}")
    return "\n".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lines", type=int, default=1_000_000, help="lines of the archive (issue 30: at least 1M)")
    parser.add_argument("--runs", type=int, default=3, help="paired rounds")
    parser.add_argument("--no-spark", action="store_true", help="leave Spark out (no Java runtime)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    result = bench(args.lines, args.runs, not args.no_spark)
    print(json.dumps(result, indent=2) if args.json else table(result))


if __name__ == "__main__":
    main()
