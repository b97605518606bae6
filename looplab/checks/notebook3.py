"""Checks for notebook 3, matching ids: run_tools, unanswered_tool_uses, agent_turn for parallel calls.

The id is the only thread between a call and its result, so every check here looks at ids AND at
what travels with them: a result citing the right id must hold that call's output, whatever the
order of the results. Histories are compared on meaning (recordings.canonical_blocks), so SDK
objects and the dicts a learner writes compare equal when the API would see the same thing.
agent_turn is played by the harness it shares with notebook 2 (turns.py); the rows below that
share a key with turns.TEXTS are this notebook's own wording of the same failure.
"""

from __future__ import annotations

from anthropic.types import Message

from .. import scripted
from ..client import MODEL
from ..history import to_wire
from ..scripted import calculator as calc, reply, text, thinking, tool_use
from . import turns
from .core import Report, Text
from .turns import DEFAULT_CAP, Scenario, outline_with_ids, run_scenario, stopped_by_cap, verify_results

QUESTION = "Please work these out for me."
HISTORY = [{"role": "user", "content": QUESTION}]
DONE = reply(text("Done."))  # what the model says to a results message of 3.1
_AGAIN = Text("{situation}: agent_turn called the model again after a reply whose stop_reason was {reason!r}; "
              "only 'tool_use' asks for another round", "Return the reply's text as soon as stop_reason is not 'tool_use'.")
_COUNT = Text("{situation}: agent_turn made {made} model call(s); this conversation needs {needed}")

