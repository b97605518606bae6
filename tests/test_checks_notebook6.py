"""The checks of notebook 6 (when calls go wrong): they pass on good code and fail, saying why, on typical mistakes.

The solution notebook runs once, offline, in a folder of its own (`ran`): its functions are checked here,
and the agent_robust.py it writes is run as a script (tests/test_series_stages.py runs the series' own
stage-008 tests against it).
"""

import inspect
import io
import json
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


FUNCTIONS = {name: entry["function"] for name, entry in TOOL_REGISTRY.items()}  # copied out once, when defined


def run_tool_with_functions_copied_once(name, tool_input):
    """The registry's functions copied out when the cell ran: the tools added to it later are unknown to it."""
    if name not in FUNCTIONS:
        return f"Error: unknown tool {name!r}", True
    if not isinstance(tool_input, dict):
        return f"Error: bad arguments for {name!r}: the input must be an object", True
    try:
        arguments = inspect.signature(FUNCTIONS[name]).bind(**tool_input)
    except TypeError as error:
        return f"Error: bad arguments for {name!r}: {error}", True
    try:
        return str(FUNCTIONS[name](*arguments.args, **arguments.kwargs)), False
    except Exception as error:
        return f"Error: {name!r} raised {type(error).__name__}: {error}", True


KEPT = {}  # each tool's function, as it was at its first call


def run_tool_keeping_each_function(name, tool_input):
    """Each tool's function kept from its first call (a cache by name): a function swapped in the registry later
    is never called."""
    if name not in TOOL_REGISTRY:
        return f"Error: unknown tool {name!r}", True
    if not isinstance(tool_input, dict):
        return f"Error: bad arguments for {name!r}: the input must be an object", True
    function = KEPT.setdefault(name, TOOL_REGISTRY[name]["function"])
    try:
        arguments = inspect.signature(function).bind(**tool_input)
    except TypeError as error:
        return f"Error: bad arguments for {name!r}: {error}", True
    try:
        return str(function(*arguments.args, **arguments.kwargs)), False
    except Exception as error:
        return f"Error: {name!r} raised {type(error).__name__}: {error}", True


def run_tool_passing_by_position(name, tool_input):
    """The arguments checked by name, then passed by position, in the order the model wrote its keys."""
    if name not in TOOL_REGISTRY:
        return f"Error: unknown tool {name!r}", True
    if not isinstance(tool_input, dict):
        return f"Error: bad arguments for {name!r}: the input must be an object", True
    function = TOOL_REGISTRY[name]["function"]
    try:
        inspect.signature(function).bind(**tool_input)
    except TypeError as error:
        return f"Error: bad arguments for {name!r}: {error}", True
    try:
        return str(function(*tool_input.values())), False
    except Exception as error:
        return f"Error: {name!r} raised {type(error).__name__}: {error}", True


def run_tool_with_a_key_error_for_unknown(name, tool_input):
    """The lookup and the call under one `except KeyError`: a KeyError raised inside a tool is taken for a name
    the registry lacks."""
    if not isinstance(tool_input, dict):
        return f"Error: bad arguments for {name!r}: the input must be an object", True
    try:
        function = TOOL_REGISTRY[name]["function"]
        try:
            arguments = inspect.signature(function).bind(**tool_input)
        except TypeError as error:
            return f"Error: bad arguments for {name!r}: {error}", True
        return str(function(*arguments.args, **arguments.kwargs)), False
    except KeyError:
        return f"Error: unknown tool {name!r}", True
    except Exception as error:
        return f"Error: {name!r} raised {type(error).__name__}: {error}", True


def run_tool_with_a_catch_all(name, tool_input):
    """Every failure, whatever it was, called an unknown tool."""
    try:
        return str(TOOL_REGISTRY[name]["function"](**tool_input)), False
    except Exception:
        return f"Error: unknown tool {name!r}", True


def run_tool_returning_the_result_as_it_is(name, tool_input):
    """A success handed back as the tool returned it: a number stays a number."""
    if name not in TOOL_REGISTRY:
        return f"Error: unknown tool {name!r}", True
    if not isinstance(tool_input, dict):
        return f"Error: bad arguments for {name!r}: the input must be an object", True
    function = TOOL_REGISTRY[name]["function"]
    try:
        arguments = inspect.signature(function).bind(**tool_input)
    except TypeError as error:
        return f"Error: bad arguments for {name!r}: {error}", True
    try:
        return function(*arguments.args, **arguments.kwargs), False
    except Exception as error:
        return f"Error: {name!r} raised {type(error).__name__}: {error}", True


