"""Checks for notebook 2, closing the loop: tool_result, agent_turn, and agent_turn's hard cap."""

from __future__ import annotations

import json

from .. import scripted
from ..client import MODEL
from ..history import to_wire
from ..loop import SYSTEM_PROMPT
from ..recordings import canonical_blocks
from ..rules import check_request
from ..scripted import TooManyCalls, reply, text, thinking, tool_use
from ..scripted import calculator as calculator_call
from ..tools import TOOLS, is_error, run_tool
from .core import Failure, Report

QUESTION = "What is 4823 × 1979?"


def _short(value, limit: int = 160) -> str:
    """A value as compact JSON (a string as Python writes it), cut to fit on a line."""
    words = repr(value) if isinstance(value, str) else json.dumps(to_wire(value), ensure_ascii=False, default=repr)
    return words if len(words) <= limit else words[: limit - 3] + "..."


# --- 2.1 tool_result -----------------------------------------------------------------------------------


def _tool_use_blocks(*expressions: str) -> list:
    """Real SDK tool_use blocks, as agent_turn gets them: from a (scripted) reply."""
    client, _ = scripted.scripted_client([reply(text("I'll compute that."), *map(calculator_call, expressions))])
    message = client.messages.create(model=MODEL, max_tokens=64, tools=TOOLS, messages=[{"role": "user", "content": QUESTION}])
    return [block for block in message.content if block.type == "tool_use"]


def check_tool_result(tool_result, report: Report) -> None:
    report.expect(callable(tool_result), None, f"tool_result should be a function; it is a {type(tool_result).__name__}")
    first, second = _tool_use_blocks("4823 * 1979", "1 / 0")
    for block, output in ((first, "9544717"), (second, "Error: division by zero")):
        report.situation = f"tool_result(tool_use, {output!r})"
        result = tool_result(block, output)
        where = report.situation
        report.expect(isinstance(result, dict), None,
                      f"{where} returned {_short(result)}, a {type(result).__name__}; it should return a dict",
                      'Return a dict such as {"type": "tool_result", "tool_use_id": ..., "content": ...}.')
        report.expect(result.get("type") == "tool_result", None,
                      f"{where} returned a block whose \"type\" is {result.get('type')!r}; it should be \"tool_result\"",
                      'The API reads "type" first: a result block says "type": "tool_result".')
        report.expect("tool_use_id" in result, None,
                      f"{where} returned {_short(result)}: it has no \"tool_use_id\" key, so the result cites no call",
                      'The key is "tool_use_id" (not "id"), and its value is the id of the tool_use it answers.')
        cited = result["tool_use_id"]
        report.expect(cited == block.id, None,
                      f"{where}: \"tool_use_id\" is {cited!r}; it should be the id of the call it answers, {block.id!r}",
                      "Take the id from the tool_use block itself: tool_use.id (each call has its own).")
        report.expect(canonical_blocks(result.get("content")) == canonical_blocks(output), None,
                      f"{where}: \"content\" is {_short(result.get('content'))}; it should be the tool's output, {output!r}",
                      'Put the output text as it is under "content".')
        if is_error(output):
            report.expect(result.get("is_error") is True, None,
                          f"{where} returned {_short(result)}: the output is an error text, so the block needs \"is_error\": True",
                          "looplab.tools.is_error(output) tells you whether the output is an error text.")
        else:
            report.expect("is_error" not in result, None,
                          f"{where} returned {_short(result)}: \"is_error\" should only be there when it is True",
                          'Add the "is_error" key only for an error output; leave it out otherwise.')
    report.situation = None
    report.note("cites the call's id (tool_use.id) and carries the output as its content")
    report.note('adds "is_error": True for an error text, and no is_error key otherwise')

    report.situation = "sending the results back to the API"
    client, _ = scripted.scripted_client([
        reply(text("I'll compute both."), calculator_call("4823 * 1979"), calculator_call("1 / 0")),
        reply(text("4823 × 1979 = 9,544,717; 1 / 0 has no value.")),
    ])
    messages = [{"role": "user", "content": QUESTION}]
    message = client.messages.create(model=MODEL, max_tokens=64, tools=TOOLS, messages=messages)
    messages.append({"role": "assistant", "content": message.content})
    blocks = [block for block in message.content if block.type == "tool_use"]
    messages.append({"role": "user", "content": [tool_result(block, run_tool(block.name, block.input)) for block in blocks]})
    client.messages.create(model=MODEL, max_tokens=64, tools=TOOLS, messages=messages)
    report.note("the API accepts its blocks as the answer to the model's calls")


