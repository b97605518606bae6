"""The checks of notebook 11 (the capstone): they pass on good code written several ways and fail, saying why, on
typical mistakes. The answers read the names the notebook gives them (notebook 8's pieces and constants, cost_of,
agent_turn, build_registry, SYSTEM_PROMPT, and compact once 11.1 is done): while each is checked, the earlier pieces
are the course's, as in a learner's notebook."""

import io
import itertools

import pytest

from looplab import capstone
from looplab.checks import notebook11
from looplab.compaction import (  # noqa: F401 (the names the notebook gives the answers below)
    ACKNOWLEDGEMENT, CONTEXT_LIMIT, KEEP_RECENT, SUMMARY_MAX_TOKENS, SUMMARY_PROMPT, exchange_starts, history_size,
    render_message,
)
from looplab.capstone import compact
from looplab.course import COURSE
from looplab.evals import agent_turn, build_registry, cost_of
from looplab.model_id import MODEL
from looplab.scripted import scripted_client
from looplab.subagent import SYSTEM_PROMPT
from tests.check_helpers import fails, passes, stub, twin
from tests.notebook_code import solution_in_a_folder

STEM = "11_capstone"


@pytest.fixture(scope="module")
def solution(tmp_path_factory):
    """The solution notebook run offline up to its last exercise, in a folder of its own: its names."""
    return solution_in_a_folder(tmp_path_factory.mktemp("notebook11"), STEM, until="11.2")


def test_the_exercises_and_their_points():
    assert [(e.id, e.name, e.points) for e in COURSE.notebook(STEM).exercises] == [
        ("11.1", "compact", 2), ("11.2", "run", 3)]
    for number in COURSE.notebook(STEM).ids:
        assert 2 <= len(COURSE.hints(number)) <= 3


# --- the check's own scenarios, held to the course's reckoning in both languages ---------------------------------


def test_the_splits_written_in_the_table_are_the_courses(spoken_in):
    """Each scenario of compact folds where the course's compact folds, in each language."""
    for scenario in notebook11.UNTRACED_SCENARIOS + notebook11.TRACED_SCENARIOS:
        history = notebook11.made(scenario.given, scenario.wire)
        limit = scenario.limit(history_size(history))
        budget = CONTEXT_LIMIT if limit is None else limit
        starts = exchange_starts(history)
        folds = history_size(history) > budget and len(starts) > KEEP_RECENT
        assert (starts[-KEEP_RECENT] if folds else None) == scenario.split, scenario.key


def played(session):
    """The course's run played through a session of the check: its model, and what it wrote."""
    model = notebook11.SessionModel(session.turns_of)
    client, _ = scripted_client(itertools.repeat(model.answer), call_limit=notebook11.MAX_CALLS)
    output = io.StringIO()
    capstone.run(io.StringIO(session.given), output, client, **session.options)
    return model, output.getvalue()


def test_the_sessions_budgets_hold_in_both_languages(spoken_in):
    """Exchange 1 alone is over the small budget (a fold once line 2 has joined folds too early), exchanges 1 and 2
    together over CONTEXT_LIMIT (a run blind to context_limit folds under the large budget), and after the fold the
    history is still over the small budget (a run compacting after each answer folds again after the last one); the
    fold cuts FOLDED messages, the three agents each call the model."""
    folds, large, _ = notebook11.RUN_SCENARIOS
    model, _ = played(large)
    last = model.of("parent")[-1]
    history = last.request["messages"] + [{"role": "assistant", "content": last.response["content"]}]
    first = exchange_starts(history)[1]
    assert first == notebook11.FOLDED
    assert notebook11.SMALL_BUDGET < history_size(history[:first])
    assert CONTEXT_LIMIT < history_size(history[:exchange_starts(history)[2]]) < notebook11.LARGE_BUDGET
    model, written = played(folds)
    last = model.of("parent")[-1]
    history = last.request["messages"] + [{"role": "assistant", "content": last.response["content"]}]
    assert history_size(history) > notebook11.SMALL_BUDGET
    assert {call.agent for call in model.calls} == {"parent", "subagent", "compactor"}
    assert f"[compact] folded {notebook11.FOLDED} messages into a summary\n" in written


