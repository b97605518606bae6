"""Every word a learner reads from a check sits in its module's catalogue, never in the Python.

looplab/checks/texts/<module>.toml holds each module's rows (its TEXTS) and hints (its HINTS), so a
second language is one more column of those rows, and a reworded message is one edit. Inside a
function, a string literal may only be a key (`"called_again"`, `"role"`), a MIME or file-ish token, or
punctuation (`": "`); no Text row is written in Python. Each row of a catalogue is used, and the
values its templates name are ones the code passes.
"""

import ast
import importlib
import re
import string
import textwrap
import tomllib
from pathlib import Path

import pytest

import looplab.checks
from looplab.catalogue import Text, catalogue
from looplab.checks import core
from looplab.checks.core import Report
from looplab.course import COURSE

CHECKS_DIR = Path(looplab.checks.__file__).parent
MODULES = sorted(path.stem for path in CHECKS_DIR.glob("*.py"))
CATALOGUED = sorted(path.stem for path in (CHECKS_DIR / "texts").glob("*.toml"))
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
    assert not wordy, f"learner-facing words in looplab/checks/{module}.py's code, move them to its catalogue: {wordy}"


@pytest.mark.parametrize("module", MODULES)
def test_no_row_is_written_in_python(module):
    """A Text with words in it belongs in texts/<module>.toml (core's loader builds rows from it)."""
    tree = ast.parse((CHECKS_DIR / f"{module}.py").read_text())
    written = [node.lineno for node in ast.walk(tree) if isinstance(node, ast.Call)
               and getattr(node.func, "id", None) in ("Text", "Hints")
               and any(isinstance(arg, ast.Constant) for arg in node.args + [k.value for k in node.keywords])]
    assert not written, f"Text rows written in looplab/checks/{module}.py (lines {written}): move them to its catalogue"


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


def test_every_module_with_a_catalogue_reads_it():
    notebooks = {notebook.checks.rpartition(".")[2] for notebook in COURSE.notebooks}  # from the manifest
    assert notebooks | {"core", "difference", "turns"} <= set(CATALOGUED) <= set(MODULES)
    for module in CATALOGUED:
        texts, hints = catalogue(str(CHECKS_DIR / f"{module}.py"))
        assert texts and set(texts) <= set(_tables(importlib.import_module(f"looplab.checks.{module}")))
        assert all(row.failed or row.hint or row.passed for row in texts.values()), module


def test_every_exercise_has_its_hints_in_its_notebooks_catalogue():
    for notebook in COURSE.notebooks:
        module = importlib.import_module(notebook.checks)
        assert set(module.HINTS) == set(module.CHECKERS) == set(notebook.ids)
        assert all(1 <= len(COURSE.hints(number)) <= 3 for number in notebook.ids)


def _readers(module: str) -> list[str]:
    """The modules whose code speaks with `module`'s rows: its own code, and the harness's whose rows it words
    again (turns.py plays notebook 2's and 3's tables); core's rows are every module's."""
    if module == "core":
        return MODULES
    rows = set(importlib.import_module(f"looplab.checks.{module}").TEXTS)
    others = [importlib.import_module(f"looplab.checks.{other}") for other in MODULES if other not in (module, "core")]
    return [module] + [other.__name__.rsplit(".", 1)[1] for other in others
                       if hasattr(other, "TEXTS") and set(other.TEXTS) <= rows]


def _helpers_imported(module: str) -> list[str]:
    """The checks modules `module` imports helpers from, which word its rows with its report (notebook 9's run_tool
    is judged by notebook 6's verdict on a failure)."""
    tree = ast.parse((CHECKS_DIR / f"{module}.py").read_text())
    return [node.module for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module in MODULES]


def _literals(module: str) -> set[str]:
    tree = ast.parse((CHECKS_DIR / f"{module}.py").read_text())
    return {node.value for node in ast.walk(tree) if isinstance(node, ast.Constant) and isinstance(node.value, str)}


@pytest.mark.parametrize("module", CATALOGUED)
def test_every_row_of_a_catalogue_is_used(module):
    """A key the code never names is a dead row (a string literal anywhere in the readers' code counts: a
    scenario table's key, a key handed to a helper); a row another row is `like` is used by that one."""
    rows = tomllib.loads((CHECKS_DIR / "texts" / f"{module}.toml").read_text())
    rows.pop("hints", None)
    named = set().union(*(_literals(reader) for reader in _readers(module) + _helpers_imported(module)))
    named |= {row["like"] for row in rows.values() if "like" in row}
    assert not set(rows) - named, f"rows of texts/{module}.toml no code names: {sorted(set(rows) - named)}"


