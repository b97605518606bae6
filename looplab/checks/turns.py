"""One harness for every check of agent_turn (2.2, 2.3, 3.3) and of the results it sends (3.1).

A scenario's replies and history (`given`) say what agent_turn should do: call the model once a reply,
keep each reply verbatim, answer each round of calls with ONE user message of results, return the
last reply's text. Where notebook 3 words a failure differently, its catalogue's row replaces this one's.
"""

import json
from itertools import zip_longest
from types import SimpleNamespace
from typing import Callable

import anthropic

from ..catalogue import catalogue
from ..client import MODEL
from ..history import to_wire
from ..loop import MAX_TOKENS, SYSTEM_PROMPT, tool_result
from ..recordings import canonical_blocks
from ..rules import check_request
from ..scripted import TooManyCalls, never_stops
from ..tools import is_error, run_tool
from .core import Report, Scenario, learner_frame, play

START = {"role": "user", "content": "What is 4823 × 1979?"}
DEFAULT_CAP = 10
BLOCK_TYPES = ("TextBlock", "ThinkingBlock", "ToolUseBlock")  # SDK classes, in the AttributeError

TEXTS, _ = catalogue(__file__)  # the words of these checks: texts/turns.toml


def final_text(response: dict) -> str:
    return "".join(block["text"] for block in response["content"] if block["type"] == "text")


def short(value, limit: int = 160) -> str:
    """A value as compact JSON (a string as Python writes it), cut to fit on a line."""
    words = repr(value) if isinstance(value, str) else json.dumps(to_wire(value), ensure_ascii=False, default=repr)
    return words if len(words) <= limit else words[: limit - 3] + "..."


def result_text(content):
    """A tool_result's content as the text the model reads: a string, or its text blocks joined."""
    if isinstance(content, list) and all(isinstance(b, dict) and b.get("type") == "text" for b in content):
        return "".join(b.get("text", "") for b in content)
    return content


def verify_results(calls: list[dict], results, report: Report, where: str) -> None:
    """One tool_result per call, each citing a call's id and holding THAT call's output; order free."""
    report.require(isinstance(results, list), "results_not_list", where=where, kind=type(results).__name__)
    results = to_wire(results)
    report.require(len(results) == len(calls), "results_count", where=where, count=len(results), calls=len(calls))
    by_id = {call["id"]: call for call in calls}
    answered: dict[str, dict] = {}
    for result in results:
        report.require(isinstance(result, dict) and result.get("type") == "tool_result", "not_a_result",
                       where=where, result=result)
        tool_id = result.get("tool_use_id")
        report.require(tool_id in by_id, "unknown_id", where=where, tool_id=tool_id)
        report.require(tool_id not in answered, "cited_twice", where=where, tool_id=tool_id)
        answered[tool_id] = result
    for call in calls:
        result, expected = answered[call["id"]], run_tool(call.get("name"), call.get("input"))
        said = dict(where=where, tool_id=call["id"], expected=expected,
                    call=f"{call.get('name')}({json.dumps(call.get('input'), ensure_ascii=False)})")
        report.require(result_text(result.get("content")) == expected, "wrong_output",
                       got=result_text(result.get("content")), **said)
        if is_error(expected):
            report.require(result.get("is_error") is True, "needs_is_error", **said)
        else:
            report.require(not result.get("is_error"), "needless_is_error", **said)


# --- playing agent_turn on a scenario ---------------------------------------------------------------------

def agent_turn_checker(scenarios: list[Scenario]) -> Callable:
    """An agent_turn exercise's checker: its scenarios in order, one that never stops met by stopped_by_cap."""
    def check_agent_turn(agent_turn, report: Report) -> None:
        report.require_function(agent_turn, "agent_turn")
        for scenario in scenarios:
            (stopped_by_cap if scenario.replies is never_stops else run_scenario)(agent_turn, scenario, report)
    return check_agent_turn


def block_confusion(error, report: Report) -> None:
    """An AttributeError on a block (a text block has no .name...): the reply's blocks were taken by position."""
    if isinstance(error, AttributeError) and any(kind in str(error) for kind in BLOCK_TYPES):
        raise report.failure("block_confusion", error=error, where=learner_frame(error)) from None


def play_turn(agent_turn, scenario: Scenario, report: Report):
    """Play agent_turn once on a copy of the scenario's history (`given`); what it did, and the list it was handed."""
    messages = [dict(message) for message in scenario.given]
    turn = play(lambda client: agent_turn(client, messages, **scenario.options), scenario)
    block_confusion(turn.error, report)
    return turn, messages


