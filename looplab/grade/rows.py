"""From a run to rows: what the grader's cells reported, turned into a status per exercise.

The status vocabulary lives here (see the package docstring); nothing in this module runs code.
"""

from __future__ import annotations

import re
from typing import Any

from .course import Exercise, _exercise_of
from .gradebook import Row, _cells, _names
from .outcome import Outcome
from .plan import Plan, Step

_SYNTAX = re.compile(r"^(?P<message>.*) \((?P<file>[^()]*), line (?P<line>\d+)\)$", re.DOTALL)
SYNTAX_ERRORS = ("SyntaxError", "IndentationError", "TabError")


def _plain_syntax_error(evalue: str) -> str:
    """'invalid syntax (1063758517.py, line 1)' -> 'invalid syntax, line 1': the kernel's file name varies."""
    match = _SYNTAX.match(evalue)
    return f"{match['message']}, line {match['line']}" if match else evalue


def _unpack(packed: Any) -> dict[str, str]:
    if not isinstance(packed, str):
        return {}
    return dict(line.split("\t", 1) for line in packed.splitlines() if "\t" in line)


def _tampering(outcome: Outcome) -> str | None:
    """What the notebook changed in the check machinery, in words; None if nothing."""
    if outcome.forged:
        return "an output imitated the grader's own results"
    start = next((p for p in outcome.payloads.values() if p.get("step") == "start"), None)
    if start is None:
        return None
    reference = _unpack(start.get("fingerprint"))
    changed: set[str] = set()
    for payload in outcome.payloads.values():
        for key in ("before", "after"):
            report = payload.get(key)
            if not isinstance(report, dict) or report.get("digest") == start.get("digest"):
                continue
            prints = _unpack(report.get("prints"))
            names = {name for name, value in prints.items() if reference.get(name) != value
                     and not (name not in reference and str(value).startswith("module looplab"))}
            names |= {name for name in reference if name not in prints}
            if not prints:
                changed.add("the grader's fingerprint")
            changed |= names  # empty when the only change is a looplab submodule imported since
    return f"changed while the notebook ran: {_names(sorted(changed))}" if changed else None


