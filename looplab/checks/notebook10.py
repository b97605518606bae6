"""Checks for notebook 10, evals and tracing: cost_of (tokens into dollars), agent_turn with a trace (an entry and a
`[trace]` line per model call), the three expectations, and run_evals (each case from nothing).

Every call into the learner's code gets inputs of the check's own, made fresh for that call: usages, traces, replies,
registries (notebook 9's), histories and scripted models. What each function must do is the course's reckoning on the
same inputs (looplab/evals.py: cost_of, the expectations). While 10.2 to 10.6 are checked, the notebook's earlier
pieces are the course's: a bug in cost_of never fails run_evals. The lines the series' tests read stay in English in
every language: `[trace] ...`, `[eval] PASS ...`, `[eval] FAIL ...`, the complaints' first words.
"""

from __future__ import annotations

import dataclasses
import io
import itertools
import math
import re
from types import SimpleNamespace
from typing import Any, Callable

from .. import evals, scripted
from ..catalogue import catalogue
from ..client import traffic
from ..scripted import TooManyCalls, calculator as calc, reply, said, scripted_client, spoken, text, tool_use
from ..subagent import SUBAGENT_TAG, run_tool as course_run_tool
from . import notebook9, turns
from .core import Report
from .difference import shown
from .notebook8 import print_kept
from .notebook9 import RESEARCHER_PROMPTS, SYSTEM_PROMPTS, Turn, calls_of, lines_compared, tool_line

OWN_TEXTS, HINTS = catalogue(__file__)  # texts/notebook10.toml
TEXTS = {**notebook9.TEXTS, **OWN_TEXTS}  # 10.2 plays notebook 9's scenarios: their rows, and this notebook's
NEWLINE = "\n"
PARENT = "parent"
ENTRY_KEYS = ["agent", "stop_reason", "tools", "input_tokens", "output_tokens", "cost"]
TOLERANCE = 1e-12
# The lines the series' tests read: English in every language.
TRACE_LINE = "[{prefix}trace] stop={stop} tools={tools} tokens={input}+{output} cost=${cost:.6f}\n"
NO_TOOL = "-"
VERDICT_LINE = "[eval] {verdict} {name}"
PASS, FAIL = "PASS", "FAIL"
COMPLAINT = "[eval]   - "
SUMMARY_LINE = "[eval] {passed}/{total} passed"


def expected_cost(input_tokens: float, output_tokens: float) -> float:
    return (input_tokens * evals.PRICE_INPUT + output_tokens * evals.PRICE_OUTPUT) / 1_000_000


def close(value: Any, expected: float) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isclose(
        value, expected, rel_tol=TOLERANCE, abs_tol=TOLERANCE)


# --- 10.1 cost_of -------------------------------------------------------------------------------------------------

USAGES = [(0, 0), (1_000_000, 0), (0, 1_000_000), (300, 50), (1234, 567), (123_456_789, 9_876_543)]


def check_cost_of(cost_of, report: Report) -> None:
    report.require_function(cost_of, "cost_of")
    for input_tokens, output_tokens in USAGES:
        report.enter("cost_usage", input_tokens=input_tokens, output_tokens=output_tokens)
        value = cost_of(SimpleNamespace(input_tokens=input_tokens, output_tokens=output_tokens))
        _cost_compared(value, input_tokens, output_tokens, report)
    report.situation = None
    report.note("cost_ok", count=len(USAGES))


def _cost_compared(value: Any, input_tokens: int, output_tokens: int, report: Report) -> None:
    expected = expected_cost(input_tokens, output_tokens)
    said = dict(value=shown(value), expected=f"{expected!r}")
    report.require(isinstance(value, (int, float)) and not isinstance(value, bool), "cost_not_a_number",
                   kind=type(value).__name__, **said)
    if close(value, expected):
        return
    rates = (input_tokens * evals.PRICE_OUTPUT + output_tokens * evals.PRICE_INPUT) / 1_000_000
    report.require(not close(value, rates), "cost_rates_swapped", **said)
    report.require(not close(value, expected * 1_000), "cost_per_thousand", **said)
    report.require(not close(value, expected * 1_000_000), "cost_not_per_million", **said)
    report.require(not close(value, input_tokens * evals.PRICE_INPUT / 1_000_000), "cost_input_only", **said)
    report.require(not close(value, output_tokens * evals.PRICE_OUTPUT / 1_000_000), "cost_output_only", **said)
    raise report.failure("cost_wrong", **said)


