"""The course as the grader sees it: which notebooks, which exercises, checked on which names.

Read from the course manifest (looplab/course.py), which ships in the package: the grader needs no
checkout of the course's repository.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..course import COURSE, Course


@dataclass
class Exercise:
    number: str
    name: str | None  # the object the official check cell passes
    title: str
    points: int | None  # None: no official check for it


@dataclass
class CourseNotebook:
    stem: str
    exercises: list[Exercise]

    @property
    def numbers(self) -> list[str]:
        return [exercise.number for exercise in self.exercises]


def _exercise_of(cell) -> str | None:
    looplab_meta = (cell.get("metadata") or {}).get("looplab")
    number = looplab_meta.get("exercise") if isinstance(looplab_meta, dict) else None
    return str(number) if number is not None else None


def load_course(course: Course = COURSE) -> dict[str, CourseNotebook]:
    """The course notebooks and their exercises, in order."""
    return {
        notebook.stem: CourseNotebook(notebook.stem, [
            Exercise(exercise.id, exercise.name, exercise.title, exercise.points) for exercise in notebook.exercises
        ])
        for notebook in course.notebooks
    }
