"""The request's whole shape, read from the SDK's types (looplab/api_shape.py) and refused by
rules.py as the API refuses it: fields the API does not define, JSON types, required fields,
invalid tool schemas. The rules' conversation cases are in test_rules.py."""

import json

import anthropic
import httpx2
import pytest

import looplab
from looplab import api_shape
from looplab.history import to_wire
from looplab.rules import API_MESSAGES, Violation, check_request

MODEL = looplab.MODEL
QUESTION = {"role": "user", "content": [{"type": "text", "text": "What is 4823 * 1979?"}]}
CALCULATOR = {
    "name": "calculator",
    "description": "Evaluate an arithmetic expression.",
    "input_schema": {
        "type": "object",
        "properties": {"expression": {"type": "string"}},
        "required": ["expression"],
    },
}
INVALID_SCHEMA = (
    "tools.{k}.custom.input_schema: JSON schema is invalid. It must match JSON Schema draft 2020-12"
    " (https://json-schema.org/draft/2020-12). Learn more about tool use at"
    " https://platform.claude.com/docs/en/agents-and-tools/tool-use/overview."
)

# A response as the API sends it, with the response-only fields a loop meets (citations, caller).
RESPONSE = {
    "id": "msg_01XFDUDYJgAACzvnptvVoYEL",
    "type": "message",
    "role": "assistant",
    "model": MODEL,
    "content": [
        {"type": "text", "text": "I'll work that out.", "citations": None},
        {
            "type": "tool_use",
            "id": "toolu_01A09q90qw90lq917835lq9",
            "name": "calculator",
            "input": {"expression": "4823 * 1979"},
            "caller": {"type": "direct"},
        },
    ],
    "stop_reason": "tool_use",
    "stop_sequence": None,
    "usage": {"input_tokens": 412, "output_tokens": 57},
}
RESULT = {
    "role": "user",
    "content": [{"type": "tool_result", "tool_use_id": "toolu_01A09q90qw90lq917835lq9", "content": "9544717"}],
}


def body(*messages, tools=(CALCULATOR,), **top):
    return {"model": MODEL, "max_tokens": 1024, "messages": list(messages), "tools": list(tools), **top}


def refused(found, message, path):
    assert isinstance(found, Violation), found
    assert found.message == message
    assert found.path == path
    return found.hint


# --- the reference's forms, with the API's exact words -----------------------------------


def test_extra_field_in_a_message():
    hint = refused(
        check_request(body(QUESTION, {"role": "assistant", "content": "Hi", "id": "msg_1"}, QUESTION)),
        "messages.1.id: Extra inputs are not permitted",
        "messages.1",
    )
    assert "Message 1" in hint and "reply.content" in hint


def test_extra_field_in_a_block_names_the_block_type():
    block = {"type": "tool_use", "id": "toolu_A", "name": "calculator", "input": {}, "text": "4823 * 1979"}
    hint = refused(
        check_request(body(QUESTION, {"role": "assistant", "content": [block]}, QUESTION)),
        "messages.1.content.0.tool_use.text: Extra inputs are not permitted",
        "messages.1.content.0",
    )
    assert "`text`" in hint and "tool_use" in hint


def test_extra_field_in_a_result_block():
    result = {**RESULT["content"][0], "output": "9544717"}
    found = check_request(body(QUESTION, {"role": "assistant", "content": RESPONSE["content"]}, {"role": "user", "content": [result]}))
    refused(found, "messages.2.content.0.tool_result.output: Extra inputs are not permitted", "messages.2.content.0")


def test_extra_field_at_the_top_level():
    hint = refused(
        check_request(body(QUESTION, response_format={"type": "json"})),
        "response_format: Extra inputs are not permitted",
        "response_format",
    )
    assert "response_format" in hint


def test_extra_field_in_a_tool():
    """The reference quotes `defer_loading`, which the pinned SDK defines; `parameters` (OpenAI's
    name for input_schema) is the same form with a field the SDK does not define."""
    hint = refused(
        check_request(body(QUESTION, tools=[CALCULATOR, {**CALCULATOR, "name": "calc2", "parameters": {}}])),
        "tools.1.custom.parameters: Extra inputs are not permitted",
        "tools.1",
    )
    assert "Tool 1" in hint and "`parameters`" in hint