# --- 10.2 agent_turn, traced --------------------------------------------------------------------------------------

# Notebook 9's scenarios, played twice: as they are, trace left out (no entry, no [trace] line), then with a trace.
UNTRACED = [scenario for scenario in notebook9.TURN_SCENARIOS
            if scenario.key in ("parent_call", "subagent_searches", "failure_beside_success", "no_tools")]
TRACED_KEYS = {"parent_call": "traced_parent_call", "subagent_searches": "traced_subagent",
               "not_in_this_registry": "traced_unknown_tool", "failure_beside_success": "traced_two_calls",
               "bad_arguments_then_fixed": "traced_fixed", "answers_in_words": "traced_in_words",
               "no_tools": "traced_no_tools", "earlier_exchange": "traced_earlier_exchange"}
TRACED = [dataclasses.replace(scenario, key=TRACED_KEYS[scenario.key]) for scenario in notebook9.TURN_SCENARIOS]
# An entry of an earlier call, in the list agent_turn is handed: it stays, first, the new ones after it.
EARLIER = {"agent": PARENT, "stop_reason": "end_turn", "tools": [], "input_tokens": 120, "output_tokens": 8,
           "cost": expected_cost(120, 8)}


def entry_of(response: dict, prefix: str) -> dict:
    """The course's entry for one reply (looplab/evals.py's traced, on the wire form)."""
    usage = response["usage"]
    return {"agent": prefix.rstrip(":") or PARENT, "stop_reason": response["stop_reason"],
            "tools": [block["name"] for block in response["content"] if block["type"] == "tool_use"],
            "input_tokens": usage["input_tokens"], "output_tokens": usage["output_tokens"],
            "cost": expected_cost(usage["input_tokens"], usage["output_tokens"])}


def trace_line(entry: dict, prefix: str) -> str:
    return TRACE_LINE.format(prefix=prefix, stop=entry["stop_reason"], tools=",".join(entry["tools"]) or NO_TOOL,
                             input=entry["input_tokens"], output=entry["output_tokens"], cost=entry["cost"])


def check_agent_turn(agent_turn, report: Report) -> None:
    report.require_function(agent_turn, "agent_turn")
    for scenario in UNTRACED:
        _turn_once(agent_turn, scenario, report, traced=False)
    for scenario in TRACED:
        _turn_once(agent_turn, scenario, report, traced=True)
    report.situation = None
    report.note("traced_ok", untraced=len(UNTRACED), traced=len(TRACED))


def _turn_once(agent_turn, scenario: Turn, report: Report, traced: bool) -> None:
    """Notebook 9's scenario through the harness (requests, answer, history); then, with a trace, its entries; and the
    lines written: per call, its [trace] line (with a trace) then its tool lines."""
    output, printed, clients = io.StringIO(), io.StringIO(), []
    prefix = scenario.prefix or ""
    arguments = {} if scenario.prefix is None else {"tag_prefix": scenario.prefix}
    trace = [dict(EARLIER)] if traced else None

    def handed(client, messages, system):  # the trace by position: under the grader, a list handed so comes back
        clients.append(client)
        if traced:
            return agent_turn(client, system, scenario.toolbox(), messages, output, prefix, trace)
        return agent_turn(client, system, scenario.toolbox(), messages, output, **arguments)

    def output_of(name, tool_input):
        return course_run_tool(scenario.toolbox(), name, tool_input)[0]

    with turns.toolbox(output_of, scenario.tools), print_kept(agent_turn, printed):
        turns.run_scenario(handed, scenario, report)
    responses = [exchange["response"] for exchange in traffic(clients[0]).exchanges]
    written = output.getvalue()
    expected = ""
    for response in responses:
        if traced:
            expected += trace_line(entry_of(response, prefix), prefix)
        expected += "".join(tool_line(call, scenario.toolbox(), prefix) for call in calls_of([response]))
    if not traced:
        stray = [line for line in written.split(NEWLINE) if "trace]" in line]
        report.require(not stray, "trace_line_without_trace", line=stray[0] if stray else "")
    else:
        _entries_compared(trace, responses, prefix, report)
        first = trace_line(entry_of(responses[0], prefix), prefix)
        if prefix and first not in written:
            bare = first.replace(f"[{prefix}trace]", "[trace]")
            report.require(bare not in written, "trace_prefix_missing", line=bare.strip(), expected=first.strip())
    lines_compared(written, printed.getvalue(), expected, prefix, report)


