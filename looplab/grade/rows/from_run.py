"""From a run to rows: what the judge found at each check point, turned into a status per exercise.

The statuses themselves are `Status` (shared/status.py); nothing in this module runs code.
"""

from __future__ import annotations

import re

from ...catalogue import words
from ...course import COURSE, Exercise, exercise_number
from ..kernels.outcome import Outcome
from ..shared.gradebook import Row
from ..shared.limits import WRITE_ENTRIES, WRITE_LIMIT
from ..shared.numbers import integer
from ..shared.status import CheckKind, Status, seconds, stops_text
from ..submissions.plan import GraderCell, Plan

SYNTAX = re.compile(r"^(?P<message>.*) \((?P<file>[^()]*), line (?P<line>\d+)\)$", re.DOTALL)
SYNTAX_ERRORS = ("SyntaxError", "IndentationError", "TabError")
# The rows' words (texts/from_run.toml), in the language the course speaks while the rows are made: the
# notebook's for its feedback, the report's (--lang) for the gradebook. Among them: why a stopped cell went
# on running ("stuck", runner._answers).
WORDS = words(__file__)


def plain_syntax_error(evalue: str) -> str:
    """'invalid syntax (1063758517.py, line 1)' -> 'invalid syntax, line 1': the kernel's file name varies."""
    match = SYNTAX.match(evalue)
    return f"{match['message']}, line {match['line']}" if match else evalue


def name_list(names: list[str], limit: int = 5) -> str:
    shown = ", ".join(names[:limit])
    return shown + (WORDS("and_more", count=len(names) - limit) if len(names) > limit else "")


def _place(plan: Plan, index: int) -> tuple[str, str]:
    """Where in the run a cell is, said after "in" or "during": ('in cell 12', 'cell 12') for a learner's cell
    (their numbering), ('during the check of exercise 1.1', 'the check of exercise 1.1') for the grader's."""
    origin = plan.origin[index]
    if not isinstance(origin, GraderCell):
        place = WORDS("place_cell", number=origin)
        return WORDS("in_place", place=place), place
    if origin.exercises:
        place = WORDS("place_check", exercises=", ".join(e.id for e in origin.exercises))
    else:
        place = WORDS("place_first" if origin.step == "start" else "place_last")
    return WORDS("during_place", place=place), place


def rows_for(plan: Plan, outcome: Outcome) -> list[Row]:
    """One row per exercise of the notebook, in the manifest's order: the graded ones, and the ones the
    course added after the submission's version (0 of 0 points, so they change neither total nor maximum)."""
    sub = plan.submission
    rows = {row.exercise: row for row in _graded_rows(plan, outcome)}
    for exercise in plan.not_in_version:
        message = WORDS("added_later", exercise=exercise.id, since=COURSE.since(exercise),
                        made_with=plan.version.describe())
        rows[exercise.id] = Row(sub.learner, plan.course.stem, exercise.id, 0, 0, Status.NOT_IN_VERSION.text(),
                                message, sub.file, plan.version.column)
    return [rows[e.id] for e in plan.course.exercises if e.id in rows]