def test_extra_field_deeper_down():
    block = {"type": "text", "text": "Hi", "cache_control": {"type": "ephemeral", "scope": "global"}}
    refused(
        check_request(body({"role": "user", "content": [block]})),
        "messages.0.content.0.text.cache_control.scope: Extra inputs are not permitted",
        "messages.0.content.0",
    )


@pytest.mark.parametrize(
    "schema, reason",
    [
        ({"type": "object", "properties": {"expression": {"type": "string"}}, "required": "expression"}, "array"),
        ({"type": "objekt", "properties": {"expression": {"type": "string"}}}, "objekt"),
        ({"type": "object", "properties": {"expression": {"type": "str"}}}, "str"),
        ({"type": "object", "properties": ["expression"]}, "object"),
    ],
    ids=["required as a string", "type objekt", "property type str", "properties as a list"],
)
def test_invalid_input_schema(schema, reason):
    found = check_request(body(QUESTION, tools=[CALCULATOR, {**CALCULATOR, "name": "calc2", "input_schema": schema}]))
    hint = refused(found, INVALID_SCHEMA.replace("{k}", "1"), "tools.1")
    assert "Tool 1" in hint and reason in hint


def test_the_schema_text_is_the_apis():
    assert API_MESSAGES["invalid_schema"] == INVALID_SCHEMA
    assert API_MESSAGES["extra"] == "{loc}: Extra inputs are not permitted"


def test_a_valid_schema_in_another_style_passes():
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": {"expression": {"type": "string", "minLength": 1}, "precision": {"type": ["integer", "null"]}},
        "required": ["expression"],
        "additionalProperties": False,
    }
    assert check_request(body(QUESTION, tools=[{**CALCULATOR, "input_schema": schema}])) is None


def test_the_schema_verdict_is_cached():
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    api_shape._schema_verdict.cache_clear()
    for _ in range(3):
        assert api_shape.schema_error(dict(schema)) is None
    assert api_shape._schema_verdict.cache_info().hits == 2


# --- types and required fields (the course's own wording, in pydantic's style) ----------

TYPE_CASES = [
    ("max_tokens as a string", body(QUESTION, max_tokens="1024"), "max_tokens: Input should be a valid integer", "max_tokens"),
    ("system as a number", body(QUESTION, system=5), "system: Input should be a valid string or a list of content blocks", "system"),
    ("is_error as a string", body(QUESTION, {"role": "assistant", "content": RESPONSE["content"]},
                                  {"role": "user", "content": [{**RESULT["content"][0], "is_error": "yes"}]}),
     "messages.2.content.0.tool_result.is_error: Input should be a valid boolean", "messages.2.content.0"),
    ("tool description as a list", body(QUESTION, tools=[{**CALCULATOR, "description": ["Evaluate"]}]),
     "tools.0.custom.description: Input should be a valid string", "tools.0"),
    ("input_schema as a string", body(QUESTION, tools=[{**CALCULATOR, "input_schema": "object"}]),
     "tools.0.custom.input_schema: Input should be a valid dictionary", "tools.0"),
    ("unknown tool_choice", body(QUESTION, tool_choice={"type": "sometimes"}),
     "tool_choice: Input tag 'sometimes' found using 'type' does not match any of the expected tags:"
     " 'auto', 'any', 'tool', 'none'", "tool_choice"),
    ("cache_control ttl", body(QUESTION, cache_control={"type": "ephemeral", "ttl": "10m"}),
     "cache_control.ttl: Input should be '1h' or '5m'", "cache_control"),
    ("a block type misspelt", body({"role": "user", "content": [{"type": "txt", "text": "Hi"}]}),
     None, "messages.0.content.0"),
    ("metadata user_id as a number", body(QUESTION, metadata={"user_id": 7}),
     "metadata.user_id: Input should be a valid string", "metadata"),
]

REQUIRED_CASES = [
    ("tool without input_schema", body(QUESTION, tools=[{"name": "calculator"}]),
     "tools.0.custom.input_schema: Field required", "tools.0"),
    ("forced tool without its name", body(QUESTION, tool_choice={"type": "tool"}),
     "tool_choice.tool.name: Field required", "tool_choice"),
    ("image without source", body({"role": "user", "content": [{"type": "image"}, {"type": "text", "text": "?"}]}),
     "messages.0.content.0.image.source: Field required", "messages.0.content.0"),
    ("system block without text", body(QUESTION, system=[{"type": "text"}]),
     "system.0.text: Field required", "system.0"),  # one kind of block: no tag in the location
]