def _entries_compared(trace: list, responses: list[dict], prefix: str, report: Report) -> None:
    """The list handed in: the earlier entry kept first, then one entry per model call, in order, each exactly the
    course's (its cost within TOLERANCE)."""
    report.require(isinstance(trace, list) and len(trace) >= 1 and trace[0] == EARLIER, "trace_replaced",
                   first=shown(trace[0] if trace else None), earlier=shown(EARLIER))
    mine, wanted = trace[1:], [entry_of(response, prefix) for response in responses]
    report.require(bool(mine), "trace_untouched", calls=len(wanted))
    if len(mine) != len(wanted):
        report.require(not (len(mine) == 1 and len(wanted) > 1), "one_entry_per_turn", calls=len(wanted))
        raise report.failure("entry_count", count=len(mine), calls=len(wanted))
    everything = [name for entry in wanted for name in entry["tools"]]
    for number, (entry, expected) in enumerate(zip(mine, wanted), start=1):
        said = dict(number=number, entry=shown(entry), expected=shown(expected))
        report.require(isinstance(entry, dict), "entry_not_dict", kind=type(entry).__name__, **said)
        report.require(sorted(map(str, entry)) == sorted(ENTRY_KEYS), "entry_keys", keys=list(entry),
                       wanted=ENTRY_KEYS, **said)
        if entry["agent"] != expected["agent"]:
            report.require(not (entry["agent"] == PARENT and prefix), "agent_always_parent", prefix=prefix, **said)
            raise report.failure("entry_agent", agent=shown(entry["agent"]), wanted=shown(expected["agent"]), **said)
        report.require(entry["stop_reason"] == expected["stop_reason"], "entry_stop_reason", **said)
        if entry["tools"] != expected["tools"]:
            report.require(not (entry["tools"] == everything and len(wanted) > 1), "tools_of_the_turn", **said)
            raise report.failure("entry_tools", tools=shown(entry["tools"]), wanted=shown(expected["tools"]), **said)
        report.require(entry["input_tokens"] == expected["input_tokens"]
                       and entry["output_tokens"] == expected["output_tokens"], "entry_tokens", **said)
        report.require(close(entry["cost"], expected["cost"]), "entry_cost", cost=shown(entry["cost"]),
                       wanted=f"{expected['cost']!r}", **said)


# --- 10.3, 10.4, 10.5 the expectations ----------------------------------------------------------------------------


def entry(agent: str, *tools: str, stop: str | None = None) -> dict:
    """An entry of a trace of the check's own (its tokens and cost made up, consistent)."""
    return {"agent": agent, "stop_reason": stop or ("tool_use" if tools else "end_turn"), "tools": list(tools),
            "input_tokens": 400 + 37 * len(tools), "output_tokens": 20 + 9 * len(tools),
            "cost": expected_cost(400 + 37 * len(tools), 20 + 9 * len(tools))}


SUBAGENT = SUBAGENT_TAG.rstrip(":")
ANSWERED = said("Dara Okonkwo founded Halden Robotics in 2019.",
                fr="Dara Okonkwo a fondé Halden Robotics en 2019.")
COMPUTED = said("19 × 21 = 399.", fr="19 × 21 = 399.")
SMALL_TALK = said("Hello! I am fine, thank you.", fr="Bonjour ! Je vais bien, merci.")
NAMES_A_TOOL = said("I did not need the calculator for this.", fr="Je n'ai pas eu besoin de la calculator pour ça.")

DELEGATED = [entry(PARENT, "research"), entry(SUBAGENT, "search"), entry(SUBAGENT, "search"), entry(SUBAGENT),
             entry(PARENT, "calculator"), entry(PARENT)]
CALCULATED_FIRST = [entry(PARENT, "calculator"), entry(PARENT)]
CALCULATED_LAST = [entry(PARENT, "research"), entry(SUBAGENT), entry(PARENT, "count_words", "calculator"),
                   entry(PARENT)]
