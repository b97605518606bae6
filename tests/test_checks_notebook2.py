"""The checks of notebook 2 (closing the loop): they pass on good code and fail, saying why, on typical mistakes."""

import textwrap

import pytest

from looplab import loop
from looplab.course import COURSE
from looplab.client import MODEL
from looplab.loop import MAX_TOKENS, SYSTEM_PROMPT, tool_result
from looplab.tools import TOOLS, is_error, run_tool
from tests.check_helpers import fails, passes, stub, twin
from tests.notebook_code import solution_namespace

STEM = "02_closing_the_loop"


@pytest.fixture(scope="module")
def solution():
    return solution_namespace(STEM)


@pytest.fixture(scope="module")
def solution_until_2_2():
    """The solution's setup and exercise cells up to exercise 2.2: its agent_turn is the one without a cap."""
    return solution_namespace(STEM, until="2.2")


def create(client, messages):
    return client.messages.create(model=MODEL, max_tokens=MAX_TOKENS, system=SYSTEM_PROMPT, tools=TOOLS, messages=messages)


def final_text(reply):
    return "".join(block.text for block in reply.content if block.type == "text")


def answer_all(reply):
    return {"role": "user", "content": [
        tool_result(block, run_tool(block.name, block.input)) for block in reply.content if block.type == "tool_use"
    ]}


def test_the_exercises_their_points_and_hints():
    assert [(n, COURSE.exercise(n).points) for n in ("2.1", "2.2", "2.3")] == [("2.1", 1), ("2.2", 3), ("2.3", 2)]
    for number in ("2.1", "2.2", "2.3"):
        assert 2 <= len(COURSE.hints(number)) <= 3
    notebook_1 = {exercise.name for exercise in COURSE.notebook("01_one_tool_call").exercises}  # calculator...
    isolate = {"TOOLS", "run_tool", "tool_result", "MODEL", "SYSTEM_PROMPT"} | notebook_1
    assert set(COURSE.earlier_pieces("2.2")) == set(COURSE.earlier_pieces("2.3")) == isolate


def test_the_learner_notebook_names_the_contract(solution):
    for name in ("MODEL", "TOOLS", "run_tool", "SYSTEM_PROMPT", "tool_result", "agent_turn", "client"):
        assert name in solution
    assert solution["SYSTEM_PROMPT"] == SYSTEM_PROMPT


# --- 2.1 tool_result -----------------------------------------------------------------------------------


def test_tool_result_passes_on_the_reference_and_the_solution(solution):
    passes("2.1", twin(loop.tool_result))
    passes("2.1", solution["tool_result"])


def test_tool_result_may_carry_its_content_as_text_blocks():
    def as_blocks(tool_use, output):
        result = {"type": "tool_result", "tool_use_id": tool_use.id, "content": [{"type": "text", "text": output}]}
        return result | ({"is_error": True} if is_error(output) else {})

    passes("2.1", as_blocks)


def test_tool_result_stub_is_not_written_yet():
    fails("2.1", stub, "not written yet")


def test_tool_result_without_tool_use_id():
    def named_id(tool_use, output):
        return {"type": "tool_result", "id": tool_use.id, "content": output}

    fails("2.1", named_id, 'no "tool_use_id" key', '"tool_use_id" (not "id")', field="tool_use_id")


def test_tool_result_with_is_error_false_always_present():
    def always_flagged(tool_use, output):
        return {"type": "tool_result", "tool_use_id": tool_use.id, "content": output, "is_error": is_error(output)}

    fails("2.1", always_flagged, '"is_error" should only be there when it is True', field="is_error")


def test_tool_result_without_is_error_on_an_error_output():
    def never_flagged(tool_use, output):
        return {"type": "tool_result", "tool_use_id": tool_use.id, "content": output}

    fails("2.1", never_flagged, "'Error: division by zero'", 'needs "is_error": True', "is_error(output)",
          field="is_error")


def test_tool_result_with_the_id_from_the_wrong_place():
    def cites_the_name(tool_use, output):
        return {"type": "tool_result", "tool_use_id": tool_use.name, "content": output}

    fails("2.1", cites_the_name, "\"tool_use_id\" is 'calculator'", "it should be the id of the call it answers",
          "tool_use.id", field="tool_use_id")


def test_tool_result_with_an_id_copied_from_an_example():
    def hard_coded(tool_use, output):
        return {"type": "tool_result", "tool_use_id": "toolu_01TryItGood", "content": output}

    fails("2.1", hard_coded, "'toolu_01TryItGood'", "the id of the call it answers", field="tool_use_id")


