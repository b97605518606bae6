"""The checks of notebook 6 (when calls go wrong): they pass on good code and fail, saying why, on typical mistakes.

The solution notebook runs once, offline, in a folder of its own (`ran`): its functions are checked here,
and the agent_robust.py it writes is run as a script (tests/test_series_stages.py runs the series' own
stage-008 tests against it).
"""

import inspect
import io
import os
import runpy
import sys
from pathlib import Path

import pytest

from looplab import robust
from looplab.client import MODEL, offline_environ
from looplab.course import COURSE
from looplab.loop import SYSTEM_PROMPT
from looplab.robust import TOOL_REGISTRY, TOOLS, run_tool
from tests.check_helpers import fails, passes, stub, twin
from tests.notebook_code import solution_namespace

STEM = "06_when_calls_go_wrong"


@pytest.fixture(scope="module")
def ran(tmp_path_factory):
    """The solution notebook run once, offline, in a folder of its own: (its namespace, that folder)."""
    folder = tmp_path_factory.mktemp("notebook6")
    before = Path.cwd()
    os.chdir(folder)
    try:
        return solution_namespace(STEM), folder
    finally:
        os.chdir(before)


def test_the_exercises_and_their_points():
    assert [(e.id, e.name, e.points) for e in COURSE.notebook(STEM).exercises] == [
        ("6.1", "run_tool", 3), ("6.2", "agent_turn", 3), ("6.3", "agent_turn", 2)]
    for number in ("6.1", "6.2", "6.3"):
        assert 2 <= len(COURSE.hints(number)) <= 3


def test_the_notebooks_registry_is_the_courses(ran):
    """The recording is matched on the request: the notebook's TOOLS are the course's, and its calculator careless."""
    namespace, _ = ran
    assert namespace["TOOLS"] == TOOLS
    assert namespace["run_tool"]("calculator", {"expression": "1 / 0"})[1] is True
    with pytest.raises(ZeroDivisionError):
        namespace["calculator"]("1 / 0")


# --- 6.1 run_tool ----------------------------------------------------------------------------------------


def test_run_tool_passes_on_the_reference_and_the_solution(ran):
    passes("6.1", twin(robust.run_tool))
    passes("6.1", ran[0]["run_tool"])


def run_tool_with_the_schema(name, tool_input):
    """Right in another way: the arguments checked against the tool's JSON schema, not the signature."""
    try:
        entry = TOOL_REGISTRY[name]
    except KeyError:
        return f"Error: unknown tool {name}", True
    if not isinstance(tool_input, dict):
        return f"Error: bad arguments for {name!r}: the input must be an object", True
    schema = entry["schema"]["input_schema"]
    unknown = set(tool_input) - set(schema.get("properties", {}))
    missing = set(schema.get("required", [])) - set(tool_input)
    if unknown or missing:
        return f"Error: bad arguments for {name!r}: unknown {sorted(unknown)}, missing {sorted(missing)}", True
    try:
        return str(entry["function"](**tool_input)), False
    except BaseException as error:  # noqa: B036 - broader than needed, still right
        return f"Error: {type(error).__name__}: {error}", True


def test_run_tool_may_check_the_schema_instead_of_the_signature():
    passes("6.1", run_tool_with_the_schema)


def run_tool_catching_only_type_error(name, tool_input):
    """The series' dispatcher before stage 008: bad arguments caught, a raising tool not."""
    if name not in TOOL_REGISTRY:
        return f"Error: unknown tool {name!r}", True
    if not isinstance(tool_input, dict):
        return f"Error: bad arguments for {name!r}: the input must be an object", True
    try:
        return str(TOOL_REGISTRY[name]["function"](**tool_input)), False
    except TypeError as error:
        return f"Error: bad arguments for {name!r}: {error}", True


def run_tool_type_error_is_bad_arguments(name, tool_input):
    """Every exception caught, but a TypeError from inside the tool called bad arguments."""
    if name not in TOOL_REGISTRY:
        return f"Error: unknown tool {name!r}", True
    if not isinstance(tool_input, dict):
        return f"Error: bad arguments for {name!r}: the input must be an object", True
    try:
        return str(TOOL_REGISTRY[name]["function"](**tool_input)), False
    except TypeError as error:
        return f"Error: bad arguments for {name!r}: {error}", True
    except Exception as error:
        return f"Error: {type(error).__name__}: {error}", True


def run_tool_returning_text(name, tool_input):
    """Notebook 5's shape: the text alone."""
    return run_tool_with_the_schema(name, tool_input)[0]


def run_tool_without_the_object_test(name, tool_input):
    if name not in TOOL_REGISTRY:
        return f"Error: unknown tool {name!r}", True
    function = TOOL_REGISTRY[name]["function"]
    try:
        arguments = inspect.signature(function).bind(**tool_input)
    except TypeError as error:
        return f"Error: bad arguments for {name!r}: {error}", True
    try:
        return str(function(*arguments.args, **arguments.kwargs)), False
    except Exception as error:
        return f"Error: {type(error).__name__}: {error}", True


