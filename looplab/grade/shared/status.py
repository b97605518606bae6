"""The gradebook's statuses, each with its CSV text and what it means; and what a check can find.

One source of truth: rows are built from `Status`, its words are texts/status.toml (English, and a
column per language: a French class's gradebook says `réussi`), and docs/GRADING.md's status table is
`Status.readme_table()` (tests/test_grade.py holds one against the other).
"""

from __future__ import annotations

from enum import Enum

from ... import language
from ...catalogue import words
from ...checks.core import COURSE_CODE, NOT_SOLVED, NOT_WRITTEN, SOLVED
from .limits import AFTER_A_STOP, CODE_CELL_LIMIT, CODE_LIMIT, SUBMISSION_LIMIT, WRITE_ENTRIES, WRITE_LIMIT
from .numbers import decimal

WORDS = words(__file__)  # texts/status.toml: each status's text, and the words of stopped cells

# The words docs/GRADING.md shows for the variable parts of a status.
README_PLACEHOLDERS = {"stops": "cell N ran past the S s limit", "seconds": "S", "where": "in cell N",
                       "amount": "more than N MB"}


class Status(Enum):
    """A row's status: the key of its text in texts/status.toml (a template with {placeholders}, in each of
    the course's languages) and its line in docs/GRADING.md's table (English, as the docs are).

    Members with the same meaning, one after the other, share a line of the table.
    """

    SOLVED = ("solved", "full points")
    NOT_SOLVED = ("not_solved", "the check failed; the message says how")
    NOT_WRITTEN = ("not_written", "the exercise is still the stub")
    COURSE_CODE = ("course_code",
                   "the exercise hands in, or only wraps, the course's own version from looplab: 0 points")
    NOT_DEFINED = ("not_defined", "its function or variable doesn't exist where it is graded")
    NOT_IN_VERSION = ("not_in_version",
                      "the course added the exercise after the version the notebook was made with: 0 of 0 points")
    SYNTAX_ERROR = ("syntax_error", "the exercise cell doesn't parse, so nothing in it ran")
    # Reported on the first exercise graded after the cell (else the last one), which was still
    # graded and failed; if it passed, it is "solved" and the message notes the stop.
    CELL_STOPPED = ("cell_stopped",
                    f"a cell was interrupted at `--cell-timeout` (the cells after it at {AFTER_A_STOP} s) and the run "
                    "went on; if it would not stop, the run ended there")
    NOTEBOOK_STOPPED = ("notebook_stopped",
                        "stopped at `--timeout` before this exercise was graded; exercises graded before still count")
    WROTE_TOO_MUCH = ("wrote_too_much",
                      f"the grader stopped the kernel where it had written more than {WRITE_LIMIT >> 20} MB or "
                      f"{WRITE_ENTRIES:,} files and folders, before this exercise was graded; exercises graded "
                      "before still count")
    # "in cell N", or "during the check of exercise X" when it died in one of the grader's cells.
    KERNEL_DIED = ("kernel_died",
                   "the kernel exited (`os._exit`, a crash, out of memory) before this exercise was graded")
    # The learner's code broke the kernel's messages to the grader (messages.py): it replaced json.dumps, say.
    GARBLED = ("garbled",
               "the learner's code broke the kernel's messages (it replaced `json.dumps`, say) before this exercise "
               "was graded; exercises graded before still count")
    NOT_GRADED = ("not_graded", "the grader's own cell, or the grader, failed; the message says how")
    GRADER_ERROR = ("grader_error", "the grader's own cell, or the grader, failed; the message says how")
    # Ungradable submissions: one row each, the exercise empty.
    INVALID_JSON = ("invalid_json", "(one row) the file is broken")
    NOT_A_NOTEBOOK = ("not_a_notebook", "(one row) the file is broken")
    UNREADABLE = ("unreadable", "(one row) the file is broken")
    TOO_LARGE = ("too_large", f"(one row) the file is larger than the {SUBMISSION_LIMIT >> 20} MB the grader reads, "
                              f"or holds more code than it reads ({CODE_CELL_LIMIT:,} characters in a cell, "
                              f"{CODE_LIMIT:,} in all): it was not graded")
    LINKED = ("linked", "(one row) the submission is a symbolic link, or lies in a linked folder: the grader "
                        "reads no file through a link (it would be another file, graded as this learner's)")
    NOT_THEIRS = ("not_theirs",
                  "(one row, the file's name as its learner) a file beside the learners' folders, named after one who "
                  "has a folder: never counted for them, and not read; move it into the folder if it is theirs")
    OTHER_COURSE = ("other_course",
                    "(one row) its exercises are not a course notebook's; the message lists them")
    NO_NOTEBOOK = ("no_notebook", "(one row) a learner's folder holds no notebook")
    NOT_SUBMITTED = ("not_submitted",
                     "(with `--roster`) a student on the roster did not hand this notebook in: 0 points")

    def __init__(self, key: str, meaning: str):
        self.key = key
        self.meaning = meaning

    @property
    def template(self) -> str:
        """The status's text with its {placeholders}, in the language the course speaks now."""
        return WORDS(self.key)

    def text(self, **parts) -> str:
        """The CSV text, its placeholders filled, in the current language: Status.KERNEL_DIED.text(where="in cell 16")."""
        return WORDS(self.key, **parts) if parts else WORDS(self.key)

    def templates(self) -> list[str]:
        """Its text in every language of the course (a row of a class graded in another language is still read)."""
        return [WORDS.rows[self.key].get(name, WORDS.rows[self.key][language.SOURCE]) for name in language.LANGUAGES]

    @property
    def label(self) -> str:
        """As docs/GRADING.md shows it (in English): the placeholders in words ("cell N", "S")."""
        return WORDS.rows[self.key][language.SOURCE].format(**README_PLACEHOLDERS)

    @classmethod
    def readme_table(cls) -> str:
        """docs/GRADING.md's status table, in Markdown."""
        lines = ["| status | what happened |", "|---|---|"]
        members = list(cls)
        while members:
            same = [members.pop(0)]
            while members and members[0].meaning == same[0].meaning:
                same.append(members.pop(0))
            lines.append(f"| {', '.join(f'`{m.label}`' for m in same)} | {same[0].meaning} |")
        return "\n".join(lines)