def test_tool_result_with_the_wrong_type():
    def wrong_type(tool_use, output):
        return {"type": "tool_use", "tool_use_id": tool_use.id, "content": output}

    fails("2.1", wrong_type, "\"type\" is 'tool_use'", '"tool_result"', field="type")


def test_tool_result_returning_the_output_alone():
    def just_text(tool_use, output):
        return output

    fails("2.1", just_text, "it should return a dict")


# --- 2.2 agent_turn ------------------------------------------------------------------------------------


def test_agent_turn_passes_on_the_reference_and_the_solution(solution, solution_until_2_2):
    passes("2.2", twin(loop.agent_turn))
    passes("2.2", solution_until_2_2["agent_turn"])  # the 2.2 version, without a cap
    passes("2.2", solution["agent_turn"])  # the 2.3 version, with its cap


def test_the_solution_agent_turn_of_2_2_has_no_cap_yet(solution_until_2_2):
    fails("2.3", solution_until_2_2["agent_turn"], "never stopped")


def test_agent_turn_stub_is_not_written_yet():
    fails("2.2", stub, "not written yet")


def test_agent_turn_is_isolated_from_a_broken_run_tool_and_tool_result():
    source = textwrap.dedent('''
        def agent_turn(client, messages, max_iterations=10):
            while True:
                reply = client.messages.create(model=MODEL, max_tokens=1024, system=SYSTEM_PROMPT, tools=TOOLS,
                                               messages=messages)
                messages.append({"role": "assistant", "content": reply.content})
                if reply.stop_reason != "tool_use":
                    return "".join(b.text for b in reply.content if b.type == "text")
                messages.append({"role": "user", "content": [
                    tool_result(b, run_tool(b.name, b.input)) for b in reply.content if b.type == "tool_use"]})
    ''')

    def broken_run_tool(name, tool_input):
        return "42"

    def broken_tool_result(tool_use, output):
        return {"type": "tool_result", "tool_use_id": "toolu_wrong", "content": output}

    namespace = {"MODEL": "claude-typo", "SYSTEM_PROMPT": "Be terse.", "TOOLS": [], "run_tool": broken_run_tool,
                 "tool_result": broken_tool_result, "calculator": lambda expression: "0"}
    exec(source, namespace)
    passes("2.2", namespace["agent_turn"])
    assert namespace["run_tool"] is broken_run_tool  # put back after the check


def content_zero(client, messages, max_iterations=10):
    while True:
        reply = create(client, messages)
        messages.append({"role": "assistant", "content": reply.content})
        block = reply.content[0]
        if block.type != "tool_use":
            return block.text
        messages.append({"role": "user", "content": [tool_result(block, run_tool(block.name, block.input))]})


def test_agent_turn_taking_content_0_stops_on_a_text_first_reply():
    fails("2.2", content_zero, "the model writes a text block before the tool_use", "after model call 1",
          "its first block is a text block", "never content[0]")


def content_zero_as_the_call(client, messages, max_iterations=10):
    while True:
        reply = create(client, messages)
        messages.append({"role": "assistant", "content": reply.content})
        if reply.stop_reason != "tool_use":
            return final_text(reply)
        call = reply.content[0]
        messages.append({"role": "user", "content": [tool_result(call, run_tool(call.name, call.input))]})


def test_agent_turn_taking_content_0_as_the_call():
    fails("2.2", content_zero_as_the_call, "text block before the tool_use", "AttributeError", "never content[0]")


def content_zero_as_the_answer(client, messages, max_iterations=10):
    while True:
        reply = create(client, messages)
        messages.append({"role": "assistant", "content": reply.content})
        if reply.stop_reason != "tool_use":
            return reply.content[0].text
        messages.append(answer_all(reply))


def test_agent_turn_taking_content_0_as_the_answer_fails_on_a_thinking_first_reply():
    fails("2.2", content_zero_as_the_answer, "the model thinks first", "ThinkingBlock", "never content[0]")


def drops_the_assistant_turn(client, messages, max_iterations=10):
    while True:
        reply = create(client, messages)
        if reply.stop_reason != "tool_use":
            messages.append({"role": "assistant", "content": reply.content})
            return final_text(reply)
        messages.append(answer_all(reply))


