"""The Messages API's conversation rules, as one pure function over a request body.

The course's transport calls `check_request` on every request before it answers from a
recording, so a broken history gets the same 400 offline as it would from the real API,
plus a hint in the course's language (texts/rules.toml). The body is the JSON the SDK POSTs to
/v1/messages, already decoded: `{"model": ..., "max_tokens": ..., "messages": [...], "tools": [...], ...}`.

Order of the checks (the first one that finds something wins):

1. shape      -- the request's whole shape, as the SDK's own request types describe it
                 (api_shape.py): `messages` is a non-empty list of messages whose role is user or
                 assistant, every block and field of a type the API defines, with the JSON type
                 it wants and its required fields, and no field the API does not define ("Extra
                 inputs are not permitted"); results only in user messages, calls only in
                 assistant ones. Every later rule may rely on this shape, which is how
                 `check_request` never raises, whatever it is given.
2. tools      -- each tool in turn: its shape, then a custom tool's name (the API's pattern),
                 then its `input_schema` (valid JSON Schema, draft 2020-12), whose `type` is "object".
3. the rest of the request's top level (system, tool_choice, metadata...): shape and extras.
4. empty content, then empty text blocks, then whitespace-only text blocks.
5. tool_use ids: the pattern, then uniqueness across the whole history.
6. pairing    -- which result answers which call is worked out by conversation.py (the viewer and
                 exercise 3.2's reference read it too); this walks the messages in order: for a
                 user message, does every tool_result cite a tool_use of the assistant message just
                 before? For an assistant message, does the next message start with a result for
                 each of its tool_use blocks?
7. prefill    -- the last message must come from the user.

Pairing runs before prefill on purpose: a history that ends with an assistant `tool_use`
reports the missing `tool_result`, because that is the learner's actual mistake (they forgot
to run the tool and reply), not an attempt at prefill.

Consecutive messages with the same role are NOT merged before checking: results split over
two user messages are reported, as the course teaches (docs/API_RULES.md says why).

The real API does not promise which error it reports when a body breaks several rules; this
order is the course's choice, kept simple and fixed so that tests and hints are predictable.

docs/API_RULES.md lists these rules in prose: where each 400 text comes from, and which ones are
the course's own.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Iterator

from . import api_shape, conversation
from .catalogue import words

# The API's own messages, verbatim as the API returns them (docs/API_RULES.md, "The API's 400
# texts", says where each was seen). Placeholders: {i} message index, {j} block index, {k} tool index.
API_MESSAGES = {
    "missing_result": (
        "messages.{i}: `tool_use` ids were found without `tool_result` blocks immediately after: {ids}."
        " Each `tool_use` block must have a corresponding `tool_result` block in the next message."
    ),
    "unexpected_result": (
        "messages.{i}.content.{j}: unexpected `tool_use_id` found in `tool_result` blocks: {id}."
        " Each `tool_result` block must have a corresponding `tool_use` block in the previous message."
    ),
    "duplicate_id": "messages.{i}.content.{j}: `tool_use` ids must be unique",
    "id_pattern": "messages.{i}.content.{j}.tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'",
    "tool_name": "tools.{k}.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'",
    "prefill": (
        "This model does not support assistant message prefill."
        " The conversation must end with a user message."
    ),
    "empty_content": (
        "messages.{i}: all messages must have non-empty content"
        " except for the optional final assistant message"
    ),
    "empty_text": "messages: text content blocks must be non-empty",
    "whitespace_text": "messages: text content blocks must contain non-whitespace text",
    "extra": "{loc}: Extra inputs are not permitted",
    "invalid_schema": (
        "tools.{k}.custom.input_schema: JSON schema is invalid. It must match JSON Schema draft 2020-12"
        " (https://json-schema.org/draft/2020-12). Learn more about tool use at"
        " https://platform.claude.com/docs/en/agents-and-tools/tool-use/overview."
    ),
}

# Shape errors. These are the course's own (docs/API_RULES.md, "Shape errors"): they follow the
# pydantic style the API uses for its other field errors ("<location>: <what is wrong>"), so
# malformed input gets a clear 400 instead of being silently accepted. {loc} is the field's location.
FIELD_ERRORS = {
    "required": "{loc}: Field required",
    "dict": "{loc}: Input should be a valid dictionary",
    "list": "{loc}: Input should be a valid list",
    "string": "{loc}: Input should be a valid string",
    "integer": "{loc}: Input should be a valid integer",
    "number": "{loc}: Input should be a valid number",
    "boolean": "{loc}: Input should be a valid boolean",
    "choice": "{loc}: Input should be {expected}",
    "types": "{loc}: Input should be {expected}",
    "tag": "{loc}: Input tag {tag} found using '{key}' does not match any of the expected tags: {expected}",
    "content": "{loc}: Input should be a valid string or a list of content blocks",
    "too_short": "{loc}: List should have at least 1 item after validation, not 0",
    "role": "{loc}: Input should be 'user' or 'assistant'",
    "result_in_assistant": "{loc}: tool_result blocks are only allowed in user messages",
    "use_in_user": "{loc}: tool_use blocks are only allowed in assistant messages",
}

# One or two sentences for the learner per rule, in the course's language: texts/rules.toml, one row a rule
# (or a row of its own where the hint depends on where the fault is, as for an extra field).
HINTS = words(__file__)

# The fields a message may carry: any other is what appending the SDK's whole Message sends.
MESSAGE_FIELDS = ("role", "content")

ID_PATTERN = re.compile(r"[a-zA-Z0-9_-]+")
TOOL_NAME_PATTERN = re.compile(r"[a-zA-Z0-9_-]{1,128}")


@dataclass(frozen=True)
class Violation:
    """One broken rule: what the API would say, what a learner should do, and where."""

    message: str  # the API's error.message, verbatim, with indices/ids filled in
    hint: str  # plain words for the learner, in the course's language: what is wrong and how to fix it
    path: str  # the message, block or tool at fault, e.g. "messages.3" or "messages.4.content.0"


def check_request(body: dict) -> Violation | None:
    """Return the first rule this request body breaks, or None if the API would accept it.

    The rules run in the order of RULES (see the module docstring); the first hit wins, so a
    learner fixes one thing at a time, as with the real API. It never raises, whatever it is
    given: a learner's broken history must come back as a 400, not as a crash in the course.
    """
    for rule in RULES:
        found = rule(body)
        if found is not None:
            return found
    return None


def error_body(violation: Violation, request_id: str) -> dict:
    """The 400 body the API sends, so the SDK raises a real `anthropic.BadRequestError`."""
    return {
        "type": "error",
        "error": {"type": "invalid_request_error", "message": violation.message},
        "request_id": request_id,
    }


# --- building a Violation ---------------------------------------------------------------


def _fill(template: str, values: dict) -> str:
    """Fill {name} placeholders in one pass, leaving unknown ones alone: the templates quote
    the API's regexes ('{1,128}') verbatim, which str.format would choke on."""

    def value(match: re.Match) -> str:
        name = match.group(1)
        return str(values[name]) if name in values else match.group(0)

    return re.sub(r"\{(\w+)\}", value, template)


