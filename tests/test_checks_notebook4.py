"""The check of notebook 4 (`run`, the agent as a program): passes on right answers, fails on wrong ones
with the message a learner needs."""

import json
import sys

import anthropic
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
            print(f"Agent> Sorry, I gave up after {calls} calls.", file=output_stream)
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


def say(output_stream, messages, reply, max_iterations):
    """The right Agent> line."""
    if reply.stop_reason in ("max_tokens", "refusal"):
        messages.pop()
        output_stream.write(f"Agent> (the reply ended early: {reply.stop_reason}) {text_of(reply)}\n")
    elif reply.stop_reason == "tool_use":
        output_stream.write(f"Agent> (stopped: too many tool calls, {max_iterations})\n")
    else:
        output_stream.write(f"Agent> {text_of(reply)}\n")


def answer(client, messages, output_stream, system, max_iterations):
    """The right turn: the inner loop, then the Agent> line."""
    say(output_stream, messages, inner_loop(client, messages, output_stream, system, max_iterations), max_iterations)


def uses_input(input_stream, output_stream, client, system=SYSTEM_PROMPT, max_iterations=10):
    messages = []
    while True:
        line = input("User> ")  # MISTAKE
        if not line.strip():
            return
        messages.append({"role": "user", "content": line.strip()})
        answer(client, messages, output_stream, system, max_iterations)


def reads_sys_stdin(input_stream, output_stream, client, system=SYSTEM_PROMPT, max_iterations=10):
    messages = []
    while True:
        output_stream.write("User> ")
        line = sys.stdin.readline()  # MISTAKE
        if not line.strip():
            return
        messages.append({"role": "user", "content": line.strip()})
        answer(client, messages, output_stream, system, max_iterations)


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
        answer(client, messages, output_stream, system, max_iterations)


def prompt_after_reading(input_stream, output_stream, client, system=SYSTEM_PROMPT, max_iterations=10):
    messages = []
    for line in input_stream:
        output_stream.write("User> ")  # MISTAKE: written after the read, so none before the end of input
        if not line.strip():
            return
        messages.append({"role": "user", "content": line.strip()})
        answer(client, messages, output_stream, system, max_iterations)


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
        answer(client, messages, output_stream, system, max_iterations)


def forgets_history(input_stream, output_stream, client, system=SYSTEM_PROMPT, max_iterations=10):
    while True:
        output_stream.write("User> ")
        line = input_stream.readline()
        if not line.strip():
            return
        messages = [{"role": "user", "content": line.strip()}]  # MISTAKE: a new history for every line
        answer(client, messages, output_stream, system, max_iterations)


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
            say(output_stream, messages, inner(client, messages, output_stream, system, max_iterations), max_iterations)

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
        answer += " (max_tokens)"
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
        say(output_stream, messages, reply, max_iterations)


def stops_only_at_end_of_input(input_stream, output_stream, client, system=SYSTEM_PROMPT, max_iterations=10):
    messages = []
    while True:
        output_stream.write("User> ")
        line = input_stream.readline()
        if not line:  # MISTAKE: an empty line ("\n") goes on
            return
        messages.append({"role": "user", "content": line.strip()})
        answer(client, messages, output_stream, system, max_iterations)


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
        answer(client, messages, output_stream, system, max_iterations)


def primes_the_history(input_stream, output_stream, client, system=SYSTEM_PROMPT, max_iterations=10):
    messages = [{"role": "user", "content": "What is 2 + 2?"},  # MISTAKE: an example exchange the person never typed
                {"role": "assistant", "content": "2 + 2 = 4."}]
    while True:
        output_stream.write("User> ")
        line = input_stream.readline()
        if not line.strip():
            return
        messages.append({"role": "user", "content": line.strip()})
        answer(client, messages, output_stream, system, max_iterations)


