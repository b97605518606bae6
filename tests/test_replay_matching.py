"""Replay matches on meaning: one test per difference recordings.py ignores, and the ones it must not.

The numbered list in looplab/recordings.py's docstring (and docs/RECORDINGS.md) is the
contract; each `test_ignored_N_...` below proves one line of it. The `test_kept_...` tests prove
the differences that change a conversation still do, and the not-recorded message still points
at the learner's own block.
"""

import copy
import json

import pytest
from anthropic.types import TextBlock, ToolUseBlock
from hypothesis import given, settings
from hypothesis import strategies as st

import looplab
from looplab.loop import MAX_TOKENS, SYSTEM_PROMPT
from looplab.recordings import RECORDINGS_DIR, Recording, opening_results
from looplab.tools import TOOLS, run_tool

QUESTION = "What are 12 * 3 and 7 + 5?"
CALL_A, CALL_B = "toolu_01AAAA", "toolu_01BBBB"
SECOND_TOOL = {"name": "letter_count", "description": "Count letters.",
               "input_schema": {"type": "object", "properties": {}}}
RESPONSE = {
    "id": "msg_01Answer", "type": "message", "role": "assistant", "model": looplab.MODEL,
    "content": [{"type": "text", "text": "36 and 12."}], "stop_reason": "end_turn", "stop_sequence": None,
    "usage": {"input_tokens": 10, "output_tokens": 5},
}


def recorded_request() -> dict:
    """A conversation with two parallel calls answered in one message, then a follow-up line."""
    return {
        "model": looplab.MODEL, "max_tokens": 1024, "system": SYSTEM_PROMPT, "tools": [*TOOLS, SECOND_TOOL],
        "messages": [
            {"role": "user", "content": QUESTION},
            {"role": "assistant", "content": [
                {"type": "text", "text": "Two sums."},
                {"type": "tool_use", "id": CALL_A, "name": "calculator", "input": {"expression": "12 * 3"}},
                {"type": "tool_use", "id": CALL_B, "name": "calculator", "input": {"expression": "7 + 5"}},
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": CALL_A, "content": "36"},
                {"type": "tool_result", "tool_use_id": CALL_B, "content": "12"},
                {"type": "text", "text": "Both, please."},
                {"type": "text", "text": "In one line."},
            ]},
        ],
    }


RECORDING = Recording(RECORDINGS_DIR / "in_memory.json", [{"request": recorded_request(), "response": RESPONSE}])


def matches(request: dict) -> bool:
    return RECORDING.find(request) == RESPONSE


def variant(change) -> dict:
    """The recorded request, changed in place by `change`."""
    request = recorded_request()
    change(request)
    return request


def results_message(request: dict) -> list:
    return request["messages"][2]["content"]


def test_the_recorded_request_matches_itself():
    assert matches(recorded_request())


# --- 1. string or one text block; no system or an empty one ------------------------------------------

@pytest.mark.parametrize("where", ["message", "system", "tool_result content"])
def test_ignored_1_a_string_or_one_text_block(where):
    def as_block(request):
        if where == "message":
            request["messages"][0]["content"] = [{"type": "text", "text": QUESTION}]
        elif where == "system":
            request["system"] = [{"type": "text", "text": SYSTEM_PROMPT}]
        else:
            results_message(request)[0]["content"] = [{"type": "text", "text": "36"}]
    assert matches(variant(as_block))


def test_ignored_1_no_system_or_an_empty_one():
    without = Recording(RECORDING.path, [{"request": variant(lambda r: r.pop("system")), "response": RESPONSE}])
    assert without.find(variant(lambda r: r.update(system=""))) == RESPONSE
    assert without.find(variant(lambda r: r.update(system=[]))) == RESPONSE


# --- 2. SDK block objects or dicts (through the real SDK, as the wire carries them) ------------------

