"""`python -m looplab.grade`: the command line. It parses the arguments, builds GradingOptions, calls
grading.grade, and writes the gradebook and the exports asked for (exports/).

It speaks the class's language from its first word: `--lang` (or LOOPLAB_LANG) is read before anything is parsed
(`spoken_from`), so `--help`, argparse's own words (exports/terminal.SpeakingParser) and every refusal before
grading are in it; once graded, the gradebook, the notes, the table and the closing line speak the rows' language
(the notebooks' when --lang is not given and they agree)."""

from __future__ import annotations

import asyncio
import gettext
import os
import sys
import time
from dataclasses import replace
from pathlib import Path

from .. import language
from ..catalogue import words
from ..course import COURSE
from .exports.asked import Asked, write_exports
from .exports.canvas import DEFAULT_MISSING, MISSING, CanvasColumnError, chosen_columns
from .exports.gradescope import VISIBILITIES
from .exports.spreadsheet import write_csv
from .exports.terminal import SpeakingParser, summary_table
from .grading import GradingOptions, UsageError, grade
from .kernels.capacity import default_jobs
from .kernels.sandbox import ISOLATIONS, IsolationUnavailable, choose
from .rows.class_gradebook import class_rows
from .rows.class_results import duplicates
from .rows.roster import WORDS as ROSTER_WORDS, Roster, RosterError, read_roster
from .rows.unmatched import WORDS as UNMATCHED_WORDS, UNMATCHED_FILE, MatchError, not_graded, read_matches
from .shared.limits import DEFAULT_CELL_TIMEOUT, DEFAULT_TIMEOUT, KERNEL_MEMORY
from .shared.numbers import decimal
from .submissions.homes import DEFAULT_FOLDER, WORDS as HOMES_WORDS, Homes, HomesError, checked_folder

DEFAULT_OUT = "graded/grades.csv"
# texts/__main__.toml: --help (the description, the groups, each option's help), the refusals before grading and
# the closing line, in the language the command line speaks.
WORDS = words(__file__)


def spoken_from(argv: list[str]) -> str | None:
    """The language asked for before anything is parsed: `--lang L` or `--lang=L` when L is one of the course's,
    else LOOPLAB_LANG's when it is; None when neither says (then --help is English, and the report speaks the
    notebooks' language)."""
    said = None
    for index, argument in enumerate(argv):
        if argument == "--":
            break
        if argument == "--lang" and index + 1 < len(argv):
            said = argv[index + 1]
        elif argument.startswith("--lang="):
            said = argument.partition("=")[2]
    if said in language.LANGUAGES:
        return said
    from_environment = os.environ.get(language.OVERRIDE, "").strip().lower()
    return from_environment if from_environment in language.LANGUAGES else None


