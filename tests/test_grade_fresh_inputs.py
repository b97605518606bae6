"""What one learner's code does to what a check hands it never reaches the next learner's check (issue 33).

A check hands the learner's function a history, a call's input, a registry; the learner's code may change it
at will (an honest 3.2 pops messages while it reads), and under the grader the kernel's changes come back onto
the grader's own objects (looplab/channel.py's Identities). A check that handed over its module's own table
made one learner's changes the next one's scenario. So every call gets data of its own (core.Scenario copies
its data at every read; a table of another shape is copied where it is handed over), and expected values are
computed from data no learner's code held.

Each test grades a *vandal* first, every exercise's solution wrapped so that, after answering, it changes
everything it was handed (lists appended to and reversed, every dict's values rewritten, a key added), then
the honest solution, which must still be solved: in-process, through the judge, and in a real grader run where
each notebook's vandal is graded immediately before its honest twin, for every check point of every notebook.
"""

from __future__ import annotations

import csv
import functools
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from looplab.checks import run_check
from looplab.checks.core import SOLVED
from looplab.course import COURSE, exercise_number
from tests.judge_helpers import judged
from tests.notebook_code import solution_namespace

ROOT = Path(__file__).resolve().parent.parent
EXERCISES = [exercise.id for exercise in COURSE.exercises]

# The vandal, as a learner would write it (the grader's run puts this source in a cell of the notebook).
VANDAL = '''
import functools as _functools


def _vandalize(value, _seen=None):
    """Change everything reachable from `value` that can be changed."""
    seen = set() if _seen is None else _seen
    if id(value) in seen:
        return
    seen.add(id(value))
    if isinstance(value, list):
        for item in list(value):
            _vandalize(item, seen)
        value.append({"role": "user", "content": "vandal"})
        value.reverse()
    elif isinstance(value, dict):
        for key in list(value):
            if isinstance(value[key], (str, int, float)) and not isinstance(value[key], bool):
                value[key] = "vandal"
            else:
                _vandalize(value[key], seen)
        value["vandal"] = True


def _vandal(honest):
    """`honest`, and after it answers, everything it was handed changed; a registry's functions, each so."""
    if isinstance(honest, dict):
        return {key: dict(entry, function=_vandal(entry["function"])) if isinstance(entry, dict)
                and callable(entry.get("function")) else entry for key, entry in honest.items()}
    if not callable(honest):
        return honest

    @_functools.wraps(honest)
    def vandal(*args, **kwargs):
        try:
            return honest(*args, **kwargs)
        finally:
            for each in list(args) + list(kwargs.values()):
                _vandalize(each)
    return vandal
'''
_helpers: dict = {}
exec(VANDAL, _helpers)
vandal_of = _helpers["_vandal"]


@functools.cache
def honest(number: str):
    """The solution notebook's object for the exercise, as its check cell sees it."""
    exercise = COURSE.exercise(number)
    return solution_namespace(COURSE.notebook_of(number).stem, until=number)[exercise.name]


@pytest.mark.parametrize("number", EXERCISES)
def test_a_vandal_before_an_honest_learner_in_process(number):
    run_check(number, vandal_of(honest(number)))
    result = run_check(number, honest(number))
    assert result.kind == SOLVED, result.failed


@pytest.mark.parametrize("number", EXERCISES)
def test_a_vandal_before_an_honest_learner_through_the_judge(number):
    judged(number, vandal_of(honest(number)))
    result = judged(number, honest(number))
    assert result["kind"] == SOLVED, result["message"]


def vandal_notebook(stem: str) -> dict:
    """The solution notebook with the vandal defined first and each exercise's name wrapped by it right after its
    exercise cell (so the check cell, and the grader, meet the vandal)."""
    notebook = json.loads((ROOT / "solutions" / f"{stem}.ipynb").read_text(encoding="utf-8"))
    cells = []
    for cell in notebook["cells"]:
        cells.append(cell)
        number = exercise_number(cell)
        if number is None:
            continue
        name = COURSE.exercise(number).name
        source = (VANDAL if not cells[:-1] or "_vandal" not in json.dumps(cells[:-1]) else "") + \
            f"\n{name} = _vandal({name})\n"
        cells.append({"cell_type": "code", "metadata": {}, "source": source, "outputs": [], "execution_count": None,
                      "id": f"vandal-{number}"})
    notebook["cells"] = cells
    return notebook


@pytest.fixture(scope="module")
def interleaved(tmp_path_factory):
    """Each course notebook's vandal then its honest twin, graded in that order by one grader (--jobs 1)."""
    folder = tmp_path_factory.mktemp("interleaved")
    for number, path in enumerate(sorted((ROOT / "solutions").glob("*.ipynb"))):
        for order, learner, notebook in (("a", "vandal", vandal_notebook(path.stem)),
                                         ("b", "honest", json.loads(path.read_text(encoding="utf-8")))):
            target = folder / "class" / f"{number:02d}{order}_{learner}" / path.name
            target.parent.mkdir(parents=True)
            target.write_text(json.dumps(notebook), encoding="utf-8")
    out = folder / "grades.csv"
    env = {key: value for key, value in os.environ.items() if not key.startswith("ANTHROPIC_")}
    run = subprocess.run([sys.executable, "-m", "looplab.grade", str(folder / "class"), "--out", str(out), "--quiet",
                          "--jobs", "1"], cwd=folder, env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    with open(out, newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def test_every_honest_row_is_solved_right_after_its_vandal(interleaved):
    order = [row["learner"] for row in interleaved]
    assert order == sorted(order)  # each vandal graded just before its honest twin
    honest_rows = [row for row in interleaved if row["learner"].endswith("honest")]
    assert {row["exercise"] for row in honest_rows} == set(EXERCISES)
    assert [(row["exercise"], row["status"], row["message"]) for row in honest_rows if row["status"] != "solved"] == []


def test_the_vandal_did_change_what_it_was_handed(interleaved):
    """The proof that the vandal ran: where its changes show in its own answer, its own rows are not all solved."""
    vandal_rows = [row for row in interleaved if row["learner"].endswith("vandal")]
    assert any(row["status"] != "solved" for row in vandal_rows)
