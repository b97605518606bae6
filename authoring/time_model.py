"""How long a typical learner takes over each part of the course: the model behind the workshop plans.

A plan that does not fit its slot is worse than none (the first try-out's run of show added up to 164
minutes for a two-hour workshop), so the minutes are computed, from the notebooks themselves, by a model
stated here and printed in docs/WORKSHOP.md; `make notebooks` re-runs it after every edit.

Each notebook is cut into **stretches**: the cells leading up to one exercise, the exercise itself (its
cell and its check), and after the last exercise the notebook's **tail** (the sections no check grades,
such as writing `agent.py`). A stretch costs

- its prose, at WORDS_PER_MINUTE (technical prose read while running its cells);
- its code cells other than the exercise's, at CELL_SECONDS each (read the code, run it, look at what it
  printed: offline, every cell of the course runs in under a second, so reading dominates);
- for an exercise, EXERCISE_BASE minutes to read the task and try once, plus MINUTES_PER_LINE for each
  line of the solution (non-blank, comments and docstrings left out: what the learner has to write), plus
  MINUTES_PER_INSTRUCTION for each row of the exercise's audit (looplab/checks/audit/*.toml: one per
  instruction its check holds, so one per mistake the learner may have to find and fix).

Calibration: the constants give 9 to 23 minutes for the ten exercises of notebooks 1-4, and 13-14 for
2.2 and 3.3, which the instructor's try-out found took longer than the ten minutes the first run of show
gave every exercise. They are a model, not a measurement: change a constant here and the plans follow.
"""

from __future__ import annotations

import ast
import math
from dataclasses import dataclass

import nbformat

from looplab.course import COURSE, Course, Notebook, looplab_metadata, EXERCISE_KEY

from . import NOTEBOOKS, SOLUTIONS
from .audit import audit_rows

WORDS_PER_MINUTE = 150
CELL_SECONDS = 15
EXERCISE_BASE = 3.0
MINUTES_PER_LINE = 0.3
MINUTES_PER_INSTRUCTION = 0.4


@dataclass(frozen=True)
class Stretch:
    """One part of a notebook a learner works through in one go."""

    notebook: Notebook
    exercise: str | None  # the exercise it ends with; None for the notebook's tail
    words: int  # of prose
    cells: int  # code cells run along the way (not the exercise's own)
    lines: int = 0  # of the exercise's solution
    instructions: int = 0  # audit rows of the exercise

    @property
    def minutes(self) -> int:
        """Whole minutes, rounded up: a plan promises no fractions."""
        exact = self.words / WORDS_PER_MINUTE + self.cells * CELL_SECONDS / 60
        if self.exercise is not None:
            exact += EXERCISE_BASE + self.lines * MINUTES_PER_LINE + self.instructions * MINUTES_PER_INSTRUCTION
        return math.ceil(exact)

    @property
    def graded(self) -> bool:
        return self.exercise is not None

    @property
    def label(self) -> str:
        return self.exercise or f"the rest of {self.notebook.stem}"


def solution_lines(source: str) -> int:
    """Lines a learner writes: not blank, not a comment, not part of a docstring."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return len([line for line in source.splitlines() if line.strip()])
    docstrings = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            docstrings.update(range(node.lineno, node.end_lineno + 1))
    return sum(1 for number, line in enumerate(source.splitlines(), 1)
               if line.strip() and not line.strip().startswith("#") and number not in docstrings)


def stretches(notebook: Notebook, course: Course = COURSE) -> list[Stretch]:
    """The notebook's stretches in order: one per exercise, then its tail if it has one.

    Prose and cells are counted in the learner's copy (what the learner reads and runs); an exercise's
    lines in the solution (what the learner ends up writing)."""
    learner = nbformat.read(NOTEBOOKS / f"{notebook.stem}.ipynb", as_version=4)
    solution = nbformat.read(SOLUTIONS / f"{notebook.stem}.ipynb", as_version=4)
    written = {looplab_metadata(cell).get(EXERCISE_KEY): cell.source for cell in solution.cells}
    found: list[Stretch] = []
    words = cells = 0
    for cell in learner.cells:
        exercise = looplab_metadata(cell).get(EXERCISE_KEY)
        if cell.cell_type == "markdown":
            words += len(cell.source.split())
        elif exercise is None:
            cells += "check" not in cell.metadata.get("tags", [])  # a check cell belongs to its exercise
        else:
            found.append(Stretch(notebook, exercise, words, cells, solution_lines(written.get(exercise, "")),
                                 len(audit_rows(course.exercise(exercise), course))))
            words = cells = 0
    if words or cells:
        found.append(Stretch(notebook, None, words, cells))
    return found


def course_stretches(course: Course = COURSE) -> list[Stretch]:
    return [stretch for notebook in course.notebooks for stretch in stretches(notebook, course)]
