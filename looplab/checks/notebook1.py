"""Checks for notebook 1, one tool call: the calculator, its tool definition, one_shot."""

import ast
import inspect
import textwrap

from .. import scripted
from ..catalogue import catalogue
from ..client import MODEL
from ..scripted import calculator as calc, reply, text, thinking
from .core import NOT_WRITTEN, Report, Scenario, play

QUESTION = "What is 4823 × 1979?"
GREETING = [{"role": "user", "content": "Hello"}]  # sent with the learner's tool, to see the API accept it
READY = reply(text("Ready."))
TEXTS, HINTS = catalogue(__file__)  # the words of these checks: texts/notebook1.toml


# --- 1.1 calculator ------------------------------------------------------------------------------------

ARITHMETIC = [
    ("4823 * 1979", 9544717), ("2 + 3 * 4", 14), ("(2 + 3) * 4", 20), ("-7 + +2", -5), ("7 / 2", 3.5),
    ("0.1 + 0.2", 0.1 + 0.2), ("  12 - 4 - 3 ", 5),
]
# Each must come back as an error text: never a number, never an exception. The key names it in TEXTS.
REFUSED = [
    ("1 / 0", "division"), ("__import__('os').getpid()", "call"), ("(1).real", "attribute"), ("x + 1", "name"),
    ("2 ** 3", "power"), ("9 ** 9 ** 9", "huge_power"), ("'4' * 3", "string"), ("4823 *", "unfinished"),
    ("True + 1", "boolean"), ("1e308 * 10", "overflow"),
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
    named = {node.func.id for node in ast.walk(tree) if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)}
    return bool(named & {"eval", "exec", "compile"})


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

ONE_SHOT_SCENARIOS = [  # one reply each: one_shot may call the model once
    Scenario("text_first", [reply(text("I'll use the calculator."), calc("4823 * 1979"))], expected="9544717"),
    Scenario("thinking_first", [reply(thinking("Multiplying big numbers: use the tool."), calc("4823 * 1979"))],
             expected="9544717"),
    Scenario("tool_only", [reply(calc("12 * 12"))], expected="144"),
    Scenario("tool_fails", [reply(text("Let me compute."), calc("1 / 0"))], expected="Error: division by zero"),
    Scenario("no_tool", [reply(text("That is 9,544,717."))], expected="That is 9,544,717."),
]


def check_one_shot(one_shot, report: Report) -> None:
    for scenario in ONE_SHOT_SCENARIOS:
        report.enter(scenario.key)
        shot = play(lambda client: one_shot(client, QUESTION), scenario)
        shot.reraise()
        report.require(shot.calls == 1, "one_request", count=shot.calls)
        names = [tool.get("name") for tool in shot.requests[0].get("tools", [])]
        report.require("calculator" in names, "no_calculator", names=names)
        report.require(shot.answer == scenario.expected, "one_shot_output", output=shot.answer,
                       expected=scenario.expected)


CHECKERS = {"1.1": check_calculator, "1.2": check_tool_definition, "1.3": check_one_shot}
