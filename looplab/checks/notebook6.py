"""Checks for notebook 6, when calls go wrong: run_tool for every failure, agent_turn flagging only failures,
and the repeat guard.

While these checks run, the notebook's TOOL_REGISTRY is the course's with tools of the checks' own
(looplab.robust.CHECKED_REGISTRY, swapped in by each exercise's `checked_with`, looplab/course.py): one raises RuntimeError('boom'), one has
a TypeError bug, one raises KeyError from inside, one returns a number, one succeeds with a text that starts with
"Error: ", one is swapped for another function in the registry each time it runs, and one fails numbering its
runs (so that a call run again shows). So the learner's run_tool meets every kind of failure, in-process and under
the grader alike; the course's run_tool, which 6.2 and 6.3 lean on, knows them too. The words a learner's texts
must hold are the ones the prose gives (`Error: `, `Error: unknown tool`, `Error: bad arguments for '<name>'`,
`must be an object`, the exception as `Type: message`); the rest of each text is the learner's own.
"""

import copy
import itertools
import re
from dataclasses import dataclass
from typing import Any

import anthropic

from .. import conversation
from ..catalogue import catalogue, fill
from ..history import to_wire
from ..loop import MAX_TOKENS, system_prompt
from ..model_id import MODEL
from ..robust import CHECKED_REGISTRY, TOOL_REGISTRY, VERSIONS, run_tool as course_run_tool
from ..rules import check_request
from ..scripted import TooManyCalls, calculator as calc, reply, said, spoken, stable_id, text, thinking, tool_use
from . import turns
from .core import Failure, Report, Scenario, learner_frame, play
from .difference import ABSENT, first_difference, shown

OWN_TEXTS, HINTS = catalogue(__file__)  # texts/notebook6.toml
TEXTS = {**turns.TEXTS, **OWN_TEXTS}  # the cap is played by notebook 2's harness, in its words
# The history's first line, and the one after it, in the check's language: spoken(START) when handed over.
START = {"role": "user", "content": said("Please use your tools.", fr="Utilisez vos outils, s'il vous plaît.")}
NEXT_LINE = {"role": "user", "content": said("Thanks. Next question.", fr="Merci. Question suivante.")}
# The words the prose asks run_tool's texts to start with, or to hold.
ERROR = "Error: "
UNKNOWN_START = ERROR + "unknown tool"
BAD_ARGUMENTS_START = ERROR + "bad arguments for {name!r}"
BAD_ARGUMENTS = ERROR + "bad arguments"
NOT_AN_OBJECT_WORDS = "must be an object"
CALL_SHOWN = "run_tool({name!r}, {tool_input!r})"
RUN_MARK = re.compile(r" \(run #(\d+)\)")  # how fetch_page numbers its runs (looplab/robust.py)


# --- 6.1 run_tool ----------------------------------------------------------------------------------------

OK, UNKNOWN, ARGUMENTS, NOT_AN_OBJECT, RAISED, SWAPPED = (
    "ok", "unknown", "bad_arguments", "not_an_object", "raised", "swapped")


@dataclass(frozen=True)
class Call:
    """One call of run_tool: its row, what it is handed, what kind of answer it must give."""

    key: str
    name: Any
    tool_input: Any
    kind: str


RUN_TOOL_CALLS = [
    Call("succeeds", "calculator", {"expression": "2 + 3"}, OK),
    Call("weather", "get_weather", {"city": "Paris"}, OK),
    Call("no_data", "get_weather", {"city": "Atlantis"}, OK),
    Call("keys_in_another_order", "count_letters", {"letter": "r", "text": "strawberry"}, OK),
    Call("log_line", "last_log_line", {}, OK),
    Call("a_number", "count_words", {"text": "one tool call at a time"}, OK),
    Call("swapped", "version", {}, SWAPPED),
    Call("unknown", "teleporter", {"destination": "Mars"}, UNKNOWN),
    Call("wrong_key", "get_weather", {"town": "Paris"}, ARGUMENTS),
    Call("missing_key", "calculator", {}, ARGUMENTS),
    Call("extra_key", "calculator", {"expression": "1 + 1", "precision": 2}, ARGUMENTS),
    Call("a_string", "get_weather", "Paris", NOT_AN_OBJECT),
    Call("a_list", "calculator", ["1 + 1"], NOT_AN_OBJECT),
    Call("none_input", "last_log_line", None, NOT_AN_OBJECT),
    Call("divides_by_zero", "calculator", {"expression": "1 / 0"}, RAISED),
    Call("not_arithmetic", "calculator", {"expression": "2 ** 8"}, RAISED),
    Call("explodes", "explode", {}, RAISED),
    Call("type_error_inside", "shout", {"text": "hi"}, RAISED),
    Call("key_error_inside", "read_setting", {"name": "colour"}, RAISED),
]


