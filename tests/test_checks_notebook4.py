"""The check of notebook 4 (`run`, the agent as a program): passes on right answers, fails on wrong ones
with the message a learner needs."""

import json
import sys

import pytest

from looplab import loop
from looplab.checks import run_check
from looplab.client import MODEL
from looplab.loop import SYSTEM_PROMPT, tool_result
from looplab.tools import TOOLS, run_tool
from tests.check_helpers import fails, passes, twin
from tests.notebook_code import solution_namespace


def failure(run) -> str:
    result = run_check("4.1", run)
    assert not result.ok, "the check should fail"
    assert result.points == 0
    return f"{result.failed}\nHINT: {result.hint}"


# --- right answers -----------------------------------------------------------------------------------


def test_the_reference_run_passes():
    result = run_check("4.1", twin(loop.run))
    assert result.ok, result
    assert result.points == result.max_points == 4


def test_the_solution_notebooks_run_passes():
    namespace = solution_namespace("04_your_agent")
    result = run_check("4.1", namespace["run"])
    assert result.ok, result


def text_of(reply) -> str:
    return "".join(block.text for block in reply.content if block.type == "text")


def run_another_way(input_stream, output_stream, client, system=SYSTEM_PROMPT, max_iterations=10):
    """Right too: iterates with readline in a while-condition, prints with print(file=...), its own wording."""
    messages = []
    print("User> ", end="", file=output_stream)
    while (line := input_stream.readline().rstrip("\n")):
        messages.append({"role": "user", "content": [{"type": "text", "text": line}]})
        calls = 0
        while True:
            reply = client.messages.create(model=MODEL, max_tokens=1024, system=system, tools=TOOLS, messages=messages)
            calls += 1
            messages.append({"role": "assistant", "content": reply.content})
            if reply.stop_reason == "tool_use" and calls < max_iterations:
                results = []
                for block in reply.content:
                    if block.type == "tool_use":
                        output = run_tool(block.name, block.input)
                        print(f"[tool] {block.name}({block.input}) -> {output}", file=output_stream)
                        results.append(tool_result(block, output))
                messages.append({"role": "user", "content": results})
                continue
            break
        if reply.stop_reason == "tool_use":
            messages.pop()  # the unanswered call must not stay in the history
            print("Agent> Sorry, I gave up: too many tool calls.", file=output_stream)
        elif reply.stop_reason in ("max_tokens", "refusal"):
            messages.pop()  # a half-finished or refused reply must not stay in the history
            print(f"Agent> [{reply.stop_reason}] {text_of(reply)}", file=output_stream)
        else:
            print(f"Agent> {text_of(reply)}", file=output_stream)
        print("User> ", end="", file=output_stream)


def test_another_right_answer_passes():
    result = run_check("4.1", run_another_way)
    assert result.ok, result


# --- not written yet ----------------------------------------------------------------------------------


def stub(input_stream, output_stream, client, system=SYSTEM_PROMPT, max_iterations=10):
    raise NotImplementedError("Exercise 4.1: replace this line with your code")


def test_the_stub_is_not_written_yet():
    assert "not written yet" in failure(stub)


# --- wrong answers -------------------------------------------------------------------------------------
# Each is the right answer with one typical mistake, marked "# MISTAKE".


def inner_loop(client, messages, output_stream, system, max_iterations):
    """The right inner loop, shared by the wrong answers whose mistake is elsewhere."""
    for _ in range(max_iterations):
        reply = client.messages.create(model=MODEL, max_tokens=1024, system=system, tools=TOOLS, messages=messages)
        messages.append({"role": "assistant", "content": reply.content})
        if reply.stop_reason != "tool_use":
            break
        results = []
        for block in reply.content:
            if block.type == "tool_use":
                output = run_tool(block.name, block.input)
                output_stream.write(f"[tool] {block.name}({block.input}) -> {output}\n")
                results.append(tool_result(block, output))
        messages.append({"role": "user", "content": results})
    return reply


