"""Checks for notebook 5, a toolbox: the registry, the definitions derived from it, dispatch by name,
the tool_choice that forces a tool, and agent_turn with every tool on offer.

What the notebook asks that behaviour alone cannot show is that nothing but the registry names a tool:
a dispatcher or a loop with `if name == "calculator"` answers the course's three tools as well as a
lookup does. So run_tool and agent_turn are also read (their definition in the notebook's cells, or the
function's source), and fail when they write a registered tool's name. agent_turn is played by the
harness of notebooks 2 and 3 (turns.py) with the toolbox on offer.

While run_tool is checked, its TOOL_REGISTRY holds the course's three tools and two of the check's own
(looplab.toolbox.CHECKED_REGISTRY, swapped in by 5.3's `checked_with`: course.py), in-process and under the grader
alike: one its registry did not hold when run_tool was defined (a run_tool working from functions copied out of the
registry once, or the registry bound as a default argument, calls it unknown), and one that raises KeyError inside
(a run_tool catching KeyError around the call to mean "not registered" calls it unknown). What run_tool does shows
both, whatever its code looks like.
"""

from __future__ import annotations

import ast
import copy
import inspect
import textwrap
from typing import Any

from ..catalogue import catalogue
from ..model_id import MODEL
from ..rules import check_request
from ..scripted import calculator as calc, reply, said, spoken, text, thinking, tool_use
from ..toolbox import COUNT_LETTERS_SCHEMA, TOOL_REGISTRY, WEATHER_SCHEMA, count_letters, get_weather, run_tool
from ..toolbox import get_price, reverse_text
from ..toolbox import tool_definitions as course_definitions
from ..tools import CALCULATOR_TOOL, calculator
from . import turns
from .core import NOT_WRITTEN, Failure, Report, Scenario
from .difference import first_difference
from ..program_source import Statement
from .source import parsed
from .turns import DEFAULT_CAP, agent_turn_checker, never_stopping

OWN_TEXTS, HINTS = catalogue(__file__)  # texts/notebook5.toml
TEXTS = {**turns.TEXTS, **OWN_TEXTS}  # the harness's rows, in this notebook's words where it has its own
# Sent with the learner's definitions, to see the API accept them (in the check's language: `spoken` when sent).
GREETING = [{"role": "user", "content": said("Hello", fr="Bonjour")}]
SCHEMA_FIELDS = {"description", "input_schema"}
UNKNOWN_TOOL = "Error: unknown tool"  # how the series' run_tool answers a name it lacks (its stage 007 tests)
COURSE_TOOL = "CALCULATOR_TOOL"  # notebook 1's definition, the calculator's schema without its name
CALCULATOR_SCHEMA_PATH = "TOOL_REGISTRY['calculator']['schema']"


def kind_of(value: Any) -> str:
    """The type a message names: "function" for anything callable (in the grader, a proxy of the learner's)."""
    return "function" if callable(value) else type(value).__name__


def request_with(tools: Any = None, tool_choice: Any = None) -> dict:
    body: dict = {"model": MODEL, "max_tokens": 64, "messages": spoken(GREETING)}
    if tools is not None:
        body["tools"] = tools
    if tool_choice is not None:
        body["tool_choice"] = tool_choice
    return body


def names_a_tool(function: Any, name: str, report: Report) -> str | None:
    """The first registered tool's name the function's code writes as a string, or None (docstrings aside).

    Read from the cell that defined it (the notebook's, under the grader too), else from the function's source."""
    source = report.cell
    if source is None:
        try:
            source = textwrap.dedent(inspect.getsource(function))
        except (OSError, TypeError):
            return None
    tree = parsed(source)
    if tree is None:
        return None
    body = next((node for node in tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
                 and node.name == name), tree)
    docstrings = {id(node.body[0].value) for node in ast.walk(body)
                  if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.body
                  and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)}
    for node in ast.walk(body):
        if isinstance(node, ast.Constant) and id(node) not in docstrings and node.value in TOOL_REGISTRY:
            return node.value
    return None


# --- 5.1 TOOL_REGISTRY ------------------------------------------------------------------------------------

