"""`python -m looplab.grade`: the command line. It parses the arguments, builds GradingOptions, calls
grading.grade, and writes the gradebook and the exports asked for (exports/)."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
from dataclasses import replace
from pathlib import Path

from .. import language
from ..catalogue import words
from .exports.asked import Asked, write_exports
from .exports.canvas import DEFAULT_MISSING, MISSING
from .exports.gradescope import VISIBILITIES
from .exports.spreadsheet import write_csv
from .exports.terminal import summary_table
from .grading import GradingOptions, UsageError, grade
from .kernels.capacity import default_jobs
from .kernels.sandbox import ISOLATIONS, IsolationUnavailable, choose
from .rows.class_gradebook import class_rows
from .rows.class_results import duplicates
from .rows.roster import RosterError, read_roster
from .rows.unmatched import WORDS as UNMATCHED_WORDS, UNMATCHED_FILE, MatchError, not_graded, read_matches
from .shared.limits import DEFAULT_CELL_TIMEOUT, DEFAULT_TIMEOUT, KERNEL_MEMORY

DEFAULT_OUT = "graded/grades.csv"
WORDS = words(__file__)  # texts/__main__.toml: the closing line, in the report's language


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
    parser.add_argument("--lang", choices=language.LANGUAGES,
                        help="the language of the gradebook's words, the table, the report and the exports (default: "
                             "the notebooks' when they all agree, else en); each notebook is judged, and its feedback "
                             "written, in its own language")
    exports = parser.add_argument_group("exports")
    exports.add_argument("--report", metavar="FILE", help="also write the class report, one HTML page, here")
    exports.add_argument("--canvas", metavar="FILE", help="also write a Canvas gradebook CSV here (needs --roster: Canvas's own gradebook "
                              "export, whose ids Canvas's import matches)")
    exports.add_argument("--roster", metavar="FILE",
                         help="the class: a class list (id, name, email) or a Canvas gradebook export; the gradebook "
                              "then has every student and every notebook, missing ones 'not submitted'")
    exports.add_argument("--canvas-missing", choices=sorted(MISSING), default=DEFAULT_MISSING,
                         help=f"a notebook a student did not hand in, in the Canvas file: zero (0 points, as in the "
                              f"gradebook) or blank (an empty cell, which Canvas leaves out of Current Score) "
                              f"(default: {DEFAULT_MISSING})")
    exports.add_argument("--match", metavar="FILE",
                         help=f"who the learners not on the roster are: the {UNMATCHED_FILE} a run with --roster wrote "
                              "beside the gradebook, its 'student' column filled in (needs --roster)")
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
    if args.match and not args.roster:
        parser.error("--match needs --roster: it says which student of the roster each learner is")
    try:
        roster = read_roster(Path(args.roster)) if args.roster else None
        matches = read_matches(Path(args.match), roster) if args.match else {}
    except (RosterError, MatchError) as error:
        parser.error(str(error))
    if matches:
        roster = roster.with_matches(matches)

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
                             one_learner=args.one_submission, single=bool(args.gradescope), lang=args.lang)
    try:
        result = grade(args.submissions, options)
    except UsageError as error:
        parser.error(str(error))
    except (KeyboardInterrupt, asyncio.CancelledError):  # stopped before grading began
        print("\nlooplab.grade: stopped; no gradebook written", file=sys.stderr)
        return 130
    elapsed = time.monotonic() - started
    with language.using(result.language):  # the rows' language: every export and line below speaks it
        return _written(args, result, roster, matches, isolation, elapsed)


def _written(args, result, roster, matches, isolation, elapsed: float) -> int:
    """The gradebook and the exports asked for, the notes and the table: what a run leaves."""
    rows, gradebook, graded = result.rows, result.rows, result.rows
    if roster is not None:
        rows, gradebook = class_rows(result.rows, roster)
        result = replace(result, rows=rows)
    write_csv(gradebook, Path(args.out))
    asked = Asked(args.wide, args.canvas, args.report, args.gradescope, args.gradescope_visibility, args.canvas_missing,
                  str(Path(args.out).parent / UNMATCHED_FILE) if roster is not None else None, args.roster or "")
    notes = list(result.notes) + [duplicate.note() for duplicate in duplicates(rows)]
    notes += [group.note() for group in result.identical]
    notes += [f"{row.learner} ({row.file}): {row.review}" for row in result.rows if row.review]
    unknown = not_graded(matches, graded)
    notes += [UNMATCHED_WORDS("not_graded", learners=", ".join(unknown))] if unknown else []
    notes += write_exports(asked, result.rows, result.feedback, roster, elapsed, isolation, result.identical, graded)
    for note in notes:
        print(f"looplab.grade: {note}", file=sys.stderr)
    if not args.quiet:
        graded = result.submissions
        print(summary_table(result.rows))
        print("\n" + WORDS("graded", graded=graded, elapsed=f"{elapsed:.1f}", each=f"{elapsed / max(graded, 1):.2f}",
                           jobs=args.jobs, out=args.out)
              + (WORDS("feedback", folder=args.feedback) if args.feedback else "")
              + "".join(f"; {name}: {path}" for name, path in asked.written()))
    return 130 if result.stopped else 0


if __name__ == "__main__":
    code = main()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)  # everything is written; skip tearing down thousands of modules (half a second)
