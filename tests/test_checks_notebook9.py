"""The checks of notebook 9 (a subagent as a tool): they pass on good code written several ways and fail, saying why,
on typical mistakes. The answers read the names the notebook gives them (its registries and prompts, run_tool,
agent_turn, research): while each is checked, the earlier pieces are the course's, as in a learner's notebook."""

import inspect
import io
import sys

import pytest

import looplab
from looplab import subagent
from looplab.checks import notebook9
from looplab.course import COURSE
from looplab.model_id import MODEL
from looplab.subagent import (  # noqa: F401 (the names the notebook gives the answers below)
    PARENT_REGISTRY, RESEARCH_SCHEMA, RESEARCHER_PROMPT, RESEARCHER_REGISTRY, SYSTEM_PROMPT, agent_turn, research,
    run_tool,
)
from tests.check_helpers import fails, passes, stub, twin
from tests.notebook_code import solution_in_a_folder

STEM = "09_subagent"


@pytest.fixture(scope="module")
def solution(tmp_path_factory):
    """The solution notebook run once, offline, in a folder of its own (it writes agent_subagent.py): its names."""
    return solution_in_a_folder(tmp_path_factory.mktemp("notebook9"), STEM)


def test_the_exercises_and_their_points():
    assert [(e.id, e.name, e.points) for e in COURSE.notebook(STEM).exercises] == [
        ("9.1", "run_tool", 2), ("9.2", "agent_turn", 2), ("9.3", "research", 2), ("9.4", "run", 2)]
    for number in COURSE.notebook(STEM).ids:
        assert 2 <= len(COURSE.hints(number)) <= 3


def test_the_checks_pass_the_solutions_own_code(solution):
    for exercise in COURSE.notebook(STEM).exercises:
        passes(exercise.id, solution[exercise.name])


def test_the_checks_pass_the_course_code_in_both_languages(spoken_in):
    passes("9.1", twin(subagent.run_tool))
    passes("9.2", twin(subagent.agent_turn))
    passes("9.3", twin(subagent.research))
    passes("9.4", twin(subagent.run))


# --- the check's own inputs ----------------------------------------------------------------------------------------


def test_the_run_tool_table_agrees_with_the_course():
    """Each call of 9.1's table is of the kind the course's run_tool answers it with; an unknown name of the table is
    held by another registry of the check, or by none, as its row says."""
    for case in notebook9.RUN_TOOL_CALLS:
        said, failed = subagent.run_tool(case.registry(), case.name, case.tool_input)
        assert failed is (case.kind != notebook9.OK), case.key
        if case.kind == notebook9.UNKNOWN:
            assert said.startswith("Error: unknown tool"), case.key
        if case.kind == notebook9.RAISED:
            assert " raised " in said, case.key
    held_elsewhere = {case.key for case in notebook9.RUN_TOOL_CALLS if case.kind == notebook9.UNKNOWN
                      and any(case.name in made() for made in notebook9.REGISTRIES)}
    assert held_elsewhere == {"unknown_here", "unknown_there", "empty_registry"}


def test_the_registries_tools_are_the_courses_own_functions():
    """Under the grader a registry's functions are sent to the kernel: each is a function of the course's package,
    never one of the checks' (looplab.checks is not in the graded edition)."""
    for made in notebook9.REGISTRIES:
        for entry in made().values():
            module = entry["function"].__module__
            assert module.startswith("looplab.") and not module.startswith("looplab.checks"), module


def test_no_scenario_succeeds_with_an_error_text():
    """The agent_turn harness flags a result by its text (`Error: `): in 9.2's registries, a success never starts so."""
    for scenario in notebook9.TURN_SCENARIOS:
        for call in notebook9.calls_of([answer({"messages": []}) for answer in scenario.replies]):
            said, failed = subagent.run_tool(scenario.toolbox(), call["name"], call["input"])
            assert said.startswith("Error: ") is failed, (scenario.key, call)


def test_the_prompts_and_the_research_tool_are_known_in_every_language():
    assert subagent.SYSTEM_PROMPT in notebook9.SYSTEM_PROMPTS
    assert subagent.RESEARCHER_PROMPT in notebook9.RESEARCHER_PROMPTS
    assert {"name": "research", **subagent.RESEARCH_SCHEMA} in notebook9.research_definitions()
    assert len(notebook9.research_definitions()) == len(notebook9.SYSTEM_PROMPTS) == 2


