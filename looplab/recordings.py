"""Recorded conversations: load them, find the answer to a request, and say why one is missing.

Offline, the course answers each request with the response the API gave (or would give) to the
same conversation. "The same" is judged on meaning, not bytes: each request is reduced to a
canonical conversation (model, system, tool names, messages with only the fields that change what
the model sees) and matched on that. The differences it ignores (tests/test_replay_matching.py
holds one test per line):

1. string content or a list holding that one text block (messages, `system`, tool_result content),
   and no `system` or an empty one;
2. SDK block objects or dicts (both reach the wire as the same JSON);
3. key order, in every object;
4. request parameters other than model, system, tools, `tool_choice` and messages (`max_tokens`,
   `metadata`...): they bound an answer, while a recording holds one answer per conversation; and
   `tool_choice` when it is the default, `{"type": "auto"}` (a forced or forbidden tool changes the
   answer, so `any`, `tool` and `none` are matched, each recorded with its own reply);
5. the tools' order (the API looks tools up by name), and a tool's description and schema: a
   learner's reworded description should still find the recorded answer. Where one conversation
   was recorded with several wordings (notebook 5 compares a vague description with a better one),
   the answer recorded with the request's own descriptions is the one given;
6. block fields that are not content: `cache_control`, `citations`, `caller`, a thinking block's
   `signature`...; and `is_error: false`, which is the default;
7. the order of the tool_result blocks that open a user message: the API pairs a result with its
   call by `tool_use_id`, not by place, so parallel calls may be answered in any order. They are
   compared as a set keyed by id: a result that carries another call's content does not match;
8. the words of an error result (`"is_error": true`): the notebooks leave the wording of an error text
   to the learner (notebook 6's run_tool, its repeat guard's "not run" results), so a failed call
   answered in other words finds the reply recorded for it. That it failed still counts: a flagged
   result never matches an unflagged one.

Everything else keeps its order and counts: text blocks among themselves, the calls of a reply, the
messages, and where a result stands. A result after a text block is not reordered into the opening
run: the API rejects that conversation (rules.py), so it must stay a different one.

A recording file is plain, pretty-printed JSON a learner can read:
`{"model": ..., "exchanges": [{"request": {wire request}, "response": {wire Message}}]}`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import language as languages
from .catalogue import words

WORDS = words(__file__)
RECORDINGS_DIR = Path(__file__).parent / "recordings"

# The fields of each block type that change what the model sees. Everything else
# (cache_control, citations, caller, signature...) is left out of the comparison.
MEANINGFUL_FIELDS = {
    "text": ("text",),
    "image": ("source",),
    "document": ("source",),
    "tool_use": ("id", "name", "input"),
    "tool_result": ("tool_use_id", "content", "is_error"),
    "thinking": ("thinking",),
    "redacted_thinking": ("data",),
}


def recording_path(recording: str | Path, language: str | None = None) -> Path:
    """A bare name like "calculator" means a recording shipped with the course, in the language the
    course speaks (`language.current()` unless given): English ones in recordings/, the others in
    recordings/<language>/, since a French notebook asks its questions in French."""
    path = Path(recording)
    if path.suffix == ".json" or len(path.parts) > 1:
        return path
    spoken = language or languages.current()
    folder = RECORDINGS_DIR if spoken == languages.SOURCE else RECORDINGS_DIR / spoken
    return folder / f"{recording}.json"


def canonical_blocks(content: Any) -> Any:
    """A message's content as a list of blocks holding only their meaningful fields."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if not isinstance(content, list):
        return content
    return [canonical_block(block) for block in content]


def canonical_block(block: Any) -> Any:
    if not isinstance(block, dict):
        return block
    fields = MEANINGFUL_FIELDS.get(block.get("type"))
    if fields is None:
        return block
    kept = {"type": block["type"]}
    for field in fields:
        if field in block:
            kept[field] = block[field]
    if block["type"] == "tool_result":
        kept["content"] = canonical_blocks(block.get("content", []))
        if not block.get("is_error"):
            kept.pop("is_error", None)
    return kept


def replay_block(block: Any) -> Any:
    """A canonical block as replay compares it: a tool_result says first whether it failed, and a failed one
    keeps no words (8. above). Only replay reads blocks so: the checks compare an error's words where the
    prose fixes them (recordings.canonical_blocks keeps them)."""
    if not (isinstance(block, dict) and block.get("type") == "tool_result"):
        return block
    failed = block.get("is_error") is True
    kept = {key: block[key] for key in ("type", "tool_use_id") if key in block}
    kept["is_error"] = failed
    if not failed:
        kept["content"] = block.get("content", [])
    return kept


def _replay_content(content: Any) -> Any:
    blocks = canonical_blocks(content)
    return [replay_block(block) for block in blocks] if isinstance(blocks, list) else blocks