def say(output_stream, messages, reply):
    """The right Agent> line."""
    if reply.stop_reason in ("max_tokens", "refusal"):
        messages.pop()
        output_stream.write(f"Agent> (the reply ended early: {reply.stop_reason}) {text_of(reply)}\n")
    elif reply.stop_reason == "tool_use":
        output_stream.write("Agent> (stopped: too many tool calls)\n")
    else:
        output_stream.write(f"Agent> {text_of(reply)}\n")


def uses_input(input_stream, output_stream, client, system=SYSTEM_PROMPT, max_iterations=10):
    messages = []
    while True:
        line = input("User> ")  # MISTAKE
        if not line.strip():
            return
        messages.append({"role": "user", "content": line.strip()})
        say(output_stream, messages, inner_loop(client, messages, output_stream, system, max_iterations))


def reads_sys_stdin(input_stream, output_stream, client, system=SYSTEM_PROMPT, max_iterations=10):
    messages = []
    while True:
        output_stream.write("User> ")
        line = sys.stdin.readline()  # MISTAKE
        if not line.strip():
            return
        messages.append({"role": "user", "content": line.strip()})
        say(output_stream, messages, inner_loop(client, messages, output_stream, system, max_iterations))


def swallows_input_failure(input_stream, output_stream, client, system=SYSTEM_PROMPT, max_iterations=10):
    try:
        line = input("User> ")  # MISTAKE, and the error it raises is swallowed
    except Exception:
        input_stream.readline()
    loop.run(input_stream, output_stream, client, system, max_iterations)


def no_prompt(input_stream, output_stream, client, system=SYSTEM_PROMPT, max_iterations=10):
    messages = []
    while True:
        line = input_stream.readline()  # MISTAKE: no prompt written
        if not line.strip():
            return
        messages.append({"role": "user", "content": line.strip()})
        say(output_stream, messages, inner_loop(client, messages, output_stream, system, max_iterations))


def prompt_after_reading(input_stream, output_stream, client, system=SYSTEM_PROMPT, max_iterations=10):
    messages = []
    for line in input_stream:
        output_stream.write("User> ")  # MISTAKE: written after the read, so none before the end of input
        if not line.strip():
            return
        messages.append({"role": "user", "content": line.strip()})
        say(output_stream, messages, inner_loop(client, messages, output_stream, system, max_iterations))


def prints_to_the_notebook(input_stream, output_stream, client, system=SYSTEM_PROMPT, max_iterations=10):
    messages = []
    while True:
        print("User> ", end="")  # MISTAKE: print() writes to sys.stdout, not output_stream
        line = input_stream.readline()
        if not line.strip():
            return
        messages.append({"role": "user", "content": line.strip()})
        reply = client.messages.create(model=MODEL, max_tokens=1024, system=system, tools=TOOLS, messages=messages)
        print(f"Agent> {text_of(reply)}")


def sends_the_newline(input_stream, output_stream, client, system=SYSTEM_PROMPT, max_iterations=10):
    messages = []
    while True:
        output_stream.write("User> ")
        line = input_stream.readline()
        if not line.strip():
            return
        messages.append({"role": "user", "content": line})  # MISTAKE: "...?\n"
        say(output_stream, messages, inner_loop(client, messages, output_stream, system, max_iterations))


def forgets_history(input_stream, output_stream, client, system=SYSTEM_PROMPT, max_iterations=10):
    while True:
        output_stream.write("User> ")
        line = input_stream.readline()
        if not line.strip():
            return
        messages = [{"role": "user", "content": line.strip()}]  # MISTAKE: a new history for every line
        say(output_stream, messages, inner_loop(client, messages, output_stream, system, max_iterations))


def runner(inner):
    """The right outer loop around an inner loop with a mistake."""

    def run(input_stream, output_stream, client, system=SYSTEM_PROMPT, max_iterations=10):
        messages = []
        while True:
            output_stream.write("User> ")
            line = input_stream.readline()
            if not line.strip():
                return
            messages.append({"role": "user", "content": line.strip()})
            say(output_stream, messages, inner(client, messages, output_stream, system, max_iterations))

    run.__name__ = inner.__name__.lstrip("_")
    return run


