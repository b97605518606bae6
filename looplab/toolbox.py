"""Notebook 5's tools and the course's own version of its exercises: a toolbox behind one registry.

The two tools that join the calculator in notebook 5 come first, so that notebook 6's module (which
makes the calculator careless and the harness careful) takes the same ones from here; then the
references of notebook 5's exercises (looplab/course.py names each one).

Last come the two tools 5.3's check adds to the registry (CHECKED_REGISTRY, swapped in as TOOL_REGISTRY while 5.3 is
checked, as notebook 6's checks swap in looplab.robust.CHECKED_REGISTRY): what only a registry that changes after
run_tool is defined, or a tool that raises KeyError inside, shows of a dispatcher.

The weather tool is a canned table on purpose: the course runs offline, and what notebooks 5 and 6
teach is choosing and calling tools, not weather. Its table and texts are the series' own (stage 007
of the-ai-coffee/ai-agent-from-scratch), so the series' stage tests pass against the learner's
programs: an unknown city is an answer ("No weather data for ..."), not an error.
"""

from __future__ import annotations

# City (lower case, as looked up) -> its canned report.
WEATHER = {
    "paris": "18°C, partly cloudy",
    "london": "14°C, light rain",
    "tokyo": "24°C, clear skies",
}


def get_weather(city: str) -> str:
    """The canned weather for a city; a city the table lacks gets a sentence saying so."""
    report = WEATHER.get(city.strip().lower())
    if report is None:
        return f"No weather data for {city!r}."
    return f"Weather in {city}: {report}"


def count_letters(text: str, letter: str) -> str:
    """How many times a letter occurs in a text, ignoring case (notebook 4's look-ahead tool)."""
    if len(letter) != 1:
        return "Error: letter must be a single character"
    return str(text.lower().count(letter.lower()))


# --- notebook 5: the registry, dispatch by name, the model's choice ----------------------------------------
# The course's own version of each exercise of 05_toolbox.ipynb (the manifest's Exercise.reference), the same
# code as the solution notebook's.

# Imported here, below the two tools, which notebook 6's module takes from this one too:
from .loop import MAX_TOKENS, SYSTEM_PROMPT, WORDS, tool_result  # noqa: E402
from .model_id import MODEL  # noqa: E402
from .tools import CALCULATOR_TOOL, calculator  # noqa: E402

# Worded unlike the solution notebook's schemas on purpose: a registry equal to the course's, made in a cell
# that reads the course's tools (as every registry does), is taken for a copy of it (checks/core.py).
WEATHER_SCHEMA = {
    "description": (
        "Gets the current weather for a city: temperature in °C and the sky. Use it for any question about "
        "the weather somewhere. Knows only a few cities; for any other it says it has no data."
    ),
    "input_schema": {
        "type": "object",
        "properties": {"city": {"type": "string", "description": "The city's name, e.g. 'Paris'."}},
        "required": ["city"],
    },
}
COUNT_LETTERS_SCHEMA = {
    "description": (
        "Counts how many times a single letter occurs in a text, ignoring case. "
        "Use it for any question about the letters of a word or text."
    ),
    "input_schema": {
        "type": "object",
        "properties": {
            "text": {"type": "string", "description": "The word or text to look in."},
            "letter": {"type": "string", "description": "The one letter to count."},
        },
        "required": ["text", "letter"],
    },
}

# 5.1: one entry per tool, name -> the function that runs it and the schema the model reads. Adding a tool is
# one entry here: the definitions sent to the model and the dispatch both come from this dict.
TOOL_REGISTRY = {
    "calculator": {"function": calculator,
                   "schema": {key: CALCULATOR_TOOL[key] for key in ("description", "input_schema")}},
    "get_weather": {"function": get_weather, "schema": WEATHER_SCHEMA},
    "count_letters": {"function": count_letters, "schema": COUNT_LETTERS_SCHEMA},
}


def tool_definitions(registry: dict) -> list[dict]:
    """5.2: the tool definitions the API takes, derived from a registry, in its order: written once, never twice."""
    return [{"name": name, **entry["schema"]} for name, entry in registry.items()]


