"""Checks for notebook 2, closing the loop: tool_result, agent_turn, and agent_turn's hard cap.

agent_turn is played on the scenarios below by the harness it shares with notebook 3 (turns.py).
"""

from __future__ import annotations

from .. import scripted
from ..client import MODEL
from ..recordings import canonical_blocks
from ..scripted import reply, text, thinking, tool_use
from ..scripted import calculator as calculator_call
from ..tools import TOOLS, is_error, run_tool
from . import turns
from .core import Report, Text
from .turns import Scenario, run_scenario, short, stopped_by_cap

QUESTION = turns.START["content"]
CHAINED = ("A warehouse holds 1250 crates of 48 boxes, and each box holds 36 bottles. "
           "A truck carries 9600 bottles. How many truck loads does it take?")
CONTENT_ZERO = ("Decide on reply.stop_reason, and pick the tool_use blocks by block.type: "
                "the first block of a reply is not always the tool_use (never content[0]).")

TEXTS = {
    **turns.TEXTS,
    # 2.1 tool_result
    "tool_result_call": Text(passed="tool_result(tool_use, {output!r})"),
    "not_a_dict": Text("{situation} returned {result}, a {kind}; it should return a dict",
                       'Return a dict such as {"type": "tool_result", "tool_use_id": ..., "content": ...}.'),
    "wrong_type": Text("{situation} returned a block whose \"type\" is {kind!r}; it should be \"tool_result\"",
                       'The API reads "type" first: a result block says "type": "tool_result".'),
    "no_id": Text("{situation} returned {result}: it has no \"tool_use_id\" key, so the result cites no call",
                  'The key is "tool_use_id" (not "id"), and its value is the id of the tool_use it answers.'),
    "wrong_id": Text("{situation}: \"tool_use_id\" is {cited!r}; it should be the id of the call it answers, {id!r}",
                     "Take the id from the tool_use block itself: tool_use.id (each call has its own)."),
    "wrong_content": Text("{situation}: \"content\" is {content}; it should be the tool's output, {output!r}",
                          'Put the output text as it is under "content".'),
    "flag_missing": Text("{situation} returned {result}: the output is an error text, so the block needs "
                         "\"is_error\": True",
                         "looplab.tools.is_error(output) tells you whether the output is an error text."),
    "flag_needless": Text("{situation} returned {result}: \"is_error\" should only be there when it is True",
                          'Add the "is_error" key only for an error output; leave it out otherwise.'),
    "cites_the_call": Text(passed="cites the call's id (tool_use.id) and carries the output as its content"),
    "flags_errors": Text(passed='adds "is_error": True for an error text, and no is_error key otherwise'),
    "sending_results": Text(passed="sending the results back to the API"),
    "api_accepts": Text(passed="the API accepts its blocks as the answer to the model's calls"),
    # 2.2 agent_turn: the scenarios' names (and a hint for the scenario, where it has one of its own)
    "text_first": Text(passed="the model writes a text block before the tool_use", hint=CONTENT_ZERO),
    "thinking_first": Text(passed="the model thinks first (a thinking block starts each reply)", hint=CONTENT_ZERO),
    "chain": Text(passed="the model chains three calls, one after the other"),
    "chain_just_enough": Text(passed="the model chains three calls, one after the other, with max_iterations=4 "
                                     "(just enough)"),
    "failing": Text(passed="the tool fails (division by zero)"),
    "no_tool": Text(passed="the model answers without a tool"),
    "second_question": Text(passed="a second question, in a conversation that already has a first one"),
    "truncated": Text(passed="the reply is cut off by max_tokens in the middle of a tool call"),
}


# --- 2.1 tool_result -----------------------------------------------------------------------------------


# The model asks for two calls, one that works and one that fails; the second reply answers their results.
BOTH_CALLS = [reply(text("I'll compute both."), calculator_call("4823 * 1979"), calculator_call("1 / 0")),
              reply(text("4823 × 1979 = 9,544,717; 1 / 0 has no value."))]
OUTPUTS = ("9544717", "Error: division by zero")  # of those two calls


