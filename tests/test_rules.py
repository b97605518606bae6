"""Tests for looplab.rules: one broken history per rule, valid histories, and properties."""

import copy

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from looplab.rules import API_MESSAGES, Violation, check_request, error_body

# --- small builders, so each history reads like a conversation ---------------------------


def user(*content):
    return {"role": "user", "content": list(content)}


def assistant(*content):
    return {"role": "assistant", "content": list(content)}


def text(s):
    return {"type": "text", "text": s}


def call(tool_id, name="calculator"):
    return {"type": "tool_use", "id": tool_id, "name": name, "input": {"expression": "1+1"}}


def result(tool_id, content="2", **extra):
    return {"type": "tool_result", "tool_use_id": tool_id, "content": content, **extra}


CALCULATOR = {
    "name": "calculator",
    "description": "Evaluate an arithmetic expression.",
    "input_schema": {"type": "object", "properties": {"expression": {"type": "string"}}},
}


def body(*messages, tools=(CALCULATOR,)):
    return {"model": "claude-haiku-5-5", "max_tokens": 1024, "messages": list(messages), "tools": list(tools)}


def assert_violation(found, message, path):
    assert isinstance(found, Violation), found
    assert found.message == message
    assert found.path == path
    assert found.hint.strip()


def missing(i, ids):
    return (
        f"messages.{i}: `tool_use` ids were found without `tool_result` blocks immediately after: {ids}."
        " Each `tool_use` block must have a corresponding `tool_result` block in the next message."
    )


def unexpected(i, j, tool_id):
    return (
        f"messages.{i}.content.{j}: unexpected `tool_use_id` found in `tool_result` blocks: {tool_id}."
        " Each `tool_result` block must have a corresponding `tool_use` block in the previous message."
    )


QUESTION = user(text("What is 4823 * 1979?"))
PREFILL = "This model does not support assistant message prefill. The conversation must end with a user message."


# --- the reference table, row by row -----------------------------------------------------


def test_missing_result_when_next_message_has_none():
    found = check_request(body(QUESTION, assistant(call("toolu_A")), user(text("go on"))))
    assert_violation(found, missing(1, "toolu_A"), "messages.1")


def test_dangling_tool_use_at_end_reports_missing_result_not_prefill():
    found = check_request(body(QUESTION, assistant(text("Let me compute."), call("toolu_A"))))
    assert_violation(found, missing(1, "toolu_A"), "messages.1")


def test_result_in_a_later_message():
    found = check_request(
        body(QUESTION, assistant(call("toolu_A")), user(text("wait")), user(result("toolu_A")))
    )
    assert_violation(found, missing(1, "toolu_A"), "messages.1")


def test_result_after_text_does_not_count():
    found = check_request(body(QUESTION, assistant(call("toolu_A")), user(text("Here:"), result("toolu_A"))))
    assert_violation(found, missing(1, "toolu_A"), "messages.1")


def test_parallel_results_split_over_separate_user_messages():
    history = body(
        QUESTION,
        assistant(call("toolu_A"), call("toolu_B")),
        user(result("toolu_A")),
        user(result("toolu_B")),
    )
    assert_violation(check_request(history), missing(1, "toolu_B"), "messages.1")


def test_missing_ids_are_listed_in_tool_use_order():
    history = body(QUESTION, assistant(call("toolu_C"), call("toolu_A"), call("toolu_B")), user(result("toolu_A")))
    assert_violation(check_request(history), missing(1, "toolu_C, toolu_B"), "messages.1")


def test_result_answering_another_turn_is_unexpected():
    history = body(
        QUESTION,
        assistant(call("toolu_A")),
        user(result("toolu_A")),
        assistant(call("toolu_B")),
        user(result("toolu_B"), result("toolu_A")),
    )
    assert_violation(check_request(history), unexpected(4, 1, "toolu_A"), "messages.4.content.1")


def test_tool_result_in_first_message_is_unexpected():
    found = check_request(body(user(result("toolu_X"))))
    assert_violation(found, unexpected(0, 0, "toolu_X"), "messages.0.content.0")


def test_tool_result_after_a_user_message_is_unexpected():
    found = check_request(body(QUESTION, user(text("and"), result("toolu_X"))))
    assert_violation(found, unexpected(1, 1, "toolu_X"), "messages.1.content.1")


