"""`check`, `hint` and `progress` in a kernel the grader runs: nothing is checked there.

Under the grader a notebook runs on the package's graded edition (looplab/grade/kernels/edition.py), whose
looplab/checks is this: the checks, their scenarios and their helpers are the course's code, and the grader
judges every exercise in its own process at its check cell (looplab/grade/judgement/judge.py). So a check cell
says where its grade is, and runs nothing; the learner's notebook, outside the grader, checks as always.
"""

from __future__ import annotations

from .catalogue import words

WORDS = words(__file__)


def check(number: str, obj: object = None) -> None:
    """The exercise is graded by the grader, outside this kernel: say so."""
    print(WORDS("checked_by_the_grader", exercise=number))


def hint(number: str) -> None:
    print(WORDS("no_hints_here", exercise=number))


class Progress:
    def __repr__(self) -> str:
        return WORDS("grade_at_the_end")


def progress() -> Progress:
    return Progress()
