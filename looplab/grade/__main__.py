"""`python -m looplab.grade`: the command line. It builds GradingOptions and calls grading.grade."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
from dataclasses import replace
from pathlib import Path

from .canvas import write_canvas
from .class_gradebook import class_rows, wide_table
from .class_results import duplicates
from .class_report import write_report
from .gradescope import VISIBILITIES, not_isolated, write_results
from .grading import GradingOptions, GradingResult, UsageError, grade
from .limits import DEFAULT_CELL_TIMEOUT, DEFAULT_TIMEOUT, KERNEL_MEMORY
from .report import summary_table, write_csv
from .roster import Roster, RosterError, read_roster
from .sandbox import ISOLATIONS, Isolation, IsolationUnavailable, choose
from .spreadsheet import write_csv_rows

DEFAULT_OUT = "graded/grades.csv"


def available_memory() -> int | None:
    """Bytes of memory free for new work (Linux: MemAvailable), else the machine's memory, else None."""
    try:
        with open("/proc/meminfo", encoding="ascii") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        pass
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        return None


def default_jobs(cores: int | None = None, memory: int | None = None) -> int:
    """One job per core, but no more than the memory holds at one kernel's cap each (KERNEL_MEMORY): a class
    whose every notebook loops filling memory then stays within the machine, on a laptop too."""
    if cores is None:
        try:
            cores = len(os.sched_getaffinity(0))
        except AttributeError:
            cores = os.cpu_count() or 1
    memory = available_memory() if memory is None else memory
    by_memory = max(1, memory // KERNEL_MEMORY) if memory else cores
    return max(1, min(cores, by_memory))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m looplab.grade",
        description="Grade submitted notebooks offline, each in a fresh kernel, into a CSV gradebook "
                    "(and, if asked, a class report, a Canvas CSV, Gradescope's results.json).",
    )
    parser.add_argument("submissions", nargs="+", help="notebook files and folders (a subfolder per learner, or flat)")
    parser.add_argument("--out", default=DEFAULT_OUT,
                        help=f"the CSV gradebook to write (default: {DEFAULT_OUT}; the course's .gitignore keeps graded/ "
                             "out of git)")
    parser.add_argument("--feedback", metavar="DIR", help="also write each executed notebook, with its grade, here")
    parser.add_argument("--jobs", type=int, default=default_jobs(),
                        help=f"notebooks graded at once (default: one per core, at most one per {KERNEL_MEMORY >> 30} GB of free "
                             "memory)")
    parser.add_argument("--cell-timeout", type=float, default=DEFAULT_CELL_TIMEOUT,
                        help=f"seconds a cell may run before it is interrupted (default: {DEFAULT_CELL_TIMEOUT})")
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT,
                        help=f"seconds a whole notebook may run (default: {DEFAULT_TIMEOUT})")
    parser.add_argument("--plain-kernels", action="store_true",
                        help="start every kernel from scratch instead of forking it from a template")
    parser.add_argument("--isolation", choices=ISOLATIONS, default="auto",
                        help="run each kernel in a bubblewrap sandbox (bwrap: fail where it cannot run; auto, the "
                             "default: where it can, else say so first and grade without; none: never)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar and no table")
    exports = parser.add_argument_group("exports")
    exports.add_argument("--report", metavar="FILE", help="also write the class report, one HTML page, here")
    exports.add_argument("--canvas", metavar="FILE", help="also write a Canvas gradebook CSV here (needs --roster)")
    exports.add_argument("--roster", metavar="FILE",
                         help="the class: a class list (id, name, email) or a Canvas gradebook export; the gradebook "
                              "then has every student and every notebook, missing ones 'not submitted'")
    exports.add_argument("--wide", metavar="FILE",
                         help="also write the gradebook one row per learner: each exercise, each notebook, total, maximum")
    exports.add_argument("--gradescope", metavar="FILE",
                         help="also write Gradescope's results.json here: for one submission (one learner's notebooks)")
    exports.add_argument("--one-submission", action="store_true",
                         help="every notebook under the paths is one learner's (Gradescope's upload, whatever its files "
                              "are named): each course notebook counts once, the copy handed in last")
    exports.add_argument("--gradescope-visibility", choices=VISIBILITIES, default="visible",
                         help="when learners see the Gradescope results (default: visible)")
    args = parser.parse_args(argv)
    if args.jobs < 1:
        parser.error("--jobs must be at least 1")
    missing = [p for p in args.submissions if not Path(p).exists()]
    if missing:
        parser.error(f"no such file or folder: {', '.join(missing)}")
    if args.canvas and not args.roster:
        parser.error("--canvas needs --roster: the Canvas gradebook export that lists the class")
    try:
        roster = read_roster(Path(args.roster)) if args.roster else None
    except RosterError as error:
        parser.error(str(error))

    try:
        isolation = choose(args.isolation)
    except IsolationUnavailable as error:
        parser.error(str(error))
    if isolation.note:  # the first thing said: learners' code is about to run as you
        print(f"looplab.grade: {isolation.note}", file=sys.stderr, flush=True)
    started = time.monotonic()
    options = GradingOptions(jobs=args.jobs, cell_timeout=args.cell_timeout, timeout=args.timeout,
                             forked=not args.plain_kernels, isolation=isolation,
                             feedback=Path(args.feedback) if args.feedback else None, progress=not args.quiet,
                             one_learner=args.one_submission, single=bool(args.gradescope))
    try:
        result = grade(args.submissions, options)
    except UsageError as error:
        parser.error(str(error))
    except (KeyboardInterrupt, asyncio.CancelledError):  # stopped before grading began
        print("\nlooplab.grade: stopped; no gradebook written", file=sys.stderr)
        return 130
    elapsed = time.monotonic() - started
    rows, gradebook = result.rows, result.rows
    if roster is not None:
        rows, gradebook = class_rows(result.rows, roster)
        result = replace(result, rows=rows)
    write_csv(gradebook, Path(args.out))
    notes = list(result.notes) + [duplicate.note() for duplicate in duplicates(rows)]
    notes += [group.note() for group in result.identical]
    notes += write_exports(args, result, roster, elapsed, isolation)
    for note in notes:
        print(f"looplab.grade: {note}", file=sys.stderr)
    if not args.quiet:
        graded = result.submissions
        print(summary_table(result.rows))
        print(f"\n{graded} submission(s) graded in {elapsed:.1f} s ({elapsed / max(graded, 1):.2f} s each, "
              f"--jobs {args.jobs}); gradebook: {args.out}"
              + (f"; feedback: {args.feedback}/" if args.feedback else "")
              + "".join(f"; {name}: {path}" for name, path in
                        (("wide", args.wide), ("report", args.report), ("Canvas", args.canvas),
                         ("Gradescope", args.gradescope)) if path))
    return 130 if result.stopped else 0