TEXTS = {
    **turns.TEXTS,
    # 3.1 run_tools: the scenarios' names
    "two_calls_after_text": Text(passed="two calls after a text block"),
    "three_calls": Text(passed="three calls in one reply"),
    "thinking_then_two": Text(passed="a thinking block, then two calls"),
    "one_fails": Text(passed="one call fails, the other works"),
    "division_by_zero": Text(passed="a division by zero"),
    "unknown_tool": Text(passed="a call for a tool that does not exist"),
    "no_call": Text(passed="no tool call at all"),
    "run_tools_call": Text(passed="{situation}: run_tools(message)"),
    "results_ok": Text(passed="{situation}: {count} result(s), each citing the right id with its own output"),
    "no_results": Text(passed="{situation}: no results"),
    "flags_ok": Text(passed="is_error: true exactly for the failing and unknown tools; the API accepts every result "
                            "message"),
    # 3.2 unanswered_tool_uses: the scenarios' names, and a hint for each
    "complete_dicts": Text(passed="a complete exchange, as dicts",
                  hint='Every tool_use here has its result in the next message: nothing is unanswered.'),
    "string_contents": Text(passed="plain string contents, no tools",
                  hint='A message whose content is a string holds no blocks at all.'),
    "call_at_end": Text(passed="a tool_use at the very end, not answered yet",
                  hint='The last assistant message has no message after it: its calls are unanswered.'),
    "one_result_missing": Text(passed="two parallel calls, one result missing",
                  hint='Look at EVERY assistant message, not only the last one: compare its tool_use ids with the '
                       'tool_use_id of the results in the message right after it.'),
    "sdk_one_missing": Text(passed="SDK blocks (as agent_turn appends message.content), one of three results missing",
                  hint='agent_turn appends message.content as it came: SDK objects, not dicts. Read a field with '
                       'block.get(key) for a dict and getattr(block, key, None) for an SDK object.'),
    "split_results": Text(passed="results split over two user messages",
                  hint='Only the message RIGHT AFTER the assistant message counts; a result one message later does not '
                       'answer the call (the API says so too).'),
    "too_late": Text(passed="the result comes two messages too late",
                  hint='Only messages[i + 1] can answer the calls of messages[i], not any later message.'),
    "earlier_unanswered": Text(passed="an unanswered call earlier in the history, then more turns",
                  hint='Walk the whole history: any assistant message can hold unanswered calls, not only the last.'),
    "mixed": Text(passed="several turns, dicts and SDK blocks mixed",
                  hint='Collect the unanswered ids of every assistant message, in a single list.'),
    "complete_sdk": Text(passed="a complete exchange with SDK blocks",
                  hint='Results may come in any order: match them by id, not by position.'),
    "not_a_list": Text("{situation}: unanswered_tool_uses returned a {kind}; it should return a list of ids",
                       "Return a list of strings, such as ['toolu_B'] (or [] when every call is answered)."),
    "not_ids": Text("{situation}: unanswered_tool_uses returned {got!r}; it should return the ids themselves (strings)",
                    "Return the tool_use blocks' ids (block.id or block['id']), not the blocks."),
    "wrong_ids": Text("{situation}: unanswered_tool_uses returned {got!r}; expected {expected!r} (the history: "
                      "{outline})", passed="{situation}: {expected!r}"),
    # 3.3 agent_turn: the scenarios' names, and this notebook's words for the harness's failures
    "two_calls": Text(passed="two calls in one reply"),
    "three_then_one": Text(passed="three calls in one reply, then one more"),
    "fails_then_corrected": Text(passed="a call that fails, then the model corrects it"),
    "unknown_tool_turn": Text(passed="a call for a tool that does not exist"),
    "thinking_first": Text(passed="a thinking block first"),
    "cut_off": Text(passed="a reply cut off by max_tokens"),
    "no_tool": Text(passed="no tool needed"),
    "called_again": _AGAIN,
    "called_again_after_cut": _AGAIN,
    "block_confusion": Text("{situation}: your code raised AttributeError: {error}{where}",
                            "A reply may start with a text or thinking block, and hold several tool_use blocks: "
                            "pick them with `if block.type == 'tool_use'`, never content[0] or content[i]."),
    "no_calculator": Text("{situation}: a request did not offer the calculator tool (tools={names})",
                          "Pass tools=TOOLS to every client.messages.create call."),
    "stopped_early": _COUNT,
    "call_count": _COUNT,
    "wrong_answer": Text("{situation}: agent_turn returned {answer}; expected the last reply's text {expected!r}",
                         "Return the text of the reply that ends the turn: join the text of its text blocks."),
    "scenario_passed": Text(passed="{situation}: {made} call(s), the history as the API wants it, the right answer"),
    "not_in_place": Text("{situation}: agent_turn should append to the list it was given, in place; after it, "
                         "messages holds {count} message(s)",
                         "Use messages.append(...) on the list you received; don't build a new list."),
    "reply_changed": Text("{situation}: messages[{index}] should be the model's reply {number} exactly as it came (an "
                          "assistant message with all its blocks: {wanted}); yours is {yours}",
                          "Append message.content as it is, every block included (text, thinking, tool_use): "
                          "messages.append({'role': 'assistant', 'content': message.content})."),
    "never_stops": Text(passed="a model that never stops, max_iterations={cap}"),
    "never_stops_default": Text(passed="a model that never stops, default max_iterations (10)"),
    "cap_never_stopped": Text("{situation}: agent_turn never stopped: it called the model more than {over} times",
                              "Loop with `for _ in range(max_iterations):` and raise RuntimeError after the loop."),
    "cap_returned": Text("{situation}: agent_turn returned after {calls} calls; it should raise RuntimeError when "
                         "the model is still asking for tools",
                         "After the loop, raise RuntimeError(f'... after {max_iterations} calls')."),
    "cap_calls": Text("{situation}: agent_turn made {calls} model calls; it should stop after exactly {limit}",
                      "Count model calls: `for _ in range(max_iterations):` around the call."),
    "cap_named": Text("{situation}: the RuntimeError says {said!r}; it should name the limit ({limit})",
                      "Put max_iterations in the message, so whoever reads it knows which limit was hit."),
    "cap_history": Text("{situation}: after stopping, the history ends with the model's tool_use unanswered; append "
                        "its results before you stop, so the conversation can go on",
                        "Run the tools and append the results inside the loop, before checking the limit."),
    "cap_passed": Text(passed="{situation}: stops after {limit} calls with RuntimeError naming the limit, every call "
                              "answered"),
}