# --- 9.1 run_tool --------------------------------------------------------------------------------------------------


def run_tool_with_try(registry, name, tool_input):
    """No signature: the TypeError of a call told from one inside the tool by the traceback's depth."""
    if name not in registry:
        return f"Error: unknown tool {name!r}; known: {sorted(registry)}", True
    if type(tool_input) is not dict:
        return f"Error: bad arguments for {name!r}: the input must be an object, not {type(tool_input).__name__}", True
    function = registry[name]["function"]
    try:
        inspect.signature(function).bind(**tool_input)
    except TypeError as error:
        return "Error: bad arguments for " + repr(name) + ": " + str(error), True
    try:
        result = function(**tool_input)
    except Exception as error:  # noqa: BLE001
        return "Error: " + repr(name) + " failed with " + type(error).__name__ + ": " + str(error), True
    return f"{result}", False


def run_tool_with_match(registry, name, tool_input):
    """A match statement over what the call is; the entry read with .get and a default."""
    entry = registry.get(name, None) if isinstance(name, str) else None
    match entry, tool_input:
        case None, _:
            return "Error: unknown tool %r (this agent has %d tools)" % (name, len(registry)), True
        case _, dict():
            pass
        case _:
            return "Error: bad arguments for %r: the input must be an object" % (name,), True
    signature = inspect.signature(entry["function"])
    try:
        bound = signature.bind(**tool_input)
    except TypeError as error:
        return "Error: bad arguments for %r: %s" % (name, error), True
    try:
        return str(entry["function"](*bound.args, **bound.kwargs)), False
    except Exception as error:  # noqa: BLE001
        return "Error: %r raised %s: %s" % (name, type(error).__name__, error), True


def run_tool_reading_the_parents_registry(registry, name, tool_input):
    return subagent.run_tool(PARENT_REGISTRY, name, tool_input)


def run_tool_raising_on_an_unknown_name(registry, name, tool_input):
    if not isinstance(tool_input, dict):
        return f"Error: bad arguments for {name!r}: the input must be an object", True
    function = registry[name]["function"]
    try:
        bound = inspect.signature(function).bind(**tool_input)
    except TypeError as error:
        return f"Error: bad arguments for {name!r}: {error}", True
    try:
        return str(function(*bound.args, **bound.kwargs)), False
    except Exception as error:  # noqa: BLE001
        return f"Error: {name!r} raised {type(error).__name__}: {error}", True


def run_tool_catching_nothing(registry, name, tool_input):
    if name not in registry:
        return f"Error: unknown tool {name!r}", True
    if not isinstance(tool_input, dict):
        return f"Error: bad arguments for {name!r}: the input must be an object", True
    return str(registry[name]["function"](**tool_input)), False


def run_tool_returning_the_raw_value(registry, name, tool_input):
    said, failed = subagent.run_tool(registry, name, tool_input)
    if failed:
        return said, failed
    return registry[name]["function"](**tool_input), False


def run_tool_parameters_swapped(name, registry, tool_input):
    return subagent.run_tool(registry, name, tool_input)


def run_tool_merging_every_registry(registry, name, tool_input):
    """A name looked up in the registry handed in, then in the course's: another agent's tool runs here."""
    return subagent.run_tool({**RESEARCHER_REGISTRY, **PARENT_REGISTRY, **registry}, name, tool_input)


def run_tool_turning_none_into_empty(registry, name, tool_input):
    return subagent.run_tool(registry, name, tool_input or {})


def run_tool_catching_type_error_around_the_call(registry, name, tool_input):
    """No binding: any TypeError called bad arguments, one from inside the tool too."""
    if name not in registry:
        return f"Error: unknown tool {name!r}", True
    if not isinstance(tool_input, dict):
        return f"Error: bad arguments for {name!r}: the input must be an object", True
    try:
        return str(registry[name]["function"](**tool_input)), False
    except TypeError as error:
        return f"Error: bad arguments for {name!r}: {error}", True
    except Exception as error:  # noqa: BLE001
        return f"Error: {name!r} raised {type(error).__name__}: {error}", True


