"""The course: which notebooks, which exercises, checked on which names.

Read from the official notebooks (solutions/, else notebooks/) so the grader follows the course.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent  # the repository: looplab/grade/ is two levels down
COURSE_DIRS = (ROOT / "solutions", ROOT / "notebooks")


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


def _checked_names(source: str) -> dict[str, str]:
    """`check("2.1", tool_result)` -> {"2.1": "tool_result"}, read from the code, not run."""
    python = "\n".join(line for line in source.splitlines() if not line.lstrip().startswith(("%", "!")))
    try:
        tree = ast.parse(python)
    except SyntaxError:
        return {}
    names = {}
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and len(node.args) >= 2):
            continue
        func = node.func
        called = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
        number, obj = node.args[0], node.args[1]
        if called == "check" and isinstance(number, ast.Constant) and isinstance(number.value, str) \
                and isinstance(obj, ast.Name):
            names[number.value] = obj.id
    return names


def load_course(dirs: tuple[Path, ...] = COURSE_DIRS) -> dict[str, CourseNotebook]:
    """The course notebooks (from solutions/, else notebooks/) and their exercises, in order."""
    import nbformat

    from ..checks import EXERCISES

    course: dict[str, CourseNotebook] = {}
    for folder in dirs:
        for path in sorted(folder.glob("*.ipynb")):
            if path.stem in course:
                continue
            notebook = nbformat.read(path, as_version=4)
            numbers: list[str] = []
            names: dict[str, str] = {}
            for cell in notebook.cells:
                number = _exercise_of(cell)
                if number and number not in numbers:
                    numbers.append(number)
                if cell.cell_type == "code":
                    names.update(_checked_names(cell.source))
            if not numbers:
                continue
            exercises = []
            for number in numbers:
                official = EXERCISES.get(number)
                title = official.title if official else number
                name = names.get(number) or (title if official and title.isidentifier() else None)
                exercises.append(Exercise(number, name, title, official.points if official else None))
            course[path.stem] = CourseNotebook(path.stem, exercises)
    return course