def test_agent_turn_dropping_the_assistant_turn_gets_the_api_400():
    fails("2.2", drops_the_assistant_turn, "the API rejected the history your code sent (400)",
          "unexpected `tool_use_id` found in `tool_result` blocks", field="messages[1].content[0]")


def keeps_only_the_tool_use(client, messages, max_iterations=10):
    while True:
        reply = create(client, messages)
        if reply.stop_reason != "tool_use":
            messages.append({"role": "assistant", "content": reply.content})
            return final_text(reply)
        messages.append({"role": "assistant", "content": [b for b in reply.content if b.type == "tool_use"]})
        messages.append(answer_all(reply))


def test_agent_turn_keeping_only_the_tool_use_block_is_not_verbatim():
    fails("2.2", keeps_only_the_tool_use, "messages[1] should be the model's reply kept verbatim",
          "blocks [text, tool_use]; yours holds [tool_use]", '"content": reply.content', field="messages[1].content[0]")


def keeps_the_text_only(client, messages, max_iterations=10):
    while True:
        reply = create(client, messages)
        messages.append({"role": "assistant", "content": [b for b in reply.content if b.type != "thinking"]})
        if reply.stop_reason != "tool_use":
            return final_text(reply)
        messages.append(answer_all(reply))


def test_agent_turn_dropping_thinking_blocks_is_not_verbatim():
    fails("2.2", keeps_the_text_only, "the model thinks first", "blocks [thinking, tool_use]; yours holds [tool_use]",
          field="messages[1].content[0]")


def one_round(client, messages, max_iterations=10):
    reply = create(client, messages)
    messages.append({"role": "assistant", "content": reply.content})
    if reply.stop_reason == "tool_use":
        messages.append(answer_all(reply))
        reply = create(client, messages)
        messages.append({"role": "assistant", "content": reply.content})
    return final_text(reply)


def test_agent_turn_stopping_after_one_tool_round_does_not_loop():
    fails("2.2", one_round, "the model chains three calls", "after model call 2 the model asked for a tool",
          "agent_turn stopped there; this turn needs 4 calls", "call the model again")


def returns_the_raw_result(client, messages, max_iterations=10):
    output = None
    while True:
        reply = create(client, messages)
        messages.append({"role": "assistant", "content": reply.content})
        if reply.stop_reason != "tool_use":
            return output if output is not None else final_text(reply)
        results = answer_all(reply)
        output = results["content"][-1]["content"]
        messages.append(results)


def test_agent_turn_returning_the_raw_tool_result():
    fails("2.2", returns_the_raw_result, "returned '9544717', the tool's raw output",
          "'4823 × 1979 = 9,544,717.'")


def runs_tools_whenever_there_are_calls(client, messages, max_iterations=10):
    while True:
        reply = create(client, messages)
        messages.append({"role": "assistant", "content": reply.content})
        if not any(block.type == "tool_use" for block in reply.content):
            return final_text(reply)
        messages.append(answer_all(reply))


def test_agent_turn_running_a_truncated_call_on_max_tokens():
    fails("2.2", runs_tools_whenever_there_are_calls, "cut off by max_tokens", "stop_reason 'max_tokens'",
          "ran a truncated tool call", "only 'tool_use' means run the tools")


def loops_until_end_turn(client, messages, max_iterations=10):
    while True:
        reply = create(client, messages)
        messages.append({"role": "assistant", "content": reply.content})
        if reply.stop_reason == "end_turn":
            return final_text(reply)
        messages.append(answer_all(reply))


def test_agent_turn_that_only_stops_on_end_turn():
    fails("2.2", loops_until_end_turn, "stop_reason 'max_tokens'", "ran a truncated tool call")


def works_on_a_copy(client, messages, max_iterations=10):
    messages = list(messages)
    return loop.agent_turn(client, messages, max_iterations)


def test_agent_turn_appending_to_a_copy():
    fails("2.2", works_on_a_copy, "messages still holds only the 1 message(s) it had", "the list passed in",
          "don't build a new list", field="messages[1]")


def forgets_the_final_reply(client, messages, max_iterations=10):
    while True:
        reply = create(client, messages)
        if reply.stop_reason != "tool_use":
            return final_text(reply)
        messages.append({"role": "assistant", "content": reply.content})
        messages.append(answer_all(reply))


def test_agent_turn_forgetting_the_final_reply():
    fails("2.2", forgets_the_final_reply, "the model's last reply is missing from messages", field="messages[3]")