def check_run_tool(run_tool, report: Report) -> None:
    report.require_function(run_tool, "run_tool")
    for case in RUN_TOOL_CALLS:
        try:
            _run_tool_once(run_tool, case, report)
        except Failure as failure:  # a tool the check added: the verdict is the course's code, if it was called
            failure.course_code_blind = case.name not in TOOL_REGISTRY
            raise
    report.note("run_tool_ok")


def _called(run_tool, case: Call, report: Report) -> Any:
    """run_tool's answer to the case; what it raised, in words."""
    try:  # its own copy of the input: what the learner's code does to it never reaches the table (core.Scenario)
        return run_tool(case.name, copy.deepcopy(case.tool_input))
    except NotImplementedError:
        raise
    except Exception as error:
        raise report.failure("run_tool_raised", error=f"{type(error).__name__}: {error}", where=learner_frame(error)) from None


def _pair(value: Any, raw: Any, report: Report) -> tuple[Any, Any]:
    """The answer as a pair (text, is_error); `raw`, the tool's own result, when it is not a text."""
    report.require(type(value) is tuple and len(value) == 2, "not_a_pair", value=shown(value))
    said, flag = value
    report.require(raw is None or type(raw) is str or type(said) is not type(raw) or said != raw, "result_not_text",
                   value=shown(value), kind=type(raw).__name__)
    report.require(type(said) is str and type(flag) is bool, "pair_types", value=shown(value))
    return said, flag


def _not_unknown(said: str, value: Any, case: Call, report: Report) -> None:
    """'unknown tool' only for a name the registry lacks: a registry read once, or a catch-all, say it of others."""
    if case.name in CHECKED_REGISTRY and said.startswith(UNKNOWN_START):
        copied = case.kind in (OK, SWAPPED) and case.name not in TOOL_REGISTRY
        raise report.failure("registry_copied" if copied else "called_unknown", value=shown(value), name=case.name)


def _run_tool_once(run_tool, case: Call, report: Report) -> None:
    """One call of run_tool, and what its pair must be."""
    report.enter(case.key, call=fill(CALL_SHOWN, name=case.name, tool_input=case.tool_input))
    if case.kind == SWAPPED:
        _followed_the_swap(run_tool, case, report)
        return
    function = CHECKED_REGISTRY[case.name]["function"] if case.name in CHECKED_REGISTRY else None
    raw = function(**case.tool_input) if case.kind == OK else None
    value = _called(run_tool, case, report)
    said, flag = _pair(value, raw, report)
    _not_unknown(said, value, case, report)
    if case.kind == OK:
        expected = str(raw)
        if said != expected and said == _by_position(function, case.tool_input):
            raise report.failure("arguments_by_position", value=shown(value), expected=shown((expected, False)))
        report.require(value == (expected, False), "wrong_success", value=shown(value),
                       expected=shown((expected, False)))
        return
    failed_as_it_should(case, function, value, said, flag, report)


def failed_as_it_should(case: Call, function, value: Any, said: str, flag: Any, report: Report) -> None:
    """A call that must fail: flagged True, its text an `Error: ...` that says why (an unknown name, arguments that do
    not fit or are not an object, or the tool's exception by its type and message). Notebook 9's run_tool, which
    takes the registry, keeps every one of these rules."""
    if case.kind == NOT_AN_OBJECT:
        report.require(flag is True, "not_an_object_ran", value=shown(value), kind=type(case.tool_input).__name__)
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
        names = _raised(function, case.tool_input)
        report.require(names in said, "exception_not_named", value=shown(said), names=names)


def _by_position(function, tool_input: dict) -> str | None:
    """What the tool says when the input's values are passed by position, in the model's key order."""
    try:
        return str(function(*tool_input.values()))
    except Exception:
        return None


def _raised(function, tool_input: dict) -> str:
    """The exception the tool raises on this input, as `Type: message` (the form the series' tests read)."""
    try:
        function(**tool_input)
    except Exception as error:
        return f"{type(error).__name__}: {error}"
    raise AssertionError(function)  # a tool of the table that does not raise: the table is wrong


