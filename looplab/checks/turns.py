"""One harness for every check of agent_turn (2.2, 2.3, 3.3) and of the results it sends (3.1).

A scenario's replies and history (`given`) say what agent_turn should do: call the model once a reply,
keep each reply verbatim, answer each round of calls with ONE user message of results, return the
last reply's text. Where notebook 3 words a failure differently, its catalogue's row replaces this one's.

The history is compared the way the API reads it, no stricter: the results of a round in any order
(each names its call by id), and any text after them; a failure names the first difference that is
left, with its path (difference.py).

Notebook 5 plays the same harness with its toolbox on offer (`with toolbox(run_tool, names):`): the
outputs expected are then that run_tool's, and every request must offer every tool of the registry.
"""

import contextlib
import json
from contextvars import ContextVar
from itertools import zip_longest
from types import SimpleNamespace
from typing import Any, Callable

import anthropic

from ..catalogue import catalogue
from ..history import to_wire
from ..loop import MAX_TOKENS, system_prompt, tool_result
from ..model_id import MODEL
from ..recordings import canonical_blocks
from ..rules import check_request
from ..scripted import TooManyCalls, never_stops, said
from ..tools import is_error, run_tool
from .core import Report, Scenario, explain, learner_frame, play
from .difference import ABSENT, Difference, first_difference, shown

# The question a history opens with, in the check's language (a Scenario's `given` says it in its words when read).
START = {"role": "user", "content": said("What is 4823 × 1979?", fr="Combien font 4823 × 1979 ?")}
DEFAULT_CAP = 10
BLOCK_TYPES = ("TextBlock", "ThinkingBlock", "ToolUseBlock")  # SDK classes, in the AttributeError
MESSAGE_FIELDS = ("role", "content")  # all a message of the history may hold

TEXTS, _ = catalogue(__file__)  # the words of these checks: texts/turns.toml

# The tools a check plays with: (run_tool, the names every request must offer); None: notebook 1's calculator.
# A context variable, so that checks judged at once in several threads (the grader) never see each other's.
_TOOLBOX: ContextVar = ContextVar("looplab_checks_toolbox", default=None)


@contextlib.contextmanager
def toolbox(run: Callable[[str, Any], str], names: tuple[str, ...]):
    """While the block lasts, the harness expects these tools: `run` gives each call's output, and every request
    offers every one of `names` (notebook 5's registry)."""
    token = _TOOLBOX.set((run, tuple(names)))
    try:
        yield
    finally:
        _TOOLBOX.reset(token)


def _output(name: Any, tool_input: Any) -> str:
    """What the course's run_tool says to a call: notebook 1's, or the toolbox's of the check in progress."""
    box = _TOOLBOX.get()
    return (box[0] if box else run_tool)(name, tool_input)


def final_text(response: dict) -> str:
    return "".join(block["text"] for block in response["content"] if block["type"] == "text")


def result_text(content):
    """A tool_result's content as the text the model reads: a string, or its text blocks joined."""
    if isinstance(content, list) and all(isinstance(b, dict) and b.get("type") == "text" for b in content):
        return "".join(b.get("text", "") for b in content)
    return content


def verify_results(calls: list[dict], results, report: Report, where: str, path: str) -> None:
    """One tool_result per call, each citing a call's id and holding THAT call's output; order free.

    `where` names the situation, `path` where the results sit (`messages[2].content`, or what run_tools
    returned), so that each failure points at the result at fault: `messages[2].content[1].tool_use_id`.
    """
    report.require(isinstance(results, list), "results_not_list", where=where, kind=type(results).__name__)
    results = to_wire(results)
    ids = [call["id"] for call in calls]
    cited = [result.get("tool_use_id", ABSENT) if isinstance(result, dict) else ABSENT for result in results]
    report.require(len(results) == len(calls), "results_count", where=where, path=path, count=len(results),
                   calls=len(calls), ids=shown(ids), cited=shown(cited))
    by_id = {call["id"]: call for call in calls}
    answered: dict[str, dict] = {}
    at: dict[str, str] = {}  # each call's id -> the path of the result that cites it
    for index, result in enumerate(results):
        here = f"{path}[{index}]"
        report.require(isinstance(result, dict) and result.get("type") == "tool_result", "not_a_result",
                       where=where, at=here, result=shown(result))
        tool_id = result.get("tool_use_id")
        report.require(isinstance(tool_id, str) and tool_id in by_id, "unknown_id", where=where, at=here,
                       tool_id=shown(tool_id), ids=shown(ids))
        report.require(tool_id not in answered, "cited_twice", where=where, at=here, tool_id=tool_id,
                       first=at.get(tool_id))
        answered[tool_id], at[tool_id] = result, here
    for call in calls:
        result, expected, here = answered[call["id"]], _output(call.get("name"), call.get("input")), at[call["id"]]
        said = dict(where=where, tool_id=call["id"], expected=expected,
                    call=f"{call.get('name')}({json.dumps(call.get('input'), ensure_ascii=False)})")
        content = result_text(result.get("content", ABSENT))
        report.require(content == expected, "wrong_output",
                       difference=str(Difference(f"{here}.content", content, expected)), **said)
        flag = result.get("is_error", ABSENT)
        if is_error(expected):
            report.require(flag is True, "needs_is_error", difference=str(Difference(f"{here}.is_error", flag, True)),
                           **said)
        else:
            report.require(not result.get("is_error"), "needless_is_error",
                           difference=str(Difference(f"{here}.is_error", flag, ABSENT)), **said)