def readable_conversation(request: dict) -> dict:
    """A request's conversation with only the fields that change what the model sees, in the order sent.

    The not-recorded message shows differences in this form, so its paths name the learner's own blocks.
    """
    system = request.get("system")
    chosen = {} if _default_choice(request.get("tool_choice")) else {"tool_choice": request.get("tool_choice")}
    return {
        "model": request.get("model"),
        "system": canonical_blocks(system) if system else [],
        "tools": sorted(tool.get("name", "") for tool in request.get("tools", []) if isinstance(tool, dict)),
        **chosen,
        "messages": [
            {"role": message.get("role"), "content": _replay_content(message.get("content"))}
            if isinstance(message, dict)
            else message
            for message in request.get("messages", [])
        ],
    }


def _default_choice(choice: Any) -> bool:
    """No tool_choice, or the one the API assumes without it: auto, parallel calls allowed."""
    return choice is None or (isinstance(choice, dict) and choice.get("type") == "auto"
                              and not choice.get("disable_parallel_tool_use"))


def tool_wording(request: dict) -> str:
    """The descriptions and schemas of a request's tools, by name: what picks among answers recorded for one
    conversation with several wordings of its tools (5. above)."""
    tools = [tool for tool in request.get("tools", []) if isinstance(tool, dict)]
    return json.dumps(sorted(([tool.get("name", ""), tool.get("description"), tool.get("input_schema")]
                              for tool in tools), key=lambda item: str(item[0])), sort_keys=True, ensure_ascii=False)


def canonical_conversation(request: dict) -> dict:
    """What a request asks, with every difference that can't change the answer removed."""
    conversation = readable_conversation(request)
    conversation["messages"] = [_results_by_id(message) for message in conversation["messages"]]
    return conversation


def opening_results(message: Any) -> int:
    """How many tool_result blocks open a user message: the ones the API pairs with calls by id."""
    if not (isinstance(message, dict) and message.get("role") == "user" and isinstance(message.get("content"), list)):
        return 0
    count = 0
    for block in message["content"]:
        if not (isinstance(block, dict) and block.get("type") == "tool_result"):
            break
        count += 1
    return count


def _results_by_id(message: Any) -> Any:
    """The message with its opening tool_results in order of id (then content, should an id repeat)."""
    count = opening_results(message)
    if count < 2:
        return message
    content = message["content"]
    results = sorted(content[:count], key=lambda block: (str(block.get("tool_use_id")), json.dumps(block, sort_keys=True)))
    return {**message, "content": results + content[count:]}


def _results_in_order_of(recorded: Any, yours: Any) -> Any:
    """The recorded message with its opening results in the order of yours' ids, so a difference is
    reported at the place the learner's result holds (results whose id yours lacks go last)."""
    count, your_count = opening_results(recorded), opening_results(yours)
    if count < 2 or your_count == 0:
        return recorded
    your_ids = [block.get("tool_use_id") for block in yours["content"][:your_count]]
    results = recorded["content"][:count]
    place = {tool_use_id: index for index, tool_use_id in reversed(list(enumerate(your_ids)))}
    ordered = sorted(results, key=lambda block: place.get(block.get("tool_use_id"), len(your_ids)))
    return {**recorded, "content": ordered + recorded["content"][count:]}


def typed_line(message: Any) -> str | None:
    """The text of a user message made only of text (a line a person typed), else None."""
    if not (isinstance(message, dict) and message.get("role") == "user" and isinstance(message.get("content"), list)):
        return None
    blocks = message["content"]
    if not blocks or not all(isinstance(block, dict) and block.get("type") == "text" for block in blocks):
        return None
    return "".join(block.get("text", "") for block in blocks)


def conversation_key(request: dict) -> str:
    return json.dumps(canonical_conversation(request), sort_keys=True, ensure_ascii=False)


def exchange_key(request: dict) -> tuple[str, str]:
    """What makes an exchange one of its own: its conversation, and the wording of its tools."""
    return conversation_key(request), tool_wording(request)


@dataclass
class Difference:
    """Where two canonical conversations first part ways, for the not-recorded message."""

    path: str
    recorded: Any
    yours: Any

    def describe(self) -> str:
        return WORDS("difference", path=self.path, recorded=_short(self.recorded), yours=_short(self.yours))


MISSING = object()


