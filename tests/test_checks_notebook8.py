"""The checks of notebook 8 (context compaction): they pass on good code written several ways and fail, saying why, on
typical mistakes. The answers to 8.3 and 8.4 read the names the notebook gives them (history_size, summarise, part,
KEEP_RECENT, CONTEXT_LIMIT, ACKNOWLEDGEMENT, agent_turn, and its earlier exercises' functions): while each is checked,
the earlier pieces are the course's, as in a learner's notebook."""

import itertools
import sys

import pytest

from looplab import compaction
from looplab.checks import notebook8
from looplab.compaction import (  # noqa: F401 (the names the notebook gives the answers below)
    ACKNOWLEDGEMENT, CONTEXT_LIMIT, KEEP_RECENT, compact, exchange_starts, history_size, part, render_message,
    summarise,
)
from looplab.course import COURSE
from looplab.robust import agent_turn
from tests.check_helpers import fails, passes, stub, twin
from tests.notebook_code import solution_in_a_folder

STEM = "08_context_compaction"


@pytest.fixture(scope="module")
def solution(tmp_path_factory):
    """The solution notebook run once, offline, in a folder of its own (it writes agent_compaction.py): its names."""
    return solution_in_a_folder(tmp_path_factory.mktemp("notebook8"), STEM)


def test_the_exercises_and_their_points():
    assert [(e.id, e.name, e.points) for e in COURSE.notebook(STEM).exercises] == [
        ("8.1", "render_message", 2), ("8.2", "exchange_starts", 1), ("8.3", "compact", 3), ("8.4", "run", 2)]
    for number in COURSE.notebook(STEM).ids:
        assert 2 <= len(COURSE.hints(number)) <= 3


# --- the check's own scenarios, held to the course's reckoning in both languages ---------------------------------


def test_the_splits_written_in_the_table_are_the_courses(spoken_in):
    """Each scenario of compact folds where the course's compact folds, and keeps what it keeps, in each language:
    the budgets are on the same side of every history's size in English and in French."""
    for scenario in notebook8.COMPACT_SCENARIOS:
        history = notebook8.made(scenario.given, scenario.wire)
        limit = scenario.limit(history_size(history))
        budget = CONTEXT_LIMIT if limit is None else limit
        starts = exchange_starts(history)
        folds = history_size(history) > budget and len(starts) > KEEP_RECENT
        assert (starts[-KEEP_RECENT] if folds else None) == scenario.split, scenario.key
    for scenario in notebook8.STARTS_SCENARIOS:
        assert exchange_starts(notebook8.made(scenario.given, scenario.wire)) == scenario.expected, scenario.key


def test_the_sessions_budgets_hold_in_both_languages(spoken_in):
    """Exchange 1 alone is over the small budget (a fold once line 2 has joined folds too early), exchanges 1 and 2
    together over CONTEXT_LIMIT (a run blind to context_limit folds under the large budget), and after the fold the
    history is still over the small budget (a run compacting after the last answer folds again)."""
    history = []
    for line, replies in zip(notebook8.SESSION_LINES, notebook8.TURNS):
        history.append({"role": "user", "content": line.now()})
        history.append({"role": "assistant", "content": notebook8.final_words(replies)})
    first, second = history_size(history[:2]), history_size(history[:4])
    assert notebook8.SMALL_BUDGET < first < CONTEXT_LIMIT < second < notebook8.LARGE_BUDGET
    assert history_size(history[2:]) > notebook8.SMALL_BUDGET


def test_the_checks_pass_the_solutions_own_code(solution):
    for exercise in COURSE.notebook(STEM).exercises:
        passes(exercise.id, solution[exercise.name])


def test_the_checks_pass_the_course_code_in_both_languages(spoken_in):
    passes("8.1", twin(compaction.render_message))
    passes("8.2", twin(compaction.exchange_starts))
    passes("8.3", twin(compaction.compact))
    passes("8.4", twin(compaction.run))


# --- 8.1 render_message ------------------------------------------------------------------------------------------


def render_with_isinstance(message):
    """No part: each kind of block read its own way; the lines built in a loop."""
    role, content = message["role"], message["content"]
    if isinstance(content, str):
        return role + ": " + content
    lines = []
    for block in content:
        data = block if isinstance(block, dict) else block.model_dump()
        if data["type"] == "text":
            lines.append(role + ": " + data["text"])
        elif data["type"] == "tool_use":
            lines.append(f"{role} called {data['name']}({data['input']!s})")
        elif data["type"] == "tool_result":
            inner = data.get("content")
            said = inner if isinstance(inner, str) else " ".join(
                item["text"] for item in inner if item.get("type") == "text")
            lines.append("tool result: " + said)
    return "\n".join(lines)