def run_tool_with_repr_of_error(registry, name, tool_input):
    said, failed = subagent.run_tool(registry, name, tool_input)
    if " raised " not in said:
        return said, failed
    try:
        registry[name]["function"](**tool_input)
    except Exception as error:  # noqa: BLE001
        return f"Error: {name!r} raised {error!r}", True


def test_run_tool_passes_on_the_reference_and_unusual_answers():
    passes("9.1", twin(subagent.run_tool))
    passes("9.1", run_tool_with_try)
    passes("9.1", run_tool_with_match)


def test_run_tool_the_course_function_is_refused():
    fails("9.1", subagent.run_tool, "course's own")


def test_run_tool_stub_is_not_written_yet():
    fails("9.1", stub, "not written yet")


@pytest.mark.parametrize("wrong, words", [
    (run_tool_reading_the_parents_registry, ("run_tool({'weather': {...}", "Error: unknown tool 'weather'",
                                             "the registry it was handed holds 'weather'", "registry, the argument")),
    (run_tool_raising_on_an_unknown_name, ("run_tool raised KeyError: 'weather'", "a name only another agent's",
                                           "unknown here, even when another agent's registry holds it")),
    (run_tool_catching_nothing, ("a name another registry gives to another tool", "run_tool raised RuntimeError: boom",
                                 "it must never raise", "inside try/except Exception")),
    (run_tool_returning_the_raw_value, ("a tool that returns a number", "the tool's result is of type int",
                                        "str(result)")),
    (run_tool_parameters_swapped, ("run_tool did not give [\"42\", false]",
                                   "run_tool(name, registry, tool_input) it does",
                                   "def run_tool(registry, name, tool_input)")),
    (run_tool_merging_every_registry, ("a name only another agent's registry holds", "it ran 'calculator'",
                                       "which the registry it was handed lacks")),
    (run_tool_turning_none_into_empty, ("None for an input", "it ran the tool", "an input that is not a dict",
                                        "None included")),
    (run_tool_catching_type_error_around_the_call, ("a tool whose own code raises TypeError",
                                                    "run_tool said 'Error: bad arguments for \\'shout\\'",
                                                    "not bad arguments", "Bind the arguments first")),
    (run_tool_with_repr_of_error, ("Error: 'status' raised RuntimeError('boom')",
                                   "name the exception as Type: message, 'RuntimeError: boom'")),
])
def test_run_tool_fails_on_typical_mistakes(wrong, words):
    fails("9.1", wrong, *words)


# --- 9.2 agent_turn ------------------------------------------------------------------------------------------------


def agent_turn_with_a_helper(client, system, registry, messages, output_stream, tag_prefix=""):
    """The results built by a helper, the lines written with print(file=...), the loop bounded by a for."""
    def answered(call):
        said, failed = run_tool(registry, call.name, call.input)
        print(f"[{tag_prefix}{'tool-error' if failed else 'tool'}] {call.name}({call.input}) -> {said}",
              file=output_stream)
        flagged = {"is_error": True} if failed else {}
        return {"type": "tool_result", "tool_use_id": call.id, "content": said, **flagged}

    tools = [dict(name=name, **entry["schema"]) for name, entry in registry.items()]
    for _ in range(50):
        reply = client.messages.create(model=MODEL, max_tokens=1024, system=system, tools=tools, messages=messages)
        messages.append({"role": "assistant", "content": reply.content})
        if reply.stop_reason != "tool_use":
            break
        messages.append({"role": "user", "content": [answered(b) for b in reply.content if b.type == "tool_use"]})
    return "".join(b.text for b in reply.content if b.type == "text")


