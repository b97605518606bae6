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

    fails("2.1", named_id, 'no "tool_use_id" key', '"tool_use_id" (not "id")')


def test_tool_result_with_is_error_false_always_present():
    def always_flagged(tool_use, output):
        return {"type": "tool_result", "tool_use_id": tool_use.id, "content": output, "is_error": is_error(output)}

    fails("2.1", always_flagged, '"is_error" should only be there when it is True')


def test_tool_result_without_is_error_on_an_error_output():
    def never_flagged(tool_use, output):
        return {"type": "tool_result", "tool_use_id": tool_use.id, "content": output}

    fails("2.1", never_flagged, "'Error: division by zero'", 'needs "is_error": True', "is_error(output)")


def test_tool_result_with_the_id_from_the_wrong_place():
    def cites_the_name(tool_use, output):
        return {"type": "tool_result", "tool_use_id": tool_use.name, "content": output}

    fails("2.1", cites_the_name, "\"tool_use_id\" is 'calculator'", "it should be the id of the call it answers",
          "tool_use.id")


def test_tool_result_with_an_id_copied_from_an_example():
    def hard_coded(tool_use, output):
        return {"type": "tool_result", "tool_use_id": "toolu_01TryItGood", "content": output}

    fails("2.1", hard_coded, "'toolu_01TryItGood'", "the id of the call it answers")


def test_tool_result_with_the_wrong_type():
    def wrong_type(tool_use, output):
        return {"type": "tool_use", "tool_use_id": tool_use.id, "content": output}

    fails("2.1", wrong_type, "\"type\" is 'tool_use'", '"tool_result"')


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
          "unexpected `tool_use_id` found in `tool_result` blocks")


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
          "blocks [text, tool_use]; yours holds [tool_use]", '"content": reply.content')


def keeps_the_text_only(client, messages, max_iterations=10):
    while True:
        reply = create(client, messages)
        messages.append({"role": "assistant", "content": [b for b in reply.content if b.type != "thinking"]})
        if reply.stop_reason != "tool_use":
            return final_text(reply)
        messages.append(answer_all(reply))


def test_agent_turn_dropping_thinking_blocks_is_not_verbatim():
    fails("2.2", keeps_the_text_only, "the model thinks first", "blocks [thinking, tool_use]; yours holds [tool_use]")


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
    fails("2.2", works_on_a_copy, "messages still holds only the 1 message(s) it had", "the list passed in")


def forgets_the_final_reply(client, messages, max_iterations=10):
    while True:
        reply = create(client, messages)
        if reply.stop_reason != "tool_use":
            return final_text(reply)
        messages.append({"role": "assistant", "content": reply.content})
        messages.append(answer_all(reply))


def test_agent_turn_forgetting_the_final_reply():
    fails("2.2", forgets_the_final_reply, "the model's last reply is missing from messages")


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
    fails("2.2", one_message_per_result_kind_of_error, "the tool fails", 'needs "is_error": True', "exercise 2.1")


def without_system_prompt(client, messages, max_iterations=10):
    while True:
        reply = client.messages.create(model=MODEL, max_tokens=MAX_TOKENS, tools=TOOLS, messages=messages)
        messages.append({"role": "assistant", "content": reply.content})
        if reply.stop_reason != "tool_use":
            return final_text(reply)
        messages.append(answer_all(reply))


def test_agent_turn_without_the_system_prompt():
    fails("2.2", without_system_prompt, "did not send the system prompt (no system field)", "system=SYSTEM_PROMPT")


def without_tools(client, messages, max_iterations=10):
    while True:
        reply = client.messages.create(model=MODEL, max_tokens=MAX_TOKENS, system=SYSTEM_PROMPT, messages=messages)
        messages.append({"role": "assistant", "content": reply.content})
        if reply.stop_reason != "tool_use":
            return final_text(reply)
        messages.append(answer_all(reply))


def test_agent_turn_without_tools():
    fails("2.2", without_tools, "did not offer the calculator tool", "tools=TOOLS")


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
          "`tool_use` ids were found without `tool_result` blocks", "every tool_use needs its tool_result")


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
        raise RuntimeError("too many iterations")
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
    fails("2.2", agent_turn_answering(one_message_per_result), "two calls in one reply", "tool_result")


def test_max_tokens_is_the_one_the_exercise_names():
    fails("2.2", agent_turn_answering(one_message_of_results, max_tokens=64), "max_tokens=64", "MAX_TOKENS")


def test_raising_on_a_failed_tool_gets_the_point_of_the_case_not_fix_the_line():
    result = fails("2.2", agent_turn_answering(raising_on_a_failed_tool), "the tool fails", "ValueError",
                   "not a failure of your program")
    assert "fix the line" not in result.hint
