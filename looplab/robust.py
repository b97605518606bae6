"""Notebook 6's course version: tools may be careless, the harness around them is not.

A model's tool call can fail in three ways: it names a tool that is not registered; its arguments do
not fit the function (a wrong key, a missing one, not an object at all); or the tool raises while it
runs. `run_tool` turns each into an error text and a flag, `(text, is_error)`, and never raises; the
agent turn sends that flag back as `"is_error": true` (absent on success) so the model can correct its
call; and a model that repeats the very call that just failed is stopped before the iteration cap.

Why the calculator here is careless, unlike notebook 1's (`looplab.tools.calculator`, which never
raises): real tools are written by people who did not think of every input, so the harness must hold
whatever a tool does. From notebook 6 on, `1 / 0` raises ZeroDivisionError inside the tool, and the
harness reports it.

Why the arguments are bound against the signature before the call (`inspect.signature(...).bind`):
a `TypeError` can come from the call itself (the model's arguments do not fit) or from inside the tool
(a bug of the tool's). Caught after the call, the two look alike; bound first, each is named for what
it is. (The series this course grew from reports both as "bad arguments".)

Notebooks 1-4's `looplab.tools.run_tool` keeps its texts and its type (text only): this module is
notebook 6's own, and imports the weather and letters tools from notebook 5's (`looplab.toolbox`).
"""

from __future__ import annotations

import ast
import inspect
import itertools
import operator

from .catalogue import words
from .loop import MAX_TOKENS, SYSTEM_PROMPT
from .model_id import MODEL
from .toolbox import count_letters, get_weather

WORDS = words(__file__)  # the lines of the harness that are not tool results, in the course's language

__all__ = ["calculator", "get_weather", "count_letters", "TOOL_REGISTRY", "TOOLS", "run_tool", "agent_turn",
           "CHECKED_REGISTRY"]

_BINARY = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv}
_UNARY = {ast.UAdd: operator.pos, ast.USub: operator.neg}


def calculator(expression: str) -> str:
    """Arithmetic with + - * / and parentheses, the careless way: a problem raises (1 / 0: ZeroDivisionError).

    It still only reads the text (ast.parse, never eval): careless about errors, not about safety."""
    tree = ast.parse(expression.replace("×", "*").replace("÷", "/"), mode="eval")
    return repr(_value(tree.body))


def _value(node):
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return node.value
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](_value(node.operand))
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        return _BINARY[type(node.op)](_value(node.left), _value(node.right))
    raise ValueError(f"only numbers and + - * / ( ) are allowed, found {ast.unparse(node)!r}")


# The registry: tool name -> its function and its schema (the series' shape); TOOLS is derived from it.
TOOL_REGISTRY = {
    "calculator": {
        "function": calculator,
        "schema": {
            "description": "Evaluates an arithmetic expression with + - * / and parentheses, e.g. '(12.5 + 3) * 4'. "
                           "Use it for any arithmetic.",
            "input_schema": {"type": "object",
                             "properties": {"expression": {"type": "string", "description": "The arithmetic."}},
                             "required": ["expression"]},
        },
    },
    "get_weather": {
        "function": get_weather,
        "schema": {
            "description": "The current weather in a city, e.g. 'Paris'.",
            "input_schema": {"type": "object",
                             "properties": {"city": {"type": "string", "description": "The city's name."}},
                             "required": ["city"]},
        },
    },
    "count_letters": {
        "function": count_letters,
        "schema": {
            "description": "Counts how many times one letter occurs in a text, ignoring case.",
            "input_schema": {"type": "object",
                             "properties": {"text": {"type": "string", "description": "The text to look in."},
                                            "letter": {"type": "string", "description": "The one letter."}},
                             "required": ["text", "letter"]},
        },
    },
}
TOOLS = [{"name": name, **entry["schema"]} for name, entry in TOOL_REGISTRY.items()]


def run_tool(name: str, tool_input) -> tuple[str, bool]:
    """Run the tool the model asked for: (its text, False), or (an "Error: ..." text, True). Never raises.

    It looks the tool up at each call, in the registry the checks play with (CHECKED_REGISTRY: TOOL_REGISTRY and
    the tools the checks add), so that a learner's agent_turn checked with this run_tool meets those tools too.
    The model is only ever offered TOOLS, so a conversation never reaches the others."""
    entry = CHECKED_REGISTRY.get(name) if isinstance(name, str) else None
    if entry is None:
        return f"Error: unknown tool {name!r}", True  # the model has the list: it is sent with every request
    if not isinstance(tool_input, dict):
        return f"Error: bad arguments for {name!r}: the input must be an object, got {type(tool_input).__name__}", True
    function = entry["function"]
    try:
        arguments = inspect.signature(function).bind(**tool_input)
    except TypeError as error:  # the model's arguments do not fit the function
        return f"Error: bad arguments for {name!r}: {error}", True
    try:
        return str(function(*arguments.args, **arguments.kwargs)), False
    except Exception as error:  # the tool itself failed, whatever the exception: named as `Type: message`
        return f"Error: {name!r} raised {type(error).__name__}: {error}", True


