"""Checks for notebook 3, matching ids: run_tools, unanswered_tool_uses, agent_turn for parallel calls.

The id is the only thread between a call and its result, so every check here looks at ids AND at
what travels with them: a result citing the right id must hold that call's output, whatever the
order of the results. Histories are compared on meaning (recordings.canonical_blocks), so SDK
objects and the dicts a learner writes compare equal when the API would see the same thing.
"""

from __future__ import annotations

import json

import anthropic
from anthropic.types import Message

from .. import scripted
from ..client import MODEL
from ..history import to_wire
from ..recordings import canonical_blocks
from ..scripted import TooManyCalls, calculator as calc, never_stops, reply, text, thinking, tool_use
from ..tools import is_error, run_tool
from .core import Failure, Report, explain

QUESTION = "Please work these out for me."


PAIRING_HINT = (
    "Build each result from its own block: tool_use_id=block.id with run_tool(block.name, block.input). "
    "Never pair ids and outputs by position."
)
BLOCK_HINT = (
    "A reply may start with a text or thinking block, and hold several tool_use blocks: "
    "pick them with `if block.type == 'tool_use'`, never content[0] or content[i]."
)
IS_ERROR_HINT = (
    "run_tool returns a text starting with 'Error: ' for a failing or unknown tool; only those results get "
    "'is_error': True (tool_result from notebook 2 does it for you)."
)


def _describe_call(call: dict) -> str:
    return f"{call.get('name')}({json.dumps(call.get('input'), ensure_ascii=False)})"


def _content_text(content):
    """A tool_result's content as the text the model reads: a string, or its text blocks joined."""
    if isinstance(content, str):
        return content
    if isinstance(content, list) and all(isinstance(b, dict) and b.get("type") == "text" for b in content):
        return "".join(b.get("text", "") for b in content)
    return content


def _call_learner(function, *args, situation: str, **kwargs):
    """Run the learner's code; reading a tool field on a text/thinking block gets a precise hint."""
    try:
        return function(*args, **kwargs)
    except AttributeError as error:
        if any(name in str(error) for name in ("TextBlock", "ThinkingBlock")):
            failure = explain(error, "")
            raise Failure(f"{situation}: {failure.message}", BLOCK_HINT) from None
        raise


def verify_results(calls: list[dict], results, report: Report, where: str) -> None:
    """One tool_result per call, each citing a call's id and holding THAT call's output; order free."""
    report.expect(isinstance(results, list), None,
                  f"{where}: the results should be a list of tool_result dicts; got a {type(results).__name__}",
                  "Return a list: [tool_result(block, output), ...].")
    results = to_wire(results)
    report.expect(len(results) == len(calls), None,
                  f"{where}: {len(results)} result(s) for {len(calls)} tool_use block(s); "
                  "every tool_use needs its own tool_result",
                  "Loop over every block of the reply: there can be several tool_use blocks, not only the first.")
    by_id = {call["id"]: call for call in calls}
    answered: dict[str, dict] = {}
    for result in results:
        report.expect(isinstance(result, dict) and result.get("type") == "tool_result", None,
                      f"{where}: {result!r} is not a tool_result block",
                      'Each result is a dict {"type": "tool_result", "tool_use_id": ..., "content": ...}.')
        tool_id = result.get("tool_use_id")
        report.expect(tool_id in by_id, None,
                      f"{where}: a result cites {tool_id!r}, which is not the id of any tool_use in the reply",
                      "Copy the id from the tool_use block you are answering: tool_use_id=block.id.")
        report.expect(tool_id not in answered, None,
                      f"{where}: two results cite {tool_id!r}; each tool_use is answered exactly once",
                      PAIRING_HINT)
        answered[tool_id] = result
    for call in calls:
        result = answered[call["id"]]
        expected = run_tool(call.get("name"), call.get("input"))
        got = _content_text(result.get("content"))
        report.expect(got == expected, None,
                      f"{where}: the result citing {call['id']} holds {got!r}, but that id belongs to the call "
                      f"{_describe_call(call)}, whose result is {expected!r}",
                      PAIRING_HINT)
        if is_error(expected):
            report.expect(result.get("is_error") is True, None,
                          f"{where}: the call {_describe_call(call)} failed ({expected!r}) but its result has no "
                          "'is_error': True",
                          IS_ERROR_HINT)
        else:
            report.expect(not result.get("is_error"), None,
                          f"{where}: the call {_describe_call(call)} worked ({expected!r}) but its result says "
                          "'is_error': True",
                          IS_ERROR_HINT)


