"""Checks for notebook 1, one tool call: the calculator, its tool definition, one_shot."""

from __future__ import annotations

import ast
import inspect
import re
import textwrap

from .. import scripted
from ..client import MODEL
from ..scripted import calculator as calculator_call, reply, text, thinking
from .core import NOT_WRITTEN, Failure, Report

QUESTION = "What is 4823 × 1979?"


# --- 1.1 calculator ------------------------------------------------------------------------------------

ARITHMETIC = [
    ("4823 * 1979", 9544717),
    ("2 + 3 * 4", 14),
    ("(2 + 3) * 4", 20),
    ("-7 + +2", -5),
    ("7 / 2", 3.5),
    ("0.1 + 0.2", 0.1 + 0.2),
    ("  12 - 4 - 3 ", 5),
]
# Each must come back as an error text: never a number, never an exception.
REFUSED = [
    ("1 / 0", "division by zero"),
    ("__import__('os').getpid()", "a function call (this would run code)"),
    ("(1).real", "an attribute"),
    ("x + 1", "a name"),
    ("2 ** 3", "the ** operator, which is not in + - * /"),
    ("9 ** 9 ** 9", "a huge power, which would freeze the kernel"),
    ("'4' * 3", "a string"),
    ("4823 *", "an unfinished expression"),
]


def _number(output: str) -> float | None:
    try:
        return float(output)
    except (TypeError, ValueError):
        return None


