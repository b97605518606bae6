"""Notebook 9's course version (looplab/subagent.py): two agents, one loop, two histories.

Unit tests of each piece against a scripted model (the SDK over a mock transport), and the series' own stage 011
tests, run against a program made of this module.
"""

from __future__ import annotations

import io

from looplab import subagent
from looplab.scripted import reply, scripted_client, text, tool_use
from looplab.subagent import (
    PARENT_REGISTRY, RESEARCHER_PROMPT, RESEARCHER_REGISTRY, SYSTEM_PROMPT, agent_turn, research, run, run_tool,
)


def test_run_tool_dispatches_over_the_registry_it_is_handed():
    assert run_tool(PARENT_REGISTRY, "calculator", {"expression": "6 * 7"}) == ("42", False)
    output, is_error = run_tool(PARENT_REGISTRY, "search", {"query": "founded"})  # the subagent's tool, not here
    assert is_error and output.startswith("Error: unknown tool 'search'")
    output, is_error = run_tool(RESEARCHER_REGISTRY, "search", {"query": "founded"})
    assert not is_error and "Dara Okonkwo" in output


def test_run_tool_never_raises():
    assert run_tool(PARENT_REGISTRY, "calculator", "6 * 7")[1]
    assert run_tool(PARENT_REGISTRY, "calculator", {"expr": "1"})[1]
    assert run_tool(PARENT_REGISTRY, "calculator", {"expression": "1 / 0"})[0].startswith("Error: 'calculator' raised")


def test_agent_turn_uses_what_it_is_handed_and_tags_its_lines():
    client, traffic = scripted_client([reply(tool_use("search", {"query": "founded"})),
                                       reply(text("Dara Okonkwo founded it in 2019."))])
    messages, out = [{"role": "user", "content": "Who founded it?"}], io.StringIO()
    answer = agent_turn(client, "a prompt", RESEARCHER_REGISTRY, messages, out, tag_prefix="x:")
    assert answer == "Dara Okonkwo founded it in 2019."
    assert [m["role"] for m in messages] == ["user", "assistant", "user", "assistant"]
    assert out.getvalue().startswith("[x:tool] search({'query': 'founded'}) -> - Halden Robotics was founded")
    request = traffic.exchanges[0]["request"]
    assert request["system"] == "a prompt" and [t["name"] for t in request["tools"]] == ["search"]


def test_research_starts_from_the_question_alone_and_returns_only_its_answer():
    client, traffic = scripted_client([reply(tool_use("calculator", {"expression": "1"})),
                                       reply(tool_use("search", {"query": "founded"})),
                                       reply(text("Founded in 2019 by Dara Okonkwo."))])
    out = io.StringIO()
    assert research("Who founded Halden Robotics?", client, out) == "Founded in 2019 by Dara Okonkwo."
    first = traffic.exchanges[0]["request"]
    assert first["system"] == RESEARCHER_PROMPT
    assert first["messages"] == [{"role": "user", "content": "Who founded Halden Robotics?"}]
    assert "[subagent:tool-error] calculator" in out.getvalue()  # not in its toolbox: an error in its own history
    assert "[subagent:tool] search" in out.getvalue()


def test_the_parent_sees_one_call_and_one_paragraph():
    client, traffic = scripted_client([
        reply(tool_use("research", {"question": "Who founded Halden Robotics?"})),
        reply(tool_use("search", {"query": "creator"})),
        reply(tool_use("search", {"query": "founded"})),
        reply(text("Halden Robotics was founded in 2019 by Dara Okonkwo.")),
        reply(text("Dara Okonkwo, in 2019.")),
    ])
    out = io.StringIO()
    run(io.StringIO("Who founded Halden Robotics?\n"), out, client)
    assert out.getvalue().endswith("Agent> Dara Okonkwo, in 2019.\nUser> ")
    last_parent = [e["request"] for e in traffic.exchanges if e["request"]["system"] == SYSTEM_PROMPT][-1]
    seen = str(last_parent["messages"])
    assert "founded in 2019 by Dara Okonkwo" in seen and "creator" not in seen and "'search'" not in seen


STAGE = "agent-011-subagents"
PROGRAM = '''"""Stage 011 as the course writes it: looplab.subagent, with notebook 7's search."""
import sys

from looplab.knowledge import search  # noqa: F401
from looplab.subagent import *  # noqa: F403
from looplab.subagent import run

if __name__ == "__main__":
    run(sys.stdin, sys.stdout)
'''


def test_the_series_stage_011_tests_pass_against_this_module(tmp_path):
    from tests.test_series_stages import a_program_passes_the_stage

    a_program_passes_the_stage(STAGE, PROGRAM, "agent_subagent.py", tmp_path)


def test_the_module_names_its_recording():
    assert subagent.RECORDING == "09_subagent"