TOOLS = tool_definitions(TOOL_REGISTRY)


def run_tool(name: str, tool_input: dict) -> str:
    """5.3: dispatch by name: look the tool up in the registry and call its function with the model's arguments.

    An unknown name is answered with an error text, never an exception: the model asked for something the
    harness lacks, and the model is the one to tell. (Arguments that do not fit are notebook 6's.)
    """
    entry = TOOL_REGISTRY.get(name)
    if entry is None:
        return f"Error: unknown tool {name!r}"
    return entry["function"](**tool_input)


# 5.4: the tool_choice that makes the model call the weather tool, whatever the question.
FORCE_WEATHER = {"type": "tool", "name": "get_weather"}


def agent_turn(client, messages: list, max_iterations: int = 10, system: str = SYSTEM_PROMPT) -> str:
    """5.5: notebook 3's loop with the whole toolbox on offer: no tool named anywhere in it.

    Every reply is appended as it came; every call of a reply is answered, by its id, in one user message.
    """
    for _ in range(max_iterations):
        message = client.messages.create(
            model=MODEL, max_tokens=MAX_TOKENS, system=system, tools=TOOLS, messages=messages,
        )
        messages.append({"role": "assistant", "content": message.content})
        if message.stop_reason != "tool_use":
            return "".join(block.text for block in message.content if block.type == "text")
        messages.append({"role": "user", "content": [
            tool_result(block, run_tool(block.name, block.input))
            for block in message.content if block.type == "tool_use"]})
    raise RuntimeError(WORDS("still_asking", max_iterations=max_iterations))  # notebook 2's words (texts/loop.toml)


# --- what the checks of 5.3 play ------------------------------------------------------------------------------
# Two tools no conversation of the notebook calls (they are not in TOOLS), each showing one way a dispatcher can go
# wrong that the course's three tools cannot show.

def reverse_text(text: str) -> str:
    """A tool the learner's registry does not hold: the check puts it in TOOL_REGISTRY after run_tool was defined.
    A run_tool that looks the name up at each call runs it; one working from what it took once (functions copied out
    of the registry, the registry bound as a default argument) answers "unknown tool"."""
    return text[::-1]


PRICES = {"coffee": "2.50 EUR", "tea": "2.00 EUR"}


def get_price(item: str) -> str:
    """A registered tool that raises KeyError from inside for an item it lacks: a tool failing (notebook 6's
    subject), never an unknown name. A run_tool that catches KeyError around the call to mean "not registered"
    calls it unknown."""
    return f"{item}: {PRICES[item]}"


def _checked(function, description: str, *parameters: str) -> dict:
    """An entry of the check's registry: the function, and a schema of its own (every parameter a required string)."""
    properties = {name: {"type": "string"} for name in parameters}
    return {"function": function, "schema": {"description": description, "input_schema": {
        "type": "object", "properties": properties, "required": list(parameters)}}}


# While 5.3 is checked, the notebook's TOOL_REGISTRY is this one (looplab/course.py: the exercise's `checked_with`),
# in-process and in the grader's kernel alike: the course's three tools, in its order, then the two above.
# Its schemas are the check's own, not TOOL_REGISTRY's (run_tool reads only the functions): made from no exercise's
# reference, it is in the grader's edition from the start (looplab/grade/shared/withholding.py), so it is swapped in
# whatever the order of the notebook's check cells. Made from TOOL_REGISTRY, it would wait for 5.1's judgement, and a
# notebook that checks 5.1 after 5.3 would have its right run_tool judged with its own registry, which lacks them.
CHECKED_REGISTRY = {
    "calculator": _checked(calculator, "Arithmetic with + - * / and parentheses.", "expression"),
    "get_weather": _checked(get_weather, "The weather in a city.", "city"),
    "count_letters": _checked(count_letters, "How many times a letter occurs in a text.", "text", "letter"),
    "reverse_text": _checked(reverse_text, "Writes a text backwards.", "text"),
    "get_price": _checked(get_price, "The price of one item of the menu.", "item"),
}