def own_default_system(input_stream, output_stream, client, system="You are a helpful assistant.",  # MISTAKE
                       max_iterations=10):
    messages = []
    while True:
        output_stream.write("User> ")
        line = input_stream.readline()
        if not line.strip():
            return
        messages.append({"role": "user", "content": line.strip()})
        answer(client, messages, output_stream, system, max_iterations)


def _no_tools(client, messages, output_stream, system, max_iterations):
    for _ in range(max_iterations):
        reply = client.messages.create(model=MODEL, max_tokens=1024, system=system, messages=messages)  # MISTAKE
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


def _no_break(client, messages, output_stream, system, max_iterations):
    for _ in range(max_iterations):
        reply = client.messages.create(model=MODEL, max_tokens=1024, system=system, tools=TOOLS, messages=messages)
        messages.append({"role": "assistant", "content": reply.content})
        if reply.stop_reason == "tool_use":  # MISTAKE: no break otherwise: the loop calls the model again
            results = []
            for block in reply.content:
                if block.type == "tool_use":
                    output = run_tool(block.name, block.input)
                    output_stream.write(f"[tool] {block.name}({block.input}) -> {output}\n")
                    results.append(tool_result(block, output))
            messages.append({"role": "user", "content": results})
    return reply


def _never_calls_again(client, messages, output_stream, system, max_iterations):
    reply = client.messages.create(model=MODEL, max_tokens=1024, system=system, tools=TOOLS, messages=messages)
    messages.append({"role": "assistant", "content": reply.content})
    while reply.stop_reason == "tool_use":  # MISTAKE: the same reply forever, no new call in the loop
        results = []
        for block in reply.content:
            if block.type == "tool_use":
                output = run_tool(block.name, block.input)
                output_stream.write(f"[tool] {block.name}({block.input}) -> {output}\n")
                results.append(tool_result(block, output))
        messages.append({"role": "user", "content": results})
    return reply


def _finds_calls_by_class(client, messages, output_stream, system, max_iterations):
    for _ in range(max_iterations):
        reply = client.messages.create(model=MODEL, max_tokens=1024, system=system, tools=TOOLS, messages=messages)
        messages.append({"role": "assistant", "content": reply.content})
        if reply.stop_reason != "tool_use":
            break
        results = []
        for block in reply.content:
            if isinstance(block, anthropic.types.ToolUseBlock):  # MISTAKE: the SDK's class, not block.type
                output = run_tool(block.name, block.input)
                output_stream.write(f"[tool] {block.name}({block.input}) -> {output}\n")
                results.append(tool_result(block, output))
        messages.append({"role": "user", "content": results})
    return reply


def _asks_again_for_words(client, messages, output_stream, system, max_iterations):
    for _ in range(max_iterations):
        reply = client.messages.create(model=MODEL, max_tokens=1024, system=system, tools=TOOLS, messages=messages)
        messages.append({"role": "assistant", "content": reply.content})
        words = "".join(b.text for b in reply.content if isinstance(b, anthropic.types.TextBlock))  # MISTAKE
        if reply.stop_reason == "end_turn" and not words:
            messages.append({"role": "user", "content": "Please answer in words."})  # no words? ask again
            continue
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


def assumes_a_first_line(input_stream, output_stream, client, system=SYSTEM_PROMPT, max_iterations=10):
    messages = []
    output_stream.write("User> ")
    line = input_stream.readline()  # MISTAKE: the first line is taken as there, without a test
    while True:
        messages.append({"role": "user", "content": line.strip() or "Hello"})
        answer(client, messages, output_stream, system, max_iterations)
        output_stream.write("User> ")
        line = input_stream.readline()
        if not line.strip():
            return


def returns_the_transcript(input_stream, output_stream, client, system=SYSTEM_PROMPT, max_iterations=10):
    messages, transcript = [], []
    while True:
        transcript.append("User> ")
        line = input_stream.readline()
        if not line.strip():
            return "".join(transcript)  # MISTAKE: returned, never written to output_stream
        messages.append({"role": "user", "content": line.strip()})
        reply = inner_loop(client, messages, output_stream, system, max_iterations)
        transcript.append(f"Agent> {text_of(reply)}\n")