def render_with_match(message):
    """A match statement and a comprehension, the fields read through getattr with a default."""
    def field(block, key):
        return block.get(key) if isinstance(block, dict) else getattr(block, key, None)

    def line(block):
        match field(block, "type"):
            case "text":
                return [f"{message['role']}: {field(block, 'text')}"]
            case "tool_use":
                return [f"{message['role']} called {field(block, 'name')}({field(block, 'input')})"]
            case "tool_result":
                inner = field(block, "content")
                if isinstance(inner, list):
                    inner = " ".join(field(item, "text") for item in inner if field(item, "type") == "text")
                return [f"tool result: {inner}"]
        return []

    if isinstance(message["content"], str):
        return f"{message['role']}: {message['content']}"
    return "\n".join(text for block in message["content"] for text in line(block))


def render_dict_only(message):
    role, content = message["role"], message["content"]
    if isinstance(content, str):
        return f"{role}: {content}"
    lines = []
    for block in content:
        if block["type"] == "text":
            lines.append(f"{role}: {block['text']}")
        elif block["type"] == "tool_use":
            lines.append(f"{role} called {block['name']}({block['input']})")
        elif block["type"] == "tool_result":
            lines.append(f"tool result: {block['content']}")
    return "\n".join(lines)


def render_attributes_only(message):
    role, content = message["role"], message["content"]
    if isinstance(content, str):
        return f"{role}: {content}"
    lines = []
    for block in content:
        if block.type == "text":
            lines.append(f"{role}: {block.text}")
        elif block.type == "tool_use":
            lines.append(f"{role} called {block.name}({block.input})")
    return "\n".join(lines)


def rendered_lines(message, call_line=None, result_line=None, every_block=False):
    """The course's lines of a message, some rendered another way: the base of the wrong answers below."""
    role, content = message["role"], message["content"]
    if isinstance(content, str):
        return [f"{role}: {content}"]
    lines = []
    for block in content:
        kind = part(block, "type")
        if kind == "tool_use" and call_line:
            lines.append(call_line(role, block))
        elif kind == "tool_result" and result_line:
            lines.append(result_line(block))
        elif kind in ("text", "tool_use", "tool_result"):
            lines.append(render_message({"role": role, "content": [block]}))
        elif every_block:
            lines.append(f"{role}: {part(block, 'thinking')}")
    return lines


def render_call_without_input(message):
    return "\n".join(rendered_lines(message, call_line=lambda role, block: f"{role} called {part(block, 'name')}"))


def render_result_content_as_is(message):
    return "\n".join(rendered_lines(message, result_line=lambda block: f"tool result: {part(block, 'content')}"))


def render_first_block_only(message):
    return rendered_lines(message)[0] if rendered_lines(message) else ""


def render_joined_with_a_space(message):
    return " ".join(rendered_lines(message))


def render_thinking_too(message):
    return "\n".join(rendered_lines(message, every_block=True))


def render_role_user(message):
    return "\n".join(line.replace("assistant: ", "user: ", 1) if line.startswith("assistant: ") else line
                     for line in rendered_lines(message))


def render_a_list(message):
    return rendered_lines(message)


def test_render_message_passes_on_the_reference_and_unusual_answers():
    passes("8.1", twin(compaction.render_message))
    passes("8.1", render_with_isinstance)
    passes("8.1", render_with_match)


def test_render_message_the_course_function_is_refused():
    fails("8.1", compaction.render_message, "course's own")


def test_render_message_stub_is_not_written_yet():
    fails("8.1", stub, "not written yet")


