"""Each question a notebook asks the model is written once, so rewording it is one edit.

A solution notebook names each question in a constant (`TRAIN_QUESTION = "..."`) and its later cells
reuse the name; its answers file (authoring/answers/<stem>.py) keys the scripted replies by that name,
and authoring/author_recordings.py reads the words from the notebook. These tests hold every notebook
to it: every question its recording holds is one of its named questions, and the words of each
appear in exactly one string of its code (the constant) and in none of its answers file.

Each notebook stands on its own, with its own recording, so two notebooks may ask the same words:
the rule is per notebook. (The `calculator` recording has no notebook: its answers file is the one
place its questions are written.)
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from looplab.course import COURSE
from looplab.recordings import Recording

ROOT = Path(__file__).resolve().parent.parent


def solution(stem: str) -> Path:
    return ROOT / "solutions" / f"{stem}.ipynb"


def strings_in(python: str) -> list[str]:
    """Every string literal in the code (implicitly joined pieces count as one; f-strings' literal parts too)."""
    return [node.value for node in ast.walk(ast.parse(python))
            if isinstance(node, ast.Constant) and isinstance(node.value, str)]


def recorded_questions(stem: str) -> set[str]:
    """The user's words in every request of the notebook's recording (tool results are not questions)."""
    questions = set()
    for exchange in Recording.load(stem).exchanges:
        for message in exchange["request"]["messages"]:
            content = message["content"]
            if message["role"] != "user":
                continue
            if isinstance(content, str):
                questions.add(content)
            elif all(block["type"] == "text" for block in content):
                questions.add("".join(block["text"] for block in content))
    return questions


def replied_texts(stem: str) -> list[str]:
    """What the model wrote in the notebook's recording: each reply's text, and the words of its calls' inputs (notebook
    9's parent asks its subagent a question of its own)."""
    blocks = [block for exchange in Recording.load(stem).exchanges for block in exchange["response"].get("content", [])]
    return ([block["text"] for block in blocks if block.get("type") == "text"]
            + [value for block in blocks if block.get("type") == "tool_use"
               for value in block.get("input", {}).values() if isinstance(value, str)])


def not_a_question(words: str, named: set[str], replies: list[str]) -> bool:
    """A user message a program writes from what was said, not one a person asks: a transcript holding named
    questions (notebook 8's summary call reads one), or a message holding the model's own words (the summary, put
    back in the history; the question notebook 9's parent asks its subagent)."""
    return any(question in words for question in named) or any(reply in words for reply in replies)


@pytest.mark.parametrize("stem", COURSE.stems)
def test_every_recorded_question_is_named_in_its_notebook(author, stem):
    named = set(author.notebook_questions(solution(stem)).values())
    replies = replied_texts(stem)
    unnamed = {words for words in recorded_questions(stem) - named if not not_a_question(words, named, replies)}
    assert not unnamed, (f"solutions/{stem}.ipynb asks {sorted(unnamed)} without naming it: write it once as a "
                         f"constant ending in _QUESTION and reuse the name")


@pytest.mark.parametrize("stem", COURSE.stems)
def test_each_question_is_written_once_in_its_notebook_and_never_in_its_answers(author, stem):
    questions = author.notebook_questions(solution(stem))
    assert questions, f"solutions/{stem}.ipynb names no question"
    notebook_strings = [text for cell in author.notebook_code(solution(stem)) for text in strings_in(cell)]
    answers_path = ROOT / author.answers_file(stem)
    answers_strings = strings_in(answers_path.read_text(encoding="utf-8"))
    for name, words in questions.items():
        in_notebook = [text for text in notebook_strings if words in text]
        assert len(in_notebook) == 1, (f"{name}'s words are written {len(in_notebook)} times in solutions/{stem}.ipynb: "
                                       f"write them once, in {name}, and use the name everywhere else")
        assert not [text for text in answers_strings if words in text], (
            f"{answers_path.relative_to(ROOT)} repeats {name}'s words: key its replies by \"{name}\"")


@pytest.mark.parametrize("stem", COURSE.stems)
def test_each_question_name_is_assigned_once(author, stem):
    assigned = [target.id for cell in author.notebook_code(solution(stem)) for node in ast.walk(ast.parse(cell))
                if isinstance(node, ast.Assign) for target in node.targets
                if isinstance(target, ast.Name) and target.id.endswith("_QUESTION")]
    assert len(assigned) == len(set(assigned)), f"solutions/{stem}.ipynb assigns a question twice: {sorted(assigned)}"


@pytest.mark.parametrize("stem", COURSE.stems)
def test_the_answers_are_keyed_by_the_notebooks_question_names(author, stem):
    """Every key names one of the notebook's questions, and every named question has its replies (a summary's key,
    SUMMARY_OF:<name>, names the last question of the transcript it answers)."""
    keys = {key.removeprefix(author.SUMMARY_OF) for key in author.load_answers(stem) if not key.startswith(author.ASKED)}
    assert keys == set(author.notebook_questions(solution(stem)))


def test_an_answer_under_a_name_the_notebook_lost_says_so_in_one_line(author):
    """A question renamed in the notebook but not in the answers file: the error names both sides."""
    stem = "02_closing_the_loop"
    answers = {**author.load_answers(stem), "FORGOTTEN_QUESTION": []}
    with pytest.raises(author.AuthoringFailed) as failure:
        author.Script.of_notebook(solution(stem), answers)
    message = str(failure.value)
    assert "\n" not in message
    assert "FORGOTTEN_QUESTION" in message and "CINEMA_QUESTION" in message
    assert f"authoring/answers/{stem}.py" in message
