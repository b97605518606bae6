"""The files the command line was asked for beside the gradebook, each written from the rows.

`--wide` (one row per learner), `--canvas` (with `--roster`), `--report` (the class report, linking the
feedback notebooks), `--gradescope` (results.json, saying itself when kernels were not isolated: a learner
sees that file, not the grader's output).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..kernels.sandbox import Isolation
from ..rows.class_gradebook import wide_table
from ..rows.roster import Roster
from ..shared.gradebook import Row
from ..submissions.finding import Identical
from .canvas import write_canvas
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

    def written(self) -> list[tuple[str, str]]:
        """(what, where) of each export asked for, in the order the summary names them."""
        return [(name, path) for name, path in (("wide", self.wide), ("report", self.report), ("Canvas", self.canvas),
                                                ("Gradescope", self.gradescope)) if path]


def write_exports(asked: Asked, rows: list[Row], feedback: dict[str, Path], roster: Roster | None, elapsed: float,
                  isolation: Isolation = Isolation(True), identical: list[Identical] = ()) -> list[str]:
    """Write the files asked for; returns notes for the instructor (who is not on the roster)."""
    notes = []
    if roster is not None:
        not_on_roster = roster.match(list(dict.fromkeys(row.learner for row in rows))).not_on_roster
        if not_on_roster:
            notes.append(f"not on the roster (their rows are in the gradebook, under their own names): "
                         f"{', '.join(not_on_roster)}")
    if asked.wide:
        header, table = wide_table(rows, roster)
        write_csv_rows(Path(asked.wide), header, table)
    if asked.canvas:
        export = write_canvas(rows, roster, Path(asked.canvas))
        if export.not_on_roster:  # named above already; this says what it means for the Canvas file
            notes.append(f"so not in {asked.canvas}: {', '.join(export.not_on_roster)}")
    if asked.report:
        write_report(rows, Path(asked.report), feedback, roster, identical=identical)
    if asked.gradescope:
        warnings = [] if isolation.sandboxed else [not_isolated(isolation.problem)]
        write_results(rows, Path(asked.gradescope), elapsed, asked.gradescope_visibility, warnings)
    return notes
