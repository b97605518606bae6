"""The agent_turn harness (looplab/checks/turns.py) takes from each scenario what its default rules do not say.

By default every request must offer the calculator (or every tool of a toolbox), and the history must be the one
handed in, kept word for word, followed by the turn's messages. A later notebook's loop may offer other tools (a
subagent searches only) or rewrite what it was handed (a summary in place of old turns): its scenario then names
the tools every request must offer (`tools`) and the history expected (`history`).
"""

import pytest

from looplab.catalogue import Text
from looplab.checks import turns
from looplab.checks.core import Failure, Report, Scenario
from looplab.scripted import reply, text, tool_use

QUESTION = {"role": "user", "content": "Who founded the company?"}
EARLIER = [{"role": "user", "content": "Hello"}, {"role": "assistant", "content": [{"type": "text", "text": "Hi!"}]}]
SEARCH = {"name": "search", "description": "Exact words.",
          "input_schema": {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}}
CALCULATOR = {"name": "calculator", "description": "Arithmetic.",
              "input_schema": {"type": "object", "properties": {"expression": {"type": "string"}},
                               "required": ["expression"]}}
REPLIES = [reply(tool_use("search", {"query": "founded"})), reply(text("Dara Okonkwo founded it."))]


def searching_turn(tools, folds=False):
    """A right agent_turn over a one-tool registry; `folds`: it replaces the turns before the last question."""
    def agent_turn(client, messages, **options):
        if folds:
            del messages[:-1]
        while True:
            reply = client.messages.create(model=turns.MODEL, max_tokens=turns.MAX_TOKENS,
                                           system=turns.system_prompt(), tools=tools, messages=messages)
            messages.append({"role": "assistant", "content": reply.content})
            if reply.stop_reason != "tool_use":
                return reply.content[-1].text
            messages.append({"role": "user", "content": [
                turns.tool_result(block, "- Dara Okonkwo founded the company.")
                for block in reply.content if block.type == "tool_use"]})
    return agent_turn


def played(agent_turn, scenario):
    report = Report(texts={**turns.TEXTS, scenario.key: Text(passed=f"the {scenario.key} scenario")})
    with turns.toolbox(lambda name, tool_input: "- Dara Okonkwo founded the company.", ("search", "calculator")):
        turns.run_scenario(agent_turn, scenario, report)
    return report


def test_a_scenario_names_the_tools_every_request_offers():
    scenario = Scenario("subagent", REPLIES, [QUESTION], tools=("search",))
    assert played(searching_turn([SEARCH]), scenario).passed
    with pytest.raises(Failure, match=r"offered the tools \['search', 'calculator'\], not every tool"):
        played(searching_turn([SEARCH, CALCULATOR]), scenario)


def test_without_tools_named_the_toolbox_decides():
    scenario = Scenario("toolbox", REPLIES, [QUESTION])
    with pytest.raises(Failure, match=r"offered the tools \['search'\], not every tool"):
        played(searching_turn([SEARCH]), scenario)


def test_a_scenario_may_say_the_history_it_expects():
    folded = Scenario("folded", REPLIES, [*EARLIER, QUESTION], tools=("search",),
                      history=lambda given, responses: turns.expected_history(given[-1:], responses))
    assert played(searching_turn([SEARCH], folds=True), folded).passed
    kept = Scenario("kept", REPLIES, [*EARLIER, QUESTION], tools=("search",))
    with pytest.raises(Failure):  # by default, what it was handed is kept word for word
        played(searching_turn([SEARCH], folds=True), kept)
    with pytest.raises(Failure):  # and a loop that should fold, but keeps everything, fails the folded scenario
        played(searching_turn([SEARCH]), folded)