def run_tool_taking_none_for_no_arguments(name, tool_input):
    """None taken for "no arguments": the tool runs, though None is no object."""
    return run_tool_with_the_schema(name, {} if tool_input is None else tool_input)


def run_tool_writing_the_exception_as_its_repr(name, tool_input):
    """The exception named by its repr, RuntimeError('boom'): type and message, not in the form `Type: message`."""
    if name not in TOOL_REGISTRY:
        return f"Error: unknown tool {name!r}", True
    if not isinstance(tool_input, dict):
        return f"Error: bad arguments for {name!r}: the input must be an object", True
    function = TOOL_REGISTRY[name]["function"]
    try:
        arguments = inspect.signature(function).bind(**tool_input)
    except TypeError as error:
        return f"Error: bad arguments for {name!r}: {error}", True
    try:
        return str(function(*arguments.args, **arguments.kwargs)), False
    except Exception as error:
        return f"Error: {name!r} raised {error!r}", True


def run_tool_in_its_own_words(name, tool_input):
    """Right in other ways: the lookup alone under `except KeyError`, the input tested with `type(...) is dict`,
    the bound arguments passed as a dict, the result made text with an f-string, and the exception said in words of
    its own around `Type: message`."""
    try:
        entry = TOOL_REGISTRY[name]
    except KeyError:
        return f"Error: unknown tool {name!r}. Known tools: {sorted(TOOL_REGISTRY)}", True
    if type(tool_input) is not dict:
        return f"Error: bad arguments for {name!r}: {tool_input!r} is no JSON object; the input must be an object", True
    try:
        bound = inspect.signature(entry["function"]).bind(**tool_input)
    except TypeError as error:
        return f"Error: bad arguments for {name!r} ({error})", True
    try:
        result = entry["function"](**bound.arguments)
    except BaseException as error:  # noqa: B036 - broader than needed, still right
        return f"Error: the tool {name} failed with {type(error).__name__}: {error}. Try another input.", True
    return f"{result}", False


def test_run_tool_may_be_written_in_its_own_words():
    passes("6.1", run_tool_in_its_own_words)


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


@pytest.mark.parametrize("wrong, words", [
    (run_tool_with_functions_copied_once, "reads a copy of the registry"),
    (run_tool_with_functions_copied_once, "the registry must be read when the call comes"),
    (run_tool_keeping_each_function, "the tool's function was swapped in TOOL_REGISTRY"),
    (run_tool_passing_by_position, "passed by position"),
    (run_tool_with_a_key_error_for_unknown, "'read_setting' is in TOOL_REGISTRY"),
    (run_tool_with_a_catch_all, "'get_weather' is in TOOL_REGISTRY: 'unknown tool' is only for a name"),
    (run_tool_returning_the_result_as_it_is, "the tool's result is of type int"),
    (run_tool_taking_none_for_no_arguments, "it ran the tool; an input that is not a dict (NoneType)"),
    (run_tool_writing_the_exception_as_its_repr, "as Type: message, 'ZeroDivisionError: division by zero'"),
])
def test_run_tool_issue_35_mistakes_fail_with_the_right_message(wrong, words):
    """Wrong answers a learner found passing (issue 35), one per class: each fails, saying what it got wrong."""
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


def _turn_with(*, system_sent=None, answer=None, ends=None, results=None):
    """agent_turn with one part written another way: the system it sends (given the one it was handed), the text
    it returns, whether a reply ends the turn, the results it makes of a reply's calls."""
    def agent_turn(client, messages, max_iterations=10, system=SYSTEM_PROMPT):
        for _ in range(max_iterations):
            reply = client.messages.create(model=MODEL, max_tokens=1024, system=system_sent(system) if system_sent
                                           else system, tools=TOOLS, messages=messages)
            messages.append({"role": "assistant", "content": reply.content})
            if ends(reply) if ends else reply.stop_reason != "tool_use":
                return answer(reply) if answer else "".join(b.text for b in reply.content if b.type == "text")
            calls = [block for block in reply.content if block.type == "tool_use"]
            messages.append({"role": "user", "content": results(calls) if results else _results(reply, _flagged)})
        raise RuntimeError(f"still calling tools after {max_iterations} calls")
    return agent_turn