# --- 3.1 run_tools -------------------------------------------------------------------------------------

RUN_TOOLS_SCENARIOS = [
    ("two calls after a text block",
     [text("I'll work out both months at once."), calc("37 * 23"), calc("37 * 31")]),
    ("three calls in one reply",
     [calc("3 * 4.75"), calc("2 * 1.2"), calc("5 * 0.85")]),
    ("a thinking block, then two calls",
     [thinking("Two products; I can ask for both at once."), calc("4823 * 1979"), calc("1234 / 8")]),
    ("one call fails, the other works",
     [text("Let me compute both."), calc("1,250 * 6 / 4"), calc("1250 / 4")]),
    ("a division by zero",
     [calc("12 / 0"), calc("12 / 4")]),
    ("a call for a tool that does not exist",
     [text("I'll use a percentage tool."), tool_use("percentage", {"value": 1250, "percent": 15}),
      calc("1250 * 15 / 100")]),
    ("no tool call at all",
     [text("That is 9,544,717.")]),
]


def scripted_message(*blocks: dict, stop_reason: str | None = None) -> Message:
    """An SDK Message as the API would return it, from scripted blocks (ids made from the request)."""
    request = {"model": MODEL, "messages": [{"role": "user", "content": QUESTION}]}
    return Message.model_validate(reply(*blocks, stop_reason=stop_reason)(request))


def check_run_tools(run_tools, report: Report) -> None:
    report.expect(callable(run_tools), None, f"run_tools should be a function; it is a {type(run_tools).__name__}")
    for situation, blocks in RUN_TOOLS_SCENARIOS:
        report.situation = situation
        message = scripted_message(*blocks)
        calls = [block for block in to_wire(message.content) if block["type"] == "tool_use"]
        results = _call_learner(run_tools, message, situation=situation)
        verify_results(calls, results, report, f"{situation}: run_tools(message)")
        if calls:  # the API must accept them as the next user message
            client, _ = scripted.scripted_client([reply(text("Done."))], call_limit=1)
            client.messages.create(model=MODEL, max_tokens=64, messages=[
                {"role": "user", "content": QUESTION},
                {"role": "assistant", "content": message.content},
                {"role": "user", "content": results},
            ])
        report.note(f"{situation}: {len(calls)} result(s), each citing the right id with its own output"
                    if calls else f"{situation}: no results")
    report.situation = None
    report.note("is_error: true exactly for the failing and unknown tools; the API accepts every result message")


# --- 3.2 unanswered_tool_uses ----------------------------------------------------------------------------


def _user(*blocks):
    return {"role": "user", "content": list(blocks)}


def _assistant(*blocks):
    return {"role": "assistant", "content": list(blocks)}


def _sdk_assistant(*blocks):
    """An assistant message as agent_turn appends it: message.content holds SDK block objects."""
    return {"role": "assistant", "content": scripted_message(*blocks).content}


def _call(tool_id, expression="1 + 1"):
    return calc(expression, id=tool_id)


def _result(tool_id, output="2"):
    return {"type": "tool_result", "tool_use_id": tool_id, "content": output}


QUESTION_MESSAGE = {"role": "user", "content": "What are 1 + 1, 2 + 2 and 3 + 3?"}

