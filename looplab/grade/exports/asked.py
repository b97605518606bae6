"""The files the command line was asked for beside the gradebook, each written from the rows.

`--wide` (one row per learner), `--canvas` (with `--roster`), `--report` (the class report, linking the
feedback notebooks), `--gradescope` (results.json, saying itself when kernels were not isolated: a learner
sees that file, not the grader's output); and, with `--roster`, `unmatched.csv` beside the gradebook when a
learner is not on the roster (rows/unmatched.py: the instructor says who they are, `--match` reads it back).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ...catalogue import words
from ..kernels.sandbox import Isolation
from ..rows.class_gradebook import wide_table
from ..rows.roster import Roster
from ..rows.unmatched import WORDS as UNMATCHED_WORDS, columns as unmatched_columns, unmatched_table
from ..shared.gradebook import Row
from ..submissions.finding import Identical
from .canvas import DEFAULT_MISSING, CanvasColumnError, class_list_warning, created_note, write_canvas
from .class_report import write_report
from .gradescope import not_isolated, write_results
from .spreadsheet import for_spreadsheet, write_csv_rows

WORDS = words(__file__)  # texts/asked.toml: each export's name in the closing line, in the report's language


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
    canvas_columns: dict[str, str] = field(default_factory=dict)  # --canvas-column: stem -> assignment ("": left out)

    def written(self) -> list[tuple[str, str]]:
        """(what, where) of each export asked for, in the order the summary names them, in the current language."""
        return [(WORDS(name), path) for name, path in (("wide", self.wide), ("report", self.report),
                                                       ("canvas", self.canvas), ("gradescope", self.gradescope)) if path]


@dataclass
class Exported:
    """What writing the exports left: notes for the instructor, and the errors of exports not written."""
    notes: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    not_written: list[str] = field(default_factory=list)  # the paths of the exports an error kept from being written


def write_exports(asked: Asked, rows: list[Row], feedback: dict[str, Path], roster: Roster | None, elapsed: float,
                  isolation: Isolation = Isolation(True), identical: list[Identical] = (),
                  graded: list[Row] | None = None) -> Exported:
    """Write the files asked for; returns notes for the instructor (who is not on the roster) and errors (a Canvas
    column no assignment is: that file is not written, the others are).

    `rows`: keyed to the roster when there is one; `graded`: the rows as graded, under the learners' own names
    (unmatched.csv lists those names: the ones the instructor sees in the download)."""
    done = Exported()
    notes = done.notes
    if roster is not None:
        not_on_roster = roster.match(list(dict.fromkeys(row.learner for row in rows))).not_on_roster
        table = unmatched_table(graded if graded is not None else rows, roster)
        if table and asked.unmatched:
            write_csv_rows(Path(asked.unmatched), unmatched_columns(), table, for_spreadsheet())
        if not_on_roster:
            notes.append(UNMATCHED_WORDS("not_matched", learners=", ".join(not_on_roster),
                                         path=asked.unmatched or "unmatched.csv"))
    if asked.wide:
        header, table = wide_table(rows, roster)
        write_csv_rows(Path(asked.wide), header, table, for_spreadsheet())
    if asked.canvas:
        try:
            export = write_canvas(rows, roster, Path(asked.canvas), missing=asked.canvas_missing,
                                  columns=asked.canvas_columns)
        except CanvasColumnError as error:
            done.errors.append(WORDS("canvas_not_written", path=asked.canvas, error=error))
            done.not_written.append(asked.canvas)
        else:
            notes += created_note(export)
        notes += class_list_warning(roster, asked.roster_path)
    if asked.report:
        write_report(rows, Path(asked.report), feedback, roster, identical=identical, canvas=bool(asked.canvas))
    if asked.gradescope:
        warnings = [] if isolation.sandboxed else [not_isolated(isolation.problem)]
        write_results(rows, Path(asked.gradescope), elapsed, asked.gradescope_visibility, warnings)
    return done
