"""An exercise answered with the course's own version is not the learner's work: every check refuses it.

The notebooks import the course's pieces on purpose (so a bug in notebook 1 never blocks notebook 3),
which puts `from looplab.loop import run` one line away from full marks. Each check refuses the
course's object itself, the same behind functools.wraps or partial, and a function of the learner's
that only hands the work to it (by a name of its own or through the course module); the grader gives such an exercise its own status and 0 points.
"""

from __future__ import annotations

import functools

import pytest

from looplab.checks import run_check
from looplab.checks.core import COURSE_CODE
from looplab.course import COURSE, resolve

EXERCISES = [exercise for notebook in COURSE.notebooks for exercise in notebook.exercises]
IDS = [exercise.id for exercise in EXERCISES]


def refused(number, obj, words="the course's own"):
    result = run_check(number, obj)
    assert not result.ok and result.points == 0 and result.kind == COURSE_CODE, repr(result)
    assert words in result.failed and result.hint
    return result


@pytest.mark.parametrize("exercise", EXERCISES, ids=IDS)
def test_the_course_version_itself_is_refused(exercise):
    refused(exercise.id, resolve(exercise.reference))


@pytest.mark.parametrize("exercise", [e for e in EXERCISES if callable(resolve(e.reference))],
                         ids=[e.id for e in EXERCISES if callable(resolve(e.reference))])
def test_the_course_version_behind_wraps_or_partial_is_refused(exercise):
    reference = resolve(exercise.reference)

    @functools.wraps(reference)
    def wrapped(*args, **kwargs):
        return reference(*args, **kwargs)

    refused(exercise.id, wrapped)
    refused(exercise.id, functools.partial(reference))


@pytest.mark.parametrize("exercise", [e for e in EXERCISES if callable(resolve(e.reference))],
                         ids=[e.id for e in EXERCISES if callable(resolve(e.reference))])
def test_a_function_that_only_hands_the_work_to_the_course_is_refused(exercise):
    reference = resolve(exercise.reference)
    namespace = {"course_version": reference}
    exec("def mine(*args, **kwargs):\n    return course_version(*args, **kwargs)\n", namespace)
    refused(exercise.id, namespace["mine"], "hands the work to the course's own")


@pytest.mark.parametrize("exercise", [e for e in EXERCISES if callable(resolve(e.reference))],
                         ids=[e.id for e in EXERCISES if callable(resolve(e.reference))])
def test_a_function_that_reaches_the_course_version_through_its_module_is_refused(exercise):
    module, name = exercise.reference.split(":")
    namespace: dict = {}
    exec(f"import {module}\ndef mine(*args, **kwargs):\n    return {module}.{name}(*args, **kwargs)\n", namespace)
    refused(exercise.id, namespace["mine"], "hands the work to the course's own")
