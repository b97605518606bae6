"""The gradebook's rows: one per exercise, or one for a submission that could not be graded.

Its own module because every stage (reading, running, reporting) produces or reads rows.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...catalogue import words
from .status import Status

# course_version: the course version the submission was made with (see submissions/versions.py); last, so the
# columns before it read as they did before notebooks carried a version.
# hint: what the check suggested to the learner with its message (the words of its catalogue); empty when
# the check passed or did not say. After course_version, so every column before it keeps its place.
# review: a note for the teacher, never points: the exercise's cells hold the course's reference code as text
# (judgement/reference_text.py); empty for every other row. Last, so every column before it keeps its place.
CSV_COLUMNS = ["learner", "notebook", "exercise", "points", "max_points", "status", "message", "file",
               "course_version", "hint", "review"]
# The column names as the class reads them (texts/gradebook.toml, keyed by the English name): a French class's
# gradebook says `apprenant`, `statut`... Programs that read a gradebook back take either (`column_names`).
WORDS = words(__file__)


def csv_columns() -> list[str]:
    """The gradebook's column names in the current language, in CSV_COLUMNS's order."""
    return [WORDS(column) for column in CSV_COLUMNS]


def column_names(column: str) -> set[str]:
    """A column's name in every language of the course, in lower case: 'learner' -> {'learner', 'apprenant'}."""
    return {name.casefold() for name in WORDS.rows[column].values()}


@dataclass
class Row:
    learner: str
    notebook: str
    exercise: str
    points: int
    max_points: int | None
    status: str  # a Status's text
    message: str
    file: str
    course_version: str = ""  # empty for a submission that could not be graded, or naming no version of the course
    hint: str = ""  # the check's hint to the learner, for a check that failed and gave one
    review: str = ""  # for the teacher: the exercise's cells hold the course's reference code (no points taken)

    def as_csv(self) -> list:
        return [self.learner, self.notebook, self.exercise, self.points,
                "" if self.max_points is None else self.max_points, self.status, self.message, self.file,
                self.course_version, self.hint, self.review]


class Ungradable(Exception):
    """A submission that cannot be graded at all (broken file, another course...): it gets one row."""

    def __init__(self, status: Status, message: str, notebook: str = ""):
        super().__init__(f"{status.text()}: {message}")
        self.status, self.message, self.notebook = status, message, notebook
