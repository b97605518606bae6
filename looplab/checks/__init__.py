"""The graded checks: `check("2.2", agent_turn)` after each exercise, `progress()` for the score.

The exercises, their points and what each may lean on come from the manifest (looplab/course.py). Checks
run offline against scripted models, whatever the environment, so every learner and the grader see the same.
"""

import html
import importlib
from typing import Any

from IPython.display import display

from ..course import COURSE, Course, resolve
from ..scripted import TooManyCalls
from . import core
from .core import (
    COURSE_CODE, NOT_SOLVED, NOT_WRITTEN, SAY, CheckFailed, CheckResult, CheckTimeout, Claims, Failure, Report, Session,
    borrowing, explain, is_a_copy_of_the_course, course_version_of, is_the_course_version, isolated, time_limit, time_limit_seconds,
)
from .. import api_shape
from .source import CELL, FUNCTION, latest_definition, stub_left

# Every notebook's checks are imported now, not on first use: the grader judges several notebooks at
# once, each in a thread of its own (looplab/grade/judgement/judge.py), and none should import a module mid-check.
for _notebook in COURSE.notebooks:
    importlib.import_module(_notebook.checks)

_best: dict[str, CheckResult] = {}
_hints_shown: dict[str, int] = {}


def run_check(number: str, obj: Any, course: Course = COURSE, *, session: Session | None = None,
              claims: Claims | None = None) -> CheckResult:
    """Check one exercise and return the result; never raises for anything the learner wrote.

    In a notebook, the cells are IPython's `In`. The grader (looplab/grade/judgement/judge.py) hands in `obj` as a proxy of
    the learner's object in the kernel, the `session` read from the notebook file, and the kernel's `claims`."""
    exercise = course.exercise(number)
    found = core.session() if session is None else session
    cell = latest_definition(found.cells, exercise.name) if found else None
    result = _judge(number, obj, course, found, cell, claims)
    return _with_the_stub_left(result, cell, exercise.name) or result


def _judge(number: str, obj: Any, course: Course, found: Session | None, cell: str | None,
           claims: Claims | None) -> CheckResult:
    """The check itself: the course's own code refused, else the checker's scenarios played.

    In-process (the learner's own notebook), the course's version is one import away: the object checked is
    compared with it, its earlier pieces are swapped for the course's, a clock bounds the check and a tripwire
    notes calls of the course's own version. Under the grader (`claims` given), the kernel that runs the
    learner's code does the swapping and the clock, and holds no course version of any exercise
    (looplab/withheld.py): the course's code runs in the grader, which refuses it while an exercise is judged
    that may not lean on it, and notes the call in `claims.borrowed` (judgement/course_line.py)."""
    exercise = course.exercise(number)
    checker = course.checker(number)
    report = Report(texts=course.texts(number), cell=cell, cells=found.cells if found else None)
    own = resolve(exercise.reference)  # the course's own version: never the learner's answer
    theirs = course_version_of(obj, course) if claims is None else claims.course_version  # another exercise's, maybe
    handed_in = (claims.course_code if claims is not None else is_the_course_version(obj, own) or theirs) or (
        claims is None and cell is not None and is_a_copy_of_the_course(obj, own, exercise.name, found, cell))
    borrowed: list = []
    api_shape.warm()  # the offline API's first use, paid outside the learner's time limit
    try:
        if not handed_in and claims is not None:
            checker(obj, report)
        elif not handed_in:
            references = {name: resolve(target) for name, target in course.earlier_pieces(number).items()}
            with isolated(obj, references), time_limit(*time_limit_seconds()), borrowing(obj, own) as borrowed:
                checker(obj, report)
    except (Exception, CheckTimeout, TooManyCalls, SystemExit) as error:
        failure = explain(error)
        message, hint = failure.message, failure.hint
        if report.situation and not isinstance(error, (Failure, NotImplementedError)):
            message = f"{report.situation}: {message}"
            hint = report.text(report.situation_key).hint or hint  # the point of this situation, not "fix the line"
        refused = claims is not None and claims.borrowed  # the grader refused a call of the course's code: that is why
        if not refused and not (failure.course_code_blind and borrowed):
            return CheckResult(number, exercise.said_title, 0, exercise.points, report.passed, message, hint,
                               failure.kind)
        # A situation the course's own version cannot pass from where it was called (it does not see what the check
        # set up in the learner's namespace), and it was called: the verdict is that, below.
    called = claims.borrowed if claims is not None else borrowed
    if handed_in or called:
        reference = called[0] if claims is not None and called else theirs or exercise.reference
        message = SAY.words("course_code" if handed_in else "course_code_called", name=exercise.name,
                            reference=str(reference).replace(":", "."))
        return CheckResult(number, exercise.said_title, 0, exercise.points, [], message, SAY.text("course_code").hint,
                           COURSE_CODE)
    return CheckResult(number, exercise.said_title, exercise.points, exercise.points, report.passed)


