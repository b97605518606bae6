"""What every check-soundness test asks: does the check pass this, and fail that for the right reason?

And whether every exercise has such tests: `soundness_gaps` reads the soundness test files (never
runs them) and names each exercise with fewer than two typical wrong answers shown failing.
"""

from __future__ import annotations

import ast
import itertools
import re
from collections import defaultdict
from pathlib import Path

import copy
import inspect
import textwrap
import os
import types

from looplab.checks import run_check

REMOTE = bool(os.environ.get("LOOPLAB_CHECKS_REMOTE"))  # every passes/fails also judged the grader's way

TESTS = Path(__file__).resolve().parent
MINIMUM_WRONG_ANSWERS = 2
NOT_A_WRONG_ANSWER = {"stub", "{}"}  # the exercise as the learner receives it: "not written yet", not a mistake
CUT = re.compile(r"\w\.\.\.(?=[\"'}\]);]|$)")  # a value cut to fit a line: `"tool_use_id...;`, `'Here a...`


def _also_judged(number, obj) -> None:
    if REMOTE:
        from .judge_helpers import same_as_in_process
        same_as_in_process(number, obj)


def passes(number, obj):
    _also_judged(number, obj)
    result = run_check(number, obj)
    assert result.ok, f"{result.failed}\n{result.hint}"
    assert result.points == result.max_points > 0
    return result


def fails(number, obj, *expected, field=None):
    """The check fails with no points, and its message (and hint) say each of `expected`.

    The rule for every check's message: it names the first difference in full. So no value in it is cut
    short with "...", and `field`, the path of that difference (e.g. "messages[2].content[0].tool_use_id",
    "system"), when given, is named in it, as written or as the API writes paths (messages.2.content.0...).
    """
    _also_judged(number, obj)
    result = run_check(number, obj)
    assert not result.ok, f"exercise {number} should fail"
    assert result.points == 0
    said = f"{result.failed}\n{result.hint}"
    for words in expected:
        assert words in said, f"{words!r} not in:\n{said}"
    assert not CUT.search(result.failed), f"a value is cut short in the failure (it may hide the difference):\n{said}"
    if field is not None:
        assert names_field(result.failed, field), f"the failure does not name the field {field!r}:\n{result.failed}"
    return result


def names_field(message: str, field: str) -> bool:
    """Does `message` name `field`, in either way of writing a path: messages[1].id or messages.1.id?"""
    return field in message or re.sub(r"\[(\d+)\]", r".\1", field) in message


def changed(mapping: dict, **changes) -> dict:
    """A deep copy of a dict (a tool definition, a registry) with some keys replaced; None leaves a key out."""
    made = copy.deepcopy(mapping)
    for key, value in changes.items():
        if value is None:
            made.pop(key)
        else:
            made[key] = value
    return made


def stub(*args, **kwargs):
    """An exercise as the learner receives it."""
    raise NotImplementedError("Exercise: replace this line with your code")


# --- does every exercise have soundness tests? ------------------------------------------------------


def soundness_file(notebook, tests: Path = TESTS) -> Path:
    """Where a notebook's soundness tests live: checks module looplab.checks.notebook2 -> tests/test_checks_notebook2.py."""
    return tests / f"test_checks_{notebook.checks.rpartition('.')[2]}.py"


def wrong_answers_shown_failing(path: Path) -> dict[str, set[str]]:
    """Exercise id -> the wrong answers (their source text) that the file's tests pass to `fails`.

    Read from the code, not run: every `fails("<id>", <answer>, ...)` call inside a `test_*` function,
    with names bound by `@pytest.mark.parametrize` replaced by each row of the table (written in the
    decorator or in a module-level list). The stub and an empty dict are not wrong answers. Running
    the tests is what shows each of them failing; this only counts them.
    """
    if not path.exists():
        return {}
    module = ast.parse(path.read_text(encoding="utf-8"))
    tables = {node.targets[0].id: node.value for node in module.body
              if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)}
    found: dict[str, set[str]] = defaultdict(set)
    for test in module.body:
        if not (isinstance(test, ast.FunctionDef) and test.name.startswith("test")):
            continue
        rows = _parametrized_rows(test, tables)
        for call in ast.walk(test):
            if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == "fails"
                    and len(call.args) >= 2):
                continue
            for row in rows:
                number, answer = (row.get(arg.id, arg) if isinstance(arg, ast.Name) else arg for arg in call.args[:2])
                if isinstance(number, ast.Constant) and ast.unparse(answer) not in NOT_A_WRONG_ANSWER:
                    found[str(number.value)].add(ast.unparse(answer))
    return dict(found)


def _parametrized_rows(test: ast.FunctionDef, tables: dict[str, ast.expr]) -> list[dict[str, ast.expr]]:
    """Each combination of the test's parametrize tables, as {argument name: its expression}; [{}] if none."""
    tables_of_test = []
    for decorator in test.decorator_list:
        if not (isinstance(decorator, ast.Call) and ast.unparse(decorator.func) == "pytest.mark.parametrize"):
            continue
        argnames = decorator.args[0]
        names = ([name.strip() for name in argnames.value.split(",")] if isinstance(argnames, ast.Constant)
                 else [name.value for name in argnames.elts])
        values = decorator.args[1]
        values = tables.get(values.id, values) if isinstance(values, ast.Name) else values
        rows = []
        for value in getattr(values, "elts", []):
            if isinstance(value, ast.Call) and ast.unparse(value.func) == "pytest.param":
                value = ast.Tuple(elts=value.args) if len(names) > 1 else value.args[0]
            rows.append(dict(zip(names, value.elts if len(names) > 1 else [value])))
        tables_of_test.append(rows)
    return [dict(item for row in combination for item in row.items())
            for combination in itertools.product(*tables_of_test)]


def soundness_gaps(course, tests: Path = TESTS) -> list[str]:
    """One line for each exercise of the course with fewer than two wrong answers shown failing; [] if none."""
    gaps = []
    for notebook in course.notebooks:
        path = soundness_file(notebook, tests)
        found = wrong_answers_shown_failing(path)
        for exercise in notebook.exercises:
            count = len(found.get(exercise.id, ()))
            if count < MINIMUM_WRONG_ANSWERS:
                where = path.relative_to(TESTS.parent) if path.is_relative_to(TESTS.parent) else path
                gaps.append(
                    f"exercise {exercise.id} has {count} wrong answer{'' if count == 1 else 's'} shown failing in "
                    f"{where}{'' if path.exists() else ' (no such file)'}: add at least {MINIMUM_WRONG_ANSWERS}, "
                    f"each a test calling fails(\"{exercise.id}\", <a typical wrong answer>, <words its message must say>)")
    return gaps


def twin(obj):
    """The course's own version as if a learner had typed it: the same code, not the same object.

    A check refuses the course's object itself (it is not the learner's work); its code must still
    pass, since later notebooks lean on it.
    """
    if isinstance(obj, types.FunctionType):  # compiled again from its source, as a cell compiles what it holds
        compiled = compile(textwrap.dedent(inspect.getsource(obj)), "<typed by a learner>", "exec")
        code = next(const for const in compiled.co_consts
                    if isinstance(const, types.CodeType) and const.co_name == obj.__name__)
        copied = types.FunctionType(code, obj.__globals__, obj.__name__, obj.__defaults__, obj.__closure__)
        copied.__kwdefaults__ = obj.__kwdefaults__
        return copied
    return copy.deepcopy(obj)