def prompt_without_space(input_stream, output_stream, client, system=SYSTEM_PROMPT, max_iterations=10):
    messages = []
    while True:
        output_stream.write("User>")  # MISTAKE: no space
        line = input_stream.readline()
        if not line.strip():
            return
        messages.append({"role": "user", "content": line.strip()})
        answer(client, messages, output_stream, system, max_iterations)


def prompt_with_newline(input_stream, output_stream, client, system=SYSTEM_PROMPT, max_iterations=10):
    messages = []
    while True:
        print("User> ", file=output_stream)  # MISTAKE: print adds a newline
        line = input_stream.readline()
        if not line.strip():
            return
        messages.append({"role": "user", "content": line.strip()})
        answer(client, messages, output_stream, system, max_iterations)


def echoes_the_line(input_stream, output_stream, client, system=SYSTEM_PROMPT, max_iterations=10):
    messages = []
    while True:
        output_stream.write("User> ")
        line = input_stream.readline()
        if not line.strip():
            return
        output_stream.write(line)  # MISTAKE: a stream echoes nothing; nor should run
        messages.append({"role": "user", "content": line.strip()})
        answer(client, messages, output_stream, system, max_iterations)


def sends_the_newline_in_a_block(input_stream, output_stream, client, system=SYSTEM_PROMPT, max_iterations=10):
    messages = []
    while True:
        output_stream.write("User> ")
        line = input_stream.readline()
        if not line.strip():
            return
        messages.append({"role": "user", "content": [{"type": "text", "text": line}]})  # MISTAKE: "...?\n"
        answer(client, messages, output_stream, system, max_iterations)


def goes_on_after_a_cut_reply(input_stream, output_stream, client, system=SYSTEM_PROMPT, max_iterations=10):
    messages = []
    while True:
        output_stream.write("User> ")
        line = input_stream.readline()
        if not line.strip():
            return
        messages.append({"role": "user", "content": line.strip()})
        reply = inner_loop(client, messages, output_stream, system, max_iterations)
        while reply.stop_reason in ("max_tokens", "refusal"):  # MISTAKE: asks for more instead of saying so
            messages.append({"role": "user", "content": "Please go on."})
            reply = inner_loop(client, messages, output_stream, system, max_iterations)
        say(output_stream, messages, reply, max_iterations)


def retries_a_refusal(input_stream, output_stream, client, system=SYSTEM_PROMPT, max_iterations=10):
    messages = []
    while True:
        output_stream.write("User> ")
        line = input_stream.readline()
        if not line.strip():
            return
        messages.append({"role": "user", "content": line.strip()})
        reply = inner_loop(client, messages, output_stream, system, max_iterations)
        if reply.stop_reason == "refusal":  # MISTAKE: the same question again, as if the model might change its mind
            messages.pop()
            reply = inner_loop(client, messages, output_stream, system, max_iterations)
        say(output_stream, messages, reply, max_iterations)