def _json_tool_line(client, messages, output_stream, system, max_iterations):
    for _ in range(max_iterations):
        reply = client.messages.create(model=MODEL, max_tokens=1024, system=system, tools=TOOLS, messages=messages)
        messages.append({"role": "assistant", "content": reply.content})
        if reply.stop_reason != "tool_use":
            break
        results = []
        for block in reply.content:
            if block.type == "tool_use":
                output = run_tool(block.name, block.input)
                output_stream.write(f"[tool] {block.name}({json.dumps(block.input)}) -> {output}\n")  # MISTAKE
                results.append(tool_result(block, output))
        messages.append({"role": "user", "content": results})
    return reply


def _first_block(client, messages, output_stream, system, max_iterations):
    for _ in range(max_iterations):
        reply = client.messages.create(model=MODEL, max_tokens=1024, system=system, tools=TOOLS, messages=messages)
        messages.append({"role": "assistant", "content": reply.content})
        if reply.stop_reason != "tool_use":
            break
        block = reply.content[0]  # MISTAKE: a text or thinking block may come first
        output = run_tool(block.name, block.input)
        output_stream.write(f"[tool] {block.name}({block.input}) -> {output}\n")
        messages.append({"role": "user", "content": [tool_result(block, output)]})
    return reply


def _only_first_tool_use(client, messages, output_stream, system, max_iterations):
    for _ in range(max_iterations):
        reply = client.messages.create(model=MODEL, max_tokens=1024, system=system, tools=TOOLS, messages=messages)
        messages.append({"role": "assistant", "content": reply.content})
        if reply.stop_reason != "tool_use":
            break
        block = next(b for b in reply.content if b.type == "tool_use")  # MISTAKE: only the first call
        output = run_tool(block.name, block.input)
        output_stream.write(f"[tool] {block.name}({block.input}) -> {output}\n")
        messages.append({"role": "user", "content": [tool_result(block, output)]})
    return reply


def _one_message_per_result(client, messages, output_stream, system, max_iterations):
    for _ in range(max_iterations):
        reply = client.messages.create(model=MODEL, max_tokens=1024, system=system, tools=TOOLS, messages=messages)
        messages.append({"role": "assistant", "content": reply.content})
        if reply.stop_reason != "tool_use":
            break
        for block in reply.content:
            if block.type == "tool_use":
                output = run_tool(block.name, block.input)
                output_stream.write(f"[tool] {block.name}({block.input}) -> {output}\n")
                messages.append({"role": "user", "content": [tool_result(block, output)]})  # MISTAKE
    return reply


def _no_is_error(client, messages, output_stream, system, max_iterations):
    for _ in range(max_iterations):
        reply = client.messages.create(model=MODEL, max_tokens=1024, system=system, tools=TOOLS, messages=messages)
        messages.append({"role": "assistant", "content": reply.content})
        if reply.stop_reason != "tool_use":
            break
        results = []
        for block in reply.content:
            if block.type == "tool_use":
                output = run_tool(block.name, block.input)
                output_stream.write(f"[tool] {block.name}({block.input}) -> {output}\n")
                results.append({"type": "tool_result", "tool_use_id": block.id, "content": output})  # MISTAKE
        messages.append({"role": "user", "content": results})
    return reply


def _no_cap(client, messages, output_stream, system, max_iterations):
    while True:  # MISTAKE: trusts the model to stop
        reply = client.messages.create(model=MODEL, max_tokens=1024, system=system, tools=TOOLS, messages=messages)
        messages.append({"role": "assistant", "content": reply.content})
        if reply.stop_reason != "tool_use":
            return reply
        results = []
        for block in reply.content:
            if block.type == "tool_use":
                output = run_tool(block.name, block.input)
                output_stream.write(f"[tool] {block.name}({block.input}) -> {output}\n")
                results.append(tool_result(block, output))
        messages.append({"role": "user", "content": results})


def _cap_raises(client, messages, output_stream, system, max_iterations):
    reply = inner_loop(client, messages, output_stream, system, max_iterations)
    if reply.stop_reason == "tool_use":
        raise RuntimeError(f"still calling tools after {max_iterations} calls")  # MISTAKE: a program should go on
    return reply