def test_duplicate_tool_use_id_across_history():
    history = body(
        QUESTION,
        assistant(call("toolu_A")),
        user(result("toolu_A")),
        assistant(text("Once more."), call("toolu_A")),
        user(result("toolu_A")),
    )
    assert_violation(
        check_request(history), "messages.3.content.1: `tool_use` ids must be unique", "messages.3.content.1"
    )


def test_duplicate_tool_use_id_in_one_message():
    history = body(QUESTION, assistant(call("toolu_A"), call("toolu_A")), user(result("toolu_A")))
    assert_violation(
        check_request(history), "messages.1.content.1: `tool_use` ids must be unique", "messages.1.content.1"
    )


@pytest.mark.parametrize("bad_id", ["toolu 01", "toolu.01", "tölu", "toolu_01\n"])
def test_tool_use_id_with_bad_characters(bad_id):
    found = check_request(body(QUESTION, assistant(call(bad_id)), user(result(bad_id))))
    assert_violation(
        found,
        "messages.1.content.0.tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'",
        "messages.1.content.0",
    )


@pytest.mark.parametrize("bad_name", ["my calculator", "calc.v2", "", "x" * 129])
def test_bad_tool_name(bad_name):
    found = check_request(body(QUESTION, tools=[CALCULATOR, {**CALCULATOR, "name": bad_name}]))
    assert_violation(
        found, "tools.1.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'", "tools.1"
    )


SCHEMA_WITHOUT_TYPE = {"properties": {"expression": {"type": "string"}}, "required": ["expression"]}


@pytest.mark.parametrize("schema, message", [
    (SCHEMA_WITHOUT_TYPE, "tools.1.custom.input_schema.type: Field required"),
    ({**SCHEMA_WITHOUT_TYPE, "type": "string"}, "tools.1.custom.input_schema.type: Input should be 'object'"),
    ({**SCHEMA_WITHOUT_TYPE, "type": ["object"]}, "tools.1.custom.input_schema.type: Input should be 'object'"),
], ids=["no type", "type string", "type as a list"])
def test_an_input_schema_must_be_of_type_object(schema, message):
    """Valid JSON Schema all the same (jsonschema takes it): the API's own types require "type": "object"."""
    found = check_request(body(QUESTION, tools=[CALCULATOR, {**CALCULATOR, "name": "calc2", "input_schema": schema}]))
    assert_violation(found, message, "tools.1")
    assert "tools.1.custom.input_schema.type" in found.hint


def test_an_input_schema_of_type_object_with_nothing_else_passes():
    assert check_request(body(QUESTION, tools=[{**CALCULATOR, "input_schema": {"type": "object"}}])) is None


def test_prefill():
    found = check_request(body(QUESTION, assistant(text("The answer is"))))
    assert_violation(found, PREFILL, "messages.1")


def test_prefill_with_an_empty_final_assistant_message():
    """The empty-content rule exempts a final assistant message; prefill still rejects it."""
    found = check_request(body(QUESTION, {"role": "assistant", "content": ""}))
    assert_violation(found, PREFILL, "messages.1")


@pytest.mark.parametrize("content", ["", []])
def test_empty_content(content):
    found = check_request(body(QUESTION, assistant(text("Hi")), {"role": "user", "content": content}))
    assert_violation(
        found,
        "messages.2: all messages must have non-empty content except for the optional final assistant message",
        "messages.2",
    )


def test_empty_text_block():
    found = check_request(body(user(text("Hi"), text(""))))
    assert_violation(found, "messages: text content blocks must be non-empty", "messages.0.content.1")


def test_empty_text_block_inside_tool_result():
    history = body(QUESTION, assistant(call("toolu_A")), user(result("toolu_A", content=[text("")])))
    assert_violation(
        check_request(history), "messages: text content blocks must be non-empty", "messages.2.content.0.content.0"
    )


@pytest.mark.parametrize("blank", [" ", "\n\t "])
def test_whitespace_text_block(blank):
    found = check_request(body(QUESTION, assistant(text(blank)), user(text("?"))))
    assert_violation(
        found, "messages: text content blocks must contain non-whitespace text", "messages.1.content.0"
    )


def test_whitespace_string_content():
    found = check_request(body({"role": "user", "content": "   "}))
    assert_violation(found, "messages: text content blocks must contain non-whitespace text", "messages.0.content")


def test_whitespace_text_inside_tool_result():
    history = body(QUESTION, assistant(call("toolu_A")), user(result("toolu_A", content=[text("5"), text(" ")])))
    assert_violation(
        check_request(history),
        "messages: text content blocks must contain non-whitespace text",
        "messages.2.content.0.content.1",
    )


