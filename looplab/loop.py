"""What the notebooks build, ready to import: each notebook starts from the ones before it.

A learner's bug in notebook 1 must never block notebook 3, so every notebook imports the earlier
pieces from here instead of from the learner's own work. The code is the same as in the solution
notebooks (solutions/*.ipynb), except `unanswered_tool_uses`, which asks conversation.py (the one
reading of tool_use/tool_result pairing that the rules and the viewer share); tests run the graded
checks on both.
"""

from __future__ import annotations

from typing import TextIO

from . import conversation
from .catalogue import words
from .model_id import MODEL
from .tools import TOOLS, is_error, run_tool

WORDS = words(__file__)  # the prompt and the lines around the protocol's prefixes, in the course's language


def system_prompt() -> str:
    """The agent's system prompt in the course's language now. The notebooks take SYSTEM_PROMPT, read once
    (a kernel runs one notebook); the checks ask here, since the grader judges notebooks of both languages."""
    return WORDS("system_prompt")


SYSTEM_PROMPT = system_prompt()
MAX_TOKENS = 1024


# --- notebook 1: one tool call ------------------------------------------------------------------


def one_shot(client, question: str) -> str:
    """Ask once; if the model asks for a tool, run it and return its raw result."""
    message = client.messages.create(
        model=MODEL, max_tokens=MAX_TOKENS, tools=TOOLS,
        messages=[{"role": "user", "content": question}],
    )
    for block in message.content:
        if block.type == "tool_use":
            return run_tool(block.name, block.input)
    return "".join(block.text for block in message.content if block.type == "text")


# --- notebook 2: closing the loop ------------------------------------------------------------------


def tool_result(tool_use, output: str) -> dict:
    """The user-side block that answers one tool_use, citing its id."""
    result = {"type": "tool_result", "tool_use_id": tool_use.id, "content": output}
    if is_error(output):
        result["is_error"] = True
    return result


# --- notebook 3: matching ids ----------------------------------------------------------------------


def run_tools(message) -> list[dict]:
    """One result per tool_use block of a reply, each citing the id of the call it answers."""
    return [
        tool_result(block, run_tool(block.name, block.input))
        for block in message.content
        if block.type == "tool_use"
    ]


def unanswered_tool_uses(messages: list) -> list[str]:
    """Ids of the tool_use blocks the API would call unanswered, in history order.

    The notebook's version looks for a result anywhere in the message right after; this one is
    the course's model of the API (conversation.py), which also wants the results to open that
    message, before any text. On the check's histories the two agree.
    """
    return [use.id for use in conversation.read(messages).unanswered]


def agent_turn(client, messages: list, max_iterations: int = 10, system: str = SYSTEM_PROMPT) -> str:
    """Call the model, run the tools it asks for, feed the results back, until it answers in words.

    Appends every reply and every result message to `messages`. After `max_iterations` model
    calls it stops, with every tool_use answered, and raises RuntimeError.
    """
    for _ in range(max_iterations):
        message = client.messages.create(
            model=MODEL, max_tokens=MAX_TOKENS, system=system, tools=TOOLS, messages=messages,
        )
        messages.append({"role": "assistant", "content": message.content})
        if message.stop_reason != "tool_use":
            return "".join(block.text for block in message.content if block.type == "text")
        messages.append({"role": "user", "content": run_tools(message)})
    raise RuntimeError(WORDS("still_asking", max_iterations=max_iterations))


# --- notebook 4: your agent -------------------------------------------------------------------------


def run(input_stream: TextIO, output_stream: TextIO, client, system: str = SYSTEM_PROMPT, max_iterations: int = 10) -> None:
    """The agent as a program: read a line, run the loop, print each tool call and the reply."""
    messages: list = []
    while True:
        output_stream.write("User> ")
        line = input_stream.readline()
        if not line.strip():
            output_stream.write("\n")
            return
        messages.append({"role": "user", "content": line.strip()})
        for _ in range(max_iterations):
            message = client.messages.create(
                model=MODEL, max_tokens=MAX_TOKENS, system=system, tools=TOOLS, messages=messages,
            )
            messages.append({"role": "assistant", "content": message.content})
            if message.stop_reason != "tool_use":
                break
            results = []
            for block in message.content:
                if block.type == "tool_use":
                    output = run_tool(block.name, block.input)
                    output_stream.write(f"[tool] {block.name}({block.input}) -> {output}\n")
                    results.append(tool_result(block, output))
            messages.append({"role": "user", "content": results})
        else:
            output_stream.write(f"Agent> {WORDS('stopped_at_cap', max_iterations=max_iterations)}\n")
            continue
        reply = "".join(block.text for block in message.content if block.type == "text")
        if message.stop_reason in ("max_tokens", "refusal"):
            output_stream.write(f"Agent> {WORDS('ended_early', stop_reason=message.stop_reason)} {reply}\n")
            messages.pop()
        else:
            output_stream.write(f"Agent> {reply}\n")