def _runs_tools_of_a_cut_reply(client, messages, output_stream, system, max_iterations):
    for _ in range(max_iterations):
        reply = client.messages.create(model=MODEL, max_tokens=1024, system=system, tools=TOOLS, messages=messages)
        messages.append({"role": "assistant", "content": reply.content})
        calls = [block for block in reply.content if block.type == "tool_use"]
        if not calls:  # MISTAKE: decides on the blocks, not on stop_reason
            break
        results = []
        for block in calls:
            output = run_tool(block.name, block.input)
            output_stream.write(f"[tool] {block.name}({block.input}) -> {output}\n")
            results.append(tool_result(block, output))
        messages.append({"role": "user", "content": results})
    return reply


def _ignores_system(client, messages, output_stream, system, max_iterations):
    return inner_loop(client, messages, output_stream, SYSTEM_PROMPT, max_iterations)  # MISTAKE


def _not_duck_typed(client, messages, output_stream, system, max_iterations):
    for _ in range(max_iterations):
        reply = client.messages.create(model=MODEL, max_tokens=1024, system=system, tools=TOOLS, messages=messages)
        content = [block.model_dump(exclude_unset=True) for block in reply.content]  # MISTAKE: SDK objects only
        messages.append({"role": "assistant", "content": content})
        if reply.stop_reason != "tool_use":
            break
        results = []
        for block in reply.content:
            if block.type == "tool_use":
                output = run_tool(block.name, block.input)
                output_stream.write(f"[tool] {block.name}({block.input}) -> {output}\n")
                results.append(tool_result(block, output))
        messages.append({"role": "user", "content": results})
    return reply


def with_agent_line(write_agent_line):
    """The right loops, with a mistake in how the Agent> line is written."""

    def run(input_stream, output_stream, client, system=SYSTEM_PROMPT, max_iterations=10):
        messages = []
        while True:
            output_stream.write("User> ")
            line = input_stream.readline()
            if not line.strip():
                return
            messages.append({"role": "user", "content": line.strip()})
            reply = inner_loop(client, messages, output_stream, system, max_iterations)
            write_agent_line(output_stream, reply)
            if reply.stop_reason in ("max_tokens", "refusal") and messages[-1]["content"] is reply.content:
                messages.pop()  # right: a reply that ended early leaves the history

    run.__name__ = write_agent_line.__name__.lstrip("_")
    return run


def _ignores_stop_reason(output_stream, reply):
    output_stream.write(f"Agent> {text_of(reply)}\n")  # MISTAKE: a cut reply looks like a whole one


def _next_text_crashes(output_stream, reply):
    answer = next(block.text for block in reply.content if block.type == "text")  # MISTAKE: no text on a refusal
    if reply.stop_reason == "max_tokens":
        answer += " (cut short)"
    output_stream.write(f"Agent> {answer}\n")


def _raises_on_stop_reason(output_stream, reply):
    if reply.stop_reason in ("max_tokens", "refusal"):
        raise RuntimeError(f"the model stopped: {reply.stop_reason}")  # MISTAKE: a program should go on
    output_stream.write(f"Agent> {text_of(reply)}\n")


def prints_text_next_to_calls(input_stream, output_stream, client, system=SYSTEM_PROMPT, max_iterations=10):
    messages = []
    while True:
        output_stream.write("User> ")
        line = input_stream.readline()
        if not line.strip():
            return
        messages.append({"role": "user", "content": line.strip()})
        for _ in range(max_iterations):
            reply = client.messages.create(model=MODEL, max_tokens=1024, system=system, tools=TOOLS, messages=messages)
            messages.append({"role": "assistant", "content": reply.content})
            if reply.stop_reason != "tool_use":
                break
            if text_of(reply):
                output_stream.write(f"Agent> {text_of(reply)}\n")  # MISTAKE: not the final reply
            results = []
            for block in reply.content:
                if block.type == "tool_use":
                    output = run_tool(block.name, block.input)
                    output_stream.write(f"[tool] {block.name}({block.input}) -> {output}\n")
                    results.append(tool_result(block, output))
            messages.append({"role": "user", "content": results})
        say(output_stream, messages, reply)