def one_message_per_result_kind_of_error(client, messages, max_iterations=10):
    """Inline results that never say is_error: wrong for a failing expression."""
    while True:
        reply = create(client, messages)
        messages.append({"role": "assistant", "content": reply.content})
        if reply.stop_reason != "tool_use":
            return final_text(reply)
        messages.append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": b.id, "content": run_tool(b.name, b.input)}
            for b in reply.content if b.type == "tool_use"]})


def test_agent_turn_building_results_without_is_error():
    fails("2.2", one_message_per_result_kind_of_error, "the tool fails", 'needs "is_error": True', "exercise 2.1",
          field="messages[2].content[0].is_error")


def without_system_prompt(client, messages, max_iterations=10):
    while True:
        reply = client.messages.create(model=MODEL, max_tokens=MAX_TOKENS, tools=TOOLS, messages=messages)
        messages.append({"role": "assistant", "content": reply.content})
        if reply.stop_reason != "tool_use":
            return final_text(reply)
        messages.append(answer_all(reply))


def test_agent_turn_without_the_system_prompt():
    fails("2.2", without_system_prompt, "did not send the system prompt (no system field)", "system=SYSTEM_PROMPT",
          field="system")


def without_tools(client, messages, max_iterations=10):
    while True:
        reply = client.messages.create(model=MODEL, max_tokens=MAX_TOKENS, system=SYSTEM_PROMPT, messages=messages)
        messages.append({"role": "assistant", "content": reply.content})
        if reply.stop_reason != "tool_use":
            return final_text(reply)
        messages.append(answer_all(reply))


def test_agent_turn_without_tools():
    fails("2.2", without_tools, "did not offer the calculator tool", "tools=TOOLS", field="tools")


# --- 2.3 the cap --------------------------------------------------------------------------------------


def test_cap_passes_on_the_reference_and_the_solution(solution):
    passes("2.3", twin(loop.agent_turn))
    passes("2.3", solution["agent_turn"])


def test_cap_stub_is_not_written_yet():
    fails("2.3", stub, "not written yet")


def no_cap(client, messages, max_iterations=10):
    while True:
        reply = create(client, messages)
        messages.append({"role": "assistant", "content": reply.content})
        if reply.stop_reason != "tool_use":
            return final_text(reply)
        messages.append(answer_all(reply))


def test_no_cap_never_stops():
    fails("2.3", no_cap, "a model that never stops, with max_iterations=1", "your code never stopped",
          "it should stop after 1", "hard cap")


def capped(extra_calls=0, default=10, when_out="raise", message="the model was still asking for tools after {n} calls"):
    """agent_turn with a cap, wrong in one chosen way."""

    def agent_turn(client, messages, max_iterations=default):
        for _ in range(max_iterations + extra_calls):
            reply = create(client, messages)
            messages.append({"role": "assistant", "content": reply.content})
            if reply.stop_reason != "tool_use":
                return final_text(reply)
            messages.append(answer_all(reply))
        if when_out == "return":
            return final_text(reply)
        raise RuntimeError(message.format(n=max_iterations))

    return agent_turn


def test_the_capped_helper_is_right_when_nothing_is_wrong():
    passes("2.3", capped())


def test_cap_off_by_one_too_many():
    fails("2.3", capped(extra_calls=1), "max_iterations=1", "made 2 model call(s) before raising",
          "it should make exactly 1")


def test_cap_off_by_one_too_few():
    fails("2.3", capped(extra_calls=-1), "max_iterations=1", "made 0 model call(s) before raising",
          "it should make exactly 1")


def test_cap_that_returns_instead_of_raising():
    fails("2.3", capped(when_out="return"), "returned 'Let me check that once more.' after 1 call(s)",
          "it should raise RuntimeError")


def test_cap_error_that_does_not_name_the_limit():
    fails("2.3", capped(message="too many tool calls"), "the RuntimeError says 'too many tool calls'",
          "it should name the limit (1)")


def test_cap_with_another_default():
    fails("2.3", capped(default=5), "the default max_iterations", "made 5 model call(s)", "exactly 10")


def leaves_the_last_call_unanswered(client, messages, max_iterations=10):
    for iteration in range(max_iterations):
        reply = create(client, messages)
        messages.append({"role": "assistant", "content": reply.content})
        if reply.stop_reason != "tool_use":
            return final_text(reply)
        if iteration == max_iterations - 1:
            break
        messages.append(answer_all(reply))
    raise RuntimeError(f"stopped after {max_iterations} calls")