def _violation(rule: str, path: str, hint: str | None = None, **values) -> Violation:
    """`hint` names the row of HINTS when it is not the rule's own (an extra field's depends on where)."""
    message = API_MESSAGES.get(rule) or FIELD_ERRORS[rule]
    values = {"path": path, **_place(path), **values}
    return Violation(_fill(message, values), _fill(HINTS(hint or rule), values), path)


def _place(path: str) -> dict:
    """The indices a hint may name: {i} and {j} of a message and block, {k} of a tool."""
    parts = path.split(".")
    names = {"messages": ("i", "j"), "tools": ("k",)}.get(parts[0], ())
    numbers = [part for part in parts[1:] if part.isdigit()]
    return dict(zip(names, numbers))


def _field_error(kind: str, loc: str, path: str) -> Violation:
    """A shape error: `loc` is the field the API would name, `path` the object holding it."""
    return _violation(kind, path, loc=loc)


# --- 1. shape ----------------------------------------------------------------------------


def _check_shape(body: dict) -> Violation | None:
    """Reject malformed input up front, so every later rule can index without fear."""
    if not isinstance(body, dict) or "messages" not in body:  # a non-dict body has no messages either
        return _field_error("required", "messages", "messages")
    messages = body["messages"]
    if isinstance(messages, list) and not messages:  # the SDK's types cannot say "at least one"
        return _field_error("too_short", "messages", "messages")
    found = api_shape.problem(messages, api_shape.messages(), ("messages",), ("messages",))
    return _from_problem(found, body) if found is not None else _check_block_roles(messages)