def agent_turn_with_recursion(client, system, registry, messages, output_stream, tag_prefix=""):
    """One call, then itself again after the results; the blocks read as dicts (model_dump)."""
    tools = []
    for name in registry:
        tools.append({"name": name} | registry[name]["schema"])
    reply = client.messages.create(messages=messages, tools=tools, system=system, max_tokens=1024, model=MODEL)
    messages.append({"role": "assistant", "content": reply.content})
    blocks = [block.model_dump() for block in reply.content]
    if reply.stop_reason != "tool_use":
        return "".join(block["text"] for block in blocks if block["type"] == "text")
    results = []
    for block in (b for b in blocks if b["type"] == "tool_use"):
        said, failed = run_tool(registry, block["name"], block["input"])
        output_stream.write("[" + tag_prefix + ("tool-error" if failed else "tool") + "] " + block["name"] + "("
                            + str(block["input"]) + ") -> " + said + "\n")
        result = {"type": "tool_result", "tool_use_id": block["id"], "content": said}
        if failed:
            result["is_error"] = True
        results.append(result)
    messages.append({"role": "user", "content": results})
    return agent_turn_with_recursion(client, system, registry, messages, output_stream, tag_prefix)


def turn(client, system, registry, messages, output_stream, tag_prefix="", tools_from=None, run_from=None,
         prefix=None, printing=False, fresh=False, flag=True):
    """The course's turn with one thing done otherwise: the base of the wrong answers below."""
    tools_from = registry if tools_from is None else tools_from
    run_from = registry if run_from is None else run_from
    tag_prefix = tag_prefix if prefix is None else prefix
    history = list(messages) if fresh else messages
    tools = [{"name": name, **entry["schema"]} for name, entry in tools_from.items()]
    while True:
        reply = client.messages.create(model=MODEL, max_tokens=1024, system=system, tools=tools, messages=history)
        history.append({"role": "assistant", "content": reply.content})
        if reply.stop_reason != "tool_use":
            return "".join(block.text for block in reply.content if block.type == "text")
        results = []
        for block in (block for block in reply.content if block.type == "tool_use"):
            said, failed = run_tool(run_from, block.name, block.input)
            line = f"[{tag_prefix}{'tool-error' if failed else 'tool'}] {block.name}({block.input}) -> {said}"
            print(line) if printing else output_stream.write(line + "\n")
            result = {"type": "tool_result", "tool_use_id": block.id, "content": said}
            if failed and flag:
                result["is_error"] = True
            results.append(result)
        history.append({"role": "user", "content": results})


def agent_turn_ignoring_system(client, system, registry, messages, output_stream, tag_prefix=""):
    return turn(client, SYSTEM_PROMPT, registry, messages, output_stream, tag_prefix)


def agent_turn_offering_the_parents_tools(client, system, registry, messages, output_stream, tag_prefix=""):
    return turn(client, system, registry, messages, output_stream, tag_prefix, tools_from=PARENT_REGISTRY)


def agent_turn_running_the_parents_tools(client, system, registry, messages, output_stream, tag_prefix=""):
    return turn(client, system, registry, messages, output_stream, tag_prefix, run_from=PARENT_REGISTRY)


def agent_turn_ignoring_the_prefix(client, system, registry, messages, output_stream, tag_prefix=""):
    return turn(client, system, registry, messages, output_stream, tag_prefix, prefix="")


def agent_turn_printing_its_lines(client, system, registry, messages, output_stream, tag_prefix=""):
    return turn(client, system, registry, messages, output_stream, tag_prefix, printing=True)


def agent_turn_on_a_fresh_list(client, system, registry, messages, output_stream, tag_prefix=""):
    return turn(client, system, registry, messages, output_stream, tag_prefix, fresh=True)


def agent_turn_without_is_error(client, system, registry, messages, output_stream, tag_prefix=""):
    return turn(client, system, registry, messages, output_stream, tag_prefix, flag=False)


def agent_turn_with_sorted_tools(client, system, registry, messages, output_stream, tag_prefix=""):
    return turn(client, system, dict(sorted(registry.items())), messages, output_stream, tag_prefix,
                run_from=registry)


def agent_turn_without_return(client, system, registry, messages, output_stream, tag_prefix=""):
    turn(client, system, registry, messages, output_stream, tag_prefix)


def test_agent_turn_passes_on_the_reference_and_unusual_answers():
    passes("9.2", twin(subagent.agent_turn))
    passes("9.2", agent_turn_with_a_helper)
    passes("9.2", agent_turn_with_recursion)


def test_agent_turn_the_course_function_is_refused():
    fails("9.2", subagent.agent_turn, "course's own")


def test_agent_turn_stub_is_not_written_yet():
    fails("9.2", stub, "not written yet")