UNANSWERED_SCENARIOS = [
    ("a complete exchange, as dicts",
     [QUESTION_MESSAGE, _assistant(text("Let me add."), _call("toolu_A")), _user(_result("toolu_A")),
      _assistant(text("1 + 1 = 2."))],
     [], "Every tool_use here has its result in the next message: nothing is unanswered."),
    ("plain string contents, no tools",
     [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello! Ask me some arithmetic."},
      {"role": "user", "content": "Later."}],
     [], "A message whose content is a string holds no blocks at all."),
    ("a tool_use at the very end, not answered yet",
     [QUESTION_MESSAGE, _assistant(_call("toolu_A"))],
     ["toolu_A"], "The last assistant message has no message after it: its calls are unanswered."),
    ("two parallel calls, one result missing",
     [QUESTION_MESSAGE, _assistant(_call("toolu_A"), _call("toolu_B", "2 + 2")), _user(_result("toolu_A")),
      _assistant(text("Done."))],
     ["toolu_B"], "Look at EVERY assistant message, not only the last one: compare its tool_use ids with the "
                  "tool_use_id of the results in the message right after it."),
    ("SDK blocks (as agent_turn appends message.content), one of three results missing",
     [QUESTION_MESSAGE,
      _sdk_assistant(text("Three sums."), _call("toolu_A"), _call("toolu_B", "2 + 2"), _call("toolu_C", "3 + 3")),
      _user(_result("toolu_C", "6"), _result("toolu_A"))],
     ["toolu_B"], "agent_turn appends message.content as it came: SDK objects, not dicts. Read a field with "
                  "block.get(key) for a dict and getattr(block, key, None) for an SDK object."),
    ("results split over two user messages",
     [QUESTION_MESSAGE, _assistant(_call("toolu_A"), _call("toolu_B", "2 + 2")), _user(_result("toolu_A")),
      _user(_result("toolu_B", "4"))],
     ["toolu_B"], "Only the message RIGHT AFTER the assistant message counts; a result one message later "
                  "does not answer the call (the API says so too)."),
    ("the result comes two messages too late",
     [QUESTION_MESSAGE, _assistant(_call("toolu_A")), _user(text("Take your time.")),
      _assistant(text("Still working.")), _user(_result("toolu_A"))],
     ["toolu_A"], "Only messages[i + 1] can answer the calls of messages[i], not any later message."),
    ("an unanswered call earlier in the history, then more turns",
     [QUESTION_MESSAGE, _sdk_assistant(_call("toolu_A"), _call("toolu_B", "2 + 2")),
      _user(_result("toolu_A"), _result("toolu_B", "4")), _sdk_assistant(_call("toolu_C", "3 + 3")),
      _user(text("Never mind.")), _assistant(text("All right.")), {"role": "user", "content": "Thanks."}],
     ["toolu_C"], "Walk the whole history: any assistant message can hold unanswered calls, not only the last."),
    ("several turns, dicts and SDK blocks mixed",
     [QUESTION_MESSAGE, _assistant(_call("toolu_A")), _user(_result("toolu_A")),
      _sdk_assistant(text("Two more."), _call("toolu_B", "2 + 2"), _call("toolu_C", "3 + 3")),
      _user(_result("toolu_C", "6")), _sdk_assistant(_call("toolu_D", "4 + 4"))],
     ["toolu_B", "toolu_D"], "Collect the unanswered ids of every assistant message, in a single list."),
    ("a complete exchange with SDK blocks",
     [QUESTION_MESSAGE, _sdk_assistant(thinking("Two sums."), _call("toolu_A"), _call("toolu_B", "2 + 2")),
      _user(_result("toolu_B", "4"), _result("toolu_A")), _sdk_assistant(text("2 and 4."))],
     [], "Results may come in any order: match them by id, not by position."),
]


def _outline(messages: list) -> str:
    """A history in one line: who said what, with the ids, so a failure shows the case at a glance."""
    parts = []
    for index, message in enumerate(to_wire(messages)):
        content = message.get("content")
        if isinstance(content, str):
            what = "text"
        else:
            what = ", ".join(
                f"tool_use {b.get('id')}" if b.get("type") == "tool_use"
                else f"tool_result for {b.get('tool_use_id')}" if b.get("type") == "tool_result"
                else str(b.get("type"))
                for b in content
            )
        parts.append(f"[{index}] {message.get('role')}: {what}")
    return " · ".join(parts)