def _keys(node: ast.AST) -> list[str]:
    """The keys a key argument can be: a literal, or either branch of `"a" if ... else "b"`."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.IfExp):
        return _keys(node.body) + _keys(node.orelse)
    return []


def _values_passed(module: str) -> dict[str, set[str] | None]:
    """key -> the names of the values the code passes with it (None where a **mapping hides them)."""
    tree = ast.parse((CHECKS_DIR / f"{module}.py").read_text())
    passed: dict[str, set[str] | None] = {}
    for function in ast.walk(tree):
        if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        mappings = {node.targets[0].id: {k.arg for k in node.value.keywords}  # said = dict(a=..., b=...)
                    for node in ast.walk(function) if isinstance(node, ast.Assign) and len(node.targets) == 1
                    and isinstance(node.targets[0], ast.Name) and isinstance(node.value, ast.Call)
                    and getattr(node.value.func, "id", None) == "dict" and not node.value.args}
        for node in ast.walk(function):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr in REPORT_METHODS and len(node.args) > REPORT_METHODS[node.func.attr]):
                continue
            names: set[str] | None = set()
            for keyword in node.keywords:
                if keyword.arg is not None:
                    names.add(keyword.arg)
                elif isinstance(keyword.value, ast.Name) and keyword.value.id in mappings:
                    names |= mappings[keyword.value.id]
                else:
                    names = None
                    break
            for key in _keys(node.args[REPORT_METHODS[node.func.attr]]):
                known = passed.get(key, set())
                passed[key] = None if known is None or names is None else known | names
    return passed


def _placeholders(template: str) -> set[str]:
    return {re.split(r"[.\[]", name)[0] for _, name, _, _ in string.Formatter().parse(template) if name}


@pytest.mark.parametrize("module", CATALOGUED)
def test_every_placeholder_is_a_value_the_code_passes(module):
    """`{name}` in a row's failed or passed words must be a value the code hands over with that key (or the
    situation); checked where every call naming the key is a literal and its values are visible."""
    texts, _ = catalogue(str(CHECKS_DIR / f"{module}.py"))
    passed: dict[str, set[str] | None] = {}
    for reader in _readers(module):
        for key, names in _values_passed(reader).items():
            known = passed.get(key, set())
            passed[key] = None if known is None or names is None else known | names
    checked, unknown = 0, []
    for key, row in texts.items():
        for text in [row, *row.other.values()]:
            if passed.get(key) is None:
                continue
            checked += 1
            unknown += [(key, name) for name in _placeholders(text.failed + text.passed)
                        if name not in passed[key] | {"situation"}]
    assert not unknown, f"texts/{module}.toml names values the code does not pass: {unknown}"
    assert checked >= len(texts) // 3, f"only {checked} of {len(texts)} rows could be checked"


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
    monkeypatch.setenv("LOOPLAB_LANG", "fr")
    failure = report.failure("doubles", got=5)
    assert (failure.message, failure.hint) == ("double(2) a donné 5", "Renvoyez 2 * x.")


def test_a_catalogues_second_language_is_a_sub_table(tmp_path, monkeypatch):
    """[key.fr] and [hints.fr] in a catalogue become the French column of the same rows; `like` lends per language
    (a row that only borrows speaks its lender's languages, with no sub-table of its own)."""
    (tmp_path / "texts").mkdir()
    (tmp_path / "texts" / "doubling.toml").write_text(textwrap.dedent('''
        [doubles]
        failed = "double(2) gave {got}"
        hint = "Return 2 * x."

        [doubles.fr]
        failed = "double(2) a donné {got}"
        hint = "Renvoyez 2 * x."

        [halves]
        like = "doubles"
        failed = "half(2) gave {got}"

        [halves.fr]
        failed = "half(2) a donné {got}"

        [doubles_again]
        like = "doubles"

        [hints]
        "5.1" = ["Multiply by two."]

        [hints.fr]
        "5.1" = ["Multipliez par deux."]
    '''))
    texts, hints = catalogue(str(tmp_path / "doubling.py"))
    report = Report(texts=texts)
    failure = report.failure("halves", got=5)
    assert (failure.message, failure.hint) == ("half(2) gave 5", "Return 2 * x.")
    assert hints["5.1"].said() == ["Multiply by two."]
    monkeypatch.setenv("LOOPLAB_LANG", "fr")
    failure = report.failure("halves", got=5)
    assert (failure.message, failure.hint) == ("half(2) a donné 5", "Renvoyez 2 * x.")
    failure = report.failure("doubles_again", got=5)  # words only lent: the lender's French
    assert (failure.message, failure.hint) == ("double(2) a donné 5", "Renvoyez 2 * x.")
    assert hints["5.1"].said() == ["Multipliez par deux."]


def test_the_plain_form_needs_no_table():
    """A tiny checks module may write its words inline: report.expect(condition, passed, failed, hint)."""
    report = Report()
    report.expect(True, "doubles 2", "double(2) should be 4")
    with pytest.raises(core.Failure, match="should be 4"):
        report.expect(False, None, "double(2) should be 4", "Return 2 * x.")
    assert report.passed == ["doubles 2"]