def _flagged(result, text, failed):
    return {**result, "content": text, **({"is_error": True} if failed else {})}


def agent_turn_ignoring_system(client, messages, max_iterations=10, system=SYSTEM_PROMPT):
    """SYSTEM_PROMPT sent whatever agent_turn is handed."""
    return _turn_with(system_sent=lambda handed: SYSTEM_PROMPT)(client, messages, max_iterations, system)


def agent_turn_answering_with_the_first_block(client, messages, max_iterations=10, system=SYSTEM_PROMPT):
    """The answer taken from the reply's first block."""
    return _turn_with(answer=lambda reply: reply.content[0].text)(client, messages, max_iterations, system)


def agent_turn_ending_at_end_turn_only(client, messages, max_iterations=10, system=SYSTEM_PROMPT):
    """Only 'end_turn' ends the turn: a reply cut off at max_tokens goes round again."""
    return _turn_with(ends=lambda reply: reply.stop_reason == "end_turn")(client, messages, max_iterations, system)


def agent_turn_answering_each_tool_once(client, messages, max_iterations=10, system=SYSTEM_PROMPT):
    """The calls gathered by their tool's name: two calls of one tool get one result."""
    def results(calls):
        by_name = {call.name: call for call in calls}
        return [_flagged({"type": "tool_result", "tool_use_id": call.id}, *run_tool(call.name, call.input))
                for call in by_name.values()]
    return _turn_with(results=results)(client, messages, max_iterations, system)


def agent_turn_flagging_by_the_text(client, messages, max_iterations=10, system=SYSTEM_PROMPT):
    """is_error guessed from the text's "Error: " prefix, run_tool's flag left aside."""
    def results(calls):
        texts = [(call, run_tool(call.name, call.input)[0]) for call in calls]
        return [_flagged({"type": "tool_result", "tool_use_id": call.id}, text, text.startswith("Error: "))
                for call, text in texts]
    return _turn_with(results=results)(client, messages, max_iterations, system)


def agent_turn_in_its_own_words(client, messages, max_iterations=10, system=SYSTEM_PROMPT):
    """Right in other ways: the system sent as a list of text blocks, the words read with getattr, the turn ended
    by any stop_reason but 'tool_use' (written the other way round), the results gathered by id."""
    def results(calls):
        by_id = {}
        for call in calls:
            text, failed = run_tool(call.name, call.input)
            by_id[call.id] = {"type": "tool_result", "tool_use_id": call.id,
                              "content": [{"type": "text", "text": text}]}
            if failed:
                by_id[call.id].update(is_error=True)
        return list(by_id.values())
    return _turn_with(system_sent=lambda handed: [{"type": "text", "text": handed}],
                      answer=lambda reply: "".join(getattr(block, "text", "") for block in reply.content),
                      ends=lambda reply: not reply.stop_reason == "tool_use", results=results)(
        client, messages, max_iterations, system)


def test_agent_turn_may_be_written_in_its_own_words():
    passes("6.2", agent_turn_in_its_own_words)


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


@pytest.mark.parametrize("wrong, words", [
    (agent_turn_ignoring_system, "did not send the system prompt agent_turn was handed"),
    (agent_turn_answering_with_the_first_block, "never content[0]"),
    (agent_turn_ending_at_end_turn_only, "stop_reason 'max_tokens' (cut off), yet agent_turn called the model again"),
    (agent_turn_answering_each_tool_once, "two calls of one tool are two calls"),
    (agent_turn_flagging_by_the_text, "but run_tool said the call succeeded"),
])
def test_agent_turn_issue_35_mistakes_fail_with_the_right_message(wrong, words):
    """Wrong answers a learner found passing (issue 35), one per class: each fails, saying what it got wrong."""
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


NOT_RUN = "Error: not run: this very call already failed in this turn"