def test_cap_that_leaves_the_last_tool_use_unanswered():
    fails("2.3", leaves_the_last_call_unanswered, "messages is not a valid history",
          "`tool_use` ids were found without `tool_result` blocks", "every tool_use needs its tool_result",
          field="messages[1]")


def counts_before_checking_the_answer(client, messages, max_iterations=10):
    for iteration in range(max_iterations):
        reply = create(client, messages)
        messages.append({"role": "assistant", "content": reply.content})
        if iteration == max_iterations - 1:
            if reply.stop_reason == "tool_use":
                messages.append(answer_all(reply))
            raise RuntimeError(f"stopped after {max_iterations} calls")
        if reply.stop_reason != "tool_use":
            return final_text(reply)
        messages.append(answer_all(reply))


def test_cap_that_refuses_a_turn_needing_exactly_max_iterations_calls():
    fails("2.3", counts_before_checking_the_answer, "with max_iterations=4 (just enough)",
          "raised RuntimeError (stopped after 4 calls) although the model answered in words on call 4",
          "a turn that ends within the cap must return its text")


def test_cap_still_checks_the_loop_itself():
    fails("2.3", content_zero_capped, "a model that never stops", "AttributeError", "never content[0]")


def content_zero_capped(client, messages, max_iterations=10):
    for _ in range(max_iterations):
        reply = create(client, messages)
        messages.append({"role": "assistant", "content": reply.content})
        if reply.stop_reason != "tool_use":
            return final_text(reply)
        call = reply.content[0]
        messages.append({"role": "user", "content": [tool_result(call, run_tool(call.name, call.input))]})
    raise RuntimeError(f"stopped after {max_iterations} calls")


def agent_turn_answering(answer, max_tokens=MAX_TOKENS):
    """The right loop, except for how a reply's calls are answered: answer(messages, reply)."""
    def agent_turn(client, messages, max_iterations=10):
        for _ in range(max_iterations):
            reply = client.messages.create(model=MODEL, max_tokens=max_tokens, system=SYSTEM_PROMPT, tools=TOOLS,
                                           messages=messages)
            messages.append({"role": "assistant", "content": reply.content})
            if reply.stop_reason != "tool_use":
                return final_text(reply)
            answer(messages, reply)
        raise RuntimeError(f"still calling tools after {max_iterations} calls")
    return agent_turn


def one_message_per_result(messages, reply):
    """Each call answered in a user message of its own: the API wants all of a reply's results in one."""
    for block in reply.content:
        if block.type == "tool_use":
            messages.append({"role": "user", "content": [tool_result(block, run_tool(block.name, block.input))]})


def one_message_of_results(messages, reply):
    messages.append({"role": "user", "content": [tool_result(block, run_tool(block.name, block.input))
                                                 for block in reply.content if block.type == "tool_use"]})


def raising_on_a_failed_tool(messages, reply):
    """Treats the tool's error text as a failure of the program."""
    for block in reply.content:
        if block.type == "tool_use" and is_error(run_tool(block.name, block.input)):
            raise ValueError(run_tool(block.name, block.input))
    one_message_of_results(messages, reply)


def test_two_calls_in_one_reply_are_answered_in_one_user_message():
    fails("2.2", agent_turn_answering(one_message_per_result), "two calls in one reply", "tool_result",
          field="messages[1]")


def test_max_tokens_is_the_one_the_exercise_names():
    fails("2.2", agent_turn_answering(one_message_of_results, max_tokens=64), "max_tokens=64", "MAX_TOKENS",
          field="max_tokens")


def test_raising_on_a_failed_tool_gets_the_point_of_the_case_not_fix_the_line():
    result = fails("2.2", agent_turn_answering(raising_on_a_failed_tool), "the tool fails", "ValueError",
                   "not a failure of your program")
    assert "fix the line" not in result.hint


# --- 2.1: more wrong answers ------------------------------------------------------------------------


def content_with_a_label(tool_use, output):
    result = {"type": "tool_result", "tool_use_id": tool_use.id, "content": f"Result: {output}"}
    return result | ({"is_error": True} if is_error(output) else {})


def content_as_a_list_of_strings(tool_use, output):
    result = {"type": "tool_result", "tool_use_id": tool_use.id, "content": [output]}
    return result | ({"is_error": True} if is_error(output) else {})


@pytest.mark.parametrize("wrong, content", [(content_with_a_label, "'Result: 9544717'"),
                                            (content_as_a_list_of_strings, '["9544717"]')])
