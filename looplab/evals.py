"""Notebook 10's course version: tracing every model call, and evals that grade scripted conversations.

Two instruments for an agent that now makes calls on its own behalf and on its subagent's:

- **Tracing.** `agent_turn` (notebook 9's) takes a `trace` list and appends one entry per model call: which agent
  made it (the parent, or the subagent, told by the tag its lines carry), why the model stopped, the tools it asked
  for, the tokens in and out, and what they cost. The same facts go out as a `[trace]` line. The subagent's history
  stays private, but its spending is real: its calls land in the same trace, tagged `subagent`.
- **Evals.** An expectation is a function `(trace, reply) -> None` when it holds, or a sentence saying what went
  wrong: must call tool X, must call no tool, the reply contains Y (ignoring case). `run_evals` plays each case on a
  fresh history, registry and trace, and reports pass and fail. The course's own checks are evals of the learner's
  code, in this shape.

The prices are named once, below, with where they come from. Offline, the recordings' usage makes every trace the
same at every run; live, tokens and costs vary with the model's replies.
"""

from __future__ import annotations

from typing import Callable, TextIO

from .catalogue import words
from .client import client as offline_client
from .model_id import MODEL
from .subagent import PARENT_REGISTRY, RESEARCH_SCHEMA, RESEARCHER_PROMPT, RESEARCHER_REGISTRY, SYSTEM_PROMPT, run_tool

WORDS = words(__file__)  # the eval cases' names and the error at the cap, in the course's language

__all__ = ["PRICE_INPUT", "PRICE_OUTPUT", "PRICES_SOURCE", "SYSTEM_PROMPT", "cost_of", "agent_turn", "research",
           "build_registry", "expect_tool_call", "expect_no_tool_calls", "expect_reply_contains",
           "eval_cases", "run_evals", "run"]

RECORDING = "10_evals_and_tracing"  # what answers offline: the notebook's recording
MAX_TOKENS = 1024
# Dollars per million tokens. The rates Anthropic publishes for its Haiku tier (Claude Haiku 4.5: $1 in, $5 out), the
# ones the series' stage 012 charges; written once, here, to be checked against the pricing page before live use.
PRICE_INPUT = 1.00
PRICE_OUTPUT = 5.00
PRICES_SOURCE = "Anthropic's pricing page (anthropic.com/pricing), Claude Haiku 4.5, as of 2026-03"
PARENT, SUBAGENT = "parent", "subagent"  # which agent an entry's call was made by


def cost_of(usage) -> float:
    """What one call cost, in dollars: its input and output tokens at their rates per million."""
    return (usage.input_tokens * PRICE_INPUT + usage.output_tokens * PRICE_OUTPUT) / 1_000_000


def traced(reply, tag_prefix: str) -> dict:
    """The trace entry of one model call."""
    return {"agent": tag_prefix.rstrip(":") or PARENT, "stop_reason": reply.stop_reason,
            "tools": [block.name for block in reply.content if block.type == "tool_use"],
            "input_tokens": reply.usage.input_tokens, "output_tokens": reply.usage.output_tokens,
            "cost": cost_of(reply.usage)}


def trace_line(entry: dict, tag_prefix: str) -> str:
    """The entry as a line a person reads: `[trace] stop=tool_use tools=calculator tokens=300+50 cost=$0.000550`."""
    return (f"[{tag_prefix}trace] stop={entry['stop_reason']} tools={','.join(entry['tools']) or '-'} "
            f"tokens={entry['input_tokens']}+{entry['output_tokens']} cost=${entry['cost']:.6f}\n")


def agent_turn(client, system: str, registry: dict, messages: list, output_stream: TextIO, tag_prefix: str = "",
               trace: list | None = None, max_iterations: int = 10) -> str:
    """Notebook 9's agent_turn, each model call traced when a trace is given: an entry in it and a `[trace]` line."""
    tools = [{"name": name, **entry["schema"]} for name, entry in registry.items()]
    for _ in range(max_iterations):
        reply = client.messages.create(model=MODEL, max_tokens=MAX_TOKENS, system=system, tools=tools,
                                       messages=messages)
        messages.append({"role": "assistant", "content": reply.content})
        if trace is not None:
            trace.append(traced(reply, tag_prefix))
            output_stream.write(trace_line(trace[-1], tag_prefix))
        if reply.stop_reason != "tool_use":
            return "".join(block.text for block in reply.content if block.type == "text")
        results = []
        for block in reply.content:
            if block.type != "tool_use":
                continue
            output, is_error = run_tool(registry, block.name, block.input)
            output_stream.write(f"[{tag_prefix}{'tool-error' if is_error else 'tool'}] {block.name}({block.input}) "
                                f"-> {output}\n")
            results.append({"type": "tool_result", "tool_use_id": block.id, "content": output,
                            **({"is_error": True} if is_error else {})})
        messages.append({"role": "user", "content": results})
    raise RuntimeError(WORDS("still_asking", max_iterations=max_iterations))