def check_unanswered_tool_uses(unanswered_tool_uses, report: Report) -> None:
    report.expect(callable(unanswered_tool_uses), None,
                  f"unanswered_tool_uses should be a function; it is a {type(unanswered_tool_uses).__name__}")
    for situation, history, expected, hint in UNANSWERED_SCENARIOS:
        report.situation = situation
        got = unanswered_tool_uses(history)
        report.expect(isinstance(got, list), None,
                      f"{situation}: unanswered_tool_uses returned a {type(got).__name__}; it should return a list "
                      "of ids",
                      "Return a list of strings, such as ['toolu_B'] (or [] when every call is answered).")
        report.expect(all(isinstance(item, str) for item in got), None,
                      f"{situation}: unanswered_tool_uses returned {got!r}; it should return the ids themselves "
                      "(strings)",
                      "Return the tool_use blocks' ids (block.id or block['id']), not the blocks.")
        report.expect(sorted(got) == sorted(expected), f"{situation}: {expected!r}",
                      f"{situation}: unanswered_tool_uses returned {got!r}; expected {expected!r} "
                      f"(the history: {_outline(history)})",
                      hint)
    report.situation = None


# --- 3.3 agent_turn -------------------------------------------------------------------------------------

AGENT_SCENARIOS = [
    ("two calls in one reply",
     [reply(text("I'll work out both months at once."), calc("37 * 23"), calc("37 * 31")),
      reply(text("You spend 851 € in March and 1,147 € in April."))]),
    ("three calls in one reply, then one more",
     [reply(calc("3 * 4.75"), calc("2 * 1.2"), calc("5 * 0.85")),
      reply(text("Now the total."), calc("14.25 + 2.4 + 4.25")),
      reply(text("14.25 €, 2.40 € and 4.25 €: 20.90 € in total."))]),
    ("a call that fails, then the model corrects it",
     [reply(text("Let me compute both."), calc("1,250 * 6 / 4"), calc("1250 / 4")),
      reply(text("No thousands separator, then."), calc("1250 * 6 / 4")),
      reply(text("1,875 g for 6 people, that is 312.5 g each."))]),
    ("a call for a tool that does not exist",
     [reply(tool_use("percentage", {"value": 1250, "percent": 15}), calc("1250 / 4")),
      reply(text("No percentage tool, so the calculator it is."), calc("1250 * 15 / 100")),
      reply(text("15% of 1,250 is 187.5."))]),
    ("a thinking block first",
     [reply(thinking("Big product: use the tool."), calc("4823 * 1979")),
      reply(text("4823 × 1979 = 9,544,717."))]),
    # Cut off in the middle of a second call: its input may be incomplete, so it must not run.
    ("a reply cut off by max_tokens",
     [reply(text("Let me compute."), calc("12 * 12")),
      reply(text("12 × 12 = 144. Let me check that with"), calc("144 / 12"), stop_reason="max_tokens")]),
    ("no tool needed",
     [reply(text("Hello! Ask me any arithmetic."))]),
]

CAP = 3
DEFAULT_CAP = 10


def _final_text(response: dict) -> str:
    return "".join(block["text"] for block in response["content"] if block["type"] == "text")


def _run_agent_turn(agent_turn, client, traffic, messages, situation: str, expected_calls: int, **kwargs):
    """Call the learner's agent_turn; a call past the last scripted reply becomes a plain failure."""
    try:
        return _call_learner(agent_turn, client, messages, situation=situation, **kwargs)
    except TooManyCalls:
        last = traffic.exchanges[-1]["response"] if traffic.exchanges else None
        reason = last.get("stop_reason") if last else None
        raise Failure(f"{situation}: agent_turn called the model again after a reply whose stop_reason was "
                      f"{reason!r}; only 'tool_use' asks for another round",
                      "Return the reply's text as soon as stop_reason is not 'tool_use'.") from None
    except anthropic.BadRequestError:
        answered = [e for e in traffic.exchanges if e.get("response") is not None]
        if len(answered) >= expected_calls:
            reason = answered[-1]["response"].get("stop_reason")
            raise Failure(f"{situation}: agent_turn called the model again after a reply whose stop_reason was "
                          f"{reason!r}; only 'tool_use' asks for another round",
                          "Return the reply's text as soon as stop_reason is not 'tool_use'.") from None
        raise