def test_hint_names_the_message_index():
    found = check_request(body(QUESTION, assistant(call("toolu_A")), user(text("go on"))))
    assert "1" in found.hint and "toolu_A" in found.hint


def test_error_body_is_the_api_envelope():
    found = check_request(body(QUESTION, assistant(text("The answer is"))))
    assert error_body(found, "req_011CSHoEeqs5C35K2UUqR7Fy") == {
        "type": "error",
        "error": {"type": "invalid_request_error", "message": PREFILL},
        "request_id": "req_011CSHoEeqs5C35K2UUqR7Fy",
    }


def test_templates_quote_the_api_verbatim():
    assert API_MESSAGES["tool_name"] == "tools.{k}.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'"
    assert API_MESSAGES["duplicate_id"] == "messages.{i}.content.{j}: `tool_use` ids must be unique"


# --- shape checks (pydantic-style wordings) ----------------------------------------------

SHAPE_CASES = [
    ("no messages", {"model": "m", "max_tokens": 1}, "messages: Field required", "messages"),
    ("body not a dict", ["hello"], "messages: Field required", "messages"),
    ("messages not a list", {"messages": {"role": "user"}}, "messages: Input should be a valid list", "messages"),
    (
        "messages empty",
        {"messages": []},
        "messages: List should have at least 1 item after validation, not 0",
        "messages",
    ),
    ("message not a dict", {"messages": ["hi"]}, "messages.0: Input should be a valid dictionary", "messages.0"),
    (
        "no role",
        {"messages": [{"content": "hi"}]},
        "messages.0.role: Field required",
        "messages.0",
    ),
    (
        "tool role",
        {"messages": [QUESTION, {"role": "tool", "content": "5"}]},
        "messages.1.role: Input should be 'user' or 'assistant'",
        "messages.1",
    ),
    (
        "system role",
        {"messages": [{"role": "system", "content": "Be brief."}, QUESTION]},
        "messages.0.role: Input should be 'user' or 'assistant'",
        "messages.0",
    ),
    ("no content", {"messages": [{"role": "user"}]}, "messages.0.content: Field required", "messages.0"),
    (
        "content None",
        {"messages": [{"role": "user", "content": None}]},
        "messages.0.content: Input should be a valid string or a list of content blocks",
        "messages.0",
    ),
    (
        "content int",
        {"messages": [{"role": "user", "content": 5}]},
        "messages.0.content: Input should be a valid string or a list of content blocks",
        "messages.0",
    ),
    (
        "block not a dict",
        {"messages": [user("hi")]},
        "messages.0.content.0: Input should be a valid dictionary",
        "messages.0.content.0",
    ),
    (
        "block without type",
        {"messages": [user({"text": "hi"})]},
        "messages.0.content.0.type: Field required",
        "messages.0.content.0",
    ),
    (
        "text block without text",
        {"messages": [user({"type": "text"})]},
        "messages.0.content.0.text.text: Field required",
        "messages.0.content.0",
    ),
    (
        "tool_result without tool_use_id",
        {"messages": [QUESTION, assistant(call("toolu_A")), user({"type": "tool_result", "content": "5"})]},
        "messages.2.content.0.tool_result.tool_use_id: Field required",
        "messages.2.content.0",
    ),
    (
        "tool_use without id",
        {"messages": [QUESTION, assistant({"type": "tool_use", "name": "calculator", "input": {}})]},
        "messages.1.content.0.tool_use.id: Field required",
        "messages.1.content.0",
    ),
    (
        "tool_use without name",
        {"messages": [QUESTION, assistant({"type": "tool_use", "id": "toolu_A", "input": {}})]},
        "messages.1.content.0.tool_use.name: Field required",
        "messages.1.content.0",
    ),
    (
        "tool_use without input",
        {"messages": [QUESTION, assistant({"type": "tool_use", "id": "toolu_A", "name": "calculator"})]},
        "messages.1.content.0.tool_use.input: Field required",
        "messages.1.content.0",
    ),
    (
        "tool_use input not a dict",
        {"messages": [QUESTION, assistant({"type": "tool_use", "id": "toolu_A", "name": "c", "input": "1+1"})]},
        "messages.1.content.0.tool_use.input: Input should be a valid dictionary",
        "messages.1.content.0",
    ),
    (
        "tool_use id not a string",
        {"messages": [QUESTION, assistant({"type": "tool_use", "id": 7, "name": "c", "input": {}})]},
        "messages.1.content.0.tool_use.id: Input should be a valid string",
        "messages.1.content.0",
    ),
    (
        "tool_result inside an assistant message",
        {"messages": [QUESTION, assistant(call("toolu_A"), result("toolu_A"))]},
        "messages.1.content.1: tool_result blocks are only allowed in user messages",
        "messages.1.content.1",
    ),
    (
        "tool_use inside a user message",
        {"messages": [user(text("Please run:"), call("toolu_A"))]},
        "messages.0.content.1: tool_use blocks are only allowed in assistant messages",
        "messages.0.content.1",
    ),
    (
        "tool_result content not a string or list",
        {"messages": [QUESTION, assistant(call("toolu_A")), user(result("toolu_A", content=5))]},
        "messages.2.content.0.tool_result.content: Input should be a valid string or a list of content blocks",
        "messages.2.content.0",
    ),
    (
        "block inside tool_result content not a dict",
        {"messages": [QUESTION, assistant(call("toolu_A")), user(result("toolu_A", content=["5"]))]},
        "messages.2.content.0.tool_result.content.0: Input should be a valid dictionary",
        "messages.2.content.0.content.0",
    ),
    ("tools not a list", {"messages": [QUESTION], "tools": CALCULATOR}, "tools: Input should be a valid list", "tools"),
    ("tool not a dict", {"messages": [QUESTION], "tools": ["calculator"]}, "tools.0: Input should be a valid dictionary", "tools.0"),
    (
        "tool without name",
        {"messages": [QUESTION], "tools": [{"input_schema": {"type": "object"}}]},
        "tools.0.custom.name: Field required",
        "tools.0",
    ),
]


