"""A Canvas gradebook CSV from the gradebook's rows and a roster: one column per notebook.

The roster (roster.py) is a Canvas gradebook export (Grades > Export), or a class list (id, name,
email); roster.py says how a learner is matched to a student.

The file written has one row per roster student, in the roster's order, with the five columns and one
column per course notebook that anyone handed in, holding the points of the submission that counts
(class_results.py); 0 for a student who did not hand that notebook in, as in the gradebook (`--canvas-missing
blank` leaves it empty instead: Canvas then leaves that score out of Current Score, but counts it as 0
in Final Score). Its second row is Canvas's
"Points Possible" row, each notebook's total: Canvas imports points as they are, so the assignment's
points should be that total. A notebook's column is the roster's assignment the instructor named for it
(`--canvas-column STEM=ASSIGNMENT`: `columns`), else the assignment whose name (the header without its
" (id)") is the notebook's title in any of the course's languages or its file name, compared as
roster.letters compares names (case, accents, spaces and punctuation aside: « Fermer la boucle (4522) » is
notebook 2 for a French class's Canvas), so the import updates that assignment. A notebook handed in that
matches no assignment of a roster that has some is an error naming the assignments it could be
(`CanvasColumnError`), never a new column Canvas would make into a second assignment; a roster with no
assignment at all (a class list, a new course's export) gets columns named after the notebooks' titles in the
class's language, which Canvas creates on import (`CanvasExport.created`: a note says so; export the gradebook
again afterwards and use it as the roster). Learners who are not on the
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

from ... import language
from ...catalogue import words
from ...course import COURSE, Course, Notebook
from ..rows.class_gradebook import keyed_to_roster
from ..rows.class_results import counted, max_points
from ..rows.roster import CLASS_LIST, POINTS_POSSIBLE, STUDENT_COLUMNS, Roster, letters
from ..shared.gradebook import Row
from .spreadsheet import CANVAS, write_csv_rows

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


class CanvasColumnError(ValueError):
    """A notebook's Canvas column cannot be named: no assignment of the roster is that notebook, or --canvas-column
    names a notebook or an assignment that does not exist. Its message names what it could have been."""


def titles(notebook: Notebook) -> list[str]:
    """A notebook's titles in every language of the course, the English first ("Closing the loop", "Fermer la
    boucle")."""
    said = []
    for spoken in language.LANGUAGES:
        with language.using(spoken):
            said.append(notebook.said_title)
    return list(dict.fromkeys([notebook.title] + said))


def assignment_named(name: str, roster: Roster) -> str | None:
    """The roster's assignment column for a name: its whole header ("Fermer la boucle (4522)") or the name without
    its id, compared as names are (roster.letters: case, accents, spaces and punctuation aside)."""
    wanted = letters(name)
    for assignment, header in roster.assignments.items():
        if wanted and wanted in (letters(assignment), letters(header)):
            return header
    return None


def chosen_columns(pairs: list[str], roster: Roster, course: Course = COURSE) -> dict[str, str]:
    """--canvas-column's `STEM=ASSIGNMENT` pairs as stem -> the roster's assignment header ("" leaves the notebook out
    of the Canvas file); a notebook or an assignment that does not exist is a CanvasColumnError naming those that do."""
    chosen = {}
    for pair in pairs:
        stem, equals, name = (part.strip() for part in pair.partition("="))
        if not equals or stem not in course.stems:
            raise CanvasColumnError(WORDS("column_pair", pair=pair, stems=", ".join(course.stems)))
        header = assignment_named(name, roster) if name else ""
        if header is None:
            raise CanvasColumnError(WORDS("no_such_assignment", name=name, stem=stem,
                                          assignments=", ".join(roster.assignments.values()) or WORDS("none")))
        chosen[stem] = header
    return chosen


def column_name(notebook: Notebook, roster: Roster, columns: dict[str, str] | None = None) -> str | None:
    """The notebook's column: the assignment --canvas-column named ("": left out), else the roster's assignment
    that is the notebook (its title in any language, or its stem); None when none is."""
    if columns and notebook.stem in columns:
        return columns[notebook.stem]
    for name in titles(notebook) + [notebook.stem]:
        header = assignment_named(name, roster)
        if header is not None:
            return header
    return None


@dataclass
class CanvasExport:
    header: list[str]
    rows: list[list]  # the "Points Possible" row, then one per student
    not_on_roster: list[str] = field(default_factory=list)  # learners graded but not on the roster
    without_submission: list[str] = field(default_factory=list)  # roster students who handed nothing in
    created: list[str] = field(default_factory=list)  # columns no assignment of the roster is: Canvas creates them


def canvas_export(rows: list[Row], roster: Roster, course: Course = COURSE, missing: str = DEFAULT_MISSING,
                  columns: dict[str, str] | None = None) -> CanvasExport:
    """The Canvas file's header and rows; CanvasColumnError when a notebook handed in is no assignment of a roster
    that has some (`columns`: the instructor's --canvas-column choices, chosen_columns)."""
    # Keyed to the roster first: a student's files under several names are one learner, whose copy handed
    # in last counts (class_results.py), as in the gradebook.
    learners = counted(keyed_to_roster(rows, roster), course)
    handed_stems = {stem for handed_in in learners.values() for stem in handed_in}
    named = {notebook.stem: column_name(notebook, roster, columns)
             for notebook in course.notebooks if notebook.stem in handed_stems}
    unmatched = [stem for stem, column in named.items() if column is None]
    if unmatched and roster.assignments:
        taken = set(named.values())
        free = [header for header in roster.assignments.values() if header not in taken]
        raise CanvasColumnError(" ".join(
            WORDS("no_assignment", stem=stem, titles=" / ".join(titles(course.notebook(stem))),
                  assignments=", ".join(free) or WORDS("none")) for stem in unmatched))
    created = {stem: course.notebook(stem).said_title for stem in unmatched}
    named |= created
    notebooks = [notebook for notebook in course.notebooks if named.get(notebook.stem)]  # "": left out
    header = STUDENT_COLUMNS + [named[notebook.stem] for notebook in notebooks]
    table = [[POINTS_POSSIBLE_LABEL, "", "", "", ""] + [max_points(notebook) for notebook in notebooks]]
    matched = roster.match(list(learners))
    for student in roster.students:
        handed_in = learners.get(roster.key(student), {})
        table.append([student[column] for column in STUDENT_COLUMNS]
                     + [handed_in[nb.stem].points if nb.stem in handed_in else MISSING[missing] for nb in notebooks])
    return CanvasExport(header, table, matched.not_on_roster, matched.without_submission, list(created.values()))


def created_note(export: CanvasExport) -> list[str]:
    """The note when the Canvas file's columns create assignments (the roster had none): never silently."""
    return [WORDS("created", columns=", ".join(export.created))] if export.created else []


def write_canvas(rows: list[Row], roster: Roster, path: Path, course: Course = COURSE,
                 missing: str = DEFAULT_MISSING, columns: dict[str, str] | None = None) -> CanvasExport:
    """The Canvas file, in Canvas's own format whatever the class's language (spreadsheet.CANVAS)."""
    export = canvas_export(rows, roster, course, missing, columns)
    write_csv_rows(path, export.header, export.rows, CANVAS)
    return export
