"""The checks of notebook 5 (a toolbox): they pass on good code written several ways and fail, saying why, on
typical mistakes; the registry's functions are judged the grader's way too (the channel carries them)."""


import ast
import copy
import dataclasses
import io
from pathlib import Path

import nbformat
import pytest

import looplab
from looplab import toolbox, tools
from looplab.checks import core, run_check
from looplab.client import MODEL
from looplab.course import COURSE, Course
from looplab.loop import SYSTEM_PROMPT, tool_result
from looplab.rules import check_request
from looplab.toolbox import TOOL_REGISTRY, TOOLS, count_letters, get_weather
from looplab.tools import CALCULATOR_TOOL, calculator
from tests.check_helpers import changed, fails, passes, stub, twin
from tests.judge_helpers import same_as_in_process
from tests.notebook_code import solution_namespace


@pytest.fixture(scope="module")
def solution():
    return solution_namespace("05_toolbox", until="5.5")


def registry(**changes):
    """A copy of the course's registry, with some entries replaced (None: left out)."""
    return changed({name: {"function": entry["function"], "schema": entry["schema"]}
                    for name, entry in TOOL_REGISTRY.items()}, **changes)


def test_the_exercises_and_their_points():
    assert [(e.id, e.points) for e in COURSE.notebook("05_toolbox").exercises] == [
        ("5.1", 2), ("5.2", 2), ("5.3", 2), ("5.4", 1), ("5.5", 3)]
    for number in COURSE.notebook("05_toolbox").ids:
        assert 2 <= len(COURSE.hints(number)) <= 3


def test_the_solution_passes_every_check(solution):
    for exercise in COURSE.notebook("05_toolbox").exercises:
        passes(exercise.id, solution[exercise.name])


# --- 5.1 TOOL_REGISTRY ------------------------------------------------------------------------------------


def test_registry_passes_on_the_reference_and_variants():
    passes("5.1", twin(TOOL_REGISTRY))
    passes("5.1", registry())


def test_registry_passes_in_an_unusual_but_right_form():
    """The calculator's schema made by a comprehension, the others with more JSON Schema than asked (a property
    described, no other property allowed), `required` in another order than the properties."""
    letters = {"description": "Counts one letter in a text.", "input_schema": {
        "type": "object", "additionalProperties": False,
        "properties": {"text": {"type": "string", "minLength": 1}, "letter": {"type": "string", "maxLength": 1}},
        "required": ["letter", "text"]}}
    passes("5.1", registry(calculator={"function": calculator, "schema": {
        key: value for key, value in CALCULATOR_TOOL.items() if key != "name"}},
        count_letters={"function": count_letters, "schema": letters}))


def test_registry_stub_is_not_written_yet():
    fails("5.1", {}, "not written yet")


def test_registry_the_judge_calls_the_functions_inside_it():
    """The registry is a dict of functions: under the grader each one is called in the kernel, and judged the same."""
    assert same_as_in_process("5.1", registry())["kind"] == "solved"
    assert same_as_in_process("5.1", registry(get_weather={"function": lambda city: "sunny",
                                                            "schema": TOOL_REGISTRY["get_weather"]["schema"]}))[
        "kind"] == "not_solved"


def schema_of(name, **input_schema):
    """The course's schema of a tool, its input_schema's fields replaced (None: left out)."""
    schema = TOOL_REGISTRY[name]["schema"]
    return {"description": schema["description"], "input_schema": changed(schema["input_schema"], **input_schema)}


def letters_with(**input_schema):
    return {"function": count_letters, "schema": schema_of("count_letters", **input_schema)}


