"""Which tool_result answers which tool_use: the one reading of a history that the course shares.

The API ties a result to a call by id AND by place. A tool_use of assistant message i is answered
only by a tool_result with its id in message i + 1, which must be a user message, and only if that
result comes before any other block of the message: a result after a text block, or one message
too late, answers nothing. Read that way, a history has four kinds of fault:

- dangling calls   a tool_use left unanswered although a message follows it;
- pending calls    a tool_use of the final assistant message: nothing follows it yet (the loop
                   has still to run the tool and reply);
- orphan results   a tool_result whose id is not among the calls of the message right before it
                   (the API's "unexpected `tool_use_id`");
- misplaced results a tool_result that would answer a call that is still unanswered, had it
                   been put where the API looks: it comes after another block of the right
                   message, or in a later message. A misplaced result in a later message is an
                   orphan too; one after text is not, but its call is dangling or pending.

The rules (rules.py: the 400 the API sends), the history viewer (history.py: the ids it flags)
and the reference of exercise 3.2 (loop.unanswered_tool_uses) all read a history with `read`,
so they agree by construction: the viewer flags a history exactly when the rules reject it for
its pairing.

It is pure and never raises: messages and blocks may be dicts (as the learner writes them) or
SDK objects (as `message.content` comes back), and anything malformed simply holds no calls or
results. Only assistant messages hold calls and only user messages hold results, as the API reads
them; a block in the wrong role is a shape error, which rules.py reports before the pairing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple


def field(item: Any, key: str) -> Any:
    """Histories mix dicts and SDK objects: read a field from either (None when it is missing)."""
    return item.get(key) if isinstance(item, dict) else getattr(item, key, None)


def blocks(message: Any) -> list:
    """A message's content blocks; string content (or anything that is not a list) has none."""
    content = field(message, "content")
    return content if isinstance(content, list) else []


class Place(NamedTuple):
    """Where a block sits: messages[message]["content"][block]."""

    message: int
    block: int

    @property
    def path(self) -> str:
        """The location as the API writes it in its 400 messages."""
        return f"messages.{self.message}.content.{self.block}"


@dataclass(frozen=True, slots=True)
class ToolUse:
    """One call the model made, and the result that answers it, if one does."""

    id: Any
    place: Place
    answer: Place | None  # the tool_result that answers it, as the API counts it; None: unanswered


@dataclass(frozen=True, slots=True)
class ToolResult:
    """One result the program sent back, and the call it cites.

    `cites` is the nearest earlier tool_use with the same id, wherever it is: it tells a typo
    (no call has that id) from a result put in the wrong place (the call exists, elsewhere).
    """

    tool_use_id: Any
    place: Place
    cites: Place | None  # the nearest earlier tool_use with this id; None: no call has it
    leading: bool  # only tool_result blocks come before it in its message: where the API looks

    @property
    def replies_to_previous(self) -> bool:
        """Its call is in the message right before it: the only place the API accepts."""
        return self.cites is not None and self.cites.message == self.place.message - 1

    @property
    def answers(self) -> Place | None:
        """The call it answers, as the API counts it: right message, and before any other block."""
        return self.cites if self.replies_to_previous and self.leading else None


@dataclass(frozen=True)
class Conversation:
    """Every call and every result of a history, in history order, with how they pair."""

    tool_uses: tuple[ToolUse, ...]
    tool_results: tuple[ToolResult, ...]
    length: int  # the number of messages: calls in the final one are pending, not dangling

    @property
    def unanswered(self) -> list[ToolUse]:
        """Every call without an answer: what the API reports as missing `tool_result` blocks."""
        return [use for use in self.tool_uses if use.answer is None]

    @property
    def dangling(self) -> list[ToolUse]:
        """Unanswered calls with a message after them: the next message should have answered."""
        return [use for use in self.unanswered if use.place.message < self.length - 1]

    @property
    def pending(self) -> list[ToolUse]:
        """Unanswered calls of the final message: the loop has still to run them and reply."""
        return [use for use in self.unanswered if use.place.message == self.length - 1]

    @property
    def orphans(self) -> list[ToolResult]:
        """Results citing no call of the message right before: the API's unexpected `tool_use_id`."""
        return [result for result in self.tool_results if not result.replies_to_previous]

    @property
    def misplaced(self) -> list[ToolResult]:
        """Results that would answer a call still unanswered, but are not where the API looks:
        after another block of the right message, or in a later message."""
        unanswered = {use.place for use in self.unanswered}
        return [result for result in self.tool_results if result.answers is None and result.cites in unanswered]

    @property
    def is_paired(self) -> bool:
        """Every call answered, every result citing a call of the message before: the API's pairing holds."""
        return not self.unanswered and not self.orphans


def read(messages: Any) -> Conversation:
    """Pair the calls and results of a history (a list of messages, dicts or SDK objects).

    One pass in history order, so that the rules stay linear in the length of the history: the
    agent loop resends the whole history on every turn, and every request is checked.
    """
    messages = list(messages) if isinstance(messages, (list, tuple)) else []
    calls: list[tuple[Place, Any]] = []  # (place, id) of every tool_use, in history order
    results: list[ToolResult] = []
    leading_results: dict[int, list[ToolResult]] = {}  # message index -> the results that open it
    nearest_call: dict = {}  # id -> the place of the latest call with that id, among the messages read
    for index, message in enumerate(messages):
        role = field(message, "role")
        if role == "assistant":
            message_calls = _calls(index, message)
            calls += message_calls
            for place, tool_id in reversed(message_calls):  # reversed: the first block with an id wins
                nearest_call[_key(tool_id)] = place
        elif role == "user":
            message_results = _results(index, message, nearest_call)
            results += message_results
            leading_results[index] = [result for result in message_results if result.leading]
    tool_uses = tuple(
        ToolUse(tool_id, place, _answer(tool_id, leading_results.get(place.message + 1, [])))
        for place, tool_id in calls
    )
    return Conversation(tool_uses, tuple(results), len(messages))


def _calls(index: int, message: Any) -> list[tuple[Place, Any]]:
    """(place, id) of every tool_use block of an assistant message."""
    return [
        (Place(index, position), field(block, "id"))
        for position, block in enumerate(blocks(message))
        if field(block, "type") == "tool_use"
    ]


def _results(index: int, message: Any, nearest_call: dict) -> list[ToolResult]:
    """Every tool_result block of user message `index`, each with the call it cites."""
    results = []
    leading = True
    for position, block in enumerate(blocks(message)):
        if field(block, "type") != "tool_result":
            leading = False  # the API stops looking for results at the first other block
            continue
        tool_use_id = field(block, "tool_use_id")
        cited = nearest_call.get(_key(tool_use_id))
        results.append(ToolResult(tool_use_id, Place(index, position), cited, leading))
    return results


def _answer(tool_id: Any, leading_results: list[ToolResult]) -> Place | None:
    """The first result with the call's id among the results that open the next message."""
    for result in leading_results:
        if result.tool_use_id == tool_id:
            return result.place
    return None


def _key(tool_id: Any) -> Any:
    """An id as a dict key. Ids are strings in any request the API accepts; a malformed history may
    hold a list or a dict instead, which the lookup must survive rather than raise."""
    try:
        hash(tool_id)
    except TypeError:
        return ("unhashable id", repr(tool_id))
    return tool_id