def test_tool_result_with_other_content_than_the_output(wrong, content):
    fails("2.1", wrong, f'"content" is {content}', "it should be the tool's output, '9544717'", field="content")


def one_dict_for_every_call(tool_use, output, result={}):  # noqa: B006 (the mistake itself)
    result.update({"type": "tool_result", "tool_use_id": tool_use.id, "content": output})
    if is_error(output):
        result["is_error"] = True
    return result


RESULT_TEMPLATE = {"type": "tool_result"}


def fills_a_shared_template(tool_use, output):
    result = RESULT_TEMPLATE
    result["tool_use_id"], result["content"] = tool_use.id, output
    result.pop("is_error", None)
    if is_error(output):
        result["is_error"] = True
    return result


@pytest.mark.parametrize("wrong", [one_dict_for_every_call, fills_a_shared_template])
def test_tool_result_returning_one_dict_for_every_call_is_caught_when_the_results_are_sent(wrong):
    RESULT_TEMPLATE.clear()
    RESULT_TEMPLATE["type"] = "tool_result"
    fails("2.1", wrong, "sending the results back to the API", "the same dict for the 2 calls",
          "A default argument such as result={}", field="results[0].tool_use_id")


def result_naming_the_tool(tool_use, output):
    """A field the API does not define in a tool_result block: the real API answers 400."""
    result = {"type": "tool_result", "tool_use_id": tool_use.id, "content": output, "name": tool_use.name}
    return result | ({"is_error": True} if is_error(output) else {})


def test_tool_result_with_a_field_the_api_does_not_define_is_refused_when_sent():
    fails("2.1", result_naming_the_tool, "sending the results back to the API", "(400)",
          "Extra inputs are not permitted", "tool_result.name")


# --- 2.2: results in any order, text after them: what the API accepts ----------------------------------


def reversed_results(messages, reply):
    calls = [block for block in reply.content if block.type == "tool_use"]
    messages.append({"role": "user", "content": [tool_result(b, run_tool(b.name, b.input)) for b in reversed(calls)]})


def results_sorted_by_id(messages, reply):
    results = [tool_result(b, run_tool(b.name, b.input)) for b in reply.content if b.type == "tool_use"]
    messages.append({"role": "user", "content": sorted(results, key=lambda result: result["tool_use_id"],
                                                       reverse=True)})


def results_then_a_note(messages, reply):
    results = [tool_result(b, run_tool(b.name, b.input)) for b in reply.content if b.type == "tool_use"]
    messages.append({"role": "user", "content": results + [{"type": "text", "text": "Those are the results."}]})


def results_as_text_blocks(messages, reply):
    """Each result's content as a list of text blocks, and is_error written out even when false: the same to the API."""
    messages.append({"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": b.id, "content": [{"type": "text", "text": run_tool(b.name, b.input)}],
         "is_error": is_error(run_tool(b.name, b.input))} for b in reply.content if b.type == "tool_use"]})


@pytest.mark.parametrize("answer", [reversed_results, results_sorted_by_id, results_then_a_note,
                                    results_as_text_blocks])
def test_agent_turn_may_send_results_in_any_order_and_text_after_them(answer):
    passes("2.2", agent_turn_answering(answer))
    passes("2.3", agent_turn_answering(answer))


def results_in_the_assistant_role(messages, reply):
    messages.append({"role": "assistant", "content": [tool_result(b, run_tool(b.name, b.input))
                                                      for b in reply.content if b.type == "tool_use"]})


def test_results_sent_in_the_assistant_role_get_the_rules_hint_not_the_scenarios():
    result = fails("2.2", agent_turn_answering(results_in_the_assistant_role), "(400)",
                   "tool_result blocks are only allowed in user messages", "they go in the next user message",
                   field="messages[2].content[0]")
    assert "content[0]" not in result.hint.replace("messages.2.content.0", "")


# --- 2.2: the whole Message appended (fields the API does not define in a message) -----------------------


def agent_turn_recording(record):
    """The right loop, except for what it appends for each reply: record(reply)."""
    def agent_turn(client, messages, max_iterations=10):
        while True:
            reply = create(client, messages)
            messages.append(record(reply))
            if reply.stop_reason != "tool_use":
                return final_text(reply)
            messages.append(answer_all(reply))
    return agent_turn


def the_whole_reply(reply):
    return reply


def the_reply_dumped(reply):
    return reply.model_dump()


def the_reply_as_a_dict_with_its_role(reply):
    return {"role": "assistant", **reply.to_dict()}