SHOUT = {"function": str.upper, "schema": {"description": "Writes a text in capitals.", "input_schema": {
    "type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}}}

WRONG_REGISTRIES = [
    ({"calculator": calculator, "get_weather": get_weather, "count_letters": count_letters},
     "not exactly the two keys 'function' and 'schema'"),
    (TOOLS, "TOOL_REGISTRY is a list, not a dict"),
    (registry(count_letters=None), ("has no entry 'count_letters'", "exactly three tools")),
    (registry(get_weather={"function": get_weather, "schema": {"name": "get_weather", **TOOL_REGISTRY[
        "get_weather"]["schema"]}}), "not exactly 'description' and 'input_schema'"),
    (registry(get_weather={"function": get_weather, "schema": {
        "description": "Weather.", "input_schema": {"type": "object", "properties": {"location": {"type": "string"}},
                                                    "required": ["location"]}}}), "its function takes ['city']"),
    (registry(get_weather={"function": get_weather, "schema": {
        "description": "Weather.", "input_schema": {"type": "object", "properties": {"city": {"type": "string"}},
                                                    "required": "city"}}}), "JSON schema is invalid"),
    (registry(get_weather={"function": lambda city: f"Sunny in {city}",
                           "schema": TOOL_REGISTRY["get_weather"]["schema"]}), "expected 'Weather in Paris"),
    (registry(count_letters={"function": count_letters("strawberry", "r"),
                             "schema": TOOL_REGISTRY["count_letters"]["schema"]}), "not a function"),
    # the prose's order and its three tools, exactly
    ({name: registry()[name] for name in ("get_weather", "count_letters", "calculator")},
     ("come in the order ['get_weather', 'count_letters', 'calculator']", "write the calculator first")),
    (registry(shout=SHOUT), ("['shout'] is one tool too many", "exactly three tools")),
    # an input_schema naming the parameters, all required, each a string, of type object
    (registry(count_letters=letters_with(required=["text"])), "requires ['text']; every parameter is required"),
    (registry(count_letters=letters_with(properties={"text": {"type": "string"}, "letter": {"type": "integer"}})),
     ("gives 'letter' the type 'integer'", "'string'")),
    (registry(count_letters=letters_with(type=None)), "tools.2.custom.input_schema.type: Field required"),
    (registry(get_weather={"function": get_weather, "schema": schema_of("get_weather", type="string")}),
     "tools.1.custom.input_schema.type: Input should be 'object'"),
    # the calculator's schema: CALCULATOR_TOOL without its name
    (registry(calculator={"function": calculator, "schema": {
        "description": "Does arithmetic.", "input_schema": CALCULATOR_TOOL["input_schema"]}}),
     ("not CALCULATOR_TOOL without its name", "description")),
    # a tool of its own whose result is not the series' text (a number, not a text)
    (registry(count_letters={"function": lambda text, letter: text.lower().count(letter.lower()),
                             "schema": TOOL_REGISTRY["count_letters"]["schema"]}), "returned 3, expected '3'"),
]


def said_all(said):
    """A row's words: one text, or several."""
    return (said,) if isinstance(said, str) else said


@pytest.mark.parametrize("wrong, said", WRONG_REGISTRIES)
def test_registry_fails_on_typical_mistakes(wrong, said):
    fails("5.1", wrong, *said_all(said))


def test_registry_fails_when_the_course_calculator_tool_was_changed():
    """`CALCULATOR_TOOL.pop("name")`, then CALCULATOR_TOOL as the schema: equal to the right schema, but the course's
    own definition is gone for every later cell (and for the checks)."""
    kept = dict(tools.CALCULATOR_TOOL)
    tools.CALCULATOR_TOOL.pop("name")
    try:
        wrong = registry(calculator={"function": calculator, "schema": tools.CALCULATOR_TOOL})
        fails("5.1", wrong, "The course's CALCULATOR_TOOL was changed", "CALCULATOR_TOOL.name", "make a new dict from it")
    finally:  # put back in its own key order: a request made later in this process sends the very same bytes
        tools.CALCULATOR_TOOL.clear()
        tools.CALCULATOR_TOOL.update(kept)


def test_registry_fails_when_a_cell_changes_the_calculator_tool(monkeypatch):
    """Under the grader the kernel that changed CALCULATOR_TOOL is not the checks' process: the cells say it."""
    setup = "from looplab.tools import calculator, CALCULATOR_TOOL\n"
    cell = ('CALCULATOR_TOOL.pop("name")\n'
            'TOOL_REGISTRY = {"calculator": {"function": calculator, "schema": CALCULATOR_TOOL}}\n')
    mine = copy.deepcopy(tools.CALCULATOR_TOOL)  # the kernel's, changed there
    namespace = {"calculator": calculator, "CALCULATOR_TOOL": mine}
    exec(cell, namespace)
    wrong = registry(calculator=namespace["TOOL_REGISTRY"]["calculator"])
    monkeypatch.setattr(core, "session", lambda: core.Session(["", setup, cell, "check(...)"], {}))
    fails("5.1", wrong, 'A cell changes the course\'s CALCULATOR_TOOL itself (CALCULATOR_TOOL.pop(\'name\'))')


# --- 5.2 tool_definitions ---------------------------------------------------------------------------------


def definitions_by_loop(registry):
    tools = []
    for name in registry:
        schema = registry[name]["schema"]
        tools.append({"name": name, "description": schema["description"], "input_schema": schema["input_schema"]})
    return tools


def test_tool_definitions_passes_on_the_reference_and_variants():
    passes("5.2", twin(toolbox.tool_definitions))
    passes("5.2", definitions_by_loop)
    passes("5.2", lambda registry: [dict(entry["schema"], name=name) for name, entry in registry.items()])


def test_tool_definitions_stub_is_not_written_yet():
    fails("5.2", stub, "not written yet")


HAND_WRITTEN = [dict(CALCULATOR_TOOL), {"name": "get_weather", **TOOL_REGISTRY["get_weather"]["schema"]},
                {"name": "count_letters", **TOOL_REGISTRY["count_letters"]["schema"]}]


def definitions_kept_by_hand(registry):
    return HAND_WRITTEN  # right for the course's registry only


def definitions_with_the_function(registry):
    return [{"name": name, **entry} for name, entry in registry.items()]


def definitions_sorted_by_name(registry):
    return [{"name": name, **entry["schema"]} for name, entry in sorted(registry.items())]


def definitions_written_into_the_registry(registry):
    for name, entry in registry.items():
        entry["schema"]["name"] = name
    return [entry["schema"] for entry in registry.values()]


@pytest.mark.parametrize("wrong, said", [
    (definitions_kept_by_hand, "a registry the check made up"),
    (definitions_with_the_function, "holds ['function', 'schema']"),
    (definitions_sorted_by_name, "the registry's keys, in its order"),
    (definitions_written_into_the_registry, "changed the registry it was handed"),
])
def test_tool_definitions_fails_on_typical_mistakes(wrong, said):
    fails("5.2", wrong, said)


# --- 5.3 run_tool -----------------------------------------------------------------------------------------


def run_tool_by_try(name, tool_input):
    try:
        function = TOOL_REGISTRY[name]["function"]
    except KeyError:
        return "Error: unknown tool '" + name + "'"
    return function(**tool_input)


def run_tool_by_match(name, tool_input):
    match TOOL_REGISTRY.get(name):
        case {"function": function}:
            return str(function(**(tool_input or {})))  # a None input taken for {}: notebook 5 never sends one
        case _:
            return "Error: unknown tool %r" % name


def run_tool_through_a_helper(name, tool_input):
    return _lookup(name)(tool_input)


def _lookup(name):
    """A helper of another cell, which reads the registry at each call."""
    entry = TOOL_REGISTRY.get(name)
    if entry is None:
        return lambda tool_input: f"Error: unknown tool {name!r}"
    return lambda tool_input: entry["function"](**tool_input)


def run_tool_by_get(name, tool_input):
    function = TOOL_REGISTRY.get(name, {}).get("function")
    if function is None:
        return f"Error: unknown tool {name!r}"
    return function(**tool_input)


def run_tool_by_membership(name, tool_input):
    if name not in TOOL_REGISTRY:
        return f"Error: unknown tool {name!r}"
    return TOOL_REGISTRY[name]["function"](**tool_input)


def run_tool_reading_globals(name, tool_input):
    registry = globals()["TOOL_REGISTRY"]  # the module's name, read at each call: the registry as it is now
    if name in registry:
        return registry[name]["function"](**tool_input)
    return "Error: unknown tool " + repr(name)


def run_tool_reporting_what_a_tool_raised(name, tool_input):
    """Notebook 6 ahead of time: a tool's own exception is reported as what it is, never as an unknown name."""
    entry = TOOL_REGISTRY.get(name)
    if entry is None:
        return f"Error: unknown tool {name!r}"
    try:
        return entry["function"](**tool_input)
    except KeyError as error:
        return f"Error: {name!r} raised KeyError: {error}"


@pytest.mark.parametrize("right", [
    twin(toolbox.run_tool), run_tool_by_get, run_tool_by_membership, run_tool_by_try, run_tool_by_match,
    run_tool_through_a_helper, run_tool_reading_globals, run_tool_reporting_what_a_tool_raised,
], ids=["the course's, typed in", "get", "in", "try around the lookup", "match", "a helper of another cell",
        "globals()", "reports a tool's KeyError"])
def test_run_tool_passes_on_the_reference_and_variants(right):
    """Every form that looks the name up in TOOL_REGISTRY at each call, and lets a tool's KeyError through (or says what
    it is), whatever its code looks like: the check's registry holds two tools more (toolbox.CHECKED_REGISTRY)."""
    passes("5.3", right)


def test_run_tool_is_checked_with_the_check_s_registry_and_only_5_3():
    """5.3's checked_with puts CHECKED_REGISTRY under TOOL_REGISTRY, over 5.1's reference; the exercises after it
    lean on the course's registry itself. The swap lasts as long as the check."""
    assert COURSE.earlier_pieces("5.3")["TOOL_REGISTRY"] == "looplab.toolbox:CHECKED_REGISTRY"
    assert COURSE.earlier_pieces("5.4")["TOOL_REGISTRY"] == COURSE.earlier_pieces("5.5")["TOOL_REGISTRY"] == \
        "looplab.toolbox:TOOL_REGISTRY"
    assert list(toolbox.CHECKED_REGISTRY) == list(TOOL_REGISTRY) + ["reverse_text", "get_price"]
    assert all(toolbox.CHECKED_REGISTRY[name]["function"] is entry["function"] for name, entry in TOOL_REGISTRY.items())
    seen = []
    passes("5.3", lambda name, tool_input: seen.append(set(TOOL_REGISTRY)) or run_tool_by_get(name, tool_input))
    assert seen and all(names == set(toolbox.CHECKED_REGISTRY) for names in seen)
    assert globals()["TOOL_REGISTRY"] is toolbox.TOOL_REGISTRY  # put back


def test_an_exercise_is_never_checked_with_another_object_under_its_own_name():
    notebook = COURSE.notebook("05_toolbox")
    wrong = dataclasses.replace(COURSE.exercise("5.3"), checked_with={"run_tool": "looplab.toolbox:run_tool"})
    with pytest.raises(ValueError, match="checked with another object under its own name 'run_tool'"):
        Course(COURSE.versions, (dataclasses.replace(notebook, exercises=(wrong,)),))


def test_a_run_tool_that_calls_the_course_s_is_the_course_s_code():
    """The course's run_tool reads its own registry, which lacks the check's tools: a learner's run_tool calling it
    fails there, and the verdict is the course's code, not a registry copied."""
    result = run_check("5.3", lambda name, tool_input: toolbox.run_tool(name, tool_input))
    assert result.kind == core.COURSE_CODE and "looplab.toolbox.run_tool" in result.failed


def test_run_tool_stub_is_not_written_yet():
    fails("5.3", stub, "not written yet")


def run_tool_naming_each_tool(name, tool_input):
    if name == "calculator":
        return calculator(**tool_input)
    if name == "get_weather":
        return get_weather(**tool_input)
    if name == "count_letters":
        return count_letters(**tool_input)
    return f"Error: unknown tool {name!r}"


def run_tool_raising_on_an_unknown_name(name, tool_input):
    return TOOL_REGISTRY[name]["function"](**tool_input)


def run_tool_with_a_sentence(name, tool_input):
    entry = TOOL_REGISTRY.get(name)
    return f"I don't know {name}" if entry is None else entry["function"](**tool_input)


def run_tool_passing_the_dict(name, tool_input):
    entry = TOOL_REGISTRY.get(name)
    return f"Error: unknown tool {name!r}" if entry is None else entry["function"](*tool_input.values())[:0] + "?"


FUNCTIONS = {name: entry["function"] for name, entry in TOOL_REGISTRY.items()}  # taken out of the registry once


def run_tool_copied_once(name, tool_input):
    function = FUNCTIONS.get(name)
    return f"Error: unknown tool {name!r}" if function is None else function(**tool_input)


def run_tool_reading_a_registry_bound_once(name, tool_input, registry=TOOL_REGISTRY):
    entry = registry.get(name)
    return f"Error: unknown tool {name!r}" if entry is None else entry["function"](**tool_input)


def run_tool_by_position(name, tool_input):
    entry = TOOL_REGISTRY.get(name)
    return f"Error: unknown tool {name!r}" if entry is None else entry["function"](*tool_input.values())


def run_tool_catching_key_errors(name, tool_input):
    try:
        return TOOL_REGISTRY[name]["function"](**tool_input)
    except KeyError:  # also a KeyError raised inside a registered tool
        return f"Error: unknown tool {name!r}"


def run_tool_catching_key_errors_around_the_call(name, tool_input):
    entry = TOOL_REGISTRY.get(name)
    if entry is None:
        return f"Error: unknown tool {name!r}"
    try:
        return entry["function"](**tool_input)
    except KeyError:  # a tool's own KeyError taken for a missing name
        return f"Error: unknown tool {name!r}"


def run_tool_catching_everything(name, tool_input):
    try:
        return TOOL_REGISTRY[name]["function"](**tool_input)
    except Exception:
        return f"Error: unknown tool {name!r}"


def run_tool_returning_a_pair(name, tool_input):
    entry = TOOL_REGISTRY.get(name)
    if entry is None:
        return f"Error: unknown tool {name!r}", True
    return entry["function"](**tool_input), False


@pytest.mark.parametrize("wrong, said", [
    (run_tool_naming_each_tool, "writes the tool name 'calculator'"),
    (run_tool_raising_on_an_unknown_name, "KeyError"),
    (run_tool_with_a_sentence, 'starting with "Error: unknown tool"'),
    (run_tool_passing_the_dict, "expected '9544717'"),
    # the registry read at each call, never functions copied out of it once
    (run_tool_copied_once, ("run_tool answered \"Error: unknown tool 'reverse_text'\" for 'reverse_text', a tool the "
                            "check put in TOOL_REGISTRY after run_tool was defined: look the name up in TOOL_REGISTRY "
                            "each time run_tool is called", "a default argument")),
    (run_tool_reading_a_registry_bound_once, ("for 'reverse_text', a tool the check put in TOOL_REGISTRY after "
                                              "run_tool was defined", "each time run_tool is called")),
    # the input as keywords, whatever the order of its keys
    (run_tool_by_position, ("count_letters(**{'letter': 'r', 'text': 'strawberry'})", "expected '3'", "keywords")),
    # only a name the registry lacks is unknown
    (run_tool_catching_everything, ("get_weather(**{'town': 'Paris'})", "'get_weather' is a registered tool")),
    (run_tool_catching_key_errors, ("run_tool reported a KeyError raised inside the tool 'get_price' as an unknown "
                                    "tool", "only a name missing from the registry is unknown",
                                    "entry = TOOL_REGISTRY.get(name)")),
    (run_tool_catching_key_errors_around_the_call, "reported a KeyError raised inside the tool 'get_price' as an "
                                                   "unknown tool (\"Error: unknown tool 'get_price'\")"),
    # the tool's text, as the function returns it
    (run_tool_returning_a_pair, ("returned a tuple", "the content of the tool_result")),
])
def test_run_tool_fails_on_typical_mistakes(wrong, said):
    fails("5.3", wrong, *said_all(said))


# --- 5.4 FORCE_WEATHER ------------------------------------------------------------------------------------


def test_force_weather_passes_on_the_reference_and_a_variant():
    passes("5.4", dict(toolbox.FORCE_WEATHER))
    passes("5.4", {"name": "get_weather", "type": "tool", "disable_parallel_tool_use": True})


def test_force_weather_stub_is_not_written_yet():
    fails("5.4", {}, "not written yet")


@pytest.mark.parametrize("cell, refused", [
    ('FORCE_WEATHER = {"type": "tool", "name": get_weather.__name__}\n', False),
    ("from looplab.toolbox import FORCE_WEATHER as F\nFORCE_WEATHER = dict(F)\ndel F\n", True),
], ids=["the learner's expression", "the course's, its name deleted"])
def test_force_weather_read_from_a_course_function_is_the_learners(monkeypatch, cell, refused):
    """`get_weather` comes from the course, yet `get_weather.__name__` is the learner's own expression; a name the
    course's FORCE_WEATHER was imported under is the course's, even deleted."""
    setup = "from looplab.toolbox import WEATHER, get_weather, count_letters\n"
    namespace: dict = {}
    for each in (setup, cell):
        exec(each, namespace)
    monkeypatch.setattr(core, "session", lambda: core.Session(["", setup, cell, "check(...)"], namespace))
    if refused:  # in-process: under the grader the course's FORCE_WEATHER is not in the kernel to copy
        result = run_check("5.4", namespace["FORCE_WEATHER"])
        assert result.kind == core.COURSE_CODE and "the course's own" in result.failed
    else:
        passes("5.4", namespace["FORCE_WEATHER"])


@pytest.mark.parametrize("wrong, said", [
    ({"type": "any"}, "forces some tool"),
    ({"type": "auto"}, "does not force"),
    ({"type": "tool"}, "tool_choice.tool.name: Field required"),
    ({"type": "tool", "name": "weather"}, "not one of the tools sent"),
    ({"type": "tool", "name": "calculator"}, "not the weather tool"),
    ("get_weather", "a tool_choice is a dict"),
])
def test_force_weather_fails_on_typical_mistakes(wrong, said):
    fails("5.4", wrong, said)


def test_the_offline_api_takes_every_tool_choice_and_refuses_a_malformed_one():
    def sent(choice):
        violation = check_request({"model": MODEL, "max_tokens": 64, "tools": TOOLS, "tool_choice": choice,
                                   "messages": [{"role": "user", "content": "Hi"}]})
        return violation.message if violation else None

    for choice in ({"type": "auto"}, {"type": "any"}, {"type": "none"}, {"type": "tool", "name": "get_weather"},
                   {"type": "any", "disable_parallel_tool_use": True}):
        assert sent(choice) is None
    assert sent({"type": "auto", "name": "get_weather"}) == "tool_choice.auto.name: Extra inputs are not permitted"


# --- 5.5 agent_turn ---------------------------------------------------------------------------------------


def agent_turn_by_while(client, messages, max_iterations=10, system=SYSTEM_PROMPT):
    calls = 0
    while calls < max_iterations:
        calls += 1
        reply = client.messages.create(model=MODEL, max_tokens=1024, system=system, tools=TOOLS, messages=messages)
        messages.append({"role": "assistant", "content": reply.content})
        if reply.stop_reason != "tool_use":
            return "".join(block.text for block in reply.content if block.type == "text")
        uses = [block for block in reply.content if block.type == "tool_use"]
        messages.append({"role": "user", "content": [tool_result(use, toolbox.run_tool(use.name, use.input))
                                                     for use in reversed(uses)]})
    raise RuntimeError(f"gave up after {max_iterations} calls")


def agent_turn_counting_calls(client, messages, max_iterations=10, system=SYSTEM_PROMPT):
    """Another right form: a counter, the calls gathered by attribute, the words of every text block kept."""
    made = 0
    while True:
        if made == max_iterations:
            raise RuntimeError(f"max_iterations={max_iterations} reached")
        reply = client.messages.create(model=MODEL, max_tokens=1024, system=system, tools=TOOLS, messages=messages)
        made += 1
        messages.append({"role": "assistant", "content": reply.content})
        calls = [block for block in reply.content if getattr(block, "type", None) == "tool_use"]
        if reply.stop_reason != "tool_use":
            return "".join([block.text for block in reply.content if block.type == "text"])
        messages.append({"role": "user", "content": [tool_result(call, toolbox.run_tool(call.name, call.input))
                                                     for call in calls]})


def test_agent_turn_passes_on_the_reference_and_a_variant():
    passes("5.5", twin(toolbox.agent_turn))
    passes("5.5", agent_turn_by_while)
    passes("5.5", agent_turn_counting_calls)


def test_agent_turn_stub_is_not_written_yet():
    fails("5.5", stub, "not written yet")


def all_words(reply):
    return "".join(block.text for block in reply.content if block.type == "text")


def loop_with(results_of=None, tools=None, sends=None, answer=all_words, goes_on=None, before_cap=False):
    """An agent_turn whose only difference from the reference is one of: how it answers a reply's calls, the tools or
    the system prompt it sends, how it reads the answer, when it goes on, whether it answers the last calls at the cap."""
    results_of = results_of or answering_properly

    def agent_turn(client, messages, max_iterations=10, system=SYSTEM_PROMPT):
        for made in range(1, max_iterations + 1):
            reply = client.messages.create(model=MODEL, max_tokens=1024, system=system if sends is None else sends,
                                           tools=TOOLS if tools is None else tools, messages=messages)
            messages.append({"role": "assistant", "content": reply.content})
            if not (goes_on(reply) if goes_on else reply.stop_reason == "tool_use"):
                return answer(reply)
            if before_cap and made == max_iterations:
                break  # raises with the last reply's calls unanswered
            messages.append({"role": "user", "content": results_of(
                [block for block in reply.content if block.type == "tool_use"])})
        raise RuntimeError(f"still asking after {max_iterations} calls")
    return agent_turn


def answering_the_ids_in_the_wrong_order(calls):
    outputs = [toolbox.run_tool(call.name, call.input) for call in calls]
    return [{"type": "tool_result", "tool_use_id": call.id, "content": output}
            for call, output in zip(reversed(calls), outputs)]


def answering_the_first_call_only(calls):
    return [tool_result(calls[0], toolbox.run_tool(calls[0].name, calls[0].input))]


def running_every_call_with_notebook_1s_run_tool(calls):
    from looplab.tools import run_tool as calculator_only

    return [tool_result(call, calculator_only(call.name, call.input)) for call in calls]


def answering_properly(calls):
    return [tool_result(call, toolbox.run_tool(call.name, call.input)) for call in calls]


def answering_each_tool_once(calls):
    by_name = {call.name: call for call in calls}  # two calls of one tool: one answered
    return answering_properly(list(by_name.values()))


def answering_without_the_flag(calls):
    return [{"type": "tool_result", "tool_use_id": call.id, "content": toolbox.run_tool(call.name, call.input)}
            for call in calls]


def agent_turn_naming_the_tools(client, messages, max_iterations=10, system=SYSTEM_PROMPT):
    for _ in range(max_iterations):
        reply = client.messages.create(model=MODEL, max_tokens=1024, system=system, tools=TOOLS, messages=messages)
        messages.append({"role": "assistant", "content": reply.content})
        if reply.stop_reason != "tool_use":
            return "".join(block.text for block in reply.content if block.type == "text")
        results = []
        for call in reply.content:
            if call.type != "tool_use":
                continue
            if call.name == "calculator":
                output = calculator(**call.input)
            elif call.name == "get_weather":
                output = get_weather(**call.input)
            elif call.name == "count_letters":
                output = count_letters(**call.input)
            else:
                output = f"Error: unknown tool {call.name!r}"
            results.append(tool_result(call, output))
        messages.append({"role": "user", "content": results})
    raise RuntimeError(f"still asking after {max_iterations} calls")


HAND_KEPT_TOOLS = [dict(CALCULATOR_TOOL), {"name": "get_weather", **TOOL_REGISTRY["get_weather"]["schema"]}]

WRONG_LOOPS = [
    (agent_turn_naming_the_tools, "writes the tool name 'calculator'"),
    (loop_with(answering_the_ids_in_the_wrong_order), "Weather in Tokyo"),
    (loop_with(answering_the_first_call_only), "without `tool_result` blocks immediately after"),
    (loop_with(running_every_call_with_notebook_1s_run_tool), "Error: unknown tool 'get_weather'"),
    (loop_with(answering_properly, tools=HAND_KEPT_TOOLS), "not every tool of the registry"),
    # system=system, the argument: a caller may pass another
    (loop_with(sends=SYSTEM_PROMPT), ("did not send the system prompt agent_turn was handed", "system=system")),
    # the words of every text block of the last reply, wherever they are
    (loop_with(answer=lambda reply: reply.content[0].text), ("'ThinkingBlock' object has no attribute 'text'",
                                                             "never content[0]")),
    (loop_with(answer=lambda reply: reply.content[-1].text), ("returned 'Take a light jacket.'",
                                                              "'18°C and cloudy in Paris. Take a light jacket.'")),
    # a reply cut off ends the turn
    (loop_with(goes_on=lambda reply: reply.stop_reason != "end_turn"), "stop_reason 'max_tokens' (cut off)"),
    # every call answered, two of one tool too
    (loop_with(answering_each_tool_once), ("two calls of the same tool", "without `tool_result` blocks")),
    # an error text flagged, in notebook 5's words: an unknown tool, not the calculator, and no exercise 2.1 here
    (loop_with(answering_without_the_flag), ("a call's output starts with 'Error: ' (an unknown tool",
                                             "which the setup cell imports")),
    # at the cap, the last reply's calls answered before raising
    (loop_with(before_cap=True), ("messages is not a valid history", "append their results before raising")),
]


@pytest.mark.parametrize("wrong, said", WRONG_LOOPS)
def test_agent_turn_fails_on_typical_mistakes(wrong, said):
    fails("5.5", wrong, *said_all(said))


# --- the notebook's own code: run(), and the MCP cells ----------------------------------------------------

def solution_cell(starting: str) -> str:
    """The code cell of the solution notebook whose source starts with these words."""
    notebook = nbformat.read(Path(__file__).resolve().parent.parent / "solutions" / "05_toolbox.ipynb", as_version=4)
    return next(cell.source for cell in notebook.cells if cell.cell_type == "code" and cell.source.startswith(starting))


def agent_turn_appending_dicts(client, messages, max_iterations=10, system=SYSTEM_PROMPT):
    """A right agent_turn as far as the API goes: the reply's blocks appended as plain dicts (reply.model_dump())."""
    messages.append({"role": "assistant", "content": [
        {"type": "text", "text": "Let me look."},
        {"type": "tool_use", "id": "toolu_A", "name": "get_weather", "input": {"city": "Paris"}}]})
    messages.append({"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_A", "content": get_weather("Paris")}]})
    messages.append({"role": "assistant", "content": [{"type": "text", "text": "Mild and cloudy."}]})
    return "Mild and cloudy."


def test_the_notebooks_run_reads_blocks_written_as_dicts():
    """Every history the API accepts: run() (cell 26, written into agent_toolbox.py) lists the calls of replies
    whose blocks are dicts as it lists the SDK's objects (the series' stage 007 tests run the latter)."""
    namespace = {"looplab": looplab, "SYSTEM_PROMPT": SYSTEM_PROMPT, "agent_turn": agent_turn_appending_dicts}
    exec(solution_cell("def run("), namespace)
    output = io.StringIO()
    namespace["run"](io.StringIO("Weather in Paris?\n"), output, client=object())
    assert output.getvalue() == ("User> [tool] get_weather({'city': 'Paris'}) -> Weather in Paris: 18°C, partly cloudy\n"
                                 "Agent> Mild and cloudy.\nUser> ")


def test_the_mcp_cells_say_why_the_server_failed(tmp_path, monkeypatch, capsys):
    """The client's ExceptionGroup unwrapped to its first error, and the server's own error from its log."""
    tree = ast.parse(solution_cell("from mcp import"))
    helper = next(node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name == "server_failed")
    namespace: dict = {"Path": Path}
    exec(compile(ast.Module([helper], []), "<cell 34>", "exec"), namespace)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "toolbox_server.log").write_text(
        'Traceback (most recent call last):\n  File "toolbox_server.py", line 11, in <module>\n'
        '    TOOL_REGISTRY = {"calculator": {"function": calculatr}}\n'
        "NameError: name 'calculatr' is not defined\n", encoding="utf-8")
    namespace["server_failed"](ExceptionGroup("unhandled errors in a TaskGroup", [ConnectionError("Connection closed")]))
    said = capsys.readouterr().out
    assert "(ConnectionError: Connection closed)" in said and "ExceptionGroup" not in said
    assert said.rstrip().endswith("NameError: name 'calculatr' is not defined")