def _graded_rows(plan: Plan, outcome: Outcome) -> list[Row]:
    """The rows of the exercises the grader's cells checked (or should have)."""
    sub, stem = plan.submission, plan.course.stem
    exercises = [exercise for exercise in plan.course.exercises if exercise not in plan.not_in_version]

    def row(exercise: Exercise, points: int, status: str, message: str) -> Row:
        return Row(sub.learner, stem, exercise.id, points, exercise.points, status, message, sub.file,
                   plan.version.column)

    def every_exercise(status: Status, message: str) -> list[Row]:
        return [row(exercise, 0, status.text(), message) for exercise in exercises]

    if outcome.error and not outcome.payloads:
        return every_exercise(Status.GRADER_ERROR, outcome.error)

    start_index = 0
    if start_index in outcome.failures and outcome.died_at is None and outcome.stopped_at is None:
        return every_exercise(Status.NOT_GRADED, WORDS("first_cell_failed", why=outcome.failures[start_index]))

    # Where each exercise was graded, in the order the run went.
    checks = [(i, o) for i, o in enumerate(plan.origin) if isinstance(o, GraderCell) and o.exercises]
    graded_order = [e for _, grader_cell in checks for e in grader_cell.exercises]
    last = graded_order[-1] if graded_order else None

    # Timed-out learner cells: on the first exercise graded after them, else on the last one.
    incidents: dict[str, list[tuple[int, float]]] = {}
    for index, limit in outcome.timed_out.items():
        if isinstance(plan.origin[index], GraderCell):
            continue
        after = next((grader_cell for i, grader_cell in checks if i > index), None)
        target = after.exercises[0] if after else last
        if target is not None:
            incidents.setdefault(target.id, []).append((plan.origin[index], limit))

    rows: dict[str, Row] = {}
    stop_index = next((index for index in (outcome.died_at, outcome.garbled_at, outcome.stuck_at, outcome.stopped_at)
                       if index is not None), None)
    for index, grader_cell in checks:
        payload = outcome.payloads.get(index)
        for exercise in grader_cell.exercises:
            result = (payload or {}).get("results", {}).get(exercise.id) if payload else None
            if result is None:
                if stop_index is not None and index >= stop_index:
                    where, place = _place(plan, stop_index)
                    if outcome.wrote_too_much and outcome.died_at is not None:
                        status = Status.WROTE_TOO_MUCH.text(amount=WORDS(f"wrote_{outcome.wrote_too_much}",
                                                                         limit=WRITE_LIMIT >> 20,
                                                                         entries=integer(WRITE_ENTRIES)))
                        message = WORDS("kernel_stopped_during", place=place)
                    elif outcome.died_at is not None:
                        status = Status.KERNEL_DIED.text(where=where)
                        message = WORDS("kernel_exited")
                    elif outcome.garbled_at is not None:
                        status = Status.GARBLED.text(where=where)
                        message = WORDS("garbled")
                    elif outcome.stuck_at is not None:
                        stops = WORDS("would_not_stop", place=place, seconds=seconds(outcome.timed_out[stop_index]))
                        status = Status.CELL_STOPPED.text(stops=stops)
                        message = WORDS("stuck_before", stuck=WORDS("stuck"))
                    else:
                        status = Status.NOTEBOOK_STOPPED.text(seconds=seconds(plan.total_limit))
                        message = WORDS("stopped_during", place=place)
                else:
                    status, message = Status.NOT_GRADED.text(), \
                        WORDS("cell_failed", why=outcome.failures.get(index) or WORDS("no_result"))
                rows[exercise.id] = row(exercise, 0, status, message)
                continue
            rows[exercise.id] = _graded_row(plan, exercise, result, row, incidents.get(exercise.id))

    # Something that ended the run after the last exercise was graded: a note on that exercise.
    if stop_index is not None and last is not None and last.id in rows:
        last_row = rows[last.id]
        grading_index = next(i for i, grader_cell in checks if last in grader_cell.exercises)
        if stop_index > grading_index:
            _, place = _place(plan, stop_index)
            if outcome.wrote_too_much and outcome.died_at is not None:
                note = WORDS("note_wrote_after", place=place, amount=WORDS(f"wrote_{outcome.wrote_too_much}",
                                                                           limit=WRITE_LIMIT >> 20,
                                                                           entries=integer(WRITE_ENTRIES)))
            elif outcome.died_at is not None:
                note = WORDS("note_died_after", place=place)
            elif outcome.garbled_at is not None:
                note = WORDS("note_garbled_after", place=place)
            elif outcome.stuck_at is not None:
                note = WORDS("note_stuck_after", place=place, stuck=WORDS("stuck"))
            else:
                note = WORDS("note_total_after", place=place)
            last_row.message = f"{last_row.message}; {note}" if last_row.message else note
    return [rows[e.id] for e in exercises if e.id in rows]


def _graded_row(plan: Plan, exercise: Exercise, result: dict, row,
                stopped_cells: list[tuple[int, float]] | None) -> Row:
    """The row of an exercise the grader's check cell reported on: by the kind of what it found."""
    kind = CheckKind(result.get("kind"))
    if kind is CheckKind.SOLVED:
        solved = row(exercise, exercise.points, Status.SOLVED.text(), "")
        if stopped_cells:
            solved.message = WORDS("note_stopped_one" if len(stopped_cells) == 1 else "note_stopped_many",
                                   stops=stops_text(stopped_cells))
        return solved
    if kind is CheckKind.UNDEFINED:
        status = Status.NOT_DEFINED
        message = WORDS("not_defined", name=exercise.name, exercise=exercise.id)
        anchor = next((i for i, cell in reversed(list(enumerate(plan.original.cells)))
                       if exercise_number(cell) == exercise.id), None)
        executed = plan.notebook.cells[plan.position(anchor + 1)] if anchor is not None else None
        error = next((o for o in (executed.get("outputs", []) if executed else []) if o.get("output_type") == "error"),
                     None)
        if error is not None and error.get("ename") in SYNTAX_ERRORS:
            status = Status.SYNTAX_ERROR
            message = WORDS("does_not_parse", cell=anchor + 1, error=plain_syntax_error(error.get("evalue", "")),
                            name=exercise.name)
        elif error is not None:
            message += WORDS("cell_raised", cell=anchor + 1, name=error.get("ename"), error=error.get("evalue"))
    elif kind is CheckKind.CRASHED:
        status, message = Status.NOT_SOLVED, WORDS("check_crashed", error=result.get("message"))
    else:
        status = {CheckKind.NOT_WRITTEN: Status.NOT_WRITTEN, CheckKind.COURSE_CODE: Status.COURSE_CODE}.get(
            kind, Status.NOT_SOLVED)
        message = str(result.get("message") or WORDS("check_failed"))
    text = status.text()
    if stopped_cells:
        text = Status.CELL_STOPPED.text(stops=stops_text(stopped_cells))
    graded = row(exercise, 0, text, message)
    graded.hint = str(result.get("hint") or "") if kind is not CheckKind.CRASHED else ""
    return graded
