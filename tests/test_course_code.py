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


# --- a dict answer: the course's copy refused, the learner's own expression accepted ---------------------------

SETUP_5 = "import looplab\nfrom looplab import MODEL, check, show_history\nfrom looplab.toolbox import WEATHER, get_weather, count_letters\n"


def run_cells(monkeypatch, *cells):
    """Run the cells as a notebook would and hand the checks their history (`In`) and namespace."""
    from looplab.checks import core

    namespace: dict = {}
    for cell in cells:
        exec(cell, namespace)
    monkeypatch.setattr(core, "session", lambda: core.Session(["", *cells, "check(...)"], namespace))
    return namespace


@pytest.mark.parametrize("cell", [
    'FORCE_WEATHER = {"type": "tool", "name": get_weather.__name__}\n',
    'TOOL_REGISTRY = {"get_weather": {"function": get_weather}}\n'
    'FORCE_WEATHER = {"type": "tool", "name": next(name for name, entry in TOOL_REGISTRY.items() '
    'if entry["function"] is get_weather)}\n',
], ids=["the function's name", "found in the learner's registry"])
def test_a_learners_expression_with_a_course_function_is_the_learners(monkeypatch, cell):
    """`get_weather` comes from the course, but it is a tool, not the answer: the dict is the learner's own."""
    namespace = run_cells(monkeypatch, SETUP_5, cell)
    result = run_check("5.4", namespace["FORCE_WEATHER"])
    assert result.ok, repr(result)


@pytest.mark.parametrize("cells", [
    ("from looplab.toolbox import FORCE_WEATHER as F\n", "FORCE_WEATHER = dict(F)\ndel F\n"),
    ("from looplab.toolbox import FORCE_WEATHER as F\n", "FORCE_WEATHER = {**F}\n", "F = None\n"),
    ("from looplab import toolbox\n", 'FORCE_WEATHER = {"type": "tool", "name": toolbox.FORCE_WEATHER["name"]}\n'),
    ("import looplab.toolbox\n", "FORCE_WEATHER = looplab.toolbox.FORCE_WEATHER.copy()\n"),
], ids=["imported then deleted", "imported then rebound", "through a course module", "through the package"])
def test_a_copy_of_the_course_choice_is_refused(monkeypatch, cells):
    namespace = run_cells(monkeypatch, SETUP_5, *cells)
    refused("5.4", namespace["FORCE_WEATHER"])


def test_a_registry_assembled_from_the_course_schemas_is_refused(monkeypatch):
    """The course's registry rebuilt from the schemas it is made of (dicts inside it), not written by the learner."""
    cell = ("from looplab.tools import calculator, CALCULATOR_TOOL\n"
            "from looplab.toolbox import WEATHER_SCHEMA, COUNT_LETTERS_SCHEMA\n"
            'TOOL_REGISTRY = {"calculator": {"function": calculator, "schema": {key: CALCULATOR_TOOL[key] '
            'for key in ("description", "input_schema")}},\n'
            '                 "get_weather": {"function": get_weather, "schema": WEATHER_SCHEMA},\n'
            '                 "count_letters": {"function": count_letters, "schema": COUNT_LETTERS_SCHEMA}}\n')
    namespace = run_cells(monkeypatch, SETUP_5, cell)
    refused("5.1", namespace["TOOL_REGISTRY"])