# --- 2.2 agent_turn ------------------------------------------------------------------------------------


class Scenario:
    """Scripted replies, and what agent_turn should do with them."""

    def __init__(self, situation: str, replies: list, answer: str, history: list | None = None, hint: str = ""):
        self.situation = situation
        self.replies = replies
        self.answer = answer  # the text agent_turn should return
        self.history = history or [{"role": "user", "content": QUESTION}]  # messages before the call
        self.hint = hint

    @property
    def calls(self) -> int:
        return len(self.replies)


CHAINED = ("A warehouse holds 1250 crates of 48 boxes, and each box holds 36 bottles. "
           "A truck carries 9600 bottles. How many truck loads does it take?")

CONTENT_ZERO = ("Decide on reply.stop_reason, and pick the tool_use blocks by block.type: "
                "the first block of a reply is not always the tool_use (never content[0]).")

TEXT_FIRST = Scenario(
    "the model writes a text block before the tool_use",
    [reply(text("I'll use the calculator."), calculator_call("4823 * 1979")),
     reply(text("4823 × 1979 = 9,544,717."))],
    "4823 × 1979 = 9,544,717.",
    hint=CONTENT_ZERO,
)
THINKING_FIRST = Scenario(
    "the model thinks first (a thinking block starts each reply)",
    [reply(thinking("Big numbers: use the calculator."), calculator_call("12 * 12")),
     reply(thinking("The tool says 144."), text("12 × 12 = 144."))],
    "12 × 12 = 144.",
    hint=CONTENT_ZERO,
)
CHAIN = Scenario(
    "the model chains three calls, one after the other",
    [reply(text("First, the boxes."), calculator_call("1250 * 48")),
     reply(calculator_call("60000 * 36")),
     reply(text("Now the truck loads."), calculator_call("2160000 / 9600")),
     reply(text("It takes 225 truck loads."))],
    "It takes 225 truck loads.",
    [{"role": "user", "content": CHAINED}],
)
FAILING = Scenario(
    "the tool fails (division by zero)",
    [reply(text("Let me compute."), calculator_call("1 / 0")),
     reply(text("That has no value: you cannot divide by zero."))],
    "That has no value: you cannot divide by zero.",
    [{"role": "user", "content": "What is 1 / 0?"}],
)
NO_TOOL = Scenario(
    "the model answers without a tool",
    [reply(text("Hello! Ask me any arithmetic."))],
    "Hello! Ask me any arithmetic.",
    [{"role": "user", "content": "Hello!"}],
)
SECOND_QUESTION = Scenario(
    "a second question, in a conversation that already has a first one",
    [reply(text("Let me compute."), calculator_call("9544717 * 2")),
     reply(text("Twice that is 19,089,434."))],
    "Twice that is 19,089,434.",
    [{"role": "user", "content": QUESTION},
     {"role": "assistant", "content": [{"type": "text", "text": "4823 × 1979 = 9,544,717."}]},
     {"role": "user", "content": "And twice that?"}],
)
TRUNCATED = Scenario(
    "the reply is cut off by max_tokens in the middle of a tool call",
    [reply(text("I'll work this out step by step."), tool_use("calculator", {}), stop_reason="max_tokens")],
    "I'll work this out step by step.",
    [{"role": "user", "content": CHAINED}],
)

