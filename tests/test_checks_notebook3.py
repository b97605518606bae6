"""The checks of notebook 3 (matching ids): they pass on good code and fail, saying why, on typical mistakes."""

import pytest

from looplab import loop
from looplab.course import COURSE
from looplab.client import MODEL
from looplab.loop import SYSTEM_PROMPT, tool_result
from looplab.tools import TOOLS, run_tool
from tests.check_helpers import fails, passes, stub, twin
from tests.notebook_code import solution_namespace


@pytest.fixture(scope="module")
def solution():
    return solution_namespace("03_matching_ids")


def get(item, key):
    return item.get(key) if isinstance(item, dict) else getattr(item, key, None)


def blocks(message):
    content = get(message, "content")
    return content if isinstance(content, list) else []


def test_the_exercises_and_their_points():
    assert [(n, COURSE.exercise(n).points) for n in ("3.1", "3.2", "3.3")] == [("3.1", 2), ("3.2", 2), ("3.3", 3)]
    for number in ("3.1", "3.2", "3.3"):
        assert 2 <= len(COURSE.hints(number)) <= 3


# --- 3.1 run_tools ------------------------------------------------------------------------------------


def test_run_tools_passes_on_the_reference_and_the_solution(solution):
    passes("3.1", twin(loop.run_tools))
    passes("3.1", solution["run_tools"])


def test_run_tools_results_may_come_in_any_order():
    def reversed_order(message):
        calls = [block for block in message.content if block.type == "tool_use"]
        return [tool_result(call, run_tool(call.name, call.input)) for call in reversed(calls)]

    passes("3.1", reversed_order)


def test_run_tools_stub_is_not_written_yet():
    fails("3.1", stub, "not written yet")


def run_tools_only_first(message):
    for block in message.content:
        if block.type == "tool_use":
            return [tool_result(block, run_tool(block.name, block.input))]
    return []


def run_tools_ids_zipped_out_of_step(message):
    tool_uses = [block for block in message.content if block.type == "tool_use"]
    outputs = [run_tool(block.name, block.input) for block in tool_uses]
    ids = [block.id for block in reversed(tool_uses)]
    return [{"type": "tool_result", "tool_use_id": i, "content": o} for i, o in zip(ids, outputs)]


def run_tools_keyed_by_tool_name(message):
    outputs = {block.name: run_tool(block.name, block.input) for block in message.content if block.type == "tool_use"}
    return [{"type": "tool_result", "tool_use_id": block.id, "content": outputs[block.name]}
            for block in message.content if block.type == "tool_use"]


def run_tools_content_i(message):
    tool_uses = [block for block in message.content if block.type == "tool_use"]
    return [{"type": "tool_result", "tool_use_id": message.content[i].id, "content": run_tool(block.name, block.input)}
            for i, block in enumerate(tool_uses)]


def run_tools_content_zero(message):
    block = message.content[0]
    return [tool_result(block, run_tool(block.name, block.input))]


def run_tools_no_is_error(message):
    return [{"type": "tool_result", "tool_use_id": block.id, "content": run_tool(block.name, block.input)}
            for block in message.content if block.type == "tool_use"]


def run_tools_is_error_everywhere(message):
    return [{**result, "is_error": True} for result in run_tools_no_is_error(message)]


def test_run_tools_fails_when_it_answers_only_the_first_call():
    fails("3.1", run_tools_only_first, "two calls after a text block", "run_tools(message) holds 1 result(s)",
          "for 2 tool_use block(s)", "several tool_use blocks", field="run_tools(message)")


def test_run_tools_fails_when_ids_and_outputs_are_paired_by_position():
    result = fails("3.1", run_tools_ids_zipped_out_of_step, "two calls after a text block", "belongs to the call",
                   "whose result is '851'", "Never pair ids and outputs by position",
                   field="run_tools(message)[1].content")
    assert "run_tools(message)[1].content: yours '1147', expected '851'" in result.failed


def test_run_tools_fails_when_outputs_are_keyed_by_tool_name():
    fails("3.1", run_tools_keyed_by_tool_name, "belongs to the call", "whose result is '851'",
          field="run_tools(message)[0].content")


