"""`python -m looplab.grade`: the command line. It builds GradingOptions and calls grading.grade."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
from pathlib import Path

from .grading import GradingOptions, UsageError, grade
from .plan import DEFAULT_CELL_TIMEOUT, DEFAULT_TIMEOUT
from .report import summary_table, write_csv


def _default_jobs() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m looplab.grade",
        description="Grade submitted notebooks offline, each in a fresh kernel, into a CSV gradebook.",
    )
    parser.add_argument("submissions", nargs="+", help="notebook files and folders (a subfolder per learner, or flat)")
    parser.add_argument("--out", default="grades.csv", help="the CSV gradebook to write (default: grades.csv)")
    parser.add_argument("--feedback", metavar="DIR", help="also write each executed notebook, with its grade, here")
    parser.add_argument("--jobs", type=int, default=_default_jobs(), help="notebooks graded at once (default: cores)")
    parser.add_argument("--cell-timeout", type=float, default=DEFAULT_CELL_TIMEOUT,
                        help=f"seconds a cell may run before it is interrupted (default: {DEFAULT_CELL_TIMEOUT})")
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT,
                        help=f"seconds a whole notebook may run (default: {DEFAULT_TIMEOUT})")
    parser.add_argument("--plain-kernels", action="store_true",
                        help="start every kernel from scratch instead of forking it from a template")
    parser.add_argument("--quiet", action="store_true", help="no progress bar and no table")
    args = parser.parse_args(argv)
    if args.jobs < 1:
        parser.error("--jobs must be at least 1")
    missing = [p for p in args.submissions if not Path(p).exists()]
    if missing:
        parser.error(f"no such file or folder: {', '.join(missing)}")

    started = time.monotonic()
    options = GradingOptions(jobs=args.jobs, cell_timeout=args.cell_timeout, timeout=args.timeout,
                             forked=not args.plain_kernels, feedback=Path(args.feedback) if args.feedback else None,
                             progress=not args.quiet)
    try:
        result = grade(args.submissions, options)
    except UsageError as error:
        parser.error(str(error))
    except (KeyboardInterrupt, asyncio.CancelledError):
        print("\nlooplab.grade: stopped; no gradebook written", file=sys.stderr)
        return 130
    elapsed = time.monotonic() - started
    write_csv(result.rows, Path(args.out))
    for note in result.notes:
        print(f"looplab.grade: {note}", file=sys.stderr)
    if not args.quiet:
        graded = result.submissions
        print(summary_table(result.rows))
        print(f"\n{graded} submission(s) graded in {elapsed:.1f} s ({elapsed / max(graded, 1):.2f} s each, "
              f"--jobs {args.jobs}); gradebook: {args.out}"
              + (f"; feedback: {args.feedback}/" if args.feedback else ""))
    return 0


if __name__ == "__main__":
    code = main()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)  # everything is written; skip tearing down thousands of modules (half a second)
