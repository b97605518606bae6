"""Authoring recordings never loses one: a run that stops half-way leaves the recording as it was.

authoring/author_recordings.py (`python -m authoring record`) records each notebook into a temporary folder and moves the result
into place only when the whole run succeeded. These tests run it on a copy of the shipped
recordings: once as it is (same bytes: the recordings are reproducible), once with a scripted
answer missing (the copy is left untouched, and the error is one line naming the question, by its
words and by the name its replies are filed under, and the answers file).
"""

from __future__ import annotations

import copy
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from looplab.recordings import RECORDINGS_DIR

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def recordings(tmp_path):
    """A copy of the shipped recordings, for the script to (re)write."""
    folder = tmp_path / "recordings"
    shutil.copytree(RECORDINGS_DIR, folder)
    return folder


def test_authoring_a_notebook_rewrites_its_recording_byte_for_byte(author, recordings):
    stem = "01_one_tool_call"
    (recordings / f"{stem}.json").unlink()
    author.author_notebook(ROOT / "solutions" / f"{stem}.ipynb", live=False, recordings=recordings)
    assert (recordings / f"{stem}.json").read_bytes() == (RECORDINGS_DIR / f"{stem}.json").read_bytes()


def test_a_run_that_fails_half_way_leaves_the_recording_unchanged(author, recordings):
    stem = "02_closing_the_loop"
    answers = copy.copy(author.load_answers(stem))
    question = next(q for q, replies in answers.items() if len(replies) == 4)  # the warehouse: four calls
    answers[question] = answers[question][:2]  # the third reply was never scripted
    words = author.notebook_questions(ROOT / "solutions" / f"{stem}.ipynb")[question]
    before = {path.name: path.read_bytes() for path in recordings.iterdir() if path.is_file()}

    with pytest.raises(author.AuthoringFailed) as failure:
        author.author_notebook(ROOT / "solutions" / f"{stem}.ipynb", live=False, recordings=recordings,
                               answers=answers)

    message = str(failure.value)
    assert "\n" not in message
    assert f"under {question} in" in message and words in message and "after 2 replies" in message
    assert f"authoring/answers/{stem}.py" in message
    assert {path.name: path.read_bytes() for path in recordings.iterdir() if path.is_file()} == before


def test_the_calculator_recording_is_written_aside_too(author, recordings, monkeypatch):
    answers = author.load_answers("calculator")
    question = next(iter(answers))
    monkeypatch.setattr(author, "load_answers", lambda name, *language: {**answers, question: answers[question][:1]})
    before = (recordings / "calculator.json").read_bytes()
    with pytest.raises(author.AuthoringFailed, match="no scripted answer for"):
        author.author_calculator(live=False, recordings=recordings)
    assert (recordings / "calculator.json").read_bytes() == before


def test_the_maintainers_route_for_a_missing_answer_is_in_the_authoring_command():
    """A learner's NotRecordedError leaves it out (they cannot take it): --help and docs/RECORDINGS.md say it."""
    shown = subprocess.run([sys.executable, "-m", "authoring", "record", "--help"], cwd=ROOT,
                           capture_output=True, text=True, check=True).stdout
    said = " ".join(shown.split())
    assert "NotRecordedError" in said and "authoring/answers/<stem>.py" in said
    assert "python -m authoring record <stem>" in said and "--live <stem>" in said
    readme = " ".join((ROOT / "docs" / "RECORDINGS.md").read_text(encoding="utf-8").split())
    assert "python -m authoring record <stem>" in readme and "NotRecordedError" in readme


def test_the_maintainers_tools_have_one_entry_point_and_the_makefile_uses_it(capsys):
    """`python -m authoring <command>`: every tool a module of one package, none loaded by its file's path."""
    import importlib
    import re

    from authoring.__main__ import COMMANDS, main

    for module, _ in COMMANDS.values():
        assert callable(importlib.import_module(module).main)
    assert main([]) == 2 and "usage: python -m authoring <command>" in capsys.readouterr().err
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert set(re.findall(r"-m authoring (\w+)", makefile)) == {"notebooks", "record", "handout"}
    assert set(re.findall(r"scripts/(\w+)\.py", makefile)) == {"bootstrap", "drift"}  # before the venv exists
    sources = "\n".join(path.read_text(encoding="utf-8") for path in (ROOT / "authoring").rglob("*.py"))
    assert "spec_from_file_location" not in sources and "sys.path.insert" not in sources