def run_tool_flag_as_a_word(name, tool_input):
    text, failed = run_tool_with_the_schema(name, tool_input)
    return text, "error" if failed else ""


def run_tool_without_error_prefix(name, tool_input):
    text, failed = run_tool_with_the_schema(name, tool_input)
    return (text.removeprefix("Error: ") if failed else text), failed


def test_run_tool_stub_is_not_written_yet():
    fails("6.1", stub, "not written yet")


@pytest.mark.parametrize("wrong, words", [
    (run_tool_catching_only_type_error, "raised ZeroDivisionError"),
    (run_tool_type_error_is_bad_arguments, "came from inside the tool"),
    (run_tool_returning_text, "should return a pair"),
    (run_tool_without_the_object_test, "must be an object"),
    (run_tool_flag_as_a_word, "True or False"),
    (run_tool_without_error_prefix, "should start with 'Error: '"),
])
def test_run_tool_typical_mistakes_fail_with_the_right_message(wrong, words):
    fails("6.1", wrong, words)


# --- 6.2 agent_turn --------------------------------------------------------------------------------------


def test_agent_turn_passes_on_the_reference_and_the_solution(ran):
    passes("6.2", twin(robust.agent_turn))
    passes("6.3", twin(robust.agent_turn))
    solution = solution_namespace(STEM, until="6.2")  # the 6.2 version, before the guard
    passes("6.2", solution["agent_turn"])
    passes("6.2", ran[0]["agent_turn"])  # the guard's version passes 6.2 too
    passes("6.3", ran[0]["agent_turn"])


def _results(reply, flag):
    return [flag({"type": "tool_result", "tool_use_id": block.id}, *run_tool(block.name, block.input))
            for block in reply.content if block.type == "tool_use"]


def _turn(flag, max_iterations=10):
    """agent_turn with the results flagged by `flag(result, text, is_error)`."""
    def agent_turn(client, messages, max_iterations=max_iterations, system=SYSTEM_PROMPT):
        for _ in range(max_iterations):
            reply = client.messages.create(model=MODEL, max_tokens=1024, system=system, tools=TOOLS, messages=messages)
            messages.append({"role": "assistant", "content": reply.content})
            if reply.stop_reason != "tool_use":
                return "".join(block.text for block in reply.content if block.type == "text")
            messages.append({"role": "user", "content": _results(reply, flag)})
        raise RuntimeError(f"still calling tools after {max_iterations} calls")
    return agent_turn


def agent_turn_flagged_by_unpacking(client, messages, max_iterations=10, system=SYSTEM_PROMPT):
    """Right in another way: the flag unpacked into the result, only on a failure."""
    flag = _turn(lambda result, text, failed: {**result, "content": text, **({"is_error": True} if failed else {})})
    return flag(client, messages, max_iterations, system)


def agent_turn_sending_is_error_false(client, messages, max_iterations=10, system=SYSTEM_PROMPT):
    return _turn(lambda result, text, failed: {**result, "content": text, "is_error": failed})(
        client, messages, max_iterations, system)


def agent_turn_never_flagging(client, messages, max_iterations=10, system=SYSTEM_PROMPT):
    return _turn(lambda result, text, failed: {**result, "content": text})(client, messages, max_iterations, system)


def agent_turn_calling_the_function(client, messages, max_iterations=10, system=SYSTEM_PROMPT):
    """The registry's function called by the loop itself: an exception escapes the harness."""
    for _ in range(max_iterations):
        reply = client.messages.create(model=MODEL, max_tokens=1024, system=system, tools=TOOLS, messages=messages)
        messages.append({"role": "assistant", "content": reply.content})
        if reply.stop_reason != "tool_use":
            return "".join(block.text for block in reply.content if block.type == "text")
        messages.append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": block.id,
             "content": TOOL_REGISTRY[block.name]["function"](**block.input)}
            for block in reply.content if block.type == "tool_use"]})
    raise RuntimeError("cap")


def test_agent_turn_may_flag_in_its_own_way():
    passes("6.2", agent_turn_flagged_by_unpacking)


def test_agent_turn_stub_is_not_written_yet():
    fails("6.2", stub, "not written yet")
    fails("6.3", stub, "not written yet")


@pytest.mark.parametrize("wrong, words", [
    (agent_turn_sending_is_error_false, "leave the key out on a success"),
    (agent_turn_never_flagging, "it should be True"),
    (agent_turn_calling_the_function, "nothing a tool does may end the turn"),
])
def test_agent_turn_typical_mistakes_fail_with_the_right_message(wrong, words):
    fails("6.2", wrong, words)


# --- 6.3 the repeat guard -----------------------------------------------------------------------------------