def test_run_tools_fails_when_it_reads_ids_by_position_in_the_content():
    fails("3.1", run_tools_content_i, "two calls after a text block", "AttributeError", "TextBlock",
          "never content[0] or content[i]")


def test_run_tools_fails_when_it_takes_content_zero():
    fails("3.1", run_tools_content_zero, "TextBlock", "never content[0]")


def test_run_tools_fails_without_is_error_on_a_failing_tool():
    fails("3.1", run_tools_no_is_error, "one call fails, the other works", "failed", "needs 'is_error': True",
          "yours nothing, expected true", "Error: ", field="run_tools(message)[0].is_error")


def test_run_tools_fails_with_is_error_on_every_result():
    fails("3.1", run_tools_is_error_everywhere, "worked ('851')", "says 'is_error': True",
          field="run_tools(message)[0].is_error")


def test_run_tools_fails_when_it_returns_a_generator():
    def lazy(message):
        return (tool_result(b, run_tool(b.name, b.input)) for b in message.content if b.type == "tool_use")

    fails("3.1", lazy, "should be a list")


# --- 3.2 unanswered_tool_uses ------------------------------------------------------------------------------


def test_unanswered_tool_uses_passes_on_the_reference_and_the_solution(solution):
    passes("3.2", twin(loop.unanswered_tool_uses))
    passes("3.2", solution["unanswered_tool_uses"])


def test_unanswered_tool_uses_stub_is_not_written_yet():
    fails("3.2", stub, "not written yet")


def unanswered_only_last_assistant(messages):
    last = max(i for i, m in enumerate(messages) if get(m, "role") == "assistant")
    following = messages[last + 1] if last + 1 < len(messages) else None
    answered = {get(b, "tool_use_id") for b in blocks(following)} if following is not None else set()
    return [get(b, "id") for b in blocks(messages[last]) if get(b, "type") == "tool_use" and get(b, "id") not in answered]


def unanswered_any_later_message(messages):
    unanswered = []
    for i, message in enumerate(messages):
        if get(message, "role") != "assistant":
            continue
        answered = {get(b, "tool_use_id") for later in messages[i + 1:] for b in blocks(later)
                    if get(b, "type") == "tool_result"}
        unanswered += [get(b, "id") for b in blocks(message) if get(b, "type") == "tool_use" and get(b, "id") not in answered]
    return unanswered


def unanswered_dicts_only(messages):
    unanswered = []
    for i, message in enumerate(messages):
        if message["role"] != "assistant" or not isinstance(message["content"], list):
            continue
        following = messages[i + 1] if i + 1 < len(messages) else {"content": []}
        answered = {b["tool_use_id"] for b in following["content"]
                    if isinstance(b, dict) and b.get("type") == "tool_result"} if isinstance(following["content"], list) else set()
        unanswered += [b["id"] for b in message["content"]
                       if isinstance(b, dict) and b.get("type") == "tool_use" and b["id"] not in answered]
    return unanswered


def test_unanswered_tool_uses_fails_when_it_only_checks_the_last_message():
    fails("3.2", unanswered_only_last_assistant, "two parallel calls, one result missing", "returned []",
          "expected ['toolu_B']", "EVERY assistant message")


def test_unanswered_tool_uses_fails_when_any_later_message_counts():
    fails("3.2", unanswered_any_later_message, "results split over two user messages", "expected ['toolu_B']",
          "RIGHT AFTER")


def test_unanswered_tool_uses_fails_when_it_ignores_sdk_objects():
    result = fails("3.2", unanswered_dicts_only, "SDK blocks", "returned []", "expected ['toolu_B']", "getattr")
    assert "[1] assistant: text, tool_use toolu_A, tool_use toolu_B, tool_use toolu_C" in result.failed


def test_unanswered_tool_uses_fails_when_it_returns_blocks_not_ids():
    def returns_blocks(messages):
        return [b for m in messages for b in blocks(m) if get(b, "type") == "tool_use" and get(b, "id") == "toolu_A"]

    fails("3.2", returns_blocks, "the ids themselves")