@pytest.mark.parametrize("wrong, words", [
    (agent_turn_ignoring_system, ("did not send the system prompt agent_turn was handed", "system=system",
                                  "SYSTEM_PROMPT is only the parent's")),
    (agent_turn_offering_the_parents_tools, ("offered the tools ['calculator'], not those of the registry",
                                             "['calculator', 'price']", "registry.items()")),
    (agent_turn_running_the_parents_tools, ("a subagent's turn", "should get 'No documents matched.",
                                            "run_tool(registry, block.name, block.input)", "not PARENT_REGISTRY")),
    (agent_turn_ignoring_the_prefix, ("the lines written have no tag_prefix", "\"[tool] search({'query': 'creator'})",
                                      "with tag_prefix='subagent:'", "inside the brackets")),
    (agent_turn_printing_its_lines, ("was printed with print(), not written to output_stream",
                                     "output_stream.write")),
    (agent_turn_on_a_fresh_list, ("messages still holds only the 1 message(s)", "the list passed in")),
    (agent_turn_without_is_error, ("run_tool said this call failed", "\"is_error\": True", "leave the key out")),
    (agent_turn_with_sorted_tools, ("did not offer the registry's tools as the exercise gives them, in its order",
                                    "tools[0]", "registry.items()")),
    (agent_turn_without_return, ("agent_turn returned null", "it should return the text of the model's last reply",
                                         "19 × 21 cups: 399 cups.")),
])
def test_agent_turn_fails_on_typical_mistakes(wrong, words):
    fails("9.2", wrong, *words)


# --- 9.3 research --------------------------------------------------------------------------------------------------


def research_in_one_line(question, client, output_stream):
    return agent_turn(client, RESEARCHER_PROMPT, RESEARCHER_REGISTRY, [dict(role="user", content=question)],
                      output_stream, "subagent:")


def research_by_keyword(question, client, output_stream):
    """Every argument by keyword, the history named and kept for a look before it is dropped."""
    history = []
    history.append({"content": question, "role": "user"})
    answer = agent_turn(tag_prefix="subagent:", registry=RESEARCHER_REGISTRY, system=RESEARCHER_PROMPT,
                        messages=history, output_stream=output_stream, client=client)
    assert history[0]["content"] == question
    return answer


SHARED_HISTORY = []


def research_reusing_a_history(question, client, output_stream):
    SHARED_HISTORY.append({"role": "user", "content": question})
    return agent_turn(client, RESEARCHER_PROMPT, RESEARCHER_REGISTRY, SHARED_HISTORY, output_stream,
                      tag_prefix="subagent:")


def research_with_the_parents_prompt(question, client, output_stream):
    return agent_turn(client, SYSTEM_PROMPT, RESEARCHER_REGISTRY, [{"role": "user", "content": question}],
                      output_stream, tag_prefix="subagent:")


def research_with_the_parents_registry(question, client, output_stream):
    return agent_turn(client, RESEARCHER_PROMPT, PARENT_REGISTRY, [{"role": "user", "content": question}],
                      output_stream, tag_prefix="subagent:")


def research_without_the_prefix(question, client, output_stream):
    return agent_turn(client, RESEARCHER_PROMPT, RESEARCHER_REGISTRY, [{"role": "user", "content": question}],
                      output_stream)


def research_returning_the_messages(question, client, output_stream):
    messages = [{"role": "user", "content": question}]
    agent_turn(client, RESEARCHER_PROMPT, RESEARCHER_REGISTRY, messages, output_stream, tag_prefix="subagent:")
    return messages


def research_returning_the_transcript(question, client, output_stream):
    steps = io.StringIO()
    answer = agent_turn(client, RESEARCHER_PROMPT, RESEARCHER_REGISTRY, [{"role": "user", "content": question}],
                        steps, tag_prefix="subagent:")
    output_stream.write(steps.getvalue())
    return steps.getvalue() + answer


def test_research_passes_on_the_reference_and_unusual_answers():
    passes("9.3", twin(subagent.research))
    passes("9.3", research_in_one_line)
    passes("9.3", research_by_keyword)


def test_research_the_course_function_is_refused():
    fails("9.3", subagent.research, "course's own")


