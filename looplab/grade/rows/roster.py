"""The class roster (`--roster FILE`): who is in the class, and which student a graded learner is.

Two kinds of file are read, told apart by their header:
- a Canvas gradebook export (Grades > Export), or any CSV with its first columns `Student`, `ID`,
  `SIS User ID`, `SIS Login ID`, `Section` (`Student` and `SIS Login ID` required); rows without a
  student (Canvas's "Points Possible") are skipped;
- a class list with the columns `id`, `name` and `email` (any case, any order, other columns
  ignored; `name` and one of `id`/`email` required), as most schools can export. Its students get the
  same five columns: Student = name, ID and SIS User ID = id, SIS Login ID = email.

A learner (the grader's name for them: a folder, a file name, or the name an LMS download carries,
see submissions/lms.py) is the student whose SIS Login ID is that name, else whose SIS User ID, else whose ID,
ignoring case; else whose e-mail address starts with it (`alice` for alice@school.edu); else whose
full name it is, in either order, ignoring case, accents, spaces and punctuation (`Alice Smith`,
`smithalice` and `Smith, Alice` are one person). A part of a name is never enough: `bob` is not
`Bob Brown`.
"""

from __future__ import annotations

import csv
import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path

STUDENT_COLUMNS = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
REQUIRED = ("Student", "SIS Login ID")
CLASS_LIST_COLUMNS = ("id", "name", "email")
MATCHED_ON = ("SIS Login ID", "SIS User ID", "ID")  # in this order
ASSIGNMENT = re.compile(r"^(?P<name>.*\S)\s*\((?P<id>\d+)\)$")
POINTS_POSSIBLE = "Points Possible"  # Canvas's export writes it indented: "    Points Possible"


class RosterError(ValueError):
    """The roster file cannot be used (missing, not a CSV, a required column missing)."""


def letters(text: str) -> str:
    """A name reduced to its letters and digits, without accents, in lower case: 'Zoë O'Brien' -> 'zoeobrien'."""
    plain = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    return re.sub(r"[^a-z0-9]", "", plain.casefold())


def name_forms(full_name: str) -> set[str]:
    """The ways a full name is written, reduced by `letters`: first-last and last-first."""
    if "," in full_name:  # "Smith, Alice"
        last, _, first = full_name.partition(",")
        words = first.split() + last.split()
    else:
        words = full_name.split()
    if not words:
        return set()
    return {letters(" ".join(words)), letters(" ".join(words[-1:] + words[:-1]))} - {""}


@dataclass
class Roster:
    students: list[dict[str, str]]  # the five columns of each student, in the file's order
    assignments: dict[str, str]  # an assignment column's name without its id, in lower case -> the full header

    def student(self, learner: str) -> dict[str, str] | None:
        """The roster row of a learner, by the rule in the module docstring; None if not on the roster."""
        wanted = learner.strip().casefold()
        if not wanted:
            return None
        for column in MATCHED_ON:
            for student in self.students:
                if student[column].casefold() == wanted:
                    return student
        for student in self.students:
            login = student["SIS Login ID"].casefold()
            if "@" in login and login.partition("@")[0] == wanted:
                return student
        reduced = letters(learner)
        for student in self.students:
            if reduced and reduced in name_forms(student["Student"]):
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


def read_roster(path: Path) -> Roster:
    try:
        with open(path, newline="", encoding="utf-8-sig") as handle:
            reader = csv.DictReader(handle)
            header = [column or "" for column in reader.fieldnames or []]
            table = list(reader)
    except (OSError, UnicodeDecodeError, csv.Error) as error:
        raise RosterError(f"cannot read the roster {path}: {error}") from None
    if all(column in header for column in REQUIRED):
        return canvas_roster(header, table)
    lower = {column.strip().casefold(): column for column in header}
    if "name" in lower and ("id" in lower or "email" in lower):
        return class_list(lower, table)
    raise RosterError(f"the roster {path} has neither the columns {', '.join(CLASS_LIST_COLUMNS)} of a class "
                      f"list nor those of a Canvas gradebook export ({', '.join(STUDENT_COLUMNS)})")


def canvas_roster(header: list[str], table: list[dict]) -> Roster:
    students = []
    for entry in table:
        student = {column: (entry.get(column) or "").strip() for column in STUDENT_COLUMNS}
        if student["Student"] == POINTS_POSSIBLE or not any(student[column] for column in MATCHED_ON):
            continue  # Canvas's "Points Possible" (and similar) rows: no student
        students.append(student)
    assignments = {}
    for column in header:
        match = ASSIGNMENT.match(column)
        if match:
            assignments.setdefault(match["name"].strip().casefold(), column)
    return Roster(students, assignments)


def class_list(columns: dict[str, str], table: list[dict]) -> Roster:
    """A class list (id, name, email) as roster rows with Canvas's five columns."""
    def value(entry: dict, name: str) -> str:
        return (entry.get(columns[name]) or "").strip() if name in columns else ""

    students = [{"Student": value(entry, "name"), "ID": value(entry, "id"), "SIS User ID": value(entry, "id"),
                 "SIS Login ID": value(entry, "email"), "Section": ""}
                for entry in table if value(entry, "name") or value(entry, "id")]
    return Roster(students, {})