def _followed_the_swap(run_tool, case: Call, report: Report) -> None:
    """Two calls of a tool whose function the registry swaps between them: the second must be the other one's."""
    answers = []
    for _ in range(2):
        value = _called(run_tool, case, report)
        said, flag = _pair(value, None, report)
        _not_unknown(said, value, case, report)
        report.require(said in VERSIONS and flag is False, "version_wrong", value=shown(value),
                       versions=shown(list(VERSIONS)))
        answers.append(said)
    first, second = answers
    other = VERSIONS[1 - VERSIONS.index(first)]
    report.require(second == other, "registry_read_once", first=shown(first), second=shown(second),
                   expected=shown(other))


# --- 6.2 and 6.3 agent_turn ---------------------------------------------------------------------------------

# A system prompt of the check's own, handed to agent_turn.
OWN_SYSTEM = said("Answer in one short sentence.", fr="Répondez en une phrase courte.")

FLAGGED_SCENARIOS = [  # Scenario(key, the model's replies): the history given is [START]
    Scenario("good_call", [reply(calc("2 + 3")), reply(text("2 + 3 = 5.", fr="2 + 3 = 5."))]),
    Scenario("no_weather_data", [reply(tool_use("get_weather", {"city": "Atlantis"})),
                                 reply(text("There is no weather data for Atlantis.",
                                            fr="Il n'y a pas de données météo pour l'Atlantide."))]),
    Scenario("unknown_tool", [reply(tool_use("teleporter", {"destination": "Mars"})),
                              reply(text("I have no way to teleport you.",
                                         fr="Je n'ai aucun moyen de vous téléporter."))]),
    Scenario("bad_arguments", [reply(tool_use("get_weather", {"town": "Paris"})),
                               reply(text("I could not check.", fr="Je n'ai pas pu vérifier."))]),
    Scenario("tool_raises", [reply(text("Let me compute.", fr="Je calcule."), calc("1 / 0")),
                             reply(text("1 / 0 has no answer.", fr="1 / 0 n'a pas de réponse."))]),
    Scenario("good_and_bad", [reply(calc("6 * 7"), tool_use("get_weather", {"town": "Paris"})),
                              reply(text("6 * 7 = 42; the weather failed.",
                                         fr="6 * 7 = 42 ; l'appel météo a échoué."))]),
    Scenario("recovers", [reply(tool_use("get_weather", {"town": "Tokyo"})),
                          reply(text("Trying again with city.", fr="Je réessaie avec l'argument city."),
                                tool_use("get_weather", {"city": "Tokyo"})),
                          reply(text("Clear skies in Tokyo.", fr="Ciel dégagé à Tokyo."))]),
    Scenario("same_tool_twice", [reply(calc("2 + 2"), calc("3 * 3")),
                                 reply(text("2 + 2 = 4 and 3 * 3 = 9.", fr="2 + 2 = 4 et 3 * 3 = 9."))]),
    Scenario("log_line_read", [reply(tool_use("last_log_line", {})),
                               reply(text("The last line of the log says the backup failed: the disk is full.",
                                          fr="La dernière ligne du journal indique que la sauvegarde a échoué : "
                                             "le disque est plein."))]),
    Scenario("thinks_first", [reply(thinking("A product: use the tool.", fr="Un produit : j'utilise l'outil."),
                                    calc("6 * 7")),
                              reply(thinking("The tool says 42.", fr="L'outil donne 42."),
                                    text("6 * 7 = 42.", fr="6 * 7 = 42."))]),
    Scenario("two_texts", [reply(calc("6 * 7")),
                           reply(text("6 * 7 = 42. ", fr="6 * 7 = 42. "),
                                 text("That is the answer.", fr="C'est la réponse."))]),
    Scenario("cut_short", [reply(text("The weather in Paris is", fr="À Paris, le temps est"),
                                 stop_reason="max_tokens")]),
    Scenario("own_system", [reply(calc("2 + 3")), reply(text("5.", fr="5."))], options={"system": OWN_SYSTEM}),
]
GUARD_KEEPS = [  # what a repeat guard must let through
    Scenario("same_call_succeeds_twice", [reply(calc("2 + 2")), reply(calc("2 + 2")),
                                          reply(text("2 + 2 = 4.", fr="2 + 2 = 4."))]),
    Scenario("different_failures", [reply(tool_use("get_weather", {"town": "Paris"})),
                                    reply(tool_use("get_weather", {"place": "Paris"})),
                                    reply(tool_use("get_weather", {"city": "Paris"})),
                                    reply(text("18°C in Paris.", fr="18 °C à Paris."))]),
]
# A guard that stops one of these early says so in the words of what it got wrong.
STOPPED_EARLY = {"same_call_succeeds_twice": "guard_on_success", "different_failures": "guard_on_name",
                 "next_turn": "guard_remembers_old_turn"}

