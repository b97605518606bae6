"""The course's own version of any exercise is never a learner's answer to any exercise (issue 37).

Notebook 5's `agent_turn` (looplab.toolbox) handed in as a later notebook's `agent_turn` once scored full marks:
the check compared the answer only with its own exercise's reference, and `isolated()` swapped the earlier
pieces into the globals of the module the function came from, so the course's code passed. Every pair of
exercises that share a name is tried here, both ways, as the course has them now and as notebooks are added:
the other exercise's reference itself, and a renamed copy of it made from its code. In the learner's notebook
(run_check) and at the kernel's end of the grader's channel (serve.describe), whose claim the grader reads.
"""

import itertools
import types
from collections import defaultdict

import pytest

from looplab import serve
from looplab.checks import COURSE_CODE, run_check
from looplab.course import COURSE, resolve

BY_NAME = defaultdict(list)
for _exercise in COURSE.exercises:
    BY_NAME[_exercise.name].append(_exercise)
PAIRS = [(mine, other) for exercises in BY_NAME.values() for mine, other in itertools.permutations(exercises, 2)
         if mine.reference != other.reference]


def renamed_copies(function):
    """The function again, under another name: a new function object made from the same code, or from a copy of it."""
    if not isinstance(function, types.FunctionType):  # a value (a registry): handed in as it is
        return
    for code in (function.__code__, function.__code__.replace(co_name="my_own_" + function.__name__)):
        yield types.FunctionType(code, function.__globals__, "my_own_" + function.__name__, function.__defaults__,
                                 function.__closure__)


def test_the_course_has_pairs_of_exercises_sharing_a_name():
    assert len(PAIRS) >= 20  # agent_turn (2.2, 2.3, 3.3, 5.5, 6.2, 6.3), run_tool (5.3, 6.1); values too, as they come


@pytest.mark.parametrize("mine, other", PAIRS, ids=[f"{m.id}<-{o.id}" for m, o in PAIRS])
def test_another_exercises_course_version_is_the_course_code(mine, other):
    theirs = resolve(other.reference)
    for handed_in in (theirs, *renamed_copies(theirs)):
        result = run_check(mine.id, handed_in)
        assert (result.kind, result.points) == (COURSE_CODE, 0), (mine.id, other.id, result)


@pytest.mark.parametrize("mine, other", PAIRS[:4], ids=[f"{m.id}<-{o.id}" for m, o in PAIRS[:4]])
def test_the_kernels_claim_names_another_exercises_course_version(mine, other):
    theirs = resolve(other.reference)
    for handed_in in (theirs, *renamed_copies(theirs)):
        answer = serve.describe({mine.name: handed_in}, {}, {"name": mine.name, "number": mine.id})
        assert answer["course_code"] is True and answer["course_version"] == other.reference


def test_a_learners_own_function_is_not_the_course_code():
    def agent_turn(client, history):  # any function of the learner's: not the course's, whatever it does
        return ""

    assert serve.describe({"agent_turn": agent_turn}, {}, {"name": "agent_turn", "number": "6.2"})["course_code"] is False
    assert run_check("6.2", agent_turn).kind != COURSE_CODE
