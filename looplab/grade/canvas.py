"""A Canvas gradebook CSV from the gradebook's rows and a roster: one column per notebook.

The roster is a Canvas gradebook export (Grades > Export), or any CSV with its first columns:
`Student`, `ID`, `SIS User ID`, `SIS Login ID`, `Section` (`Student` and `SIS Login ID` required). A
learner (the grader's name for them: their folder, or their file name) is the student whose SIS Login
ID is that name, else whose SIS User ID, else whose Canvas ID, ignoring case. Rows of the export
without a student ("Points Possible") are skipped.

The file written has one row per roster student, in the roster's order, with the five columns and one
column per course notebook that anyone handed in, holding the points of the submission that counts
(class_results.py); empty for a student who did not hand that notebook in. Its second row is Canvas's
"Points Possible" row, each notebook's total: Canvas imports points as they are, so the assignment's
points should be that total. A notebook's column is named after the assignment of the roster whose name (the
header without its " (id)") is the notebook's title or file name, so the import updates that
assignment; without one it is the notebook's title alone, and Canvas creates the assignment on
import (export the gradebook again afterwards and use it as the roster). Learners who are not on the
roster are left out of the file and listed in `CanvasExport.not_on_roster`.
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass, field
from pathlib import Path

from ..course import COURSE, Course, Notebook
from .class_results import counted, max_points
from .gradebook import Row
from .spreadsheet import write_csv_rows

STUDENT_COLUMNS = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
REQUIRED = ("Student", "SIS Login ID")
MATCHED_ON = ("SIS Login ID", "SIS User ID", "ID")  # in this order
ASSIGNMENT = re.compile(r"^(?P<name>.*\S)\s*\((?P<id>\d+)\)$")
POINTS_POSSIBLE = "Points Possible"  # Canvas's export writes it indented: "    Points Possible"


class RosterError(ValueError):
    """The roster file cannot be used (missing, not a CSV, a required column missing)."""


@dataclass
class Roster:
    students: list[dict[str, str]]  # the five columns of each student, in the file's order
    assignments: dict[str, str]  # an assignment column's name without its id, in lower case -> the full header

    def student(self, learner: str) -> dict[str, str] | None:
        """The roster row of a learner, by the rule in the module docstring; None if not on the roster."""
        wanted = learner.strip().casefold()
        for column in MATCHED_ON:
            for student in self.students:
                if wanted and student[column].casefold() == wanted:
                    return student
        return None

    @staticmethod
    def key(student: dict[str, str]) -> str:
        """How to name a student in a message: the first of their matched-on columns that is filled."""
        return next((student[column] for column in MATCHED_ON if student[column]), student["Student"])

    def match(self, learners: list[str]) -> RosterMatch:
        return RosterMatch(self, {learner: self.student(learner) for learner in learners})


@dataclass
class RosterMatch:
    """The graded learners matched to the roster: who is not on it, and who on it handed nothing in."""

    roster: Roster
    students: dict[str, dict[str, str] | None]  # learner -> their roster row, None if not on the roster

    @property
    def not_on_roster(self) -> list[str]:
        return [learner for learner, student in self.students.items() if student is None]

    @property
    def without_submission(self) -> list[str]:
        """The roster students no learner was matched to, each named by Roster.key."""
        matched = [student for student in self.students.values() if student is not None]
        return [self.roster.key(student) for student in self.roster.students
                if not any(student is other for other in matched)]

    def learners_of(self, student: dict[str, str]) -> list[str]:
        return [learner for learner, matched in self.students.items() if matched is student]


def read_roster(path: Path) -> Roster:
    try:
        with open(path, newline="", encoding="utf-8-sig") as handle:
            reader = csv.DictReader(handle)
            header = list(reader.fieldnames or [])
            table = list(reader)
    except (OSError, UnicodeDecodeError, csv.Error) as error:
        raise RosterError(f"cannot read the roster {path}: {error}") from None
    missing = [column for column in REQUIRED if column not in header]
    if missing:
        raise RosterError(f"the roster {path} has no column {', '.join(missing)}: it should be a Canvas gradebook "
                          f"export, or a CSV with the columns {', '.join(STUDENT_COLUMNS)}")
    students = []
    for entry in table:
        student = {column: (entry.get(column) or "").strip() for column in STUDENT_COLUMNS}
        if student["Student"] == POINTS_POSSIBLE or not any(student[column] for column in MATCHED_ON):
            continue  # Canvas's "Points Possible" (and similar) rows: no student
        students.append(student)
    assignments = {}
    for column in header:
        match = ASSIGNMENT.match(column or "")
        if match:
            assignments.setdefault(match["name"].strip().casefold(), column)
    return Roster(students, assignments)


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


def canvas_export(rows: list[Row], roster: Roster, course: Course = COURSE) -> CanvasExport:
    learners = counted(rows, course)
    handed_stems = {stem for handed_in in learners.values() for stem in handed_in}
    notebooks = [notebook for notebook in course.notebooks if notebook.stem in handed_stems]
    header = STUDENT_COLUMNS + [column_name(notebook, roster) for notebook in notebooks]
    table = [["    " + POINTS_POSSIBLE, "", "", "", ""] + [max_points(notebook) for notebook in notebooks]]
    matched = roster.match(list(learners))
    for student in roster.students:
        handed_in = {}
        for learner in matched.learners_of(student):  # two folders for one student: the better of each notebook
            for stem, handed in learners[learner].items():
                if stem not in handed_in or handed.points > handed_in[stem].points:
                    handed_in[stem] = handed
        table.append([student[column] for column in STUDENT_COLUMNS]
                     + [handed_in[nb.stem].points if nb.stem in handed_in else "" for nb in notebooks])
    return CanvasExport(header, table, matched.not_on_roster, matched.without_submission)


def write_canvas(rows: list[Row], roster: Roster, path: Path, course: Course = COURSE) -> CanvasExport:
    export = canvas_export(rows, roster, course)
    write_csv_rows(path, export.header, export.rows)
    return export