def _short(value: Any, limit: int = 100) -> str:
    if value is MISSING:
        return WORDS("nothing")
    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def first_difference(recorded: Any, yours: Any, path: str = "") -> Difference | None:
    """Walk both values in step and report the first place they differ."""
    if isinstance(recorded, dict) and isinstance(yours, dict):
        for key in list(recorded) + [k for k in yours if k not in recorded]:
            found = first_difference(recorded.get(key, MISSING), yours.get(key, MISSING), _join(path, key))
            if found:
                return found
        return None
    if isinstance(recorded, list) and isinstance(yours, list):
        for index in range(max(len(recorded), len(yours))):
            found = first_difference(
                recorded[index] if index < len(recorded) else MISSING,
                yours[index] if index < len(yours) else MISSING,
                _join(path, str(index)),
            )
            if found:
                return found
        return None
    if recorded == yours:
        return None
    return Difference(path or WORDS("whole_request"), recorded, yours)


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _shared_prefix(recorded: dict, yours: dict) -> tuple:
    """How far two conversations agree, for picking the nearest recorded one."""
    same_setup = sum(recorded.get(key) == yours.get(key) for key in ("model", "system", "tools", "tool_choice"))
    shared_messages = 0
    for mine, theirs in zip(yours["messages"], recorded["messages"]):
        if mine != theirs:
            break
        shared_messages += 1
    return (shared_messages, same_setup, -abs(len(recorded["messages"]) - len(yours["messages"])))


class Recording:
    """The exchanges of one recording file, indexed by canonical conversation."""

    def __init__(self, path: Path, exchanges: list[dict], model: str | None = None):
        self.path = path
        self.model = model
        self.exchanges = exchanges
        self._index: dict[str, dict[str, dict]] = {}  # conversation -> the tools' wording -> the answer
        for exchange in exchanges:
            self._index.setdefault(conversation_key(exchange["request"]), {})[
                tool_wording(exchange["request"])] = exchange["response"]

    @classmethod
    def load(cls, recording: str | Path) -> "Recording":
        path = recording_path(recording)
        if not path.exists():
            return cls(path, [])
        data = json.loads(path.read_text(encoding="utf-8"))
        return cls(path, data["exchanges"], data.get("model"))

    @property
    def name(self) -> str:
        return self.path.stem

    def find(self, request: dict) -> dict | None:
        """The answer recorded for this conversation: the one recorded with the same tool descriptions if
        there is one, else the last one recorded (a reworded description still finds an answer)."""
        answers = self._index.get(conversation_key(request))
        if not answers:
            return None
        return answers.get(tool_wording(request), list(answers.values())[-1])

    def nearest_difference(self, request: dict) -> Difference | None:
        """The first difference from the recorded conversation that looks most like this one.

        The nearest is chosen on canonical conversations; the difference is then read in the order
        the learner sent, the recorded results lined up with theirs by id.
        """
        if not self.exchanges:
            return None
        yours = canonical_conversation(request)
        nearest = max(self.exchanges, key=lambda e: _shared_prefix(canonical_conversation(e["request"]), yours))
        recorded, sent = readable_conversation(nearest["request"]), readable_conversation(request)
        recorded["messages"] = [
            _results_in_order_of(message, sent["messages"][index]) if index < len(sent["messages"]) else message
            for index, message in enumerate(recorded["messages"])
        ]
        return first_difference(recorded, sent)

    def recorded_lines(self, request: dict) -> list[list[str]]:
        """What a person can type and get an answer to offline: the user lines of each recorded
        conversation with this request's setup (model, system, tools), one list per conversation.

        A conversation that opens a longer one is part of it, so only the longest is kept.
        """
        yours = canonical_conversation(request)
        conversations: list[list[str]] = []
        for exchange in self.exchanges:
            recorded = canonical_conversation(exchange["request"])
            if any(recorded.get(key) != yours.get(key) for key in ("model", "system", "tools", "tool_choice")):
                continue
            lines = [line for line in map(typed_line, recorded["messages"]) if line is not None]
            if lines and lines not in conversations:
                conversations.append(lines)
        return [lines for lines in conversations
                if not any(len(other) > len(lines) and other[: len(lines)] == lines for other in conversations)]

    def add(self, request: dict, response: dict) -> None:
        """Keep one answer per conversation and wording of its tools: re-recording it replaces its answer."""
        key = exchange_key(request)
        self.exchanges = [e for e in self.exchanges if exchange_key(e["request"]) != key]
        self.exchanges.append({"request": request, "response": response})
        answers = self._index.setdefault(conversation_key(request), {})
        answers.pop(tool_wording(request), None)  # re-recorded: now the last one recorded
        answers[tool_wording(request)] = response
        self.model = request.get("model", self.model)

    def save(self) -> None:
        """Write the file, keeping what another writer (a script run by the notebook) saved meanwhile."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        mine = {exchange_key(e["request"]) for e in self.exchanges}
        theirs = [e for e in Recording.load(self.path).exchanges if exchange_key(e["request"]) not in mine]
        self.exchanges = theirs + self.exchanges
        data = {"model": self.model, "exchanges": self.exchanges}
        self.path.write_text(json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8")
