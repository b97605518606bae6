"""Notebook 4's agent.py, run as a program offline: a line that is not recorded gets one clear line, and the session goes on.

The script is the string the solution notebook writes (`AGENT_PY`), so the test runs exactly what a
learner gets, fed through stdin as a shell pipe would.
"""

import ast
import os
import subprocess
import sys

import nbformat
import pytest

import looplab
from authoring.learner_notebooks import SOLUTIONS
from looplab.loop import MAX_TOKENS, SYSTEM_PROMPT
from looplab.recordings import Recording
from looplab.tools import TOOLS
from looplab.transport import not_recorded_summary
from tests.notebook_code import notebook_question

RECORDED, FOLLOW_UP = (notebook_question("04_your_agent", name) for name in ("PRODUCT_QUESTION", "FOLLOW_UP_QUESTION"))
NOT_RECORDED = "What is 2 + 2?"


def agent_py() -> str:
    """The AGENT_PY string of the solution notebook's cell that writes agent.py."""
    notebook = nbformat.read(SOLUTIONS / "04_your_agent.ipynb", as_version=4)
    for cell in notebook.cells:
        if cell.cell_type == "code" and cell.source.startswith("AGENT_PY ="):
            assignment = ast.parse(cell.source).body[0]
            return ast.literal_eval(assignment.value)
    raise AssertionError("no cell of 04_your_agent defines AGENT_PY")


@pytest.fixture
def run_agent(tmp_path):
    script = tmp_path / "agent.py"
    script.write_text(agent_py(), encoding="utf-8")
    env = {key: value for key, value in os.environ.items() if not key.startswith(("ANTHROPIC_", "LOOPLAB_"))}
    env.update(PYTHONIOENCODING="utf-8", LOOPLAB_MODE="offline")

    def run(lines: list[str]) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, str(script)], input="".join(f"{line}\n" for line in lines),
                              capture_output=True, encoding="utf-8", env=env, cwd=tmp_path, timeout=120)
    return run


def test_a_line_not_recorded_gets_one_line_and_the_next_line_is_answered(run_agent):
    result = run_agent([NOT_RECORDED, RECORDED, FOLLOW_UP, ""])
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr and result.stderr == ""
    said = result.stdout.split("User> ")
    assert said[0].startswith("looplab: offline")
    not_recorded = said[1]
    assert not_recorded.count("\n") == 1, not_recorded  # one line
    assert not_recorded.startswith("Agent> (Not recorded offline: the recording '04_your_agent' answers only ")
    assert f'"{RECORDED}" then "{FOLLOW_UP}"' in not_recorded  # what is recorded
    assert "Set ANTHROPIC_API_KEY to ask anything" in not_recorded  # how to go live
    assert said[2] == "[tool] calculator({'expression': '4823 * 1979'}) -> 9544717\nAgent> 4823 × 1979 = 9,544,717.\n"
    assert said[3].endswith("Agent> 9,544,717 ÷ 7 = 1,363,531.\n")  # the follow-up builds on the answered line
    assert said[4] == "\n"


def test_a_session_of_recorded_lines_is_unchanged(run_agent):
    result = run_agent([RECORDED])
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[1:] == [
        "User> [tool] calculator({'expression': '4823 * 1979'}) -> 9544717",
        "Agent> 4823 × 1979 = 9,544,717.",
        "User> ",
    ]


# --- the one line, from the recording ------------------------------------------------------------


def test_recorded_lines_are_the_typed_lines_of_each_conversation_with_this_setup():
    request = {"model": looplab.MODEL, "max_tokens": MAX_TOKENS, "system": SYSTEM_PROMPT, "tools": TOOLS,
               "messages": [{"role": "user", "content": NOT_RECORDED}]}
    lines = Recording.load("04_your_agent").recorded_lines(request)
    assert [RECORDED, FOLLOW_UP] in lines  # the longest conversation only, not its opening alone
    assert [RECORDED] not in lines
    assert not any("strawberry" in line for conversation in lines for line in conversation)  # another toolbox


def test_the_summary_says_when_nothing_is_recorded_for_this_setup():
    summary = not_recorded_summary(Recording.load("04_your_agent"), {"model": "claude-opus-5-5", "messages": []})
    assert summary == ("Not recorded offline: the recording '04_your_agent' holds no conversation with this model, "
                       "system prompt and tools. Set ANTHROPIC_API_KEY to ask anything.")