@pytest.mark.parametrize("case, request_body, message, path", SHAPE_CASES, ids=[c[0] for c in SHAPE_CASES])
def test_shape_errors(case, request_body, message, path):
    assert_violation(check_request(request_body), message, path)


def test_shape_comes_before_the_conversation_rules():
    """A history with a prefill AND a malformed block reports the malformed block."""
    found = check_request(body(user("oops"), assistant(text("The answer is"))))
    assert found.message == "messages.0.content.0: Input should be a valid dictionary"


# --- valid histories ---------------------------------------------------------------------

ROUND_TRIP = [
    QUESTION,
    assistant(text("I'll work that out."), call("toolu_01A09q90qw90lq917835lq9")),
    user(result("toolu_01A09q90qw90lq917835lq9", "9544717")),
]

VALID = {
    "plain question": [{"role": "user", "content": "What is 2 + 2?"}],
    "list of text blocks": [user(text("Hello"), text("What is 2 + 2?"))],
    "string then blocks": [
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Hello!"},
        user(text("What is 2 + 2?")),
    ],
    "full tool round trip": ROUND_TRIP,
    "round trip then final answer and follow-up": ROUND_TRIP
    + [assistant(text("4823 * 1979 = 9544717.")), user(text("Thanks!"))],
    "parallel results in another order": [
        QUESTION,
        assistant(call("toolu_A"), call("toolu_B"), call("toolu_C")),
        user(result("toolu_C"), result("toolu_A"), result("toolu_B")),
    ],
    "thinking block before tool_use": [
        QUESTION,
        assistant({"type": "thinking", "thinking": "", "signature": "EqQBCkYIBx"}, call("toolu_A")),
        user(result("toolu_A")),
    ],
    "redacted thinking block": [
        QUESTION,
        assistant({"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix"}, call("toolu_A")),
        user(result("toolu_A")),
    ],
    "is_error result": [
        QUESTION,
        assistant(call("toolu_A")),
        user(result("toolu_A", "Error: division by zero", is_error=True)),
    ],
    "text after the results": [
        QUESTION,
        assistant(call("toolu_A"), call("toolu_B")),
        user(result("toolu_B"), result("toolu_A"), text("Please double-check.")),
    ],
    "tool_result content as text blocks": [
        QUESTION,
        assistant(call("toolu_A")),
        user(result("toolu_A", content=[text("9544717"), text("(exact)")])),
    ],
    "tool_result without content": [
        QUESTION,
        assistant(call("toolu_A")),
        user({"type": "tool_result", "tool_use_id": "toolu_A"}),
    ],
    "consecutive user messages": [user(text("Hi")), {"role": "user", "content": "What is 2 + 2?"}],
    "extra keys": [
        user({"type": "text", "text": "Hi", "cache_control": {"type": "ephemeral"}}),
        assistant(
            {"type": "text", "text": "Let me check.", "citations": None},
            {**call("toolu_A"), "caller": {"type": "direct"}},
        ),
        user({**result("toolu_A"), "cache_control": {"type": "ephemeral"}}),
    ],
    "image block": [
        user({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBOR"}}, text("?"))
    ],
}


@pytest.mark.parametrize("messages", VALID.values(), ids=VALID.keys())
def test_valid_histories_pass(messages):
    assert check_request(body(*messages)) is None


def test_valid_without_tools_and_with_system():
    assert check_request({"model": "m", "max_tokens": 5, "system": "Be brief.", "messages": [QUESTION]}) is None


# --- properties --------------------------------------------------------------------------

KEYS = st.sampled_from(
    ["messages", "role", "content", "type", "text", "id", "tool_use_id", "name", "input", "tools"]
) | st.text(max_size=5)
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.sampled_from(["user", "assistant", "text", "tool_use", "tool_result", "thinking", "", " "])
    | st.text(max_size=8)
)
JSON_LIKE = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(KEYS, inner, max_size=5), max_leaves=30)


