"""How long does `make notebooks` take on an unchanged course, against a run that runs every notebook?

Why this exists
---------------
`python -m authoring notebooks` is the one step after any edit. It used to run every solution notebook, in
both languages, whatever changed: 45 to 60 seconds on a maintainer's laptop for six notebooks, a minute and a
half at eleven. It now runs a notebook again only when something its outputs depend on changed
(authoring/made_from.py). The issue's target: a no-op run under 10 seconds.

How it measures
---------------
In a copy of the course (what tests/test_regenerate.py copies), side by side, in alternation:

    baseline  python -m authoring notebooks --all   every notebook runs, as before
    no-op     python -m authoring notebooks         nothing changed: no notebook runs

each a new process, as a maintainer runs it. It prints the median wall time of each and their ratio. The
figures are printed, never asserted (they depend on the machine); the script exits with 0. `--quick`: one
round, to prove the script works.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.test_regenerate import copy_of_the_course  # noqa: E402  (the same copy the test makes)


def timed(course: Path, *arguments: str) -> float:
    env = {**os.environ, "PYTHONPATH": str(course)}
    env.pop("ANTHROPIC_API_KEY", None)
    start = time.perf_counter()
    run = subprocess.run([sys.executable, "-m", "authoring", "notebooks", *arguments], cwd=course, env=env,
                         capture_output=True, text=True, timeout=1500)
    elapsed = time.perf_counter() - start
    if run.returncode != 0 or run.stdout.strip() != "nothing changed":
        raise SystemExit(f"the course is not regenerated: run `make notebooks` first\n{run.stdout}{run.stderr[-2000:]}")
    return elapsed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="one round")
    args = parser.parse_args(argv)
    rounds = 1 if args.quick else args.rounds
    with tempfile.TemporaryDirectory() as folder:
        course = copy_of_the_course(Path(folder) / "course")
        every, noop = [], []
        for number in range(rounds):  # alternate, the order swapped every round
            pair = [("every", "--all"), ("noop",)] if number % 2 == 0 else [("noop",), ("every", "--all")]
            for name, *arguments in pair:
                (every if name == "every" else noop).append(timed(course, *arguments))
    baseline, measured = statistics.median(every), statistics.median(noop)
    print(f"make notebooks, {rounds} round(s), median wall time")
    print(f"  every notebook run (--all, the baseline): {baseline:6.1f} s")
    print(f"  nothing changed (no notebook runs):       {measured:6.1f} s")
    print(f"  ratio no-op / baseline:                   {measured / baseline:6.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