@pytest.mark.parametrize("wrong, words", [
    (render_dict_only, ("a reply of the model", "'TextBlock' object is not subscriptable", "part(block, key)")),
    (render_attributes_only, ("a reply in wire form", "'dict' object has no attribute", "part(block, key)")),
    (render_call_without_input, ("line 2 is 'assistant called get_weather'",
                                 "expected \"assistant called get_weather({'city': 'Paris'})\"",
                                 "as Python prints a dict")),
    (render_result_content_as_is, ("a tool result whose content is a list of text blocks",
                                   "line 1 is \"tool result: [{'type': 'text', 'text': '9544717'}",
                                   "expected 'tool result: 9544717 (exact)'", "joined with a space")),
    (render_first_block_only, ("returned 1 line(s), 'assistant: Let me check.'; expected 2",
                               "not the first one only")),
    (render_joined_with_a_space, ("its lines are joined with a space", "\"\\n\".join(lines)")),
    (render_thinking_too, ("a reply that thinks", "a thinking block gives no line")),
    (render_role_user, ("an assistant message whose content is a str", "line 1 is 'user: Understood",
                        "the role is the message's, 'assistant'")),
    (render_a_list, ("returned a list", "not a str")),
])
def test_render_message_fails_on_typical_mistakes(wrong, words):
    fails("8.1", wrong, *words)


# --- 8.2 exchange_starts -----------------------------------------------------------------------------------------


def starts_with_a_loop(messages):
    starts = []
    for index, message in enumerate(messages):
        if message["role"] != "user":
            continue
        content = message["content"]
        if isinstance(content, list) and any(part(block, "type") == "tool_result" for block in content):
            continue
        starts.append(index)
    return starts


def starts_with_all(messages):
    """Only the user messages' blocks are read, and those are dicts: the program writes them."""
    return [i for i, m in enumerate(messages)
            if m["role"] == "user" and (type(m["content"]) is str or all(b["type"] != "tool_result"
                                                                        for b in m["content"]))]


def starts_every_user_message(messages):
    return [index for index, message in enumerate(messages) if message["role"] == "user"]


def starts_str_only(messages):
    return [index for index, message in enumerate(messages)
            if message["role"] == "user" and isinstance(message["content"], str)]


def starts_off_by_one(messages):
    return [index + 1 for index in starts_with_a_loop(messages)]


def starts_any_text_block(messages):
    return [index for index, message in enumerate(messages) if message["role"] == "user"
            and (isinstance(message["content"], str)
                 or any(part(block, "type") == "text" for block in message["content"]))]


def starts_without_the_role(messages):
    return [index for index, message in enumerate(messages) if isinstance(message["content"], str)
            or not any(part(block, "type") == "tool_result" for block in message["content"])]


def starts_a_generator(messages):
    return (index for index in starts_with_a_loop(messages))


def test_exchange_starts_passes_on_the_reference_and_unusual_answers():
    passes("8.2", twin(compaction.exchange_starts))
    passes("8.2", starts_with_a_loop)
    passes("8.2", starts_with_all)


def test_exchange_starts_the_course_function_is_refused():
    fails("8.2", compaction.exchange_starts, "course's own")


def test_exchange_starts_stub_is_not_written_yet():
    fails("8.2", stub, "not written yet")


@pytest.mark.parametrize("wrong, words", [
    (starts_every_user_message, ("returned [0, 2, 4]; expected [0, 4]", "messages[2] holds tool results",
                                 "the middle of an exchange")),
    (starts_str_only, ("returned [0]; expected [0, 2]", "messages[2]", "a line typed as a list of text blocks")),
    (starts_off_by_one, ("returned [1, 3]; expected [0, 2]", "one too many", "start at 0")),
    (starts_any_text_block, ("tool results come with a text block", "messages[2] holds tool results",
                             "even with a text block")),
    (starts_without_the_role, ("returned [0, 1, 2, 3]; expected [0, 2]", "messages[1] is an assistant message",
                               "message[\"role\"] == \"user\"")),
    (starts_a_generator, ("returned a generator", "not a list")),
])
def test_exchange_starts_fails_on_typical_mistakes(wrong, words):
    fails("8.2", wrong, *words)


# --- 8.3 compact -------------------------------------------------------------------------------------------------


def summary_and_acknowledgement(summary):
    return [{"role": "user", "content": f"[Conversation summary: {summary}]"},
            {"role": "assistant", "content": ACKNOWLEDGEMENT}]


def compact_with_slices(messages, client, output_stream, context_limit=CONTEXT_LIMIT):
    """Early returns, a copy by slicing, the result by concatenation."""
    if history_size(messages) <= context_limit:
        return messages[:]
    starts = exchange_starts(messages)
    if len(starts) <= KEEP_RECENT:
        return messages[:]
    split = starts[len(starts) - KEEP_RECENT]
    summary = summarise(messages[:split], client)
    output_stream.write("[compact] folded " + str(split) + " messages into a summary\n")
    return summary_and_acknowledgement(summary) + messages[split:]