def _calls_eval(function) -> bool:
    """Does the source call eval, exec or compile? Reading the tree, so comments don't count."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(function)))
    except (OSError, TypeError, SyntaxError):
        return False
    return any(
        isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("eval", "exec", "compile")
        for node in ast.walk(tree)
    )


def check_calculator(calculator, report: Report) -> None:
    report.expect(callable(calculator), None, f"calculator should be a function; it is a {type(calculator).__name__}")
    for expression, expected in ARITHMETIC:
        report.situation = f"calculator({expression!r})"
        output = calculator(expression)
        report.expect(isinstance(output, str), None,
                      f"calculator({expression!r}) returned {output!r}, a {type(output).__name__}, not a str",
                      "The tool's result goes back to the model as text: return str(value).")
        value = _number(output)
        report.expect(value is not None and abs(value - expected) < 1e-9, None,
                      f"calculator({expression!r}) returned {output!r}; expected {expected!r}")
    report.note(f"right answers, as text, for {len(ARITHMETIC)} expressions (precedence, parentheses, signs, floats)")
    report.situation = None
    report.expect(not _calls_eval(calculator), "no eval, exec or compile",
                  "calculator calls eval (or exec/compile): it would run any Python the model writes",
                  "Parse with ast.parse(expression, mode='eval') and walk the tree yourself.")
    for expression, what in REFUSED:
        try:
            output = calculator(expression)
        except Exception as error:
            raise Failure(f"calculator({expression!r}) raised {type(error).__name__}; it should return an error text",
                          "Catch the failure and return a text such as 'Error: ...' so the loop can report it.")
        report.expect(isinstance(output, str) and _number(output) is None, None,
                      f"calculator({expression!r}) returned {output!r}; it should refuse {what} with an error text",
                      "Accept only numbers, + - * /, unary signs and parentheses; anything else returns an 'Error: ...' text.")
    report.note(f"refuses {len(REFUSED)} kinds of bad input with an error text, never an exception")


# --- 1.2 CALCULATOR_TOOL -----------------------------------------------------------------------------------

NAME_PATTERN = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


def check_tool_definition(tool, report: Report) -> None:
    if tool == {}:
        raise Failure("not written yet: CALCULATOR_TOOL is still an empty dict",
                      "Fill in the three keys: name, description and input_schema.", kind=NOT_WRITTEN)
    report.expect(isinstance(tool, dict), "CALCULATOR_TOOL is a dict",
                  f"CALCULATOR_TOOL should be a dict; it is a {type(tool).__name__}")
    report.expect(tool.get("name") == "calculator", "its name is 'calculator'",
                  f"its name is {tool.get('name')!r}; the model will ask for it by name, and run_tool expects 'calculator'")
    description = tool.get("description")
    report.expect(isinstance(description, str) and len(description.split()) >= 5, "it has a description",
                  "the description is missing or too short to tell the model when to use the tool",
                  "Say what the tool does and when to use it: the model reads this to decide.")
    schema = tool.get("input_schema")
    report.expect(isinstance(schema, dict) and schema.get("type") == "object", "input_schema is an object schema",
                  f"input_schema should be a JSON Schema with \"type\": \"object\"; it is {schema!r}")
    prop = (schema.get("properties") or {}).get("expression")
    report.expect(isinstance(prop, dict) and prop.get("type") == "string", "it takes an 'expression' string",
                  "input_schema.properties should have an 'expression' of type 'string'")
    report.expect("expression" in (schema.get("required") or []), "'expression' is required",
                  "input_schema.required should list 'expression', so the model always sends it")
    report.situation = "sending it to the API"
    client, _ = scripted.scripted_client([reply(text("Ready."))])
    client.messages.create(model=MODEL, max_tokens=64, tools=[tool], messages=[{"role": "user", "content": "Hello"}])
    report.note("the API accepts it in a request")


# --- 1.3 one_shot --------------------------------------------------------------------------------------

ONE_SHOT_SCENARIOS = [
    ("the model asks for the tool after a text block",
     [reply(text("I'll use the calculator."), calculator_call("4823 * 1979"))], "9544717"),
    ("the model thinks first, then asks for the tool",
     [reply(thinking("Multiplying big numbers: use the tool."), calculator_call("4823 * 1979"))], "9544717"),
    ("the model asks for the tool and nothing else",
     [reply(calculator_call("12 * 12"))], "144"),
    ("the tool fails",
     [reply(text("Let me compute."), calculator_call("1 / 0"))], "Error: division by zero"),
    ("the model answers without the tool",
     [reply(text("That is 9,544,717."))], "That is 9,544,717."),
]


def check_one_shot(one_shot, report: Report) -> None:
    for situation, replies, expected in ONE_SHOT_SCENARIOS:
        report.situation = situation
        client, traffic = scripted.scripted_client(replies, call_limit=1)
        output = one_shot(client, QUESTION)
        sent = traffic.exchanges[0]["request"] if traffic.exchanges else {}
        report.expect(len(traffic.exchanges) == 1, None,
                      f"{situation}: one_shot made {len(traffic.exchanges)} requests; it should make exactly one")
        names = [tool.get("name") for tool in sent.get("tools", [])]
        report.expect("calculator" in names, None,
                      f"{situation}: the request did not offer the calculator tool (tools={names})",
                      "Pass tools=TOOLS to client.messages.create.")
        report.expect(output == expected, f"{situation}: returns {expected!r}",
                      f"{situation}: one_shot returned {output!r}; expected {expected!r}",
                      "Find the tool_use block by its type (it is not always content[0]); "
                      "run it with run_tool(block.name, block.input); if there is none, return the text.")


# The course manifest (looplab/course.py) names this module; these are what it reads.
CHECKERS = {
    "1.1": check_calculator,
    "1.2": check_tool_definition,
    "1.3": check_one_shot,
}

HINTS = {
    "1.1": [
        "ast.parse(expression, mode='eval') gives a tree without running anything.",
        "Walk it recursively: ast.Constant (a number), ast.BinOp (left op right), ast.UnaryOp (-x).",
        "Anything else, and any exception while walking, becomes a returned 'Error: ...' text.",
    ],
    "1.2": [
        "A tool is a dict with three keys: name, description, input_schema.",
        "input_schema is JSON Schema: {'type': 'object', 'properties': {...}, 'required': [...]}.",
    ],
    "1.3": [
        "Look at reply.stop_reason and at the type of each block in reply.content.",
        "The tool_use block has .name and .input: hand them to run_tool.",
        "A reply may start with a text or thinking block: never assume content[0].",
    ],
}
