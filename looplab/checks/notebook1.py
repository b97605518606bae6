"""Checks for notebook 1, one tool call: the calculator, its tool definition, one_shot."""

import ast
import inspect
import textwrap

from .. import scripted
from ..catalogue import catalogue
from ..loop import MAX_TOKENS
from ..model_id import MODEL
from ..scripted import calculator as calc, reply, said, text, thinking
from ..tools import ERROR_PREFIX
from .reaching import reaches
from .source import parsed
from .core import NOT_WRITTEN, Report, Scenario, play

# Sent with the learner's tool, to see the API accept it (in the check's language: `spoken` when sent).
GREETING = [{"role": "user", "content": said("Hello", fr="Bonjour")}]
READY = reply(text("Ready.", fr="Prêt."))
TEXTS, HINTS = catalogue(__file__)  # the words of these checks: texts/notebook1.toml


# --- 1.1 calculator ------------------------------------------------------------------------------------

# Each must come back as str() of the Python value, exactly: not rounded, not reformatted ("2.0" stays "2.0").
ARITHMETIC = [
    ("4823 * 1979", 9544717), ("123456789 * 987654321", 121932631112635269), ("2 + 3 * 4", 14),
    ("(2 + 3) * 4", 20), ("-7 + +2", -5), ("7 / 2", 3.5), ("8 / 4", 2.0), ("0.1 + 0.2", 0.1 + 0.2),
    ("  12 - 4 - 3 ", 5),
]
# Each must come back as an error text starting with ERROR_PREFIX: never a number, never an exception.
# The key names it in TEXTS.
REFUSED = [
    ("1 / 0", "division"), ("__import__('os').getpid()", "call"), ("(1).real", "attribute"), ("x + 1", "name"),
    ("2 ** 3", "power"), ("9 ** 9 ** 9", "huge_power"), ("'4' * 3", "string"), ("4823 *", "unfinished"),
    ("True + 1", "boolean"), ("1e308 * 10", "overflow"), ("-1e308 - 1e308", "negative_overflow"),
    ("9" * 400 + " / 3", "huge_division"), ("-" * 5000 + "1", "too_deep"),
]
SHOWN_IN_FULL = 60  # characters of an expression a message quotes whole; a longer one is shown by its ends


def _number(output) -> float | None:
    try:
        return float(output)
    except (TypeError, ValueError):
        return None


def _reformatted(output, expected) -> bool:
    """Is `output` the right number written another way (rounded a little, "9544717.0", "9,544,717")?"""
    value = _number(output.replace(",", "")) if isinstance(output, str) else None
    return value is not None and abs(value - expected) <= 1e-9 * max(1.0, abs(expected))


def _shown(report: Report, expression: str) -> str:
    """The expression as a message quotes it: whole, or its two ends and its length when it is long."""
    if len(expression) <= SHOWN_IN_FULL:
        return repr(expression)
    return report.words("long_expression", start=repr(expression[:20])[:-1], end=repr(expression[-10:])[1:],
                        length=len(expression))


EVAL = ("builtins.eval", "builtins.exec", "builtins.compile")


def _calls_eval(function, cell: str | None = None, cells: list[str] | None = None) -> bool:
    """Does the calculator reach eval, exec or compile? Reading the code, so comments don't count.

    With the notebook's cells (its `In`; under the grader, the notebook file: the function itself is in
    the kernel), by any path the source spells (`getattr(builtins, "ev" + "al")` too: reaching.py), else
    in the function's definition in its cell, else in what `inspect` finds."""
    if cells is not None:
        return reaches(cells, "calculator", EVAL)
    try:
        tree = parsed(cell if cell is not None else textwrap.dedent(inspect.getsource(function)))
    except (OSError, TypeError):  # no source to read (a builtin, a function made at run time)
        return False
    if tree is None:
        return False
    if cell is not None:
        tree = next((node for node in tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
                     and node.name == getattr(function, "__name__", None)), tree)
    named = {node.func.id for node in ast.walk(tree) if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)}
    return bool(named & {"eval", "exec", "compile"})


def check_calculator(calculator, report: Report) -> None:
    report.require_function(calculator, "calculator")
    for expression, value in ARITHMETIC:
        report.enter("calculator_call", expression=expression)
        output = calculator(expression)
        said = dict(expression=expression, output=output, expected=str(value))
        report.require(isinstance(output, str), "not_text", kind=type(output).__name__, **said)
        if output != str(value):
            raise report.failure("not_exact" if _reformatted(output, value) else "wrong_value", **said)
    report.note("right_answers", count=len(ARITHMETIC))
    report.situation = None
    report.require(not _calls_eval(calculator, report.cell, report.cells), "no_eval")
    for expression, what in REFUSED:
        refusal = dict(expression=_shown(report, expression), what=report.words(what))
        try:
            output = calculator(expression)
        except Exception as error:
            raise report.failure("refusal_raised", kind=type(error).__name__, error=str(error), **refusal)
        report.require(isinstance(output, str) and _number(output) is None, "not_refused", output=output, **refusal)
        report.require(output.startswith(ERROR_PREFIX), "no_prefix", output=output, prefix=ERROR_PREFIX, **refusal)
    report.note("refuses", count=len(REFUSED), prefix=ERROR_PREFIX)


# --- 1.2 CALCULATOR_TOOL -----------------------------------------------------------------------------------