def compact_with_itertools(messages, client, output_stream, context_limit=CONTEXT_LIMIT):
    """One condition for both cases, itertools for the parts, print() to the stream it is handed."""
    starts = exchange_starts(messages)
    if len(starts) > KEEP_RECENT and history_size(messages) > context_limit:
        split = starts[-KEEP_RECENT]
        old = list(itertools.islice(messages, split))
        summary = summarise(old, client)
        print(f"[compact] folded {len(old)} messages into a summary", file=output_stream)
        return list(itertools.chain(summary_and_acknowledgement(summary), itertools.islice(messages, split, None)))
    return messages


def folding(messages, client, output_stream, split, summary=None):
    """The fold itself, at a given split: the base of the wrong answers below."""
    summary = summarise(messages[:split], client) if summary is None else summary
    output_stream.write(f"[compact] folded {split} messages into a summary\n")
    return summary_and_acknowledgement(summary) + messages[split:]


def over_budget(messages, context_limit):
    return history_size(messages) > context_limit and len(exchange_starts(messages)) > KEEP_RECENT


def compact_cut_at_the_last_user_message(messages, client, output_stream, context_limit=CONTEXT_LIMIT):
    if not over_budget(messages, context_limit):
        return list(messages)
    split = max(index for index, message in enumerate(messages) if message["role"] == "user")
    return folding(messages, client, output_stream, split)


def compact_keeping_the_last_two_messages(messages, client, output_stream, context_limit=CONTEXT_LIMIT):
    if not over_budget(messages, context_limit):
        return list(messages)
    return folding(messages, client, output_stream, len(messages) - 2)


def compact_without_the_acknowledgement(messages, client, output_stream, context_limit=CONTEXT_LIMIT):
    if not over_budget(messages, context_limit):
        return list(messages)
    split = exchange_starts(messages)[-KEEP_RECENT]
    folded = folding(messages, client, output_stream, split)
    return [folded[0], *folded[2:]]


def compact_summary_unwrapped(messages, client, output_stream, context_limit=CONTEXT_LIMIT):
    if not over_budget(messages, context_limit):
        return list(messages)
    split = exchange_starts(messages)[-KEEP_RECENT]
    folded = folding(messages, client, output_stream, split)
    return [{"role": "user", "content": folded[0]["content"][len("[Conversation summary: "):-1]}, *folded[1:]]


def compact_printing_the_line(messages, client, output_stream, context_limit=CONTEXT_LIMIT):
    if not over_budget(messages, context_limit):
        return list(messages)
    split = exchange_starts(messages)[-KEEP_RECENT]
    print(f"[compact] folded {split} messages into a summary")
    return summary_and_acknowledgement(summarise(messages[:split], client)) + messages[split:]


def compact_without_the_line(messages, client, output_stream, context_limit=CONTEXT_LIMIT):
    if not over_budget(messages, context_limit):
        return list(messages)
    split = exchange_starts(messages)[-KEEP_RECENT]
    return summary_and_acknowledgement(summarise(messages[:split], client)) + messages[split:]


def compact_whatever_the_size(messages, client, output_stream, context_limit=CONTEXT_LIMIT):
    starts = exchange_starts(messages)
    if len(starts) <= KEEP_RECENT:
        return list(messages)
    return folding(messages, client, output_stream, starts[-KEEP_RECENT])


def compact_ignoring_context_limit(messages, client, output_stream, context_limit=CONTEXT_LIMIT):
    if not over_budget(messages, CONTEXT_LIMIT):
        return list(messages)
    return folding(messages, client, output_stream, exchange_starts(messages)[-KEEP_RECENT])


def compact_folding_at_the_budget(messages, client, output_stream, context_limit=CONTEXT_LIMIT):
    if history_size(messages) < context_limit or len(exchange_starts(messages)) <= KEEP_RECENT:
        return list(messages)
    return folding(messages, client, output_stream, exchange_starts(messages)[-KEEP_RECENT])


def compact_even_one_exchange(messages, client, output_stream, context_limit=CONTEXT_LIMIT):
    if history_size(messages) <= context_limit:
        return list(messages)
    return folding(messages, client, output_stream, exchange_starts(messages)[-KEEP_RECENT])