def _guarded(on_repeat, same=lambda call, failed, made: (call.name, call.input) in failed, repeats_allowed=0):
    """agent_turn with a guard: `on_repeat(messages, reply, calls)` ends the turn at a repeat found by `same`."""
    def agent_turn(client, messages, max_iterations=10, system=SYSTEM_PROMPT):
        failed, made, seen = [], [], 0
        for _ in range(max_iterations):
            reply = client.messages.create(model=MODEL, max_tokens=1024, system=system, tools=TOOLS, messages=messages)
            messages.append({"role": "assistant", "content": reply.content})
            if reply.stop_reason != "tool_use":
                return "".join(block.text for block in reply.content if block.type == "text")
            calls = [block for block in reply.content if block.type == "tool_use"]
            repeated = [call for call in calls if same(call, failed, made)]
            made += [(call.name, call.input) for call in calls]
            if repeated:
                seen += 1
                if seen > repeats_allowed:
                    return on_repeat(messages, reply, repeated)
            results = []
            for call in calls:
                text, is_error = run_tool(call.name, call.input)
                results.append({"type": "tool_result", "tool_use_id": call.id, "content": text,
                                **({"is_error": True} if is_error else {})})
                if is_error:
                    failed.append((call.name, call.input))
            messages.append({"role": "user", "content": results})
        raise RuntimeError("cap")
    return agent_turn


def _pop_and_say(messages, reply, repeated):
    messages.pop()  # the repeating reply leaves the history
    return f"Stopped: {repeated[0].name} failed again with the same input."


def _leave_dangling(messages, reply, repeated):
    return f"Stopped: {repeated[0].name} repeated."


def guard_popping_the_reply(client, messages, max_iterations=10, system=SYSTEM_PROMPT):
    """Right in another way: the repeating reply taken out of the history, the line in other words."""
    return _guarded(_pop_and_say)(client, messages, max_iterations, system)


def guard_leaving_the_call_dangling(client, messages, max_iterations=10, system=SYSTEM_PROMPT):
    return _guarded(_leave_dangling)(client, messages, max_iterations, system)


def guard_on_any_repeat(client, messages, max_iterations=10, system=SYSTEM_PROMPT):
    """Stops at any call made before, failed or not."""
    return _guarded(_pop_and_say, same=lambda call, failed, made: (call.name, call.input) in made)(
        client, messages, max_iterations, system)


def guard_by_name_only(client, messages, max_iterations=10, system=SYSTEM_PROMPT):
    """Stops at any call of a tool that failed once, whatever its input."""
    return _guarded(_pop_and_say, same=lambda call, failed, made: call.name in [name for name, _ in failed])(
        client, messages, max_iterations, system)


def guard_after_two_repeats(client, messages, max_iterations=10, system=SYSTEM_PROMPT):
    return _guarded(_pop_and_say, repeats_allowed=1)(client, messages, max_iterations, system)


def guard_saying_nothing(client, messages, max_iterations=10, system=SYSTEM_PROMPT):
    _guarded(_pop_and_say)(client, messages, max_iterations, system)
    return "Stopped."


def test_the_guard_may_take_the_repeating_reply_out():
    passes("6.3", guard_popping_the_reply)


@pytest.mark.parametrize("wrong, words", [
    (agent_turn_flagged_by_unpacking, "it should stop at the first repeat"),
    (guard_leaving_the_call_dangling, "unanswered"),
    (guard_on_any_repeat, "the same call twice, both succeeding"),
    (guard_by_name_only, "three different calls of one tool"),
    (guard_after_two_repeats, "where it should stop"),
    (guard_saying_nothing, "names the tool"),
])
def test_repeat_guard_typical_mistakes_fail_with_the_right_message(wrong, words):
    fails("6.3", wrong, words)


# --- the program (the series' own stage-008 tests run against it in tests/test_series_stages.py) ------------


def test_agent_robust_runs_offline_with_one_line_for_a_question_not_recorded(ran, monkeypatch, capsys):
    """Run as a script (in this process: the program is the module's __main__), a line the recording lacks gets one
    line; the recorded question is answered, its failed call as [tool-error], the corrected one as [tool]."""
    namespace, folder = ran
    monkeypatch.setattr(sys, "stdin", io.StringIO(f"What is 2 + 2?\n{namespace['RECOVERY_QUESTION']}\n"))
    with offline_environ():
        runpy.run_path(str(folder / "agent_robust.py"), run_name="__main__")
    said = capsys.readouterr().out.split("User> ")
    assert said[1].count("\n") == 1 and said[1].startswith("Agent> (Not recorded offline"), said[1]
    assert said[2].startswith("[tool-error] get_weather({'town': 'Tokyo'}) -> Error: bad arguments for 'get_weather'")
    assert "\n[tool] get_weather({'city': 'Tokyo'}) -> Weather in Tokyo: 24°C, clear skies\nAgent> " in said[2]
    assert said[-1] == ""  # nothing after the last prompt
    assert namespace["result"].returncode == 0 and "[tool-error]" in namespace["result"].stdout  # the notebook's own run