AGENT_TURN_SCENARIOS = [TEXT_FIRST, THINKING_FIRST, CHAIN, FAILING, NO_TOOL, SECOND_QUESTION, TRUNCATED]


def _kinds(content) -> str:
    """The block types of a message's content, e.g. '[text, tool_use]'."""
    if isinstance(content, str):
        return f"the string {content!r}" if len(content) < 60 else "a string"
    if not isinstance(content, list):
        return repr(content)
    return "[" + ", ".join(str(block.get("type") if isinstance(block, dict) else type(block).__name__)
                           for block in content) + "]"


def _outline(history: list) -> str:
    """A history in a few words: question, reply [text, tool_use], results [tool_result], ..."""
    parts = []
    for message in history:
        if message.get("role") == "assistant":
            parts.append(f"reply {_kinds(message.get('content'))}")
        elif any(isinstance(b, dict) and b.get("type") == "tool_result" for b in message.get("content") or []):
            parts.append(f"results {_kinds(message.get('content'))}")
        else:
            parts.append("question")
    return ", ".join(parts)


def _result(block: dict) -> dict:
    """The course's tool_result for one wire tool_use block."""
    output = run_tool(block["name"], block["input"])
    result = {"type": "tool_result", "tool_use_id": block["id"], "content": output}
    if is_error(output):
        result["is_error"] = True
    return result


def expected_history(history: list, exchanges: list[dict]) -> list:
    """What messages should hold after the turn: each reply verbatim, then its results, in wire form."""
    expected = to_wire(list(history))
    for exchange in exchanges:
        response = exchange["response"]
        expected.append({"role": "assistant", "content": response["content"]})
        if response["stop_reason"] == "tool_use":
            calls = [block for block in response["content"] if block["type"] == "tool_use"]
            expected.append({"role": "user", "content": [_result(block) for block in calls]})
    return expected


def _canonical(message) -> dict:
    if not isinstance(message, dict):
        return {"not a message": repr(message)}
    return {"role": message.get("role"), "content": canonical_blocks(message.get("content"))}


def compare_history(actual: list, expected: list, start: int, situation: str) -> None:
    """Stop at the first message that differs from the expected history, saying how in plain words."""
    wire = to_wire(list(actual))
    if len(wire) <= start and len(expected) > start:
        raise Failure(
            f"{situation}: messages still holds only the {start} message(s) it had before the call; agent_turn "
            "should append each reply and each results message to the list it was given",
            "Use messages.append(...) on the list passed in; don't build a new list.")
    for index in range(max(len(wire), len(expected))):
        mine = wire[index] if index < len(wire) else None
        wanted = expected[index] if index < len(expected) else None
        if mine is None:
            if wanted["role"] == "assistant" and index == len(expected) - 1:
                raise Failure(
                    f"{situation}: the model's last reply is missing from messages; append every reply, the final "
                    "one too, so that the next question continues the conversation",
                    'Append {"role": "assistant", "content": reply.content} right after each call, before deciding what to do.')
            raise Failure(
                f"{situation}: messages ends after {len(wire)} messages; it should hold {len(expected)}: {_outline(expected)}",
                "After each reply, append it; if it asks for tools, append one user message with all the results.")
        if wanted is None:
            raise Failure(
                f"{situation}: messages has {len(wire)} messages; it should hold {len(expected)}: {_outline(expected)} "
                f"(message {index} is extra: {_short(mine)})",
                "Append each reply once, and after a reply that asks for tools, one user message with the results.")
        if _canonical(mine) == _canonical(wanted):
            continue
        role = mine.get("role") if isinstance(mine, dict) else None
        if index < start:
            raise Failure(f"{situation}: messages[{index}], which was there before the call, was changed to {_short(mine)}",
                          "Only append to messages: never change or remove what is already there.")
        if wanted["role"] == "assistant":
            if role != "assistant":
                raise Failure(
                    f"{situation}: messages[{index}] should be the model's reply (role 'assistant'); it is {_short(mine)}",
                    'Append {"role": "assistant", "content": reply.content} right after each call.')
            raise Failure(
                f"{situation}: messages[{index}] should be the model's reply kept verbatim, blocks "
                f"{_kinds(wanted['content'])}; yours holds {_kinds(mine.get('content'))}",
                "Keep every block of the reply (text, thinking, tool_use) as it came: append "
                '{"role": "assistant", "content": reply.content}.')
        wanted_blocks, my_blocks = canonical_blocks(wanted["content"]), canonical_blocks(mine.get("content"))
        if role == "user" and isinstance(my_blocks, list) and len(my_blocks) == len(wanted_blocks):
            without_flag = [{k: v for k, v in b.items() if k != "is_error"} if isinstance(b, dict) else b for b in my_blocks]
            if without_flag == [{k: v for k, v in b.items() if k != "is_error"} for b in wanted_blocks]:
                raise Failure(
                    f"{situation}: messages[{index}] holds {_short(mine.get('content'))}; the calculator returned an "
                    "error text, so its tool_result needs \"is_error\": True",
                    "Build each result with your tool_result from exercise 2.1.")
        raise Failure(
            f"{situation}: messages[{index}] should be one user message with the results of the calls in "
            f"messages[{index - 1}]: {_short(wanted)}; yours is {_short(mine)}",
            "Answer every tool_use of the reply with tool_result(block, run_tool(block.name, block.input)), "
            'all in one {"role": "user", "content": [...]} message.')


