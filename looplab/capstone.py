"""Notebook 11's course version: the capstone, every mechanism of the course in one program.

Nothing new on purpose. Notebook 10's traced agent (the parent, its research subagent, the calculator) with notebook
8's compaction back between turns, and a demo that feeds the same REPL a script instead of a keyboard:

- `compact` is notebook 8's, with the one change tracing makes natural: the summary call is a model call like any
  other, so it lands in the same trace, made by the `compactor` (a `[compactor:trace]` line). Forgetting costs tokens
  too, and the session's total should say so.
- `run` is notebook 10's REPL with `compact` at the top of each turn, before the new line joins the history (the one
  moment no tool call waits for its result). `echo_input` writes each line it reads back out, so that a scripted
  session reads like a typed one.
- `run_demo` plays a script through `run` with a budget small enough that the history is folded before the last line.

The texts the series' stage 013 tests read stay English in every edition: the `[compactor:trace]` and `[compact]`
lines, the summary's frame and the session's total.
"""

from __future__ import annotations

import io
from typing import TextIO

from .client import client as offline_client
from .compaction import (ACKNOWLEDGEMENT, CONTEXT_LIMIT, KEEP_RECENT, SUMMARY_MAX_TOKENS, SUMMARY_PROMPT,
                         exchange_starts, history_size, part, render_message)
from .evals import SYSTEM_PROMPT, agent_turn, build_registry, trace_line, traced
from .model_id import MODEL

__all__ = ["COMPACTOR", "CONTEXT_LIMIT", "DEMO_CONTEXT_LIMIT", "SYSTEM_PROMPT", "compact", "run", "run_demo"]

RECORDING = "11_capstone"  # what answers offline: the notebook's recording
COMPACTOR = "compactor:"  # the tag of the summary call's trace line: [compactor:trace]
DEMO_CONTEXT_LIMIT = 600  # characters: small enough that a three-line demo is folded before its last line


def compact(messages: list, client, output_stream: TextIO, trace: list | None = None,
            context_limit: int = CONTEXT_LIMIT) -> list:
    """Notebook 8's compact, its summary call traced when a trace is given: an entry made by the compactor, and its
    `[compactor:trace]` line as soon as the call returns, before the `[compact]` line. A new list, always."""
    starts = exchange_starts(messages)
    if history_size(messages) <= context_limit or len(starts) <= KEEP_RECENT:
        return list(messages)
    split = starts[-KEEP_RECENT]
    transcript = "\n".join(render_message(message) for message in messages[:split])
    reply = client.messages.create(model=MODEL, max_tokens=SUMMARY_MAX_TOKENS, system=SUMMARY_PROMPT,
                                   messages=[{"role": "user", "content": transcript}])
    if trace is not None:
        trace.append(traced(reply, COMPACTOR))
        output_stream.write(trace_line(trace[-1], COMPACTOR))
    summary = "".join(part(block, "text") for block in reply.content if part(block, "type") == "text")
    output_stream.write(f"[compact] folded {split} messages into a summary\n")
    return [{"role": "user", "content": f"[Conversation summary: {summary}]"},
            {"role": "assistant", "content": ACKNOWLEDGEMENT},
            *messages[split:]]


def run(input_stream: TextIO, output_stream: TextIO, client=None, system: str = SYSTEM_PROMPT,
        context_limit: int = CONTEXT_LIMIT, echo_input: bool = False) -> None:
    """The whole agent: a REPL whose every model call is traced, that delegates research to its subagent, calls the
    calculator, folds its history between turns, and says what the session cost when the input ends."""
    client = client or offline_client(RECORDING)
    trace: list = []
    registry = build_registry(client, output_stream, trace)
    messages: list = []
    while True:
        output_stream.write("User> ")
        line = input_stream.readline()
        if not line.strip():  # the end of the input, or an empty line
            break
        if echo_input:
            output_stream.write(line.strip() + "\n")
        messages = compact(messages, client, output_stream, trace, context_limit)
        messages.append({"role": "user", "content": line.strip()})
        output_stream.write(f"Agent> {agent_turn(client, system, registry, messages, output_stream, trace=trace)}\n")
    if trace:
        total = sum(entry["cost"] for entry in trace)
        output_stream.write(f"[trace] session total: {len(trace)} model calls, ${total:.6f}\n")


def run_demo(client, output_stream: TextIO, script: list[str], context_limit: int = DEMO_CONTEXT_LIMIT) -> None:
    """`run` fed a script, each line echoed, on a budget that folds the history before the last line."""
    run(io.StringIO("".join(line + "\n" for line in script)), output_stream, client=client,
        context_limit=context_limit, echo_input=True)
