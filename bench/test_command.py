"""The README's test command, this tree against the tree issue 19 measured, in one run.

    python bench/test_command.py [--baseline da79f9b] [--rounds 1] [--quick] [--keep DIR]

Issue 19 §5 asks ``python run.py test`` to take at most 150 s on this 2-core machine, where it
took 295 s on a fresh clone of the baseline tree (da79f9b: 2,435 tests, one process). The
machine's speed is not the same from day to day (a fixed CPU loop, printed as ``calib``, has
taken from 0.37 s to 1.5 s on it), so this script times both trees in the same run: each is
cloned fresh from this repository into a temporary folder, run once to warm it (its virtual
environment, the real hosts' npm cache, bytecode), then timed ``--rounds`` times, the two
trees interleaved so machine noise falls on both alike. It prints each run's wall time, the
CPU its processes used, the test count and the calibration loop before it, then the ratio of
the medians against the target ratio 150 / 295 = 0.51 (and, with ``--quick``, the quick tier
against 45 / 295 = 0.15).

The shared real samples are passed through ``READINGROOM_SAMPLES`` (default: this checkout's
``../shared/fixtures``). Nothing here touches the network except what the trees' own first
runs install (pip packages, the real hosts' npm packages), as ``python run.py test`` does.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

try:
    import resource
except ImportError:  # Windows: no CPU figure
    resource = None  # type: ignore[assignment]

ROOT = Path(__file__).resolve().parent.parent
BASELINE = "da79f9b"
"""The tree issue 19 timed: ``python run.py test`` 295 s on a fresh clone, 2,435 tests."""
BASELINE_SECONDS = 295.0
TARGET_SECONDS = 150.0
QUICK_TARGET_SECONDS = 45.0


@dataclass
class Run:
    """One timed run of a tree's test command."""

    label: str
    wall: float
    cpu: float | None
    calib: float
    summary: str
    returncode: int


def calibration() -> float:
    """Seconds a fixed CPU loop takes in a new interpreter (how fast the machine is now)."""
    code = ("import time; t = time.perf_counter(); sum(i * i for i in range(10**7)); "
            "print(time.perf_counter() - t)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    return float(done.stdout)


def _children_cpu() -> float | None:
    if resource is None:
        return None
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def clone(revision: str, into: Path) -> Path:
    """A fresh clone of this repository at ``revision`` in ``into``."""
    subprocess.run(["git", "clone", "--quiet", "--no-local", str(ROOT), str(into)], check=True)
    subprocess.run(["git", "-C", str(into), "checkout", "--quiet", revision], check=True)
    return into


def run_tests(label: str, tree: Path, args: list[str], env: dict[str, str]) -> Run:
    """``python run.py test ARGS`` in ``tree``: wall time, CPU of every waited process, summary."""
    calib = calibration()
    cpu_before = _children_cpu()
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "run.py", "test", "-q", "-p", "no:cacheprovider",
                           *args], cwd=tree, env=env, capture_output=True, text=True,
                          errors="replace")
    wall = time.perf_counter() - started
    cpu_after = _children_cpu()
    cpu = None if cpu_before is None or cpu_after is None else cpu_after - cpu_before
    summaries = [line for line in done.stdout.splitlines()
                 if re.search(r"\d+ (passed|failed)", line)]
    summary = summaries[-1].strip("= ") if summaries else f"no summary (exit {done.returncode})"
    if done.returncode != 0:
        print(done.stdout[-3000:], done.stderr[-2000:], sep="\n", file=sys.stderr)
    return Run(label, wall, cpu, calib, summary, done.returncode)


def show(run: Run) -> None:
    """One line per run."""
    cpu = "" if run.cpu is None else f", {run.cpu:.0f} CPU-s"
    print(f"  {run.label:9s} {run.wall:7.1f} s{cpu} (calib {run.calib:.2f}) — {run.summary}",
          flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--baseline", default=BASELINE, help="the tree to compare against")
    parser.add_argument("--head", default="HEAD", help="the tree to time (default HEAD)")
    parser.add_argument("--rounds", type=int, default=1, help="timed runs of each tree")
    parser.add_argument("--quick", action="store_true",
                        help="also time this tree's quick tier (run.py test --quick)")
    parser.add_argument("--no-warmup", action="store_true",
                        help="skip the warming run (the clones' environments start cold)")
    parser.add_argument("--keep", type=Path,
                        help="clone into this folder and keep it (default: a temporary one)")
    args = parser.parse_args()
    samples = os.environ.get("READINGROOM_SAMPLES") or str(ROOT.parent / "shared" / "fixtures")
    env = {**os.environ, "READINGROOM_SAMPLES": samples, "PYTHONUTF8": "1"}
    for name in ("READINGROOM_TEST_FORK", "READINGROOM_TEST_WORKERS"):
        env.pop(name, None)  # each tree runs as its README says, on this machine's defaults
    work = args.keep or Path(tempfile.mkdtemp(prefix="readingroom-bench-"))
    try:
        trees = {"baseline": clone(args.baseline, work / "baseline"),
                 "this": clone(args.head, work / "this")}
        print(f"baseline {args.baseline}, this tree {args.head}; samples {samples}; "
              f"{os.cpu_count()} CPUs", flush=True)
        if not args.no_warmup:
            print("warming (first run of each fresh clone: venv, hosts, bytecode):", flush=True)
            for label, tree in trees.items():
                show(run_tests(label, tree, [], env))
        runs: dict[str, list[Run]] = {label: [] for label in trees}
        quick: list[Run] = []
        for round_no in range(1, args.rounds + 1):
            print(f"round {round_no}:", flush=True)
            for label, tree in trees.items():
                runs[label].append(run_tests(label, tree, [], env))
                show(runs[label][-1])
            if args.quick:
                quick.append(run_tests("quick", trees["this"], ["--quick"], env))
                show(quick[-1])
        baseline = statistics.median(r.wall for r in runs["baseline"])
        this = statistics.median(r.wall for r in runs["this"])
        target = TARGET_SECONDS / BASELINE_SECONDS
        print(f"this tree / baseline: {this / baseline:.2f}x (target <= {target:.2f}x, "
              f"{TARGET_SECONDS:.0f} s against the {BASELINE_SECONDS:.0f} s issue 19 measured)")
        failed = any(r.returncode != 0 for r in runs["this"] + quick)
        ok = this / baseline <= target
        if quick:
            quick_wall = statistics.median(r.wall for r in quick)
            quick_target = QUICK_TARGET_SECONDS / BASELINE_SECONDS
            print(f"quick tier / baseline: {quick_wall / baseline:.2f}x "
                  f"(target <= {quick_target:.2f}x)")
            ok = ok and quick_wall / baseline <= quick_target
        return 0 if ok and not failed else 1
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
