"""The checks of notebook 10 (evals and tracing): they pass on good code written several ways and fail, saying why,
on typical mistakes. The answers read the names the notebook gives them (PRICE_INPUT, PRICE_OUTPUT, run_tool,
SYSTEM_PROMPT, agent_turn, build_registry, cost_of): while each is checked, the earlier pieces are the course's."""

from decimal import Decimal

import pytest

from looplab import evals
from looplab.checks import notebook10
from looplab.course import COURSE
from looplab.evals import (  # noqa: F401 (the names the notebook gives the answers below)
    PRICE_INPUT, PRICE_OUTPUT, SYSTEM_PROMPT, agent_turn, build_registry, cost_of,
)
from looplab.model_id import MODEL
from looplab.subagent import run_tool
from tests.check_helpers import fails, passes, stub, twin

STEM = "10_evals_and_tracing"
COURSE_VERSIONS = [("10.1", evals.cost_of), ("10.2", evals.agent_turn), ("10.3", evals.expect_tool_call),
                   ("10.4", evals.expect_no_tool_calls), ("10.5", evals.expect_reply_contains),
                   ("10.6", evals.run_evals)]


def test_the_exercises_and_their_points():
    assert [(e.id, e.name, e.points) for e in COURSE.notebook(STEM).exercises] == [
        ("10.1", "cost_of", 1), ("10.2", "agent_turn", 3), ("10.3", "expect_tool_call", 1),
        ("10.4", "expect_no_tool_calls", 1), ("10.5", "expect_reply_contains", 1), ("10.6", "run_evals", 2)]
    for number in COURSE.notebook(STEM).ids:
        assert 2 <= len(COURSE.hints(number)) <= 3


@pytest.mark.parametrize("number, course", COURSE_VERSIONS)
def test_the_checks_pass_the_course_code_in_both_languages(number, course, spoken_in):
    passes(number, twin(course))


@pytest.mark.parametrize("number, course", COURSE_VERSIONS)
def test_the_course_function_is_refused(number, course):
    fails(number, course, "course's own")


@pytest.mark.parametrize("number", [number for number, _ in COURSE_VERSIONS])
def test_the_stub_is_not_written_yet(number):
    fails(number, stub, "not written yet")


def test_the_eval_cases_pass_and_fail_as_the_check_expects():
    """The report the check expects is the course's run_evals on the same cases: two failures, their complaints."""
    lines, failed = notebook10.expected_report()
    assert failed == 2
    assert lines[-1] == "[eval] 3/5 passed"
    assert sum(line.startswith("[eval] FAIL") for line in lines) == 2


# --- 10.1 cost_of --------------------------------------------------------------------------------------------------


def cost_of_per_million_first(usage):
    return usage.input_tokens / 1e6 * PRICE_INPUT + usage.output_tokens / 1e6 * PRICE_OUTPUT


def cost_of_with_decimals(usage):
    rates = {"input_tokens": Decimal(str(PRICE_INPUT)), "output_tokens": Decimal(str(PRICE_OUTPUT))}
    return float(sum(getattr(usage, name) * rate for name, rate in rates.items()) / 10 ** 6)


def cost_of_rates_swapped(usage):
    return (usage.input_tokens * PRICE_OUTPUT + usage.output_tokens * PRICE_INPUT) / 1_000_000


def cost_of_not_divided(usage):
    return usage.input_tokens * PRICE_INPUT + usage.output_tokens * PRICE_OUTPUT


def cost_of_per_thousand(usage):
    return (usage.input_tokens * PRICE_INPUT + usage.output_tokens * PRICE_OUTPUT) / 1_000


def cost_of_input_only(usage):
    return usage.input_tokens * PRICE_INPUT / 1_000_000


def cost_of_as_text(usage):
    return f"${(usage.input_tokens * PRICE_INPUT + usage.output_tokens * PRICE_OUTPUT) / 1_000_000:.6f}"


