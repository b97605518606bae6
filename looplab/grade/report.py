"""What the instructor gets: feedback copies, the progress bar, the summary table, the CSV.

Only presentation; the grades themselves are settled in rows.py.
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
import sys
import time
import uuid
from pathlib import Path

from .gradebook import CSV_COLUMNS, Row
from .outcome import Outcome
from .plan import GraderCell, Plan
from .spreadsheet import write_csv_rows


def _markdown_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


# Output kept per cell in a feedback notebook, in characters: its first and last half (five seconds
# of printing in a loop would otherwise make a notebook of many megabytes).
OUTPUT_LIMIT = 200_000


def output_size(output) -> int:
    """A stream output's text, or any other output's JSON, in characters."""
    if output.get("output_type") == "stream":
        return len(output.get("text", ""))
    return len(json.dumps(output))


def capped_outputs(outputs: list, limit: int = OUTPUT_LIMIT) -> list:
    """The outputs, or, past `limit` characters in all, their first and last `limit // 2` and a line saying
    how much was cut between. A stream output is cut within its text; another output (an image) is
    kept whole or left out."""
    import nbformat

    sizes = [output_size(output) for output in outputs]
    if sum(sizes) <= limit:
        return outputs
    head_room = tail_room = limit // 2
    front = 0
    while front < len(outputs) and sizes[front] <= head_room:
        head_room -= sizes[front]
        front += 1
    back = len(outputs)
    while back > front and sizes[back - 1] <= tail_room:
        tail_room -= sizes[back - 1]
        back -= 1
    middle = outputs[front:back]  # what does not fit whole: its streams keep their first and last part
    first, last = middle[0], middle[-1]
    head = first.text[:head_room] if first.get("output_type") == "stream" else ""
    tail = last.text[len(last.text) - tail_room:] if last.get("output_type") == "stream" and tail_room else ""
    if first is last and len(head) + len(tail) > len(first.text):
        tail = ""
    cut = sum(sizes[front:back]) - len(head) - len(tail)
    note = (f"\n[... {cut:,} characters of this cell's output cut by the looplab grader: a feedback notebook "
            f"keeps the first and last {limit // 2:,} of each cell's output ...]\n")
    name = first.get("name", "stdout") if first.get("output_type") == "stream" else "stdout"
    kept = list(outputs[:front])
    if head:
        kept.append(nbformat.v4.new_output("stream", name=first.name, text=head))
    kept.append(nbformat.v4.new_output("stream", name=name, text=note))
    if tail:
        kept.append(nbformat.v4.new_output("stream", name=last.name, text=tail))
    return kept + list(outputs[back:])


def feedback_notebook(plan: Plan, outcome: Outcome, rows: list[Row]):
    import nbformat

    executed = outcome.executed if outcome.executed is not None else plan.notebook
    cells = []
    for cell, origin in zip(executed.cells, plan.origin):
        if isinstance(origin, GraderCell):
            continue
        cell = copy.deepcopy(cell)
        cell.metadata.pop("execution", None)
        if cell.cell_type == "code":
            cell.outputs = capped_outputs(cell.outputs)
        if "id" not in cell:
            cell["id"] = uuid.uuid4().hex[:8]
        cells.append(cell)
    total = sum(r.points for r in rows)
    maximum = sum(r.max_points or 0 for r in rows)
    lines = [
        "## Grade (looplab grader)",
        "",
        f"**{plan.submission.learner} · {plan.course.stem}: {total}/{maximum} points**",
        "",
        "| exercise | points | status | details |",
        "|---|---|---|---|",
    ]
    titles = {e.id: e.title for e in plan.course.exercises}
    for r in rows:
        details = r.message + (f" (hint: {r.hint})" if r.hint else "")
        lines.append(f"| {r.exercise} {_markdown_escape(titles.get(r.exercise, ''))} | {r.points}/{r.max_points} | "
                     f"{_markdown_escape(r.status)} | {_markdown_escape(details)} |")
    lines += ["", "Graded in a fresh kernel, offline; only the grader's own run of the official checks counts."]
    cells.append(nbformat.v4.new_markdown_cell("\n".join(lines)))
    notebook = nbformat.v4.new_notebook(cells=cells, metadata=copy.deepcopy(executed.metadata))
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


def write_feedback(folder: Path, plan: Plan, outcome: Outcome, rows: list[Row], taken: dict[Path, str]) -> Path:
    """Write the feedback copy; `taken` gathers the files written so far, each with its submission's file.

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
    nbformat.write(feedback_notebook(plan, outcome, rows), target)
    return target


# --- the terminal: progress and the table ----------------------------------------------------------------


class GradingProgress:
    """Submissions graded so far, on stderr: a bar on a terminal, a line each otherwise."""

    def __init__(self, total: int, stream=sys.stderr):
        self.total, self.done, self.stream = total, 0, stream
        self.tty = hasattr(stream, "isatty") and stream.isatty()
        self.started = time.monotonic()

    def update(self, label: str) -> None:
        self.done += 1
        if self.tty:
            width = 30
            filled = int(width * self.done / max(self.total, 1))
            elapsed = time.monotonic() - self.started
            bar = "#" * filled + "." * (width - filled)
            text = f"\rgrading [{bar}] {self.done}/{self.total}  {elapsed:5.1f} s  {label}"
            self.stream.write(text[:120].ljust(120))
            if self.done == self.total:
                self.stream.write("\n")
        else:
            self.stream.write(f"graded {self.done}/{self.total}: {label}\n")
        self.stream.flush()


def summary_table(rows: list[Row]) -> str:
    """One line per submission: the learner, the notebook, the points, and each exercise's status."""
    groups: dict[tuple, list[Row]] = {}
    for r in rows:
        groups.setdefault((r.learner, r.file), []).append(r)
    lines = []
    for (learner, file), group in groups.items():
        notebook = group[0].notebook or f"({Path(file).name})"
        if len(group) == 1 and not group[0].exercise:
            score = "-"
            detail = group[0].status + (f": {group[0].message}" if group[0].message else "")
        else:
            score = f"{sum(r.points for r in group)}/{sum(r.max_points or 0 for r in group)}"
            detail = " · ".join(f"{r.exercise} {r.status}" for r in group)
        lines.append((learner, notebook, score, detail))
    widths = [max([len(h)] + [len(line[i]) for line in lines]) for i, h in enumerate(("learner", "notebook", "points"))]
    header = f"{'learner':<{widths[0]}}  {'notebook':<{widths[1]}}  {'points':>{widths[2]}}  exercises"
    out = [header, "-" * min(len(header) + 40, 120)]
    for learner, notebook, score, detail in lines:
        text = f"{learner:<{widths[0]}}  {notebook:<{widths[1]}}  {score:>{widths[2]}}  {detail}"
        out.append(text if len(text) <= 160 else text[:157] + "...")
    return "\n".join(out)


def write_csv(rows: list[Row], path: Path) -> None:
    """The gradebook; a cell a spreadsheet would run as a formula is escaped (spreadsheet.py)."""
    write_csv_rows(path, CSV_COLUMNS, (r.as_csv() for r in rows))