def cell_list(numbers: list[int]) -> str:
    """[16] -> 'cell 16'; [16, 17] -> 'cells 16 and 17' (in the current language)."""
    if len(numbers) == 1:
        return WORDS("cell", number=numbers[0])
    return WORDS("cells", numbers=", ".join(str(n) for n in numbers[:-1]), last=numbers[-1])


def stops_text(stops: list[tuple[int, float]]) -> str:
    """Stopped cells, each (cell number, the limit it ran past), in the words of a status.

    [(16, 10)] -> 'cell 16 ran past the 10 s limit'; [(16, 10), (17, 3), (19, 3)] ->
    'cell 16 ran past the 10 s limit, cells 17 and 19 past the 3 s limit'."""
    groups: dict[float, list[int]] = {}
    for number, limit in stops:
        groups.setdefault(limit, []).append(number)
    parts = [(cell_list(numbers), seconds(limit)) for limit, numbers in groups.items()]
    return ", ".join(WORDS("ran_past" if index == 0 else "past", cells=cells, seconds=limit)
                     for index, (cells, limit) in enumerate(parts))


def seconds(value: float) -> str:
    """5.0 -> '5'; 2.5 -> '2.5' (in French, '2,5': numbers.decimal)."""
    return decimal(value)


# Beyond a check's own kinds (judgement/judge.py): no such name where it was graded; the grader's own error.
UNDEFINED, CRASHED = "undefined", "crashed"


class CheckKind(str, Enum):
    """What the grader's check of one exercise found (judgement/judge.py; never read from words)."""

    SOLVED = SOLVED
    NOT_WRITTEN = NOT_WRITTEN
    NOT_SOLVED = NOT_SOLVED
    COURSE_CODE = COURSE_CODE  # the course's own version handed in, or only wrapped
    UNDEFINED = UNDEFINED  # the exercise's name did not exist where it was graded
    CRASHED = CRASHED  # the check itself raised
