"""Checks for notebook 6, when calls go wrong: run_tool for every failure, agent_turn flagging only failures,
and the repeat guard.

While these checks run, the notebook's TOOL_REGISTRY is the course's with two tools that fail on purpose
(looplab.robust.CHECKED_REGISTRY, swapped in as every earlier piece is): `explode` raises RuntimeError('boom'),
`shout` has a TypeError bug of its own. So the learner's run_tool meets every kind of failure, in-process and
under the grader alike. The words a learner's texts must hold are the ones the prose gives (`Error: `,
`Error: unknown tool`, `Error: bad arguments for '<name>'`, `must be an object`, the exception's type and
message); the rest of each text is the learner's own.
"""

import copy
import itertools
from dataclasses import dataclass
from typing import Any

from .. import conversation
from ..catalogue import catalogue
from ..history import to_wire
from ..loop import MAX_TOKENS
from ..model_id import MODEL
from ..robust import CHECKED_REGISTRY, TOOL_REGISTRY, run_tool as course_run_tool
from ..rules import check_request
from ..scripted import TooManyCalls, calculator as calc, reply, text, tool_use
from . import turns
from .core import Failure, Report, Scenario, learner_frame, play
from .difference import shown

OWN_TEXTS, HINTS = catalogue(__file__)  # texts/notebook6.toml
TEXTS = {**turns.TEXTS, **OWN_TEXTS}  # the cap is played by notebook 2's harness, in its words
START = {"role": "user", "content": "Please use your tools."}
NEXT_LINE = {"role": "user", "content": "Thanks. Next question."}
# The words the prose asks run_tool's texts to start with, or to hold.
ERROR = "Error: "
UNKNOWN_START = ERROR + "unknown tool"
BAD_ARGUMENTS_START = ERROR + "bad arguments for {name!r}"
BAD_ARGUMENTS = ERROR + "bad arguments"
NOT_AN_OBJECT_WORDS = "must be an object"
CALL_SHOWN = "run_tool({name!r}, {tool_input!r})"


# --- 6.1 run_tool ----------------------------------------------------------------------------------------

OK, UNKNOWN, ARGUMENTS, NOT_AN_OBJECT, RAISED = "ok", "unknown", "bad_arguments", "not_an_object", "raised"


@dataclass(frozen=True)
class Call:
    """One call of run_tool: its row, what it is handed, what kind of answer it must give (and the exception's
    words a raised tool's text must hold)."""

    key: str
    name: Any
    tool_input: Any
    kind: str
    names: str = ""


RUN_TOOL_CALLS = [
    Call("succeeds", "calculator", {"expression": "2 + 3"}, OK),
    Call("weather", "get_weather", {"city": "Paris"}, OK),
    Call("no_data", "get_weather", {"city": "Atlantis"}, OK),
    Call("unknown", "teleporter", {"destination": "Mars"}, UNKNOWN),
    Call("wrong_key", "get_weather", {"town": "Paris"}, ARGUMENTS),
    Call("missing_key", "calculator", {}, ARGUMENTS),
    Call("extra_key", "calculator", {"expression": "1 + 1", "precision": 2}, ARGUMENTS),
    Call("a_string", "get_weather", "Paris", NOT_AN_OBJECT),
    Call("a_list", "calculator", ["1 + 1"], NOT_AN_OBJECT),
    Call("divides_by_zero", "calculator", {"expression": "1 / 0"}, RAISED, "ZeroDivisionError"),
    Call("not_arithmetic", "calculator", {"expression": "2 ** 8"}, RAISED, "ValueError"),
    Call("explodes", "explode", {}, RAISED, "RuntimeError: boom"),
    Call("type_error_inside", "shout", {"text": "hi"}, RAISED, "TypeError"),
]


def check_run_tool(run_tool, report: Report) -> None:
    report.require_function(run_tool, "run_tool")
    for case in RUN_TOOL_CALLS:
        try:
            _run_tool_once(run_tool, case, report)
        except Failure as failure:  # a tool the check added: the course's own run_tool, if called, never sees it
            failure.course_code_blind = case.name not in TOOL_REGISTRY
            raise
    report.note("run_tool_ok")