NO_CALL = [entry(PARENT), entry(PARENT)]
LONGER_NAME = [entry(PARENT, "calculator"), entry(PARENT)]
SHORTER_NAME = [entry(PARENT, "calc"), entry(PARENT)]

# (the factory's argument, the trace, the reply): the course's expectation says what each must give
TOOL_CALL_CASES = [
    ("calculator", CALCULATED_FIRST, COMPUTED), ("calculator", CALCULATED_LAST, COMPUTED),
    ("search", DELEGATED, ANSWERED), ("calculator", DELEGATED, ANSWERED), ("research", DELEGATED, ANSWERED),
    ("calc", LONGER_NAME, COMPUTED), ("calculator", SHORTER_NAME, COMPUTED), ("calculator", [], COMPUTED),
    ("calculator", NO_CALL, NAMES_A_TOOL), ("research", CALCULATED_FIRST, COMPUTED), ("calc", SHORTER_NAME, COMPUTED),
]
NO_CALL_CASES = [
    ((), [], SMALL_TALK), ((), NO_CALL, SMALL_TALK), ((), [entry(PARENT)], NAMES_A_TOOL),
    ((), CALCULATED_FIRST, COMPUTED), ((), CALCULATED_LAST, COMPUTED), ((), [entry(PARENT), entry(SUBAGENT, "search")],
                                                                         ANSWERED),
]
REPLY_CASES = [
    ("OKONKWO", [], ANSWERED), ("dara okonkwo", DELEGATED, ANSWERED), ("HaLdEn RoBoTiCs", [], ANSWERED),
    ("399", CALCULATED_FIRST, COMPUTED), ("2019", [], SMALL_TALK), ("search", DELEGATED, ANSWERED),
    ("utrecht", [], ANSWERED), ("42", [], ""), ("", [], SMALL_TALK),
]


def expectations_checker(name: str, course_factory: Callable, cases: list, complaint_key: str,
                         words: str, starts: bool) -> Callable:
    """A checker of one expectation factory: every factory made first (so that none shares another's state), each
    expectation then used on several traces and replies, its answers the course's: None, or text with its words."""
    def checker(factory, report: Report) -> None:
        report.require_function(factory, name)
        arguments = list(dict.fromkeys(case[0] for case in cases))
        made = {}
        for argument in arguments:
            call = f"{name}()" if argument == () else f"{name}({argument!r})"
            report.enter("expectation_made", call=call)
            made[argument] = factory(*(argument if argument == () else (argument,)))
            report.require(callable(made[argument]), "not_a_factory", call=call, value=shown(made[argument]))
        for argument, trace, answer in cases:
            trace, answer = spoken(trace), spoken(answer)
            call = f"{name}()" if argument == () else f"{name}({argument!r})"
            course = course_factory(*(argument if argument == () else (argument,)))
            tools = [tool for item in trace for tool in item["tools"]]
            report.enter("expectation_case", call=call, tools=tools, count=len(trace), reply=answer)
            value = made[argument](spoken(trace), answer)
            holds = course(trace, answer) is None
            report.require(value is not True and value is not False, "verdict_a_bool", value=value)
            if holds:
                report.require(value is None, "should_hold", value=shown(value))
                continue
            report.require(value is not None, "should_complain")
            report.require(isinstance(value, str), "complaint_not_text", value=shown(value))
            wanted = words.format(argument=argument if argument == () else repr(argument))
            report.require(value.startswith(wanted) if starts else wanted in value, complaint_key, value=shown(value),
                           wanted=wanted)
        report.situation = None
        report.note("expectations_ok", name=name, count=len(cases))
    return checker


check_expect_tool_call = expectations_checker("expect_tool_call", evals.expect_tool_call, TOOL_CALL_CASES,
                                              "complaint_start", "expected a call to {argument}", True)
check_expect_no_tool_calls = expectations_checker("expect_no_tool_calls", evals.expect_no_tool_calls, NO_CALL_CASES,
                                                  "complaint_words", "expected no tool calls", False)
check_expect_reply_contains = expectations_checker("expect_reply_contains", evals.expect_reply_contains, REPLY_CASES,
                                                   "complaint_words", "expected the reply to contain", False)


