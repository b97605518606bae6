"""Grading, from the paths an instructor gives to the gradebook's rows: the one way to grade.

The command line (`python -m looplab.grade`) builds GradingOptions and calls `grade`; so does
anything else that grades. Each submission goes through the stages in their order: found and read
(submissions/; or Ungradable: one row), planned, run in a fresh kernel (kernels/) whose check points
the judgement judges (judgement/; handed to the runner here), turned into rows (rows/), its feedback
written (exports/). The kernel template is forked before the event loop starts (see
ForkServer.spawn), so the order in `grade` matters.
"""

from __future__ import annotations

import asyncio
import os
import signal
import threading
from dataclasses import dataclass, field, replace
from pathlib import Path

from .. import language
from ..catalogue import words
from ..course import COURSE
from .exports.feedback import write_feedback
from .exports.terminal import GradingProgress
from .judgement.course_line import CourseLine
from .judgement.judge import check_point
from .judgement.reference_text import review
from .kernels.runner import Grader
from .kernels.sandbox import Isolation, IsolationUnavailable, choose
from .rows.from_run import rows_for
from .rows.roster import Roster
from .shared.gradebook import Row, Ungradable
from .shared.limits import DEFAULT_CELL_TIMEOUT, DEFAULT_TIMEOUT
from .shared.status import Status
from .submissions.finding import Identical, Submission, collect, identical, not_theirs, submission_order
from .submissions.homes import Found, Homes, HomesError, collect_homes
from .submissions.plan import plan_run
from .submissions.reading import WORDS as READING_WORDS, language_of, load_course, read_submission, spoken

WORDS = words(__file__)  # texts/grading.toml: the notes and rows of a run that did not end as it should


@dataclass(frozen=True)
class GradingOptions:
    jobs: int = 1  # notebooks graded at once, each in its own kernel
    cell_timeout: float = DEFAULT_CELL_TIMEOUT  # seconds a cell may run before it is interrupted
    timeout: float = DEFAULT_TIMEOUT  # seconds a whole notebook may run
    forked: bool = True  # kernels forked from a warm template (Linux; elsewhere always plain)
    isolation: str | Isolation = "auto"  # auto, bwrap, none (kernels/sandbox.choose), or what choose() already said
    feedback: Path | None = None  # where the executed copies with their grade go
    progress: bool = False  # show each graded submission on stderr
    # Gradescope: one submission. `one_learner`: every notebook under the paths is one learner's (an upload,
    # whatever its files are named); `single`: paths holding several learners are refused (a class folder).
    one_learner: bool = False
    single: bool = False
    # The language of the gradebook, the notes and the exports (--lang); None: the notebooks' when they all
    # agree, else English. Each notebook is still judged, and its feedback written, in its own language.
    lang: str | None = None
    # The class (--roster): a feedback notebook is headed by the roster's name for its learner, not by the name of
    # the file or folder it came in.
    roster: Roster | None = None
    # A hub's homes (--homes, submissions/homes.py): a learner per home, named by their hub user; graded with the
    # paths given (which may be none).
    homes: Homes | None = None

    def name(self, learner: str) -> str | None:
        """The roster's name for a learner (its Student column); None without a roster or a match."""
        student = self.roster.student(learner) if self.roster is not None else None
        return student["Student"] if student and student["Student"] else None


@dataclass
class GradingResult:
    rows: list[Row]  # the gradebook, in order (learner, then file)
    submissions: int  # how many were graded
    notes: list[str] = field(default_factory=list)  # for the instructor (e.g. the template failed)
    stopped: bool = False  # interrupted (Ctrl-C, SIGTERM): the submissions not graded have a row saying so
    feedback: dict[str, Path] = field(default_factory=dict)  # a submission's file -> its feedback notebook
    identical: list[Identical] = field(default_factory=list)  # byte-identical submissions of different learners
    language: str = language.SOURCE  # the language of the rows' words (the exports are written in it)


class UsageError(Exception):
    """The paths or options given cannot be graded as asked (nothing was graded)."""


def inside(path: Path, folders: list[Path]) -> bool:
    path = path.resolve()
    return any(path == folder or folder in path.parents for folder in folders)