# --- 3.1 run_tools -------------------------------------------------------------------------------------

RUN_TOOLS_SCENARIOS = [
    ("two_calls_after_text",
     [text("I'll work out both months at once."), calc("37 * 23"), calc("37 * 31")]),
    ("three_calls",
     [calc("3 * 4.75"), calc("2 * 1.2"), calc("5 * 0.85")]),
    ("thinking_then_two",
     [thinking("Two products; I can ask for both at once."), calc("4823 * 1979"), calc("1234 / 8")]),
    ("one_fails",
     [text("Let me compute both."), calc("1,250 * 6 / 4"), calc("1250 / 4")]),
    ("division_by_zero",
     [calc("12 / 0"), calc("12 / 4")]),
    ("unknown_tool",
     [text("I'll use a percentage tool."), tool_use("percentage", {"value": 1250, "percent": 15}),
      calc("1250 * 15 / 100")]),
    ("no_call",
     [text("That is 9,544,717.")]),
]


def scripted_message(*blocks: dict, stop_reason: str | None = None) -> Message:
    """An SDK Message as the API would return it, from scripted blocks (ids made from the request)."""
    request = {"model": MODEL, "messages": [{"role": "user", "content": QUESTION}]}
    return Message.model_validate(reply(*blocks, stop_reason=stop_reason)(request))


def check_run_tools(run_tools, report: Report) -> None:
    report.require_function(run_tools, "run_tools")
    for key, blocks in RUN_TOOLS_SCENARIOS:
        report.enter(key)
        message = scripted_message(*blocks)
        calls = [block for block in to_wire(message.content) if block["type"] == "tool_use"]
        results = turns.call_learner(run_tools, report, message)
        verify_results(calls, results, report, report.words("run_tools_call"))
        if calls:  # the API must accept them as the next user message
            client, _ = scripted.scripted_client([DONE], call_limit=1)
            client.messages.create(model=MODEL, max_tokens=64, messages=[
                {"role": "user", "content": QUESTION},
                {"role": "assistant", "content": message.content},
                {"role": "user", "content": results},
            ])
        report.note("results_ok" if calls else "no_results", count=len(calls))
    report.situation = None
    report.note("flags_ok")


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

UNANSWERED_SCENARIOS = [  # (key in TEXTS, history, the unanswered ids)
    ("complete_dicts",
     [QUESTION_MESSAGE, _assistant(text("Let me add."), _call("toolu_A")), _user(_result("toolu_A")),
      _assistant(text("1 + 1 = 2."))],
     []),
    ("string_contents",
     [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello! Ask me some arithmetic."},
      {"role": "user", "content": "Later."}],
     []),
    ("call_at_end",
     [QUESTION_MESSAGE, _assistant(_call("toolu_A"))],
     ["toolu_A"]),
    ("one_result_missing",
     [QUESTION_MESSAGE, _assistant(_call("toolu_A"), _call("toolu_B", "2 + 2")), _user(_result("toolu_A")),
      _assistant(text("Done."))],
     ["toolu_B"]),
    ("sdk_one_missing",
     [QUESTION_MESSAGE,
      _sdk_assistant(text("Three sums."), _call("toolu_A"), _call("toolu_B", "2 + 2"), _call("toolu_C", "3 + 3")),
      _user(_result("toolu_C", "6"), _result("toolu_A"))],
     ["toolu_B"]),
    ("split_results",
     [QUESTION_MESSAGE, _assistant(_call("toolu_A"), _call("toolu_B", "2 + 2")), _user(_result("toolu_A")),
      _user(_result("toolu_B", "4"))],
     ["toolu_B"]),
    ("too_late",
     [QUESTION_MESSAGE, _assistant(_call("toolu_A")), _user(text("Take your time.")),
      _assistant(text("Still working.")), _user(_result("toolu_A"))],
     ["toolu_A"]),
    ("earlier_unanswered",
     [QUESTION_MESSAGE, _sdk_assistant(_call("toolu_A"), _call("toolu_B", "2 + 2")),
      _user(_result("toolu_A"), _result("toolu_B", "4")), _sdk_assistant(_call("toolu_C", "3 + 3")),
      _user(text("Never mind.")), _assistant(text("All right.")), {"role": "user", "content": "Thanks."}],
     ["toolu_C"]),
    ("mixed",
     [QUESTION_MESSAGE, _assistant(_call("toolu_A")), _user(_result("toolu_A")),
      _sdk_assistant(text("Two more."), _call("toolu_B", "2 + 2"), _call("toolu_C", "3 + 3")),
      _user(_result("toolu_C", "6")), _sdk_assistant(_call("toolu_D", "4 + 4"))],
     ["toolu_B", "toolu_D"]),
    ("complete_sdk",
     [QUESTION_MESSAGE, _sdk_assistant(thinking("Two sums."), _call("toolu_A"), _call("toolu_B", "2 + 2")),
      _user(_result("toolu_B", "4"), _result("toolu_A")), _sdk_assistant(text("2 and 4."))],
     []),
]


