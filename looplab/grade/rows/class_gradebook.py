"""The gradebook keyed to the class: every student on the roster, every notebook, one total each.

Why: an instructor enters grades per student, not per file. Graded rows alone leave out whoever handed
nothing in (so a total and a pass rate have different denominators), name one person as many learners
as there were download formats, and have no total. With a roster (roster.py):

- every learner matched to a student is named by that student's key (their SIS Login ID, SIS User ID
  or ID: `Roster.key`), so one person is one learner, however their files were named;
- every student gets every notebook: a notebook nobody handed in for them gets a row per exercise,
  0 points, status "not submitted";
- learners not on the roster keep their rows, and are listed apart.

`wide_table` is the same class one row per learner: each exercise's points, each notebook's total,
the total and the course's maximum (from the submissions that count: class_results.py), and notes (not
submitted, copies, not on the roster, exercises to review).
"""

from __future__ import annotations

from dataclasses import replace

from ...catalogue import words
from ...course import COURSE, Course
from ..shared.gradebook import Row
from ..shared.status import Status
from .class_results import counted, duplicates, max_points
from .roster import Roster

# The wide table's column names and notes (texts/class_gradebook.toml), in the report's language; the exercises'
# ids and the notebooks' stems (their file names, the same in every language) name their own columns.
WORDS = words(__file__)
TO_REVIEW = WORDS.rows["to_review"]["en"]


def keyed_to_roster(rows: list[Row], roster: Roster) -> list[Row]:
    """The rows with each learner on the roster renamed to their student's key."""
    matched = roster.match(list(dict.fromkeys(row.learner for row in rows)))
    return [replace(row, learner=roster.key(matched.students[row.learner]))
            if matched.students[row.learner] is not None else row for row in rows]


def not_submitted(rows: list[Row], roster: Roster, course: Course = COURSE) -> list[Row]:
    """A row per exercise for every notebook a student on the roster did not hand in (rows keyed first)."""
    handed = counted(rows, course)
    missing = []
    for student in roster.students:
        key = roster.key(student)
        for notebook in course.notebooks:
            if notebook.stem not in handed.get(key, {}):
                missing += [Row(key, notebook.stem, exercise.id, 0, exercise.points, Status.NOT_SUBMITTED.text(),
                                "", "") for exercise in notebook.exercises]
    return missing


def class_rows(rows: list[Row], roster: Roster, course: Course = COURSE) -> tuple[list[Row], list[Row]]:
    """(the graded rows keyed to the roster, the same plus the "not submitted" rows, in roster order)."""
    keyed = keyed_to_roster(rows, roster)
    order = {roster.key(student): index for index, student in enumerate(roster.students)}
    everything = keyed + not_submitted(keyed, roster, course)
    position = {stem: index for index, stem in enumerate(course.stems)}
    everything.sort(key=lambda row: (order.get(row.learner, len(order)), row.learner.casefold(),
                                     position.get(row.notebook, len(position)), row.file))
    return keyed, everything


def wide_table(rows: list[Row], roster: Roster | None = None, course: Course = COURSE) -> tuple[list[str], list[list]]:
    """(header, one row per learner): learner, name, each exercise, each notebook, total, maximum, notes."""
    exercises = course.exercises
    header = ([WORDS("column_learner"), WORDS("column_name")] + [exercise.id for exercise in exercises]
              + [notebook.stem for notebook in course.notebooks]
              + [WORDS("column_total"), WORDS("column_maximum"), WORDS("column_notes")])
    learners = counted(rows, course)
    copies = {(duplicate.learner, duplicate.notebook): duplicate for duplicate in duplicates(rows, course)}
    names = [roster.key(student) for student in roster.students] if roster else []
    names += [learner for learner in learners if learner not in names]
    maximum = sum(max_points(notebook) for notebook in course.notebooks)
    table = []
    for learner in names:
        handed_in = learners.get(learner, {})
        student = roster.student(learner) if roster else None
        by_exercise = [handed_in[notebook.stem].points_for(exercise.id) if notebook.stem in handed_in else 0
                       for notebook in course.notebooks for exercise in notebook.exercises]
        by_notebook = [handed_in[notebook.stem].points if notebook.stem in handed_in else 0
                       for notebook in course.notebooks]
        notes = [WORDS("not_submitted", notebook=notebook.stem) for notebook in course.notebooks
                 if notebook.stem not in handed_in]
        notes += [WORDS("copies", notebook=stem, count=len(duplicate.ignored) + 1)
                  for (who, stem), duplicate in copies.items() if who == learner]
        notes += [WORDS("to_review", exercise=row.exercise) for handed in handed_in.values() for row in handed.rows
                  if row.review]
        if roster and student is None:
            notes.insert(0, WORDS("not_on_roster"))
        table.append([learner, student["Student"] if student else ""] + by_exercise + by_notebook
                     + [sum(by_notebook), maximum, WORDS("notes_separator").join(notes)])
    return header, table