def grade(paths: list[str], options: GradingOptions) -> GradingResult:
    """Grade the notebooks under these paths. Raises UsageError before grading anything if it can't."""
    try:
        isolation = options.isolation if isinstance(options.isolation, Isolation) else choose(options.isolation)
    except (IsolationUnavailable, ValueError) as error:
        raise UsageError(str(error)) from None
    submissions, homes = found_submissions(paths, options)
    hidden = [Path(p) if Path(p).is_dir() else Path(p).parent for p in paths]
    hidden += list(options.homes.roots) if options.homes is not None else []
    hidden += [options.feedback] if options.feedback is not None else []
    # Every slot starts a kernel template (seconds of CPU: a sandbox's imports), so never more than submissions;
    # in the class's language, so that only a notebook in another one makes its slot start another template.
    grader = Grader(jobs=max(1, min(options.jobs, len(submissions))), judge=check_point,
                    cell_timeout=options.cell_timeout, timeout=options.timeout, forked=options.forked,
                    isolation=isolation, hidden=hidden, language=agreed_language(submissions), line=CourseLine)
    grader.spawn_template()  # now, while this process is single-threaded
    return asyncio.run(_grade(submissions, options, grader, homes))


def found_submissions(paths: list[str], options: GradingOptions) -> tuple[list[Submission], Found | None]:
    """The submissions under the paths and in the hub's homes, in grading order, and what the homes hold (None
    without --homes). A path that is not there, homes that hold no learner of the course, a class given to
    --gradescope, or --feedback among the submissions or in a home, is a UsageError, raised before any kernel or
    template starts."""
    try:
        found = collect(paths, COURSE.stems)
        homes = collect_homes(options.homes, [stem for stem in COURSE.stems if stem in options.homes.notebooks or
                                              not options.homes.notebooks]) if options.homes is not None else None
        found = for_one_submission(found + (homes.submissions if homes else []), options)
    except (FileNotFoundError, HomesError) as error:
        raise UsageError(str(error)) from None
    roots = [Path(p).resolve() for p in paths if Path(p).is_dir()]
    if options.feedback is not None and (inside(options.feedback, roots) or (
            options.homes is not None and options.homes.home_holding(options.feedback, folder=True) is not None)):
        raise UsageError(WORDS("feedback_inside"))
    return sorted(found if options.one_learner else not_theirs(found), key=submission_order), homes


async def _grade(submissions: list[Submission], options: GradingOptions, grader: Grader,
                 homes: Found | None = None) -> GradingResult:
    """The kernel template is already starting: it imports in its own process while this one goes on."""
    try:  # SIGTERM stops the run like Ctrl-C: kernels killed, temporary files removed
        asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, asyncio.current_task().cancel)
    except (NotImplementedError, RuntimeError):
        pass
    template = asyncio.create_task(grader.start())
    await asyncio.sleep(0)
    try:
        course = load_course()
    except BaseException:
        await _close(grader, template)
        raise
    # The rows, the notes and (the command line's) exports speak the report's language; each notebook is
    # judged, and its feedback written, in its own (grade_submission).
    with language.using(options.lang or grader.language):  # the class's: agreed_language, read once in `grade`
        grader.notes += homes.notes() if homes is not None else []  # the homes without the course, named once
        return await _grade_all(submissions, course, options, grader, template)


async def _close(grader: Grader, template: asyncio.Task) -> None:
    """The template started, the kernels and temporary folders gone; a failure to clean up is a note."""
    if not template.done():
        await asyncio.gather(template, return_exceptions=True)
    try:
        await grader.close()
    except Exception as error:
        grader.notes.append(WORDS("failed_to_clean_up", error=f"{type(error).__name__}: {error}"))


async def _grade_all(submissions: list[Submission], course: dict, options: GradingOptions, grader: Grader,
                     template: asyncio.Task) -> GradingResult:
    progress = GradingProgress(len(submissions)) if options.progress else None
    taken: dict[Path, str] = {}  # feedback files written -> the submission's file
    graded: dict[int, list[Row]] = {}  # by the submission's place in `submissions`, as each is done

    async def one(index: int, submission: Submission) -> None:
        try:
            graded[index] = await grade_submission(submission, course, grader, options.feedback, taken,
                                                   options.name(submission.learner))
        except Exception as error:  # the grader's own failure: this submission's row says so, the others go on
            graded[index] = [one_row(submission, Status.GRADER_ERROR, f"{type(error).__name__}: {error}")]
        if progress:
            progress.update(WORDS("progress_label", learner=submission.learner, file=submission.file))

    stopped = False
    not_graded = WORDS("stopped_before_it")
    try:  # each notebook waits for a free slot: the first ones start as soon as one slot is ready
        await asyncio.gather(*(one(index, submission) for index, submission in enumerate(submissions)))
        await template
    except (asyncio.CancelledError, KeyboardInterrupt):  # the gradebook is still written, with what was graded
        stopped = True
        grader.notes.append(WORDS("stopped_before_the_end", graded=len(graded), total=len(submissions)))
    except Exception as error:  # the grader itself failed: still a gradebook, every row it has
        not_graded = WORDS("failed_before_it", error=f"{type(error).__name__}: {error}")
        grader.notes.append(WORDS("grader_failed", graded=len(graded), total=len(submissions)))
    finally:  # whatever happened, the gradebook gets every row graded so far (and a row for each of the rest)
        await _close(grader, template)
    rows = [row for index, submission in enumerate(submissions) for row in graded.get(index) or [
        one_row(submission, Status.GRADER_ERROR, not_graded)]]
    grader.notes += [f"{submission.file}: {READING_WORDS('not_theirs', learner=submission.named_after)}"
                     for submission in submissions if submission.named_after]
    return GradingResult(rows, len(graded), grader.notes, feedback={file: target for target, file in taken.items()},
                         stopped=stopped, identical=identical(submissions, {row.file for row in rows if row.points}),
                         language=language.current())