def test_research_stub_is_not_written_yet():
    fails("9.3", stub, "not written yet")


@pytest.mark.parametrize("wrong, words", [
    (research_reusing_a_history, ("research called again, with another question",
                                  "earlier messages before the question",
                                  "\"Who founded Halden Robotics?\"", "inside research, at each call")),
    (research_with_the_parents_prompt, ("the parent's system prompt, SYSTEM_PROMPT", "expected RESEARCHER_PROMPT")),
    (research_with_the_parents_registry, ("offered the tools ['calculator']", "RESEARCHER_REGISTRY, ['search']")),
    (research_without_the_prefix, ("the subagent's lines have no prefix", "\"[tool] search({'query': 'creator'})",
                                   "tag_prefix=\"subagent:\"")),
    (research_returning_the_messages, ("research returned a list of 6 items", "not the subagent's answer")),
    (research_returning_the_transcript, ("which holds more than the subagent's answer",
                                         "'Halden Robotics was founded in 2019 by Dara Okonkwo",
                                         "never the searching")),
])
def test_research_fails_on_typical_mistakes(wrong, words):
    SHARED_HISTORY.clear()
    fails("9.3", wrong, *words)


# --- 9.4 run -------------------------------------------------------------------------------------------------------


def session(input_stream, output_stream, client, system, delegate):
    """The parent's REPL, its research entry's function made by `delegate(client, output_stream, messages)`: the base
    of the answers below."""
    messages = []
    registry = {**PARENT_REGISTRY, "research": {"function": delegate(client, output_stream, messages),
                                                "schema": RESEARCH_SCHEMA}}
    while True:
        output_stream.write("User> ")
        line = input_stream.readline()
        if not line.strip():
            return
        messages.append({"role": "user", "content": line.strip()})
        output_stream.write(f"Agent> {agent_turn(client, system, registry, messages, output_stream)}\n")


def run_with_a_lambda(input_stream, output_stream, client=None, system=SYSTEM_PROMPT):
    """A lambda for research; the lines read by iterating over the stream."""
    client = client or looplab.client("09_subagent")
    registry = dict(PARENT_REGISTRY)
    registry["research"] = {"schema": RESEARCH_SCHEMA, "function": lambda question: research(question, client,
                                                                                             output_stream)}
    history = []
    output_stream.write("User> ")
    for line in input_stream:
        if line.strip() == "":
            break
        history += [{"role": "user", "content": line.strip()}]
        reply = agent_turn(client, system, registry, history, output_stream)
        output_stream.write("Agent> " + reply + "\n" + "User> ")


def run_with_a_partial(input_stream, output_stream, client=None, system=SYSTEM_PROMPT):
    """functools.partial binds the client and the stream; the delegate takes the question by keyword too."""
    import functools

    client = client if client is not None else looplab.client("09_subagent")
    delegate = functools.partial(research, client=client, output_stream=output_stream)
    session(input_stream, output_stream, client, system, lambda *_: delegate)


def run_sharing_the_parents_history(input_stream, output_stream, client=None, system=SYSTEM_PROMPT):
    def delegate(client, output_stream, messages):
        def research_here(question):
            messages.append({"role": "user", "content": question})
            return agent_turn(client, RESEARCHER_PROMPT, RESEARCHER_REGISTRY, messages, output_stream, "subagent:")
        return research_here
    session(input_stream, output_stream, client, system, delegate)


def run_without_its_client(input_stream, output_stream, client=None, system=SYSTEM_PROMPT):
    session(input_stream, output_stream, client, system,
            lambda client, output_stream, messages: lambda question: research(question, None, output_stream))


def run_with_untagged_lines(input_stream, output_stream, client=None, system=SYSTEM_PROMPT):
    session(input_stream, output_stream, client, system,
            lambda client, output_stream, messages: lambda question: agent_turn(
                client, RESEARCHER_PROMPT, RESEARCHER_REGISTRY, [{"role": "user", "content": question}], output_stream))


def run_with_the_subagent_on_screen(input_stream, output_stream, client=None, system=SYSTEM_PROMPT):
    session(input_stream, output_stream, client, system,
            lambda client, output_stream, messages: lambda question: research(question, client, sys.stdout))