def test_ignored_2_sdk_block_objects_or_dicts(monkeypatch, tmp_path):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("LOOPLAB_MODE", raising=False)
    path = tmp_path / "objects.json"
    Recording(path, [{"request": recorded_request(), "response": RESPONSE}], looplab.MODEL).save()
    request = recorded_request()
    request["messages"][1]["content"] = [
        TextBlock(type="text", text="Two sums."),
        ToolUseBlock(type="tool_use", id=CALL_A, name="calculator", input={"expression": "12 * 3"}),
        ToolUseBlock(type="tool_use", id=CALL_B, name="calculator", input={"expression": "7 + 5"}),
    ]
    reply = looplab.client(path, quiet=True).messages.create(**request)
    assert reply.content[0].text == "36 and 12."


# --- 3. key order ---------------------------------------------------------------------------------------

def reversed_keys(value):
    if isinstance(value, dict):
        return {key: reversed_keys(value[key]) for key in reversed(list(value))}
    if isinstance(value, list):
        return [reversed_keys(item) for item in value]
    return value


def test_ignored_3_key_order_in_every_object():
    request = reversed_keys(recorded_request())
    assert list(request) != list(recorded_request())
    assert matches(request)


# --- 4. parameters other than model, system, tools and messages ------------------------------------

@pytest.mark.parametrize("extra", [{"max_tokens": 5}, {"metadata": {"user_id": "learner-7"}},
                                   {"tool_choice": {"type": "auto"}}], ids=lambda e: next(iter(e)))
def test_ignored_4_other_request_parameters(extra):
    assert matches(variant(lambda request: request.update(extra)))


@pytest.mark.parametrize("choice", [{"type": "any"}, {"type": "tool", "name": "calculator"}, {"type": "none"},
                                    {"type": "auto", "disable_parallel_tool_use": True}], ids=json.dumps)
def test_not_ignored_4_a_tool_choice_other_than_the_default(choice):
    """A forced or forbidden tool changes the answer: each choice is matched, with a reply of its own."""
    chosen = variant(lambda request: request.update(tool_choice=choice))
    assert not matches(chosen)
    other = {**RESPONSE, "id": "msg_forced"}
    recording = Recording(RECORDINGS_DIR / "in_memory.json", [{"request": recorded_request(), "response": RESPONSE},
                                                             {"request": chosen, "response": other}])
    assert recording.find(chosen) == other and recording.find(recorded_request()) == RESPONSE


# --- 5. tool order, descriptions and schemas ----------------------------------------------------------

def test_ignored_5_tool_order():
    assert matches(variant(lambda request: request["tools"].reverse()))


def test_ignored_5_a_tools_description_and_schema():
    def reword(request):
        request["tools"][-1] = {**SECOND_TOOL, "description": "Counts letters in a word.",
                                "input_schema": {"type": "object", "properties": {"word": {"type": "string"}}}}
    assert matches(variant(reword))


def test_5_several_wordings_recorded_the_request_s_own_answers():
    """One conversation recorded with two wordings of a tool (notebook 5's vague and better descriptions): each
    wording gets its own answer; a third wording still finds one."""
    def worded(description):
        return variant(lambda request: request["tools"].__setitem__(-1, {**SECOND_TOOL, "description": description}))

    vague, better = {**RESPONSE, "id": "msg_vague"}, {**RESPONSE, "id": "msg_better"}
    recording = Recording(RECORDINGS_DIR / "in_memory.json", [{"request": worded("Counts things."), "response": vague},
                                                             {"request": worded("Counts letters."), "response": better}])
    assert recording.find(worded("Counts things.")) == vague
    assert recording.find(worded("Counts letters.")) == better
    assert recording.find(worded("Counts letters in a word.")) in (vague, better)


# --- 6. block fields that are not content; is_error false -----------------------------------------

@pytest.mark.parametrize("field, value, where", [
    ("cache_control", {"type": "ephemeral"}, "question"),
    ("citations", None, "assistant text"),
    ("caller", {"type": "direct"}, "tool_use"),
    ("cache_control", {"type": "ephemeral"}, "tool_result"),
    ("is_error", False, "tool_result"),
], ids=lambda value: value if isinstance(value, str) else None)
def test_ignored_6_fields_that_are_not_content(field, value, where):
    def add_field(request):
        messages = request["messages"]
        if where == "question":
            messages[0]["content"] = [{"type": "text", "text": QUESTION, field: value}]
        else:
            block = {"assistant text": messages[1]["content"][0], "tool_use": messages[1]["content"][1],
                     "tool_result": results_message(request)[0]}[where]
            block[field] = value
    assert matches(variant(add_field))