def write_exports(args, result: GradingResult, roster: Roster | None, elapsed: float,
                  isolation: Isolation = Isolation(True)) -> list[str]:
    """The files asked for beside the gradebook; returns notes for the instructor (who is not on the roster).
    Gradescope's results.json says itself when kernels were not isolated (a learner sees it, not stdout)."""
    notes = []
    if roster is not None:
        not_on_roster = roster.match(list(dict.fromkeys(row.learner for row in result.rows))).not_on_roster
        if not_on_roster:
            notes.append(f"not on the roster (their rows are in the gradebook, under their own names): "
                         f"{', '.join(not_on_roster)}")
    if args.wide:
        header, table = wide_table(result.rows, roster)
        write_csv_rows(Path(args.wide), header, table)
    if args.canvas:
        export = write_canvas(result.rows, roster, Path(args.canvas))
        if export.not_on_roster:  # named above already; this says what it means for the Canvas file
            notes.append(f"so not in {args.canvas}: {', '.join(export.not_on_roster)}")
    if args.report:
        write_report(result.rows, Path(args.report), result.feedback, roster, identical=result.identical)
    if args.gradescope:
        warnings = [] if isolation.sandboxed else [not_isolated(isolation.problem)]
        write_results(result.rows, Path(args.gradescope), elapsed, args.gradescope_visibility, warnings)
    return notes


if __name__ == "__main__":
    code = main()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)  # everything is written; skip tearing down thousands of modules (half a second)
