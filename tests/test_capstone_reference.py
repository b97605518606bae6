"""Notebook 11's course version (looplab/capstone.py): compaction traced, the whole REPL, the demo.

Unit tests against a scripted model (the SDK over a mock transport), and the series' own stage 013 tests, run
against a program made of this module.
"""

from __future__ import annotations

import io

from looplab.capstone import DEMO_CONTEXT_LIMIT, compact, run, run_demo
from looplab.scripted import calculator, reply, scripted_client, text, tool_use

LONG = "word " * 60  # an answer of 300 characters: two such exchanges are over a small budget


def test_the_summary_call_is_traced_as_the_compactor_s():
    client, traffic = scripted_client([reply(text("They asked twice; the answers were long."))])
    history = [{"role": "user", "content": "first"}, {"role": "assistant", "content": LONG},
               {"role": "user", "content": "second"}, {"role": "assistant", "content": LONG}]
    out, trace = io.StringIO(), []
    folded = compact(history, client, out, trace, context_limit=100)
    assert [(entry["agent"], entry["tools"]) for entry in trace] == [("compactor", [])]
    assert trace[0]["input_tokens"] == traffic.exchanges[0]["response"]["usage"]["input_tokens"]
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("[compactor:trace] stop=end_turn tools=- tokens=")
    assert lines[1] == "[compact] folded 2 messages into a summary"
    assert folded[0] == {"role": "user", "content": "[Conversation summary: They asked twice; the answers were long.]"}
    assert folded[2:] == history[2:] and len(history) == 4


def test_without_a_trace_compact_is_notebook_8_s():
    client, _ = scripted_client([reply(text("A summary."))])
    history = [{"role": "user", "content": "first"}, {"role": "assistant", "content": LONG},
               {"role": "user", "content": "second"}, {"role": "assistant", "content": LONG}]
    out = io.StringIO()
    compact(history, client, out, context_limit=100)
    assert out.getvalue() == "[compact] folded 2 messages into a summary\n"
    assert compact(history, client, out, [], context_limit=10_000) == history  # it fits: no call


def test_the_demo_echoes_its_lines_folds_before_the_last_and_ends_with_the_total():
    client, traffic = scripted_client([
        reply(tool_use("research", {"question": "Who founded Halden Robotics?"})),
        reply(tool_use("search", {"query": "founded"})),
        reply(text("Halden Robotics was founded in 2019 by Dara Okonkwo. " + LONG)),
        reply(text("Dara Okonkwo founded it in 2019. " + LONG)),
        reply(calculator("25 * 180")),
        reply(text("4500 dollars.")),
        reply(text("A summary of the founder question.")),
        reply(text("Tinker, the office cat.")),
    ])
    out = io.StringIO()
    run_demo(client, out, ["Who founded it?", "What is 25 * 180?", "And the cat?"])
    said = out.getvalue()
    assert "User> Who founded it?\n" in said and "User> And the cat?\n" in said
    assert "[subagent:tool] search" in said and "[tool] calculator" in said
    assert said.index("[compact] folded") > said.index("User> And the cat?")
    assert "\nUser> [trace] session total: 8 model calls, $" in said
    assert DEMO_CONTEXT_LIMIT < 1200


def test_an_empty_input_costs_nothing_and_says_no_total():
    client, traffic = scripted_client([])
    out = io.StringIO()
    run(io.StringIO(""), out, client)
    assert out.getvalue() == "User> " and traffic.exchanges == []


STAGE = "agent-013-capstone"
PROGRAM = '''"""Stage 013 as the course writes it: looplab.capstone, its demo script the series' shape."""
import sys

from looplab import capstone
from looplab.capstone import run  # noqa: F401

DEMO_SCRIPT = ["Who founded Halden Robotics, and where is its headquarters today?",
               "Staff get 25 days of vacation. If each day is worth $180, what is the whole allowance worth?",
               "Last one: what was the company's first product, and what is the office cat called?"]


def run_demo(client, output_stream):
    capstone.run_demo(client, output_stream, DEMO_SCRIPT)


if __name__ == "__main__":
    run_demo(None, sys.stdout)
'''


def test_the_series_stage_013_tests_pass_against_this_module(tmp_path):
    from tests.test_series_stages import a_program_passes_the_stage

    a_program_passes_the_stage(STAGE, PROGRAM, "agent_capstone.py", tmp_path)