# (tool, its arguments as the model sends them, what its function must return): the series' texts.
TOOL_CALLS = [
    ("calculator", {"expression": "4823 * 1979"}, calculator("4823 * 1979")),
    ("calculator", {"expression": "1 / 0"}, calculator("1 / 0")),
    ("get_weather", {"city": "Paris"}, get_weather("Paris")),
    ("get_weather", {"city": "Atlantis"}, get_weather("Atlantis")),
    ("count_letters", {"text": "strawberry", "letter": "r"}, count_letters("strawberry", "r")),
    ("count_letters", {"text": "Mississippi", "letter": "S"}, count_letters("Mississippi", "S")),
]
NAMES = ["calculator", "get_weather", "count_letters"]  # the prose's three tools, in its order
# Each tool's parameters, as its input_schema names them: all required, each a string (the functions take texts).
PARAMETERS = {"calculator": ["expression"], "get_weather": ["city"], "count_letters": ["text", "letter"]}
PARAMETER_TYPE = "string"
# The course's CALCULATOR_TOOL as looplab.tools defines it, kept when the checks are imported (before any cell of the
# notebook's ran): a cell that changes the course's own dict (`CALCULATOR_TOOL.pop("name")`) shows against it.
PRISTINE_CALCULATOR_TOOL = copy.deepcopy(CALCULATOR_TOOL)
CALCULATOR_SCHEMA = {key: value for key, value in PRISTINE_CALCULATOR_TOOL.items() if key != "name"}
def not_written_yet(value, key: str, report: Report) -> None:
    """The exercise's dict as the learner receives it, still empty: "not written yet", not a mistake."""
    if isinstance(value, dict) and not value:
        failure = report.failure(key)
        failure.kind = NOT_WRITTEN
        raise failure


def changes_the_course_tool(cells: list[str] | None) -> str | None:
    """The first line of the first top-level statement of the notebook's cells that changes the course's
    CALCULATOR_TOOL in place (a method that changes it, `del` or an assignment into it, itself or in a function it
    defines), or None. Read in the cells, as program_source.py reads them for the programs, so that the grader,
    whose CALCULATOR_TOOL no kernel changed, finds it too; a notebook that binds CALCULATOR_TOOL itself changes its
    own."""
    read = [Statement.read((0, index), node, cell) for cell in cells or [] if isinstance(cell, str)
            for tree in [parsed(cell)] if tree is not None for index, node in enumerate(tree.body)]
    if any(COURSE_TOOL in statement.binds and not isinstance(statement.node, (ast.Import, ast.ImportFrom))
           for statement in read):  # an import binds the course's own
        return None
    return next((ast.unparse(statement.node).splitlines()[0] for statement in read
                 if COURSE_TOOL in (statement.now.changes | statement.later.changes)), None)


def check_registry(registry, report: Report) -> None:
    not_written_yet(registry, "empty_registry_given", report)
    report.require(isinstance(registry, dict), "registry_not_dict", kind=kind_of(registry))
    difference = first_difference(CALCULATOR_TOOL, PRISTINE_CALCULATOR_TOOL, COURSE_TOOL)
    report.require(difference is None, "calculator_tool_changed", difference=str(difference))
    statement = changes_the_course_tool(report.cells)
    report.require(statement is None, "calculator_tool_changed_by", statement=statement)
    names = list(registry)
    report.require(all(isinstance(name, str) for name in names), "registry_keys", names=names)
    for name in NAMES:
        report.require(name in registry, "registry_lacks", name=name, names=names)
    extra = [name for name in names if name not in NAMES]
    report.require(not extra, "registry_extra", extra=extra, names=names)
    report.require(names == NAMES, "registry_order", names=names, expected=NAMES)
    for name, entry in registry.items():
        report.require(isinstance(entry, dict) and set(entry) == {"function", "schema"}, "entry_fields", name=name,
                       fields=sorted(map(str, entry)) if isinstance(entry, dict) else kind_of(entry))
        report.require(callable(entry["function"]), "entry_function", name=name,
                       kind=type(entry["function"]).__name__)
        schema = entry["schema"]
        report.require(isinstance(schema, dict) and set(schema) == SCHEMA_FIELDS, "schema_fields", name=name,
                       fields=sorted(map(str, schema)) if isinstance(schema, dict) else kind_of(schema))
        description = schema["description"]
        report.require(isinstance(description, str) and description.strip() != "", "no_description", name=name)
    report.note("registry_shape", count=len(registry))
    violation = check_request(request_with(course_definitions(registry)))
    report.require(violation is None, "registry_rejected", message=violation.message if violation else "")
    difference = first_difference(registry["calculator"]["schema"], CALCULATOR_SCHEMA, CALCULATOR_SCHEMA_PATH)
    report.require(difference is None, "calculator_schema", difference=str(difference))
    for name, parameters in PARAMETERS.items():
        said = registry[name]["schema"]["input_schema"]  # an object: the API took it
        properties = said.get("properties") or {}
        report.require(sorted(map(str, properties)) == sorted(parameters), "schema_arguments", name=name,
                       properties=sorted(map(str, properties)), expected=parameters)
        required = said.get("required") or []
        report.require(sorted(set(required)) == sorted(parameters), "schema_required", name=name,
                       required=list(required), expected=parameters)
        for parameter in parameters:
            given = properties[parameter]
            kind = given.get("type") if isinstance(given, dict) else None
            report.require(kind == PARAMETER_TYPE, "schema_types", name=name, parameter=parameter, kind=kind)
    report.note("schemas_ok")
    for name, arguments, expected in TOOL_CALLS:
        report.enter("tool_call", name=name, arguments=arguments)
        output = registry[name]["function"](**arguments)
        report.require(output == expected, "tool_output", output=output, expected=expected)
    report.situation = None
    report.note("registry_runs", count=len(TOOL_CALLS))


