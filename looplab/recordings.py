"""Recorded conversations: load them, find the answer to a request, and say why one is missing.

Offline, the course answers each request with the response the API gave (or would give) to the
same conversation. "The same" is judged on meaning, not bytes: the SDK may send `"content": "hi"`
or `[{"type": "text", "text": "hi"}]`, block objects or dicts, keys in any order, with or without
`max_tokens` changes. So each request is reduced to a canonical conversation first (model, system,
tool names, messages with only the fields that change what the model sees) and matched on that.

A recording file is plain, pretty-printed JSON a learner can read:
`{"model": ..., "exchanges": [{"request": {wire request}, "response": {wire Message}}]}`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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


def recording_path(recording: str | Path) -> Path:
    """A bare name like "calculator" means a recording shipped with the course."""
    path = Path(recording)
    if path.suffix == ".json" or len(path.parts) > 1:
        return path
    return RECORDINGS_DIR / f"{recording}.json"


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


def canonical_conversation(request: dict) -> dict:
    """What a request asks, with every difference that can't change the answer removed."""
    system = request.get("system")
    return {
        "model": request.get("model"),
        "system": canonical_blocks(system) if system else [],
        "tools": sorted(tool.get("name", "") for tool in request.get("tools", []) if isinstance(tool, dict)),
        "messages": [
            {"role": message.get("role"), "content": canonical_blocks(message.get("content"))}
            if isinstance(message, dict)
            else message
            for message in request.get("messages", [])
        ],
    }


def conversation_key(request: dict) -> str:
    return json.dumps(canonical_conversation(request), sort_keys=True, ensure_ascii=False)


@dataclass
class Difference:
    """Where two canonical conversations first part ways, for the not-recorded message."""

    path: str
    recorded: Any
    yours: Any

    def describe(self) -> str:
        return (
            f"  at {self.path}\n"
            f"    recorded: {_short(self.recorded)}\n"
            f"    yours:    {_short(self.yours)}"
        )


MISSING = object()


def _short(value: Any, limit: int = 100) -> str:
    if value is MISSING:
        return "(nothing)"
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
    return Difference(path or "(the whole request)", recorded, yours)


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _shared_prefix(recorded: dict, yours: dict) -> tuple:
    """How far two conversations agree, for picking the nearest recorded one."""
    same_setup = sum(recorded[key] == yours[key] for key in ("model", "system", "tools"))
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
        self._index = {conversation_key(e["request"]): e["response"] for e in exchanges}

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
        return self._index.get(conversation_key(request))

    def nearest_difference(self, request: dict) -> Difference | None:
        """The first difference from the recorded conversation that looks most like this one."""
        if not self.exchanges:
            return None
        yours = canonical_conversation(request)
        candidates = [canonical_conversation(e["request"]) for e in self.exchanges]
        nearest = max(candidates, key=lambda recorded: _shared_prefix(recorded, yours))
        return first_difference(nearest, yours)

    def add(self, request: dict, response: dict) -> None:
        """Keep one answer per conversation: re-recording a conversation replaces its answer."""
        key = conversation_key(request)
        self.exchanges = [e for e in self.exchanges if conversation_key(e["request"]) != key]
        self.exchanges.append({"request": request, "response": response})
        self._index[key] = response
        self.model = request.get("model", self.model)

    def save(self) -> None:
        """Write the file, keeping what another writer (a script run by the notebook) saved meanwhile."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        mine = {conversation_key(e["request"]) for e in self.exchanges}
        theirs = [e for e in Recording.load(self.path).exchanges if conversation_key(e["request"]) not in mine]
        self.exchanges = theirs + self.exchanges
        data = {"model": self.model, "exchanges": self.exchanges}
        self.path.write_text(json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8")