def research(question: str, client, output_stream: TextIO, trace: list | None = None) -> str:
    """Notebook 9's subagent, its calls in the caller's trace, tagged `subagent`."""
    return agent_turn(client, RESEARCHER_PROMPT, RESEARCHER_REGISTRY, [{"role": "user", "content": question}],
                      output_stream, tag_prefix=f"{SUBAGENT}:", trace=trace)


def build_registry(client, output_stream: TextIO, trace: list | None = None) -> dict:
    """The parent's registry, its research tool tracing into `trace`: made for each session and each eval case."""
    return {**PARENT_REGISTRY, "research": {
        "function": lambda question: research(question, client, output_stream, trace), "schema": RESEARCH_SCHEMA}}


def called(trace: list) -> list[str]:
    """Every tool the model asked for in a trace, in order."""
    return [name for entry in trace for name in entry["tools"]]


def expect_tool_call(name: str) -> Callable[[list, str], str | None]:
    """The run called `name` at least once."""
    def expectation(trace: list, reply: str) -> str | None:
        return None if name in called(trace) else f"expected a call to {name!r}, saw {called(trace) or 'no tool calls'}"
    return expectation


def expect_no_tool_calls() -> Callable[[list, str], str | None]:
    """The run called no tool."""
    def expectation(trace: list, reply: str) -> str | None:
        return None if not called(trace) else f"expected no tool calls, saw {called(trace)}"
    return expectation


def expect_reply_contains(text: str) -> Callable[[list, str], str | None]:
    """The final reply contains `text`, whatever the case of either."""
    def expectation(trace: list, reply: str) -> str | None:
        return None if text.lower() in reply.lower() else f"expected the reply to contain {text!r}, got {reply!r}"
    return expectation


def eval_cases() -> list:
    """The cases `python agent_evals.py` plays (the program notebook 10 writes). A function, not a list made on import:
    in the graded edition the expectations are the grader's to run, and nothing may call them as the module loads."""
    return [{"name": WORDS("case_calculator"), "prompt": "What is 6 * 7?",
             "checks": [expect_tool_call("calculator"), expect_reply_contains("42")]},
            {"name": WORDS("case_research"), "prompt": "Who founded Halden Robotics?",
             "checks": [expect_tool_call("research"), expect_reply_contains("Okonkwo")]},
            {"name": WORDS("case_small_talk"), "prompt": "Hello! How are you today?",
             "checks": [expect_no_tool_calls()]}]


def run_evals(client, output_stream: TextIO, cases: list) -> int:
    """Play each case from nothing (its own history, registry and trace) and grade it; the number of cases that
    failed, so that a program (or CI) can turn behaviour into an exit code."""
    failed, total = 0, 0.0
    for case in cases:
        trace: list = []
        reply = agent_turn(client, SYSTEM_PROMPT, build_registry(client, output_stream, trace),
                           [{"role": "user", "content": case["prompt"]}], output_stream, trace=trace)
        problems = [problem for check in case["checks"] if (problem := check(trace, reply)) is not None]
        cost = sum(entry["cost"] for entry in trace)
        total += cost
        output_stream.write(f"[eval] {'FAIL' if problems else 'PASS'} {case['name']} (${cost:.6f})\n")
        output_stream.writelines(f"[eval]   - {problem}\n" for problem in problems)
        failed += bool(problems)
    output_stream.write(f"[eval] {len(cases) - failed}/{len(cases)} passed, ${total:.6f} in all\n")
    return failed


def run(input_stream: TextIO, output_stream: TextIO, client=None, system: str = SYSTEM_PROMPT) -> None:
    """Notebook 9's parent as a program, every call traced, the session's total said at the end."""
    client = client or offline_client(RECORDING)
    trace: list = []
    registry = build_registry(client, output_stream, trace)
    messages: list = []
    while True:
        output_stream.write("User> ")
        line = input_stream.readline()
        if not line.strip():  # the end of the input, or an empty line
            break
        messages.append({"role": "user", "content": line.strip()})
        output_stream.write(f"Agent> {agent_turn(client, system, registry, messages, output_stream, trace=trace)}\n")
    if trace:
        total = sum(entry["cost"] for entry in trace)
        output_stream.write(f"[trace] session total: {len(trace)} model calls, ${total:.6f}\n")
