"""The course as the grader sees it: the manifest's notebooks by stem, and a submitted cell's exercise.

Read from the course manifest (looplab/course.py), which ships in the package: the grader needs no
checkout of the course's repository.
"""

from __future__ import annotations

from ..course import COURSE, Course, Notebook


def load_course(course: Course = COURSE) -> dict[str, Notebook]:
    """The course notebooks by stem, in order."""
    return {notebook.stem: notebook for notebook in course.notebooks}


def exercise_number(cell) -> str | None:
    """The exercise a submitted cell says it is (its `looplab.exercise` metadata), read defensively:
    a submission's metadata can hold anything."""
    looplab_meta = (cell.get("metadata") or {}).get("looplab")
    number = looplab_meta.get("exercise") if isinstance(looplab_meta, dict) else None
    return str(number) if number is not None else None