def test_the_checks_pass_the_solutions_own_code(solution):
    for exercise in COURSE.notebook(STEM).exercises:
        passes(exercise.id, solution[exercise.name])


def test_the_checks_pass_the_course_code_in_both_languages(spoken_in):
    passes("11.1", twin(capstone.compact))
    passes("11.2", twin(capstone.run))


@pytest.mark.parametrize("number, course", [("11.1", capstone.compact), ("11.2", capstone.run)])
def test_the_course_function_is_refused(number, course):
    fails(number, course, "course's own")


@pytest.mark.parametrize("number", ["11.1", "11.2"])
def test_the_stub_is_not_written_yet(number):
    fails(number, stub, "not written yet")


# --- 11.1 compact, traced ----------------------------------------------------------------------------------------


def compact_with_helpers(messages, client, output_stream, trace=None, context_limit=CONTEXT_LIMIT):
    """Helpers of its own, the trace extended in place with +=, print() to the stream, the summary joined with a
    space."""
    def cut(messages):
        starts = exchange_starts(messages)
        fits = history_size(messages) <= context_limit or len(starts) <= KEEP_RECENT
        return None if fits else starts[-KEEP_RECENT]

    def ledger(reply):
        names = [block.name for block in reply.content if block.type == "tool_use"]
        return dict(agent="compactor", stop_reason=reply.stop_reason, tools=names, cost=cost_of(reply.usage),
                    input_tokens=reply.usage.input_tokens, output_tokens=reply.usage.output_tokens)

    split = cut(messages)
    if split is None:
        return messages[:]
    reply = client.messages.create(model=MODEL, max_tokens=SUMMARY_MAX_TOKENS, system=SUMMARY_PROMPT,
                                   messages=[{"role": "user", "content": "\n".join(map(render_message,
                                                                                       messages[:split]))}])
    if trace is not None:
        trace += [ledger(reply)]
        made = trace[-1]
        print("[compactor:trace] stop={} tools={} tokens={}+{} cost=${:.6f}".format(
            made["stop_reason"], ",".join(made["tools"]) or "-", made["input_tokens"], made["output_tokens"],
            made["cost"]), file=output_stream)
    summary = " ".join(block.text for block in reply.content if block.type == "text")
    print(f"[compact] folded {split} messages into a summary", file=output_stream)
    return [dict(role="user", content=f"[Conversation summary: {summary}]"),
            dict(role="assistant", content=ACKNOWLEDGEMENT)] + messages[split:]


def compact_writing_once(messages, client, output_stream, trace=None, context_limit=CONTEXT_LIMIT):
    """Both lines written at once, in one write; the entry made after the summary's text is read."""
    starts = exchange_starts(messages)
    if len(starts) <= KEEP_RECENT or not history_size(messages) > context_limit:
        return list(messages)
    split = starts[-1]
    reply = client.messages.create(model=MODEL, max_tokens=SUMMARY_MAX_TOKENS, system=SUMMARY_PROMPT,
                                   messages=[{"role": "user", "content": "\n".join(
                                       render_message(message) for message in messages[:split])}])
    summary = "".join(getattr(block, "text", "") for block in reply.content)
    lines = ""
    if trace is not None:
        usage = reply.usage
        entry = {"agent": "compactor", "stop_reason": reply.stop_reason, "tools": [], "input_tokens":
                 usage.input_tokens, "output_tokens": usage.output_tokens, "cost": cost_of(usage)}
        trace.append(entry)
        lines += (f"[compactor:trace] stop={entry['stop_reason']} tools=- "
                  f"tokens={usage.input_tokens}+{usage.output_tokens} cost=${entry['cost']:.6f}\n")
    output_stream.write(lines + f"[compact] folded {split} messages into a summary\n")
    return [{"role": "user", "content": "[Conversation summary: " + summary + "]"},
            {"role": "assistant", "content": ACKNOWLEDGEMENT}, *messages[split:]]