WRONG_ANSWERS = [
    (uses_input, ["called input()", "input_stream"]),
    (reads_sys_stdin, ["read sys.stdin", "input_stream"]),
    (swallows_input_failure, ["called input()"]),
    (no_prompt, ["never wrote the prompt 'User> '"]),
    (prompt_after_reading, ["line 2 of the output is (nothing); expected 'User>'", "before every read"]),
    (prints_to_the_notebook, ["wrote nothing to output_stream, but printed to the notebook", "file=output_stream"]),
    (sends_the_newline, ["the user message (messages[0].content) was 'What is 4823 × 1979?\\n'", "without its newline"]),
    (forgets_history, ["the second line's request held 1 message(s)", "Create the messages list once"]),
    (runner(_json_tool_line), ["\"expression\"", "expected \"User> [tool] calculator({'expression': '4823 * 1979'})",
                               "as Python prints it"]),
    (runner(_first_block), ["after a text block", "AttributeError", "'TextBlock' object has no attribute 'name'"]),
    (runner(_only_first_tool_use), ["two calls at once", "400", "without `tool_result` blocks immediately after"]),
    (runner(_one_message_per_result), ["two calls at once", "400", "without `tool_result` blocks immediately after",
                                       "ONE user message"]),
    (runner(_no_is_error), ["the tool fails", "is_error=None; it should be True", "tool_result(block, output)"]),
    (runner(_no_cap), ["never stops", "more than 4 times", "max_iterations (4)"]),
    (runner(_cap_raises), ["never stops", "RuntimeError", "Agent> line"]),
    (runner(_runs_tools_of_a_cut_reply), ["cut short in the middle of a tool call", "must not run",
                                          "only when stop_reason is 'tool_use'"]),
    (runner(_ignores_system), ["custom system prompt", "'Answer in one word.'", "system=system"]),
    (runner(_not_duck_typed), ["minimal client", "AttributeError", "model_dump"]),
    (with_agent_line(_ignores_stop_reason), ["max_tokens", "run wrote 'Agent> 4823 × 1979 comes to 9,5'",
                                             "should name the stop reason as the API spells it, 'max_tokens'"]),
    (with_agent_line(_next_text_crashes), ["the model refuses", "StopIteration"]),
    (with_agent_line(_raises_on_stop_reason), ["max_tokens", "RuntimeError: the model stopped: max_tokens"]),
    (prints_text_next_to_calls, ["after a text block: line 1 of the output is \"User> Agent> I'll use the calculator.\"",
                                 "text that comes along with a tool call is not printed"]),
    (stops_only_at_end_of_input, ["an empty line ends the session", "went on after the empty line"]),
    (skips_empty_lines, ["an empty line ends the session", "went on after the empty line"]),
    (primes_the_history, ["the first request's messages should be one user message", "it held 3 message(s), roles "
                          "['user', 'assistant', 'user']", "empty messages list"]),
    (own_default_system, ["system prompt was 'You are a helpful assistant.'", "by default it should be SYSTEM_PROMPT, "
                          "'You are a helpful assistant. For any arithmetic", "the parameter's default is SYSTEM_PROMPT"]),
    (runner(_no_tools), ["did not offer the calculator tool (tools=[])", "tools=TOOLS"]),
    (goes_on_after_a_cut_reply, ["cut short", "run called the model again after its final reply",
                                 "(the scenario scripted 3 replies)", "only while stop_reason is 'tool_use'"]),
    (retries_a_refusal, ["the model refuses", "run called the model again after its final reply",
                         "only while stop_reason is 'tool_use'"]),
    (assumes_a_first_line, ["nothing to read: run called the model although the input was empty", "'' (end of input)"]),
    (runner(_never_calls_again), ["the model asks for the calculator after a text block: run wrote more than 100,000",
                                  "calls the model again each time round"]),
    (returns_the_transcript, ["run wrote nothing to output_stream", "run returns nothing"]),
    (runner(_finds_calls_by_class), ["with a minimal client", "not the SDK's classes",
                                     "messages.2: all messages must have non-empty content", "never by isinstance"]),
    (runner(_asks_again_for_words), ["with a minimal client", "called the model again after its final reply",
                                     "it should make 2 calls", "isinstance(block, TextBlock) is False"]),
    (prompt_without_space, ["line 1 of the output is 'User>Agent> It is 9,544,717.'; expected 'User> Agent> It is "
                            "9,544,717.'", "'User> ' with its space and no newline"]),
    (prompt_with_newline, ["line 1 of the output is 'User> '; expected 'User> Agent> It is 9,544,717.'",
                           "'User> ' with its space and no newline"]),
    (echoes_the_line, ["line 1 of the output is 'User> What is 4823 × 1979?'", "never the line you read"]),
    (sends_the_newline_in_a_block, ["was 'What is 4823 × 1979?\\n'; expected the line without its newline",
                                    "line.rstrip('\\n')"]),
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
        answer(client, messages, output_stream, system, max_iterations)


def test_a_run_that_reads_on_forever_fails_quickly():
    message = failure(reads_on_at_the_end)
    assert "went on reading after the end of the input" in message
    assert "stop on both" in message


def strips_with_slicing(input_stream, output_stream, client, system=SYSTEM_PROMPT, max_iterations=10):
    messages = []
    while True:
        output_stream.write("User> ")
        line = input_stream.readline()
        if line in ("", "\n"):
            return
        messages.append({"role": "user", "content": line[:-1] if line.endswith("\n") else line})  # right too
        answer(client, messages, output_stream, system, max_iterations)


def test_the_newline_may_go_any_way():
    passes("4.1", strips_with_slicing)


def test_iterating_over_the_stream_works_too():
    def iterates(input_stream, output_stream, client, system=SYSTEM_PROMPT, max_iterations=10):
        messages = []
        output_stream.write("User> ")
        for line in input_stream:
            if not line.strip():
                break
            messages.append({"role": "user", "content": line.strip()})
            answer(client, messages, output_stream, system, max_iterations)
            output_stream.write("User> ")

    result = run_check("4.1", iterates)
    assert result.ok, result



# --- after each way a turn can end, the next line ---------------------------------------------------------


def course_cap_line(max_iterations):
    return f"Agent> (stopped: still calling tools after {max_iterations} calls)"


def course_ended_line(reply):
    return f"Agent> (the reply ended early: {reply.stop_reason}) {text_of(reply)}"


def run_like_the_course(after_ended="pop", cap_line=course_cap_line, ended_line=course_ended_line):
    """The right loops, with one thing changed: a wrong answer built from a right one.

    after_ended: what becomes of a cut or refused reply: "pop" it (right), "keep" it, "clear" the whole history,
    or "return" (end the session); cap_line(max_iterations) and ended_line(reply): the Agent> line of the cap,
    and of a cut or refused reply."""
    def run(input_stream, output_stream, client, system=SYSTEM_PROMPT, max_iterations=10):
        messages = []
        while (line := input_stream.readline()).strip():
            output_stream.write("User> ")
            messages.append({"role": "user", "content": line.strip()})
            reply = inner_loop(client, messages, output_stream, system, max_iterations)
            if reply.stop_reason == "tool_use":
                output_stream.write(cap_line(max_iterations) + "\n")
            elif reply.stop_reason in ("max_tokens", "refusal"):
                output_stream.write(ended_line(reply) + "\n")
                if after_ended == "pop":
                    messages.pop()
                elif after_ended == "clear":
                    messages.clear()
                elif after_ended == "return":
                    return
            else:
                output_stream.write(f"Agent> {text_of(reply)}\n")
        output_stream.write("User> ")
    return run


def test_the_course_like_run_passes():
    passes("4.1", run_like_the_course())


RIGHT_LINES_IN_OTHER_WORDS = [  # the prose asks each line to name the number of calls, or the stop reason: any words
    ("other words", lambda cap: f"Agent> Sorry, I gave up: {cap} tool calls and still no answer.",
     lambda reply: f"Agent> [{reply.stop_reason}] {text_of(reply)}"),
    ("French", lambda cap: f"Agent> (arrêté : l'agent appelait encore des outils après {cap} appels)",
     lambda reply: f"Agent> (réponse interrompue : {reply.stop_reason}) {text_of(reply)}"),
    ("number first", lambda cap: f"Agent> {cap} calls, no answer yet: stopping here.",
     lambda reply: f"Agent> {reply.stop_reason.upper()}: {text_of(reply) or '(no text)'}"),
]


@pytest.mark.parametrize("cap_line, ended_line", [row[1:] for row in RIGHT_LINES_IN_OTHER_WORDS],
                         ids=[row[0] for row in RIGHT_LINES_IN_OTHER_WORDS])
def test_the_cap_and_stop_lines_pass_in_any_words(cap_line, ended_line):
    passes("4.1", run_like_the_course(cap_line=cap_line, ended_line=ended_line))


def test_a_cut_or_refused_reply_must_leave_the_history():
    fails("4.1", run_like_the_course(after_ended="keep"), "then a new line", "still carries the reply")


def test_the_earlier_turns_stay_after_a_cut_reply():
    fails("4.1", run_like_the_course(after_ended="clear"), "cut short", "should start with the first line read",
          "'What is 4823 × 1979?'", "it starts with {'role': 'user', 'content': 'What is 12 × 12?'}",
          "Create messages once")


def test_the_session_goes_on_after_a_cut_reply():
    fails("4.1", run_like_the_course(after_ended="return"), "cut short", "the next line should be answered as usual",
          "[tool] calculator({'expression': '12 * 12'}) -> 144", "run wrote '(nothing)'", "go on reading lines")


def says_stopped(max_iterations):
    return "Agent> (stopped: too many tool calls)"  # MISTAKE: no number


def says_stopped_with_the_default(max_iterations):
    return "Agent> (stopped: still calling tools after 10 calls)"  # MISTAKE: the default, not max_iterations


def says_stopped_as_in_the_prose(max_iterations):
    return "Agent> (stopped: still calling tools after 3 calls)"  # MISTAKE: the example's number, not max_iterations


def says_one_call_too_many(max_iterations):
    return f"Agent> (stopped after {max_iterations + 1} calls)"  # MISTAKE: the wrong count


def says_nothing(max_iterations):
    return "Agent> "  # MISTAKE: an empty line


CAP_LINES = [(says_stopped, "'Agent> (stopped: too many tool calls)'"),
             (says_stopped_with_the_default, "'Agent> (stopped: still calling tools after 10 calls)'"),
             (says_stopped_as_in_the_prose, "'Agent> (stopped: still calling tools after 3 calls)'"),
             (says_one_call_too_many, "'Agent> (stopped after 5 calls)'"),
             (says_nothing, "run wrote 'Agent> '")]


@pytest.mark.parametrize("cap_line, wrote", CAP_LINES, ids=[line.__name__ for line, _ in CAP_LINES])
def test_the_cap_line_must_name_the_number_of_calls(cap_line, wrote):
    fails("4.1", run_like_the_course(cap_line=cap_line), "never stops", "max_iterations=4", wrote,
          "should name the number of calls made, max_iterations, here 4", "names that number")


def says_cut_short(reply):
    return f"Agent> (cut short) {text_of(reply)}"  # MISTAKE: not the stop reason's name


def says_max_tokens_but_not_refusal(reply):
    if reply.stop_reason == "max_tokens":
        return f"Agent> (max_tokens) {text_of(reply)}"
    return "Agent> (the model declined to answer)"  # MISTAKE: not the stop reason's name


def says_a_cut_call_without_its_reason(reply):
    if any(block.type == "tool_use" for block in reply.content):
        return "Agent> (a tool call was cut off, so it was not run)"  # MISTAKE: not the stop reason's name
    return course_ended_line(reply)


ENDED_LINES = [
    (says_cut_short, ["cut short (stop_reason 'max_tokens'), then a new line", "'Agent> (cut short) 4823 × 1979 comes",
                      "as the API spells it, 'max_tokens'"]),
    (says_max_tokens_but_not_refusal, ["the model refuses", "run wrote 'Agent> (the model declined to answer)'",
                                       "as the API spells it, 'refusal'"]),
    (says_a_cut_call_without_its_reason, ["in the middle of a tool call",
                                          "run wrote 'Agent> (a tool call was cut off, so it was not run)'",
                                          "'max_tokens', though the reply was cut inside a tool call"]),
]


@pytest.mark.parametrize("ended_line, expected", ENDED_LINES, ids=[line.__name__ for line, _ in ENDED_LINES])
def test_a_cut_or_refused_line_must_name_the_stop_reason(ended_line, expected):
    fails("4.1", run_like_the_course(ended_line=ended_line), *expected, "holds the stop reason as the API spells it")


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