# --- playing agent_turn on a scenario ---------------------------------------------------------------------

def agent_turn_checker(scenarios: list[Scenario]) -> Callable:
    """An agent_turn exercise's checker: its scenarios in order, one that never stops met by stopped_by_cap."""
    def check_agent_turn(agent_turn, report: Report) -> None:
        report.require_function(agent_turn, "agent_turn")
        for scenario in scenarios:
            (stopped_by_cap if scenario.replies is never_stops else run_scenario)(agent_turn, scenario, report)
    return check_agent_turn


class Watched(list):
    """The list agent_turn is handed: it notes whether the code took a message out of it, so that a history
    found short says so, rather than "don't build a new list" to a learner who popped from this very list."""

    removed = False

    def _removing(self) -> None:
        self.removed = True

    def pop(self, *args):
        self._removing()
        return super().pop(*args)

    def remove(self, value) -> None:
        self._removing()
        super().remove(value)

    def clear(self) -> None:
        self._removing()
        super().clear()

    def __delitem__(self, key) -> None:
        self._removing()
        super().__delitem__(key)

    def __setitem__(self, key, value) -> None:
        before = len(self)
        super().__setitem__(key, value)
        if len(self) < before:
            self._removing()


def block_confusion(error, report: Report) -> None:
    """An AttributeError on a block (a text block has no .name...): the reply's blocks were taken by position."""
    if isinstance(error, AttributeError) and any(kind in str(error) for kind in BLOCK_TYPES):
        raise report.failure("block_confusion", error=error, where=learner_frame(error)) from None


def play_turn(agent_turn, scenario: Scenario, report: Report):
    """Play agent_turn once on a copy of the scenario's history (`given`); what it did, and the list it was handed."""
    messages = Watched(dict(message) for message in scenario.given)
    turn = play(lambda client: agent_turn(client, messages, **scenario.options), scenario)
    block_confusion(turn.error, report)
    return turn, messages


def refused(turn, report: Report) -> None:
    """The API's 400, in the scenario's words, with the hint of the rule the request broke (the scenario's own
    hint is about something else). An empty results message gets its cause named: no tool_use block found."""
    if not isinstance(turn.error, anthropic.BadRequestError):
        return
    messages = turn.requests[-1].get("messages", []) if turn.requests else []
    for index, (before, message) in enumerate(zip(messages, messages[1:]), start=1):
        if not (isinstance(before, dict) and isinstance(message, dict) and isinstance(before.get("content"), list)):
            continue
        calls = [b.get("id") for b in before["content"] if isinstance(b, dict) and b.get("type") == "tool_use"]
        if calls and before.get("role") == "assistant" and message.get("content") == []:
            raise report.failure("results_empty", index=index, before=index - 1, ids=shown(calls),
                                 message=turn.error.api_message)
    raise report.failure("turn_rejected", explain(turn.error).hint, message=turn.error.api_message)


def _gave_up(error) -> bool:
    """A RuntimeError of the learner's own (NotImplementedError and RecursionError are RuntimeErrors too)."""
    return isinstance(error, RuntimeError) and not isinstance(error, (NotImplementedError, RecursionError))