def _gave_up(error) -> bool:
    """A RuntimeError of the learner's own (NotImplementedError and RecursionError are RuntimeErrors too)."""
    return isinstance(error, RuntimeError) and not isinstance(error, (NotImplementedError, RecursionError))


def run_scenario(agent_turn, scenario: Scenario, report: Report) -> None:
    """Run agent_turn on one scenario and verify its requests, its answer and the history it leaves."""
    report.enter(scenario.key)
    needed = len(scenario.replies)
    turn, messages = play_turn(agent_turn, scenario, report)
    reason = turn.last["stop_reason"] if turn.last else None
    if isinstance(turn.error, (TooManyCalls, anthropic.BadRequestError)) and len(turn.responses) >= needed:
        raise report.failure("called_again_after_cut" if reason == "max_tokens" else "called_again",
                             reason=reason, calls=turn.calls)
    if _gave_up(turn.error) and reason not in (None, "tool_use"):
        raise report.failure("raised_at_answer", error=turn.error, calls=turn.calls,
                             cap=scenario.options.get("max_iterations", DEFAULT_CAP))
    turn.reraise()
    for number, request in enumerate(turn.requests, start=1):
        names = [tool.get("name") for tool in request.get("tools", []) if isinstance(tool, dict)]
        report.require("calculator" in names, "no_calculator", number=number, names=names)
        report.require(request.get("model") == MODEL, "model", number=number, model=request.get("model"),
                       expected=MODEL)
        report.require(request.get("max_tokens") == MAX_TOKENS, "max_tokens_used", number=number,
                       value=request.get("max_tokens"), expected=MAX_TOKENS)
        if canonical_blocks(request.get("system")) != canonical_blocks(SYSTEM_PROMPT):
            raise report.failure("wrong_system" if request.get("system") else "no_system", number=number,
                                 system=short(request.get("system")))
    if turn.calls < needed:
        if reason == "tool_use":
            first = turn.last["content"][0]["type"]
            aside = report.words("first_block", first=first) if first != "tool_use" else ""
            raise report.failure("stopped_early", report.text(scenario.key).hint or None, made=turn.calls,
                                 needed=needed, first=aside)
        raise report.failure("call_count", made=turn.calls, needed=needed)
    answer = final_text(scenario.replies[-1]({"messages": []}))  # the text of the last scripted reply
    if turn.answer != answer:
        outputs = {run_tool(b["name"], b["input"]) for response in turn.responses for b in response["content"]
                   if b["type"] == "tool_use"}
        raise report.failure("raw_output" if turn.answer in outputs else "wrong_answer", answer=short(turn.answer),
                             expected=answer)
    compare_history(messages, expected_history(scenario.given, turn.responses), len(scenario.given), report)
    report.note("scenario_passed", made=turn.calls)


def never_stopping(cap: int | None, call_limit: int = 25) -> Scenario:
    """A model that never stops, met with max_iterations=cap (None: the default); it answers `call_limit` calls."""
    return Scenario("never_stops" if cap else "never_stops_default", never_stops, [START],
                    options={"max_iterations": cap} if cap else {}, call_limit=call_limit)


def stopped_by_cap(agent_turn, scenario: Scenario, report: Report) -> None:
    """A model that never stops: agent_turn must stop after max_iterations calls, history valid, and raise."""
    cap = scenario.options.get("max_iterations")
    limit = cap or DEFAULT_CAP
    report.enter(scenario.key, cap=cap)
    turn, messages = play_turn(agent_turn, scenario, report)
    said = dict(calls=turn.calls, limit=limit, over=scenario.call_limit)
    if isinstance(turn.error, TooManyCalls):
        raise report.failure("cap_never_stopped", **said)
    if turn.error is None:
        raise report.failure("cap_returned", answer=short(turn.answer), **said)
    if not _gave_up(turn.error):
        turn.reraise()
    report.require(turn.calls == limit, "cap_calls", **said)
    report.require(str(limit) in str(turn.error), "cap_named", said=str(turn.error), limit=limit)
    violation = check_request({"messages": to_wire(list(messages))})
    report.require(violation is None, "cap_history", violation=violation.message if violation else "")
    compare_history(messages, expected_history([START], turn.responses), 1, report)
    report.note("cap_passed", limit=limit)


# --- the history, compared message by message -------------------------------------------------------------