def parser_for(spoken: str | None) -> SpeakingParser:
    """The command line's parser, every word of its --help in the current language (argparse's own in `spoken`)."""
    parser = SpeakingParser(prog="python -m looplab.grade", description=WORDS("description"), add_help=False,
                            spoken=spoken)
    graded = parser.add_argument_group(WORDS("group_grading"))
    # Required unless --homes is given (main says so as argparse would: `required`).
    graded.add_argument("submissions", nargs="*", metavar=WORDS("metavar_submissions"), help=WORDS("help_submissions"))
    graded.add_argument("-h", "--help", action="help", help=WORDS("help_help"))
    graded.add_argument("--homes", action="append", default=[], metavar=WORDS("metavar_folder"),
                        help=WORDS("help_homes"))
    graded.add_argument("--user-prefix", metavar=WORDS("metavar_prefix"), help=WORDS("help_user_prefix"))
    graded.add_argument("--folder", metavar=WORDS("metavar_name"), help=WORDS("help_folder", default=DEFAULT_FOLDER))
    graded.add_argument("--notebook", action="append", default=[], choices=COURSE.stems, metavar="STEM",
                        help=WORDS("help_notebook"))
    graded.add_argument("--out", default=DEFAULT_OUT, metavar=WORDS("metavar_file"),
                        help=WORDS("help_out", default=DEFAULT_OUT))
    graded.add_argument("--feedback", metavar=WORDS("metavar_folder"), help=WORDS("help_feedback"))
    graded.add_argument("--jobs", type=int, default=default_jobs(), metavar="N",
                        help=WORDS("help_jobs", memory=KERNEL_MEMORY >> 30))
    graded.add_argument("--cell-timeout", type=float, default=DEFAULT_CELL_TIMEOUT, metavar="S",
                        help=WORDS("help_cell_timeout", default=decimal(DEFAULT_CELL_TIMEOUT)))
    graded.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, metavar="S",
                        help=WORDS("help_timeout", default=decimal(DEFAULT_TIMEOUT)))
    graded.add_argument("--plain-kernels", action="store_true", help=WORDS("help_plain_kernels"))
    graded.add_argument("--isolation", choices=ISOLATIONS, default="auto", help=WORDS("help_isolation"))
    graded.add_argument("--quiet", action="store_true", help=WORDS("help_quiet"))
    graded.add_argument("--lang", choices=language.LANGUAGES, help=WORDS("help_lang", variable=language.OVERRIDE))
    exports = parser.add_argument_group(WORDS("group_exports"))
    exports.add_argument("--report", metavar=WORDS("metavar_file"), help=WORDS("help_report"))
    exports.add_argument("--canvas", metavar=WORDS("metavar_file"), help=WORDS("help_canvas"))
    exports.add_argument("--canvas-column", action="append", default=[], metavar=WORDS("metavar_column"),
                         help=WORDS("help_canvas_column"))
    exports.add_argument("--roster", metavar=WORDS("metavar_file"), help=WORDS("help_roster"))
    exports.add_argument("--canvas-missing", choices=sorted(MISSING), default=DEFAULT_MISSING,
                         help=WORDS("help_canvas_missing", default=DEFAULT_MISSING))
    exports.add_argument("--match", metavar=WORDS("metavar_file"), help=WORDS("help_match", file=UNMATCHED_FILE))
    exports.add_argument("--wide", metavar=WORDS("metavar_file"), help=WORDS("help_wide"))
    exports.add_argument("--gradescope", metavar=WORDS("metavar_file"), help=WORDS("help_gradescope"))
    exports.add_argument("--one-submission", action="store_true", help=WORDS("help_one_submission"))
    exports.add_argument("--gradescope-visibility", choices=VISIBILITIES, default="visible",
                         help=WORDS("help_gradescope_visibility"))
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    spoken = spoken_from(argv)
    with language.using(spoken or language.SOURCE):  # --help and every refusal before grading
        parser = parser_for(spoken)
        args = parser.parse_args(argv)
        if not args.submissions and not args.homes:
            parser.error(required(parser, WORDS("submissions_or_homes", submissions=WORDS("metavar_submissions"))))
        args.lang = args.lang or spoken  # LOOPLAB_LANG, when --lang is not given, is the teacher's choice too
        roster, matches, isolation, options, started = _ready(parser, args)
    with language.using(spoken or language.SOURCE):
        try:
            result = grade(args.submissions, options)
        except UsageError as error:
            parser.error(str(error))
        except (KeyboardInterrupt, asyncio.CancelledError):  # stopped before grading began
            print("\n" + WORDS("stopped"), file=sys.stderr)
            return 130
    elapsed = time.monotonic() - started
    with language.using(result.language):  # the rows' language: every export and line below speaks it
        return _written(args, result, roster, matches, isolation, elapsed)


def required(parser: SpeakingParser, what: str) -> str:
    """argparse's own words for a missing argument, in the parser's language."""
    with parser.speaking():
        return gettext.gettext("the following arguments are required: %s") % what  # argparse's own `_`


def _ready(parser: SpeakingParser, args):
    """The roster, the match file, the isolation and the options, each refused (parser.error) before grading."""
    if args.jobs < 1:
        parser.error(WORDS("jobs_at_least_one"))
    missing = [p for p in args.submissions + args.homes if not Path(p).exists()]
    if missing:
        parser.error(WORDS("no_such_path", paths=", ".join(missing)))
    homes = _homes(parser, args)
    if args.canvas and not args.roster:
        parser.error(WORDS("canvas_needs_roster"))
    if args.match and not args.roster:
        parser.error(WORDS("match_needs_roster"))
    if args.canvas_column and not args.canvas:
        parser.error(WORDS("column_needs_canvas"))
    try:
        roster = read_roster(Path(args.roster)) if args.roster else None
        matches = read_matches(Path(args.match), roster) if args.match else {}
        args.canvas_columns = chosen_columns(args.canvas_column, roster) if args.canvas_column else {}
    except (RosterError, MatchError, CanvasColumnError) as error:
        parser.error(str(error))
    if matches:
        roster = roster.with_matches(matches)
    try:
        isolation = choose(args.isolation)
    except IsolationUnavailable as error:
        parser.error(str(error))
    if isolation.note:  # the first thing said: learners' code is about to run as you
        print(f"looplab.grade: {isolation.note}", file=sys.stderr, flush=True)
    options = GradingOptions(jobs=args.jobs, cell_timeout=args.cell_timeout, timeout=args.timeout,
                             forked=not args.plain_kernels, isolation=isolation,
                             feedback=Path(args.feedback) if args.feedback else None, progress=not args.quiet,
                             one_learner=args.one_submission, single=bool(args.gradescope), lang=args.lang,
                             roster=roster, homes=homes)
    return roster, matches, isolation, options, time.monotonic()