# --- 10.6 run_evals -----------------------------------------------------------------------------------------------

FOUNDER = said("Who founded Halden Robotics?", fr="Qui a fondé Halden Robotics ?")
EVAL_CASES = [  # name, prompt, the parent's replies, its expectations (the course's), as (factory, argument)
    ("multiplies", said("What is 19 * 21?", fr="Combien font 19 * 21 ?"),
     [reply(calc("19 * 21")), reply(text("19 * 21 = 399.", fr="19 * 21 = 399."))],
     [("expect_tool_call", "calculator"), ("expect_reply_contains", "399")]),
    ("delegates", FOUNDER,
     [reply(tool_use("research", {"question": "Who founded Halden Robotics?"})),
      reply(text("Dara Okonkwo founded it, in 2019.", fr="Dara Okonkwo l'a fondée, en 2019."))],
     [("expect_tool_call", "research"), ("expect_tool_call", "search"), ("expect_reply_contains", "OKONKWO")]),
    ("small talk", said("Hello! How are you?", fr="Bonjour ! Comment allez-vous ?"),
     [reply(text("Very well, thank you!", fr="Très bien, merci !"))],
     [("expect_no_tool_calls", ()), ("expect_reply_contains", "goodbye")]),
    ("no tool for sums", said("What is 2 + 2?", fr="Combien font 2 + 2 ?"),
     [reply(calc("2 + 2")), reply(text("2 + 2 = 4.", fr="2 + 2 = 4."))],
     [("expect_no_tool_calls", ()), ("expect_reply_contains", "four")]),
    ("counts again", said("What is 6 * 7?", fr="Combien font 6 * 7 ?"),
     [reply(calc("6 * 7")), reply(text("6 * 7 = 42.", fr="6 * 7 = 42."))],
     [("expect_tool_call", "calculator"), ("expect_reply_contains", "42")]),
]
RESEARCHER_REPLIES = [reply(notebook9.searched("founded")), reply(notebook9.FOUNDED)]
TOOLS_CALLED = [["calculator"], ["research", "search"], [], ["calculator"], ["calculator"]]  # each case's, in order
MAX_CALLS = 30
SUMMARY = re.compile(r"\[eval\] \d+/\d+ passed")  # a summary line, whatever its numbers


def made_expectation(factory: str, argument: Any) -> Callable:
    return getattr(evals, factory)(*(argument if argument == () else (argument,)))


class EvalModel:
    """The model of the eval run: the researcher's prompt gets the subagent's next reply, any other request the next
    parent reply of the cases, in order; past the last, it refuses."""

    def __init__(self):
        self.parent = [answer for case in EVAL_CASES for answer in case[2]]
        self.researcher = list(RESEARCHER_REPLIES)
        self.asked = 0

    def answer(self, request: dict) -> dict:
        self.asked += 1
        if request.get("system") in RESEARCHER_PROMPTS:
            return (self.researcher.pop(0) if self.researcher else notebook9.NOTHING_MORE)(request)
        if not self.parent:
            raise TooManyCalls(scripted.WORDS("too_many_calls", calls=self.asked, expected=self.asked - 1))
        return self.parent.pop(0)(request)


def expected_report() -> tuple[list[str], int]:
    """The [eval] lines each case gives (PASS/FAIL <name>, then its complaints), the summary; the number failed."""
    lines, failed = [], 0
    for (name, _, replies, checks), tools in zip(EVAL_CASES, TOOLS_CALLED):
        answer = turns.final_text(replies[-1]({"messages": []}))
        trace = [{"tools": tools}]
        complaints = [said for factory, argument in checks
                      if (said := made_expectation(factory, argument)(trace, answer)) is not None]
        lines.append(VERDICT_LINE.format(verdict=FAIL if complaints else PASS, name=name))
        lines += [COMPLAINT + complaint for complaint in complaints]
        failed += bool(complaints)
    lines.append(SUMMARY_LINE.format(passed=len(EVAL_CASES) - failed, total=len(EVAL_CASES)))
    return lines, failed