def traced_compact(messages, client, output_stream, trace=None, context_limit=CONTEXT_LIMIT, *, agent="compactor",
                   tag="compactor:", line_after=False, truthy=False, lines_anyway=False, unguarded=False,
                   replaced=False, rebound=False, printed=False, no_line=False, no_cost=False, tokens_summed=False,
                   tools=None, everything=False, acknowledged=True, deleting=False):
    """The course's traced compact with one thing done otherwise: the base of the wrong answers below."""
    starts = exchange_starts(messages)
    if history_size(messages) <= context_limit or len(starts) <= KEEP_RECENT:
        return list(messages)
    split = starts[-KEEP_RECENT]
    old = messages if everything else messages[:split]
    request = dict(model=MODEL, max_tokens=SUMMARY_MAX_TOKENS, system=SUMMARY_PROMPT,
                   messages=[{"role": "user", "content": "\n".join(render_message(message) for message in old)}])
    reply = client.messages.create(**request, **({"tools": tools} if tools else {}))
    usage = reply.usage
    entry = {"agent": agent, "stop_reason": reply.stop_reason, "tools": [],
             "input_tokens": usage.input_tokens + (usage.output_tokens if tokens_summed else 0),
             "output_tokens": usage.output_tokens, "cost": cost_of(usage)}
    if no_cost:
        del entry["cost"]
    line = (f"[{tag}trace] stop={reply.stop_reason} tools=- tokens={usage.input_tokens}+{usage.output_tokens} "
            f"cost=${cost_of(usage):.6f}\n")
    traced = bool(trace) if truthy else unguarded or trace is not None
    if traced:
        if replaced:
            trace[:] = [entry]
        elif rebound:
            trace = trace + [entry]
        else:
            trace.append(entry)
    if (traced or lines_anyway) and not line_after and not no_line:
        print(line, end="") if printed else output_stream.write(line)
    output_stream.write(f"[compact] folded {split} messages into a summary\n")
    if traced and line_after:
        output_stream.write(line)
    summary = "".join(block.text for block in reply.content if block.type == "text")
    if deleting:
        del messages[:split]
        split = 0
    return [{"role": "user", "content": f"[Conversation summary: {summary}]"},
            *([{"role": "assistant", "content": ACKNOWLEDGEMENT}] if acknowledged else []), *messages[split:]]


def compact_trace_after_context_limit(messages, client, output_stream, context_limit=CONTEXT_LIMIT, trace=None):
    return traced_compact(messages, client, output_stream, trace, context_limit)


def compact_crashing_without_trace(messages, client, output_stream, trace=None, context_limit=CONTEXT_LIMIT):
    return traced_compact(messages, client, output_stream, trace, context_limit, unguarded=True)


def compact_lines_without_trace(messages, client, output_stream, trace=None, context_limit=CONTEXT_LIMIT):
    return traced_compact(messages, client, output_stream, trace, context_limit, lines_anyway=True)


def compact_if_trace(messages, client, output_stream, trace=None, context_limit=CONTEXT_LIMIT):
    return traced_compact(messages, client, output_stream, trace, context_limit, truthy=True)


def compact_as_the_parent(messages, client, output_stream, trace=None, context_limit=CONTEXT_LIMIT):
    return traced_compact(messages, client, output_stream, trace, context_limit, agent="parent")


def compact_tracing_after_the_fold_line(messages, client, output_stream, trace=None, context_limit=CONTEXT_LIMIT):
    return traced_compact(messages, client, output_stream, trace, context_limit, line_after=True)