def test_cost_of_passes_on_unusual_answers():
    passes("10.1", cost_of_per_million_first)
    passes("10.1", cost_of_with_decimals)


@pytest.mark.parametrize("wrong, words", [
    (cost_of_rates_swapped, ("the input tokens at the output rate", "PRICE_INPUT goes with usage.input_tokens")),
    (cost_of_not_divided, ("a million times the cost", "Divide by 1_000_000")),
    (cost_of_per_thousand, ("a thousand times the cost", "per million tokens, not per thousand")),
    (cost_of_input_only, ("the input tokens' cost alone", "add usage.output_tokens * PRICE_OUTPUT")),
    (cost_of_as_text, ("a str", "Return the number itself, not a text")),
])
def test_cost_of_fails_on_typical_mistakes(wrong, words):
    fails("10.1", wrong, *words)


# --- 10.2 agent_turn, traced ---------------------------------------------------------------------------------------


def agent_turn_with_helpers(client, system, registry, messages, output_stream, tag_prefix="", trace=None):
    """The entry made by a helper, the lines written with print(file=...), the loop bounded by a for."""
    def noted(reply):
        names = [block.name for block in reply.content if block.type == "tool_use"]
        made = dict(agent=tag_prefix[:-1] if tag_prefix.endswith(":") else tag_prefix or "parent",
                    stop_reason=reply.stop_reason, tools=names, input_tokens=reply.usage.input_tokens,
                    output_tokens=reply.usage.output_tokens, cost=cost_of(reply.usage))
        trace.append(made)
        print(f"[{tag_prefix}trace] stop={made['stop_reason']} tools={','.join(names) if names else '-'} "
              f"tokens={made['input_tokens']}+{made['output_tokens']} cost=${made['cost']:.6f}", file=output_stream)

    tools = [dict(name=name, **entry["schema"]) for name, entry in registry.items()]
    for _ in range(50):
        reply = client.messages.create(model=MODEL, max_tokens=1024, system=system, tools=tools, messages=messages)
        messages.append({"role": "assistant", "content": reply.content})
        if trace is not None:
            noted(reply)
        if reply.stop_reason != "tool_use":
            break
        results = []
        for call in (b for b in reply.content if b.type == "tool_use"):
            said, failed = run_tool(registry, call.name, call.input)
            print(f"[{tag_prefix}{'tool-error' if failed else 'tool'}] {call.name}({call.input}) -> {said}",
                  file=output_stream)
            results.append({"type": "tool_result", "tool_use_id": call.id, "content": said,
                            **({"is_error": True} if failed else {})})
        messages.append({"role": "user", "content": results})
    return "".join(b.text for b in reply.content if b.type == "text")


