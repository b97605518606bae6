"""The gradebook's rows: one per exercise, or one for a submission that could not be graded.

Its own module because every stage (reading, running, reporting) produces or reads rows.
"""

from __future__ import annotations

from dataclasses import dataclass

from .submissions import Submission

CSV_COLUMNS = ["learner", "notebook", "exercise", "points", "max_points", "status", "message", "file"]


@dataclass
class Row:
    learner: str
    notebook: str
    exercise: str
    points: int
    max_points: int | None
    status: str
    message: str
    file: str

    def as_csv(self) -> list:
        return [self.learner, self.notebook, self.exercise, self.points,
                "" if self.max_points is None else self.max_points, self.status, self.message, self.file]


def _one_row(submission: Submission, status: str, message: str, notebook: str = "") -> list[Row]:
    return [Row(submission.learner, notebook, "", 0, None, status, message, submission.file)]


def _cells(numbers: list[int]) -> str:
    if len(numbers) == 1:
        return f"cell {numbers[0]}"
    return "cells " + ", ".join(str(n) for n in numbers[:-1]) + f" and {numbers[-1]}"


def _names(names: list[str], limit: int = 5) -> str:
    shown = ", ".join(names[:limit])
    return shown + (f" and {len(names) - limit} more" if len(names) > limit else "")
