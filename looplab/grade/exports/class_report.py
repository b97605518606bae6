"""The class report: one HTML page answering "where is the class stuck?", from the gradebook's rows.

One self-contained file (inline CSS, no script, no URL outside it; its Content-Security-Policy forbids
loading anything) that opens from disk and can be mailed. Its first screen (a laptop's, 1366 x 768)
answers the two questions an instructor opens it with, side by side:
- which exercise is the class stuck on: every exercise, the worst pass rate first, each rate with its
  counts (`2/7 solved`) and the failure most learners hit; course order is the other view;
- who needs help: every learner, the lowest score first, named as the roster names them; name order is
  the other view.
The page has no script, so each other order is a static view: a second list, shown by CSS when its
anchor is the page's target (`#exercises-in-course-order`, `#learners-by-name`), its link beside the
heading. The header counts the roster's students (not every name a download carried), and names the
Canvas file only when one was written. Below:
- a learner x exercise grid, each cell coloured by its status and saying it in words (the colours,
  from the Okabe-Ito palette, stay apart for colour-blind readers, and the words carry the meaning),
  linking to the learner's feedback notebook when the grader wrote one (`--feedback`);
- each exercise's pass rate: the learners who solved it among those whose notebook was graded;
- for each exercise, the failure messages ranked by how many learners hit them, each with the learners
  who did (a submission that could not be graded at all is listed on its own, not in the ranking);
- the submissions that could not be graded, and, with a roster, who is not on it and who handed nothing in;
- byte-identical submissions from different learners (a copy, a hard link), when there are some: named, never
  graded differently (no grader can tell who copied whom);
- the exercises to review, when there are some: cells holding the course's reference code typed in as text
  (judgement/reference_text.py), marked in the grid too, their points untouched.

Which submission counts for a learner is rows/class_results.py's rule, the same as the exports'.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from html import escape
from pathlib import Path
from urllib.parse import quote

from ... import language
from ...catalogue import words
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
LEGEND = ["solved", "failed", "stub", "broken", "tampered", "other", "missing"]  # each class's words: legend_<class>

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
.answers { display: grid; grid-template-columns: minmax(0, 1.25fr) minmax(0, 1fr); gap: 28px; align-items: start; }
.question h2 { margin: 12px 0 2px; }
.orders { margin: 0 0 4px; font-size: 12px; color: #444; }
.view.alternative { display: none; }
.view.alternative:target { display: block; }
.view.alternative:target ~ .view.default { display: none; }
.rates, .standings { border-collapse: collapse; width: 100%; font-size: 13px; }
.rates th, .rates td, .standings th, .standings td { padding: 1px 6px; border-bottom: 1px solid #e4e4e4;
  text-align: left; white-space: nowrap; line-height: 19px; }
.rates .top-failure { white-space: nowrap; overflow: hidden; text-overflow: ellipsis; max-width: 0; width: 45%;
  color: #444; font-size: 12px; }
.rates .what { overflow: hidden; text-overflow: ellipsis; max-width: 180px; }
.counts { font-variant-numeric: tabular-nums; }
.bar { display: inline-block; width: 60px; height: 8px; background: #fde2a6; margin-right: 6px; vertical-align: middle; }
.bar span { display: block; height: 8px; background: #0072B2; }
.standings th { font-weight: 600; } .standings small { font-weight: normal; color: #8a4b00; }
.review-mark { display: block; font-style: normal; font-size: 11px; font-weight: 600; color: #8a4b00; }
ul.review li { margin: 0 0 6px; }
""".strip()


# Each status's template, in every language of the course, as a pattern, each {placeholder} matching anything;
# where several match ("stopped: {stops}" matches every "stopped: ..."), the longest fixed text wins, so they are
# tried in that order: "stopped: the notebook ran past the total limit (8 s)" is NOTEBOOK_STOPPED.
STATUS_PATTERNS = [(status, re.compile(re.sub(r"\\\{\w+\\\}", ".+", re.escape(template)), re.DOTALL))
                   for status, template in sorted(((status, template) for status in Status
                                                   for template in dict.fromkeys(status.templates())),
                                                  key=lambda pair: len(re.sub(r"\{\w+\}", "", pair[1])), reverse=True)]