def traced_turn(client, system, registry, messages, output_stream, tag_prefix="", trace=None, per_turn=False,
                always_parent=False, whole_turn=False, rate=None, bare=False, lines_anyway=False, late=False,
                replaced=False, no_cost=False):
    """The course's traced turn with one thing done otherwise: the base of the wrong answers below."""
    tools = [{"name": name, **entry["schema"]} for name, entry in registry.items()]
    seen, noted = [], []
    if replaced and trace is not None:
        trace = []
    while True:
        reply = client.messages.create(model=MODEL, max_tokens=1024, system=system, tools=tools, messages=messages)
        messages.append({"role": "assistant", "content": reply.content})
        names = [block.name for block in reply.content if block.type == "tool_use"]
        seen += names
        usage = reply.usage
        cost = (usage.input_tokens * rate + usage.output_tokens * rate) / 1_000_000 if rate else cost_of(usage)
        entry = {"agent": "parent" if always_parent else tag_prefix.rstrip(":") or "parent",
                 "stop_reason": reply.stop_reason, "tools": seen if whole_turn else names,
                 "input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens, "cost": cost}
        if no_cost:
            del entry["cost"]
        tag = "" if bare else tag_prefix
        line = (f"[{tag}trace] stop={reply.stop_reason} tools={','.join(names) or '-'} "
                f"tokens={usage.input_tokens}+{usage.output_tokens} cost=${cost:.6f}\n")
        if trace is not None and not per_turn and not late:
            trace.append(entry)
            output_stream.write(line)
        elif lines_anyway and trace is None:
            output_stream.write(line)
        elif late:
            noted.append((entry, line))
        if reply.stop_reason != "tool_use":
            if trace is not None and per_turn:
                trace.append(entry)
                output_stream.write(line)
            for made, written in noted if trace is not None else ():
                trace.append(made)
                output_stream.write(written)
            return "".join(block.text for block in reply.content if block.type == "text")
        results = []
        for block in (block for block in reply.content if block.type == "tool_use"):
            said, failed = run_tool(registry, block.name, block.input)
            output_stream.write(f"[{tag_prefix}{'tool-error' if failed else 'tool'}] {block.name}({block.input}) "
                                f"-> {said}\n")
            results.append({"type": "tool_result", "tool_use_id": block.id, "content": said,
                            **({"is_error": True} if failed else {})})
        messages.append({"role": "user", "content": results})
        if late and trace is not None:
            for made, written in noted:
                trace.append(made)
                output_stream.write(written)
            noted.clear()


def agent_turn_one_entry_per_turn(client, system, registry, messages, output_stream, tag_prefix="", trace=None):
    return traced_turn(client, system, registry, messages, output_stream, tag_prefix, trace, per_turn=True)


def agent_turn_always_parent(client, system, registry, messages, output_stream, tag_prefix="", trace=None):
    return traced_turn(client, system, registry, messages, output_stream, tag_prefix, trace, always_parent=True)


def agent_turn_tools_of_the_turn(client, system, registry, messages, output_stream, tag_prefix="", trace=None):
    return traced_turn(client, system, registry, messages, output_stream, tag_prefix, trace, whole_turn=True)


def agent_turn_one_rate(client, system, registry, messages, output_stream, tag_prefix="", trace=None):
    return traced_turn(client, system, registry, messages, output_stream, tag_prefix, trace, rate=PRICE_INPUT)


def agent_turn_without_cost(client, system, registry, messages, output_stream, tag_prefix="", trace=None):
    return traced_turn(client, system, registry, messages, output_stream, tag_prefix, trace, no_cost=True)


def agent_turn_trace_line_untagged(client, system, registry, messages, output_stream, tag_prefix="", trace=None):
    return traced_turn(client, system, registry, messages, output_stream, tag_prefix, trace, bare=True)


def agent_turn_lines_without_trace(client, system, registry, messages, output_stream, tag_prefix="", trace=None):
    return traced_turn(client, system, registry, messages, output_stream, tag_prefix, trace, lines_anyway=True)


def agent_turn_traced_after_the_tools(client, system, registry, messages, output_stream, tag_prefix="", trace=None):
    return traced_turn(client, system, registry, messages, output_stream, tag_prefix, trace, late=True)


def agent_turn_replacing_the_trace(client, system, registry, messages, output_stream, tag_prefix="", trace=None):
    return traced_turn(client, system, registry, messages, output_stream, tag_prefix, trace, replaced=True)


def agent_turn_crashing_without_trace(client, system, registry, messages, output_stream, tag_prefix="", trace=None):
    return traced_turn(client, system, registry, messages, output_stream, tag_prefix, trace if trace else [])


def test_agent_turn_passes_on_an_unusual_answer():
    passes("10.2", agent_turn_with_helpers)
    passes("10.2", lambda *args, **kwargs: traced_turn(*args, **kwargs))


@pytest.mark.parametrize("wrong, words", [
    (agent_turn_one_entry_per_turn, ("the trace got one entry", "one entry per model call, not per turn")),
    (agent_turn_always_parent, ("\"agent\": \"parent\"", "tag_prefix='subagent:'", "tag_prefix.rstrip(\":\")")),
    (agent_turn_tools_of_the_turn, ("lists every tool of the turn", "the tools of its own call only")),
    (agent_turn_one_rate, ("\"cost\": ", "cost_of(reply.usage)")),
    (agent_turn_without_cost, ("has the keys", "expected exactly ['agent', 'stop_reason', 'tools'",)),
    (agent_turn_trace_line_untagged, ("the [trace] line has no tag_prefix", "[subagent:trace] stop=tool_use")),
    (agent_turn_lines_without_trace, ("with no trace handed (trace=None), agent_turn wrote", "[trace] stop=tool_use")),
    (agent_turn_traced_after_the_tools, ("line 1 written to output_stream is \"[tool] calculator({'expression': '19 * 21'}) -> 399\"",
                                         "expected '[trace] stop=tool_use tools=calculator", "before its tools run")),
    (agent_turn_replacing_the_trace, ("the list handed as trace got no entry", "Append to the list you are handed")),
    (agent_turn_crashing_without_trace, ("with no trace handed (trace=None)",)),
])
def test_agent_turn_fails_on_typical_mistakes(wrong, words):
    fails("10.2", wrong, *words)


# --- 10.3, 10.4, 10.5 the expectations -----------------------------------------------------------------------------


def expect_tool_call_with_any(name):
    def holds(trace, reply):
        if any(name in entry["tools"] for entry in trace):
            return None
        return "expected a call to %r, saw %s" % (name, [t for e in trace for t in e["tools"]] or "no tool calls")
    return holds


def expect_tool_call_first_entry(name):
    def expectation(trace, reply):
        return None if trace and name in trace[0]["tools"] else f"expected a call to {name!r}"
    return expectation


def expect_tool_call_last_entry(name):
    def expectation(trace, reply):
        return None if trace and name in trace[-1]["tools"] else f"expected a call to {name!r}"
    return expectation


def expect_tool_call_by_substring(name):
    def expectation(trace, reply):
        called = ",".join(tool for entry in trace for tool in entry["tools"])
        return None if name in called else f"expected a call to {name!r}, saw {called or 'no tool calls'}"
    return expectation


def expect_tool_call_as_a_bool(name):
    return lambda trace, reply: any(name in entry["tools"] for entry in trace)


def expect_tool_call_other_words(name):
    def expectation(trace, reply):
        return None if any(name in entry["tools"] for entry in trace) else f"{name} was never called"
    return expectation


def expect_tool_call_eagerly(name, trace=(), reply=""):
    """The verdict itself, computed at once, not a function to run later."""
    return None if any(name in entry["tools"] for entry in trace) else f"expected a call to {name!r}"


LAST_NAME = []


def expect_tool_call_sharing_state(name):
    """The name kept in a global: every expectation made checks the last name asked for."""
    LAST_NAME[:] = [name]

    def expectation(trace, reply):
        wanted = LAST_NAME[0]
        return None if any(wanted in entry["tools"] for entry in trace) else f"expected a call to {wanted!r}"
    return expectation


def test_expect_tool_call_passes_on_an_unusual_answer():
    passes("10.3", expect_tool_call_with_any)


@pytest.mark.parametrize("wrong, words", [
    (expect_tool_call_first_entry, ("it holds here, so it returns None", "Look at every entry of the trace")),
    (expect_tool_call_last_entry, ("it holds here, so it returns None", "not only the first or the last")),
    (expect_tool_call_by_substring, ("expect_tool_call('calc')", "calling ['calculator']", "it does not hold here",
                                     "not one that starts with it")),
    (expect_tool_call_as_a_bool, ("the expectation returned True", "Return None (not True)")),
    (expect_tool_call_other_words, ("the complaint is 'calc was never called'", "it starts with \"expected a call to 'calc'\"",
                                    "in English")),
    (expect_tool_call_eagerly, ("expected a function of (trace, reply)", "The factory makes the expectation")),
    (expect_tool_call_sharing_state, ("expect_tool_call('calculator')", "returns None")),
])
def test_expect_tool_call_fails_on_typical_mistakes(wrong, words):
    fails("10.3", wrong, *words)


def expect_no_tool_calls_counting():
    def expectation(trace, reply):
        count = sum(len(entry["tools"]) for entry in trace)
        return f"expected no tool calls, saw {count} of them" if count else None
    return expectation


def expect_no_tool_calls_first_entry():
    def expectation(trace, reply):
        return f"expected no tool calls, saw {trace[0]['tools']}" if trace and trace[0]["tools"] else None
    return expectation


def expect_no_tool_calls_as_a_bool():
    return lambda trace, reply: not any(entry["tools"] for entry in trace)


def expect_no_tool_calls_other_words():
    def expectation(trace, reply):
        called = [tool for entry in trace for tool in entry["tools"]]
        return f"the agent used {called}" if called else None
    return expectation


def expect_no_tool_calls_parent_only():
    def expectation(trace, reply):
        called = [tool for entry in trace if entry["agent"] == "parent" for tool in entry["tools"]]
        return f"expected no tool calls, saw {called}" if called else None
    return expectation


def test_expect_no_tool_calls_passes_on_an_unusual_answer():
    passes("10.4", expect_no_tool_calls_counting)


@pytest.mark.parametrize("wrong, words", [
    (expect_no_tool_calls_first_entry, ("it does not hold here", "not only the first or the last")),
    (expect_no_tool_calls_as_a_bool, ("the expectation returned True", "Return None (not True)")),
    (expect_no_tool_calls_other_words, ("it says 'expected no tool calls'", "in English")),
    (expect_no_tool_calls_parent_only, ("it does not hold here", "calling ['search']")),
])
def test_expect_no_tool_calls_fails_on_typical_mistakes(wrong, words):
    fails("10.4", wrong, *words)


def expect_reply_contains_casefold(text):
    wanted = text.casefold()
    return lambda trace, reply: (None if wanted in reply.casefold()
                                 else "expected the reply to contain " + repr(text) + ", got " + repr(reply))


def expect_reply_contains_case_sensitive(text):
    def expectation(trace, reply):
        return None if text in reply else f"expected the reply to contain {text!r}, got {reply!r}"
    return expectation


def expect_reply_contains_lowering_one_side(text):
    def expectation(trace, reply):
        return None if text in reply.lower() else f"expected the reply to contain {text!r}, got {reply!r}"
    return expectation


def expect_reply_contains_as_a_bool(text):
    return lambda trace, reply: text.lower() in reply.lower()


def expect_reply_contains_other_words(text):
    def expectation(trace, reply):
        return None if text.lower() in reply.lower() else f"{text!r} is not in {reply!r}"
    return expectation


def test_expect_reply_contains_passes_on_an_unusual_answer():
    passes("10.5", expect_reply_contains_casefold)


@pytest.mark.parametrize("wrong, words", [
    (expect_reply_contains_case_sensitive, ("expect_reply_contains('OKONKWO')", "it holds here", "ignoring case")),
    (expect_reply_contains_lowering_one_side, ("expect_reply_contains('OKONKWO')", "it holds here")),
    (expect_reply_contains_as_a_bool, ("the expectation returned True", "Return None (not True)")),
    (expect_reply_contains_other_words, ("it says 'expected the reply to contain'", "in English")),
])
def test_expect_reply_contains_fails_on_typical_mistakes(wrong, words):
    fails("10.5", wrong, *words)


# --- 10.6 run_evals ------------------------------------------------------------------------------------------------


def run_evals_gathering_lines(client, output_stream, cases):
    """The report made as a list of lines, written at once; the passes counted, the failures returned."""
    lines, passed = [], 0
    for number, case in enumerate(cases, start=1):
        trace = []
        registry = build_registry(client, output_stream, trace)
        reply = agent_turn(client, SYSTEM_PROMPT, registry, [{"role": "user", "content": case["prompt"]}],
                           output_stream, trace=trace)
        complaints = list(filter(None, (check(trace, reply) for check in case["checks"])))
        lines.append(f"[eval] {'FAIL' if complaints else 'PASS'} {case['name']} (case {number})")
        lines.extend("[eval]   - " + complaint for complaint in complaints)
        passed += not complaints
    lines.append(f"[eval] {passed}/{len(cases)} passed")
    output_stream.writelines(line + "\n" for line in lines)
    return len(cases) - passed


def evals_run(client, output_stream, cases, shared_history=False, shared_trace=False, count_passes=False,
              stop_at_failure=False, summary=True):
    """The notebook's run_evals with one thing done otherwise: the base of the wrong answers below."""
    failed, history, trace = 0, [], []
    for case in cases:
        if not shared_trace:
            trace = []
        if not shared_history:
            history = []
        history.append({"role": "user", "content": case["prompt"]})
        reply = agent_turn(client, SYSTEM_PROMPT, build_registry(client, output_stream, trace), history, output_stream,
                           trace=trace)
        complaints = [said for check in case["checks"] if (said := check(trace, reply)) is not None]
        output_stream.write(f"[eval] {'FAIL' if complaints else 'PASS'} {case['name']}\n")
        for complaint in complaints:
            output_stream.write(f"[eval]   - {complaint}\n")
        failed += bool(complaints)
        if complaints and stop_at_failure:
            break
    if summary:
        output_stream.write(f"[eval] {len(cases) - failed}/{len(cases)} passed\n")
    return len(cases) - failed if count_passes else failed


def run_evals_sharing_the_history(client, output_stream, cases):
    return evals_run(client, output_stream, cases, shared_history=True)


def run_evals_sharing_the_trace(client, output_stream, cases):
    return evals_run(client, output_stream, cases, shared_trace=True)


def run_evals_counting_passes(client, output_stream, cases):
    return evals_run(client, output_stream, cases, count_passes=True)


def run_evals_stopping_at_a_failure(client, output_stream, cases):
    return evals_run(client, output_stream, cases, stop_at_failure=True)


def run_evals_without_summary(client, output_stream, cases):
    return evals_run(client, output_stream, cases, summary=False)


def run_evals_registry_untraced(client, output_stream, cases):
    """The subagent's calls never reach the case's trace: the registry made without it."""
    failed = 0
    registry = build_registry(client, output_stream)
    for case in cases:
        trace = []
        reply = agent_turn(client, SYSTEM_PROMPT, registry, [{"role": "user", "content": case["prompt"]}],
                           output_stream, trace=trace)
        complaints = [said for check in case["checks"] if (said := check(trace, reply)) is not None]
        output_stream.write(f"[eval] {'FAIL' if complaints else 'PASS'} {case['name']}\n")
        output_stream.writelines(f"[eval]   - {complaint}\n" for complaint in complaints)
        failed += bool(complaints)
    output_stream.write(f"[eval] {len(cases) - failed}/{len(cases)} passed\n")
    return failed


def test_run_evals_passes_on_unusual_answers():
    passes("10.6", run_evals_gathering_lines)
    passes("10.6", evals_run)


@pytest.mark.parametrize("wrong, words", [
    (run_evals_sharing_the_history, ("started on a history of", "each case starts from its prompt alone",
                                     "Make the history inside the loop")),
    (run_evals_sharing_the_trace, ("[eval]   - expected no tool calls, saw ['calculator', 'research', 'search']",
                                   "a trace of its own")),
    (run_evals_counting_passes, ("run_evals returned 3, the number of cases that passed", "Return the failures")),
    (run_evals_stopping_at_a_failure, ("and stopped", "every case is played, the failed ones too")),
    (run_evals_without_summary, ("wrote no summary after its last case", "expected '[eval] 3/5 passed'")),
    (run_evals_registry_untraced, ("'[eval] FAIL delegates'", "expected a call to 'search'",
                                  "build_registry(client, output_stream, trace)")),
])
def test_run_evals_fails_on_typical_mistakes(wrong, words):
    fails("10.6", wrong, *words)
