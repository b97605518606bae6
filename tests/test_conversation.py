"""The conversation model (looplab/conversation.py), and the agreement it buys: the viewer flags a
history exactly when the rules reject it for its pairing, naming the same ids."""

import anthropic.types
from hypothesis import event, given, settings
from hypothesis import strategies as st

from looplab import conversation
from looplab.conversation import Place
from looplab.history import steps_from_messages, unmatched_ids
from looplab.loop import unanswered_tool_uses
from looplab.rules import API_MESSAGES, check_request
from tests.test_rules import assistant, call, result, text, user  # the same small builders

QUESTION = {"role": "user", "content": "What is 1 + 1?"}


def ids(items):
    return [item.id if hasattr(item, "id") else item.tool_use_id for item in items]


# --- the model, case by case -----------------------------------------------------------------------


def test_a_complete_exchange_pairs_each_call_with_its_result():
    history = conversation.read([QUESTION, assistant(text("Two sums."), call("toolu_A"), call("toolu_B")),
                                 user(result("toolu_B"), result("toolu_A"), text("Thanks."))])
    first, second = history.tool_uses
    assert (first.id, first.place, first.answer) == ("toolu_A", Place(1, 1), Place(2, 1))
    assert (second.id, second.place, second.answer) == ("toolu_B", Place(1, 2), Place(2, 0))
    assert [r.answers for r in history.tool_results] == [Place(1, 2), Place(1, 1)]
    assert history.is_paired
    assert not history.unanswered and not history.orphans and not history.misplaced


def test_a_result_after_text_answers_nothing_and_its_call_dangles():
    """The case the viewer used to show as answered while the API refuses it."""
    history = conversation.read([QUESTION, assistant(call("toolu_A")), user(text("Here:"), result("toolu_A"))])
    assert ids(history.dangling) == ["toolu_A"] and history.dangling[0].answer is None
    assert ids(history.misplaced) == ["toolu_A"]
    assert history.orphans == []  # it does cite a call of the message before: the API calls it missing, not unexpected
    misplaced = history.misplaced[0]
    assert misplaced.cites == Place(1, 0) and not misplaced.leading and misplaced.answers is None


def test_a_call_of_the_final_message_is_pending_not_dangling():
    history = conversation.read([QUESTION, assistant(text("Let me add."), call("toolu_A"))])
    assert ids(history.pending) == ["toolu_A"] and history.dangling == []
    assert ids(history.unanswered) == ["toolu_A"]


def test_a_call_followed_by_anything_but_its_result_dangles():
    for following in ({"role": "user", "content": "so?"}, assistant(text("Hmm.")), user(result("toolu_X"))):
        history = conversation.read([QUESTION, assistant(call("toolu_A")), following])
        assert ids(history.dangling) == ["toolu_A"] and history.pending == []


def test_a_result_in_the_first_message_is_an_orphan_citing_nothing():
    history = conversation.read([user(result("toolu_X"))])
    orphan, = history.orphans
    assert orphan.place == Place(0, 0) and orphan.place.path == "messages.0.content.0"
    assert orphan.cites is None and history.misplaced == []


def test_results_split_over_two_messages():
    history = conversation.read([QUESTION, assistant(call("toolu_A"), call("toolu_B")),
                                 user(result("toolu_A")), user(result("toolu_B"))])
    assert ids(history.dangling) == ["toolu_B"]
    late, = history.orphans
    assert late.place == Place(3, 0) and late.cites == Place(1, 1)
    assert history.misplaced == [late]  # one message too late: an orphan, and misplaced


def test_a_result_for_an_older_answered_call_is_an_orphan_but_not_misplaced():
    history = conversation.read([QUESTION, assistant(call("toolu_A")), user(result("toolu_A")),
                                 assistant(call("toolu_B")), user(result("toolu_B"), result("toolu_A"))])
    orphan, = history.orphans
    assert orphan.place == Place(4, 1) and orphan.cites == Place(1, 0)
    assert history.misplaced == [] and history.unanswered == []


def test_a_second_leading_result_for_one_call_is_accepted_as_the_api_counts():
    history = conversation.read([QUESTION, assistant(call("toolu_A")), user(result("toolu_A"), result("toolu_A"))])
    assert history.is_paired and history.tool_uses[0].answer == Place(2, 0)


def test_sdk_objects_and_dicts_read_the_same():
    sdk = [QUESTION, {"role": "assistant", "content": [
        anthropic.types.TextBlock(type="text", text="Two sums."),
        anthropic.types.ToolUseBlock(type="tool_use", id="toolu_A", name="calculator", input={}),
        anthropic.types.ToolUseBlock(type="tool_use", id="toolu_B", name="calculator", input={}),
    ]}, user(result("toolu_A"))]
    dicts = [QUESTION, assistant(text("Two sums."), call("toolu_A"), call("toolu_B")), user(result("toolu_A"))]
    assert conversation.read(sdk) == conversation.read(dicts)
    assert ids(conversation.read(sdk).dangling) == ["toolu_B"]