def compact_replacing_the_trace(messages, client, output_stream, trace=None, context_limit=CONTEXT_LIMIT):
    return traced_compact(messages, client, output_stream, trace, context_limit, replaced=True)


def compact_rebinding_the_trace(messages, client, output_stream, trace=None, context_limit=CONTEXT_LIMIT):
    return traced_compact(messages, client, output_stream, trace, context_limit, rebound=True)


def compact_untagged_line(messages, client, output_stream, trace=None, context_limit=CONTEXT_LIMIT):
    return traced_compact(messages, client, output_stream, trace, context_limit, tag="")


def compact_printing_the_trace_line(messages, client, output_stream, trace=None, context_limit=CONTEXT_LIMIT):
    return traced_compact(messages, client, output_stream, trace, context_limit, printed=True)


def compact_without_the_trace_line(messages, client, output_stream, trace=None, context_limit=CONTEXT_LIMIT):
    return traced_compact(messages, client, output_stream, trace, context_limit, no_line=True)


def compact_entry_without_cost(messages, client, output_stream, trace=None, context_limit=CONTEXT_LIMIT):
    return traced_compact(messages, client, output_stream, trace, context_limit, no_cost=True)


def compact_tokens_summed(messages, client, output_stream, trace=None, context_limit=CONTEXT_LIMIT):
    return traced_compact(messages, client, output_stream, trace, context_limit, tokens_summed=True)


def compact_summary_with_tools(messages, client, output_stream, trace=None, context_limit=CONTEXT_LIMIT):
    calculator = {"name": "calculator", "description": "Arithmetic.",
                  "input_schema": {"type": "object", "properties": {"expression": {"type": "string"}}}}
    return traced_compact(messages, client, output_stream, trace, context_limit, tools=[calculator])


def compact_summarising_everything(messages, client, output_stream, trace=None, context_limit=CONTEXT_LIMIT):
    return traced_compact(messages, client, output_stream, trace, context_limit, everything=True)


def compact_without_the_acknowledgement(messages, client, output_stream, trace=None, context_limit=CONTEXT_LIMIT):
    return traced_compact(messages, client, output_stream, trace, context_limit, acknowledged=False)


def compact_deleting_the_old_messages(messages, client, output_stream, trace=None, context_limit=CONTEXT_LIMIT):
    return traced_compact(messages, client, output_stream, trace, context_limit, deleting=True)


def compact_whatever_the_size(messages, client, output_stream, trace=None, context_limit=CONTEXT_LIMIT):
    return traced_compact(messages, client, output_stream, trace, 0)


def compact_tracing_the_kept_history(messages, client, output_stream, trace=None, context_limit=CONTEXT_LIMIT):
    """An entry for the summary and, when nothing is folded, one of nothing."""
    folded = traced_compact(messages, client, output_stream, trace, context_limit)
    if trace is not None and len(folded) == len(messages):
        trace.append({"agent": "compactor", "stop_reason": None, "tools": [], "input_tokens": 0, "output_tokens": 0,
                      "cost": 0.0})
    return folded


def test_compact_passes_on_unusual_answers():
    passes("11.1", compact_with_helpers)
    passes("11.1", compact_writing_once)
    passes("11.1", lambda *args, **kwargs: traced_compact(*args, **kwargs))