def _block_confusion(error: AttributeError, situation: str) -> BaseException:
    """An AttributeError on a block (a text block has no .name...): the reply's blocks were taken by position."""
    if any(kind in str(error) for kind in ("TextBlock", "ThinkingBlock", "ToolUseBlock")):
        return Failure(
            f"{situation}: your code raised AttributeError: {error}",
            "A reply's blocks come in any order (text, thinking, tool_use): pick them by block.type, never content[0].")
    return error


def _calls_made(traffic) -> int:
    return len(traffic.exchanges)


def run_scenario(agent_turn, scenario: Scenario, report: Report, **options) -> None:
    """Run agent_turn on one scenario and verify its answer, its history and its requests."""
    situation = scenario.situation
    report.situation = situation
    client, traffic = scripted.scripted_client(scenario.replies)
    messages = [dict(message) for message in scenario.history]
    start = len(messages)
    try:
        answer = agent_turn(client, messages, **options)
    except TooManyCalls:
        last = traffic.exchanges[-1]["response"] if traffic.exchanges else None
        if last is not None and last["stop_reason"] == "max_tokens":
            raise Failure(
                f"{situation}: the reply stopped with stop_reason 'max_tokens' (cut off), yet agent_turn called the "
                "model again: it ran a truncated tool call. It should stop and return the reply's text",
                "Decide on reply.stop_reason: only 'tool_use' means run the tools and call again; anything else ends the turn.")
        raise Failure(
            f"{situation}: the model answered in words (stop_reason {last['stop_reason']!r}) after "
            f"{len(traffic.exchanges)} call(s), yet agent_turn called it again",
            "Stop as soon as reply.stop_reason is not 'tool_use', and return the reply's text.")
    except AttributeError as error:
        raise _block_confusion(error, situation)
    except (NotImplementedError, RecursionError):
        raise
    except RuntimeError as error:
        last = traffic.exchanges[-1]["response"] if traffic.exchanges else None
        if last is None or last["stop_reason"] == "tool_use":
            raise
        cap = options.get("max_iterations", 10)
        raise Failure(
            f"{situation}: agent_turn raised RuntimeError ({error}) although the model answered in words on call "
            f"{len(traffic.exchanges)} (max_iterations={cap}); a turn that ends within the cap must return its text",
            "Look at reply.stop_reason right after each call: a final answer ends the turn, even on the last allowed call.")

    for number, exchange in enumerate(traffic.exchanges, start=1):
        request = exchange["request"]
        names = [tool.get("name") for tool in request.get("tools", []) if isinstance(tool, dict)]
        report.expect("calculator" in names, None,
                      f"{situation}: model call {number} did not offer the calculator tool (tools={names})",
                      "Pass tools=TOOLS to every client.messages.create call.")
        report.expect(request.get("model") == MODEL, None,
                      f"{situation}: model call {number} asked for model {request.get('model')!r}; use MODEL ({MODEL!r})")
        report.expect(canonical_blocks(request.get("system")) == canonical_blocks(SYSTEM_PROMPT), None,
                      f"{situation}: model call {number} did not send the system prompt"
                      + (f" (system={_short(request['system'])})" if request.get("system") else " (no system field)"),
                      "Pass system=SYSTEM_PROMPT to every call: it tells the model to use the calculator.")

    made = _calls_made(traffic)
    if made < scenario.calls:
        last = traffic.exchanges[-1]["response"] if traffic.exchanges else None
        if last is not None and last["stop_reason"] == "tool_use":
            first = last["content"][0]["type"]
            extra = (f" (its first block is a {first} block: the tool_use comes after it)" if first != "tool_use" else "")
            raise Failure(
                f"{situation}: after model call {made} the model asked for a tool (stop_reason 'tool_use'){extra}, "
                f"but agent_turn stopped there; this turn needs {scenario.calls} calls",
                scenario.hint or "While reply.stop_reason is 'tool_use': run every tool_use block, append the results, "
                "and call the model again.")
        raise Failure(f"{situation}: agent_turn made {made} model call(s); this turn needs {scenario.calls}")
    report.expect(made == scenario.calls, None,
                  f"{situation}: agent_turn made {made} model calls; this turn needs {scenario.calls}")

    if answer != scenario.answer:
        outputs = {run_tool(b["name"], b["input"]) for e in traffic.exchanges for b in e["response"]["content"]
                   if b["type"] == "tool_use"}
        if answer in outputs:
            raise Failure(
                f"{situation}: agent_turn returned {answer!r}, the tool's raw output; it should return the model's "
                f"final words, {scenario.answer!r}",
                "The point of the loop: the model reads the result and answers. Return the text blocks of the last reply.")
        raise Failure(
            f"{situation}: agent_turn returned {_short(answer)}; it should return the text of the model's last reply, "
            f"{scenario.answer!r}",
            'Join the text of the last reply\'s text blocks: "".join(b.text for b in reply.content if b.type == "text").')
    compare_history(messages, expected_history(scenario.history, traffic.exchanges), start, situation)
    report.situation = None
    report.note(f"{situation}: {made} call(s), returns the model's final text, history kept verbatim")