def test_anything_malformed_holds_nothing_and_never_raises():
    for history in (None, "messages", 5, [None], ["hi", 3], [{"role": "assistant", "content": "plain words"}],
                    [{"role": "assistant", "content": [None, "x", {"type": "tool_use"}]}],
                    [{"role": "user", "content": [{"type": "tool_result", "tool_use_id": ["unhashable"]}]}]):
        conversation.read(history)
    assert conversation.read(None).tool_uses == () and conversation.read("x").length == 0


def test_blocks_in_the_wrong_role_are_left_to_the_shape_rule():
    history = conversation.read([user(call("toolu_A")), assistant(result("toolu_A"))])
    assert history.tool_uses == () and history.tool_results == ()


def test_the_reference_of_exercise_3_2_is_the_models_unanswered_calls():
    messages = [QUESTION, assistant(call("toolu_A"), call("toolu_B")), user(text("Here:"), result("toolu_A"))]
    assert unanswered_tool_uses(messages) == ["toolu_A", "toolu_B"]


# --- the property: viewer and rules agree ---------------------------------------------------------

MISSING = API_MESSAGES["missing_result"].split("{ids}")[0].split(": ", 1)[1]  # "`tool_use` ids were found ..."
UNEXPECTED = API_MESSAGES["unexpected_result"].split("{id}")[0].split(": ", 1)[1]
PREFILL = API_MESSAGES["prefill"]


def _verdict(messages):
    """('missing', ids) | ('unexpected', [id]) | ('accepted', []) | ('other', message): how the
    rules judge the history's pairing. Prefill is not a pairing fault: it counts as accepted."""
    violation = check_request({"messages": messages})
    if violation is None or violation.message == PREFILL:
        return "accepted", []
    head, _, named = violation.message.partition(": ")
    if named.startswith(MISSING):
        return "missing", named[len(MISSING):].split(". Each")[0].split(", ")
    if named.startswith(UNEXPECTED):
        return "unexpected", [named[len(UNEXPECTED):].split(". Each")[0]]
    return "other", violation.message


@st.composite
def histories(draw):
    """Shape-valid histories, messy on purpose: roles that alternate or not, calls of 0-3 blocks
    (rarely reusing an id), results for the previous message's calls or for older or unknown
    ones, in any order, split, or after text, and sometimes a final assistant message with calls."""
    messages, calls_so_far, previous_calls = [], [], []
    for index in range(draw(st.integers(1, 6))):
        role = draw(st.sampled_from(["user", "assistant"]))
        if role == "assistant":
            content = []
            for _ in range(draw(st.integers(0, 3))):
                if draw(st.integers(0, 2)) == 0:
                    content.append(text("Let me see."))
                else:
                    reused = calls_so_far and draw(st.integers(0, 9)) == 0
                    tool_id = draw(st.sampled_from(calls_so_far)) if reused else f"toolu_{index}{len(content)}"
                    content.append(call(tool_id))
            content = content or [text("Done.")]
            previous_calls = [block["id"] for block in content if block["type"] == "tool_use"]
            calls_so_far += previous_calls
        else:
            choices = [text("Here you are.")] + [result(tool_id) for tool_id in previous_calls + calls_so_far + ["toolu_X"]]
            content = draw(st.lists(st.sampled_from(choices), min_size=1, max_size=4))
            if draw(st.booleans()):  # often, the right answer: every call of the message before, first
                content = [result(tool_id) for tool_id in draw(st.permutations(previous_calls))] + content[:1]
            previous_calls = []
        messages.append({"role": role, "content": content})
    return messages


@settings(max_examples=600)
@given(histories())
def test_the_viewer_flags_exactly_what_the_rules_reject_for_pairing(messages):
    kind, named = _verdict(messages)
    flags = unmatched_ids(messages)
    event(kind)
    if kind == "other":  # a duplicate id: the rules stop before the pairing, nothing to compare
        return
    assert bool(flags.ids) == (kind != "accepted"), (kind, named, flags)
    if kind == "missing":
        assert set(named) <= flags.dangling | flags.pending
    if kind == "unexpected":
        assert set(named) <= flags.orphans


@settings(max_examples=300)
@given(histories())
def test_the_viewers_last_step_is_the_request_the_rules_judge(messages):
    kind, _ = _verdict(messages)
    if kind == "other" or messages[-1]["role"] != "user":
        return
    last = steps_from_messages(messages)[-1]
    flagged = last.dangling | last.pending | last.orphans | last.misplaced
    assert bool(flagged) == (kind != "accepted") == (last.error is not None)


@settings(max_examples=300)
@given(histories())
def test_the_reference_of_3_2_names_every_call_the_rules_call_missing(messages):
    kind, named = _verdict(messages)
    unanswered = unanswered_tool_uses(messages)
    if kind == "missing":
        assert set(named) <= set(unanswered)
    if kind == "accepted":
        assert unanswered == []


@settings(max_examples=300)
@given(histories())
def test_misplaced_results_cite_a_call_left_unanswered(messages):
    history = conversation.read(messages)
    unanswered = {use.place for use in history.unanswered}
    for misplaced in history.misplaced:
        assert misplaced.cites in unanswered and misplaced.answers is None
    for use in history.tool_uses:
        assert (use in history.dangling) + (use in history.pending) == (use.answer is None)
