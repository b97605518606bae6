"""What notebook 11 says of the SDK's own helpers, checked against the SDK this course pins (requirements.txt).

Notebook 11 ends with a table: what the learner built, against what `anthropic`'s tool helpers and MCP give. Its
cells show two of the claims on the notebook's recording (`beta_tool`'s definition, `tool_runner`'s loop); the
others are held here, each on the SDK over the course's offline transport (looplab.scripted), so that a new SDK
that behaves otherwise fails this file, not a learner's trust. The SDK's helpers are public: `anthropic.lib.tools`
and `client.beta.messages.tool_runner`.
"""

from __future__ import annotations

import inspect

import pytest
from anthropic.lib.tools import BetaToolRunner, ToolError, beta_tool

from looplab import MODEL
from looplab.scripted import reply, scripted_client, text, tool_use


@beta_tool
def divide(a: int, b: int) -> str:
    """Divide one number by another.

    Args:
        a: The dividend.
        b: The divisor.
    """
    return str(a / b)


def runner_of(client, tools, question="Go.", **options):
    return client.beta.messages.tool_runner(model=MODEL, max_tokens=256, tools=tools, thread=False,
                                            messages=[{"role": "user", "content": question}], **options)


def test_beta_tool_writes_the_definition_from_the_signature_and_the_docstring():
    definition = divide.to_dict()
    assert definition["name"] == "divide" and definition["description"] == "Divide one number by another."
    assert definition["input_schema"]["required"] == ["a", "b"]
    assert definition["input_schema"]["properties"]["b"]["description"] == "The divisor."


def test_the_runner_runs_the_loop_and_answers_each_call_under_its_id():
    client, traffic = scripted_client([reply(tool_use("divide", {"a": 6, "b": 3})), reply(text("It is 2."))])
    messages = list(runner_of(client, [divide]))
    assert [message.stop_reason for message in messages] == ["tool_use", "end_turn"]
    call = messages[0].content[0]
    sent = traffic.exchanges[1]["request"]["messages"]
    assert sent[-1] == {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call.id, "content": "2.0"}]}
    assert all(message.usage.input_tokens > 0 for message in messages)  # each message it yields carries its usage


def test_a_tool_that_raises_is_answered_with_is_error_and_the_exception_s_text():
    client, traffic = scripted_client([reply(tool_use("divide", {"a": 1, "b": 0})), reply(text("No."))])
    list(runner_of(client, [divide]))
    result = traffic.exchanges[1]["request"]["messages"][-1]["content"][0]
    assert result["is_error"] is True and "division by zero" in result["content"]


def test_tool_error_sends_content_of_the_tool_s_own():
    @beta_tool
    def refuse(reason: str) -> str:
        """Refuse, saying why."""
        raise ToolError([{"type": "text", "text": f"refused: {reason}"}])

    client, traffic = scripted_client([reply(tool_use("refuse", {"reason": "closed"})), reply(text("Closed."))])
    list(runner_of(client, [refuse]))
    result = traffic.exchanges[1]["request"]["messages"][-1]["content"][0]
    assert result["is_error"] is True and result["content"] == [{"type": "text", "text": "refused: closed"}]


def test_max_iterations_stops_the_loop_without_a_word():
    """Notebook 2's cap raised; the runner just stops, its last message still asking for a tool."""
    client, traffic = scripted_client([reply(tool_use("divide", {"a": n, "b": 1})) for n in (1, 2, 3)])
    messages = list(runner_of(client, [divide], max_iterations=2))
    assert len(traffic.exchanges) == 2 and messages[-1].stop_reason == "tool_use"


def test_a_subagent_is_a_tool_whose_function_runs_another_runner():
    client, traffic = scripted_client([reply(tool_use("research", {"question": "Who founded it?"})),
                                       reply(tool_use("divide", {"a": 4, "b": 2})),
                                       reply(text("Dara Okonkwo.")),
                                       reply(text("Dara Okonkwo founded it."))])

    @beta_tool
    def research(question: str) -> str:
        """Hand a question to a researcher with a history of its own."""
        return runner_of(client, [divide], question).until_done().content[-1].text

    messages = list(runner_of(client, [research], "Who founded Halden Robotics?"))
    assert messages[-1].content[-1].text == "Dara Okonkwo founded it."
    parent = traffic.exchanges[3]["request"]["messages"]
    assert parent[-1]["content"][0]["content"] == "Dara Okonkwo."  # one paragraph back; the division stayed out
    assert "divide" not in str(parent)


def test_compaction_is_a_beta_the_api_answers():
    """The runner schedules it; the API writes the summary (not played by the course's offline API)."""
    doc = inspect.getdoc(BetaToolRunner.compact_before_next_turn)
    assert "requests a summary" in doc and "compact-2026-09-04" in doc


@pytest.mark.parametrize("method", ["tool_runner", "create"])
def test_the_api_can_call_a_remote_mcp_server_itself(method):
    client, _ = scripted_client([])
    assert "mcp_servers" in inspect.signature(getattr(client.beta.messages, method)).parameters
