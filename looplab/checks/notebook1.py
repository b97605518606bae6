"""Checks for notebook 1, one tool call: the calculator, its tool definition, one_shot."""

from __future__ import annotations

import ast
import inspect
import re
import textwrap

from .. import scripted
from ..client import MODEL
from ..scripted import calculator as calculator_call, reply, text, thinking
from .core import NOT_WRITTEN, Report, Text, play

QUESTION = "What is 4823 × 1979?"
GREETING = [{"role": "user", "content": "Hello"}]  # sent with the learner's tool, to see the API accept it
READY = reply(text("Ready."))


TEXTS = {
    # 1.1 calculator
    "calculator_call": Text(passed="calculator({expression!r})"),
    "not_text": Text("calculator({expression!r}) returned {output!r}, a {kind}, not a str",
                     "The tool's result goes back to the model as text: return str(value)."),
    "wrong_value": Text("calculator({expression!r}) returned {output!r}; expected {expected!r}"),
    "right_answers": Text(passed="right answers, as text, for {count} expressions (precedence, parentheses, signs, "
                                 "floats)"),
    "no_eval": Text("calculator calls eval (or exec/compile): it would run any Python the model writes",
                    "Parse with ast.parse(expression, mode='eval') and walk the tree yourself.",
                    passed="no eval, exec or compile"),
    "refusal_raised": Text("calculator({expression!r}) raised {kind}; it should return an error text",
                           "Catch the failure and return a text such as 'Error: ...' so the loop can report it."),
    "not_refused": Text("calculator({expression!r}) returned {output!r}; it should refuse {what} with an error text",
                        "Accept only numbers, + - * /, unary signs and parentheses; anything else returns an "
                        "'Error: ...' text."),
    "refuses": Text(passed="refuses {count} kinds of bad input with an error text, never an exception"),
    "division": Text(passed="division by zero"),
    "call": Text(passed="a function call (this would run code)"),
    "attribute": Text(passed="an attribute"),
    "name": Text(passed="a name"),
    "power": Text(passed="the ** operator, which is not in + - * /"),
    "huge_power": Text(passed="a huge power, which would freeze the kernel"),
    "string": Text(passed="a string"),
    "unfinished": Text(passed="an unfinished expression"),
    # 1.2 CALCULATOR_TOOL
    "empty_tool": Text("not written yet: CALCULATOR_TOOL is still an empty dict",
                       "Fill in the three keys: name, description and input_schema."),
    "tool_dict": Text("CALCULATOR_TOOL should be a dict; it is a {kind}", passed="CALCULATOR_TOOL is a dict"),
    "tool_name": Text("its name is {name!r}; the model will ask for it by name, and run_tool expects 'calculator'",
                      passed="its name is 'calculator'"),
    "description": Text("the description is missing or too short to tell the model when to use the tool",
                        "Say what the tool does and when to use it: the model reads this to decide.",
                        passed="it has a description"),
    "schema": Text("input_schema should be a JSON Schema with \"type\": \"object\"; it is {schema!r}",
                   passed="input_schema is an object schema"),
    "expression": Text("input_schema.properties should have an 'expression' of type 'string'",
                       passed="it takes an 'expression' string"),
    "required": Text("input_schema.required should list 'expression', so the model always sends it",
                     passed="'expression' is required"),
    "sending_tool": Text(passed="sending it to the API"),
    "tool_accepted": Text(passed="the API accepts it in a request"),
    # 1.3 one_shot
    "text_first": Text(passed="the model asks for the tool after a text block"),
    "thinking_first": Text(passed="the model thinks first, then asks for the tool"),
    "tool_only": Text(passed="the model asks for the tool and nothing else"),
    "tool_fails": Text(passed="the tool fails"),
    "no_tool": Text(passed="the model answers without the tool"),
    "one_request": Text("{situation}: one_shot made {count} requests; it should make exactly one"),
    "no_calculator": Text("{situation}: the request did not offer the calculator tool (tools={names})",
                          "Pass tools=TOOLS to client.messages.create."),
    "one_shot_output": Text("{situation}: one_shot returned {output!r}; expected {expected!r}",
                            "Find the tool_use block by its type (it is not always content[0]); run it with "
                            "run_tool(block.name, block.input); if there is none, return the text.",
                            passed="{situation}: returns {expected!r}"),
}


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
# Each must come back as an error text: never a number, never an exception. The key names it in TEXTS.
REFUSED = [
    ("1 / 0", "division"), ("__import__('os').getpid()", "call"), ("(1).real", "attribute"), ("x + 1", "name"),
    ("2 ** 3", "power"), ("9 ** 9 ** 9", "huge_power"), ("'4' * 3", "string"), ("4823 *", "unfinished"),
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
    report.require_function(calculator, "calculator")
    for expression, expected in ARITHMETIC:
        report.enter("calculator_call", expression=expression)
        output = calculator(expression)
        said = dict(expression=expression, output=output, expected=expected)
        report.require(isinstance(output, str), "not_text", kind=type(output).__name__, **said)
        value = _number(output)
        report.require(value is not None and abs(value - expected) < 1e-9, "wrong_value", **said)
    report.note("right_answers", count=len(ARITHMETIC))
    report.situation = None
    report.require(not _calls_eval(calculator), "no_eval")
    for expression, what in REFUSED:
        try:
            output = calculator(expression)
        except Exception as error:
            raise report.failure("refusal_raised", expression=expression, kind=type(error).__name__)
        report.require(isinstance(output, str) and _number(output) is None, "not_refused", expression=expression,
                       output=output, what=report.words(what))
    report.note("refuses", count=len(REFUSED))


# --- 1.2 CALCULATOR_TOOL -----------------------------------------------------------------------------------

NAME_PATTERN = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


def check_tool_definition(tool, report: Report) -> None:
    if tool == {}:
        failure = report.failure("empty_tool")
        failure.kind = NOT_WRITTEN
        raise failure
    report.require(isinstance(tool, dict), "tool_dict", kind=type(tool).__name__)
    report.require(tool.get("name") == "calculator", "tool_name", name=tool.get("name"))
    description = tool.get("description")
    report.require(isinstance(description, str) and len(description.split()) >= 5, "description")
    schema = tool.get("input_schema")
    report.require(isinstance(schema, dict) and schema.get("type") == "object", "schema", schema=schema)
    prop = (schema.get("properties") or {}).get("expression")
    report.require(isinstance(prop, dict) and prop.get("type") == "string", "expression")
    report.require("expression" in (schema.get("required") or []), "required")
    report.enter("sending_tool")
    client, _ = scripted.scripted_client([READY])
    client.messages.create(model=MODEL, max_tokens=64, tools=[tool], messages=GREETING)
    report.note("tool_accepted")


# --- 1.3 one_shot --------------------------------------------------------------------------------------

ONE_SHOT_SCENARIOS = [
    ("text_first", [reply(text("I'll use the calculator."), calculator_call("4823 * 1979"))], "9544717"),
    ("thinking_first", [reply(thinking("Multiplying big numbers: use the tool."), calculator_call("4823 * 1979"))],
     "9544717"),
    ("tool_only", [reply(calculator_call("12 * 12"))], "144"),
    ("tool_fails", [reply(text("Let me compute."), calculator_call("1 / 0"))], "Error: division by zero"),
    ("no_tool", [reply(text("That is 9,544,717."))], "That is 9,544,717."),
]


def check_one_shot(one_shot, report: Report) -> None:
    for key, replies, expected in ONE_SHOT_SCENARIOS:
        report.enter(key)
        shot = play(lambda client: one_shot(client, QUESTION), replies, call_limit=1)
        shot.reraise()
        report.require(shot.calls == 1, "one_request", count=shot.calls)
        names = [tool.get("name") for tool in shot.requests[0].get("tools", [])]
        report.require("calculator" in names, "no_calculator", names=names)
        report.require(shot.answer == expected, "one_shot_output", output=shot.answer, expected=expected)


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