def check_agent_turn(agent_turn, report: Report) -> None:
    report.expect(callable(agent_turn), None, f"agent_turn should be a function; it is a {type(agent_turn).__name__}")
    for scenario in AGENT_TURN_SCENARIOS:
        run_scenario(agent_turn, scenario, report)


# --- 2.3 the cap --------------------------------------------------------------------------------------


CAPS = (1, 3)


def _stopped_by_cap(agent_turn, max_iterations: int | None, report: Report) -> None:
    """A model that never stops: agent_turn must stop after max_iterations calls, history valid, and raise."""
    label = f"max_iterations={max_iterations}" if max_iterations is not None else "the default max_iterations"
    limit = 10 if max_iterations is None else max_iterations
    situation = f"a model that never stops, with {label}"
    report.situation = situation
    client, traffic = scripted.scripted_client(scripted.never_stops())
    messages = [{"role": "user", "content": QUESTION}]
    options = {} if max_iterations is None else {"max_iterations": max_iterations}
    try:
        answer = agent_turn(client, messages, **options)
    except (NotImplementedError, RecursionError):
        raise
    except RuntimeError as error:
        raised = error
    except TooManyCalls:
        raise Failure(
            f"{situation}: your code never stopped; the check stopped it after {_calls_made(traffic)} model calls "
            f"(with max_iterations={limit}, it should stop after {limit})",
            "A loop that trusts the model to stop needs a hard cap: for _ in range(max_iterations), then raise.")
    except AttributeError as error:
        raise _block_confusion(error, situation)
    else:
        raise Failure(
            f"{situation}: agent_turn returned {_short(answer)} after {_calls_made(traffic)} call(s); it should raise "
            "RuntimeError, so the caller knows the turn did not finish",
            'After the last allowed call, raise RuntimeError(f"... {max_iterations} ...") instead of returning.')
    made = _calls_made(traffic)
    report.expect(made == limit, None,
                  f"{situation}: agent_turn made {made} model call(s) before raising; it should make exactly {limit}",
                  "One model call per iteration: for _ in range(max_iterations), then raise after the loop.")
    report.expect(str(limit) in str(raised), None,
                  f"{situation}: the RuntimeError says {str(raised)!r}; it should name the limit ({limit}) that was hit",
                  'Put the number in the message, e.g. f"still calling tools after {max_iterations} calls".')
    violation = check_request({"messages": to_wire(list(messages))})
    report.expect(violation is None, None,
                  f"{situation}: after the RuntimeError, messages is not a valid history; the next request would get "
                  f"a 400: {violation.message if violation else ''}",
                  "Run the tools of the last reply and append their results before raising: every tool_use needs its tool_result.")
    compare_history(messages, expected_history([{"role": "user", "content": QUESTION}], traffic.exchanges), 1, situation)
    report.situation = None
    report.note(f"{situation}: stops after {limit} call(s), raises RuntimeError naming {limit}, history valid")


