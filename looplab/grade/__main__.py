"""`python -m looplab.grade`: the command line, and everything together.

The template is forked before the event loop starts (see ForkServer.spawn), so the order here matters.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import sys
import time
from pathlib import Path

from .course import load_course
from .gradebook import Row
from .plan import DEFAULT_CELL_TIMEOUT, DEFAULT_TIMEOUT
from .report import Progress, summary_table, write_csv
from .runner import Grader
from .submissions import collect


def _default_jobs() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def _inside(path: Path, folders: list[Path]) -> bool:
    path = path.resolve()
    return any(path == folder or folder in path.parents for folder in folders)


class UsageError(Exception):
    pass


async def _main(args, grader: Grader) -> tuple[list[Row], list[str], int]:
    """The kernel template is already starting: it imports in its own process while this one loads the course."""
    feedback = grader.feedback
    try:  # SIGTERM stops the run like Ctrl-C: kernels killed, temporary files removed
        asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, asyncio.current_task().cancel)
    except (NotImplementedError, RuntimeError):
        pass
    template = asyncio.create_task(grader.start())
    await asyncio.sleep(0)
    try:
        course = load_course()
        try:
            submissions = collect(args.submissions, list(course))
        except FileNotFoundError as error:
            raise UsageError(str(error)) from None
        roots = [Path(p).resolve() for p in args.submissions if Path(p).is_dir()]
        if feedback is not None and _inside(feedback, roots):
            raise UsageError("--feedback must be outside the submissions: they are never written to")
        grader.progress = None if args.quiet else Progress(len(submissions))
        await template
        rows = await grader.grade(submissions, course)
    finally:
        if not template.done():
            await asyncio.gather(template, return_exceptions=True)
        await grader.close()
    return rows, grader.notes, len(submissions)


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
    forked = not args.plain_kernels and sys.platform.startswith("linux") and hasattr(os, "fork")
    grader = Grader(jobs=args.jobs, cell_timeout=args.cell_timeout, timeout=args.timeout, forked=forked,
                    feedback=Path(args.feedback) if args.feedback else None)
    grader.spawn_template()
    try:
        rows, notes, graded = asyncio.run(_main(args, grader))
    except UsageError as error:
        parser.error(str(error))
    except (KeyboardInterrupt, asyncio.CancelledError):
        print("\nlooplab.grade: stopped; no gradebook written", file=sys.stderr)
        return 130
    elapsed = time.monotonic() - started
    write_csv(rows, Path(args.out))
    for note in notes:
        print(f"looplab.grade: {note}", file=sys.stderr)
    if not args.quiet:
        print(summary_table(rows))
        print(f"\n{graded} submission(s) graded in {elapsed:.1f} s ({elapsed / max(graded, 1):.2f} s each, "
              f"--jobs {args.jobs}); gradebook: {args.out}"
              + (f"; feedback: {args.feedback}/" if args.feedback else ""))
    return 0


if __name__ == "__main__":
    code = main()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)  # everything is written; skip tearing down thousands of modules (half a second)
