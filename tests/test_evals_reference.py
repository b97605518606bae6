"""Notebook 10's course version (looplab/evals.py), ahead of its notebook: traces, costs, expectations, run_evals.

Unit tests against a scripted model (the SDK over a mock transport, its usage the scripted reply's), and the series'
own stage 012 tests, run against a program made of this module.
"""

from __future__ import annotations

import io
from types import SimpleNamespace

from looplab.evals import (
    PRICE_INPUT, PRICE_OUTPUT, SYSTEM_PROMPT, agent_turn, build_registry, cost_of, expect_no_tool_calls,
    expect_reply_contains, expect_tool_call, run, run_evals,
)
from looplab.scripted import calculator, reply, scripted_client, text, tool_use


def test_the_cost_is_tokens_at_their_rates_per_million():
    assert cost_of(SimpleNamespace(input_tokens=1_000_000, output_tokens=0)) == PRICE_INPUT
    assert cost_of(SimpleNamespace(input_tokens=0, output_tokens=1_000_000)) == PRICE_OUTPUT
    assert cost_of(SimpleNamespace(input_tokens=300, output_tokens=50)) == (300 * 1.0 + 50 * 5.0) / 1_000_000


def test_each_call_leaves_an_entry_and_a_line_and_the_subagent_s_are_tagged():
    client, traffic = scripted_client([reply(tool_use("research", {"question": "Who founded Halden Robotics?"})),
                                       reply(tool_use("search", {"query": "founded"})),
                                       reply(text("Dara Okonkwo founded it in 2019.")),
                                       reply(text("Dara Okonkwo, in 2019."))])
    out, trace = io.StringIO(), []
    answer = agent_turn(client, SYSTEM_PROMPT, build_registry(client, out, trace),
                        [{"role": "user", "content": "Who founded it?"}], out, trace=trace)
    assert answer == "Dara Okonkwo, in 2019."
    assert [entry["agent"] for entry in trace] == ["parent", "subagent", "subagent", "parent"]
    assert [entry["tools"] for entry in trace] == [["research"], ["search"], [], []]
    usage = [exchange["response"]["usage"] for exchange in traffic.exchanges]
    assert [entry["input_tokens"] for entry in trace] == [u["input_tokens"] for u in usage]
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("[trace] stop=tool_use tools=research tokens=")
    assert any(line.startswith("[subagent:trace] stop=end_turn tools=- tokens=") for line in lines)


def test_the_expectations_say_what_went_wrong():
    trace = [{"tools": ["calculator"]}]
    assert expect_tool_call("calculator")(trace, "42") is None
    assert "research" in expect_tool_call("research")(trace, "42")
    assert expect_no_tool_calls()([{"tools": []}], "hi") is None
    assert "calculator" in expect_no_tool_calls()(trace, "hi")
    assert expect_reply_contains("OKONKWO")([], "Dara Okonkwo") is None
    assert "42" in expect_reply_contains("42")([], "I do not know.")


def test_run_evals_plays_each_case_on_a_fresh_history_and_counts_the_failures():
    client, traffic = scripted_client([reply(calculator("6 * 7")), reply(text("It's 42.")),
                                       reply(calculator("1 + 1")), reply(text("Hello! 2."))])
    cases = [{"name": "arithmetic", "prompt": "What is 6 * 7?",
              "checks": [expect_tool_call("calculator"), expect_reply_contains("42")]},
             {"name": "greeting", "prompt": "Hello!", "checks": [expect_no_tool_calls()]}]
    out = io.StringIO()
    assert run_evals(client, out, cases=cases) == 1
    said = out.getvalue()
    assert "[eval] PASS arithmetic" in said and "[eval] FAIL greeting" in said and "[eval] 1/2 passed" in said
    assert traffic.exchanges[2]["request"]["messages"] == [{"role": "user", "content": "Hello!"}]


def test_the_session_ends_with_its_total():
    client, _ = scripted_client([reply(text("Hi!"))])
    out = io.StringIO()
    run(io.StringIO("Hello\n"), out, client)
    assert "[trace] session total: 1 model calls, $" in out.getvalue()


STAGE = "agent-012-evals-and-tracing"
PROGRAM = '''"""Stage 012 as the course writes it: looplab.evals."""
import sys

from looplab.evals import *  # noqa: F403
from looplab.evals import run

if __name__ == "__main__":
    run(sys.stdin, sys.stdout)
'''


def test_the_series_stage_012_tests_pass_against_this_module(tmp_path):
    from tests.test_series_stages import a_program_passes_the_stage

    a_program_passes_the_stage(STAGE, PROGRAM, "agent_evals.py", tmp_path)