def check_cap(agent_turn, report: Report) -> None:
    report.expect(callable(agent_turn), None, f"agent_turn should be a function; it is a {type(agent_turn).__name__}")
    for max_iterations in CAPS:
        _stopped_by_cap(agent_turn, max_iterations, report)
    _stopped_by_cap(agent_turn, None, report)
    run_scenario(agent_turn, TEXT_FIRST, report)
    exactly = Scenario(CHAIN.situation + f", with max_iterations={CHAIN.calls} (just enough)",
                       CHAIN.replies, CHAIN.answer, CHAIN.history)
    run_scenario(agent_turn, exactly, report, max_iterations=CHAIN.calls)



# The course manifest (looplab/course.py) names this module; these are what it reads.
CHECKERS = {
    "2.1": check_tool_result,
    "2.2": check_agent_turn,
    "2.3": check_cap,
}

HINTS = {
    "2.1": [
        'A result block is a dict: {"type": "tool_result", "tool_use_id": ..., "content": ...}.',
        "The id it cites is the call's own: tool_use.id. The content is the output text, as it is.",
        'looplab.tools.is_error(output) is True for an "Error: ..." text: only then add "is_error": True.',
    ],
    "2.2": [
        "Loop: call the model with the whole messages list, append its reply, then look at reply.stop_reason.",
        ('Append the reply verbatim: {"role": "assistant", "content": reply.content}; a reply may start with '
         "text or thinking, so pick tool_use blocks by block.type."),
        ("stop_reason 'tool_use': answer every tool_use block with tool_result(block, run_tool(block.name, block.input)), "
         "all in one user message, and go round again. Anything else (end_turn, max_tokens...): return the text."),
    ],
    "2.3": [
        "Replace the endless loop by for _ in range(max_iterations): one model call per iteration.",
        "If the loop runs out without a final answer, raise RuntimeError with max_iterations in the message.",
        "Append the last reply's results before the loop ends, so every tool_use in messages has its tool_result.",
    ],
}
