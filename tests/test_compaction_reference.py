"""Notebook 8's course version (looplab/compaction.py): the history measured, cut only at its joints, folded.

Unit tests of each function on the three shapes a history holds (typed lines as str, a reply's blocks as SDK
objects, tool results as dicts), and on histories in wire form (every block a dict); a property: whatever valid
history is compacted under whatever small budget, the result, with the next typed line, is a history the API
accepts (looplab/rules.py, the course's model of its rules); and the series' own stage 010 tests, run against a
program made of this module and a small REPL.
"""

from __future__ import annotations

import copy
import io
import itertools

import anthropic.types
from anthropic.types import TextBlock, ToolUseBlock
from hypothesis import given, settings
from hypothesis import strategies as st

from looplab import compaction
from looplab.compaction import (
    ACKNOWLEDGEMENT, CONTEXT_LIMIT, KEEP_RECENT, SUMMARY_MAX_TOKENS, SUMMARY_PROMPT, compact, exchange_starts,
    history_size, render_message,
)
from looplab.history import to_wire
from looplab.model_id import MODEL
from looplab.rules import check_request
from looplab.scripted import reply, scripted_client, text


def said(words: str) -> TextBlock:
    return TextBlock(type="text", text=words)


def called(tool_id: str, name: str, tool_input: dict) -> ToolUseBlock:
    return ToolUseBlock(type="tool_use", id=tool_id, name=name, input=tool_input)


def answered(tool_id: str, content) -> dict:
    return {"type": "tool_result", "tool_use_id": tool_id, "content": content}


def exchange(question: str, answer: str) -> list:
    """A typed line and its plain answer, as the loop records them (the reply's content is the SDK's blocks)."""
    return [{"role": "user", "content": question}, {"role": "assistant", "content": [said(answer)]}]


def tool_exchange(question: str, tool_id: str, name: str, tool_input: dict, result: str, answer: str) -> list:
    """A typed line answered through one tool call."""
    return [{"role": "user", "content": question},
            {"role": "assistant", "content": [said("Let me check."), called(tool_id, name, tool_input)]},
            {"role": "user", "content": [answered(tool_id, result)]},
            {"role": "assistant", "content": [said(answer)]}]


class Recording:
    """A stand-in for the client: answers every call with the same text, and keeps each call's arguments."""

    def __init__(self, summary: str = "A summary."):
        self.summary = summary
        self.calls: list[dict] = []
        self.messages = self

    def create(self, **arguments):
        self.calls.append(arguments)
        return anthropic.types.Message(id="msg_1", type="message", role="assistant", model=MODEL,
                                       content=[said(self.summary)], stop_reason="end_turn", stop_sequence=None,
                                       usage=anthropic.types.Usage(input_tokens=1, output_tokens=1))


class Refusing:
    """A client that must not be called: compact has nothing to fold."""

    @property
    def messages(self):
        raise AssertionError("compact called the model with nothing to fold")


# --- render_message, history_size, exchange_starts -----------------------------------------------------------


def test_a_typed_line_and_a_text_reply_render_as_role_and_words():
    assert render_message({"role": "user", "content": "What is 2 + 2?"}) == "user: What is 2 + 2?"
    assert render_message({"role": "assistant", "content": "Four."}) == "assistant: Four."
    assert render_message({"role": "assistant", "content": [said("Four.")]}) == "assistant: Four."
    assert render_message({"role": "assistant", "content": [{"type": "text", "text": "Four."}]}) == "assistant: Four."


def test_a_call_renders_its_tool_and_input_objects_and_dicts_alike():
    call = called("toolu_1", "calculator", {"expression": "2+2"})
    sdk = {"role": "assistant", "content": [said("Let me add."), call]}
    rendered = render_message(sdk)
    assert rendered == "assistant: Let me add.\nassistant called calculator({'expression': '2+2'})"
    assert render_message(to_wire(sdk)) == rendered  # the same history in wire form: every block a dict


def test_a_tool_result_renders_its_content_a_str_or_text_blocks():
    message = {"role": "user", "content": [answered("toolu_1", "4"), answered("toolu_2", "Weather in Paris: 18°C")]}
    assert render_message(message) == "tool result: 4\ntool result: Weather in Paris: 18°C"
    blocks = {"role": "user", "content": [answered("toolu_1", [{"type": "text", "text": "9544717"},
                                                                {"type": "text", "text": "(exact)"}])]}
    assert render_message(blocks) == "tool result: 9544717 (exact)"