@pytest.mark.parametrize("case, request_body, message, path", TYPE_CASES + REQUIRED_CASES,
                         ids=[c[0] for c in TYPE_CASES + REQUIRED_CASES])
def test_types_and_required_fields(case, request_body, message, path):
    found = check_request(request_body)
    assert isinstance(found, Violation), found
    if message is not None:
        assert found.message == message
    assert found.path == path
    assert found.hint.strip()


def test_every_known_block_type_is_named_when_the_type_is_misspelt():
    found = check_request(body({"role": "user", "content": [{"type": "txt", "text": "Hi"}]}))
    assert found.message.startswith("messages.0.content.0: Input tag 'txt' found using 'type'")
    assert "'text'" in found.message and "'tool_result'" in found.message


# --- the whole SDK Message appended -------------------------------------------------------


def test_a_whole_message_appended_is_refused():
    reply = anthropic.types.Message.model_validate(RESPONSE)
    whole = reply.model_dump(mode="json", exclude_unset=True)
    hint = refused(
        check_request(body(QUESTION, whole, RESULT)), "messages.1.id: Extra inputs are not permitted", "messages.1"
    )
    for name in ("id", "model", "usage", "stop_reason"):
        assert name in hint
    assert '{"role": "assistant", "content": reply.content}' in hint


def test_to_param_and_reply_content_pass():
    reply = anthropic.types.Message.model_validate(RESPONSE)
    content = [block.model_dump(mode="json", exclude_unset=True) for block in reply.content]
    assert check_request(body(QUESTION, {"role": "assistant", "content": content}, RESULT)) is None
    assert check_request(body(QUESTION, to_wire(reply.to_param()), RESULT)) is None  # as the SDK sends it


# --- through the real SDK and looplab's client: what a learner's loop really sends ------