def check_tool_result(tool_result, report: Report) -> None:
    report.require_function(tool_result, "tool_result")
    client, _ = scripted.scripted_client(BOTH_CALLS)
    messages = [{"role": "user", "content": QUESTION}]
    message = client.messages.create(model=MODEL, max_tokens=64, tools=TOOLS, messages=messages)
    blocks = [block for block in message.content if block.type == "tool_use"]  # real SDK blocks, as agent_turn has
    for block, output in zip(blocks, OUTPUTS):
        report.enter("tool_result_call", output=output)
        result = tool_result(block, output)
        said = dict(result=short(result), output=output)
        report.require(isinstance(result, dict), "not_a_dict", kind=type(result).__name__, **said)
        report.require(result.get("type") == "tool_result", "wrong_type", kind=result.get("type"))
        report.require("tool_use_id" in result, "no_id", **said)
        report.require(result["tool_use_id"] == block.id, "wrong_id", cited=result["tool_use_id"], id=block.id)
        report.require(canonical_blocks(result.get("content")) == canonical_blocks(output), "wrong_content",
                       content=short(result.get("content")), **said)
        if is_error(output):
            report.require(result.get("is_error") is True, "flag_missing", **said)
        else:
            report.require("is_error" not in result, "flag_needless", **said)
    report.situation = None
    report.note("cites_the_call")
    report.note("flags_errors")

    report.enter("sending_results")
    messages.append({"role": "assistant", "content": message.content})
    messages.append({"role": "user", "content": [tool_result(block, run_tool(block.name, block.input)) for block in blocks]})
    client.messages.create(model=MODEL, max_tokens=64, tools=TOOLS, messages=messages)
    report.note("api_accepts")


# --- 2.2 agent_turn ------------------------------------------------------------------------------------

TEXT_FIRST = Scenario("text_first", [reply(text("I'll use the calculator."), calculator_call("4823 * 1979")),
                                     reply(text("4823 × 1979 = 9,544,717."))])
CHAIN_REPLIES = [reply(text("First, the boxes."), calculator_call("1250 * 48")),
                 reply(calculator_call("60000 * 36")),
                 reply(text("Now the truck loads."), calculator_call("2160000 / 9600")),
                 reply(text("It takes 225 truck loads."))]

AGENT_TURN_SCENARIOS = [
    TEXT_FIRST,
    Scenario("thinking_first", [reply(thinking("Big numbers: use the calculator."), calculator_call("12 * 12")),
                                reply(thinking("The tool says 144."), text("12 × 12 = 144."))]),
    Scenario("chain", CHAIN_REPLIES, [{"role": "user", "content": CHAINED}]),
    Scenario("failing", [reply(text("Let me compute."), calculator_call("1 / 0")),
                         reply(text("That has no value: you cannot divide by zero."))],
             [{"role": "user", "content": "What is 1 / 0?"}]),
    Scenario("no_tool", [reply(text("Hello! Ask me any arithmetic."))], [{"role": "user", "content": "Hello!"}]),
    Scenario("second_question", [reply(text("Let me compute."), calculator_call("9544717 * 2")),
                                 reply(text("Twice that is 19,089,434."))],
             [{"role": "user", "content": QUESTION},
              {"role": "assistant", "content": [{"type": "text", "text": "4823 × 1979 = 9,544,717."}]},
              {"role": "user", "content": "And twice that?"}]),
    Scenario("truncated", [reply(text("I'll work this out step by step."), tool_use("calculator", {}),
                                 stop_reason="max_tokens")],
             [{"role": "user", "content": CHAINED}]),
]


def check_agent_turn(agent_turn, report: Report) -> None:
    report.require_function(agent_turn, "agent_turn")
    for scenario in AGENT_TURN_SCENARIOS:
        run_scenario(agent_turn, scenario, report)


# --- 2.3 the cap --------------------------------------------------------------------------------------

CAPS = (1, 3, None)  # None: the default, 10


def check_cap(agent_turn, report: Report) -> None:
    report.require_function(agent_turn, "agent_turn")
    for cap in CAPS:
        stopped_by_cap(agent_turn, cap, report)
    run_scenario(agent_turn, TEXT_FIRST, report)
    run_scenario(agent_turn, Scenario("chain_just_enough", CHAIN_REPLIES, [{"role": "user", "content": CHAINED}],
                                      {"max_iterations": len(CHAIN_REPLIES)}), report)


# The course manifest (looplab/course.py) names this module; these are what it reads.
CHECKERS = {
    "2.1": check_tool_result,
    "2.2": check_agent_turn,
    "2.3": check_cap,
}

HINTS = {
    "2.1": [
        'A result block is a dict: {"type": "tool_result", "tool_use_id": ..., "content": ...}.',
        "The id it cites is the call's own: tool_use.id. The content is the output text, as it is.",
        'looplab.tools.is_error(output) is True for an "Error: ..." text: only then add "is_error": True.',
    ],
    "2.2": [
        "Loop: call the model with the whole messages list, append its reply, then look at reply.stop_reason.",
        ('Append the reply verbatim: {"role": "assistant", "content": reply.content}; a reply may start with '
         "text or thinking, so pick tool_use blocks by block.type."),
        ("stop_reason 'tool_use': answer every tool_use block with tool_result(block, run_tool(block.name, block.input)), "
         "all in one user message, and go round again. Anything else (end_turn, max_tokens...): return the text."),
    ],
    "2.3": [
        "Replace the endless loop by for _ in range(max_iterations): one model call per iteration.",
        "If the loop runs out without a final answer, raise RuntimeError with max_iterations in the message.",
        "Append the last reply's results before the loop ends, so every tool_use in messages has its tool_result.",
    ],
}