# --- 3.3 agent_turn ------------------------------------------------------------------------------------


def test_agent_turn_passes_on_the_reference_and_the_solution(solution):
    passes("3.3", twin(loop.agent_turn))
    passes("3.3", solution["agent_turn"])


def test_agent_turn_stub_is_not_written_yet():
    fails("3.3", stub, "not written yet")


def ask(client, messages):
    return client.messages.create(model=MODEL, max_tokens=1024, system=SYSTEM_PROMPT, tools=TOOLS, messages=messages)


def final_text(message):
    return "".join(block.text for block in message.content if block.type == "text")


def make_agent_turn(answer, stop=lambda message: message.stop_reason != "tool_use", record_assistant=None,
                    cap=True, raise_at_cap=True):
    """An agent_turn assembled from parts, so each wrong answer changes exactly one of them."""

    def agent_turn(client, messages, max_iterations=10):
        rounds = range(max_iterations) if cap else iter(int, 1)
        for _ in rounds:
            message = ask(client, messages)
            messages.append(record_assistant(message) if record_assistant else {"role": "assistant", "content": message.content})
            if stop(message):
                return final_text(message)
            answer(message, messages)
        if raise_at_cap:
            raise RuntimeError(f"still calling tools after {max_iterations} calls")
        return ""

    return agent_turn


def one_message(message, messages):
    messages.append({"role": "user", "content": loop.run_tools(message)})


def one_message_per_result(message, messages):
    for result in loop.run_tools(message):
        messages.append({"role": "user", "content": [result]})


def only_the_first_call(message, messages):
    messages.append({"role": "user", "content": loop.run_tools(message)[:1]})


def ids_by_position(message, messages):
    tool_uses = [block for block in message.content if block.type == "tool_use"]
    outputs = [run_tool(block.name, block.input) for block in tool_uses]
    ids = [block.id for block in tool_uses][::-1]
    messages.append({"role": "user", "content": [tool_result(type("Call", (), {"id": i})(), o) for i, o in zip(ids, outputs)]})


def test_agent_turn_assembled_from_good_parts_passes():
    passes("3.3", make_agent_turn(one_message))


def test_agent_turn_fails_with_one_user_message_per_result():
    fails("3.3", make_agent_turn(one_message_per_result), "two calls in one reply", "(400)",
          "without `tool_result` blocks immediately after", "ONE user message", field="messages[1]")


def test_agent_turn_fails_when_it_runs_only_the_first_call():
    fails("3.3", make_agent_turn(only_the_first_call), "two calls in one reply", "(400)",
          "without `tool_result` blocks immediately after", field="messages[1]")


def test_agent_turn_fails_when_ids_are_paired_by_position():
    fails("3.3", make_agent_turn(ids_by_position), "two calls in one reply: messages[2]", "belongs to the call",
          "Never pair ids and outputs by position", "yours '1147', expected '851'",
          field="messages[2].content[1].content")


def test_agent_turn_fails_when_it_drops_the_assistant_turn():
    def drop_assistant(client, messages, max_iterations=10):
        for _ in range(max_iterations):
            message = ask(client, messages)
            if message.stop_reason != "tool_use":
                messages.append({"role": "assistant", "content": message.content})
                return final_text(message)
            messages.append({"role": "user", "content": loop.run_tools(message)})
        raise RuntimeError(f"stopped after {max_iterations} calls")

    fails("3.3", drop_assistant, "(400)", "unexpected `tool_use_id`", field="messages[1].content[0]")


def test_agent_turn_fails_when_it_keeps_only_the_tool_use_blocks():
    def only_tool_uses(message):
        return {"role": "assistant", "content": [block for block in message.content if block.type == "tool_use"]}

    fails("3.3", make_agent_turn(one_message, record_assistant=only_tool_uses), "two calls in one reply",
          "messages[1] should be the model's reply 1 exactly as it came", "text, tool_use, tool_use",
          "every block included", field="messages[1].content[0]")


