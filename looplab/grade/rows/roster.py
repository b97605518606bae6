"""The class roster (`--roster FILE`): who is in the class, and which student a graded learner is.

Two kinds of file are read, told apart by their header:
- a Canvas gradebook export (Grades > Export), or any CSV with its first columns `Student`, `ID`,
  `SIS User ID`, `SIS Login ID`, `Section` (`Student` and `SIS Login ID` required); rows without a
  student (Canvas's "Points Possible") are skipped;
- a class list with the columns `id`, `name` and `email` (any case, any order, other columns
  ignored; `name` and one of `id`/`email` required), as most schools can export, or their French names
  (`identifiant`, `nom`, `e-mail`); for a class on a JupyterHub, a `username` column (`nom d'utilisateur`) holding
  each student's hub user, alone or beside the others. Its students get the same five columns: Student = name, ID
  and SIS User ID = id, SIS Login ID = email; and their `username`, which no Canvas file carries.
Either is read comma- or semicolon-separated (a spreadsheet in a French locale saves a CSV with `;`: `table`),
with or without a byte-order mark.

A learner (the grader's name for them: a folder, a file name, the name an LMS download carries, see
submissions/lms.py, or a hub user, submissions/homes.py) is, ignoring case, the student whose SIS Login ID (a class
list's e-mail) is that name, else whose SIS User ID, else whose ID, else whose hub `username`; else whose e-mail
address's part before the `@` is that name (`alice` for alice@school.edu: a hub whose users log in with their
school account names them either way, the whole address or its first part); else whose full name it is, in either
order, ignoring case, accents, spaces and punctuation (`Alice Smith`, `smithalice` and `Smith, Alice` are one
person). A part of a name is never enough: `bob` is not `Bob Brown`. The first of those steps that finds anyone
decides, and it must find one student: a name two students answer to at one step (`alice` for alice@school.edu and
alice@college.edu, two students named Alice Smith) matches neither, and the grader says so (`ambiguous`): the
instructor says which in unmatched.csv. Rows with the same key (`Roster.key`) are one student.
Names are compared in every script (`letters`): `Νίκος Παπαδάκης`, `Иван Петров`, `王小明`
and `محمد علي` match their Canvas, Moodle and browser download names as `Alice Smith` does, and every
cell and name is read in Unicode's composed form (NFC, submissions/lms.nfc), however it was typed or
unzipped.

A learner matched to nobody is written to `unmatched.csv` (unmatched.py), where the instructor says which
student each one is; fed back with `--match FILE`, those answers (`Roster.with_matches`) come first.
"""

from __future__ import annotations

import csv
import io
import re
import unicodedata
from dataclasses import dataclass, field, replace
from pathlib import Path

from ...catalogue import words
from ..submissions.lms import nfc

STUDENT_COLUMNS = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
REQUIRED = ("Student", "SIS Login ID")
CLASS_LIST_COLUMNS = ("id", "name", "email")
MATCHED_ON = ("SIS Login ID", "SIS User ID", "ID")  # in this order
USERNAME = "username"  # a class list's hub user of a student (homes.py): matched on after MATCHED_ON; never in Canvas
KEYED_ON = MATCHED_ON + (USERNAME,)
ASSIGNMENT = re.compile(r"^(?P<name>.*\S)\s*\((?P<id>\d+)\)$")
POINTS_POSSIBLE = "Points Possible"  # Canvas's export writes it indented: "    Points Possible"
CANVAS_EXPORT, CLASS_LIST = "a Canvas gradebook export", "a class list"  # Roster.kind
# Why a roster cannot be read, and a class list's column names in each language (texts/roster.toml).
WORDS = words(__file__)
LIST_COLUMNS = {"id": "list_id", "name": "list_name", "email": "list_email",  # a class list's column -> its row
                USERNAME: "list_username"}


class RosterError(ValueError):
    """The roster file cannot be used (missing, not a CSV, a required column missing)."""


