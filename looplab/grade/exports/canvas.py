"""A Canvas gradebook CSV from the gradebook's rows and a roster: one column per notebook.

The roster (roster.py) is a Canvas gradebook export (Grades > Export), or a class list (id, name,
email); roster.py says how a learner is matched to a student.

The file written has one row per roster student, in the roster's order, with the five columns and one
column per course notebook that anyone handed in, holding the points of the submission that counts
(class_results.py); 0 for a student who did not hand that notebook in, as in the gradebook (`--canvas-missing
blank` leaves it empty instead: Canvas then leaves that score out of Current Score, but counts it as 0
in Final Score). Its second row is Canvas's
"Points Possible" row, each notebook's total: Canvas imports points as they are, so the assignment's
points should be that total. A notebook's column is named after the assignment of the roster whose name (the
header without its " (id)") is the notebook's title or file name, so the import updates that
assignment; without one it is the notebook's title alone, and Canvas creates the assignment on
import (export the gradebook again afterwards and use it as the roster). Learners who are not on the
roster are left out of the file and listed in `CanvasExport.not_on_roster` (and in unmatched.csv, where
the instructor can say who they are: rows/unmatched.py).

The file starts with UTF-8's byte-order mark: without it, Excel reads a CSV in the computer's local code
page, and `Núñez` shows as `NÃºÃ±ez`; Canvas reads it either way. A class list as the roster works, but its
`id` goes into both Canvas id columns (ID and SIS User ID): Canvas matches an import on its own ids, so
`CLASS_LIST_WARNING` asks for Canvas's own export.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ...catalogue import words
from ...course import COURSE, Course, Notebook
from ..rows.class_gradebook import keyed_to_roster
from ..rows.class_results import counted, max_points
from ..rows.roster import CLASS_LIST, POINTS_POSSIBLE, STUDENT_COLUMNS, Roster
from ..shared.gradebook import Row
from .spreadsheet import write_csv_rows

POINTS_POSSIBLE_LABEL = f"    {POINTS_POSSIBLE}"  # indented, as Canvas's own export writes it
MISSING = {"zero": 0, "blank": ""}  # --canvas-missing: a notebook not handed in, in the Canvas file
DEFAULT_MISSING = "zero"

# The words of this module (texts/canvas.toml), in the report's language. The file's own words are Canvas's and
# stay as Canvas reads them: its column names (Student, ID, SIS User ID...), "Points Possible", the assignments.
WORDS = words(__file__)
CLASS_LIST_WARNING = WORDS.rows["class_list"]["en"]  # the English, as tests read it


def class_list_warning(roster: Roster, path: str) -> list[str]:
    """The warning for a Canvas file written from a class list, not Canvas's own export; [] for an export."""
    return [WORDS("class_list", path=path)] if roster.kind == CLASS_LIST else []


def column_name(notebook: Notebook, roster: Roster) -> str:
    """The roster's assignment for this notebook (matched on its title or stem), else the notebook's title."""
    for name in (notebook.title, notebook.stem):
        if name.casefold() in roster.assignments:
            return roster.assignments[name.casefold()]
    return notebook.title


@dataclass
class CanvasExport:
    header: list[str]
    rows: list[list]  # the "Points Possible" row, then one per student
    not_on_roster: list[str] = field(default_factory=list)  # learners graded but not on the roster
    without_submission: list[str] = field(default_factory=list)  # roster students who handed nothing in


def canvas_export(rows: list[Row], roster: Roster, course: Course = COURSE, missing: str = DEFAULT_MISSING) -> CanvasExport:
    # Keyed to the roster first: a student's files under several names are one learner, whose copy handed
    # in last counts (class_results.py), as in the gradebook.
    learners = counted(keyed_to_roster(rows, roster), course)
    handed_stems = {stem for handed_in in learners.values() for stem in handed_in}
    notebooks = [notebook for notebook in course.notebooks if notebook.stem in handed_stems]
    header = STUDENT_COLUMNS + [column_name(notebook, roster) for notebook in notebooks]
    table = [[POINTS_POSSIBLE_LABEL, "", "", "", ""] + [max_points(notebook) for notebook in notebooks]]
    matched = roster.match(list(learners))
    for student in roster.students:
        handed_in = learners.get(roster.key(student), {})
        table.append([student[column] for column in STUDENT_COLUMNS]
                     + [handed_in[nb.stem].points if nb.stem in handed_in else MISSING[missing] for nb in notebooks])
    return CanvasExport(header, table, matched.not_on_roster, matched.without_submission)


def write_canvas(rows: list[Row], roster: Roster, path: Path, course: Course = COURSE,
                 missing: str = DEFAULT_MISSING) -> CanvasExport:
    export = canvas_export(rows, roster, course, missing)
    write_csv_rows(path, export.header, export.rows, byte_order_mark=True)
    return export