@settings(max_examples=300)
@given(JSON_LIKE)
def test_never_raises_on_any_body(anything):
    found = check_request(anything)
    assert found is None or isinstance(found, Violation)


@settings(max_examples=300)
@given(JSON_LIKE)
def test_never_raises_on_any_messages(anything):
    found = check_request({"model": "m", "max_tokens": 1, "messages": anything})
    assert found is None or isinstance(found, Violation)


ID_CHARS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-"


@st.composite
def conversations(draw):
    """A valid history: a question, then tool turns of 1-3 parallel calls, each answered by ONE
    user message with the results shuffled and, sometimes, text after them."""
    messages = [QUESTION]
    for turn in range(draw(st.integers(0, 4))):
        suffixes = draw(st.lists(st.text(ID_CHARS, min_size=1, max_size=6), min_size=1, max_size=3))
        ids = [f"toolu_{turn}_{n}_{suffix}" for n, suffix in enumerate(suffixes)]
        lead = [text("Let me check.")] if draw(st.booleans()) else []
        messages.append(assistant(*lead, *[call(tool_id) for tool_id in ids]))
        results = [result(tool_id) for tool_id in draw(st.permutations(ids))]
        tail = [text("Anything else?")] if draw(st.booleans()) else []
        messages.append(user(*results, *tail))
    return messages


@given(conversations())
def test_generated_valid_conversations_pass(messages):
    assert check_request(body(*messages)) is None


@given(st.data())
def test_removing_any_result_is_reported(data):
    messages = data.draw(conversations().filter(lambda m: len(m) > 1))
    answers = [i for i in range(2, len(messages), 2)]
    i = data.draw(st.sampled_from(answers))
    j = data.draw(st.integers(0, len(messages[i]["content"]) - 1).filter(
        lambda j: messages[i]["content"][j]["type"] == "tool_result"
    ))
    removed = messages[i]["content"][j]["tool_use_id"]
    content = messages[i]["content"][:j] + messages[i]["content"][j + 1 :]
    if content:
        messages[i] = user(*content)
    else:  # the result was the whole message: an empty message would be a different error
        del messages[i]
    found = check_request(body(*messages))
    assert found is not None
    assert found.message.startswith("messages.")
    assert removed in found.message


def _slots(value):
    """Every (container, key) in a JSON value, so a test can overwrite any one of them."""
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else []
    for key, inner in items:
        yield value, key
        yield from _slots(inner)


@settings(max_examples=300)
@given(conversations(), st.data())
def test_never_raises_when_any_value_of_a_valid_request_is_corrupted(messages, data):
    """Random JSON rarely gets past the first shape check; corrupting ONE value of a valid
    request reaches every rule, which is where a missing guard would raise."""
    request_body = copy.deepcopy(body(*messages))  # the builders share QUESTION and CALCULATOR
    container, key = data.draw(st.sampled_from(list(_slots(request_body))))
    container[key] = data.draw(JSON_LIKE)
    found = check_request(request_body)
    assert found is None or isinstance(found, Violation)


def test_messages_null_is_not_a_list():
    assert_violation(check_request({"messages": None}), "messages: Input should be a valid list", "messages")