def agreed_language(submissions: list[Submission]) -> str:
    """The notebooks' language when every readable one speaks it (an all-French class: French), else English."""
    said = {language_of(submission) for submission in submissions} - {None}
    return said.pop() if len(said) == 1 else language.SOURCE


def for_one_submission(submissions: list[Submission], options: GradingOptions) -> list[Submission]:
    """The submissions, as one learner's if `one_learner` says so (named after the folder given, Gradescope's
    `submission`, or the first file's learner); with `single`, refused (UsageError) when they are several
    learners': one Gradescope results.json would merge a class into one."""
    if options.one_learner and submissions:
        first = submissions[0]
        learner = Path(os.path.abspath(first.given)).name if first.given is not None else first.learner
        return [replace(submission, learner=learner) for submission in submissions]
    learners = list(dict.fromkeys(submission.learner for submission in submissions))
    if options.single and len(learners) > 1:
        shown = ", ".join(learners[:5]) + (WORDS("and_more", count=len(learners) - 5) if len(learners) > 5 else "")
        raise UsageError(WORDS("one_submission", count=len(learners), learners=shown))
    return submissions


async def grade_submission(submission: Submission, course: dict, grader: Grader, feedback: Path | None,
                           taken: dict[Path, str], name: str | None = None) -> list[Row]:
    """The rows of one submission, in the current language (the report's); every submission gets its rows,
    even when the grader fails. The notebook is run and judged in its own language (metadata `looplab.lang`:
    its kernel, the checks' words, its feedback notebook), so a French notebook in an English class reads
    French and earns the same points."""
    try:
        # What the grader does with a learner's file (read it, plan its run, its rows and feedback) runs in a thread,
        # never on the event loop that times the other notebooks' cells; the code it parses is bounded (limits.py).
        plan = await asyncio.to_thread(planned, submission, course)
        plan.cell_limit, plan.total_limit = grader.cell_timeout, grader.timeout
        with language.using(plan.language):  # the judge's threads copy this task's context, its language too
            outcome = await grader.run(plan)
            if feedback is not None:
                await asyncio.to_thread(_feedback, feedback, plan, outcome, taken, name)
        return await asyncio.to_thread(graded_rows, plan, outcome)
    except Ungradable as reason:
        return [one_row(submission, reason.status, reason.message, reason.notebook)]
    except Exception as error:
        return [one_row(submission, Status.GRADER_ERROR, f"{type(error).__name__}: {error}")]


_FEEDBACK = threading.Lock()  # feedback files are named one at a time: two learners' never take one name


def _feedback(folder: Path, plan, outcome, taken: dict[Path, str], name: str | None = None) -> None:
    rows = rows_for(plan, outcome)
    with _FEEDBACK:
        write_feedback(folder, plan, outcome, rows, taken, name)


def planned(submission: Submission, course: dict):
    """A submission read and its run planned, in its own language (or Ungradable)."""
    notebook, identified = read_submission(submission, course)
    plan = plan_run(submission, notebook, identified)
    plan.language = spoken(notebook)
    return plan


def graded_rows(plan, outcome) -> list[Row]:
    """The rows of a run, in the report's language (a check's message stays the learner's), reviews flagged."""
    rows = rows_for(plan, outcome)
    flag_reference_text(plan.original, plan.course, rows)
    return rows


def flag_reference_text(notebook, course_notebook, rows: list[Row]) -> None:
    """A `review` note on each row whose exercise cells hold the course's reference code as text (read from the
    notebook file: judgement/reference_text.py); never on "the course's own code", which says it already."""
    exercises = {exercise.id: exercise for exercise in course_notebook.exercises}
    for row in rows:
        if row.exercise in exercises and row.status not in Status.COURSE_CODE.templates() and row.max_points:
            try:
                row.review = review(notebook, exercises[row.exercise], course_notebook)
            except Exception:  # a note the grader could not make never costs the rows their grade
                row.review = ""


def one_row(submission: Submission, status: Status, message: str, notebook: str = "") -> Row:
    """The single row of a submission that could not be graded at all: the exercise empty."""
    return Row(submission.learner, notebook, "", 0, None, status.text(), message, submission.file)