def _loop(answer_calls, memory=None):
    """agent_turn whose calls are answered by `answer_calls(calls, failed)` -> (results, a line to stop with or
    None); `failed` is a new list at each turn, or `memory`, kept from turn to turn."""
    def agent_turn(client, messages, max_iterations=10, system=SYSTEM_PROMPT):
        failed = [] if memory is None else memory
        for _ in range(max_iterations):
            reply = client.messages.create(model=MODEL, max_tokens=1024, system=system, tools=TOOLS, messages=messages)
            messages.append({"role": "assistant", "content": reply.content})
            if reply.stop_reason != "tool_use":
                return "".join(block.text for block in reply.content if block.type == "text")
            results, line = answer_calls([block for block in reply.content if block.type == "tool_use"], failed)
            messages.append({"role": "user", "content": results})
            if line:
                return line
        raise RuntimeError(f"still calling tools after {max_iterations} calls")
    return agent_turn


def _result(call, text, failed):
    return {"type": "tool_result", "tool_use_id": call.id, "content": text, **({"is_error": True} if failed else {})}


def _run_all(calls, failed):
    """Every call run; the failed ones kept."""
    results = []
    for call in calls:
        text, is_error = run_tool(call.name, call.input)
        results.append(_result(call, text, is_error))
        if is_error:
            failed.append((call.name, call.input))
    return results


def _stopped(call):
    return f"(stopped: the model repeated a call that had failed, {call.name}({call.input}))"


def _guard_first(calls, failed):
    """The right way: a reply that repeats a failed call has none of its calls run, each answered with an error."""
    repeated = [call for call in calls if (call.name, call.input) in failed]
    if repeated:
        return [_result(call, NOT_RUN, True) for call in calls], _stopped(repeated[0])
    return _run_all(calls, failed), None


def guard_running_the_repeat(client, messages, max_iterations=10, system=SYSTEM_PROMPT):
    """The repeat seen, then run all the same with the rest of the reply, and the turn stopped after."""
    def answer_calls(calls, failed):
        repeated = [call for call in calls if (call.name, call.input) in failed]
        return _run_all(calls, failed), _stopped(repeated[0]) if repeated else None
    return _loop(answer_calls)(client, messages, max_iterations, system)


def guard_after_the_second_failure(client, messages, max_iterations=10, system=SYSTEM_PROMPT):
    """Stops once a call fails a second time: the repeat is run to find that out."""
    def answer_calls(calls, failed):
        before = list(failed)
        results = _run_all(calls, failed)
        again = [call for call in calls if (call.name, call.input) in before and (call.name, call.input) in failed]
        return results, _stopped(again[0]) if again else None
    return _loop(answer_calls)(client, messages, max_iterations, system)


def guard_remembering_the_last_failure(client, messages, max_iterations=10, system=SYSTEM_PROMPT):
    """Only the last failed call is kept: A, B, A goes on."""
    def answer_calls(calls, failed):
        results, line = _guard_first(calls, failed)
        del failed[:-1]  # the last failure alone
        return results, line
    return _loop(answer_calls)(client, messages, max_iterations, system)


def guard_answering_only_the_repeat(client, messages, max_iterations=10, system=SYSTEM_PROMPT):
    """At a repeat, only the repeated call gets a result: the reply's other calls are left unanswered."""
    def answer_calls(calls, failed):
        repeated = [call for call in calls if (call.name, call.input) in failed]
        if repeated:
            return [_result(call, NOT_RUN, True) for call in repeated], _stopped(repeated[0])
        return _run_all(calls, failed), None
    return _loop(answer_calls)(client, messages, max_iterations, system)


def guard_not_flagging_the_calls_not_run(client, messages, max_iterations=10, system=SYSTEM_PROMPT):
    """The calls not run answered in words, without is_error."""
    def answer_calls(calls, failed):
        results, line = _guard_first(calls, failed)
        return ([{key: value for key, value in result.items() if key != "is_error"} for result in results]
                if line else results), line
    return _loop(answer_calls)(client, messages, max_iterations, system)


def guard_raising_at_the_repeat(client, messages, max_iterations=10, system=SYSTEM_PROMPT):
    """The repeat answered, then the turn ended by an exception rather than a line."""
    def answer_calls(calls, failed):
        results, line = _guard_first(calls, failed)
        if line:
            messages.append({"role": "user", "content": results})
            raise RuntimeError(line)
        return results, None
    return _loop(answer_calls)(client, messages, max_iterations, system)