def stops_only_at_end_of_input(input_stream, output_stream, client, system=SYSTEM_PROMPT, max_iterations=10):
    messages = []
    while True:
        output_stream.write("User> ")
        line = input_stream.readline()
        if not line:  # MISTAKE: an empty line ("\n") goes on
            return
        messages.append({"role": "user", "content": line.strip()})
        say(output_stream, messages, inner_loop(client, messages, output_stream, system, max_iterations))


def skips_empty_lines(input_stream, output_stream, client, system=SYSTEM_PROMPT, max_iterations=10):
    messages = []
    while True:
        output_stream.write("User> ")
        line = input_stream.readline()
        if not line:
            return
        if not line.strip():
            continue  # MISTAKE: an empty line should end the session
        messages.append({"role": "user", "content": line.strip()})
        say(output_stream, messages, inner_loop(client, messages, output_stream, system, max_iterations))


WRONG_ANSWERS = [
    (uses_input, ["called input()", "input_stream"]),
    (reads_sys_stdin, ["read sys.stdin", "input_stream"]),
    (swallows_input_failure, ["called input()"]),
    (no_prompt, ["never wrote the prompt 'User> '"]),
    (prompt_after_reading, ["line 2 of the output is (nothing); expected 'User>'", "before every read"]),
    (prints_to_the_notebook, ["wrote nothing to output_stream, but printed to the notebook", "file=output_stream"]),
    (sends_the_newline, ["the user message was 'What is 4823 × 1979?\\n'", "without its newline"]),
    (forgets_history, ["the second line's request held 1 message(s)", "Create the messages list once"]),
    (runner(_json_tool_line), ["\"expression\"", "expected \"User> [tool] calculator({'expression': '4823 * 1979'})",
                               "as Python prints it"]),
    (runner(_first_block), ["after a text block", "AttributeError", "'TextBlock' object has no attribute 'name'"]),
    (runner(_only_first_tool_use), ["two calls at once", "400", "without `tool_result` blocks immediately after"]),
    (runner(_one_message_per_result), ["two calls at once", "400", "without `tool_result` blocks immediately after",
                                       "ONE user message"]),
    (runner(_no_is_error), ["the tool fails", "is_error=None; it should be True", "tool_result(block, output)"]),
    (runner(_no_cap), ["never stops", "more than 3 times", "max_iterations"]),
    (runner(_cap_raises), ["never stops", "RuntimeError", "Agent> line"]),
    (runner(_runs_tools_of_a_cut_reply), ["cut short in the middle of a tool call", "must not run",
                                          "only when stop_reason is 'tool_use'"]),
    (runner(_ignores_system), ["custom system prompt", "'Answer in one word.'", "system=system"]),
    (runner(_not_duck_typed), ["minimal client", "AttributeError", "model_dump"]),
    (with_agent_line(_ignores_stop_reason), ["max_tokens", "Agent> line that says the reply was cut short",
                                             "names it"]),
    (with_agent_line(_next_text_crashes), ["the model refuses", "StopIteration"]),
    (with_agent_line(_raises_on_stop_reason), ["max_tokens", "RuntimeError: the model stopped: max_tokens"]),
    (prints_text_next_to_calls, ["after a text block: line 1 of the output is \"User> Agent> I'll use the calculator.\"",
                                 "text that comes along with a tool call is not printed"]),
    (stops_only_at_end_of_input, ["an empty line ends the session", "went on after the empty line"]),
    (skips_empty_lines, ["an empty line ends the session", "went on after the empty line"]),
]


@pytest.mark.parametrize("wrong, expected", WRONG_ANSWERS,
                         ids=[wrong.__name__ for wrong, _ in WRONG_ANSWERS])
def test_a_typical_mistake_fails_with_the_right_message(wrong, expected):
    fails("4.1", wrong, *expected)