def _homes(parser: SpeakingParser, args) -> Homes | None:
    """The hub's homes asked for (--homes, --user-prefix, --folder, --notebook), refused before grading when the options do not
    go together, or an output would land in a learner's home (the grader never writes there)."""
    for option, value in (("--user-prefix", args.user_prefix), ("--folder", args.folder),
                          ("--notebook", args.notebook or None)):
        if value is not None and not args.homes:
            parser.error(WORDS("needs_homes", option=option))
    if not args.homes:
        return None
    if args.one_submission:
        parser.error(WORDS("homes_not_one_submission"))
    homes = Homes(tuple(Path(folder) for folder in args.homes), args.user_prefix or "", args.folder or DEFAULT_FOLDER,
                  tuple(args.notebook))
    try:
        checked_folder(homes.folder)
    except HomesError as error:
        parser.error(str(error))
    files = [args.out, str(Path(args.out).parent / UNMATCHED_FILE), args.wide, args.report, args.canvas,
             args.gradescope]
    outputs = [(output, False) for output in files if output] + ([(args.feedback, True)] if args.feedback else [])
    for output, folder in outputs:
        home = homes.home_holding(Path(output), folder)
        if home is not None:
            parser.error(HOMES_WORDS("output_in_a_home", path=output, home=home))
    return homes


def _written(args, result, roster, matches, isolation, elapsed: float) -> int:
    """The gradebook and the exports asked for, the notes and the table: what a run leaves."""
    rows, gradebook, graded = result.rows, result.rows, result.rows
    if roster is not None:
        rows, gradebook = class_rows(result.rows, roster)
        result = replace(result, rows=rows)
    write_csv(gradebook, Path(args.out))
    asked = Asked(args.wide, args.canvas, args.report, args.gradescope, args.gradescope_visibility, args.canvas_missing,
                  str(Path(args.out).parent / UNMATCHED_FILE) if roster is not None else None, args.roster or "",
                  args.canvas_columns)
    notes = list(result.notes) + [duplicate.note() for duplicate in duplicates(rows)]
    notes += [group.note() for group in result.identical]
    notes += [WORDS("review_note", learner=row.learner, file=row.file, review=row.review)
              for row in result.rows if row.review]
    if roster is not None:  # a name two students answer to: matched to neither, and said (roster.py)
        for learner in dict.fromkeys(row.learner for row in graded):
            several = roster.ambiguous(learner)
            notes += [ROSTER_WORDS("ambiguous", learner=learner, count=len(several),
                                   students=", ".join(Roster.key(student) for student in several))] if several else []
    unknown = not_graded(matches, graded)
    notes += [UNMATCHED_WORDS("not_graded", learners=", ".join(unknown))] if unknown else []
    exported = write_exports(asked, result.rows, result.feedback, roster, elapsed, isolation, result.identical, graded)
    notes += exported.notes
    for note in notes:
        print(f"looplab.grade: {note}", file=sys.stderr)
    for error in exported.errors:
        print(f"looplab.grade: {WORDS('error', error=error)}", file=sys.stderr)
    if not args.quiet:
        count = result.submissions
        print(summary_table(result.rows, _names(roster)))
        print("\n" + WORDS("graded", graded=count, elapsed=decimal(elapsed, 1),
                           each=decimal(elapsed / max(count, 1), 2), jobs=args.jobs, out=args.out)
              + (WORDS("feedback", folder=args.feedback) if args.feedback else "")
              + "".join(WORDS("written", what=name, path=path) for name, path in asked.written()
                        if path not in exported.not_written))
    if result.stopped:
        return 130
    return 1 if exported.errors else 0


def _names(roster):
    """How the table names a learner: the roster's name for a student (their rows are keyed by e-mail or login),
    else the learner as graded."""
    if roster is None:
        return None

    def name(learner: str) -> str:
        student = roster.student(learner)
        return student["Student"] if student and student["Student"] else learner
    return name


if __name__ == "__main__":
    code = main()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)  # everything is written; skip tearing down thousands of modules (half a second)