def _check_block_roles(messages: list) -> Violation | None:
    """The SDK's types let any block sit in any message; the API does not: only the model calls
    tools, and only your program answers them."""
    for i, message in enumerate(messages):
        content = message["content"]
        for j, block in enumerate(content if isinstance(content, list) else []):
            path = f"messages.{i}.content.{j}"
            if block["type"] == "tool_result" and message["role"] == "assistant":
                return _field_error("result_in_assistant", path, path)
            if block["type"] == "tool_use" and message["role"] == "user":
                return _field_error("use_in_user", path, path)
    return None


def _from_problem(found: api_shape.Problem, body: dict) -> Violation:
    """A shape problem as the API words it, with the hint for where it is."""
    if found.kind != "extra":
        return _violation(found.kind, found.path, loc=found.loc, **found.values)
    hint, more = _extra_hint(found.loc.split("."), body)
    return _violation("extra", found.path, hint=hint, loc=found.loc, **found.values, **more)


def _extra_hint(parts: list, body: dict) -> tuple[str, dict]:
    """Which hint an extra field gets, and what it names: in a message (the whole Message
    appended), in a block, in a tool, at the top level, or anywhere else."""
    if len(parts) == 1:
        return "extra_top", {}
    if parts[0] == "tools" and len(parts) == 4:  # tools.{k}.{tag}.{field}
        return "extra_tool", {}
    if parts[0] == "messages" and len(parts) == 3:  # messages.{i}.{field}
        message = body["messages"][int(parts[1])]
        return "extra_message", {"fields": ", ".join(key for key in message if key not in MESSAGE_FIELDS)}
    if parts[0] == "messages" and len(parts) == 6 and parts[2] == "content":  # ….content.{j}.{type}.{field}
        return "extra_block", {"kind": parts[4]}
    return "extra", {}


# --- 2. tools ----------------------------------------------------------------------------


def _check_tools(body: dict) -> Violation | None:
    """Each tool in turn: its shape, then a custom tool's name and input_schema."""
    if "tools" not in body:
        return None
    tools = body["tools"]
    if not isinstance(tools, list):
        return _field_error("list", "tools", "tools")
    for k, tool in enumerate(tools):
        found = api_shape.problem(tool, api_shape.tool(), ("tools", k), ("tools", k))
        if found is not None:
            return _from_problem(found, body)
        if tool.get("type") not in (None, "custom"):  # the API's own tools: their names are fixed
            continue
        if not TOOL_NAME_PATTERN.fullmatch(tool["name"]):
            return _violation("tool_name", f"tools.{k}", k=k, name=repr(tool["name"]))
        reason = api_shape.schema_error(tool["input_schema"])
        if reason is not None:
            return _violation("invalid_schema", f"tools.{k}", k=k, reason=reason)
        found = _check_schema_type(tool["input_schema"], k)
        if found is not None:
            return found
    return None


def _check_schema_type(schema: dict, k: int) -> Violation | None:
    """A tool's input is an object: the API types `input_schema.type` as the one value "object", required. A schema
    without it is valid JSON Schema all the same, so jsonschema passes it; the API's own validation refuses it, in
    pydantic's words (`tools.0.custom.input_schema.type: Field required`, `... Input should be 'object'`)."""
    loc = f"tools.{k}.custom.input_schema.type"
    if "type" not in schema:
        return _field_error("required", loc, f"tools.{k}")
    if schema["type"] != "object":
        return _violation("choice", f"tools.{k}", loc=loc, expected="'object'")
    return None


# --- 3. the rest of the top level --------------------------------------------------------


def _check_top_level(body: dict) -> Violation | None:
    """system, tool_choice, metadata... and no field the API does not define."""
    found = api_shape.problem(body, api_shape.top_level())
    return _from_problem(found, body) if found is not None else None


# --- 4. empty content and text -----------------------------------------------------------


def _check_empty_content(body: dict) -> Violation | None:
    """Only a final assistant message may be empty, and prefill rejects that one later."""
    messages = body["messages"]
    last = len(messages) - 1
    for i, message in enumerate(messages):
        final_assistant = i == last and message["role"] == "assistant"
        if message["content"] in ("", []) and not final_assistant:
            return _violation("empty_content", f"messages.{i}", i=i)
    return None


