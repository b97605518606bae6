"""Does a correct notebook get the same grade on a busy machine? The honest fixtures, graded quiet and loaded.

Why this exists
---------------
Graded on a loaded two-core machine (load 7 to 22), a correct notebook 4 once got 0/4, "stopped":
the cell and check limits were wall-clock time. They are CPU time now, with a wall-clock bound a few
times longer (looplab/grade/shared/limits.py), and a stop is not graded again (it was, with doubled limits,
until issue 33). This is the proof: the rows of a loaded run must be byte-identical to a quiet run's.

How it measures
---------------
- The submissions: the honest learners of tests/grading_fixtures/make_fixtures.py (every solution
  notebook, a partial one, the untouched stub, a cell that does not parse, an honest append after the
  last check): what a class of honest learners hands in, right or wrong.
- One quiet run, `python -m looplab.grade submissions --jobs J --out CSV --quiet` at the default limits;
  its gradebook is the reference.
- Then `--rounds` loaded runs (default 10): before each, as many busy processes as 4x the cores (each a
  Python loop that never sleeps, at the grader's own priority), stopped after it. Each loaded gradebook
  is compared byte for byte with the reference; a difference is printed, row by row.

- `--with-hostile`: each loaded run grades the honest learners among every other learner of the fixtures
  (the attacks, the runaway loops, the code too large to read, the stalled check: issue 33), and the honest
  learners' rows are compared with the quiet run's, graded alone: nothing one learner does reaches another's
  row, under load too.

It prints one line per round (time, the machine's load, identical or not) and a verdict; it exits 1 if
any round differed. Not part of the test suite: it takes minutes (a round is a whole class, run on a
machine four times over-subscribed).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from looplab.client import offline_environment

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "grading_fixtures"))
HONEST = ("complete", "partial", "stub", "syntax_error", "honest_append")
BUSY = "while True:\n    pass\n"


def honest_submissions(folder: Path, hostile: bool = False) -> Path:
    """The honest learners in `folder`/submissions; with `hostile`, every other learner of the fixtures too."""
    import make_fixtures

    built = make_fixtures.built()
    target = folder / "submissions"
    for learner in sorted(path.name for path in built.iterdir() if path.is_dir()):
        if learner in HONEST or hostile:
            shutil.copytree(built / learner, target / learner)
    return target


def honest_rows(gradebook: bytes) -> bytes:
    """The gradebook's header and the honest learners' rows (as the quiet run, graded alone, has them)."""
    lines = gradebook.decode().splitlines(keepends=True)
    return ("".join(lines[:1] + [line for line in lines[1:] if line.split(",", 1)[0] in HONEST])).encode()


def grade(workdir: Path, out: Path, jobs: int) -> float:
    env = offline_environment()
    started = time.perf_counter()
    run = subprocess.run([sys.executable, "-m", "looplab.grade", "submissions", "--jobs", str(jobs), "--out", str(out),
                          "--quiet"], cwd=workdir, env=env, capture_output=True, text=True)
    if run.returncode != 0:
        raise RuntimeError(f"the grader failed:\n{run.stderr}")
    return time.perf_counter() - started


def busy(count: int) -> list[subprocess.Popen]:
    return [subprocess.Popen([sys.executable, "-c", BUSY]) for _ in range(count)]


def differences(reference: bytes, loaded: bytes) -> list[str]:
    quiet, busy_rows = reference.decode().splitlines(), loaded.decode().splitlines()
    lines = [f"  quiet:  {a}\n  loaded: {b}" for a, b in zip(quiet, busy_rows) if a != b]
    if len(quiet) != len(busy_rows):
        lines.append(f"  {len(quiet)} rows quiet, {len(busy_rows)} loaded")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=10, help="loaded runs, each compared with the quiet one")
    parser.add_argument("--jobs", type=int, default=2, help="--jobs of every run")
    parser.add_argument("--busy", type=int, default=4 * (os.cpu_count() or 1), help="busy processes (4x the cores)")
    parser.add_argument("--with-hostile", action="store_true",
                        help="loaded runs grade every fixture; the honest learners' rows are compared")
    args = parser.parse_args(argv)
    workdir = Path(tempfile.mkdtemp(prefix="looplab-load-"))
    try:
        honest_submissions(workdir)
        reference = workdir / "quiet.csv"
        seconds = grade(workdir, reference, args.jobs)
        if args.with_hostile:
            shutil.rmtree(workdir / "submissions")
            honest_submissions(workdir, hostile=True)
        print(f"quiet: {seconds:.1f} s, load {os.getloadavg()[0]:.1f}; {len(HONEST)} honest learners"
              f"{' graded alone, then among every other learner of the fixtures' if args.with_hostile else ''}, "
              f"--jobs {args.jobs}, {args.busy} busy processes in each loaded round")
        failed = 0
        for number in range(1, args.rounds + 1):
            loaders = busy(args.busy)
            try:
                time.sleep(2)
                out = workdir / f"loaded-{number}.csv"
                seconds = grade(workdir, out, args.jobs)
                load = os.getloadavg()[0]
            finally:
                for process in loaders:
                    process.kill()
                    process.wait()
            loaded = honest_rows(out.read_bytes()) if args.with_hostile else out.read_bytes()
            found = differences(reference.read_bytes(), loaded)
            failed += bool(found)
            print(f"round {number}: {seconds:.1f} s, load {load:.1f}: {'DIFFERENT' if found else 'identical'}",
                  flush=True)
            for line in found:
                print(line)
        print(f"{args.rounds - failed} of {args.rounds} loaded rounds byte-identical to the quiet run")
        return 1 if failed else 0
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
