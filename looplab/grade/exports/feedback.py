"""Feedback: each learner's executed notebook, its outputs capped, with its grade as a last markdown cell.

Only presentation; the grades themselves are settled in rows/from_run.py.
"""

from __future__ import annotations

import copy
import hashlib
import html
import re
import uuid
from pathlib import Path

from ...catalogue import words
from ..kernels.outcome import Outcome
from ..kernels.outputs import capped_outputs
from ..shared.gradebook import Row
from ..submissions.plan import GraderCell, Plan


# The grade cell's words (texts/feedback.toml), in the notebook's own language: grading.py writes the
# feedback inside `language.using(<the notebook's language>)`.
WORDS = words(__file__)

# What markdown reads, within a line, as formatting, a link or image (its `[`), a table's border or math
# (Jupyter renders `$...$`): each gets a backslash, so a learner's name or an error's text shows as it is
# written. An underscore inside a word (`input_schema`) is never emphasis, so it is left as it is.
MARKDOWN_SPECIAL = re.compile(r"([\\`*\[\]|~$]|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9]))")


def markdown_text(text: str) -> str:
    """Text as one line of markdown that shows it literally, whatever a name or an error holds.

    Why both escapes: markdown passes HTML through (`<img src=x onerror=...>` in a learner's name would
    run once the feedback notebook is shown or converted to HTML), and its own syntax would turn text
    into links and formatting. Markdown's backslash escapes come first; then the HTML characters become
    entities, which markdown shows as the characters themselves."""
    escaped = MARKDOWN_SPECIAL.sub(r"\\\1", " ".join(str(text).splitlines()))
    return html.escape(escaped, quote=False)


def feedback_notebook(plan: Plan, outcome: Outcome, rows: list[Row], name: str | None = None):
    """The executed notebook, its outputs capped, with the grade as a last cell headed by `name` (the roster's name
    for the learner; else the learner as the grader named them) and the notebook's and exercises' titles in the
    current language (the notebook's own: grading.py writes the feedback inside its `language.using`)."""
    import nbformat

    executed = outcome.executed if outcome.executed is not None else plan.notebook
    cells = []
    for cell, origin in zip(executed.cells, plan.origin):
        if isinstance(origin, GraderCell):
            continue
        cell = copy.deepcopy(cell)
        # The learner's own cell id and metadata back (the run had neither: submissions/plan.py), as the file had them.
        original = plan.original.cells[origin - 1]
        cell.metadata = copy.deepcopy(original.get("metadata") or {})
        cell.metadata.pop("execution", None)
        if isinstance(original.get("id"), str):
            cell["id"] = original["id"]
        if cell.cell_type == "code":
            cell.outputs = capped_outputs(cell.outputs)
        if "id" not in cell:
            cell["id"] = uuid.uuid4().hex[:8]
        cells.append(cell)
    total = sum(r.points for r in rows)
    maximum = sum(r.max_points or 0 for r in rows)
    lines = [
        WORDS("heading", title=markdown_text(plan.course.said_title)),
        "",
        "**" + WORDS("total", learner=markdown_text(name or plan.submission.learner),
                     notebook=markdown_text(plan.course.stem), points=total, maximum=maximum) + "**",
        "",
        WORDS("columns"),
        "|---|---|---|---|",
    ]
    titles = {e.id: e.said_title for e in plan.course.exercises}
    for r in rows:
        details = r.message + (WORDS("hint", hint=r.hint) if r.hint else "")
        lines.append(f"| {markdown_text(r.exercise)} {markdown_text(titles.get(r.exercise, ''))} | "
                     f"{r.points}/{r.max_points} | {markdown_text(r.status)} | {markdown_text(details)} |")
    lines += ["", WORDS("how")]
    cells.append(nbformat.v4.new_markdown_cell("\n".join(lines)))
    notebook = nbformat.v4.new_notebook(cells=cells, metadata=copy.deepcopy(plan.original.metadata))
    notebook.metadata.pop("widgets", None)
    notebook.nbformat_minor = max(notebook.get("nbformat_minor", 5), 5)
    return notebook


def feedback_folder(learner: str) -> str:
    """The learner's folder under --feedback: never shared by two learners, the same on every run.

    Their name when it is a plain folder name (letters, digits, `_`, `.`, `-`, not starting with `.`);
    else the name made plain, `~`, and a short hash of the name itself (`O Brien` -> `O_Brien~<8 hex
    digits>`, while `O_Brien` stays `O_Brien`). A plain name holds no `~`, so it never meets a changed
    one, and two names made the same plain name differ by their hash. Never hidden, never `.` or `..`.
    """
    safe = re.sub(r"^\.", "_", re.sub(r"[^\w.-]+", "_", learner))
    if safe and safe == learner:
        return safe
    return f"{safe or 'learner'}~{hashlib.sha256(learner.encode()).hexdigest()[:8]}"


def write_feedback(folder: Path, plan: Plan, outcome: Outcome, rows: list[Row], taken: dict[Path, str],
                   name: str | None = None) -> Path:
    """Write the feedback copy, its grade headed by `name` (feedback_notebook); `taken` gathers the files written so
    far, each with its submission's file.

    Two submissions of one learner with the same file name (from two subfolders) get `-2`, `-3`... in
    the order they are graded, which is the gradebook's; names are compared ignoring case, as a
    case-insensitive disk (macOS, Windows) would.
    """
    import nbformat

    learner_folder = folder / feedback_folder(plan.submission.learner)
    target = learner_folder / plan.submission.path.name
    written = {str(path).casefold() for path in taken}
    counter = 1
    while str(target).casefold() in written:
        counter += 1
        target = learner_folder / f"{plan.submission.path.stem}-{counter}{plan.submission.path.suffix}"
    taken[target] = plan.submission.file
    target.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(feedback_notebook(plan, outcome, rows, name), target)
    return target
