"""The class report: one HTML page answering "where is the class stuck?", from the gradebook's rows.

One self-contained file (inline CSS, no script, no URL outside it; its Content-Security-Policy forbids
loading anything) that opens from disk and can be mailed. It shows:
- a learner x exercise grid, each cell coloured by its status and saying it in words (the colours,
  from the Okabe-Ito palette, stay apart for colour-blind readers, and the words carry the meaning),
  linking to the learner's feedback notebook when the grader wrote one (`--feedback`);
- each exercise's pass rate: the learners who solved it among those whose notebook was graded;
- for each exercise, the failure messages ranked by how many learners hit them, each with the learners
  who did (a submission that could not be graded at all is listed on its own, not in the ranking);
- the submissions that could not be graded, and, with a roster, who is not on it and who handed nothing in;
- byte-identical submissions from different learners (a copy, a hard link), when there are some: named, never
  graded differently (no grader can tell who copied whom).

Which submission counts for a learner is rows/class_results.py's rule, the same as the exports'.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from html import escape
from pathlib import Path
from urllib.parse import quote

from ...course import COURSE, Course, Exercise, Notebook
from ..rows.class_results import Handed, counted, max_points, ungraded
from ..shared.gradebook import Row
from ..shared.status import Status
from ..submissions.finding import Identical

# The colour class of each status; a status this table does not know (a new one) shows as "other".
KINDS = {
    Status.SOLVED: "solved",
    Status.NOT_SOLVED: "failed",
    Status.NOT_WRITTEN: "stub",
    Status.NOT_DEFINED: "broken",
    Status.SYNTAX_ERROR: "broken",
    Status.CELL_STOPPED: "broken",
    Status.NOTEBOOK_STOPPED: "broken",
    Status.WROTE_TOO_MUCH: "broken",
    Status.KERNEL_DIED: "broken",
    Status.COURSE_CODE: "tampered",
}
LEGEND = [("solved", "solved"), ("failed", "not solved"), ("stub", "not written yet"),
          ("broken", "not defined, syntax error, stopped, kernel died"), ("tampered", "the course's own code"),
          ("other", "could not be graded"), ("missing", "not handed in")]

STYLE = """
body { font: 14px/1.4 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 24px; color: #1a1a1a; }
h1 { font-size: 22px; margin: 0 0 4px; } h2 { font-size: 17px; margin: 28px 0 8px; }
h3 { font-size: 15px; margin: 18px 0 6px; }
.summary, .note { color: #444; } .note { background: #fff7d6; border-left: 4px solid #E69F00; padding: 6px 10px; }
table { border-collapse: collapse; }
.grid th, .grid td { border: 1px solid #d0d0d0; padding: 3px 6px; text-align: center; vertical-align: middle; }
.grid th.learner { text-align: left; font-weight: 600; white-space: nowrap; }
.grid thead th { background: #f4f4f4; font-weight: 600; }
.grid td.cell { min-width: 64px; font-size: 12px; }
.grid td.cell a, .grid td.cell span.in { color: inherit; text-decoration: none; display: block; }
.grid td.cell b { display: block; font-size: 13px; }
.grid td.total { font-weight: 600; white-space: nowrap; }
.grid tfoot th, .grid tfoot td { background: #f4f4f4; font-size: 12px; }
.solved { background: #cfe6f6; box-shadow: inset 4px 0 #0072B2; }
.failed { background: #fde2a6; box-shadow: inset 4px 0 #E69F00; }
.stub { background: #ececec; color: #555; }
.broken { background: #f2d2e4; box-shadow: inset 4px 0 #CC79A7; }
.tampered { background: #222; color: #fff; }
.other { background: repeating-linear-gradient(45deg, #fbe1d3, #fbe1d3 6px, #fff 6px, #fff 12px);
         box-shadow: inset 4px 0 #D55E00; }
.missing { background: #fff; color: #888; outline: 1px dashed #aaa; outline-offset: -3px; }
.legend span { display: inline-block; padding: 2px 8px; margin: 0 6px 4px 0; border: 1px solid #d0d0d0; font-size: 12px; }
.rate { font-weight: 600; }
ol.stuck { margin: 0 0 0 4px; padding-left: 22px; }
ol.stuck li { margin: 0 0 8px; }
.count { font-weight: 600; white-space: nowrap; }
.message { white-space: pre-wrap; font-family: ui-monospace, Menlo, Consolas, monospace; font-size: 12px;
           background: #f7f7f7; padding: 2px 6px; display: block; margin: 2px 0; }
.who { font-size: 12px; color: #444; }
.ungraded td, .ungraded th { border: 1px solid #d0d0d0; padding: 3px 8px; text-align: left; font-size: 13px; }
""".strip()


# Each status's template as a pattern, each {placeholder} matching anything; where several match
# ("stopped: {stops}" matches every "stopped: ..."), the longest fixed text wins, so they are tried in
# that order: "stopped: the notebook ran past the total limit (8 s)" is NOTEBOOK_STOPPED.
STATUS_PATTERNS = [(status, re.compile(re.sub(r"\\\{\w+\\\}", ".+", re.escape(status.template)), re.DOTALL))
                   for status in sorted(Status, key=lambda s: len(re.sub(r"\{\w+\}", "", s.template)), reverse=True)]


def status_of(text: str) -> Status | None:
    """The Status of a row's status text ("stopped: cells 4 and 5 ran past the 5 s limit" -> CELL_STOPPED)."""
    return next((status for status, pattern in STATUS_PATTERNS if pattern.fullmatch(text)), None)


def kind(row: Row) -> str:
    """The colour class of a row's status."""
    return KINDS.get(status_of(row.status), "other")


def short_label(status: str) -> str:
    """A status in a grid cell: "stopped: cell 4 ran past the 5 s limit" -> "stopped"."""
    return status.split(":")[0].split(" (")[0]


@dataclass
class Failure:
    """One way learners failed an exercise: its status and message, and who hit it."""

    status: str
    message: str
    learners: list[Handed]


def failures(exercise: Exercise, handed: list[Handed]) -> list[Failure]:
    """The failures of an exercise, most learners first (then by message)."""
    groups: dict[tuple[str, str], list[Handed]] = {}
    for one in handed:
        if not one.solved(exercise.id):
            row = one.row(exercise.id)
            groups.setdefault((row.status, row.message), []).append(one)
    ranked = sorted(groups.items(), key=lambda item: (-len(item[1]), item[0][1], item[0][0]))
    return [Failure(status, message, learners) for (status, message), learners in ranked]


class ClassReport:
    """The page, built from the rows, the links to the feedback notebooks, and optionally the roster."""

    def __init__(self, rows: list[Row], links: dict[str, str] | None = None, roster=None,
                 course: Course = COURSE, title: str = "Class report", identical: list[Identical] = ()):
        self.rows, self.links, self.title, self.identical = rows, links or {}, title, list(identical)
        self.learners = counted(rows, course)
        stems = {stem for handed_in in self.learners.values() for stem in handed_in}
        self.notebooks: list[Notebook] = [notebook for notebook in course.notebooks if notebook.stem in stems]
        self.not_on_roster: list[str] = []
        self.without_submission: list[str] = []
        if roster is not None:
            matched = roster.match(list(self.learners))
            self.not_on_roster, self.without_submission = matched.not_on_roster, matched.without_submission
        # Learners with no graded notebook (only broken files) and roster students who handed nothing
        # in still get a line: a row of "not handed in".
        names = list(self.learners) + [name for name in self.without_submission if name not in self.learners]
        self.names = sorted(names, key=str.casefold)

    # --- pieces --------------------------------------------------------------------------------------

    def link(self, handed: Handed, inner: str) -> str:
        href = self.links.get(handed.file)
        return f'<a href="{escape(href)}">{inner}</a>' if href else f'<span class="in">{inner}</span>'

    def graded(self, stem: str) -> list[Handed]:
        """The learners' submissions of this notebook that were graded (a broken file is listed on its own)."""
        return [handed_in[stem] for handed_in in self.learners.values()
                if stem in handed_in and handed_in[stem].graded]

    def cell(self, learner: str, notebook: Notebook, exercise: Exercise) -> str:
        handed = self.learners.get(learner, {}).get(notebook.stem)
        data = f'data-learner="{escape(learner)}" data-exercise="{exercise.id}"'
        if handed is None:
            return (f'<td class="cell missing" {data} data-status="not handed in" '
                    f'title="{escape(learner)} · {exercise.id}: not handed in">—</td>')
        row, points = handed.row(exercise.id), handed.points_for(exercise.id)
        tip = f"{learner} · {exercise.id} {exercise.title}: {row.status}" + (f"\n{row.message}" if row.message else "")
        inner = f"<b>{points}/{exercise.points}</b>{escape(short_label(row.status))}"
        return (f'<td class="cell {kind(row)}" {data} data-status="{escape(row.status)}" title="{escape(tip)}">'
                f"{self.link(handed, inner)}</td>")

    def pass_rate(self, notebook: Notebook, exercise: Exercise) -> str:
        handed = self.graded(notebook.stem)
        passed = sum(one.solved(exercise.id) for one in handed)
        if not handed:
            return f'<td data-exercise="{exercise.id}">—</td>'
        percent = round(100 * passed / len(handed))
        return (f'<td class="pass-rate" data-exercise="{exercise.id}" data-passed="{passed}" '
                f'data-handed="{len(handed)}"><span class="rate">{percent}%</span><br>{passed} of {len(handed)}</td>')

    def grid(self) -> str:
        exercises = [(notebook, exercise) for notebook in self.notebooks for exercise in notebook.exercises]
        top = "".join(f'<th colspan="{len(nb.exercises)}" title="{escape(nb.stem)}">{escape(nb.title)}</th>'
                      for nb in self.notebooks)
        second = "".join(f'<th title="{escape(e.title)}">{e.id}</th>' for _, e in exercises)
        maximum = sum(max_points(notebook) for notebook in self.notebooks)
        body = []
        for learner in self.names:
            handed_in = self.learners.get(learner, {})
            total = sum(handed.points for handed in handed_in.values())
            cells = "".join(self.cell(learner, notebook, exercise) for notebook, exercise in exercises)
            body.append(f'<tr data-learner="{escape(learner)}"><th class="learner" scope="row">{escape(learner)}</th>'
                        f'{cells}<td class="total">{total}/{maximum}</td></tr>')
        rates = "".join(self.pass_rate(notebook, exercise) for notebook, exercise in exercises)
        return (f'<table class="grid"><thead><tr><th rowspan="2">learner</th>{top}<th rowspan="2">points</th></tr>'
                f"<tr>{second}</tr></thead><tbody>{''.join(body)}</tbody>"
                f'<tfoot><tr><th class="learner" scope="row">pass rate</th>{rates}<td></td></tr></tfoot></table>')

    def legend(self) -> str:
        return '<p class="legend">' + "".join(f'<span class="{css}">{escape(words)}</span>'
                                              for css, words in LEGEND) + "</p>"

    def stuck(self) -> str:
        parts = []
        for notebook in self.notebooks:
            handed = self.graded(notebook.stem)
            for exercise in notebook.exercises:
                ranked = failures(exercise, handed)
                solved = sum(one.solved(exercise.id) for one in handed)
                heading = (f"<h3>{exercise.id} {escape(exercise.title)} <small>({escape(notebook.title)}): "
                           f"{solved} of {len(handed)} solved</small></h3>")
                if not ranked:
                    parts.append(heading + f'<p class="all-solved" data-exercise="{exercise.id}">Everyone whose '
                                 "notebook was graded solved it.</p>")
                    continue
                items = []
                for failure in ranked:
                    who = ", ".join(self.link(one, escape(one.learner)) for one in failure.learners)
                    count = len(failure.learners)
                    message = f'<span class="message">{escape(failure.message)}</span>' if failure.message else ""
                    items.append(f'<li data-count="{count}" data-status="{escape(failure.status)}">'
                                 f'<span class="count">{count} learner{"s" if count != 1 else ""}</span> · '
                                 f'{escape(failure.status)}{message}<span class="who">{who}</span></li>')
                parts.append(heading + f'<ol class="stuck" data-exercise="{exercise.id}">{"".join(items)}</ol>')
        return "".join(parts)

    def ungraded(self) -> str:
        broken = ungraded(self.rows)
        if not broken:
            return ""
        lines = "".join(f"<tr><th>{escape(row.learner)}</th><td>{escape(row.file)}</td><td>{escape(row.status)}</td>"
                        f"<td>{escape(row.message)}</td></tr>" for row in broken)
        return ('<h2>Submissions that could not be graded</h2><table class="ungraded">'
                f"<tr><th>learner</th><th>file</th><th>status</th><th>why</th></tr>{lines}</table>")

    def identical_files(self) -> str:
        if not self.identical:
            return ""
        items = "".join("<li>" + ", ".join(f"{escape(learner)} <small>({escape(file)})</small>"
                                           for learner, file in group.copies) + "</li>" for group in self.identical)
        return ('<h2 id="identical">Identical submissions</h2><p>Files with the same bytes, handed in by different '
                "learners (a copy, or a hard link). The grader cannot tell who copied whom: each keeps the rows it "
                f'earned.</p><ul class="identical">{items}</ul>')

    def roster_notes(self) -> str:
        notes = []
        if self.not_on_roster:
            notes.append(f'<p class="note" id="not-on-roster">Not on the roster (left out of the Canvas file): '
                         f"{escape(', '.join(self.not_on_roster))}</p>")
        if self.without_submission:
            notes.append(f'<p class="note" id="without-submission">On the roster, nothing handed in: '
                         f"{escape(', '.join(self.without_submission))}</p>")
        return "".join(notes)

    def html(self) -> str:
        graded = sum(handed.graded for handed_in in self.learners.values() for handed in handed_in.values())
        summary = (f"{len(self.names)} learner(s), {graded} notebook(s) graded. A cell links to the learner's "
                   "feedback notebook when the grader wrote one; hover it for the full message.")
        return (
            '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">"
            f'<meta name="viewport" content="width=device-width"><title>{escape(self.title)}</title>'
            f"<style>\n{STYLE}\n</style></head>\n<body>\n"
            f'<h1>{escape(self.title)}</h1><p class="summary">{escape(summary)}</p>{self.roster_notes()}\n'
            f"<h2>Learners × exercises</h2>{self.legend()}{self.grid()}\n"
            f'<h2 id="stuck">Where is the class stuck?</h2>{self.stuck()}\n{self.ungraded()}\n'
            f"{self.identical_files()}</body></html>\n"
        )


def relative_links(feedback: dict[str, Path], page: Path) -> dict[str, str]:
    """A submission's file -> its feedback notebook, as a link relative to the page (the folder can move)."""
    folder = page.resolve().parent
    return {file: quote(Path(os.path.relpath(Path(target).resolve(), folder)).as_posix())
            for file, target in feedback.items()}


def write_report(rows: list[Row], path: Path, feedback: dict[str, Path] | None = None, roster=None,
                 course: Course = COURSE, identical: list[Identical] = ()) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    report = ClassReport(rows, relative_links(feedback or {}, path), roster, course, identical=identical)
    path.write_text(report.html(), encoding="utf-8")