# The repeat guard's scenarios: a call that fails (fetch_page numbers its runs, so a call run again shows).
STUCK_CALL = tool_use("fetch_page", {"url": "https://example.com/news"})
OTHER_CALL = tool_use("fetch_page", {"url": "https://example.com/weather"})
WEATHER_CALL = tool_use("get_weather", {"town": "Paris"})
STUCK_CAP = 10
STUCK_SHOWN = f"{STUCK_CALL['name']}({STUCK_CALL['input']!r})"


def _numbered(*blocks):
    """A reply whose calls' ids come from its place in the conversation, not from what the conversation holds: the
    run numbers fetch_page writes in its results then change no id (the same ids in-process and under the grader)."""
    def answer(request: dict) -> dict:
        place = len(request.get("messages") or [])
        return reply(*(dict(block, id=stable_id("toolu_", place, index)) if block["type"] == "tool_use" else block
                       for index, block in enumerate(blocks)))(request)
    return answer


def _then_forever(first, *again):
    """A model that sends `first`, then the replies `again` in turn, forever."""
    def model():
        return itertools.chain([first], itertools.cycle(again))
    return model


def _stops(key: str, model, at: int) -> Scenario:
    """A model that repeats a failed call: the guard must stop at model call `at` (Scenario.expected)."""
    return Scenario(key, model, call_limit=STUCK_CAP, options={"max_iterations": STUCK_CAP}, expected=at)


STUCK_REPLY = _numbered(text("Let me check.", fr="Je vérifie."), STUCK_CALL)
STUBBORN = _stops("stubborn", _then_forever(STUCK_REPLY, STUCK_REPLY), 2)
BESIDE_A_NEW_CALL = _stops("repeat_beside_a_new_call", _then_forever(
    _numbered(STUCK_CALL), _numbered(text("Both pages.", fr="Les deux pages."), OTHER_CALL, STUCK_CALL)), 2)
ALTERNATING = _stops("alternating", _then_forever(_numbered(STUCK_CALL), _numbered(WEATHER_CALL),
                                                  _numbered(STUCK_CALL)), 3)
# Played right after the stubborn model, with the same agent_turn: a failure of that turn must not stop this one.
NEXT_TURN = Scenario("next_turn", [_numbered(STUCK_CALL),
                                   _numbered(text("The page cannot be reached right now.",
                                                  fr="La page est inaccessible pour le moment."))])
WENT_ON = {"alternating": "guard_forgot"}  # went on to max_iterations: in this scenario's words (else no_guard)


def _played(agent_turn, scenario: Scenario, report: Report):
    """agent_turn on [START] with the scenario's model; what it did, and the history it left."""
    messages = [spoken(START)]  # a dict of its own, in the check's language
    turn = play(lambda client: agent_turn(client, messages, **scenario.options), scenario)
    turns.block_confusion(turn.error, report)
    return turn, messages


def _gave_up(error) -> bool:
    """A RuntimeError of the learner's own (NotImplementedError and RecursionError are RuntimeErrors too)."""
    return isinstance(error, RuntimeError) and not isinstance(error, (NotImplementedError, RecursionError))


def _survived(turn, report: Report) -> None:
    """Nothing a tool did may end the turn: the API's 400 and the learner's own exceptions, in words."""
    turns.refused(turn, report)
    error = turn.error
    if isinstance(error, TypeError) and "unhashable" in str(error):  # a set (or dict keys) of calls: inputs are dicts
        raise report.failure("guard_unhashable", error=f"{type(error).__name__}: {error}", where=learner_frame(error))
    if error is not None and not isinstance(error, (NotImplementedError, TooManyCalls)):
        raise report.failure("turn_raised", error=f"{type(error).__name__}: {error}", where=learner_frame(error))
    turn.reraise()


def _without_runs(said):
    """A result's text with fetch_page's run numbers left out: two runs of one call say the same."""
    return RUN_MARK.sub("", said) if isinstance(said, str) else said