@pytest.mark.parametrize("wrong, words", [
    (compact_trace_after_context_limit, ("compact(messages, client, output_stream, None, context_limit=300)",
                                         "multiple values for argument 'context_limit'",
                                         "Put trace fourth")),
    (compact_crashing_without_trace, ("compact(messages, client, output_stream, None, context_limit=300)",
                                      "AttributeError: 'NoneType' object has no attribute 'append'",
                                      "if trace is not None")),
    (compact_lines_without_trace, ("with no trace, compact wrote '[compactor:trace] stop=end_turn tools=- tokens=",
                                   "writes the [compact] line alone", "if trace is not None")),
    (compact_if_trace, ("compact was handed an empty list as trace, and it got no entry",
                        "never if trace")),
    (compact_as_the_parent, ("says \"agent\": \"parent\"", "the compactor's", "\"agent\": \"compactor\"")),
    (compact_tracing_after_the_fold_line, ("comes after the [compact] line",
                                           "expected '[compactor:trace] stop=end_turn tools=- tokens=",
                                           "right after the summary call")),
    (compact_replacing_the_trace, ("the list handed as trace starts with", "its earlier entry",
                                   "never trace.clear()")),
    (compact_rebinding_the_trace, ("the list handed as trace got no entry", "trace = trace + [entry]")),
    (compact_untagged_line, ("compact wrote '[trace] stop=end_turn tools=- tokens=", "untagged",
                             "[compactor:trace] stop=...")),
    (compact_printing_the_trace_line, ("compact printed '[compactor:trace] stop=end_turn",
                                       "write it to output_stream")),
    (compact_without_the_trace_line, ("and no [compactor:trace] line", "As soon as the summary call returns")),
    (compact_entry_without_cost, ("has the keys", "expected exactly ['agent', 'stop_reason', 'tools'",)),
    (compact_tokens_summed, ("entry.input_tokens", "reply.usage")),
    (compact_summary_with_tools, ("the summary call sent the system prompt", "no tools")),
    (compact_summarising_everything, ("the summary call read the whole history", "messages[:8]",
                                      "render_message(message) for message in messages[:split]")),
    (compact_without_the_acknowledgement, ("expected the acknowledgement", "two user messages in a row")),
    (compact_deleting_the_old_messages, ("compact changed the list it was handed", "messages[0].content",
                                         "never del messages[:split]")),
    (compact_whatever_the_size, ("compact(messages, client, output_stream, context_limit=5000), no trace",
                                 "the history fits", "call no model")),
    (compact_tracing_the_kept_history, ("nothing is to be folded, so no model is called, but the trace became",
                                        "append the entry only after the summary call")),
])
def test_compact_fails_on_typical_mistakes(wrong, words):
    fails("11.1", wrong, *words)


# --- 11.2 run ----------------------------------------------------------------------------------------------------


def run_with_iter(input_stream, output_stream, client, system=SYSTEM_PROMPT, context_limit=CONTEXT_LIMIT,
                  echo_input=False):
    """The lines read with iter(readline, ""), print() to the stream, compact's arguments by keyword."""
    ledger, history = [], []
    tools = build_registry(client, output_stream, trace=ledger)
    output_stream.write("User> ")
    for line in iter(input_stream.readline, ""):
        line = line.strip()
        if not line:
            break
        if echo_input:
            print(line, file=output_stream)
        history = compact(history, client, output_stream, trace=ledger, context_limit=context_limit)
        history = history + [{"role": "user", "content": line}]
        print("Agent>", agent_turn(client, system, tools, history, output_stream, trace=ledger), file=output_stream)
        output_stream.write("User> ")
    if len(ledger) > 0:
        print(f"[trace] session total: {len(ledger)} model calls, ${sum(e['cost'] for e in ledger):.6f}",
              file=output_stream)


def typed_lines(input_stream, output_stream, echo):
    while True:
        output_stream.write("User> ")
        line = input_stream.readline().strip()
        if not line:
            return
        if echo:
            output_stream.write(line + "\n")
        yield line


def run_with_a_generator(input_stream, output_stream, client, system=SYSTEM_PROMPT, context_limit=CONTEXT_LIMIT,
                         echo_input=False):
    """The lines from a generator of its own; the total from the costs gathered in a loop."""
    trace = []
    registry = build_registry(client, output_stream, trace)
    messages = []
    for line in typed_lines(input_stream, output_stream, echo_input):
        messages = compact(messages, client, output_stream, trace, context_limit)
        messages.append({"role": "user", "content": line})
        output_stream.write("Agent> " + agent_turn(client, system, registry, messages, output_stream, trace=trace)
                            + "\n")
    total = 0.0
    for entry in trace:
        total += entry["cost"]
    if trace:
        output_stream.write("[trace] session total: %d model calls, $%.6f\n" % (len(trace), total))