def rows_for(plan: Plan, outcome: Outcome) -> list[Row]:
    sub, stem = plan.submission, plan.course.stem

    def row(exercise: Exercise, points: int, status: str, message: str) -> Row:
        return Row(sub.learner, stem, exercise.number, points, exercise.points, status, message, sub.file)

    rows: dict[str, Row] = {}
    for exercise in plan.ungradable:
        rows[exercise.number] = row(exercise, 0, "grader error",
                                    f"no official check, or no name to check, for exercise {exercise.number}")

    def finish() -> list[Row]:
        return [rows[e.number] for e in plan.course.exercises if e.number in rows]

    if outcome.error and not outcome.payloads:
        for exercise in plan.gradable:
            rows[exercise.number] = row(exercise, 0, "grader error", outcome.error)
        return finish()

    start_index = 0
    if start_index in outcome.failures and outcome.died_at is None and outcome.stopped_at is None:
        for exercise in plan.gradable:
            rows[exercise.number] = row(exercise, 0, "could not be graded",
                                        f"the grader's first cell failed: {outcome.failures[start_index]}")
        return finish()

    message = _tampering(outcome)
    if message:
        for exercise in plan.gradable:
            rows[exercise.number] = row(exercise, 0, "tampered with the checks", message)
        return finish()

    def where(index: int) -> str:
        """'cell 12', or which of the grader's cells."""
        origin = plan.origin[index]
        if not isinstance(origin, Step):
            return f"cell {origin}"
        if origin.exercises:
            return f"the check of exercise {', '.join(e.number for e in origin.exercises)}"
        return f"the grader's {'first' if origin.kind == 'start' else 'last'} cell"

    # Where each exercise was graded, in the order the run went.
    steps = [(i, o) for i, o in enumerate(plan.origin) if isinstance(o, Step) and o.exercises]
    graded_order = [e for _, step in steps for e in step.exercises]
    last = graded_order[-1] if graded_order else None

    # Timed-out learner cells: on the first exercise graded after them, else on the last one.
    incidents: dict[str, list[int]] = {}
    for index in outcome.timed_out:
        if isinstance(plan.origin[index], Step):
            continue
        after = next((step for i, step in steps if i > index), None)
        target = after.exercises[0] if after else last
        if target is not None:
            incidents.setdefault(target.number, []).append(plan.origin[index])

    stop_index = outcome.died_at if outcome.died_at is not None else outcome.stopped_at
    for index, step in steps:
        payload = outcome.payloads.get(index)
        for exercise in step.exercises:
            result = (payload or {}).get("results", {}).get(exercise.number) if payload else None
            if result is None:
                if stop_index is not None and index >= stop_index:
                    place = where(stop_index)
                    if outcome.died_at is not None:
                        status = (f"the kernel died (in {place})" if place.startswith("cell ")
                                  else f"the kernel died (during {place})")
                        message = "the kernel exited before this exercise was graded"
                    else:
                        status = f"stopped: the notebook ran past the total limit ({_seconds(plan.total_limit)} s)"
                        message = f"stopped during {place}, before this exercise was graded"
                else:
                    status, message = "could not be graded", \
                        f"the grader's cell failed: {outcome.failures.get(index, 'it showed no result')}"
                rows[exercise.number] = row(exercise, 0, status, message)
                continue
            rows[exercise.number] = _graded_row(plan, exercise, result, row, incidents.get(exercise.number))

    # Something that ended the run after the last exercise was graded: a note on that exercise.
    if stop_index is not None and last is not None and last.number in rows:
        last_row = rows[last.number]
        grading_index = next(i for i, step in steps if last in step.exercises)
        if stop_index > grading_index:
            what = ("the kernel died" if outcome.died_at is not None else "the notebook ran past the total limit")
            note = f"note: {what} during {where(stop_index)}, after the grading"
            last_row.message = f"{last_row.message}; {note}" if last_row.message else note
    return finish()


def _seconds(value: float) -> str:
    return f"{value:g}"


def _graded_row(plan: Plan, exercise: Exercise, result: dict, row, stopped_cells: list[int] | None) -> Row:
    limit = _seconds(plan.cell_limit)
    if result.get("ok") is True:
        row_ = row(exercise, exercise.points, "solved", "")
        if stopped_cells:
            verb = "was" if len(stopped_cells) == 1 else "were"
            row_.message = f"note: {_cells(stopped_cells)} ran past the {limit} s limit and {verb} stopped"
        return row_
    if result.get("missing"):
        status = "not defined"
        message = f"{exercise.name} is not defined where exercise {exercise.number} is graded"
        anchor = next((i for i, cell in reversed(list(enumerate(plan.original.cells)))
                       if _exercise_of(cell) == exercise.number), None)
        executed = plan.notebook.cells[plan.position(anchor + 1)] if anchor is not None else None
        error = next((o for o in (executed.get("outputs", []) if executed else []) if o.get("output_type") == "error"),
                     None)
        if error is not None and error.get("ename") in SYNTAX_ERRORS:
            status = "syntax error"
            message = (f"cell {anchor + 1} does not parse ({_plain_syntax_error(error.get('evalue', ''))}), "
                       f"so {exercise.name} was never defined")
        elif error is not None:
            message += f" (cell {anchor + 1} raised {error.get('ename')}: {error.get('evalue')})"
    elif "error" in result:
        status, message = "not solved", f"the check could not finish: {result['error']}"
    else:
        message = str(result.get("failed") or "the check failed")
        status = "not written yet" if "not written yet" in message else "not solved"
    if stopped_cells:
        status = f"stopped: {_cells(stopped_cells)} ran past the {limit} s limit"
    return row(exercise, 0, status, message)
