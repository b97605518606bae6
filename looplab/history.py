"""A history as steps, one per model call: what the viewer shows, worked out without any widget.

Two sources make steps. A client made by `looplab.client()` has its traffic log: each request the
SDK sent (wire JSON) with the response or the API error it got. A plain `messages` list, as a
learner builds it, is cut at each assistant message: the messages before it were the request,
the assistant message was the answer; when the list ends with a user message, a last step shows
it as the next request would send it, with the API's verdict.

The thread the course is about is the id: each `tool_use.id` gets a label (A, B, C...) and its
`tool_result.tool_use_id` gets the same one, so the pairing reads without colour too.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from string import ascii_uppercase
from types import SimpleNamespace
from typing import Any

from pydantic import BaseModel

from . import conversation
from .catalogue import words
from .rules import check_request

WORDS = words(__file__)


def to_wire(value: Any) -> Any:
    """SDK objects as the JSON the SDK sends for them (unset fields are not sent); plain objects by their fields,
    as a client that is not the SDK's may return them."""
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", exclude_unset=True, by_alias=True)
    if isinstance(value, SimpleNamespace):
        return to_wire(vars(value))
    if isinstance(value, dict):
        return {key: to_wire(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_wire(item) for item in value]
    return value


@dataclass
class Step:
    """One model call: the messages sent, and what came back."""

    messages: list
    response: dict | None = None
    error: dict | None = None
    hint: str | None = None
    # The rest of the request (client traffic only; a messages list has neither): the learner sees
    # that every call sends them again, which is what the cap of exercise 2.3 saves.
    system: Any = None
    tools: list | None = None
    previous_length: int = 0  # messages[:previous_length] were already in the step before
    resent_response: int | None = None  # the index of the message that is the step before's response, as it came
    # The ids the viewer flags in `messages`, as conversation.py pairs them (see UnmatchedIds).
    dangling: set = field(default_factory=set)
    pending: set = field(default_factory=set)
    orphans: set = field(default_factory=set)
    misplaced: set = field(default_factory=set)
    # The tool_use ids of the response still waiting for their result: only the last step's, as a
    # later request would have answered (or flagged) them. A loop that raises before answering
    # leaves its history here.
    response_pending: set = field(default_factory=set)

    @property
    def outcome(self) -> str:
        """The step in a few words: what the model did, or why the request failed."""
        if self.error is not None:
            kind = self.error.get("error", {}).get("type")
            if kind == "not_recorded":
                return WORDS("not_recorded")
            return WORDS("refused") if kind == "invalid_request_error" else WORDS("error", kind=kind)
        if self.response is None:
            return WORDS("next_request")
        tools = [b.get("name", "?") for b in _blocks(self.response.get("content")) if b.get("type") == "tool_use"]
        stop_reason = self.response.get("stop_reason")
        if tools and self.response_pending:
            return WORDS("asked_unanswered", tools=_names(tools))
        if tools:
            return WORDS("asked", tools=_names(tools))
        if stop_reason in (None, "end_turn"):
            return WORDS("answered")
        return WORDS("stopped", stop_reason=stop_reason)

    @property
    def usage(self) -> dict | None:
        """The response's token counts (client traffic only): they grow as the history is resent."""
        usage = self.response.get("usage") if isinstance(self.response, dict) else None
        return usage if isinstance(usage, dict) else None

    @property
    def error_message(self) -> str | None:
        if self.error is None:
            return None
        return self.error.get("error", {}).get("message")


def _names(tools: list[str]) -> str:
    counts = {name: tools.count(name) for name in dict.fromkeys(tools)}
    parts = [name if count == 1 else f"{name} ×{count}" for name, count in counts.items()]
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + WORDS("and") + parts[-1]


def _blocks(content: Any) -> list[dict]:
    if isinstance(content, list):
        return [block for block in content if isinstance(block, dict)]
    return []


def steps_from_traffic(exchanges: list[dict]) -> list[Step]:
    steps = []
    for exchange in exchanges:
        request = exchange["request"]
        messages = to_wire(request.get("messages", []))
        steps.append(Step(messages, exchange.get("response"), exchange.get("error"), exchange.get("hint"),
                          system=to_wire(request.get("system")), tools=to_wire(request.get("tools"))))
    return _link(steps)


def steps_from_messages(messages: list) -> list[Step]:
    wire = to_wire(list(messages))
    steps = []
    for index, message in enumerate(wire):
        if isinstance(message, dict) and message.get("role") == "assistant":
            answer = {"role": "assistant", "content": message.get("content")}
            steps.append(Step(wire[:index], answer))
    ends_with_user = bool(wire) and isinstance(wire[-1], dict) and wire[-1].get("role") == "user"
    if ends_with_user:
        steps.append(next_request(wire))
    return _link(steps)


def next_request(messages: list) -> Step:
    """The list as the next call would send it, with the API's verdict on it."""
    step = Step(messages)
    violation = check_request({"messages": messages})
    if violation is not None:
        step.error = {"type": "error", "error": {"type": "invalid_request_error", "message": violation.message}}
        step.hint = violation.hint
    return step


def _link(steps: list[Step]) -> list[Step]:
    """Mark what is new since the previous step, and the ids that answer nothing or go unanswered."""
    previous: list = []
    previous_answer: dict | None = None  # the step before's response, as the message that would resend it
    for step in steps:
        shared = 0
        for mine, theirs in zip(step.messages, previous):
            if mine != theirs:
                break
            shared += 1
        step.previous_length = shared
        step.resent_response = next(
            (index for index, message in enumerate(step.messages) if index >= shared and message == previous_answer), None
        )
        unmatched = unmatched_ids(step.messages)
        step.dangling, step.pending = unmatched.dangling, unmatched.pending
        step.orphans, step.misplaced = unmatched.orphans, unmatched.misplaced
        previous = step.messages
        previous_answer = _as_message(step.response)
    if steps and steps[-1].response is not None:
        last = steps[-1]
        last.response_pending = unmatched_ids(last.messages + [_as_message(last.response)]).pending
    return steps


def _as_message(response: dict | None) -> dict | None:
    """A response as the assistant message a loop appends to its history (role and content, as they came)."""
    return None if response is None else {"role": "assistant", "content": response.get("content")}


@dataclass(frozen=True)
class UnmatchedIds:
    """The ids of a history's pairing faults, as conversation.py finds them (its docstring says
    what each kind means). The viewer marks ids, not blocks, so these are sets of ids; only string
    ids are kept: any other id is a shape error, which the rules report before the pairing."""

    dangling: set  # tool_use ids unanswered although a message follows them
    pending: set  # tool_use ids of the final message, not answered yet
    orphans: set  # tool_result ids citing no call of the message right before
    misplaced: set  # tool_result ids that would answer an unanswered call, but are placed wrong

    @property
    def ids(self) -> set:
        """Every flagged id: empty exactly when the API accepts the history's pairing."""
        return self.dangling | self.pending | self.orphans | self.misplaced


def unmatched_ids(messages: list) -> UnmatchedIds:
    """What the viewer flags in a history: exactly what the rules' pairing check rejects."""
    history = conversation.read(messages)
    return UnmatchedIds(
        dangling=_string_ids(use.id for use in history.dangling),
        pending=_string_ids(use.id for use in history.pending),
        orphans=_string_ids(result.tool_use_id for result in history.orphans),
        misplaced=_string_ids(result.tool_use_id for result in history.misplaced),
    )


def _string_ids(ids) -> set:
    return {tool_id for tool_id in ids if isinstance(tool_id, str)}


def pair_labels(steps: list[Step]) -> dict[str, str]:
    """A, B, C... for every tool_use id, in the order the model first asked for them."""
    labels: dict[str, str] = {}
    for step in steps:
        sources = list(step.messages) + ([step.response] if step.response else [])
        for message in sources:
            if not isinstance(message, dict):
                continue
            for block in _blocks(message.get("content")):
                tool_id = block.get("id") if block.get("type") == "tool_use" else None
                if tool_id and tool_id not in labels:
                    labels[tool_id] = _label(len(labels))
    return labels


def _label(number: int) -> str:
    letters = ""
    number += 1
    while number:
        number, remainder = divmod(number - 1, 26)
        letters = ascii_uppercase[remainder] + letters
    return letters