def status_of(text: str) -> Status | None:
    """The Status of a row's status text ("stopped: cells 4 and 5 ran past the 5 s limit" -> CELL_STOPPED)."""
    return next((status for status, pattern in STATUS_PATTERNS if pattern.fullmatch(text)), None)


def kind(row: Row) -> str:
    """The colour class of a row's status."""
    return KINDS.get(status_of(row.status), "other")


def short_label(status: str) -> str:
    """A status in a grid cell: "stopped: cell 4 ran past the 5 s limit" -> "stopped"."""
    return status.split(":")[0].split(" (")[0].strip()


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


# The words of the page (texts/class_report.toml), in the report's language (--lang; the command line writes
# the exports inside `language.using`).
WORDS = words(__file__)


@dataclass
class Standing:
    """One learner in "who needs help": their name as the roster has it, their points, what they solved."""

    learner: str  # the gradebook's name (the roster's key with a roster)
    name: str  # as shown: the roster's Student, else the learner
    points: int
    maximum: int
    solved: int
    exercises: int
    on_roster: bool = True


class ClassReport:
    """The page, built from the rows, the links to the feedback notebooks, and optionally the roster."""

    def __init__(self, rows: list[Row], links: dict[str, str] | None = None, roster=None,
                 course: Course = COURSE, title: str | None = None, identical: list[Identical] = (),
                 canvas: bool = False):
        self.rows, self.links, self.identical = rows, links or {}, list(identical)
        self.title = title or WORDS("title")
        self.roster, self.canvas = roster, canvas
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

    def shown_name(self, learner: str) -> str:
        """The learner as the roster names them (its Student column), else the gradebook's name."""
        student = self.roster.student(learner) if self.roster is not None else None
        return student["Student"] if student and student["Student"] else learner

    def link(self, handed: Handed, inner: str) -> str:
        href = self.links.get(handed.file)
        return f'<a href="{escape(href)}">{inner}</a>' if href else f'<span class="in">{inner}</span>'

    def graded(self, stem: str) -> list[Handed]:
        """The learners' submissions of this notebook that were graded (a broken file is listed on its own)."""
        return [handed_in[stem] for handed_in in self.learners.values()
                if stem in handed_in and handed_in[stem].graded]

    def exercises(self) -> list[tuple[Notebook, Exercise]]:
        return [(notebook, exercise) for notebook in self.notebooks for exercise in notebook.exercises]

    def cell(self, learner: str, notebook: Notebook, exercise: Exercise) -> str:
        handed = self.learners.get(learner, {}).get(notebook.stem)
        data = f'data-learner="{escape(learner)}" data-exercise="{exercise.id}"'
        if handed is None:
            missing = WORDS("legend_missing")
            return (f'<td class="cell missing" {data} data-status="{escape(missing)}" '
                    f'title="{escape(WORDS("tip", learner=self.shown_name(learner), exercise=exercise.id, title="", status=missing))}">—</td>')
        row, points = handed.row(exercise.id), handed.points_for(exercise.id)
        tip = (WORDS("tip", learner=self.shown_name(learner), exercise=exercise.id, title=" " + exercise.said_title,
                     status=row.status) + (f"\n{row.message}" if row.message else ""))
        flagged = row.exercise == exercise.id and bool(row.review)
        if flagged:
            tip += f"\n{row.review}"
        mark = f'<i class="review-mark">{escape(WORDS("review_mark"))}</i>' if flagged else ""
        inner = f"<b>{points}/{exercise.points}</b>{escape(short_label(row.status))}{mark}"
        review = ' data-review="yes"' if flagged else ""
        return (f'<td class="cell {kind(row)}" {data} data-status="{escape(row.status)}"{review} title="{escape(tip)}">'
                f"{self.link(handed, inner)}</td>")

    def pass_rate(self, notebook: Notebook, exercise: Exercise) -> str:
        handed = self.graded(notebook.stem)
        passed = sum(one.solved(exercise.id) for one in handed)
        if not handed:
            return f'<td data-exercise="{exercise.id}">—</td>'
        percent = round(100 * passed / len(handed))
        return (f'<td class="pass-rate" data-exercise="{exercise.id}" data-passed="{passed}" '
                f'data-handed="{len(handed)}"><span class="rate">{passed}/{len(handed)}</span><br>{percent}%</td>')

    def grid(self) -> str:
        exercises = self.exercises()
        top = "".join(f'<th colspan="{len(nb.exercises)}" title="{escape(nb.stem)}">{escape(nb.said_title)}</th>'
                      for nb in self.notebooks)
        second = "".join(f'<th title="{escape(e.said_title)}">{e.id}</th>' for _, e in exercises)
        maximum = sum(max_points(notebook) for notebook in self.notebooks)
        body = []
        for learner in self.names:
            handed_in = self.learners.get(learner, {})
            total = sum(handed.points for handed in handed_in.values())
            cells = "".join(self.cell(learner, notebook, exercise) for notebook, exercise in exercises)
            body.append(f'<tr data-learner="{escape(learner)}"><th class="learner" scope="row">'
                        f'{escape(self.shown_name(learner))}</th>{cells}<td class="total">{total}/{maximum}</td></tr>')
        rates = "".join(self.pass_rate(notebook, exercise) for notebook, exercise in exercises)
        return (f'<table class="grid"><thead><tr><th rowspan="2">{escape(WORDS("learner"))}</th>{top}'
                f'<th rowspan="2">{escape(WORDS("points"))}</th></tr>'
                f"<tr>{second}</tr></thead><tbody>{''.join(body)}</tbody>"
                f'<tfoot><tr><th class="learner" scope="row">{escape(WORDS("pass_rate"))}</th>{rates}<td></td></tr>'
                "</tfoot></table>")

    def legend(self) -> str:
        return '<p class="legend">' + "".join(f'<span class="{css}">{escape(WORDS(f"legend_{css}"))}</span>'
                                              for css in LEGEND) + "</p>"

    # --- the first screen: the two questions ---------------------------------------------------------

    def exercise_line(self, notebook: Notebook, exercise: Exercise) -> str:
        handed = self.graded(notebook.stem)
        solved = sum(one.solved(exercise.id) for one in handed)
        ranked = failures(exercise, handed)
        width = round(100 * solved / len(handed)) if handed else 0
        counts = WORDS("solved_of", solved=solved, graded=len(handed)) if handed else WORDS("no_graded")
        if ranked:
            top = ranked[0]
            # "not written yet: not written yet: ..." once (a check's message may start with the status, in its words)
            message = re.sub(rf"^{re.escape(top.status)}\s*:\s*", "", top.message)
            said = WORDS("most_hit", count=len(top.learners), status=top.status)
            detail = WORDS("said", what=said, detail=message) if message else said
        else:
            detail = WORDS("everyone_solved") if handed else ""
        return (f'<tr data-exercise="{exercise.id}" data-solved="{solved}" data-graded="{len(handed)}">'
                f'<th scope="row"><a href="#exercise-{exercise.id}">{exercise.id}</a></th>'
                f'<td class="what" title="{escape(notebook.said_title)}">{escape(exercise.said_title)}</td>'
                f'<td class="counts"><span class="bar"><span style="width:{width}%"></span></span>{escape(counts)}</td>'
                f'<td class="top-failure" title="{escape(detail)}">{escape(detail)}</td></tr>')

    def exercise_order(self, worst_first: bool) -> list[tuple[Notebook, Exercise]]:
        exercises = self.exercises()
        if not worst_first:
            return exercises

        def rate(item):
            notebook, exercise = item
            handed = self.graded(notebook.stem)
            solved = sum(one.solved(exercise.id) for one in handed)
            return (solved / len(handed) if handed else 2, -len(handed), exercises.index(item))
        return sorted(exercises, key=rate)

    def standings(self) -> list[Standing]:
        maximum = sum(max_points(notebook) for notebook in self.notebooks)
        exercises = self.exercises()
        strangers = set(self.not_on_roster)
        found = []
        for learner in self.names:
            handed_in = self.learners.get(learner, {})
            solved = sum(handed_in[nb.stem].solved(e.id) for nb, e in exercises if nb.stem in handed_in)
            found.append(Standing(learner, self.shown_name(learner), sum(h.points for h in handed_in.values()),
                                  maximum, solved, len(exercises), learner not in strangers))
        return found

    def learner_line(self, standing: Standing) -> str:
        width = round(100 * standing.points / standing.maximum) if standing.maximum else 0
        marks = [] if standing.on_roster else [WORDS("not_on_roster_mark")]
        if standing.learner not in self.learners:
            marks.append(WORDS("nothing_handed_in"))
        if any(row.review for row in self.rows if row.learner == standing.learner):
            marks.append(WORDS("review_mark"))
        note = f'<small>{escape(" · ".join(marks))}</small>' if marks else ""
        return (f'<tr data-learner="{escape(standing.learner)}" data-points="{standing.points}">'
                f'<th scope="row">{escape(standing.name)} {note}</th>'
                f'<td class="counts"><span class="bar"><span style="width:{width}%"></span></span>'
                f"{standing.points}/{standing.maximum}</td>"
                f'<td class="solved-count">{standing.solved}/{standing.exercises}</td></tr>')

    def view(self, anchor: str, alternative: bool, switch: tuple[str, str], here: str, lines: list[str],
             table_class: str) -> str:
        """One order of a list: a static view (shown by CSS when it is the target, for the alternative)."""
        label, target = switch
        return (f'<div class="view{" alternative" if alternative else " default"}" id="{anchor}">'
                f'<p class="orders"><b>{escape(here)}</b> · <a href="#{target}">{escape(label)}</a></p>'
                f'<table class="{table_class}">{"".join(lines)}</table></div>')

    def answers(self) -> str:
        exercises = [self.exercise_line(nb, e) for nb, e in self.exercise_order(worst_first=True)]
        in_order = [self.exercise_line(nb, e) for nb, e in self.exercise_order(worst_first=False)]
        standings = self.standings()
        by_score = sorted(standings, key=lambda one: (one.points, one.solved, one.name.casefold()))
        by_name = sorted(standings, key=lambda one: one.name.casefold())
        stuck = (self.view("exercises-in-course-order", True, (WORDS("worst_first"), "exercises"),
                           WORDS("course_order"), in_order, "rates")
                 + self.view("exercises", False, (WORDS("course_order"), "exercises-in-course-order"),
                             WORDS("worst_first"), exercises, "rates"))
        helping = (self.view("learners-by-name", True, (WORDS("lowest_first"), "learners"), WORDS("name_order"),
                             [self.learner_line(one) for one in by_name], "standings")
                   + self.view("learners", False, (WORDS("name_order"), "learners-by-name"), WORDS("lowest_first"),
                               [self.learner_line(one) for one in by_score], "standings"))
        return (f'<div class="answers"><section class="question" id="stuck-question"><h2>{escape(WORDS("stuck"))}</h2>'
                f'<div class="views">{stuck}</div></section>'
                f'<section class="question" id="help-question"><h2>{escape(WORDS("help"))}</h2>'
                f'<div class="views">{helping}</div></section></div>')

    # --- below the fold ----------------------------------------------------------------------------------

    def stuck(self) -> str:
        parts = []
        for notebook in self.notebooks:
            handed = self.graded(notebook.stem)
            for exercise in notebook.exercises:
                ranked = failures(exercise, handed)
                solved = sum(one.solved(exercise.id) for one in handed)
                heading = (f'<h3 id="exercise-{exercise.id}">{exercise.id} {escape(exercise.said_title)} '
                           f"<small>{escape(WORDS('heading_counts', notebook=notebook.said_title, solved=solved, graded=len(handed)))}"
                           "</small></h3>")
                if not ranked:
                    parts.append(heading + f'<p class="all-solved" data-exercise="{exercise.id}">'
                                 f"{escape(WORDS('all_solved'))}</p>")
                    continue
                items = []
                for failure in ranked:
                    who = ", ".join(self.link(one, escape(self.shown_name(one.learner))) for one in failure.learners)
                    count = len(failure.learners)
                    message = f'<span class="message">{escape(failure.message)}</span>' if failure.message else ""
                    items.append(f'<li data-count="{count}" data-status="{escape(failure.status)}">'
                                 f'<span class="count">{escape(WORDS("one_learner" if count == 1 else "learners_count", count=count))}</span> · '
                                 f'{escape(failure.status)}{message}<span class="who">{who}</span></li>')
                parts.append(heading + f'<ol class="stuck" data-exercise="{exercise.id}">{"".join(items)}</ol>')
        return "".join(parts)

    def ungraded(self) -> str:
        broken = ungraded(self.rows)
        if not broken:
            return ""
        lines = "".join(f"<tr><th>{escape(row.learner)}</th><td>{escape(row.file)}</td><td>{escape(row.status)}</td>"
                        f"<td>{escape(row.message)}</td></tr>" for row in broken)
        head = "".join(f"<th>{escape(WORDS(key))}</th>" for key in ("learner", "file", "status", "why"))
        return (f'<h2>{escape(WORDS("ungraded"))}</h2><table class="ungraded">'
                f"<tr>{head}</tr>{lines}</table>")

    def identical_files(self) -> str:
        if not self.identical:
            return ""
        items = "".join("<li>" + ", ".join(f"{escape(learner)} <small>({escape(file)})</small>"
                                           for learner, file in group.copies) + "</li>" for group in self.identical)
        return (f'<h2 id="identical">{escape(WORDS("identical"))}</h2><p>{escape(WORDS("identical_intro"))}</p>'
                f'<ul class="identical">{items}</ul>')

    def flagged(self) -> list[Row]:
        return [row for row in self.rows if row.review]

    def reviews(self) -> str:
        flagged = self.flagged()
        if not flagged:
            return ""
        items = "".join(f'<li data-learner="{escape(row.learner)}" data-exercise="{escape(row.exercise)}">'
                        f"<b>{escape(self.shown_name(row.learner))}</b>, {escape(row.exercise)} "
                        f"<small>({escape(row.file)})</small>{escape(WORDS('said', what='', detail=row.review))}</li>"
                        for row in flagged)
        return (f'<h2 id="review">{escape(WORDS("review_heading"))}</h2><p>{escape(WORDS("review_intro"))}</p>'
                f'<ul class="review">{items}</ul>')

    def roster_notes(self) -> str:
        notes = []
        if self.not_on_roster:
            words = WORDS("not_on_roster_canvas" if self.canvas else "not_on_roster", names=", ".join(self.not_on_roster))
            notes.append(f'<p class="note" id="not-on-roster">{escape(words)}</p>')
        if self.without_submission:
            names = ", ".join(self.shown_name(name) for name in self.without_submission)
            notes.append(f'<p class="note" id="without-submission">'
                         f"{escape(WORDS('without_submission', names=names))}</p>")
        if self.flagged():
            notes.append(f'<p class="note"><a href="#review">'
                         f"{escape(WORDS('review_note', count=len(self.flagged())))}</a></p>")
        return "".join(notes)

    def summary(self) -> str:
        graded = sum(handed.graded for handed_in in self.learners.values() for handed in handed_in.values())
        if self.roster is not None:
            students = len(self.roster.students)
            counted = WORDS("students", students=students, handed=students - len(self.without_submission))
            if self.not_on_roster:
                counted += WORDS("strangers", count=len(self.not_on_roster))
        else:
            counted = WORDS("learners_summary", learners=len(self.names))
        return counted + WORDS("graded", graded=graded)

    def html(self) -> str:
        return (
            f'<!DOCTYPE html>\n<html lang="{language.current()}"><head><meta charset="utf-8">'
            "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">"
            f'<meta name="viewport" content="width=device-width"><title>{escape(self.title)}</title>'
            f"<style>\n{STYLE}\n</style></head>\n<body>\n"
            f'<h1>{escape(self.title)}</h1><p class="summary">{escape(self.summary())}</p>{self.roster_notes()}\n'
            f"{self.answers()}\n"
            f"<h2>{escape(WORDS('grid'))}</h2>{self.legend()}{self.grid()}\n"
            f'<h2 id="stuck">{escape(WORDS("where_stuck"))}</h2>{self.stuck()}\n{self.ungraded()}\n'
            f"{self.reviews()}{self.identical_files()}</body></html>\n"
        )


def relative_links(feedback: dict[str, Path], page: Path) -> dict[str, str]:
    """A submission's file -> its feedback notebook, as a link relative to the page (the folder can move)."""
    folder = page.resolve().parent
    return {file: quote(Path(os.path.relpath(Path(target).resolve(), folder)).as_posix())
            for file, target in feedback.items()}


def write_report(rows: list[Row], path: Path, feedback: dict[str, Path] | None = None, roster=None,
                 course: Course = COURSE, identical: list[Identical] = (), canvas: bool = False) -> None:
    """The page at `path`; `canvas`: a Canvas file was written too (the page then says who is left out of it)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    report = ClassReport(rows, relative_links(feedback or {}, path), roster, course, identical=identical,
                         canvas=canvas)
    path.write_text(report.html(), encoding="utf-8")
