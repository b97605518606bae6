"""Gradescope's results.json from the gradebook's rows: one test per exercise.

Gradescope runs `grading/gradescope/run_autograder` on each submission, which grades the files in
/autograder/submission with `python -m looplab.grade ... --gradescope /autograder/results/results.json`.
Each exercise of each notebook handed in is a test: `number` its id ("1.2"), `name` its id and title,
`score`/`max_score` its points, `status` passed when solved, `output` the grader's status and the
check's message and hint (the words the learner saw). A submission that could not be graded but whose notebook
is known (invalid JSON) fails every exercise of that notebook with the reason; one whose notebook is
unknown is one failed test worth 0 points that says why. The total `score` is the sum of the tests'.

One results.json is one submission, one learner: every row is read as the first row's learner's, so
an upload holding one notebook under several names scores it once (the copy handed in last counts,
and `output` says which copies did not). The command line refuses `--gradescope` on paths holding
several learners (a class folder), and run_autograder says `--one-submission`. When kernels were not
isolated, `output` says so (`not_isolated`): a learner's code could then have written this file.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from ...catalogue import words
from ...course import COURSE, Course
from ..rows.class_results import counted, duplicates, ungraded
from ..shared.gradebook import Row

VISIBILITIES = ("visible", "after_due_date", "after_published", "hidden")
# The words a learner reads in Gradescope (texts/gradescope.toml), in the report's language (the upload's, by
# default); Gradescope's own fields ("passed", "failed", the visibilities) are its format, never translated.
WORDS = words(__file__)


def _output(row: Row) -> str:
    """The status and the message ("not solved: its name is 'calc'"), the status once if the message has it;
    then the check's hint on a line of its own, when it gave one."""
    if not row.message or row.message.startswith(row.status):
        said = row.message or row.status
    else:
        said = WORDS("said", status=row.status, message=row.message)
    return said + "\n" + WORDS("hint", hint=row.hint) if row.hint else said


def one_submission(rows: list[Row]) -> list[Row]:
    """The rows as one learner's: Gradescope grades one upload, whatever names its files carry, so each
    course notebook counts once (the copy handed in last: class_results.py), however many copies it holds."""
    learner = rows[0].learner if rows else ""
    return [replace(row, learner=learner) for row in rows]


def copies_note(rows: list[Row], course: Course) -> list[str]:
    """A line per notebook handed in more than once: which copy counted."""
    titles = {notebook.stem: notebook.said_title for notebook in course.notebooks}
    return [WORDS("copies", notebook=titles.get(copy.notebook, copy.notebook), count=len(copy.ignored) + 1,
                  counted=Path(copy.counted).name, ignored=", ".join(Path(f).name for f in copy.ignored))
            for copy in duplicates(rows, course)]


def results(rows: list[Row], execution_time: float = 0, visibility: str = "visible",
            course: Course = COURSE, notes: list[str] = ()) -> dict:
    """The results.json document, in Gradescope's format (top level, then one test per exercise), for one
    submission; `notes` are said in its output too (kernels that were not isolated)."""
    if visibility not in VISIBILITIES:
        raise ValueError(f"visibility must be one of {', '.join(VISIBILITIES)}, not {visibility!r}")
    rows = one_submission(rows)
    tests = []
    for handed_in in counted(rows, course).values():
        for handed in handed_in.values():
            for exercise in handed.notebook.exercises:
                tests.append({
                    "number": exercise.id,
                    "name": f"{exercise.id} {exercise.said_title} ({handed.notebook.said_title})",
                    "score": handed.points_for(exercise.id),
                    "max_score": exercise.points,
                    "status": "passed" if handed.solved(exercise.id) else "failed",
                    "output": _output(handed.row(exercise.id)),
                    "output_format": "text",
                    "visibility": visibility,
                })
    for row in ungraded(rows):
        if row.notebook not in {notebook.stem for notebook in course.notebooks}:
            tests.append({"name": WORDS("said", status=Path(row.file).name, message=row.status), "score": 0, "max_score": 0,
                          "status": "failed", "output": _output(row), "output_format": "text",
                          "visibility": visibility})
    score = sum(test["score"] for test in tests)
    maximum = sum(test["max_score"] for test in tests)
    handed = len({handed.notebook.stem for handed_in in counted(rows, course).values() for handed in handed_in.values()})
    summary = (WORDS("summary", score=score, maximum=maximum, handed=handed) if tests
               else WORDS("no_notebook"))
    summary = "\n".join([summary, *copies_note(rows, course), *notes])
    return {
        "score": score,
        "execution_time": round(execution_time),
        "output": summary,
        "output_format": "text",
        "visibility": visibility,
        "stdout_visibility": "hidden",
        "tests": tests,
    }


def write_results(rows: list[Row], path: Path, execution_time: float = 0, visibility: str = "visible",
                  notes: list[str] = ()) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    document = results(rows, execution_time, visibility, notes=notes)
    path.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")


def not_isolated(problem: str | None) -> str:
    """The line results.json says when the kernels ran without the sandbox (`problem`: why bubblewrap could not
    run, as sandbox.choose found; None: `--isolation none` was asked for)."""
    why = problem or "--isolation none"
    return WORDS("not_isolated", why=why)
