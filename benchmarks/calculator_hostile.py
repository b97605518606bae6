"""How long the calculator takes on hostile input, against a plain sum, side by side.

The calculator's contract is that no input, however hostile (10,000-digit numbers, 1,000-deep
parentheses, a 1 MB string, `9**9**9`...), costs more than 100 ms: it checks sizes before it parses
and refuses powers outright. The tests check what it answers; this script measures how fast, as the
median of many runs, printed next to the time of `4823 * 1979` and next to the 100 ms budget.

    python benchmarks/calculator_hostile.py [--quick]
"""

import argparse
import statistics
import sys
import time
from pathlib import Path

from looplab.tools import calculator

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from tests.test_tools import HOSTILE  # noqa: E402  (the same inputs the tests check)

BUDGET_SECONDS = 0.1
BASELINE = "4823 * 1979"


def median_seconds(expression: str, runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        calculator(expression)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="few runs: proves the script works")
    runs = 5 if parser.parse_args().quick else 50
    baseline = median_seconds(BASELINE, runs)
    print(f"baseline {BASELINE!r}: {baseline * 1e6:.1f} µs (median of {runs})\n")
    print(f"{'input':<42} {'µs':>10} {'x baseline':>11} {'% of 100 ms':>12}")
    worst = 0.0
    for expression, _ in HOSTILE:
        seconds = median_seconds(expression, runs)
        worst = max(worst, seconds)
        shown = repr(expression) if len(expression) <= 38 else repr(expression[:30]) + f"…({len(expression)})"
        print(f"{shown:<42} {seconds * 1e6:>10.1f} {seconds / baseline:>10.1f}x {seconds / BUDGET_SECONDS:>11.2%}")
    verdict = "met" if worst <= BUDGET_SECONDS else "NOT met"
    print(f"\ntarget: every hostile input under 100 ms: worst {worst * 1e3:.2f} ms, {verdict}")


if __name__ == "__main__":
    main()