def guard_with_a_set_of_calls(client, messages, max_iterations=10, system=SYSTEM_PROMPT):
    """The failed calls kept in a set: a call's input is a dict, which no set can hold."""
    failed = set()
    for _ in range(max_iterations):
        reply = client.messages.create(model=MODEL, max_tokens=1024, system=system, tools=TOOLS, messages=messages)
        messages.append({"role": "assistant", "content": reply.content})
        if reply.stop_reason != "tool_use":
            return "".join(block.text for block in reply.content if block.type == "text")
        calls = [block for block in reply.content if block.type == "tool_use"]
        repeated = [call for call in calls if (call.name, call.input) in failed]
        results = [_result(call, NOT_RUN, True) for call in calls] if repeated else []
        for call in [] if repeated else calls:
            text, is_error = run_tool(call.name, call.input)
            results.append(_result(call, text, is_error))
            if is_error:
                failed.add((call.name, call.input))
        messages.append({"role": "user", "content": results})
        if repeated:
            return _stopped(repeated[0])
    raise RuntimeError("cap")


def guard_with_a_mutable_default(client, messages, max_iterations=10, system=SYSTEM_PROMPT, failed=[]):  # noqa: B006
    """The failed calls kept in a default argument: made once, shared by every turn."""
    return _loop(_guard_first, memory=failed)(client, messages, max_iterations, system)


FAILED_CALLS = []  # at the notebook's top level: every turn's failures


def guard_with_a_module_level_list(client, messages, max_iterations=10, system=SYSTEM_PROMPT):
    return _loop(_guard_first, memory=FAILED_CALLS)(client, messages, max_iterations, system)


def guard_in_its_own_words(client, messages, max_iterations=10, system=SYSTEM_PROMPT, failed=None):
    """Right in other ways: the failures keyed by their JSON in a dict that keeps each one's error text, the
    calls not run answered with the error they gave before (no new run), a default of None made a list anew."""
    failed = {} if failed is None else failed
    for _ in range(max_iterations):
        reply = client.messages.create(model=MODEL, max_tokens=1024, system=system, tools=TOOLS, messages=messages)
        messages.append({"role": "assistant", "content": reply.content})
        if reply.stop_reason != "tool_use":
            return "".join(block.text for block in reply.content if block.type == "text")
        calls = [block for block in reply.content if block.type == "tool_use"]
        keys = [(call.name, json.dumps(call.input, sort_keys=True)) for call in calls]
        repeated = [call for call, key in zip(calls, keys) if key in failed]
        if repeated:
            messages.append({"role": "user", "content": [
                _result(call, failed.get(key, "Error: not run, the reply repeats a failed call"), True)
                for call, key in zip(calls, keys)]})
            break
        results = []
        for call, key in zip(calls, keys):
            text, is_error = run_tool(call.name, call.input)
            results.append(_result(call, text, is_error))
            if is_error:
                failed[key] = text
        messages.append({"role": "user", "content": results})
    else:
        raise RuntimeError(f"the model was still asking for tools after {max_iterations} calls")
    return f"Stopped: {repeated[0].name} was asked again with the input that failed."


def test_the_guard_may_be_written_in_its_own_words():
    passes("6.3", guard_in_its_own_words)
    passes("6.3", guard_in_its_own_words)  # twice: a new turn starts with no failure


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


@pytest.mark.parametrize("wrong, words", [
    (guard_running_the_repeat, "the repeated call was run again"),
    (guard_after_the_second_failure, "the repeated call was run again"),
    (guard_remembering_the_last_failure, "repeated a call that had failed two calls before"),
    (guard_answering_only_the_repeat, "unanswered"),
    (guard_not_flagging_the_calls_not_run, "without is_error True"),
    (guard_raising_at_the_repeat, "raised RuntimeError"),
    (guard_raising_at_the_repeat, "it should end the turn there with a line"),
    (guard_with_a_set_of_calls, "a call's input is a dict, which a set"),
    (guard_with_a_mutable_default, "a failure remembered from an earlier turn stopped it"),
    (guard_with_a_module_level_list, "a failure remembered from an earlier turn stopped it"),
    (guard_by_name_only, "the same tool with another input is a new call"),
    (guard_on_any_repeat, "The call it stopped at had succeeded"),
])
def test_repeat_guard_issue_35_mistakes_fail_with_the_right_message(wrong, words):
    """Wrong answers a learner found passing (issue 35), or failing in words that did not say why, one per class:
    each fails, saying what it got wrong."""
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
