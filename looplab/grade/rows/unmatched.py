"""Learners the roster does not match, for the instructor to name: `unmatched.csv` out, `--match FILE` in.

Why: a learner the roster cannot match (a nickname, a name written differently, an id mistyped) keeps
their rows in the gradebook but is left out of the Canvas file, so their points never reach Canvas. The
grader cannot guess who they are; the instructor can. So every run with a roster writes, beside the
gradebook, `unmatched.csv`: one row per learner the class list alone does not match (their files and
points), with an empty `student` column. The instructor fills it in with any of the student's roster
columns (SIS Login ID, SIS User ID, ID, e-mail or full name: what roster.py matches on) and grades again
with `--match unmatched.csv`; those learners are then that student everywhere (gradebook, Canvas file,
report). The file written then keeps the answers given, so it can be fed back as it is, again and again.
It is written for the class's spreadsheet (its column names in the class's language, exports/spreadsheet.py's
dialect), and read back in either language, comma- or semicolon-separated.
"""

from __future__ import annotations

import csv
from pathlib import Path

from ...catalogue import words
from ...course import COURSE, Course
from ..shared.gradebook import Row
from ..submissions.lms import nfc
from .class_results import counted
from .roster import Roster, table

UNMATCHED_FILE = "unmatched.csv"
COLUMNS = ["learner", "files", "points", "student"]  # the English names: the keys of their rows in texts/unmatched.toml
LEARNER, STUDENT = "learner", "student"

# The lines the grader prints about learners the roster does not match, why a match file is refused, and the
# file's column names (texts/unmatched.toml), in the report's language: WORDS("not_graded", learners=...),
# WORDS("not_matched", learners=..., path=...).
WORDS = words(__file__)
NOT_GRADED = WORDS.rows["not_graded"]["en"]  # the English, as tests read it
NOT_MATCHED = WORDS.rows["not_matched"]["en"]


def columns() -> list[str]:
    """unmatched.csv's column names in the current language."""
    return [WORDS(f"column_{column}") for column in COLUMNS]


def _english(column: str) -> str:
    """A column's English name from its name in any language ('apprenant' -> 'learner'); else as it is."""
    said = column.strip().casefold()
    return next((english for english in COLUMNS
                 if said in {name.casefold() for name in WORDS.rows[f"column_{english}"].values()}), said)


class MatchError(ValueError):
    """The match file cannot be used: unreadable, a column missing, a student the roster does not have."""


def read_matches(path: Path, roster: Roster) -> dict[str, dict[str, str]]:
    """learner -> their roster student, from the rows of the match file whose `student` is filled in."""
    try:
        reader = table(path)
        said = [nfc(column or "").strip() for column in reader.fieldnames or []]
        reader.fieldnames = [_english(column) for column in said]  # either language's names
        header = reader.fieldnames
        entries = list(reader)
    except (OSError, UnicodeDecodeError, csv.Error) as error:
        raise MatchError(WORDS("cannot_read", path=path, error=error)) from None
    for column in (LEARNER, STUDENT):
        if column not in header:
            raise MatchError(WORDS("no_column", path=path, column=WORDS(f"column_{column}"),
                                   header=", ".join(said) or WORDS("no_header")))
    matches: dict[str, dict[str, str]] = {}
    lines: dict[str, int] = {}
    for line, entry in enumerate(entries, start=2):
        learner, given = (nfc(entry.get(column) or "").strip() for column in (LEARNER, STUDENT))
        if not given:
            continue
        if not learner:
            raise MatchError(WORDS("no_learner", path=path, line=line, student=given))
        student = roster.student(given)
        several = roster.ambiguous(given) if student is None else []
        if several:
            raise MatchError(WORDS("ambiguous_student", path=path, line=line, student=given, count=len(several),
                                   students=", ".join(Roster.key(one) for one in several)))
        if student is None:
            raise MatchError(WORDS("no_student", path=path, line=line, student=given))
        key = learner.casefold()
        if key in matches and matches[key] is not student:
            raise MatchError(WORDS("twice", path=path, line=line, learner=learner, earlier=lines[key]))
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