def expected_history(history: list, responses: list[dict]) -> list:
    """What messages should hold after the turn: each reply verbatim, then its results, in wire form."""
    expected = to_wire(list(history))
    for response in responses:
        expected.append({"role": "assistant", "content": response["content"]})
        if response["stop_reason"] == "tool_use":
            calls = [SimpleNamespace(**block) for block in response["content"] if block["type"] == "tool_use"]
            results = [tool_result(call, run_tool(call.name, call.input)) for call in calls]  # the course's own
            expected.append({"role": "user", "content": results})
    return expected


def kinds(content, report: Report) -> str:
    """The block types of a message's content, e.g. '[text, tool_use]'."""
    if isinstance(content, str):
        return report.words("kinds_string" if len(content) < 60 else "kinds_long_string", content=content)
    if not isinstance(content, list):
        return repr(content)
    return "[" + ", ".join(str(block.get("type") if isinstance(block, dict) else type(block).__name__)
                           for block in content) + "]"


def outline(history: list, report: Report) -> str:
    """A history in a few words: question, reply [text, tool_use], results [tool_result], ..."""
    parts = []
    for message in history:
        content = message.get("content")
        if message.get("role") == "assistant":
            parts.append(report.words("outline_reply", kinds=kinds(content, report)))
        elif any(isinstance(b, dict) and b.get("type") == "tool_result" for b in content or []):
            parts.append(report.words("outline_results", kinds=kinds(content, report)))
        else:
            parts.append(report.words("outline_question"))
    return ", ".join(parts)


def outline_with_ids(messages: list, report: Report) -> str:
    """A history in one line: who said what, with the ids, so a failure shows the case at a glance."""
    parts = []
    for index, message in enumerate(to_wire(messages)):
        content = message.get("content")
        blocks = [] if isinstance(content, str) else content
        what = [report.words("outline_call", id=b.get("id")) if b.get("type") == "tool_use"
                else report.words("outline_result", id=b.get("tool_use_id")) if b.get("type") == "tool_result"
                else str(b.get("type")) for b in blocks]
        what = ", ".join(what) if blocks or not isinstance(content, str) else report.words("outline_text")
        parts.append(report.words("outline_message", index=index, role=message.get("role"), what=what))
    return " · ".join(parts)


def _canonical(message) -> dict:
    if not isinstance(message, dict):
        return {"not_a_message": repr(message)}
    return {"role": message.get("role"), "content": canonical_blocks(message.get("content"))}


def _without_flag(blocks: list) -> list:
    return [{k: v for k, v in b.items() if k != "is_error"} if isinstance(b, dict) else b for b in blocks]


def compare_history(actual: list, expected: list, start: int, report: Report) -> None:
    """Stop at the first message that differs from the expected history, saying how in plain words."""
    wire = to_wire(list(actual))
    shape = dict(count=len(wire), needed=len(expected), start=start, outline=outline(expected, report))
    report.require(len(wire) > start or len(expected) <= start, "not_in_place", **shape)
    for index, (mine, wanted) in enumerate(zip_longest(wire, expected)):
        if mine is None:
            last = wanted["role"] == "assistant" and index == len(expected) - 1
            raise report.failure("last_reply_missing" if last else "history_short", **shape)
        if wanted is None:
            raise report.failure("history_long", index=index, extra=short(mine), **shape)
        if _canonical(mine) == _canonical(wanted):
            continue
        role = mine.get("role") if isinstance(mine, dict) else None
        said = dict(index=index, mine=short(mine))
        report.require(index >= start, "history_changed", **said)
        if wanted["role"] == "assistant":
            report.require(role == "assistant", "not_a_reply", **said)
            raise report.failure("reply_changed", wanted=", ".join(b["type"] for b in wanted["content"]),
                                 kinds=kinds(mine.get("content"), report), number=(index - start) // 2 + 1,
                                 yours=outline_with_ids([mine], report).removeprefix("[0] "), **said)
        wanted_blocks, my_blocks = canonical_blocks(wanted["content"]), canonical_blocks(mine.get("content"))
        if role == "user" and isinstance(my_blocks, list) and len(my_blocks) == len(wanted_blocks):
            report.require(_without_flag(my_blocks) != _without_flag(wanted_blocks), "history_is_error",
                           content=short(mine.get("content")), **said)
        if role == "user" and isinstance(mine.get("content"), list):
            calls = [block for block in expected[index - 1]["content"] if block["type"] == "tool_use"]
            results = [b for b in to_wire(mine["content"]) if isinstance(b, dict) and b.get("type") == "tool_result"]
            verify_results(calls, results, report, report.words("results_where", index=index))
        raise report.failure("history_results", before=index - 1, wanted=short(wanted), **said)