def check_tool_definition(tool, report: Report) -> None:
    if tool == {}:
        failure = report.failure("empty_tool")
        failure.kind = NOT_WRITTEN
        raise failure
    report.require(isinstance(tool, dict), "tool_dict", kind=type(tool).__name__)
    report.require(tool.get("name") == "calculator", "tool_name", name=tool.get("name"))
    description = tool.get("description")
    report.require(isinstance(description, str) and len(description.split()) >= 5, "description",
                   description=description)
    schema = tool.get("input_schema")
    report.require(isinstance(schema, dict) and schema.get("type") == "object", "schema", schema=schema)
    properties = schema.get("properties")
    prop = properties.get("expression") if isinstance(properties, dict) else None
    report.require(isinstance(prop, dict) and prop.get("type") == "string", "expression", properties=properties)
    required = schema.get("required")
    listed = isinstance(required, (list, tuple)) and "expression" in required  # a tuple is sent as a list too
    report.require(listed, "required", required=required)
    report.enter("sending_tool")
    client, _ = scripted.scripted_client([READY])
    client.messages.create(model=MODEL, max_tokens=64, tools=[tool], messages=scripted.spoken(GREETING))
    report.note("tool_accepted")


# --- 1.3 one_shot --------------------------------------------------------------------------------------

# One reply each (one_shot may call the model once), and each its own question (`given`): the first is
# the notebook's, the others it never shows, so a one_shot must send the question it is handed. The words are
# said in the check's language, chosen at each check (the grader judges both languages in one process): the
# passed lines quote the model's words, and a French learner's model speaks French, as the French recordings do.
# A tool's result ("Error: division by zero") stays English in both: the series' tests read it.
ONE_SHOT_SCENARIOS = [
    Scenario("text_first", [reply(text("I'll use the calculator.", fr="Je vais utiliser la calculatrice."),
                                  calc("4823 * 1979"))],
             given=said("What is 4823 × 1979?", fr="Combien font 4823 × 1979 ?"), expected="9544717"),
    Scenario("thinking_first", [reply(thinking("Hours in a year: use the tool.",
                                               fr="Nombre d'heures dans une année : j'utilise l'outil."),
                                      calc("365 * 24"))],
             given=said("How many hours are there in 365 days?", fr="Combien d'heures y a-t-il dans 365 jours ?"),
             expected="8760"),
    Scenario("tool_only", [reply(calc("12 * 12"))], given=said("What is 12 squared?", fr="Combien fait 12 au carré ?"),
             expected="144"),
    Scenario("tool_fails", [reply(text("Let me compute.", fr="Je calcule."), calc("1 / 0"))],
             given=said("What is 1 divided by 0?", fr="Combien fait 1 divisé par 0 ?"),
             expected="Error: division by zero"),
    Scenario("no_tool", [reply(text("Yes: 7 is a prime number.", fr="Oui, 7 est un nombre premier."))],
             given=said("Is 7 a prime number?", fr="7 est-il un nombre premier ?"),
             expected=said("Yes: 7 is a prime number.", fr="Oui, 7 est un nombre premier.")),
    Scenario("thinking_then_words", [reply(thinking("Compare 2/3 with 0.6.", fr="Je compare 2/3 et 0,6."),
                                           text("2/3 is larger than 0.6.", fr="2/3 est plus grand que 0,6."))],
             given=said("Which is larger, 2/3 or 0.6?", fr="Lequel est le plus grand, 2/3 ou 0,6 ?"),
             expected=said("2/3 is larger than 0.6.", fr="2/3 est plus grand que 0,6.")),
]


def _asks(messages, question: str) -> bool:
    """One user message holding the question: as a string, or as one text block."""
    return messages in ([{"role": "user", "content": question}],
                        [{"role": "user", "content": [{"type": "text", "text": question}]}])


def check_the_request(request: dict, question: str, report: Report) -> None:
    """The request settings the exercise names: MODEL, max_tokens=1024, TOOLS, and the question it was handed."""
    report.require(request.get("model") == MODEL, "request_model", model=request.get("model"), expected=MODEL)
    report.require(request.get("max_tokens") == MAX_TOKENS, "request_max_tokens",
                   max_tokens=request.get("max_tokens"), expected=MAX_TOKENS)
    names = [tool.get("name") for tool in request.get("tools", [])]
    report.require("calculator" in names, "no_calculator", names=names)
    report.require(_asks(request.get("messages"), question), "request_question", question=question,
                   messages=request.get("messages"), expected=[{"role": "user", "content": question}])


def check_one_shot(one_shot, report: Report) -> None:
    report.require_function(one_shot, "one_shot")
    for scenario in ONE_SHOT_SCENARIOS:
        report.enter(scenario.key)
        shot = play(lambda client: one_shot(client, scenario.given), scenario)
        shot.reraise()
        report.require(shot.calls == 1, "one_request", count=shot.calls)
        check_the_request(shot.requests[0], scenario.given, report)
        report.require(shot.answer == scenario.expected, "one_shot_output", report.text(scenario.key).hint,
                       output=shot.answer, expected=scenario.expected)  # the hint for this scenario's case
    report.note("request_settings", model=MODEL, max_tokens=MAX_TOKENS)


CHECKERS = {"1.1": check_calculator, "1.2": check_tool_definition, "1.3": check_one_shot}