def test_agent_turn_fails_when_it_drops_the_thinking_block():
    def no_thinking(message):
        return {"role": "assistant", "content": [block for block in message.content if block.type != "thinking"]}

    fails("3.3", make_agent_turn(one_message, record_assistant=no_thinking), "a thinking block first",
          "exactly as it came", field="messages[1].content[0]")


def test_agent_turn_fails_when_it_trusts_content_zero():
    def content_zero(client, messages, max_iterations=10):
        for _ in range(max_iterations):
            message = ask(client, messages)
            messages.append({"role": "assistant", "content": message.content})
            block = message.content[0]
            if block.type != "tool_use":
                return block.text
            messages.append({"role": "user", "content": [tool_result(block, run_tool(block.name, block.input))]})
        raise RuntimeError(f"stopped after {max_iterations} calls")

    fails("3.3", content_zero, "two calls in one reply", "stopped after 1 model call(s)",
          "the last reply asked for a tool (stop_reason 'tool_use')", "this conversation needs 2")


def test_agent_turn_fails_when_it_waits_for_end_turn():
    agent_turn = make_agent_turn(one_message, stop=lambda message: message.stop_reason == "end_turn")
    fails("3.3", agent_turn, "a reply cut off by max_tokens", "stop_reason was 'max_tokens'", "only 'tool_use'")


def test_agent_turn_fails_when_it_runs_the_calls_of_a_cut_off_reply():
    def any_tool_use(message):
        return not any(block.type == "tool_use" for block in message.content)

    fails("3.3", make_agent_turn(one_message, stop=any_tool_use), "a reply cut off by max_tokens",
          "stop_reason was 'max_tokens'")


def test_agent_turn_fails_without_a_cap():
    fails("3.3", make_agent_turn(one_message, cap=False), "a model that never stops", "never stopped",
          "range(max_iterations)")


def test_agent_turn_fails_when_it_returns_at_the_cap():
    fails("3.3", make_agent_turn(one_message, raise_at_cap=False), "max_iterations=3", "should raise RuntimeError")


def test_agent_turn_fails_when_the_cap_is_off_by_one():
    def one_call_too_many(client, messages, max_iterations=10):
        return make_agent_turn(one_message)(client, messages, max_iterations + 1)

    fails("3.3", one_call_too_many, "max_iterations=3", "made 4 model calls", "exactly 3")


def test_agent_turn_fails_when_it_stops_before_answering_the_last_call():
    def early_exit(client, messages, max_iterations=10):
        for iteration in range(max_iterations):
            message = ask(client, messages)
            messages.append({"role": "assistant", "content": message.content})
            if message.stop_reason != "tool_use":
                return final_text(message)
            if iteration == max_iterations - 1:
                raise RuntimeError(f"stopped after {max_iterations} calls")
            messages.append({"role": "user", "content": loop.run_tools(message)})

    fails("3.3", early_exit, "max_iterations=3", "ends with the model's tool_use unanswered", field="messages[5]")


def test_agent_turn_fails_when_the_error_does_not_name_the_limit():
    def vague(client, messages, max_iterations=10):
        try:
            return loop.agent_turn(client, messages, max_iterations)
        except RuntimeError:
            raise RuntimeError("too many calls") from None

    fails("3.3", vague, "should name the limit (3)")


def test_agent_turn_fails_when_it_works_on_a_copy():
    def on_a_copy(client, messages, max_iterations=10):
        return loop.agent_turn(client, list(messages), max_iterations)

    fails("3.3", on_a_copy, "in place", field="messages[1]")


# --- isolation ----------------------------------------------------------------------------------------

AGENT_TURN_SOURCE = '''
def agent_turn(client, messages, max_iterations=10):
    for _ in range(max_iterations):
        message = client.messages.create(model=MODEL, max_tokens=1024, system=SYSTEM_PROMPT, tools=TOOLS, messages=messages)
        messages.append({"role": "assistant", "content": message.content})
        if message.stop_reason != "tool_use":
            return "".join(block.text for block in message.content if block.type == "text")
        messages.append({"role": "user", "content": run_tools(message)})
    raise RuntimeError(f"still calling tools after {max_iterations} calls")


def run_tools_with_own_pieces(message):
    return [tool_result(block, run_tool(block.name, block.input)) for block in message.content if block.type == "tool_use"]
'''


