"""From a run to rows: what the judge found at each check point, turned into a status per exercise.

The statuses themselves are `Status` (shared/status.py); nothing in this module runs code.
"""

from __future__ import annotations

import re
from typing import Any

from ...course import COURSE, Exercise, exercise_number
from ..kernels.outcome import Outcome
from ..shared.gradebook import Row
from ..shared.status import CheckKind, Status, seconds, stops_text
from ..submissions.plan import GraderCell, Plan

SYNTAX = re.compile(r"^(?P<message>.*) \((?P<file>[^()]*), line (?P<line>\d+)\)$", re.DOTALL)
SYNTAX_ERRORS = ("SyntaxError", "IndentationError", "TabError")
# Why a stopped cell went on running (runner._answers): the words of the rows that say so.
GARBLED = ("the learner's code broke the messages the kernel sends the grader (by replacing json.dumps or "
           "json.loads, say), so nothing after it could be run or graded")
STUCK = "it went on after the interrupt, as code that catches every exception (a bare `except:`) does"
# A stop costs points only once a second run, with every limit doubled, stopped the notebook too (runner.Grader.run).
CONFIRMED = "note: graded a second time with every limit doubled, which stopped it too"


def plain_syntax_error(evalue: str) -> str:
    """'invalid syntax (1063758517.py, line 1)' -> 'invalid syntax, line 1': the kernel's file name varies."""
    match = SYNTAX.match(evalue)
    return f"{match['message']}, line {match['line']}" if match else evalue


def name_list(names: list[str], limit: int = 5) -> str:
    shown = ", ".join(names[:limit])
    return shown + (f" and {len(names) - limit} more" if len(names) > limit else "")


def _place(plan: Plan, index: int) -> str:
    """Where in the run a cell is: 'cell 12' (the learner's numbering), or which of the grader's cells."""
    origin = plan.origin[index]
    if not isinstance(origin, GraderCell):
        return f"cell {origin}"
    if origin.exercises:
        return f"the check of exercise {', '.join(e.id for e in origin.exercises)}"
    return f"the grader's {'first' if origin.step == 'start' else 'last'} cell"


def rows_for(plan: Plan, outcome: Outcome) -> list[Row]:
    """One row per exercise of the notebook, in the manifest's order: the graded ones, and the ones the
    course added after the submission's version (0 of 0 points, so they change neither total nor maximum)."""
    sub = plan.submission
    rows = {row.exercise: row for row in _graded_rows(plan, outcome)}
    for exercise in plan.not_in_version:
        message = f"exercise {exercise.id} was added in course version {COURSE.since(exercise)}; {plan.version.describe()}"
        rows[exercise.id] = Row(sub.learner, plan.course.stem, exercise.id, 0, 0, Status.NOT_IN_VERSION.text(),
                                message, sub.file, plan.version.column)
    if outcome.confirmed:
        for row in rows.values():
            if "stopped" in row.status or "stopped" in row.message:
                row.message = f"{row.message}; {CONFIRMED}" if row.message else CONFIRMED
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
        return every_exercise(Status.NOT_GRADED, f"the grader's first cell failed: {outcome.failures[start_index]}")

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
                    place = _place(plan, stop_index)
                    if outcome.wrote_too_much and outcome.died_at is not None:
                        status = Status.WROTE_TOO_MUCH.text(amount=outcome.wrote_too_much)
                        message = f"the grader stopped the kernel during {place}, before this exercise was graded"
                    elif outcome.died_at is not None:
                        status = Status.KERNEL_DIED.text(where=f"in {place}" if place.startswith("cell ")
                                                         else f"during {place}")
                        message = "the kernel exited before this exercise was graded"
                    elif outcome.garbled_at is not None:
                        status = Status.GARBLED.text(where=f"in {place}" if place.startswith("cell ")
                                                     else f"during {place}")
                        message = GARBLED
                    elif outcome.stuck_at is not None:
                        stops = f"{place} ran past the {seconds(outcome.timed_out[stop_index])} s limit and would not stop"
                        status = Status.CELL_STOPPED.text(stops=stops)
                        message = f"{STUCK}, so the notebook was stopped there, before this exercise was graded"
                    else:
                        status = Status.NOTEBOOK_STOPPED.text(seconds=seconds(plan.total_limit))
                        message = f"stopped during {place}, before this exercise was graded"
                else:
                    status, message = Status.NOT_GRADED.text(), \
                        f"the grader's cell failed: {outcome.failures.get(index, 'it showed no result')}"
                rows[exercise.id] = row(exercise, 0, status, message)
                continue
            rows[exercise.id] = _graded_row(plan, exercise, result, row, incidents.get(exercise.id))

    # Something that ended the run after the last exercise was graded: a note on that exercise.
    if stop_index is not None and last is not None and last.id in rows:
        last_row = rows[last.id]
        grading_index = next(i for i, grader_cell in checks if last in grader_cell.exercises)
        if stop_index > grading_index:
            place = _place(plan, stop_index)
            if outcome.wrote_too_much and outcome.died_at is not None:
                note = (f"note: the notebook wrote {outcome.wrote_too_much} into its folders during {place}, "
                        "after the grading, and was stopped there")
            elif outcome.died_at is not None:
                note = f"note: the kernel died during {place}, after the grading"
            elif outcome.garbled_at is not None:
                note = f"note: the kernel sent messages the grader cannot read during {place}, after the grading"
            elif outcome.stuck_at is not None:
                note = f"note: {place} would not stop ({STUCK}); the notebook was stopped there, after the grading"
            else:
                note = f"note: the notebook ran past the total limit during {place}, after the grading"
            last_row.message = f"{last_row.message}; {note}" if last_row.message else note
    return [rows[e.id] for e in exercises if e.id in rows]