def check_unanswered_tool_uses(unanswered_tool_uses, report: Report) -> None:
    report.require_function(unanswered_tool_uses, "unanswered_tool_uses")
    for key, history, expected in UNANSWERED_SCENARIOS:
        report.enter(key)
        got = unanswered_tool_uses(history)
        report.require(isinstance(got, list), "not_a_list", kind=type(got).__name__)
        report.require(all(isinstance(item, str) for item in got), "not_ids", got=got)
        report.require(sorted(got) == sorted(expected), "wrong_ids", report.text(key).hint, got=got,
                       expected=expected, outline=outline_with_ids(history, report))
    report.situation = None


# --- 3.3 agent_turn -------------------------------------------------------------------------------------

AGENT_SCENARIOS = [  # asked after QUESTION; each answer is the last reply's text
    Scenario("two_calls",
             [reply(text("I'll work out both months at once."), calc("37 * 23"), calc("37 * 31")),
              reply(text("You spend 851 € in March and 1,147 € in April."))], HISTORY),
    Scenario("three_then_one",
             [reply(calc("3 * 4.75"), calc("2 * 1.2"), calc("5 * 0.85")),
              reply(text("Now the total."), calc("14.25 + 2.4 + 4.25")),
              reply(text("14.25 €, 2.40 € and 4.25 €: 20.90 € in total."))], HISTORY),
    Scenario("fails_then_corrected",
             [reply(text("Let me compute both."), calc("1,250 * 6 / 4"), calc("1250 / 4")),
              reply(text("No thousands separator, then."), calc("1250 * 6 / 4")),
              reply(text("1,875 g for 6 people, that is 312.5 g each."))], HISTORY),
    Scenario("unknown_tool_turn",
             [reply(tool_use("percentage", {"value": 1250, "percent": 15}), calc("1250 / 4")),
              reply(text("No percentage tool, so the calculator it is."), calc("1250 * 15 / 100")),
              reply(text("15% of 1,250 is 187.5."))], HISTORY),
    Scenario("thinking_first",
             [reply(thinking("Big product: use the tool."), calc("4823 * 1979")),
              reply(text("4823 × 1979 = 9,544,717."))], HISTORY),
    # Cut off in the middle of a second call: its input may be incomplete, so it must not run.
    Scenario("cut_off",
             [reply(text("Let me compute."), calc("12 * 12")),
              reply(text("12 × 12 = 144. Let me check that with"), calc("144 / 12"), stop_reason="max_tokens")], HISTORY),
    Scenario("no_tool",
             [reply(text("Hello! Ask me any arithmetic."))], HISTORY),
]



def check_agent_turn(agent_turn, report: Report) -> None:
    report.require_function(agent_turn, "agent_turn")
    for scenario in AGENT_SCENARIOS:
        run_scenario(agent_turn, scenario, report)
    for cap in (3, None):  # the scripted model answers one call past the cap, then refuses
        stopped_by_cap(agent_turn, cap, report, call_limit=(cap or DEFAULT_CAP) + 1)


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