def broken_namespace():
    namespace = {
        "run_tool": lambda name, tool_input: "42",
        "tool_result": lambda block, output: {"type": "tool_result", "tool_use_id": "toolu_wrong", "content": output},
        "run_tools": lambda message: [],
        "calculator": lambda expression: "42",
        "TOOLS": [],
        "CALCULATOR_TOOL": {},
        "MODEL": "not-a-model",
        "SYSTEM_PROMPT": "Never use tools.",
    }
    exec(AGENT_TURN_SOURCE, namespace)
    return namespace


def test_agent_turn_is_checked_with_the_reference_pieces_and_they_are_put_back():
    namespace = broken_namespace()
    broken = {name: namespace[name] for name in ("run_tool", "tool_result", "run_tools", "TOOLS", "MODEL")}
    passes("3.3", namespace["agent_turn"])
    assert {name: namespace[name] for name in broken} == broken


def test_run_tools_is_checked_with_the_reference_run_tool_and_tool_result():
    passes("3.1", broken_namespace()["run_tools_with_own_pieces"])


# --- 3.1: more wrong answers ----------------------------------------------------------------------------


def run_tools_citing_the_message_id(message):
    return [{"type": "tool_result", "tool_use_id": message.id, "content": run_tool(b.name, b.input)}
            for b in message.content if b.type == "tool_use"]


def run_tools_making_up_ids(message):
    calls = [block for block in message.content if block.type == "tool_use"]
    return [{"type": "tool_result", "tool_use_id": f"toolu_{i}", "content": run_tool(b.name, b.input)}
            for i, b in enumerate(calls)]


@pytest.mark.parametrize("wrong", [run_tools_citing_the_message_id, run_tools_making_up_ids])
def test_run_tools_fails_when_a_result_cites_no_call(wrong):
    fails("3.1", wrong, "two calls after a text block", "which is not the id of any tool_use in the reply",
          "tool_use_id=block.id", field="run_tools(message)[0].tool_use_id")


def run_tools_with_a_leftover_loop_variable(message):
    calls = []
    for block in message.content:
        if block.type == "tool_use":
            calls.append(block)
    return [{"type": "tool_result", "tool_use_id": block.id, "content": run_tool(call.name, call.input)}
            for call in calls]


def run_tools_citing_the_first_call(message):
    calls = [block for block in message.content if block.type == "tool_use"]
    return [tool_result(calls[0], run_tool(call.name, call.input)) for call in calls]


@pytest.mark.parametrize("wrong, cited_at", [(run_tools_with_a_leftover_loop_variable, 0),
                                             (run_tools_citing_the_first_call, 0)])
def test_run_tools_fails_when_two_results_cite_one_call(wrong, cited_at):
    fails("3.1", wrong, "two calls after a text block", f"which run_tools(message)[{cited_at}] cites already",
          "each tool_use is answered exactly once", "Never pair ids and outputs by position",
          field="run_tools(message)[1].tool_use_id")


def run_tools_returning_the_outputs(message):
    return [run_tool(b.name, b.input) for b in message.content if b.type == "tool_use"]


def run_tools_returning_messages(message):
    return [{"role": "user", "content": [tool_result(b, run_tool(b.name, b.input))]}
            for b in message.content if b.type == "tool_use"]


@pytest.mark.parametrize("wrong, shown", [(run_tools_returning_the_outputs, "'851'"),
                                          (run_tools_returning_messages, '{"role": "user"')])
def test_run_tools_fails_when_it_returns_something_else_than_results(wrong, shown):
    fails("3.1", wrong, "two calls after a text block", f"run_tools(message)[0] is {shown}",
          "not a tool_result block", field="run_tools(message)[0]")


# --- 3.2: more wrong answers -------------------------------------------------------------------------------