def _with_the_stub_left(result: CheckResult, cell: str | None, name: str) -> CheckResult | None:
    """The stub's `raise NotImplementedError` left in the exercise cell, said before anything else, or None.

    A line left at the cell's top level stops the cell with an error (the lines after it never run)
    even when the answer above it is right: that comes first, unless the answer is not written at all.
    A line left in a function's body matters only when the check reached it, where "not written yet"
    would be wrong: the learner wrote code, and a way through it still ends at the stub's line.
    """
    left = stub_left(cell) if cell is not None else None
    if (left == CELL and result.kind != NOT_WRITTEN) or (left == FUNCTION and result.kind == NOT_WRITTEN):
        key = "stub_left" if left == CELL else "stub_reached"
        return CheckResult(result.exercise, result.title, 0, result.max_points, result.passed,
                           SAY.words(key, name=name), SAY.text(key).hint, NOT_SOLVED)
    return None


def check(number: str, obj: Any) -> None:
    """Check an exercise, show the result, and fail the cell (briefly) if it is not solved."""
    result = run_check(number, obj)
    previous = _best.get(number)
    if previous is None or result.points >= previous.points:
        _best[number] = result
    display(result)
    if not result.ok:
        raise CheckFailed(result)


def hint(number: str) -> None:
    """The exercise's hints, one more each time you ask."""
    hints = COURSE.hints(number)
    shown = min(_hints_shown.get(number, 0) + 1, len(hints))
    _hints_shown[number] = shown
    for index, text in enumerate(hints[:shown], start=1):
        print(SAY.words("hint_number", index=index, count=len(hints), exercise=number, text=text))


class Progress:
    """The learner's score so far, exercise by exercise, for the notebooks checked in this session."""

    def __init__(self, results: dict[str, CheckResult]):
        self.rows = []
        notebooks = {number.split(".")[0] for number in results}
        for exercise in COURSE.exercises:
            if exercise.id.split(".")[0] in notebooks:
                result = results.get(exercise.id)
                status = "status_not_checked" if result is None else (
                    "status_solved" if result.ok else "status_not_solved")
                self.rows.append((exercise.id, exercise.said_title, result.points if result else 0, exercise.points,
                                  SAY.words(status)))
        self.points, self.max_points = sum(row[2] for row in self.rows), sum(row[3] for row in self.rows)

    def __repr__(self) -> str:
        if not self.rows:
            return SAY.words("progress_none")
        lines = [SAY.words("progress", points=self.points, max_points=self.max_points)]
        lines += [f"  {n:<4} {title:<40} {p}/{m}  {status}" for n, title, p, m, status in self.rows]
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        if not self.rows:
            return f"<b>{html.escape(repr(self))}</b>"
        body = "".join(f"<tr><td>{n}</td><td>{html.escape(title)}</td><td>{p}/{m}</td><td>{status}</td></tr>"
                       for n, title, p, m, status in self.rows)
        return (f"<b>{SAY.words('progress', points=self.points, max_points=self.max_points)}</b>"
                f"<table>{SAY.words('progress_header')}{body}</table>")


def progress() -> Progress:
    return Progress(_best)


__all__ = ["CheckFailed", "CheckResult", "Report", "check", "hint", "progress", "run_check"]