def verify_requests(turn, report: Report, system: str | None = None, tools: tuple[str, ...] | None = None) -> None:
    """Every request: its tools, MODEL, MAX_TOKENS and the system prompt, as the exercise says. The tools: exactly
    `tools` when the scenario names them, else the calculator among them (and every tool of a toolbox); the system
    prompt: the scenario's own when it hands agent_turn one (`system=...`), else SYSTEM_PROMPT."""
    box = _TOOLBOX.get()
    offered = tools if tools is not None else box[1] if box else None
    for number, request in enumerate(turn.requests, start=1):
        names = [tool.get("name") for tool in request.get("tools", []) if isinstance(tool, dict)]
        if offered is None:
            report.require("calculator" in names, "no_calculator", number=number, names=names)
        else:
            report.require(sorted(map(str, names)) == sorted(offered), "not_every_tool", number=number, names=names,
                           expected=list(offered))
        report.require(request.get("model") == MODEL, "model", number=number, model=request.get("model"),
                       expected=MODEL)
        report.require(request.get("max_tokens") == MAX_TOKENS, "max_tokens_used", number=number,
                       value=request.get("max_tokens"), expected=MAX_TOKENS)
        sent = request.get("system", ABSENT)
        # the prompt in the notebook's language: the grader judges English and French notebooks alike
        expected = system_prompt() if system is None else system
        difference = first_difference(_plain(canonical_blocks(sent)), expected, "system")
        if difference:
            key = "no_system" if sent is ABSENT else "wrong_system" if system is None else "system_ignored"
            raise report.failure(key, number=number, difference=str(difference))


def run_scenario(agent_turn, scenario: Scenario, report: Report) -> None:
    """Run agent_turn on one scenario and verify its requests, its answer and the history it leaves."""
    report.enter(scenario.key)
    needed = len(scenario.replies)
    turn, messages = play_turn(agent_turn, scenario, report)
    reason = turn.last["stop_reason"] if turn.last else None
    if isinstance(turn.error, (TooManyCalls, anthropic.BadRequestError)) and len(turn.responses) >= needed:
        raise report.failure("called_again_after_cut" if reason == "max_tokens" else "called_again",
                             reason=reason, calls=turn.calls, answered=len(turn.responses))
    if _gave_up(turn.error) and reason not in (None, "tool_use"):
        raise report.failure("raised_at_answer", error=turn.error, calls=turn.calls,
                             cap=scenario.options.get("max_iterations", DEFAULT_CAP))
    refused(turn, report)
    turn.reraise()
    verify_requests(turn, report, scenario.options.get("system"), scenario.tools)
    if turn.calls < needed:
        if reason == "tool_use":
            first = turn.last["content"][0]["type"]
            aside = report.words("first_block", first=first) if first != "tool_use" else ""
            raise report.failure("stopped_early", made=turn.calls,
                                 needed=needed, first=aside, answer=shown(turn.answer))
        raise report.failure("call_count", made=turn.calls, needed=needed, answer=shown(turn.answer))
    answer = final_text(scenario.replies[-1]({"messages": []}))  # the text of the last scripted reply
    if turn.answer != answer:
        outputs = {_output(b["name"], b["input"]) for response in turn.responses for b in response["content"]
                   if b["type"] == "tool_use"}
        raw = isinstance(turn.answer, str) and turn.answer in outputs  # a tool's output returned as the answer
        raise report.failure("raw_output" if raw else "wrong_answer", answer=shown(turn.answer),
                             expected=answer)
    given = scenario.given
    if scenario.history is None:  # the history handed in, kept word for word, then the turn's messages
        compare_history(messages, expected_history(given, turn.responses), len(given), report, messages.removed)
    else:  # the scenario's own: a loop may rewrite what it was handed (a summary in place of old turns)
        compare_history(messages, scenario.history(given, turn.responses), 0, report)
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
        raise report.failure("cap_returned", answer=shown(turn.answer), **said)
    refused(turn, report)
    if not _gave_up(turn.error):
        if not isinstance(turn.error, (NotImplementedError, RecursionError)):
            raise report.failure("cap_wrong_error", error=f"{type(turn.error).__name__}: {turn.error}", **said)
        turn.reraise()
    report.require(turn.calls == limit, "cap_calls", **said)
    report.require(str(limit) in str(turn.error), "cap_named", said=str(turn.error), limit=limit)
    violation = check_request({"messages": to_wire(list(messages))})
    report.require(violation is None, "cap_history", violation=violation.message if violation else "")
    given = scenario.given  # [START], in the check's language
    compare_history(messages, expected_history(given, turn.responses), len(given), report, messages.removed)
    report.note("cap_passed", limit=limit)


# --- the history, compared message by message -------------------------------------------------------------

def expected_history(history: list, responses: list[dict]) -> list:
    """What messages should hold after the turn: each reply verbatim, then its results, in wire form."""
    expected = to_wire(list(history))
    for response in responses:
        expected.append({"role": "assistant", "content": response["content"]})
        if response["stop_reason"] == "tool_use":
            calls = [SimpleNamespace(**block) for block in response["content"] if block["type"] == "tool_use"]
            results = [tool_result(call, _output(call.name, call.input)) for call in calls]  # the course's own
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