def session(input_stream, output_stream, client, system=SYSTEM_PROMPT, context_limit=CONTEXT_LIMIT, echo_input=False,
            registry_traced=True, compact_traced=True, turn_traced=True, trace_per_turn=False, total="end",
            after=False, echo="before", keep=True, limit=None, own_system=True, skip_empty=False,
            decimals=6, only_parent=False, printed_total=False, limit_as_trace=False):
    """The notebook's run with one thing done otherwise: the base of the wrong answers below."""
    trace = []
    registry = build_registry(client, output_stream, trace if registry_traced else None)
    messages = []
    while True:
        output_stream.write("User> ")
        line = input_stream.readline()
        if not line:
            break
        if not line.strip():
            if skip_empty:
                continue
            break
        line = line.strip()
        if trace_per_turn:
            trace = []
            registry = build_registry(client, output_stream, trace)
        if (echo_input and echo in ("before", "twice")) or echo == "always":
            output_stream.write(line + "\n")
        if echo_input and echo == "twice":
            output_stream.write(line + "\n")
        budget = context_limit if limit is None else limit
        if not after:
            if limit_as_trace:
                folded = compact(messages, client, output_stream, budget)
            else:
                folded = compact(messages, client, output_stream, trace if compact_traced else None, budget)
            messages = folded if keep else messages
        if echo_input and echo == "after compact":
            output_stream.write(line + "\n")
        messages.append({"role": "user", "content": line})
        if after:
            messages = compact(messages, client, output_stream, trace if compact_traced else None, budget)
        reply = agent_turn(client, system if own_system else SYSTEM_PROMPT, registry, messages, output_stream,
                           trace=trace if turn_traced else None)
        output_stream.write(f"Agent> {reply}\n")
        if total == "each turn":
            output_stream.write(f"[trace] session total: {len(trace)} model calls, "
                                f"${sum(entry['cost'] for entry in trace):.6f}\n")
    counted = [entry for entry in trace if entry["agent"] == "parent"] if only_parent else trace
    said = f"[trace] session total: {len(counted)} model calls, ${sum(e['cost'] for e in counted):.{decimals}f}"
    if total == "end" and trace:
        print(said) if printed_total else output_stream.write(said + "\n")
    if total == "always":
        output_stream.write(said + "\n")


def run_registry_untraced(input_stream, output_stream, client, system=SYSTEM_PROMPT, context_limit=CONTEXT_LIMIT,
                          echo_input=False):
    session(input_stream, output_stream, client, system, context_limit, echo_input, registry_traced=False)


def run_compact_untraced(input_stream, output_stream, client, system=SYSTEM_PROMPT, context_limit=CONTEXT_LIMIT,
                         echo_input=False):
    session(input_stream, output_stream, client, system, context_limit, echo_input, compact_traced=False)


def run_turn_untraced(input_stream, output_stream, client, system=SYSTEM_PROMPT, context_limit=CONTEXT_LIMIT,
                      echo_input=False):
    session(input_stream, output_stream, client, system, context_limit, echo_input, turn_traced=False)


def run_with_a_trace_per_turn(input_stream, output_stream, client, system=SYSTEM_PROMPT, context_limit=CONTEXT_LIMIT,
                              echo_input=False):
    session(input_stream, output_stream, client, system, context_limit, echo_input, trace_per_turn=True)


def run_total_when_nothing_typed(input_stream, output_stream, client, system=SYSTEM_PROMPT,
                                 context_limit=CONTEXT_LIMIT, echo_input=False):
    session(input_stream, output_stream, client, system, context_limit, echo_input, total="always")