def test_the_check_restores_input_and_stdin():
    import builtins

    saved_input, saved_stdin, saved_stdout = builtins.input, sys.stdin, sys.stdout
    failure(uses_input)
    run_check("4.1", loop.run)
    assert (builtins.input, sys.stdin, sys.stdout) == (saved_input, saved_stdin, saved_stdout)


def test_points_and_hints():
    from looplab.course import COURSE

    assert COURSE.exercise("4.1").points == 4
    assert len(COURSE.hints("4.1")) == 3
    earlier = {exercise.name for notebook in COURSE.notebooks[:3] for exercise in notebook.exercises}
    assert set(COURSE.earlier_pieces("4.1")) == earlier | {"TOOLS", "run_tool", "MODEL", "SYSTEM_PROMPT"}
    assert {"calculator", "CALCULATOR_TOOL", "one_shot", "tool_result", "agent_turn", "run_tools"} <= earlier


def reads_on_at_the_end(input_stream, output_stream, client, system=SYSTEM_PROMPT, max_iterations=10):
    messages = []
    while True:
        output_stream.write("User> ")
        line = input_stream.readline()
        if not line.strip():
            continue  # MISTAKE: at the end of the input, readline() returns '' forever
        messages.append({"role": "user", "content": line.strip()})
        say(output_stream, messages, inner_loop(client, messages, output_stream, system, max_iterations))


def test_a_run_that_reads_on_forever_fails_quickly():
    message = failure(reads_on_at_the_end)
    assert "went on reading after the end of the input" in message
    assert "stop on both" in message


def test_iterating_over_the_stream_works_too():
    def iterates(input_stream, output_stream, client, system=SYSTEM_PROMPT, max_iterations=10):
        messages = []
        output_stream.write("User> ")
        for line in input_stream:
            if not line.strip():
                break
            messages.append({"role": "user", "content": line.strip()})
            say(output_stream, messages, inner_loop(client, messages, output_stream, system, max_iterations))
            output_stream.write("User> ")

    result = run_check("4.1", iterates)
    assert result.ok, result



# --- after each way a turn can end, the next line ---------------------------------------------------------


def run_like_the_course(keep_ended_replies=False, cap_line="Agent> (stopped: still calling tools after {cap} calls)"):
    """The right loops, with one thing changed: a wrong answer built from a right one."""
    def run(input_stream, output_stream, client, system=SYSTEM_PROMPT, max_iterations=10):
        messages = []
        while (line := input_stream.readline()).strip():
            output_stream.write("User> ")
            messages.append({"role": "user", "content": line.strip()})
            reply = inner_loop(client, messages, output_stream, system, max_iterations)
            if reply.stop_reason == "tool_use":
                output_stream.write(cap_line.format(cap=max_iterations) + "\n")
            elif reply.stop_reason in ("max_tokens", "refusal"):
                output_stream.write(f"Agent> (the reply ended early: {reply.stop_reason}) {text_of(reply)}\n")
                if not keep_ended_replies:
                    messages.pop()
            else:
                output_stream.write(f"Agent> {text_of(reply)}\n")
        output_stream.write("User> ")
    return run


def test_the_course_like_run_passes():
    passes("4.1", run_like_the_course())


def test_a_cut_or_refused_reply_must_leave_the_history():
    fails("4.1", run_like_the_course(keep_ended_replies=True), "then a new line", "still carries the reply")


def test_the_cap_must_be_said():
    fails("4.1", run_like_the_course(cap_line="Agent> "), "it should write an Agent> line that says it stopped")


def run_with_another_model(input_stream, output_stream, client, system=SYSTEM_PROMPT, max_iterations=10):
    """Right, except for the model it asks for (the exercise says MODEL)."""
    class OtherModel:
        def __init__(self, client):
            self.messages = self

        def create(self, **request):
            return client.messages.create(**{**request, "model": "claude-some-other-model"})

    return run_like_the_course()(input_stream, output_stream, OtherModel(client), system, max_iterations)


def test_the_request_uses_model_and_max_tokens_as_the_exercise_says():
    fails("4.1", run_with_another_model, "model='claude-some-other-model'", "model=MODEL")