def unanswered_with_a_next_message_only(messages):
    """Looks only at assistant messages that have a message after them: the last call is never seen."""
    unanswered = []
    for i in range(len(messages) - 1):
        if get(messages[i], "role") != "assistant":
            continue
        answered = {get(b, "tool_use_id") for b in blocks(messages[i + 1])}
        unanswered += [get(b, "id") for b in blocks(messages[i])
                       if get(b, "type") == "tool_use" and get(b, "id") not in answered]
    return unanswered


def unanswered_over_pairs(messages):
    unanswered = []
    for message, following in zip(messages, messages[1:]):
        answered = {get(b, "tool_use_id") for b in blocks(following)}
        unanswered += [get(b, "id") for b in blocks(message)
                       if get(b, "type") == "tool_use" and get(b, "id") not in answered]
    return unanswered


@pytest.mark.parametrize("wrong", [unanswered_with_a_next_message_only, unanswered_over_pairs])
def test_unanswered_tool_uses_fails_when_a_call_at_the_end_is_not_seen(wrong):
    fails("3.2", wrong, "a tool_use at the very end", "returned []", "expected ['toolu_A']",
          "has no message after it")


UNANSWERED = twin(loop.unanswered_tool_uses)  # the course's code, as if the learner had typed it


def unanswered_as_a_set(messages):
    return set(UNANSWERED(messages))


def unanswered_or_none(messages):
    return UNANSWERED(messages) or None


@pytest.mark.parametrize("wrong, kind", [(unanswered_as_a_set, "set"), (unanswered_or_none, "NoneType")])
def test_unanswered_tool_uses_fails_when_it_returns_no_list(wrong, kind):
    fails("3.2", wrong, f"returned a {kind}", "it should return a list of ids", "Return a list of strings")


# --- 3.3: results in any order, text after them: what the API accepts -------------------------------------------


def reversed_results(message, messages):
    messages.append({"role": "user", "content": loop.run_tools(message)[::-1]})


def shuffled_results(message, messages):
    results = loop.run_tools(message)
    messages.append({"role": "user", "content": results[1::2] + results[0::2]})


def results_then_a_note(message, messages):
    messages.append({"role": "user", "content": loop.run_tools(message) + [
        {"type": "text", "text": "Here are the results; go on."}]})


@pytest.mark.parametrize("answer", [reversed_results, shuffled_results, results_then_a_note])
def test_agent_turn_may_send_results_in_any_order_and_text_after_them(answer):
    passes("3.3", make_agent_turn(answer))


# --- 3.3: the whole Message appended ------------------------------------------------------------------------


@pytest.mark.parametrize("record", [lambda message: message,
                                    lambda message: {"role": "assistant", **message.to_dict()}],
                         ids=["append(message)", "to_dict"])
def test_agent_turn_fails_when_it_appends_the_whole_message(record):
    fails("3.3", make_agent_turn(one_message, record_assistant=record), "two calls in one reply",
          "messages.1.id: Extra inputs are not permitted", '"content": reply.content', field="messages[1].id")


def test_agent_turn_fails_when_it_appends_the_message_dumped():
    """Refused for its id, or (by the API's own validation of the request) for a block field dumped as null."""
    fails("3.3", make_agent_turn(one_message, record_assistant=lambda message: message.model_dump(mode="json")),
          "two calls in one reply", "400", field="messages[1]")


# --- 3.3: the request's settings --------------------------------------------------------------------------


def asking_with(**settings):
    def agent_turn(client, messages, max_iterations=10):
        for _ in range(max_iterations):
            message = client.messages.create(**(dict(model=MODEL, max_tokens=1024, system=SYSTEM_PROMPT, tools=TOOLS,
                                                     messages=messages) | settings))
            messages.append({"role": "assistant", "content": message.content})
            if message.stop_reason != "tool_use":
                return final_text(message)
            one_message(message, messages)
        raise RuntimeError(f"still calling tools after {max_iterations} calls")
    return agent_turn


