"""The checks of notebook 5 (a toolbox): they pass on good code written several ways and fail, saying why, on
typical mistakes; the registry's functions are judged the grader's way too (the channel carries them)."""


import pytest

from looplab import toolbox
from looplab.client import MODEL
from looplab.course import COURSE
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
    reordered = {name: registry()[name] for name in ("get_weather", "count_letters", "calculator")}
    passes("5.1", reordered)
    shout = {"function": str.upper, "schema": {"description": "Writes a text in capitals.", "input_schema": {
        "type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}}}
    passes("5.1", registry(shout=shout))


def test_registry_stub_is_not_written_yet():
    fails("5.1", {}, "not written yet")


def test_registry_the_judge_calls_the_functions_inside_it():
    """The registry is a dict of functions: under the grader each one is called in the kernel, and judged the same."""
    assert same_as_in_process("5.1", registry())["kind"] == "solved"
    assert same_as_in_process("5.1", registry(get_weather={"function": lambda city: "sunny",
                                                            "schema": TOOL_REGISTRY["get_weather"]["schema"]}))[
        "kind"] == "not_solved"


WRONG_REGISTRIES = [
    ({"calculator": calculator, "get_weather": get_weather, "count_letters": count_letters},
     "not exactly the two keys 'function' and 'schema'"),
    (TOOLS, "TOOL_REGISTRY is a list, not a dict"),
    (registry(count_letters=None), "at least three tools"),
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
]


@pytest.mark.parametrize("wrong, said", WRONG_REGISTRIES)
def test_registry_fails_on_typical_mistakes(wrong, said):
    fails("5.1", wrong, said)


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


def test_run_tool_passes_on_the_reference_and_variants():
    passes("5.3", twin(toolbox.run_tool))
    passes("5.3", run_tool_by_try)


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


@pytest.mark.parametrize("wrong, said", [
    (run_tool_naming_each_tool, "writes the tool name 'calculator'"),
    (run_tool_raising_on_an_unknown_name, "KeyError"),
    (run_tool_with_a_sentence, 'starting with "Error: unknown tool"'),
    (run_tool_passing_the_dict, "expected '9544717'"),
])
def test_run_tool_fails_on_typical_mistakes(wrong, said):
    fails("5.3", wrong, said)


# --- 5.4 FORCE_WEATHER ------------------------------------------------------------------------------------


def test_force_weather_passes_on_the_reference_and_a_variant():
    passes("5.4", dict(toolbox.FORCE_WEATHER))
    passes("5.4", {"name": "get_weather", "type": "tool", "disable_parallel_tool_use": True})


def test_force_weather_stub_is_not_written_yet():
    fails("5.4", {}, "not written yet")


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


def test_agent_turn_passes_on_the_reference_and_a_variant():
    passes("5.5", twin(toolbox.agent_turn))
    passes("5.5", agent_turn_by_while)


def test_agent_turn_stub_is_not_written_yet():
    fails("5.5", stub, "not written yet")


def loop_with(results_of, tools=None):
    """An agent_turn whose only difference from the reference is how it answers a reply's calls (or what it sends)."""
    def agent_turn(client, messages, max_iterations=10, system=SYSTEM_PROMPT):
        for _ in range(max_iterations):
            reply = client.messages.create(model=MODEL, max_tokens=1024, system=system,
                                           tools=TOOLS if tools is None else tools, messages=messages)
            messages.append({"role": "assistant", "content": reply.content})
            if reply.stop_reason != "tool_use":
                return "".join(block.text for block in reply.content if block.type == "text")
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
]


@pytest.mark.parametrize("wrong, said", WRONG_LOOPS)
def test_agent_turn_fails_on_typical_mistakes(wrong, said):
    fails("5.5", wrong, said)