def _rounds(turn):
    """Each reply that called tools, with the request after it: (its number, its calls, the results it ends with)."""
    for number, (response, request) in enumerate(zip(turn.responses, turn.requests[1:]), start=2):
        calls = [block for block in response["content"] if block["type"] == "tool_use"]
        last = request["messages"][-1] if request.get("messages") else {}
        content = last.get("content") if isinstance(last, dict) and isinstance(last.get("content"), list) else []
        yield number, calls, content, {block.get("tool_use_id"): block for block in content
                                       if isinstance(block, dict) and block.get("type") == "tool_result"}


def _every_call_answered(turn, report: Report) -> None:
    """Every call of a reply has its result in the next request (found by id, two calls of one tool too): before
    the API's 400, which says it in its own words."""
    for number, calls, content, results in _rounds(turn):
        for call in calls:
            if call["id"] not in results:
                twin = [other for other in calls if other["name"] == call["name"] and other["id"] in results]
                raise report.failure("result_missing_same_tool" if twin else "result_missing", content=shown(content),
                                     name=call["name"], number=number, call=f"{call['name']}({call['input']!r})")


def _verify_results(turn, report: Report) -> None:
    """Each request after a tool_use reply ends with its results: one per call, the course's text, flagged
    exactly when run_tool says the call failed (`"is_error": True`; the key absent on success)."""
    _every_call_answered(turn, report)
    for number, calls, content, results in _rounds(turn):
        for call in calls:
            where = dict(number=number, call=f"{call['name']}({call['input']!r})")
            result = results[call["id"]]
            expected, failed = course_run_tool(call["name"], call["input"])
            said = turns.result_text(result.get("content"))
            report.require(_without_runs(said) == _without_runs(expected), "result_text", said=shown(said),
                           expected=shown(expected), **where)
            flag = result.get("is_error", ABSENT)
            if failed:
                report.require(flag is True, "failure_not_flagged", flag=shown(flag), **where)
            elif flag is not ABSENT:
                guessed = bool(flag) and isinstance(said, str) and said.startswith(ERROR)
                raise report.failure("flag_from_text" if guessed else "success_flagged", flag=shown(flag), **where)


def _verify_settings(turn, scenario: Scenario, report: Report) -> None:
    """Every request: TOOLS, MODEL, MAX_TOKENS, and the system prompt agent_turn was handed (its default otherwise)."""
    system = scenario.options.get("system") or system_prompt()  # the notebook's language: the grader judges both
    for number, request in enumerate(turn.requests, start=1):
        names = [tool.get("name") for tool in request.get("tools", []) if isinstance(tool, dict)]
        report.require("get_weather" in names and request.get("model") == MODEL
                       and request.get("max_tokens") == MAX_TOKENS, "turn_settings", number=number, names=names,
                       model=request.get("model"), max_tokens=request.get("max_tokens"), expected_model=MODEL,
                       expected_tokens=MAX_TOKENS)
        difference = first_difference(turns.result_text(request.get("system", ABSENT)), system, "system")
        report.require(difference is None, "turn_system", number=number, difference=str(difference))


def _flagged_turn(agent_turn, scenario: Scenario, report: Report) -> None:
    """Play one scenario: every call answered, only failures flagged, the model called once a reply, its words
    returned."""
    report.enter(scenario.key)
    needed = len(scenario.replies)
    turn, messages = _played(agent_turn, scenario, report)
    if isinstance(turn.error, (TooManyCalls, anthropic.BadRequestError)) and len(turn.responses) >= needed:
        cut = turn.last["stop_reason"] == "max_tokens"
        raise report.failure("turn_called_after_cut" if cut else "turn_called_again", calls=needed)
    if isinstance(turn.error, anthropic.BadRequestError):
        _every_call_answered(turn, report)
    _survived(turn, report)
    _verify_settings(turn, scenario, report)
    if turn.calls < needed:
        raise report.failure(STOPPED_EARLY.get(scenario.key, "turn_stopped_early"), calls=turn.calls, needed=needed,
                             answer=shown(turn.answer))
    _verify_results(turn, report)
    expected = turns.final_text(turn.last)
    report.require(turn.answer == expected, "turn_wrong_answer", answer=shown(turn.answer), expected=shown(expected))
    _history_valid(messages, report)
    report.note("scenario_ok")