def _plain(blocks: Any) -> Any:
    """Canonical blocks, a lone text block written as its string (as the API reads both), in results too."""
    if not isinstance(blocks, list):
        return blocks
    blocks = [{**block, "content": _plain(block["content"])}
              if isinstance(block, dict) and block.get("type") == "tool_result" and "content" in block else block
              for block in blocks]
    if len(blocks) == 1 and isinstance(blocks[0], dict) and set(blocks[0]) == {"type", "text"} \
            and blocks[0]["type"] == "text":
        return blocks[0]["text"]
    return blocks


def _results(blocks: list) -> list:
    """The results that open a message: what the API reads as the answers to the calls before it."""
    count = 0
    while count < len(blocks) and isinstance(blocks[count], dict) and blocks[count].get("type") == "tool_result":
        count += 1
    return blocks[:count]


def _matched_by_id(yours: list, expected: list) -> list:
    """The expected results in your order: each put where yours cites its id (the API matches them by id);
    those you did not cite fill the other places, in order (ABSENT where none is left), the rest at the end."""
    by_id = {result["tool_use_id"]: result for result in expected}
    cited = [result.get("tool_use_id") if isinstance(result, dict) else None for result in yours]
    placed = [by_id.pop(tool_id, None) if isinstance(tool_id, str) else None for tool_id in cited]
    left = [result for result in expected if result["tool_use_id"] in by_id]
    return [result if result is not None else (left.pop(0) if left else ABSENT) for result in placed] + left


def compared(mine: Any, wanted: dict) -> tuple[Any, dict]:
    """One message and the expected one, both in the form the API compares: each block's meaningful fields;
    in a results message, the results in your order (each names its call) and any text after them left out
    (the API takes it). A field a message does not define stays, so that it shows as a difference."""
    wanted = {**wanted, "content": _plain(canonical_blocks(wanted["content"]))}
    if not isinstance(mine, dict):
        return mine, wanted
    mine = {**mine, "content": canonical_blocks(mine["content"])} if "content" in mine else dict(mine)
    content = mine.get("content")
    if wanted["role"] == "user" and isinstance(wanted["content"], list) and isinstance(content, list):
        results = _results(content)
        if results and all(isinstance(block, dict) and block.get("type") == "text" for block in content[len(results):]):
            mine["content"] = results
        wanted["content"] = _matched_by_id(_results(mine["content"]), wanted["content"])
    if "content" in mine:
        mine["content"] = _plain(mine["content"])
    return mine, wanted


def _without_flag(blocks: Any) -> Any:
    if not isinstance(blocks, list):
        return blocks
    return [{k: v for k, v in b.items() if k != "is_error"} if isinstance(b, dict) else b for b in blocks]


def compare_history(actual: list, expected: list, start: int, report: Report, removed: bool = False) -> None:
    """Stop at the first message that differs from the expected history, naming the first difference."""
    wire = to_wire(list(actual))
    shape = dict(count=len(wire), needed=len(expected), start=start, outline=outline(expected, report))
    for index, (mine, wanted) in enumerate(zip_longest(wire, expected, fillvalue=ABSENT)):
        if mine is ABSENT or wanted is ABSENT:  # one list is longer: the first message the other lacks
            gap = str(first_difference(mine, wanted, f"messages[{index}]"))
        if mine is ABSENT:
            report.require(not removed, "removed", difference=gap, **shape)
            report.require(len(wire) > start, "not_in_place", difference=gap, **shape)
            last = wanted["role"] == "assistant" and index == len(expected) - 1
            raise report.failure("last_reply_missing" if last else "history_short", difference=gap, **shape)
        if wanted is ABSENT:
            raise report.failure("history_long", index=index, difference=gap, **shape)
        yours, theirs = compared(mine, wanted)
        difference = first_difference(yours, theirs, f"messages[{index}]")
        if difference is None:
            continue
        said = dict(index=index, difference=str(difference))
        report.require(index >= start, "history_changed", **said)
        fields = [key for key in yours if key not in MESSAGE_FIELDS] if isinstance(yours, dict) else []
        report.require(not fields, "message_fields", field=fields[0] if fields else "", **said)
        role = yours.get("role") if isinstance(yours, dict) else None
        if wanted["role"] == "assistant":
            report.require(role == "assistant", "not_a_reply", **said)
            raise report.failure("reply_changed", wanted=", ".join(b["type"] for b in wanted["content"]),
                                 kinds=kinds(mine.get("content"), report), number=(index - start) // 2 + 1, **said)
        if role == "user" and isinstance(yours.get("content"), list):
            report.require(_without_flag(yours["content"]) != _without_flag(theirs["content"]), "history_is_error",
                           **said)
            calls = [block for block in expected[index - 1]["content"] if block["type"] == "tool_use"]
            verify_results(calls, _results(to_wire(mine["content"])), report, report.situation,
                           f"messages[{index}].content")
        raise report.failure("history_results", before=index - 1, **said)