def letters(text: str) -> str:
    """A name reduced to its letters and digits, in any script, without accents (the combining marks of its
    decomposed form), in lower case: 'Zoë O'Brien' -> 'zoeobrien', 'Νίκος' -> 'νικος', '王 小明' -> '王小明'."""
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return "".join(char for char in decomposed if char.isalnum() and not unicodedata.combining(char))


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
    kind: str = CANVAS_EXPORT  # CANVAS_EXPORT or CLASS_LIST: what the file was
    # The instructor's answers (`--match`): a learner, in NFC and lower case -> their student's row.
    matches: dict[str, dict[str, str]] = field(default_factory=dict)

    def student(self, learner: str) -> dict[str, str] | None:
        """The roster row of a learner, by the rule in the module docstring; None if not on the roster, or if the
        step that finds anyone finds more than one student (`ambiguous` names them)."""
        found = self._candidates(learner)
        return found[0] if len(found) == 1 else None

    def ambiguous(self, learner: str) -> list[dict[str, str]]:
        """The students a learner's name matches when it matches more than one (then it matches none), else []."""
        found = self._candidates(learner)
        return found if len(found) > 1 else []

    def _candidates(self, learner: str) -> list[dict[str, str]]:
        """The students the first step of the rule that finds anyone finds, one row per key."""
        wanted = nfc(learner).strip().casefold()
        if not wanted:
            return []
        if wanted in self.matches:
            return [self.matches[wanted]]
        for column in KEYED_ON:
            found = [student for student in self.students if student.get(column, "").casefold() == wanted]
            if found:
                return self._one_per_key(found)
        found = [student for student in self.students if "@" in student["SIS Login ID"]
                 and student["SIS Login ID"].casefold().partition("@")[0] == wanted]
        if found:
            return self._one_per_key(found)
        reduced = letters(learner)
        return self._one_per_key([student for student in self.students
                                  if reduced and reduced in name_forms(student["Student"])])

    @classmethod
    def _one_per_key(cls, students: list[dict[str, str]]) -> list[dict[str, str]]:
        one: dict[str, dict[str, str]] = {}
        for student in students:
            one.setdefault(cls.key(student).casefold(), student)
        return list(one.values())

    @staticmethod
    def key(student: dict[str, str]) -> str:
        """How to name a student in a message: the first of their matched-on columns that is filled (SIS Login ID,
        SIS User ID, ID, then the hub username of a class list that has no other)."""
        return next((student.get(column, "") for column in KEYED_ON if student.get(column, "")), student["Student"])

    def match(self, learners: list[str]) -> RosterMatch:
        return RosterMatch(self, {learner: self.student(learner) for learner in learners})

    def with_matches(self, matches: dict[str, dict[str, str]]) -> Roster:
        """The roster, with these learners (learner -> one of its students' rows) matched first."""
        added = {nfc(learner).strip().casefold(): student for learner, student in matches.items()}
        return replace(self, matches={**self.matches, **added})


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


def separator(header_line: str) -> str:
    """The separator of a CSV file, from its header line: `;` when it splits the header more than `,` does (a
    spreadsheet in a French locale saves `id;nom;e-mail`), else `,`."""
    return ";" if header_line.count(";") > header_line.count(",") else ","


def table(path: Path) -> csv.DictReader:
    """A CSV file's rows by column name, comma- or semicolon-separated, with or without a byte-order mark (raises
    OSError, UnicodeDecodeError)."""
    text = path.read_text(encoding="utf-8-sig")
    return csv.DictReader(io.StringIO(text, newline=""), delimiter=separator(text.partition("\n")[0]))


def read_roster(path: Path) -> Roster:
    try:
        reader = table(path)
        header = [nfc(column or "") for column in reader.fieldnames or []]
        reader.fieldnames = header
        entries = [{column: nfc(value) if isinstance(value, str) else value for column, value in entry.items()}
                   for entry in reader]
    except (OSError, UnicodeDecodeError, csv.Error) as error:
        raise RosterError(WORDS("cannot_read", path=path, error=error)) from None
    if all(column in header for column in REQUIRED):
        return canvas_roster(header, entries)
    lower = {}
    for column in header:  # a class list's columns, under their name in any language
        said = column.strip().casefold()
        lower |= {name: column for name, key in LIST_COLUMNS.items()
                  if said in {text.casefold() for text in WORDS.rows[key].values()}}
    if USERNAME in lower or ("name" in lower and ("id" in lower or "email" in lower)):
        return class_list(lower, entries)
    raise RosterError(WORDS("neither", path=path, class_list=", ".join(WORDS(LIST_COLUMNS[c]) for c in CLASS_LIST_COLUMNS),
                            canvas=", ".join(STUDENT_COLUMNS), username=WORDS(LIST_COLUMNS[USERNAME])))


def canvas_roster(header: list[str], table: list[dict]) -> Roster:
    students = []
    for entry in table:
        student = {column: (entry.get(column) or "").strip() for column in STUDENT_COLUMNS}
        if student["Student"] == POINTS_POSSIBLE or not any(student[column] for column in MATCHED_ON):
            continue  # Canvas's "Points Possible" (and similar) rows: no student
        students.append(student | {USERNAME: ""})
    assignments = {}
    for column in header:
        match = ASSIGNMENT.match(column)
        if match:
            assignments.setdefault(match["name"].strip().casefold(), column)
    return Roster(students, assignments)


def class_list(columns: dict[str, str], table: list[dict]) -> Roster:
    """A class list (id, name, email, and a hub's username) as roster rows with Canvas's five columns and the
    username."""
    def value(entry: dict, name: str) -> str:
        return (entry.get(columns[name]) or "").strip() if name in columns else ""

    students = [{"Student": value(entry, "name"), "ID": value(entry, "id"), "SIS User ID": value(entry, "id"),
                 "SIS Login ID": value(entry, "email"), "Section": "", USERNAME: value(entry, USERNAME)}
                for entry in table if value(entry, "name") or value(entry, "id") or value(entry, USERNAME)]
    return Roster(students, {}, CLASS_LIST)