def _graded_row(plan: Plan, exercise: Exercise, result: dict, row,
                stopped_cells: list[tuple[int, float]] | None) -> Row:
    """The row of an exercise the grader's check cell reported on: by the kind of what it found."""
    kind = CheckKind(result.get("kind"))
    if kind is CheckKind.SOLVED:
        solved = row(exercise, exercise.points, Status.SOLVED.text(), "")
        if stopped_cells:
            verb = "was" if len(stopped_cells) == 1 else "were"
            solved.message = f"note: {stops_text(stopped_cells)} and {verb} stopped"
        return solved
    if kind is CheckKind.UNDEFINED:
        status = Status.NOT_DEFINED
        message = f"{exercise.name} is not defined where exercise {exercise.id} is graded"
        anchor = next((i for i, cell in reversed(list(enumerate(plan.original.cells)))
                       if exercise_number(cell) == exercise.id), None)
        executed = plan.notebook.cells[plan.position(anchor + 1)] if anchor is not None else None
        error = next((o for o in (executed.get("outputs", []) if executed else []) if o.get("output_type") == "error"),
                     None)
        if error is not None and error.get("ename") in SYNTAX_ERRORS:
            status = Status.SYNTAX_ERROR
            message = (f"cell {anchor + 1} does not parse ({plain_syntax_error(error.get('evalue', ''))}), "
                       f"so {exercise.name} was never defined")
        elif error is not None:
            message += f" (cell {anchor + 1} raised {error.get('ename')}: {error.get('evalue')})"
    elif kind is CheckKind.CRASHED:
        status, message = Status.NOT_SOLVED, f"the check could not finish: {result.get('message')}"
    else:
        status = {CheckKind.NOT_WRITTEN: Status.NOT_WRITTEN, CheckKind.COURSE_CODE: Status.COURSE_CODE}.get(
            kind, Status.NOT_SOLVED)
        message = str(result.get("message") or "the check failed")
    text = status.text()
    if stopped_cells:
        text = Status.CELL_STOPPED.text(stops=stops_text(stopped_cells))
    graded = row(exercise, 0, text, message)
    graded.hint = str(result.get("hint") or "") if kind is not CheckKind.CRASHED else ""
    return graded
