"""The files the command line was asked for beside the gradebook, each written from the rows.

`--wide` (one row per learner), `--canvas` (with `--roster`), `--report` (the class report, linking the
feedback notebooks), `--gradescope` (results.json, saying itself when kernels were not isolated: a learner
sees that file, not the grader's output); and, with `--roster`, `unmatched.csv` beside the gradebook when a
learner is not on the roster (rows/unmatched.py: the instructor says who they are, `--match` reads it back).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..kernels.sandbox import Isolation
from ..rows.class_gradebook import wide_table
from ..rows.roster import Roster
from ..rows.unmatched import WORDS as UNMATCHED_WORDS, unmatched_table
from ..rows.unmatched import COLUMNS as UNMATCHED_COLUMNS
from ..shared.gradebook import Row
from ..submissions.finding import Identical
from .canvas import DEFAULT_MISSING, class_list_warning, write_canvas
from .class_report import write_report
from .gradescope import not_isolated, write_results
from .spreadsheet import write_csv_rows


@dataclass(frozen=True)
class Asked:
    """Where each export goes, as given on the command line; None: not asked for."""
    wide: str | None = None
    canvas: str | None = None
    report: str | None = None
    gradescope: str | None = None
    gradescope_visibility: str = "visible"
    canvas_missing: str = DEFAULT_MISSING  # a notebook not handed in, in the Canvas file: "zero" or "blank"
    unmatched: str | None = None  # where unmatched.csv goes (with a roster), beside the gradebook
    roster_path: str = ""  # the --roster file, as given (named in a warning)

    def written(self) -> list[tuple[str, str]]:
        """(what, where) of each export asked for, in the order the summary names them."""
        return [(name, path) for name, path in (("wide", self.wide), ("report", self.report), ("Canvas", self.canvas),
                                                ("Gradescope", self.gradescope)) if path]


def write_exports(asked: Asked, rows: list[Row], feedback: dict[str, Path], roster: Roster | None, elapsed: float,
                  isolation: Isolation = Isolation(True), identical: list[Identical] = (),
                  graded: list[Row] | None = None) -> list[str]:
    """Write the files asked for; returns notes for the instructor (who is not on the roster).

    `rows`: keyed to the roster when there is one; `graded`: the rows as graded, under the learners' own names
    (unmatched.csv lists those names: the ones the instructor sees in the download)."""
    notes = []
    if roster is not None:
        not_on_roster = roster.match(list(dict.fromkeys(row.learner for row in rows))).not_on_roster
        table = unmatched_table(graded if graded is not None else rows, roster)
        if table and asked.unmatched:
            write_csv_rows(Path(asked.unmatched), UNMATCHED_COLUMNS, table, byte_order_mark=True)
        if not_on_roster:
            notes.append(UNMATCHED_WORDS("not_matched", learners=", ".join(not_on_roster),
                                         path=asked.unmatched or "unmatched.csv"))
    if asked.wide:
        header, table = wide_table(rows, roster)
        write_csv_rows(Path(asked.wide), header, table)
    if asked.canvas:
        write_canvas(rows, roster, Path(asked.canvas), missing=asked.canvas_missing)
        notes += class_list_warning(roster, asked.roster_path)
    if asked.report:
        write_report(rows, Path(asked.report), feedback, roster, identical=identical, canvas=bool(asked.canvas))
    if asked.gradescope:
        warnings = [] if isolation.sandboxed else [not_isolated(isolation.problem)]
        write_results(rows, Path(asked.gradescope), elapsed, asked.gradescope_visibility, warnings)
    return notes
