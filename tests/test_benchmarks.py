"""The benchmarks still run. Smoke only: timings depend on the machine, so none is asserted."""

import re
import subprocess
import sys
from pathlib import Path

BENCHMARK = Path(__file__).resolve().parent.parent / "benchmarks" / "replay_overhead.py"


def test_replay_overhead_benchmark_runs_and_reports_every_size():
    run = subprocess.run(
        [sys.executable, str(BENCHMARK), "--quick"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    for size in (2, 20, 200):
        # A table row: messages, baseline µs, replay µs, then the ratio, e.g. "      20  554.0  803.1  1.45x".
        row = re.compile(rf"^\s*{size}\s+[\d.]+\s+[\d.]+\s+[\d.]+x\b", re.MULTILINE)
        assert row.search(run.stdout), f"no ratio line for {size} messages in:\n{run.stdout}"


def test_grading_benchmark_runs_and_reports_both_targets():
    script = BENCHMARK.parent / "grading.py"
    run = subprocess.run([sys.executable, str(script), "--quick"], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert re.search(r"^floor: trivial notebook in a fresh kernel.*\d s", run.stdout, re.MULTILINE), run.stdout
    for jobs in (1, 2):
        assert re.search(rf"^forked\s+{jobs}\s+\d+\s+[\d.]+\s+[\d.]+\s+[\d.]+x", run.stdout, re.MULTILINE), run.stdout
    assert run.stdout.count("target:") == 2


def test_calculator_benchmark_runs_and_reports_the_budget():
    script = BENCHMARK.parent / "calculator_hostile.py"
    run = subprocess.run([sys.executable, str(script), "--quick"], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert re.search(r"^target: every hostile input under 100 ms: worst [\d.]+ ms", run.stdout, re.MULTILINE), run.stdout
