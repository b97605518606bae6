"""Notebook 9's course version: a subagent, an agent loop behind a tool's face.

"Multi-agent" sounds like agents talking to each other. Here it is smaller and more useful: a tool whose function
runs another agent turn, with its own system prompt, its own tools and a history of its own that starts with the
question alone. The parent registers it like any tool; dispatch, errors and results work as in notebooks 5 and 6.

Why bother: **context isolation**. Notebook 8 kept the history small by summarising it after the fact; a subagent
keeps the noise out in the first place. The searching (a query, a miss, another query, the chunk) happens in the
subagent's history, which is dropped when it answers. The parent sees one call and one paragraph, as it would see
a calculator's "42".

One change makes it almost free: the inner loop the notebooks have written since notebook 2 takes, as arguments,
what differs between the two agents (the system prompt, the registry, where its tool lines go, how they are tagged),
so that the parent and the subagent are the same `agent_turn` called twice. `run_tool` takes the registry too: each
agent has its own toolbox, and a name missing from one is an error result in that agent's history.

The texts the series' tests read stay as they are in every language: `[tool]`, `[tool-error]`, the `subagent:`
prefix, `User> `, `Agent> ` and the tool results (`Error: unknown tool ...`).
"""

from __future__ import annotations

import inspect
from typing import TextIO

from .catalogue import words
from .client import client as offline_client
from .knowledge import search
from .model_id import MODEL
from .robust import calculator

WORDS = words(__file__)  # the two system prompts and the tools' descriptions, in the course's language

__all__ = ["SYSTEM_PROMPT", "RESEARCHER_PROMPT", "RESEARCHER_REGISTRY", "PARENT_REGISTRY", "RESEARCH_SCHEMA",
           "SUBAGENT_TAG", "run_tool", "agent_turn", "research", "run"]

RECORDING = "09_subagent"  # what answers offline: the notebook's recording
MAX_TOKENS = 1024
SUBAGENT_TAG = "subagent:"  # before the subagent's tool lines: [subagent:tool], [subagent:tool-error]
SYSTEM_PROMPT = WORDS("system_prompt")  # the parent's: a calculator, and research for anything about the company
RESEARCHER_PROMPT = WORDS("researcher_prompt")  # the subagent's: search only, one paragraph for another agent


def _schema(description: str, parameter: str, about: str) -> dict:
    return {"description": description,
            "input_schema": {"type": "object", "properties": {parameter: {"type": "string", "description": about}},
                             "required": [parameter]}}


# The subagent's toolbox: notebook 7's exact-word search over the Halden Robotics corpus, nothing else.
RESEARCHER_REGISTRY = {
    "search": {"function": search,
               "schema": _schema(WORDS("search_description"), "query", WORDS("search_query"))},
}
# The parent's own tools: the calculator. `research` joins them in `run`: its function needs the client.
PARENT_REGISTRY = {
    "calculator": {"function": calculator,
                   "schema": _schema(WORDS("calculator_description"), "expression", WORDS("calculator_expression"))},
}
RESEARCH_SCHEMA = _schema(WORDS("research_description"), "question", WORDS("research_question"))


def run_tool(registry: dict, name: str, tool_input) -> tuple[str, bool]:
    """Notebook 6's run_tool over the registry it is handed: (the tool's text, False), or (an "Error: ..." text,
    True); never raises. A name another agent's registry holds is unknown here all the same."""
    entry = registry.get(name) if isinstance(name, str) else None
    if entry is None:
        return f"Error: unknown tool {name!r}; the tools are {', '.join(registry) or 'none'}", True
    if not isinstance(tool_input, dict):
        return f"Error: bad arguments for {name!r}: the input must be an object", True
    try:
        arguments = inspect.signature(entry["function"]).bind(**tool_input)
    except TypeError as error:
        return f"Error: bad arguments for {name!r}: {error}", True
    try:
        return str(entry["function"](*arguments.args, **arguments.kwargs)), False
    except Exception as error:
        return f"Error: {name!r} raised {type(error).__name__}: {error}", True


def agent_turn(client, system: str, registry: dict, messages: list, output_stream: TextIO, tag_prefix: str = "",
               max_iterations: int = 10) -> str:
    """One agent's turn: call the model with this system prompt and these tools, run its calls from this registry,
    until it answers in words; each call gets a line `[<prefix>tool] name(input) -> text` (`tool-error` when it
    failed). The turn's messages are appended to `messages`, this agent's history; the answer is returned."""
    tools = [{"name": name, **entry["schema"]} for name, entry in registry.items()]
    for _ in range(max_iterations):
        reply = client.messages.create(model=MODEL, max_tokens=MAX_TOKENS, system=system, tools=tools,
                                       messages=messages)
        messages.append({"role": "assistant", "content": reply.content})
        if reply.stop_reason != "tool_use":
            return "".join(block.text for block in reply.content if block.type == "text")
        results = []
        for block in reply.content:
            if block.type != "tool_use":
                continue
            output, is_error = run_tool(registry, block.name, block.input)
            tag = tag_prefix + ("tool-error" if is_error else "tool")
            output_stream.write(f"[{tag}] {block.name}({block.input}) -> {output}\n")
            result = {"type": "tool_result", "tool_use_id": block.id, "content": output}
            if is_error:
                result["is_error"] = True
            results.append(result)
        messages.append({"role": "user", "content": results})
    raise RuntimeError(WORDS("still_asking", max_iterations=max_iterations))


def research(question: str, client, output_stream: TextIO) -> str:
    """The subagent: a turn of its own, from a history that holds the question alone, with the researcher's prompt
    and the search tool. Only its answer leaves: its history, every search and miss in it, is dropped here."""
    messages = [{"role": "user", "content": question}]
    return agent_turn(client, RESEARCHER_PROMPT, RESEARCHER_REGISTRY, messages, output_stream, tag_prefix=SUBAGENT_TAG)


def run(input_stream: TextIO, output_stream: TextIO, client=None, system: str = SYSTEM_PROMPT) -> None:
    """The parent as a program: notebook 6's REPL with the calculator and `research`, a tool whose function runs the
    subagent with this client, its lines going where the parent's go."""
    client = client or offline_client(RECORDING)
    registry = {**PARENT_REGISTRY, "research": {
        "function": lambda question: research(question, client, output_stream), "schema": RESEARCH_SCHEMA}}
    messages: list = []
    while True:
        output_stream.write("User> ")
        line = input_stream.readline()
        if not line.strip():  # the end of the input, or an empty line
            return
        messages.append({"role": "user", "content": line.strip()})
        try:
            reply = agent_turn(client, system, registry, messages, output_stream)
        except RuntimeError as error:  # the cap: say so, and read the next line
            reply = f"({error})"
        output_stream.write(f"Agent> {reply}\n")