def _history_valid(messages: list, report: Report) -> None:
    """The history left behind, with the next line of the conversation after it, is one the API accepts."""
    violation = check_request({"model": MODEL, "max_tokens": MAX_TOKENS,
                               "messages": to_wire(messages) + [spoken(NEXT_LINE)]})
    report.require(violation is None, "history_invalid", violation=violation.message if violation else "")


def _results_of(history: list, response: dict) -> dict:
    """The results in the history that answer a reply's calls, by the call's id."""
    ids = {block["id"] for block in response["content"] if block["type"] == "tool_use"}
    return {block.get("tool_use_id"): block for message in history if message.get("role") == "user"
            and isinstance(message.get("content"), list) for block in message["content"]
            if isinstance(block, dict) and block.get("type") == "tool_result" and block.get("tool_use_id") in ids}


def _runs(results: dict) -> set[str]:
    """The run numbers fetch_page gave the calls these results answer: a number is a run of the tool."""
    return {number for result in results.values() for number in RUN_MARK.findall(str(turns.result_text(
        result.get("content"))))}


def _stopped_at_repeat(agent_turn, scenario: Scenario, report: Report) -> None:
    """A model that repeats a failed call: stopped at that repeat (`scenario.expected`), a line naming the tool,
    none of the repeating reply's calls run, each answered with an error result (or the reply taken out)."""
    stop_at, cap = scenario.expected, scenario.options["max_iterations"]
    report.enter(scenario.key, call=STUCK_SHOWN)
    turn, messages = _played(agent_turn, scenario, report)
    error = turn.error
    if isinstance(error, TooManyCalls) or (_gave_up(error) and turn.calls >= cap):
        raise report.failure(WENT_ON.get(scenario.key, "no_guard"), calls=turn.calls, cap=cap, stop_at=stop_at)
    if _gave_up(error) and turn.calls == stop_at:  # stopped where it should, by an exception rather than a line
        raise report.failure("guard_raised", error=f"{type(error).__name__}: {error}", calls=turn.calls)
    _survived(turn, report)
    history = to_wire(messages)
    runs = [_runs(_results_of(history, response)) for response in turn.responses]
    if turn.calls < stop_at:  # a first failure stopped it, or one remembered from an earlier turn (nothing ran)
        if turn.calls == 1 and not runs[0]:  # said as next_turn says it: the same words at every check, first or not
            report.enter(NEXT_TURN.key)
            raise report.failure("guard_remembers_old_turn", calls=turn.calls, needed=len(NEXT_TURN.replies),
                                 answer=shown(turn.answer))
        raise report.failure("guard_too_early", calls=turn.calls, needed=stop_at, answer=shown(turn.answer))
    report.require(turn.calls == stop_at, "guard_calls", calls=turn.calls, stop_at=stop_at)
    report.require(isinstance(turn.answer, str) and STUCK_CALL["name"] in turn.answer, "guard_line",
                   answer=shown(turn.answer), name=STUCK_CALL["name"])
    report.require(not runs[-1] - set().union(*runs[:-1]), "guard_ran", number=stop_at)
    unanswered = [use.id for use in conversation.read(history).unanswered]
    report.require(not unanswered, "guard_dangling", ids=shown(unanswered))
    results = _results_of(history, turn.responses[-1])
    unflagged = [tool_id for tool_id, result in results.items() if result.get("is_error") is not True]
    report.require(not unflagged, "guard_not_flagged", ids=shown(unflagged))
    _history_valid(messages, report)
    report.note("guard_ok")


def check_flagged_turn(agent_turn, report: Report) -> None:
    report.require_function(agent_turn, "agent_turn")
    for scenario in FLAGGED_SCENARIOS:
        _flagged_turn(agent_turn, scenario, report)
    turns.stopped_by_cap(agent_turn, turns.never_stopping(3, call_limit=4), report)


def check_repeat_guard(agent_turn, report: Report) -> None:
    report.require_function(agent_turn, "agent_turn")
    _stopped_at_repeat(agent_turn, STUBBORN, report)
    _flagged_turn(agent_turn, NEXT_TURN, report)  # the same agent_turn again: a new turn starts with no failure
    for scenario in (BESIDE_A_NEW_CALL, ALTERNATING):
        _stopped_at_repeat(agent_turn, scenario, report)
    for scenario in GUARD_KEEPS + FLAGGED_SCENARIOS:
        _flagged_turn(agent_turn, scenario, report)


CHECKERS = {"6.1": check_run_tool, "6.2": check_flagged_turn, "6.3": check_repeat_guard}