def _verify_history(messages: list, traffic, question: dict, situation: str, report: Report) -> None:
    """The history holds the question, then each reply verbatim, then ONE user message of results per call round."""
    wire = to_wire(messages)
    report.expect(len(wire) > 1 and wire[0] == question, None,
                  f"{situation}: agent_turn should append to the list it was given, in place; after it, messages "
                  f"holds {len(wire)} message(s)",
                  "Use messages.append(...) on the list you received; don't build a new list.")
    responses = [exchange["response"] for exchange in traffic.exchanges if exchange.get("response") is not None]
    index = 1
    for number, response in enumerate(responses, start=1):
        report.expect(index < len(wire), None,
                      f"{situation}: the model's reply {number} is missing from the history "
                      f"(messages has {len(wire)} message(s))",
                      "Append every reply: messages.append({'role': 'assistant', 'content': message.content}).")
        message = wire[index]
        same = (isinstance(message, dict) and message.get("role") == "assistant"
                and canonical_blocks(message.get("content")) == canonical_blocks(response["content"]))
        kinds = [block["type"] for block in response["content"]]
        report.expect(same, None,
                      f"{situation}: messages[{index}] should be the model's reply {number} exactly as it came "
                      f"(an assistant message with all its blocks: {', '.join(kinds)}); yours is "
                      f"{_outline([message]).removeprefix('[0] ')}",
                      "Append message.content as it is, every block included (text, thinking, tool_use): "
                      "messages.append({'role': 'assistant', 'content': message.content}).")
        index += 1
        if response.get("stop_reason") != "tool_use":
            continue
        calls = [block for block in response["content"] if block["type"] == "tool_use"]
        report.expect(index < len(wire), None,
                      f"{situation}: the model's reply {number} asked for {len(calls)} tool call(s), but no results "
                      "follow it in the history",
                      "Right after the reply, append ONE user message holding every result: "
                      "{'role': 'user', 'content': run_tools(message)}.")
        following = wire[index]
        content = following.get("content") if isinstance(following, dict) else None
        report.expect(isinstance(following, dict) and following.get("role") == "user" and isinstance(content, list),
                      None,
                      f"{situation}: messages[{index}] should be a user message holding the results of reply {number}",
                      "Append {'role': 'user', 'content': run_tools(message)} right after the reply.")
        results = [block for block in content if isinstance(block, dict) and block.get("type") == "tool_result"]
        verify_results(calls, results, report, f"{situation}: messages[{index}]")
        index += 1
    report.expect(index == len(wire), None,
                  f"{situation}: the history has {len(wire) - index} extra message(s) after the model's last reply",
                  "Append only the model's replies and one result message per reply that asked for tools.")


def check_agent_turn(agent_turn, report: Report) -> None:
    report.expect(callable(agent_turn), None, f"agent_turn should be a function; it is a {type(agent_turn).__name__}")
    for situation, replies in AGENT_SCENARIOS:
        report.situation = situation
        client, traffic = scripted.scripted_client(replies, call_limit=len(replies))
        question = {"role": "user", "content": QUESTION}
        messages = [dict(question)]
        answer = _run_agent_turn(agent_turn, client, traffic, messages, situation, len(replies))
        calls = len(traffic.exchanges)
        report.expect(calls == len(replies), None,
                      f"{situation}: agent_turn made {calls} model call(s); this conversation needs {len(replies)}")
        for exchange in traffic.exchanges:
            names = [tool.get("name") for tool in exchange["request"].get("tools", [])]
            report.expect("calculator" in names, None,
                          f"{situation}: a request did not offer the calculator tool (tools={names})",
                          "Pass tools=TOOLS to every client.messages.create call.")
        expected = _final_text(traffic.exchanges[-1]["response"])
        report.expect(answer == expected, None,
                      f"{situation}: agent_turn returned {answer!r}; expected the last reply's text {expected!r}",
                      "Return the text of the reply that ends the turn: join the text of its text blocks.")
        _verify_history(messages, traffic, question, situation, report)
        report.note(f"{situation}: {calls} call(s), the history as the API wants it, the right answer")
    _check_cap(agent_turn, report, CAP)
    _check_cap(agent_turn, report, None)
    report.situation = None