def _run_tool_once(run_tool, case: Call, report: Report) -> None:
    """One call of run_tool, and what its pair must be."""
    report.enter(case.key, call=CALL_SHOWN.format(name=case.name, tool_input=case.tool_input))
    try:  # its own copy of the input: what the learner's code does to it never reaches the table (core.Scenario)
        value = run_tool(case.name, copy.deepcopy(case.tool_input))
    except NotImplementedError:
        raise
    except Exception as error:
        raise report.failure("run_tool_raised", report.text(case.key).hint or None,
                             error=f"{type(error).__name__}: {error}", where=learner_frame(error)) from None
    report.require(type(value) is tuple and len(value) == 2, "not_a_pair", value=shown(value))
    said, flag = value
    report.require(type(said) is str and type(flag) is bool, "pair_types", value=shown(value))
    if case.kind == OK:
        expected = str(CHECKED_REGISTRY[case.name]["function"](**case.tool_input))
        report.require(value == (expected, False), "wrong_success", value=shown(value),
                       expected=shown((expected, False)))
        return
    report.require(flag is True, "not_flagged", value=shown(value))
    report.require(said.startswith(ERROR), "no_error_prefix", value=shown(said))
    if case.kind == UNKNOWN:
        report.require(said.startswith(UNKNOWN_START), "unknown_text", value=shown(said))
    elif case.kind in (ARGUMENTS, NOT_AN_OBJECT):
        start = BAD_ARGUMENTS_START.format(name=case.name)
        report.require(said.startswith(start), "bad_arguments_text", value=shown(said), start=start)
        report.require(case.kind != NOT_AN_OBJECT or NOT_AN_OBJECT_WORDS in said, "object_text",
                       value=shown(said))
    else:
        report.require(not said.startswith(BAD_ARGUMENTS), "called_bad_arguments", value=shown(said))
        report.require(case.names in said, "exception_not_named", value=shown(said), names=case.names)


# --- 6.2 and 6.3 agent_turn ---------------------------------------------------------------------------------

FLAGGED_SCENARIOS = [  # Scenario(key, the model's replies): the history given is [START]
    Scenario("good_call", [reply(calc("2 + 3")), reply(text("2 + 3 = 5."))]),
    Scenario("no_weather_data", [reply(tool_use("get_weather", {"city": "Atlantis"})),
                                 reply(text("There is no weather data for Atlantis."))]),
    Scenario("unknown_tool", [reply(tool_use("teleporter", {"destination": "Mars"})),
                              reply(text("I have no way to teleport you."))]),
    Scenario("bad_arguments", [reply(tool_use("get_weather", {"town": "Paris"})), reply(text("I could not check."))]),
    Scenario("tool_raises", [reply(text("Let me compute."), calc("1 / 0")), reply(text("1 / 0 has no answer."))]),
    Scenario("good_and_bad", [reply(calc("6 * 7"), tool_use("get_weather", {"town": "Paris"})),
                              reply(text("6 * 7 = 42; the weather failed."))]),
    Scenario("recovers", [reply(tool_use("get_weather", {"town": "Tokyo"})),
                          reply(text("Trying again with city."), tool_use("get_weather", {"city": "Tokyo"})),
                          reply(text("Clear skies in Tokyo."))]),
]
GUARD_KEEPS = [  # what a repeat guard must let through
    Scenario("same_call_succeeds_twice", [reply(calc("2 + 2")), reply(calc("2 + 2")), reply(text("2 + 2 = 4."))]),
    Scenario("different_failures", [reply(tool_use("get_weather", {"town": "Paris"})),
                                    reply(tool_use("get_weather", {"place": "Paris"})),
                                    reply(tool_use("get_weather", {"city": "Paris"})),
                                    reply(text("18°C in Paris."))]),
]
STUCK_CALL = tool_use("get_weather", {"town": "Paris"})
STUCK_CAP = 10
STUCK_REPLY = reply(text("Let me check."), STUCK_CALL)
STUCK_SHOWN = f"{STUCK_CALL['name']}({STUCK_CALL['input']!r})"


def _stubborn():
    """A model that sends the same failing call forever."""
    return (STUCK_REPLY for _ in itertools.count())


STUBBORN = Scenario("stubborn", _stubborn, call_limit=STUCK_CAP, options={"max_iterations": STUCK_CAP})


def _played(agent_turn, scenario: Scenario, report: Report):
    """agent_turn on [START] with the scenario's model; what it did, and the history it left."""
    messages = [dict(START)]
    turn = play(lambda client: agent_turn(client, messages, **scenario.options), scenario)
    turns.block_confusion(turn.error, report)
    return turn, messages


def _survived(turn, report: Report) -> None:
    """Nothing a tool did may end the turn: the API's 400 and the learner's own exceptions, in words."""
    turns.refused(turn, report)
    error = turn.error
    if error is not None and not isinstance(error, (NotImplementedError, TooManyCalls)):
        raise report.failure("turn_raised", error=f"{type(error).__name__}: {error}", where=learner_frame(error))
    turn.reraise()