def compact_deleting_the_old_messages(messages, client, output_stream, context_limit=CONTEXT_LIMIT):
    if not over_budget(messages, context_limit):
        return messages
    split = exchange_starts(messages)[-KEEP_RECENT]
    summary = summarise(messages[:split], client)
    del messages[:split]
    output_stream.write(f"[compact] folded {split} messages into a summary\n")
    return summary_and_acknowledgement(summary) + messages


def compact_one_call_per_exchange(messages, client, output_stream, context_limit=CONTEXT_LIMIT):
    if not over_budget(messages, context_limit):
        return list(messages)
    starts = exchange_starts(messages)
    split = starts[-KEEP_RECENT]
    ends = starts[1:]
    summary = " ".join(summarise(messages[start:end], client) for start, end in zip(starts, ends))
    return folding(messages, client, output_stream, split, summary)


def compact_summarising_everything(messages, client, output_stream, context_limit=CONTEXT_LIMIT):
    if not over_budget(messages, context_limit):
        return list(messages)
    return folding(messages, client, output_stream, exchange_starts(messages)[-KEEP_RECENT],
                   summarise(messages, client))


def test_compact_passes_on_the_reference_and_unusual_answers():
    passes("8.3", twin(compaction.compact))
    passes("8.3", compact_with_slices)
    passes("8.3", compact_with_itertools)


def test_compact_the_course_function_is_refused():
    fails("8.3", compaction.compact, "course's own")


def test_compact_stub_is_not_written_yet():
    fails("8.3", stub, "not written yet")


@pytest.mark.parametrize("wrong, words", [
    (compact_cut_at_the_last_user_message, ("compact of three exchanges", "starting with tool results",
                                            "the last exchange starts at messages[8]", "never at the last user")),
    (compact_keeping_the_last_two_messages, ("kept 2 message(s) starting with tool results",
                                             "never a number of messages counted from the end")),
    (compact_without_the_acknowledgement, ("expected the acknowledgement", "two user messages in a row")),
    (compact_summary_unwrapped, ("the first message returned is", "[Conversation summary: ...]",
                                 "expected {\"role\": \"user\", \"content\": \"[Conversation summary: The user asked")),
    (compact_printing_the_line, ("compact printed '[compact] folded 8 messages into a summary' with print()",
                                 "write it to output_stream")),
    (compact_without_the_line, ("compact wrote '' to output_stream",
                                "expected the line '[compact] folded 8 messages into a summary\\n'")),
    (compact_whatever_the_size, ("compact of two short exchanges", "with context_limit=5000",
                                 "the history fits", "call no model")),
    (compact_ignoring_context_limit, ("one character over context_limit=", "compact called no model",
                                      "context_limit, the argument")),
    (compact_folding_at_the_budget, ("exactly the size of the budget", "the history fits",
                                     "history_size(messages) <= context_limit")),
    (compact_even_one_exchange, ("compact of one long exchange", "nothing old to fold", "KEEP_RECENT")),
    (compact_deleting_the_old_messages, ("compact changed the list it was handed", "messages[0].content",
                                         "never del messages[:split]")),
    (compact_one_call_per_exchange, ("compact called the model 2 times", "one call summarises all the old messages")),
    (compact_summarising_everything, ("the summary call read the whole history", "messages[:8]",
                                      "summarise(messages[:split], client)")),
])
def test_compact_fails_on_typical_mistakes(wrong, words):
    fails("8.3", wrong, *words)


# --- 8.4 run -----------------------------------------------------------------------------------------------------


def run_with_iter(input_stream, output_stream, client=None, context_limit=CONTEXT_LIMIT):
    """The lines read with iter(readline, ""), the prompt written before each read."""
    messages = []
    output_stream.write("User> ")
    for line in iter(input_stream.readline, ""):
        if not line.strip():
            return
        messages = compact(messages, client, output_stream, context_limit=context_limit)
        messages = messages + [{"role": "user", "content": line.strip()}]
        output_stream.write("Agent> " + agent_turn(client, messages) + "\n")
        output_stream.write("User> ")


def run_with_a_flag(input_stream, output_stream, client=None, context_limit=CONTEXT_LIMIT):
    """A flag instead of return; the line stripped once; compact's arguments by keyword."""
    history, going = [], True
    while going:
        output_stream.write("User> ")
        line = input_stream.readline().strip()
        going = bool(line)
        if going:
            history = compact(messages=history, client=client, output_stream=output_stream,
                              context_limit=context_limit)
            history.append({"role": "user", "content": line})
            reply = agent_turn(client, history)
            output_stream.write(f"Agent> {reply}\n")


