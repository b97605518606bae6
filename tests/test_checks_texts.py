"""Every word a learner reads from a check sits in a table (a module's TEXTS or HINTS), never in control flow.

So a second language is one more column of those tables, and a reworded message is one edit. Inside a
function, a string literal may only be a key (`"called_again"`, `"role"`), a MIME or file-ish token, or
punctuation (`": "`); words and markup go to module-level tables and constants.
"""

import ast
import importlib
import re
from pathlib import Path

import pytest

import looplab.checks
from looplab.checks import core
from looplab.checks.core import Report, Text
from looplab.course import COURSE

CHECKS_DIR = Path(looplab.checks.__file__).parent
MODULES = sorted(path.stem for path in CHECKS_DIR.glob("*.py"))
ALLOWED = re.compile(r"^[a-z0-9_./+<>\[\]-]*$|^[^A-Za-z]*$")  # a key or token, or no letters at all
REPORT_METHODS = {"require": 1, "failure": 0, "enter": 0, "note": 0, "words": 0, "text": 0}  # where the key sits


def _function_literals(tree: ast.AST):
    """(line, text) of every string literal inside a function body, docstrings left out."""
    for function in ast.walk(tree):
        if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        docstring = function.body[0] if ast.get_docstring(function) is not None else None
        for statement in function.body:
            if statement is docstring:
                continue
            for node in ast.walk(statement):
                if isinstance(node, ast.Constant) and isinstance(node.value, str):
                    yield node.lineno, node.value


@pytest.mark.parametrize("module", MODULES)
def test_no_words_in_control_flow(module):
    tree = ast.parse((CHECKS_DIR / f"{module}.py").read_text())
    wordy = [(line, text) for line, text in _function_literals(tree) if not ALLOWED.match(text)]
    assert not wordy, f"learner-facing words in looplab/checks/{module}.py's code, move them to TEXTS: {wordy}"


def _tables(module) -> dict:
    """The rows a checker of `module` can name: its own TEXTS, then the rows every check shares."""
    return {**core.TEXTS, **getattr(module, "TEXTS", {})}


@pytest.mark.parametrize("module", MODULES)
def test_every_key_named_in_code_has_a_row(module):
    tree = ast.parse((CHECKS_DIR / f"{module}.py").read_text())
    rows = _tables(importlib.import_module(f"looplab.checks.{module}"))
    missing = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in REPORT_METHODS:
            position = REPORT_METHODS[node.func.attr]
            if len(node.args) > position and isinstance(node.args[position], ast.Constant):
                key = node.args[position].value
                if isinstance(key, str) and key not in rows:
                    missing.append((node.lineno, key))
    assert not missing, f"keys with no row in looplab/checks/{module}.py's tables: {missing}"


def test_every_scenario_names_a_situation_with_a_row():
    for notebook in COURSE.notebooks:
        module = importlib.import_module(notebook.checks)
        rows = _tables(module)
        for name, value in vars(module).items():
            if name.endswith("SCENARIOS"):
                keys = [getattr(item, "key", None) or item[0] for item in value]
                assert all(key in rows and rows[key].passed for key in keys), (notebook.checks, name, keys)


def test_a_second_language_is_a_column(monkeypatch):
    report = Report(texts={"doubles": Text("double(2) gave {got}", "Return 2 * x.",
                                           other={"fr": Text("double(2) a donné {got}", "Renvoyez 2 * x.")})})
    assert report.failure("doubles", got=5).message == "double(2) gave 5"
    monkeypatch.setattr(core, "LANGUAGE", "fr")
    failure = report.failure("doubles", got=5)
    assert (failure.message, failure.hint) == ("double(2) a donné 5", "Renvoyez 2 * x.")


def test_the_plain_form_needs_no_table():
    """A tiny checks module may write its words inline: report.expect(condition, passed, failed, hint)."""
    report = Report()
    report.expect(True, "doubles 2", "double(2) should be 4")
    with pytest.raises(core.Failure, match="should be 4"):
        report.expect(False, None, "double(2) should be 4", "Return 2 * x.")
    assert report.passed == ["doubles 2"]
