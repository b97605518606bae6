"""Learners the roster does not match, for the instructor to name: `unmatched.csv` out, `--match FILE` in.

Why: a learner the roster cannot match (a nickname, a name written differently, an id mistyped) keeps
their rows in the gradebook but is left out of the Canvas file, so their points never reach Canvas. The
grader cannot guess who they are; the instructor can. So every run with a roster writes, beside the
gradebook, `unmatched.csv`: one row per learner the class list alone does not match (their files and
points), with an empty `student` column. The instructor fills it in with any of the student's roster
columns (SIS Login ID, SIS User ID, ID, e-mail or full name: what roster.py matches on) and grades again
with `--match unmatched.csv`; those learners are then that student everywhere (gradebook, Canvas file,
report). The file written then keeps the answers given, so it can be fed back as it is, again and again.
"""

from __future__ import annotations

import csv
from pathlib import Path

from ...catalogue import words
from ...course import COURSE, Course
from ..shared.gradebook import Row
from ..submissions.lms import nfc
from .class_results import counted
from .roster import Roster

UNMATCHED_FILE = "unmatched.csv"
COLUMNS = ["learner", "files", "points", "student"]
LEARNER, STUDENT = "learner", "student"

# The words of this module (a later issue moves them into translation catalogues).
CANNOT_READ = "cannot read the match file {path}: {error}"
NO_COLUMN = ("the match file {path} has no column {column!r} (its header: {header}); give the unmatched.csv the "
             "grader wrote, with its 'student' column filled in")
NO_LEARNER = "the match file {path}, line {line}: the student {student!r} is given, but no learner"
NO_STUDENT = ("the match file {path}, line {line}: {student!r} is no student of the roster (write their SIS Login "
              "ID, SIS User ID, ID, e-mail or full name as the roster has it)")
TWICE = ("the match file {path}, line {line}: the learner {learner!r} is already matched, on line {earlier}, to "
         "another student")
# The lines the grader prints about learners the roster does not match (texts/unmatched.toml), in the report's
# language: WORDS("not_graded", learners=...), WORDS("not_matched", learners=..., path=...).
WORDS = words(__file__)
NOT_GRADED = WORDS.rows["not_graded"]["en"]  # the English, as tests read it
NOT_MATCHED = WORDS.rows["not_matched"]["en"]


class MatchError(ValueError):
    """The match file cannot be used: unreadable, a column missing, a student the roster does not have."""


def read_matches(path: Path, roster: Roster) -> dict[str, dict[str, str]]:
    """learner -> their roster student, from the rows of the match file whose `student` is filled in."""
    try:
        with open(path, newline="", encoding="utf-8-sig") as handle:
            reader = csv.DictReader(handle)
            header = [nfc(column or "").strip().casefold() for column in reader.fieldnames or []]
            reader.fieldnames = header
            entries = list(reader)
    except (OSError, UnicodeDecodeError, csv.Error) as error:
        raise MatchError(CANNOT_READ.format(path=path, error=error)) from None
    for column in (LEARNER, STUDENT):
        if column not in header:
            raise MatchError(NO_COLUMN.format(path=path, column=column, header=", ".join(header) or "none"))
    matches: dict[str, dict[str, str]] = {}
    lines: dict[str, int] = {}
    for line, entry in enumerate(entries, start=2):
        learner, given = (nfc(entry.get(column) or "").strip() for column in (LEARNER, STUDENT))
        if not given:
            continue
        if not learner:
            raise MatchError(NO_LEARNER.format(path=path, line=line, student=given))
        student = roster.student(given)
        if student is None:
            raise MatchError(NO_STUDENT.format(path=path, line=line, student=given))
        key = learner.casefold()
        if key in matches and matches[key] is not student:
            raise MatchError(TWICE.format(path=path, line=line, learner=learner, earlier=lines[key]))
        matches[key], lines[key] = student, line
    return {learner: student for learner, student in matches.items()}


def unmatched_table(rows: list[Row], roster: Roster, course: Course = COURSE) -> list[list]:
    """The rows of unmatched.csv: each learner the roster alone (without `--match`) does not match, with their
    files, their points (the copies that count) and the student `--match` gave them, if it did."""
    learners = list(dict.fromkeys(row.learner for row in rows))
    plain = Roster(roster.students, roster.assignments, roster.kind)
    handed = counted(rows, course)
    table = []
    for learner in plain.match(learners).not_on_roster:
        files = list(dict.fromkeys(row.file for row in rows if row.learner == learner))
        points = sum(one.points for one in handed.get(learner, {}).values())
        student = roster.student(learner)
        table.append([learner, "; ".join(files), points, Roster.key(student) if student else ""])
    return table


def not_graded(matches: dict[str, dict[str, str]], rows: list[Row]) -> list[str]:
    """The learners of a match file that this run did not grade (a typo, or another class's file)."""
    graded = {nfc(row.learner).casefold() for row in rows}
    return [learner for learner in matches if learner not in graded]
