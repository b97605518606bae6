"""The class from the gradebook's rows: for each learner, the submission that counts for each notebook.

The Canvas export, the Gradescope results and the class report all read the class this way, from the
rows alone (no kernel, no files), so they agree on one rule: a learner who handed a notebook in more
than once is credited with the better submission (the first one on a tie, in gradebook order). A
submission that could not be graded but whose notebook is known (invalid JSON in
`alice/01_one_tool_call.ipynb`) counts as that notebook handed in, with 0 points; one whose notebook is
unknown counts for no notebook.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..course import COURSE, Course, Notebook
from .gradebook import Row
from .status import Status


@dataclass
class Handed:
    """One learner's submission of one notebook: the file that counts and its rows."""

    learner: str
    notebook: Notebook
    file: str
    rows: list[Row]  # one per exercise, or the single row of a submission that could not be graded

    @property
    def points(self) -> int:
        return sum(row.points for row in self.rows)

    @property
    def max_points(self) -> int:
        return max_points(self.notebook)

    @property
    def graded(self) -> bool:
        """False for a submission that could not be graded at all (its one row has no exercise)."""
        return any(row.exercise for row in self.rows)

    def row(self, exercise_id: str) -> Row:
        """The exercise's row; for a submission that could not be graded, its one row (which says why)."""
        return next((row for row in self.rows if row.exercise == exercise_id), self.rows[0])

    def points_for(self, exercise_id: str) -> int:
        row = self.row(exercise_id)
        return row.points if row.exercise == exercise_id else 0

    def solved(self, exercise_id: str) -> bool:
        row = self.row(exercise_id)
        return row.exercise == exercise_id and row.status == Status.SOLVED.text()


def max_points(notebook: Notebook) -> int:
    return sum(exercise.points for exercise in notebook.exercises)


def by_submission(rows: list[Row]) -> dict[tuple[str, str], list[Row]]:
    """Rows grouped by (learner, file), in gradebook order."""
    groups: dict[tuple[str, str], list[Row]] = {}
    for row in rows:
        groups.setdefault((row.learner, row.file), []).append(row)
    return groups


def counted(rows: list[Row], course: Course = COURSE) -> dict[str, dict[str, Handed]]:
    """learner -> notebook stem -> the submission that counts; learners in gradebook order."""
    notebooks = {notebook.stem: notebook for notebook in course.notebooks}
    learners: dict[str, dict[str, Handed]] = {}
    for (learner, file), group in by_submission(rows).items():
        handed_in = learners.setdefault(learner, {})
        notebook = notebooks.get(group[0].notebook)
        if notebook is None:
            continue
        candidate = Handed(learner, notebook, file, group)
        best = handed_in.get(notebook.stem)
        if best is None or candidate.points > best.points:
            handed_in[notebook.stem] = candidate
    return learners


def ungraded(rows: list[Row]) -> list[Row]:
    """The single rows of submissions that could not be graded at all (broken file, another course...)."""
    return [group[0] for group in by_submission(rows).values() if len(group) == 1 and not group[0].exercise]
