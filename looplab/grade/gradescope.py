"""Gradescope's results.json from the gradebook's rows: one test per exercise.

Gradescope runs `grading/gradescope/run_autograder` on each submission, which grades the files in
/autograder/submission with `python -m looplab.grade ... --gradescope /autograder/results/results.json`.
Each exercise of each notebook handed in is a test: `number` its id ("1.2"), `name` its id and title,
`score`/`max_score` its points, `status` passed when solved, `output` the grader's status and the
check's message and hint (the words the learner saw). A submission that could not be graded but whose notebook
is known (invalid JSON) fails every exercise of that notebook with the reason; one whose notebook is
unknown is one failed test worth 0 points that says why. The total `score` is the sum of the tests'.
"""

from __future__ import annotations

import json
from pathlib import Path

from ..course import COURSE, Course
from .class_results import by_submission, counted, ungraded
from .gradebook import Row

VISIBILITIES = ("visible", "after_due_date", "after_published", "hidden")
FOOTNOTE = ("Graded offline, each notebook from top to bottom in a fresh kernel; only the grader's own run "
            "of the official checks counts.")


def _output(row: Row) -> str:
    """The status and the message ("not solved: its name is 'calc'"), the status once if the message has it;
    then the check's hint on a line of its own, when it gave one."""
    if not row.message or row.message.startswith(row.status):
        said = row.message or row.status
    else:
        said = f"{row.status}: {row.message}"
    return f"{said}\nhint: {row.hint}" if row.hint else said


def results(rows: list[Row], execution_time: float = 0, visibility: str = "visible",
            course: Course = COURSE) -> dict:
    """The results.json document, in Gradescope's format (top level, then one test per exercise)."""
    if visibility not in VISIBILITIES:
        raise ValueError(f"visibility must be one of {', '.join(VISIBILITIES)}, not {visibility!r}")
    tests = []
    for handed_in in counted(rows, course).values():
        for handed in handed_in.values():
            for exercise in handed.notebook.exercises:
                tests.append({
                    "number": exercise.id,
                    "name": f"{exercise.id} {exercise.title} ({handed.notebook.title})",
                    "score": handed.points_for(exercise.id),
                    "max_score": exercise.points,
                    "status": "passed" if handed.solved(exercise.id) else "failed",
                    "output": _output(handed.row(exercise.id)),
                    "output_format": "text",
                    "visibility": visibility,
                })
    for row in ungraded(rows):
        if row.notebook not in {notebook.stem for notebook in course.notebooks}:
            tests.append({"name": f"{Path(row.file).name}: {row.status}", "score": 0, "max_score": 0,
                          "status": "failed", "output": _output(row), "output_format": "text",
                          "visibility": visibility})
    score = sum(test["score"] for test in tests)
    maximum = sum(test["max_score"] for test in tests)
    handed = len(by_submission(rows))
    summary = (f"{score}/{maximum} points, {handed} notebook(s) graded. {FOOTNOTE}" if tests
               else "No notebook was found in the submission: upload the course's .ipynb file(s).")
    return {
        "score": score,
        "execution_time": round(execution_time),
        "output": summary,
        "output_format": "text",
        "visibility": visibility,
        "stdout_visibility": "hidden",
        "tests": tests,
    }


def write_results(rows: list[Row], path: Path, execution_time: float = 0, visibility: str = "visible") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(results(rows, execution_time, visibility), indent=2) + "\n", encoding="utf-8")
