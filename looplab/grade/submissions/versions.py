"""The course version a submission is graded as: the one it names, or the oldest holding all its exercises.

Read from the course manifest (looplab/course.py), which ships in the package: the grader needs no
checkout of the course's repository.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...catalogue import words
from ...course import COURSE, Course, Exercise, Notebook, exercise_number, made_with

WORDS = words(__file__)  # texts/versions.toml: why a notebook is graded as another version, in words


@dataclass(frozen=True)
class SubmissionVersion:
    """Which course version a submission is graded as, and why.

    The version it names, when the course has it. A notebook naming none (made before notebooks
    carried one, or its metadata stripped) or one the course never had, or holding an exercise cell
    added after the version it names, is graded as the oldest version holding every exercise it has
    a cell for: an exercise added later than that is "not in this version" (0 of 0 points), so
    nothing it could not have done counts against it, and nothing it did is left out.
    """

    graded_as: str
    reason: str = ""  # empty when graded as the version it names; else "none", "unknown" or "later" (see `why`)
    stated: str = ""  # the version it names, if any

    @property
    def why(self) -> str:
        """What it names, in words (in the current language); empty when it is graded as that version."""
        if not self.reason:
            return ""
        return WORDS(f"names_{self.reason}", version=unknown_version(self.stated), stated=self.stated)

    @property
    def column(self) -> str:
        """The gradebook's course_version: the version the notebook names, when it is graded as that one;
        empty otherwise (the "not in this version" rows then say why)."""
        return "" if self.reason else self.graded_as

    def describe(self) -> str:
        """'this notebook ...', for the message of a "not in this version" row."""
        if not self.reason:
            return WORDS("made_with", version=self.graded_as)
        return WORDS("graded_as", why=self.why, version=self.graded_as)


def submission_version(notebook, course_notebook: Notebook, course: Course = COURSE) -> SubmissionVersion:
    """The version to grade the submission as (see SubmissionVersion)."""
    stated = made_with(notebook)
    numbers = {exercise_number(cell) for cell in notebook.cells}
    floor = course.first_version_with(e for e in course_notebook.exercises if e.id in numbers)
    if stated is None:
        return SubmissionVersion(floor, "none")
    if stated not in course.versions:
        return SubmissionVersion(floor, "unknown", stated)
    if course.version_order(stated) < course.version_order(floor):
        return SubmissionVersion(floor, "later", stated)
    return SubmissionVersion(stated)


def unknown_version(stated: str) -> str:
    """A version the course does not have, as a message names it: quoted, or left out when it is long."""
    return WORDS("unknown_version", stated=repr(stated)) if len(stated) <= 40 else WORDS("a_version")


def not_in_version(course_notebook: Notebook, version: str, course: Course = COURSE) -> list[Exercise]:
    """The notebook's exercises the course added after that version."""
    return [exercise for exercise in course_notebook.exercises if not course.exists_in(exercise, version)]