def test_history_size_is_the_characters_of_the_rendering():
    history = tool_exchange("2+2?", "toolu_1", "calculator", {"expression": "2+2"}, "4", "It's 4.")
    assert history_size(history) == sum(len(render_message(message)) for message in history)
    assert history_size([{"role": "user", "content": "hi"}]) == len("user: hi")
    assert history_size([]) == 0


def test_exchange_starts_are_the_typed_lines_never_a_tool_result():
    history = (tool_exchange("Weather in Paris?", "toolu_1", "get_weather", {"city": "Paris"}, "18°C", "It's 18°C.")
               + exchange("thanks", "You're welcome."))
    assert exchange_starts(history) == [0, 4]
    assert exchange_starts(to_wire(history)) == [0, 4]
    results_then_text = {"role": "user", "content": [answered("toolu_1", "4"), {"type": "text", "text": "Go on."}]}
    assert exchange_starts([history[0], history[1], results_then_text]) == [0]  # mid-exchange, text or not
    assert exchange_starts([]) == []


# --- compact: when it does nothing -----------------------------------------------------------------------------


def test_under_the_budget_nothing_is_folded_and_the_model_is_not_called():
    history = exchange("hi", "hello") + exchange("how are you?", "fine")
    output = io.StringIO()
    result = compact(history, Refusing(), output, context_limit=10_000)
    assert result == history and result is not history
    assert output.getvalue() == ""


def test_one_exchange_over_the_budget_is_kept_whole_without_a_call():
    history = tool_exchange("Tell me a story", "toolu_1", "get_weather", {"city": "Paris"}, "18°C",
                            "Once upon a time... " * 50)
    assert history_size(history) > 100
    assert compact(history, Refusing(), io.StringIO(), context_limit=100) == history


def test_the_default_budget_is_the_tiny_one():
    assert (CONTEXT_LIMIT, KEEP_RECENT) == (1200, 1)
    history = exchange("hi", "x" * 580) + exchange("again", "y" * 560)
    assert history_size(history) <= CONTEXT_LIMIT
    assert compact(history, Refusing(), io.StringIO()) == history
    longer = history + exchange("more", "z")
    assert history_size(longer) > CONTEXT_LIMIT
    client = Recording()
    assert compact(longer, client, io.StringIO())[2:] == longer[-2:] and len(client.calls) == 1


# --- compact: the fold -----------------------------------------------------------------------------------------


def long_history() -> list:
    return (exchange("What's the capital of France?", "Paris. " * 40)
            + exchange("And of Japan?", "Tokyo. " * 40)
            + tool_exchange("What's 2+2?", "toolu_1", "calculator", {"expression": "2+2"}, "4", "It's 4."))


def test_the_fold_keeps_the_last_exchange_word_for_word_and_summarises_the_rest():
    history = long_history()
    before = copy.deepcopy(history)
    client, output = Recording("Capitals asked: Paris, Tokyo."), io.StringIO()

    result = compact(history, client, output, context_limit=200)

    assert result == [{"role": "user", "content": "[Conversation summary: Capitals asked: Paris, Tokyo.]"},
                      {"role": "assistant", "content": ACKNOWLEDGEMENT},
                      *history[-4:]]  # the last exchange, its tool call and result included
    assert all(kept is original for kept, original in zip(result[2:], history[-4:]))
    assert output.getvalue() == "[compact] folded 4 messages into a summary\n"
    assert history_size(result) < history_size(history)
    assert history == before  # the list handed in is as it was


def test_the_summary_is_one_call_of_its_own_reading_the_old_turns():
    history = long_history()
    client = Recording()
    compact(history, client, io.StringIO(), context_limit=200)
    [call] = client.calls
    assert call == {"model": MODEL, "max_tokens": SUMMARY_MAX_TOKENS, "system": SUMMARY_PROMPT,
                    "messages": [{"role": "user", "content": call["messages"][0]["content"]}]}  # and no tools
    transcript = call["messages"][0]["content"]
    assert transcript == "\n".join(render_message(message) for message in history[:4])
    assert "capital of France" in transcript and "Tokyo" in transcript and "2+2" not in transcript


def test_the_summary_prompt_asks_for_every_fact_and_the_summary_only():
    assert "fact" in SUMMARY_PROMPT and "number" in SUMMARY_PROMPT and "decision" in SUMMARY_PROMPT
    assert "only" in SUMMARY_PROMPT
    assert SUMMARY_MAX_TOKENS > 0


def test_a_summary_of_a_summary_folds_the_first_one_too():
    client = Recording("Second summary.")
    once = [{"role": "user", "content": "[Conversation summary: First summary.]"},
            {"role": "assistant", "content": ACKNOWLEDGEMENT}] + exchange("And Italy?", "Rome. " * 40)
    twice = compact(once + exchange("And Spain?", "Madrid."), client, io.StringIO(), context_limit=100)
    assert twice[0]["content"] == "[Conversation summary: Second summary.]"
    assert "First summary." in client.calls[0]["messages"][0]["content"]
    assert twice[2:] == exchange("And Spain?", "Madrid.")


