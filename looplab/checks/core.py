"""How a graded check runs: the learner's code against scenarios, bounded, isolated, explained.

A checker is a plain function `checker(obj, report)` that exercises the learner's object and
calls `report.expect(...)` for each thing it verifies. The first unmet expectation stops the
check; everything met before it is listed as passed. What the learner sees is a short panel
(HTML and text): what passed, the first thing that failed in plain words, and a hint.

Three things keep a check fair:
- isolation: while it runs, the learner's earlier pieces (calculator, run_tool, tool_result...)
  are swapped for the reference ones, so a wrong calculator cannot fail the loop exercise;
- bounds: the scripted model refuses to be called forever, and a wall-clock limit stops code
  that loops without calling it;
- plain words: an exception from the learner's code, or the API's 400 for a history it built,
  becomes the failure message instead of a long traceback.
"""

from __future__ import annotations

import contextlib
import html
import json
import signal
import sysconfig
import threading
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anthropic

from ..rules import check_request
from ..scripted import TooManyCalls

PACKAGE_DIR = Path(__file__).resolve().parent.parent

TIME_LIMIT_SECONDS = 10
MIME_TYPE = "application/vnd.looplab.check+json"


# What a check found, as a word the grader carries to the gradebook (never read from the English message).
SOLVED, NOT_WRITTEN, NOT_SOLVED = "solved", "not_written", "not_solved"


class Failure(Exception):
    """The first unmet expectation of a check: what went wrong, and a hint."""

    def __init__(self, message: str, hint: str = "", kind: str = NOT_SOLVED):
        super().__init__(message)
        self.message = message
        self.hint = hint
        self.kind = kind


class CheckTimeout(BaseException):
    """Raised in the learner's code when it runs past the time limit."""


@dataclass
class Report:
    """What a checker has verified so far, and the situation it is testing now."""

    passed: list[str] = field(default_factory=list)
    situation: str | None = None

    def expect(self, condition: bool, passed: str | None, failed: str, hint: str = "") -> None:
        """Stop the check with `failed` unless `condition` holds; `passed` (if any) is listed."""
        if not condition:
            raise Failure(failed, hint)
        if passed:
            self.passed.append(passed)

    def note(self, passed: str) -> None:
        """List a group of expectations met, e.g. after a whole scenario passed."""
        self.passed.append(passed)


@dataclass
class CheckResult:
    """A check's outcome, shown as a small panel and kept as machine-readable data."""

    exercise: str
    title: str
    points: int
    max_points: int
    passed: list[str]
    failed: str | None = None
    hint: str | None = None
    kind: str = SOLVED  # SOLVED, NOT_WRITTEN or NOT_SOLVED

    @property
    def ok(self) -> bool:
        return self.failed is None

    def as_dict(self) -> dict:
        return {
            "exercise": self.exercise, "points": self.points, "max_points": self.max_points,
            "passed": self.passed, "failed": self.failed, "hint": self.hint, "kind": self.kind,
        }

    def headline(self) -> str:
        mark = "✓" if self.ok else "✗"
        return f"{mark} Exercise {self.exercise} ({self.title}): {self.points}/{self.max_points} points"

    def __repr__(self) -> str:
        lines = [self.headline()]
        lines += [f"  passed: {item}" for item in self.passed]
        if not self.ok:
            lines.append(f"  failed: {self.failed}")
            if self.hint:
                lines.append(f"  hint:   {self.hint}")
            lines.append(f'  more hints: looplab.hint("{self.exercise}")')
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        colour = "#2ca02c" if self.ok else "#d62728"
        items = "".join(f"<li>✓ {html.escape(item)}</li>" for item in self.passed)
        if not self.ok:
            items += f"<li><b>✗ {html.escape(self.failed)}</b></li>"
        hint = ""
        if not self.ok and self.hint:
            hint = (f"<p><b>Hint:</b> {html.escape(self.hint)}<br>"
                    f'<small>More hints: <code>looplab.hint("{html.escape(self.exercise)}")</code></small></p>')
        return (f'<div class="looplab-check" style="border-left:4px solid {colour};padding:2px 8px">'
                f"<b>{html.escape(self.headline())}</b><ul>{items}</ul>{hint}</div>")

    def _repr_mimebundle_(self, include=None, exclude=None):
        return {"text/plain": repr(self), "text/html": self._repr_html_(), MIME_TYPE: self.as_dict()}


class CheckFailed(Exception):
    """Ends a check cell with one short line instead of a traceback."""

    def __init__(self, result: CheckResult):
        super().__init__(f"Exercise {result.exercise} is not solved yet: {result.failed}")
        self.result = result

    def _render_traceback_(self) -> list[str]:
        return [f"CheckFailed: {self}"]


@contextlib.contextmanager
def time_limit(seconds: float):
    """Stop the learner's code after `seconds`, where a signal can do it (the main thread)."""
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "setitimer"):
        yield
        return

    def stop(signum, frame):
        raise CheckTimeout()

    previous = signal.signal(signal.SIGALRM, stop)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@contextlib.contextmanager
def isolated(obj: Any, references: dict[str, Any]):
    """Swap the learner's earlier pieces for the reference ones while `obj` is checked."""
    namespace = getattr(obj, "__globals__", None)
    saved = {}
    if namespace is not None:
        for name, reference in references.items():
            if name in namespace and namespace[name] is not obj:
                saved[name] = namespace[name]
                namespace[name] = reference
    try:
        yield
    finally:
        if namespace is not None:
            namespace.update(saved)


def explain(error: BaseException, exercise: str) -> Failure:
    """An exception from the learner's code, in plain words."""
    if isinstance(error, Failure):
        return error
    if isinstance(error, NotImplementedError):
        return Failure(
            "not written yet: the code still raises NotImplementedError",
            "Replace the `raise NotImplementedError(...)` line with your own code, run that cell, then this one.",
            kind=NOT_WRITTEN,
        )
    if isinstance(error, anthropic.BadRequestError):
        return Failure(f"the API rejected the history your code sent (400): {error.api_message}", _rule_hint(error))
    if isinstance(error, TooManyCalls):
        return Failure(
            f"too many model calls: {error}",
            "Call the model only as often as needed: stop when it answers in words, "
            "and never more than the cap (max_iterations) allows.",
        )
    if isinstance(error, CheckTimeout):
        return Failure(
            f"your code was still running after {TIME_LIMIT_SECONDS} seconds, so the check stopped it",
            "Look for a loop that never ends.",
        )
    where = _learner_frame(error)
    return Failure(
        f"your code raised {type(error).__name__}: {error}{where}",
        "Read the error, fix the line it points at, run your cell again, then this one.",
    )


def _rule_hint(error: anthropic.BadRequestError) -> str:
    """The same hint the rules give for that request."""
    try:
        violation = check_request(json.loads(error.request.content))
    except (ValueError, AttributeError):
        violation = None
    if violation is None:
        return "Look at the messages list right before that call: looplab.show_history(messages) shows it."
    return violation.hint


def _learner_frame(error: BaseException) -> str:
    """The last line of the traceback that is not looplab's, the SDK's or Python's own."""
    ours = (str(PACKAGE_DIR), sysconfig.get_paths()["stdlib"], sysconfig.get_paths()["purelib"])
    frames = [f for f in traceback.extract_tb(error.__traceback__) if not f.filename.startswith(ours)]
    if not frames:
        return ""
    frame = frames[-1]
    return f" (at: {frame.line})" if frame.line else ""