def agent_turn(client, messages: list, max_iterations: int = 10, system: str = SYSTEM_PROMPT) -> str:
    """Call the model and run its tool calls until it answers in words; every failure goes back flagged.

    A reply that repeats a call (same tool, same input) that already failed in this turn is not run again:
    each of its calls is answered with an error result, so the history stays valid, and the turn ends with
    a line saying so. After `max_iterations` model calls it raises RuntimeError, as notebook 2's does.
    """
    failed = []  # (name, input) of every call that failed in this turn
    for _ in range(max_iterations):
        reply = client.messages.create(model=MODEL, max_tokens=MAX_TOKENS, system=system, tools=TOOLS,
                                       messages=messages)
        messages.append({"role": "assistant", "content": reply.content})
        if reply.stop_reason != "tool_use":
            return "".join(block.text for block in reply.content if block.type == "text")
        calls = [block for block in reply.content if block.type == "tool_use"]
        repeated = [call for call in calls if (call.name, call.input) in failed]
        results = []
        for call in calls:
            if repeated:
                output, is_error = "Error: not run: the same call already failed in this turn", True
            else:
                output, is_error = run_tool(call.name, call.input)
            result = {"type": "tool_result", "tool_use_id": call.id, "content": output}
            if is_error:
                result["is_error"] = True
                failed.append((call.name, call.input))
            results.append(result)
        messages.append({"role": "user", "content": results})
        if repeated:
            return WORDS("stopped_at_repeat", call=f"{repeated[0].name}({repeated[0].input})")
    raise RuntimeError(WORDS("still_asking", max_iterations=max_iterations))


# --- what the checks play -------------------------------------------------------------------------------
# Tools no conversation of the notebook calls (they are not in TOOLS): each shows one way a harness can go wrong.

def explode() -> str:
    """A tool that fails while it runs, with no arguments at fault."""
    raise RuntimeError("boom")


def shout(text: str) -> str:
    """A tool with a bug of its own: whatever text it is given, it raises a TypeError inside."""
    return text.upper() + 1


SETTINGS = {"units": "metric", "language": "en"}


def read_setting(name: str) -> str:
    """A tool that raises KeyError from inside for a setting it lacks: a registered tool failing, not an unknown one."""
    return SETTINGS[name]


def count_words(text: str) -> int:
    """A tool whose result is a number, not a text: run_tool turns it into one."""
    return len(text.split())


def last_log_line() -> str:
    """A tool that succeeds with a text that starts with "Error: ": the last line of a log is data, whatever it says.
    Only run_tool knows whether a call failed; the text cannot tell."""
    return "Error: backup of /home failed at 03:00 (disk full)"


VERSIONS = ("version 1", "version 2")  # what the two functions of the tool "version" answer


def version_one() -> str:
    """A tool swapped for another in the registry each time it runs, as a program (or a test's monkeypatch) may
    swap a registry's function: a run_tool that kept the function from an earlier call answers with the old one."""
    CHECKED_REGISTRY["version"]["function"] = version_two
    return VERSIONS[0]


def version_two() -> str:
    """version_one's other half: answers "version 2", and puts version_one back in the registry."""
    CHECKED_REGISTRY["version"]["function"] = version_one
    return VERSIONS[1]


_RUNS = itertools.count(1)


def fetch_page(url: str) -> str:
    """A tool that cannot reach the network: it raises ConnectionError, numbering each run of it, so that a check can
    tell a call that ran again from one answered without running (the repeat guard's "do not run it")."""
    raise ConnectionError(f"no answer from {url} (run #{next(_RUNS)})")


def _checked(function, description: str, properties: dict) -> dict:
    """A registry entry for a tool the checks add: the function, and a schema with every parameter required."""
    return {"function": function,
            "schema": {"description": description,
                       "input_schema": {"type": "object", "properties": properties, "required": list(properties)}}}


_TEXT = {"type": "string"}

# While a check of notebook 6 runs, the notebook's TOOL_REGISTRY is this one (looplab/course.py: `provides`):
# its tools and those above, so that a harness meets every kind of failure, the grader's way too.
CHECKED_REGISTRY = {
    **TOOL_REGISTRY,
    "explode": _checked(explode, "Fails.", {}),
    "shout": _checked(shout, "Shouts a text.", {"text": _TEXT}),
    "read_setting": _checked(read_setting, "Reads one setting by its name.", {"name": _TEXT}),
    "count_words": _checked(count_words, "Counts the words of a text.", {"text": _TEXT}),
    "last_log_line": _checked(last_log_line, "The last line of the server's log.", {}),
    "version": _checked(version_one, "Says which version of the tool answered.", {}),
    "fetch_page": _checked(fetch_page, "Fetches a web page.", {"url": _TEXT}),
}