@pytest.mark.parametrize("record", [the_whole_reply, the_reply_as_a_dict_with_its_role])
def test_agent_turn_appending_the_whole_message(record):
    fails("2.2", agent_turn_recording(record), "the model writes a text block before the tool_use",
          "messages.1.id: Extra inputs are not permitted", '"content": reply.content', field="messages[1].id")


def test_agent_turn_appending_the_reply_dumped():
    """Refused for its id, or (by the API's own validation of the request) for a block field dumped as null."""
    fails("2.2", agent_turn_recording(the_reply_dumped), "the model writes a text block before the tool_use", "400",
          field="messages[1]")


# --- 2.2: the request's settings ------------------------------------------------------------------------


def agent_turn_asking(**settings):
    """The right loop, with these settings for every request instead of the exercise's."""
    request = dict(model=MODEL, max_tokens=MAX_TOKENS, system=SYSTEM_PROMPT, tools=TOOLS) | settings

    def agent_turn(client, messages, max_iterations=10):
        while True:
            reply = client.messages.create(messages=messages, **{k: v for k, v in request.items() if v is not None})
            messages.append({"role": "assistant", "content": reply.content})
            if reply.stop_reason != "tool_use":
                return final_text(reply)
            messages.append(answer_all(reply))
    return agent_turn


@pytest.mark.parametrize("model", ["claude-sonnet-5", "claude-haiku-5"])
def test_agent_turn_with_another_model(model):
    fails("2.2", agent_turn_asking(model=model), f"model call 1 asked for model {model!r}", "use MODEL",
          field="model")


@pytest.mark.parametrize("system", ["You are a calculator.", [{"type": "text", "text": "Use the calculator."}]])
def test_agent_turn_with_its_own_system_prompt(system):
    result = fails("2.2", agent_turn_asking(system=system), "did not send the system prompt SYSTEM_PROMPT",
                   "system=SYSTEM_PROMPT", field="system")
    assert "expected 'You are a helpful assistant." in result.failed


def system_prompt_as_a_first_message(client, messages, max_iterations=10):
    if messages[0].get("content") != SYSTEM_PROMPT:
        messages.insert(0, {"role": "user", "content": SYSTEM_PROMPT})
    return agent_turn_asking(system=None)(client, messages, max_iterations)


def test_agent_turn_sending_the_system_prompt_as_a_message():
    fails("2.2", system_prompt_as_a_first_message, "(no system field)", "system=SYSTEM_PROMPT", field="system")


# --- 2.2: calling again after the answer ------------------------------------------------------------------


def stops_only_after_a_tool(client, messages, max_iterations=10):
    """Waits for the calculator before it takes an answer: a greeting is answered without it."""
    used_a_tool = False
    while True:
        reply = create(client, messages)
        messages.append({"role": "assistant", "content": reply.content})
        if reply.stop_reason != "tool_use" and used_a_tool:
            return final_text(reply)
        if reply.stop_reason == "tool_use":
            used_a_tool = True
            messages.append(answer_all(reply))


def retries_after_an_error(client, messages, max_iterations=10):
    """Takes an answer only once every tool worked: after a failing one, it asks the model again."""
    failed = False
    while True:
        reply = create(client, messages)
        messages.append({"role": "assistant", "content": reply.content})
        if reply.stop_reason != "tool_use" and not failed:
            return final_text(reply)
        results = answer_all(reply)
        failed = any(result.get("is_error") for result in results["content"])
        messages.append(results if results["content"] else {"role": "user", "content": "Please try again."})


@pytest.mark.parametrize("wrong, situation", [(stops_only_after_a_tool, "the model answers without a tool"),
                                              (retries_after_an_error, "the tool fails")])
def test_agent_turn_calling_the_model_again_after_its_answer(wrong, situation):
    fails("2.2", wrong, situation, "the model answered in words (stop_reason 'end_turn') on call",
          "yet agent_turn called it again",
          "Stop as soon as reply.stop_reason is not 'tool_use'")


# --- 2.2: the history it leaves --------------------------------------------------------------------------


def sends_only_the_last_question(client, messages, max_iterations=10):
    """Trims the history to the new question "to save tokens": the conversation before it is lost."""
    del messages[:-1]
    return no_cap(client, messages, max_iterations)


def adds_an_instruction_to_the_question(client, messages, max_iterations=10):
    messages[-1]["content"] += " Use the calculator."
    return no_cap(client, messages, max_iterations)


