"""Planning a submission's run: where the grader's cells go among the learner's.

Everything about a notebook's run that can be decided before a kernel starts is decided here: the
course version it is graded as (versions.py), and before which cell each exercise is judged (at its
check cell, where the learner's own notebook checks it).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Collection

from ...course import Exercise, Notebook, exercise_number
from ...notebook_source import checked_numbers
from ..shared.limits import DEFAULT_CELL_TIMEOUT, DEFAULT_TIMEOUT
from .finding import Submission
from .versions import SubmissionVersion, not_in_version, submission_version

GRADER_MARK = "looplab_grader"  # cell metadata key of the grader's own cells


@dataclass
class GraderCell:
    """One of the grader's own cells in the run: "start" (the memory watch), "check" (its exercises judged), "end"."""
    step: str  # start, check, end
    exercises: list[Exercise] = field(default_factory=list)


@dataclass
class Plan:
    submission: Submission
    course: Notebook
    original: Any  # the learner's notebook, as read (never written back)
    notebook: Any  # the learner's cells with the grader's cells among them
    origin: list  # per cell of `notebook`: the learner's cell number (1-based), or a GraderCell
    version: SubmissionVersion  # the course version it is graded as
    not_in_version: list[Exercise]  # exercises added after that version: never checked, 0 of 0 points
    cell_limit: float = DEFAULT_CELL_TIMEOUT
    total_limit: float = DEFAULT_TIMEOUT
    language: str = "en"  # the notebook's own (reading.spoken): its kernel speaks it, its checks and feedback too

    def position(self, learner_cell: int) -> int:
        """Where the learner's cell (1-based) sits in the run."""
        return self.origin.index(learner_cell)


def grading_points(notebook, course_notebook: Notebook, skipped: Collection[Exercise] = ()) -> dict[int, list[Exercise]]:
    """Before which learner cell (index; len(cells) for the end) each exercise, but the skipped ones, is graded."""
    cells = notebook.cells
    exercise_cells = {i for i, cell in enumerate(cells) if exercise_number(cell)}
    points: dict[int, list[Exercise]] = {}
    for exercise in course_notebook.exercises:
        if exercise in skipped:
            continue
        own = [i for i, cell in enumerate(cells) if exercise_number(cell) == exercise.id]
        checks = [i for i, cell in enumerate(cells) if cell.cell_type == "code" and exercise.id in checked_numbers(cell.source)]
        if own:
            anchor = own[-1]
            later_checks = [i for i in checks if i > anchor]
            later_exercises = [i for i in exercise_cells if i > anchor]
            point = later_checks[0] if later_checks else min(later_exercises, default=len(cells))
        else:
            point = checks[-1] if checks else len(cells)
        points.setdefault(point, []).append(exercise)
    return points


def _to_run(learner_cell):
    """A learner's cell as the grader runs it: its type and source, nothing else of the file (no metadata, no
    outputs; a cell an attachment or a tag would have the runner treat differently is a cell like any other)."""
    import nbformat

    source = learner_cell.get("source", "")
    source = "".join(source) if isinstance(source, list) else str(source)
    if learner_cell.get("cell_type") == "code":
        return nbformat.v4.new_code_cell(source)
    if learner_cell.get("cell_type") == "markdown":
        return nbformat.v4.new_markdown_cell(source)
    return nbformat.v4.new_raw_cell(source)


def plan_run(submission: Submission, notebook, course_notebook: Notebook) -> Plan:
    import nbformat

    version = submission_version(notebook, course_notebook)
    absent = not_in_version(course_notebook, version.graded_as)
    points = grading_points(notebook, course_notebook, absent)
    cells, origin = [], []

    def add_grader_cell(grader_cell: GraderCell) -> None:
        cell = nbformat.v4.new_code_cell("")
        cell.metadata[GRADER_MARK] = grader_cell.step
        cells.append(cell)
        origin.append(grader_cell)

    add_grader_cell(GraderCell("start"))
    for index, learner_cell in enumerate(list(notebook.cells) + [None]):
        if index in points:
            add_grader_cell(GraderCell("check", points[index]))
        if learner_cell is None:
            break
        cells.append(_to_run(learner_cell))
        origin.append(index + 1)
    add_grader_cell(GraderCell("end"))
    # Nothing of the file handed in steers the run: not its metadata (nbclient skips a cell tagged with its
    # skip tag, runs cells by their metadata's kernel...), only its cells' sources, in order.
    augmented = nbformat.v4.new_notebook(cells=cells)
    return Plan(submission, course_notebook, notebook, augmented, origin, version, absent)
