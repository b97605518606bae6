"""The terminal while and after grading: the progress bar on stderr, the summary table on stdout."""

from __future__ import annotations

import sys
import time
from pathlib import Path

from ...catalogue import words
from ..shared.gradebook import Row

WORDS = words(__file__)  # texts/terminal.toml, in the report's language (--lang)
REVIEW_MARK = WORDS.rows["review"]["en"]  # an exercise whose cells hold the course's reference code, in English (the tests read it)


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
            text = "\r" + WORDS("bar", bar=bar, done=self.done, total=self.total, elapsed=f"{elapsed:5.1f}", label=label)
            self.stream.write(text[:120].ljust(120))
            if self.done == self.total:
                self.stream.write("\n")
        else:
            self.stream.write(WORDS("line", done=self.done, total=self.total, label=label) + "\n")
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
            detail = " · ".join(f"{r.exercise} {r.status}" + (WORDS("review") if r.review else "") for r in group)
        lines.append((learner, notebook, score, detail))
    titles = (WORDS("learner"), WORDS("notebook"), WORDS("points"))
    widths = [max([len(h)] + [len(line[i]) for line in lines]) for i, h in enumerate(titles)]
    header = f"{titles[0]:<{widths[0]}}  {titles[1]:<{widths[1]}}  {titles[2]:>{widths[2]}}  {WORDS('exercises')}"
    out = [header, "-" * min(len(header) + 40, 120)]
    for learner, notebook, score, detail in lines:
        text = f"{learner:<{widths[0]}}  {notebook:<{widths[1]}}  {score:>{widths[2]}}  {detail}"
        out.append(text if len(text) <= 160 else text[:157] + "...")
    return "\n".join(out)
