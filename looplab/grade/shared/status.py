"""The gradebook's statuses, each with its CSV text and what it means; and what a check can find.

One source of truth: rows are built from `Status`, and docs/GRADING.md's status table is
`Status.readme_table()` (tests/test_grade.py holds one against the other).
"""

from __future__ import annotations

from enum import Enum

from ...checks.core import COURSE_CODE, NOT_SOLVED, NOT_WRITTEN, SOLVED
from .limits import AFTER_A_STOP, SUBMISSION_LIMIT, WRITE_ENTRIES, WRITE_LIMIT

# The words docs/GRADING.md shows for the variable parts of a status.
README_PLACEHOLDERS = {"stops": "cell N ran past the S s limit", "seconds": "S", "where": "in cell N",
                       "amount": "more than N MB"}


class Status(Enum):
    """A row's status: its text in the CSV (with {placeholders}) and its line in docs/GRADING.md's table.

    Members with the same meaning, one after the other, share a line of the table.
    """

    SOLVED = ("solved", "full points")
    NOT_SOLVED = ("not solved", "the check failed; the message says how")
    NOT_WRITTEN = ("not written yet", "the exercise is still the stub")
    COURSE_CODE = ("the course's own code",
                   "the exercise hands in, or only wraps, the course's own version from looplab: 0 points")
    NOT_DEFINED = ("not defined", "its function or variable doesn't exist where it is graded")
    NOT_IN_VERSION = ("not in this version",
                      "the course added the exercise after the version the notebook was made with: 0 of 0 points")
    SYNTAX_ERROR = ("syntax error", "the exercise cell doesn't parse, so nothing in it ran")
    # Reported on the first exercise graded after the cell (else the last one), which was still
    # graded and failed; if it passed, it is "solved" and the message notes the stop.
    CELL_STOPPED = ("stopped: {stops}",
                    f"a cell was interrupted at `--cell-timeout` (the cells after it at {AFTER_A_STOP} s) and the run "
                    "went on; if it would not stop, the run ended there")
    NOTEBOOK_STOPPED = ("stopped: the notebook ran past the total limit ({seconds} s)",
                        "stopped at `--timeout` before this exercise was graded; exercises graded before still count")
    WROTE_TOO_MUCH = ("stopped: the notebook wrote {amount} into its folders",
                      f"the grader stopped the kernel where it had written more than {WRITE_LIMIT >> 20} MB or "
                      f"{WRITE_ENTRIES:,} files and folders, before this exercise was graded; exercises graded "
                      "before still count")
    # "in cell N", or "during the check of exercise X" when it died in one of the grader's cells.
    KERNEL_DIED = ("the kernel died ({where})",
                   "the kernel exited (`os._exit`, a crash, out of memory) before this exercise was graded")
    # The learner's code broke the kernel's messages to the grader (messages.py): it replaced json.dumps, say.
    GARBLED = ("the kernel sent messages the grader cannot read ({where})",
               "the learner's code broke the kernel's messages (it replaced `json.dumps`, say) before this exercise "
               "was graded; exercises graded before still count")
    NOT_GRADED = ("could not be graded", "the grader's own cell, or the grader, failed; the message says how")
    GRADER_ERROR = ("grader error", "the grader's own cell, or the grader, failed; the message says how")
    # Ungradable submissions: one row each, the exercise empty.
    INVALID_JSON = ("invalid JSON", "(one row) the file is broken")
    NOT_A_NOTEBOOK = ("not a notebook", "(one row) the file is broken")
    UNREADABLE = ("cannot be read", "(one row) the file is broken")
    TOO_LARGE = ("too large", f"(one row) the file is larger than the {SUBMISSION_LIMIT >> 20} MB the grader reads; "
                              "it was not read")
    LINKED = ("a link, not read", "(one row) the submission is a symbolic link, or lies in a linked folder: the grader "
                                  "reads no file through a link (it would be another file, graded as this learner's)")
    NOT_THEIRS = ("not counted: named after a learner with a folder",
                  "(one row, the file's name as its learner) a file beside the learners' folders, named after one who "
                  "has a folder: never counted for them, and not read; move it into the folder if it is theirs")
    OTHER_COURSE = ("not a notebook of this course",
                    "(one row) its exercises are not a course notebook's; the message lists them")
    NO_NOTEBOOK = ("no notebook found", "(one row) a learner's folder holds no notebook")
    NOT_SUBMITTED = ("not submitted", "(with `--roster`) a student on the roster did not hand this notebook in: 0 points")

    def __init__(self, template: str, meaning: str):
        self.template = template
        self.meaning = meaning

    def text(self, **parts) -> str:
        """The CSV text, its placeholders filled: Status.KERNEL_DIED.text(where="in cell 16")."""
        return self.template.format(**parts)

    @property
    def label(self) -> str:
        """As docs/GRADING.md shows it: the placeholders in words ("cell N", "S")."""
        return self.template.format(**README_PLACEHOLDERS)

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
    """[16] -> 'cell 16'; [16, 17] -> 'cells 16 and 17'."""
    if len(numbers) == 1:
        return f"cell {numbers[0]}"
    return "cells " + ", ".join(str(n) for n in numbers[:-1]) + f" and {numbers[-1]}"


def stops_text(stops: list[tuple[int, float]]) -> str:
    """Stopped cells, each (cell number, the limit it ran past), in the words of a status.

    [(16, 10)] -> 'cell 16 ran past the 10 s limit'; [(16, 10), (17, 3), (19, 3)] ->
    'cell 16 ran past the 10 s limit, cells 17 and 19 past the 3 s limit'."""
    groups: dict[float, list[int]] = {}
    for number, limit in stops:
        groups.setdefault(limit, []).append(number)
    parts = [f"{cell_list(numbers)} past the {seconds(limit)} s limit" for limit, numbers in groups.items()]
    return parts[0].replace(" past ", " ran past ", 1) + "".join(f", {part}" for part in parts[1:])


def seconds(value: float) -> str:
    """5.0 -> '5'; 2.5 -> '2.5'."""
    return f"{value:g}"


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