def test_ignored_6_a_thinking_blocks_signature():
    def with_thinking(signature):
        def add(request):
            request["messages"][1]["content"].insert(
                0, {"type": "thinking", "thinking": "Two sums to do.", "signature": signature})
        return variant(add)
    thinking = Recording(RECORDING.path, [{"request": with_thinking("sig-recorded"), "response": RESPONSE}])
    assert thinking.find(with_thinking("sig-other")) == RESPONSE


# --- 7. the order of a user message's opening tool_results -----------------------------------------

def test_ignored_7_results_in_reverse_order_match():
    def reverse_results(request):
        content = results_message(request)
        content[:2] = content[1::-1]
    request = variant(reverse_results)
    assert [block.get("tool_use_id") for block in results_message(request)[:2]] == [CALL_B, CALL_A]
    assert matches(request)


def test_kept_results_with_swapped_ids_do_not_match():
    """Id A carrying B's content is a different (wrong) conversation: the set is keyed by id."""
    def swap_contents(request):
        first, second = results_message(request)[:2]
        first["content"], second["content"] = second["content"], first["content"]
    assert not matches(variant(swap_contents))


def test_kept_a_result_after_text_is_not_reordered_into_the_opening_run():
    """[result, text, result] is a conversation the API rejects; it must not match the valid one."""
    def move_a_result_after_text(request):
        content = results_message(request)
        content.insert(2, content.pop(1))
    assert not matches(variant(move_a_result_after_text))


def test_kept_the_order_of_text_blocks():
    def swap_texts(request):
        content = results_message(request)
        content[2:] = content[:1:-1]
    assert not matches(variant(swap_texts))


def test_kept_the_order_of_a_replys_calls():
    def swap_calls(request):
        calls = request["messages"][1]["content"]
        calls[1:] = calls[:0:-1]
    assert not matches(variant(swap_calls))


def test_kept_a_missing_or_an_extra_result():
    assert not matches(variant(lambda request: results_message(request).pop(1)))
    extra = {"type": "tool_result", "tool_use_id": "toolu_01CCCC", "content": "0"}
    assert not matches(variant(lambda request: results_message(request).insert(0, extra)))


# --- the nearest difference points at the learner's own block ------------------------------------

def test_nearest_difference_in_reversed_results_names_the_learners_block():
    def reverse_and_break_b(request):
        content = results_message(request)
        content[:2] = [{**content[1], "content": "13"}, content[0]]
    difference = RECORDING.nearest_difference(variant(reverse_and_break_b))
    assert difference.path == "messages.2.content.0.content.0.text"  # B stands first in the learner's message
    assert (difference.recorded, difference.yours) == ("12", "13")


def test_nearest_difference_of_swapped_ids_names_the_first_wrong_result():
    def swap_contents(request):
        first, second = results_message(request)[:2]
        first["content"], second["content"] = second["content"], first["content"]
    difference = RECORDING.nearest_difference(variant(swap_contents))
    assert difference.path == "messages.2.content.0.content.0.text"
    assert (difference.recorded, difference.yours) == ("36", "12")


def test_nearest_difference_still_picks_the_nearest_recording():
    """Two recorded histories that share a reversed-results message: the longer shared one is nearest."""
    longer = variant(lambda request: request["messages"].extend([
        {"role": "assistant", "content": [{"type": "text", "text": "36 and 12."}]},
        {"role": "user", "content": "And 2 + 2?"},
    ]))
    recording = Recording(RECORDING.path, [{"request": recorded_request(), "response": RESPONSE},
                                           {"request": longer, "response": RESPONSE}])
    yours = copy.deepcopy(longer)
    content = yours["messages"][2]["content"]
    content[:2] = content[1::-1]
    yours["messages"][4]["content"] = "And 3 + 3?"
    difference = recording.nearest_difference(yours)
    assert difference.path == "messages.4.content.0.text"
    assert (difference.recorded, difference.yours) == ("And 2 + 2?", "And 3 + 3?")


# --- every shipped recording: any order of results matches ----------------------------------------

