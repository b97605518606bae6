"""The graded checks: `check("2.2", agent_turn)` after each exercise, `progress()` for the score.

Each notebook's exercises live in their own module (notebook1.py ... notebook4.py): scenarios,
the checker, the hints, the points. Checks always run offline, against scripted models, whatever
the environment says, so they behave the same for every learner and for the grader.
"""

from __future__ import annotations

import html
from typing import Any

from .. import loop, tools
from ..client import MODEL
from ..scripted import TooManyCalls
from .core import (
    CheckFailed, CheckResult, CheckTimeout, Exercise, Failure, Report, TIME_LIMIT_SECONDS, explain, isolated,
    time_limit,
)
from . import notebook1, notebook2, notebook3, notebook4

EXERCISES: dict[str, Exercise] = {
    exercise.number: exercise
    for module in (notebook1, notebook2, notebook3, notebook4)
    for exercise in module.EXERCISES
}

# What an exercise's code may lean on from earlier work; during a check these are the reference ones.
REFERENCES: dict[str, Any] = {
    "MODEL": MODEL,
    "calculator": tools.calculator,
    "CALCULATOR_TOOL": tools.CALCULATOR_TOOL,
    "TOOLS": tools.TOOLS,
    "run_tool": tools.run_tool,
    "SYSTEM_PROMPT": loop.SYSTEM_PROMPT,
    "one_shot": loop.one_shot,
    "tool_result": loop.tool_result,
    "run_tools": loop.run_tools,
    "unanswered_tool_uses": loop.unanswered_tool_uses,
    "agent_turn": loop.agent_turn,
}

_best: dict[str, CheckResult] = {}
_hints_shown: dict[str, int] = {}


def run_check(number: str, obj: Any) -> CheckResult:
    """Check one exercise and return the result; never raises for anything the learner wrote."""
    exercise = EXERCISES.get(number)
    if exercise is None:
        raise KeyError(f"There is no exercise {number!r}; the exercises are {', '.join(EXERCISES)}.")
    report = Report()
    try:
        with isolated(obj, REFERENCES, exercise.isolate), time_limit(TIME_LIMIT_SECONDS):
            exercise.checker(obj, report)
    except (Exception, CheckTimeout, TooManyCalls, SystemExit) as error:
        failure = explain(error, number)
        message = failure.message
        if report.situation and not isinstance(error, (Failure, NotImplementedError)):
            message = f"{report.situation}: {message}"
        return CheckResult(number, exercise.title, 0, exercise.points, report.passed, message, failure.hint)
    return CheckResult(number, exercise.title, exercise.points, exercise.points, report.passed)


def check(number: str, obj: Any) -> None:
    """Check an exercise, show the result, and fail the cell (briefly) if it is not solved."""
    result = run_check(number, obj)
    previous = _best.get(number)
    if previous is None or result.points >= previous.points:
        _best[number] = result
    _display(result)
    if not result.ok:
        raise CheckFailed(result)


def hint(number: str) -> None:
    """The exercise's hints, one more each time you ask."""
    exercise = EXERCISES[number]
    shown = min(_hints_shown.get(number, 0) + 1, len(exercise.hints))
    _hints_shown[number] = shown
    for index, text in enumerate(exercise.hints[:shown], start=1):
        print(f"Hint {index}/{len(exercise.hints)} for exercise {number}: {text}")


class Progress:
    """The learner's score so far, exercise by exercise, for the notebooks checked in this session."""

    def __init__(self, results: dict[str, CheckResult]):
        self.rows = []
        notebooks = {number.split(".")[0] for number in results}
        for number, exercise in EXERCISES.items():
            if number.split(".")[0] not in notebooks:
                continue
            result = results.get(number)
            status = "not checked yet" if result is None else ("solved" if result.ok else "not solved yet")
            self.rows.append((number, exercise.title, result.points if result else 0, exercise.points, status))

    @property
    def points(self) -> int:
        return sum(row[2] for row in self.rows)

    @property
    def max_points(self) -> int:
        return sum(row[3] for row in self.rows)

    def __repr__(self) -> str:
        if not self.rows:
            return "Progress: no exercise checked yet in this session."
        lines = [f"Progress: {self.points}/{self.max_points} points"]
        lines += [f"  {n:<4} {title:<40} {p}/{m}  {status}" for n, title, p, m, status in self.rows]
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        if not self.rows:
            return f"<b>{html.escape(repr(self))}</b>"
        body = "".join(
            f"<tr><td>{n}</td><td>{html.escape(title)}</td><td>{p}/{m}</td><td>{status}</td></tr>"
            for n, title, p, m, status in self.rows
        )
        return (f"<b>Progress: {self.points}/{self.max_points} points</b>"
                f"<table><tr><th>exercise</th><th></th><th>points</th><th>status</th></tr>{body}</table>")


def progress() -> Progress:
    return Progress(_best)


def _display(result: CheckResult) -> None:
    try:
        from IPython.display import display
    except ImportError:  # pragma: no cover - IPython ships with the course
        print(repr(result))
        return
    display(result)


__all__ = ["CheckFailed", "CheckResult", "EXERCISES", "Report", "check", "hint", "progress", "run_check"]