def run_researching_every_line(input_stream, output_stream, client=None, system=SYSTEM_PROMPT):
    registry = {**PARENT_REGISTRY, "research": {"function": lambda question: research(question, client, output_stream),
                                                "schema": RESEARCH_SCHEMA}}
    messages = []
    while True:
        output_stream.write("User> ")
        line = input_stream.readline().strip()
        if not line:
            return
        notes = research(line, client, output_stream)
        messages.append({"role": "user", "content": f"{line}\n(notes: {notes})"})
        output_stream.write(f"Agent> {agent_turn(client, system, registry, messages, output_stream)}\n")


def run_ignoring_system(input_stream, output_stream, client=None, system=SYSTEM_PROMPT):
    session(input_stream, output_stream, client, SYSTEM_PROMPT,
            lambda client, output_stream, messages: lambda question: research(question, client, output_stream))


def run_past_an_empty_line(input_stream, output_stream, client=None, system=SYSTEM_PROMPT):
    registry = {**PARENT_REGISTRY, "research": {"function": lambda question: research(question, client, output_stream),
                                                "schema": RESEARCH_SCHEMA}}
    messages = []
    for line in input_stream.readlines():
        output_stream.write("User> ")
        if line.strip():
            messages.append({"role": "user", "content": line.strip()})
            output_stream.write(f"Agent> {agent_turn(client, system, registry, messages, output_stream)}\n")


def run_without_the_calculator(input_stream, output_stream, client=None, system=SYSTEM_PROMPT):
    messages = []
    registry = {"research": {"function": lambda question: research(question, client, output_stream),
                             "schema": RESEARCH_SCHEMA}}
    while (line := (output_stream.write("User> "), input_stream.readline())[1].strip()):
        messages.append({"role": "user", "content": line})
        output_stream.write(f"Agent> {agent_turn(client, system, registry, messages, output_stream)}\n")


def run_printing_the_answers(input_stream, output_stream, client=None, system=SYSTEM_PROMPT):
    registry = {**PARENT_REGISTRY, "research": {"function": lambda question: research(question, client, output_stream),
                                                "schema": RESEARCH_SCHEMA}}
    messages = []
    while True:
        line = input_stream.readline().strip()
        if not line:
            return
        messages.append({"role": "user", "content": line})
        print("Agent>", agent_turn(client, system, registry, messages, output_stream))


def test_run_passes_on_the_reference_and_unusual_answers():
    passes("9.4", twin(subagent.run))
    passes("9.4", run_with_a_lambda)
    passes("9.4", run_with_a_partial)


def test_run_the_course_function_is_refused():
    fails("9.4", subagent.run, "course's own")


def test_run_stub_is_not_written_yet():
    fails("9.4", stub, "not written yet")


@pytest.mark.parametrize("wrong, words", [
    (run_sharing_the_parents_history, ("the parent delegated 'Who founded Halden Robotics, and when?'",
                                       "should hold that question alone", "never shares the parent's messages")),
    (run_without_its_client, ("the subagent never called the model run was handed",
                              "raised AttributeError", "inside run, where client and output_stream are known")),
    (run_with_untagged_lines, ("the subagent's line is \"[tool] search({'query': 'creator'})",
                               "without its prefix", "tag_prefix=\"subagent:\"")),
    (run_with_the_subagent_on_screen, ("went to the screen, not to run's output_stream",
                                       "the output_stream run was handed")),
    (run_researching_every_line, ("the subagent ran though the parent's last reply called no research tool",
                                  "Only the parent's model decides to delegate")),
    (run_ignoring_system, ("the parent's model call 1 did not send the system prompt run was handed",
                           "SYSTEM_PROMPT is only its default")),
    (run_past_an_empty_line, ("called again after the empty line", "an empty line ends the session")),
    (run_without_the_calculator, ("offered the tools ['research']", "PARENT_REGISTRY plus research")),
    (run_printing_the_answers, ("the output has no line 'Agent> Dara Okonkwo founded it in 2019", "for turn 1",
                                "output_stream.write(f\"Agent> {reply}\\n\")")),
])
def test_run_fails_on_typical_mistakes(wrong, words):
    fails("9.4", wrong, *words)