# --- 5.2 tool_definitions ---------------------------------------------------------------------------------

def _shout(text: str) -> str:
    return text.upper()


def _repeat(text: str, times: int) -> str:
    return text * times


# Registries the check makes up, so that definitions written by hand beside the course's registry show.
SHOUT = {"description": "Writes a text in capitals.",
         "input_schema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}}
REPEAT = {"description": "Repeats a text a number of times.",
          "input_schema": {"type": "object", "properties": {"text": {"type": "string"}, "times": {"type": "integer"}},
                           "required": ["text", "times"]}}
DEFINITION_SCENARIOS = [  # given: the registry tool_definitions is handed
    Scenario("the_course_registry", given=TOOL_REGISTRY),
    Scenario("made_up_registry", given={"shout": {"function": _shout, "schema": SHOUT},
                                        "repeat": {"function": _repeat, "schema": REPEAT}}),
    Scenario("reversed_registry", given={"repeat": {"function": _repeat, "schema": REPEAT},
                                         "get_weather": {"function": get_weather, "schema": WEATHER_SCHEMA},
                                         "count_letters": {"function": count_letters, "schema": COUNT_LETTERS_SCHEMA}}),
    Scenario("one_tool", given={"shout": {"function": _shout, "schema": SHOUT}}),
    Scenario("empty_registry", given={}),
]


def check_tool_definitions(tool_definitions, report: Report) -> None:
    report.require_function(tool_definitions, "tool_definitions")
    for scenario in DEFINITION_SCENARIOS:
        report.enter(scenario.key)
        registry = {name: {"function": entry["function"], "schema": copy.deepcopy(entry["schema"])}
                    for name, entry in scenario.given.items()}
        got = tool_definitions(registry)
        expected = course_definitions(scenario.given)
        report.require(isinstance(got, list), "definitions_not_list", kind=type(got).__name__)
        names = [d.get("name") if isinstance(d, dict) else d for d in got]
        report.require(names == list(scenario.given), "definitions_names", names=names, expected=list(scenario.given))
        for definition, wanted in zip(got, expected):
            if definition != wanted:
                extra = sorted(set(map(str, definition)) - set(wanted))
                raise report.failure("definition_fields" if extra else "definition_differs", name=wanted["name"],
                                     extra=extra, got=definition, expected=wanted)
        report.require(registry == scenario.given, "registry_changed")
        if got:
            violation = check_request(request_with(got))
            report.require(violation is None, "definitions_rejected", message=violation.message if violation else "")
        report.note("definitions_ok", count=len(got))


# --- 5.3 run_tool -----------------------------------------------------------------------------------------

DISPATCH = TOOL_CALLS + [
    ("get_weather", {"city": "Tokyo"}, get_weather("Tokyo")),
    # the input's keys in another order than the function's parameters: only keywords find each its parameter
    ("count_letters", {"letter": "r", "text": "strawberry"}, count_letters(text="strawberry", letter="r")),
]
UNKNOWN_NAMES = ["teleporter", "get_time", "Calculator"]
# Registered tools handed arguments that do not fit (notebook 6's subject): whatever run_tool does then, raise or
# answer, it must not call them unknown.
KNOWN_BUT_FAILING = [("get_weather", {"town": "Paris"}), ("calculator", {})]
# Tools the check put in TOOL_REGISTRY after run_tool was defined (looplab.toolbox.CHECKED_REGISTRY), with what they
# answer: a run_tool that looks the name up at each call runs them.
ADDED_LATER = [("reverse_text", {"text": "stressed"}, reverse_text("stressed")),
               ("get_price", {"item": "coffee"}, get_price("coffee"))]
KEY_ERROR_INSIDE = ("get_price", {"item": "cake"})  # a registered tool that raises KeyError inside: not unknown


def said_unknown(output: Any) -> bool:
    """Did run_tool answer as it does for a name the registry lacks?"""
    return isinstance(output, str) and output.startswith(UNKNOWN_TOOL)


def check_run_tool(run_tool_, report: Report) -> None:
    report.require_function(run_tool_, "run_tool")
    for name, arguments, expected in DISPATCH:
        report.enter("tool_call", name=name, arguments=arguments)
        output = run_tool_(name, dict(arguments))
        report.require(isinstance(output, str), "dispatch_not_text", kind=type(output).__name__, output=output,
                       expected=expected)
        report.require(output == expected, "dispatch_output", output=output, expected=expected)
    report.note("dispatch_ok", count=len(DISPATCH))
    for name in UNKNOWN_NAMES:
        report.enter("unknown_name", name=name)
        output = run_tool_(name, {})
        report.require(isinstance(output, str) and output.startswith(UNKNOWN_TOOL) and name in output,
                       "unknown_answer", output=output, expected=run_tool(name, {}))
    for name, arguments in KNOWN_BUT_FAILING:
        report.enter("tool_call", name=name, arguments=arguments)
        try:
            output = run_tool_(name, dict(arguments))
        except Failure:
            raise
        except Exception:  # a tool that raises is notebook 6's subject: here it may raise
            continue
        report.require(not said_unknown(output), "known_taken_for_unknown", name=name, output=output)
    report.situation = None
    report.note("unknown_ok")
    written = names_a_tool(run_tool_, "run_tool", report)
    report.require(written is None, "dispatch_names_a_tool", tool=written)
    try:
        _the_registry_as_it_is_now(run_tool_, report)
    except Failure as failure:  # tools the check added: the verdict is the course's code, if it was called
        failure.course_code_blind = True  # (the course's run_tool reads its own registry, never the learner's)
        raise


def _the_registry_as_it_is_now(run_tool_, report: Report) -> None:
    """The tools the check added to TOOL_REGISTRY: each run, and a KeyError raised inside one never an unknown name."""
    for name, arguments, expected in ADDED_LATER:
        report.enter("tool_call", name=name, arguments=arguments)
        output = run_tool_(name, dict(arguments))
        report.require(not said_unknown(output), "registry_copied", name=name, output=output)
        report.require(output == expected, "dispatch_output", output=output, expected=expected)
    name, arguments = KEY_ERROR_INSIDE
    report.enter("tool_call", name=name, arguments=arguments)
    try:
        output = run_tool_(name, dict(arguments))
    except Failure:
        raise
    except Exception:  # the tool's KeyError, let through: a tool that raises is notebook 6's subject
        output = None
    report.require(not said_unknown(output), "key_error_inside", name=name, output=output)
    report.situation = None
    report.note("registry_followed", count=len(ADDED_LATER))


# --- 5.4 FORCE_WEATHER ------------------------------------------------------------------------------------

def check_force_weather(choice, report: Report) -> None:
    not_written_yet(choice, "empty_choice", report)
    report.require(isinstance(choice, dict), "choice_not_dict", kind=kind_of(choice))
    violation = check_request(request_with(course_definitions(TOOL_REGISTRY), choice))
    report.require(violation is None, "choice_rejected", message=violation.message if violation else "")
    kind = choice.get("type")
    report.require(kind != "any", "choice_any")
    report.require(kind == "tool", "choice_not_forced", kind=kind)
    report.require(choice.get("name") in TOOL_REGISTRY, "choice_unknown_tool", name=choice.get("name"),
                   names=list(TOOL_REGISTRY))
    report.require(choice.get("name") == "get_weather", "choice_other_tool", name=choice.get("name"))
    report.note("choice_ok")


# --- 5.5 agent_turn ---------------------------------------------------------------------------------------

QUESTION = {"role": "user", "content": said("Help me plan my day in Paris.",
                                            fr="Aidez-moi à organiser ma journée à Paris.")}
HISTORY = [QUESTION]
OWN_SYSTEM = said("You are a travel assistant. Answer in one short sentence.",  # a system prompt the caller passes
                  fr="Vous êtes un assistant de voyage. Répondez en une phrase courte.")


def weather(city: str, id: str | None = None) -> dict:
    return tool_use("get_weather", {"city": city}, id=id)


def letters(word: str, letter: str) -> dict:
    return tool_use("count_letters", {"text": word, "letter": letter})


AGENT_SCENARIOS = [  # asked after QUESTION; each answer is the last reply's text
    Scenario("weather_call", [reply(weather("Paris")),
                              reply(text("18°C and partly cloudy: take a light jacket.",
                                         fr="18 °C et un ciel partiellement nuageux : prenez une veste légère."))],
             HISTORY),
    Scenario("letters_call", [reply(text("Let me count.", fr="Je compte."), letters("strawberry", "r")),
                              reply(text("There are 3 r's in 'strawberry'.",
                                         fr="Il y a 3 r dans « strawberry »."))], HISTORY),
    Scenario("two_tools", [reply(text("Both at once.", fr="Les deux d'un coup."), weather("Tokyo"), calc("365 * 24")),
                           reply(text("Tokyo has clear skies; a year has 8,760 hours.",
                                      fr="Ciel dégagé à Tokyo ; une année compte 8 760 heures."))], HISTORY),
    Scenario("three_tools", [reply(letters("Mississippi", "s"), calc("18 * 9 / 5 + 32"), weather("London")),
                             reply(text("Now Paris too.", fr="Maintenant, Paris aussi."), weather("Paris")),
                             reply(text("4 s's, 64.4 °F, light rain in London and clouds in Paris.",
                                        fr="4 s, 64,4 °F, pluie légère à Londres et nuages à Paris."))], HISTORY),
    Scenario("unknown_city", [reply(thinking("Weather question: use the tool.",
                                             fr="Une question de météo : j'utilise l'outil."), weather("Atlantis")),
                              reply(text("I have no weather for Atlantis.",
                                         fr="Je n'ai pas de météo pour l'Atlantide."))], HISTORY),
    Scenario("unknown_tool_call", [reply(tool_use("get_time", {"city": "Paris"}), weather("Paris")),
                                   reply(text("I can't tell the time, but Paris is partly cloudy.",
                                              fr="Je ne peux pas donner l'heure, mais le ciel est partiellement "
                                                 "nuageux à Paris."))], HISTORY),
    Scenario("no_tool", [reply(text("Start with a walk along the Seine, then a museum.",
                                    fr="Commencez par une promenade le long de la Seine, puis visitez un musée."))],
             HISTORY),
    Scenario("same_tool_twice", [reply(text("Both cities.", fr="Les deux villes."), weather("Paris"),
                                       weather("London")),
                                 reply(text("Paris is partly cloudy; London has light rain.",
                                            fr="Ciel partiellement nuageux à Paris ; pluie légère à Londres."))],
             HISTORY),
    Scenario("words_not_first", [reply(weather("Paris")),
                                 reply(thinking("The tool says 18°C and clouds.",
                                                fr="L'outil indique 18 °C et des nuages."),
                                       text("18°C and cloudy in Paris. ", fr="18 °C et ciel nuageux à Paris. "),
                                       text("Take a light jacket.", fr="Prenez une veste légère."))], HISTORY),
    # Cut off in the middle of a call: its input may be incomplete, so it must not run, and the turn ends there.
    Scenario("cut_off", [reply(weather("Paris")),
                         reply(text("Paris is cloudy. Let me check London too:",
                                    fr="Le ciel est nuageux à Paris. Je regarde aussi Londres :"), weather("London"),
                               stop_reason="max_tokens")], HISTORY),
    Scenario("own_system", [reply(weather("Tokyo")),
                            reply(text("Clear skies in Tokyo: no umbrella needed.",
                                       fr="Ciel dégagé à Tokyo : pas besoin de parapluie."))],
             HISTORY, options={"system": OWN_SYSTEM}),
    *(never_stopping(cap, call_limit=(cap or DEFAULT_CAP) + 1) for cap in (3, None)),
]
_play_agent_turn = agent_turn_checker(AGENT_SCENARIOS)


def check_agent_turn(agent_turn, report: Report) -> None:
    report.require_function(agent_turn, "agent_turn")
    with turns.toolbox(run_tool, tuple(TOOL_REGISTRY)):
        _play_agent_turn(agent_turn, report)
    written = names_a_tool(agent_turn, "agent_turn", report)
    report.require(written is None, "loop_names_a_tool", tool=written)


CHECKERS = {"5.1": check_registry, "5.2": check_tool_definitions, "5.3": check_run_tool,
            "5.4": check_force_weather, "5.5": check_agent_turn}