def test_agent_turn_changing_the_history_it_was_given():
    fails("2.2", sends_only_the_last_question, "a second question", "messages[0], which was there before the call, "
          "was changed", "messages[0].content: yours 'And twice that?', expected 'What is 4823 × 1979?'",
          "never change or remove", field="messages[0].content")
    fails("2.2", adds_an_instruction_to_the_question, "messages[0], which was there before the call, was changed",
          "yours 'What is 4823 × 1979? Use the calculator.'", field="messages[0].content")


def appends_the_answer_again(client, messages, max_iterations=10):
    while True:
        reply = create(client, messages)
        messages.append({"role": "assistant", "content": reply.content})
        if reply.stop_reason != "tool_use":
            answer = final_text(reply)
            messages.append({"role": "assistant", "content": answer})
            return answer
        messages.append(answer_all(reply))


def appends_results_even_when_there_are_none(client, messages, max_iterations=10):
    while True:
        reply = create(client, messages)
        messages.append({"role": "assistant", "content": reply.content})
        results = answer_all(reply)
        messages.append(results)
        if reply.stop_reason != "tool_use":
            return final_text(reply)


@pytest.mark.parametrize("wrong", [appends_the_answer_again, appends_results_even_when_there_are_none])
def test_agent_turn_leaving_an_extra_message(wrong):
    fails("2.2", wrong, "the model writes a text block before the tool_use",
          "messages has 5 messages; it should hold 4",
          "message 4 is extra", "expected nothing", field="messages[4]")


def final_reply_as(role):
    """Appends the final reply under another role than 'assistant' (a slip in the branch that returns)."""
    def agent_turn(client, messages, max_iterations=10):
        while True:
            reply = create(client, messages)
            if reply.stop_reason != "tool_use":
                messages.append({"role": role, "content": reply.content})
                return final_text(reply)
            messages.append({"role": "assistant", "content": reply.content})
            messages.append(answer_all(reply))
    return agent_turn


@pytest.mark.parametrize("role", ["user", "model"])
def test_agent_turn_appending_the_final_reply_under_another_role(role):
    fails("2.2", final_reply_as(role), "messages[3] should be the model's reply (role 'assistant')",
          f"messages[3].role: yours {role!r}, expected 'assistant'", field="messages[3].role")


def pops_the_final_reply(client, messages, max_iterations=10):
    while True:
        reply = create(client, messages)
        messages.append({"role": "assistant", "content": reply.content})
        if reply.stop_reason != "tool_use":
            last = messages.pop()
            return "".join(block.text for block in last["content"] if block.type == "text")
        messages.append(answer_all(reply))


def deletes_the_final_reply(client, messages, max_iterations=10):
    answer = no_cap(client, messages, max_iterations)
    del messages[-1]
    return answer


@pytest.mark.parametrize("wrong", [pops_the_final_reply, deletes_the_final_reply])
def test_agent_turn_taking_the_reply_out_of_the_list_is_told_so(wrong):
    result = fails("2.2", wrong, "took messages out of the list it was given", "never by popping it",
                   field="messages[3]")
    assert "new list" not in result.hint


# --- 2.2: blocks tested by class, not by type: the results message is empty ---------------------------------


def picking_calls_by_class(kind):
    def answer(messages, reply):
        messages.append({"role": "user", "content": [tool_result(b, run_tool(b.name, b.input))
                                                     for b in reply.content if isinstance(b, kind)]})
    return agent_turn_answering(answer)


def test_agent_turn_testing_blocks_with_isinstance_gets_the_empty_results_named():
    from anthropic.types.beta import BetaToolUseBlock

    for kind in (dict, BetaToolUseBlock):
        fails("2.2", picking_calls_by_class(kind), "messages[2], the answer to the calls",
              "is an empty list: your code found none of the reply's tool_use blocks",
              "all messages must have non-empty content", 'block.type == "tool_use"', field="messages[2]")


# --- 2.3: the cap raises another exception ------------------------------------------------------------------


@pytest.mark.parametrize("error", [ValueError, TimeoutError])
def test_cap_raising_another_exception_is_told_runtime_error(error):
    def agent_turn(client, messages, max_iterations=10):
        try:
            return capped()(client, messages, max_iterations)
        except RuntimeError as stopped:
            raise error(str(stopped)) from None

    fails("2.3", agent_turn, "a model that never stops", f"agent_turn raised {error.__name__}",
          "should get RuntimeError, naming the limit", "RuntimeError, not another exception")
