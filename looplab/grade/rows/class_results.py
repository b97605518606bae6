"""The class from the gradebook's rows: for each learner, the submission that counts for each notebook.

The Canvas export, the Gradescope results and the class report all read the class this way, from the
rows alone (no kernel, no files), so they agree on one rule: a learner who handed a notebook in more
than once is credited with the copy handed in last: the later submission by the LMS's numbers, else a
browser's later copy (`... (2).ipynb` after `... (1).ipynb`), else the later in gradebook order
(submissions/lms.handed_order reads that from the file's name). `duplicates` lists such learners. A
submission that could not be graded but whose notebook is known (invalid JSON in
`alice/01_one_tool_call.ipynb`) counts as that notebook handed in, with 0 points; one whose notebook is
unknown counts for no notebook.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...catalogue import words
from ...course import COURSE, Course, Notebook
from ..shared.gradebook import Row
from ..shared.status import Status
from ..submissions.lms import handed_order


WORDS = words(__file__)  # texts/class_results.toml: the note on copies, in the report's language


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
        return row.exercise == exercise_id and row.status in Status.SOLVED.templates()  # in any language


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
        earlier = handed_in.get(notebook.stem)
        if earlier is None or handed_order(candidate.file) >= handed_order(earlier.file):
            handed_in[notebook.stem] = candidate
    return learners


@dataclass
class Duplicate:
    """A notebook one learner handed in more than once: the copy that counts and the others."""

    learner: str
    notebook: str
    counted: str  # its file
    ignored: list[str]  # the other copies' files

    def note(self) -> str:
        return WORDS("copies", learner=self.learner, count=len(self.ignored) + 1, notebook=self.notebook,
                     counted=self.counted, ignored=", ".join(self.ignored))


def duplicates(rows: list[Row], course: Course = COURSE) -> list[Duplicate]:
    """Every (learner, notebook) with more than one graded copy, in gradebook order."""
    files: dict[tuple[str, str], list[str]] = {}
    for (learner, file), group in by_submission(rows).items():
        files.setdefault((learner, group[0].notebook), []).append(file)
    return [Duplicate(learner, stem, handed.file, [file for file in files[learner, stem] if file != handed.file])
            for learner, handed_in in counted(rows, course).items() for stem, handed in handed_in.items()
            if len(files[learner, stem]) > 1]


def ungraded(rows: list[Row]) -> list[Row]:
    """The single rows of submissions that could not be graded at all (broken file, another course...)."""
    return [group[0] for group in by_submission(rows).values() if len(group) == 1 and not group[0].exercise]