def check_run_evals(run_evals, report: Report) -> None:
    report.require_function(run_evals, "run_evals")
    report.enter("evals_run", count=len(EVAL_CASES))
    cases = [{"name": name, "prompt": spoken(prompt), "checks": [made_expectation(*check) for check in checks]}
             for name, prompt, _, checks in EVAL_CASES]
    prompts = [case["prompt"] for case in cases]
    model = EvalModel()
    client, record = scripted_client(itertools.repeat(model.answer), call_limit=MAX_CALLS)
    output, printed = io.StringIO(), io.StringIO()
    error = None
    try:
        with print_kept(run_evals, printed):
            value = run_evals(client, output, cases)
    except NotImplementedError:
        raise
    except (Exception, TooManyCalls) as raised:  # said after what the requests show: a shared history, a 400
        error, value = raised, None
    parents = [exchange["request"] for exchange in record.exchanges
               if exchange["request"].get("system") not in RESEARCHER_PROMPTS]
    _each_case_from_nothing(parents, prompts, report)
    if error is not None:
        raise error
    expected, failed = expected_report()
    written = [line.rstrip("\r") for line in output.getvalue().split(NEWLINE) if line.startswith("[eval]")]
    _eval_lines(written, expected, printed.getvalue(), report)
    report.require(not (value == len(EVAL_CASES) - failed and value != failed), "eval_counts_passes", value=value,
                   failed=failed)
    report.require(value == failed and not isinstance(value, bool), "eval_return", value=shown(value), failed=failed)
    report.situation = None
    report.note("evals_ok", count=len(EVAL_CASES), failed=failed)


def _each_case_from_nothing(parents: list[dict], prompts: list[str], report: Report) -> None:
    """Every parent request carries SYSTEM_PROMPT; each case's first one holds its prompt alone."""
    for number, request in enumerate(parents, start=1):
        report.require(request.get("system") in SYSTEM_PROMPTS, "eval_system", number=number,
                       system=shown(request.get("system")))
    for prompt in prompts:
        question = {"role": "user", "content": prompt}
        firsts = [request.get("messages") for request in parents if (request.get("messages") or [None])[-1] == question]
        if not firsts:
            continue  # never asked: the lines say which case is missing
        messages = firsts[0]
        report.require(len(messages) == 1 or not isinstance(messages, list), "eval_history_shared", prompt=prompt,
                       count=len(messages), first=shown(messages[0]))
        report.require(messages == [question], "eval_history", prompt=prompt, messages=shown(messages))


def _eval_lines(written: list[str], expected: list[str], printed: str, report: Report) -> None:
    """The [eval] lines, in order: each case's verdict, its complaints, the summary (after a verdict or the summary,
    anything may follow that does not go on with the same word: the course's writes the cost there)."""
    report.require(bool(written) or not any(line in printed for line in expected), "eval_lines_printed",
                   line=expected[0])
    summary = expected[-1]
    for number, wanted in enumerate(expected, start=1):
        line = written[number - 1] if number <= len(written) else None
        fits = line is not None and (line == wanted or (not wanted.startswith(COMPLAINT)
                                                        and line.startswith(wanted)
                                                        and not line[len(wanted)].isalnum()))
        if fits:
            continue
        if wanted == summary:
            report.require(line is not None, "eval_no_summary", expected=summary)
            raise report.failure("eval_summary", line=shown(line), expected=summary)
        if line is None or SUMMARY.match(line):
            raise report.failure("eval_stopped", number=number, expected=wanted, count=number - 1)
        passing = VERDICT_LINE.format(verdict=PASS, name="")
        if wanted.startswith(passing) and line.startswith(wanted.replace(PASS, FAIL, 1)):
            complaints = list(itertools.takewhile(lambda said: said.startswith(COMPLAINT), written[number:]))
            raise report.failure("eval_passing_case_failed", number=number, line=line, expected=wanted,
                                 complaints=shown([said.removeprefix(COMPLAINT) for said in complaints]))
        raise report.failure("eval_line_differs", number=number, line=line, expected=wanted)
    report.require(len(written) == len(expected), "eval_extra_lines", line=written[len(expected):][:1])


CHECKERS = {"10.1": check_cost_of, "10.2": check_agent_turn, "10.3": check_expect_tool_call,
            "10.4": check_expect_no_tool_calls, "10.5": check_expect_reply_contains, "10.6": check_run_evals}