def run_without_total(input_stream, output_stream, client, system=SYSTEM_PROMPT, context_limit=CONTEXT_LIMIT,
                      echo_input=False):
    session(input_stream, output_stream, client, system, context_limit, echo_input, total=None)


def run_total_each_turn(input_stream, output_stream, client, system=SYSTEM_PROMPT, context_limit=CONTEXT_LIMIT,
                        echo_input=False):
    session(input_stream, output_stream, client, system, context_limit, echo_input, total="each turn")


def run_total_in_cents(input_stream, output_stream, client, system=SYSTEM_PROMPT, context_limit=CONTEXT_LIMIT,
                       echo_input=False):
    session(input_stream, output_stream, client, system, context_limit, echo_input, decimals=2)


def run_counting_the_parent_only(input_stream, output_stream, client, system=SYSTEM_PROMPT,
                                 context_limit=CONTEXT_LIMIT, echo_input=False):
    session(input_stream, output_stream, client, system, context_limit, echo_input, only_parent=True)


def run_printing_the_total(input_stream, output_stream, client, system=SYSTEM_PROMPT, context_limit=CONTEXT_LIMIT,
                           echo_input=False):
    session(input_stream, output_stream, client, system, context_limit, echo_input, printed_total=True)


def run_compacting_after_the_line(input_stream, output_stream, client, system=SYSTEM_PROMPT,
                                  context_limit=CONTEXT_LIMIT, echo_input=False):
    session(input_stream, output_stream, client, system, context_limit, echo_input, after=True)


def run_discarding_compacts_result(input_stream, output_stream, client, system=SYSTEM_PROMPT,
                                   context_limit=CONTEXT_LIMIT, echo_input=False):
    session(input_stream, output_stream, client, system, context_limit, echo_input, keep=False)


def run_ignoring_context_limit(input_stream, output_stream, client, system=SYSTEM_PROMPT, context_limit=CONTEXT_LIMIT,
                               echo_input=False):
    session(input_stream, output_stream, client, system, context_limit, echo_input, limit=CONTEXT_LIMIT)


def run_handing_context_limit_as_trace(input_stream, output_stream, client, system=SYSTEM_PROMPT,
                                       context_limit=CONTEXT_LIMIT, echo_input=False):
    session(input_stream, output_stream, client, system, context_limit, echo_input, limit_as_trace=True)


def run_ignoring_system(input_stream, output_stream, client, system=SYSTEM_PROMPT, context_limit=CONTEXT_LIMIT,
                        echo_input=False):
    session(input_stream, output_stream, client, system, context_limit, echo_input, own_system=False)


def run_past_an_empty_line(input_stream, output_stream, client, system=SYSTEM_PROMPT, context_limit=CONTEXT_LIMIT,
                           echo_input=False):
    session(input_stream, output_stream, client, system, context_limit, echo_input, skip_empty=True)


def run_without_echo(input_stream, output_stream, client, system=SYSTEM_PROMPT, context_limit=CONTEXT_LIMIT,
                     echo_input=False):
    session(input_stream, output_stream, client, system, context_limit, echo_input, echo=None)


def run_echoing_always(input_stream, output_stream, client, system=SYSTEM_PROMPT, context_limit=CONTEXT_LIMIT,
                       echo_input=False):
    session(input_stream, output_stream, client, system, context_limit, echo_input, echo="always")


def run_echoing_twice(input_stream, output_stream, client, system=SYSTEM_PROMPT, context_limit=CONTEXT_LIMIT,
                      echo_input=False):
    session(input_stream, output_stream, client, system, context_limit, echo_input, echo="twice")


def run_echoing_after_compact(input_stream, output_stream, client, system=SYSTEM_PROMPT, context_limit=CONTEXT_LIMIT,
                              echo_input=False):
    session(input_stream, output_stream, client, system, context_limit, echo_input, echo="after compact")


def test_run_passes_on_unusual_answers():
    passes("11.2", run_with_iter)
    passes("11.2", run_with_a_generator)
    passes("11.2", session)