def without_system(client, messages, max_iterations=10):
    for _ in range(max_iterations):
        message = client.messages.create(model=MODEL, max_tokens=1024, tools=TOOLS, messages=messages)
        messages.append({"role": "assistant", "content": message.content})
        if message.stop_reason != "tool_use":
            return final_text(message)
        one_message(message, messages)
    raise RuntimeError(f"still calling tools after {max_iterations} calls")


@pytest.mark.parametrize("model", ["claude-haiku-5", "claude-opus-5"])
def test_agent_turn_fails_with_another_model(model):
    fails("3.3", asking_with(model=model), "two calls in one reply", f"asked for model {model!r}", "MODEL",
          field="model")


def test_agent_turn_fails_without_the_system_prompt():
    fails("3.3", without_system, "(no system field)", "system=SYSTEM_PROMPT", field="system")
    fails("3.3", asking_with(system="Answer briefly."), "did not send the system prompt",
          "yours 'Answer briefly.'", field="system")


# --- 3.3: a failing call the model corrects, an unknown tool ---------------------------------------------------


def stops_at_a_failing_call(message, messages):
    results = loop.run_tools(message)
    messages.append({"role": "user", "content": results})
    failed = [result["content"] for result in results if result.get("is_error")]
    if failed:
        raise StopAtError(failed[0])


class StopAtError(Exception):
    pass


def gives_up_on_an_error(client, messages, max_iterations=10):
    """Returns the tool's error to the user instead of letting the model correct its call."""
    try:
        return make_agent_turn(stops_at_a_failing_call)(client, messages, max_iterations)
    except StopAtError as error:
        return str(error)


def inline_results_without_is_error(message, messages):
    messages.append({"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": b.id, "content": run_tool(b.name, b.input)}
        for b in message.content if b.type == "tool_use"]})


def test_agent_turn_fails_when_a_failing_call_ends_the_turn():
    fails("3.3", gives_up_on_an_error, "a call that fails, then the model corrects it",
          "stopped after 1 model call(s)", "this conversation needs 3", "A failing call is not the end of the turn")
    fails("3.3", make_agent_turn(stops_at_a_failing_call), "a call that fails, then the model corrects it",
          "StopAtError", "A failing call is not the end of the turn")


def test_agent_turn_fails_when_a_failing_calls_result_is_not_flagged():
    fails("3.3", make_agent_turn(inline_results_without_is_error), "a call that fails, then the model corrects it",
          'needs "is_error": True', "run_tools(reply)", field="messages[2].content[0].is_error")


def answers_only_the_calculator(message, messages):
    messages.append({"role": "user", "content": [tool_result(b, run_tool(b.name, b.input)) for b in message.content
                                                 if b.type == "tool_use" and b.name == "calculator"]})


TOOL_FUNCTIONS = {"calculator": lambda expression: run_tool("calculator", {"expression": expression})}


def dispatches_by_name(message, messages):
    messages.append({"role": "user", "content": [tool_result(b, TOOL_FUNCTIONS[b.name](**b.input))
                                                 for b in message.content if b.type == "tool_use"]})


def test_agent_turn_fails_when_an_unknown_tool_is_not_answered():
    fails("3.3", make_agent_turn(answers_only_the_calculator), "a call for a tool that does not exist", "(400)",
          "`tool_use` ids were found without `tool_result` blocks", "ONE user message", field="messages[1]")
    fails("3.3", make_agent_turn(dispatches_by_name), "a call for a tool that does not exist", "KeyError: 'percentage'",
          "Answer every call, even one for a tool you don't have")


# --- 3.3: the history kept in place -----------------------------------------------------------------------------


def test_agent_turn_fails_when_it_pops_its_reply():
    def pops(client, messages, max_iterations=10):
        answer = make_agent_turn(one_message)(client, messages, max_iterations)
        messages.pop()
        return answer

    result = fails("3.3", pops, "took messages out of the list it was given", field="messages[3]")
    assert "new list" not in result.hint


def test_unanswered_tool_uses_ids_may_come_in_any_order():
    def reversed_ids(messages):
        return UNANSWERED(messages)[::-1]

    passes("3.2", reversed_ids)