def test_a_history_in_wire_form_folds_the_same_way():
    history = to_wire(long_history())
    result = compact(history, Recording(), io.StringIO(), context_limit=200)
    assert result[2:] == history[-4:]


def test_the_module_says_nothing_but_its_prompts_in_other_languages():
    """The texts the series' tests read are in the code, English; the catalogue holds what the model is told."""
    words = compaction.WORDS
    assert "summary_prompt" in words and "acknowledgement" in words
    assert not any("[compact]" in text or "Conversation summary" in text
                   for row in words.rows.values() for text in row.values())


# --- the property: a compacted history is always one the API accepts -------------------------------------------

WORDS_ALPHABET = st.characters(min_codepoint=32, max_codepoint=126)
WORDS_TEXT = st.text(WORDS_ALPHABET, min_size=1, max_size=60).filter(str.strip)
TOOLS = {"calculator": "expression", "get_weather": "city"}


@st.composite
def histories(draw):
    """A valid history of complete exchanges: a typed line; replies of text and/or calls, each call answered in the
    next user message (results shuffled, blocks as SDK objects or dicts); a last reply in words."""
    ids = itertools.count()
    as_dicts = draw(st.booleans())  # a history in wire form, or as the loop keeps it

    def block(value):
        return to_wire(value) if as_dicts else value

    messages = []
    for _ in range(draw(st.integers(1, 5))):
        messages.append({"role": "user", "content": draw(WORDS_TEXT)})
        for _ in range(draw(st.integers(0, 2))):
            calls = []
            for _ in range(draw(st.integers(1, 3))):
                name = draw(st.sampled_from(sorted(TOOLS)))
                calls.append(called(f"toolu_{next(ids)}", name, {TOOLS[name]: draw(WORDS_TEXT)}))
            lead = [said(draw(WORDS_TEXT))] if draw(st.booleans()) else []
            messages.append({"role": "assistant", "content": [block(item) for item in lead + calls]})
            results = [answered(call.id, draw(WORDS_TEXT)) for call in draw(st.permutations(calls))]
            messages.append({"role": "user", "content": results})
        messages.append({"role": "assistant", "content": [block(said(draw(WORDS_TEXT)))]})
    return messages


def verdict(messages: list):
    """The API's verdict, as the course models it (None: accepted), on the request the next typed line would make."""
    return check_request({"model": MODEL, "max_tokens": 64,
                          "messages": to_wire([*messages, {"role": "user", "content": "Next."}])})


@settings(max_examples=60, deadline=None)
@given(histories(), st.integers(0, 600))
def test_whatever_is_folded_the_api_accepts_the_result(history, budget):
    assert verdict(history) is None  # the generator's histories are valid to start with
    before = to_wire(history)
    client, traffic = scripted_client([reply(text("A summary."))], call_limit=1)  # every request meets the rules
    output = io.StringIO()

    result = compact(history, client, output, context_limit=budget)

    assert verdict(result) is None
    assert to_wire(history) == before
    folded = len(traffic.exchanges) == 1
    starts = exchange_starts(history)
    assert folded == (history_size(history) > budget and len(starts) > KEEP_RECENT)
    if folded:
        split = starts[-KEEP_RECENT]
        assert result[2:] == history[split:]
        assert result[0] == {"role": "user", "content": "[Conversation summary: A summary.]"}
        assert output.getvalue() == f"[compact] folded {split} messages into a summary\n"
        assert traffic.exchanges[0]["request"]["system"] == SUMMARY_PROMPT
    else:
        assert result == history and output.getvalue() == ""


# --- the series' stage 010 tests, against this module and a REPL -------------------------------------------------

STAGE = "agent-010-context-compaction"

# The program the series' tests import as `agent`: this module, whose run compacts between turns, before the new line
# joins the history (notebook 8 writes its own from the learner's cells).
PROGRAM = '''"""Stage 010 as the course writes it: looplab.compaction, whose run compacts between turns."""
import sys

from looplab.compaction import *  # noqa: F403
from looplab.compaction import run

if __name__ == "__main__":
    run(sys.stdin, sys.stdout)
'''


def test_the_series_stage_010_tests_pass_against_this_module(tmp_path):
    from tests.test_series_stages import a_program_passes_the_stage

    a_program_passes_the_stage(STAGE, PROGRAM, "agent_compaction.py", tmp_path)

