"""The course version a submission is graded as: the one it names, or the oldest holding all its exercises.

Read from the course manifest (looplab/course.py), which ships in the package: the grader needs no
checkout of the course's repository.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...course import COURSE, Course, Exercise, Notebook, exercise_number, made_with


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
    why: str = ""  # empty when graded as the version it names; else what it names, in words

    @property
    def column(self) -> str:
        """The gradebook's course_version: the version the notebook names, when it is graded as that one;
        empty otherwise (the "not in this version" rows then say why)."""
        return "" if self.why else self.graded_as

    def describe(self) -> str:
        """'this notebook ...', for the message of a "not in this version" row."""
        if not self.why:
            return f"this notebook was made with course version {self.graded_as}"
        return f"this notebook {self.why}; graded as {self.graded_as}, the oldest version holding all its exercise cells"


def submission_version(notebook, course_notebook: Notebook, course: Course = COURSE) -> SubmissionVersion:
    """The version to grade the submission as (see SubmissionVersion)."""
    stated = made_with(notebook)
    numbers = {exercise_number(cell) for cell in notebook.cells}
    floor = course.first_version_with(e for e in course_notebook.exercises if e.id in numbers)
    if stated is None:
        return SubmissionVersion(floor, "names no course version")
    if stated not in course.versions:
        return SubmissionVersion(floor, f"names {unknown_version(stated)}, which this course does not have")
    if course.version_order(stated) < course.version_order(floor):
        return SubmissionVersion(floor, f"names course version {stated} but holds exercise cells added later")
    return SubmissionVersion(stated)


def unknown_version(stated: str) -> str:
    """A version the course does not have, as a message names it: quoted, or left out when it is long."""
    return f"course version {stated!r}" if len(stated) <= 40 else "a course version"


def not_in_version(course_notebook: Notebook, version: str, course: Course = COURSE) -> list[Exercise]:
    """The notebook's exercises the course added after that version."""
    return [exercise for exercise in course_notebook.exercises if not course.exists_in(exercise, version)]