def session(input_stream, output_stream, client, context_limit, before=True, after=False, keep=True,
            limit=None, strip=True, skip_empty=False):
    """A run with its compaction (or its reading) changed: the base of the wrong answers below."""
    messages = []
    while True:
        output_stream.write("User> ")
        line = input_stream.readline()
        if not line:
            return
        if not line.strip():
            if skip_empty:
                continue
            return
        budget = context_limit if limit is None else limit
        if before:
            folded = compact(messages, client, output_stream, budget)
            messages = folded if keep else messages
        messages.append({"role": "user", "content": line.strip() if strip else line})
        if after:
            messages = compact(messages, client, output_stream, budget)
        reply = agent_turn(client, messages)
        output_stream.write(f"Agent> {reply}\n")


def run_compacting_after_the_line(input_stream, output_stream, client=None, context_limit=CONTEXT_LIMIT):
    session(input_stream, output_stream, client, context_limit, before=False, after=True)


def run_discarding_compacts_result(input_stream, output_stream, client=None, context_limit=CONTEXT_LIMIT):
    session(input_stream, output_stream, client, context_limit, keep=False)


def run_never_compacting(input_stream, output_stream, client=None, context_limit=CONTEXT_LIMIT):
    session(input_stream, output_stream, client, context_limit, before=False)


def run_compacting_after_each_turn(input_stream, output_stream, client=None, context_limit=CONTEXT_LIMIT):
    messages = []
    while True:
        output_stream.write("User> ")
        line = input_stream.readline()
        if not line.strip():
            return
        messages.append({"role": "user", "content": line.strip()})
        output_stream.write(f"Agent> {agent_turn(client, messages)}\n")
        messages = compact(messages, client, output_stream, context_limit)


def run_ignoring_context_limit(input_stream, output_stream, client=None, context_limit=CONTEXT_LIMIT):
    session(input_stream, output_stream, client, context_limit, limit=CONTEXT_LIMIT)


def run_keeping_the_newline(input_stream, output_stream, client=None, context_limit=CONTEXT_LIMIT):
    session(input_stream, output_stream, client, context_limit, strip=False)


def run_past_an_empty_line(input_stream, output_stream, client=None, context_limit=CONTEXT_LIMIT):
    session(input_stream, output_stream, client, context_limit, skip_empty=True)


def run_without_the_answers(input_stream, output_stream, client=None, context_limit=CONTEXT_LIMIT):
    messages = []
    while True:
        line = input_stream.readline()
        if not line.strip():
            return
        messages = compact(messages, client, output_stream, context_limit)
        messages.append({"role": "user", "content": line.strip()})
        print(agent_turn(client, messages), file=sys.stdout)


def test_run_passes_on_the_reference_and_unusual_answers():
    passes("8.4", twin(compaction.run))
    passes("8.4", run_with_iter)
    passes("8.4", run_with_a_flag)


def test_run_the_course_function_is_refused():
    fails("8.4", compaction.run, "course's own")


def test_run_stub_is_not_written_yet():
    fails("8.4", stub, "not written yet")


@pytest.mark.parametrize("wrong, words", [
    (run_compacting_after_the_line, ("folded once turn 1 was answered",
                                     "compact ran after the new line joined the history", "before appending it")),
    (run_discarding_compacts_result, ("the request of turn 3 starts with {\"role\": \"user\", \"content\": "
                                      "[{\"type\": \"text\", \"text\": \"Tell me about Paris",
                                      "expected the summary", "messages = compact(...)")),
    (run_never_compacting, ("the history was never folded", "over context_limit=600 with two exchanges")),
    (run_compacting_after_each_turn, ("folded again after turn 3, the last one", "not after agent_turn")),
    (run_ignoring_context_limit, ("with context_limit=100000", "folded after turn 2",
                                  "fits in context_limit=100000", "not CONTEXT_LIMIT")),
    (run_keeping_the_newline, ("the request of turn 3 ends with", "Should I take an umbrella?\\n",
                               "line.strip()")),
    (run_past_an_empty_line, ("called again after the empty line", "an empty line ends the session")),
    (run_without_the_answers, ("the output has no line \"Agent> Paris is the capital of France", "for turn 1",
                               "output_stream.write(f\"Agent> {reply}\\n\")")),
])
def test_run_fails_on_typical_mistakes(wrong, words):
    fails("8.4", wrong, *words)