def _verify_results(turn, report: Report) -> None:
    """Each request after a tool_use reply ends with its results: one per call, the course's text, flagged
    exactly when the call failed (`"is_error": True`; the key absent on success)."""
    for number, (response, request) in enumerate(zip(turn.responses, turn.requests[1:]), start=2):
        calls = [block for block in response["content"] if block["type"] == "tool_use"]
        last = request["messages"][-1]
        content = last.get("content") if isinstance(last.get("content"), list) else []
        results = {block.get("tool_use_id"): block for block in content
                   if isinstance(block, dict) and block.get("type") == "tool_result"}
        for call in calls:
            where = dict(number=number, call=f"{call['name']}({call['input']!r})")
            result = results.get(call["id"])
            report.require(result is not None, "result_missing", content=shown(content), **where)
            expected, failed = course_run_tool(call["name"], call["input"])
            said = turns.result_text(result.get("content"))
            report.require(said == expected, "result_text", said=shown(said), expected=shown(expected), **where)
            if failed:
                report.require(result.get("is_error") is True, "failure_not_flagged",
                               flag=shown(result.get("is_error", "absent")), **where)
            else:
                report.require("is_error" not in result, "success_flagged", flag=shown(result["is_error"]) if
                               "is_error" in result else "", **where)


def _flagged_turn(agent_turn, scenario: Scenario, report: Report) -> None:
    """Play one scenario: every call answered, only failures flagged, the model called once a reply, its words
    returned."""
    report.enter(scenario.key)
    turn, messages = _played(agent_turn, scenario, report)
    if isinstance(turn.error, TooManyCalls):
        raise report.failure("turn_called_again", calls=len(scenario.replies))
    _survived(turn, report)
    names = [tool.get("name") for tool in turn.requests[0].get("tools", []) if isinstance(tool, dict)]
    report.require("get_weather" in names and turn.requests[0].get("model") == MODEL
                   and turn.requests[0].get("max_tokens") == MAX_TOKENS, "turn_settings", names=names,
                   model=turn.requests[0].get("model"), max_tokens=turn.requests[0].get("max_tokens"),
                   expected_model=MODEL, expected_tokens=MAX_TOKENS)
    report.require(turn.calls == len(scenario.replies), "turn_stopped_early", calls=turn.calls,
                   needed=len(scenario.replies), answer=shown(turn.answer))
    _verify_results(turn, report)
    expected = turns.final_text(turn.last)
    report.require(turn.answer == expected, "turn_wrong_answer", answer=shown(turn.answer), expected=shown(expected))
    _history_valid(messages, report)
    report.note("scenario_ok")


def _history_valid(messages: list, report: Report) -> None:
    """The history left behind, with the next line of the conversation after it, is one the API accepts."""
    violation = check_request({"model": MODEL, "max_tokens": MAX_TOKENS, "messages": to_wire(messages) + [NEXT_LINE]})
    report.require(violation is None, "history_invalid", violation=violation.message if violation else "")


def _stopped_at_repeat(agent_turn, report: Report) -> None:
    """The stubborn model: stopped at its first repeat (2 calls), a line naming the tool, no call left unanswered."""
    report.enter(STUBBORN.key, call=STUCK_SHOWN)
    turn, messages = _played(agent_turn, STUBBORN, report)
    if isinstance(turn.error, (TooManyCalls, RuntimeError)) and not isinstance(turn.error, (NotImplementedError,
                                                                                          RecursionError)):
        raise report.failure("no_guard", calls=turn.calls, cap=STUCK_CAP)
    _survived(turn, report)
    report.require(turn.calls == 2, "guard_calls", calls=turn.calls)
    report.require(isinstance(turn.answer, str) and STUCK_CALL["name"] in turn.answer, "guard_line",
                   answer=shown(turn.answer), name=STUCK_CALL["name"])
    history = to_wire(messages)
    unanswered = [use.id for use in conversation.read(history).unanswered]
    report.require(not unanswered, "guard_dangling", ids=shown(unanswered))
    _history_valid(messages, report)
    report.note("guard_ok")


def check_flagged_turn(agent_turn, report: Report) -> None:
    report.require_function(agent_turn, "agent_turn")
    for scenario in FLAGGED_SCENARIOS:
        _flagged_turn(agent_turn, scenario, report)
    turns.stopped_by_cap(agent_turn, turns.never_stopping(3, call_limit=4), report)


def check_repeat_guard(agent_turn, report: Report) -> None:
    report.require_function(agent_turn, "agent_turn")
    _stopped_at_repeat(agent_turn, report)
    for scenario in GUARD_KEEPS + FLAGGED_SCENARIOS:
        _flagged_turn(agent_turn, scenario, report)


CHECKERS = {"6.1": check_run_tool, "6.2": check_flagged_turn, "6.3": check_repeat_guard}