def live_client(tmp_path, monkeypatch, seen: list):
    """looplab's client over a stand-in API that records each body it receives."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")

    def api(request: httpx2.Request) -> httpx2.Response:
        seen.append(json.loads(request.read()))
        return httpx2.Response(200, json=RESPONSE)

    return looplab.client(tmp_path / "unused.json", mode="live", upstream=httpx2.MockTransport(api),
                          quiet=True, print_hints=False)


def test_appending_reply_content_through_the_client_passes(tmp_path, monkeypatch):
    """The SDK serialises its own blocks without the fields left unset; citations: None and
    caller, which the API did send, go back as they came, and the API accepts them."""
    seen: list = []
    client = live_client(tmp_path, monkeypatch, seen)
    messages = [{"role": "user", "content": "What is 4823 * 1979?"}]
    reply = client.messages.create(model=MODEL, max_tokens=1024, messages=messages, tools=[CALCULATOR])
    messages.append({"role": "assistant", "content": reply.content})
    messages.append(RESULT)
    client.messages.create(model=MODEL, max_tokens=1024, messages=messages, tools=[CALCULATOR])
    assert len(seen) == 2, "the rules refused a legitimate history"
    sent = seen[1]["messages"][1]["content"]
    assert sent == RESPONSE["content"]


def test_appending_the_whole_reply_through_the_client_gets_the_400(tmp_path, monkeypatch):
    seen: list = []
    client = live_client(tmp_path, monkeypatch, seen)
    messages = [{"role": "user", "content": "What is 4823 * 1979?"}]
    reply = client.messages.create(model=MODEL, max_tokens=1024, messages=messages, tools=[CALCULATOR])
    messages.append(reply)
    messages.append(RESULT)
    with pytest.raises(anthropic.BadRequestError) as raised:
        client.messages.create(model=MODEL, max_tokens=1024, messages=messages, tools=[CALCULATOR])
    assert raised.value.body["error"]["message"] == "messages.1.id: Extra inputs are not permitted"
    assert len(seen) == 1, "the refused request reached the network"


def test_an_extra_top_level_field_through_extra_body_gets_the_400(tmp_path, monkeypatch):
    seen: list = []
    client = live_client(tmp_path, monkeypatch, seen)
    with pytest.raises(anthropic.BadRequestError) as raised:
        client.messages.create(model=MODEL, max_tokens=1024, messages=[QUESTION],
                               extra_body={"response_format": {"type": "json_object"}})
    assert raised.value.body["error"]["message"] == "response_format: Extra inputs are not permitted"


def test_a_string_required_through_the_client_gets_the_400(tmp_path, monkeypatch):
    seen: list = []
    client = live_client(tmp_path, monkeypatch, seen)
    tool = {**CALCULATOR, "input_schema": {**CALCULATOR["input_schema"], "required": "expression"}}
    with pytest.raises(anthropic.BadRequestError) as raised:
        client.messages.create(model=MODEL, max_tokens=1024, messages=[QUESTION], tools=[tool])
    assert raised.value.body["error"]["message"] == INVALID_SCHEMA.replace("{k}", "0")


def test_every_request_parameter_the_sdk_sends_passes(tmp_path, monkeypatch):
    """The SDK's own optional parameters, used as documented, are fields the validator knows."""
    seen: list = []
    client = live_client(tmp_path, monkeypatch, seen)
    client.messages.create(
        model=MODEL, max_tokens=1024, messages=[QUESTION], tools=[CALCULATOR],
        system=[{"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}}],
        tool_choice={"type": "auto", "disable_parallel_tool_use": True},
        metadata={"user_id": "learner-7"}, stop_sequences=["STOP"], service_tier="auto",
    )
    assert len(seen) == 1


# --- the reviewed list of fields ----------------------------------------------------------


def test_the_committed_field_list_matches_the_installed_sdk():
    """A new SDK version that adds or drops a field fails here, naming it, so that a maintainer
    reviews what changed before the course follows (api_fields.txt says how to write it again)."""
    derived, committed = api_shape.field_list(), api_shape.committed_fields()
    added = [line for line in derived if line not in set(committed)]
    dropped = [line for line in committed if line not in set(derived)]
    assert not added and not dropped, (
        f"anthropic {anthropic.__version__} changed the request's fields.\n"
        + "".join(f"  added:   {line}\n" for line in added)
        + "".join(f"  dropped: {line}\n" for line in dropped)
        + "Review them, then: .venv/bin/python -c 'from looplab.api_shape import write_fields; write_fields()'"
    )


def test_the_field_list_names_what_the_course_sends():
    fields = set(api_shape.committed_fields())
    for line in (
        "messages: list (required)",
        "messages.*.<role=user>.content: string | list (required)",
        "messages.*.<role=user>.content.*.tool_result.tool_use_id: string (required)",
        "messages.*.<role=user>.content.*.tool_use.id: string (required)",
        "tools.*.custom.input_schema: object (required)",
        "tools.*.custom.name: string (required)",
        "system: string | list",
    ):
        assert line in fields, line


def test_the_tree_is_read_once_per_process():
    assert api_shape.request() is api_shape.request()


# --- tags: what picks the record ----------------------------------------------------------


def test_a_role_that_is_not_a_string_is_a_role_error():
    found = check_request({"messages": [{"role": None, "content": "Hi"}]})
    refused(found, "messages.0.role: Input should be 'user' or 'assistant'", "messages.0")


def test_a_custom_tool_may_say_its_type_or_not():
    for tool in ({**CALCULATOR, "type": "custom"}, {**CALCULATOR, "type": None}, CALCULATOR):
        assert check_request(body(QUESTION, tools=[tool])) is None


def test_the_apis_own_tools_are_known_by_their_type():
    web_search = {"type": "web_search_20250305", "name": "web_search", "max_uses": 3}
    assert check_request(body(QUESTION, tools=[CALCULATOR, web_search])) is None
    found = check_request(body(QUESTION, tools=[{**web_search, "name": "search"}]))
    refused(found, "tools.0.web_search_20250305.name: Input should be 'web_search'", "tools.0")


def test_an_unknown_tool_type_is_refused():
    found = check_request(body(QUESTION, tools=[{**CALCULATOR, "type": "function"}]))
    assert found.message.startswith("tools.0: Input tag 'function' found using 'type' does not match")
    assert found.path == "tools.0"