def _check_cap(agent_turn, report: Report, cap: int | None) -> None:
    limit = cap or DEFAULT_CAP
    situation = (f"a model that never stops, max_iterations={cap}" if cap
                 else f"a model that never stops, default max_iterations ({DEFAULT_CAP})")
    report.situation = situation
    client, traffic = scripted.scripted_client(never_stops("1 + 1"), call_limit=limit + 1)
    question = {"role": "user", "content": QUESTION}
    messages = [dict(question)]
    kwargs = {"max_iterations": cap} if cap else {}
    try:
        _call_learner(agent_turn, client, messages, situation=situation, **kwargs)
    except TooManyCalls:
        raise Failure(f"{situation}: agent_turn never stopped: it called the model more than {limit + 1} times",
                      "Loop with `for _ in range(max_iterations):` and raise RuntimeError after the loop.") from None
    except RuntimeError as error:
        stopped = error
    else:
        raise Failure(f"{situation}: agent_turn returned after {len(traffic.exchanges)} calls; it should raise "
                      "RuntimeError when the model is still asking for tools",
                      "After the loop, raise RuntimeError(f'... after {max_iterations} calls').")
    calls = len(traffic.exchanges)
    report.expect(calls == limit, None,
                  f"{situation}: agent_turn made {calls} model calls; it should stop after exactly {limit}",
                  "Count model calls: `for _ in range(max_iterations):` around the call.")
    report.expect(str(limit) in str(stopped), None,
                  f"{situation}: the RuntimeError says {str(stopped)!r}; it should name the limit ({limit})",
                  "Put max_iterations in the message, so whoever reads it knows which limit was hit.")
    wire = to_wire(messages)
    report.expect(not (wire and isinstance(wire[-1], dict) and wire[-1].get("role") == "assistant"), None,
                  f"{situation}: after stopping, the history ends with the model's tool_use unanswered; "
                  "append its results before you stop, so the conversation can go on",
                  "Run the tools and append the results inside the loop, before checking the limit.")
    _verify_history(messages, traffic, question, situation, report)
    report.note(f"{situation}: stops after {limit} calls with RuntimeError naming the limit, every call answered")


# The course manifest (looplab/course.py) names this module; these are what it reads.
CHECKERS = {
    "3.1": check_run_tools,
    "3.2": check_unanswered_tool_uses,
    "3.3": check_agent_turn,
}

HINTS = {
    "3.1": [
        "Keep the blocks of message.content whose block.type is 'tool_use': there may be several, with text or "
        "thinking blocks around them.",
        "For each one: output = run_tool(block.name, block.input), then tool_result(block, output), which cites "
        "block.id.",
        "tool_result (from notebook 2) adds 'is_error': True when the output starts with 'Error: ', as run_tool's "
        "output does for a failing or unknown tool. A list comprehension over the tool_use blocks does it all.",
    ],
    "3.2": [
        "Only an assistant message holds tool_use blocks, and only the message right after it, messages[i + 1], "
        "can answer them.",
        "For each assistant message i: collect the tool_use_id of every tool_result in messages[i + 1] (if there "
        "is one and it is a user message), then keep the ids of message i's tool_use blocks that are not among them.",
        "Histories mix dicts and SDK objects, and content can be a plain string: read a field with "
        "item.get(key) if isinstance(item, dict) else getattr(item, key, None), and treat string content as no "
        "blocks.",
    ],
    "3.3": [
        "The loop of notebook 2: call the model, append {'role': 'assistant', 'content': message.content}, and "
        "return the text unless stop_reason == 'tool_use'.",
        "All the results of one reply go in ONE user message: messages.append({'role': 'user', 'content': "
        "run_tools(message)}).",
        "Wrap it in `for _ in range(max_iterations):` and raise RuntimeError naming max_iterations after the loop; "
        "the last results are already appended, so the history stays valid.",
    ],
}