def _texts(messages: list) -> Iterator[tuple[int, str, str]]:
    """Yield (message index, path, text) for every text the API checks: non-empty string
    content, text blocks, and text blocks inside a tool_result's content list.
    Thinking blocks are not text blocks. String content "" is an empty MESSAGE, not text."""
    for i, message in enumerate(messages):
        content = message["content"]
        if isinstance(content, str):
            if content:
                yield i, f"messages.{i}.content", content
            continue
        for j, block in enumerate(content):
            if block["type"] == "text":
                yield i, f"messages.{i}.content.{j}", block["text"]
            if block["type"] == "tool_result" and isinstance(block.get("content"), list):
                for n, inner in enumerate(block["content"]):
                    if inner["type"] == "text":
                        yield i, f"messages.{i}.content.{j}.content.{n}", inner["text"]


def _check_empty_text(body: dict) -> Violation | None:
    for i, path, text in _texts(body["messages"]):
        if text == "":
            return _violation("empty_text", path, i=i)
    return None


def _check_whitespace_text(body: dict) -> Violation | None:
    for i, path, text in _texts(body["messages"]):
        if text.strip() == "":
            return _violation("whitespace_text", path, i=i)
    return None


# --- 5. tool_use ids ---------------------------------------------------------------------


def _tool_uses(messages: list) -> Iterator[tuple[int, int, dict]]:
    """(message index, block index, block) of every tool_use, for the rules on ids alone.
    Which result answers which call is conversation.py's job, not this one's."""
    for i, message in enumerate(messages):
        content = message["content"]
        for j, block in enumerate(content if isinstance(content, list) else []):
            if block["type"] == "tool_use":
                yield i, j, block


def _check_id_pattern(body: dict) -> Violation | None:
    for i, j, block in _tool_uses(body["messages"]):
        if not ID_PATTERN.fullmatch(block["id"]):
            return _violation("id_pattern", f"messages.{i}.content.{j}", i=i, j=j, id=repr(block["id"]))
    return None


def _check_unique_ids(body: dict) -> Violation | None:
    """Ids must be unique across the WHOLE history: results are matched to calls by id."""
    seen = set()
    for i, j, block in _tool_uses(body["messages"]):
        if block["id"] in seen:
            return _violation("duplicate_id", f"messages.{i}.content.{j}", i=i, j=j, id=block["id"])
        seen.add(block["id"])
    return None


# --- 6. pairing of tool_use and tool_result ----------------------------------------------


def _check_pairing(body: dict) -> Violation | None:
    """Report the first broken call/result pair, walking the history in message order.

    conversation.py does the pairing; this only picks what to report. Unanswered calls sit in
    assistant messages and orphan results in user messages, so the earlier message wins: for a
    user message the first result that cites no call of the message before it, for an assistant
    message all of its unanswered calls at once (in the order it made them).
    """
    pairing = conversation.read(body["messages"])
    first_orphan = pairing.orphans[0] if pairing.orphans else None
    first_unanswered = pairing.unanswered[0] if pairing.unanswered else None
    if first_orphan is not None and (
        first_unanswered is None or first_orphan.place.message < first_unanswered.place.message
    ):
        place = first_orphan.place
        return _violation("unexpected_result", place.path, i=place.message, j=place.block,
                          id=first_orphan.tool_use_id)
    if first_unanswered is not None:
        i = first_unanswered.place.message
        ids = [use.id for use in pairing.unanswered if use.place.message == i]
        return _violation("missing_result", f"messages.{i}", i=i, ids=", ".join(ids))
    return None


# --- 7. prefill --------------------------------------------------------------------------


def _check_prefill(body: dict) -> Violation | None:
    """Current models answer the user: the history must end with a user message."""
    last = len(body["messages"]) - 1
    if body["messages"][last]["role"] == "assistant":
        return _violation("prefill", f"messages.{last}", i=last)
    return None


RULES: list[Callable[[dict], Violation | None]] = [
    _check_shape,  # must stay first: the rules below rely on the shape it guarantees
    _check_tools,
    _check_top_level,
    _check_empty_content,
    _check_empty_text,
    _check_whitespace_text,
    _check_id_pattern,
    _check_unique_ids,
    _check_pairing,
    _check_prefill,  # after pairing: a dangling tool_use is reported as a missing result
]