SHIPPED = [(path.stem, exchange["request"], exchange["response"])
           for path in sorted(RECORDINGS_DIR.glob("*.json"))
           for exchange in json.loads(path.read_text(encoding="utf-8"))["exchanges"]
           if any(opening_results(message) >= 2 for message in exchange["request"]["messages"])]


def test_the_shipped_recordings_hold_parallel_results():
    assert len(SHIPPED) >= 4


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_any_order_of_opening_results_matches_the_recorded_request(data):
    name, request, response = data.draw(st.sampled_from(SHIPPED), label="exchange")
    shuffled = copy.deepcopy(request)
    for message in shuffled["messages"]:
        count = opening_results(message)
        if count >= 2:
            message["content"][:count] = data.draw(st.permutations(message["content"][:count]))
    recording = Recording.load(name)
    assert recording.find(shuffled) == response


# --- notebook 3: a correct run_tools in another order lets the next demo go on ----------------------

def test_notebook_3_agent_turn_goes_on_when_run_tools_answers_in_reverse(monkeypatch):
    """Exercise 3.3's try-it: a learner's run_tools that returns its results last call first."""
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("LOOPLAB_MODE", raising=False)
    client = looplab.client("03_matching_ids", quiet=True)

    def run_tools_last_first(message) -> list[dict]:
        calls = [block for block in message.content if block.type == "tool_use"]
        return [{"type": "tool_result", "tool_use_id": block.id, "content": run_tool(block.name, block.input)}
                for block in reversed(calls)]

    shopping = [{"role": "user", "content": (
        "I bought 3 notebooks at 4.75 €, 2 pens at 1.20 € and 5 stamps at 0.85 €. "
        "What did each kind of item cost me, and what is the total?"
    )}]
    for _ in range(10):  # the notebook's agent_turn, with the reversed run_tools
        reply = client.messages.create(model=looplab.MODEL, max_tokens=MAX_TOKENS, system=SYSTEM_PROMPT,
                                       tools=TOOLS, messages=shopping)
        shopping.append({"role": "assistant", "content": reply.content})
        if reply.stop_reason != "tool_use":
            break
        shopping.append({"role": "user", "content": run_tools_last_first(reply)})
    assert reply.stop_reason == "end_turn"
    assert [len(message["content"]) for message in shopping if message["role"] == "user"][1] == 3
    assert [block["tool_use_id"] for block in shopping[2]["content"]] == [
        block.id for block in reversed(shopping[1]["content"]) if block.type == "tool_use"]


# --- 8. the words of an error result --------------------------------------------------------------------

def flagged(request: dict, words: str) -> dict:
    """The recorded request with its first result a failure said in these words."""
    results_message(request)[0].update(content=words, is_error=True)
    return request


FAILED = Recording(RECORDING.path, [{"request": flagged(recorded_request(), "Error: division by zero"),
                                     "response": RESPONSE}])


@pytest.mark.parametrize("words", ["Error: 'calculator' raised ZeroDivisionError: division by zero",
                                   "Error: not run: this call already failed",
                                   [{"type": "text", "text": "Error: the tool failed"}]])
def test_ignored_8_the_words_of_an_error_result(words):
    assert FAILED.find(flagged(recorded_request(), words)) == RESPONSE


def test_kept_8_whether_a_result_failed():
    """The same words, unflagged, are a success: a different conversation (and the flag is named first)."""
    def unflagged(request):
        results_message(request)[0]["content"] = "Error: division by zero"
    request = variant(unflagged)
    assert FAILED.find(request) is None
    difference = FAILED.nearest_difference(request)
    assert difference.path == "messages.2.content.0.is_error"
    assert (difference.recorded, difference.yours) == (True, False)


def test_kept_8_a_failure_where_a_success_was_recorded():
    assert not matches(flagged(recorded_request(), "36"))


def test_kept_8_the_checks_still_read_an_errors_words():
    """canonical_blocks, which the checks compare histories with, keeps an error's words: only replay drops them."""
    from looplab.recordings import canonical_blocks
    block = {"type": "tool_result", "tool_use_id": CALL_A, "content": "Error: x", "is_error": True}
    assert canonical_blocks([block])[0]["content"] == [{"type": "text", "text": "Error: x"}]