@pytest.mark.parametrize("wrong, words", [
    (run_registry_untraced, ("the output has no line '[subagent:trace] stop=tool_use tools=search tokens=",
                             "the researcher's model calls never reached the trace",
                             "build_registry(client, output_stream, trace)")),
    (run_compact_untraced, ("the output has no line '[compactor:trace] stop=end_turn tools=- tokens=",
                            "the summary call never reached the trace",
                            "compact(messages, client, output_stream, trace, context_limit)")),
    (run_turn_untraced, ("the output has no line '[trace] stop=tool_use tools=research tokens=",
                         "the parent's model calls never reached the trace", "trace=trace")),
    (run_with_a_trace_per_turn, ("run wrote '[trace] session total: 2 model calls, $",
                                 "the calls of the last turn alone", "'[trace] session total: 8 model calls, $",
                                 "Make the trace once, before the loop")),
    (run_total_when_nothing_typed, ("a session where nothing is typed",
                                    "'User> [trace] session total: 0 model calls, $0.000000\\n'",
                                    "though no model was called", "if trace:")),
    (run_without_total, ("the output has no session total", "'[trace] session total: 8 model calls, $",
                         "after the loop")),
    (run_total_each_turn, ("run wrote a session total 3 times", "after the loop, not in it")),
    (run_total_in_cents, ("run wrote '[trace] session total: 8 model calls, $0.01\\n'",
                          "expected '[trace] session total: 8 model calls, $0.00", "six decimals")),
    (run_counting_the_parent_only, ("run wrote '[trace] session total: 5 model calls, $",
                                    "the parent's 5, the researcher's 2, the compactor's 1",
                                    "the total counts len(trace) calls")),
    (run_printing_the_total, ("the session's total was printed with print()", "write it to output_stream")),
    (run_compacting_after_the_line, ("folded once turn 1 was answered",
                                     "compact ran after the new line joined the history", "before appending it")),
    (run_discarding_compacts_result, ("the request of turn 3 starts with", "expected the summary",
                                      "messages = compact(...)")),
    (run_ignoring_context_limit, ("with context_limit=100000", "folded after turn 2",
                                  "fits in context_limit=100000", "not CONTEXT_LIMIT")),
    (run_handing_context_limit_as_trace, ("AttributeError: 'int' object has no attribute 'append'",
                                          "compact was handed context_limit where its trace goes",
                                          "compact(messages, client, output_stream, trace, context_limit)")),
    (run_ignoring_system, ("the parent's model call 1 did not send the system prompt run was handed",
                           "SYSTEM_PROMPT is only its default")),
    (run_past_an_empty_line, ("called again after the empty line", "an empty line ends the session")),
    (run_without_echo, ("with echo_input=True, the line of turn 1, 'Who founded Halden Robotics, and when?', is not "
                        "written back", "line.strip() + \"\\n\"")),
    (run_echoing_always, ("run wrote the line it read, 'Who founded Halden Robotics, and when?', back, though "
                          "echo_input is False", "Its default is False")),
    (run_echoing_twice, ("the line of turn 1, 'Who founded Halden Robotics, and when?', is written back more than "
                         "once", "Write the line back once")),
    (run_echoing_after_compact, ("the line of turn 3, 'Thanks! And what is the office cat called?', is written back, "
                                 "but not right after \"User> \"", "before compact")),
])
def test_run_fails_on_typical_mistakes(wrong, words):
    fails("11.2", wrong, *words)


def test_run_fails_in_french_with_french_words(monkeypatch):
    """The check speaks French too: its rows, and the session's lines in the check's language."""
    monkeypatch.setenv("LOOPLAB_LANG", "fr")
    fails("11.2", run_without_echo, "avec echo_input=True, la ligne du tour 1, 'Qui a fondé Halden Robotics, et "
                                    "quand ?', n'est pas réécrite")
    fails("11.1", compact_if_trace, "une liste vide est une liste")
